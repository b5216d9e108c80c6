"""Check a learner's function against the NumPy reference on many random inputs.

The worker's **Check** button (and the drill's "check by meaning") checks in two phases, in two
interpreters, so that nothing the learner's code does can take part in the verdict:

1. :func:`learner_outputs` runs the learner's code, then calls their function on seeded random
   inputs of every mask layout and a few sizes (as tensors of whatever ``torch`` is: the real one
   under CPython, the NumPy layer in the browser). Whatever it returns or raises is kept as is,
   and handed over as plain data (:func:`plain_phase1`: numbers and shapes, or a traceback).
   This runs in the learner's worker; nothing it produces is trusted.
2. :func:`judge` runs in a second worker, the judge, where no learner code ever runs: it reads
   the plain data strictly, draws the same inputs from the same seed, computes the references
   and compares (:func:`verdict`). It returns how many cases agree and one that does not, with
   its inputs and the seed, as plain data the page formats in the reader's language. The page
   draws a fresh seed for every Check, so no table of one seed's answers passes.

**Gradients.** Where the page teaches the gradient (the check section's ``GRADIENT``: the inputs
that carry one in training), a right value is not enough: a missing ``.detach()`` or a
``torch.where`` after ``exp`` (NaN gradients on padding) gives the right numbers. Phase 1 also
takes the gradient of Σ u·output (u: fixed random weights drawn from the seed) with respect to
those inputs, by autograd (real torch's, or the browser layer's), and the judge compares it with
the same gradient of the lesson's own answer, which it runs itself (site code, never the
learner's), on every case whose values agree.

**The smallest failing case.** Phase 1 also shrinks the first failing case (fewer rows, shorter
sequences, a mask with no padding, rounder values, for as long as the learner's function still
disagrees with the reference; :func:`shrink`). Phase 1 runs with the learner's code loaded, so
phase 2 trusts nothing of it: it recomputes the reference on the shrunk inputs and shows them
only if the learner's output there really differs; otherwise it shows the case as drawn. The
count of passing cases never depends on the shrinking.

:func:`check` does both in one call (no plain data in between), for CPython and the tests.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time

import numpy as np

from .exercises import MASKS, Exercise, get, padding
from .runner import CELL, format_exception, format_syntax_error, parts_from, slip

CASES = 36  # random inputs per check
SHRINK_CALLS = 80  # at most this many calls of the learner's function while shrinking
SHRINK_SECONDS = 1.0  # and at most this long
# an output with more values than this many times the largest input (and at least LARGE_MIN) is
# refused in the learner's worker, by its shape: no operator here makes more values than it reads
LARGE_FACTOR, LARGE_MIN = 64, 4096


class Raised(str):
    """What a call of the learner's function raised, already formatted in their terms (Python's
    traceback, no sentence of the site's); ``slip``: its common slip (:func:`runner.slip`)."""

    slip: str | None = None


def _raised(err: BaseException, code: str, parts: list[dict] | None) -> Raised:
    raised = Raised(format_exception(err, code, parts_from(parts, code)).strip())
    raised.slip = slip(err)
    return raised


def _raised_error(err: BaseException, code: str, parts: list[dict] | None) -> dict:
    """An error of the learner's code before or around its calls, as Check reports it."""
    return {"code": "raised", "message": format_exception(err, code, parts_from(parts, code)),
            "slip": slip(err)}


class NotTensors(TypeError):
    """An output that is no tensors; ``why`` says what it is, as data the page words
    (``js/strings.toml`` ``why.type``): ``{"returned": type name}``, ``{"holding": type name}``,
    ``{"dtype": name}``, or ``{}`` when the judge could not read it."""

    def __init__(self, why: dict[str, str]) -> None:
        super().__init__(why)
        self.why = why


class Oversized:
    """An output with far more values than the inputs allow (:func:`_bounded`): only its shape
    is kept, and the report shows that shape against the one expected."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(int(n) for n in shape)


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
    type, so no method of the learner's runs here; anything else raises :class:`NotTensors`."""
    kind = type(x)
    if kind is tuple or kind is list:
        return tuple(_to_numpy(v) for v in x)
    if kind is Oversized:
        return x
    layer, *real = _tensor_classes()
    if kind is layer:
        data = x._data
    elif real and kind is real[0]:
        data = x.detach().cpu().numpy()
    elif kind is np.ndarray or kind in _NUMBERS:
        data = x
    else:
        raise NotTensors({"returned": kind.__name__})
    if type(data) is not np.ndarray and type(data) not in _NUMBERS:
        raise NotTensors({"holding": type(data).__name__})
    if type(data) is np.ndarray and data.dtype.kind not in "biuf":  # objects run their own code
        raise NotTensors({"dtype": str(data.dtype)})
    return np.array(data, dtype=np.float64)


