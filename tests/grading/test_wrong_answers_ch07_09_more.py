"""Catalogue of wrong answers for exercises 07.1-07.3, 08.1-08.3 and 09.1-09.3: each realistic mistake fails
its first check with a message that names it (the hint, when the check has one, waits for the second
failure), and the released stub fails as not implemented."""
import math

import numpy as np
import pytest

import tinygrad_course as tc

from .wrong_answers import assert_names_mistake, catalogue_tests, solution

save_checkpoint, load_checkpoint = solution("07", "save_checkpoint", "load_checkpoint")
export_npz, import_npz = solution("07", "export_npz", "import_npz")


# ---- 07.1 checkpoint and resume ----------------------------------------------------------------------------
def save_model_only(path, model, optimizer, scheduler, epoch):
    tc.save({"model": model.state_dict(), "epoch": epoch}, path)


def load_model_only(path, model, optimizer, scheduler):
    checkpoint = tc.load(path)
    model.load_state_dict(checkpoint["model"])
    return checkpoint["epoch"]


def save_without_epoch(path, model, optimizer, scheduler, epoch):
    tc.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "scheduler": scheduler.state_dict()}, path)


def load_without_epoch(path, model, optimizer, scheduler):
    checkpoint = tc.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return 0


def load_forgetting_the_model(path, model, optimizer, scheduler):
    checkpoint = tc.load(path)
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return checkpoint["epoch"]


# ---- 07.2 explain a state-dict mismatch --------------------------------------------------------------------
def compare_sides_swapped(model_state, checkpoint_state):
    missing = [k for k in checkpoint_state if k not in model_state]
    unexpected = [k for k in model_state if k not in checkpoint_state]
    mismatch = [(k, tuple(model_state[k].shape), tuple(checkpoint_state[k].shape)) for k in model_state
                if k in checkpoint_state and tuple(model_state[k].shape) != tuple(checkpoint_state[k].shape)]
    return {"missing": missing, "unexpected": unexpected, "shape_mismatch": mismatch}


def compare_shapes_reversed(model_state, checkpoint_state):
    missing = [k for k in model_state if k not in checkpoint_state]
    unexpected = [k for k in checkpoint_state if k not in model_state]
    mismatch = [(k, tuple(checkpoint_state[k].shape), tuple(model_state[k].shape)) for k in model_state
                if k in checkpoint_state and tuple(model_state[k].shape) != tuple(checkpoint_state[k].shape)]
    return {"missing": missing, "unexpected": unexpected, "shape_mismatch": mismatch}


def compare_keys_only(model_state, checkpoint_state):
    return {"missing": [k for k in model_state if k not in checkpoint_state],
            "unexpected": [k for k in checkpoint_state if k not in model_state], "shape_mismatch": []}


# ---- 07.3 portable export to .npz --------------------------------------------------------------------------
def export_parameters_by_position(model, path):
    np.savez(path, *[p.detach().numpy() for p in model.parameters()])


def import_without_loading(model, path):
    with np.load(path, allow_pickle=False) as data:
        {k: tc.tensor(data[k]) for k in data.files}


# ---- 08.1 gradient norm per parameter ----------------------------------------------------------------------
def grad_norms_squared(model):
    return {n: float((p.grad * p.grad).sum()) for n, p in model.named_parameters() if p.grad is not None}


def grad_norms_mean_square(model):
    return {n: math.sqrt(float((p.grad * p.grad).mean())) for n, p in model.named_parameters() if p.grad is not None}


def grad_norms_including_unused(model):
    return {n: math.sqrt(float((p.grad * p.grad).sum())) if p.grad is not None else 0.0
            for n, p in model.named_parameters()}


