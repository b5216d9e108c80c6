"""The toy RLHF demo: reward terms, hand-written gradients, what training shows, and the CLI."""

from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rl_ops_numpy import (
    aggregate_loss,
    dpo_loss,
    group_advantages,
    rollout_is_weights,
    simpo_loss,
    token_entropy,
    token_logprobs,
)
from rl_ops_numpy.demo import BROWSER_CONFIG, DemoConfig, run
from rl_ops_numpy.demo.__main__ import fifths, main
from rl_ops_numpy.demo.common import _Logger
from rl_ops_numpy.demo.config import GRPO_VARIANTS, Variant
from rl_ops_numpy.demo.dpo import dpo_loss_and_grads, simpo_loss_and_grads
from rl_ops_numpy.demo.grpo import grpo_loss_and_grads, train_grpo
from rl_ops_numpy.demo.model import EOS, FIRST_LETTER, PAD, Batch, TinyLM, ValueHead, decode
from rl_ops_numpy.demo.ppo import policy_loss_and_grads, value_loss_and_grads
from rl_ops_numpy.demo.reward import (
    alternation_term,
    diversity_term,
    length_term,
    repeat_penalty,
    reward_terms,
    score,
    short_penalty,
)
from rl_ops_numpy.demo.sft import sft_loss_and_grads, train_sft
from rl_ops_numpy.grpo import LOSS_AGG_MODES

ROOT = Path(__file__).resolve().parent.parent
# a run small enough to repeat: every phase and every run beside GRPO, a few logging steps each
TINY = DemoConfig.browser(
    sft_steps=10, ppo_steps=10, dpo_steps=10, grpo_steps=10, grpo_variants=True
)
TINY_FLAGS = [
    "--browser",
    "--grpo-variants",
    *[f"--{p}-steps=10" for p in ("sft", "ppo", "dpo", "grpo")],
]
PHASES = ["sft", "ppo", "dpo", "simpo", "grpo", *GRPO_VARIANTS]


# ---------------------------------------------------------------------------------------------
# Reward model: each term, and the weighted sum
# ---------------------------------------------------------------------------------------------


def test_length_term_peaks_at_15_letters():
    assert length_term("a" * 15) == 1.0
    assert length_term("a" * 10) == pytest.approx(math.exp(-0.5))
    assert length_term("a" * 20) == length_term("a" * 10)
    assert length_term("a" * 5) == pytest.approx(math.exp(-2))
    rising = [length_term("a" * n) for n in range(16)]
    assert rising == sorted(rising)


# each term's value on a few words: diversity is distinct letters over letters, alternation the
# share of vowel/consonant flips between neighbours, repeat the share of doubled neighbours
TERM_VALUES = [
    (diversity_term, "abc", 1.0),
    (diversity_term, "aaaa", 0.25),
    (diversity_term, "banana", 0.5),
    (diversity_term, "", 0.0),
    (alternation_term, "banana", 1.0),
    (alternation_term, "strength", pytest.approx(2 / 7)),
    (alternation_term, "aeiou", 0.0),
    (alternation_term, "a", 0.0),
    (repeat_penalty, "aaaa", 1.0),
    (repeat_penalty, "book", pytest.approx(1 / 3)),
    (repeat_penalty, "abab", 0.0),
    (repeat_penalty, "a", 0.0),
]


@pytest.mark.parametrize(
    ("term", "word", "expected"),
    TERM_VALUES,
    ids=[f"{term.__name__}({word!r})" for term, word, _ in TERM_VALUES],
)
def test_term_value(term, word, expected):
    assert term(word) == expected


def test_short_penalty_ramps_below_five_letters():
    assert [short_penalty("a" * n) for n in range(7)] == [1.0, 0.8, 0.6, 0.4, 0.2, 0.0, 0.0]


def test_score_is_the_documented_weighted_sum():
    t = reward_terms("bookkeeper")
    expected = t["length"] + t["diversity"] + t["alternation"] - t["short"] - t["repeat"]
    assert score("bookkeeper") == pytest.approx(expected)
    # what PPO learns to write beats what SFT babbles
    assert score("tobanemilukase") > 2.5 > 0 > score("gg")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", max_size=30))
def test_every_term_in_unit_interval_and_score_in_range(word):
    assert all(0.0 <= v <= 1.0 for v in reward_terms(word).values())
    assert -2.0 <= score(word) <= 3.0


# ---------------------------------------------------------------------------------------------
# The toy model
# ---------------------------------------------------------------------------------------------


def _random_model(seed: int, max_len: int = 4, scale: float = 0.7) -> TinyLM:
    rng = np.random.default_rng(seed)
    model = TinyLM(max_len)
    for p in model.params.values():
        p[...] = rng.normal(0.0, scale, p.shape)
    return model


def test_sampling_writes_letters_then_eos_within_max_len():
    model = _random_model(0, max_len=6)
    batch = model.sample(np.arange(FIRST_LETTER, FIRST_LETTER + 26), np.random.default_rng(1))
    B, T = batch.actions.shape  # words, response slots
    assert (B, T) == (26, 6)
    lengths = batch.mask.sum(axis=1).astype(int)
    for row, n in zip(batch.actions, lengths, strict=True):
        assert row[n - 1] == EOS  # every response ends with EOS ...
        assert (row[: n - 1] >= FIRST_LETTER).all()  # ... after letters only
        assert (row[n:] == PAD).all()
    assert [w[0] for w in batch.words()] == list("abcdefghijklmnopqrstuvwxyz")
    lp, logp = model.token_logprobs(batch)
    assert np.allclose(np.exp(logp).sum(-1), 1.0)
    assert np.isfinite(lp).all() and (lp <= 0).all()


