"""Chapter 06 (GPU with CuPy): checks for moving batches to a device, honest timing, a fused element-wise
kernel (NumPy reference everywhere, the CuPy kernel where a GPU exists), the loss scaler's update rule, what
`memory_allocated`/`memory_reserved`/`empty_cache` report (against a caching allocator in miniature, so it is
gradable without a GPU) and one loss-scaled step by hand (against `tc.amp.GradScaler`).

Everything here runs on a CPU-only machine; the GPU half of 06.3 runs only where `tc.cuda.is_available()`,
and the check says so when it skips it.
"""
import weakref

import numpy as np

import tinygrad_course as tc

from ...ops import cuda_source
from .. import mistakes
from ..registry import exercise

_KERNEL_IN, _KERNEL_OUT = "T grad, T lr, T momentum", "T param, T buf"


# ---- 06.1 -------------------------------------------------------------------------------------------------
@exercise("06.1", title="move a whole batch to a device", points=1)
def to_device_check(t, to_device):
    x, y, mask = tc.randn(4, 3), tc.tensor([0, 1, 1, 0]), tc.tensor([True, False, True, True])
    got = to_device(x, "cpu")
    t.true(isinstance(got, tc.Tensor) and got.device == tc.device("cpu"), "to_device(tensor, 'cpu') to give a CPU tensor")
    pair = to_device((x, y), "cpu")
    t.true(isinstance(pair, tuple) and len(pair) == 2, "a (inputs, labels) tuple to stay a tuple of two",
           hint="rebuild the container with the moved items: tuple(...) for tuples, [...] for lists")
    t.true(pair[1].dtype is tc.int64, "the labels to keep their dtype (int64)", hint="move with .to(device) only")
    nested = to_device({"image": x, "extra": [y, mask], "id": 7, "name": "sample"}, "cpu")
    t.true(isinstance(nested, dict) and set(nested) == {"image", "extra", "id", "name"},
           "a dict batch to stay a dict with the same keys")
    t.true(isinstance(nested["extra"], list) and nested["extra"][1].dtype is tc.bool,
           "a list inside the dict to be moved item by item", hint="call to_device recursively on each value")
    t.equal((nested["id"], nested["name"]), (7, "sample"), "non-tensor values (ints, strings)",
            hint="return anything that is not a tensor, tuple, list or dict unchanged")
    # with a device that records the calls: every tensor must go through .to(device)
    moved = []

    class Recorder(tc.Tensor):
        def to(self, *args, **kwargs):
            moved.append(args[0] if args else kwargs.get("device"))
            return self

    r = Recorder([1.0, 2.0])
    to_device({"a": [r, (r,)]}, "cuda")
    t.equal(moved, ["cuda", "cuda"], "the devices passed to .to() for two tensors nested in a dict",
            hint="call tensor.to(device) for every tensor you find")


# ---- 06.2 -------------------------------------------------------------------------------------------------
@exercise("06.2", title="time a GPU operation honestly", points=2)
def time_op_check(t, time_op):
    events = []
    clock = {"now": 0.0}

    def fake_sync():
        events.append("sync")

    def fake_fn():
        events.append("fn")
        clock["now"] += 0.25  # each call "takes" 0.25 s of fake time

    import time as _time

    real = _time.perf_counter
    _time.perf_counter = lambda: (events.append("clock"), clock["now"])[1]
    try:
        result = time_op(fake_fn, repeats=4, synchronize=fake_sync)
    finally:
        _time.perf_counter = real
    calls = [e for e in events if e == "fn"]
    t.equal(len(calls), 5, "how many times fn was called (1 warm-up + repeats=4)",
            hint="call fn once before timing (the first call pays for compilation and memory allocation)")
    first_clock = events.index("clock") if "clock" in events else -1
    t.true(first_clock > 0 and "sync" in events[:first_clock] and events[first_clock - 1] == "sync",
           "synchronize() to be called right before the clock starts",
           hint="queued GPU work from before must finish first, or it is counted in your time")
    last_clock = len(events) - 1 - events[::-1].index("clock") if "clock" in events else -1
    t.true(last_clock > 0 and events[last_clock - 1] == "sync" and events[last_clock - 2] == "fn",
           "synchronize() between the last call of fn and reading the clock",
           hint="GPU calls return before the work is done: without synchronize you time the launch, not the work")
    t.close(result, 0.25, "time_op's result: seconds per call (fake clock: 0.25 s per call)",
            given="time_op(fn, repeats=4, synchronize) where each call of fn takes 0.25 s on a fake clock",
            mistakes=[mistakes.custom(lambda g, e: np.isclose(g, 1.0),
                                      "you returned the total time of the 4 timed calls, not the time of one call",
                                      "divide the elapsed time by repeats"),
                      mistakes.custom(lambda g, e: np.isclose(g, 1.25), "the warm-up call was inside the timed region",
                                      "make the warm-up call before the first synchronize() and clock reading")])
    # and for real, on the CPU
    x = tc.randn(200, 200)
    seconds = time_op(lambda: x @ x, repeats=3, synchronize=tc.cuda.synchronize)
    t.true(isinstance(seconds, float) and 0 < seconds < 5, "a real timing of x @ x to be a small positive float")


