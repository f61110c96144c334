"""Write docs/curriculum_map.md: every topic of the course -> where it is taught -> where it is practised -> which check.

The map is read from the notebooks themselves, so it cannot drift from them:
- a lecture cell that teaches a topic carries `"curriculum": ["topic-id", ...]` in its cell metadata;
- a lecture notebook lists the graded exercises that practise its topics in its notebook metadata,
  `"curriculum": {"exercises": {"04.2": ["dataloader-batching"], ...}}` (a cell of a solution notebook may also
  carry `"curriculum": [...]`, which links its exercise the same way);
- the exercises, their check cells and points are read from the nbgrader metadata of `solutions/` (a check cell
  has `grade_id` `exNN_K_check`; docs/authoring.md).

    .venv/bin/python scripts/curriculum_map.py            # rewrite docs/curriculum_map.md
    .venv/bin/python scripts/curriculum_map.py --check    # exit 1 if the page is out of date or a tag is unknown
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "curriculum_map.md"

# (id, what the learner should be able to explain or do), in the order of the course (../shared/curriculum.md).
TOPICS = {
    "00": [("course-workflow", "how the course works: lecture, exercises, checks and feedback"),
           ("setup-check", "checking the setup: versions and devices")],
    "01": [("tensor-ranks", "ranks 0-3+: scalar, vector, matrix, batch of embeddings"),
           ("tensor-creation", "creation: lists, factories, from_numpy (shares) vs tensor (copies)"),
           ("dtypes", "dtypes: float32 default, float16/bfloat16, int64 labels, bool masks; the integer-features bug"),
           ("strides-views", "shape, strides, storage offset; views; contiguous and reshape"),
           ("broadcasting", "broadcasting: align from the right, size 1 stretches (stride 0); the outer-product bug"),
           ("indexing-masks", "indexing, slicing, boolean masks, gather"),
           ("elementwise-matmul-reductions", "element-wise ops, matmul, reductions with dim and keepdim"),
           ("devices-intro", "devices, and why CPU and GPU results differ slightly")],
    "01b": [("tensor-object", "the tensor object: one array plus dtype, device and autograd fields; TensorBase and _wrap"),
            ("shape-size-methods", "shape as a Size, ndim and dim(), numel(), size(dim) with PyTorch's IndexError, len()"),
            ("strides-contiguity", "stride() in elements from NumPy's bytes (a None dim's stride), is_contiguous() "
                                   "ignoring size-1 dims"),
            ("values-out", "bool(), item() and tolist() as Python numbers, numpy() sharing memory and refused with grad"),
            ("autograd-fields", "requires_grad and requires_grad_() (leaves, floating point), is_leaf, detach() "
                                "sharing storage and the version counter"),
            ("tensor-printing", "printing a tensor as PyTorch does: one format and width for all elements, nested "
                                "rows, wrapping, and the dtype, size, grad_fn and requires_grad suffixes"),
            ("type-promotion", "type promotion: promote_types (bool < integer < floating, then the wider type) and "
                               "result_type (tensors, then 0-d tensors, then Python numbers)")],
    "02": [("tape-by-hand", "reverse mode by hand: a tape, checked with finite differences"),
           ("scalar-engine", "a scalar autograd engine and its topological order"),
           ("autograd-graph", "the graph: leaves, requires_grad, grad_fn, next_functions, AccumulateGrad"),
           ("chain-rule", "the chain rule: local derivatives multiply along a path, paths add"),
           ("broadcasting-gradient", "broadcasting in backward: summing the gradient back to the input's shape"),
           ("matmul-gradient", "the backward of a matrix product, derived: g @ b.T and a.T @ g"),
           ("grad-accumulation", "gradients accumulate: zero_grad / grad = None"),
           ("retain-grad-graph", "only leaves keep .grad (retain_grad); the graph is freed (retain_graph)"),
           ("no-grad-detach", "no_grad and detach"),
           ("inplace-version-counter", "in-place operations and the version counter error"),
           ("custom-function", "a custom autograd.Function"),
           ("higher-order", "higher-order derivatives, Jacobian and Hessian"),
           ("finite-differences", "gradient checking with finite differences (gradcheck)"),
           ("frameworks-comparison", "eager (define-by-run) graphs vs TensorFlow/Keras, JAX and compiled graphs")],
    "02b": [("softmax-ops", "softmax and log-softmax along a dim: the max shift, and a backward that couples each row"),
            ("gelu-dropout-ops", "GELU (exact with erf, and its tanh approximation) and dropout's mask, forward and backward"),
            ("embedding-lookup", "embedding lookup: a gather forward, a scatter-add backward for repeated ids"),
            ("masked-fill", "masked_fill with a broadcast mask: the causal mask before softmax, no gradient where filled"),
            ("cat-join", "cat along a dim, and a backward that splits the gradient back into the inputs' slices"),
            ("view-ops", "transpose and expand as views of their input's storage, and backwards that follow their geometry"),
            ("gather-pick", "gather along a dim: a pick forward, a scatter-add backward for repeated positions"),
            ("getitem-index", "x[key]: a basic key as a view whose backward assigns at the key, an index tensor as a "
                              "copy whose backward adds rows that repeat"),
            ("view-shape", "view, reshape, squeeze and unsqueeze as one view to a shape, and a backward that reshapes back"),
            ("copy-slice", "clone/contiguous as a row-major copy and narrow/split as slices: a backward that passes "
                           "the gradient on, and one that writes it into zeros")],
    "02c": [("operator-dispatch", "Python's dispatch of a * b to a tensor's method: reflected operators, NotImplemented, "
                                  "NumPy operands, views as methods and .T as a property"),
            ("tensor-reductions", "reductions, comparisons, logical operators and conversions as methods that name the "
                                  "op PyTorch records; to() returns the tensor itself when nothing changes"),
            ("inplace-methods", "in-place methods as the out-of-place op written into the storage: the version counter, "
                                "the recorded history, PyTorch's leaf, cast and shape errors")],
    "02d": [("engine-order", "the engine's order and loop: a topological sort of the graph, the backward pass adding what "
                             "meets at a node, backward() as the root gradient, the start node and the pass"),
            ("node-step", "a node's backward step: the op's backward, each gradient summed back to its input's shape "
                          "and cast to its dtype"),
            ("saved-tensors", "what a node keeps: save_for_backward with each tensor's version, saved_tensors and "
                              "saved_output with PyTorch's errors, release_variables"),
            ("op-recording", "recording a call: the node, its next_functions and input_metadata, nothing under no_grad"),
            ("leaf-accumulation", "a leaf's AccumulateGrad: the leaf, no edges, run first; a copy of the first gradient, "
                                  "later ones added in place")],
    "03": [("parameters-buffers", "nn.Parameter vs a plain tensor; buffers"),
           ("module-anatomy", "nn.Module anatomy: __init__, forward, call the module"),
           ("linear-layer", "Linear from scratch: weight (out, in), x @ W.T + b"),
           ("parameter-counting", "counting parameters"),
           ("containers", "Sequential, ModuleList, custom layers, residual blocks"),
           ("initialization", "initialization (Kaiming, Xavier) with apply"),
           ("freezing", "freezing layers"),
           ("state-dict", "state_dict and load_state_dict"),
           ("train-eval", "train() and eval(): Dropout with inverted scaling, BatchNorm"),
           ("forward-hooks", "forward hooks to inspect shapes"),
           ("logits", "return raw logits; softmax and cross-entropy")],
    "03b": [("parameter-subclass", "nn.Parameter inside: a Tensor subclass over its data's storage (_make_subclass), a "
                                   "leaf that requires grad, registered because of its type"),
            ("module-registration", "Module's tables: __setattr__ and __getattr__ over _parameters, _buffers and "
                                    "_modules; register_parameter/register_module/register_buffer and their checks"),
            ("module-walks", "the walks: named_modules, named_parameters, named_children as dotted names, each module "
                             "and parameter once"),
            ("module-state-modes", "state_dict/load_state_dict, train/eval, apply and zero_grad as walks over the "
                                   "tables")],
    "04": [("dataset", "Dataset: __len__ and __getitem__"),
           ("labels-from-zero", "class labels start at 0"),
           ("dataloader-batching", "DataLoader: batching, ceil(N / B) steps, drop_last, shuffling for training only"),
           ("collate-padding", "collate_fn that pads variable-length sequences"),
           ("num-workers", "num_workers, prefetch_factor, persistent_workers, pin_memory"),
           ("transforms", "transforms: Compose, ToTensor, Normalize with training statistics"),
           ("real-datasets", "real datasets: the digits"),
           ("fashionmnist", "FashionMNIST as the next dataset")],
    "04b": [("optimizers", "SGD, momentum, Adam, AdamW (update rules, bias correction, decoupled decay); the optimizer "
                           "object: parameter groups, state, state_dict"),
            ("lr-schedules", "learning-rate schedules: the scheduler base, cosine annealing, warmup with LambdaLR")],
    "05": [("training-loop-order", "the training loop in strict order, and what breaks when it is wrong"),
           ("losses", "losses: cross-entropy on logits, BCE, MSE"),
           ("softmax-cross-entropy-gradient", "the softmax/cross-entropy gradient: probabilities minus one-hot"),
           ("clipping", "gradient clipping by global norm"),
           ("grad-accumulation-training", "gradient accumulation over micro-batches"),
           ("early-stopping-checkpoints", "early stopping and checkpoints during training"),
           ("train-evaluate", "separate train and evaluate functions, eval mode + no_grad, accuracy"),
           ("overfit-one-batch", "overfit one batch first"),
           ("debugging-clinic", "debugging clinic: shapes, NaN, no progress, devices, eval mode"),
           ("lab-mlp-cnn", "lab: an MLP then a CNN on real images, with schedules and clipping"),
           ("convolution", "convolution: a filter sliding over an image, output size floor((n + 2p - k) / s) + 1, "
                           "channels, stride, padding, dilation, weight sharing, im2col as one matrix product"),
           ("max-pooling", "max pooling and its backward: the gradient goes to each window's maximum")],
    "06": [("devices-to", "device selection and .to(device): the three lines that change"),
           ("same-device-error", "all tensors of an op on one device"),
           ("gpu-timing", "timing honestly: synchronize, warm-up; small tensors are slower on a GPU"),
           ("gpu-memory", "GPU memory: memory_allocated, the caching allocator, empty_cache"),
           ("fused-kernels", "a fused element-wise kernel"),
           ("mixed-precision", "mixed precision: float16/bfloat16, autocast, loss scaling")],
    "07": [("state-dict-saving", "saving state_dicts and loading them strictly"),
           ("whole-model-pickle", "saving a whole model object, and why it is fragile"),
           ("weights-only", "untrusted pickles run code; weights_only=True"),
           ("checkpoints", "checkpoints with optimizer and scheduler state; resuming exactly"),
           ("portable-formats", "portable formats (.npz, safetensors-style)"),
           ("model-export", "deployment formats: ONNX, TorchScript, torch.compile, and what this framework offers")],
    "08": [("gradient-statistics", "gradient statistics per parameter: vanishing and exploding"),
           ("debug-hooks", "tensor hooks and forward hooks for debugging"),
           ("anomaly-detection", "anomaly detection: which operation produced the NaN"),
           ("profiler", "the profiler: time per op, record_function"),
           ("data-loading-vs-compute", "where time goes: data loading vs compute"),
           ("scalar-logging", "logging scalars (TensorBoard-style) and reading the curves"),
           ("gradient-checkpointing", "gradient checkpointing: recompute activations to save memory"),
           ("common-errors", "common error messages and their causes")],
    "09": [("data-parallel-idea", "data parallelism: model copies, data shards"),
           ("allreduce-averaging", "averaging gradients by all-reduce keeps the copies identical"),
           ("ring-allreduce", "the ring all-reduce"),
           ("collectives", "tc.distributed collectives over MPI"),
           ("ddp-sampler", "DistributedDataParallel and DistributedSampler"),
           ("scaling-throughput", "throughput: workers minus communication"),
           ("dead-ranks", "timeouts when a process dies"),
           ("multi-gpu", "the same loop on several GPUs")],
    "10": [("text-as-data", "text as data: a character tokenizer, a train/validation split, (B, T) windows"),
           ("bigram-baseline", "a bigram model as the baseline, its loss against ln(vocab)"),
           ("self-attention", "self-attention derived: averaging the past, masked softmax of q.k, the 1/sqrt(d) scale"),
           ("transformer-block", "multi-head causal attention and the pre-norm block with residuals and an MLP"),
           ("gpt-model", "the GPT: token and position embeddings, weight tying, parameter count"),
           ("gpt-training", "AdamW with decay groups, warmup + cosine, clipping, held-out loss, live plot"),
           ("sampling", "sampling with temperature and top-k"),
           ("kv-cache", "a key/value cache: generation without recomputing the past, tokens per second")],
}
TITLES = {topic: title for chapter in TOPICS.values() for topic, title in chapter}
CHAPTER_OF = {topic: chapter for chapter, topics in TOPICS.items() for topic, _ in topics}
CHECK_ID = re.compile(r"^ex(\d\d[a-z]?)_(\d+)_check$")


def _read(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _headings(cells):
    """For each cell, the heading of the section it belongs to (the last '#'-line at or before it)."""
    current, out = "", []
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            for line in _source(cell).splitlines():
                if re.match(r"#{1,3} ", line):
                    current = line.lstrip("#").strip()
        out.append(current)
    return out


def taught(notebooks_dir=ROOT / "notebooks"):
    """topic -> [(notebook name, section heading)] from the lecture cells' `curriculum` metadata, in order."""
    places, unknown = {}, []
    for path in sorted(notebooks_dir.glob("*.ipynb")):
        cells = _read(path).get("cells", [])
        for cell, heading in zip(cells, _headings(cells)):
            for topic in cell.get("metadata", {}).get("curriculum", []):
                if topic not in TITLES:
                    unknown.append(f"{path.name}: unknown topic {topic!r}")
                    continue
                place = (path.name, heading)
                if place not in places.setdefault(topic, []):
                    places[topic].append(place)
    return places, unknown