def test_teacher_forcing_batch_of_words():
    batch = Batch.from_words(["ab", "c"], max_len=3)
    assert batch.prev.tolist() == [[1, 4, 5, 0], [1, 6, 0, 0]]
    assert batch.actions.tolist() == [[4, 5, EOS, 0], [6, EOS, 0, 0]]
    assert batch.mask.tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]
    assert [decode(a) for a in batch.actions] == ["ab", "c"]


def test_sampling_returns_the_log_probs_it_drew_with():
    model = _random_model(10, max_len=6)
    prompts = np.arange(FIRST_LETTER, FIRST_LETTER + 26)
    batch = model.sample(prompts, np.random.default_rng(3), 0.8)
    lp, _ = model.token_logprobs(batch, 0.8)
    np.testing.assert_allclose(batch.logprobs, lp, rtol=0, atol=1e-12)
    # σ = 0 draws no noise: the same words, whatever the noise generator
    again = model.sample(
        prompts, np.random.default_rng(3), 0.8, logit_noise=0.0, noise_rng=np.random.default_rng(9)
    )
    assert again.words() == batch.words()
    assert batch.take(np.array([2, 0])).logprobs.tolist() == batch.logprobs[[2, 0]].tolist()


def test_a_perturbed_sampler_draws_from_its_own_distribution():
    # the rollout log-probs are those of softmax((z + ε)/τ), not the model's: replay the noise
    model = _random_model(11, max_len=6)
    prompts = np.repeat(np.arange(FIRST_LETTER, FIRST_LETTER + 26), 8)
    tau, sigma = 0.8, 0.5
    batch = model.sample(
        prompts, np.random.default_rng(4), tau, logit_noise=sigma,
        noise_rng=np.random.default_rng(5),
    )
    noise = np.random.default_rng(5)
    B, T = batch.actions.shape
    expected = np.zeros((B, T))
    for t in range(T):
        if not batch.mask[:, t].any():
            break
        logp = model.log_probs(batch.prev[:, t], batch.pos[:, t], tau)  # [B, V]
        eps = sigma * noise.standard_normal(logp.shape)
        mu = logp + eps / tau
        mu = mu - np.logaddexp.reduce(mu, axis=1, keepdims=True)
        expected[:, t] = mu[np.arange(B), batch.actions[:, t]] * batch.mask[:, t]
    np.testing.assert_allclose(batch.logprobs, expected, atol=1e-9)
    train_lp, _ = model.token_logprobs(batch, tau)
    m = batch.mask == 1
    assert not np.allclose(batch.logprobs[m], train_lp[m])
    # KL(μ ‖ π) per word, estimated on μ's words, is positive
    assert ((batch.logprobs - train_lp) * batch.mask).sum(axis=1).mean() > 0
    with pytest.raises(ValueError, match="noise_rng"):
        model.sample(prompts, np.random.default_rng(4), logit_noise=0.1)


# ---------------------------------------------------------------------------------------------
# Hand-written gradients against central finite differences of the operators' losses
# ---------------------------------------------------------------------------------------------


def _numeric_grad(loss, params: dict[str, np.ndarray], h: float = 1e-6) -> dict[str, np.ndarray]:
    """(f(θ + h e_i) − f(θ − h e_i)) / 2h for every entry of every parameter."""
    grads = {}
    for name, arr in params.items():
        g = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            keep = arr[i]
            arr[i] = keep + h
            up = loss()
            arr[i] = keep - h
            down = loss()
            arr[i] = keep
            g[i] = (up - down) / (2 * h)
        grads[name] = g
    return grads


def _assert_grads_match(analytic, numeric):
    for name in numeric:
        assert np.abs(numeric[name]).max() > 0, f"{name}: the check touches no gradient"
        np.testing.assert_allclose(analytic[name], numeric[name], rtol=1e-5, atol=1e-8)


def test_sft_cross_entropy_gradient():
    model = _random_model(1)
    batch = Batch.from_words(["ab", "zoo", "", "tree"], max_len=4)
    _, grads = sft_loss_and_grads(model, batch, temperature=0.7)
    numeric = _numeric_grad(lambda: sft_loss_and_grads(model, batch, 0.7)[0], model.params)
    _assert_grads_match(grads, numeric)


def test_policy_surrogate_gradient_with_clipping_active():
    rng = np.random.default_rng(2)
    model, old = _random_model(2), _random_model(3)
    batch = model.sample(rng.integers(FIRST_LETTER, 30, 12), rng)
    old_lp, _ = old.token_logprobs(batch, 0.8)
    new_lp, _ = model.token_logprobs(batch, 0.8)
    adv = rng.normal(size=batch.mask.shape) * batch.mask
    _, grads, clipfrac = policy_loss_and_grads(model, batch, old_lp, adv, 0.2, 0.8)
    # both branches of the max are exercised: some tokens clipped, some not
    ratio = np.exp(new_lp - old_lp)[batch.mask == 1]
    assert 0 < clipfrac < 1 and (np.abs(ratio - 1) < 0.2).any()
    numeric = _numeric_grad(
        lambda: policy_loss_and_grads(model, batch, old_lp, adv, 0.2, 0.8)[0], model.params
    )
    _assert_grads_match(grads, numeric)


