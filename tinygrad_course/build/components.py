"""The components a learner builds: what each one is, which exercise writes it, and how the framework
calls it (its contract).

Each `Component` names the exercise cell that defines it (`exercise`, the nbgrader grade_id of the solution
cell), the name the learner's code binds there (`defines`) and the seam it fills (`seam`, see
`tinygrad_course/seams.py`). `adapt` turns the learner's object into the callable the seam expects: the
learner's `Mul` op class, written as the framework's own ops are, computes every float `a * b` where the
reference `Mul` ran (forward, and backward on its `MulBackward0` nodes).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import nn
from ..utils.data import DataLoader
from . import adapters, adapters_distributed, adapters_engine, adapters_factories, adapters_losses, adapters_random
from . import adapters_views
from . import adapters_tensor_object


@dataclass(frozen=True)
class Component:
    name: str            # the component's name in the status table
    chapter: str         # "01" ... "10"
    exercise: str        # grade_id of the solution cell that defines it, e.g. "ex02_1"
    defines: str         # the function or class the learner writes there
    seam: str            # the seam it fills (seams.install name)
    adapt: object        # learner object -> the callable installed in the seam
    contract: str        # one line: what the framework calls and what it must return
    notebook: str = ""   # the exercise notebook's file name, filled in below
    extra: tuple = field(default=())  # further learner names the adapter needs (same cell)
    also: tuple = ()     # later (chapter, grade_id) cells that define the same thing: the latest one wins
    checks: tuple = ()   # the names the cell's check(...) call passes, when more than `defines`
    pure: bool = False   # no side effects: when it raises at run time the reference can take the call over


NOTEBOOKS = {"01": "01_tensors.ipynb", "02": "02_autograd.ipynb", "03": "03_modules.ipynb", "04": "04_data.ipynb",
             "04b": "04b_optimizers.ipynb",
             "05": "05_training.ipynb", "06": "06_gpu.ipynb", "07": "07_saving.ipynb", "08": "08_debugging.ipynb",
             "05b": "05b_lab.ipynb", "09": "09_distributed.ipynb",
             "02b": "02b_ops.ipynb", "03b": "03b_inside_module.ipynb", "02d": "02d_engine.ipynb",
             "02c": "02c_tensor_methods.ipynb",
             "01b": "01b_tensor_object.ipynb", "10": "10_gpt.ipynb"}

# chapter 03b's Module: each method the learner writes and its contract (PyTorch's), in the class's order; the
# exercise cell that writes it is MODULE_CELLS' (03b.2 the class and its tables, 03b.3 and 03b.4 methods added to it)
MODULE_METHODS = (
    ("__init__", "(self) sets training=True and the empty _parameters, _buffers, _non_persistent_buffers_set and "
                 "_modules, without __setattr__"),
    ("__setattr__", "(self, name, value) puts a Parameter into _parameters, a Module into _modules, a tensor "
                    "assigned to a buffer's name into _buffers, anything else into __dict__"),
    ("__getattr__", "(self, name) -> the parameter, buffer or submodule called name, else AttributeError"),
    ("register_parameter", "(self, name, param) adds a Parameter (or None) under name, raising PyTorch's errors for "
                           "a dotted, empty or taken name, a value that is not a Parameter and a non-leaf; "
                           "__setattr__ registers every Parameter through it"),
    ("register_module", "(self, name, module) adds a child Module (or None) under name, raising PyTorch's errors for "
                        "a value that is not a Module and a taken, dotted or empty name; add_module is its alias"),
    ("register_buffer", "(self, name, tensor, persistent=True) adds a buffer; a non-persistent one stays out "
                        "of state_dict"),
    ("named_parameters", "(self, prefix='', recurse=True) yields (dotted name, parameter), each once, "
                         "over named_modules()"),
    ("parameters", "(self, recurse=True) yields the parameters of named_parameters()"),
    ("named_children", "(self) yields (name, module) of the direct submodules, each once"),
    ("children", "(self) yields the modules of named_children()"),
    ("named_modules", "(self, memo=None, prefix='') yields (dotted name, module) depth first, this module as "
                      "prefix, each once"),
    ("modules", "(self) yields the modules of named_modules()"),
    ("state_dict", "(self, destination=None, prefix='', keep_vars=False) -> dotted name -> detached parameter "
                   "or persistent buffer"),
    ("load_state_dict", "(self, state_dict, strict=True) copies the tensors in, raising PyTorch's errors for "
                        "missing, unexpected and mis-shaped keys -> (missing_keys, unexpected_keys)"),
    ("train", "(self, mode=True) sets training on this module and every child; returns self"),
    ("eval", "(self) is train(False)"),
    ("apply", "(self, fn) calls fn on every child (recursively), then on self; returns self"),
    ("zero_grad", "(self, set_to_none=True) sets every parameter's grad to None (or zeroes it)"),
)

LOSS_CELL = ("LogSoftmax", "nll_loss", "cross_entropy")  # what chapter 05's loss cell (05.6) defines and checks
SCHEDULE_CELL = ("LRScheduler", "CosineAnnealingLR", "LambdaLR")  # what chapter 04b's schedule cell (04b.4) checks
MODULE_CELL = ("Parameter", "Module")  # what chapter 03b's Module cells use (their checks take both)
MODULE_CELLS = {"ex03b_2": ("__init__", "__setattr__", "__getattr__", "register_parameter", "register_module",
                            "register_buffer"),
                "ex03b_3": ("named_parameters", "parameters", "named_children", "children", "named_modules", "modules"),
                "ex03b_4": ("state_dict", "load_state_dict", "train", "eval", "apply", "zero_grad")}
MODULE_CELL_OF = {attr: grade_id for grade_id, attrs in MODULE_CELLS.items() for attr in attrs}

# chapter 03's nn.init: each function the learner writes and its contract (PyTorch's)
INIT_FUNCTIONS = (
    ("_calculate_fan_in_and_fan_out", "(tensor) -> (fan_in, fan_out) of a weight (out, in, *kernel); every "
                                      "initialiser that scales by a fan asks it"),
    ("uniform_", "(tensor, a=0.0, b=1.0, generator=None) fills the tensor in place from U(a, b), returns it; "
                 "nn.init.uniform_ (every Linear's and Conv's bias)"),
    ("normal_", "(tensor, mean=0.0, std=1.0, generator=None) fills the tensor in place from N(mean, std^2); "
                "nn.init.normal_"),
    ("zeros_", "(tensor) fills the tensor with zeros in place; nn.init.zeros_"),
    ("kaiming_uniform_", "(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None) draws "
                         "U(-bound, bound), bound = sqrt(3) * gain / sqrt(fan); every Linear's and Conv's weight"),
    ("xavier_uniform_", "(tensor, gain=1.0, generator=None) draws U(-a, a), a = gain * sqrt(6 / (fan_in + "
                        "fan_out)); nn.init.xavier_uniform_"),
)
INIT = (*(name for name, _ in INIT_FUNCTIONS), "init_weights")  # what chapter 03's init cell defines and checks

MODULE_LIST_METHODS = (
    ("__init__", "(self, modules=None) registers the modules under '0', '1', ... (extend)"),
    ("__getitem__", "(self, idx) -> the idx-th module (negative from the end, IndexError out of range), or a new "
                    "ModuleList of a slice"),
    ("__len__", "(self) -> the number of modules"),
    ("__iter__", "(self) -> the modules in order"),
    ("append", "(self, module) registers module under str(len(self)); returns self"),
    ("extend", "(self, modules) appends each module, TypeError for a non-iterable; returns self"),
)
GPT_PIECES = ("Embedding", "ModuleList")  # what chapter 03's last component cell defines (its check takes both)

BACKWARD_CELL = ("topo_sort", "backward_pass", "root_gradient", "backward")  # what 02d.1's cell defines (its check takes all four)
NODE_CELL = ("sum_to_shape", "Node")  # what 02d.2's cell defines: a node's backward step and what it keeps
RECORDING_CELL = ("gradient_edge", "Function", "AccumulateGrad")  # what 02d.3's cell defines: recording, a leaf's node
PARAMETER_CELL = ("_make_subclass", "Parameter")  # what 03b.1's cell defines

# chapter 02b's ops: (cell, the op classes it defines); and what the framework runs each one for
OPS_02B_CELLS = (("ex02b_1", ("Softmax", "LogSoftmax")), ("ex02b_2", ("Gelu", "Dropout")),
                 ("ex02b_3", ("Embedding", "MaskedFill")), ("ex02b_4", ("Cat",)), ("ex02b_5", ("Transpose", "Expand")),
                 ("ex02b_6", ("Gather", "GetItem")), ("ex02b_7", ("View", "Clone", "Narrow")))
OPS_02B = tuple(op for _, ops in OPS_02B_CELLS for op in ops)
OPS_02B_RUNS = {"Softmax": "x.softmax(dim) and F.softmax(x, dim)",
                "LogSoftmax": "x.log_softmax(dim) and F.log_softmax(x, dim) without a dtype",
                "Gelu": "F.gelu and nn.GELU (both approximations)",
                "Dropout": "multiply of F.dropout and nn.Dropout by the mask they draw",
                "Embedding": "F.embedding and nn.Embedding lookup without a padding_idx",
                "MaskedFill": "x.masked_fill(mask, number)",
                "Cat": "tc.cat(tensors, dim) of one dtype and rank (a key/value cache; integer and bool tensors too: "
                       "generate's growing ids)",
                "Transpose": "x.transpose(dim0, dim1), x.t(), x.T and x.mT of a tensor of at least 1 dim (a view)",
                "Expand": "x.expand(*sizes) and x.expand_as(y) without -1 (a view)",
                "Gather": "x.gather(dim, index) with an index of x's sizes except along dim (nll_loss's pick)",
                "GetItem": "tensor's x[key] with ints, slices, None and ... (a view), or with one int64 index "
                           "tensor among full slices, x[idx] and x[:, idx] (a copy: a batch's rows); integer and bool "
                           "CPU tensors' too",
                "View": "x.view(*shape), x.reshape(*shape), x.squeeze(dim) and x.unsqueeze(dim) where the strides "
                        "allow a view (a view; reshape's copy is Clone then View)",
                "Clone": "x.clone() and x.contiguous() of a strided tensor (a row-major copy)",
                "Narrow": "x.narrow(dim, start, length) with start >= 0, and each piece of x.split and x.chunk (a view)"}

# chapter 01's tensor creation: what exercise 01.1's cell defines (its check takes all eight), the adapter and the
# contract of each
FACTORIES = ("tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "arange")
FACTORY_CONTRACTS = (
    ("tensor", adapters_factories.tensor,
     "tensor(data, *, dtype=None, device=None, requires_grad=False) -> a new CPU tensor holding a copy of a number, "
     "nested lists or a NumPy array (shape from the nesting, PyTorch's dtype inference and errors); every "
     "tc.tensor of such data runs it (a batch of labels in default_collate)"),
    ("zeros", adapters_factories.sized("zeros"), "zeros(*size, dtype=None, device=None, requires_grad=False) -> "
     "zeros of the shape, the default float dtype unless given; every tc.zeros of int sizes on the CPU runs it"),
    ("ones", adapters_factories.sized("ones"), "ones(*size, dtype=None, device=None, requires_grad=False) -> ones "
     "of the shape; every tc.ones of int sizes on the CPU runs it"),
    ("full", adapters_factories.full, "full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> "
     "fill_value everywhere, its dtype inferred from the value; every tc.full of a number on the CPU runs it"),
    ("empty", adapters_factories.sized("empty"), "empty(*size, dtype=None, device=None, requires_grad=False) -> a "
     "tensor of the shape with memory of its own (zero-filled here); every nn.Linear's weight is allocated by it"),
    ("zeros_like", adapters_factories.like("zeros_like"), "zeros_like(input, *, dtype=None, device=None, "
     "requires_grad=False) -> zeros of input's shape and dtype; every tc.zeros_like of a CPU tensor runs it"),
    ("ones_like", adapters_factories.like("ones_like"), "ones_like(input, *, dtype=None, device=None, "
     "requires_grad=False) -> ones of input's shape and dtype; every tc.ones_like of a CPU tensor runs it"),
    ("full_like", adapters_factories.like("full_like"), "full_like(input, fill_value, *, dtype=None, device=None, "
     "requires_grad=False) -> fill_value in input's shape and dtype; every tc.full_like of a CPU tensor runs it"),
    ("arange", adapters_factories.arange, "arange(start, end=None, step=1, *, dtype=None, device=None, "
     "requires_grad=False) -> start, start + step, ... before end (arange(n): 0 ... n - 1), int64 unless a bound is "
     "a float, PyTorch's errors; every tc.arange of numbers on the CPU runs it (the GPT's positions)"),
)

# chapter 02c.1's Tensor methods (the learner's class TensorOperators): each method and its contract (PyTorch's);
# build mode sets tc.Tensor's attribute to the learner's method (tensor.py offers them: seams.offer_methods)
_NUMBER = "a tensor, Python number, NumPy scalar or array (else NotImplemented)"
TENSOR_METHODS = (
    *((attr, f"(self, other) -> {text}, other {_NUMBER}; every tensor {symbol} runs it")
      for attr, text, symbol in (
          ("__add__", "Add.apply(self, other)", "a + b"), ("__radd__", "Add.apply(other, self)", "number + tensor"),
          ("__sub__", "Sub.apply(self, other)", "a - b"), ("__rsub__", "Sub.apply(other, self)", "number - tensor"),
          ("__mul__", "Mul.apply(self, other)", "a * b"), ("__rmul__", "Mul.apply(other, self)", "number * tensor"),
          ("__truediv__", "Div.apply(self, other)", "a / b"),
          ("__rtruediv__", "Div.apply(other, self)", "number / tensor"),
          ("__pow__", "Pow.apply(self, other)", "a ** b"))),
    ("__neg__", "(self) -> Neg.apply(self); every -x runs it"),
    ("__matmul__", "(self, other) -> matmul(self, other) of two tensors (else NotImplemented); every a @ b runs it"),
    *((name, f"(self) -> {op}.apply(self); every x.{name}() runs it")
      for name, op in (("exp", "Exp"), ("log", "Log"), ("tanh", "Tanh"), ("sqrt", "Sqrt"), ("relu", "Relu"),
                       ("sigmoid", "Sigmoid"))),
    ("view", "(self, *shape) -> View.apply(self, shape), shape as sizes or one tuple or list; every x.view(...)"),
    ("reshape", "(self, *shape) -> a view when the strides allow one, else a view of a row-major copy; every "
                "x.reshape(...)"),
    ("transpose", "(self, dim0, dim1) -> Transpose.apply(self, dim0, dim1); every x.transpose(...)"),
    ("t", "(self) -> the transpose of a matrix, x itself viewed for <= 1 dim, RuntimeError above 2; every x.t()"),
    ("T", "(self), a property -> every dim reversed (a matrix's transpose); every x.T, e.g. in F.linear"),
    ("mT", "(self), a property -> the last two dims swapped, RuntimeError below 2 dims; every x.mT"),
    ("expand", "(self, *sizes) -> Expand.apply(self, sizes), -1 keeps a size; every x.expand(...)"),
    ("unsqueeze", "(self, dim) -> Unsqueeze.apply(self, dim); every x.unsqueeze(dim)"),
    ("squeeze", "(self, dim=None) -> Squeeze.apply(self, dim); every x.squeeze(...)"),
    ("contiguous", "(self, memory_format=None) -> self when contiguous, else Clone.apply(self); every x.contiguous()"),
    ("clone", "(self, *, memory_format=None) -> Clone.apply(self); every x.clone()"),
)

# chapter 01b's TensorBase methods: (cell, the learner's class, each method and its contract, PyTorch's); build mode
# sets TensorBase's attribute to the learner's method (tensor_base.py offers them: seams.offer_methods)
BASE_METHOD_CELLS = (
    ("ex01b_1", "ShapeMethods", (
        ("shape", "(self), a property -> the array's shape as a tc.Size; every x.shape"),
        ("ndim", "(self), a property -> the number of dims; every x.ndim"),
        ("dim", "(self) -> the number of dims; every x.dim()"),
        ("numel", "(self) -> the number of elements, an int (1 for 0-d); every x.numel()"),
        ("size", "(self, dim=None) -> the shape (a tc.Size), or one dim's size, PyTorch's IndexError out of range; "
                 "every x.size(...)"),
        ("__len__", "(self) -> the size of dim 0, TypeError('len() of a 0-d tensor'); every len(x)"))),
    ("ex01b_2", "StrideMethods", (
        ("stride", "(self, dim=None) -> the strides in elements (a tuple; a size-1 dim None inserted gets the "
                   "contiguous stride), or one dim's; every x.stride(...)"),
        ("is_contiguous", "(self, memory_format=None) -> the strides are contiguous_strides(shape) wherever a dim "
                          "has more than one element (True without elements); every x.is_contiguous()"))),
    ("ex01b_3", "ValueMethods", (
        ("__bool__", "(self) -> the truth of the one element, PyTorch's RuntimeError for more than one or no "
                     "values; every bool(x) and `if x:`"),
        ("item", "(self) -> the one element as a Python number, RuntimeError otherwise; every x.item() of a CPU "
                 "tensor (not 16-bit floats)"),
        ("tolist", "(self) -> nested lists of Python numbers (a number for 0-d); every x.tolist() of a CPU tensor "
                   "(not 16-bit floats)"),
        ("numpy", "(self, *, force=False) -> the tensor's own array (no copy), PyTorch's RuntimeError while it "
                  "requires grad; every x.numpy() of a CPU tensor (force=True stays the reference's)"))),
    ("ex01b_4", "AutogradFields", (
        ("requires_grad", "(self), a property -> self._requires_grad (its setter stays requires_grad_(value)); "
                          "every x.requires_grad"),
        ("requires_grad_", "(self, requires_grad=True) -> self, the flag set on a leaf, PyTorch's errors for a "
                           "non-leaf asked for False and a dtype that is not floating point; every "
                           "x.requires_grad_(...) and x.requires_grad = ..."),
        ("is_leaf", "(self), a property -> no grad_fn; every x.is_leaf"),
        ("detach", "(self) -> a tensor over the same array sharing the version counter, without grad_fn or "
                   "requires_grad; every x.detach() (and x.data)"))),
    ("ex01b_5", "TensorPrinting", (
        ("__repr__", "(self) -> PyTorch's tensor([...]) text: elements in one format padded to one width, nested "
                     "brackets wrapped at 80 characters, the dtype, size, grad_fn or requires_grad suffixes; every "
                     "repr(x) and print(x) of a CPU tensor of at most 1000 elements with the default print options"),)),
)
# the ones that raise PyTorch's errors by design: an error of theirs is the program's, not a reason to leave them out
BASE_METHODS_RAISING = ("size", "__len__", "stride", "__bool__", "item", "numpy", "requires_grad_")
BASE_METHODS_01B = tuple(attr for _, _, methods in BASE_METHOD_CELLS for attr, _ in methods)
# chapter 02c.2's Tensor methods (the learner's class TensorMethods): reductions, comparisons, logical operators and
# conversions, each with its contract (PyTorch's); method slots as TENSOR_METHODS
_COMPARED = "a bool tensor (Compare.apply(self, other, op=...)), other a tensor, number or NumPy value, else NotImplemented"
_WRITTEN = "self._inplace(<the out-of-place op>.apply, ...) -> self, written in place"
TENSOR_REDUCTION_METHODS = (
    ("sum", "(self, dim=None, keepdim=False, *, dtype=None) -> SumAll (SumBackward0) over every element, else "
            "Sum (SumBackward1); every x.sum(...), the losses' and the optimizers'"),
    ("mean", "(self, dim=None, keepdim=False, *, dtype=None) -> MeanAll or Mean; every x.mean(...)"),
    ("max", "(self, dim=None, keepdim=False) -> the largest element, (values, indices) along dim, or the "
            "element-wise maximum with a tensor; every x.max(...)"),
    ("argmax", "(self, dim=None, keepdim=False) -> the index of the largest element; every x.argmax(...) "
               "(the accuracy of evaluate)"),
    *((name, f"(self, dim=None, keepdim=False) -> AllAny.apply(self, dim, keepdim, op={name!r}), bool; every "
             f"x.{name}(...)") for name in ("all", "any")),
    *((name, f"(self, other) -> {_COMPARED}; every x.{name}(y)") for name in ("eq", "ne", "lt", "le", "gt", "ge")),
    *((f"__{name}__", f"(self, other) -> self.{name}(other); every x {symbol} y")
      for name, symbol in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="))),
    *((f"__{name}__", f"(self, other) -> Bitwise.apply(self, other, op={name!r}) of bool or integer tensors, "
                      f"else NotImplemented; every mask {symbol} mask") for name, symbol in (("and", "&"), ("or", "|"))),
    ("__invert__", "(self) -> logical_not of a bool tensor, bitwise_not of an integer one; every ~mask"),
    ("to", "(self, *args, dtype=None, device=None, non_blocking=False, copy=False) -> self when nothing changes, "
           "else ToCopy.apply(self, dtype=..., device=..., copy=...); every x.to(...) on the CPU (the batches' and "
           "the labels' conversions)"),
    ("cpu", "(self) -> self.to('cpu'); every x.cpu()"),
    ("float", "(self) -> self.to(tc.float32); every x.float()"),
    ("long", "(self) -> self.to(tc.int64); every x.long()"),
)
# chapter 02c.3's Tensor methods (the learner's class TensorInplace): the in-place machinery and the in-place methods
# and operators, each with its contract (PyTorch's); method slots as TENSOR_METHODS
TENSOR_INPLACE_METHODS = (
    ("_check_inplace", "(self, through_view=False) raises PyTorch's RuntimeError for an in-place write into a leaf "
                       "that requires grad (or a view of one) while grad mode is on; every in-place write asks it"),
    ("_write", "(self, result) copies result's values into self's storage after PyTorch's casting and shape checks "
               "and bumps the version counter; every in-place write (also x[i] = v) ends in it"),
    ("_inplace", "(self, fn, *args, **kwargs) -> self: fn(self, ...) written into self, recorded (the op run on a "
                 "copy of the old values carrying self's history, self taking the result's node) when grad mode "
                 "is on and anything requires grad; every in-place method runs it (a view under grad mode stays the "
                 "reference's)"),
    *((name, f"{signature} -> {_WRITTEN}; every x.{name}(...), the optimizers' updates")
      for name, signature in (("add_", "(self, other, *, alpha=1)"), ("sub_", "(self, other, *, alpha=1)"),
                              ("mul_", "(self, other)"), ("div_", "(self, other)"),
                              ("addcmul_", "(self, tensor1, tensor2, *, value=1)"),
                              ("addcdiv_", "(self, tensor1, tensor2, *, value=1)"), ("lerp_", "(self, end, weight)"))),
    ("zero_", "(self) -> self filled with zeros (Overwrite, ZeroBackward0); every x.zero_(), "
              "zero_grad(set_to_none=False)'s"),
    ("fill_", "(self, value) -> self filled with value (Overwrite); every x.fill_(value)"),
    ("copy_", "(self, src, non_blocking=False) -> src's values (broadcast, converted) in self (CopyBackwards); "
              "every x.copy_(src), load_state_dict's"),
    *((f"__i{name}__", f"(self, other) -> self.{name}_(other); every x {symbol}= y")
      for name, symbol in (("add", "+"), ("sub", "-"), ("mul", "*"))),
    ("__itruediv__", "(self, other) -> self.div_(other); every x /= y"),
)

# those that write (a second run by the reference after an error of theirs could write twice: their error is raised)
WRITING = ("_write", "_inplace", "add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "lerp_", "zero_", "fill_",
           "copy_", "__iadd__", "__isub__", "__imul__", "__itruediv__")

LAYERS = ("Linear", "Tanh", "ReLU", "Sequential")  # what chapter 03's first cell defines (its check takes all four)

# chapter 01b's type promotion (exercise 01b.6): both functions in one cell, each its own seam in dtypes.py
PROMOTION_CONTRACTS = (
    ("promote_types", "promote_types(type1, type2) -> the smallest dtype both convert to (torch.promote_types), "
                      "TypeError for a non-dtype; result_type and tc.promote_types use it"),
    ("result_type", "result_type(*operands) -> the dtype of an op on tensors, 0-d tensors and Python numbers "
                    "(torch.result_type), TypeError for complex and non-numbers; every mixed-dtype op asks it"),
)

_COMPONENTS = [
    *[Component(name, "01", "ex01_1", name, name, adapt, contract, checks=FACTORIES, pure=True)
      for name, adapt, contract in FACTORY_CONTRACTS],
    *[Component(f"Tensor.{attr}", "01b", grade_id, cls, f"Tensor.{attr}", adapters_tensor_object.base_method(attr),
                f"{cls}.{attr}{contract}", pure=attr not in BASE_METHODS_RAISING)
      for grade_id, cls, methods in BASE_METHOD_CELLS for attr, contract in methods],
    *[Component(name, "01b", "ex01b_6", name, name, adapters.same, contract, checks=("promote_types", "result_type"),
                pure=True) for name, contract in PROMOTION_CONTRACTS],
    Component("storage_index", "01", "ex01_4", "storage_index", "storage_index", adapters.same,
              "storage_index(index, strides, offset) -> storage position of one element; as_strided checks its last"),
    Component("pick", "01", "ex01_7", "pick", "pick", adapters.pick,
              "pick(scores, labels) -> scores[i, labels[i]] per row; nll_loss takes each target's log-probability", pure=True),
    Component("contiguous_strides", "01", "ex01_3", "contiguous_strides", "contiguous_strides", adapters.same,
              "contiguous_strides(shape) -> tuple of row-major strides; Tensor.is_contiguous() compares with it", pure=True),
    Component("broadcast_shapes", "01", "ex01_5", "broadcast_shape", "broadcast_shapes", adapters.broadcast_shapes,
              "broadcast_shape(a, b) -> the broadcast shape, ValueError if incompatible; tc.broadcast_shapes folds it", pure=True),
    Component("view_strides", "01", "ex01_9", "view_strides", "view_strides", adapters_views.view_strides,
              "view_strides(shape, strides, new_shape) -> the view's strides, or None when none exist; view and "
              "reshape make their view from them", pure=True),
    Component("permute_strides", "01", "ex01_10", "permute_strides", "permute_strides", adapters_views.permute_strides,
              "permute_strides(shape, strides, dims) -> (shape, strides) of the permuted view; permute, transpose, "
              "t() and .T make their view from them", pure=True, checks=("permute_strides", "expand_strides")),
    Component("expand_strides", "01", "ex01_10", "expand_strides", "expand_strides", adapters_views.expand_strides,
              "expand_strides(shape, strides, new_shape) -> the expanded view's strides (0 where stretched); expand "
              "makes its view from them", pure=True, checks=("permute_strides", "expand_strides")),
    Component("index_view", "01", "ex01_11", "index_view", "index_view", adapters_views.index_view,
              "index_view(shape, strides, offset, index) -> (shape, strides, offset) of x[index] for ints and "
              "slices; basic indexing makes its view from them", pure=True),
    Component("storage_positions", "01", "ex01_12", "storage_positions", "storage_positions",
              adapters_views.storage_positions,
              "storage_positions(shape, strides, offset) -> every element's storage position, an int64 tensor of "
              "the view's shape; contiguous() (and reshape's copy) reads the storage there", pure=True),
    # chapter 02: the ops, each a class with forward (on arrays) and backward (tensor ops), as ops/ writes them
    *[Component(op, "02", "ex02_1", op, op, adapters.op,
                f"{op}.forward(ctx, a, b) on NumPy arrays -> the result array, {op}.backward(ctx, grad) -> the grads of "
                f"a and b; every float {op} of tensors (or a tensor and a number) runs it",
                checks=("Add", "Sub", "Mul", "Div", "Pow"), pure=True) for op in ("Add", "Sub", "Mul", "Div")],
    Component("Pow", "02", "ex02_1", "Pow", "Pow", adapters.op,
              "Pow.forward(ctx, a, exponent) on a NumPy array and a number, Pow.backward(ctx, grad) -> (grad of a, "
              "None); every float tensor ** number runs it", checks=("Add", "Sub", "Mul", "Div", "Pow"), pure=True),
    *[Component(op, "02", "ex02_2", op, op, adapters.op,
                f"{op}.forward(ctx, x) on a NumPy array, {op}.backward(ctx, grad) -> the grad of x; every float "
                f"{op.lower()} runs it", checks=("Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid"), pure=True)
      for op in ("Neg", "Exp", "Log", "Tanh", "Relu", "Sigmoid")],
    Component("Matmul", "02", "ex02_3", "Matmul", "Matmul", adapters.op,
              "Matmul.forward(ctx, a, b) on NumPy arrays of 2 or more dims, Matmul.backward(ctx, grad) -> the grads "
              "of a and b; every float mm, bmm and batched a @ b runs it", checks=("Matmul", "Sum", "Mean", "Max"),
              pure=True),
    *[Component(op, "02", "ex02_3", op, op, adapters.op,
                f"{op}.forward(ctx, x, dim, keepdim) on a NumPy array, {op}.backward(ctx, grad) -> the grad of x; "
                f"every float x.{op.lower()}() and x.{op.lower()}(dim, keepdim) runs it"
                + (" (and the int64 count x.sum(...) of a bool or integer x)" if op == "Sum" else ""),
                checks=("Matmul", "Sum", "Mean", "Max"), pure=True) for op in ("Sum", "Mean")],
    Component("Max", "02", "ex02_3", "Max", "Max", adapters.op,
              "Max.forward(ctx, x, dim=None, keepdim=False) on a NumPy array -> the largest element, or with an int "
              "dim (values, indices); Max.backward(ctx, grad, grad_indices) -> the grad of x; every float x.max(), "
              "x.max(dim, keepdim) and x.argmax(...) runs it", checks=("Matmul", "Sum", "Mean", "Max"), pure=True),
    # chapter 02b: the ops a model needs, the same shape as chapter 02's
    *[Component(op, "02b", grade_id, op, op, adapters.op,
                f"{op}.forward(ctx, ...) on NumPy arrays as the framework's {op} op takes them, {op}.backward(ctx, "
                f"grad) -> the grad of each input; every float {OPS_02B_RUNS[op]} runs it", checks=ops, pure=True)
      for grade_id, ops in OPS_02B_CELLS for op in ops],
    # chapter 02c: Tensor's operators and methods, one learner class per cell
    *[Component(f"Tensor.{attr}", "02c", "ex02c_1", "TensorOperators", f"Tensor.{attr}", adapters.tensor_method(attr),
                f"TensorOperators.{attr}{contract}", pure=True) for attr, contract in TENSOR_METHODS],
    *[Component(f"Tensor.{attr}", "02c", "ex02c_2", "TensorMethods", f"Tensor.{attr}",
                adapters.tensor_inplace_method(attr), f"TensorMethods.{attr}{contract}", pure=True)
      for attr, contract in TENSOR_REDUCTION_METHODS],
    *[Component(f"Tensor.{attr}", "02c", "ex02c_3", "TensorInplace", f"Tensor.{attr}",
                adapters.tensor_inplace_method(attr), f"TensorInplace.{attr}{contract}", pure=attr not in WRITING)
      for attr, contract in TENSOR_INPLACE_METHODS],
    Component("topological_sort", "02d", "ex02d_1", "topo_sort", "topological_sort", adapters.same,
              "topo_sort(root) -> every node reachable from root, each before its next_functions; backward runs in it",
              checks=BACKWARD_CELL),
    Component("backward_pass", "02d", "ex02d_1", "backward_pass", "backward_pass", adapters.same,
              "backward_pass(root, grad, retain_graph=False) runs every node below root once, in topological order, "
              "summing what reaches each, and frees each node after it ran unless retain_graph; tensor.backward() "
              "runs it (one output, no hooks or create_graph)",
              checks=BACKWARD_CELL),
    Component("root_gradient", "02d", "ex02d_1", "root_gradient", "root_gradient", adapters_engine.root_gradient,
              "root_gradient(output, gradient=None) -> the gradient output.backward(gradient) starts from: "
              "ones_like(output) for a one-element float output, the given tensor checked against the output's "
              "shape, PyTorch's errors otherwise; every backward() from one output runs it",
              checks=BACKWARD_CELL, pure=True),
    Component("Tensor.backward", "02d", "ex02d_1", "backward", "Tensor.backward", adapters_engine.tensor_backward,
              "backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) starts from "
              "root_gradient(self, gradient) and runs backward_pass from self's node (a leaf's AccumulateGrad) "
              "without recording a graph; every plain tensor.backward() runs it (no create_graph, inputs= or hooks)",
              checks=BACKWARD_CELL),
    *[Component(name, "02d", "ex02d_2" if name.startswith("Node.") else "ex02d_3", name.split(".")[0], name, adapt,
                contract, checks=NODE_CELL if name.startswith("Node.") else RECORDING_CELL, pure=pure)
      for name, adapt, pure, contract in (
          ("Function.apply", adapters_engine.function_apply, True,
           "Function.apply(cls, *args) runs cls.forward on the arrays, wraps the result and, when gradients are "
           "enabled and an input requires grad, records its grad_fn = cls._backward_cls() with next_functions, "
           "input_metadata and needs_input_grad; every call of your ops is recorded by it"),
          ("Node.apply", adapters_engine.node_apply, True,
           "Node.apply(self, *grad_outputs) runs self._forward_cls.backward and returns one gradient per entry of "
           "next_functions, summed to its input's shape and cast to its dtype; the nodes of your ops run it"),
          ("AccumulateGrad.__init__", adapters_engine.accumulate_grad_init, False,
           "AccumulateGrad(variable) keeps the leaf in self.variable, next_functions = () and self._seq = inf (run as "
           "soon as its gradient is complete); grad_accumulator makes every leaf's node with it"),
          ("AccumulateGrad.apply", adapters_engine.accumulate_grad, False,
           "AccumulateGrad.apply(self, grad) sets self.variable.grad to a copy of the first gradient and adds later "
           "ones in place; every leaf without hooks, outside create_graph"),
          ("Node.save_for_backward", adapters_engine.save_for_backward, False,
           "Node.save_for_backward(self, *tensors) keeps them in self._saved and each tensor's version "
           "(t._version[0], None for a number) in self._saved_versions; every op's forward saves through it"),
          ("Node.saved_tensors", adapters_engine.saved_tensors, True,
           "Node.saved_tensors (a property) -> self._saved, PyTorch's RuntimeError for a released node and for a "
           "saved tensor modified in place since; every op's backward reads it (a custom Function's saved output "
           "under create_graph or modified in place stays the reference's)"),
          ("Node.saved_output", adapters_engine.saved_output, True,
           "Node.saved_output (a property) -> self._out_alias, PyTorch's RuntimeError for a released node and for an "
           "output modified in place since (named output 0 of the node's op); the backward of every op that sets "
           "ctx.save_output reads it (under create_graph it stays the reference's, which links it back to the node)"),
          ("Node.release_variables", adapters_engine.release_variables, False,
           "Node.release_variables(self) drops self._saved and sets self._released; every node a backward pass ran "
           "without retain_graph (what an op keeps outside save_for_backward the reference frees after it)"))],
    Component("numerical_grad", "02", "ex02_4", "numerical_grad", "numerical_jacobian", adapters.numerical_grad,
              "numerical_grad(f, x, eps) -> central differences of scalar f at x; tc.autograd.gradcheck compares with it",
              checks=("numerical_grad", "gradient_check")),
    Component("Linear.__init__", "03", "ex03_1", "Linear", "Linear.__init__", adapters.method(nn.Linear, "__init__"),
              "Linear(in_features, out_features, bias=True, device=None, dtype=None) registers weight (out, in) and "
              "bias (or None), then calls reset_parameters(); every nn.Linear is built by it", checks=LAYERS),
    Component("Linear.reset_parameters", "03", "ex03_1", "Linear", "Linear.reset_parameters",
              adapters.method(nn.Linear, "reset_parameters"),
              "reset_parameters(self) draws weight and bias uniformly in +-1/sqrt(in_features); nn.Linear's",
              checks=LAYERS),
    Component("Linear.forward", "03", "ex03_1", "Linear", "Linear.forward", adapters.linear_forward,
              "Linear.forward(self, x) -> x @ weight.T + bias; nn.Linear's forward runs it", pure=True, checks=LAYERS),
    Component("Tanh.forward", "03", "ex03_1", "Tanh", "Tanh.forward", adapters.method(nn.Tanh, "forward"),
              "Tanh.forward(self, input) -> tanh of every element; every nn.Tanh runs it", checks=LAYERS),
    Component("ReLU.forward", "03", "ex03_1", "ReLU", "ReLU.forward", adapters.method(nn.ReLU, "forward"),
              "ReLU.forward(self, input) -> max(input, 0), in place when self.inplace; every nn.ReLU runs it",
              checks=LAYERS),
    Component("Sequential.__init__", "03", "ex03_1", "Sequential", "Sequential.__init__",
              adapters.method(nn.Sequential, "__init__"),
              "Sequential(*modules) or Sequential(OrderedDict) registers them under '0', '1', ... (or the dict's "
              "names); every nn.Sequential is built by it", checks=LAYERS),
    Component("Sequential.forward", "03", "ex03_1", "Sequential", "Sequential.forward",
              adapters.method(nn.Sequential, "forward"),
              "Sequential.forward(self, input) feeds input through each module in order; every nn.Sequential",
              checks=LAYERS),
    Component("Sequential.__getitem__", "03", "ex03_1", "Sequential", "Sequential.__getitem__",
              adapters.method(nn.Sequential, "__getitem__"),
              "Sequential[i] -> the i-th module (negative i from the end, IndexError out of range), "
              "Sequential[a:b] -> a new Sequential; every nn.Sequential", checks=LAYERS),
    Component("Tensor._make_subclass", "03b", "ex03b_1", "_make_subclass", "Tensor._make_subclass", adapters.same,
              "_make_subclass(cls, data, require_grad=False) -> object.__new__(cls) with data's storage fields and "
              "version counter and a fresh leaf's autograd fields, PyTorch's errors for a cls that is not a Tensor "
              "class, data that is not a tensor and integer data that should require grad; tc.Tensor._make_subclass "
              "(a slot), so every nn.Parameter and Tensor subclass is made by it", checks=PARAMETER_CELL, pure=True),
    Component("Parameter.__new__", "03b", "ex03b_1", "Parameter", "Parameter.__new__",
              adapters.method(nn.Parameter, "__new__"),
              "Parameter(data=None, requires_grad=True) -> a leaf of cls sharing data's storage (an empty tensor "
              "for None), by _make_subclass; every nn.Parameter a layer makes is made by it", checks=PARAMETER_CELL),
    Component("Parameter.__repr__", "03b", "ex03b_1", "Parameter", "Parameter.__repr__",
              adapters.method(nn.Parameter, "__repr__"),
              "repr(parameter) -> 'Parameter containing:\\n' + the tensor's repr; print(model.weight) shows it",
              pure=True, checks=PARAMETER_CELL),
    *[Component(f"Module.{attr}", "03b", MODULE_CELL_OF[attr], "Module", f"Module.{attr}", adapters.module_method(attr),
                f"Module.{attr}{contract}; every nn.Module runs it", checks=MODULE_CELL)
      for attr, contract in MODULE_METHODS],
    Component("Dropout.__init__", "03", "ex03_2", "Dropout", "Dropout.__init__", adapters.method(nn.Dropout, "__init__"),
              "Dropout(p=0.5, inplace=False) keeps p and inplace, ValueError for p outside [0, 1]; every nn.Dropout "
              "(and its channel-wise and alpha variants) is built by it"),
    Component("Dropout.forward", "03", "ex03_2", "Dropout", "Dropout.forward", adapters.dropout_forward,
              "Dropout.forward(self, x) -> x with elements zeroed (p) and the rest scaled by 1/(1-p) in training"),
    *[Component(f"init.{name}", "03", "ex03_4", name, f"init.{name}", adapters.same, f"{name}{contract}",
                checks=INIT, pure=name == "_calculate_fan_in_and_fan_out") for name, contract in INIT_FUNCTIONS],
    Component("init_weights", "03", "ex03_4", "init_weights", "init_weights", adapters.same,
              "init_weights(module) for model.apply: Kaiming-normal Linear weights, zero biases; the lab initialises with it",
              checks=INIT),
    Component("LayerNorm.__init__", "03", "ex03_3", "LayerNorm", "LayerNorm.__init__",
              adapters.method(nn.LayerNorm, "__init__"),
              "LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None) "
              "registers weight (ones) and bias (zeros), or None; every nn.LayerNorm is built by it"),
    Component("LayerNorm.forward", "03", "ex03_3", "LayerNorm", "LayerNorm.forward",
              adapters.method(nn.LayerNorm, "forward"),
              "LayerNorm.forward(self, input) -> (x - mean) / sqrt(var + eps) * weight + bias over the last "
              "len(normalized_shape) dims; every nn.LayerNorm runs it"),
    Component("Embedding.__init__", "03", "ex03_5", "Embedding", "Embedding.__init__",
              adapters.method(nn.Embedding, "__init__"),
              "Embedding(num_embeddings, embedding_dim, padding_idx=None, ..., _weight=None, _freeze=False, device=None, "
              "dtype=None) keeps the settings and registers the weight (then reset_parameters()); every nn.Embedding "
              "is built by it", checks=GPT_PIECES),
    Component("Embedding.reset_parameters", "03", "ex03_5", "Embedding", "Embedding.reset_parameters",
              adapters.method(nn.Embedding, "reset_parameters"),
              "reset_parameters(self) draws the weight from N(0, 1), the padding_idx row zero; nn.Embedding's",
              checks=GPT_PIECES),
    Component("Embedding.forward", "03", "ex03_5", "Embedding", "Embedding.forward", adapters.embedding_forward,
              "Embedding.forward(self, input) -> the weight's rows at the integer indices, shape input.shape + "
              "(embedding_dim,); nn.Embedding's forward without padding_idx or max_norm", pure=True,
              checks=GPT_PIECES),
    *[Component(f"ModuleList.{attr}", "03", "ex03_5", "ModuleList", f"ModuleList.{attr}",
                adapters.method(nn.ModuleList, attr), f"ModuleList.{attr}{contract}; every nn.ModuleList runs it",
                checks=GPT_PIECES) for attr, contract in MODULE_LIST_METHODS],
    Component("ClassificationDataset", "04", "ex04_1", "ClassificationDataset", "ClassificationDataset", adapters.same,
              "ClassificationDataset(features, labels)[i] -> (float32 features, class index); the lab's data"),
    Component("SequentialSampler.__init__", "04", "ex04_2", "SequentialSampler", "SequentialSampler.__init__",
              adapters.own_method("__init__"), "SequentialSampler.__init__(self, data_source) keeps data_source; every "
              "DataLoader without shuffle builds one", checks=("SequentialSampler", "RandomSampler")),
    Component("RandomSampler.__init__", "04", "ex04_2", "RandomSampler", "RandomSampler.__init__",
              adapters.own_method("__init__"), "RandomSampler.__init__(self, data_source, replacement=False, "
              "num_samples=None, generator=None) keeps them (num_samples as _num_samples) and raises PyTorch's TypeError "
              "for a non-bool replacement, ValueError for num_samples not a positive int; every shuffling DataLoader "
              "builds one", checks=("SequentialSampler", "RandomSampler")),
    Component("RandomSampler.num_samples", "04", "ex04_2", "RandomSampler", "RandomSampler.num_samples",
              adapters.own_property("num_samples"), "RandomSampler.num_samples (a property) -> len(data_source) "
              "unless num_samples was given; every RandomSampler's epoch is that long", pure=True,
              checks=("SequentialSampler", "RandomSampler")),
    Component("SequentialSampler.__iter__", "04", "ex04_2", "SequentialSampler", "SequentialSampler.__iter__",
              adapters.own_method("__iter__"), "SequentialSampler.__iter__(self) -> the indices 0..len(data_source)-1 in "
              "order; every DataLoader without shuffle draws its indices from it",
              checks=("SequentialSampler", "RandomSampler")),
    Component("RandomSampler.__iter__", "04", "ex04_2", "RandomSampler", "RandomSampler.__iter__",
              adapters.random_sampler_iter, "RandomSampler.__iter__(self) yields num_samples indices from "
              "tc.randperm(n, generator=...) as PyTorch draws them; every shuffling DataLoader's order (without "
              "replacement)", checks=("SequentialSampler", "RandomSampler")),
    Component("SequentialSampler.__len__", "04", "ex04_2", "SequentialSampler", "SequentialSampler.__len__",
              adapters.own_method("__len__"), "SequentialSampler.__len__(self) -> len(data_source); len(DataLoader) "
              "without shuffle counts it", pure=True, checks=("SequentialSampler", "RandomSampler")),
    Component("RandomSampler.__len__", "04", "ex04_2", "RandomSampler", "RandomSampler.__len__",
              adapters.own_method("__len__"), "RandomSampler.__len__(self) -> self.num_samples; len(DataLoader) with "
              "shuffle counts it", pure=True, checks=("SequentialSampler", "RandomSampler")),
    Component("make_loaders", "04", "ex04_5", "make_loaders", "make_loaders", adapters.same,
              "make_loaders(train_set, val_set, batch_size, seed) -> (seeded shuffled loader, ordered loader); the lab's"),
    Component("default_collate", "04", "ex04_7", "collate", "default_collate", adapters.same,
              "collate(batch) -> one batch by default_collate's rules; every DataLoader without a collate_fn calls it"),
    Component("BatchSampler.__init__", "04", "ex04_8", "BatchSampler", "BatchSampler.__init__",
              adapters.own_method("__init__"), "BatchSampler.__init__(self, sampler, batch_size, drop_last) keeps them "
              "and raises PyTorch's ValueErrors for a batch_size not a positive int, a drop_last not a bool; every "
              "DataLoader with a batch_size builds one"),
    Component("BatchSampler.__iter__", "04", "ex04_8", "BatchSampler", "BatchSampler.__iter__",
              adapters.own_method("__iter__"), "BatchSampler.__iter__(self) yields lists of batch_size indices of "
              "self.sampler (the last shorter unless drop_last); every DataLoader with a batch_size iterates it"),
    Component("BatchSampler.__len__", "04", "ex04_8", "BatchSampler", "BatchSampler.__len__",
              adapters.own_method("__len__"), "BatchSampler.__len__(self) -> batches per epoch; len(DataLoader) (the "
              "lab's cosine schedule is that long)", pure=True),
    Component("DataLoader.__init__", "04", "ex04_9", "DataLoader", "DataLoader.__init__", adapters.dataloader_init,
              "DataLoader.__init__(self, dataset, batch_size, shuffle, sampler, batch_sampler, collate_fn, drop_last, "
              "generator) sets sampler, batch_sampler and collate_fn as PyTorch's (its errors included); every "
              "DataLoader without worker processes is built by it"),
    Component("DataLoader.__setattr__", "04", "ex04_9", "DataLoader", "DataLoader.__setattr__",
              adapters.method(DataLoader, "__setattr__"), "DataLoader.__setattr__(self, attr, val) sets the attribute, "
              "raising PyTorch's ValueError for batch_size, batch_sampler, sampler, drop_last, dataset and "
              "persistent_workers once the constructor has set self.__initialized; every DataLoader's attributes"),
    Component("DataLoader.__iter__", "04", "ex04_9", "DataLoader", "DataLoader.__iter__", adapters.dataloader_iter,
              "DataLoader.__iter__(self) yields collate_fn of the samples of each batch of indices; every DataLoader "
              "of a map-style dataset without workers iterates it"),
    Component("DataLoader.__len__", "04", "ex04_9", "DataLoader", "DataLoader.__len__", adapters.dataloader_len,
              "DataLoader.__len__(self) -> the length of its batch sampler (or sampler); len(DataLoader) of a map-style "
              "dataset", pure=True),
    # chapter 04's random draws: the learner's Generator methods become tc.Generator's own (method slots)
    *[Component(f"Generator.{attr}", "04", "ex04_10", "Generator", f"Generator.{attr}",
                adapters_random.generator_method(attr), f"Generator.{attr}{contract}") for attr, contract in (
        ("uniform", "(self, a, b, shape, dtype) -> U(a, b) values as PyTorch draws them: 24 bits of a word per float32 "
                    "(53 of a 64-bit one per float64), x * (b - a) + a rounded once, in [a, b); every tc.rand, "
                    "uniform_ and nn.init's uniform draws (so every nn.Linear's initial weights) run it"),
        ("normal", "(self, mean, std, shape, dtype, contiguous=True) -> N(mean, std^2) values by PyTorch's Box-Muller "
                   "(blocks of 16, the last 16 drawn again; one at a time with the cached second value below 16); "
                   "every tc.randn and normal_ (the lab's init_weights) runs it"),
        ("permutation", "(self, n) -> torch.randperm's permutation of 0..n-1 (int64), Fisher-Yates swaps with "
                        "PyTorch's draws; every tc.randperm, so every shuffling DataLoader's order, runs it"))],
    Component("Optimizer", "04b", "ex04b_1", "Optimizer", "Optimizer", adapters.optimizer_base,
              "Optimizer(params, defaults): param_groups (defaults filled in), state, add_param_group, zero_grad, "
              "state_dict/load_state_dict in PyTorch's layout; every tc.optim optimizer's base methods run it"),
    Component("SGD.step", "04b", "ex04b_2", "SGD", "SGD.step", adapters.sgd_step,
              "SGD(params, lr, momentum, dampening, weight_decay, nesterov).step() over self.param_groups, the "
              "velocity in self.state[p]['momentum_buffer']; tc.optim.SGD steps through it"),
    Component("Adam.step", "04b", "ex04b_3", "Adam", "Adam.step", adapters.adam_step,
              "Adam(params, lr, betas, eps, weight_decay, amsgrad, decoupled_weight_decay).step(), moments in "
              "self.state[p]; tc.optim.Adam and AdamW (Adam with decoupled_weight_decay) step through it",
              checks=("Adam", "AdamW")),
    Component("LRScheduler", "04b", "ex04b_4", "LRScheduler", "LRScheduler", adapters.lr_scheduler_base,
              "LRScheduler(optimizer, last_epoch): __init__ (initial_lr, base_lrs, the rates of step 0), step() sets "
              "each group's lr from get_lr(), get_last_lr, state_dict/load_state_dict; every "
              "tc.optim.lr_scheduler scheduler's base methods run it", checks=SCHEDULE_CELL),
    Component("CosineAnnealingLR.get_lr", "04b", "ex04b_4", "CosineAnnealingLR", "CosineAnnealingLR.get_lr",
              adapters.cosine_get_lr,
              "CosineAnnealingLR(optimizer, T_max, eta_min).get_lr() -> the lrs on the cosine at last_epoch; "
              "optim.lr_scheduler.CosineAnnealingLR (the lab's schedule) sets them", pure=True,
              checks=SCHEDULE_CELL),
    Component("LambdaLR.__init__", "04b", "ex04b_4", "LambdaLR", "LambdaLR.__init__", adapters.lambda_lr_init,
              "LambdaLR(optimizer, lr_lambda, last_epoch) keeps one function per group in lr_lambdas (PyTorch's "
              "ValueError for a list of the wrong length), then the base's __init__; every "
              "optim.lr_scheduler.LambdaLR is built by it", checks=SCHEDULE_CELL),
    Component("LambdaLR.get_lr", "04b", "ex04b_4", "LambdaLR", "LambdaLR.get_lr", adapters.own_method("get_lr"),
              "LambdaLR(optimizer, lr_lambda).get_lr() -> each group's base_lr times its lr_lambda(last_epoch); "
              "optim.lr_scheduler.LambdaLR (the GPT's warmup and cosine) sets them", pure=True,
              checks=SCHEDULE_CELL),
    Component("train_step", "05", "ex05_1", "train_step", "train_step", adapters.same,
              "train_step(model, optimizer, loss_fn, x, y) -> loss as a float, after one step; the lab's loop calls it"),
    Component("clip_grad_norm_", "05", "ex05_2", "clip_grad_norm_", "clip_grad_norm_", adapters.clip_grad_norm,
              "clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite) -> the norm before clipping, a "
              "tensor; nn.utils.clip_grad_norm_ runs it"),
    Component("log_softmax", "05", "ex05_6", "LogSoftmax", "log_softmax", adapters.log_softmax,
              "LogSoftmax.apply(x, dim) -> x - logsumexp(x, dim) computed stably, its backward -> the grad of x; "
              "F.log_softmax runs it (the lab's loss)", pure=True, checks=LOSS_CELL),
    Component("nll_loss", "05", "ex05_6", "nll_loss", "nll_loss", adapters_losses.nll_loss,
              "nll_loss(input, target, weight, ignore_index, reduction) -> the negative log-likelihood of class "
              "indices, (N, C) or (N, C, d1, ...), reduced over the targets that count; F.nll_loss runs it (the "
              "lab's loss)", pure=True, checks=LOSS_CELL),
    Component("cross_entropy", "05", "ex05_6", "cross_entropy", "cross_entropy", adapters_losses.cross_entropy,
              "cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing) -> nll_loss of "
              "log_softmax(input, 1), smoothed; F.cross_entropy and nn.CrossEntropyLoss run it (evaluate, the GPT)",
              pure=True, checks=LOSS_CELL),
    Component("evaluate", "05", "ex05_3", "evaluate", "evaluate", adapters.same,
              "evaluate(model, loader) -> (mean cross-entropy, accuracy) in eval mode without a graph; the lab reports it",
              also=(("05b", "ex05b_5"),)),
    Component("Conv2d.forward", "05b", "ex05b_7", "Conv2dFunction", "Conv2d.forward", adapters.conv2d_forward,
              "Conv2dFunction.apply(x, weight, bias, stride, padding) -> (N, O, H', W'), its backward -> the grads of "
              "x, weight, bias; nn.Conv2d runs it (the lab's CNN)", pure=True),
    Component("MaxPool2d.forward", "05b", "ex05b_8", "MaxPool2dFunction", "MaxPool2d.forward",
              adapters.max_pool2d_forward,
              "MaxPool2dFunction.apply(x, kernel_size, stride) -> window maxima, its backward -> the grad of x; "
              "nn.MaxPool2d runs it (the lab's CNN)", pure=True),
    Component("to_device", "06", "ex06_1", "to_device", "to_device", adapters.same,
              "to_device(obj, device) -> obj with every nested tensor moved; the lab moves each batch with it"),
    Component("momentum_update", "06", "ex06_3", "momentum_update", "momentum_update", adapters.same,
              "momentum_update(p, g, buf, lr, momentum) updates arrays in place; tc.optim.SGD's heavy-ball step",
              checks=("momentum_update", "momentum_kernel_body")),
    Component("update_scale", "06", "ex06_4", "update_scale", "update_scale", adapters.update_scale,
              "update_scale(scale, tracker, found_inf, ...) -> (scale, tracker); GradScaler.update applies it"),
    Component("save_checkpoint", "07", "ex07_1", "save_checkpoint", "save_checkpoint", adapters.same,
              "save_checkpoint(path, model, optimizer, scheduler, epoch) writes one file; the resume milestone calls it",
              checks=("save_checkpoint", "load_checkpoint")),
    Component("load_checkpoint", "07", "ex07_1", "load_checkpoint", "load_checkpoint", adapters.same,
              "load_checkpoint(path, model, optimizer, scheduler) -> epoch, restoring every state in place",
              checks=("save_checkpoint", "load_checkpoint")),
    Component("grad_norms", "08", "ex08_1", "grad_norms", "grad_norms", adapters.same,
              "grad_norms(model) -> {name: gradient L2 norm}; tc.debugging.grad_stats's norm column"),
    Component("first_nonfinite_module", "08", "ex08_2", "first_nonfinite_module", "first_nonfinite_module", adapters.same,
              "first_nonfinite_module(model, x) -> name of the first submodule with NaN/Inf output; tc.debugging's"),
    # chapter 09: the collectives DistributedDataParallel runs on, and DistributedSampler's shards
    Component("shard", "09", "ex09_2", "shard", "shard", adapters.same,
              "shard(indices, rank, world_size) -> rank's padded, strided part; DistributedSampler iterates it"),
    Component("all_reduce", "09", "ex09_5", "all_reduce", "all_reduce", adapters_distributed.all_reduce,
              "all_reduce(ranks, op) combines every rank's tensor in place; tc.distributed.all_reduce (DDP's "
              "gradient buckets) runs it over the gathered ranks", checks=("all_reduce", "broadcast")),
    Component("broadcast", "09", "ex09_5", "broadcast", "broadcast", adapters_distributed.broadcast,
              "broadcast(ranks, src) copies ranks[src] into every rank in place; tc.distributed.broadcast (DDP's "
              "initial weights) runs it", checks=("all_reduce", "broadcast")),
    # chapter 10: what sampling runs under next_token_probs and generate
    Component("Topk", "10", "ex10_11", "Topk", "Topk", adapters.op,
              "Topk.forward(ctx, x, k, dim, largest) on a NumPy array -> (values, indices) of the k largest (or "
              "smallest) along dim, largest first, ties in their order; Topk.backward(ctx, grad, grad_indices) -> "
              "the grad of x; every float tc.topk / x.topk without NaN runs it (top-k sampling, multinomial's "
              "several draws)", checks=("Topk", "multinomial"), pure=True),
    Component("multinomial", "10", "ex10_11", "multinomial", "multinomial", adapters_random.multinomial,
              "multinomial(input, num_samples, replacement=False, *, generator=None) -> int64 indices drawn as "
              "PyTorch draws them: the largest p / q with q exponential samples (PyTorch's errors for bad "
              "distributions); every tc.multinomial / x.multinomial of one sample or without replacement runs it "
              "(generate's next token)", checks=("Topk", "multinomial")),
]
COMPONENTS = tuple(Component(**{**c.__dict__, "notebook": NOTEBOOKS[c.chapter]}) for c in _COMPONENTS)
BY_NAME = {c.name: c for c in COMPONENTS}


def sources(component: Component) -> list[tuple[str, str]]:
    """Every (chapter, grade_id) cell that defines `component`, earliest first (the latest one wins)."""
    return [(component.chapter, component.exercise), *component.also]


def exercise_id(grade_id: str) -> str:
    """The exercise id that grades a solution cell: "ex02_1" -> "02.1", "ex05b_5" -> "05b.5"."""
    chapter, _, number = grade_id.removeprefix("ex").partition("_")
    return f"{chapter}.{number}"


def check_names(component: Component) -> tuple:
    """The names the cell's `check(...)` call passes, in its order."""
    return component.checks or (component.defines,)


def for_chapter(chapter: str) -> list[Component]:
    """The components that an exercise of chapter `chapter` ("01" ... "09", "05b") defines."""
    return [c for c in COMPONENTS if any(ch == chapter for ch, _ in sources(c))]
