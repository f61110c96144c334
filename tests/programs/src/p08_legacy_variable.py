"""An old tutorial: Variable, FloatTensor constructors, .data updates and manual gradient descent."""
import numpy as np
import torch
from torch.autograd import Variable

x_np = np.linspace(-1, 1, 20, dtype=np.float32).reshape(20, 1)
x = Variable(torch.FloatTensor(x_np))
y = Variable(torch.FloatTensor(3 * x_np + 0.5), requires_grad=False)
w = Variable(torch.FloatTensor([[0.1]]), requires_grad=True)
b = Variable(torch.zeros(1), requires_grad=True)
print(x.type(), w.type(), isinstance(w, Variable), torch.LongTensor([1, 2]).dtype)
for t in range(30):
    y_pred = x.mm(w) + b
    loss = (y_pred - y).pow(2).sum()
    if t % 5 == 0:
        print(t, round(loss.item(), 4))
    loss.backward()
    w.data -= 0.01 * w.grad.data
    b.data -= 0.01 * b.grad.data
    w.grad.data.zero_()
    b.grad.data.zero_()
print(w.data.type(torch.DoubleTensor).dtype, round(float(w), 3), round(float(b), 3))
print(torch.ByteTensor([1, 0, 1]), torch.IntTensor(2, 3).shape, y.data.type("torch.LongTensor")[:3].view(-1))
