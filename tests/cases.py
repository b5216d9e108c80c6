"""Seeded random inputs for cross-checks: shapes from 1×1 up, and every mask layout."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from browser_runtime.exercises import LAYOUTS, mask

__all__ = ["LAYOUTS", "Case", "cases", "mask", "tolerance"]


@dataclass
class Case:
    seed: int
    B: int
    T: int
    layout: str
    dtype: type

    def __str__(self) -> str:
        return f"seed={self.seed} B={self.B} T={self.T} {self.layout} {np.dtype(self.dtype).name}"


def cases(n: int = 120) -> Iterator[Case]:
    """``n`` cases per dtype, starting with B = T = 1 and cycling through every layout."""
    for dtype in (np.float32, np.float64):
        for i in range(n):
            rng = np.random.default_rng(i)
            B, T = (
                (1, 1) if i < len(LAYOUTS) else (int(rng.integers(1, 7)), int(rng.integers(1, 13)))
            )
            yield Case(i, B, T, LAYOUTS[i % len(LAYOUTS)], dtype)


def tolerance(dtype: type) -> dict[str, float]:
    """float64: agreement to rounding; float32: a few ulps of values of order 1 to 10."""
    return {"rtol": 1e-12, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-6, "atol": 2e-6}
