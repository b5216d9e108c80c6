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

Besides the class, this module holds what both a method and a torch function need (``power``,
``where``, ``result_type``, ``from_data``), so that ``functions`` and ``nn.functional`` import
from here and nothing here imports them: the layer's imports go one way (see
``tests/test_torch_layer_structure.py``).
"""

from __future__ import annotations

import builtins
import math
import numbers
import operator
import warnings
from collections import namedtuple
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import dtypes
from .dtypes import DEFAULT_FLOAT, combine_tiers, dtype, from_numpy_dtype, promote, scalar_dtype
from .errors import CPU_ONLY, unsupported
from .kernels import float_sum, float_unary
from .printing import tensor_repr

__all__ = [
    "Size",
    "Tensor",
    "as_operand",
    "check_broadcast",
    "device",
    "from_data",
    "is_scalar",
    "normalize_dim",
    "parse_shape",
    "power",
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


def _reduction(name: str, func: Any) -> Callable[..., Any]:
    """A reduction over ``dim`` (None: every axis) in NumPy's result dtype: the tensor's for
    max and min, bool for all and any."""

    def method(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        axes = _normalize_dims(dim, self.ndim)
        return Tensor._make(func(self._data, axis=axes, keepdims=keepdim))

    return _named(name, f"{name}(self, dim=None, keepdim=False)", method)


def _float_function(name: str, ufunc: Any) -> Callable[..., Any]:
    """A transcendental function: integers become the default float, then float64 and one
    rounding (``kernels.float_unary``: within 2 ulps of torch)."""

    def method(self: Tensor) -> Tensor:
        return Tensor._make(float_unary(ufunc, self._float_input()))

    return _named(name, f"{name}(self), elementwise", method)


def _exact_function(name: str, ufunc: Any) -> Callable[..., Any]:
    """An exact elementwise function in the tensor's dtype (round: half to even, like torch)."""

    def method(self: Tensor) -> Tensor:
        return Tensor._make(ufunc(self._data))

    return _named(name, f"{name}(self), elementwise", method)


def _logical_function(name: str, ufunc: Any) -> Callable[..., Any]:
    """A logical function of two tensors, the other one read as bool."""

    def method(self: Tensor, other: Any) -> Tensor:
        return Tensor._make(ufunc(self._data, as_operand(other, dtypes.bool_)))

    return _named(name, f"{name}(self, other)", method)


