"""The topological sort of the backward graph (chapter 02): every node before the nodes it sends gradients to.

The engine (`engine.py`) schedules nodes by counting dependencies and never needs this function; it exists
as the component a learner writes in chapter 02. With a learner's version installed (build mode,
`tinygrad_course/seams.py`) the engine runs a backward pass in the order it returns, after checking it.
"""
from __future__ import annotations

from .. import seams
from ..seams import component


@component("topological_sort")
def topological_sort(root):
    """Every node reachable from `root`, each before all nodes in its `next_functions` (the order a backward
    pass may run them in). The engine schedules by dependency counts instead; a learner's version installed
    under this name (build mode) makes the engine run in the order it returns."""
    order, done, stack = [], set(), [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if node in done:
            continue
        done.add(node)
        stack.append((node, True))
        stack.extend((child, False) for child, _ in node.next_functions if child is not None and child not in done)
    return order[::-1]


def learner_order(roots, nodes):
    """The order of a learner's topological sort when one is installed (one root), checked; else None."""
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
    return order
