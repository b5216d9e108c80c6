"""The references against verl, TRL and OpenRLHF at the pinned versions, offline.

``make peers`` ran the libraries' own code (lifted from the pinned wheels) and wrote inputs,
outputs and provenance to ``tests/peers/<library>.json``. Each test here takes one operator's
cases, runs our reference on the same inputs with the library's convention, and compares in
value; where a page teaches a gradient, the lesson's PyTorch answer is differentiated and
compared with the library's autograd gradient. Where a reference deliberately differs, the test
asserts the difference its docstring states.

Tolerances. The inputs are exact (multiples of 2⁻¹⁰), so the two sides differ only by rounding:
summation order, exp/log to an ulp, statistics taken in float64 by the references and in the
input dtype by torch. ``rtol = 2e-5`` in float32 (≈ 170 ulps) and ``1e-10`` in float64 cover
that with room, and ``atol`` (relative to the case's largest magnitude) covers results that
cancel to near 0. Wider tolerances are named where a library adds an epsilon (verl's
``masked_mean`` divides by ``Σm + 1e-8``) or computes in float32 whatever the input (OpenRLHF's
KL and experience maker). Nothing is compared bit for bit: exp, log and pow differ by an ulp
between CPUs.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from peers.vectors import decode, read
from rl_ops_numpy import (
    aggregate_loss,
    compute_gae,
    dpo_loss,
    group_advantages,
    grpo_policy_loss,
    high_entropy_mask,
    kl_estimators,
    last_token_index,
    masked_whiten,
    policy_surrogate_loss,
    reinforce_pp_advantages,
    reward_model_loss,
    rloo_advantages,
    shape_token_rewards,
    token_entropy,
    token_logprobs,
    value_clipped_loss,
)
from site_build import pins

from .conftest import ROOT, lesson_function

VECTORS = ROOT / "tests" / "peers"
PINS = pins.load()
LIBRARIES = ("verl", "trl", "openrlhf", "trl_ppo")


@functools.cache
def vectors(key: str) -> dict:
    return read(VECTORS / f"{key}.json")


TESTED: set[tuple[str, str]] = set()  # (library, operator) pairs some test compares


def cases(key: str, operator: str) -> list:
    """One pytest param per case of ``operator`` in ``tests/peers/<key>.json``, decoded."""
    TESTED.add((key, operator))
    return [pytest.param(decode(c), id=c["name"])
            for c in vectors(key)["operators"][operator]["cases"]]


def tol(dtype, scale: float = 1.0, **wider: float) -> dict[str, float]:
    """``assert_allclose`` tolerances for ``dtype`` (see the module docstring)."""
    f32 = np.dtype(dtype) == np.float32
    t = {"rtol": 2e-5 if f32 else 1e-10, "atol": (2e-6 if f32 else 1e-12) * max(1.0, scale)}
    return {k: max(t[k], wider.get(k, 0.0)) for k in t}  # a named reason only widens


def close(ours, theirs, dtype=None, scale: float = 0.0, **wider: float) -> None:
    """``ours`` equals the library's ``theirs`` within :func:`tol` of ``dtype`` (``theirs``'s
    own if not given); ``atol`` grows with ``theirs``'s largest magnitude, or with ``scale``
    when the result is a difference of larger inputs."""
    dtype = dtype or np.asarray(theirs).dtype
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    scale = max(scale, float(np.nanmax(np.abs(theirs))) if theirs.size else 1.0)
    np.testing.assert_allclose(ours, theirs, **tol(dtype, scale, **wider))


def raised(case: dict) -> str | None:
    return case["outputs"].get("raises")


def no_token_gives_nan_there_and_zero_here(mask: np.ndarray, ours: float, theirs) -> bool:
    """A batch with no response token: the library divides 0 by 0 (NaN); the reference gives
    0.0. True if that is the case (and asserted)."""
    if np.any(mask):
        return False
    assert math.isnan(float(theirs)) and ours == 0.0
    return True


def dtype_of(case: dict):
    return next(v.dtype for v in case["inputs"].values()
                if isinstance(v, np.ndarray) and v.dtype.kind == "f")


# ---- provenance -------------------------------------------------------------------------------


@pytest.mark.parametrize("key", LIBRARIES)
def test_each_vector_file_was_made_from_the_wheel_pinned_in_pins_toml(key):
    pin, stored = PINS[key], vectors(key)["pin"]
    # a version bump in pins.toml with stale vectors fails here: run `make peers`
    assert stored == pin.provenance()
    for name, op in vectors(key)["operators"].items():
        src = op["source"]
        assert src["module"].endswith(".py") and not src["module"].startswith("/"), name
        assert src["lines"][0] <= src["lines"][1] and op["cases"], name


def test_every_operator_in_the_vectors_is_compared_by_a_test():
    written = {(key, op) for key in LIBRARIES for op in vectors(key)["operators"]}
    assert written <= TESTED, sorted(written - TESTED)


# The configuration defaults the docstrings state, as each library defines them (make peers
# read them from the wheels: dataclass fields, YAML keys, argparse options, with their lines).
STATED_DEFAULTS = {
    "verl": {
        "verl/trainer/config/actor/actor.yaml:clip_ratio": 0.2,
        "verl/trainer/config/actor/actor.yaml:clip_ratio_low": 0.2,
        "verl/trainer/config/actor/actor.yaml:clip_ratio_high": 0.2,
        "verl/trainer/config/actor/actor.yaml:clip_ratio_c": 3.0,
        "verl/trainer/config/actor/actor.yaml:loss_agg_mode": "token-mean",
        "verl/trainer/config/actor/actor.yaml:kl_loss_coef": 0.001,
        "verl/trainer/config/actor/actor.yaml:kl_loss_type": "low_var_kl",
        "verl/trainer/config/critic/critic.yaml:cliprange_value": 0.5,
        "verl/trainer/config/ppo_trainer.yaml:algorithm.kl_penalty": "kl",
        "verl/trainer/config/algorithm/rollout_correction.yaml:rollout_is": None,
    },
    "trl": {
        "GRPOConfig.beta": 0.0, "GRPOConfig.epsilon": 0.2, "GRPOConfig.epsilon_high": None,
        "GRPOConfig.delta": None, "GRPOConfig.loss_type": "dapo",
        "GRPOConfig.scale_rewards": "group", "GRPOConfig.use_bias_correction_kl": True,
        "GRPOConfig.use_vllm": False, "GRPOConfig.vllm_importance_sampling_correction": True,
        "GRPOConfig.vllm_importance_sampling_mode": "sequence_mask",
        "GRPOConfig.vllm_importance_sampling_clip_max": 3.0,
        "RLOOConfig.beta": 0.05, "RLOOConfig.normalize_advantages": False,
        "DPOConfig.beta": 0.1, "DPOConfig.loss_type": ["sigmoid"],
        "DPOConfig.label_smoothing": 0.0, "RewardConfig.center_rewards_coefficient": None,
        "GRPOTrainer._compute_loss loss types": ["bnpo", "cispo", "dapo", "dr_grpo", "grpo",
                                                 "luspo", "sapo", "vespo"],
        "files defining masked_whiten": [],
    },
    "openrlhf": {
        "--critic.value_clip": 0.5, "--actor.dual_clip": None, "--algo.kl.estimator": "k1",
        "--algo.kl.unbiased_gradient": False,
    },
    "trl_ppo": {
        "PPOConfig.cliprange_value": 0.2, "PPOConfig.kl_estimator": "k1",
        "PPOConfig.kl_coef": 0.05, "PPOConfig.whiten_rewards": False,
    },
}


@pytest.mark.parametrize(("key", "name"), [(k, n) for k, d in STATED_DEFAULTS.items() for n in d],
                         ids=lambda x: x)
def test_each_default_a_docstring_states_is_the_pinned_librarys(key, name):
    recorded = vectors(key)["defaults"][name]
    assert recorded["value"] == STATED_DEFAULTS[key][name], recorded


# ---- verl ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("verl", "compute_gae_advantage_return"))
def test_gae_returns_equal_verl_and_its_whitened_advantages_on_every_layout(case):
    i, o = case["inputs"], case["outputs"]
    m = i["response_mask"]
    real = m != 0
    adv, ret = compute_gae(i["token_level_rewards"], i["values"], m, **case["kwargs"])
    close(ret[real], o["returns"][real])
    # verl whitens inside; its masked_mean divides by Σm + 1e-8 (a relative 1e-8/Σm)
    close(masked_whiten(adv, m)[real], o["advantages"][real], atol=1e-6)
    # here both are 0 on padding; verl leaves its carried values there
    assert not adv[~real].any() and not ret[~real].any()


_VERL_KL = {"kl": 0, "k1": 0, "abs": 0, "mse": 1, "k2": 1, "low_var_kl": 2, "k3": 2}


@pytest.mark.parametrize("case", cases("verl", "kl_penalty"))
def test_kl_estimators_equal_verl_kl_penalty_and_low_var_kl_is_k3_capped_at_10(case):
    i, o, mode = case["inputs"], case["outputs"], case["kwargs"]["kl_penalty"]
    base = mode.rstrip("+")
    k1, k2, k3 = kl_estimators(i["ref_logprob"], i["logprob"])
    want = {"kl": k1, "k1": k1, "abs": np.abs(k1), "mse": k2, "k2": k2,
            "low_var_kl": np.minimum(k3, 10), "k3": np.minimum(k3, 10)}[base]
    close(want, o["kl"])


def _lesson_kl_grads(ref: np.ndarray, logprob: np.ndarray) -> list[np.ndarray]:
    """d(sum of each of the lesson's K1, K2, K3)/d log π, by autograd through its answer."""
    kl = lesson_function("ppo/kl_estimators")
    grads = []
    for k in range(3):
        q = torch.tensor(logprob, requires_grad=True)
        kl(torch.tensor(ref), q)[k].sum().backward()
        grads.append(q.grad.numpy())
    return grads


@pytest.mark.parametrize("case", cases("verl", "kl_penalty"))
def test_lesson_gradients_equal_verl_kl_penalty_and_k3_plus_has_k2s_gradient(case):
    i, o, mode = case["inputs"], case["outputs"], case["kwargs"]["kl_penalty"]
    g1, g2, g3 = _lesson_kl_grads(i["ref_logprob"], i["logprob"])
    theirs = o["grad_logprob"]
    if mode.endswith("+"):
        # "k3+", "k1+": the value of k3 (k1), the gradient of k2 (straight-through)
        close(g2, theirs)
    elif mode in ("kl", "k1"):
        close(g1, theirs)
    elif mode == "abs":
        close(np.sign(i["logprob"] - i["ref_logprob"]) * g1, theirs)
    elif mode in ("mse", "k2"):
        close(g2, theirs)
    else:  # k3, clamped: no gradient where the cap of 10 holds
        k3 = kl_estimators(i["ref_logprob"], i["logprob"])[2]
        capped = k3 >= 10
        assert capped.any() and not theirs[capped].any()
        close(g3[~capped], theirs[~capped])


@pytest.mark.parametrize("case", cases("verl", "apply_kl_penalty"))
def test_shape_token_rewards_equals_verl_apply_kl_penalty_but_puts_the_score_on_the_last_token(
    case,
):
    i, o, beta = case["inputs"], case["outputs"], case["kwargs"]["kl_coef"]
    m = i["response_mask"]
    ours = shape_token_rewards(i["score"], i["old_log_probs"], i["ref_log_prob"], m, beta)
    theirs = o["token_level_rewards"]
    last = last_token_index(m)
    length = m.sum(-1).astype(int)
    right = (last == length - 1) | (last < 0)
    # right-padded rows (and the empty one): the same rewards
    close(ours[right], theirs[right])
    # other rows: verl's reward manager put the score at length − 1, not on the last token
    assert (~right).sum() >= 3  # left padding, holes, one token after padding
    moved = ours.copy()
    for b in np.nonzero(~right)[0]:
        moved[b, last[b]] -= i["score"][b]
        moved[b, length[b] - 1] += i["score"][b]
    close(moved, theirs)


@pytest.mark.parametrize("case", cases("verl", "compute_value_loss"))
def test_value_clipped_loss_equals_verl_compute_value_loss(case):
    i, kw = case["inputs"], case["kwargs"]
    ours = value_clipped_loss(i["vpreds"], i["values"], i["returns"], i["response_mask"],
                              kw["cliprange_value"])
    if not no_token_gives_nan_there_and_zero_here(i["response_mask"], ours,
                                                  case["outputs"]["vf_loss"]):
        close(ours, case["outputs"]["vf_loss"])


def _clamped(new: np.ndarray, old: np.ndarray, bound: float = 20.0) -> np.ndarray:
    """``old + clamp(new − old, −20, 20)``: the log-ratio verl and OpenRLHF exponentiate."""
    return (old + np.clip(new - old, -bound, bound)).astype(new.dtype)


@pytest.mark.parametrize("case", cases("verl", "compute_policy_loss_vanilla"))
def test_policy_losses_with_dual_clip_equal_verl_on_log_ratios_clamped_to_20(case):
    i, kw = case["inputs"], case["kwargs"]
    old, adv, m = i["old_log_prob"], i["advantages"], i["response_mask"]
    assert np.abs(i["log_prob"] - old).max() == 30  # e^±30 is in the inputs
    new = _clamped(i["log_prob"], old)
    if kw["clip_ratio_low"] is None:
        ours = policy_surrogate_loss(new, old, adv, m, kw["clip_ratio"],
                                     dual_clip=kw["clip_ratio_c"])
    else:
        ours = grpo_policy_loss(new, old, adv, m, clip_low=kw["clip_ratio_low"],
                                clip_high=kw["clip_ratio_high"], dual_clip=kw["clip_ratio_c"],
                                loss_agg_mode=kw["loss_agg_mode"])
    # seq-mean-token-mean: verl divides each row by n_b + 1e-8
    close(ours, case["outputs"]["pg_loss"], rtol=1e-8)


@pytest.mark.parametrize("case", cases("verl", "masked_whiten"))
def test_masked_whiten_equals_verl_on_response_tokens_and_is_zero_on_padding(case):
    i, shift = case["inputs"], case["kwargs"]["shift_mean"]
    v, m = i["values"], i["mask"]
    real = m != 0
    ours = masked_whiten(v, m, shift_mean=shift)
    assert not ours[~real].any()
    if raised(case):
        # verl's masked_var refuses fewer than two tokens; here: zeros, or one token's variance 0
        assert raised(case).startswith("ValueError")
        assert real.sum() <= 1
        np.testing.assert_array_equal(ours[real], 0 if shift else v[real])
        return
    # verl's masked_mean divides by Σm + 1e-8: the mean moves by a relative 1e-8/Σm
    close(ours[real], case["outputs"]["whitened"][real], atol=1e-6)


def _groups_of(index: np.ndarray) -> list[np.ndarray]:
    return [np.nonzero(index == g)[0] for g in np.unique(index)]


def _check_outcome(case, ours_fn, singleton_fn) -> None:
    """Compare a group advantage with verl's: groups of one are verl's own rule (here they
    raise); groups of equal scores are exactly 0 here."""
    i = case["inputs"]
    s, index = i["scores"], i["index"]
    # verl returns [B, T] × mask: 0 on padding
    assert not case["outputs"]["advantages"][i["response_mask"] == 0].any()
    theirs = case["outputs"]["advantages"][:, -1]  # every row's last token is a response token
    for rows in _groups_of(index):
        if len(rows) == 1:
            with pytest.raises(ValueError, match="group_size must be at least 2"):
                ours_fn(s[rows], 1)
            close(singleton_fn(s[rows]), theirs[rows])
            continue
        ours = ours_fn(s[rows], len(rows))
        if np.all(s[rows] == s[rows][0]):
            # no signal: exactly 0 here; verl's is (rounding of the mean) / (std + ε)
            assert not ours.any()
            assert np.all(theirs[rows] == theirs[rows][0])
        else:
            close(ours, theirs[rows], scale=float(np.abs(s).max()))


@pytest.mark.parametrize("case", cases("verl", "compute_grpo_outcome_advantage"))
def test_group_advantages_equal_verl_grpo_outcome_advantage_and_equal_groups_are_zero(case):
    kw = case["kwargs"]
    eps, norm = kw["epsilon"], kw["norm_adv_by_std_in_grpo"]

    def ours(s, G):
        return group_advantages(s, G, scale_by_std=norm, eps=eps)

    # verl: a group of one has mean 0 and std 1 (torch.tensor(1.0), so 1 + ε is rounded to
    # float32 even for float64 scores)
    _check_outcome(case, ours, lambda s: s / np.float32(1 + eps) if norm else s)


def test_the_equal_group_numbers_in_the_group_advantages_docstring_are_verls():
    found = {}
    for c in vectors("verl")["operators"]["compute_grpo_outcome_advantage"]["cases"]:
        if c["name"].startswith("float32") and c["kwargs"]["norm_adv_by_std_in_grpo"]:
            found[c["name"].split(" epsilon")[0]] = decode(c["outputs"])["advantages"][0, -1]
    assert found["float32 eight copies of 0.7"] == pytest.approx(0.056, abs=5e-4)
    assert found["float32 seven copies of 1000.1"] == pytest.approx(-0.91, abs=5e-3)
    assert "+0.056" in group_advantages.__doc__ and "−0.91" in group_advantages.__doc__


def test_what_the_grpo_page_says_of_equal_groups_in_verl_and_trl():
    # the GRPO page: unmasked, verl gives each of eight float32 0.7 about +0.06 and each of seven
    # 1000.1 about −0.9; TRL's ε = 1e-4 makes that about 100 times smaller for 0.7 but only
    # 2.5 times for 1000.1 (its std, 7e-5, is not far below ε)
    def first(key, operator, name):
        (c,) = [c for c in vectors(key)["operators"][operator]["cases"] if c["name"] == name]
        return float(np.ravel(decode(c)["outputs"]["advantages"])[-1])

    verl = {n: first("verl", "compute_grpo_outcome_advantage",
                     f"float32 {n} epsilon=1e-06 norm_adv_by_std_in_grpo=True")
            for n in ("eight copies of 0.7", "seven copies of 1000.1")}
    trl = {n: first("trl", "GRPOTrainer._generate_and_score_completions (advantages)",
                    f"float32 {n} scale_rewards=group") for n in verl}
    assert round(verl["eight copies of 0.7"], 2) == 0.06
    assert round(verl["seven copies of 1000.1"], 1) == -0.9
    assert 50 < verl["eight copies of 0.7"] / trl["eight copies of 0.7"] < 200
    assert 2 < verl["seven copies of 1000.1"] / trl["seven copies of 1000.1"] < 3


@pytest.mark.parametrize("case", cases("verl", "compute_rloo_outcome_advantage"))
def test_rloo_advantages_equal_verl_rloo_outcome_advantage(case):
    # verl: a group of one keeps its raw score
    _check_outcome(case, rloo_advantages, lambda s: s)


@pytest.mark.parametrize("case", cases("verl", "compute_reinforce_plus_plus_outcome_advantage"))
def test_reinforce_pp_equals_verl_on_every_layout_holes_included(case):
    # W1: verl 0.9.1 carries the return across holes undiscounted and masks its returns
    i, o = case["inputs"], case["outputs"]
    r, m = i["token_level_rewards"], i["response_mask"]
    adv, ret = reinforce_pp_advantages(r, m, case["kwargs"]["gamma"])
    if raised(case):
        # verl's masked_var refuses fewer than two response tokens; here: advantages 0
        assert raised(case).startswith("ValueError") and m.sum() <= 1
        assert not adv.any()
        np.testing.assert_array_equal(ret, np.where(m != 0, r, 0))
        return
    close(ret, o["returns"])
    close(adv, o["advantages"], atol=1e-6)  # masked_mean's Σm + 1e-8


@pytest.mark.parametrize("case", cases("verl", "agg_loss"))
def test_aggregate_loss_equals_verl_agg_loss_in_all_five_modes(case):
    i, kw = case["inputs"], case["kwargs"]
    mode, factor = kw["loss_agg_mode"], kw["loss_scale_factor"]
    ours = aggregate_loss(i["loss_mat"], i["loss_mask"], mode, horizon=factor)
    theirs = case["outputs"]["loss"]
    if not i["loss_mask"].any() and mode != "token-sum":
        # no response token: verl divides 0 by 0; here 0.0
        assert math.isnan(theirs) and ours == 0.0
        return
    # "token-mean" divides by the token count with no epsilon (W3); "seq-mean-token-mean"
    # divides each row by n_b + 1e-8
    wider = {"rtol": 1e-8} if mode == "seq-mean-token-mean" else {}
    close(ours, theirs, dtype_of(case), **wider)


# ---- TRL ----------------------------------------------------------------------------------------

# TRL's nanstd and TRL 1.12.0's masked_var with a bool mask: count / (count − 1) of integer
# counts is a float32 tensor (a relative error up to 6e-8 in float64)
BESSEL = {"rtol": 2e-7, "atol": 2e-7}  # the inputs are O(1)

# loss_type → (aggregate_loss mode, whether empty rows count in the mean over rows)
_TRL_LOSS_TYPES = {"bnpo": ("token-mean", False), "dapo": ("token-mean", False),
                   "grpo": ("seq-mean-token-mean", True),
                   "dr_grpo": ("seq-mean-token-sum-norm", True)}


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer._compute_loss"))
def test_grpo_policy_loss_equals_trl_compute_loss_for_each_loss_type(case):
    i, kw = case["inputs"], case["kwargs"]
    mode, all_rows = _TRL_LOSS_TYPES[kw["loss_type"]]
    m = i["completion_mask"]
    ours = grpo_policy_loss(
        i["per_token_logps"], i["old_per_token_logps"], i["advantages"], m,
        i["ref_per_token_logps"], clip_low=kw["epsilon_low"], clip_high=kw["epsilon_high"],
        beta=kw["beta"], loss_agg_mode=mode, kl_times_ratio=kw["use_bias_correction_kl"],
        dual_clip=None)
    if all_rows:  # TRL's "grpo" and "dr_grpo" count a row with no token as a 0 in the mean
        B, has = m.shape[0], np.count_nonzero(m.any(axis=1))
        assert has < B
        ours = ours * has / B
    close(ours, case["outputs"]["loss"])


@pytest.mark.parametrize("case", [c for c in cases("trl", "GRPOTrainer._compute_loss")
                                  if c.values[0]["kwargs"]["loss_type"] == "bnpo"])
def test_lesson_grpo_policy_loss_has_trls_gradient_and_rho_k3_has_rho_times_k2s(case):
    """K3 in the loss (use_bias_correction_kl=False) is the lesson's answer, gradient included;
    TRL's default ρ·k3 adds β/N · ρ · ∂k2/∂log π per token instead (the reverse-KL gradient)."""
    i, kw = case["inputs"], case["kwargs"]
    lesson = lesson_function("grpo/grpo_policy_loss")
    new = torch.tensor(i["per_token_logps"], requires_grad=True)
    m = i["completion_mask"]
    bias = kw["use_bias_correction_kl"] and kw["beta"] > 0
    loss = lesson(new, torch.tensor(i["old_per_token_logps"]), torch.tensor(i["advantages"]),
                  torch.tensor(m), torch.tensor(i["ref_per_token_logps"]),
                  clip_low=kw["epsilon_low"], clip_high=kw["epsilon_high"],
                  beta=0.0 if bias else kw["beta"])
    loss.backward()
    grad = new.grad.numpy()
    if bias:
        rho = np.exp(i["per_token_logps"] - i["old_per_token_logps"])
        g2 = _lesson_kl_grads(i["ref_per_token_logps"], i["per_token_logps"])[1]
        grad = grad + kw["beta"] / max(1.0, m.sum()) * m * rho * g2
    close(grad, case["outputs"]["grad_per_token_logps"])


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer._generate_and_score_completions "
                                       "(advantages)"))
