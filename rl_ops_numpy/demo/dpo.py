r"""Phase 3, **DPO**, again from the SFT model: sample ``dpo_samples`` words per prompt from it,
keep the best as $y_w$ and the worst as $y_l$ by RM score (:func:`~.data.preference_pairs`),
and minimise ``dpo_loss`` on those pairs. **SimPO** beside it: the same pairs and steps from the SFT
model, minimising ``simpo_loss`` on the words' mean token log-probs, with no reference model."""

from __future__ import annotations

import numpy as np

from .. import dpo_loss, simpo_loss
from .common import _Logger
from .config import DemoConfig
from .data import _random_prompts, preference_pairs
from .model import Adam, Batch, TinyLM
from .reward import score_batch

__all__ = ["dpo_loss_and_grads", "simpo_loss_and_grads", "train_dpo"]


def dpo_loss_and_grads(
    model: TinyLM,
    chosen: Batch,
    rejected: Batch,
    ref_chosen: np.ndarray,
    ref_rejected: np.ndarray,
    beta: float = 0.1,
    temperature: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    r"""Pair-mean :func:`dpo_loss`, its parameter gradients, and each pair's margin.

    With $z = \beta[(\log\pi(y_w) - \log\pi_{\text{ref}}(y_w)) - (\log\pi(y_l) -
    \log\pi_{\text{ref}}(y_l))]$, each pair's loss is $\ell = -\log\sigma(z)$, so
    $\sigma(z) = e^{-\ell}$ and the gradient follows from the operator's output alone:

    $$\frac{\partial\ell}{\partial\log\pi(y_w)} = -\beta\,\sigma(-z) = \beta\,(e^{-\ell} - 1)
      = -\frac{\partial\ell}{\partial\log\pi(y_l)}$$

    The loss is the mean over the $P$ pairs. Sequence log-probs are sums over tokens, so each
    token's log-prob receives its sequence's gradient. The margin is $z$, the implicit reward
    gap (TRL's ``rewards/margins``).
    """
    lp_w, logp_w = model.token_logprobs(chosen, temperature)  # [P, T], [P, T, V]
    lp_l, logp_l = model.token_logprobs(rejected, temperature)
    # log π(y) = Σ_t log π(a_t)
    seq_w, seq_l = lp_w.sum(axis=1), lp_l.sum(axis=1)  # [P]
    per_pair = dpo_loss(seq_w, seq_l, ref_chosen, ref_rejected, beta)  # [P] ℓ = −log σ(z)
    # ∂(mean ℓ)/∂log π(y_w) = β(e^{−ℓ} − 1)/P, the opposite for y_l
    g = beta * np.expm1(-per_pair) / len(per_pair)  # [P]
    grads_w = model.backward(chosen, logp_w, np.broadcast_to(g[:, None], lp_w.shape), temperature)
    grads_l = model.backward(
        rejected, logp_l, np.broadcast_to(-g[:, None], lp_l.shape), temperature
    )
    grads = {k: grads_w[k] + grads_l[k] for k in grads_w}
    margin = beta * ((seq_w - ref_chosen) - (seq_l - ref_rejected))
    return float(per_pair.mean()), grads, margin


def simpo_loss_and_grads(
    model: TinyLM,
    chosen: Batch,
    rejected: Batch,
    beta: float = 2.0,
    gamma: float = 1.0,
    temperature: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    r"""Pair-mean :func:`simpo_loss`, its parameter gradients, and each pair's reward margin.

    With $\bar\ell(y) = \frac{1}{|y|}\sum_t\log\pi(a_t)$ and
    $z = \beta(\bar\ell(y_w) - \bar\ell(y_l)) - \gamma$, each pair's loss is
    $\ell = -\log\sigma(z)$, so

    $$\frac{\partial\ell}{\partial\log\pi(a_t)} = \frac{\beta\,(e^{-\ell} - 1)}{|y_w|}
      \ (a_t \in y_w),\qquad -\frac{\beta\,(e^{-\ell} - 1)}{|y_l|}\ (a_t \in y_l)$$

    a token's share of its word's gradient is one over the word's length (DPO gives every token
    the whole of it). The margin is $\beta(\bar\ell(y_w) - \bar\ell(y_l))$, the reward gap
    that the loss compares with γ.
    """
    lp_w, logp_w = model.token_logprobs(chosen, temperature)  # [P, T], [P, T, V]
    lp_l, logp_l = model.token_logprobs(rejected, temperature)
    n_w, n_l = chosen.mask.sum(axis=1), rejected.mask.sum(axis=1)  # [P] tokens per word
    # mean_t log π(a_t)
    avg_w, avg_l = lp_w.sum(axis=1) / n_w, lp_l.sum(axis=1) / n_l  # [P]
    per_pair = simpo_loss(avg_w, avg_l, beta, gamma)  # [P] ℓ = −log σ(z)
    # ∂(mean ℓ)/∂mean log π(y_w) = β(e^{−ℓ} − 1)/P, the opposite for y_l
    g = beta * np.expm1(-per_pair) / len(per_pair)  # [P]
    grads_w = model.backward(chosen, logp_w, np.broadcast_to((g / n_w)[:, None], lp_w.shape),
                             temperature)
    grads_l = model.backward(rejected, logp_l, np.broadcast_to((-g / n_l)[:, None], lp_l.shape),
                             temperature)
    grads = {k: grads_w[k] + grads_l[k] for k in grads_w}
    return float(per_pair.mean()), grads, beta * (avg_w - avg_l)


def train_dpo(
    cfg: DemoConfig,
    sft: TinyLM,
    rng: np.random.Generator,
    log: _Logger,
    eval_rng: np.random.Generator,
    loss: str = "dpo",
) -> TinyLM:
    """DPO (or, ``loss="simpo"``, SimPO) from the SFT model, also DPO's reference, on
    best/worst-of-``dpo_samples`` pairs."""
    tau = cfg.temperature
    chosen, rejected = preference_pairs(sft, rng, cfg.dpo_prompts, cfg.dpo_samples, tau)
    ref_w = sft.token_logprobs(chosen, tau)[0].sum(axis=1)  # [P] log π_ref(y_w), fixed
    ref_l = sft.token_logprobs(rejected, tau)[0].sum(axis=1)  # [P] log π_ref(y_l), fixed
    P = len(ref_w)  # pairs
    policy = sft.copy()
    opt = Adam(policy.params, cfg.dpo_lr)
    for step in range(1, cfg.dpo_steps + 1):
        idx = rng.choice(P, size=min(cfg.dpo_batch, P), replace=False)
        if loss == "simpo":  # no reference model
            value, grads, margin = simpo_loss_and_grads(
                policy, chosen.take(idx), rejected.take(idx), cfg.simpo_beta, cfg.simpo_gamma,
                tau,
            )
        else:
            value, grads, margin = dpo_loss_and_grads(
                policy,
                chosen.take(idx),
                rejected.take(idx),
                ref_w[idx],
                ref_l[idx],
                cfg.dpo_beta,
                tau,
            )
        opt.step(grads)
        metrics = {
            "loss": value,
            "margin": float(margin.mean()),
            "accuracy": float(np.mean(margin > 0)),
        }
        if step % cfg.log_every == 0 or step == cfg.dpo_steps:
            # how the reward model likes what the DPO policy writes now (not a training signal)
            words = policy.sample(_random_prompts(eval_rng, cfg.ppo_batch), eval_rng, tau).words()
            metrics["rm_score"] = float(score_batch(words).mean())
        log.add(step, metrics)
    return policy
