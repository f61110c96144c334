"""SGD with Nesterov momentum, gradient norm and value clipping, and a deep MLP with residual connections."""
import torch
import torch.nn as nn

from progutil import randn, seed_params, show


class ResidualMLP(nn.Module):
    def __init__(self, width=8, depth=4):
        super().__init__()
        self.inp = nn.Linear(3, width)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.ReLU())
                                    for _ in range(depth))
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


model = seed_params(ResidualMLP(), scale=0.5)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
x, y = randn(24, 3), randn(24, 1, seed=5)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.smooth_l1_loss(model(x), y)
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.2)
    opt.step()
    show(f"step {step} loss", loss.item())
    show(f"step {step} grad norm", total_norm)
print(loss.grad_fn.name())
