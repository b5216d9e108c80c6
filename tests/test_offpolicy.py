"""rl_ops_numpy.offpolicy against the lessons' PyTorch answers, plus the properties the lessons
teach: TIS trades bias for variance, the sequence level's variance grows with the length,
IcePop's band drops rather than shrinks, and the off-policy mask drops only far negative
responses. (The libraries' own code: tests/test_peers.py.)"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from rl_ops_numpy.offpolicy import off_policy_sequence_mask, rollout_is_weights

from .cases import LAYOUTS, Case, cases, mask
from .conftest import lesson_function

CASES = list(cases(60))
T_ = torch.from_numpy
THRESHOLDS = [2.0, 5.0, (0.5, 2.0), (0.8, 1.25), 1e9]

weights_torch = lesson_function("beyond/rollout_is_weights")
mask_torch = lesson_function("beyond/off_policy_sequence_mask")


def tol(dtype: type) -> dict[str, float]:
    """float64: rounding; float32: the reference sums and exponentiates in float64."""
    if dtype == np.float64:
        return {"rtol": 1e-12, "atol": 1e-12}
    return {"rtol": 1e-5, "atol": 1e-6}


def _inputs(case: Case, scale: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(train, rollout, mask)`` of ``case``: log-probs around −2, log-ratios of std ``scale``."""
    rng = np.random.default_rng(7000 + case.seed)
    rollout = rng.normal(-2.0, 1.0, (case.B, case.T))
    train = rollout + rng.normal(0.0, scale, (case.B, case.T))
    m = mask(rng, case.B, case.T, case.layout)
    return train.astype(case.dtype), rollout.astype(case.dtype), m.astype(case.dtype)


