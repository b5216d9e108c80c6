"""torch's module-level functions: tensor creation, random tensors, function forms of ops, and
the grad-mode switches (``no_grad`` and its kin, from ``graph``).

Several names here (``abs``, ``all``, ``any``, ``max``, ``min``, ``pow``, ``sum``) shadow Python
builtins on purpose, as they do in torch; code below reaches the builtins through ``builtins.``.
"""

from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from . import derivatives as rules
from . import dtypes
from .dtypes import DEFAULT_FLOAT, dtype, from_numpy_dtype
from .errors import unsupported
from .graph import (
    MODE,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .random import Generator, default_generator, initial_seed, manual_seed, seed
from .tensor import (
    Tensor,
    as_operand,
    device,
    from_data,
    normalize_dim,
    parse_shape,
    power,
    record,
    recording,
    result_type,
    where,
)

# every public name (``torch.<name>``): those defined below, and those imported above
__all__ = [
    "abs", "all", "allclose", "any", "arange", "argmax", "argmin", "as_tensor", "cat", "clamp",
    "clip", "concat", "concatenate", "cumsum", "empty", "empty_like", "enable_grad", "equal",
    "exp", "expm1", "flatten", "flip", "from_numpy", "full", "full_like", "gather",
    "get_default_dtype", "inference_mode", "initial_seed", "is_floating_point",
    "is_grad_enabled", "is_inference_mode_enabled", "is_tensor", "isclose", "isfinite",
    "isinf", "isnan", "log", "log1p", "log_softmax", "logical_and", "logical_not",
    "logical_or", "logsumexp", "manual_seed", "masked_fill", "max", "maximum", "mean", "min",
    "minimum", "nanquantile", "neg", "no_grad", "nonzero", "numel", "ones", "ones_like", "pow",
    "quantile", "rand", "rand_like", "randint", "randn", "randn_like", "relu", "reshape",
    "seed", "set_grad_enabled", "sigmoid", "softmax", "sqrt", "square", "squeeze", "stack",
    "std", "sum", "tanh", "tensor", "topk", "unsqueeze", "var", "where", "zeros", "zeros_like",
]


def _check_device(dev: Any) -> None:
    if dev is not None:
        device(str(dev))


def _leaf(t: Tensor, requires_grad: bool) -> Tensor:
    """A new tensor, made a leaf that requires grad if asked (floats only, as torch)."""
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad_()
    return t


# ---- creation ----------------------------------------------------------------------------------


def tensor(
    data: Any,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """torch.tensor: Python floats → float32, ints → int64, bools → bool; always a copy."""
    _check_device(device)
    return _leaf(from_data(data, dtype), requires_grad)


def as_tensor(data: Any, dtype: dtype | None = None, device: Any = None) -> Tensor:
    if isinstance(data, Tensor):
        _check_device(device)
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype.np_dtype):
        from_numpy_dtype(data.dtype)
        return Tensor._make(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _no_extra(name: str, kw: dict[str, Any]) -> None:
    """Accept torch's layout/memory-format keywords (only the default exists) and nothing else."""
    for key in ("layout", "memory_format", "pin_memory"):
        kw.pop(key, None)
    if kw:
        raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kw)}")


def _filled(name: str, shape_args: Sequence[Any], value: Any, dt: dtype | None,
            kw: dict[str, Any]) -> Tensor:
    _check_device(kw.pop("device", None))
    requires_grad = kw.pop("requires_grad", False)
    size = kw.pop("size", None)
    _no_extra(name, kw)
    shape = parse_shape(shape_args if size is None else (size,), name)
    out = Tensor._make(np.full(shape, value, dtype=(dt or DEFAULT_FLOAT).np_dtype))
    return _leaf(out, requires_grad)


