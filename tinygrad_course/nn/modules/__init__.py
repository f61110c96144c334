"""The layer classes of `tc.nn`, one family per file (each lists its classes in `__all__`), in the files
where PyTorch keeps them (`tc.nn.modules.sparse.Embedding`, `tc.nn.modules.batchnorm.BatchNorm2d`, ...)."""
from .module import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from . import (activation, adaptive, batchnorm, channelshuffle, container, conv, distance,  # noqa: E402,F401
               dropout, flatten, fold, instancenorm, lazy, linear, linear_cross_entropy,
               linear_cross_entropy_options, loss, module, normalization, padding, pixelshuffle, pooling, rnn,
               sparse, transformer, upsampling, utils)

_FAMILIES = (module, container, linear, flatten, activation, dropout, sparse, conv, pooling, normalization,
             batchnorm, instancenorm, loss, distance, padding, upsampling, pixelshuffle, channelshuffle, fold, rnn,
             transformer)
__all__ = [name for family in _FAMILIES for name in family.__all__]
