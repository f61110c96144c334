"""A catalogue of wrong answers for chapter 10 (a GPT): each realistic mistake fails its check with a message
that names it, the released stub fails, and the solution passes."""
import math

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check

from .test_wrong_answers_ch04_06 import _fails, _stub

F = tc.nn.functional
nn = tc.nn


# ---- 10.1 the causal mask ----------------------------------------------------------------------------------
def mask_solution(T):
    positions = tc.arange(T)
    return positions[None, :] <= positions[:, None]


def mask_upper(T):
    positions = tc.arange(T)
    return positions[None, :] >= positions[:, None]


def mask_strict(T):
    positions = tc.arange(T)
    return positions[None, :] < positions[:, None]


def mask_future(T):
    positions = tc.arange(T)
    return positions[None, :] > positions[:, None]


def mask_float(T):
    return (mask_solution(T)).float()


# ---- 10.2 attention ----------------------------------------------------------------------------------------
def _attention(scale, fill=float("-inf"), dim=-1, masked=True):
    def attention(q, k, v):
        T, d = q.shape[-2], q.shape[-1]
        scores = q @ k.transpose(-2, -1) / scale(d)
        if masked:
            scores = scores.masked_fill(~mask_solution(T), fill)
        return F.softmax(scores, dim=dim) @ v
    return attention


attention_solution = _attention(math.sqrt)
attention_unscaled = _attention(lambda d: 1.0)
attention_over_d = _attention(lambda d: d)
attention_zero_fill = _attention(math.sqrt, fill=0.0)
attention_unmasked = _attention(math.sqrt, masked=False)
attention_softmax_rows = _attention(math.sqrt, dim=-2)


def attention_detached(q, k, v):
    return attention_solution(q.detach(), k.detach(), v.detach())


# ---- 10.3 a pre-norm block ---------------------------------------------------------------------------------
class _Attention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in self.qkv(x).split(C, dim=2))
        return self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C))


def _block(forward):
    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.ln1 = nn.LayerNorm(n_embd)
            self.attn = _Attention(n_embd, n_head)
            self.ln2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

        def forward(self, x):
            return forward(self, x)
    return Block


def _pre_norm(self, x):
    x = x + self.attn(self.ln1(x))
    return x + self.mlp(self.ln2(x))


def _post_norm(self, x):
    x = self.ln1(x + self.attn(x))
    return self.ln2(x + self.mlp(x))


def _no_residual(self, x):
    return self.mlp(self.ln2(self.attn(self.ln1(x))))


def _normed_stream(self, x):
    x = self.ln1(x)
    x = x + self.attn(x)
    x = self.ln2(x)
    return x + self.mlp(x)


def _no_mlp(self, x):
    return x + self.attn(self.ln1(x))


BlockSolution, BlockPostNorm, BlockNoResidual, BlockNormedStream, BlockNoMlp = (
    _block(f) for f in (_pre_norm, _post_norm, _no_residual, _normed_stream, _no_mlp))


# ---- 10.4 the sampling distribution ------------------------------------------------------------------------
def _probs(divide=True, softmax_first=False, keep_ties=True, extra=0):
    def next_token_probs(logits, temperature=1.0, top_k=None):
        logits = logits / temperature if divide else logits * temperature
        if softmax_first:
            probs = F.softmax(logits, dim=-1)
            if top_k is not None:
                kth = tc.topk(logits, top_k, dim=-1).values[:, -1:]
                probs = probs.masked_fill(logits < kth, 0.0)
            return probs
        if top_k is not None:
            kth = tc.topk(logits, top_k + extra, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth if keep_ties else logits <= kth, float("-inf"))
        return F.softmax(logits, dim=-1)
    return next_token_probs


probs_solution = _probs()
probs_times_temperature = _probs(divide=False)
probs_softmax_before_top_k = _probs(softmax_first=True)
probs_drops_kth = _probs(keep_ties=False)
probs_keeps_one_more = _probs(extra=1)


# ---- 10.5 attention with a key/value cache -----------------------------------------------------------------
def _cached(extend=True, store_all=True, use_cache=True, causal_one_row=False):
    def cached_attention(q, k, v, cache):
        new_k, new_v = k, v
        if use_cache and "k" in cache:
            k, v = tc.cat([cache["k"], k], dim=2), tc.cat([cache["v"], v], dim=2)
        if store_all:
            cache["k"], cache["v"] = k, v
        else:
            cache["k"], cache["v"] = new_k, new_v
        if not extend:
            k, v = new_k, new_v
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal_one_row:
            scores = scores.masked_fill(~tc.tril(tc.ones(1, k.shape[2], dtype=tc.bool)), float("-inf"))
        return F.softmax(scores, dim=-1) @ v
    return cached_attention


