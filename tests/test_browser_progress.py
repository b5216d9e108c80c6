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


def _import(page, path) -> str:
    """Choose ``path`` with the Import button's file chooser; the note the page says then."""
    with page.expect_file_chooser() as chooser:
        page.locator("[data-action='import-progress']").click()
    chooser.value.set_files(str(path))  # the page empties its note as the file is chosen
    note = page.locator("[data-progress] .rl-progress-note")
    page.wait_for_function("el => el.textContent", arg=note.element_handle(), timeout=10_000)
    return note.inner_text()


def test_export_then_import_into_a_fresh_browser_restores_the_work_and_the_progress(
        chromium, site_url, tmp_path):
    """Progress that moves: the typed blanks, a pass and a drill's record go out as one file and
    come back into another browser (the table counts them, the cell shows the blanks); the same
    file again changes nothing; and in a browser with records of its own they merge."""
    import json

    n_ppo = sum(1 for ex in LESSONS if ex.startswith("ppo/"))
    answers = [b.answer for b in LESSONS[EXERCISE].blanks]
    first = new_page(chromium, f"{site_url}/en/ppo/")
    cell = first.locator(f"[data-runner='{EXERCISE}']")
    _fill(cell, answers)
    first.evaluate(
        "([id, v]) => { localStorage.setItem('rl-ops/solved/' + id, JSON.stringify({version: v}));"
        " localStorage.setItem('rl-ops/drill/ppo/compute_gae',"
        " JSON.stringify({best: 80, attempts: 2})); }",
        [EXERCISE, LESSONS[EXERCISE].version],
    )
    first.goto(f"{site_url}/en/")
    with first.expect_download() as download:
        first.locator("[data-action='export-progress']").click()
    assert download.value.suggested_filename.startswith("rl-ops-progress-")
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert set(json.loads(path.read_text())["entries"]) >= {
        f"cell/{EXERCISE}", f"solved/{EXERCISE}", "drill/ppo/compute_gae"}
    first.context.close()

    second = new_page(chromium, f"{site_url}/en/")
    assert _row(second, "ppo") == (f"0 / {n_ppo}", "—")
    assert _import(second, path).startswith("Imported: 3 records added")
    assert _row(second, "ppo") == (f"1 / {n_ppo}", f"80% (1 of {n_ppo} drills tried)")
    assert "nothing changed" in _import(second, path)  # already all there
    second.goto(f"{site_url}/en/ppo/")
    blanks = second.locator(f"[data-runner='{EXERCISE}'] input[data-blank]")
    assert [blanks.nth(k).input_value() for k in range(len(answers))] == answers

    # a browser with a drill record of its own: the two merge (the best, the most attempts)
    second.evaluate("localStorage.setItem('rl-ops/drill/ppo/compute_gae',"
                    " JSON.stringify({best: 90, attempts: 1}))")
    second.goto(f"{site_url}/en/")
    assert "1 merged with this browser's" in _import(second, path)
    stored = second.evaluate("JSON.parse(localStorage.getItem('rl-ops/drill/ppo/compute_gae'))")
    assert stored == {"best": 90, "attempts": 2}
    assert not second.errors and not second.foreign, (second.errors, second.foreign)
    second.context.close()


def test_a_file_that_is_no_progress_file_or_of_a_newer_site_changes_nothing_and_says_so(
        chromium, site_url, tmp_path):
    page = new_page(chromium, f"{site_url}/")  # the Chinese home page
    page.evaluate("localStorage.setItem('rl-ops/drill/misses', JSON.stringify({a: 1}))")
    before = page.evaluate("JSON.stringify(localStorage)")
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"format": "rl-ops-progress", "version": 1, "entries": ')
    assert "不是本站的进度文件" in _import(page, damaged)
    newer = tmp_path / "newer.json"
    newer.write_text('{"format": "rl-ops-progress", "version": 99, "entries": {}}')
    assert "本站更新的版本" in _import(page, newer)
    assert page.evaluate("JSON.stringify(localStorage)") == before
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


def test_a_passed_exercise_comes_back_for_review_and_its_drill_reschedules_it(
        chromium, site_url):
    """Spaced review with a fake clock: Check passes, so the exercise is scheduled (FSRS, days
    ahead) and the home page says when; on its day it is listed, in both languages, and its
    link opens the exercise's drill, whose first check reschedules it further ahead."""
    import datetime
    import json

    start = datetime.datetime(2026, 12, 2, 10, 0)
    page = new_page(chromium, timezone_id="UTC")  # the days below are UTC's
    page.clock.install(time=start)
    page.goto(f"{site_url}/en/")
    review = page.locator("[data-progress] [data-review]")
    assert review.is_hidden()  # nothing is scheduled for a learner who never practised

    page.goto(f"{site_url}/en/ppo/")
    cell = page.locator(f"[data-runner='{EXERCISE}']")
    _fill(cell, [b.answer for b in LESSONS[EXERCISE].blanks])
    _press(page, cell, "check")
    key = f"rl-ops/review/{EXERCISE}"
    page.wait_for_function("k => localStorage.getItem(k)", arg=key)
    first = json.loads(page.evaluate("k => localStorage.getItem(k)", key))["card"]["due"]
    assert first > "2026-12-03"  # days ahead, not minutes

    page.goto(f"{site_url}/en/")
    # the day in full, as the language writes it (never "12/6/2026", whose order a reader guesses)
    due = datetime.datetime.fromisoformat(first.replace("Z", "+00:00"))
    assert review.inner_text() == ("Nothing is due for review today; the next review is on "
                                   f"{due.day} {due.strftime('%b')} {due.year}.")
    page.clock.set_system_time(datetime.datetime.fromisoformat(first[:19]))
    page.goto(f"{site_url}/")  # the Chinese home page, on the day
    assert review.inner_text().startswith("今天该复习的练习（1 个）")
    page.goto(f"{site_url}/en/")
    assert review.inner_text().startswith("Due for review today (1)")
    link = review.get_by_role("link", name=LESSONS[EXERCISE].manifest.title["en"])
    link.click()
    page.wait_for_load_state("networkidle")
    assert f"review={EXERCISE.replace('/', '%2F')}" in page.url
    drill = page.locator(f"[data-drill='{EXERCISE}']")
    # it lands with the drill's heading and its toolbar below the sticky header, in the window
    header = page.locator(".md-header").bounding_box()
    heading = drill.locator("xpath=../preceding-sibling::h3[1]")
    check = drill.locator("[data-action='check']").bounding_box()
    top = header["y"] + header["height"]
    assert top <= heading.bounding_box()["y"] < top + 40, (header, heading.bounding_box())
    assert top <= check["y"] and check["y"] + check["height"] <= page.viewport_size["height"]
    data = json.loads(drill.locator("script").text_content())
    inputs = drill.locator("input[data-slot]")
    for k in range(inputs.count()):
        inputs.nth(k).fill(data["slots"][int(inputs.nth(k).get_attribute("data-slot"))]["text"])
    drill.locator("[data-action='check']").click()
    page.wait_for_function(
        "([k, d]) => JSON.parse(localStorage.getItem(k)).card.due > d", arg=[key, first])
    again = json.loads(page.evaluate("k => localStorage.getItem(k)", key))["card"]["due"]
    assert again > first
    page.goto(f"{site_url}/en/")
    assert review.inner_text().startswith("Nothing is due for review today")
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()
