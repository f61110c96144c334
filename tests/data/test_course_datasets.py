"""MNIST/FashionMNIST (with small IDX files written here; downloads faked), Digits, synthetic sets, transforms."""
import gzip
import hashlib
import io
import urllib.error

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import datasets, transforms as T
from tinygrad_course.datasets import mnist as mnist_module
from tinygrad_course.datasets.idx import parse_idx, read_idx, write_idx
from tinygrad_course.utils.data import DataLoader


# ---- IDX files -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("compress", [False, True])
def test_idx_roundtrip(tmp_path, dtype, compress):
    arr = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    write_idx(tmp_path / "a.idx", arr, compress=compress)
    back = read_idx(tmp_path / "a.idx")
    assert back.dtype == np.dtype(dtype) and back.shape == (2, 3, 4)
    np.testing.assert_array_equal(back, arr)


def test_idx_header_is_big_endian_like_mnist():
    raw = bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9])
    assert parse_idx(raw).tolist() == [7, 8, 9]
    with pytest.raises(RuntimeError, match="truncated"):
        parse_idx(raw[:-1])
    with pytest.raises(RuntimeError, match="not an IDX file"):
        parse_idx(b"PK\x03\x04....")


# ---- MNIST / FashionMNIST --------------------------------------------------------------------------

def _write_fake_mnist(folder, n_train=6, n_test=4, compress=True):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    files = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        suffix = ".gz" if compress else ""
        write_idx(folder / f"{prefix}-images-idx3-ubyte{suffix}", images, compress)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte{suffix}", labels, compress)
        files[prefix] = (images, labels)
    return files


@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST])
@pytest.mark.parametrize("compress", [True, False])
def test_mnist_reads_raw_folder_like_torchvision(tmp_path, cls, compress):
    files = _write_fake_mnist(tmp_path / cls.__name__ / "raw", compress=compress)
    train = cls(tmp_path, train=True)
    test = cls(str(tmp_path), train=False, transform=T.ToTensor(), target_transform=lambda y: y * 10)
    assert len(train) == 6 and len(test) == 4
    img, label = train[2]
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (28, 28)
    np.testing.assert_array_equal(img, files["train"][0][2])
    assert label == 2 and isinstance(label, int)
    x, y = test[3]
    assert x.shape == (1, 28, 28) and x.dtype == tc.float32 and y == 30
    np.testing.assert_allclose(x.numpy()[0], files["t10k"][0][3] / 255.0, rtol=1e-6)
    assert train.data.dtype == tc.uint8 and train.targets.dtype == tc.int64
    assert "Number of datapoints: 6" in repr(train)
    batch = next(iter(DataLoader(test, batch_size=4)))
    assert batch[0].shape == (4, 1, 28, 28)


def test_missing_files_without_download_give_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True"):
        datasets.FashionMNIST(tmp_path)


class _FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _fake_server(monkeypatch, payloads, calls):
    def urlopen(url, timeout=None):
        calls.append(url)
        name = url.rsplit("/", 1)[-1]
        if url not in payloads and name not in payloads:
            raise urllib.error.URLError("Name or service not known")
        return _FakeResponse(payloads.get(url, payloads.get(name)))

    monkeypatch.setattr(mnist_module.urllib.request, "urlopen", urlopen)


def _gz_payloads():
    out = {}
    for name, arr in [("train-images-idx3-ubyte.gz", np.zeros((2, 28, 28), np.uint8)),
                      ("train-labels-idx1-ubyte.gz", np.array([3, 4], np.uint8)),
                      ("t10k-images-idx3-ubyte.gz", np.ones((1, 28, 28), np.uint8)),
                      ("t10k-labels-idx1-ubyte.gz", np.array([7], np.uint8))]:
        buf = io.BytesIO()
        raw = bytes([0, 0, 8, arr.ndim]) + np.asarray(arr.shape, ">u4").tobytes() + arr.tobytes()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
            g.write(raw)
        out[name] = buf.getvalue()
    return out


