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
