"""Higher-level derivatives built on `autograd.grad`: `vjp`, `jacobian`, `hessian`
(like `torch.autograd.functional`)."""
from __future__ import annotations

from ..factories import ones_like, zeros, zeros_like
from ..ops.concat import stack
from .engine import grad as _grad
from .grad_mode import enable_grad


def _as_tuple(x):
    return (x, False) if isinstance(x, tuple) else ((x,), True)


def _prepare(inputs, create_graph):
    return tuple(i.detach().requires_grad_(True) if not create_graph or not i.requires_grad else i for i in inputs)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of `func` at `inputs`."""
    ins, single = _as_tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        outs, single_out = _as_tuple(out)
        vs = (v,) if v is not None and not isinstance(v, tuple) else v
        grads = _grad(outs, ins, grad_outputs=vs, create_graph=create_graph, allow_unused=True)
    grads = tuple(zeros_like(i) if g is None else g for g, i in zip(grads, ins))
    out = out if create_graph else (tuple(o.detach() for o in outs) if not single_out else outs[0].detach())
    return out, grads[0] if single else grads


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: shape out.shape + in.shape (tuples for several in/outputs)."""
    ins, single_in = _as_tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        outs, single_out = _as_tuple(out)
        jac = []
        for o in outs:
            rows = [[] for _ in ins]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                gs = _grad(flat[k], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
                for j, (g, i) in enumerate(zip(gs, ins)):
                    rows[j].append(zeros_like(i) if g is None else g)
            per_in = []
            for j, i in enumerate(ins):
                if rows[j]:
                    block = stack(rows[j]).reshape(tuple(o.shape) + tuple(i.shape))
                else:
                    block = zeros(tuple(o.shape) + tuple(i.shape), dtype=i.dtype)
                per_in.append(block if create_graph else block.detach())
            jac.append(per_in[0] if single_in else tuple(per_in))
    return jac[0] if single_out else tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar `func` at `inputs` (the Jacobian of its gradient)."""
    ins, single_in = _as_tuple(inputs)

    def grad_fn(*xs):
        with enable_grad():
            out = func(*xs)
            if out.numel() != 1:
                raise RuntimeError("The function given to hessian should return a single element Tensor")
            gs = _grad(out.reshape(()), xs, create_graph=True, allow_unused=True)
        gs = tuple(zeros_like(x) if g is None else g for g, x in zip(gs, xs))
        return gs[0] if single_in else gs

    return jacobian(grad_fn, inputs, create_graph=create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v) computed with the double-vjp trick."""
    ins, single = _as_tuple(inputs)
    with enable_grad():
        ins = _prepare(ins, True)
        out = func(*ins)
        outs, single_out = _as_tuple(out)
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        gs = _grad(outs, ins, grad_outputs=us, create_graph=True, allow_unused=True)
        vs = (v,) if v is not None and not isinstance(v, tuple) else (v or tuple(ones_like(i) for i in ins))
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
        res = _grad([p[0] for p in pairs], us, grad_outputs=[p[1] for p in pairs], create_graph=create_graph,
                    allow_unused=True)
    res = tuple(zeros_like(o) if r is None else (r if create_graph else r.detach()) for r, o in zip(res, outs))
    out = tuple(o.detach() for o in outs)
    return (out[0] if single_out else out), (res[0] if single_out else res)
