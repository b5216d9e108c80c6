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
    cispo_loss,
    compute_gae,
    dpo_loss,
    group_advantages,
    grpo_policy_loss,
    gspo_loss,
    high_entropy_mask,
    informative_groups,
    ipo_loss,
    kl_cov_loss,
    kl_estimators,
    kto_loss,
    last_token_index,
    masked_whiten,
    off_policy_sequence_mask,
    orpo_odds_ratio_loss,
    overlong_penalty,
    policy_surrogate_loss,
    preference_loss,
    reinforce_pp_advantages,
    reward_model_loss,
    rloo_advantages,
    robust_dpo_loss,
    rollout_is_weights,
    sapo_loss,
    shape_token_rewards,
    simpo_loss,
    token_entropy,
    token_logprobs,
    value_clipped_loss,
)
from rl_ops_numpy.dpo import PREFERENCE_LOSS_TYPES
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
        "DPOConfig.label_smoothing": 0.0, "DPOConfig.discopop_tau": 0.05,
        "DPOTrainer._compute_loss loss types": sorted([*PREFERENCE_LOSS_TYPES, "sft"]),
        "RewardConfig.center_rewards_coefficient": None,
        "CPOConfig.beta": 0.1, "CPOConfig.loss_type": "sigmoid", "CPOConfig.cpo_alpha": 1.0,
        "CPOConfig.simpo_gamma": 0.5, "CPOConfig.label_smoothing": 0.0, "ORPOConfig.beta": 0.1,
        "KTOConfig.beta": 0.1, "KTOConfig.loss_type": "kto", "KTOConfig.desirable_weight": 1.0,
        "KTOConfig.undesirable_weight": 1.0,
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


def _within_ulps_of_the_largest_scaled_logit(z: np.ndarray, temperature: float) -> float:
    """verl's and OpenRLHF's logsumexp(z) − Σ softmax(z)·z cancels two numbers as large as the
    (scaled) logits: an absolute error of a few ulps of the largest one."""
    return 8 * float(np.spacing((np.abs(z).max() / temperature).astype(z.dtype)))


def _token_logprobs_are_theirs(case, ids: str, output: str) -> None:
    """Our token_logprobs of the case's logits and token ids (the library's name), at its
    temperature, equal the library's ``output``."""
    i = case["inputs"]
    ours = token_logprobs(i["logits"], i[ids], temperature=case["kwargs"]["temperature"])
    close(ours, case["outputs"][output])


def _token_entropy_is_theirs(case, within_ulps: bool) -> None:
    """Our token_entropy of the case's logits at its temperature equals the library's entropy;
    ``within_ulps``: up to :func:`_within_ulps_of_the_largest_scaled_logit`."""
    z, tau = case["inputs"]["logits"], case["kwargs"]["temperature"]
    atol = _within_ulps_of_the_largest_scaled_logit(z, tau) if within_ulps else 0.0
    close(token_entropy(z, temperature=tau), case["outputs"]["entropy"], atol=atol)


@pytest.mark.parametrize("case", cases("trl", "selective_log_softmax"))
def test_token_logprobs_equal_trls_selective_log_softmax(case):
    _token_logprobs_are_theirs(case, "index", "logps")


@pytest.mark.parametrize("case", cases("trl", "entropy_from_logits"))
def test_token_entropy_equals_trls_entropy_from_logits_of_the_scaled_logits(case):
    _token_entropy_is_theirs(case, within_ulps=False)


@pytest.mark.parametrize("case", cases("verl", "entropy_from_logits"))
def test_token_entropy_equals_verls_within_a_few_ulps_of_the_largest_logit(case):
    _token_entropy_is_theirs(case, within_ulps=True)


def _dpo_mean_is_theirs(case, chosen: str, rejected: str, ref_chosen: str,
                        ref_rejected: str) -> None:
    """The batch mean of our dpo_loss on the case's sequence log-probs (the library's names)
    equals the library's loss."""
    i = case["inputs"]
    ours = dpo_loss(i[chosen], i[rejected], i[ref_chosen], i[ref_rejected], case["kwargs"]["beta"])
    close(ours.mean(dtype=np.float64), case["outputs"]["loss"])


def _reward_model_loss_is_theirs(case, chosen: str, rejected: str) -> None:
    """Our reward_model_loss on the case's scores (the library's names) and optional margin equals
    the library's loss."""
    i = case["inputs"]
    ours = reward_model_loss(i[chosen], i[rejected], i.get("margin"))
    close(ours, case["outputs"]["loss"], dtype_of(case))


@pytest.mark.parametrize("case", cases("trl", "DPOTrainer._compute_loss (sigmoid)"))
def test_dpo_loss_mean_equals_trls_sigmoid_loss(case):
    _dpo_mean_is_theirs(case, "chosen_logps", "rejected_logps", "ref_chosen_logps",
                        "ref_rejected_logps")


# ---- after DPO: each loss, and a planted change of its convention that the vectors catch -----


def _ipo(case, summed: bool = False):
    i, beta = case["inputs"], case["kwargs"]["beta"]
    ones = np.ones_like(i["chosen_lengths"])
    lengths = (ones, ones) if summed else (i["chosen_lengths"], i["rejected_lengths"])
    return ipo_loss(i["chosen_logps"], i["rejected_logps"], i["ref_chosen_logps"],
                    i["ref_rejected_logps"], *lengths, beta)


def _robust(case, cdpo: bool = False):
    i, k = case["inputs"], case["kwargs"]
    args = (i["chosen_logps"], i["rejected_logps"], i["ref_chosen_logps"], i["ref_rejected_logps"])
    if not cdpo:
        return robust_dpo_loss(*args, k["beta"], k["label_smoothing"])
    eps, z = k["label_smoothing"], k["beta"] * ((args[0] - args[2]) - (args[1] - args[3]))
    return (1 - eps) * dpo_loss(*args, k["beta"]) + eps * np.logaddexp(0, z)  # cDPO, no ÷(1 − 2ε)


def _simpo(case, gamma_over_beta: bool = False):
    i, k = case["inputs"], case["kwargs"]
    gamma = k["simpo_gamma"] / k["beta"] if gamma_over_beta else k["simpo_gamma"]
    return simpo_loss(i["policy_chosen_logps"], i["policy_rejected_logps"], k["beta"], gamma,
                      k["label_smoothing"])


def _orpo(case, naive_odds: bool = False):
    i, beta = case["inputs"], case["kwargs"]["beta"]
    if not naive_odds:
        return -orpo_odds_ratio_loss(i["policy_chosen_logps"], i["policy_rejected_logps"], beta)
    # the probability ratio in place of the odds ratio (DPO without a reference, no 1 − p)
    z = i["policy_chosen_logps"] - i["policy_rejected_logps"]
    return -beta * np.logaddexp(0, -z)


def _kto(case, unclamped: bool = False):
    i, k = case["inputs"], case["kwargs"]
    kl = float(np.mean(i["KL_logps"].astype(np.float64) - i["ref_KL_logps"]))
    logps = np.concatenate([i["chosen_logps"], i["rejected_logps"]])
    ref = np.concatenate([i["ref_chosen_logps"], i["ref_rejected_logps"]])
    good = np.arange(len(logps)) < len(i["chosen_logps"])
    losses = kto_loss(logps, ref, good, kl, k["beta"], k["desirable_weight"],
                      k["undesirable_weight"])
    if unclamped and kl < 0:  # the reference point below 0, as the formula without max(·, 0)
        x = k["beta"] * ((logps - ref) - kl)
        losses = np.where(good, k["desirable_weight"] / (1 + np.exp(x)),
                          k["undesirable_weight"] / (1 + np.exp(-x)))
    return losses


