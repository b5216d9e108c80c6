"""The demo page in headless Chromium: the sample run's curves are drawn with uPlot; Run trains
the toy model in the page's Python to the end and draws the learner's curves; a failed download
is named."""

from __future__ import annotations

import json

import pytest

from .browser import fail_downloads, new_page


@pytest.fixture(params=["", "en/"], ids=["zh", "en"])
def page(request, chromium, site_url):
    page = new_page(chromium, f"{site_url}/{request.param}s21/demo/")
    yield page
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


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


def test_a_failed_numpy_download_is_named(page):
    fail_downloads(page)
    page.locator("[data-demo] [data-action='run']").click()
    out = page.locator("[data-demo] [data-output]")
    out.wait_for(state="visible", timeout=60_000)
    assert "numpy-2" in out.inner_text()
    assert page.locator("[data-demo] [data-action='run']").is_enabled()


# python.js replaced by a stub that counts demo runs and finishes each after a moment
COUNTING = """
window.__demos = 0;
export function runtime() {
  return {
    config: {}, prefetch() {}, stop() {}, onProgress() { return () => {}; },
    demo() {
      window.__demos++;
      return { done: new Promise((resolve) =>
        setTimeout(() => resolve({ state: "stopped", ok: false }), 500)) };
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


def test_run_in_the_browser_trains_to_the_end_and_draws_live_curves(page):
    page.locator("[data-demo] [data-action='run']").click()
    page.wait_for_function(
        "document.querySelector('[data-demo] [data-action=run]').disabled === false"
        " && document.querySelector('[data-demo] [data-action=stop]').disabled",
        timeout=300_000,
    )
    assert page.locator("[data-demo] [data-output]").is_hidden()
    status = page.locator("[data-demo] .rl-status").inner_text()
    assert any(ch.isdigit() for ch in status)  # "Done in 12.3 s"
    # every chart drew the learner's run: its series has points
    drawn = page.evaluate("""() => [...document.querySelectorAll('[data-demo] .rl-demo-chart')]
        .map(box => box.dataset.livePoints)""")
    assert all(n and int(n) > 0 for n in drawn), drawn
    assert "PPO" in page.locator("[data-demo] .rl-demo-words").inner_text()
