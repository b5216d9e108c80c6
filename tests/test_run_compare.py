"""Run compares a cell's printed output with the expected output the page shows (js/compare.js).

What the build hands the runner (site_build/directives.py ``cell_data``): the very text of the
page's ``text`` block, from the lesson's ``.out`` (``.zh.out``) file, and the exercise's Check
tolerance. Then the claim that every exercise's own answer matches, in both languages: what the
lesson prints under real PyTorch and under the browser's torch layer (what Pyodide runs), fed to
js/compare.js under Node; and that a wrong answer differs at the line where it goes wrong. In
Chromium: tests/test_browser_exercises.py (each exercise's Run says it matches) and
tests/test_browser_runner.py (the wrong answer's line is said and marked).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from site_build.directives import exercise_markdown
from site_build.lessons import LANGUAGES, Lesson
from site_build.ui_strings import table

from .conftest import LESSONS, ROOT
from .golden import golden_path, run_lesson

COMPARE_JS = ROOT / "js" / "compare.js"


def js_compare(cases: list[tuple[str, str, dict]]) -> list[dict]:
    """js/compare.js ``compareOutput(got, expected, tolerance)`` of each case, run by Node."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: `make test` needs Node 20")
    script = (
        f"import {{ compareOutput }} from {json.dumps(COMPARE_JS.as_uri())};\n"
        "let input = '';\n"
        "process.stdin.on('data', (d) => { input += d; });\n"
        "process.stdin.on('end', () => process.stdout.write(JSON.stringify(\n"
        "  JSON.parse(input).map(([got, want, tol]) => compareOutput(got, want, tol)))));\n"
    )
    proc = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def said(lang: str, key: str, **values: object) -> re.Pattern:
    """js/strings.toml's string ``key`` in ``lang`` as a pattern: ``values`` put in, any other
    {placeholder} a number (the run's milliseconds)."""
    parts = re.split(r"\{(\w+)\}", table(lang)[key])
    return re.compile("".join(
        re.escape(part) if i % 2 == 0 else
        (re.escape(str(values[part])) if part in values else r"\d+")
        for i, part in enumerate(parts)
    ))


def page_cell(lesson: Lesson, lang: str) -> tuple[dict, str]:
    """The cell's data and the expected output the page shows (its ```text block), as the build
    writes the exercise into a page of ``lang``."""
    markdown = exercise_markdown(lesson, lang)
    data = json.loads(re.search(
        r'<script type="application/json" class="rl-cell-data">(.*?)</script>', markdown).group(1))
    shown = re.search(r"```text\n(.*?)```", markdown, re.S).group(1)
    return data, shown


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_cell_carries_the_expected_output_the_page_shows_and_checks_tolerance(lang):
    for exercise_id, lesson in LESSONS.items():
        data, shown = page_cell(lesson, lang)
        out = golden_path(lesson, lang).read_text(encoding="utf-8")
        assert data["expected"]["output"] == shown == out, exercise_id
        assert (data["expected"]["rtol"], data["expected"]["atol"]) == (
            lesson.manifest.rtol, lesson.manifest.atol)


def test_a_lessons_own_rtol_and_atol_are_the_ones_run_compares_with(tmp_path):
    source = LESSONS["ppo/importance_ratio"].path
    text = source.read_text(encoding="utf-8")
    title = next(line for line in text.split("\n") if line.startswith("TITLE = "))
    folder = tmp_path / "ppo"
    folder.mkdir()
    path = folder / source.name
    path.write_text(text.replace(title, f"{title}\nRTOL, ATOL = 0.003, 0.0002"), encoding="utf-8")
    for out in source.parent.glob(f"{source.stem}*.out"):
        shutil.copy(out, folder / out.name)
    data, _ = page_cell(Lesson.load(path), "en")
    assert (data["expected"]["rtol"], data["expected"]["atol"]) == (0.003, 0.0002)


def test_every_answer_matches_its_own_expected_output_in_both_languages_and_runtimes():
    # the lesson file as a whole is the answer and its test: what Run prints once the blanks
    # hold the answers, under real PyTorch and under the browser's torch layer
    cases, names = [], []
    for exercise_id, lesson in sorted(LESSONS.items()):
        for lang in LANGUAGES:
            local = lesson.in_language(lang)
            data, _ = page_cell(lesson, lang)
            for layer in (False, True):
                cases.append((run_lesson(local, layer=layer), data["expected"]["output"],
                              data["expected"]))
                names.append((exercise_id, lang, "layer" if layer else "torch"))
    verdicts = js_compare(cases)
    assert len(names) == 2 * len(LANGUAGES) * len(LESSONS)
    assert [n for n, v in zip(names, verdicts, strict=True) if v != {"same": True}] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_padding_multiplied_by_the_mask_differs_where_its_nan_is_printed(lang):
    # -inf - (-inf) is nan, and nan * 0 is nan: ρ[0, 3:] prints nan where 1.0 is expected
    lesson = LESSONS["ppo/importance_ratio"].in_language(lang)
    trap = next(t for t in lesson.traps if t.why.startswith("TODO 2"))  # the multiply by the mask
    answer = lesson.exercise(blanked=False)
    assert lesson.text.count(answer) == 1
    wrong = SimpleNamespace(path=lesson.path,
                            text=lesson.text.replace(answer, trap.apply(answer)))
    data, _ = page_cell(lesson, lang)
    expected = data["expected"]["output"]
    line = 1 + next(i for i, text in enumerate(expected.split("\n")) if text.startswith("ρ[0, 3:]"))
    outputs = [run_lesson(wrong, layer=layer) for layer in (False, True)]
    assert all("nan" in out.split("\n")[line - 1] for out in outputs)
    assert js_compare([(out, expected, data["expected"]) for out in outputs]) == [
        {"same": False, "line": line}] * 2

