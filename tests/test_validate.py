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
    "c": lambda x: ops.reverse_discounted_sum(F32, x),
    # read by other loss types than "hinge", and checked all the same
    "label_smoothing": lambda x: ops.preference_loss("hinge", *[F32[0]] * 4, label_smoothing=x),
    "discopop_tau": lambda x: ops.preference_loss("hinge", *[F32[0]] * 4, discopop_tau=x),
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


FLAGS = {
    "shift_mean": lambda x: ops.masked_whiten(F32, MASK64, shift_mean=x),
    "scale_by_std": lambda x: ops.group_advantages(np.arange(4.0), 2, scale_by_std=x),
    "kl_times_ratio": lambda x: ops.grpo_policy_loss(F32, F32, F32[:, 0], MASK64, F32, beta=0.1,
                                                     kl_times_ratio=x),
    "overwrite_x": lambda x: ops.reverse_discounted_sum(F32.copy(), 0.5, overwrite_x=x),
}


@pytest.mark.parametrize("name", sorted(FLAGS))
@pytest.mark.parametrize("bad", ["False", 0, 1, None, float("nan")])
def test_a_switch_that_is_not_a_bool_is_refused_by_name_not_read_by_its_truth(name, bad):
    # "False" and NaN are true in Python: read by their truth they would switch the option on
    with pytest.raises(ValueError, match=f"^{name} must be True or False, got "):
        FLAGS[name](bad)


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_a_numpy_bool_is_a_switch(name):
    for good in (np.True_, np.False_, np.array(True)):
        FLAGS[name](good)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ops.grpo_policy_loss(F32, F32, F32[:, 0], MASK64, loss_agg_mode="mean"),
        lambda: ops.cispo_loss(F32, F32, F32[:, 0], MASK64, loss_agg_mode="mean"),
        lambda: ops.kl_cov_loss(F32, F32, F32[:, 0], MASK64, loss_agg_mode="mean"),
    ],
    ids=["grpo_policy_loss", "cispo_loss", "kl_cov_loss"],
)
def test_an_unknown_loss_agg_mode_is_refused_under_its_own_name(call):
    with pytest.raises(ValueError, match=r"^loss_agg_mode must be one of 'token-mean'"):
        call()


# ---- NaN on a response token: NaN out, or a ValueError, in every public operator ----------------

N = 4  # sequences, two groups of two
S = np.linspace(-2.0, 1.0, N)  # [N] scores or sequence log-probs
LOGITS = np.linspace(-1.0, 1.0, B * T * 3).reshape(B, T, 3)
ONES = np.ones((B, T))
X = np.linspace(-1.0, 1.0, B * T).reshape(B, T)  # [B, T] data
ADV = np.array([-1.0, 1.0])  # one per response


def _pair(**extra):
    return {"chosen_logps": S, "rejected_logps": S[::-1].copy(), "ref_chosen_logps": S * 0.5,
            "ref_rejected_logps": S * 0.25, **extra}


def _ratio(**extra):
    return {"new_logprobs": X, "old_logprobs": X * 0.5, "advantages": ADV, **extra}


