# --8<-- [start:exercise]
import torch


def sapo_loss(new_logprobs, old_logprobs, advantages, mask,
              tau_pos=1.0, tau_neg=1.05):
    """SAPO: a soft sigmoid gate on the ratio in place of PPO's clip.

    Args:
        new_logprobs: [B, T]
        old_logprobs: [B, T]
        advantages:   [B] one per response, or [B, T]
        mask:         [B, T]
        tau_pos:      temperature of the tokens with Â > 0
        tau_neg:      temperature of the tokens with Â ≤ 0 (larger: the
                      gradient decays faster)
    Returns:
        scalar loss: each response's mean over its tokens, then the mean
        over responses ("seq-mean-token-mean", as verl does for SAPO)
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)  # [B, 1]

    # log ρ clamped to [−20, 20] as in verl, 0 on padding
    log_ratio = (new_logprobs - old_logprobs).clamp(-20, 20)
    ratio = log_ratio.masked_fill(mask == 0, 0.0).exp()

    # TODO 1: τ = τ_pos where Â > 0, τ_neg elsewhere, in Â's dtype
    # (torch.where(Â > 0, 1.0, 1.05) would make it float32)
    tau = torch.full_like(advantages, tau_neg).masked_fill(advantages > 0, tau_pos)

    # TODO 2: the soft gate f(ρ) = σ(τ(ρ − 1))·4/τ
    gate = torch.sigmoid(tau * (ratio - 1)) * 4 / tau

    # TODO 3: the per-token loss −Â·f(ρ), 0 on padding
    loss = (-advantages * gate).masked_fill(mask == 0, 0.0)

    tokens = mask.sum(dim=1)  # [B] tokens per response
    # TODO 4: each response's mean over its tokens (GRPO Ex. 3)
    per_seq = loss.sum(dim=1) / tokens.clamp(min=1)
    # the mean over the responses that have a token
    return per_seq.sum() / (tokens > 0).sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# One token at ratio ρ. Its weight: −∂loss/∂log π ÷ Â, the share of the
# policy gradient Â·∇log π it gets (1 on policy), by a central difference.
mask = torch.ones(1, 1, dtype=torch.float64)
old = torch.zeros(1, 1, dtype=torch.float64)


def clip_loss(new, old, adv, mask, eps=0.2):
    """PPO's clipped surrogate (ε = 0.2), for comparison."""
    ratio = (new - old).exp()
    clipped = ratio.clamp(1 - eps, 1 + eps)
    return torch.maximum(-adv * ratio, -adv * clipped).sum()


def weight(loss_fn, rho, adv, **kw):
    """−∂loss/∂log π ÷ Â for one token at ratio ρ."""
    h = 1e-6
    a = torch.tensor([adv], dtype=torch.float64)
    log_rho = torch.tensor(rho, dtype=torch.float64).log()
    up = loss_fn(old + log_rho + h, old, a, mask, **kw)
    down = loss_fn(old + log_rho - h, old, a, mask, **kw)
    return -((up - down) / (2 * h)).item() / adv + 0.0


print("  ρ    clip Â=+1  SAPO Â=+1   clip Â=−1  SAPO Â=−1")
for rho in [0.5, 0.9, 1.0, 1.1, 1.3, 2.0, 3.0, 5.0]:
    print(f"{rho:4.1f}  {weight(clip_loss, rho, 1.0):9.3f}"
          f"  {weight(sapo_loss, rho, 1.0):9.3f}"
          f"  {weight(clip_loss, rho, -1.0):10.3f}"
          f"  {weight(sapo_loss, rho, -1.0):9.3f}")

# τ sets the gate's width (Â = +1)
for tau in [1.0, 10.0]:
    w = [weight(sapo_loss, rho, 1.0, tau_pos=tau) for rho in [1.1, 1.3, 2.0]]
    print(f"τ_pos = {tau:4.1f}: weight at ρ = 1.1, 1.3, 2.0:"
          f" {w[0]:.3f}, {w[1]:.3f}, {w[2]:.3f}")

# On policy the slope is 1 whatever τ, but the value is −2Â/τ
for adv in [1.0, -1.0]:
    value = sapo_loss(old, old, torch.tensor([adv], dtype=torch.float64), mask)
    print(f"on policy, Â = {adv:+.0f}: loss {value.item():+.4f}")

# Two responses on policy: 1 token with Â = +1, 3 tokens with Â = −1
two = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
loss = sapo_loss(torch.zeros(2, 3), torch.zeros(2, 3),
                 torch.tensor([1.0, -1.0]), two)
