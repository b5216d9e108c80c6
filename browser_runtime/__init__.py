"""What the browser (Pyodide) build needs: ``install_torch()`` registers the NumPy-backed torch
layer (``browser_runtime.torch_layer``) as ``torch``, so the lessons' code runs unchanged."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import ModuleType

__all__ = ["install_torch", "torch_layer_installed", "uninstall_torch"]

_NAMES = ("torch", "torch.autograd", "torch.nn", "torch.nn.functional")
_saved: list[dict[str, ModuleType | None]] = []


def install_torch() -> ModuleType:
    """Make ``import torch`` / ``import torch.nn.functional as F`` load the layer.

    Whatever was registered under those names before is kept for ``uninstall_torch()``.
    """
    from . import torch_layer
    from .torch_layer import autograd, nn
    from .torch_layer.nn import functional

    _saved.append({name: sys.modules.get(name) for name in _NAMES})
    sys.modules.update({"torch": torch_layer, "torch.autograd": autograd, "torch.nn": nn,
                        "torch.nn.functional": functional})
    return torch_layer


def uninstall_torch() -> None:
    """Undo the last ``install_torch()``: restore (or remove) the modules it replaced."""
    if not _saved:
        return
    for name, module in _saved.pop().items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


@contextlib.contextmanager
def torch_layer_installed() -> Iterator[ModuleType]:
    """``with torch_layer_installed() as torch: ...`` — the layer as ``torch`` inside the block."""
    layer = install_torch()
    try:
        yield layer
    finally:
        uninstall_torch()
