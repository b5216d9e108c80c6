"""rl_ops_numpy.dpo against the PyTorch lesson code, plus exactness for large margins."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rl_ops_numpy import dpo_loss

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
