"""rl_ops_numpy.policy_losses against the "Beyond the PPO clip" lessons' PyTorch answers, the
properties those lessons teach, and the argument checks every policy loss shares (GRPO's too)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from rl_ops_numpy.grpo import LOSS_AGG_MODES, aggregate_loss, grpo_policy_loss
from rl_ops_numpy.policy_losses import cispo_loss, gspo_loss, kl_cov_loss, sapo_loss

from .cases import Case, cases, mask, tolerance
from .conftest import lesson_function

# ==== GSPO and CISPO: gspo_loss, cispo_loss (beyond/gspo_loss, beyond/cispo_loss) ==============

CASES = list(cases(40))
T_ = torch.from_numpy


def tol(dtype: type) -> dict[str, float]:
    """float64: agreement to rounding; float32: rtol 1e-5 (the reference sums in float64)."""
    return tolerance(dtype) if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}


def _inputs(case: Case, scale: float):
    """``(new, old, per-response advantages [B], per-token advantages [B, T], mask)``."""
    rng = np.random.default_rng(6000 + case.seed)
    B, T, dt = case.B, case.T, case.dtype
    old = rng.normal(-1.0, 0.5, (B, T)).astype(dt)
    new = (old + rng.normal(0, scale, (B, T))).astype(dt)
    adv_seq, adv_tok = rng.normal(size=B).astype(dt), rng.normal(size=(B, T)).astype(dt)
    return new, old, adv_seq, adv_tok, mask(rng, B, T, case.layout).astype(dt)


def _grad(exercise_id: str, new, old, adv, m, *args) -> np.ndarray:
    """d loss / d new_logprobs of the lesson's answer, by autograd (float64)."""
    x = torch.tensor(new, dtype=torch.float64, requires_grad=True)
    f64 = [torch.tensor(a, dtype=torch.float64) for a in (old, adv, m)]
    lesson_function(exercise_id)(x, *f64, *args).backward()
    return x.grad.numpy()


# ---- gspo_loss -----------------------------------------------------------------------------------

gspo_torch = lesson_function("beyond/gspo_loss")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gspo_loss_matches_the_lessons_answer(case: Case):
    for scale, clip in [(1e-3, (3e-4, 4e-4)), (0.3, (0.2, 0.28)), (0.3, (3e-4, 4e-4))]:
        new, old, adv_seq, adv_tok, m = _inputs(case, scale)
        for adv in (adv_seq, adv_tok):
            ours = gspo_loss(new, old, adv, m, clip_low=clip[0], clip_high=clip[1])
            theirs = gspo_torch(T_(new), T_(old), T_(adv), T_(m), *clip).item()
            assert isinstance(ours, float)
            np.testing.assert_allclose(ours, theirs, **tol(case.dtype))


def test_gspo_ratio_is_the_geometric_mean_so_the_loss_does_not_grow_with_length():
    # every token's ratio r: s = r whatever the length, where the product would be r^L
    for r in (1.0001, 0.9999, 1.5):
        losses = [gspo_loss(np.full((1, L), math.log(r)), np.zeros((1, L)), [1.0],
                            np.ones((1, L)), clip_low=0.2, clip_high=0.6) for L in (1, 10, 1000)]
        assert losses == pytest.approx([-r] * 3, rel=1e-12)


def test_gspo_is_grpo_when_every_token_of_a_response_has_the_same_ratio():
    rng = np.random.default_rng(1)
    m = mask(rng, 5, 7, "holes")
    old = rng.normal(-1, 0.5, (5, 7))
    new = old + rng.normal(0, 0.2, (5, 1))  # one log-ratio per row
    for adv in (rng.normal(size=5), rng.normal(size=(5, 7))):
        for lo, hi in [(0.2, 0.28), (3e-4, 4e-4)]:
            assert gspo_loss(new, old, adv, m, clip_low=lo, clip_high=hi) == pytest.approx(
                grpo_policy_loss(new, old, adv, m, clip_low=lo, clip_high=hi,
                                 loss_agg_mode="seq-mean-token-mean"), rel=1e-12)


