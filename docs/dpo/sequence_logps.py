# --8<-- [start:example]
import torch

# one prompt of 3 tokens and two answers, of 2 and 4 tokens, right-padded to one length
input_ids = torch.tensor([[5, 1, 2, 7, 3, 0, 0],
                          [5, 1, 2, 4, 4, 6, 3]])
# 1 on the answer's tokens, 0 on the prompt and the padding
completion_mask = torch.tensor([[0, 0, 0, 1, 1, 0, 0],
                                [0, 0, 0, 1, 1, 1, 1]])
B, T = input_ids.shape  # batch, sequence length
V = 8  # vocabulary
# a stand-in for the model's logits: the logits at position t score the token at t + 1
logits = (torch.arange(B * T * V) * 37 % 23).float().reshape(B, T, V) / 8

# the shift: positions 0 … T−2 predict the tokens 1 … T−1
logps = torch.log_softmax(logits[:, :-1], dim=-1)  # [B, T−1, V]
token_logps = torch.gather(logps, 2, input_ids[:, 1:, None]).squeeze(2)  # [B, T−1]
mask = completion_mask[:, 1:]  # the mask shifted with the targets
answer_logps = token_logps.masked_fill(mask == 0, 0.0)  # 0 off the answer
print("log-probs of the answer tokens:")
print(answer_logps)

summed = answer_logps.sum(dim=1)  # DPO, IPO and KTO start from this
lengths = mask.sum(dim=1)
print("summed:  ", summed)
print("lengths: ", lengths)
print("averaged:", summed / lengths)  # SimPO and ORPO use this
# --8<-- [end:example]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "one prompt of 3 tokens and two answers, of 2 and 4 tokens, right-padded to one length":
        "一个 3 个 token 的 prompt 和两个回答（2 个和 4 个 token），右侧 padding 到同一长度",
    "1 on the answer's tokens, 0 on the prompt and the padding":
        "回答的 token 上为 1，prompt 和 padding 上为 0",
    "batch, sequence length": "batch、序列长度",
    "vocabulary": "词表大小",
    "a stand-in for the model's logits: the logits at position t score the token at t + 1":
        "代替模型输出的 logits：位置 t 的 logits 给位置 t + 1 的 token 打分",
    "the shift: positions 0 … T−2 predict the tokens 1 … T−1":
        "错位：位置 0 … T−2 预测 token 1 … T−1",
    "the mask shifted with the targets": "mask 跟着目标一起错位",
    "0 off the answer": "回答之外为 0",
    "log-probs of the answer tokens:": "回答中各 token 的对数概率：",
    "DPO, IPO and KTO start from this": "DPO、IPO 和 KTO 从这里出发",
    "summed:  ": "求和：  ",
    "lengths: ": "长度：  ",
    "averaged:": "平均：  ",
    "SimPO and ORPO use this": "SimPO 和 ORPO 用这个",
}
# --8<-- [end:zh]
