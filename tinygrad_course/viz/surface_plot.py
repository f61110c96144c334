"""2-D loss surfaces and optimizer trajectories (chapter 04b: SGD vs momentum vs Adam)."""
import numpy as np

from ..factories import tensor as _tensor
from ._tensors import to_numpy


def _evaluate(fn, X, Y):
    try:
        Z = np.asarray(fn(X, Y), dtype=float)
        if Z.shape == X.shape:
            return Z
    except Exception:
        pass
    return np.array([[float(fn(x, y)) for x, y in zip(rx, ry)] for rx, ry in zip(X, Y)])


def loss_surface(fn, xlim=(-2, 2), ylim=(-2, 2), paths=None, resolution=120, levels=30, log=False,
                 title=None):
    """Contour plot of ``fn(x, y)`` with optimizer trajectories drawn on top.

    fn: works on NumPy arrays (vectorised) or scalars. paths: ``{label: array of shape (steps, 2)}``
    (e.g. from :func:`optimizer_path`). log: contour levels on log(loss). Returns a matplotlib Figure.
    """
    from matplotlib.figure import Figure
    xs = np.linspace(*xlim, resolution)
    ys = np.linspace(*ylim, resolution)
    X, Y = np.meshgrid(xs, ys)
    Z = _evaluate(fn, X, Y)
    fig = Figure(figsize=(5.5, 4.5), dpi=90)
    ax = fig.add_subplot(1, 1, 1)
    shown = np.log(Z - Z.min() + 1e-3) if log else Z
    cs = ax.contourf(X, Y, shown, levels=levels, cmap="viridis", alpha=0.85)
    ax.contour(X, Y, shown, levels=levels, colors="k", linewidths=0.3, alpha=0.4)
    fig.colorbar(cs, ax=ax, label="log loss" if log else "loss")
    for label, path in (paths or {}).items():
        p = np.asarray(path, dtype=float)
        ax.plot(p[:, 0], p[:, 1], "o-", ms=2.5, lw=1.5, label=f"{label} ({len(p) - 1} steps)")
        ax.plot(p[-1, 0], p[-1, 1], "*", ms=10, color=ax.lines[-1].get_color())
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    if paths:
        ax.legend(fontsize=8, loc="upper right")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def optimizer_path(fn, make_optimizer, start, steps=50, framework=None):
    """Run an optimizer on a 2-D point and return the visited points, shape (steps + 1, 2).

    fn(x, y) -> scalar tensor, written with framework ops. make_optimizer: ``lambda params:
    tc.optim.SGD(params, lr=0.1)``. framework: the tensor module (default tinygrad_course).
    """
    make_tensor = _tensor if framework is None else framework.tensor
    p = make_tensor(np.asarray(start, dtype=np.float32), requires_grad=True)
    opt = make_optimizer([p])
    points = [to_numpy(p).copy()]
    for _ in range(steps):
        opt.zero_grad()
        loss = fn(p[0], p[1])
        loss.backward()
        opt.step()
        points.append(to_numpy(p).copy())
    return np.array(points)
