"""`Module`: the base class of every layer and model, like `torch.nn.Module`.

A module registers parameters, buffers and submodules when they are assigned as attributes
(`module_registry`), saves and loads them (`module_state`) and runs hooks around `forward` when called
(`module_hooks`); this file composes those parts and adds what walks the whole tree: `train`/`eval`,
`apply`, device and dtype moves (`.to()`), and `repr`.
"""
from __future__ import annotations

from ...autograd.hooks import _HookDict
from ...autograd.grad_mode import no_grad
from ...dtypes import dtype as _dtype
from ...dtypes import float16, float32, float64
from ...seams import component
from ...tensor import Tensor
from .module_hooks import ModuleHooks
from .module_registry import ModuleRegistry
from .module_state import ModuleStateDict

__all__ = ["Module"]


@component("Module.__init__")
def _init_fields(module):
    """`Module.__init__`'s own fields, PyTorch's: `training` and the tables of parameters, buffers (and which
    of them are not persistent) and submodules (build mode's component: the learner's `Module.__init__`)."""
    d = module.__dict__
    d["training"] = True
    d["_parameters"] = {}
    d["_buffers"] = {}
    d["_non_persistent_buffers_set"] = set()
    d["_modules"] = {}


def _addindent(s, num_spaces):
    """Indent every line of `s` but the first (PyTorch's helper for nested reprs)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


class Module(ModuleHooks, ModuleStateDict, ModuleRegistry):
    """Base class for all neural network modules; subclasses define `forward`.

    Assign `Parameter`s, submodules and buffers (`register_buffer`) as attributes in `__init__`
    after calling `super().__init__()`; call the module (`model(x)`) rather than `model.forward(x)`
    so that hooks run.
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        _init_fields(self)
        d = self.__dict__
        d["_forward_pre_hooks"] = _HookDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks"] = _HookDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_backward_hooks"] = _HookDict()
        d["_backward_pre_hooks"] = _HookDict()

    def forward(self, *input):
        """The computation of the module; every subclass overrides it (call the module, not `forward`)."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- modes and conversions ------------------------------------------------------------------------
    @component("Module.train")
    def train(self, mode: bool = True):
        """Set training mode (dropout active, batch norm uses batch statistics) here and below."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.training = mode
        return self

    @component("Module.eval")
    def eval(self):
        """Set evaluation mode (same as `train(False)`)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set `requires_grad` of every parameter (freeze a model with `requires_grad_(False)`)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    @component("Module.zero_grad")
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, like PyTorch)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    @component("Module.apply")
    def apply(self, fn):
        """Call `fn(module)` on every submodule (children first) and on this module; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, floating_only=False):
        """Replace the data of every parameter, gradient and buffer by `fn(tensor)`, in place."""
        with no_grad():
            for m in self.modules():
                for table in (m._parameters, m._buffers):
                    for key, t in table.items():
                        if t is None or (floating_only and not t.is_floating_point()):
                            continue
                        t.data = fn(t)
                        if t.grad is not None:
                            t.grad.data = fn(t.grad)
        return self

    def to(self, *args, **kwargs):
        """Move parameters and buffers to a device and/or cast floating ones to a dtype, in place."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")

        def convert(t):
            if t.is_floating_point():
                return t.to(dtype=dtype, device=device)
            return t.to(device=device)

        return self._apply(convert)

    def share_memory(self):
        """Move parameters, gradients and buffers into shared memory (for Hogwild training with
        `tc.multiprocessing`), like `Module.share_memory`."""
        return self._apply(lambda t: t.share_memory_())

    def cpu(self):
        """Move parameters and buffers to the CPU, in place."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move parameters and buffers to the GPU (`device`, default the current one), in place."""
        return self.to("cuda" if device is None else device)

    def float(self):
        """Cast floating-point parameters and buffers to float32, in place."""
        return self.to(float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64, in place."""
        return self.to(float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16, in place."""
        return self.to(float16)

    # ---- printing -----------------------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self) -> str:
        """Extra text shown inside this module's parentheses in `repr` (override in layers)."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())
