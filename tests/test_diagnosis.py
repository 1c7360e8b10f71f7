"""helpers.diagnosis: a right layer gets ✓; each catalogued bug, written as a student would, is named.

The buggy layers are not built from helpers.bugs: each is STUDENT_LAYER, a plain re-implementation
written the way a student would write it, with one or two of its lines edited.
"""

import linecache
import random
import textwrap

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from helpers import bugs, diagnosis, sandbox
from helpers.diagnosis import diagnose

STUDENT_LAYER = textwrap.dedent(
    """
    def my_layer(module, input, hx=None):
        packed = isinstance(input, PackedSequence)
        batched = packed or input.dim() == 3
        if packed:
            x, lengths = pad_packed_sequence(input)
        else:
            x = input if batched else input.unsqueeze(1)
            if batched and module.batch_first:
                x = x.transpose(0, 1)
            lengths = torch.full((x.shape[1],), x.shape[0])
        T, B = x.shape[0], x.shape[1]
        L, D = module.num_layers, 2 if module.bidirectional else 1
        H = module.hidden_size
        P = module.proj_size or H
        lstm = module.mode == "LSTM"
        if hx is None:
            h0, c0 = torch.zeros(L * D, B, P), torch.zeros(L * D, B, H)
        elif lstm:
            h0, c0 = hx
        else:
            h0, c0 = hx, torch.zeros(L * D, B, H)
        if not batched and hx is not None:
            h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        h_last, c_last = [], []
        layer_in = x
        for k in range(L):
            outs = []
            for d in range(D):
                sfx = f"_l{k}" + ("_reverse" if d == 1 else "")
                W_ih = getattr(module, "weight_ih" + sfx)
                W_hh = getattr(module, "weight_hh" + sfx)
                b_ih = getattr(module, "bias_ih" + sfx) if module.bias else 0
                b_hh = getattr(module, "bias_hh" + sfx) if module.bias else 0
                h = h0[k * D + d]
                c = c0[k * D + d]
                states = [None] * T
                steps = range(T - 1, -1, -1) if d == 1 else range(T)
                for t in steps:
                    xi = layer_in[t] @ W_ih.T + b_ih
                    hh = h @ W_hh.T + b_hh
                    if lstm:
                        i, f, g, o = (xi + hh).chunk(4, dim=1)
                        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
                        c_new = f * c + i * g
                        h_new = o * torch.tanh(c_new)
                        if module.proj_size:
                            h_new = h_new @ getattr(module, "weight_hr" + sfx).T
                    elif module.mode == "GRU":
                        xr, xz, xn = xi.chunk(3, dim=1)
                        hr, hz, hn = hh.chunk(3, dim=1)
                        r = torch.sigmoid(xr + hr)
                        z = torch.sigmoid(xz + hz)
                        n = torch.tanh(xn + r * hn)
                        h_new, c_new = (1 - z) * n + z * h, c
                    else:
                        act = torch.relu if module.nonlinearity == "relu" else torch.tanh
                        h_new, c_new = act(xi + hh), c
                    if packed:
                        running = (t < lengths).unsqueeze(1)
                        states[t] = torch.where(running, h_new, torch.zeros_like(h_new))
                        h_new = torch.where(running, h_new, h)
                        c_new = torch.where(running, c_new, c)
                    else:
                        states[t] = h_new
                    h, c = h_new, c_new
                outs.append(torch.stack(states))
                h_last.append(h)
                c_last.append(c)
            layer_in = torch.cat(outs, dim=2)
        output, h_n, c_n = layer_in, torch.stack(h_last), torch.stack(c_last)
        if packed:
            output = pack_padded_sequence(output, lengths, enforce_sorted=False)
        elif batched and module.batch_first:
            output = output.transpose(0, 1)
        if not batched:
            output, h_n, c_n = output[:, 0], h_n[:, 0], c_n[:, 0]
        return (output, (h_n, c_n)) if lstm else (output, h_n)
    """
)


def student(*edits):
    """STUDENT_LAYER with each (old, new) edit made (every occurrence), as a function."""
    source = STUDENT_LAYER
    for old, new in edits:
        assert old in source, f"the edit's line is not in the student's layer: {old!r}"
        source = source.replace(old, new)
    scope = {"torch": torch, "PackedSequence": PackedSequence}
    scope |= {"pack_padded_sequence": pack_padded_sequence, "pad_packed_sequence": pad_packed_sequence}
    linecache.cache["<student>"] = (len(source), None, source.splitlines(True), "<student>")  # as IPython keeps a cell
    exec(compile(source, "<student>", "exec"), scope)
    return scope["my_layer"]


def make(kind="RNN", input_size=3, hidden_size=4, packed=False, batched=True, seed=0, **options):
    """(module, input): a seeded layer and a batch of 3 sequences of 5 steps (lengths 5, 2, 4 when packed)."""
    torch.manual_seed(seed)
    module = getattr(nn, kind)(input_size, hidden_size, **options).eval()
    first = options.get("batch_first", False)
    x = torch.randn(3, 5, input_size) if first else torch.randn(5, 3, input_size)
    if packed:
        x = pack_padded_sequence(x, torch.tensor([5, 2, 4]), batch_first=first, enforce_sorted=False)
    elif not batched:
        x = torch.randn(5, input_size)
    return module, x


