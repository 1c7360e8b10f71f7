"""helpers.unroll against torch: torch is the oracle, every module and option, every bad input."""

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

from helpers import trace, unroll

TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-12}


def tensors(result):
    """[output, h_n(, c_n)] as plain tensors; a packed output is compared by its data."""
    output, state = result
    states = list(state) if isinstance(state, tuple) else [state]
    return [output.data if isinstance(output, PackedSequence) else output, *states]


def max_error(ours, theirs):
    """The largest absolute difference between two module results."""
    pairs = zip(tensors(ours), tensors(theirs), strict=True)
    return max((a - b).abs().max().item() if a.numel() else 0.0 for a, b in pairs)


@st.composite
def rnn_cases(draw, kinds=("RNN", "LSTM", "GRU")):
    """A random nn.RNN, nn.LSTM or nn.GRU configuration with a matching input and (maybe) state."""
    seed = draw(st.integers(0, 2**31 - 1))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    kind = draw(st.sampled_from(kinds))
    options = dict(
        input_size=draw(st.integers(1, 8)),
        hidden_size=draw(st.integers(1, 64)),
        num_layers=draw(st.integers(1, 3)),
        bias=draw(st.booleans()),
        batch_first=draw(st.booleans()),
        bidirectional=draw(st.booleans()),
    )
    if kind == "RNN":
        options["nonlinearity"] = draw(st.sampled_from(["tanh", "relu"]))
    if kind == "LSTM" and options["hidden_size"] > 1 and draw(st.booleans()):
        options["proj_size"] = draw(st.integers(1, options["hidden_size"] - 1))
    if options["num_layers"] > 1:
        options["dropout"] = draw(st.sampled_from([0.0, 0.5]))
    batched = draw(st.booleans())
    seq_len, batch = draw(st.integers(1, 50)), draw(st.integers(1, 4))
    give_hx = draw(st.booleans())
    packing = None
    if batched and draw(st.booleans()):  # variable lengths, packed, sorted or not
        lengths = draw(st.lists(st.integers(1, seq_len), min_size=batch, max_size=batch))
        enforce_sorted = draw(st.booleans())
        packing = (sorted(lengths, reverse=True) if enforce_sorted else lengths, enforce_sorted)
    return seed, dtype, kind, options, batched, seq_len, batch, give_hx, packing