def exercises(solutions_dir=ROOT / "solutions"):
    """exercise id -> {notebook, check cell, points, title, topics} from the solution notebooks' nbgrader metadata."""
    found = {}
    for path in sorted(solutions_dir.glob("*.ipynb")):
        cells = _read(path).get("cells", [])
        tagged, title = {}, ""
        for cell in cells:
            text = _source(cell)
            if cell.get("cell_type") == "markdown":
                heading = re.search(r"^#+\s*Exercise (\d\d[a-z]?\.\d+):?\s*(.*)$", text, re.M)
                if heading:
                    title = re.sub(r"\s*\(\d+ points?\)\s*$", "", heading.group(2)).strip()
            meta = cell.get("metadata", {})
            grade_id = meta.get("nbgrader", {}).get("grade_id", "")
            match = re.match(r"^ex(\d\d[a-z]?)_(\d+)", grade_id)
            if match and meta.get("curriculum"):
                tagged.setdefault(f"{match.group(1)}.{match.group(2)}", []).extend(meta["curriculum"])
            check = CHECK_ID.match(grade_id)
            if check:
                ex_id = f"{check.group(1)}.{check.group(2)}"
                call = re.search(r'check\(\s*"' + re.escape(ex_id) + r'"', text)
                found[ex_id] = {"notebook": path.name, "check": grade_id, "points": meta["nbgrader"].get("points"),
                                "title": title, "calls_check": bool(call), "topics": list(tagged.get(ex_id, []))}
                title = ""
    return found


