# --8<-- [start:exercise]
import torch


def policy_surrogate_loss(new_logprobs, old_logprobs, advantages, mask,
                          clip_range=0.2):
    """PPO clipped surrogate, as a loss to minimise.

    Args:
        new_logprobs: [B, T]
        old_logprobs: [B, T]
        advantages:   [B, T] (from compute_gae)
        mask:         [B, T]
        clip_range:   ε, usually 0.2
    Returns:
        scalar loss, the mean over response tokens
    """
    # TODO 1: ρ = exp(log π_θ − log π_old), log ρ = 0 on padding (Ex. 1)
    ratio = (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()

    # TODO 2: unclipped term −Â·ρ
    unclipped = -advantages * ratio

    # TODO 3: clipped term −Â·clip(ρ, 1 − ε, 1 + ε)
    clipped = -advantages * torch.clamp(ratio, 1 - clip_range,
                                        1 + clip_range)

    # TODO 4: the larger loss of the two (the pessimistic bound)
    loss_per_tok = torch.maximum(unclipped, clipped)

    # mean over response tokens (masked_fill, not × mask: 0 × NaN is NaN)
    loss_per_tok = loss_per_tok.masked_fill(mask == 0, 0.0)
    return loss_per_tok.sum() / mask.sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
B, T = 2, 4
old = torch.zeros(B, T)
# several ratios fall outside [0.8, 1.2]
new = torch.tensor([[0.0, 0.5, -0.5, 1.0],
                    [-0.3, 0.0, 0.3, -0.1]])
adv = torch.tensor([[1.0, 1.0, 1.0, 1.0],
                    [-1.0, -1.0, -1.0, -1.0]])
mask = torch.ones(B, T)
loss = policy_surrogate_loss(new, old, adv, mask, clip_range=0.2)
print(f"policy loss = {loss.item():+.4f}")

# the last token turned into padding, then garbage put there: same loss
mask[1, 3] = 0
clean = policy_surrogate_loss(new, old, adv, mask)
new[1, 3], old[1, 3], adv[1, 3] = -float("inf"), -float("inf"), float("nan")
dirty = policy_surrogate_loss(new, old, adv, mask)
print(f"mask[1, 3] = 0: {clean.item():+.4f};"
      f" + (-inf, NaN) at [1, 3]: {dirty.item():+.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Clipped Surrogate Loss", "zh": "Clipped Surrogate 策略损失"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    return {"new_logprobs": draw.normal((B, T), 0.5), "old_logprobs": draw.normal((B, T), 0.5),
            "advantages": draw.normal((B, T)), "mask": draw.mask(B, T),
            "clip_range": draw.choice([0.2, 0.1, 0.3])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "PPO clipped surrogate, as a loss to minimise.": "PPO 的裁剪替代目标，写成要最小化的损失。",
    " (from compute_gae)": "（来自 compute_gae）",
    ", usually 0.2": "，通常取 0.2",
    "scalar loss, the mean over response tokens": "标量损失，对回复 token 取平均",
    ", log ρ = 0 on padding (Ex. 1)": "，padding 上 log ρ = 0（练习 1）",
    "unclipped term": "不裁剪的项",
    "clipped term": "裁剪后的项",
    "the larger loss of the two (the pessimistic bound)": "两者中较大的损失（悲观的界）",
    "mean over response tokens (masked_fill, not × mask: 0 × NaN is NaN)":
        "对回复 token 取平均（用 masked_fill，不要 × mask：0 × NaN 还是 NaN）",
    "several ratios fall outside [0.8, 1.2]": "有几个比值落在 [0.8, 1.2] 之外",
    "policy loss = ": "策略损失 = ",
    "the last token turned into padding, then garbage put there: same loss":
        "把最后一个 token 变成 padding，再往那里塞垃圾值：损失不变",
    " + (-inf, NaN) at [1, 3]: ": " [1, 3] 处再放 (-inf, NaN)：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("gradient: TODO 1, hint (Ex. 1): the log-ratio multiplied by the mask: −inf − (−inf) = NaN "
     "survives; the last masked_fill hides it from the value, not from the gradient",
     "(new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()",
     "((new_logprobs - old_logprobs) * mask).exp()"),
    ("gradient: hint (Ex. 1): padding filled after exp, ρ·mask + (1 − mask): NaN on padding, "
     "hidden from the value by the last masked_fill",
     "(new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()",
     "(new_logprobs - old_logprobs).exp() * mask + (1 - mask)"),
    ("hint: both terms carry a minus sign: the unclipped one without it",
     "unclipped = -advantages * ratio", "unclipped = advantages * ratio"),
    ("TODO 4, walkthrough, about the source: torch.minimum of the losses, not the maximum",
     "torch.maximum(unclipped, clipped)", "torch.minimum(unclipped, clipped)"),
    ("hint, walkthrough: the paper's min of the objectives, not negated into a loss",
     "loss_per_tok = torch.maximum(unclipped, clipped)",
     "loss_per_tok = torch.minimum(-unclipped, -clipped)"),
    ("the comment: the per-token loss multiplied by the mask, 0 × NaN is NaN",
     "loss_per_tok = loss_per_tok.masked_fill(mask == 0, 0.0)",
     "loss_per_tok = loss_per_tok * mask"),
    ("'Averaging is a choice': the mean over every position, padding included",
     "return loss_per_tok.sum() / mask.sum().clamp(min=1)",
     "return loss_per_tok.mean()"),
    ("'Averaging is a choice': each sequence's mean first, then the mean of those (the "
     "original GRPO), not the token-level mean",
     "return loss_per_tok.sum() / mask.sum().clamp(min=1)",
     "return (loss_per_tok.sum(-1) / mask.sum(-1).clamp(min=1)).mean()"),
    ("the answer's clamp(min=1): without it a batch with no response token gives 0/0 = NaN",
     "mask.sum().clamp(min=1)", "mask.sum()"),
]
# --8<-- [end:traps]
