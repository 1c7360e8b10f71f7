"""At least 150 wrong student versions of the series' "write it yourself" functions, and a few right ones.

Each record is a `Version`: a name, a target (an exercise key for `helpers.exercises.check_code`,
or a case builder returning (module, input, hx) for `helpers.diagnose`), the function, a one-line
description of its true bug, and `names`: regular expressions (case-insensitive), at least one of
which a message that truly names this bug would match (its cause, or its precise location: which
term, weight, step, direction, layer or row). Correct versions, written in unusual styles, have
`correct=True` and must pass.

The wrong versions were written from the exercises' statements and stubs (notebooks/NN_*.ipynb),
the worked answers that `helpers.exercises.solution(key)` prints, the README's description of
`diagnose`, and from the mistakes students and forum posters make (threads cited next to the
versions drawn from one) -- never from the checker's catalogue of bugs (helpers/bugs.py,
helpers/diagnosis.py) or its tests. benchmarks/diagnosis_quality.py runs them.

Most diagnose versions call `_layer`, one general layer written as a student would who got it
right (it passes diagnose on RNN, LSTM and GRU, 1-2 layers, bidirectional, batch_first, packed,
with and without hx), with one switch that puts in one mistake; the others are written out.
"""

import math
import time
from dataclasses import dataclass, field

import torch
from torch import nn
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
            size = (rows, hidden_size) if unbatched else (rows, batch, hidden_size)
            h_0 = torch.randn(*size)
            state = (h_0, torch.randn(*size)) if kind == "LSTM" else h_0
        if publish:  # the notebook's own variable: a student's function may read it instead of its argument
            NOTEBOOK_LAYER = module
        return module, x, state

    parts = [f"{kind}({input_size}->{hidden_size}", f"L={num_layers}"]
    parts += [p for p, on in [("bi", bidirectional), ("batch_first", batch_first), ("hx", hx)] if on]
    parts += ["packed"] if lengths is not None else []
    parts += ["unbatched"] if unbatched else [f"T={seq_len}", f"B={batch}"]
    parts += [f"{k}={v}" for k, v in options.items()]
    build.label = ", ".join(parts) + ")"
    build.kind = kind
    return build


NOTEBOOK_LAYER = None  # set by a case built with publish=True, as the notebook's `rnn` would be
torch.manual_seed(1234)
rnn = nn.RNN(1, 1)  # a notebook's one-unit layer, read by a version that ignores its argument
wide = nn.RNN(3, 2)  # a notebook's 3 -> 2 layer, likewise
torch.manual_seed(0)

# ---------------------------------------------------------------------------------------------
# One general layer (RNN, LSTM or GRU; any num_layers; bidirectional; batch_first; packed; hx),
# written as a student would who got everything right, with switches that each put in one mistake.
# The diagnose versions below are small functions that call it with one switch on.
# ---------------------------------------------------------------------------------------------


def _kind(module):
    return "LSTM" if isinstance(module, nn.LSTM) else "GRU" if isinstance(module, nn.GRU) else "RNN"


def _params(module, layer, direction, bug):
    suffix = f"_l{0 if bug.get('layer0_weights') else layer}"
    if direction == 1 and not bug.get("forward_weights_backward"):
        suffix += "_reverse"
    W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
    if module.bias or bug.get("assume_bias"):
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
    else:
        b_ih = b_hh = None
    if bug.get("data_weights"):
        W_ih, W_hh = W_ih.data, W_hh.data
        b_ih, b_hh = (None if b is None else b.data for b in (b_ih, b_hh))
    return W_ih, W_hh, b_ih, b_hh


def _cell(kind, module, x, h, c, W_ih, W_hh, b_ih, b_hh, bug):
    """One step: (h_t, c_t) (c_t None except for an LSTM)."""
    if bug.get("half"):
        x, h, W_ih, W_hh = x.half(), h.half(), W_ih.half(), W_hh.half()
        b_ih, b_hh = (None if b is None else b.half() for b in (b_ih, b_hh))
    gi = x @ (W_ih if bug.get("wih_no_t") else W_ih.T)
    gh = h @ (W_hh if bug.get("whh_no_t") else W_hh.T)
    if b_ih is not None:
        gi = gi + b_ih + (b_ih if bug.get("bias_twice") else 0)
    if b_hh is not None and not bug.get("no_bhh"):
        gh = gh + b_hh
    if kind == "RNN":
        if module.nonlinearity == "relu" and not bug.get("always_tanh"):
            new = torch.relu(gi + gh)
        else:
            new = torch.tanh(gi + gh)
        return new.float() if bug.get("half") else new, None
    if kind == "LSTM":
        blocks = dict(zip(bug.get("gate_order", "ifgo"), (gi + gh).chunk(4, dim=-1)))
        i, f, o = (
            torch.sigmoid(blocks["i"]),
            torch.sigmoid(blocks["f"] + bug.get("forget_bias", 0)),
            torch.sigmoid(blocks["o"]),
        )
        g = torch.sigmoid(blocks["g"]) if bug.get("g_sigmoid") else torch.tanh(blocks["g"])
        c_new = f * c + i * g
        if bug.get("h_no_tanh"):
            h_new = o * c_new
        elif bug.get("h_old_c"):
            h_new = o * torch.tanh(c)
        else:
            h_new = o * torch.tanh(c_new)
        return h_new, c_new
    order = bug.get("gate_order", "rzn")
    xs = dict(zip(order, (x @ (W_ih.T)).chunk(3, dim=-1)))
    hs_ = dict(zip(order, (h @ W_hh.T).chunk(3, dim=-1)))
    bi = dict(zip(order, b_ih.chunk(3) if b_ih is not None else (0, 0, 0)))
    bh = dict(zip(order, b_hh.chunk(3) if b_hh is not None else (0, 0, 0)))
    if bug.get("bias_twice"):
        bi = {k: v + v for k, v in bi.items()}
    r = torch.sigmoid(xs["r"] + bi["r"] + hs_["r"] + bh["r"])
    z = torch.sigmoid(xs["z"] + bi["z"] + hs_["z"] + bh["z"])
    squash = torch.sigmoid if bug.get("n_sigmoid") else torch.tanh
    if bug.get("reset_before"):
        W_hn = dict(zip(order, W_hh.chunk(3)))["n"]
        n = squash(xs["n"] + bi["n"] + (r * h) @ W_hn.T + bh["n"])
    elif bug.get("bhn_outside"):
        n = squash(xs["n"] + bi["n"] + r * hs_["n"] + bh["n"])
    else:
        n = squash(xs["n"] + bi["n"] + r * (hs_["n"] + bh["n"]))
    if bug.get("z_on_candidate"):
        return z * n + (1 - z) * h, None
    return (1 - z) * n + z * h, None


def _layer(module, input, hx=None, **bug):
    """module(input, hx), step by step; each keyword in `bug` switches one mistake on."""
    if bug.get("no_grad"):
        with torch.no_grad():
            return _layer(module, input, hx, **{k: v for k, v in bug.items() if k != "no_grad"})
    kind = _kind(module)
    L, D, H = module.num_layers, 2 if module.bidirectional else 1, module.hidden_size
    packed = isinstance(input, PackedSequence)
    if packed:
        x, lengths = pad_packed_sequence(input)  # (T, B, I), in the caller's batch order
        if bug.get("ignore_lengths"):
            lengths = None
    else:
        lengths = None
        x = input
        if module.batch_first:
            if bug.get("batch_first_reshape"):
                x = x.reshape(x.shape[1], x.shape[0], x.shape[2])
            elif not bug.get("batch_first_ignored"):
                x = x.transpose(0, 1)
    T, B = x.shape[0], x.shape[1]
    if hx is None or bug.get("ignore_hx"):
        dtype = torch.float64 if bug.get("float64_state") else x.dtype
        h_0 = torch.zeros(L * D, B, H, dtype=dtype)
        c_0 = torch.zeros(L * D, B, H, dtype=dtype)
    elif kind == "LSTM":
        h_0, c_0 = (hx[1], hx[0]) if bug.get("hx_swapped") else hx
    else:
        h_0, c_0 = hx, None
    if bug.get("zero_c0"):
        c_0 = torch.zeros_like(h_0)
    layer_input, h_n, c_n = x, [], []
    for layer in range(L):
        outputs = []
        for direction in range(D):
            W_ih, W_hh, b_ih, b_hh = _params(module, layer, direction, bug)
            row = 0 if bug.get("hx_row0") else layer * D + direction
            h = h_0[row]
            c = c_0[row] if kind == "LSTM" else None
            if bug.get("carry_c_up") and layer > 0 and direction == 0:
                c = c_n[-D]
            if bug.get("backward_from_forward") and direction == 1:
                h, c = h_n[-1], (c_n[-1] if kind == "LSTM" else None)
            backward = direction == 1 and not bug.get("backward_not_reversed")
            steps = range(T - 1, -1, -1) if backward else range(T)
            by_time, computed = [None] * T, []
            for t in steps:
                if bug.get("prints"):
                    print(f"step {t}: {h.detach().flatten()[:4].tolist()}")
                if bug.get("sleep"):
                    time.sleep(bug["sleep"])
                if bug.get("detach"):
                    h = h.detach()
                if bug.get("detach_c") and c is not None:
                    c = c.detach()
                h_prev = h
                h_new, c_new = _cell(kind, module, layer_input[t], h, c, W_ih, W_hh, b_ih, b_hh, bug)
                masked = lengths is not None and not (bug.get("backward_from_padding") and direction == 1)
                if masked:
                    real = (t < lengths).unsqueeze(1)
                    h = torch.where(real, h_new, h)
                    c = torch.where(real, c_new, c) if c is not None else None
                    state = torch.where(real, h_new, torch.zeros_like(h_new))
                else:
                    h, c, state = h_new, c_new, h_new
                by_time[t] = h_prev if bug.get("output_prev") else state
                computed.append(by_time[t])
            if direction == 1 and bug.get("backward_not_flipped_back"):
                by_time = computed
            outputs.append(torch.stack(by_time))
            if direction == 1 and bug.get("h_n_backward_from_last_step"):
                h = by_time[T - 1]
            h_n.append(h)
            c_n.append(c)
        if bug.get("halves_swapped"):
            outputs = outputs[::-1]
        below = torch.cat(outputs, dim=-1)
        if layer == 0:
            first_layer = below
        if bug.get("next_layer_halves_swapped") and D == 2:
            layer_input = torch.cat(outputs[::-1], dim=-1)
        elif bug.get("layers_read_input"):
            layer_input = x
        else:
            layer_input = below
    output = first_layer if bug.get("output_first_layer") else below
    if bug.get("h_n_direction_major"):
        order = [k * D + d for d in range(D) for k in range(L)]
        h_n, c_n = [h_n[i] for i in order], [c_n[i] for i in order]
    if bug.get("h_n_layers_reversed"):
        h_n = [h for k in reversed(range(L)) for h in h_n[k * D : (k + 1) * D]]
        c_n = [c for k in reversed(range(L)) for c in c_n[k * D : (k + 1) * D]]
    if bug.get("h_n_top_only"):
        h_n, c_n = h_n[-D:], c_n[-D:]
    h_n = torch.stack(h_n)
    c_n = torch.stack(c_n) if kind == "LSTM" else None
    if bug.get("c_n_tanh"):
        c_n = torch.tanh(c_n)
    if bug.get("h_n_batch_one"):
        h_n = h_n.reshape(h_n.shape[0], 1, -1)
    if packed:
        if bug.get("h_n_sorted_order") and input.sorted_indices is not None:
            h_n = h_n[:, input.sorted_indices]
            c_n = c_n[:, input.sorted_indices] if c_n is not None else None
        if not bug.get("return_padded"):
            real_lengths = pad_packed_sequence(input)[1]
            output = pack_padded_sequence(output, real_lengths, enforce_sorted=input.sorted_indices is None)
    elif module.batch_first:
        if bug.get("batch_first_reshape"):
            output = output.reshape(output.shape[1], output.shape[0], -1)
        elif bug.get("h_n_batch_first"):
            output = output.transpose(0, 1)
            h_n = h_n.transpose(0, 1)
            c_n = c_n.transpose(0, 1) if c_n is not None else None
        elif not bug.get("batch_first_ignored"):
            output = output.transpose(0, 1)
    if kind == "LSTM":
        if bug.get("flat_triple"):
            return output, h_n, c_n
        return output, ((c_n, h_n) if bug.get("h_c_swapped") else (h_n, c_n))
    return output, h_n


