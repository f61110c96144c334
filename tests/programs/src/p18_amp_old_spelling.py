"""Mixed-precision boilerplate with the old torch.cuda.amp spelling, disabled on a CPU-only machine."""
import warnings

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn

from progutil import randn, seed_params, show

warnings.filterwarnings("ignore")
use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
print(device, torch.backends.mps.is_available(), cudnn.benchmark)
model = seed_params(nn.Sequential(nn.Linear(6, 12), nn.SiLU(), nn.Linear(12, 1))).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scaler = torch.cuda.amp.GradScaler(enabled=use_cuda)
x, y = randn(16, 6), randn(16, 1, seed=1)
for step in range(5):
    optimizer.zero_grad()
    with torch.cuda.amp.autocast(enabled=use_cuda):
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    show(f"step {step} loss", loss.item())
print(x.is_cuda, x.is_mps, x.is_xpu, loss.dtype)