# ---- the reference against the lessons' PyTorch answers, every layout, float32 and float64 ----


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rollout_is_weights_match_the_lesson(case: Case):
    train, rollout, m = _inputs(case)
    for level in ("token", "sequence"):
        for threshold in THRESHOLDS:
            ours = rollout_is_weights(train, rollout, m, level=level, threshold=threshold)
            theirs = weights_torch(T_(train), T_(rollout), T_(m), level, threshold)
            assert ours.dtype == case.dtype and ours.shape == m.shape
            assert not theirs.requires_grad
            np.testing.assert_allclose(ours, theirs.numpy(), **tol(case.dtype),
                                       err_msg=f"{level} {threshold}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_off_policy_sequence_mask_matches_the_lesson(case: Case):
    train, sampling, m = _inputs(case, scale=0.3)
    rng = np.random.default_rng(8000 + case.seed)
    adv = rng.normal(0.0, 1.0, (case.B, 1)).astype(case.dtype)
    for delta in (0.0, 0.05, 0.2, 1.0):
        for a in (adv, adv[:, 0]):
            ours = off_policy_sequence_mask(a, train, sampling, m, delta)
            theirs = mask_torch(T_(a.copy()), T_(train), T_(sampling), T_(m), delta)
            assert ours.shape == (case.B, 1) and ours.dtype == case.dtype
            np.testing.assert_array_equal(ours, theirs.numpy(), err_msg=f"δ = {delta}")


# ---- rollout_is_weights: what the lesson teaches --------------------------------------------


def test_the_lesson_example_tis_truncates_icepop_zeroes_and_the_sequence_is_one_product():
    ratio = np.array([[0.4, 0.8, 1.25, 2.5, 8.0], [1.1, 0.9, 1.0, 1.0, 1.0]])
    rollout = np.full(ratio.shape, -1.0)
    train, m = rollout + np.log(ratio), np.array([[1.0] * 5, [1, 1, 1, 0, 0]])

    def w(level, threshold):
        return rollout_is_weights(train, rollout, m, level=level, threshold=threshold)

    np.testing.assert_allclose(w("token", 2.0), [[0.4, 0.8, 1.25, 2, 2], [1.1, 0.9, 1, 0, 0]])
    np.testing.assert_allclose(w("token", (0.5, 2.0)),
                               [[0, 0.8, 1.25, 0, 0], [1.1, 0.9, 1, 0, 0]])
    # the first response's product is 8 (the second's 0.99): truncated to 2, or out of the band
    np.testing.assert_allclose(w("sequence", 1e9)[:, 0], [8.0, 0.99])
    np.testing.assert_allclose(w("sequence", 2.0), [[2.0] * 5, [0.99] * 3 + [0, 0]])
    np.testing.assert_allclose(w("sequence", (0.5, 2.0)), [[0.0] * 5, [0.99] * 3 + [0, 0]])


def _binomial_batch(T: int) -> tuple[np.ndarray, ...]:
    """Every response of ``T`` tokens whose ratios are 1.2 or 0.8, equally likely under the
    engine: row k has k tokens at 1.2 and probability C(T, k) / 2^T (the lesson's table)."""
    k, t = np.arange(T + 1)[:, None], np.arange(T)[None, :]
    rollout = np.full((T + 1, T), math.log(0.5))
    train = np.where(t < k, math.log(0.6), math.log(0.4))
    p = np.array([math.comb(T, j) / 2**T for j in range(T + 1)])
    return train, rollout, np.ones((T + 1, T)), p


def _moments(w: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    mean = float((p * w.mean(axis=1)).sum())
    return mean, float((p * (w**2).mean(axis=1)).sum()) - mean**2


@pytest.mark.parametrize("T", [1, 10, 50, 100])
def test_the_sequence_weight_is_unbiased_with_variance_growing_as_1_04_to_the_t(T):
    train, rollout, m, p = _binomial_batch(T)
    tok = _moments(rollout_is_weights(train, rollout, m, level="token", threshold=1e9), p)
    seq = _moments(rollout_is_weights(train, rollout, m, level="sequence", threshold=1e9), p)
    assert tok == pytest.approx((1.0, 0.04))  # one ratio's variance, whatever the length
    # E[w] = 1 (unbiased), Var = E[w_t²]^T − 1 = 1.04^T − 1
    assert seq == pytest.approx((1.0, 1.04**T - 1), rel=1e-9)


def test_tis_at_the_sequence_level_gives_up_mean_for_variance_as_the_page_says():
    # the lesson prints these: T = 10 and 100, TIS at 2
    for T, mean, var, below in [(10, 0.9421, 0.2748, 0.623), (100, 0.4299, 0.3837, 0.864)]:
        train, rollout, m, p = _binomial_batch(T)
        w = rollout_is_weights(train, rollout, m, level="sequence", threshold=2.0)
        got = _moments(w, p)
        assert got == pytest.approx((mean, var), abs=5e-5)
        assert got[1] <= 4  # a weight in [0, C] has variance at most C²
        raw = rollout_is_weights(train, rollout, m, level="sequence", threshold=1e9)[:, 0]
        assert p[raw < 1].sum() == pytest.approx(below, abs=5e-4)


def test_truncation_bias_a_truncated_weight_never_exceeds_the_untruncated_one():
    rng = np.random.default_rng(1)
    train, rollout = rng.normal(-2, 1, (2, 50, 9))
    m = np.ones((50, 9))
    for level in ("token", "sequence"):
        raw = rollout_is_weights(train, rollout, m, level=level, threshold=1e9)
        tis = rollout_is_weights(train, rollout, m, level=level, threshold=2.0)
        assert np.all(tis <= raw) and np.all(tis <= 2.0) and tis.mean() < raw.mean()
        np.testing.assert_array_equal(tis, np.minimum(raw, 2.0))


def test_icepop_keeps_both_ends_of_the_band_and_drops_what_is_outside():
    ratio = np.array([[0.5, 0.49, 2.0, 2.01, 1.0]])
    rollout = np.zeros_like(ratio)
    # log(0.5) and log(2) are exact enough that exp gives 0.5 and 2.0 back in float64
    w = rollout_is_weights(np.log(ratio), rollout, np.ones_like(ratio), threshold=(0.5, 2.0))
    np.testing.assert_allclose(w, [[0.5, 0.0, 2.0, 0.0, 1.0]])


def test_the_sequence_level_sums_log_ratios_over_response_tokens_only_whatever_the_layout():
    rng = np.random.default_rng(3)
    for layout in LAYOUTS:
        m = mask(rng, 5, 7, layout)
        d = rng.normal(0, 0.4, (5, 7))
        rollout = np.full((5, 7), -1.5)
        w = rollout_is_weights(rollout + d, rollout, m, level="sequence", threshold=1e9)
        want = np.exp(np.clip((d * m).sum(axis=1, keepdims=True), -20, 20)) * m
        np.testing.assert_allclose(w, want, rtol=1e-12, err_msg=layout)


def test_the_log_weight_is_clamped_to_plus_minus_20_as_verl_does():
    d = np.array([[30.0, -30.0, 5.0]])
    w = rollout_is_weights(d, np.zeros_like(d), np.ones_like(d), threshold=1e12)
    np.testing.assert_allclose(w, [[math.exp(20), math.exp(-20), math.exp(5)]])
    seq = rollout_is_weights(d + 20, np.zeros_like(d), np.ones_like(d), level="sequence",
                             threshold=1e12)
    np.testing.assert_allclose(seq, math.exp(20))


def test_padding_gets_zero_whatever_it_holds_and_quietly():
    d = np.array([[0.1, np.nan, np.inf, -np.inf], [0.2, 0.3, np.nan, 40.0]])
    m = np.array([[1.0, 0, 0, 0], [1, 1, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for level in ("token", "sequence"):
            for threshold in (2.0, (0.5, 2.0)):
                w = rollout_is_weights(d, np.zeros_like(d), m, level=level, threshold=threshold)
                assert np.isfinite(w).all() and not w[m == 0].any()
    # an empty batch: zeros (verl raises)
    assert not rollout_is_weights(np.ones((2, 3)), np.zeros((2, 3)), np.zeros((2, 3))).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_nan_log_prob_on_a_response_token_gives_nan_under_tis_and_0_under_icepop_as_the_lesson(
        dtype):
    # row 0: NaN on its second response token; row 1: NaN on padding only; row 2: clean
    train = np.array([[-1.0, np.nan, -2.0, -1.0], [-1.5, -1.0, -3.0, np.nan],
                      [-0.5, -1.0, -2.5, -1.0]], dtype)
    rollout = np.full((3, 4), -1.2, dtype)
    m = np.array([[1.0, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype)
    clean = np.where(np.isnan(train), -1.0, train)  # the same log-probs without the NaNs
    for level in ("token", "sequence"):
        hit = np.zeros((3, 4), bool)
        hit[0, 1] = True
        if level == "sequence":
            hit[0] = m[0] != 0  # every response token of its row
        for threshold in (2.0, (0.5, 2.0)):
            w = rollout_is_weights(train, rollout, m, level=level, threshold=threshold)
            lesson = weights_torch(T_(train), T_(rollout), T_(m), level, threshold).numpy()
            np.testing.assert_allclose(w, lesson, **tol(dtype))  # NaN where the lesson has NaN
            if isinstance(threshold, tuple):
                assert np.all(w[hit] == 0) and not np.isnan(w).any()  # NaN lies in no band
            else:
                assert np.isnan(w[hit]).all() and np.isfinite(w[~hit]).all()  # min(NaN, C)
            assert not w[m == 0].any()
            # every other weight is what it is without the NaNs
            expected = rollout_is_weights(clean, rollout, m, level=level, threshold=threshold)
            np.testing.assert_array_equal(w[~hit], expected[~hit])


def test_a_nan_advantage_is_not_at_least_0_so_the_mean_kl_decides():
    lp = np.full((2, 3), -1.0)
    sampling = np.array([[-1.0, -1.0, -1.0], [0.0, 0.0, 0.0]])  # mean KL 0 and 1
    got = off_policy_sequence_mask(np.full(2, np.nan), lp, sampling, np.ones((2, 3)), 0.5)
    np.testing.assert_array_equal(got, [[1], [0]])


def test_float32_in_float32_out_and_no_aliasing():
    train = np.full((2, 3), -1.0, np.float32)
    w = rollout_is_weights(train, train.copy(), np.ones((2, 3)))
    assert w.dtype == np.float32 and np.all(w == 1) and w is not train


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": "seq"}, "level must be 'token' or 'sequence'"),
        ({"level": None}, "level must be"),
        ({"threshold": 0.0}, r"threshold must be a finite number > 0"),
        ({"threshold": -2.0}, r"threshold must be a finite number > 0"),
        ({"threshold": math.inf}, r"threshold must be a finite number > 0"),
        ({"threshold": "0.5_2.0"}, "threshold must be a single number"),
        ({"threshold": (2.0, 0.5)}, r"low <= high"),
        ({"threshold": (0.0, 2.0)}, r"threshold\[0\] \(low\) must be a finite number > 0"),
        ({"threshold": (0.5, 1.0, 2.0)}, "got 3 values"),
        ({"threshold": True}, "threshold must be a single number"),
    ],
)
def test_rollout_is_weights_bad_options_say_what_is_wrong(kwargs, message):
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match=message):
        rollout_is_weights(x, x, np.ones((2, 3)), **kwargs)


def test_rollout_is_weights_bad_shapes_and_masks_name_the_arguments():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"train_logprobs \[2, 3\], rollout_logprobs \[2, 4\]"):
        rollout_is_weights(x, np.zeros((2, 4)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"train_logprobs must be \[B, T\], got shape \[6\]"):
        rollout_is_weights(np.zeros(6), np.zeros(6), np.ones(6))
    with pytest.raises(ValueError, match=r"mask must hold only 0 and 1, found 0\.5"):
        rollout_is_weights(x, x, np.full((2, 3), 0.5))


# ---- off_policy_sequence_mask: the rule ------------------------------------------------------


def test_the_lesson_example_drops_only_the_far_negative_response():
    sampling = np.full((5, 4), -1.0)
    d = np.array([[0.5] * 4, [0.05] * 4, [0.6, 0.4, 0.5, 9.0], [0.5] * 4, [-0.3] * 4])
    m = np.array([[1.0] * 4, [1.0] * 4, [1, 1, 1, 0], [1.0] * 4, [1.0] * 4])
    adv = np.array([[1.0], [-1], [-1], [0], [-1]])
    for delta, keep in [(0.0, [1, 0, 0, 1, 1]), (0.1, [1, 1, 0, 1, 1]), (0.6, [1] * 5)]:
        got = off_policy_sequence_mask(adv, sampling - d, sampling, m, delta)
        np.testing.assert_array_equal(got[:, 0], keep, err_msg=f"δ = {delta}")
    # a sum over tokens would drop the close response: 4 × 0.05 = 0.2 > 0.1
    assert (d[1] * m[1]).sum() > 0.1 >= (d[1] * m[1]).sum() / m[1].sum()


def test_only_negative_advantages_with_mean_kl_above_delta_are_dropped():
    rng = np.random.default_rng(11)
    B, T = 400, 6
    sampling = rng.normal(-2, 1, (B, T))
    d = rng.normal(0, 0.3, (B, 1)) + rng.normal(0, 0.2, (B, T))
    m = mask(rng, B, T, "holes")
    adv = rng.normal(0, 1, B)
    adv[:20] = 0.0
    delta = 0.1
    keep = off_policy_sequence_mask(adv, sampling - d, sampling, m, delta)[:, 0]
    kl = (d * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1)
    np.testing.assert_array_equal(keep == 0, (adv < 0) & (kl > delta))
    assert (keep == 0).any() and (keep[adv < 0] == 1).any()


def test_the_mean_kl_does_not_depend_on_the_length_and_equality_keeps():
    sampling = np.full((2, 8), -1.0)
    m = np.array([[1.0] * 2 + [0] * 6, [1.0] * 8])  # 2 tokens and 8 tokens
    adv = np.array([-1.0, -1.0])
    lp = sampling - 0.25  # the same per-token KL: 0.25
    np.testing.assert_array_equal(off_policy_sequence_mask(adv, lp, sampling, m, 0.25), [[1], [1]])
    np.testing.assert_array_equal(off_policy_sequence_mask(adv, lp, sampling, m, 0.2), [[0], [0]])


def test_an_empty_row_has_mean_kl_zero_and_padding_and_nan_give_no_evidence():
    sampling = np.array([[-1.0, -1, np.nan], [-1, -1, -1], [-1, np.inf, -1]])
    lp = np.array([[-1.0, -1, 5.0], [-1, -1, -1], [-3, -1, -1]])
    m = np.array([[1.0, 1, 0], [0, 0, 0], [1, 1, 1]])
    adv = np.full(3, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = off_policy_sequence_mask(adv, lp, sampling, m, 0.0)
    # row 0: padding ignored, mean 0 ≤ 0; row 1: empty, mean 0; row 2: an infinite KL drops it
    np.testing.assert_array_equal(got, [[1], [1], [0]])
    # a NaN on a response token counts as 0 (TRL: a token vLLM could not score)
    sampling[0, 2], m[0, 2] = np.nan, 1
    np.testing.assert_array_equal(off_policy_sequence_mask(adv, lp, sampling, m, 0.0)[0], [1])


def test_off_policy_mask_keeps_the_data_dtype_and_takes_advantages_b_or_b1():
    lp = np.zeros((3, 2), np.float32)
    a = off_policy_sequence_mask(np.zeros(3, np.float32), lp, lp, np.ones((3, 2)), 0.5)
    b = off_policy_sequence_mask(np.zeros((3, 1), np.float32), lp, lp, np.ones((3, 2)), 0.5)
    assert a.dtype == np.float32 and a.shape == b.shape == (3, 1)


def test_off_policy_mask_bad_input_names_the_arguments():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"advantages \[3\] must be \[B\] or \[B, 1\]"):
        off_policy_sequence_mask(np.zeros(3), x, x, np.ones((2, 3)), 0.1)
    with pytest.raises(ValueError, match=r"advantages \[2, 3\] must be \[B\] or \[B, 1\]"):
        off_policy_sequence_mask(np.zeros((2, 3)), x, x, np.ones((2, 3)), 0.1)
    with pytest.raises(ValueError, match=r"logprobs \[2, 3\], sampling_logprobs \[3, 3\]"):
        off_policy_sequence_mask(np.zeros(2), x, np.zeros((3, 3)), np.ones((2, 3)), 0.1)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        off_policy_sequence_mask(np.zeros(2), x, x, np.ones((2, 3)), math.nan)
    with pytest.raises(ValueError, match="threshold must be a single number"):
        off_policy_sequence_mask(np.zeros(2), x, x, np.ones((2, 3)), None)
    with pytest.raises(ValueError, match="mask must hold only 0 and 1"):
        off_policy_sequence_mask(np.zeros(2), x, x, np.full((2, 3), 2.0), 0.1)
