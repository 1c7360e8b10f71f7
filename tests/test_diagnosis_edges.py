"""helpers.diagnosis at its edges: what the report says, on which probes, for layers and mistakes test_diagnosis.py
leaves out.

Each student function here is written as a student would write it (usually by calling the layer
itself, then getting one thing wrong), never built from helpers.bugs.
"""

import copy

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from helpers import diagnosis
from helpers.diagnosis import diagnose
from helpers.sandbox import Outcome


def layer(kind="RNN", input_size=3, hidden_size=4, seed=0, **options):
    """A seeded layer in eval mode."""
    torch.manual_seed(seed)
    return getattr(nn, kind)(input_size, hidden_size, **options).eval()


def inputs(steps=5, batch=2, input_size=3, seed=1):
    """A seeded (seq_len, batch, input_size) input."""
    return torch.randn(steps, batch, input_size, generator=torch.Generator().manual_seed(seed))


def by_torch(module, input, hx=None):
    """A right answer: the layer itself."""
    return module(input, hx)


ALL_TERMS = "nonzero h_0, W_ih alone, W_hh alone, b_ih alone, b_hh alone"
SEEDED = "larger layer, random layer 1, random layer 2"


@pytest.mark.parametrize(
    "kind, options, input, probes",
    [
        ("RNN", {}, inputs(), f"10 probes ({ALL_TERMS}, one step, another input, {SEEDED})"),
        (
            "RNN",
            {"num_layers": 2},
            inputs(),
            f"12 probes ({ALL_TERMS}, one step, another input, layer 0 alone, layer 1 alone, {SEEDED})",
        ),
        (
            "RNN",
            {"bias": False},
            inputs(),
            f"8 probes (nonzero h_0, W_ih alone, W_hh alone, one step, another input, {SEEDED})",
        ),
        (
            "LSTM",
            {},
            pack_padded_sequence(inputs(), [5, 3]),
            f"12 probes ({ALL_TERMS}, gate f alone, gate i alone, gate g alone, gate o alone, {SEEDED})",
        ),
        (
            "GRU",
            {},
            inputs()[:, 0],
            f"14 probes ({ALL_TERMS}, gate z alone, gate n alone, gate n with r shut, gates r and n, one step, "
            f"another input, {SEEDED})",
        ),
    ],
)
def test_a_right_layer_is_told_every_probe_it_passed(kind, options, input, probes, capsys):
    """The ✓ line counts and names the probes: each term alone (biases only when the layer has them), one step and
    another input (not for a packed batch), each layer alone (a stack), and three seeded random layers."""
    module = layer(kind, **options)
    assert diagnose(by_torch, module, input, name="my_layer")
    name = {"RNN": "nn.RNN", "LSTM": "nn.LSTM", "GRU": "nn.GRU"}[kind]
    expected = f"✓ my_layer matches {name} on your input (values, dtype and gradients) and on {probes}.\n"
    assert capsys.readouterr().out == expected


def test_an_lstm_whose_c_0_is_detached_is_named(capsys):
    """(h_0, c_0) with only c_0 detached: the values are right, but no gradient reaches the encoder that gave c_0."""

    def my_lstm(module, input, hx=None):
        if hx is not None:
            hx = (hx[0], hx[1].detach())
        return module(input, hx)

    module, zeros = layer("LSTM"), torch.zeros(1, 2, 4)
    verdict = diagnose(my_lstm, module, inputs(), (zeros, zeros))
    text = capsys.readouterr().out
    assert not verdict and verdict.status == "wrong"
    assert "the gradient with respect to c_0[0, 0, 0] is 0.0000 through yours" in text
    assert "c_0 is detached" in text and "h_0 is detached" not in text


def test_a_detached_h_0_is_caught_even_when_little_of_it_reaches_the_result(capsys):
    """Small recurrent weights let only about 1% of h_0 through: its gradients are small, and still not zero."""
    module = layer()
    with torch.no_grad():
        module.weight_hh_l0.mul_(0.01)
    h_0 = torch.randn(1, 2, 4, generator=torch.Generator().manual_seed(2))

    def my_rnn(module, input, hx=None):
        return module(input, None if hx is None else hx.detach())

    verdict = diagnose(my_rnn, module, inputs(), h_0)
    text = capsys.readouterr().out
    assert not verdict and verdict.status == "wrong" and "h_0 is detached" in text, text


