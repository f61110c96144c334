"""Text classification: Embedding, mean pooling over a padding mask, dropout in eval, Adagrad."""
import torch
import torch.nn as nn

from progutil import randint, seed_params, show


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size=30, embed_dim=8, num_class=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(embed_dim, num_class)

    def forward(self, text):
        mask = (text != 0).unsqueeze(-1).float()
        emb = self.embedding(text) * mask
        pooled = emb.sum(1) / mask.sum(1).clamp(min=1)
        return self.fc(self.dropout(pooled))


model = seed_params(TextClassificationModel())
with torch.no_grad():
    model.embedding.weight[0].zero_()
text, label = randint(30, 10, 6), randint(4, 10, seed=1)
text[:, 4:] = 0
model.eval()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.3)
for epoch in range(6):
    optimizer.zero_grad()
    predicted_label = model(text)
    loss = nn.CrossEntropyLoss()(predicted_label, label)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
    show(f"epoch {epoch} loss", loss.item())
print((predicted_label.argmax(1) == label).sum().item(), model.embedding.weight.grad[0].abs().sum().item())
