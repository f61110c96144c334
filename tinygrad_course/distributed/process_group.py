"""The default process group: `init_process_group`, `destroy_process_group`, rank and world size.

As in `torch.distributed`, a program calls `init_process_group(backend)` once per process and then
uses the collectives; rank and world size come from the MPI launcher (`mpirun -n N python train.py`).
Started without `mpirun`, a program is a world of one process, which keeps the same script runnable
in a notebook.
"""
from __future__ import annotations

import datetime

from .mpi_backend import MPIBackend
from .nccl_backend import NCCLBackend, nccl_available

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group. Hint: call tc.distributed.init_process_group(\"mpi\") at the start "
                    "of the script and launch it with `mpirun -n 2 python script.py`.")

DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


class _State:
    backend = None  # the active MPIBackend / NCCLBackend


_state = _State()


class _World:
    """`tc.distributed.group.WORLD`: the default group (the only one supported)."""

    def __repr__(self):
        return "<tc.distributed.group.WORLD>"


class group:  # noqa: N801  (torch.distributed.group)
    WORLD = _World()


def is_available() -> bool:
    """True: the distributed package is part of this build (backends may still be missing)."""
    return True


def is_mpi_available() -> bool:
    """True if mpi4py can be imported (install the `dist` extra: mpi4py and mpich)."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_nccl_available() -> bool:
    """True if CuPy's NCCL bindings and a GPU are present."""
    return nccl_available()


def is_gloo_available() -> bool:
    """False: there is no Gloo backend (CPU processes use "mpi")."""
    return False


def is_initialized() -> bool:
    """True between `init_process_group` and `destroy_process_group`."""
    return _state.backend is not None


def _seconds(timeout) -> float:
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the job's default process group (backend "mpi" for CPU processes, "nccl" for GPUs).

    `timeout` (a `datetime.timedelta` or seconds, default 30 minutes) bounds every collective:
    if the other ranks do not arrive in time, the call raises `DistBackendError`.
    """
    if _state.backend is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if init_method not in (None, "env://") or store is not None:
        raise ValueError("init_method and store are not used: processes find each other through the MPI launcher "
                         "(mpirun -n N python script.py)")
    name = (backend or "mpi").lower()
    seconds = _seconds(timeout)
    if name == "mpi":
        if not is_mpi_available():
            raise RuntimeError("Distributed package doesn't have MPI built in. Hint: pip install mpi4py mpich "
                               "(the `dist` extra), then launch with mpirun.")
        impl = MPIBackend(seconds)
    elif name == "nccl":
        impl = NCCLBackend(seconds, device_id)
    elif name == "gloo":
        raise RuntimeError("Distributed package doesn't have Gloo built in. Hint: use backend=\"mpi\" for CPU "
                           "processes (launched with mpirun) or \"nccl\" for GPUs.")
    else:
        raise ValueError(f"Invalid backend: '{backend}'. Use \"mpi\" (CPU processes) or \"nccl\" (GPUs).")
    for given, actual, what in ((world_size, impl.world_size, "world_size"), (rank, impl.rank, "rank")):
        if given not in (-1, None) and given != actual:
            impl.close()
            raise ValueError(f"{what}={given} was given but the MPI launcher started this process with "
                             f"{what}={actual}")
    _state.backend = impl


def destroy_process_group(group=None) -> None:
    """Leave the default process group (call it at the end of the script)."""
    if _state.backend is None:
        raise ValueError(_NOT_INITIALIZED)
    backend, _state.backend = _state.backend, None
    backend.close()


def _backend():
    if _state.backend is None:
        raise ValueError(_NOT_INITIALIZED)
    return _state.backend


def _check_group(group):
    if group is not None and not isinstance(group, _World):
        raise ValueError("only the default group (group=None or group.WORLD) is supported")


def get_rank(group=None) -> int:
    """This process's rank: 0 .. world_size - 1."""
    _check_group(group)
    return _backend().rank


def get_world_size(group=None) -> int:
    """The number of processes in the group."""
    _check_group(group)
    return _backend().world_size


def get_backend(group=None) -> str:
    """The backend's name: "mpi" or "nccl"."""
    _check_group(group)
    return _backend().name
