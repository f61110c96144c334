"""The layer classes of `tc.nn`, one family per file (each lists its classes in `__all__`)."""
from .module import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .bilinear import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from . import (activation, attention, bilinear, container, conv, distance, dropout, embedding, flatten,  # noqa: E402
               fold, linear, loss, module, normalization, padding, pixelshuffle, pooling, rnn, transformer, upsampling)

_FAMILIES = (module, container, linear, flatten, bilinear, activation, dropout, embedding, conv, pooling,
             normalization, loss, distance, padding, upsampling, pixelshuffle, fold, rnn, attention, transformer)
__all__ = [name for family in _FAMILIES for name in family.__all__]