CONFIGS = {
    "rnn": {},
    "rnn relu, no bias": {"nonlinearity": "relu", "bias": False},
    "rnn batch_first": {"batch_first": True},
    "rnn unbatched": {"batched": False},
    "rnn bidirectional": {"bidirectional": True},
    "rnn 2 layers": {"num_layers": 2},
    "rnn 3 layers bidirectional batch_first": {"num_layers": 3, "bidirectional": True, "batch_first": True},
    "rnn packed bidirectional": {"packed": True, "bidirectional": True},
    "lstm": {"kind": "LSTM"},
    "lstm 2 layers bidirectional proj": {"kind": "LSTM", "num_layers": 2, "bidirectional": True, "proj_size": 2},
    "lstm packed batch_first": {"kind": "LSTM", "packed": True, "batch_first": True},
    "gru": {"kind": "GRU"},
    "gru 2 layers bidirectional, no bias": {"kind": "GRU", "num_layers": 2, "bidirectional": True, "bias": False},
    "gru packed": {"kind": "GRU", "packed": True},
}

SQUARE = {"input_size": 4}  # input_size = hidden_size: a wrong product still runs
STACK_SQUARE = {"num_layers": 2, "bidirectional": True, "input_size": 8}  # layer 0's input as wide as layer 1's

