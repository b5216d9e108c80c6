r"""What the phases train and sample on: the SFT corpus (:func:`make_corpus`), the prompts (one
first letter each) and DPO's preference pairs (:func:`preference_pairs`)."""

from __future__ import annotations

import numpy as np

from .model import FIRST_LETTER, LETTERS, Batch, TinyLM, V
from .reward import score_batch

__all__ = ["make_corpus", "preference_pairs"]


# English letter frequencies (per cent), a–z
_ENGLISH = np.array(
    [8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4,
     6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1, 2.8, 1.0, 2.4, 0.15, 2.0, 0.07]
)  # fmt: skip


def make_corpus(rng: np.random.Generator, size: int, max_len: int = 20) -> list[str]:
    r"""The SFT corpus: short babble words, the kind of text a weak base model writes.

    Each word has $n \sim U\{2, \dots, 8\}$ letters drawn from English letter frequencies; with
    probability 0.3 a letter repeats the one before ("stutter"). Against the reward model these
    words are too short, alternate vowels and consonants only by chance, and repeat letters, so
    RL has room to improve them.
    """
    p = _ENGLISH / _ENGLISH.sum()
    words = []
    for _ in range(size):
        n = min(int(rng.integers(2, 9)), max_len)
        letters = rng.choice(26, size=n, p=p)
        stutter = rng.random(n) < 0.3
        for i in range(1, n):
            if stutter[i]:
                letters[i] = letters[i - 1]
        words.append("".join(LETTERS[i] for i in letters))
    return words


def _random_prompts(rng: np.random.Generator, n: int) -> np.ndarray:
    """``[n]`` first letters, uniform over a–z (token ids)."""
    return rng.integers(FIRST_LETTER, V, size=n)


def preference_pairs(
    ref: TinyLM, rng: np.random.Generator, n_prompts: int, k: int = 4, temperature: float = 1.0
) -> tuple[Batch, Batch]:
    """Best-of-k vs worst-of-k: ``k`` words per prompt from ``ref``, scored by the reward model.

    Returns ``(chosen, rejected)`` batches, one row per prompt; prompts whose ``k`` words all
    score the same are dropped.
    """
    prompts = np.repeat(_random_prompts(rng, n_prompts), k)  # [n·k], k copies of each prompt
    batch = ref.sample(prompts, rng, temperature)
    scores = score_batch(batch.words()).reshape(n_prompts, k)  # [n, k]
    best, worst = scores.argmax(axis=1), scores.argmin(axis=1)
    keep = np.nonzero(scores.max(axis=1) > scores.min(axis=1))[0]
    rows = np.arange(n_prompts) * k
    return batch.take(rows[keep] + best[keep]), batch.take(rows[keep] + worst[keep])
