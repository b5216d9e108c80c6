# --8<-- [start:exercise]
import torch


def kl_cov_loss(new_logprobs, old_logprobs, advantages, mask,
                k_ratio=2e-4, kl_coef=1.0):
    """KL-Cov: −Â·ρ on every token, plus kl_coef·|log ρ| on the few tokens
    whose advantage and log-prob covary most.

    Args:
        new_logprobs: [B, T] under the policy being trained
        old_logprobs: [B, T] under the policy that sampled
        advantages:   [B] one per response, or [B, T]
        mask:         [B, T]
        k_ratio:      the fraction of response tokens penalised (at least one)
        kl_coef:      weight of the |log ρ| penalty
    Returns:
        scalar loss, the mean over response tokens ("token-mean")
    """
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    advantages = advantages.expand_as(new_logprobs)  # [B, T]
    valid = mask != 0

    # log ρ, 0 on padding; the loss −Â·ρ, with no clip
    log_ratio = (new_logprobs - old_logprobs).masked_fill(~valid, 0.0)
    loss = -advantages * log_ratio.exp()

    # the penalty's weight: kl_coef on the chosen tokens, 0 elsewhere
    chosen = torch.zeros_like(loss)
    if valid.any():
        # the N response tokens; log π detached: choosing has no gradient
        adv = advantages[valid]  # [N]
        logp = new_logprobs.detach()[valid]  # [N]
        # TODO 1: each token's covariance term (Â − mean Â)(log π − mean log π)
        cov = (adv - adv.mean()) * (logp - logp.mean())
        # TODO 2: k = ⌊N·k_ratio⌋, at least 1
        k = max(1, int(cov.numel() * k_ratio))
        # TODO 3: where, among the N, the k largest terms are
        top = cov.topk(k).indices
        rows, cols = valid.nonzero(as_tuple=True)  # [N], [N]
        chosen[rows[top], cols[top]] = kl_coef

    # TODO 4: + kl_coef·|log ρ| on the chosen tokens
    loss = loss + chosen * log_ratio.abs()

    # token-mean (GRPO Ex. 3)
    loss = loss.masked_fill(~valid, 0.0)
    return loss.sum() / mask.sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# Two responses: a right one of 4 tokens (Â = +1), a wrong one of 3 (Â = −1)
mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0]],
                    dtype=torch.float64)
adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
new = torch.tensor([[-0.1, -2.0, -0.5, -3.0], [-4.0, -0.2, -1.5, 0.0]],
                   dtype=torch.float64)
log_ratio = torch.tensor([[0.1, -0.05, 0.2, 0.0], [-0.3, 0.05, 0.1, 0.0]],
                         dtype=torch.float64)
old = new - log_ratio

# The covariance terms, as the page's formula gives them
a = adv.unsqueeze(1).expand_as(new)[mask != 0]
lp = new[mask != 0]
print(f"mean Â over the 7 tokens: {a.mean().item():+.3f}"
      f", mean log π: {lp.mean().item():+.3f}")
cov = (a - a.mean()) * (lp - lp.mean())


def pull(k_ratio, b, t):
    """What the penalty adds to ∂loss/∂log π at token (b, t): the gradient
    with kl_coef = 1 minus the gradient with kl_coef = 0 (central differences)."""
    h = 1e-6
    step = torch.zeros_like(new)
    step[b, t] = h
    grads = []
    for coef in [1.0, 0.0]:
        up = kl_cov_loss(new + step, old, adv, mask, k_ratio, coef)
        down = kl_cov_loss(new - step, old, adv, mask, k_ratio, coef)
        grads.append(((up - down) / (2 * h)).item())
    return round(grads[0] - grads[1], 6) + 0.0  # to 6 places: no rounding noise


print(" b t   Â    log π   log ρ       C    pull (k_ratio 0.3)")
n = 0
for b in range(2):
    for t in range(4):
        if mask[b, t] == 0:
            continue
        print(f" {b} {t}  {adv[b].item():+.0f}  {new[b, t].item():6.2f}"
              f"  {log_ratio[b, t].item():+6.2f}  {cov[n].item():+6.3f}"
              f"  {pull(0.3, b, t):+6.3f}")
        n += 1

# The default k_ratio, 2e-4: k = max(1, ⌊7 × 0.0002⌋) = 1 token
picked = [(b, t) for b in range(2) for t in range(4)
          if mask[b, t] == 1 and pull(2e-4, b, t) != 0]
print(f"k_ratio 2e-4 penalises {len(picked)} token: {picked}")