def test_a_layer_computed_in_half_precision_is_not_right(capsys):
    """float16 keeps about 3 digits: cast back to float32, its values still depart from torch's by about 1e-4."""

    def my_rnn(module, input, hx=None):
        half = copy.deepcopy(module).half()
        output, h_n = half(input.half(), None if hx is None else hx.half())
        return output.float(), h_n.float()

    verdict = diagnose(my_rnn, layer(), inputs())
    assert not verdict and verdict.status == "wrong" and verdict.part == "output"
    assert abs(verdict.got - verdict.expected) < 1e-2  # close, yet not the same
    assert "every value is within 1% of torch's, yet some are beyond the tolerance" in capsys.readouterr().out


def test_h_n_returned_as_a_numpy_array_is_named_as_such(capsys):
    """.numpy() on h_n: the report says what came back, and the tensor shape torch gives h_n."""

    def my_rnn(module, input, hx=None):
        output, h_n = module(input, hx)
        return output, h_n.detach().numpy()

    verdict = diagnose(my_rnn, layer(), inputs())
    text = capsys.readouterr().out
    expected = (
        "  h_n is a ndarray; it should be a tensor shaped (num_layers*num_directions=1, batch=2, hidden_size=4)\n"
    )
    assert not verdict and expected in text, text


@pytest.mark.parametrize(
    "kind, options, shape",
    [
        ("RNN", {}, "(num_layers*num_directions=1, batch=2, hidden_size=4)"),
        ("GRU", {"num_layers": 2, "bidirectional": True}, "(num_layers*num_directions=4, batch=2, hidden_size=4)"),
        ("LSTM", {"proj_size": 2}, "(num_layers*num_directions=1, batch=2, proj_size=2)"),
    ],
)
def test_h_n_without_its_first_dimension_is_told_the_shape_torch_gives(kind, options, shape, capsys):
    """h_n[0] (or h_n.squeeze(0)) drops the layer-and-direction dimension: the report spells out torch's shape."""

    def my_layer(module, input, hx=None):
        output, states = module(input, hx)
        if isinstance(states, tuple):
            return output, (states[0][0], states[1])
        return output, states[0]

    verdict = diagnose(my_layer, layer(kind, **options), inputs())
    text = capsys.readouterr().out
    assert not verdict and f"h_n has shape (2, {2 if 'proj_size' in options else 4}); torch's is {shape}" in text


@pytest.mark.parametrize(
    "kind, options, sizes",
    [
        (
            "RNN",
            {},
            "x_t is (batch=2, input_size=3); W_ih = weight_ih_l0 is (hidden_size=4, input_size=3); "
            "W_hh = weight_hh_l0 is (hidden_size=4, hidden_size=4).",
        ),
        (
            "LSTM",
            {"proj_size": 2},
            "x_t is (batch=2, input_size=3); W_ih = weight_ih_l0 is (4*hidden_size=16, input_size=3); "
            "W_hh = weight_hh_l0 is (4*hidden_size=16, proj_size=2).",
        ),
    ],
)
def test_a_shape_error_is_shown_with_the_sizes_of_the_layers_weights(kind, options, sizes, capsys):
    """x_t @ W_ih without .T raises on a layer whose input_size is not its hidden_size: the report lists the shapes
    of x_t, W_ih and W_hh by name, so the student can see which product does not fit."""

    def my_layer(module, input, hx=None):
        h, steps = torch.zeros(input.shape[1], module.hidden_size), []
        for x_t in input:
            h = torch.tanh(x_t @ module.weight_ih_l0 + h @ module.weight_hh_l0.T)
            steps.append(h)
        return torch.stack(steps), h.unsqueeze(0)

    verdict = diagnose(my_layer, layer(kind, **options), inputs())
    text = capsys.readouterr().out
    assert not verdict and verdict.status == "raised" and f"  your layer: {sizes}\n" in text, text


