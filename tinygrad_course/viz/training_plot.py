"""Live training plot (loss/accuracy per step and per epoch) with a progress bar, updated in place.

Works in any notebook front end: it re-renders one output through a display handle (no widget
needed), and the last picture stays in the saved notebook. Outside a notebook it prints a line.
"""
import base64
import io
import time
from html import escape


def _in_notebook():
    try:
        from IPython import get_ipython
        shell = get_ipython()
        return shell is not None and hasattr(shell, "kernel")
    except ImportError:
        return False


class TrainingPlot:
    """``plot = TrainingPlot(total_steps=len(loader) * epochs)``; ``plot.step(loss=..., accuracy=...)``
    every step, ``plot.epoch(val_loss=..., val_accuracy=...)`` after each epoch, ``plot.close()``.

    Metric names containing 'acc' are drawn on a second panel; ``every`` seconds between redraws.
    """

    def __init__(self, total_steps=None, title="training", every=0.5):
        self.total, self.title, self.every = total_steps, title, every
        self.steps = {}    # metric -> [(step, value)]
        self.epochs = {}   # metric -> [(step at epoch end, value)]
        self.n_step, self.n_epoch = 0, 0
        self._handle, self._last, self._t0 = None, 0.0, time.perf_counter()

    def step(self, **metrics):
        """Record per-step metrics (floats or 0-d tensors) and redraw if ``every`` seconds passed."""
        self.n_step += 1
        for k, v in metrics.items():
            self.steps.setdefault(k, []).append((self.n_step, float(v)))
        self._maybe_draw()

    def epoch(self, **metrics):
        """Record per-epoch metrics (e.g. validation loss) at the current step, and redraw."""
        self.n_epoch += 1
        for k, v in metrics.items():
            self.epochs.setdefault(k, []).append((self.n_step, float(v)))
        self._maybe_draw(force=True)

    def close(self):
        """Final redraw."""
        self._maybe_draw(force=True)

    def _maybe_draw(self, force=False):
        now = time.perf_counter()
        if not force and now - self._last < self.every:
            return
        self._last = now
        if not _in_notebook():
            print(self._text(), flush=True)
            return
        from IPython.display import display
        if self._handle is None:
            self._handle = display(self, display_id=True)
        else:
            self._handle.update(self)

    def figure(self):
        """A matplotlib Figure with one panel for losses and one for accuracies."""
        from matplotlib.figure import Figure
        acc = [k for k in set(self.steps) | set(self.epochs) if "acc" in k.lower()]
        other = [k for k in set(self.steps) | set(self.epochs) if k not in acc]
        panels = [p for p in (sorted(other), sorted(acc)) if p]
        fig = Figure(figsize=(4.2 * max(len(panels), 1), 3.0), dpi=90)
        for i, names in enumerate(panels):
            ax = fig.add_subplot(1, len(panels), i + 1)
            for k in names:
                if k in self.steps:
                    xs, ys = zip(*self.steps[k])
                    ax.plot(xs, ys, lw=1, label=f"{k} (step)")
                if k in self.epochs:
                    xs, ys = zip(*self.epochs[k])
                    ax.plot(xs, ys, "o-", lw=2, label=f"{k} (epoch)")
            ax.set_xlabel("step")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        return fig

    def _text(self):
        last = ", ".join(f"{k} {v[-1][1]:.4g}" for k, v in sorted({**self.steps, **self.epochs}.items()))
        total = f"/{self.total}" if self.total else ""
        return f"{self.title}: step {self.n_step}{total}, epoch {self.n_epoch}: {last}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        buf = io.BytesIO()
        self.figure().savefig(buf, format="png")
        png = base64.b64encode(buf.getvalue()).decode()
        bar = progress_html(self.n_step, self.total, time.perf_counter() - self._t0)
        html = (f'<div class="tcv-training">{bar}<div style="font-family:monospace">{escape(self._text())}</div>'
                f'<img src="data:image/png;base64,{png}"/></div>')
        return {"text/html": html, "text/plain": self._text()}


def progress_html(done, total, elapsed):
    """An HTML progress bar with count, rate and time left."""
    rate = done / elapsed if elapsed > 0 else 0.0
    if total:
        left = (total - done) / rate if rate > 0 else 0.0
        return (f'<progress value="{done}" max="{total}" style="width:320px"></progress> '
                f'<span style="font-family:monospace">{done}/{total} [{elapsed:.0f}s<{left:.0f}s, {rate:.1f} it/s]</span>')
    return f'<span style="font-family:monospace">{done} it [{elapsed:.0f}s, {rate:.1f} it/s]</span>'


class _Progress:
    def __init__(self, total, desc):
        self.total, self.desc, self.done, self.t0 = total, desc, 0, time.perf_counter()

    def _repr_mimebundle_(self, include=None, exclude=None):
        el = time.perf_counter() - self.t0
        total = f"/{self.total}" if self.total else ""
        return {"text/html": f"<div>{escape(self.desc)} {progress_html(self.done, self.total, el)}</div>",
                "text/plain": f"{self.desc} {self.done}{total}"}


def progress(iterable, total=None, desc="", every=0.2):
    """Wrap an iterable (e.g. a DataLoader) with a progress bar that updates in place."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    bar = _Progress(total, desc)
    handle, last = None, 0.0
    if _in_notebook():
        from IPython.display import display
        handle = display(bar, display_id=True)
    for item in iterable:
        yield item
        bar.done += 1
        now = time.perf_counter()
        if now - last >= every or bar.done == total:
            last = now
            if handle is not None:
                handle.update(bar)
            elif bar.done == total:
                print(bar._repr_mimebundle_()["text/plain"], flush=True)
    if handle is not None:
        handle.update(bar)
