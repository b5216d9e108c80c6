"""Numerical kernels that mirror how torch's CPU build computes, where NumPy's defaults differ.

* ``cascade_sum``: torch sums float tensors with ``cascade_sum`` (aten/src/ATen/native/cpu/
  SumKernel.cpp) in the tensor's own precision, in an order set by TensorIterator's dim order,
  8-lane vectors (AVX2, also the width of torch's generic x86 build), four interleaved
  accumulators and a levelled tree. The port reproduces that order for any dims and strides, so
  sums (and means) are bit-identical to torch on x86-64 while torch stays single-threaded (below
  32768 elements; above, torch splits the work across threads). Broadcast (stride-0) inputs fall
  back to a float64 sum rounded once.
* ``fma32``: a float32 fused multiply-add (one rounding), exact via round-to-odd in float64.
* Transcendental functions (``exp``, ``log``, ``expm1``, ``log1p``, ``tanh``) are computed in
  float64 and rounded once, i.e. correctly rounded. torch uses SLEEF's vectorised float32 versions
  (≤ 1 ulp), so single values can differ from torch in the last bit.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cascade_sum", "float_unary", "fma32"]

_VECTOR_BYTES = 32  # one AVX2 register: Vectorized<float> has 8 lanes, Vectorized<double> 4
_ILP = 4  # row_sum's ilp_factor
_LEVELS = 4  # multi_row_sum's num_levels


def fma32(a: np.ndarray, b: np.ndarray | np.floating, c: np.ndarray | np.floating) -> np.ndarray:
    """``a * b + c`` in float32 with a single rounding, like ``_mm256_fmadd_ps``."""
    a64 = np.asarray(a, np.float32).astype(np.float64)
    b64 = np.asarray(b, np.float32).astype(np.float64)
    c64 = np.asarray(c, np.float32).astype(np.float64)
    p = a64 * b64  # exact: 24 + 24 bits fit in a double
    s = p + c64
    # TwoSum gives the exact error of s; rounding s to odd before the final float32 rounding
    # avoids the double-rounding trap (53 >= 24 + 2 bits).
    bv = s - p
    err = (p - (s - bv)) + (c64 - bv)
    even = (s.view(np.int64) & 1) == 0
    nudge = (err != 0) & even & np.isfinite(s)
    s = np.where(nudge, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def float_unary(fn, x: np.ndarray) -> np.ndarray:
    """Apply a NumPy float64 ufunc and round once to x's float dtype (correct rounding)."""
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64)).astype(x.dtype)


# ---------------------------------------------------------------------------------------------
# cascade_sum port. Arrays below carry the reduced axis first; any trailing axes are independent
# lanes (vector lanes, interleaved rows, or separate outputs) summed in parallel.


def _ceil_log2(n: int) -> int:
    return 0 if n <= 1 else (n - 1).bit_length()


def _sequential(rows: np.ndarray) -> np.ndarray:
    """0 + rows[0] + rows[1] + ... in the rows' dtype (add.accumulate never reassociates)."""
    if rows.shape[0] == 0:
        return np.zeros(rows.shape[1:], rows.dtype)
    return np.add.accumulate(rows, axis=0)[-1] + rows.dtype.type(0)


