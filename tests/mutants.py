"""Mistakes made from an answer, and what Check makes of them (tests/test_mutants.py).

Two kinds of mutant of a lesson's answer (its exercise section, unblanked):

- **traps**: the mistakes its TODO comments, hints and page warn about, listed in the lesson
  file's ``traps`` section (:attr:`site_build.lessons.Lesson.traps`);
- **mechanical mutants** (:func:`mechanical`), one change at one place of the function:
  a fill made a multiply (``x.masked_fill(c, 0)`` → ``x * ~c``, a blend for another value), a
  select made a blend (``torch.where(c, a, b)`` → ``c * a + ~c * b``), each default changed,
  each comparison negated or moved across its boundary, min and max swapped, a backward loop run
  forwards, a ``.detach()`` dropped, a sum over a count made a mean.

A mechanical mutant may mean the same as the answer (``x >= 0`` for ``x > 0`` where x is never
exactly 0). Which ones do is decided by evidence, not by a list: :func:`difference` runs mutant
and answer (its side computed once, :class:`Answer`) on many more inputs than one Check draws
(:data:`EVIDENCE_SEEDS` seeds of the exercise's own inputs, then as many with every case padded
with what padding may hold and defaults left out) and returns the first where they differ, or None.
"""

from __future__ import annotations

import ast
import copy
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from browser_runtime import exercises
from browser_runtime.check import (
    CASES,
    _call,
    _differs,
    _gradient_differs,
    _reference_numpy,
    _to_numpy,
    gradients,
    verdict,
)
from browser_runtime.exercises import Exercise
from site_build.lessons import Lesson

EVIDENCE_SEEDS = 12  # seeds of CASES inputs each, of each kind of evidence


def seeds(exercise_id: str, n: int = 8) -> list[int]:
    """``n`` seeds for the claim "Check fails it at any seed": the edges of the 32-bit range and
    some spread by the exercise's id (the same on every machine)."""
    base = zlib.crc32(exercise_id.encode())
    return [0, 2**32 - 1] + [(base + k * 0x9E3779B1) % 2**32 for k in range(n - 2)]


@dataclass(frozen=True)
class Mutant:
    name: str  # what was changed, where: "masked_fill → × at line 19"
    code: str  # the exercise section with the change


def define(code: str, name: str) -> Callable:
    """The function ``name`` of ``code``, run with whatever ``torch`` is when it is defined
    (real torch, or the browser's layer inside ``torch_layer_installed()``)."""
    namespace: dict = {"__name__": "mutant"}
    exec(compile(code, "<mutant>", "exec"), namespace)
    return namespace[name]


def call(fn: Callable, inputs: dict) -> object:
    """``fn`` on ``inputs`` as Check calls it (arrays as tensors, positionally): its output as
    NumPy values, or the exception it raised."""
    import torch  # real torch, or the layer where a test installed it

    args = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in inputs.values()]
    try:
        with np.errstate(all="ignore"):
            return _to_numpy(fn(*args))
    except Exception as err:  # a mutant may raise anything: it is its result
        return err


def _same(a: object, b: object, ex: Exercise) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b)
    try:
        return _differs(a, b, ex) is None
    except (AssertionError, TypeError, ValueError):
        return False


def evidence(ex: Exercise, monkeypatch) -> Iterator[dict]:
    """Inputs the exercise allows, many more than one Check draws: its own cases over
    :data:`EVIDENCE_SEEDS` seeds, then as many with padding that always holds anything and
    defaults always left out (the widest the draws go)."""
    for seed in range(EVIDENCE_SEEDS):
        for case in range(CASES):
            yield ex.inputs(10_000 + seed, case)
    with monkeypatch.context() as m:
        m.setattr(exercises, "PADDED_SHARE", 1.0)
        m.setattr(exercises, "INPUT_SHARE", 1.0)
        m.setattr(exercises, "LEFT_OUT_SHARE", 1.0)
        for seed in range(EVIDENCE_SEEDS):
            for case in range(CASES):
                yield ex.inputs(20_000 + seed, case)


