"""The numerical kernels where the layer computes differently from plain NumPy.

The layer's contract with torch (tested in ``tests/test_torch_layer.py``) holds on every CPU:

* ``+ − × ÷``, comparisons, ``clamp``/``max``/``min``, ``sqrt``, indexing and casts are IEEE
  operations in the tensor's dtype: the same bits as torch, whatever the CPU.
* Transcendental functions (``exp``, ``log``, ``expm1``, ``log1p``, ``tanh``, ``**``) go through
  ``float_unary``: float64, then one rounding to the tensor's dtype. A float32 result is then
  within one ulp of the exact value (NumPy's float64 kernels are within an ulp, and may be SVML
  on AVX-512 CPUs); torch's SLEEF or libm kernels are too, so the two agree to 2 ulps.
  Composite functions (``sigmoid``, ``softplus``, ``softmax``…) to a few more.
* Float sums go through ``float_sum``: float32 data accumulated in float64 and rounded once (so
  the result is as good as a correctly rounded one), float64 data by NumPy's pairwise sum. torch
  sums in the tensor's own precision in an order that depends on the CPU's vector width, so the
  two agree within Higham's bound for any summation order, ``γ_{n−1} · Σ|xᵢ|``.

Printed values (4 decimals in the lessons) are therefore the same as torch's except when a value
falls within an ulp of a printing boundary; the tests check that for every lesson's output.
"""

from __future__ import annotations

import numpy as np

__all__ = ["float_pow", "float_sum", "float_unary"]


def float_unary(fn, x: np.ndarray) -> np.ndarray:
    """Apply a NumPy float64 ufunc and round once to x's float dtype."""
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64)).astype(x.dtype)


def float_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Sum a float array over ``axes``; float32 accumulates in float64 and is rounded once."""
    with np.errstate(all="ignore"):
        return np.sum(x, axis=axes, dtype=np.float64).astype(x.dtype)


def float_pow(x: np.ndarray, exponent: float) -> np.ndarray:
    """``x ** exponent`` for a float array and a Python number, as torch's CPU kernel: exact
    special cases (0, 1, 2, 3, 0.5, −0.5, −1, −2), else the exponent rounded to x's dtype and
    ``float_unary``'s one rounding of a float64 power (within 2 ulps of torch)."""
    e = exponent
    one = x.dtype.type(1)
    with np.errstate(all="ignore"):
        if e == 0:
            return np.ones_like(x)
        if e == 1:
            return x.copy()
        if e == 2:
            return x * x
        if e == 3:
            return x * x * x
        if e == 0.5:
            return np.sqrt(x)
        if e == -0.5:
            return one / np.sqrt(x)
        if e == -1:
            return one / x
        if e == -2:
            return one / (x * x)
        power = np.float64(x.dtype.type(e))
        return np.power(x.astype(np.float64), power).astype(x.dtype)
