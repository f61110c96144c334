"""Every CUDA kernel the framework defines compiles with NVIDIA's NVRTC, on any Linux machine.

The kernel definitions are recorded by calling the framework's kernel factories against the strict CuPy
stand-in, turned into CUDA C the way CuPy lays it out (tinygrad_course/ops/cuda_source.py) and compiled
for the H100's architecture. Running them, and comparing them with their references, needs a real GPU
(tests/gpu/test_gpu_kernels.py).
"""
import pytest

import strict_cupy
import tinygrad_course as tc
from tinygrad_course import _backend
from tinygrad_course.grading import check
from tinygrad_course.grading.checker import CheckFailed
from tinygrad_course.ops import cuda_source as C
from tinygrad_course.ops import gpu_kernels as K

pytestmark = pytest.mark.skipif(not C.nvrtc_available(), reason="NVRTC missing: pip install nvidia-cuda-nvrtc-cu12")

FACTORIES = {"adam": K._adam_kernel, "cross_entropy": K._ce_kernels, "gelu": K._gelu_kernels}


def _recorded(monkeypatch, factory):
    """The kernels `factory` defines, recorded by the stand-in instead of compiled by CuPy."""
    monkeypatch.setattr(_backend, "_cupy", strict_cupy.cupy)
    monkeypatch.setattr(_backend, "_cupy_checked", True)
    start = len(strict_cupy._KernelSource.recorded)
    factory.__wrapped__()  # bypass the lru_cache: it must not keep stand-in kernels
    return strict_cupy._KernelSource.recorded[start:]


def _source(kernel, type_map=None):
    args, kw = kernel.args, kernel.kwargs
    if isinstance(kernel, strict_cupy.ReductionKernel):
        return C.reduction_source(*args, reduce_type=kw.get("reduce_type"), preamble=kw.get("preamble", ""),
                                  type_map=type_map)
    return C.elementwise_source(*args, preamble=kw.get("preamble", ""), type_map=type_map)


@pytest.mark.parametrize("family", sorted(FACTORIES))
def test_framework_kernels_compile(family, monkeypatch):
    kernels = _recorded(monkeypatch, FACTORIES[family])
    assert kernels, f"{family}: no kernel was defined"
    for kernel in kernels:
        C.compile_cuda(_source(kernel))


def test_generic_kernels_compile_for_float_and_double():
    body = "buf = momentum * buf + grad; param = param - lr * buf"
    for c_type in ("float", "double"):
        C.compile_cuda(C.elementwise_source("T grad, T lr, T momentum", "T param, T buf", body, "m", type_map={"T": c_type}))


def test_compile_errors_come_with_nvrtcs_message_and_the_source():
    with pytest.raises(C.CudaCompileError, match=r'expected a "\)"') as info:
        C.compile_cuda(C.elementwise_source("float32 x", "float32 y", "y = x / (1.0f + expf(-x)", "bad"))
    assert "source:" in str(info.value) and "y = x / (1.0f + expf(-x)" in str(info.value)


def test_cupys_scoping_rules_are_kept():
    # inputs are const, and a reduction's post-map sees only the outputs and `a`, as in CuPy
    with pytest.raises(C.CudaCompileError, match="expression must be a modifiable lvalue"):
        C.compile_cuda(C.elementwise_source("float32 x", "float32 y", "x = 1.0f; y = x", "writes_input"))
    with pytest.raises(C.CudaCompileError, match='identifier "m" is undefined'):
        C.compile_cuda(C.reduction_source("float32 x, float32 m", "float32 y", "expf(x - m)", "a + b",
                                          "y = m + logf(a)", "0", "uses_input_after_loop"))
    C.compile_cuda(C.elementwise_source("float32 x, raw float32 table", "float32 y", "y = x * table[i % 4]", "raw"))


def _solution_update(p, g, buf, lr, momentum):
    buf *= momentum
    buf += g
    p -= lr * buf


@pytest.mark.skipif(tc.cuda.is_available(), reason="checks the grader's path on machines without a GPU")
def test_the_chapter_06_grader_compiles_a_learners_kernel_body():
    check("06.3", _solution_update, lambda: "buf = momentum * buf + grad;\nparam = param - lr * buf;")
    with pytest.raises(CheckFailed, match="does not compile") as info:
        check("06.3", _solution_update, lambda: "buf = momentum * buf + grad\nparam = param - lr * buf;")
    assert 'expected a ";"' in str(info.value)