def _multi_row_sum(rows: np.ndarray) -> np.ndarray:
    """multi_row_sum: a running sum that is folded into coarser accumulators every level_step."""
    size = rows.shape[0]
    level_power = max(4, _ceil_log2(size) // _LEVELS)
    level_step = 1 << level_power
    level_mask = level_step - 1
    zero = np.zeros(rows.shape[1:], rows.dtype)
    acc = [zero.copy() for _ in range(_LEVELS)]
    i = 0
    while i + level_step <= size:
        acc[0] = _sequential(rows[i : i + level_step])  # acc[0] is always 0 here
        i += level_step
        for j in range(1, _LEVELS):
            acc[j] = acc[j] + acc[j - 1]
            acc[j - 1] = zero.copy()
            if i & (level_mask << (j * level_power)):
                break
    acc[0] = _sequential(rows[i:])
    for j in range(1, _LEVELS):
        acc[0] = acc[0] + acc[j]
    return acc[0]


def _row_sum(rows: np.ndarray) -> np.ndarray:
    """row_sum: four interleaved partial sums (ilp), the leftovers, then the partials in order."""
    size = rows.shape[0]
    n_ilp = size // _ILP
    interleaved = rows[: n_ilp * _ILP].reshape((n_ilp, _ILP, *rows.shape[1:]))
    partial = _multi_row_sum(interleaved)
    total = partial[0]
    for i in range(n_ilp * _ILP, size):
        total = total + rows[i]
    for k in range(1, _ILP):
        total = total + partial[k]
    return total


def _inner_sum(x: np.ndarray) -> np.ndarray:
    """vectorized_inner_sum over the last axis (contiguous); leading axes are separate rows."""
    n = x.shape[-1]
    lanes = _VECTOR_BYTES // x.dtype.itemsize
    if n < lanes:
        return _row_sum(np.moveaxis(x, -1, 0))
    n_vec = n // lanes
    vecs = x[..., : n_vec * lanes].reshape((*x.shape[:-1], n_vec, lanes))
    vec_acc = _row_sum(np.moveaxis(vecs, -2, 0))  # shape (..., lanes)
    total = np.zeros(x.shape[:-1], x.dtype)
    for k in range(n_vec * lanes, n):  # the scalar tail first ...
        total = total + x[..., k]
    for k in range(lanes):  # ... then the vector lanes, in order
        total = total + vec_acc[..., k]
    return total


def _vectorized_outer_sum(x: np.ndarray) -> np.ndarray:
    """Sum over axis 0 of (size0, ..., size1) with contiguous columns (the last axis)."""
    size1 = x.shape[-1]
    lanes = _VECTOR_BYTES // x.dtype.itemsize
    out = np.empty(x.shape[1:], x.dtype)
    lead = x.shape[:-1]
    n32 = size1 // (4 * lanes)  # groups of four vectors, summed without interleaving
    j = n32 * 4 * lanes
    if n32:
        block = x[..., :j].reshape((*lead, n32, 4, lanes))
        out[..., :j] = _multi_row_sum(block).reshape((*lead[1:], j))
    n8 = (size1 - j) // lanes  # single vectors, with row_sum's interleaving
    if n8:
        block = x[..., j : j + n8 * lanes].reshape((*lead, n8, lanes))
        out[..., j : j + n8 * lanes] = _row_sum(block).reshape((*lead[1:], n8 * lanes))
        j += n8 * lanes
    if j < size1:  # leftover columns one by one
        out[..., j:] = _row_sum(x[..., j:])
    return out


def _scalar_outer_sum(x: np.ndarray) -> np.ndarray:
    """Sum over axis 0 of (size0, ..., size1): columns in fours without interleaving, then one
    by one."""
    size1 = x.shape[-1]
    out = np.empty(x.shape[1:], x.dtype)
    j = (size1 // 4) * 4
    if j:
        block = x[..., :j].reshape((*x.shape[:-1], j // 4, 4))
        out[..., :j] = _multi_row_sum(block).reshape((*x.shape[1:-1], j))
    if j < size1:
        out[..., j:] = _row_sum(x[..., j:])
    return out


def _loop2d(y: np.ndarray, dims: list[tuple[int, int, bool]]) -> tuple[np.ndarray, bool]:
    """cascade_sum's loop over the two fastest dims of the iterator (``dims[0]`` fastest).

    ``y`` has these two dims last (fastest last) after any outer dims. Returns the results of the
    2-D kernel and whether their last axis is a reduced one (rows that torch adds one after
    another into the same output, to be accumulated by the caller).
    """
    (n0, s0, red0), (n1, s1, red1) = dims
    block = y  # (..., n1, n0)
    if not red0 and not red1:  # not a true reduction: outputs take the inputs as they are
        return block + y.dtype.type(0), False
    if not red0:  # move the reduced dim first, as torch swaps it into size0
        block = np.swapaxes(block, -1, -2)
        (n0, s0, red0), (n1, s1, red1) = (n1, s1, red1), (n0, s0, red0)
    lanes = _VECTOR_BYTES // y.dtype.itemsize
    cols = np.moveaxis(block, -1, 0)  # (n0, ..., n1): reduced dim first
    if s0 == 1 and n0 >= lanes:
        r = _inner_sum(block)
    elif s1 == 1 and n1 >= lanes:
        r = _vectorized_outer_sum(cols)
    elif s0 < s1:
        r = _row_sum(cols)
    else:
        r = _scalar_outer_sum(cols)
    return r, red1


def cascade_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Sum a float array over ``axes`` (non-negative) in torch's CPU order.

    Follows TensorIterator: drop size-1 dims, put the reduced dims first (fastest, by stride) and
    the kept dims after them in the output's order, merge neighbours that are both reduced or both
    kept and adjacent in memory, run cascade_sum's 2-D kernel on the two fastest dims and
    accumulate over the outer ones in iteration order. Returns an array
    shaped like x without ``axes`` (keepdim is the caller's job).
    """
    out_shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    live = [i for i in range(x.ndim) if x.shape[i] != 1]
    if x.size == 0 or any(x.strides[i] <= 0 for i in live):
        # empty, or broadcast (stride 0): correctly rounded instead
        return np.sum(x, axis=axes, dtype=np.float64).astype(x.dtype).reshape(out_shape)
    item = x.itemsize
    # TensorIterator's order for a reduction into a fresh (contiguous) output, fastest first: the
    # reduced dims (by input stride), then the kept dims in the output's order (last dim first)
    order = sorted((i for i in live if i in axes), key=lambda i: x.strides[i]) + sorted(
        (i for i in live if i not in axes), reverse=True
    )
    groups: list[list[int]] = []
    for i in order:
        if groups:
            last = groups[-1][-1]
            same = (last in axes) == (i in axes)
            if same and x.strides[last] * x.shape[last] == x.strides[i]:
                groups[-1].append(i)
                continue
        groups.append([i])
    dims = [
        (math.prod(x.shape[i] for i in g), x.strides[g[0]] // item, g[0] in axes) for g in groups
    ]
    while len(dims) < 2:
        dims.append((1, 0, True))
        groups.append([])
    # y: slowest group first, each group one axis (its members slowest first)
    y = np.transpose(x, [i for g in reversed(groups) for i in reversed(g)] + [
        i for i in range(x.ndim) if i not in live
    ]).reshape([d[0] for d in reversed(dims)])
    r, rows_reduced = _loop2d(y, dims[:2])
    outer = list(reversed(dims[2:]))  # slowest first, as y's leading axes
    outer_groups = list(reversed(groups[2:]))
    kept_outer = [k for k, d in enumerate(outer) if not d[2]]
    # Everything that lands in one output is added to it one piece after another, in iteration
    # order: the reduced outer dims (slowest first), then the 2-D kernel's reduced rows.
    acc = [k for k, d in enumerate(outer) if d[2]] + ([r.ndim - 1] if rows_reduced else [])
    if acc:
        r = np.moveaxis(r, acc, list(range(len(acc))))
        r = _sequential(r.reshape((-1, *r.shape[len(acc) :])))
    # result axes now: kept outer groups (slowest first), then the kept inner groups
    inner_kept = [g for g, d in zip(groups[:2], dims[:2], strict=True) if g and not d[2]]
    kept_axes = [i for k in kept_outer for i in reversed(outer_groups[k])] + [
        i for g in reversed(inner_kept) for i in reversed(g)
    ]
    r = np.asarray(r).reshape([x.shape[i] for i in kept_axes])
    r = np.transpose(r, np.argsort(kept_axes)) if kept_axes else r
    return r.reshape(out_shape)
