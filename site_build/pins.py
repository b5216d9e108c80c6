"""The library versions the site compares with (``peers/pins.toml``), written into the pages.

A page writes ``{{verl}}``, ``{{trl}}``, ``{{openrlhf}}`` or ``{{trl_ppo}}`` where it states what
a library does; the build replaces it with the library's name and pinned version ("verl 0.9.1"),
so the version is typed once, in the pin file, for every page; ``{{verl.src}}`` becomes the address
of that release's source tree, for links to a file
(``[core_algos.py]({{verl.src}}/verl/trainer/ppo/core_algos.py)``). An unknown ``{{name}}`` is a
build error naming the page and line.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

PINS = Path(__file__).resolve().parent.parent / "peers" / "pins.toml"
PLACEHOLDER_RE = re.compile(r"\{\{\s*([a-z_]+)(\.src)?\s*\}\}")


@dataclass(frozen=True)
class Pin:
    key: str  # "verl": the placeholder's name and the PyPI package
    name: str  # "verl", "TRL", "OpenRLHF": how pages spell it
    version: str
    source: str  # the release's source tree, "{version}" filled in by load()
    wheel: str
    sha256: str

    @property
    def label(self) -> str:
        """How docstrings and pages name it: "verl 0.9.1", "TRL 1.16.0"."""
        return f"{self.name} {self.version}"

    @property
    def project(self) -> str:
        """The PyPI project name (pip's spelling): the wheel file name up to the first dash."""
        return self.wheel.split("-")[0]

    def provenance(self) -> dict[str, str]:
        """What a vector file records of the wheel it was made from."""
        return {"library": self.name, "version": self.version, "wheel": self.wheel,
                "sha256": self.sha256}


def load(path: Path = PINS) -> dict[str, Pin]:
    """Every pinned library by key, in the file's order."""
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    pins = {}
    for key, fields in table.items():
        source = fields.pop("source").format(version=fields["version"])
        pins[key] = Pin(key=key, source=source, **fields)
    return pins


def substitute(markdown: str, page: str, pins: dict[str, Pin]) -> str:
    """``markdown`` with each ``{{key}}`` replaced by the pinned library's label."""

    def label(m: re.Match) -> str:
        key = m.group(1)
        if key not in pins:
            line = markdown.count("\n", 0, m.start()) + 1
            raise ValueError(f"{page}:{line}: {m.group(0)} names no pinned library; "
                             f"known: {', '.join('{{' + k + '}}' for k in pins)}")
        return pins[key].source if m.group(2) else pins[key].label

    return PLACEHOLDER_RE.sub(label, markdown)