cached_solution = _cached()
cached_only_itself = _cached(extend=False)
cached_replaced = _cached(store_all=False)
cached_causal_one_row = _cached(causal_one_row=True)


# ---- 10.6 weight-decay groups ------------------------------------------------------------------------------
def groups_solution(model, weight_decay):
    params = list(model.parameters())
    return [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]


def groups_decay_everything(model, weight_decay):
    return [{"params": list(model.parameters()), "weight_decay": weight_decay}, {"params": [], "weight_decay": 0.0}]


def groups_linear_weights_only(model, weight_decay):
    decay = [m.weight for m in model.modules() if isinstance(m, nn.Linear)]
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": [p for p in model.parameters() if p.dim() < 2], "weight_decay": 0.0}]


def groups_tied_twice(model, weight_decay):
    decay = [m.weight for m in model.modules() if isinstance(m, (nn.Linear, nn.Embedding))]
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": [p for p in model.parameters() if p.dim() < 2], "weight_decay": 0.0}]


def groups_swapped(model, weight_decay):
    params = list(model.parameters())
    return [{"params": [p for p in params if p.dim() < 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.0}]


@pytest.mark.parametrize("exercise, solution", [
    ("10.1", mask_solution), ("10.2", attention_solution), ("10.3", BlockSolution),
    ("10.4", probs_solution), ("10.5", cached_solution), ("10.6", groups_solution)])
def test_chapter_10_solutions_pass(exercise, solution):
    check(exercise, solution)


@pytest.mark.parametrize("exercise, wrong, phrase", [
    ("10.1", mask_upper, r"causal_mask\(5\).*True above the diagonal"),
    ("10.1", mask_strict, r"causal_mask\(5\).*the diagonal is False"),
    ("10.1", mask_future, r"causal_mask\(5\).*True marks the future"),
    ("10.1", mask_float, r"causal_mask\(5\)\.dtype.*bool"),
    ("10.2", attention_unscaled, r"attention\(q, k, v\).*not divided by sqrt\(d\)"),
    ("10.2", attention_over_d, r"attention\(q, k, v\).*divided by d instead of sqrt\(d\)"),
    ("10.2", attention_zero_fill, r"attention\(q, k, v\).*masked with 0 instead of -inf"),
    ("10.2", attention_unmasked, r"attention\(q, k, v\).*nothing is masked"),
    ("10.2", attention_softmax_rows, r"attention\(q, k, v\).*softmax runs over the queries"),
    ("10.2", attention_detached, r"connected to the graph"),
    ("10.3", BlockPostNorm, r"block\(x\).*post-norm"),
    ("10.3", BlockNoResidual, r"block\(x\).*no residual connection"),
    ("10.3", BlockNormedStream, r"block\(x\).*the residual stream itself is normalised"),
    ("10.3", BlockNoMlp, r"block\(x\).*the MLP branch is missing"),
    ("10.4", probs_times_temperature, r"temperature=0\.5.*multiplied by the temperature"),
    ("10.4", probs_softmax_before_top_k, r"top_k=3.*softmax ran before the top-k filter"),
    ("10.4", probs_drops_kth, r"top_k=3.*only k - 1 characters"),
    ("10.4", probs_keeps_one_more, r"top_k=3.*keeps k \+ 1 characters"),
    ("10.5", cached_only_itself, r"position 1.*attends only to itself"),
    ("10.5", cached_replaced, r"after position 1.*the cache is replaced, not extended"),
    ("10.5", cached_causal_one_row, r"position 1.*only the first cached position gets weight"),
    ("10.6", groups_decay_everything, r"biases and LayerNorm parameters are decayed too"),
    ("10.6", groups_linear_weights_only, r"missing: pos_emb\.weight"),
    ("10.6", groups_tied_twice, r"tok_emb\.weight appears more than once"),
    ("10.6", groups_swapped, r"the groups are swapped"),
    ("10.1", _stub, r"not implemented yet"), ("10.2", _stub, r"not implemented yet"),
    ("10.3", _stub, r"not implemented yet"), ("10.4", _stub, r"not implemented yet"),
    ("10.5", _stub, r"not implemented yet"), ("10.6", _stub, r"not implemented yet"),
])
def test_chapter_10_wrong_answers_are_named(exercise, wrong, phrase):
    _fails(exercise, wrong, phrase=phrase)
