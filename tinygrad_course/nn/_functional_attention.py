"""Attention for `tc.nn.functional`: scaled_dot_product_attention and multi_head_attention_forward."""
from __future__ import annotations

__all__: list[str] = []
