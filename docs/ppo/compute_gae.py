# --8<-- [start:exercise]
import torch


def compute_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    """Generalized Advantage Estimation, walking back over the response.

    Args:
        rewards: [B, T] token rewards (KL penalty, RM score on the last)
        values:  [B, T] critic values V(s_t)
        mask:    [B, T], 1 on response tokens
        gamma:   discount γ (1.0 for language tasks)
        lam:     GAE λ
    Returns:
        advantages, returns: both [B, T], 0 on padding
    """
    B, T = rewards.shape  # batch, response length
    advantages = torch.zeros_like(rewards)
    next_value = torch.zeros(B)  # V of the next response token (0 at end)
    gae = torch.zeros(B)  # Â_{t+1}

    # TODO 1: walk back in time, t = T−1, …, 0
    for t in reversed(range(T)):
        # TODO 2: δ_t = r_t + γ V(s_{t+1}) − V(s_t)
        delta = rewards[:, t] + gamma * next_value - values[:, t]

        # TODO 3: Â_t = δ_t + γλ Â_{t+1}
        gae_t = delta + gamma * lam * gae

        real = mask[:, t] == 1  # is token t in the response?
        # TODO 4: on padding the running Â stays as it was (torch.where:
        # a multiply by the mask would let a NaN there through)
        gae = torch.where(real, gae_t, gae)

        # TODO 5: the same for V: the next real token's value
        next_value = torch.where(real, values[:, t], next_value)
        advantages[:, t] = gae

    advantages = advantages.masked_fill(mask == 0, 0.0)
    returns = (advantages + values).masked_fill(mask == 0, 0.0)  # V targets
    return advantages.detach(), returns.detach()
# --8<-- [end:exercise]


# --8<-- [start:test]
B, T = 2, 5
rewards = torch.zeros(B, T)
rewards[:, -1] = torch.tensor([1.0, -0.5])  # RM score on the last token
values = torch.zeros(B, T) + 0.1
mask = torch.ones(B, T)
adv, ret = compute_gae(rewards, values, mask)
print(f"Â =\n{adv}")
print(f"R =\n{ret}")

# Right padding: the row ends after 3 tokens; what padding holds (9.0, NaN)
# must not reach token 2.
rewards = torch.tensor([[0.0, 0.0, 1.0, 0.0, 0.0]])
values = torch.tensor([[0.1, 0.1, 0.1, 9.0, float("nan")]])
mask = torch.tensor([[1.0, 1.0, 1.0, 0.0, 0.0]])
adv, ret = compute_gae(rewards, values, mask)
print(f"mask = {mask[0].tolist()}: Â =\n{adv}")

# λ = 0.95 on a 1,000-token answer: the share of the last token's reward
# that reaches the first token through (γλ)^t alone
print(f"0.95 ** 1000 = {0.95 ** 1000:.1e}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "GAE, Computed Backwards", "zh": "GAE 倒序递推"}
TIMEOUT = 15  # seconds a run may take in the browser: a Python loop over T


def inputs(draw):
    B, T = draw.size()
    return {"rewards": draw.normal((B, T)), "values": draw.normal((B, T)),
            "mask": draw.mask(B, T), "gamma": draw.choice([1.0, 0.99, 0.9]),
            "lam": draw.choice([0.95, 0.8, 0.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Generalized Advantage Estimation, walking back over the response.":
        "广义优势估计（GAE），沿回复从后往前递推。",
    "token rewards (KL penalty, RM score on the last)":
        "token 奖励（KL 惩罚，最后一个 token 上再加 RM 分数）",
    "critic values V(s_t)": "critic 的价值 V(s_t)",
    ", 1 on response tokens": "，回复 token 上为 1",
    "discount γ (1.0 for language tasks)": "折扣因子 γ（语言任务取 1.0）",
    "both [B, T], 0 on padding": "都是 [B, T]，padding 上为 0",
    "batch, response length": "batch 大小，回复长度",
    "V of the next response token (0 at end)": "下一个回复 token 的 V（末尾之后为 0）",
    "walk back in time, t = T−1, …, 0": "沿时间倒着走，t = T−1, …, 0",
    "is token t in the response?": "token t 在回复里吗？",
    "on padding the running Â stays as it was (torch.where:":
        "padding 上，递推中的 Â 保持原值（用 torch.where：",
    "a multiply by the mask would let a NaN there through)": "乘以掩码会让那里的 NaN 漏进来）",
    "the same for V: the next real token's value": "V 也一样：保留下一个真实 token 的价值",
    "V targets": "V 的目标",
    "RM score on the last token": "RM 分数在最后一个 token 上",
    "Right padding: the row ends after 3 tokens; what padding holds (9.0, NaN)":
        "右侧 padding：这一行 3 个 token 后就结束；padding 里的值（9.0、NaN）",
    "must not reach token 2.": "不能影响到 token 2。",
    "λ = 0.95 on a 1,000-token answer: the share of the last token's reward":
        "λ = 0.95、回答长 1000 个 token 时，最后一个 token 的奖励",
    "that reaches the first token through (γλ)^t alone": "单靠 (γλ)^t 能传到第一个 token 的比例",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("TODO 1, hint: the loop run forwards, t = 0, …, T−1: Â_{t+1} is not computed yet",
     "for t in reversed(range(T)):", "for t in range(T):"),
    ("TODO 4, hint: a multiply by the mask for the running Â lets a NaN on padding through",
     "gae = torch.where(real, gae_t, gae)",
     "gae = mask[:, t] * gae_t + (1 - mask[:, t]) * gae"),
    ("TODO 5, hint: a multiply by the mask for the next value lets a NaN on padding through",
     "next_value = torch.where(real, values[:, t], next_value)",
     "next_value = mask[:, t] * values[:, t] + (1 - mask[:, t]) * next_value"),
    ("TODO 4, hint: the running Â not kept on padding: padding's rewards flow back",
     "gae = torch.where(real, gae_t, gae)", "gae = gae_t"),
    ("TODO 5, hint: the next value not kept on padding: the last real token bootstraps "
     "from the value on the padding",
     "next_value = torch.where(real, values[:, t], next_value)", "next_value = values[:, t]"),
    ("about the source: V(s_{t+1}) = values[:, t + 1] and the recursion over every position, "
     "padding or not",
     "gae = torch.where(real, gae_t, gae)\n\n"
     "        # TODO 5: the same for V: the next real token's value\n"
     "        next_value = torch.where(real, values[:, t], next_value)\n",
     "gae = gae_t\n        next_value = values[:, t]\n"),
    ("walkthrough: λ = 1 by default, verl's and OpenRLHF's, not 0.95 (TRL's last PPOTrainer)",
     "gamma=1.0, lam=0.95", "gamma=1.0, lam=1.0"),
    ("the returns (V targets) multiplied by the mask: 0 × NaN in the values on padding",
     "returns = (advantages + values).masked_fill(mask == 0, 0.0)",
     "returns = (advantages + values) * mask"),
]
# --8<-- [end:traps]
