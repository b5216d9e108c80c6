def importance_ratio(new_logprobs, old_logprobs, mask):
    log_ratio = new_logprobs - old_logprobs
    ratio = log_ratio.exp()
    ratio = ratio * mask + (1 - mask)
    return ratio