# name: (operator, its float data arguments (NaN goes in each in turn), its other arguments)
OPERATORS = {
    "aggregate_loss": (ops.aggregate_loss, {"loss_mat": X}, {"mask": ONES}),
    "apo_loss": (ops.apo_loss, _pair(), {}),
    "cispo_loss": (ops.cispo_loss, _ratio(), {"mask": ONES}),
    "compute_gae": (ops.compute_gae, {"rewards": X, "values": X * 0.5}, {"mask": ONES}),
    "compute_gae_episode": (ops.compute_gae_episode, {"rewards": X[0], "values": X[1]}, {}),
    "dpo_loss": (ops.dpo_loss, {"log_p_w": S, "log_p_l": S[::-1].copy(), "ref_log_p_w": S * 0.5,
                                "ref_log_p_l": S * 0.25}, {}),
    "group_advantages": (ops.group_advantages, {"scores": S}, {"group_size": 2}),
    "grpo_policy_loss": (ops.grpo_policy_loss, _ratio(ref_logprobs=X * 0.25),
                         {"mask": ONES, "beta": 0.1}),
    "gspo_loss": (ops.gspo_loss, _ratio(), {"mask": ONES}),
    "high_entropy_mask": (ops.high_entropy_mask, {"entropies": X + 1}, {"mask": ONES,
                                                                         "threshold": 0.5}),
    "importance_ratio": (ops.importance_ratio, {"new_logprobs": X, "old_logprobs": X * 0.5},
                         {"mask": ONES}),
    "informative_groups": (ops.informative_groups, {"scores": S}, {"group_size": 2}),
    "ipo_loss": (ops.ipo_loss, _pair(), {"chosen_lengths": np.arange(1, N + 1),
                                         "rejected_lengths": np.arange(1, N + 1)}),
    "kl_cov_loss": (ops.kl_cov_loss, _ratio(), {"mask": ONES, "k_ratio": 0.5}),
    "kl_estimators": (ops.kl_estimators, {"p_logprobs": X, "q_logprobs": X * 0.5}, {}),
    "kto_loss": (ops.kto_loss, {"logps": S, "ref_logps": S * 0.5},
                 {"desirable": np.arange(N) % 2 == 0, "kl": 0.1}),
    "last_token_index": (ops.last_token_index, {}, {"response_mask": ONES}),
    "masked_whiten": (ops.masked_whiten, {"values": X}, {"mask": ONES}),
    "off_policy_sequence_mask": (ops.off_policy_sequence_mask,
                                 {"advantages": ADV, "logprobs": X, "sampling_logprobs": X + 1},
                                 {"mask": ONES, "threshold": 0.5}),
    "orpo_odds_ratio_loss": (ops.orpo_odds_ratio_loss, {"chosen_avg_logps": S - 2,
                                                        "rejected_avg_logps": S - 3}, {}),
    "overlong_penalty": (ops.overlong_penalty, {"lengths": np.array([1.0, 9.0])},
                         {"max_length": 10, "buffer": 4}),
    "policy_surrogate_loss": (ops.policy_surrogate_loss, _ratio(advantages=X), {"mask": ONES}),
    "ppo_clipped_objective": (ops.ppo_clipped_objective, {"ratio": X + 1, "advantage": X}, {}),
    "preference_loss": (ops.preference_loss, _pair(), {"loss_type": "discopop"}),
    "reinforce_pp_advantages": (ops.reinforce_pp_advantages, {"token_rewards": X},
                                {"mask": ONES}),
    "reverse_discounted_sum": (ops.reverse_discounted_sum, {"x": X}, {"c": 0.9}),
    "reward_model_loss": (ops.reward_model_loss, {"chosen_scores": S, "rejected_scores": S[::-1],
                                                  "margin": S * 0.1}, {}),
    "rloo_advantages": (ops.rloo_advantages, {"scores": S}, {"group_size": 2}),
    "robust_dpo_loss": (ops.robust_dpo_loss, _pair(), {}),
    "rollout_is_weights": (ops.rollout_is_weights, {"train_logprobs": X,
                                                    "rollout_logprobs": X * 0.5}, {"mask": ONES}),
    "sapo_loss": (ops.sapo_loss, _ratio(), {"mask": ONES}),
    "shape_token_rewards": (ops.shape_token_rewards, {"rm_score": ADV, "logprobs": X,
                                                      "ref_logprobs": X * 0.5},
                            {"response_mask": ONES}),
    "simpo_loss": (ops.simpo_loss, {"chosen_avg_logps": S, "rejected_avg_logps": S[::-1]}, {}),
    "token_entropy": (ops.token_entropy, {"logits": LOGITS}, {}),
    "token_logprobs": (ops.token_logprobs, {"logits": LOGITS}, {"ids": np.zeros((B, T), int)}),
    "value_clipped_loss": (ops.value_clipped_loss, {"new_values": X, "old_values": X * 0.5,
                                                    "returns": X * 0.25}, {"mask": ONES}),
}

# where a NaN on a response token deliberately gives a number, as the docstrings say: the
# off-policy mask reads a NaN log-prob as a KL of 0 (as TRL) and a NaN advantage as not ≥ 0, and
# IcePop's band drops a NaN weight to 0 (as verl)
NAN_GIVES_A_NUMBER = {
    ("off_policy_sequence_mask", "advantages"), ("off_policy_sequence_mask", "logprobs"),
    ("off_policy_sequence_mask", "sampling_logprobs"),
    ("rollout_is_weights (IcePop)", "train_logprobs"),
    ("rollout_is_weights (IcePop)", "rollout_logprobs"),
}
OPERATORS["rollout_is_weights (IcePop)"] = (ops.rollout_is_weights, OPERATORS[
    "rollout_is_weights"][1], {"mask": ONES, "threshold": (0.5, 2.0)})


def test_the_nan_table_holds_every_public_operator():
    assert {name.split(" ")[0] for name in OPERATORS} == set(ops.__all__)


def _holds_nan(out) -> bool:
    if isinstance(out, tuple):
        return any(_holds_nan(x) for x in out)
    a = np.asarray(out)
    return a.dtype.kind == "f" and bool(np.isnan(a).any())


@pytest.mark.parametrize(("name", "arg"), [(name, arg) for name, (_, data, _) in OPERATORS.items()
                                           for arg in data])
def test_a_nan_on_a_response_token_gives_nan_or_a_value_error_never_a_quiet_number(name, arg):
    fn, data, other = OPERATORS[name]
    assert not _holds_nan(fn(**data, **other))  # the clean input gives numbers
    bad = np.array(data[arg], dtype=np.float64)
    bad.reshape(-1)[0] = np.nan  # every mask here is all ones: a response token
    try:
        with np.errstate(invalid="ignore"):  # NumPy's warning for a NaN it was given
            out = fn(**{**data, arg: bad}, **other)
    except ValueError as e:  # refused, by name: the operators that need finite input
        assert str(e).startswith(f"{arg} must be ") and "nan" in str(e)
        return
    assert _holds_nan(out) != ((name, arg) in NAN_GIVES_A_NUMBER)
