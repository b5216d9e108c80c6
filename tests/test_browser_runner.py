"""Runnable cells in headless Chromium with the Python the site serves: the controls (Run,
Stop, Reset, Edit, the time limit), saved work, what the page says when a download fails, and
Run's comparison with the expected output (js/compare.js: the wrong answer's line said and
marked, no comparison claimed for a run that failed). Every exercise end to end:
test_browser_exercises.py."""

from __future__ import annotations

import json

import pytest

from site_build.ui_strings import table

from .browser import (
    ISOLATED,
    fail_downloads,
    long_loads,
    new_page,
    page_for,
    serve,
    timers_fire,
    wait_until,
)
from .conftest import LESSONS
from .golden import golden_path
from .test_browser_a11y import violations
from .test_run_compare import said

CELL = "[data-runner='ppo/importance_ratio']"
OUTPUT_TIMEOUT = 60_000  # ms: a cold Pyodide start is ~4 s here, but CI machines vary
PREFIX = {"zh": "", "en": "en/"}


def _nothing_compared(page, cell: str = CELL) -> None:
    """A run that did not end well claims no comparison: the status is empty (Stop, the time
    limit: the output says how it ended) and no line is marked."""
    assert page.locator(f"{cell} .rl-status").text_content() == ""
    assert page.locator(f"{cell} mark.rl-diff").count() == 0


@pytest.fixture
def page(request, site_url, shared_pages):
    """The module's page and Python, as opened; a page of its own for the tests marked
    fresh_page (of the first load, of saved work across a reload, of a failed download)."""
    page = page_for(request, shared_pages, f"{site_url}/ppo/")
    yield page
    assert not page.foreign, page.foreign


def _edit_and_run(page, code: str, cell: str = CELL) -> None:
    root = page.locator(cell)
    if root.locator("textarea").is_hidden():
        root.locator("[data-action='edit']").click()
    root.locator("textarea").fill(code)
    root.locator("[data-action='run']").click()


def _wait_output(page, text: str, cell: str = CELL, timeout: int = OUTPUT_TIMEOUT) -> str:
    wait_until(
        page,
        "([sel, t]) => document.querySelector(sel + ' [data-output]').textContent.includes(t)",
        [cell, text], timeout=timeout, what=f"{text!r} in the output of {cell}",
        now=lambda: page.locator(f"{cell} [data-output]").inner_text(),
    )
    return page.locator(f"{cell} [data-output]").inner_text()


def _wait_idle(page, cell: str = CELL, timeout: int = OUTPUT_TIMEOUT) -> None:
    wait_until(
        page, "sel => !document.querySelector(sel + ' [data-action=run]').disabled", cell,
        timeout=timeout, what=f"Run enabled again in {cell}",
        now=lambda: page.locator(f"{cell} [data-output]").inner_text(),
    )


@pytest.mark.fresh_page
def test_cells_have_blanks_and_buttons_and_fetch_no_python(page):
    cells = page.locator("[data-runner]")
    assert cells.count() == sum(1 for ex in LESSONS if ex.startswith("ppo/"))
    first = page.locator(CELL)
    assert first.locator("input[data-blank]").count() == len(LESSONS["ppo/importance_ratio"].blanks)
    for action in ("run", "check", "stop", "reset", "edit"):
        assert first.locator(f"[data-action='{action}']").count() == 1
    label = first.locator("input[data-blank]").first.get_attribute("aria-label")
    assert label and "1" in label
    loaded = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert not [u for u in loaded if "pyodide" in u or ".whl" in u or "worker.js" in u]


@pytest.mark.fresh_page
def test_run_plain_python_shows_progress_then_output(page):
    _edit_and_run(page, 'print("hello from the cell")\nprint(sum(range(10)))\n')
    page.locator(f"{CELL} .rl-progress").wait_for(state="visible", timeout=10_000)
    label = page.locator(f"{CELL} .rl-progress span").inner_text()
    assert label  # says what is being fetched
    out = _wait_output(page, "45")
    assert "hello from the cell" in out
    _wait_idle(page)
    assert page.locator(f"{CELL} .rl-progress").is_hidden()
    # a second run starts from the boot image the first made: no second load, no progress bar
    _edit_and_run(page, 'print("again")\n')
    _wait_output(page, "again")
    assert long_loads(page) == 1
    assert page.locator(f"{CELL} .rl-progress").is_hidden()
    assert not page.errors


