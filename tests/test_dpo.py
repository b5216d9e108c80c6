"""rl_ops_numpy.dpo against the PyTorch lesson code, exactness for large margins, and what each
of TRL's other DPO loss types (preference_loss) and APO's anchors promise. (Each loss against
TRL's own code: tests/test_peers.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rl_ops_numpy import (
    apo_loss,
    dpo_loss,
    ipo_loss,
    preference_loss,
    robust_dpo_loss,
)
from rl_ops_numpy.dpo import PREFERENCE_LOSS_TYPES

from .cases import Case, cases, tolerance
from .conftest import lesson_function

torch_dpo = lesson_function("s21/dpo_loss")


@pytest.mark.parametrize("case", list(cases()), ids=str)
def test_dpo_loss_matches_lesson(case: Case):
    rng = np.random.default_rng(case.seed)
    args = [rng.normal(-20, 8, (case.B, case.T)).astype(case.dtype) for _ in range(4)]
    for beta in (0.1, 0.5):
        ours = dpo_loss(*args, beta=beta)
        theirs = torch_dpo(*map(torch.from_numpy, args), beta=beta).numpy()
        assert ours.dtype == case.dtype and ours.shape == (case.B, case.T)
        np.testing.assert_allclose(ours, theirs, **tolerance(case.dtype))


def _exact(z: float) -> float:
    """−log σ(z) = log(1 + e^{−z}), in the form that cannot overflow."""
    return math.log1p(math.exp(-z)) if z >= 0 else -z + math.log1p(math.exp(z))


@pytest.mark.parametrize("z", [-1000.0, -700.0, -40.0, -1.0, 0.0, 1e-9, 1.0, 40.0, 700.0, 1000.0])
def test_dpo_is_exact_and_finite_for_large_margins(z):
    # β = 0.1, Δ = z / β; put the whole margin on the chosen side
    got = float(dpo_loss(z / 0.1, 0.0, 0.0, 0.0, beta=0.1))
    assert math.isfinite(got)
    assert got == pytest.approx(_exact(z), rel=1e-12, abs=1e-300)


def test_naive_log_sigmoid_overflows_where_ours_does_not():
    with np.errstate(over="ignore", divide="ignore"):
        naive = -np.log(1 / (1 + np.exp(1000.0)))
    assert not np.isfinite(naive)
    assert float(dpo_loss(-10000.0, 0.0, 0.0, 0.0, beta=0.1)) == 1000.0


def test_dpo_at_zero_margin_is_ln_2():
    assert float(dpo_loss(-3.0, -7.0, -3.0, -7.0)) == pytest.approx(math.log(2), rel=1e-15)


def test_s21_examples():
    # Δ = (−2 − (−3)) − (−5 − (−3)) = 3, z = 0.3; the reversed pair has z = −0.3
    assert float(dpo_loss(-2.0, -5.0, -3.0, -3.0)) == pytest.approx(_exact(0.3), rel=1e-14)
    assert float(dpo_loss(-5.0, -2.0, -3.0, -3.0)) == pytest.approx(_exact(-0.3), rel=1e-14)
    assert _exact(0.3) < _exact(-0.3)


def test_dpo_bad_input():
    with pytest.raises(ValueError, match=r"log_p_w \[2\], log_p_l \[3\]"):
        dpo_loss(np.zeros(2), np.zeros(3), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="beta must be a finite number > 0"):
        dpo_loss(0.0, 0.0, 0.0, 0.0, beta=0)


# ---- TRL's other loss types (preference_loss) and APO --------------------------------------


def _pairs(rng, n=6, dtype=np.float64):
    return [rng.normal(-20, 4, n).astype(dtype) for _ in range(4)]


LENGTHS = {"chosen_lengths": np.array([3, 5, 8, 1, 13, 21]),
           "rejected_lengths": np.array([2, 9, 4, 7, 1, 30])}


def test_preference_loss_of_sigmoid_ipo_robust_and_the_apos_is_the_named_function():
    lp = _pairs(np.random.default_rng(0))
    np.testing.assert_array_equal(preference_loss("sigmoid", *lp, beta=0.3), dpo_loss(*lp, 0.3))
    np.testing.assert_array_equal(preference_loss("ipo", *lp, beta=0.3, **LENGTHS),
                                  ipo_loss(*lp, *LENGTHS.values(), 0.3))
    np.testing.assert_array_equal(preference_loss("robust", *lp, beta=0.3, label_smoothing=0.2),
                                  robust_dpo_loss(*lp, 0.3, 0.2))
    for anchor in ("zero", "down"):
        np.testing.assert_array_equal(preference_loss(f"apo_{anchor}", *lp, beta=0.3),
                                      apo_loss(*lp, 0.3, anchor))


@pytest.mark.parametrize("loss_type", PREFERENCE_LOSS_TYPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_loss_type_keeps_the_dtype_and_shape_and_is_finite_for_huge_margins(loss_type, dtype):
    rng = np.random.default_rng(1)
    lp = _pairs(rng, dtype=dtype)
    lp[0][:2] += np.array([3000, -3000], dtype)  # βΔ = ±300: e^{±300} overflows float32
    out = preference_loss(loss_type, *lp, beta=0.1, label_smoothing=0.1, **LENGTHS)
    assert out.dtype == dtype and out.shape == (6,)
    assert np.all(np.isfinite(out)), out


def test_discopop_is_finite_where_its_formula_taken_literally_is_nan_in_float32():
    # x = βΔ = −100: e^{−x} overflows float32 while m = σ(x/τ) is 0, and 0·∞ is NaN
    x = np.float32(-100.0)
    with np.errstate(over="ignore", invalid="ignore"):
        literal = (1 / (1 + np.exp(-x / np.float32(0.05)))) * np.exp(-x)
    assert np.isnan(literal)
    zero = np.zeros(1, np.float32)
    got = preference_loss("discopop", zero + 200 * x, zero, zero, zero, beta=0.005)
    assert got[0] == pytest.approx(100.0, rel=1e-6)  # (1 − m)(−log σ(x)) = 100, m·e^{−x} = 0


def _at(loss_type, r_w, r_l, beta=0.5, **kw):
    """The loss of one pair whose chosen and rejected log-ratios are r_w and r_l."""
    z = np.zeros(1)
    return float(preference_loss(loss_type, z + r_w, z + r_l, z, z, beta=beta, **kw)[0])


def test_hinge_is_zero_exactly_once_the_margin_reaches_one_over_beta():
    assert _at("hinge", 2.0, 0.0) == 0.0 and _at("hinge", 3.0, -9.0) == 0.0
    assert _at("hinge", 1.0, 0.0) == pytest.approx(0.5)  # 1 − βΔ, β = 0.5


@pytest.mark.parametrize("eps", [1e-3, 0.1, 0.3])
def test_exo_pair_has_a_target_margin_log_1_minus_eps_over_eps(eps):
    beta = 0.5
    target = math.log((1 - eps) / eps) / beta
    h = 1e-4 * target
    at = _at("exo_pair", target, 0.0, label_smoothing=eps)
    assert at < _at("exo_pair", target - h, 0.0, label_smoothing=eps)
    assert at < _at("exo_pair", target + h, 0.0, label_smoothing=eps)


def test_sppo_hard_is_zero_at_its_two_targets_and_not_where_dpo_would_stop():
    assert _at("sppo_hard", 1.0, -1.0) == 0.0  # r_w = 1/(2β), r_l = −1/(2β)
    assert _at("sppo_hard", 3.0, 1.0) == pytest.approx(8.0)  # the same margin, elsewhere


def test_at_a_fixed_margin_dpo_is_blind_to_the_level_and_the_anchored_losses_are_not():
    """Shift both log-ratios by s: DPO's margin, and loss, stay; APO-zero is least with the two
    either side of the reference (s = 0 here), APO-down falls as both fall; BCO, NCA and SPPO
    move too."""
    shifts = [-4.0, -2.0, 0.0, 2.0, 4.0]
    for loss_type in ("sigmoid", "hinge", "exo_pair", "discopop"):
        values = [_at(loss_type, 1.0 + s, -1.0 + s, label_smoothing=0.1) for s in shifts]
        assert np.allclose(values, values[0], rtol=1e-12), loss_type
    zero = [_at("apo_zero", 1.0 + s, -1.0 + s) for s in shifts]
    down = [_at("apo_down", 1.0 + s, -1.0 + s) for s in shifts]
    assert np.argmin(zero) == 2 and np.allclose(zero, zero[::-1], rtol=1e-14)
    assert np.all(np.diff(down) > 0)
    # a negative margin: the same place is APO-zero's worst
    wrong = [_at("apo_zero", -1.0 + s, 1.0 + s) for s in shifts]
    assert np.argmax(wrong) == 2
    for loss_type in ("bco_pair", "nca_pair", "sppo_hard"):
        values = [_at(loss_type, 1.0 + s, -1.0 + s) for s in shifts]
        assert np.ptp(values) > 0.1, loss_type


def test_apo_is_one_at_the_reference_and_down_pulls_only_the_rejected_answer_there():
    assert _at("apo_zero", 0.0, 0.0) == 1.0 and _at("apo_down", 0.0, 0.0) == 1.0
    h, beta = 1e-6, 0.5
    for anchor, pull_w, pull_l in (("zero", -beta / 4, beta / 4), ("down", 0.0, beta / 4)):
        d_w = (_at(f"apo_{anchor}", h, 0.0) - _at(f"apo_{anchor}", -h, 0.0)) / (2 * h)
        d_l = (_at(f"apo_{anchor}", 0.0, h) - _at(f"apo_{anchor}", 0.0, -h)) / (2 * h)
        assert d_w == pytest.approx(pull_w, abs=1e-8) and d_l == pytest.approx(pull_l, abs=1e-8)
    rng = np.random.default_rng(2)
    lp = _pairs(rng, 1000)
    for anchor in ("zero", "down"):
        out = apo_loss(*lp, beta=1.0, anchor=anchor)
        assert out.min() >= 0 and out.max() <= 2


def test_aot_compares_the_batchs_distributions_rank_by_rank():
    rng = np.random.default_rng(3)
    w, lo, rw, rl = _pairs(rng, 8)
    p, q = rng.permutation(8), rng.permutation(8)
    aot = preference_loss("aot", w, lo, rw, rl, beta=0.2, label_smoothing=0.1)
    # the pairs reordered (the policy's and the reference's apart): the same ranks, the same loss
    np.testing.assert_allclose(
        preference_loss("aot", w[p], lo[p], rw[q], rl[q], beta=0.2, label_smoothing=0.1), aot)
    # unpaired: the chosen answers reordered apart from the rejected ones
    unpaired = preference_loss("aot_unpaired", w, lo, rw, rl, beta=0.2)
    np.testing.assert_allclose(
        preference_loss("aot_unpaired", w[p], lo[q], rw[p], rl[q], beta=0.2), unpaired)
    assert not np.allclose(np.mean(unpaired), np.mean(preference_loss("sigmoid", w, lo, rw, rl,
                                                                      beta=0.2)))


def test_sigmoid_norm_is_dpo_on_per_token_log_ratios():
    lp = _pairs(np.random.default_rng(4))
    n_w, n_l = LENGTHS.values()
    r_w, r_l = (lp[0] - lp[2]) / n_w, (lp[1] - lp[3]) / n_l
    zero = np.zeros(6)
    np.testing.assert_allclose(preference_loss("sigmoid_norm", *lp, beta=0.7, **LENGTHS),
                               dpo_loss(r_w, r_l, zero, zero, 0.7), rtol=1e-14)


def test_preference_loss_bad_input_says_what_is_wrong():
    lp = _pairs(np.random.default_rng(5))
    with pytest.raises(ValueError, match=r"loss_type must be one of .*'sigmoid'.* got 'sft'"):
        preference_loss("sft", *lp)
    with pytest.raises(ValueError, match="chosen_lengths must be"):
        preference_loss("sigmoid_norm", *lp)
    with pytest.raises(ValueError, match=r"label_smoothing must be in \(0, 1\) for exo_pair"):
        preference_loss("exo_pair", *lp)  # log ε = −∞ at TRL's default ε = 0
    with pytest.raises(ValueError, match="discopop_tau must be a finite number > 0"):
        preference_loss("discopop", *lp, discopop_tau=0)
    with pytest.raises(ValueError, match=r"anchor must be one of \('zero', 'down'\)"):
        apo_loss(*lp, anchor="up")
    with pytest.raises(ValueError, match=r"chosen_logps \[6\], rejected_logps \[5\]"):
        apo_loss(lp[0], lp[1][:5], lp[2], lp[3])
