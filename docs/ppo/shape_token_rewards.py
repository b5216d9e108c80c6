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
TITLE = {"en": "Token Reward Shaping", "zh": "token 级奖励塑形"}
# what log-probs of padding hold: −inf, NaN
PADDING = {"logprobs": "logprob",
           "ref_logprobs": "logprob"}


def inputs(draw):
    B, T = draw.size()
    logprobs = draw.normal((B, T), 0.5, shift=-1.0)
    return {"rm_score": draw.normal(B), "logprobs": logprobs,
            "ref_logprobs": logprobs + draw.normal((B, T), 0.1),
            "response_mask": draw.mask(B, T), "kl_coef": draw.choice([0.05, 0.1])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Token rewards: a KL penalty on each response token, the RM score on":
        "token 奖励：每个回复 token 上有 KL 惩罚，RM 分数",
    "the last one.": "加在最后一个 token 上。",
    "reward-model score of each whole response": "奖励模型给每条完整回复的分数",
    "policy log-probs of the sampled tokens": "采样 token 在策略下的对数概率",
    "reference-model log-probs of the same tokens": "同一批 token 在参考模型下的对数概率",
    "1 on response tokens": "回复 token 上为 1",
    ", the KL penalty coefficient": "，KL 惩罚系数",
    "per-token KL, the K1 estimate": "逐 token 的 KL，即 K1 估计",
    "every token pays": "每个 token 都付出",
    "batch, sequence length": "batch 大小，序列长度",
    "index of each row's last response token, whatever the padding":
        "每行最后一个回复 token 的下标，不管 padding 在哪一侧",
    "add the RM score on that token only": "只在那个 token 上加 RM 分数",
    "nothing outside the response: masked_fill, not × mask (padding may":
        "回复之外全为 0：用 masked_fill，不要 × mask（padding 里",
    "hold a −inf log-prob, and 0 × NaN is NaN)": "可能是 −inf 的对数概率，而 0 × NaN 还是 NaN）",
    "row 0 is good, row 1 is poor": "第 0 行好，第 1 行差",
    "padding may hold −inf (a log-prob of 0, as in Ex. 1): the rewards stay":
        "padding 里可能是 −inf（概率 0 的对数概率，见练习 1）：奖励",
    "the same, 0 there": "不变，那里仍是 0",
    "−inf at [0, 0]: the same rewards: ": "[0, 0] 处为 −inf，奖励不变：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: K1 is policy minus reference: the reference minus the policy",
     "kl = logprobs - ref_logprobs", "kl = ref_logprobs - logprobs"),
    ("walkthrough 'Why K1 for the KL?': K3 in the reward, as a loss would use it",
     "kl = logprobs - ref_logprobs",
     "kl = torch.expm1(ref_logprobs - logprobs) - (ref_logprobs - logprobs)"),
    ("hint: 'mind the sign': every token paid +β·KL",
     "token_rewards = -kl_coef * kl", "token_rewards = kl_coef * kl"),
    ("about the source: last_idx = response length − 1, right only when the response starts "
     "at position 0",
     "last_idx = (response_mask * torch.arange(T)).argmax(dim=-1)",
     "last_idx = response_mask.sum(dim=-1).long() - 1"),
    ("hint: argmax of the mask itself finds the first response token, not the last",
     "last_idx = (response_mask * torch.arange(T)).argmax(dim=-1)",
     "last_idx = response_mask.argmax(dim=-1)"),
    ("walkthrough: TRL's last PPOTrainer wrote the score one position later, on the first "
     "padding token",
     "last_idx = (response_mask * torch.arange(T)).argmax(dim=-1)",
     "last_idx = ((response_mask * torch.arange(T)).argmax(dim=-1) + 1).clamp(max=T - 1)"),
    ("hint: index with batch_idx and last_idx together: [:, last_idx] adds every row's score "
     "to every row",
     "token_rewards[batch_idx, last_idx] += rm_score",
     "token_rewards[:, last_idx] += rm_score"),
    ("the comment, walkthrough: × mask, not masked_fill: a −inf log-prob on padding gives NaN",
     "return token_rewards.masked_fill(response_mask == 0, 0.0)",
     "return token_rewards * response_mask"),
]
# --8<-- [end:traps]
