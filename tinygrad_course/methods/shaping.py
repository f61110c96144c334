"""More shape and indexing functions: tile, repeat_interleave, roll, rot90, meshgrid, hstack/vstack,
movedim, tensor_split, new_* factories, index_add/index_copy/index_fill, in-place shape ops, ... (like torch)."""
from __future__ import annotations

import itertools
import warnings
import weakref

from ..ops import gather_scatter as GS
from ..ops import index_update as IU
from ..ops import indexing as IX
from ..ops import rearrange as RA
from ..ops import strided_views as SV
from ..ops import views as V
from ..ops._util import normalize_dim, type_name

METHOD_FUNCTIONS: tuple[str, ...] = (
    "tile", "roll", "rot90", "flipud", "fliplr", "broadcast_to", "movedim", "moveaxis", "tensor_split", "hsplit",
    "vsplit", "dsplit", "diff", "select", "as_strided", "index_add", "index_copy", "index_fill", "masked_scatter",
    "put", "index_put", "index_put_", "scatter_reduce", "is_complex", "resize_as_",
)
__all__: list[str] = [
    "repeat_interleave", "meshgrid", "hstack", "vstack", "dstack", "column_stack", "row_stack", "atleast_1d",
    "atleast_2d", "atleast_3d", "cartesian_prod", "combinations",
]


def _sizes(args):
    """A shape given as varargs (`2, 3`) or as one sequence (`(2, 3)`)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    if len(args) == 1 and hasattr(args[0], "_data"):
        return tuple(args[0].tolist())
    return tuple(args)


def _as_tensor(x, like=None):
    from ..factories import tensor
    from ..tensor import Tensor

    if isinstance(x, Tensor):
        return x
    return tensor(x, device=like.device if like is not None else None)


_PINNED = {}  # id -> weakref of the storage roots marked by pin_memory()
_SHARED = {}  # id -> weakref of the storage roots marked by share_memory_()


def _root(t):
    return t if t._base is None else t._base


def _mark(table, t):
    root = _root(t)
    key = id(root)
    table[key] = weakref.ref(root, lambda _, key=key: table.pop(key, None))


def _is_marked(table, t):
    root = _root(t)
    ref = table.get(id(root))
    return ref is not None and ref() is root
_RENAMED_NODES = {}


def _renamed(node, name):
    """Give `node` PyTorch's name for the in-place variant of its op (`SqueezeBackward3`, `TBackward1`, ...)."""
    cls = _RENAMED_NODES.get((type(node), name))
    if cls is None:
        cls = _RENAMED_NODES[(type(node), name)] = type(name, (type(node),), {})
    node.__class__ = cls
    return node


