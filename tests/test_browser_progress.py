"""The home page's progress table in Chromium: an exercise counts once its Check passed, a drill
shows its best score, both survive a reload, and Reset forgets them (and nothing else)."""

from __future__ import annotations

from .browser import new_page
from .conftest import LESSONS
from .test_browser_exercises import _fill, _press

EXERCISE = "ppo/importance_ratio"


def _row(page, chapter: str) -> tuple[str, str]:
    row = page.locator(f"[data-progress] tr[data-chapter='{chapter}/']")
    return row.locator("[data-solved]").inner_text(), row.locator("[data-drills]").inner_text()


def test_a_passed_check_and_a_drill_score_show_on_the_home_page_until_reset(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    n_ppo = sum(1 for ex in LESSONS if ex.startswith("ppo/"))
    n_grpo = sum(1 for ex in LESSONS if ex.startswith("grpo/"))
    cell = page.locator(f"[data-runner='{EXERCISE}']")
    cell.scroll_into_view_if_needed()
    _fill(cell, [b.answer for b in LESSONS[EXERCISE].blanks])
    _press(page, cell, "check")
    passed, total = cell.locator(".rl-status").inner_text().split("/")
    assert passed == total
    # a drill's record as drill.js keeps it (tests/test_browser_drill.py checks that it does)
    page.evaluate("localStorage.setItem('rl-ops/drill/ppo/compute_gae', "
                  "JSON.stringify({best: 80, attempts: 2}))")

    for home in (f"{site_url}/en/", f"{site_url}/en/"):  # the second time: after a reload
        page.goto(home)
        assert _row(page, "ppo") == (f"1 / {n_ppo}", f"80% (1 of {n_ppo} drills tried)")
        assert _row(page, "grpo") == (f"0 / {n_grpo}", "—")
    # the other language's home page reads the same record
    page.goto(f"{site_url}/")
    assert _row(page, "ppo") == (f"1 / {n_ppo}", f"80%（练过 1 / {n_ppo} 个）")
    assert page.locator("[data-progress] th").first.inner_text() == "章节"

    page.goto(f"{site_url}/en/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("[data-action='reset-progress']").click()
    assert _row(page, "ppo") == (f"0 / {n_ppo}", "—")
    kept = page.evaluate("Object.keys(localStorage)")
    assert not [k for k in kept if k.startswith(("rl-ops/solved/", "rl-ops/drill/ppo/"))]
    assert any(k.startswith("rl-ops/cell/") for k in kept)  # the typed answers stay
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


def test_reset_asks_first_and_a_no_keeps_everything(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/")
    version = LESSONS["grpo/rloo_advantages"].version
    page.evaluate("v => localStorage.setItem('rl-ops/solved/grpo/rloo_advantages', "
                  "JSON.stringify({version: v}))", version)
    page.reload()
    assert _row(page, "grpo")[0].startswith("1 / ")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.locator("[data-action='reset-progress']").click()
    assert _row(page, "grpo")[0].startswith("1 / ")
    page.context.close()


def test_records_of_an_older_version_are_kept_but_not_counted_nor_shown(chromium, site_url):
    """A pass or a drill record of an exercise's older version does not count on the home page
    and is not the drill's record; a record whose count is no safe integer (1e308) is set aside,
    not shown; a new attempt keeps the older version's record under its version."""
    page = new_page(chromium, f"{site_url}/en/")
    n_ppo = sum(1 for ex in LESSONS if ex.startswith("ppo/"))
    current = LESSONS["ppo/compute_gae"].version
    page.evaluate("""(v) => {
        const old = JSON.stringify({version: 'old'});
        localStorage.setItem('rl-ops/solved/ppo/compute_gae', old);
        localStorage.setItem('rl-ops/solved/ppo/importance_ratio', old);
        localStorage.setItem('rl-ops/drill/ppo/compute_gae',
                             JSON.stringify({version: 'old', best: 90, attempts: 3}));
        localStorage.setItem('rl-ops/drill/ppo/importance_ratio',
                             JSON.stringify({version: v, best: 1, attempts: 1e308}));
    }""", current)
    page.reload()
    assert _row(page, "ppo") == (f"0 / {n_ppo}", "—")
    page.goto(f"{site_url}/en/ppo/")
    for exercise in ("ppo/compute_gae", "ppo/importance_ratio"):  # older; an absurd count
        meta = page.locator(f"[data-drill='{exercise}'] .rl-drill-meta").inner_text()
        assert "No attempts yet" in meta, (exercise, meta)
    # one attempt (empty answers, all wrong) on compute_gae's drill: a record of this version
    drill = page.locator("[data-drill='ppo/compute_gae']")
    drill.locator("[data-action='check']").click()
    assert "Best 0% · 1 attempt" in drill.locator(".rl-drill-meta").inner_text()
    stored = page.evaluate("""() => [localStorage.getItem('rl-ops/drill/ppo/compute_gae'),
        localStorage.getItem('rl-ops/drill/ppo/compute_gae/v/old')].map(JSON.parse)""")
    assert stored == [{"version": current, "best": 0, "attempts": 1},
                      {"version": "old", "best": 90, "attempts": 3}]
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()
