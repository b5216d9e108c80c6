"""TRL's last PPOTrainer (``trl/experimental/ppo/ppo_trainer.py``; removed in TRL 1.13.0): the
version pinned as ``trl_ppo`` in ``pins.toml``, for the PPO chapter's sentences about TRL.

Its formulas sit inside ``PPOTrainer.train``, which generates and runs models, so the exact
statements are lifted (:meth:`peers.lift.Source.statements`; lines in the provenance) and run
with the variables they read: the reward shaping, GAE and whitening after the rollout, and the
value and policy losses of one micro-batch. ``masked_whiten`` is lifted as a function. Responses
are right-padded, as TRL lays them out: ``sequence_lengths[b]`` is the index of row b's last
response token (its EOS).
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .collect import Vectors, tensor
from .defaults import dataclass_fields
from .fetch import Pin
from .inputs import DTYPES, grid
from .lift import Source

# the index of each row's last response token, T = 8: full, shorter, one token, ...
SEQUENCE_LENGTHS = [7, 4, 0, 2, 6, 5]


def load(pin: Pin, wheel: Path) -> dict[str, Any]:
    src = Source(pin, wheel, "trl/experimental/ppo/ppo_trainer.py")
    ns = src.define({"torch": torch}, "masked_mean", "masked_var", "masked_whiten")
    rollout = src.statements("PPOTrainer.train", "response_idxs = torch.arange(",
                             "advantages = torch.masked_fill(advantages, padding_mask, 0)")
    losses = src.statements("PPOTrainer.train", "vpredclipped = torch.clamp(",
                            "pg_loss = masked_mean(pg_loss_max,")
    invalid = src.define({}, "INVALID_LOGPROB")["INVALID_LOGPROB"]
    return {"src": src, **ns, "rollout": rollout, "losses": losses, "INVALID_LOGPROB": invalid}


def generate(pin: Pin, wheel: Path) -> dict[str, Any]:
    """Every TRL 1.12.0 PPO case, as :class:`peers.collect.Vectors` data."""
    f = load(pin, wheel)
    src = f["src"]
    v = Vectors(pin)

    v.operator("masked_whiten", src.where("masked_whiten"),
               f"with masked_mean (lines {src.lifted['masked_mean']['lines']}) and masked_var "
               f"(lines {src.lifted['masked_var']['lines']}); outputs: whitened")
    for dtype, dt in DTYPES.items():
        rng = np.random.default_rng(4000)
        values = (grid(rng, (6, 8), 2.0, dt) + 3.0).astype(dt)
        m = (np.arange(8)[None, :] <= np.array(SEQUENCE_LENGTHS)[:, None]).astype(dt)
        for shift_mean in (True, False):

            def run(values=values, m=m, shift_mean=shift_mean):
                out = f["masked_whiten"](tensor(values), tensor(m), shift_mean=shift_mean)
                return {"whitened": out}

            v.case("masked_whiten", f"{dtype} shift_mean={shift_mean}",
                   {"shift_mean": shift_mean}, {"values": values, "mask": m}, run)

    v.operator(
        "PPOTrainer.train (rewards, GAE, whitening)", f["rollout"][1],
        "the statements after the rollout, run with responses of shape [B, T], "
        "sequence_lengths (index of each row's last response token), logprobs, ref_logprobs, "
        "values, scores and args (kl_coef, kl_estimator, whiten_rewards, gamma, lam); "
        "outputs: rewards, advantages, returns",
    )
    for dtype, dt in DTYPES.items():
        for seed, (estimator, whiten) in enumerate([("k1", False), ("k3", False), ("k1", True)]):
            rng = np.random.default_rng(4100 + seed)
            B, T = len(SEQUENCE_LENGTHS), 8  # batch, response length
            inputs = {
                "sequence_lengths": np.array(SEQUENCE_LENGTHS, np.int64),
                "logprobs": (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt),
                "ref_logprobs": (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt),
                "values": grid(rng, (B, T), 1.0, dt),
                "scores": grid(rng, B, 1.0, dt),
            }
            kwargs = {"kl_coef": 0.05, "kl_estimator": estimator, "whiten_rewards": whiten,
                      "gamma": 1.0, "lam": 0.95}

            def run(inputs=inputs, kwargs=kwargs, B=B, T=T):
                ns = {"torch": torch, "masked_whiten": f["masked_whiten"],
                      "INVALID_LOGPROB": f["INVALID_LOGPROB"], "empty_cache": lambda: None,
                      "args": types.SimpleNamespace(**kwargs),
                      "responses": torch.zeros((B, T), dtype=torch.long),
                      "sequence_lengths": torch.from_numpy(inputs["sequence_lengths"]),
                      **{k: tensor(inputs[k]) for k in ("logprobs", "ref_logprobs", "values",
                                                         "scores")}}
                exec(f["rollout"][0], ns)
                return {k: ns[k] for k in ("rewards", "advantages", "returns")}

            v.case("PPOTrainer.train (rewards, GAE, whitening)",
                   f"{dtype} kl_estimator={estimator} whiten_rewards={whiten}", kwargs, inputs,
                   run)

    v.operator(
        "PPOTrainer.train (value and policy losses)", f["losses"][1],
        "the statements of one micro-batch (all rows), run with vpred, mb_values, mb_return, "
        "new_logprobs, mb_logprobs, mb_advantage and the masks the rollout statements build "
        "(padding_mask: after each row's last response token; padding_mask_p1: one token "
        "later); outputs: vf_loss, pg_loss",
    )
    for dtype, dt in DTYPES.items():
        for seed, (cliprange, cliprange_value) in enumerate([(0.2, 0.2), (0.1, 0.5)]):
            rng = np.random.default_rng(4200 + seed)
            B, T = len(SEQUENCE_LENGTHS), 8  # batch, response length
            idx = np.arange(T)[None, :]
            seq = np.array(SEQUENCE_LENGTHS)[:, None]
            mb_values = grid(rng, (B, T), 1.0, dt)
            old = (grid(rng, (B, T), 1.0, dt) - 2.0).astype(dt)
            inputs = {
                "padding_mask": idx > seq, "padding_mask_p1": idx > seq + 1,
                "vpred": (mb_values + grid(rng, (B, T), 0.5, dt)).astype(dt),
                "mb_values": mb_values, "mb_return": grid(rng, (B, T), 1.0, dt),
                "new_logprobs": (old + grid(rng, (B, T), 0.3, dt)).astype(dt),
                "mb_logprobs": old, "mb_advantage": grid(rng, (B, T), 1.0, dt),
            }
            kwargs = {"cliprange": cliprange, "cliprange_value": cliprange_value}

            def run(inputs=inputs, kwargs=kwargs, B=B):
                ns = {"torch": torch, "masked_mean": f["masked_mean"],
                      "args": types.SimpleNamespace(**kwargs),
                      "micro_batch_inds": np.arange(B),
                      **{k: torch.from_numpy(np.array(x)) for k, x in inputs.items()}}
                exec(f["losses"][0], ns)
                return {"vf_loss": ns["vf_loss"], "pg_loss": ns["pg_loss"]}

            v.case("PPOTrainer.train (value and policy losses)",
                   f"{dtype} cliprange={cliprange} cliprange_value={cliprange_value}", kwargs,
                   inputs, run)

    # ---- the defaults the docstrings state ------------------------------------------------------
    config = Source(pin, wheel, "trl/experimental/ppo/ppo_config.py")
    v.defaults.update(dataclass_fields(config, "PPOConfig", "kl_coef", "kl_estimator",
                                       "cliprange", "cliprange_value", "vf_coef", "gamma", "lam",
                                       "whiten_rewards"))
    return v.data()