def test_value_clipped_loss_gradient_with_clipping_active():
    rng = np.random.default_rng(4)
    batch = _random_model(4).sample(rng.integers(FIRST_LETTER, 30, 12), rng)
    critic = ValueHead(4)
    for p in critic.params.values():
        p[...] = rng.normal(0.0, 1.0, p.shape)
    v = critic.values(batch)
    old_v = v + rng.normal(0.0, 0.3, v.shape)  # some within ε_v = 0.2 of V, some beyond
    returns = v + rng.normal(0.0, 1.0, v.shape)
    _, grads = value_loss_and_grads(critic, batch, old_v, returns, 0.2)
    numeric = _numeric_grad(
        lambda: value_loss_and_grads(critic, batch, old_v, returns, 0.2)[0], critic.params
    )
    _assert_grads_match(grads, numeric)


def test_dpo_gradient_and_margin():
    rng = np.random.default_rng(5)
    model, ref = _random_model(5), _random_model(6)
    prompts = rng.integers(FIRST_LETTER, 30, 8)
    chosen, rejected = model.sample(prompts, rng), model.sample(prompts, rng)
    ref_w = ref.token_logprobs(chosen)[0].sum(axis=1)
    ref_l = ref.token_logprobs(rejected)[0].sum(axis=1)
    loss, grads, margin = dpo_loss_and_grads(model, chosen, rejected, ref_w, ref_l, beta=0.5)
    numeric = _numeric_grad(
        lambda: dpo_loss_and_grads(model, chosen, rejected, ref_w, ref_l, 0.5)[0], model.params
    )
    _assert_grads_match(grads, numeric)
    # the margin the demo logs is the z of dpo_loss = −log σ(z), pair by pair
    assert np.ptp(margin) > 0.1
    per_pair = dpo_loss(
        model.token_logprobs(chosen)[0].sum(axis=1),
        model.token_logprobs(rejected)[0].sum(axis=1),
        ref_w, ref_l, 0.5,
    )
    np.testing.assert_allclose(per_pair, np.logaddexp(0.0, -margin), rtol=1e-12)
    assert loss == pytest.approx(per_pair.mean(), rel=1e-15)


def test_simpo_gradient_and_margin_on_mean_token_logprobs():
    rng = np.random.default_rng(5)
    model = _random_model(5)
    prompts = rng.integers(FIRST_LETTER, 30, 8)
    chosen, rejected = model.sample(prompts, rng), model.sample(prompts, rng)
    assert np.ptp(chosen.mask.sum(axis=1)) > 0  # words of several lengths
    loss, grads, margin = simpo_loss_and_grads(model, chosen, rejected, beta=2.0, gamma=1.0)
    numeric = _numeric_grad(
        lambda: simpo_loss_and_grads(model, chosen, rejected, 2.0, 1.0)[0], model.params
    )
    _assert_grads_match(grads, numeric)
    # the margin the demo logs is β·(mean log π(y_w) − mean log π(y_l)); the loss −log σ(z − γ)
    avg = lambda b: model.token_logprobs(b)[0].sum(axis=1) / b.mask.sum(axis=1)  # noqa: E731
    np.testing.assert_allclose(margin, 2.0 * (avg(chosen) - avg(rejected)), rtol=1e-12)
    per_pair = simpo_loss(avg(chosen), avg(rejected), 2.0, 1.0)
    np.testing.assert_allclose(per_pair, np.logaddexp(0.0, -(margin - 1.0)), rtol=1e-12)
    assert loss == pytest.approx(per_pair.mean(), rel=1e-15)


def test_grpo_gradient_with_clipping_kl_and_every_aggregation():
    rng = np.random.default_rng(7)
    model, old, ref = _random_model(7), _random_model(8), _random_model(9)
    batch = model.sample(np.repeat(rng.integers(FIRST_LETTER, 30, 3), 4), rng)
    old_lp, _ = old.token_logprobs(batch)
    ref_lp, _ = ref.token_logprobs(batch)
    new_lp, _ = model.token_logprobs(batch)
    adv = group_advantages(rng.normal(size=12), 4)  # [N], one per word
    # both branches of the max are exercised: some tokens clipped, some not
    ratio = np.exp(new_lp - old_lp)[batch.mask == 1]
    assert (np.abs(ratio - 1) > 0.2).any() and (np.abs(ratio - 1) < 0.2).any()
    for mode in LOSS_AGG_MODES:
        cfg = DemoConfig(max_len=4, temperature=1.0, grpo_beta=0.3, grpo_loss_agg_mode=mode)
        _, grads, _ = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg)
        numeric = _numeric_grad(
            lambda cfg=cfg: grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg)[0],
            model.params,
        )
        _assert_grads_match(grads, numeric)


