"""`MultiheadAttention`."""
from __future__ import annotations

from ...factories import empty
from .. import functional as F
from .. import init
from ..functional.attention import _canonical_masks, _packable, _self_attention
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention: project query/key/value, attend per head, concatenate, project out.

    Parameters as in PyTorch: `in_proj_weight` (3E, E) holding the q, k, v projections (or `q_proj_weight`,
    `k_proj_weight`, `v_proj_weight` when kdim/vdim differ from embed_dim), `in_proj_bias` (3E), `out_proj`,
    and `bias_k`/`bias_v` (1, 1, E) with add_bias_kv.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's initialisation: Xavier-uniform projections, zero biases, Xavier-normal bias_k/bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Returns (attn_output, attn_weights); attn_weights is None unless need_weights."""
        is_batched = query.ndim == 3
        key_padding_mask, attn_mask = _canonical_masks(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask",
                                                       query.dtype)
        if self.batch_first and is_batched:
            if self._qkv_same_embed_dim and _packable(query, key, value, False, self.bias_k, self.bias_v,
                                                      self.add_zero_attn, None, None, need_weights):
                # self-attention in the batch-first layout itself: no transposes of the input or output
                return _self_attention(query, True, self.embed_dim, self.num_heads, self.in_proj_weight,
                                       self.in_proj_bias, self.dropout, self.out_proj.weight, self.out_proj.bias,
                                       self.training, key_padding_mask, attn_mask, is_causal), None
            if query is key and key is value:  # one transpose for the three, as PyTorch
                query = key = value = query.transpose(1, 0)
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights
