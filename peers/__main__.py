"""``python -m peers``: fetch the pinned wheels and write ``tests/peers/<library>.json``."""

from __future__ import annotations

import sys

import torch

from . import openrlhf, trl, trl_ppo, verl
from .fetch import ROOT, fetch, pins
from .vectors import write

OUT = ROOT / "tests" / "peers"
GENERATORS = {"verl": verl.generate, "trl": trl.generate, "openrlhf": openrlhf.generate,
              "trl_ppo": trl_ppo.generate}


def main(argv: list[str]) -> int:
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # one thread: the same summation order on every run
    wanted = argv or list(GENERATORS)
    for key, pin in pins().items():
        if key not in wanted or key not in GENERATORS:
            continue
        wheel = fetch(pin)
        path = OUT / f"{key}.json"
        write(path, GENERATORS[key](pin, wheel))
        print(f"{pin.label}: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
