"""`import torch` that gives tinygrad_course: the program suite puts this folder first on PYTHONPATH.

`torch.X` submodules resolve to the framework's `tinygrad_course.X` modules (the same objects, not
copies), so `import torch.nn as nn` and `from torch.utils.data import DataLoader` work unchanged."""
import importlib
import importlib.abc
import importlib.util
import sys

import tinygrad_course


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("tinygrad_course" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Alias())
sys.modules["torch"] = tinygrad_course
