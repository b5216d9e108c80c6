"""Seeded inputs for the parity vectors, exactly representable on every CPU.

Every number is a NumPy ``default_rng(seed)`` draw rounded to a multiple of 2⁻¹⁰ and smaller than
2¹³ in magnitude, so it is exact in float32 and float64 and the same on every machine; the
libraries' outputs then differ between CPUs only by their own rounding (exp, log, sums).
"""

from __future__ import annotations

import numpy as np

STEP = 2.0**-10  # the grid every input lies on
DTYPES = {"float32": np.float32, "float64": np.float64}

# one row per mask layout: B = 6 rows, T = 8 tokens
LAYOUT_ROWS = {
    "full": [1, 1, 1, 1, 1, 1, 1, 1],
    "right": [1, 1, 1, 1, 1, 0, 0, 0],
    "left": [0, 0, 0, 1, 1, 1, 1, 1],
    "holes": [1, 1, 0, 1, 0, 0, 1, 1],
    "one token": [0, 0, 1, 0, 0, 0, 0, 0],
    "empty": [0, 0, 0, 0, 0, 0, 0, 0],
}


def grid(rng: np.random.Generator, shape, scale: float, dtype=np.float64) -> np.ndarray:
    """Normal draws of std ``scale``, rounded to multiples of 2⁻¹⁰."""
    return (np.round(rng.normal(0.0, scale, shape) / STEP) * STEP).astype(dtype)


def logits_inputs(seed: int, shape: tuple[int, int, int], scale: float, ids: str | None = None,
                  peak: tuple[int, int] = (0, 0), reach: float = 80.0
                  ) -> dict[str, dict[str, np.ndarray]]:
    """For each dtype, from ``default_rng(seed)``: ``[B, T, V]`` logits on the grid (std
    ``scale``) with a near one-hot row at ``peak`` (−``reach`` … ``reach``, evenly spaced: its
    last token all but certain), and, under the library's name ``ids``, ``[B, T]`` token ids."""
    out = {}
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(seed)
        z = grid(rng, shape, scale, dt)
        z[peak] = np.linspace(-reach, reach, shape[-1]).astype(dt)
        out[dtype] = {"logits": z}
        if ids is not None:
            out[dtype][ids] = rng.integers(0, shape[-1], shape[:2])
    return out


def mask(layouts: list[str], dtype=np.float64) -> np.ndarray:
    """``[len(layouts), 8]``: one row of each named layout."""
    return np.array([LAYOUT_ROWS[name] for name in layouts], dtype=dtype)


ALL_LAYOUTS = list(LAYOUT_ROWS)
NONEMPTY = [name for name in ALL_LAYOUTS if name != "empty"]


def log_ratio_extremes(rng: np.random.Generator, shape, dtype=np.float64) -> np.ndarray:
    """Log-ratios on the grid with ±5 and ±30 planted in the first row (ρ = e^±5, e^±30)."""
    d = grid(rng, shape, 0.3, dtype)
    flat = d.reshape(-1)
    flat[: 4] = np.array([5.0, -5.0, 30.0, -30.0], dtype)
    return d


def gspo_inputs(rng: np.random.Generator, m: np.ndarray, kind: str, per_token: bool,
                dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """``(log-ratios [B, T], advantages)`` for GSPO's one ratio per response, on the mask ``m``.

    Log-ratios: "near" puts each response's mean a few multiples of 2⁻¹⁰/|y| from 0 (inside and
    outside ±3e-4), "far" is :func:`log_ratio_extremes`, "twelve" is "near" with 12 on every
    token of the first row, whose advantage is then negative (where verl's cap at 10 acts).
    Advantages: the rows alternate in sign, + − + …; ``[B]``, one per response, or ``[B, T]``
    per token (the first token's carries the sign).
    """
    B, T = m.shape  # batch, response length
    if kind == "far":
        d = log_ratio_extremes(rng, (B, T), dtype)
    else:
        d = grid(rng, (B, T), 0.05, dtype).astype(np.float64)
        for b, target in enumerate([4, -4, 0, 1, -1, 0]):  # Σ_t m·d = target · 2⁻¹⁰
            cols = np.nonzero(m[b])[0]
            if cols.size:
                d[b, cols[-1]] += target * STEP - d[b, cols].sum()
        d = d.astype(dtype)
    sign = np.where(np.arange(B) % 2 == 0, 1.0, -1.0)
    if per_token:
        adv = grid(rng, (B, T), 1.0, dtype)
        adv[:, 0] = np.abs(adv[:, 0]) * sign
    else:
        adv = (np.abs(grid(rng, B, 1.0, dtype)) * sign).astype(dtype)
    if kind == "twelve":
        d[0], adv[0] = 12.0, -1.0
    return d, adv


def sequence_logps(rng: np.random.Generator, names: tuple[str, ...],
                   dtype=np.float64) -> dict[str, np.ndarray]:
    """DPO's inputs: 8 pairs' sequence log-probs around −20 under each of the library's
    ``names`` (the policy's chosen and rejected, the reference model's)."""
    return {k: (grid(rng, 8, 3.0, dtype) - 20.0).astype(dtype) for k in names}


def score_pairs(rng: np.random.Generator, chosen: str, rejected: str,
                dtype=np.float64) -> list[dict[str, np.ndarray]]:
    """The reward model's inputs: 8 pairs of scores under the library's names, without a margin,
    then with one (≥ 0); the two share their arrays."""
    pair = {chosen: grid(rng, 8, 2.0, dtype), rejected: grid(rng, 8, 2.0, dtype)}
    return [pair, {**pair, "margin": np.abs(grid(rng, 8, 1.0, dtype))}]


def scores(rng: np.random.Generator, n: int, dtype=np.float64) -> np.ndarray:
    """``[n]`` scores on a 1/8 grid in [−2, 2] (ties happen)."""
    return (rng.integers(-16, 17, n) / 8.0).astype(dtype)
