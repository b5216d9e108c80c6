r"""Phase 4, **GRPO**, again from the SFT model, with no critic: each step samples a group of
``grpo_group`` words for each of ``grpo_prompts`` prompts, scores them with the same reward model,
takes each word's advantage against its group (``group_advantages``) and runs the same epochs of
minibatch updates as PPO on ``grpo_policy_loss`` (clipped surrogate + β·k3 to the reference, in
the loss rather than the reward).

**Beside GRPO** (``grpo_variants``, :data:`~.config.GRPO_VARIANTS`), the same phase three more
times, each from the SFT model with GRPO's seed and one change: ``gspo``, GSPO's sequence-level
ratio (``gspo_loss``) in place of the per-token one; ``grpo_mismatch``, the words sampled by a
perturbed copy of the policy (``rollout_noise``, as a low-precision inference engine would) and
trained on as if the policy had written them; ``grpo_tis``, the same rollouts with each token's
loss weighted by the truncated importance weight (``rollout_is_weights``).
"""

from __future__ import annotations

import numpy as np

from .. import (
    aggregate_loss,
    group_advantages,
    grpo_policy_loss,
    gspo_loss,
    importance_ratio,
    kl_estimators,
    rollout_is_weights,
)
from ..policy_losses import GSPO_LOG_RATIO_CAP, _sequence_log_ratio
from .common import (
    _aggregation_weights,
    _Logger,
    _masked_mean,
    _minibatch_updates,
    _rollout_metrics,
)
from .config import DemoConfig, Variant
from .data import _random_prompts
from .model import Adam, Batch, TinyLM
from .ppo import _clipfrac, clipped_surrogate_grad
from .reward import score_batch

__all__ = ["PLAIN", "grpo_loss_and_grads", "grpo_step", "train_grpo"]

PLAIN = Variant()  # GRPO itself: the per-token ratio, the policy's own words, no TIS


def grpo_loss_and_grads(
    model: TinyLM,
    batch: Batch,
    old_lp: np.ndarray,
    adv: np.ndarray,
    ref_lp: np.ndarray,
    cfg: DemoConfig,
    loss: str = "grpo",
    weights: np.ndarray | None = None,
) -> tuple[float, dict[str, np.ndarray], float]:
    r"""GRPO's loss or GSPO's, each with $\beta k_3$ to the reference; its parameter gradients;
    the clip fraction.

    ``loss="grpo"``: :func:`grpo_policy_loss` (``cfg.clip_range`` on each token's $\rho_t$,
    aggregated per ``cfg.grpo_loss_agg_mode``). ``loss="gspo"``: :func:`gspo_loss`
    (``cfg.gspo_clip_low``, ``cfg.gspo_clip_high`` on each word's $s_b$) plus $\beta k_3$
    (:func:`kl_estimators`) aggregated as it is, ``seq-mean-token-mean``. ``adv`` is ``[B]``,
    β is ``cfg.grpo_beta``, and with $\omega$ the aggregation weights and $d = \log\pi_{\text{ref}}
    - \log\pi_\theta$ ($\partial k_3/\partial\log\pi_\theta = 1 - e^d$):

    $$\frac{\partial L}{\partial\log\pi_\theta(a_t)} = \omega_t\Big(
      \frac{\partial\ell_t}{\partial\log r_t} + \beta\,(1 - e^{d_t})\Big)$$

    with :func:`clipped_surrogate_grad` at $r_t = \rho_t$, or at $r_t = s_b$ (none where
    $\log s_b$ reaches GSPO's cap of 10, which passes no gradient).

    ``weights`` ``[B, T]``, TIS weights $w \ge 0$ (constants), multiply each token's clipped
    term, as verl 0.9.1 multiplies ``pg_losses`` by ``rollout_is_weights``; the $k_3$ term is
    not weighted. For $w \ge 0$, $w\max(-\hat A r, -\hat A\operatorname{clip}(r)) =
    \max(-w\hat A r, -w\hat A\operatorname{clip}(r))$: the weighted loss is the operator's with
    the per-token advantages $w_t\hat A$, and so is its gradient.
    """
    new_lp, logp = model.token_logprobs(batch, cfg.temperature)  # [B, T], [B, T, V]
    m = batch.mask
    # [B, T] each token's advantage, its word's Â, times its TIS weight (if any)
    a = adv[:, None] * (m if weights is None else weights)
    beta = cfg.grpo_beta
    if loss == "grpo":
        mode, low, high = cfg.grpo_loss_agg_mode, cfg.clip_range, cfg.clip_range
        value = grpo_policy_loss(
            new_lp, old_lp, a, m, ref_lp, clip_low=low, clip_high=high, beta=beta,
            loss_agg_mode=mode,
        )
        ratio = importance_ratio(new_lp, old_lp, m)  # [B, T] ρ
        g = clipped_surrogate_grad(ratio, a, low, high)
    elif loss == "gspo":
        mode, low, high = "seq-mean-token-mean", cfg.gspo_clip_low, cfg.gspo_clip_high
        _, _, k3 = kl_estimators(ref_lp, new_lp)  # [B, T]
        value = gspo_loss(new_lp, old_lp, a, m, clip_low=low, clip_high=high) + beta * (
            aggregate_loss(k3, m, mode)
        )
        real = m != 0
        # log s_b, the loss's: the mean of the word's log ρ, capped at 10
        log_s = _sequence_log_ratio(np.where(real, new_lp - old_lp, 0.0), real)  # [B, 1]
        ratio = np.exp(log_s) * m  # [B, T] s_b on each of its word's tokens
        g = np.where(log_s < GSPO_LOG_RATIO_CAP, clipped_surrogate_grad(ratio, a, low, high), 0.0)
    else:
        raise ValueError(f"unknown loss {loss!r}: 'grpo' or 'gspo'")
    # + β ∂k3/∂log π_θ = β(1 − e^d),  d = log π_ref − log π_θ
    g = (g - beta * np.expm1(ref_lp - new_lp)) * _aggregation_weights(m, mode)
    grads = model.backward(batch, logp, g, cfg.temperature)
    return value, grads, _clipfrac(ratio, m, low, high)


