"""The gradient reducer behind `DistributedDataParallel`: buckets, one all-reduce per bucket.

Bucketing follows PyTorch's `DistributedDataParallel` and C++ `Reducer`:

- Initial buckets come from `compute_bucket_assignment` over the parameters in registration order, with
  the bucket list reversed (gradients arrive roughly in reverse order). Unless `find_unused_parameters=True`
  (without `static_graph`), the first iteration uses one bucket per dtype/device: the order in which
  gradients arrive is not known yet.
- After the first synchronised backward (and unless `find_unused_parameters=True` without `static_graph`),
  the next forward rebuilds the buckets once in the order the gradients became ready, with a small first
  bucket (1 MiB with the default `bucket_cap_mb`). Rank 0's order is broadcast, so every rank agrees.

A gradient hook marks a parameter ready and copies its (accumulated) gradient into its bucket's flat
buffer. Buckets are all-reduced strictly in bucket-index order (bucket i starts only after bucket i-1), so
every rank issues the same collectives in the same order whatever the order of its gradients. With
`find_unused_parameters=True` the forward pass records which parameters its outputs cannot reach; they are
marked ready (gradient zero, or their `.grad` left by `no_sync()` passes) when backward starts. A callback
queued on the engine runs when backward has finished: it marks whatever is still missing (unused parameters),
waits for every bucket, divides by the world size and makes each parameter's `.grad` a contiguous view into
its bucket's buffer. A parameter used on some ranks only gets the average with zeros for the other ranks on
every rank; a parameter no rank used keeps its `.grad` untouched (None after `zero_grad()`), as in PyTorch.

Each bucket buffer carries two check values after the gradients (k and k^2 for bucket number k+1): their
sums equal world*k and world*k^2 only if every rank reduced the same bucket, so ranks whose collectives pair
up wrongly get a clear error instead of averaging gradients of different parameters.
"""
from __future__ import annotations

import sys

from ...autograd.engine import queue_callback
from ...autograd.engine import AccumulateGrad
from ...autograd.grad_mode import is_grad_enabled
from ...distributed.collectives import all_reduce, broadcast
from ...distributed.process_group import get_rank, get_world_size
from ...dtypes import int64
from ...factories import tensor
from ...tensor import Tensor
from ...tensor_base import _wrap

_FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES, used when bucket_cap_mb is default


def compute_bucket_assignment(params, limits, tensor_indices=None):
    """Group `params` (in the given order) into buckets of at most about `limits[i]` bytes each (the last limit
    repeats), separately per dtype and device, like PyTorch's `dist._compute_bucket_assignment_by_size`.
    A bucket closes once it reaches its limit. Without `tensor_indices` the buckets hold positions in
    `params` and are sorted by their smallest one; with it (the gradient-ready order used by the rebuild)
    they hold those indices and stay in the order they were closed (then the unfilled ones)."""
    ids = list(range(len(params))) if tensor_indices is None else list(tensor_indices)
    open_buckets, limit_pos, done = {}, {}, []
    for i, p in zip(ids, params):
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
    return sorted(done, key=min) if tensor_indices is None else done


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


