"""BatchNorm1d running statistics in train mode, their use in eval mode, and momentum=None averaging."""
import torch
import torch.nn as nn

from progutil import randn, show

bn = nn.BatchNorm1d(3)
cumulative = nn.BatchNorm1d(3, momentum=None)
for i in range(4):
    x = randn(8, 3, seed=i) * (i + 1) + i
    bn(x)
    cumulative(x)
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
print(cumulative.running_mean)
bn.eval()
y = bn(randn(2, 3, seed=9))
show("eval out sum", y.sum())
bn.train()
z = bn(randn(5, 3, seed=10))
show("train out mean", z.mean())
print(z.std(0, unbiased=False), bn.state_dict().keys())
ln = nn.LayerNorm([3], elementwise_affine=False)
print(ln(randn(2, 3, seed=11)))
