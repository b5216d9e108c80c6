def policy_surrogate_loss(new_logprobs, old_logprobs, advantages, mask, clip_range=0.2):
    ratio = (new_logprobs - old_logprobs).exp()
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1 - clip_range, 1 + clip_range)
    loss_per_tok = torch.maximum(unclipped, clipped)
    return (loss_per_tok * mask).sum() / mask.sum().clamp(min=1)
