"""Adapters of chapter 02d's engine (exercises 02d.2 and 02d.3): the learner's `Function.apply` (recording a call of their
op, or of a custom `autograd.Function`, handed over as an op whose forward runs the Function's on the call's
tensors), `Node.apply` (a node's backward step) and `AccumulateGrad.apply` (a leaf's gradient) as the framework's.

Each routes the calls the learner's engine covers to it and the others to the reference (`NotImplemented`),
and checks what the learner's code returned or wrote against the node it ran on: a wrong result is an error
naming the component, never repaired. Build mode's guard then leaves a component that raised out (the
reference records the call or runs the step); an error of the learner's op inside their `Function.apply` is
the op's (`OpFailed`), so their engine is not blamed for it.
"""
from __future__ import annotations

import numpy as np

from .. import seams
from ..autograd.anomaly_mode import state as _anomaly
from ..autograd.engine import AccumulateGrad, Function, _recorders, _sequence, module_stack, profilers
from ..autograd.grad_mode import _state, no_grad
from ..grading.exercises.learner_classes import defined
from ..grading.learner_op import OpFailed
from ..tensor_base import TensorBase, _wrap
from .adapters import own_function


class _Uncovered(Exception):
    """A custom Function's forward gave what the learner's engine does not record (several outputs, an input
    changed in place or an output marked non-differentiable, no float NumPy tensor): the reference records it."""

    def __init__(self, ctx, out):
        super().__init__()
        self.ctx, self.out = ctx, out


_as_ops = {}  # a custom Function -> the op the learner's Function.apply records its calls as
_calls = []  # [arguments, forward's output] of the custom Function calls being recorded (innermost last)


def _as_op(function):
    """A custom `autograd.Function` (forward and backward on tensors, as PyTorch's) as the learner's engine
    records an op: forward on the arguments' arrays runs the Function's forward on the call's tensors under
    no_grad and returns its result's array; the node is named as the Function's and runs its backward."""
    op = _as_ops.get(function)
    if op is None:
        def forward(ctx, *arrays):
            call = _calls[-1]
            inputs = tuple(a if not isinstance(a, TensorBase) or x is a._data else _wrap(x) for a, x in zip(call[0], arrays))
            try:
                with no_grad():
                    out = function.forward(ctx, *inputs)
            except Exception as error:
                error._tc_op_forward = True  # the Function's error, not the learner's engine's
                raise
            if not isinstance(out, TensorBase) or type(out._data) is not np.ndarray or not out.dtype.is_floating_point \
                    or "_dirty" in ctx.__dict__ or "_non_diff" in ctx.__dict__:
                raise _Uncovered(ctx, out)
            call[1] = out
            return out._data

        op = _as_ops[function] = type(function.__name__, (Function,), {
            "node_name": function._Node.__name__, "forward": staticmethod(forward),
            "backward": staticmethod(function.backward)})
    return op


_replays = {}  # a custom Function -> its subclass whose forward gives back what the call's forward gave


def _replay(function):
    """`function` with a forward that hands the reference's recording the output (and the declarations on ctx)
    of the forward that already ran inside the learner's `Function.apply` (`_calls[-1]`)."""
    replay = _replays.get(function)
    if replay is None:
        def forward(ctx, *inputs):
            uncovered = _calls[-1][1]
            ctx.__dict__.update(uncovered.ctx.__dict__)
            return uncovered.out

        replay = _replays[function] = type(function.__name__, (function,), {
            "node_name": function._Node.__name__, "forward": staticmethod(forward)})
    return replay


