# --8<-- [start:exercise]
import torch


def informative_groups(scores, group_size):
    """DAPO's dynamic sampling: which responses belong to a group with a signal.

    Args:
        scores:     [N] one score per response, N = groups × G,
                    the responses to one prompt side by side
        group_size: G ≥ 2, responses sampled per prompt
    Returns:
        [N] bool: False for every response of a group whose scores are all equal
    """
    # TODO 1: one row per prompt: [groups, G]
    grouped = scores.view(-1, group_size)

    # TODO 2: [groups, 1], True where every score of the row equals its first
    flat = (grouped == grouped[:, :1]).all(dim=1, keepdim=True)

    # TODO 3: keep the other rows, one flag per response: [N]
    return (~flat).expand_as(grouped).reshape(-1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# four prompts, four responses each; a verifier scores 1 (right), 0 (wrong)
scores = torch.tensor([1.0, 1.0, 1.0, 1.0,
                       0.0, 1.0, 0.0, 0.0,
                       0.0, 0.0, 0.0, 0.0,
                       1.0, 0.0, 1.0, 1.0])
keep = informative_groups(scores, 4)
print("keep, one row per prompt:")
print(keep.view(4, 4))
print("responses kept:", int(keep.sum()), "of", keep.numel())

# GRPO's advantages of the same scores: a flat group's are all 0
grouped = scores.view(4, 4)
mean = grouped.mean(dim=1, keepdim=True)
std = grouped.std(dim=1, keepdim=True)
print("advantages:")
print((grouped - mean) / (std + 1e-6))

# G = 16 responses, each right with probability p: how often is a group flat?
G = 16
for p in [0.5, 0.9, 0.95, 0.99]:
    flat = p ** G + (1 - p) ** G
    print(f"p = {p}: {flat:.1%} of the groups flat, "
          f"{1 / (1 - flat):.2f} groups sampled per group kept")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Dropping Flat Groups", "zh": "丢弃无信号的组"}


def inputs(draw):
    G, N = draw.groups(5)
    # a verifier's 0/1 (many flat groups), partial credit, a grader's tenths, or a reward
    # model's real numbers
    kind = draw.choice(["verifier", "partial", "tenths", "tenths", "model"])
    if kind == "verifier":
        return {"scores": draw.choice([0.0, 1.0], N), "group_size": G}
    if kind == "partial":
        return {"scores": draw.choice([0.0, 0.5, 1.0], N), "group_size": G}
    if kind == "tenths":
        # one prompt's 8 or 16 scores: equal float32 tenths whose std over the one row is
        # not 0 (torch reduces several rows otherwise, and gets 0)
        G = N = draw.choice([8, 16])
        scores = draw.choice([k / 10 for k in range(11)], N)
    else:
        scores = draw.normal(N)
    # each group flat (its first score G times), a hair apart (some scores 1e-6 of themselves
    # above the first, inside torch.isclose's tolerance: a signal all the same), or as drawn
    grouped = scores.reshape(-1, G)
    first = grouped[:, :1] + 0 * grouped
    hair = first * (1 + 1e-6 * draw.choice([0.0, 1.0], grouped.shape))
    how = draw.choice([0.0, 0.0, 1.0, 2.0], (N // G, 1))
    grouped = (how == 0) * first + (how == 1) * hair + (how == 2) * grouped
    return {"scores": grouped.reshape(-1), "group_size": G}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "DAPO's dynamic sampling: which responses belong to a group with a signal.":
        "DAPO 的动态采样：哪些回复属于有信号的组。",
    "one score per response, N = groups × G,": "每条回复一个分数，N = 组数 × G，",
    "the responses to one prompt side by side": "同一 prompt 的回复挨在一起",
    ", responses sampled per prompt": "，每个 prompt 采样的回复数",
    "bool: False for every response of a group whose scores are all equal":
        "布尔值：分数全相等的组，其每条回复都为 False",
    "one row per prompt: [groups, G]": "每个 prompt 一行：[组数, G]",
    "[groups, 1], True where every score of the row equals its first":
        "[组数, 1]，一行的分数都等于它的第一个时为 True",
    "keep the other rows, one flag per response: [N]": "保留其余各行，每条回复一个标记：[N]",
    "four prompts, four responses each; a verifier scores 1 (right), 0 (wrong)":
        "四个 prompt，各四条回复；验证器打分：1（对），0（错）",
    "keep, one row per prompt:": "保留标记，每个 prompt 一行：",
    "responses kept:": "保留的回复：",
    "\"of\"": "\"条，共\"",
    "GRPO's advantages of the same scores: a flat group's are all 0":
        "同样分数下 GRPO 的优势：无信号的组全为 0",
    "advantages:": "优势：",
    "responses, each right with probability p: how often is a group flat?":
        "条回复，每条以概率 p 答对：一组全相同的概率是多少？",
    " of the groups flat, ": " 的组无信号，平均采样 ",
    " groups sampled per group kept": " 组才保留一组",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("rounding: hint, walkthrough: do not test std == 0: the std of equal floats is not "
     "always 0",
     "flat = (grouped == grouped[:, :1]).all(dim=1, keepdim=True)",
     "flat = grouped.std(dim=1, keepdim=True) == 0"),
    ("walkthrough: exact equality, not a tolerance (TRL's isclose): a score that differs, "
     "however little, is a signal",
     "flat = (grouped == grouped[:, :1]).all(dim=1, keepdim=True)",
     "flat = torch.isclose(grouped, grouped[:, :1]).all(dim=1, keepdim=True)"),
    ("hint: reshape(-1), not view(-1): an expanded tensor is not contiguous",
     "return (~flat).expand_as(grouped).reshape(-1)", "return (~flat).expand_as(grouped).view(-1)"),
]
# --8<-- [end:traps]
