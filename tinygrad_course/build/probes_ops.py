"""Probes of chapter 02b's ops, each run where a model runs it: `softmax`/`F.softmax`, `log_softmax`,
`nn.GELU` (exact and tanh), `F.dropout`, `nn.Embedding` with repeated ids, a causal `masked_fill` before a
softmax, `tc.cat`, transposes (`.T`, `.mT`), `expand`, `gather`
with repeated indices, `x[key]` (ints, slices with steps, None, `...`, index tensors that repeat a row),
`view`/`reshape`/`squeeze`/`unsqueeze` (of strided tensors too), `clone`/`contiguous`,
`narrow`/`split`/`chunk`; the outputs, the inputs' gradients and a second derivative, in float32 and float64.
Chapter 02's `Max` too: `max(dim, keepdim)` and `max()` over rows with ties, and `argmax`.
Chapter 02c: Tensor's operators, math and views (the learner's `TensorOperators`) run in one small model, a
Parameter's too; its reductions, comparisons and conversions (`TensorMethods`) and its in-place machinery and
methods (`TensorInplace`) in a classifier's loss, accuracy and optimizer updates, with in-place ops recorded in a
graph and PyTorch's errors."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn
from ..autograd.engine import grad as autograd_grad
from ..generator import manual_seed
from ..nn import functional as NF
from ..ops.concat import cat
from ..autograd.grad_mode import no_grad
from ..tensor import LEARNER_INPLACE_METHODS, LEARNER_METHODS, LEARNER_REDUCTION_METHODS


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


# op -> what a model computes with it, from one float input x of shape (2, 3, 4)
_CALLS = {
    "Softmax": lambda x: NF.softmax(x, dim=-1) * x + x.softmax(0),
    "LogSoftmax": lambda x: x.log_softmax(-1) * x + x.log_softmax(1),
    "Gelu": lambda x: nn.GELU()(x) + NF.gelu(x * 2, approximate="tanh"),
    "MaskedFill": lambda x: x.masked_fill(F.ones(3, 4, dtype=np.bool_).tril().logical_not(), float("-inf")).softmax(-1)
    + x.masked_fill(F.tensor([True, False, True, False]), 0.5) * x,
    "Cat": lambda x: cat([x, x * x, x[:, :1]], dim=1) * cat([x, x], dim=-1).sum(-1, keepdim=True)[:, :1],
    "Transpose": lambda x: (x.transpose(0, -1) * 2).transpose(0, 2) * x + (x[0].T @ x[1]).sum() + x.mT.sum(1)[:, :3, None],
    "Expand": lambda x: x[:, :1].expand(2, 3, 4) * x + x.sum(0, keepdim=True).expand_as(x) * x,
    "View": lambda x: x.view(6, 4).view(2, -1, 4) * x + x.reshape(-1)[:12].reshape(3, 4).unsqueeze(0) * x[:1]
    + x.sum(1, keepdim=True).squeeze(1).unsqueeze(-2) * x + x[:, :, 2:].view(2, 3, 2, 1).view(2, 3, 2) ** 2 @ x[0, :2],
    "Clone": lambda x: x.clone() * x + x.transpose(1, 2).contiguous().transpose(1, 2) ** 2
    + x.mT.reshape(2, 12).reshape(2, 3, 4) * x,
    "Narrow": lambda x: x.narrow(-1, 1, 2).sum(-1, keepdim=True) * x + cat(x.split([1, 3], dim=2)[::-1], dim=2) * x
    + x.chunk(2, 1)[0].sum(1, keepdim=True) ** 2,
    "Gather": lambda x: x.gather(2, F.tensor([[[3], [0], [3]], [[1], [1], [2]]])) * x
    + x.gather(-1, F.tensor([0, 3, 3, 1]).expand(2, 3, 4)) ** 2,
    "GetItem": lambda x: x[1] * x[0] + x[:, F.tensor([2, 0, 2])] * x + x[F.tensor([1, 1])] ** 2
    + x[..., 3][:, :, None] * x + x[:, ::2, 1:3].sum() * x[None, 1, -1, :] + x[1, 2, 3] * x,
}


def _call_probe(name):
    def probe():
        out = {}
        for dtype in (np.float32, np.float64):
            manual_seed(3)
            x = F.randn(2, 3, 4, dtype=dtype, requires_grad=True)
            y = _CALLS[name](x)
            gx, = autograd_grad((y * y).sum(), x, create_graph=True)
            second, = autograd_grad(gx.sum(), x, allow_unused=True) if gx.requires_grad else (None,)
            tag = np.dtype(dtype).name
            out.update({f"out_{tag}": _np(y), f"gx_{tag}": _np(gx),
                        f"second_{tag}": _np(second) if second is not None else np.zeros(1)})
        return out
    return probe


def dropout_probe():
    """F.dropout with a seeded mask (drawn by the framework): the output and the input's gradient."""
    out = {}
    for dtype in (np.float32, np.float64):
        manual_seed(4)
        x = F.randn(6, 5, dtype=dtype, requires_grad=True)
        y = NF.dropout(x, p=0.3)
        (y * F.arange(30.0, dtype=dtype).reshape(6, 5)).sum().backward()
        tag = np.dtype(dtype).name
        out.update({f"out_{tag}": _np(y), f"gx_{tag}": _np(x.grad)})
    return out


