"""Figures a reader can move: each one's numbers computed at build time by the ``rl_ops_numpy``
references, over the grid of every value its controls can take; ``js/figure.js`` draws them.

    <!-- rl:figure clip -->    on a page: the figure ``clip`` (FIGURES), in the page's language

A figure is an x axis, one or more controls (a slider over a few values, or a choice between a
few), and series: for every combination of the controls' values, ``compute`` calls the
references and returns one y array per series. Nothing is computed in JavaScript: the browser
picks the precomputed combination the controls name.

The build writes each figure's numbers to ``assets/figures/<id>.json`` (:func:`data`)::

    {"shape": [n_1, …, n_k],          # the number of values of each control, in page order
     "x": [x_0, …],                    # shared by every combination
     "ys": [[[y, …] per series] per combination, the controls' indices in row-major order],
     "y": [low, high] or null}         # a y range shared by every combination (the figure's
                                       # own, or the data's), or null: each fits its own

(:func:`numbers`; the page asks for them by their digest, :func:`version`, so no cache hands it
an older build's, and js/figure.js refuses numbers whose shape is not its controls'), and the
page gets the figure's markup (:func:`figure_html`): caption, the
controls as real ``<input>`` elements (labelled, each value's text as ``aria-valuetext``), and an
empty plot box. The numbers and the chart library are fetched only when the figure nears the
viewport (js/figure.js). y values are rounded to 7 significant digits (float32's precision); a
value that is not finite is ``null`` (a gap).
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np

from .languages import LANGUAGES

Text = dict[str, str]  # one text per language


@dataclass(frozen=True)
class Control:
    """A slider over ``values`` (kind "range") or a choice between them (kind "choice")."""

    key: str  # the name compute() gets the value by
    label: Text
    values: tuple[object, ...]
    texts: tuple[Text | str, ...]  # what each value reads as (a str: the same in every language)
    start: int = 0  # the index shown first
    kind: str = "range"

    def text(self, i: int, lang: str) -> str:
        t = self.texts[i]
        return t if isinstance(t, str) else t[lang]


@dataclass(frozen=True)
class Series:
    label: Text | str
    dash: bool = False  # a reference line, drawn dashed

    def text(self, lang: str) -> str:
        return self.label if isinstance(self.label, str) else self.label[lang]


@dataclass(frozen=True)
class Figure:
    id: str
    caption: Text
    x_label: Text | str
    y_label: Text | str
    x: np.ndarray
    controls: tuple[Control, ...]
    series: tuple[Series, ...]
    compute: Callable[..., Sequence[np.ndarray]]  # (**{key: value}) -> one y array per series
    shared_y: bool = True  # one y range for every combination (False: each fits its own)
    y_range: tuple[float, float] | None = None  # that range, fixed (what leaves it is cut off)
    log_y: bool = False
    points: bool = False  # mark each point (a few discrete x values)

    def combinations(self):
        """Every combination of the controls' values as keyword arguments, in row-major order."""
        for values in product(*(c.values for c in self.controls)):
            yield {c.key: v for c, v in zip(self.controls, values, strict=True)}


def _texts(values: Sequence[float]) -> tuple[str, ...]:
    return tuple(f"{v:g}" for v in values)


def _round(v: float) -> float | None:
    return float(f"{v:.7g}") if math.isfinite(v) else None


def data(figure: Figure) -> dict:
    """The figure's numbers: every combination's series, computed by the references."""
    ys = []
    for params in figure.combinations():
        series = [np.asarray(y, dtype=np.float64) for y in figure.compute(**params)]
        if len(series) != len(figure.series) or any(y.shape != figure.x.shape for y in series):
            raise ValueError(f"figure {figure.id}: compute({params}) gave "
                             f"{[y.shape for y in series]}, not {len(figure.series)} series "
                             f"shaped like x {figure.x.shape}")
        ys.append([[_round(v) for v in y] for y in series])
    y_range = None
    if figure.y_range is not None:
        y_range = list(figure.y_range)
    elif figure.shared_y:
        finite = [v for combo in ys for y in combo for v in y if v is not None]
        y_range = [min(finite), max(finite)]
    return {"shape": [len(c.values) for c in figure.controls],
            "x": [_round(v) for v in figure.x], "ys": ys, "y": y_range}


