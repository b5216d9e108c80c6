"""Parity vectors: what verl, TRL and OpenRLHF compute, at the versions pinned in ``pins.toml``.

``python -m peers`` (``make peers``) downloads exactly the pinned wheels from PyPI with pip
(``--require-hashes``), checks their sha256 again, lifts the functions our references claim to
match out of the wheels' source with ``ast`` (importing verl pulls in ray, TRL transformers,
OpenRLHF deepspeed), runs them with torch and NumPy on seeded inputs, and writes the inputs, the
library's outputs and their provenance to ``tests/peers/<library>.json``. ``tests/test_peers.py``
compares every reference in ``rl_ops_numpy`` with those files, offline.

Modules: ``fetch`` (pins, download, sha256), ``lift`` (a library's functions from its source,
with stand-ins for what they import), ``inputs`` (the seeded, exactly representable inputs),
``vectors`` (the JSON format), and one module per library: ``verl``, ``trl``, ``openrlhf``.
"""
