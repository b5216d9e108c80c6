r"""Phase 2, **PPO**, with the four roles: the actor (trained), the critic
(:class:`~.model.ValueHead`, trained), the reference (the SFT model, frozen) and the reward model
(:mod:`.reward`, fixed).

Each step samples a batch of words, turns the RM score and the KL to the reference into token
rewards (``shape_token_rewards``), advantages and returns (``compute_gae``), and then runs several
epochs of minibatch updates on the clipped surrogate (``policy_surrogate_loss``) and the clipped
value loss (``value_clipped_loss``). The clipped term's gradient (:func:`clipped_surrogate_grad`)
and the clip fraction serve GRPO and GSPO too.
"""

from __future__ import annotations

import numpy as np

from .. import (
    compute_gae,
    importance_ratio,
    masked_whiten,
    policy_surrogate_loss,
    shape_token_rewards,
    value_clipped_loss,
)
from ..ppo import _clipped_values
from .common import (
    _aggregation_weights,
    _Logger,
    _masked_mean,
    _minibatch_updates,
    _rollout_metrics,
)
from .config import DemoConfig
from .data import _random_prompts
from .model import Adam, Batch, TinyLM, ValueHead
from .reward import score_batch

__all__ = [
    "clipped_surrogate_grad",
    "policy_loss_and_grads",
    "ppo_step",
    "train_ppo",
    "value_loss_and_grads",
]


def clipped_surrogate_grad(
    ratio: np.ndarray, adv: np.ndarray, clip_low: float = 0.2, clip_high: float = 0.2
) -> np.ndarray:
    r"""$\partial\ell/\partial\log r$ of PPO's clipped term, token by token (``ratio`` and ``adv``
    broadcast together).

    With $\ell = \max(-\hat A r,\ -\hat A\operatorname{clip}(r, 1-\epsilon_l, 1+\epsilon_h))$,
    the clipped branch is the max, and flat in θ, exactly where the update has gone far enough:
    $\hat A > 0,\ r > 1+\epsilon_h$ or $\hat A < 0,\ r < 1-\epsilon_l$. Elsewhere the unclipped
    branch is, and $\partial(-\hat A r)/\partial\log r = -\hat A r$:

    $$\frac{\partial\ell}{\partial\log r} = -\hat A\,r\,\big[\text{not clipped}\big]$$

    ``r`` is each token's $\rho_t$ (:func:`importance_ratio`) in PPO and GRPO, and its word's
    $s_b$ in GSPO, whose stop-gradient form makes $\partial\log r_{bt}/\partial\log\pi_\theta(a_t)
    = 1$ there too.
    """
    clipped = ((adv > 0) & (ratio > 1 + clip_high)) | ((adv < 0) & (ratio < 1 - clip_low))
    # ∂ℓ/∂log r = −Â r where not clipped
    return np.where(clipped, 0.0, -adv * ratio)


def _clipfrac(ratio: np.ndarray, mask: np.ndarray, clip_low: float, clip_high: float) -> float:
    """The share of response tokens whose ratio lies outside ``[1 − clip_low, 1 + clip_high]``."""
    return _masked_mean((ratio < 1 - clip_low) | (ratio > 1 + clip_high), mask)


def policy_loss_and_grads(
    model: TinyLM,
    batch: Batch,
    old_lp: np.ndarray,
    adv: np.ndarray,
    clip_range: float = 0.2,
    temperature: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], float]:
    r""":func:`policy_surrogate_loss` (a token-mean), its parameter gradients, the clip fraction.

    $$\frac{\partial L^{\text{CLIP}}}{\partial\log\pi_\theta(a_t)} = \frac{m_t}{N}\,
      \frac{\partial\ell_t}{\partial\log\rho_t},\qquad N = \max\big(1, \textstyle\sum m\big)$$

    with $\partial\ell_t/\partial\log\rho_t$ from :func:`clipped_surrogate_grad`.
    """
    new_lp, logp = model.token_logprobs(batch, temperature)  # [B, T], [B, T, V]
    m = batch.mask
    loss = policy_surrogate_loss(new_lp, old_lp, adv, m, clip_range)
    ratio = importance_ratio(new_lp, old_lp, m)  # [B, T] ρ
    # ∂L/∂log π_θ = (m/N) ∂ℓ/∂log ρ
    g = clipped_surrogate_grad(ratio, adv, clip_range, clip_range)
    g = g * _aggregation_weights(m, "token-mean")
    clipfrac = _clipfrac(ratio, m, clip_range, clip_range)
    return loss, model.backward(batch, logp, g, temperature), clipfrac


