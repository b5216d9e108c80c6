"""rl_ops_numpy's sapo_loss and kl_cov_loss against their lessons' PyTorch answers
(docs/beyond/sapo_loss.py, docs/beyond/kl_cov_loss.py), plus the properties the lessons teach:
SAPO's gate keeps a gradient where the clip has none, its slope is 1 on policy for every τ, a
larger τ narrows it; KL-Cov penalises the top ⌊N·k_ratio⌋ (at least one) tokens by the
covariance of advantage and current log-prob over the response tokens, with a pull of
kl_coef·sign(log ρ)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rl_ops_numpy import aggregate_loss, kl_cov_loss, sapo_loss

from .cases import Case, cases, mask
from .conftest import lesson_function

CASES = list(cases(60))
sapo_torch = lesson_function("beyond/sapo_loss")
kl_cov_torch = lesson_function("beyond/kl_cov_loss")


def tol(dtype: type) -> dict[str, float]:
    """float64: agreement to rounding; float32: PyTorch computes in float32, the reference in
    float64, and ρ reaches e^3."""
    return {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-5, "atol": 2e-6}


def draw(case: Case, per_token: bool) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(case.seed)
    B, T = case.B, case.T
    new = rng.normal(-2.0, 1.0, (B, T)).astype(case.dtype)
    old = (new - rng.normal(0.0, 0.5, (B, T))).astype(case.dtype)
    adv = rng.normal(0.0, 1.0, (B, T) if per_token else B).astype(case.dtype)
    return new, old, adv, mask(rng, B, T, case.layout).astype(case.dtype)


def lesson_grad(fn, new, *args) -> tuple[float, np.ndarray]:
    lp = torch.tensor(new, requires_grad=True)
    loss = fn(lp, *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    loss.backward()
    return loss.item(), lp.grad.numpy()


# ---- the references against the lessons' answers ----------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("per_token", [False, True], ids=["adv [B]", "adv [B, T]"])
def test_sapo_loss_matches_the_lesson(case: Case, per_token: bool):
    new, old, adv, m = draw(case, per_token)
    for tau_pos, tau_neg in [(1.0, 1.05), (0.5, 3.0)]:
        ours = sapo_loss(new, old, adv, m, tau_pos=tau_pos, tau_neg=tau_neg)
        theirs = sapo_torch(*map(torch.tensor, (new, old, adv, m)), tau_pos, tau_neg).item()
        np.testing.assert_allclose(ours, theirs, **tol(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_kl_cov_loss_matches_the_lesson(case: Case):
    new, old, adv, m = draw(case, per_token=True)  # per token: no tied covariance terms
    for k_ratio, kl_coef in [(2e-4, 1.0), (0.3, 0.1), (1.0, 1.0)]:
        ours = kl_cov_loss(new, old, adv, m, k_ratio=k_ratio, kl_coef=kl_coef)
        theirs = kl_cov_torch(*map(torch.tensor, (new, old, adv, m)), k_ratio, kl_coef).item()
        np.testing.assert_allclose(ours, theirs, **tol(case.dtype))


def test_kl_cov_loss_matches_the_lesson_with_one_advantage_per_response():
    rng = np.random.default_rng(5)
    new, adv = rng.normal(-2, 1, (4, 6)), np.array([1.0, -0.5, 0.25, -2.0])
    old, m = new - rng.normal(0, 0.3, (4, 6)), np.ones((4, 6))
    m[1, 4:] = m[3, :2] = 0
    for k_ratio in (2e-4, 0.25, 0.5):
        ours = kl_cov_loss(new, old, adv, m, k_ratio=k_ratio)
        theirs = kl_cov_torch(*map(torch.tensor, (new, old, adv, m)), k_ratio).item()
        assert ours == pytest.approx(theirs, rel=1e-12)


# ---- SAPO: the gate ------------------------------------------------------------------------------


def sapo_weight(rho: float, adv: float, **kw: float) -> float:
    """−∂loss/∂log π ÷ Â of one token at ratio ρ, by autograd through the lesson."""
    _, g = lesson_grad(lambda lp, *a: sapo_torch(lp, *a, **kw), np.array([[math.log(rho)]]),
                       np.zeros((1, 1)), np.array([adv]), np.ones((1, 1)))
    return -g.item() / adv


@pytest.mark.parametrize("tau", [0.5, 1.0, 1.05, 3.0, 10.0])
def test_on_policy_the_gate_has_slope_1_for_every_tau_and_value_minus_2a_over_tau(tau):
    for adv in (1.0, -1.0):
        assert sapo_weight(1.0, adv, tau_pos=tau, tau_neg=tau) == pytest.approx(1.0, rel=1e-12)
        value = sapo_loss(np.zeros((1, 3)), np.zeros((1, 3)), [adv], np.ones((1, 3)),
                          tau_pos=tau, tau_neg=tau)
        assert value == pytest.approx(-2 * adv / tau, rel=1e-12)


def test_the_gradient_is_rho_sech_squared_and_never_falls_to_zero_as_the_clip_does():
    for rho in (0.5, 0.9, 1.1, 1.3, 2.0, 3.0, 5.0):
        for tau in (1.0, 10.0):
            expected = rho / math.cosh(tau * (rho - 1) / 2) ** 2
            assert sapo_weight(rho, 1.0, tau_pos=tau) == pytest.approx(expected, rel=1e-10)
    # the clip (ε = 0.2) gives Â > 0 no gradient above 1.2; the gate still does
    assert sapo_weight(1.3, 1.0) > 1.2 and sapo_weight(5.0, 1.0) > 0.3


def test_a_larger_tau_narrows_the_gate_and_tau_neg_decays_negative_advantages_faster():
    for rho in (0.5, 1.3, 2.0, 3.0):
        w = [sapo_weight(rho, 1.0, tau_pos=tau) for tau in (1.0, 3.0, 10.0)]
        assert w[0] > w[1] > w[2]
        assert sapo_weight(rho, -1.0) < sapo_weight(rho, 1.0)  # τ_neg 1.05 > τ_pos 1.0
    assert sapo_weight(2.0, 1.0, tau_pos=10.0) < 1e-3


def test_advantage_zero_takes_tau_neg_and_contributes_nothing():
    new, old, m = np.log([[1.5, 0.5]]), np.zeros((1, 2)), np.ones((1, 2))
    assert sapo_loss(new, old, [[0.0, 0.0]], m) == 0.0
    _, g = lesson_grad(sapo_torch, new, old, np.array([0.0]), m)
    assert not g.any()


def test_sapo_loss_is_the_mean_of_response_means_and_leaves_empty_rows_out():
    # on policy: a 1-token response with Â = +1 and a 3-token one with Â = −1
    m = np.array([[1.0, 0, 0], [1, 1, 1]])
    loss = sapo_loss(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, -1.0], m)
    assert loss == pytest.approx((-2.0 + 2 / 1.05) / 2, rel=1e-12)
    with_empty = sapo_loss(np.zeros((3, 3)), np.zeros((3, 3)), [1.0, -1.0, 5.0],
                           np.vstack([m, np.zeros(3)]))
    assert with_empty == loss


def test_sapo_loss_clamps_the_log_ratio_at_20_and_ignores_padding_whatever_it_holds():
    old, m, adv = np.zeros((1, 3)), np.array([[1.0, 1, 0]]), [-1.0]
    at_20 = sapo_loss(np.array([[20.0, -20.0, 0]]), old, adv, m)
    assert sapo_loss(np.array([[25.0, -40.0, np.nan]]), old, adv, m) == at_20
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        assert math.isfinite(sapo_loss(np.array([[1e4, -1e4, np.inf]]), old, adv, m))
    assert sapo_loss(np.zeros((2, 2)), np.zeros((2, 2)), [1.0, 1.0], np.zeros((2, 2))) == 0.0


# ---- KL-Cov: which tokens, and the penalty -------------------------------------------------------


def chosen(new, old, adv, m, k_ratio) -> np.ndarray:
    """The tokens kl_cov_loss penalises, read from the lesson's gradient: where kl_coef = 1 and
    kl_coef = 0 differ (log ρ ≠ 0 there)."""
    _, g1 = lesson_grad(kl_cov_torch, new, old, adv, m, k_ratio, 1.0)
    _, g0 = lesson_grad(kl_cov_torch, new, old, adv, m, k_ratio, 0.0)
    return np.argwhere(g1 != g0).tolist()


def page_example() -> tuple[np.ndarray, ...]:
    m = np.array([[1.0, 1, 1, 1], [1, 1, 1, 0]])
    new = np.array([[-0.1, -2.0, -0.5, -3.0], [-4.0, -0.2, -1.5, 0.0]])
    log_ratio = np.array([[0.1, -0.05, 0.2, 0.0], [-0.3, 0.05, 0.1, 0.0]])
    return new, new - log_ratio, np.array([1.0, -1.0]), m


def test_the_page_example_penalises_the_two_largest_covariance_terms():
    new, old, adv, m = page_example()
    # C: (0,0) +1.298, (1,0) +2.727 are the two largest; ⌊7 × 0.3⌋ = 2
    assert chosen(new, old, adv, m, 0.3) == [[0, 0], [1, 0]]
    assert chosen(new, old, adv, m, 2e-4) == [[1, 0]]
    plain = kl_cov_loss(new, old, adv, m, k_ratio=0.3, kl_coef=0.0)
    assert kl_cov_loss(new, old, adv, m, k_ratio=0.3) == pytest.approx(plain + 0.4 / 7)


@pytest.mark.parametrize(("n", "k_ratio", "k"), [(7, 2e-4, 1), (4999, 2e-4, 1), (5000, 2e-4, 1),
                                                 (10000, 2e-4, 2), (7, 0.3, 2), (100, 0.29, 28),
                                                 (7, 1.0, 7)])
def test_k_is_n_times_k_ratio_rounded_down_by_int_and_at_least_one(n, k_ratio, k):
    # one row of n tokens, every one moved by +0.5, the covariance term largest first
    new = -np.arange(n, dtype=np.float64)[None] / n
    adv = np.linspace(1, -1, n)[None]
    old, m = new - 0.5, np.ones((1, n))
    gap = kl_cov_loss(new, old, adv, m, k_ratio=k_ratio) - \
        kl_cov_loss(new, old, adv, m, k_ratio=k_ratio, kl_coef=0.0)
    assert gap == pytest.approx(0.5 * k / n, rel=1e-9)  # 100 × 0.29 = 28.999…: k = 28


def test_kl_coef_zero_is_the_unclipped_policy_gradient_loss():
    rng = np.random.default_rng(1)
    new, old = rng.normal(-2, 1, (3, 5)), rng.normal(-2, 1, (3, 5))
    adv, m = rng.normal(size=(3, 5)), (rng.random((3, 5)) < 0.7).astype(float)
    for mode in ("token-mean", "seq-mean-token-mean", "token-sum"):
        want = aggregate_loss(-adv * np.exp(new - old), m, mode)
        got = kl_cov_loss(new, old, adv, m, k_ratio=0.5, kl_coef=0.0, loss_agg_mode=mode)
        assert got == pytest.approx(want, rel=1e-12)


def test_the_covariance_uses_the_current_log_probs_not_the_old_ones():
    # the current log-probs rank token 0 first, the old ones token 1
    new, old = np.array([[-0.1, -3.0, -2.0]]), np.array([[-3.0, -0.1, -2.5]])
    adv = np.array([[1.0, 1.0, -1.0]])
    assert chosen(new, old, adv, np.ones((1, 3)), 2e-4) == [[0, 0]]


def test_the_means_are_over_tokens_so_a_response_advantage_counts_once_per_token():
    # Â = +1 on 4 tokens, −1 on 3: mean Â = 1/7, not the mean over responses 0
    new, _, adv, m = page_example()
    a = np.repeat(adv[:, None], 4, axis=1)[m != 0]
    assert a.mean() == pytest.approx(1 / 7)
    lp = new[m != 0]
    cov = (a - a.mean()) * (lp - lp.mean())
    assert cov.max() == pytest.approx((-1 - 1 / 7) * (-4.0 - lp.mean()))


def test_on_policy_the_penalty_adds_nothing_not_even_a_gradient():
    new, _, adv, m = page_example()
    value, g1 = lesson_grad(kl_cov_torch, new, new.copy(), adv, m, 0.5, 1.0)
    _, g0 = lesson_grad(kl_cov_torch, new, new.copy(), adv, m, 0.5, 0.0)
    assert value == kl_cov_loss(new, new, adv, m, k_ratio=0.5, kl_coef=0.0)
    np.testing.assert_array_equal(g1, g0)  # d|x|/dx at 0 is sign(0) = 0 in torch


def test_the_pull_is_kl_coef_times_the_sign_of_log_rho_over_n_whatever_its_size():
    new, old, adv, m = page_example()
    for scale in (1.0, 10.0):
        o = new - scale * (new - old)
        _, g1 = lesson_grad(kl_cov_torch, new, o, adv, m, 0.3, 0.5)
        _, g0 = lesson_grad(kl_cov_torch, new, o, adv, m, 0.3, 0.0)
        pull = (g1 - g0)[[0, 1], [0, 0]]
        np.testing.assert_allclose(pull, 0.5 * np.sign([0.1, -0.3]) / 7, rtol=1e-12)


def test_equal_covariance_terms_at_the_cut_are_taken_in_row_major_order():
    # one response: every centred advantage is 0, every covariance term 0
    new, m = np.array([[-1.0, -2.0, -3.0], [-1.5, -2.5, 0.0]]), np.ones((2, 3))
    old = new - np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    adv = np.zeros((2, 3))
    gap = kl_cov_loss(new, old, adv, m, k_ratio=0.34) - \
        kl_cov_loss(new, old, adv, m, k_ratio=0.34, kl_coef=0.0)
    assert gap == pytest.approx((0.1 + 0.2) / 6)  # ⌊6 × 0.34⌋ = 2: the first two


def test_with_two_response_tokens_the_two_covariance_terms_are_always_equal():
    # (a0 − ā) = −(a1 − ā) and (l0 − l̄) = −(l1 − l̄): the products tie, whatever the values
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, lp = rng.normal(size=2), rng.normal(size=2)
        c = (a - a.mean()) * (lp - lp.mean())
        assert c[0] == pytest.approx(c[1], rel=1e-12)


def test_kl_cov_loss_ignores_padding_whatever_it_holds_and_is_zero_without_tokens():
    new, old, adv, m = page_example()
    new, old = new.copy(), old.copy()
    want = kl_cov_loss(new, old, adv, m, k_ratio=0.3)
    new[1, 3], old[1, 3] = np.nan, -np.inf
    assert kl_cov_loss(new, old, adv, m, k_ratio=0.3) == want
    assert kl_cov_loss(new, old, adv, np.zeros_like(m)) == 0.0


# ---- both: dtypes and bad input ----------------------------------------------------------------


def test_float32_inputs_give_python_floats_computed_in_float64():
    new, old, adv, m = (x.astype(np.float32) for x in page_example())
    for loss in (sapo_loss(new, old, adv, m), kl_cov_loss(new, old, adv, m)):
        assert type(loss) is float
    assert sapo_loss(new, old, adv, m) == pytest.approx(
        sapo_loss(*(x.astype(np.float64) for x in (new, old, adv, m))), rel=1e-15)


# (the shapes and masks every policy loss refuses: tests/test_policy_losses.py)


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"tau_pos": 0.0}, "tau_pos must be a finite number > 0"),
    ({"tau_neg": -1.0}, "tau_neg must be a finite number > 0"),
    ({"tau_pos": True}, "tau_pos must be a single number"),
])
def test_sapo_bad_temperatures_are_refused(kwargs, error):
    with pytest.raises(ValueError, match=error):
        sapo_loss(*page_example(), **kwargs)


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"k_ratio": 0.0}, r"k_ratio must be in \(0, 1\], got 0.0"),
    ({"k_ratio": 1.5}, r"k_ratio must be in \(0, 1\]"),
    ({"kl_coef": -0.1}, "kl_coef must be a finite number >= 0"),
    ({"loss_agg_mode": "seq-mean"}, "mode must be one of"),
])
def test_kl_cov_bad_parameters_are_refused(kwargs, error):
    with pytest.raises(ValueError, match=error):
        kl_cov_loss(*page_example(), **kwargs)