@functools.cache
def numbers(figure_id: str) -> str:
    """The figure's numbers as the JSON file the site serves (:func:`data`), computed once."""
    return json.dumps(data(FIGURES[figure_id]), separators=(",", ":"), allow_nan=False)


def version(figure_id: str) -> str:
    """A digest of the figure's numbers: the ``?v=`` its page asks for them by, so no browser or
    host cache hands a page an older build's numbers (a static host ignores the query, so a page
    left open across a deploy can still get the newer file: js/figure.js checks its shape)."""
    return hashlib.sha256(numbers(figure_id).encode()).hexdigest()[:16]


def figure_html(figure: Figure, lang: str) -> str:
    """The figure's markup in ``lang``: caption, controls and the box js/figure.js draws in."""
    e = html.escape
    base = f"rl-fig-{figure.id}"
    controls = []
    for c in figure.controls:
        name = f"{base}-{c.key}"
        texts = [c.text(i, lang) for i in range(len(c.values))]
        listed = e(json.dumps(texts, ensure_ascii=False, separators=(",", ":")))
        if c.kind == "range":
            controls.append(
                f'<div class="rl-figure-control"><label for="{name}">{e(c.label[lang])}</label>'
                f'<input type="range" id="{name}" data-key="{e(c.key)}" min="0" '
                f'max="{len(c.values) - 1}" step="1" value="{c.start}" '
                f'aria-valuetext="{e(texts[c.start])}" data-texts="{listed}">'
                f'<output for="{name}">{e(texts[c.start])}</output></div>'
            )
        else:
            options = "".join(
                f'<label><input type="radio" name="{name}" data-key="{e(c.key)}" value="{i}"'
                f'{" checked" if i == c.start else ""}> {e(t)}</label>'
                for i, t in enumerate(texts)
            )
            controls.append(f'<fieldset class="rl-figure-control"><legend>{e(c.label[lang])}'
                            f"</legend>{options}</fieldset>")
    series = [{"label": s.text(lang), "dash": s.dash} for s in figure.series]
    options = {"series": series, "x": _label(figure.x_label, lang),
               "y": _label(figure.y_label, lang), "log": figure.log_y, "points": figure.points}
    payload = e(json.dumps(options, ensure_ascii=False, separators=(",", ":")))
    return (
        f'<div class="rl-figure" data-figure="{e(figure.id)}" data-version="{version(figure.id)}" '
        f'data-options="{payload}">\n'
        f'<p class="rl-figure-caption" id="{base}-caption">{e(figure.caption[lang])}</p>\n'
        f'<div class="rl-figure-controls">{"".join(controls)}</div>\n'
        f'<div class="rl-figure-plot" role="img" aria-labelledby="{base}-caption"></div>\n'
        '<p class="rl-figure-status" aria-live="polite"></p>\n'
        "</div>\n"
    )


def _label(text: Text | str, lang: str) -> str:
    return text if isinstance(text, str) else text[lang]


# ---- the figures -----------------------------------------------------------------------------


def _clip(sign: float, eps_low: float, eps_high: float, dual: float) -> list[np.ndarray]:
    from rl_ops_numpy import grpo_policy_loss

    def loss(ratio: float, **clip) -> float:
        # one token: log ρ = log π_θ − log π_old, its advantage Â = sign
        return grpo_policy_loss([[math.log(ratio)]], [[0.0]], [sign], [[1]], **clip)

    dual_clip = None if dual == 0 else dual
    clipped = [loss(r, clip_low=eps_low, clip_high=eps_high, dual_clip=dual_clip) for r in CLIP_X]
    # no clip: ε so large that clip(ρ, 1 − ε, 1 + ε) = ρ on the axis
    plain = [loss(r, clip_low=1e6, clip_high=1e6) for r in CLIP_X]
    return [np.array(clipped), np.array(plain)]


