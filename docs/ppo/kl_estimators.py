# --8<-- [start:exercise]
import torch


def kl_estimators(p_logprobs, q_logprobs):
    """Three per-token estimates of KL(q ‖ p) from tokens sampled from q.

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
torch.manual_seed(3)
B, T = 2, 7  # under 16 values per randn call: the same draws on every CPU
q = torch.randn(B, T) * 0.5
p = q + torch.randn(B, T) * 0.05  # p is close to q
k1, k2, k3 = kl_estimators(p, q)
print(f"K1 mean = {k1.mean():+.4f}  "
      "(single tokens can be negative: high variance)")
print(f"K2 mean = {k2.mean():+.4f}  (always >= 0, biased)")
print(f"K3 mean = {k3.mean():+.4f}  (always >= 0, unbiased)")
print(f"smallest K1, K3 token: {k1.min():+.4f}, {k3.min():+.6f}")
# --8<-- [end:test]
