r"""From logits to what the losses need: the log-prob of each sampled token and the entropy of
each next-token distribution.

Shapes: ``logits`` is ``[..., V]`` (``V`` the vocabulary), e.g. ``[B, T, V]``; ``tokens`` is
``[...]``, e.g. ``[B, T]``. What the docstrings say about TRL and verl is true of the versions
pinned in ``peers/pins.toml`` and tested against their code (``tests/test_peers.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validate import as_float_arrays, number

__all__ = ["entropy_from_logits", "token_logprobs"]


def _logsumexp(z: np.ndarray) -> np.ndarray:
    """``log Σ_v exp(z_v)`` over the last axis, shifted by the maximum so that nothing overflows."""
    top = np.max(z, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    return np.log(np.sum(np.exp(z - top), axis=-1)) + top[..., 0]


def token_logprobs(
    logits: npt.ArrayLike, tokens: npt.ArrayLike, temperature: float = 1.0
) -> np.ndarray:
    r"""Log-probability of each sampled token under ``softmax(logits / τ)``.

    $$\log \pi(x_t) = \frac{z_{t,x_t}}{\tau} - \log\sum_{v} e^{z_{t,v}/\tau}$$

    Args:
        logits: ``[..., V]`` unnormalised scores of the next token.
        tokens: ``[...]`` integer ids in ``[0, V)``, the tokens that were sampled.
        temperature: τ > 0; the sampler's temperature, so that the log-probs are those of the
            distribution the tokens were drawn from.

    Returns:
        ``[...]`` log-probs, ≤ 0, in the logits' dtype.

    The log-softmax is never formed for the whole vocabulary: the selected logit minus the
    log-sum-exp, as TRL 1.16.0's ``selective_log_softmax`` computes it (for float32 and float64
    logits; it divides by the temperature first, as here).
    """
    (z,) = as_float_arrays(logits=logits)
    tau = number("temperature", temperature, low=0, above=True)
    idx = np.asarray(tokens)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"tokens must hold integer ids, got dtype {idx.dtype}")
    if z.ndim < 1 or idx.shape != z.shape[:-1]:
        raise ValueError(f"tokens {list(idx.shape)} must be logits {list(z.shape)} without its "
                         "last (vocabulary) axis")
    V = z.shape[-1]  # vocabulary
    if idx.size and (idx.min() < 0 or idx.max() >= V):
        raise ValueError(f"token ids must be in [0, {V}), got {idx.min()} … {idx.max()}")
    if tau != 1.0:
        z = z / np.asarray(tau, z.dtype)
    # z_{t, x_t}: the sampled token's logit
    picked = np.take_along_axis(z, idx[..., None], axis=-1)[..., 0]
    # log π(x_t) = z_{t,x_t} − logsumexp_v z_{t,v}
    return (picked - _logsumexp(z)).astype(z.dtype, copy=False)


def entropy_from_logits(logits: npt.ArrayLike) -> np.ndarray:
    r"""Entropy of each next-token distribution ``softmax(logits)``, in nats.

    $$H_t = -\sum_v \pi_v \log \pi_v,\qquad \log\pi = z - \log\sum_v e^{z_v}$$

    Args:
        logits: ``[..., V]`` unnormalised scores.

    Returns:
        ``[...]`` entropies in ``[0, log V]``, in the logits' dtype.

    Written as TRL 1.16.0's ``entropy_from_logits`` computes it, ``-(exp(logp) · logp).sum(-1)``
    with ``logp = log_softmax(logits)``: every term is ≥ 0, so a nearly deterministic
    distribution gets a small positive entropy. verl 0.9.1's (``verl_F.entropy_from_logits``)
    computes ``logsumexp(z) − Σ softmax(z)·z``, a difference of two numbers as large as the
    logits, so its error is a few ulps of the largest logit (7.6e-6 for 80 in float32): for a
    nearly one-hot row whose entropy is 1.9e-6 it can give 0.0.
    """
    (z,) = as_float_arrays(logits=logits)
    if z.ndim < 1:
        raise ValueError("logits must have a vocabulary axis")
    # log π = z − logsumexp(z)
    logp = z - _logsumexp(z)[..., None]
    p = np.exp(logp)
    # H = −Σ π log π (a token of probability 0 adds 0)
    return -np.sum(np.where(p > 0, p * logp, 0), axis=-1).astype(z.dtype, copy=False)