def _grpo_batch(seed: int):
    """A model, a group-sampled batch, and old / reference / rollout log-probs far enough from
    the model's that clipping and truncation are both active."""
    rng = np.random.default_rng(seed)
    model, old, ref = _random_model(seed), _random_model(seed + 1), _random_model(seed + 2)
    batch = model.sample(np.repeat(rng.integers(FIRST_LETTER, 30, 3), 4), rng)
    old_lp, _ = old.token_logprobs(batch)
    ref_lp, _ = ref.token_logprobs(batch)
    rollout_lp = old_lp + rng.normal(0.0, 1.0, old_lp.shape) * batch.mask
    adv = group_advantages(rng.normal(size=12), 4)  # [N], one per word
    return model, batch, old_lp, ref_lp, rollout_lp, adv


def _tis(old_lp, rollout_lp, mask):
    """The TIS weights the demo uses (C = 2), checked to be both truncated and not somewhere."""
    w = rollout_is_weights(old_lp, rollout_lp, mask, threshold=2.0)
    assert (w == 2.0).any() and ((w > 0) & (w < 2.0)).any()
    return w


@pytest.mark.parametrize("mode", LOSS_AGG_MODES)
def test_grpo_with_tis_weights_gradient(mode):
    model, batch, old_lp, ref_lp, rollout_lp, adv = _grpo_batch(13)
    new_lp, _ = model.token_logprobs(batch)
    ratio = np.exp(new_lp - old_lp)[batch.mask == 1]
    assert (np.abs(ratio - 1) > 0.2).any() and (np.abs(ratio - 1) < 0.2).any()
    w = _tis(old_lp, rollout_lp, batch.mask)  # constants: some truncated, some not
    cfg = DemoConfig(max_len=4, grpo_beta=0.3, grpo_loss_agg_mode=mode)
    _, grads, _ = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "grpo", w)
    numeric = _numeric_grad(
        lambda: grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "grpo", w)[0],
        model.params,
    )
    _assert_grads_match(grads, numeric)


def _surrogate(ratio, adv, low, high):
    """Per token max(−Â r, −Â clip(r, 1 − low, 1 + high)), as the libraries write it."""
    return np.maximum(-adv * ratio, -adv * np.clip(ratio, 1 - low, 1 + high))


@pytest.mark.parametrize("mode", LOSS_AGG_MODES)
def test_tis_weighted_grpo_is_verls_weighted_per_token_loss(mode):
    # verl multiplies each token's clipped term by its weight, then adds β·k3 unweighted; the
    # demo passes the advantages w·Â to grpo_policy_loss instead (equal for w ≥ 0)
    model, batch, old_lp, ref_lp, rollout_lp, adv = _grpo_batch(14)
    m = batch.mask
    w = _tis(old_lp, rollout_lp, m)
    new_lp, _ = model.token_logprobs(batch)
    cfg = DemoConfig(max_len=4, grpo_beta=0.3, grpo_loss_agg_mode=mode)
    loss, _, clipfrac = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "grpo", w)
    pg = w * _surrogate(np.exp(new_lp - old_lp), adv[:, None], 0.2, 0.2)
    k3 = np.exp(ref_lp - new_lp) - (ref_lp - new_lp) - 1
    assert loss == pytest.approx(aggregate_loss(pg + 0.3 * k3, m, mode), rel=1e-12, abs=1e-15)
    # weights leave the clip fraction alone: it is GRPO's on the same tokens
    assert clipfrac == grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg)[2] > 0
    # unit weights give GRPO's own loss
    unit = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "grpo", m)[0]
    assert unit == grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg)[0]


def _gspo_cfg(**overrides) -> DemoConfig:
    # ε = 0.3: some words clipped (on their advantage's side), some not
    return DemoConfig(max_len=4, grpo_beta=0.3, gspo_clip_low=0.3, gspo_clip_high=0.3, **overrides)


def test_gspo_gradient_with_clipping_active():
    model, batch, old_lp, ref_lp, _, adv = _grpo_batch(15)
    new_lp, _ = model.token_logprobs(batch)
    m = batch.mask
    s = np.exp(((new_lp - old_lp) * m).sum(1) / m.sum(1))  # [N] the sequence ratios
    clipped = ((adv > 0) & (s > 1.3)) | ((adv < 0) & (s < 0.7))
    assert clipped.any() and (~clipped & (adv != 0)).any()
    cfg = _gspo_cfg()
    _, grads, _ = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "gspo")
    # the aggregation weighs a word's tokens alike, so the stop-gradient form's gradient is the
    # gradient of the sequence-level value: finite differences of the value check it
    numeric = _numeric_grad(
        lambda: grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "gspo")[0],
        model.params,
    )
    _assert_grads_match(grads, numeric)


