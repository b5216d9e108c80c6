r"""Advantage whitening over the response tokens of a batch (verl 0.9.1's ``masked_whiten``), the
last step before PPO's policy loss and the end of REINFORCE++'s advantages."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validate import as_float_arrays, bool_mask, check_same_shape, flag

__all__ = ["masked_whiten"]

_WHITEN_EPS = 1e-8  # verl 0.9.1's masked_whiten: (x − mean) · rsqrt(var + 1e-8)


def _whiten(v: np.ndarray, real: np.ndarray, shift_mean: bool) -> np.ndarray:
    """Whitening over ``real`` in float64, 0 on padding, cast back to ``v``'s dtype."""
    n = np.count_nonzero(real)  # response tokens in the whole batch
    if n == 0:
        return np.zeros_like(v)
    x = v[real].astype(np.float64)
    # mean and unbiased variance over the masked tokens (one token: variance 0)
    mean = x.mean()
    var = x.var(ddof=1) if n > 1 else 0.0
    # (x − mean) / sqrt(var + 1e-8)
    out = np.zeros(v.shape, np.float64)
    out[real] = (x - mean) / np.sqrt(var + _WHITEN_EPS)
    if not shift_mean:
        out[real] += mean  # the scale changes, the mean stays
    return out.astype(v.dtype, copy=False)


def masked_whiten(
    values: npt.ArrayLike, mask: npt.ArrayLike, shift_mean: bool = True
) -> np.ndarray:
    r"""Whiten ``values`` over the tokens where ``mask`` is 1.

    $$\mu = \frac{\sum m\,x}{\sum m},\qquad
      \sigma^2 = \frac{\sum m\,(x-\mu)^2}{\sum m - 1},\qquad
      y = \frac{x - \mu}{\sqrt{\sigma^2 + 10^{-8}}}\ (+\,\mu \text{ if not shift\_mean})$$

    Args:
        values: any shape, e.g. ``[B, T]`` returns or advantages.
        mask: the same shape, 1 on the tokens to whiten.
        shift_mean: ``True`` centres the result at 0; ``False`` adds ``μ`` back, so only the
            scale changes (a bool: a string such as ``"False"`` is refused).

    Returns:
        Shaped like ``values``; 0 wherever ``mask`` is 0. All zeros if the mask is all 0; with
        one masked token the variance is taken as 0 (that token becomes 0, or ``μ``).

    One mean and one variance over every masked token of the batch, not per row. The formula
    is verl 0.9.1's ``masked_whiten`` (``verl/utils/torch_functional.py``: unbiased variance,
    ``rsqrt(var + 1e-8)``), which ``compute_gae_advantage_return`` and REINFORCE++ call. It
    differs at the edges: its ``masked_mean`` divides by ``Σm + 1e-8`` (a relative change of
    1e-8/Σm in the mean); it leaves whitened values on padding (verl's REINFORCE++ multiplies by
    the mask afterwards; here padding is 0); and its ``masked_var`` raises ValueError for a mask
    with no token or with one token (here: zeros, or the variance taken as 0). OpenRLHF 0.11.2
    whitens the advantages of its "gae", "reinforce" and "reinforce_baseline" estimators with
    the biased variance and ``var.clamp(min=1e-8).rsqrt()`` instead. TRL 1.16.0 has no
    ``masked_whiten``; TRL's last PPOTrainer (TRL 1.12.0) has this formula with no epsilon in
    the mean, and leaves whitened values on padding too.
    """
    v, m = as_float_arrays(values=values, mask=mask)
    check_same_shape(values=v, mask=m)
    real = bool_mask(m, "mask")
    return _whiten(v, real, flag("shift_mean", shift_mean))
