r"""Direct Preference Optimization (DPO) and the losses after it: IPO, robust DPO, SimPO, ORPO's
odds ratio, KTO, APO, and every other loss type of TRL's DPO trainer (:func:`preference_loss`).

Every function takes sequence log-probs, ``[N]`` floats (one per response: the sum of its token
log-probs, or their mean where the loss says so), and returns the loss of each example, shaped
like its inputs; the libraries return the batch mean. The log-sigmoid is ``-logaddexp(0, -z)``
throughout, exact and finite for any finite ``z``.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_float_arrays, check_ndim, check_same_shape, number
from .policy_losses import _sigmoid

__all__ = ["apo_loss", "dpo_loss", "ipo_loss", "kto_loss", "orpo_odds_ratio_loss",
           "preference_loss", "robust_dpo_loss", "simpo_loss"]


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
    return -_log_sigmoid(z)


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    """log σ(z) = −log(1 + e^{−z}), finite for every finite z."""
    return -np.logaddexp(np.zeros((), z.dtype), -z)


def _sequences(**named: object) -> tuple[np.ndarray, ...]:
    """``[N]`` sequence log-probs of one dtype and shape (ValueError naming them otherwise)."""
    arrays = as_float_arrays(**named)
    check_ndim(1, shape="[N]", **dict(zip(named, arrays, strict=True)))
    check_same_shape(**dict(zip(named, arrays, strict=True)))
    return arrays


def _lengths(name: str, x: object, n: int) -> np.ndarray:
    """``[n]`` response lengths: positive integers (ValueError otherwise)."""
    a = np.asarray(x)
    if a.shape != (n,):
        raise ValueError(f"{name} must be [N] = [{n}] (one length per response), got shape "
                         f"[{', '.join(str(k) for k in a.shape)}]")
    if a.dtype.kind not in "iuf" or not np.all(a == np.round(a)) or not np.all(a >= 1):
        raise ValueError(f"{name} must hold positive whole numbers (token counts), got "
                         f"{a.tolist()}")
    return a


def ipo_loss(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps,
             chosen_lengths, rejected_lengths, beta: float = 0.1):
    r"""Per-pair IPO loss, on log-ratios averaged per token (Azar et al. 2023, as TRL runs it).

    $$h = \frac{\log\pi_\theta(y_w) - \log\pi_{\text{ref}}(y_w)}{|y_w|}
        - \frac{\log\pi_\theta(y_l) - \log\pi_{\text{ref}}(y_l)}{|y_l|},\qquad
      \mathcal{L} = \Big(h - \frac{1}{2\beta}\Big)^2$$

    DPO's loss keeps pushing the margin up as long as the data prefer $y_w$ (its sigmoid never
    reaches 0); IPO regresses the margin onto a finite target, $1/(2\beta)$ ($\beta$ is the paper's
    $\tau$): a larger β, a smaller target, a policy kept closer to the reference.

    Args:
        chosen_logps, rejected_logps: ``[N]`` sequence log-probs (sums over the response's
            tokens) of the chosen and rejected responses under the policy.
        ref_chosen_logps, ref_rejected_logps: ``[N]`` the same under the reference model.
        chosen_lengths, rejected_lengths: ``[N]`` response lengths in tokens, positive integers.
        beta: β > 0.

    Returns:
        ``[N]`` the loss of each pair; 0 where the margin is exactly ``1/(2β)``.

    TRL 1.16.0's ``DPOTrainer._compute_loss`` with ``loss_type="ipo"`` is this formula: it sums
    the token log-probs, then divides each side's log-ratio by its completion length
    (``completion_mask.sum(dim=1).clamp(min=1.0)``; its comment says the IPO authors confirmed
    this normalisation). OpenRLHF 0.11.2's ``DPOLoss(ipo=True)`` squares the *summed* margin,
    ``(Δ − 1/(2β))²``, with no division: the same β then means a target margin per response
    instead of per token. Both return the batch mean.
    """
    beta = number("beta", beta, low=0, above=True)
    w, lo, rw, rl = _sequences(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                               ref_chosen_logps=ref_chosen_logps,
                               ref_rejected_logps=ref_rejected_logps)
    nw = _lengths("chosen_lengths", chosen_lengths, w.shape[0]).astype(w.dtype)
    nl = _lengths("rejected_lengths", rejected_lengths, w.shape[0]).astype(w.dtype)
    # h = (log π(y_w) − log π_ref(y_w)) / |y_w| − (log π(y_l) − log π_ref(y_l)) / |y_l|
    h = (w - rw) / nw - (lo - rl) / nl
    # (h − 1/(2β))²
    return (h - 1 / (2 * beta)) ** 2


def robust_dpo_loss(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps,
                    beta: float = 0.1, label_smoothing: float = 0.1):
    r"""Per-pair robust DPO loss (Chowdhury et al. 2024): DPO made unbiased under labels flipped
    with probability ε.

    $$z = \beta\big[(\log\pi_\theta(y_w) - \log\pi_{\text{ref}}(y_w))
        - (\log\pi_\theta(y_l) - \log\pi_{\text{ref}}(y_l))\big],\qquad
      \mathcal{L} = \frac{-(1-\varepsilon)\log\sigma(z) + \varepsilon\log\sigma(-z)}
        {1 - 2\varepsilon}$$

    If each label is flipped with probability ε, the expected loss of the observed label is
    $(1-\varepsilon)\ell(z) + \varepsilon\ell(-z)$ with $\ell(z) = -\log\sigma(z)$; solving
    for the loss whose expectation is the *clean* $\ell(z)$ gives the formula above, hence the
    minus sign and the division by $1 - 2\varepsilon$ (which needs ε < 1/2). The conservative
    DPO of Mitchell (cDPO) instead minimises $(1-\varepsilon)\ell(z) + \varepsilon\ell(-z)$
    itself, a smoothed target rather than an unbiased one.

    Args:
        chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps: ``[N]`` summed
            sequence log-probs, as for :func:`dpo_loss`.
        beta: β > 0.
        label_smoothing: ε in [0, 0.5), the assumed rate of flipped labels; 0 gives
            :func:`dpo_loss`.

    Returns:
        ``[N]`` the loss of each pair. Unlike DPO's it can be negative: where z is large, the
        ``+ε·log σ(−z)`` term falls without bound.

    TRL 1.16.0's ``DPOTrainer._compute_loss`` with ``loss_type="robust"`` is this formula (it
    only warns for ε outside [0, 0.5); this raises). OpenRLHF 0.11.2's ``label_smoothing`` is
    cDPO's, on its sigmoid loss: ``−(1−ε)·log σ(z) − ε·log σ(−z)``, no division; TRL's
    ``"sigmoid"`` loss ignores ``label_smoothing``.
    """
    beta = number("beta", beta, low=0, above=True)
    eps = number("label_smoothing", label_smoothing, low=0)
    if eps >= 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {eps!r} (at 0.5 every label "
                         "is a coin flip and 1 − 2ε is 0)")
    w, lo, rw, rl = _sequences(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                               ref_chosen_logps=ref_chosen_logps,
                               ref_rejected_logps=ref_rejected_logps)
    # z = β·Δ, the DPO margin
    z = beta * ((w - rw) - (lo - rl))
    # (−(1 − ε)·log σ(z) + ε·log σ(−z)) / (1 − 2ε)
    return (-(1 - eps) * _log_sigmoid(z) + eps * _log_sigmoid(-z)) / (1 - 2 * eps)


def simpo_loss(chosen_avg_logps, rejected_avg_logps, beta: float = 2.0, gamma: float = 0.5,
               label_smoothing: float = 0.0):
    r"""Per-pair SimPO loss (Meng et al. 2024): no reference model, a length-normalised reward,
    and a target margin γ.

    $$r(y) = \frac{\beta}{|y|}\log\pi_\theta(y),\qquad z = r(y_w) - r(y_l) - \gamma,\qquad
      \mathcal{L} = -(1-\varepsilon)\log\sigma(z) - \varepsilon\log\sigma(-z)$$

    The reward is the *average* token log-prob, so a long answer is not favoured for its length;
    there is no reference model to hold the policy (one forward pass less per pair), and the
    margin γ, in units of the reward (β × mean log-prob), asks the chosen answer to win by at
    least that much before the loss lets go.

    Args:
        chosen_avg_logps, rejected_avg_logps: ``[N]`` mean token log-probs of the chosen and
            rejected responses under the policy (sum ÷ length).
        beta: β > 0; the paper's settings are of a few units.
        gamma: the target margin γ ≥ 0, in reward units; the paper tunes it as a fraction of β,
            γ/β = 0.5 its suggested start.
        label_smoothing: ε in [0, 0.5], cDPO's smoothing (0: the paper's loss).

    Returns:
        ``[N]`` the loss of each pair.

    TRL 1.16.0's experimental ``CPOTrainer.cpo_loss`` with ``loss_type="simpo"`` is this formula:
    it averages the log-probs (``average_log_prob=True`` for "simpo"), forms
    ``Δ − simpo_gamma/β`` and multiplies by β, so its ``simpo_gamma`` is γ here. Its defaults
    differ from the paper's: β = 0.1, ``simpo_gamma`` = 0.5 (γ/β = 5), and ``cpo_alpha = 1.0``
    adds CPO's NLL term on the chosen tokens to the loss (``cpo_alpha=0``, which
    ``loss_type="alphapo"`` also sets, gives the SimPO paper's loss while ``alpha`` stays 0).
    OpenRLHF 0.11.2 has no SimPO.
    """
    beta = number("beta", beta, low=0, above=True)
    gamma = number("gamma", gamma, low=0)
    eps = number("label_smoothing", label_smoothing, low=0, high=0.5)
    w, lo = _sequences(chosen_avg_logps=chosen_avg_logps, rejected_avg_logps=rejected_avg_logps)
    # z = β·(mean log π(y_w) − mean log π(y_l)) − γ
    z = beta * (w - lo) - gamma
    # −(1 − ε)·log σ(z) − ε·log σ(−z)
    return -(1 - eps) * _log_sigmoid(z) - eps * _log_sigmoid(-z)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 − eˣ) for x < 0, without cancellation: log1p(−eˣ) below −ln 2, log(−expm1(x))
    above (Mächler 2012)."""
    with np.errstate(divide="ignore"):
        return np.where(x < -np.log(2.0), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def orpo_odds_ratio_loss(chosen_avg_logps, rejected_avg_logps, beta: float = 0.1):
    r"""ORPO's odds-ratio term (Hong et al. 2024), per pair: the loss added to the chosen
    answer's NLL.

    $$\log\operatorname{odds}(y) = \log\frac{p(y)}{1 - p(y)}
        = \overline{\log p}(y) - \log\big(1 - e^{\overline{\log p}(y)}\big),\qquad
      \mathcal{L}_{\text{OR}} = -\beta\log\sigma\big(\log\operatorname{odds}(y_w)
        - \log\operatorname{odds}(y_l)\big)$$

    with $\overline{\log p}$ the mean token log-prob. ORPO has no reference model: it adds this
    term to supervised fine-tuning on the chosen answers, and the odds ratio penalises the
    rejected answer only relative to the chosen one. $\log(1 - e^x)$ is computed without
    cancellation (:func:`_log1mexp`): ``log(1 - exp(x))`` is ``-inf`` for ``x`` near 0 in float32.

    Args:
        chosen_avg_logps, rejected_avg_logps: ``[N]`` mean token log-probs, each < 0 (a
            probability of 1 has infinite odds).
        beta: β > 0, the paper's λ, the weight of this term beside the NLL.

    Returns:
        ``[N]`` the term of each pair, ≥ 0.

    TRL 1.16.0's experimental ``ORPOTrainer.odds_ratio_loss`` computes
    ``β·log σ(log odds ratio)`` (≤ 0) in float32 from per-token-averaged log-probs, with the same
    ``log1mexp``, and its loss is ``NLL − mean(that)``: this function is the negative of its
    ``losses``. Its NLL covers the prompt's tokens as well as the chosen response's. OpenRLHF
    0.11.2 has no ORPO.
    """
    beta = number("beta", beta, low=0, above=True)
    w, lo = _sequences(chosen_avg_logps=chosen_avg_logps, rejected_avg_logps=rejected_avg_logps)
    for name, a in (("chosen_avg_logps", w), ("rejected_avg_logps", lo)):
        if not np.all(a < 0):
            raise ValueError(f"{name} must be < 0 (a mean log-prob; at 0 the odds are "
                             f"infinite), got {a[~(a < 0)][0].item()!r}")
    # log odds(y_w) − log odds(y_l) = (log p_w − log p_l) − (log(1 − p_w) − log(1 − p_l))
    log_odds = (w - lo) - (_log1mexp(w) - _log1mexp(lo))
    # −β·log σ(log odds ratio)
    return -beta * _log_sigmoid(log_odds)


def kto_loss(logps, ref_logps, desirable, kl, beta: float = 0.1, desirable_weight: float = 1.0,
             undesirable_weight: float = 1.0):
    r"""Per-example KTO loss (Ethayarajh et al. 2024): unpaired answers, each labelled
    desirable or not, judged against a reference point.

    $$r = \log\pi_\theta(y) - \log\pi_{\text{ref}}(y),\qquad z_0 = \max(\text{kl}, 0),\qquad
      \mathcal{L} = \begin{cases} w_D\,\big(1 - \sigma(\beta(r - z_0))\big) & y \text{ desirable}\\
      w_U\,\big(1 - \sigma(\beta(z_0 - r))\big) & \text{otherwise}\end{cases}$$

    KTO needs no pairs: a desirable answer is pushed above the reference point $z_0$, an
    undesirable one below it. $z_0$ estimates $\mathrm{KL}(\pi_\theta\,\|\,\pi_{\text{ref}})$
    on the batch, so an answer gains only by rising faster than the policy drifts as a whole;
    it carries no gradient. The loss saturates on both sides (a sigmoid, where DPO's log-sigmoid
    grows without bound): KTO's stand-in for prospect theory's S-shaped value function.

    Args:
        logps, ref_logps: ``[N]`` summed sequence log-probs of each answer under the policy and
            the reference model.
        desirable: ``[N]`` booleans (or 0/1), True for a desirable answer.
        kl: the batch's KL estimate, one number: the mean of ``log π_θ − log π_ref`` over answers
            paired with *other* prompts (each prompt with the previous example's answer). It is
            clamped at 0 here.
        beta: β > 0.
        desirable_weight, undesirable_weight: $w_D, w_U > 0$, to balance unequal numbers of the
            two kinds (the paper suggests $w_D n_D / (w_U n_U) \in [1, 4/3]$).

    Returns:
        ``[N]`` the loss of each example, in [0, w] (w its weight).

    ``1 − σ(x)`` is computed as ``σ(−x)``, exact where ``1 - sigmoid(x)`` rounds to 0. TRL
    1.16.0's ``KTOTrainer._compute_loss`` (``loss_type="kto"``) is this formula with summed
    log-probs; it computes ``kl`` as the mean of ``KL_logps − ref_KL_logps`` over the batch's
    mismatched pairs (completions rotated by one within each device batch), detached, averaged
    over processes and then clamped at 0, and takes the mean over the batch of the weighted
    losses (``nanmean``: divided by the number of examples, not by the sum of the weights).
    OpenRLHF 0.11.2 has no KTO.
    """
    beta = number("beta", beta, low=0, above=True)
    w_d = number("desirable_weight", desirable_weight, low=0, above=True)
    w_u = number("undesirable_weight", undesirable_weight, low=0, above=True)
    kl = number("kl", kl)
    lp, ref = _sequences(logps=logps, ref_logps=ref_logps)
    good = np.asarray(desirable)
    if good.shape != lp.shape:
        raise ValueError(f"desirable must be [N] = [{lp.shape[0]}] like logps, got shape "
                         f"[{', '.join(str(k) for k in good.shape)}]")
    if good.dtype.kind not in "biuf" or not np.all((good == 0) | (good == 1)):
        raise ValueError("desirable must hold only True/False (or 1/0)")
    good = good.astype(bool)
    # r = log π_θ(y) − log π_ref(y)
    r = lp - ref
    # z₀ = max(kl, 0)
    z0 = max(kl, 0.0)
    # desirable: w_D·(1 − σ(β(r − z₀))) = w_D·σ(β(z₀ − r)); undesirable: w_U·σ(β(r − z₀))
    x = beta * (r - z0)
    return np.where(good, w_d * _sigmoid(-x), w_u * _sigmoid(x)).astype(lp.dtype, copy=False)


APO_ANCHORS = ("zero", "down")


def apo_loss(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps,
             beta: float = 0.1, anchor: str = "zero"):
    r"""Per-pair APO loss (D'Oosterlinck et al. 2024): each side's log-ratio anchored, not only
    their difference.

    $$r_w = \log\pi_\theta(y_w) - \log\pi_{\text{ref}}(y_w),\qquad
      r_l = \log\pi_\theta(y_l) - \log\pi_{\text{ref}}(y_l)$$
    $$\text{zero:}\ \ \mathcal{L} = \big(1 - \sigma(\beta r_w)\big) + \sigma(\beta r_l),\qquad
      \text{down:}\ \ \mathcal{L} = \sigma(\beta r_w) + \big(1 - \sigma(\beta(r_w - r_l))\big)$$

    DPO's loss sees only the margin $r_w - r_l$: a pair whose chosen and rejected log-probs both
    fall, the rejected one faster, gains as much as one whose chosen log-prob rises. APO says
    which way each side must go. "zero" (the chosen answers are better than the policy's own)
    pushes $r_w$ up and $r_l$ down, each from 0, the reference: at a fixed positive margin its
    loss is least where $r_w = -r_l$. "down" (the policy is already better than the chosen answers)
    pushes the margin up and $r_w$ down: at the reference its whole pull is on the rejected
    answer ($\partial\mathcal{L}/\partial r_w = \beta/4 - \beta/4 = 0$), and at a fixed margin it
    only falls as $r_w$ falls, so both answers fall, the rejected one further. Each term is a
    sigmoid: the loss saturates between 0 and 2, on the wrong side of its target as on the right
    one (where DPO's pull on a wrong pair tends to β).

    Args:
        chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps: ``[N]`` summed
            sequence log-probs, as for :func:`dpo_loss`.
        beta: β > 0.
        anchor: ``"zero"`` or ``"down"`` (TRL's ``loss_type`` ``"apo_zero"``, ``"apo_down"``).

    Returns:
        ``[N]`` the loss of each pair, between 0 and 2; 1 at the reference (both log-ratios 0),
        for either anchor.

    ``1 − σ(x)`` is computed as ``σ(−x)``. TRL 1.16.0's ``DPOTrainer._compute_loss`` with
    ``loss_type=["apo_zero"]`` or ``["apo_down"]`` is this formula on summed log-probs
    (``1 - torch.sigmoid(...)``), and returns the batch mean. OpenRLHF 0.11.2 has no APO.
    """
    beta = number("beta", beta, low=0, above=True)
    if anchor not in APO_ANCHORS:
        raise ValueError(f"anchor must be one of {APO_ANCHORS}, got {anchor!r}")
    w, lo, rw, rl = _sequences(chosen_logps=chosen_logps, rejected_logps=rejected_logps,
                               ref_chosen_logps=ref_chosen_logps,
                               ref_rejected_logps=ref_rejected_logps)
    # r_w, r_l: each side's log-ratio to the reference
    r_w, r_l = w - rw, lo - rl
    if anchor == "zero":
        # (1 − σ(β r_w)) + σ(β r_l): the chosen up, the rejected down, each from 0
        return _sigmoid(-beta * r_w) + _sigmoid(beta * r_l)
    # σ(β r_w) + (1 − σ(β(r_w − r_l))): the chosen down, the rejected down further
    return _sigmoid(beta * r_w) + _sigmoid(-beta * (r_w - r_l))


# TRL 1.16.0's DPOConfig.loss_type values that :func:`preference_loss` computes: every one but
# "sft" (the chosen answers' NLL, from token log-probs: ``aggregate_loss(-logps, mask,
# "token-mean")`` over the chosen rows)
PREFERENCE_LOSS_TYPES = ("sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair",
                         "sppo_hard", "aot", "aot_unpaired", "apo_zero", "apo_down", "discopop",
                         "sigmoid_norm")


def preference_loss(loss_type: str, chosen_logps, rejected_logps, ref_chosen_logps,
                    ref_rejected_logps, *, beta: float = 0.1, label_smoothing: float = 0.0,
                    discopop_tau: float = 0.05, chosen_lengths=None, rejected_lengths=None):
    r"""The loss of each pair for one of TRL's DPO ``loss_type``\ s (:data:`PREFERENCE_LOSS_TYPES`).

    With $r_w, r_l$ the chosen and rejected log-ratios to the reference (summed log-probs),
    $\Delta = r_w - r_l$, ε the ``label_smoothing`` and τ the ``discopop_tau``:

    - ``sigmoid``: $-\log\sigma(\beta\Delta)$, DPO (:func:`dpo_loss`).
    - ``hinge``: $\max(0,\ 1 - \beta\Delta)$, SLiC's hinge (Zhao et al. 2023) on log-ratios to the
      reference (RSO's "hinge-norm", Liu et al. 2023): 0 once $\Delta \ge 1/\beta$.
    - ``ipo``: :func:`ipo_loss`, on per-token log-ratios (needs the lengths).
    - ``exo_pair``: $q(\log q - \log(1-\varepsilon)) + (1-q)(\log(1-q) - \log\varepsilon)$ with
      $q = \sigma(\beta\Delta)$, EXO (Ji et al. 2024): $\mathrm{KL}(q \,\|\, 1-\varepsilon)$
      between two-point distributions, least at
      $\beta\Delta = \log\frac{1-\varepsilon}{\varepsilon}$ (a target margin, like IPO's);
      ε in (0, 1).
    - ``nca_pair``: $-\log\sigma(\beta r_w) - \tfrac12\log\sigma(-\beta r_w)
      - \tfrac12\log\sigma(-\beta r_l)$, NCA (Chen et al. 2024).
    - ``robust``: :func:`robust_dpo_loss`.
    - ``bco_pair``: $-\log\sigma(\beta r_w) - \log\sigma(-\beta r_l)$, BCO (Jung et al. 2024)
      without its reward shift.
    - ``sppo_hard``: $(r_w - \tfrac{1}{2\beta})^2 + (r_l + \tfrac{1}{2\beta})^2$, SPPO (Wu et
      al. 2024) with hard labels (the winner's probability 1).
    - ``aot``: $-(1-\varepsilon)\log\sigma(\beta\delta_i) - \varepsilon\log\sigma(-\beta\delta_i)$,
      $\delta_i$ the batch's *i*-th smallest policy difference $\log\pi_\theta(y_w) -
      \log\pi_\theta(y_l)$ minus its *i*-th smallest reference difference: AOT (Melnyk et al.
      2024), the batch's two distributions compared rank by rank.
    - ``aot_unpaired``: the same with $\delta_i$ the *i*-th smallest $r_w$ minus the *i*-th
      smallest $r_l$: which answers were paired is ignored.
    - ``apo_zero``, ``apo_down``: :func:`apo_loss`.
    - ``discopop``: $(1 - m)(-\log\sigma(x)) + m\,e^{-x}$ with $x = \beta\Delta$ and
      $m = \sigma(x/\tau)$, DiscoPOP (Lu et al. 2024).
    - ``sigmoid_norm``: $-\log\sigma\big(\beta(r_w/|y_w| - r_l/|y_l|)\big)$, DPO on per-token
      log-ratios (needs the lengths).

    The losses that take $r_w$ and $r_l$ apart (nca_pair, bco_pair, sppo_hard, the APOs) say
    where each side should go, not only how far apart; sigmoid, hinge, ipo, exo_pair, robust,
    discopop and sigmoid_norm see each pair's margin alone; the AOTs see no pair's margin, only
    the batch's sorted values.

    Args:
        loss_type: one of :data:`PREFERENCE_LOSS_TYPES`.
        chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps: ``[N]`` summed
            sequence log-probs, as for :func:`dpo_loss`.
        beta: β > 0.
        label_smoothing: ε, read by "robust" (in [0, 0.5)), "exo_pair" (in (0, 1): TRL refuses 0,
            where log ε is −∞; the paper uses 1e-3) and the AOTs (in [0, 1]).
        discopop_tau: τ > 0, DiscoPOP's temperature (its paper's 0.05, TRL's default).
            ``label_smoothing`` and ``discopop_tau`` must be numbers even where the loss type
            does not read them (ValueError naming them otherwise).
        chosen_lengths, rejected_lengths: ``[N]`` token counts, for "ipo" and "sigmoid_norm".

    Returns:
        ``[N]`` one loss per pair; for the AOTs, per rank (the *i*-th entry pairs the *i*-th
        smallest values), whose mean is the batch's loss. TRL's loss is the mean of this.

    TRL 1.16.0's ``DPOTrainer._compute_loss`` computes each of these in its ``loss_type`` loop
    (with the default ``f_divergence_type="reverse_kl"``, ``use_weighting=False`` and
    ``ld_alpha=None``) and adds their batch means, each times its ``loss_weights`` entry. Where
    it differs: DiscoPOP's $m\,e^{-x}$ is computed here as $e^{\log m - x}$, finite where TRL's
    ``torch.exp(-logits)`` overflows and $m$ underflows to 0 (0 · ∞: NaN, in float32 once
    $x < -88.7$ at τ = 0.05); "exo_pair" at ε = 0 raises here, as TRL's trainer does, and TRL
    takes its log ε and log(1 − ε) of a float32 tensor (``torch.tensor(self.label_smoothing)``)
    whatever the inputs' dtype, a relative 1e-8 off in float64. OpenRLHF 0.11.2's
    ``DPOLoss`` has only DPO (with cDPO's smoothing) and IPO on summed log-ratios.
    """
    if loss_type not in PREFERENCE_LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {PREFERENCE_LOSS_TYPES} (TRL's DPO loss "
                         f"types but 'sft'), got {loss_type!r}")
    beta = number("beta", beta, low=0, above=True)
    # checked whatever the loss type reads, so that "0.1", True or NaN never pass unseen; the
    # types that read label_smoothing check its range below
    label_smoothing = number("label_smoothing", label_smoothing)
    tau = number("discopop_tau", discopop_tau, low=0, above=True)
    logps = {"chosen_logps": chosen_logps, "rejected_logps": rejected_logps,
             "ref_chosen_logps": ref_chosen_logps, "ref_rejected_logps": ref_rejected_logps}
    if loss_type == "sigmoid":
        return dpo_loss(*logps.values(), beta)
    if loss_type == "ipo":
        return ipo_loss(*logps.values(), chosen_lengths, rejected_lengths, beta)
    if loss_type == "robust":
        return robust_dpo_loss(*logps.values(), beta, label_smoothing)
    if loss_type in ("apo_zero", "apo_down"):
        return apo_loss(*logps.values(), beta, anchor=loss_type[len("apo_"):])
    w, lo, rw, rl = _sequences(**logps)
    # r_w, r_l: each side's log-ratio to the reference; Δ = r_w − r_l
    r_w, r_l = w - rw, lo - rl
    x = beta * (r_w - r_l)
    if loss_type == "hinge":
        # max(0, 1 − βΔ)
        return np.maximum(0, 1 - x)
    if loss_type == "exo_pair":
        eps = number("label_smoothing", label_smoothing)
        if not 0 < eps < 1:
            raise ValueError(f"label_smoothing must be in (0, 1) for exo_pair, got {eps!r} (log ε "
                             "and log(1 − ε) must be finite; the EXO paper uses 1e-3)")
        # q (log q − log(1 − ε)) + (1 − q)(log(1 − q) − log ε), q = σ(βΔ)
        return (_sigmoid(x) * (_log_sigmoid(x) - np.log1p(-eps))
                + _sigmoid(-x) * (_log_sigmoid(-x) - np.log(eps))).astype(w.dtype, copy=False)
    if loss_type == "nca_pair":
        # −log σ(β r_w) − ½ log σ(−β r_w) − ½ log σ(−β r_l)
        return (-_log_sigmoid(beta * r_w) - 0.5 * _log_sigmoid(-beta * r_w)
                - 0.5 * _log_sigmoid(-beta * r_l))
    if loss_type == "bco_pair":
        # −log σ(β r_w) − log σ(−β r_l)
        return -_log_sigmoid(beta * r_w) - _log_sigmoid(-beta * r_l)
    if loss_type == "sppo_hard":
        # (r_w − 1/(2β))² + (r_l + 1/(2β))²
        return (r_w - 0.5 / beta) ** 2 + (r_l + 0.5 / beta) ** 2
    if loss_type in ("aot", "aot_unpaired"):
        eps = number("label_smoothing", label_smoothing, low=0, high=1)
        if loss_type == "aot":
            # δ_i: the i-th smallest policy difference minus the i-th smallest reference one
            delta = np.sort(w - lo) - np.sort(rw - rl)
        else:
            # δ_i: the i-th smallest r_w minus the i-th smallest r_l
            delta = np.sort(r_w) - np.sort(r_l)
        # −(1 − ε) log σ(βδ) − ε log σ(−βδ)
        return -(1 - eps) * _log_sigmoid(beta * delta) - eps * _log_sigmoid(-beta * delta)
    if loss_type == "discopop":
        # (1 − m)(−log σ(x)) + m e^{−x}, m = σ(x/τ); m e^{−x} = e^{log m − x}
        return (-_sigmoid(-x / tau) * _log_sigmoid(x)
                + np.exp(_log_sigmoid(x / tau) - x)).astype(w.dtype, copy=False)
    # sigmoid_norm: −log σ(β (r_w/|y_w| − r_l/|y_l|))
    nw = _lengths("chosen_lengths", chosen_lengths, w.shape[0]).astype(w.dtype)
    nl = _lengths("rejected_lengths", rejected_lengths, w.shape[0]).astype(w.dtype)
    return -_log_sigmoid(beta * (r_w / nw - r_l / nl))
