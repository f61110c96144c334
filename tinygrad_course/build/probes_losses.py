"""The probes of chapter 05's losses (exercise 05.6): `F.nll_loss`, `nn.NLLLoss`, `F.cross_entropy` and
`nn.CrossEntropyLoss` on rows and on sequences (N, C, T), with ignored targets, class weights and label
smoothing, their values and the gradients of the scores, compared with the reference's run."""
from __future__ import annotations

import numpy as np

from .. import factories as F
from .. import nn
from ..generator import manual_seed
from ..nn.functional import cross_entropy, log_softmax, nll_loss


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _scores(seed):
    manual_seed(seed)
    rows = F.randn(6, 5, dtype=np.float64, requires_grad=True)
    seq = F.randn(2, 4, 3, dtype=np.float64, requires_grad=True)  # (N, C, T): a class score per position
    target, seq_target = F.tensor([0, 4, -100, 2, 1, 3]), F.tensor([[0, 3, 1], [-100, 2, 2]])
    return rows, seq, target, seq_target


def nll_loss_probe():
    """F.nll_loss and nn.NLLLoss of log-probabilities: the three reductions, an ignored target, another
    ignore_index, class weights, a sequence; the gradient of every score."""
    rows, seq, target, seq_target = _scores(21)
    logp, seq_logp = log_softmax(rows, 1), log_softmax(seq, 1)
    weight = F.arange(1.0, 6.0, dtype=np.float64)
    out = {"mean": nll_loss(logp, target), "sum": nll_loss(logp, target, reduction="sum"),
           "none": nll_loss(logp, target, reduction="none"),
           "ignore_4": nll_loss(logp, target.clamp(min=0), ignore_index=4),
           "weighted": nll_loss(logp, target, weight=weight), "module": nn.NLLLoss(reduction="sum")(logp, target),
           "seq": nll_loss(seq_logp, seq_target), "seq_none": nn.NLLLoss(reduction="none")(seq_logp, seq_target)}
    sum(v.sum() * (i + 1) for i, v in enumerate(out.values())).backward()
    return {**{k: _np(v) for k, v in out.items()}, "grad_rows": _np(rows.grad), "grad_seq": _np(seq.grad)}


def cross_entropy_probe():
    """F.cross_entropy and nn.CrossEntropyLoss of logits: the three reductions, ignored targets, label smoothing,
    class weights, a sequence (the GPT's loss shape), huge logits; the gradient of every logit."""
    rows, seq, target, seq_target = _scores(22)
    weight = F.arange(1.0, 6.0, dtype=np.float64)
    huge = rows * 400.0  # exp overflows unless the loss works on log-probabilities
    out = {"mean": cross_entropy(rows, target), "sum": cross_entropy(rows, target, reduction="sum"),
           "none": cross_entropy(rows, target, reduction="none"),
           "smoothed": nn.CrossEntropyLoss(label_smoothing=0.1)(rows, target),
           "smoothed_none": cross_entropy(rows, target, reduction="none", label_smoothing=0.2),
           "weighted": nn.CrossEntropyLoss(weight=weight)(rows, target),
           "weighted_smoothed": cross_entropy(rows, target, weight=weight, label_smoothing=0.1),
           "seq": cross_entropy(seq, seq_target), "seq_none": cross_entropy(seq, seq_target, reduction="none"),
           "huge": cross_entropy(huge, target)}
    sum(v.sum() * (i + 1) for i, v in enumerate(out.values())).backward()
    return {**{k: _np(v) for k, v in out.items()}, "grad_rows": _np(rows.grad), "grad_seq": _np(seq.grad)}


PROBES = {"nll_loss": nll_loss_probe, "cross_entropy": cross_entropy_probe}
