"""A held-out set of wrong student versions, for an honest measure of how well the checks name bugs.

benchmarks/wrong_versions.py is the set the checks were improved on, so its score is a training
score. This set was written independently of it and of the checks: from the exercises' statements
and stubs (notebooks/NN_*.ipynb), the worked answers `helpers.exercises.solution(key)` prints, the
README's description of `diagnose`, and from bug reports and forum threads about hand-written
RNN, LSTM and GRU code (each cited next to the version drawn from it) -- never from
helpers/bugs.py, helpers/diagnosis.py, helpers/exercises.py, helpers/solutions/, the tests, or the
first set's versions. It prefers bugs that are not the textbook ones: two small slips at once, bugs
that show only for some sizes (a batch of 1, one unit, input_size == hidden_size, T == B), in-place
operations and mutated arguments, wrong axes in cat/stack/chunk/view, masks built wrong,
off-by-one lengths, dtype and device slips, reads of a notebook's globals, and numerically sloppy
but plausible formulas.

The records have the first set's format (`Version`, `wrong`, `right`, `case` are mirrored here
rather than imported, so that registering a version here never adds it to the first set's list):
a name, a target (an exercise key for `helpers.exercises.check_code`, or a case builder returning
(module, input, hx) for `helpers.diagnose`), the function, its true bug in one line, and `names`:
regular expressions (case-insensitive), at least one of which a message that truly names this bug
would match (its cause, or its precise location). Correct versions, in unusual styles, have
`correct=True` and must pass. `python benchmarks/diagnosis_quality.py --set holdout` runs them.

The `names` were written before the checks were first run on this set. After that run, four were
widened, each because a message named the same bug in other words (bi_hx_row_0, tl_mean_of_means,
dg_h_n_direction_major, dg_h_n_batch_first), and one narrowed because it matched a generic hint
(dg_hx_row_l_plus_d); each is marked "after the first run" where it is.
"""

from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


@dataclass(frozen=True)
class Version:
    name: str
    target: object  # an exercise key ("03.step_matrices") or a case builder: () -> (module, input, hx)
    fn: object
    bug: str  # the true bug, in one line ("" for a correct version)
    names: tuple = ()  # regular expressions: a message that names the bug matches at least one
    correct: bool = False
    source: str = ""  # a public thread the version is drawn from, where there is one
    tags: tuple = field(default=(), compare=False)


VERSIONS = []


def wrong(target, bug, names, source=""):
    """Register the decorated function as a wrong version of `target`; the function itself is returned as written."""

    def register(fn):
        VERSIONS.append(Version(fn.__name__, target, fn, bug, tuple(names), False, source))
        return fn

    return register


def right(target, style):
    """Register the decorated function as a correct version, written in an unusual `style`: it must pass."""

    def register(fn):
        VERSIONS.append(Version(fn.__name__, target, fn, style, (), True))
        return fn

    return register


def case(
    kind,
    input_size,
    hidden_size,
    num_layers=1,
    *,
    bidirectional=False,
    batch_first=False,
    seq_len=5,
    batch=3,
    hx=False,
    lengths=None,
    enforce_sorted=False,
    seed=0,
    publish=False,
    unbatched=False,
    **options,
):
    """A builder of a fresh (module, input, hx) for diagnose: a seeded layer, its input (packed when `lengths`)."""
    cls = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}[kind]

    def build():
        global NOTEBOOK_LAYER
        torch.manual_seed(seed)
        module = cls(
            input_size, hidden_size, num_layers, bidirectional=bidirectional, batch_first=batch_first, **options
        )
        shape = (batch, seq_len, input_size) if batch_first else (seq_len, batch, input_size)
        x = torch.randn(*shape)
        if unbatched:  # one sequence without a batch dimension: (seq_len, input_size)
            x = x[:, 0] if not batch_first else x[0]
        if lengths is not None:
            for b, n in enumerate(lengths):
                if batch_first:
                    x[b, n:] = 0
                else:
                    x[n:, b] = 0
            x = pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
        state = None
        if hx:
            rows = num_layers * (2 if bidirectional else 1)
            out_size = options.get("proj_size", 0) or hidden_size
            size = (rows, out_size) if unbatched else (rows, batch, out_size)
            cell = (rows, hidden_size) if unbatched else (rows, batch, hidden_size)
            h_0 = torch.randn(*size)
            state = (h_0, torch.randn(*cell)) if kind == "LSTM" else h_0
        if publish:  # the notebook's own variable: a student's function may read it instead of its argument
            NOTEBOOK_LAYER = module
        return module, x, state

    parts = [f"{kind}({input_size}->{hidden_size}", f"L={num_layers}"]
    parts += [p for p, on in [("bi", bidirectional), ("batch_first", batch_first), ("hx", hx)] if on]
    parts += [f"packed{'' if enforce_sorted else ' unsorted'}"] if lengths is not None else []
    parts += ["unbatched"] if unbatched else [f"T={seq_len}", f"B={batch}"]
    parts += [f"{k}={v}" for k, v in options.items()]
    build.label = ", ".join(parts) + ")"
    build.kind = kind
    return build


# The notebook's globals that a version may read instead of its arguments (each seeded apart from the checks).
NOTEBOOK_LAYER = None  # set by a case built with publish=True, as the notebook's `lstm` would be
torch.manual_seed(4321)
rnn = nn.RNN(1, 1)  # notebook 02's one-unit layer
H = 3  # a notebook's hidden size, read by a version that ignores its `hidden_size` argument
torch.manual_seed(0)

# A few expressions shared by many versions' `names`.
MUTATES = r"(chang|modif|overwr|mutat|wr[io]te)\w*\b.{0,60}\b(ARG|argument|caller)|\b(ARG)\b.{0,60}(chang|modif|overwr|mutat)|in.place|inplace"


def mutates(arg):
    """The expression for 'changes its argument `arg`' (or an in-place operation)."""
    return MUTATES.replace("ARG", arg)


# =============================================================================================
# 01.step: rnn_step(x_t, h_prev, w_ih, w_hh) = tanh(w_ih * x_t + w_hh * h_prev), scalars or vectors
# =============================================================================================


@wrong(
    "01.step",
    ".item() turns the result into a Python float: wrong type, and it raises when x_t holds several values",
    [
        r"\.item|item\(\)",
        r"python (float|number|scalar)|not a tensor|a float\b",
        r"converted to (a )?(python )?scalar|with \d+ elements cannot",
    ],
)
def step_item(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * h_prev).item()


@wrong(
    "01.step",
    "h_prev.mul_(w_hh) multiplies the caller's h_prev in place (the value returned is right)",
    [mutates("h_prev"), r"mul_"],
)
def step_mul_in_place(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + h_prev.mul_(w_hh))


@wrong(
    "01.step",
    "tanh wraps the input term only; w_hh * h_prev is added after the tanh",
    [
        r"(outside|after) (the )?tanh",
        r"tanh.{0,60}(only|just|alone).{0,40}(input|x_t|first term)",
        r"(w_hh \* h_prev|recurrent term|second term).{0,40}(outside|after|not inside)",
    ],
)
def step_tanh_input_only(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t) + w_hh * h_prev


@wrong(
    "01.step",
    "a third-order Taylor polynomial a - a**3/3 stands in for tanh (close only near 0)",
    [
        r"taylor|polynomial|approximat",
        r"(not|instead of|in place of|rather than) (torch\.)?tanh",
        r"(activation|nonlinearity|squash\w*) .{0,40}(wrong|differ|not tanh)",
    ],
)
def step_taylor(x_t, h_prev, w_ih, w_hh):
    a = w_ih * x_t + w_hh * h_prev
    return a - a**3 / 3


@wrong(
    "01.step",
    "copy-paste slip: the recurrent term reads x_t (w_hh * x_t), h_prev is never used",
    [
        r"h_prev.{0,60}(not used|unused|ignored|never|missing)",
        r"(ignor\w*|without|missing|drops?|no|never uses?) .{0,30}(h_prev|recurren|previous state|w_hh \* h_prev)",
        r"x_t (twice|two times)|w_hh \* x_t|w_hh.{0,30}(multipl\w*|times) x_t",
    ],
)
def step_x_twice(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * x_t)


@wrong(
    "01.step",
    "h_prev.sum() collapses several states into one number: right for one value, mixes them when there are several",
    [
        r"\.sum\(|\bsum\w*\b.{0,40}h_prev|h_prev.{0,40}\bsum",
        r"(mix|combin|collaps)\w*.{0,40}(values|entries|states|sequences|elements)",
        r"(each|every) (value|entry|element|sequence).{0,40}(own|separately|alone)",
    ],
)
def step_sums_h(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * h_prev.sum())


@right("01.step", "tanh written as 2 * sigmoid(2a) - 1")
def step_via_sigmoid(x_t, h_prev, w_ih, w_hh):
    return 2 * torch.sigmoid(2 * (w_ih * x_t + w_hh * h_prev)) - 1


# =============================================================================================
# 02.loop: my_rnn(module, input, hx=None) -> (output, h_n), one layer, one direction, time first
# =============================================================================================