# =============================================================================================
# 01.step: rnn_step(x_t, h_prev, w_ih, w_hh) -> tanh(w_ih * x_t + w_hh * h_prev), one unit
# =============================================================================================


@wrong(
    "01.step",
    "math.tanh: returns a Python float, and fails on a case of several values",
    [r"math\.tanh", r"torch\.tanh", r"python (float|number)"],
)
def s01_math_tanh(x_t, h_prev, w_ih, w_hh):
    return math.tanh(w_ih * x_t + w_hh * h_prev)


@wrong("01.step", "no tanh: returns the pre-activation", [r"tanh"])
def s01_no_tanh(x_t, h_prev, w_ih, w_hh):
    return w_ih * x_t + w_hh * h_prev


@wrong(
    "01.step",
    "tanh of each term separately, then added",
    [r"each term", r"separately", r"(add|sum).{0,40}(before|first|inside).{0,20}tanh", r"tanh.{0,30}(once|of the sum)"],
)
def s01_tanh_each_term(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t) + torch.tanh(w_hh * h_prev)


@wrong(
    "01.step",
    "weights swapped: w_hh multiplies x_t and w_ih multiplies h_prev",
    [r"swap", r"exchang", r"w_hh \* x_t", r"w_ih \* h_prev", r"the other way"],
)
def s01_weights_swapped(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_hh * x_t + w_ih * h_prev)


@wrong("01.step", "prints the new state instead of returning it (returns None)", [r"\breturn", r"None", r"print"])
def s01_prints_not_returns(x_t, h_prev, w_ih, w_hh):
    print(torch.tanh(w_ih * x_t + w_hh * h_prev))


@wrong("01.step", "sigmoid instead of tanh", [r"sigmoid"])
def s01_sigmoid(x_t, h_prev, w_ih, w_hh):
    return torch.sigmoid(w_ih * x_t + w_hh * h_prev)


@wrong("01.step", "the recurrent term w_hh * h_prev is left out", [r"h_prev", r"w_hh", r"recurren", r"previous state"])
def s01_no_recurrent_term(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t)


@wrong("01.step", "relu instead of tanh", [r"relu"])
def s01_relu(x_t, h_prev, w_ih, w_hh):
    return torch.relu(w_ih * x_t + w_hh * h_prev)


@wrong(
    "01.step", "the recurrent term is subtracted instead of added", [r"sign", r"minus", r"subtract", r"\+.{0,20}not -"]
)
def s01_minus(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t - w_hh * h_prev)


@wrong("01.step", "returns float64 (.double()) where the arguments are float32", [r"float64", r"dtype", r"double"])
def s01_float64(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * h_prev).double()


@wrong(
    "01.step",
    "reads the notebook's layer `rnn` (a global) instead of the arguments w_ih, w_hh",
    [
        r"global",
        r"reads `?\w+`? from the notebook",
        r"not from its arguments",
        r"instead of (its|the) arguments?",
        r"outside (the|your) function",
    ],
)
def s01_reads_global_layer(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(rnn.weight_ih_l0[0, 0] * x_t + rnn.weight_hh_l0[0, 0] * h_prev)


# =============================================================================================
# 02.loop: my_rnn(module, input, hx=None) -> (output, h_n), one layer, one direction
# =============================================================================================


@wrong(
    "02.loop",
    "W_hh not transposed: h @ W_hh (right on the notebook's one-unit layer only)",
    [r"W_hh.{0,40}transpos", r"how W_hh enters", r"transpos.{0,40}W_hh", r"W_hh\.T"],
    source="https://discuss.pytorch.org/t/dimensionslity-in-rnn/51498",
)
def s02_whh_not_transposed(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "W_ih not transposed: x_t @ W_ih (raises once input_size != hidden_size)",
    [r"W_ih.{0,40}transpos", r"transpos.{0,40}W_ih", r"W_ih\.T"],
)
def s02_wih_not_transposed(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong("02.loop", "hx ignored: always starts from zeros", [r"h_0", r"\bhx\b", r"initial state"])
def s02_ignores_hx(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size)
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h_n returned without its layer dimension: (batch, hidden) instead of (1, batch, hidden)",
    [r"h_n.{0,80}shape", r"layer dimension", r"unsqueeze", r"num_layers"],
)
def s02_h_n_no_layer_dim(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h


@wrong(
    "02.loop",
    "output stores the state before the update (h_{t-1}), one step late",
    [
        r"before.{0,30}(update|step)",
        r"previous state",
        r"h_\{?t ?- ?1\}?",
        r"one step (late|behind|early)",
        r"shift",
        r"h_prev",
    ],
)
def s02_output_one_step_late(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        states.append(h)
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
    return torch.stack(states), h.unsqueeze(0)


@wrong("02.loop", "b_hh left out", [r"b_hh", r"bias_hh"])
def s02_no_b_hh(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih = module.bias_ih_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "b_ih added twice (b_ih + b_ih instead of b_ih + b_hh)",
    [r"twice", r"b_ih.{0,30}b_ih", r"two times", r"b_hh"],
)
def s02_b_ih_twice(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih = module.bias_ih_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_ih)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "elementwise W * x instead of a matrix product (right for one unit only)",
    [r"element.?wise", r"matrix product", r"matmul", r"\* instead of @", r"broadcast"],
)
def s02_elementwise(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(W_ih * x_t + b_ih + W_hh * h + b_hh)  # notebook 01's step, with tensors
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop", "the whole loop under torch.no_grad(): right values, no gradient", [r"no_grad", r"gradient", r"autograd"]
)
def s02_no_grad(module, input, hx=None):
    with torch.no_grad():
        W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
        b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
        h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
        states = []
        for x_t in input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "state detached at every step: right values, gradients cut at each step",
    [r"detach", r"gradient"],
    source="https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887",
)
def s02_detach_each_step(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h.detach() @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h_n hard-coded as output[1] (the notebook's T=2 last step), not the last step",
    [r"h_n (is|was|holds|taken)", r"last step", r"hard.?coded", r"output\[-1\]", r"which step's state"],
)
def s02_h_n_hardcoded_index(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output = torch.stack(states)
    return output, output[1].unsqueeze(0)


@wrong(
    "02.loop",
    "reads the notebook's global `rnn` instead of the `module` argument",
    [
        r"global",
        r"reads `?\w+`? from the notebook",
        r"not from its arguments",
        r"instead of (its|the) arguments?",
        r"outside (the|your) function",
    ],
)
def s02_reads_global_rnn(module, input, hx=None):
    W_ih, W_hh = rnn.weight_ih_l0, rnn.weight_hh_l0
    b_ih, b_hh = rnn.bias_ih_l0, rnn.bias_hh_l0
    h = torch.zeros(input.shape[1], rnn.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


# =============================================================================================
# 03.step_matrices: rnn_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh), a batch
# =============================================================================================


@wrong("03.step_matrices", "W_ih not transposed", [r"W_ih.{0,40}transpos", r"transpos.{0,40}W_ih"])
def s03_wih_not_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih + b_ih + h_prev @ W_hh.T + b_hh)


@wrong(
    "03.step_matrices",
    "W_hh not transposed (silent when the matrix is square)",
    [r"W_hh.{0,40}transpos", r"how W_hh enters", r"transpos.{0,40}W_hh"],
)
def s03_whh_not_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh + b_hh)


@wrong("03.step_matrices", "neither weight transposed", [r"neither", r"both.{0,40}transpos", r"transpos"])
def s03_neither_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih + b_ih + h_prev @ W_hh + b_hh)


@wrong("03.step_matrices", "b_hh left out", [r"b_hh"])
def s03_no_b_hh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T)


@wrong("03.step_matrices", "b_ih added twice, b_hh never", [r"twice", r"b_ih.{0,30}b_ih", r"b_hh"])
def s03_b_ih_twice(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_ih)


@wrong(
    "03.step_matrices",
    "biases made columns (b[:, None]): broadcast on the wrong axis",
    [r"bias.{0,60}(axis|column|broadcast|row|shape)", r"\[:, ?None\]", r"unsqueeze", r"every row"],
)
def s03_bias_as_column(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T + (b_ih + b_hh)[:, None])


