"""``torch.Tensor`` over a NumPy array: operators, indexing, reductions and shape methods.

A Tensor holds one ``np.ndarray`` (``_data``). Basic indexing and shape methods return NumPy
views, so writes through ``t[:, i]``, ``t[0]`` or ``t.view(...)`` reach the original tensor as in
torch; advanced (tensor or list) indexing copies, as in torch.

The rules mirrored from torch's CPU build (not NumPy's):

* dtypes follow torch's promotion (``result_type`` below, with the tier rule of ``dtypes``);
  Python floats become float32, so ``float32_tensor * 0.1`` multiplies by ``float32(0.1)``;
* ``/`` is true division and turns integers into float32;
* float sums are accumulated in float64 and rounded once (``kernels.float_sum``); ``mean`` is
  that sum divided by the count, and refuses integer tensors;
* ``x ** 2`` is ``x * x``, ``x ** 0.5`` is ``sqrt`` (torch's special cases);
* ``exp``/``log``/``expm1``/``log1p``/``tanh`` are computed in float64 and rounded once
  (``kernels.float_unary``): within 2 ulps of torch's SLEEF kernels; ``sigmoid`` is torch's
  ``1 / (1 + exp(-x))`` step by step.

What is exact and what is within a bound is the contract in ``kernels``.

**Autograd.** Each differentiable operation, when grad mode is on and an input requires grad,
gives its result a node (``record``): torch's name, its inputs' nodes, the arrays torch's
formula saves (``keep``), and the formula (``derivatives``); ``graph`` runs the backward pass.
While no leaf requires grad (``graph.MODE.leaves`` is 0) an operation checks nothing more and
makes no node. Rules exist for: ``+ − × ÷`` (reflected and in place), ``neg``, ``pow`` (number,
tensor and base forms), ``%``, ``exp log expm1 log1p sqrt rsqrt abs sigmoid tanh relu square
reciprocal``, ``sign floor ceil round trunc`` (zero), ``clamp``/``clip``/``clamp_min``/
``clamp_max`` (number and tensor bounds), ``maximum minimum``, ``max min`` (all, along a dim,
elementwise), ``amax amin``, ``where masked_fill`` (and ``masked_fill_``), ``sum mean var std``,
``logsumexp softmax log_softmax``, ``gather``, indexing (basic: a view; advanced: a copy),
writes by index (``t[k] = v``), ``reshape view flatten unsqueeze squeeze expand transpose
permute t T mT flip repeat clone contiguous``, ``iter`` (rows), casts between floats, ``cumsum``,
``topk`` (values), ``quantile``, ``fill_ zero_ copy_``, and in ``functions``/``nn.functional``:
``cat stack logsigmoid softplus mse_loss`` (the last a composite). Integer and bool results
carry no gradient. ``//`` records torch's ``NotImplemented`` node: its backward raises torch's
error. There is no ``@`` (matmul) in the layer.

*Views and in-place writes.* A view (``_view``) remembers its base tensor (``_base``). An
in-place operation checks torch's errors (a leaf that requires grad, or a view of one), copies
the original values the result's node saved (torch's ``original_self``), writes, counts the
write (``graph.bump``: a saved array written since makes the backward raise, as in torch) and
gives the tensor the result's history; written through a view, the base gets a
``CopySlices`` node and its other views read their values back from it (``AsStridedBackward0``)
when next used. ``t[k] = v`` is ``CopySlices`` (``IndexPutBackward0`` for tensor indices), so
``advantages[:, t] = gae`` in a loop makes zeros that do not require grad require it.

*What differs from torch:* no double backward (``create_graph``), hooks, custom ``Function``,
forward mode or anomaly detection; ``inference_mode`` is ``no_grad`` (no inference tensors);
writes through ``.data`` are counted as versions (torch does not count them); ties in ``topk``
and ``quantile`` give the gradient to the first equal value by index (torch's order of ties is
unspecified); ``quantile`` and ``mse_loss`` name their last node otherwise than torch; version
numbers in the in-place error count from the first time a node saved the memory.

Besides the class, this module holds what both a method and a torch function need (``power``,
``where``, ``result_type``, ``from_data``, ``record``…), so that ``functions`` and
``nn.functional`` import from here and nothing here imports them: the layer's imports go one way
(see ``tests/test_torch_layer_structure.py``).
"""

from __future__ import annotations

import builtins
import math
import numbers
import operator
import warnings
import weakref
from collections import namedtuple
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

from . import derivatives as rules
from . import dtypes
from .dtypes import DEFAULT_FLOAT, combine_tiers, dtype, from_numpy_dtype, promote, scalar_dtype
from .errors import CPU_ONLY, unsupported
from .graph import MODE, AccumulateGrad, Node, Saved, bump, run_backward, save
from .kernels import float_pow, float_sum, float_unary
from .printing import tensor_repr

__all__ = [
    "Size",
    "Tensor",
    "as_operand",
    "autograd_backward",
    "autograd_grad",
    "check_broadcast",
    "device",
    "from_data",
    "grad_on",
    "is_scalar",
    "keep",
    "normalize_dim",
    "parse_shape",
    "power",
    "record",
    "recording",
    "result_type",
    "where",
]

# torch's ScalarType names, as its error messages spell them
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
               "bool": "Bool"}


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(n) for n in self)}])"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:
        out = super().__getitem__(key)
        return Size(out) if isinstance(key, slice) else out

    def numel(self) -> int:
        return math.prod(self)


class device:
    """``torch.device``; only the CPU exists in the browser."""

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:
        name = str(type)
        if name.split(":")[0] != "cpu":
            raise unsupported(f"device {name!r}", hint=CPU_ONLY)
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) or other == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


CPU = device("cpu")

MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])


def _return_type_repr(self: tuple) -> str:
    fields = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self, strict=True))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


MaxResult.__repr__ = _return_type_repr  # type: ignore[method-assign]
MinResult.__repr__ = _return_type_repr  # type: ignore[method-assign]
TopkResult.__repr__ = _return_type_repr  # type: ignore[method-assign]


def is_scalar(value: object) -> bool:
    """A Python (or NumPy) number that torch treats as a 'wrapped number'."""
    return isinstance(value, (numbers.Real, np.bool_)) and not isinstance(value, Tensor)


def as_operand(value: object, dt: dtype) -> np.ndarray:
    """A tensor's data or a Python number as an array of dtype ``dt`` (no copy if it already is)."""
    if isinstance(value, Tensor):
        return value._data.astype(dt.np_dtype, copy=False)
    if is_scalar(value):
        return np.asarray(value).astype(dt.np_dtype)
    raise TypeError(f"unsupported operand type for a tensor operation: {type(value).__name__}")


def result_type(*operands: object) -> dtype:
    """torch.result_type over tensors and Python numbers: each operand promoted within its tier
    (tensors with dimensions, 0-d tensors, numbers), then the tiers combined
    (``dtypes.combine_tiers``)."""
    dimensioned = zero_dim = wrapped = None
    for op in operands:
        if isinstance(op, Tensor):
            if op.dim() > 0:
                dimensioned = promote(dimensioned, op.dtype)
            else:
                zero_dim = promote(zero_dim, op.dtype)
        elif op is not None:
            wrapped = promote(wrapped, scalar_dtype(op))
    return combine_tiers(dimensioned, zero_dim, wrapped)


def normalize_dim(dim: int, ndim: int) -> int:
    """A dim in ``[-ndim, ndim)`` as a non-negative axis (0-d tensors accept -1 and 0)."""
    if isinstance(dim, Tensor):
        dim = dim.__index__()
    if not isinstance(dim, numbers.Integral):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return int(dim) % n


def _normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """dim=None/()/[] → every axis; an int or a sequence → sorted distinct axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if not dims:
        return tuple(range(ndim))
    axes = [normalize_dim(d, ndim) for d in dims]
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return tuple(sorted(a for a in axes if a < ndim))


def _can_cast(src: dtype, dst: dtype) -> bool:
    # torch's canCast for in-place results: no float → integer, nothing but bool → bool
    if src.is_floating_point and not dst.is_floating_point:
        return False
    return not (src is not dtypes.bool_ and dst is dtypes.bool_)


def _type_name(dt: dtype) -> str:
    return _TYPE_NAMES[dt.name]


def parse_shape(args: Sequence[Any], name: str | None = None) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` all mean (2, 3).

    With ``name`` (a creation function), an empty argument list is refused, as torch does.
    """
    if name and not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    shape = []
    for n in args:
        if isinstance(n, Tensor):
            n = n.__index__()
        if not isinstance(n, numbers.Integral) or isinstance(n, bool):
            raise TypeError(f"a shape needs ints, got {type(n).__name__}")
        shape.append(int(n))
    return tuple(shape)


def _infer(data: Any, depth: int = 0) -> tuple[list[Any], tuple[int, ...], dtype | None]:
    """Flatten nested sequences; return the values, the shape and torch's inferred dtype."""
    if isinstance(data, Tensor):
        if depth and data.numel() != 1:  # inside a list a tensor must be a single number
            raise TypeError("only integer tensors of a single element can be converted to an index")
        shape = () if depth else data._data.shape
        return data._data.reshape(-1).tolist(), shape, data.dtype
    if isinstance(data, np.ndarray):
        return data.reshape(-1).tolist(), data.shape, from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return [data.item()], (), from_numpy_dtype(data.dtype)
    if is_scalar(data):
        return [data], (), scalar_dtype(data)
    if not isinstance(data, (list, tuple)):
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if not data:
        return [], (0,), None
    parts = [_infer(item, depth + 1) for item in data]
    inner = parts[0][1]
    for _, shape, _ in parts[1:]:
        if shape != inner:
            raise ValueError(
                f"expected sequence of length {inner[0] if inner else 0} at dim {depth + 1} "
                f"(got {shape[0] if shape else 0})"
            )
    values = [v for part in parts for v in part[0]]
    inferred = None
    for _, _, dt in parts:
        inferred = promote(inferred, dt)
    return values, (len(data), *inner), inferred


