r"""The toy language model (actor), its value head (critic), Adam, all with hand-written gradients.

The "language" is words of lowercase letters. A sequence is predicted one token at a time, and
each next-token distribution depends only on the previous token and the position:

$$z_t = W[x_{t-1}] + P[t] + b,\qquad \pi(\cdot\mid x_{<t}) = \operatorname{softmax}(z_t/\tau)$$

a bigram table ``W`` (what follows what), a position table ``P`` (when to stop), and a bias
``b``. Position ``t`` is the index, inside the word, of the token being predicted: the first
letter is predicted at position 0 from ``BOS``, the ``EOS`` after ``n`` letters at position
``n``. A fixed mask forbids ``PAD``, ``BOS`` and ``UNK`` everywhere and allows only ``EOS`` at the
last position, so every sampled word ends with ``EOS`` within ``max_len`` letters.

The critic has the same tabular form with one output, ``V(s_t) = U[x_{t-1}] + Q[t] + c``.

Everything is NumPy (no threads, no scipy), small enough to train in seconds on a CPU and in
Pyodide. The one gradient every objective needs is that of a token's log-probability:

$$\frac{\partial \log\pi(a_t)}{\partial z_t} = \frac{1}{\tau}\big(\mathbf{1}_{a_t} - \pi_t\big)$$

and each table collects the sum of the logit gradients of the rows that used it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..logits import _logsumexp

__all__ = [
    "BOS",
    "EOS",
    "LETTERS",
    "PAD",
    "UNK",
    "VOCAB",
    "Adam",
    "Batch",
    "TinyLM",
    "ValueHead",
    "decode",
    "encode",
]

LETTERS = "abcdefghijklmnopqrstuvwxyz"
VOCAB = ("<pad>", "<bos>", "<eos>", "<unk>", *LETTERS)
PAD, BOS, EOS, UNK = 0, 1, 2, 3
FIRST_LETTER = 4  # token id of "a"
V = len(VOCAB)  # 30
# a logit this low has probability exactly 0 after exp (float64), without the NaNs of −inf
_BLOCKED = -1e9


def encode(word: str) -> list[int]:
    """Token ids of a word's characters; anything outside a–z becomes ``UNK``."""
    return [FIRST_LETTER + LETTERS.index(c) if c in LETTERS else UNK for c in word.lower()]


def decode(tokens: Sequence[int]) -> str:
    """The letters of a token sequence, up to the first ``EOS``; ``UNK`` shows as ``?``."""
    out = []
    for tok in tokens:
        tok = int(tok)
        if tok == EOS:
            break
        if tok >= FIRST_LETTER:
            out.append(LETTERS[tok - FIRST_LETTER])
        elif tok == UNK:
            out.append("?")
    return "".join(out)


@dataclass(frozen=True)
class Batch:
    r"""Token positions to score: predict ``actions[b, t]`` from ``prev[b, t]`` at ``pos[b, t]``.

    All four arrays are ``[B, T]``; ``mask`` is 1 on real tokens and 0 on padding. For a
    sampled response, ``prompts[b]`` is the first letter the word was given and ``actions`` the
    letters (and ``EOS``) the model wrote after it, and ``logprobs`` the log-probability each
    action had in the distribution it was drawn from (what an inference engine returns with its
    samples: the rollout log-probs).
    """

    prev: np.ndarray  # [B, T] int, the token before
    pos: np.ndarray  # [B, T] int, the position being predicted
    actions: np.ndarray  # [B, T] int, the token predicted
    mask: np.ndarray  # [B, T] float, 1 on real tokens
    prompts: np.ndarray | None = None  # [B] int, first letters (sampled responses only)
    logprobs: np.ndarray | None = None  # [B, T] float, the sampler's log-probs (0 on padding)

    def take(self, idx: np.ndarray) -> Batch:
        """The rows ``idx`` of every array."""
        prompts = None if self.prompts is None else self.prompts[idx]
        logprobs = None if self.logprobs is None else self.logprobs[idx]
        return Batch(
            self.prev[idx], self.pos[idx], self.actions[idx], self.mask[idx], prompts, logprobs
        )

    def words(self) -> list[str]:
        """Each row as a word: the prompt letter (if any) followed by the predicted letters."""
        if self.prompts is None:
            return [decode(row) for row in self.actions]
        return [
            decode([p]) + decode(row) for p, row in zip(self.prompts, self.actions, strict=True)
        ]

    @staticmethod
    def from_words(words: Sequence[str], max_len: int) -> Batch:
        r"""Teacher-forcing batch of whole words: ``BOS w_0 … w_{n-1}`` → ``w_0 … w_{n-1} EOS``.

        Every word must have at most ``max_len`` letters. ``T = max_len + 1``.
        """
        B, T = len(words), max_len + 1  # words, predicted tokens per word (letters + EOS)
        prev = np.full((B, T), PAD, np.int64)
        actions = np.full((B, T), PAD, np.int64)
        mask = np.zeros((B, T))
        for b, word in enumerate(words):
            ids = encode(word)
            n = len(ids)
            if n > max_len:
                raise ValueError(f"word {word!r} has {n} letters, more than max_len={max_len}")
            prev[b, : n + 1] = [BOS, *ids]
            actions[b, : n + 1] = [*ids, EOS]
            mask[b, : n + 1] = 1
        pos = np.broadcast_to(np.arange(T), (B, T)).copy()
        return Batch(prev, pos, actions, mask)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    r"""$\log\operatorname{softmax}(z) = z - \log\sum e^{z}$, last axis, with the log-sum-exp of
    :func:`rl_ops_numpy.token_logprobs` (so the model's log-probs are the reference's)."""
    return z - _logsumexp(z)[..., None]


