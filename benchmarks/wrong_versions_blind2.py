"""A fifth set of student versions, written blind to the checks: how well do they name a student's bug?

benchmarks/wrong_versions.py and benchmarks/wrong_versions_holdout.py are the sets the checks were
tuned on, benchmarks/wrong_versions_fresh.py was written after both, and
benchmarks/wrong_versions_blind.py was the first set written blind to the checker. This set was
written after all four, blind as well: without opening the checks' catalogue of bugs, their
diagnosis, their exercises, slips and answer key (helpers/bugs.py, helpers/diagnosis.py,
helpers/exercises.py, helpers/argument_slips.py, helpers/wiring_slips.py, helpers/gates.py,
helpers/shape_slips.py, helpers/answer_key.py, helpers/solutions/), the tests (tests/), the other
sets' versions (only the first 130 lines of the first blind set were read: its docstring, its record
format `Version`, `wrong`, `right` and its `case` builder, copied here and not imported, so that the
sets stay separate), the benchmark's own code (benchmarks/diagnosis_quality.py) or its reports
(build/). No version went through `check_code` or `diagnose` while it was written. What was used: the
exercises' statements and stubs in notebooks/NN_*.ipynb (the cells calling `check_code`), the worked
answers `helpers.exercises.solution(key)` prints, the README's description of `check_code` and
`diagnose`, /work/shared/FACTS.md, PyTorch's documentation, and the slips learners post about
hand-written RNN, LSTM and GRU code (cited beside a version where a public thread shows it).

It aims at families the first blind set's docstring does not list, or at listed ones in new forms:
math.tanh or np.tanh on tensors, a Python float from .item(), tanh of each term separately, the
recurrent term without h_prev or written elementwise (right only for one unit), a column product
(W_hh @ h_prev.T), F.linear handed a transposed weight, addmm's bias copied, the two biases merged in
place into b_ih, .data and torch.no_grad() cutting gradients, buffers made with zeros_like(input),
torch.empty in float32 or zeros in the default dtype under float64, the batch read from dim 0,
h_n by view(1, 1, -1) or without its layer dimension, hx used whole, both directions from hx[0],
the backward run done forwards and flipped, reversed by swapping its ends (right only for T <= 3) or
with a negative step, cat without dim, final states written back into hx, a stack whose layers all
read the input, carry one state from layer to layer, run top-down inside a time loop (a layer reads
the step before), read the final state of the layer below, run a hard-coded two layers or one too
few, a missing f-string in a weight name, weights or biases of layer 0 everywhere, h_n from the
first step or the top layer only, h_n layer rows direction-major, the layer above reading swapped
halves or only one direction, batch_first ignored, a view in place of a transpose, TF's (i, j, f, o),
CS231n's (i, f, o, g) and Keras' (z, r, h) gate orders, a coupled input/forget gate, the cell state
not carried, detached, read old, from the wrong row of hx or handed to the other direction, (h, c)
swapped or flattened, c_n = h_n, the reset gate on the input term too or before the product, the
other z convention, r and z's recurrent blocks swapped, the backward slope without tanh's form, with
W_hh.T, after the product, from row 0 (right only for B = 1) or with the wrong sign, the loss without
a mask, with a (T, B) mask, over every place, after a softmax, as nll without log_softmax, with float
targets or with tags written in place, index_select/diagonal/gather without expand for last states,
lengths without - 1 or clamped, lengths - 1 changed in place, the notebook's B or H read as globals,
packed sequences unpacked batch first, read from .data by view, returned padded, h_n at the last
padded step, c_n after the padding, a state zeroed once its sequence ends, and a backward run that
flips the padding in front or whose h_n is taken at each sequence's end.

Each record has a name, a target (an exercise key for `helpers.exercises.check_code`, or a case
builder returning (module, input, hx) for `helpers.diagnose`), the function, its true bug in one
line, and `names`: regular expressions (case-insensitive), at least one of which a message that
truly names this bug would match (its cause, or its precise place: the term, weight, gate, step,
direction, layer or row at fault). All `names` were written before any version went through the
checks. Correct versions, in unusual styles, have `correct=True` and must pass. Every version was
checked against torch directly, never through check_code or diagnose (benchmarks/verify_blind2.py,
which exits non-zero on a failure): each wrong one differs from the worked answer or the torch layer
in values, shape, dtype, gradients, an error or an argument changed in place, on the case given (for
an exercise, on inputs of the kinds its statement names); each right one matches within 1e-5. The
owner runs the set once, with `python benchmarks/diagnosis_quality.py --set blind2`.
"""

import math
from dataclasses import dataclass, field

import numpy as np
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


NOTEBOOK_LAYER = None  # the notebook's own layer, set by a case built with publish=True


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
    dtype=None,
    **options,
):
    """A builder of a fresh (module, input, hx) for diagnose: a seeded layer, its input (packed when `lengths`)."""
    cls = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}[kind]
    spec = dict(
        kind=kind,
        input_size=input_size,
        hidden_size=hidden_size,
        num_layers=num_layers,
        bidirectional=bidirectional,
        batch_first=batch_first,
        seq_len=seq_len,
        batch=batch,
        hx=hx,
        lengths=lengths,
        enforce_sorted=enforce_sorted,
        seed=seed,
        publish=publish,
        unbatched=unbatched,
        dtype=dtype,
        **options,
    )

    def build():
        global NOTEBOOK_LAYER
        torch.manual_seed(seed)
        module = cls(
            input_size, hidden_size, num_layers, bidirectional=bidirectional, batch_first=batch_first, **options
        )
        if dtype is not None:
            module = module.to(dtype)
        shape = (batch, seq_len, input_size) if batch_first else (seq_len, batch, input_size)
        x = torch.randn(*shape, dtype=dtype or torch.float32)
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
            h_0 = torch.randn(*size, dtype=dtype or torch.float32)
            state = (h_0, torch.randn(*cell, dtype=dtype or torch.float32)) if kind == "LSTM" else h_0
        if publish:  # the notebook's own variable: a student's function may read it instead of its argument
            NOTEBOOK_LAYER = module
        return module, x, state

    words = [f"{num_layers} layers" if num_layers > 1 else "", "bidirectional" if bidirectional else ""]
    words += ["batch_first" if batch_first else "", "unbatched" if unbatched else ""]
    if lengths is not None:
        words.append(f"packed {'sorted' if enforce_sorted else 'unsorted'} lengths {list(lengths)}")
    words += ["given hx" if hx else "", str(dtype).replace("torch.", "") if dtype is not None else ""]
    words += [f"{k}={v}" for k, v in options.items()]
    build.kind = kind
    build.label = f"{kind}({input_size}, {hidden_size}) " + ", ".join(w for w in words if w)
    build.spec = spec
    return build


# Shared pieces of the expressions below. A message that says an argument was changed in place names
# that bug; so does one that names the term, weight, gate, step, direction, layer or row at fault.
CHANGED = r"(changed|changes|modified|modifies|in[- ]place|overwr|mutat|wrote (in)?to|writes (in)?to|written (in)?to)"


def changed(argument):
    """Expressions for 'the function changed `argument` in place'."""
    return (rf"{argument}.{{0,80}}{CHANGED}", rf"{CHANGED}.{{0,80}}{argument}")


# The notebooks' own variables, which a student's function may read by mistake instead of its arguments.
H = 50  # notebook 06's hidden size (the forum module's)
B, T = 3, 4  # notebook 08's batch: three sequences padded to four steps


def weights(module, layer=0, reverse=False):
    """A student's own helper (correct): (W_ih, W_hh, b_ih, b_hh) of one layer and direction."""
    suffix = f"_l{layer}" + ("_reverse" if reverse else "")
    return tuple(getattr(module, name + suffix) for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))


# Expressions shared by several versions.
BACKWARD_FINAL = (
    r"backward.{0,80}(h_n|final|last|end|first step|step 0|step 1\b|t ?= ?0|output\[:?,? ?0)",
    r"h_n\[-?1\].{0,60}backward",
    r"(h_n|final state).{0,60}backward",
    r"backward run ends",
)
EVERY_LAYER = (
    r"h_n.{0,80}(every|each|all|lower) layers?",
    r"(every|each|all|lower) layers?.{0,60}h_n",
    r"num_layers",
    r"layer (0|1|2)\b.{0,40}(missing|absent|h_n)",
)
GATE_ORDER = (
    r"gate order",
    r"order of the (gates|blocks|chunks)",
    r"(blocks|chunks|gates).{0,40}(order|swapped|mixed)",
)
BATCH_FIRST = (
    r"batch_first",
    r"batch.first",
    r"time.first",
    r"transpos",
    r"(seq_len|time).{0,40}(batch).{0,20}(swap|order)",
)
PADDED_LAST = (
    r"lengths? ?(-|minus) ?1",
    r"last (real|valid|true)",
    r"own (last|length|end)",
    r"(after|through|into|inside|in) (the )?padding",
    r"padded step",
    r"each sequence'?s? (end|last)",
)

# =============================================================================================
# 01.step: h_t = tanh(w_ih * x_t + w_hh * h_prev), from tensors x_t, h_prev, w_ih, w_hh
# =============================================================================================


@wrong(
    "01.step",
    "math.tanh on tensors: a Python float for one value (no gradient), an error for several values",
    (r"math\.tanh", r"torch\.tanh", r"(several|four|many) values", r"python (float|number)", r"not a tensor"),
)
def step_math_tanh(x_t, h_prev, w_ih, w_hh):
    return math.tanh(w_ih * x_t + w_hh * h_prev)


@wrong(
    "01.step",
    "the weights trade places: w_hh multiplies x_t and w_ih multiplies h_prev",
    (r"swap", r"trade", r"exchang", r"w_ih.{0,40}h_prev", r"w_hh.{0,40}x_t", r"other way round", r"wrong weight"),
)
def step_weights_swapped(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_hh * x_t + w_ih * h_prev)


@wrong(
    "01.step",
    "tanh of each term separately, then added: tanh(w_ih x_t) + tanh(w_hh h_prev)",
    (
        r"tanh.{0,60}(each term|separately|both terms|of the sum|whole sum)",
        r"(add|sum).{0,40}(before|inside).{0,20}tanh",
        r"inside (the|one) tanh",
        r"two tanh",
    ),
)
def step_tanh_each_term(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t) + torch.tanh(w_hh * h_prev)


@wrong("01.step", "h_prev scaled in place (h_prev *= w_hh) before it is used", changed("h_prev"))
def step_scales_h_prev_in_place(x_t, h_prev, w_ih, w_hh):
    h_prev *= w_hh
    return torch.tanh(w_ih * x_t + h_prev)


@wrong(
    "01.step",
    "the recurrent term drops h_prev: w_hh is added alone",
    (r"h_prev", r"h_\{?t ?- ?1", r"previous state", r"recurren", r"w_hh ?\* ?h"),
)
def step_no_h_prev(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh)


@wrong(
    "01.step",
    "returns a Python float with .item(): no tensor, no gradient, an error for several values",
    (r"\.item", r"python (float|number)", r"not a tensor", r"(several|four|many) values", r"a float"),
)
def step_item(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * h_prev).item()


