"""The gate cases of the LSTM and GRU step exercises (helpers/solutions/terms.py's gate_cases): each holds the
gates it says open or shut, as torch's own cells compute them, and a wrong gate is pointed at by them."""

import pytest
import torch
from torch import nn

from helpers import diagnosis, exercises, gates
from helpers.diagnosis import diagnose
from helpers.solutions import BY_KEY


def gate_cases(key):
    return [(text, args) for text, args in BY_KEY[key].cases() if text.startswith("gate")]


def cell(kind, W_ih, W_hh, b_ih, b_hh):
    """torch's own cell holding these weights."""
    module = getattr(nn, kind)(W_ih.shape[1], W_hh.shape[1])
    with torch.no_grad():
        for name, value in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), (W_ih, W_hh, b_ih, b_hh)):
            getattr(module, name).copy_(value)
    return module


def test_the_lstm_gate_cases_hold_the_gates_they_name_and_torch_computes_what_they_say():
    cases = dict(gate_cases("10.step"))
    assert [text.split(":")[0] for text in cases] == ["gate f alone", "gate i alone", "gate g alone", "gate o alone"]
    for text, (x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh) in cases.items():
        a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
        held = {"i": i, "f": f, "g": g, "o": o}
        for gate, setting in [part.split(" ") for part in text.split(": ")[1].split(", so ")[0].split(", ")]:
            want = {"open": 1.0, "shut": 0.0, "zero": 0.0}[setting]
            assert torch.allclose(held[gate], torch.full_like(held[gate], want), atol=1e-12), (text, gate)
        working = text.split(":")[0].split(" ")[1]
        assert not torch.allclose(held[working], held[working].round()), f"{working} is not left working in {text}"
        h_t, c_t = cell("LSTMCell", W_ih, W_hh, b_ih, b_hh)(x_t, (h_prev, c_prev))
        said = {  # what each description says follows
            "f": (f * c_prev, torch.tanh(f * c_prev)),
            "i": (i, torch.tanh(i)),
            "g": (g, torch.tanh(g)),
            "o": (torch.ones_like(o), o * torch.tanh(torch.tensor(1.0))),
        }[working]
        torch.testing.assert_close((c_t, h_t), said, rtol=0, atol=1e-6)


def test_the_gru_gate_cases_hold_the_gates_they_name_and_torch_computes_what_they_say():
    cases = gate_cases("11.step")
    assert [text.split(":")[0] for text, _ in cases] == [
        "gate z alone",
        "gate n alone",
        "gate n with r shut",
        "gates r and n",
    ]
    for text, (x_t, h_prev, W_ih, W_hh, b_ih, b_hh) in cases:
        W_ir, W_iz, W_in = W_ih.chunk(3)
        W_hr, W_hz, W_hn = W_hh.chunk(3)
        b_ir, b_iz, b_in = b_ih.chunk(3)
        b_hr, b_hz, b_hn = b_hh.chunk(3)
        r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
        z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
        h_t = cell("GRUCell", W_ih, W_hh, b_ih, b_hh)(x_t, h_prev)
        label = text.split(":")[0]
        if label == "gate z alone":
            assert torch.equal(r, torch.ones_like(r)) and not torch.allclose(z, z.round())
            said = z * h_prev  # n = tanh(0) = 0
        elif label == "gate n alone":
            assert torch.equal(r, torch.ones_like(r)) and torch.allclose(z, torch.zeros_like(z), atol=1e-12)
            said = torch.tanh(x_t @ W_in.T + b_in + h_prev @ W_hn.T + b_hn)
        elif label == "gate n with r shut":
            assert torch.allclose(r, torch.zeros_like(r), atol=1e-12)
            said = torch.tanh(x_t @ W_in.T + b_in)
        else:
            assert not torch.allclose(r, r.round())
            said = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
        assert (b_hn != 0).any() or label == "gate z alone"
        torch.testing.assert_close(h_t, said, rtol=0, atol=1e-6)


