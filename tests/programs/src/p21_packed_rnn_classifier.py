"""Variable-length sequences: pad_sequence, pack_padded_sequence through an LSTM, classify the last state."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

from progutil import randn, seed_params, show

lengths = [5, 3, 4, 2]
seqs = [randn(n, 3, seed=i) for i, n in enumerate(lengths)]
padded = pad_sequence(seqs, batch_first=True)
labels = torch.tensor([0, 1, 1, 0])
print(padded.shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6, batch_first=True)
        self.fc = nn.Linear(6, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
        return self.fc(h[-1]), unpacked, out_lengths


model = seed_params(Net())
opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
for step in range(5):
    opt.zero_grad()
    logits, unpacked, out_lengths = model(padded, torch.tensor(lengths))
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    opt.step()
    show(f"step {step} loss", loss.item())
print(unpacked.shape, out_lengths.tolist())