def test_group_advantages_equal_trl_for_each_scale_rewards(case):
    """TRL's nanstd computes its Bessel factor count/(count − 1) from integer counts, in torch's
    default float32: a relative 6e-8 in float64 (``BESSEL``)."""
    s, kw = case["inputs"]["scores"], case["kwargs"]
    G, scale = kw["num_generations"], kw["scale_rewards"]
    theirs = case["outputs"]["advantages"]
    if G == 1:
        # TRL: each response is its own mean, advantage 0; here a group of one raises
        assert not theirs.any()
        with pytest.raises(ValueError):
            group_advantages(s, G)
        return
    if scale == "group":
        ours = group_advantages(s, G, eps=1e-4)
    else:
        ours = group_advantages(s, G, scale_by_std=False)
        if scale == "batch":  # the std of all N scores, the mean per group
            ours = ours / (np.std(s.astype(np.float64), ddof=1) + 1e-4)
    groups = s.reshape(-1, G)
    equal = np.repeat((groups == groups[:, :1]).all(axis=1), G)
    assert not ours[equal].any()  # equal scores: exactly 0 here, TRL's rounding / (std + 1e-4)
    close(ours[~equal], theirs[~equal], s.dtype, scale=float(np.abs(s).max()),
          **(BESSEL if scale != "none" else {}))