PREFERENCE_LOSSES = {  # operator: (our per-example loss, the library's output, reduced as it is)
    "DPOTrainer._compute_loss (ipo)": (_ipo, "loss", "mean"),
    "DPOTrainer._compute_loss (robust)": (_robust, "loss", "mean"),
    "CPOTrainer.cpo_loss (simpo)": (_simpo, "losses", None),
    "ORPOTrainer.odds_ratio_loss": (_orpo, "losses", None),
    "KTOTrainer._compute_loss (kto)": (_kto, "losses", None),
}


@pytest.mark.parametrize(("op", "case"), [
    pytest.param(op, p.values[0], id=f"{op}: {p.id}")
    for op in PREFERENCE_LOSSES for p in cases("trl", op)])
def test_the_losses_after_dpo_equal_trls(op, case):
    ours, output, reduce = PREFERENCE_LOSSES[op]
    got = ours(case)
    if reduce == "mean":
        got = np.mean(got, dtype=np.float64)
    # ORPO's odds_ratio_loss casts to float32 (.float()): its own dtype's tolerance
    close(got, case["outputs"][output], None if op.startswith("ORPO") else dtype_of(case))
    if op.startswith("KTOTrainer"):
        i = case["inputs"]
        kl = np.mean(i["KL_logps"].astype(np.float64) - i["ref_KL_logps"])
        close(max(kl, 0.0), case["outputs"]["kl"], dtype_of(case), scale=20.0)


@pytest.mark.parametrize("op", PREFERENCE_LOSSES)
def test_a_planted_convention_change_in_a_loss_after_dpo_fails_against_trl(op):
    """Summed log-ratios for IPO, cDPO's smoothing for robust DPO, γ read as γ/β for SimPO, the
    probability ratio for ORPO's odds ratio, an unclamped reference point for KTO: each changes
    some case of the vectors beyond the tolerance (the cases exercise every convention)."""
    ours, output, reduce = PREFERENCE_LOSSES[op]
    caught = 0
    for c in vectors("trl")["operators"][op]["cases"]:
        case = decode(c)
        got = ours(case, True)
        if reduce == "mean":
            got = np.mean(got, dtype=np.float64)
        try:
            close(got, case["outputs"][output], None if op.startswith("ORPO") else dtype_of(case))
        except AssertionError:
            caught += 1
    assert caught > 0, f"no case of {op} tells the planted change from TRL's convention"


# ---- the DPO trainer's other loss types: preference_loss, and a planted change of each --------


def _sigma(x):
    return np.exp(-np.logaddexp(0, -x))  # σ(x), no overflow


# what a plausible misreading of each loss type computes instead, from (β, ε, τ, r_w, r_l,
# the policy's log-ratio, the reference's, the lengths), per pair
PLANTED = {
    "hinge": lambda b, e, t, rw, rl, *_: np.maximum(0, 1 - (rw - rl)),  # β left out
    "exo_pair": lambda b, e, t, rw, rl, *_: preference_loss(  # ε and 1 − ε swapped
        "exo_pair", rw, rl, 0 * rw, 0 * rl, beta=b, label_smoothing=1 - e),
    "nca_pair": lambda b, e, t, rw, rl, *_: (  # the ½ weights dropped
        np.logaddexp(0, -b * rw) + np.logaddexp(0, b * rw) + np.logaddexp(0, b * rl)),
    "bco_pair": lambda b, e, t, rw, rl, *_: (  # NCA's ½ on the rejected side
        np.logaddexp(0, -b * rw) + 0.5 * np.logaddexp(0, b * rl)),
    "sppo_hard": lambda b, e, t, rw, rl, *_: (rw - 1 / b) ** 2 + (rl + 1 / b) ** 2,  # ±1/β
    "aot": lambda b, e, t, rw, rl, *_: preference_loss(  # pairs kept, not sorted: DPO smoothed
        "aot_unpaired", np.sort(rw - rl), 0 * rl, 0 * rw, 0 * rl, beta=b, label_smoothing=e),
    "aot_unpaired": lambda b, e, t, rw, rl, *_: preference_loss(  # pairs kept, not sorted
        "aot_unpaired", np.sort(rw - rl), 0 * rl, 0 * rw, 0 * rl, beta=b, label_smoothing=e),
    "apo_zero": lambda b, e, t, rw, rl, *_: _sigma(-b * rw) + _sigma(-b * (rw - rl)),  # margin
    "apo_down": lambda b, e, t, rw, rl, *_: _sigma(b * rl) + _sigma(-b * (rw - rl)),  # r_l
    "discopop": lambda b, e, t, rw, rl, *_: preference_loss(  # σ(x·τ) for σ(x/τ)
        "discopop", rw, rl, 0 * rw, 0 * rl, beta=b, discopop_tau=1 / t),
    "sigmoid_norm": lambda b, e, t, rw, rl, *_: dpo_loss(rw, rl, 0 * rw, 0 * rl, b),  # summed
}
LOSS_TYPE_OPS = [f"DPOTrainer._compute_loss ({t})" for t in PLANTED]


def _loss_type(op: str, case: dict, planted: bool = False) -> np.ndarray:
    """Our preference_loss of the case's loss type (per pair), or its planted misreading."""
    loss_type, i, k = op[len("DPOTrainer._compute_loss ("):-1], case["inputs"], case["kwargs"]
    logps = (i["chosen_logps"], i["rejected_logps"], i["ref_chosen_logps"],
             i["ref_rejected_logps"])
    settings = {name: k[name] for name in ("label_smoothing", "discopop_tau") if name in k}
    if planted:
        rw, rl = logps[0] - logps[2], logps[1] - logps[3]
        return PLANTED[loss_type](k["beta"], settings.get("label_smoothing", 0.0),
                                  settings.get("discopop_tau", 0.05), rw, rl)
    return preference_loss(loss_type, *logps, beta=k["beta"], chosen_lengths=i["chosen_lengths"],
                           rejected_lengths=i["rejected_lengths"], **settings)


@pytest.mark.parametrize(("op", "case"), [
    pytest.param(op, p.values[0], id=f"{op}: {p.id}")
    for op in LOSS_TYPE_OPS for p in cases("trl", op)])
def test_every_other_dpo_loss_type_equals_trls_and_discopop_is_finite_where_trls_is_nan(op, case):
    ours = np.mean(_loss_type(op, case), dtype=np.float64)
    theirs = case["outputs"]["loss"]
    if math.isnan(theirs):
        # DiscoPOP's m·e^{−x} in float32: e^{−x} overflows where x = βΔ < −88.7 while m = σ(x/τ)
        # underflows to 0, and 0·∞ is NaN (the docstring says so); ours is e^{log m − x}
        i, k = case["inputs"], case["kwargs"]
        x = k["beta"] * ((i["chosen_logps"] - i["ref_chosen_logps"])
                         - (i["rejected_logps"] - i["ref_rejected_logps"]))
        assert op.endswith("(discopop)") and dtype_of(case) == np.float32
        assert x.min() < -88.7 and math.isfinite(ours)
        return
    # TRL's exo_pair takes log ε and log(1 − ε) of a float32 tensor whatever the inputs' dtype
    # (the test below): float32's tolerance for it
    close(ours, theirs, np.float32 if op.endswith("(exo_pair)") else dtype_of(case))


@pytest.mark.parametrize("case", cases("trl", "DPOTrainer._compute_loss (exo_pair)"))
def test_trls_exo_pair_takes_log_eps_in_float32_whatever_the_inputs_dtype(case):
    """``epsilon = torch.tensor(self.label_smoothing)`` is float32: with its two logs rounded
    so, EXO's formula is TRL's to float64's tolerance (the docstring's sentence)."""
    i, k = case["inputs"], case["kwargs"]
    eps = torch.tensor(k["label_smoothing"])
    log_pw, log_pl = float(torch.log1p(-eps)), float(torch.log(eps))
    x = k["beta"] * ((i["chosen_logps"] - i["ref_chosen_logps"])
                     - (i["rejected_logps"] - i["ref_rejected_logps"]))
    q, log_q, log_1mq = _sigma(x), -np.logaddexp(0, -x), -np.logaddexp(0, x)
    close(np.mean(q * (log_q - log_pw) + (1 - q) * (log_1mq - log_pl), dtype=np.float64),
          case["outputs"]["loss"], dtype_of(case))


