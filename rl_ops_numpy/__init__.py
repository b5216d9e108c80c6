"""NumPy reference implementations of the RLHF operators taught on this site.

Each function is the reference the lessons' PyTorch code is checked against; its docstring gives
the formula, the shapes, the conventions, and where the source material or the big libraries
differ. An exercise names its reference in its lesson file (``REFERENCE = "compute_gae"``): a
new operator is a function in one of these modules, imported here.
"""

from __future__ import annotations

from .dpo import dpo_loss
from .gae import compute_gae, compute_gae_episode, reverse_discounted_sum
from .grpo import (
    aggregate_loss,
    group_advantages,
    grpo_policy_loss,
    reinforce_pp_advantages,
    reward_model_loss,
    rloo_advantages,
)
from .kl import kl_estimators
from .logits import entropy_from_logits, token_logprobs
from .ppo import importance_ratio, policy_surrogate_loss, ppo_clipped_objective, value_clipped_loss
from .rewards import last_token_index, shape_token_rewards
from .whiten import masked_whiten

__all__ = [
    "aggregate_loss",
    "compute_gae",
    "compute_gae_episode",
    "dpo_loss",
    "entropy_from_logits",
    "group_advantages",
    "grpo_policy_loss",
    "importance_ratio",
    "kl_estimators",
    "last_token_index",
    "masked_whiten",
    "policy_surrogate_loss",
    "ppo_clipped_objective",
    "reinforce_pp_advantages",
    "reverse_discounted_sum",
    "reward_model_loss",
    "rloo_advantages",
    "shape_token_rewards",
    "token_logprobs",
    "value_clipped_loss",
]
__version__ = "0.1.0"
