"""A fourth set of student versions, written blind to the checks: how well do they name a student's bug?

benchmarks/wrong_versions.py and benchmarks/wrong_versions_holdout.py are the sets the checks were
tuned on, and benchmarks/wrong_versions_fresh.py was written after both. This set was written after
all three, blind to the checker: without opening the checks' catalogue of bugs, their diagnosis,
their exercises, slips and answer key (helpers/bugs.py, helpers/diagnosis.py, helpers/exercises.py,
helpers/argument_slips.py, helpers/wiring_slips.py, helpers/gates.py, helpers/shape_slips.py,
helpers/answer_key.py, helpers/solutions/), the tests (tests/), the other sets' versions, the
benchmark's own code (benchmarks/diagnosis_quality.py) or its reports (build/). Only the fresh set's
docstring and record format (`Version`, `wrong`, `right` and `case`, copied here and not imported,
so that the sets stay separate), the exercises' statements and stubs in notebooks/NN_*.ipynb, the
worked answers `helpers.exercises.solution(key)` prints, the README's description of `diagnose`, and
everyday slips in hand-written RNN, LSTM and GRU code were used.

It aims at bug families the other sets may not hold: a wrong activation on one gate, a bias added
outside the tanh, twice, to the wrong gate or from the wrong direction, a constant forget bias, a
state from the wrong step, row or layer, an off-by-one in a loop or an index, a bias broadcast as a
column, a result left transposed, einsum without the transpose, chunk/gather/flip on the wrong axis,
another library's gate order, lengths sorted away from their sequences, a mean of means, a mask
from the tags or with `<=`, dropout between layers, a detach between layers or on the output, a
cell state carried up a stack, hx rows read direction-major, batch_first applied to h_n or hx,
packed sequences run through their padding or left in sorted order, proj_size, bias=False and
nonlinearity='relu' ignored, dtypes from numpy or forced to float32, an argument changed in place
(transpose_, *=, +=, an index assignment), and a notebook global read instead of an argument.

Each record has a name, a target (an exercise key for `helpers.exercises.check_code`, or a case
builder returning (module, input, hx) for `helpers.diagnose`), the function, its true bug in one
line, and `names`: regular expressions (case-insensitive), at least one of which a message that
truly names this bug would match (its cause, or its precise place: the term, weight, gate, step,
direction, layer or row at fault). All `names` were written before any version went through the
checks. Correct versions, in unusual styles, have `correct=True` and must pass. Every version was
checked against torch directly (never through check_code or diagnose): each wrong one differs from
the worked answer or the torch layer in values, shape, dtype, gradients, an error or an argument
changed in place, on the case given (for an exercise, on inputs of the kinds its statement names);
each right one matches. The owner runs the set once, with
`python benchmarks/diagnosis_quality.py --set blind`.
"""

import itertools
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
_notebook = torch.Generator().manual_seed(2024)
x = torch.randn(4, 1, 3, generator=_notebook)  # notebook 02's sequence, (seq_len, batch, input_size)
H = 50  # notebook 06's hidden size (the forum module's)

# =============================================================================================
# 01.step: h_t = tanh(w_ih * x_t + w_hh * h_prev), from tensors x_t, h_prev, w_ih, w_hh
# =============================================================================================


@wrong(
    "01.step",
    "relu in place of tanh: relu(w_ih x_t + w_hh h_prev)",
    names=(r"relu", r"(wrong|other) (activation|non-?linearity)", r"tanh.{0,40}(missing|instead|replaced|not applied)"),
)
def s01_relu(x_t, h_prev, w_ih, w_hh):
    return torch.relu(w_ih * x_t + w_hh * h_prev)


@wrong(
    "01.step",
    "tanh applied to each term and the two results added: tanh(w_ih x_t) + tanh(w_hh h_prev)",
    names=(
        r"tanh.{0,60}(each|both|separately|every|per) term",
        r"(sum|add)\w*.{0,30}(after|of) (the )?(two )?tanh",
        r"(separate|each) tanh",
        r"two tanh|tanh.{0,30}twice",
    ),
)
def s01_tanh_each_term(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t) + torch.tanh(w_hh * h_prev)


@wrong(
    "01.step",
    "the two weights exchanged: w_hh multiplies x_t and w_ih multiplies h_prev",
    names=(
        r"(weights|w_?ih and w_?hh|w_?hh and w_?ih).{0,40}(exchanged|swapped|mixed|switched)",
        r"swap\w*.{0,40}(weights|w_?ih|w_?hh)",
        r"w_?hh.{0,40}x_t|w_?ih.{0,40}h_prev",
    ),
)
def s01_weights_swapped(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_hh * x_t + w_ih * h_prev)


@wrong(
    "01.step",
    "h_prev multiplied by w_hh in place (h_prev *= w_hh): the argument is changed",
    names=changed("h_prev") + (r"\*=",),
)
def s01_h_prev_scaled_in_place(x_t, h_prev, w_ih, w_hh):
    h_prev *= w_hh  # the recurrent term, kept in h_prev
    return torch.tanh(w_ih * x_t + h_prev)


@right("01.step", "tanh written through the sigmoid: tanh(a) = 2 sigmoid(2a) - 1")
def s01_right_sigmoid_identity(x_t, h_prev, w_ih, w_hh):
    a = w_ih * x_t + w_hh * h_prev
    return 2 * torch.sigmoid(2 * a) - 1


# =============================================================================================
# 02.loop: my_rnn(module, input, hx=None) for the notebook's one-layer nn.RNN, returning (output, h_n)
# =============================================================================================


