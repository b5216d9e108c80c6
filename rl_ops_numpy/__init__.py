"""NumPy reference implementations of the RLHF operators taught on this site.

Each function is the reference the lessons' PyTorch code is checked against; its docstring gives
the formula, the shapes, the conventions, and where the source material or the big libraries
differ.
"""

from .dpo import dpo_loss
from .gae import compute_gae, compute_gae_episode
from .kl import kl_estimators
from .ppo import importance_ratio, policy_surrogate_loss, ppo_clipped_objective, value_clipped_loss
from .rewards import shape_token_rewards

__all__ = [
    "compute_gae",
    "compute_gae_episode",
    "dpo_loss",
    "importance_ratio",
    "kl_estimators",
    "policy_surrogate_loss",
    "ppo_clipped_objective",
    "shape_token_rewards",
    "value_clipped_loss",
]
__version__ = "0.1.0"