def test_gspo_gradient_is_the_stop_gradient_forms_with_per_token_weights():
    # per-token weights break the equality above: the gradient is that of
    # Σ ω w max(−A r, −A clip(r)) + β·k3, r_t = sg[s]·π_θ(a_t)/sg[π_θ(a_t)], s frozen at θ₀
    model, batch, old_lp, ref_lp, rollout_lp, adv = _grpo_batch(16)
    m = batch.mask
    w = _tis(old_lp, rollout_lp, m)
    cfg = _gspo_cfg()
    _, grads, _ = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "gspo", w)
    new_lp, logp = model.token_logprobs(batch)
    s = np.exp(((new_lp - old_lp) * m).sum(1, keepdims=True) / m.sum(1, keepdims=True))
    clipped = ((adv[:, None] > 0) & (s > 1.3)) | ((adv[:, None] < 0) & (s < 0.7))
    assert clipped.any() and (~clipped).any()

    def surrogate(lp):
        r = s * np.exp(lp - new_lp)
        k3 = np.exp(ref_lp - lp) - (ref_lp - lp) - 1
        per_token = w * _surrogate(r, adv[:, None], 0.3, 0.3) + 0.3 * k3
        return aggregate_loss(per_token, m, "seq-mean-token-mean")

    grad_lp = _numeric_grad(lambda: surrogate(lp), {"lp": (lp := new_lp.copy())})["lp"]
    _assert_grads_match(grads, model.backward(batch, logp, grad_lp))


def test_gspo_value_is_the_clipped_sequence_ratio_per_word_plus_k3():
    # the value by its definition: each word's clipped term at s_b, seq-mean-token-mean
    model, batch, old_lp, ref_lp, _, adv = _grpo_batch(17)
    m = batch.mask
    new_lp, _ = model.token_logprobs(batch)
    cfg = _gspo_cfg()
    loss, _, clipfrac = grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, cfg, "gspo")
    s = np.exp(((new_lp - old_lp) * m).sum(1) / m.sum(1))  # [N]
    k3 = np.exp(ref_lp - new_lp) - (ref_lp - new_lp) - 1
    per_word = _surrogate(s, adv, 0.3, 0.3) + 0.3 * (k3 * m).sum(1) / m.sum(1)
    assert loss == pytest.approx(per_word.mean(), rel=1e-12)
    # every token of a word counts as clipped with its word
    outside = (s < 0.7) | (s > 1.3)
    assert clipfrac == pytest.approx((outside * m.sum(1)).sum() / m.sum())


def test_the_models_forward_is_the_references_on_its_own_rollout():
    # the demo needs the model's whole log-distribution for its backward pass; what it reads of
    # it is what the package's operators give on the model's logits
    model = _random_model(21, max_len=6)
    tau = 0.8
    batch = model.sample(np.arange(FIRST_LETTER, FIRST_LETTER + 26), np.random.default_rng(2), tau)
    lp, logp = model.token_logprobs(batch, tau)
    logits = model.logits(batch.prev, batch.pos)  # [B, T, V]
    np.testing.assert_array_equal(
        lp, token_logprobs(logits, batch.actions, temperature=tau) * batch.mask
    )
    # log π as logits is π itself: the demo's entropy, token_entropy(log π), is the logits'
    np.testing.assert_allclose(
        token_entropy(logp), token_entropy(logits, temperature=tau), rtol=1e-12, atol=1e-15
    )


def test_the_runs_beside_grpo_change_one_thing_each():
    assert GRPO_VARIANTS == {
        "gspo": Variant(loss="gspo"),
        "grpo_mismatch": Variant(mismatch=True),
        "grpo_tis": Variant(mismatch=True, tis=True),
    }
    with pytest.raises(ValueError, match="'grpo' or 'gspo'"):
        model, batch, old_lp, ref_lp, _, adv = _grpo_batch(19)
        grpo_loss_and_grads(model, batch, old_lp, adv, ref_lp, DemoConfig(max_len=4), "cispo")


# ---------------------------------------------------------------------------------------------
# What training shows, on the CLI default and on the browser configuration (fixed seed)
# ---------------------------------------------------------------------------------------------


@functools.cache
def _run(name: str) -> dict:
    """The run of the CLI default ("default") or of the browser's configuration with the runs
    beside GRPO (the page's box ticked; its other phases are those of BROWSER_CONFIG), once."""
    return run(DemoConfig() if name == "default" else replace(BROWSER_CONFIG, grpo_variants=True))


@pytest.fixture(scope="module", params=["default", "browser"])
def trained(request) -> dict:
    return _run(request.param)


@pytest.mark.parametrize("phase", ["ppo", "grpo", "grpo_mismatch", "grpo_tis"])
def test_ppo_and_grpo_raise_the_reward_model_score(trained, phase):
    first, last = fifths(trained[phase]["rm_score"])
    # 0.5 is a tenth of the score's range [−2, 3] and ten times the noise of a logged point
    # (each averages 5 batches of ≥ 48 words whose scores spread with σ ≈ 0.7: σ/√240 ≈ 0.05);
    # seed 0 measures, PPO: 1.78 → 2.67 (default), 1.25 → 2.50 (browser); GRPO: 1.6 → 2.6, 1.2 → 2.4
    assert last - first > 0.5
    assert trained["eval"][phase]["rm_score"] > trained["eval"]["sft"]["rm_score"] + 1.0


@pytest.mark.parametrize("phase", ["ppo", "grpo"])
def test_ppo_and_grpo_move_away_from_the_reference_and_lose_entropy(trained, phase):
    kl, kl_k3 = trained[phase]["kl"], trained[phase]["kl_k3"]
    assert np.isfinite(kl).all() and np.isfinite(kl_k3).all()
    assert np.mean(kl) > 0
    assert min(kl_k3) >= 0  # k3 is ≥ 0 token by token
    first, last = fifths(kl)
    assert last > first  # the policy moves away from the reference as it learns
    h_first, h_last = fifths(trained[phase]["entropy"])
    assert h_last < h_first - 0.1


