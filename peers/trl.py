"""TRL's vectors: ``trl/trainer/utils.py`` and the GRPO, RLOO, DPO and reward trainers.

Importing ``trl`` pulls in transformers and accelerate, so the code is lifted from the wheel
(:mod:`peers.lift`). ``GRPOTrainer._compute_loss`` is called whole on a stand-in ``self`` whose
``_get_per_token_logps_and_entropies`` returns the log-probs of the case (a leaf tensor, so
autograd gives the loss's gradient); the other formulas sit inside methods that generate, score
or run a model, so the exact statements between two named lines are run (their line numbers are
in the provenance) with the variables those lines read.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import types
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .collect import Vectors, gather, temperature_cases, tensor
from .defaults import dataclass_fields
from .fetch import Pin
from .inputs import (
    ALL_LAYOUTS,
    DTYPES,
    STEP,
    grid,
    gspo_inputs,
    log_ratio_extremes,
    logits_inputs,
    mask,
    score_pairs,
    scores,
    seeded,
    sequence_logps,
)
from .lift import Source


class _Accelerator:
    """One process: gather and reduce return their input."""

    num_processes = 1

    def gather(self, x):
        return x

    gather_for_metrics = gather

    def reduce(self, x, reduction="sum"):
        return x


class _GRPOSelf:
    """The fields ``GRPOTrainer._compute_loss`` reads, for one process and one step."""

    def __init__(self, logps: torch.Tensor, *, loss_type: str, epsilon_low: float,
                 epsilon_high: float, beta: float, use_bias_correction_kl: bool,
                 max_completion_length: int):
        self.logps = logps
        self.loss_type, self.beta = loss_type, beta
        self.epsilon_low, self.epsilon_high = epsilon_low, epsilon_high
        self.args = types.SimpleNamespace(use_bias_correction_kl=use_bias_correction_kl,
                                          delta=None, steps_per_generation=1)
        self.max_completion_length = max_completion_length
        self.top_entropy_quantile = 1.0
        self.off_policy_mask_threshold = None
        self.importance_sampling_level = "token"
        self.use_vllm = False
        self.vllm_importance_sampling_correction = True
        self.model = types.SimpleNamespace(training=True)
        self.current_gradient_accumulation_steps = 1
        self._entropy_bonus_enabled = False
        self.aux_loss_enabled = False
        self._metrics = defaultdict(lambda: defaultdict(list))
        self.accelerator = _Accelerator()

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask,
                                           logits_to_keep, **kwargs):
        return self.logps, torch.zeros_like(self.logps), None


def load(pin: Pin, wheel: Path) -> dict[str, Any]:
    """The lifted functions and statement blocks, and the parsed modules."""
    ut = Source(pin, wheel, "trl/trainer/utils.py")
    stand_ins = {"is_triton_available": lambda: False,  # the fused Triton kernel is GPU-only
                 "_supports_trl_loss_kernel": lambda *a, **k: False,
                 "_fused_logprob_entropy": None}
    utils = ut.define({"torch": torch, "F": F, **stand_ins}, "nanstd", "nanmin", "nanmax",
                      "selective_log_softmax", "entropy_from_logits")
    gr = Source(pin, wheel, "trl/trainer/grpo_trainer.py")
    grpo = gr.define({"torch": torch, "nanmin": utils["nanmin"], "nanmax": utils["nanmax"]},
                     "GRPOTrainer._compute_loss")
    grpo_adv = gr.statements("GRPOTrainer._generate_and_score_completions",
                             "unscorable_mask = ", "advantages = torch.nan_to_num(")
    rl = Source(pin, wheel, "trl/trainer/rloo_trainer.py")
    rloo_adv = rl.statements("RLOOTrainer._generate_and_score_completions",
                             "unscorable_mask = ", "advantages = torch.nan_to_num(")
    dp = Source(pin, wheel, "trl/trainer/dpo_trainer.py")
    dpo = dp.statements("DPOTrainer._compute_loss", "chosen_logratios = ",
                        "for loss_type, loss_weight in zip(")
    rw = Source(pin, wheel, "trl/trainer/reward_trainer.py")
    reward = rw.statements("RewardTrainer.compute_loss", 'if "margin" in inputs:',
                           "if self.args.center_rewards_coefficient is not None:")
    return {"ut": ut, "gr": gr, "dp": dp, "utils": utils, "compute_loss": grpo["_compute_loss"],
            "grpo_adv": grpo_adv, "rloo_adv": rloo_adv, "dpo": dpo, "reward": reward}


def _run(block: tuple[Any, dict[str, Any]], **variables: Any) -> dict[str, Any]:
    """Run a lifted statement block with ``variables`` (and torch, F, math, nn) in scope."""
    code, _ = block
    ns = {"torch": torch, "F": F, "nn": torch.nn, "math": math, **variables}
    exec(code, ns)
    return ns


def _groups(dt: type) -> dict[str, tuple[np.ndarray, int]]:
    rng = np.random.default_rng(1700)
    return {
        "random G=4": (scores(rng, 16, dt), 4),
        "eight copies of 0.7": (np.full(8, 0.7, dt), 8),
        "seven copies of 1000.1": (np.full(7, 1000.1, dt), 7),
        "0/1 scores with an equal group": (np.array([1, 1, 1, 1, 0, 1, 0, 0], dt), 4),
        "G=1": (scores(rng, 4, dt), 1),
    }


def _group_cases() -> Iterator[tuple[str, type, str, np.ndarray, int]]:
    """``(dtype, dt, label, scores, G)`` for every dtype and every group layout of
    :func:`_groups`."""
    for dtype, dt in DTYPES.items():
        for label, (s, G) in _groups(dt).items():
            yield dtype, dt, label, s, G


def _advantages_operator(v: Vectors, trainer: str, block: tuple[Any, dict[str, Any]],
                         note: str) -> str:
    """Declare the advantages block of ``<trainer>._generate_and_score_completions``, run on one
    reward function (:func:`_advantages`); ``note`` says what else it is given. Returns the
    operator's name."""
    name = f"{trainer}._generate_and_score_completions (advantages)"
    v.operator(name, block[1], "the statements run with rewards_per_func = scores[:, None] (one "
               f"reward function of weight 1), {note}; outputs: advantages")
    return name


def _advantages(block: tuple[Any, dict[str, Any]], s: np.ndarray, nanstd: Any,
                fields: dict[str, Any], **variables: Any) -> dict[str, Any]:
    """The advantages an advantages block computes from the scores ``s`` as its one reward
    function of weight 1 (``rewards_per_func = s[:, None]``, on the CPU), with ``self`` holding
    ``fields`` and ``variables`` in scope."""
    s_t = tensor(s)
    me = types.SimpleNamespace(reward_weights=torch.ones(1, dtype=s_t.dtype), **fields)
    ns = _run(block, self=me, rewards_per_func=s_t[:, None], device="cpu", nanstd=nanstd,
              **variables)
    return {"advantages": ns["advantages"]}


