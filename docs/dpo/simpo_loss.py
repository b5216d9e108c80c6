# --8<-- [start:exercise]
import torch
import torch.nn.functional as F


def simpo_loss(chosen_avg_logps, rejected_avg_logps, beta=2.0, gamma=0.5, label_smoothing=0.0):
    """SimPO: no reference model, a length-normalised reward, a target margin γ.

    Args:
        chosen_avg_logps, rejected_avg_logps: [N] mean token log-probs under the policy
        beta: β > 0, the reward's scale
        gamma: γ ≥ 0, the target margin, in reward units
        label_smoothing: ε in [0, 0.5], cDPO's smoothing (0 in the paper)
    Returns:
        [N] the loss of each pair
    """
    # TODO 1: z = β·(mean log π(y_w) − mean log π(y_l)) − γ
    z = beta * (chosen_avg_logps - rejected_avg_logps) - gamma

    # TODO 2: −(1 − ε)·log σ(z) − ε·log σ(−z)
    return -(1 - label_smoothing) * F.logsigmoid(z) - label_smoothing * F.logsigmoid(-z)
# --8<-- [end:exercise]


# --8<-- [start:test]
# mean token log-probs of three pairs: the chosen one ahead by 0.1, 0.25 and 0.5 nats a token
chosen = torch.tensor([-1.0, -0.75, -0.5])
rejected = torch.tensor([-1.1, -1.0, -1.0])
print("reward margin β·Δ (β = 2):", 2.0 * (chosen - rejected))
print("SimPO, γ = 0.5:", simpo_loss(chosen, rejected))
print("SimPO, γ = 0:  ", simpo_loss(chosen, rejected, gamma=0.0))
# answers of 10 tokens, then twice as long: the summed margin doubles, the mean does not
for n in [10, 20]:
    sum_w, sum_l = n * chosen, n * rejected
    print(f"{n} tokens: summed margin {(sum_w - sum_l)[0].item():.1f}, SimPO",
          simpo_loss(sum_w / n, sum_l / n))
# TRL's CPOTrainer defaults: β = 0.1 and simpo_gamma = 0.5, a margin of 5 nats a token
print("β = 0.1, γ = 0.5:", simpo_loss(chosen, rejected, beta=0.1, gamma=0.5))
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "SimPO Loss", "zh": "SimPO 损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("chosen_avg_logps", "rejected_avg_logps")


def inputs(draw):
    n = draw.length(1, 7)  # preference pairs
    return {"chosen_avg_logps": -draw.lognormal(n, 0.5),
            "rejected_avg_logps": -draw.lognormal(n, 0.5),
            "beta": draw.choice([0.1, 2.0, 2.5]), "gamma": draw.choice([0.0, 0.5, 1.25]),
            "label_smoothing": draw.choice([0.0, 0.1])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "SimPO: no reference model, a length-normalised reward, a target margin γ.":
        "SimPO：没有参考模型，按长度归一化的奖励，目标差值 γ。",
    "mean token log-probs under the policy": "策略下 token 对数概率的平均",
    ", the reward's scale": "，奖励的尺度",
    ", the target margin, in reward units": "，目标差值，以奖励为单位",
    "cDPO's smoothing (0 in the paper)": "cDPO 的平滑（论文中为 0）",
    "the loss of each pair": "每一对的损失",
    "mean token log-probs of three pairs: the chosen one ahead by 0.1, 0.25 and 0.5 nats a token":
        "三对回复的 token 平均对数概率：偏好回复每个 token 分别领先 0.1、0.25 和 0.5 奈特",
    "reward margin β·Δ (β = 2):": "奖励差 β·Δ（β = 2）：",
    "answers of 10 tokens, then twice as long: the summed margin doubles, the mean does not":
        "回答各 10 个 token，再长一倍：求和的差值翻倍，平均的不变",
    " tokens: summed margin ": " 个 token：求和的差值 ",
    "TRL's CPOTrainer defaults: β = 0.1 and simpo_gamma = 0.5, a margin of 5 nats a token":
        "TRL 的 CPOTrainer 默认值：β = 0.1，simpo_gamma = 0.5，相当于每个 token 领先 5 奈特的差值",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: with label_smoothing the ε term has a minus sign here (cDPO's form), not robust "
     "DPO's plus",
     "- label_smoothing * F.logsigmoid(-z)", "+ label_smoothing * F.logsigmoid(-z)"),
    ("hint: there is no division by 1 − 2ε (that is robust DPO's)",
     "return -(1 - label_smoothing) * F.logsigmoid(z) - label_smoothing * F.logsigmoid(-z)",
     "return (-(1 - label_smoothing) * F.logsigmoid(z)\n"
     "            - label_smoothing * F.logsigmoid(-z)) / (1 - 2 * label_smoothing)"),
    ("hint, page: z is β times the difference of the mean log-probs, minus γ: γ is in the "
     "reward's units, not scaled by β",
     "z = beta * (chosen_avg_logps - rejected_avg_logps) - gamma",
     "z = beta * (chosen_avg_logps - rejected_avg_logps - gamma)"),
]
# --8<-- [end:traps]
