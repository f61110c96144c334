"""tc.nn.functional is a package read from the bottom up: each part imports only the parts below it (and lower
layers of tinygrad_course), never the package's __init__, never inside a function; its public names are the
functions themselves, whichever file they live in."""
import ast
import types
from pathlib import Path

import pytest

import tinygrad_course.nn.functional as F

PACKAGE = Path(F.__file__).parent

# Bottom to top: a part may import only parts listed before it.
PARTS = ["_utils", "activation", "softmax", "dropout", "linear", "embedding", "padding", "conv",
         "pooling", "normalization", "vision", "distance", "loss_reduction", "loss_regression", "loss_classification",
         "loss_margin", "attention"]

# Layers above nn.functional (and the package root) that no part may import.
HIGHER = ("tinygrad_course.nn.modules", "tinygrad_course.nn.init", "tinygrad_course.nn.utils",
          "tinygrad_course.nn.parallel", "tinygrad_course.optim", "tinygrad_course._functions",
          "tinygrad_course.methods", "tinygrad_course.tensor_methods", "tinygrad_course.linalg")


def _own_imports(path):
    """(absolute module imported, whether inside a function) for each import of tinygrad_course in `path`."""
    tree = ast.parse(path.read_text())
    package = "tinygrad_course.nn.functional"
    found = []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                if module.startswith("tinygrad_course"):
                    if module in ("tinygrad_course", package):  # `from . import x` / `from ... import x`
                        found.extend([(f"{module}.{a.name}" if module != "tinygrad_course" else module, in_function)
                                  for a in child.names])
                    else:
                        found.append((module, in_function))
            elif isinstance(child, ast.Import):
                found.extend((a.name, in_function) for a in child.names if a.name.startswith("tinygrad_course"))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(tree, False)
    return found


def test_every_file_is_a_listed_part():
    files = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert files == sorted(PARTS)


@pytest.mark.parametrize("part", PARTS)
def test_part_imports_only_lower_parts_and_layers(part):
    lower = {f"tinygrad_course.nn.functional.{p}" for p in PARTS[: PARTS.index(part)]}
    for module, in_function in _own_imports(PACKAGE / f"{part}.py"):
        assert not in_function, f"{part}.py imports {module} inside a function"
        assert module != "tinygrad_course", f"{part}.py imports the package root"
        assert not module.startswith(HIGHER), f"{part}.py imports {module}, a higher layer"
        if module.startswith("tinygrad_course.nn"):
            assert module in lower, f"{part}.py imports {module}, which is not below it"


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_files_are_short(path):
    assert len(path.read_text().splitlines()) <= 400


def test_public_names_are_functions_of_the_parts():
    assert len(F.__all__) == len(set(F.__all__)) == 103
    for name in F.__all__:
        fn = getattr(F, name)
        # softmax, linear, dropout and embedding are also file names: the package must bind the functions
        assert isinstance(fn, types.FunctionType), name
        assert fn.__module__.rsplit(".", 1)[-1] in PARTS, (name, fn.__module__)
    namespace = {}
    exec("from tinygrad_course.nn.functional import *", namespace)
    assert sorted(n for n in namespace if n != "__builtins__") == sorted(F.__all__)


def test_both_import_spellings_give_the_package():
    from tinygrad_course.nn import functional

    assert functional is F
    assert F._reduction(None, False, "mean") == "none"  # used by the loss modules of tc.nn
