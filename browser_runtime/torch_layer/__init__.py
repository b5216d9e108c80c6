"""The ``torch`` namespace of the browser's torch layer: a small torch-compatible API on NumPy.

Pyodide has no PyTorch, so the site registers this package as ``torch`` (see
``browser_runtime.install_torch``) and the lessons' PyTorch code runs unchanged. It offers
what the lessons use, and what learners commonly write instead, with torch's CPU semantics:
dtypes and promotion, errors, printing, and torch's generator behind ``manual_seed`` +
``randn``/``rand``; values exact or within a stated bound on every CPU (``kernels``). Anything
else raises ``Unsupported`` (a NotImplementedError) naming what was asked for.
"""

from __future__ import annotations

import math as _math
from typing import Any as _Any

from . import nn, random
from .dtypes import bool_ as bool
from .dtypes import dtype, finfo, float32, float64, int32, int64, result_type
from .errors import Unsupported, unsupported
from .functions import (
    abs,
    all,
    allclose,
    any,
    arange,
    argmax,
    argmin,
    as_tensor,
    cat,
    clamp,
    clip,
    concat,
    concatenate,
    cumsum,
    empty,
    empty_like,
    equal,
    exp,
    expm1,
    flatten,
    flip,
    from_numpy,
    full,
    full_like,
    gather,
    get_default_dtype,
    inference_mode,
    initial_seed,
    is_floating_point,
    is_tensor,
    isclose,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    manual_seed,
    masked_fill,
    max,
    maximum,
    mean,
    min,
    minimum,
    neg,
    no_grad,
    nonzero,
    numel,
    ones,
    ones_like,
    pow,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    relu,
    reshape,
    seed,
    sigmoid,
    softmax,
    sqrt,
    square,
    squeeze,
    stack,
    std,
    sum,
    tanh,
    tensor,
    unsqueeze,
    var,
    where,
    zeros,
    zeros_like,
)
from .printing import get_printoptions, set_printoptions
from .random import Generator, default_generator
from .tensor import Size, Tensor, device

float = float32
double = float64
long = int64
int = int32
inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e
__version__ = "2.13.0+rl_ops_numpy"  # the torch release whose CPU behaviour the layer mirrors

__all__ = [
    "Generator",
    "Size",
    "Tensor",
    "Unsupported",
    "abs",
    "all",
    "allclose",
    "any",
    "arange",
    "argmax",
    "argmin",
    "as_tensor",
    "bool",
    "cat",
    "clamp",
    "clip",
    "concat",
    "concatenate",
    "cumsum",
    "default_generator",
    "device",
    "double",
    "dtype",
    "e",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "expm1",
    "finfo",
    "flatten",
    "flip",
    "float",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "gather",
    "get_default_dtype",
    "get_printoptions",
    "inf",
    "inference_mode",
    "initial_seed",
    "int",
    "int32",
    "int64",
    "is_floating_point",
    "is_tensor",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "log",
    "log1p",
    "log_softmax",
    "logical_and",
    "logical_not",
    "logical_or",
    "long",
    "manual_seed",
    "masked_fill",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "nan",
    "neg",
    "nn",
    "no_grad",
    "nonzero",
    "numel",
    "ones",
    "ones_like",
    "pi",
    "pow",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "random",
    "relu",
    "reshape",
    "result_type",
    "seed",
    "set_printoptions",
    "sigmoid",
    "softmax",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "sum",
    "tanh",
    "tensor",
    "unsqueeze",
    "var",
    "where",
    "zeros",
    "zeros_like",
]


def __getattr__(name: str) -> _Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    raise unsupported(f"torch.{name}", __all__)

