"""torch's backward formulas on NumPy arrays: the layer's ``derivatives.yaml``.

Each rule takes the gradient of the operation's output ``g`` (in the output's dtype) and the
arrays its node saved (None for one that torch would not need, because the input it serves does
not require grad), and returns one gradient per input of the operation (None where there is
none). Arguments that are no arrays (an exponent, the reduced dims) come first and are bound with
``functools.partial`` when the node is made. The engine (``graph``) then sums each gradient to
its input's shape and casts it to its dtype.

Every rule does the steps of torch's formula (tools/autograd/derivatives.yaml,
torch/csrc/autograd/FunctionsManual.cpp, and the CPU kernels of the ``*_backward`` ops), in the
tensor's precision, so NaN and inf come out where torch's do: exp's backward is
``grad * result``, so a zero gradient times ``e^∞`` is NaN; where's backward sends the branch not
taken a zero (``where(cond, grad, 0)``), so a NaN upstream does not cross it but ``0 × ∞`` below
it still does; masked_fill's zeroes the filled places; clamp's passes the gradient where
``min ≤ x ≤ max`` (so at the bounds too, and not for NaN); maximum/minimum split it in halves on
ties; max/min over everything share it evenly among the tied maxima; max/min/topk along a dim
give it to the index they returned. Within one operation the values are IEEE steps (exact) or go
through ``kernels`` (within its bounds), as the forward pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .kernels import float_pow, float_sum, float_unary

__all__ = [
    "abs", "add", "amax", "as_strided", "cast", "cat", "clamp", "clamp_tensor", "copy",
    "cumsum", "div", "exp", "expm1", "fill", "flip", "gather", "index", "index_put", "log", "log1p",
    "log_softmax", "logsigmoid", "logsumexp", "masked_fill", "maximum", "mean", "minimum", "mul",
    "neg", "not_implemented", "permute", "pow_base", "pow_scalar", "pow_tensor", "quantile",
    "reciprocal", "relu", "remainder", "repeat", "reshape", "restore", "rsqrt", "select_values",
    "sigmoid", "softmax", "softplus", "spread", "sqrt", "squeeze_to", "stack", "std", "sub",
    "sum", "tanh", "transpose", "unsqueeze", "var", "where", "zero",
]

Grads = tuple[Any, ...]


def _zero(g: np.ndarray) -> np.ndarray:
    return np.zeros((), g.dtype)


def restore(g: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    """A reduction's gradient with the reduced dims put back as ones (``unsqueeze_multiple``)."""
    return g if keepdim else np.expand_dims(g, dims)


# ---- arithmetic ---------------------------------------------------------------------------------


def add(g: np.ndarray) -> Grads:
    return g, g


def sub(g: np.ndarray) -> Grads:
    return g, np.negative(g)


def neg(g: np.ndarray) -> Grads:
    return (np.negative(g),)


def mul(g: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> Grads:
    """self: grad * other; other: grad * self."""
    return (None if b is None else g * b), (None if a is None else g * a)


def div(g: np.ndarray, a: np.ndarray | None, b: np.ndarray) -> Grads:
    """self: grad / other; other: -grad * ((self / other) / other)."""
    with np.errstate(all="ignore"):
        return g / b, (None if a is None else np.negative(g) * ((a / b) / b))


def remainder(g: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> Grads:
    """self: grad; other: -grad * self.div(other, rounding_mode='floor')."""
    with np.errstate(all="ignore"):
        return g, (None if a is None or b is None else np.negative(g) * np.floor_divide(a, b))


def pow_scalar(exponent: float, g: np.ndarray, x: np.ndarray) -> Grads:
    """pow_backward: zeros for exponent 0, else grad * (exponent * self.pow(exponent - 1))."""
    if exponent == 0:
        return (np.zeros(x.shape, g.dtype),)
    with np.errstate(all="ignore"):
        return (g * (x.dtype.type(exponent) * float_pow(x, exponent - 1)),)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64), y.astype(np.float64)).astype(x.dtype)


def pow_tensor(g: np.ndarray, a: np.ndarray, b: np.ndarray, result: np.ndarray | None) -> Grads:
    """pow_backward_self: where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1)));
    pow_backward_exponent: grad * where(self == 0 & exponent >= 0, 0, result * self.log())."""
    one = a.dtype.type(1)
    with np.errstate(all="ignore"):
        base = np.where(b == 0, _zero(g), g * (b * _pow(a, b - one)))
        if result is None:
            return base, None
        log = float_unary(np.log, a)
        exponent = g * np.where((a == 0) & (b >= 0), _zero(g), result * log)
    return base, exponent