def test_output_containing_html_is_shown_as_text(page):
    _edit_and_run(page, 'print("<b>bold</b><img src=x onerror=alert(1)>")\n')
    out = _wait_output(page, "<b>bold</b>")
    assert "<img src=x" in out
    assert page.locator(f"{CELL} [data-output] b, {CELL} [data-output] img").count() == 0


def test_syntax_error_points_at_the_learners_line(page):
    root = page.locator(CELL)
    blank = root.locator("input[data-blank]").first
    blank.fill("new_logprobs -")
    root.locator("[data-action='run']").click()
    out = _wait_output(page, "SyntaxError")
    code = root.locator(".highlight code").first.inner_text()
    line = next(i for i, text in enumerate(code.split("\n"), 1) if "log_ratio =" in text)
    assert f"exercise, line {line}" in out
    assert "log_ratio = new_logprobs -" in out and "<cell>" not in out and "runner" not in out


def test_runaway_loop_is_stopped_by_the_time_limit_and_the_page_stays_responsive(page):
    page.eval_on_selector(CELL, "el => el.dataset.timeout = '3'")
    _edit_and_run(page, 'print("warm")\n')
    _wait_output(page, "warm")
    _wait_idle(page)
    _edit_and_run(page, "while True:\n    pass\n")
    wait_until(
        page, f'document.querySelector("{CELL} [data-action=stop]").disabled === false',
        what="Stop enabled: the loop has started",
    )
    # the main thread answers while Python spins in the worker: a timer fires, typing works
    timers_fire(page)
    page.locator(CELL).locator("textarea").press("End")
    page.locator(f"{CELL} [data-output] .rl-error").wait_for(timeout=20_000)
    assert "3" in page.locator(f"{CELL} [data-output] .rl-error").inner_text()  # the limit, in s
    _wait_idle(page)
    _nothing_compared(page)
    _edit_and_run(page, 'print("after the limit")\n')
    _wait_output(page, "after the limit")


def _stop_a_runaway_loop(page):
    """Warm the runtime, start `while True: pass`, press Stop and wait until the cell is idle."""
    _edit_and_run(page, 'print("warm")\n')
    _wait_output(page, "warm")
    _wait_idle(page)
    _edit_and_run(page, "while True:\n    pass\n")
    page.locator(f"{CELL}[data-state='running']").wait_for()
    page.locator(f"{CELL} [data-action='stop']").click()
    _wait_idle(page)


def test_stop_ends_a_runaway_loop_and_the_next_run_works(page):
    _stop_a_runaway_loop(page)
    assert page.locator(f"{CELL} [data-output] .rl-error").count() == 1
    _nothing_compared(page)
    _edit_and_run(page, 'print("alive")\n')
    _wait_output(page, "alive")


def test_stop_interrupts_in_place_when_cross_origin_isolated(chromium, built_site):
    with serve(built_site["dir"], headers=ISOLATED) as url:
        context = chromium.new_context()
        page = context.new_page()
        page.goto(f"{url}/ppo/")
        assert page.evaluate("crossOriginIsolated")
        # KeyboardInterrupt inside Python, reported in the page's language, runtime kept
        _stop_a_runaway_loop(page)
        out = page.locator(f"{CELL} [data-output]").text_content()
        assert "已停止。" in out and "重启" not in out, out
        _edit_and_run(page, 'print("same runtime")\n')
        _wait_output(page, "same runtime")
        assert long_loads(page) == 1  # the next run started from the boot image
        context.close()


def test_stop_is_said_again_when_the_learners_code_swallows_the_interrupt(chromium, built_site):
    swallow = (
        "try:\n    while True:\n        pass\nexcept KeyboardInterrupt:\n"
        "    print('caught once')\nwhile True:\n    pass\n"
    )
    with serve(built_site["dir"], headers=ISOLATED) as url:
        context = chromium.new_context()
        page = context.new_page()
        page.goto(f"{url}/en/ppo/")
        _edit_and_run(page, 'print("warm")\n')
        _wait_output(page, "warm")
        _wait_idle(page)
        _edit_and_run(page, swallow)
        page.locator(f"{CELL}[data-state='running']").wait_for()
        page.locator(f"{CELL} [data-action='stop']").click()
        _wait_idle(page)
        out = page.locator(f"{CELL} [data-output]").text_content()
        assert "caught once" in out and "Stopped." in out and "restart" not in out, out
        assert long_loads(page) == 1
        context.close()


