"""The gradient reducer behind `DistributedDataParallel`: buckets, one all-reduce per bucket.

Parameters are grouped into buckets in reverse registration order (roughly the order backward produces
their gradients), like PyTorch's `_compute_bucket_assignment_by_size`. A gradient hook marks a parameter
ready and copies its (accumulated) gradient into its bucket's flat buffer; when the last gradient of a
bucket arrives, one non-blocking all-reduce starts for the whole bucket while backward goes on. A callback
queued on the engine runs when backward has finished: it waits for every bucket, divides by the world size
and makes each parameter's `.grad` a contiguous view into its bucket's buffer.

Each bucket buffer carries two check values after the gradients (k and k^2 for bucket number k+1): their
sums equal world*k and world*k^2 only if every rank reduced the same bucket, so ranks whose backward passes
differ get a clear error instead of averaging gradients of different parameters.
"""
from __future__ import annotations

from ... import distributed as dist
from ...autograd.engine import queue_callback
from ...tensor import _wrap

_FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES, used when bucket_cap_mb is default


def compute_bucket_assignment(params, limits):
    """Group `params` (in the given order) into buckets of at most about `limits[i]` bytes each (the last limit
    repeats), separately per dtype and device; returns lists of indices into `params`, like PyTorch's
    `dist._compute_bucket_assignment_by_size`. A bucket closes once it reaches its limit."""
    open_buckets, limit_pos, done = {}, {}, []
    for i, p in enumerate(params):
        key = (p.dtype, str(p.device))
        bucket = open_buckets.setdefault(key, [[], 0])
        bucket[0].append(i)
        bucket[1] += p.numel() * p.element_size()
        pos = limit_pos.get(key, 0)
        if bucket[1] >= limits[min(pos, len(limits) - 1)]:
            done.append(bucket[0])
            del open_buckets[key]
            limit_pos[key] = pos + 1
    done.extend(b[0] for b in open_buckets.values())
    return sorted(done, key=min)


class _Bucket:
    def __init__(self, number, members, params):
        self.number = number  # 1-based, the check value
        self.members = members  # indices into the reducer's parameter list
        self.offsets, total = [], 0
        for i in members:
            self.offsets.append(total)
            total += params[i].numel()
        self.size = total
        self.dtype = params[members[0]]._data.dtype
        self.xp = params[members[0]]._xp
        self.reset()

    def reset(self):
        self.pending = len(self.members)
        self.buffer = None  # allocated fresh each step, so last step's `.grad` views stay intact
        self.work = None

    def flat(self):
        if self.buffer is None:
            self.buffer = self.xp.zeros(self.size + 2, dtype=self.dtype)
        return self.buffer


