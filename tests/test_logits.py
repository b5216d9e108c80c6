"""rl_ops_numpy.logits against the beyond chapter's PyTorch answers (Exercises 1–3) and plain
PyTorch, plus the properties the lessons teach: the one-token shift, the temperature, entropy
from logits rather than from sampled tokens, and which tokens the high-entropy mask keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rl_ops_numpy.logits import high_entropy_mask, token_entropy, token_logprobs

from .conftest import lesson_function

token_logprobs_torch = lesson_function("beyond/token_logprobs")
token_entropy_torch = lesson_function("beyond/token_entropy")
high_entropy_mask_torch = lesson_function("beyond/high_entropy_mask")

T_ = torch.from_numpy
TEMPERATURES = [1.0, 0.7, 1.3, 0.05]


def _logits(seed: int, shape=(3, 7, 11), scale: float = 2.0, dtype=np.float64) -> np.ndarray:
    return (np.random.default_rng(seed).normal(0.0, scale, shape)).astype(dtype)


def _ids(seed: int, shape=(3, 7), V: int = 11) -> np.ndarray:
    return np.random.default_rng(seed + 100).integers(0, V, shape)


# ---- token_logprobs -----------------------------------------------------------------------------


@pytest.mark.parametrize("tau", TEMPERATURES)
@pytest.mark.parametrize("seed", range(5))
def test_token_logprobs_equal_the_lessons_answer_and_log_softmax_then_gather(seed, tau):
    z, y = _logits(seed), _ids(seed)
    ours = token_logprobs(z, y, temperature=tau)
    lesson = token_logprobs_torch(T_(z), T_(y), tau).numpy()
    naive = F.log_softmax(T_(z) / tau, dim=-1).gather(-1, T_(y)[..., None])[..., 0].numpy()
    np.testing.assert_allclose(ours, lesson, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours, naive, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("tau", TEMPERATURES)
def test_the_log_probs_of_every_token_of_the_vocabulary_sum_to_one(tau):
    z = _logits(1, (2, 11))
    every = np.stack([token_logprobs(z, np.full(2, v), temperature=tau) for v in range(11)], -1)
    np.testing.assert_allclose(np.exp(every).sum(-1), 1.0, rtol=1e-12)
    assert (every <= 0).all()


def test_a_causal_models_logits_are_scored_against_the_next_token_one_position_later():
    # the lesson's toy model: after token a comes a + 1, with logit 4 against 0
    V = 5
    table = 4.0 * np.roll(np.eye(V), 1, axis=1)
    ids = np.arange(V)[None, :]
    logits = table[ids]  # [1, 5, V]
    shifted = token_logprobs(logits[:, :-1], ids[:, 1:])
    unshifted = token_logprobs(logits, ids)
    # log(e⁴ / (e⁴ + 4)) and log(1 / (e⁴ + 4)): the printed −0.0707 and −4.0707
    np.testing.assert_allclose(shifted, math.log(math.exp(4) / (math.exp(4) + 4)))
    np.testing.assert_allclose(unshifted, -math.log(math.exp(4) + 4))
    assert shifted.shape == (1, 4) and unshifted.shape == (1, 5)
    assert round(float(shifted[0, 0]), 4) == -0.0707 and round(float(unshifted[0, 0]), 4) == -4.0707


def test_scoring_at_another_temperature_than_the_sampler_moves_the_ratio_away_from_one():
    z = np.tile(np.array([2.0, 1.0, 0.0, -1.0]), (1, 4, 1))
    drawn = np.arange(4)[None, :]
    sampler = token_logprobs(z, drawn, temperature=0.7)
    np.testing.assert_array_equal(token_logprobs(z, drawn, temperature=0.7) - sampler, 0.0)
    ratio = np.exp(token_logprobs(z, drawn, temperature=1.0) - sampler)[0]
    # the likely token loses, the unlikely ones gain: 0.8441, 1.2957, 1.9890, 3.0532
    np.testing.assert_allclose(ratio, [0.8441, 1.2957, 1.9890, 3.0532], atol=5e-5)
    # ρ_y = π_1(y) / π_0.7(y) ∝ exp(z_y (1 − 1/0.7)): falls with the logit
    assert np.all(np.diff(ratio) > 0)
    assert ((ratio < 0.8) | (ratio > 1.2)).sum() == 3  # outside PPO's clip range 0.2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_token_logprobs_keep_the_logits_dtype_and_the_ids_shape(dtype):
    z, y = _logits(2, dtype=dtype), _ids(2)
    out = token_logprobs(z, y, temperature=0.7)
    assert out.dtype == dtype and out.shape == y.shape
    # any leading shape: [V] with a scalar id, [N, V] packed tokens
    assert token_logprobs(z[0, 0], y[0, 0]).shape == ()
    assert token_logprobs(z[0], y[0].astype(np.int32)).shape == (7,)


def test_token_logprobs_of_extreme_logits_stay_finite():
    z = np.array([[[1000.0, -1000.0, 0.0]]])
    out = token_logprobs(z, np.array([[0]]))
    assert np.isfinite(out).all() and out[0, 0] == 0.0
    np.testing.assert_allclose(token_logprobs(z, np.array([[2]])), -1000.0)


# ---- token_entropy ------------------------------------------------------------------------------


@pytest.mark.parametrize("tau", TEMPERATURES)
@pytest.mark.parametrize("seed", range(5))
def test_token_entropy_equals_the_lessons_answer_and_torch_categorical_entropy(seed, tau):
    z = _logits(seed)
    ours = token_entropy(z, temperature=tau)
    lesson = token_entropy_torch(T_(z), tau).numpy()
    categorical = torch.distributions.Categorical(logits=T_(z) / tau).entropy().numpy()
    np.testing.assert_allclose(ours, lesson, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours, categorical, rtol=1e-10, atol=1e-12)


def test_entropy_lies_between_zero_and_log_v_and_is_log_v_for_a_uniform_row():
    z = _logits(3, (50, 11), scale=5.0)
    h = token_entropy(z)
    assert (h >= 0).all() and (h <= math.log(11) + 1e-12).all()
    np.testing.assert_allclose(token_entropy(np.zeros((1, 4))), math.log(4))
    assert token_entropy(np.zeros((1, 1))) == 0.0  # one token: no choice


def test_a_higher_temperature_gives_a_higher_entropy_except_for_a_uniform_row():
    z = _logits(4, (20, 11))
    cold, one, hot = (token_entropy(z, temperature=t) for t in (0.7, 1.0, 1.5))
    assert (cold < one).all() and (one < hot).all()
    # the lesson's rows: uniform 1.3863 at both, unsure 0.9475 → 0.7020, sure 0.0517 → 0.0054
    rows = np.array([[[0.0, 0, 0, 0], [2.0, 1.0, 0.0, -1.0], [6.0, 0, 0, 0]]])
    np.testing.assert_allclose(token_entropy(rows), [[1.3863, 0.9475, 0.0517]], atol=5e-5)
    np.testing.assert_allclose(token_entropy(rows, temperature=0.7), [[1.3863, 0.7020, 0.0054]],
                               atol=5e-5)


def test_entropy_is_the_mean_surprisal_but_one_sampled_token_is_a_noisy_estimate_of_it():
    z = np.array([2.0, 1.0, 0.0, -1.0])
    logp = token_logprobs(np.tile(z, (4, 1)), np.arange(4))  # −log π(y) for each y
    p = np.exp(logp)
    h = token_entropy(z)
    np.testing.assert_allclose(np.sum(p * -logp), h)  # E_y[−log π(y)] = H
    # the lesson's numbers: H = 0.9475; one draw gives 0.4402 … 3.4402
    np.testing.assert_allclose(-logp, [0.4402, 1.4402, 2.4402, 3.4402], atol=5e-5)
    assert np.sqrt(np.sum(p * (-logp - h) ** 2)) > 0.8 * h  # its std is of the size of H


def test_surprise_at_a_sure_position_is_not_uncertainty():
    z = np.array([6.0, 0.0, 0.0, 0.0])
    surprise = -float(token_logprobs(z, np.array(1)))
    assert surprise > 6.0 > 100 * float(token_entropy(z))  # 6.0074 against 0.0517


def test_the_sampled_surprisal_has_zero_expected_gradient_and_the_entropy_does_not():
    # E_{y∼π}[∇_z (−log π(y))] = −Σ_y ∇π(y) = 0: as a bonus it would not move the policy
    z = torch.tensor([2.0, 1.0, 0.0, -1.0], dtype=torch.float64, requires_grad=True)
    logp = torch.log_softmax(z, -1)
    sampled = (logp.exp().detach() * -logp).sum()  # the bonus from sampled tokens, in expectation
    (g_sampled,) = torch.autograd.grad(sampled, z)
    logp = torch.log_softmax(z, -1)
    (g_entropy,) = torch.autograd.grad(-(logp.exp() * logp).sum(), z)
    assert g_sampled.abs().max() < 1e-15
    # ∂H/∂z = −π (log π + H): pushes the likely token down, the unlikely ones up
    p, h = logp.exp().detach(), float(token_entropy(z.detach().numpy()))
    np.testing.assert_allclose(g_entropy, -p * (logp.detach() + h))
    assert g_entropy[0] < 0 < g_entropy[-1]


def test_a_nearly_one_hot_row_keeps_its_tiny_positive_entropy_in_float32():
    # TRL's −Σ π log π form; logsumexp − Σ π z (verl's, OpenRLHF's) cancels to 0.0 here
    z = np.linspace(-80, 80, 11).astype(np.float32)
    h = token_entropy(z)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, 1.913098e-06, rtol=1e-5)
    t = torch.from_numpy(z)
    assert float(torch.logsumexp(t, -1) - (torch.softmax(t, -1) * t).sum(-1)) == 0.0
    assert float(np.spacing(np.float32(80))) == pytest.approx(7.6e-6, rel=1e-2)


def _entropies_torch(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(the lesson's answer, -(π·log π).sum(-1) from torch.log_softmax)`` of ``z``."""
    logp = torch.log_softmax(T_(z), dim=-1)
    return token_entropy_torch(T_(z), 1.0).numpy(), (-(logp.exp() * logp).sum(-1)).numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tau", [1.0, 0.7])
