# --8<-- [start:exercise]
import torch


def cispo_loss(new_logprobs, old_logprobs, advantages, mask,
               clip_low=0.2, clip_high=0.28):
    """CISPO: REINFORCE with the clipped importance ratio as a constant
    weight, so that a clipped token keeps its gradient.

    Args:
        new_logprobs: [B, T]
        old_logprobs: [B, T]
        advantages:   [B] one per response, or [B, T]
        mask:         [B, T]
        clip_low:     ε_low, the weight's floor is 1 − ε_low (1: no floor)
        clip_high:    ε_high, its ceiling 1 + ε_high
    Returns:
        scalar loss, the mean over response tokens ("token-mean")
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)  # [B, 1]

    # ρ = exp(log π_θ − log π_old), log-ratio 0 on padding (PPO Ex. 1)
    ratio = (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0).exp()

    # TODO 1: the weight clip(ρ, 1 − ε_low, 1 + ε_high), detached: a number,
    # no gradient flows through it
    weight = torch.clamp(ratio, 1 - clip_low, 1 + clip_high).detach()

    # TODO 2: REINFORCE with that weight: −ŵ·Â·log π_θ
    loss = -weight * advantages * new_logprobs

    # token-mean; masked_fill, not × mask: 0 × NaN is NaN
    loss = loss.masked_fill(mask == 0, 0.0)
    return loss.sum() / mask.sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
def ppo_loss(new, old, adv, mask, clip_low=0.2, clip_high=0.28):
    """PPO's clipped loss (GRPO Ex. 4), token-mean."""
    ratio = (new - old).exp()
    loss = torch.maximum(-adv[:, None] * ratio,
                         -adv[:, None] * ratio.clamp(1 - clip_low, 1 + clip_high))
    return (loss * mask).sum() / mask.sum()


def slopes(loss_fn, new, old, hold_ratio=False, h=1e-6):
    """∂loss/∂log π_θ(y_t) of every token, by central differences; with
    hold_ratio, log π_old moves with log π_θ, so ρ and the detached weight
    stay put: the slope autograd computes."""
    out = torch.zeros_like(new)
    for b in range(new.shape[0]):
        for t in range(new.shape[1]):
            e = torch.zeros_like(new)
            e[b, t] = h
            moved = e if hold_ratio else 0 * e
            up = loss_fn(new + e, old + moved)
            down = loss_fn(new - e, old - moved)
            out[b, t] = (up - down) / (2 * h)
    return out


# Two responses of two tokens: Â = +1, then Â = −1
old = torch.tensor([[0.2, 0.5], [0.4, 0.1]], dtype=torch.float64).log()
rho = torch.tensor([[1.5, 1.1], [0.5, 1.5]], dtype=torch.float64)
new = old + rho.log()
adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
mask = torch.ones(2, 2, dtype=torch.float64)

ppo = slopes(lambda n, o: ppo_loss(n, o, adv, mask), new, old)
verl = slopes(lambda n, o: cispo_loss(n, o, adv, mask), new, old, True)
# TRL's convention: weight min(ρ, epsilon_high), no floor; epsilon_high = 5
trl = slopes(lambda n, o: cispo_loss(n, o, adv, mask, 1.0, 4.0), new, old, True)
print("  ρ     Â    ∂L/∂log π: PPO   CISPO [0.8, 1.28]   CISPO ≤ 5")
for b in range(2):
    for t in range(2):
        print(f"{rho[b, t]:.2f}  {adv[b]:+.0f}         {ppo[b, t]:+.4f}"
              f"   {verl[b, t]:+.4f}             {trl[b, t]:+.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "CISPO Loss", "zh": "CISPO 损失"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    old = draw.normal((B, T), 0.5, -1.0)
    return {"new_logprobs": old + draw.normal((B, T), 0.3), "old_logprobs": old,
            "advantages": draw.advantages(B, T),
            "mask": draw.mask(B, T),
            "clip_low": draw.choice([0.2, 1.0]), "clip_high": draw.choice([0.2, 0.28, 4.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "CISPO: REINFORCE with the clipped importance ratio as a constant":
        "CISPO：把裁剪后的重要性采样比当作常数权重的 REINFORCE，",
    "weight, so that a clipped token keeps its gradient.": "被裁剪的 token 因此保留梯度。",
    "one per response, or [B, T]": "每条回复一个，或 [B, T]",
    "ε_low, the weight's floor is 1 − ε_low (1: no floor)":
        "ε_low，权重的下界是 1 − ε_low（取 1：没有下界）",
    "ε_high, its ceiling 1 + ε_high": "ε_high，上界是 1 + ε_high",
    "scalar loss, the mean over response tokens (\"token-mean\")":
        "标量损失，对回复 token 取平均（\"token-mean\"）",
    ", log-ratio 0 on padding (PPO Ex. 1)": "，padding 上的对数比为 0（PPO 练习 1）",
    "the weight clip(ρ, 1 − ε_low, 1 + ε_high), detached: a number,":
        "权重 clip(ρ, 1 − ε_low, 1 + ε_high)，detach 掉：它只是一个数，",
    "no gradient flows through it": "梯度不经过它",
    "REINFORCE with that weight: −ŵ·Â·log π_θ": "带这个权重的 REINFORCE：−ŵ·Â·log π_θ",
    "token-mean; masked_fill, not × mask: 0 × NaN is NaN":
        "token-mean；用 masked_fill，不要 × mask：0 × NaN 还是 NaN",
    "PPO's clipped loss (GRPO Ex. 4), token-mean.": "PPO 的裁剪损失（GRPO 练习 4），token-mean。",
    "∂loss/∂log π_θ(y_t) of every token, by central differences; with":
        "每个 token 的 ∂loss/∂log π_θ(y_t)，用中心差分算；",
    "hold_ratio, log π_old moves with log π_θ, so ρ and the detached weight":
        "hold_ratio 为真时 log π_old 随 log π_θ 一起动，ρ 和 detach 掉的权重",
    "stay put: the slope autograd computes.": "都不变：这正是自动求导算出的斜率。",
    "Two responses of two tokens: Â = +1, then Â = −1":
        "两条回复，各两个 token：Â 先是 +1，再是 −1",
    "TRL's convention: weight min(ρ, epsilon_high), no floor; epsilon_high = 5":
        "TRL 的约定：权重为 min(ρ, epsilon_high)，没有下界；epsilon_high = 5",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: the weight multiplies new_logprobs, the log-probability itself, not the ratio",
     "loss = -weight * advantages * new_logprobs", "loss = -weight * advantages * ratio"),
    ("comment: masked_fill, not × mask: 0 × NaN is NaN",
     "loss = loss.masked_fill(mask == 0, 0.0)", "loss = loss * mask"),
    ("TRL's note: its cap is epsilon_high itself, not 1 + epsilon_high",
     "torch.clamp(ratio, 1 - clip_low, 1 + clip_high)",
     "torch.clamp(ratio, 1 - clip_low, clip_high)"),
    ("walkthrough, verl's note: the weight has a floor, 1 − ε_low (MiniMax-M1 clips only from "
     "above, clip_low = 1.0)",
     "torch.clamp(ratio, 1 - clip_low, 1 + clip_high)", "torch.clamp(ratio, max=1 + clip_high)"),
    ("gradient: hint, without detach autograd differentiates the weight too: an unclipped "
     "token's gradient becomes −Âρ(1 + log π_θ)/N",
     "weight = torch.clamp(ratio, 1 - clip_low, 1 + clip_high).detach()",
     "weight = torch.clamp(ratio, 1 - clip_low, 1 + clip_high)"),
]
# --8<-- [end:traps]
