r"""From logits to what the losses need: the log-prob of each sampled token, the entropy of each
next-token distribution, and the mask of the high-entropy ("forking") tokens.

Shapes: ``logits`` is ``[..., V]`` (``V`` the vocabulary), e.g. ``[B, T, V]``; ``ids`` is
``[...]``, e.g. ``[B, T]``, aligned with the logits: ``logits[b, t]`` is the distribution that
``ids[b, t]`` was drawn from. A causal model's logits at position ``t`` predict the token at
``t + 1``, so from a model's full-sequence logits the aligned pair is
``logits[:, :-1]`` and ``ids[:, 1:]`` (the libraries shift the ids: verl 0.9.1 and OpenRLHF
0.11.2 with ``torch.roll(ids, -1)``, TRL 1.16.0's fused LM head with ``labels[:, 1:]``).

What the docstrings say about TRL, verl and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` and tested against their code (``tests/test_peers.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validate import as_float_arrays, bool_mask, check_ndim, check_same_shape, number

__all__ = ["high_entropy_mask", "token_entropy", "token_logprobs"]


def _logsumexp(z: np.ndarray) -> np.ndarray:
    """``log Σ_v exp(z_v)`` over the last axis, shifted by the maximum so that nothing overflows."""
    top = np.max(z, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    return np.log(np.sum(np.exp(z - top), axis=-1)) + top[..., 0]


def _scaled_logits(logits: npt.ArrayLike, temperature: float) -> tuple[np.ndarray, np.dtype]:
    """``logits / τ`` in float64, and the logits' own float dtype (that of the result)."""
    (z,) = as_float_arrays(logits=logits)
    tau = number("temperature", temperature, low=0, above=True)
    if z.ndim < 1 or z.shape[-1] == 0:
        raise ValueError(f"logits must be [..., V] with a vocabulary axis V ≥ 1, got shape "
                         f"{list(z.shape)}")
    return z.astype(np.float64) / tau, z.dtype


def token_logprobs(
    logits: npt.ArrayLike, ids: npt.ArrayLike, *, temperature: float = 1.0
) -> np.ndarray:
    r"""Log-probability of each sampled token under ``softmax(logits / τ)``.

    $$\log \pi_\tau(y_t) = \frac{z_{t,y_t}}{\tau} - \log\sum_{v} e^{z_{t,v}/\tau}$$

    Args:
        logits: ``[..., V]`` unnormalised scores of the next token, e.g. ``[B, T, V]``.
        ids: ``[...]`` integer token ids in ``[0, V)``, e.g. ``[B, T]``: the tokens that were
            sampled from these logits (aligned: for a causal model's full-sequence output,
            ``logits[:, :-1]`` with ``ids[:, 1:]``).
        temperature: τ > 0, keyword only: the sampler's temperature, so that the log-probs are
            those of the distribution the tokens were drawn from.

    Returns:
        ``[...]`` log-probs, ≤ 0, in the logits' dtype (computed in float64).

    The log-softmax is never formed for the whole vocabulary: the selected logit minus the
    log-sum-exp, as TRL 1.16.0's ``selective_log_softmax(logits, index, temperature)``
    (``trl/trainer/utils.py``) computes it for float32 and float64 logits, after dividing by
    the temperature. verl 0.9.1 divides the logits by the rollout temperature in its engine
    (``_scale_logits_by_temperature``) and calls ``logprobs_from_logits`` (the same formula on
    CPU); OpenRLHF 0.11.2's ``log_probs_from_logits(logits, labels, temperature)`` divides in
    place. All three agree with this function on the parity vectors.
    """
    z, dtype = _scaled_logits(logits, temperature)  # [..., V], z / τ
    idx = np.asarray(ids)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"ids must hold integer token ids, got dtype {idx.dtype}")
    if idx.shape != z.shape[:-1]:
        raise ValueError(f"ids {list(idx.shape)} must be logits {list(z.shape)} without its "
                         "last (vocabulary) axis")
    V = z.shape[-1]  # vocabulary
    if idx.size and (idx.min() < 0 or idx.max() >= V):
        raise ValueError(f"token ids must be in [0, {V}), got {idx.min()} … {idx.max()}")
    # z_{t, y_t} / τ: the sampled token's scaled logit
    picked = np.take_along_axis(z, idx[..., None].astype(np.intp), axis=-1)[..., 0]  # [...]
    # log π_τ(y_t) = z_{t,y_t}/τ − logsumexp_v z_{t,v}/τ
    return (picked - _logsumexp(z)).astype(dtype)


