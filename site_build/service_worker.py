"""The service worker (``js/sw.js``), versioned by the build that wrote the site.

``write`` fills its placeholders: ``__BUILD__`` hashes every file of the site (a new build
installs a new worker), ``__RUNTIME__`` the Python runtime's files alone (Pyodide and the
wheel stay cached across builds that do not change them), ``{ __RUNTIME_HASHES__: "" }`` holds
each runtime file's SHA-256 (the worker caches only files that match), ``["__RUNTIME_FOLDERS__"]``
names their folders, and ``["__PRECACHE__"]`` lists what search needs offline (its worker fetches
it before the service worker can see the request).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

# the Python runtime: the site's Pyodide and the wheel of its own Python (cached first by sw.js)
PYODIDE = "assets/pyodide"
WHEELS = "assets/wheels"
RUNTIME_FOLDERS = (PYODIDE, WHEELS)


def _tree_digest(folder: Path, skip: Path | None = None) -> str:
    """A short hash of every file under ``folder`` (names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p != skip):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def search_files(site: Path) -> list[str]:
    """What Material's search worker fetches: the index, and the lunr scripts its languages need
    (Material's rule: the stemmer support, one script per language but English, lunr.multi for
    several, a segmenter for ja/hi/th)."""
    index = site / "search" / "search_index.json"
    if not index.exists():
        return []
    langs = json.loads(index.read_text(encoding="utf-8"))["config"]["lang"]
    lunr = "assets/javascripts/lunr"
    files = ["search/search_index.json", f"{lunr}/min/lunr.stemmer.support.min.js"]
    files += [f"{lunr}/tinyseg.js" for lang in langs if lang == "ja"]
    files += [f"{lunr}/wordcut.js" for lang in langs if lang in ("hi", "th")]
    files += [f"{lunr}/min/lunr.{lang}.min.js" for lang in langs if lang != "en"]
    files += [f"{lunr}/min/lunr.multi.min.js"] if len(langs) > 1 else []
    return [f for f in files if (site / f).exists()]


def runtime_hashes(site: Path) -> dict[str, str]:
    """Each runtime file's SHA-256 (hex), by its path in the site: what sw.js verifies."""
    return {
        path.relative_to(site).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in RUNTIME_FOLDERS if (site / folder).is_dir()
        for path in sorted((site / folder).rglob("*")) if path.is_file()
    }


def write(site: Path, template: Path) -> None:
    """Write ``template`` (js/sw.js) to ``site/sw.js`` with its placeholders filled."""
    sw = site / "sw.js"
    runtime = hashlib.sha256()
    for folder in RUNTIME_FOLDERS:
        if (site / folder).is_dir():
            runtime.update(_tree_digest(site / folder).encode())
    text = template.read_text(encoding="utf-8")
    text = text.replace("__RUNTIME__", runtime.hexdigest()[:16])
    text = text.replace('["__RUNTIME_FOLDERS__"]', json.dumps([f"{f}/" for f in RUNTIME_FOLDERS]))
    text = text.replace('{ __RUNTIME_HASHES__: "" }', json.dumps(runtime_hashes(site)))
    text = text.replace('["__PRECACHE__"]', json.dumps(search_files(site)))
    sw.write_text(text.replace("__BUILD__", _tree_digest(site, skip=sw)), encoding="utf-8")