def zeros(*size: Any, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return _filled("zeros", size, 0, dtype, kw)


def ones(*size: Any, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return _filled("ones", size, 1, dtype, kw)


def empty(*size: Any, dtype: dtype | None = None, **kw: Any) -> Tensor:
    # torch leaves the memory uninitialised; zeros are a deterministic stand-in
    return _filled("empty", size, 0, dtype, kw)


def full(size: Any, fill_value: Any, *, dtype: dtype | None = None, **kw: Any) -> Tensor:
    """torch.full: the dtype follows the fill value (float → float32, int → int64, bool)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled("full", (size,), fill_value, dtype or dtypes.scalar_dtype(fill_value), kw)


def _like(name: str, t: Tensor, value: Any, dt: dtype | None, kw: dict[str, Any]) -> Tensor:
    _check_device(kw.pop("device", None))
    requires_grad = kw.pop("requires_grad", False)
    _no_extra(name, kw)
    if isinstance(value, Tensor):
        value = value.item()
    out = Tensor._make(np.full(t._data.shape, value, dtype=(dt or t.dtype).np_dtype))
    return _leaf(out, requires_grad)


def zeros_like(input: Tensor, *, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return _like("zeros_like", input, 0, dtype, kw)


def ones_like(input: Tensor, *, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return _like("ones_like", input, 1, dtype, kw)


def empty_like(input: Tensor, *, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return _like("empty_like", input, 0, dtype, kw)


def full_like(input: Tensor, fill_value: Any, *, dtype: dtype | None = None,
              **kw: Any) -> Tensor:
    return _like("full_like", input, fill_value, dtype, kw)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: dtype | None = None,
           **kw: Any) -> Tensor:
    """torch.arange: int64 if start, end and step are all ints, else float32."""
    _check_device(kw.pop("device", None))
    requires_grad = kw.pop("requires_grad", False)
    _no_extra("arange", kw)
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    all_int = builtins.all(isinstance(v, numbers.Integral) for v in (start, end, step))
    target = dtype or (dtypes.int64 if all_int else DEFAULT_FLOAT)
    if all_int:
        values = np.arange(start, end, step, dtype=np.int64)
    else:
        n = builtins.max(0, math.ceil((end - start) / step))  # computed in double, as torch
        values = start + step * np.arange(n, dtype=np.float64)
    return _leaf(Tensor._make(values.astype(target.np_dtype)), requires_grad)


# ---- random --------------------------------------------------------------------------------------


def _random(kind: str, size: Sequence[Any], kw: dict[str, Any]) -> Tensor:
    dt = kw.pop("dtype", None) or DEFAULT_FLOAT
    _check_device(kw.pop("device", None))
    requires_grad = kw.pop("requires_grad", False)
    gen = kw.pop("generator", None) or default_generator
    name = "randn" if kind == "normal_kernel_cpu" else "rand"
    shape = parse_shape(size if "size" not in kw else (kw.pop("size"),), name)
    _no_extra(name, kw)
    if not dt.is_floating_point:
        raise RuntimeError(f'"{kind}" not implemented for \'{dt.name}\'')
    n = math.prod(shape)
    draw = gen.randn if kind == "normal_kernel_cpu" else gen.rand
    return _leaf(Tensor._make(draw(n, dt.np_dtype).reshape(shape)), requires_grad)


def randn(*size: Any, **kw: Any) -> Tensor:
    """Standard normal samples from torch's CPU generator after manual_seed: the same bits for
    fewer than 16 values, within 2e-6 for more (see ``random``)."""
    return _random("normal_kernel_cpu", size, kw)


def rand(*size: Any, **kw: Any) -> Tensor:
    """Uniform samples in [0, 1), bit-identical to torch's CPU generator after manual_seed."""
    return _random("uniform_kernel_cpu", size, kw)


def randn_like(input: Tensor, *, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return randn(*input.shape, dtype=dtype or input.dtype, **kw)


def rand_like(input: Tensor, *, dtype: dtype | None = None, **kw: Any) -> Tensor:
    return rand(*input.shape, dtype=dtype or input.dtype, **kw)


def randint(*args: Any, dtype: dtype | None = None, generator: Generator | None = None,
            device: Any = None, requires_grad: bool = False, **kw: Any) -> Tensor:
    """torch.randint(high, size) or randint(low, high, size): (u32 % range) + low, as torch."""
    _check_device(device)
    if "size" in kw:
        args = (*args, kw.pop("size"))
    _no_extra("randint", kw)
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    span = int(high) - int(low)
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if span >= 2**32:
        raise unsupported("torch.randint with a range of 2**32 or more")
    shape = parse_shape(size)
    gen = generator or default_generator
    draws = gen._u32(math.prod(shape)).astype(np.int64)
    target = dtype or dtypes.int64
    out = Tensor._make((draws % span + int(low)).astype(target.np_dtype).reshape(shape))
    return _leaf(out, requires_grad)


# ---- function forms of tensor methods ----------------------------------------------------------


def _tensor_arg(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _method_form(name: str) -> Callable[..., Any]:
    """``torch.<name>(input, *args, **kwargs)``: ``input.<name>(*args, **kwargs)``."""

    def forward(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(_tensor_arg(input, name), name)(*args, **kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = f"torch.{name}(input, ...): the same as input.{name}(...)."
    return forward


# one forwarder each (array-api-compat's way); only real differences are written out after them
exp = _method_form("exp")
expm1 = _method_form("expm1")
log = _method_form("log")
log1p = _method_form("log1p")
sqrt = _method_form("sqrt")
sigmoid = _method_form("sigmoid")
tanh = _method_form("tanh")
relu = _method_form("relu")
abs = _method_form("abs")
square = _method_form("square")
isnan = _method_form("isnan")
isinf = _method_form("isinf")
isfinite = _method_form("isfinite")
logical_not = _method_form("logical_not")
logical_and = _method_form("logical_and")
logical_or = _method_form("logical_or")
clamp = _method_form("clamp")
maximum = _method_form("maximum")
minimum = _method_form("minimum")
max = _method_form("max")
min = _method_form("min")
sum = _method_form("sum")
mean = _method_form("mean")
var = _method_form("var")
std = _method_form("std")
argmax = _method_form("argmax")
argmin = _method_form("argmin")
topk = _method_form("topk")
all = _method_form("all")
any = _method_form("any")
cumsum = _method_form("cumsum")
logsumexp = _method_form("logsumexp")
quantile = _method_form("quantile")
nanquantile = _method_form("nanquantile")
softmax = _method_form("softmax")  # torch.softmax(input, dim, dtype=None), as the method
log_softmax = _method_form("log_softmax")
reshape = _method_form("reshape")
flatten = _method_form("flatten")
unsqueeze = _method_form("unsqueeze")
squeeze = _method_form("squeeze")
flip = _method_form("flip")
masked_fill = _method_form("masked_fill")
gather = _method_form("gather")
nonzero = _method_form("nonzero")
numel = _method_form("numel")
is_floating_point = _method_form("is_floating_point")
clip = clamp


def neg(input: Tensor) -> Tensor:
    return -_tensor_arg(input, "neg")


def pow(input: Any, exponent: Any) -> Tensor:  # a number may come first: 2 ** tensor
    return power(input, exponent)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    dt = result_type(*tensors)
    axis = normalize_dim(dim, tensors[0].ndim + 1)
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise RuntimeError("stack expects each tensor to be equal size, but got "
                           f"{tensors[0].shape!r} at entry 0 and another shape")
    out = Tensor._make(np.stack([as_operand(t, dt) for t in tensors], axis=axis))
    if MODE.leaves and recording(*tensors):
        record(out, "StackBackward0", tensors, partial(rules.stack, axis, len(tensors)))
    return out


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    dt = result_type(*tensors)
    parts = [t for t in tensors if not (t.ndim == 1 and t.numel() == 0)] or tensors[:1]
    if builtins.any(t.ndim == 0 for t in parts):
        raise RuntimeError("zero-dimensional tensor cannot be concatenated")
    axis = normalize_dim(dim, parts[0].ndim)
    out = Tensor._make(np.concatenate([as_operand(t, dt) for t in parts], axis=axis))
    if MODE.leaves and recording(*tensors):
        # an empty 1-D tensor that cat skipped gets an empty gradient
        sizes = tuple(t._data.shape[axis] if builtins.any(t is p for p in parts) else None
                      for t in tensors)
        record(out, "CatBackward0", tensors,
               partial(rules.cat, axis, sizes, tuple(t._data.shape for t in tensors)))
    return out


concat = cat
concatenate = cat


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    a, b = np.asarray(input._data, np.float64), np.asarray(as_operand(other, input.dtype),
                                                           np.float64)
    return Tensor._make(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input: Tensor, other: Tensor) -> bool:
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def get_default_dtype() -> dtype:
    return DEFAULT_FLOAT

