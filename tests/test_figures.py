"""The figures' numbers (site_build/figures.py) against the formulas each figure shows, written
out here independently of the references that computed them; and their markup: every control
labelled, in each language, and every figure id a page names known."""

from __future__ import annotations

import html
import json
import math
import re
from functools import cache

import numpy as np
import pytest

from site_build.directives import DirectiveError, expand
from site_build.figures import FIGURES, data, figure_html
from site_build.languages import LANGUAGES


@cache
def _data(figure_id: str) -> dict:
    return data(FIGURES[figure_id])


def drawn(figure_id: str, **params) -> tuple[np.ndarray, list[np.ndarray]]:
    """x and the series the figure shows for these control values."""
    figure, numbers = FIGURES[figure_id], _data(figure_id)
    flat = 0
    for control, size in zip(figure.controls, numbers["shape"], strict=True):
        flat = flat * size + control.values.index(params[control.key])
    nan = lambda ys: np.array([np.nan if y is None else y for y in ys])  # noqa: E731
    return np.array(numbers["x"]), [nan(ys) for ys in numbers["ys"][flat]]


def test_every_figure_has_a_combination_per_value_of_its_controls_and_x_long_series():
    for figure_id, figure in FIGURES.items():
        numbers = _data(figure_id)
        assert numbers["shape"] == [len(c.values) for c in figure.controls]
        assert len(numbers["ys"]) == math.prod(numbers["shape"])
        for combination in numbers["ys"]:
            assert len(combination) == len(figure.series)
            assert all(len(ys) == len(numbers["x"]) for ys in combination)
        json.dumps(numbers, allow_nan=False)  # no NaN or inf in the file: null is a gap


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("dual", [0.0, 2.0, 3.0])
def test_the_clip_figure_is_the_pessimistic_clipped_loss_flat_where_the_clip_stops_the_gradient(
        sign, dual):
    for eps_low in (0.1, 0.3):
        for eps_high in (0.2, 0.28):
            rho, (clipped, plain) = drawn("clip", sign=sign, eps_low=eps_low, eps_high=eps_high,
                                          dual=dual)
            # −min(ρÂ, clip(ρ, 1 − ε_low, 1 + ε_high)Â), and with dual clip c for Â < 0 at most c|Â|
            want = -np.minimum(rho * sign, np.clip(rho, 1 - eps_low, 1 + eps_high) * sign)
            if dual and sign < 0:
                want = np.minimum(want, dual)
            np.testing.assert_allclose(clipped, want, rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(plain, -rho * sign, rtol=1e-6)
            # every kink is a point of x: straight lines between the points are the function
            assert {round(1 - eps_low, 6), round(1 + eps_high, 6)} <= set(np.round(rho, 6))


def test_the_kl_figure_shows_k1_k2_k3_and_their_gradients_with_respect_to_log_pi():
    x, (k1, k2, k3) = drawn("kl", view="value")
    np.testing.assert_allclose(k1, x, atol=1e-12)
    np.testing.assert_allclose(k2, x**2 / 2, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(k3, np.exp(-x) - 1 + x, rtol=1e-6, atol=1e-9)
    _, (g1, g2, g3) = drawn("kl", view="gradient")
    np.testing.assert_allclose(g1, np.ones_like(x), rtol=1e-6)
    np.testing.assert_allclose(g2, x, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g3, 1 - np.exp(-x), rtol=1e-6, atol=1e-7)


def test_the_gae_figure_goes_from_td_errors_at_lambda_0_to_return_minus_value_at_lambda_1():
    from site_build.figures import GAE_X, gae_response

    T = len(GAE_X)
    rewards, values = gae_response(T)
    next_values = np.append(values[1:], 0.0)
    for gamma in (0.9, 1.0):
        _, (_, td, mc) = drawn("gae", lam=0.5, gamma=gamma)
        # λ = 0: δ_t = r_t + γV_{t+1} − V_t
        np.testing.assert_allclose(td, rewards + gamma * next_values - values, atol=1e-6)
        # λ = 1: Σ_k γ^k r_{t+k} − V_t
        returns = [sum(gamma**k * r for k, r in enumerate(rewards[i:])) for i in range(T)]
        np.testing.assert_allclose(mc, np.array(returns) - values, atol=1e-6)
        # the chosen λ is the λ-weighted sum of the TD errors
        _, (a, _, _) = drawn("gae", lam=0.5, gamma=gamma)
        want = [sum((gamma * 0.5) ** k * d for k, d in enumerate(td[i:])) for i in range(T)]
        np.testing.assert_allclose(a, want, atol=1e-6)


@pytest.mark.parametrize("size", [2, 4, 8, 16])
def test_the_group_figure_gives_each_right_and_wrong_answer_its_advantage(size):
    x, right, wrong = None, {}, {}
    for estimator in ("grpo", "dr_grpo", "rloo"):
        x, (right[estimator], wrong[estimator]) = drawn("group", size=size, estimator=estimator)
    for k in range(size + 1):
        i = int(np.flatnonzero(np.isclose(x, k / size))[0])
        p = k / size  # the share of right answers
        std = math.sqrt(size * p * (1 - p) / (size - 1))  # of k ones and size − k zeros, ddof 1
        for estimator, a_right, a_wrong in (
            ("dr_grpo", 1 - p, -p),
            ("grpo", (1 - p) / (std + 1e-6), -p / (std + 1e-6)),
            ("rloo", 1 - (k - 1) / (size - 1), -k / (size - 1)),
        ):
            # a group all right (or all wrong) has no wrong (or right) answer: a gap
            assert math.isnan(right[estimator][i]) if k == 0 else math.isclose(
                right[estimator][i], 0.0 if k == size else a_right, rel_tol=1e-6, abs_tol=1e-9)
            assert math.isnan(wrong[estimator][i]) if k == size else math.isclose(
                wrong[estimator][i], 0.0 if k == 0 else a_wrong, rel_tol=1e-6, abs_tol=1e-9)
    # the points between a group's shares are gaps, drawn across
    between = [i for i, v in enumerate(x) if not math.isclose(v * size, round(v * size))]
    assert all(math.isnan(right["grpo"][i]) and math.isnan(wrong["grpo"][i]) for i in between)


@pytest.mark.parametrize("cap", [1.5, 2.0, 3.0, 5.0])
def test_the_rollout_figure_truncates_at_c_for_tis_and_drops_outside_the_band_for_icepop(cap):
    w, (tis, icepop, plain) = drawn("rollout", cap=cap)
    np.testing.assert_allclose(tis, np.minimum(w, cap), rtol=1e-6)
    # the band's ends are included; the reference sees the ratio as exp(log w), which can round
    # an end (w = 3) to just outside it
    seen = np.exp(np.log(w))
    np.testing.assert_allclose(icepop, np.where((seen >= 1 / cap) & (seen <= cap), w, 0.0),
                               rtol=1e-6)
    np.testing.assert_allclose(plain, w, rtol=1e-6)


@pytest.mark.parametrize("others", [16, 64, 256])
def test_the_aggregation_figure_weighs_the_first_response_as_each_mode_divides(others):
    from site_build.figures import AGG_HORIZON

    L, token = drawn("aggregation", others=others, view="token")
    _, response = drawn("aggregation", others=others, view="response")
    per_token = {  # the weight of one token of the first of four responses, by mode
        "token-mean": 1 / (L + 3 * others),
        "token-sum": np.ones_like(L),
        "seq-mean-token-mean": 1 / (4 * L),
        "seq-mean-token-sum": np.full_like(L, 1 / 4),
        "seq-mean-token-sum-norm": np.full_like(L, 1 / (4 * AGG_HORIZON)),
    }
    labels = [s.text("en") for s in FIGURES["aggregation"].series]
    assert labels == list(per_token)
    for mode, want, got_token, got_response in zip(per_token, per_token.values(), token,
                                                   response, strict=True):
        np.testing.assert_allclose(got_token, want, rtol=1e-6, err_msg=mode)
        np.testing.assert_allclose(got_response, want * L, rtol=1e-6, err_msg=mode)


def _softplus(x):
    return np.logaddexp(0, x)  # −log σ(−x)


def _sig(x):
    return np.exp(-np.logaddexp(0, -x))  # σ(x)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_the_dpo_margin_figure_is_each_loss_of_the_margin_and_where_each_stops_pushing(beta):
    delta, (dpo, hinge, ipo, robust, exo, discopop) = drawn("dpo_margin", beta=beta)
    z, eps = beta * delta, 0.1
    np.testing.assert_allclose(dpo, _softplus(-z), rtol=1e-6)
    np.testing.assert_allclose(hinge, np.maximum(0, 1 - z), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ipo, (delta - 1 / (2 * beta)) ** 2, rtol=1e-6)
    np.testing.assert_allclose(
        robust, ((1 - eps) * _softplus(-z) - eps * _softplus(z)) / (1 - 2 * eps), rtol=1e-6,
        atol=1e-7)
    q = _sig(z)
    np.testing.assert_allclose(
        exo, q * (np.log(q) - np.log(1 - eps)) + (1 - q) * (np.log(1 - q) - np.log(eps)),
        rtol=1e-6, atol=1e-7)
    m = _sig(z / 0.05)
    np.testing.assert_allclose(discopop, (1 - m) * _softplus(-z) + m * np.exp(-z), rtol=1e-6)
    # what the caption says: hinge is 0 from Δ = 1/β on, IPO is least at 1/(2β), robust DPO
    # keeps falling and goes below 0, DPO falls and stays above 0
    assert np.all(hinge[delta >= 1 / beta] == 0) and np.all(hinge[delta < 1 / beta] > 0)
    assert abs(delta[np.argmin(ipo)] - 1 / (2 * beta)) <= 0.05 + 1e-9  # the axis' step is 0.1
    assert np.all(np.diff(robust) < 0) and robust.min() < 0
    assert np.all(np.diff(dpo) < 0) and dpo.min() > 0
    # EXO least at βΔ = ln((1 − ε)/ε) = ln 9; DiscoPOP rising somewhere near Δ = 0 (|βΔ| ≤ 0.2)
    assert abs(beta * delta[np.argmin(exo)] - math.log(9)) <= beta * 0.05 + 1e-9
    near = np.abs(beta * delta) <= 0.2 + 1e-9
    assert np.any(np.diff(discopop[near]) > 0)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("r_l", [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0])
def test_the_dpo_anchored_figure_is_each_loss_of_the_chosen_log_ratio_and_where_it_wants_it(
        r_l, beta):
    r_w, (dpo, bco, nca, sppo, apo_zero, apo_down) = drawn("dpo_anchored", r_l=r_l, beta=beta)
    np.testing.assert_allclose(dpo, _softplus(-beta * (r_w - r_l)), rtol=1e-6)
    np.testing.assert_allclose(bco, _softplus(-beta * r_w) + _softplus(beta * r_l), rtol=1e-6)
    np.testing.assert_allclose(
        nca, _softplus(-beta * r_w) + 0.5 * _softplus(beta * r_w) + 0.5 * _softplus(beta * r_l),
        rtol=1e-6)
    np.testing.assert_allclose(
        sppo, (r_w - 1 / (2 * beta)) ** 2 + (r_l + 1 / (2 * beta)) ** 2, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(apo_zero, 1 - _sig(beta * r_w) + _sig(beta * r_l), rtol=1e-6)
    np.testing.assert_allclose(apo_down, _sig(beta * r_w) + 1 - _sig(beta * (r_w - r_l)),
                               rtol=1e-6)
    # what the caption says: DPO's curve only moves sideways with r_l
    shifted = np.isin(np.round(r_w - r_l, 6), np.round(r_w, 6))
    _, (dpo_at_0, *_) = drawn("dpo_anchored", r_l=0.0, beta=beta)
    np.testing.assert_allclose(dpo[shifted], dpo_at_0[np.isin(np.round(r_w, 6),
                                                               np.round(r_w - r_l, 6))], rtol=1e-6)
    # NCA least at ln 2/β, SPPO at 1/(2β) (to the axis' step of 0.1)
    assert abs(r_w[np.argmin(nca)] - math.log(2) / beta) <= 0.05 + 1e-9
    assert abs(r_w[np.argmin(sppo)] - 1 / (2 * beta)) <= 0.05 + 1e-9
    # APO-down least at r_l/2 below the reference, flat at r_l = 0, greatest there above it
    if r_l < 0:
        assert abs(r_w[np.argmin(apo_down)] - r_l / 2) <= 0.05 + 1e-9
    if r_l == 0:
        np.testing.assert_allclose(apo_down, 1.0, rtol=1e-6)
    if r_l > 0:
        assert abs(r_w[np.argmax(apo_down)] - r_l / 2) <= 0.05 + 1e-9
    # the places the caption names are in view: each of those minima below the top of the plot
    top = FIGURES["dpo_anchored"].y_range[1]
    assert nca.min() < top and sppo.min() < top and apo_down.min() < top
    # BCO and APO-zero keep pushing r_w up, APO-zero less and less
    assert np.all(np.diff(bco) < 0) and np.all(np.diff(apo_zero) < 0)
    assert np.all(np.diff(apo_zero, 2)[r_w[1:-1] > 0] > 0)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_control_of_a_figure_is_labelled_and_says_its_value_in_the_page_language(lang):
    for figure in FIGURES.values():
        markup = figure_html(figure, lang)
        for control in figure.controls:
            name = f"rl-fig-{figure.id}-{control.key}"
            start = control.text(control.start, lang)
            if control.kind == "range":
                assert f'<label for="{name}">{control.label[lang]}</label>' in markup
                slider = re.search(rf'<input type="range" id="{name}"[^>]*>', markup).group(0)
                assert f'aria-valuetext="{start}"' in slider
                assert f'value="{control.start}"' in slider
                assert f'max="{len(control.values) - 1}"' in slider
            else:
                assert f"<legend>{control.label[lang]}</legend>" in markup
                assert markup.count(f'name="{name}"') == len(control.values)
                checked = rf'name="{name}"[^>]*value="{control.start}" checked> {re.escape(start)}'
                assert re.search(checked, markup)
        caption = re.search(r'id="rl-fig-[a-z_]+-caption">([^<]+)<', markup).group(1)
        assert caption == html.escape(figure.caption[lang])


def test_a_page_naming_an_unknown_figure_fails_the_build_with_the_known_ones():
    with pytest.raises(DirectiveError, match=r"ppo/index.en.md:3: rl:figure needs one figure id "
                                             r"of: clip, kl"):
        expand("# PPO\n\n<!-- rl:figure clipped -->\n", "ppo/index.en.md", "en", {},
               lambda: "")
