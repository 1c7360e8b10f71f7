"""Exercises of notebooks/04_bidirectional.ipynb."""

import torch
from torch import nn

from helpers.exercise_types import CodeExercise, Exercise, Mistake
from helpers.solutions import shapes


def _shapes_layer():
    """Exercise 1's layer, read with a (seq_len=7, batch=2, input_size=5) input."""
    return nn.RNN(input_size=5, hidden_size=3, bidirectional=True)


def _wide():
    """The notebook's seeded 3 -> 3 bidirectional `wide`, its input, and a one-way RNN of its _reverse weights."""
    torch.manual_seed(0)
    wide = nn.RNN(input_size=3, hidden_size=3, bidirectional=True)
    x_wide = torch.randn(5, 2, 3)  # (seq_len=5, batch=2, input_size=3)
    backward_only = nn.RNN(3, 3)
    with torch.no_grad():
        for name, p in backward_only.named_parameters():
            p.copy_(getattr(wide, name + "_reverse"))
    return wide, x_wide, backward_only


def _backward_final_position():
    """(row of h_n, time index of output) holding the backward final state, found by comparing with torch."""
    wide, x_wide, backward_only = _wide()
    out_wide, h_n_wide = wide(x_wide)
    H = wide.hidden_size
    backward_final = backward_only(x_wide.flip(0))[1][0]  # the one-way run over reversed time ends at step 1
    (row,) = [i for i in range(h_n_wide.shape[0]) if torch.allclose(h_n_wide[i], backward_final, atol=1e-6)]
    (t,) = [t for t in range(out_wide.shape[0]) if torch.allclose(out_wide[t, :, H:], backward_final, atol=1e-6)]
    return row, t


def _hand_rnn():
    """The notebook's small layer: forward w_ih = 0.5, w_hh = -1; backward w_ih = 0.25, w_hh = 0.5; no bias."""
    rnn = nn.RNN(input_size=1, hidden_size=1, bias=False, bidirectional=True)
    with torch.no_grad():
        rnn.weight_ih_l0.fill_(0.5)
        rnn.weight_hh_l0.fill_(-1.0)
        rnn.weight_ih_l0_reverse.fill_(0.25)
        rnn.weight_hh_l0_reverse.fill_(0.5)
    return rnn


X_SHORT = (0.0, 2.0)  # exercise 3's sequence


def _h_n():
    return _hand_rnn()(torch.tensor(X_SHORT).reshape(2, 1, 1))[1].flatten().tolist()  # [forward, backward]


def _run(inputs, w_ih, w_hh, activation=torch.tanh):
    """The last state of a 1 -> 1 loop without bias over `inputs`, in the order given."""
    h = torch.tensor(0.0)
    for x in inputs:
        h = activation(torch.tensor(w_ih * x) + w_hh * h)
    return h.item()