def build(seed, dtype, kind, options, batched, seq_len, batch, give_hx, packing=None):
    """Seeded module (in eval mode), input (packed if `packing` is given) and state for one case."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    module = getattr(nn, kind)(**options, dtype=dtype).eval()
    rows = options["num_layers"] * (2 if options["bidirectional"] else 1)
    shape = ((batch, seq_len) if options["batch_first"] else (seq_len, batch)) if batched else (seq_len,)
    input = torch.randn(*shape, options["input_size"], generator=generator, dtype=dtype)

    def state(size):  # (rows, batch, size), or (rows, size) unbatched
        return torch.randn(rows, *((batch,) if batched else ()), size, generator=generator, dtype=dtype)

    hx = None
    if give_hx and kind == "LSTM":
        hx = (state(options.get("proj_size") or options["hidden_size"]), state(options["hidden_size"]))
    elif give_hx:
        hx = state(options["hidden_size"])
    if packing is not None:
        lengths, enforce_sorted = packing
        input = pack_padded_sequence(input, lengths, options["batch_first"], enforce_sorted)
    return module, input, hx


@settings(max_examples=200, deadline=None)
@given(rnn_cases())
def test_unroll_matches_torch_over_the_option_space(case):
    """For any module, option and input (packed too), unroll returns what torch returns."""
    module, input, hx = build(*case)
    theirs = module(input, hx)
    ours = unroll(module, input, hx)
    assert isinstance(ours, tuple) and len(ours) == 2
    assert type(ours[0]) is type(theirs[0]) and type(ours[1]) is type(theirs[1])
    if isinstance(theirs[0], PackedSequence):
        for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
            a, b = getattr(ours[0], field), getattr(theirs[0], field)
            assert (a is None and b is None) or torch.equal(a, b), field
    for a, b in zip(tensors(ours), tensors(theirs), strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
    assert max_error(ours, theirs) <= TOLERANCE[module.weight_ih_l0.dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_unroll_matches_torch_at_the_largest_sizes(dtype, nonlinearity, bidirectional):
    """T=50, H=64, two layers, batch 4: still within tolerance."""
    options = dict(
        input_size=8,
        hidden_size=64,
        num_layers=2,
        nonlinearity=nonlinearity,
        bias=True,
        batch_first=False,
        bidirectional=bidirectional,
    )
    module, input, hx = build(7, dtype, "RNN", options, True, 50, 4, True)
    assert max_error(unroll(module, input, hx), module(input, hx)) <= TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind, extra", [("LSTM", {}), ("LSTM", {"proj_size": 16}), ("GRU", {})])
def test_lstm_and_gru_match_torch_at_the_largest_sizes(dtype, kind, extra):
    """T=50, H=64, two bidirectional layers, batch 4, given states: within tolerance."""
    options = dict(input_size=8, hidden_size=64, num_layers=2, bias=True, batch_first=True, bidirectional=True, **extra)
    module, input, hx = build(11, dtype, kind, options, True, 50, 4, True)
    assert max_error(unroll(module, input, hx), module(input, hx)) <= TOLERANCE[dtype]


def test_dropout_with_one_layer_is_ignored_in_training_mode_as_torch_does():
    """dropout only acts between layers, so one layer in train mode is still deterministic."""
    torch.manual_seed(0)
    with pytest.warns(UserWarning):
        module = nn.RNN(3, 4, num_layers=1, dropout=0.5)
    input = torch.randn(6, 2, 3)
    assert module.training
    assert max_error(unroll(module, input), module(input)) <= 1e-6


def test_gradients_flow_through_unroll_like_through_torch():
    """Backpropagating through unroll gives torch's gradients for every parameter."""
    torch.manual_seed(0)
    module = nn.RNN(3, 5, num_layers=2, bidirectional=True).eval()
    input = torch.randn(7, 2, 3)

    def gradients(run):
        module.zero_grad()
        output, h_n = run(module, input)
        (output.square().sum() + h_n.sum()).backward()
        return {name: p.grad.clone() for name, p in module.named_parameters()}

    ours, theirs = gradients(unroll), gradients(lambda m, x: m(x))
    for name in theirs:
        assert (ours[name] - theirs[name]).abs().max().item() <= 1e-5, name


def test_unroll_uses_neither_torch_kernels_nor_the_module_forward(monkeypatch):
    """unroll still works when forward, the fused kernels and the cells are all disabled."""

    def forbidden(*args, **kwargs):
        raise AssertionError("unroll must compute the steps itself")

    torch.manual_seed(0)
    module = nn.RNN(2, 3, num_layers=2, bidirectional=True).eval()
    input = torch.randn(4, 1, 2)
    expected = module(input)
    monkeypatch.setattr(module, "forward", forbidden)
    for name in ("rnn_tanh", "rnn_relu", "rnn_tanh_cell", "rnn_relu_cell"):
        monkeypatch.setattr(torch._VF, name, forbidden)
    monkeypatch.setattr(nn.RNNCell, "forward", forbidden)
    assert max_error(unroll(module, input), expected) <= 1e-6


# --- the trace ---------------------------------------------------------------------------------


def test_trace_steps_follow_the_equation_written_out(scalar_rnn):
    """Each step is h = tanh(x W_ih^T + h_prev W_hh^T), starting from h_0 = 0."""
    module = scalar_rnn
    steps = trace(module, torch.tensor([[1.0], [2.0], [3.0]])).steps
    h_prev = 0.0
    for t, (step, x) in enumerate(zip(steps, [1.0, 2.0, 3.0], strict=True)):
        assert (step.layer, step.direction, step.t) == (0, 0, t)
        assert step.h_prev.item() == pytest.approx(h_prev)
        assert step.pre_activation.item() == pytest.approx(0.5 * x - 1.0 * h_prev)
        assert step.h.item() == pytest.approx(np.tanh(0.5 * x - 1.0 * h_prev))
        h_prev = step.h.item()


