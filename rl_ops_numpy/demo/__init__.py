"""Toy RLHF in pure NumPy: SFT, then PPO, DPO and GRPO (and beside GRPO: GSPO, and GRPO on rollouts
from a perturbed copy, without and with TIS), on a tiny next-token model.

Run it with ``python -m rl_ops_numpy.demo`` (``--help`` for the flags), or from Python, as the
browser worker does::

    from rl_ops_numpy.demo import BROWSER_CONFIG, run
    result = run(BROWSER_CONFIG, on_log=lambda phase, step, total, metrics: ...)

``run`` returns the dict the ``--json`` file holds. The pieces:

- :mod:`.model`: the toy language model (actor), the value head (critic), Adam; gradients by hand.
- :mod:`.reward`: the rule-based reward model, one named function per term.
- :mod:`.config`: every knob of the run; :mod:`.data`: the corpus, the prompts, DPO's pairs.
- :mod:`.sft`, :mod:`.ppo`, :mod:`.dpo` (and SimPO), :mod:`.grpo` (and the runs beside it): one
  phase each, its losses' gradients by hand, built on the operators of :mod:`rl_ops_numpy`;
  :mod:`.common`: what several of them share.
- :mod:`.train`: :func:`run`, which chains the phases.
- :mod:`.plot`: the optional matplotlib figure; :mod:`.__main__`: the command line.
"""

from .config import BROWSER_CONFIG, DemoConfig
from .model import Batch, TinyLM, ValueHead
from .reward import reward_terms, score
from .train import run

__all__ = [
    "BROWSER_CONFIG",
    "Batch",
    "DemoConfig",
    "TinyLM",
    "ValueHead",
    "reward_terms",
    "run",
    "score",
]