def test_a_nan_logit_makes_its_rows_entropy_nan_as_torch_and_the_other_rows_keep_theirs(
        dtype, tau):
    z = _logits(5, (2, 3, 6), dtype=dtype)
    z[0, 1, 4] = np.nan
    h = token_entropy(z, temperature=tau)
    assert np.isnan(h[0, 1]) and np.isfinite(np.delete(h.reshape(-1), 1)).all()
    # the row's log-probs are NaN too, here and in torch: no confident 0 for a broken row
    assert np.isnan(token_logprobs(z, np.zeros((2, 3), int), temperature=tau)[0, 1])
    assert torch.log_softmax(T_(z[0, 1]) / tau, -1).isnan().all()
    assert np.isnan(token_entropy_torch(T_(z), tau).numpy()[0, 1])
    clean = np.delete(z.reshape(-1, 6), 1, axis=0)
    expected = torch.distributions.Categorical(logits=T_(clean) / tau).entropy().numpy()
    np.testing.assert_allclose(np.delete(h.reshape(-1), 1), expected,
                               rtol=2e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_minus_inf_logit_is_an_impossible_token_and_the_entropy_stays_that_of_the_others(dtype):
    z = np.array([[2.0, -np.inf, 1.0, 0.0, -1.0], [-np.inf, 0.5, -np.inf, 0.5, -np.inf],
                  [-np.inf, -np.inf, 3.0, -np.inf, -np.inf]], dtype)
    with np.errstate(all="raise"):  # a legal input: no floating-point warning either
        h = token_entropy(z)
    finite = [np.array([2.0, 1.0, 0.0, -1.0]), np.array([0.5, 0.5]), np.array([3.0])]
    np.testing.assert_allclose(h, [token_entropy(r) for r in finite], rtol=1e-6)
    np.testing.assert_allclose(h[1:], [math.log(2), 0.0], atol=1e-7)
    # torch.distributions handles −∞ the same way; the lesson's formula gives 0·(−∞) = NaN
    categorical = torch.distributions.Categorical(logits=T_(z)).entropy().numpy()
    np.testing.assert_allclose(h, categorical, rtol=1e-6, atol=1e-7)
    lesson, plain = _entropies_torch(z)
    assert np.isnan(lesson).all() and np.isnan(plain).all()


@pytest.mark.parametrize("row", [[np.inf, 0.0, 1.0], [np.inf, np.inf, 0.0],
                                 [-np.inf, -np.inf, -np.inf]],
                         ids=["+inf", "two +inf", "all -inf"])
def test_a_plus_inf_logit_or_a_row_of_minus_inf_defines_no_distribution_and_gives_nan(row):
    z = np.array([row, [0.0, 1.0, 2.0]])
    with np.errstate(all="ignore"):  # ∞ − ∞ and log 0: NumPy's warnings for input like this
        h = token_entropy(z)
    assert np.isnan(h[0]) and np.isfinite(h[1])
    lesson, plain = _entropies_torch(z)
    assert np.isnan(lesson[0]) and np.isnan(plain[0])
    assert torch.log_softmax(T_(z[0]), -1).isnan().all()
    with pytest.raises(ValueError, match="logits"):  # torch.distributions refuses such logits
        torch.distributions.Categorical(logits=T_(z))


# ---- high_entropy_mask --------------------------------------------------------------------------


def _entropy_case(seed: int, B: int = 4, T: int = 9):
    rng = np.random.default_rng(seed)
    h = np.exp(rng.normal(0.0, 1.0, (B, T)))
    m = (rng.random((B, T)) < 0.7).astype(np.float64)
    return h, m


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.5, 0.8, 0.9, 1.0])
@pytest.mark.parametrize("seed", range(6))
def test_high_entropy_mask_equals_the_lessons_answer_and_torch_quantile(seed, threshold):
    h, m = _entropy_case(seed)
    ours = high_entropy_mask(h, m, threshold)
    lesson = high_entropy_mask_torch(T_(h), T_(m), threshold).numpy()
    cut = torch.quantile(T_(h)[T_(m).bool()], threshold)
    plain = ((T_(h) >= cut) & T_(m).bool()).numpy()
    assert ours.dtype == np.bool_
    np.testing.assert_array_equal(ours, lesson)
    np.testing.assert_array_equal(ours, plain)


