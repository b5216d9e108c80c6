r"""The policy losses verl and TRL offer beside PPO's clip: GSPO's sequence-level ratio, CISPO's
clipped importance weight, SAPO's soft gate, and KL-Cov's covariance-selected penalty.

Shapes: ``[B, T]`` log-probs under the policy being trained (``new_logprobs``) and the one that
sampled (``old_logprobs``); ``advantages`` ``[B]`` (one per response) or ``[B, T]``; ``mask``
``[B, T]``, 1 on response tokens and 0 on padding (any layout). Each loss returns a scalar.

What the docstrings say about verl, TRL and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` and tested against their own code (``tests/test_peers.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validate import number, token_arrays
from .grpo import _aggregate, _check_mode, _response_advantages

__all__: list[str] = ["cispo_loss", "gspo_loss", "kl_cov_loss", "sapo_loss"]

# verl 0.9.1 caps GSPO's log s at this before exp (compute_policy_loss_gspo)
GSPO_LOG_RATIO_CAP = 10.0


def _ratio_loss_arrays(
    new_logprobs: npt.ArrayLike,
    old_logprobs: npt.ArrayLike,
    advantages: npt.ArrayLike,
    mask: npt.ArrayLike,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(new, old, advantages, real)`` after the checks: float64 ``[B, T]`` log-probs, the
    advantages as ``[B, 1]`` (one per response) or ``[B, T]``, and the mask as booleans."""
    new, old, real, adv = token_arrays(new_logprobs=new_logprobs, old_logprobs=old_logprobs,
                                       mask=mask, advantages=advantages, apart=("advantages",))
    adv = _response_advantages(adv, new)
    f64 = np.float64
    return new.astype(f64), old.astype(f64), adv.astype(f64), real


def _sequence_log_ratio(log_ratio: np.ndarray, real: np.ndarray) -> np.ndarray:
    r"""``[B, 1]`` GSPO's $\log s_i = \min\big(\frac{1}{|y_i|}\sum_t m_{it}\log\rho_{it},\ 10\big)$,
    the mean log-ratio of each response capped as verl 0.9.1 caps it, from ``[B, T]`` log-ratios
    that are 0 on padding and the ``[B, T]`` boolean mask ``real`` (a row with no token: 0).
    Shared by :func:`gspo_loss` and the demo's GSPO gradient (``rl_ops_numpy/demo/grpo.py``),
    which needs ``s_i`` and the loss returns only its value."""
    n = np.count_nonzero(real, axis=1)[:, None]  # [B, 1] response tokens per row, |y_i|
    # log s_i = (1/|y_i|) Σ_t log ρ_t, capped at 10 (verl)
    return np.minimum(log_ratio.sum(axis=1, keepdims=True) / np.maximum(n, 1), GSPO_LOG_RATIO_CAP)


