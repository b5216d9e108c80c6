# --8<-- [start:exercise]
import torch


def shape_token_rewards(rm_score, logprobs, ref_logprobs, response_mask,
                        kl_coef=0.05):
    """Token rewards: a KL penalty on each response token, the RM score on
    the last one.

    Args:
        rm_score:      [B]    reward-model score of each whole response
        logprobs:      [B, T] policy log-probs of the sampled tokens
        ref_logprobs:  [B, T] reference-model log-probs of the same tokens
        response_mask: [B, T] 1 on response tokens
        kl_coef:       β, the KL penalty coefficient
    Returns:
        token_rewards: [B, T]
    """
    # TODO 1: per-token KL, the K1 estimate log π − log π_ref
    kl = logprobs - ref_logprobs

    # TODO 2: every token pays −β · KL
    token_rewards = -kl_coef * kl

    B, T = response_mask.shape  # batch, sequence length
    # TODO 3: index of each row's last response token, whatever the padding
    last_idx = (response_mask * torch.arange(T)).argmax(dim=-1)

    batch_idx = torch.arange(B)
    # TODO 4: add the RM score on that token only
    token_rewards[batch_idx, last_idx] += rm_score

    # nothing outside the response: masked_fill, not × mask (padding may
    # hold a −inf log-prob, and 0 × NaN is NaN)
    return token_rewards.masked_fill(response_mask == 0, 0.0)
# --8<-- [end:exercise]


# --8<-- [start:test]
torch.manual_seed(4)
B, T = 2, 6
rm_score = torch.tensor([1.5, -0.3])  # row 0 is good, row 1 is poor
logprobs = torch.randn(B, T) * 0.1
ref_logprobs = logprobs - torch.randn(B, T) * 0.05
response_mask = torch.tensor([[0, 0, 1, 1, 1, 1],
                              [0, 1, 1, 1, 1, 0]], dtype=torch.float)
rewards = shape_token_rewards(rm_score, logprobs, ref_logprobs,
                              response_mask, kl_coef=0.05)
print(f"token_rewards =\n{rewards}")
print(f"token_rewards[0, 5] = {rewards[0, 5]:.3f}  (= 1.5 - 0.05·k)")
print(f"token_rewards[1, 4] = {rewards[1, 4]:.3f}  (= -0.3 - 0.05·k)")

# padding may hold −inf (a log-prob of 0, as in Ex. 1): the rewards stay
# the same, 0 there
logprobs[0, 0] = ref_logprobs[0, 0] = -float("inf")
padded = shape_token_rewards(rm_score, logprobs, ref_logprobs,
                             response_mask, kl_coef=0.05)
print(f"−inf at [0, 0]: the same rewards: {torch.equal(padded, rewards)}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Token Reward Shaping", "zh": "token 级奖励塑形"}  # heading of its drill
REFERENCE = "shape_token_rewards"  # rl_ops_numpy's function: Check compares with it


def inputs(draw):  # one random case: the arguments, in parameter order
    B, T = draw.size()  # batch, response length
    logprobs = draw.normal((B, T), 0.5, shift=-1.0)
    return {"rm_score": draw.normal(B), "logprobs": logprobs,
            "ref_logprobs": logprobs + draw.normal((B, T), 0.1),
            "response_mask": draw.mask(B, T), "kl_coef": draw.choice([0.05, 0.1])}
# --8<-- [end:check]
