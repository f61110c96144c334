"""The first stage of every exercise's hint: the idea to use, without the formula or the code.

``hint("NN.k")`` gives it at any time, before any check has run; the fix for a failed check (which may
state the formula) comes only later (see ``check.py``).
"""
from __future__ import annotations

NUDGES: dict[str, str] = {
    # the fixture course (tests/grading/fixtures/course)
    "99.1": "compare the shapes from their last dimension backwards; a dimension of size 1 stretches to match the other.",
    "99.2": "a broadcast input was used many times in the output, so its gradient collects a contribution from every use.",
    "99.3": "a leaf's .grad collects gradients across backward calls; think about what should happen to the value already there.",
    # 01 tensors
    "01.1": "a tensor is a NumPy array wrapped: find its shape from the nesting, its dtype from the highest kind of element (bool, then int, then float), build the array, then wrap it; every factory is that last step with a shape and a fill value (arange with a length from the bounds and the step).",
    "01.2": "decide the dtype first: scaling into [0, 1] produces fractions, and whole-number storage cannot hold them.",
    "01.3": "stepping along the last dimension moves to the neighbouring element; stepping along an earlier dimension skips a whole block of the dimensions after it.",
    "01.4": "each index moves you along its dimension by its stride, starting from where the view begins.",
    "01.5": "line the shapes up from the right; each pair of sizes must be equal or contain a 1, and a missing dimension counts as 1.",
    "01.6": "a reduction removes the dimension it sums over; for the division to pair each row with its own sum the sums must keep a dimension to broadcast along.",
    "01.7": "you need one element per row, chosen by that row's label: an indexing or gather that pairs row i with labels[i].",
    "01.8": "a comparison gives a bool tensor of the same shape; indexing with it keeps the places where it is True.",
    "01.9": "a view keeps every element where it is, so only dims whose elements sit at equal steps in the storage can be regrouped; find those runs of dims first.",
    "01.10": "neither view moves an element: one reorders the (size, stride) pairs of the dims, the other makes several indices read the same element.",
    "01.11": "an index never copies: it only changes where the view starts, how many elements each dim keeps and how far apart they are.",
    "01.12": "every element's position is the offset plus one term per dim; each term varies along its own dim only, so broadcasting can add them all at once.",
    # 01b the tensor object
    "01b.1": "every answer is already in the NumPy array the tensor holds; what PyTorch adds is the type it comes back as (a Size, an int) and the error when a dim does not exist.",
    "01b.2": "NumPy measures steps in bytes and PyTorch in elements; a dim of size 1 is never stepped along, so its stride is free to be whatever a contiguous layout would give it, and it cannot make a tensor non-contiguous.",
    "01b.3": "a tensor's values leave it either as Python's own numbers (one, or nested lists) or as the very array it holds; a tensor autograd may still need is not handed out as a writable array.",
    "01b.4": "a leaf is a tensor no recorded op made; only a leaf's flag may change, and only floating-point numbers have gradients; a detached tensor is the same storage seen without the graph, so it must share the counter of in-place changes.",
    "01b.5": "decide the format and the width once, from all the elements, before printing any of them; the layout is recursive: a matrix is its rows, each printed one bracket deeper.",
    "01b.6": "first the kind of number (bool, integer, floating), then the size: a higher kind always wins; and an operand that is only a number, or a 0-d tensor, gets its say only when it brings a higher kind.",
    # 02 autograd
    "02.1": "forward is the NumPy computation itself; in backward, each input's gradient is the incoming gradient times how much the output moves when that input moves (for a product, the other factor), and forward must save what backward needs.",
    "02.2": "several of these derivatives are simplest written with the op's own output (exp, tanh, sigmoid), which forward can keep; apply the chain rule: incoming gradient times the local derivative.",
    "02.3": "each gradient has the shape of its input; write one element of the output as a sum over k and ask which elements of a and b it touches (the lecture's section on matmul's backward); for a sum, every element it added receives the sum's gradient unchanged; a maximum moves only with the element it came from.",
    # 02b the ops a model needs
    "02b.1": "a probability distribution along dim does not change when one number is subtracted from the whole slice; in backward, each output of a slice moves when any input of that slice moves, so sum over the slice before multiplying.",
    "02b.2": "GELU is a product of x and the normal CDF, so its slope has two terms; dropout's output is x times a fixed mask, so its gradient is the incoming one times the same mask.",
    "02b.4": "joining copies each input into its own stretch along dim, so the gradient of each input is its own stretch of the incoming gradient, in the same order and sizes.",
    "02b.5": "a view moves no numbers: it reads the same storage with other strides, so forward returns NumPy's view of x (never a copy); in backward, each position of the output came from one element of x, so the gradient goes back through the same swap, and an element read at many positions collects the sum of their gradients.",
    "02b.7": "a view to another shape moves no numbers: the same elements are read in the same row-major order under new sizes, so forward returns NumPy's reshape of x (a view, never a copy, also of a strided x); each element of the output is one element of x, so backward reshapes the gradient back to x's shape, which forward must keep. A clone is the same numbers in new row-major memory, so its gradient passes through unchanged; a narrow is a slice, so the elements outside it get a zero gradient and grad sits at the slice's place in x's shape.",
    "02b.6": "gather reads one element of x for each position of the index, so in backward each output's gradient goes back to the element it was read from, and an element read several times collects the sum. x[key] is the same: a key of ints and slices reads each element of x at most once (a view), so its gradient can be written into zeros at the key, while an index tensor may name a row twice, and those rows must add their gradients.",
    "02b.3": "a lookup copies rows, so a row read several times receives the sum of all their gradients (an assignment keeps only the last); a filled position is a constant, so nothing flows back through it.",
    # 02c Tensor's operators and methods
    "02c.1": "Python turns a * b into a.__mul__(b) and, when that returns NotImplemented, into b.__rmul__(a), where self is the right operand; each method only turns the other operand into a tensor or number and hands both to the op, whose apply records the node backward runs; a view is the op that reads the same storage in another shape.",
    "02c.2": "a method only picks the op whose node PyTorch records (one op over every element, another over dims) and hands it the call; a comparison returns NotImplemented for what it cannot compare, so Python can ask the other side; a conversion that changes nothing is the tensor itself, no copy.",
    "02c.3": "an in-place method is its out-of-place op with the result copied back into the same storage, so every view sees it and the version counter counts it; when the op is recorded, it must read a copy of the old values that carries the tensor's history (it may save them for backward), and the tensor then continues its history from the op's node.",
    "02.4": "the derivative is the slope: nudge one entry a little up and a little down and divide the change in f by the distance between the two.",
    "02.5": "an update you do not want recorded must not build a graph; a value you want as a constant must be cut from the graph it came from.",
    "02.6": "forward saves what backward will need with ctx.save_for_backward; backward receives the output's gradient and multiplies it by the local derivative.",
    "02.7": "row i of the Jacobian is the gradient of output i; the Hessian is the Jacobian of the gradient, which needs a gradient that is itself differentiable.",
    # 02d the engine
    "02d.1": "a node may run only after every node that uses its output has run: a depth-first search that adds a node after visiting its inputs, then reversed; the backward pass then walks that order, and what reaches a node along several paths adds up before it runs. It starts from the root gradient, d output / d output: ones for a one-element output, and for any other output the gradient you pass, which says which weighted sum of its elements is differentiated, so it must have the output's shape. backward() itself only chains them: the root gradient, the node the pass starts at (a leaf's own AccumulateGrad when there is no grad_fn), the pass run without recording a graph.",
    "02d.2": "a node's backward step sends back exactly one gradient per input that has an edge, each in its input's shape and dtype: a broadcast input was read at every position along the stretched dimensions, and paths add, so its gradient is summed over them. A node also keeps what its backward reads: the saved tensors with the version each had, so that a tensor changed in place since is caught, and it gives them back (release) once backward ran it. An op that needs its own result keeps it without its grad_fn (a node holding a tensor that holds the node is a cycle), so the version error for it names the node's own op.",
    "02d.3": "the engine keeps, for each call, where each input's gradient goes (its grad_fn and output number, or a leaf's AccumulateGrad) and what the input looked like (shape, dtype), and records nothing when no gradient is wanted; a leaf's .grad owns its storage and gradients add into it. A leaf's AccumulateGrad node holds the leaf itself (it writes into its .grad), has no edges because the graph ends at a leaf, and carries the largest sequence number so the engine runs it as soon as its gradient is complete.",
    # 03 modules
    "03.1": "a layer's weights must be nn.Parameter objects assigned as attributes, so that parameters() finds them; the forward is one affine map; a container must register what it holds, in order, under names.",
    "03.2": "dropout behaves differently in training and in evaluation; the survivors are rescaled so that the expected value stays the same.",
    "03.3": "layer norm standardises each sample over its last dimensions (mean 0, variance 1, with eps keeping the division safe) before its own scale and shift.",
    "03.4": "an initialiser reads its scale from the weight's shape (how many inputs and outputs each weight connects) and fills the tensor in place without recording a graph; a uniform distribution's bound is sqrt(3) times its standard deviation. apply calls your function on every module: act only on the layer type asked for.",
    "03.5": "an embedding is a learned table whose forward reads whole rows by index, and whose gradient adds up in the rows that were read; a module list must register what it holds, under its position, so that parameters() finds it.",
    # 03b inside Module
    "03b.1": "a parameter is the very tensor it wraps (no copy), seen as a leaf of a class of its own: its type is what tells a module to register it, and it must require grad or the optimizer never moves it. _make_subclass makes that object without copying anything: a new object of class cls whose storage and version counter are data's own objects (so a change through either shows in both), and whose autograd fields are a fresh leaf's, whatever data's graph was.",
    "03b.2": "a module keeps what it owns in three tables (parameters, buffers, submodules) that attribute assignment fills, and reading an attribute falls back to them only when normal lookup fails. Registering is where the checks live: register_parameter and register_module refuse a dotted, empty or taken name, a value of the wrong kind and a parameter that is not a leaf before they store anything, and attribute assignment hands every Parameter to register_parameter so the same checks guard every weight.",
    "03b.3": "every name a model shows is a walk over those tables: a module, then its submodules depth first, each name the path of attribute names joined by dots; a layer used twice is one layer, so each module and each parameter is yielded once, and the short versions yield from the named ones.",
    "03b.4": "the state dict is the same walk written down (parameters, then the buffers that persist, then each child under its prefix), loading copies values into the tensors the model already has and reports every key that does not fit; train, eval and apply visit every child before they return the module itself.",
    # 04 data
    "04.1": "raw labels can be anything; map each distinct label to an index, the same way every time.",
    "04.2": "a sampler hands out indices, never samples, and refuses bad options when it is built (a wrong type and a wrong count are different errors); a shuffle is reproducible only when every number comes from the one generator, drawn in the same order every time.",
    "04.3": "batch elements of different lengths can be stacked only after they are brought to one length; keep track of which positions are real.",
    "04.4": "the statistics of a normalization belong to the training data and are computed once, on the same scale the tensors will have after ToTensor.",
    "04.5": "only the training data is shuffled, and a seeded generator makes the shuffle repeat; validation order does not matter.",
    "04.6": "the work of building batches can move to worker processes; each worker needs its own seed so they do not repeat each other.",
    "04.7": "default_collate looks at the type of the first sample and recurses into tuples, lists and dicts, stacking what it finds at the leaves.",
    "04.8": "a batch size is a positive whole number and nothing else (in Python a bool counts as one); walk the indices in order, cut a batch each time it holds batch_size of them; the last, shorter one is kept (and counted) unless drop_last says otherwise.",
    "04.9": "the loader only connects the pieces its constructor chose, and once chosen they stay (changing one would leave the others inconsistent): indices from the batch sampler, samples from the dataset one index at a time, merged by its collate_fn; the generator is shared, so every draw counts.",
    "04.10": "every random value is a recipe applied to the generator's 32-bit words in a fixed order: how many bits make one value, which words pair up, and which draws come first decide whether a seed gives PyTorch's numbers.",
    # 04b optimizers
    "04b.1": "the base only keeps books: groups of parameters with their options (the defaults fill the gaps), a state per parameter, and a numbered copy of both for saving, in which a parameter is known by its position, never by the tensor itself.",
    "04b.2": "SGD's step reads its options from each group, every time, and follows a running velocity per parameter (kept in the base's state, so that saving carries it), not the raw gradient; the update changes the parameter itself, outside the graph.",
    "04b.3": "Adam keeps running averages of the gradient and of its square; both start at zero, so early steps need a correction. Weight decay either joins the gradient (and gets averaged with it) or shrinks the weights directly, apart from the averages. AMSGrad remembers the largest second moment so far and divides by that one.",
    "04b.4": "the base counts steps and writes each group's rate from what the schedule asks for at that count (step 0 right at construction); the cosine schedule is half a cosine wave from the base rate down to the minimum over T_max steps; LambdaLR's function gives a factor of the base rate at that count, never of the current rate.",
    # 05 training
    "05.1": "each step needs fresh gradients for this batch only, computed from this batch's loss, then used by the optimizer.",
    "05.2": "the norm is taken over all gradients together, as if they were one long vector; every gradient is then scaled by the same factor, and only when the norm is too large.",
    "05.3": "evaluation changes no weights and builds no graph; averages over a dataset must weight every sample equally, whatever the batch sizes.",
    "05.4": "remember the best loss seen so far and count the epochs since it last improved by more than min_delta.",
    "05.5": "the predicted class is the position of the largest score in each row.",
    "05.6": "subtract each row's maximum before exponentiating; the gradient of log-softmax is the incoming gradient minus the softmax times the gradient's row sum. The loss of a row is minus its target's log-probability; an ignored target neither adds to the loss nor counts in the mean, and a smoothed target spreads label_smoothing evenly over the classes.",
    # 05b lab
    "05b.1": "one fixed batch, many steps: if the loop is right the loss goes close to zero.",
    "05b.2": "a scheduler's step() marks the end of an epoch for StepLR; call it where an epoch ends.",
    "05b.3": "convolutions keep the image's layout; flatten only before the final Linear, and count the features the flatten produces.",
    "05b.4": "clip after backward and before step; the clipping function returns the norm it measured before clipping.",
    "05b.5": "evaluation changes no weights and builds no graph; weight each batch by its number of samples.",
    "05b.6": "keep a copy of the weights at the best epoch (a copy, not a reference to tensors that keep training) and load it at the end.",
    "05b.7": "unfold every window the filter visits into a column, then one matrix product with the flattened weights gives all outputs; backward runs the same product transposed and folds the columns back.",
    "05b.8": "each output is the largest value in its window; remember where it was, and in backward send the gradient only there.",
    # 06 gpu
    "06.1": "walk the container: rebuild tuples, lists and dicts with their tensors moved, and leave everything else as it is.",
    "06.2": "a GPU call returns before its work is done; wait for the device before reading the clock, and leave the first call out of the timing.",
    "06.3": "a fused kernel does the whole update in one pass over each element; the buffer and the parameter are both updated in place.",
    "06.4": "an overflow shrinks the scale and restarts the count; enough clean steps in a row grow it.",
    "06.5": "allocated counts live tensors; reserved also counts the cache the allocator keeps; empty_cache gives back only what no tensor uses.",
    "06.6": "the loss is multiplied by the scale before backward, so every gradient must be divided by it before the update, and a step with an overflow is skipped.",
    # 07 saving
    "07.1": "a checkpoint must hold everything that changes during training, not only the model's weights; resuming restores each part.",
    "07.2": "compare the two sets of keys, then the shapes of the keys they share.",
    "07.3": "every state_dict entry becomes a plain NumPy array under its own name.",
    "07.4": "a restricted unpickler decides, for each global the file names, whether it may be loaded.",
    "07.5": "the exported arrays are the layers' weights; the forward pass is the same arithmetic written with NumPy.",
    "07.6": "pickletools can list a pickle's opcodes without running them; the globals it would import are named in them.",
    # 08 debugging
    "08.1": "named_parameters() pairs each parameter with its name; a gradient's norm is the length of the gradient seen as one vector.",
    "08.2": "a forward hook sees each module's output in the order they run; the first one that is not finite is the answer.",
    "08.3": "the profiler's key_averages() groups the recorded events by op name and counts them.",
    "08.4": "keep, per tag, the values and their steps in order; smoothing is a running average that gives more weight to recent values.",
    "08.5": "what the graph holds is the memory still allocated after the forward pass, compared with before it.",
    "08.6": "the exception's type and message name the cause; match them against the table in the lecture.",
    "08.7": "anomaly mode records where each op was created and stops at the first backward that produces NaN.",
    # 09 distributed
    "09.1": "every replica must end with the same gradient, the mean of all replicas' gradients for that parameter.",
    "09.2": "pad the list so every rank gets the same number of samples, then each rank takes every world_size-th entry starting at its rank.",
    "09.3": "in a ring each rank sends one chunk to its neighbour per step; first the sums travel round, then the finished chunks.",
    "09.4": "same start, own share of the data, and gradients averaged after backward.",
    "09.5": "a collective changes every rank's tensor in place, so all ranks hold the same result afterwards.",
    "09.6": "the ranks compute at the same time, then wait for the gradients to be exchanged; throughput is samples per second of the whole step.",
    # 10 a GPT
    "10.1": "position t may look at positions 0..t and never later ones: a lower-triangular pattern, True where a query may see a key.",
    "10.2": "scores compare every query with every key; scale them, hide the future before the softmax, and use the weights to average the values.",
    "10.3": "pre-norm means normalising what goes into each sublayer, while the residual path carries the unnormalised input straight through.",
    "10.4": "temperature rescales the logits before the softmax; top-k keeps the k largest logits and gives every other one zero probability.",
    "10.5": "the new token's query attends over every key and value so far: append this step's key and value to the cache first, then attend.",
    "10.6": "decay only what multiplies: matrices of Linear and Embedding layers; biases and LayerNorm parameters keep their values.",
    "10.7": "one linear layer makes every head's queries, keys and values; a head is a slice of each position's channels, so split the channels, attend per head, and put the heads side by side again.",
    "10.8": "a token's vector is what it is plus where it is; the blocks refine it, and the head reads scores for every next token off the same table that embedded the tokens.",
    "10.9": "small steps while Adam's averages are still empty, the full rate at the end of the warmup, then half a cosine wave from there down to a floor.",
    "10.10": "the past does not change: feed each position once, keep its keys and values in the caches, and let every new token be one more position.",
    "10.11": "topk is a stable sort along dim, cut after k, with the gradient sent back to where each value came from; a draw is a race: every category gets an exponential time, and the largest p / q wins.",
}

_FALLBACK = "reread the exercise's text and the lecture section it points to; the check's message will name what differs."


def nudge_for(exercise_id: str) -> str:
    """The conceptual hint of `exercise_id` (a general one for an exercise that has none)."""
    return NUDGES.get(exercise_id, _FALLBACK)