def from_data(data: Any, dt: dtype | None = None) -> Tensor:
    """A copy of ``data`` (numbers, nested sequences, arrays, tensors) as a tensor of dtype ``dt``,
    or torch's inferred one: Python floats → float32, ints → int64, bools → bool.

    What ``torch.tensor`` and ``Tensor.new_tensor`` do once their keywords are checked, with
    torch's warning for a tensor given as data (reported at their caller's line).
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=3,
        )
    values, shape, inferred = _infer(data)
    target = dt or inferred or DEFAULT_FLOAT
    if isinstance(data, (Tensor, np.ndarray)):
        arr = np.array(np.asarray(data._data if isinstance(data, Tensor) else data),
                       dtype=target.np_dtype)
    else:
        arr = np.array(values, dtype=target.np_dtype).reshape(shape)
    return Tensor._make(arr)


# ---- autograd: what each operation records -----------------------------------------------------
# (the engine and the design are in ``graph``, the formulas in ``derivatives``)

NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)
LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_IN_PLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
NOT_LEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


def grad_on(t: Any) -> bool:
    """``t`` is a tensor that requires grad (a view, also when its base gained a history after
    the view was made)."""
    return t.__class__ is Tensor and (
        t._node is not None or (t._base is not None and t._base._node is not t._seen)
    )


def recording(*inputs: Any) -> bool:
    """Grad mode is on and one of ``inputs`` requires grad: the operation records its node.
    Operations ask behind ``MODE.leaves and``: while no leaf requires grad, no tensor does."""
    return MODE.enabled and builtins.any(grad_on(t) for t in inputs)


def _node_of(t: Tensor) -> Node | None:
    """The node ``t``'s gradient goes to: its grad_fn, its AccumulateGrad, or None. A view whose
    base was written in place since gets its values' new history, as in torch (a gather from
    the base's new node, AsStridedBackward0)."""
    base = t._base
    if base is not None and base._node is not t._seen:
        node = base._node
        t._seen = node
        t._node = None if node is None else Node(
            "AsStridedBackward0",
            partial(rules.as_strided, base._data.shape, _positions(t._data, base._data)),
            (node,), ((base._data.shape, base._data.dtype),),
        )
    return t._node


def _meta(t: Any) -> tuple[tuple[int, ...], np.dtype] | None:
    return (t._data.shape, t._data.dtype) if isinstance(t, Tensor) else None


def keep(array: np.ndarray, tensor: Any = None, input: int | None = None,
          output: bool = False) -> Saved:
    """An array a node saves; with the tensor it belongs to, its in-place writes are counted."""
    if tensor is None and not output:
        return Saved(array, -1, 0, None, False, None)  # a number or a copy: never written
    return save(array, tensor, output, input)


def record(out: Tensor, name: str, inputs: Sequence[Any], rule: Callable[..., Any],
            saved: Sequence[Saved | None] = ()) -> Tensor:
    """Give ``out`` the node of the operation that made it from ``inputs`` (tensors, or
    anything else for an argument without gradient); integer and bool results carry none."""
    if out._data.dtype.kind == "f":
        out._node = Node(name, rule, tuple(_node_of(t) if isinstance(t, Tensor) else None
                                           for t in inputs),
                         tuple(_meta(t) for t in inputs), tuple(saved))
    return out


def _unary(out: Tensor, x: Tensor, name: str, rule: Callable[..., Any],
           saved: np.ndarray | None = None, result: bool = False) -> Tensor:
    """``out = f(x)``'s node if x requires grad (grad mode on): ``saved`` is x's data, or the
    result's with ``result``."""
    if MODE.leaves and recording(x):
        kept = () if saved is None else (
            keep(saved, out, output=True) if result else keep(saved, x, 0),)
        record(out, name, (x,), rule, kept)
    return out


def _view(x: Tensor, data: np.ndarray) -> Tensor:
    """A tensor over ``x``'s memory (a view): writes through it reach ``x``'s base, and an
    in-place operation on it rewrites the base's history (CopySlices), as in torch. The caller
    records its node (``_viewed``)."""
    out = Tensor.__new__(Tensor)
    out._data = data
    out._node = None
    base = x._base
    if base is None:
        base = x
    out._base = base
    out._seen = base._node
    return out


def _viewed(out: Tensor, x: Tensor, name: str, rule: Callable[..., Any]) -> Tensor:
    """A view's node, made by ``_view``: the view of a tensor that requires grad."""
    record(out, name, (x,), rule)
    return out


def _positions(view: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Where each element of ``view`` lies in ``base`` (flat, C order): both see one memory."""
    def offsets(a: np.ndarray, start: int) -> np.ndarray:
        out = np.full(a.shape, start, np.int64)
        for axis, (n, stride) in enumerate(zip(a.shape, a.strides, strict=True)):
            shape = [1] * a.ndim
            shape[axis] = n
            out = out + np.arange(n, dtype=np.int64).reshape(shape) * stride
        return out

    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    where = offsets(base, 0).reshape(-1)
    order = np.argsort(where, kind="stable")
    found = np.searchsorted(where[order], offsets(view, start).reshape(-1))
    return order[found].reshape(view.shape)


def _check_write(t: Tensor, basic_index: bool = False) -> None:
    """torch's errors for an in-place write, with grad mode on, to a leaf that requires grad or
    to a view of one (``t[i] = v`` writes into a view: ``basic_index``)."""
    node = _node_of(t)
    if isinstance(node, AccumulateGrad):
        raise RuntimeError(VIEW_OF_LEAF_IN_PLACE if basic_index else LEAF_IN_PLACE)
    if t._base is not None and isinstance(t._base._node, AccumulateGrad):
        raise RuntimeError(VIEW_OF_LEAF_IN_PLACE)


def _written(t: Tensor, node: Node | None) -> None:
    """After an in-place write to ``t``'s memory: count it (saved copies of it are now stale)
    and, if the write is recorded, make ``node`` ``t``'s history; a view's is written into its
    base's (CopySlices), and the view reads it back from there (AsStridedBackward0)."""
    bump(t._data)
    if node is None:
        return
    base = t._base
    if base is None:
        t._node = node
        return
    positions = _positions(t._data, base._data)
    base._node = Node("torch::autograd::CopySlices", partial(rules.index_put, positions),
                      (base._node, node), (_meta(base), _meta(t)))
    t._seen = base._node
    t._node = Node("AsStridedBackward0", partial(rules.as_strided, base._data.shape, positions),
                   (base._node,), (_meta(base),))


def _outputs(values: Any, name: str) -> list[Any]:
    if isinstance(values, Tensor) or values is None:
        return [values]
    return list(values)


def _execute(outputs: list[Tensor], grad_outputs: list[Any], retain_graph: bool | None,
             create_graph: bool, inputs: list[Tensor] | None) -> tuple[dict, list]:
    """Run the engine from ``outputs``; torch's checks and errors on the way in."""
    if create_graph:
        raise unsupported("create_graph=True (a backward that builds a graph: double "
                          "backward)")
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one gradient per output: got {len(grad_outputs)} "
                           f"for {len(outputs)} outputs")
    roots, grads = [], []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if not isinstance(out, Tensor):
            raise TypeError(f"outputs must be tensors, not {type(out).__name__}")
        node = _node_of(out)
        if node is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g_data = np.ones(out._data.shape, out._data.dtype)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor or None, not {type(g).__name__}")
            if g.shape != out.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {out.shape}.")
            g_data = g._data.astype(out._data.dtype)
        roots.append(node)
        grads.append(g_data)
    targets = None
    if inputs is not None:
        targets = []
        for t in inputs:
            node = _node_of(t) if isinstance(t, Tensor) else None
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.append(node)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    return run_backward(roots, grads, retain, targets), targets or []


def _accumulate(t: Tensor, g: np.ndarray) -> None:
    """AccumulateGrad: the first gradient is kept as a new tensor, later ones added into it."""
    current = t._grad if _has_grad(t) else None
    if current is None:
        t._grad = Tensor._make(np.array(g, dtype=t._data.dtype).reshape(t._data.shape))
        return
    with np.errstate(all="ignore"):
        np.add(current._data, g, out=current._data, casting="unsafe")
    bump(current._data)


def _has_grad(t: Tensor) -> bool:
    try:
        t._grad  # noqa: B018 (an unset slot raises)
    except AttributeError:
        return False
    return True


def autograd_backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
                      create_graph: bool = False, inputs: Any = None) -> None:
    """``torch.autograd.backward`` (and ``Tensor.backward``): the gradients of ``tensors``
    added into the ``.grad`` of the leaves (of ``inputs`` only, if given) and of the tensors
    that asked ``retain_grad()``."""
    outputs = _outputs(tensors, "tensors")
    grads = [None] * len(outputs) if grad_tensors is None else _outputs(grad_tensors, "grads")
    chosen = None if inputs is None else _outputs(inputs, "inputs")
    found, targets = _execute(outputs, grads, retain_graph, create_graph, chosen)
    if chosen is not None:
        for t, node in zip(chosen, targets, strict=True):
            if node in found:
                _accumulate(t, found[node])
        return
    for node, g in found.items():
        owner = node.variable if isinstance(node, AccumulateGrad) else node.retained
        t = owner() if owner is not None else None
        if t is not None:
            _accumulate(t, g)


