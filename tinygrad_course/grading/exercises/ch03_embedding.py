"""Chapter 03, the GPT's pieces (03.5): checks for the learner's `Embedding` (the table, its initialisation, the
lookup and its summed gradient, `from_pretrained`'s table) and `ModuleList` (registration, indexing, slicing,
append, extend), then a model with a head tied to the table that learns the next token."""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise
from .learner_classes import no_helpers as _no_helpers


def _param_names(module):
    return sorted(name for name, _ in module.named_parameters())


# --- 03.5 -------------------------------------------------------------------------------------------------
def _embedding(t, Embedding):
    t.true(isinstance(Embedding, type) and issubclass(Embedding, tc.nn.Module),
           "Embedding to be a subclass of tc.nn.Module", hint="class Embedding(nn.Module)")
    _no_helpers(t, Embedding, tc.nn.Embedding)
    tc.manual_seed(0)
    emb = Embedding(10, 4)
    t.equal(tuple(emb.weight.shape), (10, 4), what="Embedding(10, 4).weight.shape",
            hint="one row per entry of the table: (num_embeddings, embedding_dim)")
    t.equal(_param_names(emb), ["weight"], what="names in Embedding(10, 4).named_parameters()",
            hint="wrap the table in nn.Parameter, so that the optimizer sees it")
    tc.manual_seed(0)
    drawn = tc.empty(10, 4).normal_().numpy()
    w = emb.weight.detach().numpy()
    t.close(w, drawn, what="Embedding(10, 4).weight after tc.manual_seed(0)", mistakes=[
        mistakes.custom(lambda g, e: np.abs(g).max() <= 1.0, "your weights all lie in [-1, 1]: drawn uniformly, "
                        "not from N(0, 1)", "reset_parameters draws with nn.init.normal_(self.weight)")])
    t.equal((emb.num_embeddings, emb.embedding_dim, emb.padding_idx, emb.max_norm, emb.norm_type),
            (10, 4, None, None, 2.0), what="(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type)",
            hint="keep the arguments as attributes of the same names: nn.Embedding's forward and repr read them")
    padded = Embedding(10, 4, padding_idx=-2)
    t.equal(padded.padding_idx, 8, what="Embedding(10, 4, padding_idx=-2).padding_idx",
            hint="a negative padding_idx counts from the end: store num_embeddings + padding_idx")
    t.close(padded.weight[8], np.zeros(4), what="row 8 of Embedding(10, 4, padding_idx=-2).weight",
            mistakes=[mistakes.custom(lambda g, e: True, "the padding row was not zeroed",
                                      "in reset_parameters, fill the padding_idx row with 0 under tc.no_grad()")])
    error = t.raises(AssertionError, Embedding, 10, 4, padding_idx=10, what="Embedding(10, 4, padding_idx=10)",
                     hint="refuse a padding_idx outside [-num_embeddings, num_embeddings)")
    t.equal(str(error), "Padding_idx must be within num_embeddings", what="the message of that AssertionError",
            hint="PyTorch's wording")
    idx = tc.tensor([[1, 3, 3], [0, 9, 1]])
    out = emb(idx)
    t.close(out, w[idx.numpy()], what="emb(idx) for idx = [[1, 3, 3], [0, 9, 1]]",
            given="emb = Embedding(10, 4) with its own weight", mistakes=[
                mistakes.custom(lambda g, e: g.shape == (2, 3, 10), "your output has one value per entry of the table: "
                                "a one-hot product with the wrong side", "the lookup takes whole rows: weight[idx]")])
    t.true(out.requires_grad, "emb(idx) to be connected to the autograd graph",
           hint="look the rows up with a tensor operation (indexing the weight), not through NumPy")
    out.sum().backward()
    counts = np.bincount(idx.numpy().ravel(), minlength=10).astype(np.float32)[:, None] * np.ones((1, 4))
    t.close(emb.weight.grad, counts, what="emb.weight.grad after emb(idx).sum().backward()", mistakes=[
        mistakes.custom(lambda g, e: np.allclose(g, np.minimum(e, 1)), "a row read twice got one gradient, not two",
                        "the gradients of the rows read add up (the framework's indexing does it)")])
    table = tc.arange(6.0).reshape(3, 2)
    frozen = Embedding(3, 2, _weight=table, _freeze=True)
    t.true(np.array_equal(frozen.weight.detach().numpy(), table.numpy()) and not frozen.weight.requires_grad,
           "Embedding(3, 2, _weight=table, _freeze=True) to use the given table, not requiring grad "
           "(from_pretrained builds it so)", hint="with _weight, self.weight = nn.Parameter(_weight, requires_grad="
                                                  "not _freeze) and no reset_parameters()")
    t.equal(str(Embedding(3, 2, dtype=tc.float64).weight.dtype), "tc.float64",
            what="Embedding(3, 2, dtype=tc.float64).weight.dtype", hint="pass device and dtype on to tc.empty")