@right("01.step", "tanh through the sigmoid identity tanh(a) = 2 sigmoid(2a) - 1, terms stacked and summed")
def step_sigmoid_identity(x_t, h_prev, w_ih, w_hh):
    a = torch.stack(torch.broadcast_tensors(w_ih * x_t, w_hh * h_prev)).sum(0)
    return 2 * torch.sigmoid(2 * a) - 1


@right("01.step", "torch.addcmul and the tensor method .tanh()")
def step_addcmul(x_t, h_prev, w_ih, w_hh):
    return torch.addcmul(w_ih * x_t, torch.as_tensor(w_hh), h_prev).tanh()


# =============================================================================================
# 02.loop: my_rnn(module, input, hx=None) for one layer and one direction, returning (output, h_n)
# =============================================================================================


@wrong(
    "02.loop",
    "h_n returned without its layer dimension: (batch, hidden_size) instead of (1, batch, hidden_size)",
    (r"h_n.{0,80}(shape|dimension|unsqueeze|layer dim|\(1, ?batch|num_layers)", r"unsqueeze", r"layer dimension"),
)
def loop_h_n_no_layer_dim(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output = torch.stack(states)
    return output, output[-1]


@wrong(
    "02.loop",
    "the state kept with hx's layer dimension, (1, batch, hidden): output gets an extra dimension",
    (
        r"hx\[0\]",
        r"hx.{0,60}(row|layer dim|first dim|leading|shape)",
        r"h_0.{0,40}shape",
        r"extra dimension",
        r"output.{0,40}shape",
    ),
)
def loop_hx_whole(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(1, input.shape[1], module.hidden_size) if hx is None else hx
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h


@wrong(
    "02.loop",
    "output preallocated with torch.zeros_like(input): input_size wide, each state broadcast into it",
    (r"zeros_like", r"input_size", r"output.{0,60}(shape|size|width|last dim)"),
)
def loop_zeros_like_input(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    output = torch.zeros_like(input)
    for t in range(input.shape[0]):
        h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        output[t] = h
    return output, h.unsqueeze(0)


@wrong(
    "02.loop",
    "the weights read through .data: right values, no gradient reaches the parameters",
    (r"\.data", r"detach", r"gradient", r"autograd", r"no grad"),
)
def loop_weights_data(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0.data, module.weight_hh_l0.data
    b_ih, b_hh = module.bias_ih_l0.data, module.bias_hh_l0.data
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h_0 sized with input.shape[0] (seq_len) as its batch",
    (
        r"batch.{0,40}(dim|shape\[1\]|size)",
        r"shape\[1\]",
        r"seq_len",
        r"h_0.{0,40}(shape|size)",
        r"zeros.{0,40}(shape|size)",
    ),
)
def loop_batch_from_dim0(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(input.shape[0], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h_n made with h.view(1, 1, -1): right only for a batch of one",
    (r"view", r"h_n.{0,60}(shape|batch)", r"batch (of|size)", r"reshape", r"unsqueeze"),
)
def loop_h_n_view_batch_one(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.view(1, 1, -1)


@wrong(
    "02.loop",
    "the whole loop under torch.no_grad(): right values, no gradients",
    (r"no_grad", r"gradient", r"autograd", r"detach", r"graph"),
)
def loop_under_no_grad(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    with torch.no_grad():
        h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
        states = []
        for x_t in input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@right("02.loop", "functional.linear into a preallocated output, h_n sliced from it")
def loop_preallocated_linear(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    output = input.new_zeros(T, B, H)
    h = input.new_zeros(B, H) if hx is None else hx[0]
    for t in range(T):
        a = functional.linear(input[t], module.weight_ih_l0, module.bias_ih_l0)
        h = torch.tanh(a + functional.linear(h, module.weight_hh_l0, module.bias_hh_l0))
        output[t] = h
    return output, output[-1:].clone()


# =============================================================================================
# 03.step_matrices: h_t = tanh(x_t W_ih^T + b_ih + h_prev W_hh^T + b_hh) for a batch
# =============================================================================================


@wrong(
    "03.step_matrices",
    "the recurrent product written as a column, W_hh @ h_prev.T, added to row-shaped terms",
    (r"W_hh.{0,60}(transpos|\.T|order|column)", r"h_prev.{0,40}(transpos|\.T)", r"transpos", r"\(hidden_size, ?batch"),
)
def matrices_column_recurrent(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + W_hh @ h_prev.T + b_hh)


@wrong(
    "03.step_matrices",
    "functional.linear given W_hh.T: linear transposes itself, so W_hh is used untransposed",
    (r"W_hh.{0,60}(transpos|\.T)", r"transpos.{0,60}W_hh", r"linear.{0,60}(transpos|W_hh)", r"twice"),
)
def matrices_linear_double_transpose(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(functional.linear(x_t, W_ih, b_ih) + functional.linear(h_prev, W_hh.T, b_hh))


@wrong(
    "03.step_matrices",
    "copy-paste in addmm: b_ih added twice, b_hh never",
    (r"b_hh", r"b_ih.{0,40}(twice|two times|double)", r"twice"),
)
def matrices_addmm_bias_copied(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.addmm(b_ih, x_t, W_ih.T) + torch.addmm(b_ih, h_prev, W_hh.T))


@wrong(
    "03.step_matrices",
    "the biases merged in place: bias = b_ih; bias += b_hh changes b_ih (an error on a leaf that needs grad)",
    changed("b_ih") + (r"b_ih.{0,40}(alias|same tensor)", r"leaf"),
)
def matrices_bias_merged_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    bias = b_ih
    bias += b_hh
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + bias)


@wrong(
    "03.step_matrices",
    "np.tanh on a tensor: an error when the tensor needs grad",
    (r"numpy", r"\bnp\.", r"ndarray", r"torch\.tanh"),
)
def matrices_numpy_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return np.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)


@wrong(
    "03.step_matrices",
    "h_prev * W_hh elementwise, as in the one-unit step: right only with one hidden unit",
    (
        r"element.?wise",
        r"matrix (product|multipl)",
        r"matmul",
        r"recurrent (term|product)",
        r"h_prev ?@",
        r"product.{0,40}h_prev",
    ),
)
def matrices_elementwise_recurrent(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev * W_hh + b_hh)


@wrong(
    "03.step_matrices",
    "h_prev.mm(W_hh) without .t() while x_t's product has it: silent because W_hh is square",
    (r"W_hh.{0,60}(transpos|\.T|\.t\(\))", r"transpos.{0,60}W_hh", r"W_hh\^T"),
)
def matrices_hh_untransposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t.mm(W_ih.t()) + b_ih + h_prev.mm(W_hh) + b_hh)


@right("03.step_matrices", "einsum with the weights' (out, in) indices")
def matrices_einsum(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.einsum("bi,hi->bh", x_t, W_ih) + torch.einsum("bk,hk->bh", h_prev, W_hh) + b_ih + b_hh)


@right("03.step_matrices", "one product on the concatenated [x_t, h_prev] and [W_ih, W_hh]")
def matrices_concatenated(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.cat([x_t, h_prev], dim=1) @ torch.cat([W_ih, W_hh], dim=1).T + (b_ih + b_hh))


# =============================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), a one-layer bidirectional RNN, time first
# =============================================================================================


@wrong(
    "04.bidirectional",
    "both directions start from hx[0]: the backward run ignores its own row, hx[1]",
    (r"hx\[1\]", r"row 1", r"backward.{0,60}(initial|h_0|start|own row)", r"initial.{0,40}backward"),
)
def birnn_both_from_row0(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_start = torch.zeros(B, H) if hx is None else hx[0]
    outs, finals = [], []
    for reverse in (False, True):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, reverse)
        h, by_time = h_start, [None] * T
        for t in reversed(range(T)) if reverse else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        outs.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(outs, dim=2), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "h_n from output[-1] cut into halves: the backward row is its first computed step, not its last",
    BACKWARD_FINAL + (r"output\[-1\]",),
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def birnn_h_n_from_last_row(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    outs = []
    for d in range(2):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, d == 1)
        h, by_time = h_0[d], [None] * T
        for t in range(T - 1, -1, -1) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        outs.append(torch.stack(by_time))
    output = torch.cat(outs, dim=-1)
    return output, output[-1].reshape(B, 2, H).transpose(0, 1)


@wrong(
    "04.bidirectional",
    "the backward run uses weight_hh_l0 (the forward direction's recurrent weight)",
    (
        r"weight_hh_l0_reverse",
        r"backward.{0,60}(W_hh|weight_hh|recurrent weight)",
        r"(W_hh|weight_hh).{0,60}backward",
        r"_reverse",
    ),
)
def birnn_backward_forward_W_hh(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    W_hh = module.weight_hh_l0
    fwd, h = [], h_0[0]
    for t in range(T):
        h = torch.tanh(input[t] @ module.weight_ih_l0.T + module.bias_ih_l0 + h @ W_hh.T + module.bias_hh_l0)
        fwd.append(h)
    h_f = h
    bwd, h = [None] * T, h_0[1]
    for t in range(T - 1, -1, -1):
        h = torch.tanh(
            input[t] @ module.weight_ih_l0_reverse.T
            + module.bias_ih_l0_reverse
            + h @ W_hh.T
            + module.bias_hh_l0_reverse
        )
        bwd[t] = h
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], dim=2), torch.stack([h_f, h])


@wrong(
    "04.bidirectional",
    "torch.cat of the two directions without dim: joined along time, (2 seq_len, batch, H)",
    (r"\bdim\b", r"concat", r"cat.{0,40}(axis|dim|last)", r"output.{0,40}shape", r"2 ?\* ?seq_len", r"2T"),
)
def birnn_cat_without_dim(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    outs, finals = [], []
    for d in range(2):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, d == 1)
        h, by_time = h_0[d], [None] * T
        for t in range(T - 1, -1, -1) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        outs.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(outs), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "the backward run goes forwards in time with the reverse weights, and its outputs are then flipped",
    (r"backward.{0,60}(order|revers|last step|direction|start|forwards)", r"revers", r"from the last step"),
)
def birnn_backward_run_forwards_then_flipped(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    outs, finals = [], []
    for d in range(2):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, d == 1)
        h, states = h_0[d], []
        for t in range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        states = torch.stack(states)
        outs.append(states.flip(0) if d else states)
        finals.append(h)
    return torch.cat(outs, dim=2), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "the backward direction's input bias is bias_ih_l0 (the forward one)",
    (r"bias_ih_l0_reverse", r"backward.{0,60}bias", r"bias.{0,60}backward", r"b_ih.{0,40}(reverse|backward)"),
)
def birnn_backward_forward_b_ih(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    outs, finals = [], []
    for d, suffix in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = module.bias_ih_l0, getattr(module, "bias_hh" + suffix)
        h, by_time = h_0[d], [None] * T
        for t in range(T - 1, -1, -1) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        outs.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(outs, dim=2), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "each final state written back into hx (h_0[d] = h with h_0 = hx): the caller's hx is changed",
    changed("hx"),
)
def birnn_finals_written_into_hx(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    outs = []
    for d in range(2):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, d == 1)
        h, by_time = h_0[d], [None] * T
        for t in range(T - 1, -1, -1) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        outs.append(torch.stack(by_time))
        h_0[d] = h
    return torch.cat(outs, dim=2), h_0


@wrong(
    "04.bidirectional",
    "the backward states put back in time order by swapping the first and last steps only: right for T <= 3",
    (r"revers", r"flip", r"time order", r"computed order", r"backward.{0,60}(order|steps?)", r"middle steps"),
)
def birnn_swap_ends(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    outs, finals = [], []
    for d in range(2):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, d == 1)
        h, states = h_0[d], []
        for t in range(T - 1, -1, -1) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        if d:
            states[0], states[-1] = states[-1], states[0]
        outs.append(torch.stack(states))
        finals.append(h)
    return torch.cat(outs, dim=2), torch.stack(finals)


@right(
    "04.bidirectional", "torch.rnn_tanh_cell, the backward run on input.flip(0), one sequence of the batch at a time"
)
def birnn_per_sequence_cells(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = input.new_zeros(2, B, H) if hx is None else hx
    outputs, h_n = [], []
    for b in range(B):
        halves, ends = [], []
        for d, seq in enumerate((input[:, b : b + 1], input[:, b : b + 1].flip(0))):
            h, states = h_0[d, b : b + 1], []
            for x_t in seq:
                h = torch.rnn_tanh_cell(x_t, h, *weights(module, 0, d == 1))
                states.append(h)
            states = torch.cat(states)
            halves.append(states.flip(0) if d else states)
            ends.append(h[0])
        outputs.append(torch.cat(halves, dim=1))
        h_n.append(torch.stack(ends))
    return torch.stack(outputs, dim=1), torch.stack(h_n, dim=1)


# =============================================================================================
# 05.stack: my_stack(module, input, hx=None), a stacked one-direction RNN, time first
# =============================================================================================


@wrong(
    "05.stack",
    "every layer reads the network's input instead of the states of the layer below",
    (
        r"layer below",
        r"previous layer",
        r"reads? (the )?(network'?s? )?input",
        r"layer_input",
        r"layer k ?- ?1",
        r"k ?- ?1",
    ),
)
def stack_every_layer_reads_input(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    finals = []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, states = h_0[k], []
        for x_t in input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        finals.append(h)
    return torch.stack(states), torch.stack(finals)


@wrong(
    "05.stack",
    "h_n's rows in reverse layer order: the top layer first",
    (
        r"order",
        r"revers",
        r"layer 0 first",
        r"top.{0,30}first",
        r"h_n\[0\].{0,40}layer 0",
        r"rows.{0,40}(swapped|flipped|upside)",
    ),
)
def stack_h_n_top_first(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.insert(0, h)
    return layer_input, torch.stack(finals)


@wrong("05.stack", "h_n made of the top layer's last state repeated for every layer", EVERY_LAYER)
def stack_h_n_top_repeated(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input = input
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
    return layer_input, torch.stack([layer_input[-1]] * L)


@wrong(
    "05.stack",
    "the f of an f-string forgotten: getattr(module, 'weight_hh_l{k}') looks up a weight that does not exist",
    (r"f-?string", r"weight_hh_l\{k\}", r"no attribute", r"attribute", r"weight name"),
)
def stack_missing_f_string(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, "weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "one state carried up the stack: layer k starts from layer k - 1's last state, not from its own row of hx",
    (
        r"initial.{0,60}(layer|h_0\[k\]|row k)",
        r"h_0\[k\]",
        r"hx\[k\]",
        r"row k",
        r"carried",
        r"(own|its) (initial|starting) state",
        r"start.{0,40}(zeros|own)",
    ),
)
def stack_state_carried_up(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0]
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        states = []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "an extra tanh between layers: the next layer reads tanh of the states below",
    (r"tanh.{0,60}(between|twice|again|extra|layer)", r"between layers", r"extra", r"twice"),
)
def stack_tanh_between_layers(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        output = torch.stack(states)
        layer_input = torch.tanh(output)
        finals.append(h)
    return output, torch.stack(finals)


@wrong(
    "05.stack",
    "range(L - 1): the top layer is never run, output is the layer below it",
    (
        r"top layer",
        r"last layer",
        r"num_layers",
        r"range",
        r"missing layer",
        r"one layer (short|too few|less)",
        r"layer \d.{0,40}(never|missing|not run)",
    ),
)
def stack_one_layer_short(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L - 1):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "every layer starts from hx[0]: the rows of hx for layers 1 and up are ignored",
    (r"hx\[k\]", r"h_0\[k\]", r"row k", r"(own|its) row", r"initial.{0,60}layer", r"layer.{0,40}initial", r"hx\[0\]"),
)
def stack_every_layer_from_row0(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, states = h_0[0], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@right("05.stack", "recursion over layers, torch.rnn_tanh_cell for the step")
def stack_recursive(module, input, hx=None, k=0):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    if k == L:
        return input, input.new_zeros(0, B, H)
    h = input.new_zeros(B, H) if hx is None else hx[k]
    states = []
    for x_t in input:
        h = torch.rnn_tanh_cell(x_t, h, *weights(module, k))
        states.append(h)
    output, above = stack_recursive(module, torch.stack(states), hx, k + 1)
    return output, torch.cat([h.unsqueeze(0), above])


# =============================================================================================
# 06.top_h_n: top_h_n(output, hidden_size), h_n[-2:] from a batch-first bidirectional output
# =============================================================================================


@wrong(
    "06.top_h_n",
    "both rows from the last step (reshape and transpose of output[:, -1]): the backward row is wrong",
    BACKWARD_FINAL + (r"output\[:, ?-1\]",),
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def top_last_step_reshaped(output, hidden_size):
    return output[:, -1].reshape(output.shape[0], 2, hidden_size).transpose(0, 1)


@wrong(
    "06.top_h_n",
    "indexed as if time first: output[-1, :, :H] and output[0, :, H:] pick sequences, not steps",
    BATCH_FIRST + (r"(time|step).{0,40}(second|index 1|dim(ension)? ?1)", r"output\[:, ?-1"),
)
def top_time_first_indexing(output, hidden_size):
    H = hidden_size
    return torch.stack([output[-1, :, :H], output[0, :, H:]])


@wrong(
    "06.top_h_n",
    "the rows stacked backward first",
    (r"forward first", r"backward first", r"order", r"swap", r"h_n\[-2\]", r"rows?.{0,40}(swapped|exchanged)"),
)
def top_backward_first(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, H:], output[:, -1, :H]])


@wrong(
    "06.top_h_n",
    "H taken from output.shape[-1] (2H) instead of hidden_size: the forward row is 2H wide, the backward one empty",
    (r"hidden_size", r"\b2H\b", r"2 ?\* ?H", r"halves?", r"width", r"shape\[-1\]"),
)
def top_width_from_output(output, hidden_size):
    H = output.shape[-1]
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "torch.cat instead of torch.stack: (2 batch, H) with no direction dimension",
    (r"torch\.stack", r"\bstack\b", r"\bcat\b", r"\(2, ?batch", r"shape"),
)
def top_cat_not_stack(output, hidden_size):
    H = hidden_size
    return torch.cat([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "the halves' slices swapped: the last step's backward half and the first step's forward half",
    (r"halves?", r":H\b", r"\bH:", r"forward.{0,40}(half|slice)", r"backward.{0,40}(half|slice)", r"slice"),
)
def top_halves_swapped(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, -1, H:], output[:, 0, :H]])


@wrong(
    "06.top_h_n",
    "the notebook's global H (50) used instead of the hidden_size argument",
    (r"hidden_size", r"global", r"notebook'?s? (variable|H)", r"argument", r"\bH ?= ?50"),
)
def top_global_H(output, hidden_size):
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "stacked along dim=1: (batch, 2, H) instead of (2, batch, H)",
    (r"\bdim\b", r"shape", r"\(2, ?batch", r"axis", r"\(batch, ?2"),
)
def top_stack_dim1(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, -1, :H], output[:, 0, H:]], dim=1)