class ShapingMethods:
    """Mixin with shaping methods of `Tensor`."""

    __slots__ = ()

    # ---- repeating, rolling, flipping ---------------------------------------------------------------
    def tile(self, *dims):
        """Repeat the tensor along each dim (missing leading dims count as 1), like `torch.tile`."""
        dims = _sizes(dims)
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
        from ..factories import cat

        parts = []
        for extra in (prepend, append):
            if extra is None:
                parts.append(None)
                continue
            extra = _as_tensor(extra, self)
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

    # ---- in-place shape changes ---------------------------------------------------------------------
    def _restride_(self, view, node_name):
        """Make this tensor `view` (a view of itself) in place, as PyTorch's squeeze_/t_/... do."""
        self._check_inplace()
        self._data = view._data
        if view.grad_fn is not None:
            self.grad_fn, self._output_nr, self._requires_grad = _renamed(view.grad_fn, node_name), 0, True
        self._version[0] += 1
        self._view_version = self._version[0]
        return self

    def squeeze_(self, dim=None):
        """`squeeze` in place (changes this tensor's shape)."""
        name = "SqueezeBackward3" if dim is None else ("SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5")
        return self._restride_(V.Squeeze.apply(self, dim), name)

    def unsqueeze_(self, dim):
        """`unsqueeze` in place (changes this tensor's shape)."""
        return self._restride_(V.Unsqueeze.apply(self, dim), "UnsqueezeBackward1")

    def t_(self):
        """`t` in place (transposes a matrix; 0-d and 1-d tensors are unchanged)."""
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        view = V.T.apply(self, 0, 1) if self.ndim == 2 else V.AliasView.apply(self)
        return self._restride_(view, "TBackward1")

    def transpose_(self, dim0, dim1):
        """`transpose` in place (swaps two dims of this tensor)."""
        return self._restride_(V.Transpose.apply(self, dim0, dim1), "TransposeBackward1")

    swapdims_ = swapaxes_ = transpose_

    # ---- index updates ------------------------------------------------------------------------------
    def index_add(self, dim, index, source, *, alpha=1):
        """A copy with `alpha * source` added at positions `index` along `dim`, like `torch.index_add`."""
        return IU.IndexAdd.apply(self, dim, index, source, alpha)

    def index_add_(self, dim, index, source, *, alpha=1):
        """`index_add` in place."""
        return self._inplace(IU.IndexAdd.apply, dim, index, source, alpha)

    def index_copy(self, dim, index, source):
        """A copy with the slices at `index` along `dim` replaced by `source`, like `torch.index_copy`."""
        return IU.IndexCopy.apply(self, dim, index, source)

    def index_copy_(self, dim, index, source):
        """`index_copy` in place."""
        return self._inplace(IU.IndexCopy.apply, dim, index, source)

    def index_fill(self, dim, index, value):
        """A copy with the slices at `index` along `dim` set to `value`, like `torch.index_fill`."""
        return IU.IndexFill.apply(self, dim, index, value)

    def index_fill_(self, dim, index, value):
        """`index_fill` in place."""
        return self._inplace(IU.IndexFill.apply, dim, index, value)

    def masked_scatter(self, mask, source):
        """A copy with the True positions of `mask` filled, in order, from `source`, like `torch.masked_scatter`."""
        return IU.MaskedScatter.apply(self, mask, source)

    def masked_scatter_(self, mask, source):
        """`masked_scatter` in place (`mask` must broadcast to this tensor's shape)."""
        mask.expand(self.shape)  # PyTorch's error when the mask does not broadcast to self
        return self._inplace(IU.MaskedScatter.apply, mask, source)

    def put(self, index, source, accumulate=False):
        """A copy with `source` written (or added) at flat positions `index`, like `torch.put`."""
        return IU.Put.apply(self, index, source, accumulate)

    def put_(self, index, source, accumulate=False):
        """`put` in place."""
        return self._inplace(IU.Put.apply, index, source, accumulate)

    def index_put(self, indices, values, accumulate=False):
        """A copy with `self[indices] = values` (or `+=`), like `torch.index_put`."""
        from ..tensor import Tensor

        nidx, _ = IX.normalize_index(tuple(indices), Tensor)
        return IU.IndexPut.apply(self, _as_tensor(values, self), nidx, accumulate)

    def index_put_(self, indices, values, accumulate=False):
        """`self[indices] = values` (or `+=` with accumulate) in place, like `torch.Tensor.index_put_`."""
        return self._inplace(lambda t, v: t.index_put(indices, v, accumulate), _as_tensor(values, self))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """Reduce `src` into a copy of self at `index` along `dim` ('sum', 'prod', 'mean', 'amax', 'amin')."""
        return GS.ScatterReduce.apply(self, dim, index, src, reduce, include_self)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        """`scatter_reduce` in place."""
        return self._inplace(GS.ScatterReduce.apply, dim, index, src, reduce, include_self)

    # ---- new tensors like this one ------------------------------------------------------------------
    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """Zeros of shape `size` with this tensor's dtype and device (unless given)."""
        from ..factories import zeros

        return zeros(_sizes(size), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """Ones of shape `size` with this tensor's dtype and device (unless given)."""
        from ..factories import ones

        return ones(_sizes(size), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """An uninitialised (here zero-filled) tensor with this tensor's dtype and device (unless given)."""
        from ..factories import empty

        return empty(_sizes(size), dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False):
        """A tensor of shape `size` filled with `fill_value`, with this tensor's dtype and device (unless given)."""
        from ..factories import full

        return full(tuple(size) if not isinstance(size, int) else (size,), fill_value, dtype=dtype or self.dtype,
                    device=device or self.device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """A copy of `data` with this tensor's dtype and device (unless given), like `Tensor.new_tensor`."""
        from ..factories import tensor
        from ..tensor import Tensor

        if isinstance(data, Tensor):
            warnings.warn(
                "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                UserWarning, stacklevel=2)
            return tensor(data.detach().to(dtype or data.dtype), device=device or data.device,
                          requires_grad=requires_grad)
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def type_as(self, other):
        """This tensor converted to `other`'s dtype (and device), like `Tensor.type_as`."""
        return self.to(dtype=other.dtype, device=other.device)

    def ndimension(self) -> int:
        """Number of dimensions (same as `dim()`)."""
        return self.ndim

    def is_complex(self) -> bool:
        """False: complex dtypes are not supported."""
        return False

    def sum_to_size(self, *size):
        """Sum this tensor down to `size` (which must broadcast to this tensor's shape), like `Tensor.sum_to_size`."""
        size = _sizes(size)
        shape = self._data.shape
        lead = len(shape) - len(size)
        if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
            raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                               f"{{[{', '.join(map(str, shape))}]}}.")
        from ..ops.broadcast_grad import sum_to_shape

        return sum_to_shape(self, size)

    # ---- memory placement (CPU semantics of PyTorch) ------------------------------------------------
    def pin_memory(self, device=None):
        """A copy in page-locked host memory (needs a GPU, as in PyTorch; here a plain copy marked pinned)."""
        from .. import cuda

        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available. "
                               "Hint: pinned memory only speeds up copies to a GPU; without one, skip pin_memory().")
        if self.is_pinned():
            return self
        out = self.clone()
        _mark(_PINNED, out)
        return out

    def is_pinned(self, device=None) -> bool:
        """True for tensors returned by `pin_memory()` (and views of them)."""
        return _is_marked(_PINNED, self)

    def share_memory_(self):
        """Mark the storage as shared between processes (a no-op here, as for CUDA tensors); returns self."""
        _mark(_SHARED, self)
        return self

    def is_shared(self) -> bool:
        """True after `share_memory_()` (on this tensor or the tensor it views)."""
        return _is_marked(_SHARED, self)

    # ---- Python callables per element (CPU only) ----------------------------------------------------
    def apply_(self, callable):
        """Replace each element `x` by `callable(x)` in place (slow; CPU tensors only), like `Tensor.apply_`."""
        self._check_python_callable("apply_")
        return self._write_values([callable(v) for v in self._data.reshape(-1).tolist()])

    def map_(self, tensor, callable):
        """Replace each element `x` by `callable(x, y)` with `y` from `tensor` (broadcast) in place; CPU only."""
        self._check_python_callable("map_")
        other = tensor.expand(self.shape)
        values = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other._data.reshape(-1).tolist())]
        return self._write_values(values)

    def _check_python_callable(self, name):
        if self.device.type != "cpu":
            raise TypeError(f"{name} is only implemented on CPU tensors")
        if self._requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")

    def _write_values(self, values):
        import numpy as np

        from ..tensor import _wrap

        self._write(_wrap(np.asarray(values).astype(self._data.dtype).reshape(self._data.shape)))
        return self

    def resize_(self, *sizes, memory_format=None):
        """Change the shape in place, keeping the first elements in row-major order (new ones are zero)."""
        size = _sizes(sizes)
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if any(s < 0 for s in size):
            raise RuntimeError("numel: integer multiplication overflow")
        import math

        n = math.prod(size)
        data = self._data
        xp = self._xp
        if data.flags.c_contiguous and n <= data.size:
            self._data = data.reshape(-1)[:n].reshape(size)
        else:
            out = xp.zeros(n, dtype=data.dtype)
            k = min(n, data.size)
            out[:k] = data.reshape(-1)[:k]
            self._data = out.reshape(size)
            self._base = None
        self._version[0] += 1
        return self

    def resize_as_(self, the_template, memory_format=None):
        """`resize_` to the shape of `the_template`."""
        return self.resize_(the_template.shape)


