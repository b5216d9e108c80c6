# --8<-- [start:exercise]
import torch


def rloo_advantages(scores, group_size):
    """RLOO: each response against the mean of the *other* responses.

    Args:
        scores:     [N] one score per response, N = groups × group_size
        group_size: G ≥ 2
    Returns:
        [N] advantages, s_i − mean_{j≠i} s_j
    """
    grouped = scores.view(-1, group_size)  # [groups, G]

    # TODO 1: Σ_g s, the sum of each row
    total = grouped.sum(dim=1, keepdim=True)

    # TODO 2: the others' mean, (Σ_g s − s_i) / (G − 1)
    baseline = (total - grouped) / (group_size - 1)

    # TODO 3: Â_i = s_i − baseline_i
    return (grouped - baseline).reshape(-1)
# --8<-- [end:exercise]


# --8<-- [start:test]
scores = torch.tensor([1.0, 0.0, 0.0, 0.0,
                       1.0, 1.0, 1.0, 0.0])
rloo = rloo_advantages(scores, 4)
print("RLOO, one row per prompt:")
print(rloo.view(2, 4))
# the same as G/(G−1) times "score minus the group mean" (Dr. GRPO)
grouped = scores.view(2, 4)
centered = grouped - grouped.mean(dim=1, keepdim=True)
print("4/3 × (s − mean):")
print(4 / 3 * centered)
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "RLOO Advantages", "zh": "RLOO 留一优势"}


def inputs(draw):
    G, N = draw.groups()
    return {"scores": draw.scores(N), "group_size": G}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "RLOO: each response against the mean of the *other* responses.":
        "RLOO：每条回复与*其他*回复的均值相比。",
    "one score per response, N = groups × group_size": "每条回复一个分数，N = 组数 × group_size",
    "[N] advantages, ": "[N] 优势：",
    "[groups, G]": "[组数, G]",
    ", the sum of each row": "，即每行的和",
    "the others' mean, ": "其他回复的均值：",
    "RLOO, one row per prompt:": "RLOO，每个 prompt 一行：",
    "the same as G/(G−1) times \"score minus the group mean\" (Dr. GRPO)":
        "等于 G/(G−1) 乘以“分数减组内均值”（Dr. GRPO）",
    "4/3 × (s − mean):": "4/3 × (s − 均值)：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("walkthrough: GRPO's group mean as the baseline, the answer itself included",
     "baseline = (total - grouped) / (group_size - 1)", "baseline = total / group_size"),
    ("TODO 2, hint: the others' sum divided by G, not by the G − 1 others",
     "baseline = (total - grouped) / (group_size - 1)",
     "baseline = (total - grouped) / group_size"),
    ("hint: the sum of each row as a column: without keepdim a [groups] vector broadcasts "
     "along the rows",
     "total = grouped.sum(dim=1, keepdim=True)", "total = grouped.sum(dim=1)"),
]
# --8<-- [end:traps]
