# --8<-- [start:exercise]
import torch


def token_logprobs(logits, ids, temperature=1.0):
    """Log-probability of each sampled token under softmax(logits / τ).

    Args:
        logits:      [B, T, V] scores of the next token at each position
        ids:         [B, T] the sampled tokens (int64), aligned: logits[:, t]
                     is the distribution that ids[:, t] was drawn from
        temperature: τ, the sampler's temperature
    Returns:
        [B, T] log π_τ(ids)
    """
    # TODO 1: the distribution the sampler drew from: z / τ
    logits = logits / temperature
    # TODO 2: the sampled token's logit z[t, ids[t]], gathered on the last dim
    picked = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    # TODO 3: log π = z[t, ids[t]] − logsumexp over the vocabulary
    return picked - torch.logsumexp(logits, dim=-1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# a causal model: the logits at position t predict the token at t + 1.
# A toy one that is sure of the next token: after token a comes a + 1
V = 5  # vocabulary
table = torch.tensor([[4.0 if b == (a + 1) % V else 0.0 for b in range(V)]
                      for a in range(V)])  # row a: logit 4 for a + 1
ids = torch.tensor([[0, 1, 2, 3, 4]])  # one sequence of 5 tokens
logits = table[ids]  # [1, 5, V]: one next-token distribution per position
print("logits", list(logits.shape), "ids", list(ids.shape))

# shifted: the logits at 0..3 score the tokens at 1..4
right = token_logprobs(logits[:, :-1], ids[:, 1:])
print("shifted   logits[:, :-1] with ids[:, 1:]:", right)
# unshifted: each token scored by the distribution that comes after it
wrong = token_logprobs(logits, ids)
print("unshifted logits with ids:", wrong)

# the temperature: a sampler at τ = 0.7 drew these tokens
z = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).expand(4, 4).unsqueeze(0)
drawn = torch.tensor([[0, 1, 2, 3]])
sampler = token_logprobs(z, drawn, temperature=0.7)  # what the sampler reports
for tau in [0.7, 1.0]:
    # nothing has been trained yet: the ratio π_θ / π_sampler should be 1
    ratio = (token_logprobs(z, drawn, temperature=tau) - sampler).exp()
    print(f"trainer at τ = {tau}: ρ =", ratio)
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Token Log-Probs from Logits", "zh": "从 logits 取 token 的对数概率"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("logits",)


def inputs(draw):
    B, T = draw.size()
    V = draw.choice([2, 5, 11])  # vocabulary
    # logits of a few units, or of a hundred: exp overflows float32 past 88, and a token that
    # far below the largest has a probability that underflows to 0
    scale = draw.choice([2.0, 2.0, 60.0])
    return {"logits": draw.normal((B, T, V), scale), "ids": draw.rng.integers(0, V, (B, T)),
            "temperature": draw.choice([1.0, 0.7, 1.3])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Log-probability of each sampled token under softmax(logits / τ).":
        "每个被采样 token 在 softmax(logits / τ) 下的对数概率。",
    "scores of the next token at each position": "每个位置上对下一个 token 的打分",
    "the sampled tokens (int64), aligned: logits[:, t]":
        "被采样的 token（int64），与 logits 对齐：logits[:, t]",
    "is the distribution that ids[:, t] was drawn from": "正是 ids[:, t] 被抽出时所用的分布",
    "τ, the sampler's temperature": "τ，采样时的温度",
    "the distribution the sampler drew from: z / τ": "采样器实际抽样的分布：z / τ",
    "the sampled token's logit z[t, ids[t]], gathered on the last dim":
        "被采样 token 对应的 logits 分量 z[t, ids[t]]，在最后一维上 gather",
    "log π = z[t, ids[t]] − logsumexp over the vocabulary":
        "log π = z[t, ids[t]] − 对整个词表的 logsumexp",
    "a causal model: the logits at position t predict the token at t + 1.":
        "因果语言模型：位置 t 的 logits 预测的是位置 t + 1 的 token。",
    "A toy one that is sure of the next token: after token a comes a + 1":
        "一个玩具模型，对下一个 token 很有把握：a 之后总是 a + 1",
    "vocabulary": "词表大小",
    "row a: logit 4 for a + 1": "第 a 行：a + 1 处的 logits 为 4",
    "one sequence of 5 tokens": "一条 5 个 token 的序列",
    "one next-token distribution per position": "每个位置一个下一 token 的分布",
    "shifted: the logits at 0..3 score the tokens at 1..4":
        "错开一位：位置 0..3 的 logits 给位置 1..4 的 token 打分",
    "shifted   logits[:, :-1] with ids[:, 1:]:": "错开一位 logits[:, :-1] 配 ids[:, 1:]：",
    "unshifted: each token scored by the distribution that comes after it":
        "不错开：每个 token 被它之后那个位置的分布打分",
    "unshifted logits with ids:": "不错开 logits 配 ids：",
    "the temperature: a sampler at τ = 0.7 drew these tokens":
        "温度：这些 token 是采样器在 τ = 0.7 下抽出来的",
    "what the sampler reports": "采样器报告的对数概率",
    "nothing has been trained yet: the ratio π_θ / π_sampler should be 1":
        "还没有做任何训练：比值 π_θ / π_sampler 应该是 1",
    "trainer at τ = ": "训练端 τ = ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("TODO 1, walkthrough (the temperature): the logits not divided by τ, the log-probs of "
     "softmax(z) where the sampler drew from softmax(z/τ)",
     "logits = logits / temperature", "logits = logits"),
    ("hint: divide first, everything after works on z/τ; the log-prob of softmax(z) divided by "
     "τ at the end is not log softmax(z/τ)",
     "logits = logits / temperature\n"
     "    # TODO 2: the sampled token's logit z[t, ids[t]], gathered on the last dim\n"
     "    picked = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)\n"
     "    # TODO 3: log π = z[t, ids[t]] − logsumexp over the vocabulary\n"
     "    return picked - torch.logsumexp(logits, dim=-1)",
     "picked = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)\n"
     "    return (picked - torch.logsumexp(logits, dim=-1)) / temperature"),
    ("hint: torch.logsumexp is log Σ exp without overflow; written out, exp of a large logit is "
     "inf (and of very negative ones 0)",
     "torch.logsumexp(logits, dim=-1)", "torch.log(logits.exp().sum(dim=-1))"),
    ("hint of Exercise 2: log(softmax) for log_softmax: a probability that underflows to 0 "
     "gives log 0 = −inf",
     "return picked - torch.logsumexp(logits, dim=-1)",
     "return torch.log(torch.softmax(logits, dim=-1)).gather(-1, ids.unsqueeze(-1)).squeeze(-1)"),
    ("page: the function takes logits and ids already aligned, the shift is the caller's job; "
     "shifted again inside, a token is lost",
     "picked = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)",
     "logits = logits[:, :-1]\n"
     "    picked = logits.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)"),
]
# --8<-- [end:traps]