def _as_shown(x: object) -> object:
    """An input as the failure report shows it: numbers as arrays, anything else (a mode's name,
    None) as itself."""
    return np.asarray(x) if isinstance(x, np.ndarray) else x


def _show(x: object) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_show(v) for v in x) + ")"
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return f"{float(x):.6g}"
        return np.array2string(x, precision=4, suppress_small=True, separator=", ")
    return repr(x)


def _differs(got: object, want: object, ex: Exercise) -> dict | None:
    """Why ``got`` is not ``want``, as a reason code with its values (the page words it in its
    language, js/i18n.js ``why``), or None if they agree:

    - ``{"code": "count", "got": n, "expected": m}``: n values returned, m expected;
    - ``{"code": "shape", "got": [..], "expected": [..]}``;
    - ``{"code": "tuple", "got": n, "expected": [..]}``: a tuple of n values where one tensor of
      shape ``expected`` is wanted;
    - ``{"code": "values", "at": [[i, j], ...], "first": {"got": "nan", "expected": "1"}}``: the
      first (at most 3) places that differ and the two values at the first (none for a scalar,
      whose values the report shows whole);
    - any of them with ``"output": k`` (1-based) when the k-th of several outputs differs.
    Check's other reasons: ``{"code": "raised", "message": traceback, "slip": code | None}``
    (the learner's function raised) and ``{"code": "type", **NotTensors.why}`` (it returned
    something that is no tensor).
    """
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            n = len(got) if isinstance(got, tuple) else 1
            return {"code": "count", "got": n, "expected": len(want)}
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            why = _differs(g, w, ex)
            if why:
                return {**why, "output": i + 1}
        return None
    if isinstance(got, tuple):
        return {"code": "tuple", "got": len(got), "expected": list(want.shape)}
    if isinstance(got, Oversized):
        return {"code": "shape", "got": list(got.shape), "expected": list(want.shape)}
    assert isinstance(got, np.ndarray) and isinstance(want, np.ndarray)
    if got.shape != want.shape and not (got.size == 1 and want.size == 1):
        return {"code": "shape", "got": list(got.shape), "expected": list(want.shape)}
    got = got.reshape(want.shape)
    close = np.isclose(got, want, rtol=ex.rtol, atol=ex.atol, equal_nan=True)
    if not close.all():
        if not want.ndim:
            return {"code": "values", "at": []}
        wrong = np.argwhere(~close)
        first = tuple(wrong[0])
        return {"code": "values", "at": [list(map(int, i)) for i in wrong[:3]],
                "first": {"got": _number(got[first]), "expected": _number(want[first])}}
    return None


def _number(x: object) -> str:
    """One value as the report shows it: nan, inf, -inf or six significant digits."""
    return f"{float(x):.6g}"


def define(code: str, name: str, parts: list[dict] | None = None) -> tuple[object, dict | None]:
    """Run the learner's code silently and return ``(function, error)``: ``error`` is None, or
    ``{"code": "raised", "message": traceback, "slip"}`` (a syntax error, or what the code
    raised), or ``{"code": "undefined", "name": name}`` (no function of that name)."""
    cell_parts = parts_from(parts, code)
    try:
        compiled = compile(code, CELL, "exec")
    except SyntaxError as err:
        return None, {"code": "raised", "message": format_syntax_error(err, code, cell_parts),
                      "slip": None}
    namespace: dict = {"__name__": "__learner__"}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compiled, namespace)
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        return None, _raised_error(err, code, parts)
    fn = namespace.get(name)
    if not callable(fn):
        return None, {"code": "undefined", "name": name}
    return fn, None


