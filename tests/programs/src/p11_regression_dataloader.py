"""Linear regression with TensorDataset, DataLoader (no shuffling), MSELoss and SGD with momentum."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from progutil import randn, seed_params, show

X = randn(40, 3)
y = X @ torch.tensor([[2.0], [-1.0], [0.5]]) + 0.1
dataset = TensorDataset(X, y)
loader = DataLoader(dataset, batch_size=8, shuffle=False)
print(len(dataset), len(loader), [t.shape for t in dataset[0]])
model = seed_params(nn.Linear(3, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(5):
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * xb.size(0)
    show(f"epoch {epoch} mse", total / len(dataset))
print([round(v, 3) for v in model.weight.view(-1).tolist()], loss.grad_fn.name())
