r"""The phases of the toy RLHF run: SFT, PPO, DPO and SimPO, GRPO, and :func:`run`, which chains
them.

1. **SFT**: fit :class:`~.model.TinyLM` to a small generated corpus of short babble words by
   cross-entropy. The result is both the PPO actor's starting point and the frozen reference.
2. **PPO**, with the four roles: the actor (trained), the critic (:class:`~.model.ValueHead`,
   trained), the reference (the SFT model, frozen) and the reward model (:mod:`.reward`, fixed).
   Each step samples a batch of words, turns the RM score and the KL to the reference into token
   rewards (``shape_token_rewards``), advantages and returns (``compute_gae``), and then runs
   several epochs of minibatch updates on the clipped surrogate (``policy_surrogate_loss``) and
   the clipped value loss (``value_clipped_loss``).
3. **DPO**, again from the SFT model: sample 4 words per prompt from it, keep the best as
   $y_w$ and the worst as $y_l$ by RM score, and minimise ``dpo_loss`` on those pairs.
   **SimPO** beside it: the same pairs and steps from the SFT model, minimising ``simpo_loss``
   on the words' mean token log-probs, with no reference model.
4. **GRPO**, again from the SFT model, with no critic: each step samples a group of
   ``grpo_group`` words for each of ``grpo_prompts`` prompts, scores them with the same reward
   model, takes each word's advantage against its group (``group_advantages``) and runs the same
   epochs of minibatch updates as PPO on ``grpo_policy_loss`` (clipped surrogate + β·k3 to the
   reference, in the loss rather than the reward).
5. **Beside GRPO** (``grpo_variants``), the same phase three more times, each from the SFT model
   with GRPO's seed and one change: ``gspo``, GSPO's sequence-level ratio (``gspo_loss``) in
   place of the per-token one; ``grpo_mismatch``, the words sampled by a perturbed copy of the
   policy (``rollout_noise``, as a low-precision inference engine would) and trained on as if
   the policy had written them; ``grpo_tis``, the same rollouts with each token's loss weighted
   by the truncated importance weight (``rollout_is_weights``).

The operators of :mod:`rl_ops_numpy` compute every number the run reports and trains on: the
log-probs and entropies (``token_logprobs``' log-sum-exp inside the model, ``token_entropy``),
the token rewards, the advantages (``compute_gae``, ``masked_whiten``, ``group_advantages``),
the KL, the TIS weights and every loss. They return values, not gradients, so each loss's
gradient w.r.t. the log-probs or values is written by hand below (in ``*_loss_and_grads``: the
backward part only, from the operator's inputs and output) and pushed through the model by
:meth:`TinyLM.backward <.model.TinyLM.backward>`; the tests check each against finite differences
of the operator's value.

All randomness comes from ``numpy.random.default_rng``, one generator per phase spawned from the
seed, so a seed gives bit-identical numbers and each phase's draws do not depend on the step
counts of the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from .. import (
    aggregate_loss,
    compute_gae,
    dpo_loss,
    group_advantages,
    grpo_policy_loss,
    gspo_loss,
    importance_ratio,
    kl_estimators,
    masked_whiten,
    policy_surrogate_loss,
    rollout_is_weights,
    shape_token_rewards,
    simpo_loss,
    token_entropy,
    value_clipped_loss,
)
from ..policy_losses import GSPO_LOG_RATIO_CAP, _sequence_log_ratio
from ..ppo import _clipped_values
from .model import FIRST_LETTER, LETTERS, Adam, Batch, TinyLM, V, ValueHead
from .reward import score_batch

__all__ = [
    "BROWSER_CONFIG",
    "GRPO_VARIANTS",
    "DemoConfig",
    "Variant",
    "clipped_surrogate_grad",
    "dpo_loss_and_grads",
    "grpo_loss_and_grads",
    "make_corpus",
    "policy_loss_and_grads",
    "run",
    "sft_loss_and_grads",
    "simpo_loss_and_grads",
    "value_loss_and_grads",
]

OnLog = Callable[[str, int, int, dict[str, float]], Any]


@dataclass(frozen=True)
class DemoConfig:
    """Every knob of the run. ``DemoConfig()`` is the CLI default; :meth:`browser` is smaller."""

    seed: int = 0
    max_len: int = 20  # longest word, in letters
    temperature: float = 1.0  # τ for sampling and for every log-prob
    log_every: int = 5  # steps per logged point (each point averages its steps)
    # SFT
    corpus_size: int = 2000
    sft_steps: int = 150
    sft_batch: int = 64
    sft_lr: float = 0.05
    # PPO
    ppo_steps: int = 200
    ppo_batch: int = 64  # words sampled per step
    ppo_epochs: int = 4  # passes over each rollout
    ppo_minibatches: int = 2  # updates per pass
    actor_lr: float = 0.02
    critic_lr: float = 0.05
    # β of the KL penalty in the token rewards. Smaller than the operator's default 0.05: the
    # reference writes babble far from what the RM likes, and at 0.05 the words stay near 6
    # letters: each extra letter costs about as much KL penalty as the length term pays for it.
    kl_coef: float = 0.01
    clip_range: float = 0.2  # ε of the surrogate
    clip_range_value: float = 0.2  # ε_v of the value loss
    gamma: float = 1.0
    lam: float = 0.95
    # DPO
    dpo_prompts: int = 512  # preference pairs (at most; ties are dropped)
    dpo_samples: int = 4  # words per prompt; best and worst make the pair
    dpo_steps: int = 200
    dpo_batch: int = 64
    dpo_lr: float = 0.02
    dpo_beta: float = 0.1
    # SimPO beside DPO: the same pairs, steps, batch and learning rate; β = 2.0 and the paper's
    # suggested γ/β = 0.5 (TRL 1.16.0's CPOTrainer defaults to β = 0.1, simpo_gamma = 0.5)
    simpo_beta: float = 2.0
    simpo_gamma: float = 1.0
    # GRPO: grpo_prompts × grpo_group words per step (as many as PPO's batch), no critic
    grpo_steps: int = 200
    grpo_prompts: int = 16
    grpo_group: int = 4  # G, words per prompt
    grpo_lr: float = 0.02
    # β of k3 in the loss: older TRL's default (TRL 1.16.0's is 0). At PPO's 0.01 the words
    # collapse to one suffix (entropy 0.2 nats, KL 45 per word); at 0.04 GRPO's score matches
    # PPO's.
    grpo_beta: float = 0.04
    grpo_loss_agg_mode: str = "token-mean"
    # Beside GRPO: GSPO, and GRPO on rollouts from a perturbed copy, without and with TIS
    # (GRPO_VARIANTS; each from the SFT model, with GRPO's seed and settings but for its change)
    grpo_variants: bool = True
    # GSPO: ε_low, ε_high of the sequence ratio (verl's GSPO recipe); its loss, and β·k3, are
    # aggregated "seq-mean-token-mean", as gspo_loss and verl's compute_policy_loss_gspo do
    gspo_clip_low: float = 3e-4
    gspo_clip_high: float = 4e-4
    # σ of the N(0, σ²) added to each logit the perturbed copy samples from (0: no mismatch).
    # 0.3 is the spread of fp8 (e4m3) rounding of logits between 8 and 16, where fp8's grid
    # spacing is 1 (uniform error, σ = 1/√12 ≈ 0.29); bf16's spacing there is 1/16 (σ ≈ 0.018).
    rollout_noise: float = 0.3
    # C of TIS, min(π_train / π_rollout, C): verl 0.9.1's rollout_is_threshold default
    tis_threshold: float = 2.0
    # evaluation
    eval_words: int = 256  # words sampled to score each final model
    show_words: int = 8  # example words kept in the result

    @classmethod
    def browser(cls, **overrides: Any) -> DemoConfig:
        """The run the browser starts: about a third of the default's work (~2 s in CPython).

        Pyodide runs small NumPy operations 2–4× slower than CPython, so this finishes in well
        under 20 s there, and still shows every effect of the default run.
        """
        small = {
            "corpus_size": 1000,
            "sft_steps": 100,
            "ppo_steps": 100,
            "ppo_batch": 48,
            "ppo_minibatches": 1,
            "dpo_prompts": 192,
            "dpo_steps": 100,
            "dpo_batch": 32,
            "grpo_steps": 100,
            "grpo_prompts": 12,
            "eval_words": 128,
            # GSPO and the mismatch runs would double the browser's time: the page offers them
            "grpo_variants": False,
        }
        return cls(**{**small, **overrides})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DemoConfig:
        """A config from a (possibly partial) mapping, e.g. one a browser worker received."""
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown DemoConfig fields: {sorted(unknown)}")
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """Every field, by name (JSON-ready)."""
        return asdict(self)


BROWSER_CONFIG = DemoConfig.browser()


@dataclass(frozen=True)
class Variant:
    """What a run of the GRPO phase changes: its policy loss, its sampler, its correction."""

    loss: str = "grpo"  # "grpo": per-token ratio; "gspo": the sequence's
    mismatch: bool = False  # sample from a perturbed copy of the policy (σ = rollout_noise)
    tis: bool = False  # weight each token's loss by min(π_old / π_rollout, C)


# the runs beside GRPO, by the name of their phase in the result
GRPO_VARIANTS = {
    "gspo": Variant(loss="gspo"),
    "grpo_mismatch": Variant(mismatch=True),
    "grpo_tis": Variant(mismatch=True, tis=True),
}


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------

# English letter frequencies (per cent), a–z
_ENGLISH = np.array(
    [8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4,
     6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1, 2.8, 1.0, 2.4, 0.15, 2.0, 0.07]
)  # fmt: skip


def make_corpus(rng: np.random.Generator, size: int, max_len: int = 20) -> list[str]:
    r"""The SFT corpus: short babble words, the kind of text a weak base model writes.

    Each word has $n \sim U\{2, \dots, 8\}$ letters drawn from English letter frequencies; with
    probability 0.3 a letter repeats the one before ("stutter"). Against the reward model these
    words are too short, alternate vowels and consonants only by chance, and repeat letters, so
    RL has room to improve them.
    """
    p = _ENGLISH / _ENGLISH.sum()
    words = []
    for _ in range(size):
        n = min(int(rng.integers(2, 9)), max_len)
        letters = rng.choice(26, size=n, p=p)
        stutter = rng.random(n) < 0.3
        for i in range(1, n):
            if stutter[i]:
                letters[i] = letters[i - 1]
        words.append("".join(LETTERS[i] for i in letters))
    return words


def _random_prompts(rng: np.random.Generator, n: int) -> np.ndarray:
    """``[n]`` first letters, uniform over a–z (token ids)."""
    return rng.integers(FIRST_LETTER, V, size=n)


def _masked_mean(x: np.ndarray, mask: np.ndarray) -> float:
    return float((x * mask).sum() / max(1.0, float(mask.sum())))


# ---------------------------------------------------------------------------------------------
# Losses: each value by the package's operator, its gradient by hand
# ---------------------------------------------------------------------------------------------


def sft_loss_and_grads(
    model: TinyLM, batch: Batch, temperature: float = 1.0
) -> tuple[float, dict[str, np.ndarray]]:
    r"""Token-mean cross-entropy and its parameter gradients.

    $$\mathcal{L}_{\text{SFT}} = -\frac{1}{N}\sum_{b,t} m_{bt}\log\pi(a_{bt}),\qquad
      \frac{\partial\mathcal{L}}{\partial\log\pi(a_{bt})} = -\frac{m_{bt}}{N},
      \qquad N = \max\big(1, \textstyle\sum m\big)$$
    """
    lp, logp = model.token_logprobs(batch, temperature)  # [B, T], [B, T, V]
    n = max(1.0, float(batch.mask.sum()))
    # L = −(1/N) Σ m log π(a_t)
    loss = -float(lp.sum() / n)
    return loss, model.backward(batch, logp, -batch.mask / n, temperature)


def _aggregation_weights(mask: np.ndarray, mode: str) -> np.ndarray:
    r"""``[B, T]``: $w_{bt} = \partial\,\text{aggregate\_loss}(\ell, m, \text{mode}) /
    \partial \ell_{bt}$, the backward of :func:`aggregate_loss`.

    Every mode is linear in $\ell$: token-mean weighs each token $1/\sum m$, token-sum 1; the
    sequence means weigh row $b$'s tokens $1/(|\mathcal B|\,n_b)$, $1/|\mathcal B|$ or
    $1/(|\mathcal B|\,T)$, with $\mathcal B$ the rows that have a token.
    """
    tokens = mask.sum(axis=1, keepdims=True)  # [B, 1] n_b
    rows = max(1.0, float(np.count_nonzero(tokens)))  # |𝓑|
    if mode == "token-mean":
        return mask / max(1.0, float(mask.sum()))
    if mode == "token-sum":
        return mask.astype(np.float64)
    if mode == "seq-mean-token-mean":
        return mask / np.maximum(tokens, 1.0) / rows
    if mode == "seq-mean-token-sum":
        return mask / rows
    if mode == "seq-mean-token-sum-norm":
        return mask / (rows * mask.shape[1])
    raise ValueError(f"unknown loss_agg_mode {mode!r}")


def clipped_surrogate_grad(
    ratio: np.ndarray, adv: np.ndarray, clip_low: float = 0.2, clip_high: float = 0.2
) -> np.ndarray:
    r"""$\partial\ell/\partial\log r$ of PPO's clipped term, token by token (``ratio`` and ``adv``
    broadcast together).

    With $\ell = \max(-\hat A r,\ -\hat A\operatorname{clip}(r, 1-\epsilon_l, 1+\epsilon_h))$,
    the clipped branch is the max, and flat in θ, exactly where the update has gone far enough:
    $\hat A > 0,\ r > 1+\epsilon_h$ or $\hat A < 0,\ r < 1-\epsilon_l$. Elsewhere the unclipped
    branch is, and $\partial(-\hat A r)/\partial\log r = -\hat A r$:

    $$\frac{\partial\ell}{\partial\log r} = -\hat A\,r\,\big[\text{not clipped}\big]$$

    ``r`` is each token's $\rho_t$ (:func:`importance_ratio`) in PPO and GRPO, and its word's
    $s_b$ in GSPO, whose stop-gradient form makes $\partial\log r_{bt}/\partial\log\pi_\theta(a_t)
    = 1$ there too.
    """
    clipped = ((adv > 0) & (ratio > 1 + clip_high)) | ((adv < 0) & (ratio < 1 - clip_low))
    # ∂ℓ/∂log r = −Â r where not clipped
    return np.where(clipped, 0.0, -adv * ratio)


def _clipfrac(ratio: np.ndarray, mask: np.ndarray, clip_low: float, clip_high: float) -> float:
    """The share of response tokens whose ratio lies outside ``[1 − clip_low, 1 + clip_high]``."""
    return _masked_mean((ratio < 1 - clip_low) | (ratio > 1 + clip_high), mask)


def policy_loss_and_grads(
    model: TinyLM,
    batch: Batch,
    old_lp: np.ndarray,
    adv: np.ndarray,
    clip_range: float = 0.2,
    temperature: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], float]:
    r""":func:`policy_surrogate_loss` (a token-mean), its parameter gradients, the clip fraction.

    $$\frac{\partial L^{\text{CLIP}}}{\partial\log\pi_\theta(a_t)} = \frac{m_t}{N}\,
      \frac{\partial\ell_t}{\partial\log\rho_t},\qquad N = \max\big(1, \textstyle\sum m\big)$$

    with $\partial\ell_t/\partial\log\rho_t$ from :func:`clipped_surrogate_grad`.
    """
    new_lp, logp = model.token_logprobs(batch, temperature)  # [B, T], [B, T, V]
    m = batch.mask
    loss = policy_surrogate_loss(new_lp, old_lp, adv, m, clip_range)
    ratio = importance_ratio(new_lp, old_lp, m)  # [B, T] ρ
    # ∂L/∂log π_θ = (m/N) ∂ℓ/∂log ρ
    g = clipped_surrogate_grad(ratio, adv, clip_range, clip_range)
    g = g * _aggregation_weights(m, "token-mean")
    clipfrac = _clipfrac(ratio, m, clip_range, clip_range)
    return loss, model.backward(batch, logp, g, temperature), clipfrac


def value_loss_and_grads(
    critic: ValueHead,
    batch: Batch,
    old_v: np.ndarray,
    returns: np.ndarray,
    clip_range_value: float = 0.2,
) -> tuple[float, dict[str, np.ndarray]]:
    r""":func:`value_clipped_loss` (a token-mean) and its parameter gradients.

    Per token the loss is $\tfrac12\max((V - R)^2, (V^{\text{clip}} - R)^2)$. Inside the clip
    range $V^{\text{clip}} = V$ and both terms agree; outside it $V^{\text{clip}}$ is a constant.
    So the gradient is that of the unclipped term where it is the larger one, else 0:

    $$\frac{\partial L^V}{\partial V_t} = \frac{m_t}{N}\,(V_t - R_t)\,
      \big[(V_t - R_t)^2 \ge (V^{\text{clip}}_t - R_t)^2\big]$$
    """
    new_v = critic.values(batch)  # [B, T]
    m = batch.mask
    loss = value_clipped_loss(new_v, old_v, returns, m, clip_range_value)
    # the loss's V_clip, which it does not return
    v_clip = _clipped_values(new_v, old_v, clip_range_value)
    unclipped_wins = (new_v - returns) ** 2 >= (v_clip - returns) ** 2
    # ∂(½(V − R)²)/∂V = V − R where that term is the max
    g = np.where(unclipped_wins, new_v - returns, 0.0) * _aggregation_weights(m, "token-mean")
    return loss, critic.backward(batch, g)


def dpo_loss_and_grads(
    model: TinyLM,
    chosen: Batch,
    rejected: Batch,
    ref_chosen: np.ndarray,
    ref_rejected: np.ndarray,
    beta: float = 0.1,
    temperature: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    r"""Pair-mean :func:`dpo_loss`, its parameter gradients, and each pair's margin.

    With $z = \beta[(\log\pi(y_w) - \log\pi_{\text{ref}}(y_w)) - (\log\pi(y_l) -
    \log\pi_{\text{ref}}(y_l))]$, each pair's loss is $\ell = -\log\sigma(z)$, so
    $\sigma(z) = e^{-\ell}$ and the gradient follows from the operator's output alone:

    $$\frac{\partial\ell}{\partial\log\pi(y_w)} = -\beta\,\sigma(-z) = \beta\,(e^{-\ell} - 1)
      = -\frac{\partial\ell}{\partial\log\pi(y_l)}$$

    The loss is the mean over the $P$ pairs. Sequence log-probs are sums over tokens, so each
    token's log-prob receives its sequence's gradient. The margin is $z$, the implicit reward
    gap (TRL's ``rewards/margins``).
    """
    lp_w, logp_w = model.token_logprobs(chosen, temperature)  # [P, T], [P, T, V]
    lp_l, logp_l = model.token_logprobs(rejected, temperature)
    # log π(y) = Σ_t log π(a_t)
    seq_w, seq_l = lp_w.sum(axis=1), lp_l.sum(axis=1)  # [P]
    per_pair = dpo_loss(seq_w, seq_l, ref_chosen, ref_rejected, beta)  # [P] ℓ = −log σ(z)
    # ∂(mean ℓ)/∂log π(y_w) = β(e^{−ℓ} − 1)/P, the opposite for y_l
    g = beta * np.expm1(-per_pair) / len(per_pair)  # [P]
    grads_w = model.backward(chosen, logp_w, np.broadcast_to(g[:, None], lp_w.shape), temperature)
    grads_l = model.backward(
        rejected, logp_l, np.broadcast_to(-g[:, None], lp_l.shape), temperature
    )
    grads = {k: grads_w[k] + grads_l[k] for k in grads_w}
    margin = beta * ((seq_w - ref_chosen) - (seq_l - ref_rejected))
    return float(per_pair.mean()), grads, margin


def simpo_loss_and_grads(
    model: TinyLM,
    chosen: Batch,
    rejected: Batch,
    beta: float = 2.0,
    gamma: float = 1.0,
    temperature: float = 1.0,
) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
    r"""Pair-mean :func:`simpo_loss`, its parameter gradients, and each pair's reward margin.

    With $\bar\ell(y) = \frac{1}{|y|}\sum_t\log\pi(a_t)$ and
    $z = \beta(\bar\ell(y_w) - \bar\ell(y_l)) - \gamma$, each pair's loss is
    $\ell = -\log\sigma(z)$, so

    $$\frac{\partial\ell}{\partial\log\pi(a_t)} = \frac{\beta\,(e^{-\ell} - 1)}{|y_w|}
      \ (a_t \in y_w),\qquad -\frac{\beta\,(e^{-\ell} - 1)}{|y_l|}\ (a_t \in y_l)$$

    a token's share of its word's gradient is one over the word's length (DPO gives every token
    the whole of it). The margin is $\beta(\bar\ell(y_w) - \bar\ell(y_l))$, the reward gap
    that the loss compares with γ.
    """
    lp_w, logp_w = model.token_logprobs(chosen, temperature)  # [P, T], [P, T, V]
    lp_l, logp_l = model.token_logprobs(rejected, temperature)
    n_w, n_l = chosen.mask.sum(axis=1), rejected.mask.sum(axis=1)  # [P] tokens per word
    # mean_t log π(a_t)
    avg_w, avg_l = lp_w.sum(axis=1) / n_w, lp_l.sum(axis=1) / n_l  # [P]
    per_pair = simpo_loss(avg_w, avg_l, beta, gamma)  # [P] ℓ = −log σ(z)
    # ∂(mean ℓ)/∂mean log π(y_w) = β(e^{−ℓ} − 1)/P, the opposite for y_l
    g = beta * np.expm1(-per_pair) / len(per_pair)  # [P]
    grads_w = model.backward(chosen, logp_w, np.broadcast_to((g / n_w)[:, None], lp_w.shape),
                             temperature)
    grads_l = model.backward(rejected, logp_l, np.broadcast_to((-g / n_l)[:, None], lp_l.shape),
                             temperature)
    grads = {k: grads_w[k] + grads_l[k] for k in grads_w}
    return float(per_pair.mean()), grads, beta * (avg_w - avg_l)


def grpo_loss_and_grads(
    model: TinyLM,
    batch: Batch,
    old_lp: np.ndarray,
    adv: np.ndarray,
    ref_lp: np.ndarray,
    cfg: DemoConfig,
    loss: str = "grpo",
    weights: np.ndarray | None = None,
) -> tuple[float, dict[str, np.ndarray], float]:
    r"""GRPO's loss or GSPO's, each with $\beta k_3$ to the reference; its parameter gradients;
    the clip fraction.

    ``loss="grpo"``: :func:`grpo_policy_loss` (``cfg.clip_range`` on each token's $\rho_t$,
    aggregated per ``cfg.grpo_loss_agg_mode``). ``loss="gspo"``: :func:`gspo_loss`
    (``cfg.gspo_clip_low``, ``cfg.gspo_clip_high`` on each word's $s_b$) plus $\beta k_3$
    (:func:`kl_estimators`) aggregated as it is, ``seq-mean-token-mean``. ``adv`` is ``[B]``,
    β is ``cfg.grpo_beta``, and with $\omega$ the aggregation weights and $d = \log\pi_{\text{ref}}
    - \log\pi_\theta$ ($\partial k_3/\partial\log\pi_\theta = 1 - e^d$):

    $$\frac{\partial L}{\partial\log\pi_\theta(a_t)} = \omega_t\Big(
      \frac{\partial\ell_t}{\partial\log r_t} + \beta\,(1 - e^{d_t})\Big)$$

    with :func:`clipped_surrogate_grad` at $r_t = \rho_t$, or at $r_t = s_b$ (none where
    $\log s_b$ reaches GSPO's cap of 10, which passes no gradient).

    ``weights`` ``[B, T]``, TIS weights $w \ge 0$ (constants), multiply each token's clipped
    term, as verl 0.9.1 multiplies ``pg_losses`` by ``rollout_is_weights``; the $k_3$ term is
    not weighted. For $w \ge 0$, $w\max(-\hat A r, -\hat A\operatorname{clip}(r)) =
    \max(-w\hat A r, -w\hat A\operatorname{clip}(r))$: the weighted loss is the operator's with
    the per-token advantages $w_t\hat A$, and so is its gradient.
    """
    new_lp, logp = model.token_logprobs(batch, cfg.temperature)  # [B, T], [B, T, V]
    m = batch.mask
    # [B, T] each token's advantage, its word's Â, times its TIS weight (if any)
    a = adv[:, None] * (m if weights is None else weights)
    beta = cfg.grpo_beta
    if loss == "grpo":
        mode, low, high = cfg.grpo_loss_agg_mode, cfg.clip_range, cfg.clip_range
        value = grpo_policy_loss(
            new_lp, old_lp, a, m, ref_lp, clip_low=low, clip_high=high, beta=beta,
            loss_agg_mode=mode,
        )
        ratio = importance_ratio(new_lp, old_lp, m)  # [B, T] ρ
        g = clipped_surrogate_grad(ratio, a, low, high)
    elif loss == "gspo":
        mode, low, high = "seq-mean-token-mean", cfg.gspo_clip_low, cfg.gspo_clip_high
        _, _, k3 = kl_estimators(ref_lp, new_lp)  # [B, T]
        value = gspo_loss(new_lp, old_lp, a, m, clip_low=low, clip_high=high) + beta * (
            aggregate_loss(k3, m, mode)
        )
        real = m != 0
        # log s_b, the loss's: the mean of the word's log ρ, capped at 10
        log_s = _sequence_log_ratio(np.where(real, new_lp - old_lp, 0.0), real)  # [B, 1]
        ratio = np.exp(log_s) * m  # [B, T] s_b on each of its word's tokens
        g = np.where(log_s < GSPO_LOG_RATIO_CAP, clipped_surrogate_grad(ratio, a, low, high), 0.0)
    else:
        raise ValueError(f"unknown loss {loss!r}: 'grpo' or 'gspo'")
    # + β ∂k3/∂log π_θ = β(1 − e^d),  d = log π_ref − log π_θ
    g = (g - beta * np.expm1(ref_lp - new_lp)) * _aggregation_weights(m, mode)
    grads = model.backward(batch, logp, g, cfg.temperature)
    return value, grads, _clipfrac(ratio, m, low, high)


# ---------------------------------------------------------------------------------------------
# Logging
# ---------------------------------------------------------------------------------------------


class _Logger:
    """Averages each metric over ``every`` steps, appends the means to ``out``, calls ``on_log``."""

    def __init__(self, phase: str, total: int, every: int, out: dict, on_log: OnLog | None):
        self.phase, self.total, self.every, self.on_log = phase, total, max(1, every), on_log
        self.out = out
        self.out.setdefault("step", [])
        self.pending: dict[str, list[float]] = {}

    def add(self, step: int, metrics: dict[str, float]) -> None:
        for k, v in metrics.items():
            self.pending.setdefault(k, []).append(float(v))
        if step % self.every and step != self.total:
            return
        means = {k: float(np.mean(v)) for k, v in self.pending.items()}
        self.pending = {}
        self.out["step"].append(step)
        for k, v in means.items():
            self.out.setdefault(k, []).append(v)
        if self.on_log is not None:
            self.on_log(self.phase, step, self.total, means)


# ---------------------------------------------------------------------------------------------
# The three phases
# ---------------------------------------------------------------------------------------------


def train_sft(cfg: DemoConfig, rng: np.random.Generator, log: _Logger) -> TinyLM:
    """Fit a fresh :class:`TinyLM` to :func:`make_corpus` by cross-entropy, with Adam."""
    corpus = Batch.from_words(make_corpus(rng, cfg.corpus_size, cfg.max_len), cfg.max_len)
    model = TinyLM(cfg.max_len)
    opt = Adam(model.params, cfg.sft_lr)
    for step in range(1, cfg.sft_steps + 1):
        idx = rng.choice(cfg.corpus_size, size=min(cfg.sft_batch, cfg.corpus_size), replace=False)
        loss, grads = sft_loss_and_grads(model, corpus.take(idx), cfg.temperature)
        opt.step(grads)
        log.add(step, {"loss": loss})
    return model


def _rollout_metrics(rm_score, k1, k3, mask, entropy: float) -> dict[str, float]:
    """What PPO and GRPO both log of a rollout: the mean RM score, the KL per word (k1 and k3
    summed over the response, averaged over words), the entropy, the length in tokens."""
    return {
        "rm_score": float(rm_score.mean()),
        "kl": float((k1 * mask).sum(axis=1).mean()),
        "kl_k3": float((k3 * mask).sum(axis=1).mean()),
        "entropy": entropy,
        "length": float(mask.sum(axis=1).mean()),
    }


def _minibatches(cfg: DemoConfig, n: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Row indices of each update on a rollout of ``n`` rows: ``ppo_epochs`` passes, each over
    a fresh permutation in ``ppo_minibatches`` slices."""
    size = -(-n // cfg.ppo_minibatches)  # rows per minibatch
    for _ in range(cfg.ppo_epochs):
        order = rng.permutation(n)
        for start in range(0, n, size):
            yield order[start : start + size]


def ppo_step(
    cfg: DemoConfig,
    actor: TinyLM,
    critic: ValueHead,
    ref: TinyLM,
    opt_actor: Adam,
    opt_critic: Adam,
    rng: np.random.Generator,
) -> dict[str, float]:
    """One PPO iteration: a rollout, then ``ppo_epochs × ppo_minibatches`` updates; its metrics."""
    tau = cfg.temperature
    # --- rollout: the actor writes, the reward model scores, the reference and critic look on ---
    batch = actor.sample(_random_prompts(rng, cfg.ppo_batch), rng, tau)
    m = batch.mask  # [B, T]
    rm_score = score_batch(batch.words())  # [B]
    old_lp, logp = actor.token_logprobs(batch, tau)  # [B, T], [B, T, V]
    ref_lp, _ = ref.token_logprobs(batch, tau)  # [B, T]
    old_v = critic.values(batch)  # [B, T]
    # r_t = −β(log π − log π_ref) + [t = last] R
    rewards = shape_token_rewards(rm_score, old_lp, ref_lp, m, cfg.kl_coef)
    # Â_t = δ_t + γλ Â_{t+1},  R_t = Â_t + V_t
    adv, returns = compute_gae(rewards, old_v, m, cfg.gamma, cfg.lam)
    # Â ← (Â − mean Â) / √(var Â + 1e-8) over the batch's response tokens (unbiased variance)
    adv = masked_whiten(adv, m)
    # KL(π ‖ π_ref) per token: tokens come from π, so p = π_ref, q = π; k1 = log π − log π_ref
    k1, _, k3 = kl_estimators(ref_lp, old_lp)
    # H(π_t) = −Σ_v π_t(v) log π_t(v), averaged over response tokens (log π: logits of π itself)
    entropy = float(token_entropy(logp[m != 0]).mean())
    # --- learning: several epochs of minibatch updates on the same rollout ---
    pl, vl, cf = [], [], []
    for idx in _minibatches(cfg, cfg.ppo_batch, rng):
        mb = batch.take(idx)
        # actor: L^CLIP = mean max(−Âρ, −Â clip(ρ, 1−ε, 1+ε)), one Adam step
        loss, grads, clipfrac = policy_loss_and_grads(
            actor, mb, old_lp[idx], adv[idx], cfg.clip_range, tau
        )
        opt_actor.step(grads)
        # critic: L^V = ½ mean max((V − R)², (V_clip − R)²), one Adam step
        v_loss, v_grads = value_loss_and_grads(
            critic, mb, old_v[idx], returns[idx], cfg.clip_range_value
        )
        opt_critic.step(v_grads)
        pl.append(loss)
        vl.append(v_loss)
        cf.append(clipfrac)
    return {
        **_rollout_metrics(rm_score, k1, k3, m, entropy),
        "policy_loss": float(np.mean(pl)),
        "value_loss": float(np.mean(vl)),
        "clipfrac": float(np.mean(cf)),
    }


def train_ppo(cfg: DemoConfig, sft: TinyLM, rng: np.random.Generator, log: _Logger) -> TinyLM:
    """PPO from the SFT model; the SFT model itself stays frozen as the reference."""
    actor, ref, critic = sft.copy(), sft, ValueHead(cfg.max_len)
    opt_actor, opt_critic = Adam(actor.params, cfg.actor_lr), Adam(critic.params, cfg.critic_lr)
    for step in range(1, cfg.ppo_steps + 1):
        log.add(step, ppo_step(cfg, actor, critic, ref, opt_actor, opt_critic, rng))
    return actor


def preference_pairs(
    ref: TinyLM, rng: np.random.Generator, n_prompts: int, k: int = 4, temperature: float = 1.0
) -> tuple[Batch, Batch]:
    """Best-of-k vs worst-of-k: ``k`` words per prompt from ``ref``, scored by the reward model.

    Returns ``(chosen, rejected)`` batches, one row per prompt; prompts whose ``k`` words all
    score the same are dropped.
    """
    prompts = np.repeat(_random_prompts(rng, n_prompts), k)  # [n·k], k copies of each prompt
    batch = ref.sample(prompts, rng, temperature)
    scores = score_batch(batch.words()).reshape(n_prompts, k)  # [n, k]
    best, worst = scores.argmax(axis=1), scores.argmin(axis=1)
    keep = np.nonzero(scores.max(axis=1) > scores.min(axis=1))[0]
    rows = np.arange(n_prompts) * k
    return batch.take(rows[keep] + best[keep]), batch.take(rows[keep] + worst[keep])


def train_dpo(
    cfg: DemoConfig,
    sft: TinyLM,
    rng: np.random.Generator,
    log: _Logger,
    eval_rng: np.random.Generator,
    loss: str = "dpo",
) -> TinyLM:
    """DPO (or, ``loss="simpo"``, SimPO) from the SFT model, also DPO's reference, on
    best/worst-of-``dpo_samples`` pairs."""
    tau = cfg.temperature
    chosen, rejected = preference_pairs(sft, rng, cfg.dpo_prompts, cfg.dpo_samples, tau)
    ref_w = sft.token_logprobs(chosen, tau)[0].sum(axis=1)  # [P] log π_ref(y_w), fixed
    ref_l = sft.token_logprobs(rejected, tau)[0].sum(axis=1)  # [P] log π_ref(y_l), fixed
    P = len(ref_w)  # pairs
    policy = sft.copy()
    opt = Adam(policy.params, cfg.dpo_lr)
    for step in range(1, cfg.dpo_steps + 1):
        idx = rng.choice(P, size=min(cfg.dpo_batch, P), replace=False)
        if loss == "simpo":  # no reference model
            value, grads, margin = simpo_loss_and_grads(
                policy, chosen.take(idx), rejected.take(idx), cfg.simpo_beta, cfg.simpo_gamma,
                tau,
            )
        else:
            value, grads, margin = dpo_loss_and_grads(
                policy,
                chosen.take(idx),
                rejected.take(idx),
                ref_w[idx],
                ref_l[idx],
                cfg.dpo_beta,
                tau,
            )
        opt.step(grads)
        metrics = {
            "loss": value,
            "margin": float(margin.mean()),
            "accuracy": float(np.mean(margin > 0)),
        }
        if step % cfg.log_every == 0 or step == cfg.dpo_steps:
            # how the reward model likes what the DPO policy writes now (not a training signal)
            words = policy.sample(_random_prompts(eval_rng, cfg.ppo_batch), eval_rng, tau).words()
            metrics["rm_score"] = float(score_batch(words).mean())
        log.add(step, metrics)
    return policy


# --8<-- [start:grpo_step]
def grpo_step(
    cfg: DemoConfig,
    actor: TinyLM,
    ref: TinyLM,
    opt: Adam,
    rng: np.random.Generator,
    variant: Variant = Variant(),
    noise_rng: np.random.Generator | None = None,
) -> dict[str, float]:
    """One GRPO iteration: sample a group per prompt, score, group advantages, then the same
    ``ppo_epochs × ppo_minibatches`` updates as PPO, with no critic; its metrics. ``variant``
    changes the loss (GSPO) or the sampler (a perturbed copy, ``noise_rng``) and the weights."""
    tau, G = cfg.temperature, cfg.grpo_group
    # --- sample: G words for each prompt, side by side (from a perturbed copy: a mismatch) ---
    prompts = np.repeat(_random_prompts(rng, cfg.grpo_prompts), G)  # [N], N = prompts × G
    noise = cfg.rollout_noise if variant.mismatch else 0.0
    batch = actor.sample(prompts, rng, tau, logit_noise=noise, noise_rng=noise_rng)
    m = batch.mask  # [N, T]
    # --- score: the same reward model as PPO, one number per word ---
    rm_score = score_batch(batch.words())  # [N]
    # --- advantages: each word against the other words of its group ---
    adv = group_advantages(rm_score, G)  # [N]
    # log π_old: the trainer's own log-probs of the words, not the sampler's (batch.logprobs)
    old_lp, logp = actor.token_logprobs(batch, tau)  # [N, T], [N, T, V]
    ref_lp, _ = ref.token_logprobs(batch, tau)  # [N, T]
    k1, _, k3 = kl_estimators(ref_lp, old_lp)
    # H(π_t) = −Σ_v π_t(v) log π_t(v), averaged over response tokens (log π: logits of π itself)
    entropy = float(token_entropy(logp[m != 0]).mean())
    # TIS: w = min(π_old / π_rollout, C) per token, a constant in the loss
    w = None
    if variant.tis:
        w = rollout_is_weights(old_lp, batch.logprobs, m, threshold=cfg.tis_threshold)
    # --- learning: the clipped surrogate with β·k3 in the loss, in PPO's minibatches ---
    losses, clipfracs = [], []
    for idx in _minibatches(cfg, len(prompts), rng):
        loss, grads, clipfrac = grpo_loss_and_grads(
            actor, batch.take(idx), old_lp[idx], adv[idx], ref_lp[idx], cfg, variant.loss,
            None if w is None else w[idx],
        )
        opt.step(grads)
        losses.append(loss)
        clipfracs.append(clipfrac)
    groups = rm_score.reshape(-1, G)
    metrics = {
        **_rollout_metrics(rm_score, k1, k3, m, entropy),
        "policy_loss": float(np.mean(losses)),
        "clipfrac": float(np.mean(clipfracs)),
        # share of groups whose words all scored the same: no signal, advantage 0
        "flat_groups": float(np.mean(groups.max(axis=1) == groups.min(axis=1))),
    }
    if variant.mismatch:
        metrics.update(_mismatch_metrics(old_lp, batch.logprobs, m, cfg.tis_threshold))
    return metrics
# --8<-- [end:grpo_step]


def _mismatch_metrics(train_lp, rollout_lp, mask, threshold: float) -> dict[str, float]:
    r"""What a run with a perturbed sampler logs of the mismatch, with TIS or without.

    ``rollout_kl``: KL(π_rollout ‖ π_train) per word, $\sum_t(\log\pi_{\text{rollout}} -
    \log\pi_{\text{train}})$ (k1; the tokens come from π_rollout) averaged over words;
    ``tis_truncated``: the share of tokens whose weight $\pi_{\text{train}}/\pi_{\text{rollout}}$
    reaches ``threshold``, where TIS cuts it (a run without TIS logs it too: what TIS would cut).
    """
    # tokens from q = π_rollout, p = π_train: k1 = log π_rollout − log π_train
    k1, _, _ = kl_estimators(train_lp, rollout_lp)  # [N, T]
    w = rollout_is_weights(train_lp, rollout_lp, mask, threshold=threshold)  # [N, T]
    return {
        "rollout_kl": float((k1 * mask).sum(axis=1).mean()),
        "tis_truncated": _masked_mean(w >= threshold, mask),
    }


def train_grpo(
    cfg: DemoConfig,
    sft: TinyLM,
    rng: np.random.Generator,
    log: _Logger,
    variant: Variant = Variant(),
    noise_rng: np.random.Generator | None = None,
) -> TinyLM:
    """GRPO (or a ``variant``) from the SFT model, also the frozen reference; no critic."""
    actor = sft.copy()
    opt = Adam(actor.params, cfg.grpo_lr)
    for step in range(1, cfg.grpo_steps + 1):
        log.add(step, grpo_step(cfg, actor, sft, opt, rng, variant, noise_rng))
    return actor


def _evaluate(model: TinyLM, cfg: DemoConfig, seed: np.random.SeedSequence) -> dict[str, Any]:
    """Mean RM score of ``eval_words`` fresh words, and a few examples with their scores."""
    rng = np.random.default_rng(seed)  # the same draws for every model, for a fair comparison
    words = model.sample(_random_prompts(rng, cfg.eval_words), rng, cfg.temperature).words()
    scores = score_batch(words)
    shown = [{"word": w, "score": float(s)} for w, s in zip(words, scores, strict=True)]
    return {
        "rm_score": float(scores.mean()),
        "length": float(np.mean([len(w) for w in words])),
        "examples": shown[: cfg.show_words],
    }


def run(config: DemoConfig | Mapping[str, Any] | None = None, on_log: OnLog | None = None) -> dict:
    r"""Run SFT, then PPO, DPO, GRPO and the runs beside it (each from the SFT model); return every
    logged metric.

    Args:
        config: a :class:`DemoConfig`, a mapping of some of its fields (the rest default), or
            ``None`` for the defaults. Use :data:`BROWSER_CONFIG` in Pyodide.
        on_log: called as ``on_log(phase, step, total, metrics)`` at every logging step, with
            ``phase`` in ``"sft"``, ``"ppo"``, ``"dpo"``, ``"simpo"``, ``"grpo"`` and, with
            ``grpo_variants``, ``"gspo"``, ``"grpo_mismatch"``, ``"grpo_tis"``, in that order, and
            ``metrics`` a dict of floats, the means since the previous logging step.

    Returns:
        ``{"config": {...}, "sft": {"step", "loss"}, "ppo": {"step", "rm_score", "kl", "kl_k3",
        "entropy", "policy_loss", "value_loss", "clipfrac", "length"}, "dpo": {"step", "loss",
        "margin", "accuracy", "rm_score"}, "simpo": {the same}, "grpo": {"step", "rm_score", "kl",
        "kl_k3", "entropy", "policy_loss", "clipfrac", "flat_groups", "length"}, "gspo": {the same},
        "grpo_mismatch"|"grpo_tis": {the same, "rollout_kl", "tis_truncated"}, "eval":
        {"sft"|"ppo"|"dpo"|"grpo"|…: {"rm_score", "length", "examples"}}}``, the runs beside GRPO
        only with ``grpo_variants``; every metric a list with one float per logging step.
        JSON-ready, and identical for identical configs.

    The metrics: ``rm_score``, the mean RM score of the batch's words; ``kl``, the mean over
    words of $\sum_t k_1 = \sum_t(\log\pi - \log\pi_{\text{ref}})$, and ``kl_k3`` the same with
    $k_3$; ``entropy``, the mean per-token entropy of the actor on its own words; ``clipfrac``,
    the share of tokens with $|\rho - 1| > \epsilon$; ``length``, tokens per response (letters +
    EOS); ``margin``, the mean of $\beta[(\log\pi - \log\pi_{\text{ref}})(y_w) - (\log\pi -
    \log\pi_{\text{ref}})(y_l)]$ (SimPO's: $\beta$ times the difference of the words' mean token
    log-probs); ``accuracy``, the share of pairs with a positive margin;
    DPO's ``rm_score`` is that of fresh words from the DPO policy (not a training signal);
    ``flat_groups``, the share of GRPO's groups whose words all scored the same; GRPO's and
    GSPO's ``clipfrac``, the share of tokens whose ratio ($\rho_t$; GSPO: its word's $s$) lies
    outside the clip range; ``rollout_kl``, the mean over words of $\sum_t(\log\pi_{\text{rollout}}
    - \log\pi_{\text{train}})$, KL(π_rollout ‖ π_train) on the sampler's words, and
    ``tis_truncated``, the share of tokens with $\pi_{\text{train}}/\pi_{\text{rollout}} > C$
    (both logged by the two mismatch runs, with TIS and without). The mismatch runs'
    ``rm_score`` is that of the perturbed copy's words, what the trainer sees.

    From Pyodide, ``on_log`` may be a JavaScript function: it receives ``metrics`` as a
    ``PyProxy`` (``metrics.toJs({dict_converter: Object.fromEntries})`` makes it an object).
    """
    if config is None:
        cfg = DemoConfig()
    elif isinstance(config, DemoConfig):
        cfg = config
    else:
        cfg = DemoConfig.from_dict(config)
    seeds = np.random.SeedSequence(cfg.seed).spawn(7)
    seq_sft, seq_ppo, seq_dpo, seq_eval, seq_dpo_eval, seq_grpo, seq_noise = seeds
    result: dict[str, Any] = {"config": cfg.to_dict(), "sft": {}, "ppo": {}, "dpo": {},
                              "simpo": {}, "grpo": {}}
    every = cfg.log_every

    sft = train_sft(
        cfg,
        np.random.default_rng(seq_sft),
        _Logger("sft", cfg.sft_steps, every, result["sft"], on_log),
    )
    actor = train_ppo(
        cfg,
        sft,
        np.random.default_rng(seq_ppo),
        _Logger("ppo", cfg.ppo_steps, every, result["ppo"], on_log),
    )
    dpo_policy = train_dpo(
        cfg,
        sft,
        np.random.default_rng(seq_dpo),
        _Logger("dpo", cfg.dpo_steps, every, result["dpo"], on_log),
        np.random.default_rng(seq_dpo_eval),
    )
    # DPO's seeds: the same pairs, minibatches and evaluation prompts
    simpo_policy = train_dpo(
        cfg,
        sft,
        np.random.default_rng(seq_dpo),
        _Logger("simpo", cfg.dpo_steps, every, result["simpo"], on_log),
        np.random.default_rng(seq_dpo_eval),
        loss="simpo",
    )
    grpo_policy = train_grpo(
        cfg,
        sft,
        np.random.default_rng(seq_grpo),
        _Logger("grpo", cfg.grpo_steps, every, result["grpo"], on_log),
    )
    models = {"sft": sft, "ppo": actor, "dpo": dpo_policy, "simpo": simpo_policy,
              "grpo": grpo_policy}
    if cfg.grpo_variants:
        for name, variant in GRPO_VARIANTS.items():
            # GRPO's seed: the same prompts and draws as GRPO's until the words differ
            result[name] = {}
            models[name] = train_grpo(
                cfg,
                sft,
                np.random.default_rng(seq_grpo),
                _Logger(name, cfg.grpo_steps, every, result[name], on_log),
                variant,
                np.random.default_rng(seq_noise),
            )
    result["eval"] = {name: _evaluate(model, cfg, seq_eval) for name, model in models.items()}
    return result


def with_steps(cfg: DemoConfig, **steps: int | None) -> DemoConfig:
    """``cfg`` with the given step counts replaced (``None`` keeps the current one)."""
    return replace(cfg, **{k: v for k, v in steps.items() if v is not None})