print(f"the mean of the two responses' means: {loss.item():+.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "SAPO's Soft Gate", "zh": "SAPO 的软门控"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    mask = draw.mask(B, T)
    # one advantage per token in two cases of three, NaN on padding in half of those: it reaches
    # the gate's gradient there, which only a fill (not a multiply) of the log-ratio stops
    advantages = draw.normal((B, T)) if draw.coin(2 / 3) else draw.normal(B)
    if advantages.ndim == 2 and draw.coin():
        advantages[mask == 0] = float("nan")
    return {"new_logprobs": draw.normal((B, T), 0.5), "old_logprobs": draw.normal((B, T), 0.5),
            "advantages": advantages, "mask": mask, "tau_pos": draw.choice([1.0, 0.5, 2.0]),
            "tau_neg": draw.choice([1.05, 1.5, 3.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "SAPO: a soft sigmoid gate on the ratio in place of PPO's clip.":
        "SAPO：用作用在比值上的 sigmoid 软门控代替 PPO 的裁剪。",
    "one per response, or [B, T]": "每条回复一个，或 [B, T]",
    "temperature of the tokens with Â > 0": "Â > 0 的 token 的温度",
    "temperature of the tokens with Â ≤ 0 (larger: the":
        "Â ≤ 0 的 token 的温度（越大，",
    "gradient decays faster)": "梯度衰减越快）",
    "scalar loss: each response's mean over its tokens, then the mean":
        "标量损失：先对每条回复的 token 取平均，",
    "over responses (\"seq-mean-token-mean\", as verl does for SAPO)":
        "再对回复取平均（\"seq-mean-token-mean\"，verl 的 SAPO 就是这样）",
    "log ρ clamped to [−20, 20] as in verl, 0 on padding":
        "log ρ 像 verl 一样截断到 [−20, 20]，padding 上为 0",
    "τ = τ_pos where Â > 0, τ_neg elsewhere, in Â's dtype":
        "Â > 0 处 τ = τ_pos，其余处 τ_neg，dtype 与 Â 相同",
    "(torch.where(Â > 0, 1.0, 1.05) would make it float32)":
        "（torch.where(Â > 0, 1.0, 1.05) 得到的会是 float32）",
    "the soft gate f(ρ) = σ(τ(ρ − 1))·4/τ": "软门控 f(ρ) = σ(τ(ρ − 1))·4/τ",
    "the per-token loss −Â·f(ρ), 0 on padding": "逐 token 损失 −Â·f(ρ)，padding 上为 0",
    "tokens per response": "每条回复的 token 数",
    "each response's mean over its tokens (GRPO Ex. 3)":
        "每条回复对自己的 token 取平均（GRPO 练习 3）",
    "the mean over the responses that have a token": "再对有 token 的回复取平均",
    "One token at ratio ρ. Its weight: −∂loss/∂log π ÷ Â, the share of the":
        "比值为 ρ 的一个 token。它的权重：−∂loss/∂log π ÷ Â，即它拿到策略梯度",
    "policy gradient Â·∇log π it gets (1 on policy), by a central difference.":
        "Â·∇log π 的几成（同策略时为 1），用中心差分求。",
    "PPO's clipped surrogate (ε = 0.2), for comparison.":
        "PPO 的裁剪替代目标（ε = 0.2），用来对比。",
    "−∂loss/∂log π ÷ Â for one token at ratio ρ.":
        "比值为 ρ 的一个 token 的 −∂loss/∂log π ÷ Â。",
    "    clip Â=+1  SAPO Â=+1   clip Â=−1  SAPO Â=−1":
        "    裁剪 Â=+1  SAPO Â=+1   裁剪 Â=−1  SAPO Â=−1",
    "τ sets the gate's width (Â = +1)": "τ 决定门的宽度（Â = +1）",
    ": weight at ρ = 1.1, 1.3, 2.0:": "：ρ = 1.1、1.3、2.0 处的权重：",
    "On policy the slope is 1 whatever τ, but the value is −2Â/τ":
        "同策略时无论 τ 是多少斜率都是 1，但损失值是 −2Â/τ",
    "on policy, Â = ": "同策略，Â = ",
    ": loss ": "：损失 ",
    "Two responses on policy: 1 token with Â = +1, 3 tokens with Â = −1":
        "同策略的两条回复：1 个 token、Â = +1，3 个 token、Â = −1",
    "the mean of the two responses' means: ": "两条回复各自均值的平均：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: the gate already is a function of ρ: the loss is −Â·f(ρ), not −Â·ρ·f(ρ)",
     "loss = (-advantages * gate)", "loss = (-advantages * ratio * gate)"),
    ("page: the factor 4/τ makes the gate's slope 1 at ρ = 1; the gate σ(τ(ρ − 1)) alone",
     "gate = torch.sigmoid(tau * (ratio - 1)) * 4 / tau",
     "gate = torch.sigmoid(tau * (ratio - 1))"),
    ("page: τ_neg for Â ≤ 0, τ_pos for Â > 0; the two temperatures swapped",
     "torch.full_like(advantages, tau_neg).masked_fill(advantages > 0, tau_pos)",
     "torch.full_like(advantages, tau_pos).masked_fill(advantages > 0, tau_neg)"),
    ("TODO 3: 0 on padding by masked_fill; a multiply by the mask lets NaN through (0 × NaN)",
     "loss = (-advantages * gate).masked_fill(mask == 0, 0.0)",
     "loss = -advantages * gate * mask"),
    ("page, verl's note: seq-mean-token-mean whatever loss_agg_mode says; token-mean weighs "
     "each response by its length",
     "per_seq = loss.sum(dim=1) / tokens.clamp(min=1)\n"
     "    # the mean over the responses that have a token\n"
     "    return per_seq.sum() / (tokens > 0).sum().clamp(min=1)",
     "return loss.sum() / tokens.sum().clamp(min=1)"),
    ("TRL's note: the mean over all rows, a row with no response token counting as 0 (here it "
     "is left out)",
     "return per_seq.sum() / (tokens > 0).sum().clamp(min=1)", "return per_seq.mean()"),
]
# --8<-- [end:traps]
