"""The torch layer's autograd (browser_runtime.torch_layer: graph, derivatives, torch.autograd)
against the installed CPU torch.

Every check runs the same code under real torch and under the layer, with the same leaves, and
compares the gradients: which outputs require grad, which gradients exist (None where torch has
none), NaN and ±inf in the same places, finite values within the layer's bound (below). The
lessons' answers are checked on the exercises' own random inputs (padding that holds NaN, ±inf
and 1e30, defaults left out), the ops one by one on inputs with NaN, ±inf, 0 and ties, and the
errors a learner can meet word for word.

The bound: a gradient is computed by the same IEEE steps as torch's (so mostly the same bits)
and by the layer's kernels where the forward pass uses them (transcendental functions within
ulps, sums within Higham's bound), so a finite gradient is within ``GRAD_BOUND · ε`` of torch's,
relative to the largest finite gradient of its tensor (at least 1).
"""

from __future__ import annotations

import gc
import math
import re
import warnings
import zlib
from typing import Any

import numpy as np
import pytest

from browser_runtime.check import (
    CASES,
    Raised,
    _call,
    _differs,
    _gradient_differs,
    _reference_numpy,
    _to_numpy,
    answer_function,
)
from browser_runtime.check import gradients as check_gradients

from .conftest import EXERCISES, LESSONS
from .mutants import define, mechanical
from .test_torch_layer import as_torch, exercise_function, layer, real_torch, ulp_distance

GRAD_BOUND = 16
EPS = {np.dtype(np.float32): float(np.finfo(np.float32).eps),
       np.dtype(np.float64): float(np.finfo(np.float64).eps)}


# ---- helpers ------------------------------------------------------------------------------------


def numpy_of(t: Any) -> np.ndarray:
    return np.array(t.detach().numpy(), copy=True)


def gradients(module: Any, fn: Any, args: list[Any], weight_seed: int = 0) -> list[Any]:
    """Run ``fn(module, *leaves)``; for each output, None if it is no float tensor, else
    ``(requires_grad, grads)``: the gradients of ``sum(output × fixed random weights)`` with
    respect to every float array of ``args`` (None for one not used), or None if the output
    does not require grad."""
    leaves = []
    call = []
    for a in args:
        if isinstance(a, np.ndarray):
            t = module.tensor(a, requires_grad=a.dtype.kind == "f")
            if a.dtype.kind == "f":
                leaves.append(t)
            call.append(t)
        else:
            call.append(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(module, *call)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    found: list[Any] = []
    rng = np.random.default_rng(weight_seed)
    for o in outs:
        if not isinstance(o, (real_torch.Tensor, layer.Tensor)) or not o.is_floating_point():
            found.append(None)
            continue
        w = rng.standard_normal(tuple(o.shape)).astype(str(o.dtype).replace("torch.", ""))
        if not o.requires_grad:
            found.append((False, None))
            continue
        loss = (o * module.tensor(w)).sum()
        grads = module.autograd.grad(loss, leaves, allow_unused=True, retain_graph=True)
        found.append((True, [None if g is None else numpy_of(g) for g in grads]))
    return found


def assert_same_gradient(got: np.ndarray, want: np.ndarray, where: str) -> None:
    """Same shape and dtype, NaN and ±inf in the same places, finite values within the bound."""
    assert got.shape == want.shape and got.dtype == want.dtype, (where, got.shape, want.shape,
                                                                got.dtype, want.dtype)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (where, got, want)
    inf = np.isinf(want)
    assert np.array_equal(np.isinf(got), inf), (where, got, want)
    assert np.array_equal(got[inf], want[inf]), (where, got, want)
    finite = np.isfinite(want)
    if not finite.any():
        return
    scale = max(1.0, float(np.abs(want[finite]).max()))
    tol = GRAD_BOUND * EPS[want.dtype] * scale
    close = (np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64)) <= tol) | (
        ulp_distance(got[finite], want[finite]) <= GRAD_BOUND)
    assert close.all(), (where, got, want)


def assert_same_gradients(got: list[Any], want: list[Any], where: str) -> None:
    assert len(got) == len(want), where
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        at = f"{where}, output {k}"
        if w is None:
            assert g is None, at
            continue
        assert g is not None and g[0] == w[0], (at, "requires_grad", g and g[0], w[0])
        if w[1] is None:
            continue
        for i, (a, b) in enumerate(zip(g[1], w[1], strict=True)):
            assert (a is None) == (b is None), (f"{at}, input {i}: gradient", a, b)
            if b is not None:
                assert_same_gradient(a, b, f"{at}, input {i}")


def compare(fn: Any, *arrays: Any, weight_seed: int = 0) -> None:
    """The gradients of ``fn(torch, *leaves)`` under the layer and under torch agree."""
    args = [np.asarray(a, np.float32) if isinstance(a, list) else a for a in arrays]
    want = gradients(real_torch, fn, args, weight_seed)
    got = gradients(layer, fn, args, weight_seed)
    assert_same_gradients(got, want, getattr(fn, "__name__", "fn"))
    assert any(w is not None and w[0] for w in want), "nothing to compare"


def outcome(fn: Any, module: Any) -> Any:
    """What ``fn(module)`` gives, or the error it raises: (type name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("value", repr(fn(module)))
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))


# ---- the lessons --------------------------------------------------------------------------------


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_lesson_gradients_match_torch_on_the_exercises_inputs(exercise_id: str):
    """Check's cases: the gradient of every float output (times fixed random weights) with
    respect to every float input, the padding's NaN, ±inf and 1e30 included."""
    exercise = EXERCISES[exercise_id]
    fn_torch = exercise_function(exercise_id, real_torch)
    fn_layer = exercise_function(exercise_id, layer)
    seed = zlib.crc32(exercise_id.encode())
    compared = 0
    for case in range(CASES):
        inputs = exercise.inputs(seed, case)
        args = list(inputs.values())
        want = gradients(real_torch, lambda t, *a: fn_torch(*a), args, case)
        got = gradients(layer, lambda t, *a: fn_layer(*a), args, case)
        assert_same_gradients(got, want, f"{exercise_id} case {case}")
        compared += sum(1 for w in want if w is not None and w[0])
    if exercise_id not in NO_GRADIENT:
        assert compared, "no output of the lesson has a gradient"


