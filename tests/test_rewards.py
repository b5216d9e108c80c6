"""rl_ops_numpy.rewards against the PyTorch lesson code, plus where the RM score goes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rl_ops_numpy import shape_token_rewards
from rl_ops_numpy.rewards import last_token_index

from .cases import Case, cases, mask, tolerance
from .conftest import lesson_function

torch_shape = lesson_function("ppo/shape_token_rewards")
T_ = torch.from_numpy


@pytest.mark.parametrize("case", list(cases()), ids=str)
def test_shape_token_rewards_matches_lesson(case: Case):
    rng = np.random.default_rng(case.seed)
    rm = rng.normal(0, 1, case.B).astype(case.dtype)
    lp = rng.normal(-1, 0.5, (case.B, case.T)).astype(case.dtype)
    ref = (lp + rng.normal(0, 0.1, (case.B, case.T))).astype(case.dtype)
    m = mask(rng, case.B, case.T, case.layout).astype(case.dtype)
    ours = shape_token_rewards(rm, lp, ref, m, kl_coef=0.05)
    theirs = torch_shape(T_(rm), T_(lp), T_(ref), T_(m), kl_coef=0.05).numpy()
    assert ours.dtype == case.dtype and ours.shape == (case.B, case.T)
    np.testing.assert_allclose(ours, theirs, **tolerance(case.dtype))


@pytest.mark.parametrize(
    ("row", "last"),
    [
        ([1, 1, 1, 0, 0], 2),  # right padding
        ([0, 0, 1, 1, 1], 4),  # left padding
        ([0, 1, 1, 1, 0], 3),  # prompt in front, padding behind
        ([1, 0, 0, 0, 0], 0),
        ([0, 0, 0, 0, 1], 4),
        ([0, 0, 0, 0, 0], -1),  # no response token
    ],
)
def test_rm_score_goes_on_the_last_response_token_whatever_the_layout(row, last):
    m = np.array([row], float)
    assert last_token_index(m)[0] == last
    rewards = shape_token_rewards([2.0], np.zeros((1, 5)), np.zeros((1, 5)), m, kl_coef=0.1)
    expected = np.zeros(5)
    if last >= 0:
        expected[last] = 2.0
    np.testing.assert_array_equal(rewards[0], expected)


def test_the_source_index_is_wrong_with_left_padding():
    # The source's last_idx = mask.sum(-1) − 1 (its own test expects positions 5 and 4)
    m = np.array([[0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 0]], float)
    source_idx = m.sum(-1).astype(int) - 1
    assert source_idx.tolist() == [3, 3]
    assert last_token_index(m).tolist() == [5, 4]


def test_kl_penalty_on_every_response_token_and_nothing_outside():
    lp = np.array([[0.0, -1.0, -2.0, -0.5]])
    ref = np.array([[0.0, -1.5, -1.0, -0.5]])
    m = np.array([[0.0, 1.0, 1.0, 0.0]])
    out = shape_token_rewards([0.0], lp, ref, m, kl_coef=0.5)
    # −β(log π − log π_ref) on tokens 1 and 2; token 2 is last and gets the score 0
    np.testing.assert_allclose(out[0], [0.0, -0.5 * 0.5, -0.5 * -1.0, 0.0])


def test_empty_rows_and_batches_are_finite():
    out = shape_token_rewards([1.0, 2.0], np.ones((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)))
    assert np.all(out == 0)
    assert shape_token_rewards(
        np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))
    ).shape == (0, 3)
    assert shape_token_rewards(
        [1.0], np.zeros((1, 0)), np.zeros((1, 0)), np.zeros((1, 0))
    ).shape == (1, 0)


def test_rewards_bad_input():
    z = np.zeros((2, 3))
    with pytest.raises(
        ValueError, match=r"rm_score \[3\] needs one score per row of logprobs \[2, 3\]"
    ):
        shape_token_rewards(np.zeros(3), z, z, z)
    with pytest.raises(ValueError, match=r"logprobs \[2, 3\], ref_logprobs \[2, 4\]"):
        shape_token_rewards(np.zeros(2), z, np.zeros((2, 4)), z)
    with pytest.raises(ValueError, match="kl_coef must be a finite number >= 0"):
        shape_token_rewards(np.zeros(2), z, z, z, kl_coef=-1)
    with pytest.raises(ValueError, match="response_mask must hold only 0 and 1"):
        shape_token_rewards(np.zeros(2), z, z, z + 0.3)


def test_float32_in_float32_out_with_a_list_score():
    z = np.zeros((2, 3), np.float32)
    assert shape_token_rewards([1.0, 2.0], z, z, np.ones((2, 3), np.int64)).dtype == np.float32


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (np.array([[1.0, 0.5, 0.0]]), r"response_mask must hold only 0 and 1, found 0\.5"),
        (np.array([[1.0, np.nan, 0.0]]), r"response_mask must hold only 0 and 1, found nan"),
        (np.array([[1, 2, 0]]), r"response_mask must hold only 0 and 1, found 2"),
        (np.array([["1", "0", "0"]]), r"response_mask must hold numbers, got an array of dtype"),
        (np.ones((2, 3, 4)), r"response_mask must be \[B, T\], got shape \[2, 3, 4\]"),
        (np.ones(3), r"response_mask must be \[B, T\], got shape \[3\]"),
        (1.0, r"response_mask must be \[B, T\], got shape \[\]"),
    ],
    ids=["0.5", "nan", "2", "strings", "3-d", "1-d", "0-d"],
)
def test_last_token_index_refuses_a_mask_that_is_not_b_by_t_of_0_and_1_by_name(mask, message):
    with pytest.raises(ValueError, match=message):
        last_token_index(mask)


@pytest.mark.parametrize("dtype", [bool, np.int64, np.float32, np.float64])
def test_last_token_index_takes_a_mask_of_any_numeric_dtype(dtype):
    m = np.array([[0, 1, 1, 0], [0, 0, 0, 0]], dtype)
    assert last_token_index(m).tolist() == [2, -1]
    assert last_token_index(m.tolist()).tolist() == [2, -1]
