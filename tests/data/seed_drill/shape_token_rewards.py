def shape_token_rewards(rm_score, logprobs, ref_logprobs, response_mask, kl_coef=0.05):
    kl = logprobs - ref_logprobs
    token_rewards = -kl_coef * kl
    last_idx = response_mask.sum(dim=-1).long() - 1
    batch_idx = torch.arange(rm_score.size(0))
    token_rewards[batch_idx, last_idx] += rm_score
    return token_rewards * response_mask
