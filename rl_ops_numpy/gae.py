r"""Generalized Advantage Estimation (GAE), for token batches and for single episodes.

$$\delta_t = r_t + \gamma V(s_{t+1}) - V(s_t),\qquad
  \hat A_t = \delta_t + \gamma\lambda\,\hat A_{t+1}$$

Unrolled, $\hat A_t = \sum_{k\ge t} (\gamma\lambda)^{k-t}\delta_k$: a reverse discounted sum.
Instead of a Python loop over time, the sum is a blockwise scan (one matrix product inside
blocks of ``_BLOCK`` steps, one small product across blocks), which is exact up to float rounding
and runs at a small multiple of the cost of copying the arrays (``make bench``: about 7×).

Padding is cleared with a bitwise AND on the raw bits rather than by multiplying with the mask, so
that NaN or inf on padding cannot leak either (NaN·0 is NaN; NaN AND 0 is 0.0).
"""

from __future__ import annotations

import functools

import numpy as np

from ._validate import (
    as_float_arrays,
    bool_mask,
    check_ndim,
    check_same_shape,
    flag,
    number,
    token_arrays,
)

__all__ = ["compute_gae", "compute_gae_episode", "reverse_discounted_sum"]

_BLOCK = 16


@functools.lru_cache(maxsize=64)
def _powers(c: float, n: int, dtype: np.dtype) -> np.ndarray:
    # c**0 … c**(n-1), with 0**0 = 1 so that λ = 0 works
    p = np.power(np.asarray(c, dtype=np.float64), np.arange(n)).astype(dtype)
    p.flags.writeable = False
    return p


@functools.lru_cache(maxsize=64)
def _triangle(c: float, n: int, dtype: np.dtype, shift: int = 0, scale: float = 1.0) -> np.ndarray:
    # W[k, i] = scale · c^{k−i−shift} for k ≥ i + shift, else 0  (n × n)
    d = np.arange(n)[:, None] - np.arange(n)[None, :] - shift
    w = np.where(d >= 0, scale * _powers(c, n, np.dtype(np.float64))[np.maximum(d, 0)], 0)
    w = w.astype(dtype)
    w.flags.writeable = False
    return w


@functools.lru_cache(maxsize=64)
def _block_scan(
    c: float, nb: int, dtype: np.dtype
) -> tuple[np.ndarray, float, np.ndarray | None, np.ndarray]:
    """What the blockwise scan of ``nb`` blocks needs, computed once per ``(c, nb, dtype)``.

    ``(c^0 … c^{L−1}, c^L, the nb×nb triangle that hands on the sums between blocks (None when
    nb is too large for one product), the L×L triangle W)``.
    """
    L = _BLOCK
    pw = _powers(c, L + 1, dtype)
    cL = float(pw[L])
    after = _triangle(cL, nb, dtype, shift=1, scale=c) if nb <= _BLOCK**2 else None
    return pw[:L], cL, after, _triangle(c, L, dtype)


