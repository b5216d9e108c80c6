# --8<-- [start:exercise]
import torch


def importance_ratio(new_logprobs, old_logprobs, mask):
    """Token-level importance ratio ρ = π_θ / π_old.

    Args:
        new_logprobs: [B, T] log-probs of the sampled tokens, current policy
        old_logprobs: [B, T] the same under the frozen policy that sampled
        mask:         [B, T], 1 on response tokens, 0 on padding
    Returns:
        ratio:        [B, T], exactly 1.0 on padding
    """
    # TODO 1: log ρ = log π_θ − log π_old
    log_ratio = new_logprobs - old_logprobs

    # TODO 2: log ρ = 0 on padding, before exp: whatever padding holds
    # (−1000, −inf), exp never sees it
    log_ratio = log_ratio.masked_fill(mask == 0, 0.0)

    # TODO 3: ρ = exp(log ρ)
    ratio = log_ratio.exp()
    return ratio
# --8<-- [end:exercise]


# --8<-- [start:test]
torch.manual_seed(0)
B, T = 2, 6
old = torch.randn(B, T) * 0.1
new = old + torch.randn(B, T) * 0.05
mask = torch.tensor([[1, 1, 1, 1, 0, 0],
                     [1, 1, 1, 0, 0, 0]], dtype=torch.float)
ratio = importance_ratio(new, old, mask)
print(f"ρ[mask == 1] ∈ [{ratio[mask == 1].min():.4f}, "
      f"{ratio[mask == 1].max():.4f}]")
print(f"ρ[mask == 0] = {ratio[mask == 0].tolist()}")

# padding may hold anything: here −inf, as a log-prob of 0 would be
new[0, 5] = old[0, 5] = -float("inf")
print(f"ρ[0, 3:] = {importance_ratio(new, old, mask)[0, 3:]}")
naive = (new - old).exp() * mask + (1 - mask)  # fill after exp
print(f"exp(log ρ)·mask + (1 - mask), [0, 3:] = {naive[0, 3:]}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Importance Ratio", "zh": "重要性采样比"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    return {"new_logprobs": draw.normal((B, T), 0.5), "old_logprobs": draw.normal((B, T), 0.5),
            "mask": draw.mask(B, T)}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Token-level importance ratio ρ = π_θ / π_old.": "token 级重要性采样比 ρ = π_θ / π_old。",
    "log-probs of the sampled tokens, current policy": "采样 token 的对数概率，当前策略",
    "the same under the frozen policy that sampled": "同样的量，在采样时冻结的旧策略下",
    ", 1 on response tokens, 0 on padding": "，回复 token 上为 1，padding 上为 0",
    ", exactly 1.0 on padding": "，padding 上恰好为 1.0",
    "log ρ = 0 on padding, before exp: whatever padding holds":
        "先在 padding 上令 log ρ = 0，再取 exp：padding 里无论是什么",
    "(−1000, −inf), exp never sees it": "（−1000、−inf），exp 都碰不到",
    "padding may hold anything: here −inf, as a log-prob of 0 would be":
        "padding 里可能是任何值：这里是 −inf，即概率 0 的对数概率",
    "fill after exp": "exp 之后再填",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("TODO 2, walkthrough: a multiply by the mask lets −inf − (−inf) = NaN through",
     "log_ratio.masked_fill(mask == 0, 0.0)", "log_ratio * mask"),
    ("the source's fill after exp, exp(log ρ)·mask + (1 − mask): NaN on padding",
     "log_ratio = log_ratio.masked_fill(mask == 0, 0.0)\n",
     "log_ratio = log_ratio.exp() * mask + (1 - mask)\n    log_ratio = log_ratio.log()\n"),
    ("walkthrough: torch.where(mask, ratio, 1.0) after exp: right values, NaN gradient",
     "log_ratio = log_ratio.masked_fill(mask == 0, 0.0)\n",
     "log_ratio = torch.where(mask == 1, log_ratio.exp(), 1.0).log()\n"),
]
# --8<-- [end:traps]
