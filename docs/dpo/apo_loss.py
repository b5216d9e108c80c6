# --8<-- [start:exercise]
import torch
import torch.nn.functional as F


def apo_loss(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps,
             beta=0.1, anchor="zero"):
    """APO: each side's log-ratio anchored, not only their difference.

    Args:
        chosen_logps, rejected_logps: [N] summed log-probs under the policy
        ref_chosen_logps, ref_rejected_logps: [N] the same under the reference
        beta: β > 0
        anchor: "zero" (the chosen answers are better than the policy's own) or "down"
            (the policy is already better than the chosen answers)
    Returns:
        [N] the loss of each pair
    """
    # TODO 1: r_w = log π_θ(y_w) − log π_ref(y_w)
    r_w = chosen_logps - ref_chosen_logps
    # TODO 2: r_l = log π_θ(y_l) − log π_ref(y_l)
    r_l = rejected_logps - ref_rejected_logps

    if anchor == "zero":
        # TODO 3: (1 − σ(β r_w)) + σ(β r_l): the chosen up, the rejected down, each from 0
        return torch.sigmoid(-beta * r_w) + torch.sigmoid(beta * r_l)
    # TODO 4: σ(β r_w) + (1 − σ(β (r_w − r_l))): the chosen down, the rejected down further
    return torch.sigmoid(beta * r_w) + torch.sigmoid(-beta * (r_w - r_l))
# --8<-- [end:exercise]


# --8<-- [start:test]
# three policies, each 4 nats ahead on the pair: the chosen answer's log-ratio
# r_w is 3, 2 or −1 (β = 0.5, the reference's log-probs 0)
r_w = torch.tensor([3.0, 2.0, -1.0])
r_l = r_w - 4.0
zero = torch.zeros(3)
print("DPO:     ", -F.logsigmoid(0.5 * (r_w - r_l)))
for anchor in ["zero", "down"]:
    print(f"APO-{anchor}:", apo_loss(r_w, r_l, zero, zero, beta=0.5, anchor=anchor))


def loss(r_w, r_l, anchor):
    """One pair's loss, in float64."""
    at = torch.zeros(1, dtype=torch.float64)
    return apo_loss(at + r_w, at + r_l, at, at, beta=0.5, anchor=anchor).item()


# at the reference (r_w = r_l = 0): how hard each loss pulls each log-ratio up, −∂L/∂r
h = 1e-3
for anchor in ["zero", "down"]:
    # 0.0 + …: a pull of exactly 0 prints as 0.000, not −0.000
    pull_w = 0.0 + (loss(-h, 0.0, anchor) - loss(h, 0.0, anchor)) / (2 * h)
    pull_l = 0.0 + (loss(0.0, -h, anchor) - loss(0.0, h, anchor)) / (2 * h)
    print(f"APO-{anchor} at the reference: pull on r_w {pull_w:.3f}, on r_l {pull_l:.3f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "APO Loss", "zh": "APO 损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("chosen_logps", "rejected_logps")


def inputs(draw):
    n = draw.length(1, 7)  # preference pairs
    names = ("chosen_logps", "rejected_logps", "ref_chosen_logps", "ref_rejected_logps")
    return {**{k: draw.normal(n, 5.0, shift=-20.0) for k in names},
            "beta": draw.choice([0.1, 0.5]), "anchor": draw.choice(["zero", "down"])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "APO: each side's log-ratio anchored, not only their difference.":
        "APO：锚定每一边的对数比，而不只是它们的差值。",
    "summed log-probs under the policy": "策略下求和的对数概率",
    "the same under the reference": "参考模型下的同样的量",
    '(the chosen answers are better than the policy\'s own) or "down"':
        "（偏好回复比策略自己的回答好）或 \"down\"",
    "(the policy is already better than the chosen answers)": "（策略已经比偏好回复好）",
    "the loss of each pair": "每一对的损失",
    "the chosen up, the rejected down, each from 0": "偏好回复往上、非偏好回复往下，各自从 0 出发",
    "the chosen down, the rejected down further": "偏好回复往下，非偏好回复降得更多",
    "three policies, each 4 nats ahead on the pair: the chosen answer's log-ratio":
        "三个策略，在这对回复上都领先 4 奈特：偏好回复的对数比",
    "is 3, 2 or −1 (β = 0.5, the reference's log-probs 0)":
        "分别是 3、2、−1（β = 0.5，参考模型的对数概率为 0）",
    "One pair's loss, in float64.": "一对回复的损失，用 float64 计算。",
    "at the reference (r_w = r_l = 0): how hard each loss pulls each log-ratio up, −∂L/∂r":
        "在参考点（r_w = r_l = 0）：每个损失把每个对数比往上拉的力度，−∂L/∂r",
    " at the reference: pull on r_w ": " 在参考点：对 r_w 的拉力 ",
    ", on r_l ": "，对 r_l 的拉力 ",
    "a pull of exactly 0 prints as 0.000, not −0.000": "恰好为 0 的拉力打印成 0.000，而不是 −0.000",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: \"down\"'s second term is on the margin r_w − r_l, not on r_l",
     "torch.sigmoid(-beta * (r_w - r_l))", "torch.sigmoid(beta * r_l)"),
    ("hint: 1 − σ(x) = σ(−x): APO-zero pushes the chosen log-ratio up, 1 − σ(β r_w) = "
     "σ(−β r_w), not σ(β r_w)",
     "return torch.sigmoid(-beta * r_w) + torch.sigmoid(beta * r_l)",
     "return torch.sigmoid(beta * r_w) + torch.sigmoid(beta * r_l)"),
    ("page: \"down\" pushes the chosen log-ratio down, σ(β r_w), not up",
     "return torch.sigmoid(beta * r_w) + torch.sigmoid(-beta * (r_w - r_l))",
     "return torch.sigmoid(-beta * r_w) + torch.sigmoid(-beta * (r_w - r_l))"),
]
# --8<-- [end:traps]