def lstm_h_from_tanh_of_o_times_c(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
    return torch.tanh(torch.sigmoid(a_o) * c_t), c_t


def lstm_coupled_forget_gate(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, _, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i = torch.sigmoid(a_i)
    c_t = (1 - i) * c_prev + i * torch.tanh(a_g)
    return torch.sigmoid(a_o) * torch.tanh(c_t), c_t


def gru_keeps_a_squashed_h_prev(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    x_r, x_z, x_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    return (1 - z) * torch.tanh(x_n + r * h_n) + z * torch.tanh(h_prev)


def gru_reset_on_the_input_side(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    x_r, x_z, x_n = (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    return (1 - z) * torch.tanh(r * x_n + h_n) + z * h_prev


@pytest.mark.parametrize(
    "key, fn, marks, suspects",
    [
        (
            "10.step",
            lstm_h_from_tanh_of_o_times_c,
            "gate f alone ✓ · gate i alone ✓ · gate g alone ✓ · gate o alone ✗",
            "the output gate o: how it is",
        ),
        (
            "10.step",
            lstm_coupled_forget_gate,
            "gate f alone ✗ · gate i alone ✗ · gate g alone ✓ · gate o alone ✓",
            "the forget gate f and the input gate i: how they are",
        ),
        (
            "11.step",
            gru_keeps_a_squashed_h_prev,
            "gate z alone ✗ · gate n alone ✓ · gate n with r shut ✓ · gates r and n ✓",
            "the update gate z: how it is",
        ),
        (
            "11.step",
            gru_reset_on_the_input_side,
            "gate z alone ✓ · gate n alone ✓ · gate n with r shut ✗ · gates r and n ✗",
            "the reset gate r: how it is",
        ),
    ],
    ids=["lstm output gate", "lstm coupled gates", "gru update gate", "gru reset gate"],
)
def test_a_wrong_gate_is_pointed_at_by_the_cases_that_leave_it_working(key, fn, marks, suspects, capsys):
    """Which gate cases fail says which gate to look at first: the gates working in a failing case and in no passing
    one, else every gate of the failing cases."""
    assert not exercises.check_code(key, fn)
    out = capsys.readouterr().out
    assert marks + "\n" in out
    assert "(the gate cases below), " in out and f"look first at {suspects} computed" in out
    named = [gate for gate, name in gates.NAMES.items() if name in suspects]
    assert f"the new state: {'; '.join(dict.fromkeys(gates.USES[g] for g in named))}.\n" in out


def lstm_layer_with_h_from_tanh_of_o_times_c(module, input, hx=None):
    """A student's nn.LSTM (one layer, one direction) whose h_t is tanh(o * c_t)."""
    steps, batch, _ = input.shape
    h, c = (torch.zeros(batch, module.hidden_size),) * 2 if hx is None else (hx[0][0], hx[1][0])
    outputs = []
    for t in range(steps):
        h, c = lstm_h_from_tanh_of_o_times_c(
            input[t], h, c, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
        )
        outputs.append(h)
    return torch.stack(outputs), (h[None], c[None])


def gru_layer_with_the_reset_on_the_input_side(module, input, hx=None):
    """A student's nn.GRU (one layer, one direction) whose reset gate multiplies x_t's part of n."""
    steps, batch, _ = input.shape
    h = torch.zeros(batch, module.hidden_size) if hx is None else hx[0]
    outputs = []
    for t in range(steps):
        h = gru_reset_on_the_input_side(
            input[t], h, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
        )
        outputs.append(h)
    return torch.stack(outputs), h[None]


@pytest.mark.parametrize(
    "kind, fn, marks, suspects",
    [
        (
            "LSTM",
            lstm_layer_with_h_from_tanh_of_o_times_c,
            "gate f alone ✓ · gate i alone ✓ · gate g alone ✓ · gate o alone ✗",
            "the output gate o: how it is",
        ),
        (
            "GRU",
            gru_layer_with_the_reset_on_the_input_side,
            "gate z alone ✓ · gate n alone ✓ · gate n with r shut ✗ · gates r and n ✗",
            "the reset gate r: how it is",
        ),
    ],
    ids=["lstm output gate", "gru reset gate"],
)
def test_diagnose_points_at_the_gate_its_gate_probes_find_wrong(kind, fn, marks, suspects, capsys):
    """diagnose runs the same settings on copies of the layer (every layer and direction), from a nonzero state."""
    torch.manual_seed(0)
    module = getattr(nn, kind)(3, 4)
    assert not diagnose(fn, module, torch.randn(5, 2, 3))
    out = capsys.readouterr().out
    assert marks in out
    assert f"(the gate probes below), {1 if kind == 'LSTM' else 2} of 4 " in out
    assert f"look first at {suspects} computed" in out


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_the_gate_probes_hold_the_gates_in_every_layer_and_direction(kind):
    """Each gate probe's copy of a stacked bidirectional layer has the held rows set in all four weight sets."""
    module = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True)
    with torch.no_grad():  # as diagnose builds them
        probes = [p for p in diagnosis._probes(module, torch.randn(5, 2, 3), None) if p.description.startswith("gate")]
    assert len(probes) == 4 and all("in every layer and direction, on a nonzero h_0" in p.description for p in probes)
    for probe, (_, fixed, _) in zip(probes, gates.SETTINGS[kind], strict=True):
        for suffix in ("_l0", "_l0_reverse", "_l1", "_l1_reverse"):
            for gate, setting in fixed.items():
                rows = slice(gates.ORDER[kind].index(gate) * 4, (gates.ORDER[kind].index(gate) + 1) * 4)
                bias = getattr(probe.module, f"bias_ih{suffix}")[rows]
                assert torch.equal(bias, torch.full_like(bias, gates.VALUES[setting]))
                for name in ("weight_ih", "weight_hh", "bias_hh"):
                    assert not getattr(probe.module, f"{name}{suffix}")[rows].any()


def test_every_setting_is_labelled_by_the_gates_it_leaves_working():
    """The label a student reads ("gate f alone", "gates r and n") names exactly the gates the setting does not hold."""
    for mode, settings in gates.SETTINGS.items():
        for label, fixed, _ in settings:
            named = label.split(" with ")[0].removesuffix(" alone").split(" ", 1)[1].split(" and ")
            assert named == gates.WORKING[label] == [g for g in gates.ORDER[mode] if g not in fixed], label