def _compiled(code: str, name: str, module: Any) -> Any:
    namespace: dict[str, Any] = {"__name__": "variant"}
    with as_torch(module):
        exec(compile(code, "<variant>", "exec"), namespace)
    return namespace[name]


def _gradients_or_error(module: Any, fn: Any, args: list[Any], case: int) -> Any:
    try:
        return gradients(module, lambda t, *a: fn(*a), args, case)
    except Exception as exc:  # a variant may raise: then under both, the same error
        return ("error", type(exc).__name__)


def _check_fails_case(code: str, exercise_id: str, seed: int, case: int, module: Any) -> bool:
    """Whether Check fails ``code`` on one case when its torch is ``module``: its values against
    the reference, its gradient (where the exercise sets GRADIENT) against the answer's."""
    ex = EXERCISES[exercise_id]
    inputs = ex.inputs(seed, case)
    with as_torch(module):
        fn = define(code, ex.function)
        got = _call(fn, inputs, code, None)
        if type(got) is Raised or _differs(_to_numpy(got), _reference_numpy(ex.expected(inputs)),
                                           ex) is not None:
            return True
        if not ex.gradient:
            return False
        theirs = check_gradients(fn, ex, inputs, seed, case)
        return _gradient_differs(theirs, check_gradients(answer_function(ex), ex, inputs, seed,
                                                         case), ex) is not None


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES))
def test_lesson_variants_gradients_match_torch(exercise_id: str):
    """What learners write instead (tests/mutants.py): the traps the page warns about and one
    mechanical change at each place (a fill made a multiply, where made a blend, a detach
    dropped, a comparison moved, min for max…), on a few of Check's cases. Where a variant
    divides rounding noise by a tiny number (an equal group's std, a variance of exactly 0) or
    chooses by a mean over padding's NaN, the layer's last bits and torch's give far-apart
    numbers: there Check must fail the case in one of the two."""
    lesson = LESSONS[exercise_id]
    answer = lesson.exercise(blanked=False)
    variants = [(t.why, t.apply(answer)) for t in lesson.traps]
    variants += [(m.name, m.code) for m in mechanical(lesson)]
    seed = zlib.crc32(exercise_id.encode())
    for why, code in variants:
        fn_torch = _compiled(code, lesson.name, real_torch)
        fn_layer = _compiled(code, lesson.name, layer)
        for case in range(VARIANT_CASES):
            args = list(EXERCISES[exercise_id].inputs(seed, case).values())
            want = _gradients_or_error(real_torch, fn_torch, args, case)
            got = _gradients_or_error(layer, fn_layer, args, case)
            if isinstance(want, tuple) or isinstance(got, tuple):
                assert got == want, (why, case)
                continue
            try:
                assert_same_gradients(got, want, f"{exercise_id}: {why}, case {case}")
            except AssertionError:
                # where the two differ, the variant is a mistake on this case in one arithmetic
                # or the other (rounding noise it divides, a NaN or tie it meets): never code
                # that Check passes under both. Whether the browser's Check fails every trap at
                # every seed is tests/test_mutants.py's, under the layer. A "rounding:" trap is
                # torch's rounding, which the layer does not do (tests/test_mutants.py pins it)
                if not why.startswith("rounding:") and not any(
                        _check_fails_case(code, exercise_id, seed, case, m)
                        for m in (real_torch, layer)):
                    raise


VARIANT_CASES = 12


# lessons whose outputs carry no gradient in torch either (bool outputs, or detached on purpose)
NO_GRADIENT = {"beyond/high_entropy_mask", "beyond/informative_groups",
               "beyond/off_policy_sequence_mask", "beyond/rollout_is_weights",
               "ppo/compute_gae"}


def test_the_lessons_without_gradient_are_those_torch_gives_none():
    """NO_GRADIENT above is what torch says, not a list of skips."""
    for exercise_id in sorted(EXERCISES):
        exercise = EXERCISES[exercise_id]
        fn = exercise_function(exercise_id, real_torch)
        seed = zlib.crc32(exercise_id.encode())
        any_grad = False
        for case in range(6):
            args = list(exercise.inputs(seed, case).values())
            found = gradients(real_torch, lambda t, *a, fn=fn: fn(*a), args)
            any_grad |= any(f is not None and f[0] for f in found)
        assert (not any_grad) == (exercise_id in NO_GRADIENT), exercise_id


# ---- the gradient traps the pages teach ---------------------------------------------------------


def test_where_after_exp_gives_nan_gradients_as_torch_and_fill_before_exp_does_not():
    """importance_ratio's trap: torch.where(mask, exp(log ρ), 1.0) has the right values but
    sends the where's zero through exp(∞) on the padding: 0 × ∞ = NaN."""
    new = np.array([[0.1, -0.2, np.inf], [0.3, np.nan, -np.inf]], np.float32)
    old = np.array([[0.0, 0.1, -np.inf], [0.2, np.nan, np.inf]], np.float32)
    mask = np.array([[1, 1, 0], [1, 0, 0]], np.float32)

    def trap(t, n, o, m):
        return t.where(m == 1, (n - o).exp(), 1.0)

    def answer(t, n, o, m):
        return (n - o).masked_fill(m == 0, 0.0).exp()

    for fn in (trap, answer):
        compare(fn, new, old, mask)
    (_, (g_trap, _, _)), = gradients(layer, trap, [new, old, mask])
    (_, (g_answer, _, _)), = gradients(layer, answer, [new, old, mask])
    assert np.isnan(g_trap[mask == 0]).any() and not np.isnan(g_trap[mask == 1]).any()
    assert not np.isnan(g_answer).any() and (g_answer[mask == 0] == 0).all()