def _call(fn, inputs: dict, code: str, parts: list[dict] | None) -> object:
    """The learner's function on ``inputs`` (arrays as tensors, positional, in the lesson's
    parameter order: learners may rename parameters): what it returned, or :class:`Raised`."""
    import torch  # the real torch under CPython, the layer in the browser

    as_tensors = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in inputs.values()]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            out = fn(*as_tensors)
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        return _raised(err, code, parts)
    largest = max([np.size(v) for v in inputs.values() if isinstance(v, np.ndarray)] + [1])
    return _bounded(out, max(LARGE_FACTOR * largest, LARGE_MIN))


def _bounded(x: object, limit: int) -> object:
    """``x``, or :class:`Oversized` in place of each tensor or array of more than ``limit``
    values (read by exact type, as :func:`_to_numpy` reads them), so that phase 1 never hands
    the judge millions of numbers."""
    kind = type(x)
    if kind is tuple or kind is list:
        return kind(_bounded(v, limit) for v in x)
    layer, *real = _tensor_classes()
    if kind is layer and type(x._data) is np.ndarray:
        shape = x._data.shape
    elif (real and kind is real[0]) or kind is np.ndarray:
        shape = tuple(x.shape)
    else:
        return x
    return Oversized(shape) if int(np.prod(shape, dtype=np.int64)) > limit else x


def _weights(seed: int, case: int, output: object) -> list[np.ndarray]:
    """The fixed random weights u of each output (float64, its shape), by which the gradient
    of Σ u·output is taken: the same in phase 1 and for the judge's answer."""
    rng = np.random.default_rng([seed, case, 2])
    outputs = output if isinstance(output, tuple) else (output,)
    return [rng.normal(size=tuple(getattr(o, "shape", ()))) for o in outputs]


def gradients(fn, ex: Exercise, inputs: dict, seed: int, case: int, code: str = "",
              parts: list[dict] | None = None) -> dict | Raised:
    """The gradient of Σ u·output of ``fn`` on ``inputs`` with respect to each input named in
    ``ex.gradient`` (by autograd: real torch under CPython, the layer in the browser), as
    float64 arrays by name; zeros where no output depends on an input through the graph (a
    ``.detach()``). The inputs are passed as in training: results of a graph (``x * 1``), so
    the function may write into them. What the call raised is returned as :class:`Raised`, in
    the terms of ``code`` and ``parts`` (the learner's, for their tracebacks)."""
    import torch

    leaves, args = {}, []
    for name, v in inputs.items():
        if name in ex.gradient and isinstance(v, np.ndarray):
            leaves[name] = torch.tensor(v, requires_grad=True)
            args.append(leaves[name] * 1)
        else:
            args.append(torch.tensor(v) if isinstance(v, np.ndarray) else v)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            out = fn(*args)
            outs = out if isinstance(out, tuple) else (out,)
            total = None
            for o, u in zip(outs, _weights(seed, case, out), strict=True):
                if isinstance(o, torch.Tensor) and o.requires_grad:
                    term = (o * torch.tensor(u, dtype=o.dtype)).sum()
                    total = term if total is None else total + term
            if total is None:
                found = [None] * len(leaves)
            else:
                found = torch.autograd.grad(total, list(leaves.values()), allow_unused=True)
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        return _raised(err, code, parts)
    return {name: np.zeros(np.shape(inputs[name])) if g is None
            else np.asarray(g.detach().numpy(), dtype=np.float64)
            for name, g in zip(leaves, found, strict=True)}


def learner_outputs(exercise: str | Exercise, code: str, parts: list[dict] | None = None,
                    cases: int = CASES, seed: int = 0) -> tuple[list, dict | None, object, object]:
    """Phase 1 (the learner's code runs): define their function and call it on each case.

    Returns ``(outputs, error, shrunk, gradients)``: one entry per case, what the call returned
    or a :class:`Raised` message, the smallest failing case found (:func:`shrink`) or None, and
    where the exercise sets ``GRADIENT`` one entry per case of :func:`gradients` (else None);
    or ``([], error, None, None)`` when the code does not even define the function, or when anything
    raised once it ran: a ``KeyboardInterrupt`` of the learner's own (a Stop ends the job as
    stopped whatever this returns), or what the learner's code changed (a patched ``numpy``
    that breaks drawing the inputs). Those are the learner's errors, shown as theirs, never
    the site's.
    """
    ex = get(exercise)
    try:
        fn, error = define(code, ex.function, parts)
        if error:
            return [], error, None, None
        outputs = [_call(fn, ex.inputs(seed, case), code, parts) for case in range(cases)]
        shrunk = None
        for case, raw in enumerate(outputs):
            inputs = ex.inputs(seed, case)
            if _wrong(raw, _want(ex, inputs), ex):
                shrunk = (case, *shrink(ex, inputs, raw, lambda x: _call(fn, x, code, parts)))
                break
        grads = None
        if ex.gradient:
            grads = [None if type(raw) is Raised or isinstance(raw, Oversized)
                     else gradients(fn, ex, ex.inputs(seed, case), seed, case, code, parts)
                     for case, raw in enumerate(outputs)]
    except BaseException as err:
        return [], _raised_error(err, code, parts), None, None
    return outputs, None, shrunk, grads