def _find_tensors(obj):
    """Every tensor inside `obj` (nested lists, tuples, dicts), like DDP's `_find_tensors`."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


class Reducer:
    """Averages gradients across ranks bucket by bucket during backward (see the module docstring)."""

    def __init__(self, params, names, bucket_cap_mb, find_unused_parameters, static_graph=False):
        self.params, self.names = params, names
        self.world = get_world_size()
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        first = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap
        self.rebuild_limits = [first, cap]  # the C++ reducer's limits when it rebuilds
        # PyTorch's BucketCapacityConfig.compute_bucket_size_limits for the initial buckets
        if static_graph or not find_unused_parameters:
            limits = [sys.maxsize]
        else:
            limits = [first, cap] if first < cap else [cap]
        self._set_buckets(compute_bucket_assignment(params, limits)[::-1])
        # PyTorch's should_rebuild_buckets(): with find_unused_parameters (dynamic graph) the ready order
        # changes from step to step, so the initial buckets are kept
        self.will_rebuild = static_graph or not find_unused_parameters
        self.ready_order = None  # the first synchronised backward's order, until the rebuild uses it
        self.local_used = [False] * len(params)  # got a gradient since the last reduction (no_sync included)
        self.reachable = set()  # ids of parameters the forward outputs since the last backward can reach
        self.traced = False
        self._start_step()

    def _set_buckets(self, assignment):
        self.buckets = [_Bucket(k + 1, members, self.params) for k, members in enumerate(assignment)]
        self.where = {}  # parameter index -> (bucket, offset)
        for bucket in self.buckets:
            for i, off in zip(bucket.members, bucket.offsets):
                self.where[i] = (bucket, off)

    def _start_step(self):
        for bucket in self.buckets:
            bucket.reset()
        self.ready = [False] * len(self.params)
        self.order = []  # parameter indices in the order they were marked ready
        self.launched = []  # buckets whose all-reduce started, in bucket order (the same on every rank)
        self.in_backward = False

    # ---- around forward ---------------------------------------------------------------------------
    def prepare_for_forward(self):
        """Drop the state of a backward pass that failed half-way (its final callback never ran), and
        rebuild the buckets once after the first synchronised backward (PyTorch does it here too)."""
        if self.in_backward:
            self._start_step()
            self.local_used = [False] * len(self.params)
            self.reachable = set()
            self.traced = False
        if self.ready_order is not None and is_grad_enabled():
            self._rebuild_buckets()

    def prepare_for_backward(self, outputs):
        """With find_unused_parameters: remember which parameters the forward outputs can reach, so the
        others are marked ready as soon as backward starts (PyTorch traverses the autograd graph here)."""
        if not self.find_unused_parameters or self.static_graph:
            return
        self.traced = True
        seen, stack = set(), []
        for t in _find_tensors(outputs):
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad:
                self.reachable.add(id(t))
        while stack:
            node = stack.pop()
            if type(node) is AccumulateGrad:
                self.reachable.add(id(node.variable))
                continue
            for child, _ in node.next_functions:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append(child)

    def _rebuild_buckets(self):
        order = tensor(self.ready_order, dtype=int64)
        broadcast(order, src=0)  # every rank buckets in rank 0's order
        order = order.tolist()
        self.ready_order = None
        self.will_rebuild = False
        self._set_buckets(compute_bucket_assignment([self.params[i] for i in order], self.rebuild_limits, order))
        self._start_step()

    # ---- during backward --------------------------------------------------------------------------
    def mark_used(self, index):
        """A gradient arrived inside no_sync(): remember the parameter as used for the next reduction."""
        self.local_used[index] = True

    def hook_for(self, index):
        """The gradient hook of parameter `index` (returns None: the engine stores the local gradient)."""

        def mark_ready(grad):
            if not self.in_backward:
                self._start_backward()
            if self.ready[index]:
                raise RuntimeError(
                    f"Expected to mark a variable ready only once. Parameter {index} ({self.names[index]}) got "
                    "two gradients in one backward pass under DistributedDataParallel. Hint: this happens with "
                    "reentrant backward passes, or when a parameter is used outside the wrapped module's forward "
                    "with find_unused_parameters=True; call backward once per forward."
                )
            self.local_used[index] = True
            self._mark_ready(index, grad)
            for b in self.launched:  # let MPI progress the running all-reduces
                b.work.is_completed()
            return None

        return mark_ready

    def _start_backward(self):
        self.in_backward = True
        queue_callback(self._finish)
        if self.traced:  # parameters the outputs cannot reach get no gradient: ready right away
            for i, p in enumerate(self.params):
                if id(p) not in self.reachable:
                    self._mark_ready(i, None)

    def _mark_ready(self, index, grad):
        """Copy parameter `index`'s gradient (plus any accumulated `.grad`) into its bucket; launch the
        buckets that are complete, in bucket order. `grad` is None for a parameter that got no gradient."""
        param = self.params[index]
        self.ready[index] = True
        self.order.append(index)
        bucket, off = self.where[index]
        flat = bucket.flat()[off:off + param.numel()]
        if grad is not None:
            flat[...] = grad._data.reshape(-1)
            if param.grad is not None:  # gradients accumulated under no_sync() (or an earlier backward)
                flat += param.grad._data.reshape(-1)
                param.grad = None  # the engine stores `grad`; _finish replaces it with the average
        elif param.grad is not None:  # unused in this pass: what no_sync() passes left (PyTorch does the same)
            flat[...] = param.grad._data.reshape(-1)
        bucket.pending -= 1
        while len(self.launched) < len(self.buckets) and self.buckets[len(self.launched)].pending == 0:
            self._launch(self.buckets[len(self.launched)])

    def _launch(self, bucket):
        buf = bucket.flat()
        buf[-2], buf[-1] = bucket.number, bucket.number ** 2
        bucket.work = all_reduce(_wrap(buf), async_op=True)
        self.launched.append(bucket)

    # ---- after backward ---------------------------------------------------------------------------
    def _finish(self):
        try:
            missing = [i for i, r in enumerate(self.ready) if not r]
            if missing and not self.find_unused_parameters:
                raise RuntimeError(
                    "DistributedDataParallel: your module has parameters that were not used in producing loss "
                    f"(rank {get_rank()}). You can enable unused parameter detection by passing the keyword "
                    "argument `find_unused_parameters=True` to `DistributedDataParallel`, and by making sure all "
                    "`forward` function outputs participate in calculating loss. Parameter indices which did not "
                    f"receive grad for rank {get_rank()}: {' '.join(map(str, missing))} "
                    f"({', '.join(self.names[i] for i in missing)})"
                )
            for i in missing:  # no gradient on this rank: zeros (or the no_sync() `.grad`) in its slot
                self._mark_ready(i, None)
            used_count = None
            if self.find_unused_parameters:
                used = self.buckets[0].xp.asarray(self.local_used, dtype="int32")
                used_work = all_reduce(_wrap(used), async_op=True)
            for bucket in self.launched:
                bucket.work.wait()
                buf = bucket.buffer
                if buf[-2] != bucket.number * self.world or buf[-1] != bucket.number ** 2 * self.world:
                    raise RuntimeError(
                        f"DistributedDataParallel: rank {get_rank()} reduced the gradients of bucket "
                        f"{bucket.number - 1} while another rank reduced a different one. Hint: every rank must "
                        "run the same DDP models' backward passes in the same order, with the same bucket_cap_mb."
                    )
            if self.find_unused_parameters:
                used_work.wait()
                used_count = used.tolist()
            for bucket in self.buckets:
                data = bucket.buffer[:-2]
                data /= self.world
                for i, off in zip(bucket.members, bucket.offsets):
                    if used_count is not None and used_count[i] == 0:
                        continue  # no rank used it: `.grad` stays untouched (None after zero_grad), as in PyTorch
                    p = self.params[i]
                    p.grad = _wrap(data[off:off + p.numel()].reshape(p._data.shape))
            if self.will_rebuild and self.ready_order is None:
                self.ready_order = list(self.order)  # the next forward rebuilds the buckets in this order
        finally:
            self.local_used = [False] * len(self.params)
            self.reachable = set()
            self.traced = False
            self._start_step()