def test_a_final_state_from_the_wrong_step_is_told_which_step_it_returns(capsys):
    """output right, h_n taken one step too early (output[-2]): no catalogued bug; the hint says which step."""

    def my_rnn(module, input, hx=None):
        output, _ = module(input, hx)
        return output, output[-2:-1]

    verdict = diagnose(my_rnn, layer(), inputs())
    text = capsys.readouterr().out
    assert not verdict and verdict.part == "h_n" and verdict.bug is None
    T = inputs().shape[0]
    assert (
        f"  hint: your h_n[0] is layer 0's state after step t = {T - 2}; torch's h_n[0] is its state after the " in text
    )


@pytest.mark.parametrize("given, what", [("result", "tuple"), ("tensor", "Tensor")])
def test_passing_something_other_than_a_function_is_explained(given, what, capsys):
    """diagnose(my_rnn(rnn, x), rnn, x): the result, not the function, came first; the message shows the call."""
    module, x = layer(), inputs()
    first = module(x) if given == "result" else x
    verdict = diagnose(first, module, x)
    assert not verdict and verdict.status == "cannot check"
    assert capsys.readouterr().out == (
        "✗ your function: cannot check: the first argument must be your function, e.g. diagnose(my_rnn, rnn, x); "
        f"got a {what}.\n"
    )


def test_an_lstm_that_starts_its_cell_from_zeros_fails_on_the_probe_with_a_nonzero_c_0(capsys):
    """With no hx of the student's own, c_0 ignored only shows on the nonzero-state probe, which names (h_0, c_0)."""

    def my_lstm(module, input, hx=None):
        if hx is not None:
            hx = (hx[0], torch.zeros_like(hx[1]))
        return module(input, hx)

    verdict = diagnose(my_lstm, layer("LSTM"), inputs())
    text = capsys.readouterr().out
    assert not verdict and "  probe: a nonzero initial state (seeded random h_0, c_0)\n" in text, text
    assert "  first departure: output[0, 0, 0]: layer 0, the only direction, time step 1 (t = 0), batch item 0" in text
    assert verdict.bug is not None and verdict.bug.name == "c_0_ignored"


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_a_stack_that_ignores_h_0_is_shown_departing_in_its_first_layer(kind, capsys):
    """A 2-layer stack given h_0 (and c_0) that starts from zeros: each layer alone departs too, and the report shows
    where the stack first goes wrong, layer 0 read alone, with that layer's rows of the initial state."""

    def my_stack(module, input, hx=None):
        return module(input)

    generator = torch.Generator().manual_seed(3)
    h_0 = torch.randn(2, 2, 4, generator=generator)
    hx = (h_0, torch.randn(2, 2, 4, generator=generator)) if kind == "LSTM" else h_0
    verdict = diagnose(my_stack, layer(kind, num_layers=2), inputs(), hx)
    text = capsys.readouterr().out
    assert not verdict and "  probe: layer 0 alone, reading your input\n" in text, text
    assert verdict.layer == 0 and verdict.probe == "layer 0 alone, reading your input"


def test_each_layer_alone_reads_what_torchs_layers_below_it_return():
    """The probe "layer 2 alone, reading torch's output of layer 1" is layer 2 of the stack as a layer of its own,
    fed the output of layers 0 and 1 and started from its own rows of h_0."""
    module, x = layer("RNN", num_layers=3, bidirectional=True), inputs()
    h_0 = torch.randn(6, 2, 4, generator=torch.Generator().manual_seed(4))
    below = nn.RNN(3, 4, num_layers=2, bidirectional=True).eval()
    below.load_state_dict({k: v for k, v in module.state_dict().items() if "_l2" not in k})
    with torch.no_grad():  # as diagnose builds its probes
        probe = diagnosis._layer_alone(module, x, h_0, 2)
        assert torch.equal(probe.input, below(x, h_0[:4])[0])
        assert torch.equal(probe.hx, h_0[4:])
        assert torch.equal(probe.module.weight_hh_l0_reverse, module.weight_hh_l2_reverse)
    assert probe.description == "layer 2 alone, reading torch's output of layer 1" and probe.layer == 2


@pytest.mark.parametrize("kind", ["RNN", "LSTM"])
def test_a_float64_layer_is_checked_in_float64_on_every_probe(kind, capsys):
    """A layer made .double() (as for a gradient check): the probes are float64 too, so a right function gets ✓."""
    module = layer(kind).double()
    verdict = diagnose(by_torch, module, inputs().double(), name="my_layer")
    text = capsys.readouterr().out
    assert verdict and text.startswith(f"✓ my_layer matches nn.{kind} on your input"), text


