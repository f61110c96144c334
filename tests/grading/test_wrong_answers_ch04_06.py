"""A catalogue of wrong answers for the exercises 04.6, 06.5 and 06.6: each realistic mistake fails its check
with a message that names it, the released stub fails, and the solution passes (the lab's are in
test_wrong_answers_lab05b.py)."""
import re

import pytest

import tinygrad_course as tc
from tinygrad_course.grading import check
from tinygrad_course.utils.data import DataLoader

from .wrong_answers import both_failures, unwritten_stub


def _fails(exercise, *objects, phrase):
    """The mistake named (and, from the second failure on, the hint), as the staged feedback gives them."""
    message = both_failures(exercise, *objects)
    assert re.search(phrase, message, re.DOTALL), message
    return message


_stub = unwritten_stub


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



# ---- 04.7 collate samples into a batch -------------------------------------------------------------------
def _collate(stack=tc.stack, float_dtype=tc.float64, fields=lambda batch: zip(*batch), container=list):
    def collate(batch):
        first = batch[0]
        if isinstance(first, tc.Tensor):
            return stack(batch, 0)
        if isinstance(first, int):
            return tc.tensor(batch)
        if isinstance(first, float):
            return tc.tensor(batch, dtype=float_dtype)
        if isinstance(first, dict):
            return {key: collate([sample[key] for sample in batch]) for key in first}
        return container(collate(list(field)) for field in fields(batch))
    return collate


WRONG_COLLATES = [
    (_collate(stack=tc.cat), r"collate\(3 samples .*\)\[0\]: expected shape \(3, 2\), got \(6,\): the samples were "
                             r"joined end to end, without a new batch dimension\n  hint: tc\.cat joins"),
    (_collate(float_dtype=tc.float32), r"the dtype of collate\(2 floats\).*float64.*float32.*double precision"),
    (_collate(container=tuple), r"expected collate\(3 samples.*to be a list \(got \(tensor\(3, 2\) float32, tensor\(3,\) int64\)\).*hint: a tuple of fields becomes a list"),
    (_collate(fields=lambda batch: batch), r"collate\(3 samples .*\): raised \w+Error.*hint: transpose first"),
    (_stub, r"not implemented yet"),
]


def test_04_7_solution_passes():
    check("04.7", _collate())


@pytest.mark.parametrize("wrong, phrase", WRONG_COLLATES)
def test_04_7_wrong_answers_are_named(wrong, phrase):
    _fails("04.7", wrong, phrase=phrase)


def test_04_7_forbids_the_framework_collate():
    _fails("04.7", lambda batch: tc.utils.data.default_collate(batch), phrase=r"default_collate")

# ---- 06.5 what memory_allocated and empty_cache report ---------------------------------------------------
def memory_solution(fn, cuda=tc.cuda):
    before = cuda.memory_allocated()
    result = fn()
    kept = cuda.memory_allocated() - before
    del result
    cached = cuda.memory_reserved() - cuda.memory_allocated()
    cuda.empty_cache()
    return kept, cached


def memory_absolute(fn, cuda=tc.cuda):
    result = fn()
    kept = cuda.memory_allocated()
    del result
    cached = cuda.memory_reserved() - cuda.memory_allocated()
    cuda.empty_cache()
    return kept, cached


def memory_emptied_first(fn, cuda=tc.cuda):
    before = cuda.memory_allocated()
    result = fn()
    kept = cuda.memory_allocated() - before
    del result
    cuda.empty_cache()
    return kept, cuda.memory_reserved() - cuda.memory_allocated()


def memory_result_alive(fn, cuda=tc.cuda):
    before = cuda.memory_allocated()
    result = fn()  # noqa: F841 -- the mistake: the result stays referenced while the cache is read
    kept = cuda.memory_allocated() - before
    cached = cuda.memory_reserved() - cuda.memory_allocated()
    cuda.empty_cache()
    return kept, cached


def memory_reserved_as_cache(fn, cuda=tc.cuda):
    before = cuda.memory_allocated()
    result = fn()
    kept = cuda.memory_allocated() - before
    del result
    cached = cuda.memory_reserved()
    cuda.empty_cache()
    return kept, cached


