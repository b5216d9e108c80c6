# --8<-- [start:exercise]
import torch


def importance_ratio(new_logprobs, old_logprobs, mask):
    """Token-level importance ratio ρ = π_θ / π_old.

    Args:
        new_logprobs: [B, T] log-probs of the sampled tokens, current policy
        old_logprobs: [B, T] the same under the frozen policy that sampled
        mask:         [B, T], 1 on response tokens, 0 on padding
    Returns:
        ratio:        [B, T], 1.0 on padding
    """
    # TODO 1: log ρ = log π_θ − log π_old
    log_ratio = new_logprobs - old_logprobs

    # TODO 2: ρ = exp(log ρ)
    ratio = log_ratio.exp()
    # padding gets ρ = 1 (= exp(0)): no update signal, no inf or NaN there
    ratio = ratio * mask + (1 - mask)
    return ratio
# --8<-- [end:exercise]


# --8<-- [start:test]
torch.manual_seed(0)
B, T = 2, 6
old = torch.randn(B, T) * 0.1
new = old + torch.randn(B, T) * 0.05
mask = torch.tensor([[1, 1, 1, 1, 0, 0],
                     [1, 1, 1, 0, 0, 0]], dtype=torch.float)
ratio = importance_ratio(new, old, mask)
print(f"ratio range: [{ratio.min():.4f}, {ratio.max():.4f}]")
print(f"ratio on padding: {ratio[mask == 0].tolist()}")
# --8<-- [end:test]