@pytest.mark.parametrize("case", cases("trl", "RLOOTrainer._generate_and_score_completions "
                                       "(advantages)"))
def test_rloo_advantages_equal_trl_rloo_trainer_with_beta_sum_of_k1_in_the_reward(case):
    i, kw = case["inputs"], case["kwargs"]
    s, m, G = i["scores"], i["completion_mask"], kw["num_generations"]
    # k1 = log π_old − log π_ref, summed over each response's tokens, β times off the score
    k1 = kl_estimators(i["ref_per_token_logps"], i["old_per_token_logps"])[0]
    shaped = (s - kw["beta"] * np.where(m != 0, k1, 0).sum(-1)).astype(s.dtype)
    ours = rloo_advantages(shaped, G).astype(np.float64)
    if kw["normalize_advantages"]:
        ours = (ours - ours.mean()) / (ours.std(ddof=1) + 1e-4) if ours.any() else ours
    theirs = case["outputs"]["advantages"]
    groups = shaped.reshape(-1, G)
    equal = np.repeat((groups == groups[:, :1]).all(axis=1), G)
    assert not ours[equal].any()
    if not equal.all():
        wider = BESSEL if kw["normalize_advantages"] else {}
        close(ours[~equal], theirs[~equal], s.dtype, scale=float(np.abs(shaped).max()), **wider)


