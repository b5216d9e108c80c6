"""Figures a reader can move, in Chromium (js/figure.js): nothing of a figure is fetched before
the reader nears it; moving a control by keyboard redraws it, and what is drawn equals the
rl_ops_numpy references computed here, in both languages; offline it says so and draws once the
network is back (a page visited once draws its figures offline: test_browser_offline; every
page is checked for WCAG violations with every figure drawn: test_browser_a11y)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from site_build import ui_strings

from .browser import new_page, wait_until

FIGURE_FILES = ("/assets/figures/", "/assets/js/plot.js", "/assets/uplot/")


def _drawn(page, figure_id: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """What the figure's plot holds now: x and each series (NaN for a gap)."""
    data = page.evaluate(f"document.querySelector('[data-figure={figure_id}]').rlPlot.data")
    as_array = lambda ys: np.array([np.nan if y is None else y for y in ys], dtype=float)  # noqa: E731
    return as_array(data[0]), [as_array(ys) for ys in data[1:]]


def _show(page, figure_id: str) -> None:
    page.locator(f"[data-figure={figure_id}]").scroll_into_view_if_needed()
    page.wait_for_selector(f"[data-figure={figure_id}][data-state=drawn]", timeout=20_000)


def _clip_reference(rho: np.ndarray, sign: float, eps_low: float, eps_high: float,
                    dual: float | None) -> np.ndarray:
    from rl_ops_numpy import grpo_policy_loss

    return np.array([grpo_policy_loss([[math.log(r)]], [[0.0]], [sign], [[1]], clip_low=eps_low,
                                      clip_high=eps_high, dual_clip=dual) for r in rho])


def _redrawn(page, figure_id: str, before: str) -> None:
    wait_until(page, f"document.querySelector('[data-figure={figure_id}]').dataset.combination "
                     f"!== '{before}'", what=f"{figure_id} redrawn")


@pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
def test_a_figure_loads_on_sight_and_keyboard_moves_redraw_the_references_numbers(
        chromium, site_url, lang):
    page = new_page(chromium)
    fetched = []
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(f"{site_url}/{lang}ppo/")
    page.wait_for_load_state("networkidle")
    # nothing of a figure before the reader nears it
    assert not [u for u in fetched if any(f in u for f in FIGURE_FILES)]
    assert page.locator("[data-figure=clip]").get_attribute("data-state") == "idle"

    _show(page, "clip")
    rho, (clipped, plain) = _drawn(page, "clip")
    # as the page opens: Â = +1, ε_low = 0.2, ε_high = 0.2, no dual clip
    np.testing.assert_allclose(clipped, _clip_reference(rho, 1.0, 0.2, 0.2, None), rtol=1e-6)
    np.testing.assert_allclose(plain, -rho, rtol=1e-6)
    # only this figure's numbers came, not the other figures'
    version = page.locator("[data-figure=clip]").get_attribute("data-version")
    assert [u for u in fetched if "/assets/figures/" in u] == [
        f"{site_url}/assets/figures/clip.json?v={version}"]

    # ε_high one step up, by keyboard: 0.28, said and drawn
    slider = page.locator("#rl-fig-clip-eps_high")
    slider.focus()
    before = page.locator("[data-figure=clip]").get_attribute("data-combination")
    page.keyboard.press("ArrowRight")
    _redrawn(page, "clip", before)
    assert slider.get_attribute("aria-valuetext") == "0.28"
    assert page.locator("output[for=rl-fig-clip-eps_high]").text_content() == "0.28"
    _, (clipped, _) = _drawn(page, "clip")
    np.testing.assert_allclose(clipped, _clip_reference(rho, 1.0, 0.2, 0.28, None), rtol=1e-6)

    # the advantage's sign by arrow key, then the dual clip to its last value (End): c = 3
    page.locator("input[name=rl-fig-clip-sign]").first.focus()
    before = page.locator("[data-figure=clip]").get_attribute("data-combination")
    page.keyboard.press("ArrowRight")
    _redrawn(page, "clip", before)
    page.locator("#rl-fig-clip-dual").focus()
    before = page.locator("[data-figure=clip]").get_attribute("data-combination")
    page.keyboard.press("End")
    _redrawn(page, "clip", before)
    assert page.locator("#rl-fig-clip-dual").get_attribute("aria-valuetext") == "3"
    _, (clipped, plain) = _drawn(page, "clip")
    np.testing.assert_allclose(clipped, _clip_reference(rho, -1.0, 0.2, 0.28, 3.0), rtol=1e-6)
    np.testing.assert_allclose(plain, rho, rtol=1e-6)

    # GAE's λ to 0 (Home): the one-step TD errors of the reference
    from rl_ops_numpy import compute_gae
    from site_build.figures import gae_response

    _show(page, "gae")
    page.locator("#rl-fig-gae-lam").focus()
    before = page.locator("[data-figure=gae]").get_attribute("data-combination")
    page.keyboard.press("Home")
    _redrawn(page, "gae", before)
    t, (adv, td, mc) = _drawn(page, "gae")
    T = len(t)
    rewards, values = gae_response(T)
    for lam, got in ((0.0, adv), (0.0, td), (1.0, mc)):
        want = compute_gae(rewards[None], values[None], np.ones((1, T)), gamma=1.0, lam=lam)[0][0]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert not page.errors
    page.context.close()


