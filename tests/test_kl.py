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


# ---- what the page claims about the estimators, pinned with real autograd ----------------------


def _categorical(seed: int, n: int = 5):
    g = torch.Generator().manual_seed(seed)
    theta = torch.randn(n, generator=g, dtype=torch.float64, requires_grad=True)
    p = torch.softmax(torch.randn(n, generator=g, dtype=torch.float64), 0)
    return theta, p


def _expected_gradient(theta, p, estimator, role):
    """∇θ of E_{x∼q}[·] for one estimator, by autograd, exactly (a sum over the vocabulary).

    In the loss: E_q[∇k(x)], the sample held fixed (q's weights detached). In the reward:
    E_q[k(x) ∇log q(x)] with k detached, the score-function (REINFORCE) gradient."""
    q = torch.softmax(theta, 0)
    log_r = p.log() - q.log()
    k = {"k1": -log_r, "k2": 0.5 * log_r**2, "k3": log_r.exp() - 1 - log_r}[estimator]
    if role == "loss":
        objective = (q.detach() * k).sum()
    else:
        objective = (q.detach() * k.detach() * q.log()).sum()
    (grad,) = torch.autograd.grad(objective, theta)
    return grad


def _true_gradients(theta, p):
    q = torch.softmax(theta, 0)
    reverse = (q * (q.log() - p.log())).sum()  # KL(q ‖ p)
    forward = (p * (p.log() - q.log())).sum()  # KL(p ‖ q)
    return {
        "reverse": torch.autograd.grad(reverse, theta, retain_graph=True)[0],
        "forward": torch.autograd.grad(forward, theta)[0],
    }


@pytest.mark.parametrize("seed", range(5))
def test_k1_in_the_loss_has_zero_expected_gradient_and_k1_in_the_reward_is_the_kl_gradient(seed):
    theta, p = _categorical(seed)
    true = _true_gradients(theta, p)
    zero = torch.zeros_like(theta)
    torch.testing.assert_close(_expected_gradient(theta, p, "k1", "loss"), zero)
    torch.testing.assert_close(_expected_gradient(theta, p, "k1", "reward"), true["reverse"])


@pytest.mark.parametrize("seed", range(5))
def test_k2_in_the_loss_gives_reverse_kl_and_k3_in_the_loss_gives_forward_kl_gradient(seed):
    theta, p = _categorical(seed)
    true = _true_gradients(theta, p)
    torch.testing.assert_close(_expected_gradient(theta, p, "k2", "loss"), true["reverse"])
    torch.testing.assert_close(_expected_gradient(theta, p, "k3", "loss"), true["forward"])
    # and K2, K3 used as rewards give neither (the page's "—")
    for estimator in ("k2", "k3"):
        g = _expected_gradient(theta, p, estimator, "reward")
        assert not torch.allclose(g, true["reverse"]) and not torch.allclose(g, true["forward"])


def test_sampled_k1_and_k3_estimate_the_kl_and_k2_is_biased():
    rng = np.random.default_rng(7)
    q = np.array([0.35, 0.25, 0.15, 0.12, 0.08, 0.05])
    p = np.array([0.20, 0.20, 0.20, 0.20, 0.10, 0.10])
    exact = float(np.sum(q * np.log(q / p)))
    tokens = rng.choice(len(q), size=200_000, p=q)
    k1, k2, k3 = kl_estimators(np.log(p[tokens]), np.log(q[tokens]))
    for k in (k1, k3):
        assert abs(k.mean() - exact) < 4 * k.std() / np.sqrt(len(k))
    expected_k2 = float(np.sum(q * 0.5 * np.log(p / q) ** 2))
    assert abs(k2.mean() - expected_k2) < 4 * k2.std() / np.sqrt(len(k2))
    assert abs(expected_k2 - exact) > 10 * k2.std() / np.sqrt(len(k2))  # biased, measurably
    assert (k1 < 0).mean() > 0.3  # single K1 samples are often negative


def test_neither_k2_nor_k3_has_the_lower_variance_in_general():
    rng = np.random.default_rng(0)
    lower = 0
    for _ in range(500):
        q, p = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        log_r = np.log(p / q)
        k2, k3 = 0.5 * log_r**2, np.expm1(log_r) - log_r
        var2 = np.sum(q * k2**2) - np.sum(q * k2) ** 2
        var3 = np.sum(q * k3**2) - np.sum(q * k3) ** 2
        lower += var2 < var3
    assert 0.2 < lower / 500 < 0.8