def test_detach_no_grad_and_inference_mode_cut_the_gradient_as_in_torch():
    x = [0.5, -1.0, 2.0]

    def detached_weight(t, a):  # CISPO's weight, GSPO's sg(): a constant factor
        return a.exp().clamp(0.8, 1.2).detach() * a

    def under_no_grad(t, a):
        with t.no_grad():
            w = a * 3
        return w * a

    def under_inference(t, a):
        with t.inference_mode():
            w = a.exp()
        return w + a

    def straight_through(t, a):  # GSPO: sg(s) + x - sg(x) keeps x's gradient only
        return a.sum().detach() + a - a.detach()

    for fn in (detached_weight, under_no_grad, under_inference, straight_through):
        compare(fn, x)
    a = layer.tensor(x, requires_grad=True)
    assert not a.detach().requires_grad and a.detach().grad_fn is None
    with layer.no_grad():
        assert (a * 2).grad_fn is None and not (a * 2).requires_grad
    assert (a * 2).requires_grad


def test_setitem_in_a_loop_writes_history_as_copyslices_like_gae():
    """GAE's answer writes ``advantages[:, t] = gae`` into zeros that do not require grad: the
    zeros take the history (CopySlices), and the gradient reaches every step."""

    def gae(t, rewards, values, mask):
        B, T = rewards.shape
        adv = t.zeros_like(rewards)
        last = t.zeros(B)
        for i in reversed(range(T)):
            nxt = values[:, i + 1] if i + 1 < T else t.zeros(B)
            delta = rewards[:, i] + 0.99 * nxt - values[:, i]
            last = t.where(mask[:, i] == 1, delta + 0.99 * 0.95 * last, last)
            adv[:, i] = last
        return adv.masked_fill(mask == 0, 0.0), (adv + values) * mask

    rng = np.random.default_rng(3)
    r, v = rng.standard_normal((3, 6)).astype(np.float32), rng.standard_normal((3, 6))
    m = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0]], np.float32)
    v = v.astype(np.float32)
    v[m == 0] = np.inf
    compare(gae, r, v, m)
    z = layer.zeros(2)
    z[0] = layer.tensor(1.0, requires_grad=True) * 2
    assert z.requires_grad and z.grad_fn.name() == "torch::autograd::CopySlices"
    assert repr(z).endswith("grad_fn=<CopySlices>)")


def test_in_place_writes_through_views_rewrite_the_base_history_as_torch():
    def view_mul(t, a):
        y = a * 1
        v = y[1:]
        v.mul_(2)
        return y, v

    def slice_iadd(t, a):
        z = t.zeros(2, 4)
        z[:, 1] += a[:2]
        z[0] *= 3
        return z

    def stale_view(t, a):  # a view made before its base was written reads the new history
        z = t.zeros(4)
        v = z[1:3]
        z[1] = a[0] * 2
        return v * 3

    def copy_and_fill(t, a):
        z = t.zeros(2, 4)
        z[1].copy_(a[:4])
        z[0].fill_(a[5])
        return z

    def chain(t, a):
        y = a * 1
        y += 2
        y.mul_(a)
        y.clamp_(-1, 1e31)
        y.masked_fill_(y > 1, 0.5)
        y.sub_(a, alpha=2)
        return y

    def relu_inplace(t, a):
        y = a - 1
        return t.nn.functional.relu(y, inplace=True)

    x = [1.0, 2.0, -0.5, 0.0, 3e30, 2.0, 1.5, -4.0]
    for fn in (view_mul, slice_iadd, stale_view, copy_and_fill, chain, relu_inplace):
        compare(fn, x)


# ---- every op, against torch --------------------------------------------------------------------

NAN, INF = math.nan, math.inf
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -2.0, 3e30, 0.5, 1.0]
OTHER = [1.0, 1.0, 1.0, 0.0, 2.0, -2.0, 3e30, 2.0, 0.5, -1.0]
POSITIVE = [0.5, 1.0, 2.0, 1e-3, 7.0, 0.0, INF, NAN, 3.0, 1.0]
TIES = [1.0, 3.0, 3.0, 2.0, 0.0, 0.0, -1.0, 2.0, 3.0, 1.0]
LOGITS = [1.0, 2.0, 3.0, -1.0, 0.5, 0.5, -INF, 4.0, 0.0, -2.0]

