"""Optional PNG of the four curves (RM score, KL, entropy, DPO margin), drawn with matplotlib.

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


def save_plot(result: dict[str, Any], path: str | Path) -> Path:
    """Draw RM score, KL and entropy (PPO and GRPO) and the margin (DPO) against step; save."""
    plt = require_matplotlib()
    panels = [
        (("ppo", "grpo"), "rm_score", "Reward-model score", "mean RM score"),
        (("ppo", "grpo"), "kl", "KL(π ‖ π_ref) per word", "nats (k1, summed over tokens)"),
        (("ppo", "grpo"), "entropy", "Policy entropy per token", "nats"),
        (("dpo",), "margin", "DPO: preference margin", "β·(log-ratio_w − log-ratio_l)"),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), constrained_layout=True)
    for ax, (phases, key, title, ylabel) in zip(axes.flat, panels, strict=True):
        for phase in phases:
            log = result[phase]
            ax.plot(log["step"], log[key], marker=".", linewidth=1.5, label=phase.upper())
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
