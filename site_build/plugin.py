"""The site's MkDocs plugin (``rl-ops`` in mkdocs.yml): everything the build derives.

- ``on_config``: read every lesson file and where the pages place it (``site_build.lessons``,
  ``site_build.directives``), register the KaTeX extension, prepare the Python runtime (Pyodide
  from npm with numpy verified, see ``site_build.pyodide_dist``, and the wheel with the exercise
  manifest, ``site_build.wheel``) and the demo's sample run. Every problem found is a clear
  error naming the file, and so is a UI string missing in a language (``site_build.ui_strings``).
- ``on_files``: publish what is not a page: our ``js/`` modules (under the code version:
  ``es_modules.versioned``), each figure's numbers (``site_build.figures``), KaTeX's CSS and
  fonts, uPlot,
  the code editor's modules (``site_build.es_modules``), Pyodide, the wheel, and each
  chapter's ``exercise.py`` and ``solution.py`` downloads in the language being built.
- ``on_page_markdown``: write the pinned library versions (``{{verl}}``, ``site_build.pins``),
  put a lesson file's snippets in the page's language, and expand the page directives
  (``<!-- rl:exercise ppo/compute_gae -->``).
- ``on_env``: ``tojson`` keeps non-ASCII characters as they are.
- ``on_page_context``: the widgets' strings in the page's language, for its rl-config.
- ``on_post_page``: drop the head's hreflang links (see there why).
- ``on_post_build``: write the service worker (``site_build.service_worker``).

State lives on the plugin instance; nothing is written outside ``.cache/`` and the site.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

from . import (
    es_modules,
    figures,
    pins,
    pyodide_dist,
    service_worker,
    ui_strings,
    wheel,
    write_atomic,
)
from .directives import DirectiveError, directives, expand, localize_snippets, placed
from .katex import Katex, KatexError, KatexExtension
from .languages import LANGUAGES  # the default first: its pages carry .zh.md or no suffix
from .lessons import Lesson, download, find_lessons
from .pages import nav_files

# how long the worker waits for numpy's download before it says which file did not come
NUMPY_TIMEOUT_MS = 20_000
# Edit mode's editor: the files js/editor.js loads (its VENDOR_FILES, the one list), served as
# the package ships them with what they import, and fetched only when a learner opens Edit
EDITOR_DIST = "prism-code-editor/dist"
EDITOR_ENTRIES = re.findall(r'"([^"]+)"', re.search(
    r"export const VENDOR_FILES = \[(.*?)\];",
    (Path(__file__).resolve().parents[1] / "js" / "editor.js").read_text(encoding="utf-8"),
    re.S,
).group(1))


class RlOpsConfig(base.Config):
    # Load Python from a full Pyodide distribution elsewhere instead of the site's own copy,
    # e.g. "https://cdn.jsdelivr.net/pyodide/v{version}/full/" ({version}: npm's pyodide)
    pyodide_url = c.Type(str, default="")
    # false: formulas stay as TeX text (a draft build; the bench's baseline)
    math = c.Type(bool, default=True)


@dataclass
class Chapter:
    """A folder of docs/ whose pages place exercises: one download of them, in page order."""

    folder: str
    title: str  # the H1 of its English page
    lessons: list[Lesson]
    titles: dict[str, str]  # the H1 of its page in each language


def _in_nav_order(chapters: list[Chapter], nav: object) -> list[Chapter]:
    """``chapters`` in the order their folders first appear in mkdocs.yml's ``nav``."""
    folders = [Path(p).parent.as_posix() for p in nav_files(nav or [])]
    return sorted(chapters, key=lambda c: folders.index(c.folder) if c.folder in folders
                  else len(folders))


def build_language(config: MkDocsConfig) -> str:
    """The language mkdocs-static-i18n is building now (the default one without it)."""
    i18n = config.plugins.get("i18n")
    lang = getattr(i18n, "current_language", None)
    return lang if lang in LANGUAGES else LANGUAGES[0]


def page_language(src_path: str) -> str:
    """``ppo/index.en.md`` -> ``en``; a page with no language suffix is the default's."""
    parts = Path(src_path).name.split(".")
    return parts[-2] if len(parts) > 2 and parts[-2] in LANGUAGES else LANGUAGES[0]