@pytest.mark.parametrize("case", cases("trl", "nanstd"))
def test_trls_nanstd_is_the_unbiased_std_of_the_values_that_are_not_nan(case):
    # the std group_advantages takes (ddof=1), skipping NaN; NaN for fewer than two values
    x, kw = case["inputs"]["tensor"], case["kwargs"]
    x64 = x.astype(np.float64)
    axis = kw["dim"]
    n = np.sum(~np.isnan(x64), axis=axis, keepdims=True)
    mean = np.nansum(x64, axis=axis, keepdims=True) / n
    var = np.nansum((x64 - mean) ** 2, axis=axis, keepdims=True) / np.where(n > 1, n - 1, np.nan)
    ours = np.sqrt(var)
    ours = ours if kw["keepdim"] else np.squeeze(ours, axis=axis)
    theirs = case["outputs"]["std"]
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(ours)
    close(ours[ok], theirs[ok], x.dtype, **BESSEL)


@pytest.mark.parametrize("case", cases("trl", "selective_log_softmax"))
def test_token_logprobs_equal_trls_selective_log_softmax(case):
    i = case["inputs"]
    ours = token_logprobs(i["logits"], i["index"], temperature=case["kwargs"]["temperature"])
    close(ours, case["outputs"]["logps"])


@pytest.mark.parametrize("case", cases("trl", "entropy_from_logits"))
def test_token_entropy_equals_trls_entropy_from_logits_of_the_scaled_logits(case):
    ours = token_entropy(case["inputs"]["logits"], temperature=case["kwargs"]["temperature"])
    close(ours, case["outputs"]["entropy"])