@wrong(
    "03.step_matrices",
    "computes W_ih @ x_t.T: returns the (hidden, batch) transpose of h_t",
    [r"transpos", r"\(hidden_size, batch\)", r"has shape", r"\.T"],
)
def s03_column_convention(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(W_ih @ x_t.T + b_ih[:, None] + W_hh @ h_prev.T + b_hh[:, None])


@wrong(
    "03.step_matrices",
    "elementwise * instead of @ for the input term",
    [r"element.?wise", r"matrix product", r"matmul", r"\* instead of @"],
)
def s03_elementwise(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh((x_t * W_ih).sum(-1) + b_ih + h_prev @ W_hh.T + b_hh)


@wrong("03.step_matrices", "no tanh", [r"tanh"])
def s03_no_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh


@wrong(
    "03.step_matrices",
    "x_t and h_prev swapped between the weights (x_t @ W_hh.T, h_prev @ W_ih.T)",
    [r"swap", r"exchang", r"x_t @ W_hh", r"h_prev @ W_ih", r"the other way"],
)
def s03_inputs_swapped(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(h_prev @ W_ih.T + b_ih + x_t @ W_hh.T + b_hh)


@wrong(
    "03.step_matrices",
    "uses only the batch's first row x_t[0] (right for a batch of one only)",
    [r"batch row", r"x_t\[0\]", r"first row", r"every row", r"row 0", r"sequence 0"],
)
def s03_first_row_only(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t[0] @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)


@wrong(
    "03.step_matrices",
    "reads the notebook's global layer `wide` for W_ih instead of the argument",
    [
        r"global",
        r"reads `?\w+`? from the notebook",
        r"not from its arguments",
        r"instead of (its|the) arguments?",
        r"outside (the|your) function",
    ],
)
def s03_reads_global_layer(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ wide.weight_ih_l0.T + b_ih + h_prev @ W_hh.T + b_hh)


# =============================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), one layer, both directions, time first
# =============================================================================================


def _run(input, h, W_ih, W_hh, b_ih, b_hh, steps):
    """States of one tanh run over the given steps, as computed (a list)."""
    states = []
    for t in steps:
        h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return states


def _weights(module, suffix):
    return (
        getattr(module, "weight_ih" + suffix),
        getattr(module, "weight_hh" + suffix),
        getattr(module, "bias_ih" + suffix),
        getattr(module, "bias_hh" + suffix),
    )


@wrong(
    "04.bidirectional",
    "backward run not reversed: the _reverse weights run from the first step to the last",
    [r"backward.{0,60}(revers|last step|first step|order)", r"not reversed", r"from the last step"],
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def s04_backward_not_reversed(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T))
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([fwd[-1], bwd[-1]])


@wrong(
    "04.bidirectional",
    "backward states left in computed order (not put back at their own time step)",
    [r"computed order", r"(flip|revers).{0,40}back", r"own time step", r"backward.{0,80}order", r"position t"],
    source="https://github.com/denizyuret/Knet.jl/pull/223",
)
def s04_backward_not_flipped_back(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([fwd[-1], bwd[-1]])


@wrong(
    "04.bidirectional",
    "halves swapped in output: [backward, forward]",
    [
        r"halves.{0,30}swap",
        r"swap.{0,40}halves",
        r"backward.{0,30}first",
        r"forward (half )?first",
        r"order of the halves",
        r"\[backward, ?forward\]",
        r"concatenated in the wrong order",
    ],
)
def s04_halves_swapped(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))[::-1]
    return torch.cat([torch.stack(bwd), torch.stack(fwd)], -1), torch.stack([fwd[-1], bwd[0]])


@wrong(
    "04.bidirectional",
    "h_n's backward row taken from output[-1] (the backward run's first step, not its end)",
    [r"h_n.{0,80}output\[-1\]", r"output\[-1\]", r"h_n\[1\]", r"backward.{0,60}(ends|end|first step|t = 0)"],
    source="https://discuss.pytorch.org/t/concatnation-of-h-t-of-forward-and-h-0-of-backward-in-bidirection-lstm-output/10333",
)
def s04_h_n_from_output_last(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))[::-1]
    output = torch.cat([torch.stack(fwd), torch.stack(bwd)], -1)
    return output, output[-1].view(B, 2, H).transpose(0, 1)


@wrong(
    "04.bidirectional",
    "backward run uses the forward weights (_l0 instead of _l0_reverse)",
    [r"_reverse", r"forward weights", r"backward.{0,40}weights"],
)
def s04_forward_weights_backward(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0"), range(T - 1, -1, -1))[::-1]
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([fwd[-1], bwd[0]])


@wrong(
    "04.bidirectional",
    "both directions start from hx[0] (the backward one should start from hx[1])",
    [r"hx\[1\]", r"row 1", r"h_0\[1\]", r"its own row", r"backward.{0,60}(start|initial)", r"h_0\[0\]"],
)
def s04_both_from_hx0(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[0], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))[::-1]
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([fwd[-1], bwd[0]])


@wrong("04.bidirectional", "hx ignored: both runs start from zeros", [r"h_0", r"\bhx\b", r"initial state"])
def s04_ignores_hx(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H)
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))[::-1]
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([fwd[-1], bwd[0]])


@wrong(
    "04.bidirectional",
    "h_n concatenated along features, shape (1, B, 2H), instead of stacked (2, B, H)",
    [r"h_n.{0,80}shape", r"\(2, ?batch", r"torch\.stack", r"num_directions"],
)
def s04_h_n_concatenated(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))[::-1]
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.cat([fwd[-1], bwd[0]], -1).unsqueeze(0)


@wrong(
    "04.bidirectional",
    "the backward run reverses the features (flip of the last dim) instead of time",
    [r"feature", r"flip.{0,40}(time|dim)", r"revers.{0,40}(time|feature)"],
)
def s04_flips_features(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input.flip(-1), h_0[1], *_weights(module, "_l0_reverse"), range(T))
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([fwd[-1], bwd[-1]])


@wrong(
    "04.bidirectional",
    "h_n rows in the wrong order: backward first",
    [r"h_n.{0,60}(order|swap|rows)", r"forward first", r"h_n\[0\]", r"row 0"],
)
def s04_h_n_rows_swapped(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    fwd = _run(input, h_0[0], *_weights(module, "_l0"), range(T))
    bwd = _run(input, h_0[1], *_weights(module, "_l0_reverse"), range(T - 1, -1, -1))[::-1]
    return torch.cat([torch.stack(fwd), torch.stack(bwd)], -1), torch.stack([bwd[0], fwd[-1]])


# =============================================================================================
# 05.stack: my_stack(module, input, hx=None), num_layers layers, one direction
# =============================================================================================


@wrong(
    "05.stack",
    "every layer reads the input x instead of the states of the layer below",
    [r"layer below", r"previous layer", r"reads the input", r"layer k ?- ?1", r"(each|every) layer.{0,30}input"],
)
def s05_every_layer_reads_input(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    finals, states = [], None
    for k in range(L):
        states = _run(input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        finals.append(states[-1])
    return torch.stack(states), torch.stack(finals)


@wrong(
    "05.stack",
    "layer 0's weights used for every layer",
    [r"_l0", r"layer 0", r"_l\{k\}", r"same weights", r"own weights"],
)
def s05_layer0_weights(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, "_l0"), range(input.shape[0]))
        layer_input = torch.stack(states)
        finals.append(states[-1])
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "every layer starts from hx[0]",
    [r"hx\[k\]", r"own row", r"row k", r"h_0\[k\]", r"hx\[0\]", r"h_0\[0\]"],
)
def s05_all_layers_from_hx0(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        states = _run(layer_input, h_0[0], *_weights(module, f"_l{k}"), range(input.shape[0]))
        layer_input = torch.stack(states)
        finals.append(states[-1])
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "h_n holds only the top layer: shape (1, B, H)",
    [r"h_n.{0,80}shape", r"every layer and direction", r"num_layers", r"top layer"],
    source="http://pullrequest.ru/10680779/poryadok-sloev-skrytyh-sostoyaniyah-pytorch-gru-return",
)
def s05_h_n_top_only(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input = input
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        layer_input = torch.stack(states)
    return layer_input, layer_input[-1].unsqueeze(0)


@wrong(
    "05.stack",
    "h_n's layers in reverse order (top layer first)",
    [
        r"h_n.{0,60}(order|revers)",
        r"layer 0 first",
        r"top.{0,20}first",
        r"revers",
        r"other rows",
        r"row 0 holds torch's row",
    ],
    source="http://pullrequest.ru/10680779/poryadok-sloev-skrytyh-sostoyaniyah-pytorch-gru-return",
)
def s05_h_n_reversed(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        layer_input = torch.stack(states)
        finals.insert(0, states[-1])
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "output is layer 0's states, not the top layer's",
    [r"top layer", r"last layer", r"layer 0.{0,40}output", r"output.{0,60}(top|last) layer"],
)
def s05_output_bottom_layer(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals, bottom = input, [], None
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        layer_input = torch.stack(states)
        bottom = layer_input if bottom is None else bottom
        finals.append(states[-1])
    return bottom, torch.stack(finals)


@wrong("05.stack", "hx ignored: every layer starts from zeros", [r"h_0", r"\bhx\b", r"initial state"])
def s05_ignores_hx(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H)
    layer_input, finals = input, []
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        layer_input = torch.stack(states)
        finals.append(states[-1])
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "layer k reads the state of the layer below one step late (h_{t-1} of layer k-1)",
    [r"one step (late|behind|early)", r"same (time )?step", r"previous step", r"t ?- ?1", r"shift"],
)
def s05_reads_below_one_step_late(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        finals.append(states[-1])
        layer_input = torch.stack([h_0[k]] + states[:-1])  # the state each step started from
    return torch.stack(states), torch.stack(finals)


@wrong(
    "05.stack",
    "h_n repeats the top layer's last state for every layer",
    [r"h_n\[0\]", r"h_n.{0,60}(layer|row|top)", r"other rows", r"final state of every layer"],
)
def s05_h_n_all_top(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input = input
    for k in range(L):
        states = _run(layer_input, h_0[k], *_weights(module, f"_l{k}"), range(input.shape[0]))
        layer_input = torch.stack(states)
    return layer_input, layer_input[-1].expand(L, B, H)


# =============================================================================================
# 06.top_h_n: top_h_n(output, hidden_size): (2, B, H) from a batch-first bidirectional output
# =============================================================================================


@wrong(
    "06.top_h_n",
    "indexes the output time first (output[-1]) though it is batch first",
    [r"batch.?first", r"time.{0,40}(second|index 1|dim 1)", r"output\[:, ?-1", r"first index"],
)
def s06_time_first_indexing(output, hidden_size):
    H = hidden_size
    return torch.stack([output[-1, :, :H], output[0, :, H:]])


@wrong(
    "06.top_h_n",
    "backward final taken at the last step (output[:, -1, H:]) instead of the first",
    [r"backward.{0,80}(first step|step 0|output\[:, ?0)", r"ends at"],
    source="https://github.com/yunjey/pytorch-tutorial/pull/174",
)
def s06_backward_from_last_step(output, hidden_size):
    return output[:, -1].reshape(-1, 2, hidden_size).transpose(0, 1)


@wrong(
    "06.top_h_n",
    "a view of the last step's (B, 2H) row into (2, B, H): mixes sequences",
    [r"\bview\b", r"reshape", r"mix", r"sequences"],
    source="https://discuss.pytorch.org/t/the-hidden-states-of-two-reverse-sequence-on-bilstm-mismatch/119521",
)
def s06_view_mixes_sequences(output, hidden_size):
    B = output.shape[0]
    return torch.stack([output[:, -1, :hidden_size], output[:, 0, hidden_size:]], dim=1).view(2, B, hidden_size)


@wrong(
    "06.top_h_n",
    "rows swapped: backward first",
    [r"swap", r"forward first", r"wrong order", r"in the order", r"order is", r"h_n\[-2\]"],
)
def s06_rows_swapped(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, H:], output[:, -1, :H]])


@wrong(
    "06.top_h_n",
    "forward final taken at the first step (output[:, 0, :H]) instead of the last",
    [r"forward.{0,80}(last step|output\[:, ?-1)", r"last step"],
)
def s06_forward_from_first_step(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "returns the concatenation (B, 2H) instead of stacking (2, B, H)",
    [r"has shape", r"torch\.stack", r"\(2, ?batch"],
)
def s06_concatenated(output, hidden_size):
    H = hidden_size
    return torch.cat([output[:, -1, :H], output[:, 0, H:]], dim=-1)


@wrong(
    "06.top_h_n",
    "takes hidden_size as 2H: splits the features at hidden_size // 2",
    [r"hidden_size", r"half", r"\bH\b.{0,30}columns", r"has shape"],
)
def s06_half_hidden_size(output, hidden_size):
    H = hidden_size // 2
    return torch.stack([output[:, -1, :H], output[:, 0, H : 2 * H]])


@wrong(
    "06.top_h_n",
    "backward final read from the forward half (output[:, 0, :H])",
    [r"half", r"H:", r"columns", r"backward half", r"second half"],
)
def s06_backward_wrong_half(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, -1, :H], output[:, 0, :H]])


# =============================================================================================
# 08.last_states: last_states(output (T, B, H), lengths (B,)) -> (B, H)
# =============================================================================================


@wrong(
    "08.last_states",
    "output[-1]: the padded last step, not each sequence's own last real step",
    [r"length", r"last real", r"padd", r"output\[-1\]"],
    source="https://stackoverflow.com/questions/51030782/why-do-we-pack-the-sequences-in-pytorch",
)
def s08_padded_last_step(output, lengths):
    return output[-1]


@wrong(
    "08.last_states",
    "output[lengths - 1] indexes time only: (B, B, H)",
    [r"\(B, ?B", r"pair", r"arange", r"batch index", r"each sequence needs", r"has shape"],
)
def s08_time_index_only(output, lengths):
    return output[lengths - 1]


@wrong(
    "08.last_states",
    "off by one: output[lengths, arange(B)] (one step after the last real one)",
    [r"off.by.one", r"lengths ?- ?1", r"one step (late|after|too far)", r"index.{0,30}out of"],
)
def s08_off_by_one(output, lengths):
    B = output.shape[1]
    return output[lengths, torch.arange(B)]


@wrong(
    "08.last_states",
    "batch-first indexing output[arange(B), lengths - 1] on a time-first output",
    [r"time.?first", r"batch.?first", r"change places", r"order of the ind"],
)
def s08_batch_first_indexing(output, lengths):
    B = output.shape[1]
    return output.transpose(0, 1)[lengths - 1, torch.arange(B)]


@wrong(
    "08.last_states",
    "sorts the lengths first: rows come back in sorted, not the given, order",
    [r"sort", r"sorted order", r"given order", r"original order", r"shuffl"],
)
def s08_sorted_lengths(output, lengths):
    sorted_lengths, _ = torch.sort(lengths, descending=True)
    return output[sorted_lengths - 1, torch.arange(output.shape[1])]


@wrong(
    "08.last_states", "changes its argument in place (lengths -= 1)", [r"in place", r"changes its argument", r"lengths"]
)
def s08_changes_lengths_in_place(output, lengths):
    lengths -= 1
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "uses the longest length for every sequence (lengths.max() - 1)",
    [r"max", r"each sequence", r"own length", r"longest"],
)
def s08_max_length(output, lengths):
    return output[int(lengths.max()) - 1]


@wrong("08.last_states", "mean over the real steps instead of the last one", [r"mean", r"average", r"\bsum\b", r"pool"])
def s08_mean_pooling(output, lengths):
    T = output.shape[0]
    real = (torch.arange(T)[:, None] < lengths[None, :]).unsqueeze(-1)
    return (output * real).sum(0) / lengths[:, None]


# =============================================================================================
# 10.step: lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh) -> (h_t, c_t), gates i, f, g, o
# =============================================================================================


@wrong(
    "10.step",
    "gates read in CS231n's order i, f, o, g",
    [r"wrong order", r"in the order", r"order is", r"i, ?f, ?o, ?g", r"ifog", r"chunk"],
)
def s10_order_ifog(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_o, a_g = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "gates read forget gate first: f, i, g, o",
    [r"wrong order", r"in the order", r"order is", r"f, ?i", r"chunk", r"swap"],
)
def s10_order_figo(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_f, a_i, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "sigmoid on the candidate g (should be tanh)",
    [r"\bg\b.{0,40}(tanh|sigmoid)", r"candidate.{0,40}(tanh|sigmoid)", r"(tanh|sigmoid).{0,40}candidate"],
)
def s10_g_sigmoid(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = torch.sigmoid(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)
    i, f, g, o = gates.chunk(4, dim=-1)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong("10.step", "h_t = o * c_t (no tanh on the cell)", [r"tanh\(c", r"tanh of (the )?c", r"tanh.{0,30}cell"])
def s10_h_no_tanh(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * c_t, c_t


@wrong(
    "10.step",
    "h_t from the old cell: o * tanh(c_prev), computed before c_t",
    [r"c_prev", r"old cell", r"c_\{?t ?- ?1", r"new cell", r"before.{0,30}c_t"],
)
def s10_h_from_old_cell(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    h_t = o * torch.tanh(c_prev)
    c_t = f * c_prev + i * g
    return h_t, c_t


@wrong(
    "10.step",
    "returns (c_t, h_t): the pair in the wrong order",
    [
        r"(h_t|c_t).{0,40}swap",
        r"wrong order",
        r"in the order",
        r"order is",
        r"h_t.{0,30}first",
        r"\(c_t, ?h_t\)",
        r"\(h_t, ?c_t\)",
    ],
    source="https://forums.developer.nvidia.com/t/ford-pass-using-weights-of-tf-compat-v1-keras-layers-cudnnlstm/110569",
)
def s10_returns_c_h(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return c_t, o * torch.tanh(c_t)


@wrong(
    "10.step",
    "TensorFlow's forget_bias=1.0 added to the forget gate",
    [r"forget.{0,40}bias", r"\+ ?1", r"bias.{0,40}forget"],
    source="https://chadrick-kwag.net/posts/reasons-why-forget-bias-initialized-to-1-is-good-practice-in-lstm",
)
def s10_forget_bias_one(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f + 1.0), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong("10.step", "b_hh left out", [r"b_hh"])
def s10_no_b_hh(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step", "input gate left out: c_t = f * c_prev + g", [r"input gate", r"i \* g", r"\bi_t\b", r"\bi\b.{0,20}\bg\b"]
)
def s10_no_input_gate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    f, g, o = torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "forget and input gates exchanged in the cell update: c_t = i * c_prev + f * g",
    [r"swap", r"exchang", r"forget.{0,60}input", r"input.{0,60}forget", r"f \* c_prev"],
)
def s10_f_i_exchanged(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = i * c_prev + f * g
    return o * torch.tanh(c_t), c_t


@wrong("10.step", "W_hh not transposed", [r"W_hh.{0,40}transpos", r"how W_hh enters", r"transpos.{0,40}W_hh"])
def s10_whh_not_transposed(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "pre-activations chunked along the batch (dim 0) instead of the gate axis",
    [r"(dim|axis) ?0", r"along the batch", r"default dim", r"first dimension", r"batch dimension"],
)
def s10_chunk_dim0(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4)  # dim=0: the batch
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


# =============================================================================================
# 11.step: gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) -> h_t, blocks r, z, n
# =============================================================================================


def _gru_parts(W_ih, W_hh, b_ih, b_hh):
    return W_ih.chunk(3), W_hh.chunk(3), b_ih.chunk(3), b_hh.chunk(3)


@wrong(
    "11.step",
    "z weights the candidate: h_t = z * n + (1 - z) * h_prev (the textbook convention)",
    [r"\bz\b.{0,60}(candidate|\bn\b|old state|h_prev|convention)", r"1 ?- ?z", r"update gate", r"convention"],
    source="https://devhide.com/gru-pytorch-keras-and-formula-in-wiki-are-different-64031287",
)
def s11_z_on_candidate(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return z * n + (1 - z) * h_prev


@wrong(
    "11.step",
    "reset before the product: (r * h_prev) @ W_hn.T + b_hn (TensorFlow's original GRU)",
    [r"reset.{0,40}(before|after)", r"before the product", r"r \* h_prev", r"\(r \* h"],
    source="https://discuss.pytorch.org/t/grucell-is-different-in-pytorch-and-tensorflow/6630",
)
def s11_reset_before_product(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "b_hn added outside the reset gate: r * (h W_hn^T) + b_hn",
    [r"b_hn", r"bias.{0,40}(inside|outside|reset)"],
    source="https://discuss.pytorch.org/t/why-does-my-custom-gru-doesnt-match-pytorch-gru-implementation/169837",
)
def s11_b_hn_outside(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T) + b_hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "blocks read in Keras's order z, r, n",
    [r"wrong order", r"in the order", r"order is", r"z, ?r", r"r, ?z", r"block", r"chunk"],
)
def s11_order_zrn(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_iz, W_ir, W_in), (W_hz, W_hr, W_hn), (b_iz, b_ir, b_in), (b_hz, b_hr, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "sigmoid on the candidate n (should be tanh)",
    [r"\bn\b.{0,40}(tanh|sigmoid)", r"candidate.{0,40}(tanh|sigmoid)", r"(tanh|sigmoid).{0,40}candidate"],
)
def s11_n_sigmoid(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.sigmoid(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong("11.step", "no reset gate: n = tanh(x W_in^T + b_in + h W_hn^T + b_hn)", [r"reset", r"\br\b"])
def s11_no_reset(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + h_prev @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev


@wrong("11.step", "no update gate: returns the candidate n", [r"update", r"\bz\b", r"h_prev"])
def s11_returns_candidate(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    return torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))


@wrong("11.step", "W_hh blocks not transposed", [r"W_h.{0,40}transpos", r"how W_hh enters", r"transpos"])
def s11_whh_not_transposed(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), (b_hr, b_hz, b_hn) = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn + b_hn))
    return (1 - z) * n + z * h_prev


@wrong("11.step", "b_hh left out entirely", [r"b_hh", r"b_h[rzn]"])
def s11_no_b_hh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    (W_ir, W_iz, W_in), (W_hr, W_hz, W_hn), (b_ir, b_iz, b_in), _ = _gru_parts(W_ih, W_hh, b_ih, b_hh)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "weights chunked by columns (dim=1) instead of rows",
    [r"column", r"dim ?= ?1", r"dim 1", r"by rows", r"(its|the) rows"],
)
def s11_chunk_columns(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3, dim=1)
    W_hr, W_hz, W_hn = W_hh.chunk(3, dim=1)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


# =============================================================================================
# 12.bptt_step: bptt_step(delta_t, h_t, W_hh) -> delta_{t-1}
# =============================================================================================


@wrong("12.bptt_step", "multiplies by W_hh.T instead of W_hh", [r"W_hh\.T", r"transpos"])
def s12_whh_transposed(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)) @ W_hh.T


@wrong(
    "12.bptt_step",
    "slope 1 - tanh(h_t)^2: tanh applied again to h_t, which is already tanh(a_t)",
    [r"tanh\(h_t\)", r"already", r"slope", r"1 ?- ?h_t\s*(\*\*|\^) ?2"],
)
def s12_tanh_again(delta_t, h_t, W_hh):
    return (delta_t * (1 - torch.tanh(h_t) ** 2)) @ W_hh


@wrong("12.bptt_step", "tanh's slope left out: delta_t @ W_hh", [r"slope", r"1 ?- ?h_t", r"derivative", r"tanh'"])
def s12_no_slope(delta_t, h_t, W_hh):
    return delta_t @ W_hh


@wrong(
    "12.bptt_step",
    "slope applied after the product: (delta_t @ W_hh) * (1 - h_t^2)",
    [r"after", r"before", r"wrong order", r"in the order", r"order is", r"slope.{0,60}(first|then)"],
)
def s12_slope_after_product(delta_t, h_t, W_hh):
    return (delta_t @ W_hh) * (1 - h_t**2)


@wrong("12.bptt_step", "slope 1 - h_t, not squared", [r"squar", r"\*\*2", r"\^2", r"1 ?- ?h_t"])
def s12_slope_not_squared(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t)) @ W_hh


@wrong("12.bptt_step", "sigmoid's slope h_t * (1 - h_t) instead of tanh's", [r"sigmoid", r"1 ?- ?h_t", r"slope"])
def s12_sigmoid_slope(delta_t, h_t, W_hh):
    return (delta_t * h_t * (1 - h_t)) @ W_hh


@wrong(
    "12.bptt_step",
    "stops at the slope: delta_t * (1 - h_t^2), never multiplied by W_hh",
    [r"W_hh", r"product", r"matrix"],
)
def s12_no_product(delta_t, h_t, W_hh):
    return delta_t * (1 - h_t**2)


@wrong(
    "12.bptt_step", "elementwise * W_hh instead of a matrix product", [r"element.?wise", r"matrix product", r"matmul"]
)
def s12_elementwise(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)) * W_hh


