"""A third, fresh set of wrong student versions: an independent measure of how well the checks name bugs.

benchmarks/wrong_versions.py is the set the checks were tuned on, and the checks have since been
tuned on benchmarks/wrong_versions_holdout.py as well, so neither score is an honest one any more.
This set was written after both, without opening either set's versions, the checks' catalogue of
bugs or their tests (helpers/bugs.py, helpers/diagnosis.py, helpers/exercises.py,
helpers/solutions/, helpers/answer_key.py, tests/): only from the exercises' statements and stubs
(notebooks/NN_*.ipynb), the worked answers `helpers.exercises.solution(key)` prints, the README's
description of `diagnose`, everyday slips in hand-written RNN, LSTM and GRU code, and public bug
reports and forum threads (each cited beside the version drawn from it, as `source`).

It aims at ordinary mistakes: a transpose left out, a weight or a gate block mixed up, a bias in
the wrong place, an index off by one, a wrong axis in cat/chunk/flip/gather/view, a list not
reset, a state taken from the wrong step, an argument changed in place, a printed result, a dtype
from numpy, batch_first and packed sequences half handled, a state detached, a global read.

The records have the other sets' format (`Version`, `wrong`, `right` and `case` are copied here,
not imported, so that the sets stay separate): a name, a target (an exercise key for
`helpers.exercises.check_code`, or a case builder returning (module, input, hx) for
`helpers.diagnose`), the function, its true bug in one line, and `names`: regular expressions
(case-insensitive), at least one of which a message that truly names this bug would match (its
cause, or its precise place). Correct versions, in unusual styles, have `correct=True` and must
pass. Every version was checked against torch directly (without helpers) before the checks first
ran on it: each wrong one differs in values, shape, gradients, an error or a changed argument, and
each right one matches. `python benchmarks/diagnosis_quality.py --set fresh` runs them.

The `names` were all written before the checks were first run on this set. After that run, nine
were widened, each because a message named the same bug in other words, and none was narrowed:
s08_no_minus_one, s10_no_tanh_on_cell, s10_sigmoid_everywhere, l05_row_0_for_every_layer,
dg_rnn_batch_first_ignored, l05_h_n_top_first, l04_flip_batch_axis, s11_reset_on_input_too and
dg_gru_h_n_batch_first, each marked "after the first run" where it is. One expression matches a
generic hint rather than a naming (dg_gru_rows_direction_major's "row of hx", in the hint "check
what each layer reads and which row of hx it starts from"); it was left as written, so that set's
first-run count of named versions is one higher than an honest reading.
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


# =============================================================================================
# 01.step: h_t = tanh(w_ih * x_t + w_hh * h_prev), from tensors x_t, h_prev, w_ih, w_hh
# =============================================================================================


@wrong(
    "01.step",
    "the two weights are swapped: w_hh multiplies x_t and w_ih multiplies h_prev",
    names=[
        r"swap|exchang|interchang|switched|mixed up|the other way round",
        r"w_hh\s*\*?\s*x_t|x_t\s*\*\s*w_hh|w_ih\s*\*?\s*h_prev|h_prev\s*\*\s*w_ih",
        r"w_hh[^.\n]{0,20}(multipl|appl|scal)[^.\n]{0,20}x_t|w_ih[^.\n]{0,20}(multipl|appl|scal)[^.\n]{0,20}h_prev",
    ],
)
def s01_weights_swapped(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_hh * x_t + w_ih * h_prev)


@wrong(
    "01.step",
    "tanh is applied to each term separately and the two results added: tanh(a) + tanh(b), not tanh(a + b)",
    names=[
        r"tanh[^.\n]{0,60}(each term|separately|both terms|each of the|per term|twice)",
        r"(each term|separately|both terms|per term)[^.\n]{0,60}tanh",
        r"(sum of (two )?tanh|tanh\(a\) ?\+ ?tanh\(b\))",
        r"tanh\([^()\n]{0,30}\) ?\+ ?tanh\(",
    ],
)
def s01_tanh_each_term(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t) + torch.tanh(w_hh * h_prev)


@wrong(
    "01.step",
    "math.tanh on the tensors: works for one value, raises for several values at once (and drops autograd)",
    names=[
        r"math\.tanh|math module|python float|only one element|one-element",
        r"torch\.tanh[^.\n]{0,30}(not|instead of|rather than) math|element-?wise",
    ],
)
def s01_math_tanh(x_t, h_prev, w_ih, w_hh):
    return torch.tensor(math.tanh(w_ih * x_t + w_hh * h_prev))


@wrong(
    "01.step",
    "h_prev is scaled in place (h_prev *= w_hh): the right value, but the caller's h_prev is changed",
    names=[*changed("h_prev"), r"\*="],
)
def s01_h_prev_in_place(x_t, h_prev, w_ih, w_hh):
    h_prev *= w_hh  # scale the memory first
    return torch.tanh(w_ih * x_t + h_prev)


@wrong(
    "01.step",
    "prints h_t instead of returning it: the function returns None",
    names=[r"\bNone\b|print|no return|return statement|did(n't| not) return|returns nothing|nothing (was )?returned"],
)
def s01_prints(x_t, h_prev, w_ih, w_hh):
    h_t = torch.tanh(w_ih * x_t + w_hh * h_prev)
    print(h_t)


# =============================================================================================
# 03.step_matrices: h_t = tanh(x_t W_ih^T + b_ih + h_prev W_hh^T + b_hh), rows (B, ...)
# =============================================================================================


@wrong(
    "03.step_matrices",
    "W_hh is not transposed: h_prev @ W_hh instead of h_prev @ W_hh.T (no error, W_hh is square)",
    names=[
        r"(missing|without|no|forg[eo]t|lacks?|left out|add)[^.\n]{0,30}(\.T\b|transpos)[^.\n]{0,30}(W_hh|weight_hh)",
        r"(W_hh|weight_hh)[^.\n]{0,40}(not transposed|untransposed|without (the |its )?(\.T|transpos)|missing (its |the )?(\.T|transpos)|needs? (a |its |the )?(\.T|transpos))",
        r"h_prev ?@ ?W_hh(?!\.T)\b|h_prev W_hh(?!\^)",
    ],
)
def s03_no_T_on_W_hh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh + b_hh)


@wrong(
    "03.step_matrices",
    "textbook column form W x: the result is (hidden_size, batch), the transpose of h_t",
    names=[
        r"(result|output|h_t|answer|return)[^.\n]{0,40}transpos|transpos(ed|e)[^.\n]{0,30}(result|output|h_t|answer)",
        r"\(\s*(H|hidden_size)\s*,\s*(B|batch)\s*\)|columns? (vectors?|per sequence)|one column per|rows and columns",
    ],
)
def s03_column_vectors(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    # as in the textbook: h = tanh(W_ih x + b_ih + W_hh h + b_hh), one column per sequence
    return torch.tanh(W_ih @ x_t.T + b_ih[:, None] + W_hh @ h_prev.T + b_hh[:, None])


@wrong(
    "03.step_matrices",
    "copy-paste typo: b_ih is added twice and b_hh never",
    names=[
        r"b_hh[^.\n]{0,40}(missing|never|not (used|added)|left out|dropped|forg|absent|instead)",
        r"(missing|never|not (used|added)|left out|dropped|forg|without|instead of)[^.\n]{0,40}(b_hh|bias_hh)",
        r"b_ih[^.\n]{0,40}(twice|two times|double)|(twice|two times|double)[^.\n]{0,30}b_ih",
        r"hidden bias|second bias",
    ],
)
def s03_b_ih_twice(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_ih)


@wrong(
    "03.step_matrices",
    "the biases are added after the tanh instead of inside it",
    names=[
        r"(bias|b_ih|b_hh)[^.\n]{0,60}(outside|after)[^.\n]{0,20}tanh",
        r"(outside|after) (the )?tanh|inside (the )?tanh|before (the )?tanh",
    ],
)
def s03_bias_outside_tanh(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + h_prev @ W_hh.T) + b_ih + b_hh


@wrong(
    "03.step_matrices",
    "the two weights are swapped: x_t @ W_hh.T and h_prev @ W_ih.T (an error unless input_size == hidden_size)",
    names=[
        r"swap|exchang|interchang|mixed up|the other way round",
        r"x_t ?@ ?W_hh|h_prev ?@ ?W_ih|W_hh[^.\n]{0,20}(multipl|appl)[^.\n]{0,20}x_t|W_ih[^.\n]{0,20}(multipl|appl)[^.\n]{0,20}h_prev",
    ],
)
def s03_weights_swapped(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_hh.T + b_ih + h_prev @ W_ih.T + b_hh)


# =============================================================================================
# 06.top_h_n: h_n[-2:] (2, batch, H) from a batch-first bidirectional output (batch, seq_len, 2H)
# =============================================================================================

BACKWARD_AT_LAST = (
    r"backward[^.\n]{0,60}(taken|read|picked|from) (at |from )?(the )?(last|final) (time )?step",
    r"backward[^.\n]{0,60}(not|never|instead of) (at |from )?(the )?(last|final) (time )?step",
    r"output\[:, ?-1, ?H:\]|output\[:, ?0, ?H:\]",
)


@wrong(
    "06.top_h_n",
    "both halves are taken at the last step: the backward half of output[:, -1] is its first step, not its final state",
    names=list(BACKWARD_AT_LAST),
    source="https://discuss.pytorch.org/t/concatnation-of-h-t-of-forward-and-h-0-of-backward-in-bidirection-lstm-output/10333",
)
def s06_both_at_last_step(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, -1, :H], output[:, -1, H:]])


@wrong(
    "06.top_h_n",
    "indexes output as if time came first: output[-1] and output[0] pick batch items, not time steps",
    names=[
        r"as if (it were |the output were |output were )?(time|seq(uence)?)[- ]first|(time|seq(uence)?)[- ]first (index|indexing|layout)",
        r"output\[(-1|0)\][^.\n]{0,60}(batch|sequence)|(picks?|selects?|takes?) (a |the )?(batch items?|sequences?)\b",
        r"time (step )?is (the )?second|second (index|dim)|dim(ension)? 1\b",
    ],
)
def s06_time_first(output, hidden_size):
    H = hidden_size
    return torch.stack([output[-1, :, :H], output[0, :, H:]])


@wrong(
    "06.top_h_n",
    "views the (batch, 2H) concatenation as (2, batch, H): rows of different sequences are mixed (right only for batch 1)",
    names=[r"\bview\b|reshape|mix(es|ed|ing)? (the )?(sequences|batch|rows)|interleav|memory layout|permute"],
    source="https://github.com/sherjilozair/ctc/issues/1",
)
def s06_view_of_cat(output, hidden_size):
    H = hidden_size
    both = torch.cat([output[:, -1, :H], output[:, 0, H:]], dim=1)  # (batch, 2H)
    return both.view(2, -1, H)


@wrong(
    "06.top_h_n",
    "the two rows in the wrong order: backward first, forward second",
    names=[
        r"swap|exchang|interchang|(wrong|other|reverse[d]?) order|order of the (two )?(rows|directions|halves)",
        r"backward (row |half )?(comes? |is )?first|rows? 0 and 1 (are )?(swapped|exchanged|reversed)",
    ],
)
def s06_directions_swapped(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, H:], output[:, -1, :H]])


@wrong(
    "06.top_h_n",
    "the steps are crossed: the forward half at the first step and the backward half at the last",
    names=[
        *BACKWARD_AT_LAST,
        r"forward[^.\n]{0,60}(taken|read|picked|from) (at |from )?(the )?first (time )?step|output\[:, ?0, ?:H\]|output\[:, ?-1, ?:H\]",
        r"forward[^.\n]{0,60}(not|never|instead of) (at |from )?(the )?(last|final) (time )?step",
        r"steps?[^.\n]{0,30}(crossed|swapped|exchanged)|(swap|exchang)[^.\n]{0,30}(time )?steps",
    ],
)
def s06_steps_crossed(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, 0, :H], output[:, -1, H:]])


# =============================================================================================
# 08.last_states: each sequence's last real state (B, H) from a padded time-first output (T, B, H)
# =============================================================================================


@wrong(
    "08.last_states",
    "off by one: output[lengths, ...] instead of output[lengths - 1, ...] (an index error for the longest sequence)",
    names=[
        r"off[- ]by[- ]one|one step (too )?late|counted from (0|zero)|zero-based|0-based|past the last (real )?step",
        r"(missing|forg[eo]t|without|subtract|no)[^.\n]{0,30}(- ?1\b|minus one)|lengths\b(?! ?- ?1)[^.\n]{0,20}instead of lengths ?- ?1",
        r"one step too far|step after (each|the) (sequence's )?end",  # after the first run: the message names the same bug in other words
    ],
)
def s08_no_minus_one(output, lengths):
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "the batch-first formula on a time-first output: output[arange(B), lengths - 1] swaps the time and batch indices",
    names=[
        r"batch[- ]first (formula|index|order|indexing)|as if (it|output|the output) (were|was) batch[- ]first",
        r"(index(es)?|indices|index tensors)[^.\n]{0,40}(swap|exchang|change places|other order|wrong order)",
        r"output\[(torch\.)?arange\(B\), ?lengths ?- ?1\]",
        r"(swap|exchang)[^.\n]{0,40}(index|indices|time and batch|batch and time)",
    ],
)
def s08_batch_first_formula(output, lengths):
    return output[torch.arange(output.shape[1]), lengths - 1]


@wrong(
    "08.last_states",
    "gather along dim 1 (the batch) instead of dim 0 (time)",
    names=[
        r"gather[^.\n]{0,60}(dim|axis)|(dim|axis)[^.\n]{0,30}gather|gather\(0",
        r"along (the )?(batch|time) (dim|axis)",
    ],
)
def s08_gather_wrong_dim(output, lengths):
    B, H = output.shape[1], output.shape[2]
    index = (lengths - 1).view(1, B, 1).expand(1, B, H)
    return output.gather(1, index).squeeze(0)


@wrong(
    "08.last_states",
    "every sequence read at the batch's last step (output[lengths.max() - 1] == output[-1]): padding for the shorter ones",
    names=[
        r"output\[-1\]|(last|final) (time )?step of the (batch|padded|longest)|longest sequence",
        r"pad(ding|ded)[^.\n]{0,40}(step|position|zero|state)|same (time )?step for (all|every|each)",
        r"lengths\.max|max(imum)? length",
    ],
)
def s08_max_length(output, lengths):
    return output[lengths.max() - 1]  # the last step of the batch


@wrong(
    "08.last_states",
    "lengths -= 1 changes the caller's lengths in place (the values returned are right)",
    names=[*changed("lengths"), r"-= ?1"],
)
def s08_lengths_in_place(output, lengths):
    lengths -= 1  # time indices count from 0
    return output[lengths, torch.arange(output.shape[1])]


@wrong(
    "08.last_states",
    "sorts the lengths first (as packing once required): wrong rows when the lengths are not in decreasing order",
    names=[r"sort|shuffl|unsorted|enforce_sorted|(decreasing|descending) order|order of the lengths"],
    source="https://city.shaform.com/en/2019/01/15/sort-sequences-in-pytorch/",
)
def s08_sorted_lengths(output, lengths):
    lengths = lengths.sort(descending=True).values  # pack_padded_sequence wants them sorted
    return output[lengths - 1, torch.arange(output.shape[1])]


# =============================================================================================
# 10.step: one LSTM step, gates i, f, g, o; returns (h_t, c_t)
# =============================================================================================


@wrong(
    "10.step",
    "gate blocks read as i, f, o, g: the output gate and the candidate exchanged (sigmoid and tanh on the wrong rows)",
    names=[
        r"ifog|i, ?f, ?o, ?g|gate order|order of the (four )?(gates|blocks)",
        r"(candidate|\bg\b|cell gate|output gate|\bo\b)[^.\n]{0,40}(swap|exchang|mix|confus|interchang)",
        r"(swap|exchang|confus|interchang)[^.\n]{0,40}(candidate|\bg\b|cell gate|output gate|\bo\b)",
        r"blocks? 2 and 3|2H:3H[^.\n]{0,40}3H:4H",
    ],
    source="https://github.com/ndrplz/ConvLSTM_pytorch/issues/6",
)
def s10_gates_ifog(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i, f, o, g = gates.chunk(4, dim=-1)
    i, f, o, g = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o), torch.tanh(g)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "the candidate is scaled by the forget gate instead of the input gate: c_t = f * c_prev + f * g",
    names=[
        r"\bf ?\* ?g\b|forget gate[^.\n]{0,20}(times|multiplies|scales|on) (the )?(candidate|\bg\b)",
        r"(candidate|\bg\b)[^.\n]{0,30}(by|with) (the )?forget gate",
        r"input gate[^.\n]{0,40}(missing|never|unused|not used|instead|ignored)|instead of (the )?input gate",
        r"\bi\b[^.\n]{0,20}(missing|unused|never used)",
    ],
    source="https://github.com/ARM-software/CMSIS-NN/pull/181",
)
def s10_forget_scales_candidate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    c_t = f * c_prev + f * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "returns (c_t, h_t): the pair in the wrong order",
    names=[
        r"(swap|exchang|reversed|wrong order|other order|other way round)[^.\n]{0,40}(h_t|c_t|pair|return|tuple)",
        r"(pair|return(ed)?|tuple|h_t and c_t|c_t and h_t)[^.\n]{0,40}(swap|exchang|reversed|wrong order|other order)",
        r"return(s|ed)? \(c_t, ?h_t\)|c_t (comes )?first",
    ],
)
def s10_returns_c_first(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    h_t = torch.sigmoid(o) * torch.tanh(c_t)
    return c_t, h_t


@wrong(
    "10.step",
    "no tanh on the cell in the output: h_t = o * c_t",
    names=[
        r"(missing|without|no|forg[eo]t|lacks?|left out|skip)[^.\n]{0,30}tanh[^.\n]{0,30}(cell|c_t|\bc\b)",
        r"tanh[^.\n]{0,20}(of|on) (the )?(cell|c_t)[^.\n]{0,30}(missing|left out|forgotten|skipped)",
        r"h_t ?= ?o(_t)? ?\* ?c_t|(cell|c_t)[^.\n]{0,30}(not squashed|unsquashed|without (a |the )?tanh)",
        r"\bh(_t)? ?= ?o(_t)? ?\* ?c(_t)?\b",  # after the first run: the message names the same bug in other words
    ],
)
def s10_no_tanh_on_cell(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    i, f, g, o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * c_t, c_t


@wrong(
    "10.step",
    "sigmoid applied to all four blocks at once: the candidate g gets a sigmoid instead of tanh",
    names=[
        r"(candidate|\bg\b|cell gate)[^.\n]{0,40}(sigmoid (instead|rather)|got (a |the )?sigmoid|needs? (a )?tanh|should (use|be|get) (a )?tanh|not (a )?sigmoid)",
        r"sigmoid[^.\n]{0,40}(on|to) (all|every|the) (four|4)|sigmoid[^.\n]{0,30}(candidate|\bg\b)[^.\n]{0,20}(instead|too|as well)",
        r"tanh[^.\n]{0,30}(missing|instead)[^.\n]{0,30}(candidate|\bg\b)",
        r"(candidate|\bg\b) (goes )?through the sigmoid",  # after the first run: the message names the same bug in other words
    ],
)
def s10_sigmoid_everywhere(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = torch.sigmoid(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)
    i, f, g, o = gates.chunk(4, dim=-1)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


@wrong(
    "10.step",
    "gates.chunk(4) cuts along dim 0, the batch, instead of the last dimension (an error)",
    names=[
        r"chunk[^.\n]{0,60}(dim|axis|batch|last)|(dim|axis)[^.\n]{0,30}chunk",
        r"dim(ension)?\s*=?\s*(-1|1)\b|along the (batch|first|rows)",
    ],
)
def s10_chunk_default_dim(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    gates = x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    i, f, g, o = gates.chunk(4)  # as W_ih.chunk(4) does for the weights
    c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_t), c_t


# =============================================================================================
# 11.step: one GRU step, blocks r, z, n; reset after the product, z on the old state
# =============================================================================================

RESET_BEFORE = (
    r"reset[^.\n]{0,60}before[^.\n]{0,40}(product|matmul|multipl|W_hn)|before the (matrix )?product",
    r"\(r ?\* ?h(_prev)?\) ?@|r ?\* ?h_prev\b|\bv3\b|final (arxiv )?version|original paper|d2l",
)


@wrong(
    "11.step",
    "the reset gate is applied before the product, (r * h_prev) @ W_hn.T, as in the paper's final version",
    names=list(RESET_BEFORE),
    source="https://github.com/PacktPublishing/Advanced-Deep-Learning-with-Python/issues/1",
)
def s11_reset_before_product(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev


Z_CONVENTION = (
    r"convention|z (multiplies|on|scales|weights|keeps|goes with) (the )?(candidate|new|n\b)",
    r"(1 ?- ?z)[^.\n]{0,50}(swap|exchang|other way|wrong)",
    r"(swap|exchang|other way|wrong way)[^.\n]{0,50}(1 ?- ?z|\bz\b)|negat",
)


@wrong(
    "11.step",
    "the other convention for z: h_t = z * n + (1 - z) * h_prev",
    names=list(Z_CONVENTION),
)
def s11_z_other_convention(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return z * n + (1 - z) * h_prev


@wrong(
    "11.step",
    "b_hn is left outside the reset gate: r * (h_prev @ W_hn.T) + b_hn",
    names=[
        r"b_hn[^.\n]{0,60}(outside|not (inside|multiplied|scaled|gated)|added after|left out of)",
        r"(outside|after)[^.\n]{0,30}(reset|\br\b)[^.\n]{0,30}b_hn|(reset|\br\b)[^.\n]{0,40}(misses|skips|leaves out|without) (the )?b_hn",
        r"(hidden|recurrent) bias[^.\n]{0,60}(outside|not (inside|multiplied|gated))",
    ],
)
def s11_b_hn_outside_reset(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
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
    "blocks read as z, r, n (Keras' order): the reset and update gates exchanged",
    names=[
        r"z, ?r, ?n|zrn|keras|gate order|order of the (gates|blocks)|blocks? (0 and 1|r and z|z and r)",
        r"(\br\b|reset)[^.\n]{0,40}(\bz\b|update)[^.\n]{0,40}(swap|exchang|order|mixed|confus)",
        r"(swap|exchang|confus|mixed up)[^.\n]{0,40}(\br\b|reset|\bz\b|update)",
    ],
    source="https://github.com/keras-team/keras/pull/22115",
)
def s11_blocks_z_r_n(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
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
    "the reset gate also scales the input term: n = tanh(r * (x_t W_in^T + b_in + h_prev W_hn^T + b_hn))",
    names=[
        r"reset[^.\n]{0,40}(also |too )?(scales|multiplies|applied to|on)[^.\n]{0,20}(the )?(input|x_t|W_in|b_in)",
        r"(input|x_t) (term|part)[^.\n]{0,40}(reset|\br\b)[^.\n]{0,20}(too|also|should not|must not|not)",
        r"r ?\* ?\(i_n|r ?\* ?\(x_t|\br\b[^.\n]{0,30}(whole|both terms|entire) (pre-?activation|sum)",
        r"only W_ih and b_ih acting[^.\n]{0,40}departs",  # after the first run: the message names the same bug in other words
    ],
)
def s11_reset_on_input_too(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    i_r, i_z, i_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(r * (i_n + h_n))
    return (1 - z) * n + z * h_prev


# =============================================================================================
# 12.bptt_step: delta_{t-1} = (delta_t * (1 - h_t^2)) @ W_hh
# =============================================================================================


@wrong(
    "12.bptt_step",
    "multiplies by W_hh.T instead of W_hh",
    names=[
        r"(by|with|used|uses|using) W_hh(\.T|\^T|\^⊤|ᵀ|\.t\(\))|W_hh(\.T|\^T|ᵀ)[^.\n]{0,30}(instead|rather|not W_hh)",
        r"instead of W_hh\b|transpos(ed|e)[^.\n]{0,40}(W_hh|weight)|(W_hh|weight)[^.\n]{0,30}transpos",
    ],
)
def s12_W_hh_transposed(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)) @ W_hh.T


@wrong(
    "12.bptt_step",
    "tanh applied again to h_t in the slope: 1 - tanh(h_t)^2, though h_t is already tanh(a_t)",
    names=[r"tanh\(h_t\)|h_t is (already|itself)|already (a |the )?tanh|tanh (twice|again)|twice"],
)
def s12_tanh_of_h_t(delta_t, h_t, W_hh):
    slope = 1 - torch.tanh(h_t) ** 2
    return (delta_t * slope) @ W_hh


@wrong(
    "12.bptt_step",
    "the slope applied after the product: (delta_t @ W_hh) * (1 - h_t^2) (the same for one unit)",
    names=[
        r"slope[^.\n]{0,60}(before|after|first|order|wrong side|other side)",
        r"(before|after|first|order)[^.\n]{0,60}slope",
        r"(product|W_hh)[^.\n]{0,40}(before|after|order|wrong side)[^.\n]{0,40}(slope|1 ?- ?h)",
    ],
)
def s12_slope_after_product(delta_t, h_t, W_hh):
    return (delta_t @ W_hh) * (1 - h_t**2)


@wrong(
    "12.bptt_step",
    "the sigmoid's derivative h_t * (1 - h_t) instead of tanh's 1 - h_t^2",
    names=[r"sigmoid|logistic|h_t\s*\*\s*\(1\s*-\s*h_t\)|h_t ?\(1 ?- ?h_t\)"],
)
def s12_sigmoid_slope(delta_t, h_t, W_hh):
    return (delta_t * h_t * (1 - h_t)) @ W_hh


@wrong(
    "12.bptt_step",
    "delta_t *= slope changes the caller's delta_t in place (the value returned is right)",
    names=[*changed("delta_t"), r"\*="],
)
def s12_delta_in_place(delta_t, h_t, W_hh):
    delta_t *= 1 - h_t**2
    return delta_t @ W_hh


# =============================================================================================
# 13.tag_loss: the mean cross-entropy over the real characters of a padded batch
# =============================================================================================


@wrong(
    "13.tag_loss",
    "the mask is built from the tags (tags != 0): real characters tagged 0 are dropped, padding with other tags kept",
    names=[
        r"tags? ?(!=|==|≠|>) ?0|from the tags|(based|built) on (the )?tags|look(s|ing)? at the tags",
        r"tag 0|tagged 0|(real|actual) (characters|tags)? ?(with|of) (tag|class) 0|not from the tags",
    ],
)
def s13_mask_from_tags(scores, tags, lengths):
    is_real = tags != 0  # the padding is tagged 0
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "the masked sum is divided by every position (B * T) instead of the number of real characters",
    names=[
        r"(divid|denominator|normali[sz])[^.\n]{0,60}(B ?\* ?T|every position|all (positions|characters|steps)|numel|padding|total)",
        r"B ?\* ?T\b|numel|mask\.sum\(\)[^.\n]{0,30}(instead|not)",
    ],
    source="https://example-a.com/answer/66526823",
)
def s13_divides_by_all(scores, tags, lengths):
    B, T, C = scores.shape
    losses = functional.cross_entropy(scores.reshape(-1, C), tags.reshape(-1), reduction="none").view(B, T)
    mask = (torch.arange(T) < lengths[:, None]).float()
    return (losses * mask).sum() / mask.numel()


@wrong(
    "13.tag_loss",
    "off by one in the mask: arange(T) <= lengths keeps the first padding step",
    names=[r"<=|≤|off[- ]by[- ]one|one (extra|more) (step|character|position)|first padding|strict"],
)
def s13_mask_off_by_one(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) <= lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real])


@wrong(
    "13.tag_loss",
    "the mask is built time-first (T, B) and flattened against batch-first (B, T) losses: the wrong positions are kept",
    names=[
        r"\(T, ?B\)|transpos|time[- ]first",
        r"(order|layout)[^.\n]{0,30}(mask|flatten)|flatten(ed|ing)?[^.\n]{0,30}order|mask[^.\n]{0,40}(shape|layout|order)",
    ],
)
def s13_mask_time_major(scores, tags, lengths):
    B, T, C = scores.shape
    losses = functional.cross_entropy(scores.reshape(-1, C), tags.reshape(-1), reduction="none")  # (B * T,)
    is_real = (torch.arange(T)[:, None] < lengths).reshape(-1)
    return losses[is_real].mean()


@wrong(
    "13.tag_loss",
    "cross_entropy on (B, T, C) scores: it expects the classes in dim 1, (B, C, T) (an error unless T == C)",
    names=[
        r"\(B, ?C, ?T\)|\(N, ?C|class(es)? (dim|in dim|as dim|axis)|dim(ension)? 1\b|transpose\(1, ?2\)|permute",
        r"classes[^.\n]{0,40}(second|dim)|(second|dim)[^.\n]{0,20}classes",
    ],
    source="https://whosebug.com/question/6539086/How-to-compute-Cross-Entropy-Loss-for-sequences",
)
def s13_classes_last(scores, tags, lengths):
    T = scores.shape[1]
    targets = tags.masked_fill(torch.arange(T) >= lengths[:, None], -100)
    return functional.cross_entropy(scores, targets)


@wrong(
    "13.tag_loss",
    "writes -100 into the caller's tags in place (the value returned is right)",
    names=list(changed("tags")),
)
def s13_tags_in_place(scores, tags, lengths):
    T = scores.shape[1]
    tags[torch.arange(T) >= lengths[:, None]] = -100
    return functional.cross_entropy(scores.flatten(0, 1), tags.flatten())


# =============================================================================================
# 02.loop: my_rnn(module, input, hx=None), one layer, one direction, time first
# =============================================================================================


@wrong(
    "02.loop",
    "starts from hx itself, (1, batch, H), instead of hx[0]: with hx given, output and h_n get an extra dimension",
    names=[
        r"hx\[0\][^.\n]{0,40}(instead|not hx|rather)|(instead of|not|rather than) hx\[0\]|whole hx|hx itself",
        r"hx[^.\n]{0,30}(with|has|keeps) (its|the) (layer|leading|first) dim|extra (leading )?dim|(additional|one more) dim|4-?d",
    ],
)
def l02_whole_hx(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), states[-1].unsqueeze(0)


@wrong(
    "02.loop",
    "h_n is returned without its layer dimension: (batch, H) instead of (1, batch, H)",
    names=[
        r"unsqueeze|(missing|without|lacks?|no|forg[eo]t)[^.\n]{0,30}(layer|leading|first) dim|\(1, ?(batch|B)\b",
        r"h_n[^.\n]{0,60}shape|shape[^.\n]{0,60}h_n",
    ],
)
def l02_h_n_without_layer_dim(module, input, hx=None):
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
    "each state is stored before it is updated: output holds h_0 .. h_{T-1}, one step behind",
    names=[
        r"shift|one step (late|early|behind|ahead|off)|off[- ]by[- ]one|\blag",
        r"output\[0\][^.\n]{0,40}(h_0|initial)|output[^.\n]{0,40}(holds|has|contains|starts with) (h_0|the initial state)",
        r"(stored|appended|saved|record)[^.\n]{0,40}before[^.\n]{0,30}(update|step|comput)",
    ],
)
def l02_state_stored_before_step(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        states.append(h)
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
    return torch.stack(states), h.unsqueeze(0)


@wrong(
    "02.loop",
    "the zero state comes from numpy: float64, so the first product with the float32 weights raises",
    names=[r"float64|double|dtype|numpy"],
)
def l02_numpy_zeros(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.from_numpy(np.zeros((input.shape[1], module.hidden_size))) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


DETACHED = (
    r"detach|cut[^.\n]{0,30}graph|graph[^.\n]{0,30}(cut|broken)|no_grad",
    r"(gradient|backprop)[^.\n]{0,60}(through time|between steps|earlier steps|previous (state|step)|h_prev|stopped|cut|blocked)",
)


@wrong(
    "02.loop",
    "the previous state is detached at every step: the right values, but no gradient flows through time",
    names=list(DETACHED),
    source="https://www.codegenes.net/blog/how-to-use-detach-in-hidden-state-loss-backward-pytorch",
)
def l02_detached_state(module, input, hx=None):
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
    states = []
    for x_t in input:
        h = torch.tanh(x_t @ W_ih.T + b_ih + h.detach() @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h.unsqueeze(0)


# =============================================================================================
# 04.bidirectional: my_birnn(module, input, hx=None), one bidirectional layer, time first
# =============================================================================================


@wrong(
    "04.bidirectional",
    "the backward states are kept in the order they were computed: output[t] holds the backward state of step T-1-t",
    names=[
        r"computed order|order (it was|they were) computed|run order|flip|revers[^.\n]{0,30}back",
        r"(backward|reverse)[^.\n]{0,60}(in (the )?(order|sequence) (it was |they were )?(computed|run)|not (re)?stored at|reversed order|wrong position)",
    ],
)
def l04_backward_in_run_order(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        h, states = h_0[d], []
        for t in reversed(range(T)) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        runs.append(torch.stack(states))
        finals.append(h)
    return torch.cat(runs, dim=-1), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "the two directions are concatenated along time (dim 0), (2T, B, H), instead of features (dim -1)",
    names=[
        r"cat[^.\n]{0,40}(dim|axis)|(dim|axis)[^.\n]{0,30}cat",
        r"dim(ension)?\s*=?\s*(-1|2)\b|last dim|feature dim|\(2T|2 ?\* ?seq_len|side by side|along (the )?time",
    ],
)
def l04_cat_on_time_axis(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        h, states = h_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states[t] = h
        runs.append(torch.stack(states))
        finals.append(h)
    return torch.cat(runs), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "reverses with input.flip(1), the batch axis, so the backward run goes forward in time",
    names=[
        r"flip[^.\n]{0,40}(dim|batch|axis)|(batch|axis)[^.\n]{0,40}(flip|revers)",
        r"(not|never) reversed|(runs?|goes|went|ran) forward in time|first step to the last|same (time )?order as the forward",
        r"flip\(0\)",
        r"not run in reverse|reads x_1 first",  # after the first run: the message names the same bug in other words
    ],
)
def l04_flip_batch_axis(module, input, hx=None):
    B, H = input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        seq = input.flip(1) if d else input  # reverse the sequence
        h, states = h_0[d], []
        for x_t in seq:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        out = torch.stack(states)
        runs.append(out.flip(1) if d else out)  # and back
        finals.append(h.flip(0) if d else h)
    return torch.cat(runs, dim=-1), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "copy-paste slip: the backward run uses the forward weight_hh_l0 (its other three parameters are _reverse)",
    names=[
        r"weight_hh_l0(?!_reverse)\b[^.\n]{0,60}(backward|reverse)|(backward|reverse)[^.\n]{0,60}weight_hh_l0(?!_reverse)\b",
        r"forward('s)? (weight_hh|W_hh|recurrent weight)|(weight_hh|W_hh)[^.\n]{0,40}(of the )?forward",
        r"weight_hh_l0_reverse[^.\n]{0,40}(missing|never|not used|unused)",
    ],
)
def l04_backward_uses_forward_W_hh(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), module.weight_hh_l0
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        h, states = h_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states[t] = h
        runs.append(torch.stack(states))
        finals.append(h)
    return torch.cat(runs, dim=-1), torch.stack(finals)


@wrong(
    "04.bidirectional",
    "the default h_0 has one row, zeros(1, B, H): the backward run's h_0[1] raises when hx is None",
    names=[
        r"\(2, ?(batch|B)|two rows|2 rows|num_directions|one row per direction|rows? for (each|both) direction",
        r"zeros[^.\n]{0,40}(shape|rows|\(1,)|h_0[^.\n]{0,40}(shape|rows)|(default|initial) (state|h_0)[^.\n]{0,40}(shape|rows|one row)",
    ],
)
def l04_default_h0_one_row(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(1, B, H) if hx is None else hx  # as in the one-way layer
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        h, states = h_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states[t] = h
        runs.append(torch.stack(states))
        finals.append(h)
    return torch.cat(runs, dim=-1), torch.stack(finals)


# =============================================================================================
# 05.stack: my_stack(module, input, hx=None), stacked one-direction layers, time first
# =============================================================================================


@wrong(
    "05.stack",
    "every layer starts from row 0 of hx: h_0[0] instead of h_0[k] (seen only with a nonzero hx)",
    names=[
        r"hx\[k\]|h_0\[k\]|row k\b|hx\[0\][^.\n]{0,60}(every|all|each|layer [1-9])",
        r"row 0[^.\n]{0,60}(every|all|each|other|upper|layer [1-9])|(every|all|each) layers?[^.\n]{0,40}row 0",
        r"(layer [1-9]|upper layers?)[^.\n]{0,60}(initial state|h_0|row of hx|row 0)",
        r"(every|all|each) layers?[^.\n]{0,40}(h_0|hx)\[0\]",  # after the first run: the message names the same bug in other words
    ],
)
def l05_row_0_for_every_layer(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[0], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "h_n holds only the top layer's last state, (1, B, H), not one row per layer",
    names=[
        r"only the top|top layer only|one row per layer|(missing|lacks|only one)[^.\n]{0,30}(rows?|layers?)\b|(rows?|layers?) (are )?missing",
        r"h_n[^.\n]{0,60}(rows|shape)|shape[^.\n]{0,60}h_n",
    ],
)
def l05_h_n_top_only(module, input, hx=None):
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
    return layer_input, h.unsqueeze(0)


@wrong(
    "05.stack",
    "h_n's rows in reverse order: the top layer first",
    names=[
        r"(wrong|other|reverse[d]?) order|order of the (rows|layers)|top (layer )?first",
        r"swap|exchang|reversed|rows? (0 and 1|swapped|exchanged)",
        r"(final states|h_n)[^.\n]{0,40}in other rows|row 0 holds torch's row 1",  # after the first run: the message names the same bug in other words
    ],
)
def l05_h_n_top_first(module, input, hx=None):
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
        finals.append(h)
    return layer_input, torch.stack(finals[::-1])


@wrong(
    "05.stack",
    "the list of states is created once, outside the layer loop: it keeps growing, so each layer reads (and output holds) every lower layer's states too",
    names=[
        r"(reset|clear|empty|new|fresh)[^.\n]{0,40}(list|states)|(list|states)[^.\n]{0,40}(reset|clear|accumul|grow|keeps)",
        r"accumulat|\(2T|L ?\* ?T|(seq_len|length|steps)[^.\n]{0,30}(doubl|times|grow)|output[^.\n]{0,40}(too (long|many)|length)",
    ],
)
def l05_states_list_not_reset(module, input, hx=None):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals, states = input, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h = h_0[k]
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    "05.stack",
    "each layer's states are detached before the next layer reads them: right values, no gradient from upper layers to lower ones",
    names=[
        *DETACHED,
        r"gradient[^.\n]{0,60}(layer 0|lower|below|between layers)|(layer 0|lower layer)[^.\n]{0,60}gradient",
    ],
)
def l05_detached_between_layers(module, input, hx=None):
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
        layer_input = torch.stack(states).detach()  # the next layer only reads these values
        finals.append(h)
    return layer_input, torch.stack(finals)


# =============================================================================================
# diagnose: whole nn.RNN / nn.LSTM / nn.GRU layers
# =============================================================================================

# --- RNN ---------------------------------------------------------------------------------------


@wrong(
    case("RNN", 3, 4, nonlinearity="relu"),
    "nonlinearity='relu' ignored: every step uses tanh",
    names=[
        r"relu[^.\n]{0,40}(ignored|instead|not|missing|never)|(instead of|not|ignor\w*|never)[^.\n]{0,30}relu",
        r"tanh[^.\n]{0,40}(instead of|not) (relu|the layer's)|nonlinearity[^.\n]{0,40}(ignored|wrong|not (used|read|applied))",
        r"module\.nonlinearity",
    ],
    source="https://github.com/pytorch/pytorch/issues/72240",
)
def dg_rnn_relu_as_tanh(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, batch_first=True, batch=2, seq_len=5),
    "batch_first ignored: the loop runs over the batch as if it were time, each step a whole sequence",
    names=[
        r"batch[_ -]first[^.\n]{0,40}(ignored|not handled|not applied|forg|missing|treat|as if)|(ignor|forg|not handl)[^.\n]{0,40}batch[_ -]first",
        r"as if (the input|it) (were|was) (time|seq)[- ]first|loop(s|ed)? over (the )?batch|batch (axis|dim(ension)?) as (the )?time",
        r"transpose|permute|(batch|time)[^.\n]{0,20}(axis|dim)[^.\n]{0,30}(swap|exchang|mix|confus)",
        r"batch[_ -]first not (honou?red|respected)|first dimension (read|taken|treated) as time",  # after the first run: the message names the same bug in other words
    ],
    source="https://github.com/ixaxaar/pytorch-dnc/issues/51",
)
def dg_rnn_batch_first_ignored(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, bias=False),
    "bias=False not handled: reads module.bias_ih_l0, which does not exist (AttributeError)",
    names=[
        r"bias ?= ?False|no bias|without (a )?bias|bias_ih_l0[^.\n]{0,40}(exist|missing|attribute|None)|has no (attribute )?'?bias"
    ],
)
def dg_rnn_bias_false(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


HX_IGNORED = (
    r"(ignor|unused|never (use|read)|not used|does(n't| not) use|instead of)[^.\n]{0,50}(hx|initial state|h_0)",
    r"(hx|initial state|h_0)[^.\n]{0,50}(ignor|unused|never|not used)",
    r"(starts?|started|starting) from zeros[^.\n]{0,40}(given|despite|although|even)",
)


@wrong(
    case("RNN", 3, 4, 2, hx=True),
    "hx ignored: every layer starts from zeros even when an initial state is given",
    names=list(HX_IGNORED),
)
def dg_rnn_hx_ignored(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H)
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, 2, bidirectional=True),
    "the next layer reads the backward states in run order (flipped back only for the returned output): layer 1 departs",
    names=[
        r"flip|run order|computed order|order (it was|they were) computed|naive wiring",
        r"(backward|reverse)[^.\n]{0,80}(order|flipped|un-?flipped|re-?reversed|not reversed back)",
    ],
    source="https://discuss.pytorch.org/t/last-hidden-state-in-bidirectional-stacked-gru/57971",
)
def dg_rnn_bidir_next_layer_unflipped(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(2 * L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        runs = []
        for d in range(2):
            sfx = f"_l{k}" + ("_reverse" if d else "")
            W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
            b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
            h, states = h_0[2 * k + d], []
            for x_t in layer_input.flip(0) if d else layer_input:
                h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
                states.append(h)
            runs.append(torch.stack(states))
            finals.append(h)
        layer_input = torch.cat(runs, dim=-1)
    output = torch.cat([runs[0], runs[1].flip(0)], dim=-1)
    return output, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, lengths=[5, 3, 2], enforce_sorted=True),
    "packed input run over the padding: h_n is the state after the padded steps, not at each sequence's last real step",
    names=[
        r"pad(ding|ded)[^.\n]{0,60}(steps?|state|ran|run|through|included|zeros|positions)|(through|over|into|includes?) (the )?pad(ding|ded)",
        r"(own|last real|real) (last )?(step|length)|each sequence's (last|own)|lengths?[^.\n]{0,40}(ignored|not used|mask)",
    ],
    source="https://discuss.pytorch.org/t/last-hidden-state-in-bidirectional-stacked-gru/57971",
)
def dg_rnn_packed_h_n_after_padding(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    L, H, B = module.num_layers, module.hidden_size, x.shape[1]
    h_0 = x.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = x, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    output = pack_padded_sequence(layer_input, lengths, enforce_sorted=input.sorted_indices is None)
    return output, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, batch_first=True, lengths=[4, 5, 2], enforce_sorted=False),
    "packed input, but the output is returned as a padded tensor instead of a PackedSequence",
    names=[
        r"(return(s|ed)?|got|is) (a )?(padded|plain|ordinary) tensor|(should|must|expected)[^.\n]{0,20}(a )?PackedSequence",
        r"not (a )?PackedSequence|instead of (a )?PackedSequence|pack_padded_sequence|re-?pack",
    ],
)
def dg_rnn_packed_returns_padded(module, input, hx=None):
    x, lengths = pad_packed_sequence(input, batch_first=True)
    x = x.transpose(0, 1)  # (T, B, I)
    L, H, B = module.num_layers, module.hidden_size, x.shape[1]
    h_0 = x.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = x, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for t, x_t in enumerate(layer_input):
            real = (t < lengths)[:, None]
            h_new = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            h = torch.where(real, h_new, h)
            states.append(torch.where(real, h_new, torch.zeros_like(h_new)))
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input.transpose(0, 1), torch.stack(finals)


@wrong(
    case("RNN", 3, 4, unbatched=True),
    "unbatched input (seq_len, input_size) not handled: input.shape[1] is taken as the batch, so shapes are wrong",
    names=[
        r"unbatched[^.\n]{0,60}(not handled|handle|treat|as if|batch dim|unsqueeze|shape)|no batch dim|without a batch|2-?d input",
        r"batch dim(ension)?[^.\n]{0,40}(missing|absent|add|unsqueeze)",
        r"unsqueeze",
    ],
)
def dg_rnn_unbatched_as_batch(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("RNN", 3, 4, bidirectional=True, lengths=[5, 4, 2], enforce_sorted=True),
    "packed bidirectional input run over the padding: the backward run starts in the padding, not at each sequence's last real step",
    names=[
        r"pad(ding|ded)[^.\n]{0,60}(steps?|state|ran|run|through|included|zeros|positions)|(through|over|into|includes?|in) (the )?pad(ding|ded)",
        r"(own|last real|real) (last )?(step|length)|each sequence's (last|own|end)|lengths?[^.\n]{0,40}(ignored|not used|mask)",
    ],
    source="https://discuss.pytorch.org/t/last-hidden-state-in-bidirectional-stacked-gru/57971",
)
def dg_rnn_packed_bidir_from_padding(module, input, hx=None):
    x, lengths = pad_packed_sequence(input)
    T, B, H = x.shape[0], x.shape[1], module.hidden_size
    h_0 = x.new_zeros(2, B, H) if hx is None else hx
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        h, states = h_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            h = torch.tanh(x[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states[t] = h
        runs.append(torch.stack(states))
        finals.append(h)
    output = pack_padded_sequence(torch.cat(runs, dim=-1), lengths, enforce_sorted=input.sorted_indices is None)
    return output, torch.stack(finals)


# --- LSTM --------------------------------------------------------------------------------------


@wrong(
    case("LSTM", 3, 4, lengths=[2, 5, 3], enforce_sorted=False),
    "steps through the packed data in its sorted order and returns h_n and c_n in that order, without unsorted_indices",
    names=[
        r"unsorted_indices|sorted_indices|sort(ed)? order|original (batch )?order|enforce_sorted",
        r"permut|reorder|(batch|rows?|sequences)[^.\n]{0,40}(order|permuted|shuffled)",
    ],
    source="https://github.com/pytorch/pytorch/pull/15225",
)
def dg_lstm_packed_h_n_sorted_order(module, input, hx=None):
    data, batch_sizes = input.data, input.batch_sizes
    L, H, B = module.num_layers, module.hidden_size, int(batch_sizes[0])
    h_0, c_0 = (data.new_zeros(L, B, H), data.new_zeros(L, B, H)) if hx is None else hx
    layer_data, hs, cs = data, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, c, out, start = h_0[k], c_0[k], [], 0
        for n in batch_sizes.tolist():
            x_t = layer_data[start : start + n]
            start += n
            i, f, g, o = (x_t @ W_ih.T + b_ih + h[:n] @ W_hh.T + b_hh).chunk(4, dim=-1)
            c_new = torch.sigmoid(f) * c[:n] + torch.sigmoid(i) * torch.tanh(g)
            h_new = torch.sigmoid(o) * torch.tanh(c_new)
            h, c = torch.cat([h_new, h[n:]]), torch.cat([c_new, c[n:]])
            out.append(h_new)
        layer_data = torch.cat(out)
        hs.append(h)
        cs.append(c)
    output = PackedSequence(layer_data, batch_sizes, input.sorted_indices, input.unsorted_indices)
    return output, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 5, 2),
    "the cell state restarts from c_0 at every step (the line sits inside the time loop): no memory in c",
    names=[
        r"cell( state)?[^.\n]{0,80}(reset|restart|not carried|not passed|each step|every step|c_0|zeros)",
        r"(reset|restart|re-?initiali[sz])[^.\n]{0,60}(cell|\bc\b)",
    ],
)
def dg_lstm_cell_restarts(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0, c_0 = (input.new_zeros(L, B, H), input.new_zeros(L, B, H)) if hx is None else hx
    layer_input, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:
            c = c_0[k]
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            states.append(h)
        layer_input = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return layer_input, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 6, proj_size=2),
    "proj_size ignored: no weight_hr projection, the state kept at hidden_size (a shape error)",
    names=[r"proj|weight_hr|W_hr"],
    source="https://github.com/pytorch/pytorch/issues/139582",
)
def dg_lstm_projection_ignored(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0, c_0 = (input.new_zeros(L, B, H), input.new_zeros(L, B, H)) if hx is None else hx
    layer_input, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, c, states = h_0[k], c_0[k], []
        for x_t in layer_input:
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            states.append(h)
        layer_input = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return layer_input, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 4, 3, hx=True, batch=2),
    "TensorFlow's forget_bias=1.0 carried over: 1 is added to the forget gate's pre-activation",
    names=[
        r"forget[^.\n]{0,50}(bias|\+ ?1|one|offset|shift)|forget_bias",
        r"\+ ?1(\.0)?\b[^.\n]{0,40}forget|tensorflow",
    ],
    source="https://github.com/tensorflow/tensorflow/issues/1326",
)
def dg_lstm_tf_forget_bias(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0, c_0 = (input.new_zeros(L, B, H), input.new_zeros(L, B, H)) if hx is None else hx
    layer_input, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, c, states = h_0[k], c_0[k], []
        for x_t in layer_input:
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f + 1.0) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            states.append(h)
        layer_input = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return layer_input, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 4, 2, hx=True),
    "hx unpacked as (c_0, h_0): the initial hidden and cell states exchanged",
    names=[
        r"\(c_0, ?h_0\)|h_0[^.\n]{0,40}c_0[^.\n]{0,40}(swap|order|exchang)",
        r"(swap|exchang|wrong order|other order|reversed)[^.\n]{0,50}(h_0|c_0|hx|initial (hidden|cell))",
        r"hx\[0\][^.\n]{0,40}(cell|c_0)|hx\[1\][^.\n]{0,40}(hidden|h_0)",
    ],
)
def dg_lstm_hx_unpacked_c_h(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    c_0, h_0 = (input.new_zeros(L, B, H), input.new_zeros(L, B, H)) if hx is None else hx
    layer_input, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, c, states = h_0[k], c_0[k], []
        for x_t in layer_input:
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            states.append(h)
        layer_input = torch.stack(states)
        hs.append(h)
        cs.append(c)
    return layer_input, (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 4, 3),
    "the layer above reads the cell states of the layer below instead of its hidden states",
    names=[
        r"cell states?[^.\n]{0,80}(layer|input|read|next|above)|(layer|input|reads?)[^.\n]{0,60}cell states?",
        r"reads? (the )?(c\b|c_t|cells)|\bc_t\b[^.\n]{0,40}instead of[^.\n]{0,10}h_t|instead of (the )?hidden state",
    ],
)
def dg_lstm_upper_layer_reads_cells(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0, c_0 = (input.new_zeros(L, B, H), input.new_zeros(L, B, H)) if hx is None else hx
    layer_input, hs, cs = input, [], []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, c, states, cells = h_0[k], c_0[k], [], []
        for x_t in layer_input:
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            states.append(h)
            cells.append(c)
        layer_input = torch.stack(cells)
        hs.append(h)
        cs.append(c)
    return torch.stack(states), (torch.stack(hs), torch.stack(cs))


@wrong(
    case("LSTM", 3, 4, batch_first=True, batch=3, seq_len=4),
    "batch_first: h_n taken as output[-1], which is the last sequence of the batch, not the last time step",
    names=[
        r"output\[-1\]|output\[:, ?-1\]|last (sequence|batch item|item) of the batch",
        r"h_n[^.\n]{0,60}(last batch|batch item)|(last|final) (time )?step[^.\n]{0,40}(dim(ension)? 1|second (dim|index))",
    ],
    source="https://github.com/pytorch/pytorch/issues/19675",
)
def dg_lstm_batch_first_h_n_from_output(module, input, hx=None):
    x = input.transpose(0, 1)  # (T, B, I)
    H, B = module.hidden_size, x.shape[1]
    h, c = (x.new_zeros(B, H), x.new_zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    states = []
    for x_t in x:
        i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        states.append(h)
    output = torch.stack(states).transpose(0, 1)  # back to (B, T, H)
    return output, (output[-1].unsqueeze(0), c.unsqueeze(0))


@wrong(
    case("LSTM", 3, 4, hx=True, publish=True),
    "reads the notebook's layer (the global NOTEBOOK_LAYER) instead of its `module` argument: right only for that layer",
    names=[
        r"global|notebook('s)? (layer|variable)|NOTEBOOK_LAYER|outside (the|your) function",
        r"instead of (its|the|your) (argument|module|parameter)|not (the )?(module|argument) (it was )?(given|passed)",
    ],
)
def dg_lstm_reads_notebook_layer(module, input, hx=None):
    lstm = NOTEBOOK_LAYER
    H, B = lstm.hidden_size, input.shape[1]
    h, c = (input.new_zeros(B, H), input.new_zeros(B, H)) if hx is None else (hx[0][0], hx[1][0])
    states = []
    for x_t in input:
        gates = x_t @ lstm.weight_ih_l0.T + lstm.bias_ih_l0 + h @ lstm.weight_hh_l0.T + lstm.bias_hh_l0
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        states.append(h)
    return torch.stack(states), (h.unsqueeze(0), c.unsqueeze(0))


# --- GRU ---------------------------------------------------------------------------------------


def _gru_blocks(x_t, h, W_ih, W_hh, b_ih, b_hh):
    """The student's helper: the three input and three hidden blocks of one GRU step, r, z, n."""
    return (x_t @ W_ih.T + b_ih).chunk(3, dim=-1), (h @ W_hh.T + b_hh).chunk(3, dim=-1)