OPS: dict[str, tuple[Any, list[list[float]]]] = {
    # arithmetic, reflected and in place
    "add": (lambda t, a, b: a + b, [SPECIAL, OTHER]),
    "add_number": (lambda t, a: 2.5 + a, [SPECIAL]),
    "add_alpha": (lambda t, a, b: a.add(b, alpha=2), [SPECIAL, OTHER]),
    "sub": (lambda t, a, b: a - b, [SPECIAL, OTHER]),
    "rsub": (lambda t, a: 1 - a, [SPECIAL]),
    "mul": (lambda t, a, b: a * b, [SPECIAL, OTHER]),
    "mul_number": (lambda t, a: a * 0.1, [SPECIAL]),
    "div": (lambda t, a, b: a / b, [SPECIAL, OTHER]),
    "rdiv": (lambda t, a: 2 / a, [SPECIAL]),
    "neg": (lambda t, a: -a, [SPECIAL]),
    "pow_2": (lambda t, a: a ** 2, [SPECIAL]),
    "pow_3": (lambda t, a: a.pow(3), [SPECIAL]),
    "pow_half": (lambda t, a: a ** 0.5, [POSITIVE]),
    "pow_minus_1": (lambda t, a: a ** -1, [SPECIAL]),
    "pow_1_7": (lambda t, a: a ** 1.7, [POSITIVE]),
    "pow_0": (lambda t, a: a ** 0, [SPECIAL]),
    "pow_1": (lambda t, a: a ** 1, [SPECIAL]),
    "pow_tensor": (lambda t, a, b: a ** b, [POSITIVE, OTHER]),
    "pow_base_2": (lambda t, a: 2 ** a, [SPECIAL]),
    "pow_base_0": (lambda t, a: 0 ** a, [SPECIAL]),
    "square": (lambda t, a: a.square(), [SPECIAL]),
    "in_place": (lambda t, a, b: _in_place(a, b), [SPECIAL, OTHER]),
    "remainder": (lambda t, a, b: a % b, [OTHER, POSITIVE]),
    # elementwise functions
    "exp": (lambda t, a: a.exp(), [SPECIAL]),
    "log": (lambda t, a: t.log(a), [POSITIVE]),
    "expm1": (lambda t, a: a.expm1(), [SPECIAL]),
    "log1p": (lambda t, a: a.log1p(), [POSITIVE]),
    "sqrt": (lambda t, a: a.sqrt(), [POSITIVE]),
    "rsqrt": (lambda t, a: a.rsqrt(), [POSITIVE]),
    "abs": (lambda t, a: a.abs(), [SPECIAL]),
    "sigmoid": (lambda t, a: t.sigmoid(a), [SPECIAL]),
    "tanh": (lambda t, a: a.tanh(), [SPECIAL]),
    "relu": (lambda t, a: t.relu(a), [SPECIAL]),
    "reciprocal": (lambda t, a: a.reciprocal(), [SPECIAL]),
    "sign_floor_round": (lambda t, a: a.sign() + a.floor() + a.round() + a.ceil() + a.trunc(),
                         [SPECIAL]),
    "logsigmoid": (lambda t, a: t.nn.functional.logsigmoid(a), [SPECIAL]),
    "softplus": (lambda t, a: t.nn.functional.softplus(a), [SPECIAL]),
    "softplus_beta": (lambda t, a: t.nn.functional.softplus(a * 30, beta=2, threshold=5),
                      [SPECIAL]),
    "functional": (lambda t, a: t.nn.functional.relu(a) + t.nn.functional.sigmoid(a)
                   + t.nn.functional.tanh(a), [SPECIAL]),
    # clamp and the extremes: bounds, ties, NaN
    "clamp": (lambda t, a: a.clamp(0.0, 1.0), [SPECIAL]),
    "clamp_min": (lambda t, a: a.clamp(min=0.5) + a.clamp_min(1.0), [SPECIAL]),
    "clamp_max": (lambda t, a: t.clamp(a, max=1.0) + a.clamp_max(-2.0), [SPECIAL]),
    "clamp_crossed": (lambda t, a: a.clamp(2.0, 1.0), [SPECIAL]),
    "clip": (lambda t, a: t.clip(a, min=-1, max=1), [SPECIAL]),
    "clamp_tensors": (lambda t, a, b: a.clamp(b, b + 1), [SPECIAL, OTHER]),
    "clamp_tensor_min": (lambda t, a, b: a.clamp(min=b), [SPECIAL, OTHER]),
    "clamp_tensor_crossed": (lambda t, a, b: a.clamp(b, b - 1), [SPECIAL, OTHER]),
    "clamp_tensor_max": (lambda t, a, b: t.clamp(a, min=t.zeros(10), max=b) + a.clamp(max=b),
                         [SPECIAL, OTHER]),
    "maximum": (lambda t, a, b: t.maximum(a, b), [SPECIAL, OTHER]),
    "minimum": (lambda t, a, b: t.minimum(a, b), [SPECIAL, OTHER]),
    "max_of_two": (lambda t, a, b: t.max(a, b) + t.min(a, b), [TIES, OTHER]),
    "max": (lambda t, a: a.max(), [TIES]),
    "min": (lambda t, a: t.min(a), [TIES]),
    "max_nan": (lambda t, a: a.max() + a.min(), [SPECIAL]),
    "max_dim": (lambda t, a: a.reshape(2, 5).max(dim=1).values, [TIES]),
    "min_dim_keepdim": (lambda t, a: a.reshape(5, 2).min(0, keepdim=True)[0], [TIES]),
    "max_dim_nan": (lambda t, a: t.max(a.reshape(2, 5), 1)[0], [SPECIAL]),
    "amax_amin": (lambda t, a: a.reshape(2, 5).amax(1) + a.reshape(2, 5).amin(dim=1), [TIES]),
    "amax_all": (lambda t, a: a.amax(), [TIES]),
    # selection and masking
    "where": (lambda t, a, b: t.where(a > b, a, b), [SPECIAL, OTHER]),
    "where_number": (lambda t, a: t.where(a > 0, a, 0.0) + t.where(a < 1, 2.0, a), [SPECIAL]),
    "where_method": (lambda t, a, b: a.where(b > 0, b), [SPECIAL, OTHER]),
    "masked_fill": (lambda t, a: a.masked_fill(a > 0, 0.0), [SPECIAL]),
    "masked_fill_tensor": (lambda t, a, b: a.masked_fill(b > 0, b[0]), [SPECIAL, OTHER]),
    "masked_fill_broadcast": (lambda t, a: a.reshape(2, 5).masked_fill(
        t.tensor([True, False, True, False, False]), -1.0), [SPECIAL]),
    # reductions
    "sum": (lambda t, a: a.sum(), [SPECIAL]),
    "sum_dim": (lambda t, a: a.reshape(2, 5).sum(1) + a.reshape(2, 5).sum(0).sum(), [OTHER]),
    "sum_keepdim": (lambda t, a: a.reshape(2, 5).sum(dim=-1, keepdim=True), [SPECIAL]),
    "sum_dims": (lambda t, a: a.reshape(1, 2, 5).sum((0, 2)), [OTHER]),
    "sum_dtype": (lambda t, a: a.sum(dtype=t.float64), [OTHER]),
    "mean": (lambda t, a: a.mean() + a.reshape(2, 5).mean(1).sum(), [OTHER]),
    "mean_keepdim": (lambda t, a: t.mean(a.reshape(2, 5), 0, keepdim=True), [SPECIAL]),
    "var": (lambda t, a: a.reshape(2, 5).var(1) + a.var(), [TIES]),
    "var_biased": (lambda t, a: a.reshape(2, 5).var(dim=1, unbiased=False, keepdim=True),
                   [TIES]),
    "var_correction": (lambda t, a: a.reshape(5, 2).var(0, correction=0), [TIES]),
    "var_one": (lambda t, a: a.reshape(10, 1).var(1), [TIES]),
    "std": (lambda t, a: a.reshape(2, 5).std(1) + a.std(), [TIES]),
    "std_equal": (lambda t, a: a.reshape(5, 2).std(1), [[1, 1, 2, 3, 4, 4, 0, 0, 5, 6]]),
    "std_nan": (lambda t, a: a.reshape(2, 5).std(1, keepdim=True), [SPECIAL]),
    "logsumexp": (lambda t, a: a.reshape(2, 5).logsumexp(1), [LOGITS]),
    "logsumexp_keepdim": (lambda t, a: t.logsumexp(a.reshape(2, 5), dim=0, keepdim=True),
                          [LOGITS]),
    "logsumexp_minus_inf": (lambda t, a: a.reshape(2, 5).logsumexp(1),
                            [[-INF] * 5 + [1, 2, 3, 4, 5]]),
    "softmax": (lambda t, a: a.reshape(2, 5).softmax(-1), [LOGITS]),
    "softmax_dim0": (lambda t, a: t.softmax(a.reshape(2, 5), dim=0), [LOGITS]),
    "softmax_dtype": (lambda t, a: a.softmax(0, dtype=t.float64), [LOGITS]),
    "log_softmax": (lambda t, a: t.nn.functional.log_softmax(a.reshape(2, 5), dim=1), [LOGITS]),
    "log_softmax_dim0": (lambda t, a: a.reshape(2, 5).log_softmax(0), [LOGITS]),
    "softmax_0d": (lambda t, a: a[0].softmax(0) + a[1].log_softmax(0), [LOGITS]),
    "cumsum": (lambda t, a: a.reshape(2, 5).cumsum(1) + t.cumsum(a.reshape(2, 5), 0), [OTHER]),
    "topk": (lambda t, a: a.topk(3).values + a.topk(3, largest=False)[0],
             [[1.0, 3.0, 3.0, 7.0, -3.0, 0.5]]),
    "topk_dim": (lambda t, a: t.topk(a.reshape(2, 5), 2, dim=1).values, [[1, 5, 2, 4, 3, 0, 9,
                                                                           8, 6, 7]]),
    "quantile": (lambda t, a: a.quantile(0.3) + a.quantile(0.5, interpolation="lower")
                 + a.quantile(0.75, interpolation="midpoint"), [[1, 5, 2, 4, 3, 0, 9, 8, 6, 7]]),
    "quantile_dim": (lambda t, a: t.quantile(a.reshape(2, 5), 0.4, dim=1, keepdim=True)
                     + a.reshape(2, 5).quantile(1.0, dim=0).sum()
                     + a.reshape(2, 5).quantile(0.6, dim=1, interpolation="nearest").sum()
                     + a.reshape(2, 5).quantile(0.6, dim=1, interpolation="higher").sum(),
                     [[1, 5, 2, 4, 3, 0, 9, 8, 6, 7]]),
    "mse_loss": (lambda t, a, b: t.nn.functional.mse_loss(a, b) + t.nn.functional.mse_loss(
        a, b, reduction="none").sum() + t.nn.functional.mse_loss(a, b, reduction="sum"),
                 [TIES, OTHER[:3] + TIES[3:]]),
    # indexing
    "gather": (lambda t, a: a.reshape(2, 5).gather(1, t.tensor([[0, 0, 4], [3, 1, 1]])),
               [SPECIAL]),
    "gather_smaller": (lambda t, a: t.gather(a.reshape(2, 5), 0, t.tensor([[1, 0]])), [OTHER]),
    "index_int": (lambda t, a: a[3] + a[-1], [SPECIAL]),
    "index_slice": (lambda t, a: a.reshape(2, 5)[:, 1:4] * 2, [SPECIAL]),
    "index_step": (lambda t, a: a[::3], [SPECIAL]),
    "index_tensor": (lambda t, a: a[t.tensor([0, 0, 2, 9])], [SPECIAL]),
    "index_bool": (lambda t, a: a[a > 0], [SPECIAL]),
    "index_mixed": (lambda t, a: a.reshape(2, 5)[t.tensor([1, 1]), 1:3], [SPECIAL]),
    "index_none_ellipsis": (lambda t, a: a.reshape(2, 5)[None, ..., 2], [SPECIAL]),
    "index_pairs": (lambda t, a: a.reshape(2, 5)[t.tensor([0, 1, 1]), t.tensor([4, 0, 0])],
                    [SPECIAL]),
    "iterate": (lambda t, a: t.stack([row * i for i, row in enumerate(a.reshape(2, 5))]),
                [SPECIAL]),
    "setitem": (lambda t, a: _setitem(t, a), [SPECIAL]),
    "setitem_into_leafless": (lambda t, a, b: _setitem_plain(t, a, b), [SPECIAL, OTHER]),
    "setitem_through_views": (lambda t, a: _setitem_views(t, a), [SPECIAL]),
    # shapes
    "reshape_view_flatten": (lambda t, a: a.reshape(2, 5).view(5, 2).flatten() * t.arange(10.0),
                             [SPECIAL]),
    "reshape_copy": (lambda t, a: a.reshape(2, 5).T.reshape(10) * t.arange(10.0), [SPECIAL]),
    "view_as_reshape_as": (lambda t, a, b: a.view_as(b) + a.reshape(5, 2).reshape_as(b),
                           [SPECIAL, OTHER]),
    "unsqueeze_squeeze": (lambda t, a: a.unsqueeze(0).unsqueeze(-1).squeeze() * 2
                          + a[None, :, None].squeeze(0).squeeze(1), [SPECIAL]),
    "expand": (lambda t, a: a.reshape(1, 10).expand(3, 10) * t.arange(3.0)[:, None], [SPECIAL]),
    "expand_as": (lambda t, a, b: a[:1].expand_as(b) * b, [SPECIAL, OTHER]),
    "transpose_permute": (lambda t, a: a.reshape(2, 5).transpose(0, 1) * t.arange(2.0)
                          + a.reshape(1, 2, 5).permute(2, 0, 1)[:, 0, :] * t.arange(2.0),
                          [SPECIAL]),
    "t_T_mT": (lambda t, a: a.reshape(2, 5).t() + a.reshape(2, 5).T * 2
               + a.reshape(2, 5).mT * 3, [SPECIAL]),
    "flip_repeat": (lambda t, a: a.flip(0) * t.arange(10.0)
                    + a.reshape(2, 5).repeat(2, 2).sum(0) + a.repeat(3).reshape(3, 10)[1:].sum(0),
                    [SPECIAL]),
    "cat": (lambda t, a, b: t.cat([a, b * 2, t.tensor([])]) * t.arange(20.0), [SPECIAL, OTHER]),
    "cat_dim": (lambda t, a, b: t.cat([a.reshape(2, 5), b.reshape(2, 5)], dim=1), [SPECIAL,
                                                                                   OTHER]),
    "stack": (lambda t, a, b: t.stack([a, b], dim=1) * t.tensor([1.0, -3.0]), [SPECIAL, OTHER]),
    "casts": (lambda t, a: a.double() * 0.1 + a.to(t.float64).float().double()
              + a.type_as(t.zeros(1, dtype=t.float64)), [SPECIAL]),
    "clone_contiguous": (lambda t, a: a.clone() * 2 + a.reshape(2, 5).T.contiguous().reshape(10),
                         [SPECIAL]),
    "integer_results": (lambda t, a: (a > 0).float() * a + a.long() + a.argmax(), [OTHER]),
}


