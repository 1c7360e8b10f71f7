"""helpers/shape_slips.py and helpers/wiring_slips.py: each slip said for the shapes or the layer it fits, and only
then; diagnose names a rewired stack with torch's own layer rewired, never with a guess."""

import pytest
import torch
from torch import nn

from helpers import wiring_slips
from helpers.diagnosis import diagnose
from helpers.shape_slips import shape_slip


@pytest.mark.parametrize(
    "got, want, said",
    [
        ((2,), (1, 2), "a dimension of size 1 is gone ((1, 2) without it is (2,))"),
        ((3,), (3, 1), "a dimension of size 1 is gone"),
        ((4,), (1, 4, 1), "a dimension of size 1 is gone"),
        ((1, 5, 4), (5, 4), "an extra dimension of size 1 ((1, 5, 4) where (5, 4) is expected)"),
        ((4, 1, 1, 1), (4, 1, 1), "an extra dimension of size 1"),
        ((2, 5, 4), (5, 2, 4), "the right sizes in another order"),
        ((2, 2), (1, 2), "larger than expected ((2, 2) where (1, 2) is expected): two terms of different shapes were"),
        ((3, 4, 4), (3, 1, 4), "larger than expected"),
        ((5, 2, 8), (5, 2, 4), "dimension 2 is 2 times what it should be"),
        ((2, 15, 25), (2, 15, 50), "dimension 2 is 1/2 of what it should be"),
    ],
)
def test_a_shape_slip_is_said_for_the_shapes_it_explains(got, want, said):
    assert shape_slip(got, want).startswith(said)


@pytest.mark.parametrize(
    "got, want",
    [((3, 4), (3, 4)), ((7,), (3,)), ((2, 3), (3, 5)), ((2, 5, 3), (5, 2, 4)), ((6, 2), (4, 2)), ((2,), (3, 1))],
)
def test_no_slip_is_said_where_none_explains_the_shape(got, want):
    """Equal shapes, other sizes, two dimensions changed, or a size that is no multiple: no sentence."""
    assert shape_slip(got, want) is None


def stack(module, input, hx=None, weights=None, rows=None):
    """A student's stacked (bidirectional) layer with torch's cells, rewired: `weights(layer, direction, kind)`
    names the parameter used, `rows(layer, direction)` the row of hx a layer and direction start from."""
    D = 2 if module.bidirectional else 1
    steps, batch, _ = input.shape
    layer_input, h_n = input, []
    for layer in range(module.num_layers):
        outputs = []
        for direction in range(D):
            own = lambda k, d, kind: f"{kind}_l{k}" + ("_reverse" if d else "")  # noqa: E731
            W_ih, W_hh, b_ih, b_hh = (
                getattr(module, (weights or own)(layer, direction, kind))
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            )
            row = (rows or (lambda k, d: k * D + d))(layer, direction)
            h = torch.zeros(batch, module.hidden_size) if hx is None else hx[row]
            states = [None] * steps
            for t in reversed(range(steps)) if direction else range(steps):
                h = torch.tanh(layer_input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
                states[t] = h
            outputs.append(torch.stack(states))
            h_n.append(h)
        layer_input = torch.cat(outputs, dim=2)
    return layer_input, torch.stack(h_n)


def test_the_rewired_stack_in_this_test_is_right_when_not_rewired():
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=3, bidirectional=True), torch.randn(5, 2, 3)
    hx = torch.randn(6, 2, 4)
    torch.testing.assert_close(stack(module, input, hx), module(input, hx))
    assert diagnose(stack, module, input, hx)


@pytest.mark.parametrize(
    "rewired, said",
    [
        (
            {"weights": lambda k, d, kind: f"{kind}_l{0 if kind == 'weight_hh' else k}" + ("_reverse" if d else "")},
            "most likely: every layer above layer 0 uses `weight_hh_l0` (and `_l0_reverse` backward) instead of its own",
        ),
        (
            {"rows": lambda k, d: k + d},
            "the row of hx for layer l, direction d taken as l + d, not l * num_directions + d",
        ),
        (
            {"rows": lambda k, d: 2 if (k, d) == (1, 1) else k * 2 + d},
            "most likely: layer 1 backward starts from hx[2] instead of its own row hx[3]",
        ),
    ],
    ids=["layer 0's weights everywhere", "rows l + d", "another layer's row"],
)
def test_diagnose_names_a_rewired_stack(rewired, said, capsys):
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 3)
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, **rewired), module, input, torch.randn(4, 2, 4))
    assert said in capsys.readouterr().out


def test_every_layer_from_layer_0_is_told_apart_from_one_layer_on_three_layers(capsys):
    """With two layers, layer 1 taking layer 0's weights is the same slip as every layer above 0 doing so; the
    three-layer probe tells them apart, so only the one that fits there is named."""
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=2), torch.randn(5, 2, 3)
    every = lambda k, d, kind: f"{kind}_l{0 if kind == 'weight_hh' else k}"  # noqa: E731
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, weights=every), module, input)
    out = capsys.readouterr().out
    assert "most likely: every layer above layer 0 uses `weight_hh_l0` instead of its own.\n" in out
    assert "used where `weight_hh_l1` belongs" not in out


def test_a_slip_that_cannot_happen_on_a_layer_says_so():
    """No hx, or a layer without the rows or parameters a slip names: NotApplicableError, never a wrong answer."""
    module = nn.GRU(3, 4, num_layers=2)
    found = wiring_slips.slips(module)
    by_title = {slip.title: slip for slip in found}
    rows = by_title["layer 1 starts from hx[0] instead of its own row hx[1]"]
    with pytest.raises(wiring_slips.NotApplicableError):
        rows.rewire(module, None)
    weights = by_title["`weight_hh_l0` used where `weight_hh_l1` belongs: layer 1 computes with layer 0's weight_hh"]
    with pytest.raises(wiring_slips.NotApplicableError):
        weights.rewire(nn.GRU(3, 4), None)
    rewired, hx = weights.rewire(module, None)
    assert hx is None and torch.equal(rewired.weight_hh_l1, module.weight_hh_l0)
    assert not torch.equal(module.weight_hh_l1, module.weight_hh_l0)  # the module itself is left as it was
