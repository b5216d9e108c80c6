"""The service worker (``js/sw.js``), versioned by the build that wrote the site.

``write`` fills its placeholders: ``__BUILD__`` hashes every file of the site (a new build
installs a new worker), ``__RUNTIME__`` the Python runtime's files alone (Pyodide and the
wheel stay cached across builds that do not change them), ``"__VERSION__"`` is the code version
(the ``?v=`` of every module's URL), ``{ __HASHES__: "" }`` holds each runtime and code file's
SHA-256 (the worker caches only files that match), ``["__RUNTIME_FOLDERS__"]`` and
``["__CODE_FOLDERS__"]`` name their folders, and ``["__PRECACHE__"]`` lists the other files a
visited page may want offline before it ever asked for them (:func:`precache`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

# the Python runtime: the site's Pyodide and the wheel of its own Python (cached first by sw.js)
PYODIDE = "assets/pyodide"
WHEELS = "assets/wheels"
RUNTIME_FOLDERS = (PYODIDE, WHEELS)
# the site's code, published under its version (site_build/plugin.py _code): cached first by
# sw.js, each version's files kept across deploys for the pages still open on it
CODE_FOLDERS = ("assets/js", "assets/uplot", "assets/fflate", "assets/ts-fsrs")


def _tree_digest(folder: Path, skip: Path | None = None) -> str:
    """A short hash of every file under ``folder`` (names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p != skip):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def precache(site: Path) -> list[str]:
    """What the worker keeps at install besides the code (every module of the version, js/sw.js
    `install`): what a page asks for only later, or where the worker cannot see it, so that a
    page visited once works offline in full: search's files (:func:`search_files`), each
    figure's numbers by the address its page asks for them (js/figure.js), uPlot's stylesheet."""
    from . import figures

    numbers = [
        f"assets/figures/{figure_id}.json?v={figures.version(figure_id)}"
        for figure_id in figures.FIGURES if (site / f"assets/figures/{figure_id}.json").exists()
    ]
    style = "assets/uplot/uPlot.min.css"
    return search_files(site) + numbers + ([style] if (site / style).exists() else [])


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


def hashes(site: Path) -> dict[str, str]:
    """Each runtime and code file's SHA-256 (hex), by its path in the site: what sw.js verifies
    before it keeps one (the code's modules only: uPlot's CSS is none)."""
    return {
        path.relative_to(site).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in RUNTIME_FOLDERS + CODE_FOLDERS if (site / folder).is_dir()
        for path in sorted((site / folder).rglob("*"))
        if path.is_file() and (folder in RUNTIME_FOLDERS or path.suffix in (".js", ".mjs"))
    }


def write(site: Path, template: Path, version: str) -> None:
    """Write ``template`` (js/sw.js) to ``site/sw.js`` with its placeholders filled; ``version``
    is the code version (the ``?v=`` of the modules' URLs)."""
    sw = site / "sw.js"
    runtime = hashlib.sha256()
    for folder in RUNTIME_FOLDERS:
        if (site / folder).is_dir():
            runtime.update(_tree_digest(site / folder).encode())
    text = template.read_text(encoding="utf-8")
    text = text.replace("__RUNTIME__", runtime.hexdigest()[:16])
    text = text.replace('["__RUNTIME_FOLDERS__"]', json.dumps([f"{f}/" for f in RUNTIME_FOLDERS]))
    text = text.replace('["__CODE_FOLDERS__"]', json.dumps([f"{f}/" for f in CODE_FOLDERS]))
    text = text.replace('"__VERSION__"', json.dumps(version))
    text = text.replace('{ __HASHES__: "" }', json.dumps(hashes(site)))
    text = text.replace('["__PRECACHE__"]', json.dumps(precache(site)))
    sw.write_text(text.replace("__BUILD__", _tree_digest(site, skip=sw)), encoding="utf-8")
