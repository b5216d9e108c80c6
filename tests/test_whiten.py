"""rl_ops_numpy.masked_whiten against the PyTorch lesson (Exercise 7), plus its properties."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from rl_ops_numpy import masked_whiten

from .cases import Case, cases, mask, tolerance
from .conftest import lesson_function

torch_whiten = lesson_function("ppo/masked_whiten")


def _inputs(case: Case):
    rng = np.random.default_rng(5000 + case.seed)
    B, T = case.B, max(case.T, 2)  # the variance needs two tokens (TRL and verl raise below)
    values = rng.normal(1.0, 2.0, (B, T)).astype(case.dtype)
    m = mask(rng, B, T, case.layout).astype(case.dtype)
    if m.sum() < 2:
        m.reshape(-1)[:2] = 1
    return values, m


@pytest.mark.parametrize("case", list(cases()), ids=str)
def test_masked_whiten_matches_lesson(case: Case):
    values, m = _inputs(case)
    for shift_mean in (True, False):
        ours = masked_whiten(values, m, shift_mean=shift_mean)
        theirs = torch_whiten(torch.from_numpy(values), torch.from_numpy(m), shift_mean)
        assert ours.dtype == case.dtype and ours.shape == values.shape
        tol = tolerance(case.dtype) if case.dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-5}
        np.testing.assert_allclose(ours, theirs.numpy(), **tol)


def test_masked_whiten_gives_mean_0_and_unbiased_variance_1_over_the_mask():
    rng = np.random.default_rng(11)
    v = rng.normal(3.0, 5.0, (4, 9))
    m = mask(rng, 4, 9, "holes")
    w = masked_whiten(v, m)
    real = m == 1
    assert w[real].mean() == pytest.approx(0, abs=1e-12)
    assert w[real].var(ddof=1) == pytest.approx(1, rel=1e-6)  # 1e-8 in the denominator
    assert np.all(w[~real] == 0)
    kept = masked_whiten(v, m, shift_mean=False)
    assert kept[real].mean() == pytest.approx(v[real].mean(), rel=1e-12)
    np.testing.assert_allclose(kept[real] - v[real].mean(), w[real], atol=1e-12)


def test_masked_whiten_edges_and_non_finite_padding():
    v = np.array([[2.0, np.nan], [np.inf, -1.0]])
    m = np.array([[1.0, 0.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = masked_whiten(v, m)
    # mean 0.5, unbiased variance (1.5² + 1.5²) / 1 = 4.5
    z = 1.5 / math.sqrt(4.5 + 1e-8)
    np.testing.assert_allclose(w, [[z, 0], [0, -z]], rtol=1e-15)
    assert np.all(masked_whiten(v, np.zeros((2, 2))) == 0)  # no token: zeros
    one = np.array([[1.0, 0.0], [0.0, 0.0]])  # one token: variance taken as 0
    assert np.all(masked_whiten(v, one) == 0)
    np.testing.assert_array_equal(masked_whiten(v, one, shift_mean=False), [[2.0, 0], [0, 0]])


def test_the_lesson_keeps_nan_on_padding_out_too():
    v = torch.tensor([[2.0, float("nan")], [float("inf"), -1.0]])
    m = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    w = torch_whiten(v, m)
    assert torch.isfinite(w).all() and w[0, 1] == 0 and w[1, 0] == 0
