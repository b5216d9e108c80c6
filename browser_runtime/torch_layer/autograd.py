"""``torch.autograd``: ``grad``, ``backward`` and the grad-mode switches.

The engine and where the graph lives are described in ``graph``; the formulas are in
``derivatives``. What differs from torch: no double backward (``create_graph=True`` raises
``Unsupported``), no hooks, no custom ``Function``, no anomaly detection, no forward mode.
"""

from __future__ import annotations

from typing import Any

from .errors import unsupported
from .graph import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .tensor import autograd_backward as backward
from .tensor import autograd_grad as grad

__all__ = [
    "backward",
    "enable_grad",
    "grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"torch.autograd.{name}", __all__)
