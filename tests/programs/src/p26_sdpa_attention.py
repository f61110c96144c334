"""Attention with F.scaled_dot_product_attention (causal), nn.MultiheadAttention and their gradients."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from progutil import randn, seed_params, show

q, k, v = randn(2, 2, 5, 4, seed=1), randn(2, 2, 5, 4, seed=2), randn(2, 2, 5, 4, seed=3)
q.requires_grad_()
out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
out.sum().backward()
print(out.shape, out.grad_fn is not None)
show("sdpa sum", out.sum())
show("q grad", q.grad.abs().sum())
mha = seed_params(nn.MultiheadAttention(8, 2, batch_first=True), scale=0.3)
x = randn(3, 4, 8, seed=4)
attn_out, weights = mha(x, x, x, need_weights=True)
print(attn_out.shape, weights.shape)
show("mha sum", attn_out.sum())
show("weights row sum", weights.sum(-1).mean())
mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
masked, _ = mha(x, x, x, attn_mask=mask)
show("masked sum", masked.sum())