# =============================================================================================
# 13.tag_loss: tag_loss(scores (B, T, C), tags (B, T), lengths (B,)) -> mean CE over real characters
# =============================================================================================


@wrong(
    "13.tag_loss",
    "cross-entropy over every position, padding included",
    [r"padd", r"mask", r"real (characters|positions|steps)"],
)
def s13_includes_padding(scores, tags, lengths):
    return nn.functional.cross_entropy(scores.reshape(-1, scores.shape[-1]), tags.reshape(-1))


@wrong(
    "13.tag_loss",
    "mask built from the tags (tags != 0), but 0 is a real tag too",
    [r"tags", r"from the lengths", r"mask.{0,60}length", r"tag 0"],
)
def s13_mask_from_tags(scores, tags, lengths):
    is_real = tags != 0
    return nn.functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "mean of per-sequence means: every text weighs the same, not every character",
    [r"per.?(sequence|text)", r"mean of (the )?means", r"each (text|sequence).{0,30}(weigh|same)", r"weigh"],
    source="https://discuss.pytorch.org/t/loss-of-bert-mask-language-modeling-and-next-sentence-prediction/113889",
)
def s13_mean_of_means(scores, tags, lengths):
    losses = [nn.functional.cross_entropy(scores[b, :n], tags[b, :n]) for b, n in enumerate(lengths.tolist())]
    return torch.stack(losses).mean()


@wrong(
    "13.tag_loss",
    "cross_entropy on (B, T, C) without moving classes to dim 1",
    [r"\(B, ?C, ?T\)", r"class.{0,40}dim", r"transpos", r"permute", r"dimension 1"],
    source="https://whosebug.com/question/6539086/How-to-compute-Cross-Entropy-Loss-for-sequences",
)
def s13_classes_not_dim1(scores, tags, lengths):
    T = scores.shape[1]
    is_real = torch.arange(T) < lengths[:, None]
    per_char = nn.functional.cross_entropy(scores, tags, reduction="none")
    return per_char[is_real].mean()


@wrong(
    "13.tag_loss", "mask with <= : counts one padding step per text", [r"<=", r"off.by.one", r"one (extra|more)", r"<"]
)
def s13_mask_off_by_one(scores, tags, lengths):
    T = scores.shape[1]
    is_real = torch.arange(T) <= lengths[:, None]
    return nn.functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss", "sum over the real characters instead of the mean", [r"\bsum\b", r"mean", r"divide", r"number of"]
)
def s13_sum(scores, tags, lengths):
    T = scores.shape[1]
    is_real = torch.arange(T) < lengths[:, None]
    return nn.functional.cross_entropy(scores[is_real], tags[is_real], reduction="sum")


@wrong(
    "13.tag_loss",
    "mask built time first, (T, B), and transposed back with a reshape",
    [r"reshape", r"\(T, ?B\)", r"transpos", r"time.?first"],
)
def s13_mask_reshaped(scores, tags, lengths):
    B, T = tags.shape
    is_real = (torch.arange(T)[:, None] < lengths[None, :]).reshape(B, T)
    return nn.functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "writes -100 into the caller's tags in place: right value, argument changed",
    [r"in place", r"changes its argument", r"argument"],
)
def s13_writes_into_tags(scores, tags, lengths):
    T = scores.shape[1]
    tags[torch.arange(T) >= lengths[:, None]] = -100
    return nn.functional.cross_entropy(scores.transpose(1, 2), tags)


@wrong("13.tag_loss", "softmax then nll_loss: the log is missing", [r"\blog", r"softmax", r"nll"])
def s13_softmax_no_log(scores, tags, lengths):
    T = scores.shape[1]
    is_real = torch.arange(T) < lengths[:, None]
    return nn.functional.nll_loss(scores[is_real].softmax(-1), tags[is_real])


@wrong(
    "13.tag_loss",
    "masked sum divided by every position (B*T), padding included in the count",
    [r"divide", r"count", r"number of", r"numel", r"padd"],
    source="https://example-a.com/answer/66526823",
)
def s13_divides_by_all(scores, tags, lengths):
    T = scores.shape[1]
    is_real = torch.arange(T) < lengths[:, None]
    per_char = nn.functional.cross_entropy(scores.transpose(1, 2), tags, reduction="none")
    return (per_char * is_real).sum() / is_real.numel()


# =============================================================================================
# diagnose(fn, module, input, hx): a whole layer of the student's own, on varied layers
# =============================================================================================

NAMES_HX = [r"h_0", r"\bhx\b", r"initial state"]
NAMES_GRAD = [r"gradient", r"detach", r"no_grad", r"autograd", r"\.data"]


# --- RNN -------------------------------------------------------------------------------------


@wrong(
    case("RNN", 4, 4),
    "W_hh not transposed (square weights: no error)",
    [r"W_hh.{0,40}transpos", r"how W_hh enters", r"transpos.{0,40}W_hh"],
)
def d_rnn_whh_not_transposed(module, input, hx=None):
    return _layer(module, input, hx, whh_no_t=True)


@wrong(
    case("RNN", 3, 5, nonlinearity="relu"),
    "tanh hard-coded: the layer's nonlinearity is relu",
    [r"relu", r"nonlinearity"],
)
def d_rnn_relu_layer_as_tanh(module, input, hx=None):
    return _layer(module, input, hx, always_tanh=True)


@wrong(
    case("RNN", 3, 4, bias=False),
    "reads bias_ih_l0 / bias_hh_l0 on a layer built with bias=False",
    [r"bias=False", r"no bias", r"without bias", r"bias_ih_l0", r"module\.bias"],
)
def d_rnn_assumes_bias(module, input, hx=None):
    return _layer(module, input, hx, assume_bias=True)


@wrong(
    case("RNN", 4, 4, 2),
    "layer 1 reads the input x instead of layer 0's states (input_size = hidden_size: no error)",
    [
        r"layer below",
        r"previous layer",
        r"reads the input",
        r"layer 0'?s? (states|output)",
        r"layer k ?- ?1",
        r"(each|every|upper) layer.{0,40}input",
    ],
)
def d_rnn_layers_read_input(module, input, hx=None):
    return _layer(module, input, hx, layers_read_input=True)


@wrong(
    case("RNN", 3, 4, 3, hx=True),
    "every layer starts from hx[0]",
    [r"hx\[k\]", r"own row", r"row k", r"h_0\[k\]", r"hx\[0\]", r"h_0\[0\]"],
)
def d_rnn3_all_layers_from_hx0(module, input, hx=None):
    return _layer(module, input, hx, hx_row0=True)


@wrong(
    case("RNN", 3, 4, 2),
    "h_n's layers in reverse order (top first)",
    [
        r"h_n.{0,60}(order|revers)",
        r"layer 0 first",
        r"top.{0,20}first",
        r"revers",
        r"other rows",
        r"row 0 holds torch's row",
    ],
    source="http://pullrequest.ru/10680779/poryadok-sloev-skrytyh-sostoyaniyah-pytorch-gru-return",
)
def d_rnn2_h_n_layers_reversed(module, input, hx=None):
    return _layer(module, input, hx, h_n_layers_reversed=True)


@wrong(
    case("RNN", 3, 4, bidirectional=True),
    "backward run not reversed (runs first step to last)",
    [r"backward.{0,60}(revers|last step|first step|order)", r"not reversed", r"from the last step"],
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def d_rnn_bi_backward_not_reversed(module, input, hx=None):
    return _layer(module, input, hx, backward_not_reversed=True)


@wrong(
    case("RNN", 2, 3, bidirectional=True, hx=True),
    "backward states left in computed order",
    [r"computed order", r"(flip|revers).{0,40}back", r"own time step", r"backward.{0,80}order", r"position t"],
    source="https://github.com/denizyuret/Knet.jl/pull/223",
)
def d_rnn_bi_not_flipped_back(module, input, hx=None):
    return _layer(module, input, hx, backward_not_flipped_back=True)


@wrong(
    case("RNN", 3, 4, bidirectional=True, batch_first=True),
    "output halves swapped: [backward, forward]",
    [
        r"halves.{0,30}swap",
        r"swap.{0,40}halves",
        r"backward.{0,30}first",
        r"forward (half )?first",
        r"order of the halves",
        r"\[backward, ?forward\]",
        r"concatenated in the wrong order",
    ],
)
def d_rnn_bi_halves_swapped(module, input, hx=None):
    return _layer(module, input, hx, halves_swapped=True)


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True),
    "h_n rows direction-major (l0 fwd, l1 fwd, l0 bwd, l1 bwd) instead of layer-major",
    [r"h_n.{0,80}(order|rows)", r"layer.?major", r"direction.?major", r"layer \* num_directions", r"l0.{0,20}reverse"],
    source="https://github.com/OpenNMT/OpenNMT-py/issues/61",
)
def d_rnn_bi2_h_n_direction_major(module, input, hx=None):
    return _layer(module, input, hx, h_n_direction_major=True)


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True),
    "layer 1 reads layer 0's halves swapped ([backward, forward])",
    [r"halves.{0,40}(swap|order)", r"\[backward, ?forward\]", r"layer 1.{0,60}(read|input)"],
)
def d_rnn_bi2_next_layer_halves_swapped(module, input, hx=None):
    return _layer(module, input, hx, next_layer_halves_swapped=True)


