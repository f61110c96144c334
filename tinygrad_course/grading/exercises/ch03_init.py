"""Chapter 03, nn.init (03.4): checks for the learner's `_calculate_fan_in_and_fan_out`, `uniform_`, `normal_`,
`zeros_`, `kaiming_uniform_` and `xavier_uniform_` in PyTorch's shape (each draw compared with the tensor's own
after the same seed, nn.Linear's default weight among them) and the `init_weights` that `model.apply` runs."""
import numpy as np

import tinygrad_course as tc

from .. import mistakes
from ..registry import exercise


# --- 03.4 -------------------------------------------------------------------------------------------------


def _in_place(t, name, fn, tensor, *args):
    """Run the learner's initialiser on a parameter that requires grad; it must fill it in place and return it."""
    try:
        out = fn(tensor, *args)
    except RuntimeError as error:
        if "leaf" in str(error) or "in-place" in str(error):
            t.fail(f"{name}(nn.Parameter(...))", f"changing a parameter in place raised: {error}",
                   hint="write the tensor's in-place op inside `with tc.no_grad():` (a parameter requires grad)")
        raise
    t.true(out is tensor, f"{name}(tensor, ...) to return the tensor it filled (in place), as nn.init's do",
           hint="return the result of the tensor's in-place method (tensor.uniform_(...) returns tensor)")
    return out


def _fan(t, fan):
    t.equal(tuple(fan(tc.empty(400, 1000))), (1000, 400), what="_calculate_fan_in_and_fan_out(tc.empty(400, 1000))",
            why="fan_in and fan_out are swapped" if tuple(fan(tc.empty(400, 1000))) == (400, 1000) else None,
            hint="a weight is (out_features, in_features): fan_in = shape[1], fan_out = shape[0]")
    got = tuple(fan(tc.empty(8, 3, 5, 5)))
    t.equal(got, (75, 200), what="_calculate_fan_in_and_fan_out of a Conv2d weight of shape (8, 3, 5, 5)",
            why="the kernel's size (5 * 5 = 25 weights per channel) was not multiplied in" if got == (3, 8) else None,
            hint="fan_in = in_channels * prod(kernel): every weight of a window reads one input")
    error = t.raises(ValueError, fan, tc.empty(7), what="_calculate_fan_in_and_fan_out(tc.empty(7)) (a bias)",
                     hint="fewer than 2 dimensions has no fans: raise ValueError(...)")
    t.equal(str(error), "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
            what="the message of that ValueError", hint="PyTorch's wording")


def _draws(t, uniform_, normal_, zeros_):
    w = tc.nn.Parameter(tc.empty(50, 40))
    tc.manual_seed(3)
    _in_place(t, "uniform_", uniform_, w, -0.2, 0.3)
    tc.manual_seed(3)
    expected = tc.empty(50, 40).uniform_(-0.2, 0.3).numpy()
    t.close(w, expected, what="uniform_(w, -0.2, 0.3) after tc.manual_seed(3)", given="w = nn.Parameter(tc.empty(50, 40))",
            mistakes=[mistakes.custom(lambda g, e: g.min() >= 0 and g.max() <= 1, "your values lie in [0, 1): a and b "
                                      "were not used", "tensor.uniform_(a, b): the bounds are the arguments")],
            rtol=1e-6)
    tc.manual_seed(4)
    _in_place(t, "normal_", normal_, w, 1.0, 0.5)
    tc.manual_seed(4)
    expected = tc.empty(50, 40).normal_(1.0, 0.5).numpy()
    t.close(w, expected, what="normal_(w, 1.0, 0.5) after tc.manual_seed(4)", given="w = nn.Parameter(tc.empty(50, 40))",
            mistakes=[mistakes.custom(lambda g, e: abs(g.std() - 0.25) < 0.03, "your std is 0.25 = 0.5 ** 2: std was "
                                      "used as the variance", "tensor.normal_(mean, std) takes the standard deviation")],
            rtol=1e-6)
    generator = tc.Generator().manual_seed(5)
    uniform_(w, generator=generator)
    t.close(w, tc.empty(50, 40).uniform_(generator=tc.Generator().manual_seed(5)).numpy(),
            what="uniform_(w, generator=g) (a, b default to 0, 1)", mistakes=[
                mistakes.custom(lambda g, e: True, "your draws are not those of the generator you were given",
                                "pass generator=generator on to the tensor's method")])
    _in_place(t, "zeros_", zeros_, w)
    t.close(w, np.zeros((50, 40)), what="zeros_(w)")


