"""Record the public API surface of the installed CuPy into tests/gpu/cupy_api.json.

The strict CuPy stand-in used by the GPU test suite on machines without a GPU (tests/strict_cupy.py)
offers exactly the names real CuPy has, so code that calls something CuPy lacks fails there too.
CuPy imports without a GPU, so this runs anywhere:

    python -m venv /tmp/cupy && /tmp/cupy/bin/pip install cupy-cuda12x
    /tmp/cupy/bin/python scripts/record_cupy_api.py
"""
import functools
import inspect
import json
import pathlib
import re
import types

import cupy
import cupyx
import numpy

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "gpu" / "cupy_api.json"
SUBMODULES = ["random", "linalg", "fft", "lib", "lib.stride_tricks", "testing"]


def kind(module_name, name, obj):
    """How the stand-in should provide `obj`: the very NumPy object, a wrapped NumPy callable, or not at all."""
    numpy_module = functools.reduce(getattr, module_name.split(".")[1:], numpy) if module_name != "cupy" else numpy
    if getattr(numpy_module, name, None) is obj:
        return "same_as_numpy"
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, cupy.ufunc):
        return "ufunc"
    if isinstance(obj, type):
        return "type"
    if callable(obj):
        return "function"
    return "constant"


def parameters(obj, qualname):
    """Keyword names `obj` accepts, or None when it takes **kwargs or its signature is unknown.

    Python functions have a signature; CuPy's Cython methods state theirs in the docstring's first line."""
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        first = (obj.__doc__ or "").strip().splitlines()[:1]
        match = re.match(r"[\w.]+\((.*)\)", first[0]) if first else None
        if not match:
            return None
        names = []
        for part in match.group(1).split(","):
            part = part.strip().split("=")[0].strip()
            if not part or part in ("self", "*", "/"):
                continue
            if part.startswith("**"):
                return None
            if part.startswith("*"):
                continue
            name = part.split()[-1]  # "Py_ssize_t axis1" -> "axis1"
            if name.isidentifier():
                names.append(name)
        return names
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind not in (inspect.Parameter.VAR_POSITIONAL,) and p.name != "self"]


def signatures():
    out = {}
    for name, kind in names(cupy, "cupy").items():
        if kind in ("function", "ufunc"):
            out["cupy." + name] = parameters(getattr(cupy, name), name)
    for name in dir(cupy.ndarray):
        attr = getattr(cupy.ndarray, name)
        if not name.startswith("_") and callable(attr):
            out["ndarray." + name] = parameters(attr, name)
    for sub in ("random", "lib.stride_tricks"):
        module = functools.reduce(getattr, sub.split("."), cupy)
        for name, kind in names(module, "cupy." + sub).items():
            if kind == "function":
                out[f"cupy.{sub}.{name}"] = parameters(getattr(module, name), name)
    return {k: v for k, v in out.items() if v is not None}


def names(module, module_name):
    return {n: kind(module_name, n, getattr(module, n)) for n in sorted(dir(module)) if not n.startswith("_")}


def main():
    api = {
        "cupy_version": cupy.__version__,
        "numpy_version": numpy.__version__,
        "cupy": names(cupy, "cupy"),
        "ndarray": sorted(n for n in dir(cupy.ndarray) if not n.startswith("_") or n.startswith("__")),
        "ufunc": sorted(n for n in dir(cupy.add) if not n.startswith("_")),
        "cupyx": names(cupyx, "cupyx"),
        "signatures": signatures(),
    }
    for sub in SUBMODULES:
        api["cupy." + sub] = names(functools.reduce(getattr, sub.split("."), cupy), "cupy." + sub)
    OUT.write_text(json.dumps(api, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} (CuPy {cupy.__version__})")


if __name__ == "__main__":
    main()