class RlOpsPlugin(BasePlugin[RlOpsConfig]):
    def __init__(self) -> None:
        self.katex: Katex | None = None
        self.lessons: dict[str, Lesson] = {}
        self.chapters: list[Chapter] = []
        self.wheel: tuple[str, bytes] = ("", b"")
        self.pyodide: dict[str, Path] = {}
        self.demo_html = ""

    # ---- configuration ---------------------------------------------------------------------

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        self.pins = pins.load()
        docs = Path(config.docs_dir)
        try:
            self.lessons = {lesson.id: lesson for lesson in find_lessons(docs)}
            for lesson in self.lessons.values():
                lesson.manifest  # noqa: B018 (parse now: errors name the file)
                for lang in LANGUAGES:  # a translation missing or stale names file and line
                    lesson.in_language(lang).blanks  # noqa: B018
        except ValueError as err:
            raise PluginError(f"lesson file: {err}") from err
        import rl_ops_numpy

        for lesson in self.lessons.values():
            if not callable(getattr(rl_ops_numpy, lesson.manifest.reference, None)):
                raise PluginError(
                    f"{lesson.path}: the reference {lesson.manifest.reference!r} (REFERENCE, by "
                    "default the function's name) is not a function of rl_ops_numpy (add it "
                    "there, and to rl_ops_numpy/__init__.py)"
                )
        self.chapters = _in_nav_order(self._chapters(docs), config.nav)

        if self.katex is None:
            try:
                self.katex = Katex(self.root / "node_modules", self.root / ".cache" / "katex")
            except KatexError as err:
                raise PluginError(str(err)) from err
        has_math = any(isinstance(e, KatexExtension) for e in config.markdown_extensions)
        if self.config.math and not has_math:
            config.markdown_extensions.append(KatexExtension(self.katex))

        # Python in the browser: this site's own Pyodide (verified), or one elsewhere
        version = pyodide_dist.version()
        url = self.config.pyodide_url.format(version=version)
        self.pyodide = {}
        if not url:
            try:
                self.pyodide = pyodide_dist.files()
            except pyodide_dist.DistError as err:
                raise PluginError(f"Pyodide: {err}") from err
        self.wheel = wheel.build([lesson.manifest for lesson in self.lessons.values()])
        self.demo = demo_sample(self.root)
        self.demo_html = demo_widget(self.demo)
        # what the page's scripts read: overrides/main.html writes it into <script id="rl-config">
        # with the page's `base` (the paths resolve against it), js/dom.js siteConfig() parses it
        digest = hashlib.sha256(self.wheel[1]).hexdigest()[:16]  # a new wheel, a new URL
        # the code version: the ?v= of every module's URL, and what a worker checks it was
        # started by a page of its own build (js/worker.js VERSION)
        self.version = es_modules.version([p for p, _ in self._code()], url or version)
        config.extra["rl_config"] = {
            "version": self.version,
            "wheel": f"{service_worker.WHEELS}/{self.wheel[0]}?v={digest}",
            "pyodide": url or f"{service_worker.PYODIDE}/",
            "pyodideVersion": version,  # js/boot.js starts only this version's runtime
            "numpyTimeoutMs": NUMPY_TIMEOUT_MS,
        }
        try:
            ui_strings.tables()  # a string missing in a language fails the build here
        except ui_strings.StringsError as err:
            raise PluginError(str(err)) from err
        return config

    def _chapters(self, docs: Path) -> list[Chapter]:
        """Where each exercise is placed; every lesson on one page per language, in the same
        order in both."""
        order: dict[tuple[str, str], list[str]] = {}  # (folder, language) -> ids
        titles: dict[tuple[str, str], str] = {}  # (folder, language) -> H1
        for page in sorted(docs.rglob("*.md")):
            text = page.read_text(encoding="utf-8")
            ids = placed(text)
            if not ids:
                continue
            for directive in directives(text):
                if directive.kind == "exercise" and directive.args[:1] != () and (
                        directive.args[0] not in self.lessons):
                    raise PluginError(
                        f"{page.relative_to(docs)}:{directive.line}: no exercise "
                        f"{directive.args[0]!r} (a lesson file docs/{directive.args[0]}.py); "
                        f"there are: {', '.join(sorted(self.lessons))}"
                    )
            folder, lang = page.parent.relative_to(docs).as_posix(), page_language(page.name)
            order.setdefault((folder, lang), []).extend(ids)
            h1 = re.search(r"^# (.+)$", text, re.M)
            if h1:
                titles.setdefault((folder, lang), h1.group(1).strip())
        for lesson_id in self.lessons:
            for lang in LANGUAGES:
                n = sum(ids.count(lesson_id) for (_, la), ids in order.items() if la == lang)
                if n != 1:
                    raise PluginError(
                        f"exercise {lesson_id} is placed {n} times on the {lang} pages; place it "
                        f"once: <!-- rl:exercise {lesson_id} -->"
                    )
        chapters = []
        for folder in sorted({f for f, _ in order}):
            per_lang = {lang: order.get((folder, lang), []) for lang in LANGUAGES}
            if len({tuple(ids) for ids in per_lang.values()}) != 1:
                raise PluginError(f"docs/{folder}: the languages place different exercises or "
                                  f"in a different order: {per_lang}")
            ids = per_lang[LANGUAGES[0]]
            chapters.append(Chapter(
                folder, titles.get((folder, "en"), folder), [self.lessons[i] for i in ids],
                {lang: titles.get((folder, lang), folder) for lang in LANGUAGES},
            ))
        return chapters

    # ---- files -----------------------------------------------------------------------------

    def _code(self) -> list[tuple[Path, str]]:
        """The site's code: our ``js/`` modules (but sw.js: on_post_build writes it) and the
        vendor modules they import, as (source, path in the site); published under the code
        version (``es_modules.versioned``), in the folders service_worker.CODE_FOLDERS names."""
        node = self.root / "node_modules"
        found = [(p, f"assets/js/{p.name}") for p in sorted((self.root / "js").glob("*.js"))
                 if p.name != "sw.js"]
        vendor = ((node / "uplot" / "dist" / "uPlot.esm.js", "assets/uplot"),  # plot.js's charts
                  (node / "fflate" / "esm" / "browser.js", "assets/fflate"),  # boot.js unzips
                  (node / "ts-fsrs" / "dist" / "index.mjs", "assets/ts-fsrs"))  # review.js
        for source, dest in vendor:
            if not source.is_file():
                raise PluginError(f"missing {source}: run `npm ci`")
            found.append((source, f"{dest}/{source.name}"))
        return found

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        node = self.root / "node_modules"
        for source, dest in self._code():
            text = source.read_text(encoding="utf-8")
            _add(files, config, dest, content=es_modules.versioned(text, self.version))
        assets = [  # (source folder, glob, destination folder in the site)
            (node / "katex" / "dist", "katex.min.css", "assets/katex"),
            (node / "katex" / "dist", "fonts/*.woff2", "assets/katex"),
            (node / "uplot" / "dist", "uPlot.min.css", "assets/uplot"),
        ]
        for src_dir, pattern, dest_dir in assets:
            matches = sorted(src_dir.glob(pattern))
            if not matches:
                raise PluginError(f"missing {src_dir / pattern}: run `npm ci`")
            for path in matches:
                _add(files, config, f"{dest_dir}/{path.relative_to(src_dir).as_posix()}",
                     source=path)
        try:
            editor = es_modules.closure(node / EDITOR_DIST, EDITOR_ENTRIES)
        except es_modules.ModuleError as err:
            raise PluginError(str(err)) from err
        for name in editor:
            _add(files, config, f"assets/prism-code-editor/{name}",
                 source=node / EDITOR_DIST / name)
        _add(files, config, f"{service_worker.WHEELS}/{self.wheel[0]}", content=self.wheel[1])
        # each figure's numbers, fetched when it scrolls into view (js/figure.js)
        for figure_id in figures.FIGURES:
            _add(files, config, f"assets/figures/{figure_id}.json",
                 content=figures.numbers(figure_id))
        if self.pyodide:
            for name, source in self.pyodide.items():
                _add(files, config, f"{service_worker.PYODIDE}/{name}", source=source)
            _add(files, config, f"{service_worker.PYODIDE}/pyodide-lock.json",
                 content=pyodide_dist.site_lock())
        # each chapter's downloads in this build's language (mkdocs-static-i18n builds the
        # default language, then each other one): ppo/exercise.py in Chinese, and
        # en/ppo/exercise.py in English, which the English page's link (exercise.py) finds as
        # ppo/exercise.en.py
        lang = build_language(config)
        for chapter in self.chapters:
            for name, blanked in (("exercise.py", True), ("solution.py", False)):
                text = download(chapter.lessons, chapter.titles[lang], blanked, lang)
                dest = f"{chapter.folder}/{name}"
                if lang == LANGUAGES[0]:
                    _add(files, config, dest, content=text)
                else:
                    _add(files, config, f"{lang}/{dest}", content=text,
                         src_uri=dest.replace(".py", f".{lang}.py"))
        return files

    # ---- pages -----------------------------------------------------------------------------

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files):
        lang = page_language(page.file.src_path)
        try:
            markdown = demo_numbers(markdown, page.file.src_path, self.demo)
            markdown = pins.substitute(markdown, page.file.src_path, self.pins)
            markdown = localize_snippets(markdown, page.file.src_path, lang,
                                         Path(config.docs_dir))
            return expand(markdown, page.file.src_path, lang,
                          self.lessons, lambda: self.demo_html,
                          lambda lang: progress_widget(self.chapters, lang))
        except (DirectiveError, ValueError) as err:  # TranslationError is a ValueError
            raise PluginError(str(err)) from err

    def on_env(self, env, config: MkDocsConfig, files: Files):
        """``tojson`` writes characters as they are: rl-config's Chinese strings in UTF-8, not
        ``\\uXXXX`` (a third of the bytes); it still escapes ``<``, ``>``, ``&`` and ``'``. The
        head's storage block (:func:`storage_head`) is every template's."""
        env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
        # every page's head (the 404 page's too): the storage prefix, from js/dom.js
        env.globals["rl_storage_head"] = storage_head(self.root / "js" / "dom.js")
        return env

    def on_page_context(self, context, page: Page, config: MkDocsConfig, nav):
        """The widgets' strings in the page's language, for its rl-config (overrides/main.html)."""
        context["rl_strings"] = ui_strings.table(page_language(page.file.src_path))
        return context

    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        """Drop the ``<link rel="alternate" hreflang>`` tags from the head.

        mkdocs-static-i18n points them at the same page in the other language; Material's script
        then fetches ``<that page>/sitemap.xml``, which exists only at the language root (a 404
        on every page). The language switcher in the header keeps its contextual links, and the
        i18n plugin's ``sitemap.xml`` carries the hreflang alternates for search engines.
        """
        head, sep, body = output.partition("</head>")
        return _HEAD_ALTERNATE.sub("", head) + sep + body

    def on_post_build(self, config: MkDocsConfig) -> None:
        site = Path(config.site_dir)
        if (site / "assets" / "js").is_dir():  # not mkdocs-static-i18n's build of a language
            service_worker.write(site, self.root / "js" / "sw.js", self.version)

    def on_serve(self, server, config: MkDocsConfig, builder):
        """Rebuild when our JavaScript or templates change, not only the pages."""
        server.watch(str(self.root / "js"))
        server.watch(str(self.root / "overrides"))
        return server

    def on_shutdown(self) -> None:
        if self.katex is not None:
            self.katex.close()