def test_gspo_each_response_weighs_the_same_whatever_its_length():
    # a right answer of 2 tokens and a wrong one of 6, on policy: −(1 − 1)/2 = 0
    m = np.array([[1.0, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]])
    assert gspo_loss(np.zeros((2, 6)), np.zeros((2, 6)), [1.0, -1.0], m) == 0.0
    # on policy s = 1: the loss is −(mean over responses of each one's mean advantage)
    rng = np.random.default_rng(2)
    adv = rng.normal(size=(2, 6))
    want = -np.mean([(adv[b] * m[b]).sum() / m[b].sum() for b in range(2)])
    assert gspo_loss(np.zeros((2, 6)), np.zeros((2, 6)), adv, m) == pytest.approx(want)


def test_gspo_lessons_gradient_is_s_over_length_on_every_token_and_zero_when_clipped():
    """The stop gradient: ∂L/∂log π_t = −Â_t·s_i/(|B|·|y_i|) on every response token, whatever
    its own ratio; 0 on every token of a response whose s is clipped."""
    m = np.array([[1.0, 1, 1, 0], [1, 1, 1, 1], [0, 0, 1, 1]])
    d = np.array([[0.3, -0.2, -0.1, 9.0], [0.1, 0.1, 0.1, 0.1], [5.0, 5.0, 2e-4, -2e-4]])
    old = np.full((3, 4), -1.0)
    new = old + d  # s = 1, e^0.1 (clipped for Â > 0), 1
    adv = np.array([2.0, 1.0, -1.0])
    g = _grad("beyond/gspo_loss", new, old, adv, m, 3e-4, 4e-4)
    np.testing.assert_allclose(g[0], [-2 / (3 * 3)] * 3 + [0], rtol=1e-12)
    assert not g[1].any()
    np.testing.assert_allclose(g[2], [0, 0, 1 / (3 * 2), 1 / (3 * 2)], rtol=1e-12)
    # per-token advantages reach their own tokens (s = 1 in row 0)
    adv_tok = np.array([[1.0, -2.0, 0.5, 7.0], [1, 1, 1, 1], [0, 0, 3.0, -1.0]])
    g = _grad("beyond/gspo_loss", new, old, adv_tok, m, 3e-4, 4e-4)
    np.testing.assert_allclose(g[0, :3], -adv_tok[0, :3] / (3 * 3), rtol=1e-12)
    np.testing.assert_allclose(g[2, 2:], -adv_tok[2, 2:] / (3 * 2), rtol=1e-12)


def test_gspo_clip_range_of_0_2_never_holds_for_noise_that_averages_out():
    rng = np.random.default_rng(3)
    d = rng.uniform(-0.25, 0.25, (1000, 1000))  # 6 % of these tokens are outside [0.8, 1.28]
    assert 0.05 < np.mean((d < math.log(0.8)) | (d > math.log(1.28))) < 0.07
    log_s = d.mean(axis=1)
    assert np.std(log_s) == pytest.approx(np.std(d) / math.sqrt(1000), rel=0.1)
    assert not np.any((log_s < math.log(0.8)) | (log_s > math.log(1.28)))


def test_gspo_caps_log_s_at_10_as_verl_does():
    # mean log-ratio 12, Â = −1: unclipped, −Â·s = e^10, not e^12
    assert gspo_loss(np.full((1, 3), 12.0), np.zeros((1, 3)), [-1.0], np.ones((1, 3))) == (
        pytest.approx(math.exp(10.0), rel=1e-12))


def test_gspo_advantages_per_response_broadcast_and_layout_does_not_matter():
    rng = np.random.default_rng(4)
    new, old = rng.normal(-1, 0.3, (2, 4, 6))
    adv = rng.normal(size=4)
    right = mask(rng, 4, 6, "right")
    left = right[:, ::-1].copy()  # the same responses, left-padded
    a = gspo_loss(new, old, adv, right, clip_low=0.2, clip_high=0.28)
    b = gspo_loss(new, old, np.repeat(adv[:, None], 6, axis=1), right, clip_low=0.2,
                  clip_high=0.28)
    c = gspo_loss(new[:, ::-1], old[:, ::-1], adv, left, clip_low=0.2, clip_high=0.28)
    assert a == pytest.approx(b, rel=1e-14) and a == pytest.approx(c, rel=1e-14)