# ρ from 0.1 to 4 in steps of 0.1, and every kink the controls can put elsewhere (1 − ε_low,
# 1 + ε_high): the loss is piecewise linear in ρ, so straight lines between these are exact
CLIP_LOW, CLIP_HIGH, DUAL = (0.1, 0.2, 0.3), (0.2, 0.28, 0.4), (0.0, 2.0, 3.0)
CLIP_X = np.unique(np.round(np.concatenate([
    np.arange(1, 41) / 10, [1 - e for e in CLIP_LOW], [1 + e for e in CLIP_HIGH]]), 6))


def _kl(view: str) -> list[np.ndarray]:
    from rl_ops_numpy import kl_estimators

    # x = log π_θ − log π_ref; the estimators take p = π_ref, q = π_θ (the sampler)
    def k(x: np.ndarray) -> tuple[np.ndarray, ...]:
        return kl_estimators(np.zeros_like(x), x)

    if view == "value":
        return list(k(KL_X))
    # d k / d log π_θ, by a central difference of the reference (error ~h², 1e-8 here)
    h = 1e-4
    return [(a - b) / (2 * h) for a, b in zip(k(KL_X + h), k(KL_X - h), strict=True)]


KL_X = np.linspace(-2, 2, 81)


def gae_response(T: int) -> tuple[np.ndarray, np.ndarray]:
    """The GAE figure's response of ``T`` tokens: its token rewards and its critic's values."""
    t = np.arange(T)
    # reward: a small KL penalty on every token, the reward model's score (1) on the last
    rewards = -0.02 * (1 + np.sin(t))
    rewards[-1] += 1.0
    # a critic that grows more confident as the answer unfolds, with some noise
    values = 0.3 + 0.4 * t / (T - 1) + 0.1 * np.cos(1.3 * t)
    return rewards, values


def _gae(lam: float, gamma: float) -> list[np.ndarray]:
    from rl_ops_numpy import compute_gae

    T = len(GAE_X)  # response length
    rewards, values = gae_response(T)
    mask = np.ones(T)

    def adv(lam_: float) -> np.ndarray:
        return compute_gae(rewards[None], values[None], mask[None], gamma=gamma, lam=lam_)[0][0]

    return [adv(lam), adv(0.0), adv(1.0)]


GAE_X = np.arange(16, dtype=np.float64)


def _aggregation(others: int, view: str) -> list[np.ndarray]:
    from rl_ops_numpy import aggregate_loss
    from rl_ops_numpy.grpo import LOSS_AGG_MODES

    out = []
    for mode in LOSS_AGG_MODES:
        ys = []
        for length in AGG_X.astype(int):
            # four responses: the first `length` tokens long, the other three `others` long
            lengths = [length, others, others, others]
            mask = np.arange(AGG_HORIZON)[None, :] < np.array(lengths)[:, None]
            loss = np.zeros(mask.shape)
            if view == "token":
                loss[0, 0] = 1.0  # the weight of one token of the first response
            else:
                loss[0] = 1.0  # the weight of the whole first response
            horizon = {"horizon": AGG_HORIZON} if mode == "seq-mean-token-sum-norm" else {}
            ys.append(aggregate_loss(loss, mask, mode, **horizon))
        out.append(np.array(ys))
    return out


AGG_HORIZON = 512  # the maximum response length, Dr. GRPO's constant
AGG_X = np.arange(8, AGG_HORIZON + 1, 8, dtype=np.float64)


