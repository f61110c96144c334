"""Transformer layers: `TransformerEncoderLayer`, `TransformerEncoder`, `TransformerDecoderLayer`,
`TransformerDecoder`, `Transformer`."""
from __future__ import annotations

__all__: list[str] = []