def test_the_report_is_the_same_whatever_the_students_random_state(capsys):
    """The probes are seeded: a student who reruns the cell (after other random draws) reads the same numbers."""

    def my_rnn(module, input, hx=None):  # h_0 ignored: only the probes with a random h_0 show it
        return module(input)

    module, x = layer(), inputs()
    reports = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        diagnose(my_rnn, module, x)
        reports.append(capsys.readouterr().out)
    assert "probe: a nonzero initial state" in reports[0] and reports[0] == reports[1], reports


@pytest.mark.parametrize("size", [0.0, 1.0, 1000.0])
def test_results_agree_within_atol_plus_rtol_times_torchs_value(size):
    """Equal, for diagnose, is within ATOL + RTOL × |torch's value| (float32 rounding grows with the value): a
    difference just inside that is no departure and no other outcome, one just beyond it is both."""
    want = torch.tensor([size, -size], dtype=torch.float64)
    bound = diagnosis.ATOL + diagnosis.RTOL * size
    inside, beyond = want + torch.tensor([0.0, 0.9 * bound]), want + torch.tensor([0.0, 1.1 * bound])
    assert diagnosis.first_difference(inside, want) is None
    assert diagnosis.first_difference(beyond, want) == (1,)
    assert diagnosis.same_outcome(Outcome(value=(inside, want)), Outcome(value=(want, want)))
    assert not diagnosis.same_outcome(Outcome(value=(beyond, want)), Outcome(value=(want, want)))


def test_nan_where_torch_has_nan_is_no_departure():
    """A NaN input gives torch NaN outputs: the same NaNs in the student's result are no departure, NaN elsewhere
    is one."""
    nan = float("nan")
    want = torch.tensor([[0.5, nan], [nan, -0.25]])
    assert diagnosis.first_difference(want.clone(), want) is None
    assert diagnosis.first_difference(torch.tensor([[0.5, nan], [0.0, -0.25]]), want) == (1, 0)
    assert diagnosis.first_difference(torch.tensor([[nan, nan], [nan, -0.25]]), want) == (0, 0)


def test_a_function_without_the_hx_argument_is_told_the_signature_to_use(capsys):
    """def my_rnn(module, input): diagnose calls it as module(input, hx) is called; the line shows its signature."""

    def my_rnn(module, input):
        return module(input)

    verdict = diagnose(my_rnn, layer(), inputs())
    assert not verdict and verdict.status == "cannot check"
    assert capsys.readouterr().out == (
        "✗ my_rnn: cannot check: my_rnn must take three arguments, (module, input, hx), as module(input, hx) does; "
        "its signature is (module, input).\n"
    )


def test_returning_only_the_output_of_a_two_step_input_asks_for_the_pair(capsys):
    """output alone, on an input of 2 steps: a tensor whose first dimension is 2 is still not (output, h_n)."""

    def my_rnn(module, input, hx=None):
        output, _ = module(input, hx)
        return output

    verdict = diagnose(my_rnn, layer(), inputs(steps=2))
    text = capsys.readouterr().out
    assert not verdict and "  it returns a tensor of shape (2, 2, 4); the layer returns a pair, (output, h_n)\n" in text


@pytest.mark.parametrize(
    "kind, options, shapes",
    [
        ("GRU", {}, [(4, 3, 4)]),
        ("LSTM", {}, [(4, 3, 4), (4, 3, 4)]),
        ("LSTM", {"proj_size": 2}, [(4, 3, 2), (4, 3, 4)]),
    ],
)
def test_the_random_initial_states_are_shaped_and_typed_as_torch_wants(kind, options, shapes):
    """h_0 (and c_0) of the probes: one row per layer and direction, proj_size wide for h_0 of an LSTM with
    projections, and in the layer's dtype, so a function that keeps the dtype it is given stays right."""
    module = layer(kind, num_layers=2, bidirectional=True, **options).double()
    state = diagnosis._random_state(module, 3, torch.Generator().manual_seed(0))
    states = state if isinstance(state, tuple) else (state,)
    assert [tuple(s.shape) for s in states] == shapes and {s.dtype for s in states} == {torch.float64}


