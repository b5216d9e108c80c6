"""Shape and value checks every operator shares.

Every public operator goes through these helpers first, so that bad input fails with one clear
`ValueError` naming the arguments, instead of being silently broadcast into a wrong answer.

Dtype rule: floating NumPy inputs keep their dtype (float32 in, float32 out); integers, booleans,
lists and scalars follow it (float64 if nothing sets it); float32 with float64 gives float64, as
NumPy promotes. Masks never set it: they are checked as they come and used as 0/1 flags only.
Scalar parameters (clip ranges, β, γ, λ) become Python floats, which never widen an array (a NumPy
float64 scalar would); switches (``shift_mean``, ``scale_by_std``) must be booleans, so that a
string such as ``"False"`` is refused rather than read as true.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "MASKS",
    "as_float_arrays",
    "bool_mask",
    "check_ndim",
    "check_same_shape",
    "flag",
    "number",
    "token_arrays",
]

# arguments that hold 0/1 flags: checked in their own dtype, never setting the data's
MASKS = frozenset({"mask", "response_mask", "dones"})


def as_float_arrays(**named: object) -> tuple[np.ndarray, ...]:
    """Convert every argument to a floating array of one common dtype, in the given order.

    The dtype comes from the data arguments that already are floating NumPy arrays (float32 stays
    float32, float32 with float64 gives float64); integers, booleans, lists and scalars follow it,
    and are float64 when no argument sets it. Masks (the names in ``MASKS``) come back as arrays
    of their own dtype, so that :func:`bool_mask` checks the values the caller passed (a float64
    ``1 + 1e-10`` would round to a float32 ``1.0``).
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
        for (name, x), a in zip(named.items(), arrays.values(), strict=True)
        if name not in MASKS and isinstance(x, np.ndarray | np.generic) and a.dtype.kind == "f"
    ]
    dtype = np.result_type(*floating) if floating else np.dtype(np.float64)
    return tuple(
        a if name in MASKS else a.astype(dtype, copy=False) for name, a in arrays.items()
    )


def _fmt(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def check_same_shape(**named: np.ndarray) -> None:
    """Raise ValueError naming every argument and its shape unless all shapes are equal."""
    shapes = [np.shape(a) for a in named.values()]
    if shapes.count(shapes[0]) != len(shapes):
        listed = ", ".join(f"{name} {_fmt(s)}" for name, s in zip(named, shapes, strict=True))
        raise ValueError(f"shapes disagree: {listed}; these arguments must have the same shape")


def check_ndim(ndim: int, /, *, shape: str | None = None, **named: np.ndarray) -> None:
    """Raise ValueError unless every argument has exactly `ndim` dimensions; ``shape`` names the
    wanted shape in the message (``[T]`` and ``[B, T]`` by default)."""
    for name, a in named.items():
        if np.ndim(a) != ndim:
            want = shape or {1: "[T]", 2: "[B, T]"}.get(ndim, f"{ndim}-D")
            raise ValueError(f"{name} must be {want}, got shape {_fmt(np.shape(a))}")


def bool_mask(mask: np.ndarray, name: str) -> np.ndarray:
    """``mask != 0``, after checking that every value is exactly 0 or 1 (ValueError otherwise)."""
    real = mask != 0
    if np.count_nonzero(mask == 1) != np.count_nonzero(real):
        first = mask[real & (mask != 1)].flat[0].item()
        raise ValueError(f"{name} must hold only 0 and 1, found {first!r}")
    return real


def token_arrays(*, apart: tuple[str, ...] = (), **named: object) -> tuple[np.ndarray, ...]:
    """The ``[B, T]`` arguments of a token operator, checked, in the order given: float arrays of
    one dtype (:func:`as_float_arrays`), two-dimensional and all of one shape but those named in
    ``apart`` (advantages, one per response: their shape is the caller's to check); the masks
    (the names in ``MASKS``) come back as booleans (:func:`bool_mask`)."""
    arrays = dict(zip(named, as_float_arrays(**named), strict=True))
    shaped = {name: a for name, a in arrays.items() if name not in apart}
    check_same_shape(**shaped)
    first = next(iter(shaped))
    check_ndim(2, **{first: shaped[first]})
    return tuple(bool_mask(a, name) if name in MASKS else a for name, a in arrays.items())


def number(name: str, x: object, *, low: float = -math.inf, high: float = math.inf,
           above: bool = False) -> float:
    """``x`` as a Python float, after checking that it is one finite real number in
    ``[low, high]`` (``(low, high]`` with ``above``); ValueError otherwise.

    Booleans, strings, None and arrays of more than one value are refused, not converted.
    """
    if type(x) is not float:  # a Python float needs no look (the common case, and fast)
        if isinstance(x, np.ndarray) and x.ndim == 0:
            x = x[()]  # a 0-d array: its one value
        if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
            shaped = isinstance(x, np.ndarray | list | tuple)
            got = f"shape {_fmt(np.shape(x))}" if shaped else repr(x)
            raise ValueError(f"{name} must be a single number, got {got}")
    value = float(x)
    low_ok = value > low if above else value >= low
    if not (math.isfinite(value) and low_ok and value <= high):
        if high < math.inf:
            want = f"in {'(' if above else '['}{low:g}, {high:g}]"
        elif low > -math.inf:
            want = f"a finite number {'>' if above else '>='} {low:g}"
        else:
            want = "a finite number"
        raise ValueError(f"{name} must be {want}, got {value!r}")
    return value


def flag(name: str, x: object) -> bool:
    """``x`` as a Python bool, after checking that it is one (``True``, ``False`` or a NumPy
    boolean); ValueError otherwise. A string, a number or None is refused, not read by its truth
    value: ``"False"`` is true in Python, and ``float("nan")`` too."""
    if x is True or x is False:
        return x
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]  # a 0-d array: its one value
    if not isinstance(x, np.bool_):
        raise ValueError(f"{name} must be True or False, got {x!r}")
    return bool(x)
