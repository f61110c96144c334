"""More activation functions and distances for `tc.nn.functional`: softplus, elu, selu, celu, relu6,
hardtanh, hardsigmoid, hardswish, mish, logsigmoid, softsign, softmin, glu, normalize, cosine_similarity, ..."""
from __future__ import annotations

__all__: list[str] = []
