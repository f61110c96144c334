"""The loss functions a model zoo uses, with their values, gradients and recorded node names."""
import torch
import torch.nn as nn

from progutil import randint, randn

x = randn(4, 5).requires_grad_()
t = torch.sigmoid(randn(4, 5, seed=1))
cls = randint(5, 4, seed=2)
losses = {
    "mse": nn.MSELoss()(x, t), "l1": nn.L1Loss()(x, t), "smooth_l1": nn.SmoothL1Loss(beta=0.5)(x, t),
    "huber": nn.HuberLoss(delta=0.5)(x, t), "bce": nn.BCELoss()(torch.sigmoid(x), t),
    "bce_logits": nn.BCEWithLogitsLoss()(x, t), "ce": nn.CrossEntropyLoss()(x, cls),
    "nll": nn.NLLLoss()(torch.log_softmax(x, 1), cls), "kl": nn.KLDivLoss(reduction="batchmean")(
        torch.log_softmax(x, 1), torch.softmax(t, 1)),
    "soft_margin": nn.SoftMarginLoss()(x, (t > 0.5).float() * 2 - 1),
    "multi_margin": nn.MultiMarginLoss()(x, cls), "cosine": nn.CosineEmbeddingLoss()(x, t, torch.ones(4)),
    "poisson": nn.PoissonNLLLoss()(x, t), "gauss": nn.GaussianNLLLoss()(x, t, torch.ones(4, 5)),
}
for name, loss in losses.items():
    (g,) = torch.autograd.grad(loss, x)
    print(f"{name:12s} {loss.item():.6f} {g.abs().sum().item():.6f} {loss.grad_fn.name()}")
smoothed = nn.CrossEntropyLoss(label_smoothing=0.1)(x, cls)
print(f"ce smoothed  {smoothed.item():.6f} {torch.autograd.grad(smoothed, x)[0].abs().sum().item():.6f}")
