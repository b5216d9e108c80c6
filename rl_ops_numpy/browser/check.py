"""Check a learner's function against the NumPy reference on many random inputs.

The worker's **Check** button (and the drill's "check by meaning") checks in two phases, so that
nothing the learner's code does can take part in the verdict:

1. :func:`learner_outputs` runs the learner's code, then calls their function on seeded random
   inputs of every mask layout and a few sizes (as tensors of whatever ``torch`` is: the real one
   under CPython, the NumPy layer in the browser). Whatever it returns or raises is kept as is.
2. The worker puts the interpreter back as it was (``sandbox.restore``): a patched
   ``np.allclose``, a rebound checker function, a changed ``Tensor`` are gone.
3. :func:`verdict` draws the same inputs again, computes the references, reads the learner's
   outputs strictly (only tensors, arrays, numbers and tuples of them; nothing of theirs runs)
   and compares. It returns which cases differ, with their inputs, as plain data the page
   formats in the reader's language.

:func:`check` does 1 and 3 in one call, for CPython and the tests.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import rl_ops_numpy as ops

from .runner import CELL, format_exception, format_syntax_error, parts_from

Inputs = dict[str, object]
CASES = 36  # random inputs per check


def _mask(rng: np.random.Generator, B: int, T: int, case: int) -> np.ndarray:
    """Full, right-padded, left-padded, prompt-in-front, holes, an empty row: by case number."""
    layout = case % 6
    m = np.zeros((B, T))
    for b in range(B):
        n = int(rng.integers(1, T + 1))
        if layout == 0:
            m[b] = 1
        elif layout == 1:
            m[b, :n] = 1
        elif layout == 2:
            m[b, T - n :] = 1
        elif layout == 3:
            s = int(rng.integers(0, T - n + 1))
            m[b, s : s + n] = 1
        elif layout == 4:
            m[b] = rng.random(T) < 0.6
        else:
            m[b, :n] = 1 if b % 2 == 0 else 0
    return m


def _size(rng: np.random.Generator, case: int) -> tuple[int, int]:
    return (1, 1) if case == 0 else (int(rng.integers(1, 5)), int(rng.integers(1, 9)))


def _normal(rng: np.random.Generator, shape, scale: float = 0.5) -> np.ndarray:
    return rng.normal(0.0, scale, shape).astype(np.float32)


def _ratio_inputs(rng, case):
    B, T = _size(rng, case)
    return {"new_logprobs": _normal(rng, (B, T)), "old_logprobs": _normal(rng, (B, T)),
            "mask": _mask(rng, B, T, case).astype(np.float32)}


def _gae_inputs(rng, case):
    B, T = _size(rng, case)
    return {"rewards": _normal(rng, (B, T), 1.0), "values": _normal(rng, (B, T), 1.0),
            "mask": _mask(rng, B, T, case).astype(np.float32),
            "gamma": float(rng.choice([1.0, 0.99, 0.9])),
            "lam": float(rng.choice([0.95, 0.8, 0.0]))}


def _policy_inputs(rng, case):
    B, T = _size(rng, case)
    return {"new_logprobs": _normal(rng, (B, T)), "old_logprobs": _normal(rng, (B, T)),
            "advantages": _normal(rng, (B, T), 1.0),
            "mask": _mask(rng, B, T, case).astype(np.float32),
            "clip_range": float(rng.choice([0.2, 0.1, 0.3]))}


def _value_inputs(rng, case):
    B, T = _size(rng, case)
    return {"new_values": _normal(rng, (B, T)), "old_values": _normal(rng, (B, T)),
            "returns": _normal(rng, (B, T)), "mask": _mask(rng, B, T, case).astype(np.float32),
            "clip_range_value": float(rng.choice([0.2, 0.1, 0.5]))}


def _kl_inputs(rng, case):
    B, T = _size(rng, case)
    q = _normal(rng, (B, T)) - 1.0
    return {"p_logprobs": (q + _normal(rng, (B, T), 0.3)).astype(np.float32), "q_logprobs": q}


def _rewards_inputs(rng, case):
    B, T = _size(rng, case)
    lp = _normal(rng, (B, T)) - 1.0
    return {"rm_score": _normal(rng, (B,), 1.0), "logprobs": lp,
            "ref_logprobs": (lp + _normal(rng, (B, T), 0.1)).astype(np.float32),
            "response_mask": _mask(rng, B, T, case).astype(np.float32),
            "kl_coef": float(rng.choice([0.05, 0.1]))}


def _whiten_inputs(rng, case):
    B, T = _size(rng, case)
    T = max(T, 2)  # two response tokens at least: the variance needs them
    m = _mask(rng, B, T, case).astype(np.float32)
    if m.sum() < 2:
        m.reshape(-1)[:2] = 1
    return {"values": _normal(rng, (B, T), 2.0), "mask": m,
            "shift_mean": bool(rng.random() < 0.7)}


def _objective_inputs(rng, case):
    n = 1 if case == 0 else int(rng.integers(1, 12))
    return {"ratio": np.exp(_normal(rng, (n,), 0.4)).astype(np.float32),
            "advantage": _normal(rng, (n,), 1.0), "clip_epsilon": float(rng.choice([0.2, 0.1]))}


def _dpo_inputs(rng, case):
    n = 1 if case == 0 else int(rng.integers(1, 8))
    names = ("log_p_w", "log_p_l", "ref_log_p_w", "ref_log_p_l")
    inputs: Inputs = {k: (_normal(rng, (n,), 5.0) - 20.0).astype(np.float32) for k in names}
    inputs["beta"] = float(rng.choice([0.1, 0.5]))
    return inputs


def _episode_inputs(rng, case):
    n = 1 if case == 0 else int(rng.integers(2, 12))
    return {"rewards": _normal(rng, (n,), 1.0), "values": _normal(rng, (n,), 1.0),
            "next_value": float(rng.normal()), "gamma": float(rng.choice([0.99, 1.0, 0.9])),
            "gae_lambda": float(rng.choice([0.95, 0.0, 1.0]))}


@dataclass(frozen=True)
class Spec:
    """How to test one exercise: random inputs (a dict in the function's parameter order) and
    the reference that gives the right answer."""

    make_inputs: Callable[[np.random.Generator, int], Inputs]
    reference: Callable[..., object]
    rtol: float = 1e-4
    atol: float = 1e-5


SPECS: dict[str, Spec] = {
    "ppo/importance_ratio": Spec(_ratio_inputs, ops.importance_ratio),
    "ppo/compute_gae": Spec(_gae_inputs, ops.compute_gae),
    "ppo/policy_surrogate_loss": Spec(_policy_inputs, ops.policy_surrogate_loss),
    "ppo/value_clipped_loss": Spec(_value_inputs, ops.value_clipped_loss),
    "ppo/kl_estimators": Spec(_kl_inputs, ops.kl_estimators),
    "ppo/shape_token_rewards": Spec(_rewards_inputs, ops.shape_token_rewards),
    "ppo/masked_whiten": Spec(_whiten_inputs, ops.masked_whiten),
    "s21/ppo_clipped_objective": Spec(_objective_inputs, ops.ppo_clipped_objective),
    "s21/dpo_loss": Spec(_dpo_inputs, ops.dpo_loss),
    "s21/compute_gae": Spec(
        _episode_inputs,
        lambda rewards, values, next_value, gamma, gae_lambda: ops.compute_gae_episode(
            rewards, values, next_value=next_value, gamma=gamma, gae_lambda=gae_lambda
        ),
    ),
}


class Raised(str):
    """What a call of the learner's function raised, already formatted in their terms."""


# numbers a learner's function may return, by exact type (a subclass could run its own code)
_NUMBERS = (float, int, bool, np.float32, np.float64, np.int32, np.int64, np.bool_)


def _tensor_classes() -> list[type]:
    """The tensor classes whose outputs are read: the layer's, and real torch's under CPython."""
    from .torch_layer import Tensor

    real = getattr(sys.modules.get("torch"), "Tensor", None)
    return [Tensor] if real is None or real is Tensor else [Tensor, real]


def _to_numpy(x: object) -> object:
    """A learner's output as NumPy values, read strictly: a tensor of exactly the layer's (or
    real torch's) class, an array, a number, or a tuple or list of those, each of exactly that
    type, so no method of the learner's runs here; anything else raises TypeError."""
    kind = type(x)
    if kind is tuple or kind is list:
        return tuple(_to_numpy(v) for v in x)
    layer, *real = _tensor_classes()
    if kind is layer:
        data = x._data
    elif real and kind is real[0]:
        data = x.detach().cpu().numpy()
    elif kind is np.ndarray or kind in _NUMBERS:
        data = x
    else:
        raise TypeError(f"returned a {kind.__name__}, expected tensors")
    if type(data) is not np.ndarray and type(data) not in _NUMBERS:
        raise TypeError(f"returned a tensor holding a {type(data).__name__}")
    return np.array(data, dtype=np.float64)


def _show(x: object) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_show(v) for v in x) + ")"
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return f"{float(x):.6g}"
        return np.array2string(x, precision=4, suppress_small=True, separator=", ")
    return repr(x)


