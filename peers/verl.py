"""verl's vectors: ``verl/trainer/ppo/core_algos.py`` and ``verl/utils/torch_functional.py``.

Importing ``verl`` pulls in ray, so each function is lifted from the wheel (:mod:`peers.lift`).
Stand-ins replace only what the lifted code imports: ``verl_F`` is a namespace of
``torch_functional``'s own functions (lifted the same way), ``AlgoConfig`` and ``ActorConfig``
are plain objects holding the fields the functions read, and ``apply_kl_penalty`` gets a
``DataProto``-like object whose ``batch`` is a dict.
"""

from __future__ import annotations

import ast
import functools
import math
import os
import types
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch

from .collect import Vectors, gather, temperature_cases, tensor
from .defaults import yaml_keys
from .fetch import Pin
from .inputs import (
    ALL_LAYOUTS,
    DTYPES,
    grid,
    gspo_inputs,
    log_ratio_extremes,
    logits_inputs,
    mask,
    scores,
)
from .lift import Source


class AlgoConfig:
    """Stand-in for verl.trainer.config.AlgoConfig: the fields the estimators read."""

    def __init__(self, gamma: float = 1.0):
        self.gamma = gamma


class ActorConfig:
    """Stand-in for verl.workers.config.ActorConfig: clip ratios, one process."""

    def __init__(self, clip_ratio: float, clip_ratio_low=None, clip_ratio_high=None,
                 clip_ratio_c: float = 3.0):
        self.clip_ratio, self.clip_ratio_c = clip_ratio, clip_ratio_c
        self.clip_ratio_low, self.clip_ratio_high = clip_ratio_low, clip_ratio_high
        self.global_batch_info: dict[str, Any] = {}  # one process: agg_loss's own defaults

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


class _Batch(dict):
    """``DataProto.batch`` stand-in: a dict of tensors with ``batch_size``."""

    def __init__(self, batch_size: int, **tensors: torch.Tensor):
        super().__init__(tensors)
        self.batch_size = [batch_size]


def load(pin: Pin, wheel: Path) -> dict[str, Any]:
    """The lifted functions by name, and the parsed modules (``tf``, ``ca``, ``rt``: for
    provenance)."""
    tf = Source(pin, wheel, "verl/utils/torch_functional.py")
    verl_F = tf.define({"torch": torch}, "masked_sum", "masked_mean", "masked_var",
                       "masked_whiten", "clip_by_value", "entropy_from_logits")
    ca = Source(pin, wheel, "verl/trainer/ppo/core_algos.py")
    ns = ca.define(
        {"torch": torch, "np": np, "verl_F": types.SimpleNamespace(**verl_F),
         "defaultdict": defaultdict, "Optional": Optional, "Any": Any,
         "AlgoConfig": AlgoConfig, "ActorConfig": ActorConfig},
        "FixedKLController", "AdaptiveKLController", "compute_gae_advantage_return",
        "compute_grpo_outcome_advantage", "compute_rloo_outcome_advantage",
        "compute_reinforce_plus_plus_outcome_advantage", "agg_loss",
        "compute_policy_loss_vanilla", "compute_value_loss", "kl_penalty", "kl_penalty_forward",
    )
    rt = Source(pin, wheel, "verl/trainer/ppo/ray_trainer.py")
    core_algos = types.SimpleNamespace(
        kl_penalty=ns["kl_penalty"], AdaptiveKLController=ns["AdaptiveKLController"])
    rt_ns = rt.define({"torch": torch, "core_algos": core_algos, "DataProto": object,
                       "masked_mean": verl_F["masked_mean"]}, "apply_kl_penalty")
    fns = {name: ns[name] for name in ca.lifted} | {name: verl_F[name] for name in tf.lifted}
    fns["apply_kl_penalty"] = rt_ns["apply_kl_penalty"]
    return fns | {"tf": tf, "ca": ca, "rt": rt}


# the YAML configs the defaults are read from
CONFIG = "verl/trainer/config/"


def _case_inputs(seed: int, dtype: str, layouts: list[str] = ALL_LAYOUTS) -> dict[str, Any]:
    """A seeded generator and the ``[B, T]`` mask of ``layouts`` (one row each), in ``dtype``."""
    m = mask(layouts, DTYPES[dtype])
    B, T = m.shape  # batch, response length
    return {"rng": np.random.default_rng(seed), "dt": DTYPES[dtype], "mask": m, "B": B, "T": T}


