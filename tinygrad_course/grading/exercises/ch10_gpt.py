"""Chapter 10 (a GPT), the model whole: checks for multi-head CausalSelfAttention, the GPT module, the
learning-rate schedule and the generation loop through the key/value caches.

Each check computes the expected value here from the learner's own layers (their c_attn and c_proj, their
embeddings and blocks), so a wrong composition is named apart from the pieces the earlier exercises checked.
"""
import math

import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise

F = tc.nn.functional
nn = tc.nn
_SDPA = "tinygrad_course.nn.functional.scaled_dot_product_attention"


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _close_to(value, rtol=1e-4, atol=1e-5):
    return lambda g, e: g.shape == value.shape and np.allclose(g, value, rtol=rtol, atol=atol)


def _causal(q, k, v):
    T, d = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~tc.tril(tc.ones(T, T, dtype=tc.bool)),
                                                                  float("-inf"))
    return F.softmax(scores, dim=-1) @ v


# ---- 10.7 --------------------------------------------------------------------------------------------------
def _self_attention(attn, x, split="heads", merge="transpose", project=True, heads=None, order="qkv"):
    """attn's computation from its own c_attn and c_proj, and variants of it that are common mistakes."""
    B, T, C = x.shape
    H = heads or attn.n_head
    parts = dict(zip(order, attn.c_attn(x).split(C, dim=2)))
    if split == "heads":
        q, k, v = (parts[n].view(B, T, H, C // H).transpose(1, 2) for n in "qkv")
    else:  # viewed straight as (B, H, T, d): the heads take blocks of positions, not of channels
        q, k, v = (parts[n].reshape(B, H, T, C // H) for n in "qkv")
    y = _causal(q, k, v)
    y = y.transpose(1, 2).reshape(B, T, C) if merge == "transpose" else y.reshape(B, T, C)
    return attn.c_proj(y) if project else y


@exercise("10.7", title="multi-head causal self-attention", points=3, forbidden=[_SDPA])
def self_attention_check(t, CausalSelfAttention):
    tc.manual_seed(0)
    attn = CausalSelfAttention(16, 4)
    for name, shape in (("c_attn", (48, 16)), ("c_proj", (16, 16))):
        layer = getattr(attn, name, None)
        t.true(isinstance(layer, nn.Linear), f"CausalSelfAttention(16, 4) to have an nn.Linear named {name}",
               hint="self.c_attn = nn.Linear(n_embd, 3 * n_embd); self.c_proj = nn.Linear(n_embd, n_embd)")
        t.equal(tuple(layer.weight.shape), shape, what=f"CausalSelfAttention(16, 4).{name}.weight.shape",
                hint="c_attn maps n_embd to the queries, keys and values of every head at once: 3 * n_embd")
    t.equal(getattr(attn, "n_head", None), 4, what="CausalSelfAttention(16, 4).n_head",
            hint="keep the number of heads: self.n_head = n_head")
    x = tc.randn(2, 5, 16)
    given = "attn = CausalSelfAttention(16, 4) after tc.manual_seed(0), x = tc.randn(2, 5, 16)"
    out = attn(x)
    with tc.no_grad():
        expected = _self_attention(attn, x)
        wrong = {name: _np(_self_attention(attn, x, **kw)) for name, kw in {
            "split": dict(split="view"), "merge": dict(merge="reshape"), "proj": dict(project=False),
            "one": dict(heads=1), "kqv": dict(order="kqv")}.items()}
    t.equal(tuple(out.shape), (2, 5, 16), what="attn(x).shape", given=given,
            hint="merge the heads back: y.transpose(1, 2).reshape(B, T, C), then self.c_proj")
    t.close(out, expected, what="attn(x)", rtol=1e-4, atol=1e-5, given=given, mistakes=[
        mistakes.custom(_close_to(wrong["split"]),
                        "the heads are split with view(B, n_head, T, head size) directly: each head gets a block "
                        "of positions instead of a slice of every position's channels",
                        "view(B, T, n_head, C // n_head), then transpose(1, 2) to (B, n_head, T, head size)"),
        mistakes.custom(_close_to(wrong["merge"]),
                        "the heads are merged with reshape(B, T, C) alone: (B, n_head, T, d) must be transposed "
                        "back first, or positions and heads are mixed",
                        "y.transpose(1, 2).reshape(B, T, C)"),
        mistakes.custom(_close_to(wrong["proj"]), "c_proj is not applied to the merged heads",
                        "return self.c_proj(y): it mixes the heads' outputs"),
        mistakes.custom(_close_to(wrong["one"]), "there is one head of size n_embd: the channels are not split "
                        "into n_head heads", "split each of q, k, v into n_head heads of size C // n_head"),
        mistakes.custom(_close_to(wrong["kqv"]), "the first third of c_attn's output is used as the keys and the "
                        "second as the queries", "q, k, v = self.c_attn(x).split(C, dim=2), in that order")])
    (out ** 2).sum().backward()
    t.true(all(p.grad is not None for p in attn.parameters()), "every parameter of attn to receive a gradient "
           "from (attn(x) ** 2).sum().backward()", hint="use tensor operations only, and your attention(q, k, v)")
    cache = {}
    with tc.no_grad():
        for step in range(5):
            t.context = f"position {step} of feeding x one position at a time into attn(x[:, t:t+1], cache)"
            got = attn(x[:, step:step + 1], cache)
            alone = _np(_self_attention(attn, x[:, step:step + 1]))
            t.close(got, expected[:, step:step + 1], what=f"attn(x[:, {step}:{step + 1}], cache)", rtol=1e-4,
                    atol=1e-5, given=given + ", cache = {}", mistakes=[mistakes.custom(
                        _close_to(alone) if step else (lambda g, e: False),
                        "the position attends only to itself: the cache is not used",
                        "with a cache, call your cached_attention(q, k, v, cache) instead of attention(q, k, v)")])
    t.context = None


# ---- 10.8 --------------------------------------------------------------------------------------------------
def _gpt_logits(model, idx, positions=True, final_norm=True, by_token=False):
    """The GPT's logits from the model's own layers, and variants of it that are common mistakes."""
    T = idx.shape[1]
    x = model.wte(idx)
    if positions:
        x = x + model.wpe(idx if by_token else tc.arange(T))
    for block in model.h:
        x = block(x)
    return model.lm_head(model.ln_f(x) if final_norm else x)


def _submodule_checks(t, model):
    for name, kind, what in (("wte", nn.Embedding, "the token embedding, nn.Embedding(vocab_size, n_embd)"),
                             ("wpe", nn.Embedding, "the position embedding, nn.Embedding(block_size, n_embd)"),
                             ("h", nn.ModuleList, "the blocks, nn.ModuleList([Block(n_embd, n_head) ...])"),
                             ("ln_f", nn.LayerNorm, "the final nn.LayerNorm(n_embd)"),
                             ("lm_head", nn.Linear, "the head, nn.Linear(n_embd, vocab_size, bias=False)")):
        t.true(isinstance(getattr(model, name, None), kind), f"GPT(11, 8, 16, 4, 2) to have {name}: {what}",
               hint="use nanoGPT's names: wte, wpe, h, ln_f, lm_head")
    t.equal((tuple(model.wte.weight.shape), tuple(model.wpe.weight.shape), len(model.h)), ((11, 16), (8, 16), 2),
            what="(wte.weight.shape, wpe.weight.shape, len(h)) of GPT(11, 8, 16, 4, 2)",
            hint="vocab_size token rows, block_size position rows, n_layer blocks")
    t.true(model.lm_head.bias is None, "lm_head to have no bias", hint="nn.Linear(n_embd, vocab_size, bias=False)")
    t.true(model.lm_head.weight is model.wte.weight, "model.lm_head.weight to be model.wte.weight (one Parameter)",
           why="the head has a weight of its own: it is not tied to the token embedding",
           hint="after creating both: self.lm_head.weight = self.wte.weight")
    C, L = 16, 2
    count = 11 * C + 8 * C + L * (12 * C * C + 13 * C) + 2 * C
    t.equal(sum(p.numel() for p in model.parameters()), count, what="the parameter count of GPT(11, 8, 16, 4, 2)",
            hint="embeddings V*C + T*C, each block 12C^2 + 13C, the final LayerNorm 2C; the tied head adds none")


@exercise("10.8", title="the GPT: embeddings, blocks, a tied head and the loss", points=3)
def gpt_check(t, GPT):
    tc.manual_seed(0)
    model = GPT(11, 8, 16, 4, 2)
    _submodule_checks(t, model)
    generator = tc.Generator().manual_seed(0)
    idx, targets = tc.randint(0, 8, (2, 8), generator=generator), tc.randint(0, 11, (2, 8), generator=generator)
    given = ("model = GPT(vocab_size=11, block_size=8, n_embd=16, n_head=4, n_layer=2) after tc.manual_seed(0), "
             f"idx = {idx.tolist()}, targets = {targets.tolist()}")
    out = model(idx)
    t.true(isinstance(out, tuple) and len(out) == 2, "model(idx) to return a pair (logits, loss)", given=given,
           hint="return logits, loss, with loss = None when targets is None")
    logits, loss = out
    t.true(loss is None, "the loss of model(idx), without targets, to be None", given=given)
    with tc.no_grad():
        expected = _gpt_logits(model, idx)
        wrong = {name: _np(_gpt_logits(model, idx, **kw)) for name, kw in {
            "positions": dict(positions=False), "norm": dict(final_norm=False), "by_token": dict(by_token=True)}.items()}
    t.close(logits, expected, what="the logits of model(idx)", rtol=1e-4, atol=1e-5, given=given, mistakes=[
        mistakes.custom(_close_to(wrong["positions"]), "the position embedding is not added: the model cannot tell "
                        "positions apart", "x = self.wte(idx) + self.wpe(tc.arange(T))"),
        mistakes.custom(_close_to(wrong["by_token"]), "the position embedding is looked up with the token ids, not "
                        "with the positions 0 .. T-1", "self.wpe(tc.arange(start, start + T))"),
        mistakes.custom(_close_to(wrong["norm"]), "the final LayerNorm is missing before the head",
                        "logits = self.lm_head(self.ln_f(x))")])
    _, loss = model(idx, targets)
    with tc.no_grad():
        expected_loss = F.cross_entropy(expected.reshape(16, 11), targets.reshape(16))
    t.close(loss, expected_loss, what="the loss of model(idx, targets)", rtol=1e-4, atol=1e-5, given=given,
            mistakes=[mistakes.custom(_close_to(_np(expected_loss) * 16), "the loss is the sum over the 16 "
                                      "positions, not their mean", "F.cross_entropy's default reduction, the mean")])
    loss.backward()
    t.true(all(p.grad is not None for p in model.parameters()),
           "every parameter to receive a gradient from model(idx, targets)[1].backward()", given=given)
    caches, at_zero = [{} for _ in model.h], [{} for _ in model.h]
    with tc.no_grad():
        for step in range(8):
            t.context = f"position {step} of feeding idx one position at a time with caches and start={step}"
            got, _ = model(idx[:, step:step + 1], caches=caches, start=step)
            x = model.wte(idx[:, step:step + 1]) + model.wpe(tc.tensor([0]))  # what ignoring `start` gives
            for block, cache in zip(model.h, at_zero):
                x = block(x, cache)
            ignored = _np(model.lm_head(model.ln_f(x)))
            t.close(got, expected[:, step:step + 1], what=f"model(idx[:, {step}:{step + 1}], caches=caches, "
                    f"start={step})[0]", rtol=1e-4, atol=1e-5, given=given, mistakes=[mistakes.custom(
                        _close_to(ignored) if step else (lambda g, e: False),
                        "the position embedding ignores start: every new token is embedded at position 0",
                        "self.wpe(tc.arange(start, start + T)); block i gets caches[i]")])
    t.context = None


# ---- 10.9 --------------------------------------------------------------------------------------------------
def _lr(step, max_steps, max_lr, warmup, first=1, floor=10, shift=True, half=0.5):
    if step < warmup:
        return max_lr * (step + first) / warmup
    progress = min(1.0, ((step - warmup) / max(1, max_steps - warmup)) if shift else step / max_steps)
    min_lr = max_lr / floor if floor else 0.0
    return min_lr + half * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))


@exercise("10.9", title="warmup, then cosine decay", points=2)
def lr_check(t, lr_at):
    steps = (0, 1, 9, 10, 11, 40, 70, 99, 100)
    call = "[lr_at(step, 100, max_lr=1.0, warmup=10) for step in (0, 1, 9, 10, 11, 40, 70, 99, 100)]"
    got = np.array([lr_at(s, 100, max_lr=1.0, warmup=10) for s in steps], dtype=np.float64)
    variants = {name: np.array([_lr(s, 100, 1.0, 10, **kw) for s in steps]) for name, kw in {
        "right": {}, "zero_start": dict(first=0), "to_zero": dict(floor=0), "unshifted": dict(shift=False),
        "no_half": dict(half=1.0)}.items()}
    t.close(got, variants["right"], what=call, rtol=1e-6, atol=1e-9, mistakes=[
        mistakes.custom(_close_to(variants["zero_start"], 1e-6, 1e-9),
                        "the warmup starts at 0: step 0 would not move the weights at all",
                        "max_lr * (step + 1) / warmup, so step warmup - 1 reaches max_lr"),
        mistakes.custom(_close_to(variants["to_zero"], 1e-6, 1e-9),
                        "the cosine decays to 0 instead of a tenth of max_lr",
                        "min_lr = max_lr / 10; min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * progress))"),
        mistakes.custom(_close_to(variants["unshifted"], 1e-6, 1e-9),
                        "the cosine's progress counts from step 0, not from the end of the warmup: the rate jumps "
                        "down after the warmup",
                        "progress = (step - warmup) / (max_steps - warmup)"),
        mistakes.custom(_close_to(variants["no_half"], 1e-6, 1e-9),
                        "the cosine term is not halved: the rate starts the decay at twice max_lr",
                        "0.5 * (max_lr - min_lr) * (1 + cos(...)) goes from max_lr - min_lr to 0")])
    milestone = [lr_at(s, 2000, 3e-3, 100) for s in (0, 99, 100, 1050, 1999)]
    t.close(np.array(milestone, dtype=np.float64), np.array([_lr(s, 2000, 3e-3, 100) for s in (0, 99, 100, 1050, 1999)]),
            what="[lr_at(step, 2000, 3e-3, 100) for step in (0, 99, 100, 1050, 1999)] (the milestone's schedule)",
            rtol=1e-6, atol=1e-12)


# ---- 10.10 -------------------------------------------------------------------------------------------------
class _Attention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x, cache=None):
        B, T, C = x.shape
        q, k, v = (p.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for p in self.c_attn(x).split(C, 2))
        if cache is not None:
            if "k" in cache:
                k, v = tc.cat([cache["k"], k], dim=2), tc.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        y = F.scaled_dot_product_attention(q, k, v, is_causal=q.shape[2] == k.shape[2])
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class _Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(n_embd), _Attention(n_embd, n_head), nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln1(x), cache)
        return x + self.mlp(self.ln2(x))


