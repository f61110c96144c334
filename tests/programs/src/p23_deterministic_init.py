"""Weight initialisation with model.apply and the deterministic nn.init functions."""
import torch
import torch.nn as nn


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.05)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        nn.init.dirac_(m.weight)
        nn.init.ones_(m.bias)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.constant_(m.weight, 2.0)


model = nn.Sequential(nn.Conv2d(2, 2, 3, padding=1), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
model.apply(init_weights)
for name, p in model.named_parameters():
    print(name, tuple(p.shape), round(p.sum().item(), 4))
eye = torch.empty(3, 5)
nn.init.eye_(eye)
print(eye)
x = torch.arange(32.0).reshape(1, 2, 4, 4) / 10
model.eval()
print(model(x))
print(nn.init.calculate_gain("relu"), nn.init.calculate_gain("leaky_relu", 0.2), nn.init.calculate_gain("tanh"))
