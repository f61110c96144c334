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

    def forward(self, x, cache=None):
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

        def forward(self, x, cache=None):
            return forward(self, x, cache)
    return Block


def _pre_norm(self, x, cache):
    x = x + self.attn(self.ln1(x), cache)
    return x + self.mlp(self.ln2(x))


def _no_cache(self, x, cache):
    x = x + self.attn(self.ln1(x))
    return x + self.mlp(self.ln2(x))


def _post_norm(self, x, cache):
    x = self.ln1(x + self.attn(x))
    return self.ln2(x + self.mlp(x))


def _no_residual(self, x, cache):
    return self.mlp(self.ln2(self.attn(self.ln1(x))))


def _normed_stream(self, x, cache):
    x = self.ln1(x)
    x = x + self.attn(x)
    x = self.ln2(x)
    return x + self.mlp(x)


def _no_mlp(self, x, cache):
    return x + self.attn(self.ln1(x))


BlockSolution, BlockPostNorm, BlockNoResidual, BlockNormedStream, BlockNoMlp, BlockNoCache = (
    _block(f) for f in (_pre_norm, _post_norm, _no_residual, _normed_stream, _no_mlp, _no_cache))


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


# ---- 10.7 multi-head causal self-attention -----------------------------------------------------------------
def _self_attention(split_view=False, merge_reshape=False, project=True, cache_used=True, names=("c_attn", "c_proj")):
    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.n_head = n_head
            setattr(self, names[0], nn.Linear(n_embd, 3 * n_embd))
            setattr(self, names[1], nn.Linear(n_embd, n_embd))

        def forward(self, x, cache=None):
            B, T, C = x.shape
            parts = getattr(self, names[0])(x).split(C, dim=2)
            if split_view:
                q, k, v = (t.reshape(B, self.n_head, T, C // self.n_head) for t in parts)
            else:
                q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in parts)
            if cache is None or not cache_used:
                y = attention_solution(q, k, v)
            else:
                y = cached_solution(q, k, v, cache)
            y = y.reshape(B, T, C) if merge_reshape else y.transpose(1, 2).reshape(B, T, C)
            return getattr(self, names[1])(y) if project else y
    return CausalSelfAttention


SelfAttentionSolution = _self_attention()
SelfAttentionSplitByView = _self_attention(split_view=True)
SelfAttentionMergeByReshape = _self_attention(merge_reshape=True)
SelfAttentionNoProj = _self_attention(project=False)
SelfAttentionNoCache = _self_attention(cache_used=False)
SelfAttentionNamedQkv = _self_attention(names=("qkv", "proj"))


# ---- 10.8 the GPT ------------------------------------------------------------------------------------------
class _CachedBlock(BlockSolution):
    def __init__(self, n_embd, n_head):
        super().__init__(n_embd, n_head)
        self.attn = SelfAttentionSolution(n_embd, n_head)


def _gpt(tied=True, positions="arange", final_norm=True, reduction="mean", use_start=True):
    class GPT(nn.Module):
        def __init__(self, vocab_size, block_size, n_embd, n_head, n_layer):
            super().__init__()
            self.block_size = block_size
            self.wte = nn.Embedding(vocab_size, n_embd)
            self.wpe = nn.Embedding(block_size, n_embd)
            self.h = nn.ModuleList([_CachedBlock(n_embd, n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            if tied:
                self.lm_head.weight = self.wte.weight

        def forward(self, idx, targets=None, caches=None, start=0):
            B, T = idx.shape
            start = start if use_start else 0
            x = self.wte(idx)
            if positions == "arange":
                x = x + self.wpe(tc.arange(start, start + T))
            elif positions == "tokens":
                x = x + self.wpe(idx)
            for i, block in enumerate(self.h):
                x = block(x, None if caches is None else caches[i])
            logits = self.lm_head(self.ln_f(x) if final_norm else x)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T), reduction=reduction)
            return logits, loss
    return GPT


GPTSolution = _gpt()
GPTUntied = _gpt(tied=False)
GPTNoPositions = _gpt(positions=None)
GPTPositionsByToken = _gpt(positions="tokens")
GPTNoFinalNorm = _gpt(final_norm=False)
GPTSummedLoss = _gpt(reduction="sum")
GPTStartIgnored = _gpt(use_start=False)


# ---- 10.9 the learning-rate schedule -----------------------------------------------------------------------
def _lr_at(first=1, floor=10, shift=True):
    def lr_at(step, max_steps, max_lr=3e-3, warmup=20):
        if step < warmup:
            return max_lr * (step + first) / warmup
        progress = min(1.0, (step - warmup) / max(1, max_steps - warmup) if shift else step / max_steps)
        min_lr = max_lr / floor if floor else 0.0
        return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))
    return lr_at


lr_solution, lr_zero_start, lr_to_zero, lr_unshifted = _lr_at(), _lr_at(first=0), _lr_at(floor=0), _lr_at(shift=False)


