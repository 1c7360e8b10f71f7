"""Wrong and right student versions, the seventh set: written blind to the checks, for a measure of how often they name the bug.

Written without opening the checks or anything tuned on them: not helpers/bugs.py, diagnosis.py,
exercises.py (only `solution(key)` was run, for the worked answers), argument_slips.py,
wiring_slips.py, gates.py, gate_blocks.py, provenance.py, shape_slips.py, layer_parts.py,
answer_key.py, sandbox.py, helpers/solutions/, tests/, benchmarks/diagnosis_quality.py, build/,
the README's section on how well the checks name a bug, nor any other wrong_versions*.py file
except lines 86-262 of wrong_versions_blind3.py (the record format `Version`, `wrong`, `right`,
`case` and a few helpers, copied here, not imported). What was read: the exercises' statements,
stubs and hints in notebooks/NN_*.ipynb, the worked answers `solution(key)` prints,
benchmarks/verify_blind3.py (the model for verify_blind4.py), /work/shared/FACTS.md, PyTorch's
documentation, and public threads where people post their hand-written RNN, LSTM and GRU code
(cited as `source=` beside a version that shows the same slip). No version was ever passed to
`check_code` or `diagnose` while writing it.

Families it aims at, each in its own code style (loops, comprehensions, helpers, einsum,
F.linear, torch.addmm, numpy detours, preallocated buffers, packed data walked by hand):
transposes missing or replaced by a reshape, F.linear given a transposed weight, wrong dimension
in cat/stack/chunk/flip/softmax/gather, off-by-one time indices and loop ranges, the wrong state
carried (initial state, layer row, direction row, a cell state for a hidden one), h_n rows
ordered wrong or batch-first, the backward direction not reversed or not flipped back, halves
swapped, a forgotten bias or activation, gate blocks in another text's order or cut with the
wrong size, LSTM and GRU equation slips (candidate through sigmoid, old cell in h, reset before
the product, z's convention, forget-bias + 1), proj_size slips, packed sequences (no mask, h_n in
sorted order, hx not sorted, mask on h but not c, batch_first lost when repacking, batch_sizes
read as lengths), masks off by one or taken from the tags, loss averaged wrong, dtype lost to
float32 buffers, gradients cut by detach or numpy, arguments changed in place, globals read
instead of the arguments.

verify_blind4.py checks every version against torch directly. The owner runs it once, with
`python benchmarks/diagnosis_quality.py --set blind4`.
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


def rnn_layer_step(module, k=0, suffix=""):
    """A step function h_t = tanh(x_t W_ih^T + b_ih + h W_hh^T + b_hh) for one direction of one layer (correct)."""
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, k, suffix)

    def step(x_t, h):
        return torch.tanh(functional.linear(x_t, W_ih, b_ih) + functional.linear(h, W_hh, b_hh))

    return step


# =================================================================================================
# 01.step: h_t = tanh(w_ih * x_t + w_hh * h_prev), from tensors (one case holds four values each)
# =================================================================================================


@wrong(
    "01.step",
    "math.tanh is used on tensors: it fails on the case holding four values (and gives a float, not a tensor)",
    [
        r"math\.tanh",
        r"\bmath\b.*(module|function|tanh)",
        r"torch\.tanh.*(not|instead)",
        r"(python|float).*(tanh|scalar)",
    ],
)
def step_math_tanh(x_t, h_prev, w_ih, w_hh):
    pre = w_ih * x_t + w_hh * h_prev
    return math.tanh(pre)


@wrong(
    "01.step",
    "each term gets its own tanh, tanh(w_ih*x_t) + tanh(w_hh*h_prev), instead of one tanh of the sum",
    [
        r"tanh.*(each|both|separately|two).*(term|part)",
        r"(each|both) term.*(own )?tanh",
        r"(sum|add).*(before|inside|under|first).*tanh",
        r"tanh.*(of the sum|on the sum|once)",
    ],
)
def step_tanh_each_term(x_t, h_prev, w_ih, w_hh):
    from_input = torch.tanh(w_ih * x_t)
    from_past = torch.tanh(w_hh * h_prev)
    return from_input + from_past


@wrong(
    "01.step",
    "the two weights are swapped: w_hh multiplies x_t and w_ih multiplies h_prev",
    [r"(weights?|w_ih|w_hh).*(swap|exchang|wrong way|other way|switched|mixed)", r"swap.*(w_ih|w_hh|weight)"],
)
def step_weights_swapped(x_t, h_prev, w_ih, w_hh):
    a = w_hh * x_t + w_ih * h_prev
    return torch.tanh(a)


@wrong(
    "01.step",
    "sigmoid is used as the activation instead of tanh",
    [r"sigmoid", r"(activation|nonlinearity|squash).*(wrong|not tanh|instead)"],
)
def step_sigmoid(x_t, h_prev, w_ih, w_hh):
    return torch.sigmoid(w_ih * x_t + w_hh * h_prev)


@wrong(
    "01.step",
    "the result is printed, not returned: the function returns None",
    [r"print", r"return(s|ed)? (nothing|none)", r"\bnone\b", r"no return", r"missing return", r"forg[eo]t.*return"],
)
def step_prints(x_t, h_prev, w_ih, w_hh):
    h_t = torch.tanh(w_ih * x_t + w_hh * h_prev)
    print("h_t =", h_t)


@wrong(
    "01.step",
    "the recurrent term w_hh * h_prev is left out: h_t = tanh(w_ih * x_t)",
    [
        r"(recurrent|hidden|previous|w_hh|h_prev).*(term|state).*(missing|left out|ignored|forgot|dropped|not used|unused)",
        r"(missing|without|ignor|forgot|drop|never uses?).*(w_hh|h_prev|recurrent|previous state)",
        r"h_prev.*(no effect|not used|unused)",
    ],
)
def step_no_recurrence(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(x_t * w_ih)


@wrong(
    "01.step",
    "h_prev is multiplied by w_hh in place (h_prev *= w_hh): the caller's tensor is changed",
    [r"in[- ]place", r"(changes|changed|modif|overwrit|mutat).*(h_prev|argument|input|caller)", r"\*="],
)
def step_inplace_h(x_t, h_prev, w_ih, w_hh):
    h_prev *= w_hh
    return torch.tanh(w_ih * x_t + h_prev)


@wrong(
    "01.step",
    "the two terms are multiplied instead of added: tanh(w_ih*x_t * w_hh*h_prev)",
    [r"multipl.*(instead of|not) add", r"(product|times).*(instead of|not).*(sum|add)", r"terms.*(multiplied|product)"],
)
def step_product_of_terms(x_t, h_prev, w_ih, w_hh):
    return torch.tanh((w_ih * x_t) * (w_hh * h_prev))


@wrong(
    "01.step",
    "a numpy detour (np.tanh on .detach().numpy()) cuts the result off from autograd: no gradients",
    [r"numpy", r"detach", r"(gradient|autograd|graph).*(lost|cut|broken|none|missing|no)", r"no grad"],
    source="https://discuss.pytorch.org/t/dimensionslity-in-rnn/51498",
)
def step_numpy_detour(x_t, h_prev, w_ih, w_hh):
    pre = (w_ih * x_t + w_hh * h_prev).detach().numpy()
    return torch.tensor(np.tanh(pre))


@wrong(
    "01.step",
    "relu is used as the activation instead of tanh",
    [r"relu", r"(activation|nonlinearity).*(wrong|not tanh|instead)", r"max\(0"],
)
def step_relu(x_t, h_prev, w_ih, w_hh):
    return torch.relu(w_ih * x_t + w_hh * h_prev)


@right("01.step", "torch.addcmul for the sum, then the tensor's own .tanh()")
def step_addcmul(x_t, h_prev, w_ih, w_hh):
    return torch.addcmul(w_ih * x_t, w_hh, h_prev).tanh()


# =================================================================================================
# 02.loop: my_rnn(module, input, hx=None), one layer, one direction, time first -> (output, h_n)
# =================================================================================================


@wrong(
    "02.loop",
    "h starts from hx itself, (1, B, H), not hx[0]: the layer dimension rides along into output and h_n",
    [
        r"hx\[0\]",
        r"(layer|leading|extra|first) dim.*(hx|h_0|h0|initial)",
        r"(hx|h_0|h0|initial state).*(not indexed|without \[0\]|layer dim|\(1, ?b)",
        r"(output|h_n).*(extra|4-?d|too many) dim",
    ],
)
def my_rnn_hx_whole(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx
    outs = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0) if h.dim() == 2 else h


@wrong(
    "02.loop",
    "W_ih is used without .T (x_t @ W_ih): a shape error, or wrong numbers when input_size == hidden_size",
    [r"w_ih.*(\.t\b|transpos)", r"(transpos|\.t\b).*(w_ih|input weight|weight_ih)", r"x_t ?@ ?w_ih\b"],
    source="https://discuss.pytorch.org/t/dimensionslity-in-rnn/51498",
)
def my_rnn_no_T_ih(module, input, hx=None):
    p = dict(module.named_parameters())
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    seq = []
    for t in range(input.shape[0]):
        h = torch.tanh(input[t] @ p["weight_ih_l0"] + p["bias_ih_l0"] + h @ p["weight_hh_l0"].T + p["bias_hh_l0"])
        seq.append(h)
    return torch.stack(seq), h[None]


@wrong(
    "02.loop",
    "W_hh is used without .T (h @ W_hh): wrong numbers whenever hidden_size > 1",
    [r"w_hh.*(\.t\b|transpos)", r"(transpos|\.t\b).*(w_hh|recurrent weight|weight_hh)", r"h(_prev)? ?@ ?w_hh\b"],
)
def my_rnn_no_T_hh(module, input, hx=None):
    Wx, Wh = module.weight_ih_l0, module.weight_hh_l0
    bias = module.bias_ih_l0 + module.bias_hh_l0
    B = input.size(1)
    state = hx[0] if hx is not None else torch.zeros(B, module.hidden_size)
    history = []
    for x_t in input.unbind(0):
        state = torch.tanh(x_t @ Wx.t() + state @ Wh + bias)
        history.append(state)
    return torch.stack(history, 0), state.unsqueeze(0)


@wrong(
    "02.loop",
    "bias_hh_l0 is never added: only b_ih enters the step",
    [r"b_hh", r"bias_hh", r"(second|hidden|recurrent) bias", r"(missing|forgot|without|left out).*bias"],
)
def my_rnn_no_bhh(module, input, hx=None):
    W_ih, W_hh, b_ih = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    out = []
    for x_t in input:
        h = torch.tanh(functional.linear(x_t, W_ih, b_ih) + functional.linear(h, W_hh))
        out.append(h)
    return torch.stack(out), h.unsqueeze(0)


@wrong(
    "02.loop",
    "output stores the state BEFORE each step (h_prev), so it holds h_0 .. h_{T-1} instead of h_1 .. h_T",
    [
        r"(h_prev|previous state|old state|state before).*(output|stored|appended|saved)",
        r"(output|stored|appended).*(before|previous|h_prev|old|one step (behind|late|early)|shifted)",
        r"off[- ]by[- ]one",
        r"(shifted|lag).*(one|a) step",
    ],
)
def my_rnn_stores_prev(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b = module.bias_ih_l0 + module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        states.append(h)
        h = torch.tanh(x_t @ W_ih.T + h @ W_hh.T + b)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h_n is returned as (batch, hidden_size): the layer dimension in front is missing",
    [
        r"h_n.*(shape|dim|unsqueeze|\(1, ?b|layer dim|num_layers)",
        r"(missing|forgot|without).*(unsqueeze|layer dim|leading dim|first dim)",
        r"unsqueeze\(0\)",
    ],
)
def my_rnn_hn_2d(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    h0 = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    output, h_last = rnn_run(input, h0, W_ih, W_hh, b_ih, b_hh)
    return output, h_last


@wrong(
    "02.loop",
    "the initial state is random (torch.randn) when hx is None; torch starts from zeros",
    [r"randn|random", r"(initial|h_0|h0|starting) state.*(zero|not zero|random)", r"zeros"],
    source="https://github.com/pytorch/tutorials/issues/416",
)
def my_rnn_random_h0(module, input, hx=None):
    H = module.hidden_size
    h = torch.randn(input.shape[1], H) if hx is None else hx[0]
    outputs = []
    for x_t in input:
        h = torch.tanh(x_t @ module.weight_ih_l0.T + module.bias_ih_l0 + h @ module.weight_hh_l0.T + module.bias_hh_l0)
        outputs.append(h)
    return torch.stack(outputs), h.unsqueeze(0)


@wrong(
    "02.loop",
    "hx is ignored: the loop always starts from zeros, even when an initial state is given",
    [
        r"hx.*(ignored|not used|unused|never used)",
        r"(ignor|never us|not us).*(hx|initial state|h_0|h0)",
        r"(initial|starting) state.*(zero|ignored)",
        r"nonzero h_?0",
    ],
)
def my_rnn_ignores_hx(module, input, hx=None):
    h = torch.zeros(input.shape[1], module.hidden_size)
    step = rnn_layer_step(module)
    collected = []
    for x_t in input:
        h = step(x_t, h)
        collected.append(h)
    return torch.stack(collected), h.unsqueeze(0)


@wrong(
    "02.loop",
    "h is detached at every step: values are right but the gradients do not flow back through time",
    [r"detach", r"(gradient|backprop|autograd).*(through time|cut|stop|truncat|earlier steps|lost)", r"truncat"],
)
def my_rnn_detached(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    out = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h.detach() @ W_hh.T + b_hh)
        out.append(h)
    return torch.stack(out), h.unsqueeze(0)


HIDDEN = 1  # the notebook's layer has one hidden unit


@wrong(
    "02.loop",
    "the zero initial state reads the global HIDDEN (1, the notebook's layer) instead of module.hidden_size",
    [
        r"global",
        r"HIDDEN",
        r"(initial|zero) state.*(size|shape|width)",
        r"module\.hidden_size",
        r"(notebook|outside).*(variable|layer|value)",
    ],
)
def my_rnn_global_hidden(module, input, hx=None):
    h = torch.zeros(input.shape[1], HIDDEN) if hx is None else hx[0]
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@right("02.loop", "input projections for all steps at once with torch.addmm, then a preallocated output buffer")
def my_rnn_addmm_buffer(module, input, hx=None):
    T, B, _ = input.shape
    H = module.hidden_size
    xw = torch.addmm(module.bias_ih_l0, input.reshape(T * B, -1), module.weight_ih_l0.T).view(T, B, H)
    h = input.new_zeros(B, H) if hx is None else hx[0]
    out = input.new_empty(T, B, H)
    for t in range(T):
        h = torch.tanh(xw[t] + torch.addmm(module.bias_hh_l0, h, module.weight_hh_l0.T))
        out[t] = h
    return out, h.unsqueeze(0)


# =================================================================================================
# 03.step_matrices: rnn_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) for a batch
# =================================================================================================


@wrong(
    "03.step_matrices",
    "neither weight is transposed (x_t @ W_ih + h_prev @ W_hh): a shape error, or wrong numbers when square",
    [r"transpos", r"\.t\b", r"x_t ?@ ?w_ih\b", r"(w_ih|w_hh).*(not|without|missing).*(transpos|\.t)"],
    source="https://discuss.pytorch.org/t/dimensionslity-in-rnn/51498",
)
def step_mat_no_transposes(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih + b_ih + h_prev @ W_hh + b_hh)


@wrong(
    "03.step_matrices",
    "W_hh is not transposed (h_prev @ W_hh): silently wrong since W_hh is square",
    [r"w_hh.*(\.t\b|transpos)", r"(transpos|\.t\b).*(w_hh|recurrent weight)", r"h_prev ?@ ?w_hh\b"],
)
def step_mat_no_T_hh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    input_part = x_t @ W_ih.T + b_ih
    hidden_part = h_prev @ W_hh + b_hh
    return torch.tanh(input_part + hidden_part)


@wrong(
    "03.step_matrices",
    "b_hh is left out of the sum",
    [r"b_hh", r"bias_hh", r"(second|hidden|recurrent) bias", r"(missing|forgot|without|left out).*bias"],
)
def step_mat_no_bhh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.addmm(b_ih, x_t, W_ih.T) + h_prev.mm(W_hh.T))


@wrong(
    "03.step_matrices",
    "the biases are added after the tanh instead of inside it",
    [r"bias.*(after|outside).*tanh", r"tanh.*(before|then).*bias", r"(inside|under|before) (the )?tanh"],
)
def step_mat_bias_after_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T) + b_ih + b_hh


@wrong(
    "03.step_matrices",
    "W_ih is reshaped to (input_size, hidden_size) instead of transposed: the right shape with scrambled entries",
    [
        r"reshape|view",
        r"w_ih.*(transpos|\.t\b)",
        r"(reshap|view).*(instead of|not).*(transpos)",
        r"scrambl|reorder",
    ],
)
def step_mat_reshape_not_T(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    H, n_in = W_ih.shape
    return torch.tanh(x_t @ W_ih.reshape(n_in, H) + b_ih + h_prev @ W_hh.T + b_hh)


@wrong(
    "03.step_matrices",
    "F.linear is given W_ih.T: F.linear transposes itself, so the weight is transposed twice",
    [
        r"(f\.)?linear.*(transpos|\.t\b|already)",
        r"(twice|double).*transpos",
        r"w_ih.*(transpos|\.t\b)",
    ],
)
def step_mat_linear_double_T(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a = functional.linear(x_t, W_ih.T, b_ih) + functional.linear(h_prev, W_hh, b_hh)
    return a.tanh()


@wrong(
    "03.step_matrices",
    "tanh is forgotten: the step returns the pre-activation",
    [r"tanh", r"(activation|nonlinearity).*(missing|forgot|not applied|left out)", r"pre-?activation"],
)
def step_mat_no_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.addmm(b_ih, x_t, W_ih.t()) + torch.addmm(b_hh, h_prev, W_hh.t())


@wrong(
    "03.step_matrices",
    "the biases are made column vectors (view(-1, 1)), as in W x + b with column x: they broadcast the wrong way",
    [
        r"bias.*(column|shape|broadcast|view|\(h, ?1\)|unsqueeze)",
        r"broadcast",
        r"(column|view\(-1, ?1\))",
    ],
)
def step_mat_bias_column(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    pre = x_t @ W_ih.T + h_prev @ W_hh.T
    return torch.tanh(pre + (b_ih + b_hh).view(-1, 1))


@wrong(
    "03.step_matrices",
    "the weights are swapped: x_t meets W_hh and h_prev meets W_ih",
    [r"(weights?|w_ih|w_hh).*(swap|exchang|switched|mixed|wrong (one|term))", r"x_t.*w_hh", r"h_prev.*w_ih"],
)
def step_mat_weights_swapped(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(torch.einsum("bi,hi->bh", x_t, W_hh) + b_ih + torch.einsum("bk,hk->bh", h_prev, W_ih) + b_hh)


@wrong(
    "03.step_matrices",
    "the result is written into h_prev with tanh(..., out=h_prev): the caller's h_prev is overwritten",
    [r"in[- ]place", r"out=", r"(overwrit|changes|changed|modif|mutat).*(h_prev|argument|input)"],
)
def step_mat_out_into_hprev(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    pre = x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    return torch.tanh(pre, out=h_prev)


@right("03.step_matrices", "one product of the concatenated [x_t, h_prev] with the concatenated weights")
def step_mat_concat(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    xh = torch.cat([x_t, h_prev], dim=1)  # (B, I + H)
    W = torch.cat([W_ih, W_hh], dim=1)  # (H, I + H)
    return torch.tanh(xh @ W.T + (b_ih + b_hh))


# =================================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), one layer, both directions, time first
# =================================================================================================


@wrong(
    "04.bidirectional",
    "the backward direction is not reversed: it runs from the first step to the last with the _reverse weights",
    [
        r"(backward|reverse).*(not reversed|forward order|first step to|wrong order|same order|start.*(first|t ?= ?0))",
        r"(not|never) (reversed|flipped)",
        r"(reverse|flip).*(input|sequence|time)",
        r"(backward|reverse) (run|direction|pass).*(order|direction)",
    ],
    source="https://discuss.pytorch.org/t/question-on-backward-direction-of-bidirectional-gru-rnn/79498",
)
def birnn_not_reversed(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd_states, fwd_last = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd_states, bwd_last = rnn_run(input, h0[1], *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat([fwd_states, bwd_states], -1), torch.stack([fwd_last, bwd_last])


@wrong(
    "04.bidirectional",
    "the backward states are left in the order they were computed (last step first), not flipped back into time order",
    [
        r"(backward|reverse).*(computed order|not flipped back|order|flip.*back|time order|reversed order)",
        r"flip(ped)? back",
        r"(store|stored|position|index).*(t\b|own time|time step)",
        r"(misaligned|not aligned|out of order)",
    ],
    source="https://github.com/d2l-ai/d2l-en/issues/2306",
)
def birnn_not_flipped_back(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    step_f, step_b = rnn_layer_step(module), rnn_layer_step(module, 0, "_reverse")
    hf, hb, fs, bs = h0[0], h0[1], [], []
    for t in range(T):
        hf = step_f(input[t], hf)
        fs.append(hf)
        hb = step_b(input[T - 1 - t], hb)
        bs.append(hb)
    return torch.cat([torch.stack(fs), torch.stack(bs)], dim=2), torch.stack([hf, hb])


@wrong(
    "04.bidirectional",
    "the halves are swapped: output is cat([backward, forward]) instead of forward first",
    [
        r"(halves|half|directions?).*(swap|order|reversed|wrong)",
        r"backward (half )?first",
        r"forward.*(first|\[:h\]|left)",
        r"cat.*order",
    ],
)
def birnn_halves_swapped(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, f_last = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd_rev, b_last = rnn_run(input.flip(0), h0[1], *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat((bwd_rev.flip(0), fwd), dim=-1), torch.stack((f_last, b_last))


@wrong(
    "04.bidirectional",
    "h_n's backward row is taken from output[-1] (the backward state at the last time step, its FIRST step)",
    [
        r"output\[-1\]",
        r"h_n.*(backward|reverse|row 1|second row).*(last (time )?step|first step|wrong step|t ?= ?0|output\[0\])",
        r"backward.*(final|ends?|last).*(first step|t ?= ?0|step 0|output\[0\])",
        r"(where|after).*(backward|reverse).*(ends|finish)",
    ],
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def birnn_hn_from_last_row(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, _ = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd, _ = rnn_run(input.flip(0), h0[1], *layer_weights(module, 0, "_reverse")[:4])
    output = torch.cat([fwd, bwd.flip(0)], -1)
    h_n = torch.stack([output[-1, :, :H], output[-1, :, H:]])
    return output, h_n


@wrong(
    "04.bidirectional",
    "both directions start from hx[0]: the backward run ignores its own row hx[1]",
    [
        r"hx\[1\]",
        r"(backward|reverse).*(initial|h_?0|starting|start).*(row|hx\[0\]|forward's|wrong)",
        r"(same|one) (initial )?(row|state).*both",
        r"(row 1|second row).*(hx|initial)",
    ],
)
def birnn_same_h0(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    start = torch.zeros(B, H) if hx is None else hx[0]
    halves, ends = [], []
    for suffix in ("_l0", "_l0_reverse"):
        W_ih, W_hh = module.get_parameter("weight_ih" + suffix), module.get_parameter("weight_hh" + suffix)
        b = module.get_parameter("bias_ih" + suffix) + module.get_parameter("bias_hh" + suffix)
        h, slots = start, [None] * T
        order = range(T) if suffix == "_l0" else reversed(range(T))
        for t in order:
            h = torch.tanh(input[t] @ W_ih.T + h @ W_hh.T + b)
            slots[t] = h
        halves.append(torch.stack(slots))
        ends.append(h)
    return torch.cat(halves, -1), torch.stack(ends)


@wrong(
    "04.bidirectional",
    "the backward run uses the forward weights (_l0) instead of the _reverse ones",
    [
        r"_reverse",
        r"(backward|reverse).*(forward('s)? |same |_l0 )?(weights|parameters)",
        r"weights.*(forward|wrong direction)",
    ],
)
def birnn_forward_weights_twice(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    fwd, f_last = rnn_run(input, h0[0], W_ih, W_hh, b_ih, b_hh)
    bwd, b_last = rnn_run(input.flip(0), h0[1], W_ih, W_hh, b_ih, b_hh)
    return torch.cat([fwd, bwd.flip(0)], -1), torch.stack([f_last, b_last])


@wrong(
    "04.bidirectional",
    "the two directions are concatenated along dim 0 (time) instead of the last dim: output is (2T, B, H)",
    [r"cat.*(dim|axis|time|wrong dim)", r"(feature|last) dim", r"\(2t", r"dim ?= ?(-1|2)"],
)
def birnn_cat_dim0(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, f_last = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd, b_last = rnn_run(input.flip(0), h0[1], *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat([fwd, bwd.flip(0)]), torch.stack([f_last, b_last])


@wrong(
    "04.bidirectional",
    "h_n is built with torch.cat of the two (B, H) finals: (2B, H) instead of stack's (2, B, H)",
    [r"h_n.*(shape|cat|stack|\(2, ?b)", r"(cat|concatenat).*(instead of|not) stack", r"torch\.stack", r"\(2b"],
)
def birnn_hn_cat(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, f_last = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd, b_last = rnn_run(input.flip(0), h0[1], *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat([fwd, bwd.flip(0)], -1), torch.cat([f_last, b_last])


@wrong(
    "04.bidirectional",
    "the input is flipped along dim 1 (the batch) instead of dim 0 (time) for the backward run",
    [
        r"flip.*(dim|batch|axis|wrong)",
        r"(batch|dim 1|dims=\[1\]).*(flip|reversed)",
        r"(reverse|backward).*(batch|sequences? (order|mixed))",
        r"(not|never) reversed in time",
    ],
)
def birnn_flip_batch(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, f_last = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    backwards_in = torch.flip(input, dims=[1])
    bwd, b_last = rnn_run(backwards_in, h0[1], *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat([fwd, torch.flip(bwd, dims=[1])], -1), torch.stack([f_last, b_last])


@wrong(
    "04.bidirectional",
    "the backward direction always starts from zeros: hx[1] is never used",
    [
        r"hx\[1\]",
        r"(backward|reverse).*(initial|h_?0|start).*(zero|ignored|not used)",
        r"(ignor|never us|not us).*(hx|initial state)",
        r"nonzero h_?0",
    ],
)
def birnn_backward_zero_start(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_f = torch.zeros(B, H) if hx is None else hx[0]
    h_b = torch.zeros(B, H)
    Wf, Uf, bf, cf, _ = layer_weights(module, 0)
    Wb, Ub, bb, cb, _ = layer_weights(module, 0, "_reverse")
    out_f, out_b = [None] * T, [None] * T
    for t in range(T):
        s = T - 1 - t
        h_f = torch.tanh(input[t] @ Wf.T + bf + h_f @ Uf.T + cf)
        h_b = torch.tanh(input[s] @ Wb.T + bb + h_b @ Ub.T + cb)
        out_f[t], out_b[s] = h_f, h_b
    return torch.cat([torch.stack(out_f), torch.stack(out_b)], 2), torch.stack([h_f, h_b])


@right("04.bidirectional", "one time loop, both directions at once, with a preallocated (T, B, 2H) buffer")
def birnn_one_loop_buffer(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h = [torch.zeros(B, H), torch.zeros(B, H)] if hx is None else [hx[0], hx[1]]
    steps = [rnn_layer_step(module), rnn_layer_step(module, 0, "_reverse")]
    out = input.new_zeros(T, B, 2 * H)
    for t in range(T):
        h[0] = steps[0](input[t], h[0])
        h[1] = steps[1](input[T - 1 - t], h[1])
        out[t, :, :H] = h[0]
        out[T - 1 - t, :, H:] = h[1]
    return out, torch.stack(h)


# =================================================================================================
# 05.stack: my_stack(module, input, hx=None), stacked, one direction, time first
# =================================================================================================


@wrong(
    "05.stack",
    "every layer reads the original input: layer k > 0 never receives the states of layer k - 1",
    [
        r"(layer|k) ?(> ?0|above|upper|higher|1).*(read|input|fed|receiv).*(input|x\b|original)",
        r"(original|same|raw) input",
        r"(every|each|all) layers? reads? (the )?(original|same|raw )?input",
        r"(states|output) of (the )?layer below",
        r"layer_input.*(not updated|never updated)",
        r"wiring|wired",
    ],
)
def stack_all_read_input(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = input.new_zeros(L, B, H) if hx is None else hx
    out, finals = None, []
    for k in range(L):
        out, last = rnn_run(input, h0[k], *layer_weights(module, k)[:4])
        finals.append(last)
    return out, torch.stack(finals)


@wrong(
    "05.stack",
    "every layer uses layer 0's weights (_l0) instead of its own _l{k}",
    [
        r"(every|each|all|upper) layers?.*(_l0|layer 0'?s? weights)",
        r"_l0.*(every|each|all|upper) layers?",
        r"_l\{?k\}?",
        r"(own|layer k'?s?|each layer'?s?) (weights|parameters)",
        r"weights.*(layer 0|first layer|same)",
    ],
)
def stack_l0_weights(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    x, finals = input, []
    for k in range(L):
        W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
        b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
        x, h = rnn_run(x, h0[k], W_ih, W_hh, b_ih, b_hh)
        finals.append(h)
    return x, torch.stack(finals)


@wrong(
    "05.stack",
    "every layer starts from hx[0] instead of its own row hx[k]",
    [
        r"hx\[k\]",
        r"hx\[0\]",
        r"(initial|h_?0|starting).*(row|state).*(layer|k\b)",
        r"(same|first) row.*(every|each|all) layer",
        r"own row",
    ],
)
def stack_same_h0(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    start = torch.zeros(B, H) if hx is None else hx[0]
    below, finals = input, []
    for k in range(L):
        step = rnn_layer_step(module, k)
        h, states = start, []
        for x_t in below:
            h = step(x_t, h)
            states.append(h)
        below = torch.stack(states)
        finals.append(h)
    return below, torch.stack(finals)


@wrong(
    "05.stack",
    "h_n holds only the top layer's last state, (1, B, H), not every layer's",
    [
        r"h_n.*(every|each|all) layer",
        r"(only|just) (the )?top layer",
        r"h_n.*(shape|rows|\(l, ?b|num_layers)",
        r"(missing|lower) layers?.*h_n",
    ],
    source="https://stackoverflow.com/questions/48302810",
)
def stack_hn_top_only(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    seq = input
    for k in range(L):
        seq, h = rnn_run(seq, h0[k], *layer_weights(module, k)[:4])
    return seq, h.unsqueeze(0)


@wrong(
    "05.stack",
    "h_n's rows are in reverse layer order (top layer first)",
    [
        r"h_n.*(order|reversed|top (layer )?first|layer 0 first)",
        r"(rows?|layers?).*(reversed|wrong order|backwards)",
        r"layer 0 (first|row 0)",
    ],
)
def stack_hn_reversed(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    seq, finals = input, []
    for k in range(L):
        seq, h = rnn_run(seq, h0[k], *layer_weights(module, k)[:4])
        finals.insert(0, h)
    return seq, torch.stack(finals)


@wrong(
    "05.stack",
    "output is layer 0's states instead of the top layer's",
    [
        r"output.*(top|last|highest) layer",
        r"(first|bottom|lowest|layer 0).*(layer'?s? )?(states|output)",
        r"output.*(wrong layer|layer 0)",
    ],
    source="https://stackoverflow.com/questions/48302810",
)
def stack_output_bottom(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    per_layer, finals, seq = [], [], input
    for k in range(L):
        seq, h = rnn_run(seq, h0[k], *layer_weights(module, k)[:4])
        per_layer.append(seq)
        finals.append(h)
    return per_layer[0], torch.stack(finals)


@wrong(
    "05.stack",
    "each layer k > 0 starts from the last state of the layer below, not from its own initial state hx[k]",
    [
        r"(initial|starting|start).*(state|h).*(layer below|previous layer|carried|leftover|last state)",
        r"(carried|carries|leak|left over).*(state|h).*(layer|between)",
        r"hx\[k\]",
        r"(not reset|reset).*(state|h)",
        r"own (initial )?(row|state)",
    ],
)
def stack_state_carried_up(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0]
    seq, finals = input, []
    for k in range(L):
        seq, h = rnn_run(seq, h, *layer_weights(module, k)[:4])
        finals.append(h)
    return seq, torch.stack(finals)


@wrong(
    "05.stack",
    "time loop outside, layers updated top-down inside: layer k reads layer k - 1's state from the PREVIOUS step",
    [
        r"(previous|stale|old|last) (time )?step.*(layer below|lower layer|k ?- ?1)",
        r"(layer below|lower layer).*(previous|stale|old|one step (behind|late)|not yet updated)",
        r"(top-down|reverse(d)? order|wrong order).*(layers?|update)",
        r"(lag|delay|behind).*(one|a) step",
        r"wiring|wired",
    ],
)
def stack_top_down_update(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    hs = [torch.zeros(B, H) for _ in range(L)] if hx is None else list(hx.unbind(0))
    steps = [rnn_layer_step(module, k) for k in range(L)]
    tops = []
    for x_t in input:
        for k in reversed(range(L)):
            below = x_t if k == 0 else hs[k - 1]
            hs[k] = steps[k](below, hs[k])
        tops.append(hs[-1])
    return torch.stack(tops), torch.stack(hs)


@wrong(
    "05.stack",
    "the states passed up to the next layer are detached: no gradient flows from upper layers into lower ones",
    [r"detach", r"(gradient|backprop|autograd).*(layer|lower|cut|stop|lost|block)", r"no grad"],
)
def stack_detach_between(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    seq, finals = input, []
    for k in range(L):
        states, h = rnn_run(seq, h0[k], *layer_weights(module, k)[:4])
        finals.append(h)
        seq = states.detach() if k < L - 1 else states
    return seq, torch.stack(finals)


@wrong(
    "05.stack",
    "layer k's initial state is hx[:, k] (batch row k) instead of hx[k] (layer row k)",
    [
        r"hx\[:, ?k\]",
        r"hx\[k\]",
        r"(index|indexes|indexed).*(batch|wrong dim|dim 1)",
        r"(initial|h_?0).*(row|dim|index).*(layer|batch)",
    ],
)
def stack_hx_wrong_axis(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    seq, finals = input, []
    for k in range(L):
        h_start = torch.zeros(B, H) if hx is None else hx[:, k]
        seq, h = rnn_run(seq, h_start, *layer_weights(module, k)[:4])
        finals.append(h)
    return seq, torch.stack(finals)


@right("05.stack", "time loop outside, layers bottom-up inside, states kept in a list")
def stack_time_outside(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    hs = [input.new_zeros(B, H) for _ in range(L)] if hx is None else [row for row in hx]
    steps = [rnn_layer_step(module, k) for k in range(L)]
    tops = []
    for x_t in input:
        feed = x_t
        for k, step in enumerate(steps):
            hs[k] = step(feed, hs[k])
            feed = hs[k]
        tops.append(feed)
    return torch.stack(tops), torch.stack(hs)


# =================================================================================================
# 06.top_h_n: top_h_n(output, hidden_size) from a batch-first bidirectional output (B, T, 2H)
# =================================================================================================


@wrong(
    "06.top_h_n",
    "the backward row is taken at the last time step, output[:, -1, H:], where the backward run starts",
    [
        r"(backward|reverse).*(first step|t ?= ?0|index 0|\[:, ?0|starts|ends)",
        r"output\[:, ?-1, ?h:\]",
        r"(last|final) (time )?step.*backward",
        r"(where|at which).*(backward|reverse).*(ends|finish)",
    ],
    source="https://discuss.pytorch.org/t/question-on-backward-direction-of-bidirectional-gru-rnn/79498",
)
def top_backward_last_step(output, hidden_size):
    last = output[:, -1, :]
    return torch.stack([last[:, :hidden_size], last[:, hidden_size:]])


@wrong(
    "06.top_h_n",
    "output is indexed as if time came first (output[-1], output[0]): it is batch first, so that picks sequences",
    [
        r"batch[_ ]first",
        r"time.*(second|dim 1|index 1)",
        r"(time|batch).*(first|dim).*(confus|swap|mix|wrong)",
        r"output\[-1\]|output\[0\]",
    ],
    source="https://github.com/pytorch/pytorch/issues/19675",
)
def top_time_first_indexing(output, hidden_size):
    H = hidden_size
    return torch.stack([output[-1, :, :H], output[0, :, H:]])


@wrong(
    "06.top_h_n",
    "the last step's row (B, 2H) is view-ed into (2, B, H): that mixes sequences instead of splitting the halves",
    [r"\bview\b", r"reshape", r"mix(es|ed)? (the )?(sequences|batch)", r"(layout|laid out).*\(b(atch)?, ?2h\)"],
    source="https://github.com/graykode/nlp-tutorial/issues/38",
)
def top_view_last_row(output, hidden_size):
    B = output.shape[0]
    return output[:, -1].reshape(2, B, hidden_size)


@wrong(
    "06.top_h_n",
    "the two rows are stacked backward first: h_n[-2] must be the forward direction",
    [r"(forward|backward) first", r"(rows?|directions?|halves).*(order|swap|reversed)", r"h_n\[-2\].*forward"],
)
def top_rows_swapped(output, hidden_size):
    fwd_end = output[:, -1, :hidden_size]
    bwd_end = output[:, 0, hidden_size:]
    return torch.stack([bwd_end, fwd_end])


@wrong(
    "06.top_h_n",
    "the two (B, H) rows are joined with torch.cat: (2B, H) instead of stack's (2, B, H)",
    [r"(cat|concatenat).*(instead of|not) stack", r"stack", r"shape.*\(2, ?b", r"\(2b"],
)
def top_cat_not_stack(output, hidden_size):
    H = hidden_size
    return torch.cat([output[:, -1, :H], output[:, 0, H:]], dim=0)


@wrong(
    "06.top_h_n",
    "the forward row is taken at the first step, output[:, 0, :H], where the forward run starts",
    [
        r"forward.*(last step|t ?= ?-1|ends|\[:, ?-1)",
        r"output\[:, ?0, ?:h\]",
        r"(first|initial) step.*forward",
        r"(where|at which).*forward.*(ends|finish)",
    ],
)
def top_forward_first_step(output, hidden_size):
    first = output[:, 0]
    return torch.stack([first[..., :hidden_size], first[..., hidden_size:]])


@wrong(
    "06.top_h_n",
    "the halves are sliced the wrong way round: forward from [H:], backward from [:H]",
    [
        r"(halves|half|slice).*(swap|wrong|mixed|other way)",
        r"forward.*\[:h\]|:h\].*forward",
        r"(first|left) half.*forward",
        r"\[h:\].*backward",
    ],
)
def top_halves_mixed(output, hidden_size):
    H = hidden_size
    forward = output[:, -1, H:]
    backward = output[:, 0, :H]
    return torch.stack([forward, backward])


@wrong(
    "06.top_h_n",
    "the rows are stacked along dim 1: (B, 2, H) instead of (2, B, H)",
    [r"stack.*(dim|axis)", r"\(b, ?2, ?h\)", r"dim ?= ?(0|1)", r"(rows?|directions?).*(dim|axis) (0|1)"],
)
def top_stack_dim1(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, -1, :H], output[:, 0, H:]], dim=1)


@wrong(
    "06.top_h_n",
    "H is taken from output.shape[-1], which is 2H, so each slice keeps both halves (or none)",
    [
        r"shape\[-1\]",
        r"(h|width|slice).*(twice|double|both halves|2h instead)",
        r"hidden_size.*(instead|not|argument|ignored)",
        r"(slice|half).*(width|size)",
    ],
)
def top_H_from_shape(output, hidden_size):
    H = output.shape[-1]
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


@wrong(
    "06.top_h_n",
    "the feature dim is viewed as (H, 2) instead of (2, H): the halves are read interleaved",
    [r"\bview\b", r"(h, ?2)|\(2, ?h\)", r"interleav", r"(halves|half).*(split|layout|wrong)"],
    source="https://discuss.pytorch.org/t/question-on-backward-direction-of-bidirectional-gru-rnn/79498",
)
def top_view_h2(output, hidden_size):
    B, T = output.shape[:2]
    split = output.view(B, T, hidden_size, 2)
    return torch.stack([split[:, -1, :, 0], split[:, 0, :, 1]])


@right("06.top_h_n", "view the feature dim as (2, H), then pick each direction's end with index_select")
def top_view_2h(output, hidden_size):
    B, T = output.shape[:2]
    split = output.view(B, T, 2, hidden_size)
    fwd = split.index_select(1, torch.tensor([T - 1]))[:, 0, 0]
    bwd = split.index_select(1, torch.tensor([0]))[:, 0, 1]
    return torch.stack((fwd, bwd), 0)


# =================================================================================================
# 08.last_states: last_states(output, lengths) from a time-first padded output (T, B, H)
# =================================================================================================


@wrong(
    "08.last_states",
    "the time index is lengths, not lengths - 1: one step past the end (an IndexError for the longest)",
    [
        r"lengths ?- ?1",
        r"off[- ]by[- ]one",
        r"(one|a) step (too )?(late|past|beyond|after)",
        r"index.*(from 0|zero-based)",
    ],
)
def last_no_minus_one(output, lengths):
    return output[lengths, torch.arange(output.size(1))]


@wrong(
    "08.last_states",
    "output[-1] is returned: the last padded step, zeros for every shorter sequence",
    [
        r"output\[-1\]",
        r"(last|final) (padded|time) step",
        r"(padding|padded|zeros)",
        r"lengths.*(ignored|not used|unused)",
    ],
    source="https://github.com/bentrevett/pytorch-sentiment-analysis/issues/86",
)
def last_padded_step(output, lengths):
    return output[-1]


@wrong(
    "08.last_states",
    "only the time dimension is indexed, output[lengths - 1]: (B, B, H) instead of one row per sequence",
    [
        r"\(b, ?b, ?h\)",
        r"(pair|arange|batch index|torch\.arange\(b\))",
        r"(time|first) (dim(ension)?|index) (alone|only)",
        r"each sequence.*(own|pair)",
    ],
)
def last_time_index_only(output, lengths):
    return output[lengths - 1]


@wrong(
    "08.last_states",
    "the index tensors are in batch-first order, output[arange(B), lengths - 1], on a time-first output",
    [
        r"(time|batch)[ -]first",
        r"(index(es)?|tensors?).*(swap|places|order|wrong dim)",
        r"output\[torch\.arange",
        r"(time|batch).*(confus|swap|mix)",
    ],
)
def last_batch_first_index(output, lengths):
    B = output.shape[1]
    return output[torch.arange(B), lengths - 1]


@wrong(
    "08.last_states",
    "gather along time keeps the time dimension: (1, B, H) is returned without squeeze(0)",
    [r"squeeze", r"shape.*\(1, ?b", r"(extra|leading|keeps?).*(dim|time)", r"\(1, ?b, ?h\)"],
)
def last_gather_no_squeeze(output, lengths):
    H = output.shape[2]
    index = (lengths - 1).view(1, -1, 1).expand(1, -1, H)
    return output.gather(0, index)


@wrong(
    "08.last_states",
    "lengths are sorted first, so the rows come back in sorted order, not the batch's",
    [
        r"sort",
        r"(order|rows?).*(batch|original|shuffled|permut|wrong)",
        r"unsorted|enforce_sorted",
    ],
    source="https://github.com/pytorch/pytorch/issues/43227",
)
def last_sorted_lengths(output, lengths):
    ordered, which = lengths.sort(descending=True)
    return output[ordered - 1, which]


@wrong(
    "08.last_states",
    "the mask compares arange(T) == lengths (one past the last step) instead of lengths - 1",
    [
        r"lengths ?- ?1",
        r"off[- ]by[- ]one",
        r"mask.*(==|wrong step|one step)",
        r"(one|a) step (too )?(late|past|after)",
    ],
)
def last_mask_eq_lengths(output, lengths):
    T = output.shape[0]
    pick = (torch.arange(T)[:, None] == lengths[None, :]).to(output.dtype)  # (T, B)
    return (output * pick.unsqueeze(-1)).sum(0)


@wrong(
    "08.last_states",
    "every sequence is read at max(lengths) - 1, the longest one's last step",
    [
        r"max(imum)?.*length",
        r"(same|one) (time )?(step|index).*(every|all|each)",
        r"(own|each sequence'?s?) (length|last)",
    ],
)
def last_max_length(output, lengths):
    t_last = int(lengths.max()) - 1
    return output[t_last]


@wrong(
    "08.last_states",
    "the rows are picked in numpy and wrapped back with torch.tensor: the result has no gradient",
    [r"numpy", r"(gradient|autograd|graph).*(lost|cut|broken|none|missing|no)", r"detach", r"torch\.tensor"],
)
def last_numpy_pick(output, lengths):
    arr = output.detach().numpy()
    rows = [arr[n - 1, b] for b, n in enumerate(lengths.tolist())]
    return torch.tensor(np.stack(rows))


@wrong(
    "08.last_states",
    "index_select then .diagonal() gives (H, B): the pairs are right but the result is transposed",
    [r"diagonal", r"transpos", r"shape.*\(h, ?b\)|\(h, ?b\)", r"(dim|axes|order).*(wrong|swap)"],
)
def last_diagonal(output, lengths):
    picked = output.index_select(0, lengths - 1)  # (B, B, H): row i is time lengths[i] - 1 for every sequence
    return picked.diagonal(dim1=0, dim2=1)


@right("08.last_states", "a Python loop over (length, column) pairs, then torch.stack")
def last_loop(output, lengths):
    return torch.stack([output[n - 1, b] for b, n in enumerate(lengths.tolist())])


# =================================================================================================
# 10.step: lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh) -> (h_t, c_t), gates i, f, g, o
# =================================================================================================


@wrong(
    "10.step",
    "the blocks are read as i, f, o, g (CS231n's order): g and o are swapped",
    [
        r"(gate )?order",
        r"i, ?f, ?o, ?g",
        r"i, ?f, ?g, ?o",
        r"\bg\b.*\bo\b.*(swap|exchang)",
        r"(third|fourth) (block|chunk)",
    ],
)
def lstm_order_ifog(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    z = x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i, f, o, g = z.chunk(4, dim=1)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the blocks are read forget gate first (f, i, g, o): i and f are swapped",
    [r"(gate )?order", r"f, ?i, ?g, ?o", r"i, ?f, ?g, ?o", r"\bi\b.*\bf\b.*(swap|exchang)", r"forget.*first"],
    source="https://github.com/ndrplz/ConvLSTM_pytorch/issues/6",
)
def lstm_order_figo(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    pre = functional.linear(x_t, W_ih, b_ih) + functional.linear(h_prev, W_hh, b_hh)
    f = torch.sigmoid(pre[:, :H])
    i = torch.sigmoid(pre[:, H : 2 * H])
    g = torch.tanh(pre[:, 2 * H : 3 * H])
    o = torch.sigmoid(pre[:, 3 * H :])
    c = f * c_prev + i * g
    return o * c.tanh(), c


@wrong(
    "10.step",
    "the candidate g goes through the sigmoid like the gates, not tanh",
    [
        r"candidate.*(tanh|sigmoid)",
        r"\bg\b.*(tanh|sigmoid)",
        r"(all|four).*sigmoid",
        r"(activation|squash).*(candidate|g\b)",
    ],
)
def lstm_g_sigmoid(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = torch.sigmoid(x_t @ W_ih.T + h_prev @ W_hh.T + b_ih + b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "h_t = o * c_t: the tanh on the cell is missing",
    [r"tanh\(c", r"h_t.*tanh", r"(missing|without|forgot).*tanh", r"o ?\* ?c"],
)
def lstm_h_no_tanh(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = a[0].sigmoid(), a[1].sigmoid(), a[2].tanh(), a[3].sigmoid()
    c_t = f * c_prev + i * g
    return o * c_t, c_t


@wrong(
    "10.step",
    "the pair is returned as (c_t, h_t): h_t must come first",
    [
        r"(order|swap).*(pair|return|tuple|h_t|c_t)",
        r"h_t.*first",
        r"\(c_t, ?h_t\)",
        r"(returned|return) (the )?(wrong|other) order",
    ],
)
def lstm_returns_c_first(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
    return c, h


@wrong(
    "10.step",
    "the candidate is scaled by the forget gate, c_t = f*c_prev + f*g, instead of the input gate",
    [
        r"input gate",
        r"\bi ?\* ?g",
        r"f ?\* ?g",
        r"(forget gate|f\b).*(twice|candidate|instead of (the )?input)",
        r"candidate.*(scaled|multiplied|gated)",
    ],
    source="https://github.com/ARM-software/CMSIS-NN/pull/181",
)
def lstm_forget_scales_candidate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    c_t = f * c_prev + f * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the pre-activations are chunked along dim 0 (the batch) instead of the last dim",
    [
        r"chunk.*(dim|axis)",
        r"(batch|rows).*(split|chunk)",
        r"(split|cut|chunk).*(wrong (dim|axis)|batch)",
        r"dim ?= ?(-1|1)",
    ],
)
def lstm_chunk_dim0(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    pre = x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i, f, g, o = pre.chunk(4, dim=0)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "b_hh is left out of the pre-activation",
    [r"b_hh", r"bias_hh", r"(second|hidden|recurrent) bias", r"(missing|forgot|without|left out).*bias"],
)
def lstm_no_bhh(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    pre = torch.addmm(b_ih, x_t, W_ih.T) + h_prev @ W_hh.T
    a_i, a_f, a_g, a_o = pre.chunk(4, dim=-1)
    c_t = a_f.sigmoid() * c_prev + a_i.sigmoid() * a_g.tanh()
    return a_o.sigmoid() * c_t.tanh(), c_t


@wrong(
    "10.step",
    "gate by gate, the forget gate's bias is copied from the input gate's block (b_i instead of b_f)",
    [
        r"(forget|f\b).*(bias|b_f|b_i)",
        r"bias.*(block|chunk|slice|wrong gate|copy)",
        r"copy[- ]paste",
        r"b_i\b",
    ],
    source="https://github.com/ddbourgin/numpy-ml/issues/42",
)
def lstm_bias_copy_paste(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    Wi, Wf, Wg, Wo = W_ih.chunk(4)
    Ui, Uf, Ug, Uo = W_hh.chunk(4)
    bi, bf, bg, bo = (b_ih + b_hh).chunk(4)
    i = torch.sigmoid(x_t @ Wi.T + h_prev @ Ui.T + bi)
    f = torch.sigmoid(x_t @ Wf.T + h_prev @ Uf.T + bi)
    g = torch.tanh(x_t @ Wg.T + h_prev @ Ug.T + bg)
    o = torch.sigmoid(x_t @ Wo.T + h_prev @ Uo.T + bo)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the cell update is done in place on c_prev (c_prev.mul_(f).add_(i * g)): the caller's c_prev changes",
    [r"in[- ]place", r"mul_|add_", r"(changes|changed|modif|overwrit|mutat).*(c_prev|argument|input|caller)"],
)
def lstm_inplace_c(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = c_prev.mul_(torch.sigmoid(f)).add_(torch.sigmoid(i) * torch.tanh(g))
    return torch.sigmoid(o) * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "h_t = o * tanh(c_prev): the output reads the OLD cell instead of the new c_t",
    [r"c_prev", r"(old|previous) cell", r"tanh\(c_t\)", r"h_t.*(new|updated) cell"],
)
def lstm_h_from_old_cell(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    h_t = torch.sigmoid(o) * torch.tanh(c_prev)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return h_t, c_t


@right("10.step", "einsum for both products, the gate activations applied to a (B, 4, H) view")
def lstm_einsum_view(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    B, H = h_prev.shape
    pre = torch.einsum("bi,gi->bg", x_t, W_ih) + torch.einsum("bh,gh->bg", h_prev, W_hh) + b_ih + b_hh
    blocks = pre.view(B, 4, H)
    act = torch.cat([blocks[:, :2].sigmoid(), blocks[:, 2:3].tanh(), blocks[:, 3:].sigmoid()], dim=1)
    i, f, g, o = act.unbind(1)
    c_t = torch.addcmul(f * c_prev, i, g)
    return o * c_t.tanh(), c_t


# =================================================================================================
# 11.step: gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh) -> h_t, blocks r, z, n
# =================================================================================================


@wrong(
    "11.step",
    "the reset gate multiplies h_prev before the product, (r * h_prev) W_hn^T + b_hn, not the product after it",
    [
        r"reset.*(before|after) (the )?(product|matmul|multiplication)",
        r"r ?\* ?h_prev",
        r"r ?\* ?\(h",
        r"(paper|cho|original|final version).*(reset|gru)",
        r"\(r ?\* ?h\)",
    ],
    source="https://github.com/pytorch/pytorch/issues/8153",
)
def gru_reset_before(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
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
    "the update gate's convention is flipped: h_t = z * n + (1 - z) * h_prev",
    [
        r"\(1 ?- ?z\)",
        r"(update gate|z\b).*(convention|flipped|swapped|other way|keeps|share|roles)",
        r"z ?\* ?n",
        r"z ?\* ?h_prev",
    ],
    source="https://github.com/pytorch/pytorch/issues/20129",
)
def gru_z_flipped(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    gi = functional.linear(x_t, W_ih, b_ih)
    gh = functional.linear(h_prev, W_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return z * n + (1 - z) * h_prev


@wrong(
    "11.step",
    "the blocks are read in Keras's order z, r, n: r and z are swapped",
    [r"(gate |block )?order", r"z, ?r", r"r, ?z, ?n", r"\br\b.*\bz\b.*(swap|exchang)", r"keras"],
    source="https://github.com/keras-team/keras/issues/20535",
)
def gru_order_zrn(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    xz, xr, xn = (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)
    hz, hr, hn = (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
    z = torch.sigmoid(xz + hz)
    r = torch.sigmoid(xr + hr)
    n = torch.tanh(xn + r * hn)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "b_hn is added outside the reset gate: r * (h_prev W_hn^T) + b_hn instead of r * (h_prev W_hn^T + b_hn)",
    [
        r"b_hn",
        r"bias.*(inside|outside|within).*(reset|r\b)",
        r"r ?\* ?\(.*\+ ?b_hn\)",
        r"(reset|r\b).*(bias|b_hn)",
    ],
    source="https://github.com/pytorch/pytorch/issues/99531",
)
def gru_bhn_outside(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]
    gi = x_t @ W_ih.T + b_ih
    hr_hz = h_prev @ W_hh[: 2 * H].T + b_hh[: 2 * H]
    r = torch.sigmoid(gi[:, :H] + hr_hz[:, :H])
    z = torch.sigmoid(gi[:, H : 2 * H] + hr_hz[:, H:])
    n = torch.tanh(gi[:, 2 * H :] + r * (h_prev @ W_hh[2 * H :].T) + b_hh[2 * H :])
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the candidate n goes through the sigmoid instead of tanh",
    [
        r"candidate.*(tanh|sigmoid)",
        r"\bn\b.*(tanh|sigmoid)",
        r"(all|three).*sigmoid",
        r"(activation|squash).*(candidate|n\b)",
    ],
)
def gru_n_sigmoid(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    a = functional.linear(x_t, W_ih, b_ih).chunk(3, -1)
    b = functional.linear(h_prev, W_hh, b_hh).chunk(3, -1)
    r = torch.sigmoid(a[0] + b[0])
    z = torch.sigmoid(a[1] + b[1])
    n = torch.sigmoid(a[2] + r * b[2])
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the weights are chunked along dim 1 (their columns) instead of dim 0 (the r, z, n row blocks)",
    [
        r"chunk.*(dim|axis|rows|columns)",
        r"(rows?|columns?).*(block|split)",
        r"(block|split).*(rows?|columns?)",
        r"dim ?= ?(0|1)",
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
    "the reset gate scales the whole candidate pre-activation, input part included: tanh(r * (i_n + h_n))",
    [
        r"reset.*(input|x_t|whole|both|i_n|w_in)",
        r"r ?\* ?\(.*(x_t|i_n|w_in)",
        r"(input|x_t) (part|term).*(reset|r\b)",
        r"(only|just).*(hidden|recurrent) (part|term)",
    ],
)
def gru_reset_scales_all(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, -1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, -1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    n = torch.tanh(r * (i_n + h_n))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the reset gate's recurrent term uses W_hz (copied from the line below) instead of W_hr",
    [r"w_hr", r"w_hz", r"(reset|r\b).*(weight|block|rows?).*(wrong|update|z\b)", r"copy[- ]paste"],
)
def gru_r_uses_Whz(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hz.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "the three blocks are cut from the summed pre-activation, so the reset gate is never applied: n = tanh(i_n + h_n)",
    [
        r"reset gate.*(never|not|unused|missing|ignored)",
        r"(without|missing|forgot|no) (the )?reset",
        r"\br\b.*(unused|never used|not used)",
        r"r ?\* ?\(",
    ],
)
def gru_no_reset(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    pre = x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    a_r, a_z, a_n = pre.chunk(3, dim=-1)
    r, z = torch.sigmoid(a_r), torch.sigmoid(a_z)  # noqa: F841  (r computed, then forgotten)
    n = torch.tanh(a_n)
    return (1 - z) * n + z * h_prev


@wrong(
    "11.step",
    "h_t is built in place in h_prev's memory (h_prev.sub_(n).mul_(z).add_(n)): the caller's h_prev changes",
    [r"in[- ]place", r"sub_|mul_|add_", r"(changes|changed|modif|overwrit|mutat).*(h_prev|argument|input|caller)"],
)
def gru_inplace_h(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, -1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, -1)
    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return h_prev.sub_(n).mul_(z).add_(n)  # z * (h - n) + n


@right("11.step", "one (B, 3, H) view per product, and h_t written as n + z * (h_prev - n)")
def gru_view_lerp(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    B, H = h_prev.shape
    gi = torch.addmm(b_ih, x_t, W_ih.t()).view(B, 3, H)
    gh = torch.addmm(b_hh, h_prev, W_hh.t()).view(B, 3, H)
    rz = torch.sigmoid(gi[:, :2] + gh[:, :2])
    n = torch.tanh(gi[:, 2] + rz[:, 0] * gh[:, 2])
    return n + rz[:, 1] * (h_prev - n)


# =================================================================================================
# 12.bptt_step: bptt_step(delta_t, h_t, W_hh) -> delta_{t-1}, rows (B, H)
# =================================================================================================


@wrong(
    "12.bptt_step",
    "the product is with W_hh.T instead of W_hh",
    [r"w_hh\.t|w_hh\^?t|transpos", r"(not|instead of) (by )?w_hh\b", r"\.t\b"],
)
def bptt_W_transposed(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)) @ W_hh.T


@wrong(
    "12.bptt_step",
    "the slope is 1 - tanh(h_t)^2: h_t is already tanh(a_t), so tanh is applied twice",
    [r"tanh\(h_t\)", r"(twice|double|again).*tanh", r"tanh.*(twice|again)", r"1 ?- ?h_t ?\*\* ?2|1 ?- ?h_t\^2"],
    source="https://stats.stackexchange.com/revisions/215723/2",
)
def bptt_tanh_twice(delta_t, h_t, W_hh):
    slope = 1 - torch.tanh(h_t) ** 2
    return (delta_t * slope) @ W_hh


@wrong(
    "12.bptt_step",
    "the slope is h_t * (1 - h_t), the sigmoid's derivative, not tanh's 1 - h_t^2",
    [r"sigmoid", r"h_t ?\* ?\(1 ?- ?h_t\)", r"1 ?- ?h_t ?\*\* ?2|1 ?- ?h_t\^2", r"(derivative|slope).*(wrong|tanh)"],
)
def bptt_sigmoid_slope(delta_t, h_t, W_hh):
    return (delta_t * h_t * (1 - h_t)) @ W_hh


@wrong(
    "12.bptt_step",
    "tanh's slope is left out: delta_t @ W_hh",
    [r"slope", r"1 ?- ?h_t", r"(derivative|tanh').*(missing|forgot|left out|not applied)", r"diag"],
)
def bptt_no_slope(delta_t, h_t, W_hh):
    return torch.mm(delta_t, W_hh)


@wrong(
    "12.bptt_step",
    "the slope is applied after the product, (delta_t @ W_hh) * (1 - h_t^2), instead of before it",
    [
        r"(slope|1 ?- ?h_t).*(after|before|order)",
        r"(order|before).*(product|w_hh)",
        r"(delta_t ?\* ?\(1 ?- ?h_t)",
        r"diag.*(left|right|side)",
    ],
)
def bptt_slope_after(delta_t, h_t, W_hh):
    back = delta_t @ W_hh
    return back * (1 - h_t.pow(2))


@wrong(
    "12.bptt_step",
    "the slope is written (1 - h_t) ** 2 instead of 1 - h_t ** 2 (precedence)",
    [r"\(1 ?- ?h_t\) ?\*\* ?2", r"1 ?- ?h_t ?\*\* ?2|1 ?- ?h_t\^2", r"precedence|parenthes", r"slope.*(wrong|square)"],
)
def bptt_precedence(delta_t, h_t, W_hh):
    slope = (1 - h_t) ** 2
    return (delta_t * slope) @ W_hh


@wrong(
    "12.bptt_step",
    "torch.diag is applied to the (B, H) batch of slopes: for a matrix it returns its diagonal, not a diagonal matrix",
    [r"diag", r"(diagonal|diag).*(matrix|vector|batch)", r"(elementwise|unit by unit|row by row)"],
)
def bptt_diag_on_batch(delta_t, h_t, W_hh):
    return delta_t @ torch.diag(1 - h_t**2) @ W_hh


@wrong(
    "12.bptt_step",
    "the slope is computed from delta_t instead of h_t: 1 - delta_t^2",
    [r"1 ?- ?delta", r"slope.*(h_t|delta|wrong)", r"1 ?- ?h_t", r"(derivative|slope).*(state|h_t)"],
)
def bptt_slope_from_delta(delta_t, h_t, W_hh):
    return (delta_t * (1 - delta_t**2)) @ W_hh


@wrong(
    "12.bptt_step",
    "W_hh is used elementwise, as in the one-unit formula delta * w_hh * (1 - h^2), instead of a matrix product",
    [
        r"(instead of|not) (a )?matrix (product|multipl)",
        r"elementwise|element-wise",
        r"(one|single)[- ]unit|scalar formula",
        r"matmul|@ ?w_hh",
    ],
)
def bptt_elementwise_W(delta_t, h_t, W_hh):
    return delta_t * W_hh * (1 - h_t**2)


@wrong(
    "12.bptt_step",
    "the product is done in numpy on detached arrays: the result carries no gradient",
    [r"numpy", r"detach", r"(gradient|autograd|graph).*(lost|cut|broken|none|missing|no)"],
)
def bptt_numpy(delta_t, h_t, W_hh):
    d, h, W = (t.detach().numpy() for t in (delta_t, h_t, W_hh))
    return torch.from_numpy((d * (1 - h * h)) @ W)


@right("12.bptt_step", "one three-operand einsum: delta, slope and W_hh contracted at once")
def bptt_einsum3(delta_t, h_t, W_hh):
    return torch.einsum("bh,bh,hk->bk", delta_t, 1 - h_t * h_t, W_hh)


# =================================================================================================
# 13.tag_loss: tag_loss(scores (B, T, C), tags (B, T), lengths (B,)) -> mean over real characters
# =================================================================================================


@wrong(
    "13.tag_loss",
    "no mask at all: the padding's positions (whatever their tags) enter the mean",
    [
        r"mask",
        r"padding.*(included|counted|enters|not (left )?out|ignored)",
        r"(real|valid) (characters|positions)",
        r"lengths.*(ignored|unused|not used)",
    ],
)
def loss_no_mask(scores, tags, lengths):
    C = scores.shape[-1]
    return functional.cross_entropy(scores.reshape(-1, C), tags.reshape(-1))


@wrong(
    "13.tag_loss",
    "the mask uses <= instead of <: one padding position per text is counted as real",
    [r"<=|less than or equal", r"off[- ]by[- ]one", r"(one|an) extra (step|position|character)", r"mask.*(<|strict)"],
)
def loss_mask_le(scores, tags, lengths):
    B, T, _ = scores.shape
    keep = torch.arange(T).unsqueeze(0) <= lengths.unsqueeze(1)
    return functional.cross_entropy(scores[keep], tags[keep])


@wrong(
    "13.tag_loss",
    "the mask is built (T, B), arange(T)[:, None] < lengths, against (B, T) scores",
    [r"\(t, ?b\)", r"\(b, ?t\)", r"mask.*(shape|orientation|transpos|dim)", r"(rows?|columns?).*(swap|wrong)"],
)
def loss_mask_TB(scores, tags, lengths):
    T = scores.shape[1]
    real = torch.arange(T)[:, None] < lengths
    return functional.cross_entropy(scores[real], tags[real])


@wrong(
    "13.tag_loss",
    "the masked per-position losses are averaged over all B*T positions (.mean()) instead of over the real ones",
    [
        r"mean.*(all|b ?\* ?t|padding|every position)",
        r"(divid|averag).*(number of real|real|mask\.sum|n\b)",
        r"(denominator|count)",
        r"sum\(\) ?/ ?mask",
    ],
    source="https://discuss.pytorch.org/t/loss-of-bert-mask-language-modeling-and-next-sentence-prediction/113889",
)
def loss_mean_over_all(scores, tags, lengths):
    B, T, C = scores.shape
    per_pos = functional.cross_entropy(scores.reshape(B * T, C), tags.reshape(B * T), reduction="none").view(B, T)
    mask = (torch.arange(T)[None, :] < lengths[:, None]).float()
    return (per_pos * mask).mean()


@wrong(
    "13.tag_loss",
    "the mask is taken from the tags (tags != 0), assuming 0 marks padding; 0 is a real tag and padding holds anything",
    [
        r"tags? ?!= ?0",
        r"(from|looks? at|reads?) (the )?tags",
        r"lengths",
        r"(0|zero) is a real tag",
        r"padding.*(anything|tag)",
    ],
)
def loss_mask_from_tags(scores, tags, lengths):
    mask = tags != 0
    return functional.cross_entropy(scores[mask], tags[mask])


@wrong(
    "13.tag_loss",
    "each text's loss is averaged first and then the texts are averaged: short texts weigh more than per character",
    [
        r"(per|each) (text|sequence|sentence).*(mean|averag)",
        r"mean of (the )?means",
        r"(short|long) (texts?|sequences?).*(weigh|count|more|less)",
        r"(weigh|weight)(s|ed)? (each|every|per) (text|sequence|character)",
        r"(every|each) (real )?character.*(equal|same)",
    ],
)
def loss_mean_of_means(scores, tags, lengths):
    per_text = []
    for b, n in enumerate(lengths.tolist()):
        per_text.append(functional.cross_entropy(scores[b, :n], tags[b, :n]))
    return torch.stack(per_text).mean()


@wrong(
    "13.tag_loss",
    "reduction='sum': the total over the real characters, not their mean",
    [
        r"reduction",
        r"\bsum\b",
        r"(divid|averag|normali[sz]).*(number|count|real|characters|n\b)",
        r"(total|summed).*(instead of|not) (the )?mean",
    ],
)
def loss_sum(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real], reduction="sum")


@wrong(
    "13.tag_loss",
    "nll_loss is applied to the raw scores: log_softmax is missing",
    [r"log_?softmax", r"nll", r"(raw )?(scores|logits).*(not|without|missing) (log|softmax|normali)", r"cross_entropy"],
)
def loss_nll_raw(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.nll_loss(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "log_softmax is taken over dim 1 (the time steps) instead of the classes",
    [r"(log_?)?softmax.*(dim|axis|time|classes)", r"dim ?= ?(1|-1|2)", r"over (the )?(time|steps|classes)"],
)
def loss_logsoftmax_time(scores, tags, lengths):
    logp = torch.log_softmax(scores, dim=1)  # (B, T, C)
    picked = logp.gather(2, tags.unsqueeze(2)).squeeze(2)
    is_real = torch.arange(scores.size(1)) < lengths.unsqueeze(1)
    return -picked[is_real].mean()


@wrong(
    "13.tag_loss",
    "the padding's tags are set to -100 in the caller's tags tensor (tags[~is_real] = -100): the argument changes",
    [r"in[- ]place", r"(changes|changed|modif|overwrit|mutat).*(tags|argument|input|caller)", r"-100"],
)
def loss_writes_ignore_index(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    tags[~is_real] = -100
    return functional.cross_entropy(scores.transpose(1, 2), tags)


@right("13.tag_loss", "per-position losses with reduction='none', weighted by a float mask and divided by its sum")
def loss_weighted_mask(scores, tags, lengths):
    B, T, C = scores.shape
    nll = -torch.log_softmax(scores, dim=-1).gather(-1, tags.clamp(0, C - 1).unsqueeze(-1)).squeeze(-1)
    w = (torch.arange(T).expand(B, T) < lengths.unsqueeze(-1)).to(scores.dtype)
    return (nll * w).sum() / w.sum()


# =================================================================================================
# diagnose cases: whole hand-written layers, fn(module, input, hx) -> what module(input, hx) returns
# =================================================================================================

RNN_BASIC = case("RNN", 3, 4, publish=True)
RNN_STACK = case("RNN", 3, 4, 2, seed=1)
RNN_BI_HX = case("RNN", 2, 3, bidirectional=True, hx=True, seed=2)
RNN_BF_HX = case("RNN", 3, 5, batch_first=True, hx=True, seed=3)
RNN_RELU = case("RNN", 3, 4, nonlinearity="relu", seed=4)
RNN_PACKED = case("RNN", 2, 4, lengths=[5, 3, 2, 4], seed=5)
RNN_UNBATCHED_HX = case("RNN", 3, 4, unbatched=True, hx=True, seed=6)
RNN_NOBIAS = case("RNN", 3, 4, bias=False, seed=7)
RNN_STACK_BI_HX = case("RNN", 3, 4, 2, bidirectional=True, hx=True, seed=8)
RNN_F64 = case("RNN", 3, 4, dtype=torch.float64, seed=9)

LSTM_BASIC = case("LSTM", 3, 4, seed=10)
LSTM_HX = case("LSTM", 3, 4, hx=True, seed=11)
LSTM_PROJ = case("LSTM", 3, 5, proj_size=2, seed=12)
LSTM_STACK_BI_BF = case("LSTM", 2, 3, 2, bidirectional=True, batch_first=True, seed=13)
LSTM_PACKED_HX = case("LSTM", 3, 4, lengths=[4, 2, 5], hx=True, seed=14)
LSTM_STACK_HX = case("LSTM", 3, 4, 2, hx=True, seed=15)
LSTM_UNBATCHED = case("LSTM", 3, 4, unbatched=True, seed=16)
LSTM_NOBIAS_F64 = case("LSTM", 3, 4, bias=False, dtype=torch.float64, seed=17)
LSTM_STACK_BI_PROJ = case("LSTM", 3, 4, 2, bidirectional=True, proj_size=2, seed=18)

GRU_BASIC = case("GRU", 3, 4, seed=20)
GRU_HX = case("GRU", 3, 4, hx=True, seed=21)
GRU_STACK_BI = case("GRU", 3, 4, 2, bidirectional=True, seed=22)
GRU_PACKED_BF = case("GRU", 2, 5, batch_first=True, lengths=[3, 5, 1], seed=23)
GRU_NOBIAS = case("GRU", 3, 4, bias=False, seed=24)
GRU_STACK3_HX = case("GRU", 3, 4, 3, hx=True, seed=25)
GRU_F64_UNBATCHED = case("GRU", 3, 4, dtype=torch.float64, unbatched=True, seed=26)


# ---- RNN ----------------------------------------------------------------------------------------


@wrong(
    RNN_BASIC,
    "the input projections are precomputed for all steps, but the loop reads xw[t - 1]: each step sees the previous input",
    [
        r"off[- ]by[- ]one",
        r"(previous|wrong|shifted) (time )?(step'?s? )?input",
        r"x_?\{?t ?- ?1\}?|t ?- ?1",
        r"(input|x).*(one step|shifted|lag)",
    ],
)
def rnn_xw_off_by_one(module, input, hx=None):
    xw = torch.einsum("tbi,hi->tbh", input, module.weight_ih_l0) + module.bias_ih_l0
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    out = []
    for t in range(input.shape[0]):
        h = torch.tanh(xw[t - 1] + h @ module.weight_hh_l0.T + module.bias_hh_l0)
        out.append(h)
    return torch.stack(out), h[None]


@wrong(
    RNN_BASIC,
    "the weights are read from the notebook's global layer (NOTEBOOK_LAYER), not from the module passed in",
    [
        r"global",
        r"(notebook'?s?|outside|other) (layer|variable|module)",
        r"(not|instead of) (from )?(the )?(module|argument)",
        r"(module|argument).*(ignored|not used|unused)",
        r"NOTEBOOK_LAYER",
    ],
)
def rnn_reads_notebook_layer(module, input, hx=None):
    layer = NOTEBOOK_LAYER
    h = torch.zeros(input.shape[1], layer.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ layer.weight_ih_l0.T + layer.bias_ih_l0 + h @ layer.weight_hh_l0.T + layer.bias_hh_l0)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    RNN_BASIC,
    "the state lives in one buffer updated in place (h.copy_(...)): autograd needs the old h, so backward fails",
    [
        r"in[- ]place",
        r"copy_",
        r"(modified|overwrit).*(autograd|backward|gradient|saved)",
        r"(version|inplace operation)",
    ],
)
def rnn_inplace_state(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    h = torch.zeros(input.shape[1], module.hidden_size)
    out = []
    for x_t in input:
        h.copy_(torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh))
        out.append(h.clone())
    return torch.stack(out), h.unsqueeze(0).clone()


@wrong(
    RNN_STACK,
    "every layer adds layer 0's biases (bias_ih_l0, bias_hh_l0) instead of its own",
    [
        r"bias(es)?.*(layer 0|_l0|own|layer k|every layer)",
        r"bias_(ih|hh)_l[01]",
        r"(layer 1|upper layer|second layer).*bias",
        r"_l0 bias",
    ],
)
def rnn_stack_bias_l0(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    seq, last = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        seq, h = rnn_run(seq, h0[k], W_ih, W_hh, module.bias_ih_l0, module.bias_hh_l0)
        last.append(h)
    return seq, torch.stack(last)


@wrong(
    RNN_STACK,
    "h_n repeats the top layer's last state for every layer (output[-1] copied L times), not each layer's own",
    [
        r"h_n.*(every|each|all|lower) layers?",
        r"(copies|copy|repeat).*(top|output\[-1\])",
        r"output.*h_n.*(confus|differ|not the same)",
        r"(layer 0|lower layer|first layer).*(row|h_n|last state)",
    ],
    source="https://stackoverflow.com/questions/48302810",
)
def rnn_stack_hn_copies_top(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(L, B, H) if hx is None else hx
    seq = input
    for k in range(L):
        seq, _ = rnn_run(seq, h0[k], *layer_weights(module, k)[:4])
    return seq, seq[-1:].repeat(L, 1, 1)


@wrong(
    RNN_BI_HX,
    "the initial rows are swapped: the forward run starts from hx[1] and the backward run from hx[0]",
    [
        r"hx\[0\]|hx\[1\]",
        r"(initial|h_?0|starting) (rows?|states?).*(swap|exchang|wrong|other direction)",
        r"row 0.*forward|forward.*row 0",
        r"(direction|row).*(swap|order)",
    ],
)
def rnn_bi_h0_rows_swapped(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, hf = rnn_run(input, h0[1], *layer_weights(module, 0)[:4])
    bwd, hb = rnn_run(input.flip(0), h0[0], *layer_weights(module, 0, "_reverse")[:4])
    return torch.cat([fwd, bwd.flip(0)], -1), torch.stack([hf, hb])


@wrong(
    RNN_BI_HX,
    "h_n is output[-1] split into halves: its backward half is the backward run's FIRST step, not its last",
    [
        r"output\[-1\]",
        r"h_n.*(backward|reverse).*(first step|last (time )?step|wrong step|t ?= ?0|output\[0\])",
        r"backward.*(final|ends?|last).*(first step|t ?= ?0|step 0|output\[0\])",
        r"(where|after).*(backward|reverse).*(ends|finish)",
    ],
    source="https://github.com/pytorch/pytorch/issues/3587",
)
def rnn_bi_hn_from_output_last(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h0 = torch.zeros(2, B, H) if hx is None else hx
    fwd, _ = rnn_run(input, h0[0], *layer_weights(module, 0)[:4])
    bwd, _ = rnn_run(input.flip(0), h0[1], *layer_weights(module, 0, "_reverse")[:4])
    output = torch.cat([fwd, bwd.flip(0)], -1)
    return output, output[-1].view(B, 2, H).transpose(0, 1)


@wrong(
    RNN_BF_HX,
    "h_n is returned batch first, (B, 1, H): batch_first does not apply to h_n, which stays (1, B, H)",
    [
        r"batch[_ ]first.*(h_n|hidden|state)",
        r"h_n.*(shape|\(1, ?b|batch first|layer dim first|permut|transpos)",
        r"\(b, ?1, ?h\)",
        r"unsqueeze\(1\)",
    ],
    source="https://github.com/pytorch/pytorch/issues/19675",
)
def rnn_bf_hn_batch_first(module, input, hx=None):
    x = input.transpose(0, 1)
    B, H = x.shape[1], module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0]
    out, h = rnn_run(x, h, *layer_weights(module, 0)[:4])
    return out.transpose(0, 1), h.unsqueeze(1)


@wrong(
    RNN_BF_HX,
    "batch_first is ignored: the loop iterates over dim 0, the batch, as if it were time",
    [
        r"batch[_ ]first",
        r"(iterat|loop).*(batch|dim 0|first dim)",
        r"(time|batch).*(confus|swap|mix|dim)",
        r"transpos",
    ],
    source="https://github.com/pytorch/pytorch/issues/4145",
)
def rnn_bf_ignored(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b = module.bias_ih_l0 + module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    outs = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + h @ W_hh.T + b)
        outs.append(h)
    return torch.stack(outs, 1), h.unsqueeze(0)


@wrong(
    RNN_RELU,
    "tanh is used although the layer was built with nonlinearity='relu'",
    [r"relu", r"nonlinearity", r"tanh.*(instead|not|wrong)", r"activation"],
)
def rnn_relu_as_tanh(module, input, hx=None):
    h0 = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    out, h = rnn_run(input, h0, *layer_weights(module, 0)[:4])
    return out, h.unsqueeze(0)


@wrong(
    RNN_PACKED,
    "the padded batch is run to the end without a mask: h_n is the state after the padding for every shorter sequence",
    [
        r"(padding|padded|pad).*(h_n|state|steps|mask)",
        r"mask",
        r"h_n.*(last (valid|real)|own length|lengths)",
        r"(after|past|beyond) (the )?(end|length|padding)",
    ],
    source="https://github.com/bentrevett/pytorch-sentiment-analysis/issues/86",
)
def rnn_packed_no_mask(module, input, hx=None):
    padded, lengths = pad_packed_sequence(input)
    h0 = torch.zeros(padded.shape[1], module.hidden_size)
    out, h = rnn_run(padded, h0, *layer_weights(module, 0)[:4])
    return pack_padded_sequence(out, lengths, enforce_sorted=False), h.unsqueeze(0)


@wrong(
    RNN_PACKED,
    "output is returned as the padded tensor; for packed input torch returns a PackedSequence",
    [
        r"packedsequence",
        r"pack_padded_sequence|repack|not packed",
        r"(padded|plain) tensor",
        r"(output|result).*(type|structure)",
    ],
)
def rnn_packed_returns_padded(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B = x.shape[:2]
    step = rnn_layer_step(module)
    h = torch.zeros(B, module.hidden_size)
    rows = []
    for t in range(T):
        alive = (t < lengths).unsqueeze(1)
        new = step(x[t], h)
        h = torch.where(alive, new, h)
        rows.append(new * alive)
    return torch.stack(rows), h.unsqueeze(0)


@wrong(
    RNN_PACKED,
    "walking the packed data by batch_sizes, h_n is left in the sorted order: h[unsorted_indices] is missing",
    [
        r"sort",
        r"unsorted_indices|sorted_indices",
        r"(order|rows?).*(batch|original|permut|wrong)",
        r"enforce_sorted",
    ],
    source="https://github.com/pytorch/pytorch/issues/43227",
)
def rnn_packed_hn_sorted(module, input, hx=None):
    data, batch_sizes, sorted_indices, unsorted_indices = input
    step = rnn_layer_step(module)
    h = data.new_zeros(int(batch_sizes[0]), module.hidden_size)
    chunks, start = [], 0
    for n in batch_sizes.tolist():
        new = step(data[start : start + n], h[:n])
        chunks.append(new)
        h = torch.cat([new, h[n:]])
        start += n
    output = PackedSequence(torch.cat(chunks), batch_sizes, sorted_indices, unsorted_indices)
    return output, h.unsqueeze(0)


@wrong(
    RNN_UNBATCHED_HX,
    "unbatched input is given a batch of one, but h_n keeps that batch dim: (1, 1, H) instead of (1, H)",
    [
        r"unbatched",
        r"h_n.*(shape|squeeze|batch dim|\(1, ?h\))",
        r"squeeze",
        r"(extra|spurious|leftover) (batch )?dim",
    ],
)
def rnn_unbatched_keeps_batch(module, input, hx=None):
    x = input.unsqueeze(1)  # (T, 1, I)
    h0 = torch.zeros(1, module.hidden_size) if hx is None else hx[0].unsqueeze(0)
    out, h = rnn_run(x, h0, *layer_weights(module, 0)[:4])
    return out.squeeze(1), h.unsqueeze(0)


@wrong(
    RNN_UNBATCHED_HX,
    "unbatched input is unsqueezed at dim 0, (1, T, I), while the loop reads time first: one step over T 'sequences'",
    [
        r"unbatched",
        r"unsqueeze\((0|1)\)",
        r"(batch|time) (dim|dimension).*(wrong|front|position|dim 0)",
        r"(one|single) step",
        r"(no|without) recurrence",
    ],
)
def rnn_unbatched_unsqueeze0(module, input, hx=None):
    x = input.unsqueeze(0)
    h = torch.zeros(module.hidden_size) if hx is None else hx[0]
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    states = []
    for x_t in x:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output = torch.stack(states).squeeze(0)
    return output, output[-1:]


@wrong(
    RNN_NOBIAS,
    "module.all_weights[0] is unpacked into four tensors; with bias=False it holds only two",
    [r"bias", r"all_weights", r"unpack", r"bias=false|no bias|without bias"],
)
def rnn_nobias_unpack_four(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = module.all_weights[0]
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    out, h = rnn_run(input, h, W_ih, W_hh, b_ih, b_hh)
    return out, h.unsqueeze(0)


@wrong(
    RNN_STACK_BI_HX,
    "between layers the backward states are passed up still in reversed order (not flipped back); the final output is flipped",
    [
        r"flip(ped)? back",
        r"(backward|reverse).*(order|flip|aligned|time order)",
        r"(layer 2|layer 1|second layer|upper layer|next layer).*(reads|input|backward)",
        r"(misaligned|not aligned|time[- ]aligned)",
    ],
    source="https://github.com/d2l-ai/d2l-en/issues/2306",
)
def rnn_stack_bi_no_flip_between(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(2 * L, B, H) if hx is None else hx
    layer_in, finals = input, []
    for k in range(L):
        fwd, hf = rnn_run(layer_in, h0[2 * k], *layer_weights(module, k)[:4])
        bwd_rev, hb = rnn_run(layer_in.flip(0), h0[2 * k + 1], *layer_weights(module, k, "_reverse")[:4])
        finals += [hf, hb]
        if k == L - 1:
            layer_in = torch.cat([fwd, bwd_rev.flip(0)], -1)
        else:
            layer_in = torch.cat([fwd, bwd_rev], -1)
    return layer_in, torch.stack(finals)


@wrong(
    RNN_STACK_BI_HX,
    "h_n's rows are all forward layers then all backward ones; torch interleaves them, row = layer * 2 + direction",
    [
        r"h_n.*(order|rows?|interleav|layer ?\* ?2|layer\*d)",
        r"(rows?|directions?).*(order|interleav|grouped)",
        r"view\(l, ?d",
        r"layer ?\* ?(2|d|num_directions) ?\+ ?direction",
    ],
)
def rnn_stack_bi_hn_grouped(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(2 * L, B, H) if hx is None else hx
    layer_in, fwd_finals, bwd_finals = input, [], []
    for k in range(L):
        fwd, hf = rnn_run(layer_in, h0[2 * k], *layer_weights(module, k)[:4])
        bwd, hb = rnn_run(layer_in.flip(0), h0[2 * k + 1], *layer_weights(module, k, "_reverse")[:4])
        fwd_finals.append(hf)
        bwd_finals.append(hb)
        layer_in = torch.cat([fwd, bwd.flip(0)], -1)
    return layer_in, torch.stack(fwd_finals + bwd_finals)


@wrong(
    RNN_STACK_BI_HX,
    "layer k's initial rows are read as hx[k + d] instead of hx[2 * k + d]",
    [
        r"hx\[2 ?\* ?k",
        r"(initial|h_?0|starting) (rows?|states?).*(index|layer|wrong|row)",
        r"layer ?\* ?(2|d|num_directions) ?\+ ?direction",
        r"(index|row).*(2k|2 ?\* ?k)",
    ],
)
def rnn_stack_bi_hx_index(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(2 * L, B, H) if hx is None else hx
    layer_in, finals = input, []
    for k in range(L):
        halves = []
        for d, suffix in enumerate(("", "_reverse")):
            seq = layer_in if d == 0 else layer_in.flip(0)
            states, h_last = rnn_run(seq, h0[k + d], *layer_weights(module, k, suffix)[:4])
            halves.append(states if d == 0 else states.flip(0))
            finals.append(h_last)
        layer_in = torch.cat(halves, -1)
    return layer_in, torch.stack(finals)


@wrong(
    RNN_F64,
    "the zero initial state is made with torch.zeros(B, H), float32, against float64 weights and input",
    [r"float32|float64|dtype|double", r"(initial|zero) state.*(dtype|type|float)", r"new_zeros|dtype="],
)
def rnn_f64_h0_float32(module, input, hx=None):
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    out, h = rnn_run(input, h, W_ih, W_hh, b_ih, b_hh)
    return out, h.unsqueeze(0)


@wrong(
    RNN_F64,
    "output is written into a preallocated torch.zeros(T, B, H) buffer, float32: the float64 values lose precision",
    [r"float32|float64|dtype|double", r"(buffer|preallocat|zeros).*(dtype|type|float)", r"precision"],
)
def rnn_f64_buffer_float32(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    output = torch.zeros(T, B, H)
    h = input.new_zeros(B, H) if hx is None else hx[0]
    step = rnn_layer_step(module)
    for t in range(T):
        h = step(input[t], h)
        output[t] = h
    return output, h.unsqueeze(0)


@right(RNN_PACKED, "the packed data walked by hand with batch_sizes, h_n put back with unsorted_indices")
def rnn_packed_walk(module, input, hx=None):
    data, batch_sizes, sorted_indices, unsorted_indices = input
    step = rnn_layer_step(module)
    h = data.new_zeros(int(batch_sizes[0]), module.hidden_size)
    if hx is not None:
        h = hx[0].index_select(0, sorted_indices)
    chunks, start = [], 0
    for n in batch_sizes.tolist():
        new = step(data[start : start + n], h[:n])
        chunks.append(new)
        h = torch.cat([new, h[n:]])
        start += n
    output = PackedSequence(torch.cat(chunks), batch_sizes, sorted_indices, unsorted_indices)
    return output, h.index_select(0, unsorted_indices).unsqueeze(0)


@right(RNN_UNBATCHED_HX, "nn.RNNCell-free: 1-D states throughout, F.linear on vectors")
def rnn_unbatched_vectors(module, input, hx=None):
    h = input.new_zeros(module.hidden_size) if hx is None else hx[0]
    rows = []
    for x_t in input:
        h = torch.tanh(
            functional.linear(x_t, module.weight_ih_l0, module.bias_ih_l0)
            + functional.linear(h, module.weight_hh_l0, module.bias_hh_l0)
        )
        rows.append(h)
    return torch.stack(rows), h.unsqueeze(0)


# ---- LSTM ---------------------------------------------------------------------------------------


@wrong(
    LSTM_BASIC,
    "the four blocks are read as i, f, o, g: the candidate and the output gate are swapped",
    [
        r"(gate )?order",
        r"i, ?f, ?o, ?g",
        r"i, ?f, ?g, ?o",
        r"\bg\b.*\bo\b.*(swap|exchang)",
        r"(third|fourth) (block|chunk)",
    ],
)
def lstm_layer_ifog(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (torch.zeros(B, H), torch.zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    hs = []
    for x_t in input:
        i, f, o, g = (functional.linear(x_t, W_ih, b_ih) + functional.linear(h, W_hh, b_hh)).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        hs.append(h)
    return torch.stack(hs), (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_BASIC,
    "the final pair is returned as (c_n, h_n): torch returns (h_n, c_n)",
    [
        r"\(c_n, ?h_n\)|\(h_n, ?c_n\)",
        r"(order|swap).*(pair|tuple|h_n|c_n)",
        r"h_n.*first",
        r"(returned|return) (the )?(wrong|other) order",
    ],
)
def lstm_layer_pair_swapped(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h, c = (input.new_zeros(B, H),) * 2 if hx is None else (hx[0][0], hx[1][0])
    params = layer_weights(module, 0)[:4]
    outs = []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, *params)
        outs.append(h)
    return torch.stack(outs), (c[None], h[None])


@wrong(
    LSTM_BASIC,
    "the result is a flat (output, h_n, c_n); torch returns (output, (h_n, c_n))",
    [
        r"(nested|flat) tuple",
        r"\(output, ?\(h_n, ?c_n\)\)",
        r"(h_n, ?c_n).*(pair|together|tuple)",
        r"(three|3) (values|items|elements)",
    ],
)
def lstm_layer_flat_tuple(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0][0]
    c = torch.zeros(B, H) if hx is None else hx[1][0]
    outs = []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, *layer_weights(module, 0)[:4])
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0), c.unsqueeze(0)


@wrong(
    LSTM_HX,
    "the given state is unpacked as c0, h0 = hx: h and c start from each other's values",
    [
        r"c0, ?h0|h0, ?c0|\(h_0, ?c_0\)",
        r"(hx|initial state).*(unpack|order|swap|tuple)",
        r"hx\[0\].*\bh\b|hx\[1\].*\bc\b",
        r"(h|c)_?0.*(swap|exchang|other)",
    ],
)
def lstm_hx_unpacked_swapped(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    if hx is None:
        h, c = torch.zeros(B, H), torch.zeros(B, H)
    else:
        c0, h0 = hx
        h, c = h0[0], c0[0]
    outs = []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, *layer_weights(module, 0)[:4])
        outs.append(h)
    return torch.stack(outs), (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_HX,
    "c0 from hx is ignored: the cell always starts at zeros (only h0 is taken from hx)",
    [
        r"c_?0",
        r"(initial )?cell state.*(zero|ignored|not used)",
        r"hx\[1\]",
        r"(ignor|never us|not us).*(c_?0|cell)",
    ],
)
def lstm_hx_c0_ignored(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0][0]
    c = torch.zeros(B, H)
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    outs = []
    for x_t in input:
        gates = x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh
        i, f, g, o = gates.chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        outs.append(h)
    return torch.stack(outs), (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_PROJ,
    "output stores the unprojected o * tanh(c) (size H) while the recurrence uses the projected h (size P)",
    [
        r"proj(ection|_size|ected)",
        r"weight_hr|w_hr",
        r"output.*(size|shape).*(proj|p\b|hidden)",
        r"unprojected|before (the )?projection",
    ],
    source="https://github.com/pytorch/pytorch/issues/65053",
)
def lstm_proj_output_unprojected(module, input, hx=None):
    B, H, P = input.shape[1], module.hidden_size, module.proj_size
    h = torch.zeros(B, P) if hx is None else hx[0][0]
    c = torch.zeros(B, H) if hx is None else hx[1][0]
    W_ih, W_hh, b_ih, b_hh, W_hr = layer_weights(module, 0)
    outs = []
    for x_t in input:
        i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        full = torch.sigmoid(o) * torch.tanh(c)
        outs.append(full)
        h = full @ W_hr.T
    return torch.stack(outs), (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_PROJ,
    "c_n is projected too (c @ W_hr^T): only h is projected, c keeps hidden_size",
    [
        r"c_n.*(proj|size|shape|hidden_size|\bh\b)",
        r"proj.*(only|just) (h|the hidden)",
        r"(cell|c\b).*(not projected|keeps|hidden_size)",
        r"weight_hr|w_hr",
    ],
    source="https://github.com/pytorch/pytorch/issues/65053",
)
def lstm_proj_cn_projected(module, input, hx=None):
    B, H, P = input.shape[1], module.hidden_size, module.proj_size
    h = torch.zeros(B, P) if hx is None else hx[0][0]
    c = torch.zeros(B, H) if hx is None else hx[1][0]
    W_ih, W_hh, b_ih, b_hh, W_hr = layer_weights(module, 0)
    outs = []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, W_ih, W_hh, b_ih, b_hh, W_hr)
        outs.append(h)
    return torch.stack(outs), (h.unsqueeze(0), (c @ W_hr.T).unsqueeze(0))


def _lstm_bi_stack_time_first(module, x, hx):
    """A student's correct time-first stacked bidirectional LSTM, used by the two batch_first slips below."""
    L, B, H = module.num_layers, x.shape[1], module.hidden_size
    h0 = torch.zeros(2 * L, B, H) if hx is None else hx[0]
    c0 = torch.zeros(2 * L, B, H) if hx is None else hx[1]
    layer_in, hs, cs = x, [], []
    for k in range(L):
        halves = []
        for d, suffix in enumerate(("", "_reverse")):
            params = layer_weights(module, k, suffix)[:4]
            h, c, states = h0[2 * k + d], c0[2 * k + d], []
            seq = layer_in if d == 0 else layer_in.flip(0)
            for x_t in seq:
                h, c = lstm_cell(x_t, h, c, *params)
                states.append(h)
            states = torch.stack(states)
            halves.append(states if d == 0 else states.flip(0))
            hs.append(h)
            cs.append(c)
        layer_in = torch.cat(halves, dim=2)
    return layer_in, torch.stack(hs), torch.stack(cs)


