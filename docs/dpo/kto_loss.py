# --8<-- [start:exercise]
import torch


def kto_loss(logps, ref_logps, desirable, kl, beta=0.1, desirable_weight=1.0,
             undesirable_weight=1.0):
    """KTO: each answer judged alone, against the batch's KL as the reference point.

    Args:
        logps, ref_logps: [N] summed log-probs of each answer, policy and reference
        desirable: [N] True for a desirable answer
        kl: the batch's KL estimate, one number
        beta: β > 0
        desirable_weight, undesirable_weight: w_D, w_U > 0
    Returns:
        [N] the loss of each answer
    """
    # TODO 1: r = log π_θ(y) − log π_ref(y)
    r = logps - ref_logps

    # TODO 2: the reference point z₀ = max(kl, 0)
    z0 = max(kl, 0.0)

    # TODO 3: desirable: w_D·(1 − σ(β(r − z₀))) = w_D·σ(β(z₀ − r))
    good = desirable_weight * torch.sigmoid(beta * (z0 - r))

    # TODO 4: undesirable: w_U·(1 − σ(β(z₀ − r))) = w_U·σ(β(r − z₀))
    bad = undesirable_weight * torch.sigmoid(beta * (r - z0))

    # TODO 5: each answer's own loss, by its label
    return torch.where(desirable, good, bad)
# --8<-- [end:exercise]


# --8<-- [start:test]
# four answers: two desirable, two not; log-ratios log π_θ − log π_ref of 8, 2, 2 and −6 nats
logps = torch.tensor([-12.0, -18.0, -18.0, -26.0])
ref_logps = torch.tensor([-20.0, -20.0, -20.0, -20.0])
desirable = torch.tensor([True, True, False, False])
# the KL estimate: each prompt with the previous example's answer, log π_θ − log π_ref
mismatched = torch.tensor([-21.0, -17.5, -19.0, -22.5]) - torch.tensor([-24.0, -20.0, -20.0, -20.0])
kl = mismatched.mean().item()
print(f"batch KL estimate z₀: {kl:.2f}")
loss = kto_loss(logps, ref_logps, desirable, kl)
print("KTO losses:", loss)
print(f"the batch's loss (their mean): {loss.mean().item():.4f}")
# the same answers with a policy that has not moved (KL 0): the bar is lower
print("with z₀ = 0:", kto_loss(logps, ref_logps, desirable, 0.0))
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "KTO Loss", "zh": "KTO 损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("logps",)


def inputs(draw):
    n = draw.length(1, 7)  # answers
    return {"logps": draw.normal(n, 5.0, shift=-20.0),
            "ref_logps": draw.normal(n, 5.0, shift=-20.0),
            "desirable": draw.choice([0.0, 1.0], n) == 1, "kl": float(draw.normal((), 2.0)),
            "beta": draw.choice([0.1, 0.5]), "desirable_weight": draw.choice([1.0, 1.33]),
            "undesirable_weight": draw.choice([1.0, 0.75])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "KTO: each answer judged alone, against the batch's KL as the reference point.":
        "KTO：每个回答单独评判，以 batch 的 KL 为参考点。",
    "summed log-probs of each answer, policy and reference":
        "每个回答求和的对数概率，策略和参考模型",
    "True for a desirable answer": "好的回答为 True",
    "the batch's KL estimate, one number": "batch 的 KL 估计，一个数",
    "the loss of each answer": "每个回答的损失",
    "the reference point": "参考点",
    "desirable: w_D·": "好的回答：w_D·",
    "undesirable: w_U·": "不好的回答：w_U·",
    "each answer's own loss, by its label": "按标签取每个回答自己的损失",
    "four answers: two desirable, two not; log-ratios log π_θ − log π_ref of 8, 2, 2 and −6 nats":
        "四个回答：两个好，两个不好；对数比 log π_θ − log π_ref 分别是 8、2、2 和 −6",
    "the KL estimate: each prompt with the previous example's answer, log π_θ − log π_ref":
        "KL 估计：每个 prompt 配上前一个样本的回答，算 log π_θ − log π_ref",
    "batch KL estimate z₀: ": "batch 的 KL 估计 z₀：",
    "KTO losses:": "KTO 损失：",
    "the batch's loss (their mean): ": "batch 的损失（它们的均值）：",
    "the same answers with a policy that has not moved (KL 0): the bar is lower":
        "同样的回答，策略没有移动时（KL 为 0）：门槛更低",
    "with z₀ = 0:": "z₀ = 0 时：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("walkthrough: the KL estimate is clamped at 0, z₀ = max(kl, 0)",
     "z0 = max(kl, 0.0)", "z0 = kl"),
    ("hint: torch.where(desirable, a, b) picks a where desirable is True: the two losses "
     "swapped",
     "torch.where(desirable, good, bad)", "torch.where(desirable, bad, good)"),
    ("page: the loss is a sigmoid, not DPO's log-sigmoid: it saturates on both sides",
     "good = desirable_weight * torch.sigmoid(beta * (z0 - r))",
     "good = desirable_weight * -torch.nn.functional.logsigmoid(beta * (r - z0))"),
]
# --8<-- [end:traps]
