"""Multi-process training, mirroring `torch.distributed`.

Backends: "mpi" (CPU processes, through mpi4py; launch with `mpirun -n N python train.py`) and
"nccl" (one GPU per process, through CuPy's NCCL bindings). Every collective has a timeout, so a
rank that dies makes the others fail with `DistBackendError` instead of hanging.
"""
from .collectives import all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, reduce
from .process_group import (destroy_process_group, get_backend, get_rank, get_world_size, group, init_process_group,
                            is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available)
from .reduce_op import DistBackendError, DistError, ReduceOp
from .work import Work

__all__ = [
    "init_process_group", "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
    "is_nccl_available", "is_gloo_available", "get_rank", "get_world_size", "get_backend", "group",
    "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "barrier", "ReduceOp",
    "DistError", "DistBackendError", "Work",
]
