r"""Token-level reward shaping: the sequence-level reward-model score plus a per-token KL
penalty. What the docstring says about verl and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` and tested against their code (``tests/test_peers.py``)."""

from __future__ import annotations

import numpy as np

from ._validate import as_float_arrays, bool_mask, check_ndim, check_same_shape, number

__all__ = ["last_token_index", "shape_token_rewards"]


def last_token_index(response_mask) -> np.ndarray:
    r"""Index of the last response token of each row: $\max\{t : m_{bt} = 1\}$.

    Args:
        response_mask: ``[B, T]`` of 0/1 (booleans, integers or floats).

    Returns:
        ``[B]`` int64 indices; -1 for a row with no response token.

    ValueError for a mask that is not ``[B, T]`` or holds anything but 0 and 1 (0.5, NaN).
    """
    (m,) = as_float_arrays(response_mask=response_mask)  # a mask keeps its own dtype
    check_ndim(2, response_mask=m)
    m = bool_mask(m, "response_mask")
    B, T = m.shape  # batch, response length
    if T == 0:
        return np.full(B, -1, np.int64)
    last = T - 1 - np.argmax(m[:, ::-1], axis=1)
    return np.where(m.any(axis=1), last, -1).astype(np.int64)


def shape_token_rewards(rm_score, logprobs, ref_logprobs, response_mask, kl_coef: float = 0.05):
    r"""Per-token rewards for PPO: a KL penalty on every response token, plus the reward model's
    score on the last one.

    $$r_{bt} = m_{bt}\Big(-\beta\,(\log\pi(a_t) - \log\pi_{\text{ref}}(a_t))
      + [t = t^{\text{last}}_b]\; R_b\Big)$$

    Args:
        rm_score: ``[B]`` reward-model score of each whole response.
        logprobs: ``[B, T]`` log-probs of the sampled tokens under the policy.
        ref_logprobs: ``[B, T]`` log-probs under the frozen reference model.
        response_mask: ``[B, T]``, 1 on response tokens.
        kl_coef: β ≥ 0.

    Returns:
        ``[B, T]`` token rewards, 0 outside the response. A row with no response token gets no
        score and is all zeros.

    The score goes on the last response token of each row whatever the padding: the source
    material used ``response_mask.sum(-1) - 1``, the response length minus one, which is the last
    index only when the response starts at position 0; with left padding, holes or a prompt in
    front it puts the score on another token. The penalty is the k1 estimate
    ``log π − log π_ref`` (see :func:`kl_estimators`).

    verl 0.9.1's ``apply_kl_penalty`` (default ``kl_penalty="kl"``, k1) computes
    ``token_level_scores − β·k1·mask``, with the score placed by its reward manager at the length
    minus one (``reward_tensor[i, valid_response_length - 1]``, right padding assumed): the same
    as here on right-padded rows. OpenRLHF 0.11.2's ``compute_reward`` finds the last token as
    here (argmax of the flipped mask) but does not mask the penalty, so padding holds ``−β·kl``
    (0 here), and a row with no response token gets its score on the last position (no score
    here); its KL comes from ``compute_approx_kl``, k1 by default, clamped to ``[-10, 10]``.
    TRL's last PPOTrainer (TRL 1.12.0) puts the penalty (k1 by default, β = 0.05) on the response
    tokens and the score one position past the last response token (``sequence_lengths + 1``;
    the last position when the response fills the row), where its critic also has a value.
    """
    rm, lp, ref, m = as_float_arrays(
        rm_score=rm_score, logprobs=logprobs, ref_logprobs=ref_logprobs, response_mask=response_mask
    )
    check_same_shape(logprobs=lp, ref_logprobs=ref, response_mask=m)
    check_ndim(2, logprobs=lp)
    check_ndim(1, shape="[B]", rm_score=rm)
    if rm.shape[0] != lp.shape[0]:
        raise ValueError(
            f"shapes disagree: rm_score [{rm.shape[0]}] needs one score per row of "
            f"logprobs [{lp.shape[0]}, {lp.shape[1]}]"
        )
    real = bool_mask(m, "response_mask")
    kl_coef = number("kl_coef", kl_coef, low=0)
    # −β (log π − log π_ref) on response tokens
    rewards = np.where(real, -kl_coef * (lp - ref), 0).astype(lp.dtype)
    last = last_token_index(real)
    rows = np.nonzero(last >= 0)[0]
    # + R on the last response token
    rewards[rows, last[rows]] += rm[rows]
    return rewards
