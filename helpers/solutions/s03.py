"""Exercises of notebooks/03_hidden_size.ipynb."""

import torch
from torch import nn

from helpers.exercises import Exercise, Mistake


def _layer(input_size, hidden_size):
    """A fresh nn.RNN, drawn without moving the student's random number generator."""
    return nn.RNN(input_size, hidden_size)


def _hand_rnn():
    """The notebook's 3 -> 2 layer: row i of each weight and bias belongs to unit i."""
    rnn = _layer(3, 2)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(torch.tensor([[0.5, 0.0, -0.5], [0.0, 0.5, 0.5]]))
        rnn.weight_hh_l0.copy_(torch.tensor([[0.5, -1.0], [1.0, 0.0]]))
        rnn.bias_ih_l0.copy_(torch.tensor([0.5, 0.0]))
        rnn.bias_hh_l0.copy_(torch.tensor([0.0, -0.5]))
    return rnn


X_1 = torch.tensor([[[2.0, 1.0, 3.0]]])  # (seq_len=1, batch=1, input_size=3)


def _h_1(unit=1):
    """Unit `unit` of h_1 for x_1 = (2, 1, 3), from torch."""
    return _hand_rnn()(X_1)[0][0, 0, unit].item()


def _unit_1_by_hand(row=1, bias=1, activation=torch.tanh):
    """tanh(W_ih[row] . x_1 + b_ih[bias] + b_hh[bias]), with a chosen row, biases and activation."""
    rnn = _hand_rnn()
    a = torch.dot(rnn.weight_ih_l0[row], X_1[0, 0]) + rnn.bias_ih_l0[bias] + rnn.bias_hh_l0[bias]
    return activation(a).item()


def _counted():
    """Exercise 3's layer, nn.RNN(10, 20)."""
    return _layer(10, 20)


def _count():
    return sum(p.numel() for p in _counted().parameters())


EXERCISES = [
    Exercise(
        key="03.weight_hh_shape",
        question="the shape of weight_hh_l0 in nn.RNN(input_size=3, hidden_size=5)",
        solution=lambda: tuple(_layer(3, 5).weight_hh_l0.shape),
        explanation=(
            "weight_hh_l0 maps the previous state (5 numbers) to the new one (5 numbers): (hidden_size, "
            "hidden_size) = (5, 5), whatever input_size is."
        ),
        mistakes=(
            Mistake(
                lambda: tuple(_layer(3, 5).weight_ih_l0.shape),
                "That is weight_ih_l0's shape. weight_hh_l0 multiplies the previous state h_{t-1}, not the input.",
            ),
            Mistake(
                lambda: (3, 5),
                "That is weight_ih_l0 in the textbook layout (input_size, hidden_size). weight_hh_l0 reads "
                "h_{t-1}, not x_t, so input_size plays no part in it.",
            ),
            Mistake(lambda: (3, 3), "input_size plays no part in weight_hh_l0: it reads the previous hidden state."),
            Mistake(lambda: (5,), "That is a bias's shape; a weight that maps one vector to another is a matrix."),
        ),
    ),
    Exercise(
        key="03.h_1_unit_1",
        question="unit 1 of h_1 for x_1 = (2, 1, 3) through the notebook's 3 -> 2 layer",
        solution=_h_1,
        explanation=(
            "Unit 1 uses row 1 of each parameter: W_ih[1] . x_1 = 0 * 2 + 0.5 * 1 + 0.5 * 3 = 2, "
            "plus b_ih[1] + b_hh[1] = 0 - 0.5 gives 1.5 (h_0 = 0, so W_hh adds nothing), and tanh(1.5) = 0.9051."
        ),
        mistakes=(
            Mistake(
                lambda: _h_1(unit=0),
                "That is unit 0 (row 0 of the weights and biases). Python counts units from 0, so unit 1 is the "
                "second row.",
            ),
            Mistake(
                lambda: _unit_1_by_hand(activation=lambda a: a),
                "That is the pre-activation: h_1[1] is tanh of it.",
            ),
            Mistake(
                lambda: _unit_1_by_hand(bias=0),
                "Row 1 of W_ih is right, but the biases belong to units too: take entry 1 of b_ih and of b_hh.",
            ),
            Mistake(
                lambda: float(torch.tanh(torch.tensor(2.0))),
                "You left out the biases: b_ih[1] + b_hh[1] is part of the pre-activation.",
            ),
        ),
    ),
    Exercise(
        key="03.parameter_count",
        question="the number of parameters of nn.RNN(10, 20)",
        solution=_count,
        explanation="H(I + H) + 2H with I = 10, H = 20: 20 * 30 + 40 = 640 (W_ih 200, W_hh 400, two biases of 20).",
        parameters_of=_counted,
        mistakes=(
            Mistake(lambda: 20 * (10 + 20), "That counts the two weights only: nn.RNN also has b_ih and b_hh."),
            Mistake(lambda: 20 * (10 + 20) + 20, "nn.RNN has two bias vectors, b_ih and b_hh, of hidden_size each."),
            Mistake(
                lambda: 20 * 10 + 2 * 20,
                "You left out W_hh, the (hidden_size, hidden_size) weight on the previous state.",
            ),
            Mistake(
                lambda: 20 * 10 + 20 + 2 * 20,
                "W_hh maps every unit's previous state to every unit: it has hidden_size^2 entries, not hidden_size.",
            ),
        ),
    ),
]