@pytest.mark.parametrize("op", LOSS_TYPE_OPS)
def test_a_planted_misreading_of_each_dpo_loss_type_fails_against_trl(op):
    """Each misreading in PLANTED changes some case of the vectors beyond the tolerance."""
    caught = 0
    for c in vectors("trl")["operators"][op]["cases"]:
        case = decode(c)
        if math.isnan(case["outputs"]["loss"]):
            continue
        try:
            close(np.mean(_loss_type(op, case, True), dtype=np.float64), case["outputs"]["loss"],
                  dtype_of(case))
        except AssertionError:
            caught += 1
    assert caught > 0, f"no case of {op} tells the planted misreading from TRL's loss"


@pytest.mark.parametrize("case", cases("trl", "DPOTrainer._compute_loss (sft)"))
def test_trls_sft_loss_type_is_the_token_mean_nll_of_the_chosen_rows(case):
    i = case["inputs"]
    n = len(i["per_token_logps"]) // 2  # the batch is [chosen rows; rejected rows]
    ours = aggregate_loss(-i["per_token_logps"][:n], i["completion_mask"][:n], "token-mean")
    close(ours, case["outputs"]["loss"], dtype_of(case))
    # the rejected rows do not count
    both = aggregate_loss(-i["per_token_logps"], i["completion_mask"], "token-mean")
    assert not np.isclose(both, case["outputs"]["loss"], rtol=1e-3)


@pytest.mark.parametrize("case", cases("trl", "DPOTrainer._compute_loss (mix)"))
def test_several_dpo_loss_types_at_once_are_the_weighted_sum_of_their_batch_means(case):
    i, k = case["inputs"], case["kwargs"]
    n = len(i["per_token_logps"]) // 2
    logps = (i["chosen_logps"], i["rejected_logps"], i["ref_chosen_logps"],
             i["ref_rejected_logps"])
    means = {t: np.mean(preference_loss(t, *logps, beta=k["beta"]), dtype=np.float64)
             for t in k["loss_type"] if t != "sft"}
    means["sft"] = aggregate_loss(-i["per_token_logps"][:n], i["completion_mask"][:n],
                                  "token-mean")
    ours = sum(w * means[t] for t, w in zip(k["loss_type"], k["loss_weights"], strict=True))
    close(ours, case["outputs"]["loss"], dtype_of(case))


@pytest.mark.parametrize("case", cases("trl", "DPOTrainer.__init__ (exo_pair's label_smoothing)"))
def test_trl_refuses_exo_pair_at_label_smoothing_0_as_preference_loss_does(case):
    i = np.full(3, -20.0)
    eps = case["kwargs"]["label_smoothing"]
    if eps == 0:
        assert raised(case).startswith("ValueError: Label smoothing must be greater than 0.0")
        with pytest.raises(ValueError, match="label_smoothing must be in"):
            preference_loss("exo_pair", i, i, i, i, label_smoothing=eps)
    else:
        assert case["outputs"] == {"accepted": True}
        assert np.all(np.isfinite(preference_loss("exo_pair", i, i, i, i, label_smoothing=eps)))


@pytest.mark.parametrize("case", cases("trl", "RewardTrainer.compute_loss"))
def test_reward_model_loss_equals_trls_reward_trainer(case):
    _reward_model_loss_is_theirs(case, "rewards_chosen", "rewards_rejected")


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
    _reward_model_loss_is_theirs(case, "chosen_reward", "reject_reward")


@pytest.mark.parametrize("case", cases("openrlhf", "DPOLoss"))
def test_dpo_loss_mean_equals_openrlhf_dpo_loss(case):
    _dpo_mean_is_theirs(case, "policy_chosen_logps", "policy_rejected_logps",
                        "reference_chosen_logps", "reference_rejected_logps")


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


# ---- DAPO: overlong_penalty and informative_groups (verl, TRL, OpenRLHF) ----------------------


def _within(lengths: np.ndarray, max_length: float) -> np.ndarray:
    return lengths <= max_length


def _refuses_beyond(lengths: np.ndarray, max_length: float, buffer: float, factor: float):
    for length in lengths[lengths > max_length]:
        with pytest.raises(ValueError, match="at most max_length"):
            overlong_penalty([length], max_length, buffer, factor)


@pytest.mark.parametrize("case", [
    *cases("verl", "DAPORewardManager.__call__ (overlong penalty)"),
    *cases("verl", "reward_loop DAPORewardManager.run_single (overlong penalty)")])
def test_overlong_penalty_equals_verls_dapo_reward_manager_which_keeps_falling_beyond_max(case):
    L, kw, o = case["inputs"]["lengths"], case["kwargs"], case["outputs"]
    L_max, buf, f = kw["max_resp_len"], kw["overlong_buffer_len"], kw["penalty_factor"]
    ok = _within(L, L_max)
    ours = overlong_penalty(L[ok], L_max, buf, f)
    # verl divides a torch integer by an int: its penalty is a float32
    close(ours, o["overlong_reward"][ok], np.float32)
    close(1.0 + ours, o["reward"][ok], np.float32)  # added to the score (1.0 here)
    if "acc" in o:  # run_single logs the score before the penalty as "acc"
        assert (o["acc"] == 1.0).all()
    # beyond max_resp_len verl's ramp goes on below −penalty_factor; the reference raises
    beyond = o["overlong_reward"][~ok]
    close(beyond, -(L[~ok] - (L_max - buf)) / buf * f, np.float32)
    assert (beyond < -f).all()
    _refuses_beyond(L, L_max, buf, f)


@pytest.mark.parametrize("case", cases("openrlhf", "apply_overlong_penalty"))
def test_overlong_penalty_equals_openrlhf_apply_overlong_penalty_which_stops_at_minus_factor(case):
    L, kw, o = case["inputs"]["lengths"], case["kwargs"], case["outputs"]
    L_max, buf = kw["max_new_tokens"], kw["overlong_buffer_len"]
    f = kw["overlong_penalty_factor"]
    ok = _within(L, L_max)
    close(overlong_penalty(L[ok], L_max, buf, f), o["rewards"][ok])
    assert (o["rewards"][~ok] == -f).all()  # capped: min(exceed, buffer)
    assert int(o["penalized"]) == int((L > L_max - buf).sum())
    _refuses_beyond(L, L_max, buf, f)


@pytest.mark.parametrize("case", cases("trl", "get_soft_overlong_punishment"))
def test_overlong_penalty_with_factor_1_equals_trls_soft_overlong_punishment_minus_1_beyond(case):
    L, kw, o = case["inputs"]["lengths"], case["kwargs"], case["outputs"]
    L_max, cache = kw["max_completion_len"], kw["soft_punish_cache"]
    ok = _within(L, L_max)
    close(overlong_penalty(L[ok], L_max, cache), o["rewards"][ok])
    assert (o["rewards"][~ok] == -1.0).all()
    _refuses_beyond(L, L_max, cache, 1.0)


def test_trls_docstring_example_is_our_number():
    # trl/rewards/other_rewards.py: max_completion_len=100, soft_punish_cache=20, 90 tokens
    (c,) = [decode(c) for c in vectors("trl")["operators"]["get_soft_overlong_punishment"]["cases"]
            if c["kwargs"]["max_completion_len"] == 100]
    i = list(c["inputs"]["lengths"]).index(90)
    assert c["outputs"]["rewards"][i] == -0.5 == overlong_penalty([90], 100, 20)[0]