def embedding_probe():
    """nn.Embedding over ids that repeat (their rows' gradients add up) and F.embedding, float32."""
    manual_seed(5)
    layer = nn.Embedding(6, 3)
    ids = F.tensor([[5, 1, 5, 0], [1, 1, 2, 5]])
    y = layer(ids)
    (y * F.arange(24.0).reshape(2, 4, 3)).sum().backward()
    w = F.randn(4, 2, dtype=np.float64, requires_grad=True)
    z = NF.embedding(F.tensor([3, 0, 3]), w)
    gw, = autograd_grad((z ** 3).sum(), w, create_graph=True)
    second, = autograd_grad(gw.sum(), w)
    return {"out": _np(y), "grad": _np(layer.weight.grad), "z": _np(z), "gw": _np(gw), "second": _np(second)}


def max_probe():
    """x.max(dim, keepdim) (values and indices) and x.max() over rows with ties (the first largest element gets
    max(dim)'s gradient, x.max() shares it among the ties), argmax with and without a dim: the outputs, x's
    gradient and a second derivative, in float32 and float64."""
    out = {}
    for dtype in (np.float32, np.float64):
        manual_seed(6)
        data = F.randn(2, 3, 4, dtype=dtype).numpy().copy()
        data[0, 1] = [0.5, 2.0, 2.0, -1.0]  # a tie along the last dim
        data[1, :, 3] = 3.0  # a tie along dim 1, and three elements equal to the maximum of x
        x = F.tensor(data, requires_grad=True)
        values, indices = x.max(-1)
        kept = x.max(1, keepdim=True)
        y = values * kept.values.squeeze(1)[:, :3] + x.max() * x.max(0)[0].sum()
        gx, = autograd_grad((y * y).sum(), x, create_graph=True)
        second, = autograd_grad(gx.sum(), x, allow_unused=True)
        tag = np.dtype(dtype).name
        out.update({f"out_{tag}": _np(y), f"gx_{tag}": _np(gx), f"second_{tag}": _np(second),
                    f"indices_{tag}": np.concatenate([indices.numpy().ravel(), kept.indices.numpy().ravel(),
                                                      x.argmax(1).numpy().ravel(), x.argmax().numpy().ravel(),
                                                      x.argmax(-1, keepdim=True).numpy().ravel()])})
    return out


def _raises(call, error) -> float:
    try:
        call()
    except error:
        return 1.0
    return 0.0


