"""`tc.save` / `tc.load`: checkpoints in a safe file format (no code is ever unpickled by default).

File layout (all integers little-endian):

    offset  0  magic    b"TCSAVE\\r\\n"  (the \\r\\n makes text-mode corruption detectable, as in PNG)
            8  uint32   format version (1)
           12  uint32   reserved (0)
           16  uint64   length of the JSON header
           24  uint64   length of the payload
           32  uint32   CRC-32 of the JSON header
           36  uint32   CRC-32 of the payload
           40  JSON header (UTF-8), zero-padded so the payload starts at a multiple of 64
               payload: the raw bytes of every tensor/array, each starting at a multiple of 64

The JSON header describes the saved object: Python None/bool/int/float/str map to themselves; lists,
tuples, dicts (any key type, order kept), OrderedDicts, tensors (dtype, shape, offset into the payload,
requires_grad, whether it was an `nn.Parameter`), NumPy arrays and scalars, dtypes, devices and `tc.Size`
are tagged objects. Anything else (e.g. a whole `nn.Module`) is pickled into the payload; `weights_only=True`
refuses it unless its classes are allow-listed, `weights_only=False` loads it and warns that unpickling runs
code from the file. NumPy arrays and scalars are stored as raw data but, as in PyTorch, `weights_only=True`
loads them only once their globals (`numpy._core.multiarray._reconstruct`, `numpy.ndarray`, `numpy.dtype`,
the dtype's class such as `numpy.dtypes.Float64DType`, ...) are allow-listed.
"""
from __future__ import annotations

import base64
import collections
import json
import math
import os
import pickle
import struct
import tempfile
import warnings
import zlib

import numpy as np

from .._backend import device as _device
from ..cuda import is_available as _cuda_is_available
from ..dtypes import _BY_NAME, _BY_NP
from ..dtypes import dtype as _dtype
from ..nn.parameter import Parameter
from ..shapes import Size
from ..tensor import Tensor
from ..tensor_base import _wrap
from .pickling import dumps as _dumps
from .pickling import loads as _loads
from .pickling import stream_name as _stream_name
from .pickling import vet as _vet
from .weights_only import resolve as _resolve_weights_only

MAGIC = b"TCSAVE\r\n"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sIIQQII")
_ALIGN = 64

__all__ = ["save", "load", "CheckpointError"]


class CheckpointError(RuntimeError):
    """A file could not be read as a checkpoint (not one, truncated, corrupted, or a newer format)."""


# ---- saving ------------------------------------------------------------------------------------------

