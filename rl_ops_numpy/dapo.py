r"""DAPO's data side: the soft overlong penalty added to each response's score, and the dynamic
sampling filter that drops the groups whose scores are all equal.

Neither touches a loss: both act on the ``[N]`` scores of ``N = groups × group_size`` sampled
responses (each group contiguous, the ``group_size`` responses to one prompt side by side, as
:func:`group_advantages` takes them) before the advantages are computed.

What the docstrings say about verl, TRL and OpenRLHF is true of the versions pinned in
``peers/pins.toml`` (verl 0.9.1, TRL 1.16.0, OpenRLHF 0.11.2) and tested against their own code:
``make peers`` runs the libraries' code and ``tests/test_peers.py`` compares these references
with the results, including each difference stated here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validate import as_float_arrays, check_ndim, number
from .grpo import _constant, _groups

__all__ = ["informative_groups", "overlong_penalty"]


def overlong_penalty(
    lengths: npt.ArrayLike,
    max_length: float,
    buffer: float,
    factor: float = 1.0,
) -> np.ndarray:
    r"""DAPO's soft overlong punishment of each response, added to its score.

    $$R_{\text{len}}(L) = \begin{cases}
      0, & L \le L_{\max} - L_{\text{buf}} \\[2pt]
      f\,\dfrac{(L_{\max} - L_{\text{buf}}) - L}{L_{\text{buf}}},
        & L_{\max} - L_{\text{buf}} < L \le L_{\max}
      \end{cases}$$

    a linear ramp from 0 at $L_{\max} - L_{\text{buf}}$ down to $-f$ at $L_{\max}$ (DAPO, Yu et
    al. 2025, Eq. 13, with $f = 1$, $L_{\max} = 20480$, $L_{\text{buf}} = 4096$).

    Args:
        lengths: ``[N]`` response lengths in tokens, the EOS included when the response has one
            (what the generation budget counts), each in ``[0, max_length]``.
        max_length: $L_{\max} > 0$, the most tokens the sampler may generate (its
            ``max_new_tokens``); a truncated response has exactly this length.
        buffer: $L_{\text{buf}}$ in ``(0, max_length]``, the last tokens before $L_{\max}$
            over which the penalty ramps.
        factor: $f \ge 0$, the penalty at $L_{\max}$.

    Returns:
        ``[N]`` penalties in ``[−factor, 0]``, of ``lengths``' floating dtype (float64 for
        integer lengths).

    ValueError if ``lengths`` is not ``[N]``, a length is negative, not finite or above
    ``max_length``, or a parameter is out of its range.

    **Beyond** ``max_length`` **it raises.** A sampler capped at $L_{\max}$ cannot return
    more tokens, so a longer length means ``max_length`` is not the sampler's cap (a common
    slip: counting the prompt's tokens too). The three libraries also disagree there, so no
    value would be "the" convention: verl 0.9.1 keeps the ramp going below $-f$, OpenRLHF
    0.11.2 stops it at $-f$, TRL 1.16.0 returns $-1$ whatever the length.

    verl 0.9.1's DAPO reward manager (``verl/workers/reward_manager/dapo.py``,
    ``DAPORewardManager.__call__``, and the same lines in
    ``verl/experimental/reward_loop/reward_manager/dapo.py``, ``run_single``; chosen by
    ``reward.reward_manager.name: dapo``, default "naive"; config
    ``reward.reward_kwargs.overlong_buffer_cfg``: ``enable``, ``len``, ``penalty_factor``,
    ``log``, with ``reward.reward_kwargs.max_resp_len``) computes
    ``min(-(L − (max_resp_len − len)) / len · penalty_factor, 0)`` with ``L`` the sum of the
    response's attention mask (a torch integer, so the penalty is a float32), and adds it to the
    score. It asserts ``len > 0`` and ``max_resp_len ≥ len`` and has no cap: beyond
    ``max_resp_len`` the penalty keeps falling below ``−penalty_factor``. OpenRLHF 0.11.2's
    ``apply_overlong_penalty`` (``--reward.overlong_buffer_len``, default None: off;
    ``--reward.overlong_penalty_factor``, default 1) computes
    ``−min(L − (max_new_tokens − buffer), buffer) / buffer · factor`` where positive, with
    ``L`` the span of the action mask, so it stops at ``−factor``; its ``max_new_tokens`` is
    ``--rollout.max_new_tokens``, or ``--data.max_len`` (prompt and response, default 2048) when
    that is None, its default, while ``L`` counts the response alone. TRL 1.16.0's reward
    function ``trl.rewards.get_soft_overlong_punishment(max_completion_len,
    soft_punish_cache)`` computes the formula above with $f = 1$ and
    ``L = len(completion_ids)``, and ``−1`` beyond ``max_completion_len`` (its weight among
    the reward functions, ``reward_weights``, plays the part of $f$); DAPO's other remedy,
    leaving truncated responses out of the loss, is its ``mask_truncated_completions`` (default
    False).
    """
    (L,) = as_float_arrays(lengths=lengths)
    check_ndim(1, shape="[N]", lengths=L)
    L_max = number("max_length", max_length, low=0, above=True)
    L_buf = number("buffer", buffer, low=0, above=True)
    if L_buf > L_max:
        raise ValueError(f"buffer must be in (0, max_length = {L_max:g}], got {L_buf!r}")
    f = number("factor", factor, low=0)
    x = L.astype(np.float64)  # [N]
    if not np.isfinite(x).all() or (x < 0).any():
        first = float(x[~(np.isfinite(x) & (x >= 0))][0])
        raise ValueError(f"lengths must be finite numbers >= 0, found {first!r}")
    if (x > L_max).any():
        first = float(x[x > L_max][0])
        raise ValueError(
            f"lengths must be at most max_length = {L_max:g}, found {first!r}: a sampler "
            "capped at max_length cannot return more tokens, so max_length is not its cap "
            "(are the prompt's tokens counted too?)"
        )
    # L_max − L_buf: up to this length nothing is taken away
    expected = L_max - L_buf
    # (L_max − L_buf) − L where it is negative: how far into the buffer, as a negative number
    over = np.minimum(expected - x, 0.0)  # [N]
    # R_len = f · ((L_max − L_buf) − L) / L_buf, from 0 down to −f at L = L_max
    penalty = over / L_buf * f  # [N]
    return penalty.astype(L.dtype, copy=False)


def informative_groups(scores: npt.ArrayLike, group_size: int) -> np.ndarray:
    r"""DAPO's dynamic sampling: which responses belong to a group that carries a learning
    signal.

    $$\text{keep}_i = \big[\exists\, j \in g(i):\ s_j \ne s_i\big]$$

    False for every response of a group whose scores are all equal, True for the others. A
    group-relative advantage (GRPO, Dr. GRPO, RLOO; :func:`group_advantages` sets it to exactly
    0 by the same test) is 0 for every response of such a group, so its policy gradient is 0:
    DAPO drops these groups and samples more prompts until the batch is full of the others.

    Args:
        scores: ``[N]`` one score per response, ``N = groups × group_size``, the responses of
            each group side by side.
        group_size: ``G ≥ 2``, responses sampled per prompt; ``N`` must be a multiple of it.

    Returns:
        ``[N]`` bool: True where the response's group has at least two different scores.

    ValueError if ``scores`` is not ``[N]`` or holds a NaN or an infinity, if ``group_size``
    is not an integer ≥ 2 or ``N`` is not a multiple of it.

    "All equal" is exact equality of the scores, with no tolerance: a score that differs, by
    however little, is a signal, and a tolerance would need a unit the scores do not have. It
    is tested on the scores themselves, not as ``std == 0``: the std of equal floats is not
    always 0 (three float64 copies of 0.1 have ``np.std`` 1.4e-17, their mean being rounded).

    verl 0.9.1 filters in its V1 replay buffer (``verl/trainer/ppo/v1/replay_buffer.py``,
    ``ReplayBuffer._dapo_filtered_keys``; config ``algorithm.filter_groups``: ``enable``
    False, ``metric`` "reward", ``max_num_gen_batches`` 0, ignored there, and
    ``max_inflight_gen_batches`` 1), evicting a group when ``len(values) > 1 and
    float(np.std(values)) == 0.0`` and asking for a new prompt in its place. Its values are the
    metric in float64: "reward" sums the float32 ``rm_scores`` (the score after the overlong
    penalty), for which that test is exact; a metric from ``reward_extra_info`` (such as "acc",
    the score before the penalty) can hold equal values whose std is not 0, and verl keeps that
    group (here it is dropped). A group of one response is kept (here it raises). OpenRLHF
    0.11.2 (``SamplesGenerator._generate_vllm``, ``--algo.dynamic_filtering_enable``) keeps a
    group when ``min_r < mean(scores) < max_r`` (``--algo.dynamic_filtering_range``, default
    ``(0, 1)``): the same as here for scores of 0 and 1 only; with ±1 scores and the default
    range it drops every group whose mean is not above 0, informative or not. TRL 1.16.0 does
    not filter; it logs ``frac_reward_zero_std``, the share of groups whose std is
    ``torch.isclose`` to 0.
    """
    s, g = _groups(scores, group_size)  # [N], float64 [groups, G]
    if not np.isfinite(g).all():
        first = float(g[~np.isfinite(g)][0])
        raise ValueError(f"scores must be finite numbers, found {first!r}")
    G = g.shape[1]  # responses per prompt
    # [groups, 1]: True where every s_j of the group equals its first
    flat = _constant(g)
    # keep_i = not flat_{g(i)}, one flag per response
    return np.repeat(~flat, G, axis=1).reshape(s.shape)
