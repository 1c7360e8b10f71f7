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
        ((30, 50), (2, 15, 50), "dimensions 0 and 1 merged into one (2 * 15 = 30; (30, 50) where"),
        ((3, 8), (3, 2, 4), "dimensions 1 and 2 merged into one (2 * 4 = 8"),
        ((2, 3, 4), (6, 4), "dimension 0 split in two (2 * 3 = 6"),
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


def stack(
    module,
    input,
    hx=None,
    weights=None,
    rows=None,
    dropped=(),
    carried=False,
    direction_first=False,
    top_first=False,
    hand_up=None,
):
    """A student's stacked (bidirectional) layer with torch's cells, rewired: `weights(layer, direction, kind)`
    names the parameter used, `rows(layer, direction)` the row of hx a layer and direction start from;
    `dropped` holds the (layer, direction, kind) of biases left out; `carried` starts each layer above 0
    from the final state of the layer below; `direction_first` reads hx and writes h_n in rows d * L + l;
    `top_first` reads hx's rows from the top layer down; `hand_up(layer, top, output, its input)` is what the layer
    above reads (and, for the top layer, the output returned)."""
    D = 2 if module.bidirectional else 1
    steps, batch, _ = input.shape
    layer_input, h_n = input, []
    for layer in range(module.num_layers):
        outputs = []
        for direction in range(D):
            own = lambda k, d, kind: f"{kind}_l{k}" + ("_reverse" if d else "")  # noqa: E731
            W_ih, W_hh, b_ih, b_hh = (
                0 if (layer, direction, kind) in dropped else getattr(module, (weights or own)(layer, direction, kind))
                for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            )
            if rows is not None:
                row = rows(layer, direction)
            elif direction_first:
                row = direction * module.num_layers + layer
            else:
                row = ((module.num_layers - 1 - layer) if top_first else layer) * D + direction
            h = torch.zeros(batch, module.hidden_size) if hx is None else hx[row]
            if carried and layer > 0:
                h = h_n[(layer - 1) * D + direction]
            states = [None] * steps
            for t in reversed(range(steps)) if direction else range(steps):
                h = torch.tanh(layer_input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
                states[t] = h
            outputs.append(torch.stack(states))
            h_n.append(h)
        output = torch.cat(outputs, dim=2)
        top = layer == module.num_layers - 1
        layer_input = output if hand_up is None else hand_up(layer, top, output, layer_input)
    if direction_first:
        h_n = [h_n[k * D + d] for d in range(D) for k in range(module.num_layers)]
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
        (
            {"dropped": {(k, 1, "bias_hh") for k in range(5)}},
            "most likely: the backward direction leaves out bias_hh (in every layer)",
        ),
        (
            {"dropped": {(1, 0, "bias_ih")}},
            "most likely: layer 1 forward leaves out `bias_ih_l1`",
        ),
        (
            {"weights": lambda k, d, kind: f"{kind}_l{k}" + ("_reverse" if d and kind.startswith("weight") else "")},
            "most likely: the backward direction computes with the forward direction's bias_ih and bias_hh in every "
            "layer (`_reverse` left off)",
        ),
        (
            {"carried": True},
            "most likely: each layer above layer 0 starts from the final state of the layer below it, not from its own",
        ),
        (
            {"top_first": True},
            "most likely: the row of hx for layer l, direction d taken as (num_layers - 1 - l) * num_directions + d",
        ),
        (
            {"direction_first": True},
            "most likely: the rows of hx and of h_n counted direction first, d * num_layers + l",
        ),
    ],
    ids=[
        "layer 0's weights everywhere",
        "rows l + d",
        "another layer's row",
        "backward without b_hh",
        "one bias left out",
        "forward biases backward",
        "state carried up",
        "rows top layer first",
        "rows direction first",
    ],
)
def test_diagnose_names_a_rewired_stack(rewired, said, capsys):
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 3)
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, **rewired), module, input, torch.randn(4, 2, 4))
    assert said in capsys.readouterr().out


def backward_left_reversed(layer, top, output, below):
    """The backward half handed up in computed order, put back in time order only for the top layer."""
    H = output.shape[-1] // 2
    return output if top else torch.cat([output[..., :H], output[..., H:].flip(0)], dim=2)


