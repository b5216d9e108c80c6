"""``torch.nn.functional``: the activations and losses the lessons (and their variants) use.

Each function follows the formula of torch's CPU kernel, step by step in the tensor's precision:

* ``logsigmoid(x) = min(x, 0) - log1p(exp(-|x|))`` (Activation.cpp), stable for large |x|;
* ``softplus(x) = log1p(exp(βx)) / β``, or ``x`` where ``βx > threshold``;
* ``softmax = exp(x - max) * (1 / Σ exp(x - max))`` and
  ``log_softmax = (x - max) - log Σ exp(x - max)`` (SoftMaxKernel.cpp, last-dim kernels).

``softmax``, ``log_softmax``, ``sigmoid``, ``tanh`` and ``relu`` forward to the Tensor methods
(where the kernels above are written out), as torch's do. ``logsigmoid`` and ``softplus`` record
torch's nodes (``LogSigmoidBackward0`` saves the input and the buffer ``exp(-|x|)``);
``mse_loss`` is ``(x − y)²`` and a reduction, whose nodes give torch's gradient.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np

from .. import derivatives as rules
from ..errors import unsupported
from ..graph import MODE
from ..kernels import float_unary
from ..tensor import Tensor, keep, record, recording

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


def _tensor_arg(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _float_data(x: Tensor, name: str) -> np.ndarray:
    x = _tensor_arg(x, name)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{x.dtype.name}\'')
    return x._data


def logsigmoid(input: Tensor) -> Tensor:
    x = _float_data(input, "log_sigmoid")
    with np.errstate(all="ignore"):
        buffer = float_unary(np.exp, -np.abs(x))
        out = Tensor._make(np.minimum(x, x.dtype.type(0)) - float_unary(np.log1p, buffer))
    if MODE.leaves and recording(input):  # torch saves the input and the buffer exp(-|x|)
        record(out, "LogSigmoidBackward0", (input,), rules.logsigmoid,
               (keep(x, input, 0), keep(buffer)))
    return out


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    x = _float_data(input, "softplus")
    b, th = x.dtype.type(beta), x.dtype.type(threshold)
    with np.errstate(all="ignore"):
        xb = x * b
        soft = float_unary(np.log1p, float_unary(np.exp, xb)) / b
        out = Tensor._make(np.where(xb > th, x, soft))
    if MODE.leaves and recording(input):
        record(out, "SoftplusBackward0", (input,), partial(rules.softplus, beta, threshold),
               (keep(x, input, 0),))
    return out


def _softmax(name: str, input: Tensor, dim: int | None, stacklevel: int, dtype: Any) -> Tensor:
    """``input.<name>(dim, dtype)`` for F.softmax and F.log_softmax; without ``dim``, torch's
    legacy implicit choice, with its warning (``_get_softmax_dim``) ``stacklevel`` frames up."""
    x = _tensor_arg(input, name)
    if dim is None:
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=stacklevel,
        )
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return getattr(x, name)(dim, dtype)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    return _softmax("softmax", input, dim, _stacklevel, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    return _softmax("log_softmax", input, dim, _stacklevel, dtype)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    out = input.relu()
    return input._inplace(out) if inplace else out  # relu_: ReluBackward0, as torch


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

