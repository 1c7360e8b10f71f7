"""Exercises of notebooks/12_gradients_through_time.ipynb."""

import torch
from torch import nn
from torch.autograd.functional import jacobian

from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake


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


def bptt_step(delta_t, h_t, W_hh):
    """One step back through a tanh RNN: delta_{t-1} = dL/dh_{t-1} from delta_t = dL/dh_t and h_t, rows (B, H)."""
    slope = 1 - h_t**2  # tanh'(a_t) = 1 - tanh(a_t)^2 = 1 - h_t^2, (B, H)
    return (delta_t * slope) @ W_hh  # delta_t diag(1 - h_t^2) W_hh: (B, H) @ (H, H)


def _forward_step(generator, batch, input_size, hidden_size):
    """h_t of one real tanh step from random numbers, a random delta_t and the step's W_hh (not symmetric)."""
    x_t, h_prev = (
        torch.randn(batch, input_size, generator=generator),
        torch.randn(batch, hidden_size, generator=generator),
    )
    W_ih, W_hh = (
        torch.randn(hidden_size, input_size, generator=generator),
        torch.randn(hidden_size, hidden_size, generator=generator),
    )
    b_ih, b_hh = torch.randn(hidden_size, generator=generator), torch.randn(hidden_size, generator=generator)
    h_t = torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)
    return torch.randn(batch, hidden_size, generator=generator), h_t, W_hh


def _bptt_cases():
    """The notebook's two steps back (L = h_3), then batches of several units with a W_hh that is not symmetric."""
    h_1 = torch.tanh(torch.tensor([[0.5]]))  # notebook 01's layer on x = (1, 2, 3): w_ih = 0.5, w_hh = -1
    h_2 = torch.tanh(1.0 - h_1)
    h_3 = torch.tanh(1.5 - h_2)
    W_hh = torch.tensor([[-1.0]])
    delta_2 = bptt_step(torch.tensor([[1.0]]), h_3, W_hh)
    generator = torch.Generator().manual_seed(12)
    return [
        (
            "the notebook's step back from t = 3: delta_t = [[1]], h_t = h_3 = [[0.7652]], W_hh = [[-1]]",
            (torch.tensor([[1.0]]), h_3, W_hh),
        ),
        (
            "the notebook's step back from t = 2: delta_t = [[-0.4145]], h_t = h_2 = [[0.4914]], W_hh = [[-1]]",
            (delta_2, h_2, W_hh),
        ),
        ("a batch of 2, hidden_size = 3, random numbers", _forward_step(generator, 2, 2, 3)),
        ("a batch of 3, hidden_size = 4, random numbers", _forward_step(generator, 3, 1, 4)),
    ]


EXERCISES = [
    CodeExercise(
        key="12.bptt_step",
        question="bptt_step(delta_t, h_t, W_hh): delta_{t-1} = dL/dh_{t-1} for h_t = tanh(x_t W_ih^T + b_ih + "
        "h_{t-1} W_hh^T + b_hh), rows (B, H)",
        reference=bptt_step,
        explanation=(
            "h_t = tanh(a_t), so the gradient first passes tanh's slope at this step, 1 - h_t^2, unit by unit; "
            "then back through a_t = ... + h_{t-1} W_hh^T: a product with W_hh^T forwards is a product with W_hh "
            "backwards. So delta_{t-1} = (delta_t * (1 - h_t^2)) @ W_hh, i.e. delta_t diag(1 - h_t^2) W_hh."
        ),
        cases=_bptt_cases,
        returns="delta_prev",
        mistakes=(
            CodeMistake(
                "sigmoid's slope h_t * (1 - h_t) where the step is a tanh: tanh's slope is 1 - h_t^2",
                "(delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: (delta * h * (1 - h)) @ W_hh,
            ),
            CodeMistake(
                "W_hh left out: delta_t * (1 - h_t^2) is the gradient at a_t, one step short of h_{t-1}",
                "multiply by W_hh as well: (delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: delta * (1 - h**2),
            ),
            CodeMistake(
                "tanh's slope left out: delta_t @ W_hh is the step back of a layer without tanh",
                "multiply by the slope 1 - h_t**2 first: (delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: delta @ W_hh,
            ),
            CodeMistake(
                "W_hh transposed: @ W_hh.T is the forward direction's product",
                "forwards h_{t-1} is multiplied by W_hh.T, so backwards the gradient is multiplied by W_hh: "
                "(delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: (delta * (1 - h**2)) @ W_hh.T,
            ),
            CodeMistake(
                "1 - h_t instead of 1 - h_t**2",
                "tanh'(a) = 1 - tanh(a)^2 = 1 - h_t**2: square h_t before subtracting it from 1",
                lambda delta, h, W_hh: (delta * (1 - h)) @ W_hh,
            ),
            CodeMistake(
                "tanh applied to h_t again: 1 - tanh(h_t)**2 is the slope at h_t, not at a_t",
                "h_t is already tanh(a_t), so the slope is 1 - h_t**2, without another tanh",
                lambda delta, h, W_hh: (delta * (1 - torch.tanh(h) ** 2)) @ W_hh,
            ),
            CodeMistake(
                "the slope applied after W_hh: (delta_t @ W_hh) * (1 - h_t**2) scales the units of h_{t-1}",
                "the slope belongs to h_t's units, so it comes before the product: (delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: (delta @ W_hh) * (1 - h**2),
            ),
            CodeMistake(
                "the one-unit formula with *: delta_t * W_hh * (1 - h_t**2) multiplies entry by entry",
                "with H units the step back is a matrix product: (delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: delta * W_hh * (1 - h**2),
            ),
            CodeMistake(
                "delta_t left out: (1 - h_t**2) @ W_hh is the step back for L = sum(h_t)",
                "multiply by what the loss sends back to h_t first: (delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: (1 - h**2) @ W_hh,
            ),
            CodeMistake(
                "the slope written (1 - h_t)**2: the power binds tighter than the minus, so tanh's slope is 1 - h_t**2",
                "(delta_t * (1 - h_t**2)) @ W_hh: square h_t, then subtract from 1",
                lambda delta, h, W_hh: (delta * (1 - h) ** 2) @ W_hh,
            ),
            CodeMistake(
                "the slope added instead of multiplied: delta_t @ W_hh + (1 - h_t**2)",
                "the chain rule multiplies: scale delta_t by tanh's slope, then go back through W_hh: "
                "(delta_t * (1 - h_t**2)) @ W_hh",
                lambda delta, h, W_hh: delta @ W_hh + (1 - h**2),
            ),
            CodeMistake(
                "the gradient clipped inside the step: clipping (clamp, clip_grad_norm_) is a training choice made on "
                "the parameters' gradients, not part of the chain rule",
                "return the exact step back, (delta_t * (1 - h_t**2)) @ W_hh; clip later, if at all, with "
                "torch.nn.utils.clip_grad_norm_ before the optimiser step",
                lambda delta, h, W_hh: ((delta * (1 - h**2)) @ W_hh).clamp(-1, 1),
            ),
        ),
    ),
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
