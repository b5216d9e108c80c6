# --8<-- [start:exercise]
import torch


def gspo_loss(new_logprobs, old_logprobs, advantages, mask,
              clip_low=3e-4, clip_high=4e-4):
    """GSPO: PPO's clip on one ratio per response, the geometric mean
    of its tokens' ratios (GSPO-token, "seq-mean-token-mean").

    Args:
        new_logprobs: [B, T]
        old_logprobs: [B, T]
        advantages:   [B] one per response, or [B, T]
        mask:         [B, T]
        clip_low:     ε_low, the floor of s is 1 − ε_low
        clip_high:    ε_high, its ceiling 1 + ε_high
    Returns:
        scalar loss: each response's token mean, averaged over responses
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)  # [B, 1]
    n = mask.sum(dim=1, keepdim=True)  # [B, 1] |y_i|, tokens per response

    # log ρ_t = log π_θ − log π_old, 0 on padding (PPO Ex. 1)
    log_ratio = (new_logprobs - old_logprobs).masked_fill(mask == 0, 0.0)
    # TODO 1: log s_i = (1/|y_i|) Σ_t log ρ_t, the log of the geometric mean
    log_seq = log_ratio.sum(dim=1, keepdim=True) / n.clamp(min=1)

    # TODO 2: log s_i,t = sg(log s_i) + log π_θ − sg(log π_θ): the value of
    # log s_i on every token, the gradient of log π_θ(y_t)
    log_s = log_seq.detach() + new_logprobs - new_logprobs.detach()
    # verl caps log s at 10, so that exp cannot overflow
    s = log_s.clamp(max=10.0).exp()

    # TODO 3: PPO's clipped loss on s: the larger of −Â·s and −Â·clip(s)
    loss = torch.maximum(-advantages * s,
                         -advantages * torch.clamp(s, 1 - clip_low, 1 + clip_high))

    # "seq-mean-token-mean" (GRPO Ex. 3): the mean over each response's tokens,
    # then over the responses that have tokens
    loss = loss.masked_fill(mask == 0, 0.0)
    per_seq = loss.sum(dim=1) / n.squeeze(1).clamp(min=1)
    return per_seq.sum() / (n > 0).sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
def slopes(loss_fn, new, h=1e-6):
    """∂loss/∂log π_θ(y_t) of every token, by central differences."""
    out = torch.zeros_like(new)
    for b in range(new.shape[0]):
        for t in range(new.shape[1]):
            e = torch.zeros_like(new)
            e[b, t] = h
            out[b, t] = (loss_fn(new + e) - loss_fn(new - e)) / (2 * h)
    return out


def token_level(new, old, adv, mask, clip_low=0.2, clip_high=0.28):
    """GRPO's loss (GRPO Ex. 4): one ratio per token, token-mean."""
    ratio = (new - old).exp()
    loss = torch.maximum(-adv[:, None] * ratio,
                         -adv[:, None] * ratio.clamp(1 - clip_low, 1 + clip_high))
    return (loss * mask).sum() / mask.sum()


# 1. The product of L ratios runs away with L; their geometric mean does not.
for L in [10, 100, 1000]:
    log_ratio = torch.full((L,), 1.01, dtype=torch.float64).log()
    print(f"L = {L:4}, every ρ_t = 1.01: Π ρ_t = {log_ratio.sum().exp():9.4f},"
          f"  s = {log_ratio.mean().exp():.4f}")

# 2. Two responses of 3 tokens, Â = +1 each; GRPO clips none of the tokens
old = torch.full((2, 3), 0.5, dtype=torch.float64).log()
rho = torch.tensor([[1.25, 0.8, 1.0], [1.1, 0.8, 1.25]], dtype=torch.float64)
new = old + rho.log()
adv = torch.tensor([1.0, 1.0], dtype=torch.float64)
mask = torch.ones(2, 3, dtype=torch.float64)
print("s =", " ".join(f"{x:.4f}" for x in rho.log().mean(dim=1).exp().tolist()))
grpo = slopes(lambda x: token_level(x, old, adv, mask), new)
gspo = slopes(lambda x: gspo_loss(x, old, adv, mask), new)
for b in range(2):
    print(f"response {b + 1}: ∂L/∂log π, GRPO",
          " ".join(f"{x:+.4f}" for x in grpo[b].tolist()),
          "| GSPO", " ".join(f"{x:+.4f}" for x in gspo[b].tolist()))

