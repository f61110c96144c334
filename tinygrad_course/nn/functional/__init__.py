"""`tc.nn.functional` (import as `F`): stateless layer operations and losses, like `torch.nn.functional`.

One file per family, each importing only the files listed before it (and lower layers of the package):
`_utils` (argument helpers), `activation`, `softmax`, `dropout`, `linear`, `embedding`,
`padding`, `conv`, `pooling`, `normalization`, `vision`, `distance`, `loss_reduction`, `loss_regression`,
`loss_classification`, `loss_margin`, `attention`. This file only gathers their public names.
"""
from __future__ import annotations

from .activation import (celu, celu_, elu, elu_, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, hardtanh_,
                         leaky_relu, logsigmoid, mish, prelu, relu, relu6, relu_, rrelu, rrelu_, selu, selu_, sigmoid,
                         silu, softplus, softshrink, softsign, tanh, tanhshrink, threshold, threshold_)
from .softmax import gumbel_softmax, log_softmax, softmax, softmin
from .dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from .linear import bilinear, flatten, linear
from .embedding import embedding, one_hot
from .padding import pad
from .conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, fold, unfold
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d,
                      avg_pool2d, lp_pool1d, lp_pool2d, max_pool1d, max_pool2d, max_unpool1d, max_unpool2d)
from .normalization import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm
from .vision import interpolate, pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .loss_regression import gaussian_nll_loss, huber_loss, l1_loss, mse_loss, poisson_nll_loss, smooth_l1_loss
from .loss_classification import binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, kl_div, nll_loss
from .loss_margin import (cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
                          multilabel_margin_loss, multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss,
                          triplet_margin_with_distance_loss)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .loss_reduction import _reduction  # used by the loss modules of tc.nn
from ..._unsupported import missing as _missing

__all__ = [
    "linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout",
    "one_hot", "pad", "conv2d", "unfold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "layer_norm",
    "batch_norm", "embedding", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "flatten", "softplus", "elu", "elu_", "selu", "selu_", "celu", "celu_",
    "relu6", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "mish", "logsigmoid", "softsign", "softmin",
    "glu", "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "prelu", "rrelu", "rrelu_",
    "gumbel_softmax", "normalize", "cosine_similarity", "pairwise_distance", "pdist",
    "scaled_dot_product_attention", "multi_head_attention_forward", "conv1d", "conv_transpose1d",
    "conv_transpose2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d", "group_norm", "instance_norm",
    "rms_norm", "local_response_norm", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "fold", "bilinear", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


def __getattr__(name):
    raise _missing("tc.nn.functional", name, f"module '{__name__}' has no attribute '{name}'")
