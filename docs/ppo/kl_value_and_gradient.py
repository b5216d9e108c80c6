# --8<-- [start:example]
import torch

# The policy q = softmax(θ) on a 4-token vocabulary; the frozen reference p
theta = torch.tensor([0.5, -0.2, 0.1, -0.4])
q = torch.softmax(theta, dim=0)
p = torch.tensor([0.1, 0.4, 0.3, 0.2])

# Per token x: log r(x) = log p(x) − log q(x), and the three estimators
log_r = p.log() - q.log()
r = log_r.exp()
k = {"K1": -log_r, "K2": 0.5 * log_r ** 2, "K3": r - 1 - log_r}

# ∇θ log q(x) = onehot(x) − q: one row per token x
eye = (torch.arange(4)[:, None] == torch.arange(4)[None, :]).float()
score = eye - q
# ∂k/∂θ with the sample x held fixed, a multiple of ∇θ log q(x):
# ∇K1 = ∇log q,   ∇K2 = −log r · ∇log q,   ∇K3 = (1 − r) · ∇log q
chain = {"K1": torch.ones(4), "K2": -log_r, "K3": 1 - r}


def expect(f):
    """E_{x∼q}[f(x)], exactly: a sum over the vocabulary."""
    weights = q.reshape(-1, *[1] * (f.dim() - 1))
    return (weights * f).sum(0)


targets = {
    "∇KL(q‖p)": expect(-log_r[:, None] * score),  # E[(log q−log p)∇log q]
    "∇KL(p‖q)": -(p[:, None] * score).sum(0),  # −Σ p ∇log q
    "0": torch.zeros(4),
}


def which(g):
    """The gradient g equals, or — for none of them."""
    same = [n for n, t in targets.items()
            if torch.allclose(g, t, atol=1e-6)]
    return same[0] if same else "—"


# What the libraries ship: K3's value with another gradient (on policy,
# where the ratios ρ and w are 1 but ∇ρ = ρ·∇log q is not 0)
# verl k3+:  ∇K2, by a straight-through trick
# TRL ρ·K3:  ∇(ρ·K3) = K3·∇log q + ∇K3 = (K3 + 1 − r)·∇log q
# OpenRLHF unbiased_gradient: w·∇K2 with w detached
shipped = {"verl k3+": -log_r, "TRL ρ·K3": k["K3"] + 1 - r,
           "OpenRLHF": -log_r}
rows = [(name, values, chain[name]) for name, values in k.items()]
rows += [(name, k["K3"], grad) for name, grad in shipped.items()]

print(f"KL(q‖p) = {expect(-log_r):.4f}")
print("          E_q[k]   Var_q[k]   E[k·∇log q]   E[∇k]")
for name, values, grad in rows:
    mean = expect(values)
    var = expect(values ** 2) - mean ** 2
    # in the reward: no gradient through k, REINFORCE gives E[k ∇log q]
    as_reward = which(expect(values[:, None] * score))
    # in the loss: autograd through k on tokens sampled from q, E[∇k]
    in_loss = which(expect(grad[:, None] * score))
    print(f"{name:<9} {mean:.4f}   {var:.4f}     {as_reward:<13} {in_loss}")

# Exact variances over 1,000 random (q, p) pairs on 4 tokens, in float64
torch.manual_seed(0)
q = torch.softmax(3 * torch.rand(1000, 4, dtype=torch.float64), dim=1)
p = torch.softmax(3 * torch.rand(1000, 4, dtype=torch.float64), dim=1)
log_r = p.log() - q.log()
k2, k3 = 0.5 * log_r ** 2, log_r.exp() - 1 - log_r
var2 = (q * k2 ** 2).sum(1) - (q * k2).sum(1) ** 2
var3 = (q * k3 ** 2).sum(1) - (q * k3).sum(1) ** 2
share = (var2 < var3).float().mean() * 100
print(f"1000 random (q, p): Var[K2] < Var[K3] in {share:.1f}%; "
      f"max K3 = {k3.max():.1f}")
# --8<-- [end:example]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "The policy q = softmax(θ) on a 4-token vocabulary; the frozen reference p":
        "策略 q = softmax(θ)，词表有 4 个 token；p 是冻结的参考模型",
    "Per token x: log r(x) = log p(x) − log q(x), and the three estimators":
        "对每个 token x：log r(x) = log p(x) − log q(x)，以及三个估计量",
    ": one row per token x": "：每个 token x 一行",
    "∂k/∂θ with the sample x held fixed, a multiple of ∇θ log q(x):":
        "固定样本 x 时的 ∂k/∂θ，都是 ∇θ log q(x) 的倍数：",
    ", exactly: a sum over the vocabulary.": "，精确计算：对整个词表求和。",
    "The gradient g equals, or — for none of them.": "g 等于哪个梯度；哪个都不等时为 —。",
    "What the libraries ship: K3's value with another gradient (on policy,":
        "各个库实际提供的做法：值取 K3 的，梯度换成别的（策略尚未更新时",
    "where the ratios ρ and w are 1 but ∇ρ = ρ·∇log q is not 0)":
        "比率 ρ 和 w 都是 1，但 ∇ρ = ρ·∇log q 不为 0）",
    ", by a straight-through trick": "，用直通（前向取一个值、反向取另一个的梯度）技巧",
    " with w detached": "，w 不参与求导",
    "in the reward: no gradient through k, REINFORCE gives E[k ∇log q]":
        "放进奖励：梯度不经过 k，REINFORCE 给出 E[k ∇log q]",
    "in the loss: autograd through k on tokens sampled from q, E[∇k]":
        "放进损失：在从 q 采样的 token 上对 k 自动求导，E[∇k]",
    "Exact variances over 1,000 random (q, p) pairs on 4 tokens, in float64":
        "1000 对随机 (q, p)（4 个 token）上的精确方差，用 float64",
    "1000 random (q, p): Var[K2] < Var[K3] in ": "1000 对随机 (q, p) 中 Var[K2] < Var[K3] 的占 ",
    "%; ": "%；",
}
# --8<-- [end:zh]
