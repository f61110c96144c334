"""Chapter 10 (a GPT): checks for the causal mask, attention (forward and its gradients), a pre-norm block,
the sampling distribution, attention with a key/value cache and AdamW's weight-decay groups (the model whole,
10.7-10.10, is checked in ch10_gpt).

Each check compares the learner's piece with the same computation written out here in the framework's
operations, on small seeded inputs, and then uses it the way the chapter's GPT does.
"""
import math

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from . import ch10_gpt  # noqa: F401  (registers 10.7-10.10: CausalSelfAttention, the GPT, lr_at, generate)
from . import ch10_sampling  # noqa: F401  (registers 10.11: Topk and multinomial)

F = tc.nn.functional
_SDPA = "tinygrad_course.nn.functional.scaled_dot_product_attention"


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _reference_attention(q, k, v, scale=True, fill=float("-inf"), dim=-1, masked=True):
    """softmax(q k^T / sqrt(d), future masked with `fill`) @ v, and variants of it that are common mistakes."""
    T, d = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(d)
    if masked:
        scores = scores.masked_fill(~tc.tril(tc.ones(T, T, dtype=tc.bool)), fill)
    return F.softmax(scores, dim=dim) @ v


def _close_to(value, rtol=1e-4, atol=1e-5):
    return lambda g, e: g.shape == value.shape and np.allclose(g, value, rtol=rtol, atol=atol)


# ---- 10.1 --------------------------------------------------------------------------------------------------
@exercise("10.1", title="the causal mask", points=1, forbidden=["tinygrad_course.tril", "numpy.tril"])
def causal_mask_check(t, causal_mask):
    mask = causal_mask(5)
    t.equal(tuple(mask.shape), (5, 5), what="causal_mask(5).shape", hint="one row per query, one column per key")
    t.equal(str(mask.dtype), str(tc.bool), what="causal_mask(5).dtype",
            hint="compare positions (e.g. `cols <= rows`) to get a bool tensor; masked_fill takes a bool mask")
    expected = np.tril(np.ones((5, 5), dtype=bool))
    got = _np(mask).astype(np.float64)
    t.close(got, expected.astype(np.float64), what="causal_mask(5) (True where query t may see key s)",
            given={"T": 5}, mistakes=[
                mistakes.custom(_close_to(expected.T.astype(np.float64)),
                                "True above the diagonal: every position sees the future and not the past",
                                "row t is the query, column s the key: allowed when s <= t"),
                mistakes.custom(_close_to(np.tril(np.ones((5, 5)), -1)),
                                "the diagonal is False: a position cannot attend to itself (row 0 sees nothing at all)",
                                "use s <= t, not s < t"),
                mistakes.custom(_close_to(1 - expected.astype(np.float64)),
                                "True marks the future (what to hide) instead of what may be seen",
                                "the chapter's mask is True where attention is allowed; invert it")])
    t.equal(tuple(causal_mask(1).shape), (1, 1), what="causal_mask(1).shape")
    # used as the chapter uses it: masked scores, then softmax, equals the framework's causal attention
    tc.manual_seed(0)
    q, k, v = tc.randn(2, 7, 4), tc.randn(2, 7, 4), tc.randn(2, 7, 4)
    scores = (q @ k.transpose(-2, -1) / 2.0).masked_fill(~causal_mask(7), float("-inf"))
    t.close(F.softmax(scores, dim=-1) @ v, _reference_attention(q, k, v),
            what="attention computed with causal_mask(7) as its mask", rtol=1e-4, atol=1e-5)