def practised(notebooks_dir=ROOT / "notebooks", solutions_dir=ROOT / "solutions"):
    """topic -> [exercise ids], the exercise table, and problems (links to exercises or topics that do not exist)."""
    table = exercises(solutions_dir)
    links, problems = {}, []
    for path in sorted(notebooks_dir.glob("*.ipynb")):
        declared = _read(path).get("metadata", {}).get("curriculum", {}).get("exercises", {})
        for ex_id, topics in declared.items():
            if ex_id not in table:
                problems.append(f"{path.name}: exercise {ex_id} is not in solutions/")
                continue
            table[ex_id]["topics"] += [t for t in topics if t not in table[ex_id]["topics"]]
    for ex_id, info in sorted(table.items()):
        for topic in info["topics"]:
            if topic not in TITLES:
                problems.append(f"exercise {ex_id}: unknown topic {topic!r}")
            elif ex_id not in links.setdefault(topic, []):
                links[topic].append(ex_id)
    return links, table, problems


def _chapter_title(chapter):
    names = sorted((ROOT / "notebooks").glob(f"{chapter}_*.ipynb"))
    return names[0].stem if names else chapter


def render():
    """The markdown page, and the problems found while building it."""
    places, unknown = taught()
    links, table, problems = practised()
    lines = ["# Curriculum map", "",
             "Every topic of the course: where a lecture teaches it, which graded exercise practises it, and which "
             "check grades that exercise.",
             "Generated by `scripts/curriculum_map.py` from the notebooks' metadata (`curriculum` on lecture cells, "
             "the exercise links in each lecture notebook's metadata, nbgrader ids in `solutions/`); "
             "`tests/test_curriculum_map.py` fails when this page is out of date. Do not edit by hand.", ""]
    taught_count = sum(1 for t in TITLES if places.get(t))
    practised_count = sum(1 for t in TITLES if links.get(t))
    lines += [f"{len(TITLES)} topics: {taught_count} taught in a lecture, {practised_count} practised in a graded "
              f"exercise; {len(table)} graded exercises.", ""]
    for chapter, topics in TOPICS.items():
        lines += [f"## {_chapter_title(chapter)}", "",
                  "| topic | taught in | practised in | check |", "|---|---|---|---|"]
        for topic, title in topics:
            where = "<br>".join(f"`{nb}` § {heading}" if heading else f"`{nb}`" for nb, heading in places.get(topic, []))
            ex_ids = links.get(topic, [])
            practice = "<br>".join(f"{e} {table[e]['title']}".strip() for e in ex_ids)
            checks = "<br>".join(f"`check(\"{e}\")`: `{table[e]['check']}` in `solutions/{table[e]['notebook']}`, "
                                 f"{table[e]['points']} pt" for e in ex_ids)
            lines.append(f"| {title} (`{topic}`) | {where or '**not taught**'} | {practice or '—'} | {checks or '—'} |")
        lines.append("")
    unlinked = [e for e, info in sorted(table.items()) if not info["topics"]]
    if unlinked:
        lines += ["## Exercises not linked to a topic", "",
                  "Graded exercises in `solutions/` that no notebook metadata links to a topic yet:", ""]
        lines += [f"- {e} {table[e]['title']} (`solutions/{table[e]['notebook']}`)" for e in unlinked]
        lines.append("")
    gaps = [t for t in TITLES if not links.get(t)]
    lines += ["## Topics without a graded exercise", "",
              ", ".join(f"`{t}`" for t in gaps) if gaps else "None.", ""]
    return "\n".join(lines), unknown + problems


def main(argv=None):
    """Rewrite docs/curriculum_map.md, or with --check only compare it; 1 on problems or a stale page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/curriculum_map.md is out of date")
    args = parser.parse_args(argv)
    text, problems = render()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python scripts/curriculum_map.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