@pytest.mark.parametrize(
    "hand_up, said",
    [
        (
            lambda layer, top, output, below: output if top else torch.tanh(output),
            "most likely: tanh applied again to what each layer hands the layer above",
        ),
        (
            lambda layer, top, output, below: output + below if layer > 0 else output,
            "most likely: a residual connection: each layer from layer 1 up adds its own input to its output",
        ),
        (
            backward_left_reversed,
            "most likely: the backward half handed up still in the order it was computed",
        ),
    ],
    ids=["tanh again", "residual", "backward half reversed"],
)
def test_diagnose_names_what_a_layer_above_reads_instead_of_the_output_below(hand_up, said, capsys):
    """Each layer alone is right; what the layer below hands up is not its output as it is: named."""
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 3)
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, hand_up=hand_up), module, input, torch.randn(4, 2, 4))
    assert said in capsys.readouterr().out


def lstm_stack_reading_cells(module, input, hx=None):
    """A student's two-layer LSTM whose layer 1 reads layer 0's cell states instead of its hidden states."""
    layer_input, finals = input, []
    for layer in range(module.num_layers):
        W_ih, W_hh, b_ih, b_hh = (
            getattr(module, f"{kind}_l{layer}") for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )
        h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0][layer]
        c = torch.zeros_like(h) if hx is None else hx[1][layer]
        hs, cs = [], []
        for x_t in layer_input:
            i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            hs.append(h)
            cs.append(c)
        finals.append((h, c))
        layer_input = torch.stack(cs) if layer < module.num_layers - 1 else torch.stack(hs)
    return layer_input, (torch.stack([h for h, _ in finals]), torch.stack([c for _, c in finals]))


def test_diagnose_names_a_layer_that_reads_the_cell_states_below(capsys):
    torch.manual_seed(0)
    module, input = nn.LSTM(3, 4, num_layers=2), torch.randn(5, 2, 3)
    assert not diagnose(lstm_stack_reading_cells, module, input)
    assert (
        "most likely: each layer above layer 0 reads the cell states c_t of the layer below" in capsys.readouterr().out
    )


def test_a_weight_of_another_shape_in_a_layer_above_is_named_where_it_fits_and_raises_elsewhere(capsys):
    """Every layer's backward run computing with layer 0's backward parameters: shapes agree only where the input
    size equals num_directions * hidden_size; on a probe where they differ the student's code raises, as it must."""
    torch.manual_seed(0)
    module, input = nn.RNN(8, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 8)
    weights = lambda k, d, kind: f"{kind}_l{0 if d else k}" + ("_reverse" if d else "")  # noqa: E731
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, weights=weights), module, input)
    assert "uses `weight_ih_l0_reverse` and `weight_hh_l0_reverse` and `bias_ih_l0_reverse`" in capsys.readouterr().out


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


def gru(module, input, hx=None, blocks=(0, 1, 2), transpose_n=False):
    """A student's one-layer GRU by hand: `blocks` says which block of b_ih each gate r, z, n reads (a mix-up when
    not 0, 1, 2), `transpose_n` multiplies h by W_hn itself, not its transpose."""
    H = module.hidden_size
    W_ir, W_iz, W_in = module.weight_ih_l0.chunk(3)
    W_hr, W_hz, W_hn = module.weight_hh_l0.chunk(3)
    b_ih, (b_hr, b_hz, b_hn) = module.bias_ih_l0.chunk(3), module.bias_hh_l0.chunk(3)
    b_ir, b_iz, b_in = (b_ih[k] for k in blocks)
    h = torch.zeros(input.shape[1], H) if hx is None else hx[0]
    outputs = []
    for x_t in input:
        r = torch.sigmoid(x_t @ W_ir.T + b_ir + h @ W_hr.T + b_hr)
        z = torch.sigmoid(x_t @ W_iz.T + b_iz + h @ W_hz.T + b_hz)
        n = torch.tanh(x_t @ W_in.T + b_in + r * (h @ (W_hn if transpose_n else W_hn.T) + b_hn))
        h = (1 - z) * n + z * h
        outputs.append(h)
    return torch.stack(outputs), h[None]