# ---- 06.3 -------------------------------------------------------------------------------------------------
def _momentum_reference(p, g, buf, lr, momentum):
    buf[...] = momentum * buf + g
    p[...] = p - lr * buf


@exercise("06.3", title="a fused SGD-momentum update", points=2)
def fused_momentum_check(t, momentum_update, momentum_kernel_body):
    rng = np.random.default_rng(0)
    p0, grads = rng.standard_normal(50).astype(np.float32), rng.standard_normal((3, 50)).astype(np.float32)
    p, buf = p0.copy(), np.zeros(50, np.float32)
    ref_p, ref_buf = p0.copy(), np.zeros(50, np.float32)
    returned = momentum_update(p, grads[0], buf, 0.1, 0.9)
    _momentum_reference(ref_p, grads[0], ref_buf, 0.1, 0.9)
    t.true(returned is None or returned is p, "momentum_update to work in place (update p and buf, return nothing)",
           hint="write into the arrays: buf[...] = ..., p -= ...")
    t.close(buf, ref_buf, "buf after one step", given={"p": p0, "g": grads[0], "buf": "zeros", "lr": 0.1,
                                                       "momentum": 0.9}, mistakes=[mistakes.custom(
        lambda g, e: np.allclose(g, 0), "buf did not change: the array the caller passed still holds zeros",
        "assign into it with buf[...] = ... (or buf *= ...; buf += ...): buf = ... only rebinds the name")])
    t.close(p, ref_p, "p after one step", given={"p": p0, "g": grads[0], "buf": "zeros", "lr": 0.1, "momentum": 0.9},
            mistakes=[mistakes.custom(lambda got, e: np.allclose(got, p0 + 0.1 * ref_buf, rtol=1e-5),
                                      "p moved with the gradient instead of against it: the sign of the step is "
                                      "flipped",
                                      "step against the gradient: p -= lr * buf"),
                      mistakes.custom(lambda got, e: np.allclose(got, p0 - 0.1 * grads[0], rtol=1e-5) and
                                      not np.allclose(ref_buf, grads[0]),
                                      "p moved by the plain gradient, not by the momentum buffer",
                                      "update buf first, then step with it: p -= lr * buf")])
    for g in grads[1:]:
        momentum_update(p, g, buf, 0.1, 0.9)
    # the same three steps with the framework's optimizer
    param = tc.tensor(p0.copy(), requires_grad=True)
    opt = tc.optim.SGD([param], lr=0.1, momentum=0.9)
    for g in grads:
        param.grad = tc.tensor(g)
        opt.step()
    t.close(p, param.detach().numpy(), "p after three steps vs tc.optim.SGD(lr=0.1, momentum=0.9)", rtol=1e-5)
    body = momentum_kernel_body()
    t.true(isinstance(body, str) and "buf" in body and "param" in body,
           "momentum_kernel_body() to return a string of C code that updates buf and param")
    if cuda_source.nvrtc_available():  # compile errors are found here, on any machine, with NVIDIA's compiler
        try:
            cuda_source.compile_cuda(cuda_source.elementwise_source(_KERNEL_IN, _KERNEL_OUT, body, "learner_momentum"))
        except cuda_source.CudaCompileError as e:
            t.fail("momentum_kernel_body()", f"the kernel body does not compile:\n{e}")
    if not tc.cuda.is_available():
        compiled = "compiles (checked with NVRTC)" if cuda_source.nvrtc_available() else "is compiled on a GPU machine"
        print(f"06.3: GPU part skipped (no CUDA GPU here): your NumPy version was checked and your kernel body "
              f"{compiled}; running the kernel needs a GPU.")
        return
    cp = tc._backend.cupy_module()
    kernel = cp.ElementwiseKernel(_KERNEL_IN, _KERNEL_OUT, body, "learner_momentum")
    gp, gbuf = cp.asarray(p0), cp.zeros(50, cp.float32)
    for g in grads:
        kernel(cp.asarray(g), np.float32(0.1), np.float32(0.9), gp, gbuf)
    t.close(cp.asnumpy(gp), p, "p after three steps of your CuPy kernel vs your NumPy version", rtol=1e-5)