def test_grpo_counts_its_groups_without_signal(trained):
    # groups whose words all score the same carry no signal; the share is a probability
    for phase in ["grpo", *GRPO_VARIANTS]:
        assert all(0.0 <= x <= 1.0 for x in trained[phase]["flat_groups"])


def test_the_runs_beside_grpo_share_its_first_rollout():
    # same SFT model, same seed: the first rollout is drawn before any update, so GSPO's is
    # GRPO's, and the two mismatch runs (same noise) share theirs
    result = run(replace(TINY, log_every=1))
    assert result["gspo"]["rm_score"][0] == result["grpo"]["rm_score"][0]
    assert result["gspo"]["kl"][0] == result["grpo"]["kl"][0]
    assert result["grpo_mismatch"]["rm_score"][0] == result["grpo_tis"]["rm_score"][0]


def test_the_mismatch_runs_log_a_positive_rollout_kl_and_a_truncated_share(trained):
    for phase in ("grpo_mismatch", "grpo_tis"):
        kl, cut = trained[phase]["rollout_kl"], trained[phase]["tis_truncated"]
        assert np.mean(kl) > 0 and all(0.0 <= x < 1.0 for x in cut)
    assert "rollout_kl" not in trained["grpo"] and "rollout_kl" not in trained["gspo"]


def test_no_rollout_noise_no_mismatch():
    result = run(replace(TINY, rollout_noise=0.0))
    assert result["grpo_mismatch"]["rm_score"] == result["grpo"]["rm_score"]
    assert max(map(abs, result["grpo_mismatch"]["rollout_kl"])) < 1e-9
    assert max(result["grpo_tis"]["tis_truncated"]) == 0.0


def test_what_the_demo_page_says_of_grpo_next_to_ppo_holds_for_the_sample_run():
    # docs/s21/demo.*.md, "GRPO next to PPO", of the default run the site shows (seed 0)
    result = _run("default")
    ppo, grpo = result["ppo"], result["grpo"]
    # "ends within 0.1 of it"
    assert abs(fifths(grpo["rm_score"])[1] - fifths(ppo["rm_score"])[1]) < 0.1
    assert abs(result["eval"]["grpo"]["rm_score"] - result["eval"]["ppo"]["rm_score"]) < 0.1
    # "further from the reference and with less entropy"
    assert fifths(grpo["kl"])[1] > fifths(ppo["kl"])[1]
    assert fifths(grpo["entropy"])[1] < fifths(ppo["entropy"])[1]
    # "With β = 0.01 … entropy below 0.3 nats … more than a third of the groups … same score"
    cfg = DemoConfig(grpo_beta=0.01)
    seq_sft, *_, seq_grpo = np.random.SeedSequence(cfg.seed).spawn(6)
    sft = train_sft(cfg, np.random.default_rng(seq_sft), _Logger("sft", 1, 1, {}, None))
    low: dict = {}
    train_grpo(cfg, sft, np.random.default_rng(seq_grpo), _Logger("grpo", 200, 5, low, None))
    assert fifths(low["entropy"])[1] < 0.3
    assert fifths(low["flat_groups"])[1] > 1 / 3


def test_what_the_demo_page_says_of_gspo_next_to_grpo_holds_for_the_sample_run():
    # docs/s21/demo.*.md, "GSPO next to GRPO", of the default run the site shows (seed 0)
    result = _run("default")
    grpo, gspo = result["grpo"], result["gspo"]
    # "GSPO learns far more slowly: its reward-model score ends at {{ demo.gspo.rm_score }} …,
    # GRPO's at {{ demo.grpo.rm_score }}" (the build writes the sample run's numbers)
    assert fifths(gspo["rm_score"])[1] < fifths(grpo["rm_score"])[1] - 0.5
    # "its words stay about 7 letters long where GRPO's are about 14"
    assert 6.5 < result["eval"]["gspo"]["length"] < 7.5
    assert 13.5 < result["eval"]["grpo"]["length"] < 14.5
    # "More than four in five of GSPO's tokens lie outside it at every logged point, against at
    # most 7% of GRPO's"
    assert min(gspo["clipfrac"]) > 0.8 and max(grpo["clipfrac"]) < 0.07
    # "eight Adam steps ... The first is taken at s = 1; the seven after it find almost every
    # word outside the bounds": the first finds none, so the seven average over 0.8 · 8/7 > 0.9
    cfg = DemoConfig()
    assert cfg.ppo_epochs * cfg.ppo_minibatches == 8 and cfg.grpo_lr == 0.02
    assert min(gspo["clipfrac"]) * 8 / 7 > 0.9
    # "With GRPO's bounds on s (0.2 each side) the same run ends within 0.05 of GRPO"
    wide = replace(cfg, gspo_clip_low=0.2, gspo_clip_high=0.2)
    seq_sft, *_, seq_grpo, _ = np.random.SeedSequence(cfg.seed).spawn(7)
    sft = train_sft(wide, np.random.default_rng(seq_sft), _Logger("sft", 1, 1, {}, None))
    log: dict = {}
    train_grpo(
        wide, sft, np.random.default_rng(seq_grpo), _Logger("gspo", 200, 5, log, None),
        GRPO_VARIANTS["gspo"],
    )
    assert abs(fifths(log["rm_score"])[1] - fifths(grpo["rm_score"])[1]) < 0.05