class ReferenceGPT(nn.Module):
    """The chapter's GPT (the solution of 10.8) as the checks use it, recording the length of every input it is
    called on and whether it was given the caches."""

    def __init__(self, vocab_size=11, block_size=16, n_embd=16, n_head=4, n_layer=2):
        super().__init__()
        self.block_size = block_size
        self.wte, self.wpe = nn.Embedding(vocab_size, n_embd), nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([_Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight
        self.calls = []

    def forward(self, idx, targets=None, caches=None, start=0):
        self.calls.append((idx.shape[1], caches is not None))
        x = self.wte(idx) + self.wpe(tc.arange(start, start + idx.shape[1]))
        for i, block in enumerate(self.h):
            x = block(x, None if caches is None else caches[i])
        logits = self.lm_head(self.ln_f(x))
        return logits, (None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten()))


def _sampled(model, prompt, n, temperature, top_k, generator, keep_prompt=True):
    """The tokens generation must give, computed here without a cache (the whole context every step)."""
    idx = prompt
    with tc.no_grad():
        for _ in range(n):
            logits = model(idx)[0][:, -1, :] / temperature
            if top_k is not None:
                logits = logits.masked_fill(logits < tc.topk(logits, top_k, dim=-1).values[:, -1:], float("-inf"))
            idx = tc.cat([idx, tc.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)], dim=1)
    return idx.tolist() if keep_prompt else idx[:, prompt.shape[1]:].tolist()


