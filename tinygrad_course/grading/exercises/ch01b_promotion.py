"""Chapter 01b's type promotion (exercise 01b.6): the learner's `promote_types(type1, type2)` and
`result_type(*operands)`, PyTorch's rules, checked on the exact operands where each rule shows (the wrong dtype
is named first, then what the operands make the rule say), then over every pair of dtypes and operand kinds
against the framework's own (which the tests hold to `torch.promote_types` / `torch.result_type`)."""
from __future__ import annotations

import tinygrad_course as tc

from ... import dtypes as _dt
from ... import seams
from ..registry import exercise

def _operand_text(op) -> str:
    if isinstance(op, tc.Tensor):
        return f"a {'0-d ' if op.ndim == 0 else ''}{op.dtype} tensor"
    return repr(op)


def _promote_cases():
    return (
        (tc.int32, tc.float16, tc.float16, "a floating type outranks every integer type, whatever their sizes"),
        (tc.uint8, tc.int8, tc.int16, "uint8 holds 0..255 and int8 holds -128..127: the smallest type holding "
                                      "both is int16"),
        (tc.int8, tc.uint8, tc.int16, "the order of the arguments does not matter"),
        (tc.float16, tc.bfloat16, tc.float32, "float16 and bfloat16 trade range for precision differently: "
                                              "neither holds the other, float32 holds both"),
        (tc.bool, tc.uint8, tc.uint8, "bool is below every integer type"),
        (tc.int64, tc.float32, tc.float32, "float32 is floating: it wins over int64 although it is smaller"),
        (tc.float64, tc.float64, tc.float64, "a dtype promoted with itself is itself"),
    )


def _result_cases():
    return (
        ((tc.tensor([1, 2]), 1.5), tc.float32,
         "a Python float next to an integer tensor gives the default float dtype (tc.get_default_dtype())"),
        ((tc.tensor([1, 2], dtype=tc.int32), 5), tc.int32,
         "a Python int does not widen an int32 tensor: a number changes the dtype only when its category "
         "(bool < integer < floating) is higher"),
        ((tc.tensor([1.0], dtype=tc.float16), 2.5), tc.float16,
         "a Python float does not widen a float16 tensor: same category, and the tensor outranks the number"),
        ((tc.tensor([True]), True), tc.bool,
         "True is a bool before it is an int (bool is a subclass of int in Python): test for bool first"),
        ((tc.tensor([True]), 1), tc.int64, "an int next to a bool tensor: integer is the higher category"),
        ((tc.tensor([1, 2], dtype=tc.uint8), tc.tensor(-1)), tc.uint8,
         "a 0-d tensor is below a tensor with dimensions: int64 does not widen uint8 (same category)"),
        ((tc.tensor([1, 2]), tc.tensor(1.5, dtype=tc.float64)), tc.float64,
         "a 0-d tensor of a higher category takes part with its own dtype (float64), not the default float"),
        ((tc.tensor(1, dtype=tc.int32), tc.tensor(2)), tc.int64,
         "two 0-d tensors are of the same rank: promote_types of their dtypes"),
        ((tc.tensor(1, dtype=tc.int32), 2.5), tc.float32, "a 0-d tensor still outranks a Python number"),
        ((tc.tensor([1], dtype=tc.int8), tc.tensor(1.0, dtype=tc.float64), 2.5), tc.float64,
         "rank by rank: tensors with dimensions, then 0-d tensors, then numbers"),
        ((2, 3.5), tc.float32, "two numbers: a float gives the default float dtype"),
        ((True, 2), tc.int64, "a Python int is int64"),
    )


def _references():
    """Within the block the framework's own promotion answers (a learner's installed in build mode set aside)."""
    return seams.replaced({"promote_types": None, "result_type": None})


def _why(operands, got, want):
    """What a wrong dtype for `operands` says about the rule used (None when it says nothing clear)."""
    if got == want or not isinstance(got, _dt.dtype):
        return None
    if any(op is True for op in operands) and got is tc.int64:
        return "True was taken for an int (isinstance(True, int) is True in Python)"
    flat = None
    for op in operands:
        d = op.dtype if isinstance(op, tc.Tensor) else _dt.scalar_dtype(op)
        flat = d if flat is None else _dt.promote_types(flat, d)
    if got is flat:
        return ("that is promote_types over every operand's dtype: the number or 0-d tensor counted as much as a "
                "tensor with dimensions")
    return None


@exercise("01b.6", title="type promotion: promote_types and result_type", points=3,
          forbidden=["tinygrad_course.promote_types", "tinygrad_course.result_type", "numpy.result_type",
                     "numpy.promote_types", "tinygrad_course.dtypes.promote_types", "tinygrad_course.dtypes.result_type"])
def promotion_check(t, promote_types, result_type):
    for a, b, want, hint in _promote_cases():
        got = promote_types(a, b)
        t.equal(got, want, f"promote_types({a}, {b})", hint=hint)
    t.raises(TypeError, promote_types, tc.int64, 1, what="promote_types(tc.int64, 1)",
             hint="an argument that is not a dtype: raise TypeError, \"promote_types(): argument 'type2' "
                  "(position 2) must be tc.dtype, not int\"")
    with _references():
        for a in _dt.ALL_DTYPES:
            for b in _dt.ALL_DTYPES:
                t.equal(promote_types(a, b), _dt.promote_types(a, b), f"promote_types({a}, {b})",
                        hint="same category: the wider type (uint8 with a signed type needs room for both); "
                             "different categories: the higher one")
    for operands, want, hint in _result_cases():
        text = ", ".join(_operand_text(op) for op in operands)
        got = result_type(*operands)
        t.equal(got, want, f"result_type({text})", hint=hint, why=_why(operands, got, want))
    t.raises(TypeError, result_type, tc.tensor([1.0]), 1j, what="result_type(tc.tensor([1.0]), 1j)",
             hint="a complex number: PyTorch would give a complex dtype and the framework has none; raise TypeError")
    t.raises(TypeError, result_type, tc.tensor([1.0]), "2", what="result_type(tc.tensor([1.0]), '2')",
             hint="a string is not a number: raise TypeError")
    operands = [tc.tensor([1, 0], dtype=d) for d in _dt.ALL_DTYPES] + [tc.tensor(1, dtype=d) for d in _dt.ALL_DTYPES]
    with _references():
        for a in operands:
            for b in [*operands, True, 2, 0.5]:
                t.equal(result_type(a, b), _dt.result_type(a, b), f"result_type({_operand_text(a)}, {_operand_text(b)})",
                        hint="rank the operands: tensors with dimensions, then 0-d tensors, then Python numbers; a "
                             "lower rank changes the dtype only when its category is higher")
                if not isinstance(b, tc.Tensor):
                    t.equal(result_type(b, a), _dt.result_type(b, a),
                            f"result_type({_operand_text(b)}, {_operand_text(a)})",
                            hint="the order of the operands does not matter")
