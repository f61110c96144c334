"""Image transforms, mirroring `torchvision.transforms`: `Compose`, `ToTensor`, `Normalize`, `Lambda`,
`RandomHorizontalFlip`, `RandomCrop`.

Transforms are callables applied to one sample (usually inside a Dataset's `__getitem__`). Random ones
draw from the framework's generator, so `tc.manual_seed` (and DataLoader worker seeding) makes them
reproducible.
"""
from __future__ import annotations

import numbers

import numpy as np

from .factories import as_tensor, from_numpy
from .generator import default_generator
from .tensor import Tensor

__all__ = ["Compose", "ToTensor", "Normalize", "Lambda", "RandomHorizontalFlip", "RandomCrop"]


class Compose:
    """Apply several transforms one after another: `Compose([ToTensor(), Normalize(mean, std)])`."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class ToTensor:
    """Convert an image (NumPy array H x W or H x W x C, or a PIL image) into a C x H x W tensor.

    uint8 images are scaled from 0..255 to floats in [0, 1]; other dtypes keep their values.
    """

    def __call__(self, pic):
        if isinstance(pic, Tensor):
            raise TypeError("pic should be PIL Image or ndarray. Got <class 'tinygrad_course.Tensor'>")
        if not isinstance(pic, np.ndarray):
            if hasattr(pic, "mode") and hasattr(pic, "size"):  # a PIL image
                pic = np.array(pic, copy=True)
            else:
                raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        chw = np.ascontiguousarray(pic.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            return from_numpy(chw.astype(np.float32) / np.float32(255))
        return from_numpy(chw.copy())

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class Normalize:
    """Standardise each channel of a C x H x W tensor: (x - mean[c]) / std[c]."""

    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def __call__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Input tensor should be a torch tensor. Got {type(tensor)}.")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.ndim < 3:
            raise ValueError(
                f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = {tuple(tensor.shape)}"
            )
        mean = as_tensor(self.mean, dtype=tensor.dtype, device=tensor.device)
        std = as_tensor(self.std, dtype=tensor.dtype, device=tensor.device)
        if (std == 0).any():
            raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
        if mean.ndim == 1:
            mean = mean.view(-1, 1, 1)
        if std.ndim == 1:
            std = std.view(-1, 1, 1)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return (tensor - mean) / std

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    """Wrap any function as a transform: `Lambda(lambda x: x.flatten())`."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


def _random() -> float:
    return float(default_generator.random(()))


def _randint(high: int) -> int:
    return int(default_generator.integers(0, high, ()))


class RandomHorizontalFlip:
    """Mirror the image left-right (last dimension) with probability `p`."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if _random() < self.p:
            return img.flip(-1) if isinstance(img, Tensor) else np.ascontiguousarray(img[..., ::-1])
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


_PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


class RandomCrop:
    """Cut a random `size` window out of an image (..., H, W), after optional `padding` of the borders.

    `padding` is an int (all sides), (left/right, top/bottom) or (left, top, right, bottom);
    `padding_mode` is "constant" (with `fill`), "edge", "reflect" or "symmetric".
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else tuple(size)
        if len(self.size) == 1:
            self.size = (self.size[0], self.size[0])
        if padding_mode not in _PAD_MODES:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    @staticmethod
    def _ltrb(padding):
        if isinstance(padding, numbers.Number):
            return (int(padding),) * 4
        padding = tuple(int(p) for p in padding)
        if len(padding) == 1:
            return padding * 4
        if len(padding) == 2:
            return (padding[0], padding[1], padding[0], padding[1])
        if len(padding) == 4:
            return padding
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")

    def _pad(self, arr, ltrb):
        left, top, right, bottom = ltrb
        widths = [(0, 0)] * (arr.ndim - 2) + [(top, bottom), (left, right)]
        if self.padding_mode == "constant":
            return np.pad(arr, widths, mode="constant", constant_values=self.fill)
        return np.pad(arr, widths, mode=_PAD_MODES[self.padding_mode])

    def __call__(self, img):
        is_tensor = isinstance(img, Tensor)
        arr = img.detach().cpu()._data if is_tensor else np.asarray(img)
        if self.padding is not None:
            arr = self._pad(arr, self._ltrb(self.padding))
        th, tw = self.size
        h, w = arr.shape[-2:]
        if self.pad_if_needed and w < tw:
            arr = self._pad(arr, (tw - w, 0, tw - w, 0))
        if self.pad_if_needed and h < th:
            arr = self._pad(arr, (0, th - h, 0, th - h))
        h, w = arr.shape[-2:]
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        i, j = _randint(h - th + 1), _randint(w - tw + 1)
        out = np.ascontiguousarray(arr[..., i:i + th, j:j + tw])
        return from_numpy(out).to(img.device) if is_tensor else out

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"