def pow_base(base: float, g: np.ndarray, result: np.ndarray,
             exponent: np.ndarray | None = None) -> Grads:
    """number ** tensor: grad * (result * log(base)), the log in double; for base 0,
    0 where exponent >= 0."""
    with np.errstate(all="ignore"):
        log = result.dtype.type(np.log(np.float64(base)))
        out = result * log
        if exponent is not None:
            out = np.where(exponent >= 0, _zero(g), out)
        return (g * out,)


# ---- elementwise functions ----------------------------------------------------------------------


def exp(g: np.ndarray, result: np.ndarray) -> Grads:
    return (g * result,)


def expm1(g: np.ndarray, result: np.ndarray) -> Grads:
    return (g * (result + result.dtype.type(1)),)


def log(g: np.ndarray, x: np.ndarray) -> Grads:
    with np.errstate(all="ignore"):
        return (g / x,)


def log1p(g: np.ndarray, x: np.ndarray) -> Grads:
    with np.errstate(all="ignore"):
        return (g / (x + x.dtype.type(1)),)


def sqrt(g: np.ndarray, result: np.ndarray) -> Grads:
    with np.errstate(all="ignore"):
        return (g / (result.dtype.type(2) * result),)


def rsqrt(g: np.ndarray, result: np.ndarray) -> Grads:
    """-0.5 * grad * result.pow(3)."""
    with np.errstate(all="ignore"):
        return ((g.dtype.type(-0.5) * g) * (result * result * result),)


def reciprocal(g: np.ndarray, result: np.ndarray) -> Grads:
    """-grad * (result * result)."""
    with np.errstate(all="ignore"):
        return (np.negative(g) * (result * result),)


def sigmoid(g: np.ndarray, result: np.ndarray) -> Grads:
    """sigmoid_backward's CPU kernel: grad * (1 - y) * y."""
    with np.errstate(all="ignore"):
        return ((g * (result.dtype.type(1) - result)) * result,)


def tanh(g: np.ndarray, result: np.ndarray) -> Grads:
    """tanh_backward: grad * (1 - y * y)."""
    with np.errstate(all="ignore"):
        return (g * (result.dtype.type(1) - result * result),)


def relu(g: np.ndarray, result: np.ndarray) -> Grads:
    """threshold_backward(grad, result, 0): 0 where result <= 0 (NaN passes the gradient)."""
    return (np.where(result <= 0, _zero(g), g),)


def abs(g: np.ndarray, x: np.ndarray) -> Grads:
    """grad * self.sgn(): the sign is 0 at 0 and at NaN, as torch's sign kernel."""
    sign = (x > 0).astype(g.dtype) - (x < 0).astype(g.dtype)
    with np.errstate(all="ignore"):
        return (g * sign,)


def zero(g: np.ndarray) -> Grads:
    """floor, ceil, round, trunc, sign: zeros_like(grad)."""
    return (np.zeros_like(g),)


def logsigmoid(g: np.ndarray, x: np.ndarray, buffer: np.ndarray) -> Grads:
    """log_sigmoid_backward's CPU kernel, buffer = exp(-|x|):
    (max_deriv - sign * (buffer / (1 + buffer))) * grad, with (1, 1) for x < 0, else (0, -1)."""
    one = x.dtype.type(1)
    negative = x < 0
    max_deriv = np.where(negative, one, x.dtype.type(0))
    sign = np.where(negative, one, -one)
    with np.errstate(all="ignore"):
        return ((max_deriv - sign * (buffer / (one + buffer))) * g,)


def softplus(beta: float, threshold: float, g: np.ndarray, x: np.ndarray) -> Grads:
    """softplus_backward's CPU kernel: z = exp(x * beta); grad where x * beta > threshold,
    else grad * z / (z + 1)."""
    b, th = x.dtype.type(beta), x.dtype.type(threshold)
    with np.errstate(all="ignore"):
        xb = x * b
        z = float_unary(np.exp, xb)
        return (np.where(xb > th, g, (g * z) / (z + x.dtype.type(1))),)


