"""PyTorch names the framework does not implement, and what to use instead.

A program written for PyTorch that reaches one of these names gets `UnsupportedError` at the line that
uses it, naming the function and the alternative, never an AttributeError from somewhere inside the
framework. `UnsupportedError` is a NotImplementedError and also an AttributeError, so feature tests
keep working: `hasattr(torch, "compile")`-style checks and `getattr(x, "stft", None)` see the name as
absent and take their fallback path.

`TABLE` maps an owner (`"tc"`, `"Tensor"`, `"tc.linalg"`, ...) to `{name: advice}`; each namespace's
`__getattr__` calls `missing(owner, name)`, which returns the exception to raise (a plain AttributeError
for names that are not PyTorch's).
"""
from __future__ import annotations

__all__ = ["MODULES", "TABLE", "UnsupportedError", "getattr_for", "missing", "missing_in_module",
           "unsupported_function"]


class UnsupportedError(NotImplementedError, AttributeError):
    """A PyTorch API that tinygrad_course does not implement (the message says what to use instead)."""


_NUMPY = ("compute it with NumPy on x.detach().numpy() and wrap the result with tc.from_numpy "
          "(no gradient flows through that step)")
_NO_COMPLEX = "keep the real and imaginary parts as two real tensors (the framework has no complex dtypes)"
_NO_3D = "fold the depth into the batch or channel dimension and use the 2-d layer"
_BY_HAND = "write it from the framework's ops (they record gradients)"


def _same(names: str, advice: str) -> dict:
    return dict.fromkeys(names.split(), advice)


