"""Factory overloads, out= arguments and sequence indexing as real scripts use them."""
import warnings

import torch

idx = torch.randint(10, size=(4,))
print(idx.shape, idx.dtype, torch.randint(3, 8, (2, 2)).shape, torch.randint(low=0, high=2, size=(3,)).dtype)
print(torch.empty(size=(2, 3)).shape, torch.zeros(size=(2,)), torch.full((2, 2), 7), torch.arange(end=4))
a = torch.arange(6.0).reshape(2, 3)
r = torch.empty(2, 3)
torch.add(a, 1, out=r)
print(r)
m = torch.empty(0)
torch.matmul(a, a.t(), out=m)
print(m)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    s = torch.empty(5)
    torch.sum(a, 0, out=s)
print(s, len(w), str(w[0].message)[:40])
print(a[range(2)], a[:, range(0, 3, 2)], a[[0, 1], [2, 0]], a[(1, 0),])
try:
    torch.add(a, 1, out=torch.empty(2, 3, dtype=torch.long))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.zeros()
except TypeError as e:
    print("TypeError:", e)
print(torch.where(a > 2, a, torch.zeros(1)), torch.clamp(a, 1, 4, out=torch.empty(0)))
