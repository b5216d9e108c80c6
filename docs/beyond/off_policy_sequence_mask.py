# --8<-- [start:exercise]
import torch


def off_policy_sequence_mask(advantages, logprobs, sampling_logprobs, mask, threshold):
    """DeepSeek-V3.2's off-policy sequence mask: drop a response whose advantage is
    negative and whose sampling policy is far from the policy being trained.

    Args:
        advantages:        [B, 1] one per response (or [B])
        logprobs:          [B, T] log-probs of the sampled tokens under π_θ (now)
        sampling_logprobs: [B, T] under the policy that sampled them
        mask:              [B, T] 1 on response tokens, 0 on padding
        threshold:         δ, the largest mean KL a negative response may have
    Returns:
        [B, 1]: 1.0 keep, 0.0 drop
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)  # [B] → [B, 1]
    # TODO 1: k1 = log π_sampling − log π_θ per token (no gradient), 0 on padding
    k1 = (sampling_logprobs - logprobs.detach()).masked_fill(mask == 0, 0.0)
    # TODO 2: the mean over each response's tokens, [B, 1] (an empty row: 0)
    kl = k1.sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1)
    # TODO 3: keep if Â ≥ 0 or the mean KL ≤ δ
    keep = (advantages >= 0) | (kl <= threshold)
    return keep.to(logprobs.dtype)
# --8<-- [end:exercise]


# --8<-- [start:test]
# five responses; the sampler gave every token log-prob −1, the policy has moved
# by d per token (log π_θ = −1 − d); the third response has one padding token
sampling = torch.full((5, 4), -1.0)
d = torch.tensor([[0.5, 0.5, 0.5, 0.5],      # Â > 0, far
                  [0.05, 0.05, 0.05, 0.05],  # Â < 0, close
                  [0.6, 0.4, 0.5, 9.0],      # Â < 0, far
                  [0.5, 0.5, 0.5, 0.5],      # Â = 0, far
                  [-0.3, -0.3, -0.3, -0.3]])  # Â < 0, π_θ likes it more
logprobs = sampling - d
mask = torch.tensor([[1.0, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1],
                     [1, 1, 1, 1]])
adv = torch.tensor([[1.0], [-1.0], [-1.0], [0.0], [-1.0]])
keep = off_policy_sequence_mask(adv, logprobs, sampling, mask, 0.1)
k1 = (sampling - logprobs).masked_fill(mask == 0, 0.0)
for b in range(5):
    mean = k1[b].sum() / mask[b].sum()
    print(f"Â = {adv[b, 0].item():2.0f}  mean KL = {mean.item():+.4f}"
          f"  (sum {k1[b].sum().item():+.4f})  keep = {keep[b, 0].item():.0f}")
for delta in [0.0, 0.1, 0.6]:
    keep = off_policy_sequence_mask(adv, logprobs, sampling, mask, delta)
    print(f"δ = {delta} → keep {[int(x) for x in keep[:, 0].tolist()]}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Off-Policy Sequence Mask", "zh": "Off-policy 序列掩码"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"logprobs": "logprob",
           "sampling_logprobs": "logprob"}


def inputs(draw):
    B, T = draw.size(max_b=8)
    threshold = draw.choice([0.0, 0.0, 0.05, 0.1, 0.2, 0.5])
    sampling = draw.normal((B, T), 1.0, -2.0)
    # each row's log π_sampling − log π_θ: 0 (sampled by the policy itself: KL exactly 0), a
    # mean KL near δ on either side (where the mean over the row's tokens decides), or anywhere
    kind = draw.choice([0.0, 1.0, 1.0, 1.0, 2.0], (B, 1))
    drift = (kind == 1) * (threshold or 0.05) * draw.lognormal((B, 1), 0.3) \
        + (kind == 2) * draw.normal((B, 1), 0.3) + (kind > 0) * draw.normal((B, T), 0.05)
    # Â: a quarter of them exactly 0 (a group whose scores are all equal), kept; of the others
    # more negative than positive ones, the responses the mask is about
    advantages = draw.normal((B, 1), 1.0, -0.5) * draw.choice([0.0, 1.0, 1.0, 1.0], (B, 1))
    return {"advantages": advantages, "logprobs": sampling - drift,
            "sampling_logprobs": sampling, "mask": draw.mask(B, T), "threshold": threshold}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "DeepSeek-V3.2's off-policy sequence mask: drop a response whose advantage is":
        "DeepSeek-V3.2 的离策略序列掩码（OPSM）：一条回复的优势为负、",
    "negative and whose sampling policy is far from the policy being trained.":
        "且采样它的策略离正在训练的策略太远时，丢掉这条回复。",
    "one per response (or [B])": "每条回复一个（也可以是 [B]）",
    "log-probs of the sampled tokens under π_θ (now)":
        "采样到的 token 在 π_θ（当前策略）下的对数概率",
    "under the policy that sampled them": "在采样它们的策略下的对数概率",
    "1 on response tokens, 0 on padding": "回复 token 为 1，padding 为 0",
    "δ, the largest mean KL a negative response may have": "δ：优势为负的回复允许的最大平均 KL",
    ": 1.0 keep, 0.0 drop": "：1.0 保留，0.0 丢弃",
    "k1 = log π_sampling − log π_θ per token (no gradient), 0 on padding":
        "每个 token 的 k1 = log π_sampling − log π_θ（不带梯度），padding 上为 0",
    "the mean over each response's tokens, [B, 1] (an empty row: 0)":
        "对每条回复的 token 取平均，[B, 1]（空行为 0）",
    "keep if Â ≥ 0 or the mean KL ≤ δ": "Â ≥ 0 或平均 KL ≤ δ 时保留",
    "five responses; the sampler gave every token log-prob −1, the policy has moved":
        "五条回复；采样策略给每个 token 的对数概率都是 −1，当前策略在每个 token 上",
    "by d per token (log π_θ = −1 − d); the third response has one padding token":
        "移动了 d（log π_θ = −1 − d）；第三条回复有一个 padding token",
    "Â > 0, far": "Â > 0，远",
    "Â < 0, close": "Â < 0，近",
    "Â < 0, far": "Â < 0，远",
    "Â = 0, far": "Â = 0，远",
    "Â < 0, π_θ likes it more": "Â < 0，π_θ 更喜欢它",
    "  mean KL = ": "  平均 KL = ",
    "  (sum ": "  （总和 ",
    ")  keep = ": "）  保留 = ",
    " → keep ": " → 保留 ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: the sign, log π_sampling − log π_θ, positive when the policy has moved away from "
     "the sampled tokens",
     "(sampling_logprobs - logprobs.detach())", "(logprobs.detach() - sampling_logprobs)"),
    ("hint, walkthrough: a sum instead of the mean drops a long response for being long",
     "kl = k1.sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1)",
     "kl = k1.sum(dim=1, keepdim=True)"),
    ("hint: the mean over a response's tokens, not over every position: padding counts for "
     "nothing",
     "kl = k1.sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True).clamp(min=1)",
     "kl = k1.mean(dim=1, keepdim=True)"),
    ("hint: > 0 instead of >= 0 for the advantage: the rule drops only strictly negative "
     "advantages",
     "(advantages >= 0)", "(advantages > 0)"),
    ("walkthrough: the padding token holds 9.0 and counts for nothing; not filled, what "
     "padding holds (−inf, NaN) enters the mean",
     ".masked_fill(mask == 0, 0.0)", ""),
    ("hint: clamp(min=1), an empty row gives 0 / 1 = 0; without it 0 / 0 is NaN and an empty "
     "negative row is dropped",
     "mask.sum(dim=1, keepdim=True).clamp(min=1)", "mask.sum(dim=1, keepdim=True)"),
]
# --8<-- [end:traps]