@pytest.mark.parametrize("case", cases("verl", "ReplayBuffer._dapo_filtered_keys"))
def test_informative_groups_equals_verls_filter_but_where_equal_floats_have_a_nonzero_std(case):
    s, kw, keep = case["inputs"]["scores"], case["kwargs"], case["outputs"]["keep"]
    G = kw["group_size"]
    if G == 1:  # verl keeps a group of one (len(values) > 1 fails); the reference raises
        assert keep.all()
        with pytest.raises(ValueError, match="group_size must be at least 2"):
            informative_groups(s, G)
        return
    ours = informative_groups(s, G)
    # verl's values: float(rm_scores.sum()) of float32 scores for "reward", float(score) else
    values = s.astype(np.float32) if kw["metric"] == "reward" else s
    std_not_0 = np.array([float(np.std(g.tolist())) != 0.0
                          for g in values.astype(np.float64).reshape(-1, G)])
    # verl: keep unless std == 0, so it also keeps equal scores whose std is a rounding
    assert np.array_equal(keep, np.repeat(std_not_0, G))
    assert np.array_equal(keep, ours | np.repeat(std_not_0, G))
    differs = keep != ours
    assert differs.any() == (kw["metric"] == "acc" and s.dtype == np.float64
                             and "copies of" in case["name"])


@pytest.mark.parametrize("case", cases("openrlhf",
                                       "SamplesGenerator._generate_vllm (dynamic filtering)"))
def test_openrlhf_keeps_a_group_whose_mean_is_inside_the_range_which_is_ours_for_0_1_scores(case):
    s, kw, keep = case["inputs"]["scores"], case["kwargs"], case["outputs"]["keep"]
    G, (low, high) = kw["group_size"], kw["dynamic_filtering_range"]
    means = np.array([sum(g) / len(g) for g in s.reshape(-1, G).tolist()])
    assert np.array_equal(keep, np.repeat((low < means) & (means < high), G))
    ours = informative_groups(s, G)
    if set(s.tolist()) <= {0.0, 1.0} and (low, high) == (0.0, 1.0):
        assert np.array_equal(keep, ours)
    if "±1" in case["name"] and (low, high) == (0.0, 1.0):
        # the default range with ±1 scores: every group of this case is dropped,
        # the two informative ones included
        assert not keep.any() and ours.sum() == 2 * G


DAPO_DEFAULTS = {
    "verl": {"verl/trainer/config/ppo_trainer.yaml:algorithm.filter_groups.enable": False,
             "verl/trainer/config/ppo_trainer.yaml:algorithm.filter_groups.metric": "reward",
             "verl/trainer/config/ppo_trainer.yaml:algorithm.filter_groups.max_num_gen_batches":
                 0,
             "verl/trainer/config/ppo_trainer.yaml:"
             "algorithm.filter_groups.max_inflight_gen_batches": 1,
             "verl/trainer/config/reward/reward.yaml:reward_manager.name": "naive"},
    "trl": {"GRPOConfig.mask_truncated_completions": False},
    "openrlhf": {"--reward.overlong_buffer_len": None, "--reward.overlong_penalty_factor": 1,
                 "--algo.dynamic_filtering_enable": False,
                 "--algo.dynamic_filtering_range": [0, 1], "--rollout.max_new_tokens": None,
                 "--data.max_len": 2048, "--reward.stop_properly_penalty_coef": None},
}


@pytest.mark.parametrize(("key", "name"), [(k, n) for k, d in DAPO_DEFAULTS.items() for n in d],
                         ids=lambda x: x)
def test_each_dapo_default_the_docstrings_state_is_the_pinned_librarys(key, name):
    recorded = vectors(key)["defaults"][name]
    assert recorded["value"] == DAPO_DEFAULTS[key][name], recorded
# ---- offpolicy: rollout_is_weights, off_policy_sequence_mask -----------------------------------


def _verl_threshold(spec: float | str) -> float | tuple[float, float]:
    """verl's ``rollout_is_threshold``: a float is TIS's cap, ``"a_b"`` IcePop's band."""
    if isinstance(spec, str):
        low, high = spec.split("_")
        return float(low), float(high)
    return spec


@pytest.mark.parametrize("case", cases("verl", "compute_rollout_correction_weights"))
def test_rollout_is_weights_equal_verl_rollout_correction_weights_tis_and_icepop(case):
    i, kw = case["inputs"], case["kwargs"]
    m = i["response_mask"]
    ours = rollout_is_weights(i["train_logprobs"], i["rollout_logprobs"], m,
                              level=kw["rollout_is"],
                              threshold=_verl_threshold(kw["rollout_is_threshold"]))
    assert ours.dtype == i["train_logprobs"].dtype and not ours[m == 0].any()
    if raised(case):
        # verl refuses a batch with no response token (compute_is_metrics); here: zeros
        assert raised(case).startswith("ValueError") and not m.any()
        return
    theirs = case["outputs"]["rollout_is_weights"]
    if kw["rollout_is_threshold"] in (1e9, "1e-12_1e12"):
        # e^±30 are in the inputs: the ±20 clamp on the log-weight is what shows here
        assert theirs.max() == pytest.approx(math.exp(20), rel=1e-6)
    if _nan_logprobs(i["train_logprobs"], i["rollout_logprobs"]).any():
        # verl's NaN·0 on padding; here 0 (the next test says where)
        theirs = np.where(m != 0, theirs, 0)
    # exp of an exact log-ratio: a relative error of an ulp of the input dtype (the weights
    # span e^-20 … e^20, so atol is not scaled by the largest); NaN where verl has NaN
    np.testing.assert_allclose(ours, theirs, **tol(theirs.dtype))


def _nan_logprobs(*logprobs: np.ndarray) -> np.ndarray:
    """``[B, T]``: True where any of the log-probs is NaN."""
    return np.logical_or.reduce([np.isnan(x) for x in logprobs])


def _reached(bad: np.ndarray, real: np.ndarray, sequence: bool) -> np.ndarray:
    """The response tokens a NaN log-prob on a response token reaches: its own token, or at the
    sequence level every token of its response."""
    bad = bad & real
    return (bad.any(axis=1, keepdims=True) & real) if sequence else bad


VERL_NAN = [p for p in cases("verl", "compute_rollout_correction_weights") if "NaN" in p.id]
TRL_VLLM_NAN = [p for p in cases("trl", "GRPOTrainer._generate_and_score_completions (vLLM "
                                        "importance sampling)") if "NaN" in p.id]


def test_the_vectors_hold_nan_log_probs_for_every_dtype_level_and_threshold_kind():
    verl = {(c["inputs"]["train_logprobs"].dtype.name, c["kwargs"]["rollout_is"],
             type(c["kwargs"]["rollout_is_threshold"])) for (c,) in (p.values for p in VERL_NAN)}
    assert verl == {(d, level, kind) for d in ("float32", "float64")
                    for level in ("token", "sequence") for kind in (float, str)}
    trl = {(c["inputs"]["old_per_token_logps"].dtype.name,
            c["kwargs"]["vllm_importance_sampling_mode"])
           for (c,) in (p.values for p in TRL_VLLM_NAN)}
    assert trl == {(d, m) for d in ("float32", "float64") for m in (
        "token_truncate", "token_mask", "sequence_truncate", "sequence_mask")}