def test_the_lessons_example_keeps_the_forking_words():
    h = np.array([[1.9, 0.3, 0.05, 0.8, 0.6, 2.3, 1.4, 9.9],
                  [2.6, 0.2, 0.9, 0.1, 1.1, 0.02, 9.9, 9.9]])
    m = np.array([[1, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 0, 0]])
    kept = {rho: high_entropy_mask(h, m, 1 - rho) for rho in (0.2, 0.5, 0.0)}
    # ρ = 0.2: the cut 1.70 lies between 1.4 and 1.9 ("So", " but", "Suppose")
    assert np.argwhere(kept[0.2]).tolist() == [[0, 0], [0, 5], [1, 0]]
    # ρ = 0.5: the cut is 0.8 itself, a token's entropy: ">=" keeps it (7 tokens, not 6)
    assert kept[0.5].sum() == 7 and kept[0.5][0, 3]
    assert kept[0.0].sum() == 1 and kept[0.0][1, 0]
    # the padding's 9.9 never counts: with it in the quantile, ρ = 0.2 would keep 1 token
    everything = np.quantile(h, 0.8)
    assert ((h >= everything) & (m == 1)).sum() == 1


@pytest.mark.parametrize("seed", range(4))
def test_the_mask_is_false_on_padding_shrinks_as_the_threshold_rises_and_keeps_the_top_share(
        seed):
    h, m = _entropy_case(seed, 6, 12)
    real = m == 1
    n = int(real.sum())
    previous = real
    for q in np.linspace(0, 1, 11):
        kept = high_entropy_mask(h, m, q)
        assert not kept[~real].any()
        assert (kept <= previous).all()  # a subset of the mask at a lower threshold
        assert kept.sum() >= n - 1 - math.floor(q * (n - 1))
        previous = kept
    np.testing.assert_array_equal(high_entropy_mask(h, m, 0.0), real)
    assert high_entropy_mask(h, m, 1.0).sum() == 1  # the maximum (no ties here)


