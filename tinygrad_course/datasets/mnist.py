"""`MNIST` and `FashionMNIST` with torchvision's signature: downloaded once (checksum-verified), then cached.

Files live in `<root>/<ClassName>/raw/` like torchvision's, so an existing torchvision download is reused.
A sample is `(image, label)`: the image is a uint8 NumPy array of shape (28, 28) (torchvision gives a PIL
image; `transforms.ToTensor()` accepts both) and the label an int.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request

from ..factories import from_numpy
from .vision import VisionDataset
from .idx import read_idx


def _md5(path, chunk=1 << 20) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def download_url(urls, path, md5, timeout=30.0):
    """Fetch the first URL that works into `path` (atomically) and verify its MD5; raise with every reason."""
    errors = []
    folder = os.path.dirname(path)
    for url in urls:
        fd, tmp = tempfile.mkstemp(prefix=".download-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
                for block in iter(lambda: response.read(1 << 20), b""):
                    out.write(block)
            got = _md5(tmp)
            if got != md5:
                errors.append(f"{url}: checksum mismatch (MD5 {got}, expected {md5})")
                continue
            os.replace(tmp, path)
            return path
        except (urllib.error.URLError, OSError, ValueError) as e:
            errors.append(f"{url}: {getattr(e, 'reason', e)}")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    raise RuntimeError(
        f"Error downloading {os.path.basename(path)}:\n  " + "\n  ".join(errors) +
        f"\nHint: without a network connection, copy the file into {folder} yourself, or use "
        "tc.datasets.Digits(), which needs no download."
    )


class MNIST(VisionDataset):
    """The MNIST handwritten digits (60,000 training and 10,000 test images, 28x28 grey levels)."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(os.fspath(root))
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError(
                f"Dataset not found. You can use download=True to download it (looked in {self.raw_folder})."
            )
        prefix = "train" if train else "t10k"
        self.data = from_numpy(read_idx(self._find(f"{prefix}-images-idx3-ubyte")))
        self.targets = from_numpy(read_idx(self._find(f"{prefix}-labels-idx1-ubyte")).astype("int64"))

    @property
    def raw_folder(self) -> str:
        """The folder holding the downloaded files: `root/<ClassName>/raw`, like torchvision."""
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def class_to_idx(self) -> dict:
        """Class name -> label index, like torchvision."""
        return {name: i for i, name in enumerate(self.classes)}

    def _find(self, stem):
        """The raw file, gzip-compressed or already extracted (torchvision keeps both)."""
        for name in (stem, stem + ".gz"):
            path = os.path.join(self.raw_folder, name)
            if os.path.exists(path):
                return path
        return None

    def _check_exists(self) -> bool:
        return all(self._find(os.path.splitext(name)[0]) is not None for name, _ in self.resources)

    def download(self):
        """Download the missing raw files from the mirrors (nothing happens when they are already there)."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            path = os.path.join(self.raw_folder, filename)
            if os.path.exists(path) and _md5(path) == md5:
                continue
            download_url([mirror + filename for mirror in self.mirrors], path, md5)

    def _raw_item(self, index):
        return self.data[index]._data, int(self.targets[index])

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        lines = [f"Dataset {self.__class__.__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}", f"    Split: {'Train' if self.train else 'Test'}"]
        if self.transform is not None:
            lines.append("    StandardTransform")
            lines.append("Transform: " + repr(self.transform).replace("\n", "\n           "))
        return "\n".join(lines)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 28x28 grey images of 10 kinds of clothing, a drop-in replacement for MNIST."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
               "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
