"""`tc.backends.opt_einsum`: PyTorch's switch for contraction-order optimisation in einsum. The framework's
einsum lets NumPy/CuPy choose the order, so the switch is recorded only."""

enabled = False  # as in PyTorch when the opt_einsum package is not installed
strategy = "auto"


def is_available() -> bool:
    """False: the opt_einsum package is not used here."""
    return False


def get_opt_einsum():
    """None: the opt_einsum package is not used here."""
    return None