def function_apply(learner_class):
    """`Function.apply(cls, *args)` of the learner, called by build mode's runner of their op (`cls` is their op,
    its forward checked, its node named as PyTorch's) and by `Function.apply` for a custom Function's call (a
    Function of the framework's own, one with `setup_context` or keywords stay the reference's): the result
    tensor, its `grad_fn` when the call is recorded (gradients enabled and an input requires grad), else none."""
    apply = own_function(learner_class, "apply", "Function")

    def custom(function, args):
        if function.setup_context is not Function.setup_context or function.__module__.startswith("tinygrad_course"):
            return NotImplemented
        op, call = _as_op(function), [args, None]
        _calls.append(call)
        try:
            result = apply(op, *args)
        except _Uncovered as uncovered:  # forward ran once: the reference records its output and declarations
            call[1] = uncovered
            with seams.replaced({"Function.apply": None}):
                return _replay(function).apply(*args)
        except Exception as error:
            if getattr(error, "_tc_op_forward", False):  # the Function's own error: the reference runs it and raises
                return NotImplemented
            raise
        finally:
            _calls.pop()
        out = call[1]
        node = checked(op, args, result, out._data.shape, out._data.dtype)
        if node is not None:  # the framework numbers the node; its backward step is the learner's Node.apply
            node._seq = next(_sequence)
            node.modules = module_stack.modules
            node._learner_backward = function.backward
            saved = node.__dict__.get("_saved")
            if saved and not any(out is a for a in args):  # a saved output shares the result's version counter
                kept = [k for k, t in enumerate(saved) if t is out]
                if kept:
                    out._version = result._version
                    node._saved_versions = [result._version[0] if k in kept else v
                                            for k, v in enumerate(node._saved_versions)]
                    node._saved_outputs = dict.fromkeys(kept, 0)
        return result

    def record(cls, *args):
        if not hasattr(cls.forward, "call"):  # a custom Function (the runner hands over its ops' checked forward)
            return custom(cls, args)
        try:
            result = apply(cls, *args)
        except Exception as error:
            if getattr(error, "_tc_op_forward", False):
                return OpFailed(error)
            raise
        checked(cls, args, result, *cls.forward.call[1:3])
        return result

    return record


def checked(cls, args, result, shape, dtype):
    """The node of the learner's `Function.apply`'s `result` of a call of `cls` (None when it records nothing);
    an error naming what is wrong when it is not the tensor of `shape` and `dtype` recorded as the call needs."""
    tensors = sum(isinstance(a, TensorBase) for a in args)
    recorded = _state.enabled and any(isinstance(a, TensorBase) and a._requires_grad for a in args)
    if not isinstance(result, TensorBase) or result._data.shape != shape or result._data.dtype != dtype:
        got = (f"a tensor of shape {tuple(result._data.shape)} and dtype {result.dtype}"
               if isinstance(result, TensorBase) else type(result).__name__)
        raise RuntimeError(f"your Function.apply returned {got} for {cls.__name__}, expected a tensor of shape "
                           f"{shape} and dtype {dtype}: wrap the array forward returns (tc.from_numpy)")
    node = result.grad_fn
    if not recorded:
        if node is not None or result._requires_grad:
            raise RuntimeError(f"your Function.apply recorded a {cls.__name__} call that needs no graph (no input "
                               "requires grad, or gradients are disabled): its result must be a plain tensor")
        return None
    if type(node) is not cls._backward_cls or not result._requires_grad:
        raise RuntimeError(f"your Function.apply returned a result of {cls.__name__} whose grad_fn is "
                           f"{type(node).__name__} (requires_grad={result._requires_grad}), expected the op's "
                           f"node, cls._backward_cls(), and requires_grad=True")
    if len(node.next_functions) != tensors or len(node.input_metadata) != len(args) or \
            len(node.needs_input_grad) != len(args):
        raise RuntimeError(f"your Function.apply recorded {len(node.next_functions)} next_functions, "
                           f"{len(node.input_metadata)} input_metadata and {len(node.needs_input_grad)} "
                           f"needs_input_grad for a call of {cls.__name__} on {len(args)} arguments ({tensors} "
                           "tensors): one edge per tensor argument, one entry per argument for the others")
    return node


def node_apply(learner_class):
    """`Node.apply(self, *grad_outputs)` of the learner (a method slot), a node's backward step for the nodes of
    their ops outside `create_graph` (the other nodes go to the reference): one gradient (or None) per entry of
    next_functions, in that input's shape and dtype."""
    step, reference = own_function(learner_class, "apply", "Node"), seams.reference("Node.apply")

    def run(node, *grad_outputs):
        if node._learner_backward is None or _state.enabled or node._freed:  # not a node of the learner's ops
            return reference(node, *grad_outputs)
        seams.count_call("Node.apply")
        grads = step(node, *grad_outputs)
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        inputs = [meta for meta in node.input_metadata if meta is not None]
        if len(grads) != len(inputs):
            raise RuntimeError(f"your Node.apply returned {len(grads)} gradient(s) for {node.name()}, which has "
                               f"{len(inputs)} entries in next_functions: one per tensor input (None for a number)")
        for k, (g, (shape, dtype)) in enumerate(zip(grads, inputs)):
            if g is None:
                continue
            if not isinstance(g, TensorBase) or g._data.shape != tuple(shape) or g.dtype is not dtype:
                got = (f"shape {tuple(g._data.shape)} and dtype {g.dtype}" if isinstance(g, TensorBase)
                       else type(g).__name__)
                raise RuntimeError(f"your Node.apply returned a gradient of {got} for input {k} of {node.name()}, "
                                   f"whose shape is {tuple(shape)} and dtype {dtype}: sum it back to the input's "
                                   "shape and cast it to its dtype")
        return grads

    run.counts_itself = True
    return run