def my_birnn(module, input, hx=None):
    """A one-layer bidirectional nn.RNN (tanh), time first: both runs, then output and h_n."""
    T, B, H = input.shape[0], input.shape[1], module.hidden_size
    h_0 = torch.zeros(2, B, H) if hx is None else hx  # row 0 forward, row 1 backward
    states, finals = [], []
    for direction, suffix in enumerate(("_l0", "_l0_reverse")):
        W_ih, W_hh = getattr(module, "weight_ih" + suffix), getattr(module, "weight_hh" + suffix)
        b_ih, b_hh = getattr(module, "bias_ih" + suffix), getattr(module, "bias_hh" + suffix)
        h, by_time = h_0[direction], [None] * T
        for t in range(T - 1, -1, -1) if direction else range(T):  # the backward run starts at the last step
            h = torch.tanh(input[t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            by_time[t] = h  # stored at its own time step, in both directions
        states.append(torch.stack(by_time))  # (T, B, H)
        finals.append(h)  # forward: after step T; backward: after step 1
    return torch.cat(states, dim=-1), torch.stack(finals)  # (T, B, 2H), (2, B, H)


def _wide_layer():
    """The notebook's seeded `wide` layer and input, for 04.bidirectional."""
    wide, x_wide, _ = _wide()
    return wide, x_wide, None


EXERCISES = [
    CodeExercise(
        key="04.bidirectional",
        question="my_birnn(module, input, hx=None): a one-layer bidirectional RNN by hand, returning (output, h_n)",
        reference=my_birnn,
        explanation=(
            "Each direction runs its own weights from its own row of h_0; the backward one goes from the last step "
            "to the first. Both store the state of step t at row t, so output[t] = [forward h_t, backward h_t], and "
            "h_n holds where each run ended: forward after the last step, backward after the first."
        ),
        layer=_wide_layer,
    ),
    shapes.shape_exercise(
        "04.output_shape",
        "the shape of output of nn.RNN(5, 3, bidirectional=True) for input (seq_len=7, batch=2, input_size=5)",
        _shapes_layer,
        (7, 2, 5),
        "output",
        explanation="Each step holds both directions side by side: (seq_len=7, batch=2, 2 * hidden_size=6).",
        mistakes=(
            shapes.ONE_DIRECTION,
            shapes.LAYOUT,
            Mistake(
                lambda: (14, 2, 3),
                "The backward run does not add steps: it reads the same 7 steps, and its state at step t sits next "
                "to the forward state at step t.",
            ),
        ),
    ),
    shapes.shape_exercise(
        "04.h_n_shape",
        "the shape of h_n of nn.RNN(5, 3, bidirectional=True) for input (seq_len=7, batch=2, input_size=5)",
        _shapes_layer,
        (7, 2, 5),
        "h_n",
        explanation=(
            "One row per direction (num_layers * num_directions = 2), each a (batch=2, hidden_size=3) state: (2, 2, 3)."
        ),
        mistakes=(shapes.ROW_PER_LAYER, shapes.SIDE_BY_SIDE_PER_LAYER, shapes.STATE_IS_OUTPUT),
    ),
    Exercise(
        key="04.backward_row",
        question="the row of h_n_wide (counted from 0) that holds the backward direction's final state",
        solution=lambda: _backward_final_position()[0],
        explanation="h_n stacks the directions forward first: h_n[0] is the forward final state, h_n[1] the backward one.",
        mistakes=(
            Mistake(
                lambda: 0,
                "Row 0 is the forward direction's final state: h_n lists the directions in the order forward, "
                "backward.",
            ),
        ),
        size=2,  # h_n_wide's rows: one per direction
    ),
    Exercise(
        key="04.backward_time",
        question="the time index of out_wide (counted from 0) whose backward half equals the backward final state",
        solution=lambda: _backward_final_position()[1],
        explanation=(
            "The backward run starts at the last step and ends at step 1, which Python stores in row 0: "
            "h_n[1] = output[0, :, H:]."
        ),
        mistakes=(
            Mistake(
                lambda: 4,
                "That is the last step, output[4] or output[-1], where the backward run starts: its backward half "
                "has read only the last input.",
            ),
            Mistake(
                lambda: 1,
                "Off by one: the equations count steps from 1, but output's rows are indexed from 0.",
            ),
        ),
        size=5,  # out_wide's time steps
    ),
    Exercise(
        key="04.h_n_1",
        question="h_n[1] of the notebook's small bidirectional layer for x = (0, 2)",
        solution=lambda: _h_n()[1],
        explanation=(
            "The backward run starts at step 2: h_2 = tanh(0.25 * 2) = tanh(0.5) = 0.4621. Then step 1: "
            "h_1 = tanh(0.25 * 0 + 0.5 * 0.4621) = tanh(0.2311) = 0.2270. It also sits in output[0, 0, 1]."
        ),
        mistakes=(
            Mistake(
                lambda: _run(X_SHORT[::-1][:1], 0.25, 0.5),
                "That is the backward state after reading x = 2 alone, the backward half of output[-1]. The "
                "backward run starts at the last step and ends at step 1.",
            ),
            Mistake(
                lambda: _h_n()[0],
                "That is h_n[0], the forward final state (w_ih = 0.5, w_hh = -1). h_n[1] uses the _reverse weights.",
            ),
            Mistake(
                lambda: _run(X_SHORT[::-1], 0.25, 0.5, activation=lambda a: a),
                "No tanh: each backward state is tanh of its pre-activation, at every step.",
            ),
            Mistake(
                lambda: float(torch.tanh(torch.tensor(0.5 * _run(X_SHORT[::-1][:1], 0.25, 0.5, lambda a: a)))),
                "You carried the pre-activation a_2 into step 1; the backward run carries the state h_2 = tanh(a_2).",
            ),
        ),
    ),
]