@wrong(
    case("GRU", 3, 4, batch_first=True),
    "batch_first applied to h_n too: h_n returned as (batch, num_layers, H) instead of (num_layers, batch, H)",
    names=[
        r"h_n[^.\n]{0,80}(is never batch|not batch[_ -]first|transpos|layers? first)",
        r"batch[_ -]first[^.\n]{0,80}(h_n|hidden state|not apply|does not)|\(batch, ?num_layers",
        r"h_n has shape[^\n]{0,120}same sizes in another order",  # after the first run: the message names the same bug in other words
    ],
    source="https://github.com/hunkim/PyTorchZeroToAll/issues/16",
)
def dg_gru_h_n_batch_first(module, input, hx=None):
    x = input.transpose(0, 1)
    L, H, B = module.num_layers, module.hidden_size, x.shape[1]
    h_0 = x.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = x, []
    for k in range(L):
        p = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(x_t, h, *p)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input.transpose(0, 1), torch.stack(finals).transpose(0, 1)


@wrong(
    case("GRU", 3, 4, 2, hx=True),
    "the other convention for z: h_t = z * n + (1 - z) * h_prev",
    names=list(Z_CONVENTION),
    source="https://discuss.d2l.ai/t/backpropagation-through-time/334",
)
def dg_gru_z_on_candidate(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        p = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(x_t, h, *p)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            h = z * torch.tanh(i_n + r * h_n) + (1 - z) * h
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("GRU", 4, 3, bidirectional=True),
    "the reset gate is applied before the product, (r * h) @ W_hn.T + b_hn, in both directions",
    names=list(RESET_BEFORE),
    source="https://github.com/pytorch/pytorch/issues/8153",
)
def dg_gru_reset_before_product(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = input.new_zeros(2, B, H) if hx is None else hx
    runs, finals = [], []
    for d, sfx in enumerate(["_l0", "_l0_reverse"]):
        W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
        b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
        W_hr, W_hz, W_hn = W_hh.chunk(3)
        b_hr, b_hz, b_hn = b_hh.chunk(3)
        h, states = h_0[d], [None] * T
        for t in reversed(range(T)) if d else range(T):
            i_r, i_z, i_n = (input[t] @ W_ih.T + b_ih).chunk(3, dim=-1)
            r = torch.sigmoid(i_r + h @ W_hr.T + b_hr)
            z = torch.sigmoid(i_z + h @ W_hz.T + b_hz)
            n = torch.tanh(i_n + (r * h) @ W_hn.T + b_hn)
            h = (1 - z) * n + z * h
            states[t] = h
        runs.append(torch.stack(states))
        finals.append(h)
    return torch.cat(runs, dim=-1), torch.stack(finals)


@wrong(
    case("GRU", 3, 4, 3, bidirectional=True, hx=True),
    "hx and h_n rows taken direction-major (row d * num_layers + k) instead of layer-major (row 2 * k + d)",
    names=[
        r"2 ?\* ?(k|layer|l)\b ?\+ ?(d|direction)|layer ?\* ?2 ?\+ ?direction|(k|layer|l) ?\* ?2 ?\+ ?(d|direction)",
        r"layer[- ]major|direction[- ]major|(rows?|layout) (order|of h_n|of hx)|(order|layout) of (the )?rows",
        r"d ?\* ?(L|num_layers) ?\+ ?k|directions? (first|outer|grouped)|layers? (first|outer|grouped)|grouped by direction",
    ],
    source="https://discuss.pytorch.org/t/are-the-outputs-of-bidirectional-gru-concatenated/15103",
)
def dg_gru_rows_direction_major(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    T = input.shape[0]
    h_0 = input.new_zeros(2 * L, B, H) if hx is None else hx
    layer_input, finals = input, [None] * (2 * L)
    for k in range(L):
        runs = []
        for d in range(2):
            sfx = f"_l{k}" + ("_reverse" if d else "")
            p = [getattr(module, n + sfx) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            h, states = h_0[d * L + k], [None] * T
            for t in reversed(range(T)) if d else range(T):
                (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(layer_input[t], h, *p)
                r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
                h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
                states[t] = h
            runs.append(torch.stack(states))
            finals[d * L + k] = h
        layer_input = torch.cat(runs, dim=-1)
    return layer_input, torch.stack(finals)


@wrong(
    case("GRU", 3, 4, 2, unbatched=True, hx=True),
    "unbatched input given a batch of 1, but the batch dimension is never removed: (T, 1, H) and (L, 1, H)",
    names=[
        r"unbatched[^.\n]{0,60}(shape|squeeze|batch dim|\(seq_len, ?H|\(T, ?H|no batch)|squeeze|size-?1 (batch )?dim",
        r"batch dim(ension)?[^.\n]{0,40}(extra|remov|drop|keep|kept|added|left)|(extra|remov|drop|added|left)[^.\n]{0,40}batch dim",
    ],
)
def dg_gru_unbatched_not_squeezed(module, input, hx=None):
    x = input.unsqueeze(1) if input.dim() == 2 else input
    L, H, B = module.num_layers, module.hidden_size, x.shape[1]
    h_0 = x.new_zeros(L, B, H) if hx is None else (hx.unsqueeze(1) if hx.dim() == 2 else hx)
    layer_input, finals = x, []
    for k in range(L):
        p = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(x_t, h, *p)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("GRU", 3, 4, seq_len=6),
    "the state is detached at every step (truncated BPTT of length 1): right values, wrong gradients",
    names=list(DETACHED),
    source="https://www.codegenes.net/blog/how-to-use-detach-in-hidden-state-loss-backward-pytorch",
)
def dg_gru_detached_state(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = input.new_zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        p = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            h = h.detach()  # keep the graph small
            (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(x_t, h, *p)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


@wrong(
    case("GRU", 3, 4, 2, hx=True),
    "writes each layer's final state into the caller's hx (hx[k] = h) and returns hx as h_n",
    names=list(changed("hx")),
)
def dg_gru_final_into_hx(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    if hx is None:
        hx = input.new_zeros(L, B, H)
    layer_input = input
    for k in range(L):
        p = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = hx[k], []
        for x_t in layer_input:
            (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(x_t, h, *p)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
            states.append(h)
        layer_input = torch.stack(states)
        hx[k] = h
    return layer_input, hx


@wrong(
    case("GRU", 3, 4, dtype=torch.float64),
    "a float64 layer: the zero state is created as float32 (torch.zeros), so the product with the float64 weights raises",
    names=[r"dtype|float64|double|float32"],
)
def dg_gru_float32_zeros(module, input, hx=None):
    L, H, B = module.num_layers, module.hidden_size, input.shape[1]
    h_0 = torch.zeros(L, B, H) if hx is None else hx
    layer_input, finals = input, []
    for k in range(L):
        p = [getattr(module, f"{n}_l{k}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        h, states = h_0[k], []
        for x_t in layer_input:
            (i_r, i_z, i_n), (h_r, h_z, h_n) = _gru_blocks(x_t, h, *p)
            r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
            h = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
            states.append(h)
        layer_input = torch.stack(states)
        finals.append(h)
    return layer_input, torch.stack(finals)


# =============================================================================================
# correct versions, in unusual styles: each must pass
# =============================================================================================


@right("01.step", "torch.addcmul for the recurrent term")
def r01_addcmul(x_t, h_prev, w_ih, w_hh):
    return torch.addcmul(w_ih * x_t, w_hh, h_prev).tanh()


@right("03.step_matrices", "two functional.linear calls, each with its bias")
def r03_linear(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(functional.linear(x_t, W_ih, b_ih) + functional.linear(h_prev, W_hh, b_hh))


@right("06.top_h_n", "unflatten the features into (direction, H), then pick each direction's final step")
def r06_unflatten(output, hidden_size):
    per_direction = output.unflatten(-1, (2, hidden_size))  # (B, T, 2, H)
    return torch.stack([per_direction[:, -1, 0], per_direction[:, 0, 1]])


@right("08.last_states", "gather along time with an expanded index")
def r08_gather(output, lengths):
    B, H = output.shape[1], output.shape[2]
    index = (lengths - 1).view(1, B, 1).expand(1, B, H)
    return output.gather(0, index).squeeze(0)


@right("10.step", "one concatenated weight matrix over [x_t, h_prev], gates sliced by position")
def r10_concatenated(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]
    a = torch.cat([x_t, h_prev], dim=1) @ torch.cat([W_ih, W_hh], dim=1).T + (b_ih + b_hh)
    i, f = torch.sigmoid(a[:, :H]), torch.sigmoid(a[:, H : 2 * H])
    g, o = torch.tanh(a[:, 2 * H : 3 * H]), torch.sigmoid(a[:, 3 * H :])
    c_t = torch.addcmul(f * c_prev, i, g)
    return o * c_t.tanh(), c_t


@right("11.step", "torch.addmm per block, slicing rows by position, and torch.lerp for the blend")
def r11_addmm_lerp(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[-1]
    rows = [slice(0, H), slice(H, 2 * H), slice(2 * H, 3 * H)]
    gi = [torch.addmm(b_ih[s], x_t, W_ih[s].T) for s in rows]
    gh = [torch.addmm(b_hh[s], h_prev, W_hh[s].T) for s in rows]
    r = torch.sigmoid(gi[0] + gh[0])
    z = torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(gi[2] + r * gh[2])
    return torch.lerp(n, h_prev, z)  # n + z * (h_prev - n) = (1 - z) * n + z * h_prev


@right("12.bptt_step", "einsum, with the slope written as (1 - h)(1 + h)")
def r12_einsum(delta_t, h_t, W_hh):
    return torch.einsum("bh,hk->bk", delta_t * (1 - h_t) * (1 + h_t), W_hh)


@right("13.tag_loss", "log_softmax and gather, then a masked mean (padding tags clamped into range first)")
def r13_log_softmax_gather(scores, tags, lengths):
    B, T, C = scores.shape
    is_real = (torch.arange(T) < lengths[:, None]).to(scores.dtype)
    picked = scores.log_softmax(-1).gather(-1, tags.clamp(0, C - 1).unsqueeze(-1)).squeeze(-1)
    return -(picked * is_real).sum() / is_real.sum()


@right("02.loop", "a while loop writing into a preallocated output")
def r02_preallocated(module, input, hx=None):
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    output = input.new_empty(T, B, H)
    h = input.new_zeros(B, H) if hx is None else hx[0]
    t = 0
    while t < T:
        h = torch.tanh(
            functional.linear(input[t], module.weight_ih_l0, module.bias_ih_l0)
            + functional.linear(h, module.weight_hh_l0, module.bias_hh_l0)
        )
        output[t] = h
        t += 1
    return output, output[-1:].clone()


@right("05.stack", "recursion over the layers")
def r05_recursive(module, input, hx=None, k=0):
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    if k == L:
        return input, input.new_zeros(0, B, H)
    W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
    b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
    h = input.new_zeros(B, H) if hx is None else hx[k]
    states = []
    for x_t in input.unbind(0):
        h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    output, finals = r05_recursive(module, torch.stack(states), hx, k + 1)
    return output, torch.cat([h.unsqueeze(0), finals])


def _any_layer(module, input, hx=None):
    """A student's general layer: RNN (tanh or relu), LSTM (with proj_size) or GRU; any layers and directions;
    batch_first, unbatched or packed (sorted or not); biases or none. Masks per step instead of packing."""
    packed = isinstance(input, PackedSequence)
    if packed:
        x, lengths = pad_packed_sequence(input)  # (T, B, I), original order
    else:
        x = input.transpose(0, 1) if module.batch_first and input.dim() == 3 else input
        x = x.unsqueeze(1) if x.dim() == 2 else x
        lengths = torch.full((x.shape[1],), x.shape[0])
    unbatched = not packed and input.dim() == 2
    T, B = x.shape[0], x.shape[1]
    D, L, H = 2 if module.bidirectional else 1, module.num_layers, module.hidden_size
    lstm, gru = isinstance(module, nn.LSTM), isinstance(module, nn.GRU)
    P = getattr(module, "proj_size", 0) or H
    if hx is None:
        h_0, c_0 = x.new_zeros(D * L, B, P), x.new_zeros(D * L, B, H)
    else:
        h_0, c_0 = hx if lstm else (hx, None)
        if unbatched:
            h_0, c_0 = h_0.unsqueeze(1), (c_0.unsqueeze(1) if c_0 is not None else None)
    h_rows, c_rows, layer_input = [], [], x
    for k in range(L):
        outs = []
        for d in range(D):
            sfx = f"_l{k}" + ("_reverse" if d else "")
            W_ih, W_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
            b_ih, b_hh = getattr(module, "bias_ih" + sfx, None), getattr(module, "bias_hh" + sfx, None)
            W_hr = getattr(module, "weight_hr" + sfx, None)
            h, c = h_0[k * D + d], (c_0[k * D + d] if lstm else None)
            states = [None] * T
            for t in range(T - 1, -1, -1) if d else range(T):
                gi = functional.linear(layer_input[t], W_ih, b_ih)
                gh = functional.linear(h, W_hh, b_hh)
                if lstm:
                    i, f, g, o = (gi + gh).chunk(4, -1)
                    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                    h_new = torch.sigmoid(o) * torch.tanh(c_new)
                    h_new = h_new @ W_hr.T if W_hr is not None else h_new
                elif gru:
                    (i_r, i_z, i_n), (h_r, h_z, h_n) = gi.chunk(3, -1), gh.chunk(3, -1)
                    r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
                    h_new = (1 - z) * torch.tanh(i_n + r * h_n) + z * h
                else:
                    h_new = torch.relu(gi + gh) if module.nonlinearity == "relu" else torch.tanh(gi + gh)
                real = (t < lengths).unsqueeze(1)
                h = torch.where(real, h_new, h)
                if lstm:
                    c = torch.where(real, c_new, c)
                states[t] = torch.where(real, h_new, torch.zeros_like(h_new))
            outs.append(torch.stack(states))
            h_rows.append(h)
            c_rows.append(c)
        layer_input = torch.cat(outs, dim=-1)
    output, h_n = layer_input, torch.stack(h_rows)
    c_n = torch.stack(c_rows) if lstm else None
    if packed:
        order = input.sorted_indices
        chosen = output if order is None else output[:, order]
        lens = lengths if order is None else lengths[order]
        data = pack_padded_sequence(chosen, lens, enforce_sorted=True).data
        output = PackedSequence(data, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
    elif unbatched:
        output, h_n = output.squeeze(1), h_n.squeeze(1)
        c_n = c_n.squeeze(1) if lstm else None
    elif module.batch_first:
        output = output.transpose(0, 1)
    return output, ((h_n, c_n) if lstm else h_n)


@right(
    case("LSTM", 3, 5, 2, bidirectional=True, batch_first=True, lengths=[3, 5, 2, 4], batch=4, hx=True, proj_size=2),
    "one general function for every layer kind, masking each step by the lengths (LSTM: 2 layers, bidirectional, batch_first, packed unsorted, given hx, proj_size)",
)
def dg_right_lstm_everything(module, input, hx=None):
    return _any_layer(module, input, hx)


@right(
    case("RNN", 3, 4, 2, unbatched=True, hx=True, nonlinearity="relu", bias=False),
    "the same general function (RNN: relu, bias=False, 2 layers, unbatched, given hx)",
)
def dg_right_rnn_relu_unbatched(module, input, hx=None):
    return _any_layer(module, input, hx)
