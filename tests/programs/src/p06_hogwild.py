"""Hogwild training: the model's parameters live in shared memory and two processes update them."""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

from progutil import randn, seed_params

W_TRUE = [[1.0, -2.0, 0.5, 3.0]]


def train(rank, model):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = randn(32, 4, seed=rank)
    y = x @ torch.tensor(W_TRUE).t()
    for _ in range(30):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    model = seed_params(nn.Linear(4, 1))
    model.share_memory()
    x = randn(64, 4, seed=7)
    y = x @ torch.tensor(W_TRUE).t()
    before = F.mse_loss(model(x), y).item()
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    after = F.mse_loss(model(x), y).item()
    print("exit codes", [p.exitcode for p in processes])
    print("loss fell tenfold:", after < before / 10, model.weight.shape)
