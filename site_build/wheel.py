"""The wheel the browser installs: the reference, the runtime, and the exercise manifest.

Pyodide unpacks it with ``unpackArchive(bytes, "wheel")`` into site-packages. It holds
``rl_ops_numpy`` (the references Check compares with, and the demo), ``browser_runtime`` (torch
layer, runner, checker, sandbox) and ``browser_runtime/exercises.json``, every exercise's entry
from its lesson file. Written with :mod:`zipfile`, every entry dated 1980-01-01: the same sources
give the same bytes, so its hash (in its URL) changes only when its content does. A pure-Python
wheel needs no build backend; ``pyodide-build`` would need the network.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import zipfile
from pathlib import Path

from browser_runtime.exercises import MANIFEST, Exercise

NAME, VERSION = "rl_ops_browser", "0.1.0"
PACKAGES = ("rl_ops_numpy", "browser_runtime")


def _package_files(package: str) -> list[tuple[str, bytes]]:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    root = Path(next(iter(spec.submodule_search_locations)))
    return [
        (f"{package}/{p.relative_to(root).as_posix()}", p.read_bytes())
        for p in sorted(root.rglob("*.py"))
    ]


def build(exercises: list[Exercise]) -> tuple[str, bytes]:
    """``(file name, bytes)`` of the wheel."""
    files = [f for package in PACKAGES for f in _package_files(package)]
    manifest = json.dumps([e.entry() for e in exercises], ensure_ascii=False, indent=1)
    files.append((f"browser_runtime/{MANIFEST}", manifest.encode("utf-8")))
    info = f"{NAME}-{VERSION}.dist-info"
    files += [
        (f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n".encode()),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: site_build.wheel\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = "".join(
        f"{name},sha256={_digest(data)},{len(data)}\n" for name, data in files
    ) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as whl:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            whl.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED)
    return f"{NAME}-{VERSION}-py3-none-any.whl", out.getvalue()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