class Reducer:
    """Averages gradients across ranks bucket by bucket during backward (see the module docstring)."""

    def __init__(self, params, names, bucket_cap_mb, find_unused_parameters):
        self.params, self.names = params, names
        self.world = dist.get_world_size()
        self.find_unused_parameters = find_unused_parameters
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        limits = [_FIRST_BUCKET_BYTES, cap] if bucket_cap_mb is None and _FIRST_BUCKET_BYTES < cap else [cap]
        order = list(range(len(params)))[::-1]
        assignment = compute_bucket_assignment([params[i] for i in order], limits)
        self.buckets = [_Bucket(k + 1, [order[j] for j in b], params) for k, b in enumerate(assignment)]
        self.where = {}  # parameter index -> (bucket, offset)
        for bucket in self.buckets:
            for i, off in zip(bucket.members, bucket.offsets):
                self.where[i] = (bucket, off)
        self._start_step()

    def _start_step(self):
        for bucket in self.buckets:
            bucket.reset()
        self.ready = [False] * len(self.params)
        self.launched = []  # buckets in the order their all-reduce started (the same on every rank)
        self.in_backward = False

    def prepare_for_forward(self):
        """Drop the state of a backward pass that failed half-way (its final callback never ran)."""
        if self.in_backward:
            self._start_step()

    # ---- during backward --------------------------------------------------------------------------
    def hook_for(self, index):
        """The gradient hook of parameter `index` (returns None: the engine stores the local gradient)."""
        param = self.params[index]

        def mark_ready(grad):
            if not self.in_backward:
                self.in_backward = True
                queue_callback(self._finish)
            if self.ready[index]:
                raise RuntimeError(
                    f"Expected to mark a variable ready only once. Parameter {index} ({self.names[index]}) got "
                    "two gradients in one backward pass under DistributedDataParallel. Hint: this happens with "
                    "reentrant backward passes; call backward once per forward."
                )
            self.ready[index] = True
            bucket, off = self.where[index]
            n = param.numel()
            flat = bucket.flat()[off:off + n]
            flat[...] = grad._data.reshape(-1)
            if param.grad is not None:  # gradients accumulated under no_sync() (or an earlier backward)
                flat += param.grad._data.reshape(-1)
                param.grad = None  # the engine stores `grad`; _finish replaces it with the average
            bucket.pending -= 1
            if bucket.pending == 0:
                self._launch(bucket)
            for b in self.launched:  # let MPI progress the running all-reduces
                b.work.is_completed()
            return None

        return mark_ready

    def _launch(self, bucket):
        buf = bucket.flat()
        buf[-2], buf[-1] = bucket.number, bucket.number ** 2
        bucket.work = dist.all_reduce(_wrap(buf), async_op=True)
        self.launched.append(bucket)

    # ---- after backward ---------------------------------------------------------------------------
    def _finish(self):
        try:
            missing = [i for i, r in enumerate(self.ready) if not r]
            if missing and not self.find_unused_parameters:
                raise RuntimeError(
                    "DistributedDataParallel: your module has parameters that were not used in producing loss "
                    f"(rank {dist.get_rank()}). You can enable unused parameter detection by passing the keyword "
                    "argument `find_unused_parameters=True` to `DistributedDataParallel`, and by making sure all "
                    "`forward` function outputs participate in calculating loss. Parameter indices which did not "
                    f"receive grad for rank {dist.get_rank()}: {' '.join(map(str, missing))} "
                    f"({', '.join(self.names[i] for i in missing)})"
                )
            for bucket in self.buckets:  # buckets with unused parameters: their slots stay zero
                if bucket.work is None:
                    self._launch(bucket)
            used_count = None
            if self.find_unused_parameters:
                used = self.buckets[0].xp.asarray(self.ready, dtype="int32")
                used_work = dist.all_reduce(_wrap(used), async_op=True)
            for bucket in self.launched:
                bucket.work.wait()
                buf = bucket.buffer
                if buf[-2] != bucket.number * self.world or buf[-1] != bucket.number ** 2 * self.world:
                    raise RuntimeError(
                        f"DistributedDataParallel: rank {dist.get_rank()} reduced the gradients of bucket "
                        f"{bucket.number - 1} while another rank reduced a different one. Hint: every rank's "
                        "forward must use the same parameters (no data-dependent branches that skip layers on "
                        "some ranks)."
                    )
            if self.find_unused_parameters:
                used_work.wait()
                used_count = used.tolist()
                odd = [i for i, c in enumerate(used_count) if 0 < c < self.world]
                if odd:
                    raise RuntimeError(
                        f"DistributedDataParallel: rank {dist.get_rank()} found parameters that got a gradient on "
                        f"some ranks but not on others: {', '.join(self.names[i] for i in odd)}. Hint: every "
                        "rank's forward must use the same parameters (no data-dependent branches that skip "
                        "layers on some ranks)."
                    )
            for bucket in self.buckets:
                data = bucket.buffer[:-2]
                data /= self.world
                for i, off in zip(bucket.members, bucket.offsets):
                    if used_count is not None and used_count[i] == 0:
                        continue  # no rank used it: `.grad` stays None, as in PyTorch
                    p = self.params[i]
                    p.grad = _wrap(data[off:off + p.numel()].reshape(p._data.shape))
        finally:
            self._start_step()
