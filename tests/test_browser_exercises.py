"""Exercises end to end in Chromium, with the Python the site serves (Pyodide and numpy from
the built site, nothing from another host): the first two exercises of every chapter (by id),
the first on the Chinese page and the second on the English one, so every chapter is exercised
in both languages. What needs no page is proven for every exercise, in both languages, on
Pyodide in Node (tests/test_wasm.py: Run prints the language's expected output; Check passes the
answer and fails its blanks, its wrong last blank with a shrunk case, and every trap).

For each exercise here: its blanks typed in, Run prints exactly the page's expected output and
says so (js/compare.js); Check passes; a wrong last blank makes Check fail and show the failing
case, in the page's language. One browser page per language goes from lesson page to lesson
page: Python loads the long way once per language, and every later page starts from the boot
image it kept.
"""

from __future__ import annotations

import re

import pytest

from browser_runtime.check import check

from .browser import describe, new_page, wait_until
from .conftest import CHAPTERS, EXERCISES, LESSONS
from .golden import golden_path
from .test_run_compare import said

TIMEOUT = 120_000  # ms: a cold Pyodide start with numpy, on a loaded two-core machine
LANGUAGES = {"zh": "", "en": "en/"}


def one_line(answer: str) -> str:
    """An answer as a learner types it into a one-line blank (brackets join its lines)."""
    return " ".join(answer.split())


@pytest.fixture(scope="module")
def pages(chromium, site_url):
    """(language, lesson folder) -> the language's page, on that folder's lesson page: one
    browser per language, kept for the module. Its first page loads Python the long way; every
    later one starts from the boot image the first kept (js/boot.js), as a learner's would."""
    opened: dict[str, object] = {}

    def get(lang: str, folder: str):
        url = f"{site_url}/{LANGUAGES[lang]}{folder}/"
        if lang not in opened:
            opened[lang] = new_page(chromium, url)
        page = opened[lang]
        if page.url != url:
            assert not page.errors and not page.foreign, (page.errors, page.foreign)
            page.goto(url)
            page.wait_for_load_state("networkidle")
        return page

    yield get
    for page in opened.values():
        assert not page.errors and not page.foreign, (page.errors, page.foreign)
        page.context.close()


def _fill(cell, answers: list[str]) -> None:
    blanks = cell.locator("input[data-blank]")
    assert blanks.count() == len(answers)
    for k, answer in enumerate(answers):
        blanks.nth(k).fill(one_line(answer))


def _press(page, cell, action: str) -> str:
    """Click Run or Check and wait until the cell is idle again; return its output."""
    cell.locator(f"[data-action='{action}']").click()
    wait_until(
        page, "el => el.dataset.state === 'idle' && el.querySelector('[data-output]').textContent",
        cell.element_handle(), timeout=TIMEOUT,
        what=f"{cell.get_attribute('data-runner')} idle with an output after {action}",
        now=lambda: describe(page, cell.get_attribute("data-runner")),
    )
    return cell.locator("[data-output]").text_content()


def _cases() -> list[tuple[str, str]]:
    """(language, exercise): each chapter's first two exercises, one in each language (a
    chapter of one exercise has it in both)."""
    cases = []
    for chapter in CHAPTERS:
        ids = sorted(ex for ex in LESSONS if ex.split("/")[0] == chapter)
        cases += [(lang, ids[min(k, len(ids) - 1)]) for k, lang in enumerate(LANGUAGES)]
    return cases


CASES = _cases()


def test_every_chapter_is_exercised_in_both_languages():
    for chapter in CHAPTERS:
        assert {lang for lang, ex in CASES if ex.startswith(f"{chapter}/")} == set(LANGUAGES)


@pytest.mark.parametrize(("lang", "exercise_id"), CASES, ids=[f"{lang}-{s}" for lang, s in CASES])
def test_exercise_runs_to_its_expected_output_and_check_tells_right_from_wrong(
    pages, lang, exercise_id
):
    lesson = LESSONS[exercise_id]
    page = pages(lang, exercise_id.split("/")[0])
    cell = page.locator(f"[data-runner='{exercise_id}']")
    cell.scroll_into_view_if_needed()
    answers = [b.answer for b in lesson.blanks]
    _fill(cell, answers)

    out = _press(page, cell, "run")
    # Run prints the page's language (compute_gae.zh.out on a Chinese page)
    assert out == golden_path(lesson, lang).read_text(encoding="utf-8")
    # the page shows the same expected output under the cell
    assert out.strip() in [t.strip() for t in page.locator("pre code").all_text_contents()]
    # and Run says it matches (compared with the data the build gave the cell), marking nothing
    status = cell.locator(".rl-status").text_content()
    assert said(lang, "runMatches").fullmatch(status), status
    assert cell.locator("mark.rl-diff").count() == 0

    _press(page, cell, "check")
    status = cell.locator(".rl-status").text_content()
    total = status.split("/")[-1]
    assert status == f"{total}/{total}" and int(total) > 0

    _fill(cell, [*answers[:-1], f"({one_line(answers[-1])}) * 1.5"])
    out = _press(page, cell, "check")
    passed, total = map(int, cell.locator(".rl-status").text_content().split("/"))
    assert passed < total
    # one failing case, shrunk, with its inputs, the expected and the learner's values
    assert cell.locator("[data-output] .rl-error").count() == 1
    first_input = lesson.function.args.args[0].arg
    assert f"{first_input} = " in out
    assert ("values differ" if lang == "en" else "数值不同") in out  # why, in the page's language
    assert ("Smallest failing input" if lang == "en" else "最小的失败输入") in out
    # the inputs come from a fresh seed, named with the case: drawn again from that seed (under
    # CPython, real torch), the same case fails first
    if lang == "en":
        case, seed = re.search(r"shrunk from random case (\d+) of seed (\d+)\)", out).groups()
    else:
        seed, case = re.search(r"由种子 (\d+) 的第 (\d+) 组随机输入缩小而来", out).groups()
    wrong = [*answers[:-1], f"({one_line(answers[-1])}) * 1.5"]
    code = re.sub("_____", lambda _: wrong.pop(0), lesson.exercise(blanked=True))
    again = check(EXERCISES[exercise_id], code, seed=int(seed))
    assert again["seed"] == int(seed) and again["failures"][0]["case"] == int(case)
