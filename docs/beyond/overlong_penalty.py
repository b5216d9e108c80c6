# --8<-- [start:exercise]
import torch


def overlong_penalty(lengths, max_length, buffer, factor=1.0):
    """DAPO's soft overlong punishment, added to each response's score.

    Args:
        lengths:    [N] response lengths in tokens (EOS included), ≤ max_length
        max_length: L_max, the most tokens the sampler may generate
        buffer:     L_buf, the last tokens before L_max, where the penalty ramps
        factor:     f, the penalty at L_max
    Returns:
        [N] penalties: 0 up to L_max − L_buf, then down to −f at L_max
    """
    # TODO 1: L_max − L_buf, the length up to which nothing is taken away
    expected = max_length - buffer

    # TODO 2: (L_max − L_buf) − L where it is negative (inside the buffer), else 0
    over = (expected - lengths).clamp(max=0)

    # TODO 3: R = f · ((L_max − L_buf) − L) / L_buf
    return over / buffer * factor
# --8<-- [end:exercise]


# --8<-- [start:test]
# DAPO's setting: at most 20480 tokens, the last 4096 of them the buffer
lengths = torch.tensor([1000.0, 16384.0, 17408.0, 18432.0, 20480.0])
print("penalty:", overlong_penalty(lengths, 20480, 4096))
one = overlong_penalty(torch.tensor([16385.0]), 20480, 4096).item()
print(f"one token into the buffer: {one:.6f}")

# a verifier's score: +1 right, −1 wrong; a truncated answer cannot be checked: −1
score = torch.tensor([1.0, 1.0, -1.0, -1.0])
lengths = torch.tensor([12000.0, 19456.0, 8000.0, 20480.0])  # the last one truncated
print("score + penalty:", score + overlong_penalty(lengths, 20480, 4096))

# a ramp against a cliff (a buffer of one token: −1 only at L_max)
lengths = torch.tensor([18432.0, 20479.0, 20480.0])
print("ramp: ", overlong_penalty(lengths, 20480, 4096))
print("cliff:", overlong_penalty(lengths, 20480, 1))

# a mistake: a truncated response's length counted with its 512-token prompt
print("prompt counted:", overlong_penalty(torch.tensor([20480.0 + 512]), 20480, 4096))
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Overlong Penalty", "zh": "超长惩罚"}


def inputs(draw):
    N = draw.length(1, 12)  # responses
    max_length = draw.choice([8, 16, 100, 4096, 20480])
    buffer = draw.choice([1, max_length // 4, max_length // 2, max_length])
    # lengths in [0, max_length], most of them inside the buffer or just before it
    start = max(0, max_length - 2 * buffer)
    lengths = draw.choice(list(range(start, max_length + 1)), N)
    return {"lengths": lengths, "max_length": max_length, "buffer": buffer,
            "factor": draw.choice([1.0, 0.5, 2.0])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "DAPO's soft overlong punishment, added to each response's score.":
        "DAPO 的软超长惩罚，加在每条回复的分数上。",
    "response lengths in tokens (EOS included), ≤ max_length":
        "回复长度（token 数，含 EOS），≤ max_length",
    ", the most tokens the sampler may generate": "，采样最多可生成的 token 数",
    ", the last tokens before L_max, where the penalty ramps":
        "，L_max 之前的最后一段 token，惩罚在这里线性增加",
    ", the penalty at L_max": "，L_max 处的惩罚",
    "penalties: 0 up to L_max − L_buf, then down to −f at L_max":
        "惩罚：到 L_max − L_buf 为止是 0，之后降到 L_max 处的 −f",
    ", the length up to which nothing is taken away": "，不扣分的最大长度",
    " where it is negative (inside the buffer), else 0": " 为负处取它（在缓冲区内），其余为 0",
    "DAPO's setting: at most 20480 tokens, the last 4096 of them the buffer":
        "DAPO 的设置：最多 20480 个 token，最后 4096 个是缓冲区",
    "penalty:": "惩罚：",
    "one token into the buffer: ": "进入缓冲区一个 token：",
    "a verifier's score: +1 right, −1 wrong; a truncated answer cannot be checked: −1":
        "验证器的分数：对 +1，错 −1；被截断的回答无法验证：−1",
    "the last one truncated": "最后一条被截断",
    "score + penalty:": "分数 + 惩罚：",
    "a ramp against a cliff (a buffer of one token: −1 only at L_max)":
        "斜坡对比悬崖（缓冲区只有一个 token：只在 L_max 处为 −1）",
    "ramp: ": "斜坡：",
    "cliff:": "悬崖：",
    "a mistake: a truncated response's length counted with its 512-token prompt":
        "一个错误：被截断回复的长度连同 512 个 token 的 prompt 一起算",
    "prompt counted:": "算上 prompt：",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("hint: divide by the buffer, not by max_length: the ramp must reach −f at L_max whatever "
     "the buffer",
     "return over / buffer * factor", "return over / max_length * factor"),
    ("hint: .clamp(max=0) keeps only the negative part; clamp(min=0) keeps the positive one",
     "over = (expected - lengths).clamp(max=0)", "over = (expected - lengths).clamp(min=0)"),
    ("TODO 1: L_max − L_buf, the length up to which nothing is taken away: the ramp started "
     "at L_buf",
     "expected = max_length - buffer", "expected = buffer"),
]
# --8<-- [end:traps]
