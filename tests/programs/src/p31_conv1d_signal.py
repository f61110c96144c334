"""A 1-D CNN over signals: Conv1d, AvgPool1d, AdaptiveAvgPool1d, GELU, with a OneCycle schedule."""
import torch
import torch.nn as nn

from progutil import randint, randn, seed_params, show

model = seed_params(nn.Sequential(
    nn.Conv1d(2, 4, kernel_size=5, padding=2), nn.GELU(), nn.AvgPool1d(2),
    nn.Conv1d(4, 6, kernel_size=3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(6, 3)),
    scale=0.3)
x, y = randn(8, 2, 32), randint(3, 8)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=6)
for step in range(6):
    opt.zero_grad()
    out = model(x)
    loss = nn.functional.cross_entropy(out, y)
    loss.backward()
    opt.step()
    sched.step()
    show(f"step {step} loss", loss.item())
print(out.shape, [tuple(m.weight.shape) for m in model if isinstance(m, nn.Conv1d)])
