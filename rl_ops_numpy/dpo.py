r"""Direct Preference Optimization (DPO) loss."""

from __future__ import annotations

import numpy as np

from ._validate import as_float_arrays, check_same_shape, number

__all__ = ["dpo_loss"]


def dpo_loss(log_p_w, log_p_l, ref_log_p_w, ref_log_p_l, beta: float = 0.1):
    r"""Per-pair DPO loss.

    $$\mathcal{L} = -\log\sigma\Big(\beta\big[(\log\pi_\theta(y_w) - \log\pi_{\text{ref}}(y_w))
      - (\log\pi_\theta(y_l) - \log\pi_{\text{ref}}(y_l))\big]\Big)
      = \log\big(1 + e^{-z}\big)$$

    Args:
        log_p_w, log_p_l: sequence log-probs of the chosen (w) and rejected (l) responses under
            the policy, any shape.
        ref_log_p_w, ref_log_p_l: the same under the frozen reference model.
        beta: β > 0.

    Returns:
        The loss of each pair, shaped like the inputs. ``ln 2`` where the margin is 0.

    ``-log σ(z)`` is computed as ``logaddexp(0, -z)`` (softplus), exact and finite for any
    finite ``z``: at ``z = -1000`` it is 1000, where ``-log(sigmoid(z))`` is ``inf``. TRL 1.16.0's
    default DPO loss (``loss_type=["sigmoid"]``, β = 0.1) is this formula, computed with
    ``-F.logsigmoid``; OpenRLHF 0.11.2's ``DPOLoss`` is the same with optional label smoothing
    (0 by default) and an IPO variant. Both return the batch mean; this returns each pair's
    loss.
    """
    beta = number("beta", beta, low=0, above=True)
    w, lo, rw, rl = as_float_arrays(
        log_p_w=log_p_w, log_p_l=log_p_l, ref_log_p_w=ref_log_p_w, ref_log_p_l=ref_log_p_l
    )
    check_same_shape(log_p_w=w, log_p_l=lo, ref_log_p_w=rw, ref_log_p_l=rl)
    # z = β[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))]
    z = beta * ((w - rw) - (lo - rl))
    # −log σ(z) = log(1 + e^{−z})
    return np.logaddexp(np.zeros((), z.dtype), -z)
