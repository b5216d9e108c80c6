"""The demo page in headless Chromium: the sample run's curves are drawn with uPlot (the runs beside
GRPO included); Run trains the toy model in the page's Python to the end and draws the learner's
curves, with the runs beside GRPO when the box is ticked; a failed download is named."""

from __future__ import annotations

import json

import pytest

from .browser import fail_downloads, new_page, wait_until


@pytest.fixture(params=["", "en/"], ids=["zh", "en"])
def page(request, chromium, site_url):
    page = new_page(chromium, f"{site_url}/{request.param}s21/demo/")
    yield page
    assert not page.errors and not page.foreign, (page.errors, page.foreign)
    page.context.close()


def test_sample_curves_are_drawn_from_the_build_time_run(page):
    charts = page.locator("[data-demo] .rl-demo-chart")
    assert charts.count() == 8
    assert page.locator("[data-demo] .rl-demo-chart canvas").count() == 8
    sample = json.loads(page.locator("script.rl-demo-data").text_content())["sample"]
    assert len(sample["ppo"]["rm_score"]) == len(sample["ppo"]["step"]) > 10
    assert len(sample["grpo_tis"]["tis_truncated"]) == len(sample["grpo"]["step"])
    # the legends name the runs in the page's language
    legends = page.locator("[data-demo] [data-chart='mismatch'] .u-legend").inner_text()
    assert ("GRPO + mismatch + TIS" if "/en/" in page.url else "GRPO + 失配 + TIS") in legends
    # the table of final words comes from the same run
    words = page.locator("[data-demo] .rl-demo-words").inner_text()
    assert sample["eval"]["ppo"]["examples"][0]["word"] in words
    assert f"{sample['eval']['ppo']['rm_score']:.2f}" in words
    assert f"{sample['eval']['grpo_tis']['rm_score']:.2f}" in words


def test_a_failed_numpy_download_is_named(page):
    fail_downloads(page)
    page.locator("[data-demo] [data-action='run']").click()
    out = page.locator("[data-demo] [data-output]")
    out.wait_for(state="visible", timeout=60_000)
    assert "numpy-2" in out.inner_text()
    assert page.locator("[data-demo] [data-action='run']").is_enabled()


# the demo not running: Run enabled, Stop disabled
IDLE = (
    "!document.querySelector('[data-demo] [data-action=run]').disabled"
    " && document.querySelector('[data-demo] [data-action=stop]').disabled"
)

# python.js replaced by a stub that counts demo runs and finishes each after a moment
COUNTING = """
window.__demos = 0;
export function runtime() {
  return {
    prefetch() {},
    submit(job) {
      window.__demos++;
      window.__config = job.payload.config;
      setTimeout(() => job.move("stopped"), 500);
      return job;
    },
  };
}
"""


def test_a_double_click_on_run_starts_one_run(page):
    page.route(
        "**/assets/js/python.js?v=*",
        lambda route: route.fulfill(body=COUNTING, content_type="text/javascript"),
    )
    page.locator("[data-demo] [data-action='run']").dblclick()
    wait_until(page, "window.__demos >= 1", what="a demo run started")
    # the run ends (the stub's, after 500 ms): a run the second click made has started by then
    wait_until(page, IDLE, what="the demo idle again after its run")
    assert page.evaluate("window.__demos") == 1
    assert page.evaluate("window.__config") == {}


def test_the_box_adds_the_runs_beside_grpo_to_the_learners_run(page):
    page.route(
        "**/assets/js/python.js?v=*",
        lambda route: route.fulfill(body=COUNTING, content_type="text/javascript"),
    )
    box = page.locator("[data-demo] [data-option='variants']")
    assert not box.is_checked()
    box.check()
    page.locator("[data-demo] [data-action='run']").click()
    wait_until(page, "window.__demos >= 1", what="a demo run started")
    assert page.evaluate("window.__config") == {"grpo_variants": True}
    assert box.is_disabled()  # the run's configuration is fixed while it runs
    wait_until(
        page, "!document.querySelector('[data-demo] [data-option=variants]').disabled",
        what="the box enabled again after the run",
    )


def test_run_in_the_browser_trains_to_the_end_and_draws_live_curves(page):
    # English ticks the box: the runs beside GRPO too; Chinese runs the default, without them
    variants = "/en/" in page.url
    if variants:
        page.locator("[data-demo] [data-option='variants']").check()
    page.locator("[data-demo] [data-action='run']").click()
    wait_until(page, IDLE, timeout=300_000, what="the demo's run to its end",
               now=lambda: page.locator("[data-demo] .rl-status").inner_text())
    assert page.locator("[data-demo] [data-output]").is_hidden()
    status = page.locator("[data-demo] .rl-status").inner_text()
    assert any(ch.isdigit() for ch in status)  # "Done in 12.3 s"
    # every chart with a run the learner's run has drew it: its series has points
    drawn = dict(
        page.evaluate("""() => [...document.querySelectorAll('[data-demo] .rl-demo-chart')]
            .map(box => [box.dataset.chart, box.dataset.livePoints])""")
    )
    only_beside_grpo = {"rollout_kl", "tis_truncated"}
    for chart, n in drawn.items():
        if variants or chart not in only_beside_grpo:
            assert n and int(n) > 0, drawn
        else:
            assert n is None, drawn
    words = page.locator("[data-demo] .rl-demo-words").inner_text()
    assert "PPO" in words and "SimPO" in words  # SimPO trains beside DPO in every run
    assert ("GSPO" in words) == variants
