"""The ``torch`` namespace of the browser's torch layer: a small torch-compatible API on NumPy.

Pyodide has no PyTorch, so the site registers this package as ``torch`` (see
``browser_runtime.install_torch``) and the lessons' PyTorch code runs unchanged. It offers
what the lessons use, and what learners commonly write instead, with torch's CPU semantics:
dtypes and promotion, errors, printing, and torch's generator behind ``manual_seed`` +
``randn``/``rand``; values exact or within a stated bound on every CPU (``kernels``); and
reverse-mode autograd with torch's backward formulas (``graph``, ``derivatives``,
``torch.autograd``). Anything else raises ``Unsupported`` (a NotImplementedError) naming what
was asked for.
"""

from __future__ import annotations

import math as _math
from typing import Any as _Any

from . import autograd, nn, random
from .dtypes import bool_ as bool
from .dtypes import dtype, finfo, float32, float64, int32, int64
from .errors import Unsupported, unsupported
from .functions import *  # noqa: F403 (torch's functions: functions.__all__)
from .functions import __all__ as _functions
from .printing import get_printoptions, set_printoptions
from .random import Generator, default_generator
from .tensor import Size, Tensor, device, result_type

float = float32
double = float64
long = int64
int = int32
inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e
__version__ = "2.13.0+rl_ops_numpy"  # the torch release whose CPU behaviour the layer mirrors

# what `torch.<name>` offers: the functions, and the names defined or imported here
__all__ = [
    "Generator", "Size", "Tensor", "Unsupported", "autograd", "bool", "default_generator",
    "device", "double",
    "dtype", "e", "finfo", "float", "float32", "float64", "get_printoptions", "inf", "int",
    "int32", "int64", "long", "nan", "nn", "pi", "random", "result_type", "set_printoptions",
]
__all__ += _functions


def __getattr__(name: str) -> _Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    raise unsupported(f"torch.{name}", __all__)