@wrong(
    LSTM_STACK_BI_BF,
    "h_n and c_n are permuted to batch first, (B, 2L, H): batch_first leaves them (2L, B, H)",
    [
        r"batch[_ ]first.*(h_n|c_n|hidden|state)",
        r"(h_n|c_n).*(shape|permut|transpos|batch first|\(2l|\(4, ?b|d ?\* ?l)",
        r"permute",
    ],
    source="https://github.com/pytorch/pytorch/issues/19675",
)
def lstm_bf_states_permuted(module, input, hx=None):
    out, h_n, c_n = _lstm_bi_stack_time_first(module, input.transpose(0, 1), hx)
    return out.transpose(0, 1), (h_n.permute(1, 0, 2), c_n.permute(1, 0, 2))


@wrong(
    LSTM_STACK_BI_BF,
    "the input is turned time first for the loop, but output is not turned back: (T, B, 2H) instead of (B, T, 2H)",
    [
        r"batch[_ ]first",
        r"output.*(transpos|shape|time first|\(t, ?b|\(b, ?t)",
        r"(transpose|permute).*(back|output)",
    ],
)
def lstm_bf_output_time_first(module, input, hx=None):
    out, h_n, c_n = _lstm_bi_stack_time_first(module, input.transpose(0, 1), hx)
    return out, (h_n, c_n)


