# --8<-- [start:exercise]
import torch


def value_clipped_loss(new_values, old_values, returns, mask,
                       clip_range_value=0.2):
    """PPO clipped value loss.

    Args:
        new_values: [B, T] current critic outputs
        old_values: [B, T] critic outputs frozen at rollout time
        returns:    [B, T] targets from compute_gae (advantages + values)
        mask:       [B, T]
        clip_range_value: how far one update may move V
    Returns:
        scalar loss
    """
    # TODO 1: V_clip = V_old + clip(V − V_old, −ε_v, ε_v)
    v_clipped = old_values + torch.clamp(
        new_values - old_values, -clip_range_value, clip_range_value,
    )

    # TODO 2: (V − R)²
    loss_unclipped = (new_values - returns) ** 2

    # TODO 3: (V_clip − R)²
    loss_clipped = (v_clipped - returns) ** 2

    # TODO 4: ½ · the larger of the two (pessimistic again)
    loss_per_tok = 0.5 * torch.maximum(loss_unclipped, loss_clipped)

    # mean over response tokens (masked_fill, not × mask: 0 × NaN is NaN)
    loss_per_tok = loss_per_tok.masked_fill(mask == 0, 0.0)
    return loss_per_tok.sum() / mask.sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
torch.manual_seed(2)
B, T = 2, 5
old_v = torch.randn(B, T) * 0.5
new_v = old_v + torch.randn(B, T) * 0.3  # the critic has drifted a little
returns = old_v + torch.randn(B, T) * 0.4
mask = torch.ones(B, T)
loss = value_clipped_loss(new_v, old_v, returns, mask, clip_range_value=0.2)
print(f"value loss = {loss.item():.4f}")

# the last token turned into padding, then garbage put there: same loss
mask[1, 4] = 0
clean = value_clipped_loss(new_v, old_v, returns, mask)
returns[1, 4] = float("nan")
print(f"mask[1, 4] = 0: {clean.item():.4f};  + NaN at [1, 4]: "
      f"{value_clipped_loss(new_v, old_v, returns, mask).item():.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Value Clipped Loss", "zh": "Clipped 价值损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_values",)


def inputs(draw):
    B, T = draw.size()
    return {"new_values": draw.normal((B, T), 0.5), "old_values": draw.normal((B, T), 0.5),
            "returns": draw.normal((B, T), 0.5), "mask": draw.mask(B, T),
            "clip_range_value": draw.choice([0.2, 0.1, 0.5])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "PPO clipped value loss.": "PPO 的裁剪价值损失。",
    "current critic outputs": "当前 critic 的输出",
    "critic outputs frozen at rollout time": "rollout 时冻结的 critic 输出",
    "targets from compute_gae (advantages + values)": "compute_gae 给出的目标（优势 + 价值）",
    "how far one update may move V": "一次更新最多能把 V 移动多远",
    "scalar loss": "标量损失",
    "the larger of the two (pessimistic again)": "两者中较大的（又是悲观的取法）",
    "mean over response tokens (masked_fill, not × mask: 0 × NaN is NaN)":
        "对回复 token 取平均（用 masked_fill，不要 × mask：0 × NaN 还是 NaN）",
    "the critic has drifted a little": "critic 稍微漂移了一点",
    "value loss = ": "价值损失 = ",
    "the last token turned into padding, then garbage put there: same loss":
        "把最后一个 token 变成 padding，再往那里塞垃圾值：损失不变",
    " + NaN at [1, 4]: ": " [1, 4] 处再放 NaN：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: the clipped difference not added back to the old values",
     "v_clipped = old_values + torch.clamp(", "v_clipped = torch.clamp("),
    ("hint: both squared errors against the returns: the clipped one against the old values",
     "loss_clipped = (v_clipped - returns) ** 2", "loss_clipped = (v_clipped - old_values) ** 2"),
    ("TODO 4: 'pessimistic again': torch.minimum of the two, not the maximum",
     "torch.maximum(loss_unclipped, loss_clipped)", "torch.minimum(loss_unclipped, loss_clipped)"),
    ("TODO 4, hint: the ½ left out",
     "loss_per_tok = 0.5 * torch.maximum(", "loss_per_tok = torch.maximum("),
    ("walkthrough: the PPO paper's value loss, a plain squared error without the clip",
     "0.5 * torch.maximum(loss_unclipped, loss_clipped)", "0.5 * loss_unclipped"),
    ("walkthrough: ε_v = 0.5 by default, verl's and OpenRLHF's, not 0.2 (TRL's last PPOTrainer)",
     "clip_range_value=0.2", "clip_range_value=0.5"),
    ("the comment: the per-token loss multiplied by the mask, 0 × NaN is NaN",
     "loss_per_tok = loss_per_tok.masked_fill(mask == 0, 0.0)",
     "loss_per_tok = loss_per_tok * mask"),
    ("the mean over response tokens: the mean over every position, padding included",
     "return loss_per_tok.sum() / mask.sum().clamp(min=1)", "return loss_per_tok.mean()"),
    ("the answer's clamp(min=1): without it a batch with no response token gives 0/0 = NaN",
     "mask.sum().clamp(min=1)", "mask.sum()"),
]
# --8<-- [end:traps]