def reverse_discounted_sum(x: np.ndarray, c: float, *, overwrite_x: bool = False) -> np.ndarray:
    r"""$y_t = \sum_{k \ge t} c^{\,k-t} x_k$ along the last axis, i.e. $y_t = x_t + c\,y_{t+1}$.

    Args:
        x: ``[..., T]`` numbers, at least one axis (time is the last); integers, booleans and
            lists become float64.
        c: the discount per step, in ``[0, 1]``: ``γλ`` for GAE (:func:`compute_gae`,
            :func:`compute_gae_episode`), ``γ`` for REINFORCE++'s returns, each factor checked
            by its caller to lie in ``[0, 1]``. Above 1 the weights ``c^{k−t}`` would grow with
            the distance, which no discount does.
        overwrite_x: allow ``x`` to be used as scratch space (True or False).

    Returns:
        ``[..., T]`` array of ``x``'s floating dtype. A NaN or an infinity in ``x`` reaches the
        steps at and before it, never those after it, as in the recursion.

    ValueError for an ``x`` that is not numbers or has no axis, a ``c`` that is not one number
    in ``[0, 1]`` (a bool, a string, NaN and ∞ included), or an ``overwrite_x`` that is not a
    bool.

    Blockwise: split time into ``nb`` blocks of ``L = _BLOCK`` steps. Block ``j``'s own
    contribution to the sum at its first step, ``g_j = Σ_i c^i x_{j,i}``, is one matrix-vector
    product. What block ``j`` receives from everything after it is
    ``c·s_{j+1} = Σ_{k>j} c^{L(k−j−1)+1} g_k``, one small product with an ``nb×nb`` triangle
    (or, for very long ``T``, this function again on the ``g_j``). Adding it to the last step of
    block ``j`` makes every block independent, and then one matrix product with the ``L×L``
    triangle ``W[k, i] = c^{k-i}`` (k ≥ i) finishes all blocks at once.
    """
    (x,) = as_float_arrays(x=x)
    if x.ndim == 0:
        raise ValueError("x must be [..., T] with a time axis, got shape []")
    c = number("c", c, low=0, high=1)
    overwrite_x = flag("overwrite_x", overwrite_x)
    *lead, T = x.shape  # leading (batch) dims, time
    L = _BLOCK
    if c == 0:
        return x.copy()  # y_t = x_t
    if T <= L:
        if not np.isfinite(x).all():
            return _reverse_loop(x, c)
        return x @ _triangle(c, T, x.dtype)
    nb = -(-T // L)  # number of blocks
    if T == nb * L:
        xb = (x if overwrite_x else x.copy()).reshape(-1, L)
    else:
        xb = np.zeros((*lead, nb * L), x.dtype)
        xb[..., :T] = x
        xb = xb.reshape(-1, L)
    pw, cL, hand_on, W = _block_scan(c, nb, x.dtype)
    # g_j = Σ_i c^i x_{j,i}: block j's own contribution to the sum at its first step
    g = (xb @ pw).reshape(-1, nb)
    if not np.isfinite(g).all():
        # an inf or NaN in x (every c^i > 0 here, so it reaches g): the products below would
        # spread it as 0·inf = NaN to every step of its row; the plain recursion does not
        return _reverse_loop(x, c)
    if hand_on is not None:
        # c·s_{j+1} = Σ_{k>j} c^{L(k−j−1)+1} g_k: what block j receives from the blocks after it
        after = g @ hand_on
    else:
        # s_j = g_j + c^L s_{j+1}, the same scan over nb values
        s = reverse_discounted_sum(g, cL)
        after = np.zeros_like(g)
        np.multiply(s[:, 1:], c, out=after[:, :-1])
    # x_{j,L−1} += c·s_{j+1}: hand each block the sum that follows it
    xb[:, L - 1] += after.reshape(-1)
    # y_{j,i} = Σ_{k ≥ i} c^{k−i} x_{j,k} inside each block: one matrix product for all
    y = (xb @ W).reshape(*lead, nb * L)
    return y if T == nb * L else y[..., :T].copy()


def _reverse_loop(x: np.ndarray, c: float) -> np.ndarray:
    """``y_t = x_t + c·y_{t+1}``, one step at a time: for input with inf or NaN, which this
    leaves where the recursion puts them (at and before their step, never after)."""
    y = np.empty_like(x)
    acc = np.zeros(x.shape[:-1], x.dtype)
    for t in range(x.shape[-1] - 1, -1, -1):
        acc = x[..., t] + c * acc
        y[..., t] = acc
    return y


def _runs(real: np.ndarray) -> tuple[int, int, bool]:
    """``(runs, rows with a response token, left padded)`` of a ``[B, T]`` boolean mask.

    A run is a stretch of response tokens; a row with one run is left, right or both-side
    padded, a row with more has holes.
    """
    flat = real.reshape(-1)
    # a run starts where a response token follows padding (True > False), or at flat index 0
    runs = np.count_nonzero(flat[1:] > flat[:-1]) + int(flat[0])
    # a run that ends one row and one that starts the next are joined in the flat array
    runs += np.count_nonzero(real[:-1, -1] & real[1:, 0])
    rows = np.count_nonzero(real.any(axis=1))
    return runs, rows, np.count_nonzero(real[:, 0]) != rows


def _bits(real: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """All bits set on response tokens, none on padding, as integers as wide as ``dtype``.

    ``x AND bits`` is ``x`` on response tokens and +0.0 on padding whatever padding held: NaN
    and inf too, which multiplying by the mask would not clear (NaN·0 is NaN).
    """
    # −1 in int8 (all bits set), then widened: −1 stays all bits set
    return np.negative(real.view(np.int8)).astype(f"i{dtype.itemsize}")


def _gae_one_run(r, v, bits, left_padded: bool, gamma: float, lam: float):
    """GAE when each row's response tokens are one run: Â = 0 and R = 0 on padding."""
    # V and r with padding zeroed; then V(s_{t+1}) = 0 after the last token of a run
    vz = np.bitwise_and(v.view(bits.dtype), bits).view(v.dtype)
    delta = np.bitwise_and(r.view(bits.dtype), bits).view(r.dtype)
    # δ_t = r_t − V(s_t) + γ V(s_{t+1})  (the shift on the flat array is fast; fixed below)
    delta -= vz
    last = delta[:, -1].copy()  # the last column bootstraps from 0, not from the next row
    flat_delta, flat_vz = delta.reshape(-1), vz.reshape(-1)
    flat_delta[:-1] += flat_vz[1:] if gamma == 1 else gamma * flat_vz[1:]
    delta[:, -1] = last
    # Â_t = δ_t + γλ Â_{t+1}
    adv = reverse_discounted_sum(delta, gamma * lam, overwrite_x=True)
    # right padding stays 0 (δ = 0 there and after it); left padding before a run does not
    if left_padded:
        np.bitwise_and(adv.view(bits.dtype), bits, out=adv.view(bits.dtype))
    # R_t = Â_t + V(s_t), 0 + 0 on padding
    ret = np.add(adv, vz, out=vz)
    return adv, ret


def compute_gae(rewards, values, mask, gamma: float = 1.0, lam: float = 0.95):
    r"""GAE over a batch of token sequences.

    $$\delta_t = r_t + \gamma V_{t'} - V_t,\qquad \hat A_t = \delta_t + \gamma\lambda \hat A_{t'},
      \qquad R_t = \hat A_t + V_t$$

    where $t'$ is the next response token after $t$ in the same row ($V_{t'} = \hat A_{t'} = 0$
    after the last one).

    Args:
        rewards: ``[B, T]`` token rewards (KL penalty on every token, RM score on the last).
        values: ``[B, T]`` critic values.
        mask: ``[B, T]``, 1 on response tokens.
        gamma: discount γ in ``[0, 1]`` (1.0 for language tasks).
        lam: GAE λ in ``[0, 1]``.

    Returns:
        ``(advantages, returns)``, both ``[B, T]``; both 0 on padding. A row with no response
        token is all zeros.

    No padding leaks into a response token: the result on a row's response tokens equals the
    result on those tokens alone, whatever the layout. The source material's loop takes
    ``values[:, t+1]`` and the padded rewards as they are, so with right padding the last response
    token bootstraps from a padded value.

    verl 0.9.1's ``compute_gae_advantage_return`` carries the running value and advantage
    through masked positions, as here, so its returns agree on every layout, holes included; it
    then whitens the advantages (``masked_whiten``) before returning them, where this reference
    returns them unwhitened (``masked_whiten(advantages, mask)`` gives verl's on response
    tokens). OpenRLHF 0.11.2's ``get_advantages_and_returns`` zeroes values and rewards on
    padding and then uses ``values[:, t+1]``: right for right- and left-padded rows, not for
    rows with holes (the token before a hole bootstraps from 0 and the advantage after it is
    discounted across the hole). TRL's last PPOTrainer (TRL 1.12.0) runs the same recursion with
    ``values[:, t+1]`` over the response and one position after it, where it puts the score: its
    last response token bootstraps from the critic's value at that position; it whitens the
    advantages over the response tokens.
    """
    r, v, real = token_arrays(rewards=rewards, values=values, mask=mask)
    gamma, lam = number("gamma", gamma, low=0, high=1), number("lam", lam, low=0, high=1)
    if r.size == 0:
        return np.zeros_like(r), np.zeros_like(r)
    # the δ shift works in place on flat views of the rows: C order (free for the usual arrays)
    r, v, real = np.ascontiguousarray(r), np.ascontiguousarray(v), np.ascontiguousarray(real)
    runs, rows_with_tokens, left_padded = _runs(real)
    if runs == rows_with_tokens:  # one run per non-empty row: left, right or both-side padding
        return _gae_one_run(r, v, _bits(real, r.dtype), left_padded, gamma, lam)
    # Holes inside a row: move each row's response tokens to the front (stable), solve, put back.
    rows, cols = np.nonzero(real)
    rank = np.cumsum(real, axis=1)[rows, cols] - 1  # position among the row's response tokens
    r_p, v_p = np.zeros_like(r), np.zeros_like(v)
    real_p = np.zeros_like(real)
    r_p[rows, rank], v_p[rows, rank], real_p[rows, rank] = r[rows, cols], v[rows, cols], True
    adv_p, ret_p = _gae_one_run(r_p, v_p, _bits(real_p, r.dtype), False, gamma, lam)
    adv, ret = np.zeros_like(r), np.zeros_like(r)
    adv[rows, cols] = adv_p[rows, rank]
    ret[rows, cols] = ret_p[rows, rank]
    return adv, ret


def compute_gae_episode(
    rewards, values, next_value=0.0, gamma: float = 0.99, gae_lambda: float = 0.95, dones=None
):
    r"""GAE over one trajectory of ``T`` steps, as in the s21 exercise.

    $$\delta_t = r_t + \gamma (1 - d_t) V_{t+1} - V_t,\qquad
      \hat A_t = \delta_t + \gamma\lambda (1 - d_t) \hat A_{t+1},\qquad R_t = \hat A_t + V_t$$

    with $V_T$ = ``next_value``.

    Args:
        rewards: ``[T]`` rewards.
        values: ``[T]`` critic values ``V(s_t)``.
        next_value: ``V(s_T)``, the value of the state after the last step. Pass 0 when the
            trajectory ended there; pass the critic's estimate of ``s_T`` when it was cut off.
            (The source material says "otherwise ``values[-1]``": that is ``V(s_{T-1})``, the
            value of the last visited state, not of the next one.)
        gamma: discount γ in ``[0, 1]``.
        gae_lambda: λ in ``[0, 1]``.
        dones: optional ``[T]`` of 0/1; ``dones[t] = 1`` means the episode ended after step ``t``:
            no bootstrap from ``t+1`` and no carry of later advantages into ``t``.

    Returns:
        ``(advantages, returns)``, both ``[T]``.

    CleanRL's PPO stores ``dones[t]`` as "the observation at step t starts a new episode" and
    cuts with ``1 − dones[t+1]`` (``next_done`` for the last step); its ``dones[1:]`` followed by
    ``next_done`` is this function's ``dones``. The LLM libraries need no
    ``dones``: one response is one episode, see :func:`compute_gae`.
    """
    r, v = as_float_arrays(rewards=rewards, values=values)
    check_same_shape(rewards=r, values=v)
    check_ndim(1, rewards=r)
    gamma = number("gamma", gamma, low=0, high=1)
    gae_lambda = number("gae_lambda", gae_lambda, low=0, high=1)
    next_value = number("next_value", next_value)
    (T,) = r.shape  # steps
    # V(s_{t+1}), with V(s_T) = next_value
    v_next = np.append(v[1:], np.asarray(next_value, r.dtype))
    done = np.zeros(T, bool)
    if dones is not None:
        (d,) = as_float_arrays(dones=dones)
        check_same_shape(rewards=r, dones=d)
        done = bool_mask(d, "dones")
        # no bootstrap past an episode's end: V(s_{t+1}) counts as 0 there, whatever it holds
        v_next[done] = 0
    # δ_t = r_t + γ(1 − d_t)V(s_{t+1}) − V(s_t)
    delta = r + gamma * v_next - v
    if not done.any():
        adv = reverse_discounted_sum(delta, gamma * gae_lambda)
    else:
        # Â_t = δ_t + γλ(1 − d_t)Â_{t+1}: the discount changes at episode ends; walk back in time
        adv = np.empty_like(delta)
        gae = 0.0
        for t in range(T - 1, -1, -1):
            gae = delta[t] + (0.0 if done[t] else gamma * gae_lambda * gae)
            adv[t] = gae
    return adv, adv + v