STEP_H = "hh = h @ W_hh.T + b_hh"
X_PART = "xi = layer_in[t] @ W_ih.T + b_ih"
STACKS = "output, h_n, c_n = layer_in, torch.stack(h_last), torch.stack(c_last)"
STEPS = "steps = range(T - 1, -1, -1) if d == 1 else range(T)"
ZEROED_STATES = ("states = [None] * T", "states = [torch.zeros(B, P)] * T")  # a step never computed stays zero
# name: (the student's edits, the layer it is tried on)
CATALOGUE_CASES = {
    "h_prev_zero": ([(STEP_H, "hh = torch.zeros_like(h) @ W_hh.T + b_hh")], {}),
    "h_0_every_step": ([(STEP_H, "hh = h0[k * D + d] @ W_hh.T + b_hh")], {"kind": "LSTM"}),
    "output_h_prev": ([("states[t] = h_new", "states[t] = h")], {}),
    "bias_ih_missing": ([(X_PART, "xi = layer_in[t] @ W_ih.T")], {}),
    "bias_hh_missing": ([(STEP_H, "hh = h @ W_hh.T")], {"kind": "GRU"}),
    "biases_missing": ([(X_PART, "xi = layer_in[t] @ W_ih.T"), (STEP_H, "hh = h @ W_hh.T")], {"kind": "LSTM"}),
    "W_ih_not_transposed": ([("layer_in[t] @ W_ih.T", "layer_in[t] @ W_ih")], SQUARE),
    "W_hh_not_transposed": ([("h @ W_hh.T", "h @ W_hh")], {}),
    "weights_not_transposed": ([("layer_in[t] @ W_ih.T", "layer_in[t] @ W_ih"), ("h @ W_hh.T", "h @ W_hh")], SQUARE),
    "h_n_from_first_step": ([(STACKS, "output, h_n, c_n = layer_in, layer_in[:1], torch.stack(c_last)")], {}),
    "h_n_without_layer_dimension": ([(STACKS, "output, h_n, c_n = layer_in, h, c")], {"kind": "LSTM"}),
    "weights_swapped": ([("layer_in[t] @ W_ih.T", "layer_in[t] @ W_hh.T"), ("h @ W_hh.T", "h @ W_ih.T")], SQUARE),
    "wrong_nonlinearity": (
        [('act = torch.relu if module.nonlinearity == "relu" else torch.tanh', "act = torch.tanh")],
        {"nonlinearity": "relu"},
    ),
    "no_nonlinearity": ([("act(xi + hh), c", "xi + hh, c")], {}),
    "h_0_ignored": ([("if hx is None:", "if True:")], {"kind": "GRU"}),
    "h_0_first_row": ([("h0[k * D + d]", "h0[0]"), ("c0[k * D + d]", "c0[0]")], {"num_layers": 2}),
    "h_0_direction_major": (
        [("h0[k * D + d]", "h0[d * L + k]"), ("c0[k * D + d]", "c0[d * L + k]")],
        {"kind": "LSTM", "num_layers": 2, "bidirectional": True},
    ),
    "batch_first_ignored": ([("if batched and module.batch_first:", "if False:")], {"batch_first": True}),
    "output_not_batch_first": ([("elif batched and module.batch_first:", "elif False:")], {"batch_first": True}),
    "not_reversed": ([(STEPS, "steps = range(T)")], {"bidirectional": True}),
    "reverse_weights_unused": ([('("_reverse" if d == 1 else "")', '("")')], {"bidirectional": True}),
    "backward_not_realigned": (
        [("outs.append(torch.stack(states))", "outs.append(torch.stack(states[::-1] if d == 1 else states))")],
        {"kind": "GRU", "bidirectional": True},
    ),
    "directions_swapped": ([("torch.cat(outs, dim=2)", "torch.cat(outs[::-1], dim=2)")], {"bidirectional": True}),
    "directions_stacked_in_time": ([("torch.cat(outs, dim=2)", "torch.cat(outs, dim=0)")], {"bidirectional": True}),
    "h_n_backward_from_output": (
        [
            (
                STACKS,
                "output, h_n, c_n = layer_in, torch.stack(h_last[:-1] + [layer_in[-1, :, P:]]), torch.stack(c_last)",
            )
        ],
        {"bidirectional": True},
    ),
    "layers_not_chained": ([(X_PART, "xi = x[t] @ W_ih.T + b_ih")], STACK_SQUARE),
    "reads_one_direction": (
        [("layer_in = torch.cat(outs, dim=2)", "layer_in = outs[-1]")],
        {"num_layers": 2, "bidirectional": True},
    ),
    "h_n_top_layer_only": (
        [(STACKS, "output, h_n, c_n = layer_in, torch.stack(h_last[-D:]), torch.stack(c_last[-D:])")],
        {"num_layers": 2},
    ),
    "h_n_direction_major": (
        [
            (
                STACKS,
                "output, h_n, c_n = layer_in, torch.stack(h_last[0::D] + h_last[1::D]), torch.stack(c_last[0::D] + c_last[1::D])",
            )
        ],
        {"kind": "GRU", "num_layers": 2, "bidirectional": True},
    ),
    "padding_run_through": (
        [("running = (t < lengths).unsqueeze(1)", "running = torch.ones(B, 1, dtype=torch.bool)")],
        {"packed": True},
    ),
    "unbatched_read_as_batch": (
        [
            ("x = input if batched else input.unsqueeze(1)", "x = input if batched else input.unsqueeze(0)"),
            (
                "output, h_n, c_n = output[:, 0], h_n[:, 0], c_n[:, 0]",
                "output, h_n, c_n = output[0], h_n[:, -1], c_n[:, -1]",
            ),
        ],
        {"kind": "GRU", "batched": False, "bidirectional": True},  # one direction alone is h_0_every_step too
    ),
    "mask_one_step_over": (
        [("running = (t < lengths).unsqueeze(1)", "running = (t <= lengths).unsqueeze(1)")],
        {"packed": True},
    ),
    "mask_one_step_short": (
        [("running = (t < lengths).unsqueeze(1)", "running = (t < lengths - 1).unsqueeze(1)")],
        {"packed": True, "kind": "LSTM"},
    ),
    "h_n_at_padded_end": (
        [
            (
                STACKS,
                "output, h_n, c_n = layer_in, torch.stack(h_last[:-D] + list(layer_in[-1].split(P, dim=1))), torch.stack(c_last)",
            )
        ],
        {"kind": "LSTM", "packed": True, "bidirectional": True},
    ),
    "lstm_gates_ifog": (
        [("i, f, g, o = (xi + hh).chunk(4, dim=1)", "i, f, o, g = (xi + hh).chunk(4, dim=1)")],
        {"kind": "LSTM"},
    ),
    "lstm_i_f_swapped": ([("c_new = f * c + i * g", "c_new = i * c + f * g")], {"kind": "LSTM"}),
    "cell_not_carried": ([("c_new = f * c + i * g", "c_new = f * c0[k * D + d] + i * g")], {"kind": "LSTM"}),
    "h_is_o_times_c": ([("h_new = o * torch.tanh(c_new)", "h_new = o * c_new")], {"kind": "LSTM"}),
    "projection_missing": ([("if module.proj_size:", "if False:")], {"kind": "LSTM", "proj_size": 2}),
    "gru_reset_before_product": (
        [("n = torch.tanh(xn + r * hn)", "n = torch.tanh(xn + (r * h) @ W_hh.chunk(3)[2].T + b_hh.chunk(3)[2])")],
        {"kind": "GRU"},
    ),
    "lstm_g_sigmoid": ([("torch.sigmoid(f), torch.tanh(g)", "torch.sigmoid(f), torch.sigmoid(g)")], {"kind": "LSTM"}),
    "gru_b_hn_outside_reset": (
        [("n = torch.tanh(xn + r * hn)", "n = torch.tanh(xn + r * (h @ W_hh.chunk(3)[2].T) + b_hh.chunk(3)[2])")],
        {"kind": "GRU"},
    ),
    "gru_reset_unused": (
        [("n = torch.tanh(xn + r * hn)", "n = torch.tanh(xn + hn)")],
        {"kind": "GRU", "bidirectional": True},
    ),
    "gru_z_flipped": ([("(1 - z) * n + z * h, c", "z * n + (1 - z) * h, c")], {"kind": "GRU"}),
    "gru_gates_zrn": (
        [("xr, xz, xn = xi", "xz, xr, xn = xi"), ("hr, hz, hn = hh", "hz, hr, hn = hh")],
        {"kind": "GRU"},
    ),
    "loop_stops_early": ([(STEPS, "steps = range(T - 1, -1, -1) if d == 1 else range(T - 1)"), ZEROED_STATES], {}),
    "backward_stops_early": (
        [(STEPS, "steps = range(T - 1, 0, -1) if d == 1 else range(T)"), ZEROED_STATES],
        {"bidirectional": True},
    ),
    "layer_0_weights_everywhere": ([('sfx = f"_l{k}"', 'sfx = "_l0"')], STACK_SQUARE),
    "b_ih_for_both": ([(STEP_H, "hh = h @ W_hh.T + b_ih")], {}),
    "batch_first_reshaped": (
        [
            ("x = x.transpose(0, 1)", "x = x.reshape(x.shape[1], x.shape[0], -1)"),
            ("output = output.transpose(0, 1)", "output = output.reshape(B, T, -1)"),
        ],
        {"batch_first": True},
    ),
    "outputs_aliased": (
        [
            ("states = [None] * T", "states = [None] * T\n            buf = torch.zeros(B, P)"),
            (
                "                    states[t] = h_new",
                "                    buf.copy_(h_new)\n                    states[t] = buf",
            ),
        ],
        {},
    ),
    "c_0_ignored": ([("c = c0[k * D + d]", "c = torch.zeros(B, H)")], {"kind": "LSTM"}),
    "hx_swapped": ([("h0, c0 = hx", "c0, h0 = hx")], {"kind": "LSTM"}),
    "h_n_c_n_swapped": ([("(output, (h_n, c_n)) if lstm", "(output, (c_n, h_n)) if lstm")], {"kind": "LSTM"}),
    "h_from_c_prev": ([("h_new = o * torch.tanh(c_new)", "h_new = o * torch.tanh(c)")], {"kind": "LSTM"}),
    "forget_bias_added": (
        [("torch.sigmoid(f), torch.tanh(g)", "torch.sigmoid(f + 1), torch.tanh(g)")],
        {"kind": "LSTM"},
    ),
    "gru_n_sigmoid": ([("n = torch.tanh(xn + r * hn)", "n = torch.sigmoid(xn + r * hn)")], {"kind": "GRU"}),
    "output_bottom_layer": (
        [
            (
                "layer_in = torch.cat(outs, dim=2)",
                "layer_in = torch.cat(outs, dim=2)\n        bottom = layer_in if k == 0 else bottom",
            ),
            (STACKS, "output, h_n, c_n = bottom, torch.stack(h_last), torch.stack(c_last)"),
        ],
        {"num_layers": 2},
    ),
    "h_n_top_repeated": (
        [(STACKS, "output, h_n, c_n = layer_in, torch.stack(h_last[-D:] * L), torch.stack(c_last[-D:] * L)")],
        {"num_layers": 2},
    ),
    "layer_reads_below_a_step_late": (
        [
            (
                "layer_in = torch.cat(outs, dim=2)",
                "top = torch.cat(outs, dim=2)\n        layer_in = torch.cat([h0[k][None], top[:-1]])",
            ),
            (STACKS, "output, h_n, c_n = top, torch.stack(h_last), torch.stack(c_last)"),
        ],
        {"num_layers": 2},
    ),
    "next_layer_halves_swapped": (
        [
            (
                "layer_in = torch.cat(outs, dim=2)",
                "top = torch.cat(outs, dim=2)\n        layer_in = torch.cat(outs[::-1], dim=2)",
            ),
            (STACKS, "output, h_n, c_n = top, torch.stack(h_last), torch.stack(c_last)"),
        ],
        {"num_layers": 2, "bidirectional": True},
    ),
    "cell_carried_up": (
        [("c = c0[k * D + d]", "c = c0[k * D + d] if k == 0 else c_last[(k - 1) * D + d]")],
        {"kind": "LSTM", "num_layers": 2},
    ),
    "backward_from_forward_end": (
        [
            ("h = h0[k * D + d]", "h = h0[k * D + d] if d == 0 else h_last[-1]"),
            ("c = c0[k * D + d]", "c = c0[k * D + d] if d == 0 else c_last[-1]"),
        ],
        {"bidirectional": True},
    ),
    "features_flipped": (
        [
            (STEPS, "steps = range(T)"),
            (X_PART, "xi = (layer_in[t].flip(-1) if d == 1 else layer_in[t]) @ W_ih.T + b_ih"),
        ],
        {"bidirectional": True},
    ),
    "backward_from_padding": (
        [("running = (t < lengths).unsqueeze(1)", "running = (t < lengths).unsqueeze(1) | (d == 1)")],
        {"packed": True, "bidirectional": True},
    ),
    "h_n_sorted_order": (
        [
            (
                STACKS,
                "output, h_n, c_n = layer_in, torch.stack(h_last)[:, input.sorted_indices], torch.stack(c_last)[:, input.sorted_indices]",
            )
        ],
        {"packed": True},
    ),
}
# The same bugs on layers where they make the student's code raise, or in other settings.
MORE_CASES = [
    ("W_ih_not_transposed", {}),  # input_size 3, hidden_size 4: x_t @ W_ih cannot be computed
    ("W_hh_not_transposed", {"kind": "LSTM"}),  # W_hh is (4H, H): h @ W_hh cannot be computed
    ("weights_swapped", {"kind": "GRU"}),
    ("layers_not_chained", {"num_layers": 2}),
    ("not_reversed", {"kind": "LSTM", "bidirectional": True, "packed": True}),
    ("h_0_ignored", {"num_layers": 3, "bidirectional": True, "batch_first": True}),
    ("bias_ih_missing", {"kind": "LSTM", "batched": False}),
    ("directions_swapped", {"kind": "GRU", "bidirectional": True, "num_layers": 2, "bias": False}),
    ("output_h_prev", {"kind": "LSTM", "bidirectional": True, "batch_first": True}),
    ("h_n_at_padded_end", {"packed": True}),
    ("h_prev_zero", {"kind": "LSTM", "batch_first": True}),
    ("h_n_without_layer_dimension", {"kind": "GRU", "batch_first": True}),
    ("h_n_from_first_step", {"kind": "GRU", "batch_first": True}),
    ("layer_0_weights_everywhere", {"kind": "GRU", "num_layers": 3, "input_size": 4}),
    ("backward_stops_early", {"kind": "LSTM", "bidirectional": True, "num_layers": 2}),
    ("loop_stops_early", {"kind": "GRU", "batch_first": True}),
]


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_a_right_layer_gets_a_tick(config, capsys):
    """The student's layer without edits matches torch on every option the series teaches."""
    module, x = make(**config)
    verdict = diagnose(student(), module, x)
    line = capsys.readouterr().out
    assert verdict and verdict.status == "right", line
    assert line.startswith("✓ my_layer matches nn.")


