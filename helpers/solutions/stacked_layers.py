"""Exercises of notebooks/05_stacked_layers.ipynb."""

import torch
from torch import nn

from helpers.exercise_types import CodeExercise, Exercise, Mistake
from helpers.solutions import shapes


def _three_layers():
    """Exercise 1's stack, read with a (seq_len=10, batch=4, input_size=5) input."""
    return nn.RNN(input_size=5, hidden_size=7, num_layers=3)


def _layer_1_row():
    """The row of a 4-layer h_n that equals layer 1's last state, computed by a 2-layer stack of the same weights."""
    torch.manual_seed(2)
    four_layers = nn.RNN(input_size=2, hidden_size=3, num_layers=4)
    x = torch.randn(5, 1, 2)  # (seq_len, batch, input_size)
    two_layers = nn.RNN(input_size=2, hidden_size=3, num_layers=2)  # layers 0 and 1 of four_layers
    two_layers.load_state_dict({name: p for name, p in four_layers.state_dict().items() if name[-1] in "01"})
    layer_1_final = two_layers(x)[1][-1]  # (batch, hidden_size): the top of the 2-layer stack is layer 1
    h_n = four_layers(x)[1]  # (num_layers=4, batch, hidden_size)
    (row,) = [i for i in range(h_n.shape[0]) if torch.allclose(h_n[i], layer_1_final, atol=1e-6)]
    return row


def _hand_rnn():
    """The notebook's 2-layer 1 -> 1 stack: layer 0 w_ih = 0.5, w_hh = -1; layer 1 w_ih = 1, w_hh = -0.5."""
    rnn = nn.RNN(input_size=1, hidden_size=1, num_layers=2, bias=False)
    with torch.no_grad():
        rnn.weight_ih_l0.fill_(0.5)
        rnn.weight_hh_l0.fill_(-1.0)
        rnn.weight_ih_l1.fill_(1.0)
        rnn.weight_hh_l1.fill_(-0.5)
    return rnn


def _states():
    """h^(0)_t and h^(1)_t for x = (1, 2, 3, 4), t = 1 ... 4, from torch: two lists of four numbers."""
    rnn = _hand_rnn()
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(4, 1, 1)  # (seq_len, batch, input_size)
    layer_0 = nn.RNN(1, 1, bias=False)  # layer 0 alone: its output is every h^(0)_t
    with torch.no_grad():
        layer_0.weight_ih_l0.copy_(rnn.weight_ih_l0)
        layer_0.weight_hh_l0.copy_(rnn.weight_hh_l0)
    return layer_0(x)[0].flatten().tolist(), rnn(x)[0].flatten().tolist()


def _top_step(reads, w_hh=-0.5, activation=torch.tanh):
    """Layer 1's step 4 from h^(1)_3, reading `reads` in place of h^(0)_4."""
    h_1_3 = _states()[1][2]
    return float(activation(torch.tensor(reads + w_hh * h_1_3)))


with torch.random.fork_rng(devices=[]):  # nn.RNN draws weights; importing helpers leaves the student's draws alone
    H_0, H_1 = _states()  # h^(0)_t and h^(1)_t, t = 1 ... 4, for the explanation


def my_stack(module, input, hx=None):
    """A stacked one-direction nn.RNN (tanh), time first: layer k reads layer k - 1's states."""
    L, B, H = module.num_layers, input.shape[1], module.hidden_size
    h_0 = torch.zeros(L, B, H) if hx is None else hx  # row k: layer k's initial state
    layer_input, finals = input, []
    for k in range(L):
        W_ih, W_hh = getattr(module, f"weight_ih_l{k}"), getattr(module, f"weight_hh_l{k}")
        b_ih, b_hh = getattr(module, f"bias_ih_l{k}"), getattr(module, f"bias_hh_l{k}")
        h, states = h_0[k], []
        for x_t in layer_input:  # layer 0 reads x_t, layer k > 0 the state below at the same step
            h = torch.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
            states.append(h)
        layer_input = torch.stack(states)  # (T, B, H): what layer k + 1 reads
        finals.append(h)
    return layer_input, torch.stack(finals)  # the top layer's states, every layer's last state


def _two_layers():
    """A seeded 3 -> 4 RNN with two layers and a (seq_len=5, batch=2, input_size=3) input, for 05.stack."""
    torch.manual_seed(0)
    stack = nn.RNN(input_size=3, hidden_size=4, num_layers=2)
    return stack, torch.randn(5, 2, 3), None


