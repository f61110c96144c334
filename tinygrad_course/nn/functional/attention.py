"""Attention in `tc.nn.functional`: scaled_dot_product_attention and multi_head_attention_forward.

Both are compositions of framework ops (matmul, softmax, masked_fill, dropout, linear), so gradients, double
backward and the GPU need nothing extra; the common case of scaled_dot_product_attention (no dropout,
float32/float64) runs as one fused op (`ops/attention.py`).
"""
from __future__ import annotations

import math
import warnings

from ...autograd.autocast_state import autocast_state
from ...autograd.grad_mode import _state
from ...dtypes import bool_, float32, float64
from ...factories import ones, zeros
from ...ops.attention import ScaledDotProductAttention, one_query_unrecorded
from ...ops.concat import cat
from ...tensor_base import _wrap
from .dropout import dropout
from .linear import linear
from .padding import pad

# How PyTorch's C++ messages name dtypes.
_CPP_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _cpp_name(dtype):
    name = str(dtype).split(".")[-1]
    return _CPP_NAMES.get(name, name)


def _check_sdpa_inputs(query, key, value, attn_mask):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cpp_name(query.dtype)} key.dtype: {_cpp_name(key.dtype)} and value.dtype: "
            f"{_cpp_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype is not bool_ and not attn_mask.dtype.is_floating_point \
            and attn_mask.dtype is not query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
            f"{_cpp_name(attn_mask.dtype)} and  query.dtype: {_cpp_name(query.dtype)} instead.")