def test_gspo_is_finite_and_quiet_whatever_padding_holds():
    m = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    new = np.array([[-1.0, np.inf, np.nan], [-2.0, -1.0, 1e30], [np.nan, 1.0, 2.0]])
    old = np.array([[-1.1, -np.inf, 0.0], [-2.0, -1.2, -1e30], [0.0, np.nan, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = gspo_loss(new, old, [1.0, -1.0, 5.0], m, clip_low=0.2, clip_high=0.28)
    clean = gspo_loss(np.where(m != 0, new, 0), np.where(m != 0, old, 0), [1.0, -1.0, 5.0], m,
                      clip_low=0.2, clip_high=0.28)
    assert math.isfinite(loss) and loss == clean
    assert gspo_loss(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), np.zeros((2, 3))) == 0.0


def test_gspo_refuses_a_clip_range_out_of_range():
    z = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"clip_low must be in \(0, 1\], got 0.0"):
        gspo_loss(z, z, np.zeros(2), z + 1, clip_low=0.0)
    with pytest.raises(ValueError, match=r"clip_low must be in \(0, 1\], got 1.5"):
        gspo_loss(z, z, np.zeros(2), z + 1, clip_low=1.5)
    with pytest.raises(ValueError, match="clip_high must be a finite number > 0"):
        gspo_loss(z, z, np.zeros(2), z + 1, clip_high=-1e-4)


# ---- cispo_loss ----------------------------------------------------------------------------------

cispo_torch = lesson_function("beyond/cispo_loss")
ppo_torch = lesson_function("grpo/grpo_policy_loss")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_cispo_loss_matches_the_lessons_answer(case: Case):
    new, old, adv_seq, adv_tok, m = _inputs(case, 0.5)
    for adv in (adv_seq, adv_tok):
        for clip in [(0.2, 0.28), (0.2, 0.2), (1.0, 4.0)]:
            ours = cispo_loss(new, old, adv, m, clip_low=clip[0], clip_high=clip[1])
            theirs = cispo_torch(T_(new), T_(old), T_(adv), T_(m), *clip).item()
            assert isinstance(ours, float)
            np.testing.assert_allclose(ours, theirs, **tol(case.dtype))


@pytest.mark.parametrize("case", CASES[::4], ids=str)
def test_cispo_loss_aggregates_by_each_loss_agg_mode(case: Case):
    new, old, _, adv, m = _inputs(case, 0.5)
    n, o = new.astype(np.float64), old.astype(np.float64)
    per_token = -np.clip(np.exp(n - o), 0.8, 1.28) * adv * n
    for mode in LOSS_AGG_MODES:
        np.testing.assert_allclose(cispo_loss(new, old, adv, m, loss_agg_mode=mode),
                                   aggregate_loss(per_token, m, mode), rtol=1e-12, atol=1e-12)


def test_cispo_keeps_the_gradient_of_tokens_ppo_clips_and_has_ppos_elsewhere():
    """PPO's clipped token: gradient 0. CISPO's: −(clip bound)·Â/N. Unclipped: both −Â·ρ/N."""
    rho = np.array([[1.5, 1.1, 0.5, 1.5, 0.9]])
    adv = np.array([[1.0, 1.0, -1.0, -1.0, -1.0]])
    old = np.log(np.array([[0.2, 0.5, 0.4, 0.1, 0.3]]))
    new, m = old + np.log(rho), np.ones((1, 5))
    x = torch.tensor(new, requires_grad=True)
    ppo_torch(x, T_(old), T_(adv), T_(m), None, 0.2, 0.28).backward()
    ppo = x.grad.numpy()
    cispo = _grad("beyond/cispo_loss", new, old, adv, m, 0.2, 0.28)
    clipped = np.array([[True, False, True, False, False]])
    assert not ppo[clipped].any()
    np.testing.assert_allclose(cispo[clipped], [-1.28 / 5, 0.8 / 5], rtol=1e-12)
    np.testing.assert_allclose(ppo[~clipped], (-adv * rho / 5)[~clipped], rtol=1e-12)
    # where PPO does not clip, CISPO's gradient is PPO's, but ρ = 1.5 with Â < 0 is capped
    np.testing.assert_allclose(cispo[0, [1, 4]], ppo[0, [1, 4]], rtol=1e-12)
    assert cispo[0, 3] == pytest.approx(1.28 / 5) and ppo[0, 3] == pytest.approx(1.5 / 5)


def test_cispo_with_no_floor_is_trls_weight_min_rho_epsilon_high():
    rng = np.random.default_rng(5)
    old = rng.normal(-1, 0.5, (3, 6))
    new = old + rng.normal(0, 1.5, (3, 6))
    adv, m = rng.normal(size=3), mask(rng, 3, 6, "holes")
    for cap in (1.5, 5.0):
        w = np.minimum(np.exp(new - old), cap)
        want = (-w * adv[:, None] * new)[m != 0].sum() / m.sum()
        assert cispo_loss(new, old, adv, m, clip_low=1.0, clip_high=cap - 1) == (
            pytest.approx(want, rel=1e-12))


def test_cispo_on_policy_is_reinforces_loss():
    rng = np.random.default_rng(6)
    lp, adv, m = rng.normal(-1, 0.5, (3, 5)), rng.normal(size=(3, 5)), mask(rng, 3, 5, "left")
    want = (-adv * lp)[m != 0].sum() / m.sum()
    assert cispo_loss(lp, lp, adv, m) == pytest.approx(want, rel=1e-12)


def test_cispo_is_finite_and_quiet_whatever_padding_holds_or_rho_overflows():
    m = np.array([[1.0, 1.0, 0.0]])
    new = np.array([[-0.5, -1.0, np.nan]])
    old = np.array([[-1000.5, -1.0, np.inf]])  # ρ = e^1000 on the first token: weight 1.28
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = cispo_loss(new, old, [1.0], m)
    assert loss == pytest.approx(-(1.28 * -0.5 + 1.0 * -1.0) / 2, rel=1e-12)
    assert cispo_loss(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), np.zeros((2, 3))) == 0.0