def test_the_larger_layers_of_an_lstm_with_projections_have_projections_too():
    """The larger probes are layers like the student's: an nn.LSTM with proj_size keeps one (below hidden_size)."""
    module = layer("LSTM", hidden_size=5, proj_size=3)
    with torch.no_grad():
        probes = [diagnosis._larger(module, inputs(), seed) for seed in range(3)]
    for probe in probes:
        assert 0 < probe.module.proj_size < probe.module.hidden_size
        assert probe.module(probe.input, probe.hx)[0].shape[-1] == probe.module.proj_size


def test_a_final_state_row_returned_twice_is_said_with_the_row_it_leaves_out(capsys):
    """c_n's backward row a copy of the forward row: the hint says which of torch's rows is there twice, which never."""

    def twice(module, input, hx=None):
        output, (h_n, c_n) = module(input, hx)
        return output, (h_n, c_n[[0, 0]])

    torch.manual_seed(0)
    assert not diagnose(twice, nn.LSTM(3, 4, bidirectional=True), torch.randn(5, 3, 3))
    assert (
        "hint: c_n holds torch's row 0 more than once (row 1 holds torch's row 0) and never its row 1: each layer "
        "and direction has its own final state, at row layer * 2 + direction." in capsys.readouterr().out
    )


def test_a_backward_half_stored_at_the_wrong_steps_is_said_step_by_step(capsys):
    """The backward states put back in time order by swapping the first and last only: which step holds which."""

    def swapped_ends(module, input, hx=None):
        output, h_n = module(input, hx)
        H = module.hidden_size
        backward = output[..., H:].clone()
        backward[1], backward[-2] = output[-2, :, H:], output[1, :, H:]
        return torch.cat([output[..., :H], backward], dim=-1), h_n

    torch.manual_seed(0)
    assert not diagnose(swapped_ends, nn.RNN(3, 4, bidirectional=True), torch.randn(5, 3, 3))
    assert (
        "the backward half of output holds torch's states for the steps in another order (yours at t = 1 is "
        "torch's at t = 3, yours at t = 3 is torch's at t = 1)" in capsys.readouterr().out
    )


def test_a_rewiring_with_hx_ignored_too_is_named_with_both(capsys):
    """A bidirectional layer with its directions' parameters exchanged that also never reads hx: both named."""

    def inverted(module, input, hx=None):
        swapped = copy.deepcopy(module)
        with torch.no_grad():
            for name, _ in module.named_parameters():
                other = name.removesuffix("_reverse") if name.endswith("_reverse") else name + "_reverse"
                getattr(swapped, name).copy_(getattr(module, other))
        return swapped(input)  # hx never passed

    torch.manual_seed(0)
    assert not diagnose(inverted, nn.GRU(3, 4, num_layers=2, bidirectional=True), torch.randn(5, 3, 3))
    out = capsys.readouterr().out
    assert (
        "exchanged in every layer" in out and "and hx is never used: every layer and direction starts from zeros" in out
    )


@pytest.mark.parametrize(
    "wrong, said",
    [
        (
            lambda m, x, hx=None: (lambda o, s: (o, (s[0], torch.tanh(s[1]))))(*m(x, hx)),
            "c_n is tanh of torch's c_n: a tanh applied once too often (c_n is the cell state itself",
        ),
        (
            lambda m, x, hx=None: m(x, None if hx is None else tuple(s[:, :1].expand_as(s) for s in hx)),
            "most likely: every sequence starts from the first sequence's initial state (hx[row][0], broadcast",
        ),
    ],
    ids=["c_n squashed", "hx's first sequence shared"],
)
def test_an_lstm_state_squashed_or_shared_is_named(wrong, said, capsys):
    torch.manual_seed(0)
    hx = (torch.randn(1, 3, 4), torch.randn(1, 3, 4))
    assert not diagnose(wrong, nn.LSTM(3, 4), torch.randn(5, 3, 3), hx)
    assert said in capsys.readouterr().out


