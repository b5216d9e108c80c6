"""rl_ops_numpy.gae against the PyTorch lesson code, plus GAE's defining properties."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rl_ops_numpy import compute_gae, compute_gae_episode, reinforce_pp_advantages
from rl_ops_numpy.gae import reverse_discounted_sum

from .cases import Case, cases, mask, tolerance
from .conftest import lesson_function

CASES = list(cases())
torch_gae = lesson_function("ppo/compute_gae")
torch_gae_episode = lesson_function("s21/compute_gae")
T_ = torch.from_numpy


def _loop_gae(r, v, gamma, lam):
    """GAE on one row of response tokens alone, written as plainly as possible (float64)."""
    n = len(r)
    adv, gae = np.zeros(n), 0.0
    for t in reversed(range(n)):
        nv = v[t + 1] if t + 1 < n else 0.0
        gae = r[t] + gamma * nv - v[t] + gamma * lam * gae
        adv[t] = gae
    return adv


@pytest.mark.parametrize("case", CASES, ids=str)
def test_compute_gae_matches_lesson(case: Case):
    rng = np.random.default_rng(case.seed)
    r, v = rng.normal(0, 1, (2, case.B, case.T)).astype(case.dtype)
    m = mask(rng, case.B, case.T, case.layout).astype(case.dtype)
    for gamma, lam in ((1.0, 0.95), (0.9, 0.8)):
        adv, ret = compute_gae(r, v, m, gamma=gamma, lam=lam)
        t_adv, t_ret = torch_gae(T_(r), T_(v), T_(m), gamma=gamma, lam=lam)
        assert adv.dtype == case.dtype and ret.shape == (case.B, case.T)
        np.testing.assert_allclose(adv, t_adv.numpy(), **tolerance(case.dtype))
        np.testing.assert_allclose(ret, t_ret.numpy(), **tolerance(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_compute_gae_episode_matches_lesson(case: Case):
    rng = np.random.default_rng(case.seed)
    n = case.B * case.T
    r, v = rng.normal(0, 1, (2, n)).astype(case.dtype)
    nv = float(rng.normal())
    adv, ret = compute_gae_episode(r, v, next_value=nv, gamma=0.99, gae_lambda=0.95)
    t_adv, t_ret = torch_gae_episode(T_(r), T_(v), next_value=nv, gamma=0.99, gae_lambda=0.95)
    assert adv.dtype == case.dtype
    np.testing.assert_allclose(adv, t_adv.numpy(), **tolerance(case.dtype))
    np.testing.assert_allclose(ret, t_ret.numpy(), **tolerance(case.dtype))


@pytest.mark.parametrize("layout", ["right", "left", "both", "holes", "zero_rows"])
def test_no_padded_position_leaks_into_a_response_token(layout):
    rng = np.random.default_rng(7)
    B, T = 6, 20
    m = mask(rng, B, T, layout)
    r, v = rng.normal(size=(2, B, T))
    # garbage on padding, including values that poison any arithmetic they touch
    garbage = rng.choice([np.nan, np.inf, -np.inf, 1e30], size=(B, T))
    r_bad, v_bad = np.where(m == 1, r, garbage), np.where(m == 1, v, garbage)
    adv, ret = compute_gae(r_bad, v_bad, m, gamma=0.99, lam=0.9)
    for b in range(B):
        real = m[b] == 1
        alone = _loop_gae(r[b, real], v[b, real], 0.99, 0.9)
        np.testing.assert_allclose(adv[b, real], alone, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ret[b, real], alone + v[b, real], rtol=1e-12, atol=1e-12)
        assert np.all(adv[b, ~real] == 0) and np.all(ret[b, ~real] == 0)


def test_the_source_loop_does_leak_with_right_padding():
    # Why the lesson changed: the source's loop bootstraps the last real token from padding.
    r = np.array([[0.0, 0.0, 1.0, 0.0]])
    v = np.array([[0.1, 0.1, 0.1, 9.0]])
    m = np.array([[1.0, 1.0, 1.0, 0.0]])
    source_delta_2 = r[0, 2] + 1.0 * v[0, 3] - v[0, 2]  # uses the padded value 9.0
    adv, _ = compute_gae(r, v, m)
    assert adv[0, 2] == pytest.approx(r[0, 2] - v[0, 2])
    assert adv[0, 2] != pytest.approx(source_delta_2)


def test_lambda_zero_gives_one_step_td_error():
    rng = np.random.default_rng(1)
    r, v = rng.normal(size=(2, 4, 9))
    m = np.ones((4, 9))
    adv, _ = compute_gae(r, v, m, gamma=0.9, lam=0.0)
    v_next = np.concatenate([v[:, 1:], np.zeros((4, 1))], axis=1)
    np.testing.assert_allclose(adv, r + 0.9 * v_next - v, rtol=1e-12)


def test_gamma_lambda_one_returns_are_reward_to_go():
    rng = np.random.default_rng(2)
    r, v = rng.normal(size=(2, 3, 11))
    _, ret = compute_gae(r, v, np.ones((3, 11)), gamma=1.0, lam=1.0)
    np.testing.assert_allclose(ret, np.cumsum(r[:, ::-1], axis=1)[:, ::-1], rtol=1e-10, atol=1e-12)
    _, ret_e = compute_gae_episode(r[0], v[0], next_value=0.0, gamma=1.0, gae_lambda=1.0)
    np.testing.assert_allclose(ret_e, np.cumsum(r[0, ::-1])[::-1], rtol=1e-10, atol=1e-12)


def test_dones_cut_bootstrap_and_carry():
    r = np.array([1.0, 2.0, 3.0, 4.0])
    v = np.array([0.5, 0.5, 0.5, 0.5])
    d = np.array([0, 1, 0, 0])
    adv, _ = compute_gae_episode(r, v, next_value=10.0, gamma=0.9, gae_lambda=0.8, dones=d)
    # step 1 ends an episode: δ_1 = r_1 − V_1 and nothing from steps 2, 3 flows back into it
    assert adv[1] == pytest.approx(2.0 - 0.5)
    first = _loop_gae(r[:2], v[:2], 0.9, 0.8)
    np.testing.assert_allclose(adv[:2], first)
    # the second episode bootstraps from next_value
    second, gae = [], 0.0
    for t, nv in ((3, 10.0), (2, 0.5)):
        gae = r[t] + 0.9 * nv - v[t] + 0.72 * gae
        second.append(gae)
    np.testing.assert_allclose(adv[2:], second[::-1])


def test_s21_episode_example_is_7_005_not_6_99():
    # δ_4 = 10 + 0.99·0 − 1 = 9; δ_t = 0 + 0.99·1 − 1 = −0.01 for t < 4; Â_t = Σ (γλ)^(k−t) δ_k
    c = 0.99 * 0.95
    expected = [
        9.0 * c ** (4 - t) + sum(-0.01 * c ** (k - t) for k in range(t, 4)) for t in range(5)
    ]
    adv, _ = compute_gae_episode([0, 0, 0, 0, 10.0], [1.0] * 5, next_value=0.0)
    np.testing.assert_allclose(adv, expected, rtol=1e-12)
    # the source printed 6.99, 7.45, 7.94, 8.46, 9.0
    assert [round(a, 2) for a in adv] == [7.01, 7.46, 7.94, 8.45, 9.0]


def test_lesson_gae_example_matches_geometric_series():
    # row 0: reward 1 on the last of 5 tokens, V = 0.1, γ = 1: δ_4 = 0.9, other δ = 0
    adv, ret = compute_gae(np.array([[0, 0, 0, 0, 1.0]]), np.full((1, 5), 0.1), np.ones((1, 5)))
    np.testing.assert_allclose(adv[0], [0.9 * 0.95 ** (4 - t) for t in range(5)], rtol=1e-12)
    np.testing.assert_allclose(ret[0], adv[0] + 0.1, rtol=1e-12)


def test_rows_and_batches_without_response_tokens_are_finite_zeros():
    adv, ret = compute_gae(np.ones((2, 4)), np.ones((2, 4)), np.zeros((2, 4)))
    assert np.all(adv == 0) and np.all(ret == 0)
    adv, ret = compute_gae(np.ones((0, 4)), np.ones((0, 4)), np.ones((0, 4)))
    assert adv.shape == (0, 4)
    adv, ret = compute_gae(np.ones((2, 0)), np.ones((2, 0)), np.ones((2, 0)))
    assert adv.shape == (2, 0)


def test_gae_bad_input():
    with pytest.raises(ValueError, match=r"rewards \[2, 3\], values \[2, 4\], mask \[2, 3\]"):
        compute_gae(np.zeros((2, 3)), np.zeros((2, 4)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="rewards must be \\[B, T\\]"):
        compute_gae(np.zeros(3), np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="mask must hold only 0 and 1"):
        compute_gae(np.zeros((1, 2)), np.zeros((1, 2)), [[2, 1]])
    with pytest.raises(ValueError, match="lam must be in"):
        compute_gae(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 2)), lam=1.5)
    with pytest.raises(ValueError, match="dones must hold only 0 and 1"):
        compute_gae_episode([1.0, 2.0], [0.0, 0.0], dones=[0, 3])
    with pytest.raises(ValueError, match=r"next_value must be a single number, got shape \[1\]"):
        compute_gae_episode([1.0, 2.0], [0.0, 0.0], next_value=[1.0])


def _scan_loop(x, c):
    """y_t = x_t + c·y_{t+1} along the last axis, one step at a time."""
    y, acc = np.zeros_like(x), np.zeros(x.shape[:-1])
    for t in reversed(range(x.shape[-1])):
        acc = x[..., t] + c * acc
        y[..., t] = acc
    return y


@settings(max_examples=200, deadline=None)
@given(
    T=st.integers(1, 300),
    c=st.sampled_from([0.0, 0.5, 0.9405, 0.99, 1.0]),
    seed=st.integers(0, 2**31),
)
def test_blockwise_scan_equals_the_plain_loop(T, c, seed):
    x = np.random.default_rng(seed).normal(size=(3, T))
    np.testing.assert_allclose(reverse_discounted_sum(x, c), _scan_loop(x, c), rtol=1e-9, atol=1e-9)


def test_float32_gae_stays_float32_and_close_to_float64_at_length_2048():
    rng = np.random.default_rng(3)
    r, v = rng.normal(size=(2, 4, 2048))
    m = mask(rng, 4, 2048, "right")
    a64, _ = compute_gae(r, v, m, gamma=1.0, lam=0.95)
    a32, _ = compute_gae(r.astype(np.float32), v.astype(np.float32), m.astype(np.float32))
    assert a32.dtype == np.float32
    np.testing.assert_allclose(a32, a64, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("T", [4096, 4112, 5000, 70_001])
@pytest.mark.parametrize("c", [0.0, 0.9405, 1.0])
def test_blockwise_scan_over_many_blocks_equals_the_plain_loop(T, c):
    # past 256 blocks the sums handed between blocks come from the scan itself, recursively
    x = np.random.default_rng(T).normal(size=(2, T))
    np.testing.assert_allclose(reverse_discounted_sum(x, c), _scan_loop(x, c), rtol=1e-9, atol=1e-8)


@pytest.mark.parametrize("layout", ["fortran", "strided", "fortran mask"])
def test_memory_layout_of_the_inputs_does_not_change_the_result(layout):
    rng = np.random.default_rng(11)
    r, v = rng.normal(size=(2, 8, 40)).astype(np.float32)
    m = mask(rng, 8, 40, "right")
    want = compute_gae(r, v, m)
    F = np.asfortranarray
    args = {
        "fortran": (F(r), F(v), F(m)),
        "strided": (np.repeat(r, 2, axis=1)[:, ::2], np.repeat(v, 2, axis=0)[::2], m),
        "fortran mask": (r, v, F(m)),
    }[layout]
    for got, expected in zip(compute_gae(*args), want, strict=True):
        np.testing.assert_array_equal(got, expected)


def _torch_gae_episode_with_dones(r, v, next_value, gamma, lam, dones):
    """The s21 lesson's loop with the `dones` convention added, in PyTorch: dones[t] = 1 ends the
    episode after step t (no bootstrap from t+1, no carry of later advantages)."""
    T = len(r)
    adv = torch.zeros_like(r)
    gae = torch.zeros((), dtype=r.dtype)
    for t in reversed(range(T)):
        keep = 1.0 - dones[t]
        v_next = next_value if t == T - 1 else v[t + 1]
        delta = r[t] + gamma * keep * v_next - v[t]
        gae = delta + gamma * lam * keep * gae
        adv[t] = gae
    return adv, adv + v


@pytest.mark.parametrize("case", CASES, ids=str)
def test_compute_gae_episode_with_dones_matches_a_torch_loop(case: Case):
    rng = np.random.default_rng(case.seed)
    n = case.B * case.T
    r, v = rng.normal(0, 1, (2, n)).astype(case.dtype)
    d = (rng.random(n) < 0.2).astype(case.dtype)
    nv = float(rng.normal())
    adv, ret = compute_gae_episode(r, v, next_value=nv, gamma=0.99, gae_lambda=0.95, dones=d)
    t_adv, t_ret = _torch_gae_episode_with_dones(T_(r), T_(v), nv, 0.99, 0.95, T_(d))
    assert adv.dtype == case.dtype
    np.testing.assert_allclose(adv, t_adv.numpy(), **tolerance(case.dtype))
    np.testing.assert_allclose(ret, t_ret.numpy(), **tolerance(case.dtype))


def test_episode_lambda_zero_is_the_one_step_td_error():
    rng = np.random.default_rng(5)
    r, v = rng.normal(size=(2, 37))
    adv, _ = compute_gae_episode(r, v, next_value=0.7, gamma=0.9, gae_lambda=0.0)
    np.testing.assert_allclose(adv, r + 0.9 * np.append(v[1:], 0.7) - v, rtol=1e-12)


def test_episode_end_cuts_inf_and_nan_from_the_next_episode():
    # the step after an episode's end holds inf: nothing of it may reach the ended episode
    with np.errstate(invalid="ignore"):  # R_1 = Â_1 + V_1 = −inf + inf: NaN, and NumPy says so
        adv, _ = compute_gae_episode(
            [1.0, 2.0, 3.0], [0.0, np.inf, 0.0], gamma=0.9, dones=[1, 0, 0]
        )
    assert adv[0] == 1.0 and adv[1] == -np.inf and adv[2] == 3.0


@pytest.mark.parametrize("layout", ["right", "left", "both"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_inf_or_nan_on_a_response_token_stays_where_the_recursion_puts_it(layout, bad):
    # the blockwise products would spread 0·inf = NaN over the whole row; the plain recursion
    # puts it at the bad step and before, never after it, and never on padding
    rng = np.random.default_rng(9)
    B, T = 3, 50
    r, v = rng.normal(size=(2, B, T))
    m = mask(rng, B, T, layout)
    m[0] = 0
    m[0, 5:45] = 1  # one run of 40 tokens in row 0, the bad reward at its 20th
    r[0, 24] = bad
    adv, ret = compute_gae(r, v, m, gamma=0.99, lam=0.95)
    real = m[0] == 1
    want = _loop_gae(r[0, real], v[0, real], 0.99, 0.95)
    np.testing.assert_allclose(adv[0, real], want, rtol=1e-12)  # NaN where the loop has NaN
    assert np.all(adv[0, ~real] == 0) and np.all(ret[0, ~real] == 0)
    for b in (1, 2):  # the other rows are untouched
        row = m[b] == 1
        np.testing.assert_allclose(adv[b, row], _loop_gae(r[b, row], v[b, row], 0.99, 0.95))


# ---- reverse_discounted_sum: bad input ----------------------------------------------------------

X = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize(
    ("c", "message"),
    [
        (True, r"^c must be a single number, got True"),
        ("0.1", r"^c must be a single number, got '0\.1'"),
        (None, r"^c must be a single number, got None"),
        ([0.5], r"^c must be a single number, got shape \[1\]"),
        (float("nan"), r"^c must be in \[0, 1\], got nan"),
        (float("inf"), r"^c must be in \[0, 1\], got inf"),
        (-0.1, r"^c must be in \[0, 1\], got -0\.1"),
        (1.5, r"^c must be in \[0, 1\], got 1\.5"),
    ],
    ids=["True", "str", "None", "list", "nan", "inf", "negative", "above 1"],
)
def test_reverse_discounted_sum_refuses_a_discount_that_is_not_one_number_in_0_1(c, message):
    with pytest.raises(ValueError, match=message):
        reverse_discounted_sum(X, c)


@pytest.mark.parametrize(
    ("x", "message"),
    [
        (np.array(["1", "2"]), r"^x must hold numbers, got an array of dtype <U1"),
        (np.float64(1.0), r"^x must be \[\.\.\., T\] with a time axis, got shape \[\]"),
    ],
    ids=["strings", "0-d"],
)
def test_reverse_discounted_sum_refuses_an_x_that_is_not_numbers_along_a_time_axis(x, message):
    with pytest.raises(ValueError, match=message):
        reverse_discounted_sum(x, 0.5)


def test_reverse_discounted_sum_refuses_an_overwrite_x_that_is_not_a_bool():
    with pytest.raises(ValueError, match=r"^overwrite_x must be True or False, got 'no'"):
        reverse_discounted_sum(X, 0.5, overwrite_x="no")


@pytest.mark.parametrize("T", [3, 40])  # one block, and the blockwise scan
def test_reverse_discounted_sum_of_integers_or_a_list_is_the_float64_sum(T):
    # an integer x once set the dtype of the powers of c: 0.5**k became 0
    x = np.arange(T)
    for xs in (x, x.tolist(), x.astype(bool)):
        y = reverse_discounted_sum(xs, 0.5)
        assert y.dtype == np.float64
        np.testing.assert_allclose(y, _scan_loop(np.asarray(xs, np.float64), 0.5), rtol=1e-12)


@pytest.mark.parametrize(("gamma", "lam"), [(0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)])
def test_the_callers_discounts_at_the_ends_of_their_ranges_are_valid_c(gamma, lam):
    # compute_gae and compute_gae_episode pass γλ, REINFORCE++ passes γ: products of [0, 1]
    r = np.random.default_rng(0).normal(size=(2, 40))
    m = np.ones((2, 40))
    assert np.isfinite(compute_gae(r, r, m, gamma=gamma, lam=lam)[0]).all()
    assert np.isfinite(compute_gae_episode(r[0], r[0], gamma=gamma, gae_lambda=lam)[0]).all()
    assert np.isfinite(reinforce_pp_advantages(r, m, gamma=gamma)[0]).all()