class _Encoder:
    """Turns an object tree into JSON-able data plus a list of byte blocks for the payload."""

    def __init__(self):
        self.blocks = []  # (offset, uint8 array)
        self.size = 0
        self.tensor_ids = {}  # id(tensor) -> index into self.tensors, so shared tensors stay shared
        self.tensors = []
        self.keep_alive = []

    def _add_block(self, raw: np.ndarray) -> int:
        offset = -(-self.size // _ALIGN) * _ALIGN
        self.blocks.append((offset, raw))
        self.size = offset + raw.nbytes
        return offset

    def _array_entry(self, arr: np.ndarray) -> dict:
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        offset = self._add_block(arr.reshape(-1).view(np.uint8))
        return {"shape": list(arr.shape), "offset": offset, "nbytes": int(arr.nbytes)}

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and type(obj) is int:
            return obj
        if isinstance(obj, float) and type(obj) is float:
            return obj if math.isfinite(obj) else {"t": "float", "v": repr(obj)}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, Size):
            return {"t": "size", "v": list(obj)}
        if type(obj) in (list, tuple):
            return {"t": type(obj).__name__, "v": [self.encode(x) for x in obj]}
        if type(obj) in (dict, collections.OrderedDict, collections.defaultdict) and not (
                type(obj) is collections.defaultdict and obj.default_factory not in (None, dict, list)):
            kind = {dict: "dict", collections.OrderedDict: "odict", collections.defaultdict: "ddict"}[type(obj)]
            entry = {"t": kind, "v": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
            if kind == "ddict":
                entry["factory"] = getattr(obj.default_factory, "__name__", None)
            if kind == "odict" and getattr(obj, "_metadata", None) is not None:
                entry["metadata"] = self.encode(obj._metadata)
            return entry
        if isinstance(obj, np.ndarray) and obj.dtype in _BY_NP:
            return {"t": "ndarray", "dtype": _BY_NP[obj.dtype].name, **self._array_entry(obj)}
        if isinstance(obj, np.generic) and obj.dtype in _BY_NP:
            return {"t": "npscalar", "dtype": _BY_NP[obj.dtype].name, "v": obj.item()
                    if obj.dtype.kind != "f" or math.isfinite(obj) else repr(float(obj))}
        if isinstance(obj, bytes):
            return {"t": "bytes", "v": base64.b64encode(obj).decode("ascii")}
        if isinstance(obj, _dtype):
            return {"t": "dtype", "v": obj.name}
        if isinstance(obj, _device):
            return {"t": "device", "v": str(obj)}
        return self._pickled(obj)

    def _tensor(self, t: Tensor):
        key = id(t)
        if key in self.tensor_ids:
            return {"t": "ref", "v": self.tensor_ids[key]}
        self.keep_alive.append(t)
        arr = t.detach().cpu()._data
        entry = {"t": "tensor", "dtype": t.dtype.name, "device": str(t.device), "requires_grad": bool(t.requires_grad),
                 "param": isinstance(t, Parameter), **self._array_entry(arr)}
        self.tensor_ids[key] = len(self.tensors)
        self.tensors.append(entry)
        return {"t": "ref", "v": self.tensor_ids[key]}

    def _pickled(self, obj):
        data = _dumps(obj, lambda t: self._tensor(t)["v"])
        offset = self._add_block(np.frombuffer(data, dtype=np.uint8))
        return {"t": "pickle", "type": _stream_name(type(obj)), "offset": offset,
                "nbytes": len(data)}


def _serialize(obj, fileobj):
    enc = _Encoder()
    tree = enc.encode(obj)
    header = json.dumps({"format": "tinygrad_course", "version": FORMAT_VERSION, "tensors": enc.tensors,
                         "root": tree}, separators=(",", ":")).encode("utf-8")
    start = _HEADER.size + len(header)
    pad = -start % _ALIGN
    header += b" " * pad
    payload_crc = 0
    position = 0
    chunks = []
    for offset, raw in enc.blocks:
        if offset > position:
            gap = b"\0" * (offset - position)
            payload_crc = zlib.crc32(gap, payload_crc)
            chunks.append(gap)
        payload_crc = zlib.crc32(raw, payload_crc)
        chunks.append(raw)
        position = offset + raw.nbytes
    crc = zlib.crc32(header)
    fileobj.write(_HEADER.pack(MAGIC, FORMAT_VERSION, 0, len(header), position, crc, payload_crc))
    fileobj.write(header)
    for chunk in chunks:
        fileobj.write(chunk if isinstance(chunk, bytes) else memoryview(chunk))


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Save `obj` (a tensor, a state_dict, a checkpoint dict, ...) to the path or binary file object `f`.

    Like `torch.save`. Writing to a path is atomic: the data goes to a temporary file in the same folder
    that then replaces `f`, so a crash mid-save leaves any previous checkpoint intact.
    """
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                _serialize(obj, out)
                out.flush()
                os.fsync(out.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
    else:
        _serialize(obj, f)


# ---- loading -----------------------------------------------------------------------------------------

def _describe(name):
    return f"'{name}'" if name else "the file"


def _read_all(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read(), os.fspath(f)
    return f.read(), getattr(f, "name", None)


def _check_header(data: bytes, name):
    where = _describe(name)
    if data[:8] != MAGIC:
        if data[:4] == b"PK\x03\x04":
            hint = ("It looks like a zip archive (PyTorch's torch.save format?). Load it with torch.load and copy the "
                    "values into tinygrad_course tensors.")
        elif data[:1] == b"\x80":
            hint = "It looks like a raw pickle; only load pickles you trust, with the pickle module."
        elif data[:6] == b"\x93NUMPY":
            hint = "It looks like a NumPy .npy file; use numpy.load and tc.from_numpy."
        elif data.startswith(MAGIC.replace(b"\r\n", b"\n")):
            hint = "Its line endings were rewritten (was it opened in text mode or converted by a tool?)."
        else:
            hint = "Hint: tc.load reads files written by tc.save."
        if len(data) < len(MAGIC) and MAGIC.startswith(data):
            raise CheckpointError(f"{where} is truncated: it ends after {len(data)} bytes, inside the header.")
        raise CheckpointError(f"{where} is not a tinygrad_course checkpoint (unknown file header). {hint}")
    if len(data) < _HEADER.size:
        raise CheckpointError(f"{where} is truncated: it ends after {len(data)} bytes, inside the header.")
    magic, version, _, header_len, payload_len, header_crc, payload_crc = _HEADER.unpack_from(data)
    if version > FORMAT_VERSION:
        raise CheckpointError(
            f"{where} uses checkpoint format version {version}, but this tinygrad_course reads up to version "
            f"{FORMAT_VERSION}. Hint: upgrade tinygrad_course."
        )
    expected = _HEADER.size + header_len + payload_len
    if len(data) < expected:
        raise CheckpointError(
            f"{where} is truncated: expected {expected} bytes, found {len(data)}. The save was probably interrupted "
            "or the copy is incomplete."
        )
    if len(data) > expected:
        raise CheckpointError(f"{where} is corrupted: {len(data) - expected} unexpected bytes after the data.")
    header = data[_HEADER.size:_HEADER.size + header_len]
    if zlib.crc32(header) != header_crc:
        raise CheckpointError(f"{where} is corrupted: the header checksum does not match.")
    payload = memoryview(data)[_HEADER.size + header_len:]
    if zlib.crc32(payload) != payload_crc:
        raise CheckpointError(f"{where} is corrupted: the data checksum does not match.")
    try:
        meta = json.loads(header.decode("utf-8"))
    except ValueError as e:
        raise CheckpointError(f"{where} is corrupted: its header is not valid JSON ({e}).") from None
    return meta, payload


class _Decoder:
    def __init__(self, meta, payload, map_location, weights_only, name):
        self.payload = payload
        self.map_location = map_location
        self.weights_only = weights_only
        self.name = name
        self.tensor_entries = meta["tensors"]
        self.tensors = {}
        self.vetted = set()

    def _array(self, entry, np_dtype):
        start, nbytes = entry["offset"], entry["nbytes"]
        if start < 0 or start + nbytes > len(self.payload):
            raise CheckpointError(f"{_describe(self.name)} is corrupted: an array lies outside the data.")
        arr = np.frombuffer(self.payload, dtype=np.uint8, count=nbytes, offset=start).view(np_dtype)
        return arr.reshape(entry["shape"]).copy()

    def decode(self, node):
        if not isinstance(node, dict):
            return node
        kind = node.get("t")
        if kind == "ref":
            return self._tensor(node["v"])
        if kind == "list":
            return [self.decode(x) for x in node["v"]]
        if kind == "tuple":
            return tuple(self.decode(x) for x in node["v"])
        if kind in ("dict", "odict", "ddict"):
            items = [(self._key(self.decode(k)), self.decode(v)) for k, v in node["v"]]
            if kind == "dict":
                return dict(items)
            if kind == "odict":
                out = collections.OrderedDict(items)
                if "metadata" in node:
                    out._metadata = self.decode(node["metadata"])
                return out
            factory = {"dict": dict, "list": list}.get(node.get("factory"))
            return collections.defaultdict(factory, items)
        if kind == "float":
            return float(node["v"])
        if kind == "size":
            return Size(node["v"])
        if kind == "ndarray":
            np_dtype = _BY_NAME[node["dtype"]].np_dtype
            empty = math.prod(node["shape"]) == 0
            self._vet((kind, np_dtype, empty), lambda: np.zeros(0 if empty else 1, np_dtype))
            return self._array(node, np_dtype)
        if kind == "npscalar":
            value = _BY_NAME[node["dtype"]].np_dtype.type(node["v"])
            self._vet((kind, value.dtype), lambda: value)
            return value
        if kind == "bytes":
            value = base64.b64decode(node["v"])
            self._vet(("bytes", len(value) == 0), lambda: value)  # PyTorch pickles b"" as bytes(), a global
            return value
        if kind == "dtype":
            return _BY_NAME[node["v"]]
        if kind == "device":
            return _device(node["v"])
        if kind == "pickle":
            return self._unpickle(node)
        raise CheckpointError(f"{_describe(self.name)} is corrupted: unknown entry type {kind!r}.")

    def _vet(self, key, stand_in):
        """With weights_only, refuse a NumPy object as PyTorch's unpickler refuses one like `stand_in()`."""
        if self.weights_only and key not in self.vetted:
            _vet(stand_in())
            self.vetted.add(key)

    @staticmethod
    def _key(k):
        return tuple(k) if isinstance(k, list) else k

    def _unpickle(self, node):
        if not self.weights_only:
            warnings.warn(
                f"tc.load is unpickling a {node['type']} object (weights_only=False). Unpickling runs code stored in "
                "the file, so a malicious checkpoint can take over your computer: only do this for files you trust.",
                UserWarning, stacklevel=4,
            )
        start, nbytes = node["offset"], node["nbytes"]
        return _loads(self.payload[start:start + nbytes], self._tensor, self.weights_only)

    def _tensor(self, index):
        if index in self.tensors:
            return self.tensors[index]
        entry = self.tensor_entries[index]
        dtype = _BY_NAME[entry["dtype"]]
        t = _wrap(self._array(entry, dtype.np_dtype))
        target = self._target_device(t, entry["device"])
        if target != "cpu":
            t = t.to(target)
        if entry.get("param"):
            t = Parameter(t, requires_grad=entry["requires_grad"])
        elif entry["requires_grad"]:
            t.requires_grad_(True)
        self.tensors[index] = t
        return t

    def _target_device(self, t, saved):
        loc = self.map_location
        if loc is None:
            target = saved
        elif callable(loc) and not isinstance(loc, (str, _device)):
            moved = loc(t, saved)
            return str(moved.device) if isinstance(moved, Tensor) else saved
        elif isinstance(loc, dict):
            target = str(loc.get(saved, saved))
        else:
            target = str(_device(loc))
        if target != "cpu":
            if not _cuda_is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but tc.cuda.is_available() is False. If you "
                    "are running on a CPU-only machine, please use tc.load with map_location='cpu' to map your "
                    "storages to the CPU."
                )
        return target


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved with `tc.save` from a path or binary file object.

    `map_location` moves tensors: a device ("cpu", "cuda:0"), a dict {saved_device: new_device}, or a function
    `fn(tensor, saved_device)`. With `weights_only=True` (the default) only tensors, numbers, strings, None,
    containers, dtypes, devices and `Size` load, plus what `tc.serialization.add_safe_globals` allow-lists;
    anything else (pickled objects, and NumPy arrays and scalars as in PyTorch) is refused with PyTorch's
    message naming the global to allow-list, because unpickling can run code. PyTorch's environment switches
    `TORCH_FORCE_WEIGHTS_ONLY_LOAD` / `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` apply (`weights_only.py`).
    """
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    data, name = _read_all(f)
    meta, payload = _check_header(data, name)
    if meta.get("format") != "tinygrad_course" or "root" not in meta:
        raise CheckpointError(f"{_describe(name)} is corrupted: its header does not describe a checkpoint.")
    decoder = _Decoder(meta, payload, map_location, weights_only, name)
    try:
        return decoder.decode(meta["root"])
    except (KeyError, TypeError, ValueError, IndexError) as e:
        if isinstance(e, (CheckpointError, pickle.UnpicklingError)):
            raise
        raise CheckpointError(f"{_describe(name)} is corrupted: {type(e).__name__}: {e}") from None