def _loss_batch(inputs: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
    """``GRPOTrainer._compute_loss``'s inputs from a case: the leaf log-probs (their ``.grad`` is
    the gradient compared) and the batch it reads (no prompt; the reference's log-probs if the
    case has them)."""
    logps = tensor(inputs["per_token_logps"], grad=True)
    cm = tensor(inputs["completion_mask"])
    B, T = cm.shape  # batch, completion length
    batch = {
        "prompt_ids": torch.zeros((B, 0), dtype=torch.long),
        "prompt_mask": torch.zeros((B, 0), dtype=torch.long),
        "completion_ids": torch.zeros((B, T), dtype=torch.long),
        "completion_mask": cm, "advantages": tensor(inputs["advantages"]),
        "old_per_token_logps": tensor(inputs["old_per_token_logps"]),
        "num_items_in_batch": cm.sum(),
    }
    if "ref_per_token_logps" in inputs:
        batch["ref_per_token_logps"] = tensor(inputs["ref_per_token_logps"])
    return logps, batch


# ---- GRPO policy loss: _compute_loss, value and gradient ---------------------------------
def _grpo_loss_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """GRPOTrainer._compute_loss (grpo_trainer.py), called whole, at the pinned version: loss
    types grpo, bnpo, dr_grpo and dapo, value and gradient."""
    gr = lib["gr"]
    v = Vectors(pin)
    v.operator(
        "GRPOTrainer._compute_loss", gr.where("GRPOTrainer._compute_loss"),
        "called whole on a stand-in self (one process, one step, no vLLM, no entropy mask or "
        "bonus, importance_sampling_level 'token', delta None); per_token_logps is a leaf "
        "tensor: grad_per_token_logps is d loss / d per_token_logps by autograd; "
        "num_items_in_batch = completion_mask.sum(); max_completion_length = T",
    )
    settings = [
        {"epsilon_low": 0.2, "epsilon_high": 0.2, "beta": 0.0, "use_bias_correction_kl": True},
        {"epsilon_low": 0.2, "epsilon_high": 0.28, "beta": 0.04, "use_bias_correction_kl": False},
        {"epsilon_low": 0.2, "epsilon_high": 0.28, "beta": 0.04, "use_bias_correction_kl": True},
    ]
    for dtype, dt in DTYPES.items():
        for seed, loss_type in enumerate(["grpo", "bnpo", "dr_grpo", "dapo"]):
            for k, setting in enumerate(settings):
                rng = np.random.default_rng(1000 + 10 * seed + k)
                m = mask(ALL_LAYOUTS, dt)
                B, T = m.shape  # batch, response length
                old = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
                new = (old + log_ratio_extremes(rng, (B, T), dt) / 6).astype(dt)
                ref = (new + grid(rng, (B, T), 0.5, dt)).astype(dt)
                adv = grid(rng, B, 1.0, dt)
                adv[0] = -1.0
                variants = [("", adv, m)]
                if loss_type == "bnpo" and k:  # the KL's gradient alone: Â = 0
                    variants.append((" advantages=0", np.zeros(B, dt), m))
                if k == 2:  # a batch with no response token
                    variants.append((" no token", adv, np.zeros_like(m)))
                for tag, a, cm in variants:
                    inputs = {"per_token_logps": new, "old_per_token_logps": old,
                              "ref_per_token_logps": ref, "advantages": a, "completion_mask": cm}
                    kwargs = {"loss_type": loss_type, **setting, "max_completion_length": T}

                    def run(inputs=inputs, kwargs=kwargs):
                        logps, batch = _loss_batch(inputs)
                        loss = lib["compute_loss"](_GRPOSelf(logps, **kwargs), None, batch)
                        loss.backward()
                        return {"loss": loss, "grad_per_token_logps": logps.grad}

                    name = " ".join(f"{key}={val}" for key, val in kwargs.items()
                                    if key != "max_completion_length")
                    v.case("GRPOTrainer._compute_loss", f"{dtype} {name}{tag}", kwargs, inputs,
                           run)
    return v


# ---- GRPO advantages: scale_rewards ------------------------------------------------------
def _grpo_advantage_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """The advantages statements of GRPOTrainer._generate_and_score_completions at the
    pinned version: scale_rewards group, batch and none."""
    u = lib["utils"]
    v = Vectors(pin)
    grpo_adv = _advantages_operator(
        v, "GRPOTrainer", lib["grpo_adv"],
        "multi_objective_aggregation 'sum_then_normalize', the given scale_rewards and "
        "num_generations")
    for dtype, _, label, s, G in _group_cases():
        for scale in ("group", "batch", "none"):
            inputs = {"scores": s}
            kwargs = {"scale_rewards": scale, "num_generations": G}

            def run(s=s, G=G, scale=scale):
                me = {"multi_objective_aggregation": "sum_then_normalize",
                      "scale_rewards": scale, "reward_funcs": [None]}
                return _advantages(lib["grpo_adv"], s, u["nanstd"], me, num_generations=G)

            v.case(grpo_adv, f"{dtype} {label} scale_rewards={scale}", kwargs, inputs, run)
    return v


# ---- RLOO advantages with the KL in the reward -------------------------------------------
def _rloo_advantage_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """The advantages statements of RLOOTrainer._generate_and_score_completions at the
    pinned version: the KL in the reward, normalize_advantages."""
    u = lib["utils"]
    v = Vectors(pin)
    rloo_adv = _advantages_operator(
        v, "RLOOTrainer", lib["rloo_adv"],
        "reward_clip_range None, gather = identity (one process)")
    for dtype, dt, label, s, G in _group_cases():
        if G == 1:
            continue
        rng = np.random.default_rng(1800)
        m = mask((ALL_LAYOUTS * 3)[: s.shape[0]], dt)
        old = (grid(rng, m.shape, 1.0, dt) - 2.0).astype(dt)
        ref = (old + grid(rng, m.shape, 0.3, dt)).astype(dt)
        for beta, normalize in [(0.0, False), (0.05, False), (0.05, True)]:
            inputs = {"scores": s, "old_per_token_logps": old, "ref_per_token_logps": ref,
                      "completion_mask": m}
            kwargs = {"beta": beta, "normalize_advantages": normalize, "num_generations": G}

            def run(inputs=inputs, kwargs=kwargs):
                me = {"reward_clip_range": None, "beta": kwargs["beta"],
                      "normalize_advantages": kwargs["normalize_advantages"]}
                return _advantages(lib["rloo_adv"], inputs["scores"], u["nanstd"], me,
                                   num_generations=kwargs["num_generations"],
                                   old_per_token_logps=tensor(inputs["old_per_token_logps"]),
                                   ref_per_token_logps=tensor(inputs["ref_per_token_logps"]),
                                   completion_mask=tensor(inputs["completion_mask"]),
                                   gather=lambda x: x)

            v.case(rloo_adv, f"{dtype} {label} beta={beta} normalize_advantages={normalize}",
                   kwargs, inputs, run)
    return v


# ---- nanstd, selective_log_softmax, entropy_from_logits ----------------------------------
def _utils_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """nanstd, selective_log_softmax and entropy_from_logits (trl/trainer/utils.py) at the
    pinned version, on the PyTorch path."""
    ut = lib["ut"]
    u = lib["utils"]
    v = Vectors(pin)
    v.operator("nanstd", ut.where("nanstd"), "outputs: std")
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(1900)
        x = grid(rng, (4, 5), 1.0, dt)
        x[0, 1] = x[2, 0] = np.nan
        x[3, :4] = np.nan  # one value left in the row: NaN
        for dim, keepdim in [(None, False), (1, False), (0, True), (1, True)]:
            kwargs = {"dim": dim, "keepdim": keepdim}

            def run(x=x, kwargs=kwargs):
                return {"std": u["nanstd"](tensor(x), **kwargs)}

            v.case("nanstd", f"{dtype} dim={dim} keepdim={keepdim}", kwargs, {"tensor": x}, run)

    v.operator("selective_log_softmax", ut.where("selective_log_softmax"),
               "is_triton_available() is False (CPU: the PyTorch path); outputs: logps")
    v.operator("entropy_from_logits", ut.where("entropy_from_logits"),
               "is_triton_available() is False (CPU: the PyTorch path); called on logits / "
               "temperature (as selective_log_softmax_and_entropy divides them); outputs: entropy")
    inputs = logits_inputs(2000, (3, 4, 11), 3.0, "index")

    def selective_logps(t, logits, index):
        return {"logps": u["selective_log_softmax"](logits, index, temperature=t)}

    temperature_cases(v, "selective_log_softmax", inputs, (1.0, 0.7, 1.5), selective_logps)
    for dtype, x in inputs.items():
        logits = x["logits"]
        for temperature, chunk_size in itertools.product((1.0, 0.7), (128, 5)):

            def run(logits=logits, chunk_size=chunk_size, temperature=temperature):
                z = tensor(logits) / temperature
                return {"entropy": u["entropy_from_logits"](z, chunk_size)}

            v.case("entropy_from_logits",
                   f"{dtype} temperature={temperature} chunk_size={chunk_size}",
                   {"temperature": temperature, "chunk_size": chunk_size}, {"logits": logits},
                   run)
    return v


# ---- DPO (sigmoid) and the reward model's loss -------------------------------------------
def _dpo_sigmoid_reward_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """The loss statements of DPOTrainer._compute_loss with loss_type sigmoid and of
    RewardTrainer.compute_loss at the pinned version."""
    v = Vectors(pin)
    v.operator(
        "DPOTrainer._compute_loss (sigmoid)", lib["dpo"][1],
        "the statements run from the sequence log-probs on (the model's forward pass is before "
        "them): f_divergence_type 'reverse_kl', loss_type ['sigmoid'], loss_weights [1.0], "
        "use_weighting False; outputs: loss",
    )
    v.operator(
        "RewardTrainer.compute_loss", lib["reward"][1],
        "the statements run from the rewards on (the model's forward pass is before them); "
        "outputs: loss",
    )
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(2100)
        lp = sequence_logps(rng, ("chosen_logps", "rejected_logps", "ref_chosen_logps",
                                  "ref_rejected_logps"), dt)
        lp["chosen_logps"][0] += 200  # z = β·Δ far from 0
        for beta in (0.1, 0.5):

            def run(lp=lp, beta=beta):
                me = types.SimpleNamespace(f_divergence_type="reverse_kl", beta=beta,
                                           loss_types=["sigmoid"], loss_weights=[1.0],
                                           use_weighting=False)
                ns = _run(lib["dpo"], self=me, **{k: tensor(x) for k, x in lp.items()})
                return {"loss": ns["loss"]}

            v.case("DPOTrainer._compute_loss (sigmoid)", f"{dtype} beta={beta}",
                   {"beta": beta, "loss_type": ["sigmoid"]}, dict(lp), run)
        for inputs in score_pairs(rng, "rewards_chosen", "rewards_rejected", dt):

            def run(inputs=inputs):
                batch = {"margin": tensor(inputs["margin"])} if "margin" in inputs else {}
                me = types.SimpleNamespace(
                    args=types.SimpleNamespace(center_rewards_coefficient=None))
                ns = _run(lib["reward"], self=me, inputs=batch,
                          rewards_chosen=tensor(inputs["rewards_chosen"]),
                          rewards_rejected=tensor(inputs["rewards_rejected"]))
                return {"loss": ns["loss"]}

            v.case("RewardTrainer.compute_loss", f"{dtype} margin={'margin' in inputs}",
                   {"center_rewards_coefficient": None}, inputs, run)
    return v


# ---- the defaults the docstrings state ------------------------------------------------------
def _defaults(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """No cases: the config defaults the docstrings state (GRPOConfig, RLOOConfig, DPOConfig,
    CPOConfig, ORPOConfig, KTOConfig, RewardConfig), the loss types the DPO and GRPO trainers
    know, and the files of the pinned wheel that define masked_whiten."""
    gr = lib["gr"]
    v = Vectors(pin)
    grpo = Source(pin, wheel, "trl/trainer/grpo_config.py")
    v.defaults.update(dataclass_fields(
        grpo, "GRPOConfig", "beta", "epsilon", "epsilon_high", "delta", "loss_type",
        "scale_rewards", "use_bias_correction_kl", "use_vllm",
        "vllm_importance_sampling_correction", "vllm_importance_sampling_mode",
        "vllm_importance_sampling_clip_max", "importance_sampling_level", "num_iterations",
        "top_entropy_quantile", "off_policy_mask_threshold", "multi_objective_aggregation"))
    rloo = Source(pin, wheel, "trl/trainer/rloo_config.py")
    v.defaults.update(dataclass_fields(rloo, "RLOOConfig", "beta", "epsilon",
                                       "normalize_advantages"))
    dpo = Source(pin, wheel, "trl/trainer/dpo_config.py")
    v.defaults.update(dataclass_fields(dpo, "DPOConfig", "beta", "loss_type", "label_smoothing",
                                       "discopop_tau"))
    # the loss types the DPO trainer's loop knows: every string it compares loss_type with
    dp = lib["dp"]
    loop = dp.node("DPOTrainer._compute_loss")
    dpo_types = {c.value for node in ast.walk(loop) if isinstance(node, ast.Compare)
                 and ast.unparse(node.left) == "loss_type"
                 for e in node.comparators for c in ast.walk(e) if isinstance(c, ast.Constant)}
    v.defaults["DPOTrainer._compute_loss loss types"] = {
        "value": sorted(dpo_types), "module": dp.module_path, "line": loop.lineno}
    cpo = Source(pin, wheel, "trl/experimental/cpo/cpo_config.py")
    v.defaults.update(dataclass_fields(cpo, "CPOConfig", "beta", "loss_type", "cpo_alpha",
                                       "simpo_gamma", "label_smoothing"))
    orpo = Source(pin, wheel, "trl/experimental/orpo/orpo_config.py")
    v.defaults.update(dataclass_fields(orpo, "ORPOConfig", "beta"))
    kto = Source(pin, wheel, "trl/trainer/kto_config.py")
    v.defaults.update(dataclass_fields(kto, "KTOConfig", "beta", "loss_type", "desirable_weight",
                                       "undesirable_weight"))
    reward = Source(pin, wheel, "trl/trainer/reward_config.py")
    v.defaults.update(dataclass_fields(reward, "RewardConfig", "center_rewards_coefficient"))
    # the loss types _compute_loss knows: every string it compares self.loss_type with
    method = gr.node("GRPOTrainer._compute_loss")
    types_ = set()
    for node in ast.walk(method):
        if isinstance(node, ast.Compare) and ast.unparse(node.left) == "self.loss_type":
            for c in node.comparators:
                types_ |= {e.value for e in ast.walk(c) if isinstance(e, ast.Constant)}
    v.defaults["GRPOTrainer._compute_loss loss types"] = {
        "value": sorted(types_), "module": gr.module_path, "line": method.lineno}
    # where the wheel defines masked_whiten (TRL's PPOTrainer had one)
    with zipfile.ZipFile(wheel) as z:
        files = sorted(n for n in z.namelist() if n.endswith(".py")
                       and "def masked_whiten(" in z.read(n).decode("utf-8"))
    v.defaults["files defining masked_whiten"] = {"value": files, "module": "*", "line": 0}
    return v


# ---- DAPO's soft overlong punishment, a reward function (overlong_penalty) ---------------
def _overlong_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """get_soft_overlong_punishment and _SoftOverlongPunishment (trl/rewards/other_rewards.py)
    at the pinned version: DAPO's soft overlong punishment."""
    v = Vectors(pin)
    orw = Source(pin, wheel, "trl/rewards/other_rewards.py")
    rewards = orw.define({"Callable": Callable}, "get_soft_overlong_punishment",
                         "_SoftOverlongPunishment")
    v.operator(
        "get_soft_overlong_punishment", orw.where("get_soft_overlong_punishment"),
        f"with _SoftOverlongPunishment (lines {orw.lifted['_SoftOverlongPunishment']['lines']}); "
        "get_soft_overlong_punishment(max_completion_len, soft_punish_cache)(completion_ids) "
        "with completion_ids = one list of `length` token ids per length; outputs: rewards",
    )
    overlong_settings = [  # max_completion_len, soft_punish_cache; lengths
        (100, 20, [0, 50, 80, 81, 90, 99, 100, 101, 130]),
        (20, 4, [*range(21), 21, 24, 28]),
        (10, 3, [*range(11), 11, 13]),
        (16, 16, [*range(0, 17, 2), 20]),
        (20480, 4096, [0, 1000, 16383, 16384, 16385, 17408, 18432, 20479, 20480, 20992]),
    ]
    for max_len, cache, lengths in overlong_settings:
        inputs = {"lengths": np.array(lengths, np.int64)}
        kwargs = {"max_completion_len": max_len, "soft_punish_cache": cache}

        def run(inputs=inputs, kwargs=kwargs):
            fn = rewards["get_soft_overlong_punishment"](**kwargs)
            ids = [[1] * n for n in inputs["lengths"].tolist()]
            return {"rewards": np.array(fn(ids), np.float64)}

        v.case("get_soft_overlong_punishment",
               f"max_completion_len={max_len} soft_punish_cache={cache}", kwargs, inputs, run)
    v.defaults.update(dataclass_fields(Source(pin, wheel, "trl/trainer/grpo_config.py"),
                                       "GRPOConfig", "mask_truncated_completions"))
    return v


# ---- off-policy corrections (offpolicy: off_policy_sequence_mask, rollout_is_weights) -------
def _off_policy_mask_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """GRPOTrainer.get_off_policy_mask (grpo_trainer.py) at the pinned version: the
    off-policy sequence mask, NaN log-probs."""
    gr = lib["gr"]
    v = Vectors(pin)
    opsm = gr.define({"torch": torch}, "GRPOTrainer.get_off_policy_mask")["get_off_policy_mask"]
    v.operator("GRPOTrainer.get_off_policy_mask", gr.where("GRPOTrainer.get_off_policy_mask"),
               "a static method, called with advantages [B, 1] as _compute_loss passes them; "
               "outputs: off_policy_mask")
    for dtype, dt in DTYPES.items():
        for threshold in (0.25, 0.05):
            for layouts, label in [(ALL_LAYOUTS * 2, "all layouts"), (["empty"], "no token")]:
                rng = np.random.default_rng(2200)
                m = mask(layouts, dt)
                B, T = m.shape  # batch, response length
                sampling = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
                d = (grid(rng, (B, T), 0.3, dt) + grid(rng, (B, 1), 0.3, dt)).astype(dt)
                if B > 6:
                    d[0] = 0.25  # a mean KL of exactly 0.25: kept (≤ δ) when δ = 0.25
                    d[6] = d[8] = d[9] = 0.0
                    d[6, 2] = np.nan  # the trainer's log-prob NaN, in a full row
                    d[7, 6] = np.nan  # NaN on padding
                logps = (sampling - d).astype(dt)
                if B > 6:
                    # vLLM's log-prob NaN (a token it could not score): on a response token of
                    # the left-padded row 8, on the hole of row 9; both rows' mean KL is 0
                    sampling[8, 4] = sampling[9, 2] = np.nan
                adv = grid(rng, (B, 1), 1.0, dt)
                adv[: min(B, 4), 0] = [-1.0, 0.0, -1.0, 1.0][: min(B, 4)]
                adv[6:, 0] = -1.0
                inputs = {"advantages": adv, "per_token_logps": logps,
                          "sampling_per_token_logps": sampling, "mask": m}
                kwargs = {"off_policy_threshold": threshold}

                def run(inputs=inputs, threshold=threshold):
                    out = opsm(tensor(inputs["advantages"]), tensor(inputs["per_token_logps"]),
                               tensor(inputs["sampling_per_token_logps"]),
                               tensor(inputs["mask"]), threshold)
                    return {"off_policy_mask": out}

                v.case("GRPOTrainer.get_off_policy_mask",
                       f"{dtype} {label} off_policy_threshold={threshold}", kwargs, inputs, run)
    return v


def _vllm_is_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """The vLLM importance-sampling statements of
    GRPOTrainer._generate_and_score_completions at the pinned version: every mode, bounds,
    NaN sampling log-probs."""
    gr = lib["gr"]
    grpo = Source(pin, wheel, "trl/trainer/grpo_config.py")
    v = Vectors(pin)
    vis = gr.statements("GRPOTrainer._generate_and_score_completions",
                        "mask = completion_mask if tool_mask is None",
                        "if self.vllm_importance_sampling_mode in")
    name = "GRPOTrainer._generate_and_score_completions (vLLM importance sampling)"
    v.operator(name, vis[1],
               "the statements run with tool_mask None, old_per_token_logps (the trainer's) and "
               "sampling_per_token_logps (vLLM's) and the given mode and bounds; outputs: "
               "vllm_importance_sampling_ratio ([B, T] for token modes, [B, 1] for sequence "
               "modes)")

    def ratio(inputs: dict, kwargs: dict) -> dict:
        ns = _run(vis, self=types.SimpleNamespace(**kwargs), tool_mask=None,
                  completion_mask=tensor(inputs["completion_mask"]),
                  old_per_token_logps=tensor(inputs["old_per_token_logps"]),
                  sampling_per_token_logps=tensor(inputs["sampling_per_token_logps"]))
        return {"vllm_importance_sampling_ratio": ns["vllm_importance_sampling_ratio"]}

    modes = ["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(2300)
        m = mask(ALL_LAYOUTS, dt)
        B, T = m.shape  # batch, response length
        sampling = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
        old = (sampling + log_ratio_extremes(rng, (B, T), dt) / 6).astype(dt)
        inputs = {"old_per_token_logps": old, "sampling_per_token_logps": sampling,
                  "completion_mask": m}
        for mode in modes:
            for clip_min, clip_max in [(None, 3.0), (0.5, 3.0), (0.8, 1.25)]:
                kwargs = {"vllm_importance_sampling_mode": mode,
                          "vllm_importance_sampling_clip_min": clip_min,
                          "vllm_importance_sampling_clip_max": clip_max}
                v.case(name, f"{dtype} {mode} clip_min={clip_min} clip_max={clip_max}", kwargs,
                       inputs, functools.partial(ratio, inputs, kwargs))
        # vLLM's log-prob NaN (a token it could not score) on a response token of the full row
        # (0, 5) and of the holes row (3, 1), and on padding of the right-padded row (1, 6)
        nan_sampling = sampling.copy()
        nan_sampling[0, 5] = nan_sampling[3, 1] = nan_sampling[1, 6] = np.nan
        nan_inputs = {**inputs, "sampling_per_token_logps": nan_sampling}
        for mode in modes:
            kwargs = {"vllm_importance_sampling_mode": mode,
                      "vllm_importance_sampling_clip_min": None,
                      "vllm_importance_sampling_clip_max": 3.0}
            v.case(name, f"{dtype} {mode} clip_min=None clip_max=3.0 NaN sampling log-probs",
                   kwargs, nan_inputs, functools.partial(ratio, nan_inputs, kwargs))
    v.defaults.update(dataclass_fields(grpo, "GRPOConfig", "vllm_importance_sampling_clip_min"))
    return v


# ---- SAPO: _compute_loss with loss_type "sapo", value and gradient -----------------------
def _sapo_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """GRPOTrainer._compute_loss (grpo_trainer.py) with loss_type sapo at the pinned version:
    value and gradient; and the files of the wheel that mention kl_cov."""
    gr = lib["gr"]
    grpo = Source(pin, wheel, "trl/trainer/grpo_config.py")
    v = Vectors(pin)
    v.operator(
        "GRPOTrainer._compute_loss (sapo)", gr.where("GRPOTrainer._compute_loss"),
        "called whole on the stand-in self of the GRPO cases with loss_type 'sapo' and "
        "args.sapo_temperature_pos / _neg (beta 0, one process, one step, no vLLM, "
        "importance_sampling_level 'token'); grad_per_token_logps is d loss / d "
        "per_token_logps by autograd",
    )
    for dtype, dt, rng, (tau_pos, tau_neg) in seeded(2600, [(1.0, 1.05), (0.5, 3.0)]):
        m = mask(ALL_LAYOUTS, dt)
        B, T = m.shape  # batch, response length
        old = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
        new = (old + log_ratio_extremes(rng, (B, T), dt) / 6).astype(dt)
        adv = grid(rng, B, 1.0, dt)
        adv[0], adv[1] = -1.0, 0.0
        inputs = {"per_token_logps": new, "old_per_token_logps": old, "advantages": adv,
                  "completion_mask": m}
        kwargs = {"loss_type": "sapo", "sapo_temperature_pos": tau_pos,
                  "sapo_temperature_neg": tau_neg}

        def run(inputs=inputs, kwargs=kwargs):
            logps, batch = _loss_batch(inputs)
            T = batch["completion_mask"].shape[1]
            me = _GRPOSelf(logps, loss_type="sapo", epsilon_low=0.2, epsilon_high=0.2,
                           beta=0.0, use_bias_correction_kl=True, max_completion_length=T)
            me.args.sapo_temperature_pos = kwargs["sapo_temperature_pos"]
            me.args.sapo_temperature_neg = kwargs["sapo_temperature_neg"]
            loss = lib["compute_loss"](me, None, batch)
            loss.backward()
            return {"loss": loss, "grad_per_token_logps": logps.grad}

        v.case("GRPOTrainer._compute_loss (sapo)",
               f"{dtype} sapo_temperature_pos={tau_pos} sapo_temperature_neg={tau_neg}",
               kwargs, inputs, run)
    v.defaults.update(dataclass_fields(grpo, "GRPOConfig", "sapo_temperature_pos",
                                       "sapo_temperature_neg"))
    with zipfile.ZipFile(wheel) as z:
        files = sorted(n for n in z.namelist() if n.endswith(".py")
                       and "kl_cov" in z.read(n).decode("utf-8").lower())
    v.defaults["files mentioning kl_cov"] = {"value": files, "module": "*", "line": 0}
    return v


# ---- token_logprobs, token_entropy, high_entropy_mask ------------------------------------
# selective_log_softmax_and_entropy: TRL's one function that takes the temperature for both
def _logprobs_entropy_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """selective_log_softmax_and_entropy (trl/trainer/utils.py) at the pinned version: log-probs
    and entropy at a temperature."""
    ut = lib["ut"]
    u = lib["utils"]
    v = Vectors(pin)
    ut.define(u, "selective_log_softmax_and_entropy")
    v.operator("selective_log_softmax_and_entropy",
               ut.where("selective_log_softmax_and_entropy"),
               "is_triton_available() is False (CPU: the PyTorch path), row_mask None; "
               "outputs: logps, entropy")
    inputs = logits_inputs(2200, (3, 5, 13), 2.0, "index", peak=(1, 2), reach=60)
    for x in inputs.values():
        x["logits"][2, 0] = 0.0  # a uniform row: H = log 13

    def logps_and_entropy(t, logits, index):
        logps, entropy = u["selective_log_softmax_and_entropy"](logits, index, temperature=t)
        return {"logps": logps, "entropy": entropy}

    temperature_cases(v, "selective_log_softmax_and_entropy", inputs, (1.0, 0.7, 1.5),
                      logps_and_entropy)
    return v


# get_high_entropy_mask: the method, on a stand-in self of one process
def _high_entropy_mask_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """GRPOTrainer.get_high_entropy_mask (grpo_trainer.py) at the pinned version, on one
    process: distinct, tied and equal entropies at every threshold."""
    gr = lib["gr"]
    v = Vectors(pin)
    high_entropy_mask = gr.define({"torch": torch}, "GRPOTrainer.get_high_entropy_mask")
    v.operator("GRPOTrainer.get_high_entropy_mask", gr.where("GRPOTrainer.get_high_entropy_mask"),
               "called whole on a stand-in self whose accelerator is one process "
               "(pad_across_processes and gather return their input); _compute_loss passes "
               "threshold = 1 - top_entropy_quantile; outputs: entropy_mask")
    one_process = types.SimpleNamespace(accelerator=types.SimpleNamespace(
        pad_across_processes=lambda x, dim=0, pad_index=0: x, gather=lambda x: x))
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(2300)
        m = mask(ALL_LAYOUTS, dt)  # 23 response tokens
        ent = {
            # distinct values on the grid; padding holds larger ones than any response token
            "distinct": np.where(m > 0, np.abs(grid(rng, m.shape, 1.0, dt)), 9.0).astype(dt),
            # multiples of 1/4: ties everywhere, also at the cut
            "ties": (rng.integers(0, 8, m.shape) / 4.0).astype(dt),
            # every response token of equal entropy
            "all equal": np.full(m.shape, 0.5, dt),
        }
        layouts = {"all layouts": m, "no response token": np.zeros_like(m)}
        for (label, h), (mlabel, mm) in itertools.product(ent.items(), layouts.items()):
            if mlabel == "no response token" and label != "distinct":
                continue
            for threshold in (0.0, 0.5, 0.8, 0.95, 1.0):

                def run(h=h, mm=mm, threshold=threshold):
                    out = high_entropy_mask["get_high_entropy_mask"](
                        one_process, tensor(h), tensor(mm), threshold)
                    return {"entropy_mask": out}

                v.case("GRPOTrainer.get_high_entropy_mask",
                       f"{dtype} {label} {mlabel} threshold={threshold}",
                       {"threshold": threshold}, {"entropies": h, "mask": mm}, run)
    config = Source(pin, wheel, "trl/trainer/grpo_config.py")
    v.defaults.update(dataclass_fields(config, "GRPOConfig", "temperature", "entropy_coef",
                                       "use_adaptive_entropy"))
    return v


# ---- GSPO and CISPO (beyond/gspo_loss, beyond/cispo_loss) ---------------------------------------
def _gspo_cispo_cases(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """GRPOTrainer._compute_loss (grpo_trainer.py) at the pinned version, with
    importance_sampling_level "sequence" (GSPO) and with loss_type "cispo": value and gradient,
    one process, one step; and what GRPOConfig's help says of epsilon_high."""
    gr = lib["gr"]
    v = Vectors(pin)
    # what GRPOConfig's help says of epsilon_high for CISPO (the value it recommends)
    config = Source(pin, wheel, "trl/trainer/grpo_config.py")
    for node in config.node("GRPOConfig").body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "epsilon_high":
            field = {k.arg: k.value for k in node.value.keywords}
            meta = ast.literal_eval(field["metadata"])
            v.defaults["GRPOConfig.epsilon_high help"] = {
                "value": meta["help"], "module": config.module_path, "line": node.lineno}

    def run_loss(inputs: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        logps, batch = _loss_batch(inputs)
        T = batch["completion_mask"].shape[1]
        me = _GRPOSelf(logps, loss_type=kwargs["loss_type"], epsilon_low=kwargs["epsilon_low"],
                       epsilon_high=kwargs["epsilon_high"], beta=0.0,
                       use_bias_correction_kl=True, max_completion_length=T)
        me.importance_sampling_level = kwargs["importance_sampling_level"]
        loss = lib["compute_loss"](me, None, batch)
        loss.backward()
        return {"loss": loss, "grad_per_token_logps": logps.grad}

    note = ("called whole on a stand-in self (one process, one step, no vLLM, beta 0); "
            "per_token_logps is a leaf tensor: grad_per_token_logps is d loss / d "
            "per_token_logps by autograd; num_items_in_batch = completion_mask.sum()")
    v.operator("GRPOTrainer._compute_loss (sequence level)",
               gr.where("GRPOTrainer._compute_loss"), note)
    gspo = [  # (label, loss_type, epsilon, epsilon_high, log-ratios, advantages [B, T])
        ("near 1", "grpo", 3e-4, 4e-4, "near", False),
        ("near 1 per-token advantages", "grpo", 3e-4, 4e-4, "near", True),
        ("far", "grpo", 0.2, 0.28, "far", False),
        ("far per-token advantages", "grpo", 0.2, 0.28, "far", True),
        ("mean log-ratio 12", "grpo", 0.2, 0.28, "twelve", False),
        ("near 1", "dapo", 3e-4, 4e-4, "near", False),
    ]
    for dtype, dt, rng, (label, loss_type, low, high, kind, per_token) in seeded(3200, gspo):
        m = mask(ALL_LAYOUTS, dt)
        B, T = m.shape  # batch, response length
        old = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
        d, adv = gspo_inputs(rng, m, kind, per_token, dt)
        inputs = {"per_token_logps": (old + d).astype(dt), "old_per_token_logps": old,
                  "advantages": adv, "completion_mask": m}
        kwargs = {"loss_type": loss_type, "importance_sampling_level": "sequence",
                  "epsilon_low": low, "epsilon_high": high}

        def run(inputs=inputs, kwargs=kwargs):
            return run_loss(inputs, kwargs)

        v.case("GRPOTrainer._compute_loss (sequence level)",
               f"{dtype} {label} loss_type={loss_type} epsilon={low} epsilon_high={high}",
               kwargs, inputs, run)

    v.operator("GRPOTrainer._compute_loss (cispo)", gr.where("GRPOTrainer._compute_loss"), note)
    # epsilon_high: the recommended ε_max, then epsilon's default
    for dtype, dt, rng, high in seeded(3300, [5.0, 0.2]):
        m = mask(ALL_LAYOUTS, dt)
        B, T = m.shape  # batch, response length
        old = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
        d = log_ratio_extremes(rng, (B, T), dt)
        d[1] = grid(rng, T, 1.0, dt)  # ratios between 0.2 and 5 and beyond
        adv = grid(rng, B, 1.0, dt)
        adv[0] = 1.0
        inputs = {"per_token_logps": (old + d).astype(dt), "old_per_token_logps": old,
                  "advantages": adv, "completion_mask": m}
        kwargs = {"loss_type": "cispo", "importance_sampling_level": "token",
                  "epsilon_low": 0.2, "epsilon_high": high}

        def run(inputs=inputs, kwargs=kwargs):
            return run_loss(inputs, kwargs)

        v.case("GRPOTrainer._compute_loss (cispo)", f"{dtype} epsilon_high={high}", kwargs,
               inputs, run)
    return v


# ---- after DPO: IPO and robust DPO (DPOTrainer), SimPO (CPOTrainer), ORPO, KTO -------------------
def _dpo_family(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """At the pinned version: IPO and robust DPO from the DPO trainer's loss loop, SimPO from
    the experimental CPOTrainer.cpo_loss, ORPO's odds-ratio term from
    ORPOTrainer.odds_ratio_loss, and KTO from the statements of KTOTrainer._compute_loss that form
    its losses."""
    v = Vectors(pin)
    device = types.SimpleNamespace(device="cpu")
    cp = Source(pin, wheel, "trl/experimental/cpo/cpo_trainer.py")
    cpo_loss = cp.define({"torch": torch, "F": F}, "CPOTrainer.cpo_loss")["cpo_loss"]
    op = Source(pin, wheel, "trl/experimental/orpo/orpo_trainer.py")
    orpo = op.define({"torch": torch, "F": F}, "log1mexp", "ORPOTrainer.odds_ratio_loss")
    kt = Source(pin, wheel, "trl/trainer/kto_trainer.py")
    kto = kt.statements("KTOTrainer._compute_loss", "if self.calculate_KL:", "losses = torch.cat(")

    names = ("chosen_logps", "rejected_logps", "ref_chosen_logps", "ref_rejected_logps")
    v.operator("DPOTrainer._compute_loss (ipo)", lib["dpo"][1],
               "the DPO trainer's loss statements with loss_type ['ipo'] and completion_mask "
               "[chosen rows; rejected rows] holding each response's length; outputs: loss")
    v.operator("DPOTrainer._compute_loss (robust)", lib["dpo"][1],
               "the DPO trainer's loss statements with loss_type ['robust']; outputs: loss")
    for dtype, dt, rng, beta in seeded(2400, (0.1, 0.5)):
        lp = sequence_logps(rng, names, dt)
        lp["chosen_logps"][0] += 200  # a margin far from the target
        lengths = {"chosen_lengths": rng.integers(1, 40, 8), "rejected_lengths":
                   rng.integers(1, 40, 8)}
        rows = np.concatenate([lengths["chosen_lengths"], lengths["rejected_lengths"]])
        completion_mask = (np.arange(40)[None, :] < rows[:, None]).astype(np.int64)

        def ipo(lp=lp, beta=beta, completion_mask=completion_mask):
            me = types.SimpleNamespace(f_divergence_type="reverse_kl", beta=beta,
                                       loss_types=["ipo"], loss_weights=[1.0],
                                       use_weighting=False, label_smoothing=0.0)
            ns = _run(lib["dpo"], self=me, completion_mask=torch.from_numpy(completion_mask),
                      **{k: tensor(x) for k, x in lp.items()})
            return {"loss": ns["loss"]}

        v.case("DPOTrainer._compute_loss (ipo)", f"{dtype} beta={beta}",
               {"beta": beta, "loss_type": ["ipo"]}, {**lp, **lengths}, ipo)
        for eps in (0.0, 0.1, 0.3):

            def robust(lp=lp, beta=beta, eps=eps):
                me = types.SimpleNamespace(f_divergence_type="reverse_kl", beta=beta,
                                           loss_types=["robust"], loss_weights=[1.0],
                                           use_weighting=False, label_smoothing=eps)
                ns = _run(lib["dpo"], self=me, **{k: tensor(x) for k, x in lp.items()})
                return {"loss": ns["loss"]}

            v.case("DPOTrainer._compute_loss (robust)", f"{dtype} beta={beta} eps={eps}",
                   {"beta": beta, "label_smoothing": eps, "loss_type": ["robust"]}, dict(lp),
                   robust)

    v.operator("CPOTrainer.cpo_loss (simpo)", cp.where("CPOTrainer.cpo_loss"),
               "called on a stand-in self: loss_type 'simpo', alpha 0.0 (no AlphaPO); the "
               "inputs are per-token-averaged log-probs, as its concatenated_forward makes them "
               "for 'simpo'; outputs: losses (per pair)")
    v.operator("ORPOTrainer.odds_ratio_loss", op.where("ORPOTrainer.odds_ratio_loss"),
               f"with log1mexp (lines {op.lifted['log1mexp']['lines']}); the inputs are "
               "per-token-averaged log-probs; outputs: losses (per pair, β·log σ(log odds "
               "ratio), ≤ 0)")
    for dtype, dt, rng, _ in seeded(2500, (None,)):
        avg = {k: -(np.abs(grid(rng, 8, 1.0, dt)) + STEP).astype(dt)
               for k in ("policy_chosen_logps", "policy_rejected_logps")}
        avg["policy_chosen_logps"][:2] = [-STEP, -4.0]  # near 0 (log1mexp's other branch), far
        for beta, gamma, eps in ((2.0, 0.5, 0.0), (2.5, 1.25, 0.1), (0.1, 0.5, 0.0)):

            def simpo(avg=avg, beta=beta, gamma=gamma, eps=eps):
                me = types.SimpleNamespace(alpha=0.0, loss_type="simpo", simpo_gamma=gamma,
                                           beta=beta, label_smoothing=eps, accelerator=device)
                losses, _, _ = cpo_loss(me, *(tensor(avg[k]) for k in avg))
                return {"losses": losses}

            v.case("CPOTrainer.cpo_loss (simpo)", f"{dtype} beta={beta} gamma={gamma} eps={eps}",
                   {"beta": beta, "simpo_gamma": gamma, "label_smoothing": eps}, dict(avg), simpo)
        for beta in (0.1, 1.0):

            def odds(avg=avg, beta=beta):
                me = types.SimpleNamespace(beta=beta, accelerator=device)
                losses, *_ = orpo["odds_ratio_loss"](me, *(tensor(avg[k]) for k in avg))
                return {"losses": losses}

            v.case("ORPOTrainer.odds_ratio_loss", f"{dtype} beta={beta}", {"beta": beta},
                   dict(avg), odds)

    v.operator("KTOTrainer._compute_loss (kto)", kto[1],
               "the statements that form the losses, from the summed log-probs of the batch's "
               "desirable (chosen_*) and undesirable (rejected_*) answers and of its mismatched "
               "pairs (KL_logps, ref_KL_logps), on one process; outputs: kl, losses (desirable "
               "then undesirable, each weighted)")
    for dtype, dt, rng, drift in seeded(2600, (1.5, -1.5)):
        n = {"chosen": 5, "rejected": 3}
        inputs = {f"{p}{side}_logps": (grid(rng, n[side], 3.0, dt) - 20.0).astype(dt)
                  for side in n for p in ("", "ref_")}
        # the policy drifted from the reference by about `drift` nats per answer; a negative
        # estimate is clamped at 0
        inputs["ref_KL_logps"] = (grid(rng, 8, 3.0, dt) - 20.0).astype(dt)
        inputs["KL_logps"] = (inputs["ref_KL_logps"] + drift + grid(rng, 8, 0.5, dt)).astype(dt)
        for beta, w_d, w_u in ((0.1, 1.0, 1.0), (0.5, 1.0, 1.33)):

            def run(inputs=inputs, beta=beta, w_d=w_d, w_u=w_u):
                me = types.SimpleNamespace(calculate_KL=True, loss_type="kto", beta=beta,
                                           desirable_weight=w_d, undesirable_weight=w_u,
                                           accelerator=_Accelerator())
                ns = _run(kto, self=me, **{k: tensor(x) for k, x in inputs.items()})
                return {"kl": ns["kl"], "losses": ns["losses"]}

            v.case("KTOTrainer._compute_loss (kto)",
                   f"{dtype} drift={drift} beta={beta} weights={w_d},{w_u}",
                   {"beta": beta, "desirable_weight": w_d, "undesirable_weight": w_u},
                   dict(inputs), run)
    return v


# TRL's DPO loss types beside sigmoid, ipo and robust (above), each with the settings its cases
# run: (label, loss_type, kwargs of the stand-in self and of the case)
_DPO_LOSS_TYPE_SETTINGS = [
    *[(f"beta={b}", t, {"beta": b}) for t in ("hinge", "nca_pair", "bco_pair", "sppo_hard",
                                              "apo_zero", "apo_down") for b in (0.1, 0.5)],
    *[(f"beta={b} eps={e}", "exo_pair", {"beta": b, "label_smoothing": e})
      for b in (0.1, 0.5) for e in (1e-3, 0.1)],
    *[(f"beta={b} eps={e}", t, {"beta": b, "label_smoothing": e})
      for t in ("aot", "aot_unpaired") for b in (0.1, 0.5) for e in (0.0, 0.1)],
    *[(f"beta={b} tau={tau}", "discopop", {"beta": b, "discopop_tau": tau})
      for b in (0.1, 0.5) for tau in (0.05, 0.5)],
    *[(f"beta={b}", "sigmoid_norm", {"beta": b}) for b in (0.1, 0.5)],
    ("beta=0.1", "sft", {"beta": 0.1}),
]


# ---- every other loss_type of the DPO trainer's loop ------------------------------------------
def _dpo_loss_types(pin: Pin, wheel: Path, lib: dict[str, Any]) -> Vectors:
    """Every other loss_type of the DPO trainer's loop at the pinned version (hinge, exo_pair,
    nca_pair, bco_pair, sppo_hard, aot, aot_unpaired, apo_zero, apo_down, discopop,
    sigmoid_norm, sft), one operator each, run by the same statements as sigmoid, ipo and robust
    on the same kind of inputs; several at once (mix); the constructor's exo_pair check."""
    v = Vectors(pin)
    names = ("chosen_logps", "rejected_logps", "ref_chosen_logps", "ref_rejected_logps")
    T = 40  # the longest completion
    for loss_type in dict.fromkeys(t for _, t, _ in _DPO_LOSS_TYPE_SETTINGS):
        v.operator(f"DPOTrainer._compute_loss ({loss_type})", lib["dpo"][1],
                   f"the DPO trainer's loss statements with loss_type ['{loss_type}'], "
                   "f_divergence_type 'reverse_kl', use_weighting False; completion_mask "
                   "[chosen rows; rejected rows] holds each response's length"
                   + ("; per_token_logps and shift_completion_mask [2N, T] are the chosen "
                      "then rejected rows' token log-probs and mask" if loss_type == "sft"
                      else "") + "; outputs: loss")
    for dtype, dt, rng, (label, loss_type, kw) in seeded(3300, _DPO_LOSS_TYPE_SETTINGS):
        lp = sequence_logps(rng, names, dt)
        lp["chosen_logps"][0] += 200  # a margin far above 0
        lp["rejected_logps"][1] += 200  # and one far below (DiscoPOP's e^{−βΔ} overflows)
        lengths = {"chosen_lengths": rng.integers(1, T, 8), "rejected_lengths":
                   rng.integers(1, T, 8)}
        rows = np.concatenate([lengths["chosen_lengths"], lengths["rejected_lengths"]])
        completion_mask = (np.arange(T)[None, :] < rows[:, None]).astype(np.int64)
        inputs = {**lp, **lengths}
        extra: dict[str, Any] = {}
        if loss_type == "sft":
            token_logps = (-np.abs(grid(rng, (16, T), 1.0, dt))).astype(dt)
            inputs = {"per_token_logps": token_logps, "completion_mask": completion_mask}
            extra = {"per_token_logps": tensor(token_logps),
                     "shift_completion_mask": torch.from_numpy(completion_mask)}

        def run(lp=lp, loss_type=loss_type, kw=kw, mask=completion_mask, extra=extra):
            me = types.SimpleNamespace(
                f_divergence_type="reverse_kl", beta=kw["beta"], loss_types=[loss_type],
                loss_weights=[1.0], use_weighting=False,
                label_smoothing=kw.get("label_smoothing", 0.0),
                args=types.SimpleNamespace(discopop_tau=kw.get("discopop_tau", 0.05)))
            ns = _run(lib["dpo"], self=me, device="cpu", completion_mask=torch.from_numpy(mask),
                      **{k: tensor(x) for k, x in lp.items()}, **extra)
            return {"loss": ns["loss"]}

        v.case(f"DPOTrainer._compute_loss ({loss_type})", f"{dtype} {label}",
               {**kw, "loss_type": [loss_type]}, inputs, run)

    # several loss types at once: the sum of their batch means, each times its weight (MPO's
    # mix in DPOConfig's docstring)
    mix, weights = ["sigmoid", "bco_pair", "sft"], [0.8, 0.2, 1.0]
    v.operator("DPOTrainer._compute_loss (mix)", lib["dpo"][1],
               f"the DPO trainer's loss statements with loss_type {mix} and loss_weights "
               f"{weights}; inputs as for sft and sigmoid together; outputs: loss")
    for dtype, dt, rng, beta in seeded(3400, (0.1, 0.5)):
        lp = sequence_logps(rng, names, dt)
        lengths = rng.integers(1, T, 16)
        mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.int64)
        token_logps = (-np.abs(grid(rng, (16, T), 1.0, dt))).astype(dt)

        def run(lp=lp, beta=beta, mask=mask, token_logps=token_logps):
            me = types.SimpleNamespace(f_divergence_type="reverse_kl", beta=beta,
                                       loss_types=mix, loss_weights=weights,
                                       use_weighting=False, label_smoothing=0.0)
            ns = _run(lib["dpo"], self=me, device="cpu", completion_mask=torch.from_numpy(mask),
                      per_token_logps=tensor(token_logps),
                      shift_completion_mask=torch.from_numpy(mask),
                      **{k: tensor(x) for k, x in lp.items()})
            return {"loss": ns["loss"]}

        v.case("DPOTrainer._compute_loss (mix)", f"{dtype} beta={beta}",
               {"beta": beta, "loss_type": mix, "loss_weights": weights},
               {**lp, "per_token_logps": token_logps, "completion_mask": mask}, run)

    # exo_pair at label_smoothing 0 (log ε = −∞): the trainer's constructor refuses it
    check = lib["dp"].statements("DPOTrainer.__init__", 'if "exo_pair" in self.loss_types',
                                 'if "exo_pair" in self.loss_types')
    v.operator("DPOTrainer.__init__ (exo_pair's label_smoothing)", check[1],
               "the constructor's check, run on a stand-in self; outputs: accepted (or raises)")
    for eps in (0.0, 1e-3):

        def accept(eps=eps):
            _run(check, self=types.SimpleNamespace(loss_types=["exo_pair"], label_smoothing=eps))
            return {"accepted": True}

        v.case("DPOTrainer.__init__ (exo_pair's label_smoothing)", f"eps={eps}",
               {"label_smoothing": eps, "loss_type": ["exo_pair"]}, {}, accept)
    return v


# every family of cases, in the order they were written (each seeds its own generators)
FAMILIES = (_grpo_loss_cases, _grpo_advantage_cases, _rloo_advantage_cases, _utils_cases,
            _dpo_sigmoid_reward_cases, _dpo_family, _dpo_loss_types, _defaults, _overlong_cases,
            _off_policy_mask_cases, _vllm_is_cases, _sapo_cases, _gspo_cispo_cases,
            _logprobs_entropy_cases, _high_entropy_mask_cases)


def generate(pin: Pin, wheel: Path) -> dict[str, Any]:
    """Every TRL case, as :class:`peers.collect.Vectors` data: each family's in turn."""
    return gather(pin, wheel, load(pin, wheel), FAMILIES)
