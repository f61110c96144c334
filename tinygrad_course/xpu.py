"""`tc.xpu`: PyTorch's `torch.xpu` device module. The framework has no Intel XPU device, so
`is_available()` is False and `device_count()` 0, as PyTorch reports on a machine without one; seeding and
cache calls do nothing."""
from ._absent_device import *  # noqa: F403
from ._absent_device import __all__  # noqa: F401
