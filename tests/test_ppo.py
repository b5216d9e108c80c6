"""rl_ops_numpy.ppo against the PyTorch lesson code, plus the properties the lessons teach."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rl_ops_numpy import (
    importance_ratio,
    policy_surrogate_loss,
    ppo_clipped_objective,
    value_clipped_loss,
)

from .cases import Case, cases, mask, tolerance
from .conftest import lesson_function

CASES = list(cases())
torch_ratio = lesson_function("ppo/importance_ratio")
torch_policy_loss = lesson_function("ppo/policy_surrogate_loss")
torch_value_loss = lesson_function("ppo/value_clipped_loss")
torch_objective = lesson_function("s21/ppo_clipped_objective")


def _inputs(case: Case, k: int):
    rng = np.random.default_rng(1000 + case.seed)
    arrays = [rng.normal(0, 0.5, (case.B, case.T)).astype(case.dtype) for _ in range(k)]
    return arrays, mask(rng, case.B, case.T, case.layout).astype(case.dtype)


T = torch.from_numpy


@pytest.mark.parametrize("case", CASES, ids=str)
def test_importance_ratio_matches_lesson(case: Case):
    (new, old), m = _inputs(case, 2)
    ours = importance_ratio(new, old, m)
    assert ours.dtype == case.dtype and ours.shape == (case.B, case.T)
    np.testing.assert_allclose(
        ours, torch_ratio(T(new), T(old), T(m)).numpy(), **tolerance(case.dtype)
    )
    assert np.all(ours[m == 0] == 1.0)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_policy_surrogate_loss_matches_lesson(case: Case):
    (new, old, adv), m = _inputs(case, 3)
    for clip in (0.1, 0.2):
        ours = policy_surrogate_loss(new, old, adv, m, clip_range=clip)
        ref = torch_policy_loss(T(new), T(old), T(adv), T(m), clip_range=clip).item()
        np.testing.assert_allclose(ours, ref, **tolerance(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_value_clipped_loss_matches_lesson(case: Case):
    (new_v, old_v, ret), m = _inputs(case, 3)
    ours = value_clipped_loss(new_v, old_v, ret, m, clip_range_value=0.2)
    ref = torch_value_loss(T(new_v), T(old_v), T(ret), T(m), clip_range_value=0.2).item()
    np.testing.assert_allclose(ours, ref, **tolerance(case.dtype))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_ppo_clipped_objective_matches_lesson(case: Case):
    rng = np.random.default_rng(case.seed)
    ratio = np.exp(rng.normal(0, 0.4, (case.B, case.T))).astype(case.dtype)
    adv = rng.normal(0, 1, (case.B, case.T)).astype(case.dtype)
    ours = ppo_clipped_objective(ratio, adv, clip_epsilon=0.2)
    ref = torch_objective(T(ratio), T(adv), clip_epsilon=0.2).item()
    np.testing.assert_allclose(ours, ref, **tolerance(case.dtype))


# ---- the four sign/clip quadrants of the surrogate (ε = 0.2) ---------------------------------


@pytest.mark.parametrize(
    ("adv", "ratio", "expected", "why"),
    [
        (1.0, 1.5, -1.2, "A>0, ρ>1+ε: clipped, gain capped at (1+ε)A, no gradient"),
        (1.0, 0.5, -0.5, "A>0, ρ<1−ε: unclipped term is larger, taken: gradient pushes ρ up"),
        (-1.0, 1.5, 1.5, "A<0, ρ>1+ε: unclipped term is larger, taken: gradient pushes ρ down"),
        (-1.0, 0.5, 0.8, "A<0, ρ<1−ε: clipped, loss floor (1−ε)|A|, no gradient"),
        (1.0, 1.1, -1.1, "inside the clip range both terms agree"),
    ],
)
def test_surrogate_quadrants(adv, ratio, expected, why):
    loss = policy_surrogate_loss([[np.log(ratio)]], [[0.0]], [[adv]], [[1.0]], clip_range=0.2)
    assert loss == pytest.approx(expected, abs=1e-12), why
    assert ppo_clipped_objective([ratio], [adv], 0.2) == pytest.approx(-expected, abs=1e-12)


def test_surrogate_is_zero_when_advantage_is_zero():
    rng = np.random.default_rng(0)
    new, old = rng.normal(size=(2, 4, 7))
    assert policy_surrogate_loss(new, old, np.zeros((4, 7)), np.ones((4, 7))) == 0.0


def test_masked_losses_ignore_padding_even_when_it_is_not_finite():
    new = np.array([[0.1, np.inf], [0.2, np.nan]])
    m = np.array([[1.0, 0.0], [1.0, 0.0]])
    z = np.zeros((2, 2))
    assert np.isfinite(policy_surrogate_loss(new, z, np.ones((2, 2)), m))
    assert np.isfinite(value_clipped_loss(new, z, z, m))
    assert np.all(importance_ratio(new, z, m)[:, 1] == 1.0)


def test_all_masked_batch_gives_zero_loss_not_nan():
    z = np.zeros((3, 5))
    assert policy_surrogate_loss(z, z, np.ones((3, 5)), z) == 0.0
    assert value_clipped_loss(z, z, np.ones((3, 5)), z) == 0.0
    assert (
        policy_surrogate_loss(
            np.zeros((0, 5)), np.zeros((0, 5)), np.zeros((0, 5)), np.zeros((0, 5))
        )
        == 0.0
    )
    assert ppo_clipped_objective([], []) == 0.0


def test_value_clip_limits_how_far_the_critic_moves():
    # V_old = 0, V = 1, R = 1: unclipped error 0, clipped V = 0.2 has error 0.64 -> max is 0.64
    assert value_clipped_loss([[1.0]], [[0.0]], [[1.0]], [[1.0]], 0.2) == pytest.approx(0.5 * 0.64)
    # V moved toward R inside the range: plain half-MSE
    assert value_clipped_loss([[0.1]], [[0.0]], [[1.0]], [[1.0]], 0.2) == pytest.approx(0.5 * 0.81)


# ---- the source's printed examples, worked out -----------------------------------------------


def test_s21_clipped_objective_example_is_1_02_not_1_22():
    # min(r·A, clip(r, 0.8, 1.2)·A) with A = 1: r = 0.5 stays 0.5 (min(0.5, 0.8)),
    # r = 1 stays 1, and 1.5, 2, 3 are capped at 1.2. The source wrote 1.0 for the first term.
    expected = (0.5 + 1.0 + 1.2 + 1.2 + 1.2) / 5
    assert ppo_clipped_objective([0.5, 1.0, 1.5, 2.0, 3.0], [1.0] * 5, 0.2) == pytest.approx(
        expected
    )
    assert expected == pytest.approx(1.02)


def test_s21_negative_advantage_example():
    # A = −1: min(−r, −clip(r)) = −max(r, clip(r)) = −[0.8, 1, 1.5, 2, 3]
    expected = -(0.8 + 1.0 + 1.5 + 2.0 + 3.0) / 5
    assert ppo_clipped_objective([0.5, 1.0, 1.5, 2.0, 3.0], [-1.0] * 5, 0.2) == pytest.approx(
        expected
    )


def test_surrogate_example_of_exercise_3():
    # ρ = e^Δ; row 0 (A = 1): max(−ρ, −clip ρ); row 1 (A = −1): max(ρ, clip ρ)
    e = np.exp
    row0 = [-1.0, -1.2, -e(-0.5), -1.2]
    row1 = [0.8, 1.0, e(0.3), e(-0.1)]
    expected = (sum(row0) + sum(row1)) / 8
    new = [[0.0, 0.5, -0.5, 1.0], [-0.3, 0.0, 0.3, -0.1]]
    got = policy_surrogate_loss(new, np.zeros((2, 4)), [[1.0] * 4, [-1.0] * 4], np.ones((2, 4)))
    assert got == pytest.approx(expected, abs=1e-12)


# ---- bad input --------------------------------------------------------------------------------


def test_shape_mismatch_names_arguments_and_shapes():
    with pytest.raises(ValueError, match=r"new_logprobs \[2, 3\].*old_logprobs \[2, 4\]"):
        importance_ratio(np.zeros((2, 3)), np.zeros((2, 4)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"advantages \[3\]"):
        policy_surrogate_loss(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(3), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"ratio \[5\], advantage \[1\]"):
        ppo_clipped_objective(np.ones(5), np.ones(1))


def test_non_binary_mask_and_bad_clip_are_rejected():
    z = np.zeros((1, 2))
    with pytest.raises(ValueError, match=r"mask must hold only 0 and 1, found 0\.5"):
        importance_ratio(z, z, [[1.0, 0.5]])
    for bad in (0.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="clip_range must be a finite number > 0"):
            policy_surrogate_loss(z, z, z, z + 1, clip_range=bad)
        with pytest.raises(ValueError, match="clip_range_value"):
            value_clipped_loss(z, z, z, z + 1, clip_range_value=bad)
        with pytest.raises(ValueError, match="clip_epsilon"):
            ppo_clipped_objective([1.0], [1.0], clip_epsilon=bad)


def test_lists_and_integer_masks_are_accepted_and_float32_stays_float32():
    r = importance_ratio([[0.0, 1.0]], [[0.0, 0.0]], [[1, 1]])
    assert r.dtype == np.float64 and r[0, 1] == pytest.approx(np.e)
    r32 = importance_ratio(
        np.zeros((1, 2), np.float32), np.zeros((1, 2), np.float32), np.ones((1, 2), bool)
    )
    assert r32.dtype == np.float32
    assert isinstance(ppo_clipped_objective(1.5, 1.0), float)


def test_package_exports_what_each_operator_module_exports():
    import importlib
    import pkgutil

    import rl_ops_numpy

    exported = set()
    for info in pkgutil.iter_modules(rl_ops_numpy.__path__):
        if not info.name.startswith("_") and not info.ispkg:
            exported |= set(importlib.import_module(f"rl_ops_numpy.{info.name}").__all__)
    assert sorted(rl_ops_numpy.__all__) == sorted(exported)
    for name in rl_ops_numpy.__all__:
        assert callable(getattr(rl_ops_numpy, name))


# ---- the padding claims of Exercise 1, pinned with real torch ----------------------------------


def test_filling_padding_after_exp_gives_nan_and_masking_the_log_ratio_first_does_not():
    new = torch.tensor([[0.1, -float("inf")]])
    old = torch.tensor([[0.0, -float("inf")]])
    mask = torch.tensor([[1.0, 0.0]])
    after = (new - old).exp() * mask + (1 - mask)
    assert torch.isnan(after[0, 1])
    lesson = lesson_function("ppo/importance_ratio")(new, old, mask)
    assert lesson[0, 1].item() == 1.0
    np.testing.assert_allclose(importance_ratio(new.numpy(), old.numpy(), mask.numpy()),
                               lesson.numpy())


def test_where_after_exp_has_the_right_values_but_a_nan_gradient():
    new = torch.tensor([0.1, 1000.0], requires_grad=True)  # padding holds a huge log-prob
    mask = torch.tensor([True, False])
    ratio = torch.where(mask, new.exp(), torch.ones(2))
    assert torch.isfinite(ratio).all()
    ratio.sum().backward()
    assert torch.isnan(new.grad[1])  # 0 · exp(1000) = 0 · inf
    masked_first = torch.tensor([0.1, 1000.0], requires_grad=True)
    masked_first.masked_fill(~mask, 0.0).exp().sum().backward()
    assert torch.isfinite(masked_first.grad).all()
