"""requirements.lock pins everything the Makefile installs: each requirement of the ``docs`` and
``test`` groups in pyproject.toml, and each package they pull in, is installed at the version
the lock pins, with the hash of every file of that version."""

from __future__ import annotations

import importlib.metadata as metadata
import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from .conftest import ROOT

LOCK = (ROOT / "requirements.lock").read_text(encoding="utf-8")
PINS = {
    canonicalize_name(name): Version(version)
    for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", LOCK, re.M)
}
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def group_requirements(group: str) -> list[Requirement]:
    out = []
    for item in PROJECT["dependency-groups"][group]:
        if isinstance(item, dict):
            out += group_requirements(item["include-group"])
        else:
            out.append(Requirement(item))
    return out


def test_every_pin_carries_sha256_hashes():
    blocks = re.split(r"^(?=[A-Za-z0-9_.\-]+==)", LOCK, flags=re.M)[1:]
    assert len(blocks) == len(PINS) > 20
    for block in blocks:
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", block), block.splitlines()[0]


def test_every_group_requirement_is_met_by_its_pin():
    for req in group_requirements("test"):
        pin = PINS.get(canonicalize_name(req.name))
        assert pin is not None, f"{req.name} is not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pin, prereleases=True), (str(req), str(pin))


def test_torch_is_locked_to_its_cpu_build():
    assert str(PINS["torch"]) == "2.13.0+cpu"


def test_installed_packages_are_the_locked_versions():
    """Walk the installed dependency graph from the test group: every package is pinned."""
    seen: set[str] = set()
    todo = group_requirements("test")
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        installed = Version(metadata.version(req.name))
        assert PINS.get(name) == installed, f"{req.name} {installed} is not the locked version"
        for dep in metadata.requires(req.name) or []:
            dep_req = Requirement(dep)
            extras = req.extras or {""}
            if not dep_req.marker or any(dep_req.marker.evaluate({"extra": e}) for e in extras):
                todo.append(Requirement(dep_req.name))
    assert len(seen) == len(PINS)  # and nothing is locked that nothing needs