def test_download_verifies_checksums_falls_back_to_mirrors_and_caches(tmp_path, monkeypatch):
    payloads = _gz_payloads()
    resources = [(name, hashlib.md5(data).hexdigest()) for name, data in payloads.items()]
    monkeypatch.setattr(datasets.MNIST, "resources", resources)
    monkeypatch.setattr(datasets.MNIST, "mirrors", ["https://down.example/", "https://ok.example/"])
    calls = []
    _fake_server(monkeypatch, {"https://ok.example/" + n: d for n, d in payloads.items()}, calls)
    ds = datasets.MNIST(tmp_path, train=True, download=True)
    assert ds.targets.tolist() == [3, 4]
    assert len(calls) == 8 and calls[0].startswith("https://down.example/") and calls[1].startswith("https://ok.")
    calls.clear()
    again = datasets.MNIST(tmp_path, train=False, download=True)  # cached: no network
    assert calls == [] and again.targets.tolist() == [7]


def test_download_rejects_bad_checksum(tmp_path, monkeypatch):
    payloads = _gz_payloads()
    monkeypatch.setattr(datasets.MNIST, "resources", [(n, "0" * 32) for n in payloads])
    monkeypatch.setattr(datasets.MNIST, "mirrors", ["https://ok.example/"])
    _fake_server(monkeypatch, {"https://ok.example/" + n: d for n, d in payloads.items()}, [])
    with pytest.raises(RuntimeError, match="checksum mismatch"):
        datasets.MNIST(tmp_path, download=True)
    assert not any(p.name.endswith(".gz") for p in (tmp_path / "MNIST" / "raw").iterdir())


def test_offline_download_error_names_the_folder(tmp_path, monkeypatch):
    _fake_server(monkeypatch, {}, [])
    with pytest.raises(RuntimeError, match="(?s)Error downloading train-images.*Name or service not known.*FashionMNIST.raw.*Digits"):
        datasets.FashionMNIST(tmp_path, download=True)


# ---- Digits and synthetic sets -------------------------------------------------------------------

def test_digits_split_is_fixed_disjoint_and_stratified():
    train, test = datasets.Digits(train=True), datasets.Digits(train=False)
    assert len(train) + len(test) == 1797 and 350 <= len(test) <= 370
    x, y = train[0]
    assert x.shape == (1, 8, 8) and x.dtype == tc.float32 and isinstance(y, int)
    assert float(train.data.min()) == 0.0 and float(train.data.max()) == 1.0
    assert sorted(set(test.targets.tolist())) == list(range(10))
    again = datasets.Digits(train=False)
    np.testing.assert_array_equal(again.data.numpy(), test.data.numpy())
    # no test image is also a training image
    tr = {row.tobytes() for row in train.data.numpy()}
    assert sum(row.tobytes() in tr for row in test.data.numpy()) < 5  # (sklearn's set has a few duplicates)


def test_load_digits_gives_scikit_learns_arrays_from_package_data():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    ours, theirs = datasets.load_digits(), sklearn_datasets.load_digits()
    for name in ("data", "images", "target"):
        mine, ref = getattr(ours, name), getattr(theirs, name)
        assert mine.dtype == ref.dtype and mine.shape == ref.shape, name
        np.testing.assert_array_equal(mine, ref)
    assert datasets.digits.DATA_FILE.is_file()


def test_digits_need_no_scikit_learn(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "sklearn", None)          # `import sklearn` now raises ImportError
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    assert len(datasets.Digits(train=True)) + len(datasets.Digits(train=False)) == 1797
    assert datasets.load_digits().images.shape == (1797, 8, 8)


@pytest.mark.parametrize("make,kwargs,classes", [
    (datasets.make_moons, dict(n_samples=101), 2),
    (datasets.make_spirals, dict(n_samples=90, n_classes=3), 3),
    (datasets.make_blobs, dict(n_samples=60, centers=4, n_features=3), 4),
])
def test_synthetic_sets(make, kwargs, classes):
    X, y = make(**kwargs, generator=tc.Generator().manual_seed(0))
    X2, y2 = make(**kwargs, generator=tc.Generator().manual_seed(0))
    assert X.dtype == tc.float32 and y.dtype == tc.int64 and X.shape[0] == y.shape[0] == kwargs["n_samples"]
    assert sorted(set(y.tolist())) == list(range(classes))
    np.testing.assert_array_equal(X.numpy(), X2.numpy())


