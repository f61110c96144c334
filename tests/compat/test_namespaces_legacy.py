"""Namespaces and legacy API that PyTorch programs use on their first lines: tc.accelerator, tc.backends,
tc.cuda.amp, device predicates, Variable, typed-tensor constructors, tc.jit / tc.onnx."""
import importlib
import warnings

import numpy as np
import pytest
import torch

import tinygrad_course as tc


def test_accelerator_matches_pytorch_on_this_machine():
    assert tc.accelerator.is_available() == torch.accelerator.is_available()
    assert tc.accelerator.device_count() == torch.accelerator.device_count()
    if not torch.accelerator.is_available():
        assert tc.accelerator.current_accelerator() is None
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            tc.accelerator.current_device_index()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            torch.accelerator.current_device_index()
    dev = tc.accelerator.current_accelerator().type if tc.accelerator.is_available() else "cpu"
    assert tc.zeros(2, device=dev).device.type == dev


def test_backends_flags_have_pytorch_defaults_and_keep_assignments():
    from tinygrad_course.backends import cudnn
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert cudnn.is_available() == torch.backends.cudnn.is_available()
    assert cudnn.version() == torch.backends.cudnn.version()
    old = cudnn.benchmark
    try:
        tc.backends.cudnn.benchmark = True
        assert cudnn.benchmark is True
        with cudnn.flags(enabled=True, benchmark=False, deterministic=True):
            assert cudnn.deterministic is True and cudnn.benchmark is False
        assert cudnn.benchmark is True and cudnn.deterministic is False
    finally:
        cudnn.benchmark = old
    m = tc.backends.cuda.matmul
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        assert getattr(m, name) == getattr(torch.backends.cuda.matmul, name)
    m.allow_tf32 = True
    assert m.allow_tf32 is True
    m.allow_tf32 = False
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        torch.backends.cuda.matmul.foo
    assert tc.backends.mps.is_available() == torch.backends.mps.is_available()
    assert tc.backends.mps.is_built() == torch.backends.mps.is_built()
    assert tc.backends.cuda.is_built() == torch.backends.cuda.is_built()
    assert tc.backends.cuda.math_sdp_enabled() == torch.backends.cuda.math_sdp_enabled()
    assert isinstance(tc.backends.cpu.get_cpu_capability(), str)


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in rec]


def test_cuda_amp_old_spelling_warns_like_pytorch():
    def make(ns):
        return lambda: ns.cuda.amp.GradScaler()

    def enter(ns):
        def f():
            with ns.cuda.amp.autocast():
                pass
        return f

    for fn in (make, enter):
        ours = [w for w in _warnings_of(fn(tc)) if w[0] is FutureWarning]
        theirs = [w for w in _warnings_of(fn(torch)) if w[0] is FutureWarning]
        assert ours == theirs and ours
    import tinygrad_course.cuda.amp as amp_mod
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = amp_mod.GradScaler(enabled=False)
    assert isinstance(scaler, tc.amp.GradScaler) and not scaler.is_enabled()


@pytest.mark.parametrize("name", ["is_xpu", "is_mps", "is_meta", "is_quantized", "is_sparse", "is_mkldnn",
                                  "is_vulkan", "is_ipu", "is_mtia", "is_maia", "is_xla", "is_nested", "is_cpu",
                                  "is_cuda", "is_sparse_csr"])
def test_device_predicates(name):
    assert getattr(tc.zeros(2), name) == getattr(torch.zeros(2), name)


def test_variable_is_a_tensor_sharing_data():
    x, tx = tc.ones(2), torch.ones(2)
    v, tv = tc.autograd.Variable(x, requires_grad=True), torch.autograd.Variable(tx, requires_grad=True)
    assert v.requires_grad == tv.requires_grad and x.requires_grad == tx.requires_grad
    assert v.data_ptr() == x.data_ptr()
    assert isinstance(x, tc.autograd.Variable) and isinstance(tx, torch.autograd.Variable)
    (v * 3).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3, 3])
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        tc.autograd.Variable([1, 2])
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        torch.autograd.Variable([1, 2])
    assert _warnings_of(lambda: tc.autograd.Variable(x, volatile=True)) == \
        _warnings_of(lambda: torch.autograd.Variable(tx, volatile=True))


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor",
                                  "BoolTensor", "HalfTensor", "ShortTensor", "CharTensor"])
def test_typed_tensor_constructors(name):
    ours, theirs = getattr(tc, name), getattr(torch, name)
    for args in ([[1, 0, 2]], [(3, 1)], [[[1, 2], [3, 4]]]):
        a, b = ours(*args), theirs(*args)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(ours(2, 3).shape) == tuple(theirs(2, 3).shape) == (2, 3)
    assert tuple(ours(tc.Size([4])).shape) == (4,)
    assert tuple(ours().shape) == tuple(theirs().shape) == (0,)
    assert ours.dtype is getattr(tc, str(theirs.dtype).split(".")[1])
    t = ours([1])
    assert isinstance(t, ours) and isinstance(theirs([1]), theirs)
    other = tc.FloatTensor if name != "FloatTensor" else tc.LongTensor
    assert not isinstance(t, other)
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        ours("a")
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        theirs("a")


def test_type_with_legacy_names_and_classes():
    x, tx = tc.tensor([1.5, 2.0]), torch.tensor([1.5, 2.0])
    assert x.type().endswith(".FloatTensor") and tx.type() == "torch.FloatTensor"
    for spelling in ("torch.LongTensor", "tc.LongTensor", "torch.DoubleTensor", "tc.IntTensor"):
        a = x.type(spelling)
        b = tx.type(spelling.replace("tc.", "torch."))
        assert str(a.dtype)[str(a.dtype).index("."):] == str(b.dtype)[5:]
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert x.type(tc.LongTensor).dtype is tc.int64 and x.type(tc.float64).dtype is tc.float64
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        tx.type("torch.Foo")