# ---- 08.2 find the first layer that produces NaN/Inf -------------------------------------------------------
def _first_bad(model, x, is_bad, remove=True):
    found, handles = [], []

    def make_hook(name):
        def hook(module, inputs, output):
            if not found and is_bad(output):
                found.append(name)
        return hook

    for name, module in model.named_modules():
        if name:
            handles.append(module.register_forward_hook(make_hook(name)))
    with tc.no_grad():
        model(x)
    if remove:
        for h in handles:
            h.remove()
    return found[0] if found else None


def nonfinite_hooks_left_behind(model, x):
    return _first_bad(model, x, lambda out: not bool(tc.isfinite(out).all()), remove=False)


def nonfinite_nan_only(model, x):
    return _first_bad(model, x, lambda out: bool(tc.isnan(out).any()))


def nonfinite_last_not_first(model, x):
    found, handles = [], []
    for name, module in model.named_modules():
        if name:
            handles.append(module.register_forward_hook(
                lambda m, i, out, name=name: found.append(name) if not bool(tc.isfinite(out).all()) else None))
    with tc.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return found[-1] if found else None


# ---- 08.3 count the ops a function runs --------------------------------------------------------------------
def count_ops_after_the_block(fn):
    with tc.profiler.profile() as prof:
        pass
    fn()
    return {row.key: row.count for row in prof.key_averages()}


def count_ops_total_time(fn):
    with tc.profiler.profile() as prof:
        fn()
    return {row.key: 1 for row in prof.key_averages()}


# ---- 09.1 average gradients across replicas ----------------------------------------------------------------
def average_summing(replicas):
    for group in zip(*(list(m.parameters()) for m in replicas)):
        total = sum(p.grad for p in group)
        for p in group:
            p.grad = total.clone()


def average_first_replica_only(replicas):
    for group in zip(*(list(m.parameters()) for m in replicas)):
        group[0].grad = sum(p.grad for p in group) / len(group)


# ---- 09.2 shard the dataset like DistributedSampler --------------------------------------------------------
def shard_contiguous_blocks(indices, rank, world_size):
    indices = list(indices)
    size = math.ceil(len(indices) / world_size)
    return indices[rank * size:(rank + 1) * size]


def shard_without_padding(indices, rank, world_size):
    return list(indices)[rank::world_size]


def shard_of_positions(indices, rank, world_size):
    n = len(indices)
    total = math.ceil(n / world_size) * world_size
    return [i % n for i in range(total)][rank:total:world_size]


# ---- 09.3 ring all-reduce, simulated -----------------------------------------------------------------------
def ring_reduce_scatter_only(arrays):
    world = len(arrays)
    chunks = [np.array_split(np.array(a, dtype=float), world) for a in arrays]
    sent = [0] * world
    for step in range(world - 1):
        messages = [(r, (r - step) % world, chunks[r][(r - step) % world].copy()) for r in range(world)]
        for r, c, data in messages:
            chunks[(r + 1) % world][c] = chunks[(r + 1) % world][c] + data
            sent[r] += data.size
    return [np.concatenate(c) for c in chunks], sent


def ring_counting_whole_vectors(arrays):
    total = np.sum(arrays, axis=0)
    world = len(arrays)
    return [total.copy() for _ in range(world)], [2 * (world - 1) * len(arrays[0])] * world


