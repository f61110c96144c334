"""`tc.save` / `tc.load` and `tc.serialization`, like `torch.serialization`: the checkpoint file format
(`checkpoint.py`), pickling whole objects with PyTorch's class paths and the weights-only allow-list
(`pickling.py`, `twins.py`)."""
from .checkpoint import MAGIC, CheckpointError, load, save
from .pickling import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = [
           "MAGIC",
           "CheckpointError",
           "add_safe_globals",
           "clear_safe_globals",
           "get_safe_globals",
           "load",
           "safe_globals",
           "save",
]