# ---- 06.4 -------------------------------------------------------------------------------------------------
@exercise("06.4", title="the loss scaler's update rule", points=2)
def update_scale_check(t, update_scale):
    overflow = tuple(update_scale(1024.0, 5, True))
    t.equal(overflow, (512.0, 0), "update_scale(1024.0, tracker=5, found_inf=True)",
            hint="an overflow halves the scale (backoff_factor=0.5) and resets the tracker to 0",
            why=("after an overflow the count of clean steps was kept" if overflow[:1] == (512.0,) else
                 "an overflow must lower the scale" if overflow[:1] != (512.0,) and len(overflow) == 2 else None))
    t.equal(tuple(update_scale(1024.0, 5, False)), (1024.0, 6), "update_scale(1024.0, tracker=5, found_inf=False)",
            hint="a clean step only counts: tracker + 1")
    got = tuple(update_scale(1024.0, 1999, False))
    t.equal(got, (2048.0, 0), "update_scale(1024.0, tracker=1999, found_inf=False) (growth_interval=2000)",
            why=("the scale grew but the count of clean steps was not restarted" if got == (2048.0, 2000) else
                 "the 2000th clean step in a row did not grow the scale" if got[:1] == (1024.0,) else None),
            hint="the 2000th clean step in a row doubles the scale and resets the tracker" if got != (2048.0, 2000)
            else "after growing, the tracker starts again at 0")
    custom = tuple(update_scale(8.0, 2, False, growth_factor=4.0, backoff_factor=0.25, growth_interval=3))
    t.equal(custom, (32.0, 0),
            "update_scale(8.0, 2, False, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)",
            why="the default factors were used instead of the ones passed in" if custom in ((16.0, 0), (8.0, 3)) else None,
            hint="use the factors and interval you are given, not the defaults")
    # the learner's rule against tc.amp.GradScaler over a run with overflows
    scaler = tc.amp.GradScaler("cpu", init_scale=16.0, growth_interval=3)
    p = tc.ones(1, requires_grad=True)
    opt = tc.optim.SGD([p], lr=0.0)
    scale, tracker = 16.0, 0
    for i, poison in enumerate([1, 1, 1, 1, float("inf"), 1, 1, 1, float("nan"), 1]):
        opt.zero_grad()
        scaler.scale((p * poison).sum()).backward()
        scaler.step(opt)
        scaler.update()
        scale, tracker = update_scale(scale, tracker, not np.isfinite(poison), growth_interval=3)
        t.equal((scale, tracker), (scaler.get_scale(), scaler.state_dict()["_growth_tracker"]),
                f"(scale, tracker) after step {i + 1} of a run with overflows, vs tc.amp.GradScaler")


# ---- 06.5 -------------------------------------------------------------------------------------------------
class _Allocator:
    """A caching GPU allocator in miniature, with the three `tc.cuda` queries: a block counts as allocated
    while a Python object holds it; freed memory stays reserved (cached) until `empty_cache()`."""

    def __init__(self):
        self.allocated = self.reserved = 0

    def block(self, nbytes):
        """An object holding `nbytes` of device memory until it is garbage collected."""
        holder = _Block()
        self.allocated += nbytes
        self.reserved = max(self.reserved, self.allocated)
        weakref.finalize(holder, self._free, nbytes)
        return holder

    def _free(self, nbytes):
        self.allocated -= nbytes

    def memory_allocated(self, device=None):
        return self.allocated

    def memory_reserved(self, device=None):
        return self.reserved

    def empty_cache(self):
        self.reserved = self.allocated


class _Block:
    pass


@exercise("06.5", title="what memory_allocated and empty_cache report", points=2)
def memory_report_check(t, memory_report):
    cuda = _Allocator()
    weights = cuda.block(500)  # already on the device before the call (the model's weights)

    def step():
        temporary = cuda.block(3000)  # an activation freed when the step returns
        del temporary
        return cuda.block(1000)       # the output the caller keeps

    call = "memory_report(step, cuda) where 500 bytes are allocated before; step() allocates a 3000-byte " \
           "temporary, frees it and returns a 1000-byte result"
    got = memory_report(step, cuda)
    t.true(isinstance(got, tuple) and len(got) == 2, f"{call} to return a pair (kept, cached) (got {got!r})")
    kept, cached = got
    hints = {1500: "that is memory_allocated() after the call; kept is the difference from before the call",
             3500: "that is memory_reserved(): reserved includes the cache, allocated only live tensors",
             0: "measure while the result is still referenced: after del it is freed"}
    t.equal(kept, 1000, what=f"kept for {call}", hint=hints.get(kept))
    hints = {0: "read the cache before cuda.empty_cache(): emptying it is what returns the memory",
             2000: "delete the result first (del result): while it lives its block is allocated, not cached",
             3500: "cached memory is reserved minus allocated"}
    t.equal(cached, 3000, what=f"cached (what the allocator keeps for reuse once the result is deleted) for {call}",
            hint=hints.get(cached))
    t.equal(cuda.memory_reserved(), 500, what=f"memory_reserved() after {call}",
            hint="finish with cuda.empty_cache(), which gives the cached blocks back to the driver")
    t.equal(cuda.memory_allocated(), 500, what=f"memory_allocated() after {call}",
            hint="memory_report must not keep the result alive")
    del weights
    # the same report on the framework's own tc.cuda: 0 bytes without a GPU, the tensor's bytes on one
    device = "cuda" if tc.cuda.is_available() else "cpu"
    before = tc.cuda.memory_allocated()
    probe = tc.zeros(256, 256, device=device)
    expected = tc.cuda.memory_allocated() - before
    del probe
    real = memory_report(lambda: tc.zeros(256, 256, device=device), tc.cuda)
    t.equal(real[0], expected, what=f"kept for a 256x256 float32 tensor on {device}, measured with tc.cuda")