@pytest.mark.parametrize("name", CATALOGUE_CASES)
def test_each_catalogued_bug_is_named(name, capsys):
    """diagnose names the bug of a student's layer with that bug, and prints its fix."""
    edits, config = CATALOGUE_CASES[name]
    module, x = make(**config)
    verdict = diagnose(student(*edits), module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.bug is not None, text
    assert verdict.bug.name == name, text
    assert f"most likely: {bugs.BUGS[name].title}." in text and f"fix: {bugs.BUGS[name].fix}." in text


@pytest.mark.parametrize("name, config", MORE_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(MORE_CASES)])
def test_a_bug_is_named_on_other_layers_too(name, config, capsys):
    """The same edit on another layer, where it may make the code raise, is still named."""
    module, x = make(**config)
    verdict = diagnose(student(*CATALOGUE_CASES[name][0]), module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.bug is not None and verdict.bug.name == name, text


def test_every_catalogued_bug_has_a_student_case():
    """The catalogue and the tests list the same bugs, at least 25."""
    assert set(CATALOGUE_CASES) == set(bugs.BUGS)
    assert len(bugs.CATALOGUE) >= 25


def test_the_catalogue_engine_without_a_bug_is_torch():
    """bugs.run(module, input, hx) with no bug returns exactly what the module returns."""
    for config in CONFIGS.values():
        module, x = make(**config)
        ours, theirs = bugs.run(module, x), module(x)
        assert diagnosis.same_outcome(sandbox.Outcome(ours), sandbox.Outcome(theirs))


def test_an_error_shows_the_students_own_line_and_no_helpers_frames(capsys):
    """An exception inside the student's function is reported at their line, with its message."""
    module, x = make()
    verdict = diagnose(student(("hh = h @ W_hh.T + b_hh", "hh = h @ W_hh.T + b_hh + undefined_name")), module, x)
    text = capsys.readouterr().out
    assert verdict.status == "raised" and verdict.error == "NameError: name 'undefined_name' is not defined"
    assert "raised NameError at line 41, in my_layer: hh = h @ W_hh.T + b_hh + undefined_name" in text
    assert "helpers" not in text and "File " not in text


def test_a_function_not_written_yet_reads_so(capsys):
    """A stub that returns None gets the stable 'not written yet' line, whatever the layer."""

    def my_rnn(module, input, hx=None): ...

    for config in ({}, {"kind": "LSTM"}):
        module, x = make(**config)
        verdict = diagnose(my_rnn, module, x)
        assert not verdict and verdict.status == "not written"
    returns = "(output, (h_n, c_n))"
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"… my_rnn: not written yet (it returns None). Write it, return {returns} as the layer does, and run the cell again."
    )


