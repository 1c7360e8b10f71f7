"""A sixth set of student versions, written blind to the checks: how well do they name a student's bug?

benchmarks/wrong_versions.py and benchmarks/wrong_versions_holdout.py are the sets the checks were
tuned on, benchmarks/wrong_versions_fresh.py was written after both, and
benchmarks/wrong_versions_blind.py and benchmarks/wrong_versions_blind2.py were written blind to
the checker. This set was written after all five, blind as well: without opening the checks'
catalogue of bugs, their diagnosis, their exercises, slips, gates, provenance and answer key
(helpers/bugs.py, helpers/diagnosis.py, helpers/exercises.py, helpers/argument_slips.py,
helpers/wiring_slips.py, helpers/gates.py, helpers/gate_blocks.py, helpers/provenance.py,
helpers/shape_slips.py, helpers/layer_parts.py, helpers/answer_key.py, helpers/solutions/), the
tests (tests/), the other sets' versions (only the first 130 lines of
benchmarks/wrong_versions_blind2.py were read: its docstring, its record format `Version`, `wrong`,
`right` and the head of its `case` builder; the record format is copied here and not imported, and
the case builder below was written anew), the benchmark's own code (benchmarks/diagnosis_quality.py),
its reports (build/), the git log, or the README's section on how well the checks name a bug. No
version went through `check_code` or `diagnose` while it was written. What was used: the exercises'
statements and stubs in notebooks/NN_*.ipynb (the cells calling `check_code`), the worked answers
`helpers.exercises.solution(key)` prints, the README's description of `check_code` and `diagnose`,
benchmarks/verify_blind2.py (how a set is checked against torch), /work/shared/FACTS.md, PyTorch's
documentation, and the slips people post about hand-written RNN, LSTM and GRU code (cited beside a
version where a public thread shows it).

It aims at families the earlier blind sets' docstrings do not list, or at listed ones in new forms:
tanh around the input term only, np.dot/np.tanh on tensors, a step wrapped in torch.tensor, h_prev
changed by mul_/add_, a state detached in a step; output holding the state before each step, one
bias only, steps counted from 1, a preallocated output written in place and read back (with step 0
reading out[-1] instead of hx), the state detached every step, input iterated over the batch, a
float64 state under float32 weights, hx[0][0] shared by every batch item (right only for B = 1),
W_hh without .T (right only for H = 1); the paper's column convention with the bias broadcast along
the batch, [h, x] concatenated against [W_ih, W_hh], a float64 step, a view of W x^T back to rows
(right only for B = 1 or H = 1); a backward run left in computed order with h_n from its first
computed step, a backward run that continues from the forward final state or reads the forward
states, the forward biases in the backward run, h_n merged along features (1, B, 2H), a reversed
range that stops before step 0, directions interleaved unit by unit by stack(dim=-1).view (right
only for H = 1); h_n top layer first or along dim 1, the state of each layer written into one tensor in
place (PyTorch's own docstring example), every layer's states in output, residual connections, an
extra tanh between layers, hx sliced with k:k+1, read by view(B, L, H) or in reverse, num_layers
taken from hx, a layer reading the stale state of the layer below, h_n copied from output for every
layer; top_h_n with the backward half from the last step (right only for T = 1), indexed time first,
with the time ends or the halves swapped, with cat, the width read from output or both forward
halves; last states squeezed (wrong for H = 1), indexed batch first, pooled by a mean, paired with
sorted lengths, as (B, B, H), at the longest length, or with h_n's layer dimension; the ONNX gate
order (i, o, f, c), peepholes of weight one, tanh missing on the cell, TF's forget bias of 1, chunk
without dim, four sigmoids, W_hh.view in place of .T or the gates cut by view(B, H, 4) (both right
only for H = 1), the cell updated in place in c_prev, i and f exchanged; Keras' (z, r, h) blocks
with its reset before the product, b_hn outside the reset, a sigmoid candidate, W_hr in z, weights
chunked by columns, the other z convention written as torch.lerp, the reset on h_prev with r * b_hn
(right only for H = 1), b_ih's blocks as hidden biases, h_prev *= z; the backward step with the slope
added, sigmoid's slope, tanh applied again to h_t, a diag of a squeezed row (right only for B = 1),
summed over the batch, returned with dW_hh, an outer product h_t.T @ h_t, clipped, delta_t *= slope;
the loss masked by tags != 0, by ignore_index=0, by <=, summed over B, a mean of per-sequence
means, scores without the class dimension first, a masked mean over B * T, log_softmax over time,
.item(); and, for whole layers: stale state of the layer below, h_n from output, hx rows reversed,
h_n along dim 1, a state shared across the batch from hx[k][0], the backward half flipped back only
after the top layer, every layer's backward weights from _l0_reverse, c_n = tanh(c), a layer above
reading the cell states, h_n without its projection, c_n projected, Wikipedia's GRU (reset before
the product and the other z) in a layer, hx kept 3-D, a packed run over batch_sizes that keeps only
the longest sequence's state, a mask off by one, h_n permuted twice, a repack with
enforce_sorted=True, a backward run flipped back whole after a per-sequence reversal, batch_first
forgotten on output or applied to h_n, view in place of transpose, unbatched input given its batch
dimension in front or left in h_n or c_n, a float64 layer's output cast to float32 or its input
cast, tanh under nonlinearity='relu', bias=False read or made the wrong size, the notebook's layer
read, and the cell state detached each step.

Each record has a name, a target (an exercise key for `helpers.exercises.check_code`, or a case
builder returning (module, input, hx) for `helpers.diagnose`), the function, its true bug in one
line, and `names`: regular expressions (case-insensitive), at least one of which a message that
truly names this bug would match (its cause, or its precise place: the term, weight, gate, step,
direction, layer or row at fault). All `names` were written before any version went through the
checks. Correct versions, in unusual styles, have `correct=True` and must pass. Every version was
checked against torch directly, never through check_code or diagnose (benchmarks/verify_blind3.py,
which exits non-zero on a failure): each wrong one differs from the worked answer or the torch layer
in values, shape, dtype, gradients, an error or an argument changed in place, on the case given (for
an exercise, on inputs of the kinds its statement names); each right one matches within 1e-5. The
owner runs the set once, with `python benchmarks/diagnosis_quality.py --set blind3`.
"""

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
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            module = cls(
                input_size, hidden_size, num_layers, bidirectional=bidirectional, batch_first=batch_first, **options
            )
        if dtype is not None:
            module = module.to(dtype)
        wanted = dtype or torch.float32
        gen = torch.Generator().manual_seed(10_000 + seed)
        T = max(lengths) if lengths else seq_len
        B = len(lengths) if lengths else batch
        x = torch.randn(T, B, input_size, generator=gen, dtype=wanted)
        if lengths:
            x = x * (torch.arange(T)[:, None] < torch.tensor(lengths)).unsqueeze(2).to(wanted)
        if unbatched:
            x = x[:, 0]
        elif batch_first:
            x = x.transpose(0, 1).contiguous()
        if lengths:
            x = pack_padded_sequence(x, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
        state = None
        if hx:
            D = 2 if bidirectional else 1
            out_size = options.get("proj_size", 0) or hidden_size
            lead = (D * num_layers,) if unbatched else (D * num_layers, B)
            state = 0.5 * torch.randn(*lead, out_size, generator=gen, dtype=wanted)
            if kind == "LSTM":
                state = (state, 0.5 * torch.randn(*lead, hidden_size, generator=gen, dtype=wanted))
        if publish:
            NOTEBOOK_LAYER = module
        return module, x, state

    extras = [f"num_layers={num_layers}"] if num_layers > 1 else []
    extras += ["bidirectional"] * bidirectional + ["batch_first"] * batch_first + ["hx"] * hx
    extras += [f"lengths={lengths}" + (" sorted" if enforce_sorted else "")] if lengths else []
    extras += ["unbatched"] * unbatched + ([str(dtype).replace("torch.", "")] if dtype is not None else [])
    extras += [f"{key}={value}" for key, value in options.items()]
    build.spec = spec
    build.kind = kind  # what diagnosis_quality.py groups the cases by
    build.label = f"{kind}({input_size}, {hidden_size}{''.join(', ' + e for e in extras)})"
    return build


# ---- small helpers a student might write once and reuse (correct) ------------------------------


def layer_weights(module, k, suffix=""):
    """W_ih, W_hh, b_ih, b_hh (None without bias) and W_hr (None without proj_size) of layer k."""
    tail = f"_l{k}{suffix}"
    W_ih, W_hh = getattr(module, "weight_ih" + tail), getattr(module, "weight_hh" + tail)
    b_ih = getattr(module, "bias_ih" + tail, None)
    b_hh = getattr(module, "bias_hh" + tail, None)
    W_hr = getattr(module, "weight_hr" + tail, None)
    return W_ih, W_hh, b_ih, b_hh, W_hr


def rnn_run(x, h, W_ih, W_hh, b_ih, b_hh, act=torch.tanh):
    """One direction of a plain RNN layer over x (T, B, I) from h (B, H): states (T, B, H) and the last one."""
    states = []
    for x_t in x:
        h = act(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h


def gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh):
    """One GRU step in torch's equations."""
    i_r, i_z, i_n = functional.linear(x_t, W_ih, b_ih).chunk(3, -1)
    h_r, h_z, h_n = functional.linear(h, W_hh, b_hh).chunk(3, -1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


def lstm_cell(x_t, h, c, W_ih, W_hh, b_ih, b_hh, W_hr=None):
    """One LSTM step in torch's equations (projected when W_hr is given)."""
    i, f, g, o = (functional.linear(x_t, W_ih, b_ih) + functional.linear(h, W_hh, b_hh)).chunk(4, -1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
    return (h if W_hr is None else h @ W_hr.T), c


# =================================================================================================
# 01.step: h_t = tanh(w_ih * x_t + w_hh * h_prev), from tensors (one case holds four values each)
# =================================================================================================


@wrong(
    "01.step",
    "tanh wraps only the input term w_ih * x_t; the recurrent term w_hh * h_prev is added outside it",
    [
        r"tanh.*(only|just|one of the terms|input term|each term|separately|part of)",
        r"(outside|after) (the )?tanh",
        r"(recurrent|w_hh|h_prev) term.*(outside|not (inside|squashed)|unsquashed)",
        r"(sum|both terms).*(inside|before|under) (the )?tanh",
    ],
    source="https://github.com/lmjohns3/theanets/issues/109",
)
def step_tanh_on_input_term(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t) + w_hh * h_prev


@wrong(
    "01.step",
    "the logistic sigmoid of numpy BPTT tutorials in place of tanh",
    [
        r"sigmoid",
        r"logistic",
        r"(nonlinearity|activation|squash).*(wrong|not tanh|instead)",
        r"tanh.*(instead|replaced|missing)",
    ],
    source="https://datascience.stackexchange.com/revisions/2b045ce5-ff36-4127-ac4b-bde9ed5ead67/view-source",
)
def step_sigmoid(x_t, h_prev, w_ih, w_hh):
    return torch.sigmoid(w_ih * x_t + w_hh * h_prev)


@wrong(
    "01.step",
    "the two weights exchanged: w_hh multiplies the input and w_ih the previous state",
    [
        r"swap",
        r"exchang",
        r"w_hh ?\*? ?x_t|w_ih ?\*? ?h_prev",
        r"weights?.*(wrong|other|each other'?s?) (term|way|place)",
    ],
)
def step_weights_exchanged(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_hh * x_t + w_ih * h_prev)


@wrong(
    "01.step",
    "written with numpy (np.dot, np.tanh): a numpy value comes back, not a tensor, and autograd cannot run through it",
    [r"numpy|np\.|ndarray", r"not a (torch )?tensor", r"(returns?|gives?) a (python|numpy)"],
)
def step_numpy(x_t, h_prev, w_ih, w_hh):
    return np.tanh(np.dot(w_ih, x_t) + np.dot(w_hh, h_prev))


@wrong(
    "01.step",
    "h_prev updated in place (mul_, add_) on the way to the tanh: the caller's previous state is overwritten",
    [
        r"in[- ]place",
        r"(chang|modif|overwr|mutat)\w*.{0,30}h_prev",
        r"h_prev.{0,30}(chang|modif|overwr|mutat)",
        r"mul_|add_",
    ],
)
def step_in_place(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(h_prev.mul_(w_hh).add_(w_ih * x_t))


@wrong(
    "01.step",
    "h_prev detached, as when a state is carried between batches: the value is right, no gradient reaches h_prev",
    [
        r"detach",
        r"gradient.{0,40}(h_prev|previous state|through time|earlier step)",
        r"(cut|break|stop)s? (the )?(graph|gradient)",
    ],
    source="https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887",
)
def step_detached_state(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * h_prev.detach())


@wrong(
    "01.step",
    "the sum rebuilt with torch.tensor(...): a copy without history, so no gradient reaches any argument",
    [r"torch\.tensor", r"(new|copied|rebuilt) tensor", r"(gradient|graph|autograd|grad_fn|history)"],
)
def step_wrapped_in_tensor(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(torch.tensor(w_ih * x_t + w_hh * h_prev))


@right("01.step", "tanh written as 2 * sigmoid(2a) - 1, the sum by addcmul")
def step_tanh_from_sigmoid(x_t, h_prev, w_ih, w_hh):
    a = torch.addcmul(w_ih * x_t, w_hh, h_prev)
    return 2 * torch.sigmoid(2 * a) - 1


# =================================================================================================
# 02.loop: my_rnn(module, input, hx=None) for one layer, one direction
# =================================================================================================


@wrong(
    "02.loop",
    "each step's state is appended before it is updated: output holds h_0 .. h_{T-1}, one step behind",
    [
        r"off[- ]by[- ]one",
        r"one step (late|behind|early|shifted)",
        r"shift(ed)? by one",
        r"(previous|old|initial) state.{0,40}output",
        r"output.{0,40}(previous|old|before the (update|step))",
        r"append.{0,30}before",
    ],
)
def loop_output_one_step_behind(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        states.append(h)
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "one bias only (b_ih), as in texts with h = tanh(W x + U h + b): bias_hh_l0 is never added",
    [
        r"bias_hh|b_hh",
        r"(second|other|hidden|recurrent) bias",
        r"(one|single) bias",
        r"bias.{0,20}(missing|left out|never)",
    ],
)
def loop_one_bias(module, input, hx=None):
    W_ih, W_hh, b = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + h @ W_hh.T + b)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "steps counted from 1 as in the paper's x_1 .. x_T: range(1, T) skips the first input",
    [
        r"range\(1",
        r"(first|0th|initial) (step|input|time step).{0,30}(skip|miss|never|dropped)",
        r"(skip|miss|drop)\w*.{0,30}(first|step 0|x_0)",
        r"off[- ]by[- ]one",
        r"count\w* from (1|one)",
    ],
)
def loop_from_step_one(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(1, input.shape[0]):
        h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "two places: states written into a preallocated output in place and read back (autograd fails in backward), "
    "and step 0 reads out[-1] (zeros) instead of hx",
    [
        r"in[- ]place",
        r"modified by an inplace",
        r"(preallocat|buffer|out\[t\] ?=|index(ed)? assign)",
        r"out\[-1\]|out\[t ?- ?1\]",
        r"\bhx\b.{0,40}(ignor|never|not used|unused)",
    ],
    source="https://github.com/pytorch/pytorch/pull/173888",
)
def loop_buffer_in_place(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    out = torch.zeros(T, B, H)
    for t in range(T):
        out[t] = torch.tanh(input[t] @ W_ih.T + b_ih + out[t - 1] @ W_hh.T + b_hh)
    return out, out[-1:]


@wrong(
    "02.loop",
    "the state detached at every step (truncated BPTT of one step): values right, gradients stop after one step",
    [
        r"detach",
        r"truncat",
        r"gradient.{0,40}(through time|earlier steps|previous step|only one step|cut)",
        r"(cut|break|stop)s? (the )?(graph|gradient)",
    ],
    source="https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887",
)
def loop_detach_each_step(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h.detach() @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "W_hh used without .T: right on the notebook's one-unit layer, wrong for more units",
    [r"\.T\b", r"transpos", r"(W_hh|weight_hh|recurrent weight).{0,40}(transpos|\.T|rows|columns)"],
)
def loop_W_hh_untransposed(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "input iterated as if batch first (input.transpose(0, 1)): the loop runs over the batch, not over time",
    [
        r"batch[_ ]first",
        r"transpos",
        r"(iterat|loop)\w* over (the )?(batch|sequences)",
        r"time (dimension|first|axis)",
        r"(seq_len|time).{0,30}(batch).{0,20}(swap|confus|mix)",
    ],
)
def loop_over_batch(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_b in input.transpose(0, 1):
        h = torch.tanh(x_b @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "the zero state made in float64 'for precision' against float32 weights: the matrix product refuses the mix",
    [r"float64|double", r"dtype", r"(float32|single precision).{0,30}(mix|mismatch)"],
)
def loop_float64_state(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size, dtype=torch.float64) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h_0 = hx[0][0], the first sequence's initial state, broadcast to every sequence (right only for a batch of one)",
    [
        r"hx\[0\]\[0\]|hx\[0, ?0\]",
        r"(first|one) (batch item|sequence|row).{0,40}(every|all|each|broadcast|shared)",
        r"(every|each|all) (sequence|batch item|row)s?.{0,40}(same|share|first)",
        r"shared across (the )?batch",
    ],
)
def loop_hx_first_row_shared(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0][0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@right("02.loop", "the input term of every step at once with F.linear, states grown with torch.cat")
def loop_projected_inputs(module, input, hx=None):
    xw = functional.linear(input, module.weight_ih_l0, module.bias_ih_l0)  # (T, B, H)
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    out = None
    for t in range(len(input)):
        h = torch.tanh(xw[t] + functional.linear(h, module.weight_hh_l0, module.bias_hh_l0))
        out = h[None] if out is None else torch.cat([out, h[None]])
    return out, h[None]


# =================================================================================================
# 03.step_matrices: rnn_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) for a batch
# =================================================================================================


@wrong(
    "03.step_matrices",
    "the paper's column convention W x^T, transposed back at the end, with the biases (H,) broadcast along the batch",
    [
        r"bias.{0,40}(broadcast|column|\[:, ?None\]|batch|along)",
        r"broadcast",
        r"column (vector|convention)",
        r"W_ih ?@ ?x_t\.T",
    ],
)
def step_column_convention(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(W_ih @ x_t.T + b_ih + W_hh @ h_prev.T + b_hh).T


@wrong(
    "03.step_matrices",
    "neither weight transposed: x_t @ W_ih, h_prev @ W_hh",
    [r"\.T\b", r"transpos", r"\(out, ?in\)|rows.{0,20}columns"],
)
def step_no_transposes(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih + b_ih + h_prev @ W_hh + b_hh)


@wrong(
    "03.step_matrices",
    "W_hh not transposed (W_ih is): silent when hidden_size is square, as W_hh always is",
    [r"W_hh.{0,30}(\.T|transpos)", r"transpos.{0,30}W_hh", r"recurrent (weight|term|product).{0,30}(transpos|\.T)"],
)
def step_W_hh_untransposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh + b_hh)


@wrong(
    "03.step_matrices",
    "the biases added after the tanh",
    [
        r"bias.{0,40}(after|outside).{0,10}tanh",
        r"(inside|before|under) the tanh",
        r"tanh.{0,30}(before|without) (the )?bias",
    ],
)
def step_bias_after_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T) + b_ih + b_hh


@wrong(
    "03.step_matrices",
    "F.linear for the input term with b_ih, the recurrent term without b_hh",
    [r"b_hh|bias_hh", r"(second|hidden|recurrent) bias", r"bias.{0,20}(missing|left out|dropped)"],
)
def step_linear_without_b_hh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(functional.linear(x_t, W_ih, b_ih) + functional.linear(h_prev, W_hh))


@wrong(
    "03.step_matrices",
    "colah-style concatenation [h_prev, x_t] multiplied by [W_ih, W_hh]: h_prev meets W_ih and x_t meets W_hh (silent: the shapes always agree)",
    [
        r"(concat|cat).{0,40}(order|misalign|h_prev|x_t)",
        r"order of (the )?(blocks|concatenat)",
        r"misalign",
        r"\[h_prev, ?x_t\]",
    ],
)
def step_concat_misaligned(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.cat([h_prev, x_t], dim=1) @ torch.cat([W_ih, W_hh], dim=1).T + b_ih + b_hh)


@wrong(
    "03.step_matrices",
    "computed in float64 'to avoid rounding' and returned as float64",
    [r"float64|double", r"dtype", r"float32"],
)
def step_in_float64(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a = x_t.double() @ W_ih.double().T + b_ih.double() + h_prev.double() @ W_hh.double().T + b_hh.double()
    return torch.tanh(a)


@wrong(
    "03.step_matrices",
    "column convention W x^T turned back into rows with .view(B, H), not .T: right only for a batch of one or one unit",
    [r"\bview\b|reshape", r"transpos|\.T\b", r"(rows?|batch items?|sequences?).{0,30}(mix|scrambl|interleav)"],
)
def step_column_view_back(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a = (W_ih @ x_t.T + W_hh @ h_prev.T).view(x_t.shape[0], -1)
    return torch.tanh(a + b_ih + b_hh)


@right("03.step_matrices", "einsum with named indices")
def step_einsum(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a = torch.einsum("bi,hi->bh", x_t, W_ih) + torch.einsum("bj,hj->bh", h_prev, W_hh)
    return torch.tanh(a + (b_ih + b_hh))


# =================================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), one layer, time first
# =================================================================================================


def _directions(module):
    fwd = (module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
    bwd = (
        module.weight_ih_l0_reverse,
        module.weight_hh_l0_reverse,
        module.bias_ih_l0_reverse,
        module.bias_hh_l0_reverse,
    )
    return fwd, bwd


@wrong(
    "04.bidirectional",
    "the backward run uses the forward weights (_l0) instead of the _reverse ones",
    [
        r"_reverse",
        r"(backward|reverse) (direction|run|pass)'?s? (weights|parameters)",
        r"forward (weights|parameters).{0,40}(backward|both)",
    ],
)
def birnn_forward_weights_twice(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    (W_ih, W_hh, b_ih, b_hh), _ = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], W_ih, W_hh, b_ih, b_hh)
    bwd, h_b = rnn_run(input.flip(0), h0[1], W_ih, W_hh, b_ih, b_hh)
    return torch.cat([fwd, bwd.flip(0)], dim=-1), torch.stack([h_f, h_b])


@wrong(
    "04.bidirectional",
    "two places, one idea: the backward states are left in computed order in output, and h_n's backward row "
    "is the first state computed (at the last input) instead of the last",
    [
        r"(computed|reverse|reversed) order",
        r"time order",
        r"(flip|revers)\w*.{0,40}(back|output|states)",
        r"backward.{0,40}h_n|h_n.{0,40}backward",
        r"(store|place)\w*.{0,30}(own|its) (time )?step",
    ],
)
def birnn_backward_in_computed_order(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, b = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    bwd, _ = rnn_run(input.flip(0), h0[1], *b)  # bwd[0] is the state after the last input
    return torch.cat([fwd, bwd], dim=-1), torch.stack([h_f, bwd[0]])


@wrong(
    "04.bidirectional",
    "h_n merged as Keras merges states: cat([h_fwd, h_bwd], -1) with one row, (1, B, 2H), not two rows (2, B, H)",
    [
        r"h_n.{0,40}(shape|rows?|\(2, ?B|stack|one row)",
        r"(concat|cat)\w*.{0,30}h_n|h_n.{0,30}(concat|cat)",
        r"direction.{0,30}(dimension|rows?)",
        r"\(1, ?B, ?2 ?\*? ?H\)",
    ],
)
def birnn_h_n_concatenated(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, b = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    bwd, h_b = rnn_run(input.flip(0), h0[1], *b)
    return torch.cat([fwd, bwd.flip(0)], dim=-1), torch.cat([h_f, h_b], dim=-1).unsqueeze(0)


@wrong(
    "04.bidirectional",
    "the backward loop range(T - 1, 0, -1) stops before step 0: the backward run never reads the first input",
    [
        r"off[- ]by[- ]one",
        r"range\(T ?- ?1, ?0",
        r"(step|time|t) ?(=|is)? ?0.{0,30}(never|skip|miss)",
        r"(first|earliest) (step|input).{0,30}(never|skip|miss)",
        r"stop.{0,20}-1",
    ],
)
def birnn_backward_stops_early(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, (W_ih, W_hh, b_ih, b_hh) = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    h, by_time = h0[1], [torch.zeros(B, H)] * T
    for t in range(T - 1, 0, -1):
        h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        by_time[t] = h
    return torch.cat([fwd, torch.stack(by_time)], dim=-1), torch.stack([h_f, h])


@wrong(
    "04.bidirectional",
    "the two directions joined along time (cat with dim=0): output is (2T, B, H)",
    [
        r"(cat|concat)\w*.{0,30}(dim|axis)",
        r"(feature|last) (dim|dimension|axis)",
        r"2 ?\*? ?T|time (dim|dimension|axis)",
        r"dim ?= ?(-1|2)",
    ],
)
def birnn_cat_along_time(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, b = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    bwd, h_b = rnn_run(input.flip(0), h0[1], *b)
    return torch.cat([fwd, bwd.flip(0)]), torch.stack([h_f, h_b])


@wrong(
    "04.bidirectional",
    "the backward run reads the forward run's states instead of the input (the directions chained like layers)",
    [
        r"backward.{0,40}(reads?|input|fed).{0,30}forward",
        r"(chain|stack)\w*.{0,30}(directions|forward)",
        r"(both|each) directions? .{0,20}(read|share) the (same )?input",
        r"input of the backward",
    ],
)
def birnn_backward_reads_forward(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, b = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    bwd, h_b = rnn_run(fwd.flip(0), h0[1], *b)
    return torch.cat([fwd, bwd.flip(0)], dim=-1), torch.stack([h_f, h_b])


@wrong(
    "04.bidirectional",
    "the backward run takes the _reverse weights but the forward biases (bias_ih_l0, bias_hh_l0)",
    [r"bias.{0,40}(_reverse|backward)", r"(forward|_l0) bias", r"(backward|reverse).{0,40}bias"],
)
def birnn_forward_biases_in_backward(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    (W_ih, W_hh, b_ih, b_hh), (W_ih_r, W_hh_r, _, _) = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], W_ih, W_hh, b_ih, b_hh)
    bwd, h_b = rnn_run(input.flip(0), h0[1], W_ih_r, W_hh_r, b_ih, b_hh)
    return torch.cat([fwd, bwd.flip(0)], dim=-1), torch.stack([h_f, h_b])


@wrong(
    "04.bidirectional",
    "output built by stack(dim=-1).view(T, B, 2H): the directions interleaved unit by unit (right only for one unit)",
    [
        r"interleav",
        r"\bview\b|reshape",
        r"(halves|units|directions).{0,30}(mix|alternat|interleav|order)",
        r"stack.{0,30}dim",
    ],
)
def birnn_interleaved_units(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, b = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    bwd, h_b = rnn_run(input.flip(0), h0[1], *b)
    return torch.stack([fwd, bwd.flip(0)], dim=-1).view(T, B, 2 * H), torch.stack([h_f, h_b])


@wrong(
    "04.bidirectional",
    "the backward run always starts from zeros: hx[1] is never read",
    [
        r"hx\[1\]",
        r"backward.{0,40}(initial|h_?0|hx|start)",
        r"(initial|h_?0).{0,40}backward",
        r"hx.{0,30}(ignor|never|not used)",
    ],
)
def birnn_backward_from_zeros(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    f, b = _directions(module)
    fwd, h_f = rnn_run(input, h0[0], *f)
    bwd, h_b = rnn_run(input.flip(0), torch.zeros(B, H), *b)
    return torch.cat([fwd, bwd.flip(0)], dim=-1), torch.stack([h_f, h_b])


@right("04.bidirectional", "one loop over time reading t and T - 1 - t together, the backward states gathered by flip")
def birnn_one_loop(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_f, h_b = (input.new_zeros(B, H), input.new_zeros(B, H)) if hx is None else hx.unbind(0)
    (Wf, Uf, bf, cf), (Wb, Ub, bb, cb) = _directions(module)
    fs, bs = [], []
    for t in range(T):
        h_f = torch.tanh(functional.linear(input[t], Wf, bf) + functional.linear(h_f, Uf, cf))
        h_b = torch.tanh(functional.linear(input[T - 1 - t], Wb, bb) + functional.linear(h_b, Ub, cb))
        fs.append(h_f)
        bs.append(h_b)
    return torch.cat([torch.stack(fs), torch.stack(bs).flip(0)], dim=2), torch.stack([h_f, h_b])


# =================================================================================================
# 05.stack: my_stack(module, input, hx=None), one direction, time first
# =================================================================================================


def _stack_weights(module, k):
    return (getattr(module, f"{name}_l{k}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))


@wrong(
    "05.stack",
    "h_n stacked top layer first (finals[::-1])",
    [
        r"h_n.{0,40}(order|revers|top.{0,20}first|upside)",
        r"layer 0 first",
        r"(rows?|layers?).{0,30}(reversed|wrong order|order)",
    ],
)
def stack_h_n_top_first(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[k], *_stack_weights(module, k))
        finals.append(h)
    return x, torch.stack(finals[::-1])


@wrong(
    "05.stack",
    "every layer's state kept in one tensor and written in place (h[k] = ...), as PyTorch's own docstring once did: "
    "values right, backward fails",
    [
        r"in[- ]place",
        r"modified by an inplace",
        r"h\[k\] ?=|index(ed)? assign",
        r"(gradient|backward).{0,30}(fail|error|broken)",
    ],
    source="https://github.com/pytorch/pytorch/pull/173888",
)
def stack_state_written_in_place(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h = torch.zeros(L, B, H) if hx is None else hx.clone()
    output = []
    for x_t in input:
        for k in range(L):
            W_ih, W_hh, b_ih, b_hh = _stack_weights(module, k)
            below = x_t if k == 0 else h[k - 1]
            h[k] = torch.tanh(below @ W_ih.T + b_ih + h[k] @ W_hh.T + b_hh)
        output.append(h[-1].clone())
    return torch.stack(output), h


@wrong(
    "05.stack",
    "output holds every layer's states side by side (cat over layers), not the top layer's only",
    [
        r"output.{0,40}(top|last) layer",
        r"(every|all|each) layers?.{0,30}output",
        r"output.{0,40}(every|all|each) layers?",
        r"(L ?\* ?H|num_layers ?\* ?hidden)",
    ],
)
def stack_output_all_layers(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals, outs = input, [], []
    for k in range(L):
        x, h = rnn_run(x, h0[k], *_stack_weights(module, k))
        finals.append(h)
        outs.append(x)
    return torch.cat(outs, dim=-1), torch.stack(finals)


@wrong(
    "05.stack",
    "each layer's initial state sliced as hx[k:k+1] (1, B, H): an extra dimension rides through the states",
    [
        r"hx\[k ?: ?k ?\+ ?1\]",
        r"(extra|leading|additional) (dim|dimension|axis)",
        r"hx\[k\]",
        r"(shape|dimension).{0,30}(state|output|h_n)",
    ],
)
def stack_hx_slice_keeps_dim(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[k : k + 1], *_stack_weights(module, k))
        finals.append(h.reshape(B, H))
    return x, torch.stack(finals)


@wrong(
    "05.stack",
    "an extra tanh on the states handed to the next layer (they are already tanh's output)",
    [
        r"tanh.{0,30}(twice|again|double|extra|second)",
        r"(extra|second|another) tanh",
        r"(between|next) layers?.{0,30}tanh",
    ],
)
def stack_extra_tanh_between_layers(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        states, h = rnn_run(x, h0[k], *_stack_weights(module, k))
        finals.append(h)
        x = torch.tanh(states) if k < L - 1 else states
    return x, torch.stack(finals)


@wrong(
    "05.stack",
    "h_n holds each layer's state after its FIRST step (states[0]), not its last",
    [r"h_n.{0,40}(first|step 0|states\[0\])", r"(last|final) (time )?step", r"h_n.{0,40}(wrong|which) step"],
)
def stack_h_n_first_step(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        x, _ = rnn_run(x, h0[k], *_stack_weights(module, k))
        finals.append(x[0])
    return x, torch.stack(finals)


@wrong(
    "05.stack",
    "residual connections (as in GNMT): layer k > 0 adds its input to its states before passing them on",
    [r"residual", r"skip[- ]connection", r"(adds?|sum|plus).{0,40}(input|layer below|previous layer)"],
)
def stack_residual(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        states, h = rnn_run(x, h0[k], *_stack_weights(module, k))
        finals.append(h)
        x = states + x if k > 0 else states
    return x, torch.stack(finals)


@wrong(
    "05.stack",
    "layer k's initial state read by hx.view(B, L, H)[:, k]: a view that mixes batch items and layers (right only for B = 1)",
    [r"\bview\b|reshape", r"hx.{0,40}(rows?|layers?|batch).{0,30}(mix|scrambl|order)", r"hx\[k\]", r"transpos|permute"],
)
def stack_hx_by_view(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(B, L, H) if hx is None else hx.view(B, L, H)
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[:, k], *_stack_weights(module, k))
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    "05.stack",
    "the number of layers taken from hx (1 when hx is None), not module.num_layers",
    [
        r"num_layers",
        r"(one|single|first) layer( only)?",
        r"(every|all|upper|higher) layers?.{0,30}(missing|never|skipped)",
        r"len\(hx\)|hx\.shape\[0\]",
    ],
)
def stack_layers_from_hx(module, input, hx=None):
    L = 1 if hx is None else len(hx)
    h0 = torch.zeros(L, input.shape[1], module.hidden_size) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[k], *_stack_weights(module, k))
        finals.append(h)
    return x, torch.stack(finals)


def _stack_recursive(module, x, h0, k):
    if k == module.num_layers:
        return x, []
    states, h = rnn_run(x, h0[k], *_stack_weights(module, k))
    top, finals = _stack_recursive(module, states, h0, k + 1)
    return top, [h, *finals]


@right("05.stack", "recursion over the layers")
def stack_recursive(module, input, hx=None):
    h0 = input.new_zeros(module.num_layers, input.shape[1], module.hidden_size) if hx is None else hx
    top, finals = _stack_recursive(module, input, h0, 0)
    return top, torch.stack(finals)


# =================================================================================================
# 06.top_h_n: top_h_n(output, hidden_size), output (batch, seq_len, 2H) batch first
# =================================================================================================


@wrong(
    "06.top_h_n",
    "both rows from the last step, output[:, -1] cut into (2, B, H): the backward row is its first step, not its final state "
    "(right only for one step)",
    [
        r"backward.{0,50}(first (time )?step|step 0|output\[:, ?0|index 0|t ?= ?0)",
        r"backward.{0,50}(last step|-1)",
        r"(first|0th) (time )?step.{0,40}backward",
        r"(different|two) (time )?steps",
    ],
    source="https://discuss.pytorch.org/t/concatnation-of-h-t-of-forward-and-h-0-of-backward-in-bidirection-lstm-output/10333",
)
def top_both_from_last_step(output, hidden_size):
    return output[:, -1].unflatten(-1, (2, hidden_size)).transpose(0, 1)


@wrong(
    "06.top_h_n",
    "indexed as if time first: output[-1] and output[0] pick batch items, not steps",
    [
        r"batch[_ ]first",
        r"time[_ ]first",
        r"(time|step).{0,30}(second|dim(ension)? 1|index 1|axis 1)",
        r"output\[-1\]|output\[0\]",
        r"(first|leading) (index|dim).{0,30}batch",
    ],
)
def top_time_first_indexing(output, hidden_size):
    H = hidden_size
    return torch.stack([output[-1, :, :H], output[0, :, H:]])


@wrong(
    "06.top_h_n",
    "the time ends exchanged: forward row from the first step, backward row from the last",
    [
        r"(ends|steps).{0,30}(swap|exchang|revers|wrong)",
        r"forward.{0,40}(last step|-1|end)",
        r"backward.{0,40}(first step|step 0|start)",
        r"(first|last) step.{0,30}(forward|backward)",
    ],
)
def top_time_ends_exchanged(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, :H], output[:, -1, H:]])


@wrong(
    "06.top_h_n",
    "the two rows joined by torch.cat: (2B, H) instead of stack's (2, B, H)",
    [r"\bstack\b", r"\bcat\b|concat", r"shape.{0,30}\(2, ?(batch|B)", r"\(2 ?\* ?(batch|B), ?H\)|2B"],
)
def top_cat_not_stack(output, hidden_size):
    H = hidden_size
    return torch.cat([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "the rows in the wrong order: backward first, forward second",
    [r"forward (row )?first", r"(row )?order", r"swap|exchang", r"h_n\[-2\]|h_n\[-1\]", r"backward (row )?first"],
)
def top_backward_first(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, H:], output[:, -1, :H]])


@wrong(
    "06.top_h_n",
    "H read as output.shape[-1] (which is 2H): the forward slice is the whole row and the backward slice empty",
    [r"hidden_size", r"2 ?\*? ?H|2H", r"width|half|halves", r"output\.shape\[-1\]|shape\[2\]"],
)
def top_width_from_output(output, hidden_size):
    H = output.shape[-1]
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "both rows sliced with :H after stacking: the backward row is the FORWARD half at step 0",
    [
        r"backward.{0,40}(half|H:|second half|columns)",
        r"\[\.\.\., ?:H\]|:H\]",
        r"forward half.{0,40}(twice|both)",
        r"(both|two) rows.{0,30}forward",
    ],
)
def top_forward_half_twice(output, hidden_size):
    return torch.stack([output[:, -1], output[:, 0]])[..., :hidden_size]


@right("06.top_h_n", "both ends gathered at once, then the (time, direction) diagonal")
def top_diagonal(output, hidden_size):
    ends = output[:, [-1, 0]].unflatten(-1, (2, hidden_size))  # (B, 2 ends, 2 directions, H)
    return ends.diagonal(dim1=1, dim2=2).permute(2, 0, 1)


# =================================================================================================
# 08.last_states: last_states(output, lengths), output (T, B, H) time first
# =================================================================================================


@wrong(
    "08.last_states",
    "gather(...).squeeze() also removes the unit dimension when H = 1: (B,) instead of (B, 1)",
    [r"squeeze", r"shape", r"(H|hidden_size|one unit) ?(=|==|is)? ?1", r"(unit|hidden|last) dim"],
)
def last_gather_squeeze(output, lengths):
    index = (lengths - 1).view(1, -1, 1).expand(1, output.shape[1], output.shape[2])
    return output.gather(0, index).squeeze()


@wrong(
    "08.last_states",
    "indexed batch first, output[torch.arange(B), lengths - 1], on a time-first output",
    [r"batch[_ ]first", r"time[_ ]first", r"(index|indices).{0,40}(swap|order|places)", r"output\[torch\.arange"],
)
def last_batch_first_index(output, lengths):
    return output[torch.arange(output.shape[1]), lengths - 1]


@wrong(
    "08.last_states",
    "mean over the real steps (masked mean pooling) instead of the state at the last real step",
    [r"\bmean\b|average", r"pool", r"sum.{0,30}(steps|time)", r"(last|final) (real )?(step|state)"],
)
def last_mean_pooled(output, lengths):
    return output.sum(0) / lengths[:, None]


@wrong(
    "08.last_states",
    "lengths sorted first (as pack_padded_sequence wants), so each row is paired with another sequence's length",
    [
        r"sort",
        r"(original|batch|given) order",
        r"(unsorted|shuffled)",
        r"(paired|pair|match)\w*.{0,30}(wrong|another|other) (sequence|length)",
    ],
)
def last_sorted_lengths(output, lengths):
    return output[lengths.sort(descending=True).values - 1, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "output[lengths - 1] picks whole time rows, (B, B, H); the second index [:, arange(B)] keeps them all",
    [
        r"\(B, ?B, ?H\)",
        r"pair\w*",
        r"(each|own) (sequence|row).{0,30}(own|index|pair)",
        r"diagonal",
        r"(time|both) ind(ex|ices).{0,30}(together|entry by entry)",
    ],
)
def last_rows_then_columns(output, lengths):
    return output[lengths - 1][:, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "every row taken at the longest length, output[lengths.max() - 1]: shorter sequences get a padding step",
    [r"(each|own|its) (length|sequence)", r"padd", r"\bmax\b|longest", r"(last|final) padded step"],
)
def last_at_longest_length(output, lengths):
    return output[lengths.max() - 1]


@wrong(
    "08.last_states",
    "returned with h_n's layer dimension, (1, B, H)",
    [r"shape", r"\(1, ?B, ?H\)", r"unsqueeze|extra (dim|dimension|axis)", r"layer dim"],
)
def last_with_layer_dim(output, lengths):
    return output[lengths - 1, torch.arange(output.shape[1])].unsqueeze(0)


@right("08.last_states", "a one-hot mask over time, summed")
def last_one_hot(output, lengths):
    pick = functional.one_hot(lengths - 1, output.shape[0]).T.unsqueeze(-1)  # (T, B, 1)
    return (output * pick).sum(0)


# =================================================================================================
# 10.step: lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh), gates i, f, g, o
# =================================================================================================


def _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh


@wrong(
    "10.step",
    "ONNX's gate order (i, o, f, c) read from torch's (i, f, g, o) blocks",
    [
        r"gate order|order of (the )?gates|(gates?|blocks?).{0,30}order",
        r"onnx",
        r"chunk",
        r"\bo\b.{0,20}\bf\b.{0,20}(swap|order|exchang)",
    ],
)
def lstm_onnx_order(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_o, a_f, a_g = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "peephole connections from Gers' LSTM with unit weights: c_prev added to the input and forget gates' pre-activations",
    [
        r"peephole",
        r"c_prev.{0,40}(gate|pre-?activation|input gate|forget gate)",
        r"(input|forget) gate.{0,40}(c_prev|cell)",
    ],
)
def lstm_peepholes(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    i, f = torch.sigmoid(a_i + c_prev), torch.sigmoid(a_f + c_prev)
    c_t = f * c_prev + i * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "h_t = o * c_t: the tanh on the cell state is missing",
    [r"tanh.{0,30}(c_t|cell)", r"h_t.{0,40}tanh", r"(cell|c_t).{0,30}(squash|tanh)", r"o ?\* ?c_t"],
)
def lstm_no_tanh_on_cell(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * c_t, c_t


@wrong(
    "10.step",
    "TF's BasicLSTMCell forget_bias=1.0 added to the forget gate's pre-activation",
    [r"forget[_ ]bias", r"forget gate.{0,40}(bias|offset|shift|\+ ?1)", r"\+ ?1(\.0)?\b", r"tensorflow|\btf\b"],
    source="https://chadrick-kwag.net/posts/reasons-why-forget-bias-initialized-to-1-is-good-practice-in-lstm",
)
def lstm_forget_bias_one(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f + 1.0) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "chunk(4) without dim cuts the batch, not the 4H gate columns",
    [
        r"chunk.{0,30}(dim|axis)",
        r"dim ?= ?(-1|1)",
        r"(last|gate|column) (dim|dimension|axis)",
        r"(cuts?|splits?) the batch",
    ],
)
def lstm_chunk_batch(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the sigmoid applied to all four blocks at once: the candidate g is a sigmoid, not a tanh",
    [
        r"\bg\b.{0,40}tanh",
        r"candidate.{0,40}(tanh|sigmoid)",
        r"sigmoid.{0,40}(all|every|four|g\b)",
        r"(cell input|g gate)",
    ],
)
def lstm_all_sigmoid(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = torch.sigmoid(_lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh)).chunk(4, dim=-1)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "W_hh.view(H, 4H) in place of W_hh.T: the same numbers only for one unit",
    [r"\bview\b|reshape", r"transpos|\.T\b", r"(W_hh|weight_hh|recurrent).{0,40}(view|transpos|rows|columns|layout)"],
)
def lstm_W_hh_view(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.view(H, 4 * H) + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the gates cut by .view(B, H, 4).unbind(-1): every gate takes one column in four, units and gates interleaved "
    "(right only for one unit)",
    [
        r"\bview\b|reshape|unbind",
        r"interleav",
        r"(gates?|blocks?).{0,40}(contiguous|consecutive|blocks of|chunk)",
        r"chunk",
    ],
)
def lstm_gates_by_view(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    pre = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh)
    a_i, a_f, a_g, a_o = pre.view(pre.shape[0], -1, 4).unbind(-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the new cell written into c_prev in place (mul_, add_): the caller's cell state is overwritten",
    [
        r"in[- ]place",
        r"(chang|modif|overwr|mutat)\w*.{0,30}c_prev",
        r"c_prev.{0,30}(chang|modif|overwr|mutat)",
        r"mul_|add_",
    ],
)
def lstm_cell_in_place(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    c_t = c_prev.mul_(torch.sigmoid(a_f)).add_(torch.sigmoid(a_i) * torch.tanh(a_g))
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the input and forget gates exchanged in the cell update: c_t = i * c_prev + f * g",
    [
        r"(input|forget) gate.{0,40}(swap|exchang|wrong|candidate|old cell)",
        r"i ?\* ?c_prev|f ?\* ?g\b",
        r"\bf\b.{0,20}\bi\b.{0,20}(swap|exchang)",
        r"forget gate.{0,30}(scale|multipl)",
    ],
)
def lstm_i_f_exchanged(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = _lstm_pre(x_t, h_prev, W_ih, W_hh, b_ih, b_hh).chunk(4, dim=-1)
    i, f = torch.sigmoid(a_i), torch.sigmoid(a_f)
    c_t = i * c_prev + f * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


@right("10.step", "one F.linear per gate on row slices of the weights, the cell by addcmul")
def lstm_per_gate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]

    def gate(k, act):
        rows = slice(k * H, (k + 1) * H)
        return act(functional.linear(x_t, W_ih[rows], b_ih[rows]) + functional.linear(h_prev, W_hh[rows], b_hh[rows]))

    i, f, g, o = gate(0, torch.sigmoid), gate(1, torch.sigmoid), gate(2, torch.tanh), gate(3, torch.sigmoid)
    c_t = torch.addcmul(f * c_prev, i, g)
    return o * torch.tanh(c_t), c_t


# =================================================================================================
# 11.step: gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh), blocks r, z, n
# =================================================================================================


@wrong(
    "11.step",
    "two places from Keras' GRU: blocks read in Keras' order (z, r, h) and its default reset_after=False (r on h_prev before the product)",
    [
        r"keras",
        r"(block|gate) order|order of (the )?(blocks|gates)|chunk",
        r"\bz\b.{0,20}\br\b.{0,20}(swap|exchang|order)",
        r"reset.{0,40}(before|product|h_prev)",
    ],
    source="https://gradient.docs.losttech.software/tensorflow.keras.layers/GRU.htm",
)
def gru_keras_order_reset_before(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_iz, W_ir, W_in = W_ih.chunk(3)
    W_hz, W_hr, W_hn = W_hh.chunk(3)
    b_iz, b_ir, b_in = b_ih.chunk(3)
    b_hz, b_hr, b_hn = b_hh.chunk(3)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    n = torch.tanh(x_t @ W_in.T + b_in + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "b_hn added outside the reset gate: n = tanh(W_in x + b_in + r * (W_hn h) + b_hn)",
    [r"b_hn", r"bias.{0,40}(inside|outside|reset|r ?\*)", r"reset.{0,40}bias"],
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
    "the candidate n through a sigmoid, like the gates, instead of tanh",
    [
        r"\bn\b.{0,40}tanh",
        r"candidate.{0,40}(tanh|sigmoid)",
        r"tanh.{0,30}(missing|candidate)",
        r"sigmoid.{0,30}(candidate|\bn\b)",
    ],
)
def gru_sigmoid_candidate(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.sigmoid(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "a copy-paste slip: z's recurrent term uses W_hr (the reset block) instead of W_hz",
    [
        r"W_hz",
        r"W_hr.{0,40}\bz\b|\bz\b.{0,40}W_hr",
        r"(update gate|\bz\b).{0,40}(recurrent|hidden) (weight|block|term)",
        r"copy",
    ],
)
def gru_z_reads_W_hr(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hr.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the weights chunked by columns (dim=1) instead of by rows",
    [r"chunk.{0,30}(dim|axis|columns|rows)", r"dim ?= ?0", r"(rows|blocks of rows)"],
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
    "torch.lerp(h_prev, n, z) = (1 - z) h_prev + z n: the other z convention (Chung et al.), z the share of the new state",
    [
        r"\bz\b.{0,50}(convention|swap|exchang|1 ?- ?z|old state|h_prev|kept|keep)",
        r"lerp",
        r"update gate.{0,40}(convention|revers|swap|wrong)",
        r"(1 ?- ?z).{0,30}(h_prev|n\b)",
    ],
    source="https://devhide.com/gru-pytorch-keras-and-formula-in-wiki-are-different-64031287",
)
def gru_lerp_other_convention(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return torch.lerp(h_prev, n, z)


@wrong(
    "11.step",
    "the reset applied to h_prev before the product, with r * b_hn to keep the bias gated: the same only for one unit",
    [
        r"reset.{0,40}(before|after|product|h_prev)",
        r"r ?\* ?h_prev|\(r ?\* ?h",
        r"(before|after) the (matrix )?product",
    ],
    source="https://discuss.pytorch.org/t/grucell-is-different-in-pytorch-and-tensorflow/6630",
)
def gru_reset_on_h_prev(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + (r * h_prev) @ W_hn.T + r * b_hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "a copy-paste slip: the hidden biases chunked from b_ih, so b_hh is never used and b_ih counts twice",
    [r"b_hh|bias_hh", r"(hidden|recurrent) bias", r"b_ih.{0,30}(twice|two|both)"],
)
def gru_hidden_biases_from_b_ih(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_ih.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "h_prev *= z in place before the mix: the caller's state is overwritten (and autograd refuses it on a leaf)",
    [r"in[- ]place", r"\*=", r"(chang|modif|overwr|mutat)\w*.{0,30}h_prev", r"h_prev.{0,30}(chang|modif|overwr|mutat)"],
    source="https://github.com/pytorch/pytorch/issues/56983",
)
def gru_h_prev_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    h_prev *= z
    return h_prev + (1 - z) * n


@right("11.step", "both products at once, chunked by columns, and h_t = n + z (h_prev - n)")
def gru_fused(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = functional.linear(x_t, W_ih, b_ih).chunk(3, dim=1)
    gh = functional.linear(h_prev, W_hh, b_hh).chunk(3, dim=1)
    r, z = torch.sigmoid(gi[0] + gh[0]), torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(gi[2] + r * gh[2])
    return n + z * (h_prev - n)


# =================================================================================================
# 12.bptt_step: bptt_step(delta_t, h_t, W_hh) -> dL/dh_{t-1}, rows (B, H)
# =================================================================================================


@wrong(
    "12.bptt_step",
    "the slope added instead of multiplied, as in a much-copied numpy BPTT tutorial: delta_t @ W_hh + (1 - h_t**2)",
    [
        r"(add|plus|sum)\w*.{0,40}(slope|derivative)",
        r"(slope|derivative).{0,40}(added|multipl)",
        r"multipl\w*.{0,30}(slope|derivative|unit by unit)",
        r"\+ ?\(?1 ?- ?h_t",
    ],
    source="https://datascience.stackexchange.com/revisions/2b045ce5-ff36-4127-ac4b-bde9ed5ead67/view-source",
)
def bptt_slope_added(delta_t, h_t, W_hh):
    return delta_t @ W_hh + (1 - h_t**2)


@wrong(
    "12.bptt_step",
    "the sigmoid's slope h_t * (1 - h_t) for a tanh RNN",
    [r"sigmoid", r"h_t ?\* ?\(1 ?- ?h_t\)", r"(slope|derivative).{0,40}tanh", r"1 ?- ?h_t ?\*\* ?2|1 ?- ?h_t\^2"],
)
def bptt_sigmoid_slope(delta_t, h_t, W_hh):
    return (delta_t * h_t * (1 - h_t)) @ W_hh


@wrong(
    "12.bptt_step",
    "tanh applied again to h_t: the slope 1 - tanh(h_t)^2 treats the state as the pre-activation",
    [r"tanh\(h_t\)", r"tanh.{0,30}(again|twice|second)", r"pre-?activation", r"1 ?- ?h_t ?\*\* ?2|1 ?- ?h_t\^2"],
)
def bptt_tanh_again(delta_t, h_t, W_hh):
    return (delta_t * (1 - torch.tanh(h_t) ** 2)) @ W_hh


@wrong(
    "12.bptt_step",
    "diag(1 - h_t^2) built from h_t.squeeze(0), as for one sequence: right only for a batch of one",
    [r"batch", r"(each|every|per) (row|sequence)", r"squeeze|\bdiag\b", r"B ?= ?1|one sequence"],
)
def bptt_diag_of_one_row(delta_t, h_t, W_hh):
    return delta_t @ torch.diag((1 - h_t**2).squeeze(0)) @ W_hh


@wrong(
    "12.bptt_step",
    "summed over the batch as if it were a weight's gradient: one row (1, H) instead of one per sequence",
    [
        r"sum\w*.{0,30}batch|batch.{0,30}(sum|accumul)",
        r"(each|per|every) (row|sequence|batch item)",
        r"shape",
        r"\(1, ?H\)",
    ],
)
def bptt_summed_over_batch(delta_t, h_t, W_hh):
    return ((delta_t * (1 - h_t**2)) @ W_hh).sum(0, keepdim=True)


@wrong(
    "12.bptt_step",
    "CS231n's rnn_step_backward habit: returns (dh_prev, dW_hh) instead of dh_prev alone",
    [r"tuple", r"(one|single) (tensor|value)", r"(weight|W_hh).{0,20}gradient|dW", r"(two|pair of) (values|tensors)"],
)
def bptt_returns_weight_grad(delta_t, h_t, W_hh):
    d_a = delta_t * (1 - h_t**2)
    return d_a @ W_hh, d_a.T @ h_t


@wrong(
    "12.bptt_step",
    "the slope built from the outer product h_t.T @ h_t instead of h_t**2 unit by unit (right only for one unit and one row)",
    [r"outer", r"h_t\.T", r"(unit by unit|elementwise|element-wise)", r"h_t ?\*\* ?2|h_t\^2"],
)
def bptt_outer_product(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t.T @ h_t)) @ W_hh


@wrong(
    "12.bptt_step",
    "clipped to [-1, 1] inside the step 'against exploding gradients'",
    [r"clip", r"clamp", r"\[-1, ?1\]"],
)
def bptt_clipped(delta_t, h_t, W_hh):
    return ((delta_t * (1 - h_t**2)) @ W_hh).clamp(-1, 1)


@wrong(
    "12.bptt_step",
    "delta_t *= slope in place: the caller's delta_t is overwritten",
    [
        r"in[- ]place",
        r"\*=",
        r"(chang|modif|overwr|mutat)\w*.{0,30}delta_t",
        r"delta_t.{0,30}(chang|modif|overwr|mutat)",
    ],
)
def bptt_delta_in_place(delta_t, h_t, W_hh):
    delta_t *= 1 - h_t**2
    return delta_t @ W_hh


@right("12.bptt_step", "einsum, the slope as (1 - h)(1 + h)")
def bptt_einsum(delta_t, h_t, W_hh):
    return torch.einsum("bi,ij->bj", delta_t * (1 - h_t) * (1 + h_t), W_hh)


# =================================================================================================
# 13.tag_loss: tag_loss(scores, tags, lengths), scores (B, T, C), tags (B, T) with anything in the padding
# =================================================================================================


@wrong(
    "13.tag_loss",
    "the mask built from the tags (tags != 0), but 0 is a real tag too and the padding may hold anything",
    [
        r"tags? ?(!=|==|>) ?0",
        r"mask.{0,40}(from|on|by) (the )?tags",
        r"(tag|class) 0.{0,40}real|real.{0,30}(tag|class) 0",
        r"from (the )?lengths",
    ],
)
def loss_mask_from_tags(scores, tags, lengths):
    is_real = tags != 0
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "summed over the real characters and divided by the batch size (a per-sequence loss), not by their number",
    [
        r"(divid|normali[sz]|mean|average)\w*.{0,40}(batch|\bB\b|sequences)",
        r"reduction",
        r"number of (real )?(characters|tokens|places)",
        r"sum.{0,30}(batch|B\b)",
    ],
)
def loss_sum_over_batch_size(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real], reduction="sum") / scores.shape[0]


@wrong(
    "13.tag_loss",
    "the mean of each sequence's mean: short sequences weigh as much as long ones",
    [
        r"(per|each)[- ]sequence (mean|average|loss)",
        r"mean of (the )?(per-sequence )?means",
        r"weigh\w*.{0,40}(sequences?|equally|short)",
        r"average.{0,40}(characters|tokens)",
    ],
)
def loss_mean_of_means(scores, tags, lengths):
    losses = [functional.cross_entropy(scores[b, :n], tags[b, :n]) for b, n in enumerate(lengths.tolist())]
    return torch.stack(losses).mean()


@wrong(
    "13.tag_loss",
    "ignore_index=0 drops every real character tagged 0 and keeps padding tagged otherwise",
    [r"ignore_index", r"(tag|class) 0", r"from (the )?lengths|lengths.{0,30}(never|not) used"],
)
def loss_ignore_index_zero(scores, tags, lengths):
    return functional.cross_entropy(scores.transpose(1, 2), tags, ignore_index=0)


@wrong(
    "13.tag_loss",
    "the mask off by one: arange(T) <= lengths keeps one padding step per shorter sequence",
    [
        r"off[- ]by[- ]one",
        r"<=",
        r"one (extra|more) (step|character|place)",
        r"(first )?padding (step|place|character)",
    ],
)
def loss_mask_off_by_one(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) <= lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "scores (B, T, C) handed to cross_entropy as they are, which reads dimension 1 as the classes",
    [r"class(es)? (dim|dimension|axis)", r"(dim|dimension|axis) 1", r"transpose|permute", r"\(B, ?C, ?T\)|\(N, ?C"],
)
def loss_classes_last(scores, tags, lengths):
    per_place = functional.cross_entropy(scores, tags, reduction="none")
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return per_place[is_real].mean()


@wrong(
    "13.tag_loss",
    "the padding's losses zeroed by the mask, then the mean taken over every place (B * T)",
    [
        r"(divid|mean|average)\w*.{0,40}(all|every|padd|B ?\* ?T)",
        r"number of real",
        r"mask.{0,30}sum",
        r"(zeros?|zeroed).{0,40}(count|mean|average)",
    ],
    source="https://example-a.com/answer/66526823",
)
def loss_masked_mean_over_all(scores, tags, lengths):
    per_place = functional.cross_entropy(scores.transpose(1, 2), tags, reduction="none")
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return (per_place * is_real).mean()


@wrong(
    "13.tag_loss",
    "log_softmax over dim=1, the time steps, instead of the classes",
    [r"(log_)?softmax.{0,40}(dim|time|steps|axis)", r"dim ?= ?(-1|2)", r"over (the )?(time|steps)"],
)
def loss_log_softmax_over_time(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.nll_loss(functional.log_softmax(scores, dim=1)[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "returned as loss.item(), a Python float: no tensor, no gradient",
    [r"\.item\(\)|\bitem\b", r"(python )?float", r"not a tensor", r"gradient|graph|backward"],
)
def loss_item(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real]).item()


@right("13.tag_loss", "per-place losses with reduction='none', masked and divided by the mask's sum")
def loss_masked_sum(scores, tags, lengths):
    per_place = functional.cross_entropy(scores.transpose(1, 2), tags, reduction="none")
    is_real = (torch.arange(scores.shape[1]) < lengths[:, None]).to(per_place.dtype)
    return (per_place * is_real).sum() / is_real.sum()


# =================================================================================================
# Whole layers for diagnose(fn, module, input, hx)
# =================================================================================================

STACK3 = case("RNN", 3, 5, 3, seq_len=4)
STACK3_HX = case("RNN", 3, 4, 3, hx=True, seed=1)
STACK4_HX = case("RNN", 4, 4, 4, hx=True, seed=2)
BI_HX = case("RNN", 3, 4, bidirectional=True, hx=True, seed=3)
GRU_STACK_BI = case("GRU", 6, 3, 2, bidirectional=True, seed=4)
LSTM2_HX = case("LSTM", 3, 5, 2, hx=True, seed=5)
LSTM_PROJ = case("LSTM", 4, 6, 2, proj_size=3, seed=6)
GRU_HX = case("GRU", 3, 4, hx=True, seed=7)
PACKED_SORTED = case("RNN", 3, 4, lengths=[5, 3, 2], enforce_sorted=True, seed=8)
PACKED_UNSORTED_LSTM = case("LSTM", 3, 4, lengths=[2, 5, 3, 4], seed=9)
PACKED_BI_GRU = case("GRU", 2, 3, bidirectional=True, lengths=[3, 5, 1], hx=True, seed=10)
BF_STACK_HX = case("RNN", 3, 4, 2, batch_first=True, hx=True, seed=11)
BF_LSTM_BI = case("LSTM", 3, 4, bidirectional=True, batch_first=True, seed=12)
UNBATCHED_GRU_HX = case("GRU", 3, 4, unbatched=True, hx=True, seed=13)
UNBATCHED_LSTM2 = case("LSTM", 3, 4, 2, unbatched=True, seed=14)
F64_LSTM = case("LSTM", 3, 4, dtype=torch.float64, seed=15)
F64_RNN2_HX = case("RNN", 3, 4, 2, dtype=torch.float64, hx=True, seed=16)
RELU2 = case("RNN", 3, 4, 2, nonlinearity="relu", seed=17)
GRU_NOBIAS = case("GRU", 3, 4, bias=False, seed=18)
LSTM_NOBIAS = case("LSTM", 3, 4, bias=False, seed=19)
NOTEBOOK = case("RNN", 3, 4, publish=True, seed=20)


def _zeros_or(hx, module, input, rows):
    return input.new_zeros(rows, input.shape[1], module.hidden_size) if hx is None else hx


# ---- stacked RNNs -------------------------------------------------------------------------------


@wrong(
    STACK3,
    "layers updated together inside the time loop from a copy of last step's states: layer k reads the layer below's "
    "state from the previous step, not the one it just computed",
    [
        r"(previous|old|stale|last) (time )?step.{0,50}(layer below|below|lower layer)",
        r"(layer below|lower layer).{0,50}(previous|old|stale|one step)",
        r"one step (late|behind|delayed)",
        r"(new|updated|current) state.{0,30}below",
    ],
)
def stack_reads_stale_below(module, input, hx=None):
    L = module.num_layers
    hs = list(_zeros_or(hx, module, input, L))
    outs = []
    for x_t in input:
        old = list(hs)
        for k in range(L):
            W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, k)
            below = x_t if k == 0 else old[k - 1]
            hs[k] = torch.tanh(below @ W_ih.T + b_ih + hs[k] @ W_hh.T + b_hh)
        outs.append(hs[-1])
    return torch.stack(outs), torch.stack(hs)


@wrong(
    STACK3,
    "h_n made from output[-1] repeated for every layer: the lower layers' final states are the top layer's",
    [
        r"h_n.{0,50}(every|each|all|lower|other) layers?",
        r"(lower|other|bottom) layers?.{0,40}h_n",
        r"output\[-1\]",
        r"output.{0,30}(top layer|only the top)",
    ],
    source="https://stackoverflow.com/questions/48302810",
)
def stack_h_n_from_output(module, input, hx=None):
    L = module.num_layers
    h0 = _zeros_or(hx, module, input, L)
    x = input
    for k in range(L):
        x, _ = rnn_run(x, h0[k], *layer_weights(module, k)[:4])
    return x, torch.stack([x[-1]] * L)


@wrong(
    STACK4_HX,
    "hx read top layer first: layer k starts from hx[L - 1 - k]",
    [
        r"hx.{0,40}(rows?|order|revers|upside)",
        r"hx\[k\]|row k",
        r"(initial|h_?0) state.{0,40}(layer|row).{0,30}(wrong|revers|other)",
        r"hx\[-1 ?- ?k\]|L ?- ?1 ?- ?k",
    ],
)
def stack_hx_reversed(module, input, hx=None):
    L = module.num_layers
    h0 = _zeros_or(hx, module, input, L)
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[L - 1 - k], *layer_weights(module, k)[:4])
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    STACK4_HX,
    "h_n stacked along dim 1: (B, L, H) instead of (L, B, H)",
    [
        r"h_n.{0,40}(shape|dim|dimension|axis|order)",
        r"stack.{0,30}dim",
        r"\(L, ?B, ?H\)|\(num_layers, ?batch",
        r"batch.{0,30}(first|dim)",
    ],
)
def stack_h_n_batch_major(module, input, hx=None):
    L = module.num_layers
    h0 = _zeros_or(hx, module, input, L)
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[k], *layer_weights(module, k)[:4])
        finals.append(h)
    return x, torch.stack(finals, dim=1)


@wrong(
    STACK3_HX,
    "layer k starts from hx[k][0], the first sequence's state, broadcast to every sequence in the batch",
    [
        r"hx\[k\]\[0\]|hx\[k, ?0\]",
        r"(first|one) (batch item|sequence|row).{0,40}(every|all|each|broadcast|shared)",
        r"(every|each|all) (sequence|batch item|row)s?.{0,40}(same|share|first)",
        r"shared across (the )?batch",
    ],
)
def stack_hx_first_item_shared(module, input, hx=None):
    L = module.num_layers
    h0 = _zeros_or(hx, module, input, L)
    x, finals = input, []
    for k in range(L):
        x, h = rnn_run(x, h0[k][0], *layer_weights(module, k)[:4])
        finals.append(h)
    return x, torch.stack(finals)


# ---- bidirectional --------------------------------------------------------------------------------


@wrong(
    BI_HX,
    "the two directions summed (Keras merge_mode='sum') instead of concatenated: output (T, B, H)",
    [r"(sum|add)\w*.{0,30}(directions|halves|forward and backward)", r"\bcat\b|concat", r"merge", r"2 ?\*? ?H|2H"],
)
def bi_directions_summed(module, input, hx=None):
    h0 = _zeros_or(hx, module, input, 2)
    fwd, h_f = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd, h_b = rnn_run(input.flip(0), h0[1], *layer_weights(module, 0, "_reverse")[:4])
    return fwd + bwd.flip(0), torch.stack([h_f, h_b])


@wrong(
    BI_HX,
    "the backward run starts from the forward run's final state, not from its own initial state hx[1]",
    [
        r"backward.{0,50}(start|initial|h_?0).{0,40}(forward|final)",
        r"(own|separate|its) (initial )?state",
        r"hx\[1\]",
        r"(state|h).{0,30}(passed|handed|carried).{0,30}(forward|direction)",
    ],
)
def bi_backward_continues_forward(module, input, hx=None):
    h0 = _zeros_or(hx, module, input, 2)
    fwd, h_f = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd, h_b = rnn_run(input.flip(0), h_f, *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat([fwd, bwd.flip(0)], dim=-1), torch.stack([h_f, h_b])


def _gru_direction(x, h, w):
    states = []
    for x_t in x:
        h = gru_cell(x_t, h, *w)
        states.append(h)
    return torch.stack(states), h


@wrong(
    GRU_STACK_BI,
    "the backward half flipped back into time order only after the top layer: layer 1 reads it reversed, misaligned in time",
    [
        r"(flip|revers)\w*.{0,50}(between layers|layer 1|next layer|before|each layer|only at the end)",
        r"time[- ]align",
        r"layer (1|above|k ?\+ ?1).{0,40}(reads?|input)",
        r"(misalign|out of (time )?order)",
    ],
    source="https://github.com/d2l-ai/d2l-en/issues/2306",
)
def stack_bi_flipped_back_at_end(module, input, hx=None):
    L, H = module.num_layers, module.hidden_size
    h0 = _zeros_or(hx, module, input, 2 * L)
    x, finals = input, []
    for k in range(L):
        fwd, h_f = _gru_direction(x, h0[2 * k], layer_weights(module, k)[:4])
        bwd, h_b = _gru_direction(x.flip(0), h0[2 * k + 1], layer_weights(module, k, "_reverse")[:4])
        finals += [h_f, h_b]
        x = torch.cat([fwd, bwd], dim=-1)  # the backward half still in computed order
    return torch.cat([x[..., :H], x[..., H:].flip(0)], dim=-1), torch.stack(finals)


@wrong(
    GRU_STACK_BI,
    "the backward weights' names hard-coded as _l0_reverse: every layer's backward run uses layer 0's backward weights",
    [
        r"_l0_reverse",
        r"_reverse.{0,40}(layer|l\{k\}|l1)",
        r"layer 0'?s? (backward|reverse)",
        r"(backward|reverse) (weights|parameters).{0,40}layer",
    ],
)
def stack_bi_reverse_weights_of_layer_0(module, input, hx=None):
    L = module.num_layers
    h0 = _zeros_or(hx, module, input, 2 * L)
    x, finals = input, []
    for k in range(L):
        fwd_w = [getattr(module, f"{p}_l{k}") for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        bwd_w = [getattr(module, f"{p}_l0_reverse") for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        fwd, h_f = _gru_direction(x, h0[2 * k], fwd_w)
        bwd, h_b = _gru_direction(x.flip(0), h0[2 * k + 1], bwd_w)
        finals += [h_f, h_b]
        x = torch.cat([fwd, bwd.flip(0)], dim=-1)
    return x, torch.stack(finals)


# ---- LSTM -----------------------------------------------------------------------------------------


def _lstm_h0_c0(module, input, hx):
    if hx is not None:
        return hx
    return _zeros_or(None, module, input, module.num_layers), _zeros_or(None, module, input, module.num_layers)


@wrong(
    LSTM2_HX,
    "c_n holds tanh(c_T), the squashed cell that h uses, not the cell state itself",
    [r"c_n.{0,40}tanh|tanh.{0,40}c_n", r"cell state.{0,40}(squash|tanh|raw)", r"tanh\(c"],
)
def lstm_c_n_squashed(module, input, hx=None):
    h0, c0 = _lstm_h0_c0(module, input, hx)
    x, hs, cs = input, [], []
    for k in range(module.num_layers):
        h, c, states = h0[k], c0[k], []
        for x_t in x:
            h, c = lstm_cell(x_t, h, c, *layer_weights(module, k)[:4])
            states.append(h)
        x = torch.stack(states)
        hs.append(h)
        cs.append(torch.tanh(c))
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM2_HX,
    "the layer above reads the cell states of the layer below instead of its hidden states",
    [
        r"layer (1|above|k).{0,40}(reads?|input).{0,40}(cell|c\b|c_t)",
        r"(cell|c) states?.{0,40}(layer above|next layer|input)",
        r"hidden states?.{0,40}(not|instead)",
    ],
)
def lstm_layer_reads_cells(module, input, hx=None):
    h0, c0 = _lstm_h0_c0(module, input, hx)
    L = module.num_layers
    x, hs, cs = input, [], []
    for k in range(L):
        h, c, h_states, c_states = h0[k], c0[k], [], []
        for x_t in x:
            h, c = lstm_cell(x_t, h, c, *layer_weights(module, k)[:4])
            h_states.append(h)
            c_states.append(c)
        x = torch.stack(c_states) if k < L - 1 else torch.stack(h_states)
        hs.append(h)
        cs.append(c)
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM2_HX,
    "the cell state detached after every step: values right, no gradient flows back through c",
    [
        r"detach",
        r"(cell|c\b).{0,40}(gradient|graph)",
        r"gradient.{0,40}(cell|through time|earlier steps)",
        r"(cut|break|stop)s? (the )?(graph|gradient)",
    ],
)
def lstm_cell_detached(module, input, hx=None):
    h0, c0 = _lstm_h0_c0(module, input, hx)
    x, hs, cs = input, [], []
    for k in range(module.num_layers):
        h, c, states = h0[k], c0[k], []
        for x_t in x:
            h, c = lstm_cell(x_t, h, c.detach(), *layer_weights(module, k)[:4])
            states.append(h)
        x = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM_PROJ,
    "with proj_size, h_n keeps the unprojected o * tanh(c) (hidden_size wide); only output and the recurrence are projected",
    [
        r"h_n.{0,50}(project|weight_hr|proj_size|W_hr)",
        r"(project|weight_hr|W_hr).{0,50}h_n",
        r"proj_size",
        r"h_n.{0,30}(shape|width|size)",
    ],
    source="https://github.com/pytorch/pytorch/pull/65102",
)
def lstm_proj_h_n_unprojected(module, input, hx=None):
    L, B, P, H = module.num_layers, input.shape[1], module.proj_size, module.hidden_size
    x, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh, W_hr = layer_weights(module, k)
        h, c, states = input.new_zeros(B, P), input.new_zeros(B, H), []
        for x_t in x:
            full, c = lstm_cell(x_t, h, c, W_ih, W_hh, b_ih, b_hh)
            h = full @ W_hr.T
            states.append(h)
        x = torch.stack(states)
        hs.append(full)
        cs.append(c)
    return x, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM_PROJ,
    "with proj_size, c_n projected by weight_hr too: the cell state is never projected",
    [
        r"c_n.{0,50}(project|weight_hr|W_hr|proj_size|hidden_size)",
        r"cell.{0,40}(not|never) (be )?project",
        r"c_n.{0,30}(shape|width|size)",
    ],
)
def lstm_proj_c_n_projected(module, input, hx=None):
    L, B, P, H = module.num_layers, input.shape[1], module.proj_size, module.hidden_size
    x, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh, b_ih, b_hh, W_hr = layer_weights(module, k)
        h, c, states = input.new_zeros(B, P), input.new_zeros(B, H), []
        for x_t in x:
            h, c = lstm_cell(x_t, h, c, W_ih, W_hh, b_ih, b_hh, W_hr)
            states.append(h)
        x = torch.stack(states)
        hs.append(h)
        cs.append(c @ W_hr.T)
    return x, (torch.stack(hs), torch.stack(cs))


# ---- GRU ------------------------------------------------------------------------------------------


@wrong(
    GRU_HX,
    "Wikipedia's fully gated GRU in two places: the reset gate on h before the product, and h = (1 - z) h + z n",
    [
        r"reset.{0,40}(before|after|product|h_prev|\bh\b)",
        r"\bz\b.{0,50}(convention|swap|exchang|1 ?- ?z|old state|kept)",
        r"update gate.{0,40}(convention|revers|swap)",
        r"wikipedia",
    ],
    source="https://devhide.com/gru-pytorch-keras-and-formula-in-wiki-are-different-64031287",
)
def gru_layer_wikipedia(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    h = _zeros_or(hx, module, input, 1)[0]
    states = []
    for x_t in input:
        r = torch.sigmoid(x_t @ W_ir.T + b_ir + h @ W_hr.T + b_hr)
        z = torch.sigmoid(x_t @ W_iz.T + b_iz + h @ W_hz.T + b_hz)
        n = torch.tanh(x_t @ W_in.T + b_in + (r * h) @ W_hn.T + b_hn)
        h = (1 - z) * h + z * n
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    GRU_HX,
    "hx used as the state as it comes, (1, B, H), instead of hx[0]: an extra dimension rides through output and h_n",
    [
        r"hx\[0\]",
        r"(layer|extra|leading) (dim|dimension|axis)",
        r"squeeze",
        r"(shape|dimension).{0,30}(output|h_n|state)",
    ],
)
def gru_layer_hx_3d(module, input, hx=None):
    w = layer_weights(module, 0)[:4]
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx
    states = []
    for x_t in input:
        h = gru_cell(x_t, h, *w)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


# ---- packed input ---------------------------------------------------------------------------------


@wrong(
    PACKED_SORTED,
    "a packed run over batch_sizes that shrinks the state with the batch, so h_n keeps only the longest sequence's final state",
    [
        r"h_n.{0,50}(each|every|all|shorter|finished) sequences?",
        r"batch_sizes",
        r"(shrink|truncat|drop)\w*.{0,40}(state|rows?|sequences)",
        r"(finished|ended|shorter) sequences?.{0,40}(lost|dropped|final)",
    ],
)
def packed_keeps_longest_state(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    data, batch_sizes = input.data, input.batch_sizes
    h = data.new_zeros(int(batch_sizes[0]), module.hidden_size)
    outs, start = [], 0
    for size in batch_sizes.tolist():
        x_t = data[start : start + size]
        start += size
        h = torch.tanh(x_t @ W_ih.T + b_ih + h[:size] @ W_hh.T + b_hh)
        outs.append(h)
    output = PackedSequence(torch.cat(outs), batch_sizes, input.sorted_indices, input.unsorted_indices)
    return output, h.unsqueeze(0)


@wrong(
    PACKED_SORTED,
    "the running mask off by one (t <= length): each shorter sequence takes one padding step before h_n",
    [
        r"off[- ]by[- ]one",
        r"<=",
        r"one (extra|more) (step|padding step)",
        r"padd\w*.{0,40}(h_n|step|read)",
        r"h_n.{0,40}(padd|after)",
    ],
)
def packed_mask_off_by_one(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    h = x.new_zeros(x.shape[1], module.hidden_size)
    states = []
    for t in range(x.shape[0]):
        new = torch.tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        h = torch.where((t <= lengths)[:, None], new, h)
        states.append(h)
    return pack_padded_sequence(torch.stack(states), lengths, enforce_sorted=False), h.unsqueeze(0)


def _masked_lstm(module, x, lengths):
    B, H = x.shape[1], module.hidden_size
    h = c = x.new_zeros(B, H)
    states = []
    for t in range(x.shape[0]):
        h_new, c_new = lstm_cell(x[t], h, c, *layer_weights(module, 0)[:4])
        running = (t < lengths)[:, None]
        h, c = torch.where(running, h_new, h), torch.where(running, c_new, c)
        states.append(h)
    return torch.stack(states), h, c


@wrong(
    PACKED_UNSORTED_LSTM,
    "h_n and c_n reordered by input.sorted_indices after pad_packed_sequence had already restored the batch order",
    [
        r"sorted_indices|unsorted_indices",
        r"(batch|original) order",
        r"permut\w*",
        r"(rows?|sequences?).{0,40}(shuffl|order|swap)",
    ],
)
def packed_h_n_permuted_twice(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    states, h, c = _masked_lstm(module, x, lengths)
    order = input.sorted_indices
    return pack_padded_sequence(states, lengths, enforce_sorted=False), (h[order][None], c[order][None])


@wrong(
    PACKED_UNSORTED_LSTM,
    "output packed again with enforce_sorted=True, which refuses lengths that are not in decreasing order",
    [r"enforce_sorted", r"sort", r"decreasing"],
    source="https://github.com/pytorch/pytorch/issues/43227",
)
def packed_repacked_sorted(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    states, h, c = _masked_lstm(module, x, lengths)
    return pack_padded_sequence(states, lengths, enforce_sorted=True), (h[None], c[None])


@wrong(
    PACKED_BI_GRU,
    "each sequence's real steps reversed for the backward run (as reverse_padded_sequence does), but its states put "
    "back with a whole flip(0): shorter sequences' backward outputs land at the wrong steps",
    [
        r"(flip|revers)\w*.{0,50}(back|output).{0,50}(length|each sequence|padding|per)",
        r"per[- ]sequence",
        r"(misalign|wrong (time )?steps?)",
        r"backward.{0,40}output.{0,40}(shift|align|steps)",
    ],
    source="https://github.com/pytorch/pytorch/issues/1794",
)
def packed_bi_flipped_back_whole(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B = x.shape[:2]
    h0 = _zeros_or(hx, module, x, 2)
    t_idx = torch.arange(T)[:, None]
    rev = torch.where(t_idx < lengths, lengths - 1 - t_idx, t_idx)  # each sequence's real steps reversed
    running = (t_idx < lengths)[..., None]
    outs, finals = [], []
    for d, seq in enumerate((x, x[rev, torch.arange(B)])):
        w = layer_weights(module, 0, "_reverse" if d else "")[:4]
        h, states = h0[d], []
        for t in range(T):
            h = torch.where(running[t], gru_cell(seq[t], h, *w), h)
            states.append(h)
        outs.append(torch.stack(states))
        finals.append(h)
    output = torch.cat([outs[0], outs[1].flip(0)], dim=-1)
    return pack_padded_sequence(output, lengths, enforce_sorted=False), torch.stack(finals)


# ---- batch_first, unbatched -----------------------------------------------------------------------


@wrong(
    BF_STACK_HX,
    "batch_first input transposed to time first, but output returned time first: never transposed back",
    [r"batch[_ ]first", r"transpos\w*.{0,30}(back|output)", r"output.{0,40}(shape|time[_ ]first|transpos)"],
)
def bf_output_left_time_first(module, input, hx=None):
    x = input.transpose(0, 1)
    h0 = _zeros_or(hx, module, x, module.num_layers)
    finals = []
    for k in range(module.num_layers):
        x, h = rnn_run(x, h0[k], *layer_weights(module, k)[:4])
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    BF_STACK_HX,
    "h_n made batch first too (B, L, H): batch_first changes only input and output",
    [
        r"h_n.{0,50}(batch[_ ]first|\(B|transpos|shape)",
        r"batch_first.{0,50}(h_n|hidden|state)",
        r"\(num_layers, ?batch|\(L, ?B",
    ],
    source="https://github.com/pytorch/pytorch/issues/19675",
)
def bf_h_n_batch_first(module, input, hx=None):
    x = input.transpose(0, 1)
    h0 = _zeros_or(hx, module, x, module.num_layers)
    finals = []
    for k in range(module.num_layers):
        x, h = rnn_run(x, h0[k], *layer_weights(module, k)[:4])
        finals.append(h)
    return x.transpose(0, 1), torch.stack(finals).transpose(0, 1)


@wrong(
    BF_LSTM_BI,
    "batch_first handled with view(T, B, I) on the way in and view(B, T, 2H) on the way out instead of transposes",
    [
        r"\bview\b|reshape",
        r"transpos|permute",
        r"batch[_ ]first",
        r"(batch items?|sequences|steps).{0,30}(mix|scrambl)",
    ],
)
def bf_view_not_transpose(module, input, hx=None):
    B, T, _ = input.shape
    x, H = input.view(T, B, -1), module.hidden_size
    outs, hs, cs = [], [], []
    for d, suffix in enumerate(("", "_reverse")):
        h = c = x.new_zeros(B, H)
        states = []
        for x_t in x.flip(0) if d else x:
            h, c = lstm_cell(x_t, h, c, *layer_weights(module, 0, suffix)[:4])
            states.append(h)
        states = torch.stack(states)
        outs.append(states.flip(0) if d else states)
        hs.append(h)
        cs.append(c)
    return torch.cat(outs, dim=-1).view(B, T, 2 * H), (torch.stack(hs), torch.stack(cs))


@wrong(
    UNBATCHED_GRU_HX,
    "unbatched input given a batch of one, and output squeezed back, but h_n left (1, 1, H) instead of (1, H)",
    [r"unbatched", r"squeeze", r"h_n.{0,40}(shape|batch|dim)", r"batch (dim|dimension)"],
)
def unbatched_h_n_keeps_batch(module, input, hx=None):
    x = input.unsqueeze(1)
    h = x.new_zeros(1, module.hidden_size) if hx is None else hx
    states = []
    for x_t in x:
        h = gru_cell(x_t, h, *layer_weights(module, 0)[:4])
        states.append(h)
    return torch.stack(states).squeeze(1), h.unsqueeze(0)


@wrong(
    UNBATCHED_GRU_HX,
    "unbatched (T, I) given its batch dimension in front, unsqueeze(0): read as ONE step of a batch of T, every step from h_0",
    [
        r"unsqueeze\(0\)",
        r"(batch|one) step|(steps?|time).{0,30}(read|taken|treated) as (a )?batch",
        r"unbatched",
        r"(dim|axis|dimension) ?(0|1)",
    ],
)
def unbatched_read_as_one_step(module, input, hx=None):
    x = input.unsqueeze(0)
    h = x.new_zeros(1, module.hidden_size) if hx is None else hx
    states = []
    for x_t in x:
        h = gru_cell(x_t, h, *layer_weights(module, 0)[:4])
        states.append(h)
    output = torch.stack(states).squeeze(0)
    return output, output[-1:]


@wrong(
    UNBATCHED_LSTM2,
    "unbatched input: output and h_n squeezed back, c_n left with its batch dimension (L, 1, H)",
    [r"c_n.{0,40}(shape|squeeze|batch|dim)", r"unbatched", r"squeeze"],
)
def unbatched_c_n_keeps_batch(module, input, hx=None):
    x, H = input.unsqueeze(1), module.hidden_size
    hs, cs = [], []
    for k in range(module.num_layers):
        h = c = x.new_zeros(1, H)
        states = []
        for x_t in x:
            h, c = lstm_cell(x_t, h, c, *layer_weights(module, k)[:4])
            states.append(h)
        x = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return x.squeeze(1), (torch.stack(hs).squeeze(1), torch.stack(cs))


# ---- dtype, nonlinearity, bias, the notebook's layer ------------------------------------------------


@wrong(
    F64_LSTM,
    "a float64 layer's output cast to float32 with .float() at the end ('to match the head')",
    [r"dtype", r"float(32|64)|double", r"\.float\(\)|cast"],
)
def f64_output_cast(module, input, hx=None):
    h0, c0 = _lstm_h0_c0(module, input, hx)
    h, c, states = h0[0], c0[0], []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, *layer_weights(module, 0)[:4])
        states.append(h)
    return torch.stack(states).float(), (h[None], c[None])


@wrong(
    F64_RNN2_HX,
    "the input cast to float32 by habit (input.float()) against a float64 layer",
    [r"dtype", r"float(32|64)|double", r"\.float\(\)|cast"],
)
def f64_input_cast(module, input, hx=None):
    x = input.float()
    h0 = _zeros_or(hx, module, x, module.num_layers)
    finals = []
    for k in range(module.num_layers):
        x, h = rnn_run(x, h0[k], *layer_weights(module, k)[:4])
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    RELU2,
    "tanh hard-coded for a layer built with nonlinearity='relu'",
    [r"relu", r"nonlinearity", r"tanh.{0,30}(instead|hard[- ]?coded|always)", r"activation"],
    source="https://github.com/pytorch/pytorch/issues/72240",
)
def relu_layer_with_tanh(module, input, hx=None):
    h0 = _zeros_or(hx, module, input, module.num_layers)
    x, finals = input, []
    for k in range(module.num_layers):
        x, h = rnn_run(x, h0[k], *layer_weights(module, k)[:4])
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    GRU_NOBIAS,
    "bias_ih_l0 read from a layer built with bias=False, which has no bias parameters",
    [r"bias ?= ?false", r"no bias", r"bias_ih|bias_hh", r"(missing|absent|no such) (bias|attribute|parameter)"],
)
def nobias_read_anyway(module, input, hx=None):
    w = (module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
    h = _zeros_or(hx, module, input, 1)[0]
    states = []
    for x_t in input:
        h = gru_cell(x_t, h, *w)
        states.append(h)
    return torch.stack(states), h[None]


@wrong(
    LSTM_NOBIAS,
    "bias=False replaced by zero biases of size hidden_size instead of 4 * hidden_size",
    [r"bias.{0,40}(size|shape|4 ?\*? ?H|4 ?\* ?hidden)", r"bias ?= ?false", r"broadcast", r"\(4 ?\* ?hidden_size"],
)
def nobias_wrong_size(module, input, hx=None):
    H = module.hidden_size
    zero = torch.zeros(H)
    h0, c0 = _lstm_h0_c0(module, input, hx)
    h, c, states = h0[0], c0[0], []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, zero, zero)
        states.append(h)
    return torch.stack(states), (h[None], c[None])


@wrong(
    NOTEBOOK,
    "the weights read from the notebook's own layer (a global) instead of the module passed in",
    [
        r"global",
        r"notebook'?s? (own )?(layer|module|rnn)",
        r"(argument|module passed|passed[- ]in|given module)",
        r"instead of (its|the) (argument|module)",
    ],
)
def notebook_layer_read(module, input, hx=None):
    W_ih, W_hh = NOTEBOOK_LAYER.weight_ih_l0, NOTEBOOK_LAYER.weight_hh_l0
    b_ih, b_hh = NOTEBOOK_LAYER.bias_ih_l0, NOTEBOOK_LAYER.bias_hh_l0
    h0 = _zeros_or(hx, module, input, 1)
    output, h = rnn_run(input, h0[0], W_ih, W_hh, b_ih, b_hh)
    return output, h[None]


# ---- right whole layers ---------------------------------------------------------------------------


@right(GRU_NOBIAS, "torch.gru_cell with getattr(..., None) for the missing biases")
def nobias_gru_cell_op(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = getattr(module, "bias_ih_l0", None), getattr(module, "bias_hh_l0", None)
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh)
        states.append(h)
    return torch.stack(states), h[None]


@right(RELU2, "time outside, layers inside, with torch.rnn_relu_cell")
def relu_time_major_cell_op(module, input, hx=None):
    L = module.num_layers
    hs = list(_zeros_or(hx, module, input, L))
    top = []
    for x_t in input:
        below = x_t
        for k in range(L):
            hs[k] = torch.rnn_relu_cell(below, hs[k], *layer_weights(module, k)[:4])
            below = hs[k]
        top.append(below)
    return torch.stack(top), torch.stack(hs)


@right(PACKED_UNSORTED_LSTM, "straight on the packed data: batch_sizes, a shrinking batch, unsorted_indices at the end")
def packed_batch_sizes(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    data, sizes = input.data, input.batch_sizes
    h = c = data.new_zeros(int(sizes[0]), module.hidden_size)
    outs, start = [], 0
    for size in sizes.tolist():
        i, f, g, o = (data[start : start + size] @ W_ih.T + b_ih + h[:size] @ W_hh.T + b_hh).chunk(4, 1)
        start += size
        c_new = torch.sigmoid(f) * c[:size] + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        h, c = torch.cat([h_new, h[size:]]), torch.cat([c_new, c[size:]])
        outs.append(h_new)
    back = input.unsorted_indices
    output = PackedSequence(torch.cat(outs), sizes, input.sorted_indices, back)
    return output, (h[back][None], c[back][None])


@right(UNBATCHED_GRU_HX, "unbatched kept as vectors: torch.mv for every product")
def unbatched_vectors(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    h = input.new_zeros(module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        i_r, i_z, i_n = (torch.mv(W_ih, x_t) + b_ih).chunk(3)
        h_r, h_z, h_n = (torch.mv(W_hh, h) + b_hh).chunk(3)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
        states.append(h)
    return torch.stack(states), h[None]
