"""PyTorch's device semantics, checked on any machine: device parsing and printing, `tc.cuda` without a
GPU, the same-device error, `.numpy()` on a GPU tensor, Module.to, optimizer state and tc.load(map_location).

A second device is simulated where needed by a tensor whose `_device` says cuda:0 while it still holds a
NumPy array (`fake_cuda`): enough to exercise every check that looks at devices, nothing more.
"""
import io
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc
from tinygrad_course.tensor_base import _wrap

NO_GPU = pytest.mark.skipif(tc.cuda.is_available(), reason="checks the behaviour without a GPU")


def fake_cuda(array, index=0):
    """A tensor that claims to live on cuda:<index> but holds a NumPy array (test-only)."""
    t = _wrap(np.asarray(array, dtype=np.float32))
    t._device = tc.device("cuda", index)
    return t


# ---- tc.device --------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:0", "cuda:1", "cpu:0"])
def test_device_parses_and_prints_like_torch(spec):
    ours, theirs = tc.device(spec), torch.device(spec)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)


def test_device_from_type_and_index_and_int():
    assert repr(tc.device("cuda", 0)) == repr(torch.device("cuda", 0))
    assert repr(tc.device(1)) == "device(type='cuda', index=1)"  # torch needs an accelerator for this
    assert tc.device(tc.device("cuda:0")) == tc.device("cuda", 0)


def test_device_equality_and_hash():
    assert tc.device("cuda:0") == tc.device("cuda", 0) == "cuda:0"
    assert tc.device("cuda") != tc.device("cuda:0")  # as in torch: no index is not index 0
    assert torch.device("cuda") != torch.device("cuda:0")
    assert len({tc.device("cpu"), tc.device("cpu"), tc.device("cuda:0")}) == 2


@pytest.mark.parametrize("spec", ["cuda:x", "cuda:-1", "gpu"])
def test_bad_device_strings_raise_runtime_error_like_torch(spec):
    with pytest.raises(RuntimeError) as theirs:
        torch.device(spec)
    with pytest.raises(RuntimeError) as ours:
        tc.device(spec)
    if spec != "gpu":  # torch lists its many backends in that message; ours lists cpu and cuda
        assert str(ours.value) == str(theirs.value)


def test_index_given_twice():
    with pytest.raises(RuntimeError, match="must not include an index because index was passed explicitly"):
        tc.device("cuda:1", 0)


def test_tensor_device_attributes_on_cpu():
    t = tc.ones(2)
    assert t.device == tc.device("cpu") and not t.is_cuda and t.cpu() is t
    assert t.to("cpu") is t and t.to(tc.device("cpu")) is t


# ---- tc.cuda without a GPU ------------------------------------------------------------------------------
@NO_GPU
def test_cuda_queries_degrade_cleanly():
    assert tc.cuda.is_available() is False
    assert tc.cuda.device_count() == 0
    assert tc.cuda.memory_allocated() == 0 and tc.cuda.memory_reserved() == 0
    assert tc.cuda.max_memory_allocated() == 0
    tc.cuda.synchronize()  # no-ops without a GPU, like the seed and the cache
    tc.cuda.manual_seed(0)
    tc.cuda.empty_cache()


@NO_GPU
def test_cuda_only_queries_raise_a_clear_error():
    with pytest.raises(RuntimeError, match="Torch not compiled with CUDA enabled"):
        tc.cuda.get_device_name()


@NO_GPU
@pytest.mark.parametrize("make", [
    lambda: tc.ones(2).to("cuda"),
    lambda: tc.ones(2).cuda(),
    lambda: tc.zeros(2, device="cuda"),
    lambda: tc.tensor([1.0], device="cuda:0"),
])
def test_moving_to_cuda_without_a_gpu_raises_torch_error(make):
    with pytest.raises(RuntimeError, match="Torch not compiled with CUDA enabled"):
        make()


