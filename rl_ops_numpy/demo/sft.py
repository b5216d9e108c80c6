r"""Phase 1, **SFT**: fit :class:`~.model.TinyLM` to a small generated corpus of short babble words
by cross-entropy. The result is both the PPO actor's starting point and the frozen reference of
every later phase."""

from __future__ import annotations

import numpy as np

from .common import _Logger
from .config import DemoConfig
from .data import make_corpus
from .model import Adam, Batch, TinyLM

__all__ = ["sft_loss_and_grads", "train_sft"]


def sft_loss_and_grads(
    model: TinyLM, batch: Batch, temperature: float = 1.0
) -> tuple[float, dict[str, np.ndarray]]:
    r"""Token-mean cross-entropy and its parameter gradients.

    $$\mathcal{L}_{\text{SFT}} = -\frac{1}{N}\sum_{b,t} m_{bt}\log\pi(a_{bt}),\qquad
      \frac{\partial\mathcal{L}}{\partial\log\pi(a_{bt})} = -\frac{m_{bt}}{N},
      \qquad N = \max\big(1, \textstyle\sum m\big)$$
    """
    lp, logp = model.token_logprobs(batch, temperature)  # [B, T], [B, T, V]
    n = max(1.0, float(batch.mask.sum()))
    # L = −(1/N) Σ m log π(a_t)
    loss = -float(lp.sum() / n)
    return loss, model.backward(batch, logp, -batch.mask / n, temperature)


def train_sft(cfg: DemoConfig, rng: np.random.Generator, log: _Logger) -> TinyLM:
    """Fit a fresh :class:`TinyLM` to :func:`make_corpus` by cross-entropy, with Adam."""
    corpus = Batch.from_words(make_corpus(rng, cfg.corpus_size, cfg.max_len), cfg.max_len)
    model = TinyLM(cfg.max_len)
    opt = Adam(model.params, cfg.sft_lr)
    for step in range(1, cfg.sft_steps + 1):
        idx = rng.choice(cfg.corpus_size, size=min(cfg.sft_batch, cfg.corpus_size), replace=False)
        loss, grads = sft_loss_and_grads(model, corpus.take(idx), cfg.temperature)
        opt.step(grads)
        log.add(step, {"loss": loss})
    return model