@exercise("10.10", title="generation through the key/value caches", points=2)
def generate_check(t, generate):
    tc.manual_seed(0)
    model = ReferenceGPT()
    with tc.no_grad():
        model.wte.weight.mul_(0.2)  # a flatter next-token distribution, so that sampling differs from argmax
    prompt = tc.tensor([[1, 2, 3], [4, 5, 6]])
    given = "model = the chapter's GPT(vocab_size=11, block_size=16, n_embd=16, n_head=4, n_layer=2) after " \
            "tc.manual_seed(0), its wte scaled by 0.2, prompt = tc.tensor([[1, 2, 3], [4, 5, 6]])"
    for temperature, top_k, seed in ((1.0, 1, 0), (0.8, 5, 0), (1.5, None, 1)):
        call = f"generate(model, prompt, 8, temperature={temperature}, top_k={top_k}, " \
               f"generator=tc.Generator().manual_seed({seed}))"
        model.calls.clear()
        out = generate(model, prompt, 8, temperature=temperature, top_k=top_k,
                       generator=tc.Generator().manual_seed(seed))
        calls = list(model.calls)
        expected = _sampled(model, prompt, 8, temperature, top_k, tc.Generator().manual_seed(seed))
        got = out.tolist() if hasattr(out, "tolist") else out
        new_only = _sampled(model, prompt, 8, temperature, top_k, tc.Generator().manual_seed(seed), False)
        greedy = _sampled(model, prompt, 8, 1.0, 1, tc.Generator().manual_seed(seed))
        why = None
        if got == new_only:
            why = "only the new tokens are returned: generate returns the prompt followed by them"
        elif got == greedy:
            why = "every token is the most likely one: the tokens are not drawn from the distribution"
        t.equal(got, expected, what=call, given=given, why=why,
                hint="each step: probs = next_token_probs(logits[:, -1, :], temperature, top_k), then "
                     "tc.multinomial(probs, 1, generator=generator), appended to idx with tc.cat(..., dim=1)")
        t.true(all(length == 1 and cached for length, cached in calls), f"every call of the model in {call} to run "
               "one position (idx of shape (B, 1)) with the caches", given=given,
               why=f"the model was called on inputs of lengths {sorted({n for n, _ in calls})}"
               + ("" if all(c for _, c in calls) else ", some of them without caches"),
               hint="feed the prompt one position at a time (model(idx[:, p:p+1], caches=caches, start=p)), then "
                    "each new token; never the whole context again")
