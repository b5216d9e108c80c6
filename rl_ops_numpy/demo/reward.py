r"""The rule-based reward model: a fixed score for a word, standing in for a learned RM.

The source material's demo scores its toy model's text with a few hand-made rules; here each rule
is one named function of a word (a string of a–z), and the score is their weighted sum:

$$R(w) = 1.0\,\text{length} + 1.0\,\text{diversity} + 1.0\,\text{alternation}
  - 1.0\,\text{short} - 1.0\,\text{repeat}$$

Every term lies in $[0, 1]$, so $R \in [-2, 3]$. The three rewards pull in different directions
(15 letters alternating vowel/consonant must reuse some of the five vowels, which costs
diversity), so no word reaches 3 and the policy has to trade them off, as against a learned RM.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import pairwise

import numpy as np

__all__ = [
    "TARGET_LENGTH",
    "VOWELS",
    "WEIGHTS",
    "alternation_term",
    "diversity_term",
    "length_term",
    "repeat_penalty",
    "reward_terms",
    "score",
    "score_batch",
    "short_penalty",
]

VOWELS = frozenset("aeiou")
TARGET_LENGTH = 15  # letters at which the length term peaks
LENGTH_WIDTH = 5.0  # σ of the length bump, in letters
SHORT_LIMIT = 5  # words shorter than this are penalised
# R = Σ_k w_k · term_k; penalties enter with a negative weight
WEIGHTS = {"length": 1.0, "diversity": 1.0, "alternation": 1.0, "short": -1.0, "repeat": -1.0}


def length_term(word: str) -> float:
    r"""A bump peaking at 15 letters: $\exp\big(-\tfrac{(n - 15)^2}{2\cdot 5^2}\big)$, in $(0, 1]$.

    1 at ``n = 15``, about 0.61 at 10 or 20, 0.14 at 5.
    """
    n = len(word)
    return math.exp(-((n - TARGET_LENGTH) ** 2) / (2 * LENGTH_WIDTH**2))


def diversity_term(word: str) -> float:
    r"""Distinct letters over letters: $|\{w_i\}| / n$, in $[0, 1]$; 0 for the empty word.

    ``"abc"`` → 1, ``"aaaa"`` → 0.25.
    """
    return len(set(word)) / len(word) if word else 0.0


def alternation_term(word: str) -> float:
    r"""Share of neighbouring pairs where a vowel meets a consonant:
    $\frac{1}{n-1}\sum_{i=1}^{n-1}[\text{vowel}(w_{i-1}) \ne \text{vowel}(w_i)]$, in $[0, 1]$.

    ``"banana"`` → 1, ``"strength"`` → 2/7; 0 for words shorter than 2 letters.
    """
    if len(word) < 2:
        return 0.0
    flips = sum((a in VOWELS) != (b in VOWELS) for a, b in pairwise(word))
    return flips / (len(word) - 1)


def short_penalty(word: str) -> float:
    r"""A ramp for very short words: $\max(0,\ 5 - n) / 5$, in $[0, 1]$.

    1 for the empty word, 0.8 for one letter, 0.2 for four, 0 from five letters on.
    """
    return max(0, SHORT_LIMIT - len(word)) / SHORT_LIMIT


def repeat_penalty(word: str) -> float:
    r"""Share of neighbouring pairs that repeat a letter:
    $\frac{1}{n-1}\sum_{i=1}^{n-1}[w_{i-1} = w_i]$, in $[0, 1]$.

    ``"aaaa"`` → 1, ``"book"`` → 1/3; 0 for words shorter than 2 letters.
    """
    if len(word) < 2:
        return 0.0
    return sum(a == b for a, b in pairwise(word)) / (len(word) - 1)


_TERMS = {
    "length": length_term,
    "diversity": diversity_term,
    "alternation": alternation_term,
    "short": short_penalty,
    "repeat": repeat_penalty,
}


def reward_terms(word: str) -> dict[str, float]:
    """Every term of :func:`score`, unweighted, by name."""
    return {name: fn(word) for name, fn in _TERMS.items()}


def score(word: str) -> float:
    r"""The reward model's score: $R(w) = \sum_k \text{WEIGHTS}_k\cdot\text{term}_k(w)$."""
    return sum(WEIGHTS[name] * value for name, value in reward_terms(word).items())


def score_batch(words: Iterable[str]) -> np.ndarray:
    """``[B]`` float64 scores of a batch of words."""
    return np.array([score(w) for w in words], dtype=np.float64)