# ---- 10.2 --------------------------------------------------------------------------------------------------
@exercise("10.2", title="attention, forward and backward", points=3, forbidden=[_SDPA])
def attention_check(t, attention):
    tc.manual_seed(0)
    q, k, v = (tc.randn(2, 3, 6, 8, requires_grad=True) for _ in range(3))
    given = "q, k, v = three tc.randn(2, 3, 6, 8) (batch 2, 3 heads, T = 6, head size 8)"
    out = attention(q, k, v)
    expected = _reference_attention(q, k, v)
    with tc.no_grad():
        variants = {name: _np(_reference_attention(q, k, v, **kw)) for name, kw in {
            "unscaled": dict(scale=False), "zero": dict(fill=0.0), "rows": dict(dim=-2),
            "unmasked": dict(masked=False)}.items()}
        over_d = _np(F.softmax((q @ k.transpose(-2, -1) / 8).masked_fill(
            ~tc.tril(tc.ones(6, 6, dtype=tc.bool)), float("-inf")), dim=-1) @ v)
    t.equal(tuple(out.shape), (2, 3, 6, 8), what="attention(q, k, v).shape", given=given)
    t.close(out, expected, what="attention(q, k, v)", rtol=1e-4, atol=1e-5, given=given, mistakes=[
        mistakes.custom(_close_to(variants["unscaled"]), "the scores are not divided by sqrt(d)",
                        "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])"),
        mistakes.custom(_close_to(over_d), "the scores are divided by d instead of sqrt(d)",
                        "the scale is 1 / math.sqrt(d): it brings the variance of q.k from d back to 1"),
        mistakes.custom(_close_to(variants["zero"]),
                        "the future is masked with 0 instead of -inf: exp(0) = 1 still gives it weight",
                        "masked_fill(~mask, float('-inf')) before the softmax"),
        mistakes.custom(_close_to(variants["unmasked"]), "nothing is masked: every position sees the future",
                        "masked_fill the scores where causal_mask(T) is False"),
        mistakes.custom(_close_to(variants["rows"]),
                        "the softmax runs over the queries (dim=-2): each key's column sums to 1, not each row",
                        "F.softmax(scores, dim=-1): a query's weights over the keys sum to 1")])
    t.true(out.requires_grad, "attention(q, k, v) to be connected to the graph (requires_grad)",
           hint="use tensor operations only; no .numpy(), .item() or .detach() inside attention")
    # the backward check: autograd through the learner's operations gives the reference's gradients
    weight = tc.randn(2, 3, 6, 8)
    got_grads = tc.autograd.grad((out * weight).sum(), (q, k, v))
    expected_grads = tc.autograd.grad((expected * weight).sum(), (q, k, v))
    for name, got, exp in zip("qkv", got_grads, expected_grads):
        t.close(got, exp, what=f"the gradient of (attention(q, k, v) * w).sum() with respect to {name}",
                rtol=1e-3, atol=1e-5, given=given)
    x = tc.randn(1, 1, 4, 2, dtype=tc.float64, requires_grad=True)
    t.true(tc.autograd.gradcheck(lambda a: attention(a, a, a), (x,)),
           "gradcheck of attention(x, x, x) in float64 (finite differences agree with autograd)")


# ---- 10.3 --------------------------------------------------------------------------------------------------
def _block_variants(block, x):
    with tc.no_grad():
        h = x + block.attn(block.ln1(x))
        pre_norm = h + block.mlp(block.ln2(h))
        p = block.ln1(x + block.attn(x))
        post_norm = block.ln2(p + block.mlp(p))
        no_residual = block.mlp(block.ln2(block.attn(block.ln1(x))))
        a = block.ln1(x)
        a = a + block.attn(a)
        normed_stream = block.ln2(a) + block.mlp(block.ln2(a))
        attn_only = x + block.attn(block.ln1(x))
    return pre_norm, {"post": _np(post_norm), "no_residual": _np(no_residual), "normed": _np(normed_stream),
                      "attn_only": _np(attn_only)}


@exercise("10.3", title="a pre-norm transformer block", points=2)
def block_check(t, Block):
    tc.manual_seed(0)
    block = Block(16, 4)
    for name in ("ln1", "attn", "ln2", "mlp"):
        t.true(hasattr(block, name), f"Block(16, 4) to have the submodule {name}",
               hint="keep the __init__ the exercise gives you")
    with tc.no_grad():  # non-trivial LayerNorm parameters, so a misplaced norm shows
        for ln in (block.ln1, block.ln2):
            ln.weight.copy_(1 + 0.5 * tc.randn(16))
            ln.bias.copy_(0.5 * tc.randn(16))
    x = tc.randn(2, 5, 16) * 3 + 1
    given = "Block(16, 4) with seeded weights, x = tc.randn(2, 5, 16) * 3 + 1"
    expected, v = _block_variants(block, x)
    out = block(x)
    t.equal(tuple(out.shape), (2, 5, 16), what="block(x).shape", given=given)
    t.close(out, expected, what="block(x)", rtol=1e-4, atol=1e-5, given=given, mistakes=[
        mistakes.custom(_close_to(v["post"]), "this is a post-norm block: LayerNorm after adding the residual",
                        "pre-norm: x = x + self.attn(self.ln1(x)); then x = x + self.mlp(self.ln2(x))"),
        mistakes.custom(_close_to(v["no_residual"]), "there is no residual connection (x + ...)",
                        "add each branch's output to its input: x = x + branch(norm(x))"),
        mistakes.custom(_close_to(v["normed"]),
                        "the residual stream itself is normalised: the residual adds to ln(x), not to x",
                        "normalise only the branch's input; the residual adds to the un-normalised x"),
        mistakes.custom(_close_to(v["attn_only"]), "the MLP branch is missing",
                        "after attention: x = x + self.mlp(self.ln2(x))")])
    loss = (block(x) ** 2).mean()
    loss.backward()
    t.true(all(p.grad is not None for p in block.parameters()),
           "every parameter of the block to receive a gradient from (block(x) ** 2).mean().backward()")
    # generation hands each block its key/value cache: the block passes it on to its attention
    block.attn = _CacheSpy()
    cache = {}
    try:
        block(x, cache)
    except TypeError as error:
        t.fail("block(x, cache)", f"raised TypeError: {error}", given=given,
               hint="def forward(self, x, cache=None): and self.attn(self.ln1(x), cache)")
    t.true(block.attn.seen[-1:] == [cache], "block(x, cache) to hand cache to self.attn", given=given,
           why="the attention was called without it" if block.attn.seen else "the attention was not called",
           hint="x = x + self.attn(self.ln1(x), cache)")


