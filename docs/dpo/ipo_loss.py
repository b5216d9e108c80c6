# --8<-- [start:exercise]
import torch


def ipo_loss(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps,
             chosen_lengths, rejected_lengths, beta=0.1):
    """IPO: regress the per-token log-ratio margin onto the target 1/(2β).

    Args:
        chosen_logps, rejected_logps: [N] summed log-probs under the policy
        ref_chosen_logps, ref_rejected_logps: [N] the same under the reference
        chosen_lengths, rejected_lengths: [N] response lengths in tokens
        beta: β > 0 (the paper's τ)
    Returns:
        [N] the loss of each pair
    """
    # TODO 1: the chosen response's log-ratio, averaged per token
    chosen = (chosen_logps - ref_chosen_logps) / chosen_lengths

    # TODO 2: the rejected response's, averaged per token
    rejected = (rejected_logps - ref_rejected_logps) / rejected_lengths

    # TODO 3: (h − 1/(2β))², h the margin between the two
    return (chosen - rejected - 1 / (2 * beta)) ** 2
# --8<-- [end:exercise]


# --8<-- [start:test]
beta = 0.1
# two pairs with the same per-token log-ratios: 10 tokens each, then 100 tokens each
chosen_logps = torch.tensor([-10.0, -100.0])
rejected_logps = torch.tensor([-30.0, -300.0])
ref_logps = torch.tensor([-15.0, -150.0])  # both responses, under the reference
lengths = torch.tensor([10.0, 100.0])
h = (chosen_logps - ref_logps) / lengths - (rejected_logps - ref_logps) / lengths
print("target margin 1/(2β):", 1 / (2 * beta))
print("per-token margin h:", h)
print("IPO loss:", ipo_loss(chosen_logps, rejected_logps, ref_logps, ref_logps,
                            lengths, lengths, beta))
# summed log-ratios (lengths of 1): the longer pair's margin is 10 times larger
ones = torch.ones(2)
print("on summed log-ratios:", ipo_loss(chosen_logps, rejected_logps, ref_logps, ref_logps,
                                        ones, ones, beta))
# at the target the loss is 0; past it, IPO pulls the margin back
for margin in [5.0, 8.0]:
    loss = ipo_loss(torch.tensor([margin]), torch.tensor([0.0]), torch.tensor([0.0]),
                    torch.tensor([0.0]), torch.tensor([1.0]), torch.tensor([1.0]), beta)
    print(f"h = {margin:g}: loss = {loss.item():g}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "IPO Loss", "zh": "IPO 损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("chosen_logps", "rejected_logps")


def inputs(draw):
    n = draw.length(1, 7)  # preference pairs
    names = ("chosen_logps", "rejected_logps", "ref_chosen_logps", "ref_rejected_logps")
    return {**{k: draw.normal(n, 5.0, shift=-20.0) for k in names},
            "chosen_lengths": draw.choice(range(1, 40), n),
            "rejected_lengths": draw.choice(range(1, 40), n),
            "beta": draw.choice([0.1, 0.5])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "IPO: regress the per-token log-ratio margin onto the target 1/(2β).":
        "IPO：把按 token 平均的对数比差回归到目标 1/(2β)。",
    "summed log-probs under the policy": "策略下求和的对数概率",
    "the same under the reference": "参考模型下的同样的量",
    "response lengths in tokens": "回复长度（token 数）",
    "(the paper's τ)": "（论文中的 τ）",
    "the loss of each pair": "每一对的损失",
    "the chosen response's log-ratio, averaged per token": "偏好回复的对数比，按 token 平均",
    "the rejected response's, averaged per token": "非偏好回复的，按 token 平均",
    ", h the margin between the two": "，h 是两者之差",
    "two pairs with the same per-token log-ratios: 10 tokens each, then 100 tokens each":
        "两对回复，每个 token 的对数比相同：第一对各 10 个 token，第二对各 100 个",
    "both responses, under the reference": "两条回复在参考模型下的值",
    "target margin 1/(2β):": "目标差值 1/(2β)：",
    "per-token margin h:": "按 token 的差值 h：",
    "IPO loss:": "IPO 损失：",
    "summed log-ratios (lengths of 1): the longer pair's margin is 10 times larger":
        "求和的对数比（长度记为 1）：长的那一对差值大 10 倍",
    "on summed log-ratios:": "用求和的对数比：",
    "at the target the loss is 0; past it, IPO pulls the margin back":
        "到达目标时损失为 0；超过目标，IPO 会把差值拉回来",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("walkthrough: on summed log-ratios (OpenRLHF's IPO) the longer pair's margin is larger, "
     "and β would have to change with the length; TRL divides each side by its length",
     "chosen = (chosen_logps - ref_chosen_logps) / chosen_lengths\n"
     "\n"
     "    # TODO 2: the rejected response's, averaged per token\n"
     "    rejected = (rejected_logps - ref_rejected_logps) / rejected_lengths",
     "chosen = chosen_logps - ref_chosen_logps\n"
     "    rejected = rejected_logps - ref_rejected_logps"),
    ("hint: each side's log-ratio divided by its own length",
     "rejected = (rejected_logps - ref_rejected_logps) / rejected_lengths",
     "rejected = (rejected_logps - ref_rejected_logps) / chosen_lengths"),
    ("hint: the target is 1 / (2 * beta); 1 / 2 * beta is β/2",
     "(chosen - rejected - 1 / (2 * beta)) ** 2", "(chosen - rejected - 1 / 2 * beta) ** 2"),
    ("hint: square the difference: past the target the loss pulls the margin back",
     "(chosen - rejected - 1 / (2 * beta)) ** 2", "(chosen - rejected - 1 / (2 * beta))"),
]
# --8<-- [end:traps]