@right("06.top_h_n", "a (batch, seq_len, 2, H) view indexed with the pairs (step -1, half 0) and (step 0, half 1)")
def top_paired_index(output, hidden_size):
    four = output.view(output.shape[0], output.shape[1], 2, hidden_size)
    return four[:, [-1, 0], [0, 1]].transpose(0, 1)


# =============================================================================================
# 08.last_states: last_states(output, lengths), each sequence's last real state from (T, B, H)
# =============================================================================================

LAST_INDEX = (
    r"\(B, ?B",
    r"\bpairs?\b",
    r"arange",
    r"(own|its) (time|step)",
    r"batch index",
    r"index.{0,40}(both|two|each) (dim|index)",
)


@wrong(
    "08.last_states",
    "index_select on time alone: every sequence's last step for every sequence, (B, B, H)",
    LAST_INDEX + (r"index_select",),
)
def last_index_select(output, lengths):
    return output.index_select(0, lengths - 1)


@wrong(
    "08.last_states",
    "lengths used as the time index without - 1: one step past each end (an error for the longest)",
    (
        r"lengths? ?(-|minus) ?1",
        r"off.by.one",
        r"one step (late|after|too far|past)",
        r"out of (range|bounds)",
        r"counted from 0",
    ),
)
def last_without_minus_one(output, lengths):
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "indexed batch first, output[arange(B), lengths - 1], on a time-first output",
    BATCH_FIRST + (r"\(T, ?B", r"change(d)? places", r"order of the ind"),
)
def last_batch_first_indexing(output, lengths):
    return output[torch.arange(output.shape[1]), lengths - 1]


@wrong(
    "08.last_states",
    "output[-1]: the last padded step, zeros for every shorter sequence",
    PADDED_LAST + (r"output\[-1\]",),
)
def last_padded_step(output, lengths):
    return output[-1]


@wrong(
    "08.last_states",
    "gather with the index not expanded over the hidden units: (B, 1), the first unit only",
    (r"gather", r"expand", r"hidden (units|size)", r"\(B, ?1\)", r"first unit", r"shape"),
)
def last_gather_not_expanded(output, lengths):
    index = (lengths - 1).view(1, -1, 1)
    return output.gather(0, index).squeeze(0)


@wrong(
    "08.last_states",
    "torch.diagonal of output[lengths - 1]: the right rows, but transposed to (H, B)",
    (r"diagonal", r"transpos", r"\(H, ?B", r"shape"),
)
def last_diagonal(output, lengths):
    return torch.diagonal(output[lengths - 1])


@wrong("08.last_states", "lengths -= 1 changes the caller's lengths in place", changed("lengths"))
def last_lengths_decremented(output, lengths):
    lengths -= 1
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "a one-hot time mask arange(T) == lengths (no - 1): the step after each end, zeros",
    (r"lengths? ?(-|minus) ?1", r"off.by.one", r"one step (late|after|too far|past)", r"mask"),
)
def last_mask_off_by_one(output, lengths):
    pick = torch.arange(output.shape[0])[:, None] == lengths  # (T, B)
    return (output * pick[..., None]).sum(0)