def lstm(module, input, hx=None, cell_from_h=False):
    """A student's one-layer LSTM by hand; `cell_from_h` starts the cell state from h_0 instead of c_0."""
    W_ii, W_if, W_ig, W_io = module.weight_ih_l0.chunk(4)
    W_hi, W_hf, W_hg, W_ho = module.weight_hh_l0.chunk(4)
    b = (module.bias_ih_l0 + module.bias_hh_l0).chunk(4)
    h, c = (torch.zeros(input.shape[1], module.hidden_size),) * 2 if hx is None else (hx[0][0], hx[1][0])
    if cell_from_h and hx is not None:
        c = hx[0][0]
    outputs = []
    for x_t in input:
        i = torch.sigmoid(x_t @ W_ii.T + h @ W_hi.T + b[0])
        f = torch.sigmoid(x_t @ W_if.T + h @ W_hf.T + b[1])
        g = torch.tanh(x_t @ W_ig.T + h @ W_hg.T + b[2])
        o = torch.sigmoid(x_t @ W_io.T + h @ W_ho.T + b[3])
        c = f * c + i * g
        h = o * torch.tanh(c)
        outputs.append(h)
    return torch.stack(outputs), (h[None], c[None])


def test_the_gated_layers_in_this_test_are_right_when_not_slipped():
    torch.manual_seed(1)
    input = torch.randn(5, 3, 3)
    assert diagnose(gru, nn.GRU(3, 4), input, torch.randn(1, 3, 4))
    assert diagnose(lstm, nn.LSTM(3, 4), input, (torch.randn(1, 3, 4), torch.randn(1, 3, 4)))


@pytest.mark.parametrize(
    "fn, module, said",
    [
        (
            lambda m, x, hx=None: gru(m, x, hx, blocks=(1, 0, 2)),
            nn.GRU(3, 4),
            "most likely: the reset gate r and the update gate z exchanged in the bias b_ih: each computed with the other's "
            "rows.",
        ),
        (
            lambda m, x, hx=None: gru(m, x, hx, blocks=(0, 0, 2)),
            nn.GRU(3, 4),
            "most likely: the update gate z computed with the reset gate r's rows of the bias b_ih",
        ),
        (
            lambda m, x, hx=None: gru(m, x, hx, transpose_n=True),
            nn.GRU(3, 4),
            "most likely: the candidate n's block of W_hh used without its transpose",
        ),
        (
            lambda m, x, hx=None: lstm(m, x, hx, cell_from_h=True),
            nn.LSTM(3, 4),
            "most likely: the cell state starts from h_0 (hx[0]) instead of c_0 (hx[1]).",
        ),
    ],
    ids=["r and z biases exchanged", "z with r's bias", "W_hn not transposed", "c_0 from h_0"],
)
def test_diagnose_names_a_gate_block_or_state_mixed_up(fn, module, said, capsys):
    """Each gate's block of a parameter, and (LSTM) each part of hx, mixed up in a hand-written layer: named."""
    torch.manual_seed(1)
    for p in module.parameters():
        torch.nn.init.normal_(p)
    input = torch.randn(5, 3, 3)
    hx = (torch.randn(1, 3, 4), torch.randn(1, 3, 4)) if isinstance(module, nn.LSTM) else torch.randn(1, 3, 4)
    assert not diagnose(fn, module, input, hx)
    assert said in capsys.readouterr().out


NAMES = ("seq_len", "batch", "num_directions*hidden_size")


@pytest.mark.parametrize(
    "got, want, sizes, said",
    [
        ((3, 2, 4), (4, 2, 4), {"seq_len": 4, "batch": 2}, "dimension 0 (seq_len) is one short ((3, 2, 4) where"),
        ((5, 2, 4), (4, 2, 4), {"seq_len": 4, "batch": 2}, "dimension 0 (seq_len) has one too many"),
        (
            (4, 4, 1),
            (4, 1, 1),
            {"seq_len": 4, "batch": 1, "hidden_size": 1},
            "dimension 1 is 4, the seq_len, where the batch (1) belongs: a size read from the wrong dimension",
        ),
        (
            (3, 1, 1),
            (4, 1, 1),
            {"seq_len": 4, "batch": 1, "input_size": 3},
            "dimension 0 (seq_len) is one short ((3, 1, 1) where (4, 1, 1) is expected): a loop over range(n - 1), "
            "or a slice such as [:-1] or [1:], stops one step early; or dimension 0 is 3, the input_size, where",
        ),
    ],
    ids=["one step short", "one step over", "the seq_len for the batch", "one short or the input_size"],
)
def test_a_size_from_another_dimension_or_one_off_is_said_with_the_dimensions_names(got, want, sizes, said):
    assert shape_slip(got, want, NAMES, sizes).startswith(said)
    assert shape_slip(got, want) is None or "the seq_len" not in shape_slip(got, want)  # no names: no such claim