def _kaiming_xavier(t, kaiming_uniform_, xavier_uniform_):
    w = tc.nn.Parameter(tc.empty(30, 48))

    def bound_of(fn, *args, **kwargs):
        tc.manual_seed(6)
        fn(w, *args, **kwargs)
        tc.manual_seed(6)
        unit = tc.empty(30, 48).uniform_(-1.0, 1.0).numpy()
        return float(np.median(w.detach().numpy() / np.where(unit == 0, 1, unit)))

    cases = [((), {}, np.sqrt(3) * np.sqrt(2) / np.sqrt(48), "kaiming_uniform_(w) (a=0, leaky_relu: gain sqrt(2))"),
             ((np.sqrt(5),), {}, 1 / np.sqrt(48), "kaiming_uniform_(w, a=math.sqrt(5)) (nn.Linear's default)"),
             ((), {"mode": "fan_out", "nonlinearity": "relu"}, np.sqrt(3) * np.sqrt(2) / np.sqrt(30),
              "kaiming_uniform_(w, mode='fan_out', nonlinearity='relu')")]
    for args, kwargs, want, what in cases:
        _in_place(t, "kaiming_uniform_", kaiming_uniform_, w, *args)
        got = bound_of(kaiming_uniform_, *args, **kwargs)
        why = None
        if abs(got - np.sqrt(3) / np.sqrt(48)) < 1e-4 and abs(want - got) > 1e-4:
            why = "your bound has no gain: it is sqrt(3 / fan)"
        elif abs(got - want * np.sqrt(48) / np.sqrt(30)) < 1e-4 or abs(got - want * np.sqrt(30) / np.sqrt(48)) < 1e-4:
            why = "your bound used the other fan: mode chooses fan_in or fan_out"
        elif abs(got - want / np.sqrt(3)) < 1e-4:
            why = "your bound is the standard deviation: U(-b, b) has std b / sqrt(3), so b = sqrt(3) * std"
        t.true(abs(got - want) < 1e-4, f"{what} to draw U(-{want:.5f}, {want:.5f}) from the same random numbers as "
               f"w.uniform_(-bound, bound) (your bound: {got:.5f})", why=why,
               hint="bound = sqrt(3) * gain / sqrt(fan), gain = nn.init.calculate_gain(nonlinearity, a), then "
                    "uniform_(tensor, -bound, bound, generator)")
    error = t.raises(ValueError, kaiming_uniform_, w, mode="fan_avg", what="kaiming_uniform_(w, mode='fan_avg')",
                     hint="refuse a mode that is neither 'fan_in' nor 'fan_out'")
    t.equal(str(error), "Mode fan_avg not supported, please use one of fan_in, fan_out",
            what="the message of that ValueError",
            hint="PyTorch's wording: f'Mode {mode} not supported, please use one of fan_in, fan_out'")
    empty = tc.empty(0, 3)
    t.true(kaiming_uniform_(empty) is empty, "kaiming_uniform_ of a tensor with a 0 in its shape to return it unchanged",
           hint="no elements, no fan: return the tensor first when 0 in tensor.shape")
    for args, want, what in (((), np.sqrt(6 / 78), "xavier_uniform_(w)"),
                             ((5 / 3,), 5 / 3 * np.sqrt(6 / 78), "xavier_uniform_(w, gain=5/3)")):
        _in_place(t, "xavier_uniform_", xavier_uniform_, w, *args)
        got = bound_of(xavier_uniform_, *args)
        why = None
        if abs(got - np.sqrt(6 / 48) * want / np.sqrt(6 / 78)) < 1e-4:
            why = "your bound uses fan_in alone: Xavier averages fan_in and fan_out"
        elif abs(got - np.sqrt(6 / 78)) < 1e-4:
            why = "the gain was not applied"
        t.true(abs(got - want) < 1e-4, f"{what} of a (30, 48) weight to draw U(-{want:.5f}, {want:.5f}) (yours: "
               f"{got:.5f})", why=why, hint="a = gain * sqrt(6 / (fan_in + fan_out))")
    # inside the framework: nn.Linear's default initialisation is kaiming_uniform_(weight, a=sqrt(5))
    tc.manual_seed(7)
    layer = tc.nn.Linear(48, 30)
    tc.manual_seed(7)
    kaiming_uniform_(w, a=np.sqrt(5))
    t.close(w, layer.weight.detach().numpy(), what="kaiming_uniform_(w, a=math.sqrt(5)) against nn.Linear(48, 30)'s "
            "weight drawn after the same seed", rtol=1e-5, atol=1e-7)


