"""Train, checkpoint (epoch, model, optimizer, scheduler), resume in fresh objects, continue identically."""
import io

import torch
import torch.nn as nn

from progutil import randn, seed_params, show


def make():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


x, y = randn(20, 4), randn(20, 2, seed=1)
model, opt, sched = make()
seed_params(model)
buffer = io.BytesIO()
for epoch in range(6):
    if epoch == 3:
        torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                    "optimizer_state_dict": opt.state_dict(), "scheduler": sched.state_dict()}, buffer)
        buffer.seek(0)
        model, opt, sched = make()
        ckpt = torch.load(buffer, weights_only=True)
        model.load_state_dict(ckpt["model_state_dict"])
        opt.load_state_dict(ckpt["optimizer_state_dict"])
        sched.load_state_dict(ckpt["scheduler"])
        print("resumed from epoch", ckpt["epoch"], sorted(ckpt["model_state_dict"].keys()))
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    show(f"epoch {epoch} loss", loss.item())
    print("lr", sched.get_last_lr())
