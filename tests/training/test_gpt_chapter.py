"""Chapter 10's GPT is PyTorch code: the lecture's model and training cells (those marked
`"chapter10": "model"` in notebooks/10_gpt.ipynb) run unchanged with `tc` bound to PyTorch and to
tinygrad_course, from the same NumPy-made weights and batches, and give the same losses and the same greedy
samples, with and without the key/value cache."""
import json
import math
from pathlib import Path

import numpy as np
import torch

import tinygrad_course as tc

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10_gpt.ipynb"
CONFIG = dict(vocab_size=65, block_size=16, n_embd=32, n_head=4, n_layer=2)


def model_cells():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c.get("metadata", {}).get("chapter10") == "model"]


def chapter_namespace(lib):
    """The chapter's definitions, executed with `tc`, `nn` and `F` taken from `lib`."""
    namespace = {"math": math, "tc": lib, "nn": lib.nn, "F": lib.nn.functional}
    for source in model_cells():
        exec(compile(source, str(NOTEBOOK), "exec"), namespace)
    return namespace


def seeded_model(lib, namespace):
    lib.manual_seed(0)
    model = namespace["GPT"](**CONFIG)
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for name, p in sorted(model.named_parameters()):
            scale = 0.0 if name.endswith("bias") else 0.05
            value = rng.normal(0.0, scale, tuple(p.shape)).astype(np.float32)
            if name.endswith(("ln1.weight", "ln2.weight", "ln_f.weight")):
                value += 1.0
            p.copy_(lib.tensor(value))
    return model


def batches(n, batch_size=4):
    text = np.frombuffer(tc.datasets.shakespeare()[:20000].encode("ascii"), dtype=np.uint8)
    ids = np.searchsorted(np.unique(np.frombuffer(tc.datasets.shakespeare().encode("ascii"), dtype=np.uint8)), text)
    rng = np.random.default_rng(1)
    T = CONFIG["block_size"]
    for _ in range(n):
        starts = rng.integers(0, len(ids) - T - 1, batch_size)
        yield (np.stack([ids[s:s + T] for s in starts]).astype(np.int64),
               np.stack([ids[s + 1:s + T + 1] for s in starts]).astype(np.int64))


def run(lib, steps=6):
    ns = chapter_namespace(lib)
    model = seeded_model(lib, ns)
    optimizer = ns["configure_optimizer"](model, lr=3e-3, weight_decay=0.1)
    losses = [ns["train_step"](model, optimizer, lib.tensor(x), lib.tensor(y), ns["lr_at"](step, steps, warmup=2))
              for step, (x, y) in enumerate(batches(steps))]
    prompt = lib.tensor([[20, 43, 50, 50, 53]])
    greedy = [ns["generate"](model, prompt, 12, top_k=1, use_cache=cache)[0].tolist() for cache in (False, True)]
    return losses, greedy, [g["weight_decay"] for g in optimizer.param_groups]


def test_chapter_gpt_cells_run_the_same_under_pytorch_and_tc():
    torch.set_num_threads(1)
    theirs, theirs_greedy, theirs_groups = run(torch)
    ours, our_greedy, our_groups = run(tc)
    assert len(model_cells()) >= 6
    assert theirs[0] > 3.0 and theirs[-1] < theirs[0]   # a real loss that training lowers
    np.testing.assert_allclose(ours, theirs, rtol=2e-4, atol=2e-4)
    assert our_groups == theirs_groups == [0.1, 0.0]
    assert theirs_greedy[0] == theirs_greedy[1]         # the cache changes the cost, not the text
    assert our_greedy == theirs_greedy
