def value_clipped_loss(new_values, old_values, returns, mask, clip_range_value=0.2):
    v_clipped = old_values + torch.clamp(
        new_values - old_values, -clip_range_value, clip_range_value,
    )
    loss_unclipped = (new_values - returns) ** 2
    loss_clipped = (v_clipped - returns) ** 2
    loss_per_tok = 0.5 * torch.maximum(loss_unclipped, loss_clipped)
    return (loss_per_tok * mask).sum() / mask.sum().clamp(min=1)