# ---- transforms --------------------------------------------------------------------------------------

def test_to_tensor_and_normalize_like_torchvision():
    img = np.arange(2 * 3 * 2, dtype=np.uint8).reshape(2, 3, 2) * 10  # H x W x C
    x = T.ToTensor()(img)
    assert x.shape == (2, 2, 3) and x.dtype == tc.float32
    np.testing.assert_allclose(x.numpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    gray = T.ToTensor()(np.zeros((4, 5), np.uint8))
    assert gray.shape == (1, 4, 5)
    assert T.ToTensor()(np.ones((2, 2), np.float64)).dtype == tc.float64  # non-uint8 keeps its values
    norm = T.Normalize((0.5, 0.25), (0.5, 2.0))(x)
    expected = (img.transpose(2, 0, 1) / 255.0 - np.array([0.5, 0.25])[:, None, None]) / np.array([0.5, 2.0])[:, None, None]
    np.testing.assert_allclose(norm.numpy(), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        T.Normalize([0.0], [0.0])(gray)
    with pytest.raises(TypeError, match="Input tensor should be a torch tensor"):
        T.Normalize([0.0], [1.0])(img)


def test_compose_lambda_and_repr():
    pipeline = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,)), T.Lambda(lambda t: t.flatten())])
    out = pipeline(np.zeros((28, 28), np.uint8))
    assert out.shape == (784,)
    assert repr(pipeline) == "Compose(\n    ToTensor()\n    Normalize(mean=(0.1307,), std=(0.3081,))\n    Lambda()\n)"
    with pytest.raises(TypeError, match="should be callable"):
        T.Lambda(3)


def test_random_horizontal_flip_probability_and_seeding():
    x = tc.arange(6.0).reshape(1, 2, 3)
    assert T.RandomHorizontalFlip(p=1.0)(x).tolist() == [[[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]]
    assert T.RandomHorizontalFlip(p=0.0)(x).tolist() == x.tolist()
    tc.manual_seed(0)
    flips = [T.RandomHorizontalFlip()(x).tolist() != x.tolist() for _ in range(200)]
    assert 70 < sum(flips) < 130
    tc.manual_seed(0)
    assert [T.RandomHorizontalFlip()(x).tolist() != x.tolist() for _ in range(200)] == flips


def test_random_crop_with_padding():
    x = tc.arange(16.0).reshape(1, 4, 4) + 1
    crop = T.RandomCrop(4, padding=2)
    seen = set()
    tc.manual_seed(1)
    for _ in range(100):
        out = crop(x)
        assert out.shape == (1, 4, 4)
        arr = out.numpy()[0]
        seen.add(arr.tobytes())
        # the crop is a window of the zero-padded 8x8 image
        padded = np.pad(x.numpy()[0], 2)
        assert any(np.array_equal(padded[i:i + 4, j:j + 4], arr) for i in range(5) for j in range(5))
    assert len(seen) > 10
    assert T.RandomCrop(4)(x).tolist() == x.tolist()  # same size, no padding: identity
    edge = T.RandomCrop((2, 2), padding=(1, 1), padding_mode="edge")(x)
    assert edge.shape == (1, 2, 2)
    with pytest.raises(ValueError, match="larger than input image size"):
        T.RandomCrop(5)(x)
    assert T.RandomCrop(6, pad_if_needed=True)(x).shape == (1, 6, 6)
    assert repr(T.RandomCrop(28, padding=4)) == "RandomCrop(size=(28, 28), padding=4)"


def test_shakespeare_text_ships_with_the_package():
    text = tc.datasets.shakespeare()
    assert len(text) == 1_115_394  # the whole file, read offline
    assert text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.")
    chars = sorted(set(text))
    assert len(chars) == 65 and chars[0] == "\n" and "z" in chars