def _in_place(a: Any, b: Any) -> Any:
    y = a * 1
    y += b
    y -= 0.5
    y *= b
    y /= 2
    y.add_(b, alpha=3)
    y.div_(4)
    y.clamp_(min=-1e31)
    return y


def _setitem(t: Any, a: Any) -> Any:
    y = a * 1
    y[0] = 5.0
    y[t.tensor([1, 1])] = a[2] * 3
    y[y > 1e29] = a[3]
    y[4:6] = a[8:10] * 2
    return y


def _setitem_views(t: Any, a: Any) -> Any:
    z = t.zeros(2, 5)
    z[0][1:3] = a[:2]
    z[1][t.tensor([0, 0, 4])] = a[5] * 2
    z.view(10)[7] = a[9]
    return z * t.arange(10.0).reshape(2, 5)


def _setitem_plain(t: Any, a: Any, b: Any) -> Any:
    z = t.zeros(2, 5)
    z[0] = a[:5]
    z[1, t.tensor([0, 0, 3])] = b[:3]
    z[:, 2] = b[9]
    return z


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradient_matches_torch(name: str):
    fn, inputs = OPS[name]
    compare(fn, *inputs)


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradient_matches_torch_with_zero_nan_and_inf_upstream(name: str):
    """The output's gradient itself holds 0, NaN and ±inf: where and masked_fill stop a NaN
    they do not pass, a multiply lets it through, as in torch."""
    fn, inputs = OPS[name]

    def weighted(t, *xs):
        out = fn(t, *xs)
        shape = tuple(out.shape)
        w = np.resize(np.array([0.0, NAN, INF, -INF, 1.0], np.float32), shape).astype(
            str(out.dtype).replace("torch.", ""))
        return out * t.tensor(w)

    compare(weighted, *inputs)