def storage_head(dom_js: Path) -> str:
    """js/dom.js's block between ``// ---- head:`` and ``// ---- end of head`` (the storage
    prefix and the settings key): overrides/main.html runs it in the page's head, so the rule
    has one home."""
    found = re.search(r"^// ---- head:.*?$(.*?)^// ---- end of head$",
                      dom_js.read_text(encoding="utf-8"), re.S | re.M)
    if found is None:
        raise PluginError(f"{dom_js}: no '// ---- head:' ... '// ---- end of head' block")
    # the code, without its comment lines (they stay in dom.js)
    return "\n".join(line for line in found.group(1).strip().splitlines()
                     if not line.lstrip().startswith("//"))


_HEAD_ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


def _add(files: Files, config: MkDocsConfig, dest: str, *, source: Path | None = None,
         content: str | bytes | None = None, src_uri: str | None = None) -> None:
    """Publish ``source``, or ``content`` (kept in ``.cache/generated/``: mkdocs-static-i18n
    needs every file to have a source path), at ``dest``; ``src_uri`` is the name links find it
    by, if not ``dest``."""
    existing = files.get_file_from_path(src_uri or dest)
    if existing is not None:
        files.remove(existing)
    if source is None:
        assert content is not None
        data = content.encode("utf-8") if isinstance(content, str) else content
        source = Path(config.config_file_path).parent / ".cache" / "generated" / dest
        if not source.exists() or source.read_bytes() != data:  # `mkdocs serve` would loop
            write_atomic(source, data)
    file = File.generated(config, src_uri or dest, abs_src_path=str(source),
                          inclusion=InclusionLevel.INCLUDED)
    file.dest_uri = dest
    files.append(file)


