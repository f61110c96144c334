"""Every collective of tc.distributed checked on each rank (prints 'rank R OK' at the end)."""
import datetime

import numpy as np

import tinygrad_course as tc
import tinygrad_course.distributed as dist
from tinygrad_course.distributed import ReduceOp

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=20))
assert dist.is_initialized() and dist.get_backend() == "mpi"
r, w = dist.get_rank(), dist.get_world_size()
ranks = np.arange(w, dtype=np.float64) + 1  # rank k contributes k + 1


def check(name, got, expected):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), expected, err_msg=f"{name} on rank {r}")


for op, expected in [(ReduceOp.SUM, ranks.sum()), (ReduceOp.AVG, ranks.mean()), (ReduceOp.PRODUCT, ranks.prod()),
                     (ReduceOp.MIN, ranks.min()), (ReduceOp.MAX, ranks.max())]:
    t = tc.full((2, 3), float(r + 1))
    v = t._version[0]
    assert dist.all_reduce(t, op=op) is None
    check(f"all_reduce {op}", t.numpy(), np.full((2, 3), expected))
    assert t._version[0] == v + 1

t = tc.tensor([r + 1, 3], dtype=tc.int64)
dist.all_reduce(t, op=ReduceOp.BOR)
check("BOR", t.numpy(), [np.bitwise_or.reduce((np.arange(w) + 1)), 3])
assert t.dtype == tc.int64

# non-contiguous view: the result lands in the viewed storage
base = tc.arange(6.0).reshape(2, 3) * (r + 1)
view = base.T
dist.all_reduce(view)
check("non-contiguous", base.numpy(), np.arange(6.0).reshape(2, 3) * ranks.sum())

# dtypes MPI lacks travel as float32
h = tc.tensor([1.5, -2.0], dtype=tc.bfloat16) * (r + 1)
dist.all_reduce(h)
assert h.dtype == tc.bfloat16
check("bfloat16", h.float().numpy(), np.array([1.5, -2.0]) * ranks.sum())

b = tc.tensor([float(r)] * 4)
dist.broadcast(b, src=w - 1)
check("broadcast", b.numpy(), [w - 1] * 4)

red = tc.tensor([float(r + 1)])
dist.reduce(red, dst=0)
check("reduce", red.numpy(), [ranks.sum() if r == 0 else r + 1])

out = [tc.zeros(2) for _ in range(w)]
dist.all_gather(out, tc.tensor([r, 10.0 * r]))
for k in range(w):
    check("all_gather", out[k].numpy(), [k, 10.0 * k])

cat = tc.zeros(2 * w, 2)
dist.all_gather_into_tensor(cat, tc.full((2, 2), float(r)))
check("all_gather_into_tensor", cat.numpy(), np.repeat(np.arange(w, dtype=float), 4).reshape(2 * w, 2))

work = dist.all_reduce(tc.ones(1), async_op=True)
assert work.wait() is True and work.is_completed()
a = tc.ones(3)
work = dist.all_reduce(a, async_op=True)
work.wait()
check("async all_reduce", a.numpy(), [w] * 3)

dist.barrier()
try:
    dist.all_gather([tc.zeros(1)] * (w + 1), tc.zeros(1))
    raise AssertionError("all_gather with a wrong-length list must fail")
except ValueError as e:
    assert f"tensor_list has {w + 1} tensors" in str(e)
try:
    dist.init_process_group("mpi")
    raise AssertionError("second init must fail")
except ValueError as e:
    assert "twice" in str(e)

dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {r} of {w} OK", flush=True)
