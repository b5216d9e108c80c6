"""The dtypes the browser's torch layer supports, and torch's type-promotion rules for them.

Supported: ``float32`` (``float``, the default), ``float64`` (``double``), ``int64`` (``long``),
``int32`` (``int``) and ``bool``. Promotion follows ``c10::promoteTypes`` plus the three-tier rule
of ``at::native::result_type``: tensors with dimensions outrank 0-d tensors, which outrank Python
numbers, *unless* a lower tier brings a higher category (bool < integer < floating).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "DEFAULT_FLOAT",
    "bool_",
    "combine_tiers",
    "dtype",
    "finfo",
    "float32",
    "float64",
    "from_numpy_dtype",
    "int32",
    "int64",
    "promote",
    "scalar_dtype",
]


class dtype:
    """A torch dtype: prints as ``torch.float32`` and maps to one NumPy dtype."""

    def __init__(self, name: str, np_dtype: type, rank: int, is_floating_point: bool) -> None:
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.rank = rank  # order inside promotion: bool < int32 < int64 < float32 < float64
        self.is_floating_point = is_floating_point
        self.is_signed = name != "bool"
        self.is_complex = False
        self.itemsize = self.np_dtype.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


bool_ = dtype("bool", np.bool_, 0, False)
int32 = dtype("int32", np.int32, 1, False)
int64 = dtype("int64", np.int64, 2, False)
float32 = dtype("float32", np.float32, 3, True)
float64 = dtype("float64", np.float64, 4, True)
DEFAULT_FLOAT = float32

_BY_NUMPY = {d.np_dtype: d for d in (bool_, int32, int64, float32, float64)}


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The torch dtype of a NumPy dtype; anything outside the supported five is an error."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise NotImplementedError(
            f"NumPy dtype {np.dtype(np_dtype)} has no counterpart in the browser's torch layer "
            "(rl_ops_numpy); supported: float32, float64, int64, int32, bool"
        ) from None


def promote(a: dtype | None, b: dtype | None) -> dtype | None:
    """``c10::promoteTypes`` restricted to the supported dtypes (None = undefined)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if a.rank >= b.rank else b


def scalar_dtype(value: object) -> dtype:
    """The dtype a Python number takes as a 'wrapped number': bool, int64, or the default float."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, numbers.Integral):
        return int64
    if isinstance(value, numbers.Real):
        return DEFAULT_FLOAT
    raise TypeError(f"unsupported operand type for a tensor operation: {type(value).__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # c10 combine_categories: a lower tier only matters if it brings a higher category
    # (a float into integers, or anything into bool).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote(higher, lower)
    return higher


def combine_tiers(
    dimensioned: dtype | None, zero_dim: dtype | None, wrapped: dtype | None
) -> dtype:
    """The three-tier rule of ``at::native::result_type``, given each tier's promoted dtype
    (None for an empty tier): tensors with dimensions, 0-d tensors, Python numbers.

    ``tensor.result_type`` sorts its operands into the tiers (this module knows no tensors).
    """
    out = _combine(dimensioned, _combine(zero_dim, wrapped))
    if out is None:
        raise TypeError("result_type needs at least one tensor or number")
    return out


class finfo:
    """torch.finfo for the float dtypes: bits, eps, max, min, tiny, resolution."""

    def __init__(self, type: dtype | None = None) -> None:
        dt = type or DEFAULT_FLOAT
        if not dt.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use "
                            f"torch.iinfo to handle '{dt}'")
        info = np.finfo(dt.np_dtype)
        self.dtype = dt.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = float(info.resolution)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")
