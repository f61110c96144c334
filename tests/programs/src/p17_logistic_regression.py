"""Binary logistic regression with BCEWithLogitsLoss (pos_weight), accuracy and the recorded graph names."""
import torch
import torch.nn as nn

from progutil import randn, seed_params, show

X = randn(50, 2)
y = ((X[:, 0] - 0.5 * X[:, 1]) > 0).float().unsqueeze(1)
model = seed_params(nn.Linear(2, 1))
criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.5]))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for it in range(10):
    optimizer.zero_grad()
    logits = model(X)
    loss = criterion(logits, y)
    loss.backward()
    optimizer.step()
    show(f"iter {it} loss", loss.item())
print(loss.grad_fn.name(), logits.grad_fn.name(), [f[0].name().split(":")[-1] if f[0] else None for f in logits.grad_fn.next_functions])
acc = ((torch.sigmoid(model(X)) > 0.5).float() == y).float().mean()
show("accuracy", acc)
