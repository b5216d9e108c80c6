# --8<-- [start:exercise]
import math

import torch
import torch.nn.functional as F


def orpo_odds_ratio_loss(chosen_avg_logps, rejected_avg_logps, beta=0.1):
    """ORPO's odds-ratio term: −β·log σ(log odds(y_w) − log odds(y_l)).

    Args:
        chosen_avg_logps, rejected_avg_logps: [N] mean token log-probs, each < 0
        beta: β > 0, the weight of this term beside the NLL (the paper's λ)
    Returns:
        [N] the term of each pair, added to the chosen answer's NLL
    """
    def log1mexp(x):  # log(1 − eˣ) for x < 0, with no cancellation either side of −ln 2
        return torch.where(x < -math.log(2), torch.log1p(-torch.exp(x)),
                           torch.log(-torch.expm1(x)))

    # TODO 1: log odds(y_w) = log p − log(1 − p)
    chosen_log_odds = chosen_avg_logps - log1mexp(chosen_avg_logps)

    # TODO 2: the same for y_l
    rejected_log_odds = rejected_avg_logps - log1mexp(rejected_avg_logps)

    # TODO 3: −β·log σ(log odds ratio)
    return -beta * F.logsigmoid(chosen_log_odds - rejected_log_odds)
# --8<-- [end:exercise]


# --8<-- [start:test]
# mean token log-probs: the chosen answer likelier than the rejected one
chosen = torch.tensor([-0.2, -0.5, -1.0])
rejected = torch.tensor([-0.4, -1.0, -2.0])
print("probability ratio p_w / p_l:", (chosen - rejected).exp())
log_odds_ratio = (chosen - torch.log(1 - chosen.exp())) - (rejected - torch.log(1 - rejected.exp()))
print("odds ratio:", log_odds_ratio.exp())
print("ORPO term (β = 0.1):", orpo_odds_ratio_loss(chosen, rejected))
# near p = 1, log(1 − eˣ) by the book loses every digit in float32
x = torch.tensor([-1e-8])
print("log(1 − exp(x)), x = −1e-8:", torch.log(1 - torch.exp(x)).item(),
      " log(−expm1(x)):", f"{torch.log(-torch.expm1(x)).item():.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "ORPO's Odds-Ratio Loss", "zh": "ORPO 的几率比损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("chosen_avg_logps", "rejected_avg_logps")


def inputs(draw):
    n = draw.length(1, 7)  # preference pairs
    # mean token log-probs of a few tenths, or of a model nearly sure of every token (−1e-3,
    # −1e-7: 1 − p is lost if taken as 1 − exp(log p) in float32)
    return {"chosen_avg_logps": -draw.lognormal(n, 1.0) * draw.choice([1.0, 1.0, 1e-3, 1e-7], n),
            "rejected_avg_logps": -draw.lognormal(n, 1.0) * draw.choice([1.0, 1.0, 1e-3, 1e-7], n),
            "beta": draw.choice([0.1, 1.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "ORPO's odds-ratio term: ": "ORPO 的几率比项：",
    "mean token log-probs, each < 0": "token 对数概率的平均，都 < 0",
    ", the weight of this term beside the NLL (the paper's λ)":
        "，这一项相对 NLL 的权重（论文中的 λ）",
    "the term of each pair, added to the chosen answer's NLL":
        "每一对的这一项，加到偏好回复的 NLL 上",
    "for x < 0, with no cancellation either side of −ln 2": "，x < 0，在 −ln 2 两侧都没有相消误差",
    "the same for y_l": "y_l 的同样的量",
    "−β·log σ(log odds ratio)": "−β·log σ(对数几率比)",
    "mean token log-probs: the chosen answer likelier than the rejected one":
        "token 平均对数概率：偏好回复比非偏好回复更可能",
    "probability ratio p_w / p_l:": "概率比 p_w / p_l：",
    "odds ratio:": "几率比：",
    "ORPO term (β = 0.1):": "ORPO 项（β = 0.1）：",
    "near p = 1, log(1 − eˣ) by the book loses every digit in float32":
        "p 接近 1 时，照公式算 log(1 − eˣ) 在 float32 里丢掉所有有效数字",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("page, walkthrough: log(1 − eˣ) as written loses every digit near x = 0 (in float32 "
     "e^(−1e-8) rounds to 1 and the log is −inf); the helper exists for that",
     "return torch.where(x < -math.log(2), torch.log1p(-torch.exp(x)),\n"
     "                           torch.log(-torch.expm1(x)))",
     "return torch.log(1 - torch.exp(x))"),
    ("walkthrough: the odds ratio, not the probability ratio p_w / p_l",
     "F.logsigmoid(chosen_log_odds - rejected_log_odds)",
     "F.logsigmoid(chosen_avg_logps - rejected_avg_logps)"),
    ("walkthrough: TRL's odds_ratio_loss returns the negative of this term (β·log σ, ≤ 0)",
     "return -beta * F.logsigmoid(", "return beta * F.logsigmoid("),
]
# --8<-- [end:traps]
