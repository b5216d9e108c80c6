"""The pinned wheels: read ``pins.toml``, download each wheel with pip, refuse other bytes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

from site_build.pins import Pin, load

__all__ = ["Pin", "fetch", "pins", "read_source", "sha256"]

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "peers"
pins = load  # every pin of pins.toml, by key (site_build.pins: one reader for pages and peers)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pip_platform(wheel: str) -> list[str]:
    """pip options that select this wheel whatever Python and OS run pip: its tags."""
    _name, _version, python, _abi, platform = wheel[: -len(".whl")].split("-")
    if python.startswith("cp"):  # a binary wheel: CPython 3.11 on manylinux1_x86_64, say
        return ["--python-version", f"{python[2]}.{python[3:]}", "--platform", platform,
                "--implementation", "cp", "--only-binary=:all:"]
    return ["--only-binary=:all:"]


def fetch(pin: Pin, cache: Path = CACHE) -> Path:
    """The pinned wheel in ``cache``: downloaded by pip with ``--require-hashes`` unless already
    there, and its sha256 checked here again either way. A file with other bytes is deleted and
    refused (RuntimeError)."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / pin.wheel
    if not path.exists():
        requirements = cache / f"{pin.key}.requirements.txt"
        # one line: NAME==VERSION --hash=sha256:…, so pip refuses any other file
        requirements.write_text(
            f"{pin.project}=={pin.version} --hash=sha256:{pin.sha256}\n", encoding="utf-8"
        )
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
             "--dest", str(cache), "-r", str(requirements), *_pip_platform(pin.wheel)],
            check=True,
        )
    if not path.exists():
        raise RuntimeError(f"pip did not download {pin.wheel} into {cache}")
    got = sha256(path)
    if got != pin.sha256:
        path.unlink()
        raise RuntimeError(
            f"{pin.wheel}: sha256 {got} is not the pinned {pin.sha256}; the file was deleted"
        )
    return path


def read_source(wheel: Path, member_suffix: str) -> tuple[str, str]:
    """``(path inside the wheel, text)`` of the one member whose path ends with
    ``member_suffix`` (OpenRLHF's wheel keeps its package under ``*.data/purelib/``)."""
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n == member_suffix or n.endswith("/" + member_suffix)]
        if len(names) != 1:
            raise RuntimeError(f"{wheel.name}: expected one {member_suffix}, found {names}")
        return names[0], z.read(names[0]).decode("utf-8")
