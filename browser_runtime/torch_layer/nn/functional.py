"""``torch.nn.functional``: the activations and losses the lessons (and their variants) use.

Each function follows the formula of torch's CPU kernel, step by step in the tensor's precision:

* ``logsigmoid(x) = min(x, 0) - log1p(exp(-|x|))`` (Activation.cpp), stable for large |x|;
* ``softplus(x) = log1p(exp(βx)) / β``, or ``x`` where ``βx > threshold``;
* ``softmax = exp(x - max) * (1 / Σ exp(x - max))`` and
  ``log_softmax = (x - max) - log Σ exp(x - max)`` (SoftMaxKernel.cpp, last-dim kernels).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import unsupported
from ..kernels import float_unary
from ..tensor import Tensor, normalize_dim

__all__ = [
    "log_softmax",
    "logsigmoid",
    "mse_loss",
    "relu",
    "sigmoid",
    "softmax",
    "softplus",
    "tanh",
]


def _float_data(x: Tensor, name: str) -> np.ndarray:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{x.dtype.name}\'')
    return x._data


def logsigmoid(input: Tensor) -> Tensor:
    x = _float_data(input, "log_sigmoid")
    with np.errstate(all="ignore"):
        buffer = float_unary(np.exp, -np.abs(x))
        return Tensor._make(np.minimum(x, x.dtype.type(0)) - float_unary(np.log1p, buffer))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    x = _float_data(input, "softplus")
    b, th = x.dtype.type(beta), x.dtype.type(threshold)
    with np.errstate(all="ignore"):
        xb = x * b
        soft = float_unary(np.log1p, float_unary(np.exp, xb)) / b
        return Tensor._make(np.where(xb > th, x, soft))


def _softmax_dim(ndim: int, dim: int | None, name: str) -> int:
    if dim is None:  # torch's legacy implicit choice, with its warning
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=3,
        )
        dim = 0 if ndim in (0, 1, 3) else 1
    return normalize_dim(dim, ndim)


def _shifted(input: Tensor, dim: int | None, dtype: Any, name: str) -> tuple[np.ndarray, int]:
    x = input if dtype is None else input.to(dtype)
    data = _float_data(x, name)
    axis = _softmax_dim(data.ndim, dim, name)
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


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    shifted, axis = _shifted(input, dim, dtype, "softmax")
    e, total = _sum_exp(shifted, axis)
    with np.errstate(all="ignore"):
        out = e * (e.dtype.type(1) / total)
    return Tensor._make(out.reshape(input.shape))


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    shifted, axis = _shifted(input, dim, dtype, "log_softmax")
    _, total = _sum_exp(shifted, axis)
    with np.errstate(all="ignore"):
        out = shifted - float_unary(np.log, total)
    return Tensor._make(out.reshape(input.shape))


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    out = input.relu()
    return input.copy_(out) if inplace else out


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None,
             reduce: Any = None, reduction: str = "mean", weight: Any = None) -> Tensor:
    if size_average is not None or reduce is not None or weight is not None:
        raise unsupported("torch.nn.functional.mse_loss(size_average=, reduce=, weight=)",
                          __all__)
    diff = input - target
    loss = diff * diff
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"torch.nn.functional.{name}", __all__)