def _mismatch_runs(cfg: DemoConfig) -> dict[str, dict]:
    """The two mismatch runs of ``cfg`` alone (no PPO, DPO or GSPO), as run() makes them."""
    seq_sft, *_, seq_grpo, seq_noise = np.random.SeedSequence(cfg.seed).spawn(7)
    sft = train_sft(cfg, np.random.default_rng(seq_sft), _Logger("sft", 1, 1, {}, None))
    logs: dict[str, dict] = {}
    for name in ("grpo_mismatch", "grpo_tis"):
        logs[name] = {}
        train_grpo(
            cfg, sft, np.random.default_rng(seq_grpo),
            _Logger(name, cfg.grpo_steps, cfg.log_every, logs[name], None),
            GRPO_VARIANTS[name], np.random.default_rng(seq_noise),
        )
    return logs


def test_what_the_demo_page_says_of_the_rollout_mismatch_holds_for_the_sample_run():
    # docs/s21/demo.*.md, "Rollout/training mismatch, without and with TIS" (seed 0)
    result = _run("default")
    grpo, plain, tis = result["grpo"], result["grpo_mismatch"], result["grpo_tis"]
    # "σ = 0.3 … C = 2"; "0.3 is about what rounding a logit between 8 and 16 to fp8 (e4m3) adds:
    # the grid there has spacing 1 … 1/√12 ≈ 0.29; bf16's spacing there is 1/16 (0.018)"
    cfg = DemoConfig()
    assert cfg.rollout_noise == 0.3 and cfg.tis_threshold == 2.0
    e4m3 = [8 * (1 + k / 8) for k in range(8)]  # 3 mantissa bits between 8 and 16
    assert np.diff(e4m3).tolist() == [1.0] * 7 and f"{1 / math.sqrt(12):.2f}" == "0.29"
    assert f"{8 * 2**-7 / math.sqrt(12):.3f}" == "0.018"  # 7 mantissa bits, spacing 8/128
    # "KL(π_rollout ‖ π_train) stays below 0.5 nats per word at every logged point, against the
    # 40 nats that separate GRPO from its reference by the end"
    assert max(plain["rollout_kl"] + tis["rollout_kl"]) < 0.5
    assert 39 < fifths(grpo["kl"])[1] < 41
    # "fewer than 1% of the tokens have a weight above C"
    assert max(plain["tis_truncated"] + tis["tis_truncated"]) < 0.01
    # "The score barely notices it, and TIS does not improve on no correction: the last fifth's
    # score is {{ demo.grpo.rm_score }} for GRPO, {{ … }} uncorrected, {{ … }} with TIS"
    g, p, t = (fifths(r["rm_score"])[1] for r in (grpo, plain, tis))
    assert abs(g - p) < 0.1 and abs(g - t) < 0.1 and t <= p + 0.01
    # "With --rollout-noise 1 the KL reaches about 4 nats per word, 8% of the weights exceed C,
    # and the uncorrected run ends at 2.49, the TIS run at 2.41"
    loud = _mismatch_runs(replace(cfg, rollout_noise=1.0))
    for log in loud.values():
        assert 3.5 < fifths(log["rollout_kl"])[1] < 4.5
        assert 0.07 < fifths(log["tis_truncated"])[1] < 0.09
    assert f"{fifths(loud['grpo_mismatch']['rm_score'])[1]:.2f}" == "2.49"
    assert f"{fifths(loud['grpo_tis']['rm_score'])[1]:.2f}" == "2.41"


def test_dpo_widens_the_margin_and_lowers_the_loss(trained):
    m_first, m_last = fifths(trained["dpo"]["margin"])
    l_first, l_last = fifths(trained["dpo"]["loss"])
    assert m_last > m_first + 0.3
    assert l_last < l_first
    assert trained["dpo"]["loss"][0] < math.log(2)  # it starts at ln 2 (margin 0) and falls
    assert trained["eval"]["dpo"]["rm_score"] > trained["eval"]["sft"]["rm_score"]


def test_simpo_on_dpos_pairs_widens_its_margin_with_no_reference_model(trained):
    m_first, m_last = fifths(trained["simpo"]["margin"])
    l_first, l_last = fifths(trained["simpo"]["loss"])
    assert m_last > m_first + 0.3
    assert l_last < l_first
    # it starts below its target γ (= β · 0.5 here): the loss is above ln 2 until the margin
    # passes γ
    assert trained["simpo"]["loss"][0] > math.log(2)
    assert trained["eval"]["simpo"]["rm_score"] > trained["eval"]["sft"]["rm_score"]


# ---------------------------------------------------------------------------------------------
# Reproducibility and the Python API the browser worker uses
# ---------------------------------------------------------------------------------------------


def test_same_seed_same_numbers_other_seed_other_numbers():
    a, b = json.dumps(run(TINY)), json.dumps(run(TINY))
    assert a == b
    c = json.dumps(run(DemoConfig.from_dict({**TINY.to_dict(), "seed": 1})))
    assert c != a


