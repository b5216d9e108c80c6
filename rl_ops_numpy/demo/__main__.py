"""Command line: ``python -m rl_ops_numpy.demo [--seed N] [--json PATH] [--plot PATH] …``.

Runs SFT, PPO, DPO and GRPO on the toy model (and, beside GRPO, GSPO and GRPO on rollouts from a
perturbed copy of the policy, without and with TIS), shows a progress bar on stderr, prints a table
of the logged metrics of each phase and a summary on stdout, and optionally writes them as JSON and
as a PNG of the curves.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TextIO

from .config import DemoConfig, with_steps
from .plot import MatplotlibMissing, require_matplotlib, save_plot
from .train import run

__all__ = ["fifths", "format_table", "main"]

_COLUMNS = {
    "sft": ["loss"],
    "ppo": [
        "rm_score",
        "kl",
        "kl_k3",
        "entropy",
        "policy_loss",
        "value_loss",
        "clipfrac",
        "length",
    ],
    "dpo": ["loss", "margin", "accuracy", "rm_score"],
    "simpo": ["loss", "margin", "accuracy", "rm_score"],
    "grpo": [
        "rm_score",
        "kl",
        "kl_k3",
        "entropy",
        "policy_loss",
        "clipfrac",
        "flat_groups",
        "length",
    ],
    "gspo": ["rm_score", "kl", "entropy", "policy_loss", "clipfrac", "flat_groups", "length"],
    "grpo_mismatch": ["rm_score", "kl", "entropy", "rollout_kl", "tis_truncated", "length"],
    "grpo_tis": ["rm_score", "kl", "entropy", "rollout_kl", "tis_truncated", "length"],
}
_TITLES = {
    "sft": "SFT: cross-entropy on the babble corpus",
    "ppo": "PPO: actor + critic against the rule-based RM, KL to the SFT reference",
    "dpo": "DPO: best-vs-worst-of-4 pairs from the SFT model",
    "simpo": "SimPO: the same pairs, mean token log-probs, no reference model, β = {simpo_beta:g}, "
    "γ = {simpo_gamma:g}",
    "grpo": "GRPO: 4 words per prompt, group-relative advantages, k3 in the loss, no critic",
    "gspo": "GSPO: GRPO with the sequence ratio s = exp(mean_t log ρ_t), ε = {gspo_clip_low:g} / "
    "{gspo_clip_high:g}",
    "grpo_mismatch": "GRPO on rollouts from a perturbed copy (logit noise σ = {rollout_noise:g}), "
    "uncorrected",
    "grpo_tis": "GRPO on the same perturbed rollouts, each token's loss × min(π_train / "
    "π_rollout, {tis_threshold:g}) (TIS)",
}


def _count(text: str) -> int:
    """argparse type: an integer ≥ 1."""
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _noise(text: str) -> float:
    """argparse type: a float ≥ 0."""
    x = float(text)
    if not x >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text}")
    return x


def _parser() -> argparse.ArgumentParser:
    d = DemoConfig()
    p = argparse.ArgumentParser(
        prog="python -m rl_ops_numpy.demo",
        description=(
            "Toy RLHF in pure NumPy. A tiny next-token model (bigram + position table) is first "
            "fine-tuned on babble words (SFT), then trained three ways from that SFT model: PPO "
            "against a rule-based reward model (length near 15, distinct letters, vowel/consonant "
            "alternation, penalties for very short words and repeated letters) with the SFT model "
            "as the KL reference, DPO on best-vs-worst-of-4 pairs, and GRPO (groups of 4 words "
            "per prompt, no critic) against the same reward model. Beside GRPO, from the same SFT "
            "model and seed: GSPO (the sequence-level ratio), and GRPO on words sampled by a "
            "perturbed copy of the policy (noise on its logits, as a low-precision inference "
            "engine), without correction and with TIS (each token's loss times min(π_train / "
            "π_rollout, C)). A progress bar goes to stderr; a table of every logged metric and a "
            "summary go to stdout."
        ),
        epilog=(
            'JSON layout: {"config": {...}, "sft": {"step": [...], "loss": [...]}, '
            '"ppo": {"step", "rm_score", "kl", "kl_k3", "entropy", "policy_loss", '
            '"value_loss", "clipfrac", "length"}, "dpo": {"step", "loss", "margin", '
            '"accuracy", "rm_score"}, "grpo": {"step", "rm_score", "kl", "kl_k3", "entropy", '
            '"policy_loss", "clipfrac", "flat_groups", "length"}, "gspo": {the same keys}, '
            '"grpo_mismatch" and "grpo_tis": {the same, and "rollout_kl", "tis_truncated"}, '
            '"eval": {"sft"|"ppo"|"dpo"|"grpo"|…: {"rm_score", "length", "examples"}}} (the '
            "three runs beside GRPO only with --grpo-variants, the default without --browser); "
            "each metric is a list, one value per logging step (the mean over the steps since the "
            "previous one). The same seed and flags give an identical file."
        ),
    )
    b = DemoConfig.browser()
    p.add_argument("--seed", type=int, default=d.seed, help="random seed (default %(default)s)")
    for phase, what in (("sft", "SFT steps"), ("ppo", "PPO iterations"), ("dpo", "DPO steps"),
                        ("grpo", "GRPO iterations")):
        p.add_argument(
            f"--{phase}-steps",
            type=_count,
            default=None,
            metavar="N",
            help=f"{what} (default {getattr(d, f'{phase}_steps')}; "
            f"{getattr(b, f'{phase}_steps')} with --browser)",
        )
    p.add_argument(
        "--log-every",
        type=_count,
        default=None,
        metavar="N",
        help=f"steps per logged point, each the mean of its steps (default {d.log_every})",
    )
    p.add_argument(
        "--grpo-variants",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also run GSPO and GRPO on perturbed rollouts without and with TIS, each from the SFT "
        "model with GRPO's seed (default: on; off with --browser)",
    )
    p.add_argument(
        "--rollout-noise",
        type=_noise,
        default=None,
        metavar="SIGMA",
        help="σ of the noise on each logit of the perturbed copy that samples the mismatch runs' "
        f"words (default {d.rollout_noise:g}, fp8 rounding's spread for logits between 8 and 16; "
        "0: no mismatch)",
    )
    p.add_argument(
        "--browser",
        action="store_true",
        help="use the smaller configuration the browser runs (DemoConfig.browser())",
    )
    p.add_argument("--json", metavar="PATH", help="write every logged metric to PATH as JSON")
    p.add_argument(
        "--plot",
        metavar="PATH",
        help="write a PNG of RM score, KL, entropy (PPO and GRPO), DPO margin and, with the runs "
        "beside GRPO, GSPO's and the mismatch runs' RM score, KL(rollout ‖ train) and truncated "
        "share to PATH "
        "(needs matplotlib: pip install 'rl_ops_numpy[demo]')",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return p


def format_table(log: dict[str, list], columns: Sequence[str]) -> str:
    """Fixed-width text table: one row per logging step, one column per metric."""
    widths = [max(13, len(c) + 2) for c in columns]
    head = f"{'step':>6}" + "".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True))
    rows = [head, "-" * len(head)]
    for i, step in enumerate(log["step"]):
        cells = (f"{log[c][i]:>{w}.4f}" for c, w in zip(columns, widths, strict=True))
        rows.append(f"{step:>6}" + "".join(cells))
    return "\n".join(rows)


class _Progress:
    """``\\r[PPO] ████████░░░░░░░░ 40/100`` on a stream, one line per phase."""

    def __init__(self, stream: TextIO, width: int = 24):
        self.stream, self.width = stream, width
        ascii_only = "utf" not in (getattr(stream, "encoding", None) or "").lower()
        self.full, self.empty = ("#", "-") if ascii_only else ("█", "░")

    def __call__(self, phase: str, step: int, total: int, metrics: dict[str, float]) -> None:
        filled = round(self.width * step / max(1, total))
        bar = self.full * filled + self.empty * (self.width - filled)
        self.stream.write(f"\r[{phase.upper()}] {bar} {step}/{total}")
        if step == total:
            self.stream.write("\n")
        self.stream.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo from the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.plot:
        # fail before training, not after it
        try:
            require_matplotlib()
        except MatplotlibMissing as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    base = DemoConfig.browser(seed=args.seed) if args.browser else DemoConfig(seed=args.seed)
    cfg = with_steps(
        base,
        sft_steps=args.sft_steps,
        ppo_steps=args.ppo_steps,
        dpo_steps=args.dpo_steps,
        grpo_steps=args.grpo_steps,
        log_every=args.log_every,
    )
    if args.grpo_variants is not None:
        cfg = replace(cfg, grpo_variants=args.grpo_variants)
    if args.rollout_noise is not None:
        cfg = replace(cfg, rollout_noise=args.rollout_noise)
    progress = None if args.no_progress else _Progress(sys.stderr)

    def on_log(phase: str, step: int, total: int, metrics: dict[str, float]) -> None:
        if progress is not None:
            progress(phase, step, total, metrics)

    start = time.perf_counter()
    result = run(cfg, on_log)
    elapsed = time.perf_counter() - start

    for phase, columns in _COLUMNS.items():
        if phase in result:
            print(f"\n{_TITLES[phase].format(**result['config'])}")
            print(format_table(result[phase], columns))
    _print_summary(result)
    print(f"\n{elapsed:.1f} s (seed {cfg.seed})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"metrics written to {args.json}")
    if args.plot:
        print(f"plot written to {save_plot(result, args.plot)}")
    return 0


# what the summary gives of each run's end, where the run logs it
_ENDS = ["rm_score", "kl", "entropy", "length", "rollout_kl", "tis_truncated"]


def fifths(values: Sequence[float]) -> tuple[float, float]:
    """Means of the first and of the last fifth of a run's logged points (at least one each):
    where a curve starts and where it ends, the numbers the demo page quotes."""
    n = max(1, len(values) // 5)
    return statistics.fmean(values[:n]), statistics.fmean(values[-n:])


def _print_summary(result: dict[str, Any]) -> None:
    print("\nWhere each run ends (the mean of the last fifth of its logged points):")
    for phase, log in result.items():
        if phase in _COLUMNS and "rm_score" in log:
            ends = "  ".join(f"{k} {fifths(log[k])[1]:.4f}" for k in _ENDS if k in log)
            print(f"  {phase.upper():<13} {ends}")
    print(
        "\nWhat each model writes (same prompts; mean RM score of "
        f"{result['config']['eval_words']} words, mean length):"
    )
    for name, ev in result["eval"].items():
        words = " ".join(e["word"] for e in ev["examples"])
        print(f"  {name.upper():<13} RM {ev['rm_score']:6.3f}  len {ev['length']:5.2f}  {words}")


if __name__ == "__main__":
    sys.exit(main())
