"""An LSTM language model trained briefly, saved whole with torch.save(model) and loaded back."""
import os
import tempfile

import torch
import torch.nn as nn

from progutil import randint, seed_params, show


class RNNModel(nn.Module):
    def __init__(self, ntoken=12, ninp=8, nhid=10):
        super().__init__()
        self.drop = nn.Dropout(0.0)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, 2)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(2, bsz, self.nhid), weight.new_zeros(2, bsz, self.nhid))


def repackage_hidden(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)


model = seed_params(RNNModel())
criterion = nn.NLLLoss()
data = randint(12, 21, 3)
hidden = model.init_hidden(3)
for i in range(0, 20, 5):
    inp, target = data[i:i + 5], data[i + 1:i + 6]
    hidden = repackage_hidden(hidden)
    model.zero_grad()
    output, hidden = model(inp, hidden)
    loss = criterion(torch.log_softmax(output, -1).view(-1, 12), target.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-0.5)
    show(f"batch {i} loss", loss.item())
path = os.path.join(tempfile.mkdtemp(), "model.pt")
with open(path, "wb") as f:
    torch.save(model, f)
with open(path, "rb") as f:
    loaded = torch.load(f, weights_only=False)
print(type(loaded).__name__, loaded.rnn)
model.eval()
loaded.eval()
h = loaded.init_hidden(3)
a, _ = model(data[:5], h)
b, _ = loaded(data[:5], h)
print(a.shape, torch.allclose(a, b))