@exercise("03.4", title="nn.init's initialisers, and Kaiming initialization with apply", points=4,
          forbidden=["tinygrad_course.nn.init.kaiming_normal_", "tinygrad_course.nn.init.uniform_",
                     "tinygrad_course.nn.init.normal_", "tinygrad_course.nn.init.zeros_",
                     "tinygrad_course.nn.init.kaiming_uniform_", "tinygrad_course.nn.init.xavier_uniform_",
                     "tinygrad_course.nn.init._calculate_fan_in_and_fan_out"])
def init_check(t, _calculate_fan_in_and_fan_out, uniform_, normal_, zeros_, kaiming_uniform_, xavier_uniform_,
               init_weights):
    _fan(t, _calculate_fan_in_and_fan_out)
    _draws(t, uniform_, normal_, zeros_)
    _kaiming_xavier(t, kaiming_uniform_, xavier_uniform_)
    tc.manual_seed(0)
    model = tc.nn.Sequential(tc.nn.Linear(1000, 400), tc.nn.ReLU(), tc.nn.Linear(400, 10), tc.nn.LayerNorm(10))
    returned = model.apply(init_weights)
    t.true(returned is model, "model.apply(init_weights) to return the model")
    for i in (0, 2):
        t.close(model[i].bias, np.zeros(model[i].bias.shape), what=f"model[{i}].bias after apply",
                mistakes=[mistakes.custom(lambda g, e: True, "the biases were not set to zero",
                                          "zero them in place: nn.init.zeros_(m.bias)")])
    std0 = float(model[0].weight.detach().numpy().std())
    expected = np.sqrt(2 / 1000)
    hint = "Kaiming (He) normal for ReLU: std = sqrt(2 / fan_in), where fan_in = in_features = weight.shape[1]"
    why = None
    if abs(std0 - np.sqrt(2 / 400)) < 0.05 * np.sqrt(2 / 400):
        why = "your std was computed from fan_out (the 400 outputs), not from fan_in (the 1000 inputs)"
        hint = "Kaiming keeps forward activations stable with fan_in = weight.shape[1]"
    elif abs(std0 - np.sqrt(2 / 1400)) < 0.05 * np.sqrt(2 / 1400):
        why = "that is Xavier/Glorot's std, which uses fan_in + fan_out"
        hint = "for ReLU, Kaiming's std uses fan_in alone"
    elif abs(std0 - np.sqrt(1 / 1000)) < 0.05 * np.sqrt(1 / 1000):
        why = "your std is too small by a factor sqrt(2): the ReLU gain is missing"
    elif abs(std0 - 2 / 1000) < 0.05 * 2 / 1000:
        why = "your std is 2 / fan_in: the square root is missing"
    t.true(abs(std0 - expected) < 0.05 * expected,
           f"model[0].weight of a Linear(1000, 400) to have std {expected:.4f} within 5% (got {std0:.4f})",
           why=why, hint=hint)
    t.true(abs(float(model[0].weight.detach().numpy().mean())) < 0.005, "model[0].weight to have mean 0")
    t.close(model[3].weight, np.ones(10), what="the LayerNorm weight (must stay untouched)", mistakes=[
        mistakes.custom(lambda g, e: True, "your function also changed the LayerNorm's weight",
                        "only initialize Linear layers: test isinstance(m, nn.Linear)")])
    # the real run: ReLU activations keep their scale through a deep MLP initialized with the learner's function
    layers = []
    for _ in range(12):
        layers += [tc.nn.Linear(256, 256), tc.nn.ReLU()]
    deep = tc.nn.Sequential(*layers).apply(init_weights)
    with tc.no_grad():
        out = deep(tc.randn(256, 256))
    second_moment = float((out.numpy() ** 2).mean())
    t.true(0.3 < second_moment < 3.0, "the mean square of activations after 12 ReLU layers initialized with your "
           f"function to stay near 1 (got {second_moment:.3g})")