# ---- 06.6 -------------------------------------------------------------------------------------------------
def _scaled_problem():
    p = tc.tensor([1.0, -2.0, 0.5], requires_grad=True)
    w = [tc.tensor([0.5, 1.0, -1.5]), tc.tensor([2.0, 0.0, 1.0]), tc.tensor([float("inf"), 1.0, 1.0]),
         tc.tensor([-1.0, 0.25, 0.5])]
    return p, w


def _as_bool(value):
    """A learner's flag as a Python bool (from a bool, NumPy bool or one-element tensor); anything else as is."""
    if hasattr(value, "item"):
        value = value.item()
    return bool(value) if isinstance(value, (bool, np.bool_)) else value


@exercise("06.6", title="one loss-scaled step, by hand", points=2)
def scaled_step_check(t, scaled_step):
    p, ws = _scaled_problem()
    opt = tc.optim.SGD([p], lr=0.1)
    start = p.detach().numpy().copy()
    call = "scaled_step([p], loss=(p * w).sum() with p=[1.0, -2.0, 0.5], w=[0.5, 1.0, -1.5], SGD(lr=0.1), scale=1024.0)"
    found = scaled_step([p], (p * ws[0]).sum(), opt, 1024.0)
    t.equal(_as_bool(found), False,
            what=f"found_inf returned by {call}", hint="return True only if some gradient is inf or nan")
    t.close(p.grad, ws[0].numpy(), what=f"p.grad after {call}", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, e * 1024.0), "the gradient is still scaled: p.grad is 1024 "
                        "times the loss's gradient", "divide each p.grad by the scale before the step (that is what "
                        "unscale_ does)"),
        mistakes.custom(lambda g, e: np.allclose(g, e * 1024.0 ** 2), "p.grad is 1024**2 times the loss's gradient: "
                        "the scale was applied twice", "multiply the loss by the scale, then divide the gradients by "
                        "it (not multiply)")])
    t.close(p.detach(), start - 0.1 * ws[0].numpy(), what=f"p after {call}", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, start), "p did not change although every gradient was finite",
                        "call optimizer.step() when the gradients are finite")])
    # a step whose gradient overflows must be skipped, and the next clean one taken
    for i, w in enumerate(ws[1:], 2):
        opt.zero_grad()
        before = p.detach().numpy().copy()
        call = f"scaled_step([p], (p * w).sum(), opt, 1024.0) with w={w.tolist()} (step {i})"
        found = _as_bool(scaled_step([p], (p * w).sum(), opt, 1024.0))
        overflow = not np.isfinite(w.numpy()).all()
        t.equal(found, overflow, what=f"found_inf returned by {call}",
                hint="check every gradient with tc.isfinite(grad).all() after unscaling" if overflow else None)
        expected = before if overflow else before - 0.1 * w.numpy()
        t.close(p.detach(), expected, what=f"p after {call}", mistakes=[
            mistakes.custom(lambda g, e: not np.isfinite(g).all(), "a gradient was inf, and the step was taken "
                            "anyway", "skip optimizer.step() when found_inf")])
    # the same four steps with tc.amp.GradScaler end in the same place (scales are powers of 2: exact)
    q, _ = _scaled_problem()
    opt_q = tc.optim.SGD([q], lr=0.1)
    scaler = tc.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1000)
    for w in ws:
        opt_q.zero_grad()
        scaler.scale((q * w).sum()).backward()
        scaler.step(opt_q)
        scaler.update()
    t.close(p.detach(), q.detach(), what="p after your four steps vs tc.amp.GradScaler's four steps")
