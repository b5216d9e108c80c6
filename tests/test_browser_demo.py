"""The demo page in headless Chromium: the sample run's curves are drawn with uPlot, and Run
says clearly when numpy cannot be fetched (a full Pyodide distribution runs it: last test)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .browser import NO_PYODIDE_DIST, UNREACHABLE, serve, set_packages_url


@pytest.fixture(params=["", "en/"], ids=["zh", "en"])
def page(request, chromium, site_url):
    context = chromium.new_context()
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(f"{site_url}/{request.param}s21/demo/")
    page.wait_for_load_state("networkidle")
    yield page
    assert not page.errors
    context.close()


def test_sample_curves_are_drawn_from_the_build_time_run(page):
    charts = page.locator("[data-demo] .rl-demo-chart")
    assert charts.count() == 4
    assert page.locator("[data-demo] .rl-demo-chart canvas").count() == 4
    sample = json.loads(page.locator("script.rl-demo-sample").text_content())
    assert len(sample["ppo"]["rm_score"]) == len(sample["ppo"]["step"]) > 10
    # the table of final words comes from the same run
    words = page.locator("[data-demo] .rl-demo-words").inner_text()
    assert sample["eval"]["ppo"]["examples"][0]["word"] in words
    assert f"{sample['eval']['ppo']['rm_score']:.2f}" in words


def test_run_without_numpy_says_so(page):
    set_packages_url(page, UNREACHABLE)
    page.locator("[data-demo] [data-action='run']").click()
    out = page.locator("[data-demo] [data-output]")
    out.wait_for(state="visible", timeout=60_000)
    assert "numpy" in out.inner_text() and "127.0.0.1:9" in out.inner_text()
    assert page.locator("[data-demo] [data-action='run']").is_enabled()


# python.js replaced by a stub that counts demo runs and finishes each after a moment
COUNTING = """
window.__demos = 0;
export function runtime() {
  return {
    config: {}, prefetch() {}, onProgress() { return () => {}; },
    demo() {
      window.__demos++;
      const job = new Promise((resolve) =>
        setTimeout(() => resolve({ ok: false, stopped: true }), 500));
      job.id = window.__demos;
      return job;
    },
  };
}
"""


def test_a_double_click_on_run_starts_one_run(page):
    page.route(
        "**/assets/js/python.js",
        lambda route: route.fulfill(body=COUNTING, content_type="text/javascript"),
    )
    page.locator("[data-demo] [data-action='run']").dblclick()
    page.wait_for_function("window.__demos >= 1")
    page.wait_for_timeout(300)  # time for a second run to start, if the second click made one
    assert page.evaluate("window.__demos") == 1


PYODIDE_DIST = os.environ.get("PYODIDE_DIST")


@pytest.mark.skipif(
    not PYODIDE_DIST,
    reason=NO_PYODIDE_DIST,
)
def test_run_in_the_browser_draws_live_curves(chromium, built_site):
    with serve(Path(PYODIDE_DIST)) as packages, serve(built_site["dir"]) as url:
        context = chromium.new_context()
        page = context.new_page()
        page.goto(f"{url}/s21/demo/")
        set_packages_url(page, packages)
        page.locator("[data-demo] [data-action='run']").click()
        page.wait_for_function(
            "document.querySelector('[data-demo] .rl-status').textContent.match(/\\d+(\\.\\d+)? /)",
            timeout=180_000,
        )
        assert "PPO" in page.locator("[data-demo] .rl-demo-words").inner_text()
        context.close()
