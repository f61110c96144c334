"""A catalogue of wrong answers for the exercises 04.6, 06.5, 06.6 and the lab 05b: each realistic mistake
fails its check with a message that names it, the released stub fails, and the solution passes."""
import re

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course.grading import CheckFailed, check
from tinygrad_course.utils.data import DataLoader


def _fails(exercise, *objects, phrase):
    with pytest.raises(CheckFailed) as info:
        check(exercise, *objects)
    assert re.search(phrase, str(info.value)), str(info.value)
    return str(info.value)


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise: write your solution here")


# ---- 04.6 a loader that loads in parallel ----------------------------------------------------------------
def loader_solution(dataset, batch_size, num_workers, device):
    parallel = num_workers > 0
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers,
                      pin_memory=tc.device(device).type == "cuda", persistent_workers=parallel,
                      prefetch_factor=4 if parallel else None)


def loader_always_pinned(dataset, batch_size, num_workers, device):
    return DataLoader(dataset, batch_size=batch_size, num_workers=num_workers, pin_memory=True,
                      persistent_workers=num_workers > 0, prefetch_factor=4 if num_workers else None)


def loader_always_persistent(dataset, batch_size, num_workers, device):
    return DataLoader(dataset, batch_size=batch_size, num_workers=num_workers, prefetch_factor=4 if num_workers else None,
                      pin_memory=str(device).startswith("cuda"), persistent_workers=True)


def loader_shuffled(dataset, batch_size, num_workers, device):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=num_workers,
                      pin_memory=str(device).startswith("cuda"), persistent_workers=num_workers > 0,
                      prefetch_factor=4 if num_workers else None)


def loader_restarting_workers(dataset, batch_size, num_workers, device):
    return DataLoader(dataset, batch_size=batch_size, num_workers=num_workers, prefetch_factor=4 if num_workers else None,
                      pin_memory=str(device).startswith("cuda"))


def loader_string_device(dataset, batch_size, num_workers, device):
    return DataLoader(dataset, batch_size=batch_size, num_workers=num_workers, pin_memory=device == "cuda",
                      persistent_workers=num_workers > 0, prefetch_factor=4 if num_workers else None)


def test_04_6_solution_passes():
    check("04.6", loader_solution)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("wrong, phrase", [
    (loader_always_pinned, r"loader\.pin_memory for make_parallel_loader\(.*device='cpu'\).*expected False, got True"),
    (loader_always_persistent, r"num_workers=0.*raised ValueError: persistent_workers option needs num_workers > 0"),
    (loader_shuffled, r"sample indices of each batch.*expected \[\[0, 1, 2"),
    (loader_restarting_workers, r"loader\.persistent_workers.*expected True, got False"),
    (loader_string_device, r"pin_memory for device=device\(type='cuda', index=0\).*expected True, got False"),
    (_stub, r"not implemented yet"),
])
def test_04_6_wrong_answers_are_named(wrong, phrase):
    _fails("04.6", wrong, phrase=phrase)