def token_entropy(logits: npt.ArrayLike, *, temperature: float = 1.0) -> np.ndarray:
    r"""Entropy of each next-token distribution ``softmax(logits / τ)``, in nats.

    $$H_t = -\sum_v \pi_\tau(v)\,\log \pi_\tau(v),\qquad
      \log\pi_\tau = \frac{z_t}{\tau} - \log\sum_v e^{z_{t,v}/\tau}$$

    Args:
        logits: ``[..., V]`` unnormalised scores, e.g. ``[B, T, V]``.
        temperature: τ > 0, keyword only: the sampler's temperature.

    Returns:
        ``[...]`` entropies in ``[0, log V]``, in the logits' dtype (computed in float64).

    The exact entropy of the whole distribution at each position, from the logits; not the
    mean of ``−log π(y_t)`` over the sampled tokens, which is a one-sample estimate of it (right
    on average only if the tokens came from this very distribution) whose expected gradient is
    zero (``E_{y∼π}[∇ log π(y)] = 0``): as an entropy bonus it would do nothing.

    Written as TRL 1.16.0's ``entropy_from_logits(logits / τ)`` computes it (``trl/trainer/
    utils.py``; its ``selective_log_softmax_and_entropy(..., temperature)`` divides first, as
    here), ``-(exp(logp) · logp).sum(-1)`` with ``logp = log_softmax``: every term is ≥ 0, so
    a nearly deterministic distribution gets a small positive entropy. verl 0.9.1's
    ``entropy_from_logits`` (``verl/utils/torch_functional.py``) and OpenRLHF 0.11.2's
    ``compute_entropy`` compute ``logsumexp(z) − Σ softmax(z)·z``, a difference of two numbers
    as large as the logits, so their error is a few ulps of the largest logit (7.6e-6 for 80 in
    float32): for a nearly one-hot row whose entropy is 1.9e-6 they can give 0.0.

    Rows that are not plain finite numbers: a NaN logit makes its row's entropy NaN (as it
    makes its log-probs NaN, here and in ``torch.log_softmax``), never a confident 0. A −∞
    logit is a token of probability 0: it adds nothing, and the row's entropy is that of its
    other tokens, as ``torch.distributions.Categorical(logits=…).entropy()`` gives it; the
    PyTorch formula above, ``-(logp.exp() * logp).sum(-1)``, gives NaN there (``0 · (−∞)``).
    A +∞ logit, or a row of −∞ only, defines no distribution (∞/∞, 0/0): NaN, as
    ``torch.log_softmax`` gives, where ``Categorical`` refuses such logits (ValueError).
    """
    z, dtype = _scaled_logits(logits, temperature)  # [..., V], z / τ
    # log π = z/τ − logsumexp(z/τ)
    logp = z - _logsumexp(z)[..., None]  # [..., V]
    p = np.exp(logp)
    # H = −Σ π log π: a token of probability 0 adds 0 (not 0·(−∞)); a NaN π stays NaN
    return (-np.sum(p * np.where(p == 0, 0.0, logp), axis=-1)).astype(dtype)


def high_entropy_mask(
    entropies: npt.ArrayLike, mask: npt.ArrayLike, threshold: float
) -> np.ndarray:
    r"""The tokens whose entropy is at or above the ``threshold``-quantile of the batch's
    response tokens: the high-entropy "forking" tokens (Wang et al., 2025).

    $$c = Q_{\text{threshold}}\big(\{H_{b,t} : m_{b,t} = 1\}\big),\qquad
      M_{b,t} = m_{b,t} \wedge \big(H_{b,t} \ge c\big)$$

    ``Q_q`` is the linearly interpolated quantile (``torch.quantile``'s default, NumPy's
    ``"linear"``): with the ``n`` values sorted, ``x_{(k)} + f\,(x_{(k+1)} − x_{(k)})`` where
    ``q (n − 1) = k + f``. One cut for the whole batch, not one per sequence.

    Args:
        entropies: ``[B, T]`` per-token entropies (:func:`token_entropy`); ≥ 0 on response
            tokens, anything on padding.
        mask: ``[B, T]`` 0/1, 1 on response tokens.
        threshold: the quantile level in ``[0, 1]``. TRL 1.16.0 passes ``1 −
            top_entropy_quantile``: ``top_entropy_quantile = 0.2`` (the paper's ρ) gives 0.8,
            so about the top 20 % of the tokens are kept; ties and the interpolation keep at
            least that many (every token equal to the cut is kept), 1.0 keeps the maximum (and
            its ties), 0.0 every response token.

    Returns:
        ``[B, T]`` bool, never True on padding; all False when the mask is empty.

    Equals TRL 1.16.0's ``GRPOTrainer.get_high_entropy_mask(entropies, mask, threshold)``
    (``trl/trainer/grpo_trainer.py``) in one process. With several, TRL gathers the response
    tokens' entropies of every process first, so the cut is the quantile of the global batch
    (of one micro-batch per process). TRL takes the quantile in float32 (``.float()``), here
    in float64: for float64 entropies a token within a float32 rounding of the cut could
    differ. In ``GRPOTrainer._compute_loss`` (``top_entropy_quantile < 1.0``) the mask
    multiplies the per-token policy loss, before the KL term is added (the KL still acts on
    every token) and before the aggregation, whose denominator still counts every response
    token. verl 0.9.1 and OpenRLHF 0.11.2 have no such mask.
    """
    h, m = as_float_arrays(entropies=entropies, mask=mask)
    check_same_shape(entropies=h, mask=m)
    check_ndim(2, entropies=h)
    real = bool_mask(m, "mask")  # [B, T]
    q = number("threshold", threshold, low=0.0, high=1.0)
    valid = h[real].astype(np.float64)  # [n], the response tokens' entropies
    if valid.size == 0:
        return np.zeros(h.shape, dtype=bool)
    if not (np.all(np.isfinite(valid)) and valid.min() >= 0):
        bad = valid[~(np.isfinite(valid) & (valid >= 0))][0].item()
        raise ValueError(f"entropies must be finite and ≥ 0 on response tokens, found {bad!r}")
    # c = Q_q(H over the response tokens), linear interpolation
    cut = np.quantile(valid, q, method="linear")
    # M = m ∧ (H ≥ c): every token at the cut is kept
    return real & (h.astype(np.float64) >= cut)
