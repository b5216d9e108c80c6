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
beta = 0.1
ref = torch.tensor(-3.0)  # both responses: log π_ref = −3
for lw, ll in [(-2.0, -5.0), (-5.0, -2.0)]:  # y_w preferred, then y_l
    log_p_w, log_p_l = torch.tensor(lw), torch.tensor(ll)
    z = beta * ((log_p_w - ref) - (log_p_l - ref))
    loss = dpo_loss(log_p_w, log_p_l, ref, ref, beta)
    print(f"z = {beta}·[({lw:g} + 3) - ({ll:g} + 3)] = {z.item():+.1f}"
          f"   loss = -log σ(z) = {loss.item():.4f}"
          f"   σ(-z) = {torch.sigmoid(-z).item():.4f}")

# A large margin against y_w: z = 0.1 · (-5000) = -500
zero = torch.tensor(0.0)
far = dpo_loss(torch.tensor(-5000.0), zero, zero, zero)
naive = -torch.log(torch.sigmoid(torch.tensor(-500.0)))
print(f"z = -500: loss = {far.item():.1f}, "
      f"-log(sigmoid(z)) = {naive.item()}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "DPO Loss", "zh": "DPO 损失"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("log_p_w", "log_p_l")


def inputs(draw):
    n = draw.length(1, 7)  # preference pairs
    names = ("log_p_w", "log_p_l", "ref_log_p_w", "ref_log_p_l")  # sequence log-probs
    # short responses, or long ones (sums over ~1,000 tokens): margins of hundreds, where
    # β·margin is far below −88 and sigmoid rounds to 0 in float32 (the page's third test)
    scale, shift = (5.0, -20.0) if draw.coin() else (500.0, -2000.0)
    return {**{k: draw.normal(n, scale, shift=shift) for k in names},
            "beta": draw.choice([0.1, 0.5])}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "DPO loss:": "DPO 损失：",
    "sequence log-probs of the chosen (w) and the": "偏好回复（w）和非偏好回复（l）的",
    "rejected (l) response": "序列对数概率",
    "the same under the frozen reference model": "同样的量，在冻结的参考模型下",
    "β, how strongly to stay near the reference": "β，多用力留在参考模型附近",
    "the loss of each pair, shaped like the inputs": "每一对的损失，形状和输入相同",
    " (difference of the two log-ratios)": "（两个对数比之差）",
    ", computed stably": "，用数值稳定的写法",
    "both responses: log π_ref = −3": "两条回复的 log π_ref 都是 −3",
    "y_w preferred, then y_l": "先 y_w 更好，再 y_l 更好",
    "loss = ": "损失 = ",
    "A large margin against y_w: z = 0.1 · (-5000) = -500":
        "对 y_w 非常不利的差距：z = 0.1 · (-5000) = -500",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("TODO 4, 'Why F.logsigmoid': −log(sigmoid(z)) is inf once sigmoid(z) rounds to 0",
     "loss = -F.logsigmoid(diff)", "loss = -torch.log(torch.sigmoid(diff))"),
    ("'Why F.logsigmoid': it is −softplus(−z); log(1 + exp(−z)) by hand overflows to inf",
     "loss = -F.logsigmoid(diff)", "loss = torch.log(1 + torch.exp(-diff))"),
]
# --8<-- [end:traps]
