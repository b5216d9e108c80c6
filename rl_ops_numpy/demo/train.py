r""":func:`run`: the toy RLHF run, its phases chained (each from the SFT model), then each final
model scored on the same fresh prompts.

The phases, one module each:

1. :mod:`.sft`: **SFT**, cross-entropy on a babble corpus (:mod:`.data`); the result is every
   later phase's starting point and its frozen reference.
2. :mod:`.ppo`: **PPO**, actor, critic, reference and reward model; GAE, the clipped surrogate
   and the clipped value loss.
3. :mod:`.dpo`: **DPO** on best/worst-of-k pairs, and **SimPO** beside it on the same pairs.
4. :mod:`.grpo`: **GRPO**, group advantages and no critic; beside it (``grpo_variants``) GSPO
   and GRPO on a perturbed copy's rollouts, without and with TIS.

:mod:`.config` holds every knob, :mod:`.common` what several phases share.

The operators of :mod:`rl_ops_numpy` compute every number the run reports and trains on: the
log-probs and entropies (``token_logprobs``' log-sum-exp inside the model, ``token_entropy``),
the token rewards, the advantages (``compute_gae``, ``masked_whiten``, ``group_advantages``),
the KL, the TIS weights and every loss. They return values, not gradients, so each loss's
gradient w.r.t. the log-probs or values is written by hand in its phase's module (in
``*_loss_and_grads``: the backward part only, from the operator's inputs and output) and pushed
through the model by :meth:`TinyLM.backward <.model.TinyLM.backward>`; the tests check each
against finite differences of the operator's value.

All randomness comes from ``numpy.random.default_rng``, one generator per phase spawned from the
seed, so a seed gives bit-identical numbers and each phase's draws do not depend on the step
counts of the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .common import OnLog, _Logger
from .config import BROWSER_CONFIG, GRPO_VARIANTS, DemoConfig
from .data import _random_prompts
from .dpo import train_dpo
from .grpo import train_grpo
from .model import TinyLM
from .ppo import train_ppo
from .reward import score_batch
from .sft import train_sft

__all__ = ["BROWSER_CONFIG", "DemoConfig", "run"]


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
    result: dict[str, Any] = {"config": cfg.to_dict()}

    def log(phase: str, total: int) -> _Logger:
        """The logger of ``phase``, which fills ``result[phase]``."""
        return _Logger(phase, total, cfg.log_every, result.setdefault(phase, {}), on_log)

    rng = np.random.default_rng
    sft = train_sft(cfg, rng(seq_sft), log("sft", cfg.sft_steps))
    models = {
        "sft": sft,
        "ppo": train_ppo(cfg, sft, rng(seq_ppo), log("ppo", cfg.ppo_steps)),
        "dpo": train_dpo(cfg, sft, rng(seq_dpo), log("dpo", cfg.dpo_steps), rng(seq_dpo_eval)),
        # DPO's seeds: the same pairs, minibatches and evaluation prompts
        "simpo": train_dpo(
            cfg, sft, rng(seq_dpo), log("simpo", cfg.dpo_steps), rng(seq_dpo_eval), loss="simpo"
        ),
        "grpo": train_grpo(cfg, sft, rng(seq_grpo), log("grpo", cfg.grpo_steps)),
    }
    if cfg.grpo_variants:
        for name, variant in GRPO_VARIANTS.items():
            # GRPO's seed: the same prompts and draws as GRPO's until the words differ
            models[name] = train_grpo(
                cfg, sft, rng(seq_grpo), log(name, cfg.grpo_steps), variant, rng(seq_noise)
            )
    result["eval"] = {name: _evaluate(model, cfg, seq_eval) for name, model in models.items()}
    return result