@pytest.mark.parametrize(
    "rows, said",
    [
        (lambda k, d: k * 2 + (1 - d), "l * num_directions + (1 - d) (the two directions' rows exchanged)"),
        (lambda k, d: -1, "the last row, hx[-1], for every layer and direction"),
    ],
    ids=["directions' rows exchanged", "last row everywhere"],
)
def test_diagnose_names_more_ways_of_reading_the_rows_of_hx(rows, said, capsys):
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 3)
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, rows=rows), module, input, torch.randn(4, 2, 4))
    assert said in capsys.readouterr().out


def test_diagnose_names_a_layer_that_reads_the_last_state_below_at_every_step(capsys):
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 2, 3)
    last = lambda layer, top, output, below: output if top else output[-1:].expand_as(output)  # noqa: E731
    assert not diagnose(lambda m, x, hx=None: stack(m, x, hx, hand_up=last), module, input)
    assert "reads only the last state of the layer below" in capsys.readouterr().out


def test_diagnose_names_every_step_reading_the_input_of_the_step_before(capsys):
    torch.manual_seed(0)
    module, input = nn.GRU(3, 4), torch.randn(5, 2, 3)
    assert not diagnose(lambda m, x, hx=None: gru(m, torch.cat([x[-1:], x[:-1]]), hx), module, input)
    assert "each step reads the input of the step before it (x[t - 1]" in capsys.readouterr().out


def test_diagnose_names_an_lstm_whose_cell_rows_all_come_from_row_0(capsys):
    """h_0's rows right, c_0 read from row 0 in every layer: only the cell's rows are named."""
    torch.manual_seed(0)
    module, input = nn.LSTM(3, 4, num_layers=2), torch.randn(5, 2, 3)
    hx = (torch.randn(2, 2, 4), torch.randn(2, 2, 4))

    def two_layers(m, x, hx=None):
        layer_input, finals = x, []
        for k in range(m.num_layers):
            W_ih, W_hh, b_ih, b_hh = (
                getattr(m, f"{kind}_l{k}") for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            )
            zeros = torch.zeros(x.shape[1], m.hidden_size)
            h, c = (zeros, zeros) if hx is None else (hx[0][k], hx[1][0])
            states = []
            for x_t in layer_input:
                i, f, g, o = (x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                states.append(h)
            finals.append((h, c))
            layer_input = torch.stack(states)
        return layer_input, (torch.stack([h for h, _ in finals]), torch.stack([c for _, c in finals]))

    assert not diagnose(two_layers, module, input, hx)
    assert "every layer's and direction's cell state starts from row 0 of c_0 (hx[1][0]); h_0's rows are right" in (
        capsys.readouterr().out
    )


def test_diagnose_names_hx_used_in_the_batchs_order_against_packed_data(capsys):
    """A walk over the packed data (longest first) that starts sequence sorted_indices[i] from hx[:, i]."""
    from torch.nn.utils.rnn import pack_padded_sequence

    torch.manual_seed(0)
    module = nn.GRU(3, 4)
    lengths = torch.tensor([2, 5, 3])
    input = pack_padded_sequence(torch.randn(5, 3, 3), lengths, enforce_sorted=False)

    def walk(m, packed, hx=None):
        W_ih, W_hh, b_ih, b_hh = m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0, m.bias_hh_l0
        B = int(packed.batch_sizes[0])
        h = torch.zeros(B, m.hidden_size) if hx is None else hx[0]  # the slip: not hx[0][packed.sorted_indices]
        outs, start = [], 0
        for size in packed.batch_sizes.tolist():
            x_t, h_prev = packed.data[start : start + size], h[:size]
            start += size
            r_i, z_i, n_i = (x_t @ W_ih.T + b_ih).chunk(3, 1)
            r_h, z_h, n_h = (h_prev @ W_hh.T + b_hh).chunk(3, 1)
            r, z = torch.sigmoid(r_i + r_h), torch.sigmoid(z_i + z_h)
            new = (1 - z) * torch.tanh(n_i + r * n_h) + z * h_prev
            h = torch.cat([new, h[size:]])
            outs.append(new)
        output = torch.nn.utils.rnn.PackedSequence(
            torch.cat(outs), packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices
        )
        return output, h[packed.unsorted_indices][None]

    assert not diagnose(walk, module, input, torch.randn(1, 3, 4))
    assert "hx's rows used in the batch's own order while the packed data runs longest first" in capsys.readouterr().out
