"""What `autograd.grad` returns: the gradients that reach its inputs during a backward pass, and which nodes
are worth running for them (the engine skips the others)."""
from __future__ import annotations


def _nodes_leading_to(targets, nodes):
    """The subset of `nodes` from which some target node can be reached (including the targets)."""
    parents = {}
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed = set()
    stack = [t for t in targets if t in nodes]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


class Capture:
    """What `autograd.grad` returns: the gradients reaching its `inputs`, and the nodes worth running."""

    def __init__(self, keys, nodes):
        self.positions = {}  # (node, output_nr) -> positions in inputs
        for pos, key in enumerate(keys):
            self.positions.setdefault(key, []).append(pos)
        self.needed = _nodes_leading_to([k[0] for k in self.positions], nodes)
        self.grads = [None] * len(keys)

    def take(self, node, grads):
        for nr, g in enumerate(grads):
            for pos in self.positions.get((node, nr), ()):
                self.grads[pos] = g

    def skips(self, node):
        """True for a node from which no input can be reached (its backward need not run)."""
        return node not in self.needed or not any(c in self.needed for c, _ in node.next_functions)

    def result(self, allow_unused, create_graph):
        for pos, g in enumerate(self.grads):
            if g is None and not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {pos} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if g is not None and not create_graph:
                self.grads[pos] = g.detach()
        return tuple(self.grads)