def _want(ex: Exercise, inputs: dict) -> object:
    """The reference's result on ``inputs``, or None when it refuses them (a shrink that made
    them invalid, such as a number of scores that is no multiple of the group size)."""
    try:
        return _reference_numpy(ex.expected(inputs))
    except Exception:
        return None


def _wrong(raw: object, want: object, ex: Exercise) -> bool:
    """Whether the learner's output ``raw`` disagrees with ``want``."""
    if want is None:
        return False
    if type(raw) is Raised:
        return True
    try:
        return _differs(_to_numpy(raw), want, ex) is not None
    except NotTensors:
        return True


def _simpler(inputs: dict) -> list[dict]:
    """Inputs one step simpler than ``inputs``, most promising first: fewer rows, a shorter
    sequence, no padding in the mask, plain zeros where padding holds NaN, inf or huge values,
    values rounded to one decimal, then to integers (the finite ones: what padding holds is
    what may have made the case fail, and stays)."""
    arrays = {k: v for k, v in inputs.items() if isinstance(v, np.ndarray) and v.ndim}
    out: list[dict] = []
    if not arrays:
        return out
    first = next(iter(arrays.values()))
    rows = first.shape[0]
    for n in range(1, rows):  # keep the first n rows (or scores) of every array that has them;
        # a whole number equal to the row count (a group size: one group) follows it
        out.append({k: v[:n] if k in arrays and v.shape[0] == rows
                    else n if type(v) is int and v == rows else v
                    for k, v in inputs.items()})
    for i in range(1, rows if rows > 1 else 0):  # or one row alone, the one that fails
        out.append({k: v[i : i + 1] if k in arrays and v.shape[0] == rows
                    else 1 if type(v) is int and v == rows else v
                    for k, v in inputs.items()})
    wide = [v for v in arrays.values() if v.ndim == 2]
    if wide:
        T = wide[0].shape[1]  # response length
        for cut in [slice(None, t) for t in range(1, T)] + [slice(t, None) for t in range(1, T)]:
            # the first t tokens, then the last T − t (padding that made it fail may be either)
            out.append({k: v[:, cut] if k in arrays and v.ndim == 2 and v.shape[1] == T else v
                        for k, v in inputs.items()})
    for k in MASKS & arrays.keys():
        if not (arrays[k] == 1).all():
            out.append({**inputs, k: np.ones_like(arrays[k])})
    pad, padded = padding(inputs)
    plain = {k: np.where(pad & ~_tame(inputs[k]), 0, inputs[k]).astype(inputs[k].dtype)
             for k in padded if (pad & ~_tame(inputs[k])).any()}
    if plain:
        out.append({**inputs, **plain})
    for digits in (1, 0):
        rounded = {}
        for k, v in arrays.items():
            if k in MASKS or v.dtype.kind != "f":
                continue
            r = np.where(_tame(v), np.round(v, digits), v).astype(v.dtype)
            if not np.array_equal(r, v, equal_nan=True):
                rounded[k] = r
        if rounded:
            out.append({**inputs, **rounded})
            break
    return out


