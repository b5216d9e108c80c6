r"""What several phases share: the masked mean, the backward of ``aggregate_loss``, the logger
that averages each phase's metrics, PPO's minibatches (which GRPO reuses) and what PPO and GRPO
log of a rollout."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .config import DemoConfig

# on_log(phase, step, total, metrics), as run() calls it
OnLog = Callable[[str, int, int, dict[str, float]], Any]


def _masked_mean(x: np.ndarray, mask: np.ndarray) -> float:
    r"""$\sum m\,x / \max(1, \sum m)$ over ``x`` and ``mask`` of the same shape (``[B, T]``)."""
    return float((x * mask).sum() / max(1.0, float(mask.sum())))


def _aggregation_weights(mask: np.ndarray, mode: str) -> np.ndarray:
    r"""``[B, T]``: $w_{bt} = \partial\,\text{aggregate\_loss}(\ell, m, \text{mode}) /
    \partial \ell_{bt}$, the backward of :func:`aggregate_loss`.

    Every mode is linear in $\ell$: token-mean weighs each token $1/\sum m$, token-sum 1; the
    sequence means weigh row $b$'s tokens $1/(|\mathcal B|\,n_b)$, $1/|\mathcal B|$ or
    $1/(|\mathcal B|\,T)$, with $\mathcal B$ the rows that have a token.
    """
    tokens = mask.sum(axis=1, keepdims=True)  # [B, 1] n_b
    rows = max(1.0, float(np.count_nonzero(tokens)))  # |𝓑|
    if mode == "token-mean":
        return mask / max(1.0, float(mask.sum()))
    if mode == "token-sum":
        return mask.astype(np.float64)
    if mode == "seq-mean-token-mean":
        return mask / np.maximum(tokens, 1.0) / rows
    if mode == "seq-mean-token-sum":
        return mask / rows
    if mode == "seq-mean-token-sum-norm":
        return mask / (rows * mask.shape[1])
    raise ValueError(f"unknown loss_agg_mode {mode!r}")


class _Logger:
    """Averages each metric over ``every`` steps, appends the means to ``out``, calls ``on_log``."""

    def __init__(self, phase: str, total: int, every: int, out: dict, on_log: OnLog | None):
        self.phase, self.total, self.every, self.on_log = phase, total, max(1, every), on_log
        self.out = out
        self.out.setdefault("step", [])
        self.pending: dict[str, list[float]] = {}

    def add(self, step: int, metrics: dict[str, float]) -> None:
        for k, v in metrics.items():
            self.pending.setdefault(k, []).append(float(v))
        if step % self.every and step != self.total:
            return
        means = {k: float(np.mean(v)) for k, v in self.pending.items()}
        self.pending = {}
        self.out["step"].append(step)
        for k, v in means.items():
            self.out.setdefault(k, []).append(v)
        if self.on_log is not None:
            self.on_log(self.phase, step, self.total, means)


def _rollout_metrics(rm_score, k1, k3, mask, entropy: float) -> dict[str, float]:
    """What PPO and GRPO both log of a rollout: the mean RM score, the KL per word (k1 and k3
    summed over the response, averaged over words), the entropy, the length in tokens."""
    return {
        "rm_score": float(rm_score.mean()),
        "kl": float((k1 * mask).sum(axis=1).mean()),
        "kl_k3": float((k3 * mask).sum(axis=1).mean()),
        "entropy": entropy,
        "length": float(mask.sum(axis=1).mean()),
    }


def _minibatches(cfg: DemoConfig, n: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Row indices of each update on a rollout of ``n`` rows: ``ppo_epochs`` passes, each over
    a fresh permutation in ``ppo_minibatches`` slices."""
    size = -(-n // cfg.ppo_minibatches)  # rows per minibatch
    for _ in range(cfg.ppo_epochs):
        order = rng.permutation(n)
        for start in range(0, n, size):
            yield order[start : start + size]