@wrong(
    LSTM_PACKED_HX,
    "the mask freezes h after each sequence's end but not c: c keeps updating through the padding, so c_n is wrong",
    [
        r"c_n.*(padding|pad|mask|after|past|beyond|length|frozen)",
        r"(cell|c\b).*(mask|padding|frozen|freeze|keeps? (updating|running))",
        r"mask.*(cell|c\b|both)",
        r"(padding|padded).*(cell|c_n)",
    ],
)
def lstm_packed_mask_h_only(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B = x.shape[:2]
    H = module.hidden_size
    h = torch.zeros(B, H) if hx is None else hx[0][0]
    c = torch.zeros(B, H) if hx is None else hx[1][0]
    params = layer_weights(module, 0)[:4]
    outs = []
    for t in range(T):
        live = (t < lengths).unsqueeze(1)
        h_new, c = lstm_cell(x[t], h, c, *params)
        h = torch.where(live, h_new, h)
        outs.append(h_new * live)
    out = pack_padded_sequence(torch.stack(outs), lengths, enforce_sorted=False)
    return out, (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_PACKED_HX,
    "walking the packed data (sorted order), hx is used in the batch's order: hx[...][sorted_indices] is missing",
    [
        r"sort",
        r"sorted_indices",
        r"(hx|initial state).*(order|permut|sequence|wrong (row|sequence))",
        r"(rows?|states?).*(paired|matched).*(wrong|other) sequences?",
    ],
    source="https://github.com/pytorch/pytorch/issues/43227",
)
def lstm_packed_hx_not_sorted(module, input, hx=None):
    data, batch_sizes, sorted_indices, unsorted_indices = input
    H = module.hidden_size
    B = int(batch_sizes[0])
    h = torch.zeros(B, H) if hx is None else hx[0][0]
    c = torch.zeros(B, H) if hx is None else hx[1][0]
    params = layer_weights(module, 0)[:4]
    pieces, at = [], 0
    for n in batch_sizes.tolist():
        h_new, c_new = lstm_cell(data[at : at + n], h[:n], c[:n], *params)
        pieces.append(h_new)
        h, c = torch.cat([h_new, h[n:]]), torch.cat([c_new, c[n:]])
        at += n
    out = PackedSequence(torch.cat(pieces), batch_sizes, sorted_indices, unsorted_indices)
    return out, (h[unsorted_indices].unsqueeze(0), c[unsorted_indices].unsqueeze(0))


@wrong(
    LSTM_STACK_HX,
    "every layer's cell starts from c0[0]: the h rows are per layer, the c rows are not",
    [
        r"c_?0\[k\]|c_?0\[0\]|hx\[1\]\[k\]",
        r"(initial )?cell state.*(row|layer)",
        r"(c|cell).*(own row|layer 0|first row|every layer)",
    ],
)
def lstm_stack_c0_row0(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0, c0 = (torch.zeros(L, B, H), torch.zeros(L, B, H)) if hx is None else hx
    layer_in, hs, cs = input, [], []
    for k in range(L):
        h, c = h0[k], c0[0]
        params = layer_weights(module, k)[:4]
        seq = []
        for x_t in layer_in:
            h, c = lstm_cell(x_t, h, c, *params)
            seq.append(h)
        layer_in = torch.stack(seq)
        hs.append(h)
        cs.append(c)
    return layer_in, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM_STACK_HX,
    "layer 1 reads layer 0's cell states c_t instead of its hidden states h_t",
    [
        r"(cell|c_t|c\b).*(instead of|not) (the )?(hidden|h_t|h\b)",
        r"(layer 1|upper layer|next layer|second layer).*(reads|input).*(cell|c\b)",
        r"(hidden states?|h_t).*(layer below|input)",
        r"wiring|wired",
    ],
)
def lstm_stack_reads_cells(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0, c0 = (torch.zeros(L, B, H), torch.zeros(L, B, H)) if hx is None else hx
    layer_in, hs, cs = input, [], []
    for k in range(L):
        h, c = h0[k], c0[k]
        params = layer_weights(module, k)[:4]
        h_seq, c_seq = [], []
        for x_t in layer_in:
            h, c = lstm_cell(x_t, h, c, *params)
            h_seq.append(h)
            c_seq.append(c)
        layer_in = torch.stack(h_seq) if k == L - 1 else torch.stack(c_seq)
        hs.append(h)
        cs.append(c)
    return layer_in, (torch.stack(hs), torch.stack(cs))


@wrong(
    LSTM_UNBATCHED,
    "for unbatched input h_n and c_n are returned as (H,): the layer dimension is missing, torch gives (1, H)",
    [
        r"unbatched",
        r"(h_n|c_n).*(shape|layer dim|\(1, ?h\)|unsqueeze)",
        r"(missing|forgot|without).*(layer dim|leading dim|unsqueeze)",
    ],
)
def lstm_unbatched_no_layer_dim(module, input, hx=None):
    H = module.hidden_size
    h = input.new_zeros(H) if hx is None else hx[0][0]
    c = input.new_zeros(H) if hx is None else hx[1][0]
    outs = []
    for x_t in input:
        h, c = lstm_cell(x_t, h, c, *layer_weights(module, 0)[:4])
        outs.append(h)
    return torch.stack(outs), (h, c)


@wrong(
    LSTM_UNBATCHED,
    "1 is added to the forget gate's pre-activation (a forget-bias init trick from other libraries): torch adds nothing",
    [
        r"forget.*(bias|\+ ?1|one)",
        r"\+ ?1",
        r"(unit_forget_bias|forget_bias)",
        r"(extra|constant|added).*(forget|bias)",
    ],
    source="https://github.com/pytorch/pytorch/issues/20102",
)
def lstm_unbatched_forget_plus_one(module, input, hx=None):
    H = module.hidden_size
    h = input.new_zeros(H) if hx is None else hx[0][0]
    c = input.new_zeros(H) if hx is None else hx[1][0]
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    outs = []
    for x_t in input:
        a = W_ih @ x_t + b_ih + W_hh @ h + b_hh
        i, f, g, o = a[:H], a[H : 2 * H], a[2 * H : 3 * H], a[3 * H :]
        c = torch.sigmoid(f + 1.0) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs), (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_NOBIAS_F64,
    "output is collected in a torch.empty(T, B, H) buffer, float32 by default: the float64 result comes back float32",
    [r"float32|float64|dtype|double", r"(buffer|preallocat|empty).*(dtype|type|float)", r"precision"],
)
def lstm_f64_buffer_float32(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    h = input.new_zeros(B, H) if hx is None else hx[0][0]
    c = input.new_zeros(B, H) if hx is None else hx[1][0]
    output = torch.empty(T, B, H)
    for t in range(T):
        i, f, g, o = (input[t] @ W_ih.T + h @ W_hh.T).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        output[t] = h
    return output, (h.unsqueeze(0), c.unsqueeze(0))


@wrong(
    LSTM_STACK_BI_PROJ,
    "the backward direction projects with the forward direction's weight_hr_l{k} instead of weight_hr_l{k}_reverse",
    [
        r"weight_hr.*(_reverse|backward|forward)",
        r"_reverse",
        r"(backward|reverse).*(proj|weight_hr|w_hr)",
        r"proj.*(direction|backward|forward)",
    ],
)
def lstm_bi_proj_forward_hr(module, input, hx=None):
    L, B, H, P = module.num_layers, input.shape[1], module.hidden_size, module.proj_size
    h0 = torch.zeros(2 * L, B, P) if hx is None else hx[0]
    c0 = torch.zeros(2 * L, B, H) if hx is None else hx[1]
    layer_in, hs, cs = input, [], []
    for k in range(L):
        W_hr = getattr(module, f"weight_hr_l{k}")
        halves = []
        for d, suffix in enumerate(("", "_reverse")):
            W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, k, suffix)
            h, c = h0[2 * k + d], c0[2 * k + d]
            order = range(input.shape[0]) if d == 0 else reversed(range(input.shape[0]))
            slots = [None] * input.shape[0]
            for t in order:
                h, c = lstm_cell(layer_in[t], h, c, W_ih, W_hh, b_ih, b_hh, W_hr)
                slots[t] = h
            halves.append(torch.stack(slots))
            hs.append(h)
            cs.append(c)
        layer_in = torch.cat(halves, -1)
    return layer_in, (torch.stack(hs), torch.stack(cs))


@right(LSTM_STACK_BI_PROJ, "a general stacked, bidirectional, projected LSTM over a list of (k, direction) runs")
def lstm_bi_proj_general(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    P = module.proj_size or H
    h0 = input.new_zeros(2 * L, B, P) if hx is None else hx[0]
    c0 = input.new_zeros(2 * L, B, H) if hx is None else hx[1]
    layer_in, hs, cs = input, [], []
    for k in range(L):
        halves = []
        for d, suffix in enumerate(("", "_reverse")):
            params = layer_weights(module, k, suffix)
            seq = layer_in.flip(0) if d else layer_in
            h, c, states = h0[2 * k + d], c0[2 * k + d], []
            for x_t in seq:
                h, c = lstm_cell(x_t, h, c, *params)
                states.append(h)
            states = torch.stack(states)
            halves.append(states.flip(0) if d else states)
            hs.append(h)
            cs.append(c)
        layer_in = torch.cat(halves, -1)
    return layer_in, (torch.stack(hs), torch.stack(cs))


@right(LSTM_PACKED_HX, "padded loop with torch.where freezing both h and c, repacked with enforce_sorted=False")
def lstm_packed_where(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B = x.shape[:2]
    H = module.hidden_size
    h = x.new_zeros(B, H) if hx is None else hx[0][0]
    c = x.new_zeros(B, H) if hx is None else hx[1][0]
    params = layer_weights(module, 0)[:4]
    outs = []
    for t in range(T):
        live = (t < lengths).unsqueeze(1)
        h_new, c_new = lstm_cell(x[t], h, c, *params)
        h, c = torch.where(live, h_new, h), torch.where(live, c_new, c)
        outs.append(h_new * live)
    return pack_padded_sequence(torch.stack(outs), lengths, enforce_sorted=False), (h[None], c[None])


# ---- GRU ----------------------------------------------------------------------------------------


def _gru_weights(module, k=0, suffix=""):
    """The three row blocks r, z, n of each GRU parameter (correct), as a student's dict."""
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, k, suffix)
    out = {}
    for gate, wi, wh in zip("rzn", W_ih.chunk(3), W_hh.chunk(3)):
        out["W_i" + gate], out["W_h" + gate] = wi, wh
    for gate, bi, bh in zip("rzn", b_ih.chunk(3), b_hh.chunk(3)):
        out["b_i" + gate], out["b_h" + gate] = bi, bh
    return out


@wrong(
    GRU_BASIC,
    "the reset gate multiplies h before the product, (r * h) W_hn^T + b_hn, as in the paper's final version, not torch's",
    [
        r"reset.*(before|after) (the )?(product|matmul|multiplication)",
        r"r ?\* ?h",
        r"\(r ?\* ?h\)",
        r"(paper|cho|original|final version).*(reset|gru)",
    ],
    source="https://github.com/pytorch/pytorch/issues/99531",
)
def gru_layer_reset_before(module, input, hx=None):
    p = _gru_weights(module)
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    outs = []
    for x in input:
        r = torch.sigmoid(x @ p["W_ir"].T + p["b_ir"] + h @ p["W_hr"].T + p["b_hr"])
        z = torch.sigmoid(x @ p["W_iz"].T + p["b_iz"] + h @ p["W_hz"].T + p["b_hz"])
        n = torch.tanh(x @ p["W_in"].T + p["b_in"] + (r * h) @ p["W_hn"].T + p["b_hn"])
        h = (1 - z) * n + z * h
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0)


@wrong(
    GRU_BASIC,
    "the update gate's roles are swapped: h = z * n + (1 - z) * h_prev instead of (1 - z) * n + z * h_prev",
    [
        r"\(1 ?- ?z\)",
        r"(update gate|z\b).*(convention|flipped|swapped|other way|keeps|share|roles)",
        r"z ?\* ?n",
        r"z ?\* ?h",
    ],
    source="https://github.com/keras-team/keras/issues/20535",
)
def gru_layer_z_swapped(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    h = input.new_zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    outs = []
    for x_t in input:
        xr, xz, xn = functional.linear(x_t, W_ih, b_ih).chunk(3, 1)
        hr, hz, hn = functional.linear(h, W_hh, b_hh).chunk(3, 1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        h = z * n + (1 - z) * h
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0)


@wrong(
    GRU_BASIC,
    "the blocks are read as z, r, n (Keras's order) against torch's r, z, n",
    [r"(gate |block )?order", r"z, ?r", r"r, ?z, ?n", r"\br\b.*\bz\b.*(swap|exchang)", r"keras"],
)
def gru_layer_order_zrn(module, input, hx=None):
    H = module.hidden_size
    W_ih, W_hh, b_ih, b_hh, _ = layer_weights(module, 0)
    h = torch.zeros(input.shape[1], H) if hx is None else hx[0]
    outs = []
    for x_t in input:
        gi = torch.addmm(b_ih, x_t, W_ih.T)
        gh = torch.addmm(b_hh, h, W_hh.T)
        z = torch.sigmoid(gi[:, :H] + gh[:, :H])
        r = torch.sigmoid(gi[:, H : 2 * H] + gh[:, H : 2 * H])
        n = torch.tanh(gi[:, 2 * H :] + r * gh[:, 2 * H :])
        h = (1 - z) * n + z * h
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0)


@wrong(
    GRU_BASIC,
    "the state is detached at every step (a habit from truncated BPTT): the gradients stop at each step",
    [r"detach", r"(gradient|backprop|autograd).*(through time|cut|stop|truncat|earlier steps|lost)", r"truncat"],
)
def gru_layer_detach_each_step(module, input, hx=None):
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    params = layer_weights(module, 0)[:4]
    outs = []
    for x_t in input:
        h = gru_cell(x_t, h.detach(), *params)
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0)


