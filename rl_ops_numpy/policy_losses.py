r"""The policy losses verl and TRL offer beside PPO's clip: GSPO's sequence-level ratio, CISPO's
clipped importance weight, SAPO's soft gate, and KL-Cov's covariance-selected penalty.

Shapes: ``[B, T]`` log-probs under the policy being trained (``new_logprobs``) and the one that
sampled (``old_logprobs``); ``advantages`` ``[B]`` (one per response) or ``[B, T]``; ``mask``
``[B, T]``, 1 on response tokens and 0 on padding (any layout). Each loss returns a scalar.

What the docstrings say about verl, TRL and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` and tested against their own code (``tests/test_peers.py``).
"""

from __future__ import annotations

__all__: list[str] = []
