# --8<-- [start:exercise]
import torch


def token_entropy(logits, temperature=1.0):
    """Entropy of each next-token distribution softmax(logits / τ), in nats.

    Args:
        logits:      [B, T, V] scores of the next token at each position
        temperature: τ, the sampler's temperature
    Returns:
        [B, T] H = −Σ_v π(v) log π(v), from 0 (sure) to log V (uniform)
    """
    # TODO 1: log π over the whole vocabulary, at the sampler's temperature
    logp = torch.log_softmax(logits / temperature, dim=-1)
    # TODO 2: H = −Σ_v π(v) log π(v), summed over the vocabulary
    return -(logp.exp() * logp).sum(dim=-1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# three positions of a vocabulary of 4: uniform, unsure, nearly sure
z = torch.tensor([[[0.0, 0.0, 0.0, 0.0],
                   [2.0, 1.0, 0.0, -1.0],
                   [6.0, 0.0, 0.0, 0.0]]])
print("H at τ = 1.0:", token_entropy(z))
print("H at τ = 0.7:", token_entropy(z, temperature=0.7))

# from the sampled token alone: −log π(y) of the one token drawn
logp = torch.log_softmax(z[0, 1], dim=-1)  # the unsure position
print("π =", logp.exp())
print("−log π(y) for y = 0, 1, 2, 3:", -logp)
# right on average (weighted by π), but each draw is far from it
print(f"Σ π(y)·(−log π(y)) = {(-(logp.exp() * logp).sum()).item():.4f}")

# surprise is not uncertainty: a sure position where an unlikely token was drawn
sure = torch.log_softmax(z[0, 2], dim=-1)
print(f"nearly sure position: π(y = 1) = {sure[1].exp().item():.4f},"
      f" −log π(y = 1) = {-sure[1].item():.4f}, H = {token_entropy(z[:, 2:]).item():.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Token Entropy from Logits", "zh": "从 logits 算 token 的熵"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("logits",)


def inputs(draw):
    B, T = draw.size()
    V = draw.choice([1, 2, 5, 11])  # vocabulary
    # logits of a few units, or of a hundred: nearly one-hot rows, where a probability
    # underflows to 0 and its log to −inf
    scale = draw.choice([2.0, 2.0, 60.0])
    return {"logits": draw.normal((B, T, V), scale),
            "temperature": draw.choice([1.0, 0.7, 1.3])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Entropy of each next-token distribution softmax(logits / τ), in nats.":
        "每个下一 token 分布 softmax(logits / τ) 的熵，单位：奈特。",
    "scores of the next token at each position": "每个位置上对下一个 token 的打分",
    "τ, the sampler's temperature": "τ，采样时的温度",
    ", from 0 (sure) to log V (uniform)": "，从 0（确定）到 log V（均匀）",
    "log π over the whole vocabulary, at the sampler's temperature":
        "整个词表上的 log π，用采样时的温度",
    ", summed over the vocabulary": "，对词表求和",
    "three positions of a vocabulary of 4: uniform, unsure, nearly sure":
        "词表大小为 4 的三个位置：均匀、拿不准、几乎确定",
    "from the sampled token alone: −log π(y) of the one token drawn":
        "只看被采样的 token：抽到的那一个 token 的 −log π(y)",
    "the unsure position": "拿不准的那个位置",
    "right on average (weighted by π), but each draw is far from it":
        "按 π 加权平均是对的，但每一次抽样都离它很远",
    "surprise is not uncertainty: a sure position where an unlikely token was drawn":
        "意外不等于不确定：一个几乎确定的位置上，抽到了一个不太可能的 token",
    "nearly sure position: ": "几乎确定的位置：",
    "H at τ = 1.0:": "τ = 1.0 时的 H：",
    "H at τ = 0.7:": "τ = 0.7 时的 H：",
    "−log π(y) for y = 0, 1, 2, 3:": "y = 0, 1, 2, 3 各自的 −log π(y)：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: not torch.log(torch.softmax(...)): a probability that underflows to 0 gives "
     "log 0 = −inf, and 0·(−inf) is NaN",
     "torch.log_softmax(logits / temperature, dim=-1)",
     "torch.log(torch.softmax(logits / temperature, dim=-1))"),
    ("TODO 1, walkthrough: the entropy of the distribution the sampler drew from, at its τ; "
     "the temperature forgotten",
     "torch.log_softmax(logits / temperature, dim=-1)", "torch.log_softmax(logits, dim=-1)"),
    ("hint: multiply, sum over the last dimension, negate: without the minus the entropy is "
     "negative",
     "return -(logp.exp() * logp).sum(dim=-1)", "return (logp.exp() * logp).sum(dim=-1)"),
]
# --8<-- [end:traps]