# ---- 10.10 generation --------------------------------------------------------------------------------------
def _generate(cache=True, keep_prompt=True, greedy=False):
    def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        prompt_length = idx.shape[1]
        model.eval()
        with tc.no_grad():
            caches = [{} for _ in model.h]
            if cache:
                for position in range(idx.shape[1] - 1):
                    model(idx[:, position:position + 1], caches=caches, start=position)
            for _ in range(max_new_tokens):
                if cache:
                    logits, _ = model(idx[:, -1:], caches=caches, start=idx.shape[1] - 1)
                else:
                    logits, _ = model(idx)
                if greedy:
                    token = logits[:, -1, :].argmax(dim=-1, keepdim=True)
                else:
                    token = tc.multinomial(probs_solution(logits[:, -1, :], temperature, top_k), 1, generator=generator)
                idx = tc.cat([idx, token], dim=1)
        return idx if keep_prompt else idx[:, prompt_length:]
    return generate


generate_solution = _generate()
generate_without_cache = _generate(cache=False)
generate_new_tokens_only = _generate(keep_prompt=False)
generate_greedy_always = _generate(greedy=True)


@pytest.mark.parametrize("exercise, solution", [
    ("10.1", mask_solution), ("10.2", attention_solution), ("10.3", BlockSolution),
    ("10.4", probs_solution), ("10.5", cached_solution), ("10.6", groups_solution),
    ("10.7", SelfAttentionSolution), ("10.8", GPTSolution), ("10.9", lr_solution), ("10.10", generate_solution)])
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
    ("10.3", BlockNoCache, r"block\(x, cache\) to hand cache to self\.attn.*called without it"),
    ("10.4", probs_times_temperature, r"temperature=0\.5.*multiplied by the temperature"),
    ("10.4", probs_softmax_before_top_k, r"top_k=3.*softmax ran before the top-k filter"),
    ("10.4", probs_drops_kth, r"top_k=3.*only k - 1 characters"),
    ("10.4", probs_keeps_one_more, r"top_k=3.*keeps k \+ 1 characters"),
    ("10.5", cached_only_itself, r"position 1.*attends only to itself"),
    ("10.5", cached_replaced, r"after position 1.*the cache is replaced, not extended"),
    ("10.5", cached_causal_one_row, r"position 1.*only the first cached position gets weight"),
    ("10.6", groups_decay_everything, r"biases and LayerNorm parameters are decayed too"),
    ("10.6", groups_linear_weights_only, r"missing: wpe\.weight"),
    ("10.6", groups_tied_twice, r"wte\.weight appears more than once"),
    ("10.6", groups_swapped, r"the groups are swapped"),
    ("10.1", _stub, r"not implemented yet"), ("10.2", _stub, r"not implemented yet"),
    ("10.3", _stub, r"not implemented yet"), ("10.4", _stub, r"not implemented yet"),
    ("10.5", _stub, r"not implemented yet"), ("10.6", _stub, r"not implemented yet"),
    ("10.7", SelfAttentionSplitByView, r"attn\(x\).*each head gets a block of positions"),
    ("10.7", SelfAttentionMergeByReshape, r"attn\(x\).*merged with reshape\(B, T, C\) alone"),
    ("10.7", SelfAttentionNoProj, r"attn\(x\).*c_proj is not applied"),
    ("10.7", SelfAttentionNoCache, r"attn\(x\[:, 1:2\], cache\).*the cache is not used"),
    ("10.7", SelfAttentionNamedQkv, r"nn\.Linear named c_attn"),
    ("10.8", GPTUntied, r"lm_head\.weight to be model\.wte\.weight.*not tied"),
    ("10.8", GPTNoPositions, r"logits of model\(idx\).*position embedding is not added"),
    ("10.8", GPTPositionsByToken, r"logits of model\(idx\).*looked up with the token ids"),
    ("10.8", GPTNoFinalNorm, r"logits of model\(idx\).*final LayerNorm is missing"),
    ("10.8", GPTSummedLoss, r"loss of model\(idx, targets\).*sum over the 16 positions"),
    ("10.8", GPTStartIgnored, r"model\(idx\[:, 1:2\], caches=caches, start=1\).*ignores start"),
    ("10.9", lr_zero_start, r"lr_at.*the warmup starts at 0"),
    ("10.9", lr_to_zero, r"lr_at.*decays to 0 instead of a tenth"),
    ("10.9", lr_unshifted, r"lr_at.*progress counts from step 0"),
    ("10.10", generate_without_cache, r"one position \(idx of shape \(B, 1\)\).*lengths \[3, 4"),
    ("10.10", generate_new_tokens_only, r"only the new tokens are returned"),
    ("10.10", generate_greedy_always, r"temperature=0\.8, top_k=5.*the most likely one"),
    ("10.7", _stub, r"not implemented yet"), ("10.8", _stub, r"not implemented yet"),
    ("10.9", _stub, r"not implemented yet"), ("10.10", _stub, r"not implemented yet"),
])
def test_chapter_10_wrong_answers_are_named(exercise, wrong, phrase):
    _fails(exercise, wrong, phrase=phrase)
