"""Every way a job can fail, driven on a Chinese page, is said in Chinese (js/strings.toml): a
download that fails (network, HTTP), each watchdog of the page (a worker that does not take its
job, a download that stalls, a Python that falls silent, a judge that gives no verdict), a site
updated under the page, and Check's and Run's own reports (a blank left in, a syntax error, no
such function, a result that is no tensor, a time limit).

The watchdogs fire as they would after their seconds of silence: the page's clock is Playwright's
(``clock.install``), run forward past the watchdog's time while the worker's answers are held
back (a filter on the page's message ports: ``window.__rlDrop``) or a download never ends. What
is shown is compared with the page's own table (``site_build.ui_strings``), never with English.
"""

from __future__ import annotations

import re
import time

import pytest

from site_build.ui_strings import table

from .browser import cell, edit, new_page, press, wait_state, wait_until
from .conftest import LESSONS

A = "ppo/importance_ratio"
ZH = table("zh")
EN = table("en")

# what a Chinese sentence of ours may hold in Latin letters: names of files and programs
NAMES = {"Python", "worker", "HTTP", "Pyodide"}

# the page's message ports hand a message on unless window.__rlDrop(message) says to hold it back;
# window.__rlPhase1 counts the Checks whose phase 1 came back (the judge's turn next)
DROP = """
(() => {
  const own = Object.getOwnPropertyDescriptor(MessagePort.prototype, "onmessage");
  Object.defineProperty(MessagePort.prototype, "onmessage", {
    configurable: true,
    get() { return own.get.call(this); },
    set(handler) {
      own.set.call(this, handler && function (event) {
        const phase1 = event.data?.outcome?.result?.phase1;
        if (phase1) globalThis.__rlPhase1 = (globalThis.__rlPhase1 ?? 0) + 1;
        if (globalThis.__rlDrop?.(event.data)) return;
        return handler.call(this, event);
      });
    },
  });
})();
"""


def said(key: str, **values: object) -> str:
    """A string of the Chinese table with its values, as js/i18n.js fills it in."""
    text: object = ZH
    for part in key.split("."):
        text = text[part]  # type: ignore[index]
    assert isinstance(text, str), key
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), text)


def english(text: str) -> set[str]:
    """Latin words of ``text`` that are no name of a file or a program."""
    text = re.sub(r"[\w.-]+\.(?:whl|wasm|js|mjs|zip)\b", "", text)  # a file's name
    return set(re.findall(r"[A-Za-z][A-Za-z_]+", text)) - NAMES


def shown(page) -> str:
    """What the cell shows: its output and its status line."""
    root = cell(page, A)
    return (root.locator("[data-output]").text_content() or "") + "\n" + (
        root.locator(".rl-status").text_content() or "")


def no_english_sentence(text: str) -> None:
    assert not english(text), text
    for sentence in (EN["loadFailed"], EN["stuck"]["ack"], EN["siteUpdated"]):
        assert sentence.split("{")[0] not in text, text