class Answer:
    """The answer's side of :func:`difference`, computed once per answer rather than once per
    mutant: the evidence inputs (:func:`evidence`), and on each its result and, where the
    exercise sets ``GRADIENT``, its gradients (each when first asked for)."""

    def __init__(self, ex: Exercise, fn: Callable, monkeypatch) -> None:
        self.ex, self.fn = ex, fn
        self.inputs = list(evidence(ex, monkeypatch))
        self._results: dict[int, object] = {}
        self._gradients: dict[int, object] = {}

    def result(self, k: int) -> object:
        if k not in self._results:
            self._results[k] = call(self.fn, self.inputs[k])
        return self._results[k]

    def gradients(self, k: int) -> object:
        if k not in self._gradients:
            self._gradients[k] = gradients(self.fn, self.ex, self.inputs[k], k, 0)
        return self._gradients[k]


def difference(answer: Answer, mutant: Callable) -> dict | None:
    """The first allowed input (:func:`evidence`) where ``mutant`` gives another result than
    the answer (values within Check's tolerance, or another exception; where the exercise sets
    ``GRADIENT``, the gradients too), or None: the mutant means the same as the answer on every
    input tried."""
    ex = answer.ex
    for k, inputs in enumerate(answer.inputs):
        if not _same(call(mutant, inputs), answer.result(k), ex):
            return inputs
        if ex.gradient:
            theirs = gradients(mutant, ex, inputs, k, 0)
            if _gradient_differs(theirs, answer.gradients(k), ex) is not None:
                return inputs
    return None


_DRAWN: dict[tuple[str, int], list[tuple[dict, object]]] = {}


def _drawn(ex: Exercise, seed: int) -> list[tuple[dict, object]]:
    """Each case's inputs at ``seed`` and the reference's output on them (NumPy: the same under
    real torch and the layer), drawn once for every mutant and trap checked at that seed."""
    key = (ex.id, seed)
    if key not in _DRAWN:
        cases = [ex.inputs(seed, case) for case in range(CASES)]
        _DRAWN[key] = [(inputs, _reference_numpy(ex.expected(inputs))) for inputs in cases]
    return _DRAWN[key]


def check_fails(ex: Exercise, fn: Callable, seed: int) -> bool:
    """Whether Check, at ``seed``, finds a case where ``fn`` disagrees with the reference, in
    value or, where the exercise sets ``GRADIENT``, in gradient with the answer (what its
    verdict counts: :func:`browser_runtime.check.verdict`, without phase 1's shrinking)."""
    for inputs, want in _drawn(ex, seed):
        got = call(fn, inputs)
        if isinstance(got, Exception) or not _same(got, want, ex):
            return True
    if not ex.gradient:
        return False
    outputs = [_call(fn, ex.inputs(seed, case), "", None) for case in range(CASES)]
    grads = [gradients(fn, ex, ex.inputs(seed, case), seed, case) for case in range(CASES)]
    return verdict(ex, (outputs, None, None, grads), seed=seed)["passed"] < CASES


# ---- mechanical mutants -------------------------------------------------------------------------

_NEGATED = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
            ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_SWAPPED = {"maximum": "minimum", "minimum": "maximum", "max": "min", "min": "max",
            "amax": "amin", "amin": "amax"}


