# --8<-- [start:exercise]
import torch


def masked_whiten(values, mask, shift_mean=True):
    """Whiten over the response tokens of the whole batch, as verl 0.9.1 does.

    (x − mean) / sqrt(var + 1e-8), with the mean and the unbiased variance
    taken over the tokens where mask is 1.

    Args:
        values: [B, T], e.g. the advantages from compute_gae
        mask:   [B, T], 1 on response tokens (at least two of them)
        shift_mean: False adds the mean back: only the scale changes
    Returns:
        [B, T], 0 on padding
    """
    real = mask == 1
    n = mask.sum()  # response tokens in the batch

    # TODO 1: the mean over response tokens only (padding may hold NaN:
    # masked_fill, not a multiply)
    mean = values.masked_fill(~real, 0.0).sum() / n

    # TODO 2: the unbiased variance over them, Σ(x − mean)² / (n − 1)
    var = ((values - mean) ** 2).masked_fill(~real, 0.0).sum() / (n - 1)

    # TODO 3: (x − mean) / sqrt(var + 1e-8)
    whitened = (values - mean) / torch.sqrt(var + 1e-8)

    if not shift_mean:
        # TODO 4: put the mean back
        whitened = whitened + mean
    return whitened.masked_fill(~real, 0.0)
# --8<-- [end:exercise]


# --8<-- [start:test]
torch.manual_seed(5)
adv = torch.randn(2, 6) * 3 + 1
mask = torch.tensor([[1, 1, 1, 1, 0, 0],
                     [1, 1, 1, 1, 1, 0]], dtype=torch.float)
adv[0, 5] = float("nan")  # padding may hold anything
real = mask == 1
for shift_mean in (True, False):
    w = masked_whiten(adv, mask, shift_mean)
    print(f"shift_mean={shift_mean}: |mean| {w[real].mean().abs():.4f},"
          f" std {w[real].std():.4f}, padding {w[~real].tolist()}")
print(f"before: mean {adv[real].mean():.4f}, std {adv[real].std():.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Advantage Whitening", "zh": "优势白化"}


def inputs(draw):
    B, T = draw.size()
    T = max(T, 2)
    mask = draw.mask(B, T)
    if mask.sum() < 2:  # the unbiased variance needs two response tokens
        mask.reshape(-1)[:2] = 1
    # values as usual; a constant batch (the case the 1e-8 is for: a value whose sums are
    # exact, so its variance is exactly 0); or a spread of 1e-4, where the variance is about
    # the 1e-8 itself and where it goes (added, or a floor) shows
    kind = draw.choice(["usual", "usual", "constant", "tiny"])
    if kind == "constant":
        values = draw.normal((B, T), 0.0, shift=draw.choice([0.0, 0.5, -2.0]))
    else:
        values = draw.normal((B, T), 2.0 if kind == "usual" else 1e-4)
    return {"values": values, "mask": mask, "shift_mean": draw.coin(0.7)}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Whiten over the response tokens of the whole batch, as verl 0.9.1 does.":
        "在整个 batch 的回复 token 上白化，和 verl 0.9.1 一样。",
    ", with the mean and the unbiased variance": "，均值和无偏方差",
    "taken over the tokens where mask is 1.": "都只在 mask 为 1 的 token 上计算。",
    ", e.g. the advantages from compute_gae": "，例如 compute_gae 算出的优势",
    ", 1 on response tokens (at least two of them)": "，回复 token 上为 1（至少两个）",
    "False adds the mean back: only the scale changes": "为 False 时把均值加回去：只改变尺度",
    ", 0 on padding": "，padding 上为 0",
    "response tokens in the batch": "batch 中回复 token 的个数",
    "the mean over response tokens only (padding may hold NaN:":
        "只在回复 token 上求均值（padding 里可能是 NaN：",
    "masked_fill, not a multiply)": "用 masked_fill，不要用乘法）",
    "the unbiased variance over them, ": "在这些 token 上求无偏方差：",
    "put the mean back": "把均值加回去",
    "padding may hold anything": "padding 里可能是任何值",
    "|mean| ": "|均值| ",
    "f\" std ": "f\" 标准差 ",
    "before: mean ": "白化前：均值 ",
    ", std ": "，标准差 ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("TODO 1, hint: the mean of values × mask: padding's NaN survives 0 × NaN",
     "mean = values.masked_fill(~real, 0.0).sum() / n", "mean = (values * mask).sum() / n"),
    ("hint: the squared deviations × mask: 0 × NaN (or 0 × inf) on padding",
     "var = ((values - mean) ** 2).masked_fill(~real, 0.0).sum() / (n - 1)",
     "var = ((values - mean) ** 2 * mask).sum() / (n - 1)"),
    ("hint: the mean over response tokens: over every position, padding counted as 0",
     "mean = values.masked_fill(~real, 0.0).sum() / n",
     "mean = values.masked_fill(~real, 0.0).mean()"),
    ("walkthrough: one mean over the whole batch, not per sequence",
     "mean = values.masked_fill(~real, 0.0).sum() / n",
     "mean = values.masked_fill(~real, 0.0).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True)"),
    ("TODO 2, hint, walkthrough: the biased variance, ÷ n (OpenRLHF), not ÷ (n − 1)",
     "var = ((values - mean) ** 2).masked_fill(~real, 0.0).sum() / (n - 1)",
     "var = ((values - mean) ** 2).masked_fill(~real, 0.0).sum() / n"),
    ("hint: no 1e-8: a constant batch divides 0 by 0",
     "torch.sqrt(var + 1e-8)", "torch.sqrt(var)"),
    ("walkthrough: OpenRLHF's floor on the variance, var.clamp(min=1e-8), for the 1e-8 added",
     "torch.sqrt(var + 1e-8)", "torch.sqrt(var.clamp(min=1e-8))"),
    ("hint: sqrt(var) + 1e-8, the constant outside the square root",
     "torch.sqrt(var + 1e-8)", "(torch.sqrt(var) + 1e-8)"),
    ("TODO 4, docstring: shift_mean=False without the mean put back",
     "whitened = whitened + mean", "whitened = whitened"),
    ("walkthrough: TRL's and verl's whitened values left on padding, not 0",
     "return whitened.masked_fill(~real, 0.0)", "return whitened"),
]
# --8<-- [end:traps]
