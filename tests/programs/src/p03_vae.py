"""A small VAE: encoder to mean/log-variance, reparameterisation, BCE + KL loss, Adam."""
import torch
from torch import nn
from torch.nn import functional as F

from progutil import randn, seed_params, show


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc21, self.fc22 = nn.Linear(16, 4), nn.Linear(16, 4)
        self.fc3, self.fc4 = nn.Linear(4, 16), nn.Linear(16, 20)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 20))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 20), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = seed_params(VAE())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.sigmoid(randn(32, 20, seed=1))
for epoch in range(8):
    model.train()
    optimizer.zero_grad()
    recon, mu, logvar = model(data, randn(32, 4, seed=epoch + 10))
    loss = loss_function(recon, data, mu, logvar)
    loss.backward()
    optimizer.step()
    show(f"epoch {epoch} loss", loss.item() / len(data))
with torch.no_grad():
    sample = model.decode(randn(3, 4, seed=99))
print(sample.shape, recon.grad_fn.name())
