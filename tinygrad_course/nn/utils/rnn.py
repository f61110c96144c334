"""Variable-length sequences for recurrent layers: `pad_sequence`, `PackedSequence`, `pack_padded_sequence`,
`pad_packed_sequence`, `pack_sequence`, like `torch.nn.utils.rnn`.

A packed sequence stores the valid steps of a batch time-major: first the step-0 items of every sequence (longest
first), then the step-1 items of those still running, ... `batch_sizes[t]` says how many sequences are still
running at step t. Conversions gather rows with one index tensor, so they are differentiable.
"""
from __future__ import annotations

from typing import NamedTuple

from ...factories import full, tensor
from ...ops.concat import cat, stack
from ...tensor import Tensor
from ..functional.padding import pad

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence"]


class PackedSequence(NamedTuple):
    """Packed batch of variable-length sequences: data (sum of lengths, *), batch_sizes (int64, on the CPU),
    and the batch permutation (sorted_indices, unsorted_indices) when the input was not sorted by length."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args, **kwargs):
        """The same packed sequence with `data` (and the index tensors) moved or cast like `Tensor.to`."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(device=data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    @property
    def is_cuda(self):
        """True if the packed data is on the GPU."""
        return self.data.is_cuda


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Stack tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padding with `padding_value`."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        gap = max_len - s.shape[0]
        amount = (gap, 0) if padding_side == "left" else (0, gap)
        padded.append(_pad_first_dim(s, amount, padding_value) if gap else s)
    return stack(padded, 0 if batch_first else 1)


def _pad_first_dim(t, amount, value):
    return pad(t, (0, 0) * (t.ndim - 1) + amount, value=value)


def _host_ints(t):
    """A list of Python ints from a list or an integer tensor (a host copy: the lengths decide shapes)."""
    return [int(v) for v in (t.tolist() if isinstance(t, Tensor) else t)]


def _positions(batch_sizes):
    """Row of every packed item in the padded (T, B) layout: (time indices, batch indices), in packed order."""
    times, batches = [], []
    for t, size in enumerate(batch_sizes):
        times.extend([t] * size)
        batches.extend(range(size))
    return times, batches


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True):
    """Pack a padded batch (T, B, *) (or (B, T, *)) whose sequences have the given lengths."""
    lengths = _host_ints(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lengths) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.shape[batch_dim]})")
    if any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                "if you do not need ONNX exportability.")
        sorted_indices = unsorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        inverse = [0] * len(order)
        for pos, i in enumerate(order):
            inverse[i] = pos
        sorted_indices = tensor(order, device=input.device)
        unsorted_indices = tensor(inverse, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
        lengths = [lengths[i] for i in order]
    if batch_first:
        input = input.transpose(0, 1)
    if lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be at most {input.shape[0]}, but got {lengths[0]}")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0])]
    data = _padded_to_packed(input, batch_sizes)
    return PackedSequence(data, tensor(batch_sizes, device="cpu"), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence, batch_first: bool = False, padding_value: float = 0.0, total_length=None):
    """Undo `pack_padded_sequence`: returns the padded batch and the lengths (int64, on the CPU)."""
    batch_sizes = _host_ints(sequence.batch_sizes)
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    padded, _ = _packed_to_padded(sequence.data, batch_sizes, max_len, padding_value)
    lengths = [sum(1 for size in batch_sizes if size > b) for b in range(batch_sizes[0])]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in _host_ints(sequence.unsorted_indices)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, tensor(lengths, device="cpu")


def pack_sequence(sequences, enforce_sorted: bool = True):
    """Pack a list of tensors of shape (L_i, *) (pad_sequence + pack_padded_sequence)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


# ---- helpers shared with the recurrent layers ---------------------------------------------------------------

def _padded_to_packed(padded, batch_sizes):
    """Rows of the time-major `padded` (T, B, *) that hold valid steps, in packed order."""
    times, batches = _positions(_host_ints(batch_sizes))
    device = padded.device
    return padded[tensor(times, device=device), tensor(batches, device=device)]


def _packed_to_padded(data, batch_sizes, total_length=None, padding_value=0.0):
    """Time-major padded (T, B, *) from packed `data`, and the (T, B, 1) bool masks of valid steps."""
    batch_sizes = _host_ints(batch_sizes)
    steps = len(batch_sizes) if total_length is None else total_length
    batch = batch_sizes[0]
    filler = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    rows = cat([data, filler], 0)
    index = [[data.shape[0]] * batch for _ in range(steps)]  # every slot points at the filler row ...
    for row, (t, b) in enumerate(zip(*_positions(batch_sizes))):
        index[t][b] = row  # ... except the valid ones
    padded = rows[tensor(index, device=data.device)]
    masks = tensor([[[b < size] for b in range(batch)] for size in batch_sizes], device=data.device)
    return padded, masks
