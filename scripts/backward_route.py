"""Print the route a multiply and its backward take through the package: files, functions, calls, switches.

    python scripts/backward_route.py            # the summary and the numbered route
    python scripts/backward_route.py --summary  # the summary line only

The program traced is chapter 02's first example:

    a = tc.tensor([1., 2., 3.], requires_grad=True)
    b = tc.tensor([4., 5., 6.], requires_grad=True)
    c = a * b                     # traced from here ...
    c.sum().backward()            # ... to here

Every Python-level call that starts in a file of the package is one step of the route (calls into NumPy or
the standard library are not). A *switch* is a step in another file than the step before it. The route of
an earlier version of the package (17 files, 54 functions, 115 calls, 75 switches) is what docs/architecture.md
compares with.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tinygrad_course as tc  # noqa: E402

PACKAGE = os.path.dirname(os.path.realpath(tc.__file__))


@dataclass
class Route:
    steps: list  # (file relative to the package, function name), in call order

    @property
    def files(self):
        return list(dict.fromkeys(f for f, _ in self.steps))

    @property
    def functions(self):
        return list(dict.fromkeys(self.steps))

    @property
    def switches(self):
        return sum(1 for prev, step in zip(self.steps, self.steps[1:]) if prev[0] != step[0])

    def summary(self):
        return (f"{len(self.files)} files, {len(self.functions)} functions, {len(self.steps)} calls, "
                f"{self.switches} switches between files")


def trace_route() -> Route:
    """Run the program under sys.settrace and return its route through the package
    (the second run: the first may fill caches)."""
    for _ in range(2):
        a = tc.tensor([1.0, 2.0, 3.0], requires_grad=True, device="cpu")
        b = tc.tensor([4.0, 5.0, 6.0], requires_grad=True, device="cpu")
        steps = _traced(a, b)
    assert a.grad.tolist() == [4.0, 5.0, 6.0] and b.grad.tolist() == [1.0, 2.0, 3.0]
    return Route(steps)


def _traced(a, b):
    steps = []

    def tracer(frame, event, arg):
        if event == "call":
            path = os.path.realpath(frame.f_code.co_filename)
            if path.startswith(PACKAGE + os.sep):
                steps.append((os.path.relpath(path, PACKAGE), frame.f_code.co_qualname))
        return None

    sys.settrace(tracer)
    try:
        c = a * b
        c.sum().backward()
    finally:
        sys.settrace(None)
    return steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="print the summary line only")
    args = parser.parse_args(argv)
    route = trace_route()
    if not args.summary:
        previous = None
        for i, (path, function) in enumerate(route.steps, 1):
            mark = "" if path == previous else "  <- " + path
            print(f"{i:4d}  {function}{mark}")
            previous = path
        print()
    print(route.summary())


if __name__ == "__main__":
    main()
