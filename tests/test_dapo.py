"""rl_ops_numpy.dapo against the lessons' PyTorch answers (docs/beyond/overlong_penalty.py,
docs/beyond/informative_groups.py), plus the properties the pages teach: the penalty's ramp and
its range, why it refuses lengths beyond max_length, and that a flat group is exactly the group
whose advantages (and so whose policy gradient) are 0."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rl_ops_numpy import group_advantages, informative_groups, overlong_penalty, rloo_advantages

from .conftest import lesson_function

overlong_torch = lesson_function("beyond/overlong_penalty")
informative_torch = lesson_function("beyond/informative_groups")

DTYPES = [np.float32, np.float64]
SETTINGS = [(20480, 4096, 1.0), (20, 4, 1.0), (10, 3, 0.5), (16, 16, 2.0), (8, 1, 1.0)]


# ---- overlong_penalty ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(("max_length", "buffer", "factor"), SETTINGS)
def test_overlong_penalty_matches_the_lessons_pytorch_answer(dtype, max_length, buffer, factor):
    rng = np.random.default_rng(max_length + buffer)
    lengths = rng.integers(0, max_length + 1, 64).astype(dtype)
    lengths[:3] = [0, max_length - buffer, max_length]
    ours = overlong_penalty(lengths, max_length, buffer, factor)
    theirs = overlong_torch(torch.from_numpy(lengths), max_length, buffer, factor).numpy()
    assert ours.dtype == dtype
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-14, "atol": 0}
    np.testing.assert_allclose(ours, theirs, **tol)


@pytest.mark.parametrize(("max_length", "buffer", "factor"), SETTINGS)
def test_penalty_is_0_before_the_buffer_then_a_straight_line_down_to_minus_factor(
    max_length, buffer, factor
):
    L = np.arange(max_length + 1)
    p = overlong_penalty(L, max_length, buffer, factor)
    expected = max_length - buffer  # L_max − L_buf
    assert not p[L <= expected].any()
    assert p[-1] == -factor  # exactly −f at L_max
    assert ((p >= -factor) & (p <= 0)).all()
    assert (np.diff(p) <= 0).all()  # longer never costs less
    # inside the buffer every token costs the same: f / L_buf
    np.testing.assert_allclose(np.diff(p[expected:]), -factor / buffer, rtol=1e-12)


def test_no_negative_zero_before_the_buffer():
    p = overlong_penalty([0, 3, 16], 20, 4)  # all before L_max − L_buf = 16
    assert not np.signbit(p).any()


def test_the_cliff_is_a_buffer_of_one_token():
    # the page's "cliff": nothing until the last token, then the whole −f at once
    assert overlong_penalty([18432, 20479, 20480], 20480, 1).tolist() == [0.0, 0.0, -1.0]
    ramp = overlong_penalty([18432, 20479, 20480], 20480, 4096)
    assert ramp[0] == -0.5 and ramp[-1] == -1.0 and -1.0 < ramp[1] < -0.99


def test_the_factor_scales_and_the_buffer_sets_where_the_ramp_starts():
    L = np.arange(0, 101)
    np.testing.assert_array_equal(overlong_penalty(L, 100, 20, 2.0),
                                  2 * overlong_penalty(L, 100, 20, 1.0))
    whole = overlong_penalty(L, 100, 100)  # the buffer is everything: −L / L_max
    np.testing.assert_allclose(whole, -L / 100, rtol=1e-15)


def test_integer_lengths_give_float64_and_lists_work():
    p = overlong_penalty([16385], 20480, 4096)
    assert p.dtype == np.float64 and p[0] == -1 / 4096


@pytest.mark.parametrize("length", [20481, 20480 + 512, 1e9])
def test_a_length_beyond_max_length_raises_naming_the_likely_slip(length):
    # a sampler capped at max_length cannot return more; the libraries disagree beyond it
    with pytest.raises(ValueError, match=r"at most max_length = 20480.*prompt"):
        overlong_penalty([100, length], 20480, 4096)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"lengths": [[1, 2]]}, r"lengths must be \[N\], got shape \[1, 2\]"),
    ({"lengths": [-1]}, "lengths must be finite numbers >= 0, found -1.0"),
    ({"lengths": [np.nan]}, "lengths must be finite numbers >= 0, found nan"),
    ({"lengths": ["a"]}, "must hold numbers"),
    ({"max_length": 0}, "max_length must be a finite number > 0"),
    ({"buffer": 0}, "buffer must be a finite number > 0"),
    ({"buffer": 21}, r"buffer must be in \(0, max_length = 20\], got 21.0"),
    ({"factor": -1.0}, "factor must be a finite number >= 0"),
    ({"factor": True}, "factor must be a single number"),
])
def test_overlong_penalty_bad_input_raises_a_clear_error(kwargs, match):
    args = {"lengths": [1, 2], "max_length": 20, "buffer": 4, "factor": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        overlong_penalty(**args)


@given(st.lists(st.integers(0, 4096), min_size=1, max_size=20), st.integers(1, 4096),
       st.floats(0, 4))
def test_penalty_is_in_minus_factor_to_0_for_any_valid_input(lengths, buffer, factor):
    max_length = 4096
    buffer = min(buffer, max_length)
    p = overlong_penalty(lengths, max_length, buffer, factor)
    assert p.shape == (len(lengths),)
    assert ((p <= 0) & (p >= -factor)).all()


# ---- informative_groups ----------------------------------------------------------------------


def _scores(rng: np.random.Generator, groups: int, G: int, kind: str) -> np.ndarray:
    if kind == "verifier":
        return rng.integers(0, 2, groups * G).astype(np.float64)
    if kind == "grid":
        return rng.integers(-2, 3, groups * G) / 4
    return rng.normal(size=groups * G)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("kind", ["verifier", "grid", "normal"])
@pytest.mark.parametrize("G", [2, 3, 4, 16])
def test_informative_groups_matches_the_lessons_pytorch_answer(dtype, kind, G):
    s = _scores(np.random.default_rng(G), 12, G, kind).astype(dtype)
    ours = informative_groups(s, G)
    theirs = informative_torch(torch.from_numpy(s), G).numpy()
    assert ours.dtype == np.bool_ and ours.shape == s.shape
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("kind", ["verifier", "grid", "normal"])
@pytest.mark.parametrize("G", [2, 4, 8])
def test_a_group_is_dropped_exactly_when_its_advantages_are_all_0(kind, G):
    # the GRPO chapter's equal-group rule: group_advantages and rloo_advantages are exactly 0
    # for a flat group, and nonzero somewhere in every other
    s = _scores(np.random.default_rng(10 + G), 200, G, kind)
    keep = informative_groups(s, G).reshape(-1, G)
    assert (keep == keep[:, :1]).all()  # one decision per group
    for adv in (group_advantages(s, G), group_advantages(s, G, scale_by_std=False),
                rloo_advantages(s, G)):
        signal = (adv.reshape(-1, G) != 0).any(axis=1)
        np.testing.assert_array_equal(keep[:, 0], signal)


def test_a_flat_group_gives_no_policy_gradient():
    # on-policy surrogate −Â·ρ: with Â = 0 for a whole group, its log-probs get no gradient
    s = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    adv = torch.from_numpy(group_advantages(s, 4))[:, None]  # [B, 1]
    new = torch.zeros(8, 5, dtype=torch.float64, requires_grad=True)
    (-(adv * torch.exp(new - new.detach())).mean()).backward()
    rows_with_gradient = (new.grad != 0).any(dim=1).numpy()
    np.testing.assert_array_equal(rows_with_gradient, informative_groups(s, 4))


def test_equal_means_exactly_equal_not_a_std_of_0_and_no_tolerance():
    three = np.array([0.1, 0.1, 0.1])
    assert float(np.std(three.tolist())) == pytest.approx(1.4e-17, rel=0.05)  # not 0
    assert not informative_groups(three, 3).any()  # but flat
    one_ulp = np.array([0.3, np.nextafter(0.3, 1.0)])
    assert informative_groups(one_ulp, 2).all()  # different, however little


def test_the_order_inside_a_group_and_the_dtype_do_not_matter():
    rng = np.random.default_rng(5)
    s = _scores(rng, 50, 4, "grid")
    shuffled = np.concatenate([rng.permutation(g) for g in s.reshape(-1, 4)])
    np.testing.assert_array_equal(informative_groups(s, 4), informative_groups(shuffled, 4))
    np.testing.assert_array_equal(informative_groups(s, 4),
                                  informative_groups(s.astype(np.float32), 4))


def test_the_share_of_flat_groups_is_p_to_the_G_plus_1_minus_p_to_the_G():
    # the lesson's table: G = 16, each response right with probability p = 0.9 → 18.5% flat
    rng = np.random.default_rng(0)
    G, p, groups = 16, 0.9, 40_000
    s = (rng.random(groups * G) < p).astype(np.float64)
    flat = 1 - informative_groups(s, G).reshape(-1, G)[:, 0].mean()
    assert flat == pytest.approx(p**G + (1 - p) ** G, abs=0.01)
    assert round(p**G + (1 - p) ** G, 3) == 0.185


@pytest.mark.parametrize(("scores", "G", "match"), [
    ([1.0, 0.0], 1, "group_size must be at least 2"),
    ([1.0, 0.0, 1.0], 2, "not divisible by group_size"),
    ([[1.0, 0.0]], 2, r"scores must be \[N\]"),
    ([1.0, np.nan], 2, "scores must be finite numbers, found nan"),
    ([1.0, np.inf], 2, "scores must be finite numbers, found inf"),
    ([1.0, 0.0], True, "group_size must be an integer >= 2"),
    ([1.0, 0.0], 2.0, "group_size must be an integer >= 2"),
])
def test_informative_groups_bad_input_raises_a_clear_error(scores, G, match):
    with pytest.raises(ValueError, match=match):
        informative_groups(scores, G)
