# --8<-- [start:exercise]
import torch


def rollout_is_weights(train_logprobs, rollout_logprobs, mask, level="token",
                       threshold=2.0):
    """Importance weights π_train / π_rollout that correct for the engine that sampled.

    Args:
        train_logprobs:   [B, T] log-probs of the sampled tokens under the trainer
        rollout_logprobs: [B, T] the same tokens under the inference engine
        mask:             [B, T] 1 on response tokens, 0 on padding
        level:     "token" (one weight per token) or "sequence" (one per response)
        threshold: C: truncate at C (TIS); or (a, b): 0 outside [a, b] (IcePop)
    Returns:
        [B, T] weights, 0 on padding, without gradient
    """
    # log w = log π_train − log π_rollout, 0 on padding
    log_w = (train_logprobs - rollout_logprobs).masked_fill(mask == 0, 0.0)
    if level == "sequence":
        # TODO 1: Σ_t log w, the log of the product of the row's ratios,
        # repeated on each of its tokens ([B, T])
        log_w = log_w.sum(dim=1, keepdim=True).expand_as(log_w)
    # TODO 2: w = exp(log w), with log w clamped to [−20, 20] first (as verl)
    w = log_w.clamp(-20.0, 20.0).exp()
    if isinstance(threshold, tuple):
        low, high = threshold
        # TODO 3: IcePop: keep the weights inside [a, b], 0 outside
        w = torch.where((w >= low) & (w <= high), w, torch.zeros_like(w))
    else:
        # TODO 4: TIS: truncate at C (there is no lower bound)
        w = w.clamp(max=threshold)
    # 0 on padding; the weights rescale the loss, they are not trained
    return w.masked_fill(mask == 0, 0.0).detach()
# --8<-- [end:exercise]


