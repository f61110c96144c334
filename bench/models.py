"""Whole-model training steps for the benchmark suite, written once for both frameworks.

Every `make_*` takes the framework module (`tinygrad_course` or `torch`) and `tiny` (a few-element version for
the suite's smoke test) and returns `step(i) -> float loss`: zero_grad + forward + loss + backward + Adam step.
Both frameworks get the same initial weights (copied from a PyTorch model built with a fixed seed) and the same
batches, so their first losses agree (checked by `bench/suite.py`).

Sizes (full run):
- LSTM / GRU language model: Embedding(65, 64) -> LSTM/GRU(64, 128) -> Linear(128, 65), sequences of 32
  tokens, batch 16, next-token cross-entropy.
- LSTM / GRU layer: that language model's recurrent layer alone on (16, 32, 64) inputs, forward + backward.
- GPT: 2 pre-norm blocks (causal self-attention with 4 heads, MLP 4x), width 128, block 64, vocab 65,
  batch 8, learned position embeddings, weight-untied head (nanoGPT-style, scaled down for 2 cores).
- Transformer encoder: nn.TransformerEncoder of 2 nn.TransformerEncoderLayer(d_model=128, nhead=4,
  dim_feedforward=256, dropout=0, batch_first=True) on (16, 32, 128) inputs, mean-square loss.
"""
from __future__ import annotations

import math

import numpy as np
import torch

import tinygrad_course

VOCAB = 65


def copy_from_torch(model, reference):
    """Copy `reference`'s (a torch module's) parameters into `model` (same layout), in place."""
    lib = _lib_of(model)
    params, ref = list(model.parameters()), list(reference.parameters())
    assert len(params) == len(ref), (len(params), len(ref))
    with lib.no_grad():
        for p, r in zip(params, ref):
            p.copy_(lib.from_numpy(r.detach().numpy().copy()))


def _lib_of(model):
    return torch if isinstance(model, torch.nn.Module) else tinygrad_course


def _training_step(lib, model, batches, loss_fn):
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def _build(lib, factory, seed=0):
    """`factory(nn)` built in `lib` with the weights of the same module built in torch from `seed`."""
    torch.manual_seed(seed)
    reference = factory(torch.nn)
    if lib is torch:
        return reference
    model = factory(lib.nn)
    copy_from_torch(model, reference)
    return model


def _token_batches(lib, batch, seq, n=4, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        tokens = rng.integers(0, VOCAB, (batch, seq + 1))
        out.append((lib.from_numpy(tokens[:, :-1].copy()), lib.from_numpy(tokens[:, 1:].copy())))
    return out


# ---- recurrent language models ---------------------------------------------------------------------------

def _recurrent_lm(kind, embed, hidden):
    def factory(nn):
        class RecurrentLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, embed)
                self.rnn = getattr(nn, kind)(embed, hidden, batch_first=True)
                self.head = nn.Linear(hidden, VOCAB)

            def forward(self, idx):
                out, _ = self.rnn(self.embed(idx))
                return self.head(out)

        return RecurrentLM()

    return factory


def make_recurrent_lm(lib, kind="LSTM", tiny=False):
    """Embedding + one-layer LSTM or GRU + Linear, next-token cross-entropy, Adam."""
    embed, hidden, batch, seq = (4, 5, 2, 3) if tiny else (64, 128, 16, 32)
    model = _build(lib, _recurrent_lm(kind, embed, hidden))
    F = lib.nn.functional
    return _training_step(lib, model, _token_batches(lib, batch, seq),
                          lambda logits, y: F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1)))


def make_recurrent_layer(lib, kind="LSTM", tiny=False):
    """The LSTM or GRU layer of the language model alone: forward + backward of a sum-of-squares loss
    (no embedding, head or optimizer), to tell the layer's share of the language-model ratio."""
    embed, hidden, batch, seq = (4, 5, 2, 3) if tiny else (64, 128, 16, 32)
    layer = _build(lib, lambda nn: getattr(nn, kind)(embed, hidden, batch_first=True))
    rng = np.random.default_rng(1)
    x = lib.from_numpy(rng.standard_normal((batch, seq, embed)).astype(np.float32)).requires_grad_()

    def step(i):
        x.grad = None
        layer.zero_grad()
        out, _ = layer(x)
        loss = (out * out).mean()
        loss.backward()
        return loss.item()

    return step


# ---- small GPT ------------------------------------------------------------------------------------------

def _gpt(n_layer, n_head, n_embd, block):
    def factory(nn):
        F = nn.functional

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
                self.c_attn = nn.Linear(n_embd, 3 * n_embd)
                self.c_proj = nn.Linear(n_embd, n_embd)
                self.c_fc = nn.Linear(n_embd, 4 * n_embd)
                self.mlp_proj = nn.Linear(4 * n_embd, n_embd)

            def forward(self, x):
                B, T, C = x.shape
                q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
                q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, C))
                return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(VOCAB, n_embd)
                self.wpe = nn.Embedding(block, n_embd)
                self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
                self.ln_f = nn.LayerNorm(n_embd)
                self.lm_head = nn.Linear(n_embd, VOCAB, bias=False)

            def forward(self, idx):
                T = idx.shape[1]
                x = self.wte(idx) + self.wpe.weight[:T]
                for blk in self.blocks:
                    x = blk(x)
                return self.lm_head(self.ln_f(x))

        return GPT()

    return factory


def make_gpt(lib, tiny=False):
    """nanoGPT-style character model (see the module docstring for its size), next-token cross-entropy."""
    n_layer, n_head, n_embd, block, batch = (1, 2, 8, 4, 2) if tiny else (2, 4, 128, 64, 8)
    model = _build(lib, _gpt(n_layer, n_head, n_embd, block))
    F = lib.nn.functional
    return _training_step(lib, model, _token_batches(lib, batch, block),
                          lambda logits, y: F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1)))


# ---- Transformer encoder --------------------------------------------------------------------------------

def make_transformer_encoder(lib, tiny=False):
    """2-layer nn.TransformerEncoder (post-norm, ReLU, dropout 0), mean-square loss on its output."""
    d_model, nhead, ff, batch, seq = (8, 2, 16, 2, 3) if tiny else (128, 4, 256, 16, 32)

    def factory(nn):
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ff, dropout=0.0, batch_first=True)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    model = _build(lib, factory)
    rng = np.random.default_rng(1)
    batches = [(lib.from_numpy(rng.standard_normal((batch, seq, d_model)).astype(np.float32)), None)
               for _ in range(4)]
    return _training_step(lib, model, batches, lambda out, _: (out * out).mean() / math.sqrt(d_model))
