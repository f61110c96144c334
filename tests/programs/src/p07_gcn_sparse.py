"""A two-layer graph convolutional network with a sparse normalised adjacency (torch.sparse.mm)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from progutil import randint, randn, seed_params, show

edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (1, 4), (2, 5), (6, 7), (7, 0)]
n = 8
rows = [i for i, j in edges] + [j for i, j in edges] + list(range(n))
cols = [j for i, j in edges] + [i for i, j in edges] + list(range(n))
deg = torch.zeros(n).index_add_(0, torch.tensor(rows), torch.ones(len(rows)))
vals = torch.tensor([1.0 / float((deg[r] * deg[c]).sqrt()) for r, c in zip(rows, cols)])
adj = torch.sparse_coo_tensor(torch.tensor([rows, cols]), vals, (n, n)).coalesce()
print(adj.is_sparse, adj._nnz(), adj.to_dense().shape)


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features))

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gc1, self.gc2 = GraphConvolution(5, 8), GraphConvolution(8, 3)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(torch.sparse.mm(adj, x @ self.gc2.weight) + self.gc2.bias, dim=1)


model = seed_params(GCN())
features, labels = randn(n, 5), randint(3, n)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
for epoch in range(10):
    optimizer.zero_grad()
    output = model(features, adj)
    loss = F.nll_loss(output, labels)
    loss.backward()
    optimizer.step()
    show(f"epoch {epoch} loss", loss.item())
print((output.argmax(1) == labels).sum().item(), output.shape)