@wrong(
    "02.loop",
    "loops over the notebook's global x instead of the argument input",
    names=(
        r"global",
        r"notebook'?s? (own )?(variable|x|sequence|input)",
        r"(ignor|not read|never read|does not read|doesn't read)\w*.{0,30}(the )?(argument|input)",
        r"(variable|name) x\b.{0,40}(outside|instead)",
    ),
)
def l02_reads_global_x(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in x:  # the notebook's sequence
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h starts as the whole hx (1, batch, H), not hx[0]: with hx given, output and h_n get an extra dimension",
    names=(
        r"hx\[0\]",
        r"(extra|additional|4-?d|too many|one more|superfluous) dim",
        r"hx.{0,60}(layer dim|\(1, ?batch|\(num_layers|leading dim)",
        r"squeeze",
    ),
)
def l02_whole_hx_as_state(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "b_hh added after the tanh: tanh(x_t W_ih^T + b_ih + h W_hh^T) + b_hh",
    names=(
        r"b_?hh.{0,60}(outside|after|out of).{0,20}tanh",
        r"bias.{0,60}(outside|after|out of).{0,20}tanh",
        r"tanh.{0,60}before.{0,40}(b_?hh|bias)",
    ),
)
def l02_b_hh_outside_tanh(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T) + b_hh
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "for t in range(len(input) - 1): the last step is never computed (output one step short, h_n one step early)",
    names=(
        r"(last|final) (time )?step.{0,60}(skip|miss|left out|dropped|never|not computed)",
        r"(skip|miss|drop)\w*.{0,40}(last|final) (time )?step",
        r"off[- ]by[- ]one",
        r"one step (short|too few|fewer)|seq_len ?- ?1 (steps|states)",
    ),
)
def l02_stops_one_step_early(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for t in range(len(input) - 1):
        h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "the state is detached before every step: values right, gradients only through the last step",
    names=(
        r"detach",
        r"gradients?.{0,80}(cut|stopp|broken|truncat|through (only )?one step|earlier steps)",
        r"(cut|stop|break)\w*.{0,40}(the )?(gradient|graph|backprop)",
    ),
)
def l02_detached_each_step(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h.detach() @ W_hh.T + b_hh)  # no graph through the old state
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "the final state is stored into the hx it was given (h_n = hx; h_n[0] = h): hx changed in place "
    "(without hx, the same write into the zeros the first step read breaks backward)",
    names=changed("hx") + (r"h_n.{0,40}(is|aliases|same tensor as) hx",),
)
def l02_final_state_written_into_hx(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h_n = hx if hx is not None else torch.zeros(1, input.shape[1], module.hidden_size)
    h, states = h_n[0], []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    h_n[0] = h  # keep the final state
    return torch.stack(states), h_n


@wrong(
    "02.loop",
    "h_0 built with input.shape[0] (seq_len) rows instead of the batch size input.shape[1]",
    names=(
        r"input\.shape\[0\]",
        r"seq_len.{0,60}(instead of|in place of|not|rather than).{0,20}batch",
        r"(h_?0|initial state|zeros).{0,80}(seq_len|length|wrong (batch|size|dim))",
        r"batch size.{0,60}(h_?0|initial state|zeros)",
    ),
)
def l02_zeros_with_seq_len_rows(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[0], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@right("02.loop", "itertools.accumulate over the steps, with the two weights side by side in one matrix")
def l02_right_accumulate(module, input, hx=None):
    W = torch.cat([module.weight_ih_l0, module.weight_hh_l0], dim=1)  # (H, I + H)
    b = module.bias_ih_l0 + module.bias_hh_l0
    h_0 = hx[0] if hx is not None else input.new_zeros(input.shape[1], module.hidden_size)
    steps = itertools.accumulate(input, lambda h, x_t: torch.tanh(torch.cat([x_t, h], dim=1) @ W.T + b), initial=h_0)
    output = torch.stack(list(steps)[1:])
    return output, output[-1:]


# =============================================================================================
# 03.step_matrices: h_t = tanh(x_t W_ih^T + b_ih + h_prev W_hh^T + b_hh), x_t (B, I), h_prev (B, H)
# =============================================================================================


@wrong(
    "03.step_matrices",
    "the biases made columns (b[:, None], shape (H, 1)): they broadcast against the batch, not along the units",
    names=(
        r"bias\w*.{0,60}(column|\(h, ?1\)|\(hidden_size, ?1\)|unsqueeze|\[:, ?none\])",
        r"broadcast\w*.{0,60}bias",
        r"bias\w*.{0,60}broadcast",
    ),
)
def s03_biases_as_columns(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih[:, None] + h_prev @ W_hh.T + b_hh[:, None])


@wrong(
    "03.step_matrices",
    "computed column-wise, W x^T, and never transposed back: returns (H, B) instead of (B, H)",
    names=(
        r"transpos",
        r"\((hidden_size|h), ?(batch|b)\)",
        r"(rows|columns).{0,40}(swapped|exchanged)",
        r"\.T\b.{0,40}(result|end|return)",
    ),
)
def s03_result_left_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(W_ih @ x_t.T + b_ih[:, None] + W_hh @ h_prev.T + b_hh[:, None])


@wrong(
    "03.step_matrices",
    "einsum('bi,ih->bh') reads W_ih and W_hh as (in, out): the transposes are missing",
    names=(r"transpos", r"einsum", r"W_?(ih|hh).{0,40}(\.T|\(out, ?in\)|as stored)"),
)
def s03_einsum_without_transpose(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a = torch.einsum("bi,ih->bh", x_t, W_ih) + b_ih + torch.einsum("bj,jh->bh", h_prev, W_hh) + b_hh
    return torch.tanh(a)


@wrong(
    "03.step_matrices",
    "b_ih added twice and b_hh never (a copy-paste slip)",
    names=(
        r"b_?hh.{0,60}(missing|left out|not added|never|forgot|absent)",
        r"b_?ih.{0,40}twice|(twice|two times|double).{0,40}b_?ih",
        r"(missing|without|no|forgot\w*).{0,20}b_?hh",
    ),
)
def s03_b_ih_twice(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_ih)


@wrong(
    "03.step_matrices",
    "the biases combined in place (b_ih += b_hh): values right, but the argument b_ih is changed",
    names=changed("b_ih") + (r"\+=",),
)
def s03_biases_combined_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    b_ih += b_hh  # one bias for both terms
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + b_ih)


@right("03.step_matrices", "one product of the stacked [x_t, h_prev] with the weights side by side, via addmm")
def s03_right_stacked_addmm(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W = torch.cat([W_ih, W_hh], dim=1)  # (H, I + H)
    return torch.tanh(torch.addmm(b_ih + b_hh, torch.cat([x_t, h_prev], dim=1), W.t()))


# =============================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), one layer, time first
# =============================================================================================


@wrong(
    "04.bidirectional",
    "the backward run starts from hx[0], the forward row, instead of hx[1]",
    names=(
        r"hx\[1\]|row 1",
        r"backward.{0,80}(initial|h_?0|start\w*|first) (state|row|from)",
        r"backward.{0,80}(forward('s)? (row|initial|state))",
    ),
)
def b04_backward_starts_from_row_0(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    forward, backward = [], [None] * T
    h = h_0[0]
    for t in range(T):
        h = torch.tanh(
            input[t] @ module.weight_ih_l0.T + module.bias_ih_l0 + h @ module.weight_hh_l0.T + module.bias_hh_l0
        )
        forward.append(h)
    h_forward, h = h, h_0[0]
    for t in reversed(range(T)):
        h = torch.tanh(
            input[t] @ module.weight_ih_l0_reverse.T
            + module.bias_ih_l0_reverse
            + h @ module.weight_hh_l0_reverse.T
            + module.bias_hh_l0_reverse
        )
        backward[t] = h
    return torch.cat([torch.stack(forward), torch.stack(backward)], dim=2), torch.stack([h_forward, h])


@wrong(
    "04.bidirectional",
    "the backward loop is range(T - 1, 0, -1): it never reaches step 0 (its output there stays zero, h_n[1] is step 1's)",
    names=(
        r"(step|time|position|index) 0.{0,60}(backward|skip|miss|never|zero)",
        r"backward.{0,80}(first step|step 0|t ?= ?0|never reaches|stops one step)",
        r"off[- ]by[- ]one",
        r"range\(.{0,20}0, ?-1\)",
    ),
)
def b04_backward_stops_before_step_0(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    halves, finals = [], []
    for direction, suffix in enumerate(("_l0", "_l0_reverse")):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
        h, by_time = h_0[direction], [torch.zeros(B, H)] * T
        for t in range(T - 1, 0, -1) if direction else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        halves.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(halves, dim=-1), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "h_n joined with torch.cat instead of torch.stack: (2 * batch, H) instead of (2, batch, H)",
    names=(
        r"h_n.{0,80}(stack|\(2, ?batch|\(2, ?b\b|num_layers ?\* ?num_directions)",
        r"cat.{0,60}(instead of|not|rather than).{0,20}stack",
        r"\(2 ?\* ?batch|\(2b\b|2 ?\* ?b, ?h",
    ),
)
def b04_h_n_concatenated(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    halves, finals = [], []
    for direction, suffix in enumerate(("_l0", "_l0_reverse")):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
        h, by_time = h_0[direction], [None] * T
        for t in range(T - 1, -1, -1) if direction else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        halves.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(halves, dim=-1), torch.cat(finals)


@wrong(
    "04.bidirectional",
    "the backward run uses the forward biases (bias_ih_l0, bias_hh_l0) with the _reverse weights",
    names=(
        r"bias\w*.{0,60}_reverse",
        r"_reverse.{0,60}bias",
        r"backward.{0,80}(bias|b_ih|b_hh)",
        r"(bias|b_ih|b_hh).{0,80}(backward|forward direction)",
    ),
)
def b04_backward_with_forward_biases(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    b = module.bias_ih_l0 + module.bias_hh_l0  # the layer's biases
    halves, finals = [], []
    for direction, suffix in enumerate(("_l0", "_l0_reverse")):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        h, by_time = h_0[direction], [None] * T
        for t in range(T - 1, -1, -1) if direction else range(T):
            h = torch.tanh(input[t] @ W_ih.T + h @ W_hh.T + b)
            by_time[t] = h
        halves.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(halves, dim=-1), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "the two directions' states joined along dim 0 (time) instead of the last dim: output (2T, B, H)",
    names=(
        r"cat.{0,60}(dim|axis)",
        r"(last|feature|hidden|third) (dim|axis)",
        r"\(2 ?\* ?seq_len|\(2t\b",
        r"(along|on) (the )?time",
    ),
)
def b04_halves_joined_along_time(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    halves, finals = [], []
    for direction, suffix in enumerate(("_l0", "_l0_reverse")):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
        h, by_time = h_0[direction], [None] * T
        for t in range(T - 1, -1, -1) if direction else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h
        halves.append(torch.stack(by_time))
        finals.append(h)
    return torch.cat(halves), torch.stack(finals)


@right("04.bidirectional", "the backward run as a forward run over input.flip(0), flipped back; a nested step function")
def b04_right_flip_twice(module, input, hx=None):
    def run(seq, h, suffix):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
        states = []
        for x_t in seq:
            h = torch.tanh(functional.linear(x_t, W_ih, b_ih) + functional.linear(h, W_hh, b_hh))
            states.append(h)
        return torch.stack(states), h

    h_0 = hx if hx is not None else input.new_zeros(2, input.shape[1], module.hidden_size)
    out_f, h_f = run(input, h_0[0], "_l0")
    out_b, h_b = run(input.flip(0), h_0[1], "_l0_reverse")
    return torch.cat([out_f, out_b.flip(0)], dim=2), torch.stack([h_f, h_b])


# =============================================================================================
# 05.stack: my_stack(module, input, hx=None), a stacked one-direction nn.RNN, time first
# =============================================================================================


@wrong(
    "05.stack",
    "every layer reads the original input instead of the states of the layer below",
    names=(
        r"layer (k|1|2|above).{0,80}(reads?|input).{0,60}(x|input|layer 0|original|below)",
        r"(every|each|all) layers?.{0,60}(reads?|fed|gets?).{0,30}(the )?(same )?(input|x)",
        r"(instead of|not|rather than) (the )?(states|output) of the layer below",
    ),
)
def k05_every_layer_reads_input(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    finals = []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        finals.append(h)
    return torch.stack(states), torch.stack(finals)


@wrong(
    "05.stack",
    "layer k > 0 starts from layer k - 1's final state (h carried up) instead of its own row hx[k]",
    names=(
        r"(initial|start\w*|h_?0).{0,80}(previous layer|layer below|layer k ?- ?1|carried|final state of)",
        r"(carri|pass|hand)\w*.{0,40}(state|\bh\b).{0,60}(layer|up|next)",
        r"hx\[k\]|h_0\[k\]",
    ),
)
def k05_state_carried_up(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0]
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        states = []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "functional.dropout(p=0.2) between layers (training=True by default): random values, the module has dropout=0",
    names=(r"dropout", r"random", r"(not|non-?) ?deterministic|differs? (from run to run|each run|every run)"),
)
def k05_dropout_between_layers(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        if k < L - 1:
            layer_input = functional.dropout(layer_input, p=0.2)  # as between the layers of a deep RNN
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "every layer uses weight_hh_l0 (the recurrent weight of layer 0) with its own weight_ih_l{k}",
    names=(
        r"weight_hh_l0",
        r"weight_hh.{0,60}(layer 0|every layer|all layers|same|shared)",
        r"(layer|_l) ?(k|1|2|\{k\}).{0,60}(weight_hh|recurrent weight)",
        r"recurrent weights?.{0,60}(layer 0|every layer|shared)",
    ),
)
def k05_recurrent_weight_of_layer_0(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    W_hh = module.weight_hh_l0
    layer_input, finals = input, []
    for k in range(L):
        W_ih = getattr(module, f"weight_ih_l{k}")
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
    "h_n holds only the top layer's last state, (1, B, H), not every layer's",
    names=(
        r"h_n.{0,80}(every|each|all) layers?",
        r"(only|just) (the )?(top|last) layer",
        r"layer 0.{0,60}(missing|h_n|final state)",
        r"h_n.{0,60}\(num_layers",
    ),
)
def k05_h_n_top_layer_only(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input = input
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
    return layer_input, layer_input[-1:]


@right("05.stack", "recursive: the top layer runs on the output of the stack below it")
def k05_right_recursive(module, input, hx=None):
    h_0 = hx if hx is not None else input.new_zeros(module.num_layers, input.shape[1], module.hidden_size)

    def upto(k):  # output and final states of layers 0..k
        below, finals = (input, []) if k == 0 else upto(k - 1)
        p = [getattr(module, f"{name}_l{k}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in below:
            h = torch.tanh(torch.addmm(p[2], x_t, p[0].t()) + torch.addmm(p[3], h, p[1].t()))
            states.append(h)
        return torch.stack(states), [*finals, h]

    output, finals = upto(module.num_layers - 1)
    return output, torch.stack(finals)


# =============================================================================================
# 06.top_h_n: top_h_n(output, hidden_size) from a batch-first bidirectional output (batch, seq_len, 2H)
# =============================================================================================


@wrong(
    "06.top_h_n",
    "slices with the notebook's global H (50) instead of the argument hidden_size",
    names=(
        r"global",
        r"hidden_size.{0,60}(argument|ignored|not used|unused|never used)",
        r"\bH\b.{0,60}(notebook|global|outside)",
    ),
)
def t06_global_H(output, hidden_size):
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "reads output as time first: output[-1, :, :H] and output[0, :, H:] pick sequences, not steps",
    names=(
        r"(reads?|treat\w*|index\w*).{0,40}(as )?time[- ]first",
        r"batch[_ ]first.{0,60}(ignored|not|forgot|missed|treated)",
        r"(first|time|second) (index|dim|axis).{0,60}(batch|sequence|time)",
    ),
)
def t06_read_as_time_first(output, hidden_size):
    return torch.stack([output[-1, :, :hidden_size], output[0, :, hidden_size:]])


@wrong(
    "06.top_h_n",
    "the backward row from output[:, 1, H:] (step 1, counted from one) instead of step 0",
    names=(
        r"backward.{0,60}(step 1|second step|index 1)",
        r"off[- ]by[- ]one",
        r"output\[:, ?1",
        r"(step|index) 1.{0,40}instead of.{0,20}((step|index) )?0",
    ),
)
def t06_backward_from_step_1(output, hidden_size):
    return torch.stack([output[:, -1, :hidden_size], output[:, 1, hidden_size:]])


@wrong(
    "06.top_h_n",
    "output.chunk(2, dim=1) cuts the time axis into halves, not the features into directions",
    names=(
        r"chunk.{0,60}(dim|axis)",
        r"(feature|last) (dim|axis)|dim ?= ?(-1|2)",
        r"(split|cut|halves?).{0,60}(time|seq_len|steps)",
    ),
)
def t06_chunk_on_time_axis(output, hidden_size):
    forward, backward = output.chunk(2, dim=1)
    return torch.stack([forward[:, -1], backward[:, 0]])


@right("06.top_h_n", "unflatten the features into (2, H) and index both directions at once")
def t06_right_unflatten(output, hidden_size):
    directions = output.unflatten(-1, (2, hidden_size))  # (B, T, 2, H)
    return directions[:, [-1, 0], [0, 1]].transpose(0, 1)  # pairs (step -1, forward), (step 0, backward)


# =============================================================================================
# 08.last_states: last_states(output, lengths), output (T, B, H) padded time first, lengths (B,)
# =============================================================================================


@wrong(
    "08.last_states",
    "sorts lengths (as pack_padded_sequence wants) before indexing: rows and lengths no longer belong together",
    names=(
        r"\bsort",
        r"(order|rows?).{0,60}(lengths|sequences?).{0,40}(match|belong|pair|align)",
        r"original order",
    ),
)
def e08_sorted_lengths(output, lengths):
    lengths, _ = lengths.sort(descending=True)
    return output[lengths - 1, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "one time index for everyone, the longest sequence's last step: output[lengths.max() - 1]",
    names=(
        r"max|longest",
        r"(same|one|single) (time )?step for (all|every)",
        r"(reads?|picks?|takes?|from).{0,40}padding",
    ),
)
def e08_longest_step_for_all(output, lengths):
    return output[lengths.max() - 1]


@wrong(
    "08.last_states",
    "lengths -= 1 in place to turn them into indices: values right, but the argument lengths is changed",
    names=changed("lengths") + (r"-=",),
)
def e08_lengths_decremented_in_place(output, lengths):
    lengths -= 1  # last index, counted from 0
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "gather with an index built (B, 1, H): every row is read from sequence 0's column",
    names=(
        r"gather",
        r"sequence 0|batch (index|row|column) 0|first sequence('s)? (column|states?)",
        r"(index|expand)\w*.{0,40}\(b, ?1, ?h\)",
    ),
)
def e08_gather_from_sequence_0(output, lengths):
    index = (lengths - 1).view(-1, 1, 1).expand(-1, 1, output.shape[2])  # (B, 1, H)
    return output.gather(0, index).squeeze(1)


@right("08.last_states", "a Python loop over (sequence, length) pairs, stacked")
def e08_right_loop(output, lengths):
    return torch.stack([output[int(n) - 1, b] for b, n in enumerate(lengths)])


# =============================================================================================
# 10.step: lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh) -> (h_t, c_t), gates i, f, g, o
# =============================================================================================


@wrong(
    "10.step",
    "the candidate g through the sigmoid instead of tanh",
    names=(
        r"\bg\b.{0,60}(sigmoid|tanh)",
        r"candidate.{0,60}(sigmoid|tanh)",
        r"(sigmoid|tanh).{0,60}(candidate|\bg\b)",
        r"cell input.{0,40}(sigmoid|tanh)",
    ),
)
def s10_candidate_sigmoid(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = torch.sigmoid(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=1)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the forget gate scales h_prev instead of c_prev: c_t = f * h_prev + i * g",
    names=(
        r"h_prev.{0,60}(instead of|in place of|not|rather than).{0,20}c_prev",
        r"c_prev.{0,60}(missing|not used|unused|ignored|never)",
        r"forget gate.{0,80}(h_prev|hidden state|old state)",
        r"f ?\* ?h_prev",
    ),
)
def s10_forget_scales_h_prev(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * h_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the pre-activations (B, 4H) cut with .chunk(4) on dim 0, the batch, instead of dim -1",
    names=(
        r"chunk.{0,60}(dim|axis)",
        r"dim ?= ?(-1|1)|(last|feature|unit) (dim|axis)",
        r"batch (dim|axis|rows)",
    ),
)
def s10_chunk_on_batch(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "a constant forget bias of 1 added to the forget pre-activation (Keras/TF forget_bias=1.0), not in torch's equations",
    names=(
        r"forget.{0,60}(bias|\+ ?1|one|constant)",
        r"(extra|constant|added|additional) .{0,40}(1|one).{0,40}forget",
        r"forget_bias",
    ),
)
def s10_forget_bias_one(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f + 1.0), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "c_prev scaled in place by the forget gate (c_prev.mul_(f)): values right, the argument c_prev changed",
    names=changed("c_prev") + (r"mul_",),
)
def s10_c_prev_scaled_in_place(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = c_prev.mul_(f) + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "h_t from the old cell: h_t = o * tanh(c_prev) instead of tanh(c_t)",
    names=(
        r"c_prev.{0,60}(instead of|not|in place of|rather than).{0,20}c_t",
        r"tanh\(c_prev\)",
        r"h_t.{0,80}(old|previous) cell",
        r"(old|previous) cell.{0,60}h_t",
    ),
)
def s10_h_from_old_cell(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_prev), c_t


@right("10.step", "per-gate weight slices with functional.linear, gates in a dict")
def s10_right_sliced_linear(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]
    pre = {}
    for k, name in enumerate("ifgo"):
        rows = slice(k * H, (k + 1) * H)
        pre[name] = functional.linear(x_t, W_ih[rows], b_ih[rows]) + functional.linear(h_prev, W_hh[rows], b_hh[rows])
    c_t = torch.sigmoid(pre["f"]) * c_prev + torch.sigmoid(pre["i"]) * torch.tanh(pre["g"])
    return torch.sigmoid(pre["o"]) * torch.tanh(c_t), c_t


# =============================================================================================
# 11.step: gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) -> h_t, blocks r, z, n
# =============================================================================================


@wrong(
    "11.step",
    "the reset gate through tanh instead of the sigmoid",
    names=(
        r"\br\b.{0,60}(sigmoid|tanh)",
        r"reset gate.{0,60}(sigmoid|tanh)",
        r"(sigmoid|tanh).{0,60}(reset|\br\b)",
    ),
)
def s11_reset_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.tanh(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the blocks read in Keras's order z, r, n (update first) instead of torch's r, z, n",
    names=(
        r"(order|blocks?).{0,60}(r, ?z|z, ?r)",
        r"(swap|exchang|mix|switch)\w*.{0,60}(\br\b|\bz\b|reset|update)",
        r"reset.{0,60}update.{0,60}(swap|exchang|order|switch)",
        r"keras",
    ),
)
def s11_blocks_in_keras_order(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
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
    "z's recurrent term uses the reset rows W_hr, b_hr (a copy-paste slip)",
    names=(
        r"W_?hr",
        r"(update|\bz\b).{0,60}(reset|\br\b)('s)? (rows|weights?|block)",
        r"copy",
    ),
)
def s11_update_with_reset_rows(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hr.T + b_hr)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the reset gate r mixes the new and old state: h_t = (1 - r) * n + r * h_prev",
    names=(
        r"\br\b.{0,60}(instead of|in place of|rather than).{0,20}\bz\b",
        r"reset gate.{0,40}(in place of|instead of).{0,20}update gate",
        r"(\br\b|reset gate) (used )?(in|for) the (final )?(mix|interpolation|blend)",
        r"update gate.{0,60}(not used|unused|never|missing)",
    ),
)
def s11_reset_gate_in_the_mix(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - r) * n + r * h_prev


@wrong(
    "11.step",
    "W_hn used without .T in the candidate (silently wrong on square H x H blocks)",
    names=(r"transpos", r"W_?hn.{0,60}(\.T|transpose)", r"(missing|without|forgot\w*).{0,20}\.T"),
)
def s11_W_hn_not_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "h_prev scaled in place by z (h_prev.mul_(z)): values right, the argument h_prev changed",
    names=changed("h_prev") + (r"mul_",),
)
def s11_h_prev_scaled_in_place(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + h_prev.mul_(z)


@right("11.step", "torch's fused form: one product per weight, chunked after, and h_t = n + z * (h_prev - n)")
def s11_right_fused(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi_r, gi_z, gi_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=1)
    gh_r, gh_z, gh_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=1)
    r, z = torch.sigmoid(gi_r + gh_r), torch.sigmoid(gi_z + gh_z)
    n = torch.tanh(gi_n + r * gh_n)
    return n + z * (h_prev - n)


# =============================================================================================
# 12.bptt_step: bptt_step(delta_t, h_t, W_hh) -> delta_{t-1}, rows (B, H)
# =============================================================================================


@wrong(
    "12.bptt_step",
    "tanh's slope taken as 1 - tanh(h_t)^2: h_t is already tanh(a_t), so tanh is applied twice",
    names=(
        r"tanh.{0,60}(twice|again|already)",
        r"(h_t|state) is (already )?(the )?(tanh|after tanh|output of tanh)",
        r"1 ?- ?h_t ?(\*\* ?2|\^ ?2|²)",
        r"tanh\(h_t\)",
    ),
)
def g12_tanh_applied_again(delta_t, h_t, W_hh):
    return (delta_t * (1 - torch.tanh(h_t) ** 2)) @ W_hh


@wrong(
    "12.bptt_step",
    "the slope applied after the product with W_hh: (delta_t @ W_hh) * (1 - h_t^2)",
    names=(
        r"(order|before|after).{0,60}(slope|W_?hh|product|1 ?- ?h)",
        r"slope.{0,60}(first|before|after|wrong side)",
        r"diag",
    ),
)
def g12_slope_after_product(delta_t, h_t, W_hh):
    return (delta_t @ W_hh) * (1 - h_t**2)


@wrong(
    "12.bptt_step",
    "delta_t scaled in place (delta_t *= 1 - h_t^2): values right, the argument delta_t changed",
    names=changed("delta_t") + (r"\*=",),
)
def g12_delta_scaled_in_place(delta_t, h_t, W_hh):
    delta_t *= 1 - h_t**2
    return delta_t @ W_hh


@wrong(
    "12.bptt_step",
    "summed over the batch: one row (H,) instead of one per sequence (B, H)",
    names=(
        r"sum\w*.{0,60}batch",
        r"batch.{0,60}(summed|sum|collapsed|reduced)",
        r"(one )?row per sequence|\((batch|b), ?(hidden_size|h)\)",
    ),
)
def g12_summed_over_batch(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)).sum(0) @ W_hh


@right("12.bptt_step", "one einsum: delta_t diag(1 - h_t^2) W_hh written as 'bj,bj,jk->bk'")
def g12_right_einsum(delta_t, h_t, W_hh):
    return torch.einsum("bj,bj,jk->bk", delta_t, 1 - h_t * h_t, W_hh)


# =============================================================================================
# 13.tag_loss: tag_loss(scores, tags, lengths), scores (B, T, C), tags (B, T), lengths (B,)
# =============================================================================================


@wrong(
    "13.tag_loss",
    "the mean of each text's mean loss: short texts weigh as much as long ones",
    names=(
        r"(per|each|every) (sequence|text|row).{0,60}(mean|average)",
        r"mean of (the )?(per-\w+ )?means",
        r"(weigh|equal)\w*.{0,60}(sequence|text)",
        r"average.{0,60}(sequence|text)s? first",
    ),
)
def m13_mean_of_text_means(scores, tags, lengths):
    losses = [functional.cross_entropy(scores[b, :n], tags[b, :n]) for b, n in enumerate(lengths.tolist())]
    return torch.stack(losses).mean()


@wrong(
    "13.tag_loss",
    "tags of the padding set to -100 in place (tags[~is_real] = -100): value right, the argument tags changed",
    names=changed("tags") + (r"-100.{0,60}(argument|in place|tags)",),
)
def m13_padding_tags_overwritten(scores, tags, lengths):
    is_real = torch.arange(tags.shape[1]) < lengths[:, None]
    tags[~is_real] = -100
    return functional.cross_entropy(scores.transpose(1, 2), tags)


@wrong(
    "13.tag_loss",
    "mask with <= lengths: each text's first padding step counts as real",
    names=(
        r"<=",
        r"off[- ]by[- ]one",
        r"(one|extra|first) (padding|pad|padded) (step|character|position)",
        r"(includes?|counts?).{0,40}(a |one |the first )?padd",
    ),
)
def m13_mask_one_too_long(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) <= lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "sum of the real characters' losses divided by the batch size, not by their number",
    names=(
        r"divid\w*.{0,60}(batch|number of (texts|sequences))",
        r"(number|count) of (real )?characters",
        r"(batch size|\bB\b).{0,40}(instead of|not|rather than)",
        r"lengths\.sum",
    ),
)
def m13_divided_by_batch_size(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real], reduction="sum") / scores.shape[0]


@wrong(
    "13.tag_loss",
    "padding's losses zeroed by the mask, then the mean over all B * T positions",
    names=(
        r"mean.{0,60}(padding|all (positions|steps|characters)|every position|b ?\* ?t)",
        r"divid\w*.{0,60}(padding|all|b ?\* ?t)",
        r"(number|count) of (real )?characters",
        r"padding.{0,60}(denominator|counted|in the mean)",
    ),
)
def m13_mean_over_padding_too(scores, tags, lengths):
    is_real = (torch.arange(scores.shape[1]) < lengths[:, None]).float()
    losses = functional.cross_entropy(scores.transpose(1, 2), tags, reduction="none")  # (B, T)
    return (losses * is_real).mean()


@right("13.tag_loss", "per-position losses weighted by the mask, divided by lengths.sum()")
def m13_right_weighted_sum(scores, tags, lengths):
    weight = (torch.arange(scores.shape[1])[None, :] < lengths[:, None]).to(scores.dtype)
    safe_tags = tags.masked_fill(weight == 0, 0)  # the padding may hold anything
    losses = functional.cross_entropy(scores.permute(0, 2, 1), safe_tags, reduction="none")
    return (losses * weight).sum() / lengths.sum()


# =============================================================================================
# diagnose on nn.RNN: fn(module, input, hx) against module(input, hx)
# =============================================================================================


@wrong(
    case("RNN", 3, 4, nonlinearity="relu"),
    "the layer has nonlinearity='relu'; the student's loop always uses tanh",
    names=(r"relu", r"nonlinearity", r"tanh.{0,60}(instead|in place|rather)"),
)
def dr_relu_layer_run_with_tanh(module, input, hx=None):
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        pre = functional.linear(x_t, module.weight_ih_l0, module.bias_ih_l0)
        h = torch.tanh(pre + functional.linear(h, module.weight_hh_l0, module.bias_hh_l0))
        states.append(h)
    return torch.stack(states), h[None]


@wrong(
    case("RNN", 3, 4, bias=False),
    "the layer has bias=False; the student reads module.bias_ih_l0, which does not exist (AttributeError)",
    names=(
        r"bias ?= ?false",
        r"(no|without) bias(es)?",
        r"has no attribute.{0,30}bias|bias_ih_l0.{0,60}(not|doesn't|does not|no) (exist|attribute)",
    ),
)
def dr_biases_of_a_layer_without_bias(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, batch_first=True),
    "batch_first: the input is transposed in, but output is returned time first (seq_len, batch, H)",
    names=(
        r"batch_first.{0,80}output",
        r"output.{0,80}(batch[_ ]first|transpos|time[- ]first|\(batch, ?seq_len)",
    ),
)
def dr_batch_first_output_left_time_first(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    seq = input.transpose(0, 1) if module.batch_first else input
    h = torch.zeros(seq.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in seq:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True),
    "layer 1 reads only the forward half of layer 0's output, not both directions (2H features)",
    names=(
        r"(both|two) (halves|directions).{0,80}(layer 1|next layer|above|upper)",
        r"layer 1.{0,80}(2 ?\* ?h|both|concat|backward half|2h)",
        r"(forward|one) half",
    ),
)
def dr_upper_layer_reads_forward_half(module, input, hx=None):
    T, B, H, L = input.shape[0], input.shape[1], module.hidden_size, module.num_layers
    h_0 = hx if hx is not None else torch.zeros(2 * L, B, H)
    layer_input, finals = input, []
    for k in range(L):
        halves = []
        for d, suffix in enumerate((f"_l{k}", f"_l{k}_reverse")):
            W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
            b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
            h, by_time = h_0[2 * k + d], [None] * T
            for t in reversed(range(T)) if d else range(T):
                h = torch.tanh(layer_input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
                by_time[t] = h
            halves.append(torch.stack(by_time))
            finals.append(h)
        output = torch.cat(halves, dim=2)
        layer_input = halves[0]  # the next layer reads the forward states
    return output, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True, hx=True),
    "hx and h_n rows taken direction-major (row d * num_layers + k) instead of layer-major (row 2k + d)",
    names=(
        r"(direction|layer)[- ]major",
        r"2 ?\* ?(k|layer) ?\+ ?(d|direction)|(layer|k) ?\* ?2 ?\+",
        r"rows? of (hx|h_?0|h_n).{0,80}(order|layer.{0,30}direction|direction.{0,30}layer)",
        r"(order|layout) of the rows",
    ),
)
def dr_rows_direction_major(module, input, hx=None):
    T, B, H, L = input.shape[0], input.shape[1], module.hidden_size, module.num_layers
    h_0 = hx if hx is not None else torch.zeros(2 * L, B, H)
    finals = [None] * (2 * L)
    layer_input = input
    for k in range(L):
        halves = []
        for d, suffix in enumerate((f"_l{k}", f"_l{k}_reverse")):
            W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
            b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
            row = d * L + k  # all forward rows first, then all backward rows
            h, by_time = h_0[row], [None] * T
            for t in reversed(range(T)) if d else range(T):
                h = torch.tanh(layer_input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
                by_time[t] = h
            halves.append(torch.stack(by_time))
            finals[row] = h
        layer_input = torch.cat(halves, dim=2)
    return layer_input, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, lengths=[5, 3, 2], enforce_sorted=True),
    "packed input padded and run through the padding: h_n is each sequence's state after the padding steps",
    names=(
        r"h_n.{0,80}(padding|padded|last real|own length|lengths)",
        r"(runs?|ran|steps?|continu\w*) (through|over|into|across) (the )?padd",
        r"padding steps?",
    ),
)
def dr_packed_run_through_padding(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    padded, lengths = pad_packed_sequence(input)  # (T, B, I), zeros after each sequence's end
    h = torch.zeros(padded.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in padded:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output = pack_padded_sequence(torch.stack(states), lengths, enforce_sorted=input.sorted_indices is None)
    return output, h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, lengths=[2, 5, 3]),
    "runs the packed data by batch_sizes (sorted order) and returns h_n in that sorted order, not the batch's",
    names=(
        r"(sorted|unsorted)_indices",
        r"(sorted|original|batch|input) order",
        r"permut",
        r"rows? of h_n.{0,60}(order|sequence)",
    ),
)
def dr_packed_h_n_left_sorted(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    data, batch_sizes = input.data, input.batch_sizes
    h = torch.zeros(int(batch_sizes[0]), module.hidden_size) if hx is None else hx[0]
    outputs, start = [], 0
    for n in batch_sizes.tolist():  # the n longest sequences are still running
        h_new = torch.tanh(data[start : start + n] @ W_ih.T + b_ih + h[:n] @ W_hh.T + b_hh)
        outputs.append(h_new)
        h = torch.cat([h_new, h[n:]])  # finished sequences keep their last state
        start += n
    output = PackedSequence(torch.cat(outputs), batch_sizes, input.sorted_indices, input.unsorted_indices)
    return output, h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, unbatched=True),
    "unbatched input (seq_len, input_size): the student takes input.shape[1] as the batch size",
    names=(
        r"unbatched",
        r"(no|without) (a )?batch (dim|dimension)",
        r"2-?d input|\(seq_len, ?input_size\)|one sequence without",
    ),
)
def dr_unbatched_read_as_batched(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, dtype=torch.float64),
    "a float64 layer: h_0 made with torch.zeros (float32), so the product with W_hh fails on the dtype",
    names=(r"dtype", r"float ?(32|64)|double", r"h_?0.{0,60}(dtype|type)"),
)
def dr_float32_h0_for_float64_layer(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, 2),
    "each layer's states detached before the next layer reads them: layer 0 gets no gradient from the top",
    names=(
        r"detach",
        r"gradients?.{0,80}layer 0|layer 0.{0,80}gradient",
        r"(no|zero|missing) gradients?.{0,60}(weight|bias)_\w+_l0",
    ),
)
def dr_layers_detached(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states).detach()  # the next layer's input
        finals.append(h)
    return torch.stack(states), torch.stack(finals)


