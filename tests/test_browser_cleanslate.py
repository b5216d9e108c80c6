"""Clean-slate mode in Chromium (js/cleanslate.js): a switch under every exercise hides every
exercise's expected output, hints and answer, on every page and from the first paint after a
reload, until that exercise's Check passes or the learner asks to see them; it is remembered, and
switching it off shows everything again."""

from __future__ import annotations

from .browser import new_page
from .conftest import LESSONS
from .test_browser_a11y import violations
from .test_browser_exercises import _fill, _press

PASSED, ASKED, OTHER = "ppo/importance_ratio", "ppo/compute_gae", "ppo/kl_estimators"


def _shown(page, exercise_id: str, what: str = ":not([data-what])") -> bool:
    """Whether the exercise's block after its cell (or, ``what="[data-what=drill]"``, its drill)
    is shown."""
    return page.locator(f".rl-after[data-after='{exercise_id}']{what}").is_visible()


DRILL = "[data-what=drill]"


def test_clean_slate_hides_answers_until_check_passes_or_asked_and_is_remembered(
        chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    n = sum(1 for ex in LESSONS if ex.startswith("ppo/"))
    assert page.locator(".rl-after").count() == 2 * n  # after each cell, and each drill
    assert all(_shown(page, ex) for ex in (PASSED, ASKED, OTHER))  # off until switched on
    assert _shown(page, OTHER, DRILL)
    page.locator(f".rl-after[data-after='{OTHER}']").first.locator(
        "xpath=preceding-sibling::div[1]").get_by_role("checkbox").check()
    assert not any(_shown(page, ex) for ex in (PASSED, ASKED, OTHER))
    assert not any(_shown(page, ex, DRILL) for ex in (PASSED, ASKED, OTHER))
    assert page.get_by_role("checkbox", checked=True).count() == 2 * n  # every switch says so
    hidden = page.get_by_text("This exercise's expected output, hints and answer are hidden.")
    assert hidden.count() == n

    # the answer's text is nowhere to be seen, right from the first paint after a reload
    page.reload(wait_until="commit")
    page.wait_for_selector(".rl-after", state="attached")
    assert not page.locator(".rl-after").first.is_visible()
    page.wait_for_load_state("networkidle")

    cell = page.locator(f"[data-runner='{PASSED}']")
    cell.locator("input[data-blank]").first.wait_for()  # js/runner.js has made the blanks
    _fill(cell, [b.answer for b in LESSONS[PASSED].blanks])
    _press(page, cell, "check")
    assert _shown(page, PASSED) and not _shown(page, ASKED)  # its Check passed: shown at once
    assert _shown(page, PASSED, DRILL) and not _shown(page, ASKED, DRILL)
    page.locator(f".rl-after[data-after='{ASKED}']").first.locator(
        "xpath=preceding-sibling::div[1]").get_by_role("button", name="Show them").click()
    assert _shown(page, ASKED) and not _shown(page, OTHER)
    assert violations(page) == []

    # another page, and a reload: the mode and what was shown are remembered
    page.goto(f"{site_url}/en/grpo/")
    assert page.locator(".rl-after").count() > 0
    assert not page.locator(".rl-after").first.is_visible()
    page.goto(f"{site_url}/en/ppo/")
    assert _shown(page, PASSED) and _shown(page, ASKED) and not _shown(page, OTHER)

    page.get_by_role("checkbox").first.uncheck()  # off: everything shown again
    assert page.locator(".rl-after:visible").count() == 2 * n
    page.reload()
    assert page.locator(".rl-after:visible").count() == 2 * n
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


def test_clean_slate_on_a_chinese_page_in_another_tab_follows_the_switch(chromium, site_url):
    page = new_page(chromium, f"{site_url}/ppo/")
    other = page.context.new_page()
    other.goto(f"{site_url}/grpo/")
    switch = "独立练习模式：检查通过前隐藏预期输出、提示和答案"
    page.get_by_role("checkbox", name=switch).first.check()
    other.wait_for_function("document.documentElement.hasAttribute('data-clean-slate')")
    assert not other.locator(".rl-after").first.is_visible()
    assert other.get_by_role("button", name="显示").first.is_visible()
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()