def _scatter_rows(index: np.ndarray, grad: np.ndarray, n_rows: int) -> np.ndarray:
    r"""$G[i] = \sum_{k:\ \text{index}_k = i} \text{grad}_k$: the gradient of a table lookup.

    ``index`` is ``[N]``, ``grad`` is ``[N, K]``; the result is ``[n_rows, K]``. One
    ``bincount`` over the flat cells ``index·K + column``: exact, single-threaded, and faster
    than ``np.add.at`` or a one-hot matrix product at these sizes.
    """
    K = grad.shape[1]  # columns
    # [N·K] flat cell of each entry; bincount takes np.intp (int32 on wasm32, as in Pyodide)
    cells = (index[:, None] * K + np.arange(K)).reshape(-1).astype(np.intp)
    return np.bincount(cells, weights=grad.reshape(-1), minlength=n_rows * K).reshape(n_rows, K)


class TinyLM:
    r"""Next-token logits from the previous token and the position.

    $$z_t = W[x_{t-1}] + P[t] + b + M[t],\qquad \log\pi(\cdot\mid x_{<t}) =
      \log\operatorname{softmax}(z_t / \tau)$$

    Parameters (``params``): ``W`` ``[V, V]``, ``P`` ``[max_len + 1, V]``, ``b`` ``[V]``.
    ``M`` is the fixed structural mask (not trained). ``V = 30``: PAD, BOS, EOS, UNK, a–z.
    """

    def __init__(self, max_len: int = 20, dtype: type = np.float64):
        self.max_len = max_len
        L = max_len
        self.params = {
            "W": np.zeros((V, V), dtype),  # bigram logits, row = previous token
            "P": np.zeros((L + 1, V), dtype),  # position logits, row = position
            "b": np.zeros(V, dtype),  # bias
        }
        # M[t]: PAD, BOS, UNK are never written; at position max_len only EOS is allowed
        mask = np.zeros((L + 1, V), dtype)
        mask[:, [PAD, BOS, UNK]] = _BLOCKED
        mask[L, :] = _BLOCKED
        mask[L, EOS] = 0
        self.structure = mask

    def copy(self) -> TinyLM:
        """An independent model with the same parameters (e.g. the frozen reference)."""
        other = TinyLM(self.max_len, self.params["W"].dtype.type)
        other.params = {k: v.copy() for k, v in self.params.items()}
        return other

    def logits(self, prev: np.ndarray, pos: np.ndarray) -> np.ndarray:
        r"""Next-token logits ``[..., V]`` at each ``(prev, pos)``, both ``[...]``."""
        p = self.params
        # z_t = W[x_{t−1}] + P[t] + b + M[t]
        return p["W"][prev] + p["P"][pos] + p["b"] + self.structure[pos]

    def log_probs(self, prev: np.ndarray, pos: np.ndarray, temperature: float = 1.0) -> np.ndarray:
        r"""Next-token log-distributions ``[..., V]`` at each ``(prev, pos)``, both ``[...]``."""
        # log π = log softmax(z / τ)
        return _log_softmax(self.logits(prev, pos) / temperature)

    def token_logprobs(
        self, batch: Batch, temperature: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""Log-probs of the batch's actions, ``[B, T]`` (0 on padding), and the full ``[B, T, V]``.

        $$\log\pi(a_t\mid x_{<t}) = \big[\log\operatorname{softmax}(z_t/\tau)\big]_{a_t}$$

        The values of :func:`rl_ops_numpy.token_logprobs` on :meth:`logits` (a test checks it);
        the full ``[B, T, V]`` is what :meth:`backward` needs, and the entropy
        (:func:`rl_ops_numpy.token_entropy` of it).
        """
        logp = self.log_probs(batch.prev, batch.pos, temperature)  # [B, T, V]
        lp = np.take_along_axis(logp, batch.actions[..., None], axis=-1)[..., 0]  # [B, T]
        return lp * batch.mask, logp

    def backward(
        self, batch: Batch, logp: np.ndarray, grad_lp: np.ndarray, temperature: float = 1.0
    ) -> dict[str, np.ndarray]:
        r"""Parameter gradients of $\sum_{b,t} g_{bt} \log\pi(a_{bt})$, given ``grad_lp`` = $g$.

        $$\frac{\partial}{\partial z_t} = \frac{g_t}{\tau}\big(\mathbf{1}_{a_t} - \pi_t\big),
          \qquad \frac{\partial}{\partial W[i]} = \sum_{t:\,x_{t-1}=i}\frac{\partial}{\partial z_t},
          \quad \frac{\partial}{\partial P[j]} = \sum_{t:\,t=j}\frac{\partial}{\partial z_t},
          \quad \frac{\partial}{\partial b} = \sum_t\frac{\partial}{\partial z_t}$$

        Args:
            batch: the positions scored.
            logp: ``[B, T, V]`` full log-distribution from :meth:`token_logprobs`.
            grad_lp: ``[B, T]`` gradient of the objective w.r.t. each token log-prob (0 on
                padding).
            temperature: the τ the log-probs were computed with.
        """
        B, T, _ = logp.shape  # batch, tokens, vocabulary
        g = grad_lp * batch.mask  # [B, T]
        onehot = batch.actions[..., None] == np.arange(V)  # [B, T, V], 1_{a_t}
        # ∂/∂z_t = g_t (1_{a_t} − π_t) / τ
        dz = (onehot - np.exp(logp)) * (g / temperature)[..., None]  # [B, T, V]
        dz = dz.reshape(B * T, V)
        return {
            "W": _scatter_rows(batch.prev.reshape(-1), dz, V),
            "P": _scatter_rows(batch.pos.reshape(-1), dz, self.max_len + 1),
            "b": dz.sum(axis=0),
        }

    def sample(
        self,
        prompts: np.ndarray,
        rng: np.random.Generator,
        temperature: float = 1.0,
        *,
        logit_noise: float = 0.0,
        noise_rng: np.random.Generator | None = None,
    ) -> Batch:
        r"""Write one word per prompt letter: $a_t \sim \operatorname{softmax}(z_t/\tau)$.

        Response token ``t`` (``t = 0 … max_len − 1``) is predicted at word position ``t + 1``
        from the token before it (the prompt for ``t = 0``). Sampling stops at ``EOS``; the mask
        covers the response up to and including ``EOS``.

        With ``logit_noise`` $= \sigma > 0$ the words come from a perturbed copy of the model,
        as from a low-precision inference engine: every logit of every step gets its own
        $\varepsilon \sim \mathcal N(0, \sigma^2)$, $a_t \sim \mu = \operatorname{softmax}((z_t +
        \varepsilon_t)/\tau)$, drawn from ``noise_rng``, so that ``rng``'s draws (and, at
        $\sigma = 0$, the words) are those of the unperturbed model.

        Args:
            prompts: ``[B]`` token ids of the first letters.
            rng: the generator to draw from.
            temperature: τ > 0.
            logit_noise: σ ≥ 0 of the perturbation of the sampler's logits; 0: none.
            noise_rng: the generator of the perturbation (needed when σ > 0).

        Returns:
            A :class:`Batch` with ``T = max_len`` response slots, ``prompts`` set, and
            ``logprobs`` the log-probs of the actions in the distribution they were drawn from.
        """
        prompts = np.asarray(prompts, np.int64)
        (B,), T = prompts.shape, self.max_len  # words, response slots
        actions = np.full((B, T), PAD, np.int64)
        mask = np.zeros((B, T))
        logprobs = np.zeros((B, T))
        prev = prompts.copy()
        alive = np.ones(B, bool)
        rows = np.arange(B)
        for t in range(T):
            # log π(· | x_{t−1}, t+1) = log softmax(z / τ)
            logp = self.log_probs(prev, np.full(B, t + 1), temperature)  # [B, V]
            if logit_noise > 0:
                if noise_rng is None:
                    raise ValueError("logit_noise > 0 needs a noise_rng")
                # log μ = log softmax((z + ε) / τ) = log softmax(log π + ε / τ),  ε ~ N(0, σ²)
                eps = logit_noise * noise_rng.standard_normal(logp.shape)  # [B, V]
                logp = _log_softmax(logp + eps / temperature)
            probs = np.exp(logp)  # [B, V]
            # inverse CDF: first token whose cumulative probability exceeds u · total
            cdf = probs.cumsum(axis=1)
            u = rng.random(B)[:, None] * cdf[:, -1:]
            a = np.argmax(cdf > u, axis=1)
            actions[alive, t] = a[alive]
            mask[alive, t] = 1
            logprobs[alive, t] = logp[rows, a][alive]
            alive &= a != EOS
            prev = np.where(alive, a, PAD)
            if not alive.any():
                break
        prev_all = np.concatenate([prompts[:, None], actions[:, :-1]], axis=1)
        pos = np.broadcast_to(np.arange(1, T + 1), (B, T)).copy()
        return Batch(prev_all, pos, actions, mask, prompts, logprobs)


class ValueHead:
    r"""Critic of the same tabular form: $V(s_t) = U[x_{t-1}] + Q[t] + c$.

    Parameters (``params``): ``U`` ``[V]``, ``Q`` ``[max_len + 1]``, ``c`` ``[1]``.
    """

    def __init__(self, max_len: int = 20, dtype: type = np.float64):
        self.max_len = max_len
        self.params = {
            "U": np.zeros(V, dtype),  # value by previous token
            "Q": np.zeros(max_len + 1, dtype),  # value by position
            "c": np.zeros(1, dtype),  # bias
        }

    def values(self, batch: Batch) -> np.ndarray:
        r"""``[B, T]`` values $V(s_t) = U[x_{t-1}] + Q[t] + c$, 0 on padding."""
        p = self.params
        return (p["U"][batch.prev] + p["Q"][batch.pos] + p["c"][0]) * batch.mask

    def backward(self, batch: Batch, grad_v: np.ndarray) -> dict[str, np.ndarray]:
        r"""Parameter gradients of $\sum_{b,t} g_{bt} V(s_{bt})$, given ``grad_v`` $= g$ ``[B, T]``.

        $$\frac{\partial}{\partial U[i]} = \sum_{t:\,x_{t-1}=i} g_t,\qquad
          \frac{\partial}{\partial Q[j]} = \sum_{t:\,t=j} g_t,\qquad
          \frac{\partial}{\partial c} = \sum_t g_t$$
        """
        g = (grad_v * batch.mask).reshape(-1)
        prev, pos = batch.prev.reshape(-1).astype(np.intp), batch.pos.reshape(-1).astype(np.intp)
        return {
            # ∂/∂U[i] = Σ_{t: x_{t−1} = i} g_t
            "U": np.bincount(prev, weights=g, minlength=V),
            # ∂/∂Q[j] = Σ_{t: t = j} g_t
            "Q": np.bincount(pos, weights=g, minlength=self.max_len + 1),
            "c": np.array([g.sum()]),
        }


class Adam:
    r"""Adam (Kingma & Ba, 2015) on a dict of arrays, updated in place.

    $$m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,\quad
      \theta \leftarrow \theta - \eta\,\frac{m/(1-\beta_1^k)}{\sqrt{v/(1-\beta_2^k)} + \epsilon}$$
    """

    def __init__(
        self,
        params: dict[str, np.ndarray],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        self.params, self.lr, self.betas, self.eps = params, lr, betas, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.k = 0  # steps taken

    def step(self, grads: dict[str, np.ndarray]) -> None:
        """One descent step along ``grads`` (gradients of a loss to minimise)."""
        b1, b2 = self.betas
        self.k += 1
        for name, g in grads.items():
            # m ← β₁m + (1−β₁)g ;  v ← β₂v + (1−β₂)g²
            self.m[name] = b1 * self.m[name] + (1 - b1) * g
            self.v[name] = b2 * self.v[name] + (1 - b2) * g * g
            # θ ← θ − η m̂ / (√v̂ + ε)
            m_hat = self.m[name] / (1 - b1**self.k)
            v_hat = self.v[name] / (1 - b2**self.k)
            self.params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
