# --8<-- [start:exercise]
import torch


def compute_gae(rewards, values, next_value=0.0, gamma=0.99,
                gae_lambda=0.95):
    """GAE over one episode of T steps.

    Args:
        rewards:    [T] rewards r_t
        values:     [T] critic values V(s_t)
        next_value: V(s_T), the value of the state after the last step:
                    0 if the episode ended there, the critic's V(s_T)
                    if it was cut off
        gamma:      discount γ
        gae_lambda: λ
    Returns:
        advantages, returns: both [T]
    """
    T = rewards.shape[0]  # steps
    advantages = torch.zeros_like(rewards)
    gae = 0.0

    for t in reversed(range(T)):
        # TODO 1: V(s_{t+1}): next_value after the last step, else values[t + 1]
        next_v = next_value if t == T - 1 else values[t + 1]

        # TODO 2: δ_t = r_t + γ V(s_{t+1}) − V(s_t)
        delta = rewards[t] + gamma * next_v - values[t]

        # TODO 3: Â_t = δ_t + γλ Â_{t+1}
        gae = delta + gamma * gae_lambda * gae

        advantages[t] = gae

    returns = advantages + values
    return advantages, returns
# --8<-- [end:exercise]


# --8<-- [start:test]
rewards = torch.tensor([0.0, 0.0, 0.0, 0.0, 10.0])  # reward at the end
values = torch.ones(5)
adv, ret = compute_gae(rewards, values, next_value=0.0)
print(f"V(s_5) = 0: Â = {[round(a, 4) for a in adv.tolist()]}")
print(f"            δ_4 = 10 + 0 - 1 = {adv[-1].item():.4f},"
      f" Â > 0: {bool((adv > 0).all())}")

# Cut off after 5 steps instead: bootstrap from the critic's V(s_5)
# (here 2.0), not from values[-1]
adv_cut, _ = compute_gae(rewards, values, next_value=2.0)
print(f"V(s_5) = 2: Â = {[round(a, 4) for a in adv_cut.tolist()]}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "GAE", "zh": "GAE"}
REFERENCE = "compute_gae_episode"


def inputs(draw):
    T = draw.length(2, 11)  # steps of one episode
    return {"rewards": draw.normal(T), "values": draw.normal(T),
            "next_value": float(draw.normal(())), "gamma": draw.choice([0.99, 1.0, 0.9]),
            "gae_lambda": draw.choice([0.95, 0.0, 1.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "GAE over one episode of T steps.": "在一个 T 步的回合上计算 GAE。",
    "rewards r_t": "奖励 r_t",
    "critic values V(s_t)": "critic 的价值 V(s_t)",
    "V(s_T), the value of the state after the last step:": "V(s_T)，最后一步之后那个状态的价值：",
    "0 if the episode ended there, the critic's V(s_T)": "回合在那里结束就是 0，被截断",
    "if it was cut off": "则是 critic 的 V(s_T)",
    "discount γ": "折扣因子 γ",
    "both [T]": "都是 [T]",
    "steps": "步数",
    ": next_value after the last step, else values[t + 1]":
        "：最后一步之后是 next_value，否则是 values[t + 1]",
    "reward at the end": "奖励在最后",
    "Cut off after 5 steps instead: bootstrap from the critic's V(s_5)":
        "换成 5 步后被截断：从 critic 的 V(s_5) 自举",
    "(here 2.0), not from values[-1]": "（这里是 2.0），而不是 values[-1]",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("steps: the loop run forwards, t = 0, …, T−1: Â_{t+1} is not computed yet",
     "for t in reversed(range(T)):", "for t in range(T):"),
    ("about the source: V(s_T) = values[-1] when cut off, the value of the last state visited, "
     "not of the next one",
     "next_v = next_value if t == T - 1 else values[t + 1]",
     "next_v = values[-1] if t == T - 1 else values[t + 1]"),
    ("key parameters: next_value ignored, V(s_T) = 0 as if every episode terminated",
     "next_v = next_value if t == T - 1 else values[t + 1]",
     "next_v = 0.0 if t == T - 1 else values[t + 1]"),
]
# --8<-- [end:traps]
