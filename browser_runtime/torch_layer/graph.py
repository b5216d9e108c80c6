"""The autograd engine of the browser's torch layer: grad mode, the graph's nodes, saved arrays
and their versions, and the backward pass. It works on NumPy arrays only; ``tensor`` builds the
graph as it computes and wraps what comes back in tensors.

**Where the graph lives.** A tensor that requires grad holds a :class:`Node` in its ``_node``
slot: an :class:`AccumulateGrad` for a leaf (``requires_grad=True`` given by the user), or the
node of the operation that made it (its ``grad_fn``). A node knows its inputs' nodes (None for an
input without grad: a Python number, a mask, a detached tensor), each input's shape and dtype,
the arrays torch's formula saves, and its rule: ``rule(grad, *saved) -> one gradient per input``
(``derivatives``). A tensor that does not require grad holds None and costs nothing more: no
node is made for an operation unless grad mode is on and one of its inputs requires grad.

**The backward pass** (:func:`run_backward`) is torch's engine in small: it follows the nodes
from the outputs, runs each once all the nodes that feed it gradient have run (the most recently
made first, as torch's ready queue), and hands each input the gradient summed to the input's
shape (broadcasting) and cast to its dtype, as torch's ``validate_outputs``. Without
``retain_graph`` a node's saved arrays are freed once it has run; running it again raises torch's
"Trying to backward through the graph a second time" (a node that saved nothing runs again, as
in torch).

**Versions.** torch counts in-place writes to each tensor (shared by its views) and refuses a
backward that needs a saved tensor written since. Here the count is kept per NumPy memory
(the array that owns the data, shared by every view, ``detach()`` and ``.data``), only for memory
that a node saved (:func:`save`); in-place operations call :func:`bump`. Counting starts when a
tensor is first saved, so the version numbers in the error can be lower than torch's for a tensor
written in place before it was saved; where torch raises, the layer raises.

**Grad mode**: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` are
torch's context managers and decorators. ``inference_mode`` is ``no_grad`` here: torch also
marks the tensors made under it as inference tensors and refuses to save them for a backward
later; the layer does not.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .kernels import float_sum

__all__ = [
    "MODE",
    "AccumulateGrad",
    "Node",
    "Saved",
    "bump",
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "run_backward",
    "save",
    "set_grad_enabled",
    "sum_to",
]

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
               "bool": "Bool"}


# ---- grad mode ---------------------------------------------------------------------------------


class _Mode:
    """Whether operations record the graph (``torch.is_grad_enabled()``), whether an
    ``inference_mode`` block is open, and how many leaves that require grad exist
    (``AccumulateGrad`` nodes alive): while there are none, no tensor can require grad, and
    operations skip every check (a run without autograd costs what it did before autograd)."""

    __slots__ = ("enabled", "inference", "leaves")

    def __init__(self) -> None:
        self.enabled = True
        self.inference = 0
        self.leaves = 0


MODE = _Mode()


def is_grad_enabled() -> bool:
    return MODE.enabled


def is_inference_mode_enabled() -> bool:
    return MODE.inference > 0


def _decorate(context: Callable[[], Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` run inside a fresh ``context()`` at every call."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with context():
            return func(*args, **kwargs)

    return wrapper


class _GradMode:
    """A context manager and a decorator (``@torch.no_grad()`` or ``@torch.no_grad``) that sets
    grad mode to ``ENABLED`` inside and puts back what it was after."""

    ENABLED = False

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return _decorate(cls, orig_func)

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        self.prev = MODE.enabled

    def __enter__(self) -> None:
        self.prev = MODE.enabled
        MODE.enabled = self.ENABLED

    def __exit__(self, *exc: object) -> bool:
        MODE.enabled = self.prev
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        return _decorate(type(self), func)


class no_grad(_GradMode):
    """``torch.no_grad``: operations inside record no graph."""

    ENABLED = False


class enable_grad(_GradMode):
    """``torch.enable_grad``: grad mode on inside (within a ``no_grad`` block)."""

    ENABLED = True


class set_grad_enabled:
    """``torch.set_grad_enabled(mode)``: sets grad mode at once (a plain call switches it), and
    as a context manager or decorator restores the previous mode after."""

    def __init__(self, mode: bool) -> None:
        self.prev = MODE.enabled
        self.mode = bool(mode)
        MODE.enabled = self.mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        MODE.enabled = self.prev
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        MODE.enabled = self.prev
        return _decorate(functools.partial(set_grad_enabled, self.mode), func)


class inference_mode:
    """``torch.inference_mode(mode=True)``: here the same as ``no_grad`` (see the module's
    docstring); ``inference_mode(False)`` changes nothing."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # @torch.inference_mode without parentheses
            return _decorate(cls, mode)
        return super().__new__(cls)

    def __init__(self, mode: Any = True) -> None:
        self.mode = bool(mode)
        self.prev = MODE.enabled

    def __enter__(self) -> None:
        self.prev = MODE.enabled
        if self.mode:
            MODE.enabled = False
            MODE.inference += 1

    def __exit__(self, *exc: object) -> bool:
        if self.mode:
            MODE.inference -= 1
        MODE.enabled = self.prev
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        return _decorate(functools.partial(inference_mode, self.mode), func)