@pytest.mark.parametrize("case", VERL_NAN)
def test_a_nan_log_prob_gives_a_nan_tis_weight_and_a_0_icepop_weight_as_in_verl_0_on_padding(
        case):
    """A NaN log-prob on a response token: NaN under TIS (min(NaN, C) is NaN) and 0 under
    IcePop (NaN is in no band), on its token or, at the sequence level, on its whole response;
    every other weight is untouched. On padding the weight is 0 here whatever padding holds;
    verl's is NaN·0 = NaN under TIS wherever a NaN reaches it: padding's own NaN at the token
    level (its masked sum drops it at the sequence level), a response token's NaN on the
    padding of its row at the sequence level."""
    i, kw = case["inputs"], case["kwargs"]
    m = i["response_mask"]
    real = m != 0
    bad = _nan_logprobs(i["train_logprobs"], i["rollout_logprobs"])
    assert (bad & real).any() and (bad & ~real).any()  # the case holds both kinds
    sequence = kw["rollout_is"] == "sequence"
    icepop = isinstance(kw["rollout_is_threshold"], str)
    hit = _reached(bad, real, sequence)
    ours = rollout_is_weights(i["train_logprobs"], i["rollout_logprobs"], m,
                              level=kw["rollout_is"],
                              threshold=_verl_threshold(kw["rollout_is_threshold"]))
    theirs = case["outputs"]["rollout_is_weights"]
    for w in (ours, theirs):
        if icepop:
            assert np.all(w[hit] == 0) and not np.isnan(w).any()
        else:
            assert np.all(np.isnan(w[hit])) and not np.isnan(w[real & ~hit]).any()
    assert not ours[~real].any()
    if not icepop:
        on_padding = ((bad & real).any(axis=1, keepdims=True) if sequence else bad) & ~real
        np.testing.assert_array_equal(np.isnan(theirs) & ~real, on_padding)
        assert on_padding.any()


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer._generate_and_score_completions "
                                       "(vLLM importance sampling)"))
def test_rollout_is_weights_are_trls_vllm_correction_but_0_on_padding_and_one_sided(case):
    """TRL 1.16.0 truncates at clip_max (and clip_min, when set) or zeroes outside
    [clip_min, clip_max]; its token-level weight on padding is 1 (e^0) and its sequence weights
    are [B, 1]; it does not clamp the log-ratio (the inputs stay within ±5 per token)."""
    i, kw = case["inputs"], case["kwargs"]
    m = i["completion_mask"]
    real = m != 0
    level, how = kw["vllm_importance_sampling_mode"].split("_")
    low, high = kw["vllm_importance_sampling_clip_min"], kw["vllm_importance_sampling_clip_max"]
    theirs = case["outputs"]["vllm_importance_sampling_ratio"]

    def weights(sampling: np.ndarray) -> np.ndarray:
        if how == "truncate":
            w = rollout_is_weights(i["old_per_token_logps"], sampling, m, level=level,
                                   threshold=high)
            if low is not None:  # TRL also clips from below; TIS here has no lower bound
                w = np.where(real, np.maximum(w, low), 0)
            return w
        # an IcePop band; no lower bound is any positive one (every weight is > e^-20)
        return rollout_is_weights(i["old_per_token_logps"], sampling, m, level=level,
                                  threshold=(low or 1e-30, high))

    ours = weights(i["sampling_per_token_logps"])
    bad = np.isnan(i["sampling_per_token_logps"])
    if bad.any():
        # TRL counts a NaN sampling log-prob as a log-ratio of 0 (nan_to_num): a weight of 1 at
        # the token level, nothing added to the response's sum; here, as in verl, a NaN on a
        # response token gives NaN (truncate) or 0 (mask) where it reaches
        hit = _reached(bad, real, level == "sequence")
        assert hit.any() and (bad & ~real).any() and not np.isnan(theirs).any()
        assert np.all(np.isnan(ours[hit])) if how == "truncate" else np.all(ours[hit] == 0)
        assert not np.isnan(ours[~hit]).any()
        if level == "token":
            assert np.all(theirs[bad] == 1)
        ours = weights(np.where(bad, i["old_per_token_logps"], i["sampling_per_token_logps"]))
    if level == "sequence":
        assert theirs.shape == (m.shape[0], 1)
        theirs = np.where(real, theirs, 0)
    else:
        assert np.all(theirs[~real] == 1)  # e^0 on padding: the loss's mask removes it
        theirs = np.where(real, theirs, 0)
    close(ours, theirs)


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer.get_off_policy_mask"))
def test_off_policy_sequence_mask_equals_trls_get_off_policy_mask(case):
    i = case["inputs"]
    ours = off_policy_sequence_mask(i["advantages"], i["per_token_logps"],
                                    i["sampling_per_token_logps"], i["mask"],
                                    case["kwargs"]["off_policy_threshold"])
    theirs = case["outputs"]["off_policy_mask"]
    assert ours.shape == theirs.shape == (i["mask"].shape[0], 1)
    np.testing.assert_array_equal(ours, theirs)
    if i["mask"].shape[0] > 6:
        adv = i["advantages"][:, 0]
        # some negative-advantage rows are dropped, and only those
        assert theirs[adv >= 0].all() and (theirs[:, 0] == 0).any()
        assert np.all(adv[theirs[:, 0] == 0] < 0)


@pytest.mark.parametrize("case", [p for p in cases("trl", "GRPOTrainer.get_off_policy_mask")
                                  if "all layouts" in p.id])
def test_a_nan_log_prob_counts_as_a_kl_of_0_on_a_response_token_and_is_ignored_on_padding(case):
    """As TRL's ``nan_to_num``: a NaN in either log-prob adds 0 to its response's KL sum and
    still counts in ``n_b``; on padding it is ignored. Left in, the mean would be NaN and
    ``NaN <= δ`` false: the negative-advantage rows below, whose other tokens have a KL of 0,
    would be dropped."""
    i, delta = case["inputs"], case["kwargs"]["off_policy_threshold"]
    lp, samp, m = i["per_token_logps"], i["sampling_per_token_logps"], i["mask"]
    real = m != 0
    bad = _nan_logprobs(lp, samp)
    # NaN in each log-prob on a response token, and on padding
    for x in (lp, samp):
        assert (np.isnan(x) & real).any() and (np.isnan(x) & ~real).any()
    adv = i["advantages"][:, 0]
    kl = np.where(real & ~bad, samp.astype(np.float64) - lp, 0).sum(1) / np.maximum(
        real.sum(1), 1)
    expected = (adv >= 0) | (kl <= delta)
    rows = bad.any(axis=1)
    theirs = case["outputs"]["off_policy_mask"][:, 0]
    ours = off_policy_sequence_mask(i["advantages"], lp, samp, m, delta)[:, 0]
    np.testing.assert_array_equal(theirs[rows], expected[rows])
    np.testing.assert_array_equal(ours[rows], expected[rows])
    assert (rows & (bad & real).any(axis=1) & (adv < 0) & expected).sum() >= 2


OFFPOLICY_DEFAULTS = {
    "verl": {
        "verl/trainer/config/algorithm/rollout_correction.yaml:rollout_is_threshold": 2.0,
        "verl/trainer/config/algorithm/rollout_correction.yaml:rollout_is_batch_normalize": False,
        "verl/trainer/config/algorithm/rollout_correction.yaml:rollout_rs": None,
    },
    "trl": {
        "GRPOConfig.vllm_importance_sampling_clip_min": None,
        "GRPOConfig.off_policy_mask_threshold": None,
    },
    "openrlhf": {
        "--algo.advantage.is_correction_level": "off",
        "--algo.advantage.is_correction_mode": "mask",
        "--algo.advantage.is_correction_gating": "ratio",
        "--algo.advantage.is_correction_threshold": [0.5, 5.0],
    },
}


@pytest.mark.parametrize(("key", "name"),
                         [(k, n) for k, d in OFFPOLICY_DEFAULTS.items() for n in d],
                         ids=lambda x: x)
def test_each_default_the_offpolicy_docstrings_state_is_the_pinned_librarys(key, name):
    recorded = vectors(key)["defaults"][name]
    assert recorded["value"] == OFFPOLICY_DEFAULTS[key][name], recorded
# ---- SAPO and KL-Cov (sapo_loss, kl_cov_loss) ---------------------------------------------------