@wrong(
    case("RNN", 3, 4, batch_first=True),
    "batch_first ignored: loops over the batch as if it were time",
    [r"batch.?first"],
)
def d_rnn_batch_first_ignored(module, input, hx=None):
    return _layer(module, input, hx, batch_first_ignored=True)


@wrong(
    case("RNN", 3, 4, batch_first=True),
    "batch_first handled with reshape instead of transpose (mixes sequences)",
    [r"reshape", r"\bview\b", r"transpose", r"permute", r"batch.?first"],
    source="https://discuss.pytorch.org/t/the-hidden-states-of-two-reverse-sequence-on-bilstm-mismatch/119521",
)
def d_rnn_batch_first_reshape(module, input, hx=None):
    return _layer(module, input, hx, batch_first_reshape=True)


@wrong(
    case("RNN", 3, 4, 2, batch_first=True),
    "h_n made batch first too (batch_first does not apply to h_n)",
    [r"h_n.{0,80}(batch.?first|shape)", r"batch_first does not", r"not (to )?h_n"],
)
def d_rnn_h_n_batch_first(module, input, hx=None):
    return _layer(module, input, hx, h_n_batch_first=True)


@wrong(
    case("RNN", 3, 4, lengths=[5, 3, 2]),
    "packed: lengths ignored, the state runs on through the padding",
    [r"length", r"padd", r"last real"],
    source="https://stackoverflow.com/questions/51030782/why-do-we-pack-the-sequences-in-pytorch",
)
def d_rnn_packed_ignores_lengths(module, input, hx=None):
    return _layer(module, input, hx, ignore_lengths=True)


@wrong(
    case("RNN", 3, 4, bidirectional=True, lengths=[5, 2, 4]),
    "packed, bidirectional: the backward run starts at the padded end, not each sequence's last real step",
    [r"backward.{0,80}(padd|length|last real)", r"padd.{0,80}backward", r"revers.{0,60}padd"],
    source="https://github.com/pytorch/pytorch/issues/1811",
)
def d_rnn_packed_bi_backward_from_padding(module, input, hx=None):
    return _layer(module, input, hx, backward_from_padding=True)


@wrong(
    case("RNN", 3, 4, lengths=[2, 5, 3]),
    "packed: h_n left in sorted (longest first) order, not the caller's",
    [r"sort", r"unsorted_indices", r"original (batch )?order", r"caller's order"],
)
def d_rnn_packed_h_n_sorted_order(module, input, hx=None):
    return _layer(module, input, hx, h_n_sorted_order=True)


@wrong(
    case("RNN", 3, 4, lengths=[5, 3, 2], enforce_sorted=True),
    "packed input, but returns a padded tensor instead of a PackedSequence",
    [r"PackedSequence", r"pack"],
)
def d_rnn_packed_returns_padded(module, input, hx=None):
    return _layer(module, input, hx, return_padded=True)


@wrong(case("RNN", 3, 4, hx=True), "hx ignored: starts from zeros", NAMES_HX)
def d_rnn_ignores_hx(module, input, hx=None):
    return _layer(module, input, hx, ignore_hx=True)


@wrong(
    case("RNN", 3, 4),
    "state detached at each step: right values, no gradient through time",
    NAMES_GRAD,
    source="https://www.codegenes.net/blog/how-to-use-detach-in-hidden-state-loss-backward-pytorch",
)
def d_rnn_detach_each_step(module, input, hx=None):
    return _layer(module, input, hx, detach=True)


@wrong(case("RNN", 3, 4, 2), "weights read through .data: right values, no gradient for the parameters", NAMES_GRAD)
def d_rnn2_data_weights(module, input, hx=None):
    return _layer(module, input, hx, data_weights=True)


@wrong(case("RNN", 3, 4), "h_0 made float64: the whole result comes out float64", [r"float64", r"dtype", r"double"])
def d_rnn_float64_state(module, input, hx=None):
    return _layer(module, input, hx, float64_state=True)


@wrong(
    case("RNN", 3, 4),
    "every step written into one buffer with copy_: output rows alias the last state",
    [r"alias", r"same tensor", r"in.?place", r"copy_", r"buffer", r"clone", r"modified by an inplace"],
)
def d_rnn_output_alias_buffer(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0].clone()
    outputs = []
    for x_t in input:
        h.copy_(torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh))
        outputs.append(h)
    return torch.stack(outputs), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4),
    "merges b_hh into the layer's bias_ih_l0 in place (+=), then uses b_ih alone: changes the layer",
    [r"in.?place", r"changes the layer", r"parameter", r"bias_ih_l0"],
)
def d_rnn_merges_biases_in_place(module, input, hx=None):
    with torch.no_grad():
        module.bias_ih_l0 += module.bias_hh_l0  # the two biases act as one (notebook 02)
    W_ih, W_hh, b = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    outputs = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + h @ W_hh.T + b)
        outputs.append(h)
    return torch.stack(outputs), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, publish=True),
    "reads the notebook's global layer instead of its `module` argument",
    [
        r"global",
        r"reads `?\w+`? from the notebook",
        r"not from its arguments",
        r"instead of (its|the) arguments?",
        r"outside (the|your) function",
    ],
)
def d_rnn_reads_global_layer(module, input, hx=None):
    layer = NOTEBOOK_LAYER
    W_ih, W_hh, b_ih, b_hh = layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0, layer.bias_hh_l0
    h = torch.zeros(input.shape[1], layer.hidden_size) if hx is None else hx[0]
    outputs = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        outputs.append(h)
    return torch.stack(outputs), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, batch=1),
    "h_n reshaped to (1, 1, batch*hidden): right for a batch of one only (the student's own input has one)",
    [r"h_n.{0,80}shape", r"batch of one", r"reshape|view"],
)
def d_rnn_h_n_batch_of_one(module, input, hx=None):
    return _layer(module, input, hx, h_n_batch_one=True)


@wrong(case("RNN", 3, 4, hx=True), "prints every step's state (many lines), and ignores hx", NAMES_HX)
def d_rnn_prints_and_ignores_hx(module, input, hx=None):
    return _layer(module, input, hx, prints=True, ignore_hx=True)


@wrong(
    case("RNN", 3, 4),
    "right values but sleeps 0.25 s a step: too slow for the check's time",
    [r"stopped", r"seconds", r"slow", r"time limit", r"ran out"],
)
def d_rnn_sleeps(module, input, hx=None):
    return _layer(module, input, hx, sleep=0.25)


@wrong(
    case("RNN", 3, 4),
    "endless loop: `t + 1` where `t += 1` was meant",
    [r"stopped", r"loop", r"never ends", r"seconds", r"ran out"],
)
def d_rnn_endless_loop(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    T = input.shape[0]
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states, t = [None] * T, 0
    while t < T:
        h_next = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states[t] = h_next
        t + 1  # noqa: B018 -- meant t += 1 (and h = h_next)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    case("RNN", 4, 4, 3),
    "layer 0's weights used for every layer (input_size = hidden_size: no error)",
    [r"_l0", r"layer 0", r"_l\{k\}", r"same weights", r"own weights"],
)
def d_rnn3_layer0_weights(module, input, hx=None):
    return _layer(module, input, hx, layer0_weights=True)


@wrong(
    case("RNN", 3, 4),
    "computes each step in float16 and converts back: close, but not float32's values",
    [r"float16", r"half", r"precision", r"round"],
)
def d_rnn_half_precision(module, input, hx=None):
    return _layer(module, input, hx, half=True)


@wrong(
    case("RNN", 3, 4, 2),
    "output stores each step's state before the update (one step late)",
    [
        r"before.{0,30}(update|step)",
        r"previous state",
        r"h_\{?t ?- ?1\}?",
        r"one step (late|behind|early)",
        r"shift",
        r"h_prev",
    ],
)
def d_rnn2_output_one_step_late(module, input, hx=None):
    return _layer(module, input, hx, output_prev=True)


@wrong(case("RNN", 3, 4, batch_first=True), "b_ih added twice, b_hh never", [r"twice", r"b_ih.{0,30}b_ih", r"b_hh"])
def d_rnn_bias_twice(module, input, hx=None):
    return _layer(module, input, hx, bias_twice=True, no_bhh=True)


# --- LSTM ------------------------------------------------------------------------------------


@wrong(
    case("LSTM", 3, 4),
    "gates read in the order i, f, o, g",
    [r"wrong order", r"in the order", r"order is", r"i, ?f, ?o, ?g", r"ifog", r"chunk"],
)
def d_lstm_order_ifog(module, input, hx=None):
    return _layer(module, input, hx, gate_order="ifog")


@wrong(
    case("LSTM", 3, 4, 2),
    "forget_bias=1.0 added to the forget gate",
    [r"forget.{0,40}bias", r"\+ ?1", r"bias.{0,40}forget"],
    source="https://chadrick-kwag.net/posts/reasons-why-forget-bias-initialized-to-1-is-good-practice-in-lstm",
)
def d_lstm2_forget_bias(module, input, hx=None):
    return _layer(module, input, hx, forget_bias=1.0)


@wrong(
    case("LSTM", 3, 4, hx=True),
    "c_0 ignored: the cell starts from zeros even when hx gives one",
    [r"c_0", r"cell.{0,40}(start|initial)", r"hx\[1\]"],
)
def d_lstm_ignores_c0(module, input, hx=None):
    return _layer(module, input, hx, zero_c0=True)


@wrong(
    case("LSTM", 3, 4, hx=True),
    "hx unpacked as (c_0, h_0): the pair read in the wrong order",
    [r"\(h_0, ?c_0\)", r"hx.{0,40}(order|swap)", r"c_0.{0,40}h_0", r"h_0.{0,40}c_0"],
)
def d_lstm_hx_unpacked_swapped(module, input, hx=None):
    return _layer(module, input, hx, hx_swapped=True)


@wrong(
    case("LSTM", 3, 4),
    "returns (c_n, h_n) instead of (h_n, c_n)",
    [r"(h_n|c_n).{0,40}swap", r"c_n.{0,60}h_n", r"h_n.{0,60}c_n"],
    source="https://forums.developer.nvidia.com/t/ford-pass-using-weights-of-tf-compat-v1-keras-layers-cudnnlstm/110569",
)
def d_lstm_returns_c_h(module, input, hx=None):
    return _layer(module, input, hx, h_c_swapped=True)