def _within_ulps_of_the_largest_scaled_logit(z: np.ndarray, temperature: float) -> float:
    """verl's and OpenRLHF's logsumexp(z) − Σ softmax(z)·z cancels two numbers as large as the
    (scaled) logits: an absolute error of a few ulps of the largest one."""
    return 8 * float(np.spacing((np.abs(z).max() / temperature).astype(z.dtype)))


@pytest.mark.parametrize("case", cases("verl", "entropy_from_logits"))
def test_token_entropy_equals_verls_within_a_few_ulps_of_the_largest_logit(case):
    z, tau = case["inputs"]["logits"], case["kwargs"]["temperature"]
    close(token_entropy(z, temperature=tau), case["outputs"]["entropy"],
          atol=_within_ulps_of_the_largest_scaled_logit(z, tau))


@pytest.mark.parametrize("case", cases("trl", "DPOTrainer._compute_loss (sigmoid)"))
def test_dpo_loss_mean_equals_trls_sigmoid_loss(case):
    i = case["inputs"]
    ours = dpo_loss(i["chosen_logps"], i["rejected_logps"], i["ref_chosen_logps"],
                    i["ref_rejected_logps"], case["kwargs"]["beta"])
    close(ours.mean(dtype=np.float64), case["outputs"]["loss"])


