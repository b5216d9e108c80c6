r"""GRPO and its relatives: group-relative advantages (GRPO, Dr. GRPO, RLOO), REINFORCE++
returns (whitened by ``whiten.masked_whiten``), the loss aggregation modes, the clipped
GRPO/DAPO policy loss, and the Bradley–Terry reward-model loss.

Shapes: ``N = groups × group_size`` is one score per sampled response, each group contiguous (the
``group_size`` responses to one prompt side by side, as TRL 1.16.0's ``GRPOTrainer`` lays them out);
``B`` is the batch (responses) and ``T`` the response length in tokens of ``[B, T]`` tensors, whose
mask holds 1 on response tokens and 0 on padding (any layout: left-, right-padded, with holes).

What the docstrings say about verl, TRL and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` (verl 0.9.1, TRL 1.16.0, OpenRLHF 0.11.2) and tested against their own code:
``make peers`` runs the libraries' functions and ``tests/test_peers.py`` compares these
references with the results, including each difference stated here.
"""

from __future__ import annotations

import numbers

import numpy as np
import numpy.typing as npt

from ._validate import (
    as_float_arrays,
    check_ndim,
    check_same_shape,
    flag,
    number,
    token_arrays,
)
from .gae import reverse_discounted_sum
from .whiten import _whiten

__all__ = [
    "aggregate_loss",
    "group_advantages",
    "grpo_policy_loss",
    "reinforce_pp_advantages",
    "reward_model_loss",
    "rloo_advantages",
]

# verl 0.9.1's loss_agg_mode values, in the order the docstring of aggregate_loss explains them
LOSS_AGG_MODES = (
    "token-mean",
    "token-sum",
    "seq-mean-token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
)


# ---- groups -------------------------------------------------------------------------------------


