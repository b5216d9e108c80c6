# --8<-- [start:exercise]
import torch


def grpo_policy_loss(new_logprobs, old_logprobs, advantages, mask,
                     ref_logprobs=None, clip_low=0.2, clip_high=0.2,
                     beta=0.0):
    """GRPO's clipped surrogate with clip-higher and a k3 KL penalty.

    Args:
        new_logprobs: [B, T]
        old_logprobs: [B, T]
        advantages:   [B] one per response (group_advantages), or [B, T]
        mask:         [B, T]
        ref_logprobs: [B, T] under the frozen reference (if beta > 0)
        clip_low:     ε_low, the ratio's floor is 1 − ε_low
        clip_high:    ε_high, its ceiling 1 + ε_high (DAPO: 0.28)
        beta:         weight of the k3 penalty
    Returns:
        scalar loss, the mean over response tokens ("token-mean")
    """
    if advantages.dim() == 1:
        # TODO 1: [B] → [B, 1]: one advantage for all the row's tokens
        advantages = advantages.unsqueeze(1)

    # log ρ = log π_θ − log π_old, 0 on padding (PPO Ex. 1)
    log_ratio = (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0)
    ratio = log_ratio.exp()

    # TODO 2: the asymmetric clip, clip(ρ, 1 − ε_low, 1 + ε_high)
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high)

    # TODO 3: the larger of −Â·ρ and −Â·clip(ρ)
    loss = torch.maximum(-advantages * ratio, -advantages * clipped)

    if beta > 0:
        # d = log π_ref − log π_θ, 0 on padding
        d = (ref_logprobs - new_logprobs).masked_fill(mask == 0, 0.0)
        # TODO 4: + β·k3, k3 = (e^d − 1) − d with expm1 (PPO Ex. 5): exact
        # for tiny d, where e^d − d − 1 in float32 can come out negative
        loss = loss + beta * (torch.expm1(d) - d)

    # token-mean (Ex. 3); masked_fill, not × mask: 0 × NaN is NaN
    loss = loss.masked_fill(mask == 0, 0.0)
    return loss.sum() / mask.sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# one response, three tokens; the policy has moved: ρ = 1.25, 1.25, 0.75
old = torch.zeros(1, 3)
new = torch.tensor([[1.25, 1.25, 0.75]]).log()
mask = torch.ones(1, 3)
for adv in [1.0, -1.0]:
    a = torch.tensor([adv])
    sym = grpo_policy_loss(new, old, a, mask)
    high = grpo_policy_loss(new, old, a, mask, clip_high=0.28)
    print(f"Â = {adv:+.0f}: ε_high 0.2 → {sym.item():+.4f},"
          f"  ε_high 0.28 → {high.item():+.4f}")

# + β·k3: the reference gives each token log-prob −1 (β = 0.04)
ref = torch.full((1, 3), -1.0)
kl = grpo_policy_loss(new, old, torch.tensor([1.0]), mask, ref, beta=0.04)
print(f"with β·k3: {kl.item():+.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "GRPO Policy Loss", "zh": "GRPO 策略损失"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob",
           "ref_logprobs": "logprob"}


def inputs(draw):
    B, T = draw.size()
    beta = draw.choice([0.0, 0.04, 0.1])
    return {"new_logprobs": draw.normal((B, T), 0.5), "old_logprobs": draw.normal((B, T), 0.5),
            "advantages": draw.advantages(B, T),
            "mask": draw.mask(B, T),
            "ref_logprobs": draw.normal((B, T), 0.5) if beta > 0 or draw.coin() else None,
            "clip_low": draw.choice([0.2, 0.1]), "clip_high": draw.choice([0.2, 0.28]),
            "beta": beta}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "GRPO's clipped surrogate with clip-higher and a k3 KL penalty.":
        "GRPO 的裁剪替代目标，带 clip-higher 和 k3 KL 惩罚。",
    "one per response (group_advantages), or [B, T]":
        "每条回复一个（group_advantages），或 [B, T]",
    "under the frozen reference (if beta > 0)": "冻结参考模型下的对数概率（beta > 0 时）",
    "ε_low, the ratio's floor is 1 − ε_low": "ε_low，比值的下界是 1 − ε_low",
    "ε_high, its ceiling 1 + ε_high (DAPO: 0.28)": "ε_high，上界是 1 + ε_high（DAPO 取 0.28）",
    "weight of the k3 penalty": "k3 惩罚的权重",
    "scalar loss, the mean over response tokens (\"token-mean\")":
        "标量损失，对回复 token 取平均（\"token-mean\"）",
    ": one advantage for all the row's tokens": "：这一行所有 token 共用一个优势",
    ", 0 on padding (PPO Ex. 1)": "，padding 上为 0（PPO 练习 1）",
    "the asymmetric clip, ": "不对称裁剪：",
    "the larger of −Â·ρ and −Â·clip(ρ)": "−Â·ρ 和 −Â·clip(ρ) 中较大的",
    ", 0 on padding": "，padding 上为 0",
    " with expm1 (PPO Ex. 5): exact": "，用 expm1（PPO 练习 5）：",
    "for tiny d, where e^d − d − 1 in float32 can come out negative":
        "d 极小时也精确，而 float32 下的 e^d − d − 1 可能算出负数",
    " (Ex. 3); masked_fill, not × mask: 0 × NaN is NaN":
        "（练习 3）；用 masked_fill，不要 × mask：0 × NaN 还是 NaN",
    "one response, three tokens; the policy has moved: ρ = 1.25, 1.25, 0.75":
        "一条回复，三个 token；策略已经变了：ρ = 1.25, 1.25, 0.75",
    ": the reference gives each token log-prob −1 (β = 0.04)":
        "：参考模型给每个 token 的对数概率是 −1（β = 0.04）",
    "with β·k3: ": "加上 β·k3：",
}
# --8<-- [end:zh]