def test_a_call_that_runs_too_long_is_stopped(monkeypatch, capsys):
    """An endless loop is stopped at the time limit, with the line it was running."""
    monkeypatch.setattr(sandbox, "TIME_LIMIT", 0.2)

    def my_rnn(module, input, hx=None):
        while True:
            pass

    module, x = make()
    verdict = diagnose(my_rnn, module, x)
    text = capsys.readouterr().out
    assert verdict.status == "too slow"
    assert "stopped: the check gives your function 0.2 seconds in all" in text and "in my_rnn: while True:" in text


def test_the_time_limit_works_outside_the_main_thread_too(monkeypatch):
    """Without a timer signal (another thread), tracing stops the loop instead."""
    import threading

    monkeypatch.setattr(sandbox, "TIME_LIMIT", 0.2)

    def my_rnn(module, input, hx=None):
        while True:
            pass

    module, x = make()
    found = []
    worker = threading.Thread(target=lambda: found.append(diagnose(my_rnn, module, x)))
    worker.start()
    worker.join(timeout=30)
    assert found and found[0].status == "too slow"


def test_wrong_shapes_are_explained_with_the_layers_dimension_names(capsys):
    """A batch-first output from a time-first layer is named as such, with torch's layout."""
    module, x = make()
    verdict = diagnose(lambda m, i, h: (m(i, h)[0].transpose(0, 1), m(i, h)[1]), module, x, name="my_rnn")
    text = capsys.readouterr().out
    assert not verdict and verdict.part == "output"
    assert "output has shape (3, 5, 4); torch's is (seq_len=5, batch=3, num_directions*hidden_size=4)" in text
    assert "the same sizes in another order" in text


def test_the_departure_names_layer_direction_step_batch_and_unit(capsys):
    """A bug that only the backward direction shows is placed there, at the first step it computes."""
    module, x = make(bidirectional=True)
    verdict = diagnose(student((STEPS, "steps = range(T)")), module, x)
    assert (verdict.part, verdict.layer, verdict.direction, verdict.t) == ("output", 0, 1, 4)
    assert verdict.index == (4, verdict.batch, 4 + verdict.unit % 4) and verdict.unit >= 4
    assert "layer 0, backward direction, time step 5 (t = 4)" in capsys.readouterr().out


def test_a_bug_only_a_probe_shows_is_found_on_that_probe(capsys):
    """h_0 ignored is invisible on an input without hx; the nonzero-h_0 probe shows it."""
    module, x = make()
    verdict = diagnose(student(("if hx is None:", "if True:")), module, x)
    text = capsys.readouterr().out
    assert "On your input it matches torch, but not on this probe:" in text
    assert verdict.probe.startswith("a nonzero initial state") and verdict.bug.name == "h_0_ignored"


def test_bad_arguments_are_explained_not_raised(capsys):
    """diagnose given a class, a wrong input or a non-function prints why and returns a false Diagnosis."""
    module, x = make()
    for args in ((student(), nn.RNN, x), (student(), module, torch.zeros(5, 3, 7)), ("my_layer", module, x)):
        verdict = diagnose(*args)
        assert not verdict and verdict.status == "cannot check"
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith("✗ ") for line in lines) and "input_size=3" in lines[1]


