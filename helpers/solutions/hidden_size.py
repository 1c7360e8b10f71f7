"""Exercises of notebooks/03_hidden_size.ipynb."""

import torch
from torch import nn

from helpers.bugs import BUGS
from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake
from helpers.solutions.terms import term_cases


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


def rnn_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    """One step of nn.RNN for a batch: x_t (batch, input_size), h_prev (batch, hidden_size) -> h_t."""
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)


def _random_step(generator, batch, input_size, hidden_size):
    """Arguments of rnn_step for the given sizes, drawn from `generator`: x_t, h_prev, W_ih, W_hh, b_ih, b_hh."""
    shapes = [(batch, input_size), (batch, hidden_size), (hidden_size, input_size), (hidden_size, hidden_size)]
    shapes += [(hidden_size,), (hidden_size,)]
    return tuple(torch.randn(*shape, generator=generator) for shape in shapes)


def _step_cases():
    """The notebook's step 2, then other sizes: a batch, input_size = hidden_size (square W_ih), more units; then
    each term alone."""
    rnn = _hand_rnn()
    W_ih, W_hh = rnn.weight_ih_l0.detach(), rnn.weight_hh_l0.detach()  # (2, 3), (2, 2)
    b_ih, b_hh = rnn.bias_ih_l0.detach(), rnn.bias_hh_l0.detach()  # (2,), (2,)
    x_2, h_1 = torch.tensor([[0.0, 1.0, 1.0]]), torch.tanh(torch.tensor([[1.0, 0.5]]))  # (1, 3), (1, 2)
    generator = torch.Generator().manual_seed(3)
    return [
        (
            "the notebook's step 2: x_t = [[0, 1, 1]], h_prev = h_1 = [[0.7616, 0.4621]], its W_ih, W_hh, b_ih, b_hh",
            (x_2, h_1, W_ih, W_hh, b_ih, b_hh),
        ),
        ("a batch of 4, input_size = 3, hidden_size = 2, random numbers", _random_step(generator, 4, 3, 2)),
        (
            "a batch of 2, input_size = hidden_size = 3 (W_ih is square), random numbers",
            _random_step(generator, 2, 3, 3),
        ),
        ("a batch of 3, input_size = 2, hidden_size = 5, random numbers", _random_step(generator, 3, 2, 5)),
    ] + term_cases(
        _random_step(generator, 3, 2, 4),
        ("x_t", "h_prev", "W_ih", "W_hh", "b_ih", "b_hh"),
        ("W_ih", "W_hh", "b_ih", "b_hh"),
        "a batch of 3, input_size = 2, hidden_size = 4, random numbers",
    )


def _counted():
    """Exercise 3's layer, nn.RNN(10, 20)."""
    return _layer(10, 20)


def _count():
    return sum(p.numel() for p in _counted().parameters())


EXERCISES = [
    CodeExercise(
        key="03.step_matrices",
        question="one step for a batch: h_t = tanh(x_t W_ih^T + b_ih + h_prev W_hh^T + b_hh), x_t (B, I), h_prev (B, H)",
        reference=rnn_step,
        explanation=(
            "Each row of x_t and h_prev is one sequence; W_ih.T (I, H) and W_hh.T (H, H) turn them into (B, H), "
            "and the biases (H,) are added to every row. tanh comes last, once, on the sum."
        ),
        cases=_step_cases,
        returns="h_t",
        mistakes=(
            CodeMistake(
                BUGS["b_ih_for_both"].title,
                BUGS["b_ih_for_both"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_ih),
            ),
            CodeMistake(
                BUGS["W_ih_not_transposed"].title,
                BUGS["W_ih_not_transposed"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih + b_ih + h @ W_hh.T + b_hh),
            ),
            CodeMistake(
                "neither weight transposed: x_t @ W_ih and h_prev @ W_hh",
                "torch stores both weights as (out, in): use x_t @ W_ih.T and h_prev @ W_hh.T",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih + b_ih + h @ W_hh + b_hh),
            ),
            CodeMistake(
                BUGS["W_hh_not_transposed"].title,
                BUGS["W_hh_not_transposed"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + b_ih + h @ W_hh + b_hh),
            ),
            CodeMistake(
                BUGS["weights_swapped"].title,
                BUGS["weights_swapped"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_hh.T + b_ih + h @ W_ih.T + b_hh),
            ),
            CodeMistake(
                BUGS["bias_ih_missing"].title,
                BUGS["bias_ih_missing"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + h @ W_hh.T + b_hh),
            ),
            CodeMistake(
                BUGS["bias_hh_missing"].title,
                BUGS["bias_hh_missing"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + b_ih + h @ W_hh.T),
            ),
            CodeMistake(
                BUGS["biases_missing"].title,
                BUGS["bias_ih_missing"].fix,  # the layer's fix names module.bias_ih_l0, which a step does not see
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + h @ W_hh.T),
            ),
            CodeMistake(
                BUGS["no_nonlinearity"].title,
                BUGS["no_nonlinearity"].fix,
                lambda x, h, W_ih, W_hh, b_ih, b_hh: x @ W_ih.T + b_ih + h @ W_hh.T + b_hh,
            ),
            CodeMistake(
                "the column-vector form W_ih @ x_t.T: its result holds one unit per row, not one sequence per row",
                "keep one sequence per row, as torch does: x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(W_ih @ x.T + b_ih + W_hh @ h.T + b_hh),
            ),
            CodeMistake(
                "tanh applied to each part separately",
                "add all four terms first, then apply tanh once to the sum",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + b_ih) + torch.tanh(h @ W_hh.T + b_hh),
            ),
            CodeMistake(
                "h_prev left out: the step has no memory of the units' past",
                "add h_prev @ W_hh.T inside the tanh",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + b_ih + b_hh),
            ),
            CodeMistake(
                "the biases added after the tanh: tanh(x_t W_ih^T + h_prev W_hh^T) + b_ih + b_hh",
                "the biases belong inside the tanh, with the two products: tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + h @ W_hh.T) + b_ih + b_hh,
            ),
            CodeMistake(
                "tanh around the input part only: the hidden part h_prev W_hh^T + b_hh is added outside the tanh",
                "put every term inside one tanh: tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: torch.tanh(x @ W_ih.T + b_ih) + h @ W_hh.T + b_hh,
            ),
            CodeMistake(
                "tanh around the hidden part only: the input part x_t W_ih^T + b_ih is added outside the tanh",
                "put every term inside one tanh: tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)",
                lambda x, h, W_ih, W_hh, b_ih, b_hh: x @ W_ih.T + b_ih + torch.tanh(h @ W_hh.T + b_hh),
            ),
        ),
    ),
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
