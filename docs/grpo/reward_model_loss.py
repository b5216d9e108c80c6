# --8<-- [start:exercise]
import torch
import torch.nn.functional as F


def reward_model_loss(chosen_scores, rejected_scores, margin=None):
    """Bradley–Terry loss of a reward model on preference pairs.

    Args:
        chosen_scores:   [B] scores of the preferred responses
        rejected_scores: [B] scores of the rejected ones
        margin:          None, a number or [B]: how much higher the chosen
                         score should be
    Returns:
        scalar loss, −mean log σ(r_c − r_r − m)
    """
    # TODO 1: z = r_c − r_r
    z = chosen_scores - rejected_scores
    if margin is not None:
        # TODO 2: − m
        z = z - margin

    # TODO 3: −log σ(z), finite for any z (not log(sigmoid(z)))
    return -F.logsigmoid(z).mean()
# --8<-- [end:exercise]


# --8<-- [start:test]
chosen = torch.tensor([2.0, 0.5, -1.0])
rejected = torch.tensor([0.0, 0.5, 1.0])
print(f"loss = {reward_model_loss(chosen, rejected).item():.4f}"
      f"  (ln 2 = {torch.log(torch.tensor(2.0)).item():.4f} for a tie)")
with_margin = reward_model_loss(chosen, rejected, margin=1.0)
print(f"margin 1: {with_margin.item():.4f}")

# a pair the model has badly wrong: the stable form stays finite
far = torch.tensor([-1000.0]), torch.tensor([0.0])
naive = -torch.log(torch.sigmoid(far[0] - far[1])).mean()
print(f"z = −1000: stable {reward_model_loss(*far).item():.1f},"
      f" naive {naive.item()}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Reward-Model Loss", "zh": "奖励模型损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("chosen_scores", "rejected_scores")


def inputs(draw):
    B = draw.length(1, 8)  # preference pairs
    kind = draw.choice(["none", "number", "per pair"])  # of margin
    margin = {"none": None, "number": 1.0, "per pair": draw.lognormal(B, 0.5)}[kind]
    # scores of a few units, or of hundreds (a reward model's unbounded logits): pairs it has
    # badly wrong, r_c − r_r far below −88, where σ rounds to 0 in float32 (the walkthrough's
    # last line)
    scale = draw.choice([2.0, 2.0, 300.0])
    return {"chosen_scores": draw.normal(B, scale), "rejected_scores": draw.normal(B, scale),
            "margin": margin}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Bradley–Terry loss of a reward model on preference pairs.":
        "奖励模型在偏好对上的 Bradley–Terry 损失。",
    "scores of the preferred responses": "偏好回复的分数",
    "scores of the rejected ones": "非偏好回复的分数",
    "None, a number or [B]: how much higher the chosen": "None、一个数或 [B]：偏好回复的分数",
    "score should be": "应该高出多少",
    "scalar loss, ": "标量损失：",
    ", finite for any z (not log(sigmoid(z)))": "，对任何 z 都有限（不要写 log(sigmoid(z))）",
    "loss = ": "损失 = ",
    "f\"  (ln 2 = ": "f\"（打平时 ln 2 = ",
    " for a tie)": "）",
    "margin 1: ": "margin 为 1：",
    "a pair the model has badly wrong: the stable form stays finite":
        "模型错得很离谱的一对：稳定写法仍然有限",
    ": stable ": "：稳定写法 ",
    " naive ": " 朴素写法 ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("TODO 3, walkthrough: log(sigmoid(z)) is −inf once σ(z) rounds to 0 (a pair badly wrong)",
     "return -F.logsigmoid(z).mean()", "return -torch.log(torch.sigmoid(z)).mean()"),
    ("hint: logsigmoid never forms σ(z): log(1 + exp(−z)) by hand overflows to inf",
     "return -F.logsigmoid(z).mean()", "return torch.log(1 + torch.exp(-z)).mean()"),
    ("hint: a margin is subtracted: added instead",
     "z = z - margin", "z = z + margin"),
    ("TODO 3: −log σ(z): the minus sign left out",
     "return -F.logsigmoid(z).mean()", "return F.logsigmoid(z).mean()"),
    ("key formulas: −mean log σ: the sum over the pairs",
     "return -F.logsigmoid(z).mean()", "return -F.logsigmoid(z).sum()"),
]
# --8<-- [end:traps]
