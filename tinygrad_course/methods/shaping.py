"""Shape methods beyond views: tile, roll, rot90, broadcast_to, movedim, select, tensor_split, diff, ...
(like torch); the stacking functions (hstack, meshgrid, ...) are in `methods/stacking.py`."""
from __future__ import annotations

from ..ops import indexing as IX
from ..ops import rearrange as RA
from ..ops import strided_views as SV
from ..dtypes import type_name
from ..shapes import normalize_dim
from ..ops._util import as_tensor_like
from ..ops.concat import cat
from ..shapes import shape_from_args
from .numpy_names import numpy_arg_names
from .stacking import repeat_interleave

METHOD_FUNCTIONS: tuple[str, ...] = (
    "tile", "roll", "rot90", "flipud", "fliplr", "broadcast_to", "movedim", "moveaxis", "tensor_split", "hsplit",
    "vsplit", "dsplit", "diff", "select", "as_strided",
)
__all__: list[str] = []


@numpy_arg_names
class ShapingMethods:
    """Shaping methods of `Tensor`."""

    __slots__ = ()

    # ---- repeating, rolling, flipping ---------------------------------------------------------------
    def tile(self, *dims):
        """Repeat the tensor along each dim (missing leading dims count as 1), like `torch.tile`."""
        dims = shape_from_args(dims)
        return self.repeat((1,) * (self.ndim - len(dims)) + tuple(dims))

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Repeat each element `repeats` times (an int or a tensor of counts), like `torch.repeat_interleave`."""
        return repeat_interleave(self, repeats, dim, output_size=output_size)

    def roll(self, shifts, dims=None):
        """Shift elements cyclically along `dims` (the flattened tensor when None), like `torch.roll`."""
        shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
        dims = () if dims is None else ((dims,) if isinstance(dims, int) else tuple(dims))
        if not shifts:
            raise RuntimeError("`shifts` required")
        if (dims or len(shifts) != 1) and len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        for d in dims:
            normalize_dim(d, self.ndim)
        return RA.Roll.apply(self, shifts, dims)

    def rot90(self, k=1, dims=(0, 1)):
        """Rotate by 90 degrees `k` times in the plane of `dims` (from the first towards the second)."""
        dims = tuple(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        d0, d1 = normalize_dim(dims[0], self.ndim), normalize_dim(dims[1], self.ndim)
        if d0 == d1:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
        return RA.Rot90.apply(self, int(k) % 4, (d0, d1))

    def flipud(self):
        """Reverse the order of rows (dim 0), like `torch.flipud`."""
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def fliplr(self):
        """Reverse the order of columns (dim 1), like `torch.fliplr`."""
        if self.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    # ---- views --------------------------------------------------------------------------------------
    def broadcast_to(self, size):
        """This tensor expanded to shape `size` (a view), like `torch.broadcast_to`."""
        size = tuple(int(s) for s in size)
        shape, lead = self._data.shape, len(size) - self.ndim
        for i in range(self.ndim - 1, -1, -1):  # PyTorch reports the right-most mismatch
            if lead >= 0 and shape[i] != 1 and size[lead + i] not in (-1, shape[i]):
                raise RuntimeError(
                    f"The expanded size of the tensor ({size[lead + i]}) must match the existing size ({shape[i]}) at "
                    f"non-singleton dimension {lead + i}.  Target sizes: [{', '.join(map(str, size))}].  "
                    f"Tensor sizes: [{', '.join(map(str, shape))}]")
        return self.expand(size)

    def movedim(self, source, destination):
        """Move dims `source` to positions `destination`, keeping the others in order (a view)."""
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        if len(src) != len(dst):
            raise RuntimeError(
                f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the same "
                f"number of dims as destination ({list(dst)} dims)")
        nd = self.ndim
        src_n = [normalize_dim(d, nd) for d in src]
        dst_n = [normalize_dim(d, nd) for d in dst]
        if len(set(src_n)) != len(src_n):
            raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
        if len(set(dst_n)) != len(dst_n):
            raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
        order = [None] * max(nd, 1)
        for s, d in zip(src_n, dst_n):
            order[d] = s
        rest = iter(d for d in range(nd) if d not in src_n)
        order = [next(rest) if o is None else o for o in order][:nd]
        return self.permute(order)

    moveaxis = movedim

    def select(self, dim, index):
        """The slice at `index` along `dim`, with that dim removed (a view), like `torch.select`."""
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = normalize_dim(dim, self.ndim)
        n = self._data.shape[d]
        index = int(index)
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"[{', '.join(map(str, self._data.shape))}] at dimension {d}")
        return IX.SelectItem.apply(self, (slice(None),) * d + (index,), True)

    def unfold(self, dimension, size, step):
        """A view of all `size`-long windows along `dimension`, `step` apart (window elements in a new last dim)."""
        return SV.Unfold.apply(self, dimension, int(size), int(step))

    def as_strided(self, size, stride, storage_offset=None):
        """A view on this tensor's storage with the given sizes, strides (in elements) and offset."""
        offset = self.storage_offset() if storage_offset is None else int(storage_offset)
        return SV.AsStrided.apply(self, tuple(int(s) for s in size), tuple(int(s) for s in stride), offset)

    # ---- splitting ----------------------------------------------------------------------------------
    def tensor_split(self, indices_or_sections, dim=0):
        """Split into `n` nearly equal parts, or at the given indices, along `dim` (views), like `torch.tensor_split`."""
        if self.ndim == 0:
            raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        d = normalize_dim(dim, self.ndim)
        spec = indices_or_sections
        if hasattr(spec, "_data"):
            if spec.dtype.name != "int64":
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                                   f"{type_name(spec.dtype)}")
            if spec.ndim > 1:
                raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                                   f"one-dimensional tensor, but got a tensor with {spec.ndim} dims")
            spec = spec.item() if spec.ndim == 0 else spec.tolist()
        n = self._data.shape[d]
        if isinstance(spec, int):
            if spec <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
            small, big = divmod(n, spec)
            bounds, start = [], 0
            for i in range(spec):
                length = small + (1 if i < big else 0)
                bounds.append((start, start + length))
                start += length
        else:
            cuts = [0] + [int(i) for i in spec] + [n]
            bounds = list(zip(cuts[:-1], cuts[1:]))
        return tuple(IX.GetItem.apply(self, (slice(None),) * d + (slice(a, b),), True) for a, b in bounds)

    def hsplit(self, split_size_or_sections):
        """`tensor_split` along dim 1 (dim 0 for 1-D tensors), like `torch.hsplit`."""
        if self.ndim < 1:
            raise RuntimeError("tc.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
                               "dimensions!")
        return self._split_along("hsplit", 1 if self.ndim > 1 else 0, split_size_or_sections)

    def vsplit(self, split_size_or_sections):
        """`tensor_split` along dim 0 of a tensor with at least 2 dims, like `torch.vsplit`."""
        if self.ndim < 2:
            raise RuntimeError(f"tc.vsplit requires a tensor with at least 2 dimension, but got a tensor with "
                               f"{self.ndim} dimensions!")
        return self._split_along("vsplit", 0, split_size_or_sections)

    def dsplit(self, split_size_or_sections):
        """`tensor_split` along dim 2 of a tensor with at least 3 dims, like `torch.dsplit`."""
        if self.ndim < 3:
            raise RuntimeError(f"tc.dsplit requires a tensor with at least 3 dimension, but got a tensor with "
                               f"{self.ndim} dimensions!")
        return self._split_along("dsplit", 2, split_size_or_sections)

    def _split_along(self, name, dim, sections):
        if isinstance(sections, int):
            n = self._data.shape[dim]
            if sections == 0 or n % sections:
                raise RuntimeError(f"tc.{name} attempted to split along dimension {dim}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {sections}!")
        return self.tensor_split(sections, dim)

    # ---- differences --------------------------------------------------------------------------------
    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """n-th forward difference along `dim` (after concatenating prepend/append), like `torch.diff`."""
        if self.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        if n < 0:
            raise RuntimeError(f"order must be non-negative but got {n}")
        d = normalize_dim(dim, self.ndim)

        parts = []
        for extra in (prepend, append):
            if extra is None:
                parts.append(None)
                continue
            extra = as_tensor_like(extra, self)
            if extra.ndim == 0:
                shape = list(self._data.shape)
                shape[d] = 1
                extra = extra.expand(shape)
            if extra.ndim != self.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
            for k in range(self.ndim):
                if k != d and extra._data.shape[k] != self._data.shape[k]:
                    raise RuntimeError(
                        "diff expects the shape of tensor to prepend or append to match that of input except along "
                        f"the differencing dimension; input.size({k}) = {self._data.shape[k]}, but got "
                        f"tensor.size({k}) = {extra._data.shape[k]}")
            parts.append(extra)
        if n == 0:  # PyTorch returns a copy of the input (prepend/append only checked)
            return self.new_empty(self.shape).copy_(self)
        out = self
        if parts[0] is not None or parts[1] is not None:
            out = cat([p for p in (parts[0], self, parts[1]) if p is not None], d)
        for _ in range(n):
            length = out._data.shape[d]
            if length == 0:
                break
            hi, lo = out.narrow(d, 1, length - 1), out.narrow(d, 0, length - 1)
            out = hi.logical_xor(lo) if out.dtype.name == "bool" else hi - lo
        return out