# --8<-- [start:grpo_step]
def grpo_step(
    cfg: DemoConfig,
    actor: TinyLM,
    ref: TinyLM,
    opt: Adam,
    rng: np.random.Generator,
    variant: Variant = PLAIN,
    noise_rng: np.random.Generator | None = None,
) -> dict[str, float]:
    """One GRPO iteration: sample a group per prompt, score, group advantages, then the same
    ``ppo_epochs × ppo_minibatches`` updates as PPO, with no critic; its metrics. ``variant``
    changes the loss (GSPO) or the sampler (a perturbed copy, ``noise_rng``) and the weights."""
    tau, G = cfg.temperature, cfg.grpo_group
    # --- sample: G words for each prompt, side by side (from a perturbed copy: a mismatch) ---
    prompts = np.repeat(_random_prompts(rng, cfg.grpo_prompts), G)  # [N], N = prompts × G
    noise = cfg.rollout_noise if variant.mismatch else 0.0
    batch = actor.sample(prompts, rng, tau, logit_noise=noise, noise_rng=noise_rng)
    m = batch.mask  # [N, T]
    # --- score: the same reward model as PPO, one number per word ---
    rm_score = score_batch(batch.words())  # [N]
    # --- advantages: each word against the other words of its group ---
    adv = group_advantages(rm_score, G)  # [N]
    # log π_old: the trainer's own log-probs of the words, not the sampler's (batch.logprobs)
    old_lp, logp = actor.token_logprobs(batch, tau)  # [N, T], [N, T, V]
    ref_lp, _ = ref.token_logprobs(batch, tau)  # [N, T]
    # what is logged of the rollout: RM score, KL to the reference (k1, k3), entropy, length
    rollout = _rollout_metrics(rm_score, old_lp, ref_lp, logp, m)
    # TIS: w = min(π_old / π_rollout, C) per token, a constant in the loss
    w = None
    if variant.tis:
        w = rollout_is_weights(old_lp, batch.logprobs, m, threshold=cfg.tis_threshold)

    # --- learning: the clipped surrogate with β·k3 in the loss, in PPO's minibatches ---
    def update(idx: np.ndarray) -> dict[str, float]:
        """One Adam step of the actor on the rows ``idx``; its loss and clip fraction."""
        loss, grads, clipfrac = grpo_loss_and_grads(
            actor, batch.take(idx), old_lp[idx], adv[idx], ref_lp[idx], cfg, variant.loss,
            None if w is None else w[idx],
        )
        opt.step(grads)
        return {"policy_loss": loss, "clipfrac": clipfrac}

    learning = _minibatch_updates(cfg, len(prompts), rng, update, ("policy_loss", "clipfrac"))
    groups = rm_score.reshape(-1, G)
    metrics = {
        **rollout,
        **learning,
        # share of groups whose words all scored the same: no signal, advantage 0
        "flat_groups": float(np.mean(groups.max(axis=1) == groups.min(axis=1))),
    }
    if variant.mismatch:
        metrics.update(_mismatch_metrics(old_lp, batch.logprobs, m, cfg.tis_threshold))
    return metrics
# --8<-- [end:grpo_step]


def _mismatch_metrics(train_lp, rollout_lp, mask, threshold: float) -> dict[str, float]:
    r"""What a run with a perturbed sampler logs of the mismatch, with TIS or without.

    ``rollout_kl``: KL(π_rollout ‖ π_train) per word, $\sum_t(\log\pi_{\text{rollout}} -
    \log\pi_{\text{train}})$ (k1; the tokens come from π_rollout) averaged over words;
    ``tis_truncated``: the share of tokens whose weight $\pi_{\text{train}}/\pi_{\text{rollout}}$
    reaches ``threshold``, where TIS cuts it (a run without TIS logs it too: what TIS would cut).
    """
    # tokens from q = π_rollout, p = π_train: k1 = log π_rollout − log π_train
    k1, _, _ = kl_estimators(train_lp, rollout_lp)  # [N, T]
    w = rollout_is_weights(train_lp, rollout_lp, mask, threshold=threshold)  # [N, T]
    return {
        "rollout_kl": float((k1 * mask).sum(axis=1).mean()),
        "tis_truncated": _masked_mean(w >= threshold, mask),
    }


def train_grpo(
    cfg: DemoConfig,
    sft: TinyLM,
    rng: np.random.Generator,
    log: _Logger,
    variant: Variant = PLAIN,
    noise_rng: np.random.Generator | None = None,
) -> TinyLM:
    """GRPO (or a ``variant``) from the SFT model, also the frozen reference; no critic."""
    actor = sft.copy()
    opt = Adam(actor.params, cfg.grpo_lr)
    for step in range(1, cfg.grpo_steps + 1):
        log.add(step, grpo_step(cfg, actor, sft, opt, rng, variant, noise_rng))
    return actor
