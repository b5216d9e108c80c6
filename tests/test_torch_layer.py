"""The browser's torch layer (browser_runtime.torch_layer) against the installed CPU torch.

Every check runs the same code under real torch and under the layer and compares what comes out:
stdout of the lesson scripts, values/shapes/dtypes of the lesson exercises, printing, dtype
promotion, reductions, indexing, seeded random numbers, and the errors for what is missing.

The contract (``torch_layer/kernels.py``), the same on every CPU: dtypes, shapes, promotion,
errors and printing are torch's; IEEE operations (+ − × ÷, comparisons, clamp, sqrt, indexing,
casts) give torch's bits; transcendental functions are within a few ulps (``*_ULPS`` below);
float sums within Higham's bound for any summation order; ``randn`` of fewer than 16 values is
bit-identical, of 16 or more within ``RANDN_BOUND``. Tests that allow a tolerance say so in
their names. Nothing here depends on the CPU torch or NumPy picked.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from browser_runtime import (
    install_torch,
    torch_layer,
    torch_layer_installed,
    uninstall_torch,
)
from browser_runtime.exercises import LAYOUTS, mask, padding

from .conftest import EXERCISES, LESSONS

real_torch = pytest.importorskip("torch")

layer = torch_layer
ROOT = Path(__file__).resolve().parents[1]
# a transcendental function (exp, log, …, **): torch and the layer are each within an ulp
TRANSCENDENTAL_ULPS = 2
# a composite of them (sigmoid, softplus, softmax, log_softmax, logsigmoid)
COMPOSITE_ULPS = 4
# randn of 16 or more values: |layer − torch| ≤ RANDN_BOUND · max(1, |x|) (float32)
RANDN_BOUND = 16 * float(np.finfo(np.float32).eps)
TORCH_NAMES = ("torch", "torch.autograd", "torch.nn", "torch.nn.functional")


# ---- helpers ------------------------------------------------------------------------------------


@contextlib.contextmanager
def as_torch(module: Any):
    """Register ``module`` (real torch or the layer) as ``torch`` for the duration."""
    if module is real_torch:
        saved = {name: sys.modules.get(name) for name in TORCH_NAMES}
        sys.modules.update({"torch": real_torch, "torch.autograd": real_torch.autograd,
                            "torch.nn": real_torch.nn,
                            "torch.nn.functional": real_torch.nn.functional})
        try:
            yield module
        finally:
            for name, mod in saved.items():
                sys.modules[name] = mod
    else:
        with torch_layer_installed() as mod:
            yield mod


def exercise_function(exercise_id: str, module: Any) -> Any:
    """The solution of an exercise (its lesson's ``exercise`` section), compiled against
    ``module``."""
    lesson = LESSONS[exercise_id]
    namespace: dict[str, Any] = {"__name__": f"exercise_{lesson.name}"}
    with as_torch(module):
        exec(compile(lesson.exercise(blanked=False), str(lesson.path), "exec"), namespace)
    return namespace[lesson.name]


def as_array(t: Any) -> np.ndarray:
    return t.detach().numpy() if isinstance(t, real_torch.Tensor) else np.asarray(
        t.detach().numpy())


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, shapes and dtypes; NaNs equal whatever their payload; -0.0 != 0.0."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    nan = np.isnan(a)
    x, y = a[~nan], b[~nan]
    return bool(np.array_equal(nan, np.isnan(b))) and bool(
        np.array_equal(x, y) and np.array_equal(np.signbit(x), np.signbit(y))
    )


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many floats of the arrays' dtype lie between a and b (0 for equal values, both NaN or
    the same infinity; a NaN against a number is infinitely far)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    if a.dtype.kind != "f":
        return np.where(a == b, 0.0, np.inf)
    ints = {4: np.int32, 8: np.int64}[a.dtype.itemsize]

    def ordered(x: np.ndarray) -> np.ndarray:
        i = x.view(ints).astype(np.float64)  # monotonic in x once negatives are mirrored
        return np.where(i < 0, float(np.iinfo(ints).min) - i, i)

    nan_a, nan_b = np.isnan(a), np.isnan(b)
    with np.errstate(invalid="ignore"):
        steps = np.abs(ordered(a) - ordered(b))
    return np.where(nan_a & nan_b, 0.0, np.where(nan_a | nan_b, np.inf, steps))


def assert_same(got: Any, want: Any) -> None:
    """Same shape, dtype and bits."""
    g, w = as_array(got), as_array(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    assert same_bits(g, w), (g, w)


def assert_within_ulps(got: Any, want: Any, ulps: int) -> None:
    """Same shape and dtype; every value within ``ulps`` floats of torch's."""
    g, w = as_array(got), as_array(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    far = ulp_distance(g, w)
    assert not far.size or far.max() <= ulps, (g, w, far.max())


def sum_error_bound(data: np.ndarray, axes: tuple[int, ...] | None, mean: bool = False):
    """|layer − torch| for a sum over ``axes``: Higham's bound γ_{n−1}·Σ|xᵢ| for torch's order
    (any order), plus one ulp for the layer's single rounding; a mean adds an ulp and divides."""
    n = data.size if axes is None else math.prod(data.shape[a] for a in axes)
    u = float(np.finfo(data.dtype).eps) / 2
    gamma = (n - 1) * u / (1 - (n - 1) * u)
    magnitude = np.sum(np.abs(data.astype(np.float64)), axis=axes)
    total = np.sum(data.astype(np.float64), axis=axes)
    if mean:
        magnitude, total = magnitude / n, total / n
    ulp = np.spacing(np.abs(total).astype(data.dtype)).astype(np.float64)
    return gamma * magnitude + (3 if mean else 1) * ulp


class TensorSummary:
    """A tensor's dtype, shape, printed form and values: equal when all are identical (NaNs
    equal whatever their payload, -0.0 apart from 0.0); ``close`` allows a few ulps."""

    def __init__(self, value: Any) -> None:
        self.dtype, self.shape = str(value.dtype), tuple(value.shape)
        self.text, self.values = repr(value), as_array(value).copy()

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TensorSummary) and (self.dtype, self.shape, self.text)
                == (other.dtype, other.shape, other.text) and same_bits(self.values, other.values))

    def close(self, other: object, ulps: int) -> bool:
        if not isinstance(other, TensorSummary) or (self.dtype, self.shape) != (
            other.dtype, other.shape
        ):
            return False
        far = ulp_distance(self.values, other.values)
        return not far.size or bool(far.max() <= ulps)

    def __repr__(self) -> str:
        return self.text