def _module_list(t, ModuleList):
    t.true(isinstance(ModuleList, type) and issubclass(ModuleList, tc.nn.Module),
           "ModuleList to be a subclass of tc.nn.Module", hint="class ModuleList(nn.Module)")
    _no_helpers(t, ModuleList, tc.nn.ModuleList)
    first, act = tc.nn.Linear(2, 3), tc.nn.ReLU()
    ml = ModuleList([first, act])
    t.equal(list(ml._modules), ["0", "1"], what="list(ModuleList([a, b])._modules)",
            why="the modules are not registered" if not ml._modules else None,
            hint="register each module with self.add_module(str(len(self)), module): a plain list is invisible to "
                 "parameters()")
    t.equal(_param_names(ml), ["0.bias", "0.weight"], what="names in ModuleList([Linear(2, 3), ReLU()])."
            "named_parameters()")
    t.true(len(ml) == 2 and list(ml) == [first, act], "len(ml) to be 2 and list(ml) the modules in order",
           hint="__len__ counts self._modules; __iter__ is iter(self._modules.values())")
    t.true(ml[0] is first and ml[-1] is act, "ml[0] and ml[-1] to be the first and the last module",
           hint="a negative index counts from the end")
    error = t.raises(IndexError, lambda: ml[2], what="ml[2] of a ModuleList of 2",
                     hint="raise IndexError(f'index {idx} is out of range')")
    t.equal(str(error), "index 2 is out of range", what="the message of ml[2]'s IndexError")
    tail = ml[1:]
    t.true(isinstance(tail, ModuleList) and list(tail._modules) == ["0"] and tail[0] is act,
           "ml[1:] to be a new ModuleList of the same modules, numbered from '0'",
           hint="a slice gives self.__class__(list(self._modules.values())[idx])")
    tanh = tc.nn.Tanh()
    t.true(ml.append(tanh) is ml and list(ml._modules) == ["0", "1", "2"] and ml[2] is tanh,
           "ml.append(module) to register it under '2' and return ml")
    more = [tc.nn.Tanh(), tc.nn.ReLU()]
    t.true(ml.extend(more) is ml and list(ml._modules) == ["0", "1", "2", "3", "4"] and ml[3] is more[0],
           "ml.extend([a, b]) to register them under '3' and '4' and return ml")
    error = t.raises(TypeError, ml.extend, 3, what="ml.extend(3) (not an iterable)",
                     hint="raise TypeError when modules is not an Iterable (collections.abc)")
    t.equal(str(error), "ModuleList.extend should be called with an iterable, but got int",
            what="the message of ml.extend(3)'s TypeError",
            hint="PyTorch's wording, with type(modules).__name__")
    t.true(len(ModuleList()) == 0, "ModuleList() to be empty")


# F.embedding is allowed: since chapter 02b its lookup is the learner's own Embedding op, and PyTorch's
# nn.Embedding.forward is that call
@exercise("03.5", title="Embedding and ModuleList: the GPT's lookup table and list of blocks", points=3)
def embedding_check(t, Embedding, ModuleList):
    _embedding(t, Embedding)
    _module_list(t, ModuleList)

    # the real run: next token = (token + 1) % 10, through blocks kept in the learner's list and a head tied
    # to the learner's table (the logits are the hidden state against every row of the embedding)
    class Tied(tc.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = Embedding(10, 16)
            self.blocks = ModuleList([tc.nn.Sequential(tc.nn.Linear(16, 32), tc.nn.Tanh(), tc.nn.Linear(32, 16))
                                      for _ in range(2)])

        def forward(self, idx):
            h = self.emb(idx)
            for block in self.blocks:
                h = h + block(h)
            return h @ self.emb.weight.T

    tc.manual_seed(0)
    model = Tied()
    t.equal(len(list(model.parameters())), 9, what="parameter tensors of a model with your Embedding and a "
            "ModuleList of two blocks", hint="every module in the list must be registered")
    tokens = tc.randint(0, 10, (8, 12))
    opt = tc.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(60):
        opt.zero_grad()
        loss = tc.nn.functional.cross_entropy(model(tokens).reshape(-1, 10), ((tokens + 1) % 10).reshape(-1))
        loss.backward()
        opt.step()
    t.true(float(loss.item()) < 0.1, f"a model with a head tied to your Embedding to learn the next token "
           f"(loss {float(loss.item()):.3f} after 60 Adam steps, expected below 0.1)",
           hint="does the gradient reach every row of the table? look the rows up with tensor indexing")
