"""Compile CuPy kernel definitions with NVIDIA's NVRTC, no GPU needed: a syntax or type error in a kernel
body is found on any Linux machine, not first on a GPU.

CuPy turns an `ElementwiseKernel(in_params, out_params, operation, name)` or a `ReductionKernel(...)` into
a CUDA C function and compiles it with NVRTC when it is first called, which needs a GPU. This module
builds a function with the same scoping from the same pieces -- inputs as `const` locals read per
element, outputs as references, `i` as the element index, the reduction's map expression inside the loop
and its post-map expression after it, where only the outputs and `a` (the reduced value) are visible --
and compiles it with NVRTC (the `nvidia-cuda-nvrtc-cu12` wheel, or a CUDA toolkit's libnvrtc).

Used by the test suite for the framework's fused kernels and the course's example kernels, and by the
chapter 06 grader to check a learner's kernel body on a machine without a GPU.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import re

_C_TYPES = {
    "bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short", "uint16": "unsigned short",
    "int32": "int", "uint32": "unsigned int", "int64": "long long", "uint64": "unsigned long long",
    "float32": "float", "float64": "double",
}


class CudaCompileError(RuntimeError):
    """NVRTC rejected a kernel; the message is NVRTC's log with the generated source's line numbers."""


def _params(spec, placeholders):
    """[(c_type, name, raw)] for a CuPy parameter list such as "float32 x, raw T y"."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        words = part.split()
        raw = words[0] == "raw"
        if raw:
            words = words[1:]
        if len(words) != 2:
            raise ValueError(f"cannot parse kernel parameter {part!r} (expected '[raw] TYPE NAME')")
        type_name, name = words
        if type_name in _C_TYPES:
            c_type = _C_TYPES[type_name]
        elif re.fullmatch(r"[A-Za-z_]\w*", type_name) and type_name not in ("float16", "complex64", "complex128"):
            c_type = type_name
            placeholders.add(type_name)
        else:
            raise ValueError(f"the compile check does not support the kernel type {type_name!r}")
        out.append((c_type, name, raw))
    return out


def _signature(inputs, outputs):
    args = [f"const {t}* {'' if raw else '_raw_'}{n}" for t, n, raw in inputs]
    args += [f"{t}* {'' if raw else '_raw_'}{n}" for t, n, raw in outputs]
    return ", ".join(args + ["long long _n"])


def _typedefs(placeholders, type_map):
    return "".join(f"typedef {type_map.get(p, 'float')} {p};\n" for p in sorted(placeholders))


def elementwise_source(in_params, out_params, operation, name, preamble="", type_map=None):
    """CUDA C for `cupy.ElementwiseKernel(in_params, out_params, operation, name, preamble=...)`.

    `type_map` gives C types for placeholder types such as T (default float)."""
    placeholders = set()
    inputs, outputs = _params(in_params, placeholders), _params(out_params, placeholders)
    reads = "".join(f"    const {t} {n} = _raw_{n}[i];\n" for t, n, raw in inputs if not raw)
    refs = "".join(f"    {t} &{n} = _raw_{n}[i];\n" for t, n, raw in outputs if not raw)
    return (f"{_typedefs(placeholders, type_map or {})}{preamble}\n"
            f'extern "C" __global__ void {name}({_signature(inputs, outputs)}) {{\n'
            "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < _n;\n"
            "       i += (long long)blockDim.x * gridDim.x) {\n"
            f"{reads}{refs}    {operation.strip()};\n  }}\n}}\n")


def reduction_source(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name,
                     reduce_type=None, preamble="", type_map=None):
    """CUDA C for `cupy.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name, reduce_type=..., preamble=...)`."""
    placeholders = set()
    inputs, outputs = _params(in_params, placeholders), _params(out_params, placeholders)
    reduce_type = _C_TYPES.get(reduce_type, reduce_type) if reduce_type else outputs[0][0]
    reads = "".join(f"      const {t} {n} = _raw_{n}[_j];\n" for t, n, raw in inputs if not raw)
    refs = "".join(f"    {t} &{n} = _raw_{n}[blockIdx.x];\n" for t, n, raw in outputs if not raw)
    return (f"{_typedefs(placeholders, type_map or {})}{preamble}\n"
            f"#define REDUCE(a, b) ({reduce_expr})\n#define POST_MAP(a) ({post_map_expr})\n"
            f"typedef {reduce_type} _type_reduce;\n"
            f'extern "C" __global__ void {name}({_signature(inputs, outputs)}) {{\n'
            f"  _type_reduce _s = _type_reduce({identity});\n"
            "  for (long long _j = threadIdx.x; _j < _n; _j += blockDim.x) {\n"
            f"{reads}      _type_reduce _a = static_cast<_type_reduce>({map_expr});\n"
            "      _s = REDUCE(_s, _a);\n  }\n"
            f"  if (threadIdx.x == 0) {{\n{refs}    POST_MAP(_s);\n  }}\n}}\n")


@functools.lru_cache(maxsize=None)
def _nvrtc():
    candidates = []
    try:
        import nvidia.cuda_nvrtc

        for d in nvidia.cuda_nvrtc.__path__:
            candidates += sorted(glob.glob(os.path.join(d, "lib", "libnvrtc.so.*")))
    except ImportError:
        pass
    candidates += ["libnvrtc.so.12", "libnvrtc.so"]
    for path in candidates:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def nvrtc_available() -> bool:
    """True when NVRTC can be loaded (pip install nvidia-cuda-nvrtc-cu12, or a CUDA toolkit)."""
    return _nvrtc() is not None


def compile_cuda(source, name="kernel.cu", arch="compute_90"):
    """Compile CUDA C `source` to PTX with NVRTC; raises CudaCompileError with NVRTC's log if it fails."""
    lib = _nvrtc()
    if lib is None:
        raise RuntimeError("NVRTC is not installed: pip install nvidia-cuda-nvrtc-cu12")
    prog = ctypes.c_void_p()
    status = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None)
    if status != 0:
        raise RuntimeError(f"nvrtcCreateProgram failed with status {status}")
    try:
        # 177/550: a parameter the body never uses is declared anyway (CuPy does the same), so no warning
        flags = [f"--gpu-architecture={arch}", "--diag-suppress=177,550"]
        options = (ctypes.c_char_p * len(flags))(*(f.encode() for f in flags))
        status = lib.nvrtcCompileProgram(prog, len(flags), options)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        if status != 0:
            numbered = "\n".join(f"{k + 1:3d}  {line}" for k, line in enumerate(source.splitlines()))
            raise CudaCompileError(f"{log.value.decode(errors='replace').strip()}\n\nsource:\n{numbered}")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