def summary(value: Any) -> Any:
    """A comparable summary of a result: tensors as ``TensorSummary``, the rest as values."""
    if isinstance(value, (real_torch.Tensor, layer.Tensor)):
        return TensorSummary(value)
    if isinstance(value, tuple):
        return (type(value).__name__, tuple(summary(v) for v in value))
    if isinstance(value, list):
        return [summary(v) for v in value]
    if isinstance(value, (real_torch.dtype, layer.dtype)):
        return repr(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def agree(got: Any, want: Any, ulps: int = 0) -> bool:
    """Summaries that are identical, or (``ulps`` > 0) that differ only in float values, each
    within ``ulps`` floats (printed forms are then not compared)."""
    if not ulps:
        return got == want
    if isinstance(want, TensorSummary):
        return want.close(got, ulps)
    if isinstance(want, (tuple, list)):
        return (type(got) is type(want) and len(got) == len(want)
                and all(agree(g, w, ulps) for g, w in zip(got, want, strict=True)))
    if isinstance(want, float) and isinstance(got, float):
        return bool(ulp_distance(np.float64(got), np.float64(want)) <= ulps)
    return got == want


def outcome(fn: Any, module: Any) -> Any:
    """``summary(fn(module))``, or the kind of error it raised (errors are compared too)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return summary(fn(module))
    except Exception as exc:
        return ("error", type(exc).__name__)


def same_outcome(fn: Any) -> tuple[Any, Any]:
    """(under the layer, under torch) for a function of the torch module."""
    return outcome(fn, layer), outcome(fn, real_torch)


def evaluate(expr: str, module: Any) -> Any:
    return outcome(
        lambda t: eval(expr, {"torch": t, "F": t.nn.functional, "np": np, "math": math}), module
    )


# ---- the lessons --------------------------------------------------------------------------------


# exercises whose solution uses only IEEE operations, no sums: the layer gives torch's bits
BIT_EXACT = {"ppo/compute_gae", "ppo/shape_token_rewards", "s21/compute_gae"}
SHAPES = [(1, 1), (1, 6), (4, 1), (2, 5), (3, 8), (5, 17), (8, 33)]
# a lesson output built from transcendental functions or sums, in float32:
# |layer − torch| ≤ LESSON_BOUND · ε₃₂ · max(1, largest input, largest output)
LESSON_BOUND = 16


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_lesson_exercise_matches_torch_exactly_or_within_the_stated_bound(exercise_id: str):
    exercise = EXERCISES[exercise_id]
    fn_torch = exercise_function(exercise_id, real_torch)
    fn_layer = exercise_function(exercise_id, layer)
    seed = zlib.crc32(exercise_id.encode())  # the same in every process
    eps = float(np.finfo(np.float32).eps)
    for trial in range(5 * len(SHAPES)):
        # the exercise's own random inputs (every mask layout), at sizes up to 8 × 33
        inputs = exercise.inputs(seed, trial, size=SHAPES[trial % len(SHAPES)])
        args = list(inputs.values())
        want = fn_torch(*[real_torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
        got = fn_layer(*[layer.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want)
        # the largest input that takes part: padding may hold NaN, inf or 1e30 (inputs that
        # teach), which the lesson masks out and which must not widen the bound
        pad, _ = padding(inputs)
        arrays = [np.where(pad, 0, a) if a.shape == pad.shape else a
                  for a in args if isinstance(a, np.ndarray) and a.size and a.dtype.kind == "f"]
        scale = max(1.0, *(float(np.nanmax(np.abs(np.where(np.isfinite(a), a, 0))))
                           for a in arrays))
        for w, g in zip(want, got, strict=True):
            assert isinstance(g, layer.Tensor)
            if exercise_id in BIT_EXACT:
                assert_same(g, w)
            else:
                assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype)
                # an output exp made larger than every input (GSPO's e^12) is within ulps of its
                # own size
                size = np.abs(np.where(np.isfinite(as_array(w)), as_array(w), 0)).max(initial=0)
                np.testing.assert_allclose(as_array(g), as_array(w), rtol=0,
                                           atol=LESSON_BOUND * eps * max(scale, float(size)))


# ---- what learners write instead ------------------------------------------------------------

VARIANTS = """
import torch
import torch.nn.functional as F


def gae_stack(rewards, values, mask, gamma=1.0, lam=0.95):
    B, T = rewards.shape
    last, next_value, out = torch.zeros(B), torch.zeros(B), []
    for t in reversed(range(T)):
        m = mask[:, t].bool()
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        last = torch.where(m, delta + gamma * lam * last, last)
        next_value = torch.where(m, values[:, t], next_value)
        out.append(last)
    adv = torch.stack(out[::-1], dim=1) * mask
    return adv, (adv + values) * mask


def ratio_masked_fill(new, old, mask):
    return torch.exp(new - old).masked_fill(mask == 0, 1.0), (new - old).exp() * mask


def kl_variants(p, q):
    log_r = p - q
    return -log_r, 0.5 * log_r.pow(2), log_r.exp() - 1 - log_r, log_r.square() / 2


def surrogate_variants(new, old, adv, mask, eps=0.2):
    ratio = torch.exp(new - old)
    loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - eps, 1 + eps))
    masked = (loss * mask).sum(dim=-1).sum() / torch.clamp(mask.sum(), min=1.0)
    return masked, loss.mean(dim=1, keepdim=True), loss[mask.bool()].mean()


def rewards_loop(rm_score, logprobs, ref_logprobs, mask, kl_coef=0.05):
    rewards = -kl_coef * (logprobs - ref_logprobs)
    last = mask.size(1) - 1 - mask.flip(dims=[1]).argmax(dim=1)
    for b in range(rm_score.shape[0]):
        rewards[b, last[b]] += rm_score[b]
    return rewards * mask, mask.sum(dim=1).long(), last


def value_mse(new_v, old_v, ret, mask, eps=0.2):
    clipped = old_v + (new_v - old_v).clamp(-eps, eps)
    a = F.mse_loss(new_v, ret, reduction="none")
    b = F.mse_loss(clipped, ret, reduction="none")
    per_tok = 0.5 * torch.maximum(a, b)
    return (per_tok * mask).sum() / mask.sum().clamp(min=1), per_tok.mean(), F.mse_loss(a, b)


def dpo_variants(w, l, rw, rl, beta=0.1):
    z = beta * ((w - rw) - (l - rl))
    return F.softplus(-z), -torch.log(torch.sigmoid(z)), (z > 0).float().mean(), z.sigmoid()


def gae_episode_list(rewards, values, next_value=0.0, gamma=0.99, lam=0.95):
    T = len(rewards)
    adv, gae = [0.0] * T, 0.0
    for t in reversed(range(T)):
        nv = values[t + 1] if t + 1 < T else next_value
        gae = rewards[t] + gamma * nv - values[t] + gamma * lam * gae
        adv[t] = gae
    adv = torch.stack([a if torch.is_tensor(a) else torch.tensor(a) for a in adv])
    return adv, adv + values, torch.cumsum(adv.flip(0), dim=0).flip(0)


def objective_variants(ratio, adv, eps=0.2):
    s1 = ratio * adv
    s2 = torch.clip(ratio, min=1 - eps, max=1 + eps) * adv
    return torch.minimum(s1, s2).mean(), torch.min(s1, s2).sum(-1), torch.where(adv >= 0,
        torch.min(ratio, torch.full_like(ratio, 1 + eps)), ratio.clamp(min=1 - eps)) * adv
"""

def _mask(rng: np.random.Generator, b: int, t: int, keep_row: bool = False) -> np.ndarray:
    """A mask of a random layout (the exercises' generator); ``keep_row``: no empty row."""
    m = mask(rng, b, t, LAYOUTS[int(rng.integers(0, len(LAYOUTS)))]).astype(np.float32)
    if keep_row:
        m[~m.any(axis=1), -1] = 1
    return m


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0, shift: float = 0.0):
    return (rng.standard_normal(shape) * scale + shift).astype(np.float32)


VARIANT_INPUTS = {
    "gae_stack": lambda r, b, t: [_normal(r, b, t), _normal(r, b, t), _mask(r, b, t)],
    "ratio_masked_fill": lambda r, b, t: [_normal(r, b, t), _normal(r, b, t), _mask(r, b, t)],
    "kl_variants": lambda r, b, t: [_normal(r, b, t, scale=0.5), _normal(r, b, t, scale=0.5)],
    "surrogate_variants": lambda r, b, t: [
        _normal(r, b, t, scale=0.3), _normal(r, b, t, scale=0.3), _normal(r, b, t),
        _mask(r, b, t, keep_row=True)],
    "rewards_loop": lambda r, b, t: [
        _normal(r, b), _normal(r, b, t, scale=0.1), _normal(r, b, t, scale=0.1),
        _mask(r, b, t, keep_row=True)],
    "value_mse": lambda r, b, t: [_normal(r, b, t) for _ in range(3)] + [_mask(r, b, t)],
    "dpo_variants": lambda r, b, t: [_normal(r, b, scale=20, shift=-50) for _ in range(4)],
    "gae_episode_list": lambda r, b, t: [_normal(r, t), _normal(r, t)],
    "objective_variants": lambda r, b, t: [np.exp(_normal(r, b, t, scale=0.3)), _normal(r, b, t)],
}