@pytest.mark.parametrize("case", cases("trl", "RewardTrainer.compute_loss"))
def test_reward_model_loss_equals_trls_reward_trainer(case):
    i = case["inputs"]
    ours = reward_model_loss(i["rewards_chosen"], i["rewards_rejected"], i.get("margin"))
    close(ours, case["outputs"]["loss"], dtype_of(case))


# ---- OpenRLHF -----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("openrlhf", "compute_approx_kl"))
def test_kl_estimators_equal_openrlhf_compute_approx_kl_clamped_to_10_in_float32(case):
    i, kw, o = case["inputs"], case["kwargs"], case["outputs"]
    lp, base = i["log_probs"], i["log_probs_base"]
    k1, k2, k3 = kl_estimators(base, lp)
    k = {"k1": k1, "k2": k2, "k3": k3}[kw["kl_estimator"]]
    assert o["kl"].dtype == np.float32  # .float(): float32 whatever the input
    close(np.clip(k, -10, 10), o["kl"], np.float32)
    g1, g2, g3 = _lesson_kl_grads(base, lp)
    theirs = o["grad_log_probs"]
    if kw["unbiased_gradient"]:
        # the value above, the gradient of w·k2, w = min(π/π_old, 10) (1 without π_old)
        old = i.get("log_probs_old")
        w = 1.0 if old is None else np.minimum(np.exp(lp - old), 10)
        close(w * g2, theirs, np.float32)
    else:
        inside = np.abs(k) < 10  # no gradient where the clamp holds
        close({"k1": g1, "k2": g2, "k3": g3}[kw["kl_estimator"]][inside], theirs[inside],
              np.float32)
        assert not theirs[~inside].any()


@pytest.mark.parametrize("case", cases("openrlhf", "compute_reward"))
def test_shape_token_rewards_equals_openrlhf_compute_reward_on_response_tokens(case):
    i, kl_coef = case["inputs"], case["kwargs"]["kl_coef"]
    m = i["action_mask"]
    real = m != 0
    ours = shape_token_rewards(i["r"], i["log_probs"], i["log_probs_base"], m, kl_coef)
    theirs = case["outputs"]["reward"]
    close(ours[real], theirs[real], np.float32)
    # OpenRLHF does not mask the penalty: padding holds −β·kl (0 here) …
    kl = (i["log_probs"] - i["log_probs_base"]).astype(np.float64)
    empty = ~real.any(axis=1)
    pad = ~real & ~empty[:, None]
    close(theirs[pad], -kl_coef * kl[pad], np.float32)
    assert not ours[~real].any()
    # … and a row with no response token gets its score on the last position
    b = np.nonzero(empty)[0]
    close(theirs[b, -1], i["r"][b] - kl_coef * kl[b, -1], np.float32)


@pytest.mark.parametrize("case", cases("openrlhf", "PolicyLoss"))
def test_policy_losses_equal_openrlhf_policy_loss_on_log_ratios_clamped_to_20(case):
    i, kw = case["inputs"], case["kwargs"]
    old, adv, m = i["old_log_probs"], i["advantages"], i["action_mask"]
    new = _clamped(i["log_probs"], old)
    if kw["clip_eps_low"] == kw["clip_eps_high"] and kw["token_level_loss"]:
        ours = policy_surrogate_loss(new, old, adv, m, kw["clip_eps_low"],
                                     dual_clip=kw["dual_clip"])
    else:
        mode = "token-mean" if kw["token_level_loss"] else "seq-mean-token-mean"
        ours = grpo_policy_loss(new, old, adv, m, clip_low=kw["clip_eps_low"],
                                clip_high=kw["clip_eps_high"], dual_clip=kw["dual_clip"],
                                loss_agg_mode=mode)
    if not no_token_gives_nan_there_and_zero_here(m, ours, case["outputs"]["loss"]):
        # per-sample mean: each row divided by n_b + 1e-8
        close(ours, case["outputs"]["loss"], rtol=1e-8)


@pytest.mark.parametrize("case", cases("openrlhf", "ValueLoss"))
def test_value_clipped_loss_equals_openrlhf_value_loss(case):
    i = case["inputs"]
    ours = value_clipped_loss(i["values"], i["old_values"], i["returns"], i["action_mask"],
                              case["kwargs"]["clip_eps"])
    if not no_token_gives_nan_there_and_zero_here(i["action_mask"], ours,
                                                  case["outputs"]["loss"]):
        close(ours, case["outputs"]["loss"])


@pytest.mark.parametrize("case", cases("openrlhf", "PairWiseLoss"))
def test_reward_model_loss_equals_openrlhf_pairwise_loss(case):
    i = case["inputs"]
    ours = reward_model_loss(i["chosen_reward"], i["reject_reward"], i.get("margin"))
    close(ours, case["outputs"]["loss"], dtype_of(case))


@pytest.mark.parametrize("case", cases("openrlhf", "DPOLoss"))
def test_dpo_loss_mean_equals_openrlhf_dpo_loss(case):
    i = case["inputs"]
    ours = dpo_loss(i["policy_chosen_logps"], i["policy_rejected_logps"],
                    i["reference_chosen_logps"], i["reference_rejected_logps"],
                    case["kwargs"]["beta"])
    close(ours.mean(dtype=np.float64), case["outputs"]["loss"])


@pytest.mark.parametrize("case", cases("openrlhf", "RemoteExperienceMaker."
                                       "compute_advantages_and_returns"))