def clamp(low: np.ndarray | None, high: np.ndarray | None, g: np.ndarray,
          x: np.ndarray) -> Grads:
    """clamp_backward: the gradient where min <= x <= max (at the bounds too), else 0."""
    keep = np.ones(x.shape, bool)
    if low is not None:
        keep &= x >= low
    if high is not None:
        keep &= x <= high
    return (np.where(keep, g, _zero(g)),)


def clamp_tensor(has_low: bool, has_high: bool, g: np.ndarray, x: np.ndarray,
                 low: np.ndarray | None, high: np.ndarray | None) -> Grads:
    """clamp(Tensor min, Tensor max): self as :func:`clamp`; clamp_backward_min_max for the
    bounds: min gets it where x < min (and min < max), max where x > max (or max < min)."""
    (own,) = clamp(low if has_low else None, high if has_high else None, g, x)
    zero = _zero(g)
    to_low = to_high = None
    if has_low and low is not None:
        pred = (x < low) & (low < high) if has_high and high is not None else x < low
        to_low = np.where(pred, g, zero)
    if has_high and high is not None:
        pred = (x > high) | (high < low) if has_low and low is not None else x > high
        to_high = np.where(pred, g, zero)
    return own, to_low, to_high


def maximum(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> Grads:
    """self: where(self == other, grad / 2, grad) zeroed where self < other; other: the same
    zeroed where self > other (a NaN on either side gives both the whole gradient)."""
    half = np.where(a == b, g / g.dtype.type(2), g)
    return np.where(a < b, _zero(g), half), np.where(a > b, _zero(g), half)


def minimum(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> Grads:
    half = np.where(a == b, g / g.dtype.type(2), g)
    return np.where(a > b, _zero(g), half), np.where(a < b, _zero(g), half)


def where(g: np.ndarray, condition: np.ndarray) -> Grads:
    """self: where(condition, grad, 0); other: where(condition, 0, grad)."""
    zero = _zero(g)
    return np.where(condition, g, zero), np.where(condition, zero, g)


# ---- reductions ---------------------------------------------------------------------------------


def sum(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool, g: np.ndarray) -> Grads:
    """sum_backward: the gradient expanded back over the summed dims."""
    return (np.broadcast_to(restore(g, dims, keepdim), shape),)


def mean(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool, count: int,
         g: np.ndarray) -> Grads:
    """mean_backward: sum_backward(grad) / n."""
    with np.errstate(all="ignore"):
        return (np.broadcast_to(restore(g, dims, keepdim) / g.dtype.type(count), shape),)


def _mean(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    count = int(np.prod([x.shape[d] for d in dims]))
    with np.errstate(all="ignore"):
        return np.asarray(float_sum(x, dims)).reshape(
            [1 if d in dims else n for d, n in enumerate(x.shape)]) / x.dtype.type(count)


def var(dims: tuple[int, ...], correction: float, keepdim: bool, g: np.ndarray,
        x: np.ndarray) -> Grads:
    """var_backward: (2 / (n - correction)) * grad * (self - self.mean(dim, keepdim=True)); the
    factor in double, infinite when n = correction."""
    count = int(np.prod([x.shape[d] for d in dims]))
    with np.errstate(all="ignore"):
        factor = x.dtype.type(np.float64(2.0) / np.float64(count - correction))
        return ((factor * restore(g, dims, keepdim)) * (x - _mean(x, dims)),)


def std(dims: tuple[int, ...], correction: float, keepdim: bool, g: np.ndarray, x: np.ndarray,
        result: np.ndarray) -> Grads:
    """std_backward: var_backward((grad / (result * 2)).masked_fill_(result == 0, 0))."""
    with np.errstate(all="ignore"):
        scaled = g / (result * result.dtype.type(2))
    scaled = np.where(result == 0, _zero(g), scaled)
    return var(dims, correction, keepdim, scaled, x)


def spread(g: np.ndarray, x: np.ndarray, result: np.ndarray) -> Grads:
    """evenly_distribute_backward (max() and min() over everything): the gradient shared evenly
    by the elements equal to the result (the NaNs, if the result is NaN)."""
    mask = np.isnan(x) if np.isnan(result).any() else x == result
    out = np.zeros(x.shape, g.dtype)
    with np.errstate(all="ignore"):
        out[mask] = g / g.dtype.type(np.count_nonzero(mask))
    return (out,)


def amax(dims: tuple[int, ...], keepdim: bool, g: np.ndarray, x: np.ndarray,
         result: np.ndarray) -> Grads:
    """amax/amin: scale_grad_by_count: (grad / count) * (result == self), count the ties."""
    mask = restore(result, dims, keepdim) == x
    count = np.sum(mask, axis=dims, keepdims=True)
    with np.errstate(all="ignore"):
        return ((restore(g, dims, keepdim) / count.astype(g.dtype)) * mask.astype(g.dtype),)


def select_values(axis: int, keepdim: bool, shape: tuple[int, ...], g: np.ndarray,
                  indices: np.ndarray) -> Grads:
    """value_selecting_reduction_backward (max/min along a dim, topk): the gradient to the
    index each value came from, zeros elsewhere."""
    out = np.zeros(shape, g.dtype)
    if not shape:
        return (g.reshape(()).copy(),)
    if not keepdim:
        g, indices = np.expand_dims(g, axis), np.expand_dims(indices, axis)
    np.put_along_axis(out, indices, g, axis)
    return (out,)


def logsumexp(dims: tuple[int, ...], keepdim: bool, g: np.ndarray, x: np.ndarray,
              result: np.ndarray) -> Grads:
    """grad * (self - result).exp(), the reduced dims put back."""
    with np.errstate(all="ignore"):
        shift = x - restore(result, dims, keepdim)
        return (restore(g, dims, keepdim) * float_unary(np.exp, shift),)


def softmax(axis: int, g: np.ndarray, y: np.ndarray) -> Grads:
    """_softmax_backward_data: y * (grad - Σ grad · y)."""
    if g.ndim == 0:  # a 0-d tensor is one element along dim 0
        return (softmax(0, g.reshape(1), y.reshape(1))[0].reshape(()),)
    with np.errstate(all="ignore"):
        total = np.asarray(float_sum(g * y, (axis,)))
        return (y * (g - np.expand_dims(total, axis)),)


def log_softmax(axis: int, g: np.ndarray, y: np.ndarray) -> Grads:
    """_log_softmax_backward_data: grad - exp(y) * Σ grad."""
    if g.ndim == 0:
        return (log_softmax(0, g.reshape(1), y.reshape(1))[0].reshape(()),)
    with np.errstate(all="ignore"):
        total = np.expand_dims(np.asarray(float_sum(g, (axis,))), axis)
        return (g - float_unary(np.exp, y) * total,)


def cumsum(axis: int, g: np.ndarray) -> Grads:
    """cumsum_backward: the cumulative sum from the end (accumulated in double, as the forward
    kernel)."""
    if g.size <= 1 or g.shape[axis] == 1:
        return (g,)
    flipped = np.flip(g, axis)
    acc = np.float64 if g.dtype.kind == "f" else g.dtype
    return (np.flip(np.cumsum(flipped, axis=axis, dtype=acc).astype(g.dtype), axis),)


def quantile(shape: tuple[int, ...], g: np.ndarray, *, below: np.ndarray, above: np.ndarray,
             weight: np.ndarray) -> Grads:
    """quantile's composite (sort, gather, lerp): grad * (1 - w) to the value below the rank,
    grad * w to the one above; ``below``/``above`` are flat positions in the input."""
    out = np.zeros(int(np.prod(shape)), g.dtype)
    g = g.reshape(weight.shape)  # keepdim's ones dropped
    with np.errstate(all="ignore"):
        np.add.at(out, below.reshape(-1), (g * (weight.dtype.type(1) - weight)).reshape(-1))
        np.add.at(out, above.reshape(-1), (g * weight).reshape(-1))
    return (out.reshape(shape),)


# ---- indexing and shapes ------------------------------------------------------------------------


def as_strided(shape: tuple[int, ...], positions: np.ndarray, g: np.ndarray) -> Grads:
    """A view read back from its base after an in-place write (AsStridedBackward0): the
    gradient added into zeros of the base's shape at the view's ``positions``."""
    out = np.zeros(int(np.prod(shape)), g.dtype)
    np.add.at(out, positions.reshape(-1), np.broadcast_to(g, positions.shape).reshape(-1))
    return (out.reshape(shape),)


def gather(axis: int, shape: tuple[int, ...], g: np.ndarray, index: np.ndarray) -> Grads:
    """zeros(self.sizes()).scatter_add_(dim, index, grad)."""
    out = np.zeros(shape, g.dtype)
    where = list(np.indices(index.shape, sparse=True))
    where[axis] = index
    np.add.at(out, tuple(where), g)
    return (out,)


def index(shape: tuple[int, ...], key: Any, advanced: bool, g: np.ndarray) -> Grads:
    """Basic indexing: the gradient written back into zeros; advanced (IndexBackward0):
    zeros.index_put_(indices, grad, accumulate=True), repeated indices summed."""
    out = np.zeros(shape, g.dtype)
    if advanced:
        np.add.at(out, key, g)
    else:
        out[key] = g
    return (out,)


def index_put(positions: np.ndarray, g: np.ndarray) -> Grads:
    """x[key] = value (CopySlices, IndexPutBackward0): self gets the gradient with the written
    places zeroed, value the gradient of those places (each place, repeats included)."""
    flat = np.array(g, copy=True).reshape(-1)
    picked = flat[positions]
    flat[positions.reshape(-1)] = 0
    return flat.reshape(g.shape), picked


def masked_fill(has_value: bool, g: np.ndarray, mask: np.ndarray) -> Grads:
    """self: grad.masked_fill(mask, 0); a 0-d tensor value: grad.masked_select(mask).sum()."""
    own = np.where(mask, _zero(g), g)
    if not has_value:
        return (own,)
    picked = g[np.broadcast_to(mask, g.shape)]
    return own, np.asarray(float_sum(picked, (0,)))


def copy(g: np.ndarray) -> Grads:
    """copy_ (CopyBackwards): self is overwritten (zeros), src gets the gradient."""
    return np.zeros_like(g), g


def fill(g: np.ndarray) -> Grads:
    """fill_ with a 0-d tensor: zeros for self, the sum of the gradient for the value."""
    return np.zeros_like(g), np.asarray(float_sum(g, tuple(range(g.ndim))))


def cast(g: np.ndarray) -> Grads:
    """to/float/double (ToCopyBackward0): the gradient, cast back by the engine."""
    return (g,)


def reshape(shape: tuple[int, ...], g: np.ndarray) -> Grads:
    return (g.reshape(shape),)


def squeeze_to(shape: tuple[int, ...], g: np.ndarray) -> Grads:
    return (g.reshape(shape),)


def unsqueeze(axis: int, g: np.ndarray) -> Grads:
    return (np.squeeze(g, axis),)


def transpose(a: int, b: int, g: np.ndarray) -> Grads:
    return (np.swapaxes(g, a, b),)


def permute(axes: tuple[int, ...], g: np.ndarray) -> Grads:
    return (np.transpose(g, np.argsort(axes)),)


def flip(axes: tuple[int, ...], g: np.ndarray) -> Grads:
    return (np.flip(g, axes) if axes else g,)


def repeat(shape: tuple[int, ...], reps: tuple[int, ...], g: np.ndarray) -> Grads:
    """The sum of the gradient over the tiles."""
    lead = len(reps) - len(shape)
    full = (1,) * lead + tuple(shape)
    split = [n for r, s in zip(reps, full, strict=True) for n in (r, s)]
    axes = tuple(range(0, 2 * len(reps), 2))
    out = float_sum(g.reshape(split), axes) if g.dtype.kind == "f" else np.sum(g.reshape(split),
                                                                               axis=axes)
    return (np.asarray(out).reshape(shape),)


def cat(axis: int, sizes: tuple[int | None, ...], shapes: tuple[tuple[int, ...], ...],
        g: np.ndarray) -> Grads:
    """cat_tensors_backward: each input its slice (an empty 1-D input, skipped by cat: zeros)."""
    out, start = [], 0
    for size, shape in zip(sizes, shapes, strict=True):
        if size is None:
            out.append(np.zeros(shape, g.dtype))
            continue
        region = [slice(None)] * g.ndim
        region[axis] = slice(start, start + size)
        out.append(g[tuple(region)])
        start += size
    return tuple(out)


def stack(axis: int, count: int, g: np.ndarray) -> Grads:
    return tuple(np.take(g, i, axis=axis) for i in range(count))


def not_implemented(name: str, g: np.ndarray, *saved: Any) -> Grads:
    """An operation torch has no derivative for (floor_divide): its backward raises."""
    raise RuntimeError(f"derivative for aten::{name} is not implemented")