def test_on_log_streams_every_logged_point():
    calls = []
    result = run(TINY.to_dict(), on_log=lambda *args: calls.append(args))
    phases = [c[0] for c in calls]
    assert phases == sorted(phases, key=PHASES.index)
    for phase in PHASES:
        mine = [c for c in calls if c[0] == phase]
        assert [c[1] for c in mine] == result[phase]["step"]
        assert mine[-1][1] == mine[-1][2] == 10
        for key, values in result[phase].items():
            if key != "step":
                assert [c[3][key] for c in mine] == values


def test_config_from_dict_rejects_unknown_fields():
    with pytest.raises(ValueError, match="ppo_stepz"):
        DemoConfig.from_dict({"ppo_stepz": 3})


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def test_cli_json_has_the_documented_structure(tmp_path, capsys):
    path = tmp_path / "metrics.json"
    assert main([*TINY_FLAGS, "--json", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "[PPO] " in err and "10/10" in err  # progress bar on stderr
    assert "rm_score" in out and "margin" in out  # tables on stdout
    data = json.loads(path.read_text())
    n = 2  # 10 steps, logged every 5
    documented = {
        "ppo": ["rm_score", "kl", "entropy"],
        "dpo": ["margin", "loss"],
        "simpo": ["margin", "loss"],
        "grpo": ["rm_score", "kl", "entropy", "clipfrac"],
        "gspo": ["rm_score", "kl", "entropy", "clipfrac"],
        "grpo_mismatch": ["rm_score", "rollout_kl", "tis_truncated"],
        "grpo_tis": ["rm_score", "rollout_kl", "tis_truncated"],
    }
    for phase, keys in documented.items():
        for key in keys:
            values = data[phase][key]
            assert len(values) == n and all(isinstance(v, float) for v in values)
    assert data["ppo"]["step"] == [5, 10]
    assert data["config"]["ppo_steps"] == 10
    # the file holds exactly what run() returns
    assert data == json.loads(json.dumps(run(TINY)))
    assert "GSPO: GRPO with the sequence ratio" in out and "(TIS)" in out
    # where each run ends, as the demo page quotes it: the mean of the last fifth of its points
    assert f"GSPO          rm_score {fifths(data['gspo']['rm_score'])[1]:.4f}  kl " in out
    tis = data["grpo_tis"]["tis_truncated"]
    assert f"tis_truncated {fifths(tis)[1]:.4f}" in out and fifths(tis) == (tis[0], tis[1])


def test_cli_flags_choose_the_runs_beside_grpo_and_the_rollout_noise(tmp_path, capsys):
    path = tmp_path / "metrics.json"
    assert main([*TINY_FLAGS, "--no-grpo-variants", "--no-progress", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert set(GRPO_VARIANTS).isdisjoint(data) and set(GRPO_VARIANTS).isdisjoint(data["eval"])
    assert main([*TINY_FLAGS, "--rollout-noise", "0.7", "--no-progress", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["config"]["rollout_noise"] == 0.7 and data["config"]["grpo_variants"] is True
    assert "logit noise σ = 0.7" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*TINY_FLAGS, "--rollout-noise", "-1"])


def test_cli_plot_without_matplotlib_explains_how_to_get_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    png = tmp_path / "curves.png"
    status = main([*TINY_FLAGS, "--plot", str(png)])
    out, err = capsys.readouterr()
    assert status != 0
    assert "pip install 'rl_ops_numpy[demo]'" in err
    assert "Traceback" not in err
    assert out == "" and not png.exists()  # it stops before training


def test_cli_plot_writes_a_png(tmp_path, capsys):
    # matplotlib is an optional extra of the package; `make test` installs it (extra "test")
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    assert main([*TINY_FLAGS, "--no-progress", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_module_runs_as_a_script_with_help():
    proc = subprocess.run(
        [sys.executable, "-m", "rl_ops_numpy.demo", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    for flag in ("--seed", "--ppo-steps", "--dpo-steps", "--json", "--plot", "--browser"):
        assert flag in proc.stdout


def test_a_page_quotes_the_sample_runs_numbers_as_the_build_writes_them():
    """{{ demo.<run>.<metric> }} becomes where that curve of the sample run ends (the mean of its
    last fifth, 2 decimals); a run or metric the sample lacks is a build error naming the line."""
    from site_build.plugin import demo_numbers

    sample = {"grpo": {"rm_score": [0.0] * 8 + [2.0, 3.0]}, "config": {}}
    text = "line one\nGRPO ends at {{ demo.grpo.rm_score }}, or {{demo.grpo.rm_score}}.\n"
    assert demo_numbers(text, "s21/demo.en.md", sample) == (
        "line one\nGRPO ends at 2.50, or 2.50.\n")
    with pytest.raises(ValueError, match=r"s21/demo.en.md:2: .*no gspo.rm_score"):
        demo_numbers("x\n{{ demo.gspo.rm_score }}\n", "s21/demo.en.md", sample)
    pages = [ROOT / "docs" / "s21" / f"demo.{lang}.md" for lang in ("en", "zh")]
    for page in pages:  # the numbers of the sample run are never typed on the page
        assert "{{ demo.grpo.rm_score }}" in page.read_text(encoding="utf-8")
