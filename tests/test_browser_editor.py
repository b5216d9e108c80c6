"""Edit mode's code editor in Chromium (js/editor.js): prism-code-editor, fetched only when a
learner opens Edit; Python highlighting and indentation; the keys the line under it documents;
saved work kept through a reload; and the plain textarea when the editor cannot be fetched."""

from __future__ import annotations

from .browser import cell, new_page, wait_output, wait_until

EXERCISE = "ppo/importance_ratio"
EDITOR_FILES = "/assets/prism-code-editor/"


def _open_editor(page, exercise: str = EXERCISE):
    root = cell(page, exercise)
    root.locator("[data-action='edit']").click()
    root.locator(".prism-code-editor").wait_for()
    return root.locator("textarea")


def _value(page, exercise: str = EXERCISE) -> str:
    return cell(page, exercise).locator("textarea").input_value()


def _focused_editor(chromium, site_url, code: str | None = None):
    """The English PPO page, its exercise's editor open and focused, holding ``code`` (None: the
    exercise's own); returns the page and the editor's textarea."""
    page = new_page(chromium, f"{site_url}/en/ppo/")
    editor = _open_editor(page)
    if code is not None:
        editor.fill(code)
    editor.focus()
    return page, editor


def test_the_editor_is_fetched_only_when_a_learner_opens_edit(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if EDITOR_FILES in r.url else None)
    assert fetched == []  # reading and filling blanks costs no editor bytes
    editor = _open_editor(page)
    assert any(url.endswith("/index.js") for url in fetched)
    root = cell(page, EXERCISE)
    assert root.locator("textarea").count() == 1  # the plain one was replaced, not doubled
    # Python is highlighted: `def`, `return` are keywords, with the site's keyword colour
    assert root.locator(".token.keyword", has_text="def").count() >= 1
    colour = root.locator(".token.keyword").first.evaluate("e => getComputedStyle(e).color")
    assert colour != root.locator(".prism-code-editor").evaluate("e => getComputedStyle(e).color")
    # the editor is named and says its keys
    assert editor.get_attribute("aria-label") == "Code editor"
    keys = page.locator(f"#{editor.get_attribute('aria-describedby')}")
    assert keys.is_visible() and "Esc" in keys.inner_text()
    # the blanks stay inputs in the code, for the mode without the editor
    root.locator("[data-action='edit']").click()
    assert root.locator("input[data-blank]").first.is_visible()
    assert not page.errors and not page.foreign


def test_enter_keeps_and_adds_indentation_and_tab_and_shift_tab_indent(chromium, site_url):
    page, _ = _focused_editor(chromium, site_url, "")
    page.keyboard.type("def f(x):")
    page.keyboard.press("Enter")  # after ":", one level in
    page.keyboard.type("y = x + 1")
    page.keyboard.press("Enter")  # kept
    page.keyboard.type("return y")
    assert _value(page) == "def f(x):\n    y = x + 1\n    return y"
    page.keyboard.press("Shift+Tab")  # this line one level out
    assert _value(page) == "def f(x):\n    y = x + 1\nreturn y"
    page.keyboard.press("Tab")  # at the end of a line, an indent where the caret is
    assert _value(page) == "def f(x):\n    y = x + 1\nreturn y    "
    page.keyboard.press("Shift+Home")  # with lines selected, Tab indents them
    page.keyboard.press("Shift+ArrowUp")
    page.keyboard.press("Tab")
    assert _value(page) == "def f(x):\n        y = x + 1\n    return y    "
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"  # Tab did not leave
    assert not page.errors


def test_esc_then_tab_leaves_the_editor_and_ctrl_enter_runs_it(chromium, site_url):
    page, editor = _focused_editor(chromium, site_url, "print(6 * 7)\n")
    page.keyboard.press("Control+Enter")
    wait_output(page, EXERCISE, "42")
    assert _value(page) == "print(6 * 7)\n"  # Ctrl+Enter ran, and inserted no line
    editor.focus()
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"  # Esc alone keeps it
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.action") == "run"
    editor.focus()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    assert not page.errors


def test_typed_work_survives_a_reload_and_comes_back_in_the_editor(chromium, site_url):
    page, _ = _focused_editor(chromium, site_url)
    page.keyboard.press("Control+End")
    page.keyboard.type("\nprint('mine')")
    key = f"rl-ops/cell/{EXERCISE}"
    wait_until(
        page, f"(localStorage.getItem('{key}') || '').includes(\"print('mine')\")",
        what="the typed line saved",
    )
    page.reload()
    page.wait_for_load_state("networkidle")
    root = cell(page, EXERCISE)
    root.locator(".prism-code-editor").wait_for()  # the saved mode was Edit: the editor is back
    assert _value(page).endswith("\nprint('mine')")
    assert root.locator("[data-action='edit']").inner_text() == "Back to blanks"
    # and Reset still clears it
    root.locator("[data-action='reset']").click()
    assert page.evaluate(f"localStorage.getItem('{key}')") is None
    assert root.locator("input[data-blank]").first.is_visible()
    assert not page.errors


def test_without_the_editor_files_the_plain_textarea_serves_and_loses_nothing(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    page.context.route(f"**{EDITOR_FILES}**", lambda route: route.abort("internetdisconnected"))
    root = cell(page, EXERCISE)
    with page.expect_event("requestfailed"):  # the editor's first file
        root.locator("[data-action='edit']").click()
    plain = root.locator("textarea.rl-editor-plain")
    plain.wait_for()
    assert root.locator(".prism-code-editor").count() == 0
    plain.fill("if True:\n")
    plain.focus()
    page.keyboard.press("Control+End")
    page.keyboard.press("Tab")  # the textarea indents too
    page.keyboard.type("print('plain')")
    assert plain.input_value() == "if True:\n    print('plain')"
    page.keyboard.press("Control+Enter")
    wait_output(page, EXERCISE, "plain")
    # back online, the next Edit brings the editor, with the text
    page.context.unroute(f"**{EDITOR_FILES}**")
    root.locator("[data-action='edit']").click()
    root.locator("[data-action='edit']").click()
    root.locator(".prism-code-editor").wait_for()
    assert _value(page) == "if True:\n    print('plain')"
    assert not page.errors


def test_on_a_390px_phone_the_open_editor_scrolls_inside_itself_not_the_page(chromium, site_url):
    page = new_page(chromium, f"{site_url}/ppo/", viewport={"width": 390, "height": 844})
    _open_editor(page, "ppo/compute_gae")
    box = cell(page, "ppo/compute_gae").locator(".prism-code-editor")
    assert box.evaluate("e => e.scrollWidth > e.clientWidth")  # long lines: it scrolls itself
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not page.errors
