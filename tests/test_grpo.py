"""rl_ops_numpy.grpo against the GRPO lessons' PyTorch answers (and plain PyTorch formulas for
what has no exercise), plus the properties GRPO relies on."""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from rl_ops_numpy.grpo import (
    LOSS_AGG_MODES,
    aggregate_loss,
    group_advantages,
    grpo_policy_loss,
    reinforce_pp_advantages,
    reward_model_loss,
    rloo_advantages,
)
from rl_ops_numpy.ppo import policy_surrogate_loss

from .cases import LAYOUTS, Case, cases, mask, tolerance
from .conftest import ROOT, lesson_function

CASES = list(cases())
T_ = torch.from_numpy


def tol(dtype: type) -> dict[str, float]:
    """float64: agreement to rounding; float32: rtol 1e-5 (the reference takes group and batch
    statistics in float64, PyTorch in float32)."""
    return tolerance(dtype) if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}


# ---- the PyTorch versions: the lessons' answers (docs/grpo/*.py), and straightforward formulas
# for what has no exercise

group_advantages_torch = lesson_function("grpo/group_advantages")
rloo_torch = lesson_function("grpo/rloo_advantages")
aggregate_torch = lesson_function("grpo/aggregate_loss")
reward_model_loss_torch = lesson_function("grpo/reward_model_loss")



def torch_masked_whiten(values, mask, shift_mean=True):
    n = mask.sum()
    if n == 0:
        return torch.zeros_like(values)
    mean = (values * mask).sum() / n
    var = ((values - mean) ** 2 * mask).sum() / (n - 1) if n > 1 else torch.zeros(())
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened = whitened + mean
    return whitened * mask


def torch_reinforce_pp(rewards, mask, gamma):
    B, T = rewards.shape
    returns = torch.zeros_like(rewards)
    running = torch.zeros(B, dtype=rewards.dtype)
    for t in reversed(range(T)):
        m = mask[:, t]
        # a padded position passes the running return on unchanged
        running = m * (rewards[:, t] + gamma * running) + (1 - m) * running
        returns[:, t] = running * m
    return torch_masked_whiten(returns, mask), returns


def torch_grpo_loss(new, old, adv, mask, ref=None, clip_low=0.2, clip_high=0.2, beta=0.0,
                    mode="token-mean"):
    if adv.dim() == 1:
        adv = adv.unsqueeze(1)
    coef_1 = torch.exp(new - old)
    coef_2 = torch.clamp(coef_1, 1 - clip_low, 1 + clip_high)
    per_token = -torch.min(coef_1 * adv, coef_2 * adv)
    if ref is not None and beta != 0:
        per_token = per_token + beta * (torch.exp(ref - new) - (ref - new) - 1)
    return aggregate_torch(per_token, mask, mode)


# ---- transcriptions of the libraries, for the documented agreements and differences ----------


def verl_masked_whiten(values, mask):
    """verl/utils/torch_functional.py masked_mean / masked_var / masked_whiten."""
    mean = (values * mask).sum() / mask.sum()
    var = (((values - mean) ** 2) * mask).sum() / mask.sum()
    var = var * (mask.sum() / (mask.sum() - 1))
    return (values - mean) * torch.rsqrt(var + 1e-8)


def verl_reinforce_pp(token_level_rewards, response_mask, gamma):
    """verl compute_reinforce_plus_plus_outcome_advantage: reset the carry after EOS."""
    returns = torch.zeros_like(token_level_rewards)
    running_return = 0
    for t in reversed(range(token_level_rewards.shape[1])):
        running_return = token_level_rewards[:, t] + gamma * running_return
        returns[:, t] = running_return
        running_return = running_return * response_mask[:, t]
    advantages = verl_masked_whiten(returns, response_mask) * response_mask
    return advantages, returns


def trl_loss(per_token_loss, completion_mask, loss_type, max_completion_length):
    """trl/trainer/grpo_trainer.py GRPOTrainer._compute_loss, the aggregation branches."""
    if loss_type == "grpo":
        return (
            (per_token_loss * completion_mask).sum(-1) / completion_mask.sum(-1).clamp(min=1.0)
        ).mean()
    if loss_type == "bnpo":
        return (per_token_loss * completion_mask).sum() / completion_mask.sum().clamp(min=1.0)
    assert loss_type == "dr_grpo"
    return (per_token_loss * completion_mask).sum() / (
        per_token_loss.size(0) * max_completion_length
    )


