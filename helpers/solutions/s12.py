"""Exercises of notebooks/12_gradients_through_time.ipynb."""

import torch
from torch import nn
from torch.autograd.functional import jacobian

from helpers.exercises import Exercise, Mistake


def _states():
    """h_1 and h_2 of the exercise's 1 -> 1 layer: w_ih = 1, w_hh = 0.8, no bias, x = (1, -1), h_0 = 0."""
    h_1 = torch.tanh(torch.tensor(1.0))
    h_2 = torch.tanh(torch.tensor(-1.0) + 0.8 * h_1)
    return h_1.item(), h_2.item()


def _dh2_dh1():
    """dh_2/dh_1 by autograd: h_1 is a leaf, h_2 = tanh(x_2 + w_hh * h_1)."""
    h_1 = torch.tanh(torch.tensor(1.0)).requires_grad_()
    h_2 = torch.tanh(torch.tensor(-1.0) + 0.8 * h_1)
    (slope,) = torch.autograd.grad(h_2, h_1)
    return slope.item()


def _linear_ratio(steps_back=10):
    """|dh_T/dx_T| / |dh_T/dx_{T-steps_back}| for w_ih = 1, w_hh = 0.5 and tiny inputs (tanh' ~ 1)."""
    rnn = nn.RNN(1, 1, bias=False, dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_ih_l0.fill_(1.0)
        rnn.weight_hh_l0.fill_(0.5)
    x = torch.full((steps_back + 1, 1), 1e-6, dtype=torch.float64, requires_grad=True)  # (T, input_size)
    rnn(x)[0][-1].sum().backward()  # h_T
    return (x.grad[-1].abs() / x.grad[0].abs()).item()


def _clipped_norm(norm, max_norm=1.0):
    """The norm of a gradient of total norm `norm` after clip_grad_norm_(..., max_norm)."""
    weight = torch.zeros(4, requires_grad=True)
    weight.grad = torch.full((4,), norm / 2)  # |(a, a, a, a)| = 2a
    nn.utils.clip_grad_norm_([weight], max_norm=max_norm)
    return round(weight.grad.norm().item(), 6)  # clip_grad_norm_ divides by total_norm + 1e-6


def _jacobian_shape():
    """The shape of the Jacobian of a GRU's output with respect to its unbatched input."""
    gru = nn.GRU(input_size=5, hidden_size=7)
    return tuple(jacobian(lambda x: gru(x)[0], torch.zeros(12, 5)).shape)  # (T, H) then (T, input_size)


H_1, H_2 = _states()

EXERCISES = [
    Exercise(
        key="12.dh2_dh1",
        question="dh_2/dh_1 for w_ih = 1, w_hh = 0.8, no bias, x = (1, -1), h_0 = 0",
        solution=_dh2_dh1,
        explanation=(
            f"h_1 = tanh(1) = {H_1:.4f}, h_2 = tanh(-1 + 0.8 h_1) = {H_2:.4f}; "
            f"dh_2/dh_1 = w_hh (1 - h_2^2) = 0.8 * {1 - H_2**2:.4f} = {0.8 * (1 - H_2**2):.4f}."
        ),
        mistakes=(
            Mistake(lambda: 0.8, "That is w_hh alone: h_2 = tanh(...), so multiply by tanh's slope 1 - h_2^2."),
            Mistake(
                lambda: 0.8 * (1 - H_1**2),
                "That is tanh's slope at step 1. The tanh that h_1 goes through on its way is step 2's: 1 - h_2^2.",
            ),
            Mistake(
                lambda: 1 - H_2**2, "That is tanh's slope alone; inside the tanh, h_1 is multiplied by w_hh = 0.8."
            ),
            Mistake(lambda: 0.8 * (1 - H_2), "tanh'(a) = 1 - tanh(a)^2: square h_2 before subtracting it from 1."),
        ),
    ),
    Exercise(
        key="12.linear_ratio",
        question="how many times smaller |dh_T/dx_{T-10}| is than |dh_T/dx_T|, for w_hh = 0.5 and tanh' = 1",
        solution=_linear_ratio,
        explanation=(
            "From h_{T-10} to h_T there are ten steps, each multiplying by w_hh * tanh' = 0.5 * 1; the factor "
            "w_ih * tanh' that turns x into h is the same at both ends. So the gradient is 0.5^10 = 1/1024 as large."
        ),
        mistakes=(
            Mistake(lambda: 2 * 10, "The factors multiply, step after step; they do not add up."),
            Mistake(lambda: 2.0, "That is one step back. x_{T-10} is ten steps back: ten factors of 0.5."),
            Mistake(
                lambda: 2.0**9,
                "One factor short: h_{T-10} -> h_{T-9} -> ... -> h_T is ten steps, each with its own w_hh.",
            ),
            Mistake(lambda: 2.0**11, "One factor too many: count the arrows h_{T-10} -> ... -> h_T; there are ten."),
            Mistake(
                lambda: 0.5**10, "That is the ratio the other way round: the question asks how many times smaller."
            ),
        ),
    ),
    Exercise(
        key="12.clipped_norms",
        question="the norms, after clip_grad_norm_(..., max_norm=1.0), of gradients of total norm 50 and 0.002",
        solution=lambda: (_clipped_norm(50.0), _clipped_norm(0.002)),
        explanation=(
            "clip_grad_norm_ multiplies every gradient by min(1, max_norm / total_norm): 50 becomes 1.0 "
            "(the direction is kept), and 0.002 stays 0.002. Clipping never makes a small gradient larger."
        ),
        mistakes=(
            Mistake(
                lambda: (1.0, 1.0),
                "max_norm is a ceiling, not a target: a gradient already below it is left alone. "
                "Clipping cannot rescue a vanishing gradient.",
            ),
            Mistake(lambda: (50.0, 0.002), "50 is above max_norm = 1.0, so it is scaled by 1/50, to norm 1."),
            Mistake(
                lambda: (1.0, 0.002 / 50),
                "Each call measures its own total norm: 0.002 is below max_norm and is not scaled at all.",
            ),
        ),
    ),
    Exercise(
        key="12.jacobian_shape",
        question="the shape of jacobian(lambda x: gru(x)[0], x) for nn.GRU(5, 7) and an unbatched x of shape (12, 5)",
        solution=_jacobian_shape,
        explanation=(
            "jacobian(f, x) has f(x)'s shape followed by x's: output is (T=12, hidden_size=7) and x is "
            "(T=12, input_size=5), so (12, 7, 12, 5): one (7, 5) block dh_t/dx_s for every pair (t, s)."
        ),
        mistakes=(
            Mistake(lambda: (12, 5, 12, 7), "The output's dimensions come first, then the input's: f(x)'s shape, x's."),
            Mistake(
                lambda: (7, 5),
                "That is one block dh_t/dx_s. jacobian returns them all: one for every output step t and input step s.",
            ),
            Mistake(lambda: (12, 12), "Each block dh_t/dx_s is itself a matrix (hidden_size, input_size): keep it."),
            Mistake(lambda: (12, 7), "That is output's shape; the Jacobian adds the input's (12, 5) after it."),
        ),
    ),
]