EXERCISES = [
    CodeExercise(
        key="05.stack",
        question="my_stack(module, input, hx=None): a stacked RNN by hand, layer by layer, returning (output, h_n)",
        reference=my_stack,
        explanation=(
            "Layer 0 reads the input; layer k > 0 reads the states layer k - 1 computed, step by step, with its own "
            "weights (_l{k}) and its own initial state, row k of hx. output is the top layer's states; h_n stacks "
            "every layer's last state, layer 0 first."
        ),
        layer=_two_layers,
    ),
    Exercise(
        key="05.weight_ih_l2_shape",
        question="the shape of weight_ih_l2 in nn.RNN(input_size=5, hidden_size=7, num_layers=3)",
        solution=lambda: tuple(_three_layers().weight_ih_l2.shape),
        explanation=(
            "Layer 2 reads layer 1's state, a vector of hidden_size = 7, so weight_ih_l2 is (hidden_size, "
            "hidden_size) = (7, 7). Only weight_ih_l0 has input_size columns."
        ),
        mistakes=(
            Mistake(
                lambda: (7, 5),
                "That is weight_ih_l0's shape. Layer 2 does not read the input: it reads the layer below it.",
            ),
            Mistake(
                lambda: (5, 7),
                "That is weight_ih_l0 in the textbook layout (input_size, hidden_size). torch stores (out, in), "
                "and layer 2 does not read the input at all.",
            ),
            Mistake(lambda: (3, 7, 7), "weight_ih_l2 is one layer's weight: the _l2 in its name picks the layer."),
        ),
    ),
    shapes.shape_exercise(
        "05.h_n_shape",
        "the shape of h_n of nn.RNN(5, 7, num_layers=3) for input (seq_len=10, batch=4, input_size=5)",
        _three_layers,
        (10, 4, 5),
        "h_n",
        explanation="h_n holds every layer's state after the last step: (num_layers=3, batch=4, hidden_size=7).",
        mistakes=(
            shapes.STATE_IS_OUTPUT,
            shapes.ONE_ROW,
            Mistake(
                lambda: (3, 4, 5),
                "Each layer's state has hidden_size entries; input_size is the width of the input only.",
            ),
            shapes.STATE_BATCH_FIRST,
        ),
    ),
    Exercise(
        key="05.layer_1_row",
        question="the row of a 4-layer RNN's h_n (counted from 0) that holds layer 1's final state",
        solution=_layer_1_row,
        explanation="h_n lists the layers bottom first, numbered like weight_ih_l0, weight_ih_l1, ...: layer 1 is h_n[1].",
        mistakes=(
            Mistake(
                lambda: 0,
                "Row 0 is layer 0, the bottom layer. torch numbers layers from 0, as in the names _l0, _l1, ...",
            ),
            Mistake(
                lambda: 2,
                "You counted from the top of the stack; h_n lists the layers bottom first, as hx does.",
            ),
            Mistake(
                lambda: 3,
                "That is the top layer's row, h_n[3] or h_n[-1], the one equal to output[-1]; h_n lists the layers "
                "bottom first.",
            ),
        ),
        size=4,  # h_n's rows: one per layer
    ),
    Exercise(
        key="05.h_1_4",
        question="h^(1)_4, the top layer's state after x_4 = 4, for the notebook's 2-layer rnn and x = (1, 2, 3, 4)",
        solution=lambda: _states()[1][3],
        explanation=(
            f"Layer 0 first: h^(0)_4 = tanh(0.5 * 4 - {H_0[2]:.4f}) = {H_0[3]:.4f}. Then layer 1 reads it: "
            f"h^(1)_4 = tanh({H_0[3]:.4f} - 0.5 * {H_1[2]:.4f}) = tanh({H_0[3] - 0.5 * H_1[2]:.4f}) = {H_1[3]:.4f}. "
            "It is output[-1] and h_n[1]."
        ),
        mistakes=(
            Mistake(
                lambda: _states()[0][3],
                "That is layer 0's state h^(0)_4 (h_n[0]). Layer 1 reads it and adds its own memory.",
            ),
            Mistake(
                lambda: _top_step(reads=4.0),
                "Layer 1 does not read x_4: it reads the state layer 0 has just computed at the same step.",
            ),
            Mistake(
                lambda: _top_step(reads=_states()[0][2]),
                "Off by one step: at step 4 layer 1 reads layer 0's new state h^(0)_4, not h^(0)_3.",
            ),
            Mistake(
                lambda: _top_step(reads=_states()[0][3], w_hh=0.5),
                "Layer 1's w_hh is -0.5: half of its previous state is subtracted, not added.",
            ),
            Mistake(
                lambda: _top_step(reads=_states()[0][3], activation=lambda a: a),
                "That is the pre-activation: h^(1)_4 is tanh of it.",
            ),
        ),
    ),
]
