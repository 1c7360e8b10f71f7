"""Exercises of notebooks/01_scalar_rnn.ipynb."""

import torch
from torch import nn

from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake
from helpers.solutions import shapes
from helpers.solutions.terms import term_cases


def hand_rnn():
    """The notebook's layer: w_ih = 0.5, w_hh = -1, no bias."""
    rnn = nn.RNN(1, 1, bias=False)
    with torch.no_grad():
        rnn.weight_ih_l0.fill_(0.5)
        rnn.weight_hh_l0.fill_(-1.0)
    return rnn


def _h(inputs, w_hh=-1.0, activation=torch.tanh):
    """h_T for a 1 -> 1 layer without bias, computed the notebook's way."""
    h = torch.tensor(0.0)
    for x in inputs:
        h = activation(torch.tensor(0.5 * x) + w_hh * h)
    return h.item()


def rnn_step(x_t, h_prev, w_ih, w_hh):
    """One step of a 1 -> 1 RNN without bias."""
    return torch.tanh(w_ih * x_t + w_hh * h_prev)


def _step_cases():
    """The notebook's third step, other numbers, several values at once (any shape works), then each term alone."""
    numbers = [(3.0, 0.4914, 0.5, -1.0), (-2.0, 0.3, 1.5, 0.8), (0.0, -0.9, 0.5, 1.2)]
    cases = [
        (f"x_t = {x}, h_prev = {h}, w_ih = {wi}, w_hh = {wh}", tuple(map(torch.tensor, (x, h, wi, wh))))
        for x, h, wi, wh in numbers
    ]
    generator = torch.Generator().manual_seed(1)
    x_t, h_prev = torch.randn(4, generator=generator), torch.randn(4, generator=generator)
    at_once = (x_t, h_prev, torch.tensor(0.5), torch.tensor(-1.0))
    cases.append(("four steps' x_t and h_prev at once, w_ih = 0.5, w_hh = -1", at_once))
    return cases + term_cases(
        at_once, ("x_t", "h_prev", "w_ih", "w_hh"), ("w_ih", "w_hh"), "four steps' x_t and h_prev at once"
    )


