"""MkDocs hook: everything the site derives at build time.

- ``on_config``: make sure math goes through npm's ``katex`` (fail loudly otherwise), typeset by
  one Node process for the whole build, and write the views of every lesson file into
  ``.cache/gen/`` for pymdownx.snippets to include: ``<name>.exercise.py`` (blanked),
  ``<name>.answers.py``, ``<name>.cell.md`` (the runnable cell) and ``<name>.drill.html`` (the MLM
  drill over the answer function, tokens computed here); also the demo's sample run and the
  ``rl_ops_numpy`` wheel (each once per version of the package's sources).
- ``on_files``: publish what is not a page: our ``js/`` modules, KaTeX's CSS and fonts, Pyodide's
  core, uPlot, the wheel, and each lesson folder's ``exercise.py`` and ``solution.py``
  downloads.
- ``on_post_page``: drop the head's hreflang links (see there why).

Nothing here is typed twice: every code view comes from ``lessons.Lesson``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from drill import drill_html
from lessons import Lesson, download
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

from site_build import pyodide_dist

ROOT = Path(__file__).resolve().parent.parent.parent
GEN = ROOT / ".cache" / "gen"
NODE = ROOT / "node_modules"


# ---- math: the fast KaTeX path ----------------------------------------------------------------


class KatexServer:
    """One Node process that typesets every formula of a build (``katex_server.cjs``).

    markdown-katex starts the ``katex`` CLI once per formula; ``install`` routes its one
    per-formula call through this process instead, so a cold build costs milliseconds per
    formula. The cache of markdown-katex (one HTML file per formula) is used as before.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def render(self, tex: str, display: bool) -> str:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                ["node", str(Path(__file__).with_name("katex_server.cjs"))],
                cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                encoding="utf-8", bufsize=1,
            )
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"tex": tex, "displayMode": display}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise PluginError(f"KaTeX: the node process ended while typesetting {tex!r}")
        answer = json.loads(line)
        if "error" in answer:
            raise PluginError(f"KaTeX could not typeset {tex!r}: {answer['error']}")
        return answer["html"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
            self.proc = None

    def install(self) -> None:
        from markdown_katex import wrapper

        original = getattr(wrapper._write_tex2html, "original", wrapper._write_tex2html)

        def write_tex2html(cmd_parts, tex, tmp_output_file):
            flags = cmd_parts[1:]
            if flags not in ([], ["--display-mode"]):  # options we do not mirror: use the CLI
                return original(cmd_parts, tex, tmp_output_file)
            html = self.render(tex, display=bool(flags))
            Path(tmp_output_file).write_text(html + "\n", encoding="utf-8")

        write_tex2html.original = original
        wrapper._write_tex2html = write_tex2html


_katex = KatexServer()


def _use_npm_katex() -> None:
    """Put ``node_modules/.bin`` first on PATH and check markdown-katex picks that ``katex``.

    markdown-katex falls back to a bundled binary that costs ~1.4 s per formula (vs ~0.1 s), and
    caches the command it found in a temp file; a stale cache is cleared once.
    """
    from markdown_katex import wrapper

    npm_katex = NODE / ".bin" / "katex"
    if not npm_katex.exists():
        raise PluginError(
            f"KaTeX: {npm_katex} is missing. Run `npm ci` (or `make site`): the build needs npm's "
            "katex CLI; markdown-katex's bundled binary is about 14x slower."
        )
    os.environ["PATH"] = f"{npm_katex.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for attempt in range(2):
        cmd = wrapper.get_bin_cmd()
        if Path(cmd[0]).resolve() == npm_katex.resolve():
            return
        if attempt == 0:
            wrapper.LOCAL_CMD_CACHE.unlink(missing_ok=True)
    raise PluginError(f"KaTeX: markdown-katex would run {cmd[0]}, not npm's {npm_katex}")


# ---- lessons ----------------------------------------------------------------------------------


def lesson_folders(config: MkDocsConfig) -> dict[str, tuple[str, list[Lesson]]]:
    """``extra.lessons`` of mkdocs.yml: folder -> (download title, lessons in page order).

    A lesson's ``timeout`` (seconds per run, 10 by default) comes from the folder's optional
    ``timeouts`` mapping and is stored on the lesson.

    Every ``*.py`` with an exercise section under ``docs/`` must be listed, and every listed one
    must exist.
    """
    docs = Path(config.docs_dir)
    listed = config.extra.get("lessons", {})
    folders = {}
    for folder, spec in listed.items():
        lessons = [Lesson.load(docs / folder / f"{name}.py") for name in spec["files"]]
        for lesson in lessons:
            lesson.timeout = float(spec.get("timeouts", {}).get(lesson.path.stem, 10))
        folders[folder] = (spec["title"], lessons)
    known = {lesson.path.resolve() for _, ls in folders.values() for lesson in ls}
    for path in docs.rglob("*.py"):
        if "[start:exercise]" in path.read_text(encoding="utf-8") and path.resolve() not in known:
            raise PluginError(f"{path} is a lesson file but is not listed in extra.lessons")
    return folders


def cell_markdown(lesson: Lesson) -> str:
    """The runnable cell: the blanked exercise and its test block, with what the runner needs."""
    attrs = {
        "data-runner": lesson.stem,
        "data-function": lesson.name,
        "data-version": lesson.version,
        "data-blanks": str(len(lesson.blanks)),
        "data-timeout": f"{lesson.timeout:g}",  # seconds a run may take
    }
    html_attrs = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return (
        f'<div class="rl-cell" {html_attrs} markdown>\n\n'
        f'```python\n--8<-- "{lesson.stem}.exercise.py"\n```\n\n'
        f'```python\n--8<-- "{lesson.stem}.py:test"\n```\n\n'
        "</div>\n"
    )


def _write(path: Path, text: str) -> None:
    """Write only when the content changes, so `mkdocs serve` does not rebuild in a loop."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_views(folders: dict[str, tuple[str, list[Lesson]]]) -> None:
    for folder, (title, lessons) in folders.items():
        for lesson in lessons:
            base = GEN / lesson.stem
            _write(base.with_suffix(".exercise.py"), lesson.exercise(blanked=True))
            _write(base.with_suffix(".answers.py"), lesson.answers())
            _write(base.with_suffix(".cell.md"), cell_markdown(lesson))
            imports = "\n".join(
                line for line in lesson.exercise(blanked=False).split("\n")
                if line.startswith(("import ", "from "))
            )
            _write(
                base.with_suffix(".drill.html"),
                drill_html(lesson.path.stem, lesson.drill_code, imports, lesson.stem, lesson.name),
            )
        _write(GEN / "downloads" / folder / "exercise.py", download(lessons, title, blanked=True))
        _write(GEN / "downloads" / folder / "solution.py", download(lessons, title, blanked=False))


# ---- static assets ----------------------------------------------------------------------------

# (source folder, glob, destination folder in the site)
ASSETS = [
    (ROOT / "js", "[!s]*.js", "assets/js"),  # all but sw.js, which on_post_build writes
    (NODE / "katex" / "dist", "katex.min.css", "assets/katex"),
    (NODE / "katex" / "dist", "fonts/*.woff2", "assets/katex"),
    (NODE / "uplot" / "dist", "uPlot.esm.js", "assets/uplot"),
    (NODE / "uplot" / "dist", "uPlot.min.css", "assets/uplot"),
]


def _add(files: Files, config: MkDocsConfig, dest: str, source: Path) -> None:
    existing = files.get_file_from_path(dest)
    if existing is not None:
        files.remove(existing)
    files.append(
        File.generated(config, dest, abs_src_path=str(source), inclusion=InclusionLevel.INCLUDED)
    )


# ---- the rl_ops_numpy wheel for Pyodide ------------------------------------------------------


def source_digest() -> str:
    """A hash of the package's sources: what the wheel and the demo's sample run depend on."""
    digest = hashlib.sha256()
    for path in [*sorted((ROOT / "rl_ops_numpy").rglob("*.py")), ROOT / "pyproject.toml"]:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_wheel() -> Path:
    """Build the pure-Python wheel (pip, no build isolation), once per version of the sources.

    Pyodide installs it with ``unpackArchive``; ``pyodide-build`` is not needed for a pure-Python
    package (and needs the network at start-up).
    """
    out = ROOT / ".cache" / "wheel" / source_digest()
    wheels = sorted(out.glob("rl_ops_numpy-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
             "--wheel-dir", str(out), str(ROOT)],
            check=True,
        )
        wheels = sorted(out.glob("rl_ops_numpy-*.whl"))
    if len(wheels) != 1:
        raise PluginError(f"expected one rl_ops_numpy wheel in {out}, found {len(wheels)}")
    return wheels[0]


# ---- the demo's sample run --------------------------------------------------------------------


def demo_sample() -> dict:
    """Every metric of a full default run (``python -m rl_ops_numpy.demo --json``), once per
    version of the sources: the curves the demo page shows before anyone presses Run."""
    out = ROOT / ".cache" / "demo" / f"{source_digest()}.json"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "rl_ops_numpy.demo", "--seed", "0", "--json", str(out)],
            check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    return json.loads(out.read_text(encoding="utf-8"))


def demo_widget(sample: dict) -> str:
    """The demo's markup: the sample run as data for js/demo.js, which draws and runs it."""
    payload = json.dumps(sample, ensure_ascii=False).replace("</", "<\\/")
    return (
        '<div class="rl-demo" data-demo>\n'
        f'<script type="application/json" class="rl-demo-sample">{payload}</script>\n'
        "</div>\n"
    )


# ---- hook entry points ------------------------------------------------------------------------

_folders: dict[str, tuple[str, list[Lesson]]] = {}
_wheel: list[Path] = []
_pyodide: list[tuple[str, Path]] = []  # (name, source) of each file under assets/pyodide/


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    _use_npm_katex()
    _katex.install()
    _folders.clear()
    _folders.update(lesson_folders(config))
    write_views(_folders)
    # Python in the browser: this site's own Pyodide (verified, see site_build.pyodide_dist),
    # or a full distribution elsewhere when extra.pyodide_url names one
    version = pyodide_dist.version()
    config.extra["pyodide_version"] = version
    config.extra["pyodide_url"] = (config.extra.get("pyodide_url") or "").format(version=version)
    if not config.extra["pyodide_url"]:
        try:
            _pyodide[:] = list(pyodide_dist.files().items())
        except pyodide_dist.DistError as err:
            raise PluginError(f"Pyodide: {err}") from err
        _write(GEN / "pyodide" / "pyodide-lock.json", pyodide_dist.site_lock())
    _write(GEN / "s21" / "demo.widget.html", demo_widget(demo_sample()))
    wheel = build_wheel()
    _wheel[:] = [wheel]
    # the page config (overrides/main.html): the wheel's URL carries a hash of its content
    config.extra["wheel_path"] = f"assets/wheels/{wheel.name}"
    config.extra["wheel_hash"] = wheel.parent.name
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for src_dir, pattern, dest_dir in ASSETS:
        matches = sorted(src_dir.glob(pattern))
        if not matches:
            raise PluginError(f"missing {src_dir / pattern}: run `npm ci`")
        for path in matches:
            _add(files, config, f"{dest_dir}/{path.relative_to(src_dir).as_posix()}", path)
    _add(files, config, f"assets/wheels/{_wheel[0].name}", _wheel[0])
    if _pyodide:
        lock = ("pyodide-lock.json", GEN / "pyodide" / "pyodide-lock.json")
        for name, source in [*_pyodide, lock]:
            _add(files, config, f"assets/pyodide/{name}", source)
    for folder in _folders:
        for name in ("exercise.py", "solution.py"):
            _add(files, config, f"{folder}/{name}", GEN / "downloads" / folder / name)
    return files


_HEAD_ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


def on_post_page(output: str, page, config: MkDocsConfig) -> str:
    """Drop the ``<link rel="alternate" hreflang>`` tags from the head.

    mkdocs-static-i18n points them at the same page in the other language; Material's script then
    fetches ``<that page>/sitemap.xml``, which exists only at the language root (a 404 on every
    page). The language switcher in the header keeps its contextual links, and the i18n plugin's
    ``sitemap.xml`` carries the hreflang alternates for search engines.
    """
    head, sep, body = output.partition("</head>")
    return _HEAD_ALTERNATE.sub("", head) + sep + body


def _tree_digest(folder: Path, skip: Path | None = None) -> str:
    """A short hash of every file under ``folder`` (names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p != skip):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _search_files(site: Path) -> list[str]:
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


def on_post_build(config: MkDocsConfig) -> None:
    """Write the service worker (js/sw.js) to the site's root, versioned by this build: BUILD
    hashes everything the build wrote, RUNTIME the Python runtime's files alone; PRECACHE lists
    what search needs offline (its worker fetches it before the service worker can see it)."""
    site = Path(config.site_dir)
    if not (site / "assets" / "js").is_dir():
        return  # mkdocs-static-i18n's build of another language into a subfolder
    sw = site / "sw.js"
    runtime = hashlib.sha256()
    for folder in ("assets/pyodide", "assets/wheels"):
        if (site / folder).is_dir():
            runtime.update(_tree_digest(site / folder).encode())
    text = (ROOT / "js" / "sw.js").read_text(encoding="utf-8")
    text = text.replace("__RUNTIME__", runtime.hexdigest()[:16])
    text = text.replace('["__PRECACHE__"]', json.dumps(_search_files(site)))
    sw.write_text(text.replace("__BUILD__", _tree_digest(site, skip=sw)), encoding="utf-8")


def on_shutdown() -> None:
    _katex.close()


def on_serve(server, config: MkDocsConfig, builder):
    """Rebuild when lesson code or our JavaScript changes, not only the pages."""
    server.watch(str(ROOT / "js"))
    server.watch(str(ROOT / "overrides"))
    return server