def _compile_variants(module: Any) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "variants"}
    with as_torch(module):
        exec(compile(VARIANTS, "variants", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("name", sorted(VARIANT_INPUTS))
def test_common_alternative_spellings_of_the_exercises_match_torch(name: str):
    fn_torch, fn_layer = _compile_variants(real_torch)[name], _compile_variants(layer)[name]
    rng = np.random.default_rng(len(name))
    for trial in range(2 * len(SHAPES)):
        b, t = SHAPES[trial % len(SHAPES)]
        args = VARIANT_INPUTS[name](rng, b, t)
        want = fn_torch(*[real_torch.tensor(a) for a in args])
        got = fn_layer(*[layer.tensor(a) for a in args])
        for w, g in zip(want, got, strict=True):
            assert tuple(g.shape) == tuple(w.shape) and str(g.dtype) == str(w.dtype), name
            np.testing.assert_allclose(as_array(g), as_array(w), rtol=1e-5, atol=1e-6)


# ---- expressions evaluated under both -----------------------------------------------------------

EXPRESSIONS = """
torch.tensor([1.0, 2.5])
torch.tensor([1, 2])
torch.tensor([True, False])
torch.tensor(0.5)
torch.tensor([[1, 2], [3, 4.5]])
torch.tensor([True, 2])
torch.tensor([1.7, -2.7], dtype=torch.long)
torch.tensor([0, 2], dtype=torch.bool)
torch.tensor([1, 2], dtype=torch.float64)
torch.tensor([1, 2], dtype=torch.int32)
torch.tensor(np.array([1.5, 2.5]))
torch.tensor(np.array([1.5, 2.5], dtype=np.float32))
torch.tensor([[1, 2], [3]])
torch.tensor([])
torch.zeros(2, 3)
torch.zeros((2, 3), dtype=torch.long)
torch.zeros([4])
torch.zeros(())
torch.ones(2, dtype=torch.bool)
torch.full((2, 2), 0.5)
torch.full((2,), 7)
torch.full((2,), True)
torch.full_like(torch.tensor([1, 2]), 3.7)
torch.zeros_like(torch.tensor([1.0, 2.0]))
torch.ones_like(torch.tensor([1.0, 2.0]), dtype=torch.long)
torch.arange(5)
torch.arange(1, 4)
torch.arange(0, 1, 0.25)
torch.arange(5.0)
torch.arange(0, 10, 3)
torch.arange(6).reshape(2, 3)
torch.arange(6).view(3, -1)
torch.arange(6).reshape(4, 2)
torch.arange(6).reshape(2, 3).T.view(6)
torch.arange(6).reshape(2, 3).T
torch.arange(6).reshape(2, 3).t()
torch.arange(6).reshape(2, 3).transpose(0, 1)
torch.arange(6).reshape(2, 3).permute(1, 0)
torch.arange(6).reshape(2, 3).unsqueeze(0).shape
torch.arange(6).reshape(2, 3).unsqueeze(-1).shape
torch.zeros(1, 3, 1).squeeze().shape
torch.zeros(1, 3, 1).squeeze(0).shape
torch.zeros(1, 3, 1).squeeze(1).shape
torch.arange(6.0).reshape(2, 3).flip(1)
torch.arange(6.0).reshape(2, 3).flip(0, 1)
torch.arange(6.0).reshape(2, 3).flip(dims=(0, 1))
torch.flip(torch.arange(6.0).reshape(2, 3), [0])
torch.arange(6.0).reshape(2, 3).flatten()
torch.tensor([1, 2]).expand(3, 2)
torch.zeros(2, 2).expand(2, 3)
torch.zeros(2, 2).expand(2)
torch.tensor([1.0, 2.0]) * 0.1
torch.tensor([1, 2]) + 1.5
torch.tensor([1, 2]) / torch.tensor([2, 4])
torch.tensor([1, 2]) * torch.tensor(2.5, dtype=torch.float64)
torch.tensor([1.0]) + torch.tensor([1.0], dtype=torch.float64)
torch.tensor([1.0]) + torch.tensor(1.0, dtype=torch.float64)
torch.tensor([True]) + 1
torch.tensor([True]) + True
torch.tensor([True]) * 1.5
torch.tensor(2) + 1.5
torch.tensor(2) * torch.tensor(3)
torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(7)
torch.tensor([1, 2], dtype=torch.int32) + 7
torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([7])
1 - torch.tensor([0.25, 1.0])
2 / torch.tensor([4, 8])
2 ** torch.tensor([1.0, 0.5])
np.float64(2.0) * torch.tensor([1.0, 2.0])
torch.tensor([1.0, 4.0]) ** 0.5
torch.tensor([1.5, 4.0]) ** 3
torch.tensor([1, 4]) ** 2
torch.tensor([1, 4]) ** 2.0
torch.tensor([1, 4]) ** -1
torch.tensor([1.5, -2.0]) ** -1
torch.tensor([1.5, -2.0]) ** -2
torch.tensor([5, -5]) // 2
torch.tensor([5.5, -5.5]) // 2
torch.tensor([5, -5]) % 3
torch.tensor([5.5, -5.5]) % 3
torch.tensor([1.0]) / 0
torch.tensor([0.0]) / 0
torch.tensor([1]) / 0
-torch.tensor([1, -2])
-torch.tensor([True])
abs(torch.tensor([-1.5, 2.0]))
torch.abs(torch.tensor([-3, 2]))
torch.tensor([3, 2]) > 2.5
torch.tensor([3, 2]) == torch.tensor([3.0, 1.0])
torch.tensor([1.0, 2.0]) != 2
torch.tensor([1.0, 2.0]) <= torch.tensor(1.5, dtype=torch.float64)
torch.tensor([True, False]) & torch.tensor([True, True])
torch.tensor([True, False]) | torch.tensor([False, False])
torch.tensor([True, False]) ^ torch.tensor([True, True])
~torch.tensor([True, False])
torch.tensor([1.0]) & torch.tensor([True])
torch.tensor([True, False]) - torch.tensor([True, True])
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).sum(dim=0)
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).sum(dim=1, keepdim=True)
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).sum(dim=(0, 1))
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).sum((0, 1), keepdim=True)
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).sum(-1)
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).sum(2)
torch.tensor([[1, 2, 3], [4, 5, 6]]).sum()
torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32).sum(0)
torch.tensor([True, True, False]).sum()
torch.tensor([1.0, 2.0]).sum(dtype=torch.float64)
torch.tensor(5.0).sum()
torch.tensor(5.0).sum(0)
torch.sum(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 1)
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).mean()
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).mean(dim=-1)
torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).mean(0, True)
torch.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 6.0]]).std()
torch.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 6.0]]).std(dim=1)
torch.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 6.0]]).std(0, keepdim=True)
torch.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 6.0]]).var(1, unbiased=False)
torch.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 6.0]]).var(dim=-1, correction=0)
torch.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 6.0]]).std(False)
torch.std(torch.tensor([1.0, 2.0, 4.0]), dim=0)
torch.var(torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64))
torch.tensor([3.0]).std()
torch.tensor([1.0, -2.0, 3e30, 0.5, 1.0]).std()
torch.tensor([1.0, -2.0, 3e30, 0.5, 1.0]).var()
torch.tensor([1, 2]).std()
torch.tensor([1, 2]).mean()
torch.tensor([1, 2]).mean(dtype=torch.float32)
torch.tensor([1, 2]).float().mean()
torch.mean(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).max()
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).min()
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).max(dim=1)
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).max(dim=1).values
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).max(dim=1).indices
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).max(1, keepdim=True)
torch.tensor([[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]).min(dim=0, keepdim=True)
torch.tensor([[1.0, 7.0, 7.0], [6.0, 5.0, 6.0]]).max(dim=1)
torch.tensor([[1.0, 7.0, 7.0], [6.0, 5.0, 6.0]]).min(dim=0)
torch.max(torch.tensor([[1.0, 5.0], [7.0, 0.0]]), 1)
torch.max(torch.tensor([1.0, 5.0]), torch.tensor([3.0, 2.0]))
torch.min(torch.tensor([1.0, 5.0]), torch.tensor([3, 2]))
torch.tensor([1.0, 5.0]).max(torch.tensor([3.0, 2.0]))
torch.tensor([1.0, float('nan'), 3.0]).max()
torch.tensor([1.0, float('nan'), 3.0]).argmax()
torch.tensor([[1.0, float('nan')], [3.0, 2.0]]).max(dim=1)
torch.tensor([[1.0, 7.0, 7.0], [4.0, 5.0, 6.0]]).argmax()
torch.tensor([[1.0, 7.0, 7.0], [4.0, 5.0, 6.0]]).argmax(dim=1)
torch.tensor([[1.0, 7.0, 7.0], [4.0, 5.0, 6.0]]).argmax(dim=-1, keepdim=True)
torch.tensor([[1.0, 7.0, 7.0], [4.0, 5.0, 6.0]]).argmin(dim=0)
torch.argmax(torch.tensor([0, 3, 3, 1]))
torch.tensor([1.0, 3.0, 2.0, 5.0]).topk(2)
torch.topk(torch.tensor([[1.0, 5.0, 2.0], [7.0, 1.0, 0.0]]), 2, dim=1)
torch.tensor([[1.0, 5.0, 2.0], [7.0, 1.0, 0.0]]).topk(1, dim=0)
torch.tensor([4.0, 1.0, 3.0], dtype=torch.float64).topk(2, largest=False)
torch.tensor([1.0, float('nan'), 2.0]).topk(2)
torch.tensor([1.0, float('nan'), 2.0]).topk(3, largest=False)
torch.tensor([4, 1, 3]).topk(3).indices
torch.tensor(2.5).topk(1)
torch.tensor([1.0, 2.0]).topk(0)
torch.tensor([1.0, 2.0]).topk(3)
torch.tensor([True, False]).topk(1)
torch.tensor([True, False]).max()
torch.tensor([1, 2, 3]).min()
torch.tensor([]).max()
torch.tensor([1.0, 2.0]).all()
torch.tensor([1, 0]).any()
torch.tensor([[True, False], [True, True]]).all(dim=1)
torch.tensor([[True, False], [False, False]]).any(dim=0, keepdim=True)
torch.tensor([[1.0, 2.0], [3.0, 4.0]]).cumsum(dim=1)
torch.cumsum(torch.tensor([1, 2, 3]), 0)
torch.tensor([1.5, -3.0]).clamp(min=-1)
torch.tensor([1.5, -3.0]).clamp(max=1)
torch.tensor([1.5, -3.0]).clip(-1, 1)
torch.clamp(torch.tensor([1.5, -3.0]), -1, 1)
torch.clamp(torch.tensor([1.5, -3.0]), min=0.8, max=1.2)
torch.clamp(torch.tensor([1, -3]), min=0.5)
torch.clamp(torch.tensor([1, -3]), min=0)
torch.clamp(torch.tensor([1.5, float('nan')]), 0, 1)
torch.clamp(torch.tensor([1.5, -3.0]), min=torch.tensor([0.0, -5.0]))
torch.tensor([1.5, -3.0]).clamp(min=2, max=1)
torch.tensor([2.0, 0.5]).clamp(min=1)
torch.tensor([2.0, 0.5]).clamp()
torch.maximum(torch.tensor([1.0, float('nan')]), torch.tensor([2.0, 0.0]))
torch.minimum(torch.tensor([1, 5]), torch.tensor([3.0, 2.0]))
torch.maximum(torch.tensor([1.0]), 0.5)
torch.where(torch.tensor([True, False]), torch.tensor([1.0, 2.0]), 0.0)
torch.where(torch.tensor([True, False]), 1.0, 0)
torch.where(torch.tensor([True, False]), 1, 0)
torch.where(torch.tensor([True, False]), torch.tensor([1, 2]), 0.5)
torch.where(torch.tensor([1.0, 0.0]) > 0, torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
torch.where(torch.tensor([[True, False], [False, True]]))
torch.tensor([1.0, 2.0]).masked_fill(torch.tensor([True, False]), -1.0)
torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), 9)
torch.exp(torch.tensor([0.0, 1.0, -1.0, 100.0]))
torch.exp(torch.tensor([1, 2]))
torch.tensor([0.0, 1.0]).exp()
torch.log(torch.tensor([0.0, 1.0, 2.0, -1.0]))
torch.expm1(torch.tensor([1e-8, 0.5]))
torch.log1p(torch.tensor([1e-8, 0.5, -1.0]))
torch.sigmoid(torch.tensor([-500.0, 0.0, 2.0, 100.0]))
torch.tensor([-500.0, 0.0]).sigmoid()
-torch.log(torch.sigmoid(torch.tensor(-500.0)))
torch.sqrt(torch.tensor([4.0, 2.0]))
torch.tanh(torch.tensor([0.5, -3.0]))
F.logsigmoid(torch.tensor([-500.0, -1.0, 0.0, 500.0]))
F.softplus(torch.tensor([-30.0, 0.0, 25.0]))
F.softplus(torch.tensor([-30.0, 0.0, 25.0]), beta=2)
F.softmax(torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]]), dim=-1)
F.softmax(torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]]), dim=0)
F.log_softmax(torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]]), dim=-1)
F.log_softmax(torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]]), dim=0)
torch.softmax(torch.tensor([1000.0, 0.0]), dim=0)
torch.tensor([1.0, 3.0]).log_softmax(dim=0)
F.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 0.0]))
F.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 0.0]), reduction='none')
F.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 0.0]), reduction='sum')
F.relu(torch.tensor([-1.0, 2.0]))
F.sigmoid(torch.tensor([0.0]))
torch.stack([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])], dim=1)
torch.stack([torch.tensor(1.0), torch.tensor(2.0)])
torch.stack([torch.tensor([1, 2]), torch.tensor([3.0, 4.0])])
torch.cat([torch.tensor([1.0, 2.0]), torch.tensor([3.0])])
torch.cat([torch.tensor([[1.0, 2.0]]), torch.tensor([[3, 4]])], dim=0)
torch.cat([torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0]])], dim=1)
torch.tensor([1.0, 2.0]).tolist()
torch.tensor(1.5).tolist()
torch.tensor([[1, 2], [3, 4]]).tolist()
torch.tensor([1.5]).item()
torch.tensor([7]).item()
torch.tensor(True).item()
torch.tensor([1.0, 2.0]).item()
torch.tensor([1.0, 2.0]).size()
torch.tensor([[1.0, 2.0]]).size(1)
torch.tensor([[1.0, 2.0]]).size(-2)
torch.tensor([[1.0, 2.0]]).size(2)
torch.tensor([[1.0, 2.0]]).shape[1:]
torch.tensor([[1.0, 2.0]]).shape == (1, 2)
torch.tensor([[1.0, 2.0]]).dim()
torch.tensor([[1.0, 2.0]]).ndim
torch.tensor([[1.0, 2.0]]).numel()
torch.numel(torch.zeros(3, 4))
torch.tensor([1.0, 2.0]).long()
torch.tensor([1, 0]).bool()
torch.tensor([1, 0]).float()
torch.tensor([1, 0]).double()
torch.tensor([1.5, 0.0]).int()
torch.tensor([1.0, 0.0]).to(torch.int64)
torch.tensor([1.0, 0.0]).to('cpu')
torch.tensor([1.0, 0.0]).to(dtype=torch.float64)
torch.tensor([1.0, 0.0]).type_as(torch.tensor([1]))
torch.tensor([1, 2]).is_floating_point()
torch.is_floating_point(torch.tensor([1.0]))
torch.is_tensor(torch.tensor(1))
torch.is_tensor([1])
len(torch.zeros(4, 2))
len(torch.tensor(1.0))
float(torch.tensor([2.5]))
int(torch.tensor([2.9]))
int(torch.tensor([-2.9]))
bool(torch.tensor([0.0]))
bool(torch.tensor([1.0, 2.0]))
float(torch.tensor([1.0, 2.0]))
[x.item() for x in torch.tensor([1.0, 2.0])]
[x.tolist() for x in torch.tensor([[1, 2], [3, 4]])]
list(torch.tensor(1.0))
torch.tensor([1.0, 2.0]).numpy().dtype
[10, 20, 30][torch.tensor(1)]
torch.arange(5)[torch.tensor(2)]
torch.arange(6).reshape(2, 3)[:, 1]
torch.arange(6).reshape(2, 3)[1]
torch.arange(6).reshape(2, 3)[-1, -1]
torch.arange(6).reshape(2, 3)[torch.tensor([1, 0])]
torch.arange(6).reshape(2, 3)[torch.tensor([1, 0]), torch.tensor([2, 2])]
torch.arange(6).reshape(2, 3)[torch.arange(6).reshape(2, 3) > 2]
torch.arange(6).reshape(2, 3)[torch.tensor([True, False])]
torch.arange(6).reshape(2, 3)[None].shape
torch.arange(6).reshape(2, 3)[..., 0]
torch.arange(6).reshape(2, 3)[:, ::2]
torch.arange(6).reshape(2, 3)[:, ::-1]
torch.arange(6).reshape(2, 3)[torch.tensor([0.0])]
torch.arange(6).reshape(2, 3)[2]
torch.tensor([[0.1234, 5.0], [-12.5, 1e-3]])
torch.tensor([1e-10, 1e10])
torch.tensor([100.0, 2000.0])
torch.tensor([0.0001, 1.0])
torch.tensor([1.0, 1001.0])
torch.tensor([-0.0, 0.0])
torch.tensor(-0.0)
torch.tensor([1.5, float('nan')], dtype=torch.float64)
torch.tensor([1.0, float('inf'), float('-inf')])
torch.float32
torch.float
torch.float64
torch.double
torch.long
torch.int64
torch.int
torch.bool
torch.float is torch.float32
torch.long is torch.int64
torch.get_default_dtype()
torch.finfo(torch.float32).eps
torch.finfo(torch.float32).min
torch.finfo(torch.float64).max
torch.Size([2, 3])
torch.Size([2, 3]).numel()
torch.zeros(2, 3).shape[-1]
torch.zeros(2, 3).T.shape
torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0000001]))
torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))
torch.equal(torch.tensor([1, 2]), torch.tensor([1, 2]))
torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))
torch.isnan(torch.tensor([1.0, float('nan')]))
torch.isfinite(torch.tensor([1.0, float('inf')]))
torch.logical_not(torch.tensor([True, False]))
torch.tensor([0.5, 0.25]) * torch.tensor([[1.0], [2.0]])
torch.tensor(3.0)[None]
torch.inf
torch.pi
torch.tensor([[1.0, 2.0], [3.0, 4.0]]).gather(1, torch.tensor([[1], [0]]))
torch.gather(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 1, torch.tensor([[2, 0]]))
torch.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero()
torch.nonzero(torch.tensor([0, 3, 0, 4]), as_tuple=True)
torch.tensor([1.5, 2.0]).new_zeros(3)
torch.tensor([1, 2]).new_ones((2, 2))
torch.tensor([1.5, 2.0]).new_full((2,), 7)
torch.tensor([1.5, 2.0]).new_tensor([1, 2])
torch.tensor(1.0).size(0)
torch.tensor([True, False]).argmax()
torch.tensor([torch.tensor([1.0]), torch.tensor([2.0])])
torch.tensor([torch.tensor(1.0, dtype=torch.float64), 2])
torch.tensor([torch.tensor([1, 2]), torch.tensor([3, 4])])
torch.tensor([1.0, 2.0]).reciprocal()
3 / torch.tensor([0.7, 2.5])
0.1 / torch.tensor(2.5)
"""
# gradients (the layer's autograd: tests/test_torch_layer_autograd.py), here so that the wasm
# tests run them on Pyodide too
GRAD_EXPRESSIONS = [
    "torch.tensor([1.0, 2.0], requires_grad=True) * 2",
    "torch.tensor([1.5, 2.0], requires_grad=True).sum()",
    "torch.autograd.grad(torch.where((x := torch.tensor([0.5, math.inf]).requires_grad_()) < 1,"
    " x.exp(), 1.0).sum(), x)[0]",
    "torch.autograd.grad((x := torch.arange(6.0).reshape(2, 3).requires_grad_())"
    ".gather(1, torch.tensor([[0, 0], [2, 1]])).sum(), x)[0]",
    "torch.autograd.grad((x := torch.arange(6.0, requires_grad=True))[torch.tensor([0, 0, 5])]"
    ".sum() + x[x > 3].sum(), x)[0]",
    "torch.autograd.grad((x := torch.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)).topk(2)"
    ".values.sum() + x.max() + x.reshape(2, 2).max(1).values.sum(), x)[0]",
    "torch.autograd.grad((x := torch.tensor([1.0, 5.0, 2.0, 4.0], requires_grad=True))"
    ".quantile(0.3), x)[0]",
    "torch.autograd.grad(((z := torch.zeros(2, 3)).__setitem__((slice(None), 1),"
    " (x := torch.tensor([1.0, 2.0], requires_grad=True)) * 2), z)[1].sum() * 3, x)[0]",
    "torch.autograd.grad((z := (x := torch.tensor([1.0, 2.0, 3.0], requires_grad=True)) * 1,"
    " z[1:].mul_(2), z)[2].sum(), x)[0]",
    "torch.autograd.grad((x := torch.arange(4.0, requires_grad=True)).cumsum(0).sum(), x)[0]",
    "torch.autograd.grad((x := torch.tensor([1.0, 2.0, 4.0], requires_grad=True)).std(), x)[0]",
    "torch.autograd.grad((x := torch.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True))"
    ".log_softmax(1).sum() + x.softmax(0)[0, 1], x)[0]",
    "(torch.tensor([1.0, 2.0], requires_grad=True) * 2).backward()",
    "torch.tensor([1.0, 2.0], requires_grad=True).add_(1)",
]
EXPRESSION_LIST = [line for line in EXPRESSIONS.strip().splitlines() if line.strip()]
EXPRESSION_LIST += GRAD_EXPRESSIONS


# expressions whose values come from transcendental functions, and how many ulps they may be
# off; every other expression must give torch's exact bits and printed form
COMPOSITE = re.compile(r"sigmoid|softplus|softmax|logsigmoid|\bstd\b|\bvar\b")
TRANSCENDENTAL = re.compile(r"\b(exp|expm1|log|log1p|tanh)\b|\*\*")


def expression_ulps(expr: str) -> int:
    if COMPOSITE.search(expr):
        return COMPOSITE_ULPS
    return TRANSCENDENTAL_ULPS if TRANSCENDENTAL.search(expr) else 0


@pytest.mark.parametrize("expr", [e for e in EXPRESSION_LIST if not expression_ulps(e)])
def test_ieee_expression_gives_torchs_bits_dtype_shape_and_repr(expr: str):
    assert evaluate(expr, layer) == evaluate(expr, real_torch)


@pytest.mark.parametrize("expr", [e for e in EXPRESSION_LIST if expression_ulps(e)])
def test_transcendental_expression_gives_torchs_dtype_and_shape_and_values_within_ulps(expr: str):
    got, want = evaluate(expr, layer), evaluate(expr, real_torch)
    assert agree(got, want, expression_ulps(expr)), (got, want)


# ---- dtype promotion ----------------------------------------------------------------------------

OPERANDS = {
    "f32[2]": lambda t: t.tensor([1.5, -2.0]),
    "f64[2]": lambda t: t.tensor([1.5, -2.0], dtype=t.float64),
    "i64[2]": lambda t: t.tensor([3, -2]),
    "i32[2]": lambda t: t.tensor([3, -2], dtype=t.int32),
    "bool[2]": lambda t: t.tensor([True, False]),
    "f32()": lambda t: t.tensor(2.5),
    "f64()": lambda t: t.tensor(2.5, dtype=t.float64),
    "i64()": lambda t: t.tensor(3),
    "bool()": lambda t: t.tensor(True),
    "int": lambda t: 3,
    "float": lambda t: 0.1,
    "bool": lambda t: True,
}
BINARY_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "<": lambda a, b: a < b,
    "==": lambda a, b: a == b,
    "**": lambda a, b: a**b,
    "//": lambda a, b: a // b,
}


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
@pytest.mark.parametrize("left", sorted(OPERANDS))
def test_dtype_promotion_matches_torch_for_every_operand_pair_with_pow_within_ulps(
    left: str, op: str
):
    ulps = TRANSCENDENTAL_ULPS if op == "**" else 0  # pow is not an IEEE operation
    for right in OPERANDS:
        if not left.endswith("]") and not right.endswith("]") and "(" not in left + right:
            continue  # two Python numbers: not a tensor operation
        got, want = same_outcome(
            lambda t, right=right: BINARY_OPS[op](OPERANDS[left](t), OPERANDS[right](t))
        )
        assert agree(got, want, ulps), (left, op, right)


def _where(t: Any, a: str, b: str) -> Any:
    return t.where(t.tensor([True, False]), OPERANDS[a](t), OPERANDS[b](t))


def _clamp(t: Any, a: str, b: str) -> Any:
    x = OPERANDS[a](t)
    return t.clamp(x if isinstance(x, t.Tensor) else t.tensor([1.0, 5.0]), min=OPERANDS[b](t))


@pytest.mark.parametrize("fn", [_where, _clamp], ids=["where", "clamp"])
def test_where_and_clamp_promote_like_torch(fn: Any):
    for a in OPERANDS:
        for b in OPERANDS:
            got, want = same_outcome(lambda t, a=a, b=b: fn(t, a, b))
            assert got == want, (a, b)


def test_inplace_ops_keep_the_dtype_or_refuse_like_torch():
    cases = [
        ("i64 += float", lambda t: t.tensor([1, 2]).__iadd__(0.5)),
        ("i64 /= int", lambda t: t.tensor([1, 2]).__itruediv__(2)),
        ("f32 += i64", lambda t: t.tensor([1.0, 2.0]).__iadd__(t.tensor([1, 2]))),
        ("f32 *= f64 0-d", lambda t: t.tensor([1.0, 2.0]).__imul__(t.tensor(0.1, dtype=t.float64))),
        ("bool |= bool", lambda t: t.tensor([True, False]).__ior__(t.tensor([False, True]))),
        ("bool += int", lambda t: t.tensor([True, False]).__iadd__(1)),
        ("i64 -= i64", lambda t: t.tensor([5, 2]).__isub__(t.tensor([1, 1]))),
    ]
    for name, fn in cases:
        got, want = same_outcome(fn)
        assert got == want, name


# ---- reductions ---------------------------------------------------------------------------------

REDUCTION_SHAPES = [
    (7,), (16,), (33,), (2, 5), (3, 8), (8, 33), (1, 9), (9, 1), (3, 4, 5), (2, 3, 17),
]


def assert_sum_within_bound(got: Any, want: Any, data: np.ndarray, dim: Any, keepdim: bool,
                            mean: bool) -> None:
    """Same dtype and shape; values within ``sum_error_bound`` of torch's."""
    g, w = as_array(got), as_array(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    axes = None if dim is None else tuple(
        d % data.ndim for d in (dim if isinstance(dim, tuple) else (dim,))
    )
    bound = sum_error_bound(data, axes, mean)
    if keepdim and axes:
        bound = np.expand_dims(bound, axes)
    diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
    assert np.all(diff <= bound), (g, w, diff, bound)


@pytest.mark.parametrize("shape", REDUCTION_SHAPES, ids=str)
def test_reductions_with_dim_and_keepdim_match_torch_exactly_and_sums_within_higham_bound(
    shape: tuple[int, ...],
):
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    data = (rng.standard_normal(shape) * 3).astype(np.float32)
    data.reshape(-1)[rng.integers(0, data.size)] = data.max()  # a tie for the arg-reductions
    dims: list[Any] = [None, *range(-len(shape), len(shape))]
    if len(shape) > 1:
        dims += [(0, len(shape) - 1), tuple(range(len(shape)))]
    for dim in dims:
        for keepdim in (False, True):
            for name in ("sum", "mean", "max", "min", "argmax", "argmin", "amax", "all", "any"):
                if name in ("max", "min", "argmax", "argmin") and isinstance(dim, tuple):
                    continue
                if name in ("max", "min") and dim is None:
                    kwargs: dict[str, Any] = {}
                else:
                    kwargs = {"dim": dim, "keepdim": keepdim}
                want = getattr(real_torch.from_numpy(data), name)(**kwargs)
                got = getattr(layer.from_numpy(data), name)(**kwargs)
                if name in ("sum", "mean"):
                    assert_sum_within_bound(got, want, data, dim, keepdim, name == "mean")
                    continue
                for g, w in zip(got, want, strict=True) if isinstance(want, tuple) else [
                    (got, want)
                ]:
                    assert_same(g, w)


def test_integer_reductions_match_torch_exactly():
    data = np.arange(-7, 17, dtype=np.int64).reshape(4, 6)
    for dim in (None, 0, 1, (0, 1)):
        for name in ("sum", "amax", "all", "any"):
            want = getattr(real_torch.from_numpy(data), name)(dim=dim)
            got = getattr(layer.from_numpy(data), name)(dim=dim)
            assert summary(got) == summary(want), (name, dim)


@pytest.mark.parametrize("n", [1, 2, 5, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 257,
                               511, 512, 513, 1000, 4097, 20000, 70000])
def test_float32_sum_and_mean_are_within_higham_bound_of_torch(n: int):
    rng = np.random.default_rng(n)
    for scale in (1e-3, 1.0, 1e4):
        data = (rng.standard_normal(n) * scale).astype(np.float32)
        for name in ("sum", "mean"):
            want = getattr(real_torch.from_numpy(data), name)()
            got = getattr(layer.from_numpy(data), name)()
            assert_sum_within_bound(got, want, data, None, False, name == "mean")


def test_sums_of_views_permutations_and_slices_are_within_higham_bound_of_torch():
    rng = np.random.default_rng(7)
    data = rng.standard_normal((4, 8, 2, 17)).astype(np.float32)
    for perm in [(0, 1, 2, 3), (3, 1, 0, 2), (0, 3, 2, 1)]:
        permuted = np.transpose(data, perm)
        for dims in [(0,), (1,), (3,), (0, 1), (1, 3), (0, 2, 3), None]:
            want = real_torch.from_numpy(data).permute(*perm).sum(dim=dims)
            got = layer.from_numpy(data).permute(*perm).sum(dim=dims)
            assert_sum_within_bound(got, want, permuted, dims, False, False)
    for key in [(slice(None), 0), (slice(None, None, 2), slice(1, None)), (Ellipsis, slice(0, 9))]:
        want = real_torch.from_numpy(data)[key].sum()
        got = layer.from_numpy(data)[key].sum()
        assert_sum_within_bound(got, want, data[key], None, False, False)


def test_float64_sums_are_within_higham_bound_of_torch():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((13, 21))
    for dim in (None, 0, 1):
        want = real_torch.from_numpy(data).sum(dim=dim)
        got = layer.from_numpy(data).sum(dim=dim)
        assert_sum_within_bound(got, want, data, dim, False, False)


def test_sums_of_values_exact_in_any_order_give_torchs_bits():
    # small integers and halves: every partial sum is exact, whatever order torch takes
    data = (np.arange(-40, 40, dtype=np.float32) / 2).reshape(8, 10)
    for dim in (None, 0, 1, (0, 1)):
        for name in ("sum", "mean"):
            want = getattr(real_torch.from_numpy(data), name)(dim=dim)
            assert summary(getattr(layer.from_numpy(data), name)(dim=dim)) == summary(want)


@pytest.mark.parametrize("shape", [(7,), (3, 8), (2, 5, 4)], ids=str)
def test_std_and_var_match_torch_within_ulps_for_every_dim_and_correction(shape):
    rng = np.random.default_rng(sum(shape))
    data = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    for dim in [None, 0, -1, *([(0, -1)] if len(shape) > 1 else [])]:
        for kwargs in ({}, {"correction": 0}, {"keepdim": True}, {"unbiased": False}):
            for name in ("std", "var"):
                want = getattr(real_torch.from_numpy(data), name)(dim=dim, **kwargs)
                got = getattr(layer.from_numpy(data), name)(dim=dim, **kwargs)
                assert_within_ulps(got, want, COMPOSITE_ULPS)


def test_mean_of_integers_is_refused_like_torch():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        layer.tensor([1, 2]).mean()


# ---- indexing and in-place writes ---------------------------------------------------------------


def test_indexed_add_with_repeated_indices_does_not_accumulate_like_torch():
    def fn(t):
        x = t.zeros(2, 4)
        rows = t.tensor([0, 0, 1, 0])
        cols = t.tensor([3, 3, 1, 3])
        x[rows, cols] += t.tensor([1.0, 2.0, 3.0, 4.0])  # (0, 3) three times: last write wins
        return x

    got, want = same_outcome(fn)
    assert got == want
    assert fn(real_torch)[0, 3].item() == fn(layer)[0, 3].item() == 4.0  # not 1 + 2 + 4


def test_index_assignment_masks_and_views_write_through_like_torch():
    def fn(t):
        x = t.zeros(3, 5)
        x[:, 2] = t.tensor([1.0, -0.5, 2.0])
        x[:, -1] = 7
        x[1] = t.arange(5)  # int64 values cast into the float tensor
        x[x > 1.5] = 0.25
        row = x[0]
        row += 10  # a basic-index view: writes reach x
        col = x[:, 1]
        col.mul_(2)
        y = x.view(15)
        y[0] = -1.0
        x[t.tensor([True, False, True])] *= 2
        x[t.tensor([2, 0]), t.tensor([0, 4])] = t.tensor([5.0, 6.0])
        return x

    got, want = same_outcome(fn)
    assert got == want


def test_advanced_indexing_copies_and_basic_indexing_shares_like_torch():
    def fn(t):
        x = t.arange(6.0).reshape(2, 3)
        copy = x[t.tensor([0])]
        copy += 100
        shared = x[:, 1:]
        shared -= 1
        detached = x.detach()
        detached[0, 0] = 42.0
        cloned = x.clone()
        cloned[1, 1] = -9.0
        return x, copy, shared, cloned

    got, want = same_outcome(fn)
    assert got == want


def test_loop_assignment_pattern_from_gae_matches_torch():
    def fn(t):
        adv = t.zeros(2, 4)
        gae = t.zeros(2)
        for step in reversed(range(4)):
            gae = 0.5 * gae + t.tensor([1.0, 2.0])
            adv[:, step] = gae
        episode = t.zeros(3)
        for i in range(3):
            episode[i] = adv[0, i] * 2
        return adv, episode

    got, want = same_outcome(fn)
    assert got == want


# ---- printing -----------------------------------------------------------------------------------

PRINT_TABLE = {
    "small": lambda t: t.tensor([0.1, 0.2, 0.3]),
    "large": lambda t: t.tensor([123456.0, 7.5]),
    "huge": lambda t: t.tensor([1.5e9, 2.0]),
    "tiny": lambda t: t.tensor([1e-5, 0.5]),
    "negative": lambda t: t.tensor([-1.0, -0.25, -300.5]),
    "zeros": lambda t: t.zeros(4),
    "negative zero": lambda t: t.tensor([-0.0, 0.0, 1.0]),
    "0-d negative zero": lambda t: t.tensor(-0.0),
    "mixed magnitudes": lambda t: t.tensor([1e-3, 1.0, 2000.0]),
    "integers in float": lambda t: t.tensor([1.0, 2.0, -30.0]),
    "nan and inf": lambda t: t.tensor([float("nan"), float("inf"), -float("inf"), 1.5]),
    "only nan": lambda t: t.tensor([float("nan")]),
    "int64": lambda t: t.tensor([1, -20, 300]),
    "int32": lambda t: t.tensor([1, -20, 300], dtype=t.int32),
    "bool": lambda t: t.tensor([[True, False], [False, True]]),
    "float64": lambda t: t.tensor([0.1, 2.0], dtype=t.float64),
    "0-d float": lambda t: t.tensor(0.5),
    "0-d int": lambda t: t.tensor(3),
    "0-d bool": lambda t: t.tensor(False),
    "2-D": lambda t: t.tensor([[0.1, -2.0], [3.25, 4.0]]),
    "2-D wide, wraps": lambda t: (t.arange(40.0).reshape(2, 20) - 13) / 7,
    "1-D wide, wraps": lambda t: t.arange(-30.0, 30.0, 1.5) / 3,
    "int wide, wraps": lambda t: t.arange(100).reshape(2, 50),
    "3-D": lambda t: t.arange(24.0).reshape(2, 3, 4) / 8,
    "summarised": lambda t: t.arange(2000.0).reshape(40, 50) / 3,
    "summarised 1-D": lambda t: t.arange(5000),
    "empty": lambda t: t.tensor([]),
    "empty 2-D": lambda t: t.zeros(0, 3),
    "empty int": lambda t: t.zeros(0, dtype=t.long),
    "float64 wide": lambda t: t.arange(30.0, dtype=t.float64) / 9,
    "scientific wide": lambda t: t.tensor([1e-8] * 12 + [1.0]),
}


@pytest.mark.parametrize("name", sorted(PRINT_TABLE))
def test_repr_and_str_match_torch_exactly(name: str):
    want_t, got_t = PRINT_TABLE[name](real_torch), PRINT_TABLE[name](layer)
    assert repr(got_t) == repr(want_t)
    assert str(got_t) == str(want_t)
    assert f"{got_t}" == f"{want_t}"


def test_repr_matches_torch_for_random_tensors():
    rng = np.random.default_rng(11)
    for trial in range(150):
        shape = tuple(rng.integers(1, 7, size=rng.integers(0, 4)))
        values = np.array(rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 10))
        if trial % 3 == 0:
            values = np.round(values)
        if trial % 5 == 0:
            values = np.where(rng.random(shape) < 0.3, 0.0, values)
        for np_dtype in (np.float32, np.float64, np.int64):
            data = np.ascontiguousarray(np.clip(values, -1e12, 1e12).astype(np_dtype))
            assert repr(layer.from_numpy(data)) == repr(real_torch.from_numpy(data))


def test_set_printoptions_changes_printing_like_torch():
    data = np.linspace(-1, 1, 7, dtype=np.float32)
    options = [{"precision": 2}, {"sci_mode": True}, {"linewidth": 30}, {"profile": "short"}]
    for opts in options:
        real_torch.set_printoptions(**opts)
        layer.set_printoptions(**opts)
        try:
            assert repr(layer.from_numpy(data)) == repr(real_torch.from_numpy(data)), opts
        finally:
            real_torch.set_printoptions(profile="default")
            layer.set_printoptions(profile="default")


@pytest.mark.parametrize("spec", ["", ".4f", "+.4f", ".3f", ".1f", "8.2f", ".2e", "g", ".6f"])
def test_format_specs_on_0d_tensors_match_torch(spec: str):
    for value in (0.5, -0.0123456, 1234.5678, 3.0, float("inf")):
        want = format(real_torch.tensor(value), spec)
        assert format(layer.tensor(value), spec) == want
    assert format(layer.tensor(7), "") == format(real_torch.tensor(7), "")
    assert f"{layer.tensor(0.5)}" == "0.5"  # torch formats a 0-d tensor as its number


def test_format_spec_on_a_1d_tensor_is_refused_like_torch():
    with pytest.raises(TypeError):
        format(real_torch.tensor([1.0]), ".2f")
    with pytest.raises(TypeError):
        format(layer.tensor([1.0]), ".2f")


def test_size_dtype_and_return_types_print_like_torch():
    assert repr(layer.Size([2, 3])) == repr(real_torch.Size([2, 3])) == "torch.Size([2, 3])"
    assert str(layer.zeros(2, 3).shape) == str(real_torch.zeros(2, 3).shape)
    assert repr(layer.zeros(0).shape[1:]) == "torch.Size([])"
    for name in ("float32", "float64", "int64", "int32", "bool"):
        assert repr(getattr(layer, name)) == repr(getattr(real_torch, name))
    data = np.array([[1.0, 9.0], [4.0, 2.0]], np.float32)
    assert repr(layer.from_numpy(data).max(dim=1)) == repr(real_torch.from_numpy(data).max(dim=1))
    assert repr(layer.from_numpy(data).min(0)) == repr(real_torch.from_numpy(data).min(0))


# ---- random numbers -----------------------------------------------------------------------------

SEEDS = [*range(40), 1234, 2**31 - 1, 2**32 + 5, 2**63 - 1]


def assert_randn_agrees(got: Any, want: Any) -> None:
    """Fewer than 16 values: torch's scalar path, the same bits on every CPU. 16 or more: torch's
    vectorised path depends on the CPU; the layer is within RANDN_BOUND · max(1, |x|)."""
    g, w = as_array(got), as_array(want)
    if g.size < 16:
        assert_same(got, want)
        return
    assert g.shape == w.shape and g.dtype == w.dtype
    bound = RANDN_BOUND * np.maximum(1.0, np.abs(w.astype(np.float64)))
    assert np.all(np.abs(g.astype(np.float64) - w) <= bound), (g, w)


@pytest.mark.parametrize("seed", SEEDS)
def test_randn_is_bit_identical_below_16_values_and_within_bound_from_16(seed: int):
    real_torch.manual_seed(seed)
    layer.manual_seed(seed)
    for size in [*range(1, 41), 47, 64, 100, 257]:  # scalar path below 16, normal_fill above
        assert_randn_agrees(layer.randn(size), real_torch.randn(size))


def test_randn_shapes_repeated_calls_and_scaling_agree_with_torch():
    for seed in range(10):
        real_torch.manual_seed(seed)
        layer.manual_seed(seed)
        for args in [(2, 6), (2, 7), (2, 5), (3, 5), (4, 16), (1, 1), (5, 3, 2), ((),), (0,)]:
            want = real_torch.randn(*args) * 0.1
            got = layer.randn(*args) * 0.1
            assert_randn_agrees(got, want)
            if want.numel() < 16:  # what the lessons print: the same text on every CPU
                assert repr(got) == repr(want)
        # the cached second Box–Muller value survives between calls, as in torch
        for size in (1, 3, 1, 2, 17, 1):
            assert_randn_agrees(layer.randn(size), real_torch.randn(size))
        want = real_torch.randn((3, 2), dtype=real_torch.float64)
        got = layer.randn((3, 2), dtype=layer.float64)
        assert summary(got) == summary(want)
        want = real_torch.randn(size=(40,), dtype=real_torch.float64)
        got = layer.randn(size=(40,), dtype=layer.float64)
        assert_within_ulps(got, want, TRANSCENDENTAL_ULPS * 4)


def test_rand_randint_and_like_variants_are_bit_identical_to_torch():
    for seed in (0, 1, 99):
        real_torch.manual_seed(seed)
        layer.manual_seed(seed)
        calls = [
            lambda t: t.rand(3, 4),
            lambda t: t.rand(20, dtype=t.float64),
            lambda t: t.randint(0, 10, (5,)),
            lambda t: t.randint(7, (2, 3)),
            lambda t: t.randn_like(t.zeros(2, 7)),
            lambda t: t.rand_like(t.zeros(3)),
            lambda t: t.randn(4),
        ]
        for call in calls:
            assert summary(call(layer)) == summary(call(real_torch))


def test_manual_seed_resets_the_generator_and_its_cached_normal():
    layer.manual_seed(5)
    first = layer.randn(3).tolist()
    layer.randn(1)
    layer.manual_seed(5)
    assert layer.randn(3).tolist() == first
    assert layer.initial_seed() == 5
    assert layer.random.manual_seed(5).initial_seed() == 5


# ---- conversions, metadata and the no-grad context ----------------------------------------------


def test_scalar_conversions_and_errors_match_torch():
    checks = [
        lambda t: t.tensor([2.5]).item(),
        lambda t: bool(t.tensor([1])),
        lambda t: bool(t.tensor([])),
        lambda t: bool(t.tensor([1, 2])),
        lambda t: int(t.tensor(3.9)),
        lambda t: float(t.tensor([1, 2])),
        lambda t: len(t.tensor(2.0)),
        lambda t: list(t.tensor(2.0)),
        lambda t: t.tensor([1, 2]).tolist(),
        lambda t: t.tensor([[1.0]]).item(),
        lambda t: t.zeros(2, 3).size(),
        lambda t: t.zeros(2, 3).size(-1),
        lambda t: t.zeros(2, 3).size(5),
        lambda t: t.zeros(2, 3).dim(),
        lambda t: t.zeros(2, 3).numel(),
        lambda t: t.zeros(2, 3).is_floating_point(),
        lambda t: t.zeros(2, 3).requires_grad,
        lambda t: t.zeros(2, 3).grad,
        lambda t: str(t.zeros(2, 3).device),
        lambda t: t.zeros(6).view(2, 3).shape,
        lambda t: t.zeros(6).view(4, 2),
        lambda t: t.zeros(2, 3).T.view(6),
        lambda t: t.zeros(2, 3).T.reshape(6).shape,
    ]
    for i, check in enumerate(checks):
        got, want = same_outcome(check)
        assert got == want, i


def test_no_grad_is_a_context_manager_and_a_decorator():
    with layer.no_grad():
        out = layer.tensor([1.0]) * 2
    assert out.tolist() == [2.0]

    @layer.no_grad()
    def double(x):
        return x * 2

    assert double(layer.tensor([2.0])).tolist() == [4.0]
    assert layer.tensor([1.0]).detach().requires_grad is False


# ---- what the layer does not offer --------------------------------------------------------------


@pytest.mark.parametrize(
    ("get", "name"),
    [
        (lambda: layer.layer_norm, "torch.layer_norm"),
        (lambda: layer.matmul, "torch.matmul"),
        (lambda: layer.float16, "torch.float16"),
        (lambda: layer.nn.Linear, "torch.nn.Linear"),
        (lambda: layer.nn.functional.layer_norm, "torch.nn.functional.layer_norm"),
        (lambda: layer.tensor([1.0]).cuda, "Tensor.cuda"),
        (lambda: layer.tensor([1.0]).median, "Tensor.median"),
        (lambda: layer.tensor([1.0]) @ layer.tensor([1.0]), "@"),
    ],
)
def test_unsupported_features_raise_an_error_naming_the_missing_piece(get, name: str):
    with pytest.raises(NotImplementedError) as info:
        get()
    message = str(info.value)
    assert name in message
    assert "browser's torch layer (rl_ops_numpy)" in message


def test_unsupported_error_lists_what_is_supported_and_works_with_hasattr():
    with pytest.raises(layer.Unsupported, match=r"supported: .*randn"):
        _ = layer.layer_norm
    assert not hasattr(layer, "layer_norm")
    assert not hasattr(layer.tensor([1.0]), "backward_hook")
    assert getattr(layer.nn, "Module", None) is None


def test_autograd_requests_are_served_not_refused():
    """The layer has autograd (tests/test_torch_layer_autograd.py compares it with torch):
    what used to raise now works."""
    x = layer.tensor([1.0], requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0]
    assert layer.tensor([1.0]).requires_grad_().requires_grad
    assert layer.zeros(2, requires_grad=True).requires_grad
    assert layer.randn(2, requires_grad=True).is_leaf
    assert layer.tensor([1.0]).requires_grad_(False).requires_grad is False


def test_other_devices_are_refused():
    with pytest.raises(NotImplementedError, match="only the CPU"):
        layer.zeros(2, device="cuda")
    with pytest.raises(NotImplementedError, match="only the CPU"):
        layer.tensor([1.0]).to("cuda")
    assert layer.zeros(2, device="cpu").device == layer.device("cpu")


# ---- installation -------------------------------------------------------------------------------


def test_install_torch_registers_the_layer_and_uninstall_restores_sys_modules():
    before = {name: sys.modules.get(name) for name in TORCH_NAMES}
    module = install_torch()
    try:
        import torch
        import torch.nn.functional as F

        assert torch is module is layer
        assert F is layer.nn.functional
        assert torch.nn.functional.logsigmoid is F.logsigmoid
    finally:
        uninstall_torch()
    assert {name: sys.modules.get(name) for name in TORCH_NAMES} == before
    uninstall_torch()  # a second call has nothing to undo
    assert {name: sys.modules.get(name) for name in TORCH_NAMES} == before


def test_torch_layer_installed_restores_modules_even_after_an_error():
    before = sys.modules.get("torch")
    with pytest.raises(ZeroDivisionError), torch_layer_installed():
        assert sys.modules["torch"] is layer
        _ = 1 / 0
    assert sys.modules.get("torch") is before


# ---- logsumexp and quantile (the beyond chapter's token_logprobs and high_entropy_mask) --------


LSE_SHAPES = [(1,), (7,), (3, 11), (2, 5, 13), (4, 1, 6)]


@pytest.mark.parametrize("shape", LSE_SHAPES, ids=str)
def test_logsumexp_matches_torch_within_ulps_of_the_largest_magnitude(shape):
    # log Σ exp(x − m) + m: a few roundings of numbers as large as max(|m|, |result|, 1)
    rng = np.random.default_rng(sum(shape) + 11)
    for dtype in (np.float32, np.float64):
        data = (rng.standard_normal(shape) * 4).astype(dtype)
        data.reshape(-1)[0] = -np.inf  # a token of probability 0
        dims: list[Any] = [*range(-len(shape), len(shape))]
        if len(shape) > 1:
            dims.append((0, len(shape) - 1))
        for dim in dims:
            for keepdim in (False, True):
                want = real_torch.from_numpy(data).logsumexp(dim, keepdim=keepdim)
                got = layer.logsumexp(layer.from_numpy(data), dim, keepdim=keepdim)
                g, w = as_array(got), as_array(want)
                assert g.shape == w.shape and g.dtype == w.dtype
                finite = np.abs(data[np.isfinite(data)]).max(initial=0.0)
                same = g == w  # the infinities (a row of −inf) too
                with np.errstate(invalid="ignore"):
                    scale = np.maximum(1.0, np.maximum(np.abs(w), finite))
                    err = np.where(same, 0.0, np.abs(g.astype(np.float64) - w)
                                   / (float(np.finfo(dtype).eps) * scale))
                assert err.max() <= COMPOSITE_ULPS, (dim, keepdim, err.max())


def test_logsumexp_of_infinities_empty_rows_and_integers_is_torchs():
    for expr in ["torch.logsumexp(torch.tensor([[float('-inf'), float('-inf')], [1.0, 2.0]]), 1)",
                 "torch.logsumexp(torch.tensor([float('inf'), 1.0]), 0)",
                 "torch.logsumexp(torch.zeros(2, 0), 1)",
                 "torch.logsumexp(torch.tensor([0, 0]), 0)",
                 "torch.logsumexp(torch.tensor(2.0), 0)",
                 "torch.tensor([[0.0, 0.0]]).logsumexp(-1, keepdim=True)"]:
        assert agree(evaluate(expr, layer), evaluate(expr, real_torch), 1), expr


@pytest.mark.parametrize("shape", [(1,), (5,), (6,), (24,), (3, 8), (2, 5, 4)], ids=str)
def test_quantile_is_torchs_bits_at_whole_ranks_and_within_an_ulp_of_the_values_between(shape):
    rng = np.random.default_rng(sum(shape) + 5)
    for dtype in (np.float32, np.float64):
        data = np.abs(rng.standard_normal(shape) * 2).astype(dtype)
        data.reshape(-1)[-1] = data.reshape(-1)[0]  # a tie
        dims: list[Any] = [None, *range(-len(shape), len(shape))]
        for dim in dims:
            n = data.size if dim is None else shape[dim]
            for q in (0.0, 0.2, 0.5, 0.8, 0.95, 1.0, 1 / 3):
                for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
                    kw = {"dim": dim, "keepdim": q == 0.5, "interpolation": interpolation}
                    want = real_torch.from_numpy(data).quantile(q, **kw)
                    got = layer.quantile(layer.from_numpy(data), q, **kw)
                    rank = np.float64(dtype(q) * dtype(n - 1))
                    if interpolation in ("linear",) and rank != np.floor(rank):
                        # torch's vector lerp fuses the multiply-add; an ulp of the larger value
                        g, w = as_array(got), as_array(want)
                        assert g.shape == w.shape and g.dtype == w.dtype
                        spacing = float(np.spacing(dtype(np.abs(data).max())))
                        assert np.abs(g.astype(np.float64) - w).max() <= spacing
                    else:
                        assert_same(got, want)


def test_quantile_refuses_what_torch_refuses_and_gives_nan_for_a_nan_slice():
    for expr in ["torch.quantile(torch.tensor([1, 2, 3]), 0.5)",
                 "torch.quantile(torch.tensor([1.0, 2.0]), 1.5)",
                 "torch.quantile(torch.tensor([1.0, 2.0]), -0.1)",
                 "torch.quantile(torch.tensor([]), 0.5)",
                 "torch.quantile(torch.tensor([1.0, 2.0]), 0.5, interpolation='cubic')",
                 "torch.quantile(torch.tensor([[0.1, float('nan')], [0.3, 0.2]]), 0.3, dim=1)",
                 "torch.quantile(torch.tensor(3.0), 0.5)",
                 "torch.quantile(torch.tensor([1.0, 4.0]), torch.tensor(0.25))",
                 "torch.tensor([[0.5, 0.1], [0.2, 0.9]]).quantile(0.0, keepdim=True)"]:
        assert evaluate(expr, layer) == evaluate(expr, real_torch), expr
    with pytest.raises(Exception, match="quantile"):
        layer.quantile(layer.tensor([1.0, 2.0]), layer.tensor([0.2, 0.8]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_without_dim_picks_torchs_legacy_dim_and_warns_at_the_callers_line(name):
    x = [[1.0, 2.0, 0.5], [3.0, 0.0, -1.0]]
    results = []
    for torch_module in (real_torch, layer):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(torch_module.nn.functional, name)(torch_module.tensor(x))
        (warning,) = caught
        assert warning.filename == __file__ and "Implicit dimension choice" in str(warning.message)
        results.append(out.tolist())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
