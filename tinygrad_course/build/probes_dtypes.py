"""Probe of chapter 01b's type promotion (`promote_types`, `result_type`): the dtypes the framework's own ops
give for mixed operands (tensors with dimensions, 0-d tensors, Python numbers), their values, and
`tc.promote_types` / `tc.result_type` over every pair of dtypes."""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import factories as F
from ..ops.comparison import where
from ..ops.concat import cat


def _code(d) -> int:
    return _dt.ALL_DTYPES.index(d)


def promotion_probe():
    """Result dtypes of arithmetic, comparisons, where and cat on mixed operands, and the promotion table."""
    ints = F.tensor([1, 2, 3])
    small = F.tensor([1, 2, 3], dtype=_dt.uint8)
    half = F.tensor([0.5, 1.5, 2.5], dtype=_dt.float16)
    flags = F.tensor([True, False, True])
    zero_double, zero_int = F.tensor(1.5, dtype=_dt.float64), F.tensor(-1)
    results = [ints + 1.5, ints * 2, small + zero_int, ints + zero_double, half * 2.5, half + ints, flags + 1,
               flags & True, small - F.tensor([1], dtype=_dt.int8), ints / 2, zero_int + 0.5, ints > 1.5,
               where(flags, ints, 0.5), cat([ints, half])]
    table = [_code(_dt.promote_types(a, b)) for a in _dt.ALL_DTYPES for b in _dt.ALL_DTYPES]
    kinds = [F.tensor([1, 0], dtype=d) for d in _dt.ALL_DTYPES] + [F.tensor(1, dtype=d) for d in _dt.ALL_DTYPES]
    mixed = [_code(_dt.result_type(a, b)) for a in kinds for b in [*kinds, True, 2, 0.5]]
    return {"dtypes": np.array([_code(r.dtype) for r in results], dtype=np.float64),
            "values": np.concatenate([r.numpy().astype(np.float64).reshape(-1) for r in results]),
            "promote_types": np.array(table, dtype=np.float64), "result_type": np.array(mixed, dtype=np.float64)}


PROBES = {"promote_types": promotion_probe, "result_type": promotion_probe}
