"""`tc.set_num_threads` / `tc.get_num_threads`: how many threads the CPU math library (BLAS) may use,
like `torch.set_num_threads`."""
from __future__ import annotations

_limiter = None


def set_num_threads(num: int) -> None:
    """Limit the threads used for CPU matrix products (e.g. 1 on a small shared machine)."""
    global _limiter
    if int(num) < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    from threadpoolctl import threadpool_limits

    _limiter = threadpool_limits(limits=int(num), user_api="blas")


def get_num_threads() -> int:
    """The number of threads the CPU math library currently uses."""
    from threadpoolctl import threadpool_info

    counts = [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]
    return max(counts) if counts else 1