# ---- saved arrays and versions ---------------------------------------------------------------

# in-place writes so far to each memory a node saved, by id of the array that owns the memory;
# an entry lives as long as that array (weakref.finalize)
_VERSIONS: dict[int, int] = {}


def _owner(a: np.ndarray) -> np.ndarray:
    """The array whose memory ``a`` views (NumPy points each view at it), or ``a`` itself."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def bump(a: np.ndarray) -> None:
    """Count an in-place write to ``a``'s memory (only memory that a node saved is counted)."""
    if _VERSIONS:
        key = id(_owner(a))
        if key in _VERSIONS:
            _VERSIONS[key] += 1


class Saved:
    """An array a node saved, with its memory's version at the time; ``tensor`` (a weak
    reference) and ``output`` name it in the error, ``input`` is the position among the node's
    inputs of the tensor it is (None for a result or another array)."""

    __slots__ = ("array", "input", "key", "output", "tensor", "version")

    def __init__(self, array: np.ndarray, key: int, version: int, tensor: Any, output: bool,
                 input: int | None) -> None:
        self.array = array
        self.key = key
        self.version = version
        self.tensor = tensor
        self.output = output
        self.input = input

    def unpack(self, node: Node) -> np.ndarray:
        now = _VERSIONS.get(self.key, 0)
        if now != self.version:
            raise RuntimeError(self._modified(node, now))
        return self.array

    def _modified(self, node: Node, now: int) -> str:
        kind = _TYPE_NAMES.get(self.array.dtype.name, "Float")
        what = f"[torch.{kind}Tensor [{', '.join(map(str, self.array.shape))}]]"
        tensor = self.tensor() if self.tensor is not None else None
        maker = node if self.output else getattr(tensor, "_node", None)
        if maker is not None and not isinstance(maker, AccumulateGrad):
            name = re.sub(r"Backward\d*$", "", maker.name())
            what += f", which is output 0 of {name},"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {what} is at version {now}; expected version {self.version} "
            "instead. Hint: enable anomaly detection to find the operation that failed to "
            "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )


def save(array: np.ndarray, tensor: Any = None, output: bool = False,
         input: int | None = None) -> Saved:
    """``array`` kept for a backward rule, with its memory's version now."""
    owner = _owner(array)
    key = id(owner)
    if key not in _VERSIONS:
        _VERSIONS[key] = 0
        weakref.finalize(owner, _VERSIONS.pop, key, None)
    ref = weakref.ref(tensor) if tensor is not None else None
    return Saved(array, key, _VERSIONS[key], ref, output, input)


# ---- nodes ---------------------------------------------------------------------------------------

_SEQUENCE = itertools.count()
Meta = tuple[tuple[int, ...], np.dtype]  # an input's shape and dtype


class Node:
    """One operation of the graph (torch's ``grad_fn``): ``name()`` as torch names it
    (``ExpBackward0``, ``torch::autograd::CopySlices``; printed without the namespace),
    ``next_functions`` its inputs' nodes."""

    __slots__ = ("__weakref__", "_name", "inputs", "metas", "retained", "rule", "saved",
                 "sequence")

    def __init__(self, name: str, rule: Callable[..., Sequence[Any]] | None,
                 inputs: tuple[Node | None, ...], metas: tuple[Meta, ...],
                 saved: tuple[Saved | None, ...] = ()) -> None:
        self._name = name
        self.rule = rule
        self.inputs = inputs
        self.metas = metas
        self.saved: tuple[Saved | None, ...] | None = saved  # None once freed
        self.sequence = next(_SEQUENCE)
        self.retained: Any = None  # the tensor (weak) whose retain_grad() asked for its gradient

    def name(self) -> str:
        return self._name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((node, 0) for node in self.inputs)

    def __repr__(self) -> str:
        return f"<{self._name.rsplit('::', 1)[-1]} object at {id(self):#x}>"

    def __lt__(self, other: Node) -> bool:  # the ready queue: the most recent node first
        return self.sequence > other.sequence