TABLE: dict[str, dict[str, str]] = {
    "tc": {
        **_same("svd qr lstsq eig symeig cholesky cholesky_solve cholesky_inverse lu lu_solve lu_unpack pinverse "
                "slogdet matrix_exp triangular_solve geqrf orgqr ormqr", _NUMPY + " (numpy.linalg)"),
        "logdet": "use tc.linalg.det(A).log() (differentiable)",
        **_same("lgamma digamma polygamma mvlgamma i0 igamma igammac", _NUMPY + " (scipy.special)"),
        **_same("gcd lcm ldexp frexp nextafter bitwise_left_shift bitwise_right_shift", _NUMPY),
        **_same("quantile nanquantile", "sort along the dimension with tc.sort and index the sorted values, or "
                + _NUMPY + " (numpy.quantile)"),
        **_same("stft istft", _NUMPY + " (numpy.fft / scipy.signal.stft)"),
        **_same("complex view_as_complex view_as_real polar complex64 complex128 cfloat cdouble chalf",
                _NO_COMPLEX),
        **_same("trapz trapezoid cumulative_trapezoid gradient", _BY_HAND + " (differences with tc.diff) or "
                + _NUMPY),
        **_same("vmap func", "loop over the batch dimension, or write the function for batched input (the "
                "framework's ops broadcast over leading dimensions)"),
        "hub": "build the model from its code and load its weights with model.load_state_dict(tc.load(path))",
        "export": "run the model eagerly; to hand it to PyTorch, save model.state_dict() with tc.save",
        **_same("quantization ao quantize_per_tensor qint8 quint8 qint32", "train and run in float32 (the framework "
                "has no quantized tensors)"),
        **_same("nested", "pad the sequences to one length with tc.nn.utils.rnn.pad_sequence (and "
                "pack them with pack_padded_sequence for RNNs)"),
        **_same("from_file frombuffer", "read the bytes with numpy.fromfile / numpy.frombuffer and wrap them with "
                "tc.from_numpy"),
        "empty_strided": "create it with tc.empty(size) and take a view with as_strided",
        **_same("uint16 uint32 uint64 float8_e4m3fn float8_e5m2", "use one of the framework's dtypes (int32, int64, "
                "float16, bfloat16, float32, float64)"),
    },
    "Tensor": {
        **_same("svd qr cholesky cholesky_solve cholesky_inverse lu lu_solve pinverse slogdet matrix_exp eig lstsq "
                "triangular_solve geqrf orgqr ormqr", _NUMPY + " (numpy.linalg)"),
        "logdet": "use tc.linalg.det(A).log() (differentiable)",
        **_same("lgamma lgamma_ digamma digamma_ polygamma polygamma_ mvlgamma mvlgamma_ i0 i0_ igamma igamma_ "
                "igammac igammac_", _NUMPY + " (scipy.special)"),
        **_same("gcd gcd_ lcm lcm_ ldexp ldexp_ frexp nextafter nextafter_ bitwise_left_shift bitwise_left_shift_ "
                "bitwise_right_shift bitwise_right_shift_", _NUMPY),
        **_same("quantile nanquantile", "sort along the dimension with x.sort(dim) and index the sorted values, or "
                + _NUMPY + " (numpy.quantile)"),
        **_same("stft istft", _NUMPY + " (numpy.fft / scipy.signal.stft)"),
        **_same("cfloat cdouble chalf", _NO_COMPLEX),
        **_same("to_mkldnn", "keep the tensor as it is (dense tensors are the only layout here)"),
        **_same("to_sparse_csr to_sparse_csc to_sparse_bsr to_sparse_bsc crow_indices col_indices ccol_indices "
                "row_indices", "use the COO layout: x.to_sparse() (indices()/values(), tc.sparse.mm)"),
        **_same("renorm renorm_", "divide by x.norm(p, dim, keepdim=True) clamped to maxnorm"),
        **_same("index_reduce index_reduce_", "use index_add_ (sum), or scatter_reduce with 'amax'/'amin'/'prod'"),
        "q_scale": "train and run in float32 (the framework has no quantized tensors)",
        "record_stream": "synchronize with tc.cuda.synchronize() (the framework uses one CUDA stream)",
    },
    "tc.linalg": {
        **_same("svd svdvals qr eig eigh eigvals eigvalsh cholesky cholesky_ex lstsq pinv matrix_rank slogdet "
                "matrix_exp lu lu_factor lu_factor_ex lu_solve cond solve_triangular householder_product "
                "tensorinv tensorsolve ldl_factor ldl_factor_ex ldl_solve inv_ex solve_ex", _NUMPY
                + " (numpy.linalg)"),
        "matmul": "use tc.matmul (the same function)",
        "matrix_power": "use tc.matrix_power (the same function)",
        "multi_dot": "multiply in a chain with tc.matmul (A @ B @ C)",
        "vecdot": "use (x * y).sum(dim)",
        "diagonal": "use tc.diagonal(A, offset, dim1=-2, dim2=-1)",
        "vander": "use tc.stack([x ** k for k in range(n)], dim=-1)",
    },
    "tc.nn": {
        **_same("Conv3d ConvTranspose3d MaxPool3d AvgPool3d AdaptiveMaxPool3d AdaptiveAvgPool3d LPPool3d "
                "MaxUnpool3d FractionalMaxPool3d LazyConv3d LazyConvTranspose3d LazyBatchNorm3d LazyInstanceNorm3d", _NO_3D),
        "EmbeddingBag": "use nn.Embedding and reduce the looked-up rows with .sum(dim) or .mean(dim)",
        "CTCLoss": "train with a framewise loss such as nn.CrossEntropyLoss (the framework has no CTC loss)",
        "AdaptiveLogSoftmaxWithLoss": "use nn.Linear followed by nn.CrossEntropyLoss",
        "SyncBatchNorm": "use nn.BatchNorm1d/2d (each process then normalizes with the statistics of its own batch)",
        "CrossMapLRN2d": "use nn.LocalResponseNorm",
        **_same("LinearCrossEntropyLoss LinearCrossEntropyOptions", "use nn.Linear followed by nn.CrossEntropyLoss"),
        **_same("LazyLinear LazyConv1d LazyConv2d LazyConvTranspose1d LazyConvTranspose2d LazyBatchNorm1d "
                "LazyBatchNorm2d LazyInstanceNorm1d LazyInstanceNorm2d", "give the input size explicitly "
                "(nn.Linear(in_features, out_features), ...)"),
        "FractionalMaxPool2d": "use nn.MaxPool2d or nn.AdaptiveMaxPool2d",
    },
    "tc.nn.modules.lazy": {
        "LazyModuleMixin": "give the input size explicitly (nn.Linear(in_features, out_features), ...)",
    },
    "tc.nn.functional": {
        **_same("conv3d conv_transpose3d max_pool3d avg_pool3d adaptive_max_pool3d adaptive_avg_pool3d lp_pool3d "
                "max_unpool3d fractional_max_pool3d", _NO_3D),
        **_same("max_pool1d_with_indices max_pool2d_with_indices adaptive_max_pool1d_with_indices "
                "adaptive_max_pool2d_with_indices", "call the pooling function with return_indices=True"),
        "grid_sample": "index the input with integer coordinates (nearest), or " + _NUMPY,
        "affine_grid": "build the grid with tc.meshgrid and a matmul by the affine matrix",
        "ctc_loss": "train with a framewise loss such as F.cross_entropy (the framework has no CTC loss)",
        "embedding_bag": "use F.embedding and reduce the looked-up rows with .sum(dim) or .mean(dim)",
        **_same("channel_shuffle native_channel_shuffle", "reshape: x.view(n, g, c // g, h, w).transpose(1, 2)"
                ".reshape(n, c, h, w)"),
        "leaky_relu_": "use x = F.leaky_relu(x, negative_slope) (or nn.LeakyReLU(inplace=True))",
        **_same("fractional_max_pool2d fractional_max_pool2d_with_indices", "use F.max_pool2d or "
                "F.adaptive_max_pool2d"),
        "conv_tbc": "permute to (batch, channels, time) and use F.conv1d",
    },
    "tc.nn.utils": {
        **_same("spectral_norm remove_spectral_norm", "divide the weight by its largest singular value yourself, "
                "or train without spectral normalization"),
        **_same("weight_norm remove_weight_norm", "keep a direction parameter v and a scale g and use "
                "g * v / v.norm(dim=1, keepdim=True) as the weight in forward"),
        **_same("prune", "multiply the weight by a 0/1 mask tensor in forward (or zero entries under tc.no_grad())"),
        **_same("parametrizations parametrize", "compute the constrained weight from a plain parameter in "
                "forward"),
        **_same("fusion fuse_conv_bn_eval fuse_conv_bn_weights fuse_linear_bn_eval fuse_linear_bn_weights",
                "keep the layers separate (fusing only saves time)"),
        "stateless": "load the parameters into the module with load_state_dict, or call the functional form "
                     "(F.linear(x, weight, bias))",
        "skip_init": "create the module normally and overwrite its parameters under tc.no_grad()",
    },
    "tc.utils": {
        "dlpack": "convert through NumPy: tc.from_numpy(array) and tensor.numpy()",
        "cpp_extension": "write the operation from the framework's ops, or as a tc.autograd.Function",
        "benchmark": "time the call with time.perf_counter() (call it a few times and take the best)",
        "mobile_optimizer": "run the model eagerly",
    },
    "tc.special": {
        **_same("gammaln digamma psi polygamma multigammaln gammainc gammaincc", _NUMPY + " (scipy.special)"),
        **_same("i0 i0e i1 i1e modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
                "scaled_modified_bessel_k0 scaled_modified_bessel_k1 bessel_j0 bessel_j1 bessel_y0 bessel_y1 "
                "spherical_bessel_j0 airy_ai zeta erfcx ndtri log_ndtr", _NUMPY + " (scipy.special)"),
        **_same("chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
                "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
                "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l "
                "legendre_polynomial_p", "evaluate the recurrence with the framework's ops (p_next = 2 * x * p - "
                "p_prev for Chebyshev T), which records gradients"),
    },
    "tc.sparse": {
        **_same("softmax log_softmax", "make the tensor dense with .to_dense() and use tc.softmax / tc.log_softmax "
                "(mask the missing entries with -inf)"),
        **_same("FloatTensor DoubleTensor LongTensor", "create it with tc.sparse_coo_tensor(indices, values, size)"),
        **_same("sampled_addmm spsolve as_sparse_gradcheck check_sparse_tensor_invariants", "make the tensor dense "
                "with .to_dense() first"),
    },
}