def gspo_loss(
    new_logprobs: npt.ArrayLike,
    old_logprobs: npt.ArrayLike,
    advantages: npt.ArrayLike,
    mask: npt.ArrayLike,
    *,
    clip_low: float = 3e-4,
    clip_high: float = 4e-4,
) -> float:
    r"""GSPO: PPO's clipped surrogate on one importance ratio per response, the geometric mean of
    its tokens' ratios (GSPO-token form, aggregated "seq-mean-token-mean").

    $$s_i = \Big(\frac{\pi_\theta(y_i)}{\pi_{\text{old}}(y_i)}\Big)^{1/|y_i|}
      = \exp\Big(\frac{1}{|y_i|}\sum_{t} m_{it}\,\log\rho_{it}\Big),\qquad
      s_{it} = \operatorname{sg}[s_i]\cdot
      \frac{\pi_\theta(y_{it})}{\operatorname{sg}[\pi_\theta(y_{it})]}$$

    $$\ell_{it} = \max\big(-\hat A_{it}\,s_{it},\;-\hat A_{it}\operatorname{clip}(s_{it},
      1-\epsilon_{\text{low}}, 1+\epsilon_{\text{high}})\big),\qquad
      \mathcal L = \frac{1}{|\mathcal B|}\sum_{i\in\mathcal B}\frac{1}{|y_i|}
      \sum_t m_{it}\,\ell_{it}$$

    with $\log\rho_{it} = \log\pi_\theta(y_{it}) - \log\pi_{\text{old}}(y_{it})$, $|y_i| =
    \sum_t m_{it}$, $\mathcal B$ the rows with at least one response token, and sg the stop
    gradient. The value of $s_{it}$ is $s_i$ for every token; its gradient is
    $s_i\,\nabla\log\pi_\theta(y_{it})$, so where the clip does not hold
    $\partial\mathcal L/\partial\log\pi_\theta(y_{it}) = -\hat A_{it}\,s_i/(|\mathcal B|\,|y_i|)$:
    every token of a response is weighed by the same $s_i$, not by its own $\rho_{it}$ as in
    GRPO. With one advantage per response this is the gradient of
    $\frac{1}{|\mathcal B|}\sum_i -\hat A_i s_i$ (sequence-level GSPO); the stop gradient lets
    per-token advantages reach their own tokens. This function returns the value; the lesson's
    PyTorch answer carries the gradient, which ``tests/test_peers.py`` compares with the
    libraries'.

    Args:
        new_logprobs: ``[B, T]`` log-probs of the sampled tokens under the current policy.
        old_logprobs: ``[B, T]`` under the policy that sampled them.
        advantages: ``[B]`` one per response (broadcast over its tokens) or ``[B, T]``.
        mask: ``[B, T]``, 1 on response tokens.
        clip_low: ε_low in (0, 1]: ``s``'s floor is ``1 − clip_low``. The GSPO paper's 3e-4.
        clip_high: ε_high > 0: ``s``'s ceiling is ``1 + clip_high``. The GSPO paper's 4e-4.

    Returns:
        The loss as a Python float (0.0 for a batch with no response token).

    Why the clip range is ~1e-4 and not 0.2: ``log s`` is a mean of ``|y|`` per-token
    log-ratios, so their noise shrinks by ``√|y|`` and only a drift shared by the whole
    response moves ``s``; ``s`` leaves ``[0.8, 1.2]`` only if the average token's probability
    moved by 20 %, which a PPO step never does, so a range of 0.2 would clip nothing.

    ``log s`` is capped at 10 before ``exp`` (``s ≤ e¹⁰``), as verl 0.9.1 does: it changes the
    value only for a response whose mean log-ratio is above 10, where a negative advantage
    would otherwise give ``−Â·e^{mean}``. Padding is set to 0 before the sums, so whatever it
    holds is ignored.

    verl 0.9.1's ``compute_policy_loss_gspo`` (``loss_mode: gspo``) computes exactly this with
    ``loss_agg_mode="seq-mean-token-mean"``, the stop gradient written
    ``log_prob − log_prob.detach() + sg[log s]``, except that it divides each row by
    ``|y_i| + 1e-8`` (``agg_loss``) and multiplies the unmasked log-ratio by the mask (NaN or inf
    on padding propagates). Its clip range is the actor's ``clip_ratio_low`` /
    ``clip_ratio_high`` (0.2 each by default: set them to 3e-4 / 4e-4), and its trainer passes
    the actor's ``loss_agg_mode`` (default "token-mean", which weighs each response by its
    length) rather than the function's own default. TRL 1.16.0's ``GRPOTrainer._compute_loss``
    with ``importance_sampling_level="sequence"`` and ``loss_type="grpo"`` computes one ratio
    ``exp(mean log ρ)`` per response ``[B, 1]`` with no stop gradient and no cap (``epsilon``,
    ``epsilon_high``, 0.2 and ``epsilon`` by default), and counts a row with no token as a 0 in
    the mean over ``B``. With one advantage per response its value and gradient are these
    (empty rows aside); with ``[B, T]`` advantages each token's gradient is the mean over its
    response of what it is here (every token gets the response's mean advantage). Its other
    loss types sum tokens (it warns), and its default ``loss_type`` is "dapo". OpenRLHF
    0.11.2's ``PolicyLoss`` with ``policy_loss_type="gspo"`` (``--actor.policy_loss_type``,
    default "ppo") is TRL's form (one ratio per response, no stop gradient, no cap) with the
    per-sample mean over rows with tokens, as here; with ``--algo.advantage.is_correction_level``
    set it takes the ratio against the rollout engine's log-probs instead of the old policy's.
    """
    clip_low = number("clip_low", clip_low, low=0, high=1, above=True)
    clip_high = number("clip_high", clip_high, low=0, above=True)
    new, old, adv, real = _ratio_loss_arrays(new_logprobs, old_logprobs, advantages, mask)
    with np.errstate(invalid="ignore"):  # whatever padding holds is dropped here
        # log ρ_t = log π_θ − log π_old, 0 on padding
        log_ratio = np.where(real, new - old, 0.0)  # [B, T]
    # s_{i,t} = sg[s_i] · π_θ/sg[π_θ]: its value is s_i on every token
    s = np.exp(_sequence_log_ratio(log_ratio, real))  # [B, 1]
    # ℓ = max(−Â·s, −Â·clip(s, 1 − ε_low, 1 + ε_high))
    per_token = np.maximum(-adv * s, -adv * np.clip(s, 1 - clip_low, 1 + clip_high))
    # (1/|B|) Σ_i (1/|y_i|) Σ_t ℓ
    return _aggregate(np.broadcast_to(per_token, new.shape), real, "seq-mean-token-mean", None)