# --8<-- [start:test]
# two responses; the engine gave every sampled token log-prob −1, the trainer
# disagrees: w = 0.4, 0.8, 1.25, 2.5, 8 and 1.1, 0.9, 1 (then two padding tokens)
rollout = torch.full((2, 5), -1.0)
ratio = torch.tensor([[0.4, 0.8, 1.25, 2.5, 8.0], [1.1, 0.9, 1.0, 1.0, 1.0]])
train = rollout + ratio.log()
mask = torch.tensor([[1.0, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
for level in ["token", "sequence"]:
    for threshold in [2.0, (0.5, 2.0)]:
        w = rollout_is_weights(train, rollout, mask, level, threshold)
        rows = " | ".join(" ".join(f"{x:.2f}" for x in row) for row in w.tolist())
        print(f"{level:8} {threshold!s:10} {rows}")

# the price of the product: under the engine each token's ratio is 1.2 or 0.8,
# equally likely (mean 1). Row k holds the responses with k tokens at 1.2,
# of probability C(T, k) / 2^T
print("T     token var  sequence var  P(w < 1)  TIS at 2: mean   var")
for T in [1, 10, 100]:
    k = torch.arange(T + 1, dtype=torch.float64)[:, None]
    t = torch.arange(T, dtype=torch.float64)[None, :]
    up = torch.full((T + 1, T), 1.2, dtype=torch.float64)
    down = torch.full((T + 1, T), 0.8, dtype=torch.float64)
    rollout = torch.full((T + 1, T), 0.5, dtype=torch.float64).log()
    train = rollout + torch.where(t < k, up, down).log()
    mask = torch.ones(T + 1, T, dtype=torch.float64)
    comb = [1]  # C(T, k) for k = 0 … T: Pascal's triangle
    for _ in range(T):
        comb = [1] + [comb[i] + comb[i + 1] for i in range(len(comb) - 1)] + [1]
    p = torch.tensor([c / 2**T for c in comb], dtype=torch.float64)
    stats = []
    for level, threshold in [("token", 1e9), ("sequence", 1e9), ("sequence", 2.0)]:
        w = rollout_is_weights(train, rollout, mask, level, threshold)
        mean = (p * w.mean(dim=1)).sum().item()
        var = (p * (w**2).mean(dim=1)).sum().item() - mean**2
        stats.append((mean, var, p[w[:, 0] < 1].sum().item()))
    (_, tok_var, _), (_, seq_var, below), (tis_mean, tis_var, _) = stats
    print(f"{T:<5} {tok_var:9.4f}  {seq_var:12.4f}  {below:8.3f}  "
          f"{tis_mean:14.4f}  {tis_var:.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Rollout Importance Weights (TIS / IcePop)",
         "zh": "Rollout 重要性权重（TIS / IcePop）"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"train_logprobs": "logprob",
           "rollout_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("train_logprobs",)


def inputs(draw):
    B, T = draw.size()
    mask = draw.mask(B, T)
    rollout = draw.normal((B, T), 1.0, -2.0)
    # C (TIS); 1e9, no truncation, where verl's clamp of log w at ±20 decides; a band
    # (IcePop), some with w = 1 at an end. A case that is about its threshold passes it
    threshold = draw.choice([2.0, 2.0, 1.5, 5.0, 1e9, 1e9, (0.5, 2.0), (0.8, 1.25),
                             (0.5, 1.0), (0.5, 1.0), (1.0, 2.0), (1.0, 2.0)])
    if threshold in (1e9, (0.5, 1.0), (1.0, 2.0)):
        draw.keep("threshold")
    # log π_train − log π_rollout: exactly 0 where engine and trainer agree to the bit (w = 1:
    # a quarter of the responses, half where 1 is an end of the band, and a quarter of the
    # other tokens); small or spread by response (weights either side of C and 1/C, whose
    # product and the product of their truncations differ)
    at_end = threshold in ((0.5, 1.0), (1.0, 2.0))
    spread = draw.choice([0.0, 0.0, 0.4, 1.5] if at_end else [0.0, 0.4, 1.5, 1.5], (B, 1))
    drift = draw.normal((B, T)) * spread * draw.choice([0.0, 1.0, 1.0, 1.0], (B, T))
    if threshold == 1e9 or draw.coin(0.3):
        # in each response that moved, one token the engine under-rated by e²⁵ (past verl's
        # clamp)
        far = (draw.rng.random((B, T)) + mask).argmax(axis=1)
        drift[list(range(B)), far] += 25.0 * (spread[:, 0] > 0)
    return {"train_logprobs": rollout + drift, "rollout_logprobs": rollout, "mask": mask,
            "level": draw.choice(["token", "sequence", "sequence"]), "threshold": threshold}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Importance weights π_train / π_rollout that correct for the engine that sampled.":
        "重要性权重 π_train / π_rollout：修正采样用的推理引擎与训练端之间的差异。",
    "log-probs of the sampled tokens under the trainer": "采样到的 token 在训练端下的对数概率",
    "the same tokens under the inference engine": "同一批 token 在推理引擎下的对数概率",
    "1 on response tokens, 0 on padding": "回复 token 为 1，padding 为 0",
    "\"token\" (one weight per token) or \"sequence\" (one per response)":
        "\"token\"（每个 token 一个权重）或 \"sequence\"（每条回复一个）",
    "C: truncate at C (TIS); or (a, b): 0 outside [a, b] (IcePop)":
        "C：在 C 处截断（TIS）；或 (a, b)：[a, b] 之外置 0（IcePop）",
    "weights, 0 on padding, without gradient": "权重，padding 上为 0，不带梯度",
    ", 0 on padding": "，padding 上为 0",
    "Σ_t log w, the log of the product of the row's ratios,":
        "Σ_t log w，即这一行所有比值之积的对数，",
    "repeated on each of its tokens ([B, T])": "再铺到这一行的每个 token 上（[B, T]）",
    ", with log w clamped to [−20, 20] first (as verl)":
        "，先把 log w 限制在 [−20, 20] 内（与 verl 一致）",
    "IcePop: keep the weights inside [a, b], 0 outside":
        "IcePop：[a, b] 之内的权重保留，之外置 0",
    "TIS: truncate at C (there is no lower bound)": "TIS：在 C 处截断（没有下界）",
    "0 on padding; the weights rescale the loss, they are not trained":
        "padding 上为 0；权重只是给损失加权，本身不参与训练",
    "two responses; the engine gave every sampled token log-prob −1, the trainer":
        "两条回复；推理引擎给每个采样到的 token 的对数概率都是 −1，训练端的看法不同：",
    "disagrees: w = 0.4, 0.8, 1.25, 2.5, 8 and 1.1, 0.9, 1 (then two padding tokens)":
        "w = 0.4, 0.8, 1.25, 2.5, 8 和 1.1, 0.9, 1（后面是两个 padding token）",
    "the price of the product: under the engine each token's ratio is 1.2 or 0.8,":
        "乘积的代价：在推理引擎的分布下，每个 token 的比值是 1.2 或 0.8，",
    "equally likely (mean 1). Row k holds the responses with k tokens at 1.2,":
        "两者概率相同（均值为 1）。第 k 行代表有 k 个 token 取 1.2 的回复，",
    "of probability C(T, k) / 2^T": "其概率为 C(T, k) / 2^T",
    " for k = 0 … T: Pascal's triangle": "，k = 0 … T：杨辉三角",
    "T     token var  sequence var  P(w < 1)  TIS at 2: mean   var":
        "T     token 级方差  序列级方差  P(w < 1)  TIS 截断于 2：均值   方差",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: set the log-ratio to 0 on padding before summing, so that padding adds nothing to "
     "the product",
     "log_w = (train_logprobs - rollout_logprobs).masked_fill(mask == 0, 0.0)",
     "log_w = train_logprobs - rollout_logprobs"),
    ("hint: masked_fill, not a multiply by the mask: −inf − (−inf) is NaN, and NaN·0 is NaN",
     "log_w = (train_logprobs - rollout_logprobs).masked_fill(mask == 0, 0.0)",
     "log_w = (train_logprobs - rollout_logprobs) * mask"),
    ("hint: a common mistake at the sequence level, each token's weight truncated first and "
     "then multiplied: the product of truncated weights is not a truncated product",
     "log_w = log_w.sum(dim=1, keepdim=True).expand_as(log_w)",
     "if not isinstance(threshold, tuple):\n"
     "            log_w = log_w.exp().clamp(max=threshold).log()\n"
     "        log_w = log_w.sum(dim=1, keepdim=True).expand_as(log_w)"),
    ("verl's note: the sequence level sums the log-ratios, with no division by the length "
     "(OpenRLHF's geometric mean)",
     "log_w = log_w.sum(dim=1, keepdim=True).expand_as(log_w)",
     "log_w = (log_w.sum(dim=1, keepdim=True)\n"
     "                 / mask.sum(dim=1, keepdim=True).clamp(min=1)).expand_as(log_w)"),
    ("TODO 2: log w clamped to [−20, 20] before exp, as verl; without it a weight past e²⁰ "
     "is kept where a large C does not truncate it",
     "w = log_w.clamp(-20.0, 20.0).exp()", "w = log_w.exp()"),
    ("hint: TIS has no lower bound, a small weight is not raised",
     "w = w.clamp(max=threshold)", "w = w.clamp(1 / threshold, threshold)"),
    ("hint: IcePop keeps both ends of the band",
     "(w >= low) & (w <= high)", "(w > low) & (w < high)"),
    ("docstring: 0 on padding (TRL's token-level weight on padding is 1)",
     "return w.masked_fill(mask == 0, 0.0).detach()", "return w.detach()"),
    ("gradient: walkthrough, the weights carry no gradient (detach): they change which "
     "distribution the loss averages over, not what is optimised",
     "return w.masked_fill(mask == 0, 0.0).detach()",
     "return w.masked_fill(mask == 0, 0.0)"),
]
# --8<-- [end:traps]