def test_diagnose_leaves_the_students_module_input_and_random_state_alone():
    """A function that changes everything it is handed changes none of the student's objects."""

    def vandal(module, input, hx=None):
        torch.manual_seed(123)
        with torch.no_grad():
            module.weight_ih_l0.zero_()
        input.zero_()
        return module(input, hx)

    module, x = make()
    weights, x_before = module.weight_ih_l0.detach().clone(), x.clone()
    torch.manual_seed(7)
    state = torch.get_rng_state()
    diagnose(vandal, module, x)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(module.weight_ih_l0, weights) and torch.equal(x, x_before)


# The fuzz test: random wrong implementations, each several bugs or something stranger.
EDITS = [edit for edits, _ in CATALOGUE_CASES.values() for edit in edits]
ODD_FUNCTIONS = [
    lambda m, i, h: None,
    lambda m, i, h: "output",
    lambda m, i, h: (1, 2, 3),
    lambda m, i, h: m(i, h)[0],
    lambda m, i, h: (m(i, h)[0], [m(i, h)[1]]),
    lambda m, i, h: (m(i, h)[0] + float("nan"), m(i, h)[1]),
    lambda m, i, h: (m(i, h)[0].tolist(), m(i, h)[1]),
    lambda m, i, h: (torch.zeros(1), torch.zeros(1)),
    lambda m, i, h: 1 / 0,
    lambda m, i, h: (m(i, h)[0].int(), m(i, h)[1]),
    lambda m, i, h: (m(i, h)[0][..., :1], m(i, h)[1]),
    lambda m, i, h: [][0],
    lambda m, i, h: (m, i),
    lambda m, i, h: exec("raise SystemExit(3)"),
]


@pytest.mark.parametrize("seed", range(60))
def test_fuzz_random_wrong_implementations_never_crash_diagnose(seed, capsys):
    """Random mixes of catalogued edits and odd returns: diagnose prints a ✗ line and never raises."""
    rng = random.Random(seed)
    config = dict(rng.choice(list(CONFIGS.values())))
    module, x = make(**config, seed=seed)
    if rng.random() < 0.25:
        fn = rng.choice(ODD_FUNCTIONS)
    else:
        source, edits = STUDENT_LAYER, []
        for old, new in rng.sample(EDITS, rng.randint(1, 3)):
            if old in source:  # an earlier edit may have rewritten this line
                source = source.replace(old, new)
                edits.append((old, new))
        fn = student(*edits)
    verdict = diagnose(fn, module, x, name="fuzzed")
    text = capsys.readouterr().out
    assert isinstance(verdict, diagnosis.Diagnosis) and text.startswith(("✗ fuzzed", "… fuzzed", "✓ fuzzed"))
    assert text.strip() == verdict.line
    if verdict:  # some edits do nothing on some layers (a bias edit without biases): torch agrees
        assert diagnosis.same_outcome(sandbox.Outcome(fn(module, x)), sandbox.Outcome(module(x)))


