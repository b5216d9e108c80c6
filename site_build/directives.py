"""Page directives: one HTML-comment line that places an exercise, a chapter's drills or the demo.

    <!-- rl:exercise ppo/compute_gae -->   the exercise: its runnable cell, the expected output
                                           and the collapsed answer. Admonitions written right
                                           below the line (a `??? tip "Hint"`) go between the
                                           expected output and the answer.
    <!-- rl:drills -->                     the MLM drill of every exercise placed on this page,
                                           in page order, each under a `###` heading (its TITLE)
    <!-- rl:demo -->                       the toy RLHF run (js/demo.js), with its sample curves
    <!-- rl:progress -->                   what this browser solved, per chapter (js/progress.js)
    <!-- rl:figure clip -->                a figure the reader can move (site_build/figures.py,
                                           js/figure.js)

The plugin expands them in ``on_page_markdown``; everything shown comes from the lesson files
(``site_build.lessons``), never from text pasted into the page, and in the page's language: the
lesson's comments, docstring and printed words translated by the file's own table, its expected
output the one ``make golden`` wrote for that language (``compute_gae.zh.out``). The same holds
for a lesson file's section or output included with pymdownx.snippets
(``--8<-- "grpo/reinforce_pp.py:example"``, ``--8<-- "grpo/reinforce_pp.out"``): on a Chinese
page the build puts in the Chinese text (:func:`localize_snippets`). A directive MkDocs does not
know stays an invisible comment, so an unexpanded page shows nothing broken; the plugin refuses
unknown ids and kinds instead.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import ui_strings
from .drill import drill_html
from .figures import FIGURES, figure_html
from .lessons import SOURCE_LANGUAGE, Lesson, output_path, translate

DIRECTIVE_RE = re.compile(r"^<!--\s*rl:([a-z]+)((?:\s+[^\s>]+)*)\s*-->[ \t]*$", re.M)
KINDS = ("exercise", "drills", "demo", "progress", "figure")

@dataclass(frozen=True)
class Directive:
    kind: str
    args: tuple[str, ...]
    line: int  # 1-based, in the page's Markdown
    start: int  # character offsets of the directive line
    end: int


def directives(markdown: str) -> list[Directive]:
    """Every directive of a page, in order, outside fenced code."""
    fenced = _fenced_spans(markdown)
    found = []
    for m in DIRECTIVE_RE.finditer(markdown):
        if any(a <= m.start() < b for a, b in fenced):
            continue
        found.append(Directive(
            kind=m.group(1), args=tuple(m.group(2).split()),
            line=markdown.count("\n", 0, m.start()) + 1, start=m.start(), end=m.end(),
        ))
    return found


def placed(markdown: str) -> list[str]:
    """The ids of the exercises a page places, in order."""
    return [d.args[0] for d in directives(markdown) if d.kind == "exercise" and d.args]


def _fenced_spans(markdown: str) -> list[tuple[int, int]]:
    spans, start, fence, pos = [], 0, None, 0
    for line in markdown.splitlines(keepends=True):
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence, start = stripped[:3], pos
        elif fence is not None and stripped.startswith(fence) and stripped.strip("`~") == "":
            spans.append((start, pos + len(line)))
            fence = None
        pos += len(line)
    return spans


class DirectiveError(ValueError):
    """A directive the page cannot have: names the page, the line and what is wrong."""


SNIPPET_RE = re.compile(r'^([ \t]*)-{1,}8<-{1,}[ \t]+"([^"]+?)(?::([-_0-9a-z]+))?"[ \t]*$',
                        re.M | re.I)


def localize_snippets(markdown: str, page: str, lang: str, docs: Path) -> str:
    """On a page not in English, a snippet of a lesson file (``--8<-- "x/y.py:example"``) or of
    its expected output (``--8<-- "x/y.out"``) becomes that text in the page's language, as
    pymdownx.snippets would have put it in (the section's lines, dedented). Other snippets (the
    demo's code) stay for pymdownx.snippets."""
    if lang == SOURCE_LANGUAGE:
        return markdown

    def replace(m: re.Match) -> str:
        indent, name, section = m.groups()
        path = docs / name
        if not path.is_file() or path.suffix not in (".py", ".out"):
            return m.group(0)
        if path.suffix == ".out":
            local = output_path(path.with_suffix(".py"), lang)
            if not local.is_file():
                raise DirectiveError(f"{page}: {local.relative_to(docs)} is missing: run "
                                     "`make golden`")
            text = local.read_text(encoding="utf-8")
        else:
            lesson = Lesson(path, translate(path.read_text(encoding="utf-8"), path, lang), lang)
            text = lesson.section(section) if section else lesson.text
            text = textwrap.dedent(text)
        lines = text.rstrip("\n").split("\n")
        return "\n".join(indent + line if line else line for line in lines)

    return SNIPPET_RE.sub(replace, markdown)


def expand(markdown: str, page: str, lang: str, lessons: dict[str, Lesson],
           demo: Callable[[], str], progress: Callable[[str], str] = lambda lang: "") -> str:
    """The page with every directive replaced by what it places."""
    found = directives(markdown)
    on_page = [lessons[d.args[0]] for d in found if d.kind == "exercise" and d.args[0] in lessons]
    out, pos = [], 0
    for d in found:
        where = f"{page}:{d.line}"
        if d.kind not in KINDS:
            raise DirectiveError(f"{where}: unknown directive rl:{d.kind}; known: {KINDS}")
        out.append(markdown[pos : d.start])
        pos = d.end
        if d.kind == "exercise":
            if len(d.args) != 1 or d.args[0] not in lessons:
                known = ", ".join(sorted(lessons))
                raise DirectiveError(f"{where}: rl:exercise needs one exercise id of: {known}")
            notes, pos = _admonitions_after(markdown, pos)
            out.append(exercise_markdown(lessons[d.args[0]], lang, notes))
        elif d.kind == "drills":
            if d.args or not on_page:
                raise DirectiveError(f"{where}: rl:drills takes no argument and needs exercises "
                                     "placed on the page")
            out.append(drills_markdown(on_page, lang))
        elif d.kind == "progress":
            out.append(progress(lang))
        elif d.kind == "figure":
            if len(d.args) != 1 or d.args[0] not in FIGURES:
                raise DirectiveError(f"{where}: rl:figure needs one figure id of: "
                                     f"{', '.join(FIGURES)}")
            out.append(figure_html(FIGURES[d.args[0]], lang))
        else:
            out.append(demo())
    out.append(markdown[pos:])
    return "".join(out)


def _admonitions_after(markdown: str, pos: int) -> tuple[str, int]:
    """Admonition blocks (``???`` or ``!!!`` and their indented body) that directly follow
    ``pos``: returned to be placed before the answer, with the position after them."""
    lines = markdown[pos:].split("\n")
    taken, i = [], 1  # lines[0] is the rest of the directive's line
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if not lines[i].startswith(("??? ", "???+ ", "!!! ")):
            break
        block = [lines[i]]
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
            i -= 1
        taken.append("\n".join(block))
    if not taken:
        return "", pos
    consumed = "\n".join(lines[:i])
    return "\n\n".join(taken), pos + len(consumed)


def cell_data(lesson: Lesson, expected: str) -> str:
    """The cell's data: the program as the build wrote it (js/runner.js never reads the
    highlighted text back), and what the runner needs to know about the exercise: its expected
    output (``expected``, the text the page shows under the cell) and Check's tolerance, which
    Run compares the printed output with (js/compare.js)."""
    data = {
        "id": lesson.id,
        "function": lesson.name,
        "version": lesson.version,  # saved work of an older version is recognised by it
        "exercise": lesson.exercise(blanked=True).rstrip("\n"),
        "test": lesson.test().rstrip("\n"),
        "expected": {"output": expected, "rtol": lesson.manifest.rtol,
                     "atol": lesson.manifest.atol},
    }
    return json.dumps(data, ensure_ascii=False).replace("</", "<\\/")


def exercise_markdown(lesson: Lesson, lang: str, notes: str = "") -> str:
    """Cell, expected output, the page's notes, answer: Markdown for the page's language, from
    the lesson in that language (the cell's program too: Run prints that language, and compares
    it with that language's expected output). All but the cell sit in one ``data-after`` block,
    which clean-slate mode hides until Check passes."""
    words = ui_strings.build(lang)
    lesson = lesson.in_language(lang)
    answers = "\n".join(("    " + ln) if ln else "" for ln in lesson.answers().split("\n"))
    if not lesson.out_path.is_file():
        raise DirectiveError(f"{lesson.out_path} is missing: run `make golden`")
    # read once: the page's ```text block and the data Run compares with are this one text
    expected = lesson.out_path.read_text(encoding="utf-8")
    parts = [
        f'<div class="rl-cell" data-runner="{html.escape(lesson.id)}" '
        f'data-timeout="{lesson.manifest.timeout:g}" markdown>\n'
        f'<script type="application/json" class="rl-cell-data">{cell_data(lesson, expected)}'
        "</script>\n\n"
        f"```python\n{lesson.exercise(blanked=True)}```\n\n"
        f"```python\n{lesson.test()}```\n\n"
        "</div>",
        # what clean-slate mode hides until the exercise's Check passes (js/cleanslate.js)
        f'<div class="rl-after" data-after="{html.escape(lesson.id)}" '
        f'data-version="{html.escape(lesson.version)}" markdown>',
        f"**{words['expected']}**",
        f"```text\n{expected}```",
    ]
    if notes:
        parts.append(notes)
    parts.append(f'??? success "{words["answer"]}"\n    ```python\n{answers.rstrip()}\n    ```')
    parts.append("</div>")
    return "\n\n".join(parts) + "\n"


def drills_markdown(lessons: list[Lesson], lang: str) -> str:
    """One ``###`` heading and drill per exercise (its code has no comments; a string in it
    would be the page language's), in a ``data-after`` block: it shows the answer's code, so
    clean-slate mode hides it until the exercise's Check passes."""
    blocks = []
    for lesson in (lesson.in_language(lang) for lesson in lessons):
        imports = "\n".join(
            line for line in lesson.exercise(blanked=False).split("\n")
            if line.startswith(("import ", "from "))
        )
        drill = drill_html(lesson.id, lesson.drill_code, imports, lesson.version)
        # the drill shows the answer's code: clean-slate mode hides it too (js/cleanslate.js),
        # and search leaves it out (Material skips an element marked data-search-exclude)
        blocks.append(f"### {lesson.manifest.title[lang]}\n\n"
                      f'<div class="rl-after" data-after="{html.escape(lesson.id)}" '
                      f'data-version="{html.escape(lesson.version)}" data-what="drill"'
                      " data-search-exclude>\n"
                      f"{drill}\n</div>\n")
    return "\n".join(blocks)