# whole PyTorch modules that are absent: every public name in them raises (tc.fft, tc.distributions, ...)
MODULES: dict[str, str] = {
    "tc.fft": _NUMPY + " (numpy.fft.{name})",
    "tc.distributions": "sample with tc.randn / tc.rand / tc.multinomial and write log_prob with the framework's ops "
                        "(e.g. Normal: -((x - mu) / sigma) ** 2 / 2 - sigma.log() - 0.9189385)",
    "tc.utils.tensorboard": "print or log the numbers yourself (tc.viz has training plots)",
}


def missing_in_module(owner: str, name: str) -> AttributeError:
    """The exception for any public name of an absent PyTorch module (MODULES)."""
    if name.startswith("_"):
        return AttributeError(f"module '{owner}' has no attribute '{name}'")
    return UnsupportedError(f"{owner}.{name} is not implemented in tinygrad_course. Instead, "
                            f"{MODULES[owner].format(name=name)}.")


def missing(owner: str, name: str, what: str | None = None) -> AttributeError:
    """The exception for a name `owner` does not have: UnsupportedError with advice for PyTorch's names
    in TABLE, otherwise Python's usual AttributeError (`what` is its message)."""
    advice = TABLE.get(owner, {}).get(name)
    if advice is None:
        return AttributeError(what or f"module '{owner}' has no attribute '{name}'")
    return UnsupportedError(f"{owner}.{name} is not implemented in tinygrad_course. Instead, {advice}.")


def getattr_for(owner: str, module_name: str):
    """A module-level `__getattr__` for a module whose PyTorch twin also defines names listed under `owner`
    (`tc.nn.modules.conv.Conv3d` raises as `tc.nn.Conv3d` does)."""
    def __getattr__(name):
        raise missing(owner, name, f"module '{module_name}' has no attribute '{name}'")

    return __getattr__


def unsupported_function(qualname: str, advice: str):
    """A stand-in function for a PyTorch API that raises UnsupportedError when called."""
    def fn(*args, **kwargs):
        raise UnsupportedError(f"{qualname} is not implemented in tinygrad_course. Instead, {advice}.")

    fn.__name__ = fn.__qualname__ = qualname.rpartition(".")[2]
    fn.__doc__ = f"`{qualname}`: not implemented here; raises NotImplementedError ({advice})."
    return fn
