"""Finding human names for tensors and modules: parameter dicts, a model, or the caller's variables."""
import inspect

from ._tensors import is_tensor


def _is_module(obj):
    return (not isinstance(obj, type) and callable(getattr(obj, "named_parameters", None))
            and callable(getattr(obj, "named_modules", None)))


class Names:
    """Maps ``id(tensor)`` -> name and ``id(module)`` -> dotted module path."""

    def __init__(self):
        self.tensors = {}
        self.modules = {}
        self.param_modules = {}  # id(parameter) -> tuple of module objects, outermost first
        self.objects = {}  # id -> object, keeps named objects alive so ids stay valid

    def add_tensor(self, name, t, overwrite=False):
        """Remember `name` for tensor `t` (keeping an earlier name unless `overwrite`)."""
        if overwrite or id(t) not in self.tensors:
            self.tensors[id(t)] = name
            self.objects[id(t)] = t

    def add_model(self, model, prefix=""):
        """Name a model's parameters ('fc1.weight') and submodules ('fc1')."""
        mods = dict(model.named_modules())
        for name, m in mods.items():
            if id(m) not in self.modules:
                self.modules[id(m)] = prefix + name if name else (prefix.rstrip(".") or type(m).__name__)
                self.objects[id(m)] = m
        for name, p in model.named_parameters():
            self.add_tensor(prefix + name, p)
            parts = name.split(".")[:-1]
            chain = [mods[""]] + [mods.get(".".join(parts[:i])) for i in range(1, len(parts) + 1)]
            if all(m is not None for m in chain):
                self.param_modules.setdefault(id(p), tuple(chain))

    def tensor_name(self, t):
        """The name given to tensor `t`, or None."""
        return self.tensors.get(id(t))

    def module_name(self, m):
        """The name given to module `m`, or None."""
        return self.modules.get(id(m))


def collect_names(params=None, model=None, frame=None):
    """Build a :class:`Names` from an explicit ``params`` dict, a ``model`` and a caller's frame.

    Explicit names win over model names, which win over variable names found in ``frame``.
    """
    names = Names()
    if params:
        for name, t in dict(params).items():
            names.add_tensor(name, t, overwrite=True)
    if model is not None:
        names.add_model(model)
    if frame is not None:
        for var, value in list(frame.f_locals.items()):
            if var.startswith("_"):
                continue
            if is_tensor(value):
                names.add_tensor(var, value)
            elif _is_module(value) and model is None:
                names.add_model(value)
    return names


def caller_frame(skip_module=__name__.rsplit(".", 1)[0]):
    """The first frame outside ``tinygrad_course.viz`` (the learner's cell)."""
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__", "").startswith(skip_module):
        frame = frame.f_back
    return frame
