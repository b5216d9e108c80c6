"""Accessibility in Chromium, checked by axe-core (npm `axe-core`, injected into the page): no
WCAG 2.1 A or AA violation in the states a learner creates (after Run, after a failed Check,
with a drill checked, in Edit mode), and a cell and a drill worked by keyboard alone. Every page
as loaded, in both languages, light and dark, with the demo and every figure drawn, is checked
by test_browser_site.py's tour (one load per page for all that site-wide tests look at)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .browser import describe, new_page, wait_until
from .conftest import LESSONS
from .test_browser_exercises import _fill, _press, one_line

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# the WCAG rules whose verdict depends on colours: all a dark scheme can change (Material's
# palettes are CSS variables; the markup, names and roles are the light scheme's)
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


# the finite CSS transitions and animations still running (a colour half-way through a
# transition is neither the old nor the new one)
MOVING = """() => document.getAnimations().filter((a) => a.playState === 'running'
    && a.effect?.getComputedTiming().endTime !== Infinity).length"""


def violations(page, rules: list[str] = WCAG, within: list[str] | None = None
               ) -> list[tuple[str, int, list[str]]]:
    """axe-core's WCAG 2.1 A/AA violations of the page as it is now, once its transitions have
    ended: (rule, nodes, first two). ``rules``: tags or rule ids to run (all of WCAG 2.1 A/AA);
    ``within``: CSS selectors of the parts to check (the whole page if None)."""
    wait_until(page, f"() => ({MOVING})() === 0", what="the page's transitions ended",
               now=lambda: f"{page.evaluate(MOVING)} running")
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        # resultTypes: the passes are not itemised (faster on the long pages; the same checks)
        "async ([rules, within]) => (await axe.run(within ? {include: within.map((s) => [s])}"
        " : document, {runOnly: rules, resultTypes: ['violations']})).violations"
        ".map((v) => [v.id, v.nodes.length, v.nodes.slice(0, 2).map((n) => n.target.join(' '))])",
        [rules, within],
    )
    return [tuple(v) for v in found]


SCHEMES = {"default": ("light", WCAG), "slate": ("dark", COLOUR_RULES)}  # Material's names


def _scheme(page) -> str:
    return page.evaluate("document.body.dataset.mdColorScheme")


def _toggle_scheme(page) -> None:
    """The palette's toggle, as a reader clicks it: the other scheme, on the same page (Material
    keeps it for the next pages; js/plot.js redraws the figures in its colours)."""
    before = _scheme(page)
    page.locator("form[data-md-component='palette'] label:visible").first.click()
    wait_until(page, "(s) => document.body.dataset.mdColorScheme !== s", before,
               what=f"the scheme switched from {before}")


@pytest.mark.parametrize(("lang", "scheme"), [("en/", "light"), ("", "dark")])
def test_after_run_a_failed_check_and_a_checked_drill_there_is_no_violation(
    chromium, site_url, lang, scheme
):
    """The cell and the drill in each state (the rest of the page is as the test above saw it)."""
    page = new_page(chromium, f"{site_url}/{lang}ppo/", color_scheme=scheme)
    exercise = "ppo/importance_ratio"
    changed = [f"[data-runner='{exercise}']", "[data-drill]"]
    cell = page.locator(f"[data-runner='{exercise}']")
    answers = [b.answer for b in LESSONS[exercise].blanks]
    _fill(cell, answers)
    _press(page, cell, "run")
    assert violations(page, within=changed) == [], "after Run"
    _fill(cell, [*answers[:-1], f"({one_line(answers[-1])}) * 1.5"])
    _press(page, cell, "check")
    assert violations(page, within=changed) == [], "after a failed Check"
    drill = page.locator("[data-drill]").first
    drill.locator("input[data-slot]").first.fill("wrong")
    drill.locator("[data-action='check']").click()
    assert drill.locator("input[aria-invalid='true']").count() >= 1
    assert violations(page, within=changed) == [], "with a drill checked"
    cell.locator("[data-action='edit']").click()
    cell.locator(".prism-code-editor").wait_for()
    cell.locator("textarea").focus()
    assert violations(page, within=changed) == [], "in Edit mode, with the code editor focused"
    assert not page.errors
    page.context.close()


def test_by_keyboard_alone_a_cell_runs_and_a_drill_explains_a_wrong_slot(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    exercise = "ppo/compute_gae"
    cell = page.locator(f"[data-runner='{exercise}']")
    blanks = cell.locator("input[data-blank]")
    n = blanks.count()
    # each blank says where it is
    labels = [blanks.nth(i).get_attribute("aria-label") for i in range(n)]
    assert all(label.startswith(f"Blank {i + 1} of {n} in compute_gae (line ")
               for i, label in enumerate(labels)), labels
    # fill every blank and press Run with the keyboard only, the focus visible on the way
    answers = [one_line(b.answer) for b in LESSONS[exercise].blanks]
    blanks.first.focus()
    for answer in answers:
        page.keyboard.type(answer)
        page.keyboard.press("Tab")
    path = []  # past the test's code block and its copy button, to Run
    while page.evaluate("document.activeElement.dataset.action") != "run" and len(path) < 4:
        path.append(page.evaluate("document.activeElement.outerHTML.slice(0, 60)"))
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.action") == "run", path
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    shadow = page.evaluate("getComputedStyle(document.activeElement).boxShadow")
    assert outline != "none" or shadow != "none"  # a visible focus ring
    page.keyboard.press("Enter")
    wait_until(page, "el => el.dataset.state === 'idle' && el.querySelector("
               "'[data-output]').textContent", cell.element_handle(), timeout=120_000,
               what=f"{exercise} run from the keyboard, idle with its output",
               now=lambda: describe(page, exercise))
    assert cell.locator("[role='status']").count() == 1  # the result is announced
    assert "Â =" in cell.locator("[data-output]").inner_text()

    # the editor is no trap: Tab indents, Esc then Tab leaves, as the line under it says
    cell.locator("[data-action='edit']").click()
    cell.locator(".prism-code-editor").wait_for()
    editor = cell.locator("textarea")
    editor.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
    keys = page.locator(f"#{editor.get_attribute('aria-describedby')}")
    assert keys.is_visible() and "Esc" in keys.inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"

    # a wrong drill slot is invalid and points to an explanation
    drill = page.locator("[data-drill]").first
    slot = drill.locator("input[data-slot]").first
    slot.fill("wrong")
    slot.press("Control+Enter")  # check from the keyboard
    assert slot.get_attribute("aria-invalid") == "true"
    help_id = slot.get_attribute("aria-describedby")
    assert help_id and page.locator(f"#{help_id}").text_content().strip()
    assert drill.locator("[data-drill-stats][role='status']").count() == 1
    assert not page.errors
    page.context.close()
