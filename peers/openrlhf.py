"""OpenRLHF's vectors: ``openrlhf/models/utils.py``, ``openrlhf/models/loss.py`` and the
experience maker's advantages.

Importing ``openrlhf`` pulls in deepspeed and ray, so the code is lifted from the wheel
(:mod:`peers.lift`). ``RemoteExperienceMaker.compute_advantages_and_returns`` is called whole on
a stand-in ``self`` (the arguments it reads, and its own ``get_advantages_and_returns`` and
``get_cumulative_returns``, lifted too) with one ``Experience``-like object.
"""

from __future__ import annotations

import ast
import itertools
import types
import typing
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .collect import Vectors, gather, temperature_cases, tensor
from .defaults import argparse_options
from .fetch import Pin
from .inputs import (
    ALL_LAYOUTS,
    DTYPES,
    grid,
    log_ratio_extremes,
    logits_inputs,
    mask,
    score_pairs,
    scores,
    seeded,
    sequence_logps,
)
from .lift import Source
from .verl import _gspo_inputs

_quiet = types.SimpleNamespace(info=lambda *a, **k: None, warning=lambda *a, **k: None)


def load(pin: Pin, wheel: Path) -> dict[str, Any]:
    """The lifted functions, and the parsed modules (for provenance)."""
    mu = Source(pin, wheel, "openrlhf/models/utils.py")
    typing_names = {name: getattr(typing, name) for name in ("Optional", "Tuple", "Union", "List")}
    utils = mu.define({"torch": torch, "F": F, **typing_names}, "KL_IS_WEIGHT_CLIP",
                      "compute_approx_kl", "compute_reward", "masked_mean")
    ml = Source(pin, wheel, "openrlhf/models/loss.py")
    loss = ml.define({"torch": torch, "nn": torch.nn, "F": F, "dist": None, **typing_names,
                      "masked_mean": utils["masked_mean"]},
                     "aggregate_loss", "PolicyLoss", "ValueLoss", "PairWiseLoss", "DPOLoss")
    lp = Source(pin, wheel, "openrlhf/trainer/ppo_utils/length_penalty.py")
    penalties = lp.define({**typing_names, "logger": _quiet}, "apply_overlong_penalty",
                          "apply_stop_properly_penalty", "apply_length_penalties")
    em = Source(pin, wheel, "openrlhf/trainer/ppo_utils/experience_maker.py")
    maker = em.define(
        {"torch": torch, "itertools": itertools, **typing_names,
         "Experience": object, "logger": _quiet, "masked_mean": utils["masked_mean"],
         "compute_approx_kl": utils["compute_approx_kl"],
         "compute_reward": utils["compute_reward"],
         "apply_length_penalties": penalties["apply_length_penalties"]},
        "RemoteExperienceMaker.compute_advantages_and_returns",
        "RemoteExperienceMaker.get_advantages_and_returns",
        "RemoteExperienceMaker.get_cumulative_returns",
    )
    return {"mu": mu, "ml": ml, "em": em, **utils, **loss, **maker}


class _Maker:
    """The fields ``compute_advantages_and_returns`` reads, with its own two helper methods."""

    def __init__(self, lib: dict[str, Any], estimator: str, n_samples: int, kl_coef: float,
                 gamma: float, lambd: float):
        advantage = types.SimpleNamespace(estimator=estimator, gamma=gamma, lambd=lambd,
                                          no_std_norm=False)
        args = types.SimpleNamespace(
            algo=types.SimpleNamespace(advantage=advantage),
            rollout=types.SimpleNamespace(n_samples_per_prompt=n_samples),
            reward=types.SimpleNamespace(clip_range=None, overlong_buffer_len=None,
                                         stop_properly_penalty_coef=None))
        self.strategy = types.SimpleNamespace(args=args)
        self.advantage_estimator = estimator
        self.kl_ctl = types.SimpleNamespace(value=kl_coef)
        self.get_advantages_and_returns = types.MethodType(lib["get_advantages_and_returns"],
                                                           self)
        self.get_cumulative_returns = types.MethodType(lib["get_cumulative_returns"], self)


