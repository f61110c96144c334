"""PyTorch's argument rules for the factory functions: every documented overload (`zeros(2, 3)`,
`zeros((2, 3))`, `zeros(size=(2, 3))`, `randint(high, size)`, `randint(low, high, size)`, `arange(end)`,
`arange(start, end, step)`, ...) and PyTorch's wording when an argument is missing or of the wrong type,
saying what was given."""
from __future__ import annotations

import numbers

import numpy as np

from ._namespace import namespace

_TAIL = ("*, {ns}.Generator generator, Tensor out = None, {ns}.dtype dtype = None, {ns}.layout layout = None, "
         "{ns}.device device = None, bool pin_memory = False, bool requires_grad = False")
_PLAIN_TAIL = ("*, Tensor out = None, {ns}.dtype dtype = None, {ns}.layout layout = None, {ns}.device device = None, "
               "bool pin_memory = False, bool requires_grad = False")
OVERLOADS = {
    "rand": [f"tuple of ints size, {_TAIL}", f"tuple of ints size, {_PLAIN_TAIL}"],
    "randn": [f"tuple of ints size, {_TAIL}", f"tuple of ints size, {_PLAIN_TAIL}"],
    "randint": [f"int high, tuple of ints size, {_TAIL}", f"int high, tuple of ints size, {_PLAIN_TAIL}",
                f"int low, int high, tuple of ints size, {_TAIL}",
                f"int low, int high, tuple of ints size, {_PLAIN_TAIL}"],
    "arange": [f"Number end, {_PLAIN_TAIL}",
               "Number start, Number end, *, {ns}.dtype dtype = None, {ns}.layout layout = None, {ns}.device device "
               "= None, bool pin_memory = False, bool requires_grad = False",
               f"Number start, Number end, Number step = 1, {_PLAIN_TAIL}"],
    "linspace": [f"{a} start, {b} end, int steps, {_PLAIN_TAIL}"
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number"))],
    "logspace": [f"{a} start, {b} end, int steps, float base = 10.0, {_PLAIN_TAIL}"
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number"))],
}


def _type_name(v) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if type(v).__name__ in ("Tensor", "Parameter"):
        return "Tensor"
    if type(v).__name__ == "dtype":
        return f"{namespace()}.dtype"
    return type(v).__name__


def invalid_combination(fname: str, args, kwargs) -> TypeError:
    """PyTorch's "received an invalid combination of arguments - got (...)" error for `fname`: the types of
    the positional arguments, then `name=type` for the keywords (in PyTorch's order: last given first)."""
    pos = [_type_name(a) for a in args]
    kw = [f"{k}={_type_name(v)}" for k, v in reversed(list(kwargs.items())) if v is not None]
    got = ", ".join(pos + kw) if pos else "".join(f"{k}, " for k in kw)
    ns = namespace()
    lines = "\n".join(f" * ({o.format(ns=ns)})" for o in OVERLOADS[fname])
    return TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{lines}\n")


def space_args(fname: str, args: tuple, kwargs: dict):
    """(start, end, steps, base) for `linspace(start, end, steps)` / `logspace(start, end, steps, base=10.0)`
    given positionally or by keyword; PyTorch's error naming what was given when one is missing."""
    names = ("start", "end", "steps", "base") if fname == "logspace" else ("start", "end", "steps")
    given = {k: kwargs.pop(k) for k in names if k in kwargs}
    if len(args) > len(names) or any(k in given for k in names[:len(args)]):
        raise invalid_combination(fname, args, given)
    vals = dict(zip(names, args), **given)
    steps = vals.get("steps")
    if any(k not in vals for k in names[:3]) or not _is_int(steps):
        raise invalid_combination(fname, args, given)
    for k in ("start", "end"):
        if not isinstance(vals[k], (numbers.Real, np.generic)) and type(vals[k]).__name__ not in ("Tensor", "Parameter"):
            raise invalid_combination(fname, args, given)
    return vals["start"], vals["end"], int(steps), vals.get("base", 10.0)


def _is_int(v) -> bool:
    return (isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, bool)) or (
        type(v).__name__ in ("Tensor", "Parameter") and v.ndim == 0 and v.dtype.category == 1)


def size_arg(fname: str, args: tuple, size=None, *, required=True, invalid_combination_error=False):
    """The shape of `fname(*args)` / `fname(size=...)`: varargs ints, one sequence or `Size`, or `size=`."""
    if size is None and args:  # fast path: plain ints, or one tuple of them
        plain = args[0] if len(args) == 1 and type(args[0]) is tuple else args
        if all(type(a) is int for a in plain):
            return tuple(plain)
    if size is not None:
        if args:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        args = (size,)
    if not args:
        if invalid_combination_error:
            raise invalid_combination(fname, (), {})
        if required:
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        return ()
    if len(args) == 1 and not _is_int(args[0]):
        seq = args[0]
        if type(seq).__name__ in ("Tensor", "Parameter"):
            seq = seq.tolist() if seq.ndim == 1 else seq
        if not isinstance(seq, (tuple, list)):
            raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, not {type(seq).__name__}")
        args = tuple(seq)
    for i, a in enumerate(args):
        if not _is_int(a):
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(a).__name__}\"")
    return tuple(int(a) for a in args)


def randint_args(args: tuple, low=None, high=None, size=None, kwargs=None):
    """(low, high, size) for `randint(high, size)`, `randint(low, high, size)` and their keyword forms."""
    given = dict(low=low, high=high, size=size)
    three = len(args) >= 3 or low is not None or (len(args) == 2 and size is not None)
    names = ("low", "high", "size") if three else ("high", "size")
    if len(args) > 3 or (len(args) == 3 and low is not None):
        raise invalid_combination("randint", args, given)
    vals = dict(zip(names, args))
    for k, v in given.items():
        if v is not None:
            if k in vals:
                raise TypeError(f"randint() got multiple values for argument '{k}'")
            vals[k] = v
    if "high" not in vals or "size" not in vals:
        raise invalid_combination("randint", args, given)
    size = vals["size"]
    for name in ("low", "high"):
        if name in vals and not _is_int(vals[name]):
            pos = names.index(name) + 1 if name in names[:len(args)] else None
            where = f" (position {pos})" if pos else ""
            raise TypeError(f"randint(): argument '{name}'{where} must be int, not {type(vals[name]).__name__}")
    if not isinstance(size, (tuple, list)) and type(size).__name__ != "Size":
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return int(vals.get("low", 0)), int(vals["high"]), size_arg("randint", (tuple(size),))


def arange_args(args: tuple, start=None, end=None, step=None):
    """(start, end, step) for `arange(end)`, `arange(start, end[, step])` and their keyword forms."""
    given = dict(start=start, end=end, step=step)
    if len(args) > 3:
        raise invalid_combination("arange", args, given)
    if len(args) == 1 and start is None and end is None:
        vals = {"start": 0, "end": args[0]}
    else:
        vals = dict(zip(("start", "end", "step"), args))
        for k, v in given.items():
            if v is not None:
                if k in vals:
                    raise TypeError(f"arange() got multiple values for argument '{k}'")
                vals[k] = v
    if "end" not in vals:
        if "start" in vals and len(args) <= 1 and end is None and step is None and start is None:
            vals = {"start": 0, "end": vals["start"]}
        else:
            raise invalid_combination("arange", args, given)
    for k, v in vals.items():
        if type(v).__name__ in ("Tensor", "Parameter"):
            vals[k] = v.item()
        elif not isinstance(v, (numbers.Real, np.generic)):
            raise invalid_combination("arange", args, given)
    return vals.get("start", 0), vals["end"], vals.get("step", 1)