class _CacheSpy(tc.nn.Module):
    """An attention that records the cache it is given and adds nothing."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x, cache=None):
        self.seen.append(cache)
        return tc.zeros_like(x)


# ---- 10.4 --------------------------------------------------------------------------------------------------
def _probs(logits, temperature, top_k, keep=0):
    logits = logits / temperature
    if top_k is not None:
        kth = tc.topk(logits, top_k + keep, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return F.softmax(logits, dim=-1)


@exercise("10.4", title="the sampling distribution: temperature and top-k", points=2)
def sampling_check(t, next_token_probs):
    tc.manual_seed(0)
    logits = tc.randn(3, 10) * 2
    for temperature, top_k in [(1.0, None), (0.5, None), (2.0, None), (0.7, 3), (1.0, 1)]:
        call = f"next_token_probs(logits, temperature={temperature}, top_k={top_k})"
        given = "logits = tc.randn(3, 10) * 2 after tc.manual_seed(0)"
        got = next_token_probs(logits, temperature, top_k)
        expected = _probs(logits, temperature, top_k)
        times = F.softmax(logits * temperature, dim=-1)
        if top_k is not None:
            kth = tc.topk(logits, top_k, dim=-1).values[:, -1:]
            plain = F.softmax(logits / temperature, dim=-1)
            unnormalised = _np(plain.masked_fill(logits < kth, 0.0))
            one_more = _np(_probs(logits, temperature, top_k, keep=1))
            one_less = _np(_probs(logits, temperature, top_k - 1)) if top_k > 1 else np.full((3, 10), np.nan)
        else:
            unnormalised = one_more = one_less = np.full((3, 10), np.nan)
        t.close(got, expected, what=call, rtol=1e-4, atol=1e-6, given=given, mistakes=[
            mistakes.custom(_close_to(_np(times), atol=1e-6), "the logits are multiplied by the temperature",
                            "divide: logits / temperature (a low temperature sharpens)"),
            mistakes.custom(_close_to(unnormalised, atol=1e-6),
                            "the kept probabilities do not sum to 1: the softmax ran before the top-k filter",
                            "filter the logits first (set the rest to -inf), then take the softmax"),
            mistakes.custom(_close_to(one_more, atol=1e-6), "top-k keeps k + 1 characters",
                            "keep the logits >= the k-th largest (tc.topk(logits, k).values[:, -1:])"),
            mistakes.custom(_close_to(one_less, atol=1e-6), "top-k keeps only k - 1 characters: the k-th is dropped",
                            "mask the logits strictly below the k-th largest: logits < kth")])
    probs = next_token_probs(logits, 0.8, 5)
    counts = np.bincount(tc.multinomial(probs[0], 2000, replacement=True,
                                        generator=tc.Generator().manual_seed(0)).numpy(), minlength=10)
    t.true(int((counts > 0).sum()) <= 5, "samples drawn from next_token_probs(logits, 0.8, top_k=5) to use at "
           "most 5 distinct characters")


# ---- 10.5 --------------------------------------------------------------------------------------------------
@exercise("10.5", title="attention with a key/value cache", points=3, forbidden=[_SDPA])
def cache_check(t, cached_attention):
    tc.manual_seed(0)
    B, H, T, d = 2, 2, 6, 4
    q, k, v = tc.randn(B, H, T, d), tc.randn(B, H, T, d), tc.randn(B, H, T, d)
    full = _np(_reference_attention(q, k, v))
    cache = {}
    given = "q, k, v = tc.randn(2, 2, 6, 4) fed one position at a time (q[:, :, t:t+1], ...) into cache = {}"
    for step in range(T):
        t.context = f"step {step} (position {step}) of feeding the sequence one position at a time"
        out = cached_attention(q[:, :, step:step + 1], k[:, :, step:step + 1], v[:, :, step:step + 1], cache)
        t.equal(tuple(out.shape), (B, H, 1, d), what=f"the output shape at position {step}", given=given)
        t.close(out, full[:, :, step:step + 1], what=f"the output at position {step}", rtol=1e-4, atol=1e-5,
                given=given, mistakes=[
                    mistakes.custom(_close_to(_np(v[:, :, step:step + 1])),
                                    "the new position attends only to itself: the cached keys and values are unused",
                                    "concatenate cache['k'] and the new k along dim=2 before the scores"),
                    mistakes.custom(_close_to(_np(v[:, :, :1])) if step > 0 else (lambda g, e: False),
                                    "only the first cached position gets weight: a causal mask was applied to one "
                                    "query (is_causal/tril with 1 row keeps only column 0)",
                                    "a single new query may see every cached key: no mask is needed"),
                    mistakes.custom(_close_to(full[:, :, step:step + 1] if step == 0 else _np(_reference_attention(
                        q[:, :, step - 1:step + 1], k[:, :, step - 1:step + 1], v[:, :, step - 1:step + 1])[:, :, 1:])),
                        "only the previous position and the new one are seen: the cache is replaced, not extended",
                        "store the concatenated keys and values back: cache['k'] = k (all positions so far)")])
        t.true(isinstance(cache, dict) and "k" in cache and "v" in cache,
               "the cache to hold the keys and values under cache['k'] and cache['v']", given=given,
               hint="after concatenating, store them: cache['k'], cache['v'] = k, v")
        stored = tuple(cache["k"].shape)
        t.equal(stored, (B, H, step + 1, d), what=f"cache['k'].shape after position {step}", given=given,
                why="the cache is replaced, not extended: it holds only the newest key" if step and len(stored) == 4
                and stored[2] == 1 else None, hint="one key per position seen so far, along dim=2: store the "
                "concatenated keys and values back into the cache")
    t.context = None


# ---- 10.6 --------------------------------------------------------------------------------------------------
class _TinyLM(tc.nn.Module):
    """Embeddings (tied head), one LayerNorm and a Linear with bias: every kind of parameter a GPT has."""

    def __init__(self):
        super().__init__()
        self.wte = tc.nn.Embedding(11, 8)
        self.wpe = tc.nn.Embedding(4, 8)
        self.ln = tc.nn.LayerNorm(8)
        self.fc = tc.nn.Linear(8, 8)
        self.lm_head = tc.nn.Linear(8, 11, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(tc.arange(idx.shape[1]))
        return self.lm_head(self.fc(self.ln(x)))


def _ids(params):
    return [id(p) for p in params]


@exercise("10.6", title="weight decay on the right parameters", points=2)
def decay_groups_check(t, param_groups):
    tc.manual_seed(0)
    model = _TinyLM()
    names = {id(p): n for n, p in model.named_parameters()}
    groups = param_groups(model, 0.1)
    t.true(isinstance(groups, (list, tuple)) and len(groups) == 2 and all(isinstance(g, dict) for g in groups),
           "param_groups(model, 0.1) to return a list of two dicts (the decayed group, then the other)",
           hint='[{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]')
    decay, rest = (list(g.get("params", [])) for g in groups)
    t.equal([g.get("weight_decay") for g in groups], [0.1, 0.0], what="the groups' weight_decay values",
            hint="the first group has weight_decay=weight_decay, the second 0.0")
    listed = _ids(decay) + _ids(rest)
    twice = sorted({names.get(i, "?") for i in listed if listed.count(i) > 1})
    t.true(not twice, "every parameter to be in exactly one group",
           why=f"{', '.join(twice)} appears more than once (the tied head and token embedding are one parameter)"
           if twice else None, hint="iterate model.parameters(): it lists a shared parameter once")
    missing = sorted(n for i, n in names.items() if i not in listed)
    t.true(not missing, "every parameter of the model to be in a group", why=f"missing: {', '.join(missing)}"
           if missing else None, hint="split model.parameters() in two; a parameter in no group is never trained")
    got_decay = sorted(names[i] for i in _ids(decay))
    expected_decay = sorted(n for n, p in model.named_parameters() if p.dim() >= 2)
    why = None
    if set(got_decay) > set(expected_decay):
        why = "biases and LayerNorm parameters are decayed too: decay pulls a LayerNorm gain toward 0"
    elif set(got_decay) < set(expected_decay):
        why = "some weight matrices (the embeddings?) are not decayed"
    elif set(got_decay) == {n for n, p in model.named_parameters() if p.dim() < 2}:
        why = "the groups are swapped: the matrices get no decay and the biases get it"
    t.equal(got_decay, expected_decay, what="the names of the parameters in the decayed group", why=why,
            hint="decay the parameters with p.dim() >= 2 (weight matrices, embedding tables); not the rest")
    # the groups drive AdamW as the chapter's training does
    optimizer = tc.optim.AdamW(groups, lr=0.01)
    idx = tc.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    F.cross_entropy(model(idx).reshape(8, 11), tc.tensor([2, 3, 4, 5, 6, 7, 8, 9])).backward()
    optimizer.step()
    t.true(all(np.isfinite(_np(p)).all() for p in model.parameters()), "one AdamW step with your groups to "
           "leave every parameter finite")