class Tensor:
    """A CPU tensor of float32, float64, int64, int32 or bool, without autograd."""

    __slots__ = ("_data",)
    __array_priority__ = 1000  # NumPy scalars on the left defer to the tensor's reflected ops
    __array_ufunc__ = None

    def __init__(self, *args: Any) -> None:
        # torch.Tensor(data) copies data as float32; torch.Tensor(2, 3) is uninitialised memory,
        # for which zeros are a safe stand-in.
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, Tensor)):
            self._data = np.array(np.asarray(args[0]), dtype=np.float32)
        else:
            self._data = np.zeros(parse_shape(args), np.float32)

    @classmethod
    def _make(cls, data: Any) -> Tensor:
        t = cls.__new__(cls)
        t._data = np.asarray(data)
        return t

    # ---- unsupported attributes ------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
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

    # on the CPU, without autograd: the same for every tensor (read-only: __slots__)
    is_cuda = False
    requires_grad = False
    grad = None
    grad_fn = None
    is_leaf = True

    @property
    def data(self) -> Tensor:
        return Tensor._make(self._data)

    @property
    def T(self) -> Tensor:
        return Tensor._make(self._data.T)

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
        return self._data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self._data if dtype is None else self._data.astype(dtype)
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
        return (Tensor._make(self._data[i, ...]) for i in range(self._data.shape[0]))

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

    # new_* make a tensor with this one's dtype (unless given)
    def new_zeros(self, *size: Any, dtype: dtype | None = None, **_: Any) -> Tensor:
        return self.new_full(parse_shape(size), 0, dtype=dtype)

    def new_ones(self, *size: Any, dtype: dtype | None = None, **_: Any) -> Tensor:
        return self.new_full(parse_shape(size), 1, dtype=dtype)

    def new_empty(self, *size: Any, dtype: dtype | None = None, **_: Any) -> Tensor:
        return self.new_full(parse_shape(size), 0, dtype=dtype)

    def new_full(self, size: Any, fill_value: Any, *, dtype: dtype | None = None,
                 **_: Any) -> Tensor:
        target = dtype or self.dtype
        return Tensor._make(np.full(parse_shape((size,)), fill_value, target.np_dtype))

    def new_tensor(self, data: Any, *, dtype: dtype | None = None, **_: Any) -> Tensor:
        return from_data(data, dtype or self.dtype)

    def detach(self) -> Tensor:
        return Tensor._make(self._data)

    def detach_(self) -> Tensor:
        return self

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return Tensor._make(self._data.copy())

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return self if self._data.flags.c_contiguous else Tensor._make(
            np.ascontiguousarray(self._data)
        )

    def cpu(self) -> Tensor:
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad:
            raise unsupported("Tensor.requires_grad_")
        return self

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise unsupported("Tensor.backward")

    def _cast(self, dt: dtype) -> Tensor:
        # torch's .to(dtype)/.float()/... return self when nothing changes
        return self if self.dtype is dt else Tensor._make(self._data.astype(dt.np_dtype))

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

    def _index_key(self, key: Any) -> Any:
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
        return tuple(items)

    def __getitem__(self, key: Any) -> Tensor:
        return Tensor._make(self._data[self._index_key(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, Tensor):
            value = value._data
        elif not is_scalar(value):
            value = np.asarray(value)
        # torch copies into the indexed elements with a cast to the tensor's dtype; with repeated
        # indices the last write wins (index_put_ without accumulate), as in NumPy
        self._data[self._index_key(key)] = np.asarray(value).astype(self._data.dtype)

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
        return Tensor._make(np.asarray(out).astype(dt.np_dtype, copy=False))

    def __rtruediv__(self, other: Any) -> Tensor:
        # torch computes number / tensor as tensor.reciprocal() * number (torch/_tensor.py)
        if not is_scalar(other):
            return self._binary(other, np.true_divide, "div", reverse=True)
        return self.reciprocal() * other

    def reciprocal(self) -> Tensor:
        x = self._float_input()
        with np.errstate(all="ignore"):
            return Tensor._make(x.dtype.type(1) / x)

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
        return Tensor._make(np.negative(self._data))

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
        if not _can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"result type {_type_name(result.dtype)} can't be cast to the desired output "
                f"type {_type_name(self.dtype)}"
            )
        np.copyto(self._data, result._data.astype(self._data.dtype), casting="unsafe")
        return self

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._inplace(self.add(other, alpha=alpha))

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return self._inplace(self.sub(other, alpha=alpha))

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return self._inplace(self.clamp(min, max))

    def fill_(self, value: Any) -> Tensor:
        self._data[...] = as_operand(value, self.dtype)
        return self

    def zero_(self) -> Tensor:
        self._data[...] = 0
        return self

    def copy_(self, src: Tensor, non_blocking: bool = False) -> Tensor:
        np.copyto(self._data, np.broadcast_to(as_operand(src, self.dtype), self._data.shape))
        return self

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        self._data[...] = self.masked_fill(mask, value)._data
        return self

    # ---- elementwise functions -----------------------------------------------------------------

    def _float_input(self) -> np.ndarray:
        # integer and bool inputs of float functions become the default float, as in torch
        return self._data if self.dtype.is_floating_point else self._data.astype(np.float32)

    def sqrt(self) -> Tensor:
        with np.errstate(all="ignore"):
            return Tensor._make(np.sqrt(self._float_input()))

    def rsqrt(self) -> Tensor:
        with np.errstate(all="ignore"):
            x = self._float_input()
            return Tensor._make(x.dtype.type(1) / np.sqrt(x))

    def sigmoid(self) -> Tensor:
        # torch's kernel: 1 / (1 + exp(-x)), each step rounded to the tensor's precision
        x = self._float_input()
        one = x.dtype.type(1)
        with np.errstate(all="ignore"):
            return Tensor._make(one / (one + float_unary(np.exp, -x)))

    def relu(self) -> Tensor:
        if self.dtype is dtypes.bool_:
            raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
        return Tensor._make(np.maximum(self._data, self._data.dtype.type(0)))

    def abs(self) -> Tensor:
        if self.dtype is dtypes.bool_:
            raise RuntimeError('"abs_cpu" not implemented for \'Bool\'')
        return Tensor._make(np.abs(self._data))

    def square(self) -> Tensor:
        return power(self, 2)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        dt = result_type(self, min, max)
        if dt is dtypes.bool_ and not all(isinstance(b, (Tensor, type(None))) for b in (min, max)):
            raise NotImplementedError('"clamp_scalar_cpu" not implemented for \'Bool\'')
        out = as_operand(self, dt)
        if min is not None:
            out = np.where(np.isnan(out), out, np.maximum(out, as_operand(min, dt)))
        if max is not None:
            out = np.where(np.isnan(out), out, np.minimum(out, as_operand(max, dt)))
        return Tensor._make(np.asarray(out).astype(dt.np_dtype, copy=False))

    def clamp_min(self, min: Any) -> Tensor:
        return self.clamp(min=min)

    def clamp_max(self, max: Any) -> Tensor:
        return self.clamp(max=max)

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
        return Tensor._make(np.take_along_axis(self._data[region], index._data, axis))

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
        return Tensor._make(np.where(mask._data, fill, self._data).astype(self._data.dtype))

    def where(self, condition: Tensor, other: Any) -> Tensor:
        return where(condition, self, other)

    # torch's softmax kernels (SoftMaxKernel.cpp, last-dim kernels), step by step in the tensor's
    # precision; torch.softmax and F.softmax forward to these methods, as in torch
    def softmax(self, dim: int, dtype: dtype | None = None) -> Tensor:
        """``exp(x - max) * (1 / Σ exp(x - max))`` along ``dim``."""
        shifted, axis = _shifted(self, dim, dtype, "softmax")
        e, total = _sum_exp(shifted, axis)
        with np.errstate(all="ignore"):
            out = e * (e.dtype.type(1) / total)
        return Tensor._make(out.reshape(self.shape))

    def log_softmax(self, dim: int, dtype: dtype | None = None) -> Tensor:
        """``(x - max) - log Σ exp(x - max)`` along ``dim``."""
        shifted, axis = _shifted(self, dim, dtype, "log_softmax")
        _, total = _sum_exp(shifted, axis)
        with np.errstate(all="ignore"):
            out = shifted - float_unary(np.log, total)
        return Tensor._make(out.reshape(self.shape))

    # ---- reductions ----------------------------------------------------------------------------

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
        x = self._data if dtype is None else self._data.astype(dtype.np_dtype)
        axes = _normalize_dims(dim, x.ndim)
        if x.dtype.kind in "biu":  # integer and bool sums are int64 (exact in any order)
            out = np.sum(x, axis=axes, dtype=np.int64)
        else:
            out = float_sum(x, axes)
        return Tensor._make(_keep(np.asarray(out), axes, keepdim))

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
        src = self if dtype is None else self._cast(dtype)
        if not src.dtype.is_floating_point:
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_type_name(src.dtype)}"
            )
        axes = _normalize_dims(dim, src.ndim)
        count = math.prod(src._data.shape[a] for a in axes)
        total = src.sum(dim=dim, keepdim=keepdim)._data
        # torch: at::sum(...).div_(count), so the count is rounded to the tensor's dtype
        with np.errstate(all="ignore"):
            return Tensor._make(total / total.dtype.type(count))

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """torch.var: Σ(x − mean)² / (n − correction), correction 1 (unbiased) by default.
        Accepts torch's spellings: var(), var(dim), var(unbiased), var(dim, unbiased, keepdim),
        var(dim, correction=0). Computed in float64 and rounded once (within ulps of torch)."""
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
        return Tensor._make(_keep(np.asarray(out), axes, keepdim).astype(self._data.dtype))

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None) -> Tensor:
        """torch.std: the square root of :meth:`var`, with the same arguments."""
        variance = self.var(dim, unbiased, keepdim, correction=correction)._data
        return Tensor._make(np.sqrt(variance.astype(np.float64)).astype(variance.dtype))

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
            return Tensor._make(np.max(x) if largest else np.min(x))
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
        return result(Tensor._make(values), Tensor._make(indices.astype(np.int64)))

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
        return TopkResult(Tensor._make(values.copy(order="C")),
                          Tensor._make(order.astype(np.int64, order="C")))

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
            return Tensor._make(x.copy())
        if x.dtype.kind in "biu":
            return Tensor._make(np.cumsum(x, axis=axis, dtype=np.int64))
        # torch accumulates a float cumsum in double and rounds each partial sum
        return Tensor._make(np.cumsum(x, axis=axis, dtype=np.float64).astype(x.dtype))

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
        return Tensor._make(_keep(np.asarray(out, x.dtype), axes, keepdim))

    def quantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        """torch.quantile with a scalar ``q``: the values sorted along ``dim`` (every value when
        None), the rank ``q·(n − 1)`` computed in the tensor's dtype, then torch's interpolation
        between the two values around it (``lerp``: exact at a whole rank, else within an ulp of
        torch, whose vector kernel fuses the multiply-add); NaN if the slice holds a NaN."""
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
        last = ordered.shape[-1] - 1
        # r = q·(n − 1) in the tensor's dtype; the last index where the slice holds a NaN
        rank = np.where(np.isnan(ordered).any(axis=-1), kind(last), kind(q) * kind(last))
        if interpolation == "lower":
            rank = np.floor(rank)
        elif interpolation == "higher":
            rank = np.ceil(rank)
        elif interpolation == "nearest":
            rank = np.round(rank)  # half to even, as torch's round
        below = rank.astype(np.int64)
        low = np.take_along_axis(ordered, below[..., None], -1)[..., 0]
        if interpolation in ("linear", "midpoint"):
            weight = np.full_like(rank, 0.5) if interpolation == "midpoint" else rank - below
            high = np.take_along_axis(ordered, np.ceil(rank).astype(np.int64)[..., None],
                                      -1)[..., 0]
            with np.errstate(all="ignore"):
                # lerp: start + w·(end − start) for w < 0.5, else end − (1 − w)·(end − start)
                small = np.abs(weight) < 0.5
                coeff = np.where(small, weight, weight - kind(1)).astype(np.float64)
                base = np.where(small, low, high).astype(np.float64)
                low = (base + coeff * (high - low).astype(np.float64)).astype(x.dtype)
        out = np.asarray(low, x.dtype)
        if keepdim:
            out = out.reshape((1,) * self.ndim) if dim is None else np.expand_dims(out, axis)
        return Tensor._make(out)

    # ---- shape -----------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        target = parse_shape(shape)
        try:
            return Tensor._make(self._data.reshape(target))
        except ValueError:
            raise RuntimeError(
                f"shape '[{', '.join(map(str, target))}]' is invalid for input of size "
                f"{self._data.size}"
            ) from None

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
        shape = self.shape
        return self.reshape(*shape[:s], math.prod(shape[s : e + 1]), *shape[e + 1 :])

    def unsqueeze(self, dim: int) -> Tensor:
        return Tensor._make(np.expand_dims(self._data, normalize_dim(dim, self.ndim + 1)))

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is None:
            return Tensor._make(self._data.squeeze())
        axes = [a for a in _normalize_dims(dim, self.ndim) if self._data.shape[a] == 1]
        return Tensor._make(self._data.squeeze(tuple(axes)) if self.ndim else self._data)

    def flip(self, *dims: Any, **kw: Any) -> Tensor:
        if "dims" in kw:
            dims = (kw.pop("dims"),)
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        axes = _normalize_dims(dims, self.ndim) if dims else ()
        # torch.flip copies (it is not a view)
        return Tensor._make(np.flip(self._data, axes).copy() if axes else self._data.copy())

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        a, b = normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)
        return Tensor._make(np.swapaxes(self._data, a, b) if self.ndim else self._data)

    swapaxes = transpose

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return Tensor._make(self._data.T)

    def permute(self, *dims: Any) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        axes = [normalize_dim(d, self.ndim) for d in dims]
        if sorted(axes) != list(range(self.ndim)):
            raise RuntimeError("permute(): dims don't match the tensor's number of dimensions")
        return Tensor._make(np.transpose(self._data, axes))

    def expand(self, *sizes: Any) -> Tensor:
        target = list(parse_shape(sizes))
        lead = len(target) - self.ndim
        for i in range(self.ndim):
            if target[lead + i] == -1:
                target[lead + i] = self._data.shape[i]
        return Tensor._make(np.broadcast_to(self._data, tuple(target)))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        reps = parse_shape(sizes)
        return Tensor._make(np.tile(self._data, reps))

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
    amax = _reduction("amax", np.max)
    amin = _reduction("amin", np.min)
    all = _reduction("all", np.all)
    any = _reduction("any", np.any)

    # float functions (integers become the default float): within 2 ulps of torch (see kernels)
    exp = _float_function("exp", np.exp)
    expm1 = _float_function("expm1", np.expm1)
    log = _float_function("log", np.log)
    log1p = _float_function("log1p", np.log1p)
    tanh = _float_function("tanh", np.tanh)

    # exact elementwise functions (round: half to even, like torch)
    sign = _exact_function("sign", np.sign)
    floor = _exact_function("floor", np.floor)
    ceil = _exact_function("ceil", np.ceil)
    round = _exact_function("round", np.round)
    trunc = _exact_function("trunc", np.trunc)
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


