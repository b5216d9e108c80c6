# --8<-- [start:example]
import torch

# two responses, right-padded; each score is on its response's last
# token, and every token carries −β·KL (here −0.01), as in PPO Ex. 6
mask = torch.tensor([[1.0, 1.0, 1.0, 1.0],
                     [1.0, 1.0, 0.0, 0.0]])
rewards = torch.tensor([[-0.01, -0.01, -0.01, 0.99],
                        [-0.01, 0.49, 0.0, 0.0]])
gamma = 1.0

# G_t = r_t + γ·G_{t+1}, backwards; padding carries the running return
B, T = rewards.shape  # batch, response length
returns = torch.zeros(B, T)
running = torch.zeros(B)
for t in reversed(range(T)):
    step = rewards[:, t] + gamma * running
    running = torch.where(mask[:, t] > 0, step, running)
    returns[:, t] = running * mask[:, t]

# Â = (G − mean) / sqrt(var + 1e-8) over the batch's tokens (PPO Ex. 7)
real = mask > 0
mean, var = returns[real].mean(), returns[real].var()
advantages = (returns - mean) / (var + 1e-8).sqrt()
advantages = advantages.masked_fill(~real, 0.0)
print("returns:   ", returns)
print("advantages:", advantages)
# --8<-- [end:example]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "two responses, right-padded; each score is on its response's last":
        "两条回复，右侧 padding；分数在各自回复的最后一个",
    "token, and every token carries −β·KL (here −0.01), as in PPO Ex. 6":
        "token 上，每个 token 都带 −β·KL（这里是 −0.01），和 PPO 练习 6 一样",
    ", backwards; padding carries the running return": "，倒着算；padding 上沿用当前的回报",
    "batch, response length": "batch 大小，回复长度",
    " over the batch's tokens (PPO Ex. 7)": "，在整个 batch 的 token 上（PPO 练习 7）",
    "returns:   ": "回报：",
    "advantages:": "优势：",
}
# --8<-- [end:zh]