def _groups(scores: npt.ArrayLike, group_size: object) -> tuple[np.ndarray, np.ndarray]:
    """``(scores as a [N] array, the same as float64 [groups, group_size])`` after the checks."""
    (s,) = as_float_arrays(scores=scores)
    check_ndim(1, shape="[N]", scores=s)
    if isinstance(group_size, bool | np.bool_) or not isinstance(group_size, numbers.Integral):
        raise ValueError(f"group_size must be an integer >= 2, got {group_size!r}")
    G = int(group_size)  # responses per prompt
    if G < 2:
        raise ValueError(
            f"group_size must be at least 2, got {G}: a group of one response has no other "
            "response to be compared with"
        )
    N = s.shape[0]  # responses
    if N % G != 0:
        raise ValueError(
            f"scores has N = {N} responses, which is not divisible by group_size = {G}: "
            "N must be groups × group_size, each group's responses side by side"
        )
    # float64 statistics: exact sums for float32 scores, and the result is cast back at the end
    return s, s.astype(np.float64).reshape(N // G, G)


def _constant(g: np.ndarray) -> np.ndarray:
    """``[groups, 1]``: True where every score of the group is the same."""
    return (g == g[:, :1]).all(axis=1, keepdims=True)


def group_advantages(
    scores: npt.ArrayLike,
    group_size: int,
    *,
    scale_by_std: bool = True,
    eps: float = 1e-6,
) -> np.ndarray:
    r"""GRPO's group-relative advantage of each sampled response.

    $$\hat A_i = \frac{s_i - \operatorname{mean}_g(s)}{\operatorname{std}_g(s) + \varepsilon},
      \qquad \operatorname{std}_g(s) = \sqrt{\tfrac{1}{G-1}\textstyle\sum_{j\in g}
      \big(s_j - \operatorname{mean}_g(s)\big)^2}$$

    where $g$ is the group of $G$ responses to the same prompt as response $i$. With
    ``scale_by_std=False`` it is $s_i - \operatorname{mean}_g(s)$ (Dr. GRPO).

    Args:
        scores: ``[N]`` one score (outcome reward) per response, ``N = groups × group_size``,
            the responses of each group side by side.
        group_size: ``G ≥ 2``, responses sampled per prompt; ``N`` must be a multiple of it.
        scale_by_std: divide by the group's std (GRPO) or not (Dr. GRPO).
        eps: ε ≥ 0 added to the std.

    Returns:
        ``[N]`` advantages, one per response. A group whose scores are all equal gets exactly 0.

    ValueError if ``group_size`` is not an integer ≥ 2 or ``N`` is not a multiple of it.

    The std is the unbiased one (``ddof=1``). A group with equal scores is set to 0 explicitly:
    the plain formula gives (rounding error of the mean) / ε there, which is not small. Scores of
    0 and 1 do not show it (their mean is exact); equal non-dyadic scores do: for eight float32
    copies of 0.7, verl 0.9.1's ``compute_grpo_outcome_advantage`` returns +0.056 for every
    response of a group that holds no signal, and for seven float32 copies of 1000.1 it returns
    −0.91. Statistics are taken in float64 here and the result cast back.

    verl 0.9.1's ``compute_grpo_outcome_advantage`` is this formula with ``torch.std`` (unbiased),
    ``epsilon=1e-6`` and ``norm_adv_by_std_in_grpo`` (False: the mean is only subtracted, Dr.
    GRPO). It finds groups by a prompt id (``index``) rather than by position, gives a group of
    one response mean 0 and std 1 (its advantage is ``s/(1 + ε)``; here that raises), and returns
    the advantage broadcast to ``[B, T]`` × mask; here :func:`grpo_policy_loss` takes the ``[B]``
    vector and broadcasts it. TRL 1.16.0's ``GRPOTrainer._generate_and_score_completions`` takes
    contiguous groups of ``num_generations``, subtracts the group mean and divides by
    ``std + 1e-4`` (its ``nanstd``, unbiased) according to ``scale_rewards``: "group" (the
    default; the group's std, as here with ``eps=1e-4``), "batch" (the std of all N scores of
    the batch, the mean staying per group), or "none" (no division, Dr. GRPO). OpenRLHF 0.11.2's
    "group_norm" estimator divides by ``std + 1e-9`` and its "dr_grpo" subtracts the mean only.
    """
    s, g = _groups(scores, group_size)
    eps = number("eps", eps, low=0)
    scale_by_std = flag("scale_by_std", scale_by_std)
    same = _constant(g)  # [groups, 1]
    # s_i − mean_g
    centered = g - g.mean(axis=1, keepdims=True)
    centered[same.ravel()] = 0.0  # equal scores: no signal, exactly 0
    if scale_by_std:
        # Â_i = (s_i − mean_g) / (std_g + ε), std with ddof = 1 (1 for equal scores: no 0/0)
        std = g.std(axis=1, ddof=1, keepdims=True)
        centered /= np.where(same, 1.0, std + eps)
    return centered.reshape(s.shape).astype(s.dtype, copy=False)


def rloo_advantages(scores: npt.ArrayLike, group_size: int) -> np.ndarray:
    r"""RLOO's leave-one-out advantage: each response against the mean of the others.

    $$\hat A_i = s_i - \frac{1}{G-1}\sum_{j\in g,\ j\ne i} s_j
      = \frac{G}{G-1}\big(s_i - \operatorname{mean}_g(s)\big)$$

    Args:
        scores: ``[N]`` one score per response, ``N = groups × group_size``, groups contiguous.
        group_size: ``G ≥ 2``.

    Returns:
        ``[N]`` advantages; exactly 0 for a group whose scores are all equal.

    ValueError if ``group_size`` is not an integer ≥ 2 or ``N`` is not a multiple of it.

    The baseline of response ``i`` does not contain ``s_i``, so it is independent of the
    response it is subtracted from (an unbiased baseline); it is the group mean scaled by
    ``G/(G−1)``, so RLOO is Dr. GRPO's advantage made slightly larger.

    verl 0.9.1's ``compute_rloo_outcome_advantage`` computes the scaled form
    ``s·G/(G−1) − mean·G/(G−1)``, groups by prompt id, and leaves a group of one response its
    raw score (this raises). TRL 1.16.0's ``RLOOTrainer`` takes contiguous groups of
    ``num_generations`` and uses ``(sum − s)/(G − 1)`` as here, after subtracting
    ``beta · Σ_t k1`` (``beta = 0.05`` by default; k1 = log π_old − log π_ref summed over each
    response's tokens) from each score: its KL penalty is in the reward, per sequence;
    ``normalize_advantages`` (default False) then subtracts the batch's mean and divides by its
    ``std + 1e-4``.
    OpenRLHF 0.11.2's "rloo" estimator uses ``(sum − s)/(G − 1)`` too.
    """
    s, g = _groups(scores, group_size)
    G = g.shape[1]  # responses per prompt
    # mean_{j≠i} s_j = (Σ_g s − s_i) / (G − 1)
    others = (g.sum(axis=1, keepdims=True) - g) / (G - 1)
    # Â_i = s_i − mean_{j≠i} s_j
    adv = g - others
    adv[_constant(g).ravel()] = 0.0
    return adv.reshape(s.shape).astype(s.dtype, copy=False)


# ---- REINFORCE++ --------------------------------------------------------------------------------


def reinforce_pp_advantages(
    token_rewards: npt.ArrayLike, mask: npt.ArrayLike, gamma: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    r"""REINFORCE++ advantages: each token's discounted return, whitened over the whole batch.

    $$G_t = r_t + \gamma\,G_{t'},\qquad
      \hat A_t = \frac{G_t - \mu}{\sqrt{\sigma^2 + 10^{-8}}}$$

    where $t'$ is the next response token after $t$ in the same row ($G_{t'} = 0$ after the
    last one), and $\mu$, $\sigma^2$ are the mean and unbiased variance of $G$ over every
    response token of the batch (:func:`masked_whiten`).

    Args:
        token_rewards: ``[B, T]`` per-token rewards (e.g. ``−β·KL`` on every token plus the
            score on the last one, as :func:`shape_token_rewards` builds them).
        mask: ``[B, T]``, 1 on response tokens.
        gamma: discount γ in ``[0, 1]`` (1.0 in verl and OpenRLHF by default).

    Returns:
        ``(advantages, returns)``, both ``[B, T]`` and 0 on padding.

    A masked position neither adds its reward nor breaks the carry, and does not count as a
    discount step: a row's result equals the result on its response tokens alone, whatever the
    layout (as :func:`compute_gae` does).

    verl 0.9.1's ``compute_reinforce_plus_plus_outcome_advantage`` does exactly this: at a masked
    position it keeps the running return unchanged (``running = new·m + running·(1 − m)``), so
    the return passes through holes undiscounted, and it stores ``new·m``, so its returns are 0
    on padding; then ``masked_whiten(returns, mask) * mask``. Advantages and returns agree with
    this function on every layout, holes included. (Older verl reset the running return after
    each masked position and did not mask the returns.) The one difference: verl 0.9.1's
    ``masked_var`` raises ValueError when the batch has fewer than two response tokens; here
    that gives zeros (one token's variance is taken as 0). OpenRLHF 0.11.2's "reinforce"
    estimator whitens with the biased variance instead (see :func:`masked_whiten`).
    """
    r, real = token_arrays(token_rewards=token_rewards, mask=mask)
    gamma = number("gamma", gamma, low=0, high=1)
    if r.size == 0:
        return np.zeros_like(r), np.zeros_like(r)
    # Move each row's response tokens to the front (stable), so that padding is not a time step.
    rows, cols = np.nonzero(real)
    rank = np.cumsum(real, axis=1)[rows, cols] - 1  # position among the row's response tokens
    packed = np.zeros_like(r)
    packed[rows, rank] = r[rows, cols]
    # G_t = r_t + γ G_{t'}: a reverse discounted sum over the packed tokens (zeros after them)
    packed_returns = reverse_discounted_sum(packed, gamma, overwrite_x=True)
    returns = np.zeros_like(r)
    returns[rows, cols] = packed_returns[rows, rank]
    # Â = (G − mean) / sqrt(var + 1e-8) over all response tokens of the batch
    return _whiten(returns, real, shift_mean=True), returns


# ---- loss aggregation ---------------------------------------------------------------------------


def _check_mode(mode: object, name: str = "mode") -> str:
    """``mode`` if it is one of :data:`LOSS_AGG_MODES`; ValueError naming the argument ``name``
    and listing them otherwise."""
    if not isinstance(mode, str) or mode not in LOSS_AGG_MODES:
        listed = ", ".join(repr(x) for x in LOSS_AGG_MODES)
        raise ValueError(f"{name} must be one of {listed}; got {mode!r}")
    return mode


def _aggregate(x: np.ndarray, real: np.ndarray, mode: str, horizon: float | None) -> float:
    """``x`` ``[B, T]`` reduced over ``real`` by ``mode``; padded entries ignored even if not
    finite, sums in float64."""
    T = x.shape[1]  # response length
    x = np.where(real, x, np.zeros((), x.dtype))
    if mode == "token-mean":
        # Σ m·ℓ / Σ m
        return float(x.sum(dtype=np.float64) / max(1, np.count_nonzero(real)))
    if mode == "token-sum":
        # Σ m·ℓ
        return float(x.sum(dtype=np.float64))
    tokens = np.count_nonzero(real, axis=1)  # [B] response tokens per row
    row_sum = x.sum(axis=1, dtype=np.float64)  # [B] Σ_t m·ℓ of each row
    has = tokens > 0  # rows with no token are left out of the sequence means
    if not has.any():
        return 0.0
    if mode == "seq-mean-token-mean":
        # mean_b (Σ_t m·ℓ / Σ_t m)
        return float((row_sum[has] / tokens[has]).mean())
    # mean_b Σ_t m·ℓ
    seq_mean = float(row_sum[has].mean())
    if mode == "seq-mean-token-sum":
        return seq_mean
    # mean_b Σ_t m·ℓ / horizon
    return seq_mean / (T if horizon is None else horizon)


def aggregate_loss(
    loss_mat: npt.ArrayLike,
    mask: npt.ArrayLike,
    mode: str = "token-mean",
    horizon: float | None = None,
) -> float:
    r"""Reduce a per-token loss to one number, as verl 0.9.1's ``agg_loss`` does (five modes).

    With $\ell_{bt}$ the loss, $m_{bt}$ the mask, $n_b = \sum_t m_{bt}$ and $\mathcal B$ the rows
    with $n_b > 0$:

    - ``"token-mean"``: $\sum_{b,t} m\,\ell \,/\, \sum_{b,t} m$, every token of the batch
      weighs the same (DAPO; TRL 1.16.0's "bnpo").
    - ``"token-sum"``: $\sum_{b,t} m\,\ell$, no division: the loss grows with the number of
      tokens in the batch.
    - ``"seq-mean-token-mean"``: $\frac{1}{|\mathcal B|}\sum_{b\in\mathcal B}
      \frac{1}{n_b}\sum_t m\,\ell$, the original GRPO: each response weighs the same, so a token
      of a short response weighs more than a token of a long one (the length bias Dr. GRPO
      points out).
    - ``"seq-mean-token-sum"``: $\frac{1}{|\mathcal B|}\sum_{b\in\mathcal B}\sum_t m\,\ell$.
    - ``"seq-mean-token-sum-norm"``: the same divided by ``horizon`` (default ``T``), a constant:
      Dr. GRPO's $\frac{1}{G}\sum_i \frac{1}{\text{MAX\_TOKENS}}\sum_t$.

    Args:
        loss_mat: ``[B, T]`` per-token loss.
        mask: ``[B, T]``, 1 on response tokens.
        mode: one of the five above; anything else is a ValueError listing them.
        horizon: the constant of "seq-mean-token-sum-norm", > 0 (``T`` if None; set it to the
            maximum response length so that it does not change with the batch's padding).
            Only that mode takes it.

    Returns:
        The loss as a Python float. Rows with no response token are left out of sequence means;
        a batch with no response token gives 0.0. Padded entries are ignored even if not finite.

    verl 0.9.1's ``agg_loss`` (``verl/trainer/ppo/core_algos.py``) on one process computes the
    same for all five modes: it leaves empty rows out of the sequence means, and its
    ``loss_scale_factor`` is this ``horizon``. Its "token-mean" divides by the token count with
    no epsilon. It differs at the edges: "seq-mean-token-mean" divides each row by
    ``n_b + 1e-8`` (a relative change of 1e-8/n_b), and a batch with no response token gives
    NaN (0/0) in every mode but "token-sum" (0.0 here). Older verl took ``torch.mean`` over all
    ``B`` rows, empty ones included, and had no "token-sum".

    TRL 1.16.0's ``GRPOTrainer._compute_loss`` names its aggregations by ``loss_type``: "bnpo"
    is "token-mean"; "dapo" (the default) is "token-mean" over the token count of the whole
    generation batch across processes (on one process and one step, "token-mean"); "grpo" is
    "seq-mean-token-mean" with an empty row counted as a 0 (``mask.sum(-1).clamp(min=1)`` and
    ``.mean()`` over all ``B`` rows); "dr_grpo" is ``Σ m·ℓ / (B · max_completion_length)``,
    "seq-mean-token-sum-norm" with ``horizon = max_completion_length`` and empty rows counted.
    Its ``loss_type`` also selects other policy losses ("cispo", "sapo", "luspo", "vespo").
    """
    mode = _check_mode(mode)
    x, real = token_arrays(loss_mat=loss_mat, mask=mask)
    if horizon is not None:
        if mode != "seq-mean-token-sum-norm":
            raise ValueError(
                f"horizon only applies to mode 'seq-mean-token-sum-norm', not {mode!r}"
            )
        horizon = number("horizon", horizon, low=0, above=True)
    return _aggregate(x, real, mode, horizon)


# ---- the GRPO policy loss -----------------------------------------------------------------------


def _response_advantages(adv: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``adv`` as ``[B, 1]`` (one advantage per response, broadcast over its tokens) or ``[B, T]``,
    checked against the ``[B, T]`` log-probs ``new``; the policy losses' one shape rule."""
    B, T = new.shape  # batch, response length
    if adv.ndim == 1:
        if adv.shape[0] != B:
            raise ValueError(
                f"shapes disagree: advantages [{adv.shape[0]}] needs one advantage per row of "
                f"new_logprobs [{B}, {T}]"
            )
        adv = adv[:, None]  # [B, 1]: one advantage per response, broadcast over its tokens
    elif adv.ndim == 2:
        check_same_shape(new_logprobs=new, advantages=adv)
    else:
        check_ndim(2, shape="[B] or [B, T]", advantages=adv)
    return adv


def grpo_policy_loss(
    new_logprobs: npt.ArrayLike,
    old_logprobs: npt.ArrayLike,
    advantages: npt.ArrayLike,
    mask: npt.ArrayLike,
    ref_logprobs: npt.ArrayLike | None = None,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    beta: float = 0.0,
    loss_agg_mode: str = "token-mean",
    kl_times_ratio: bool = False,
    dual_clip: float | None = None,
) -> float:
    r"""GRPO's clipped surrogate with an optional k3 KL penalty, aggregated per ``loss_agg_mode``.

    $$\ell_{bt} = \max\big(-\hat A_{bt}\,\rho_{bt},\;
      -\hat A_{bt}\operatorname{clip}(\rho_{bt}, 1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}})
      \big) + \beta\,k_3,\qquad \rho = e^{\log\pi_\theta - \log\pi_{\text{old}}},\qquad
      k_3 = e^{\,\log\pi_{\text{ref}}-\log\pi_\theta} - (\log\pi_{\text{ref}}-\log\pi_\theta) - 1$$

    Args:
        new_logprobs: ``[B, T]`` log-probs of the sampled tokens under the current policy.
        old_logprobs: ``[B, T]`` under the policy that sampled them.
        advantages: ``[B]`` one per response (e.g. :func:`group_advantages`), broadcast over
            its tokens, or ``[B, T]`` per token.
        mask: ``[B, T]``, 1 on response tokens.
        ref_logprobs: ``[B, T]`` under the frozen reference model; needed when ``beta > 0``.
        clip_low: ε_low > 0: the ratio's floor is ``1 − clip_low``.
        clip_high: ε_high > 0: the ratio's ceiling is ``1 + clip_high``. ``clip_high > clip_low``
            is DAPO's clip-higher (0.2 / 0.28): a positive-advantage token can raise its
            probability further before the clip stops its gradient.
        beta: β ≥ 0, weight of the k3 penalty; 0 (the default) leaves it out.
        loss_agg_mode: how :func:`aggregate_loss` reduces ``ℓ``.
        kl_times_ratio: weigh the penalty by the importance ratio, ``β·ρ·k3`` (TRL 1.16.0's
            ``use_bias_correction_kl``). Its expected gradient is the reverse-KL gradient
            (per token, ``∂(ρ·k3)/∂log π_θ = ρ·(log π_θ − log π_ref)``, ρ times k2's); plain k3 in
            the loss gives the forward-KL gradient.
        dual_clip: ``c > 1`` caps the clipped surrogate of negative-advantage tokens at ``c·|Â|``
            (dual-clip PPO, as in :func:`policy_surrogate_loss`); None (the default) leaves it
            out.

    Returns:
        The loss as a Python float (0.0 for a batch with no response token).

    The log-ratios are set to 0 on padding before ``exp`` (ρ = 1 and k3 = 0 there), so padding
    never produces inf, NaN or a floating-point warning, whatever it holds; an overflow on a
    response token still warns (:func:`policy_surrogate_loss` silences it). k3 is computed as
    ``expm1(d) − d``, which is never negative (see :func:`kl_estimators`).

    TRL 1.16.0's ``GRPOTrainer._compute_loss`` (loss types "grpo", "bnpo", "dr_grpo", "dapo")
    is this formula (``epsilon = 0.2``, ``epsilon_high`` defaulting to it, ``beta = 0.0`` by
    default), with k3 written ``exp(d) − d − 1`` on unmasked log-ratios; by default
    (``use_bias_correction_kl=True``) it multiplies k3 by ρ, which is ``kl_times_ratio=True``
    here. It can also clip ρ from above (``delta``, INTELLECT-2, default None) and, when it
    generates with vLLM (``use_vllm``, default False), multiplies the per-token loss by the
    rollout importance weights (``vllm_importance_sampling_correction``, default True); neither
    is done here. See :func:`aggregate_loss` for its ``loss_type``.

    verl 0.9.1's ``compute_policy_loss_vanilla`` takes ``clip_ratio_low`` / ``clip_ratio_high``
    (0.2 each by default) and differs in two ways: it clamps the log-ratio to ``[−20, 20]``
    before ``exp``, and for negative advantages it caps the loss at ``clip_ratio_c · |Â|`` (dual
    clip, ``clip_ratio_c = 3.0``; ``dual_clip`` here, off by default). It
    adds the KL as a separate term, ``kl_loss_coef`` (0.001) × ``agg_loss`` of
    ``kl_penalty(..., "low_var_kl")``, which is ``min(k3, 10)`` (see :func:`kl_estimators`);
    every aggregation mode is linear in ``ℓ``, so adding it per token first, as TRL and this
    function do, gives the same number. OpenRLHF 0.11.2's ``PolicyLoss`` takes the same
    (low, high) pair (``--actor.eps_clip_low_high``), clamps the log-ratio to ``[−20, 20]`` and
    has an optional dual clip (``--actor.dual_clip``).
    """
    clip_low = number("clip_low", clip_low, low=0, above=True)
    clip_high = number("clip_high", clip_high, low=0, above=True)
    if dual_clip is not None:
        dual_clip = number("dual_clip", dual_clip, low=1, above=True)
    beta = number("beta", beta, low=0)
    loss_agg_mode = _check_mode(loss_agg_mode, "loss_agg_mode")
    kl_times_ratio = flag("kl_times_ratio", kl_times_ratio)
    named = {"new_logprobs": new_logprobs, "old_logprobs": old_logprobs, "mask": mask,
             "advantages": advantages}
    if ref_logprobs is not None:
        named["ref_logprobs"] = ref_logprobs
    new, old, real, adv, *ref = token_arrays(**named, apart=("advantages",))  # ref: [π_ref] if any
    adv = _response_advantages(adv, new)
    if beta > 0 and ref_logprobs is None:
        raise ValueError("beta > 0 needs ref_logprobs for the KL penalty")
    zero = np.zeros((), new.dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # whatever padding holds is dropped here
        # log ρ = log π_θ − log π_old, 0 on padding so that exp cannot overflow there
        log_ratio = np.where(real, new - old, zero)
        # d = log π_ref − log π_θ, 0 on padding
        d = np.where(real, ref[0] - new, zero) if beta > 0 else None
    # ρ = exp(log π_θ − log π_old)
    ratio = np.exp(log_ratio)
    # max(−Âρ, −Â·clip(ρ, 1 − ε_low, 1 + ε_high))
    per_token = np.maximum(-adv * ratio, -adv * np.clip(ratio, 1 - clip_low, 1 + clip_high))
    if dual_clip is not None:
        # Â < 0: min(ℓ, −c·Â)
        per_token = np.where(adv < 0, np.minimum(per_token, -dual_clip * adv), per_token)
    if d is not None:
        # k3 = e^d − d − 1
        k3 = np.expm1(d) - d
        if kl_times_ratio:
            # ρ·k3: TRL 1.16.0's use_bias_correction_kl
            k3 = ratio * k3
        # + β·k3
        per_token = per_token + beta * k3
    return _aggregate(per_token, real, loss_agg_mode, None)


# ---- reward model -------------------------------------------------------------------------------


def reward_model_loss(
    chosen_scores: npt.ArrayLike,
    rejected_scores: npt.ArrayLike,
    margin: npt.ArrayLike | float | None = None,
) -> float:
    r"""Bradley–Terry loss of a reward model on preference pairs.

    $$\mathcal L = -\frac1B\sum_b \log\sigma\big(r_c^{(b)} - r_r^{(b)} - m^{(b)}\big)
      = \frac1B\sum_b \log\big(1 + e^{-(r_c - r_r - m)}\big)$$

    Args:
        chosen_scores: ``[B]`` (any shape) reward-model scores of the preferred responses.
        rejected_scores: the same shape, scores of the rejected responses.
        margin: ``None`` (0), one number, or an array shaped like the scores: how much higher
            the chosen score must be before the pair stops contributing much loss.

    Returns:
        The mean loss over pairs as a Python float; 0.0 for no pair. ``ln 2`` where
        ``r_c − r_r = m``.

    ``−log σ(z)`` is computed as ``logaddexp(0, −z)`` (softplus), exact and finite for any finite
    ``z``: at ``z = −1000`` it is 1000 and at ``z = 1000`` it is ``e^{−1000}`` (0.0 in floating
    point), where ``-log(sigmoid(z))`` gives inf and ``log(1 + exp(−z))`` overflows. TRL 1.16.0's
    ``RewardTrainer.compute_loss`` is ``-logsigmoid(chosen − rejected − margin).mean()`` (margin
    from the dataset's "margin" column, plus an optional ``center_rewards_coefficient ·
    mean((r_c + r_r)²)`` not computed here); OpenRLHF 0.11.2's ``PairWiseLoss`` is the same with
    an optional margin.
    """
    named = {"chosen_scores": chosen_scores, "rejected_scores": rejected_scores}
    scalar_margin = margin is None or np.ndim(margin) == 0
    if not scalar_margin:
        named["margin"] = margin
    arrays = as_float_arrays(**named)
    check_same_shape(**dict(zip(named, arrays, strict=True)))
    c, r = arrays[0], arrays[1]
    if scalar_margin:
        mg = 0.0 if margin is None else number("margin", margin)
    else:
        mg = arrays[2]
    if c.size == 0:
        return 0.0
    # z = r_c − r_r − m
    z = c - r - mg
    # −log σ(z) = log(1 + e^{−z})
    per_pair = np.logaddexp(np.zeros((), z.dtype), -z)
    return float(per_pair.mean(dtype=np.float64))
