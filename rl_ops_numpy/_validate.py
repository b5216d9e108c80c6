"""Shape and value checks every operator shares.

Every public operator goes through these helpers first, so that bad input fails with one clear
`ValueError` naming the arguments, instead of being silently broadcast into a wrong answer.

Dtype rule: floating NumPy inputs keep their dtype (float32 in, float32 out); masks, integers,
booleans, lists and scalars follow it (float64 if nothing sets it); float32 with float64 gives
float64, as NumPy promotes.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_float_arrays",
    "bool_mask",
    "check_ndim",
    "check_positive",
    "check_same_shape",
]


def as_float_arrays(**named: object) -> tuple[np.ndarray, ...]:
    """Convert every argument to a floating array of one common dtype, in the given order.

    The dtype comes from the arguments that already are floating NumPy arrays (float32 stays
    float32, float32 with float64 gives float64); masks, integers, booleans, lists and scalars
    follow it, and are float64 when no argument sets it.
    """
    values = tuple(named.values())
    dtype = getattr(values[0], "dtype", None)
    if dtype is not None and dtype.kind == "f":
        for x in values:
            if type(x) is not np.ndarray or x.dtype != dtype:
                break
        else:
            return values  # the common case: float arrays of one dtype, nothing to convert
    arrays = {}
    for name, x in named.items():
        a = np.asarray(x)
        if a.dtype.kind not in "biuf":
            raise ValueError(f"{name} must hold numbers, got an array of dtype {a.dtype}")
        arrays[name] = a
    floating = [
        a.dtype
        for x, a in zip(named.values(), arrays.values(), strict=True)
        if isinstance(x, np.ndarray | np.generic) and a.dtype.kind == "f"
    ]
    dtype = np.result_type(*floating) if floating else np.dtype(np.float64)
    return tuple(a.astype(dtype, copy=False) for a in arrays.values())


def _fmt(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def check_same_shape(**named: np.ndarray) -> None:
    """Raise ValueError naming every argument and its shape unless all shapes are equal."""
    shapes = [np.shape(a) for a in named.values()]
    if shapes.count(shapes[0]) != len(shapes):
        listed = ", ".join(f"{name} {_fmt(s)}" for name, s in zip(named, shapes, strict=True))
        raise ValueError(f"shapes disagree: {listed}; these arguments must have the same shape")


def check_ndim(ndim: int, **named: np.ndarray) -> None:
    """Raise ValueError unless every argument has exactly `ndim` dimensions."""
    for name, a in named.items():
        if np.ndim(a) != ndim:
            want = {1: "[T]", 2: "[B, T]"}.get(ndim, f"{ndim}-D")
            raise ValueError(f"{name} must be {want}, got shape {_fmt(np.shape(a))}")


def bool_mask(mask: np.ndarray, name: str) -> np.ndarray:
    """``mask != 0``, after checking that every value is exactly 0 or 1 (ValueError otherwise)."""
    real = mask != 0
    if np.count_nonzero(mask == 1) != np.count_nonzero(real):
        first = mask[real & (mask != 1)].flat[0].item()
        raise ValueError(f"{name} must hold only 0 and 1, found {first!r}")
    return real


def check_positive(**named: float) -> None:
    """Raise ValueError unless every scalar is a finite number > 0."""
    for name, v in named.items():
        if not (np.ndim(v) == 0 and np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {np.asarray(v).tolist()!r}")
