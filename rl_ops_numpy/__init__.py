"""NumPy reference implementations of the RLHF operators taught on this site.

Each function is the reference the lessons' PyTorch code is checked against; its docstring gives
the formula, the shapes, the conventions, and where the source material or the big libraries
differ.

The operators are imported on first use, so that the browser worker can run plain Python from
``rl_ops_numpy.browser`` before numpy has been downloaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# public name -> module that defines it
_OPERATORS = {
    "aggregate_loss": "grpo",
    "compute_gae": "gae",
    "compute_gae_episode": "gae",
    "dpo_loss": "dpo",
    "group_advantages": "grpo",
    "grpo_policy_loss": "grpo",
    "importance_ratio": "ppo",
    "kl_estimators": "kl",
    "masked_whiten": "whiten",
    "policy_surrogate_loss": "ppo",
    "ppo_clipped_objective": "ppo",
    "reinforce_pp_advantages": "grpo",
    "reward_model_loss": "grpo",
    "rloo_advantages": "grpo",
    "shape_token_rewards": "rewards",
    "value_clipped_loss": "ppo",
}

__all__ = [
    "aggregate_loss",
    "compute_gae",
    "compute_gae_episode",
    "dpo_loss",
    "group_advantages",
    "grpo_policy_loss",
    "importance_ratio",
    "kl_estimators",
    "masked_whiten",
    "policy_surrogate_loss",
    "ppo_clipped_objective",
    "reinforce_pp_advantages",
    "reward_model_loss",
    "rloo_advantages",
    "shape_token_rewards",
    "value_clipped_loss",
]
__version__ = "0.1.0"

if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from .dpo import dpo_loss
    from .gae import compute_gae, compute_gae_episode
    from .grpo import (
        aggregate_loss,
        group_advantages,
        grpo_policy_loss,
        reinforce_pp_advantages,
        reward_model_loss,
        rloo_advantages,
    )
    from .kl import kl_estimators
    from .ppo import (
        importance_ratio,
        policy_surrogate_loss,
        ppo_clipped_objective,
        value_clipped_loss,
    )
    from .rewards import shape_token_rewards
    from .whiten import masked_whiten


def __getattr__(name: str):
    if name in _OPERATORS:
        value = getattr(importlib.import_module(f".{_OPERATORS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rl_ops_numpy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