def cispo_loss(
    new_logprobs: npt.ArrayLike,
    old_logprobs: npt.ArrayLike,
    advantages: npt.ArrayLike,
    mask: npt.ArrayLike,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.28,
    loss_agg_mode: str = "token-mean",
) -> float:
    r"""CISPO: REINFORCE weighted by the clipped importance ratio, the weight held constant, so
    that a clipped token keeps its gradient.

    $$\ell_t = -\operatorname{sg}\big[\operatorname{clip}(\rho_t,\,1-\epsilon_{\text{low}},\,
      1+\epsilon_{\text{high}})\big]\;\hat A_t\,\log\pi_\theta(y_t),\qquad
      \rho_t = e^{\log\pi_\theta(y_t) - \log\pi_{\text{old}}(y_t)}$$

    aggregated by ``loss_agg_mode`` (:func:`aggregate_loss`). Its gradient is
    $-\hat w_t\,\hat A_t\,\nabla\log\pi_\theta(y_t)$ with $\hat w_t$ the clipped ratio: where
    the clip does not hold, PPO's own gradient ($\nabla\rho_t = \rho_t\nabla\log\pi_\theta$);
    where PPO's clip holds (the ratio left the range in the direction the advantage pushes),
    PPO's gradient is 0 and CISPO's is the clip bound times $-\hat A_t\nabla\log\pi_\theta$;
    where the ratio left the range the other way, PPO keeps the full $\rho_t$ and CISPO caps it.
    Rare tokens whose probability jumps (often the "reflective"
    tokens of a reasoning trace, the MiniMax-M1 report argues) keep contributing, with a bounded
    weight.

    Args:
        new_logprobs: ``[B, T]`` log-probs of the sampled tokens under the current policy.
        old_logprobs: ``[B, T]`` under the policy that sampled them.
        advantages: ``[B]`` one per response (broadcast over its tokens) or ``[B, T]``.
        mask: ``[B, T]``, 1 on response tokens.
        clip_low: ε_low in (0, 1]: the weight's floor is ``1 − clip_low``; 1 removes the floor
            (TRL 1.16.0, and the MiniMax-M1 report, clip only from above).
        clip_high: ε_high > 0: the weight's ceiling is ``1 + clip_high``.
        loss_agg_mode: how :func:`aggregate_loss` reduces ``ℓ`` (one of its five modes).

    Returns:
        The loss as a Python float (0.0 for a batch with no response token). Its value is not
        an objective to read (it is ``−Â·log π``-sized, not ``−Â·ρ``-sized): only its gradient
        matters.

    Padding is set to 0 before ``exp``, and the log-probs multiplied are those of response
    tokens only, so whatever padding holds is ignored.

    verl 0.9.1's ``compute_policy_loss_cispo`` (``loss_mode: cispo``) is this formula with the
    actor's ``clip_ratio_low`` / ``clip_ratio_high`` (0.2 each by default) and
    ``loss_agg_mode``; it clamps the log-ratio to ``[−20, 20]`` before ``exp``, which changes
    nothing unless ``1 − clip_low < e⁻²⁰`` or ``1 + clip_high > e²⁰``. A floor of ``1 − clip_low``
    raises the weight of a token whose ratio fell below it. TRL 1.16.0's
    ``GRPOTrainer._compute_loss`` with ``loss_type="cispo"`` clips from above only, at
    ``epsilon_high`` itself, not at ``1 + epsilon_high``: its weight is ``min(ρ, epsilon_high)``,
    which is this function with ``clip_low=1`` and ``clip_high=epsilon_high − 1``, and it
    aggregates over the tokens of the generation batch (token-mean on one process). Its
    ``epsilon_high`` defaults to ``epsilon`` (0.2): left unset, every weight is at most 0.2;
    its docstring recommends 5.0. OpenRLHF 0.11.2 has no CISPO (``--actor.policy_loss_type``
    is "ppo" or "gspo").
    """
    clip_low = number("clip_low", clip_low, low=0, high=1, above=True)
    clip_high = number("clip_high", clip_high, low=0, above=True)
    loss_agg_mode = _check_mode(loss_agg_mode, "loss_agg_mode")
    new, old, adv, real = _ratio_loss_arrays(new_logprobs, old_logprobs, advantages, mask)
    with np.errstate(over="ignore", invalid="ignore"):  # padding, and ρ = inf, are dropped/clipped
        # log ρ = log π_θ − log π_old, 0 on padding
        log_ratio = np.where(real, new - old, 0.0)  # [B, T]
        # ρ = exp(log ρ)
        ratio = np.exp(log_ratio)
    # ŵ = sg[clip(ρ, 1 − ε_low, 1 + ε_high)]: a number, no gradient flows through it
    weight = np.clip(ratio, 1 - clip_low, 1 + clip_high)
    # ℓ = −ŵ·Â·log π_θ, on response tokens
    per_token = -weight * adv * np.where(real, new, 0.0)
    return _aggregate(per_token, real, loss_agg_mode, None)


