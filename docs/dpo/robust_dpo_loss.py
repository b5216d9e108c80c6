# --8<-- [start:exercise]
import torch
import torch.nn.functional as F


def robust_dpo_loss(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps,
                    beta=0.1, label_smoothing=0.1):
    """Robust DPO: unbiased when each label is flipped with probability ε.

    Args:
        chosen_logps, rejected_logps: [N] summed log-probs under the policy
        ref_chosen_logps, ref_rejected_logps: [N] the same under the reference
        beta: β > 0
        label_smoothing: ε in [0, 0.5), the rate of flipped labels
    Returns:
        [N] the loss of each pair
    """
    # TODO 1: z = β·Δ, DPO's margin of log-ratios
    z = beta * ((chosen_logps - ref_chosen_logps) - (rejected_logps - ref_rejected_logps))

    eps = label_smoothing
    # TODO 2: −(1 − ε)·log σ(z) + ε·log σ(−z)
    loss = -(1 - eps) * F.logsigmoid(z) + eps * F.logsigmoid(-z)

    # TODO 3: divide by 1 − 2ε
    return loss / (1 - 2 * eps)
# --8<-- [end:exercise]


# --8<-- [start:test]
eps = 0.2
z = torch.tensor([-2.0, 0.0, 2.0, 6.0])  # DPO margins (β = 1, reference log-probs 0)
zero = torch.zeros(4)
clean = robust_dpo_loss(z, zero, zero, zero, beta=1.0, label_smoothing=0.0)
# the label as observed, and flipped (chosen and rejected swapped: the margin is −z)
observed = robust_dpo_loss(z, zero, zero, zero, beta=1.0, label_smoothing=eps)
flipped = robust_dpo_loss(zero, z, zero, zero, beta=1.0, label_smoothing=eps)
print("DPO on the clean label:    ", clean)
print("robust, expected over flips:", (1 - eps) * observed + eps * flipped)
print("robust, one observed label:", observed)
# cDPO smooths instead: its expectation over flips is another loss
cdpo = -(1 - eps) * F.logsigmoid(z) - eps * F.logsigmoid(-z)
cdpo_flipped = -(1 - eps) * F.logsigmoid(-z) - eps * F.logsigmoid(z)
print("cDPO, expected over flips: ", (1 - eps) * cdpo + eps * cdpo_flipped)
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Robust DPO Loss", "zh": "稳健 DPO 损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("chosen_logps", "rejected_logps")


def inputs(draw):
    n = draw.length(1, 7)  # preference pairs
    names = ("chosen_logps", "rejected_logps", "ref_chosen_logps", "ref_rejected_logps")
    # short answers, or answers of thousands of tokens whose margins are hundreds of nats
    # (σ(±βΔ) underflows in float32: log σ must be taken as logsigmoid)
    scale, shift = draw.choice([(5.0, -20.0), (5.0, -20.0), (500.0, -3000.0)])
    return {**{k: draw.normal(n, scale, shift=shift) for k in names},
            "beta": draw.choice([0.1, 0.5]), "label_smoothing": draw.choice([0.0, 0.1, 0.3])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Robust DPO: unbiased when each label is flipped with probability ε.":
        "稳健 DPO：每个标签以概率 ε 被翻转时仍然无偏。",
    "summed log-probs under the policy": "策略下求和的对数概率",
    "the same under the reference": "参考模型下的同样的量",
    ", the rate of flipped labels": "，标签被翻转的比例",
    "the loss of each pair": "每一对的损失",
    "DPO's margin of log-ratios": "DPO 的对数比之差",
    "divide by 1 − 2ε": "除以 1 − 2ε",
    "DPO margins (β = 1, reference log-probs 0)": "DPO 的差值（β = 1，参考模型的对数概率为 0）",
    "the label as observed, and flipped (chosen and rejected swapped: the margin is −z)":
        "观察到的标签，以及翻转后的（偏好回复和非偏好回复互换：差值变成 −z）",
    "DPO on the clean label:    ": "DPO，干净标签：    ",
    "robust, expected over flips:": "稳健版，对翻转取期望：",
    "robust, one observed label:": "稳健版，一个观察到的标签：",
    "cDPO smooths instead: its expectation over flips is another loss":
        "cDPO 做的是平滑：它对翻转的期望是另一个损失",
    "cDPO, expected over flips: ": "cDPO，对翻转取期望： ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: mind the signs, the flipped term is added with +ε·log σ(−z); with a minus it is "
     "cDPO's smoothing, another loss",
     "loss = -(1 - eps) * F.logsigmoid(z) + eps * F.logsigmoid(-z)",
     "loss = -(1 - eps) * F.logsigmoid(z) - eps * F.logsigmoid(-z)"),
    ("TODO 3, walkthrough: the division by 1 − 2ε, without which the average over flips is not "
     "the clean loss",
     "return loss / (1 - 2 * eps)", "return loss"),
    ("hint: F.logsigmoid(z) is log σ(z), stable for large |z|; log(sigmoid) is −inf where σ "
     "underflows",
     "loss = -(1 - eps) * F.logsigmoid(z) + eps * F.logsigmoid(-z)",
     "loss = -(1 - eps) * torch.log(torch.sigmoid(z)) + eps * torch.log(torch.sigmoid(-z))"),
]
# --8<-- [end:traps]
