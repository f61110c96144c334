"""A GRU encoder-decoder with teacher forcing and greedy decoding."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from progutil import randint, seed_params, show

SOS, V, H = 0, 10, 12


class EncoderRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, H)
        self.gru = nn.GRU(H, H, batch_first=True)

    def forward(self, input):
        return self.gru(self.embedding(input))


class DecoderRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, H)
        self.gru = nn.GRU(H, H, batch_first=True)
        self.out = nn.Linear(H, V)

    def forward(self, encoder_hidden, target=None, steps=5):
        batch = encoder_hidden.size(1)
        decoder_input = torch.empty(batch, 1, dtype=torch.long).fill_(SOS)
        hidden, outputs = encoder_hidden, []
        for i in range(steps):
            output, hidden = self.gru(F.relu(self.embedding(decoder_input)), hidden)
            output = self.out(output)
            outputs.append(output)
            if target is not None:
                decoder_input = target[:, i].unsqueeze(1)
            else:
                _, topi = output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        return F.log_softmax(torch.cat(outputs, dim=1), dim=-1), hidden


encoder, decoder = seed_params(EncoderRNN(), 1), seed_params(DecoderRNN(), 2)
src, tgt = randint(V, 4, 6), randint(V, 4, 5, seed=3)
params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(6):
    optimizer.zero_grad()
    _, enc_hidden = encoder(src)
    out, _ = decoder(enc_hidden, tgt)
    loss = criterion(out.view(-1, V), tgt.view(-1))
    loss.backward()
    optimizer.step()
    show(f"epoch {epoch} loss", loss.item())
with torch.no_grad():
    out, _ = decoder(encoder(src)[1])
print(out.shape, out.argmax(-1).shape)
