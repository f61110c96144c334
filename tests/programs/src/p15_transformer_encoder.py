"""Sequence classification with nn.TransformerEncoder (batch_first, eval mode so dropout is off)."""
import torch
import torch.nn as nn

from progutil import randint, seed_params, show


class Classifier(nn.Module):
    def __init__(self, vocab=20, d_model=16, nhead=2, n_classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=32, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, tokens, padding_mask=None):
        h = self.encoder(self.embed(tokens), src_key_padding_mask=padding_mask)
        return self.head(h.mean(dim=1))


model = seed_params(Classifier(), scale=0.2)
model.eval()
tokens, labels = randint(20, 6, 7), randint(3, 6, seed=1)
mask = torch.zeros(6, 7, dtype=torch.bool)
mask[:, 5:] = True
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens, mask), labels)
    loss.backward()
    opt.step()
    show(f"step {step} loss", loss.item())
print(model(tokens).shape, len(model.encoder.layers))
