r"""The three per-token estimators of a KL divergence from samples (Schulman, "Approximating KL
divergence", 2020).

Tokens are sampled from $q$; $p$ is the other distribution; $\log r = \log p - \log q$.
Each estimator's expectation under $q$ is (or approximates) $\mathrm{KL}(q\,\|\,p)$.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_arrays, check_same_shape

__all__ = ["kl_estimators"]


def kl_estimators(p_logprobs, q_logprobs):
    r"""K1, K2 and K3 estimates of $\mathrm{KL}(q\,\|\,p)$, per token.

    $$k_1 = -\log r,\qquad k_2 = \tfrac12(\log r)^2,\qquad k_3 = (r - 1) - \log r,
      \qquad r = \frac{p(x)}{q(x)},\ x \sim q$$

    - k1: unbiased, high variance, negative for individual tokens.
    - k2: biased (its mean is an f-divergence that matches KL to second order), always ≥ 0.
    - k3: unbiased (because $\mathbb{E}_q[r] = 1$) and always ≥ 0. Its variance is below k1's
      when $p$ is close to $q$; whether it is below k2's depends on the two distributions.

    Args:
        p_logprobs: log-probs of the sampled tokens under ``p``, any shape.
        q_logprobs: log-probs under the sampling distribution ``q``, the same shape.

    Returns:
        ``(k1, k2, k3)``, each shaped like the inputs.

    k3 is computed as ``expm1(log r) - log r``, which is exactly ≥ 0 in floating point, where
    ``exp(log r) - 1 - log r`` loses every digit for tiny ``log r`` and can come out slightly
    negative in float32 (for ``log r = 1e-8`` it gives ``-1e-8``). In RLHF, ``p`` = reference
    model and ``q`` = policy: ``k1 = log π − log π_ref``, the direction of all three libraries.

    The libraries at the pinned versions:

    - verl 0.9.1's ``kl_penalty(logprob, ref_logprob, mode)``: "kl"/"k1" is k1, "abs" is |k1|,
      "mse"/"k2" is k2, "low_var_kl"/"k3" is k3 with the log-ratio clamped to ``[-20, 20]`` and
      the result to ``[-10, 10]``, i.e. ``min(k3, 10)``. A mode with a trailing "+" ("k3+",
      "k1+", "low_var_kl+") keeps that value but takes k2's gradient (a straight-through
      estimator), the reverse-KL gradient.
    - OpenRLHF 0.11.2's ``compute_approx_kl`` (estimators "k1", "k2", "k3") computes in float32
      (``.float()``) and clamps every estimate to ``[-10, 10]`` (k3 also bounds the log-ratio
      before ``exp``); ``unbiased_gradient=True`` keeps the value and takes the gradient of
      ``w·k2``, with ``w = min(π_θ/π_old, 10)`` (1 without ``log_probs_old``).
    - TRL 1.16.0's ``GRPOTrainer`` puts k3 in the loss unclamped, multiplied by the importance
      ratio by default (``use_bias_correction_kl``, see :func:`grpo_policy_loss`); its
      ``RLOOTrainer`` puts k1 in the reward (see :func:`rloo_advantages`).

    This reference applies no clamp.
    """
    p, q = as_float_arrays(p_logprobs=p_logprobs, q_logprobs=q_logprobs)
    check_same_shape(p_logprobs=p, q_logprobs=q)
    # log r = log p − log q
    log_r = p - q
    # k1 = −log r
    k1 = -log_r
    # k2 = ½ (log r)²
    k2 = 0.5 * log_r**2
    # k3 = (r − 1) − log r
    with np.errstate(over="ignore"):
        k3 = np.expm1(log_r) - log_r
    return k1, k2, k3