@wrong(
    GRU_HX,
    "the new state is never carried: every step starts again from h0, so h_n is just the last step from h0",
    [
        r"(state|h).*(not|never) (carried|updated|passed|reassigned)",
        r"(every|each) step.*(h_?0|initial state)",
        r"(no|without) recurrence",
        r"h_prev.*(same|fixed|initial)",
    ],
)
def gru_state_not_carried(module, input, hx=None):
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    params = layer_weights(module, 0)[:4]
    outs = [gru_cell(x_t, h, *params) for x_t in input]
    return torch.stack(outs), outs[-1].unsqueeze(0)


@wrong(
    GRU_STACK_BI,
    "layer 1 reads layer 0's halves as cat([backward, forward]); the final output keeps forward first",
    [
        r"(halves|half|directions?).*(swap|order|reversed|wrong)",
        r"(layer 1|upper layer|next layer|second layer).*(reads|input|halves)",
        r"backward (half )?first",
        r"wiring|wired",
    ],
)
def gru_stack_bi_halves_swapped_between(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(2 * L, B, H) if hx is None else hx
    layer_in, finals = input, []
    for k in range(L):
        runs = []
        for d, suffix in enumerate(("", "_reverse")):
            params = layer_weights(module, k, suffix)[:4]
            seq = layer_in.flip(0) if d else layer_in
            h, states = h0[2 * k + d], []
            for x_t in seq:
                h = gru_cell(x_t, h, *params)
                states.append(h)
            states = torch.stack(states)
            runs.append(states.flip(0) if d else states)
            finals.append(h)
        layer_in = torch.cat(runs, -1) if k == L - 1 else torch.cat(runs[::-1], -1)
    return layer_in, torch.stack(finals)


@wrong(
    GRU_STACK_BI,
    "h_n puts the top layer first: rows [l1 fwd, l1 bwd, l0 fwd, l0 bwd] instead of layer 0 first",
    [
        r"h_n.*(order|reversed|top (layer )?first|layer 0 first)",
        r"(rows?|layers?).*(reversed|wrong order|backwards)",
        r"layer ?\* ?(2|d|num_directions) ?\+ ?direction",
    ],
)
def gru_stack_bi_hn_top_first(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = torch.zeros(2 * L, B, H) if hx is None else hx
    layer_in, per_layer = input, []
    for k in range(L):
        runs, ends = [], []
        for d, suffix in enumerate(("", "_reverse")):
            params = layer_weights(module, k, suffix)[:4]
            seq = layer_in.flip(0) if d else layer_in
            h, states = h0[2 * k + d], []
            for x_t in seq:
                h = gru_cell(x_t, h, *params)
                states.append(h)
            states = torch.stack(states)
            runs.append(states.flip(0) if d else states)
            ends.append(h)
        per_layer.append(ends)
        layer_in = torch.cat(runs, -1)
    return layer_in, torch.stack([h for ends in reversed(per_layer) for h in ends])


@wrong(
    GRU_PACKED_BF,
    "the batch-first output is repacked without batch_first=True: pack_padded_sequence reads its batch dim as time",
    [
        r"batch[_ ]first",
        r"pack_padded_sequence.*(batch_first|flag)",
        r"(repack|pack).*(batch_first|time first|dim)",
        r"(time|batch).*(confus|swap|mix)",
    ],
)
def gru_packed_bf_repack_flag(module, input, hx=None):
    x, lengths = pad_packed_sequence(input, batch_first=True)  # (B, T, I)
    B, T = x.shape[:2]
    h = x.new_zeros(B, module.hidden_size) if hx is None else hx[0]
    params = layer_weights(module, 0)[:4]
    cols = []
    for t in range(T):
        keep = (t < lengths).unsqueeze(1)
        new = gru_cell(x[:, t], h, *params)
        h = torch.where(keep, new, h)
        cols.append(new * keep)
    out = torch.stack(cols, dim=1)  # (B, T, H)
    return pack_padded_sequence(out, lengths, enforce_sorted=False), h.unsqueeze(0)


@wrong(
    GRU_PACKED_BF,
    "input.batch_sizes is read as the sequences' lengths: it counts the sequences alive at each step",
    [r"batch_sizes", r"lengths.*(batch_sizes|wrong|from)", r"(alive|active|per step|each step).*(count|sequences)"],
)
def gru_packed_batch_sizes_as_lengths(module, input, hx=None):
    lengths = input.batch_sizes
    x, _ = pad_packed_sequence(input, batch_first=True)
    B, T = x.shape[:2]
    h = x.new_zeros(B, module.hidden_size) if hx is None else hx[0]
    params = layer_weights(module, 0)[:4]
    cols = []
    for t in range(T):
        keep = (t < lengths[:B]).unsqueeze(1)
        new = gru_cell(x[:, t], h, *params)
        h = torch.where(keep, new, h)
        cols.append(new * keep)
    out = torch.stack(cols, dim=1)
    return pack_padded_sequence(out, lengths[:B], batch_first=True, enforce_sorted=False), h.unsqueeze(0)


@wrong(
    GRU_NOBIAS,
    "the r, z, n row blocks are cut with input_size instead of hidden_size",
    [
        r"input_size",
        r"(cut|slic|block|rows?).*hidden_size",
        r"(block|slice|rows?|chunk).*(size|wrong|boundar)",
        r"chunk\(3\)",
    ],
)
def gru_nobias_blocks_by_input(module, input, hx=None):
    n_in, H = module.input_size, module.hidden_size
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    W_ir, W_iz, W_in = W_ih[:n_in], W_ih[n_in : 2 * n_in], W_ih[2 * n_in :]
    W_hr, W_hz, W_hn = W_hh[:H], W_hh[H : 2 * H], W_hh[2 * H :]
    h = torch.zeros(input.shape[1], H) if hx is None else hx[0]
    outs = []
    for x_t in input:
        r = torch.sigmoid(x_t @ W_ir.T + h @ W_hr.T)
        z = torch.sigmoid(x_t @ W_iz.T + h @ W_hz.T)
        n = torch.tanh(x_t @ W_in.T + r * (h @ W_hn.T))
        h = (1 - z) * n + z * h
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(0)


@wrong(
    GRU_STACK3_HX,
    "every layer starts from hx[-1], the top layer's row, instead of its own hx[k]",
    [r"hx\[k\]", r"hx\[-1\]", r"(initial|h_?0|starting).*(row|state).*(layer|k\b)", r"own row"],
)
def gru_stack_all_from_last_row(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    start = torch.zeros(B, H) if hx is None else hx[-1]
    seq, finals = input, []
    for k in range(L):
        params = layer_weights(module, k)[:4]
        h, states = start, []
        for x_t in seq:
            h = gru_cell(x_t, h, *params)
            states.append(h)
        seq = torch.stack(states)
        finals.append(h)
    return seq, torch.stack(finals)


@wrong(
    GRU_STACK3_HX,
    "each upper layer reads only the last state of the layer below, repeated at every step, not its state at each step",
    [
        r"(last|final) state.*(repeat|every step|broadcast|expand)",
        r"(layer below|lower layer).*(each|every|same) (time )?step",
        r"(states|output) of (the )?layer below",
        r"wiring|wired",
        r"h_n.*(input|fed)",
    ],
)
def gru_stack_reads_final_only(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    T = input.shape[0]
    h0 = torch.zeros(L, B, H) if hx is None else hx
    seq, finals = input, []
    for k in range(L):
        params = layer_weights(module, k)[:4]
        h, states = h0[k], []
        for x_t in seq:
            h = gru_cell(x_t, h, *params)
            states.append(h)
        finals.append(h)
        seq = torch.stack(states) if k == L - 1 else h.unsqueeze(0).expand(T, B, H)
    return seq, torch.stack(finals)


@wrong(
    GRU_F64_UNBATCHED,
    "the step goes through numpy (np.tanh, np.exp on detached arrays): values match, gradients are gone",
    [r"numpy", r"detach", r"(gradient|autograd|graph).*(lost|cut|broken|none|missing|no)"],
)
def gru_numpy_step(module, input, hx=None):
    W_ih, W_hh, b_ih, b_hh = (p.detach().numpy() for p in layer_weights(module, 0)[:4])
    H = module.hidden_size
    h = np.zeros(H) if hx is None else hx[0].detach().numpy()
    rows = []
    for x_t in input.detach().numpy():
        gi, gh = W_ih @ x_t + b_ih, W_hh @ h + b_hh
        r = 1 / (1 + np.exp(-(gi[:H] + gh[:H])))
        z = 1 / (1 + np.exp(-(gi[H : 2 * H] + gh[H : 2 * H])))
        n = np.tanh(gi[2 * H :] + r * gh[2 * H :])
        h = (1 - z) * n + z * h
        rows.append(h)
    return torch.from_numpy(np.stack(rows)), torch.from_numpy(h).unsqueeze(0)


@wrong(
    GRU_F64_UNBATCHED,
    "h_n is unsqueezed at dim 1, (H, 1), instead of dim 0, (1, H)",
    [r"unsqueeze", r"h_n.*(shape|\(1, ?h\)|\(h, ?1\)|dim)", r"(layer|leading) dim"],
)
def gru_unbatched_unsqueeze1(module, input, hx=None):
    h = input.new_zeros(module.hidden_size) if hx is None else hx[0]
    params = layer_weights(module, 0)[:4]
    outs = []
    for x_t in input:
        h = gru_cell(x_t, h, *params)
        outs.append(h)
    return torch.stack(outs), h.unsqueeze(1)


@right(GRU_PACKED_BF, "batch-first padded loop over columns, a float mask, repacked with batch_first=True")
def gru_packed_bf_right(module, input, hx=None):
    x, lengths = pad_packed_sequence(input, batch_first=True)
    B, T = x.shape[:2]
    h = x.new_zeros(B, module.hidden_size) if hx is None else hx[0]
    p = _gru_weights(module)
    cols = []
    for t in range(T):
        m = (t < lengths).to(x.dtype).unsqueeze(1)
        x_t = x[:, t]
        r = torch.sigmoid(x_t @ p["W_ir"].T + p["b_ir"] + h @ p["W_hr"].T + p["b_hr"])
        z = torch.sigmoid(x_t @ p["W_iz"].T + p["b_iz"] + h @ p["W_hz"].T + p["b_hz"])
        n = torch.tanh(x_t @ p["W_in"].T + p["b_in"] + r * (h @ p["W_hn"].T + p["b_hn"]))
        new = (1 - z) * n + z * h
        h = m * new + (1 - m) * h
        cols.append(m * new)
    out = torch.stack(cols, dim=1)
    return pack_padded_sequence(out, lengths, batch_first=True, enforce_sorted=False), h.unsqueeze(0)


@right(GRU_F64_UNBATCHED, "nn.GRUCell-style vectors in float64, the state list built by a comprehension over a scan")
def gru_unbatched_scan(module, input, hx=None):
    params = layer_weights(module, 0)[:4]
    states = [input.new_zeros(module.hidden_size) if hx is None else hx[0]]
    for x_t in input:
        states.append(gru_cell(x_t, states[-1], *params))
    return torch.stack(states[1:]), states[-1][None]


@right(GRU_STACK_BI, "a recursive helper: the stack is one layer on top of the stack below")
def gru_stack_bi_recursive(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h0 = input.new_zeros(2 * L, B, H) if hx is None else hx

    def run(k):
        below = input if k == 0 else run(k - 1)[0]
        finals_below = [] if k == 0 else run(k - 1)[1]
        halves, ends = [], []
        for d, suffix in enumerate(("", "_reverse")):
            params = layer_weights(module, k, suffix)[:4]
            h, states = h0[2 * k + d], []
            for x_t in below.flip(0) if d else below:
                h = gru_cell(x_t, h, *params)
                states.append(h)
            halves.append(torch.stack(states[::-1] if d else states))
            ends.append(h)
        return torch.cat(halves, -1), finals_below + ends

    output, finals = run(L - 1)
    return output, torch.stack(finals)