CATALOGUE = [
    ("07.1", (save_model_only, load_model_only), ["the learning rate is back at its initial 0.05",
                                                  "the scheduler's and the optimizer's state were not restored"]),
    ("07.1", (save_without_epoch, load_without_epoch), ["the epoch load_checkpoint returns: expected 2, got 0"]),
    ("07.1", (save_checkpoint, load_forgetting_the_model), ["the model's weights after loading",
                                                           "input: save_checkpoint(path, model, optimizer"]),
    ("07.2", (compare_sides_swapped,), ["missing (in the model, not in the checkpoint): expected ['fc2.weight'], "
                                       "got ['head.weight']", "missing and unexpected are swapped"]),
    ("07.2", (compare_shapes_reversed,), ["shape_mismatch as (name, model shape, checkpoint shape)",
                                          "got [('fc1.weight', (5, 3), (4, 3))]", "the two shapes are in the wrong order"]),
    ("07.2", (compare_keys_only,), ["expected [('fc1.weight', (4, 3), (5, 3))], got []",
                                   "input: model_state = {'fc1.weight': (4, 3)", "only the keys were compared"]),
    ("07.3", (export_parameters_by_position, import_npz), ["the array names in the .npz file",
                                                                      "saved by position"]),
    ("07.3", (export_npz, import_without_loading), ["a model loaded from the .npz: its outputs", "never put the arrays",
                                                   "input: export_npz(model, path)"]),
    ("08.1", (grad_norms_squared,), ["every value is the square of the expected norm", "input: a 6-layer sigmoid MLP"]),
    ("08.1", (grad_norms_mean_square,), ["the squares were averaged, not summed"]),
    ("08.1", (grad_norms_including_unused,), ["names for a model with an unused layer"]),
    ("08.2", (nonfinite_hooks_left_behind,), ["forward hooks left on the model afterwards"]),
    ("08.2", (nonfinite_nan_only,), ["whose Exp overflows to inf (no NaN)",
                                    "an output of inf without any NaN was not noticed"]),
    ("08.2", (nonfinite_last_not_first,), ["the first module with a non-finite output: expected '3', got '4'"]),
    ("08.3", (count_ops_after_the_block,), ["the counts for ((a * b + a) * 2).sum()"]),
    ("08.3", (count_ops_total_time,), ["'aten::mul': 1", "every op was counted once"]),
    ("09.1", (average_summing,), ["replica 0's gradient for layer 0 after average_gradients", "that is the sum of the replicas' gradients",
                                          "input: replica 0's layer-0 gradient = "]),
    ("09.1", (average_first_replica_only,), ["replica 1's gradient (must equal replica 0's)", "input: ",
                                           "only replica 0's was replaced"]),
    ("09.2", (shard_contiguous_blocks,), ["shard(range(10), rank=0, world_size=2): expected [0, 2, 4, 6, 8], got "
                                         "[0, 1, 2, 3, 4]", "deals the indices out in turn"]),
    ("09.2", (shard_without_padding,), ["shard(range(10), rank=1, world_size=3)", "not padded to a multiple"]),
    ("09.2", (shard_of_positions,), ["shard([5, 9, 1, 7], rank=1, world_size=2): expected [9, 7], got [1, 3]",
                                     "positions in the list, not its entries"]),
    ("09.3", (ring_reduce_scatter_only,), ["rank 0's result (2 ranks, 6 values)", "input: rank 0's array = ",
                                        "the all-gather that passes the finished chunks"]),
    ("09.3", (ring_counting_whole_vectors,), ["values sent by each rank (2 ranks, 6 values): expected [6, 6], got "
                                              "[12, 12]", "the whole vector instead of one chunk"]),
]


@pytest.mark.parametrize("exercise, wrong, phrases", CATALOGUE,
                         ids=[f"{e}-{'-'.join(w.__name__ for w in ws)}" for e, ws, _ in CATALOGUE])
def test_a_wrong_answer_fails_naming_its_mistake(exercise, wrong, phrases):
    assert_names_mistake(exercise, wrong, *phrases)


NAMES = {"07.1": ("07", "save_checkpoint", "load_checkpoint"), "07.2": ("07", "compare_state_dicts"),
         "07.3": ("07", "export_npz", "import_npz"), "08.1": ("08", "grad_norms"),
         "08.2": ("08", "first_nonfinite_module"), "08.3": ("08", "count_ops"), "09.1": ("09", "average_gradients"),
         "09.2": ("09", "shard"), "09.3": ("09", "ring_all_reduce")}


test_the_stub_fails, test_every_exercise_has_two_wrong_answers = catalogue_tests(NAMES, CATALOGUE)
