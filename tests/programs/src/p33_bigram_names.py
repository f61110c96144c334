"""A character bigram model in the style of a well-known lecture: counts, normalised rows, and names
sampled from a Generator seeded with 2147483647. Every printed number comes from the random stream."""
import torch

words = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "elizabeth", "mila", "ella", "avery", "sofia", "camila", "aria", "scarlett"]
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)

N = torch.zeros((V, V), dtype=torch.int32)
for w in words:
    cs = ["."] + list(w) + ["."]
    for a, b in zip(cs, cs[1:]):
        N[stoi[a], stoi[b]] += 1

g = torch.Generator().manual_seed(2147483647)
p = torch.rand(3, generator=g)
p = p / p.sum()
print("p", p)
print("draws", torch.multinomial(p, num_samples=20, replacement=True, generator=g).tolist())

P = (N + 1).float()
P /= P.sum(1, keepdim=True)
g = torch.Generator().manual_seed(2147483647)
for _ in range(8):
    out, ix = [], 0
    while True:
        ix = torch.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
        if ix == 0:
            break
        out.append(itos[ix])
    print("".join(out))

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((V, V), generator=g, requires_grad=True)
print("W[0, :5]", W[0, :5].tolist())
print("W sum", round(W.sum().item(), 3))
