"""The error raised for any torch feature the browser's torch layer does not offer."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CPU_ONLY", "Unsupported", "unsupported"]

LAYER = "the browser's torch layer (rl_ops_numpy)"

CPU_ONLY = "the browser has only the CPU"

# Extra words for features people reach for most often.
_HINTS = {
    "cuda": CPU_ONLY,
}


class Unsupported(AttributeError, NotImplementedError):
    """A torch feature the layer does not provide.

    It is both a NotImplementedError (what the layer means) and an AttributeError (so ``hasattr``
    and ``getattr(obj, name, default)`` keep working on the layer's objects).
    """


def unsupported(
    qualname: str, supported: Iterable[str] = (), hint: str | None = None
) -> Unsupported:
    """Build the error for ``qualname`` (e.g. ``torch.layer_norm``), listing what is supported."""
    short = qualname.rsplit(".", 1)[-1]
    hint = hint or _HINTS.get(short)
    msg = f"{qualname} is not available in {LAYER}"
    if hint:
        msg += f": {hint}"
    names = sorted(supported)
    if names:
        msg += "; supported: " + ", ".join(names)
    return Unsupported(msg)
