"""Functions run in child processes by test_multiprocessing.py (importable by spawned interpreters)."""
import tinygrad_course as tc


def add_ones(rank, model, times, lock):
    """Add 1 to every parameter `times` times; the lock makes each read-modify-write whole (two processes
    adding at the same moment would otherwise lose one of the additions)."""
    with tc.no_grad():
        for _ in range(times):
            with lock:
                for p in model.parameters():
                    p.add_(1.0)


def hogwild_train(rank, model, steps):
    tc.manual_seed(rank)
    opt = tc.optim.SGD(model.parameters(), lr=0.05)
    w_true = tc.tensor([[1.0, -2.0, 0.5, 3.0]])
    for _ in range(steps):
        x = tc.randn(16, 4)
        y = x @ w_true.t() + 0.3
        opt.zero_grad()
        loss = tc.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()


def double_from_queue(q_in, q_out):
    t = q_in.get()
    t.mul_(2)
    q_out.put(("done", t.is_shared()))


def fail(rank):
    raise ValueError(f"worker {rank} failed on purpose")
