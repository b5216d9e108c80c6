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

import numpy as np

from .exercises import Exercise, get
from .runner import CELL, format_exception, format_syntax_error, parts_from

CASES = 36  # random inputs per check


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


def _as_shown(x: object) -> object:
    """An input as the failure report shows it: numbers as arrays, anything else (a mode's name,
    None) as itself."""
    return np.asarray(x) if isinstance(x, np.ndarray | bool | int | float) else x


def _show(x: object) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_show(v) for v in x) + ")"
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return f"{float(x):.6g}"
        return np.array2string(x, precision=4, suppress_small=True, separator=", ")
    return repr(x)


def _differs(got: object, want: object, ex: Exercise) -> str | None:
    """Why ``got`` is not ``want`` (shape, structure or values), or None if they agree."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            n = len(got) if isinstance(got, tuple) else 1
            return f"returned {n} value(s), expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            why = _differs(g, w, ex)
            if why:
                return f"output {i + 1}: {why}"
        return None
    assert isinstance(got, np.ndarray) and isinstance(want, np.ndarray)
    if got.shape != want.shape and not (got.size == 1 and want.size == 1):
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if not np.allclose(got.reshape(want.shape), want, rtol=ex.rtol, atol=ex.atol,
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


def learner_outputs(exercise: str | Exercise, code: str, parts: list[dict] | None = None,
                    cases: int = CASES, seed: int = 0) -> tuple[list, str | None]:
    """Phase 1 (the learner's code runs): define their function and call it on each case.

    Returns ``(outputs, error)``: one entry per case, what the call returned or a
    :class:`Raised` message; or ``([], error)`` when the code does not even define the
    function.
    """
    import torch  # the real torch under CPython, the layer in the browser

    ex = get(exercise)
    fn, error = define(code, ex.function, parts)
    if error:
        return [], error
    outputs: list = []
    for case in range(cases):
        inputs = ex.inputs(seed, case)
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


def verdict(exercise: str | Exercise, phase1: tuple[list, str | None], cases: int = CASES,
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
    ex = get(exercise)
    for case in range(cases):
        inputs = ex.inputs(seed, case)
        want = _reference_numpy(ex.expected(inputs))
        raw = outputs[case] if type(outputs) is list and case < len(outputs) else None
        got: object = None
        if type(raw) is Raised:
            reason = str.__str__(raw)
        else:
            try:
                got = _to_numpy(raw)
                reason = _differs(got, want, ex)
            except TypeError as err:
                got, reason = None, f"TypeError: {err}"
        if reason is None:
            result["passed"] += 1
        elif len(result["failures"]) < 3:
            result["failures"].append({
                "case": case + 1,
                "inputs": {k: _show(_as_shown(v)) for k, v in inputs.items()},
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


def check(exercise: str | Exercise, code: str, parts: list[dict] | None = None,
          cases: int = CASES, seed: int = 0) -> dict:
    """Phases 1 and 3 in one call (no interpreter to put back in between): CPython, tests."""
    return verdict(exercise, learner_outputs(exercise, code, parts, cases, seed), cases, seed)