def value_loss_and_grads(
    critic: ValueHead,
    batch: Batch,
    old_v: np.ndarray,
    returns: np.ndarray,
    clip_range_value: float = 0.2,
) -> tuple[float, dict[str, np.ndarray]]:
    r""":func:`value_clipped_loss` (a token-mean) and its parameter gradients.

    Per token the loss is $\tfrac12\max((V - R)^2, (V^{\text{clip}} - R)^2)$. Inside the clip
    range $V^{\text{clip}} = V$ and both terms agree; outside it $V^{\text{clip}}$ is a constant.
    So the gradient is that of the unclipped term where it is the larger one, else 0:

    $$\frac{\partial L^V}{\partial V_t} = \frac{m_t}{N}\,(V_t - R_t)\,
      \big[(V_t - R_t)^2 \ge (V^{\text{clip}}_t - R_t)^2\big]$$
    """
    new_v = critic.values(batch)  # [B, T]
    m = batch.mask
    loss = value_clipped_loss(new_v, old_v, returns, m, clip_range_value)
    # the loss's V_clip, which it does not return
    v_clip = _clipped_values(new_v, old_v, clip_range_value)
    unclipped_wins = (new_v - returns) ** 2 >= (v_clip - returns) ** 2
    # ∂(½(V − R)²)/∂V = V − R where that term is the max
    g = np.where(unclipped_wins, new_v - returns, 0.0) * _aggregation_weights(m, "token-mean")
    return loss, critic.backward(batch, g)


def ppo_step(
    cfg: DemoConfig,
    actor: TinyLM,
    critic: ValueHead,
    ref: TinyLM,
    opt_actor: Adam,
    opt_critic: Adam,
    rng: np.random.Generator,
) -> dict[str, float]:
    """One PPO iteration: a rollout, then ``ppo_epochs × ppo_minibatches`` updates; its metrics."""
    tau = cfg.temperature
    # --- rollout: the actor writes, the reward model scores, the reference and critic look on ---
    batch = actor.sample(_random_prompts(rng, cfg.ppo_batch), rng, tau)
    m = batch.mask  # [B, T]
    rm_score = score_batch(batch.words())  # [B]
    old_lp, logp = actor.token_logprobs(batch, tau)  # [B, T], [B, T, V]
    ref_lp, _ = ref.token_logprobs(batch, tau)  # [B, T]
    old_v = critic.values(batch)  # [B, T]
    # r_t = −β(log π − log π_ref) + [t = last] R
    rewards = shape_token_rewards(rm_score, old_lp, ref_lp, m, cfg.kl_coef)
    # Â_t = δ_t + γλ Â_{t+1},  R_t = Â_t + V_t
    adv, returns = compute_gae(rewards, old_v, m, cfg.gamma, cfg.lam)
    # Â ← (Â − mean Â) / √(var Â + 1e-8) over the batch's response tokens (unbiased variance)
    adv = masked_whiten(adv, m)
    # what is logged of the rollout: RM score, KL to the reference (k1, k3), entropy, length
    rollout = _rollout_metrics(rm_score, old_lp, ref_lp, logp, m)

    # --- learning: several epochs of minibatch updates on the same rollout ---
    def update(idx: np.ndarray) -> dict[str, float]:
        """One Adam step of the actor and one of the critic on the rows ``idx``; their losses."""
        mb = batch.take(idx)
        # actor: L^CLIP = mean max(−Âρ, −Â clip(ρ, 1−ε, 1+ε)), one Adam step
        loss, grads, clipfrac = policy_loss_and_grads(
            actor, mb, old_lp[idx], adv[idx], cfg.clip_range, tau
        )
        opt_actor.step(grads)
        # critic: L^V = ½ mean max((V − R)², (V_clip − R)²), one Adam step
        v_loss, v_grads = value_loss_and_grads(
            critic, mb, old_v[idx], returns[idx], cfg.clip_range_value
        )
        opt_critic.step(v_grads)
        return {"policy_loss": loss, "value_loss": v_loss, "clipfrac": clipfrac}

    names = ("policy_loss", "value_loss", "clipfrac")
    return {**rollout, **_minibatch_updates(cfg, cfg.ppo_batch, rng, update, names)}


def train_ppo(cfg: DemoConfig, sft: TinyLM, rng: np.random.Generator, log: _Logger) -> TinyLM:
    """PPO from the SFT model; the SFT model itself stays frozen as the reference."""
    actor, ref, critic = sft.copy(), sft, ValueHead(cfg.max_len)
    opt_actor, opt_critic = Adam(actor.params, cfg.actor_lr), Adam(critic.params, cfg.critic_lr)
    for step in range(1, cfg.ppo_steps + 1):
        log.add(step, ppo_step(cfg, actor, critic, ref, opt_actor, opt_critic, rng))
    return actor
