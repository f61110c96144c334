"""Learning-rate schedules: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, OneCycleLR, LambdaLR."""
import torch
from torch.optim import lr_scheduler


def trace(make, steps=8):
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = make(opt)
    lrs = []
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(round(sched.get_last_lr()[0], 6))
    return lrs


print("step", trace(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5)))
print("multistep", trace(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.1)))
print("exp", trace(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9)))
print("cosine", trace(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=6, eta_min=0.01)))
print("onecycle", trace(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10)))
print("lambda", trace(lambda o: lr_scheduler.LambdaLR(o, lambda epoch: 0.95 ** epoch)))
print("warm", trace(lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3)))
print("linear", trace(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4)))
