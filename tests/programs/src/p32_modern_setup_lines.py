"""The first lines of a modern trainer (device and precision switches, torch.compile, checkpointed blocks,
torch.special, the old CPU autocast spelling), then a short regression run."""
import warnings

import torch
import torch.nn as nn
import torch.utils.checkpoint
from progutil import seed_params, randn, show

torch.set_float32_matmul_precision("high")
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.use_deterministic_algorithms(True)
device = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
print("device:", device, torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled())
print("xpu:", torch.xpu.is_available(), "cpu:", torch.cpu.is_available(), torch.cpu.device_count())


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 12), nn.Linear(12, 6)

    def forward(self, x):
        return x + self.fc2(torch.special.expit(self.fc1(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        for b in self.blocks:
            x = torch.utils.checkpoint.checkpoint(b, x, use_reentrant=False)
        return self.head(x)


model = torch.compile(seed_params(Net(), seed=3).to(device))
x, y = randn(32, 6, seed=1), randn(32, 1, seed=2)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
for step in range(25):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ctx = torch.cpu.amp.autocast(enabled=False)
    with ctx:
        loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 6 == 0:
        show(f"step {step}", loss)
print("layout:", x.layout, "new:", x.new(2, 3).shape, x.new([1, 2]).dtype)
print("ndtr:", [round(v, 5) for v in torch.special.ndtr(torch.tensor([-1.0, 0.0, 2.0])).tolist()])
print("linspace:", torch.linspace(0, 1, steps=5).tolist(), torch.pi > 3)