def test_openrlhf_advantages_are_our_group_advantages_shaped_rewards_and_returns(case):
    """OpenRLHF 0.11.2: the estimator's baseline on the scores, then −β·k1 on every token and the
    score on the last one, then the return-to-go (γ = 1); "gae", "reinforce" and
    "reinforce_baseline" then whiten with the biased variance. It computes in float32."""
    i, kw = case["inputs"], case["kwargs"]
    s, m = i["scores"].astype(np.float64), i["action_mask"]
    real, G, est, beta = m != 0, kw["n_samples_per_prompt"], kw["estimator"], kw["kl_coef"]
    lp, base = i["action_log_probs"], i["base_action_log_probs"]
    baseline = {"group_norm": lambda: group_advantages(s, G, eps=1e-9),
                "dr_grpo": lambda: group_advantages(s, G, scale_by_std=False),
                "reinforce_baseline": lambda: group_advantages(s, G, scale_by_std=False),
                "rloo": lambda: rloo_advantages(s, G),
                "reinforce": lambda: s, "gae": lambda: s}[est]()
    rewards = shape_token_rewards(baseline, lp.astype(np.float64), base.astype(np.float64), m,
                                  beta)
    o = case["outputs"]
    equal = np.all(s.reshape(-1, G) == s.reshape(-1, G)[:, :1])
    if equal and est != "reinforce":
        # an equal group: exactly 0 here, OpenRLHF's rounding (group_norm: / (std + 1e-9))
        assert not baseline.any()
        return
    if est == "gae":
        _, ret = compute_gae(rewards, i["values"].astype(np.float64), m, 1.0, kw["lambd"])
        # OpenRLHF reads values[:, t+1] after zeroing padding: right only without holes
        holes = np.array([np.any(np.diff(np.nonzero(row)[0]) > 1) for row in real])
        ok = real & ~holes[:, None]
        close(ret[ok], o["returns"][ok], np.float32)
        assert holes.any() and not np.allclose(ret[real & holes[:, None]],
                                               o["returns"][real & holes[:, None]], atol=1e-3)
        return
    _, ret = reinforce_pp_advantages(rewards, m, 1.0)
    close(ret[real], o["returns"][real], np.float32)
    if est in ("reinforce", "reinforce_baseline"):
        # the biased variance: our unbiased whitening times sqrt(n / (n − 1))
        n = real.sum()
        close(masked_whiten(ret, m)[real] * np.sqrt(n / (n - 1)), o["advantages"][real],
              np.float32)
    else:
        close(ret[real], o["advantages"][real], np.float32)


# ---- TRL's last PPOTrainer (trl_ppo) ------------------------------------------------------------


@pytest.mark.parametrize("case", cases("trl_ppo", "masked_whiten"))
def test_masked_whiten_equals_trl_ppo_masked_whiten_on_response_tokens(case):
    i, shift = case["inputs"], case["kwargs"]["shift_mean"]
    real = i["mask"] != 0
    ours = masked_whiten(i["values"], i["mask"], shift_mean=shift)
    close(ours[real], case["outputs"]["whitened"][real])
    assert not ours[~real].any()  # TRL leaves whitened values on padding


