"""`tc.backends.openmp`."""


def is_available() -> bool:
    """False: the framework's CPU kernels are NumPy's, not OpenMP loops."""
    return False