def _keep(out: np.ndarray, axes: tuple[int, ...], keepdim: bool) -> np.ndarray:
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
    return Tensor._make(fn(x, y))


def power(base: Any, exponent: Any) -> Tensor:
    """torch.pow, with torch's exact special cases for common Python exponents."""
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
        if e == 0:  # torch fills ones for x ** 0 and copies for x ** 1, for any dtype
            return Tensor._make(np.ones_like(x))
        if e == 1:
            return Tensor._make(x.copy())
        if dt is dtypes.bool_:
            raise NotImplementedError('"pow" not implemented for \'Bool\'')
        if not dt.is_floating_point:
            if e < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            return Tensor._make(_int_power(x, np.asarray(int(e))).astype(dt.np_dtype))
        one = x.dtype.type(1)
        with np.errstate(all="ignore"):
            if e == 2:
                return Tensor._make(x * x)
            if e == 3:
                return Tensor._make(x * x * x)
            if e == 0.5:
                return Tensor._make(np.sqrt(x))
            if e == -0.5:
                return Tensor._make(one / np.sqrt(x))
            if e == -1:
                return Tensor._make(one / x)
            if e == -2:
                return Tensor._make(one / (x * x))
    if dt is dtypes.bool_:
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    x, y = as_operand(base, dt), as_operand(exponent, dt)
    if not dt.is_floating_point:
        return Tensor._make(_int_power(x, y).astype(dt.np_dtype))
    with np.errstate(all="ignore"):
        # float64 then one rounding: within 2 ulps of torch's pow (see kernels)
        out = np.power(x.astype(np.float64), y.astype(np.float64))
        return Tensor._make(out.astype(dt.np_dtype))


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
    return Tensor._make(np.asarray(out).astype(dt.np_dtype, copy=False))


def _shifted(x: Tensor, dim: int, dt: dtype | None, name: str) -> tuple[np.ndarray, int]:
    """``x - max(x)`` along ``dim`` (in ``dt`` if given; a 0-d tensor as one element), and the
    axis; only float tensors, as torch's softmax kernels."""
    data = (x if dt is None else x.to(dt))._data
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


# what Tensor offers, for the error messages (backward and requires_grad_ only raise)
_TENSOR_API = [
    name for name in dir(Tensor)
    if not name.startswith("_") and name not in ("backward", "requires_grad_")
]
