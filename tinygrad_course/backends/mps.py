"""`tc.backends.mps`: Apple's Metal back end, which the framework does not have."""


def is_available() -> bool:
    """False: there is no MPS device here."""
    return False


def is_built() -> bool:
    """False: the framework is not built with MPS."""
    return False