# ---- mixing devices ---------------------------------------------------------------------------------------
TORCH_SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / b,
    lambda a, b: a @ b,
])
def test_mixing_devices_raises_torchs_message(op):
    gpu = fake_cuda(np.ones((2, 2)))
    cpu = tc.ones(2, 2)
    with pytest.raises(RuntimeError) as err:
        op(gpu, cpu)
    assert str(err.value).startswith(TORCH_SAME_DEVICE.format("cuda:0", "cpu"))
    assert "Hint" in str(err.value)
    with pytest.raises(RuntimeError) as err:
        op(cpu, gpu)
    assert str(err.value).startswith(TORCH_SAME_DEVICE.format("cpu", "cuda:0"))


def test_two_gpus_are_two_devices():
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        fake_cuda(np.ones(2), 0) + fake_cuda(np.ones(2), 1)


def test_a_batch_on_the_gpu_and_a_model_on_the_cpu():
    layer = tc.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        layer(fake_cuda(np.ones((4, 3))))


# ---- .numpy() on a GPU tensor ----------------------------------------------------------------------------
def test_numpy_on_a_gpu_tensor_tells_to_call_cpu_first():
    with pytest.raises(TypeError) as err:
        fake_cuda(np.ones(2)).numpy()
    assert str(err.value) == ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                              "tensor to host memory first.")


def test_gpu_tensor_reports_its_device():
    t = fake_cuda(np.ones(2))
    assert t.is_cuda and t.device.type == "cuda" and str(t.device) == "cuda:0"
    assert t.type() == "tc.cuda.FloatTensor"


# ---- modules, optimizers, checkpoints ---------------------------------------------------------------------
def test_module_to_cpu_keeps_parameters_and_returns_the_module():
    model = tc.nn.Sequential(tc.nn.Linear(3, 4), tc.nn.ReLU(), tc.nn.Linear(4, 1))
    ids = [id(p) for p in model.parameters()]
    assert model.to("cpu") is model and model.cpu() is model
    assert [id(p) for p in model.parameters()] == ids
    assert all(p.device == tc.device("cpu") for p in model.parameters())


@NO_GPU
def test_module_to_cuda_without_a_gpu_raises():
    with pytest.raises(RuntimeError, match="Torch not compiled with CUDA enabled"):
        tc.nn.Linear(2, 2).to("cuda")


def test_optimizer_state_lives_on_the_parameters_device():
    p = tc.ones(3, requires_grad=True)
    opt = tc.optim.Adam([p], lr=0.1)
    p.sum().backward()
    opt.step()
    state = opt.state[p]
    assert state["exp_avg"].device == p.device and state["exp_avg_sq"].device == p.device


def _saved_gpu_checkpoint():
    buffer = io.BytesIO()
    tc.save({"w": fake_cuda(np.arange(3.0))}, buffer)
    buffer.seek(0)
    return buffer


@NO_GPU
def test_loading_a_gpu_checkpoint_on_a_cpu_machine_needs_map_location():
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        tc.load(_saved_gpu_checkpoint())


@pytest.mark.parametrize("map_location", ["cpu", tc.device("cpu"), {"cuda:0": "cpu"}, lambda storage, loc: storage])
def test_map_location_brings_a_gpu_checkpoint_to_the_cpu(map_location):
    loaded = tc.load(_saved_gpu_checkpoint(), map_location=map_location)
    assert loaded["w"].device == tc.device("cpu")
    np.testing.assert_array_equal(loaded["w"].numpy(), [0.0, 1.0, 2.0])


# ---- GradScaler / autocast device handling --------------------------------------------------------------
@NO_GPU
def test_amp_on_cuda_without_a_gpu_warns_and_disables():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = tc.amp.GradScaler("cuda")
        ctx = tc.autocast("cuda")
    assert not scaler.is_enabled() and not ctx._enabled
    assert len(caught) == 2


# ---- default device -------------------------------------------------------------------------------------
def test_default_device_is_the_cpu_like_torch():
    assert repr(tc.get_default_device()) == repr(torch.get_default_device())
    tc.set_default_device("cpu")
    assert tc.get_default_device() == tc.device("cpu") and tc.zeros(1).device == tc.device("cpu")


@NO_GPU
def test_default_device_cuda_without_a_gpu_raises_and_keeps_the_cpu():
    with pytest.raises(RuntimeError, match="Torch not compiled with CUDA enabled"):
        tc.set_default_device("cuda")
    assert tc.get_default_device() == tc.device("cpu")
