"""Operators: the NumPy reference against the PyTorch lesson code on the same float32 inputs,
and GAE against a copy of the same bytes (the physical floor, measured by bench/floor.py).

Targets (issue 2), at B=64, T=1024, float32: GAE at least 20× faster than the lesson's loop, and
within 10× of the copy baseline.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

import numpy as np
import torch

import rl_ops_numpy as ops
from site_build.lessons import find_lessons

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SIZES = [(64, 1024), (256, 2048)]


def best(fn, min_time: float = 0.2, repeat: int = 5) -> float:
    """Best time of one call, in seconds (timeit's approach: best of `repeat` batches)."""
    timer = timeit.Timer(fn)
    n, t = timer.autorange()
    n = max(1, int(n * min_time / max(t, 1e-9)))
    return min(timer.repeat(repeat=repeat, number=n)) / n


def inputs(B: int, T: int):
    rng = np.random.default_rng(0)
    f = lambda *s: rng.normal(0, 0.5, s).astype(np.float32)  # noqa: E731
    mask = np.zeros((B, T), np.float32)
    lengths = rng.integers(T // 2, T + 1, B)
    mask[np.arange(T) < lengths[:, None]] = 1  # right padding
    return f, mask


def cases(B: int, T: int):
    """(name, numpy call, torch lesson call) on the same data."""
    f, m = inputs(B, T)
    a, b, c = f(B, T), f(B, T), f(B, T)
    rm = f(B)
    t = torch.from_numpy
    lessons = find_lessons(DOCS)
    lesson = {x.path.stem: x.load_function() for x in lessons if x.id.startswith("ppo/")}
    s21 = {x.path.stem: x.load_function() for x in lessons if x.id.startswith("s21/")}
    ta, tb, tc, tm, trm = t(a), t(b), t(c), t(m), t(rm)
    ratio = np.exp(a)
    return [
        (
            "importance_ratio",
            lambda: ops.importance_ratio(a, b, m),
            lambda: lesson["importance_ratio"](ta, tb, tm),
        ),
        (
            "compute_gae",
            lambda: ops.compute_gae(a, b, m),
            lambda: lesson["compute_gae"](ta, tb, tm),
        ),
        (
            "policy_surrogate_loss",
            lambda: ops.policy_surrogate_loss(a, b, c, m),
            lambda: lesson["policy_surrogate_loss"](ta, tb, tc, tm),
        ),
        (
            "value_clipped_loss",
            lambda: ops.value_clipped_loss(a, b, c, m),
            lambda: lesson["value_clipped_loss"](ta, tb, tc, tm),
        ),
        ("kl_estimators", lambda: ops.kl_estimators(a, b), lambda: lesson["kl_estimators"](ta, tb)),
        (
            "shape_token_rewards",
            lambda: ops.shape_token_rewards(rm, a, b, m),
            lambda: lesson["shape_token_rewards"](trm, ta, tb, tm),
        ),
        (
            "ppo_clipped_objective",
            lambda: ops.ppo_clipped_objective(ratio, c),
            lambda: s21["ppo_clipped_objective"](t(ratio), tc),
        ),
        ("dpo_loss", lambda: ops.dpo_loss(a, b, c, a), lambda: s21["dpo_loss"](ta, tb, tc, ta)),
        (
            "compute_gae_episode",
            lambda: ops.compute_gae_episode(a[0], b[0], 0.0),
            lambda: s21["compute_gae"](ta[0], tb[0], 0.0),
        ),
    ]


def main() -> bool:
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), numpy {np.__version__}")
    # A process keeps its own pace here for its whole life (even a pure-Python loop runs up to a
    # third slower in one process than in the next), and the pace moves GAE more than a copy. So
    # the floor is measured in five fresh processes, and the target is judged on their median.
    print("\nGAE against a copy of the same bytes, float32 (bench/floor.py: 5 processes without "
          "torch, median)")
    runs = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-m", "bench.floor"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip().split("\n")
        print("\n".join(out[:-1]))
        runs.append(json.loads(out[-1]))
    floors = {
        tuple(int(n) for n in key.split("x")): statistics.median(run[key] for run in runs)
        for key in runs[0]
    }
    for key in runs[0]:
        ratios = sorted(run[key] for run in runs)
        print(f"  {key}: {', '.join(f'{x:.1f}×' for x in ratios)} -> median "
              f"{statistics.median(ratios):.1f}×")
    speed = 0.0
    for B, T in SIZES:
        print(f"\nB={B}, T={T}, float32       numpy       torch lesson   torch/numpy")
        for name, ours, theirs in cases(B, T):
            t_np, t_torch = best(ours), best(theirs, min_time=0.1, repeat=3)
            ratio = t_torch / t_np
            print(f"  {name:24s} {t_np * 1e6:9.1f} µs {t_torch * 1e6:11.1f} µs {ratio:9.1f}×")
            if name == "compute_gae" and (B, T) == (64, 1024):
                speed = ratio
    ok_speed, ok_floor = speed >= 20, floors[(64, 1024)] <= 10
    print(f"\ntarget: GAE ≥ 20× faster than the lesson loop at 64×1024: {speed:.0f}× "
          f"{'PASS' if ok_speed else 'FAIL'}")
    print(f"target: GAE within 10× of the copy baseline at 64×1024: {floors[(64, 1024)]:.1f}× "
          f"{'PASS' if ok_floor else 'FAIL'}")
    return ok_speed and ok_floor
