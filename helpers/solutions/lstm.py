"""Exercises of notebooks/10_lstm.ipynb."""

from itertools import permutations

import torch
from torch import nn

from helpers.bugs import BUGS
from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake
from helpers.solutions import shapes
from helpers.solutions.terms import gate_cases, term_cases


def _forget_rows():
    """The rows of weight_ih_l0 in nn.LSTM(2, 5) that feed the forget gate, found by probing torch's layer.

    Every parameter 0 except one row of weight_ih_l0, set to 10; x = (1, 1), h_0 = 0, c_0 = 2. Then
    every gate is sigma(0) = 0.5 or tanh(0) = 0, so c_1 = 0.5 * 2 = 1, except in the unit whose
    forget gate that row opens: f = sigma(20) = 1 keeps the whole c_1 = 2. (A row of i or o leaves c_1 = 1;
    a row of g gives 1.5.)
    """
    lstm = nn.LSTM(input_size=2, hidden_size=5)
    H = lstm.hidden_size
    x, h_0, c_0 = torch.ones(1, 1, 2), torch.zeros(1, 1, H), torch.full((1, 1, H), 2.0)  # (seq_len, batch, ...)
    rows = []
    for row in range(4 * H):
        with torch.no_grad():
            for p in lstm.parameters():
                p.zero_()
            lstm.weight_ih_l0[row] = 10.0
            _, (_, c_n) = lstm(x, (h_0, c_0))
        if torch.isclose(c_n, c_0).any():  # one unit kept its whole cell: this row opened its forget gate
            rows.append(row)
    return torch.tensor(rows)


def _projected():
    """Exercise 2's LSTM with proj_size, read with a (batch=5, seq_len=7, 8) input."""
    return nn.LSTM(input_size=8, hidden_size=6, proj_size=3, num_layers=2, bidirectional=True, batch_first=True)


_ASKED = (
    "the shape of {} of nn.LSTM(8, 6, proj_size=3, num_layers=2, bidirectional=True, batch_first=True) on (5, 7, 8)"
)


BIASES = (0.0, 2.0, 1.0, 0.0)  # exercise 3's bias_ih_l0, rows i, f, g, o
C_0 = 2.0


def _c_1():
    """c_1 of a 1-unit LSTM with every weight 0, bias_ih_l0 = BIASES, h_0 = 0, c_0 = 2, from torch's layer."""
    lstm = nn.LSTM(input_size=1, hidden_size=1)
    with torch.no_grad():
        for p in lstm.parameters():
            p.zero_()
        lstm.bias_ih_l0.copy_(torch.tensor(BIASES))
        _, (_, c_n) = lstm(torch.tensor([[[0.7]]]), (torch.zeros(1, 1, 1), torch.full((1, 1, 1), C_0)))
    return c_n.item()


def _gates():
    """i, f, g of exercise 3's step as numbers (every weight 0: each gate sees only its bias; o plays no part in c)."""
    a_i, a_f, a_g, _ = torch.tensor(BIASES)
    return torch.sigmoid(a_i).item(), torch.sigmoid(a_f).item(), torch.tanh(a_g).item()


I_1, F_1, G_1 = _gates()


def lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    """One step of nn.LSTM for a batch: the gates in torch's order i, f, g, o, then c_t and h_t."""
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)  # 4 x (B, H)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    h_t = o * torch.tanh(c_t)
    return h_t, c_t


def _hand_lstm():
    """The notebook's 1 -> 1 LSTM with hand-picked numbers, rows i, f, g, o."""
    lstm = nn.LSTM(input_size=1, hidden_size=1)
    chosen = {
        "weight_ih_l0": [1.0, 0.5, 2.0, 0.5],
        "weight_hh_l0": [0.5, 0.5, -1.0, 0.5],
        "bias_ih_l0": [0.0, 1.0, 0.0, 0.0],
        "bias_hh_l0": [0.0, 0.0, 0.0, 0.0],
    }
    with torch.no_grad():
        for name, values in chosen.items():
            p = getattr(lstm, name)
            p.copy_(torch.tensor(values).reshape(p.shape))
    return lstm