def test_the_grpo_figures_redraw_by_keyboard_with_gaps_where_a_group_has_no_such_answer(
        chromium, site_url):
    from rl_ops_numpy import aggregate_loss, rloo_advantages

    page = new_page(chromium, f"{site_url}/en/grpo/")
    _show(page, "group")
    page.locator("#rl-fig-group-size").focus()
    before = page.locator("[data-figure=group]").get_attribute("data-combination")
    page.keyboard.press("ArrowLeft")  # G = 4
    _redrawn(page, "group", before)
    page.locator("input[name=rl-fig-group-estimator]").first.focus()
    before = page.locator("[data-figure=group]").get_attribute("data-combination")
    page.keyboard.press("ArrowLeft")  # the last choice: RLOO
    _redrawn(page, "group", before)
    share, (right, wrong) = _drawn(page, "group")
    for k in range(5):
        i = int(np.flatnonzero(np.isclose(share, k / 4))[0])
        adv = rloo_advantages([1.0] * k + [0.0] * (4 - k), 4)
        assert math.isnan(right[i]) if k == 0 else math.isclose(right[i], adv[0], rel_tol=1e-6)
        assert math.isnan(wrong[i]) if k == 4 else math.isclose(wrong[i], adv[-1],
                                                                 rel_tol=1e-6, abs_tol=1e-12)

    _show(page, "aggregation")
    page.locator("input[name=rl-fig-aggregation-view]").first.focus()
    before = page.locator("[data-figure=aggregation]").get_attribute("data-combination")
    page.keyboard.press("ArrowRight")  # the whole response
    _redrawn(page, "aggregation", before)
    lengths, series = _drawn(page, "aggregation")
    for mode, got in zip(("token-mean", "token-sum", "seq-mean-token-mean", "seq-mean-token-sum"),
                         series, strict=False):
        for i in (0, len(lengths) // 2, len(lengths) - 1):
            L = int(lengths[i])
            mask = np.arange(512)[None, :] < np.array([L, 64, 64, 64])[:, None]
            loss = np.zeros(mask.shape)
            loss[0] = 1.0
            assert math.isclose(got[i], aggregate_loss(loss, mask, mode), rel_tol=1e-6), mode
    assert not page.errors
    page.context.close()


def test_an_offline_figure_says_so_and_draws_once_the_network_is_back(chromium, site_url):
    page = new_page(chromium, f"{site_url}/en/ppo/")
    page.context.set_offline(True)
    page.locator("[data-figure=kl]").scroll_into_view_if_needed()
    page.wait_for_selector("[data-figure=kl][data-state=failed]", timeout=20_000)
    assert page.locator("[data-figure=kl] .rl-figure-status").text_content() == (
        "Offline: this figure loads when you are back online.")
    # the controls still work, and say their value
    page.locator("input[name=rl-fig-kl-view]").first.focus()
    page.keyboard.press("ArrowRight")
    page.context.set_offline(False)
    page.wait_for_selector("[data-figure=kl][data-state=drawn]", timeout=20_000)
    assert page.locator("[data-figure=kl] .rl-figure-status").text_content() == ""
    x, (g1, g2, g3) = _drawn(page, "kl")  # the gradient, as chosen while offline
    np.testing.assert_allclose(g1, np.ones_like(x), rtol=1e-6)
    np.testing.assert_allclose(g2, x, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g3, 1 - np.exp(-x), rtol=1e-6, atol=1e-7)
    assert not page.errors
    page.context.close()


def test_numbers_for_other_controls_are_refused_not_drawn(chromium, site_url):
    """After a deploy, a host that ignores ?v= can hand an open page another build's numbers:
    numbers whose shape is not the page's controls fail the figure, with the file named."""
    page = new_page(chromium)
    # the same controls, but a build with one dual-clip value fewer
    other = page.request.get(f"{site_url}/assets/figures/clip.json").json()
    other["shape"][-1] -= 1
    other["ys"] = [ys for k, ys in enumerate(other["ys"]) if k % 3 != 2]
    page.route("**/assets/figures/clip.json*", lambda route: route.fulfill(json=other))
    page.goto(f"{site_url}/en/ppo/")
    page.locator("[data-figure=clip]").scroll_into_view_if_needed()
    page.wait_for_selector("[data-figure=clip][data-state=failed]", timeout=20_000)
    status = page.locator("[data-figure=clip] .rl-figure-status").text_content()
    assert status == ui_strings.table("en")["figure"]["stale"], status
    assert page.locator("[data-figure=clip] .uplot").count() == 0
    assert not page.errors
    page.context.close()