# ---- module-level functions -------------------------------------------------------------------------

def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element of input `repeats` times along `dim` (flattened when None), like
    `torch.repeat_interleave`; `tc.repeat_interleave(counts)` gives indices 0.. repeated by the counts."""
    from ..factories import arange, tensor

    if repeats is None:  # torch.repeat_interleave(repeats): arange(len(repeats)) repeated
        counts = input
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(counts._data.size, device=counts.device), counts, 0, output_size=output_size)
    if dim is None:
        input, d = input.flatten(), 0
    else:
        d = normalize_dim(dim, input.ndim)
    n = input._data.shape[d] if input.ndim else 1
    if not hasattr(repeats, "_data"):
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and output_size != n * r:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * r} but got {output_size}")
        if input.ndim == 0:
            input = input.reshape(1)
        shape = list(input._data.shape)
        expanded = input.unsqueeze(d + 1).expand(shape[:d + 1] + [r] + shape[d + 1:])
        shape[d] = n * r
        return expanded.contiguous().view(shape)
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype.category != 1:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{type_name(repeats.dtype)}'")
    counts = repeats._data.reshape(-1)
    if counts.size == 1 and n != 1:
        counts = repeats._xp.broadcast_to(counts, (n,))
    if counts.size != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{counts.size} and input.size({d}) = {n}")
    if counts.size and bool((counts < 0).any()):
        raise RuntimeError("repeats can not be negative")
    xp = repeats._xp
    index = xp.repeat(xp.arange(n, dtype=counts.dtype if counts.dtype.itemsize == 8 else None), counts)
    if output_size is not None and output_size != index.size:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {index.size} but got {output_size}")
    from ..tensor import _wrap

    index = _wrap(index.astype("int64", copy=False))
    if input.ndim == 0:
        input = input.reshape(1)
    return input.index_select(d, index)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors, like `torch.meshgrid` ('ij' indexing unless `indexing='xy'`)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("tc.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'tc.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"tc.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape [{', '.join(map(str, t.shape))}]")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for k, t in enumerate(ts):
        view = [1] * len(ts)
        view[k] = -1
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _tensor_list(name, tensors):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def _atleast(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(t) for t in tensors[0])
    if len(tensors) == 1:
        return fn(tensors[0])
    return tuple(fn(t) for t in tensors)


def _atleast_1d(t):
    return t.reshape(1) if t.ndim == 0 else t


def _atleast_2d(t):
    if t.ndim == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.ndim == 1 else t


def _atleast_3d(t):
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


def atleast_1d(*tensors):
    """Each 0-d input as a 1-element 1-D view (others unchanged), like `torch.atleast_1d`."""
    return _atleast(tensors, _atleast_1d)


def atleast_2d(*tensors):
    """Each input viewed with at least 2 dims (1-D becomes a row), like `torch.atleast_2d`."""
    return _atleast(tensors, _atleast_2d)


def atleast_3d(*tensors):
    """Each input viewed with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)), like `torch.atleast_3d`."""
    return _atleast(tensors, _atleast_3d)


def hstack(tensors, *, out=None):
    """Concatenate along dim 1 (dim 0 for 1-D inputs), like `torch.hstack`."""
    from ..factories import cat

    ts = [_atleast_1d(t) for t in _tensor_list("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors, *, out=None):
    """Concatenate along dim 0 after making inputs at least 2-D, like `torch.vstack`."""
    from ..factories import cat

    return cat([_atleast_2d(t) for t in _tensor_list("vstack", tensors)], 0)


def row_stack(tensors, *, out=None):
    """Alias of `vstack`, like `torch.row_stack`."""
    from ..factories import cat

    return cat([_atleast_2d(t) for t in _tensor_list("row_stack", tensors)], 0)


def dstack(tensors, *, out=None):
    """Concatenate along dim 2 after making inputs at least 3-D, like `torch.dstack`."""
    from ..factories import cat

    return cat([_atleast_3d(t) for t in _tensor_list("dstack", tensors)], 2)


def column_stack(tensors, *, out=None):
    """Stack 0-d/1-d inputs as columns and concatenate along dim 1, like `torch.column_stack`."""
    from ..factories import cat

    ts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in _tensor_list("column_stack", tensors)]
    return cat(ts, 1)


def cartesian_prod(*tensors):
    """All combinations of one element from each 1-D input, as rows, like `torch.cartesian_prod`."""
    from ..factories import stack

    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, t.shape))}]")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """All length-`r` combinations of the elements of a 1-D tensor, as rows, like `torch.combinations`."""
    from ..dtypes import int64
    from ..factories import empty, stack, tensor

    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, input.shape))}]")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input._data.shape[0]), r))
    cols = tensor(rows, dtype=int64, device=input.device).reshape(len(rows), r).t()
    return stack([input.index_select(0, cols[k].contiguous()) for k in range(r)], 1)
