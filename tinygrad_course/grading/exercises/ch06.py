"""Chapter 06 (GPU with CuPy): checks for moving batches to a device, honest timing, a fused element-wise
kernel (NumPy reference everywhere, the CuPy kernel where a GPU exists) and the loss scaler's update rule.

Everything here runs on a CPU-only machine; the GPU half of 06.3 runs only where `tc.cuda.is_available()`,
and the check says so when it skips it.
"""
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
            mistakes=[mistakes.custom(lambda g, e: np.isclose(g, 1.0), "you returned the total time: divide by repeats"),
                      mistakes.custom(lambda g, e: np.isclose(g, 1.25), "the warm-up call was inside the timed region")])
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
    t.close(buf, ref_buf, "buf after one step", mistakes=[mistakes.custom(
        lambda g, e: np.allclose(g, 0), "buf did not change: assign into it with buf[...] = ... (or buf *= ...; buf += ...)")])
    t.close(p, ref_p, "p after one step", mistakes=[mistakes.sign_flipped("step against the gradient: p -= lr * buf")])
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
    t.equal(tuple(update_scale(1024.0, 5, True)), (512.0, 0), "update_scale(1024.0, tracker=5, found_inf=True)",
            hint="an overflow halves the scale (backoff_factor=0.5) and resets the tracker to 0")
    t.equal(tuple(update_scale(1024.0, 5, False)), (1024.0, 6), "update_scale(1024.0, tracker=5, found_inf=False)",
            hint="a clean step only counts: tracker + 1")
    got = tuple(update_scale(1024.0, 1999, False))
    t.equal(got, (2048.0, 0), "update_scale(1024.0, tracker=1999, found_inf=False) (growth_interval=2000)",
            hint="the 2000th clean step in a row doubles the scale and resets the tracker" if got != (2048.0, 2000)
            else "after growing, the tracker starts again at 0")
    t.equal(tuple(update_scale(8.0, 2, False, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)), (32.0, 0),
            "update_scale(8.0, 2, False, growth_factor=4.0, backoff_factor=0.25, growth_interval=3)",
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