# ---- compute_approx_kl: estimators, clamps, unbiased_gradient ----------------------------
def _approx_kl_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_approx_kl (openrlhf/models/utils.py) at the pinned version: k1, k2, k3, the
    clamps, unbiased_gradient; value and gradient."""
    mu = f["mu"]
    v = Vectors(pin)
    v.operator("compute_approx_kl", mu.where("compute_approx_kl"),
               "grad_log_probs is d(sum of the output)/d log_probs by autograd; outputs: kl")
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(3000)
        base = (grid(rng, (3, 8), 1.0, dt) - 2.0).astype(dt)
        log_probs = (base + log_ratio_extremes(rng, (3, 8), dt)).astype(dt)
        old = (log_probs + grid(rng, (3, 8), 0.3, dt)).astype(dt)
        old[2, :2] = log_probs[2, :2] - 4.0  # w = e^4 > 10: the clamp of the IS weight
        for estimator in ("k1", "k2", "k3"):
            for unbiased, with_old in [(False, False), (True, False), (True, True)]:
                inputs = {"log_probs": log_probs, "log_probs_base": base}
                if with_old:
                    inputs["log_probs_old"] = old
                kwargs = {"kl_estimator": estimator, "unbiased_gradient": unbiased}

                def run(inputs=inputs, kwargs=kwargs):
                    lp = tensor(inputs["log_probs"], grad=True)
                    lo = inputs.get("log_probs_old")
                    out = f["compute_approx_kl"](lp, tensor(inputs["log_probs_base"]),
                                                 None if lo is None else tensor(lo), **kwargs)
                    out.sum().backward()
                    return {"kl": out, "grad_log_probs": lp.grad}

                tag = " log_probs_old" if with_old else ""
                v.case("compute_approx_kl",
                       f"{dtype} {estimator} unbiased_gradient={unbiased}{tag}", kwargs, inputs,
                       run)
    return v


# ---- compute_reward: −β·kl on every token, the score on the last -------------------------
def _reward_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """compute_reward (openrlhf/models/utils.py) at the pinned version, on compute_approx_kl's
    k1."""
    mu = f["mu"]
    v = Vectors(pin)
    v.operator("compute_reward", mu.where("compute_reward"),
               "kl = compute_approx_kl(log_probs, log_probs_base, kl_estimator='k1') of the "
               "inputs, as the experience maker computes it; outputs: reward")
    for dtype, dt, rng, kl_coef in seeded(3100, [0.01, 0.2]):
        m = mask(ALL_LAYOUTS, dt)
        B, T = m.shape  # batch, response length
        r = grid(rng, B, 1.0, dt)
        lp = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
        base = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
        inputs = {"r": r, "log_probs": lp, "log_probs_base": base, "action_mask": m}

        def run(inputs=inputs, kl_coef=kl_coef):
            kl = f["compute_approx_kl"](tensor(inputs["log_probs"]),
                                        tensor(inputs["log_probs_base"]), kl_estimator="k1")
            out = f["compute_reward"](tensor(inputs["r"]), kl_coef, kl,
                                      action_mask=tensor(inputs["action_mask"]))
            return {"reward": out}

        v.case("compute_reward", f"{dtype} kl_coef={kl_coef}",
               {"kl_coef": kl_coef, "kl_estimator": "k1"}, inputs, run)
    return v


# ---- PolicyLoss (dual clip) and ValueLoss ------------------------------------------------
def _policy_value_loss_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """PolicyLoss (dual clip) and ValueLoss (openrlhf/models/loss.py) at the pinned version."""
    ml = f["ml"]
    v = Vectors(pin)
    v.operator("PolicyLoss", ml.where("PolicyLoss"),
               "PolicyLoss(**kwargs)(log_probs, old_log_probs, advantages, action_mask); "
               "outputs: loss")
    conventions = [
        {"clip_eps_low": 0.2, "clip_eps_high": 0.2, "dual_clip": None, "token_level_loss": True},
        {"clip_eps_low": 0.2, "clip_eps_high": 0.2, "dual_clip": 3.0, "token_level_loss": True},
        {"clip_eps_low": 0.2, "clip_eps_high": 0.28, "dual_clip": None,
         "token_level_loss": True},
        {"clip_eps_low": 0.2, "clip_eps_high": 0.28, "dual_clip": None,
         "token_level_loss": False},
    ]
    for dtype, dt in DTYPES.items():
        for seed, conv in enumerate([*conventions, conventions[1]]):
            rng = np.random.default_rng(3200 + seed)
            empty = seed == len(conventions)  # the last: a batch with no response token
            m = mask(["empty", "empty"] if empty else ALL_LAYOUTS, dt)
            old = (grid(rng, m.shape, 1.0, dt) - 2.0).astype(dt)
            new = (old + log_ratio_extremes(rng, m.shape, dt)).astype(dt)
            adv = grid(rng, m.shape, 1.0, dt)
            adv[0, :4] = [1.0, -1.0, -1.0, 1.0]
            inputs = {"log_probs": new, "old_log_probs": old, "advantages": adv,
                      "action_mask": m}

            def run(inputs=inputs, conv=conv):
                loss = f["PolicyLoss"](**conv)(
                    tensor(inputs["log_probs"]), tensor(inputs["old_log_probs"]),
                    tensor(inputs["advantages"]), tensor(inputs["action_mask"]))
                return {"loss": loss[0]}

            tag = " ".join(f"{k}={val}" for k, val in conv.items()) + (" no token" * empty)
            v.case("PolicyLoss", f"{dtype} {tag}", conv, inputs, run)

    v.operator("ValueLoss", ml.where("ValueLoss"),
               "ValueLoss(clip_eps)(values, old_values, returns, action_mask); outputs: loss")
    for dtype, dt, rng, (clip_eps, layouts) in seeded(3300, [(0.2, ALL_LAYOUTS), (0.5, ALL_LAYOUTS),
                                                            (0.2, ["empty", "empty"])]):
        m = mask(layouts, dt)
        old = grid(rng, m.shape, 1.0, dt)
        values = (old + grid(rng, m.shape, 0.5, dt)).astype(dt)
        returns = grid(rng, m.shape, 1.0, dt)
        inputs = {"values": values, "old_values": old, "returns": returns, "action_mask": m}

        def run(inputs=inputs, clip_eps=clip_eps):
            loss = f["ValueLoss"](clip_eps)(
                tensor(inputs["values"]), tensor(inputs["old_values"]),
                tensor(inputs["returns"]), tensor(inputs["action_mask"]))
            return {"loss": loss}

        label = " no token" if layouts != ALL_LAYOUTS else ""
        v.case("ValueLoss", f"{dtype} clip_eps={clip_eps}{label}", {"clip_eps": clip_eps},
               inputs, run)
    return v


# ---- PairWiseLoss and DPOLoss ------------------------------------------------------------
def _pairwise_dpo_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """PairWiseLoss and DPOLoss (openrlhf/models/loss.py) at the pinned version."""
    ml = f["ml"]
    v = Vectors(pin)
    v.operator("PairWiseLoss", ml.where("PairWiseLoss"), "outputs: loss")
    v.operator("DPOLoss", ml.where("DPOLoss"),
               "DPOLoss(beta, label_smoothing=0.0, ipo=False); outputs: loss (the batch mean)")
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(3400)
        pairs = score_pairs(rng, "chosen_reward", "reject_reward", dt)
        pairs[0]["chosen_reward"][0] = -40.0  # −log σ(−40 − r): far in the tail
        for inputs in pairs:

            def run(inputs=inputs):
                mg = inputs.get("margin")
                out = f["PairWiseLoss"]()(tensor(inputs["chosen_reward"]),
                                          tensor(inputs["reject_reward"]),
                                          None if mg is None else tensor(mg))
                return {"loss": out}

            v.case("PairWiseLoss", f"{dtype} margin={'margin' in inputs}", {}, inputs, run)
        lp = sequence_logps(rng, ("policy_chosen_logps", "policy_rejected_logps",
                                  "reference_chosen_logps", "reference_rejected_logps"), dt)
        for beta in (0.1, 0.5):

            def run(lp=lp, beta=beta):
                loss, _, _ = f["DPOLoss"](beta)(*(tensor(x) for x in lp.values()))
                return {"loss": loss}

            v.case("DPOLoss", f"{dtype} beta={beta}", {"beta": beta, "label_smoothing": 0.0},
                   dict(lp), run)
    return v


# ---- advantages: compute_advantages_and_returns ------------------------------------------
def _advantage_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """RemoteExperienceMaker.compute_advantages_and_returns (experience_maker.py), called
    whole, at the pinned version: group_norm, dr_grpo, rloo, reinforce_baseline, reinforce
    and gae."""
    em = f["em"]
    v = Vectors(pin)
    v.operator(
        "RemoteExperienceMaker.compute_advantages_and_returns",
        em.where("RemoteExperienceMaker.compute_advantages_and_returns"),
        "called whole on a stand-in self (the estimator, n_samples_per_prompt, gamma, lambd, "
        "kl_ctl.value; no reward clip, no length penalty) with one Experience-like object "
        "(index 0..N-1, rewards = scores, kl = compute_approx_kl(action_log_probs, "
        "base_action_log_probs, 'k1'), action_mask, values); outputs: advantages, returns",
    )
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(3500)
        groups = {"random G=4": (scores(rng, 16, dt), 4),
                  "eight copies of 0.7": (np.full(8, 0.7, dt), 8)}
        for label, (s, G) in groups.items():
            N = s.shape[0]  # responses
            m = mask((ALL_LAYOUTS[:-1] * 4)[:N], dt)
            lp = (grid(rng, m.shape, 1.0, dt) - 2.0).astype(dt)
            base = (lp + grid(rng, m.shape, 0.3, dt)).astype(dt)
            values = grid(rng, m.shape, 1.0, dt)
            inputs = {"scores": s, "action_log_probs": lp, "base_action_log_probs": base,
                      "action_mask": m, "values": values}
            runs = [(e, 0.0) for e in ("group_norm", "dr_grpo", "rloo", "reinforce_baseline")]
            runs += [(e, 0.05) for e in ("group_norm", "reinforce", "gae")]
            for estimator, kl_coef in runs:
                if estimator in ("reinforce", "gae") and label != "random G=4":
                    continue
                kwargs = {"estimator": estimator, "n_samples_per_prompt": G, "kl_coef": kl_coef,
                          "gamma": 1.0, "lambd": 0.95}

                def run(inputs=inputs, kwargs=kwargs, N=N):
                    kl = f["compute_approx_kl"](tensor(inputs["action_log_probs"]),
                                                tensor(inputs["base_action_log_probs"]),
                                                kl_estimator="k1")
                    exp = types.SimpleNamespace(
                        index=list(range(N)), rewards=tensor(inputs["scores"]), kl=kl,
                        action_mask=tensor(inputs["action_mask"]),
                        values=tensor(inputs["values"]), info={})
                    maker = _Maker(f, kwargs["estimator"], kwargs["n_samples_per_prompt"],
                                   kwargs["kl_coef"], kwargs["gamma"], kwargs["lambd"])
                    (out,) = f["compute_advantages_and_returns"](maker, [exp])
                    return {"advantages": out.advantages, "returns": out.returns}

                v.case("RemoteExperienceMaker.compute_advantages_and_returns",
                       f"{dtype} {label} {estimator} kl_coef={kl_coef}", kwargs, inputs, run)
    return v


# ---- the defaults the docstrings state ------------------------------------------------------
def _defaults(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """No cases: the options of the pinned version's train_ppo_ray.py that the docstrings
    state."""
    cli = Source(pin, wheel, "openrlhf/cli/train_ppo_ray.py")
    v = Vectors(pin)
    v.defaults.update(argparse_options(
        cli, "--actor.eps_clip", "--actor.eps_clip_low_high", "--actor.dual_clip",
        "--actor.loss_agg_mode", "--critic.value_clip", "--algo.kl.init_coef",
        "--algo.kl.estimator", "--algo.kl.unbiased_gradient", "--algo.kl.use_loss",
        "--algo.advantage.estimator", "--algo.advantage.gamma", "--algo.advantage.lambd",
        "--algo.advantage.is_correction_level"))
    return v


# ---- DAPO: the overlong penalty and dynamic filtering (overlong_penalty,
# informative_groups) ---------------------------------------------------------------------
def _overlong_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """apply_overlong_penalty (ppo_utils/length_penalty.py) at the pinned version: DAPO's
    overlong penalty."""
    v = Vectors(pin)
    lp = Source(pin, wheel, "openrlhf/trainer/ppo_utils/length_penalty.py")
    penalty = lp.define({"List": list, "logger": _quiet}, "apply_overlong_penalty")
    v.operator(
        "apply_overlong_penalty", lp.where("apply_overlong_penalty"),
        "called with one Experience-like object (response_length = the lengths, rewards = "
        "zeros of the case's dtype, which it adds the penalty to); outputs: rewards, and "
        "penalized (the count it returns)",
    )
    overlong_settings = [  # max_new_tokens, overlong_buffer_len, overlong_penalty_factor; lengths
        (20, 4.0, 1.0, [*range(21), 21, 24, 28]),
        (10, 3.0, 1.0, [*range(11), 11, 13]),
        (16, 16.0, 0.5, [*range(0, 17, 2), 20]),
        (20480, 4096.0, 1.0, [0, 1000, 16383, 16384, 16385, 17408, 18432, 20479, 20480, 20992]),
    ]
    for dtype, dt in DTYPES.items():
        for max_new, buf, factor, lengths in overlong_settings:
            inputs = {"lengths": np.array(lengths, np.int64)}
            kwargs = {"max_new_tokens": max_new, "overlong_buffer_len": buf,
                      "overlong_penalty_factor": factor}

            def run(inputs=inputs, kwargs=kwargs, dt=dt):
                n = len(inputs["lengths"])
                exp = types.SimpleNamespace(response_length=torch.from_numpy(inputs["lengths"]),
                                            rewards=torch.zeros(n, dtype=tensor(dt(0)).dtype))
                count = penalty["apply_overlong_penalty"]([exp], **kwargs)
                return {"rewards": exp.rewards, "penalized": np.array(count, np.int64)}

            v.case("apply_overlong_penalty",
                   f"{dtype} max_new_tokens={max_new} overlong_buffer_len={buf} "
                   f"overlong_penalty_factor={factor}", kwargs, inputs, run)
    return v


def _dynamic_filtering_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """The dynamic-filtering statement of SamplesGenerator._generate_vllm
    (ppo_utils/samples_generator.py) at the pinned version, once per prompt; and the
    overlong and filtering options of train_ppo_ray.py."""
    cli = Source(pin, wheel, "openrlhf/cli/train_ppo_ray.py")
    v = Vectors(pin)
    sg = Source(pin, wheel, "openrlhf/trainer/ppo_utils/samples_generator.py")
    keep_block = sg.statements("SamplesGenerator._generate_vllm", "if dynamic_filtering and all(",
                               "if dynamic_filtering and all(")
    v.operator(
        "SamplesGenerator._generate_vllm (dynamic filtering)", keep_block[1],
        "the statement run once per prompt with experiences = one Experience-like object per "
        "response of the group (scores = a [1] tensor of the case's dtype), dynamic_filtering "
        "True and self.args.algo.dynamic_filtering_range; outputs: keep [N], False for the "
        "responses of a group it empties",
    )
    filter_groups = {
        "0/1 scores G=4": (np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1]), 4),
        "±1 scores G=4": (np.array([1, -1, -1, -1, -1, -1, -1, -1, 1, 1, 1, 1, 1, 1, -1, -1]),
                           4),
        "three copies of 0.5 G=3": (np.array([0.5, 0.5, 0.5, 0.5, 0.25, 0.5]), 3),
        "random on a 1/8 grid G=3": (scores(np.random.default_rng(3600), 12), 3),
    }
    for dtype, dt in DTYPES.items():
        for label, (s, G) in filter_groups.items():
            s = s.astype(dt)
            for low, high in [(0.0, 1.0), (-1.0, 1.0)]:
                inputs = {"scores": s}
                kwargs = {"dynamic_filtering_range": [low, high], "group_size": G}

                def run(s=s, G=G, low=low, high=high):
                    me = types.SimpleNamespace(args=types.SimpleNamespace(
                        algo=types.SimpleNamespace(dynamic_filtering_range=(low, high))))
                    keep = []
                    for k in range(0, len(s), G):
                        group = [types.SimpleNamespace(scores=tensor(s[k + j: k + j + 1]))
                                 for j in range(G)]
                        ns = _run_block(keep_block, self=me, experiences=group,
                                        dynamic_filtering=True, logger=_quiet)
                        keep += [bool(ns["experiences"])] * G
                    return {"keep": np.array(keep)}

                v.case("SamplesGenerator._generate_vllm (dynamic filtering)",
                       f"{dtype} {label} dynamic_filtering_range=({low}, {high})", kwargs,
                       inputs, run)
    v.defaults.update(argparse_options(
        cli, "--reward.overlong_buffer_len", "--reward.overlong_penalty_factor",
        "--algo.dynamic_filtering_enable", "--algo.dynamic_filtering_range",
        "--rollout.max_new_tokens", "--data.max_len", "--reward.stop_properly_penalty_coef"))
    return v


# ---- offpolicy: the rollout correction options its docstrings state ------------------------
def _off_policy_defaults(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """No cases: the rollout correction options of the pinned version's train_ppo_ray.py."""
    cli = Source(pin, wheel, "openrlhf/cli/train_ppo_ray.py")
    v = Vectors(pin)
    v.defaults.update(argparse_options(
        cli, "--algo.advantage.is_correction_mode", "--algo.advantage.is_correction_gating",
        "--algo.advantage.is_correction_threshold"))
    return v