@wrong(
    "08.last_states",
    "the notebook's global B (3 sequences) used for the batch index",
    (r"global", r"notebook'?s? (variable|batch)", r"batch size", r"shape\[1\]", r"\bB ?= ?3"),
)
def last_global_batch(output, lengths):
    return output[lengths - 1, torch.arange(B)]


@right("08.last_states", "gather along time with the index expanded over the hidden units")
def last_gather(output, lengths):
    index = (lengths - 1).view(1, -1, 1).expand(1, output.shape[1], output.shape[2])
    return output.gather(0, index)[0]


@right("08.last_states", "a loop over the batch, each sequence sliced to its length")
def last_loop_slices(output, lengths):
    return torch.stack([output[: int(n), b][-1] for b, n in enumerate(lengths)])


# =============================================================================================
# 10.step: lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh) -> (h_t, c_t), gates i, f, g, o
# =============================================================================================

FORGET = (r"forget gate", r"\bf\b", r"f_t", r"a_f")
INPUT_GATE = (r"input gate", r"\bi\b", r"i_t", r"a_i", r"i ?\* ?g")


@wrong(
    "10.step",
    "TensorFlow's LSTMCell order (i, j, f, o): the candidate read from the forget block and the forget gate from g's",
    GATE_ORDER + FORGET + (r"candidate", r"\bg\b", r"i, ?j, ?f, ?o", r"tensorflow"),
)
def lstm_tf_order(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, j, f, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=1)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(j)
    return torch.sigmoid(o) * torch.tanh(c_t), c_t