def _group(size: int, estimator: str) -> list[np.ndarray]:
    from rl_ops_numpy import group_advantages, rloo_advantages

    right, wrong = np.full(GROUP_X.shape, np.nan), np.full(GROUP_X.shape, np.nan)
    for k in range(size + 1):  # k of the group's `size` answers right (score 1), the rest 0
        scores = np.array([1.0] * k + [0.0] * (size - k))
        if estimator == "rloo":
            adv = rloo_advantages(scores, size)
        else:
            adv = group_advantages(scores, size, scale_by_std=estimator == "grpo")
        i = round(k / size * GROUP_MAX)
        if k > 0:
            right[i] = adv[0]
        if k < size:
            wrong[i] = adv[-1]
    return [right, wrong]


GROUP_SIZES = (2, 4, 8, 16)
GROUP_MAX = max(GROUP_SIZES)
GROUP_X = np.arange(GROUP_MAX + 1) / GROUP_MAX  # the share of right answers


def _rollout(cap: float) -> list[np.ndarray]:
    from rl_ops_numpy import rollout_is_weights

    # one response whose tokens have the weights w = π_train / π_rollout of the x axis
    train = np.log(ROLLOUT_X)[None]  # [1, N]
    rollout, mask = np.zeros_like(train), np.ones_like(train)
    plain = rollout_is_weights(train, rollout, mask, threshold=1e9)[0]
    tis = rollout_is_weights(train, rollout, mask, threshold=cap)[0]
    icepop = rollout_is_weights(train, rollout, mask, threshold=(1 / cap, cap))[0]
    return [tis, icepop, plain]


ROLLOUT_CAPS = (1.5, 2.0, 3.0, 5.0)
ROLLOUT_X = np.round(np.arange(1, 121) / 20, 6)  # w from 0.05 to 6


def _margin_losses(beta: float) -> list[np.ndarray]:
    from rl_ops_numpy import preference_loss

    # one pair per margin Δ on the axis: the whole margin on the chosen side, lengths of 1
    delta, zero, ones = DPO_X, np.zeros_like(DPO_X), np.ones_like(DPO_X)
    return [preference_loss(t, delta, zero, zero, zero, beta=beta, chosen_lengths=ones,
                            rejected_lengths=ones, **MARGIN_SETTINGS.get(t, {}))
            for t in MARGIN_TYPES]


MARGIN_TYPES = ("sigmoid", "hinge", "ipo", "robust", "exo_pair", "discopop")
MARGIN_SETTINGS = {"robust": {"label_smoothing": 0.1}, "exo_pair": {"label_smoothing": 0.1}}
DPO_X = np.round(np.arange(-40, 61) / 10, 6)  # Δ, or r_w, from −4 to 6
DPO_BETAS = (0.5, 1.0, 2.0)


def _anchored_losses(r_l: float, beta: float) -> list[np.ndarray]:
    from rl_ops_numpy import preference_loss

    # one pair per chosen log-ratio r_w on the axis, the rejected one's r_l
    r_w, zero = DPO_X, np.zeros_like(DPO_X)
    return [preference_loss(t, r_w, zero + r_l, zero, zero, beta=beta) for t in ANCHORED_TYPES]


ANCHORED_TYPES = ("sigmoid", "bco_pair", "nca_pair", "sppo_hard", "apo_zero", "apo_down")
REJECTED = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0)  # SPPO's least value, (r_l + 1/(2β))², stays in view


def _loss_modes() -> tuple[Series, ...]:
    from rl_ops_numpy.grpo import LOSS_AGG_MODES

    return tuple(Series(mode) for mode in LOSS_AGG_MODES)


