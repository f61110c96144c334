"""The tensors tutorial: creation, attributes, indexing, joining, arithmetic, in-place ops, NumPy bridge."""
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
x_np = torch.from_numpy(np.array(data))
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
shape = (2, 3,)
print(torch.ones(shape), torch.zeros(shape))
tensor = torch.arange(12.0).reshape(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.shape)
y1 = tensor @ tensor.T
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y1, torch.equal(y1, y3))
z1 = tensor * tensor
agg = tensor.sum()
print(z1, agg.item(), type(agg.item()).__name__)
tensor.add_(5)
print(tensor)
t = torch.ones(5)
n = t.numpy()
t.add_(1)
print(f"t: {t}", f"n: {n}")
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t}")
print(x_np.dtype, x_data[range(2)], x_data[[1, 0]].tolist())