def tensor_methods_probe():
    """Tensor's operators (a number or NumPy scalar on either side), math and views as a model computes with
    them, on a tensor and a Parameter: outputs, views' strides and shared storage, errors, gradients."""
    out = {}
    for dtype in (np.float32, np.float64):
        manual_seed(6)
        x = F.randn(2, 3, 4, dtype=dtype, requires_grad=True)
        w = nn.Parameter(F.randn(4, 3, dtype=dtype))
        h = (x @ w).tanh()
        y = ((2 - h) * 0.5 / (1 + h.exp()) + (h ** 2 + 1).sqrt().log() - (-h).relu() + h.sigmoid() * np.float32(2)
             + np.float64(1) / (h * h + 1) - w.T.sum() + w.t().sum())
        v = y.view(2, 9).reshape((3, 6)).t().contiguous().T.reshape(-1).unsqueeze(0).expand(2, -1).clone()
        z = x.transpose(1, 2).mT.unsqueeze(1).squeeze(1) * x[:, :1].expand(2, 3, 4) + x.view(6, 4).view(2, 3, 4)
        total = (v * v).sum() + (z * z).sum() + (x[0] @ x[1].T).sum() + (w.T @ x[0, 0]).sum()
        total.backward()
        tag = np.dtype(dtype).name
        made = [x.view(6, 4), x.transpose(0, 2), x.T, x.mT, x[:, :1].expand(2, 5, 4), x.unsqueeze(1),
                x.transpose(1, 2).contiguous(), x.contiguous(), x.reshape(4, 6), x.transpose(0, 1).reshape(6, 4),
                x.clone()]
        out.update({f"y_{tag}": _np(y), f"v_{tag}": _np(v), f"z_{tag}": _np(z), f"gx_{tag}": _np(x.grad),
                    f"gw_{tag}": _np(w.grad),
                    f"strides_{tag}": np.array([s for m in made for s in m.stride()], dtype=np.float64),
                    f"shares_{tag}": np.array([np.shares_memory(m._data, x._data) for m in made], dtype=np.float64),
                    f"refused_{tag}": np.array([_raises(lambda: x + "a", TypeError),
                                                _raises(lambda: x.t(), RuntimeError),
                                                _raises(lambda: x[0, 0].mT, RuntimeError),
                                                _raises(lambda: x.view(5), RuntimeError)])})
    return out


def _message(call) -> str:
    try:
        call()
    except RuntimeError as error:
        return str(error).split(" Hint:")[0]
    return ""