def _repeat_heads(t, heads):
    """(..., Hk, S, E) -> (..., heads, S, E), each key/value head repeated for its group (repeat_interleave)."""
    hk = t.shape[-3]
    if heads % hk:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    if heads == hk:
        return t
    lead = tuple(t.shape[:-3])
    expanded = t.unsqueeze(-3).expand(*lead, hk, heads // hk, *t.shape[-2:])
    return expanded.reshape(*lead, heads, *t.shape[-2:])


def _fusable(query, key, value, attn_mask, scale):
    """Whether the fused op gives exactly what the composition would: float32/float64 inputs on one device
    with the same batch shape, a Python-number scale, no autocast, and a mask (if any) that is bool or
    of the query's dtype, needs no gradient and broadcasts to the scores' shape."""
    dt, dev = query.dtype, query._device
    if dt not in (float32, float64) or autocast_state.active or type(scale) not in (float, int):
        return False
    if (key._device is not dev and key._device != dev) or (value._device is not dev and value._device != dev):
        return False
    qs, ks, vs = query._data.shape, key._data.shape, value._data.shape
    batch = qs[:-2]
    if ks[:-2] != batch or vs[:-2] != batch:
        return False
    if ks[-1] != qs[-1] or vs[-2] != ks[-2]:
        return False  # the composition raises the matmul's error
    if attn_mask is None:
        return True
    if attn_mask._device != dev or attn_mask.requires_grad or attn_mask.dtype not in (bool_, dt):
        return False
    scores = batch + (qs[-2], ks[-2])
    mask = attn_mask._data.shape
    if len(mask) > len(scores):
        return False
    return all(m in (1, s) for m, s in zip(mask[::-1], scores[::-1]))


def _causal_keep(length, source, device):
    """(L, S) bool mask keeping key j for query i when j <= i (aligned at the top-left, like PyTorch)."""
    return ones(length, source, dtype=bool_, device=device).tril()


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims; bool masks keep where True, float masks add.

    Rows whose keys are all masked give zeros (as PyTorch's CPU kernels do), not NaN.
    """
    _check_sdpa_inputs(query, key, value, attn_mask)
    length, source = query._data.shape[-2], key._data.shape[-2]
    scale = 1.0 / math.sqrt(query._data.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        attn_mask = _causal_keep(length, source, query.device)
    if dropout_p == 0.0 and _fusable(query, key, value, attn_mask, scale):
        if attn_mask is None and length == 1 and not (_state.enabled and (
                query._requires_grad or key._requires_grad or value._requires_grad)):
            out = one_query_unrecorded(query, key, value, scale)
            if out is not None:  # one query, no graph recorded: computed on the arrays, no op to run
                return _wrap(out)
        return ScaledDotProductAttention.apply(query, key, value, attn_mask, scale)
    scores = (query @ key.transpose(-2, -1)) * scale
    if attn_mask is None:
        weights = scores.softmax(-1)
    else:
        if attn_mask.dtype is bool_:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
        # fully masked rows: softmax over zeros instead of all -inf (no NaN), then zero those rows' weights
        dead = _wrap((scores._data == -scores._xp.inf).all(axis=-1, keepdims=True))
        weights = scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) query, False for unbatched (2-D); AssertionError like PyTorch otherwise."""
    nd = query.ndim
    if nd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {nd}-D query "
                             "tensor")
    where = f"For {'batched' if nd == 3 else 'unbatched'} ({nd}-D) `query`"
    if key.ndim != nd or value.ndim != nd:
        raise AssertionError(f"{where}, expected `key` and `value` to be {nd}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != nd - 1:
        raise AssertionError(f"{where}, expected `key_padding_mask` to be `None` or {nd - 1}-D but "
                             f"found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise AssertionError(f"{where}, expected `attn_mask` to be `None`, 2-D or 3-D but "
                             f"found {attn_mask.ndim}-D tensor instead")
    if nd == 2 and attn_mask is not None and attn_mask.ndim == 3:
        expected = (num_heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return nd == 3


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True, stacklevel=3):
    """A bool mask (True = masked out) becomes a float mask of 0 / -inf in target_type; float masks pass."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=stacklevel)
    if not is_float:
        mask = zeros(tuple(mask.shape), dtype=target_type, device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _canonical_masks(key_padding_mask, key_padding_name, attn_mask, attn_name, target_type):
    """(key_padding_mask, attn_mask) as float masks, warning like PyTorch when their dtypes differ."""
    key_padding_mask = _canonical_mask(key_padding_mask, key_padding_name, None if attn_mask is None else
                                       attn_mask.dtype, attn_name, target_type, stacklevel=4)
    return key_padding_mask, _canonical_mask(attn_mask, attn_name, None, "", target_type, check_other=False)


def _pad_last(t):
    return pad(t, (0, 1))


def _in_projection(query, key, value, weights, biases):
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _mha_prologue(dtype, embed_dim, embed_dim_to_check, num_heads, key_padding_mask, attn_mask, need_weights,
                  is_causal):
    """Canonical (float) masks, the causal hint resolved and the embedding checked: (key_padding_mask,
    attn_mask, is_causal, head_dim)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype, "attn_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the mask is only a hint: attention below applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    return key_padding_mask, attn_mask, is_causal, head_dim


def _attn_mask_3d(attn_mask, bsz, num_heads, tgt_len, src_len):
    """A 2-D (L, S) or 3-D (N * H, L, S) attention mask checked and made 3-D."""
    if attn_mask is None:
        return None
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.ndim == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """The (N, S) key padding mask checked and added to the 3-D attention mask (per head: (N * H, 1, S))."""
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                        .reshape(bsz * num_heads, 1, src_len))
    return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask


def _attn_mask_4d(attn_mask, bsz, num_heads, src_len):
    """The 3-D mask as scaled_dot_product_attention takes it: (1, 1, L, S) or (N, H, L, S)."""
    if attn_mask is None:
        return None
    if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
        return attn_mask.unsqueeze(0)
    return attn_mask.reshape(bsz, num_heads, -1, src_len)


def _packable(query, key, value, use_separate_proj_weight, bias_k, bias_v, add_zero_attn, static_k, static_v,
              need_weights):
    """Whether batched self-attention can take `_self_attention`'s packed path (PyTorch's
    `_in_projection_packed`): one tensor as query, key and value, one in-projection weight, and none of the
    extras (learned bias_k/bias_v, zero attention, static keys, returned weights)."""
    return (query is key and key is value and query.ndim == 3 and not use_separate_proj_weight
            and bias_k is None and bias_v is None and not add_zero_attn and static_k is None
            and static_v is None and not need_weights)


def _self_attention(x, batch_first, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, dropout_p,
                    out_proj_weight, out_proj_bias, training, key_padding_mask, attn_mask, is_causal):
    """Multi-head self-attention of x, (L, N, E) or (N, L, E) with batch_first, returning the same layout.

    One product projects q, k and v together; one view, one permute and one unbind give each its heads
    as (N, H, L, head_dim) views (no copies, no transposes of the input), as PyTorch's packed projection.
    """
    _mha_shape_check(x, x, x, key_padding_mask, attn_mask, num_heads)
    bsz, length, embed_dim = x.shape if batch_first else (x.shape[1], x.shape[0], x.shape[2])
    key_padding_mask, attn_mask, is_causal, head_dim = _mha_prologue(
        x.dtype, embed_dim, embed_dim_to_check, num_heads, key_padding_mask, attn_mask, False, is_causal)
    attn_mask = _attn_mask_3d(attn_mask, bsz, num_heads, length, length)
    attn_mask = _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, length)
    attn_mask = _attn_mask_4d(attn_mask, bsz, num_heads, length)
    lead = tuple(x.shape[:2])
    proj = linear(x, in_proj_weight, in_proj_bias).view(*lead, 3, num_heads, head_dim)
    q, k, v = proj.permute(2, 0, 3, 1, 4).unbind(0) if batch_first else proj.permute(2, 1, 3, 0, 4).unbind(0)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p if training else 0.0, is_causal)
    out = (out.transpose(1, 2) if batch_first else out.permute(2, 0, 1, 3)).reshape(bsz * length, embed_dim)
    return linear(out, out_proj_weight, out_proj_bias).view(*lead, embed_dim)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention on (L, N, E) query and (S, N, E_k/E_v) key/value, like `F.multi_head_attention_forward`;
    returns (output (L, N, E), attention weights (N, L, S) averaged over heads, or per head, or None)."""
    if _packable(query, key, value, use_separate_proj_weight, bias_k, bias_v, add_zero_attn, static_k, static_v,
                 need_weights):
        return _self_attention(query, False, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                               dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask, attn_mask,
                               is_causal), None
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask, attn_mask, is_causal, head_dim = _mha_prologue(
        query.dtype, embed_dim, embed_dim_to_check, num_heads, key_padding_mask, attn_mask, need_weights, is_causal)
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        weights = in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    q, k, v = _in_projection(query, key, value, weights, biases)

    attn_mask = _attn_mask_3d(attn_mask, bsz, num_heads, tgt_len, src_len)

    if bias_k is not None and bias_v is not None:  # one learned extra key/value position
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")

    # heads become part of the batch: (N * H, len, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        zero_kv = zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = cat([k, zero_kv], 1), cat([v, zero_kv], 1)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    src_len = k.shape[1]
    attn_mask = _merge_key_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        attn_weights = scores.softmax(-1)
        if dropout_p > 0.0:
            attn_weights = dropout(attn_weights, dropout_p)
        out = (attn_weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        attn_weights = attn_weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_weights = attn_weights.mean(1)
        if not is_batched:
            out, attn_weights = out.squeeze(1), attn_weights.squeeze(0)
        return out, attn_weights

    attn_mask = _attn_mask_4d(attn_mask, bsz, num_heads, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
