"""Checks that need cuda tensors: transfers, real mixed-device errors, checkpoints across devices, float16
autocast with a GradScaler; on a real GPU also memory statistics and the fused kernels being selected.
All but those two also run against the strict CuPy stand-in (TC_STRICT_CUPY=1)."""
import io

import numpy as np
import pytest

import tinygrad_course as tc
import tinygrad_course.nn.functional as F
from devices import requires_cuda, requires_real_gpu
from tinygrad_course.ops import gpu_kernels

pytestmark = [pytest.mark.gpu, requires_cuda]


def test_device_queries():
    assert tc.cuda.is_available() and tc.cuda.device_count() >= 1
    assert isinstance(tc.cuda.get_device_name(), str) and tc.cuda.get_device_name()
    assert tc.cuda.current_device() == 0
    assert tc.ones(1).cuda().device == tc.device("cuda:0")


@requires_real_gpu
def test_memory_statistics_follow_allocations():
    tc.cuda.synchronize()
    before = tc.cuda.memory_allocated()
    big = tc.zeros(1024, 1024, device="cuda")  # 4 MiB
    assert tc.cuda.memory_allocated() >= before + 4 * 1024 * 1024
    assert tc.cuda.max_memory_allocated() >= tc.cuda.memory_allocated()
    assert tc.cuda.memory_reserved() >= tc.cuda.memory_allocated()
    del big
    tc.cuda.empty_cache()
    assert tc.cuda.memory_allocated() <= before + 1024


def test_round_trip_keeps_values_and_dtypes():
    for dtype in (tc.float32, tc.float64, tc.float16, tc.int64, tc.bool):
        a = tc.tensor([[1, 0], [2, 3]], dtype=dtype)
        b = a.to("cuda")
        assert b.is_cuda and b.dtype is dtype and b._xp.__name__ == "cupy"
        assert b.cpu().tolist() == a.tolist()


def test_real_mixed_device_error_and_numpy_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, cuda:0 and cpu!"):
        tc.ones(2, device="cuda") + tc.ones(2)
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu\(\)"):
        tc.ones(2, device="cuda").numpy()
    assert tc.ones(2, device="cuda").cpu().numpy().tolist() == [1.0, 1.0]


def test_zero_dim_cpu_tensor_mixes_with_cuda_like_torch():
    out = tc.ones(3, device="cuda") * tc.tensor(2.0)
    assert out.is_cuda and out.cpu().tolist() == [2.0, 2.0, 2.0]


def test_item_and_printing_of_gpu_tensors():
    t = tc.tensor([1.5, 2.0], device="cuda")
    assert t.sum().item() == 3.5
    assert "device='cuda:0'" in repr(t)


def test_save_on_gpu_load_with_map_location():
    buffer = io.BytesIO()
    tc.save({"w": tc.arange(3.0, device="cuda")}, buffer)
    buffer.seek(0)
    assert tc.load(buffer)["w"].is_cuda
    buffer.seek(0)
    cpu = tc.load(buffer, map_location="cpu")["w"]
    assert not cpu.is_cuda and cpu.tolist() == [0.0, 1.0, 2.0]


def test_optimizer_state_on_gpu_and_load_state_dict_moves_it():
    model = tc.nn.Linear(4, 2).cuda()
    opt = tc.optim.Adam(model.parameters())
    F.mse_loss(model(tc.ones(3, 4, device="cuda")), tc.zeros(3, 2, device="cuda")).backward()
    opt.step()
    assert all(s["exp_avg"].is_cuda for s in opt.state.values())
    cpu_model = tc.nn.Linear(4, 2)
    cpu_opt = tc.optim.Adam(cpu_model.parameters())
    cpu_opt.load_state_dict(opt.state_dict())
    assert all(not s["exp_avg"].is_cuda for s in cpu_opt.state.values())


@requires_real_gpu
def test_adam_on_cuda_uses_the_fused_kernel(monkeypatch):
    calls = []
    original = gpu_kernels.adam_update
    monkeypatch.setattr(gpu_kernels, "adam_update", lambda *a, **k: (calls.append(1), original(*a, **k)))
    p = tc.ones(10, device="cuda", requires_grad=True)
    opt = tc.optim.AdamW([p], lr=0.1)
    p.sum().backward()
    opt.step()
    assert calls and gpu_kernels.uses_kernel(p._data)


def test_cross_entropy_and_gelu_on_cuda_match_cpu_including_double_backward():
    x = np.random.default_rng(0).standard_normal((16, 5)).astype(np.float32)
    results = {}
    for dev in ("cpu", "cuda"):
        t = tc.tensor(x, device=dev, requires_grad=True)
        loss = F.cross_entropy(F.gelu(t), tc.tensor(np.arange(16) % 5, device=dev))
        (g,) = tc.autograd.grad(loss, t, create_graph=True)
        (gg,) = tc.autograd.grad(g.sum(), t)
        results[dev] = (loss.item(), g.detach().cpu().numpy(), gg.cpu().numpy())
    for a, b in zip(results["cpu"], results["cuda"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_autocast_cuda_float16_and_grad_scaler_training():
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(20, 64), tc.nn.ReLU(), tc.nn.Linear(64, 4)).cuda()
    opt = tc.optim.SGD(model.parameters(), lr=0.1)
    scaler = tc.amp.GradScaler("cuda")
    assert scaler.is_enabled()
    x = tc.randn(256, 20, device="cuda")
    y = (x[:, :4].argmax(1))
    first = None
    for _ in range(50):
        opt.zero_grad()
        with tc.autocast("cuda"):
            hidden = model[0](x)
            assert hidden.dtype is tc.float16
            logits = model[2](model[1](hidden))
            loss = F.cross_entropy(logits, y)
            assert loss.dtype is tc.float32 and logits.softmax(1).dtype is tc.float32
        scaler.scale(loss).backward()
        assert all(p.grad.dtype is tc.float32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.7 * first
    assert scaler.get_scale() > 1.0


def test_bfloat16_autocast_on_cuda_explains_the_limit():
    with pytest.raises(RuntimeError, match="CuPy has no bfloat16"):
        tc.autocast("cuda", dtype=tc.bfloat16)