# ---- inputs ----------------------------------------------------------------------------------


def _grouped_scores(case: Case) -> tuple[np.ndarray, int]:
    """Scores on a 1/8 grid (so that a group of equal scores has an exact float mean, and ties
    happen), ``case.B`` groups of ``case.T + 1`` responses."""
    rng = np.random.default_rng(3000 + case.seed)
    G = case.T + 1  # 2 … 13
    scores = rng.integers(-16, 17, case.B * G) / 8
    return scores.astype(case.dtype), G


def _token_inputs(case: Case, k: int, scale: float = 0.5):
    rng = np.random.default_rng(4000 + case.seed)
    arrays = [rng.normal(0, scale, (case.B, case.T)).astype(case.dtype) for _ in range(k)]
    return arrays, mask(rng, case.B, case.T, case.layout).astype(case.dtype)


# ---- cross-checks against PyTorch, every mask layout, float32 and float64 --------------------


@pytest.mark.parametrize("case", CASES, ids=str)
def test_group_advantages_match_torch(case: Case):
    scores, G = _grouped_scores(case)
    for scale_by_std in (True, False):
        for eps in (1e-6, 1e-4):
            ours = group_advantages(scores, G, scale_by_std=scale_by_std, eps=eps)
            ref = group_advantages_torch(T_(scores), G, scale_by_std, eps).numpy()
            assert ours.dtype == case.dtype and ours.shape == scores.shape
            np.testing.assert_allclose(ours, ref, **tol(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rloo_advantages_match_torch(case: Case):
    scores, G = _grouped_scores(case)
    ours = rloo_advantages(scores, G)
    assert ours.dtype == case.dtype and ours.shape == scores.shape
    np.testing.assert_allclose(ours, rloo_torch(T_(scores), G).numpy(), **tol(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reinforce_pp_matches_torch(case: Case):
    (r,), m = _token_inputs(case, 1, scale=1.0)
    for gamma in (1.0, 0.9):
        adv, ret = reinforce_pp_advantages(r, m, gamma=gamma)
        t_adv, t_ret = torch_reinforce_pp(T_(r), T_(m), gamma)
        assert adv.dtype == ret.dtype == case.dtype and adv.shape == ret.shape == r.shape
        np.testing.assert_allclose(ret, t_ret.numpy(), **tol(case.dtype))
        np.testing.assert_allclose(adv, t_adv.numpy(), **tol(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_aggregate_loss_matches_torch(case: Case):
    (loss,), m = _token_inputs(case, 1, scale=1.0)
    for mode in LOSS_AGG_MODES:
        ours = aggregate_loss(loss, m, mode)
        assert isinstance(ours, float)
        ref = aggregate_torch(T_(loss), T_(m), mode).item()
        np.testing.assert_allclose(ours, ref, **tol(case.dtype), err_msg=mode)
    ours = aggregate_loss(loss, m, "seq-mean-token-sum-norm", horizon=64)
    ref = aggregate_torch(T_(loss), T_(m), "seq-mean-token-sum-norm", horizon=64).item()
    np.testing.assert_allclose(ours, ref, **tol(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_grpo_policy_loss_matches_torch(case: Case):
    (new, old, ref, adv_tok), m = _token_inputs(case, 4)
    adv_seq = adv_tok[:, 0].copy()  # [B]
    configs = [
        {"clip_low": 0.2, "clip_high": 0.2, "beta": 0.0},
        {"clip_low": 0.2, "clip_high": 0.28, "beta": 0.04},
        {"clip_low": 0.1, "clip_high": 0.3, "beta": 0.5},
    ]
    for adv in (adv_seq, adv_tok):
        for cfg in configs:
            for mode in LOSS_AGG_MODES:
                ours = grpo_policy_loss(new, old, adv, m, ref, loss_agg_mode=mode, **cfg)
                theirs = torch_grpo_loss(
                    T_(new), T_(old), T_(adv), T_(m), T_(ref), mode=mode, **cfg
                ).item()
                assert isinstance(ours, float)
                np.testing.assert_allclose(ours, theirs, **tol(case.dtype), err_msg=mode)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reward_model_loss_matches_torch(case: Case):
    rng = np.random.default_rng(5000 + case.seed)
    n = case.B * case.T
    chosen, rejected, margin = rng.normal(0, 3, (3, n)).astype(case.dtype)
    ours = reward_model_loss(chosen, rejected)
    ref = reward_model_loss_torch(T_(chosen), T_(rejected)).item()
    np.testing.assert_allclose(ours, ref, **tol(case.dtype))
    ours = reward_model_loss(chosen, rejected, margin)
    ref = reward_model_loss_torch(T_(chosen), T_(rejected), T_(margin)).item()
    np.testing.assert_allclose(ours, ref, **tol(case.dtype))
    ours = reward_model_loss(chosen, rejected, 0.5)
    ref = reward_model_loss_torch(T_(chosen), T_(rejected), 0.5).item()
    np.testing.assert_allclose(ours, ref, **tol(case.dtype))


# ---- group advantages: the properties ---------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("value", [0.1, 0.7, 3.3, 1000.1, -42.0])
@pytest.mark.parametrize("G", [2, 3, 7, 16])
def test_a_group_of_equal_scores_has_advantage_zero(dtype, value, G):
    scores = np.concatenate([np.full(G, value), np.arange(G, dtype=float)]).astype(dtype)
    for scale_by_std in (True, False):
        adv = group_advantages(scores, G, scale_by_std=scale_by_std)
        assert adv.dtype == dtype
        assert np.all(adv[:G] == 0)
        assert np.all(np.isfinite(adv)) and np.any(adv[G:] != 0)
    assert np.all(rloo_advantages(scores, G)[:G] == 0)
    assert np.all(group_advantages(scores, G, eps=0.0)[:G] == 0)  # no 0/0 either


def test_the_naive_formula_is_far_from_zero_on_an_equal_float32_group():
    # why the reference zeroes equal groups explicitly: the mean of seven float32 1000.1 is one
    # ulp off, so (s − mean) / (std + ε) divides rounding noise by noise
    s = torch.full((7,), 1000.1, dtype=torch.float32)
    naive = (s - s.mean()) / (s.std() + 1e-6)  # the formula without the lesson's mask
    assert torch.all(naive.abs() > 0.5)
    # what the GRPO page says of it: std near 7e-5 instead of 0, advantages near −0.9
    assert 1e-5 < s.std().item() < 1e-4
    assert torch.all((naive + 0.9).abs() < 0.1)
    assert np.all(group_advantages(s.numpy(), 7) == 0)


grid = st.integers(-40, 40).map(lambda k: k / 8)


@st.composite
def grouped(draw):
    G = draw(st.integers(2, 9))
    groups = draw(st.integers(1, 5))
    scores = draw(st.lists(grid, min_size=G * groups, max_size=G * groups))
    return np.array(scores), G


@given(grouped())
def test_without_std_the_advantage_is_the_score_minus_its_group_mean(sg):
    scores, G = sg
    means = [sum(scores[i : i + G]) / G for i in range(0, len(scores), G)]
    expected = scores - np.repeat(means, G)
    np.testing.assert_allclose(
        group_advantages(scores, G, scale_by_std=False), expected, rtol=1e-12, atol=1e-12
    )


@given(grouped())
def test_rloo_is_the_dr_grpo_advantage_times_g_over_g_minus_1(sg):
    scores, G = sg
    expected = G / (G - 1) * group_advantages(scores, G, scale_by_std=False)
    np.testing.assert_allclose(rloo_advantages(scores, G), expected, rtol=1e-12, atol=1e-12)


@given(grouped())
def test_rloo_subtracts_the_mean_of_the_other_responses(sg):
    scores, G = sg
    adv = rloo_advantages(scores, G)
    for i, s in enumerate(scores):
        start = i - i % G
        others = [scores[j] for j in range(start, start + G) if j != i]
        assert adv[i] == pytest.approx(s - sum(others) / len(others), abs=1e-12)


@given(grouped(), st.booleans())
def test_group_advantages_sum_to_zero_in_every_group(sg, scale_by_std):
    scores, G = sg
    adv = group_advantages(scores, G, scale_by_std=scale_by_std).reshape(-1, G)
    np.testing.assert_allclose(adv.sum(axis=1), 0, atol=1e-9)
    np.testing.assert_allclose(rloo_advantages(scores, G).reshape(-1, G).sum(axis=1), 0,
                               atol=1e-9)


@given(grouped())
def test_scaled_group_advantages_have_unit_unbiased_std(sg):
    scores, G = sg
    adv = group_advantages(scores, G, eps=0.0).reshape(-1, G)
    varied = scores.reshape(-1, G).std(axis=1) > 0
    np.testing.assert_allclose(adv[varied].std(axis=1, ddof=1), 1.0, rtol=1e-9)


def test_group_advantages_are_per_group_and_in_order():
    # two prompts: the first group's scores must not leak into the second's statistics
    a = group_advantages([1.0, 0.0, 0.0, 10.0, 20.0, 30.0], 3, scale_by_std=False)
    np.testing.assert_allclose(a, [2 / 3, -1 / 3, -1 / 3, -10.0, 0.0, 10.0], atol=1e-12)
    # unbiased std of (1, 0, 0) is sqrt(1/3); of (10, 20, 30) it is 10
    b = group_advantages([1.0, 0.0, 0.0, 10.0, 20.0, 30.0], 3, eps=0.0)
    np.testing.assert_allclose(b, [*(np.array([2, -1, -1]) / 3 / math.sqrt(1 / 3)), -1, 0, 1],
                               atol=1e-12)


def test_group_size_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"group_size must be at least 2, got 1"):
        group_advantages([1.0, 2.0, 3.0], 1)
    with pytest.raises(ValueError, match=r"group_size must be at least 2, got 1"):
        rloo_advantages([1.0, 2.0, 3.0], 1)
    with pytest.raises(ValueError, match=r"N = 7 responses.*not divisible by group_size = 3"):
        group_advantages(np.arange(7.0), 3)
    with pytest.raises(ValueError, match=r"N = 5 responses.*not divisible by group_size = 2"):
        rloo_advantages(np.arange(5.0), 2)
    for bad in (2.0, True, "4", None):
        with pytest.raises(ValueError, match="group_size must be an integer"):
            group_advantages(np.arange(4.0), bad)
    with pytest.raises(ValueError, match=r"scores must be \[N\], got shape \[2, 3\]"):
        group_advantages(np.zeros((2, 3)), 3)
    with pytest.raises(ValueError, match="eps must be a finite number >= 0"):
        group_advantages(np.arange(4.0), 2, eps=-1e-6)
    assert group_advantages(np.arange(4.0), np.int64(2)).shape == (4,)


# ---- REINFORCE++ ----------------------------------------------------------


def test_reinforce_pp_returns_discount_by_response_tokens_not_positions():
    # row 0 has a hole: the reward after it still reaches the first token, discounted once
    r = np.array([[0.0, 7.0, 7.0, 1.0], [0.5, 0.0, 2.0, 9.0]])
    m = np.array([[1, 0, 0, 1], [1, 1, 1, 0]])
    gamma = 0.5
    _, ret = reinforce_pp_advantages(r, m, gamma=gamma)
    expected = np.zeros_like(r)
    for b in range(2):
        tokens = [t for t in range(4) if m[b, t]]
        for i, t in enumerate(tokens):
            expected[b, t] = sum(gamma**k * r[b, u] for k, u in enumerate(tokens[i:]))
    np.testing.assert_allclose(ret, expected, atol=1e-12)
    assert ret[0, 0] == pytest.approx(0.5) and ret[1, 0] == pytest.approx(0.5 + 0 + 0.25 * 2)


@pytest.mark.parametrize("layout", ["full", "right", "left", "both"])
def test_reinforce_pp_equals_verl_on_rows_of_one_run_whatever_padding_holds(layout):
    rng = np.random.default_rng(21)
    B, T = 6, 10
    m = mask(rng, B, T, layout)
    r = rng.normal(0, 1, (B, T))  # padding holds nonzero rewards too
    for gamma in (1.0, 0.8):
        adv, ret = reinforce_pp_advantages(r, m, gamma=gamma)
        v_adv, v_ret = verl_reinforce_pp(T_(r), T_(m), gamma)
        real = m == 1
        np.testing.assert_allclose(ret[real], v_ret.numpy()[real], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(adv, v_adv.numpy(), rtol=1e-12, atol=1e-12)


def test_reinforce_pp_differs_from_verl_with_holes_and_on_left_padding():
    r = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 2.0]])
    m = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]])
    _, ret = reinforce_pp_advantages(r, m)
    _, v_ret = verl_reinforce_pp(T_(r), T_(m), 1.0)
    assert ret[0, 0] == 1.0 and v_ret[0, 0] == 0.0  # verl's reset cuts the carry at the hole
    assert ret[1, 0] == 0.0 and v_ret[1, 0] == 2.0  # verl's returns are not masked


def test_reinforce_pp_ignores_non_finite_padding_and_tiny_batches():
    r = np.array([[1.0, np.nan, 2.0], [np.inf, 3.0, -np.inf]])
    m = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        adv, ret = reinforce_pp_advantages(r, m)
    assert np.all(np.isfinite(adv)) and np.all(np.isfinite(ret))
    np.testing.assert_allclose(ret, [[3.0, 0, 2.0], [0, 3.0, 0]])
    one = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    adv, ret = reinforce_pp_advantages(r, one)
    assert np.all(adv == 0) and ret[0, 2] == 2.0
    adv, ret = reinforce_pp_advantages(r, np.zeros((2, 3)))
    assert np.all(adv == 0) and np.all(ret == 0)


# ---- loss aggregation --------------------------------------------------------------------------


def test_aggregation_modes_on_a_small_example():
    rows = [[1.0, 2.0, 3.0], [4.0], [], [5.0, 6.0]]  # row 2 has no token
    T = 5
    loss = np.full((len(rows), T), 100.0)  # padding holds 100: must not count
    m = np.zeros((len(rows), T))
    for b, row in enumerate(rows):
        loss[b, : len(row)] = row
        m[b, : len(row)] = 1
    tokens = [x for row in rows for x in row]
    nonempty = [row for row in rows if row]
    expected = {
        "token-mean": sum(tokens) / len(tokens),
        "seq-mean-token-mean": sum(sum(r) / len(r) for r in nonempty) / len(nonempty),
        "seq-mean-token-sum": sum(sum(r) for r in nonempty) / len(nonempty),
        "seq-mean-token-sum-norm": sum(sum(r) for r in nonempty) / len(nonempty) / T,
    }
    for mode, value in expected.items():
        assert aggregate_loss(loss, m, mode) == pytest.approx(value, rel=1e-14), mode
    assert aggregate_loss(loss, m, "seq-mean-token-sum-norm", horizon=16) == pytest.approx(
        expected["seq-mean-token-sum"] / 16, rel=1e-14
    )
    assert len(set(expected.values())) == 4  # the example tells the four modes apart


def test_length_bias_token_mean_vs_sequence_mean():
    # one short (2 tokens) and one long (6 tokens) response, the same loss on every token
    m = np.zeros((2, 6))
    m[0, :2] = 1
    m[1, :6] = 1

    def weight(mode, b, t):
        one_hot = np.zeros((2, 6))
        one_hot[b, t] = 1.0
        return aggregate_loss(one_hot, m, mode)

    # token-mean: every token weighs 1 / 8
    assert weight("token-mean", 0, 0) == weight("token-mean", 1, 0) == pytest.approx(1 / 8)
    # seq-mean-token-mean: a short response's token weighs 1/(2·2), a long one's 1/(2·6)
    short, long_ = weight("seq-mean-token-mean", 0, 0), weight("seq-mean-token-mean", 1, 0)
    assert short == pytest.approx(1 / 4) and long_ == pytest.approx(1 / 12)
    assert short == pytest.approx(3 * long_)
    # token sums: every token weighs the same again, and so does the norm mode
    assert weight("seq-mean-token-sum", 0, 0) == weight("seq-mean-token-sum", 1, 5)
    assert weight("seq-mean-token-sum-norm", 0, 1) == pytest.approx(1 / (2 * 6))
    # a right short answer (loss −1 per token) and a wrong long one (+1 per token):
    # per response they cancel; per token the long wrong answer dominates
    loss = np.where(np.arange(2)[:, None] == 0, -1.0, 1.0) * m
    assert aggregate_loss(loss, m, "seq-mean-token-mean") == pytest.approx(0.0)
    assert aggregate_loss(loss, m, "token-mean") == pytest.approx((-2 + 6) / 8)


def test_trl_loss_types_are_these_modes_when_every_row_has_a_token():
    rng = np.random.default_rng(31)
    loss = rng.normal(size=(5, 8))
    m = mask(rng, 5, 8, "right")  # every row has at least one token
    t_loss, t_m = T_(loss), T_(m)
    pairs = [("bnpo", "token-mean", None), ("grpo", "seq-mean-token-mean", None),
             ("dr_grpo", "seq-mean-token-sum-norm", 32)]
    for loss_type, mode, horizon in pairs:
        theirs = trl_loss(t_loss, t_m, loss_type, max_completion_length=32).item()
        assert aggregate_loss(loss, m, mode, horizon=horizon) == pytest.approx(theirs, rel=1e-12)
    # with an empty row TRL's "grpo" still counts it (as 0); here it is left out
    m[2] = 0
    theirs = trl_loss(t_loss, T_(m), "grpo", 32).item()
    ours = aggregate_loss(loss, m, "seq-mean-token-mean")
    assert ours == pytest.approx(theirs * 5 / 4, rel=1e-12)


def test_aggregate_loss_ignores_non_finite_padding_and_empty_batches():
    loss = np.array([[1.0, np.nan], [np.inf, 2.0]])
    m = np.array([[1.0, 0.0], [0.0, 1.0]])
    for mode in LOSS_AGG_MODES:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert math.isfinite(aggregate_loss(loss, m, mode))
        assert aggregate_loss(loss, np.zeros((2, 2)), mode) == 0.0
        assert aggregate_loss(np.zeros((0, 3)), np.zeros((0, 3)), mode) == 0.0


def test_aggregate_loss_bad_input():
    z = np.zeros((2, 3))
    with pytest.raises(ValueError) as err:
        aggregate_loss(z, z, "sum")
    for mode in LOSS_AGG_MODES:
        assert repr(mode) in str(err.value)
    assert "'sum'" in str(err.value)
    with pytest.raises(ValueError, match=r"horizon only applies to mode 'seq-mean-token-sum-norm'"):
        aggregate_loss(z, z, "token-mean", horizon=10)
    with pytest.raises(ValueError, match="horizon must be a finite number > 0"):
        aggregate_loss(z, z, "seq-mean-token-sum-norm", horizon=0)
    with pytest.raises(ValueError, match=r"loss_mat \[2, 3\], mask \[2, 4\]"):
        aggregate_loss(z, np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"loss_mat must be \[B, T\]"):
        aggregate_loss(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"mask must hold only 0 and 1, found 2"):
        aggregate_loss(z, z + 2)


# ---- the GRPO policy loss ----------------------------------------------------------------------


def _one_token(ratio, adv, **kw):
    return grpo_policy_loss([[math.log(ratio)]], [[0.0]], [adv], [[1.0]], **kw)


def test_clip_higher_lets_a_positive_advantage_ratio_reach_1_plus_clip_high():
    for clip_high in (0.2, 0.28, 0.5):
        # ρ = 1.6 is above every ceiling: the gain is capped at (1 + clip_high)·Â
        assert _one_token(1.6, 2.0, clip_low=0.2, clip_high=clip_high) == pytest.approx(
            -(1 + clip_high) * 2.0, rel=1e-12
        )
    # ρ = 1.25 is inside DAPO's range but clipped by the symmetric one
    assert _one_token(1.25, 1.0, clip_low=0.2, clip_high=0.28) == pytest.approx(-1.25)
    assert _one_token(1.25, 1.0, clip_low=0.2, clip_high=0.2) == pytest.approx(-1.2)
    # a negative advantage meets the floor 1 − clip_low, whatever clip_high is
    for clip_high in (0.2, 0.28):
        assert _one_token(0.5, -1.0, clip_low=0.2, clip_high=clip_high) == pytest.approx(0.8)
    assert _one_token(0.5, -1.0, clip_low=0.3, clip_high=0.28) == pytest.approx(0.7)


def test_a_clipped_token_has_no_gradient_and_an_unclipped_one_has():
    def loss_at(new):
        return grpo_policy_loss([[new]], [[0.0]], [1.0], [[1.0]], clip_low=0.2, clip_high=0.28)

    h = 1e-6
    clipped = math.log(1.5)  # above 1.28
    assert loss_at(clipped + h) == loss_at(clipped - h)
    inside = math.log(1.1)
    slope = (loss_at(inside + h) - loss_at(inside - h)) / (2 * h)
    assert slope == pytest.approx(-1.1, rel=1e-6)  # d(−Âρ)/d log π = −Âρ


def test_beta_zero_ignores_ref_and_beta_adds_the_k3_penalty():
    rng = np.random.default_rng(41)
    new, old, ref, adv = rng.normal(-1, 0.3, (4, 3, 7))
    m = mask(rng, 3, 7, "holes")
    for mode in LOSS_AGG_MODES:
        plain = grpo_policy_loss(new, old, adv, m, loss_agg_mode=mode)
        assert grpo_policy_loss(new, old, adv, m, ref, beta=0.0, loss_agg_mode=mode) == plain
        assert grpo_policy_loss(new, old, adv, m, new.copy(), beta=0.3, loss_agg_mode=mode) == (
            pytest.approx(plain, abs=1e-15)
        )  # ref = π_θ: k3 = 0
        d = ref - new
        k3 = np.exp(d) - d - 1
        with_kl = grpo_policy_loss(new, old, adv, m, ref, beta=0.3, loss_agg_mode=mode)
        assert with_kl == pytest.approx(plain + 0.3 * aggregate_loss(k3, m, mode), rel=1e-12)
        assert with_kl > plain


def test_advantages_per_response_broadcast_over_its_tokens():
    rng = np.random.default_rng(51)
    new, old = rng.normal(-1, 0.3, (2, 4, 6))
    adv = rng.normal(size=4)
    m = mask(rng, 4, 6, "left")
    repeated = np.repeat(adv[:, None], 6, axis=1)
    for mode in LOSS_AGG_MODES:
        a = grpo_policy_loss(new, old, adv, m, loss_agg_mode=mode)
        b = grpo_policy_loss(new, old, repeated, m, loss_agg_mode=mode)
        assert a == pytest.approx(b, rel=1e-14, abs=1e-15)


def test_symmetric_token_mean_grpo_loss_is_ppos_surrogate():
    rng = np.random.default_rng(61)
    new, old, adv = rng.normal(-1, 0.3, (3, 5, 9))
    m = mask(rng, 5, 9, "both")
    ours = grpo_policy_loss(new, old, adv, m, clip_low=0.15, clip_high=0.15)
    assert ours == pytest.approx(policy_surrogate_loss(new, old, adv, m, 0.15), rel=1e-12)


def test_grpo_loss_is_finite_and_quiet_whatever_padding_holds():
    m = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    bad = np.array([[0.0, np.inf, np.nan], [0.0, 0.0, -np.inf]])
    new = np.array([[-1.0, 800.0, np.nan], [-2.0, -1.0, 1e30]])  # exp(800) would overflow
    old = np.array([[0.0, 0.0, np.nan], [0.0, 0.0, -1e30]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in exp on padding would be a RuntimeWarning
        for mode in LOSS_AGG_MODES:
            for old_ in (bad, old):
                loss = grpo_policy_loss(
                    new, old_, bad + 1.0, m, bad - 900.0, beta=0.1, loss_agg_mode=mode
                )
                assert math.isfinite(loss), mode
    assert grpo_policy_loss(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), np.zeros((2, 3))) == 0.0


def test_grpo_loss_bad_input_names_the_arguments():
    # the shapes every policy loss checks: tests/test_policy_losses.py
    z = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"ref_logprobs \[3, 3\]"):
        grpo_policy_loss(z, z, np.zeros(2), z + 1, np.zeros((3, 3)), beta=0.1)
    with pytest.raises(ValueError, match="beta > 0 needs ref_logprobs"):
        grpo_policy_loss(z, z, np.zeros(2), z + 1, beta=0.04)
    with pytest.raises(ValueError, match="mode must be one of"):
        grpo_policy_loss(z, z, np.zeros(2), z + 1, loss_agg_mode="mean")
    for name in ("clip_low", "clip_high"):
        with pytest.raises(ValueError, match=f"{name} must be a finite number > 0"):
            grpo_policy_loss(z, z, np.zeros(2), z + 1, **{name: 0.0})
    with pytest.raises(ValueError, match="beta must be a finite number >= 0"):
        grpo_policy_loss(z, z, np.zeros(2), z + 1, z, beta=-0.1)


# ---- reward model loss -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reward_model_loss_is_softplus_of_minus_the_margin_and_stable(dtype):
    chosen = np.array([1000.0, -1000.0, 3.0, 0.25, 0.0], dtype)
    rejected = np.array([0.0, 0.0, 1.0, 0.25, 0.0], dtype)
    margin = np.array([0.0, 0.0, 0.5, 0.0, 1.0], dtype)
    z = T_(chosen.astype(np.float64) - rejected - margin)
    expected = F.softplus(-z).numpy()
    for i in range(len(chosen)):
        got = reward_model_loss(chosen[i : i + 1], rejected[i : i + 1], margin[i : i + 1])
        assert math.isfinite(got)
        assert got == pytest.approx(expected[i], rel=1e-6, abs=1e-300)
    assert reward_model_loss(chosen[1:2], rejected[1:2]) == 1000.0
    assert reward_model_loss(chosen[:1], rejected[:1]) == pytest.approx(0.0, abs=1e-300)
    assert reward_model_loss(chosen[3:4], rejected[3:4]) == pytest.approx(math.log(2), rel=1e-7)
    assert reward_model_loss(chosen, rejected, margin) == pytest.approx(expected.mean(), rel=1e-6)
    with np.errstate(over="ignore", divide="ignore"):
        naive = -np.log(1 / (1 + np.exp(-z.numpy())))
    assert not np.all(np.isfinite(naive))


def test_reward_model_loss_margin_shifts_the_difference():
    c, r = np.array([2.0, 0.5]), np.array([1.0, 1.5])
    assert reward_model_loss(c, r, 0.7) == pytest.approx(reward_model_loss(c - 0.7, r), rel=1e-15)
    assert reward_model_loss(c, r, np.array([0.7, -0.2])) == pytest.approx(
        reward_model_loss(c - np.array([0.7, -0.2]), r), rel=1e-15
    )
    assert reward_model_loss([], []) == 0.0
    with pytest.raises(ValueError, match=r"chosen_scores \[2\], rejected_scores \[3\]"):
        reward_model_loss(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match=r"margin \[3\]"):
        reward_model_loss(np.zeros(2), np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="margin must be a finite number"):
        reward_model_loss(np.zeros(2), np.zeros(2), float("nan"))


# ---- dtypes ------------------------------------------------------------------------------------


def test_float32_stays_float32_and_losses_are_python_floats():
    rng = np.random.default_rng(71)
    f32 = rng.normal(size=(4, 5)).astype(np.float32)
    m64 = mask(rng, 4, 5, "right")  # a float64 mask never widens the data
    s32 = rng.normal(size=6).astype(np.float32)
    assert group_advantages(s32, 3).dtype == np.float32
    assert group_advantages(s32, 3, scale_by_std=False).dtype == np.float32
    assert rloo_advantages(s32, 2).dtype == np.float32

    adv, ret = reinforce_pp_advantages(f32, m64, gamma=np.float64(0.9))
    assert adv.dtype == ret.dtype == np.float32
    assert group_advantages([1, 0, 1, 1], 2).dtype == np.float64  # integers follow float64
    for value in (
        aggregate_loss(f32, m64, "seq-mean-token-mean"),
        grpo_policy_loss(f32, f32, s32[:4], m64, f32, beta=0.1),
        reward_model_loss(s32, s32[::-1]),
    ):
        assert type(value) is float


def test_every_layout_is_exercised():
    assert {case.layout for case in CASES} == set(LAYOUTS)


def test_the_reinforce_pp_worked_example_on_the_page_agrees_with_the_reference():
    # docs/grpo/reinforce_pp.py is shown on the GRPO page with its output; run it with torch
    namespace: dict = {"__name__": "example"}
    path = ROOT / "docs" / "grpo" / "reinforce_pp.py"
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    rewards, mask = namespace["rewards"].numpy(), namespace["mask"].numpy()
    advantages, returns = reinforce_pp_advantages(rewards, mask, namespace["gamma"])
    np.testing.assert_allclose(namespace["returns"].numpy(), returns, rtol=1e-6)
    np.testing.assert_allclose(namespace["advantages"].numpy(), advantages, rtol=1e-5, atol=1e-6)