def _tame(x: np.ndarray) -> np.ndarray:
    """Where ``x`` is finite and not huge (below 1e6 in size): values a person rounds."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(x) & (np.abs(x) < 1e6)


def _padding_holds(inputs: dict) -> list[str]:
    """What the padding of ``inputs`` holds that no real value would: of "nan", "inf", "-inf",
    "huge" (at least 1e6 in size), those present, for the report."""
    pad, names = padding(inputs)
    seen = set()
    for k in names:
        v = inputs[k][pad]
        with np.errstate(invalid="ignore"):
            seen |= {"nan"} if np.isnan(v).any() else set()
            seen |= {"inf"} if (v == np.inf).any() else set()
            seen |= {"-inf"} if (v == -np.inf).any() else set()
            seen |= {"huge"} if (np.isfinite(v) & (np.abs(v) >= 1e6)).any() else set()
    return [w for w in ("-inf", "inf", "nan", "huge") if w in seen]


def shrink(ex: Exercise, inputs: dict, raw: object, call, calls: int = SHRINK_CALLS,
           seconds: float = SHRINK_SECONDS) -> tuple[dict, object]:
    """The simplest inputs reached from ``inputs`` (on which the learner's output ``raw`` is
    wrong) by :func:`_simpler` steps that keep the learner's function wrong, with its output
    there. Greedy: the first simpler candidate that still fails is taken, until none does or
    ``calls`` calls or ``seconds`` are spent. Each step makes the inputs smaller, their mask
    fuller or their values rounder, so it ends."""
    deadline = time.perf_counter() + seconds
    while calls > 0 and time.perf_counter() < deadline:
        for candidate in _simpler(inputs):
            want = _want(ex, candidate)
            if want is None:  # the reference refuses it
                continue
            calls -= 1
            out = call(candidate)
            if _wrong(out, want, ex):
                inputs, raw = candidate, out
                break
            if calls <= 0 or time.perf_counter() >= deadline:
                break
        else:
            break
    return inputs, raw


def _inputs_read(shown: object, like: dict) -> dict | None:
    """Shrunk inputs from phase 1, read strictly: a dict with the same names as ``like``, each
    value an array of numbers (exactly ``np.ndarray``) or a value of the same exact type as in
    ``like``; None otherwise."""
    if type(shown) is not dict or list(shown) != list(like):
        return None
    for name, value in shown.items():
        original = like[name]
        if type(original) is np.ndarray:
            if type(value) is not np.ndarray or value.dtype != original.dtype:
                return None
        elif type(value) is not type(original):
            return None
    return {name: v.copy() if type(v) is np.ndarray else v for name, v in shown.items()}


def _described(ex: Exercise, case: int, inputs: dict, want: object, got: object,
               reason: dict, shrunk: bool = False) -> dict:
    return {
        "case": case + 1,
        "shrunk": shrunk,
        "inputs": {k: _show(_as_shown(v)) for k, v in inputs.items()},
        "left_out": ex.left_out(inputs),
        "padding": _padding_holds(inputs),
        "expected": _show(want),
        "got": "" if got is None or isinstance(got, Oversized) else _show(got),
        "reason": reason,
    }


def verdict(exercise: str | Exercise, phase1: tuple, cases: int = CASES, seed: int = 0) -> dict:
    """Phase 2 (the judge's, or in one call under CPython): the references, compared with the
    learner's outputs of phase 1.

    Returns ``{"total", "passed", "seed", "failures": [{"case", "shrunk", "inputs", "left_out",
    "padding", "expected", "got", "reason"}], "error"}`` (``seed``: the inputs', which reproduce
    them; ``left_out``: the arguments not passed, each with its default; ``padding``: what the
    padding holds that no real value would, of "-inf", "inf", "nan", "huge"; ``reason``: a code
    with its values, :func:`_differs`; ``error``: None, what :func:`define` says, or
    ``{"code": "norun"}`` when phase 1 handed over nothing readable); one failure
    is described: the smallest failing case phase 1 found, if the reference confirms it, else
    the first failing case as drawn.
    """
    if type(phase1) is not tuple:
        phase1 = ([], NO_RUN)
    outputs, error, shrunk, grads = (*phase1, None, None)[:4]
    error = _read_error(error)
    result: dict = {"total": cases, "passed": 0, "seed": seed, "failures": [], "error": error}
    if error:
        return result
    ex = get(exercise)
    answer = None  # defined at the first case whose gradient is compared
    for case in range(cases):
        inputs = ex.inputs(seed, case)
        want = _reference_numpy(ex.expected(inputs))
        raw = outputs[case] if type(outputs) is list and case < len(outputs) else None
        got: object = None
        if type(raw) is Raised:
            reason = _raised_reason(raw)
        elif type(raw) is NotTensors:
            reason = {"code": "type", **raw.why}
        else:
            try:
                got = _to_numpy(raw)
                reason = _differs(got, want, ex)
            except NotTensors as err:
                got, reason = None, {"code": "type", **err.why}
        if reason is None and ex.gradient:
            theirs = grads[case] if type(grads) is list and case < len(grads) else None
            answer = answer or answer_function(ex)
            want_grads = _answer_gradients(ex, answer, inputs, seed, case)
            reason = _gradient_differs(theirs, want_grads, ex)
        if reason is None:
            result["passed"] += 1
        elif not result["failures"]:
            result["failures"].append(_described(ex, case, inputs, want, got, reason))
            first_inputs = inputs
    if result["failures"] and type(shrunk) is tuple and len(shrunk) == 3:
        case, shrunk_inputs, raw = shrunk
        small = _inputs_read(shrunk_inputs, first_inputs)
        if type(case) is int and 0 <= case < cases and small is not None:
            want = _want(ex, small)
            if want is not None and type(raw) is Raised:
                reason = _raised_reason(raw)
                result["failures"] = [_described(ex, case, small, want, None, reason, True)]
            elif want is not None:
                try:
                    got = _to_numpy(raw)
                    reason = _differs(got, want, ex)
                except NotTensors:
                    reason = None  # the case as drawn says it better
                if reason is not None:
                    result["failures"] = [_described(ex, case, small, want, got, reason, True)]
    return result


NO_RUN = {"code": "norun"}  # phase 1 handed over nothing the judge can read
_SLIPS = (None, "blank")  # runner.slip's codes
_TEXT_CHARS = 20_000  # at most this much of a message, or of a name, from phase 1


def _raised_reason(raw: Raised) -> dict:
    return {"code": "raised", "message": str.__str__(raw), "slip": raw.slip}


def _read_error(error: object) -> dict | None:
    """Phase 1's error (:func:`define`), read strictly: the same, or :data:`NO_RUN`."""
    if error is None:
        return None
    if type(error) is dict and error.get("code") == "raised" and set(error) == {
            "code", "message", "slip"} and type(error["message"]) is str \
            and error["slip"] in _SLIPS and type(error["slip"]) in (str, type(None)):
        return {"code": "raised", "message": error["message"][:_TEXT_CHARS], "slip": error["slip"]}
    if type(error) is dict and set(error) == {"code", "name"} and error["code"] == "undefined" \
            and type(error["name"]) is str:
        return {"code": "undefined", "name": error["name"][:_TEXT_CHARS]}
    return dict(NO_RUN)


# the gradient's tolerance: ten times the values' (a gradient is a difference of values)
GRADIENT_RTOL, GRADIENT_ATOL = 10, 10


def answer_function(ex: Exercise):
    """The lesson's own answer (site code, run by the judge: the gradient's reference)."""
    namespace: dict = {"__name__": f"answer_{ex.id.replace('/', '_')}"}
    exec(compile(ex.answer, f"<answer of {ex.id}>", "exec"), namespace)
    return namespace[ex.function]


def _answer_gradients(ex: Exercise, answer, inputs: dict, seed: int, case: int) -> dict:
    """The gradients of the lesson's answer ``answer`` on ``inputs``."""
    found = gradients(answer, ex, inputs, seed, case)
    if type(found) is Raised:
        raise RuntimeError(f"the answer of {ex.id} has no gradient here: {found}")
    return found


def _gradient_differs(theirs: object, want: dict, ex: Exercise) -> dict | None:
    """Why the learner's gradients (phase 1's, read strictly) are not the answer's, or None:
    ``{"code": "raised", ...}`` when taking them raised, ``{"code": "gradient", "input": name,
    "at": [...], "first": {"got", "expected"}}`` at the first input whose gradient differs."""
    if type(theirs) is Raised:
        return {"code": "raised", "message": str.__str__(theirs)}
    if type(theirs) is not dict or set(theirs) != set(want):
        return {"code": "gradient", "input": next(iter(want)), "at": [], "first": None}
    for name, w in want.items():
        g = theirs[name]
        if type(g) is not np.ndarray or g.shape != w.shape:
            return {"code": "gradient", "input": name, "at": [], "first": None}
        close = np.isclose(g, w, rtol=GRADIENT_RTOL * ex.rtol, atol=GRADIENT_ATOL * ex.atol,
                           equal_nan=True)
        if not close.all():
            wrong = np.argwhere(~close)
            first = tuple(wrong[0])
            return {"code": "gradient", "input": name,
                    "at": [list(map(int, i)) for i in wrong[:3]],
                    "first": {"got": _number(g[first]), "expected": _number(w[first])}}
    return None


def _reference_numpy(x: object) -> object:
    """The reference's result (NumPy values, numbers or tuples of them) in float64."""
    if isinstance(x, tuple):
        return tuple(_reference_numpy(v) for v in x)
    return np.asarray(x, dtype=np.float64)


def check(exercise: str | Exercise, code: str, parts: list[dict] | None = None,
          cases: int = CASES, seed: int = 0) -> dict:
    """Phases 1 and 2 in one call (no interpreter to put back in between): CPython, tests."""
    return verdict(exercise, learner_outputs(exercise, code, parts, cases, seed), cases, seed)


# ---- the judge: phase 2 in another interpreter, from plain data only ---------------------------
#
# In the browser, phase 1 runs in the learner's worker and hands the page only plain data
# (:func:`plain_phase1`: numbers, lists, strings); the page gives it to a second worker, the judge,
# which never runs learner code, and :func:`judge` computes the verdict there. Whatever the
# learner's code did to its own interpreter (a patched checker, a rewritten file, a hook) cannot
# reach the judge; the most it can do is hand over other numbers, which are then its outputs.

Plain = float | int | str | list | dict | None


def _plain(x: object) -> Plain:
    """One output of phase 1 as plain data: ``{"raised": traceback, "slip": code | None}``,
    ``{"type": NotTensors.why}`` (no tensor), or the values: ``{"shape": [...], "data":
    [floats]}`` or a list of those (a tuple of outputs)."""
    if type(x) is Raised:
        return {"raised": str.__str__(x), "slip": x.slip}
    try:
        values = _to_numpy(x)
    except NotTensors as err:
        return {"type": err.why}

    def write(v: object) -> Plain:
        if isinstance(v, tuple):
            return [write(u) for u in v]
        if isinstance(v, Oversized):
            return {"shape": list(v.shape), "oversized": True}
        array = np.asarray(v, dtype=np.float64)
        return {"shape": [int(n) for n in array.shape], "data": [float(f) for f in array.ravel()]}

    return write(values)


def plain_phase1(phase1: tuple) -> dict:
    """Phase 1's result (:func:`learner_outputs`) as plain data for the judge: ``{"outputs",
    "error", "shrunk": {"case", "inputs", "output"} | None, "gradients": [{name: values} |
    {"raised": traceback} | None] | None}``. Runs in the learner's interpreter: nothing here is
    trusted by the judge."""
    outputs, error, shrunk, grads = (*phase1, None)[:4]
    plain: dict = {"outputs": [_plain(raw) for raw in outputs], "error": error, "shrunk": None,
                   "gradients": None if grads is None else [_plain_gradients(g) for g in grads]}
    if shrunk is not None:
        case, inputs, raw = shrunk
        plain["shrunk"] = {
            "case": case,
            "inputs": {k: {"shape": list(np.shape(v)), "dtype": str(v.dtype),
                           "data": np.ravel(v).astype(np.float64).tolist()}
                       if isinstance(v, np.ndarray) else v for k, v in inputs.items()},
            "output": _plain(raw),
        }
    return plain


def _plain_gradients(g: object) -> Plain:
    if type(g) is Raised:
        return {"raised": str.__str__(g), "slip": g.slip}
    if type(g) is not dict:
        return None
    return {name: {"shape": [int(n) for n in a.shape],
                   "data": [float(f) for f in np.ravel(a)]} for name, a in g.items()}


def _read_gradients(p: object, names: tuple[str, ...]) -> object:
    """One case's plain gradients back (:func:`_plain_gradients`), read strictly: a dict of
    arrays by the exercise's names, a :class:`Raised`, or None."""
    if type(p) is dict and "raised" in p:
        return _read_raised(p)
    if type(p) is not dict or set(p) != set(names):
        return None
    try:
        read = {name: _read_values(p[name]) for name in names}
    except (ValueError, TypeError):
        return None
    return read if all(type(a) is np.ndarray for a in read.values()) else None


def _read_raised(p: dict) -> Raised | None:
    """``{"raised": traceback, "slip": code | None}`` back as :class:`Raised`, or None."""
    if set(p) != {"raised", "slip"} or type(p["raised"]) is not str or p["slip"] not in _SLIPS \
            or type(p["slip"]) not in (str, type(None)):
        return None
    raised = Raised(p["raised"][:_TEXT_CHARS])
    raised.slip = p["slip"]
    return raised


# what a learner's output is said to be (NotTensors.why): these keys, a type's name of this size
_WHY_TYPE, _NAME_CHARS = ("returned", "holding", "dtype"), 100


def _read_values(p: object) -> object:
    """Plain values back as arrays (or a tuple of them), read strictly: only the exact shapes
    :func:`_plain` writes; anything else raises ValueError."""
    if type(p) is list:
        return tuple(_read_values(v) for v in p)
    if type(p) is dict and set(p) == {"shape", "oversized"} and p["oversized"] is True \
            and type(p["shape"]) is list and all(type(n) is int and 0 <= n for n in p["shape"]):
        return Oversized(tuple(p["shape"]))
    if type(p) is not dict or set(p) != {"shape", "data"} or type(p["shape"]) is not list \
            or type(p["data"]) is not list:
        raise ValueError("not plain values")
    shape = p["shape"]
    if not all(type(n) is int and 0 <= n for n in shape):
        raise ValueError("not a shape")
    if not all(type(f) in (float, int) for f in p["data"]):
        raise ValueError("not numbers")
    array = np.array(p["data"], dtype=np.float64)
    if array.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError("the data does not fill its shape")
    return array.reshape(shape)


def _read_output(p: object) -> object:
    """One plain output of phase 1, as :func:`verdict` reads outputs."""
    if type(p) is dict and "raised" in p:
        return _read_raised(p) or NotTensors({})
    if type(p) is dict and set(p) == {"type"}:
        why = p["type"]
        if type(why) is dict and len(why) == 1 and next(iter(why)) in _WHY_TYPE \
                and type(next(iter(why.values()))) is str:
            return NotTensors({k: v[:_NAME_CHARS] for k, v in why.items()})
        return NotTensors({})
    try:
        return _read_values(p)
    except (ValueError, TypeError):
        return NotTensors({})


def _read_inputs(p: object, like: dict) -> dict | None:
    """Shrunk inputs as plain data, read back like ``like`` (the case as drawn); None if they
    are not."""
    if type(p) is not dict or list(p) != list(like):
        return None
    out = {}
    for name, original in like.items():
        value = p[name]
        if type(original) is np.ndarray:
            if type(value) is not dict or value.get("dtype") != str(original.dtype):
                return None
            try:
                array = _read_values({"shape": value["shape"], "data": value["data"]})
            except (ValueError, TypeError, KeyError):
                return None
            out[name] = array.astype(original.dtype)
        elif type(value) is type(original):  # a number, a mode's name, a flag, None
            out[name] = value
        elif type(original) is float and type(value) is int:  # a whole float, as JS sent it
            out[name] = float(value)
        else:
            return None
    return out


def judge(exercise: str | Exercise, plain: object, cases: int = CASES, seed: int = 0) -> dict:
    """Phase 2 in the judge's interpreter: :func:`verdict` on phase 1's plain data
    (:func:`plain_phase1`), read strictly; nothing of the learner's runs here."""
    if type(plain) is not dict:
        return verdict(exercise, None, cases, seed)
    outputs = plain.get("outputs")
    outputs = [_read_output(p) for p in outputs] if type(outputs) is list else []
    error = plain.get("error")
    shrunk = plain.get("shrunk")
    read_shrunk = None
    if type(shrunk) is dict and type(shrunk.get("case")) is int and 0 <= shrunk["case"] < cases:
        like = get(exercise).inputs(seed, shrunk["case"])
        inputs = _read_inputs(shrunk.get("inputs"), like)
        if inputs is not None:
            read_shrunk = (shrunk["case"], inputs, _read_output(shrunk.get("output")))
    grads = plain.get("gradients")
    names = get(exercise).gradient
    grads = [_read_gradients(g, names) for g in grads] if type(grads) is list else None
    return verdict(exercise, (outputs, error, read_shrunk, grads), cases, seed)
