def kl_estimators(p_logprobs, q_logprobs):
    log_r = p_logprobs - q_logprobs
    k1 = -log_r
    k2 = 0.5 * log_r ** 2
    k3 = log_r.exp() - 1 - log_r
    return k1, k2, k3