@wrong(
    case("RNN", 3, 4, batch_first=True),
    "batch_first input turned time first with input.transpose_(0, 1): the argument input is changed in place",
    names=changed("input") + (r"transpose_",),
)
def dr_input_transposed_in_place(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    if module.batch_first:
        input.transpose_(0, 1)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output = torch.stack(states)
    return (output.transpose(0, 1) if module.batch_first else output), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, 3),
    "h_n repeats the top layer's last state for every layer instead of each layer's own",
    names=(
        r"h_n.{0,80}(every|each|all) layers?",
        r"(lower|other|each|every) layers?.{0,80}(own )?(last|final) states?",
        r"h_n\[[01]\]|layers? [01].{0,60}h_n",
        r"(repeat|copies|copied|same).{0,60}top",
    ),
)
def dr_h_n_top_repeated(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input = input
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
    return layer_input, torch.stack([h] * L)


@wrong(
    case("RNN", 3, 4, bidirectional=True, batch_first=True),
    "batch_first: the backward run flips dim 0, the batch, instead of dim 1, the time",
    names=(
        r"flip.{0,60}(dim|axis)",
        r"(batch|time) (dim|axis).{0,60}(flip|revers)",
        r"revers\w*.{0,60}(batch|the sequences|order of the sequences)",
        r"backward.{0,80}(not reversed|forward in time|same direction)",
    ),
)
def dr_backward_flips_batch_axis(module, input, hx=None):
    B, H = input.shape[0], module.hidden_size
    h_0 = hx if hx is not None else torch.zeros(2, B, H)

    def run(seq, h, suffix):  # seq (B, T, I)
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
        states = []
        for t in range(seq.shape[1]):
            h = torch.tanh(seq[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        return torch.stack(states, dim=1), h

    out_f, h_f = run(input, h_0[0], "_l0")
    out_b, h_b = run(input.flip(0), h_0[1], "_l0_reverse")
    return torch.cat([out_f, out_b.flip(0)], dim=2), torch.stack([h_f, h_b.flip(0)])


@right(case("RNN", 3, 4, lengths=[2, 5, 3], hx=True), "packed data run by batch_sizes, hx and h_n permuted by hand")
def dr_right_packed_by_batch_sizes(module, input, hx=None):
    data, batch_sizes = input.data, input.batch_sizes
    order = input.sorted_indices if input.sorted_indices is not None else torch.arange(int(batch_sizes[0]))
    L, H = module.num_layers, module.hidden_size
    h_0 = data.new_zeros(L, len(order), H) if hx is None else hx[:, order]  # rows in the packed (sorted) order
    finals = []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, outputs, start = h_0[k], [], 0
        for n in batch_sizes.tolist():  # the n longest sequences are still running
            h_new = torch.tanh(data[start : start + n] @ W_ih.T + b_ih + h[:n] @ W_hh.T + b_hh)
            outputs.append(h_new)
            h = torch.cat([h_new, h[n:]])
            start += n
        data = torch.cat(outputs)
        finals.append(h[torch.argsort(order)])
    return PackedSequence(data, batch_sizes, input.sorted_indices, input.unsorted_indices), torch.stack(finals)


@right(case("RNN", 2, 3, 3, hx=True, nonlinearity="relu"), "relu stack: baddbmm-free, torch.addmm and a dict of params")
def dr_right_relu_stack(module, input, hx=None):
    act = torch.relu if module.nonlinearity == "relu" else torch.tanh
    p = dict(module.named_parameters())
    h_0 = hx if hx is not None else input.new_zeros(module.num_layers, input.shape[1], module.hidden_size)
    seq, finals = input, []
    for k in range(module.num_layers):
        h, states = h_0[k], []
        for x_t in seq:
            a = torch.addmm(p[f"bias_ih_l{k}"], x_t, p[f"weight_ih_l{k}"].t())
            h = act(a + torch.addmm(p[f"bias_hh_l{k}"], h, p[f"weight_hh_l{k}"].t()))
            states.append(h)
        seq = torch.stack(states)
        finals.append(h)
    return seq, torch.stack(finals)


# =============================================================================================
# diagnose on nn.LSTM
# =============================================================================================


def _lstm_cell(x_t, h, c, W_ih, W_hh, b_ih, b_hh):
    """The student's own LSTM step (correct), shared by their layer functions below."""
    i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


@wrong(
    case("LSTM", 3, 5, proj_size=2),
    "the layer has proj_size=2; the student ignores weight_hr_l0 (h should be projected to 2 units)",
    names=(r"proj", r"weight_hr"),
)
def dl_projection_ignored(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in input:
        h, c = _lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
        states.append(h)
    return torch.stack(states), (h[None], c[None])


@wrong(
    case("LSTM", 3, 4),
    "c_n returned as the last hidden state: (h_n, h_n) instead of (h_n, c_n)",
    names=(
        r"c_n",
        r"cell state.{0,60}(hidden|h_n|\bh\b)",
        r"(final|last) cell",
    ),
)
def dl_c_n_is_h_n(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in input:
        h, c = _lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
        states.append(h)
    return torch.stack(states), (h.unsqueeze(0), h.unsqueeze(0))


@wrong(
    case("LSTM", 3, 4, hx=True),
    "with hx given, the cell starts from h_0 (hx[0]) instead of c_0 (hx[1])",
    names=(
        r"c_?0.{0,60}(h_?0|hx\[0\]|instead|wrong)",
        r"hx\[1\]",
        r"(initial|start\w*) cell.{0,60}(h_?0|hidden|hx\[0\]|wrong)",
        r"cell.{0,40}(starts?|initiali[sz]ed).{0,40}(h_?0|hidden)",
    ),
)
def dl_cell_starts_from_h0(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[0][0])
    states = []
    for x_t in input:
        h, c = _lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
        states.append(h)
    return torch.stack(states), (h[None], c[None])


@wrong(
    case("LSTM", 3, 4, 2),
    "the cell state is not reset between layers: layer 1 starts from layer 0's final cell instead of c_0[1]",
    names=(
        r"(cell|\bc\b).{0,80}(layer 1|next layer|carried|previous layer|layer below|reset)",
        r"(initial|start\w*).{0,40}cell.{0,60}layer",
        r"c_?0\[(k|1)\]",
    ),
)
def dl_cell_carried_up_the_stack(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0, c_0 = hx if hx is not None else (torch.zeros(L, B, H), torch.zeros(L, B, H))
    c = c_0[0]
    layer_input, hs, cs = input, [], []
    for k in range(L):
        params = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            h, c = _lstm_cell(x_t, h, c, *params)
            states.append(h)
        layer_input = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return layer_input, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 4, bidirectional=True),
    "the backward direction leaves out bias_hh_l0_reverse",
    names=(
        r"bias_hh_l0_reverse",
        r"backward.{0,80}(bias|b_hh)",
        r"(bias|b_hh).{0,80}(backward|reverse)",
    ),
)
def dl_backward_without_b_hh(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0, c_0 = hx if hx is not None else (torch.zeros(2, B, H), torch.zeros(2, B, H))
    zero = torch.zeros(4 * H)
    runs = [
        (range(T), module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0),
        (reversed(range(T)), module.weight_ih_l0_reverse, module.weight_hh_l0_reverse, module.bias_ih_l0_reverse, zero),
    ]
    halves, hs, cs = [], [], []
    for d, (steps, *params) in enumerate(runs):
        h, c, by_time = h_0[d], c_0[d], [None] * T
        for t in steps:
            h, c = _lstm_cell(input[t], h, c, *params)
            by_time[t] = h
        halves.append(torch.stack(by_time))
        hs.append(h)
        cs.append(c)
    return torch.cat(halves, dim=2), (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 4, batch_first=True),
    "batch_first applied to h_n and c_n too: (batch, num_layers, H); torch keeps them (num_layers, batch, H)",
    names=(
        r"(h_n|c_n).{0,80}(batch[_ ]first|not affected|never|always|layer dim)",
        r"batch_first.{0,80}(h_n|c_n|states)",
        r"\(num_layers.{0,30}batch|\(batch, ?num_layers",
    ),
)
def dl_states_made_batch_first(module, input, hx=None):
    seq = input.transpose(0, 1) if module.batch_first else input
    B, H = seq.shape[1], module.hidden_size
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in seq:
        h, c = _lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
        states.append(h)
    dim = 1 if module.batch_first else 0
    return torch.stack(states, dim=dim), (h.unsqueeze(dim), c.unsqueeze(dim))


@wrong(
    case("LSTM", 3, 4, lengths=[4, 5, 2]),
    "packed: h is held at each sequence's end but c keeps running through the padding, so c_n is wrong",
    names=(
        r"c_n",
        r"cell.{0,80}(padding|padded|mask|length)",
        r"(padding|mask).{0,80}cell",
    ),
)
def dl_cell_runs_through_padding(module, input, hx=None):
    padded, lengths = pad_packed_sequence(input)
    T, B, H = padded.shape[0], padded.shape[1], module.hidden_size
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for t in range(T):
        real = (t < lengths)[:, None]  # (B, 1)
        h_new, c = _lstm_cell(
            padded[t], h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
        )
        h = torch.where(real, h_new, h)
        states.append(h)
    output = pack_padded_sequence(torch.stack(states), lengths, enforce_sorted=False)
    return output, (h[None], c[None])


@wrong(
    case("LSTM", 3, 4, 2),
    "output and the next layer's input are the cell states c_t instead of the hidden states h_t",
    names=(
        r"output.{0,80}(cell|c_t|\bc\b)",
        r"(cell|\bc\b) states?.{0,60}(instead of|not|rather than).{0,30}(hidden|\bh\b)",
        r"layer 1.{0,60}(reads|input).{0,40}cell",
    ),
)
def dl_output_holds_cells(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0, c_0 = hx if hx is not None else (torch.zeros(L, B, H), torch.zeros(L, B, H))
    layer_input, hs, cs = input, [], []
    for k in range(L):
        params = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, c, states = h_0[k], c_0[k], []
        for x_t in layer_input:
            h, c = _lstm_cell(x_t, h, c, *params)
            states.append(c)
        layer_input = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return layer_input, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 4),
    "h_0 and c_0 made with numpy (np.zeros): float64 tensors, so the products with float32 weights fail",
    names=(r"float ?64|double|dtype", r"numpy"),
)
def dl_states_from_numpy(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    if hx is None:
        h, c = torch.from_numpy(np.zeros((B, H))), torch.from_numpy(np.zeros((B, H)))
    else:
        h, c = hx[0][0], hx[1][0]
    states = []
    for x_t in input:
        h, c = _lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
        states.append(h)
    return torch.stack(states), (h[None], c[None])


@wrong(
    case("LSTM", 3, 4, unbatched=True, hx=True),
    "unbatched: a batch of one is added and output squeezed back, but h_n and c_n keep it: (1, 1, H) not (1, H)",
    names=(
        r"unbatched",
        r"(h_n|c_n).{0,80}(batch (dim|dimension)|\(num_layers, ?hidden|\(1, ?1)",
        r"squeeze",
    ),
)
def dl_unbatched_states_keep_batch(module, input, hx=None):
    seq = input.unsqueeze(1)  # (T, 1, I)
    H = module.hidden_size
    h, c = (torch.zeros(1, H), torch.zeros(1, H)) if hx is None else (hx[0][0][None], hx[1][0][None])
    states = []
    for x_t in seq:
        h, c = _lstm_cell(x_t, h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
        states.append(h)
    return torch.stack(states).squeeze(1), (h[None], c[None])


@wrong(
    case("LSTM", 3, 4, bidirectional=True),
    "c_n's backward row is the forward cell again: c_n = stack([c_forward, c_forward])",
    names=(
        r"c_n.{0,80}(backward|row 1|reverse|second row)",
        r"backward.{0,80}(cell|c_n)",
    ),
)
def dl_c_n_forward_twice(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0, c_0 = hx if hx is not None else (torch.zeros(2, B, H), torch.zeros(2, B, H))
    halves, hs, cs = [], [], []
    for d, suffix in enumerate(("_l0", "_l0_reverse")):
        params = [getattr(module, n + suffix) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, c, by_time = h_0[d], c_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            h, c = _lstm_cell(input[t], h, c, *params)
            by_time[t] = h
        halves.append(torch.stack(by_time))
        hs.append(h)
        cs.append(c)
    return torch.cat(halves, dim=2), (torch.stack(hs), torch.stack([cs[0], cs[0]]))


@right(
    case("LSTM", 3, 4, 2, bidirectional=True, batch_first=True, hx=True),
    "batch first throughout (no transpose): steps read as input[:, t], gates by unbind",
)
def dl_right_batch_first_unbind(module, input, hx=None):
    seq = input if module.batch_first else input.transpose(0, 1)  # (B, T, I)
    B, T, H, L = seq.shape[0], seq.shape[1], module.hidden_size, module.num_layers
    D = 2 if module.bidirectional else 1
    h_0, c_0 = hx if hx is not None else (seq.new_zeros(D * L, B, H), seq.new_zeros(D * L, B, H))
    hs, cs = [], []
    for k in range(L):
        halves = []
        for d in range(D):
            suffix = f"_l{k}" + ("_reverse" if d else "")
            W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
            b = getattr(module, "bias_ih" + suffix) + getattr(module, "bias_hh" + suffix)
            h, c, by_time = h_0[D * k + d], c_0[D * k + d], {}
            for t in sorted(range(T), reverse=bool(d)):
                i, f, g, o = (seq[:, t] @ W_ih.T + h @ W_hh.T + b).view(B, 4, H).unbind(1)
                c = f.sigmoid() * c + i.sigmoid() * g.tanh()
                h = o.sigmoid() * c.tanh()
                by_time[t] = h
            halves.append(torch.stack([by_time[t] for t in range(T)], dim=1))
            hs.append(h)
            cs.append(c)
        seq = torch.cat(halves, dim=2)
    return (seq if module.batch_first else seq.transpose(0, 1)), (torch.stack(hs), torch.stack(cs))


# =============================================================================================
# diagnose on nn.GRU
# =============================================================================================


def _gru_cell(x_t, h, W_ih, W_hh, b_ih, b_hh):
    """The student's own GRU step (correct), shared by their layer functions below."""
    i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


@wrong(
    case("GRU", 3, 4),
    "the update gate in the other convention: h_t = z * n + (1 - z) * h_prev",
    names=(
        r"\bz\b.{0,80}(old|previous|h_prev|convention|new state|candidate)",
        r"(swap|exchang)\w*.{0,40}(\bz\b|1 ?- ?z)",
        r"update gate.{0,80}(swap|convention|old state|candidate|revers)",
    ),
)
def dg_update_gate_other_convention(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)
        h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, dim=-1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        h = z * n + (1 - z) * h
        states.append(h)
    return torch.stack(states), h[None]


@wrong(
    case("GRU", 3, 4, 2, hx=True),
    "hx is ignored: every layer starts from zeros even when hx is given",
    names=(
        r"hx.{0,60}(ignored|not used|unused|never (used|read))",
        r"(starts?|started) from zeros.{0,40}(hx|given|instead)",
        r"zeros.{0,60}(instead of|although|even though|rather than).{0,30}(hx|given)",
    ),
)
def dg_hx_ignored(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    layer_input, finals = input, []
    for k in range(L):
        params = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = torch.zeros(B, H), []
        for x_t in layer_input:
            h = _gru_cell(x_t, h, *params)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("GRU", 3, 4, 2, batch_first=True, hx=True),
    "batch_first: hx is transposed as if it were batch first too; torch's hx is (num_layers, batch, H) regardless",
    names=(
        r"hx.{0,80}(batch[_ ]first|not batch|transpos)",
        r"batch_first.{0,80}(hx|h_?0|initial)",
        r"\(num_layers, ?batch",
    ),
)
def dg_hx_transposed_for_batch_first(module, input, hx=None):
    seq = input.transpose(0, 1) if module.batch_first else input
    L, B, H = module.num_layers, seq.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else (hx.transpose(0, 1) if module.batch_first else hx)
    layer_input, finals = seq, []
    for k in range(L):
        params = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            h = _gru_cell(x_t, h, *params)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    output = layer_input.transpose(0, 1) if module.batch_first else layer_input
    return output, torch.stack(finals)


@wrong(
    case("GRU", 3, 4, 3),
    "layers above 0 all read the _l1 parameters (written for two layers): layer 2 uses layer 1's weights",
    names=(
        r"_l2",
        r"layer 2.{0,80}(weights|_l1|parameters)",
        r"(third|top) layer.{0,80}(weights|parameters)",
        r"weight_\w+_l1",
    ),
)
def dg_upper_layers_share_l1(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        suffix = "_l0" if k == 0 else "_l1"
        params = [getattr(module, n + suffix) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            h = _gru_cell(x_t, h, *params)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("GRU", 3, 4, lengths=[5, 4, 2], enforce_sorted=True),
    "packed input padded and run through the padding: h_n is taken after the padding steps",
    names=(
        r"h_n.{0,80}(padding|padded|last real|own length|lengths)",
        r"(runs?|ran|steps?|continu\w*) (through|over|into|across) (the )?padd",
        r"padding steps?",
    ),
)
def dg_packed_run_through_padding(module, input, hx=None):
    padded, lengths = pad_packed_sequence(input)
    h = torch.zeros(padded.shape[1], module.hidden_size) if hx is None else hx[0]
    params = (module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
    states = []
    for x_t in padded:
        h = _gru_cell(x_t, h, *params)
        states.append(h)
    return pack_padded_sequence(torch.stack(states), lengths), h[None]


@wrong(
    case("GRU", 3, 4, bidirectional=True, lengths=[3, 5, 2]),
    "packed, bidirectional: the backward run starts at the padded last step for every sequence, not at its own end",
    names=(
        r"backward.{0,80}(padding|last real|own (last|end|length)|lengths)",
        r"(padding|padded).{0,80}backward",
        r"revers\w*.{0,80}(length|padding)",
    ),
)
def dg_backward_starts_in_padding(module, input, hx=None):
    padded, lengths = pad_packed_sequence(input)
    T, B, H = padded.shape[0], padded.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    halves, finals = [], []
    for d, suffix in enumerate(("_l0", "_l0_reverse")):
        params = [getattr(module, n + suffix) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, by_time = h_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            h_new = _gru_cell(padded[t], h, *params)
            h = torch.where((t < lengths)[:, None], h_new, h) if d == 0 else h_new
            by_time[t] = h
        halves.append(torch.stack(by_time))
        finals.append(h)
    output = pack_padded_sequence(torch.cat(halves, dim=2), lengths, enforce_sorted=False)
    return output, torch.stack(finals)


@wrong(
    case("GRU", 3, 4),
    "the candidate leaves out the reset gate: n = tanh(x W_in^T + b_in + h W_hn^T + b_hn)",
    names=(
        r"reset gate.{0,80}(missing|not used|unused|never|ignored|left out)",
        r"\br\b.{0,60}(missing|not used|unused|never used)",
        r"candidate.{0,80}(reset|\br\b)",
    ),
)
def dg_candidate_without_reset(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)
        h_r, h_z, h_n = (h @ W_hh.T + b_hh).chunk(3, dim=-1)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + h_n)
        h = (1 - z) * n + z * h
        states.append(h)
    return torch.stack(states), h[None]


@wrong(
    case("GRU", 3, 4),
    "each state appended detached to output: values right, no gradient reaches the parameters through output",
    names=(
        r"detach",
        r"output.{0,80}gradient|gradients?.{0,80}(through |from )?output",
    ),
)
def dg_output_detached(module, input, hx=None):
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    params = (module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
    states = []
    for x_t in input:
        h = _gru_cell(x_t, h, *params)
        states.append(h.detach())  # a record of the states
    return torch.stack(states), h[None]


@wrong(
    case("GRU", 3, 4, 2, hx=True),
    "each layer's final state written back into the hx it was given (hx[k] = h), and hx returned as h_n",
    names=changed("hx") + (r"h_n.{0,40}(is|aliases|same tensor as) hx",),
)
def dg_final_states_written_into_hx(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_n = hx if hx is not None else torch.zeros(L, B, H)
    layer_input = input
    for k in range(L):
        params = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_n[k].clone(), []
        for x_t in layer_input:
            h = _gru_cell(x_t, h, *params)
            states.append(h)
        layer_input = torch.stack(states)
        h_n[k] = h
    return layer_input, h_n


@wrong(
    case("GRU", 3, 4, dtype=torch.float64),
    "a float64 layer: input and parameters cast with .float(), so output and h_n come back float32",
    names=(r"dtype", r"float ?(32|64)|double"),
)
def dg_everything_cast_to_float32(module, input, hx=None):
    params = [p.float() for p in (module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)]
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0].float()
    states = []
    for x_t in input.float():
        h = _gru_cell(x_t, h, *params)
        states.append(h)
    return torch.stack(states), h[None]


@wrong(
    case("GRU", 3, 4, 2, bidirectional=True),
    "layer 1 reads its input with the halves swapped: cat([backward, forward]) instead of [forward, backward]",
    names=(
        r"(order|halves|swap\w*).{0,80}(layer 1|next layer|above|upper|input)",
        r"(backward|reverse).{0,30}(half )?first",
        r"(forward|backward).{0,30}halves?.{0,40}(order|swapped|exchanged)",
    ),
)
def dg_upper_layer_reads_swapped_halves(module, input, hx=None):
    T, B, H, L = input.shape[0], input.shape[1], module.hidden_size, module.num_layers
    h_0 = hx if hx is not None else torch.zeros(2 * L, B, H)
    layer_input, finals = input, []
    for k in range(L):
        halves = []
        for d, suffix in enumerate((f"_l{k}", f"_l{k}_reverse")):
            params = [getattr(module, n + suffix) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            h, by_time = h_0[2 * k + d], [None] * T
            for t in reversed(range(T)) if d else range(T):
                h = _gru_cell(layer_input[t], h, *params)
                by_time[t] = h
            halves.append(torch.stack(by_time))
            finals.append(h)
        output = torch.cat(halves, dim=2)
        layer_input = torch.cat(halves[::-1], dim=2)  # what the next layer reads
    return output, torch.stack(finals)


@wrong(
    case("GRU", 3, 4),
    "the input biases of r and z exchanged (b_iz, b_ir, b_in = b_ih.chunk(3)): each gate gets the other's bias",
    names=(
        r"b_?i[rz]",
        r"bias.{0,60}(\br\b|\bz\b|reset|update)( gate)?.{0,40}(swap|exchang|wrong|other)",
        r"(reset|update) gate.{0,60}bias",
        r"(swap|exchang)\w*.{0,40}bias",
    ),
)
def dg_gate_biases_exchanged(module, input, hx=None):
    W_ir, W_iz, W_in = module.weight_ih_l0.chunk(3)
    W_hr, W_hz, W_hn = module.weight_hh_l0.chunk(3)
    b_iz, b_ir, b_in = module.bias_ih_l0.chunk(3)
    b_hr, b_hz, b_hn = module.bias_hh_l0.chunk(3)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        r = torch.sigmoid(x_t @ W_ir.T + b_ir + h @ W_hr.T + b_hr)
        z = torch.sigmoid(x_t @ W_iz.T + b_iz + h @ W_hz.T + b_hz)
        n = torch.tanh(x_t @ W_in.T + b_in + r * (h @ W_hn.T + b_hn))
        h = (1 - z) * n + z * h
        states.append(h)
    return torch.stack(states), h[None]


@right(case("GRU", 3, 4, bidirectional=True, unbatched=True, hx=True), "unbatched handled by a batch of one and flip")
def dg_right_unbatched_flip(module, input, hx=None):
    unbatched = input.dim() == 2
    seq = input.unsqueeze(1) if unbatched else input  # (T, B, I), time first (batch_first=False)
    D, L, H = 2 if module.bidirectional else 1, module.num_layers, module.hidden_size
    h_0 = seq.new_zeros(D * L, seq.shape[1], H) if hx is None else (hx.unsqueeze(1) if unbatched else hx)
    finals = []
    for k in range(L):
        outs = []
        for d in range(D):
            suffix = f"_l{k}" + ("_reverse" if d else "")
            params = [getattr(module, n + suffix) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            h, states = h_0[D * k + d], []
            for x_t in seq.flip(0) if d else seq:
                h = _gru_cell(x_t, h, *params)
                states.append(h)
            out = torch.stack(states)
            outs.append(out.flip(0) if d else out)
            finals.append(h)
        seq = torch.cat(outs, dim=2)
    h_n = torch.stack(finals)
    return (seq.squeeze(1), h_n.squeeze(1)) if unbatched else (seq, h_n)


@right(case("GRU", 2, 3, 2, dtype=torch.float64, hx=True), "float64 stack: new_zeros and the reset gate written out")
def dg_right_float64_stack(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = hx if hx is not None else input.new_zeros(L, B, H)
    seq, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in seq:
            gi, gh = x_t @ W_ih.T + b_ih, h @ W_hh.T + b_hh
            r = torch.sigmoid(gi[:, :H] + gh[:, :H])
            z = torch.sigmoid(gi[:, H : 2 * H] + gh[:, H : 2 * H])
            n = torch.tanh(gi[:, 2 * H :] + r * gh[:, 2 * H :])
            h = torch.lerp(n, h, z)  # n + z * (h - n)
            states.append(h)
        seq = torch.stack(states)
        finals.append(h)
    return seq, torch.stack(finals)
