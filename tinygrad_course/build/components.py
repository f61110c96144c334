"""The components a learner builds: what each one is, which exercise writes it, and how the framework
calls it (its contract).

Each `Component` names the exercise cell that defines it (`exercise`, the nbgrader grade_id of the solution
cell), the name the learner's code binds there (`defines`) and the seam it fills (`seam`, see
`tinygrad_course/seams.py`). `adapt` turns the learner's object into the callable the seam expects, so a
learner writes the natural exercise signature (`mul_backward(grad, a, b)`) and the framework still calls it
where the reference ran (`MulBackward0`'s backward rule).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import adapters, adapters_distributed


@dataclass(frozen=True)
class Component:
    name: str            # the component's name in the status table
    chapter: str         # "01" ... "09"
    exercise: str        # grade_id of the solution cell that defines it, e.g. "ex02_1"
    defines: str         # the function or class the learner writes there
    seam: str            # the seam it fills (seams.install name)
    adapt: object        # learner object -> the callable installed in the seam
    contract: str        # one line: what the framework calls and what it must return
    notebook: str = ""   # the exercise notebook's file name, filled in below
    extra: tuple = field(default=())  # further learner names the adapter needs (same cell)
    also: tuple = ()     # later (chapter, grade_id) cells that define the same thing: the latest one wins
    checks: tuple = ()   # the names the cell's check(...) call passes, when more than `defines`
    pure: bool = False   # no side effects: when it raises at run time the reference can take the call over


NOTEBOOKS = {"01": "01_tensors.ipynb", "02": "02_autograd.ipynb", "03": "03_modules.ipynb", "04": "04_data.ipynb",
             "05": "05_training.ipynb", "06": "06_gpu.ipynb", "07": "07_saving.ipynb", "08": "08_debugging.ipynb",
             "05b": "05b_lab.ipynb", "09": "09_distributed.ipynb"}

_COMPONENTS = [
    Component("storage_index", "01", "ex01_4", "storage_index", "storage_index", adapters.same,
              "storage_index(index, strides, offset) -> storage position of one element; as_strided checks its last"),
    Component("pick", "01", "ex01_7", "pick", "pick", adapters.pick,
              "pick(scores, labels) -> scores[i, labels[i]] per row; nll_loss takes each target's log-probability", pure=True),
    Component("contiguous_strides", "01", "ex01_3", "contiguous_strides", "contiguous_strides", adapters.same,
              "contiguous_strides(shape) -> tuple of row-major strides; Tensor.is_contiguous() compares with it", pure=True),
    Component("broadcast_shapes", "01", "ex01_5", "broadcast_shape", "broadcast_shapes", adapters.broadcast_shapes,
              "broadcast_shape(a, b) -> the broadcast shape, ValueError if incompatible; tc.broadcast_shapes folds it", pure=True),
    Component("Mul.backward", "02", "ex02_1", "mul_backward", "Mul.backward", adapters.mul_backward,
              "mul_backward(grad, a, b) -> (grad_a, grad_b) shaped like a and b; MulBackward0 runs it"),
    Component("Tanh.backward", "02", "ex02_2", "tanh_backward", "Tanh.backward", adapters.tanh_backward,
              "tanh_backward(grad, out) -> grad of the input; TanhBackward0 runs it"),
    Component("Mm.backward", "02", "ex02_3", "matmul_backward", "Mm.backward", adapters.mm_backward,
              "matmul_backward(grad, a, b) -> (grad_a, grad_b) for 2-D a @ b; MmBackward0 runs it"),
    Component("topological_sort", "02", "ex02_4", "topo_sort", "topological_sort", adapters.same,
              "topo_sort(root) -> every node reachable from root, each before its next_functions; backward runs in it"),
    Component("numerical_grad", "02", "ex02_6", "numerical_grad", "numerical_jacobian", adapters.numerical_grad,
              "numerical_grad(f, x, eps) -> central differences of scalar f at x; tc.autograd.gradcheck compares with it",
              checks=("numerical_grad", "gradient_check")),
    Component("Linear.forward", "03", "ex03_1", "Linear", "Linear.forward", adapters.linear_forward,
              "Linear.forward(self, x) -> x @ weight.T + bias; nn.Linear's forward runs it", pure=True),
    Component("Dropout.forward", "03", "ex03_3", "Dropout", "Dropout.forward", adapters.dropout_forward,
              "Dropout.forward(self, x) -> x with elements zeroed (p) and the rest scaled by 1/(1-p) in training"),
    Component("init_weights", "03", "ex03_5", "init_weights", "init_weights", adapters.same,
              "init_weights(module) for model.apply: Kaiming-normal Linear weights, zero biases; the lab initialises with it"),
    Component("ClassificationDataset", "04", "ex04_1", "ClassificationDataset", "ClassificationDataset", adapters.same,
              "ClassificationDataset(features, labels)[i] -> (float32 features, class index); the lab's data"),
    Component("steps_per_epoch", "04", "ex04_2", "steps_per_epoch", "steps_per_epoch", adapters.same,
              "steps_per_epoch(n, batch_size, drop_last) -> batches per epoch; len(DataLoader) and len(BatchSampler)"),
    Component("make_loaders", "04", "ex04_5", "make_loaders", "make_loaders", adapters.same,
              "make_loaders(train_set, val_set, batch_size, seed) -> (seeded shuffled loader, ordered loader); the lab's"),
    Component("BatchSampler.__iter__", "04", "ex04_8", "batch_indices", "BatchSampler.__iter__", adapters.batch_indices,
              "batch_indices(sampler, batch_size, drop_last) yields lists of indices; every DataLoader's BatchSampler "
              "iterates it"),
    Component("default_collate", "04", "ex04_7", "collate", "default_collate", adapters.same,
              "collate(batch) -> one batch by default_collate's rules; every DataLoader without a collate_fn calls it"),
    Component("train_step", "05", "ex05_1", "train_step", "train_step", adapters.same,
              "train_step(model, optimizer, loss_fn, x, y) -> loss as a float, after one step; the lab's loop calls it"),
    Component("Optimizer", "05", "ex05_2", "Optimizer", "Optimizer", adapters.optimizer_base,
              "Optimizer(params, defaults): param_groups (defaults filled in), state, add_param_group, zero_grad, "
              "state_dict/load_state_dict in PyTorch's layout; every tc.optim optimizer's base methods run it",
              checks=("Optimizer", "SGD")),
    Component("SGD.step", "05", "ex05_2", "SGD", "SGD.step", adapters.sgd_step,
              "SGD(params, lr, momentum, dampening, weight_decay, nesterov).step() over self.param_groups, the "
              "velocity in self.state[p]['momentum_buffer']; tc.optim.SGD steps through it",
              checks=("Optimizer", "SGD")),
    Component("Adam.step", "05", "ex05_3", "Adam", "Adam.step", adapters.adam_step,
              "Adam(params, lr, betas, eps, weight_decay, decoupled_weight_decay).step(), moments in self.state[p]; "
              "tc.optim.Adam and AdamW step through it", checks=("Adam", "AdamW")),
    Component("clip_grad_norm_", "05", "ex05_4", "clip_grad_norm_", "clip_grad_norm_", adapters.clip_grad_norm,
              "clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite) -> the norm before clipping, a "
              "tensor; nn.utils.clip_grad_norm_ runs it"),
    Component("LRScheduler", "05", "ex05_9", "LRScheduler", "LRScheduler", adapters.lr_scheduler_base,
              "LRScheduler(optimizer, last_epoch): step() sets each group's lr from get_lr(), get_last_lr, "
              "state_dict/load_state_dict; every tc.optim.lr_scheduler scheduler's base methods run it",
              checks=("LRScheduler", "CosineAnnealingLR")),
    Component("CosineAnnealingLR.get_lr", "05", "ex05_9", "CosineAnnealingLR", "CosineAnnealingLR.get_lr",
              adapters.cosine_get_lr,
              "CosineAnnealingLR(optimizer, T_max, eta_min).get_lr() -> the lrs on the cosine at last_epoch; "
              "optim.lr_scheduler.CosineAnnealingLR (the lab's schedule) sets them", pure=True,
              checks=("LRScheduler", "CosineAnnealingLR")),
    Component("log_softmax", "05", "ex05_8", "LogSoftmax", "log_softmax", adapters.log_softmax,
              "LogSoftmax.apply(x, dim) -> x - logsumexp(x, dim) computed stably, its backward -> the grad of x; "
              "F.log_softmax runs it (the lab's loss)", pure=True),
    Component("evaluate", "05", "ex05_5", "evaluate", "evaluate", adapters.same,
              "evaluate(model, loader) -> (mean cross-entropy, accuracy) in eval mode without a graph; the lab reports it",
              also=(("05b", "ex05b_5"),)),
    Component("Conv2d.forward", "05b", "ex05b_7", "Conv2dFunction", "Conv2d.forward", adapters.conv2d_forward,
              "Conv2dFunction.apply(x, weight, bias, stride, padding) -> (N, O, H', W'), its backward -> the grads of "
              "x, weight, bias; nn.Conv2d runs it (the lab's CNN)", pure=True),
    Component("MaxPool2d.forward", "05b", "ex05b_8", "MaxPool2dFunction", "MaxPool2d.forward",
              adapters.max_pool2d_forward,
              "MaxPool2dFunction.apply(x, kernel_size, stride) -> window maxima, its backward -> the grad of x; "
              "nn.MaxPool2d runs it (the lab's CNN)", pure=True),
    Component("to_device", "06", "ex06_1", "to_device", "to_device", adapters.same,
              "to_device(obj, device) -> obj with every nested tensor moved; the lab moves each batch with it"),
    Component("momentum_update", "06", "ex06_3", "momentum_update", "momentum_update", adapters.same,
              "momentum_update(p, g, buf, lr, momentum) updates arrays in place; tc.optim.SGD's heavy-ball step",
              checks=("momentum_update", "momentum_kernel_body")),
    Component("update_scale", "06", "ex06_4", "update_scale", "update_scale", adapters.update_scale,
              "update_scale(scale, tracker, found_inf, ...) -> (scale, tracker); GradScaler.update applies it"),
    Component("save_checkpoint", "07", "ex07_1", "save_checkpoint", "save_checkpoint", adapters.same,
              "save_checkpoint(path, model, optimizer, scheduler, epoch) writes one file; the resume milestone calls it",
              checks=("save_checkpoint", "load_checkpoint")),
    Component("load_checkpoint", "07", "ex07_1", "load_checkpoint", "load_checkpoint", adapters.same,
              "load_checkpoint(path, model, optimizer, scheduler) -> epoch, restoring every state in place",
              checks=("save_checkpoint", "load_checkpoint")),
    Component("grad_norms", "08", "ex08_1", "grad_norms", "grad_norms", adapters.same,
              "grad_norms(model) -> {name: gradient L2 norm}; tc.debugging.grad_stats's norm column"),
    Component("first_nonfinite_module", "08", "ex08_2", "first_nonfinite_module", "first_nonfinite_module", adapters.same,
              "first_nonfinite_module(model, x) -> name of the first submodule with NaN/Inf output; tc.debugging's"),
    # chapter 09: the collectives DistributedDataParallel runs on, and DistributedSampler's shards
    Component("shard", "09", "ex09_2", "shard", "shard", adapters.same,
              "shard(indices, rank, world_size) -> rank's padded, strided part; DistributedSampler iterates it"),
    Component("all_reduce", "09", "ex09_5", "all_reduce", "all_reduce", adapters_distributed.all_reduce,
              "all_reduce(ranks, op) combines every rank's tensor in place; tc.distributed.all_reduce (DDP's "
              "gradient buckets) runs it over the gathered ranks", checks=("all_reduce", "broadcast")),
    Component("broadcast", "09", "ex09_5", "broadcast", "broadcast", adapters_distributed.broadcast,
              "broadcast(ranks, src) copies ranks[src] into every rank in place; tc.distributed.broadcast (DDP's "
              "initial weights) runs it", checks=("all_reduce", "broadcast")),
]
COMPONENTS = tuple(Component(**{**c.__dict__, "notebook": NOTEBOOKS[c.chapter]}) for c in _COMPONENTS)
BY_NAME = {c.name: c for c in COMPONENTS}


def sources(component: Component) -> list[tuple[str, str]]:
    """Every (chapter, grade_id) cell that defines `component`, earliest first (the latest one wins)."""
    return [(component.chapter, component.exercise), *component.also]


def exercise_id(grade_id: str) -> str:
    """The exercise id that grades a solution cell: "ex02_1" -> "02.1", "ex05b_5" -> "05b.5"."""
    chapter, _, number = grade_id.removeprefix("ex").partition("_")
    return f"{chapter}.{number}"


def check_names(component: Component) -> tuple:
    """The names the cell's `check(...)` call passes, in its order."""
    return component.checks or (component.defines,)


def for_chapter(chapter: str) -> list[Component]:
    """The components that an exercise of chapter `chapter` ("01" ... "09", "05b") defines."""
    return [c for c in COMPONENTS if any(ch == chapter for ch, _ in sources(c))]
