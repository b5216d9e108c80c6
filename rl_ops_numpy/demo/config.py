"""The run's settings: :class:`DemoConfig` (every knob, the CLI's defaults and the browser's smaller
run), :class:`Variant` (what a run beside GRPO changes) and :func:`with_steps`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

__all__ = ["BROWSER_CONFIG", "GRPO_VARIANTS", "DemoConfig", "Variant", "with_steps"]


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


def with_steps(cfg: DemoConfig, **steps: int | None) -> DemoConfig:
    """``cfg`` with the given step counts replaced (``None`` keeps the current one)."""
    return replace(cfg, **{k: v for k, v in steps.items() if v is not None})
