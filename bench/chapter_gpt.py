"""Chapter 10's GPT for the benchmark suite: the model, optimizer and training-step code of
notebooks/10_gpt.ipynb (its cells marked `"chapter10": "model"`), executed with `tc` bound to each framework.

- `make_train`: one training step of the chapter's GPT at the milestone's size (2 blocks, 4 heads, width 64,
  block 64, batch 32, tied head; AdamW with decay groups, warmup + cosine, gradient clipping at 1).
- `make_generate`: 32 tokens of greedy generation (top-k 1) with the key/value cache from a 16-token prompt.

Both frameworks get the same NumPy-made weights and batches, so their losses and tokens agree.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "10_gpt.ipynb"
CONFIG = dict(vocab_size=65, block_size=64, n_embd=64, n_head=4, n_layer=2)
TINY = dict(vocab_size=65, block_size=8, n_embd=8, n_head=2, n_layer=1)


def chapter(lib) -> dict:
    """The chapter's definitions (GPT, configure_optimizer, train_step, lr_at, generate, ...) for `lib`."""
    namespace = {"math": math, "tc": lib, "nn": lib.nn, "F": lib.nn.functional}
    for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        if cell.get("metadata", {}).get("chapter10") == "model":
            exec(compile("".join(cell["source"]), str(NOTEBOOK), "exec"), namespace)
    return namespace


def _model(lib, ns, config):
    model = ns["GPT"](**config)
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for name, p in sorted(model.named_parameters()):
            value = rng.normal(0.0, 0.0 if name.endswith("bias") else 0.02, tuple(p.shape)).astype(np.float32)
            if name.endswith(("ln1.weight", "ln2.weight", "ln_f.weight")):
                value = np.ones_like(value)
            p.copy_(lib.tensor(value))
    return model


def make_train(lib, tiny=False):
    """step(i) -> loss: one training step of the chapter's GPT (see the module docstring)."""
    config, batch = (TINY, 2) if tiny else (CONFIG, 32)
    ns = chapter(lib)
    model = _model(lib, ns, config)
    optimizer = ns["configure_optimizer"](model, lr=3e-3, weight_decay=0.1)
    rng = np.random.default_rng(1)
    T = config["block_size"]
    batches = []
    for _ in range(4):
        tokens = rng.integers(0, config["vocab_size"], (batch, T + 1))
        batches.append((lib.from_numpy(tokens[:, :-1].copy()), lib.from_numpy(tokens[:, 1:].copy())))

    def step(i):
        x, y = batches[i % len(batches)]
        return ns["train_step"](model, optimizer, x, y, ns["lr_at"](i, 2000))

    return step


def make_generate(lib, tiny=False):
    """step(i) -> sum of the generated token ids: 32 greedy tokens with the key/value cache."""
    config = TINY if tiny else CONFIG
    ns = chapter(lib)
    model = _model(lib, ns, config)
    prompt = lib.tensor([list(range(20, 20 + (4 if tiny else 16)))])
    new = 2 if tiny else 32

    def step(i):
        return float(ns["generate"](model, prompt, new, top_k=1, use_cache=True)[0, -new:].sum().item())

    return step
