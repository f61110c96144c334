"""Components a learner writes that the framework does not call itself but the course's runs do: saving
and restoring a checkpoint (chapter 07). Each is a `seams.component`, so the milestone runs whatever is
installed under its name -- the learner's function, or this reference."""
from __future__ import annotations

from ..seams import component
from ..serialization import load, save


@component("save_checkpoint")
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    """Save model, optimizer and scheduler state plus the epoch to `path` (one dict, `tc.save`)."""
    save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
          "epoch": epoch}, path)


@component("load_checkpoint")
def load_checkpoint(path, model, optimizer, scheduler):
    """Restore what `save_checkpoint` saved into the given objects; return the saved epoch."""
    checkpoint = load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return checkpoint["epoch"]
