# --8<-- [start:exercise]
import torch


def aggregate_loss(loss_mat, mask, mode="token-mean", horizon=None):
    """Reduce a per-token loss to one number, as verl 0.9.1's agg_loss does.

    Args:
        loss_mat: [B, T] per-token loss
        mask:     [B, T] 1 on response tokens
        mode:     "token-mean", "token-sum", "seq-mean-token-mean",
                  "seq-mean-token-sum" or "seq-mean-token-sum-norm"
        horizon:  the constant of "seq-mean-token-sum-norm" (T if None)
    Returns:
        scalar loss; responses with no token are left out of the mean
    """
    T = loss_mat.shape[1]  # response length
    # padding may hold anything, even NaN
    loss_mat = loss_mat.masked_fill(mask == 0, 0.0)
    if mode == "token-mean":
        # TODO 1: Σ m·ℓ / Σ m, every token weighs the same
        return loss_mat.sum() / mask.sum().clamp(min=1)
    if mode == "token-sum":
        # Σ m·ℓ, no division: the loss grows with the number of tokens
        return loss_mat.sum()

    tokens = mask.sum(dim=1)  # [B] n_b, tokens per response
    if mode == "seq-mean-token-mean":
        # TODO 2: each response's own token mean, Σ_t m·ℓ / n_b
        per_seq = loss_mat.sum(dim=1) / tokens.clamp(min=1)
    elif mode == "seq-mean-token-sum":
        per_seq = loss_mat.sum(dim=1)
    elif mode == "seq-mean-token-sum-norm":
        # TODO 3: Σ_t m·ℓ / horizon, one constant for every response
        norm = T if horizon is None else horizon
        per_seq = loss_mat.sum(dim=1) / norm
    else:
        raise ValueError(f"unknown mode {mode!r}")

    # TODO 4: the mean over the responses that have at least one token
    return per_seq.sum() / (tokens > 0).sum().clamp(min=1)
# --8<-- [end:exercise]


# --8<-- [start:test]
# a right answer of 2 tokens (Â = +1), a wrong one of 6 (Â = −1)
mask = torch.tensor([[1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
                     [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
adv = torch.tensor([[1.0], [-1.0]])
loss_mat = -adv * mask  # on-policy (ρ = 1): the loss is −Â per token


def weight(b, mode):
    """How much one token of response b counts: the loss of a 1 there."""
    one = torch.zeros(2, 6)
    one[b, 0] = 1.0
    return aggregate_loss(one, mask, mode).item()


for mode in ["token-mean", "token-sum", "seq-mean-token-mean",
             "seq-mean-token-sum", "seq-mean-token-sum-norm"]:
    loss = aggregate_loss(loss_mat, mask, mode).item()
    print(f"{mode:<24} loss {loss:+.3f}   per token:"
          f" short {weight(0, mode):.3f}, long {weight(1, mode):.3f}")
# --8<-- [end:test]


# --8<-- [start:check]
TITLE = {"en": "Loss Aggregation", "zh": "损失聚合方式"}
# what training differentiates: Check compares the gradient with respect to it too
GRADIENT = ("loss_mat",)


def inputs(draw):
    B, T = draw.size()
    modes = ["token-mean", "token-sum", "seq-mean-token-mean", "seq-mean-token-sum",
             "seq-mean-token-sum-norm"]
    # the mode by case number, as the mask's layout (7 of them): cases 0 to 34 meet every
    # mode with every layout, each mode with empty rows and with an all-padding batch
    mode = modes[draw.case % len(modes)]
    norm = mode == "seq-mean-token-sum-norm" and draw.coin(0.7)
    # passed, not left out with the defaults: a mode other than the default's, a horizon
    draw.keep(*(["mode"] if mode != "token-mean" else []), *(["horizon"] if norm else []))
    return {"loss_mat": draw.normal((B, T)), "mask": draw.mask(B, T), "mode": mode,
            "horizon": draw.choice([12.0, 16.0]) if norm else None}
# --8<-- [end:check]


# --8<-- [start:zh]
# The Chinese pages' text: each English fragment of a comment, docstring or
# printed string, and its translation (site_build/lessons.py: translate).
ZH = {
    "Reduce a per-token loss to one number, as verl 0.9.1's agg_loss does.":
        "把逐 token 的损失归约成一个数，和 verl 0.9.1 的 agg_loss 一样。",
    "per-token loss": "逐 token 的损失",
    "1 on response tokens": "回复 token 上为 1",
    " or ": " 或 ",
    "the constant of \"seq-mean-token-sum-norm\" (T if None)":
        "\"seq-mean-token-sum-norm\" 的常数（None 时取 T）",
    "scalar loss; responses with no token are left out of the mean":
        "标量损失；没有 token 的回复不计入平均",
    "response length": "回复长度",
    "padding may hold anything, even NaN": "padding 里可能是任何值，甚至 NaN",
    ", every token weighs the same": "，每个 token 权重相同",
    ", no division: the loss grows with the number of tokens": "，不做除法：token 越多，损失越大",
    ", tokens per response": "，每条回复的 token 数",
    "each response's own token mean, ": "每条回复各自的 token 平均：",
    ", one constant for every response": "，所有回复用同一个常数",
    "the mean over the responses that have at least one token": "对至少有一个 token 的回复取平均",
    "a right answer of 2 tokens (Â = +1), a wrong one of 6 (Â = −1)":
        "正确回答 2 个 token（Â = +1），错误回答 6 个 token（Â = −1）",
    "on-policy (ρ = 1): the loss is −Â per token": "同策略（ρ = 1）：每个 token 的损失是 −Â",
    "How much one token of response b counts: the loss of a 1 there.":
        "回复 b 的一个 token 占多少分量：在那里放一个 1 得到的损失。",
    " loss ": " 损失 ",
    "   per token:": "   每 token：",
    "f\" short ": "f\"短 ",
    ", long ": "，长 ",
}
# --8<-- [end:zh]


# --8<-- [start:traps]
# The mistakes this page warns about, each a change to the answer that Check must fail
# (tests/test_mutants.py): (what the page says, the answer's text, the mistake's text).
TRAPS = [
    ("the comment 'padding may hold anything, even NaN': × mask, and 0 × NaN is NaN",
     "loss_mat = loss_mat.masked_fill(mask == 0, 0.0)", "loss_mat = loss_mat * mask"),
    ("hint: token-mean without clamp(min=1): an all-padding batch divides 0 by 0",
     "return loss_mat.sum() / mask.sum().clamp(min=1)", "return loss_mat.sum() / mask.sum()"),
    ("hint: seq-mean-token-mean without tokens.clamp(min=1): an empty row gives 0/0",
     "per_seq = loss_mat.sum(dim=1) / tokens.clamp(min=1)",
     "per_seq = loss_mat.sum(dim=1) / tokens"),
    ("hint: seq-mean-token-sum-norm divides by T unless horizon is given: horizon ignored",
     "norm = T if horizon is None else horizon", "norm = T"),
    ("hint, TRL's 'grpo': the mean over every row, empty rows counted as 0",
     "return per_seq.sum() / (tokens > 0).sum().clamp(min=1)", "return per_seq.mean()"),
    ("the answer's clamp(min=1) on the row count: a batch with no token gives 0/0",
     "(tokens > 0).sum().clamp(min=1)", "(tokens > 0).sum()"),
]
# --8<-- [end:traps]