# ---- SAPO and KL-Cov: the wheel has neither ---------------------------------------------
def _sapo_kl_cov_files(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """No cases: the files of the pinned wheel that mention SAPO or KL-Cov (none)."""
    v = Vectors(pin)
    with zipfile.ZipFile(wheel) as z:
        files = sorted(n for n in z.namelist() if n.endswith(".py") and any(
            word in z.read(n).decode("utf-8").lower() for word in ("sapo", "kl_cov")))
    v.defaults["files mentioning sapo or kl_cov"] = {"value": files, "module": "*", "line": 0}
    return v


# ---- token_logprobs, token_entropy: log_probs_from_logits, compute_entropy ---------------
# Actor.forward divides the logits by the temperature in place, then takes both; here
# log_probs_from_logits gets the temperature itself (it divides in place the same way)
def _logprobs_entropy_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """log_probs_from_logits and compute_entropy (openrlhf/models/utils.py) at the pinned
    version, at a temperature."""
    mu = f["mu"]
    cli = Source(pin, wheel, "openrlhf/cli/train_ppo_ray.py")
    v = Vectors(pin)
    lg = mu.define({"torch": torch, "F": F}, "_logsumexp_by_chunk", "log_probs_from_logits",
                   "compute_entropy")
    v.operator("log_probs_from_logits", mu.where("log_probs_from_logits"),
               "flash_attn is not installed (the ImportError path: gather − logsumexp); "
               "outputs: log_probs")
    v.operator("compute_entropy", mu.where("compute_entropy"),
               "@torch.compile dropped; called on logits / temperature, as Actor.forward "
               "divides them (div_) before it; outputs: entropy")
    inputs = logits_inputs(3400, (2, 5, 13), 2.0, "labels")

    def log_probs(t, logits, labels):
        return {"log_probs": lg["log_probs_from_logits"](logits, labels, temperature=t)}

    def entropy(t, logits):
        return {"entropy": lg["compute_entropy"](logits / t)}

    temperature_cases(v, "log_probs_from_logits", inputs, (1.0, 0.7, 1.5), log_probs)
    only_logits = {dtype: {"logits": x["logits"]} for dtype, x in inputs.items()}
    temperature_cases(v, "compute_entropy", only_logits, (1.0, 0.7, 1.5), entropy)
    v.defaults.update(argparse_options(cli, "--rollout.temperature", "--actor.entropy_coef"))
    return v


def _run_block(block: tuple[Any, dict[str, Any]], **variables: Any) -> dict[str, Any]:
    """Run a lifted statement block with ``variables`` (and torch) in scope."""
    code, _ = block
    ns = {"torch": torch, **variables}
    exec(code, ns)
    return ns


# ---- GSPO (beyond/gspo_loss) ------------------------------------------------------------------
def _gspo_cases(pin: Pin, wheel: Path, f: dict[str, Any]) -> Vectors:
    """PolicyLoss(policy_loss_type="gspo") (openrlhf/models/loss.py) at the pinned version: value
    and gradient (autograd w.r.t. log_probs), no rollout correction; the inputs are verl's GSPO
    cases' (:func:`peers.verl._gspo_inputs`); and the policy losses train_ppo_ray.py offers."""
    ml, cli = f["ml"], Source(pin, wheel, "openrlhf/cli/train_ppo_ray.py")
    v = Vectors(pin)
    flag = "--actor.policy_loss_type"
    v.defaults.update(argparse_options(cli, flag))
    for node in ast.walk(cli.tree):  # the policy losses it offers (no CISPO)
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"
                and node.args and getattr(node.args[0], "value", None) == flag):
            choices = next(k.value for k in node.keywords if k.arg == "choices")
            v.defaults[f"{flag} choices"] = {"value": ast.literal_eval(choices),
                                             "module": cli.module_path, "line": node.lineno}
    v.operator("PolicyLoss (gspo)", ml.where("PolicyLoss"),
               "PolicyLoss(policy_loss_type='gspo', clip_eps_low, clip_eps_high)(log_probs, "
               "old_log_probs, advantages, action_mask); is_correction_level 'off'; "
               "grad_log_probs is d loss / d log_probs by autograd")
    gspo = [  # (label, clip low, clip high, log-ratios, advantages per token)
        ("near 1", 3e-4, 4e-4, "near", False),
        ("near 1 per-token advantages", 3e-4, 4e-4, "near", True),
        ("far", 0.2, 0.28, "far", False),
        ("mean log-ratio 12", 0.2, 0.28, "twelve", False),
    ]
    for dtype, dt in DTYPES.items():
        for seed, (label, low, high, kind, per_token) in enumerate(gspo):
            m = mask(ALL_LAYOUTS, dt)
            c = {"rng": np.random.default_rng(3400 + seed), "dt": dt, "mask": m,
                 "B": m.shape[0], "T": m.shape[1]}
            g = _gspo_inputs(c, kind, per_token)
            inputs = {"log_probs": g["log_prob"], "old_log_probs": g["old_log_prob"],
                      "advantages": g["advantages"], "action_mask": m}
            conv = {"policy_loss_type": "gspo", "clip_eps_low": low, "clip_eps_high": high}

            def run(inputs=inputs, conv=conv):
                log_probs = tensor(inputs["log_probs"], grad=True)
                loss = f["PolicyLoss"](**conv)(
                    log_probs, tensor(inputs["old_log_probs"]), tensor(inputs["advantages"]),
                    tensor(inputs["action_mask"]))[0]
                loss.backward()
                return {"loss": loss, "grad_log_probs": log_probs.grad}

            v.case("PolicyLoss (gspo)",
                   f"{dtype} {label} clip_eps_low={low} clip_eps_high={high}", conv, inputs, run)
    return v


# every family of cases, in the order they were written (each seeds its own generators)
FAMILIES = (_approx_kl_cases, _reward_cases, _policy_value_loss_cases, _pairwise_dpo_cases,
            _advantage_cases, _defaults, _overlong_cases, _dynamic_filtering_cases,
            _off_policy_defaults, _sapo_kl_cov_files, _gspo_cases, _logprobs_entropy_cases)


def generate(pin: Pin, wheel: Path) -> dict[str, Any]:
    """Every OpenRLHF case, as :class:`peers.collect.Vectors` data: each family's in turn."""
    return gather(pin, wheel, load(pin, wheel), FAMILIES)
