"""The built site: a strict build, both languages alike, math typeset, downloads that work."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from site_build.languages import LANGUAGES, prefix

from .conftest import CHAPTERS, DOCS, LESSONS, ROOT
from .golden import golden_path


def html_unescape(text: str) -> str:
    from html import unescape

    return unescape(text)

PAGES = sorted(p.relative_to(DOCS) for p in DOCS.rglob("*.zh.md"))


def _en(path: Path) -> Path:
    return path.with_name(path.name.replace(".zh.md", ".en.md"))


def _html(site: Path, page: Path, lang: str) -> str:
    """The built HTML of a page source (``s21/demo.zh.md`` -> ``s21/demo/index.html``)."""
    name = page.as_posix().removesuffix(".zh.md")
    folder = name.removesuffix("index") if name.endswith("index") else name + "/"
    return (site / ("en/" if lang == "en" else "") / folder / "index.html").read_text("utf-8")


VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
    "path",
    "line",
    "rect",
}


class _Text(HTMLParser):
    """The article's headings, code blocks, count of KaTeX formulas, and the prose around them."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[tuple[int, str]] = []
        self.code: list[str] = []
        self.prose: list[str] = []
        self.katex = 0
        self._skipping: list[bool] = []  # per open element: is it in code, math or script?
        self._article = 0
        self._heading: list[str] | None = None
        self._level = 0
        self._code: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "article":
            self._article += 1
        if "katex" in classes and self._article:
            self.katex += 1
        if tag in {"h1", "h2", "h3", "h4"}:
            self._heading, self._level = [], int(tag[1])
        if tag == "pre":
            self._code = []
        if tag in VOID:
            return
        parent = self._skipping[-1] if self._skipping else False
        self._skipping.append(
            parent or tag in {"pre", "code", "script", "style"} or "katex" in classes
        )

    def handle_endtag(self, tag):
        if tag == "article":
            self._article -= 1
        if tag in {"h1", "h2", "h3", "h4"} and self._heading is not None:
            self.headings.append((self._level, "".join(self._heading).strip()))
            self._heading = None
        if tag == "pre" and self._code is not None:
            self.code.append("".join(self._code))
            self._code = None
        if tag not in VOID and self._skipping:
            self._skipping.pop()

    def handle_data(self, data):
        if not self._article:
            return
        if self._code is not None:
            self._code.append(data)
        if self._heading is not None:
            self._heading.append(data)
        if not (self._skipping and self._skipping[-1]):
            self.prose.append(data)


def _parse(html: str) -> _Text:
    p = _Text()
    p.feed(html)
    return p


def test_strict_build_has_no_warnings(built_site):
    assert built_site["returncode"] == 0, built_site["log"]
    assert "WARNING" not in built_site["log"], built_site["log"]


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_page_exists_in_both_languages_with_the_same_structure(page, built_site):
    assert _en(DOCS / page).exists(), f"{_en(page)} is missing"
    zh = _parse(_html(built_site["dir"], page, "zh"))
    en = _parse(_html(built_site["dir"], page, "en"))
    assert [lvl for lvl, _ in zh.headings] == [lvl for lvl, _ in en.headings]
    assert len(zh.code) == len(en.code), "the two languages show different code blocks"
    # the same code, outputs and formulas; only a diagram's labels are translated
    cjk = re.compile(r"[\u4e00-\u9fff]")
    differ = [(a, b) for a, b in zip(zh.code, en.code, strict=True) if a != b]
    assert all(cjk.search(a) and not cjk.search(b) for a, b in differ), differ


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_page_sources_have_the_same_headings_and_code(page):
    def structure(text: str):
        headings, code, fence = [], [], None
        for line in text.split("\n"):
            if fence is None and (m := re.match(r"^\s*(`{3,})", line)):
                fence = m.group(1)
                code.append(line.strip())
            elif fence is not None:
                code.append(line.strip())
                if line.strip() == fence:
                    fence = None
            elif m := re.match(r"^(#+) ", line):
                headings.append(len(m.group(1)))
            elif "--8<--" in line:
                code.append(line.strip())
        return headings, code

    zh = structure((DOCS / page).read_text(encoding="utf-8"))
    en = structure(_en(DOCS / page).read_text(encoding="utf-8"))
    assert zh[0] == en[0] and len(zh[1]) == len(en[1])
    # code lines are the same, but for a diagram's translated labels
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert all(a == b or cjk.search(a) for a, b in zip(zh[1], en[1], strict=True))


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_no_unrendered_math_and_katex_where_formulas_are(page, lang, built_site):
    source = (DOCS / page if lang == "zh" else _en(DOCS / page)).read_text(encoding="utf-8")
    parsed = _parse(_html(built_site["dir"], page, lang))
    prose = "".join(parsed.prose)
    assert "$`" not in prose and "`$" not in prose and "$$" not in prose
    assert not re.search(r"\\(frac|hat|rho|pi|lambda|gamma|delta|log)\b", prose), "raw TeX in prose"
    formulas = source.count("$`") + source.count("```math")
    if formulas:
        assert parsed.katex >= formulas, (
            f"{formulas} formulas in the source, {parsed.katex} typeset"
        )


