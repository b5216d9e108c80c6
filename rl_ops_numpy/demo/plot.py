"""Optional PNG of the curves (RM score, KL, entropy, DPO margin; with the runs beside GRPO, GSPO's
and the rollout mismatch's), drawn with matplotlib.

matplotlib is not a dependency of ``rl_ops_numpy``; it comes with the ``demo`` extra
(``pip install 'rl_ops_numpy[demo]'``) and is imported only when a plot is asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["INSTALL_HINT", "MatplotlibMissing", "require_matplotlib", "save_plot"]

INSTALL_HINT = "pip install 'rl_ops_numpy[demo]'"


class MatplotlibMissing(RuntimeError):
    """Raised when a plot is asked for and matplotlib cannot be imported."""


def require_matplotlib() -> Any:
    """Import matplotlib with a file-only backend (Agg) and return ``matplotlib.pyplot``.

    Raises:
        MatplotlibMissing: with the command that installs it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise MatplotlibMissing(
            f"--plot needs matplotlib, which is not installed. Install it with:\n"
            f"    {INSTALL_HINT}\n(or: pip install matplotlib)"
        ) from err
    return plt


# the legend's name of each phase
NAMES = {
    "ppo": "PPO",
    "dpo": "DPO",
    "simpo": "SimPO",
    "grpo": "GRPO",
    "gspo": "GSPO",
    "grpo_mismatch": "GRPO + mismatch",
    "grpo_tis": "GRPO + mismatch + TIS",
}
# a phase keeps its colour in every panel (matplotlib's default cycle)
COLOURS = {
    "ppo": "C0",
    "dpo": "C0",
    "simpo": "C1",
    "grpo": "C1",
    "gspo": "C2",
    "grpo_mismatch": "C3",
    "grpo_tis": "C4",
}
MISMATCH = ("grpo_mismatch", "grpo_tis")

# (id, phases, metric, title, y label), one per panel: the PNG's, and the demo page's charts
# (site_build/plugin.py demo_widget ships (id, metric, phases); js/strings.toml titles them by id)
PANELS = [
    ("rm_score", ("ppo", "grpo"), "rm_score", "Reward-model score", "mean RM score"),
    ("kl", ("ppo", "grpo"), "kl", "KL(π ‖ π_ref) per word", "nats (k1, summed over tokens)"),
    ("entropy", ("ppo", "grpo"), "entropy", "Policy entropy per token", "nats"),
    ("margin", ("dpo", "simpo"), "margin", "DPO and SimPO: preference margin",
     "reward margin (each loss's own)"),
    ("gspo", ("grpo", "gspo"), "rm_score", "GSPO next to GRPO: RM score", "mean RM score"),
    ("mismatch", ("grpo", *MISMATCH), "rm_score", "Rollout mismatch: RM score", "mean RM score"),
    ("rollout_kl", MISMATCH, "rollout_kl", "KL(π_rollout ‖ π_train) per word",
     "nats (k1, summed over tokens)"),
    ("tis_truncated", MISMATCH, "tis_truncated", "Tokens whose IS weight exceeds C",
     "share of tokens"),
]


def save_plot(result: dict[str, Any], path: str | Path) -> Path:
    """Draw every panel whose runs are in ``result`` (the last four need the runs beside GRPO)
    against step; save as PNG."""
    plt = require_matplotlib()
    panels = [p[1:] for p in PANELS if all(phase in result for phase in p[1])]
    rows = -(-len(panels) // 2)
    fig, axes = plt.subplots(rows, 2, figsize=(10, 3.5 * rows), constrained_layout=True)
    for ax in axes.flat[len(panels) :]:
        ax.remove()
    for ax, (phases, key, title, ylabel) in zip(axes.flat, panels, strict=False):
        for phase in phases:
            log = result[phase]
            ax.plot(
                log["step"],
                log[key],
                marker=".",
                linewidth=1.5,
                color=COLOURS[phase],
                label=NAMES[phase],
            )
        if len(phases) > 1:
            ax.legend()
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Toy RLHF in NumPy (seed {result['config']['seed']})")
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
