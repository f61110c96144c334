"""Compare tinygrad_course's public API with the installed PyTorch's and write docs/api_coverage.md.

For each namespace (torch, Tensor methods, torch.nn layers, torch.nn.functional, torch.nn.init, torch.optim,
torch.optim.lr_scheduler) it lists the public names PyTorch has that `tc` has too and the ones it lacks, so
a learner can see at a glance whether a tutorial's calls will work, and maintainers can see what is left.

    .venv/bin/python scripts/api_coverage.py            # rewrite docs/api_coverage.md
    .venv/bin/python scripts/api_coverage.py --check    # exit 1 if the page is out of date
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import pathlib
import sys
import warnings

import torch
import torch.nn
import torch.nn.functional
import torch.nn.init
import torch.optim
import torch.optim.lr_scheduler
import torch.utils.data

import tinygrad_course as tc

OUT = pathlib.Path(__file__).resolve().parent.parent / "docs" / "api_coverage.md"

# PyTorch names outside the course's scope: complex numbers, sparse/quantized/nested tensors, named tensors,
# storage internals, TorchScript/compile/export, fft/special submodules and C++ dispatcher plumbing.
OUT_OF_SCOPE_WORDS = ("complex", "sparse", "quant", "nested", "named", "storage", "jit", "script", "compile",
                      "fbgemm", "mkldnn", "cudnn", "miopen", "vulkan", "mps", "xpu", "hpu", "ipu", "mtia", "fake",
                      "symint", "sym_", "_foreach", "fused", "batch_norm_", "native_", "_dim_arange", "rnn_",
                      "gru_", "lstm_", "affine_grid_generator", "segment_reduce", "embedding_renorm", "fft",
                      "stft", "istft", "window", "polar", "conj", "real", "imag", "angle", "view_as_",
                      "resolve_", "_copy", "_scatter", "q_", "int_repr", "dequantize", "to_padded",
                      "is_inference", "is_neg", "dlpack", "typename", "vmap", "cond", "while_loop", "library",
                      "is_nonzero", "is_same_size", "is_signed", "is_vulkan", "pin_memory", "prepare_",
                      "get_device", "deg2rad_", "rad2deg_", "set_", "backward_hooks", "ctc", "adaptive_log",
                      "grouped_mm", "scaled_mm", "scaled_grouped", "channel_shuffle", "lazy", "crossmaplrn",
                      "container", "dataparallel", "syncbatchnorm", "nll_loss2d", "rnnbase", "rnncellbase",
                      "linear_cross_entropy", "fractional", "lp_pool3d", "3d", "datapipe", "datachunk",
                      "validation", "determinism", "non_deterministic")


# torch functions that are no Tensor method but belong to the compared surface.
STANDALONE = {
        "tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn",
        "randint", "randperm", "normal", "bernoulli", "multinomial", "manual_seed", "seed", "cat", "concat",
        "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack", "meshgrid", "einsum",
        "cartesian_prod", "combinations", "block_diag", "broadcast_tensors", "broadcast_shapes", "from_numpy",
        "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
        "randint_like", "tril_indices", "triu_indices", "cdist", "bucketize", "searchsorted", "vander",
        "atleast_1d", "atleast_2d", "atleast_3d", "tensordot", "where", "is_tensor", "is_floating_point",
        "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "save", "load",
        "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast", "set_printoptions",
        "get_rng_state", "set_rng_state", "initial_seed", "get_default_device", "set_default_device", "numel",
        "finfo", "iinfo"}


def _in_scope(name: str) -> bool:
    low = name.lower()
    return not name.startswith("_") and not any(w in low for w in OUT_OF_SCOPE_WORDS)


def _public_callables(module) -> set[str]:
    names = set()
    for name in dir(module):
        obj = getattr(module, name, None)
        if callable(obj) and not inspect.isclass(obj) and _in_scope(name):
            names.add(name)
    return names


def _classes(module, base) -> set[str]:
    return {n for n in dir(module) if inspect.isclass(getattr(module, n)) and issubclass(getattr(module, n), base)
            and getattr(module, n) is not base and _in_scope(n)}


def namespaces():
    """(title, torch names, predicate telling whether tc has a name) for each namespace compared."""
    torch_functions = {n for n in _public_callables(torch) if hasattr(torch.Tensor, n) or n in STANDALONE}
    tensor_methods = {n for n in dir(torch.Tensor) if _in_scope(n)}
    nn_layers = _classes(torch.nn, torch.nn.Module) - {"Module"}
    functional = _public_callables(torch.nn.functional) - {"handle_torch_function", "has_torch_function",
                                                          "has_torch_function_unary", "has_torch_function_variadic",
                                                          "boolean_dispatch", "assert_int_or_pair", "Callable",
                                                          "Optional", "DType"}
    init = {n for n in _public_callables(torch.nn.init) if n.endswith("_") or n == "calculate_gain"}
    optimizers = _classes(torch.optim, torch.optim.Optimizer)
    schedulers = _classes(torch.optim.lr_scheduler, torch.optim.lr_scheduler.LRScheduler) - {"LRScheduler"}
    data = {n for n in torch.utils.data.__all__ if _in_scope(n)}
    probe = tc.zeros(2, 2)
    return [
        ("`torch` functions", torch_functions, lambda n: hasattr(tc, n)),
        ("`Tensor` methods and attributes", tensor_methods, lambda n: _has_attribute(probe, n)),
        ("`torch.nn` layers", nn_layers, lambda n: hasattr(tc.nn, n)),
        ("`torch.nn.functional`", functional, lambda n: hasattr(tc.nn.functional, n)),
        ("`torch.nn.init`", init, lambda n: hasattr(tc.nn.init, n)),
        ("`torch.optim` optimizers", optimizers, lambda n: hasattr(tc.optim, n)),
        ("`torch.optim.lr_scheduler`", schedulers, lambda n: hasattr(tc.optim.lr_scheduler, n)),
        ("`torch.utils.data`", data, lambda n: hasattr(tc.utils.data, n)),
        ("modules programs import", set(PROGRAM_MODULES), _importable),
        ("names programs use outside the core", set(PROGRAM_NAMES), _has_dotted),
    ]


# Modules and names real PyTorch programs touch on their first lines (device selection, back-end switches,
# legacy API, multiprocessing, sparse graphs, serialization); `import tinygrad_course.X` must work for each.
PROGRAM_MODULES = ("torch.accelerator", "torch.autograd", "torch.backends", "torch.backends.cudnn",
                   "torch.backends.cuda", "torch.backends.mps", "torch.cuda", "torch.cuda.amp", "torch.amp",
                   "torch.multiprocessing", "torch.sparse", "torch.serialization", "torch.jit", "torch.onnx",
                   "torch.utils.data", "torch.nn.utils.rnn", "torch.optim.lr_scheduler", "torch.nn.functional",
                   "torch.nn.init", "torch.linalg", "torch.profiler", "torch.distributed")
PROGRAM_NAMES = ("accelerator.is_available", "accelerator.current_accelerator", "accelerator.device_count",
                 "backends.cudnn.benchmark", "backends.cudnn.deterministic", "backends.cuda.matmul",
                 "backends.mps.is_available", "cuda.amp.GradScaler", "cuda.amp.autocast", "autograd.Variable",
                 "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",
                 "HalfTensor", "sparse_coo_tensor", "spmm", "sparse.mm", "serialization.add_safe_globals",
                 "serialization.safe_globals", "serialization.get_safe_globals", "multiprocessing.spawn",
                 "multiprocessing.Process", "multiprocessing.Queue", "jit.script", "jit.trace", "onnx.export",
                 "Tensor.share_memory_", "Tensor.is_shared", "Tensor.to_sparse", "Tensor.is_xpu", "Tensor.is_mps",
                 "Tensor.is_meta", "nn.Module.share_memory")


def _importable(name):
    try:
        importlib.import_module("tinygrad_course" + name[len("torch"):])
        return True
    except ImportError:
        return False


def _has_dotted(name):
    obj = tc
    for part in name.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _has_attribute(tensor, name):
    if hasattr(type(tensor), name):
        return True
    try:
        return hasattr(tensor, name)
    except Exception:  # a property that refuses this tensor (e.g. .mT on a 1-D tensor) still exists
        return True


def render() -> str:
    lines = ["# API coverage against PyTorch", "",
             f"Generated by `scripts/api_coverage.py` against PyTorch {torch.__version__.split('+')[0]}. Each "
             "section lists the PyTorch names in the course's scope (no complex, sparse, quantized or named "
             "tensors, no TorchScript/compile internals, no 3-d layers) and whether `tinygrad_course` has them. "
             "Having a name means it follows PyTorch's signature, defaults and results; the test suite compares "
             "them with PyTorch.", "", "| namespace | covered | in scope | share |", "|---|---:|---:|---:|"]
    sections = []
    for title, names, has in namespaces():
        present = sorted(n for n in names if has(n))
        missing = sorted(n for n in names if not has(n))
        lines.append(f"| {title} | {len(present)} | {len(names)} | {100 * len(present) / max(len(names), 1):.0f}% |")
        sections += ["", f"## {title}", "", f"**Not yet in tinygrad_course ({len(missing)}):** "
                     + (", ".join(f"`{n}`" for n in missing) if missing else "none."), ""]
    return "\n".join(lines + sections).rstrip() + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/api_coverage.md is out of date")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date: run scripts/api_coverage.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(text.split("\n\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
