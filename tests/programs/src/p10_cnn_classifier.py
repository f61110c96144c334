"""A LeNet-style CNN: Conv2d, max pooling, dropout (evaluated in eval mode), Adam, accuracy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from progutil import randint, randn, seed_params, show


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(8 * 5 * 5, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


model = seed_params(Net(), scale=0.2)
model.eval()  # dropout off, so both frameworks compute the same numbers
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data, target = randn(12, 1, 14, 14), randint(3, 12)
for step in range(6):
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    show(f"step {step} loss", loss.item())
pred = output.argmax(dim=1, keepdim=True)
print(pred.eq(target.view_as(pred)).sum().item(), output.shape, model.conv1.weight.grad.shape)
