"""The topological sort of the backward graph (chapter 02): every node before the nodes it sends gradients to.

`topological_sort` returns the order the engine (`engine.py`) runs a backward pass in, by the same algorithm:
dependency counting, as chapter 02's lecture writes it for scalars. The engine interleaves that loop with
running the nodes, so it does not call this function; a learner's version installed under its name (build
mode, `tinygrad_course/seams.py`) makes the engine run in the order it returns, after checking it.
"""
from __future__ import annotations

import heapq
import itertools

from .. import seams
from ..seams import component


@component("topological_sort")
def topological_sort(root):
    """Every node reachable from `root`, each before all nodes in its `next_functions`: the order the engine
    runs a backward pass in. It is chapter 02's algorithm (dependency counting, Kahn's algorithm): count the
    edges pointing at each node, then repeatedly take a node no remaining node points at -- among several, the
    most recently created, as PyTorch's engine does. The engine (`engine.run_backward`) runs this same loop,
    taking each node when it is ready. A learner's version installed under this name (build mode) may return
    any valid order (a depth-first sort, say); the engine checks it and runs the pass in that order."""
    deps = {}
    seen, stack = {root}, [root]
    while stack:  # first pass: how many edges point at each node
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None:
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
    order, tie, ready = [], itertools.count(), [(-root._seq, 0, root)]
    while ready:  # second pass: a node is ready once every node that sends it a gradient has been taken
        node = heapq.heappop(ready)[2]
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                deps[child] -= 1
                if deps[child] == 0:
                    heapq.heappush(ready, (-child._seq, next(tie), child))
    return order


def learner_order(roots, nodes):
    """The order of a learner's topological sort when one is installed (one root), checked, as an iterator; else
    None."""
    if "topological_sort" not in seams.ACTIVE or len(set(roots)) != 1:
        return None
    order = list(topological_sort(roots[0]))
    position = {node: i for i, node in enumerate(order)}
    if len(position) != len(order) or set(position) != nodes:
        raise RuntimeError(f"your topological_sort returned {len(order)} nodes ({len(position)} different); "
                           f"the graph below {roots[0].name()} has {len(nodes)}")
    for node in order:
        for child, _ in node.next_functions:
            if child is not None and position[child] < position[node]:
                raise RuntimeError(f"your topological_sort put {child.name()} before {node.name()}, "
                                   "which sends it its gradient")
    return iter(order)
