"""verl's vectors: ``verl/trainer/ppo/core_algos.py`` and ``verl/utils/torch_functional.py``.

Importing ``verl`` pulls in ray, so each function is lifted from the wheel (:mod:`peers.lift`).
Stand-ins replace only what the lifted code imports: ``verl_F`` is a namespace of
``torch_functional``'s own functions (lifted the same way), ``AlgoConfig`` and ``ActorConfig``
are plain objects holding the fields the functions read, and ``apply_kl_penalty`` gets a
``DataProto``-like object whose ``batch`` is a dict.
"""

from __future__ import annotations

import os
import types
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch

from .collect import Vectors, tensor
from .defaults import yaml_keys
from .fetch import Pin
from .inputs import ALL_LAYOUTS, DTYPES, grid, log_ratio_extremes, mask, scores
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


def load(pin: Pin, wheel: Path) -> tuple[dict[str, Any], dict[str, Source]]:
    """The lifted functions by name, and the parsed modules (for provenance)."""
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
    return fns, {"tf": tf, "ca": ca, "rt": rt}


def _case_inputs(seed: int, dtype: str, layouts: list[str] = ALL_LAYOUTS) -> dict[str, Any]:
    """A seeded generator and the ``[B, T]`` mask of ``layouts`` (one row each), in ``dtype``."""
    m = mask(layouts, DTYPES[dtype])
    B, T = m.shape  # batch, response length
    return {"rng": np.random.default_rng(seed), "dt": DTYPES[dtype], "mask": m, "B": B, "T": T}


def generate(pin: Pin, wheel: Path) -> dict[str, Any]:
    """Every verl case, as :class:`peers.collect.Vectors` data."""
    f, src = load(pin, wheel)
    ca, tf, rt = src["ca"], src["tf"], src["rt"]
    v = Vectors(pin)

    # ---- GAE ---------------------------------------------------------------------------------
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

    # ---- KL penalty: every mode, value and gradient
    v.operator("kl_penalty", ca.where("kl_penalty"),
               "kl_penalty(logprob, ref_logprob, mode) with kl_penalty_forward (lines "
               f"{ca.lifted['kl_penalty_forward']['lines']}); grad_logprob is "
               "d(sum of the output)/d logprob by autograd")
    modes = ["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3", "k1+", "k2+", "k3+",
             "low_var_kl+"]
    for dtype in DTYPES:
        rng, dt = np.random.default_rng(200), DTYPES[dtype]
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

    # ---- reward shaping: apply_kl_penalty
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

    # ---- value loss
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

    # ---- PPO policy loss with dual clip
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

    # ---- masked whitening
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

    # ---- group advantages: GRPO and RLOO
    def outcome_cases(name: str, kwargs_list: list[dict[str, Any]]) -> None:
        for dtype in DTYPES:
            dt = DTYPES[dtype]
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

    # ---- REINFORCE++
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

    # ---- agg_loss: all five modes
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

    # ---- entropy from logits ----------------------------------------------------------------
    v.operator("entropy_from_logits", tf.where("entropy_from_logits"),
               "called on logits / temperature (python division; see _scale_logits_by_temperature "
               "for the engine's own); outputs: entropy")
    for dtype in DTYPES:
        rng, dt = np.random.default_rng(2000), DTYPES[dtype]
        logits = grid(rng, (3, 4, 11), 3.0, dt)
        logits[0, 0] = np.linspace(-80, 80, 11).astype(dt)  # a near one-hot row
        for temperature in (1.0, 0.7):

            def run(logits=logits, temperature=temperature):
                return {"entropy": f["entropy_from_logits"](tensor(logits) / temperature)}

            v.case("entropy_from_logits", f"{dtype} temperature={temperature}",
                   {"temperature": temperature}, {"logits": logits}, run)

    # ---- the defaults the docstrings state ------------------------------------------------------
    config = "verl/trainer/config/"
    v.defaults.update(yaml_keys(wheel, config + "actor/actor.yaml", "clip_ratio",
                                "clip_ratio_low", "clip_ratio_high", "clip_ratio_c",
                                "loss_agg_mode", "use_kl_loss", "kl_loss_coef", "kl_loss_type"))
    v.defaults.update(yaml_keys(wheel, config + "critic/critic.yaml", "cliprange_value"))
    v.defaults.update(yaml_keys(wheel, config + "ppo_trainer.yaml", "algorithm.gamma",
                                "algorithm.lam", "algorithm.adv_estimator",
                                "algorithm.norm_adv_by_std_in_grpo", "algorithm.use_kl_in_reward",
                                "algorithm.kl_penalty", "algorithm.kl_ctrl.kl_coef"))
    v.defaults.update(yaml_keys(wheel, config + "algorithm/rollout_correction.yaml",
                                "rollout_is", "rollout_is_threshold", "rollout_rs"))

    # ---- token_logprobs, token_entropy: the FSDP engine's temperature, then the two ---------
    # logprobs_from_logits on CPU (no flash-attn, no NPU: logprobs_from_logits_v2)
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
    for dtype in DTYPES:
        rng, dt = np.random.default_rng(2400), DTYPES[dtype]
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
    v.defaults.update(yaml_keys(wheel, config + "rollout/rollout.yaml", "temperature"))
    v.defaults.update(yaml_keys(wheel, config + "actor/actor.yaml", "entropy_coeff"))
    return v.data()
