# --8<-- [start:exercise]
import torch


def ppo_clipped_objective(ratio, advantage, clip_epsilon=0.2):
    """PPO's clipped objective, to maximise:
    E[min(ρ·Â, clip(ρ, 1 − ε, 1 + ε)·Â)]

    Args:
        ratio:     probability ratios ρ = π_θ / π_old, any shape
        advantage: advantages Â, the same shape
        clip_epsilon: ε
    Returns:
        the objective, a 0-d tensor
    """
    # TODO 1: the unclipped objective ρ·Â
    surr1 = ratio * advantage

    # TODO 2: keep ρ inside [1 − ε, 1 + ε]
    clipped_ratio = torch.clamp(ratio, 1 - clip_epsilon, 1 + clip_epsilon)

    # TODO 3: the clipped objective clip(ρ)·Â
    surr2 = clipped_ratio * advantage

    # TODO 4: the smaller of the two, averaged
    objective = torch.min(surr1, surr2).mean()
    return objective
# --8<-- [end:exercise]


# --8<-- [start:test]
ratio = torch.tensor([0.5, 1.0, 1.5, 2.0, 3.0])
print(f"ρ = {ratio.tolist()}, ε = 0.2")
for a in (1.0, -1.0):
    advantage = torch.full_like(ratio, a)
    # the objective of each ρ alone, then of all five
    per_item = [ppo_clipped_objective(ratio[i:i + 1], advantage[i:i + 1])
                for i in range(len(ratio))]
    objective = ppo_clipped_objective(ratio, advantage, clip_epsilon=0.2)
    print(f"Â = {a:+g}: min(ρÂ, clip(ρ)Â) ="
          f" {[round(x.item(), 4) for x in per_item]},"
          f" L^CLIP = {objective.item():.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "PPO Clipped Objective", "zh": "PPO 裁剪目标"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("ratio",)


def inputs(draw):
    n = draw.length()  # samples
    return {"ratio": draw.lognormal(n, 0.4), "advantage": draw.normal(n),
            "clip_epsilon": draw.choice([0.2, 0.1])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "PPO's clipped objective, to maximise:": "PPO 的裁剪目标，要最大化：",
    "probability ratios ρ = π_θ / π_old, any shape": "概率比 ρ = π_θ / π_old，任意形状",
    "advantages Â, the same shape": "优势 Â，形状相同",
    "the objective, a 0-d tensor": "目标值，0 维张量",
    "the unclipped objective": "不裁剪的目标",
    "keep ρ inside": "把 ρ 限制在",
    "the clipped objective": "裁剪后的目标",
    "the smaller of the two, averaged": "取两者中较小的，再求平均",
    "the objective of each ρ alone, then of all five": "先算每个 ρ 单独的目标，再算五个一起的",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("step 4, 'the key insight': torch.max of the two objectives, not the min",
     "torch.min(surr1, surr2)", "torch.max(surr1, surr2)"),
    ("about the source: the clipped objective alone lifts ρ = 0.5 up to 0.8 (clipping can only "
     "make the objective smaller)",
     "objective = torch.min(surr1, surr2).mean()", "objective = surr2.mean()"),
    ("the PPO fill-in's loss form, max(−ρÂ, −clip(ρ)Â): a number of the opposite sign",
     "objective = torch.min(surr1, surr2).mean()",
     "objective = torch.max(-surr1, -surr2).mean()"),
    ("step 4: 'then average': the sum",
     "torch.min(surr1, surr2).mean()", "torch.min(surr1, surr2).sum()"),
]
# --8<-- [end:traps]
