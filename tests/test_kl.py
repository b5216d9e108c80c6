"""rl_ops_numpy.kl against the PyTorch lesson code, plus the estimators' properties."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rl_ops_numpy import kl_estimators

from .cases import Case, cases, tolerance
from .conftest import lesson_function

torch_kl = lesson_function("ppo/kl_estimators")


@pytest.mark.parametrize("case", list(cases()), ids=str)
def test_kl_estimators_match_lesson(case: Case):
    rng = np.random.default_rng(case.seed)
    q = rng.normal(-1.0, 0.5, (case.B, case.T)).astype(case.dtype)
    p = (q + rng.normal(0, 0.3, (case.B, case.T))).astype(case.dtype)
    ours = kl_estimators(p, q)
    theirs = torch_kl(torch.from_numpy(p), torch.from_numpy(q))
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True), 1):
        assert a.dtype == case.dtype and a.shape == p.shape, f"k{k}"
        np.testing.assert_allclose(a, b.numpy(), **tolerance(case.dtype), err_msg=f"k{k}")


finite = st.floats(-30, 30, allow_nan=False, width=32)


@given(
    hnp.arrays(np.float32, st.integers(1, 40), elements=finite),
    hnp.arrays(np.float32, st.integers(1, 40), elements=finite),
)
def test_k2_and_k3_are_never_negative(p, q):
    n = min(len(p), len(q))
    _, k2, k3 = kl_estimators(p[:n], q[:n])
    assert np.all(k2 >= 0) and np.all(k3 >= 0)


def test_k3_stays_non_negative_where_exp_minus_one_cancels():
    # The source's exp(x) − 1 − x is −1e-8 in float32 at x = 1e-8; expm1 keeps k3 ≥ 0.
    x = np.array([1e-8, -1e-8, 1e-4, -3e-7], np.float32)
    naive = np.exp(x) - np.float32(1) - x
    assert np.any(naive < 0)
    _, _, k3 = kl_estimators(x, np.zeros_like(x))
    assert np.all(k3 >= 0)


def test_all_three_are_zero_when_distributions_agree():
    q = np.random.default_rng(0).normal(size=(3, 7))
    for k in kl_estimators(q, q.copy()):
        assert np.all(k == 0)


def test_k1_and_k3_are_unbiased_and_k2_is_not():
    # q = N(0, 1), p = N(μ, 1): KL(q‖p) = μ²/2. Average over many samples from q.
    mu, n = 0.8, 400_000
    x = np.random.default_rng(0).normal(size=n)
    log_q = -0.5 * x**2
    log_p = -0.5 * (x - mu) ** 2
    k1, k2, k3 = (k.mean() for k in kl_estimators(log_p, log_q))
    kl = mu**2 / 2
    assert k1 == pytest.approx(kl, abs=0.01)
    assert k3 == pytest.approx(kl, abs=0.01)
    # k2 averages ½(log r)² = ½ E[(μx − μ²/2)²] = ½(μ² + μ⁴/4): biased upward
    assert k2 == pytest.approx(0.5 * (mu**2 + mu**4 / 4), abs=0.01)
    assert k2 > kl + 0.05


def test_k3_has_lower_variance_than_k1_when_p_is_close_to_q():
    x = np.random.default_rng(1).normal(size=100_000)
    k1, _, k3 = kl_estimators(-0.5 * (x - 0.1) ** 2, -0.5 * x**2)
    assert k3.var() < k1.var() / 10


def test_kl_bad_input():
    with pytest.raises(ValueError, match=r"p_logprobs \[2\], q_logprobs \[3\]"):
        kl_estimators(np.zeros(2), np.zeros(3))