@pytest.mark.fresh_page
def test_blanks_and_edits_survive_a_reload_and_reset_clears_them_with_an_undo(page):
    root = page.locator(CELL)
    root.locator("input[data-blank]").nth(0).fill("new_logprobs - old_logprobs")
    root.locator("input[data-blank]").nth(1).fill("log_ratio.exp()")
    other = page.locator("[data-runner='ppo/compute_gae']")
    other.locator("[data-action='edit']").click()
    other.locator("textarea").fill("print('my own version')\n")
    wait_until(
        page,
        "(localStorage.getItem('rl-ops/cell/ppo/compute_gae') || '').includes('my own version')",
        what="the edited code of ppo/compute_gae saved",
    )
    page.reload()
    page.wait_for_load_state("networkidle")
    root = page.locator(CELL)
    assert root.locator("input[data-blank]").nth(0).input_value() == "new_logprobs - old_logprobs"
    assert root.locator("input[data-blank]").nth(1).input_value() == "log_ratio.exp()"
    other = page.locator("[data-runner='ppo/compute_gae']")
    assert other.locator("textarea").input_value() == "print('my own version')\n"
    # Reset clears, says so in the page's language, and offers to undo: the edited code and the
    # editor come back, saved again (a reload keeps them)
    other.locator("[data-action='reset']").click()
    notice = other.locator(".rl-notice")
    assert said("zh", "resetDone").fullmatch(notice.locator("span").inner_text())
    assert other.locator("textarea").is_hidden()
    notice.locator("[data-action='undo']").click()
    assert notice.is_hidden()
    assert other.locator("textarea").input_value() == "print('my own version')\n"
    # the blanks' Undo ends when the learner types on: the offer goes, the cleared work stays gone
    root.locator("[data-action='reset']").click()
    assert root.locator("[data-action='undo']").is_visible()
    root.locator("input[data-blank]").nth(1).fill("x")
    assert root.locator("[data-action='undo']").count() == 0
    # a second Reset, with nothing typed since the first, has nothing to undo
    root.locator("[data-action='reset']").click()
    assert root.locator("[data-action='undo']").is_visible()
    root.locator("[data-action='reset']").click()
    assert root.locator(".rl-notice").is_hidden()
    page.reload()
    assert page.locator(CELL).locator("input[data-blank]").nth(0).input_value() == ""
    assert page.locator(CELL).locator("input[data-blank]").nth(1).input_value() == ""
    other = page.locator("[data-runner='ppo/compute_gae']")
    assert other.locator("textarea").input_value() == "print('my own version')\n"


@pytest.mark.fresh_page
def test_saved_work_of_an_older_exercise_version_is_not_applied_silently(page):
    key = "rl-ops/cell/ppo/importance_ratio"
    page.evaluate(
        "([k, v]) => localStorage.setItem(k, v)",
        [key, json.dumps({"version": "old", "blanks": ["a - b", "x.exp()"], "editor": None})],
    )
    page.reload()
    root = page.locator(CELL)
    assert root.locator("input[data-blank]").nth(0).input_value() == ""
    assert root.locator(".rl-notice").is_visible()
    # working on the new version does not overwrite the old answers
    root.locator("input[data-blank]").nth(0).fill("new work")
    page.reload()
    root = page.locator(CELL)
    assert root.locator("input[data-blank]").nth(0).input_value() == "new work"
    assert root.locator(".rl-notice").is_visible()
    root.locator("[data-action='restore-old']").click()
    text = root.locator("textarea").input_value()
    assert "log_ratio = a - b" in text and "ratio = x.exp()" in text
    page.reload()
    assert page.locator(f"{CELL} .rl-notice").is_hidden()  # taken: not offered again