def _changed_default(value: object) -> object | None:
    """Another value for a default: a bool negated, a number moved (0 → 0.1, 1 → 0.9, else
    0.9×); None for what has no obvious other value (None, a mode's name)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return 0.1 if value == 0 else 0.9 if value == 1 else value * 0.9
    return None


def _attr_call(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == attr


def _sites(fn: ast.FunctionDef) -> Iterator[tuple[str, Callable[[ast.AST], ast.AST | None]]]:
    """Each place of ``fn`` a mechanical mutant changes: a name, and a rewrite of the node at
    that place (found again in a copy by its position)."""
    for default, node in zip(reversed(fn.args.defaults), reversed(fn.args.args), strict=False):
        if isinstance(default, ast.Constant) and _changed_default(default.value) is not None:
            new = _changed_default(default.value)
            yield (f"default {node.arg}={default.value!r} → {new!r}",
                   _at(default, lambda n, v=new: ast.Constant(v)))
    for node in ast.walk(fn):
        line = getattr(node, "lineno", 0)
        if _attr_call(node, "masked_fill") and len(node.args) == 2:
            yield f"masked_fill → multiply or blend, line {line}", _at(node, _fill_to_blend)
        if _attr_call(node, "where") and len(node.args) == 3:
            yield f"torch.where → blend, line {line}", _at(node, _where_to_blend)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = type(node.ops[0])
            if op in _NEGATED:
                yield (f"{op.__name__} → {_NEGATED[op].__name__}, line {line}",
                       _at(node, lambda n, o=_NEGATED[op]: _with_op(n, o)))
            if op in _BOUNDARY:
                yield (f"{op.__name__} → {_BOUNDARY[op].__name__}, line {line}",
                       _at(node, lambda n, o=_BOUNDARY[op]: _with_op(n, o)))
        if isinstance(node, ast.Attribute) and node.attr in _SWAPPED:
            yield (f"{node.attr} → {_SWAPPED[node.attr]}, line {line}",
                   _at(node, lambda n: _renamed(n, _SWAPPED[n.attr])))
        if isinstance(node, ast.Call) and any(k.arg in ("min", "max") for k in node.keywords):
            yield f"clamp's min ↔ max, line {line}", _at(node, _swap_bounds)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "reversed":
            yield f"the loop forwards, line {line}", _at(node, lambda n: n.args[0])
        if _attr_call(node, "detach") and not node.args:
            yield f".detach() dropped, line {line}", _at(node, lambda n: n.func.value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) \
                and _attr_call(node.left, "sum"):
            yield f"a sum over a count → a mean, line {line}", _at(node, _mean_of)


def _at(target: ast.AST, rewrite: Callable[[ast.AST], ast.AST | None]):
    """A rewrite of the node at ``target``'s position (line, column, end, type) in a copy."""
    key = (type(target), target.lineno, target.col_offset, target.end_lineno,
           target.end_col_offset)

    def apply(tree: ast.AST) -> bool:
        class Rewriter(ast.NodeTransformer):
            done = False

            def visit(self, node: ast.AST) -> ast.AST:
                here = (type(node), getattr(node, "lineno", None),
                        getattr(node, "col_offset", None), getattr(node, "end_lineno", None),
                        getattr(node, "end_col_offset", None))
                if here == key and not self.done:
                    self.done = True
                    return rewrite(node)
                return self.generic_visit(node)

        rewriter = Rewriter()
        rewriter.visit(tree)
        return rewriter.done

    return apply


def _fill_to_blend(node: ast.Call) -> ast.AST:
    """``x.masked_fill(c, v)`` → ``x * ~c`` (v = 0), else ``x * ~c + v * c``."""
    x, (c, v) = node.func.value, node.args
    kept = ast.BinOp(x, ast.Mult(), ast.UnaryOp(ast.Invert(), c))
    if isinstance(v, ast.Constant) and v.value == 0:
        return kept
    return ast.BinOp(kept, ast.Add(), ast.BinOp(v, ast.Mult(), copy.deepcopy(c)))


def _where_to_blend(node: ast.Call) -> ast.AST:
    """``torch.where(c, a, b)`` → ``c * a + ~c * b``."""
    c, a, b = node.args
    return ast.BinOp(ast.BinOp(c, ast.Mult(), a), ast.Add(),
                     ast.BinOp(ast.UnaryOp(ast.Invert(), copy.deepcopy(c)), ast.Mult(), b))


def _with_op(node: ast.Compare, op: type) -> ast.Compare:
    node.ops = [op()]
    return node


def _renamed(node: ast.Attribute, attr: str) -> ast.Attribute:
    node.attr = attr
    return node


def _swap_bounds(node: ast.Call) -> ast.Call:
    for k in node.keywords:
        if k.arg in ("min", "max"):
            k.arg = "max" if k.arg == "min" else "min"
    return node


def _mean_of(node: ast.BinOp) -> ast.Call:
    """``x.sum(...) / n`` → ``x.mean(...)``."""
    total = node.left
    return ast.Call(ast.Attribute(total.func.value, "mean", ast.Load()), total.args,
                    total.keywords)


def mechanical(lesson: Lesson) -> list[Mutant]:
    """Every mechanical mutant of ``lesson``'s answer, one change each."""
    code = lesson.exercise(blanked=False)
    tree = ast.parse(code)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == lesson.name)
    out = []
    for name, apply in _sites(fn):
        changed = copy.deepcopy(tree)
        if apply(changed):
            out.append(Mutant(name, ast.unparse(ast.fix_missing_locations(changed)) + "\n"))
    return out
