"""NumPy reference implementations of the RLHF operators taught on this site.

Each function is the reference the lessons' PyTorch code is checked against; its docstring gives
the formula, the shapes, the conventions, and where the source material or the big libraries
differ. An exercise's reference is the function of its own name (or the one its lesson file
names: ``REFERENCE = "compute_gae_episode"``): a new operator is a function in one of these
modules, imported here.
"""

from __future__ import annotations

from . import dapo, dpo, gae, grpo, kl, logits, offpolicy, policy_losses, ppo, rewards, whiten
from .dapo import *  # noqa: F403
from .dpo import *  # noqa: F403  (each module's __all__ is the package's)
from .gae import *  # noqa: F403
from .grpo import *  # noqa: F403
from .kl import *  # noqa: F403
from .logits import *  # noqa: F403
from .offpolicy import *  # noqa: F403
from .policy_losses import *  # noqa: F403
from .ppo import *  # noqa: F403
from .rewards import *  # noqa: F403
from .whiten import *  # noqa: F403

__all__ = sorted([*dapo.__all__, *dpo.__all__, *gae.__all__, *grpo.__all__, *kl.__all__,
                  *logits.__all__, *offpolicy.__all__, *policy_losses.__all__, *ppo.__all__,
                  *rewards.__all__, *whiten.__all__])
__version__ = "0.1.0"
