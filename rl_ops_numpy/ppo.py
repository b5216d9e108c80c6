r"""PPO's per-token operators: importance ratio, clipped surrogate policy loss, the s21 clipped
objective, and the clipped value loss.

Shapes: ``B`` is the batch (responses), ``T`` the response length in tokens. Masks hold 1 on
response tokens and 0 on padding; any layout (left-, right-padded, or with holes) is accepted.

What the docstrings say about verl and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` and tested against their code (``tests/test_peers.py``).
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_arrays, check_same_shape, number, token_arrays

__all__ = [
    "importance_ratio",
    "policy_surrogate_loss",
    "ppo_clipped_objective",
    "value_clipped_loss",
]


def _masked_mean(x: np.ndarray, real: np.ndarray) -> float:
    r"""$\sum_{b,t} x\,m / \max(1, \sum_{b,t} m)$; padded entries are ignored even if not finite."""
    total = np.where(real, x, 0).sum(dtype=np.float64)
    return float(total / max(1, np.count_nonzero(real)))


def importance_ratio(new_logprobs, old_logprobs, mask) -> np.ndarray:
    r"""Per-token importance ratio of the current policy to the sampling policy.

    $$\rho_t = \exp\big(\log\pi_\theta(a_t\mid s_t) - \log\pi_{\text{old}}(a_t\mid s_t)\big)$$

    Args:
        new_logprobs: ``[B, T]`` log-probs of the sampled tokens under the current policy.
        old_logprobs: ``[B, T]`` log-probs under the frozen policy that sampled them.
        mask: ``[B, T]``, 1 on response tokens, 0 on padding.

    Returns:
        ``[B, T]`` ratio, exactly 1.0 wherever ``mask`` is 0.

    Padding is filled with ``np.where``, so the ratio stays 1.0 there even when a padded log-prob
    is ``-inf`` (where ``ratio * mask + (1 - mask)`` would give ``inf * 0`` = NaN). verl 0.9.1
    (``compute_policy_loss_vanilla``) and OpenRLHF 0.11.2 (``PolicyLoss``) clamp the log-ratio
    to ``[-20, 20]`` before ``exp``; TRL 1.16.0's ``GRPOTrainer`` and this reference do not.
    """
    new, old, real = token_arrays(new_logprobs=new_logprobs, old_logprobs=old_logprobs, mask=mask)
    # ρ_t = exp(log π_θ − log π_old); 1 on padding
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(real, np.exp(new - old), np.ones((), new.dtype))


def policy_surrogate_loss(
    new_logprobs, old_logprobs, advantages, mask, clip_range: float = 0.2, *,
    dual_clip: float | None = None,
) -> float:
    r"""PPO's clipped surrogate, written as a loss to minimise.

    $$L^{\text{CLIP}} = \frac{\sum_{b,t} m_{bt}\,\max\big(-\rho_{bt}\hat A_{bt},\;
      -\operatorname{clip}(\rho_{bt}, 1-\epsilon, 1+\epsilon)\hat A_{bt}\big)}
      {\max\big(1, \sum_{b,t} m_{bt}\big)}$$

    With ``dual_clip = c``, a token with $\hat A < 0$ contributes
    $\min\big(\ell_{bt},\, -c\,\hat A_{bt}\big)$ instead (dual-clip PPO, Ye et al. 2019): a
    negative-advantage token whose ratio has grown far above 1 no longer gives an unbounded loss.

    Args:
        new_logprobs, old_logprobs: ``[B, T]`` log-probs under the current and sampling policy.
        advantages: ``[B, T]`` advantages, e.g. from :func:`compute_gae`.
        mask: ``[B, T]``, 1 on response tokens.
        clip_range: ε > 0.
        dual_clip: ``c > 1`` caps the loss of negative-advantage tokens at ``c·|Â|``; None (the
            default) leaves it out.

    Returns:
        The masked mean over all response tokens of the batch (a "token-mean"). A batch with no
        response token gives 0.0.

    Conventions: the maximum of the two negated terms is the minimum of the two objectives,
    the pessimistic bound of the PPO paper. The denominator is clamped to 1, as in TRL 1.16.0's
    GRPO "bnpo" loss; verl 0.9.1's token-mean (``agg_loss``) divides by the token count with no
    epsilon, which gives NaN for a batch with no response token, and so does OpenRLHF 0.11.2's
    ``masked_mean``. verl 0.9.1's ``compute_policy_loss_vanilla`` always applies the dual clip
    (``clip_ratio_c``, default 3.0; it must be > 1) and clamps the log-ratio to ``[-20, 20]``;
    with ``dual_clip=clip_ratio_c`` and log-ratios inside that range this function gives its
    number. OpenRLHF 0.11.2's ``PolicyLoss`` has the dual clip as an option (``dual_clip``) and
    the same clamp. Both can also average per sequence first ("seq-mean-token-mean", see
    :func:`aggregate_loss`). TRL's last PPOTrainer (TRL 1.12.0) computes this loss with
    ``masked_mean`` over the response tokens, without clamp or dual clip.
    """
    clip_range = number("clip_range", clip_range, low=0, above=True)
    if dual_clip is not None:
        dual_clip = number("dual_clip", dual_clip, low=1, above=True)
    new, old, adv, real = token_arrays(
        new_logprobs=new_logprobs, old_logprobs=old_logprobs, advantages=advantages, mask=mask
    )
    with np.errstate(over="ignore", invalid="ignore"):
        # ρ = exp(log π_θ − log π_old)
        ratio = np.exp(new - old)
        # max(−Âρ, −Â·clip(ρ, 1−ε, 1+ε))
        per_token = np.maximum(-adv * ratio, -adv * np.clip(ratio, 1 - clip_range, 1 + clip_range))
    if dual_clip is not None:
        # Â < 0: min(ℓ, −c·Â)
        per_token = np.where(adv < 0, np.minimum(per_token, -dual_clip * adv), per_token)
    return _masked_mean(per_token, real)


def ppo_clipped_objective(ratio, advantage, clip_epsilon: float = 0.2) -> float:
    r"""PPO's clipped objective to maximise, as in the s21 exercise (no mask).

    $$\mathcal{L}^{\text{CLIP}} = \frac1N\sum_i \min\big(r_i \hat A_i,\;
      \operatorname{clip}(r_i, 1-\epsilon, 1+\epsilon)\hat A_i\big)$$

    Args:
        ratio: probability ratios ``r_i``, any shape.
        advantage: advantages ``Â_i``, the same shape as ``ratio``.
        clip_epsilon: ε > 0.

    Returns:
        The mean over all elements; 0.0 for empty input. This is the negative of
        :func:`policy_surrogate_loss` with a full mask.

    The libraries do not form this objective: verl 0.9.1 and OpenRLHF 0.11.2 minimise its
    negative per token, ``max(−Â·r, −Â·clip(r))`` (the same as ``−min(…)``), averaged over the
    response mask, which is :func:`policy_surrogate_loss`.
    """
    clip_epsilon = number("clip_epsilon", clip_epsilon, low=0, above=True)
    r, adv = as_float_arrays(ratio=ratio, advantage=advantage)
    check_same_shape(ratio=r, advantage=adv)
    if r.size == 0:
        return 0.0
    # min(rÂ, clip(r, 1−ε, 1+ε)Â)
    per_item = np.minimum(r * adv, np.clip(r, 1 - clip_epsilon, 1 + clip_epsilon) * adv)
    return float(per_item.mean(dtype=np.float64))


def _clipped_values(new: np.ndarray, old: np.ndarray, clip_range_value: float) -> np.ndarray:
    r"""$V^{\text{clip}} = V_{\text{old}} + \operatorname{clip}(V_\theta - V_{\text{old}},
    -\epsilon_v, \epsilon_v)$, shaped like ``new``: the clipped branch of
    :func:`value_clipped_loss`. Shared with the demo's critic gradient
    (``rl_ops_numpy/demo/ppo.py``), which needs to know which branch is the larger, where the
    loss returns only its mean."""
    # V_clip = V_old + clip(V − V_old, −ε_v, ε_v)
    return old + np.clip(new - old, -clip_range_value, clip_range_value)


def value_clipped_loss(
    new_values, old_values, returns, mask, clip_range_value: float = 0.2
) -> float:
    r"""PPO's clipped value loss.

    $$V^{\text{clip}} = V_{\text{old}} + \operatorname{clip}(V_\theta - V_{\text{old}},
      -\epsilon_v, \epsilon_v),\qquad
      L^V = \tfrac12\,\frac{\sum m\,\max\big((V_\theta - R)^2, (V^{\text{clip}} - R)^2\big)}
      {\max(1, \sum m)}$$

    Args:
        new_values: ``[B, T]`` current critic outputs.
        old_values: ``[B, T]`` critic outputs frozen at rollout time.
        returns: ``[B, T]`` regression targets (advantages + old values).
        mask: ``[B, T]``, 1 on response tokens.
        clip_range_value: ε_v > 0.

    Returns:
        Half the masked mean of the larger squared error; 0.0 if nothing is unmasked.

    verl 0.9.1's ``compute_value_loss`` and OpenRLHF 0.11.2's ``ValueLoss`` (with ``clip_eps``
    set) use this formula: ½ × the larger squared error, values clipped to old ± ε_v, averaged
    over response tokens (verl's default aggregation, "token-mean"); both default to ε_v = 0.5
    (``critic.cliprange_value``, ``--critic.value_clip``). Both divide by the raw token count, so
    a batch with no response token gives NaN (0.0 here). TRL's last PPOTrainer (TRL 1.12.0)
    uses the formula with ε_v = 0.2 (``cliprange_value``) and averages over the response tokens
    and the one position after each response (its ``padding_mask_p1``), where it puts the score
    (see :func:`shape_token_rewards`).
    """
    clip_range_value = number("clip_range_value", clip_range_value, low=0, above=True)
    v, v_old, ret, real = token_arrays(
        new_values=new_values, old_values=old_values, returns=returns, mask=mask
    )
    v_clipped = _clipped_values(v, v_old, clip_range_value)
    # ½ max((V − R)², (V_clip − R)²)
    per_token = 0.5 * np.maximum((v - ret) ** 2, (v_clipped - ret) ** 2)
    return _masked_mean(per_token, real)