@pytest.fixture(scope="module")
def frozen_heap():
    """What this module's process holds once (torch, hypothesis, the lessons) set aside from the
    collector (`gc.freeze`): each `gc.collect()` below then looks at the test's own objects only
    (~0.1 s a collection less, twice per operation)."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.usefixtures("frozen_heap")
def test_op_makes_no_node_for_tensors_without_grad(name: str):
    """A tensor that does not require grad costs nothing: no node, no leaf counted."""
    fn, inputs = OPS[name]
    gc.collect()
    leaves = layer.graph.MODE.leaves
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(layer, *[layer.tensor(np.asarray(a, np.float32)) for a in inputs])
        assert out._node is None and not out.requires_grad
        x = [layer.tensor(np.asarray(a, np.float32), requires_grad=True) for a in inputs]
        with layer.no_grad():
            assert fn(layer, *x)._node is None
    assert layer.graph.MODE.leaves == leaves + len(x)
    del x
    gc.collect()
    assert layer.graph.MODE.leaves == leaves  # no leaf left: operations check nothing again


# the nodes named otherwise than torch's (their gradients are compared like any other)
QUANTILE = "torch's quantile is a composite (sort, gather, lerp): QuantileBackward0 here"
MSE = "the layer's mse_loss is (x − y)² and a reduction: no MseLossBackward0"


def _last_name(module: Any, fn: Any, inputs: list[Any]) -> str:
    leaves = [module.tensor(np.asarray(a, np.float32), requires_grad=True) for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(module, *leaves).grad_fn.name()


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_names_its_node_as_torch(name: str):
    """grad_fn's name (``grad_fn=<ExpBackward0>`` when printed) is torch's."""
    fn, inputs = OPS[name]
    assert _last_name(layer, fn, inputs) == _last_name(real_torch, fn, inputs)


def test_the_nodes_named_otherwise_than_torch_are_quantile_and_mse_loss():
    x = layer.tensor([1.0, 3.0, 2.0], requires_grad=True)
    assert x.quantile(0.5).grad_fn.name() == "QuantileBackward0", QUANTILE
    assert real_torch.tensor([1.0], requires_grad=True).quantile(0.5).grad_fn.name() != (
        "QuantileBackward0")
    assert layer.nn.functional.mse_loss(x, x * 2).grad_fn.name() == "MeanBackward0", MSE


def test_op_table_covers_the_differentiable_ops_the_brief_lists():
    needed = ("add sub mul div neg pow exp log expm1 log1p sqrt rsqrt abs sigmoid tanh relu square "
              "reciprocal logsigmoid softplus clamp clamp_min clamp_max maximum minimum max min "
              "where masked_fill sum mean var std logsumexp log_softmax softmax gather index "
              "setitem reshape view flatten unsqueeze squeeze expand expand_as transpose permute "
              "t_T cat stack casts cumsum topk quantile").split()
    names = " ".join(OPS)
    assert [n for n in needed if n not in names] == []


# ---- the API: leaves, backward, grad, modes ----------------------------------------------------


def test_backward_accumulates_into_grad_and_retain_graph_allows_a_second_pass():
    def steps(t):
        x = t.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        kept = x.grad
        y.backward()
        assert x.grad is kept  # added in place, as torch's AccumulateGrad
        z = x * 2
        z.backward(t.tensor([1.0, 0.0, -1.0]))
        out = (first, x.grad.clone())
        x.grad.zero_()
        x.grad = None
        (x * x).sum().backward()
        return (*out, x.grad, x.is_leaf, y.is_leaf, x.grad_fn)

    assert outcome(steps, layer) == outcome(steps, real_torch)


def test_autograd_grad_returns_a_tuple_and_leaves_grad_alone():
    def steps(t):
        x = t.tensor([1.0, -2.0], requires_grad=True)
        w = t.tensor(0.5, requires_grad=True)
        y = x * w
        g = t.autograd.grad(y.sum(), [x, w], retain_graph=True)
        h = t.autograd.grad(y, x, grad_outputs=t.tensor([1.0, 3.0]), retain_graph=True)
        k = t.autograd.grad(y.sum(), y)  # with respect to a non-leaf
        unused = t.tensor([1.0], requires_grad=True)
        u = t.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
        m = t.autograd.grad((x * 2).sum(), [unused], allow_unused=True, materialize_grads=True)
        return g, h, k, u, m, x.grad

    assert outcome(steps, layer) == outcome(steps, real_torch)


def test_retain_grad_keeps_a_non_leaf_gradient():
    def steps(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        (y * y).sum().backward()
        return y.grad, x.grad, y.retains_grad

    assert outcome(steps, layer) == outcome(steps, real_torch)


def test_backward_with_inputs_fills_only_those():
    def steps(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        w = t.tensor([3.0, 4.0], requires_grad=True)
        (x * w).sum().backward(inputs=[w])
        return x.grad, w.grad

    assert outcome(steps, layer) == outcome(steps, real_torch)


def test_grad_modes_are_context_managers_and_decorators():
    def steps(t):
        x = t.tensor([1.0], requires_grad=True)
        seen = []

        @t.no_grad()
        def a():
            return (x * 2).requires_grad

        @t.no_grad
        def b():
            return (x * 2).requires_grad

        @t.inference_mode()
        def c():
            return (x * 2).requires_grad, t.is_inference_mode_enabled()

        seen += [a(), b(), c(), t.is_grad_enabled()]
        with t.no_grad():
            with t.enable_grad():
                seen.append((x * 2).requires_grad)
            seen.append((x * 2).requires_grad)
        t.set_grad_enabled(False)
        seen.append((x * 2).requires_grad)
        t.set_grad_enabled(True)
        with t.set_grad_enabled(False):
            seen.append(t.is_grad_enabled())
        seen.append(t.is_grad_enabled())

        @t.set_grad_enabled(False)
        def d():
            return t.is_grad_enabled()

        seen += [d(), t.is_grad_enabled()]
        with t.inference_mode(False):
            seen.append((x * 2).requires_grad)
        with t.autograd.no_grad():
            seen.append(t.autograd.grad is not None and (x * 2).requires_grad)
        return seen

    assert outcome(steps, layer) == outcome(steps, real_torch)


def test_requires_grad_flags_and_factories_as_torch():
    calls = [
        lambda t: t.tensor([1.0, 2.0], requires_grad=True),
        lambda t: t.zeros(2, requires_grad=True),
        lambda t: t.ones(2, dtype=t.float64, requires_grad=True),
        lambda t: t.full((2,), 0.5, requires_grad=True),
        lambda t: t.zeros_like(t.ones(2), requires_grad=True),
        lambda t: t.arange(3.0, requires_grad=True),
        lambda t: t.tensor([1.0]).new_zeros(2, requires_grad=True),
        lambda t: t.tensor([1.0, 2.0]).requires_grad_(),
        lambda t: t.tensor([1.0, 2.0]).requires_grad_().requires_grad_(False),
        lambda t: (t.tensor([1.0], requires_grad=True) * 2).requires_grad_(),
        lambda t: t.tensor([1, 2], requires_grad=True),
        lambda t: t.tensor([1, 2]).requires_grad_(),
        lambda t: (t.tensor([1.0], requires_grad=True) * 2).requires_grad_(False),
        lambda t: setattr(t.tensor([1.0], requires_grad=True) * 2, "requires_grad", False),
        lambda t: t.tensor([1.0]).requires_grad,
        lambda t: (t.tensor([1.0], requires_grad=True) * 2).is_leaf,
        lambda t: (t.tensor([1.0], requires_grad=True) > 0).requires_grad,
        lambda t: (t.tensor([1.0], requires_grad=True)).long().requires_grad,
        lambda t: t.tensor(t.tensor([1.0], requires_grad=True)).requires_grad,
        lambda t: t.tensor([1.0], requires_grad=True).detach_().requires_grad,
    ]
    for i, call in enumerate(calls):
        assert outcome(call, layer) == outcome(call, real_torch), i


def test_printing_shows_grad_fn_or_requires_grad_as_torch():
    calls = [
        lambda t: t.tensor([1.0, 2.0], requires_grad=True),
        lambda t: t.tensor(1.5, requires_grad=True) * 2,
        lambda t: t.tensor([[1.0, 2.0]], dtype=t.float64, requires_grad=True).exp(),
        lambda t: t.tensor([1.0, 2.0], requires_grad=True).sum(),
        lambda t: t.tensor([1.0, 2.0], requires_grad=True)[0],
        lambda t: t.tensor([1.0, 2.0], requires_grad=True).detach(),
        lambda t: f"{t.tensor(1.5, requires_grad=True) * 2:.3f}",
        lambda t: str(t.tensor([1.0], requires_grad=True).mean()),
    ]
    for i, call in enumerate(calls):
        assert outcome(call, layer) == outcome(call, real_torch), i


# ---- the errors a learner can meet, worded as torch words them ----------------------------------


def _twice(t: Any) -> None:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def _modified_result(t: Any) -> None:
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y[0] = 0.0  # exp saved its result
    y.sum().backward()


def _modified_input(t: Any) -> None:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    w = t.tensor([1.0, 2.0])
    y = x * w  # mul saved w
    w += 1
    y.sum().backward()


def _mul_by_itself_in_place(t: Any) -> None:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(y)
    y.sum().backward()


def _modified_twice(t: Any) -> None:
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = x * 1
    y = z.log()
    z[0] = 1.0
    z[1] = 2.0
    y.sum().backward()


ERRORS = {
    "backward of a non-scalar": lambda t: (t.tensor([1.0, 2.0], requires_grad=True) * 2)
    .backward(),
    "backward without grad": lambda t: t.tensor([1.0]).sum().backward(),
    "grad of an output without grad": lambda t: t.autograd.grad(t.tensor(1.0),
                                                                [t.tensor(1.0)]),
    "grad of an input without grad": lambda t: t.autograd.grad(
        (t.tensor([1.0], requires_grad=True) * 2).sum(), [t.tensor([1.0])]),
    "grad of an unused input": lambda t: t.autograd.grad(
        (t.tensor([1.0], requires_grad=True) * 2).sum(),
        [t.tensor([1.0], requires_grad=True)]),
    "gradient of the wrong shape": lambda t: (t.tensor([1.0, 2.0], requires_grad=True) * 2)
    .backward(t.ones(3)),
    "in place on a leaf": lambda t: t.tensor([1.0], requires_grad=True).add_(1),
    "iadd on a leaf": lambda t: t.tensor([1.0], requires_grad=True).__iadd__(1),
    "setitem on a leaf": lambda t: t.tensor([1.0, 2.0], requires_grad=True).__setitem__(0, 1.0),
    "setitem with a mask on a leaf": lambda t: (lambda x: x.__setitem__(x > 1, 0.0))(
        t.tensor([1.0, 2.0], requires_grad=True)),
    "in place on a view of a leaf": lambda t: t.tensor([1.0, 2.0], requires_grad=True)[:1]
    .mul_(2),
    "in place on a leaf under no_grad is allowed": lambda t: _no_grad_update(t),
    "backward twice": _twice,
    "a saved result written in place": _modified_result,
    "a saved input written in place": _modified_input,
    "mul_ by itself": _mul_by_itself_in_place,
    "a saved tensor written twice": _modified_twice,
    "floor division's gradient": lambda t: (t.tensor([3.0], requires_grad=True) // 2).sum()
    .backward(),
    "numpy of a tensor that requires grad": lambda t: t.tensor([1.0], requires_grad=True)
    .numpy(),
    "np.asarray of it": lambda t: np.asarray(t.tensor([1.0], requires_grad=True)),
    "grad of the wrong size": lambda t: setattr(t.tensor([1.0, 2.0], requires_grad=True), "grad",
                                                t.ones(3)),
    "detach_ on a view": lambda t: (t.tensor([1.0, 2.0], requires_grad=True) * 2)[:1].detach_(),
    "retain_grad without grad": lambda t: t.tensor([1.0]).retain_grad(),
    "int requires grad": lambda t: t.tensor([1, 2], requires_grad=True),
    "requires_grad_ of an int": lambda t: t.arange(3).requires_grad_(),
    "requires_grad off on a non-leaf": lambda t: (t.tensor([1.0], requires_grad=True) * 2)
    .requires_grad_(False),
}


def _no_grad_update(t: Any) -> Any:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    with t.no_grad():
        x -= 0.1 * x.grad
    return x


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_worded_as_torch(name: str):
    got, want = outcome(ERRORS[name], layer), outcome(ERRORS[name], real_torch)
    assert got == want


def test_non_leaf_grad_warns_and_gives_none_as_torch():
    for module in (layer, real_torch):
        y = module.tensor([1.0], requires_grad=True) * 2
        with pytest.warns(UserWarning, match=re.escape("is not a leaf Tensor is being accessed")):
            assert y.grad is None


def test_double_backward_is_unsupported_with_a_clear_error():
    x = layer.tensor([1.0], requires_grad=True)
    with pytest.raises(layer.Unsupported, match="create_graph=True"):
        layer.autograd.grad((x * x).sum(), x, create_graph=True)


def test_torch_autograd_is_importable_as_a_module_when_installed():
    with as_torch(layer):
        import torch.autograd as autograd
        from torch.autograd import grad

        assert autograd is layer.autograd and grad is layer.autograd.grad