def test_cispo_refuses_an_unknown_mode_and_a_clip_range_out_of_range():
    z = np.zeros((2, 3))
    with pytest.raises(ValueError, match="mode must be one of"):
        cispo_loss(z, z, np.zeros(2), z + 1, loss_agg_mode="mean")
    with pytest.raises(ValueError, match=r"clip_low must be in \(0, 1\], got 1.2"):
        cispo_loss(z, z, np.zeros(2), z + 1, clip_low=1.2)
    with pytest.raises(ValueError, match="clip_high must be a finite number > 0"):
        cispo_loss(z, z, np.zeros(2), z + 1, clip_high=0.0)
    with pytest.raises(ValueError, match="clip_high must be a single number"):
        cispo_loss(z, z, np.zeros(2), z + 1, clip_high=None)


# ==== every policy loss: the same argument checks ================================================


@pytest.mark.parametrize("loss", [grpo_policy_loss, gspo_loss, cispo_loss, sapo_loss, kl_cov_loss],
                         ids=lambda f: f.__name__)
def test_a_policy_loss_refuses_bad_shapes_and_masks_naming_the_arguments(loss):
    z, one = np.zeros((2, 3)), np.ones((2, 3))
    with pytest.raises(ValueError, match=r"new_logprobs \[2, 3\], old_logprobs \[2, 4\]"):
        loss(z, np.zeros((2, 4)), np.zeros(2), one)
    with pytest.raises(ValueError, match=r"old_logprobs \[2, 3\], mask \[3, 3\]"):
        loss(z, z, np.zeros(2), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"advantages \[3\] needs one advantage per row"):
        loss(z, z, np.zeros(3), one)
    with pytest.raises(ValueError, match=r"new_logprobs \[2, 3\], advantages \[2, 2\]"):
        loss(z, z, np.zeros((2, 2)), one)
    with pytest.raises(ValueError, match=r"advantages must be \[B\] or \[B, T\]"):
        loss(z, z, np.zeros((2, 3, 1)), one)
    with pytest.raises(ValueError, match=r"new_logprobs must be \[B, T\], got shape \[3\]"):
        loss(np.zeros(3), np.zeros(3), np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match=r"mask must hold only 0 and 1, found 0\.5"):
        loss(z, z, np.zeros(2), one / 2)
