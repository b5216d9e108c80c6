"""``torch.nn``: only its ``functional`` module is available in the browser (no layers)."""

from __future__ import annotations

from typing import Any

from ..errors import unsupported
from . import functional

__all__ = ["functional"]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"torch.nn.{name}", ["functional"])
