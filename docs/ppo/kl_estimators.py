# --8<-- [start:exercise]
import torch


def kl_estimators(p_logprobs, q_logprobs):
    """Three per-token estimates of KL(q ‖ p) from tokens sampled from q.

    In RLHF, q is the policy that sampled the tokens and p the frozen
    reference model: KL(π_θ ‖ π_ref).
    With r = p / q:  K1 = −log r,  K2 = ½(log r)²,  K3 = (r − 1) − log r

    Args:
        p_logprobs: [B, T] log-probs of the sampled tokens under p
        q_logprobs: [B, T] log-probs under q, which sampled the tokens
    Returns:
        k1, k2, k3: each [B, T]
    """
    # TODO 1: log r = log p − log q
    log_r = p_logprobs - q_logprobs

    # TODO 2: K1 = −log r
    k1 = -log_r

    # TODO 3: K2 = ½ (log r)²
    k2 = 0.5 * log_r ** 2

    # TODO 4: K3 = (r − 1) − log r; expm1(x) = eˣ − 1, exact even for tiny x
    k3 = torch.expm1(log_r) - log_r

    return k1, k2, k3
# --8<-- [end:exercise]


# --8<-- [start:test]
# q samples (the policy), p is the reference; a 6-token vocabulary
q = torch.tensor([0.35, 0.25, 0.15, 0.12, 0.08, 0.05])
p = torch.tensor([0.20, 0.20, 0.20, 0.20, 0.10, 0.10])
print(f"KL(q‖p) = {(q * (q / p).log()).sum():.4f}  (exact)")

# 2,000 tokens drawn from q, by inverse CDF
torch.manual_seed(3)
u = torch.rand(2000)
tokens = (u[:, None] > q.cumsum(0)[None, :]).sum(-1).clamp(max=5)
k1, k2, k3 = kl_estimators(p.log()[tokens], q.log()[tokens])
for name, k in (("K1", k1), ("K2", k2), ("K3", k3)):
    print(f"{name}: mean {k.mean():+.4f}   std {k.std():.4f}   "
          f"min {k.min():+.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "KL Estimators", "zh": "KL 估计量"}
# K3 of a tiny log r is about (log r)²/2: e^x − 1 − x misses it by float32's rounding of e^x
# (up to 6e-8), which only an absolute tolerance below that sees; expm1(x) − x is within
# 1e-9 of the reference for every x (1 ulp of expm1 is below 1e-4·K3 from |x| = 2.4e-3 up)
ATOL = 1e-9
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("q_logprobs",)


def inputs(draw):
    B, T = draw.size()
    q = draw.normal((B, T), 0.5, shift=-1.0)  # log q of the sampled tokens
    # p near q (|log r| ~ 1e-3, where e^x − 1 loses its digits), as usual, or a token the
    # policy q finds unlikely and the reference p likes (r large: K3's heavy tail, above 10)
    kind = draw.choice(["near", "usual", "far"])
    if kind == "far":
        return {"p_logprobs": draw.normal((B, T), 0.5, shift=-1.0),
                "q_logprobs": draw.normal((B, T), 1.0, shift=-7.0)}
    spread = 1e-3 if kind == "near" else 0.3
    return {"p_logprobs": q + draw.normal((B, T), spread), "q_logprobs": q}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Three per-token estimates of KL(q ‖ p) from tokens sampled from q.":
        "用从 q 采样的 token 逐 token 估计 KL(q ‖ p) 的三种写法。",
    "In RLHF, q is the policy that sampled the tokens and p the frozen":
        "在 RLHF 里，q 是采样这些 token 的策略，p 是冻结的",
    "reference model: KL(π_θ ‖ π_ref).": "参考模型：KL(π_θ ‖ π_ref)。",
    "With r = p / q:": "记 r = p / q：",
    "log-probs of the sampled tokens under p": "采样 token 在 p 下的对数概率",
    "log-probs under q, which sampled the tokens": "在 q（采样这些 token 的分布）下的对数概率",
    "each [B, T]": "各为 [B, T]",
    "; expm1(x) = eˣ − 1, exact even for tiny x": "；expm1(x) = eˣ − 1，x 极小时也精确",
    "q samples (the policy), p is the reference; a 6-token vocabulary":
        "q 负责采样（策略），p 是参考模型；词表有 6 个 token",
    "(exact)": "（精确值）",
    "2,000 tokens drawn from q, by inverse CDF": "用逆 CDF 从 q 抽 2000 个 token",
    ": mean ": "：均值 ",
    "   std ": "   标准差 ",
    "f\"min ": "f\"最小值 ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: log r = log p − log q, the quantity estimated is KL(q ‖ p): q − p instead",
     "log_r = p_logprobs - q_logprobs", "log_r = q_logprobs - p_logprobs"),
    ("TODO 2: K1 = −log r: the minus sign left out",
     "k1 = -log_r", "k1 = log_r"),
    ("about the source: its answer log_r.exp() − 1 − log_r rounds e^x − 1 first, K3 < 0 for "
     "tiny x",
     "k3 = torch.expm1(log_r) - log_r", "k3 = log_r.exp() - 1 - log_r"),
    ("walkthrough: verl's and OpenRLHF's clamp of K3 to [−10, 10]: the estimator itself has "
     "no clamp (its heavy tail)",
     "k3 = torch.expm1(log_r) - log_r", "k3 = (torch.expm1(log_r) - log_r).clamp(-10, 10)"),
]
# --8<-- [end:traps]
