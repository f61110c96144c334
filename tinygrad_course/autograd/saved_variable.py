"""What PyTorch's SavedVariable checks when a backward reads a saved tensor: that it was not freed after an
earlier backward (`retain_graph`), and that it was not modified in place since it was saved (its version
counter), with PyTorch's messages and a hint for learners."""
from __future__ import annotations

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def version_error(tensor, saved_version, node, output=False):
    """PyTorch's error for a saved `tensor` modified in place after `node` saved it at `saved_version` (`output`:
    the tensor is the node's own output, kept detached, which PyTorch names as output 0 of the node's op; a saved
    input without a grad_fn gets no ", which is output ... of ...," part, as in PyTorch)."""
    desc = f"[{tensor.type()} [{', '.join(map(str, tensor.shape))}]]"
    if tensor.grad_fn is not None and tensor.grad_fn is not node:
        where = f", which is output {tensor._output_nr} of {op_name(tensor.grad_fn)},"
    elif output and node is not None:
        where = f", which is output 0 of {op_name(node)},"
    else:
        where = ""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{desc}{where} is at version {tensor._version[0]}; expected version {saved_version} instead. "
        "Hint: the tensor was changed in place (e.g. x += 1, x.add_(...), x[i] = v) after the forward pass "
        "used it; compute a new tensor instead (x = x + 1) or clone it before modifying."
    )


def op_name(node):
    """PyTorch names the op, not its node, in the version error: "Mul" for MulBackward0."""
    name = node.name()
    return name[:name.index("Backward")] if "Backward" in name else name
