# --8<-- [start:exercise]
import torch


def high_entropy_mask(entropies, mask, threshold):
    """The high-entropy ("forking") tokens: entropy at or above the
    threshold-quantile of the entropies of every response token of the batch.

    Args:
        entropies: [B, T] per-token entropies (token_entropy)
        mask:      [B, T] 1 on response tokens, 0 on padding
        threshold: the quantile level in [0, 1]; TRL passes
                   1 − top_entropy_quantile (0.8 keeps about the top 20 %)
    Returns:
        [B, T] bool, False on padding
    """
    valid = mask.bool()
    # TODO 1: the response tokens' entropies, one flat tensor (no padding)
    response = entropies[valid]
    if response.numel() == 0:
        return torch.zeros_like(valid)
    # TODO 2: the cut: the threshold-quantile of those entropies
    cut = torch.quantile(response, threshold)
    # TODO 3: at or above the cut, and never padding
    return (entropies >= cut) & valid
# --8<-- [end:exercise]


# --8<-- [start:test]
# two responses of a maths solution, one entropy per token (nats)
words = [["So", " x", " =", " 3", ",", " but", " wait", ""],
         ["Suppose", " the", " area", " is", " 12", ".", "", ""]]
entropies = torch.tensor([[1.9, 0.3, 0.05, 0.8, 0.6, 2.3, 1.4, 9.9],
                          [2.6, 0.2, 0.9, 0.1, 1.1, 0.02, 9.9, 9.9]])
mask = torch.tensor([[1.0, 1, 1, 1, 1, 1, 1, 0],
                     [1.0, 1, 1, 1, 1, 1, 0, 0]])  # 13 response tokens
for rho in [0.2, 0.5, 0.0]:  # TRL's top_entropy_quantile
    keep = high_entropy_mask(entropies, mask, 1 - rho)
    chosen = [w for row, k in zip(words, keep.tolist(), strict=True)
              for w, x in zip(row, k, strict=True) if x]
    print(f"ρ = {rho}: cut {torch.quantile(entropies[mask.bool()], 1 - rho).item():.2f},"
          f" {int(keep.sum())} of {int(mask.sum())} tokens:", chosen)
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "High-Entropy Token Mask", "zh": "高熵 token 掩码"}


def inputs(draw):
    B, T = draw.size()
    # entropies > 0 everywhere (padding too: they must not count)
    return {"entropies": draw.lognormal((B, T), 1.0), "mask": draw.mask(B, T),
            "threshold": draw.choice([0.0, 0.5, 0.8, 0.9, 1.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "The high-entropy (\"forking\") tokens: entropy at or above the":
        "高熵（\"分叉\"）token：熵不低于",
    "threshold-quantile of the entropies of every response token of the batch.":
        "整个 batch 所有回复 token 的熵的 threshold 分位数。",
    "per-token entropies (token_entropy)": "每个 token 的熵（token_entropy）",
    "1 on response tokens, 0 on padding": "回复 token 上为 1，padding 上为 0",
    "the quantile level in [0, 1]; TRL passes": "分位数水平，取值 [0, 1]；TRL 传入的是",
    "1 − top_entropy_quantile (0.8 keeps about the top 20 %)":
        "1 − top_entropy_quantile（0.8 大约保留熵最高的 20 %）",
    "bool, False on padding": "bool，padding 上为 False",
    "the response tokens' entropies, one flat tensor (no padding)":
        "回复 token 的熵，拉平成一维（不含 padding）",
    "the cut: the threshold-quantile of those entropies": "分界线：这些熵的 threshold 分位数",
    "at or above the cut, and never padding": "不低于分界线，且绝不是 padding",
    "two responses of a maths solution, one entropy per token (nats)":
        "一道数学题的两条回复，每个 token 一个熵（单位：奈特）",
    "13 response tokens": "13 个回复 token",
    "TRL's top_entropy_quantile": "即 TRL 的 top_entropy_quantile",
    ": cut ": "：分界线 ",
    " tokens:": " 个 token：",
    " of ": " / ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("walkthrough: the mistake to avoid is the quantile of every position: the padding's "
     "entropies enter the cut",
     "response = entropies[valid]", "response = entropies.flatten()"),
    ("hint: >=, not >: a token whose entropy equals the cut is kept (at threshold 1.0 the cut "
     "is the largest entropy itself)",
     "(entropies >= cut) & valid", "(entropies > cut) & valid"),
    ("hint: & valid keeps the padding out whatever its entropy",
     "(entropies >= cut) & valid", "entropies >= cut"),
    ("page: one cut for the whole batch, not one per response",
     "cut = torch.quantile(response, threshold)",
     "cut = torch.nanquantile(entropies.masked_fill(~valid, float('nan')), threshold, dim=1,\n"
     "                          keepdim=True)"),
    ("docstring, page: threshold is the quantile level, TRL passes 1 − top_entropy_quantile; "
     "the quantile taken at the share kept",
     "cut = torch.quantile(response, threshold)", "cut = torch.quantile(response, 1 - threshold)"),
]
# --8<-- [end:traps]
