"""The autograd tutorial: requires_grad, backward, grad_fn names, no_grad, detach, retain_grad."""
import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.tensor([[0.1 * i - 0.5 for i in range(3)] for _ in range(5)], requires_grad=True)
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn.name()}")
print(f"Gradient function for loss = {loss.grad_fn.name()}")
loss.backward()
print(w.grad)
print(b.grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad, z.detach().requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out))
print(f"Second call\n{inp.grad}")
a = torch.tensor([2.0, 3.0], requires_grad=True)
c = a * a
c.retain_grad()
(c * 3).sum().backward()
print(c.grad, a.grad, a.is_leaf, c.is_leaf)