@pytest.fixture(scope="module")
def page(chromium, site_url):
    """One Chinese page for the module, with the clock and the port filter installed before it
    loads. Each test leaves it healed (routes removed, nothing held back)."""
    page = new_page(chromium)
    page.context.add_init_script(DROP)
    page.clock.install()
    page.goto(f"{site_url}/ppo/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("document.documentElement.lang").startswith("zh")
    yield page
    page.context.close()


def hold_back(page, predicate: str | None) -> None:
    page.evaluate(f"globalThis.__rlDrop = {predicate or 'null'}")


def run_until(page, text: str, *, step_ms: int, what: str, timeout: float = 60_000) -> str:
    """Run the page's clock forward by ``step_ms`` until the cell shows ``text``."""
    deadline = time.monotonic() + timeout / 1000
    while text not in shown(page):
        assert time.monotonic() < deadline, f"no {what}: {shown(page)}"
        page.clock.run_for(step_ms)
        page.wait_for_timeout(200)
    wait_state(page, A, "idle")
    return shown(page)


def test_a_download_that_fails_is_said_in_chinese_with_its_cause(page):
    edit(page, A, "print('你好')\n")
    for cause, fail in (
        ("network", lambda route: route.abort("internetdisconnected")),
        ("http", lambda route: route.fulfill(status=404, body="")),
    ):
        page.context.route("**/numpy-*.whl", fail)
        try:
            text = press(page, A, "run")
        finally:
            page.context.unroute("**/numpy-*.whl")
        why = said(f"load.{cause}", status=404)
        assert why in text and said("loadFailed", what="", why="", offline="")[:4] in text, text
        no_english_sentence(shown(page))
    assert press(page, A, "run").strip().endswith("你好") or "你好" in shown(page)


def test_a_worker_that_does_not_take_its_job_is_said_in_chinese(page):
    edit(page, A, "print('你好')\n")
    # a worker that does not take its job says nothing of it: not its ack, not its result (with
    # the result let through, a fast run ends before the clock reaches the watchdog)
    hold_back(page, "(m) => m?.id !== undefined")
    try:
        cell(page, A).locator("[data-action='run']").click()
        text = run_until(page, said("stuck.ack", seconds=5), step_ms=5_001, what="ack watchdog")
    finally:
        hold_back(page, None)
    no_english_sentence(text)
    assert "你好" in press(page, A, "run")


def test_a_download_that_stalls_is_said_in_chinese(chromium, site_url):
    """A page of its own: the stall is of the first load, before any image exists."""
    page = new_page(chromium)
    try:
        page.clock.install()
        page.goto(f"{site_url}/ppo/")
        page.wait_for_load_state("networkidle")
        page.context.route("**/pyodide.asm.wasm*", lambda route: None)  # never answered
        edit(page, A, "print('你好')\n")
        cell(page, A).locator("[data-action='run']").click()
        page.wait_for_timeout(500)  # the worker has taken the job and asked for the runtime
        text = run_until(page, said("stuck.stall", seconds=30, offline=""), step_ms=30_001,
                         what="stall watchdog")
        no_english_sentence(text)
    finally:
        page.context.close()


def test_a_judge_that_gives_no_verdict_is_said_in_chinese(page):
    edit(page, A, LESSONS[A].exercise(blanked=False))
    marks = "(globalThis.__rlPhase1 ?? 0)"
    before = page.evaluate(marks)
    # once phase 1 is back, the judge's verdict job neither ends nor says it is done: it is left
    # running, and its time limit is the page's to reach
    hold_back(page, f"(m) => {marks} > {before} && ['ended', 'done'].includes(m?.type)"
              " && !m.outcome?.result?.phase1")
    try:
        cell(page, A).locator("[data-action='check']").click()
        # phase 1 is over (the learner's time limit is not the judge's): the judge has the job
        wait_until(page, f"{marks} > {before}", what="phase 1 over", timeout=120_000)
        # a second at a time: the verdict's limit (20 s) comes before Python's 30 s of quiet
        text = run_until(page, said("stuck.verdict", seconds=20), step_ms=1_000,
                         what="verdict watchdog", timeout=120_000)
    finally:
        hold_back(page, None)
    no_english_sentence(text)


@pytest.mark.parametrize(("code", "ours", "pythons"), [
    ("x = _____\n", "slip.blank", "NameError"),  # Run: a blank left in
    ("def importance_ratio(:\n", None, "SyntaxError"),
])
def test_runs_own_words_around_pythons_traceback_are_chinese(page, code, ours, pythons):
    edit(page, A, code)
    text = press(page, A, "run")
    assert pythons in text and (ours is None or said(ours) in text), text
    assert EN["slip"]["blank"] not in text and EN["failed"] not in shown(page)


CHECKED = [
    ("x = _____\n", "slip.blank", {}),  # a blank at the top level: Check's error
    ("def something_else():\n    pass\n", "why.undefined", {"name": "'importance_ratio'"}),
    ("def importance_ratio(*args):\n    return {}\n", "why.type.returned", {"type": "dict"}),
]


@pytest.mark.parametrize(("code", "key", "values"), CHECKED)
def test_checks_errors_and_reasons_are_said_in_chinese(page, code, key, values):
    edit(page, A, code)
    text = press(page, A, "check")
    assert said(key, **values) in text, text
    ours = re.sub(r"Traceback[\s\S]*?NameError: name '_____' is not defined", "", text)
    ours = re.sub(r"^ +\w+ = .*$", "", ours, flags=re.M)  # the inputs, by their parameters' names
    assert not english(ours) - {"NameError", "TypeError", "dict", "importance_ratio", "x"}, ours


def test_a_time_limit_is_said_in_chinese(page):
    page.eval_on_selector(f"[data-runner='{A}']", "el => el.dataset.timeout = '2'")
    try:
        edit(page, A, "while True:\n    pass\n")
        cell(page, A).locator("[data-action='run']").click()
        wait_state(page, A, "running")
        text = run_until(page, said("timedOut", seconds=2), step_ms=2_001, what="time limit")
    finally:
        page.eval_on_selector(f"[data-runner='{A}']", "el => delete el.dataset.timeout")
    no_english_sentence(text)


def test_a_python_that_falls_silent_in_the_demo_is_said_in_chinese(page, site_url):
    demo = page.context.new_page()
    try:
        demo.goto(f"{site_url}/s21/demo/")
        demo.wait_for_load_state("networkidle")
        demo.locator("[data-demo] [data-action='run']").click()
        wait_until(demo, "document.querySelector('[data-demo]').dataset.state === 'running'",
                   what="the demo running", timeout=120_000)
        # it is running: its curves come every few steps, but now none reaches the page
        demo.evaluate("globalThis.__rlDrop = (m) => m?.type === 'event' || m?.type === 'output'")
        want = said("stuck.quiet", seconds=60)
        out = demo.locator("[data-demo] [data-output]")
        for _ in range(50):
            if want in (out.text_content() or ""):
                break
            demo.clock.run_for(60_001)
            demo.wait_for_timeout(200)
        text = out.text_content() or ""
        assert want in text, text
        no_english_sentence(text)
    finally:
        demo.close()


def test_a_site_updated_under_the_page_is_said_in_chinese(page):
    """Last: a stale runtime asks for a reload, and the page is reloaded with a wheel that is not
    the one its address names (a deploy that happened meanwhile)."""
    page.context.route("**/*.whl?v=*", lambda route: route.fulfill(
        status=200, body=b"PK\x05\x06" + bytes(18), content_type="application/zip"))
    page.evaluate("caches.keys().then((keys) => Promise.all(keys.map((k) => caches.delete(k))))")
    try:
        page.reload()
        page.wait_for_load_state("networkidle")
        edit(page, A, "print('你好')\n")
        text = press(page, A, "run")
    finally:
        page.context.unroute("**/*.whl?v=*")
    assert said("siteUpdated") in shown(page), text
    no_english_sentence(shown(page))