def _ppo_masks(case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TRL 1.12.0's layout: ``(mask, mask_p1, end)``; the response is tokens 0 … L_b, the value
    and the score sit one token further (``sequence_lengths + 1``, the last index at most)."""
    seq = case["inputs"]["sequence_lengths"]
    T = case["inputs"]["logprobs"].shape[1]  # response length
    idx = np.arange(T)[None, :]
    end = np.where(seq + 1 < T, seq + 1, seq)
    return idx <= seq[:, None], idx <= seq[:, None] + 1, end


@pytest.mark.parametrize("case", cases("trl_ppo", "PPOTrainer.train (rewards, GAE, whitening)"))
def test_trl_ppo_puts_the_score_one_token_past_the_response_and_gae_runs_to_it(case):
    i, kw, o = case["inputs"], case["kwargs"], case["outputs"]
    lp, ref, s = i["logprobs"], i["ref_logprobs"], i["scores"]
    mask, mask_p1, end = _ppo_masks(case)
    rows = np.arange(len(s))
    # −β·k on the response tokens (k1 or k3), the score at sequence_lengths + 1
    k1, _, k3 = kl_estimators(ref, lp)
    k = {"k1": k1, "k3": k3}[kw["kl_estimator"]]
    rewards = np.where(mask, -kw["kl_coef"] * k, 0)
    rewards[rows, end] += s
    # shape_token_rewards puts the score on the last response token instead
    ours = shape_token_rewards(s, lp, ref, mask.astype(lp.dtype), kw["kl_coef"])
    ours[rows, i["sequence_lengths"]] -= s
    ours[rows, end] += s
    if kw["kl_estimator"] == "k1":
        np.testing.assert_allclose(ours, rewards, **tol(lp.dtype))
    if kw["whiten_rewards"]:
        rewards = np.where(mask_p1, masked_whiten(rewards, mask_p1, shift_mean=False), 0)
    # the masks are bool: masked_var's Bessel factor is a float32 (BESSEL)
    close(rewards, o["rewards"], **BESSEL)
    # GAE over the response and the one position after it, V = 0 beyond
    values = np.where(mask_p1, i["values"], 0)
    adv, ret = compute_gae(o["rewards"], values, mask_p1.astype(lp.dtype), kw["gamma"], kw["lam"])
    close(ret[mask_p1], o["returns"][mask_p1])
    close(masked_whiten(adv, mask)[mask], o["advantages"][mask], **BESSEL)
    assert not o["advantages"][~mask].any()


@pytest.mark.parametrize("case", cases("trl_ppo", "PPOTrainer.train (value and policy losses)"))
def test_trl_ppo_losses_are_ours_with_the_value_trained_one_token_past_the_response(case):
    i, kw, o = case["inputs"], case["kwargs"], case["outputs"]
    mask, mask_p1 = ~i["padding_mask"], ~i["padding_mask_p1"]
    dt = i["vpred"].dtype
    vf = value_clipped_loss(i["vpred"], i["mb_values"], i["mb_return"], mask_p1.astype(dt),
                            kw["cliprange_value"])
    close(vf, o["vf_loss"])
    pg = policy_surrogate_loss(i["new_logprobs"], i["mb_logprobs"], i["mb_advantage"],
                               mask.astype(dt), kw["cliprange"])
    close(pg, o["pg_loss"])


# ---- token_logprobs, token_entropy, high_entropy_mask (the beyond chapter, Exercises 1–3) ------


@pytest.mark.parametrize("case", cases("trl", "selective_log_softmax_and_entropy"))
def test_token_logprobs_and_entropy_equal_trls_selective_log_softmax_and_entropy(case):
    i, tau = case["inputs"], case["kwargs"]["temperature"]
    close(token_logprobs(i["logits"], i["index"], temperature=tau), case["outputs"]["logps"])
    close(token_entropy(i["logits"], temperature=tau), case["outputs"]["entropy"])


@pytest.mark.parametrize("case", cases("trl", "selective_log_softmax_and_entropy"))
def test_trl_divides_by_the_temperature_before_both_so_tau_1_is_not_tau(case):
    # the lesson's point: the same logits at τ ≠ 1 give other log-probs and entropies
    i, tau = case["inputs"], case["kwargs"]["temperature"]
    if tau == 1.0:
        return
    at_one = token_logprobs(i["logits"], i["index"])
    assert np.abs(at_one - case["outputs"]["logps"]).max() > 1e-2
    # a hotter sampler is less sure, except on a uniform row (the same at any τ)
    uniform = (i["logits"] == i["logits"][..., :1]).all(-1)
    at_one, theirs = token_entropy(i["logits"])[~uniform], case["outputs"]["entropy"][~uniform]
    assert uniform.any() and ((at_one < theirs) if tau > 1 else (at_one > theirs)).all()


@pytest.mark.parametrize(
    "case", cases("verl", "logprobs_from_logits (after _scale_logits_by_temperature)"))
def test_token_logprobs_and_entropy_equal_verls_engine_at_its_float32_temperature(case):
    # verl's engine holds the temperature as a float32 tensor and casts it to the logits'
    # dtype: float64 logits are divided by float32(τ) (0.699999988 for 0.7)
    i, o = case["inputs"], case["outputs"]
    tau = float(np.float32(case["kwargs"]["temperature"]))
    z = i["logits"]
    close(token_logprobs(z, i["labels"], temperature=tau), o["log_probs"])
    close(token_entropy(z, temperature=tau), o["entropy"],
          atol=_within_ulps_of_the_largest_scaled_logit(z, tau))
    if z.dtype == np.float64 and tau != np.float64(case["kwargs"]["temperature"]):
        exact = token_logprobs(z, i["labels"], temperature=case["kwargs"]["temperature"])
        assert not np.allclose(exact, o["log_probs"], rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", cases("openrlhf", "log_probs_from_logits"))
def test_token_logprobs_equal_openrlhfs_log_probs_from_logits(case):
    i = case["inputs"]
    ours = token_logprobs(i["logits"], i["labels"], temperature=case["kwargs"]["temperature"])
    close(ours, case["outputs"]["log_probs"])


@pytest.mark.parametrize("case", cases("openrlhf", "compute_entropy"))
def test_token_entropy_equals_openrlhfs_compute_entropy_within_a_few_ulps_of_the_largest_logit(
        case):
    z, tau = case["inputs"]["logits"], case["kwargs"]["temperature"]
    close(token_entropy(z, temperature=tau), case["outputs"]["entropy"],
          atol=_within_ulps_of_the_largest_scaled_logit(z, tau))


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer.get_high_entropy_mask"))
def test_high_entropy_mask_equals_trls_get_high_entropy_mask(case):
    i = case["inputs"]
    ours = high_entropy_mask(i["entropies"], i["mask"], case["kwargs"]["threshold"])
    theirs = case["outputs"]["entropy_mask"]
    assert ours.dtype == theirs.dtype == np.bool_
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer.get_high_entropy_mask"))
def test_trls_high_entropy_mask_keeps_at_least_the_top_share_and_every_tie_at_the_cut(case):
    i, q = case["inputs"], case["kwargs"]["threshold"]
    real = i["mask"] != 0
    kept = case["outputs"]["entropy_mask"]
    assert not kept[~real].any()
    n = int(real.sum())
    if n:
        # the cut lies at the sorted position q(n − 1): every token after it is kept (and the
        # one there if the position is whole), and every token equal to the lowest one kept
        assert kept.sum() >= n - 1 - math.floor(q * (n - 1))
        assert (i["entropies"][real] >= i["entropies"][kept].min()).sum() == kept.sum()


def test_the_defaults_the_logits_pages_state_are_the_pinned_libraries():
    trl, verl, openrlhf = vectors("trl"), vectors("verl"), vectors("openrlhf")
    assert trl["defaults"]["GRPOConfig.temperature"]["value"] == 1.0
    assert trl["defaults"]["GRPOConfig.top_entropy_quantile"]["value"] == 1.0
    assert verl["defaults"]["verl/trainer/config/rollout/rollout.yaml:temperature"]["value"] == 1.0
    assert openrlhf["defaults"]["--rollout.temperature"]["value"] == 1.0
    # the entropy bonus: off by default in all three
    assert trl["defaults"]["GRPOConfig.entropy_coef"]["value"] == 0.0
    assert trl["defaults"]["GRPOConfig.use_adaptive_entropy"]["value"] is False
    assert verl["defaults"]["verl/trainer/config/actor/actor.yaml:entropy_coeff"]["value"] == 0
    assert openrlhf["defaults"]["--actor.entropy_coef"]["value"] is None