EXERCISES = [
    CodeExercise(
        key="01.step",
        question="one step: h_t = tanh(w_ih * x_t + w_hh * h_prev), from tensors x_t, h_prev, w_ih, w_hh",
        reference=rnn_step,
        explanation="Both terms are added first, then tanh squashes the sum: the same equation at every step.",
        cases=_step_cases,
        returns="h_t",
        mistakes=(
            CodeMistake(
                "sigmoid where this step uses tanh: sigmoid squashes into (0, 1), tanh into (-1, 1)",
                "h_t = torch.tanh(w_ih * x_t + w_hh * h_prev)",
                lambda x, h, wi, wh: torch.sigmoid(wi * x + wh * h),
            ),
            CodeMistake(
                "ReLU where this step uses tanh (nn.RNN uses ReLU only when built with nonlinearity='relu')",
                "h_t = torch.tanh(w_ih * x_t + w_hh * h_prev)",
                lambda x, h, wi, wh: torch.relu(wi * x + wh * h),
            ),
            CodeMistake(
                "the recurrent term subtracted: w_ih * x_t - w_hh * h_prev",
                "add both terms: w_ih * x_t + w_hh * h_prev (a negative weight already carries its own sign)",
                lambda x, h, wi, wh: torch.tanh(wi * x - wh * h),
            ),
            CodeMistake(
                "no tanh: that is the pre-activation a_t",
                "return torch.tanh(...) of the sum",
                lambda x, h, wi, wh: wi * x + wh * h,
            ),
            CodeMistake(
                "the weights swapped: w_ih multiplies h_prev and w_hh multiplies x_t",
                "w_ih (input to hidden) goes with x_t, w_hh (hidden to hidden) with h_prev",
                lambda x, h, wi, wh: torch.tanh(wi * h + wh * x),
            ),
            CodeMistake(
                "h_prev left out: the step has no memory",
                "add w_hh * h_prev inside the tanh",
                lambda x, h, wi, wh: torch.tanh(wi * x),
            ),
            CodeMistake(
                "tanh applied to each term separately",
                "add the two terms first, then apply tanh once: tanh(w_ih * x_t + w_hh * h_prev)",
                lambda x, h, wi, wh: torch.tanh(wi * x) + torch.tanh(wh * h),
            ),
            CodeMistake(
                "the two terms multiplied instead of added: tanh(w_ih * x_t * w_hh * h_prev)",
                "the terms add up: tanh(w_ih * x_t + w_hh * h_prev)",
                lambda x, h, wi, wh: torch.tanh(wi * x * wh * h),
            ),
            CodeMistake(
                "tanh around one term only: the other term is added outside the tanh",
                "put both terms inside one tanh: tanh(w_ih * x_t + w_hh * h_prev)",
                lambda x, h, wi, wh: torch.tanh(wi * x) + wh * h,
            ),
            CodeMistake(
                "tanh around one term only: the other term is added outside the tanh",
                "put both terms inside one tanh: tanh(w_ih * x_t + w_hh * h_prev)",
                lambda x, h, wi, wh: wi * x + torch.tanh(wh * h),
            ),
        ),
    ),
    Exercise(
        key="01.h_4",
        question="h_4 for x = (1, 2, 3, 4), w_ih = 0.5, w_hh = -1, h_0 = 0",
        solution=lambda: hand_rnn()(torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(4, 1, 1))[1].item(),
        explanation="a_4 = 0.5 * 4 - h_3 = 2 - 0.7652 = 1.2348, and h_4 = tanh(1.2348) = 0.8440.",
        mistakes=(
            Mistake(lambda: 2.0 - _h([1, 2, 3]), "That is the pre-activation a_4: apply tanh to it."),
            Mistake(lambda: _h([4, 3, 2, 1]), "You ran the sequence backwards: x_1 = 1 comes first."),
            Mistake(
                lambda: float(torch.tanh(torch.tensor(2.0 + _h([1, 2, 3])))),
                "w_hh is -1, so the previous state is subtracted, not added.",
            ),
        ),
    ),
    Exercise(
        key="01.w_hh_no_memory",
        question="the w_hh that makes h_t depend on x_t alone",
        solution=lambda: 0.0,
        explanation="With w_hh = 0 the term w_hh * h_{t-1} vanishes: h_t = tanh(0.5 x_t), no memory.",
        mistakes=(
            Mistake(lambda: 1.0, "w_hh = 1 passes the whole previous state on: that is the most memory, not none."),
            Mistake(lambda: -1.0, "w_hh = -1 still passes the previous state on, with its sign flipped."),
        ),
    ),
    shapes.shape_exercise(
        "01.output_shape",
        "the shape of output for input shaped (seq_len=10, batch=1, input_size=1)",
        hand_rnn,
        (10, 1, 1),
        "output",
        explanation="output holds the state at every step: (seq_len=10, batch=1, hidden_size=1).",
        mistakes=(
            shapes.LAYOUT,
            Mistake(lambda: (10,), "output keeps all three dimensions: (seq_len, batch, hidden_size)."),
            shapes.OUTPUT_IS_H_N,
        ),
    ),
    shapes.shape_exercise(
        "01.h_n_shape",
        "the shape of h_n for input shaped (seq_len=10, batch=1, input_size=1)",
        hand_rnn,
        (10, 1, 1),
        "h_n",
        explanation="h_n holds the state after the last step, one row per layer: (num_layers=1, batch=1, hidden_size=1).",
        mistakes=(
            shapes.STATE_IS_OUTPUT,
            Mistake(lambda: (1, 1), "h_n keeps its first dimension (one row per layer) even for one layer."),
        ),
    ),
]