def tensor_inplace_probe():
    """Tensor's reductions, comparisons and in-place methods as a classifier's training computes with them: a
    loss (sum, mean, max), an accuracy (argmax, ==), Adam- and SGD-like updates of Parameters under no_grad
    (mul_, add_ with alpha, addcmul_, addcdiv_, lerp_, zero_, fill_, copy_, +=, -=, *=, /=), in-place ops
    recorded in a graph, version counters, and PyTorch's errors (as codes: which error each call raised)."""
    out = {}
    for dtype in (np.float32, np.float64):
        manual_seed(7)
        w = nn.Parameter(F.randn(4, 3, dtype=dtype))
        x, labels = F.randn(5, 4, dtype=dtype), F.tensor([0, 2, 1, 1, 0])
        scores = x @ w
        picked = scores.gather(1, labels.view(5, 1))
        loss = (scores - scores.max(1, keepdim=True).values).exp().sum(1).log().mean() - picked.mean() \
            + scores.max() * 0.01 + scores.sum((0, 1), keepdim=True).sum() * 0.001
        loss.backward()
        hits = (scores.argmax(1) == labels).sum()
        cmp = [scores > 0, scores <= scores.mean(), scores.ne(scores.max()), scores.lt(0.5), scores.ge(-0.5),
               scores.eq(scores.max(0).values), labels != 1, scores.le(0.2), scores.gt(0.1), scores < 0.3,
               scores >= 0, ((scores > 0) & (labels.view(5, 1) != 1)) | ~(scores < -1),
               (scores > 0).any(1), (scores > -2).all(0), (~labels) & 1]
        m, v = F.zeros_like(w), F.zeros_like(w)
        with no_grad():
            for _ in range(2):
                m.mul_(0.9).add_(w.grad, alpha=0.1)
                v.mul_(0.99).addcmul_(w.grad, w.grad, value=0.01)
                w.addcdiv_(m, v.sqrt().add_(1e-8), value=-0.01)
                w.sub_(w.grad, alpha=0.1).lerp_(F.zeros_like(w), 0.01)
            w.grad.zero_()
            w *= 0.5
            w /= 2
            w += 1
            w -= F.ones(3, dtype=dtype)
        buffer = F.empty(2, 3, dtype=dtype).fill_(2.5)
        buffer.copy_(F.tensor([1, 2, 3])).div_(F.tensor([2.0, 4.0, 8.0], dtype=dtype))
        # in a graph: the history continues through each in-place op
        a = F.randn(2, 3, dtype=dtype, requires_grad=True)
        y = a * 1
        y.mul_(a).add_(a, alpha=2).addcmul_(a, a, value=0.5)
        z = a * 2
        z.zero_()
        (y.sum() + (z + a).sum()).backward()
        converted = [x.to(np.float64 if dtype is np.float32 else np.float32), x.cpu(), x.float(), labels.float(),
                     labels.to(x), x.to("cpu", copy=True), scores.long(), x.to(dtype=labels.dtype)]
        same = [x.cpu() is x, x.to(x.dtype) is x, labels.long() is labels, x.to("cpu", copy=True) is x]
        ints = F.tensor([1, 2, 3])
        tag = np.dtype(dtype).name
        errors = [_message(lambda: ints.add_(1.5)), _message(lambda: F.zeros(3, dtype=dtype).add_(F.ones(2, 3))),
                  _message(lambda: nn.Parameter(F.ones(2)).add_(1)),
                  _message(lambda: nn.Parameter(F.ones(2, 2))[0].mul_(2)),
                  _message(lambda: (lambda e: (e.add_(1), e.sum().backward()))(a.exp()))]
        out.update({f"loss_{tag}": _np(loss), f"hits_{tag}": _np(hits),
                    f"compare_{tag}": np.concatenate([c.numpy().ravel() for c in cmp]).astype(np.float64),
                    f"w_{tag}": _np(w), f"state_{tag}": np.concatenate([_np(m).ravel(), _np(v).ravel(), _np(buffer).ravel()]),
                    f"versions_{tag}": np.array([w._version[0], m._version[0], v._version[0], buffer._version[0],
                                                 w.grad._version[0], y._version[0], z._version[0]], dtype=np.float64),
                    f"graph_{tag}": np.concatenate([_np(y).ravel(), _np(a.grad).ravel()]),
                    f"leaf_{tag}": np.array([w.is_leaf, w.requires_grad, y.grad_fn.name() == "AddcmulBackward0",
                                             z.grad_fn.name() == "ZeroBackward0"], dtype=np.float64),
                    f"converted_{tag}": np.concatenate([_np(c).ravel() for c in converted]
                                                       + [np.array(same, dtype=np.float64)]),
                    f"errors_{tag}": np.array([sum(map(ord, e)) for e in errors], dtype=np.float64)})
    return out


PROBES = {**{name: _call_probe(name) for name in _CALLS}, "Dropout": dropout_probe, "Embedding": embedding_probe,
          "Max": max_probe,
          **{f"Tensor.{attr}": tensor_methods_probe for attr in LEARNER_METHODS},
          **{f"Tensor.{attr}": tensor_inplace_probe for attr in LEARNER_REDUCTION_METHODS + LEARNER_INPLACE_METHODS}}
