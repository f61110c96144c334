"""tc.multiprocessing: shared memory across processes, Hogwild training, queues and spawn."""
import numpy as np
import pytest

import tinygrad_course as tc
import tinygrad_course.multiprocessing as mp

from . import mp_workers


def test_share_memory_moves_storage_and_keeps_values():
    t = tc.arange(6.0).reshape(2, 3)
    before = t.numpy().copy()
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    np.testing.assert_array_equal(t.numpy(), before)
    v = t[1]
    assert v.is_shared()
    m = tc.nn.Linear(3, 2)
    assert m.share_memory() is m
    assert all(p.is_shared() and isinstance(p, tc.nn.Parameter) for p in m.parameters())


def test_two_processes_update_the_same_parameters():
    model = tc.nn.Linear(3, 1)
    start = [p.detach().clone() for p in model.parameters()]
    model.share_memory()
    ctx = mp.get_context("spawn")
    lock = ctx.Lock()
    procs = [ctx.Process(target=mp_workers.add_ones, args=(i, model, 5, lock)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for p, s in zip(model.parameters(), start):
        np.testing.assert_allclose(p.detach().numpy(), s.numpy() + 10.0, rtol=1e-6)


def test_hogwild_training_with_spawn_lowers_the_loss():
    tc.manual_seed(0)
    model = tc.nn.Linear(4, 1)
    model.share_memory()
    x = tc.randn(64, 4)
    y = x @ tc.tensor([[1.0, -2.0, 0.5, 3.0]]).t() + 0.3
    before = tc.nn.functional.mse_loss(model(x), y).item()
    mp.spawn(mp_workers.hogwild_train, args=(model, 40), nprocs=2)
    after = tc.nn.functional.mse_loss(model(x), y).item()
    assert after < 0.05 * before


def test_queue_passes_shared_tensors_by_reference_and_others_by_value():
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    for shared in (True, False):
        t = tc.ones(4)
        if shared:
            t.share_memory_()
        p = ctx.Process(target=mp_workers.double_from_queue, args=(q_in, q_out))
        p.start()
        q_in.put(t)
        assert q_out.get(timeout=60) == ("done", shared)
        p.join(60)
        np.testing.assert_array_equal(t.numpy(), np.full(4, 2.0 if shared else 1.0))


def test_spawn_reports_a_failing_process():
    with pytest.raises(mp.ProcessRaisedException, match="worker 1 failed on purpose|worker 0 failed on purpose"):
        mp.spawn(mp_workers.fail, nprocs=2)


def test_namespace_mirrors_torch_multiprocessing():
    torch_mp = pytest.importorskip("torch.multiprocessing")
    for name in ("Process", "Queue", "SimpleQueue", "spawn", "get_context", "set_start_method", "cpu_count",
                 "get_sharing_strategy", "set_sharing_strategy", "Pool", "Event", "Lock"):
        assert hasattr(mp, name) and hasattr(torch_mp, name), name
