"""Names and error messages as arrays of character codes, so that a probe (which returns arrays only, compared
with the reference's run) can compare them."""
from __future__ import annotations

import numpy as np


def codes(texts, width=48):
    """Strings as rows of character codes (cut at `width`), so that a probe can return names and messages."""
    rows = [[ord(c) for c in text[:width]] + [0] * (width - len(text[:width])) for text in texts]
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def error(fn, width=160, message=True):
    """The first `width` characters of the error `fn()` raises, prefixed by its type's name ("" if none)."""
    try:
        fn()
    except Exception as raised:  # the message is what the probe compares
        return codes([f"{type(raised).__name__}: {raised}" if message else type(raised).__name__], width)
    return codes([""], width)
