"""rl_ops_numpy._validate through every operator: dtypes kept, bad input refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import rl_ops_numpy as ops

B, T = 2, 5
F32 = np.zeros((B, T), np.float32)
MASK64 = np.ones((B, T))  # a mask built with plain np.ones is float64


def _with_masks(mask):
    """Every operator with a mask, called on float32 data and the given mask."""
    return {
        "importance_ratio": lambda: ops.importance_ratio(F32, F32, mask),
        "compute_gae": lambda: ops.compute_gae(F32, F32, mask)[0],
        "policy_surrogate_loss": lambda: ops.policy_surrogate_loss(F32, F32, F32, mask),
        "value_clipped_loss": lambda: ops.value_clipped_loss(F32, F32, F32, mask),
        "shape_token_rewards": lambda: ops.shape_token_rewards(
            np.zeros(B, np.float32), F32, F32, mask
        ),
        # advantages one per response, the other arguments [B, T]
        "grpo_policy_loss": lambda: ops.grpo_policy_loss(F32, F32, F32[:, 0], mask),
        "cispo_loss": lambda: ops.cispo_loss(F32, F32, F32[:, 0], mask),
        "off_policy_sequence_mask": lambda: ops.off_policy_sequence_mask(F32[:, 0], F32, F32,
                                                                          mask, 0.1),
    }


@pytest.mark.parametrize("name", sorted(_with_masks(MASK64)))
def test_a_float64_mask_does_not_widen_float32_data(name):
    out = _with_masks(MASK64)[name]()
    if isinstance(out, np.ndarray):
        assert out.dtype == np.float32
    f32_dones = ops.compute_gae_episode(F32[0], F32[0], dones=np.zeros(T))[0]
    assert f32_dones.dtype == np.float32


@pytest.mark.parametrize("name", sorted(_with_masks(MASK64)))
def test_a_mask_other_than_0_and_1_is_refused_by_name(name):
    bad = np.ones((B, T), np.float32)
    bad[1, 2] = 0.5
    with pytest.raises(ValueError, match=r"mask must hold only 0 and 1, found 0\.5"):
        _with_masks(bad)[name]()


SCALARS = {
    "clip_range": lambda x: ops.policy_surrogate_loss(F32, F32, F32, F32 + 1, clip_range=x),
    "clip_epsilon": lambda x: ops.ppo_clipped_objective(F32, F32, clip_epsilon=x),
    "clip_range_value": lambda x: ops.value_clipped_loss(F32, F32, F32, F32 + 1, x),
    "kl_coef": lambda x: ops.shape_token_rewards(np.zeros(B, np.float32), F32, F32, F32 + 1, x),
    "beta": lambda x: ops.dpo_loss(F32, F32, F32, F32, beta=x),
    "gamma": lambda x: ops.compute_gae(F32, F32, F32 + 1, gamma=x),
    "lam": lambda x: ops.compute_gae(F32, F32, F32 + 1, lam=x),
    "gae_lambda": lambda x: ops.compute_gae_episode(F32[0], F32[0], gae_lambda=x),
    "next_value": lambda x: ops.compute_gae_episode(F32[0], F32[0], next_value=x),
}


@pytest.mark.parametrize("name", sorted(SCALARS))
@pytest.mark.parametrize("bad", [True, None, "0.2", [0.2], np.array([0.5]), float("nan")])
def test_a_scalar_parameter_that_is_not_one_number_is_refused_by_name(name, bad):
    with pytest.raises(ValueError, match=f"^{name} must be "):
        SCALARS[name](bad)


@pytest.mark.parametrize("name", sorted(SCALARS))
def test_numpy_float64_scalars_do_not_widen_float32_results(name):
    # NEP 50: a NumPy float64 scalar would promote float32 arrays; a Python float does not
    out = SCALARS[name](np.float64(0.5))
    out = out[0] if isinstance(out, tuple) else out
    if isinstance(out, np.ndarray):
        assert out.dtype == np.float32
    assert SCALARS[name](np.array(0.5)) is not None  # a 0-d array is one number


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ops.value_clipped_loss(F32, F32[:, :4], F32, F32), r"old_values \[2, 4\]"),
        (lambda: ops.compute_gae_episode(F32[0], F32[0, :4]), r"rewards \[5\], values \[4\]"),
        (lambda: ops.compute_gae_episode(F32[0], F32[0], dones=[0, 1]), r"dones \[2\]"),
        (lambda: ops.shape_token_rewards(1.0, F32, F32, F32), r"rm_score must be \[B\]"),
        (lambda: ops.importance_ratio(F32[0], F32[0], F32[0]), r"new_logprobs must be \[B, T\]"),
        (lambda: ops.grpo_policy_loss(F32, F32, F32[:, 0], F32, ref_logprobs=F32[:, :4], beta=1),
         r"mask \[2, 5\], ref_logprobs \[2, 4\]"),
    ],
)
def test_shape_errors_name_the_arguments_and_their_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_mask_is_checked_in_its_own_dtype_not_after_rounding_to_the_data():
    # 1 + 1e-10 in float64 would round to exactly 1.0 in float32
    almost = np.ones((B, T))
    almost[0, 0] = 1 + 1e-10
    with pytest.raises(ValueError, match="mask must hold only 0 and 1"):
        ops.importance_ratio(F32, F32, almost)
