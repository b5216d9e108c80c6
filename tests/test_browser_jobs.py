"""A job exists from the click (js/job.js): what the page says and does in each of its states,
with the Python the site serves. The moves themselves are enumerated under Node
(tests/js/python_jobs.test.mjs)."""

from __future__ import annotations

from .browser import (
    ISOLATED,
    OUTPUT_TIMEOUT,
    cell,
    describe,
    edit,
    new_page,
    press,
    serve,
    wait_until,
)

CELL = "ppo/importance_ratio"
DEMO = "[data-demo]"
# python.js whose import never ends: the job stays queued as long as the test likes
NEVER = "await new Promise(() => {});\nexport function runtime() {}\n"


def test_import_math_torch_in_edit_mode_loads_the_torch_layer(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    code = "import math, torch\nprint(torch.tensor([1.0, 2.0]).sum().item(), math.floor(2.5))\n"
    edit(page, CELL, code)
    out = press(page, CELL, "run")
    assert "3.0 2" in out and "Error" not in out, out
    page.context.close()


def test_stop_while_python_js_is_still_loading_ends_the_job_at_once(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    page.route(
        "**/assets/js/python.js?v=*",
        lambda route: route.fulfill(body=NEVER, content_type="text/javascript"),
    )
    root = cell(page, CELL)
    root.locator("[data-action='run']").click()
    assert root.get_attribute("data-state") == "waiting"  # the job exists, queued
    assert root.locator("[data-action='run']").is_disabled()
    root.locator("[data-action='stop']").click()
    wait_until(
        page, "el => el.dataset.state === 'idle'", root.element_handle(), timeout=10_000,
        what=f"{CELL} idle after Stop", now=lambda: describe(page, CELL),
    )
    out = root.locator("[data-output]").text_content()
    assert out.strip() == "Stopped.", out
    assert root.locator("[data-action='run']").is_enabled()
    page.context.close()


def _stop_the_demo(page) -> str:
    """Run the demo, Stop it once it trains, and return what it says."""
    page.locator(f"{DEMO} [data-action='run']").click()
    wait_until(
        page,
        "sel => (document.querySelector(sel + ' .rl-status').textContent.match(/\\d+\\/\\d+/))",
        DEMO, timeout=OUTPUT_TIMEOUT, what="the demo training (a step count in its status)",
        now=page.locator(f"{DEMO} .rl-status").inner_text,
    )
    page.locator(f"{DEMO} [data-action='stop']").click()
    wait_until(
        page, "sel => !document.querySelector(sel + ' [data-action=run]').disabled", DEMO,
        timeout=30_000, what="the demo's Run enabled again after Stop",
        now=page.locator(f"{DEMO} .rl-status").inner_text,
    )
    return page.locator(f"{DEMO} [data-output]").inner_text()


def test_the_demos_stop_says_whether_python_was_restarted(chromium, built_site):
    # cross-origin isolated: Stop interrupts Python in place, nothing restarts
    with serve(built_site["dir"], headers=ISOLATED) as url:
        page = new_page(chromium, f"{url}/en/s21/demo/")
        said = _stop_the_demo(page)
        assert said.strip() == "Stopped.", said
        page.context.close()
    # not isolated: the worker ends, and the page says the runtime restarts
    with serve(built_site["dir"]) as url:
        page = new_page(chromium, f"{url}/en/s21/demo/")
        said = _stop_the_demo(page)
        assert "restarted" in said, said
        page.context.close()