for coef in [0.0, 1.0]:
    loss = kl_cov_loss(new, old, adv, mask, 0.3, coef)
    print(f"kl_coef {coef}: loss {loss.item():+.4f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "KL-Cov", "zh": "KL-Cov"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"new_logprobs": "logprob",
           "old_logprobs": "logprob"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("new_logprobs",)


def inputs(draw):
    B, T = draw.size()
    new, mask = draw.normal((B, T), 1.0, -2.0), draw.mask(B, T)
    # No ties at the cut, which topk may break either way: one advantage per token (with [B]
    # ones, the tokens of a single response all have C = 0), and with exactly two response
    # tokens, whose two terms are always equal, both are taken (k_ratio passed, not left out).
    k_ratio = draw.choice([2e-4, 0.1, 0.3, 0.5])
    N = int(mask.sum())
    if N > 2 and draw.coin():
        # N·k_ratio = j + 0.75: ⌊N·k_ratio⌋ is j, the nearest integer j + 1
        k_ratio = (int(draw.rng.integers(1, N)) + 0.75) / N
    if N == 2:
        k_ratio = 1.0
        draw.keep("k_ratio")
    return {"new_logprobs": new, "old_logprobs": new - draw.normal((B, T), 0.3),
            "advantages": draw.normal((B, T)), "mask": mask, "k_ratio": k_ratio,
            "kl_coef": draw.choice([1.0, 0.1])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "KL-Cov: −Â·ρ on every token, plus kl_coef·|log ρ| on the few tokens":
        "`KL-Cov`：每个 token 上是 −Â·ρ，在优势和对数概率协方差最大的少数",
    "whose advantage and log-prob covary most.": "token 上再加 kl_coef·|log ρ|。",
    "under the policy being trained": "正在训练的策略下的对数概率",
    "under the policy that sampled": "采样用的策略下的对数概率",
    "one per response, or [B, T]": "每条回复一个，或 [B, T]",
    "the fraction of response tokens penalised (at least one)":
        "受惩罚的回复 token 所占比例（至少一个）",
    "weight of the |log ρ| penalty": "|log ρ| 惩罚的权重",
    "scalar loss, the mean over response tokens (\"token-mean\")":
        "标量损失，对回复 token 取平均（\"token-mean\"）",
    "log ρ, 0 on padding; the loss −Â·ρ, with no clip":
        "log ρ，padding 上为 0；损失 −Â·ρ，不裁剪",
    "the penalty's weight: kl_coef on the chosen tokens, 0 elsewhere":
        "惩罚的权重：被选中的 token 上为 kl_coef，其余为 0",
    "the N response tokens; log π detached: choosing has no gradient":
        "N 个回复 token；log π 先 detach：挑选这一步没有梯度",
    "each token's covariance term (Â − mean Â)(log π − mean log π)":
        "每个 token 的协方差项 (Â − mean Â)(log π − mean log π)",
    "k = ⌊N·k_ratio⌋, at least 1": "k = ⌊N·k_ratio⌋，至少为 1",
    "to 6 places: no rounding noise": "保留 6 位小数：去掉舍入噪声",
    "where, among the N, the k largest terms are": "N 个里最大的 k 项在哪些位置",
    "+ kl_coef·|log ρ| on the chosen tokens": "在选中的 token 上加 kl_coef·|log ρ|",
    "token-mean (GRPO Ex. 3)": "token-mean（GRPO 练习 3）",
    "Two responses: a right one of 4 tokens (Â = +1), a wrong one of 3 (Â = −1)":
        "两条回复：正确的 4 个 token（Â = +1），错误的 3 个 token（Â = −1）",
    "The covariance terms, as the page's formula gives them": "按页面上的公式算出的协方差项",
    "mean Â over the 7 tokens: ": "7 个 token 上 Â 的均值：",
    ", mean log π: ": "，log π 的均值：",
    "What the penalty adds to ∂loss/∂log π at token (b, t): the gradient":
        "惩罚项在 token (b, t) 处给 ∂loss/∂log π 加了多少：kl_coef = 1 时的梯度",
    "with kl_coef = 1 minus the gradient with kl_coef = 0 (central differences).":
        "减去 kl_coef = 0 时的梯度（中心差分）。",
    "    pull (k_ratio 0.3)": "    拉力（k_ratio 0.3）",
    "The default k_ratio, 2e-4: k = max(1, ⌊7 × 0.0002⌋) = 1 token":
        "默认的 k_ratio 2e-4：k = max(1, ⌊7 × 0.0002⌋) = 1 个 token",
    "k_ratio 2e-4 penalises ": "k_ratio 2e-4 惩罚 ",
    " token: ": " 个 token：",
    ": loss ": "：损失 ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("walkthrough: the means are over the N response tokens; over every row alike, padding "
     "included (the mean over responses), is the first mistake to avoid",
     "cov = (adv - adv.mean()) * (logp - logp.mean())",
     "cov = (adv - advantages.mean()) * (logp - new_logprobs.detach().mean())"),
    ("hint: max(1, …) keeps at least one token; without it k = ⌊N·k_ratio⌋ is 0 for small "
     "batches and nothing is penalised",
     "k = max(1, int(cov.numel() * k_ratio))", "k = int(cov.numel() * k_ratio)"),
    ("hint: int() rounds toward zero: k = ⌊N·k_ratio⌋, not the nearest integer",
     "k = max(1, int(cov.numel() * k_ratio))", "k = max(1, round(cov.numel() * k_ratio))"),
    ("hint: chosen holds kl_coef on the chosen tokens and 0 everywhere else; the penalty on "
     "every token",
     "loss = loss + chosen * log_ratio.abs()", "loss = loss + kl_coef * log_ratio.abs()"),
    ("hint, walkthrough: the penalty is |log ρ|, an L1 distance to π_old, not log ρ",
     "loss = loss + chosen * log_ratio.abs()", "loss = loss + chosen * log_ratio"),
    ("page: C uses the current policy's log π_θ, not the sampler's",
     "logp = new_logprobs.detach()[valid]", "logp = old_logprobs[valid]"),
]
# --8<-- [end:traps]
