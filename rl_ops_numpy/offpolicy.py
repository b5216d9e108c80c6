r"""Off-policy corrections: the rollout importance weights (TIS, IcePop) that correct for the
engine that sampled, and DeepSeek-V3.2's off-policy sequence mask.

The samples of an RLHF step come from an inference engine (vLLM, SGLang) whose log-probs differ
from the trainer's for the same weights (other kernels, other precision, another MoE routing),
and possibly from an older policy. These operators weigh or drop samples by how far the policy
being trained is from the one that sampled.

Shapes: ``[B, T]`` log-probs of the sampled tokens; ``mask`` ``[B, T]``, 1 on response tokens
and 0 on padding (any layout: left-, right-padded, with holes); ``advantages`` ``[B]`` or
``[B, 1]``, one per response.

What the docstrings say about verl, TRL and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` (verl 0.9.1, TRL 1.16.0, OpenRLHF 0.11.2) and tested against their own code
where they compute the same thing (``tests/test_peers.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validate import number, token_arrays

__all__ = ["off_policy_sequence_mask", "rollout_is_weights"]

LEVELS = ("token", "sequence")  # verl 0.9.1's rollout_is values
SAFETY_BOUND = 20.0  # verl 0.9.1 clamps every log-weight to [−20, 20] before exp


def _threshold(threshold: object) -> tuple[float | None, float]:
    """``(low, high)`` of an IcePop band ``(low, high)``, or ``(None, C)`` of a TIS cap ``C``."""
    if isinstance(threshold, tuple | list):
        if len(threshold) != 2:
            raise ValueError(
                f"threshold must be one number C > 0 (TIS) or a pair (low, high) (IcePop), "
                f"got {len(threshold)} values"
            )
        low = number("threshold[0] (low)", threshold[0], low=0, above=True)
        high = number("threshold[1] (high)", threshold[1], low=0, above=True)
        if low > high:
            raise ValueError(f"threshold (low, high) needs low <= high, got ({low!r}, {high!r})")
        return low, high
    return None, number("threshold", threshold, low=0, above=True)


def rollout_is_weights(
    train_logprobs: npt.ArrayLike,
    rollout_logprobs: npt.ArrayLike,
    mask: npt.ArrayLike,
    *,
    level: str = "token",
    threshold: float | tuple[float, float] = 2.0,
) -> np.ndarray:
    r"""Importance weights $\pi_{\text{train}}/\pi_{\text{rollout}}$ that correct a loss for the
    engine that sampled, truncated (TIS) or masked to a band (IcePop); 0 on padding.

    $$\log w_{bt} = \operatorname{clip}\big(\ell_{bt}, -20, 20\big)\ \ (\text{token}),\qquad
      \log w_{b} = \operatorname{clip}\Big(\textstyle\sum_{t} m_{bt}\,\ell_{bt}, -20, 20\Big)\ \
      (\text{sequence}),\qquad \ell = \log\pi_{\text{train}} - \log\pi_{\text{rollout}}$$

    $$\text{TIS: } \bar w = \min(w, C),\qquad
      \text{IcePop: } \bar w = w\cdot\mathbb 1[a \le w \le b]$$

    Args:
        train_logprobs: ``[B, T]`` log-probs of the sampled tokens under the trainer (verl's
            ``old_log_prob``, recomputed by the training engine).
        rollout_logprobs: ``[B, T]`` log-probs the inference engine reported when it sampled.
        mask: ``[B, T]``, 1 on response tokens.
        level: ``"token"``, one weight per token, or ``"sequence"``, one weight per response
            (the product of its token ratios), repeated on each of its tokens.
        threshold: ``C > 0``: truncate at ``C`` (TIS; no lower bound); or a pair ``(a, b)``,
            ``0 < a ≤ b``: keep the weights in ``[a, b]`` (both ends included) and set the others
            to 0 (IcePop).

    Returns:
        ``[B, T]`` weights in the log-probs' dtype, 0 on padding (whatever padding holds).
        They multiply the per-token policy loss and carry no gradient. A NaN log-prob on a
        response token (an engine that could not score it) gives NaN under TIS (``min(NaN, C)``
        is NaN) and 0 under IcePop (NaN lies in no band): on its token, or at the sequence level
        on every token of its response; the other weights are untouched.

    ValueError for unequal or non-``[B, T]`` shapes, a mask that is not 0/1, a ``level`` other
    than "token" or "sequence", or a threshold that is not ``C > 0`` or ``0 < a ≤ b``.

    Why truncate: the sampled tokens are drawn from the engine's policy, so the unbiased
    correction is ``w``; a token the engine under-rated gets ``w ≫ 1`` and one such token can
    dominate a batch's gradient. ``min(w, C)`` gives up a little bias (the expected weight falls
    below 1) for a variance that cannot exceed ``C²``. The sequence weight is the exact ratio of
    the two policies' probabilities of the whole response, but it is a product of ``T`` ratios:
    with independent token ratios of mean 1 and ``E[w_t²] = 1 + v`` its variance is
    ``(1 + v)^T − 1``, which grows exponentially with the length, so most responses get weights
    near 0 and a rare few carry the mean. IcePop does not shrink an outlier, it drops it: a token
    whose two probabilities disagree by more than the band allows gives no gradient at all.
    Sums and ``exp`` are taken in float64 and the result cast back.

    verl 0.9.1's ``compute_rollout_correction_weights``
    (``verl/trainer/ppo/rollout_corr_helper.py``) is this function with
    ``log_ratio = old_log_prob − rollout_log_prob``, ``rollout_is = level``, and
    ``rollout_is_threshold`` a float (TIS) or the string ``"a_b"`` (IcePop; a pair here). Its
    sequence level sums the masked log-ratios (no division by the length), in the input dtype,
    and clamps the sum to ±20 like the token level. A NaN on a response token gives the same
    NaN (TIS) or 0 (IcePop) there. It differs at the edges: a batch with no response token
    raises ValueError (zeros here), and, as it multiplies the weights by the mask, its TIS
    weight on padding is NaN (NaN·0, 0 here) where a NaN reaches it: padding's own NaN at the
    token level (its masked sum drops it at the sequence level), a response token's NaN on its
    row's padding at the sequence level. It runs when
    ``algorithm.rollout_correction.rollout_is`` is set (null by default;
    ``rollout_is_threshold`` 2.0), its optional ``rollout_is_batch_normalize`` (off) divides by
    the batch mean, and ``compute_policy_loss_*`` multiply the per-token loss by the weights.
    Its ``rollout_rs`` options are a separate rejection filter on a KL statistic.

    TRL 1.16.0's ``GRPOTrainer`` corrects only when vLLM generates (``use_vllm``, default False;
    ``vllm_importance_sampling_correction``, default True), in
    ``_generate_and_score_completions``: ``vllm_importance_sampling_mode`` "token_truncate",
    "token_mask", "sequence_truncate" or "sequence_mask" (the default), bounds
    ``vllm_importance_sampling_clip_min`` (None) and ``_clip_max`` (3.0). It does not clamp the
    log-ratio, truncation clips from below too when ``clip_min`` is set, the token-level weight
    on padding is 1 (the loss's mask removes it), and a NaN sampling log-prob counts as a
    log-ratio of 0 (``nan_to_num``: a weight of 1 at the token level, nothing added to the
    response's sum), where this function gives NaN or 0 as above. OpenRLHF 0.11.2's
    ``PolicyLoss`` (``--algo.advantage.is_correction_level`` "off" by default, "token" or
    "seq"; ``_mode`` "mask" or "clip"; ``_threshold`` 0.5 5.0) clips token weights to both
    bounds, masks tokens outside the band, and at "seq" masks whole responses by the geometric
    mean ``exp(mean_t ℓ)`` of their ratios, not the product, keeping the per-token weights of
    the responses it keeps.
    """
    if not isinstance(level, str) or level not in LEVELS:
        raise ValueError(f"level must be 'token' or 'sequence', got {level!r}")
    low, high = _threshold(threshold)
    train, rollout, real = token_arrays(
        train_logprobs=train_logprobs, rollout_logprobs=rollout_logprobs, mask=mask
    )
    with np.errstate(invalid="ignore", over="ignore"):  # whatever padding holds is dropped
        # ℓ = log π_train − log π_rollout, 0 on padding; float64
        log_w = np.where(real, train.astype(np.float64) - rollout.astype(np.float64), 0.0)
    if level == "sequence":
        # log w_b = Σ_t m·ℓ: the log of the product of the response's ratios, [B, 1]
        log_w = log_w.sum(axis=1, keepdims=True)
    # w = exp(clip(log w, −20, 20))
    w = np.exp(np.clip(log_w, -SAFETY_BOUND, SAFETY_BOUND))
    if low is None:
        # TIS: min(w, C)
        w = np.minimum(w, high)
    else:
        # IcePop: w · 1[a ≤ w ≤ b]
        w = np.where((w >= low) & (w <= high), w, 0.0)
    # 0 on padding; a sequence weight is repeated on its tokens
    return np.where(real, w, 0.0).astype(train.dtype, copy=False)


def off_policy_sequence_mask(
    advantages: npt.ArrayLike,
    logprobs: npt.ArrayLike,
    sampling_logprobs: npt.ArrayLike,
    mask: npt.ArrayLike,
    threshold: float,
) -> np.ndarray:
    r"""DeepSeek-V3.2's off-policy sequence mask: 0 for a response whose advantage is negative
    and whose sampling policy is far (in mean KL) from the policy being trained, 1 otherwise.

    $$M_b = \begin{cases} 0 & \text{if } \hat A_b < 0 \text{ and }
      \frac{1}{\max(1, n_b)}\sum_t m_{bt}\big(\log\pi_{\text{sampling}}(y_{bt})
      - \log\pi_\theta(y_{bt})\big) > \delta \\ 1 & \text{otherwise}\end{cases},\qquad
      n_b = \sum_t m_{bt}$$

    Args:
        advantages: ``[B]`` or ``[B, 1]``, one advantage per response.
        logprobs: ``[B, T]`` log-probs of the sampled tokens under the policy being trained
            (π_θ; read as values, no gradient).
        sampling_logprobs: ``[B, T]`` under the policy that sampled them (the engine's, or
            π_old's when the engine reports none).
        mask: ``[B, T]``, 1 on response tokens.
        threshold: δ, the largest mean KL a negative-advantage response may have (a finite
            number; TRL's example is 0.5).

    Returns:
        ``[B, 1]`` of 0.0 (drop) and 1.0 (keep), in the inputs' floating dtype; it multiplies every
        token of its response in the per-token loss.

    ValueError for unequal or non-``[B, T]`` log-prob shapes, advantages that are not one per
    row, a mask that is not 0/1, or a threshold that is not a finite number.

    The mean of ``log π_sampling − log π_θ`` over tokens sampled from π_sampling is the k1
    estimate of ``KL(π_sampling ‖ π_θ)`` per token: how far the policy has moved since, or how
    much the engine disagrees with the trainer. It is a mean, not a sum, so that the rule does
    not drop long responses for being long. Only negative-advantage responses are dropped:
    pushing down tokens of a response the current policy would no longer produce gives a
    gradient that can mislead more than it teaches, while positive ones still teach. Equality
    (``Â = 0``, or a mean KL of exactly δ) keeps. An empty row has mean 0. A NaN in either
    log-prob on a response token (a token the engine could not score) gives no evidence: its
    k1 counts as 0 and the token still counts in ``n_b``, as in TRL (``nan_to_num``); left in,
    the mean would be NaN, ``NaN ≤ δ`` false, and one unscorable token would drop a
    negative-advantage response. Padding is ignored whatever it holds. A NaN advantage is not
    ``≥ 0``: its response is kept only if its mean KL is at most δ (its loss is NaN anyway).
    Sums in float64.

    TRL 1.16.0's ``GRPOTrainer.get_off_policy_mask`` is this function (``off_policy_mask_threshold``
    δ, default None: off). ``_compute_loss`` passes the advantages as ``[B, 1]``, the detached
    current log-probs, and ``sampling_per_token_logps`` (vLLM's) or else ``old_per_token_logps``,
    and multiplies the per-token policy loss by the mask before the vLLM weights and the KL term
    (which the mask does not touch). verl 0.9.1 and OpenRLHF 0.11.2 have no mask that looks at
    the advantage's sign; their sequence-level rejection filters drop by divergence alone (verl's
    ``rollout_rs``, e.g. "seq_mean_k1" on this same mean; OpenRLHF's
    ``--algo.advantage.is_correction_level seq``).
    """
    delta = number("threshold", threshold)
    lp, samp, real, adv = token_arrays(logprobs=logprobs, sampling_logprobs=sampling_logprobs,
                                       mask=mask, advantages=advantages, apart=("advantages",))
    B, T = lp.shape  # batch, response length
    if adv.shape not in ((B,), (B, 1)):
        shape = ", ".join(str(n) for n in adv.shape)
        raise ValueError(
            f"advantages [{shape}] must be [B] or [B, 1], one per row of logprobs [{B}, {T}]"
        )
    with np.errstate(invalid="ignore", over="ignore"):  # whatever padding holds is dropped
        # k1_t = log π_sampling − log π_θ, 0 on padding; float64
        k1 = np.where(real, samp.astype(np.float64) - lp.astype(np.float64), 0.0)
    # a token the engine could not score (NaN) gives no evidence: 0
    k1 = np.where(np.isnan(k1), 0.0, k1)
    # n_b = Σ_t m, at least 1
    n = np.maximum(np.count_nonzero(real, axis=1, keepdims=True), 1)  # [B, 1]
    # KL_b = Σ_t m·k1 / n_b
    seq_kl = k1.sum(axis=1, keepdims=True) / n  # [B, 1]
    # keep when Â ≥ 0 or KL_b ≤ δ
    keep = (adv.reshape(B, 1) >= 0) | (seq_kl <= delta)
    return keep.astype(lp.dtype)
