# --8<-- [start:exercise]
import torch


def group_advantages(scores, group_size, scale_by_std=True, eps=1e-6):
    """GRPO's advantage: each response against the others to its prompt.

    Args:
        scores:       [N] one score per response, N = groups × G,
                      the responses to one prompt side by side
        group_size:   G ≥ 2, responses sampled per prompt
        scale_by_std: divide by the group's std (GRPO) or not (Dr. GRPO)
        eps:          added to the std
    Returns:
        [N] advantages; 0 for a group whose scores are all equal
    """
    # TODO 1: one row per prompt: [groups, G]
    grouped = scores.view(-1, group_size)

    # TODO 2: s_i − mean_g, the mean of each row
    adv = grouped - grouped.mean(dim=1, keepdim=True)

    # TODO 3: [groups, 1], True where all the row's scores are equal
    same = (grouped == grouped[:, :1]).all(dim=1, keepdim=True)

    if scale_by_std:
        # TODO 4: ÷ (std_g + ε), std unbiased (torch's default)
        adv = adv / (grouped.std(dim=1, keepdim=True) + eps)

    # an equal group carries no signal: exactly 0 (its mean may be off
    # by a rounding, so its std not exactly 0)
    return adv.masked_fill(same, 0.0).reshape(-1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# two prompts, four responses each; a verifier scores 1 (right), 0 (wrong)
scores = torch.tensor([1.0, 0.0, 0.0, 0.0,
                       1.0, 1.0, 1.0, 0.0])
print("GRPO, one row per prompt:")
print(group_advantages(scores, 4).view(2, 4))
print("Dr. GRPO:")
print(group_advantages(scores, 4, scale_by_std=False).view(2, 4))

# a group that holds no signal: every response scored the same
print("equal:", group_advantages(torch.full((7,), 1000.1), 7))
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Group-Relative Advantages", "zh": "组内相对优势"}


def inputs(draw):
    G, N = draw.groups()
    return {"scores": draw.scores(N), "group_size": G, "scale_by_std": draw.coin(0.7),
            "eps": draw.choice([1e-6, 1e-4])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "GRPO's advantage: each response against the others to its prompt.":
        "GRPO 的优势：每条回复与同一 prompt 的其他回复相比。",
    "one score per response, N = groups × G,": "每条回复一个分数，N = 组数 × G，",
    "the responses to one prompt side by side": "同一 prompt 的回复挨在一起",
    ", responses sampled per prompt": "，每个 prompt 采样的回复数",
    "divide by the group's std (GRPO) or not (Dr. GRPO)": "除以组内 std（GRPO）或不除（Dr. GRPO）",
    "added to the std": "加在 std 上",
    "advantages; 0 for a group whose scores are all equal": "优势；分数全相等的组为 0",
    "GRPO, one row per prompt:": "GRPO，每个 prompt 一行：",
    "one row per prompt: [groups, G]": "每个 prompt 一行：[组数, G]",
    "[groups, 1], True where all the row's scores are equal": "[组数, 1]，一行分数全相等处为 True",
    ", the mean of each row": "，即每行的均值",
    ", std unbiased (torch's default)": "，std 取无偏估计（torch 的默认）",
    "an equal group carries no signal: exactly 0 (its mean may be off":
        "分数全相等的组没有信号：恰好为 0（它的均值可能差",
    "by a rounding, so its std not exactly 0)": "一个舍入误差，所以 std 不恰好是 0）",
    "two prompts, four responses each; a verifier scores 1 (right), 0 (wrong)":
        "两个 prompt，各四条回复；验证器打分：1（对），0（错）",
    "a group that holds no signal: every response scored the same":
        "没有信号的组：每条回复分数相同",
    "equal:": "全相等：",
}
# --8<-- [end:zh]