def test_a_bug_outside_the_catalogue_gets_a_hint_and_the_term_by_term_checks(capsys):
    """b_ih counted twice is no catalogued bug: the checks show that only the b_ih probe departs, and the hint says
    to look at how b_ih enters."""
    module, x = make()
    verdict = diagnose(student((X_PART, "xi = layer_in[t] @ W_ih.T + 2 * b_ih")), module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.bug is None
    assert (
        "hint: with only b_ih acting it departs, and every other term alone is right: check how b_ih enters your "
        "formula (its shape, its sign, where it is added)." in text
    )
    assert "checks: your input ✗ · nonzero h_0 ✗ · W_ih alone ✓ · W_hh alone ✓ · b_ih alone ✗ · b_hh alone ✓" in text


@pytest.mark.parametrize("index", range(len(ODD_FUNCTIONS)))
def test_odd_returns_and_errors_are_explained(index, capsys):
    """Each odd function (None, text, a wrong tuple, an error, sys.exit) gets a line, never an exception."""
    module, x = make(kind="LSTM")
    verdict = diagnose(ODD_FUNCTIONS[index], module, x, name="odd")
    text = capsys.readouterr().out
    assert not verdict and text.startswith(("✗ odd: not yet.", "… odd: not written yet")), text


def test_a_stack_whose_layers_are_each_right_is_told_to_check_the_wiring(capsys):
    """Layer 1 reading the layer below's states in reverse time: every layer alone passes, so the hint names the wiring."""
    module, x = make(num_layers=2)
    reversed_below = (
        "xi = layer_in[t] @ W_ih.T + b_ih",
        "xi = (layer_in[T - 1 - t] if k else layer_in[t]) @ W_ih.T + b_ih",
    )
    verdict = diagnose(student(reversed_below), module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.bug is None, text
    assert "hint: each layer alone is right, the stack is not" in text


def test_a_layer_reading_the_one_below_a_step_late_with_zeros_first_is_told_so_with_doubt(capsys):
    """Zeros at t = 0 where the catalogued bug reads h_0: the two agree unless h_0 is nonzero, so "possibly"."""
    module, x = make(num_layers=2)
    late = (
        "xi = layer_in[t] @ W_ih.T + b_ih",
        "xi = ((layer_in[t - 1] if t else 0 * layer_in[t]) if k else layer_in[t]) @ W_ih.T + b_ih",
    )
    verdict = diagnose(student(late), module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.bug.name == "layer_reads_below_a_step_late", text
    assert "possibly: layer k reads the layer below one step late" in text, text


def test_two_bugs_that_fit_every_probe_are_both_named(capsys):
    """Layer 0's weights in layer 1 raise exactly as layer 1 reading the input would: both causes are said."""
    module, x = make(num_layers=2)
    verdict = diagnose(student(('sfx = f"_l{k}"', 'sfx = "_l0"')), module, x)
    text = capsys.readouterr().out
    assert verdict.bug.name in ("layers_not_chained", "layer_0_weights_everywhere")
    assert "the probes cannot tell these apart; most likely one of them:" in text
    assert f"- {bugs.BUGS['layers_not_chained'].title}" in text
    assert f"- {bugs.BUGS['layer_0_weights_everywhere'].title}" in text


# Wrong code that used to pass: run as the student's cell runs it, compared in dtype and gradients too.


def test_a_weight_transposed_in_place_is_caught(capsys):
    """W_hh.t_() then h @ W_hh gives the right values under no_grad; with autograd on, as in the student's cell, it cannot."""
    fn = student(
        ('W_hh = getattr(module, "weight_hh" + sfx)', 'W_hh = getattr(module, "weight_hh" + sfx).t_()'),
        ("h @ W_hh.T", "h @ W_hh"),
    )
    module, x = make()
    verdict = diagnose(fn, module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.status == "raised", text
    assert "in-place operation" in text and "never write into the layer's weights" in text


def test_autograd_left_off_is_reported_and_put_back(capsys):
    """A function that turns autograd off and returns torch's own result: no gradient, and the mode is restored."""

    def my_rnn(module, input, hx=None):
        torch.set_grad_enabled(False)
        return module(input, hx)

    module, x = make()
    verdict = diagnose(my_rnn, module, x)
    text = capsys.readouterr().out
    assert torch.is_grad_enabled()
    assert not verdict and "its result carries no gradient" in text and "it leaves autograd off" in text


def test_float64_results_are_a_departure(capsys):
    """The right values in float64 are not what the layer returns."""

    def my_rnn(module, input, hx=None):
        output, h_n = module(input, hx)
        return output.double(), h_n.double()

    module, x = make()
    verdict = diagnose(my_rnn, module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.part == "output"
    assert "output is torch.float64; torch's is torch.float32" in text


@pytest.mark.parametrize("config", [{}, {"kind": "LSTM", "bidirectional": True}, {"kind": "GRU", "num_layers": 2}])
def test_a_state_detached_between_steps_is_named_by_its_gradients(config, capsys):
    """h.detach() each step: every value right, the gradients those of one-step truncated backprop."""
    fn = student(("h, c = h_new, c_new", "h, c = h_new.detach(), c_new.detach()"))
    module, x = make(**config)
    verdict = diagnose(fn, module, x)
    text = capsys.readouterr().out
    assert not verdict and verdict.status == "wrong", text
    assert "the values are right, the gradients are not" in text and "the state is detached between steps" in text


def test_a_loop_over_at_most_two_layers_fails_on_the_three_layer_probe(capsys):
    """Code that handles two layers passes a two-layer module's own probes; the larger probe has three."""
    module, x = make(num_layers=2)
    verdict = diagnose(student(("for k in range(L):", "for k in range(min(L, 2)):")), module, x)
    text = capsys.readouterr().out
    assert not verdict and "probe: a larger layer (seeded random weights): hidden_size=4, 3 layers" in text, text


@pytest.mark.parametrize(
    "edit", [("h @ W_hh.T", "h @ W_hh"), ("h @ W_hh.T", "h * W_hh[:, 0]")], ids=["untransposed", "elementwise"]
)
def test_one_unit_and_a_batch_of_one_no_longer_hide_a_wrong_product(edit, capsys):
    """With hidden_size 1 and a batch of 1, h @ W_hh and h * W_hh equal h @ W_hh.T; the larger probes tell them apart."""
    module, _ = make(hidden_size=1)
    x = torch.randn(4, 1, 3)
    verdict = diagnose(student(edit), module, x)
    assert not verdict, capsys.readouterr().out


def test_a_function_reading_the_notebooks_layer_is_told_so(capsys):
    """Right on its own input, wrong on every other layer: the notebook name it reads is given."""
    module, x = make()
    notebook_rnn = module

    def my_rnn(module, input, hx=None):
        return notebook_rnn(input, hx)

    verdict = diagnose(my_rnn, module, x)
    text = capsys.readouterr().out
    assert not verdict and "it reads `notebook_rnn` from the notebook, not from its arguments" in text, text


def test_argument_messages_keep_the_students_function_in_the_call(capsys):
    """A model that holds the layer: the suggested call is diagnose(my_rnn, model.rnn, ...), never unroll's."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.RNN(3, 4)

    _, x = make()
    verdict = diagnose(student(), Model(), x)
    text = capsys.readouterr().out
    assert verdict.status == "cannot check" and "diagnose(my_rnn, model.rnn, input)" in text and "unroll" not in text


def test_what_a_function_prints_is_capped(capsys):
    """A print in the loop shows its first lines, not one per step of every probe."""

    def my_rnn(module, input, hx=None):
        for _ in range(500):
            print("a line")
        return module(input, hx)

    module, x = make()
    diagnose(my_rnn, module, x)
    lines = capsys.readouterr().out.splitlines()
    assert lines.count("a line") == sandbox.OUTPUT_LINES and any(
        line.startswith("… and 460 more lines") for line in lines
    )


def test_a_state_detached_as_each_step_reads_it_is_named_too(capsys):
    """h.detach() where the step reads it (the last state keeps its gradient): the same cause, named."""
    verdict = diagnose(student((STEP_H, "hh = h.detach() @ W_hh.T + b_hh")), *make())
    text = capsys.readouterr().out
    assert not verdict and "the state is detached between steps" in text, text


@pytest.mark.parametrize(
    "change, words, status",
    [
        (lambda: torch.set_default_dtype(torch.float64), "default dtype", "side effect"),
        (lambda: torch.manual_seed(0), "note: it draws from (or reseeds) torch's random generator", "right"),
        (lambda: torch.set_num_threads(1 if torch.get_num_threads() > 1 else 2), "number of threads", "side effect"),
    ],
    ids=["default dtype", "reseeded", "threads"],
)
def test_torch_settings_are_restored_after_every_check_and_the_change_named(change, words, status, capsys):
    """A right layer that changes a global setting of torch is told so (✗, or a note for a random draw), and the setting is as it was."""

    def my_rnn(module, input, hx=None):
        change()
        return module(input, hx)

    module, x = make()
    before = (torch.get_default_dtype(), torch.get_num_threads(), torch.get_rng_state(), torch.is_grad_enabled())
    verdict = diagnose(my_rnn, module, x)
    text = capsys.readouterr().out
    after = (torch.get_default_dtype(), torch.get_num_threads(), torch.get_rng_state(), torch.is_grad_enabled())
    assert before[:2] == after[:2] and torch.equal(before[2], after[2]) and before[3] == after[3]
    assert verdict.status == status and words in text, text


def test_states_in_other_rows_are_told_which_row_holds_which(capsys):
    """h_n's rows swapped by hand (no catalogued order): the hint says which row holds torch's which."""
    swapped = (STACKS, "output, h_n, c_n = layer_in, torch.stack(h_last[::-1]), torch.stack(c_last[::-1])")
    verdict = diagnose(student(swapped), *make(num_layers=3))
    text = capsys.readouterr().out
    assert (
        not verdict
        and "h_n holds torch's final states in other rows (row 0 holds torch's row 2, row 2 holds torch's row 0)"
        in text
    ), text


def test_a_reshape_where_a_transpose_was_meant_is_suspected(capsys):
    """A batch-first output made with reshape holds torch's numbers in other places: the hint says so."""

    def my_rnn(module, input, hx=None):
        output, h_n = module(input, hx)  # (batch, seq_len, H)
        stacked = output.transpose(0, 1).contiguous()  # (seq_len, batch, H), as a loop over time stacks it
        return stacked.reshape(output.shape), h_n

    verdict = diagnose(my_rnn, *make(batch_first=True))
    text = capsys.readouterr().out
    assert not verdict and "a .view() or .reshape() where a .transpose()" in text, text


def test_a_cell_built_inside_the_function_is_right_with_a_note(capsys):
    """Copying the weights into an nn.GRUCell made inside draws its initial weights: right, with a note, not ✗."""

    def my_gru(module, input, hx=None):
        cell = nn.GRUCell(module.input_size, module.hidden_size)
        with torch.no_grad():
            cell.weight_ih.copy_(module.weight_ih_l0)
            cell.weight_hh.copy_(module.weight_hh_l0)
            cell.bias_ih.copy_(module.bias_ih_l0)
            cell.bias_hh.copy_(module.bias_hh_l0)
        h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
        states = []
        for x_t in input:
            h = torch.tanh(h) * 0 + cell(x_t, h) if False else cell(x_t, h)
            states.append(h)
        return torch.stack(states), h.unsqueeze(0)

    module, x = make(kind="GRU")
    verdict = diagnose(my_gru, module, x)
    text = capsys.readouterr().out
    assert verdict.status == "wrong" and "gradients are not" in text, text  # the cell's own copies get the gradient


@pytest.mark.parametrize("cut", ["input", "hx"])
def test_an_input_or_initial_state_detached_is_named(cut, capsys):
    """x.detach() or hx.detach() inside: the values are right, no gradient reaches what made them."""

    def my_rnn(module, input, hx=None):
        if cut == "input":
            input = input.detach()
        elif hx is not None:
            hx = hx.detach()
        return module(input, hx)

    module, x = make()
    verdict = diagnose(my_rnn, module, x, torch.zeros(1, 3, 4))
    text = capsys.readouterr().out
    assert not verdict and ("input is detached" if cut == "input" else "h_0 is detached") in text, text


def test_a_state_detached_is_caught_even_on_a_one_step_input(capsys):
    """On one step a detached state changes no gradient; the larger probe, run with autograd too, shows it."""
    fn = student(("h, c = h_new, c_new", "h, c = h_new.detach(), c_new.detach()"))
    module, _ = make()
    verdict = diagnose(fn, module, torch.randn(1, 2, 3))
    assert not verdict and "the state is detached between steps" in capsys.readouterr().out


def test_a_padded_output_for_a_packed_input_is_a_departure(capsys):
    """torch returns a PackedSequence for a packed input; a padded tensor is not what the layer returns."""

    def my_rnn(module, input, hx=None):
        output, h_n = module(input, hx)
        return pad_packed_sequence(output)[0], h_n

    verdict = diagnose(my_rnn, *make(packed=True))
    assert not verdict and "output is a padded tensor" in capsys.readouterr().out


def test_a_function_whose_name_raises_is_still_checked(capsys):
    """A callable whose __name__ raises gets a line, not an exception."""

    class Odd:
        @property
        def __name__(self):
            raise RuntimeError("no name")

        def __call__(self, module, input, hx=None):
            return module(input, hx)

    verdict = diagnose(Odd(), *make())
    assert not verdict and "✗ your function" in capsys.readouterr().out  # said, never raised