def _random_lstm_step(generator, batch, input_size, hidden_size):
    """Arguments of lstm_step for the given sizes, drawn from `generator`: x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh."""
    sizes = [(batch, input_size), (batch, hidden_size), (batch, hidden_size)]
    sizes += [(4 * hidden_size, input_size), (4 * hidden_size, hidden_size), (4 * hidden_size,), (4 * hidden_size,)]
    return tuple(torch.randn(*size, generator=generator) for size in sizes)


def _lstm_step_cases():
    """The notebook's step 2, then other sizes with random numbers (c_prev never 0, both biases non-zero)."""
    lstm = _hand_lstm()
    x_1, x_2 = torch.tensor([[1.0]]), torch.tensor([[1.0]])  # (B=1, input_size=1)
    weights = tuple(p.detach() for p in (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0))
    h_1, c_1 = lstm_step(x_1, torch.zeros(1, 1), torch.zeros(1, 1), *weights)  # step 1 from h_0 = c_0 = 0
    generator = torch.Generator().manual_seed(10)
    return (
        [
            (
                "the notebook's step 2: x_t = [[1]], h_prev = h_1 = [[0.3781]], c_prev = c_1 = [[0.7048]], its weights",
                (x_2, h_1, c_1, *weights),
            ),
            ("a batch of 2, input_size = 3, hidden_size = 2, random numbers", _random_lstm_step(generator, 2, 3, 2)),
            ("a batch of 3, input_size = 2, hidden_size = 4, random numbers", _random_lstm_step(generator, 3, 2, 4)),
            ("a batch of 1, input_size = hidden_size = 3, random numbers", _random_lstm_step(generator, 1, 3, 3)),
        ]
        + term_cases(
            _random_lstm_step(generator, 3, 2, 4),
            ("x_t", "h_prev", "c_prev", "W_ih", "W_hh", "b_ih", "b_hh"),
            ("W_ih", "W_hh", "b_ih", "b_hh", "c_prev"),
            "a batch of 3, input_size = 2, hidden_size = 4, random numbers",
        )
        + gate_cases(
            _random_lstm_step(generator, 3, 2, 4),
            ("x_t", "h_prev", "c_prev", "W_ih", "W_hh", "b_ih", "b_hh"),
            "LSTM",
            "a batch of 3, input_size = 2, hidden_size = 4, random numbers",
        )
    )


def _lstm_step_with(gates="ifgo", swap_i_f=False, carry=True, squash_c=True, g_activation=torch.tanh, biases=(1, 1)):
    """A typical wrong lstm_step: the gates read in another order, i and f swapped, c_prev left out, ..."""

    def step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
        a = x_t @ W_ih.T + b_ih * biases[0] + h_prev @ W_hh.T + b_hh * biases[1]
        blocks = dict(zip(gates, a.chunk(4, dim=-1)))
        i, f = torch.sigmoid(blocks["i"]), torch.sigmoid(blocks["f"])
        g, o = g_activation(blocks["g"]), torch.sigmoid(blocks["o"])
        if swap_i_f:
            i, f = f, i
        c_t = (f * c_prev if carry else 0) + i * g
        return o * (torch.tanh(c_t) if squash_c else c_t), c_t

    return step


def _lstm_step_variant(kind):
    """A wrong lstm_step written as a student would: the old cell in h, a forget bias, no input gate, ..."""

    def step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
        W = W_hh if kind == "W_hh_as_is" else W_hh.T
        a = x_t @ W_ih.T + b_ih + h_prev @ W + b_hh
        a_i, a_f, a_g, a_o = a.chunk(4) if kind == "chunk_batch" else a.chunk(4, dim=-1)
        i, f = torch.sigmoid(a_i), torch.sigmoid(a_f + (1 if kind == "forget_bias" else 0))
        g, o = torch.tanh(a_g), torch.sigmoid(a_o)
        c_t = f * c_prev + (g if kind == "no_input_gate" else i * g)
        return o * torch.tanh(c_prev if kind == "h_from_c_prev" else c_t), c_t

    return step