FIGURES = {f.id: f for f in (
    Figure(
        id="clip",
        caption={
            "en": "One token's clipped loss −min(ρÂ, clip(ρ, 1−ε_low, 1+ε_high)Â) against the "
                  "ratio ρ, beside the unclipped −ρÂ. Where the line is flat the clip has "
                  "stopped the gradient; dual clip caps the loss of Â < 0 at c·|Â|.",
            "zh": "单个 token 的裁剪损失 −min(ρÂ, clip(ρ, 1−ε_low, 1+ε_high)Â) 随比率 ρ 的变化，"
                  "虚线是不裁剪的 −ρÂ。曲线变平的地方，裁剪截断了梯度；dual clip 把 Â < 0 的损失"
                  "封顶在 c·|Â|。",
        },
        x_label={"en": "ratio ρ = π_θ / π_old", "zh": "比率 ρ = π_θ / π_old"},
        y_label={"en": "loss", "zh": "损失"},
        x=CLIP_X,
        controls=(
            Control("sign", {"en": "Advantage", "zh": "优势"}, (1.0, -1.0),
                    ("Â = +1", "Â = −1"), kind="choice"),
            Control("eps_low", {"en": "ε_low", "zh": "ε_low"}, CLIP_LOW, _texts(CLIP_LOW), 1),
            Control("eps_high", {"en": "ε_high", "zh": "ε_high"}, CLIP_HIGH, _texts(CLIP_HIGH)),
            Control("dual", {"en": "dual clip c", "zh": "dual clip c"}, DUAL,
                    ({"en": "off", "zh": "关"}, "2", "3")),
        ),
        series=(Series({"en": "clipped loss", "zh": "裁剪后的损失"}),
                Series({"en": "unclipped −ρÂ", "zh": "不裁剪 −ρÂ"}, dash=True)),
        compute=_clip,
    ),
    Figure(
        id="kl",
        caption={
            "en": "The three KL estimators against the log-ratio log π_θ − log π_ref of one "
                  "token, and their gradients with respect to log π_θ.",
            "zh": "三个 KL 估计器随单个 token 的对数比 log π_θ − log π_ref 的变化，以及它们对 "
                  "log π_θ 的梯度。",
        },
        x_label="log π_θ − log π_ref",
        y_label={"en": "value or gradient", "zh": "值或梯度"},
        x=KL_X,
        controls=(Control("view", {"en": "Show", "zh": "显示"}, ("value", "gradient"),
                          ({"en": "value", "zh": "值"}, {"en": "gradient", "zh": "梯度"}),
                          kind="choice"),),
        series=(Series("k1"), Series("k2"), Series("k3")),
        compute=_kl,
        shared_y=False,
    ),
    Figure(
        id="gae",
        caption={
            "en": "GAE advantages of a 16-token response (a reward of 1 on the last token, a "
                  "small KL penalty on each, a noisy critic) for the λ you choose, beside λ = 0 "
                  "(one-step TD errors) and λ = 1 (return minus value).",
            "zh": "一条 16 个 token 的回复的 GAE 优势（最后一个 token 得到奖励 1，每个 token 有"
                  "一点 KL 惩罚，critic 有噪声），你选的 λ，以及 λ = 0（单步 TD 误差）和 λ = 1"
                  "（回报减价值）。",
        },
        x_label={"en": "token t", "zh": "token 位置 t"},
        y_label={"en": "advantage Â_t", "zh": "优势 Â_t"},
        x=GAE_X,
        controls=(
            Control("lam", {"en": "λ", "zh": "λ"}, tuple(np.round(np.linspace(0, 1, 21), 2)),
                    _texts(np.round(np.linspace(0, 1, 21), 2)), 19),
            Control("gamma", {"en": "γ", "zh": "γ"}, (0.9, 0.95, 0.99, 1.0),
                    _texts((0.9, 0.95, 0.99, 1.0)), 3),
        ),
        series=(Series({"en": "Â_t (your λ)", "zh": "Â_t（你选的 λ）"}),
                Series("λ = 0", dash=True), Series("λ = 1", dash=True)),
        compute=_gae,
        points=True,
    ),
    Figure(
        id="rollout",
        caption={
            "en": "The weight a token's loss gets against its importance ratio w = π_train / "
                  "π_rollout: TIS truncates it at C, IcePop keeps it only inside the band "
                  "[1/C, C] and drops the token outside (a weight of 0).",
            "zh": "token 的损失得到的权重随它的重要性比 w = π_train / π_rollout 的变化：TIS 在 C "
                  "处截断，IcePop 只保留带 [1/C, C] 之内的，带外的 token 直接丢掉（权重为 0）。",
        },
        x_label={"en": "token ratio w = π_train / π_rollout",
                 "zh": "token 的比 w = π_train / π_rollout"},
        y_label={"en": "weight", "zh": "权重"},
        x=ROLLOUT_X,
        controls=(Control("cap", {"en": "C", "zh": "C"}, ROLLOUT_CAPS, _texts(ROLLOUT_CAPS), 1),),
        series=(Series("TIS min(w, C)"), Series("IcePop w·1[1/C ≤ w ≤ C]"),
                Series({"en": "untruncated w", "zh": "不截断的 w"}, dash=True)),
        compute=_rollout,
    ),
    Figure(
        id="aggregation",
        caption={
            "en": "How much each aggregation mode weighs the first of four responses as its "
                  "length grows, the other three of a fixed length: one of its tokens, or the "
                  f"whole response (log scale; seq-mean-token-sum-norm divides by "
                  f"{AGG_HORIZON}).",
            "zh": "四条回复中，第一条的长度变化时（另外三条长度固定），每种聚合方式给它的权重："
                  "它的一个 token，或整条回复（对数坐标；seq-mean-token-sum-norm 除以 "
                  f"{AGG_HORIZON}）。",
        },
        x_label={"en": "length of the first response", "zh": "第一条回复的长度"},
        y_label={"en": "weight in the loss", "zh": "在损失中的权重"},
        x=AGG_X,
        controls=(
            Control("others", {"en": "length of the other three", "zh": "另外三条的长度"},
                    (16, 64, 256), ("16", "64", "256"), 1),
            Control("view", {"en": "Weight of", "zh": "权重"}, ("token", "response"),
                    ({"en": "one token", "zh": "一个 token"},
                     {"en": "the whole response", "zh": "整条回复"}), kind="choice"),
        ),
        series=_loss_modes(),
        compute=_aggregation,
        shared_y=False,
        log_y=True,
    ),
    Figure(
        id="group",
        caption={
            "en": "The advantage of a right answer (score 1) and of a wrong one (score 0) as the "
                  "share of right answers in the group grows. A group all right or all wrong "
                  "has no signal: there is no wrong (or right) answer to plot.",
            "zh": "组内答对（得分 1）和答错（得分 0）的回复的优势，随组内答对比例的变化。全对或"
                  "全错的组没有信号：那时没有答错（或答对）的回复可画。",
        },
        x_label={"en": "share of right answers in the group", "zh": "组内答对的比例"},
        y_label={"en": "advantage Â", "zh": "优势 Â"},
        x=GROUP_X,
        controls=(
            Control("size", {"en": "group size G", "zh": "组大小 G"}, GROUP_SIZES,
                    tuple(str(g) for g in GROUP_SIZES), 2),
            Control("estimator", {"en": "Estimator", "zh": "估计器"},
                    ("grpo", "dr_grpo", "rloo"),
                    ({"en": "GRPO (÷ std)", "zh": "GRPO（除以标准差）"},
                     {"en": "Dr. GRPO (mean only)", "zh": "Dr. GRPO（只减均值）"}, "RLOO"),
                    kind="choice"),
        ),
        series=(Series({"en": "right answer", "zh": "答对"}),
                Series({"en": "wrong answer", "zh": "答错"})),
        compute=_group,
        points=True,
    ),
    Figure(
        id="dpo_margin",
        caption={
            "en": "TRL's loss types that see only the margin Δ = r_w − r_l, against Δ: where a "
                  "curve flattens the loss stops pushing, where it rises it pushes back. DPO "
                  "never quite stops; hinge stops at Δ = 1/β; IPO pulls Δ back to 1/(2β) and EXO "
                  "(ε = 0.1) to βΔ = ln 9; robust DPO (ε = 0.1) never stops and goes below 0; "
                  "DiscoPOP (τ = 0.05) rises a little near Δ = 0, pushing the margin the wrong "
                  "way there.",
            "zh": "TRL 里只看差值 Δ = r_w − r_l 的几种 loss_type 随 Δ 的变化：曲线变平的地方，损失"
                  "就不再推了，曲线上升的地方，它往回推。DPO 永远不会完全停下；hinge 在 Δ = 1/β "
                  "处停下；IPO 把 Δ 拉回 1/(2β)，EXO（ε = 0.1）把它拉回 βΔ = ln 9；稳健 DPO"
                  "（ε = 0.1）从不停下，还会低于 0；DiscoPOP（τ = 0.05）在 Δ = 0 附近略微上升，"
                  "在那里把差值往错误的方向推。",
        },
        x_label={"en": "margin Δ = r_w − r_l (nats)", "zh": "差值 Δ = r_w − r_l（奈特）"},
        y_label={"en": "loss", "zh": "损失"},
        x=DPO_X,
        controls=(Control("beta", {"en": "β", "zh": "β"}, DPO_BETAS, _texts(DPO_BETAS), 1),),
        series=(Series({"en": "sigmoid (DPO)", "zh": "sigmoid（DPO）"}), Series("hinge"),
                Series("ipo"), Series("robust"), Series("exo_pair"), Series("discopop")),
        compute=_margin_losses,
        y_range=(-1.5, 4.0),
    ),
    Figure(
        id="dpo_anchored",
        caption={
            "en": "TRL's loss types that look at each side, against the chosen answer's "
                  "log-ratio r_w, for the rejected one's r_l you choose; DPO (dashed) only "
                  "moves sideways with r_l. NCA and SPPO want r_w at a finite place (ln 2/β, "
                  "1/(2β)); APO-down wants it at r_l/2 once the rejected answer is below the "
                  "reference (r_l < 0), is flat at r_l = 0, and above it pushes r_w away from "
                  "r_l/2 either way; BCO and APO-zero keep pushing it up, APO-zero less and less.",
            "zh": "TRL 里分别看两边的几种 loss_type，随偏好回复的对数比 r_w 的变化，非偏好回复的 "
                  "r_l 由你选；DPO（虚线）随 r_l 只会左右平移。NCA 和 SPPO 想把 r_w 停在某个有限的"
                  "位置（ln 2/β、1/(2β)）；非偏好回复低于参考模型（r_l < 0）时，APO-down 想把它停"
                  "在 r_l/2，r_l = 0 时它是平的，r_l > 0 时它把 r_w 从 r_l/2 往两边推开；BCO 和 "
                  "APO-zero 一直把它往上推，APO-zero 推得越来越轻。",
        },
        x_label={"en": "chosen log-ratio r_w (nats)", "zh": "偏好回复的对数比 r_w（奈特）"},
        y_label={"en": "loss", "zh": "损失"},
        x=DPO_X,
        controls=(
            Control("r_l", {"en": "rejected log-ratio r_l", "zh": "非偏好回复的对数比 r_l"},
                    REJECTED, _texts(REJECTED), REJECTED.index(0.0)),
            Control("beta", {"en": "β", "zh": "β"}, DPO_BETAS, _texts(DPO_BETAS), 1),
        ),
        series=(Series({"en": "sigmoid (DPO)", "zh": "sigmoid（DPO）"}, dash=True),
                Series("bco_pair"), Series("nca_pair"), Series("sppo_hard"),
                Series("apo_zero"), Series("apo_down")),
        compute=_anchored_losses,
        y_range=(0.0, 5.0),
    ),
)}

assert all(set(c.label) == set(LANGUAGES) for f in FIGURES.values() for c in f.controls)