def _differs(got: object, want: object, spec: Spec) -> str | None:
    """Why ``got`` is not ``want`` (shape, structure or values), or None if they agree."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            n = len(got) if isinstance(got, tuple) else 1
            return f"returned {n} value(s), expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            why = _differs(g, w, spec)
            if why:
                return f"output {i + 1}: {why}"
        return None
    assert isinstance(got, np.ndarray) and isinstance(want, np.ndarray)
    if got.shape != want.shape and not (got.size == 1 and want.size == 1):
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if not np.allclose(got.reshape(want.shape), want, rtol=spec.rtol, atol=spec.atol,
                       equal_nan=True):
        return "values differ"
    return None


def define(code: str, name: str, parts: list[dict] | None = None) -> tuple[object, str | None]:
    """Run the learner's code silently and return ``(function, error)``."""
    cell_parts = parts_from(parts, code)
    try:
        compiled = compile(code, CELL, "exec")
    except SyntaxError as err:
        return None, format_syntax_error(err, code, cell_parts)
    namespace: dict = {"__name__": "__learner__"}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compiled, namespace)
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        return None, format_exception(err, code, cell_parts)
    fn = namespace.get(name)
    if not callable(fn):
        return None, f"NameError: the code does not define a function named {name!r}\n"
    return fn, None


