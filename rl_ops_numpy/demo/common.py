r"""What several phases share: the masked mean, the backward of ``aggregate_loss``, the logger
that averages each phase's metrics, PPO's minibatch loop (which GRPO reuses) and what PPO and
GRPO log of a rollout."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import kl_estimators, token_entropy

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
        """Keep ``step``'s metrics; at a logging step (every ``every``-th, and the last), log
        the mean of each since the previous one."""
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


def _rollout_metrics(
    rm_score: np.ndarray, old_lp: np.ndarray, ref_lp: np.ndarray, logp: np.ndarray,
    mask: np.ndarray,
) -> dict[str, float]:
    r"""What PPO and GRPO both log of a rollout of ``B`` words: the mean RM score (``rm_score``
    ``[B]``), the KL per word (k1 and k3 of ``old_lp`` against ``ref_lp``, both ``[B, T]``, summed
    over the response, averaged over words), the entropy (of ``logp`` ``[B, T, V]``, the policy's
    own log-softmax, averaged over response tokens), the length in tokens.

    $$\text{kl} = \frac1B\sum_b\sum_t m_{bt}(\log\pi - \log\pi_{\text{ref}})_{bt},\qquad
      \text{entropy} = \operatorname{mean}_{m_{bt} \ne 0}
      \Big(-\sum_v\pi_{bt}(v)\log\pi_{bt}(v)\Big)$$
    """
    # KL(π ‖ π_ref) per token: tokens come from π, so p = π_ref, q = π; k1 = log π − log π_ref
    k1, _, k3 = kl_estimators(ref_lp, old_lp)
    # H(π_t) = −Σ_v π_t(v) log π_t(v), averaged over response tokens (log π: logits of π itself)
    entropy = float(token_entropy(logp[mask != 0]).mean())
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


def _minibatch_updates(
    cfg: DemoConfig,
    n: int,
    rng: np.random.Generator,
    update: Callable[[np.ndarray], dict[str, float]],
    names: Sequence[str],
) -> dict[str, float]:
    """PPO's learning loop, which GRPO reuses: ``update(idx)`` (its Adam steps on the rows
    ``idx``) for each of :func:`_minibatches`' ``ppo_epochs × ppo_minibatches`` slices of a
    rollout of ``n`` rows; the mean over the updates of each metric in ``names`` it returns."""
    logged = [update(idx) for idx in _minibatches(cfg, n, rng)]
    return {name: float(np.mean([u[name] for u in logged])) for name in names}