class AccumulateGrad(Node):
    """A leaf that requires grad: what reaches it is added to the tensor's ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        super().__init__("torch::autograd::AccumulateGrad", None, (), ())
        self.variable = weakref.ref(variable)
        MODE.leaves += 1

    def __del__(self, mode: _Mode = MODE) -> None:  # bound now: at exit the global may be gone
        mode.leaves -= 1


# ---- the backward pass -------------------------------------------------------------------------


def sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``grad`` summed over the dimensions that broadcasting added to ``shape`` (torch's
    ``at::sum_to``), floats as ``kernels.float_sum``."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    if lead < 0:  # a value with extra leading ones, written into fewer dimensions
        return grad.reshape(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1
    )
    if grad.dtype.kind == "f":
        out = float_sum(grad, axes)
    else:
        out = np.sum(grad, axis=axes, dtype=grad.dtype)
    return np.asarray(out).reshape(shape)


def _fit(grad: Any, meta: Meta) -> np.ndarray:
    shape, dt = meta
    grad = sum_to(np.asarray(grad), shape)
    return grad if grad.dtype == dt else grad.astype(dt)


def _graph(roots: Sequence[Node]) -> tuple[dict[Node, int], list[Node]]:
    """How many edges lead into each node reachable from ``roots``, and those nodes."""
    deps: dict[Node, int] = {}
    seen = set()
    stack = list(roots)
    order = []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for child in node.inputs:
            if child is not None:
                deps[child] = deps.get(child, 0) + 1
                stack.append(child)
    return deps, order


def _needed(order: list[Node], targets: set[Node]) -> set[Node]:
    """The nodes from which some target can be reached (the targets included)."""
    need = set(targets)
    changed = True
    while changed:  # graphs here are small; a fixpoint keeps it simple
        changed = False
        for node in order:
            if node not in need and any(c in need for c in node.inputs if c is not None):
                need.add(node)
                changed = True
    return need


def run_backward(roots: Sequence[Node], grads: Sequence[np.ndarray], retain_graph: bool,
                 targets: Sequence[Node] | None = None) -> dict[Node, np.ndarray]:
    """Send ``grads`` back from the nodes ``roots``. Returns the gradient that reached each
    target (``targets`` given: only the nodes on a way to one run), or else each leaf and each
    node whose tensor asked ``retain_grad()``."""
    deps, order = _graph(roots)
    wanted = set(targets) if targets is not None else None
    need = _needed(order, wanted) if wanted is not None else None
    buffers: dict[Node, np.ndarray] = {}
    for node, grad in zip(roots, grads, strict=True):
        buffers[node] = buffers[node] + grad if node in buffers else grad
    ready = [node for node in order if deps.get(node, 0) == 0]
    heapq.heapify(ready)
    found: dict[Node, np.ndarray] = {}
    while ready:
        node = heapq.heappop(ready)
        grad = buffers.pop(node, None)
        if grad is not None:
            if wanted is None:
                if isinstance(node, AccumulateGrad) or node.retained is not None:
                    found[node] = grad
            elif node in wanted:
                found[node] = grad
        run = (grad is not None and node.rule is not None
               and (need is None or any(c in need for c in node.inputs if c is not None)))
        if run:
            _run(node, grad, buffers, retain_graph)
        for child in node.inputs:
            if child is not None:
                deps[child] -= 1
                if deps[child] == 0:
                    heapq.heappush(ready, child)
    return found


def _run(node: Node, grad: np.ndarray, buffers: dict[Node, np.ndarray],
         retain_graph: bool) -> None:
    if node.saved is None:
        raise RuntimeError(FREED)
    arrays = [None if s is None else s.unpack(node) for s in node.saved]
    assert node.rule is not None
    with np.errstate(all="ignore"):  # inf and NaN are values here, as in torch
        outs = node.rule(grad, *arrays)
    for child, meta, out in zip(node.inputs, node.metas, outs, strict=True):
        if child is None or out is None:
            continue
        out = _fit(out, meta)
        if child in buffers:
            with np.errstate(all="ignore"):
                out = buffers[child] + out
        buffers[child] = out
    if not retain_graph and any(s is not None for s in node.saved):
        node.saved = None