def accumulate_grad_init(learner_class):
    """`AccumulateGrad.__init__(self, variable)` of the learner (a method slot) as every leaf node's, as it is: it
    keeps the leaf in `self.variable`, no edges in `self.next_functions` and the engine's priority `self._seq`."""
    return own_function(learner_class, "__init__", "AccumulateGrad")


def accumulate_grad(learner_class):
    """`AccumulateGrad.apply(self, grad)` of the learner (a method slot) for a leaf whose `.grad` is None or a plain
    tensor of its shape and dtype (leaves with hooks, `create_graph` and the other cases go to the reference):
    afterwards `.grad` holds the sum, in a row-major storage of its own."""
    apply, reference = own_function(learner_class, "apply", "AccumulateGrad"), seams.reference("AccumulateGrad.apply")

    def run(node, grad):
        leaf = node.variable
        old = leaf.grad
        shape, dtype = leaf._data.shape, leaf.dtype
        if leaf._hooks or _state.enabled or grad._requires_grad or grad._data.shape != shape \
                or grad.dtype is not dtype or type(grad._data) is not np.ndarray or old is not None and (
                    old._requires_grad or type(old._data) is not np.ndarray or old._data.shape != shape
                    or old.dtype is not dtype or not old._data.flags.writeable):
            return reference(node, grad)
        seams.count_call("AccumulateGrad.apply")
        apply(node, grad)
        new = leaf.grad
        if not isinstance(new, TensorBase) or new._data.shape != shape or new.dtype is not dtype or new._requires_grad:
            got = f"shape {tuple(new.shape)}, dtype {new.dtype}" if isinstance(new, TensorBase) else type(new).__name__
            raise RuntimeError(f"your AccumulateGrad.apply left the leaf's .grad as {got}, expected a tensor of the "
                               f"leaf's shape {tuple(shape)} and dtype {dtype} that does not require grad")
        if old is None and (np.may_share_memory(new._data, grad._data) or not new._data.flags.c_contiguous):
            raise RuntimeError("your AccumulateGrad.apply kept the incoming gradient's storage as .grad (or a "
                               "strided view of it): the next gradient added in place would change another "
                               "tensor; keep a row-major copy (grad.clone())")
        return ()

    run.counts_itself = True
    return run


def root_gradient(learner):
    """The learner's `root_gradient(output, gradient=None)` (exercise 02d.1) as the first step of
    `output.backward(gradient)`: what it returns must be a tensor of the output's shape (the engine then casts
    it to the output's dtype and checks its device, as for any given gradient); anything else is an error
    naming it, never repaired."""

    def run(output, gradient=None):
        grad = learner(output, gradient)
        if not isinstance(grad, TensorBase):
            raise TypeError(f"returned {type(grad).__name__} for an output of shape {tuple(output.shape)}, expected "
                            "a tensor of that shape")
        if tuple(grad.shape) != tuple(output.shape):
            raise RuntimeError(f"returned a gradient of shape {tuple(grad.shape)} for an output of shape "
                               f"{tuple(output.shape)}, expected {tuple(output.shape)}")
        return grad

    run.__wrapped__ = learner
    return run