def _case_inputs(spec: Spec, seed: int, case: int) -> Inputs:
    return spec.make_inputs(np.random.default_rng([seed, case]), case)


def learner_outputs(stem: str, code: str, name: str, parts: list[dict] | None = None,
                    cases: int = CASES, seed: int = 0) -> tuple[list, str | None]:
    """Phase 1 (the learner's code runs): define their function and call it on each case.

    Returns ``(outputs, error)``: one entry per case, what the call returned or a
    :class:`Raised` message; or ``([], error)`` when the code does not even define the
    function.
    """
    import torch  # the real torch under CPython, the layer in the browser

    spec = SPECS[stem]
    fn, error = define(code, name, parts)
    if error:
        return [], error
    outputs: list = []
    for case in range(cases):
        inputs = _case_inputs(spec, seed, case)
        as_tensors = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in inputs.values()]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                # positional, in the lesson's parameter order: learners may rename parameters
                outputs.append(fn(*as_tensors))
        except KeyboardInterrupt:
            raise
        except BaseException as err:
            outputs.append(Raised(format_exception(err, code, parts_from(parts, code)).strip()))
    return outputs, None


def verdict(stem: str, phase1: tuple[list, str | None], cases: int = CASES,
            seed: int = 0) -> dict:
    """Phase 3 (after the interpreter was put back): the references, compared with the
    learner's outputs of phase 1.

    Returns ``{"total", "passed", "failures": [{"case", "inputs", "expected", "got",
    "reason"}], "error"}``; at most three failures are described.
    """
    outputs, error = phase1
    error = error if type(error) is str else None if error is None else "the code could not run"
    result: dict = {"total": cases, "passed": 0, "failures": [], "error": error}
    if error:
        return result
    spec = SPECS[stem]
    for case in range(cases):
        inputs = _case_inputs(spec, seed, case)
        want = _reference_numpy(spec.reference(**inputs))
        raw = outputs[case] if type(outputs) is list and case < len(outputs) else None
        got: object = None
        if type(raw) is Raised:
            reason = str.__str__(raw)
        else:
            try:
                got = _to_numpy(raw)
                reason = _differs(got, want, spec)
            except TypeError as err:
                got, reason = None, f"TypeError: {err}"
        if reason is None:
            result["passed"] += 1
        elif len(result["failures"]) < 3:
            result["failures"].append({
                "case": case + 1,
                "inputs": {k: _show(np.asarray(v)) for k, v in inputs.items()},
                "expected": _show(want),
                "got": "" if got is None else _show(got),
                "reason": reason,
            })
    return result


def _reference_numpy(x: object) -> object:
    """The reference's result (NumPy values, numbers or tuples of them) in float64."""
    if isinstance(x, tuple):
        return tuple(_reference_numpy(v) for v in x)
    return np.asarray(x, dtype=np.float64)


def check(stem: str, code: str, name: str, parts: list[dict] | None = None,
          cases: int = CASES, seed: int = 0) -> dict:
    """Phases 1 and 3 in one call (no interpreter to put back in between): CPython, tests."""
    return verdict(stem, learner_outputs(stem, code, name, parts, cases, seed), cases, seed)
