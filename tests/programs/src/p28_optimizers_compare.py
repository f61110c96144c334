"""The same problem with several optimizers: Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam."""
import torch
import torch.nn as nn

from progutil import randn, seed_params


def run(make_opt):
    model = seed_params(nn.Linear(4, 2))
    opt = make_opt(model.parameters())
    x, y = randn(16, 4), randn(16, 2, seed=1)
    for _ in range(10):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return round(loss.item(), 5)


print("adam", run(lambda p: torch.optim.Adam(p, lr=0.05, amsgrad=True)))
print("adamw", run(lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1)))
print("rmsprop", run(lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True)))
print("adagrad", run(lambda p: torch.optim.Adagrad(p, lr=0.2, lr_decay=0.01)))
print("adadelta", run(lambda p: torch.optim.Adadelta(p, lr=1.0)))
print("adamax", run(lambda p: torch.optim.Adamax(p, lr=0.05)))
print("nadam", run(lambda p: torch.optim.NAdam(p, lr=0.05)))
print("sgd", run(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-3)))
