"""`tinygrad_course.optim.lr_scheduler` is a package of scheduler kinds that still offers every name at the
import path PyTorch uses, with PyTorch's class hierarchy."""
import inspect
import pickle

import torch

import tinygrad_course as tc
from tinygrad_course.optim import lr_scheduler
from tinygrad_course.optim.lr_scheduler import base, composite, cyclic, plateau, step_based

KINDS = {
    base: {"LRScheduler", "_LRScheduler"},
    step_based: {"LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
                 "PolynomialLR"},
    cyclic: {"CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"},
    plateau: {"ReduceLROnPlateau"},
    composite: {"SequentialLR", "ChainedScheduler"},
}


def test_all_is_pytorchs_public_scheduler_list():
    theirs = {n for n in dir(torch.optim.lr_scheduler) if not n.startswith("_")
              and inspect.isclass(getattr(torch.optim.lr_scheduler, n))
              and issubclass(getattr(torch.optim.lr_scheduler, n), torch.optim.lr_scheduler.LRScheduler)}
    assert set(lr_scheduler.__all__) == theirs
    assert len(lr_scheduler.__all__) == len(set(lr_scheduler.__all__))


def test_each_kind_defines_its_schedulers_and_the_package_reexports_them():
    found = set()
    for module, names in KINDS.items():
        defined = {n for n, obj in vars(module).items()
                   if inspect.isclass(obj) and obj.__module__ == module.__name__
                   and issubclass(obj, lr_scheduler.LRScheduler) and (not n.startswith("_") or n == "_LRScheduler")}
        assert defined == names, module.__name__
        for name in names:
            assert getattr(lr_scheduler, name) is getattr(module, name)
        found |= names
    assert set(lr_scheduler.__all__) <= found


def test_every_scheduler_subclasses_lrscheduler_like_pytorch():
    for name in lr_scheduler.__all__:
        ours = getattr(lr_scheduler, name)
        theirs = getattr(torch.optim.lr_scheduler, name)
        assert issubclass(ours, lr_scheduler.LRScheduler) == issubclass(theirs, torch.optim.lr_scheduler.LRScheduler)
    assert issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)


def test_scheduler_pickles_through_its_kind_module():
    opt = tc.optim.SGD([tc.zeros(2, requires_grad=True)], lr=0.1)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    back = pickle.loads(pickle.dumps(sched))
    assert type(back) is lr_scheduler.StepLR
    assert back.get_last_lr() == sched.get_last_lr() == [0.05]