def test_katex_and_fonts_are_served_by_the_site(built_site):
    site = built_site["dir"]
    css = (site / "assets" / "katex" / "katex.min.css").read_text()
    fonts = re.findall(r"url\((fonts/[^)]+\.woff2)\)", css)
    assert fonts and all((site / "assets" / "katex" / f).exists() for f in fonts)


def test_every_lesson_cell_is_on_a_page(built_site):
    html = "".join(
        (built_site["dir"] / folder / "index.html").read_text(encoding="utf-8")
        for folder in CHAPTERS
    )
    for exercise_id in LESSONS:
        assert f'data-runner="{exercise_id}"' in html




@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("folder", CHAPTERS)
def test_downloads_resolve_and_the_solution_passes(folder, lang, built_site, tmp_path):
    site = built_site["dir"] / prefix(lang)
    html = (site / folder / "index.html").read_text(encoding="utf-8")
    for name in ("exercise.py", "solution.py"):
        hrefs = re.findall(rf'href="([^"]*{name})"', html)
        assert hrefs, f"no link to {name} on {prefix(lang)}{folder}/"
        for href in hrefs:
            # each language's page links its own language's download
            assert (site / folder / href).resolve() == (site / folder / name).resolve(), href
            assert (site / folder / name).exists(), f"{href} on {lang} {folder}/ does not resolve"
    lessons = [lesson for lesson in LESSONS.values() if lesson.path.parent.name == folder]
    solution = site / folder / "solution.py"
    text = solution.read_text(encoding="utf-8") + (site / folder / "exercise.py").read_text(
        encoding="utf-8")
    assert "--8<--" not in text  # no snippet marker leaks into a download
    run = subprocess.run(
        [sys.executable, str(solution)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert run.returncode == 0, run.stderr
    expected = "".join(
        f"---- {lesson.name}\n" + golden_path(lesson, lang).read_text("utf-8")
        for lesson in lessons
    )
    assert sorted(run.stdout.splitlines()) == sorted(expected.splitlines())


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("folder", CHAPTERS)
def test_the_download_is_in_its_pages_language_with_the_chapters_title(folder, lang, built_site):
    site = built_site["dir"] / prefix(lang)
    html = (site / folder / "index.html").read_text(encoding="utf-8")
    h1 = re.search(r"<h1[^>]*>(.*?)<", html).group(1).strip()
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for name in ("exercise.py", "solution.py"):
        text = (site / folder / name).read_text(encoding="utf-8")
        title, how = text.split("\n")[0].strip('"'), text.split('"""')[1]
        assert title == html_unescape(h1)  # the chapter's title in that language
        assert bool(cjk.search(how)) == (lang == "zh"), how
        lessons = [lesson.in_language(lang) for lesson in LESSONS.values()
                   if lesson.path.parent.name == folder]
        for lesson in lessons:  # every exercise's instructions in that language too
            code = lesson.exercise(blanked=name == "exercise.py")
            assert code[code.index("def "):] in text
    if lang == "zh":
        assert cjk.search(title)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("folder", CHAPTERS)
def test_each_exercise_of_the_download_runs_on_its_own(folder, lang, built_site, tmp_path):
    from site_build.ui_strings import build

    site = built_site["dir"] / prefix(lang)
    lessons = [lesson for lesson in LESSONS.values() if lesson.path.parent.name == folder]
    exercise = site / folder / "exercise.py"
    run = subprocess.run(
        [sys.executable, str(exercise)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    # every exercise says it is not done yet, and the run goes on to the next
    assert run.returncode == 0, run.stderr
    assert run.stdout.count(build(lang)["download"]["notDone"]) == len(lessons)
    # the first exercise, answered, runs to its expected output; the others are not run
    text = exercise.read_text(encoding="utf-8")
    first, other = sorted(lessons, key=lambda lesson: text.index(f"def {lesson.name}("))[:2]
    head, body = text.split(f"def {first.name}(", 1)
    for blank in first.blanks:  # its blanks are the first ones after its def
        body = body.replace("_____", blank.answer, 1)
    answered = f"{head}def {first.name}({body}"
    target = tmp_path / "exercise.py"
    target.write_text(answered, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(target), first.name], capture_output=True, text=True, cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"---- {first.name}\n" + golden_path(first, lang).read_text("utf-8")
    assert other.name not in run.stdout


def test_chinese_search_index_splits_chinese_words(built_site):
    index = json.loads((built_site["dir"] / "search" / "search_index.json").read_text("utf-8"))
    # jieba segments at build time with U+200B, and the search separator splits on it
    assert "\\u200b" in index["config"]["separator"]
    assert any("\u200b重要性\u200b" in doc["text"] for doc in index["docs"])


def test_search_finds_no_drill_code(built_site):
    """A drill shows the answer's whole function; search must not (clean-slate mode hides the
    drill until Check passes, and a search for two of its names once listed it whole)."""
    from html import unescape

    index = json.loads((built_site["dir"] / "search" / "search_index.json").read_text("utf-8"))
    texts = [unescape(re.sub(r"<[^>]+>", "", doc["text"])) for doc in index["docs"]]
    for exercise_id, lesson in LESSONS.items():
        # the drill's code from its signature line to its last line, as the drill shows it
        code = lesson.drill_code.strip()
        assert code.count("\n") >= 2, exercise_id
        assert not any(code in text for text in texts), exercise_id


def test_katex_extension_typesets_inline_and_block_math_and_leaves_code_alone(tmp_path):
    import markdown

    from site_build.katex import Katex, KatexExtension

    katex = Katex(ROOT / "node_modules", tmp_path / "cache")
    try:
        md = markdown.Markdown(extensions=["pymdownx.superfences", KatexExtension(katex)])
        html = md.convert(
            "Ratio $`\\rho_t = \\sqrt{x}`$ here.\n\n```math\n\\hat A_t = \\delta_t\n```\n\n"
            "```python\nx = \"$`not math`$\"\n```\n"
        )
    finally:
        katex.close()
    assert html.count('class="katex"') == 2 and html.count('class="katex-display"') == 1
    assert "<svg" not in html and "data:image/svg+xml;base64," in html  # \\sqrt's SVG, as <img>
    assert "$`not math`$" in html  # code is not typeset
    assert len(list((tmp_path / "cache").glob("*.html"))) == 2  # each formula typeset once


def test_katex_errors_name_the_formula_and_a_missing_katex_says_run_npm_ci(tmp_path):
    from site_build.katex import Katex, KatexError

    katex = Katex(ROOT / "node_modules", tmp_path / "cache")
    try:
        with pytest.raises(KatexError, match=r"\\frac\{1"):
            katex.render("\\frac{1", display=False)
    finally:
        katex.close()
    with pytest.raises(KatexError, match="npm ci"):
        Katex(tmp_path / "node_modules", tmp_path / "cache")


def test_the_site_publishes_no_build_code(built_site):
    site = built_site["dir"]
    published = [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()]
    assert not [p for p in published if p.endswith((".cjs", ".mjs.map")) or "hooks/" in p]
    python = sorted(p for p in published if p.endswith(".py"))
    # the downloads (one per chapter and language), and nothing else
    assert python == sorted(
        f"{prefix(lang)}{folder}/{name}" for lang in LANGUAGES for folder in CHAPTERS
        for name in ("exercise.py", "solution.py")
    )


def test_per_exercise_time_limits_come_from_the_lesson_files(built_site):
    html = (built_site["dir"] / "ppo" / "index.html").read_text(encoding="utf-8")
    assert 'data-runner="ppo/compute_gae" data-timeout="15"' in html  # its TIMEOUT = 15
    assert 'data-runner="ppo/importance_ratio" data-timeout="10"' in html  # the default
    cells = {
        data["id"]: data for data in (
            json.loads(m) for m in re.findall(
                r'<script class="rl-cell-data" type="application/json">(.*?)</script>', html))
    }
    for exercise_id, data in cells.items():
        lesson = LESSONS[exercise_id].in_language("zh")  # the default language's page
        assert data["exercise"] == lesson.exercise(blanked=True).rstrip("\n")
        assert data["test"] == lesson.test().rstrip("\n")


def _cells(html: str) -> dict[str, dict]:
    return {
        data["id"]: data for data in (
            json.loads(m) for m in re.findall(
                r'<script class="rl-cell-data" type="application/json">(.*?)</script>', html))
    }


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("folder", CHAPTERS)
def test_each_page_shows_its_exercises_in_its_language(folder, lang, built_site):
    # the cell (what Run and Check run), the blanked code shown, the expected output and the
    # answer: all from the lesson in the page's language, the Chinese page's in Chinese
    html = (built_site["dir"] / prefix(lang) / folder / "index.html").read_text("utf-8")
    page = _parse(html)
    code = [html_unescape(c) for c in page.code]
    cells = _cells(html)
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for exercise_id, data in cells.items():
        lesson = LESSONS[exercise_id].in_language(lang)
        assert data["exercise"] == lesson.exercise(blanked=True).rstrip("\n")
        assert data["test"] == lesson.test().rstrip("\n")
        assert data["version"] == LESSONS[exercise_id].version  # saved work: either page
        assert bool(cjk.search(data["exercise"])) == (lang == "zh"), exercise_id
        expected = golden_path(lesson).read_text(encoding="utf-8")
        assert golden_path(lesson).name == f"{lesson.path.stem}{'.zh' if lang == 'zh' else ''}.out"
        assert expected.strip() in [c.strip() for c in code], f"{exercise_id}: expected output"
        assert lesson.exercise(blanked=True).strip() in [c.strip() for c in code]
        answer = lesson.answers().split("\n")[0]  # its first TODO, as the answer block shows it
        assert any(answer in c for c in code), answer
    assert len(cells) == sum(1 for lesson in LESSONS.values() if lesson.path.parent.name == folder)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_example_on_a_page_is_in_the_pages_language(lang, built_site):
    # grpo/reinforce_pp.py is placed with pymdownx.snippets (a section and its .out)
    from .golden import Script

    html = (built_site["dir"] / prefix(lang) / "grpo" / "index.html").read_text("utf-8")
    code = [html_unescape(c).strip() for c in _parse(html).code]
    script = Script(DOCS / "grpo" / "reinforce_pp.py", lang)
    section = script.text.split("[start:example]\n")[1].split("# --8<-- [end:example]")[0]
    assert section.strip() in code
    assert golden_path(script).read_text("utf-8").strip() in code


def test_site_url_comes_from_the_environment_for_canonical_links_and_the_sitemap(tmp_path):
    import os
    import subprocess
    import sys

    url = "https://learner.example.org/rl-ops/"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": url}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "ppo" / "index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{url}ppo/">' in html
    assert f"<loc>{url}en/ppo/</loc>" in (tmp_path / "sitemap.xml").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_numbers_in_the_grpo_pages_prose_come_from_its_lessons_outputs(lang):
    # every number written with three or more decimals on the GRPO page is printed by one of the
    # chapter's lesson files (docs/grpo/*.out): none typed in by hand
    page = DOCS / "grpo" / f"index.{lang}.md"
    outputs = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "grpo").glob("*.out"))
    # (not an arXiv id, written "arXiv:2402.03300" or in a link to arxiv.org/abs/2402.03300)
    text = page.read_text(encoding="utf-8")
    numbers = set(re.findall(r"(?<!arXiv:)(?<!abs/)\b\d+\.\d{3,}", text))
    assert len(numbers) >= 6  # the aggregation table, the clip-higher and reward-model walkthroughs
    assert not {n for n in numbers if n not in outputs}


def test_every_module_url_asks_for_the_code_version_and_the_service_worker_knows_each_file(
        built_site):
    """A page, its modules and the worker it starts are one build's: every script tag and every
    relative import asks for ``?v=<version>``; worker.js carries that version (it refuses a page
    of another), and sw.js has each module's hash (it keeps only this build's bytes)."""
    import hashlib

    from site_build import service_worker
    from site_build.es_modules import imports

    site = built_site["dir"]
    html = (site / "en" / "ppo" / "index.html").read_text(encoding="utf-8")
    config = json.loads(re.search(r'<script id="rl-config"[^>]*>(.*?)</script>', html, re.S)[1])
    v = config["version"]
    scripts = re.findall(r'<script type="module" src="([^"]+)"', html)
    assert scripts and all(src.endswith(f".js?v={v}") for src in scripts), scripts
    modules = [p for folder in service_worker.CODE_FOLDERS for p in (site / folder).glob("*.*js")]
    assert {p.name for p in modules} >= {"worker.js", "boot.js", "python.js", "browser.js",
                                         "index.mjs"}
    for module in modules:
        for spec in imports(module):
            if spec.startswith(("./", "../")):
                assert re.search(rf"\.m?js\?v={v}$", spec), (module.name, spec)
    assert f'const VERSION = "{v}";' in (site / "assets" / "js" / "worker.js").read_text("utf-8")
    sw = (site / "sw.js").read_text(encoding="utf-8")
    assert f'const VERSION = "{v}";' in sw
    hashes = json.loads(re.search(r"const HASHES = (\{.*?\});", sw)[1])
    for module in modules:
        path = module.relative_to(site).as_posix()
        assert hashes[path] == hashlib.sha256(module.read_bytes()).hexdigest(), path
