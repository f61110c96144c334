"""Module introspection: buffers, state_dict keys, named_modules, forward hooks and parameter counts."""
import torch
import torch.nn as nn


class Normalizer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(n))
        self.register_buffer("count", torch.tensor(0), persistent=False)
        self.scale = nn.Parameter(torch.ones(n))

    def forward(self, x):
        with torch.no_grad():
            self.running_mean.mul_(0.9).add_(0.1 * x.mean(0))
            self.count += 1
        return (x - self.running_mean) * self.scale


net = nn.Sequential(Normalizer(3), nn.Linear(3, 2))
with torch.no_grad():
    net[1].weight.copy_(torch.tensor([[0.5, -0.5, 1.0], [1.0, 0.0, -1.0]]))
    net[1].bias.fill_(0.1)
activations = {}
handle = net[1].register_forward_hook(lambda m, inp, out: activations.__setitem__("fc", out.detach()))
x = torch.arange(12.0).reshape(4, 3)
y = net(x)
print(list(net.state_dict().keys()))
print([name for name, _ in net.named_modules()])
print([(n, tuple(b.shape)) for n, b in net.named_buffers()])
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
print(activations["fc"], net[0].count, net[0].running_mean)
handle.remove()
net(x)
print(len(activations), net.training, net.eval().training, net[1])