# ---- SAPO and KL-Cov ----------------------------------------------------------------------------


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1 / (1 + e^{−x}) without overflow for any x."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def sapo_loss(
    new_logprobs: npt.ArrayLike,
    old_logprobs: npt.ArrayLike,
    advantages: npt.ArrayLike,
    mask: npt.ArrayLike,
    *,
    tau_pos: float = 1.0,
    tau_neg: float = 1.05,
) -> float:
    r"""SAPO's policy loss: a soft sigmoid gate on the ratio in place of PPO's hard clip.

    $$\ell_{bt} = -\hat A_{bt}\,f_{\tau_{bt}}(\rho_{bt}),\qquad
      f_\tau(\rho) = \frac{4}{\tau}\,\sigma\big(\tau(\rho - 1)\big),\qquad
      \tau_{bt} = \begin{cases}\tau_{\text{pos}} & \hat A_{bt} > 0\\
      \tau_{\text{neg}} & \hat A_{bt} \le 0\end{cases}$$

    $$\rho = e^{\operatorname{clip}(\log\pi_\theta - \log\pi_{\text{old}},\,-20,\,20)},\qquad
      \mathcal L = \frac{1}{|\mathcal B|}\sum_{b\in\mathcal B}\frac{1}{n_b}\sum_t m_{bt}\,
      \ell_{bt}$$

    (``"seq-mean-token-mean"``: $n_b = \sum_t m_{bt}$, $\mathcal B$ the rows with $n_b > 0$.)

    The gradient is what the gate is for. Per token,
    $\partial\ell/\partial\log\pi_\theta = -\hat A\,\rho\,4\sigma(1-\sigma)
    = -\hat A\,\rho\,\operatorname{sech}^2\!\big(\tau(\rho-1)/2\big)$: at $\rho = 1$ it is
    $-\hat A$ for every τ (the $4/\tau$ makes the slope there 1, so on policy SAPO's gradient is
    the plain policy gradient), and it decays smoothly as ρ leaves 1, where PPO's clip drops it to
    0 at $1 \pm \epsilon$. A larger τ narrows the gate; $\tau_{\text{neg}} > \tau_{\text{pos}}$
    makes the gradient of negative-advantage tokens decay faster. The value is not PPO's: on
    policy it is $-2\hat A/\tau$ per token.

    Args:
        new_logprobs: ``[B, T]`` log-probs of the sampled tokens under the current policy.
        old_logprobs: ``[B, T]`` under the policy that sampled them.
        advantages: ``[B]`` one per response, broadcast over its tokens, or ``[B, T]``.
        mask: ``[B, T]``, 1 on response tokens.
        tau_pos: τ > 0 of tokens with ``Â > 0``.
        tau_neg: τ > 0 of tokens with ``Â ≤ 0``.

    Returns:
        The loss as a Python float, computed in float64; 0.0 for a batch with no response token.
        Padding is ignored whatever it holds.

    verl 0.9.1's ``compute_policy_loss_sapo`` (``verl/trainer/ppo/core_algos.py``) is this
    function: ``tau_pos`` / ``tau_neg`` are the actor config's (1.0 and 1.05 in
    ``actor.yaml``), it clamps the log-ratio to ``[−20, 20]`` before ``exp``, and it always
    aggregates with ``"seq-mean-token-mean"``, whatever ``loss_agg_mode`` it is given (the
    actor's, "token-mean" by default, is ignored). It divides each row by ``n_b + 1e-8``, and a
    batch with no response token gives NaN (0/0). TRL 1.16.0's ``GRPOTrainer._compute_loss``
    with ``loss_type="sapo"`` computes the same gate (``sapo_temperature_pos = 1.0``,
    ``sapo_temperature_neg = 1.05``), with three differences: it does not clamp the log-ratio;
    it makes the temperatures with ``torch.where`` of two Python floats, so they are float32
    even for float64 log-probs (1.05 becomes 1.0499999523); and its mean over rows counts a
    row with no response token as a 0 (``mask.sum(-1).clamp(min=1)``, then ``.mean()`` over
    all ``B`` rows). Its ratio is per sequence when ``importance_sampling_level="sequence"``
    (default "token"). OpenRLHF 0.11.2 has no SAPO (``--actor.policy_loss_type`` is "ppo" or
    "gspo").
    """
    tau_pos = number("tau_pos", tau_pos, low=0, above=True)
    tau_neg = number("tau_neg", tau_neg, low=0, above=True)
    new, old, adv, real = _ratio_loss_arrays(new_logprobs, old_logprobs, advantages, mask)
    adv = np.broadcast_to(adv, new.shape)  # [B, T]
    with np.errstate(invalid="ignore"):  # whatever padding holds is dropped here
        # log ρ = clip(log π_θ − log π_old, −20, 20), 0 on padding
        log_ratio = np.where(real, np.clip(new - old, -20.0, 20.0), 0.0)
    # ρ = e^{log ρ}
    ratio = np.exp(log_ratio)
    # τ = τ_pos where Â > 0, τ_neg elsewhere
    tau = np.where(adv > 0, tau_pos, tau_neg)
    # f_τ(ρ) = σ(τ(ρ − 1))·4/τ
    gate = _sigmoid(tau * (ratio - 1.0)) * (4.0 / tau)
    # ℓ = −Â·f_τ(ρ), the mean over each response's tokens, then over responses
    return _aggregate(-adv * gate, real, "seq-mean-token-mean", None)


