"""ReduceLROnPlateau with early stopping and the best weights kept via copy.deepcopy(state_dict())."""
import copy

import torch
import torch.nn as nn

from progutil import randn, seed_params, show

model = seed_params(nn.Sequential(nn.Linear(3, 6), nn.ELU(), nn.Linear(6, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
x_train, y_train = randn(30, 3), randn(30, 1, seed=1)
x_val, y_val = randn(10, 3, seed=2), randn(10, 1, seed=3)
best, best_state, bad_epochs = float("inf"), None, 0
for epoch in range(12):
    model.train()
    opt.zero_grad()
    nn.functional.mse_loss(model(x_train), y_train).backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        val = nn.functional.mse_loss(model(x_val), y_val).item()
    scheduler.step(val)
    show(f"epoch {epoch} val", val)
    print("lr", opt.param_groups[0]["lr"])
    if val < best - 1e-4:
        best, best_state, bad_epochs = val, copy.deepcopy(model.state_dict()), 0
    else:
        bad_epochs += 1
        if bad_epochs >= 3:
            print("early stop at", epoch)
            break
model.load_state_dict(best_state)
with torch.no_grad():
    show("best val", nn.functional.mse_loss(model(x_val), y_val))