def test_directions_summed_instead_of_concatenated_are_named(capsys):
    def summed(module, input, hx=None):
        output, h_n = module(input, hx)
        forward, backward = output.chunk(2, dim=-1)
        return forward + backward, h_n

    torch.manual_seed(0)
    assert not diagnose(summed, nn.GRU(3, 4, bidirectional=True), torch.randn(5, 3, 3))
    assert "yours is torch's two directions summed: torch concatenates them" in capsys.readouterr().out


def rnn_loop(module, input, hx=None, times=None, keep_h_0=False, time_dim=0):
    """A student's one-layer RNN loop over `times` (default every step) along `time_dim`; `keep_h_0` stacks h_0
    first."""
    W_ih, W_hh, b_ih, b_hh = module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0
    steps = input.unbind(time_dim)
    h = torch.zeros(steps[0].shape[0], module.hidden_size) if hx is None else hx[0]
    states = [h] if keep_h_0 else []
    for t in range(len(steps)) if times is None else times(len(steps)):
        h = torch.tanh(steps[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return torch.stack(states), h[None]


@pytest.mark.parametrize(
    "options, said",
    [
        ({"times": lambda T: range(1, T)}, "your loop starts at step 1 (range(1, seq_len), or input[1:])"),
        ({"times": lambda T: range(T - 1)}, "your loop stops one step early (range(seq_len - 1), or input[:-1])"),
        ({"keep_h_0": True}, "your output starts with the initial state h_0"),
        ({"time_dim": 1}, "your loop runs over the batch as if it were time"),
    ],
    ids=["from step 1", "one step early", "h_0 kept", "over the batch"],
)
def test_an_output_with_the_wrong_steps_is_told_which_steps_it_holds(options, said, capsys):
    """The output's values say which steps the loop ran: matched against torch on the input so changed."""
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4), torch.randn(5, 2, 3)
    assert not diagnose(lambda m, x, hx=None: rnn_loop(m, x, hx, **options), module, input)
    assert said in capsys.readouterr().out


def stacked_loop(module, input, hx=None, final=lambda states: states[-1]):
    """A student's stacked RNN by hand; h_n keeps `final(states)` of each layer (right: the last)."""
    layer_input, h_n = input, []
    for layer in range(module.num_layers):
        W_ih, W_hh, b_ih, b_hh = (
            getattr(module, f"{kind}_l{layer}") for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )
        h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[layer]
        states = []
        for x_t in layer_input:
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        h_n.append(final(states))
        layer_input = torch.stack(states)
    return layer_input, torch.stack(h_n)


@pytest.mark.parametrize(
    "final, said",
    [
        (
            lambda states: states[0],
            "your h_n[0] is layer 0's state after step t = 0; torch's h_n[0] is its state after the last step it computes, t = 4",
        ),
        (lambda states: states[-2], "your h_n[0] is layer 0's state after step t = 3"),
    ],
    ids=["first step", "one before the last"],
)
def test_a_final_state_from_another_step_is_told_which_step_it_is(final, said, capsys):
    torch.manual_seed(0)
    module, input = nn.RNN(3, 4, num_layers=3), torch.randn(5, 2, 3)
    assert diagnose(stacked_loop, module, input)
    capsys.readouterr()
    assert not diagnose(lambda m, x, hx=None: stacked_loop(m, x, hx, final), module, input)
    out = capsys.readouterr().out
    assert said in out


def test_the_probes_are_the_same_whatever_the_students_random_state():
    """Every probe (its layer, input and h_0) comes from diagnose's own seeds, never the global generator."""
    module, x = nn.GRU(3, 2, num_layers=2, bidirectional=True), inputs()
    runs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        with torch.random.fork_rng(), torch.no_grad():
            runs.append(diagnosis._probes(module, x, None))
    for a, b in zip(*runs, strict=True):
        assert a.description == b.description
        assert torch.equal(a.input, b.input)
        assert (a.hx is None and b.hx is None) or torch.equal(a.hx, b.hx)
        for (name, p), (_, q) in zip(a.module.named_parameters(), b.module.named_parameters(), strict=True):
            assert torch.equal(p, q), name


@pytest.mark.parametrize(
    "module, hidden",
    [(nn.RNN(3, 1), 4), (nn.RNN(5, 2), 3), (nn.LSTM(2, 6), 6), (nn.GRU(4, 4, num_layers=2), 5)],
    ids=["H=1 beside I=3", "H=2", "H=6", "H=I=4, stacked"],
)
def test_the_larger_probe_is_the_smallest_layer_no_size_coincidence_can_fool(module, hidden):
    """Seed 0: hidden_size the smallest >= 3 and >= the module's, unlike input_size; 3 layers if stacked; B 3, T 4."""
    probe = diagnosis._larger(module, inputs(), 0)
    assert probe.module.hidden_size == hidden
    assert probe.module.num_layers == (1 if module.num_layers == 1 else 3)
    assert tuple(probe.input.shape) == (4, 3, module.input_size) and probe.hx is None
    for seed in (1, 2, 3):
        other = diagnosis._larger(module, inputs(), seed)
        assert 3 <= other.module.hidden_size <= 7 and other.module.hidden_size != module.input_size
        T, B = other.input.shape[:2]
        assert 5 <= T <= 7 and 3 <= B <= 5 and other.hx is not None


def test_a_shape_message_names_the_bidirectional_width(capsys):
    """output (T, B, 2H) for a bidirectional layer: the layout says num_directions*hidden_size = 2H."""
    module = nn.RNN(3, 4, bidirectional=True)
    assert not diagnose(lambda m, x, hx=None: (m(x, hx)[0][..., :4], m(x, hx)[1]), module, inputs())
    out = capsys.readouterr().out
    assert "torch's is (seq_len=5, batch=2, num_directions*hidden_size=8)" in out
    assert "yours is the forward half only" in out


def test_an_unbatched_input_answered_with_a_batch_dimension_is_told_it_is_unbatched(capsys):
    module = nn.GRU(3, 4)
    assert not diagnose(lambda m, x, hx=None: (m(x[:, None])[0], m(x[:, None])[1]), module, inputs()[:, 0])
    out = capsys.readouterr().out
    assert "this input is unbatched, (seq_len, input_size)" in out


def test_an_error_without_a_shape_shows_no_layer_sizes(capsys):
    def my_rnn(module, input, hx=None):
        raise KeyError("h")

    assert not diagnose(my_rnn, layer(), inputs())
    out = capsys.readouterr().out
    assert "raised KeyError" in out and "your layer:" not in out


def test_notebook_names_leave_out_whole_numbers_unless_asked():
    def my_rnn(module, input, hx=None):
        return module(input[:STEPS], hx)

    assert diagnosis.notebook_names(my_rnn) == []
    assert diagnosis.notebook_names(my_rnn, numbers=True) == ["STEPS"]


STEPS = 3  # a notebook's whole number, read by the function above


def test_a_function_that_returns_one_tensor_is_told_what_the_layer_returns(capsys):
    module = nn.LSTM(3, 4)
    assert not diagnose(lambda m, x, hx=None: m(x, hx)[0], module, inputs())
    assert "return what the layer returns, (output, (h_n, c_n)), as tensors shaped like torch's." in (
        capsys.readouterr().out
    )


def test_an_lstm_with_only_c_n_wrong_is_told_to_return_every_final_cell_state(capsys):
    module = nn.LSTM(3, 4, num_layers=2)

    def my_lstm(m, x, hx=None):
        output, (h_n, c_n) = m(x, hx)
        return output, (h_n, c_n * 1.5)

    assert not diagnose(my_lstm, module, inputs())
    assert "output and h_n match but c_n does not" in capsys.readouterr().out


def test_two_causes_that_fit_every_probe_are_both_said(capsys):
    """An unbatched input read as one step of seq_len sequences equals, on one direction, a state never carried:
    the probes cannot tell them apart, so both are said, neither with confidence."""

    def one_step_each(module, input, hx=None):
        output, h_n = module(input[None], None if hx is None else hx[:, None].expand(-1, input.shape[0], -1))
        return output[0], h_n[:, -1]

    assert not diagnose(one_step_each, nn.RNN(3, 4), inputs()[:, 0], torch.randn(1, 4))
    out = capsys.readouterr().out
    assert "the probes cannot tell these apart; most likely one of them:" in out
    assert "- the state is not carried" in out and "- the unbatched input (seq_len, input_size) read as ONE step" in out
    assert "most likely: " not in out.replace("most likely one of them", "")


def changed_at(direction, t, batch_first=False):
    """A layer right everywhere but at one step of one direction of output (a student's slip at that step)."""

    def my_rnn(module, input, hx=None):
        output, h_n = module(input, hx)
        output = output.clone()
        H = module.hidden_size
        if batch_first:
            output[:, t, direction * H : (direction + 1) * H] += 0.5
        else:
            output[t, :, direction * H : (direction + 1) * H] += 0.5
        return output, h_n

    return my_rnn


@pytest.mark.parametrize(
    "direction, t, batch_first, said",
    [
        (0, 4, True, "the last step this direction computes does not: does the loop stop one step early?"),
        (1, 0, False, "the last step this direction computes does not"),
        (1, 4, True, "the very first step already differs: check that step's equation term by term."),
        (0, 2, False, "the first steps match, a later one does not"),
    ],
    ids=["forward's last, batch_first", "backward's last is t = 0", "backward's first is t = T-1", "a middle step"],
)
def test_which_step_of_its_direction_departs_first_is_said(direction, t, batch_first, said, capsys):
    module = nn.RNN(3, 4, bidirectional=True, batch_first=batch_first)
    x = inputs().transpose(0, 1).contiguous() if batch_first else inputs()
    verdict = diagnose(changed_at(direction, t, batch_first), module, x)
    out = capsys.readouterr().out
    assert not verdict and (verdict.direction, verdict.t) == (direction, t)
    assert said in out
    assert "probe:" not in out  # it departs on the student's own input: no probe is named


def test_a_stack_departing_in_its_top_layer_says_the_top(capsys):
    module = nn.GRU(3, 4, num_layers=2)
    scaled = lambda m, x, hx=None: (m(x, hx)[0] * (1.1 if m.num_layers > 1 else 1), m(x, hx)[1])  # noqa: E731
    verdict = diagnose(scaled, module, inputs())
    assert not verdict
    assert "layer 1 (the top), the only direction, time step 1 (t = 0)" in capsys.readouterr().out


def test_steps_stored_in_another_order_are_said_for_batch_first_and_unbatched_layers(capsys):
    for module, x in ((nn.RNN(3, 4, batch_first=True), inputs().transpose(0, 1)), (nn.RNN(3, 4), inputs()[:, 0])):
        time = 1 if x.dim() == 3 else 0

        def reversed_steps(m, x, hx=None, time=time):
            output, h_n = m(x, hx)
            return output.flip(time), h_n

        assert not diagnose(reversed_steps, module, x)
        assert "output holds torch's states for the steps in another order (yours at t = 0 is torch's at t = 4" in (
            capsys.readouterr().out
        )


def test_a_failed_product_in_a_layer_above_names_what_that_layer_reads(capsys):
    def my_rnn(module, input, hx=None):
        below, _ = nn.RNN(3, 4, bidirectional=True)(input)  # (T, B, 8)
        return below[..., :4] @ module.weight_ih_l1.T, None

    assert not diagnose(my_rnn, nn.RNN(3, 4, num_layers=2, bidirectional=True), inputs())
    out = capsys.readouterr().out
    assert (
        "layer 1 reads the output of layer 0: num_directions*hidden_size = 8 features, the forward and backward" in out
    )


def test_an_output_holding_every_layers_states_is_told_torch_keeps_the_top_layers(capsys):
    module = nn.RNN(3, 4, num_layers=2)

    def my_rnn(m, x, hx=None):
        below = nn.RNN(3, 4)
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(below, f"{name}_l0").copy_(getattr(m, f"{name}_l0"))
        output, h_n = m(x, hx)
        return torch.cat([below(x)[0], output], dim=2), h_n

    assert not diagnose(my_rnn, module, inputs())
    assert "torch's output holds the top layer's states only" in capsys.readouterr().out


def test_a_projected_lstms_shape_message_names_proj_size(capsys):
    module = nn.LSTM(3, 4, proj_size=2)
    assert not diagnose(lambda m, x, hx=None: (m(x, hx)[0][..., :1], m(x, hx)[1]), module, inputs())
    assert "num_directions*proj_size=2" in capsys.readouterr().out
