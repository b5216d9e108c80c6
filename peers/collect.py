"""Collecting the cases of one library's vectors: run the library, keep inputs and outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .fetch import Pin


def tensor(x: np.ndarray, grad: bool = False) -> torch.Tensor:
    """A torch copy of ``x`` (same dtype), a leaf that records its gradient if ``grad``."""
    t = torch.from_numpy(np.array(x, copy=True))
    return t.requires_grad_(grad)


def temperature_cases(v: Vectors, operator: str, inputs: dict[str, dict[str, np.ndarray]],
                      temperatures: tuple[float, ...],
                      call: Callable[..., dict[str, Any]]) -> None:
    """One case of ``operator`` per dtype and temperature, named ``"<dtype> temperature=<t>"``:
    ``inputs`` holds each dtype's arrays by name, and ``call(t, **tensors)`` runs the library on
    torch copies of them and returns its outputs by name."""
    for dtype, arrays in inputs.items():
        for t in temperatures:

            def run(arrays=arrays, t=t):
                return call(t, **{name: tensor(a) for name, a in arrays.items()})

            v.case(operator, f"{dtype} temperature={t}", {"temperature": t}, arrays, run)


class Vectors:
    """The operators of one library, each with its source and its cases."""

    def __init__(self, pin: Pin):
        self.pin = pin
        self.operators: dict[str, dict[str, Any]] = {}
        # configuration defaults the docstrings rely on (peers.defaults): name → value, line
        self.defaults: dict[str, dict[str, Any]] = {}

    def operator(self, name: str, source: dict[str, Any], note: str = "") -> None:
        """Declare operator ``name``; ``source`` is the lifted code's provenance
        (:meth:`peers.lift.Source.where`), ``note`` says how the inputs were fed to it."""
        src = {k: v for k, v in source.items() if k not in self.pin.provenance()}
        if note:
            src["note"] = note
        self.operators[name] = {"source": src, "cases": []}

    def case(self, operator: str, name: str, kwargs: dict[str, Any], inputs: dict[str, Any],
             run: Callable[[], dict[str, Any]]) -> None:
        """Run the library (``run()`` returns its outputs by name) and keep the case; an exception
        is kept as ``{"raises": "Type: message"}``."""
        try:
            outputs = run()
        except Exception as e:  # the library refusing the input is a fact to compare too
            outputs = {"raises": f"{type(e).__name__}: {e}"}
        cases = self.operators[operator]["cases"]
        assert name not in {c["name"] for c in cases}, name
        cases.append({"name": name, "kwargs": kwargs, "inputs": inputs, "outputs": outputs})

    def merge(self, part: Vectors) -> None:
        """Add the operators and defaults of ``part``, one family of cases of the same library."""
        assert part.pin == self.pin and not part.operators.keys() & self.operators.keys()
        self.operators.update(part.operators)
        self.defaults.update(part.defaults)

    def data(self) -> dict[str, Any]:
        return {"pin": self.pin.provenance(), "operators": self.operators,
                "defaults": self.defaults}


Family = Callable[[Pin, Any, Any], Vectors]  # (pin, wheel, the lifted library) -> its cases


def gather(pin: Pin, wheel: Any, lib: Any, families: tuple[Family, ...]) -> dict[str, Any]:
    """Every family's cases of one library, run in turn (the table's order), as one
    :class:`Vectors`' data: what each library's ``generate`` returns."""
    v = Vectors(pin)
    for family in families:
        v.merge(family(pin, wheel, lib))
    return v.data()
