"""helpers.recurrence against torch: torch is the oracle for `run` with the exact seams; an override changes one seam."""

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from helpers import recurrence

T, B = 5, 3
LAYERS = {
    "rnn tanh": ("RNN", {}),
    "rnn relu": ("RNN", {"nonlinearity": "relu"}),
    "lstm": ("LSTM", {}),
    "lstm proj_size": ("LSTM", {"proj_size": 2}),
    "gru": ("GRU", {}),
    "rnn stacked bidirectional": ("RNN", {"num_layers": 2, "bidirectional": True}),
    "lstm stacked bidirectional proj_size": ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}),
    "gru stacked bidirectional": ("GRU", {"num_layers": 3, "bidirectional": True}),
    "gru no bias": ("GRU", {"bias": False, "num_layers": 2}),
}


def layer_and_states(kind, options, dtype=torch.float64, seed=0):
    """A seeded module with its time-first input x (T, B, 3), h_0 and c_0 (None outside LSTM)."""
    torch.manual_seed(seed)
    module = getattr(nn, kind)(3, 4, dtype=dtype, **options)
    rows = module.num_layers * (2 if module.bidirectional else 1)
    x = torch.randn(T, B, 3, dtype=dtype)
    h_0 = torch.randn(rows, B, options.get("proj_size") or 4, dtype=dtype)
    c_0 = torch.randn(rows, B, 4, dtype=dtype) if kind == "LSTM" else None
    return module, x, h_0, c_0


def torch_result(module, x, h_0, c_0):
    """(output, h_n, c_n) as torch computes them."""
    output, state = module(x, (h_0, c_0) if c_0 is not None else h_0)
    return (output, *state) if c_0 is not None else (output, state, None)


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-12), (torch.float32, 1e-6)])
@pytest.mark.parametrize("name", LAYERS)
def test_run_with_the_exact_seams_equals_torch(name, dtype, tolerance):
    """The top layer's output, h_n and c_n are torch's, for every kind of layer and option."""
    module, x, h_0, c_0 = layer_and_states(*LAYERS[name], dtype=dtype)
    outputs, h_n, c_n = recurrence.run(module, x, h_0, c_0)
    theirs = torch_result(module, x, h_0, c_0)
    assert len(outputs) == module.num_layers
    for ours, want in zip((outputs[-1], h_n, c_n), theirs, strict=True):
        assert (ours is None) == (want is None)
        if want is not None:
            assert ours.shape == want.shape and (ours - want).abs().max() <= tolerance


@pytest.mark.parametrize("name", ["rnn stacked bidirectional", "lstm stacked bidirectional proj_size", "gru"])
def test_with_lengths_each_sequence_stops_at_its_own_end_as_torch_packed_does(name):
    """With lengths, the output is torch's padded output and h_n each sequence's state at its own last step."""
    module, x, h_0, c_0 = layer_and_states(*LAYERS[name])
    lengths = torch.tensor([2, T, 4])
    outputs, h_n, c_n = recurrence.run(module, x, h_0, c_0, lengths)
    packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
    output, *states = torch_result(module, packed, h_0, c_0)
    torch.testing.assert_close(outputs[-1], pad_packed_sequence(output)[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(h_n, states[0], rtol=0, atol=1e-12)
    if c_0 is not None:
        torch.testing.assert_close(c_n, states[1], rtol=0, atol=1e-12)


def test_each_layers_output_is_what_the_next_layer_reads():
    """outputs[k] is layer k's own output: a one-layer module with layer 1's weights, run on outputs[0], gives outputs[1]."""
    module, x, h_0, c_0 = layer_and_states(*LAYERS["lstm stacked bidirectional proj_size"])
    outputs, h_n, c_n = recurrence.run(module, x, h_0, c_0)
    upper = nn.LSTM(2 * 3, 4, proj_size=3, bidirectional=True, dtype=torch.float64)
    with torch.no_grad():
        for name, parameter in upper.named_parameters():
            parameter.copy_(getattr(module, name.replace("_l0", "_l1")))
    output, (h_1, c_1) = upper(outputs[0], (h_0[2:], c_0[2:]))
    torch.testing.assert_close(outputs[1], output, rtol=0, atol=1e-12)
    torch.testing.assert_close((h_n[2:], c_n[2:]), (h_1, c_1), rtol=0, atol=1e-12)


def test_record_gets_every_step_in_the_order_computed():
    """record is called once a layer, direction and step, with Step's fields; its h are the states in output."""
    module, x, h_0, c_0 = layer_and_states(*LAYERS["rnn stacked bidirectional"])
    steps = []
    outputs, h_n, _ = recurrence.run(module, x, h_0, c_0, record=lambda *fields: steps.append(fields))
    order = [
        (layer, direction, t) for layer in range(2) for direction in range(2) for t in range(T)[:: 1 - 2 * direction]
    ]
    assert [fields[:3] for fields in steps] == order
    layer, direction, t, x_t, h_prev, pre_activation, h, valid, gates, c_prev, c = steps[T]  # layer 0 backward, t = T-1
    assert torch.equal(x_t, x[T - 1]) and torch.equal(h_prev, h_0[1]) and torch.equal(h, outputs[0][T - 1, :, 4:])
    assert torch.equal(h, torch.tanh(pre_activation)) and valid is None and gates == {} and c_prev is c is None


def test_weights_are_read_by_torchs_parameter_names():
    """weights(module, layer, direction) is (W_ih, W_hh, b_ih, b_hh, W_hr), None where the module has none."""
    module = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    W_ih, W_hh, b_ih, b_hh, W_hr = recurrence.weights(module, 1, 1)
    assert W_ih is module.weight_ih_l1_reverse and W_hh is module.weight_hh_l1_reverse
    assert (
        b_ih is module.bias_ih_l1_reverse and b_hh is module.bias_hh_l1_reverse and W_hr is module.weight_hr_l1_reverse
    )
    assert recurrence.weights(nn.GRU(3, 4, bias=False), 0, 0)[2:] == (None, None, None)


def test_pack_like_packs_a_padded_output_as_the_packed_input_is_packed():
    """pack_like(pad_packed_sequence(p)[0], p) is p again: data, batch_sizes and both index orders."""
    packed = pack_padded_sequence(torch.randn(T, B, 2), torch.tensor([3, T, 1]), enforce_sorted=False)
    again = recurrence.pack_like(pad_packed_sequence(packed)[0], packed)
    for ours, theirs in zip(again, packed, strict=True):
        assert torch.equal(ours, theirs)


class StoresTheStateBefore(recurrence.Exact):
    """output[t] holds h_prev instead of the new state: a one-seam change."""

    def stored(self, h_prev, h):
        return h_prev


def test_a_seam_override_changes_only_what_that_seam_computes():
    """Overriding `stored` shifts output by one step in each direction; h_n, c_n and every state stay torch's."""
    module, x, h_0, c_0 = layer_and_states("LSTM", {"bidirectional": True})
    (exact,), h_n, c_n = recurrence.run(module, x, h_0, c_0)
    (shifted,), h_m, c_m = recurrence.run(module, x, h_0, c_0, how=StoresTheStateBefore())
    assert torch.equal(h_m, h_n) and torch.equal(c_m, c_n)
    (shifted_fwd, shifted_bwd), (fwd, bwd) = shifted.split(4, dim=2), exact.split(4, dim=2)  # (T, B, H) each
    assert torch.equal(shifted_fwd[0], h_0[0]) and torch.equal(shifted_fwd[1:], fwd[:-1])
    assert torch.equal(shifted_bwd[-1], h_0[1]) and torch.equal(shifted_bwd[:-1], bwd[1:])
