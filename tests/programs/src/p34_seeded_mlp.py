"""A seeded MLP as tutorials write it: torch.manual_seed, default layer initialisation, dropout, a
shuffling DataLoader and random_split; its first numbers come from the random stream alone."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
print("rand", torch.rand(3))
print("randn", torch.randn(2, 3))
print("randint", torch.randint(0, 10, (6,)).tolist())
print("randperm", torch.randperm(8).tolist())

X = torch.randn(120, 5)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).long()
train, val = random_split(TensorDataset(X, y), [100, 20])
print("val indices", val.indices[:8])

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
print("first weight row", [round(v, 6) for v in model[0].weight[0].tolist()])
print("last bias", [round(v, 6) for v in model[3].bias.tolist()])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(train, batch_size=25, shuffle=True)
for epoch in range(2):
    for xb, yb in loader:
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} first label {yb[0].item()} loss {loss.item():.4f}")