EXERCISES = [
    CodeExercise(
        key="10.step",
        question="lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh): one LSTM step for a batch, returning "
        "(h_t, c_t)",
        reference=lstm_step,
        explanation=(
            "One product gives all four pre-activations, (B, 4H); chunk(4) cuts them in torch's order i, f, g, o. "
            "i, f, o go through the sigmoid, the candidate g through tanh. The forget gate scales the old cell, "
            "the input gate the candidate: c_t = f * c_prev + i * g, and h_t = o * tanh(c_t)."
        ),
        cases=_lstm_step_cases,
        returns="(h_t, c_t)",
        mistakes=(
            *(
                CodeMistake(
                    f"the gates read in the order {', '.join(order)}: torch stacks the rows of W_ih, W_hh and the "
                    "biases as i, f, g, o",
                    "split the 4H pre-activations as i, f, g, o = a.chunk(4, dim=-1)",
                    _lstm_step_with(gates="".join(order)),
                )
                for order in permutations("ifgo")
                # ifog is the catalogue's; f, i, g, o computes what i and f swapped in the cell update does
                if "".join(order) not in ("ifgo", "ifog", "figo")
            ),
            CodeMistake(BUGS["h_from_c_prev"].title, BUGS["h_from_c_prev"].fix, _lstm_step_variant("h_from_c_prev")),
            CodeMistake(
                BUGS["forget_bias_added"].title, BUGS["forget_bias_added"].fix, _lstm_step_variant("forget_bias")
            ),
            CodeMistake(
                "no input gate: c_t = f * c_prev + g, so the candidate is written in full at every step",
                "gate the candidate: c_t = f * c_prev + i * g",
                _lstm_step_variant("no_input_gate"),
            ),
            CodeMistake(
                BUGS["W_hh_not_transposed"].title, BUGS["W_hh_not_transposed"].fix, _lstm_step_variant("W_hh_as_is")
            ),
            CodeMistake(
                "the pre-activations split along the batch: .chunk(4) cuts dimension 0, the batch, not the 4H columns",
                "split the last dimension: a.chunk(4, dim=-1) (or dim=1) gives the i, f, g, o blocks",
                _lstm_step_variant("chunk_batch"),
            ),
            CodeMistake(
                BUGS["lstm_gates_ifog"].title,
                BUGS["lstm_gates_ifog"].fix,
                _lstm_step_with(gates="ifog"),
            ),
            CodeMistake(BUGS["lstm_i_f_swapped"].title, BUGS["lstm_i_f_swapped"].fix, _lstm_step_with(swap_i_f=True)),
            CodeMistake(BUGS["h_is_o_times_c"].title, BUGS["h_is_o_times_c"].fix, _lstm_step_with(squash_c=False)),
            CodeMistake(
                "c_prev left out: the cell keeps nothing of its past, c_t = i * g",
                "c_t = f * c_prev + i * g: the forget gate decides how much of the old cell stays",
                _lstm_step_with(carry=False),
            ),
            CodeMistake(
                "the candidate g through the sigmoid: it is the one gate that uses tanh",
                "g = torch.tanh(a_g), so that it can write negative values into the cell; i, f and o use the sigmoid",
                _lstm_step_with(g_activation=torch.sigmoid),
            ),
            CodeMistake(BUGS["bias_ih_missing"].title, BUGS["bias_ih_missing"].fix, _lstm_step_with(biases=(0, 1))),
            CodeMistake(BUGS["bias_hh_missing"].title, BUGS["bias_hh_missing"].fix, _lstm_step_with(biases=(1, 0))),
            CodeMistake(
                "(c_t, h_t) returned in the wrong order",
                "return h_t, c_t: h first, as nn.LSTMCell does",
                lambda *args: lstm_step(*args)[::-1],
            ),
        ),
    ),
    Exercise(
        key="10.forget_rows",
        question="the rows of weight_ih_l0 that hold the forget gate's W_if, for nn.LSTM(input_size=2, hidden_size=5)",
        solution=_forget_rows,
        size=20,  # weight_ih_l0's rows: 4 * hidden_size
        explanation=(
            "torch stacks the gates in the order i, f, g, o, each a block of hidden_size = 5 rows: i in rows 0:5, "
            "f in rows 5:10, i.e. rows 5, 6, 7, 8, 9 (weight_ih_l0[5:10], or weight_ih_l0.chunk(4)[1])."
        ),
        mistakes=(
            Mistake(
                lambda: torch.arange(0, 5),
                "Rows 0:H hold the input gate i. Many explanations start with the forget gate, but the order in "
                "which torch stacks the four blocks is another one: look it up in the notebook's table.",
            ),
            Mistake(
                lambda: torch.arange(10, 15),
                "Rows 2H:3H hold torch's candidate g. Some other libraries put the forget gate there (TensorFlow 1's "
                "i, g, f, o; ONNX's i, o, f, g), but torch stores the blocks in its own order.",
            ),
            Mistake(
                lambda: torch.arange(0, 20),
                "That is the whole weight, all four gates stacked (4H rows). The forget gate owns one block of "
                "hidden_size rows.",
            ),
            Mistake(
                lambda: torch.arange(6, 11),
                "One row too far along: torch counts rows from 0, not from 1.",
            ),
        ),
    ),
    shapes.shape_exercise(
        "10.output_shape",
        _ASKED.format("output"),
        _projected,
        (5, 7, 8),
        "output",
        explanation=(
            "output holds the top layer's h at every step, both directions side by side, and with proj_size "
            "h has proj_size = 3 values: batch first like the input, (batch=5, seq_len=7, 2 * 3 = 6)."
        ),
        mistakes=(shapes.UNPROJECTED, shapes.LAYOUT, shapes.ONE_DIRECTION),
    ),
    shapes.shape_exercise(
        "10.h_n_shape",
        _ASKED.format("h_n"),
        _projected,
        (5, 7, 8),
        "h_n",
        explanation=(
            "h_n holds every layer's and direction's final h, never batch first, and h has proj_size values: "
            "(num_layers * 2 = 4, batch=5, proj_size=3)."
        ),
        mistakes=(shapes.UNPROJECTED, shapes.STATE_BATCH_FIRST, shapes.ROW_PER_LAYER),
    ),
    shapes.shape_exercise(
        "10.c_n_shape",
        _ASKED.format("c_n"),
        _projected,
        (5, 7, 8),
        "c_n",
        explanation=(
            "c_n holds every layer's and direction's final cell state, never batch first, and the cell is never "
            "projected: (num_layers * 2 = 4, batch=5, hidden_size=6)."
        ),
        mistakes=(shapes.C_PROJECTED, shapes.STATE_BATCH_FIRST, shapes.ROW_PER_LAYER, shapes.SIDE_BY_SIDE_IN_EACH_ROW),
    ),
    Exercise(
        key="10.c_1",
        question="c_1 of a 1-unit LSTM with every weight 0, bias_ih_l0 = (0, 2, 1, 0), bias_hh_l0 = 0, "
        "h_0 = 0, c_0 = 2",
        solution=_c_1,
        explanation=(
            f"Every weight is 0, so each gate sees only its bias and x_1 does not matter: "
            f"i = sigma(0) = {I_1:.4f}, f = sigma(2) = {F_1:.4f}, g = tanh(1) = {G_1:.4f}. "
            f"c_1 = f c_0 + i g = {F_1:.4f} * 2 + {I_1:.4f} * {G_1:.4f} = {F_1 * C_0:.4f} + {I_1 * G_1:.4f} "
            f"= {F_1 * C_0 + I_1 * G_1:.4f}."
        ),
        mistakes=(
            Mistake(
                lambda: I_1 * G_1,
                "That is the new content i_1 g_1 alone: the cell also keeps f_1 * c_0, and c_0 = 2 here, not 0.",
            ),
            Mistake(
                lambda: torch.tanh(torch.tensor(F_1 * C_0 + I_1 * G_1)).item(),
                "That is tanh(c_1): the cell state is not squashed. tanh(c) only appears inside h = o * tanh(c).",
            ),
            Mistake(
                lambda: I_1 * C_0 + F_1 * G_1,
                "i and f swapped: the biases are listed in torch's order, which is not forget first.",
            ),
            Mistake(
                lambda: F_1 * C_0,
                "That is only the kept part f_1 * c_0. The candidate's bias is 1, so g_1 is not 0 and i_1 g_1 "
                "adds to the cell.",
            ),
        ),
    ),
]
