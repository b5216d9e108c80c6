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
    scores = draw.scores(N)
    # groups that carry no signal, every score equal: 0 and 1 (a verifier's, whose mean is
    # exact) or a reward model's or partial credit's value, whose mean may be a rounding off
    # (the walkthrough's 0.7 and 1000.1)
    for start in range(0, N, G):
        if draw.coin(0.3):
            scores[start:start + G] = draw.choice([0.0, 1.0, 0.7, 1000.1, 0.3, -2.7, 0.9])
    if draw.coin(0.4):
        # one prompt whose eight answers a reward model scored alike (the walkthrough's case):
        # over a single row torch's mean and std are both a rounding off, the std not 0; and
        # three alike, whose sum rounds in float32 however it is added (the browser's too)
        G = N = draw.choice([8, 3, 3])
        scores = draw.normal(N, 0.0, shift=draw.choice([0.7, 1000.1, 0.3, 0.9]))
    return {"scores": scores, "group_size": G, "scale_by_std": draw.coin(0.7),
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


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: view(-1, G) is a row per prompt; view(G, -1) mixes the prompts",
     "grouped = scores.view(-1, group_size)", "grouped = scores.view(group_size, -1)"),
    ("hint: std is unbiased, ÷ (G − 1) as in TRL and verl: the biased std",
     "grouped.std(dim=1, keepdim=True)", "grouped.std(dim=1, keepdim=True, correction=0)"),
    ("walkthrough: the unmasked formula: an equal group's mean one rounding off, its std "
     "~1e-7 × the score, and every answer an advantage (verl's +0.06 for eight 0.7s)",
     "return adv.masked_fill(same, 0.0).reshape(-1)", "return adv.reshape(-1)"),
    ("rounding: walkthrough: an equal group found by std == 0: its std comes out ~1e-7 × the "
     "score, not 0",
     "same = (grouped == grouped[:, :1]).all(dim=1, keepdim=True)",
     "same = grouped.std(dim=1, keepdim=True) == 0"),
    ("walkthrough: TRL's ε = 1e-4 as the default, not verl's 1e-6",
     "scale_by_std=True, eps=1e-6", "scale_by_std=True, eps=1e-4"),
]
# --8<-- [end:traps]