def test_trace_holds_every_layer_direction_and_step_and_agrees_with_the_result():
    """L*D*T steps; stacked states equal output slices and h_n; layer 1 reads layer 0's output."""
    torch.manual_seed(0)
    module = nn.RNN(3, 4, num_layers=2, bidirectional=True, batch_first=True).eval()
    input = torch.randn(2, 5, 3)  # (B, T, in)
    result = trace(module, input)
    assert len(result.steps) == 2 * 2 * 5
    output, h_n = result.result
    for layer in range(2):
        for direction in range(2):
            steps = result.steps_of(layer, direction)
            assert [s.t for s in steps] == list(range(5))
            states = result.stack("h", layer, direction)  # (T, B, H)
            final = states[0] if direction else states[-1]
            assert torch.equal(h_n[layer * 2 + direction], final)
            first = steps[-1] if direction else steps[0]
            assert torch.equal(first.h_prev, torch.zeros(2, 4))
            for s in steps:
                assert torch.equal(torch.tanh(s.pre_activation), s.h)
    top_forward, top_backward = result.stack("h", -1, 0), result.stack("h", -1, 1)
    assert torch.equal(output, torch.cat([top_forward, top_backward], dim=2).transpose(0, 1))
    layer_0 = torch.cat([result.stack("h", 0, 0), result.stack("h", 0, 1)], dim=2)
    assert torch.equal(result.stack("x", 1, 0), layer_0)
    assert torch.equal(result.stack("x", 1, 1), layer_0)
    assert torch.equal(result.stack("x", 0, 0), input.transpose(0, 1))


def test_trace_runs_the_backward_direction_from_the_last_step():
    """The backward direction's steps are computed t = T-1 first, each reading the state of t+1."""
    torch.manual_seed(0)
    module = nn.RNN(2, 3, bidirectional=True)
    result = trace(module, torch.randn(4, 2))
    backward = [s for s in result.steps if s.direction == 1]
    assert [s.t for s in backward] == [3, 2, 1, 0]
    for later, earlier in zip(backward, backward[1:]):
        assert torch.equal(earlier.h_prev, later.h)


def test_trace_of_unbatched_input_has_no_batch_dimension():
    """For (T, in) input the steps hold (in,) and (H,) vectors, as torch's outputs do."""
    torch.manual_seed(0)
    module = nn.RNN(3, 2)
    result = trace(module, torch.randn(5, 3))
    assert result.output.shape == (5, 2) and result.h_n.shape == (1, 2)
    step = result.steps[0]
    assert step.x.shape == (3,) and step.h.shape == (2,) and step.pre_activation.shape == (2,)
    assert result.stack("h").shape == (5, 2)


def test_trace_table_lists_the_steps_in_the_order_they_ran(scalar_rnn):
    """The table of notebook 01's example: steps counted from 1, as in the equations."""
    table = trace(scalar_rnn, torch.tensor([[1.0], [2.0], [3.0]])).table()
    assert table.splitlines() == [
        "t     x_t  h_prev  pre-activation     h_t",
        "1  1.0000  0.0000          0.5000  0.4621",
        "2  2.0000  0.4621          0.5379  0.4914",
        "3  3.0000  0.4914          1.0086  0.7652",
    ]
    torch.manual_seed(0)
    bidirectional = trace(nn.RNN(1, 1, bidirectional=True), torch.randn(3, 2, 1))
    times = [line.split()[0] for line in bidirectional.table(direction=1, batch=1).splitlines()[1:]]
    assert times == ["3", "2", "1"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: t.steps_of(layer=2), "layer=2 does not exist: this module has num_layers=1"),
        (lambda t: t.steps_of(direction=1), "direction=1 does not exist: choose 0 (forward)"),
        (lambda t: t.stack("hidden"), "no field 'hidden' for RNN_TANH; choose one of x, h_prev, pre_activation, h"),
        (lambda t: t.table(batch=5), "batch=5 does not exist: the batch has 2 items"),
    ],
)
def test_trace_lookups_explain_what_exists(call, message):
    """Asking a trace for a layer, direction, field or batch item it lacks says what exists."""
    result = trace(nn.RNN(1, 1), torch.zeros(3, 2, 1))
    with pytest.raises(ValueError, match=re.escape(message)):
        call(result)


