"""Tutorial-style classifier: device selection, an MLP, CrossEntropyLoss, SGD, accuracy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from progutil import randn, randint, seed_params, show

device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                               nn.Linear(32, 4))

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


model = seed_params(NeuralNetwork()).to(device)
print(model)
X, y = randn(64, 4, 4), randint(4, 64)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    model.train()
    for i in range(0, 64, 16):
        pred = model(X[i:i + 16].to(device))
        loss = loss_fn(pred, y[i:i + 16].to(device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    with torch.no_grad():
        logits = model(X)
        correct = (logits.argmax(1) == y).type(torch.float).sum().item()
    show(f"epoch {epoch} loss", loss.item())
    print(f"accuracy {correct / 64:.4f}", logits.shape, F.softmax(logits, dim=1)[0].sum().item() > 0.99)