def memory_never_emptied(fn, cuda=tc.cuda):
    before = cuda.memory_allocated()
    result = fn()
    kept = cuda.memory_allocated() - before
    del result
    return kept, cuda.memory_reserved() - cuda.memory_allocated()


def test_06_5_solution_passes():
    check("06.5", memory_solution)


@pytest.mark.parametrize("wrong, phrase", [
    (memory_absolute, r"kept for memory_report.*expected 1000, got 1500\n  hint: that is memory_allocated\(\) after the call"),
    (memory_emptied_first, r"cached .*expected 3000, got 0\n  hint: read the cache before cuda\.empty_cache\(\)"),
    (memory_result_alive, r"cached .*expected 3000, got 2000\n  hint: delete the result first"),
    (memory_reserved_as_cache, r"cached .*expected 3000, got 3500\n  hint: cached memory is reserved minus allocated"),
    (memory_never_emptied, r"memory_reserved\(\) after memory_report.*expected 500, got 3500\n  hint: finish with cuda\.empty_cache"),
    (_stub, r"not implemented yet"),
])
def test_06_5_wrong_answers_are_named(wrong, phrase):
    _fails("06.5", wrong, phrase=phrase)


def test_06_5_runs_on_the_strict_cupy_stand_in():
    """On a machine that looks like it has a GPU (the strict CuPy stand-in) the check takes its GPU branch,
    passes the solution and still names the mistakes."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import strict_cupy  # lazy: lives in tests/, importable once the path is set

    from tinygrad_course import _backend

    saved = _backend._cupy, _backend._cupy_checked
    strict_cupy.install()
    try:
        assert tc.cuda.is_available()
        kept, cached = memory_solution(lambda: tc.zeros(4, device="cuda"))
        assert (kept, cached) == (0, 0)  # the stand-in's pool reports no bytes; the fake allocator does the grading
        check("06.5", memory_solution)
        _fails("06.5", memory_absolute, phrase=r"expected 1000, got 1500")
    finally:
        _backend._cupy, _backend._cupy_checked = saved


# ---- 06.6 one loss-scaled step, by hand ------------------------------------------------------------------
def scaled_solution(params, loss, optimizer, scale):
    (loss * scale).backward()
    found_inf = False
    for p in params:
        if p.grad is not None:
            p.grad = p.grad / scale
            found_inf = found_inf or not bool(tc.isfinite(p.grad).all())
    if not found_inf:
        optimizer.step()
    return found_inf


def scaled_not_unscaled(params, loss, optimizer, scale):
    (loss * scale).backward()
    found_inf = any(not bool(tc.isfinite(p.grad).all()) for p in params)
    if not found_inf:
        optimizer.step()
    return found_inf


def scaled_multiplied_back(params, loss, optimizer, scale):
    (loss * scale).backward()
    for p in params:
        p.grad = p.grad * scale
    found_inf = any(not bool(tc.isfinite(p.grad).all()) for p in params)
    if not found_inf:
        optimizer.step()
    return found_inf


def scaled_never_skips(params, loss, optimizer, scale):
    (loss * scale).backward()
    for p in params:
        p.grad = p.grad / scale
    optimizer.step()
    return any(not bool(tc.isfinite(p.grad).all()) for p in params)


def scaled_no_inf_check(params, loss, optimizer, scale):
    (loss * scale).backward()
    for p in params:
        p.grad = p.grad / scale
    optimizer.step()
    return False


def test_06_6_solution_passes():
    check("06.6", scaled_solution)


@pytest.mark.parametrize("wrong, phrase", [
    (scaled_not_unscaled, r"p\.grad after scaled_step.*what went wrong: the gradient is still scaled.*hint: divide each p\.grad"),
    (scaled_multiplied_back, r"p\.grad after scaled_step.*divide the gradients by it \(not multiply\)"),
    (scaled_never_skips, r"p after scaled_step.*step 3\).*inf, and the step was taken anyway"),
    (scaled_no_inf_check, r"found_inf returned by .*step 3\): expected True, got False\n  hint: check every gradient"),
    (_stub, r"not implemented yet"),
])
def test_06_6_wrong_answers_are_named(wrong, phrase):
    _fails("06.6", wrong, phrase=phrase)