# --- bad input ---------------------------------------------------------------------------------


def rnn(**options):
    torch.manual_seed(0)
    return nn.RNN(**{"input_size": 3, "hidden_size": 20, **options})


class TinyModel(nn.Module):
    """A model that contains an RNN, as in notebook 09."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(3, 4)


BAD_INPUTS = [
    # (what is wrong, call, exception, fragments the message must contain)
    (
        "wrong feature size",
        lambda: unroll(rnn(), torch.zeros(5, 2, 4)),
        ValueError,
        ["input_size=3", "shape (5, 2, 4)", "4 features", "(seq_len, batch, input_size=3)"],
    ),
    (
        "features in the wrong place",
        lambda: unroll(rnn(), torch.zeros(5, 3, 2)),
        ValueError,
        ["Dimension 1 has size 3", "input.movedim(1, -1)"],
    ),
    (
        "wrong feature size, batch_first",
        lambda: unroll(rnn(batch_first=True), torch.zeros(2, 5, 4)),
        ValueError,
        ["(batch, seq_len, input_size=3)"],
    ),
    (
        "1-D input of numbers",
        lambda: unroll(rnn(input_size=1), torch.zeros(5)),
        ValueError,
        ["1 dimension(s), shape (5,)", "input.unsqueeze(-1)", "(seq_len=5, input_size=1)"],
    ),
    (
        "1-D input of one step's features",
        lambda: unroll(rnn(), torch.zeros(3)),
        ValueError,
        ["input.unsqueeze(0)", "(seq_len=1, input_size=3)"],
    ),
    (
        "0-D input",
        lambda: unroll(rnn(), torch.tensor(1.0)),
        ValueError,
        ["0 dimension(s)", "(seq_len, batch, input_size=3) for a batch"],
    ),
    (
        "4-D input",
        lambda: unroll(rnn(), torch.zeros(5, 2, 3, 1)),
        ValueError,
        ["4 dimensions, shape (5, 2, 3, 1)", "(seq_len, input_size=3) for one sequence", "flatten"],
    ),
    (
        "integer token ids",
        lambda: unroll(rnn(), torch.zeros(5, 2, 3, dtype=torch.long)),
        TypeError,
        ["torch.int64", "token ids", "nn.Embedding(vocab_size, embedding_dim=3)", "input.float()"],
    ),
    (
        "float64 input, float32 module",
        lambda: unroll(rnn(), torch.zeros(5, 2, 3, dtype=torch.float64)),
        TypeError,
        ["torch.float64", "torch.float32", "input.to(torch.float32)", "module.to(torch.float64)"],
    ),
    (
        "a list as input",
        lambda: unroll(rnn(), [[1.0, 2.0, 3.0]]),
        TypeError,
        ["must be a torch.Tensor", "got a list", "torch.tensor(values, dtype=torch.float32)"],
    ),
    (
        "a NumPy array as input",
        lambda: unroll(rnn(), np.zeros((5, 3))),
        TypeError,
        ["NumPy array of shape (5, 3)", "torch.from_numpy(array).float()"],
    ),
    (
        "an empty sequence",
        lambda: unroll(rnn(), torch.zeros(0, 2, 3)),
        ValueError,
        ["no time steps", "seq_len=0", "at least one step"],
    ),
    (
        "an empty batch_first sequence",
        lambda: unroll(rnn(batch_first=True), torch.zeros(2, 0, 3)),
        ValueError,
        ["seq_len=0 in shape (2, 0, 3)"],
    ),
    (
        "hx with too few layers and directions",
        lambda: unroll(rnn(num_layers=2), torch.zeros(5, 3, 3), torch.zeros(1, 3, 20)),
        ValueError,
        ["(num_layers * num_directions=2, batch=3, hidden_size=20)", "num_layers=2 times num_directions=1 gives 2"],
    ),
    (
        "hx for one direction of a bidirectional layer",
        lambda: unroll(rnn(bidirectional=True), torch.zeros(5, 3, 3), torch.zeros(1, 3, 20)),
        ValueError,
        ["num_directions=2 gives 2, not 1"],
    ),
    (
        "hx laid out batch-first",
        lambda: unroll(rnn(num_layers=2, batch_first=True), torch.zeros(3, 5, 3), torch.zeros(3, 2, 20)),
        ValueError,
        ["batch-first", "never batch-first", "hx.transpose(0, 1).contiguous()"],
    ),
    (
        "hx of the wrong hidden size",
        lambda: unroll(rnn(), torch.zeros(5, 3, 3), torch.zeros(1, 3, 10)),
        ValueError,
        ["hidden_size=20, not 10"],
    ),
    (
        "hx from a larger batch",
        lambda: unroll(rnn(), torch.zeros(5, 7, 3), torch.zeros(1, 32, 20)),
        ValueError,
        ["batch of 32", "batch of 7", "smaller last batch", "leave hx out"],
    ),
    (
        "2-D hx for batched input",
        lambda: unroll(rnn(), torch.zeros(5, 3, 3), torch.zeros(3, 20)),
        ValueError,
        ["2 dimension(s), shape (3, 20)", "(num_layers * num_directions=1, batch=3, hidden_size=20)", "unsqueeze(0)"],
    ),
    (
        "3-D hx for unbatched input",
        lambda: unroll(rnn(), torch.zeros(5, 3), torch.zeros(1, 1, 20)),
        ValueError,
        ["(num_layers * num_directions=1, hidden_size=20)", "hx.squeeze(1)"],
    ),
    (
        "hx of another dtype",
        lambda: unroll(rnn(), torch.zeros(5, 3, 3), torch.zeros(1, 3, 20, dtype=torch.float64)),
        TypeError,
        ["hx has dtype torch.float64", "hx.to(torch.float32)"],
    ),
    (
        "an LSTM state tuple given to an RNN",
        lambda: unroll(rnn(), torch.zeros(5, 3, 3), (torch.zeros(1, 3, 20), torch.zeros(1, 3, 20))),
        TypeError,
        ["one tensor h_0", "tuple of 2", "(h_0, c_0) is the state of nn.LSTM"],
    ),
    (
        "hx that is not a tensor",
        lambda: unroll(rnn(), torch.zeros(5, 3, 3), 0.0),
        TypeError,
        ["hx must be a torch.Tensor", "got a float"],
    ),
    (
        "a module that is not recurrent",
        lambda: unroll(nn.Linear(3, 4), torch.zeros(5, 3, 3)),
        TypeError,
        ["needs a recurrent layer (nn.RNN, nn.LSTM or nn.GRU)", "got nn.Linear"],
    ),
    (
        "a model that contains an RNN",
        lambda: unroll(TinyModel(), torch.zeros(5, 3, 3)),
        TypeError,
        ["got TinyModel", "unroll(model.rnn, input)"],
    ),
    (
        "the class instead of a layer",
        lambda: unroll(nn.RNN, torch.zeros(5, 3, 3)),
        TypeError,
        ["the class nn.RNN itself", "nn.RNN(input_size=3, hidden_size=2)"],
    ),
    (
        "arguments swapped",
        lambda: unroll(torch.zeros(5, 3, 3), rnn()),
        TypeError,
        ["unroll(module, input, hx=None)"],
    ),
    (
        "a cell instead of a layer",
        lambda: unroll(nn.RNNCell(3, 4), torch.zeros(5, 3, 3)),
        TypeError,
        ["nn.RNNCell computes a single time step", "weight_ih_l0"],
    ),
    (
        "one tensor given as an LSTM's state",
        lambda: unroll(nn.LSTM(3, 20), torch.zeros(5, 3, 3), torch.zeros(1, 3, 20)),
        TypeError,
        ["nn.LSTM's state is a pair hx=(h_0, c_0)", "(num_layers * num_directions=1, batch=3, hidden_size=20)"],
    ),
    (
        "an LSTM's h_0 sized hidden_size when proj_size is set",
        lambda: unroll(
            nn.LSTM(3, 20, proj_size=5), torch.zeros(5, 3, 3), (torch.zeros(1, 3, 20), torch.zeros(1, 3, 20))
        ),
        ValueError,
        ["h_0 has shape (1, 3, 20)", "proj_size=5", "only c_0 keeps hidden_size"],
    ),
    (
        "an LSTM's c_0 of the wrong size",
        lambda: unroll(nn.LSTM(3, 20), torch.zeros(5, 3, 3), (torch.zeros(1, 3, 20), torch.zeros(1, 3, 5))),
        ValueError,
        ["c_0 has shape (1, 3, 5)", "hidden_size=20, not 5"],
    ),
    (
        "an (h, c) tuple given to a GRU",
        lambda: unroll(nn.GRU(3, 20), torch.zeros(5, 3, 3), (torch.zeros(1, 3, 20), torch.zeros(1, 3, 20))),
        TypeError,
        ["hx for nn.GRU is one tensor h_0", "nn.GRU has no cell state"],
    ),
    (
        "an LSTM cell instead of a layer",
        lambda: unroll(nn.LSTMCell(3, 4), torch.zeros(5, 3, 3)),
        TypeError,
        ["nn.LSTMCell computes a single time step", "Use nn.LSTM(input_size, hidden_size)"],
    ),
    (
        "dropout active in training mode",
        lambda: unroll(rnn(num_layers=2, dropout=0.3), torch.zeros(5, 3, 3)),
        ValueError,
        ["training mode with dropout=0.3", "random", "module.eval()"],
    ),
    (
        "packed sequences with the wrong feature size",
        lambda: unroll(rnn(), pack_padded_sequence(torch.zeros(5, 2, 4), [5, 3])),
        ValueError,
        ["each step of the packed sequences has (4,) values", "input_size=3"],
    ),
    (
        "packed integer token ids",
        lambda: unroll(rnn(), pack_padded_sequence(torch.zeros(5, 2, 3, dtype=torch.long), [5, 3])),
        TypeError,
        ["torch.int64", "float"],
    ),
    (
        "a PackedSequence made with a length longer than the padding",
        lambda: unroll(rnn(input_size=2), pack_padded_sequence(torch.zeros(4, 3, 2), [5, 3, 2])),
        ValueError,
        ["lengths add up to 10 steps but it holds 9", "longer than the padded", "helpers.pack_padded_sequence"],
    ),
    (
        "packed input with hx for a larger batch",
        lambda: unroll(rnn(), pack_padded_sequence(torch.zeros(5, 2, 3), [5, 3]), torch.zeros(1, 3, 20)),
        ValueError,
        ["batch of 3", "batch of 2"],
    ),
]


@pytest.mark.parametrize("what, call, exception, fragments", BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_input_gets_an_error_that_says_what_was_expected(what, call, exception, fragments):
    """Each mistake raises a ValueError/TypeError naming what was expected, what came, and a fix."""
    with pytest.raises(exception) as raised:
        call()
    for fragment in fragments:
        assert fragment in str(raised.value), f"{what}: {fragment!r} missing from: {raised.value}"


def packed_example(enforce_sorted):
    """A 2-layer bidirectional RNN and a batch of 3 sequences of lengths 2, 5, 3, packed."""
    torch.manual_seed(0)
    module = nn.RNN(2, 3, num_layers=2, bidirectional=True, batch_first=True).eval()
    padded = torch.randn(3, 5, 2)  # (B, T, in)
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    padded[torch.arange(5)[None, :] >= torch.tensor(lengths)[:, None]] = 7.0  # junk in the padding
    return module, pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=enforce_sorted)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input_returns_a_packed_output_like_torch(enforce_sorted):
    """Same data, batch_sizes and indices as torch; h_n in the batch's own order."""
    module, packed = packed_example(enforce_sorted)
    (output, h_n), (torch_output, torch_h_n) = unroll(module, packed), module(packed)
    assert isinstance(output, PackedSequence)
    assert torch.equal(output.batch_sizes, torch_output.batch_sizes)
    assert max_error((output, h_n), (torch_output, torch_h_n)) <= 1e-6