@pytest.mark.fresh_page
def test_a_failed_numpy_download_is_named_and_the_next_run_tries_again(page):
    fail_downloads(page)
    page.locator(CELL).locator("input[data-blank]").nth(0).fill("new_logprobs - old_logprobs")
    page.locator(CELL).locator("input[data-blank]").nth(1).fill("log_ratio.exp()")
    page.locator(f"{CELL} [data-action='run']").click()
    out = _wait_output(page, "numpy-2")  # the file that failed, by name
    assert "failed to load" not in out.lower()
    _wait_idle(page)
    # the rest of the page still works
    page.locator("details").first.evaluate("d => d.open = true")
    # the network is back: the next run loads numpy
    page.context.unroute("**/assets/pyodide/numpy-*.whl")
    _edit_and_run(page, "import torch\nprint(torch.ones(2).sum())\n")
    _wait_output(page, "tensor(2.)")
    assert not page.errors


def test_edit_starts_from_the_exercise_as_filled_in(page):
    root = page.locator(CELL)
    root.locator("input[data-blank]").nth(0).fill("new_logprobs - old_logprobs")
    root.locator("[data-action='edit']").click()
    text = root.locator("textarea").input_value()
    assert "log_ratio = new_logprobs - old_logprobs" in text
    assert "torch.manual_seed" in text  # the test block comes along
    root.locator("[data-action='edit']").click()  # back to the blanks, and into the editor again
    root.locator("[data-action='edit']").click()
    assert root.locator("textarea").input_value() == text


@pytest.mark.fresh_page
def test_a_reload_in_edit_mode_neither_focuses_nor_scrolls(page):
    last = page.locator("[data-runner]").last
    last.locator("[data-action='edit']").click()
    # the real editor replaces the textarea when its library has loaded: wait for it, so that
    # nothing moves after the scroll below (the reload must restore that position)
    last.locator(".prism-code-editor").wait_for()
    page.evaluate("window.scrollTo(0, 0)")
    wait_until(page, "window.scrollY === 0", what="the page at its top before the reload")
    page.reload()
    # the saved mode was Edit: the real editor comes back, the last thing the reload does that
    # could take the focus or scroll the page
    page.locator("[data-runner]").last.locator(".prism-code-editor").wait_for()
    assert page.locator("[data-runner]").last.locator("textarea").is_visible()
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"


OTHER = "[data-runner='ppo/compute_gae']"


def test_output_without_a_final_newline_stays_in_its_own_cell(page):
    _edit_and_run(page, "print('from A', end='')\n")
    _wait_output(page, "from A")
    _wait_idle(page)
    _edit_and_run(page, "print('from B')\n", cell=OTHER)
    out = _wait_output(page, "from B", cell=OTHER)
    assert "from A" not in out


def test_a_time_limit_or_a_reset_ends_only_its_own_cell(page):
    _edit_and_run(page, 'print("warm")\n')
    _wait_output(page, "warm")
    _wait_idle(page)
    # a limit long enough for the steps below on a loaded machine (at 3 s the loop could end
    # before the Reset's check)
    page.eval_on_selector(CELL, "el => el.dataset.timeout = '8'")
    _edit_and_run(page, "while True:\n    pass\n")
    page.locator(f"{CELL}[data-state='running']").wait_for()
    # a second cell waits behind the loop; its Reset cancels it and leaves the loop alone
    _edit_and_run(page, "print('B ran')\n", cell=OTHER)
    page.locator(OTHER).locator("[data-action='reset']").click()
    assert page.locator(f"{CELL}[data-state='running']").count() == 1
    _edit_and_run(page, "print('B ran')\n", cell=OTHER)  # queued again, runs after the limit
    out = _wait_output(page, "B ran", cell=OTHER)
    assert "8" not in out and page.locator(f"{OTHER} .rl-error").count() == 0
    assert "8" in page.locator(f"{CELL} [data-output] .rl-error").inner_text()