# ---- GAE ---------------------------------------------------------------------------------
def _gae_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_gae_advantage_return (core_algos.py, with torch_functional's masked_whiten) at
    the pinned version: three (gamma, lam), every mask layout."""
    ca = f["ca"]
    v = Vectors(pin)
    v.operator("compute_gae_advantage_return", ca.where("compute_gae_advantage_return"),
               "outputs: advantages (whitened inside by verl_F.masked_whiten) and returns")
    for dtype in DTYPES:
        for seed, (gamma, lam) in enumerate([(1.0, 0.95), (0.99, 0.9), (1.0, 1.0)]):
            c = _case_inputs(100 + seed, dtype)
            shape = (c["B"], c["T"])
            r, values = grid(c["rng"], shape, 0.5, c["dt"]), grid(c["rng"], shape, 1.0, c["dt"])
            inputs = {"token_level_rewards": r, "values": values, "response_mask": c["mask"]}

            def run(inputs=inputs, gamma=gamma, lam=lam):
                adv, ret = f["compute_gae_advantage_return"](
                    tensor(inputs["token_level_rewards"]), tensor(inputs["values"]),
                    tensor(inputs["response_mask"]), gamma, lam)
                return {"advantages": adv, "returns": ret}

            v.case("compute_gae_advantage_return", f"{dtype} gamma={gamma} lam={lam}",
                   {"gamma": gamma, "lam": lam}, inputs, run)
    return v


# ---- KL penalty: every mode, value and gradient
def _kl_penalty_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """kl_penalty and kl_penalty_forward (core_algos.py) at the pinned version: every mode,
    value and gradient."""
    ca = f["ca"]
    v = Vectors(pin)
    v.operator("kl_penalty", ca.where("kl_penalty"),
               "kl_penalty(logprob, ref_logprob, mode) with kl_penalty_forward (lines "
               f"{ca.lifted['kl_penalty_forward']['lines']}); grad_logprob is "
               "d(sum of the output)/d logprob by autograd")
    modes = ["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3", "k1+", "k2+", "k3+",
             "low_var_kl+"]
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(200)
        ref = (grid(rng, (3, 8), 1.0, dt) - 2.0).astype(dt)
        logprob = (ref + log_ratio_extremes(rng, (3, 8), dt)).astype(dt)
        inputs = {"logprob": logprob, "ref_logprob": ref}
        for mode in modes:

            def run(mode=mode, inputs=inputs):
                lp = tensor(inputs["logprob"], grad=True)
                out = f["kl_penalty"](lp, tensor(inputs["ref_logprob"]), mode)
                out.sum().backward()
                return {"kl": out, "grad_logprob": lp.grad}

            v.case("kl_penalty", f"{dtype} {mode}", {"kl_penalty": mode}, inputs, run)
    return v


# ---- reward shaping: apply_kl_penalty
def _kl_reward_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """apply_kl_penalty (ray_trainer.py) with FixedKLController (core_algos.py) at the pinned
    version: the KL-shaped token rewards."""
    rt = f["rt"]
    v = Vectors(pin)
    v.operator(
        "apply_kl_penalty", rt.where("apply_kl_penalty"),
        "token_level_scores hold each row's score at index response_mask.sum(-1) - 1, where "
        "verl/workers/reward_manager/naive.py:153 puts it (reward_tensor[i, "
        "valid_response_length - 1] = reward); kl_ctrl is FixedKLController(kl_coef); "
        "outputs: token_level_rewards",
    )
    for dtype in DTYPES:
        for seed, beta in enumerate([0.05, 0.2]):
            c = _case_inputs(300 + seed, dtype)
            B, T = c["B"], c["T"]
            score = grid(c["rng"], B, 1.0, c["dt"])
            old = (grid(c["rng"], (B, T), 1.0, c["dt"]) - 2.0).astype(c["dt"])
            ref = (grid(c["rng"], (B, T), 1.0, c["dt"]) - 2.0).astype(c["dt"])
            length = c["mask"].sum(-1).astype(np.int64)
            token_level_scores = np.zeros((B, T), c["dt"])
            rows = np.nonzero(length > 0)[0]
            token_level_scores[rows, length[rows] - 1] = score[rows]
            inputs = {"score": score, "token_level_scores": token_level_scores,
                      "old_log_probs": old, "ref_log_prob": ref, "response_mask": c["mask"]}

            def run(inputs=inputs, beta=beta, B=B):
                batch = _Batch(B, response_mask=tensor(inputs["response_mask"]),
                               token_level_scores=tensor(inputs["token_level_scores"]),
                               old_log_probs=tensor(inputs["old_log_probs"]),
                               ref_log_prob=tensor(inputs["ref_log_prob"]))
                data = types.SimpleNamespace(batch=batch)
                out, _ = f["apply_kl_penalty"](data, f["FixedKLController"](beta), "kl")
                return {"token_level_rewards": out.batch["token_level_rewards"]}

            v.case("apply_kl_penalty", f"{dtype} kl_coef={beta}",
                   {"kl_penalty": "kl", "kl_coef": beta}, inputs, run)
    return v


# ---- value loss
def _value_loss_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_value_loss (core_algos.py) at the pinned version: two clip ranges, and a batch
    with no response token."""
    ca = f["ca"]
    v = Vectors(pin)
    v.operator("compute_value_loss", ca.where("compute_value_loss"), "outputs: vf_loss")
    for dtype in DTYPES:
        for seed, (eps_v, layouts) in enumerate([(0.2, ALL_LAYOUTS), (0.5, ALL_LAYOUTS),
                                                  (0.2, ["empty", "empty"])]):
            c = _case_inputs(400 + seed, dtype, layouts)
            shape = (c["B"], c["T"])
            values = grid(c["rng"], shape, 1.0, c["dt"])
            vpreds = (values + grid(c["rng"], shape, 0.5, c["dt"])).astype(c["dt"])
            returns = grid(c["rng"], shape, 1.0, c["dt"])
            inputs = {"vpreds": vpreds, "values": values, "returns": returns,
                      "response_mask": c["mask"]}

            def run(inputs=inputs, eps_v=eps_v):
                loss, _ = f["compute_value_loss"](
                    tensor(inputs["vpreds"]), tensor(inputs["returns"]), tensor(inputs["values"]),
                    tensor(inputs["response_mask"]), eps_v, loss_agg_mode="token-mean")
                return {"vf_loss": loss}

            label = " no token" if layouts != ALL_LAYOUTS else ""
            v.case("compute_value_loss", f"{dtype} cliprange_value={eps_v}{label}",
                   {"cliprange_value": eps_v, "loss_agg_mode": "token-mean"}, inputs, run)
    return v


# ---- PPO policy loss with dual clip
def _ppo_policy_loss_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_policy_loss_vanilla (core_algos.py, with agg_loss) at the pinned version: the
    symmetric, asymmetric and dual clip, three loss_agg_modes."""
    ca = f["ca"]
    v = Vectors(pin)
    v.operator("compute_policy_loss_vanilla", ca.where("compute_policy_loss_vanilla"),
               "config: ActorConfig stand-in (clip_ratio, clip_ratio_low, clip_ratio_high, "
               "clip_ratio_c; global_batch_info {} = one process); outputs: pg_loss")
    sym = {"clip_ratio": 0.2, "clip_ratio_low": None, "clip_ratio_high": None}
    asym = {"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.28}
    conventions = [
        {**sym, "clip_ratio_c": 3.0, "loss_agg_mode": "token-mean"},
        {**sym, "clip_ratio_c": 1.5, "loss_agg_mode": "token-mean"},
        {**asym, "clip_ratio_c": 3.0, "loss_agg_mode": "token-mean"},
        {**asym, "clip_ratio_c": 3.0, "loss_agg_mode": "seq-mean-token-mean"},
        {**asym, "clip_ratio_c": 3.0, "loss_agg_mode": "seq-mean-token-sum-norm"},
    ]
    for dtype in DTYPES:
        for seed, conv in enumerate(conventions):
            c = _case_inputs(500 + seed, dtype)
            shape = (c["B"], c["T"])
            old = (grid(c["rng"], shape, 1.0, c["dt"]) - 2.0).astype(c["dt"])
            new = (old + log_ratio_extremes(c["rng"], shape, c["dt"])).astype(c["dt"])
            adv = grid(c["rng"], shape, 1.0, c["dt"])
            adv[0, :4] = [1.0, -1.0, -1.0, 1.0]  # both signs at log-ratios 5, −5, 30, −30
            inputs = {"old_log_prob": old, "log_prob": new, "advantages": adv,
                      "response_mask": c["mask"]}

            def run(inputs=inputs, conv=conv):
                config = ActorConfig(conv["clip_ratio"], conv["clip_ratio_low"],
                                     conv["clip_ratio_high"], conv["clip_ratio_c"])
                loss, _ = f["compute_policy_loss_vanilla"](
                    tensor(inputs["old_log_prob"]), tensor(inputs["log_prob"]),
                    tensor(inputs["advantages"]), tensor(inputs["response_mask"]),
                    loss_agg_mode=conv["loss_agg_mode"], config=config)
                return {"pg_loss": loss}

            tag = " ".join(f"{k}={val}" for k, val in conv.items() if val is not None)
            v.case("compute_policy_loss_vanilla", f"{dtype} {tag}", conv, inputs, run)
    return v


# ---- masked whitening
def _whiten_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """masked_whiten, masked_mean and masked_var (torch_functional.py) at the pinned version."""
    tf = f["tf"]
    v = Vectors(pin)
    v.operator("masked_whiten", tf.where("masked_whiten"),
               f"with masked_mean (lines {tf.lifted['masked_mean']['lines']}) and masked_var "
               f"(lines {tf.lifted['masked_var']['lines']}); outputs: whitened")
    for dtype in DTYPES:
        for shift_mean in (True, False):
            for layouts, label in [(ALL_LAYOUTS, "all layouts"), (["one token"], "one token"),
                                   (["empty"], "no token")]:
                c = _case_inputs(600, dtype, layouts)
                values = (grid(c["rng"], (c["B"], c["T"]), 2.0, c["dt"]) + 3.0).astype(c["dt"])
                inputs = {"values": values, "mask": c["mask"]}

                def run(inputs=inputs, shift_mean=shift_mean):
                    out = f["masked_whiten"](tensor(inputs["values"]), tensor(inputs["mask"]),
                                             shift_mean=shift_mean)
                    return {"whitened": out}

                v.case("masked_whiten", f"{dtype} shift_mean={shift_mean} {label}",
                       {"shift_mean": shift_mean}, inputs, run)
    return v


# ---- group advantages: GRPO and RLOO
def _group_advantage_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_grpo_outcome_advantage and compute_rloo_outcome_advantage (core_algos.py)
    at the pinned version, on the same groups of scores."""
    ca = f["ca"]
    v = Vectors(pin)
    def outcome_cases(name: str, kwargs_list: list[dict[str, Any]]) -> None:
        for dtype, dt in DTYPES.items():
            rng = np.random.default_rng(700)
            groups = {
                "random G=4": (scores(rng, 16, dt), np.repeat(np.arange(4), 4)),
                "eight copies of 0.7": (np.full(8, 0.7, dt), np.zeros(8, np.int64)),
                "seven copies of 1000.1": (np.full(7, 1000.1, dt), np.zeros(7, np.int64)),
                "0/1 scores with an equal group": (
                    np.array([1, 1, 1, 1, 0, 1, 0, 0], dt), np.repeat(np.arange(2), 4)),
                "a singleton group": (scores(rng, 5, dt), np.array([0, 0, 1, 1, 2])),
            }
            for label, (s, index) in groups.items():
                N = s.shape[0]  # responses
                m = mask((ALL_LAYOUTS * 3)[:N], dt)
                m[:, -1] = 1  # every response has a token (verl zeroes an empty row's advantage)
                token_level_rewards = np.zeros(m.shape, dt)
                token_level_rewards[:, -1] = s  # the score on one token; verl sums each row
                inputs = {"scores": s, "index": index, "token_level_rewards": token_level_rewards,
                          "response_mask": m}
                for kwargs in kwargs_list:

                    def run(inputs=inputs, kwargs=kwargs):
                        adv, _ = f[name](tensor(inputs["token_level_rewards"]),
                                         tensor(inputs["response_mask"]), inputs["index"],
                                         **kwargs)
                        return {"advantages": adv}

                    tag = " ".join(f"{k}={val}" for k, val in kwargs.items())
                    v.case(name, f"{dtype} {label} {tag}".strip(), kwargs, inputs, run)

    v.operator("compute_grpo_outcome_advantage", ca.where("compute_grpo_outcome_advantage"),
               "index: the group (prompt) id of each response; outputs: advantages [B, T]")
    outcome_cases("compute_grpo_outcome_advantage",
                  [{"epsilon": 1e-6, "norm_adv_by_std_in_grpo": True},
                   {"epsilon": 1e-6, "norm_adv_by_std_in_grpo": False}])
    v.operator("compute_rloo_outcome_advantage", ca.where("compute_rloo_outcome_advantage"),
               "index: the group (prompt) id of each response; outputs: advantages [B, T]")
    outcome_cases("compute_rloo_outcome_advantage", [{}])
    return v


# ---- REINFORCE++
def _reinforce_pp_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_reinforce_plus_plus_outcome_advantage (core_algos.py) at the pinned version."""
    ca = f["ca"]
    v = Vectors(pin)
    v.operator("compute_reinforce_plus_plus_outcome_advantage",
               ca.where("compute_reinforce_plus_plus_outcome_advantage"),
               "config: AlgoConfig stand-in holding gamma; outputs: advantages, returns")
    for dtype in DTYPES:
        for gamma in (1.0, 0.9):
            for layouts, label in [(ALL_LAYOUTS, "all layouts"), (["one token"], "one token"),
                                   (["empty", "empty"], "no token")]:
                c = _case_inputs(800, dtype, layouts)
                rewards = grid(c["rng"], (c["B"], c["T"]), 0.5, c["dt"])
                inputs = {"token_level_rewards": rewards, "response_mask": c["mask"]}

                def run(inputs=inputs, gamma=gamma):
                    adv, ret = f["compute_reinforce_plus_plus_outcome_advantage"](
                        tensor(inputs["token_level_rewards"]), tensor(inputs["response_mask"]),
                        config=AlgoConfig(gamma))
                    return {"advantages": adv, "returns": ret}

                v.case("compute_reinforce_plus_plus_outcome_advantage",
                       f"{dtype} gamma={gamma} {label}", {"gamma": gamma}, inputs, run)
    return v


# ---- agg_loss: all five modes
def _agg_loss_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """agg_loss (core_algos.py) at the pinned version: all five loss_agg_modes, one process."""
    ca = f["ca"]
    v = Vectors(pin)
    v.operator("agg_loss", ca.where("agg_loss"), "one process (dp_size=1); outputs: loss")
    agg_modes = ["token-mean", "token-sum", "seq-mean-token-mean", "seq-mean-token-sum",
                 "seq-mean-token-sum-norm"]
    for dtype in DTYPES:
        for layouts, label in [(ALL_LAYOUTS, "all layouts"), (["empty", "empty"], "no token")]:
            c = _case_inputs(900, dtype, layouts)
            loss_mat = grid(c["rng"], (c["B"], c["T"]), 1.0, c["dt"])
            inputs = {"loss_mat": loss_mat, "loss_mask": c["mask"]}
            for mode in agg_modes:
                factors = [None, 16] if mode == "seq-mean-token-sum-norm" else [None]
                for factor in factors:
                    kwargs = {"loss_agg_mode": mode, "loss_scale_factor": factor}

                    def run(inputs=inputs, kwargs=kwargs):
                        out = f["agg_loss"](tensor(inputs["loss_mat"]),
                                            tensor(inputs["loss_mask"]), **kwargs)
                        return {"loss": out}

                    tag = "" if factor is None else f" loss_scale_factor={factor}"
                    v.case("agg_loss", f"{dtype} {label} {mode}{tag}", kwargs, inputs, run)
    return v


# ---- entropy from logits ----------------------------------------------------------------
def _entropy_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """entropy_from_logits (torch_functional.py) at the pinned version, on logits / temperature."""
    tf = f["tf"]
    v = Vectors(pin)
    v.operator("entropy_from_logits", tf.where("entropy_from_logits"),
               "called on logits / temperature (python division; see _scale_logits_by_temperature "
               "for the engine's own); outputs: entropy")
    temperature_cases(v, "entropy_from_logits", logits_inputs(2000, (3, 4, 11), 3.0), (1.0, 0.7),
                      lambda t, logits: {"entropy": f["entropy_from_logits"](logits / t)})
    return v


# ---- the defaults the docstrings state ------------------------------------------------------
def _defaults(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """No cases: the defaults of the pinned version's YAML configs that the docstrings state
    (actor, critic, ppo_trainer, rollout_correction)."""
    v = Vectors(pin)
    v.defaults.update(yaml_keys(wheel, CONFIG + "actor/actor.yaml", "clip_ratio",
                                "clip_ratio_low", "clip_ratio_high", "clip_ratio_c",
                                "loss_agg_mode", "use_kl_loss", "kl_loss_coef", "kl_loss_type"))
    v.defaults.update(yaml_keys(wheel, CONFIG + "critic/critic.yaml", "cliprange_value"))
    v.defaults.update(yaml_keys(wheel, CONFIG + "ppo_trainer.yaml", "algorithm.gamma",
                                "algorithm.lam", "algorithm.adv_estimator",
                                "algorithm.norm_adv_by_std_in_grpo", "algorithm.use_kl_in_reward",
                                "algorithm.kl_penalty", "algorithm.kl_ctrl.kl_coef"))
    v.defaults.update(yaml_keys(wheel, CONFIG + "algorithm/rollout_correction.yaml",
                                "rollout_is", "rollout_is_threshold", "rollout_rs"))
    return v


# ---- DAPO: the overlong penalty and the dynamic-sampling filter (overlong_penalty,
# informative_groups) ---------------------------------------------------------------------
def _overlong_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """DAPO's overlong penalty at the pinned version: the statements of
    DAPORewardManager.__call__ (reward_manager/dapo.py) and of the reward loop's
    DAPORewardManager.run_single that form it."""
    v = Vectors(pin)
    rm = Source(pin, wheel, "verl/workers/reward_manager/dapo.py")
    rl = Source(pin, wheel, "verl/experimental/reward_loop/reward_manager/dapo.py")
    # the penalty sits inline in the reward managers: run their statements from the score on
    overlong_blocks = {
        "DAPORewardManager.__call__ (overlong penalty)":
            rm.statements("DAPORewardManager.__call__", "reward = score",
                          "if self.overlong_buffer_cfg is not None"),
        "reward_loop DAPORewardManager.run_single (overlong penalty)":
            rl.statements("DAPORewardManager.run_single", "reward_extra_info = {}",
                          "if self.overlong_buffer_cfg is not None"),
    }
    overlong_settings = [  # max_resp_len, overlong_buffer_cfg.len, penalty_factor; lengths
        (20, 4, 1.0, [*range(21), 21, 24, 28]),
        (10, 3, 1.0, [*range(11), 11, 13]),
        (16, 16, 0.5, [*range(0, 17, 2), 20]),
        (20480, 4096, 1.0, [0, 1000, 16383, 16384, 16385, 17408, 18432, 20479, 20480, 20992]),
    ]
    for op, (code, where) in overlong_blocks.items():
        v.operator(op, where,
                   "the statements run with score = 1.0 (result = 1.0 in run_single), "
                   "valid_response_length = torch.tensor(length) (int64, as the attention "
                   "mask's sum), self.overlong_buffer_cfg = {enable: True, len, penalty_factor, "
                   "log: True}, self.max_resp_len; run once per length; outputs: reward "
                   "(score + penalty) and overlong_reward, float64 copies of what verl computes "
                   "(a float32 tensor, or the int 0 of min(..., 0)), and acc (run_single)")
        for max_resp_len, buf, factor, lengths in overlong_settings:
            inputs = {"lengths": np.array(lengths, np.int64)}
            kwargs = {"max_resp_len": max_resp_len, "overlong_buffer_len": buf,
                      "penalty_factor": factor}

            def run(inputs=inputs, kwargs=kwargs, code=code, op=op):
                cfg = types.SimpleNamespace(enable=True, len=kwargs["overlong_buffer_len"],
                                            penalty_factor=kwargs["penalty_factor"], log=True)
                me = types.SimpleNamespace(overlong_buffer_cfg=cfg,
                                           max_resp_len=kwargs["max_resp_len"])
                out: dict[str, list[float]] = defaultdict(list)
                for length in inputs["lengths"].tolist():
                    ns = {"torch": torch, "self": me, "score": 1.0, "result": 1.0,
                          "valid_response_length": torch.tensor(length),
                          "reward_extra_info": defaultdict(list)}
                    exec(code, ns)
                    info = ns["reward_extra_info"]
                    overlong = info["overlong_reward"]
                    overlong = overlong[-1] if isinstance(overlong, list) else overlong
                    out["reward"].append(float(ns["reward"]))
                    out["overlong_reward"].append(float(overlong))
                    if "run_single" in op:
                        out["acc"].append(float(info["acc"]))
                return {k: np.array(val, np.float64) for k, val in out.items()}

            v.case(op, f"max_resp_len={max_resp_len} len={buf} penalty_factor={factor}",
                   kwargs, inputs, run)
    return v


# dynamic sampling: the V1 replay buffer's filter, on a stand-in buffer and TransferQueue
def _dynamic_sampling_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """DAPO's dynamic-sampling filter at the pinned version: ReplayBuffer._dapo_filtered_keys
    (trainer/ppo/v1/replay_buffer.py) on a stand-in buffer and TransferQueue."""
    v = Vectors(pin)
    rb = Source(pin, wheel, "verl/trainer/ppo/v1/replay_buffer.py")
    rb_ns = rb.define({"np": np, "defaultdict": defaultdict, "Counter": Counter},
                      "FILTER_GROUPS_REWARD_METRIC", "ReplayBuffer._dapo_filtered_keys")
    v.operator(
        "ReplayBuffer._dapo_filtered_keys", rb.where("ReplayBuffer._dapo_filtered_keys"),
        "called on a stand-in self (filter_groups_metric, one finished group per prompt uid "
        "'g<k>', its trajectories '<uid>_<j>' in partitions['train']) with a stand-in tq whose "
        "kv_batch_get returns, per trajectory, rm_scores (a float32 [4] tensor, the score on "
        "its last token, as the agent loop writes it) for metric 'reward', or extra_fields "
        "{'reward_extra_info': {metric: float(score)}} for another metric; outputs: keep [N], "
        "False for the responses of the groups it returns (evicts)",
    )

    class _TQ:
        def __init__(self, values: dict[str, Any]):
            self.values = values

        def kv_batch_get(self, keys, partition_id, select_fields):
            (field,) = select_fields
            return {field: [self.values[k][field] for k in keys]}

    flat_groups = {
        "0/1 scores G=4": (np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1]), 4),
        "±1 scores G=4": (np.array([1, -1, -1, -1, -1, -1, -1, -1, 1, 1, 1, 1, 1, 1, -1, -1]),
                           4),
        "random on a 1/8 grid G=3": (np.concatenate([scores(np.random.default_rng(950), 9),
                                                     [0.375] * 3]), 3),
        "three copies of 0.1 G=3": (np.array([0.1, 0.1, 0.1, 0.1, 0.2, 0.1]), 3),
        "seven copies of 0.7 G=7": (np.array([0.7] * 7), 7),
        "G=1": (np.array([0.5, 1.0]), 1),
    }
    for dtype, dt in DTYPES.items():
        for label, (s, G) in flat_groups.items():
            s = s.astype(dt)
            for metric in ("reward", "acc"):
                inputs = {"scores": s}
                kwargs = {"metric": metric, "group_size": G}

                def run(s=s, G=G, metric=metric):
                    keys = [f"g{i // G}_{i % G}" for i in range(len(s))]
                    values = {}
                    for key, score in zip(keys, s.tolist(), strict=True):
                        rm_scores = torch.zeros(4, dtype=torch.float32)
                        rm_scores[-1] = score
                        values[key] = {"rm_scores": rm_scores, "extra_fields": {
                            "reward_extra_info": {metric: score}}}
                    me = types.SimpleNamespace(
                        filter_groups_metric=metric,
                        finished_keys={"train": {k.split("_")[0] for k in keys}},
                        partitions={"train": {k: {} for k in keys}},
                        _dapo_classification_cache=defaultdict(dict))
                    rb_ns["tq"] = _TQ(values)
                    evicted, _ = rb_ns["_dapo_filtered_keys"](me, "train")
                    return {"keep": np.array([k.split("_")[0] not in evicted for k in keys])}

                v.case("ReplayBuffer._dapo_filtered_keys", f"{dtype} {label} metric={metric}",
                       kwargs, inputs, run)
    v.defaults.update(yaml_keys(wheel, CONFIG + "ppo_trainer.yaml",
                                "algorithm.filter_groups.enable",
                                "algorithm.filter_groups.metric",
                                "algorithm.filter_groups.max_num_gen_batches",
                                "algorithm.filter_groups.max_inflight_gen_batches"))
    v.defaults.update(yaml_keys(wheel, CONFIG + "reward/reward.yaml", "reward_manager.name"))
    return v


# ---- rollout importance weights (offpolicy: rollout_is_weights) ----------------------------
def _rollout_is_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_rollout_correction_weights (rollout_corr_helper.py, with
    _parse_rollout_is_threshold and compute_is_metrics) at the pinned version: token and
    sequence level, every threshold form, NaN log-probs."""
    v = Vectors(pin)
    rc = Source(pin, wheel, "verl/trainer/ppo/rollout_corr_helper.py")
    rc_ns = rc.define(
        {"torch": torch, "math": math, "Optional": Optional, "Any": Any,
         "verl_F": types.SimpleNamespace(masked_sum=f["masked_sum"],
                                         masked_mean=f["masked_mean"])},
        "SAFETY_BOUND", "_parse_rollout_is_threshold", "compute_is_metrics",
        "compute_rollout_correction_weights")
    v.operator(
        "compute_rollout_correction_weights", rc.where("compute_rollout_correction_weights"),
        "log_ratio = train_logprobs − rollout_logprobs (old_log_prob − rollout_log_prob, as "
        "compute_rollout_correction_and_rejection_mask forms it); with _parse_rollout_is_threshold "
        f"(lines {rc.lifted['_parse_rollout_is_threshold']['lines']}) and compute_is_metrics "
        f"(lines {rc.lifted['compute_is_metrics']['lines']}); rollout_is_batch_normalize False; "
        "outputs: rollout_is_weights",
    )
    def weights(inputs: dict, kwargs: dict) -> dict:
        # log_ratio as compute_rollout_correction_and_rejection_mask forms it
        log_ratio = tensor(inputs["train_logprobs"]) - tensor(inputs["rollout_logprobs"])
        w, _ = rc_ns["compute_rollout_correction_weights"](
            log_ratio, tensor(inputs["response_mask"]), **kwargs)
        return {"rollout_is_weights": w}

    thresholds = [2.0, 5.0, 1e9, "0.5_2.0", "0.8_1.25", "1e-12_1e12"]
    for dtype in DTYPES:
        for level in ("token", "sequence"):
            for layouts, label in [(ALL_LAYOUTS, "all layouts"), (["empty", "empty"], "no token")]:
                c = _case_inputs(2100, dtype, layouts)
                shape = (c["B"], c["T"])
                rollout = (grid(c["rng"], shape, 1.0, c["dt"]) - 2.0).astype(c["dt"])
                d = log_ratio_extremes(c["rng"], shape, c["dt"])  # ±5, ±30 in row 0
                if c["B"] > 2:
                    d[2, 3:] += 5.0  # a left-padded row whose sum passes 20
                train = (rollout + d).astype(c["dt"])
                inputs = {"train_logprobs": train, "rollout_logprobs": rollout,
                          "response_mask": c["mask"]}
                for threshold in thresholds if layouts == ALL_LAYOUTS else [2.0]:
                    kwargs = {"rollout_is": level, "rollout_is_threshold": threshold}

                    v.case("compute_rollout_correction_weights",
                           f"{dtype} {label} rollout_is={level} "
                           f"rollout_is_threshold={threshold}", kwargs, inputs,
                           functools.partial(weights, inputs, kwargs))
        for level in ("token", "sequence"):
            # NaN log-probs (an engine that could not score a token): on a response token of
            # the "holes" row (3, 0), on padding of that row (3, 2), of the right-padded row
            # (1, 6) and of the empty row (5, 0); rows 0, 2 and 4 hold no NaN
            c = _case_inputs(2150, dtype)
            shape = (c["B"], c["T"])
            rollout = (grid(c["rng"], shape, 1.0, c["dt"]) - 2.0).astype(c["dt"])
            train = (rollout + grid(c["rng"], shape, 0.3, c["dt"])).astype(c["dt"])
            train[3, 0] = train[3, 2] = np.nan
            rollout[1, 6] = rollout[5, 0] = np.nan
            inputs = {"train_logprobs": train, "rollout_logprobs": rollout,
                      "response_mask": c["mask"]}
            for threshold in (2.0, "0.5_2.0"):
                kwargs = {"rollout_is": level, "rollout_is_threshold": threshold}

                v.case("compute_rollout_correction_weights",
                       f"{dtype} NaN log-probs rollout_is={level} "
                       f"rollout_is_threshold={threshold}", kwargs, inputs,
                       functools.partial(weights, inputs, kwargs))
    v.defaults.update(yaml_keys(wheel, CONFIG + "algorithm/rollout_correction.yaml",
                                "rollout_is_batch_normalize", "bypass_mode"))
    return v


# ---- SAPO and KL-Cov: value and gradient ---------------------------------------------------
def _sapo_kl_cov_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_policy_loss_sapo and compute_policy_loss_kl_cov (core_algos.py) at the pinned
    version: value and gradient (autograd w.r.t. log_prob)."""
    ca = f["ca"]
    tf = f["tf"]
    v = Vectors(pin)
    sapo_ns = ca.define(
        {"torch": torch, "verl_F": types.SimpleNamespace(**{k: f[k] for k in tf.lifted}),
         "Optional": Optional, "Any": Any, "AlgoConfig": AlgoConfig, "ActorConfig": ActorConfig},
        "agg_loss", "compute_policy_loss_sapo", "compute_policy_loss_kl_cov")

    def sapo_config(**fields: Any) -> ActorConfig:
        """The ActorConfig stand-in with SAPO's temperatures and KL-Cov's policy_loss fields."""
        config = ActorConfig(0.2)
        config.tau_pos, config.tau_neg = fields.get("tau_pos"), fields.get("tau_neg")
        config.policy_loss = types.SimpleNamespace(kl_cov_ratio=fields.get("kl_cov_ratio"),
                                                   ppo_kl_coef=fields.get("ppo_kl_coef"))
        return config

    def policy_loss_case(name: str, label: str, kwargs: dict[str, Any],
                         inputs: dict[str, Any]) -> None:
        def run(inputs=inputs, kwargs=kwargs):
            lp = tensor(inputs["log_prob"], grad=True)
            loss, _ = sapo_ns[name](
                tensor(inputs["old_log_prob"]), lp, tensor(inputs["advantages"]),
                tensor(inputs["response_mask"]), loss_agg_mode=kwargs["loss_agg_mode"],
                config=sapo_config(**kwargs))
            loss.backward()
            return {"pg_loss": loss, "grad_log_prob": lp.grad}

        v.case(name, label, kwargs, inputs, run)

    v.operator("compute_policy_loss_sapo", ca.where("compute_policy_loss_sapo"),
               "config: ActorConfig stand-in holding tau_pos, tau_neg (global_batch_info {} = "
               "one process); advantages [B, T] (a per-response advantage repeated over its "
               "row where the case says so); outputs: pg_loss and grad_log_prob, d pg_loss / "
               "d log_prob by autograd")
    for dtype in DTYPES:
        for seed, (tau_pos, tau_neg, per_token, layouts) in enumerate([
            (1.0, 1.05, False, ALL_LAYOUTS), (1.0, 1.05, True, ALL_LAYOUTS),
            (0.5, 3.0, False, ALL_LAYOUTS), (1.0, 1.05, False, ["empty", "empty"]),
        ]):
            c = _case_inputs(2400 + seed, dtype, layouts)
            shape = (c["B"], c["T"])
            old = (grid(c["rng"], shape, 1.0, c["dt"]) - 2.0).astype(c["dt"])
            new = (old + log_ratio_extremes(c["rng"], shape, c["dt"])).astype(c["dt"])
            if per_token:
                adv = grid(c["rng"], shape, 1.0, c["dt"])
            else:
                adv = np.repeat(grid(c["rng"], (c["B"], 1), 1.0, c["dt"]), c["T"], axis=1)
                adv[1] = 0.0  # Â = 0 takes τ_neg (and gives 0)
            adv[0, :4] = [1.0, -1.0, -1.0, 1.0]  # both signs at log-ratios 5, −5, 30, −30
            inputs = {"old_log_prob": old, "log_prob": new, "advantages": adv,
                      "response_mask": c["mask"]}
            kwargs = {"tau_pos": tau_pos, "tau_neg": tau_neg, "loss_agg_mode": "token-mean"}
            label = (f"{dtype} tau_pos={tau_pos} tau_neg={tau_neg}"
                     f"{' per-token advantages' if per_token else ''}"
                     f"{' no token' if layouts != ALL_LAYOUTS else ''}")
            policy_loss_case("compute_policy_loss_sapo", label, kwargs, inputs)

    v.operator("compute_policy_loss_kl_cov", ca.where("compute_policy_loss_kl_cov"),
               "config: ActorConfig stand-in whose policy_loss holds kl_cov_ratio and "
               "ppo_kl_coef (global_batch_info {} = one process); two rows of each layout; "
               "advantages [B, T]; outputs: pg_loss and grad_log_prob, d pg_loss / d log_prob "
               "by autograd")
    for dtype in DTYPES:
        for seed, (ratio, coef, mode, per_token, layouts) in enumerate([
            (0.0002, 1.0, "token-mean", False, ALL_LAYOUTS * 2),
            (0.25, 0.1, "token-mean", False, ALL_LAYOUTS * 2),
            (0.1, 1.0, "token-mean", True, ALL_LAYOUTS * 2),
            (0.25, 1.0, "seq-mean-token-mean", False, ALL_LAYOUTS * 2),
            (0.25, 1.0, "token-mean", False, ["empty", "empty"]),
        ]):
            c = _case_inputs(2500 + seed, dtype, layouts)
            shape = (c["B"], c["T"])
            new = (grid(c["rng"], shape, 1.0, c["dt"]) - 2.0).astype(c["dt"])
            log_ratio = grid(c["rng"], shape, 0.3, c["dt"])
            log_ratio[:, 0] = 0.0  # tokens that have not moved: |log ρ| = 0 and sign(0) = 0
            old = (new - log_ratio).astype(c["dt"])
            if per_token:
                adv = grid(c["rng"], shape, 1.0, c["dt"])
            else:
                adv = np.repeat(grid(c["rng"], (c["B"], 1), 1.0, c["dt"]), c["T"], axis=1)
            inputs = {"old_log_prob": old, "log_prob": new, "advantages": adv,
                      "response_mask": c["mask"]}
            kwargs = {"kl_cov_ratio": ratio, "ppo_kl_coef": coef, "loss_agg_mode": mode}
            label = (f"{dtype} kl_cov_ratio={ratio} ppo_kl_coef={coef} {mode}"
                     f"{' per-token advantages' if per_token else ''}"
                     f"{' no token' if 'full' not in layouts else ''}")
            policy_loss_case("compute_policy_loss_kl_cov", label, kwargs, inputs)
    v.defaults.update(yaml_keys(wheel, CONFIG + "actor/actor.yaml", "tau_pos", "tau_neg",
                                "policy_loss.loss_mode", "policy_loss.kl_cov_ratio",
                                "policy_loss.ppo_kl_coef", "policy_loss.clip_cov_lb",
                                "policy_loss.clip_cov_ub"))
    return v


# ---- token_logprobs, token_entropy: the FSDP engine's temperature, then the two ---------
# logprobs_from_logits on CPU (no flash-attn, no NPU: logprobs_from_logits_v2)
def _logprobs_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """logprobs_from_logits and entropy_from_logits (torch_functional.py) after the FSDP
    engine's _scale_logits_by_temperature (transformer_impl.py) at the pinned version."""
    tf = f["tf"]
    v = Vectors(pin)
    lp = tf.define({"torch": torch, "F": torch.nn.functional, "os": os,
                    "FLAH_ATTN_CROSS_ENTROPY_LOSS_AVAILABLE": False,
                    "NPU_CROSS_ENTROPY_LOSS_AVAILABLE": False},
                   "logprobs_from_logits_v2", "logprobs_from_logits")
    ti = Source(pin, wheel, "verl/workers/engine/fsdp/transformer_impl.py")
    scale = ti.define({"torch": torch}, "_scale_logits_by_temperature")
    v.operator("logprobs_from_logits (after _scale_logits_by_temperature)",
               tf.where("logprobs_from_logits"),
               f"{ti.module_path}:_scale_logits_by_temperature (lines "
               f"{ti.lifted['_scale_logits_by_temperature']['lines']}) divides the logits by the "
               "temperature, held as a float32 tensor [N, 1] as the engine holds it; then "
               "logprobs_from_logits and entropy_from_logits of the scaled logits; outputs: "
               "log_probs, entropy")
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(2400)
        logits = grid(rng, (6, 13), 2.0, dt)  # N tokens (packed, as the engine holds them), V
        labels = rng.integers(0, 13, 6)
        for temperature in (1.0, 0.7, 1.5):

            def run(logits=logits, labels=labels, temperature=temperature):
                z = tensor(logits)
                tau = torch.full((z.shape[0], 1), temperature, dtype=torch.float32)
                z = scale["_scale_logits_by_temperature"](z, tau,
                                                          is_unit_temperature=temperature == 1.0)
                return {"log_probs": lp["logprobs_from_logits"](z, torch.from_numpy(labels)),
                        "entropy": f["entropy_from_logits"](z)}

            v.case("logprobs_from_logits (after _scale_logits_by_temperature)",
                   f"{dtype} temperature={temperature}", {"temperature": temperature},
                   {"logits": logits, "labels": labels}, run)
    v.defaults.update(yaml_keys(wheel, CONFIG + "rollout/rollout.yaml", "temperature"))
    v.defaults.update(yaml_keys(wheel, CONFIG + "actor/actor.yaml", "entropy_coeff"))
    return v


# ---- GSPO and CISPO (beyond/gspo_loss, beyond/cispo_loss) ---------------------------------------
def _gspo_cispo_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_policy_loss_gspo and compute_policy_loss_cispo (core_algos.py) at the pinned
    version, and ppo_loss's loss_agg_mode (workers/utils/losses.py): value and gradient
    (autograd w.r.t. log_prob), on an ActorConfig stand-in; advantages ``[B, T]`` as verl's
    trainer holds them (one per response broadcast over its tokens, or one per token)."""
    ca = f["ca"]
    v = Vectors(pin)
    # the loss_agg_mode the trainer passes to every policy loss (ppo_loss, the one caller)
    losses = Source(pin, wheel, "verl/workers/utils/losses.py")
    for node in ast.walk(losses.node("ppo_loss")):
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "loss_agg_mode":
            v.defaults["ppo_loss: loss_agg_mode"] = {
                "value": ast.unparse(node.value), "module": losses.module_path,
                "line": node.lineno}
    namespace = {"torch": torch, "Optional": Optional, "Any": Any, "DictConfig": object,
                 "ActorConfig": ActorConfig, "agg_loss": f["agg_loss"],
                 "verl_F": types.SimpleNamespace(masked_mean=f["masked_mean"])}
    # which loss_mode selects each function: its @register_policy_loss decorators (read
    # before define, which drops them)
    for node in ca.tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("compute_policy_loss_gspo",
                                                               "compute_policy_loss_cispo"):
            modes = [d.args[0].value for d in node.decorator_list if isinstance(d, ast.Call)
                     and getattr(d.func, "id", "") == "register_policy_loss"]
            v.defaults[f"register_policy_loss {node.name}"] = {
                "value": modes, "module": ca.module_path, "line": node.lineno}
    ns = ca.define(namespace, "compute_policy_loss_gspo", "compute_policy_loss_cispo")

    def run_fn(name: str, inputs: dict[str, Any], conv: dict[str, Any]) -> dict[str, Any]:
        config = ActorConfig(conv.get("clip_ratio", 0.2), conv["clip_ratio_low"],
                             conv["clip_ratio_high"])
        log_prob = tensor(inputs["log_prob"], grad=True)
        loss, _ = ns[name](tensor(inputs["old_log_prob"]), log_prob,
                           tensor(inputs["advantages"]), tensor(inputs["response_mask"]),
                           loss_agg_mode=conv["loss_agg_mode"], config=config)
        loss.backward()
        return {"pg_loss": loss, "grad_log_prob": log_prob.grad}

    v.operator("compute_policy_loss_gspo", ca.where("compute_policy_loss_gspo"),
               "config: ActorConfig stand-in (clip_ratio_low, clip_ratio_high; global_batch_info "
               "{} = one process); grad_log_prob is d pg_loss / d log_prob by autograd")
    seq = "seq-mean-token-mean"
    gspo = [  # (label, clip low, clip high, loss_agg_mode, log-ratios, advantages per token)
        ("near 1", 3e-4, 4e-4, seq, "near", False),
        ("near 1 per-token advantages", 3e-4, 4e-4, seq, "near", True),
        ("near 1", 3e-4, 4e-4, "token-mean", "near", False),
        ("far", 0.2, 0.2, seq, "far", False),
        ("far per-token advantages", 0.2, 0.28, seq, "far", True),
        ("mean log-ratio 12", 0.2, 0.28, seq, "twelve", False),
    ]
    for dtype in DTYPES:
        for seed, (label, low, high, mode, kind, per_token) in enumerate(gspo):
            c = _case_inputs(3000 + seed, dtype)
            inputs = _gspo_inputs(c, kind, per_token)
            conv = {"clip_ratio_low": low, "clip_ratio_high": high, "loss_agg_mode": mode}

            def run(inputs=inputs, conv=conv):
                return run_fn("compute_policy_loss_gspo", inputs, conv)

            v.case("compute_policy_loss_gspo",
                   f"{dtype} {label} clip_ratio_low={low} clip_ratio_high={high} {mode}",
                   conv, inputs, run)

    v.operator("compute_policy_loss_cispo", ca.where("compute_policy_loss_cispo"),
               "config: ActorConfig stand-in (clip_ratio_low, clip_ratio_high; global_batch_info "
               "{} = one process); grad_log_prob is d pg_loss / d log_prob by autograd")
    cispo = [  # (clip low, clip high, loss_agg_mode, log-ratios with e^±5, e^±30 planted)
        (0.2, 0.2, "token-mean", True),
        (0.2, 0.28, "token-mean", True),
        (0.2, 0.28, seq, True),
        (0.2, 0.28, "token-sum", True),
        (1.0, 4.0, "token-mean", False),  # no floor, ρ ≤ 5: TRL's epsilon_high = 5
    ]
    for dtype in DTYPES:
        for seed, (low, high, mode, extremes) in enumerate(cispo):
            c = _case_inputs(3100 + seed, dtype)
            shape, dt = (c["B"], c["T"]), c["dt"]
            old = (grid(c["rng"], shape, 1.0, dt) - 2.0).astype(dt)
            d = log_ratio_extremes(c["rng"], shape, dt) if extremes else grid(c["rng"], shape,
                                                                              1.0, dt)
            adv = grid(c["rng"], shape, 1.0, dt)
            adv[0, :4] = [1.0, -1.0, -1.0, 1.0]  # both signs at log-ratios 5, −5, 30, −30
            inputs = {"old_log_prob": old, "log_prob": (old + d).astype(dt), "advantages": adv,
                      "response_mask": c["mask"]}
            conv = {"clip_ratio_low": low, "clip_ratio_high": high, "loss_agg_mode": mode}

            def run(inputs=inputs, conv=conv):
                return run_fn("compute_policy_loss_cispo", inputs, conv)

            tag = "" if extremes else " log-ratios within ±20"
            v.case("compute_policy_loss_cispo",
                   f"{dtype} clip_ratio_low={low} clip_ratio_high={high} {mode}{tag}", conv,
                   inputs, run)
    return v


def _gspo_inputs(c: dict[str, Any], kind: str, per_token: bool) -> dict[str, Any]:
    """GSPO's inputs (:func:`peers.inputs.gspo_inputs`), the advantages ``[B, T]`` even when one
    per response (verl takes no other)."""
    B, T, dt, m, rng = c["B"], c["T"], c["dt"], c["mask"], c["rng"]
    old = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
    d, adv = gspo_inputs(rng, m, kind, per_token, dt)
    if not per_token:  # one per response, broadcast over its tokens
        adv = np.repeat(adv[:, None], T, axis=1)
    return {"old_log_prob": old, "log_prob": (old + d).astype(dt), "advantages": adv,
            "response_mask": m}


# every family of cases, in the order they were written (each seeds its own generators)
FAMILIES = (_gae_cases, _kl_penalty_cases, _kl_reward_cases, _value_loss_cases,
            _ppo_policy_loss_cases, _whiten_cases, _group_advantage_cases, _reinforce_pp_cases,
            _agg_loss_cases, _entropy_cases, _defaults, _overlong_cases, _dynamic_sampling_cases,
            _rollout_is_cases, _sapo_kl_cov_cases, _gspo_cispo_cases, _logprobs_cases)


def generate(pin: Pin, wheel: Path) -> dict[str, Any]:
    """Every verl case, as :class:`peers.collect.Vectors` data: each family's in turn."""
    return gather(pin, wheel, load(pin, wheel), FAMILIES)