def kl_cov_loss(
    new_logprobs: npt.ArrayLike,
    old_logprobs: npt.ArrayLike,
    advantages: npt.ArrayLike,
    mask: npt.ArrayLike,
    *,
    k_ratio: float = 2e-4,
    kl_coef: float = 1.0,
    loss_agg_mode: str = "token-mean",
) -> float:
    r"""KL-Cov: the unclipped policy-gradient loss, with a KL penalty on the few tokens whose
    advantage and log-prob covary most.

    $$C_{bt} = \big(\hat A_{bt} - \bar A\big)\big(\log\pi_\theta(y_{bt}) - \overline{\log\pi}\big),
      \qquad \bar A = \frac{\sum m\,\hat A}{\sum m},\quad
      \overline{\log\pi} = \frac{\sum m \log\pi_\theta}{\sum m}$$

    $$\ell_{bt} = -\hat A_{bt}\,\rho_{bt} + \mathbb 1[(b,t)\in S]\;c\,\lvert\log\rho_{bt}\rvert,
      \qquad S = \operatorname{top-}k\ \text{of}\ C\ \text{over the response tokens},\quad
      k = \max\big(1, \lfloor N\cdot k_{\text{ratio}} \rfloor\big)$$

    with $N = \sum m$ the response tokens, $\rho = e^{\log\pi_\theta - \log\pi_{\text{old}}}$ and
    $c$ ``kl_coef``; the loss is ``aggregate_loss(ℓ, mask, loss_agg_mode)``.

    Why these tokens (Cui et al., 2025): under a policy-gradient step on a softmax policy, the
    entropy changes by about $-\eta\,\operatorname{Cov}(\log\pi, \hat A)$ (the natural-gradient
    form; plain gradient weighs it by π). The product $C_{bt}$ is each token's share of that
    covariance: large for a likely token with a high advantage and for an unlikely token with a
    low one, the updates that sharpen the distribution. Penalising $|\log\rho|$ on those few
    tokens holds them near $\pi_{\text{old}}$, which keeps the entropy from collapsing; the
    other tokens get the plain $-\hat A\rho$, with no clip. The penalty's gradient is
    $c\,\operatorname{sign}(\log\rho)$: 0 while a token has not moved, then a pull of constant
    size back toward $\pi_{\text{old}}$. The selection carries no gradient (``log π`` is
    detached in $C$).

    Args:
        new_logprobs: ``[B, T]`` log-probs of the sampled tokens under the current policy; the
            covariance uses these, not the old ones.
        old_logprobs: ``[B, T]`` under the policy that sampled them.
        advantages: ``[B]`` one per response, broadcast over its tokens, or ``[B, T]``. The
            means are over response tokens, so a ``[B]`` advantage counts once per token.
        mask: ``[B, T]``, 1 on response tokens.
        k_ratio: fraction in (0, 1] of the response tokens penalised, rounded down (Python's
            ``int(N * k_ratio)``), at least one.
        kl_coef: c ≥ 0.
        loss_agg_mode: one of :func:`aggregate_loss`'s five modes.

    Returns:
        The loss as a Python float, computed in float64; 0.0 for a batch with no response token.
        Tokens of equal covariance at the cut are taken in row-major order here; ``torch.topk``
        leaves the order of ties unspecified. Ties are not rare: with exactly two response
        tokens the two terms are always equal, and with ``[B]`` advantages the tokens of a
        batch's only response all have ``C = 0``; rounding then decides which token a library
        penalises.

    verl 0.9.1's ``compute_policy_loss_kl_cov`` (``verl/trainer/ppo/core_algos.py``) is this
    function, on the tokens of one call (in its actor, one micro-batch): ``k_ratio`` is
    ``policy_loss.kl_cov_ratio`` (0.0002 in ``actor.yaml``, so one token per micro-batch of
    fewer than 10,000 tokens) and ``kl_coef`` is ``policy_loss.ppo_kl_coef`` (0.1 in
    ``actor.yaml``; 1.0 is only the function's fallback when the config holds None);
    ``loss_agg_mode`` is the actor's (default "token-mean"). It does not clamp the log-ratio,
    and a batch with no response token gives NaN in "token-mean" (0/0). TRL 1.16.0 and
    OpenRLHF 0.11.2 have no KL-Cov.
    """
    k_ratio = number("k_ratio", k_ratio, low=0, high=1, above=True)
    kl_coef = number("kl_coef", kl_coef, low=0)
    loss_agg_mode = _check_mode(loss_agg_mode, "loss_agg_mode")
    new, old, adv, real = _ratio_loss_arrays(new_logprobs, old_logprobs, advantages, mask)
    adv = np.broadcast_to(adv, new.shape)  # [B, T]
    with np.errstate(invalid="ignore"):  # whatever padding holds is dropped here
        # log ρ = log π_θ − log π_old, 0 on padding
        log_ratio = np.where(real, new - old, 0.0)
    # ℓ = −Â·ρ, no clip
    loss = -adv * np.exp(log_ratio)  # [B, T]
    valid = np.flatnonzero(real)  # [N] flat positions of the response tokens, row-major
    if valid.size:
        a, logp = adv.ravel()[valid], new.ravel()[valid]  # [N] each
        # C = (Â − mean Â)(log π − mean log π), means over the response tokens
        cov = (a - a.mean()) * (logp - logp.mean())
        # k = max(1, ⌊N·k_ratio⌋)
        k = max(1, int(valid.size * k_ratio))
        # S: the k largest C (ties in row-major order)
        chosen = valid[np.argsort(-cov, kind="stable")[:k]]
        # + c·|log ρ| on S
        loss.ravel()[chosen] += kl_coef * np.abs(log_ratio.ravel()[chosen])
    return _aggregate(loss, real, loss_agg_mode, None)