# 3. Noise in log ρ_t averages out over L tokens: the spread of log s
# is that of log ρ_t over √L, and a clip range of 0.2 on s never holds.
lo, hi = torch.tensor([0.8, 1.28], dtype=torch.float64).log().tolist()
torch.manual_seed(0)
for L in [10, 100, 1000]:
    # 1000 responses, log ρ_t uniform in [−0.25, 0.25]
    log_ratio = 0.5 * torch.rand(1000, L, dtype=torch.float64) - 0.25
    log_s = log_ratio.mean(dim=1)
    tokens = (log_ratio < lo) | (log_ratio > hi)
    seqs = (log_s < lo) | (log_s > hi)
    print(f"L = {L:4}: std of log ρ_t {log_ratio.std():.4f}, of log s"
          f" {log_s.std():.4f}; outside [0.8, 1.28]:"
          f" {100 * tokens.double().mean():.1f}% of tokens,"
          f" {100 * seqs.double().mean():.1f}% of responses")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "GSPO Loss", "zh": "GSPO 损失"}
# GSPO's clip range is 10⁻⁴ wide: a clip at 3.6e-4 for 4e-4 moves the loss by a few 10⁻⁵ of
# itself, which Check must see (the browser's float32 agrees with the reference to ~10⁻⁶)
RTOL, ATOL = 1e-5, 1e-6
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    old = draw.normal((B, T), 0.5, -1.0)
    near = draw.coin(2 / 3)
    if near:
        # a policy that moved a little: each response's s just outside GSPO's band, below or
        # above it, where the clip acts and its bounds decide
        new = old + draw.choice([-5e-4, 5e-4], (B, 1)) + draw.normal((B, T), 1e-4)
    else:
        # a lot, or far (log s beyond verl's cap)
        new = old + draw.normal((B, T), 0.3) \
            + draw.choice([0.0, 12.0]) * draw.choice([0.0, 1.0], (B, 1))
    args = {"new_logprobs": new, "old_logprobs": old, "advantages": draw.advantages(B, T),
            "mask": draw.mask(B, T)}
    if near and draw.coin():
        return args  # GSPO's own range, the defaults, where the bounds decide
    return {**args, "clip_low": draw.choice([3e-4, 0.2]), "clip_high": draw.choice([4e-4, 0.28])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "GSPO: PPO's clip on one ratio per response, the geometric mean":
        "GSPO：把 PPO 的裁剪用在每条回复唯一的比值上，它是这条回复各 token",
    "of its tokens' ratios (GSPO-token, \"seq-mean-token-mean\").":
        "比值的几何平均（GSPO-token 形式，按 \"seq-mean-token-mean\" 聚合）。",
    "one per response, or [B, T]": "每条回复一个，或 [B, T]",
    "ε_low, the floor of s is 1 − ε_low": "ε_low，s 的下界是 1 − ε_low",
    "ε_high, its ceiling 1 + ε_high": "ε_high，上界是 1 + ε_high",
    "scalar loss: each response's token mean, averaged over responses":
        "标量损失：先在每条回复内对 token 取平均，再对回复取平均",
    "|y_i|, tokens per response": "|y_i|，每条回复的 token 数",
    ", 0 on padding (PPO Ex. 1)": "，padding 上为 0（PPO 练习 1）",
    ", the log of the geometric mean": "，即几何平均的对数",
    ": the value of": "：每个 token 上的值",
    "log s_i on every token, the gradient of log π_θ(y_t)":
        "都是 log s_i，梯度却是 log π_θ(y_t) 的梯度",
    "verl caps log s at 10, so that exp cannot overflow": "verl 把 log s 截在 10，exp 就不会溢出",
    "PPO's clipped loss on s: the larger of −Â·s and −Â·clip(s)":
        "对 s 用 PPO 的裁剪损失：−Â·s 和 −Â·clip(s) 中较大的",
    " (GRPO Ex. 3): the mean over each response's tokens,":
        "（GRPO 练习 3）：先对每条回复的 token 取平均，",
    "then over the responses that have tokens": "再对有 token 的回复取平均",
    "∂loss/∂log π_θ(y_t) of every token, by central differences.":
        "每个 token 的 ∂loss/∂log π_θ(y_t)，用中心差分算。",
    "GRPO's loss (GRPO Ex. 4): one ratio per token, token-mean.":
        "GRPO 的损失（GRPO 练习 4）：每个 token 一个比值，token-mean。",
    "1. The product of L ratios runs away with L; their geometric mean does not.":
        "1. L 个比值的乘积随 L 失控，几何平均不会。",
    ", every ρ_t = 1.01: ": "，每个 ρ_t = 1.01：",
    "2. Two responses of 3 tokens, Â = +1 each; GRPO clips none of the tokens":
        "2. 两条回复，各 3 个 token，Â 都是 +1；GRPO 一个 token 也没裁剪",
    "response {b + 1}: ∂L/∂log π, GRPO": "回复 {b + 1}：∂L/∂log π，GRPO",
    "3. Noise in log ρ_t averages out over L tokens: the spread of log s":
        "3. log ρ_t 的噪声在 L 个 token 上相互抵消：log s 的离散程度",
    "is that of log ρ_t over √L, and a clip range of 0.2 on s never holds.":
        "是 log ρ_t 的 1/√L，对 s 用 0.2 的裁剪范围永远不会生效。",
    "1000 responses, log ρ_t uniform in [−0.25, 0.25]":
        "1000 条回复，log ρ_t 在 [−0.25, 0.25] 上均匀分布",
    ": std of log ρ_t ": "：log ρ_t 的 std 为 ",
    ", of log s": "，log s 的为",
    "; outside [0.8, 1.28]:": "；落在 [0.8, 1.28] 之外的：",
    "% of tokens,": "% 的 token，",
    "% of responses": "% 的回复",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("walkthrough (the geometric mean): the product of the ratios, Σ log ρ not divided by "
     "|y_i|, grows with the length",
     "log_seq = log_ratio.sum(dim=1, keepdim=True) / n.clamp(min=1)",
     "log_seq = log_ratio.sum(dim=1, keepdim=True)"),
    ("hint: the mean over each response's tokens, divided by n, not over every position",
     "log_seq = log_ratio.sum(dim=1, keepdim=True) / n.clamp(min=1)",
     "log_seq = log_ratio.mean(dim=1, keepdim=True)"),
    ("walkthrough: verl and TRL default to GRPO's clip range (0.2): GSPO's is 3e-4 and 4e-4",
     "clip_low=3e-4, clip_high=4e-4", "clip_low=0.2, clip_high=0.2"),
    ("TODO 3: the larger of −Â·s and −Â·clip(s) (GRPO Exercise 4): torch.minimum for "
     "torch.maximum",
     "loss = torch.maximum(", "loss = torch.minimum("),
    ("verl's note: its default token-mean aggregation, each response weighing by its length, "
     "for seq-mean-token-mean",
     "per_seq = loss.sum(dim=1) / n.squeeze(1).clamp(min=1)\n"
     "    return per_seq.sum() / (n > 0).sum().clamp(min=1)",
     "return loss.sum() / n.sum().clamp(min=1)"),
    ("page: |B| counts the responses that have at least one token; TRL's mean over every row "
     "counts an empty response as a 0",
     "return per_seq.sum() / (n > 0).sum().clamp(min=1)", "return per_seq.mean()"),
    ("gradient: hint, log_seq.detach() alone: the right value and no gradient at all",
     "log_s = log_seq.detach() + new_logprobs - new_logprobs.detach()",
     "log_s = log_seq.detach().expand_as(new_logprobs)"),
    ("gradient: hint, log_seq alone (TRL's, OpenRLHF's): the right value, but with per-token "
     "advantages every token gets its response's mean advantage",
     "log_s = log_seq.detach() + new_logprobs - new_logprobs.detach()",
     "log_s = log_seq.expand_as(new_logprobs)"),
]
# --8<-- [end:traps]