# ---- the demo's sample run --------------------------------------------------------------------


def demo_sample(root: Path) -> dict:
    """Every metric of a full default run (``python -m rl_ops_numpy.demo --json``), once per
    version of the package's sources: the curves the demo page shows before anyone presses Run."""
    import rl_ops_numpy

    package = Path(rl_ops_numpy.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    out = root / ".cache" / "demo" / f"{digest.hexdigest()[:16]}.json"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
        subprocess.run(
            [sys.executable, "-m", "rl_ops_numpy.demo", "--seed", "0", "--json", str(tmp)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        tmp.replace(out)  # whole or not at all: another build may be reading
    return json.loads(out.read_text(encoding="utf-8"))


# {{ demo.<run>.<metric> }} on a page: where that curve of the sample run ends (the mean of the
# last fifth of its logged points, as `python -m rl_ops_numpy.demo` prints it), to 2 decimals
_DEMO_NUMBER = re.compile(r"\{\{\s*demo\.(\w+)\.(\w+)\s*\}\}")


def demo_numbers(markdown: str, page: str, sample: dict) -> str:
    """``markdown`` with each ``{{ demo.grpo.rm_score }}`` replaced by the sample run's number,
    so a page quotes the run the build made, never a number typed by hand."""
    from rl_ops_numpy.demo.__main__ import fifths

    def number(m: re.Match) -> str:
        run, metric = m.groups()
        values = sample.get(run, {}).get(metric) if isinstance(sample.get(run), dict) else None
        if not values:
            line = markdown.count("\n", 0, m.start()) + 1
            raise ValueError(f"{page}:{line}: {m.group(0)}: the sample run has no {run}.{metric}")
        return f"{fifths(values)[1]:.2f}"

    return _DEMO_NUMBER.sub(number, markdown)


def progress_widget(chapters: list[Chapter], lang: str) -> str:
    """The home page's progress table: each chapter's exercises, as data for js/progress.js,
    which reads what this browser solved."""
    data = [
        {"href": f"{chapter.folder}/", "title": chapter.titles[lang],
         "exercises": [{"id": lesson.id, "title": lesson.manifest.title[lang],
                        "version": lesson.version}
                       for lesson in chapter.lessons]}
        for chapter in chapters
    ]
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        '<div class="rl-home-progress" data-progress>\n'
        f'<script type="application/json" class="rl-progress-data">{payload}</script>\n'
        "</div>"
    )


def demo_widget(sample: dict) -> str:
    """The demo's markup: the sample run, and its charts as [id, metric, phases] (the PNG's
    panels, rl_ops_numpy/demo/plot.py), as data for js/demo.js, which draws and runs it."""
    from rl_ops_numpy.demo.plot import PANELS

    data = {"sample": sample, "charts": [[id_, metric, list(phases)]
                                         for id_, phases, metric, *_ in PANELS]}
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        '<div class="rl-demo" data-demo>\n'
        f'<script type="application/json" class="rl-demo-data">{payload}</script>\n'
        "</div>\n"
    )