def _verl_policy_inputs(case: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A verl policy-loss case's ``(log_prob, old_log_prob, advantages, response_mask)``: our
    losses' ``(new_logprobs, old_logprobs, advantages, mask)``."""
    i = case["inputs"]
    return i["log_prob"], i["old_log_prob"], i["advantages"], i["response_mask"]


def _lesson_grad(exercise_id: str, new: np.ndarray, *args, **kwargs) -> tuple[float, np.ndarray]:
    """The lesson's answer on these inputs: its loss, and d loss / d new by autograd."""
    lp = torch.tensor(new, requires_grad=True)
    loss = lesson_function(exercise_id)(
        lp, *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    loss.backward()
    return loss.item(), lp.grad.numpy()


def _sapo_token_mean(case: dict) -> float:
    """SAPO's per-token loss aggregated by "token-mean" (the mode the cases hand verl)."""
    i, kw = case["inputs"], case["kwargs"]
    adv = i["advantages"].astype(np.float64)
    ratio = np.exp(np.clip(i["log_prob"] - i["old_log_prob"], -20, 20).astype(np.float64))
    tau = np.where(adv > 0, kw["tau_pos"], kw["tau_neg"])
    per_token = -adv * 4 / tau / (1 + np.exp(-tau * (ratio - 1)))
    return aggregate_loss(per_token, i["response_mask"], "token-mean")


@pytest.mark.parametrize("case", cases("verl", "compute_policy_loss_sapo"))
def test_sapo_loss_equals_verl_which_takes_the_sequence_mean_whatever_loss_agg_mode(case):
    kw = case["kwargs"]
    new, old, adv, m = _verl_policy_inputs(case)
    ours = sapo_loss(new, old, adv, m, tau_pos=kw["tau_pos"], tau_neg=kw["tau_neg"])
    theirs = case["outputs"]["pg_loss"]
    if no_token_gives_nan_there_and_zero_here(m, ours, theirs):
        return
    assert np.abs(new - old).max() == 30  # the clamp at ±20 acts
    # verl divides each row by n_b + 1e-8
    close(ours, theirs, rtol=1e-8)
    # it was handed loss_agg_mode "token-mean" and did not use it
    assert kw["loss_agg_mode"] == "token-mean"
    assert abs(_sapo_token_mean(case) - float(theirs)) > 1e-3


@pytest.mark.parametrize("case", cases("verl", "compute_policy_loss_sapo"))
def test_lesson_sapo_loss_has_verls_gradient_clamp_included(case):
    kw = case["kwargs"]
    new, old, adv, m = _verl_policy_inputs(case)
    loss, grad = _lesson_grad("beyond/sapo_loss", new, old, adv, m, kw["tau_pos"], kw["tau_neg"])
    theirs = case["outputs"]["grad_log_prob"]
    # |log ρ| = 30 > 20: verl's clamp leaves no gradient there, and the lesson's neither
    beyond = np.abs(new - old) > 20
    assert not theirs[beyond].any() and not grad[beyond].any()
    close(grad, theirs, rtol=1e-8)
    if not m.any():
        assert loss == 0.0


@pytest.mark.parametrize("case", cases("verl", "compute_policy_loss_kl_cov"))
def test_kl_cov_loss_equals_verl_compute_policy_loss_kl_cov(case):
    kw = case["kwargs"]
    new, old, adv, m = _verl_policy_inputs(case)
    ours = kl_cov_loss(new, old, adv, m, k_ratio=kw["kl_cov_ratio"], kl_coef=kw["ppo_kl_coef"],
                       loss_agg_mode=kw["loss_agg_mode"])
    theirs = case["outputs"]["pg_loss"]
    if no_token_gives_nan_there_and_zero_here(m, ours, theirs):
        return
    # no two covariance terms near the cut: torch.topk and the reference choose the same tokens
    real = m != 0
    a, lp = adv[real].astype(np.float64), new[real].astype(np.float64)
    cov = np.sort((a - a.mean()) * (lp - lp.mean()))[::-1]
    k = max(1, int(real.sum() * kw["kl_cov_ratio"]))
    assert cov[k - 1] - cov[k] > 1e-4
    # "seq-mean-token-mean": verl divides each row by n_b + 1e-8 (row means of order 1)
    close(ours, theirs, rtol=1e-8, atol=1e-8)
    # without the penalty the value differs: the chosen tokens have moved
    plain = kl_cov_loss(new, old, adv, m, k_ratio=kw["kl_cov_ratio"], kl_coef=0.0,
                        loss_agg_mode=kw["loss_agg_mode"])
    assert abs(plain - float(theirs)) > 1e-4


@pytest.mark.parametrize("case", [c for c in cases("verl", "compute_policy_loss_kl_cov")
                                  if c.values[0]["kwargs"]["loss_agg_mode"] == "token-mean"])
def test_lesson_kl_cov_loss_has_verls_gradient_and_no_pull_where_log_rho_is_0(case):
    kw = case["kwargs"]
    new, old, adv, m = _verl_policy_inputs(case)
    _, grad = _lesson_grad("beyond/kl_cov_loss", new, old, adv, m, kw["kl_cov_ratio"],
                           kw["ppo_kl_coef"])
    theirs = case["outputs"]["grad_log_prob"]
    close(grad, theirs)
    if not m.any():
        return
    # the penalty's gradient: kl_coef·sign(log ρ)/N on the chosen tokens, nothing elsewhere
    _, plain = _lesson_grad("beyond/kl_cov_loss", new, old, adv, m, kw["kl_cov_ratio"], 0.0)
    log_ratio = (new - old).astype(np.float64)
    pull = (theirs - plain) * m.sum() / kw["ppo_kl_coef"]
    # ±1 where chosen, 0 elsewhere up to rounding: `theirs` was computed on another machine,
    # whose kernels may round the gradients' last bits otherwise than this one's
    chosen = np.abs(pull) > 0.5
    k = max(1, int(m.sum() * kw["kl_cov_ratio"]))
    unmoved = (log_ratio == 0) & (m != 0)
    assert chosen.sum() <= k and unmoved.any()
    close(pull[chosen], np.sign(log_ratio[chosen]), atol=1e-4)
    close(pull[~chosen], np.zeros(np.count_nonzero(~chosen)), atol=1e-4)


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer._compute_loss (sapo)"))
def test_sapo_loss_equals_trl_with_float32_temperatures_and_empty_rows_counted(case):
    """TRL builds the temperatures with torch.where of two Python floats (float32 whatever the
    log-probs) and averages over all B rows, an empty row counting as 0."""
    i, kw = case["inputs"], case["kwargs"]
    m = i["completion_mask"]
    f32 = {"tau_pos": float(np.float32(kw["sapo_temperature_pos"])),
           "tau_neg": float(np.float32(kw["sapo_temperature_neg"]))}
    args = (i["per_token_logps"], i["old_per_token_logps"], i["advantages"], m)
    B, has = m.shape[0], np.count_nonzero(m.any(axis=1))
    assert has < B
    theirs = case["outputs"]["loss"]
    close(sapo_loss(*args, **f32) * has / B, theirs)
    exact = sapo_loss(*args, tau_pos=kw["sapo_temperature_pos"],
                      tau_neg=kw["sapo_temperature_neg"]) * has / B
    if dtype_of(case) == np.float64 and f32["tau_neg"] != kw["sapo_temperature_neg"]:
        assert abs(exact - float(theirs)) > 1e-9 * abs(float(theirs))  # 1.05 ≠ float32(1.05)
    _, grad = _lesson_grad("beyond/sapo_loss", *args, f32["tau_pos"], f32["tau_neg"])
    close(grad * has / B, case["outputs"]["grad_per_token_logps"])


def test_sapo_and_kl_cov_defaults_the_docstrings_state_are_the_pinned_librarys():
    actor = "verl/trainer/config/actor/actor.yaml:"
    verl = vectors("verl")["defaults"]
    stated = {"tau_pos": 1.0, "tau_neg": 1.05, "policy_loss.loss_mode": "vanilla",
              "policy_loss.kl_cov_ratio": 0.0002, "policy_loss.ppo_kl_coef": 0.1,
              "policy_loss.clip_cov_lb": 1.0, "policy_loss.clip_cov_ub": 5.0}
    assert {k: verl[actor + k]["value"] for k in stated} == stated
    trl = vectors("trl")["defaults"]
    assert trl["GRPOConfig.sapo_temperature_pos"]["value"] == 1.0
    assert trl["GRPOConfig.sapo_temperature_neg"]["value"] == 1.05
    # neither TRL nor OpenRLHF has KL-Cov; OpenRLHF has no SAPO
    assert trl["files mentioning kl_cov"]["value"] == []
    assert vectors("openrlhf")["defaults"]["files mentioning sapo or kl_cov"]["value"] == []
# ---- GSPO and CISPO (beyond/gspo_loss, beyond/cispo_loss) ---------------------------------------


# verl's "seq-mean-token-mean" divides each row by |y_i| + 1e-8: a relative 1e-8/|y_i| per row,
# which rows of both signs can turn into a larger relative error of their mean (inputs are O(1))
ROW_EPS = {"rtol": 1e-8, "atol": 1e-8}


def _lesson_loss_and_grad(exercise_id: str, new, old, adv, m, *args) -> tuple[float, np.ndarray]:
    """The lesson's PyTorch answer on these inputs: its loss and d loss / d new by autograd."""
    x = torch.tensor(new, requires_grad=True)
    loss = lesson_function(exercise_id)(x, torch.tensor(old), torch.tensor(adv), torch.tensor(m),
                                        *args)
    loss.backward()
    return loss.item(), x.grad.numpy()


def _per_row(fn, new, old, adv, m, **kw) -> np.ndarray:
    """``fn`` on each row alone (a batch of one response): ``[B]``, 0 for an empty row."""
    return np.array([fn(new[b : b + 1], old[b : b + 1], adv[b : b + 1], m[b : b + 1], **kw)
                     for b in range(len(m))])


def _lesson_gspo_rows(new, old, adv, m, *clip) -> np.ndarray:
    """The GSPO lesson's gradient with each response as its own batch (``[B, T]``)."""
    return np.concatenate([
        _lesson_loss_and_grad("beyond/gspo_loss", new[b : b + 1], old[b : b + 1],
                              adv[b : b + 1], m[b : b + 1], *clip)[1] for b in range(len(m))])


@pytest.mark.parametrize("case", cases("verl", "compute_policy_loss_gspo"))
def test_gspo_loss_and_the_lessons_gradient_equal_verl_compute_policy_loss_gspo(case):
    kw, o = case["kwargs"], case["outputs"]
    new, old, adv, m = _verl_policy_inputs(case)
    clip = (kw["clip_ratio_low"], kw["clip_ratio_high"])
    ours = gspo_loss(new, old, adv, m, clip_low=clip[0], clip_high=clip[1])
    lesson, grad = _lesson_loss_and_grad("beyond/gspo_loss", new, old, adv, m, *clip)
    close(lesson, ours, new.dtype)
    if kw["loss_agg_mode"] == "token-mean":
        # verl's default aggregation: each response weighs by its token count |y_i|
        n = m.sum(axis=1)
        rows = _per_row(gspo_loss, new, old, adv, m, clip_low=clip[0], clip_high=clip[1])
        close((n * rows).sum() / n.sum(), o["pg_loss"])
        assert abs(ours - float(o["pg_loss"])) > 1e-4
        # and its gradient is each response's own gradient times |y_i| / Σ|y|
        rows_grad = _lesson_gspo_rows(new, old, adv, m, *clip)
        close(rows_grad * (n / n.sum())[:, None], o["grad_log_prob"])
        return
    close(ours, o["pg_loss"], **ROW_EPS)
    # the lesson's stop gradient gives verl's gradient, per-token advantages included
    close(grad, o["grad_log_prob"], rtol=1e-8)
    if "mean log-ratio 12" in case["name"]:
        # log s is capped at 10: value −Â·e¹⁰, and no gradient for that response
        assert np.log(np.abs(new - old)[0]).min() > np.log(11)
        assert not o["grad_log_prob"][0].any()


def test_verls_gspo_gradient_weighs_a_response_by_s_not_by_its_tokens_ratios():
    """Where nothing is clipped, ∂L/∂log π_t = −Â_t·s_i / (|B|·|y_i|): the same for every
    token of a response with one advantage, whatever its own ratio ρ_t."""
    (c,) = [c.values[0] for c in cases("verl", "compute_policy_loss_gspo")
            if c.id == "float64 far clip_ratio_low=0.2 clip_ratio_high=0.2 seq-mean-token-mean"]
    i, g = c["inputs"], c["outputs"]["grad_log_prob"]
    m = i["response_mask"] != 0
    n = m.sum(axis=1)
    log_s = np.where(m, i["log_prob"] - i["old_log_prob"], 0).sum(axis=1) / np.maximum(n, 1)
    s, a = np.exp(log_s), i["advantages"][:, 0]
    inside = (np.abs(log_s) < 0.18) & (n > 0)  # s in [0.8, 1.2]: no clip
    assert inside.sum() >= 2
    want = -a * s / (np.count_nonzero(n) * np.maximum(n, 1))
    for b in np.nonzero(inside)[0]:
        close(g[b, m[b]], np.full(n[b], want[b]), rtol=1e-8)
        assert np.ptp(np.exp(i["log_prob"] - i["old_log_prob"])[b, m[b]]) > 0.1


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer._compute_loss (sequence level)"))
def test_trl_sequence_level_is_gspo_with_empty_rows_counted_and_no_stop_gradient(case):
    """TRL 1.16.0 (loss_type "grpo"): the same value and, for one advantage per response, the
    same gradient, over B rows with empty ones counted as 0. With per-token advantages its
    gradient is the row mean of the lesson's (no stop gradient: every token gets the mean
    advantage); it does not cap log s at 10. loss_type "dapo" weighs responses by length."""
    i, kw, o = case["inputs"], case["kwargs"], case["outputs"]
    new, old, adv, m = (i["per_token_logps"], i["old_per_token_logps"], i["advantages"],
                        i["completion_mask"])
    clip = (kw["epsilon_low"], kw["epsilon_high"])
    n, B = m.sum(axis=1), len(m)
    has = np.count_nonzero(n)
    if kw["loss_type"] == "dapo":  # Σ_t over the batch / number of tokens: ∝ |y_i|
        rows = _per_row(gspo_loss, new, old, adv, m, clip_low=clip[0], clip_high=clip[1])
        close((n * rows).sum() / n.sum(), o["loss"])
        close(_lesson_gspo_rows(new, old, adv, m, *clip) * (n / n.sum())[:, None],
              o["grad_per_token_logps"])
        return
    assert has < B  # the batch has an empty row
    ours = gspo_loss(new, old, adv, m, clip_low=clip[0], clip_high=clip[1]) * has / B
    _, grad = _lesson_loss_and_grad("beyond/gspo_loss", new, old, adv, m, *clip)
    grad = grad * has / B
    if adv.ndim == 2:  # TRL: the gradient of s_i reaches every token of the response equally
        grad = m * grad.sum(axis=1, keepdims=True) / np.maximum(n, 1)[:, None]
    if "mean log-ratio 12" in case["name"]:
        # TRL has no cap: row 0 (Â = −1, |y| = 8) is e¹² and its gradient e¹²/(B·8)
        assert adv[0] == -1 and n[0] == 8
        ours += (np.exp(12.0) - np.exp(10.0)) / B
        assert not grad[0].any()
        grad[0] = np.exp(12.0) / (B * 8)
    close(ours, o["loss"])
    close(grad, o["grad_per_token_logps"], rtol=1e-8)  # the lesson's |y_i| + 1e-8 is verl's


def test_trl_gspo_with_per_token_advantages_has_another_gradient_than_verls_stop_gradient():
    (c,) = [c.values[0] for c in cases("trl", "GRPOTrainer._compute_loss (sequence level)")
            if c.id == "float64 far per-token advantages loss_type=grpo epsilon=0.2 "
                       "epsilon_high=0.28"]
    i = c["inputs"]
    m = i["completion_mask"]
    _, grad = _lesson_loss_and_grad("beyond/gspo_loss", i["per_token_logps"],
                                    i["old_per_token_logps"], i["advantages"], m, 0.2, 0.28)
    grad = grad * np.count_nonzero(m.sum(axis=1)) / len(m)  # TRL's mean over all B rows
    assert np.abs(grad - c["outputs"]["grad_per_token_logps"]).max() > 1e-3


@pytest.mark.parametrize("case", cases("openrlhf", "PolicyLoss (gspo)"))
def test_openrlhf_gspo_is_gspo_without_the_stop_gradient_or_the_cap(case):
    """OpenRLHF 0.11.2 (--actor.policy_loss_type gspo): the per-sample mean over rows with
    tokens, as verl; like TRL one ratio per response with the gradient through all its tokens
    (with per-token advantages each token gets the row mean of the lesson's) and no cap."""
    i, kw, o = case["inputs"], case["kwargs"], case["outputs"]
    new, old, adv, m = i["log_probs"], i["old_log_probs"], i["advantages"], i["action_mask"]
    clip = (kw["clip_eps_low"], kw["clip_eps_high"])
    ours = gspo_loss(new, old, adv, m, clip_low=clip[0], clip_high=clip[1])
    _, grad = _lesson_loss_and_grad("beyond/gspo_loss", new, old, adv, m, *clip)
    n = m.sum(axis=1)
    if "per-token" in case["name"]:
        grad = m * grad.sum(axis=1, keepdims=True) / np.maximum(n, 1)[:, None]
    if "mean log-ratio 12" in case["name"]:
        has = np.count_nonzero(n)
        assert adv[0, 0] == -1 and n[0] == 8 and not grad[0].any()
        ours += (np.exp(12.0) - np.exp(10.0)) / has
        grad[0] = np.exp(12.0) / (has * 8)
    close(ours, o["loss"], **ROW_EPS)
    close(grad, o["grad_log_probs"], rtol=1e-8)


def _ppo_clipped(ratio, adv, low, high) -> np.ndarray:
    """Where PPO's clip holds (its gradient 0): above 1 + high with Â > 0, below 1 − low with
    Â < 0."""
    return ((ratio > 1 + high) & (adv > 0)) | ((ratio < 1 - low) & (adv < 0))


@pytest.mark.parametrize("case", cases("verl", "compute_policy_loss_cispo"))
def test_cispo_loss_equals_verl_and_clipped_tokens_keep_their_gradient(case):
    kw, o = case["kwargs"], case["outputs"]
    new, old, adv, m = _verl_policy_inputs(case)
    low, high, mode = kw["clip_ratio_low"], kw["clip_ratio_high"], kw["loss_agg_mode"]
    ours = cispo_loss(new, old, adv, m, clip_low=low, clip_high=high, loss_agg_mode=mode)
    close(ours, o["pg_loss"], **ROW_EPS)
    theirs = o["grad_log_prob"]
    if mode == "token-mean":
        lesson, grad = _lesson_loss_and_grad("beyond/cispo_loss", new, old, adv, m, low, high)
        close(lesson, ours, new.dtype)
        close(grad, theirs)
    # where PPO's clip holds, CISPO's gradient is the bound times −Â (over the token count)
    real = m != 0
    ratio = np.exp((new - old).astype(np.float64))
    clipped = _ppo_clipped(ratio, adv, low, high) & real
    assert clipped.any() and theirs[clipped].all()
    if mode == "token-mean":
        bound = np.where(ratio > 1, 1 + high, 1 - low)
        close(theirs[clipped], (-bound * adv / real.sum())[clipped], new.dtype)


@pytest.mark.parametrize("case", cases("trl", "GRPOTrainer._compute_loss (cispo)"))
def test_trl_cispo_caps_the_weight_at_epsilon_high_itself_with_no_floor(case):
    """TRL 1.16.0: weight min(ρ, epsilon_high), no floor, token-mean: ``cispo_loss`` with
    clip_low = 1 and clip_high = epsilon_high − 1. epsilon_high left unset is epsilon, 0.2:
    every weight is then at most 0.2."""
    i, kw, o = case["inputs"], case["kwargs"], case["outputs"]
    new, old, adv, m = (i["per_token_logps"], i["old_per_token_logps"], i["advantages"],
                        i["completion_mask"])
    cap = kw["epsilon_high"]
    real = m != 0
    ratio = np.exp((new - old).astype(np.float64))
    if cap >= 1:
        ours = cispo_loss(new, old, adv, m, clip_low=1.0, clip_high=cap - 1)
        _, grad = _lesson_loss_and_grad("beyond/cispo_loss", new, old, adv, m, 1.0, cap - 1)
        assert (ratio[real] > cap).any() and (ratio[real] < 0.5).any()
    else:  # below 1: not a range around 1 at all
        w = np.minimum(ratio, cap)
        per_token = -w * adv[:, None] * np.where(real, new, 0)
        ours = per_token[real].sum() / real.sum()
        grad = np.where(real, -w * adv[:, None], 0) / real.sum()
        assert np.mean(ratio[real] > cap) > 0.5  # most tokens weigh 0.2
    close(ours, o["loss"])
    close(grad, o["grad_per_token_logps"])


def test_gspo_and_cispo_defaults_in_verl_and_trl():
    verl, trl = vectors("verl")["defaults"], vectors("trl")["defaults"]
    assert verl["register_policy_loss compute_policy_loss_gspo"]["value"] == ["gspo"]
    assert verl["register_policy_loss compute_policy_loss_cispo"]["value"] == ["cispo"]
    # every policy loss gets the actor's loss_agg_mode ("token-mean"), not its own default
    assert verl["ppo_loss: loss_agg_mode"]["value"] == "config.loss_agg_mode"
    assert verl["verl/trainer/config/actor/actor.yaml:loss_agg_mode"]["value"] == "token-mean"
    assert verl["verl/trainer/config/actor/actor.yaml:clip_ratio_low"]["value"] == 0.2
    assert verl["verl/trainer/config/actor/actor.yaml:clip_ratio_high"]["value"] == 0.2
    assert trl["GRPOConfig.importance_sampling_level"]["value"] == "token"
    assert trl["GRPOConfig.epsilon"]["value"] == 0.2
    assert trl["GRPOConfig.epsilon_high"]["value"] is None
    assert trl["GRPOConfig.loss_type"]["value"] == "dapo"
    # CISPO's ε_max: "the recommended value is `5.0`"
    assert "loss_type='cispo'" in trl["GRPOConfig.epsilon_high help"]["value"]
    assert "recommended value is `5.0`" in trl["GRPOConfig.epsilon_high help"]["value"]
    openrlhf = vectors("openrlhf")["defaults"]
    assert openrlhf["--actor.policy_loss_type"]["value"] == "ppo"
    assert openrlhf["--actor.policy_loss_type choices"]["value"] == ["ppo", "gspo"]  # no CISPO
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
    _token_logprobs_are_theirs(case, "labels", "log_probs")


@pytest.mark.parametrize("case", cases("openrlhf", "compute_entropy"))
def test_token_entropy_equals_openrlhfs_compute_entropy_within_a_few_ulps_of_the_largest_logit(
        case):
    _token_entropy_is_theirs(case, within_ulps=True)


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