def autograd_grad(outputs: Any, inputs: Any, grad_outputs: Any = None,
                  retain_graph: bool | None = None, create_graph: bool = False,
                  only_inputs: bool = True, allow_unused: bool | None = None,
                  is_grads_batched: bool = False,
                  materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """``torch.autograd.grad``: the gradients of ``outputs`` with respect to ``inputs``, as a
    tuple (nothing is added to ``.grad``)."""
    if is_grads_batched:
        raise unsupported("torch.autograd.grad(is_grads_batched=True)")
    outs = _outputs(outputs, "outputs")
    ins = _outputs(inputs, "inputs")
    grads = [None] * len(outs) if grad_outputs is None else _outputs(grad_outputs, "grads")
    found, targets = _execute(outs, grads, retain_graph, create_graph, ins)
    result: list[Tensor | None] = []
    for i, (t, node) in enumerate(zip(ins, targets, strict=True)):
        g = found.get(node)
        if g is None:
            if materialize_grads:
                result.append(Tensor._make(np.zeros(t._data.shape, t._data.dtype)))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        else:
            result.append(Tensor._make(np.array(g, dtype=t._data.dtype).reshape(t._data.shape)))
    return tuple(result)


# ---- factories of the uniform methods -----------------------------------------------------------
# Each one makes a method from a table row, one visible line per name at the end of ``Tensor``
# (array-api-compat's way); what differs from its row is written out in the class, with its reason.


def _named(name: str, doc: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` named ``Tensor.<name>`` (as tracebacks and argument errors print it)."""
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = doc
    return method


def _arithmetic(name: str, ufunc: Any, kernel: str, reverse: bool = False) -> Callable[..., Any]:
    """``self ∘ other`` (``other ∘ self`` if ``reverse``) with torch's promotion and errors;
    ``kernel`` is the operation's name in them."""

    def method(self: Tensor, other: Any) -> Tensor:
        return self._binary(other, ufunc, kernel, reverse)

    a, b = ("other", "self") if reverse else ("self", "other")
    return _named(name, f"{a} {ufunc.__name__} {b}", method)


def _bitwise(name: str, ufunc: Any, kernel: str, reverse: bool = False) -> Callable[..., Any]:
    """``&``, ``|``, ``^`` on bool and integer tensors (torch refuses floats, naming ``kernel``)."""

    def method(self: Tensor, other: Any) -> Tensor:
        return self._logical(other, ufunc, kernel, reverse)

    a, b = ("other", "self") if reverse else ("self", "other")
    return _named(name, f"{a} {ufunc.__name__} {b}", method)


def _comparison(name: str, ufunc: Any) -> Callable[..., Any]:
    """A comparison: a bool tensor, with torch's promotion of the two operands."""

    def method(self: Tensor, other: Any) -> Tensor:
        return self._compare(other, ufunc)

    return _named(name, f"self {ufunc.__name__} other, elementwise, as a bool tensor", method)


def _in_place(name: str, op: Callable[[Tensor, Any], Tensor]) -> Callable[..., Any]:
    """``self = self ∘ other`` in place: the result of the operator ``op``, cast back to this
    tensor's dtype if torch allows it."""

    def method(self: Tensor, other: Any) -> Tensor:
        return self._inplace(op(self, other))

    return _named(name, f"self = self {op.__name__.strip('_')} other, in place", method)


def _reduction(name: str, func: Any, backward: str | None = None) -> Callable[..., Any]:
    """A reduction over ``dim`` (None: every axis) in NumPy's result dtype: the tensor's for
    amax and amin (whose gradient goes to the ties, shared: ``backward``), bool for all and
    any."""

    def method(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        axes = _normalize_dims(dim, self.ndim)
        out = Tensor._make(func(self._data, axis=axes, keepdims=keepdim))
        if backward is not None and MODE.leaves and recording(self):
            record(out, backward, (self,), partial(rules.amax, axes, keepdim),
                    (keep(self._data, self, 0), keep(out._data, out, output=True)))
        return out

    return _named(name, f"{name}(self, dim=None, keepdim=False)", method)


def _float_function(name: str, ufunc: Any, backward: str, rule: Callable[..., Any],
                    on_result: bool) -> Callable[..., Any]:
    """A transcendental function: integers become the default float, then float64 and one
    rounding (``kernels.float_unary``: within 2 ulps of torch). Its node ``backward`` saves the
    result (``on_result``) or the input, as torch's formula needs."""

    def method(self: Tensor) -> Tensor:
        x = self._float_input()
        out = Tensor._make(float_unary(ufunc, x))
        return _unary(out, self, backward, rule, out._data if on_result else x, on_result)

    return _named(name, f"{name}(self), elementwise", method)


def _exact_function(name: str, ufunc: Any, backward: str | None = None) -> Callable[..., Any]:
    """An exact elementwise function in the tensor's dtype (round: half to even, like torch);
    the rounding ones and sign have a zero gradient (node ``backward``)."""

    def method(self: Tensor) -> Tensor:
        out = Tensor._make(ufunc(self._data))
        return out if backward is None else _unary(out, self, backward, rules.zero)

    return _named(name, f"{name}(self), elementwise", method)


def _logical_function(name: str, ufunc: Any) -> Callable[..., Any]:
    """A logical function of two tensors, the other one read as bool."""

    def method(self: Tensor, other: Any) -> Tensor:
        return Tensor._make(ufunc(self._data, as_operand(other, dtypes.bool_)))

    return _named(name, f"{name}(self, other)", method)


class Tensor:
    """A CPU tensor of float32, float64, int64, int32 or bool, with torch's autograd.

    Slots: ``_data`` (the values), ``_node`` (None, or the node its gradient goes to: see
    ``graph``), ``_base`` (for a view, the tensor whose memory it views, else None), ``_seen``
    (a view's base's node when the view's own node was made), ``_grad`` (``.grad``, unset until
    a backward or an assignment).
    """

    __slots__ = ("__weakref__", "_base", "_data", "_grad", "_node", "_seen")
    __array_priority__ = 1000  # NumPy scalars on the left defer to the tensor's reflected ops
    __array_ufunc__ = None

    def __init__(self, *args: Any) -> None:
        # torch.Tensor(data) copies data as float32; torch.Tensor(2, 3) is uninitialised memory,
        # for which zeros are a safe stand-in.
        self._node = self._base = None
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, Tensor)):
            source = args[0]._data if isinstance(args[0], Tensor) else args[0]
            self._data = np.array(np.asarray(source), dtype=np.float32)
        else:
            self._data = np.zeros(parse_shape(args), np.float32)

    @classmethod
    def _make(cls, data: Any) -> Tensor:
        t = cls.__new__(cls)
        t._data = np.asarray(data)
        t._node = t._base = None
        return t

    # ---- unsupported attributes ------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # dunders, and the slots not set yet (``_grad``)
            raise AttributeError(name)
        raise unsupported(f"Tensor.{name}", _TENSOR_API)

    # ---- metadata ----------------------------------------------------------------------------

    @property
    def dtype(self) -> dtype:
        return from_numpy_dtype(self._data.dtype)

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self) -> device:
        return CPU

    is_cuda = False  # the CPU only

    # ---- autograd ------------------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return _node_of(self) is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    @property
    def grad_fn(self) -> Node | None:
        node = _node_of(self)
        return None if isinstance(node, AccumulateGrad) else node

    @property
    def is_leaf(self) -> bool:
        node = _node_of(self)
        return node is None or isinstance(node, AccumulateGrad)

    @property
    def grad(self) -> Tensor | None:
        node = _node_of(self)
        if node is not None and not isinstance(node, AccumulateGrad) and (
            node.retained is None or node.retained() is not self
        ):
            warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=2)
            return None
        return self._grad if _has_grad(self) else None

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the tensor "
                    "are the same size"
                )
        self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        node = _node_of(self)
        if node is not None and not isinstance(node, AccumulateGrad):
            if not requires_grad:
                raise RuntimeError(NOT_LEAF_FLAG)
            return self
        if not requires_grad:
            self._node = None
        elif node is None:
            if not self.dtype.is_floating_point:
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            self._node = AccumulateGrad(self)
            if self._base is not None:
                self._seen = self._base._node
        return self

    def retain_grad(self) -> None:
        node = _node_of(self)
        if node is None:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if not isinstance(node, AccumulateGrad):
            node.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        node = _node_of(self)
        return node is not None and getattr(node, "retained", None) is not None and \
            node.retained() is self

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """The gradient of this tensor (``gradient`` times it, for a non-scalar) added into
        the ``.grad`` of the leaves it was computed from (see ``graph``)."""
        autograd_backward(self, None if gradient is None else [gradient], retain_graph,
                          create_graph, inputs)

    @property
    def data(self) -> Tensor:
        return Tensor._make(self._data)

    @property
    def T(self) -> Tensor:
        out = _view(self, self._data.T)
        if MODE.leaves and recording(self):
            _viewed(out, self, "PermuteBackward0",
                    partial(rules.permute, tuple(range(self.ndim))[::-1]))
        return out

    @property
    def mT(self) -> Tensor:
        return self.transpose(-2, -1)

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return self.shape
        if self.ndim == 0:
            raise IndexError("dimension specified as 0 but tensor has no dimensions")
        return self._data.shape[normalize_dim(dim, self.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def get_device(self) -> int:
        return -1

    # ---- conversion ----------------------------------------------------------------------------

    def _one_element(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(-1)[0].item()

    def item(self) -> Any:
        return self._one_element()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if grad_on(self) and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        data = self.numpy()
        out = data if dtype is None else data.astype(dtype)
        return out.copy() if copy else out

    def __bool__(self) -> bool:
        if self._data.size != 1:
            amount = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {amount} is ambiguous")
        return bool(self._data.reshape(-1)[0])

    def __float__(self) -> float:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self._data.reshape(-1)[0])

    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self._data.reshape(-1)[0])

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(-1)[0])

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self._row(i) for i in range(self._data.shape[0]))

    def _row(self, i: int) -> Tensor:
        out = _view(self, self._data[i, ...])
        if MODE.leaves and recording(self):
            _viewed(out, self, "UnbindBackward0",
                    partial(rules.index, self._data.shape, (i, Ellipsis), False))
        return out

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        # torch: a 0-d tensor formats as its Python number; any other tensor only without a spec
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    # new_* make a tensor with this one's dtype (unless given), without its history
    def new_zeros(self, *size: Any, dtype: dtype | None = None, **kw: Any) -> Tensor:
        return self.new_full(parse_shape(size), 0, dtype=dtype, **kw)

    def new_ones(self, *size: Any, dtype: dtype | None = None, **kw: Any) -> Tensor:
        return self.new_full(parse_shape(size), 1, dtype=dtype, **kw)

    def new_empty(self, *size: Any, dtype: dtype | None = None, **kw: Any) -> Tensor:
        return self.new_full(parse_shape(size), 0, dtype=dtype, **kw)

    def new_full(self, size: Any, fill_value: Any, *, dtype: dtype | None = None,
                 requires_grad: bool = False, **_: Any) -> Tensor:
        target = dtype or self.dtype
        out = Tensor._make(np.full(parse_shape((size,)), fill_value, target.np_dtype))
        return out.requires_grad_() if requires_grad else out

    def new_tensor(self, data: Any, *, dtype: dtype | None = None, requires_grad: bool = False,
                   **_: Any) -> Tensor:
        out = from_data(data, dtype or self.dtype)
        return out.requires_grad_() if requires_grad else out

    def detach(self) -> Tensor:
        # the same memory (writes reach both), no history
        return Tensor._make(self._data)

    def detach_(self) -> Tensor:
        if self._base is not None and grad_on(self):
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._node = None
        return self

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return _unary(Tensor._make(self._data.copy()), self, "CloneBackward0", rules.cast)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return self if self._data.flags.c_contiguous else self.clone()

    def cpu(self) -> Tensor:
        return self

    def _cast(self, dt: dtype) -> Tensor:
        # torch's .to(dtype)/.float()/... return self when nothing changes
        if self.dtype is dt:
            return self
        return _unary(Tensor._make(self._data.astype(dt.np_dtype)), self, "ToCopyBackward0",
                      rules.cast)

    def float(self) -> Tensor:
        return self._cast(dtypes.float32)

    def double(self) -> Tensor:
        return self._cast(dtypes.float64)

    def long(self) -> Tensor:
        return self._cast(dtypes.int64)

    def int(self) -> Tensor:
        return self._cast(dtypes.int32)

    def bool(self) -> Tensor:
        return self._cast(dtypes.bool_)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        target = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, dtype):
                target = arg
            elif isinstance(arg, Tensor):
                target = arg.dtype
            else:
                dev = arg
        if dev is not None:
            device(str(dev))  # raises for anything but the CPU
        out = self._cast(target) if target is not None else self
        return out.clone() if copy and out is self else out

    def type_as(self, other: Tensor) -> Tensor:
        return self._cast(other.dtype)

    # ---- indexing ------------------------------------------------------------------------------

    def _index_key(self, key: Any) -> tuple[tuple[Any, ...], bool]:
        """The NumPy index for ``key``, and whether it is advanced (tensors, lists: a copy)."""
        items = list(key) if isinstance(key, tuple) else [key]
        advanced = False
        for i, k in enumerate(items):
            if isinstance(k, Tensor):
                if k.dtype.is_floating_point:
                    raise IndexError(
                        "tensors used as indices must be long, int, byte or bool tensors"
                    )
                items[i] = k._data
                advanced = True
            elif isinstance(k, slice):
                step = k.step.__index__() if isinstance(k.step, Tensor) else k.step
                if step is not None and step <= 0:
                    raise ValueError("step must be greater than zero")
                items[i] = slice(
                    k.start.__index__() if isinstance(k.start, Tensor) else k.start,
                    k.stop.__index__() if isinstance(k.stop, Tensor) else k.stop,
                    step,
                )
            elif isinstance(k, (list, np.ndarray)):
                advanced = True
            elif isinstance(k, (builtins.float, np.floating)):
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                    "Variables are valid indices (got float)"
                )
        if not advanced and not any(k is Ellipsis for k in items):
            items.append(Ellipsis)  # keeps integer indexing a view (0-d array, not a scalar)
        return tuple(items), advanced

    def __getitem__(self, key: Any) -> Tensor:
        index, advanced = self._index_key(key)
        data = self._data[index]
        if advanced:  # a copy (IndexBackward0)
            out = Tensor._make(data)
            if MODE.leaves and recording(self):
                record(out, "IndexBackward0", (self,),
                        partial(rules.index, self._data.shape, index, True))
            return out
        out = _view(self, data)
        if MODE.leaves and recording(self):
            _viewed(out, self, _basic_index_name(key),
                    partial(rules.index, self._data.shape, index, False))
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        index, advanced = self._index_key(key)
        node = None
        if MODE.leaves and recording(self, value):
            _check_write(self, basic_index=not advanced)
            # CopySlices (IndexPutBackward0 for tensor indices): self's gradient with the
            # written places zeroed, the value's taken from them
            positions = np.arange(self._data.size).reshape(self._data.shape)[index]
            node = Node("IndexPutBackward0" if advanced else "torch::autograd::CopySlices",
                        partial(rules.index_put, positions),
                        (_node_of(self), _node_of(value) if isinstance(value, Tensor) else None),
                        (_meta(self), _meta(value)))
        if isinstance(value, Tensor):
            value = value._data
        elif not is_scalar(value):
            value = np.asarray(value)
        # torch copies into the indexed elements with a cast to the tensor's dtype; with repeated
        # indices the last write wins (index_put_ without accumulate), as in NumPy
        self._data[index] = np.asarray(value).astype(self._data.dtype)
        if MODE.leaves:  # no leaf: no node saved anything, nothing to count
            _written(self, node)

    # ---- elementwise arithmetic --------------------------------------------------------------

    def _binary(self, other: Any, fn: Any, name: str, reverse: bool = False) -> Tensor:
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        dt = result_type(a, b)
        if name in ("sub", "rsub"):
            _check_sub(a, b)
        if name in ("floordiv", "mod") and dt is dtypes.bool_:
            kernel = "div_floor" if name == "floordiv" else "remainder"
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'Bool\'')
        if name == "div" and not dt.is_floating_point:
            dt = DEFAULT_FLOAT  # true division promotes integers to the default float
        x, y = as_operand(a, dt), as_operand(b, dt)
        check_broadcast(np.shape(x), np.shape(y))
        if name in ("floordiv", "mod") and not dt.is_floating_point and np.any(y == 0):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(all="ignore"):
            out = fn(x, y)
        result = Tensor._make(np.asarray(out).astype(dt.np_dtype, copy=False))
        if MODE.leaves and recording(a, b):
            _record_binary(result, name, a, b, x, y)
        return result

    def __rtruediv__(self, other: Any) -> Tensor:
        # torch computes number / tensor as tensor.reciprocal() * number (torch/_tensor.py)
        if not is_scalar(other):
            return self._binary(other, np.true_divide, "div", reverse=True)
        return self.reciprocal() * other

    def reciprocal(self) -> Tensor:
        x = self._float_input()
        with np.errstate(all="ignore"):
            out = Tensor._make(x.dtype.type(1) / x)
        return _unary(out, self, "ReciprocalBackward0", rules.reciprocal, out._data, result=True)

    def __pow__(self, other: Any) -> Tensor:
        return power(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return power(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        raise unsupported("Tensor.__matmul__ (the @ operator)", _TENSOR_API)

    def _logical(self, other: Any, fn: Any, name: str, reverse: bool = False) -> Tensor:
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        dt = result_type(self, other)
        if dt.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_type_name(dt)}\'')
        x, y = as_operand(self, dt), as_operand(other, dt)
        return Tensor._make(fn(y, x) if reverse else fn(x, y))

    def __invert__(self) -> Tensor:
        if self.dtype.is_floating_point:
            raise TypeError("~ (bitwise_not) is only supported for integer and bool tensors")
        return Tensor._make(np.invert(self._data))

    def __neg__(self) -> Tensor:
        if self.dtype is dtypes.bool_:
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return _unary(Tensor._make(np.negative(self._data)), self, "NegBackward0", rules.neg)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return self.abs()

    def _compare(self, other: Any, fn: Any) -> Tensor:
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        dt = result_type(self, other)
        return Tensor._make(fn(as_operand(self, dt), as_operand(other, dt)))

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other: Any) -> Tensor:
        return self * other

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return self // other
        if rounding_mode == "trunc":
            return (self / other).trunc()._cast(result_type(self, other))
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")

    def pow(self, exponent: Any) -> Tensor:
        return power(self, exponent)

    def neg(self) -> Tensor:
        return -self

    # in-place versions: the result must be castable to this tensor's dtype, as in torch
    def _inplace(self, result: Tensor) -> Tensor:
        """Write ``result`` (computed out of place from this tensor) into it: its history
        becomes the result's, with the original values the result's node saved copied first,
        as torch saves ``original_self`` (other saved tensors keep their versions: ``y.mul_(y)``
        fails at backward as in torch)."""
        if not _can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"result type {_type_name(result.dtype)} can't be cast to the desired output "
                f"type {_type_name(self.dtype)}"
            )
        node = None
        if MODE.leaves and recording(self, result):
            _check_write(self)
            node = result._node
            if node is not None and node.saved:
                node.saved = tuple(
                    keep(k.array.copy()) if k is not None and k.input == 0
                    and np.may_share_memory(k.array, self._data) else k
                    for k in node.saved
                )
            if node is not None and result._data.dtype != self._data.dtype:
                node = Node("ToCopyBackward0", rules.cast, (node,), (_meta(result),))
        np.copyto(self._data, result._data.astype(self._data.dtype), casting="unsafe")
        if MODE.leaves:  # no leaf: no node saved anything, nothing to count
            _written(self, node)
        return self

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._inplace(self.add(other, alpha=alpha))

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._inplace(self.sub(other, alpha=alpha))

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return self._inplace(self.clamp(min, max))

    def _overwrite(self, data: np.ndarray, name: str, rule: Callable[..., Any],
                   source: Any = None) -> Tensor:
        """Write ``data`` over this tensor; the gradient of what was here is zero (``rule``),
        ``source``'s (a tensor the values came from) is the rest of the rule's."""
        node = None
        if MODE.leaves and recording(self, source):
            _check_write(self)
            inputs = (self,) if source is None else (self, source)
            node = Node(name, rule, tuple(_node_of(t) if isinstance(t, Tensor) else None
                                          for t in inputs), tuple(_meta(t) for t in inputs))
        np.copyto(self._data, data)
        if MODE.leaves:  # no leaf: no node saved anything, nothing to count
            _written(self, node)
        return self

    def fill_(self, value: Any) -> Tensor:
        if isinstance(value, Tensor):
            return self._overwrite(np.broadcast_to(as_operand(value, self.dtype),
                                                   self._data.shape), "FillBackward3",
                                   rules.fill, value)
        return self._overwrite(np.broadcast_to(as_operand(value, self.dtype), self._data.shape),
                               "FillBackward2", rules.zero)

    def zero_(self) -> Tensor:
        return self._overwrite(np.zeros_like(self._data), "ZeroBackward0", rules.zero)

    def copy_(self, src: Tensor, non_blocking: bool = False) -> Tensor:
        data = np.broadcast_to(as_operand(src, self.dtype), self._data.shape)
        return self._overwrite(data, "CopyBackwards", rules.copy, src)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return self._inplace(self.masked_fill(mask, value))

    # ---- elementwise functions -----------------------------------------------------------------

    def _float_input(self) -> np.ndarray:
        # integer and bool inputs of float functions become the default float, as in torch
        return self._data if self.dtype.is_floating_point else self._data.astype(np.float32)

    def sqrt(self) -> Tensor:
        with np.errstate(all="ignore"):
            out = Tensor._make(np.sqrt(self._float_input()))
        return _unary(out, self, "SqrtBackward0", rules.sqrt, out._data, result=True)

    def rsqrt(self) -> Tensor:
        with np.errstate(all="ignore"):
            x = self._float_input()
            out = Tensor._make(x.dtype.type(1) / np.sqrt(x))
        return _unary(out, self, "RsqrtBackward0", rules.rsqrt, out._data, result=True)

    def sigmoid(self) -> Tensor:
        # torch's kernel: 1 / (1 + exp(-x)), each step rounded to the tensor's precision
        x = self._float_input()
        one = x.dtype.type(1)
        with np.errstate(all="ignore"):
            out = Tensor._make(one / (one + float_unary(np.exp, -x)))
        return _unary(out, self, "SigmoidBackward0", rules.sigmoid, out._data, result=True)

    def relu(self) -> Tensor:
        if self.dtype is dtypes.bool_:
            raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
        out = Tensor._make(np.maximum(self._data, self._data.dtype.type(0)))
        return _unary(out, self, "ReluBackward0", rules.relu, out._data, result=True)

    def abs(self) -> Tensor:
        if self.dtype is dtypes.bool_:
            raise RuntimeError('"abs_cpu" not implemented for \'Bool\'')
        return _unary(Tensor._make(np.abs(self._data)), self, "AbsBackward0", rules.abs,
                      self._data)

    def square(self) -> Tensor:
        return power(self, 2)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return self._clamp(min, max, "ClampBackward")

    def _clamp(self, min: Any, max: Any, backward: str) -> Tensor:
        """clamp, clamp_min and clamp_max: ``backward`` + 0 with a tensor bound (the bounds get
        gradient too), + 1 with numbers (``ClampMinBackward0`` for numbers: torch's names)."""
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        dt = result_type(self, min, max)
        if dt is dtypes.bool_ and not all(isinstance(b, (Tensor, type(None))) for b in (min, max)):
            raise NotImplementedError('"clamp_scalar_cpu" not implemented for \'Bool\'')
        x = out = as_operand(self, dt)
        low = None if min is None else as_operand(min, dt)
        high = None if max is None else as_operand(max, dt)
        if low is not None:
            out = np.where(np.isnan(out), out, np.maximum(out, low))
        if high is not None:
            out = np.where(np.isnan(out), out, np.minimum(out, high))
        result = Tensor._make(np.asarray(out).astype(dt.np_dtype, copy=False))
        if not (MODE.leaves and recording(self, min, max)):
            return result
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            bounds = (min if isinstance(min, Tensor) else None,
                      max if isinstance(max, Tensor) else None)
            return record(result, backward + ("0" if backward == "ClampBackward" else "1"),
                           (self, *bounds),
                           partial(rules.clamp_tensor, low is not None, high is not None),
                           (keep(x, self, 0), None if low is None else keep(low, bounds[0], 1),
                            None if high is None else keep(high, bounds[1], 2)))
        return record(result, backward + ("1" if backward == "ClampBackward" else "0"),
                       (self,), partial(rules.clamp, low, high), (keep(x, self, 0),))

    def clamp_min(self, min: Any) -> Tensor:
        return self._clamp(min, None, "ClampMinBackward")

    def clamp_max(self, max: Any) -> Tensor:
        return self._clamp(None, max, "ClampMaxBackward")

    def maximum(self, other: Tensor) -> Tensor:
        return _binary_tensors(self, other, np.maximum, "maximum")

    def minimum(self, other: Tensor) -> Tensor:
        return _binary_tensors(self, other, np.minimum, "minimum")

    def gather(self, dim: int, index: Tensor) -> Tensor:
        axis = normalize_dim(dim, self.ndim)
        if not isinstance(index, Tensor) or index.dtype is not dtypes.int64:
            raise RuntimeError("gather(): Expected dtype int64 for index")
        # torch lets the index be smaller than the input in the other dims
        region = tuple(
            slice(None) if d == axis else slice(0, n) for d, n in enumerate(index.shape)
        )
        out = Tensor._make(np.take_along_axis(self._data[region], index._data, axis))
        if MODE.leaves and recording(self):
            record(out, "GatherBackward0", (self,),
                    partial(rules.gather, axis, self._data.shape), (keep(index._data),))
        return out

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        if as_tuple:
            return tuple(Tensor._make(ix.astype(np.int64)) for ix in np.nonzero(self._data))
        return Tensor._make(np.argwhere(self._data).astype(np.int64))

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
            raise RuntimeError("masked_fill_ only supports boolean masks")
        if isinstance(value, Tensor) and value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        fill = as_operand(value, self.dtype)
        out = Tensor._make(np.where(mask._data, fill, self._data).astype(self._data.dtype))
        if MODE.leaves and recording(self, value):
            if isinstance(value, Tensor):
                record(out, "MaskedFillBackward1", (self, value),
                        partial(rules.masked_fill, True), (keep(mask._data, mask),))
            else:
                record(out, "MaskedFillBackward0", (self,), partial(rules.masked_fill, False),
                        (keep(mask._data, mask),))
        return out

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return where(condition, self, other)

    # torch's softmax kernels (SoftMaxKernel.cpp, last-dim kernels), step by step in the tensor's
    # precision; torch.softmax and F.softmax forward to these methods, as in torch
    def softmax(self, dim: int, dtype: dtype | None = None) -> Tensor:
        """``exp(x - max) * (1 / Σ exp(x - max))`` along ``dim``."""
        src = self if dtype is None else self.to(dtype)
        shifted, axis = _shifted(src, dim, "softmax")
        e, total = _sum_exp(shifted, axis)
        with np.errstate(all="ignore"):
            out = Tensor._make((e * (e.dtype.type(1) / total)).reshape(self.shape))
        return _unary(out, src, "SoftmaxBackward0", partial(rules.softmax, axis), out._data,
                      result=True)

    def log_softmax(self, dim: int, dtype: dtype | None = None) -> Tensor:
        """``(x - max) - log Σ exp(x - max)`` along ``dim``."""
        src = self if dtype is None else self.to(dtype)
        shifted, axis = _shifted(src, dim, "log_softmax")
        _, total = _sum_exp(shifted, axis)
        with np.errstate(all="ignore"):
            out = Tensor._make((shifted - float_unary(np.log, total)).reshape(self.shape))
        return _unary(out, src, "LogSoftmaxBackward0", partial(rules.log_softmax, axis),
                      out._data, result=True)

    # ---- reductions ----------------------------------------------------------------------------

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
        x = self._data if dtype is None else self._data.astype(dtype.np_dtype)
        axes = _normalize_dims(dim, x.ndim)
        if x.dtype.kind in "biu":  # integer and bool sums are int64 (exact in any order)
            out = np.sum(x, axis=axes, dtype=np.int64)
        else:
            out = float_sum(x, axes)
        result = Tensor._make(_keep_dims(np.asarray(out), axes, keepdim))
        if MODE.leaves and recording(self):
            record(result, "SumBackward0" if dim is None else "SumBackward1", (self,),
                    partial(rules.sum, x.shape, axes, keepdim))
        return result

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
        src = self if dtype is None else self._cast(dtype)
        if not src.dtype.is_floating_point:
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_type_name(src.dtype)}"
            )
        axes = _normalize_dims(dim, src.ndim)
        count = math.prod(src._data.shape[a] for a in axes)
        total = _keep_dims(np.asarray(float_sum(src._data, axes)), axes, keepdim)
        # torch: at::sum(...).div_(count), so the count is rounded to the tensor's dtype
        with np.errstate(all="ignore"):
            result = Tensor._make(total / total.dtype.type(count))
        if MODE.leaves and recording(src):
            record(result, "MeanBackward0" if dim is None else "MeanBackward1", (src,),
                    partial(rules.mean, src._data.shape, axes, keepdim, count))
        return result

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """torch.var: Σ(x − mean)² / (n − correction), correction 1 (unbiased) by default.
        Accepts torch's spellings: var(), var(dim), var(unbiased), var(dim, unbiased, keepdim),
        var(dim, correction=0). Computed in float64 and rounded once (within ulps of torch)."""
        out, axes, correction = self._var(dim, unbiased, keepdim, correction)
        with np.errstate(all="ignore"):
            result = Tensor._make(out.astype(self._data.dtype))
        if MODE.leaves and recording(self):
            record(result, "VarBackward0", (self,), partial(rules.var, axes, correction, keepdim),
                    (keep(self._data, self, 0),))
        return result

    def _var(self, dim: Any, unbiased: Any, keepdim: bool,
             correction: Any) -> tuple[np.ndarray, tuple[int, ...], Any]:
        """The variance in float64 (not yet rounded: std takes its root first), the reduced
        axes and the correction."""
        if isinstance(dim, bool):  # var(False): the old unbiased-only form
            dim, unbiased = None, dim
        if not self.dtype.is_floating_point:
            raise RuntimeError("std and var only support floating point and complex dtypes")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        axes = _normalize_dims(dim, self.ndim)
        x = self._data.astype(np.float64)
        with np.errstate(all="ignore"):
            mean = np.mean(x, axis=axes, keepdims=True)
            n = math.prod(x.shape[a] for a in axes)
            out = np.sum((x - mean) ** 2, axis=axes) / (n - correction)
        return _keep_dims(np.asarray(out), axes, keepdim), axes, correction

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """torch.std: the square root of :meth:`var`, with the same arguments (taken in float64,
        so a std near 1e30 is finite in float32 as torch's, whose variance is not)."""
        variance, axes, correction = self._var(dim, unbiased, keepdim, correction)
        with np.errstate(all="ignore"):  # the root before the rounding: a float32 std of 1e30
            result = Tensor._make(np.sqrt(variance).astype(self._data.dtype))
        if MODE.leaves and recording(self):
            record(result, "StdBackward0", (self,), partial(rules.std, axes, correction, keepdim),
                    (keep(self._data, self, 0), keep(result._data, result, output=True)))
        return result

    def _extreme(self, dim: Any, keepdim: bool, largest: bool, name: str) -> Any:
        if isinstance(dim, Tensor):  # t.max(other): the elementwise form
            return (self.maximum if largest else self.minimum)(dim)
        x = self._data
        if dim is None:
            if x.size == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument."
                )
            out = Tensor._make(np.max(x) if largest else np.min(x))
            if MODE.leaves and recording(self):  # the gradient shared evenly by the ties
                record(out, "MaxBackward1" if largest else "MinBackward1", (self,),
                        rules.spread, (keep(x, self, 0), keep(out._data, out, output=True)))
            return out
        axis = normalize_dim(dim, x.ndim)
        if x.ndim == 0:
            values, indices = x.copy(), np.zeros((), np.int64)
        else:
            if x.shape[axis] == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim {axis} to have non-zero size."
                )
            indices = _arg_extreme(x, axis, largest)
            values = np.take_along_axis(x, np.expand_dims(indices, axis), axis).squeeze(axis)
            if keepdim:
                values = np.expand_dims(values, axis)
                indices = np.expand_dims(indices, axis)
        result = MaxResult if largest else MinResult
        out, where = Tensor._make(values), Tensor._make(indices.astype(np.int64))
        if MODE.leaves and recording(self):  # the gradient to the index returned
            record(out, "MaxBackward0" if largest else "MinBackward0", (self,),
                    partial(rules.select_values, axis, keepdim, x.shape),
                    (keep(where._data, where, output=True),))
        return result(out, where)

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        return self._extreme(dim, keepdim, True, "max")

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        return self._extreme(dim, keepdim, False, "min")

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """torch.topk: the ``k`` largest (or smallest) entries along ``dim``, sorted, and their
        indices. NaN counts as the largest, as in torch; equal values come in index order (torch
        leaves the order of ties unspecified)."""
        if self.dtype is dtypes.bool_:
            raise RuntimeError("topk does not support bool dtypes on CPU")
        x = self._data.reshape(1) if self.ndim == 0 else self._data
        axis = normalize_dim(dim, x.ndim)
        k = operator.index(k)
        if not 0 <= k <= x.shape[axis]:
            raise RuntimeError("selected index k out of range")
        moved = np.moveaxis(x, axis, -1)
        nan = np.isnan(moved) if moved.dtype.kind == "f" else np.zeros(moved.shape, bool)
        # sort by (NaN last or first, then the value) along the last axis, ties by index
        key = np.where(nan, 0, moved).astype(np.float64 if moved.dtype.kind == "f" else np.int64)
        order = np.lexsort((-key, ~nan) if largest else (key, nan), axis=-1)[..., :k]
        values = np.take_along_axis(moved, order, axis=-1)
        values, order = np.moveaxis(values, -1, axis), np.moveaxis(order, -1, axis)
        if self.ndim == 0:
            values, order = values.reshape(()), order.reshape(())
        out = Tensor._make(values.copy(order="C"))
        where = Tensor._make(order.astype(np.int64, order="C"))
        if MODE.leaves and recording(self):
            record(out, "TopkBackward0", (self,),
                    partial(rules.select_values, axis, True, self._data.shape),
                    (keep(where._data, where, output=True),))
        return TopkResult(out, where)

    def _arg(self, dim: Any, keepdim: bool, largest: bool) -> Tensor:
        if self.dtype is dtypes.bool_:
            name = "argmax" if largest else "argmin"
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            flat = self._data.reshape(-1)
            if flat.size == 0:
                raise RuntimeError("argmax(): Expected reduction dim to be specified for "
                                   "input.numel() == 0.")
            idx = np.asarray(_arg_extreme(flat, 0, largest))
            return Tensor._make(idx.reshape((1,) * self.ndim) if keepdim else idx)
        return self._extreme(dim, keepdim, largest, "argmax" if largest else "argmin").indices

    def argmax(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return self._arg(dim, keepdim, True)

    def argmin(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return self._arg(dim, keepdim, False)

    def cumsum(self, dim: int, *, dtype: dtype | None = None) -> Tensor:
        x = self._data if dtype is None else self._data.astype(dtype.np_dtype)
        axis = normalize_dim(dim, x.ndim)
        if x.ndim == 0:
            out = Tensor._make(x.copy())
        elif x.dtype.kind in "biu":
            return Tensor._make(np.cumsum(x, axis=axis, dtype=np.int64))
        else:
            # torch accumulates a float cumsum in double and rounds each partial sum
            out = Tensor._make(np.cumsum(x, axis=axis, dtype=np.float64).astype(x.dtype))
        return _unary(out, self, "CumsumBackward0", partial(rules.cumsum, axis))

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Tensor:
        """torch.logsumexp: ``log Σ exp(x − m) + m`` with ``m`` the maximum over ``dim`` (0 where
        it is infinite), as torch computes it; integers become the default float."""
        x = self._float_input()
        axes = _normalize_dims(dim, x.ndim)
        with np.errstate(all="ignore"):
            top = np.max(x, axis=axes, keepdims=True) if x.size else np.zeros((1,) * x.ndim,
                                                                                 x.dtype)
            top = np.where(np.isinf(top), x.dtype.type(0), top)
            total = float_sum(float_unary(np.exp, x - top), axes)
            out = float_unary(np.log, np.asarray(total)) + np.squeeze(top, axes)
        result = Tensor._make(_keep_dims(np.asarray(out, x.dtype), axes, keepdim))
        if MODE.leaves and recording(self):
            record(result, "LogsumexpBackward0", (self,),
                    partial(rules.logsumexp, axes, keepdim),
                    (keep(x, self, 0), keep(result._data, result, output=True)))
        return result

    def quantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        """torch.quantile with a scalar ``q``: the values sorted along ``dim`` (every value when
        None), the rank ``q·(n − 1)`` computed in the tensor's dtype, then torch's interpolation
        between the two values around it (``lerp``: exact at a whole rank, else within an ulp of
        torch, whose vector kernel fuses the multiply-add); NaN if the slice holds a NaN."""
        return self._quantile(q, dim, keepdim, interpolation, ignore_nan=False)

    def nanquantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Tensor:
        """torch.nanquantile: :meth:`quantile` of each slice's values that are not NaN (n is
        their count); NaN for a slice of NaN only."""
        return self._quantile(q, dim, keepdim, interpolation, ignore_nan=True)

    def _quantile(self, q: Any, dim: Any, keepdim: bool, interpolation: str, *,
                  ignore_nan: bool) -> Tensor:
        if self.dtype not in (dtypes.float32, dtypes.float64):
            raise RuntimeError("quantile() input tensor must be either float or double dtype")
        if isinstance(q, Tensor):
            if q.ndim:
                raise unsupported("torch.quantile with a tensor of several q", _TENSOR_API)
            q = q.item()
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        modes = ("linear", "lower", "higher", "midpoint", "nearest")
        if interpolation not in modes:
            raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                               f"midpoint or nearest, but got {interpolation}")
        if self._data.size == 0:
            raise RuntimeError("quantile() input tensor must be non-empty")
        x = self._data
        if dim is None:
            axis, x = -1, x.reshape(-1)
        else:
            axis = normalize_dim(dim, self.ndim)
            x = np.moveaxis(x if x.ndim else x.reshape(1), axis, -1)
        ordered = np.sort(x, axis=-1)  # NaN last, as torch's sort
        kind = x.dtype.type
        nan = np.isnan(ordered)
        if ignore_nan:  # n: the values that are not NaN (a slice of NaN only: rank 0, a NaN)
            last = np.maximum(ordered.shape[-1] - 1 - nan.sum(axis=-1), 0).astype(kind)
            rank = kind(q) * last
        else:
            # r = q·(n − 1) in the tensor's dtype; the last index where the slice holds a NaN
            last = kind(ordered.shape[-1] - 1)
            rank = np.where(nan.any(axis=-1), last, kind(q) * last)
        if interpolation == "lower":
            rank = np.floor(rank)
        elif interpolation == "higher":
            rank = np.ceil(rank)
        elif interpolation == "nearest":
            rank = np.round(rank)  # half to even, as torch's round
        below = rank.astype(np.int64)
        above = below
        weight = np.zeros_like(rank)
        low = np.take_along_axis(ordered, below[..., None], -1)[..., 0]
        if interpolation in ("linear", "midpoint"):
            weight = np.full_like(rank, 0.5) if interpolation == "midpoint" else rank - below
            above = np.ceil(rank).astype(np.int64)
            high = np.take_along_axis(ordered, above[..., None], -1)[..., 0]
            with np.errstate(all="ignore"):
                # lerp: start + w·(end − start) for w < 0.5, else end − (1 − w)·(end − start)
                small = np.abs(weight) < 0.5
                coeff = np.where(small, weight, weight - kind(1)).astype(np.float64)
                base = np.where(small, low, high).astype(np.float64)
                low = (base + coeff * (high - low).astype(np.float64)).astype(x.dtype)
        out = np.asarray(low, x.dtype)
        if keepdim:
            out = out.reshape((1,) * self.ndim) if dim is None else np.expand_dims(out, axis)
        result = Tensor._make(out)
        if MODE.leaves and recording(self):
            # the gradient through torch's sort, gather and lerp: (1 − w) to the value below
            # the rank, w to the one above, at their places in the input (ties: see topk)
            flat = np.arange(self._data.size).reshape(self._data.shape)
            flat = flat.reshape(-1) if dim is None else np.moveaxis(
                flat if flat.ndim else flat.reshape(1), axis, -1)
            places = np.take_along_axis(flat, np.argsort(x, axis=-1, kind="stable"), -1)
            record(result, "QuantileBackward0", (self,), partial(
                rules.quantile, self._data.shape,
                below=np.take_along_axis(places, below[..., None], -1)[..., 0],
                above=np.take_along_axis(places, above[..., None], -1)[..., 0], weight=weight))
        return result

    # ---- shape -----------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        target = parse_shape(shape)
        try:
            data = self._data.reshape(target)
        except ValueError:
            raise RuntimeError(
                f"shape '[{', '.join(map(str, target))}]' is invalid for input of size "
                f"{self._data.size}"
            ) from None
        if data.size and data.base is not self._data and not _same_memory(data, self._data):
            return _unary(Tensor._make(data), self, "UnsafeViewBackward0",
                          partial(rules.reshape, self._data.shape))
        out = _view(self, data)
        if MODE.leaves and recording(self):
            _viewed(out, self, "ViewBackward0", partial(rules.reshape, self._data.shape))
        return out

    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], dtype):
            raise unsupported("Tensor.view(dtype)", _TENSOR_API)
        out = self.reshape(*shape)
        if out._data.size and not np.may_share_memory(out._data, self._data):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        return out

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
        if s == e:  # torch returns the tensor itself
            return self
        shape = self.shape
        return self.reshape(*shape[:s], math.prod(shape[s : e + 1]), *shape[e + 1 :])

    def unsqueeze(self, dim: int) -> Tensor:
        axis = normalize_dim(dim, self.ndim + 1)
        out = _view(self, np.expand_dims(self._data, axis))
        if MODE.leaves and recording(self):
            _viewed(out, self, "UnsqueezeBackward0", partial(rules.unsqueeze, axis))
        return out

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            out, name = _view(self, self._data.squeeze()), "SqueezeBackward0"
        else:
            axes = [a for a in _normalize_dims(dim, self.ndim) if self._data.shape[a] == 1]
            out = _view(self, self._data.squeeze(tuple(axes)) if self.ndim else self._data)
            name = ("SqueezeBackward1" if isinstance(dim, numbers.Integral)
                    else "SqueezeBackward2")
        if MODE.leaves and recording(self):
            _viewed(out, self, name, partial(rules.reshape, self._data.shape))
        return out

    def flip(self, *dims: Any, **kw: Any) -> Tensor:
        if "dims" in kw:
            dims = (kw.pop("dims"),)
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        axes = _normalize_dims(dims, self.ndim) if dims else ()
        # torch.flip copies (it is not a view)
        out = Tensor._make(np.flip(self._data, axes).copy() if axes else self._data.copy())
        return _unary(out, self, "FlipBackward0", partial(rules.flip, axes))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        a, b = normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)
        data = np.swapaxes(self._data, a, b) if self.ndim else self._data
        out = _view(self, data)
        if MODE.leaves and recording(self):
            _viewed(out, self, "TransposeBackward0", partial(rules.transpose, a, b))
        return out

    swapaxes = transpose

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        out = _view(self, self._data.T)
        if MODE.leaves and recording(self):
            _viewed(out, self, "TBackward0",
                    partial(rules.permute, tuple(range(self.ndim))[::-1]))
        return out

    def permute(self, *dims: Any) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        axes = [normalize_dim(d, self.ndim) for d in dims]
        if sorted(axes) != list(range(self.ndim)):
            raise RuntimeError("permute(): dims don't match the tensor's number of dimensions")
        out = _view(self, np.transpose(self._data, axes))
        if MODE.leaves and recording(self):
            _viewed(out, self, "PermuteBackward0", partial(rules.permute, tuple(axes)))
        return out

    def expand(self, *sizes: Any) -> Tensor:
        target = list(parse_shape(sizes))
        lead = len(target) - self.ndim
        shape = list(self._data.shape)
        if lead < 0:
            raise RuntimeError(
                f"expand(torch.{_type_name(self.dtype)}Tensor{{{shape}}}, size={target}): the "
                f"number of sizes provided ({len(target)}) must be greater or equal to the "
                f"number of dimensions in the tensor ({self.ndim})"
            )
        for i in range(self.ndim):
            if target[lead + i] == -1:
                target[lead + i] = shape[i]
            elif shape[i] != 1 and target[lead + i] != shape[i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target[lead + i]}) must match the "
                    f"existing size ({shape[i]}) at non-singleton dimension {lead + i}.  Target "
                    f"sizes: {target}.  Tensor sizes: {shape}"
                )
        # the gradient is summed back to this shape by the engine (sum_to)
        out = _view(self, np.broadcast_to(self._data, tuple(target)))
        if MODE.leaves and recording(self):
            _viewed(out, self, "ExpandBackward0", rules.cast)
        return out

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        reps = parse_shape(sizes)
        return _unary(Tensor._make(np.tile(self._data, reps)), self, "RepeatBackward0",
                      partial(rules.repeat, self._data.shape, reps))

    # ---- the uniform methods, one line each from the factories above -------------------------

    # a ∘ b with torch's promotion and errors (the kernel name is the one torch's errors use);
    # number / tensor (__rtruediv__) is written out above: torch takes a reciprocal
    __add__ = _arithmetic("__add__", np.add, "add")
    __radd__ = _arithmetic("__radd__", np.add, "add", reverse=True)
    __sub__ = _arithmetic("__sub__", np.subtract, "sub")
    __rsub__ = _arithmetic("__rsub__", np.subtract, "rsub", reverse=True)  # bool: error both ways
    __mul__ = _arithmetic("__mul__", np.multiply, "mul")
    __rmul__ = _arithmetic("__rmul__", np.multiply, "mul", reverse=True)
    __floordiv__ = _arithmetic("__floordiv__", np.floor_divide, "floordiv")
    __rfloordiv__ = _arithmetic("__rfloordiv__", np.floor_divide, "floordiv", reverse=True)
    __mod__ = _arithmetic("__mod__", np.remainder, "mod")
    __rmod__ = _arithmetic("__rmod__", np.remainder, "mod", reverse=True)
    __truediv__ = _arithmetic("__truediv__", np.true_divide, "div")

    # &, |, ^ on bool and integer tensors
    __and__ = _bitwise("__and__", np.bitwise_and, "bitwise_and")
    __rand__ = _bitwise("__rand__", np.bitwise_and, "bitwise_and", reverse=True)
    __or__ = _bitwise("__or__", np.bitwise_or, "bitwise_or")
    __ror__ = _bitwise("__ror__", np.bitwise_or, "bitwise_or", reverse=True)
    __xor__ = _bitwise("__xor__", np.bitwise_xor, "bitwise_xor")
    __rxor__ = _bitwise("__rxor__", np.bitwise_xor, "bitwise_xor", reverse=True)

    # comparisons give bool tensors (so __hash__ is written out above); the method is the operator
    __eq__ = _comparison("__eq__", np.equal)  # type: ignore[assignment]
    __ne__ = _comparison("__ne__", np.not_equal)  # type: ignore[assignment]
    __lt__ = _comparison("__lt__", np.less)
    __le__ = _comparison("__le__", np.less_equal)
    __gt__ = _comparison("__gt__", np.greater)
    __ge__ = _comparison("__ge__", np.greater_equal)
    eq = __eq__
    ne = __ne__
    lt = __lt__
    le = __le__
    gt = __gt__
    ge = __ge__

    # in place: the result of the operator, cast back to this tensor's dtype if torch allows it
    __iadd__ = _in_place("__iadd__", __add__)
    __isub__ = _in_place("__isub__", __sub__)
    __imul__ = _in_place("__imul__", __mul__)
    __itruediv__ = _in_place("__itruediv__", __truediv__)
    __ifloordiv__ = _in_place("__ifloordiv__", __floordiv__)
    __imod__ = _in_place("__imod__", __mod__)
    __ipow__ = _in_place("__ipow__", __pow__)
    __iand__ = _in_place("__iand__", __and__)
    __ior__ = _in_place("__ior__", __or__)
    __ixor__ = _in_place("__ixor__", __xor__)
    mul_ = _in_place("mul_", __mul__)
    div_ = _in_place("div_", __truediv__)

    # reductions over dim (None: every axis): max and min in the tensor's dtype, all/any as bool
    amax = _reduction("amax", np.max, "AmaxBackward0")
    amin = _reduction("amin", np.min, "AminBackward0")
    all = _reduction("all", np.all)
    any = _reduction("any", np.any)

    # float functions (integers become the default float): within 2 ulps of torch (see kernels)
    exp = _float_function("exp", np.exp, "ExpBackward0", rules.exp, True)
    expm1 = _float_function("expm1", np.expm1, "Expm1Backward0", rules.expm1, True)
    log = _float_function("log", np.log, "LogBackward0", rules.log, False)
    log1p = _float_function("log1p", np.log1p, "Log1PBackward0", rules.log1p, False)
    tanh = _float_function("tanh", np.tanh, "TanhBackward0", rules.tanh, True)

    # exact elementwise functions (round: half to even, like torch)
    sign = _exact_function("sign", np.sign, "SignBackward0")
    floor = _exact_function("floor", np.floor, "FloorBackward0")
    ceil = _exact_function("ceil", np.ceil, "CeilBackward0")
    round = _exact_function("round", np.round, "RoundBackward0")
    trunc = _exact_function("trunc", np.trunc, "TruncBackward0")
    isnan = _exact_function("isnan", np.isnan)
    isinf = _exact_function("isinf", np.isinf)
    isfinite = _exact_function("isfinite", np.isfinite)
    logical_not = _exact_function("logical_not", np.logical_not)

    # logical functions of two tensors (the other one read as bool)
    logical_and = _logical_function("logical_and", np.logical_and)
    logical_or = _logical_function("logical_or", np.logical_or)
    logical_xor = _logical_function("logical_xor", np.logical_xor)

    # torch's other names for the same methods
    multiply = mul
    subtract = sub
    divide = div
    true_divide = __truediv__
    negative = neg
    absolute = abs
    clip = clamp
    clip_ = clamp_


def _record_binary(out: Tensor, name: str, a: Any, b: Any, x: np.ndarray,
                   y: np.ndarray) -> None:
    """The node of ``a ∘ b`` (operands ``x``, ``y`` in the result's dtype), saving what torch
    saves: for mul, each operand only if the other one requires grad."""
    left, right = grad_on(a), grad_on(b)
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    if name == "add":
        record(out, "AddBackward0", (a, b), rules.add)
    elif name in ("sub", "rsub"):
        label = "SubBackward0" if ta is not None else "RsubBackward1"
        record(out, label, (a, b), rules.sub)
    elif name == "mul":
        record(out, "MulBackward0", (a, b), rules.mul,
                (keep(x, ta, 0) if right else None, keep(y, tb, 1) if left else None))
    elif name == "div":
        record(out, "DivBackward0", (a, b), rules.div,
                (keep(x, ta, 0) if right else None, keep(y, tb, 1)))
    elif name == "mod":
        record(out, "RemainderBackward1" if tb is not None else "RemainderBackward0", (a, b),
               rules.remainder,
               (keep(x, ta, 0) if right else None, keep(y, tb, 1) if right else None))
    else:  # floor division: torch has no derivative for it
        record(out, "NotImplemented", (a, b), partial(rules.not_implemented, "floor_divide"))


def _same_memory(data: np.ndarray, source: np.ndarray) -> bool:
    """``data`` views ``source``'s memory (NumPy points a view at the array owning it)."""
    base = data.base
    if base is None:
        return False
    return base is source or base is source.base or np.may_share_memory(data, source)


def _basic_index_name(key: Any) -> str:
    """torch's name for the last step of a basic index: select, slice or unsqueeze."""
    name = "AliasBackward0"
    for k in key if isinstance(key, tuple) else (key,):
        if k is None:
            name = "UnsqueezeBackward0"
        elif isinstance(k, slice):
            name = "SliceBackward0"
        elif k is not Ellipsis:
            name = "SelectBackward0"
    return name


def _keep_dims(out: np.ndarray, axes: tuple[int, ...], keepdim: bool) -> np.ndarray:
    return np.expand_dims(out, axes) if keepdim and axes else out


def _arg_extreme(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """Index (int64, as torch's; NumPy gives intp, int32 on wasm32) of the first max (or min)
    along axis; a NaN counts as the extreme, as in torch."""
    plain = np.argmax(x, axis=axis) if largest else np.argmin(x, axis=axis)
    nan = np.isnan(x) if x.dtype.kind == "f" else None
    if nan is not None and nan.any():
        plain = np.where(np.any(nan, axis=axis), np.argmax(nan, axis=axis), plain)
    return np.asarray(plain).astype(np.int64)


def _is_bool(value: Any) -> bool:
    if isinstance(value, Tensor):
        return value.dtype is dtypes.bool_
    return isinstance(value, (bool, np.bool_))


def _check_sub(a: Any, b: Any) -> None:
    """torch refuses ``-`` when either operand is bool (tensor or Python bool)."""
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _int_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer pow as torch computes it: a negative exponent gives 1, ±1 or 0 (no error)."""
    out = np.power(x, np.maximum(y, 0))
    negative = y < 0
    if np.any(negative):
        odd = (y % 2) != 0
        small = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        out = np.where(negative, small, out)
    return out


def check_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """torch's error for shapes that do not broadcast, plus both shapes (what learners need)."""
    n = max(len(a), len(b))
    for i in range(1, n + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {n - i} (shapes {list(a)} and {list(b)})"
            )


def _binary_tensors(a: Tensor, b: Any, fn: Any, name: str) -> Tensor:
    """maximum/minimum: torch requires two tensors (no Python numbers)."""
    if not isinstance(b, Tensor):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}"
        )
    dt = result_type(a, b)
    x, y = as_operand(a, dt), as_operand(b, dt)
    check_broadcast(np.shape(x), np.shape(y))
    out = Tensor._make(fn(x, y))
    if MODE.leaves and recording(a, b):
        record(out, "MaximumBackward0" if name == "maximum" else "MinimumBackward0", (a, b),
                rules.maximum if name == "maximum" else rules.minimum,
                (keep(x, a, 0), keep(y, b, 1)))
    return out


def power(base: Any, exponent: Any) -> Tensor:
    """torch.pow, with torch's exact special cases for common Python exponents
    (``kernels.float_pow``); PowBackward0/1/2 for tensor ** number, tensor ** tensor and
    number ** tensor."""
    if not isinstance(base, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("pow needs at least one tensor")
    if not (isinstance(base, Tensor) or is_scalar(base)) or not (
        isinstance(exponent, Tensor) or is_scalar(exponent)
    ):
        return NotImplemented
    dt = result_type(base, exponent)
    if isinstance(base, Tensor) and is_scalar(exponent):
        x = as_operand(base, dt)
        e = exponent
        if e in (0, 1) or dt.is_floating_point:
            # torch fills ones for x ** 0 and copies for x ** 1, for any dtype
            out = Tensor._make(float_pow(x, e) if dt.is_floating_point or e == 1 else
                               np.ones_like(x))
            return _unary(out, base, "PowBackward0", partial(rules.pow_scalar, e), x)
        if dt is dtypes.bool_:
            raise NotImplementedError('"pow" not implemented for \'Bool\'')
        if e < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return Tensor._make(_int_power(x, np.asarray(int(e))).astype(dt.np_dtype))
    if dt is dtypes.bool_:
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    x, y = as_operand(base, dt), as_operand(exponent, dt)
    if not dt.is_floating_point:
        return Tensor._make(_int_power(x, y).astype(dt.np_dtype))
    with np.errstate(all="ignore"):
        # float64 then one rounding: within 2 ulps of torch's pow (see kernels)
        out = Tensor._make(np.power(x.astype(np.float64), y.astype(np.float64)).astype(
            dt.np_dtype))
    if not (MODE.leaves and recording(base, exponent)):
        return out
    if not isinstance(base, Tensor):  # number ** tensor
        kept = (keep(out._data, out, output=True),)
        if base == 0:
            kept += (keep(y, exponent, 1),)
        return record(out, "PowBackward2", (exponent,), partial(rules.pow_base, base), kept)
    kept = (keep(x, base, 0), keep(y, exponent if isinstance(exponent, Tensor) else None, 1),
            keep(out._data, out, output=True) if grad_on(exponent) else None)
    return record(out, "PowBackward1", (base, exponent), rules.pow_tensor, kept)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """torch.where(cond, a, b) with tensors or numbers; torch.where(cond) gives the indices."""
    if input is None and other is None:
        return tuple(Tensor._make(ix.astype(np.int64)) for ix in np.nonzero(condition._data))
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name.capitalize()}"
        )
    dt = result_type(input, other)
    out = np.where(condition._data, as_operand(input, dt), as_operand(other, dt))
    result = Tensor._make(np.asarray(out).astype(dt.np_dtype, copy=False))
    if MODE.leaves and recording(input, other):
        # the branch not taken gets a zero: a NaN gradient there stops here, but a zero sent
        # on through exp(∞) below it becomes NaN (0 × ∞)
        record(result, "WhereBackward0", (input, other), rules.where,
                (keep(condition._data, condition),))
    return result


def _shifted(x: Tensor, dim: int, name: str) -> tuple[np.ndarray, int]:
    """``x - max(x)`` along ``dim`` (a 0-d tensor as one element), and the axis; only float
    tensors, as torch's softmax kernels."""
    data = x._data
    if data.dtype.kind != "f":
        raise RuntimeError(
            f'"{name}_cpu" not implemented for \'{from_numpy_dtype(data.dtype).name}\''
        )
    axis = normalize_dim(dim, data.ndim)
    if data.ndim == 0:
        data = data.reshape(1)
    with np.errstate(all="ignore"):
        return data - np.max(data, axis=axis, keepdims=True), axis


def _sum_exp(shifted: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    e = float_unary(np.exp, shifted)
    # torch sums the exponentials with vectorised partial sums; a double sum rounded once
    # agrees to within an ulp
    total = np.sum(e, axis=axis, keepdims=True, dtype=np.float64).astype(e.dtype)
    return e, total


# what Tensor offers, for the error messages
_TENSOR_API = [name for name in dir(Tensor) if not name.startswith("_")]