@wrong("10.step", "the input gate left out: c_t = f * c_prev + g", INPUT_GATE)
def lstm_no_input_gate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "h_t = o * c_t: the tanh on the cell state left out",
    (r"tanh ?\(c", r"tanh of (the )?(c|cell)", r"c_t.{0,40}tanh", r"tanh.{0,40}(c_t|cell)"),
)
def lstm_h_without_tanh(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * c_t, c_t


@wrong(
    "10.step",
    "h_t = tanh(o * c_t): the output gate inside the tanh",
    (r"output gate", r"\bo\b.{0,40}(inside|outside|tanh)", r"o_t", r"tanh ?\(o", r"tanh\(c_t\)"),
)
def lstm_output_gate_inside_tanh(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.tanh(torch.sigmoid(a_o) * c_t), c_t


@wrong(
    "10.step",
    "returns (c_t, h_t): the pair in the wrong order",
    (r"order", r"swap", r"\(h_t, ?c_t\)", r"h_t (comes )?first", r"pair", r"exchang"),
)
def lstm_returns_c_first(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return c_t, torch.sigmoid(a_o) * torch.tanh(c_t)


@wrong(
    "10.step",
    "the forget gate scales h_prev instead of c_prev: c_t = f * h_prev + i * g",
    (r"c_prev", r"c_\{?t ?- ?1", r"(old|previous) cell", r"cell state", r"f ?\* ?h_prev") + FORGET,
)
def lstm_forget_scales_h(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * h_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the sigmoid applied to all four blocks before chunk: the candidate g is a sigmoid, not a tanh",
    (r"candidate", r"\bg\b", r"g_t", r"cell input", r"tanh.{0,40}(g|candidate)", r"sigmoid.{0,60}(all|four|every|g\b)"),
)
def lstm_sigmoid_before_chunk(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = torch.sigmoid(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong("10.step", "copy-paste: the forget gate computed from a_i, the input gate's block", FORGET + (r"copy",))
def lstm_forget_from_input_block(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f = torch.sigmoid(a_i), torch.sigmoid(a_i)
    c_t = f * c_prev + i * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "a coupled input and forget gate (CIFG): c_t = f * c_prev + (1 - f) * g, the i block unused",
    INPUT_GATE + (r"1 ?- ?f", r"coupled", r"cifg"),
)
def lstm_coupled_gates(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    f = torch.sigmoid(a_f)
    c_t = f * c_prev + (1 - f) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@right("10.step", "the weights viewed as (4, H, in) blocks, einsum per gate, torch.addcmul for c_t")
def lstm_einsum_blocks(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    Hs = h_prev.shape[1]
    a = torch.einsum("bi,ghi->gbh", x_t, W_ih.view(4, Hs, -1)) + torch.einsum(
        "bk,ghk->gbh", h_prev, W_hh.view(4, Hs, Hs)
    )
    a = a + (b_ih + b_hh).view(4, 1, Hs)
    i, f, g, o = a[0].sigmoid(), a[1].sigmoid(), a[2].tanh(), a[3].sigmoid()
    c_t = torch.addcmul(f * c_prev, i, g)
    return o * c_t.tanh(), c_t


# =============================================================================================
# 11.step: gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) -> h_t, blocks r, z, n
# =============================================================================================

RESET = (r"reset gate", r"\br\b", r"r_t", r"r ?\*")
UPDATE = (r"update gate", r"\bz\b", r"z_t", r"1 ?- ?z")


@wrong(
    "11.step",
    "Keras' block order (z, r, h): the reset and update blocks swapped",
    GATE_ORDER + RESET + UPDATE + (r"r, ?z, ?n", r"keras", r"swap"),
)
def gru_keras_order(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_iz, W_ir, W_in = W_ih.chunk(3)
    W_hz, W_hr, W_hn = W_hh.chunk(3)
    b_iz, b_ir, b_in = b_ih.chunk(3)
    b_hz, b_hr, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the reset gate on h_prev before the product, b_hn outside it: (r * h_prev) @ W_hn.T + b_hn",
    RESET + (r"before the product", r"after the product", r"r ?\* ?h_prev", r"b_hn", r"pytorch.{0,20}(#)?99531"),
    source="https://github.com/pytorch/pytorch/issues/99531",
)
def gru_reset_before_product(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the other convention for z: h_t = z * n + (1 - z) * h_prev",
    UPDATE + (r"convention", r"share of the old state"),
)
def gru_other_z_convention(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = (x_t @ W_ih.T + b_ih).chunk(3, dim=1)
    gh = (h_prev @ W_hh.T + b_hh).chunk(3, dim=1)
    r, z = torch.sigmoid(gi[0] + gh[0]), torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(gi[2] + r * gh[2])
    return z * n + (1 - z) * h_prev


@wrong(
    "11.step",
    "b_hn added outside the reset gate: r * (h_prev @ W_hn.T) + b_hn",
    (r"b_hn", r"bias.{0,60}(reset|inside|outside|r\b)", r"(reset|r\b).{0,60}bias"),
)
def gru_b_hn_outside_reset(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T) + b_hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the reset gate multiplies the input term too: n = tanh(r * (x W_in + b_in + h W_hn + b_hn))",
    RESET + (r"input term", r"W_in", r"b_in", r"x_t.{0,40}(reset|r\b)"),
)
def gru_reset_on_input_term(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = (x_t @ W_ih.T + b_ih).chunk(3, dim=1)
    gh = (h_prev @ W_hh.T + b_hh).chunk(3, dim=1)
    r, z = torch.sigmoid(gi[0] + gh[0]), torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(r * (gi[2] + gh[2]))
    return (1 - z) * n + z * h_prev


@wrong("11.step", "h_prev scaled in place by z (h_prev.mul_(z)) to form z * h_prev", changed("h_prev"))
def gru_h_prev_scaled_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = (x_t @ W_ih.T + b_ih).chunk(3, dim=1)
    gh = (h_prev @ W_hh.T + b_hh).chunk(3, dim=1)
    r, z = torch.sigmoid(gi[0] + gh[0]), torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(gi[2] + r * gh[2])
    return (1 - z) * n + h_prev.mul_(z)


@wrong(
    "11.step",
    "r and z take each other's recurrent blocks: r uses W_hz, b_hz and z uses W_hr, b_hr",
    RESET + UPDATE + (r"W_hz", r"W_hr", r"recurrent block"),
)
def gru_recurrent_blocks_crossed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hz.T + b_hz)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hr.T + b_hr)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "LSTM habit: one sum of both products chunked, n = tanh(a_n) with no reset gate at all",
    RESET + (r"no reset", r"reset.{0,40}(missing|left out|unused)"),
)
def gru_no_reset(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a_r, a_z, a_n = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
    z = torch.sigmoid(a_z)
    return (1 - z) * torch.tanh(a_n) + z * h_prev


@right("11.step", "functional.linear per block with torch.lerp for the mix")
def gru_lerp(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    i_r, i_z, i_n = functional.linear(x_t, W_ih, b_ih).split(h_prev.shape[1], dim=1)
    h_r, h_z, h_n = functional.linear(h_prev, W_hh, b_hh).split(h_prev.shape[1], dim=1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    n = torch.tanh(torch.addcmul(i_n, r, h_n))
    return torch.lerp(n, h_prev, z)


# =============================================================================================
# 12.bptt_step: bptt_step(delta_t, h_t, W_hh) -> delta_{t-1} for a tanh RNN
# =============================================================================================

SLOPE = (r"slope", r"1 ?- ?h_t ?(\*\*|\^) ?2", r"1 ?- ?h_t", r"tanh'", r"derivative of tanh", r"tanh.{0,20}derivative")


@wrong(
    "12.bptt_step",
    "a product with W_hh.T: the forward product's transpose used backwards",
    (r"W_hh\.T", r"W_hh\^T", r"transpos", r"not by W_hh"),
)
def bptt_W_hh_transposed(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)) @ W_hh.T


@wrong(
    "12.bptt_step",
    "the slope from tanh(h_t): 1 - tanh(h_t)**2, tanh applied to a state that is already tanh",
    SLOPE + (r"tanh ?\(h_t",),
)
def bptt_slope_of_tanh_h(delta_t, h_t, W_hh):
    return (delta_t * (1 - torch.tanh(h_t) ** 2)) @ W_hh


@wrong("12.bptt_step", "the slope written 1 - h_t: the square left out", SLOPE + (r"squar",))
def bptt_slope_not_squared(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t)) @ W_hh


@wrong("12.bptt_step", "no tanh slope at all: delta_t @ W_hh", SLOPE + (r"diag",))
def bptt_no_slope(delta_t, h_t, W_hh):
    return delta_t @ W_hh


@wrong(
    "12.bptt_step",
    "the slope of row 0 only, as torch.diag(1 - h_t[0]**2): right only for a batch of one",
    (
        r"batch of one",
        r"(each|every|other) (row|sequence)",
        r"rows? 0",
        r"row.{0,20}only",
        r"h_t\[0\]",
        r"diag",
        r"B ?= ?1",
    ),
)
def bptt_slope_row0_diag(delta_t, h_t, W_hh):
    return delta_t @ torch.diag(1 - h_t[0] ** 2) @ W_hh


@wrong("12.bptt_step", "the slope with the wrong sign: h_t**2 - 1", SLOPE + (r"sign", r"negat", r"minus"))
def bptt_slope_sign(delta_t, h_t, W_hh):
    return (delta_t * (h_t**2 - 1)) @ W_hh


@wrong(
    "12.bptt_step",
    "the slope applied after the product with W_hh instead of before",
    SLOPE + (r"before.{0,40}W_hh", r"after.{0,40}W_hh", r"order"),
)
def bptt_slope_after_product(delta_t, h_t, W_hh):
    return (delta_t @ W_hh) * (1 - h_t**2)


@wrong("12.bptt_step", "delta_t *= 1 - h_t**2 changes the caller's delta_t", changed("delta_t"))
def bptt_delta_scaled_in_place(delta_t, h_t, W_hh):
    delta_t *= 1 - h_t**2
    return delta_t @ W_hh


@right("12.bptt_step", "a batch of diagonal Jacobians with torch.diag_embed and batched matmul")
def bptt_diag_embed(delta_t, h_t, W_hh):
    return (delta_t.unsqueeze(1) @ torch.diag_embed(1 - h_t**2) @ W_hh).squeeze(1)


@right("12.bptt_step", "einsum with three operands")
def bptt_einsum(delta_t, h_t, W_hh):
    return torch.einsum("bi,bi,ij->bj", delta_t, 1 - h_t * h_t, W_hh)


# =============================================================================================
# 13.tag_loss: tag_loss(scores, tags, lengths), mean cross-entropy over the real characters
# =============================================================================================

MASK = (r"padd", r"mask", r"real char", r"ignore", r"-100")


@wrong("13.tag_loss", "no mask: the padding's tags, whatever they are, enter the mean", MASK)
def loss_no_mask(scores, tags, lengths):
    return functional.cross_entropy(scores.flatten(0, 1), tags.flatten())


@wrong(
    "13.tag_loss",
    "the mask built time first, arange(T)[:, None] < lengths, (T, B), used on (B, T) tensors",
    (r"\(T, ?B", r"\(B, ?T", r"transpos", r"mask.{0,40}(shape|orient)", r"lengths\[:, ?None\]"),
)
def loss_mask_time_first(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1])[:, None] < lengths
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong("13.tag_loss", "tags[~is_real] = -100 writes into the caller's tags", changed("tags"))
def loss_tags_overwritten(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    tags[~is_real] = -100
    return functional.cross_entropy(scores.transpose(1, 2), tags)


@wrong(
    "13.tag_loss",
    "masked per-character losses averaged over every place, padding included: (loss * mask).mean()",
    (r"\bmean\b", r"divid", r"denominator", r"numel", r"count", r"number of real", r"every place"),
)
def loss_mean_over_all_places(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    each = functional.cross_entropy(scores.transpose(1, 2), tags.clamp(min=0), reduction="none")
    return (each * is_real).mean()


@wrong(
    "13.tag_loss",
    "softmax applied before cross_entropy, which takes raw scores (logits)",
    (r"softmax", r"logits", r"probabilit", r"raw scores"),
)
def loss_softmax_first(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores.softmax(dim=-1)[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "nll_loss on raw scores: log_softmax left out",
    (r"nll", r"log.?softmax", r"logits", r"raw scores"),
)
def loss_nll_without_log_softmax(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.nll_loss(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "the mask arange(T) < lengths - 1: each text's last character left out",
    (r"lengths? ?(-|minus) ?1", r"last (real )?char", r"off.by.one", r"one (step|character)"),
)
def loss_last_character_dropped(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None] - 1
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "the tags cast to float: cross_entropy reads float targets as class probabilities",
    (r"float", r"dtype", r"\blong\b", r"int64", r"class ind", r"probabilit"),
)
def loss_float_targets(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real].float())


@right("13.tag_loss", "a copy of the tags with -100 in the padding (masked_fill), classes on dim 1")
def loss_masked_fill(scores, tags, lengths):
    is_padding = torch.arange(scores.shape[1]) >= lengths.unsqueeze(1)
    return functional.cross_entropy(scores.permute(0, 2, 1), tags.masked_fill(is_padding, -100))


@right("13.tag_loss", "log_softmax and gather, summed over the mask and divided by its count")
def loss_gather_sum(scores, tags, lengths):
    is_real = (torch.arange(scores.shape[1]) < lengths[:, None]).to(scores.dtype)
    picked = scores.log_softmax(-1).gather(-1, tags.clamp(0, scores.shape[-1] - 1).unsqueeze(-1)).squeeze(-1)
    return -(picked * is_real).sum() / is_real.sum()


# =============================================================================================
# diagnose: whole layers, fn(module, input, hx) against module(input, hx)
# =============================================================================================

STACK3 = case("RNN", 3, 4, 3)
STACK4_HX = case("RNN", 2, 3, 4, batch=2, hx=True, seed=1)
STACK_SQUARE = case("RNN", 4, 4, 3, seed=2)
BI = case("RNN", 3, 4, bidirectional=True, seed=3)
BI_HX = case("RNN", 3, 4, bidirectional=True, hx=True, seed=4)
STACK_BI = case("RNN", 3, 4, 3, bidirectional=True, seed=5)
STACK_BI_BF = case("RNN", 3, 4, 2, bidirectional=True, batch_first=True, seed=6)
STACK_BI_BF_HX = case("RNN", 3, 4, 3, bidirectional=True, batch_first=True, hx=True, seed=7)
LSTM1 = case("LSTM", 3, 4, seed=8)
LSTM_STACK_HX = case("LSTM", 3, 4, 3, hx=True, seed=9)
LSTM_BI = case("LSTM", 3, 4, bidirectional=True, hx=True, seed=10)
GRU1 = case("GRU", 3, 4, seed=11)
GRU_STACK_BI = case("GRU", 3, 4, 3, bidirectional=True, seed=12)
GRU_BF_HX = case("GRU", 3, 4, batch_first=True, hx=True, seed=13)
PACKED = case("RNN", 2, 3, lengths=[5, 2, 4], seed=14)
PACKED_BI = case("RNN", 2, 3, bidirectional=True, batch=4, lengths=[3, 5, 1, 4], seed=15)
PACKED_LSTM_BF = case("LSTM", 2, 3, batch_first=True, lengths=[4, 5, 2], seed=16)
PACKED_GRU_SORTED = case("GRU", 2, 3, lengths=[5, 3, 2], enforce_sorted=True, hx=True, seed=17)
BF = case("RNN", 3, 4, batch_first=True, seed=18)
HX = case("RNN", 3, 4, hx=True, seed=19)
F64 = case("RNN", 3, 4, 2, dtype=torch.float64, seed=20)


def rnn_layer(x, h, W_ih, W_hh, b_ih, b_hh, reverse=False):
    """A student's own helper (correct): one direction of one tanh layer over a time-first x; (states, last)."""
    states = [None] * x.shape[0]
    for t in reversed(range(x.shape[0])) if reverse else range(x.shape[0]):
        h = torch.tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states[t] = h
    return torch.stack(states), h


# ---- stacked, one direction ------------------------------------------------------------------


@wrong(
    STACK4_HX,
    "every layer starts from hx[-1], the top layer's row",
    (r"hx\[k\]", r"h_0\[k\]", r"row k", r"(own|its) row", r"hx\[-1\]", r"initial.{0,60}layer", r"layer.{0,40}initial"),
)
def d_stack_top_row_everywhere(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        h = torch.zeros(B, H) if hx is None else hx[-1]
        x, h = rnn_layer(x, h, *weights(module, k))
        finals.append(h)
    return x, torch.stack(finals)


@wrong(STACK3, "h_n holds the top layer only: h.unsqueeze(0) after the last layer", EVERY_LAYER + (r"h_n.{0,40}shape",))
def d_stack_h_n_top_only(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x = input
    for k in range(L):
        x, h = rnn_layer(x, torch.zeros(B, H) if hx is None else hx[k], *weights(module, k))
    return x, h.unsqueeze(0)


@wrong(
    STACK3,
    "time outside, layers inside, updated top-down: layer k reads layer k - 1's state from the step before",
    (
        r"same step",
        r"step t\b",
        r"\blag",
        r"one step (late|behind|earlier)",
        r"previous step",
        r"top.down",
        r"order.{0,40}layers",
        r"time.{0,30}(align|offset|shift)",
    ),
)
def d_stack_top_down_in_time_loop(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h = list(torch.zeros(L, B, H) if hx is None else hx)
    outputs = []
    for x_t in input:
        for k in reversed(range(L)):
            W_ih, W_hh, b_ih, b_hh = weights(module, k)
            below = x_t if k == 0 else h[k - 1]
            h[k] = torch.tanh(below @ W_ih.T + b_ih + h[k] @ W_hh.T + b_hh)
        outputs.append(h[-1])
    return torch.stack(outputs), torch.stack(h)


@wrong(
    STACK3,
    "each layer reads the final state of the layer below at every step, not its state at the same step",
    (
        r"same step",
        r"each step",
        r"every step",
        r"(final|last) state.{0,40}below",
        r"below.{0,60}(final|last) state",
        r"output of (the )?layer",
        r"layer below",
    ),
)
def d_stack_reads_final_below(module, input, hx=None):
    L, T, B, H = module.num_layers, input.shape[0], input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        x, h = rnn_layer(x, torch.zeros(B, H) if hx is None else hx[k], *weights(module, k))
        finals.append(h)
        if k < L - 1:
            x = h.expand(T, B, H)
    return x, torch.stack(finals)


@wrong(
    STACK3,
    "weight_hh_l0 used for every layer's recurrent product",
    (
        r"weight_hh_l\d",
        r"weight_hh.{0,40}layer",
        r"layer.{0,40}weight_hh",
        r"W_hh.{0,40}layer",
        r"layer.{0,40}(recurrent|W_hh)",
    ),
)
def d_stack_weight_hh_l0_everywhere(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        W_ih, _, b_ih, b_hh = weights(module, k)
        x, h = rnn_layer(x, torch.zeros(B, H) if hx is None else hx[k], W_ih, module.weight_hh_l0, b_ih, b_hh)
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    STACK4_HX,
    "the biases of layer 0 used in every layer",
    (r"bias.{0,40}(layer|_l\d)", r"bias_ih_l", r"bias_hh_l", r"layer.{0,40}bias", r"b_ih", r"b_hh"),
)
def d_stack_biases_l0_everywhere(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        W_ih, W_hh, _, _ = weights(module, k)
        x, h = rnn_layer(
            x, torch.zeros(B, H) if hx is None else hx[k], W_ih, W_hh, module.bias_ih_l0, module.bias_hh_l0
        )
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    STACK_SQUARE,
    "layer_input never updated: every layer reads the input (silent when input_size = hidden_size)",
    (
        r"layer below",
        r"previous layer",
        r"reads? (the )?(network'?s? )?input",
        r"layer_input",
        r"k ?- ?1",
        r"states of layer",
    ),
)
def d_stack_all_read_input(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    layer_input, finals = input, []
    for k in range(L):
        output, h = rnn_layer(layer_input, torch.zeros(B, H) if hx is None else hx[k], *weights(module, k))
        finals.append(h)
    return output, torch.stack(finals)


@wrong(
    STACK3,
    "two layers hard-coded: a third layer is never run",
    EVERY_LAYER + (r"top layer", r"layer 2", r"third layer", r"hard.?cod", r"range\(2\)"),
)
def d_stack_two_layers_hard_coded(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(module.num_layers, B, H) if hx is None else hx
    out0, h0 = rnn_layer(input, h_0[0], *weights(module, 0))
    out1, h1 = rnn_layer(out0, h_0[1], *weights(module, 1))
    return out1, torch.stack([h0, h1])


@wrong(
    STACK3,
    "h_n made of each layer's first step, output[0], not its last",
    (r"first step", r"last step", r"h_n.{0,40}(step|time)", r"output\[0\]", r"step 0", r"step 1\b"),
)
def d_stack_h_n_first_step(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, firsts = input, []
    for k in range(L):
        x, _ = rnn_layer(x, torch.zeros(B, H) if hx is None else hx[k], *weights(module, k))
        firsts.append(x[0])
    return x, torch.stack(firsts)


# ---- bidirectional, one layer ----------------------------------------------------------------


@wrong(
    BI,
    "the halves of output swapped: [backward, forward]",
    (r"halves", r"swap", r"forward.{0,30}first", r"backward.{0,30}first", r"order", r":H\b", r"\bH:"),
)
def d_bi_halves_swapped(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, h_f = rnn_layer(input, h_0[0], *weights(module, 0))
    bwd, h_b = rnn_layer(input, h_0[1], *weights(module, 0, True), reverse=True)
    return torch.cat([bwd, fwd], dim=2), torch.stack([h_f, h_b])


@wrong(
    BI,
    "h_n as the two directions concatenated, (1, B, 2H), instead of stacked rows (2, B, H)",
    (r"h_n.{0,60}(shape|\(2, |rows|stack)", r"\bstack\b", r"\b2H\b", r"2 ?\* ?hidden", r"\bcat\b"),
)
def d_bi_h_n_concatenated(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, h_f = rnn_layer(input, h_0[0], *weights(module, 0))
    bwd, h_b = rnn_layer(input, h_0[1], *weights(module, 0, True), reverse=True)
    return torch.cat([fwd, bwd], dim=2), torch.cat([h_f, h_b], dim=1).unsqueeze(0)


@wrong(
    BI,
    "input[::-1] to reverse time: torch refuses a negative step",
    (r"negative step", r"\[::-1\]", r"\bflip", r"step must", r"slice"),
)
def d_bi_negative_step(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, h_f = rnn_layer(input, h_0[0], *weights(module, 0))
    bwd, h_b = rnn_layer(input[::-1], h_0[1], *weights(module, 0, True))
    return torch.cat([fwd, bwd[::-1]], dim=2), torch.stack([h_f, h_b])


@wrong(
    BI_HX,
    "the directions joined along the batch (dim=1): (T, 2B, H)",
    (
        r"\bdim\b",
        r"last dim",
        r"feature",
        r"output.{0,40}shape",
        r"cat.{0,40}(axis|dim)",
        r"(joined|concatenated|cat).{0,40}batch",
        r"batch (dim|axis)",
    ),
)
def d_bi_cat_on_batch(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, h_f = rnn_layer(input, h_0[0], *weights(module, 0))
    bwd, h_b = rnn_layer(input, h_0[1], *weights(module, 0, True), reverse=True)
    return torch.cat([fwd, bwd], dim=1), torch.stack([h_f, h_b])


@wrong(
    BI,
    "the backward states reversed by swapping the first and last steps only: right only for T <= 3",
    (r"revers", r"\bflip", r"time order", r"computed order", r"backward.{0,60}(order|steps?)", r"middle steps"),
)
def d_bi_swap_ends(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, h_f = rnn_layer(input, h_0[0], *weights(module, 0))
    computed, h_b = rnn_layer(input.flip(0), h_0[1], *weights(module, 0, True))
    bwd = torch.cat([computed[-1:], computed[1:-1], computed[:1]])
    return torch.cat([fwd, bwd], dim=2), torch.stack([h_f, h_b])


# ---- stacked bidirectional -------------------------------------------------------------------


@wrong(
    STACK_BI,
    "the layer above reads only the forward half of the layer below",
    (r"both directions", r"backward half", r"concat", r"\b2H\b", r"2 ?\* ?H", r"\bcat\b", r"forward half"),
)
def d_sbi_reads_forward_half(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        fwd, h_f = rnn_layer(x, torch.zeros(B, H), *weights(module, k))
        bwd, h_b = rnn_layer(x, torch.zeros(B, H), *weights(module, k, True), reverse=True)
        finals += [h_f, h_b]
        x = fwd if k < L - 1 else torch.cat([fwd, bwd], dim=2)
    return x, torch.stack(finals)


@wrong(
    STACK_BI,
    "the backward states left in computed order (the second flip forgotten): wrong from layer 1 on",
    (r"\bflip", r"time order", r"revers", r"align", r"computed order", r"backward.{0,40}order"),
    source="https://github.com/d2l-ai/d2l-en/issues/2306",
)
def d_sbi_second_flip_forgotten(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        fwd, h_f = rnn_layer(x, torch.zeros(B, H), *weights(module, k))
        bwd, h_b = rnn_layer(x.flip(0), torch.zeros(B, H), *weights(module, k, True))
        finals += [h_f, h_b]
        x = torch.cat([fwd, bwd], dim=2)
    return x, torch.stack(finals)


@wrong(
    STACK_BI,
    "h_n rows direction-major: every forward row first, then every backward row",
    (
        r"layer ?\* ?D",
        r"direction.major",
        r"2 ?\* ?layer",
        r"layer.major",
        r"rows?.{0,40}order",
        r"h_n.{0,40}order",
        r"interleav",
    ),
)
def d_sbi_h_n_direction_major(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, forward_rows, backward_rows = input, [], []
    for k in range(L):
        fwd, h_f = rnn_layer(x, torch.zeros(B, H), *weights(module, k))
        bwd, h_b = rnn_layer(x, torch.zeros(B, H), *weights(module, k, True), reverse=True)
        forward_rows.append(h_f)
        backward_rows.append(h_b)
        x = torch.cat([fwd, bwd], dim=2)
    return x, torch.stack(forward_rows + backward_rows)


@wrong(
    STACK_BI,
    "the backward direction of the layer above reads the halves swapped, cat([backward, forward])",
    (r"halves", r"order.{0,40}(concat|cat)", r"forward half first", r"swap", r"cat\(\["),
)
def d_sbi_backward_reads_swapped_halves(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    for_fwd, for_bwd, finals = input, input, []
    for k in range(L):
        fwd, h_f = rnn_layer(for_fwd, torch.zeros(B, H), *weights(module, k))
        bwd, h_b = rnn_layer(for_bwd, torch.zeros(B, H), *weights(module, k, True), reverse=True)
        finals += [h_f, h_b]
        for_fwd, for_bwd = torch.cat([fwd, bwd], dim=2), torch.cat([bwd, fwd], dim=2)
    return for_fwd, torch.stack(finals)


@wrong(STACK_BI_BF, "batch_first ignored: the loop runs over the batch as if it were time", BATCH_FIRST)
def d_sbi_batch_first_ignored(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        fwd, h_f = rnn_layer(x, torch.zeros(B, H), *weights(module, k))
        bwd, h_b = rnn_layer(x, torch.zeros(B, H), *weights(module, k, True), reverse=True)
        finals += [h_f, h_b]
        x = torch.cat([fwd, bwd], dim=2)
    return x, torch.stack(finals)


@wrong(
    STACK_BI_BF_HX,
    "the backward run starts from the forward run's final state, not from its own row of hx",
    (
        r"backward.{0,60}(initial|start|h_0|own row|hx)",
        r"initial.{0,60}backward",
        r"row 2 ?\* ?k ?\+ ?1",
        r"2k ?\+ ?1",
        r"carried",
        r"hx\[",
    ),
)
def d_sbi_backward_from_forward_final(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[0], module.hidden_size
    x, finals = input.transpose(0, 1), []
    h_0 = torch.zeros(2 * L, B, H) if hx is None else hx
    for k in range(L):
        fwd, h_f = rnn_layer(x, h_0[2 * k], *weights(module, k))
        bwd, h_b = rnn_layer(x, h_f, *weights(module, k, True), reverse=True)
        finals += [h_f, h_b]
        x = torch.cat([fwd, bwd], dim=2)
    return x.transpose(0, 1), torch.stack(finals)


@right(STACK_BI_BF_HX, "one sequence at a time with torch.rnn_tanh_cell, outputs preallocated and filled by index")
def d_sbi_per_sequence(module, input, hx=None):
    L, B, T, H = module.num_layers, input.shape[0], input.shape[1], module.hidden_size
    h_0 = input.new_zeros(2 * L, B, H) if hx is None else hx
    outputs, h_n = [], []
    for b in range(B):
        x, ends = input[b], []
        for k in range(L):
            out = x.new_zeros(T, 2 * H)
            for d in range(2):
                h = h_0[2 * k + d, b]
                for t in range(T - 1, -1, -1) if d else range(T):
                    h = torch.rnn_tanh_cell(x[t : t + 1], h.unsqueeze(0), *weights(module, k, d == 1))[0]
                    out[t, d * H : (d + 1) * H] = h
                ends.append(h)
            x = out
        outputs.append(x)
        h_n.append(torch.stack(ends))
    return torch.stack(outputs), torch.stack(h_n, dim=1)


# ---- LSTM ------------------------------------------------------------------------------------


def lstm_layer(x, h, c, W_ih, W_hh, b_ih, b_hh, reverse=False):
    """A student's own helper (correct): one direction of one LSTM layer, time first; (states, h, c)."""
    states = [None] * x.shape[0]
    for t in reversed(range(x.shape[0])) if reverse else range(x.shape[0]):
        i, f, g, o = (x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        states[t] = h
    return torch.stack(states), h, c


@wrong(
    LSTM1,
    "returns (output, h_n, c_n), three values, instead of (output, (h_n, c_n))",
    (r"tuple", r"\(h_n, ?c_n\)", r"\bpair\b", r"nested", r"two values", r"three values"),
)
def d_lstm_flat_return(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (torch.zeros(1, B, H), torch.zeros(1, B, H)) if hx is None else hx
    output, h, c = lstm_layer(input, h[0], c[0], *weights(module))
    return output, h.unsqueeze(0), c.unsqueeze(0)


@wrong(
    LSTM1, "c_n returned as a copy of h_n: the cell state never leaves the loop", (r"c_n", r"cell state", r"\bc_t\b")
)
def d_lstm_c_n_is_h_n(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (torch.zeros(1, B, H), torch.zeros(1, B, H)) if hx is None else hx
    output, h, c = lstm_layer(input, h[0], c[0], *weights(module))
    return output, (h.unsqueeze(0), h.unsqueeze(0))


@wrong(
    LSTM_STACK_HX,
    "hx unpacked the wrong way round: c_0, h_0 = hx",
    (r"hx\[0\]", r"hx\[1\]", r"swap", r"h_0.{0,40}c_0", r"c_0.{0,40}h_0", r"order", r"\(h_0, ?c_0\)"),
)
def d_lstm_hx_swapped(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    c_0, h_0 = (torch.zeros(L, B, H), torch.zeros(L, B, H)) if hx is None else hx
    x, hs, cs = input, [], []
    for k in range(L):
        x, h, c = lstm_layer(x, h_0[k], c_0[k], *weights(module, k))
        hs.append(h)
        cs.append(c)
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM1,
    "CS231n's block order (i, f, o, g): the candidate read from the output gate's rows",
    GATE_ORDER + (r"i, ?f, ?o, ?g", r"i, ?f, ?g, ?o", r"candidate", r"output gate", r"\bg\b", r"\bo\b", r"cs231n"),
)
def d_lstm_cs231n_order(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in input:
        a = x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh
        i, f, o = torch.sigmoid(a[:, : 3 * H]).chunk(3, dim=1)
        g = torch.tanh(a[:, 3 * H :])
        c = f * c + i * g
        h = o * torch.tanh(c)
        states.append(h)
    return torch.stack(states), (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM1,
    "the new cell state never carried: every step starts from c_0",
    (r"\bc\b.{0,40}(carried|update|reassign|next step)", r"cell state", r"c_t", r"c_\{?t ?- ?1", r"c_prev", r"c_0"),
)
def d_lstm_cell_not_carried(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in input:
        i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c_new)
        states.append(h)
    return torch.stack(states), (h.unsqueeze(0), c_new.unsqueeze(0))


@wrong(
    LSTM_STACK_HX,
    "every layer's cell starts from c_0[0]: the cell rows of hx for layers 1 and up are ignored",
    (r"c_0\[k\]", r"c0\[k\]", r"hx\[1\]\[k\]", r"cell.{0,40}(row|layer|initial)", r"initial cell", r"c_0\[0\]"),
)
def d_lstm_cell_row0_everywhere(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0, c_0 = (torch.zeros(L, B, H), torch.zeros(L, B, H)) if hx is None else hx
    x, hs, cs = input, [], []
    for k in range(L):
        x, h, c = lstm_layer(x, h_0[k], c_0[0], *weights(module, k))
        hs.append(h)
        cs.append(c)
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM_BI,
    "the backward direction's cell starts from the forward run's final cell, not from c_0[1]",
    (r"backward.{0,60}(initial|cell|c_0|start)", r"c_0\[1\]", r"cell.{0,40}backward", r"hx\[1\]\[1\]", r"carried"),
)
def d_lstm_bi_backward_cell_from_forward(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0, c_0 = (torch.zeros(2, B, H), torch.zeros(2, B, H)) if hx is None else hx
    fwd, h_f, c_f = lstm_layer(input, h_0[0], c_0[0], *weights(module))
    bwd, h_b, c_b = lstm_layer(input, h_0[1], c_f, *weights(module, 0, True), reverse=True)
    return torch.cat([fwd, bwd], dim=2), (torch.stack([h_f, h_b]), torch.stack([c_f, c_b]))


@wrong(
    LSTM_STACK_HX,
    "h_t from the old cell: h = o * tanh(c) computed before c is updated",
    (r"tanh ?\(c_t", r"new cell", r"c_prev", r"old cell", r"c_\{?t ?- ?1", r"before.{0,40}(update|c_t)"),
)
def d_lstm_h_from_old_cell(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0, c_0 = (torch.zeros(L, B, H), torch.zeros(L, B, H)) if hx is None else hx
    x, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh = weights(module, k)
        h, c, states = h_0[k], c_0[k], []
        for x_t in x:
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=1)
            h = torch.sigmoid(o) * torch.tanh(c)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            states.append(h)
        x = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM1,
    "the cell state detached at every step (c = c.detach()): gradients through time only through h",
    (r"detach", r"gradient", r"c_t", r"cell state", r"truncat"),
)
def d_lstm_cell_detached(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in input:
        i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        c = c.detach()
        states.append(h)
    return torch.stack(states), (h.unsqueeze(0), c.unsqueeze(0))


@right(LSTM_STACK_HX, "torch.lstm_cell, time outside and layers inside, states kept in a list")
def d_lstm_cells(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0, c_0 = (input.new_zeros(L, B, H), input.new_zeros(L, B, H)) if hx is None else hx
    states = [(h_0[k], c_0[k]) for k in range(L)]
    outputs = []
    for x_t in input:
        for k in range(L):
            states[k] = torch.lstm_cell(x_t, states[k], *weights(module, k))
            x_t = states[k][0]
        outputs.append(x_t)
    return torch.stack(outputs), (torch.stack([s[0] for s in states]), torch.stack([s[1] for s in states]))


# ---- GRU -------------------------------------------------------------------------------------


def gru_layer(x, h, W_ih, W_hh, b_ih, b_hh, reverse=False):
    """A student's own helper (correct): one direction of one GRU layer, time first; (states, last)."""
    states = [None] * x.shape[0]
    for t in reversed(range(x.shape[0])) if reverse else range(x.shape[0]):
        i_r, i_z, i_n = (x[t] @ W_ih.T + b_ih).chunk(3, dim=1)
        h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, dim=1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
        states[t] = h
    return torch.stack(states), h


@wrong(
    GRU1,
    "one sum chunked as in an LSTM, then n = tanh(r * a_n): the reset gate scales the input term too",
    RESET + (r"input term", r"W_in", r"b_in", r"x_t.{0,40}(reset|r\b)"),
)
def d_gru_reset_on_whole_sum(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(B, H) if hx is None else hx[0]
    states = []
    for x_t in input:
        a_r, a_z, a_n = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(3, dim=1)
        r, z = torch.sigmoid(a_r), torch.sigmoid(a_z)
        h = (1 - z) * torch.tanh(r * a_n) + z * h
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    GRU_BF_HX,
    "output left time first: batch_first applied to the input but not back to the output",
    BATCH_FIRST + (r"output.{0,40}(order|shape|dim)",),
)
def d_gru_output_left_time_first(module, input, hx=None):
    B, H = input.shape[0], module.hidden_size
    output, h = gru_layer(input.transpose(0, 1), torch.zeros(B, H) if hx is None else hx[0], *weights(module))
    return output, h.unsqueeze(0)


@wrong(GRU_STACK_BI, "h_n holds only the top layer's two rows", EVERY_LAYER + (r"h_n.{0,40}shape",))
def d_gru_h_n_top_only(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x = input
    for k in range(L):
        fwd, h_f = gru_layer(x, torch.zeros(B, H), *weights(module, k))
        bwd, h_b = gru_layer(x, torch.zeros(B, H), *weights(module, k, True), reverse=True)
        x = torch.cat([fwd, bwd], dim=2)
    return x, torch.stack([h_f, h_b])


@wrong(
    GRU_STACK_BI,
    "the suffix test inverted: the forward run uses the _reverse weights and the backward run the forward ones",
    (
        r"_reverse",
        r"direction.{0,40}(weights|swap)",
        r"forward.{0,60}(weights|reverse)",
        r"suffix",
        r"weights.{0,40}direction",
    ),
)
def d_gru_suffix_inverted(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        halves = []
        for d in range(2):
            suffix = f"_l{k}" + ("_reverse" if d == 0 else "")
            p = [getattr(module, name + suffix) for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            out, h = gru_layer(x, torch.zeros(B, H), *p, reverse=d == 1)
            halves.append(out)
            finals.append(h)
        x = torch.cat(halves, dim=2)
    return x, torch.stack(finals)


@wrong(
    GRU_BF_HX,
    "b_hn added outside the reset gate: r * (h W_hn^T) + b_hn",
    (r"b_hn", r"bias.{0,60}(reset|inside|outside|r\b)", r"(reset|r\b).{0,60}bias"),
)
def d_gru_b_hn_outside(module, input, hx=None):
    B, H = input.shape[0], module.hidden_size
    W_ih, W_hh, b_ih, b_hh = weights(module)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    h = torch.zeros(B, H) if hx is None else hx[0]
    states = []
    for t in range(input.shape[1]):
        i_r, i_z, i_n = (input[:, t] @ W_ih.T + b_ih).chunk(3, dim=1)
        h_r, h_z, h_n = (h @ W_hh.T).chunk(3, dim=1)
        r, z = torch.sigmoid(i_r + h_r + b_hr), torch.sigmoid(i_z + h_z + b_hz)
        h = (1 - z) * torch.tanh(i_n + r * h_n + b_hn) + z * h
        states.append(h)
    return torch.stack(states, dim=1), h.unsqueeze(0)


@right(GRU_BF_HX, "the batch-first input permuted, GRU equations in einsum with torch.lerp")
def d_gru_einsum(module, input, hx=None):
    x = input.permute(1, 0, 2)
    H = module.hidden_size
    h = x.new_zeros(x.shape[1], H) if hx is None else hx[0]
    W_i = module.weight_ih_l0.view(3, H, -1)
    W_h = module.weight_hh_l0.view(3, H, H)
    b_i, b_h = module.bias_ih_l0.view(3, 1, H), module.bias_hh_l0.view(3, 1, H)
    states = []
    for x_t in x:
        gi = torch.einsum("bi,ghi->gbh", x_t, W_i) + b_i
        gh = torch.einsum("bk,ghk->gbh", h, W_h) + b_h
        r, z = torch.sigmoid(gi[0] + gh[0]), torch.sigmoid(gi[1] + gh[1])
        h = torch.lerp(torch.tanh(gi[2] + r * gh[2]), h, z)
        states.append(h)
    return torch.stack(states).permute(1, 0, 2), h.unsqueeze(0)


# ---- packed sequences ------------------------------------------------------------------------


@wrong(
    PACKED,
    "h_n taken at the last padded step, output[-1]: zeros for every shorter sequence",
    PADDED_LAST + (r"output\[-1\]", r"h_n.{0,60}(length|padding)"),
    source="https://github.com/bentrevett/pytorch-sentiment-analysis/issues/86",
)
def d_packed_h_n_last_padded_step(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    W_ih, W_hh, b_ih, b_hh = weights(module)
    T, B = x.shape[:2]
    h = torch.zeros(B, module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(T):
        h_new = torch.tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        valid = (t < lengths).unsqueeze(1)
        h = torch.where(valid, h_new, h)
        states.append(torch.where(valid, h_new, torch.zeros_like(h_new)))
    output = torch.stack(states)
    return pack_padded_sequence(output, lengths, enforce_sorted=False), output[-1].unsqueeze(0)


@wrong(
    PACKED_BI,
    "the backward run flips the whole padded tensor: each shorter sequence's padding comes first and runs into its state",
    (
        r"flip.{0,60}padd",
        r"padd.{0,60}(flip|front|first|before)",
        r"revers.{0,60}(padd|length|each sequence)",
        r"backward.{0,60}(padd|length|own last)",
        r"starts? (inside|in) the padd",
    ),
)
def d_packed_bi_flips_padding_in(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B, H = x.shape[0], x.shape[1], module.hidden_size
    valid = (torch.arange(T)[:, None] < lengths).unsqueeze(2)
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd_states, h_f = [], h_0[0]
    W_ih, W_hh, b_ih, b_hh = weights(module)
    for t in range(T):
        h_new = torch.tanh(x[t] @ W_ih.T + b_ih + h_f @ W_hh.T + b_hh)
        h_f = torch.where(valid[t], h_new, h_f)
        fwd_states.append(h_new * valid[t])
    bwd, h_b = rnn_layer(x.flip(0), h_0[1], *weights(module, 0, True))
    output = torch.cat([torch.stack(fwd_states), bwd.flip(0) * valid], dim=2)
    return pack_padded_sequence(output, lengths, enforce_sorted=False), torch.stack([h_f, h_b])


@wrong(
    PACKED,
    "pad_packed_sequence(..., batch_first=True) on a time-first layer: the loop then runs over the batch",
    BATCH_FIRST + (r"pad_packed_sequence",),
)
def d_packed_unpacked_batch_first(module, input, hx=None):
    x, lengths = pad_packed_sequence(input, batch_first=True)
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(x.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(x.shape[0]):
        h_new = torch.tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        valid = (t < lengths).unsqueeze(1)
        h = torch.where(valid, h_new, h)
        states.append(h_new * valid)
    return pack_padded_sequence(torch.stack(states), lengths, enforce_sorted=False), h.unsqueeze(0)


@wrong(
    PACKED,
    "the output returned padded, a plain tensor, where torch returns a PackedSequence for packed input",
    (r"PackedSequence", r"\bpack", r"packed output", r"type"),
)
def d_packed_returns_padded(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(x.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(x.shape[0]):
        h_new = torch.tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        valid = (t < lengths).unsqueeze(1)
        h = torch.where(valid, h_new, h)
        states.append(h_new * valid)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    PACKED,
    "packed.data viewed as (T, B, input_size): its rows are not a rectangle",
    (r"\.data", r"batch_sizes", r"\bview\b", r"packed.{0,40}(rows|layout)", r"pad_packed_sequence"),
)
def d_packed_data_viewed(module, input, hx=None):
    T, size = len(input.batch_sizes), module.input_size
    x = input.data.view(T, -1, size)
    output, h = rnn_layer(x, torch.zeros(x.shape[1], module.hidden_size), *weights(module))
    return PackedSequence(
        output.reshape(-1, module.hidden_size), input.batch_sizes, input.sorted_indices, input.unsorted_indices
    ), h.unsqueeze(0)


@wrong(
    PACKED,
    "run through the padding, h_n gathered at lengths.clamp(max=T - 1): one step past each shorter sequence's end",
    PADDED_LAST + (r"clamp", r"off.by.one", r"one step (late|after|too far|past)"),
)
def d_packed_gather_clamped(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B = x.shape[:2]
    output, _ = rnn_layer(x, torch.zeros(B, module.hidden_size) if hx is None else hx[0], *weights(module))
    h_n = output[lengths.clamp(max=T - 1), torch.arange(B)]
    return pack_padded_sequence(output, lengths, enforce_sorted=False), h_n.unsqueeze(0)


@wrong(
    PACKED_LSTM_BF,
    "h_n gathered at each sequence's end, but c_n taken after the padding",
    (r"c_n", r"cell state.{0,60}(length|padd|last|end)", r"cell.{0,40}padd") + PADDED_LAST,
)
def d_packed_lstm_c_n_after_padding(module, input, hx=None):
    x, lengths = pad_packed_sequence(input, batch_first=True)
    B, H = x.shape[0], module.hidden_size
    output, h, c = lstm_layer(x.transpose(0, 1), torch.zeros(B, H), torch.zeros(B, H), *weights(module))
    output = output.transpose(0, 1)
    h_n = output[torch.arange(B), lengths - 1]
    packed = pack_padded_sequence(output, lengths, batch_first=True, enforce_sorted=False)
    return packed, (h_n.unsqueeze(0), c.unsqueeze(0))


@wrong(
    PACKED_GRU_SORTED,
    "a sequence's state zeroed once it ends (h = h_new * valid): h_n is zero for every shorter sequence",
    PADDED_LAST + (r"h_n.{0,60}(zero|ended|finished)", r"ended", r"finished", r"zeroe?d?"),
)
def d_packed_gru_state_zeroed(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(x.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(x.shape[0]):
        _, h_new = gru_layer(x[t : t + 1], h, W_ih, W_hh, b_ih, b_hh)
        h = h_new * (t < lengths).unsqueeze(1)
        states.append(h)
    return pack_padded_sequence(torch.stack(states), lengths), h.unsqueeze(0)


@wrong(
    PACKED_BI,
    "both h_n rows gathered at each sequence's last real step: the backward run ends at step 0",
    BACKWARD_FINAL,
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def d_packed_bi_backward_h_n_at_end(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    B, H = x.shape[1], module.hidden_size
    halves = []
    for d in range(2):
        W_ih, W_hh, b_ih, b_hh = weights(module, 0, d == 1)
        out = torch.zeros(x.shape[0], B, H)
        for b in range(B):
            n = int(lengths[b])
            seq = x[:n, b : b + 1].flip(0) if d else x[:n, b : b + 1]
            states, _ = rnn_layer(seq, torch.zeros(1, H), W_ih, W_hh, b_ih, b_hh)
            out[:n, b] = (states.flip(0) if d else states)[:, 0]
        halves.append(out)
    output = torch.cat(halves, dim=2)
    ends = output[lengths - 1, torch.arange(B)]
    h_n = torch.stack([ends[:, :H], ends[:, H:]])
    return pack_padded_sequence(output, lengths, enforce_sorted=False), h_n


@right(PACKED_BI, "each sequence run alone on its own slice, the backward one on the flipped slice")
def d_packed_bi_per_sequence(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    B, H = x.shape[1], module.hidden_size
    h_0 = x.new_zeros(2, B, H) if hx is None else hx
    output = x.new_zeros(x.shape[0], B, 2 * H)
    h_n = x.new_zeros(2, B, H)
    for b in range(B):
        n = int(lengths[b])
        for d in range(2):
            seq = x[:n, b : b + 1].flip(0) if d else x[:n, b : b + 1]
            states, h = rnn_layer(seq, h_0[d, b : b + 1], *weights(module, 0, d == 1))
            output[:n, b, d * H : (d + 1) * H] = (states.flip(0) if d else states)[:, 0]
            h_n[d, b] = h[0]
    return pack_padded_sequence(output, lengths, enforce_sorted=False), h_n


@right(PACKED_GRU_SORTED, "straight on packed.data: each step updates the first batch_sizes[t] states")
def d_packed_gru_on_data(module, input, hx=None):
    B = int(input.batch_sizes[0])
    h = input.data.new_zeros(B, module.hidden_size) if hx is None else hx[0]
    rows, start = [], 0
    for size in input.batch_sizes.tolist():
        _, h_new = gru_layer(input.data[start : start + size].unsqueeze(0), h[:size], *weights(module))
        h = torch.cat([h_new, h[size:]])
        rows.append(h_new)
        start += size
    return PackedSequence(
        torch.cat(rows), input.batch_sizes, input.sorted_indices, input.unsorted_indices
    ), h.unsqueeze(0)


# ---- batch_first, hx, float64 ----------------------------------------------------------------


@wrong(
    BF,
    "the time-first output turned batch first with view(B, T, H) instead of a transpose",
    (r"\bview\b", r"transpos", r"permute", r"reshape", r"mix(es|ed)? (the )?(sequences|batch)"),
    source="https://github.com/graykode/nlp-tutorial/issues/38",
)
def d_bf_view_back(module, input, hx=None):
    B, T, H = input.shape[0], input.shape[1], module.hidden_size
    output, h = rnn_layer(input.transpose(0, 1), torch.zeros(B, H) if hx is None else hx[0], *weights(module))
    return output.view(B, T, H), h.unsqueeze(0)


@wrong(
    BF,
    "the batch-first input made time first with reshape(T, B, I): steps and sequences mixed",
    (r"\bview\b", r"transpos", r"permute", r"reshape", r"mix(es|ed)? (the )?(sequences|batch|steps)"),
)
def d_bf_reshape_in(module, input, hx=None):
    B, T, H = input.shape[0], input.shape[1], module.hidden_size
    output, h = rnn_layer(input.reshape(T, B, -1), torch.zeros(B, H) if hx is None else hx[0], *weights(module))
    return output.transpose(0, 1), h.unsqueeze(0)


@wrong(
    HX,
    "hx ignored: every run starts from zeros",
    (r"\bhx\b", r"h_0", r"initial state", r"ignor", r"nonzero"),
    source="https://github.com/pytorch/tutorials/issues/416",
)
def d_hx_ignored(module, input, hx=None):
    output, h = rnn_layer(input, torch.zeros(input.shape[1], module.hidden_size), *weights(module))
    return output, h.unsqueeze(0)


@wrong(HX, "the state updated through h[:] = ... with h = hx[0]: hx is overwritten in place", changed("hx"))
def d_hx_written_in_place(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h_new = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h_new)
        h[:] = h_new
    return torch.stack(states), h.unsqueeze(0).clone()


@wrong(
    F64,
    "h_0 = torch.zeros(B, H) in the default float32 while the layer is float64: a dtype mismatch",
    (r"dtype", r"float32", r"float64", r"double", r"new_zeros", r"zeros_like"),
)
def d_f64_zeros_default_dtype(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        x, h = rnn_layer(x, torch.zeros(B, H) if hx is None else hx[k], *weights(module, k))
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    F64,
    "output preallocated with torch.empty(T, B, H): float32, so the float64 states are rounded into it",
    (r"dtype", r"float32", r"float64", r"double", r"empty", r"new_(zeros|empty)", r"round"),
)
def d_f64_output_buffer_float32(module, input, hx=None):
    L, T, B, H = module.num_layers, input.shape[0], input.shape[1], module.hidden_size
    x, finals = input, []
    for k in range(L):
        x, h = rnn_layer(x, input.new_zeros(B, H) if hx is None else hx[k], *weights(module, k))
        finals.append(h)
    output = torch.empty(T, B, H)
    for t in range(T):
        output[t] = x[t]
    return output, torch.stack(finals)


@right(F64, "dtype taken from the input, each layer through torch.rnn_tanh_cell, states stacked at the end")
def d_f64_cells(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H, dtype=input.dtype) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        h, states = h_0[k], []
        for x_t in x:
            h = torch.rnn_tanh_cell(x_t, h, *weights(module, k))
            states.append(h)
        x = torch.stack(states)
        finals.append(h)
    return x, torch.stack(finals)


@right(BF, "batch first throughout: the loop over input[:, t], states stacked on dim 1")
def d_bf_native(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = weights(module)
    h = input.new_zeros(input.shape[0], module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(input.shape[1]):
        h = torch.tanh(torch.addmm(b_ih, input[:, t], W_ih.T) + torch.addmm(b_hh, h, W_hh.T))
        states.append(h)
    return torch.stack(states, dim=1), h[None]