def _plain_call(tensor, gradient) -> bool:
    """Whether `tensor.backward(gradient)` is the plain call chapter 02's `backward` covers: a gradient that is
    None or a tensor of the output's dtype and device needing no gradient, a graph whose nodes have one output
    each and no hooks (on nodes, on the tensors they made, on leaves), no profiler, anomaly detection or
    `record_backward()` trace, and no view whose base changed in place since (its history is rebuilt first)."""
    if profilers or _recorders or _anomaly.enabled:
        return False
    if gradient is not None and (not isinstance(gradient, TensorBase) or gradient.dtype is not tensor.dtype
                                 or gradient._device is not tensor._device or gradient._requires_grad):
        return False
    if tensor._base is not None and tensor._view_version != tensor._version[0]:
        return False
    root = tensor.grad_fn
    if root is None:
        return not tensor._hooks
    seen, stack = {root}, [root]
    while stack:
        node = stack.pop()
        if node._num_outputs != 1 or node._tensor_pre_hooks or node._retain_hooks or node._pre_hooks or \
                node._post_hooks or type(node) is AccumulateGrad and node.variable._hooks:
            return False
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return True


def tensor_backward(learner):
    """The learner's `backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None)` (exercise
    02d.1: their `root_gradient`, then their `backward_pass` without recording a graph) as `Tensor.backward` for
    the plain call (`_plain_call`, without `create_graph` or `inputs`); every other call is the reference's, whose
    engine runs hooks, `create_graph`, `inputs=`, anomaly detection, traces and the final callbacks."""
    reference = seams.reference("Tensor.backward")

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if create_graph or inputs is not None or not _plain_call(self, gradient):
            return reference(self, gradient, retain_graph, create_graph, inputs)
        seams.count_call("root_gradient")  # the learner's backward runs the cell's root_gradient and backward_pass
        seams.count_call("backward_pass")
        learner(self, gradient, retain_graph)

    backward.__wrapped__ = learner
    return backward


def save_for_backward(learner_class):
    """The learner's `Node.save_for_backward(self, *tensors)` (exercise 02d.2) as every node's, as it is: it keeps
    the tensors in `self._saved` and each tensor's version in `self._saved_versions` (None for anything else)."""
    return own_function(learner_class, "save_for_backward", "Node")


def _node_property(learner_class, name):
    """The getter of the property `name` of the learner's Node class (AttributeError naming it when absent)."""
    found = defined(learner_class, name)
    if not isinstance(found, property):
        raise AttributeError(f"your Node defines no {name} property (@property def {name}(self): ...)")
    return found.fget


def saved_tensors(learner_class):
    """The learner's `Node.saved_tensors` (a property, exercise 02d.2) as every node's: the saved tensors, or
    PyTorch's errors for a freed node and a tensor modified in place since it was saved. A custom Function's own
    output that it saved, which the exercise does not cover, stays the reference's when it matters: under
    `create_graph` (it is relinked to its node) and once it was modified in place (the error names it as the node's
    output)."""
    getter, reference = _node_property(learner_class, "saved_tensors"), seams.reference("Node.saved_tensors")

    def saved(node):
        outs = node.__dict__.get("_saved_outputs")
        if outs and not node._released and (_state.enabled or any(node._saved[k]._version[0] != node._saved_versions[k]
                                                                  for k in outs)):
            return reference(node)
        return getter(node)

    return saved


def saved_output(learner_class):
    """The learner's `Node.saved_output` (a property, exercise 02d.2) as every node's: the op's output kept by
    forward, or PyTorch's errors for a freed node and an output modified in place since. Under `create_graph` the
    reference's runs (it links the output back to its node for higher derivatives, which the exercise leaves out)."""
    getter, reference = _node_property(learner_class, "saved_output"), seams.reference("Node.saved_output")

    def saved(node):
        if _state.enabled and not node._released:
            return reference(node)
        return getter(node)

    return saved


def release_variables(learner_class):
    """The learner's `Node.release_variables(self)` (exercise 02d.2) as every node's: it frees the saved tensors and
    marks the node released (an error naming it when it did not). What an op's forward kept outside
    `save_for_backward` (arrays in attributes, its saved output), which the exercise does not cover, the reference
    then frees (its own first two steps find nothing left to do)."""
    release, reference = own_function(learner_class, "release_variables", "Node"), seams.reference(
        "Node.release_variables")

    def run(node):
        release(node)
        if node.__dict__.get("_saved") != () or node.__dict__.get("_released") is not True:
            raise RuntimeError(f"your Node.release_variables left {node.name()} with _saved="
                               f"{node.__dict__.get('_saved')!r}, _released={node.__dict__.get('_released')!r}: "
                               "set self._saved = () and self._released = True")
        if node._fn is not None and not node._fn._check_grads:  # an op's state outside save_for_backward
            reference(node)

    return run