@wrong(
    case("LSTM", 3, 4, bidirectional=True),
    "h_t = o * c_t (no tanh on the cell)",
    [r"tanh\(c", r"tanh of (the )?c", r"tanh.{0,30}cell"],
)
def d_lstm_bi_h_no_tanh(module, input, hx=None):
    return _layer(module, input, hx, h_no_tanh=True)


@wrong(
    case("LSTM", 3, 4),
    "h_t from the old cell: o * tanh(c_{t-1})",
    [r"c_prev", r"old cell", r"c_\{?t ?- ?1", r"new cell", r"before.{0,30}c_t"],
)
def d_lstm_h_from_old_cell(module, input, hx=None):
    return _layer(module, input, hx, h_old_c=True)


@wrong(
    case("LSTM", 3, 4),
    "returns (output, h_n, c_n), a flat triple, instead of (output, (h_n, c_n))",
    [r"tuple of 3", r"returns a pair", r"three", r"flat"],
)
def d_lstm_flat_triple(module, input, hx=None):
    return _layer(module, input, hx, flat_triple=True)


@wrong(
    case("LSTM", 3, 4, 2),
    "layer 1's cell starts from layer 0's final cell instead of its own c_0 row",
    [r"c_0", r"layer 1.{0,60}(start|initial|cell)", r"own row", r"cell.{0,40}(start|initial)"],
)
def d_lstm2_carries_cell_up(module, input, hx=None):
    return _layer(module, input, hx, carry_c_up=True)


@wrong(
    case("LSTM", 3, 4, bidirectional=True),
    "backward run starts from the forward run's final (h, c), not from h_0[1]",
    [r"backward.{0,60}(start|initial|h_0|from)", r"row 1", r"h_0\[1\]", r"hx\[1\]"],
)
def d_lstm_bi_backward_from_forward_end(module, input, hx=None):
    return _layer(module, input, hx, backward_from_forward=True)


@wrong(
    case("LSTM", 3, 4, hx=True, lengths=[4, 5, 2]),
    "packed: lengths ignored (h_n, c_n from the padded end)",
    [r"length", r"padd", r"last real"],
)
def d_lstm_packed_ignores_lengths(module, input, hx=None):
    return _layer(module, input, hx, ignore_lengths=True)


@wrong(
    case("LSTM", 3, 4, batch_first=True, hx=True),
    "batch_first handled with reshape instead of transpose",
    [r"reshape", r"\bview\b", r"transpose", r"permute", r"batch.?first"],
    source="https://discuss.pytorch.org/t/the-hidden-states-of-two-reverse-sequence-on-bilstm-mismatch/119521",
)
def d_lstm_batch_first_reshape(module, input, hx=None):
    return _layer(module, input, hx, batch_first_reshape=True)


@wrong(case("LSTM", 3, 4), "cell detached at every step: right values, gradients cut through c", NAMES_GRAD)
def d_lstm_detach_cell(module, input, hx=None):
    return _layer(module, input, hx, detach_c=True)


@wrong(
    case("LSTM", 3, 4, 2, batch_first=True),
    "sigmoid on the candidate g",
    [r"\bg\b.{0,40}(tanh|sigmoid)", r"candidate.{0,40}(tanh|sigmoid)", r"(tanh|sigmoid).{0,40}candidate"],
)
def d_lstm2_g_sigmoid(module, input, hx=None):
    return _layer(module, input, hx, g_sigmoid=True)


@wrong(
    case("LSTM", 3, 4),
    "c_n returned as tanh(c_T) instead of c_T",
    [r"c_n does not", r"c_n.{0,40}(tanh|cell)", r"final cell state"],
)
def d_lstm_c_n_tanh(module, input, hx=None):
    return _layer(module, input, hx, c_n_tanh=True)


@wrong(
    case("LSTM", 3, 4, 3, bidirectional=True, lengths=[5, 3, 4]),
    "packed, 3 layers, bidirectional: h_n and c_n rows direction-major instead of layer-major",
    [r"h_n.{0,80}(order|rows)", r"layer.?major", r"direction.?major", r"layer \* num_directions"],
    source="https://github.com/yzhangcs/parser/issues/48",
)
def d_lstm3_bi_packed_direction_major(module, input, hx=None):
    return _layer(module, input, hx, h_n_direction_major=True)


@wrong(case("LSTM", 3, 4), "everything under torch.no_grad(): right values, no gradient", NAMES_GRAD)
def d_lstm_no_grad(module, input, hx=None):
    return _layer(module, input, hx, no_grad=True)


@wrong(case("LSTM", 3, 4, bidirectional=True, hx=True), "b_hh left out", [r"b_hh", r"bias_hh"])
def d_lstm_bi_no_b_hh(module, input, hx=None):
    return _layer(module, input, hx, no_bhh=True)


@wrong(
    case("LSTM", 3, 4, bidirectional=True),
    "h_n's backward row taken from output[-1] (c_n right)",
    [r"h_n.{0,80}output\[-1\]", r"output\[-1\]", r"h_n\[1\]", r"backward.{0,60}(ends|end|first step|t = 0)"],
    source="https://discuss.pytorch.org/t/concatnation-of-h-t-of-forward-and-h-0-of-backward-in-bidirection-lstm-output/10333",
)
def d_lstm_bi_h_n_from_output_last(module, input, hx=None):
    return _layer(module, input, hx, h_n_backward_from_last_step=True)


# --- GRU -------------------------------------------------------------------------------------


@wrong(
    case("GRU", 3, 4),
    "z weights the candidate: h = z * n + (1 - z) * h_prev",
    [r"\bz\b.{0,60}(candidate|\bn\b|old state|h_prev|convention)", r"1 ?- ?z", r"update gate", r"convention"],
    source="https://devhide.com/gru-pytorch-keras-and-formula-in-wiki-are-different-64031287",
)
def d_gru_z_on_candidate(module, input, hx=None):
    return _layer(module, input, hx, z_on_candidate=True)


@wrong(
    case("GRU", 3, 4, 2),
    "reset before the product: (r * h) @ W_hn.T",
    [r"reset.{0,40}(before|after)", r"before the product", r"r \* h", r"\(r \* h"],
    source="https://discuss.pytorch.org/t/grucell-is-different-in-pytorch-and-tensorflow/6630",
)
def d_gru2_reset_before_product(module, input, hx=None):
    return _layer(module, input, hx, reset_before=True)


@wrong(
    case("GRU", 3, 4),
    "b_hn added outside the reset gate",
    [r"b_hn", r"bias.{0,40}(inside|outside|reset)"],
    source="https://discuss.pytorch.org/t/why-does-my-custom-gru-doesnt-match-pytorch-gru-implementation/169837",
)
def d_gru_b_hn_outside(module, input, hx=None):
    return _layer(module, input, hx, bhn_outside=True)


@wrong(
    case("GRU", 3, 4, hx=True),
    "blocks read in the order z, r, n",
    [r"wrong order", r"in the order", r"order is", r"z, ?r", r"r, ?z", r"block", r"chunk"],
)
def d_gru_order_zrn(module, input, hx=None):
    return _layer(module, input, hx, gate_order="zrn")


@wrong(
    case("GRU", 3, 4, batch_first=True),
    "sigmoid on the candidate n",
    [r"\bn\b.{0,40}(tanh|sigmoid)", r"candidate.{0,40}(tanh|sigmoid)", r"(tanh|sigmoid).{0,40}candidate"],
)
def d_gru_n_sigmoid(module, input, hx=None):
    return _layer(module, input, hx, n_sigmoid=True)


@wrong(
    case("GRU", 3, 4, bidirectional=True),
    "backward states left in computed order",
    [r"computed order", r"(flip|revers).{0,40}back", r"own time step", r"backward.{0,80}order", r"position t"],
)
def d_gru_bi_not_flipped_back(module, input, hx=None):
    return _layer(module, input, hx, backward_not_flipped_back=True)


@wrong(
    case("GRU", 3, 4, 2),
    "h_n holds only the top layer",
    [r"h_n.{0,80}shape", r"every layer and direction", r"num_layers", r"top layer"],
)
def d_gru2_h_n_top_only(module, input, hx=None):
    return _layer(module, input, hx, h_n_top_only=True)


@wrong(case("GRU", 3, 4, lengths=[5, 4, 1]), "packed: lengths ignored", [r"length", r"padd", r"last real"])
def d_gru_packed_ignores_lengths(module, input, hx=None):
    return _layer(module, input, hx, ignore_lengths=True)


@wrong(
    case("GRU", 3, 4, bidirectional=True, hx=True, lengths=[3, 5, 2]),
    "packed, bidirectional: the backward run starts at the padded end",
    [r"backward.{0,80}(padd|length|last real)", r"padd.{0,80}backward", r"revers.{0,60}padd"],
    source="https://github.com/pytorch/pytorch/issues/1794",
)
def d_gru_packed_bi_backward_from_padding(module, input, hx=None):
    return _layer(module, input, hx, backward_from_padding=True)


@wrong(case("GRU", 3, 4, batch_first=True), "batch_first ignored", [r"batch.?first"])
def d_gru_batch_first_ignored(module, input, hx=None):
    return _layer(module, input, hx, batch_first_ignored=True)


@wrong(case("GRU", 3, 4, 2, hx=True), "hx ignored", NAMES_HX)
def d_gru2_ignores_hx(module, input, hx=None):
    return _layer(module, input, hx, ignore_hx=True)


@wrong(case("GRU", 3, 4), "input biases b_ih added twice", [r"twice", r"b_ih", r"b_i[rzn]", r"bias"])
def d_gru_b_ih_twice(module, input, hx=None):
    return _layer(module, input, hx, bias_twice=True)


@wrong(
    case("GRU", 3, 4),
    "output stores each step's state before the update (one step late)",
    [
        r"before.{0,30}(update|step)",
        r"previous state",
        r"h_\{?t ?- ?1\}?",
        r"one step (late|behind|early)",
        r"shift",
        r"h_prev",
    ],
)
def d_gru_output_one_step_late(module, input, hx=None):
    return _layer(module, input, hx, output_prev=True)


@wrong(
    case("GRU", 4, 4, 3),
    "layer 0's weights used for every layer",
    [r"_l0", r"layer 0", r"_l\{k\}", r"same weights", r"own weights"],
)
def d_gru3_layer0_weights(module, input, hx=None):
    return _layer(module, input, hx, layer0_weights=True)


