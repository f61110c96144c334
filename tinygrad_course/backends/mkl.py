"""`tc.backends.mkl`."""


def is_available() -> bool:
    """False: the framework does not link MKL itself (NumPy may)."""
    return False