@pytest.mark.parametrize("fn", ["script", "trace", "save", "load", "freeze"])
def test_jit_imports_and_compiling_raises_with_advice(fn):
    jit = importlib.import_module("tinygrad_course.jit")
    with pytest.raises(NotImplementedError, match=f"tc.jit.{fn} is not supported.*Instead, "):
        getattr(jit, fn)(tc.nn.Linear(2, 2))
    assert jit.is_scripting() is False and torch.jit.is_scripting() is False

    @jit.ignore
    def f(x):
        return x + 1
    assert f(1) == 2


def test_onnx_imports_and_export_raises_with_advice():
    onnx = importlib.import_module("tinygrad_course.onnx")
    with pytest.raises(NotImplementedError, match="tc.onnx.export is not supported.*Instead, "):
        onnx.export(tc.nn.Linear(2, 2), tc.zeros(1, 2), "m.onnx")
    assert onnx.is_in_onnx_export() is False


def test_cuda_legacy_types_exist_and_describe_cuda_tensors():
    for name in ("FloatTensor", "LongTensor", "ByteTensor"):
        ours, theirs = getattr(tc.cuda, name), getattr(torch.cuda, name)
        assert ours.is_cuda is True and ours.dtype is getattr(tc, name).dtype
        assert not isinstance(tc.zeros(1, dtype=ours.dtype), ours)
        assert not isinstance(torch.zeros(1, dtype=theirs.dtype), theirs)
    with pytest.raises(AttributeError):
        tc.cuda.NotATensor


def test_compile_returns_the_model_and_works_as_a_decorator():
    m = tc.nn.Linear(2, 2)
    assert tc.compile(m) is m and tc.compile(m, mode="max-autotune", fullgraph=True) is m

    @tc.compile
    def f(x):
        return x + 1

    @tc.compile(mode="reduce-overhead")
    def g(x):
        return x * 2
    assert f(1) == 2 and g(2) == 4


def test_process_switches_keep_pytorchs_defaults_and_assignments():
    assert tc.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    tc.set_float32_matmul_precision("high")
    assert tc.get_float32_matmul_precision() == "high"
    tc.set_float32_matmul_precision("highest")
    assert tc.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
    tc.use_deterministic_algorithms(True, warn_only=True)
    assert tc.are_deterministic_algorithms_enabled() and tc.is_deterministic_algorithms_warn_only_enabled()
    tc.use_deterministic_algorithms(False)
    assert (tc.pi, tc.e, tc.inf, tc.newaxis) == (torch.pi, torch.e, torch.inf, torch.newaxis)
    for name in ("contiguous_format", "channels_last", "preserve_format"):
        assert repr(getattr(tc, name)).split(".")[1] == repr(getattr(torch, name)).split(".")[1]
    assert tuple(tc.empty(2, 3, memory_format=tc.contiguous_format).shape) == (2, 3)
    assert tc.backends.opt_einsum.enabled == torch.backends.opt_einsum.enabled


@pytest.mark.parametrize("mod", ["xpu", "mps", "cpu"])
def test_device_modules_answer_like_pytorch_on_this_machine(mod):
    ours, theirs = getattr(tc, mod), getattr(torch, mod)
    assert ours.is_available() == theirs.is_available()
    assert ours.device_count() == theirs.device_count()
    ours.synchronize()


def test_cpu_amp_old_spelling_warns_like_pytorch():
    for make in (lambda ns: ns.cpu.amp.autocast(), lambda ns: ns.cpu.amp.GradScaler()):
        ours = [w for w in _warnings_of(lambda: make(tc)) if w[0] is FutureWarning]
        theirs = [w for w in _warnings_of(lambda: make(torch)) if w[0] is FutureWarning]
        assert ours == theirs and ours
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tc.cpu.amp.autocast(dtype=tc.bfloat16):
            y = tc.nn.Linear(2, 2)(tc.ones(1, 2))
    assert y.dtype is tc.bfloat16


def test_set_default_tensor_type_like_pytorch():
    try:
        for ns in (tc, torch):
            got = _warnings_of(lambda: ns.set_default_tensor_type(ns.DoubleTensor))
            assert got[0][0] is UserWarning and "set_default_tensor_type() is deprecated" in got[0][1]
            assert ns.zeros(1).dtype is ns.float64
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ns.set_default_tensor_type("torch.FloatTensor")
                assert ns.zeros(1).dtype is ns.float32
                with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
                    ns.set_default_tensor_type(ns.LongTensor)
    finally:
        tc.set_default_dtype(tc.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("args", ["(2, 3)", "([1, 2],)", "()", "(ns.Size([2]),)"])
def test_legacy_tensor_new_keeps_dtype_like_pytorch(args):
    a = eval(f"x.new{args}", {"x": tc.ones(2, dtype=tc.float64), "ns": tc})
    b = eval(f"x.new{args}", {"x": torch.ones(2, dtype=torch.float64), "ns": torch})
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[3:] == str(b.dtype)[6:]
    if "[1, 2]" in args:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_layout_and_return_types_print_like_pytorch():
    tc.set_printoptions(namespace="torch")
    try:
        assert repr(tc.zeros(2).layout) == repr(torch.zeros(2).layout) == "torch.strided"
        x, tx = tc.tensor([[1.0, 3.0], [2.0, 0.0]]), torch.tensor([[1.0, 3.0], [2.0, 0.0]])
        for call in ("x.max(1)", "x.sort(1)", "x.aminmax()"):
            assert repr(eval(call)) == repr(eval("t" + call))
    finally:
        tc.set_printoptions(namespace=None)
