"""GAE against the physical floor: the time to copy the same bytes, float32.

Run on its own (``python -m bench.floor``), in a process that never imports torch: importing
torch starts its own OpenMP threads, which slow NumPy's matrix products in the same process by
about a fifth here, and users of ``rl_ops_numpy`` (the browser above all) have no torch.
Prints one JSON line: {"B×T": ratio, ...} after the human-readable lines.
"""

from __future__ import annotations

import json
import time

import numpy as np

import rl_ops_numpy as ops

SIZES = [(64, 1024), (256, 2048)]


def inputs(B: int, T: int):
    rng = np.random.default_rng(0)
    r, v = rng.normal(0, 0.5, (2, B, T)).astype(np.float32)
    mask = np.zeros((B, T), np.float32)
    mask[np.arange(T) < rng.integers(T // 2, T + 1, B)[:, None]] = 1  # right padding
    return r, v, mask


def interleaved(fns: dict, rounds: int = 400) -> dict:
    """Best time of one call of each function, over ``rounds`` rounds that call each in turn.

    Alternating call by call gives every function the same machine state (what the other left in
    the caches, the clock, the neighbours); the best of many calls filters out the interruptions.
    One call is long enough here (20 µs and up) for ``perf_counter``.
    """
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main() -> dict[str, float]:
    ratios = {}
    for B, T in SIZES:
        r, v, m = inputs(B, T)
        t = interleaved({
            "copy": lambda r=r, v=v, m=m: (r.copy(), v.copy(), m.copy()),  # read 3, write as much
            "gae": lambda r=r, v=v, m=m: ops.compute_gae(r, v, m),
        })
        ratios[f"{B}x{T}"] = t["gae"] / t["copy"]
        print(f"  B={B}, T={T}: GAE {t['gae'] * 1e6:.1f} µs, copy of its inputs "
              f"{t['copy'] * 1e6:.1f} µs -> {ratios[f'{B}x{T}']:.1f}×")
    return ratios


if __name__ == "__main__":
    print(json.dumps(main()))