@wrong(
    case("GRU", 3, 4, hx=True),
    "writes each new state into hx[0] in place (h[:] = ...): changes the caller's hx",
    [r"in.?place", r"changes its argument", r"\bhx\b"],
)
def d_gru_writes_into_hx(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = hx[0] if hx is not None else torch.zeros(input.shape[1], module.hidden_size)
    outputs = []
    for x_t in input:
        h_new, _ = _cell("GRU", module, x_t, h.clone(), None, W_ih, W_hh, b_ih, b_hh, {})
        h[:] = h_new
        outputs.append(h_new)
    return torch.stack(outputs), h.unsqueeze(0)


@wrong(
    case("GRU", 3, 4, bidirectional=True),
    "h_n's backward row taken from output[-1]",
    [r"h_n.{0,80}output\[-1\]", r"output\[-1\]", r"h_n\[1\]", r"backward.{0,60}(ends|end|first step|t = 0)"],
)
def d_gru_bi_h_n_from_output_last(module, input, hx=None):
    return _layer(module, input, hx, h_n_backward_from_last_step=True)


@wrong(
    case("GRU", 3, 4, bidirectional=True),
    "backward run uses the forward weights (_l0, not _l0_reverse)",
    [r"_reverse", r"forward weights", r"backward.{0,40}weights"],
)
def d_gru_bi_forward_weights_backward(module, input, hx=None):
    return _layer(module, input, hx, forward_weights_backward=True)


# --- more layers: right only on the student's own input, other shapes of input and result ----


@wrong(
    case("RNN", 3, 4, seq_len=2),
    "h_n hard-coded as output[1]: right only for two steps (the student's own input has two)",
    [r"which step's state", r"last step", r"output\[-1\]", r"hard.?coded", r"seq_len"],
)
def d_rnn_h_n_output1_two_steps(module, input, hx=None):
    output, _ = _layer(module, input, hx)
    return output, output[1].unsqueeze(0)


@wrong(
    case("RNN", 1, 1),
    "elementwise W_hh * h (with W_ih * x summed): right only for one unit (the student's own layer has one)",
    [r"element.?wise", r"matrix product", r"matmul", r"\* instead of @", r"one unit", r"hidden_size ?= ?1"],
)
def d_rnn_one_unit_elementwise(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    outputs = []
    for x_t in input:
        h = torch.tanh((W_ih * x_t).sum(-1, keepdim=True) + b_ih + W_hh * h + b_hh)
        outputs.append(h)
    return torch.stack(outputs), h.unsqueeze(0)


@wrong(
    case("RNN", 3, 4, unbatched=True),
    "unbatched input (seq_len, input_size): assumes a batch dimension, so dimension 1 is read as the batch",
    [r"unbatched", r"2-?D", r"no batch", r"batch dimension", r"\(seq_len, input_size\)"],
)
def d_rnn_unbatched_assumes_batch(module, input, hx=None):
    return _layer(module, input, hx)


@wrong(
    case("LSTM", 3, 4, proj_size=2),
    "proj_size ignored: no weight_hr_l0 projection of h",
    [r"proj", r"weight_hr"],
)
def d_lstm_ignores_projection(module, input, hx=None):
    return _layer(module, input, hx)


@wrong(
    case("GRU", 3, 4, 2, batch_first=True, hx=True),
    "treats hx as batch first: hx.transpose(0, 1) reshaped back to (layers, batch, hidden) scrambles its rows",
    [r"batch_first does not", r"not (to )?(h_0|hx)", r"hx.{0,60}(batch|transpos|shape)", r"h_0.{0,60}(batch|shape)"],
)
def d_gru2_batch_first_hx_transposed(module, input, hx=None):
    return _layer(module, input, None if hx is None else hx.transpose(0, 1).reshape(hx.shape))


@wrong(
    case("RNN", 3, 4),
    "returns the list of states, not a stacked tensor, as output",
    [r"\blist\b", r"torch\.stack"],
)
def d_rnn_output_list(module, input, hx=None):
    output, h_n = _layer(module, input, hx)
    return list(output), h_n


@wrong(
    case("GRU", 3, 4, bidirectional=True),
    "h_n detached (h.detach()) before it is returned: right values, no gradient through h_n",
    NAMES_GRAD + [r"h_n (is|was) detached"],
)
def d_gru_bi_h_n_detached(module, input, hx=None):
    output, h_n = _layer(module, input, hx)
    return output, h_n.detach()


# =============================================================================================
# Correct versions, in unusual styles: each must pass
# =============================================================================================


@right("01.step", "torch.addcmul for the two products")
def ok01_addcmul(x_t, h_prev, w_ih, w_hh):
    return torch.addcmul(w_ih * x_t, w_hh, h_prev).tanh()


@right("02.loop", "a while loop over an index, the states grown with torch.cat")
def ok02_while_cat(module, input, hx=None):
    h = input.new_zeros(1, input.shape[1], module.hidden_size) if hx is None else hx
    output, t = input.new_zeros(0, input.shape[1], module.hidden_size), 0
    while t < len(input):
        pre = nn.functional.linear(input[t], module.weight_ih_l0, module.bias_ih_l0)
        pre = pre + nn.functional.linear(h[0], module.weight_hh_l0, module.bias_hh_l0)
        h = pre.tanh().unsqueeze(0)
        output = torch.cat([output, h])
        t += 1
    return output, h


@right("03.step_matrices", "einsum")
def ok03_einsum(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.einsum("bi,hi->bh", x_t, W_ih) + torch.einsum("bk,hk->bh", h_prev, W_hh) + b_ih + b_hh)


@right("03.step_matrices", "one product with the weights and inputs concatenated")
def ok03_concatenated(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.cat([x_t, h_prev], 1) @ torch.cat([W_ih, W_hh], 1).T + (b_ih + b_hh))


@right("04.bidirectional", "the backward run on input.flip(0), its states flipped back")
def ok04_flip(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = input.new_zeros(2, B, H) if hx is None else hx
    fwd = torch.stack(_run(input, h_0[0], *_weights(module, "_l0"), range(len(input))))
    bwd = torch.stack(_run(input.flip(0), h_0[1], *_weights(module, "_l0_reverse"), range(len(input)))).flip(0)
    return torch.cat([fwd, bwd], dim=2), torch.stack([fwd[-1], bwd[0]])


@right("05.stack", "layers by recursion, each step with nn.functional.linear")
def ok05_recursive_layers(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = input.new_zeros(L, B, H) if hx is None else hx

    def layer(k, below):
        if k == L:
            return below, []
        h, states = h_0[k], []
        for x_t in below.unbind(0):
            a = nn.functional.linear(x_t, getattr(module, f"weight_ih_l{k}"), getattr(module, f"bias_ih_l{k}"))
            h = torch.tanh(
                a + nn.functional.linear(h, getattr(module, f"weight_hh_l{k}"), getattr(module, f"bias_hh_l{k}"))
            )
            states.append(h)
        top, finals = layer(k + 1, torch.stack(states))
        return top, [h] + finals

    output, finals = layer(0, input)
    return output, torch.stack(finals)


@right("06.top_h_n", "chunk of the first and last steps")
def ok06_chunk(output, hidden_size):
    forward_final, _ = output[:, -1].chunk(2, dim=-1)
    _, backward_final = output[:, 0].chunk(2, dim=-1)
    return torch.stack((forward_final, backward_final), dim=0)


@right("08.last_states", "gather along time")
def ok08_gather(output, lengths):
    index = (lengths - 1).view(1, -1, 1).expand(1, output.shape[1], output.shape[2])
    return output.gather(0, index).squeeze(0)


@right("10.step", "each gate's rows sliced by hand and computed with torch.addmm")
def ok10_addmm_slices(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]

    def pre(k):
        rows = slice(k * H, (k + 1) * H)
        return torch.addmm(b_ih[rows] + b_hh[rows], x_t, W_ih[rows].T) + h_prev @ W_hh[rows].T

    i, f, g, o = torch.sigmoid(pre(0)), torch.sigmoid(pre(1)), torch.tanh(pre(2)), torch.sigmoid(pre(3))
    c_t = torch.addcmul(f * c_prev, i, g)
    return o * c_t.tanh(), c_t


@right("11.step", "torch.lerp(n, h_prev, z) for the update")
def ok11_lerp(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = nn.functional.linear(x_t, W_ih, b_ih).chunk(3, 1)
    gh = nn.functional.linear(h_prev, W_hh, b_hh).chunk(3, 1)
    r, z = torch.sigmoid(gi[0] + gh[0]), torch.sigmoid(gi[1] + gh[1])
    return torch.lerp(torch.tanh(gi[2] + r * gh[2]), h_prev, z)


@right("12.bptt_step", "einsum with the slope folded in")
def ok12_einsum(delta_t, h_t, W_hh):
    return torch.einsum("bj,bj,jk->bk", delta_t, 1 - h_t * h_t, W_hh)


@right("13.tag_loss", "log_softmax, the right class picked with gather, a float mask")
def ok13_log_softmax(scores, tags, lengths):
    T = scores.shape[1]
    weight = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).to(scores.dtype)
    picked = scores.log_softmax(-1).gather(-1, tags.clamp(0, scores.shape[-1] - 1).unsqueeze(-1)).squeeze(-1)
    return -(picked * weight).sum() / weight.sum()


@right(
    case("LSTM", 3, 4, 2, bidirectional=True, batch_first=True, hx=True),
    "batch_first handled by hand, 2 layers, both directions",
)
def ok_lstm2_bi_batch_first(module, input, hx=None):
    return _layer(module, input, hx)


@right(case("GRU", 3, 4, 2, lengths=[2, 5, 3]), "packed GRU, printing every step")
def ok_gru2_packed_prints(module, input, hx=None):
    return _layer(module, input, hx, prints=True)


@right(case("RNN", 3, 5, 3, nonlinearity="relu", bias=False), "relu, no bias, 3 layers")
def ok_rnn3_relu_no_bias(module, input, hx=None):
    return _layer(module, input, hx)


@right(case("RNN", 3, 4, hx=True), "recursion over time instead of a loop")
def ok_rnn_recursive(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0

    def run(t, h):
        if t == len(input):
            return []
        h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        return [h] + run(t + 1, h)

    states = run(0, input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0])
    return torch.stack(states), states[-1][None]


@right(case("RNN", 2, 3, seq_len=3, batch=2), "every unit computed with Python loops (slow, right)")
def ok_rnn_python_loops(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    I = input.shape[2]  # noqa: E741
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    h = [[input.new_zeros(()) if hx is None else hx[0, b, j] for j in range(H)] for b in range(B)]
    steps = []
    for t in range(T):
        new = []
        for b in range(B):
            row = []
            for j in range(H):
                total = b_ih[j] + b_hh[j]
                for i in range(I):
                    total = total + W_ih[j, i] * input[t, b, i]
                for k in range(H):
                    total = total + W_hh[j, k] * h[b][k]
                row.append(torch.tanh(total))
            new.append(row)
        h = new
        steps.append(torch.stack([torch.stack(row) for row in h]))
    return torch.stack(steps), steps[-1].unsqueeze(0)