def test_a_second_page_starts_from_the_boot_image_the_first_kept_and_a_damaged_one_is_made_again(
    chromium, site_url
):
    """The first page loads Python the long way and keeps its boot image (Cache Storage); a page
    opened after it starts from that image; an image that fails to start is made again."""
    first = new_page(chromium, f"{site_url}/en/ppo/")
    _edit_and_run(first, 'print("first page")\n')
    _wait_output(first, "first page")
    assert long_loads(first) == 1
    kept = "async () => { for (const n of await caches.keys()) if (n.includes('boot-image'))" \
        " return (await (await caches.open(n)).keys()).length; return 0; }"
    # 30 MB into Cache Storage: seconds on a loaded machine
    wait_until(first, kept, timeout=120_000, what="the boot image kept in Cache Storage")
    context = first.context
    first.close()  # one tab at a time: no two-tab merge of the editor's text
    for expected, damage in ((0, False), (1, True)):
        page = context.new_page()
        page.goto(f"{site_url}/en/ppo/")
        if damage:
            page.evaluate("""async () => {
                for (const name of await caches.keys()) {
                    if (!name.includes('boot-image')) continue;
                    const cache = await caches.open(name);
                    for (const key of await cache.keys()) await cache.put(key,
                        new Response(new Uint8Array(64), {headers: {'x-handles': '{}'}}));
                }
            }""")
        _edit_and_run(page, "import torch\nprint(torch.ones(3).sum())\n")
        _wait_output(page, "tensor(3.)")
        assert long_loads(page) == expected
        page.close()
    context.close()


@pytest.mark.parametrize("lang", PREFIX)
def test_run_says_whether_the_output_matches_the_expected_one_and_marks_the_first_difference(
    request, site_url, shared_pages, lang
):
    page = page_for(request, shared_pages, f"{site_url}/{PREFIX[lang]}ppo/")
    lesson = LESSONS["ppo/importance_ratio"]
    root = page.locator(CELL)
    status = root.locator(".rl-status")
    answers = [b.answer for b in lesson.blanks]
    # the padding multiplied by 0 instead of filled: -inf - (-inf) is nan, and nan * 0 is nan,
    # so ρ[0, 3:] prints nan where the page expects 1.0
    wrong = [("log_ratio * mask" if "masked_fill" in a else a) for a in answers]
    assert wrong != answers
    expected = golden_path(lesson, lang).read_text(encoding="utf-8").split("\n")
    line = 1 + next(i for i, text in enumerate(expected) if text.startswith("ρ[0, 3:]"))

    for k, answer in enumerate(wrong):
        root.locator("input[data-blank]").nth(k).fill(answer)
    root.locator("[data-action='run']").click()
    _wait_output(page, "nan")
    _wait_idle(page)
    now = status.text_content()
    assert said(lang, "runDiffers", line=line).fullmatch(now), now
    # the line is marked: its text, and a label in the page's words beside it (not colour alone)
    printed = root.locator("[data-output]").text_content().split("\n")
    assert "nan" in printed[line - 1] and printed[:line - 1] == expected[:line - 1]
    mark = root.locator("[data-output] mark.rl-diff")
    assert mark.count() == 1 and mark.text_content() == printed[line - 1]
    assert mark.get_attribute("data-label") == table(lang)["runDiffersMark"]
    style = mark.evaluate("m => [getComputedStyle(m, '::after').content,"
                          " getComputedStyle(m).textDecorationLine]")
    assert table(lang)["runDiffersMark"] in style[0] and "underline" in style[1], style
    assert violations(page, within=[CELL]) == []  # axe-core's WCAG 2.1 A/AA rules

    # a run that fails (the learner's error) claims no comparison
    root.locator("input[data-blank]").nth(0).fill("new_logprobs - undefined_name")
    root.locator("[data-action='run']").click()
    _wait_output(page, "NameError")
    _wait_idle(page)
    assert status.text_content() == table(lang)["failed"]
    assert root.locator("mark.rl-diff").count() == 0

    # the answer matches, and Run records no pass (only Check does)
    for k, answer in enumerate(answers):
        root.locator("input[data-blank]").nth(k).fill(answer)
    root.locator("[data-action='run']").click()
    _wait_output(page, "ρ")
    _wait_idle(page)
    assert said(lang, "runMatches").fullmatch(status.text_content()), status.text_content()
    assert root.locator("mark.rl-diff").count() == 0
    assert page.evaluate("Object.keys(localStorage).filter((k) => k.includes('solved'))") == []
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
