# --8<-- [start:exercise]
import torch
import torch.nn.functional as F


def dpo_loss(log_p_w, log_p_l, ref_log_p_w, ref_log_p_l, beta=0.1):
    """DPO loss:
    −log σ(β[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))])

    Args:
        log_p_w, log_p_l: sequence log-probs of the chosen (w) and the
            rejected (l) response
        ref_log_p_w, ref_log_p_l: the same under the frozen reference model
        beta: β, how strongly to stay near the reference
    Returns:
        the loss of each pair, shaped like the inputs
    """
    # TODO 1: log π(y_w) / π_ref(y_w)
    log_ratio_w = log_p_w - ref_log_p_w

    # TODO 2: log π(y_l) / π_ref(y_l)
    log_ratio_l = log_p_l - ref_log_p_l

    # TODO 3: z = β (difference of the two log-ratios)
    diff = beta * (log_ratio_w - log_ratio_l)

    # TODO 4: −log σ(z), computed stably
    loss = -F.logsigmoid(diff)
    return loss
# --8<-- [end:exercise]


# --8<-- [start:test]
ref = torch.tensor(-3.0)
# the policy prefers y_w, then y_l
good = dpo_loss(torch.tensor(-2.0), torch.tensor(-5.0), ref, ref)
bad = dpo_loss(torch.tensor(-5.0), torch.tensor(-2.0), ref, ref)
print(f"Test 1 [policy prefers y_w]: loss = {good.item():.4f}")
print(f"Test 2 [policy prefers y_l]: loss = {bad.item():.4f}")
print(f"loss(right) < loss(wrong): {good.item() < bad.item()}")

# A large margin against y_w: z = 0.1 * (-5000) = -500
zero = torch.tensor(0.0)
far = dpo_loss(torch.tensor(-5000.0), zero, zero, zero)
naive = -torch.log(torch.sigmoid(torch.tensor(-500.0)))
print(f"Test 3 [z = -500]: loss = {far.item():.1f},"
      f" naive -log(sigmoid(z)) = {naive.item()}")
# --8<-- [end:test]
