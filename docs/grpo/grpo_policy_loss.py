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
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    beta = draw.choice([0.0, 0.0, 0.04, 0.1])  # 0 in half the cases: the clips' defaults
    if beta > 0:
        draw.keep("beta")  # the K3 term: not left out with the defaults
    # log-probs near each other (log-ratios within a few times 0.7), or, in two cases of three, half
    # the tokens far apart (±24): π_old from π_θ (beyond verl's clamp of the log-ratio at ±20,
    # ratios far above its dual clip's 3) or π_ref from π_θ (K3 above its clamp at 10)
    kind = draw.choice(["near", "far from the old policy", "far from the reference"])

    def near(x, far):
        if kind != far:
            return draw.normal((B, T), 0.5)
        return x + draw.choice([0.0, 0.0, 24.0, -24.0], (B, T)) + draw.normal((B, T), 0.5)

    new = draw.normal((B, T), 0.5)
    return {"new_logprobs": new, "old_logprobs": near(new, "far from the old policy"),
            "advantages": draw.advantages(B, T),
            "mask": draw.mask(B, T),
            "ref_logprobs": near(new, "far from the reference") if beta > 0 or draw.coin()
            else None,
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


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
# Not listed, as Check cannot fail it: the hint's d.exp() − 1 for expm1(d) (and TRL's
# exp(d) − d − 1). Its error is float32's rounding of e^d, at most β·6e-8 per token, against
# a loss of β·d²/2 for tiny d: far below Check's ATOL (1e-5), which the loss, a float32 sum of
# terms of either sign, needs.
TRAPS = [
    ("hint: [B] → [B, 1] with unsqueeze(1); unsqueeze(0) gives [1, B], along the tokens",
     "advantages = advantages.unsqueeze(1)", "advantages = advantages.unsqueeze(0)"),
    ("TODO 2, hint: the symmetric clip, ε_high ignored: clip-higher lost",
     "torch.clamp(ratio, 1 - clip_low, 1 + clip_high)",
     "torch.clamp(ratio, 1 - clip_low, 1 + clip_low)"),
    ("walkthrough: clip-higher raises only the upper bound: ε_high on the floor, ε_low on the "
     "ceiling",
     "torch.clamp(ratio, 1 - clip_low, 1 + clip_high)",
     "torch.clamp(ratio, 1 - clip_high, 1 + clip_low)"),
    ("TODO 3, hint: 'as in PPO, the larger': torch.minimum",
     "loss = torch.maximum(-advantages * ratio, -advantages * clipped)",
     "loss = torch.minimum(-advantages * ratio, -advantages * clipped)"),
    ("hint: d = log π_ref − log π_θ: the policy minus the reference",
     "d = (ref_logprobs - new_logprobs).masked_fill(mask == 0, 0.0)",
     "d = (new_logprobs - ref_logprobs).masked_fill(mask == 0, 0.0)"),
    ("gradient: hint: d not set to 0 on padding before exp: the last masked_fill hides the "
     "NaN from the value, not from the gradient",
     "d = (ref_logprobs - new_logprobs).masked_fill(mask == 0, 0.0)",
     "d = ref_logprobs - new_logprobs"),
    ("gradient: walkthrough: TRL exponentiates the unmasked log-ratio: NaN on padding, hidden "
     "from the value by the last masked_fill",
     "log_ratio = (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0)",
     "log_ratio = new_logprobs - old_logprobs"),
    ("walkthrough: TRL's ρ·K3 (use_bias_correction_kl), not this exercise's K3",
     "loss = loss + beta * (torch.expm1(d) - d)",
     "loss = loss + beta * ratio * (torch.expm1(d) - d)"),
    ("walkthrough: verl's clamp of the log-ratio to [−20, 20] before exp",
     "ratio = log_ratio.exp()", "ratio = log_ratio.clamp(-20, 20).exp()"),
    ("walkthrough: verl's dual clip, the loss of a negative-advantage token capped at 3|Â|",
     "loss = torch.maximum(-advantages * ratio, -advantages * clipped)\n",
     "loss = torch.maximum(-advantages * ratio, -advantages * clipped)\n"
     "    loss = torch.where(advantages < 0, torch.minimum(loss, -3 * advantages), loss)\n"),
    ("walkthrough: verl's K3 clamped to [−10, 10]",
     "loss = loss + beta * (torch.expm1(d) - d)",
     "loss = loss + beta * (torch.expm1(d) - d).clamp(-10, 10)"),
    ("the comment: the per-token loss × mask, 0 × NaN is NaN",
     "loss = loss.masked_fill(mask == 0, 0.0)", "loss = loss * mask"),
    ("token-mean (Ex. 3) without clamp(min=1): an all-padding batch divides 0 by 0",
     "return loss.sum() / mask.sum().clamp(min=1)", "return loss.sum() / mask.sum()"),
]
# --8<-- [end:traps]