def test_every_token_tied_at_the_cut_is_kept():
    h = np.array([[0.5, 0.5, 0.5, 0.5, 0.1]])
    assert high_entropy_mask(h, np.ones((1, 5)), 0.9).sum() == 4
    assert high_entropy_mask(h, np.ones((1, 5)), 1.0).sum() == 4


def test_one_cut_for_the_whole_batch_so_a_confident_response_may_keep_no_token():
    h = np.array([[0.1, 0.2, 0.1, 0.3], [2.0, 1.5, 2.5, 1.8]])
    kept = high_entropy_mask(h, np.ones((2, 4)), 0.5)
    assert not kept[0].any() and kept[1].all()


def test_an_empty_mask_keeps_nothing():
    h, _ = _entropy_case(0)
    out = high_entropy_mask(h, np.zeros_like(h), 0.8)
    assert out.dtype == np.bool_ and not out.any()


def test_padding_may_hold_anything():
    h = np.array([[1.0, 2.0, np.nan, -5.0]])
    out = high_entropy_mask(h, np.array([[1, 1, 0, 0]]), 0.5)
    np.testing.assert_array_equal(out, [[False, True, False, False]])


# ---- bad input ----------------------------------------------------------------------------------

BAD = [
    (lambda: token_logprobs(np.zeros((2, 3, 5)), np.zeros((2, 3))), "integer token ids"),
    (lambda: token_logprobs(np.zeros((2, 3, 5)), np.zeros((2, 4), int)),
     r"ids \[2, 4\] must be logits \[2, 3, 5\]"),
    (lambda: token_logprobs(np.zeros((2, 3, 5)), np.full((2, 3), 5)), r"in \[0, 5\)"),
    (lambda: token_logprobs(np.zeros((2, 3, 5)), np.full((2, 3), -1)), r"in \[0, 5\)"),
    (lambda: token_logprobs(np.zeros((2, 3, 5)), np.zeros((2, 3), int), temperature=0.0),
     "temperature must be a finite number > 0"),
    (lambda: token_logprobs(np.zeros(3), np.zeros((), int), temperature=math.nan),
     "temperature"),
    (lambda: token_logprobs(np.zeros((2, 0)), np.zeros(2, int)), "vocabulary axis"),
    (lambda: token_entropy(np.array(1.0)), "vocabulary axis"),
    (lambda: token_entropy(np.zeros((2, 3)), temperature=-1.0), "temperature"),
    (lambda: token_entropy(np.array(["a", "b"])), "logits must hold numbers"),
    (lambda: high_entropy_mask(np.ones((2, 3)), np.ones((2, 4)), 0.5),
     r"entropies \[2, 3\], mask \[2, 4\]"),
    (lambda: high_entropy_mask(np.ones(3), np.ones(3), 0.5), r"entropies must be \[B, T\]"),
    (lambda: high_entropy_mask(np.ones((1, 2)), np.array([[1, 2]]), 0.5), "only 0 and 1"),
    (lambda: high_entropy_mask(np.ones((1, 2)), np.ones((1, 2)), 1.5),
     r"threshold must be in \[0, 1\]"),
    (lambda: high_entropy_mask(np.ones((1, 2)), np.ones((1, 2)), None), "single number"),
    (lambda: high_entropy_mask(np.array([[1.0, -0.5]]), np.ones((1, 2)), 0.5),
     "finite and ≥ 0 on response tokens, found -0.5"),
    (lambda: high_entropy_mask(np.array([[1.0, np.nan]]), np.ones((1, 2)), 0.5), "found nan"),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input_raises_a_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_temperature_is_keyword_only():
    with pytest.raises(TypeError):
        token_logprobs(np.zeros((1, 3)), np.zeros(1, int), 0.7)  # type: ignore[misc]
    with pytest.raises(TypeError):
        token_entropy(np.zeros((1, 3)), 0.7)  # type: ignore[misc]