def _params(module, suffix="_l0"):
    return [getattr(module, f"{n}{suffix}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]


@wrong(
    "02.loop",
    "h starts from hx itself, not hx[0]: with an hx the state keeps a layer dimension and output gets 4 dims",
    [
        r"hx\[0\]",
        r"\bhx\b.{0,60}(row|layer dim\w*|first dim\w*|index)",
        r"(layer dim\w*|extra dim\w*|leading dim\w*).{0,60}(hx|h_0|state)",
        r"(given|nonzero|your) (hx|h_0).{0,80}(shape|dim)",
    ],
)
def loop_h_is_hx(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.reshape(1, -1, module.hidden_size)


@wrong(
    "02.loop",
    "h_n = output[-1].unsqueeze(1): (batch, 1, H) instead of (1, batch, H), same shape when batch == 1",
    [
        r"unsqueeze",
        r"h_n.{0,80}(shape|transpos|axes|axis|dimension)|(shape|axes|axis|dimension).{0,80}h_n",
        r"\(\d+, 1, \d+\)",
    ],
)
def loop_hn_unsqueeze_1(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output = torch.stack(states)
    return output, output[-1].unsqueeze(1)


@wrong(
    "02.loop",
    "the zero initial state is (batch, input_size): right only when input_size == hidden_size",
    [
        r"input_size.{0,40}(instead|not|for the state|hidden)|input\.shape\[2\]",
        r"(zeros|h_0|initial state|starting state).{0,60}(shape|size)",
        r"hidden_size.{0,40}(instead|not)",
    ],
)
def loop_h0_input_size(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = torch.zeros(input.shape[1], input.shape[2]) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "copy-paste slip: b_ih added twice, b_hh never",
    [
        r"b_hh|bias_hh",
        r"b_ih.{0,40}(twice|two times|double)|(twice|two times|double).{0,40}b_ih",
        r"(second|hidden|recurrent) bias",
    ],
)
def loop_b_ih_twice(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_ih)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "reads the notebook's global `rnn` instead of its `module` argument",
    [
        r"global|notebook",
        r"outside (the|your|its) function|(its|the|your) (own )?arguments?",
        r"instead of (the|its|your) (module|argument|layer)|not (the|its) module|another layer",
    ],
)
def loop_reads_global(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(rnn)
    h = torch.zeros(input.shape[1], rnn.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "W_ih is detached: the values are right, weight_ih_l0 gets no gradient",
    [
        r"detach",
        r"weight_ih\w*.{0,80}grad|grad\w*.{0,80}weight_ih",
        r"(graph|autograd).{0,40}(cut|broken|lost)|no gradient",
    ],
)
def loop_detached_w_ih(module, input, hx=None):
    W_ih = module.weight_ih_l0.detach()
    W_hh, b_ih, b_hh = module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "the zero initial state is float64: h @ W_hh.T mixes double and float (it raises when hx is None)",
    [r"dtype|float64|double", r"same (dtype|type)"],
)
def loop_float64_h0(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = torch.zeros(input.shape[1], module.hidden_size, dtype=torch.float64) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@right("02.loop", "h_n sliced as output[-1:], the step with torch.addmm")
def loop_addmm(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(torch.addmm(b_ih, x_t, W_ih.T) + torch.addmm(b_hh, h, W_hh.T))
        states.append(h)
    output = torch.stack(states)
    return output, output[-1:]


# =============================================================================================
# 03.step_matrices: rnn_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh), x_t (B, I), h_prev (B, H)
# =============================================================================================


@wrong(
    "03.step_matrices",
    "functional.linear already multiplies by W^T; passing W_ih.T and W_hh.T transposes twice (silent for the square W_hh)",
    [
        r"F\.linear|linear\b.{0,60}(transpos|already|\.T)",
        r"transpos\w*.{0,40}(twice|two times|double)|(twice|double).{0,40}transpos",
        r"(without|missing|extra|spurious|wrong) (the )?\.T|W_hh\.T|W_hh\^T|W_hh.{0,40}transpos|transpos\w*.{0,40}W_hh",
    ],
    source="https://discuss.pytorch.org/t/implementation-difference-between-tensorflow-v1-lstmblockfusedcell-and-pytorch-lstm/146907",
)
def sm_linear_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(functional.linear(x_t, W_ih.T, b_ih) + functional.linear(h_prev, W_hh.T, b_hh))


@wrong(
    "03.step_matrices",
    "one product on concatenations, but [h_prev, x_t] against [W_ih | W_hh]: the input meets W_hh (silent when I == H)",
    [
        r"(wrong|other|reversed) order|order of (the )?(concat\w*|cat|blocks|pieces|x_t and h_prev)|swap\w*|the other way round",
        r"cat\w*.{0,60}(order|h_prev.{0,10}x_t)",
        r"W_hh.{0,40}(x_t|input)|(x_t|input).{0,40}W_hh|W_ih.{0,40}h_prev|h_prev.{0,40}W_ih",
    ],
)
def sm_cat_order(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    both = torch.cat([h_prev, x_t], dim=1)
    return torch.tanh(both @ torch.cat([W_ih, W_hh], dim=1).T + b_ih + b_hh)


@wrong(
    "03.step_matrices",
    "merges the biases with b_ih += b_hh: the caller's b_ih is changed in place",
    [mutates("b_ih"), r"\+="],
)
def sm_bias_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    bias = b_ih
    bias += b_hh
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + bias)


@wrong(
    "03.step_matrices",
    "the biases made a column (H, 1), as in the column-vector formula: they broadcast against the batch",
    [
        r"(bias|b_ih|b_hh)\w*.{0,80}(column|shape|broadcast|unsqueeze|\(\w+, 1\))",
        r"broadcast",
        r"unsqueeze|\[:, None\]",
    ],
    source="https://discuss.pytorch.org/t/dimensionslity-in-rnn/51498",
)
def sm_bias_column(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + (b_ih + b_hh).unsqueeze(1))


@wrong(
    "03.step_matrices",
    "the result is .squeeze()d: a batch of 1 (or one unit) loses its dimension",
    [
        r"squeeze",
        r"batch (of|=|size) ?(1|one)|\bB ?= ?1|one (row|sequence)",
        r"(dimension|dim) of size 1|size-1",
    ],
)
def sm_squeezed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).squeeze()


@wrong(
    "03.step_matrices",
    "W_hh.t_() transposes the caller's W_hh in place (instead of .t()); the value of this call is right",
    [mutates("W_hh"), r"t_\(\)|\.t_\b"],
)
def sm_t_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_hh.t_()
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh + b_hh)


@right("03.step_matrices", "column-vector form: (W_ih x^T + W_hh h^T + b[:, None])^T")
def sm_columns(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return (W_ih @ x_t.T + W_hh @ h_prev.T + (b_ih + b_hh)[:, None]).T.tanh()


# =============================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), one bidirectional tanh layer, time first
# =============================================================================================


def _birnn(module, input, hx, slip):
    T, B, Hs = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, Hs) if hx is None else hx
    states, finals = [], []
    for d, suffix in enumerate(("_l0", "_l0_reverse")):
        W_ih, W_hh, b_ih, b_hh = _params(module, suffix)
        if slip == "forward_W_hh":
            W_hh = module.weight_hh_l0
        h = h_0[0 if slip == "hx_row_0" else d]
        by_time = [torch.zeros(B, Hs)] * T if slip == "off_by_one" else [None] * T
        if d == 0:
            steps = range(T)
        else:
            steps = range(T - 1, 0, -1) if slip == "off_by_one" else range(T - 1, -1, -1)
        xs = input.flip(0) if d and slip == "flip_twice" else input
        for t in steps:
            h = torch.tanh(xs[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        states.append(torch.stack(by_time))
        finals.append(h)
    if slip == "interleave":
        output = torch.stack(states, dim=-1).reshape(T, B, 2 * Hs)
    else:
        output = torch.cat(states, dim=-1)
    h_n = torch.cat(finals, dim=-1).unsqueeze(0) if slip == "h_n_concat" else torch.stack(finals)
    return output, h_n


BACKWARD = r"(backward|reverse)"


@wrong(
    "04.bidirectional",
    "half-finished copy: the backward run uses weight_ih_l0_reverse but the forward weight_hh_l0",
    [
        r"weight_hh_l0_reverse|W_hh\w*_reverse",
        BACKWARD + r".{0,80}(weight_hh|W_hh|recurrent weight)",
        r"(weight_hh|W_hh|recurrent weight).{0,80}" + BACKWARD,
        r"forward('s)? (recurrent )?weights?.{0,60}backward",
    ],
)
def bi_forward_w_hh(module, input, hx=None):
    return _birnn(module, input, hx, "forward_W_hh")


@wrong(
    "04.bidirectional",
    "both directions start from hx[0]; the backward run ignores its own row hx[1]",
    [
        r"hx\[1\]|h_0\[1\]|row 1 of (hx|h_0)",
        BACKWARD + r".{0,60}(initial state|h_0|\bhx\b|own row)",
        r"(initial state|h_0|\bhx\b).{0,60}" + BACKWARD,
        r"(start\w*|begin\w*) from (h_0|hx)\[0\]",  # added after the first run (see the module docstring)
    ],
)
def bi_hx_row_0(module, input, hx=None):
    return _birnn(module, input, hx, "hx_row_0")


@wrong(
    "04.bidirectional",
    "output = stack(..., dim=-1).reshape(T, B, 2H): the two directions' units are interleaved, not [forward | backward]",
    [
        r"interleav|alternat",
        r"stack\w*.{0,60}(reshape|view|dim)|reshape|\bview\b",
        r"halves.{0,60}(mix|interleav|order)",
    ],
)
def bi_interleaved(module, input, hx=None):
    return _birnn(module, input, hx, "interleave")


@wrong(
    "04.bidirectional",
    "h_n = cat([forward final, backward final], -1)[None]: (1, B, 2H) instead of two rows (2, B, H)",
    [
        r"h_n.{0,80}(\(2, |two rows|concat|\bcat\b|stack|shape|rows)",
        r"(concat\w*|\bcat\b).{0,60}h_n",
        r"\(1, \d+, \d+\)",
    ],
    source="https://discuss.pytorch.org/t/concatnation-of-h-t-of-forward-and-h-0-of-backward-in-bidirection-lstm-output/10333",
)
def bi_h_n_concatenated(module, input, hx=None):
    return _birnn(module, input, hx, "h_n_concat")


@wrong(
    "04.bidirectional",
    "flips the input and also walks it from the end: reversed twice, the backward run goes forward in time",
    [
        r"not reversed|(twice|double).{0,30}(revers|flip)|(revers|flip)\w*.{0,30}twice",
        BACKWARD + r" (run|direction) (goes|runs|walks|is run) forward|runs? forward in time",
    ],
)
def bi_flipped_twice(module, input, hx=None):
    return _birnn(module, input, hx, "flip_twice")


@wrong(
    "04.bidirectional",
    "backward loop range(T - 1, 0, -1) stops before step 0: its state there stays zero and h_n[1] is one step short",
    [
        r"off.by.one|range\(T ?- ?1, ?0",
        r"(stops?|ends?) (one|a) step|one step (short|early)|(missing|skips?|never (computes|reaches)) .{0,20}step 0",
        r"step 0.{0,40}(zero|missing|skipped|never)",
    ],
)
def bi_stops_before_step_0(module, input, hx=None):
    return _birnn(module, input, hx, "off_by_one")


@right("04.bidirectional", "the backward run as a forward run over input.flip(0), flipped back")
def bi_by_flipping(module, input, hx=None):
    B, Hs = input.shape[1], module.hidden_size
    h_0 = input.new_zeros(2, B, Hs) if hx is None else hx
    runs, finals = [], []
    for d, (suffix, xs) in enumerate((("_l0", input), ("_l0_reverse", input.flip(0)))):
        W_ih, W_hh, b_ih, b_hh = _params(module, suffix)
        h, states = h_0[d], []
        for x_t in xs:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        run = torch.stack(states)
        runs.append(run.flip(0) if d else run)
        finals.append(h)
    return torch.cat(runs, dim=2), torch.stack(finals)


# =============================================================================================
# 05.stack: my_stack(module, input, hx=None), a stacked one-direction tanh RNN, time first
# =============================================================================================


def _stack(module, input, hx, slip):
    L, Hs = module.num_layers, module.hidden_size
    T, B = input.shape[:2]
    h_0 = torch.zeros(L, B, Hs) if hx is None else hx
    below, finals, outputs = input, [], []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = _params(module, f"_l{k}")
        if slip == "hh_l0":
            W_hh = module.weight_hh_l0
        h = h_0[0] if slip == "hx_row_0" else h_0[k]
        source = input if slip == "reads_input" else below
        states = []
        for t in range(T):
            h = torch.tanh(source[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        below = torch.stack(states)
        outputs.append(below)
        finals.append(h)
    output = torch.cat(outputs, dim=-1) if slip == "cat_all_layers" else below
    h_n = torch.stack([h] * L) if slip == "h_n_top_repeated" else torch.stack(finals)
    return output, h_n


@wrong(
    "05.stack",
    "weight_hh_l0 written without the f-string: every layer uses layer 0's recurrent weights (shapes fit)",
    [
        r"weight_hh_l0|weight_hh_l\{|weight_hh_l[1-9]",
        r"(W_hh|weight_hh|recurrent weight\w*).{0,60}(layer [1-9]|every layer|each layer|all layers|other layers|upper|higher)",
        r"(layer [1-9]|every layer|each layer|all layers).{0,60}(W_hh|weight_hh|recurrent weight|layer 0'?s weights?)",
        r"same (recurrent )?weights?",
    ],
)
def stack_hh_l0(module, input, hx=None):
    return _stack(module, input, hx, "hh_l0")


@wrong(
    "05.stack",
    "every layer starts from hx[0]; layer k > 0 ignores its own row hx[k]",
    [
        r"hx\[(k|l|1|2|layer)\]|h_0\[(k|1|2)\]|(own|its) row",
        r"(initial|h_0|start\w*|hx).{0,60}(layer [1-9]|every layer|each layer|upper|higher)",
        r"(layer [1-9]|every layer|each layer|upper|higher).{0,60}(initial|h_0|start\w*|hx)",
    ],
)
def stack_hx_row_0(module, input, hx=None):
    return _stack(module, input, hx, "hx_row_0")


@wrong(
    "05.stack",
    "every layer reads the original input instead of the states of the layer below (raises when I != H)",
    [
        r"(reads?|feeds?|uses?|gets?) .{0,30}(the )?(original |raw )?input.{0,60}(every|each|all|layer [1-9]|upper|higher)",
        r"(previous|lower|layer below|k ?- ?1)'?s?.{0,40}(states|output)",
        r"wiring|not (the|its) (previous|lower)",
    ],
)
def stack_reads_input(module, input, hx=None):
    return _stack(module, input, hx, "reads_input")


@wrong(
    "05.stack",
    "output concatenates every layer's states, (T, B, L*H), instead of the top layer's only",
    [
        r"(every|all|each) layers?'?s?.{0,60}output|output.{0,60}(every|all|each) layers?",
        r"concat\w*.{0,40}layers|(only|just) the top layer",
    ],
)
def stack_cat_all_layers(module, input, hx=None):
    return _stack(module, input, hx, "cat_all_layers")


@wrong(
    "05.stack",
    "h_n repeats the top layer's final state in every row, instead of each layer's own",
    [
        r"h_n.{0,80}(every|each|all) (layer|row)|(every|each) layer'?s? (own )?(last|final)",
        r"rows? of h_n|h_n\[0\]|h_n\[-2\]",
        r"(repeat|copies|same)\w*.{0,60}(top|last) layer",
    ],
)
def stack_h_n_top_repeated(module, input, hx=None):
    return _stack(module, input, hx, "h_n_top_repeated")


# =============================================================================================
# 06.top_h_n: top_h_n(output, hidden_size): h_n[-2:] from a batch-first bidirectional output (B, T, 2H)
# =============================================================================================


@wrong(
    "06.top_h_n",
    "indexes the batch-first output as if time came first: output[-1, :, :H] and output[0, :, H:]",
    [
        r"batch.first|time.first",
        r"(second|first) (index|dim\w*|axis)|time (axis|dim\w*)|dim(ension)? 1\b",
        r"output\[-1\]|output\[0\]|output\[-1, |output\[0, ",
    ],
)
def top_time_first(output, hidden_size):
    return torch.stack([output[-1, :, :hidden_size], output[0, :, hidden_size:]])


@wrong(
    "06.top_h_n",
    "stacks the two rows on dim=1: (batch, 2, H) instead of (2, batch, H)",
    [
        r"stack\w*.{0,60}(dim|axis)|(dim|axis).{0,40}stack",
        r"dim ?= ?1|dim ?= ?0",
        r"\(\d+, 2, \d+\)|transpos",
    ],
)
def top_stack_dim_1(output, hidden_size):
    return torch.stack([output[:, -1, :hidden_size], output[:, 0, hidden_size:]], dim=1)


@wrong(
    "06.top_h_n",
    "chunk(2, dim=1) cuts the time axis, not the features: the 'halves' are the first and second halves of time",
    [
        r"chunk\w*.{0,60}(dim|axis|time)|split\w*.{0,60}(dim|axis|time)",
        r"dim ?= ?1|dim ?= ?-1",
        r"(time|second|feature|last) (axis|dim\w*)",
    ],
)
def top_chunk_time(output, hidden_size):
    forward, backward = output.chunk(2, dim=1)
    return torch.stack([forward[:, -1], backward[:, 0]])


@wrong(
    "06.top_h_n",
    "slices with the notebook's global H instead of the hidden_size argument",
    [
        r"global|notebook",
        r"hidden_size.{0,60}(argument|ignored|not used|unused)|(ignor|unused|not use)\w*.{0,40}hidden_size",
        r"outside (the|your|its) function|(its|the|your) (own )?arguments?",
    ],
)
def top_global_hidden(output, hidden_size):
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "counts steps from 1: the backward row is taken at output[:, 1] instead of output[:, 0]",
    [
        r"(step|time|index|position) ?1\b|output\[:, ?1",
        r"(time )?step 0|index 0|first (time )?step|t ?= ?0",
        r"off.by.one|second step",
    ],
)
def top_backward_step_1(output, hidden_size):
    return torch.stack([output[:, -1, :hidden_size], output[:, 1, hidden_size:]])


# =============================================================================================
# 08.last_states: last_states(output, lengths): output (T, B, H) time first, lengths (B,) -> (B, H)
# =============================================================================================


@wrong(
    "08.last_states",
    "indexes time with lengths instead of lengths - 1 (IndexError for the longest sequence, one step late for the others)",
    [
        r"lengths ?- ?1|off.by.one",
        r"one (step )?(too )?(late|far)|step after",
        r"out of (range|bounds)|index \d+ is out of",
    ],
)
def last_no_minus_1(output, lengths):
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "batch-first indexing on a time-first output: output[arange(B), lengths - 1]",
    [
        r"batch.first|time.first",
        r"swap\w*|change places|(order|places) of the (two )?ind",
        r"arange.{0,40}(time|first (index|dim))",
    ],
)
def last_batch_first_index(output, lengths):
    return output[torch.arange(output.shape[1]), lengths - 1]


@wrong(
    "08.last_states",
    "gather, then .squeeze() without a dim: a batch of 1 or one unit loses a dimension",
    [
        r"squeeze",
        r"batch (of|=|size) ?(1|one)|\bB ?= ?1|one (unit|sequence)|hidden_size ?(of|=) ?1|single (unit|sequence)",
        r"(dimension|dim) of size 1",
    ],
)
def last_gather_squeeze(output, lengths):
    index = (lengths - 1).view(1, -1, 1).expand(1, output.shape[1], output.shape[2])
    return output.gather(0, index).squeeze()


@wrong(
    "08.last_states",
    "sorts the lengths first (as packing once required): right only when they are already in descending order",
    [
        r"\bsort|unsorted|descending",
        r"order of (the )?(lengths|sequences)|shuffled",
        r"(lengths|rows).{0,40}(permut|reorder|mismatch)",
    ],
)
def last_sorted_lengths(output, lengths):
    ordered = lengths.sort(descending=True).values
    return output[ordered - 1, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "mask arange(T) == lengths (no - 1): picks the step after the last real one, nothing for a full-length sequence",
    [
        r"lengths ?- ?1|off.by.one",
        r"one step (too )?late|step after|first padding",
        r"==\s*lengths|mask",
    ],
)
def last_mask_equals_lengths(output, lengths):
    at_end = torch.arange(output.shape[0])[:, None] == lengths[None, :]  # (T, B)
    return (output * at_end[..., None]).sum(0)


@wrong(
    "08.last_states",
    "lengths.sub_(1) makes the time index in place: the value is right, the caller's lengths drop by one",
    [mutates("lengths"), r"sub_|-= ?1"],
)
def last_sub_in_place(output, lengths):
    lengths.sub_(1)
    return output[lengths, torch.arange(len(lengths))]


@right("08.last_states", "the (B, B, H) table output[lengths - 1], then its diagonal")
def last_diagonal(output, lengths):
    return output[lengths - 1].diagonal(dim1=0, dim2=1).T


# =============================================================================================
# 10.step: lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh) -> (h_t, c_t), gates i, f, g, o
# =============================================================================================


def _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh


TF_FORGET_BIAS = "https://www.tutorialexample.com/add-forget_bias-for-your-custom-lstm-using-tensorflow-a-beginner-guide-tensorflow-tutorial/"
GATE_ORDER = (
    r"(wrong|other|different|tensorflow'?s?|tf'?s?) order|order of the (gates|blocks|chunks)"
    r"|(gates|blocks|chunks) (are |were )?(in the wrong order|swapped|misordered|out of order)|i, ?[gj], ?f, ?o"
)


@wrong(
    "10.step",
    "TensorFlow's LSTMCell order i, j(=g), f, o: the forget and candidate blocks are swapped",
    [
        GATE_ORDER,
        r"(forget|\bf\b|candidate|\bg\b).{0,40}(swap|exchang|mix)",
    ],
    source=TF_FORGET_BIAS,
)
def lstm_tf_gate_order(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, g, f, o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "adds TensorFlow's forget_bias = 1.0 to the forget gate's pre-activation",
    [
        r"forget.{0,60}(bias|\+ ?1|offset|shift)|bias.{0,60}forget",
        r"forget_bias|\+ ?1(\.0)? (to|on|in) (the )?forget",
    ],
    source=TF_FORGET_BIAS,
)
def lstm_forget_bias_one(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f + 1.0) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "gate by gate with copied lines: the input and forget gates both add the output gate's bias block",
    [
        r"bias.{0,80}(output gate|\bo\b|rows? 3H:4H|same block|wrong block|every gate|each gate|all gates)",
        r"(input|forget) gate.{0,60}(output gate'?s?|wrong|other) bias|\bb_o\b|\bbo\b",
        r"copy.?past",
    ],
    source="https://github.com/ddbourgin/numpy-ml/issues/42",
)
def lstm_bias_copy_paste(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    W_i, W_f, W_g, W_o = W_ih.chunk(4)
    U_i, U_f, U_g, U_o = W_hh.chunk(4)
    b_i, b_f, b_g, b_o = (b_ih + b_hh).chunk(4)
    i = torch.sigmoid(x_t @ W_i.T + h_prev @ U_i.T + b_o)
    f = torch.sigmoid(x_t @ W_f.T + h_prev @ U_f.T + b_o)
    g = torch.tanh(x_t @ W_g.T + h_prev @ U_g.T + b_g)
    o = torch.sigmoid(x_t @ W_o.T + h_prev @ U_o.T + b_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "c_t = f * c_prev + f * g: the forget gate scales the candidate, the input gate is never used",
    [
        r"input gate.{0,60}(never|not used|unused|missing|instead)|(instead of|not) (the )?input gate",
        r"f\s*\*\s*g\b|forget gate (multiplies|scales|times) the candidate|candidate.{0,30}(multiplied|scaled) by the forget",
    ],
    source="https://github.com/ARM-software/CMSIS-NN/pull/181",
)
def lstm_forget_times_candidate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    f, g = torch.sigmoid(a_f), torch.tanh(a_g)
    c_t = f * c_prev + f * g
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "c_t = f * c_prev + sigmoid(i) + tanh(g): the input gate and candidate are added, not multiplied",
    [
        r"\+ instead of \*|(add|sum)\w*.{0,40}(instead of|rather than|not) (multipl|product|\*)",
        r"i\s*\+\s*g|sigmoid\(i\) ?\+",
        r"(i|input gate) (and|plus) (the )?(g|candidate) (are )?(added|summed)",
    ],
    source="https://github.com/MartinuzziFrancesco/torchrecurrent/issues/22",
)
def lstm_input_plus_candidate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) + torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "coupled gates f = 1 - i: the forget gate's own rows (H:2H) are never used",
    [
        r"forget gate.{0,60}(never|not used|unused|ignored|1 ?- ?i|coupl|input gate)|\bf ?= ?1 ?- ?i|1 ?- ?i\b",
        r"rows? H:2H.{0,40}(unused|never|ignored)|coupl",
    ],
    source="https://github.com/glample/tagger/issues/25",
)
def lstm_coupled_gates(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, _, a_g, a_o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(a_i)
    c_t = (1 - i) * c_prev + i * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "h_t = tanh(o * c_t): the output gate is applied inside the tanh instead of after it",
    [
        r"tanh\(o",
        r"(inside|outside) (the )?tanh",
        r"order of (the )?(operations|tanh)|tanh.{0,40}(after|before) .{0,20}(gate|\bo\b)",
    ],
)
def lstm_tanh_outside_gate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.tanh(torch.sigmoid(a_o) * c_t), c_t


@wrong(
    "10.step",
    ".chunk(4) without dim cuts the batch rows, not the (B, 4H) gate columns (an unpack or size error)",
    [
        r"chunk\w*.{0,60}(dim|axis|batch|rows)",
        r"dim ?= ?-1|dim ?= ?1\b",
        r"(batch|rows?)\b.{0,30}(split|cut|chunk)",
    ],
)
def lstm_chunk_batch(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "typo: the output gate reads the forget gate's pre-activation, o = sigmoid(a_f)",
    [
        r"output gate.{0,60}(forget|a_f|wrong|rows|pre-?activation|block)|(forget|a_f).{0,60}output gate",
        r"rows? 3H:4H",
        r"typo",
    ],
    source="https://github.com/tensorflow/tensorflow/issues/8325",
)
def lstm_output_gate_from_f(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, _ = _pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_f) * torch.tanh(c_t), c_t


@right("10.step", "functional.linear for both products, torch.split by hidden size")
def lstm_split(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = functional.linear(x_t, W_ih, b_ih) + functional.linear(h_prev, W_hh, b_hh)
    i, f, g, o = torch.split(gates, W_hh.shape[1], dim=1)
    c_t = torch.addcmul(f.sigmoid() * c_prev, i.sigmoid(), g.tanh())
    return o.sigmoid() * c_t.tanh(), c_t


# =============================================================================================
# 11.step: gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) -> h_t, blocks r, z, n, torch's equations
# =============================================================================================


RESET_BEFORE = (
    r"reset.{0,30}(applied )?before the (matrix )?product|(applied|multiplied) before the (matrix )?product"
    r"|reset_after|r (multiplies|scales) h(_prev)? (before|first)"
)


def _gru_blocks(W_ih, W_hh, b_ih, b_hh, order=(0, 1, 2)):
    blocks = [t.chunk(3) for t in (W_ih, W_hh, b_ih, b_hh)]
    return [[b[k] for k in order] for b in blocks]


@wrong(
    "11.step",
    "Keras's reset_after=False form: r multiplies h_prev before the product with W_hn",
    [
        RESET_BEFORE,
        r"r\s*\*\s*h_prev\)?\s*@|\(r ?\* ?h(_prev)?\) ?(@|W)",
    ],
    source="https://discuss.pytorch.org/t/grucell-is-different-in-pytorch-and-tensorflow/6630",
)
def gru_reset_before_product(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_blocks(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev


Z_CONVENTION = (
    r"\bz\b.{0,60}(convention|swap|flip|other way|wrong (term|side))|(convention|swap\w*|flip\w*).{0,40}\bz\b",
    r"update gate.{0,60}(swap|flip|convention|other|wrong (term|side))",
    r"\(1 ?- ?z\) ?\* ?h|z ?\* ?n\b",
)


@wrong(
    "11.step",
    "Wikipedia's convention h_t = (1 - z) * h_prev + z * n: z multiplies the candidate instead of the old state",
    Z_CONVENTION,
    source="https://devhide.com/gru-pytorch-keras-and-formula-in-wiki-are-different-64031287",
)
def gru_z_wiki(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_blocks(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * h_prev + z * n


@wrong(
    "11.step",
    "Keras's block order z, r, h: the r and z blocks are read swapped",
    [
        r"(wrong|other|different|keras'?s?) order|order of the (gates|blocks|chunks)"
        r"|(gates|blocks|chunks) (are |were )?(in the wrong order|swapped|misordered|out of order)|z, ?r, ?[nh]",
        r"swap\w*.{0,30}\b(r|z)\b|\b(r|z)\b.{0,30}swap",
    ],
    source="https://stackoverflow.com/questions/48361376/converting-state-parameters-of-pytorch-lstm-to-keras-lstm",
)
def gru_keras_block_order(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    blocks = _gru_blocks(W_ih, W_hh, b_ih, b_hh, order=(1, 0, 2))
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = blocks
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the old documentation's n = tanh(W_in x + b_in + r * (W_hn h)): b_hn left out",
    [
        r"b_hn.{0,60}(missing|left out|dropped|omitted|not added|forgot)|(missing|without|no|omit\w*|forgot\w*|drop\w*) (the )?b_hn",
        r"bias_hh.{0,40}2H:3H",
    ],
    source="https://github.com/pytorch/pytorch/pull/529",
)
def gru_no_b_hn(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, _) = _gru_blocks(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "h_t = h_prev; h_t.mul_(z).add_((1 - z) * n): the update is written into the caller's h_prev",
    [mutates("h_prev"), r"mul_|add_"],
)
def gru_update_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_blocks(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    h_t = h_prev
    h_t.mul_(z).add_((1 - z) * n)
    return h_t


@wrong(
    "11.step",
    "W_ih.chunk(3, dim=1) and W_hh.chunk(3, dim=1) cut columns, not the r, z, n blocks of rows",
    [
        r"chunk\w*.{0,60}(dim|axis|columns?|rows?)",
        r"dim ?= ?1|dim ?= ?0",
        r"columns|axis",
    ],
)
def gru_chunk_columns(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3, dim=1)
    W_hr, W_hz, W_hn = W_hh.chunk(3, dim=1)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "copy-paste slip: the update gate z uses the reset gate's recurrent block W_hr",
    [
        r"W_hz|W_hr",
        r"(\bz\b|update gate).{0,60}(reset|\br\b'?s?|rows? 0:H)",
        r"rows? H:2H|copy.?past",
    ],
)
def gru_z_reads_w_hr(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, _, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_blocks(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hr.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@right("11.step", "h_t = torch.lerp(n, h_prev, z)")
def gru_lerp(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    return torch.lerp(torch.tanh(i_n + r * h_n), h_prev, z)


# =============================================================================================
# 12.bptt_step: bptt_step(delta_t, h_t, W_hh) -> delta_{t-1} = (delta_t * (1 - h_t**2)) @ W_hh
# =============================================================================================

TRANSPOSED_W = (r"W_hh\.T|W_hh\^T|W_hh\^\{?⊤|transpos", r"(wrong|other) side|W_hh.{0,40}(not|instead)")


@wrong(
    "12.bptt_step",
    "column-vector form (W_hh @ (delta * slope)^T)^T: a product with W_hh^T, i.e. the forward direction's matrix",
    TRANSPOSED_W,
)
def bptt_column_form(delta_t, h_t, W_hh):
    return (W_hh @ (delta_t * (1 - h_t**2)).T).T


@wrong(
    "12.bptt_step",
    "divides by the slope: delta_t / (1 - h_t**2) instead of multiplying",
    [r"1 ?/ ?\(1|reciprocal|divid\w*|invert\w*|inverse of the slope"],
    source="https://github.com/oreilly-japan/deep-learning-from-scratch-2/issues/26",
)
def bptt_divides_by_slope(delta_t, h_t, W_hh):
    return (delta_t / (1 - h_t**2)) @ W_hh


@wrong(
    "12.bptt_step",
    "the slope 1 - tanh(h_t)**2: tanh applied again to h_t, which is already tanh(a_t)",
    [
        r"tanh\(h|tanh of h",
        r"(h_t|it) is already|already (a |the )?tanh|(twice|again).{0,30}tanh|tanh.{0,30}(twice|again)",
        r"pre-?activation",
    ],
    source="https://github.com/thsis/INFOSYS",
)
def bptt_tanh_again(delta_t, h_t, W_hh):
    return (delta_t * (1 - torch.tanh(h_t) ** 2)) @ W_hh


@wrong(
    "12.bptt_step",
    "order of the two factors: delta_t @ W_hh first, then the slope (the same only with one unit)",
    [
        r"order of the (two )?(factors|products|operations)|wrong order",
        r"(after|before) (the )?(product|W_hh|matrix)",
        r"slope.{0,60}(after|before|wrong side|outside|last|first)|(first|then).{0,40}slope",
    ],
)
def bptt_slope_after(delta_t, h_t, W_hh):
    return (delta_t @ W_hh) * (1 - h_t**2)


@wrong(
    "12.bptt_step",
    "the sigmoid's slope h_t * (1 - h_t) instead of tanh's 1 - h_t**2",
    [r"sigmoid|logistic", r"h_t ?\* ?\(1 ?- ?h_t\)|h_t ?\(1 ?- ?h_t\)|h ?\(1 ?- ?h\)"],
)
def bptt_sigmoid_slope(delta_t, h_t, W_hh):
    return (delta_t * h_t * (1 - h_t)) @ W_hh


@wrong(
    "12.bptt_step",
    "h_t.pow_(2) squares the caller's h_t in place (the value returned is right)",
    [mutates("h_t"), r"pow_"],
)
def bptt_pow_in_place(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t.pow_(2))) @ W_hh


@wrong(
    "12.bptt_step",
    "the square is missing: 1 - h_t instead of 1 - h_t**2",
    [
        r"(missing|without|forgot\w*|no|lacks?) (the )?squar|not squared|squar\w* (is )?missing",
        r"1 ?- ?h_t(?! ?(\*\*|\^|²))\b",
    ],
)
def bptt_no_square(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t)) @ W_hh


@right("12.bptt_step", "einsum, with the slope factored as (1 - h)(1 + h)")
def bptt_einsum(delta_t, h_t, W_hh):
    return torch.einsum("bj,jk->bk", delta_t * (1 - h_t) * (1 + h_t), W_hh)


# =============================================================================================
# 13.tag_loss: tag_loss(scores (B, T, C), tags (B, T), lengths (B,)) -> the mean CE over real characters
# =============================================================================================


def _is_real(scores, lengths):
    return torch.arange(scores.shape[1]) < lengths[:, None]


PADDING_COUNTED = (
    r"padding.{0,60}(counted|included|in the (mean|average|loss|denominator))|(count|includ)\w*.{0,40}padding"
)


@wrong(
    "13.tag_loss",
    "masked per-character losses, then .mean() over all B*T positions: the padding's zeros enter the denominator",
    [
        r"mean.{0,40}(all B ?\* ?T|every position|all positions|including (the )?padding|padded positions)|B ?\* ?T",
        r"divid\w*.{0,60}(B ?\* ?T|all positions|every position|padding)|denominator",
        PADDING_COUNTED,
    ],
    source="https://github.com/d2l-ai/d2l-en/issues/2076",
)
def tl_mean_over_all_positions(scores, tags, lengths):
    B, T, C = scores.shape
    losses = functional.cross_entropy(scores.reshape(-1, C), tags.reshape(-1), reduction="none").view(B, T)
    return (losses * _is_real(scores, lengths)).mean()


@wrong(
    "13.tag_loss",
    "the mean of per-text means: each text weighs the same, not each character",
    [
        r"per.(text|sequence) (mean|average|loss)",
        r"mean of (the )?(per|means)|average of averages|mean over (the )?(texts|sequences)",
        r"(texts?|sequences?) (weigh|count)\w* (equally|the same)|weigh\w*.{0,40}(text|sequence)",
        r"mean of each (text|sequence)'?s? mean|short (text|sequence) weighs as much",  # added after the first run
    ],
    source="https://github.com/dmlc/gluon-nlp/issues/238",
)
def tl_mean_of_means(scores, tags, lengths):
    B, T, C = scores.shape
    losses = functional.cross_entropy(scores.reshape(-1, C), tags.reshape(-1), reduction="none").view(B, T)
    per_text = (losses * _is_real(scores, lengths)).sum(1) / lengths
    return per_text.mean()


@wrong(
    "13.tag_loss",
    "the mask is built from the scores (rows not all zero), not from the lengths: the padding counts",
    [
        r"mask.{0,40}(built|made|computed|derived|taken) from (the )?(scores|data|values)|from the scores",
        r"lengths.{0,40}(not used|ignored|unused)|(ignor|not us)\w*.{0,30}lengths",
        PADDING_COUNTED,
    ],
    source="https://github.com/sunlabuiuc/PyHealth/pull/140",
)
def tl_mask_from_scores(scores, tags, lengths):
    is_real = scores.abs().sum(-1) > 0
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "cross_entropy on (B, T, C) scores without moving the class axis to dim 1 (silent when T == C)",
    [
        r"permute|transpos|movedim",
        r"class\w* (dim|axis)|(dim|axis).{0,30}class|dim(ension)? 1\b",
        r"\(B, C, T\)|\(N, C",
    ],
    source="https://whosebug.com/question/6539086/How-to-compute-Cross-Entropy-Loss-for-sequences",
)
def tl_class_axis_last(scores, tags, lengths):
    return functional.cross_entropy(scores, tags.masked_fill(~_is_real(scores, lengths), -100))


@wrong(
    "13.tag_loss",
    "mask arange(T) <= lengths: one padding step per text is counted (none for a text with no padding)",
    [
        r"<=|off.by.one",
        r"one (extra|more|padding) (step|character|position)|first padding (step|position|character)",
    ],
    source="https://github.com/allenai/allennlp/pull/510",
)
def tl_mask_less_equal(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) <= lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "tags[~is_real] = -100 writes into the caller's tags (the value returned is right)",
    [mutates("tags"), r"-100.{0,60}(into|in) (the caller|their|your)"],
)
def tl_tags_in_place(scores, tags, lengths):
    tags[~_is_real(scores, lengths)] = -100
    return functional.cross_entropy(scores.transpose(1, 2), tags)


@wrong(
    "13.tag_loss",
    "softmax applied before cross_entropy, which applies log-softmax itself",
    [
        r"softmax.{0,40}(twice|before|already|first|applied)|(twice|double).{0,20}softmax",
        r"probabilities.{0,40}(not|instead of) (the )?(scores|logits)",
    ],
    source="https://openillumi.com/en/en-pytorch-crossentropy-logits-nllloss-mechanism",
)
def tl_softmax_first(scores, tags, lengths):
    is_real = _is_real(scores, lengths)
    return functional.cross_entropy(scores.softmax(-1)[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "nll_loss on raw scores: the log-softmax is missing",
    [r"nll|(missing|without|no|forgot\w*) (the )?log.?softmax|log.probabilit"],
    source="https://runebook.dev/en/docs/pytorch/generated/torch.nn.softmax",
)
def tl_nll_on_scores(scores, tags, lengths):
    is_real = _is_real(scores, lengths)
    return functional.nll_loss(scores[is_real], tags[is_real])


@right("13.tag_loss", "ignore_index: padding tags replaced by -100 in a copy, classes moved to dim 1")
def tl_ignore_index(scores, tags, lengths):
    kept = tags.masked_fill(~_is_real(scores, lengths), -100)
    return nn.CrossEntropyLoss()(scores.permute(0, 2, 1), kept)


# =============================================================================================
# diagnose: fn(module, input, hx) for a whole nn.RNN / nn.LSTM / nn.GRU
#
# `_layer` is one general layer, written as a careful student would (RNN with tanh or relu, LSTM
# with proj_size, GRU; any num_layers; bidirectional; batch_first; packed sorted or unsorted;
# unbatched; with or without hx), with `slip` switches that each put in one mistake. It works in
# the batch's original order on a padded copy: a step changes a sequence's state only while the
# step is real.
# =============================================================================================


def _kind(module):
    return type(module).__name__  # "RNN", "LSTM" or "GRU"


def _weights(module, layer, suffix, slip):
    found = []
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        at = 0 if slip == "l0_everywhere" else layer
        p = getattr(module, f"{name}_l{at}{suffix}", None)
        if p is not None and slip == "dot_data" and name == "weight_hh":
            p = p.data
        found.append(p)
    found.append(getattr(module, f"weight_hr_l{layer}{suffix}", None))
    return found


def _step(kind, module, x, h, c, weights, slip):
    W_ih, W_hh, b_ih, b_hh, W_hr = weights
    if slip == "elementwise":  # W * x instead of x @ W.T: the same only with one input and one unit
        gi, gh = x * W_ih.T, h * W_hh.T
    else:
        gi, gh = x @ W_ih.T, h @ W_hh.T
    gi = gi + b_ih if b_ih is not None else gi
    gh = gh + b_hh if b_hh is not None else gh
    if kind == "RNN":
        a = gi + gh
        relu = module.nonlinearity == "relu" and slip != "always_tanh"
        return (torch.relu(a) if relu else torch.tanh(a)), None
    if kind == "LSTM":
        a_i, a_f, a_g, a_o = (gi + gh).chunk(4) if slip == "chunk_no_dim" else (gi + gh).chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
        if slip == "c_in_place":
            c_t = c.mul_(f).add_(i * g)
        else:
            c_t = f * c + i * g
        h_t = o * torch.tanh(c if slip == "h_from_c_prev" else c_t)
        if W_hr is not None and slip != "no_proj":
            h_t = h_t @ W_hr.T
        return h_t, c_t
    i_r, i_z, i_n = gi.chunk(3, dim=-1)
    h_r, h_z, h_n = gh.chunk(3, dim=-1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    H_ = W_hh.shape[1]
    if slip == "reset_before":  # Keras's reset_after=False
        b_hn = b_hh[2 * H_ :] if b_hh is not None else 0
        n = torch.tanh(i_n + (r * h) @ W_hh[2 * H_ :].T + b_hn)
    elif slip == "b_hn_outside":
        b_hn = b_hh[2 * H_ :] if b_hh is not None else 0
        n = torch.tanh(i_n + b_hn + r * (h_n - b_hn))
    else:
        n = torch.tanh(i_n + r * h_n)
    if slip == "z_flipped":
        return z * n + (1 - z) * h, None
    return (1 - z) * n + z * h, None


def _repack(output, lengths, like):
    """`output` (T, B, *) in the batch's original order as a PackedSequence laid out like `like`."""
    order = like.sorted_indices if like.sorted_indices is not None else torch.arange(len(lengths))
    packed = pack_padded_sequence(output[:, order], lengths[order], enforce_sorted=True)
    return PackedSequence(packed.data, like.batch_sizes, like.sorted_indices, like.unsorted_indices)


def _layer(module, input, hx=None, slip=None):
    kind = _kind(module)
    L, D = module.num_layers, 2 if module.bidirectional else 1
    Hc = module.hidden_size
    Hs = getattr(module, "proj_size", 0) or Hc
    packed = isinstance(input, PackedSequence)
    unbatched = not packed and input.dim() == 2
    if packed:
        x, lengths = pad_packed_sequence(input)  # (T, B, I), the batch in its original order
    elif unbatched:
        x, lengths = input.unsqueeze(1), None
    elif module.batch_first:
        if slip == "batch_first_view":
            B_, T_, I_ = input.shape
            x = input.reshape(T_, B_, I_)
        else:
            x = input.transpose(0, 1)
        lengths = None
    else:
        x, lengths = input, None
    T, B = x.shape[:2]
    if hx is None:
        h_0, c_0 = x.new_zeros(L * D, B, Hs), x.new_zeros(L * D, B, Hc)
    else:
        h_0, c_0 = hx if kind == "LSTM" else (hx, None)
        if unbatched:
            h_0 = h_0.unsqueeze(1)
            c_0 = c_0.unsqueeze(1) if c_0 is not None else None
        if packed and slip == "hx_sorted_again":  # hx is already in the batch's order: sorting it is wrong
            h_0 = h_0[:, input.sorted_indices]
            c_0 = c_0[:, input.sorted_indices] if c_0 is not None else None
        if kind == "LSTM" and slip == "ignore_c_0":
            c_0 = torch.zeros_like(c_0)
    if lengths is not None:
        bound = lengths[None, :] + (1 if slip == "mask_off_by_one" else 0)
        real = torch.arange(T)[:, None] < bound  # (T, B): True while step t is inside sequence b
    below = x
    finals, cells = [], []
    for layer in range(L):
        outputs, cell_runs, computed_order = [], [], []
        for d in range(D):
            weights = _weights(module, layer, "_reverse" if d else "", slip)
            row = layer + d if slip == "hx_row_layer_plus_d" else layer * D + d
            if slip == "hx_layer_0_only" and layer > 0:
                h, c = x.new_zeros(B, Hs), None
            else:
                h = h_0[row]
                c = c_0[row] if c_0 is not None else None
            if kind == "LSTM" and c is None:
                c = x.new_zeros(B, Hc)
            masked = lengths is not None and slip != "no_mask" and not (d and slip == "no_mask_backward")
            by_time, cell_by_time, in_order = [None] * T, [None] * T, []
            for t in range(T - 1, -1, -1) if d else range(T):
                h_t, c_t = _step(kind, module, below[t], h, c, weights, slip)
                if masked:
                    keep = real[t][:, None]
                    h_t = torch.where(keep, h_t, h)
                    c_t = torch.where(keep, c_t, c) if c_t is not None else None
                h, c = h_t, c_t
                if slip == "tbptt_2" and t % 2 == 1:  # truncated BPTT: the graph is cut every 2 steps
                    h = h.detach()
                by_time[t], cell_by_time[t] = h_t, c_t
                in_order.append(h_t)
            outputs.append(torch.stack(by_time))
            cell_runs.append(torch.stack(cell_by_time) if c is not None else None)
            computed_order.append(torch.stack(in_order))
            finals.append(h)
            cells.append(torch.tanh(c) if slip == "c_n_tanh" and c is not None else c)
        if layer < L - 1 and slip == "naive_bi_wiring":  # the backward run handed up in the order it was computed
            below = torch.cat([outputs[0], *computed_order[1:]], dim=-1)
        elif layer < L - 1 and slip == "feed_c_up":  # the next layer reads the cell states
            below = torch.cat(cell_runs, dim=-1)
        else:
            below = torch.cat(outputs, dim=-1)  # (T, B, D * Hs)
    output = below
    if slip == "h_n_direction_major" and D == 2:
        order = [layer * D + d for d in range(D) for layer in range(L)]
        finals, cells = [finals[k] for k in order], [cells[k] for k in order]
    h_n = torch.stack(finals)
    c_n = torch.stack(cells) if kind == "LSTM" else None
    if packed:
        output = _repack(output, lengths, input)
    elif unbatched and slip == "unbatched_keep_batch":
        pass
    elif unbatched and slip == "squeeze_all":
        output, h_n = output.squeeze(), h_n.squeeze()
        c_n = c_n.squeeze() if c_n is not None else None
    elif unbatched:
        output, h_n = output.squeeze(1), h_n.squeeze(1)
        c_n = c_n.squeeze(1) if c_n is not None else None
    elif module.batch_first and slip != "batch_first_output_time_first":
        output = output.transpose(0, 1)
    if module.batch_first and slip == "h_n_batch_first":
        h_n = h_n.transpose(0, 1)
        c_n = c_n.transpose(0, 1) if c_n is not None else None
    if kind == "LSTM":
        return output, (h_n, c_n)
    return output, h_n


PADDING = r"padd|last real|real (step|length)|own (last|length|end)|each sequence'?s? (last|end|length)"
SORT_ORDER = r"\bsort|unsorted_indices|sorted_indices|permut|order of (the )?(batch|sequences|rows)"
GRAD_CUT = r"detach|\.data\b|no_grad|graph (is )?(cut|broken)|(cut|break)\w* (the )?graph|truncat"


# --- RNN --------------------------------------------------------------------------------------


@wrong(
    case("RNN", 3, 4, nonlinearity="relu"),
    "always tanh: the layer's nonlinearity='relu' is ignored",
    [r"relu|nonlinearity"],
)
def dg_relu_ignored(module, input, hx=None):
    return _layer(module, input, hx, "always_tanh")


@wrong(
    case("RNN", 3, 4, lengths=[3, 5, 2]),
    "no mask on a packed batch: the state runs on through the padding, so h_n is the state after T steps",
    [PADDING, r"h_n.{0,80}(length|padd)|lengths?\b.{0,40}(ignor|not used|unused)"],
    source="https://github.com/pytorch/pytorch/issues/1811",
)
def dg_packed_no_mask(module, input, hx=None):
    return _layer(module, input, hx, "no_mask")


@wrong(
    case("RNN", 2, 3, lengths=[5, 4, 2], enforce_sorted=True, seed=1),
    "mask t < lengths + 1 (an off-by-one): each shorter sequence takes one padding step before h_n",
    [PADDING, r"off.by.one|one (extra|more) step|<=|lengths ?\+ ?1|first padding"],
    source="https://github.com/allenai/allennlp/pull/510",
)
def dg_mask_one_step_late(module, input, hx=None):
    return _layer(module, input, hx, "mask_off_by_one")


@wrong(
    case("RNN", 3, 4, batch_first=True),
    "batch-first input put time first with reshape/view instead of transpose: sequences are mixed",
    [r"\bview\b|reshape", r"transpos|permute", r"batch.first"],
    source="https://discuss.pytorch.org/t/the-hidden-states-of-two-reverse-sequence-on-bilstm-mismatch/119521",
)
def dg_batch_first_view(module, input, hx=None):
    return _layer(module, input, hx, "batch_first_view")


@wrong(
    case("RNN", 4, 4, 3),
    "the parameters of layer 0 (_l0) are used for every layer: shapes fit because input_size == hidden_size",
    [
        r"_l0\b.{0,60}(every|all|each|other|higher|upper) layers?|(every|all|each|other|higher|upper) layers?.{0,60}(_l0|layer 0)",
        r"same (weights|parameters)|layer 0'?s (weights|parameters)",
        r"weight_(ih|hh)_l[12]|_l\{",
    ],
)
def dg_l0_everywhere(module, input, hx=None):
    return _layer(module, input, hx, "l0_everywhere")


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True, hx=True),
    "hx row for layer l, direction d taken as l + d instead of l * 2 + d (right for layer 0 only)",
    [
        r"(layer|l) ?\* ?2 ?\+|2 ?\* ?(layer|l) ?\+|num_directions ?\* ?(layer|l)",
        # narrowed after the first run: it matched the generic hint "which row of hx it starts from"
        r"(wrong|other) rows? of (hx|h_0)|rows? of (hx|h_0).{0,40}(wrong|layer \+ direction|l ?\+ ?d)",
        r"hx\[[0-9]\]|h_0\[[0-9]\]",
    ],
)
def dg_hx_row_l_plus_d(module, input, hx=None):
    return _layer(module, input, hx, "hx_row_layer_plus_d")


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True),
    "h_n stacked direction-major [l0 fwd, l1 fwd, l0 bwd, l1 bwd] instead of layer * 2 + direction",
    [
        r"layout|direction.major",
        r"layer ?\* ?2 ?\+ ?dir|2 ?\* ?layer ?\+",
        r"(order|arrange\w*|layout) of (the )?(rows|h_n)|rows? of h_n.{0,40}(order|arrange|layout|swap)|h_n\[[12]\]",
        r"h_n'?s? rows.{0,30}(wrong )?order|forward rows,? then (all )?backward rows",  # added after the first run
    ],
)
def dg_h_n_direction_major(module, input, hx=None):
    return _layer(module, input, hx, "h_n_direction_major")


@wrong(
    case("RNN", 3, 4, unbatched=True, hx=True),
    "unbatched: squeeze() without a dim, so a one-step input (or one unit) loses more than the batch dimension",
    [
        r"squeeze",
        r"(one|single|1).step.{0,80}shape|shape.{0,80}(one|single|1).step|seq_len ?= ?1|\bT ?= ?1",
    ],
)
def dg_unbatched_squeeze_all(module, input, hx=None):
    return _layer(module, input, hx, "squeeze_all")


@wrong(
    case("RNN", 3, 4),
    "weight_hh_l0.data: the values are right, but weight_hh_l0 gets no gradient",
    [GRAD_CUT, r"weight_hh\w*.{0,80}grad|grad\w*.{0,80}weight_hh", r"no gradient|not (tracked|recorded)"],
    source="https://e-com-net.com/article/1279942790742032384.htm",
)
def dg_weight_hh_data(module, input, hx=None):
    return _layer(module, input, hx, "dot_data")


@wrong(
    case("RNN", 3, 4, seed=3),
    "h.copy_(new) into one preallocated state: every entry of the list is the same tensor, so output repeats the last state",
    [
        r"in.place|inplace|copy_",
        r"alias|same tensor|(list|stack)\w*.{0,60}(same|one) (tensor|object)",
        r"(every|each|all) (time )?steps?.{0,60}(same|final|last) state",
    ],
    source="https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html",
)
def dg_state_aliased(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    T, B = input.shape[:2]
    h = input.new_zeros(B, module.hidden_size) if hx is None else hx[0].clone()
    states = []
    for t in range(T):
        h.copy_(torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh))
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, seed=5),
    "the zero initial state is made on device='cuda' (copied from a GPU notebook): fails on a CPU layer",
    [r"cuda|device|gpu"],
)
def dg_state_on_cuda(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    h = torch.zeros(input.shape[1], module.hidden_size, device="cuda") if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 1, 1),
    "W * x (elementwise) instead of x @ W.T: right for one input and one unit, wrong or raising for any other size",
    [
        r"element.?wise|\*.{0,20}instead of (@|matmul)",
        r"matmul|matrix (product|multiplication)|broadcast",
    ],
)
def dg_elementwise_weights(module, input, hx=None):
    return _layer(module, input, hx, "elementwise")


# --- LSTM -------------------------------------------------------------------------------------


@wrong(
    case("LSTM", 3, 4, lengths=[2, 5, 4]),
    "steps the packed data in its sorted order, and returns h_n and c_n still sorted (unsorted_indices not applied)",
    [SORT_ORDER, r"batch (items?|rows?).{0,40}(swap|mix|order)"],
    source="https://github.com/pytorch/pytorch/pull/15225",
)
def dg_packed_h_n_left_sorted(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = _params(module)
    Hs, B = module.hidden_size, int(input.batch_sizes[0])
    h, c = input.data.new_zeros(B, Hs), input.data.new_zeros(B, Hs)
    steps, start = [], 0
    for size in input.batch_sizes.tolist():
        x_t = input.data[start : start + size]
        start += size
        a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h[:size] @ W_hh.T + b_hh).chunk(4, dim=1)
        c_t = torch.sigmoid(a_f) * c[:size] + torch.sigmoid(a_i) * torch.tanh(a_g)
        h_t = torch.sigmoid(a_o) * torch.tanh(c_t)
        h, c = torch.cat([h_t, h[size:]]), torch.cat([c_t, c[size:]])
        steps.append(h_t)
    output = PackedSequence(torch.cat(steps), input.batch_sizes, input.sorted_indices, input.unsorted_indices)
    return output, (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    case("LSTM", 3, 4, publish=True),
    "reads the notebook's layer (a global) instead of its `module` argument",
    [
        r"global|notebook",
        r"outside (the|your|its) function|(its|the|your) (own )?arguments?",
        r"instead of (the|its|your) (module|argument|layer)|not (the|its) module|another layer",
    ],
)
def dg_reads_notebook_layer(module, input, hx=None):
    return _layer(NOTEBOOK_LAYER, input, hx)


@wrong(
    case("LSTM", 3, 4, 2),
    "h_t = o * tanh(c_prev): the output reads the old cell state instead of the new one",
    [
        r"c_prev|old cell|previous cell|c_\{?t ?- ?1",
        r"new cell|c_t\b.{0,40}(not|instead)|tanh\(c",
    ],
)
def dg_h_from_old_cell(module, input, hx=None):
    return _layer(module, input, hx, "h_from_c_prev")


@wrong(
    case("LSTM", 3, 4, hx=True),
    "the given c_0 is ignored: the cell starts from zeros even when hx = (h_0, c_0) is passed",
    [
        r"\bc_0\b|\bc0\b|initial cell|hx\[1\]",
        r"cell state.{0,60}(initial|start|given|hx)|(initial|start|given|hx).{0,60}cell state",
    ],
)
def dg_ignores_c_0(module, input, hx=None):
    return _layer(module, input, hx, "ignore_c_0")


@wrong(
    case("LSTM", 2, 3, bidirectional=True),
    "c_n returned as tanh(c): the squashed cell, not the cell state itself",
    [r"c_n.{0,80}tanh|tanh.{0,80}c_n", r"c_n.{0,60}(squash|activation)"],
)
def dg_c_n_squashed(module, input, hx=None):
    return _layer(module, input, hx, "c_n_tanh")


@wrong(
    case("LSTM", 3, 4, hx=True, seed=2),
    "c.mul_(f).add_(i * g): the cell is updated in place, starting inside the caller's c_0",
    [mutates(r"hx|c_0|h_0"), r"mul_|add_|modified by an inplace"],
    source="https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html",
)
def dg_cell_in_place(module, input, hx=None):
    return _layer(module, input, hx, "c_in_place")


@wrong(
    case("LSTM", 3, 4),
    "returns (output, h_n, c_n) flat instead of (output, (h_n, c_n))",
    [
        r"tuple|pair|\(h_n, c_n\)|nested|structure",
        r"three (values|items|things|elements)|3 (values|items|elements)",
    ],
)
def dg_flat_triple(module, input, hx=None):
    output, (h_n, c_n) = _layer(module, input, hx)
    return output, h_n, c_n


@wrong(
    case("LSTM", 2, 3, batch=4),
    ".chunk(4) without dim on the (B, 4H) pre-activations: cuts the batch rows, not the gate columns (a size or unpack error)",
    [
        r"chunk\w*.{0,60}(dim|axis|batch|rows)",
        r"dim ?= ?-1|dim ?= ?1\b",
        r"(batch|rows?)\b.{0,30}(split|cut|chunk)",
    ],
)
def dg_chunk_batch(module, input, hx=None):
    return _layer(module, input, hx, "chunk_no_dim")


@wrong(
    case("LSTM", 3, 4, 2),
    "layer 1 reads layer 0's cell states c instead of its hidden states h",
    [
        r"\bc\b.{0,30}(instead|rather) of \bh\b",
        r"cell states?.{0,60}(next|layer [1-9]|above|feed|input|upper)",
        r"(next|upper|layer [1-9]).{0,60}cell state|reads? (the )?(cell|\bc\b)",
    ],
)
def dg_feeds_cell_up(module, input, hx=None):
    return _layer(module, input, hx, "feed_c_up")


@wrong(
    case("LSTM", 3, 4, bidirectional=True, batch_first=True, lengths=[3, 5, 4]),
    "packed bidirectional: the backward run is not masked, so it starts at the padded end instead of each sequence's last real step",
    [PADDING, r"(backward|reverse).{0,60}(start|begin|padd)|(start|begin)\w*.{0,40}(padd|last real|own)"],
    source="https://github.com/pytorch/pytorch/issues/1811",
)
def dg_backward_from_padding(module, input, hx=None):
    return _layer(module, input, hx, "no_mask_backward")


@wrong(
    case("LSTM", 3, 4, batch_first=True),
    "h_n and c_n transposed to batch-first too: they are (layers * directions, batch, H) whatever batch_first says",
    [
        r"(h_n|c_n).{0,80}(batch.first|transpos|never|not batch)",
        r"batch.first.{0,80}(h_n|c_n|states)",
        r"h_n has shape.{0,120}same sizes in another order",  # added after the first run
    ],
    source="https://theneuralbase.com/pytorch/learn/intermediate/input-shape-for-rnns-seq-batch-features/",
)
def dg_h_n_batch_first(module, input, hx=None):
    return _layer(module, input, hx, "h_n_batch_first")


@wrong(
    case("LSTM", 3, 5, proj_size=2),
    "proj_size ignored: h_t is not projected by weight_hr_l0",
    [r"proj|weight_hr"],
)
def dg_no_projection(module, input, hx=None):
    return _layer(module, input, hx, "no_proj")


# --- GRU --------------------------------------------------------------------------------------


@wrong(
    case("GRU", 3, 4, 2, bidirectional=True, batch_first=True, hx=True, lengths=[4, 5, 2]),
    "works in the batch's own order (padded), yet reorders hx by sorted_indices as if it were sorted",
    [SORT_ORDER, r"(hx|h_0).{0,60}(order|rows)|(order|rows).{0,60}(hx|h_0)"],
    source="https://github.com/pytorch/pytorch/pull/15225",
)
def dg_hx_sorted_again(module, input, hx=None):
    return _layer(module, input, hx, "hx_sorted_again")


@wrong(
    case("GRU", 2, 3, batch_first=True, seq_len=4, batch=4),
    "batch_first: output returned time first (the transpose back is missing); shapes agree because T == B",
    [r"batch.first|time.first", r"transpos|permute|(dims?|axes) 0 and 1|swap\w* .{0,20}(axes|dims)"],
)
def dg_output_left_time_first(module, input, hx=None):
    return _layer(module, input, hx, "batch_first_output_time_first")


@wrong(
    case("GRU", 3, 4, 2, bidirectional=True),
    "stacked bidirectional: the backward states are handed to the next layer in the order they were computed",
    [
        r"flip\w* (back|the backward)|not flipped|(computed|reversed|run) order|order (it was|they were) computed|time order",
        r"(backward|reverse).{0,60}(order|stored|position).{0,40}(next|layer [1-9]|above)|wiring",
    ],
)
def dg_naive_bi_wiring(module, input, hx=None):
    return _layer(module, input, hx, "naive_bi_wiring")


@wrong(
    case("GRU", 3, 4, unbatched=True),
    "unbatched input handled as a batch of 1, but output and h_n keep that batch dimension",
    [r"unbatched|no batch|batch dim", r"squeeze|2-?d\b|two dim"],
)
def dg_unbatched_keeps_batch(module, input, hx=None):
    return _layer(module, input, hx, "unbatched_keep_batch")


@wrong(
    case("GRU", 3, 4, 2),
    "z on the wrong term: h_t = z * n + (1 - z) * h_prev",
    Z_CONVENTION,
    source="https://gitcode.net/paddlepaddle/Paddle/-/issues/5493",
)
def dg_gru_z_flipped(module, input, hx=None):
    return _layer(module, input, hx, "z_flipped")


@wrong(
    case("GRU", 3, 4, bidirectional=True),
    "Keras's reset_after=False: r multiplies h before the product with W_hn",
    [RESET_BEFORE, r"r\s*\*\s*h_prev\)?\s*@|\(r ?\* ?h(_prev)?\) ?(@|W)"],
    source="https://discuss.pytorch.org/t/grucell-is-different-in-pytorch-and-tensorflow/6630",
)
def dg_gru_reset_before(module, input, hx=None):
    return _layer(module, input, hx, "reset_before")


@wrong(
    case("GRU", 3, 5, batch_first=True),
    "b_hn added outside the reset gate: n = tanh(i_n + b_hn + r * (h W_hn^T))",
    [
        r"b_hn.{0,60}(outside|inside|reset|not (multiplied|scaled|gated))",
        r"bias.{0,40}(outside|not inside) (the )?reset",
    ],
    source="https://github.com/tracel-ai/burn/pull/2704",
)
def dg_gru_b_hn_outside(module, input, hx=None):
    return _layer(module, input, hx, "b_hn_outside")


@wrong(
    case("GRU", 3, 4, 3, hx=True),
    "only layer 0 starts from hx; layers 1 and 2 start from zeros",
    [
        r"hx\[(1|2|l|k|layer)\]|h_0\[(1|2)\]",
        r"(initial|h_0|hx|start\w*).{0,60}(layer [1-9]|upper|higher|other layers|every layer)",
        r"(layer [1-9]|upper|higher|other layers).{0,60}(initial|h_0|hx|zeros|start)",
    ],
)
def dg_hx_layer_0_only(module, input, hx=None):
    return _layer(module, input, hx, "hx_layer_0_only")


@wrong(
    case("GRU", 3, 4),
    "truncated BPTT inside the layer: h.detach() every 2 steps, so gradients stop after two steps back",
    [GRAD_CUT, r"gradient\w*.{0,60}(flow|stop|cut|through time|earlier steps|back in time)"],
    source="https://www.codegenes.net/blog/how-to-use-detach-in-hidden-state-loss-backward-pytorch",
)
def dg_truncated_every_2(module, input, hx=None):
    return _layer(module, input, hx, "tbptt_2")


@wrong(
    case("GRU", 3, 4, hx=True, seed=4),
    "writes h_n back into the caller's hx (hx.copy_(h_n)), keeping state as a stateful layer would",
    [mutates(r"hx|h_0"), r"copy_|modified by an inplace"],
)
def dg_writes_back_hx(module, input, hx=None):
    output, h_n = _layer(module, input, hx)
    if hx is not None:
        hx.copy_(h_n)
    return output, h_n


# --- correct versions of the whole layer ---------------------------------------------------------


@right(case("GRU", 3, 4, 2, bidirectional=True, batch_first=True, hx=True, lengths=[4, 5, 2]), "the general layer")
def dg_right_gru_packed(module, input, hx=None):
    return _layer(module, input, hx)


@right(case("LSTM", 3, 4, 3, bidirectional=True, hx=True, proj_size=2), "the general layer, with proj_size")
def dg_right_lstm_proj(module, input, hx=None):
    return _layer(module, input, hx)


@right(case("RNN", 2, 3, unbatched=True, hx=True, nonlinearity="relu"), "the general layer, unbatched")
def dg_right_rnn_unbatched(module, input, hx=None):
    return _layer(module, input, hx)
