"""Exercises of notebooks/02_feature_vectors.ipynb."""

import copy

import torch
from torch import nn

from helpers.exercise_types import CodeExercise, Exercise, Mistake

X_1 = (4.0, -2.0, -3.0)  # the exercise's first step: (x_{1,1}, x_{1,2}, x_{1,3})


def _hand_rnn():
    """The notebook's layer: w_ih = (0.5, -0.25, 1), w_hh = 0.5, b_ih = 0.25, b_hh = -0.5."""
    rnn = nn.RNN(input_size=3, hidden_size=1)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(torch.tensor([[0.5, -0.25, 1.0]]))  # (hidden_size=1, input_size=3)
        rnn.weight_hh_l0.fill_(0.5)
        rnn.bias_ih_l0.fill_(0.25)
        rnn.bias_hh_l0.fill_(-0.5)
    return rnn


def _a_1(w_ih=(0.5, -0.25, 1.0), b_ih=0.25, b_hh=-0.5):
    """a_1 = x_1 . w_ih + b_ih + b_hh (h_0 = 0), computed the notebook's way."""
    return float(torch.dot(torch.tensor(X_1), torch.tensor(w_ih))) + b_ih + b_hh


def _pre_activation():
    """a_1 from the layer's own parameters: x_1 W_ih^T + b_ih + b_hh, with h_0 = 0."""
    rnn = _hand_rnn()
    x_1 = torch.tensor([X_1])  # (batch=1, input_size=3)
    return (x_1 @ rnn.weight_ih_l0.T + rnn.bias_ih_l0 + rnn.bias_hh_l0).item()


def _blind_entry(feature=1):
    """The (row, column) of weight_ih_l0 whose zero makes the output ignore feature 2 (index 1)."""
    rnn = _hand_rnn()
    x = torch.ones(4, 1, 3)  # (seq_len, batch, input_size)
    x_changed = x.clone()
    x_changed[:, 0, feature] = torch.tensor([-5.0, 10.0, 0.0, 3.0])
    for row in range(rnn.hidden_size):
        for column in range(rnn.input_size):
            blind = copy.deepcopy(rnn)
            with torch.no_grad():
                blind.weight_ih_l0[row, column] = 0.0
            if torch.equal(blind(x)[0], blind(x_changed)[0]):
                return (row, column)
    raise AssertionError("no single entry of weight_ih_l0 hides the feature")


def _notebook_layer():
    """The notebook's layer and its four steps of three features, with no initial state given."""
    x = torch.tensor([[2.0, 4.0, 1.0], [1.0, 0.0, -1.0], [2.0, 0.0, 1.0], [0.0, 4.0, 1.0]]).unsqueeze(1)
    return _hand_rnn(), x, None  # x: (seq_len=4, batch=1, input_size=3)


def my_rnn(module, input, hx=None):
    """nn.RNN's forward pass for one layer and one direction, as a loop over time (seq_len, batch, features)."""
    W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0  # (hidden_size, input_size), (hidden_size, hidden_size)
    b_ih, b_hh = module.bias_ih_l0, module.bias_hh_l0  # (hidden_size,) each
    h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]  # h_0: (batch, hidden_size)
    hidden_states = []
    for x_t in input:  # x_t: (batch, input_size)
        h_prev = h
        h = torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)  # (batch, hidden_size)
        hidden_states.append(h)
    output = torch.stack(hidden_states)  # (seq_len, batch, hidden_size)
    return output, h.unsqueeze(0)  # h_n: (num_layers=1, batch, hidden_size)


def _weight_ih_shape():
    return tuple(nn.RNN(input_size=5, hidden_size=1).weight_ih_l0.shape)


EXERCISES = [
    CodeExercise(
        key="02.loop",
        question="my_rnn(module, input, hx=None): the notebook's layer as a loop over time, returning (output, h_n)",
        reference=my_rnn,
        explanation=(
            "h starts at hx[0] (zeros when hx is None), each step computes tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T "
            "+ b_hh) for the whole batch, output stacks every step's state and h_n is the last one with a layer "
            "dimension in front."
        ),
        layer=_notebook_layer,
    ),
    Exercise(
        key="02.a_1",
        question="the pre-activation a_1 for x_1 = (4, -2, -3), w_ih = (0.5, -0.25, 1), b_ih = 0.25, b_hh = -0.5",
        solution=_pre_activation,
        explanation=(
            "x_1 . w_ih = 4 * 0.5 + (-2) * (-0.25) + (-3) * 1 = 2 + 0.5 - 3 = -0.5; with h_0 = 0 the recurrent "
            "term is 0, so a_1 = -0.5 + 0.25 - 0.5 = -0.75."
        ),
        mistakes=(
            Mistake(
                lambda: float(torch.tanh(torch.tensor(_a_1()))),
                "That is h_1 = tanh(a_1). The pre-activation is what goes into tanh.",
            ),
            Mistake(lambda: _a_1(b_ih=0.0, b_hh=0.0), "That is the dot product alone: a_1 also holds the biases."),
            Mistake(lambda: _a_1(b_hh=0.0), "You added b_ih only: both biases go into a_1."),
            Mistake(lambda: _a_1(b_ih=0.0), "You added b_hh only: both biases go into a_1."),
            Mistake(
                lambda: _a_1(w_ih=(0.5, 0.25, 1.0)),
                "Check the sign of the middle product: x_{1,2} = -2 times w_ih,2 = -0.25 is a negative times a "
                "negative.",
            ),
        ),
    ),
    Exercise(
        key="02.blind_entry",
        question="the (row, column) of weight_ih_l0 that must be 0 for the layer to ignore feature 2",
        solution=_blind_entry,
        size=(1, 3),  # weight_ih_l0's rows and columns
        explanation=(
            "weight_ih_l0 is (hidden_size=1, input_size=3): one row for the one hidden unit, one column per "
            "feature. Feature 2 is column 1 (Python counts from 0), so the entry is (0, 1)."
        ),
        mistakes=(
            Mistake(
                lambda: _blind_entry()[::-1],
                "Row and column are swapped: torch stores weight_ih_l0 as (hidden_size, input_size), one row per "
                "hidden unit and one column per feature.",
            ),
            Mistake(
                lambda: (0, 2),
                "Column 2 is feature 3: the equations count features from 1, Python counts columns from 0.",
            ),
            Mistake(
                lambda: (1, 2),
                "Both indices count from 1 here; Python counts rows and columns from 0, and this layer has only "
                "hidden_size = 1 row.",
            ),
        ),
    ),
    Exercise(
        key="02.weight_ih_shape",
        question="the shape of weight_ih_l0 in nn.RNN(input_size=5, hidden_size=1)",
        solution=_weight_ih_shape,
        explanation="weight_ih_l0 is (hidden_size, input_size) = (1, 5): one row per hidden unit, one column per feature.",
        mistakes=(
            Mistake(
                lambda: _weight_ih_shape()[::-1],
                "That is the textbook layout (input_size, hidden_size); torch stores a weight as (out, in).",
            ),
            Mistake(
                lambda: (5,),
                "With one hidden unit the weight is still a matrix: weight_ih_l0 keeps both of its dimensions.",
            ),
            Mistake(
                lambda: (1, 1),
                "That is weight_hh_l0's shape, which does not depend on input_size; weight_ih_l0 has one column "
                "per input feature.",
            ),
        ),
    ),
]
