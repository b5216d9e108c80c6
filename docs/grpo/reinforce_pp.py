# --8<-- [start:example]
import torch

# two responses, right-padded; the score (1.0) is on each response's last token,
# and every token carries −β·KL (here −0.01) as in PPO's reward shaping
mask = torch.tensor([[1.0, 1.0, 1.0, 1.0],
                     [1.0, 1.0, 0.0, 0.0]])
rewards = torch.tensor([[-0.01, -0.01, -0.01, 0.99],
                        [-0.01, 0.49, 0.0, 0.0]])
gamma = 1.0

# G_t = r_t + γ·G_{t+1}, backwards; on padding the running return is carried, not reset
B, T = rewards.shape  # batch, response length
returns = torch.zeros(B, T)
running = torch.zeros(B)
for t in reversed(range(T)):
    running = torch.where(mask[:, t] > 0, rewards[:, t] + gamma * running, running)
    returns[:, t] = running * mask[:, t]

# Â = (G − mean) / sqrt(var + 1e-8) over every response token of the batch (PPO Ex. 7)
real = mask > 0
mean, var = returns[real].mean(), returns[real].var()
advantages = ((returns - mean) / (var + 1e-8).sqrt()).masked_fill(~real, 0.0)
print("returns:   ", returns)
print("advantages:", advantages)
# --8<-- [end:example]