def test_packed_trace_skips_padding_each_sequence_ends_at_its_own_length():
    """The forward final state is the state at step len-1; the backward run starts there."""
    module, packed = packed_example(enforce_sorted=False)  # lengths 2, 5, 3
    result = trace(module, packed)
    assert result.lengths.tolist() == [2, 5, 3]
    forward, backward = result.stack("h", 0, 0), result.stack("h", 0, 1)  # (T, B, H)
    for b, length in enumerate([2, 5, 3]):
        assert torch.equal(result.h_n[0, b], forward[length - 1, b])
        assert torch.equal(result.h_n[1, b], backward[0, b])
        first_backward = [s for s in result.steps_of(0, 1) if s.valid[b]][-1]  # computed first
        assert first_backward.t == length - 1 and torch.equal(first_backward.h_prev[b], torch.zeros(3))
    valid = result.stack("valid")  # (T, B)
    assert valid.sum(0).tolist() == [2, 5, 3]
    assert len(result.table(batch=0).splitlines()) == 1 + 2  # the header and 2 real steps


def test_lstm_trace_holds_the_gates_in_torch_order_and_the_cell_state():
    """Gates i, f, g, o are chunks of weight_ih's rows in that order; c = f*c_prev + i*g."""
    torch.manual_seed(0)
    module = nn.LSTM(2, 3)
    input = torch.randn(4, 1, 2)
    result = trace(module, input)
    output, (h_n, c_n) = result.result
    step = result.steps[1]
    W_ii = module.weight_ih_l0[0:3]  # the first H rows belong to the input gate i
    expected_i = torch.sigmoid(
        step.x @ W_ii.T + module.bias_ih_l0[0:3] + step.h_prev @ module.weight_hh_l0[0:3].T + module.bias_hh_l0[0:3]
    )
    assert torch.allclose(step.gates["i"], expected_i, atol=1e-6)
    gates = step.gates
    assert torch.allclose(step.c, gates["f"] * step.c_prev + gates["i"] * gates["g"], atol=1e-6)
    assert torch.allclose(step.h, gates["o"] * torch.tanh(step.c), atol=1e-6)
    assert torch.equal(result.stack("c")[-1], c_n[0]) and result.stack("f").shape == (4, 1, 3)
    assert result.table().splitlines()[0].split() == ["t", "x_t", "h_prev", "i", "f", "g", "o", "c", "h_t"]


def test_gru_trace_resets_the_hidden_part_as_torch_does_not_as_the_paper_does():
    """n = tanh(W_in x + b_in + r * (W_hn h + b_hn)); h = (1 - z) * n + z * h_prev."""
    torch.manual_seed(0)
    module = nn.GRU(2, 3)
    result = trace(module, torch.randn(3, 1, 2))
    step = result.steps[2]
    r, z, n = step.gates["r"], step.gates["z"], step.gates["n"]
    W_in, W_hn = module.weight_ih_l0[6:9], module.weight_hh_l0[6:9]
    b_in, b_hn = module.bias_ih_l0[6:9], module.bias_hh_l0[6:9]
    assert torch.allclose(n, torch.tanh(step.x @ W_in.T + b_in + r * (step.h_prev @ W_hn.T + b_hn)), atol=1e-6)
    paper = torch.tanh(step.x @ W_in.T + b_in + (r * step.h_prev) @ W_hn.T + b_hn)
    assert not torch.allclose(n, paper, atol=1e-4)
    assert torch.allclose(step.h, (1 - z) * n + z * step.h_prev, atol=1e-6)
    with pytest.raises(ValueError, match="no field 'c' for GRU"):
        result.stack("c")
