"""Exercises of notebooks/11_gru.ipynb."""

import math
from itertools import permutations

import torch
from torch import nn

from helpers.bugs import BUGS
from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake
from helpers.solutions.terms import gate_cases, term_cases


def _count(module):
    return sum(p.numel() for p in module.parameters())


def _z_rows():
    """The rows of weight_ih_l0 in nn.GRU(1, 4) that feed the update gate z, found by probing torch's layer.

    Every parameter 0 except one row of weight_ih_l0, set to 30; x = 1, h_0 = 0.5. With all else 0,
    r = z = 0.5 and n = 0, so h_1 = 0.25, except in the unit whose z that row opens: z = 1 keeps h_0 = 0.5.
    (A row of r changes nothing, as h_{t-1} W_hn = 0; a row of n gives h_1 = 0.75.)
    """
    gru = nn.GRU(input_size=1, hidden_size=4)
    rows = []
    for row in range(3 * gru.hidden_size):
        with torch.no_grad():
            for p in gru.parameters():
                p.zero_()
            gru.weight_ih_l0[row] = 30.0
            _, h_n = gru(torch.ones(1, 1, 1), torch.full((1, 1, 4), 0.5))
        if torch.isclose(h_n, torch.tensor(0.5)).any():
            rows.append(row)
    return torch.tensor(rows)


B_IZ = math.log(3.0)  # exercise 3's update-gate bias: sigma(ln 3) = 3 / 4
X_1, H_0 = 1.0, 0.4


def _gru_step(reset_before=False, z_swapped=False):
    """h_1 of exercise 3's 1-unit GRU: torch's layer, or the same numbers with a typical mistake."""
    gru = nn.GRU(input_size=1, hidden_size=1)
    with torch.no_grad():
        for p in gru.parameters():
            p.zero_()
        gru.weight_ih_l0[2, 0] = 1.0  # w_in (rows r, z, n)
        gru.weight_hh_l0[2, 0] = 1.0  # w_hn
        gru.bias_hh_l0[2] = 1.0  # b_hn
        gru.bias_ih_l0[1] = B_IZ  # b_iz
        if not (reset_before or z_swapped):
            return gru(torch.full((1, 1, 1), X_1), torch.full((1, 1, 1), H_0))[1].item()
    r, z = 0.5, torch.sigmoid(torch.tensor(B_IZ)).item()
    n = math.tanh(X_1 + (H_0 * r + 1.0 if reset_before else r * (H_0 + 1.0)))  # reset before or after the product
    return z * n + (1 - z) * H_0 if z_swapped else (1 - z) * n + z * H_0


def gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    """One step of nn.GRU for a batch: r, z and the candidate n in torch's order, the reset after the product."""
    W_ir, W_iz, W_in = W_ih.chunk(3)  # rows r, z, n: (H, input_size) each
    W_hr, W_hz, W_hn = W_hh.chunk(3)  # (H, H) each
    b_ir, b_iz, b_in = b_ih.chunk(3)  # (H,) each
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


def _gru_step_variant(kind):
    """A wrong gru_step written as a student would: sigmoid for n, no update gate, the weights split by column."""

    def step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
        by = 1 if kind == "chunk_columns" else 0
        order = kind.removeprefix("order:") if kind.startswith("order:") else "rzn"

        def split(t, dim=0):
            blocks = dict(zip(order, t.chunk(3, dim=dim), strict=True))
            return blocks["r"], blocks["z"], blocks["n"]

        W_ir, W_iz, W_in = split(W_ih, by)
        W_hr, W_hz, W_hn = split(W_hh, by)
        b_ir, b_iz, b_in = split(b_ih)
        b_hr, b_hz, b_hn = split(b_hh)
        r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
        z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
        squash = torch.sigmoid if kind == "n_sigmoid" else torch.tanh
        n = squash(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
        return n if kind == "candidate_only" else (1 - z) * n + z * h_prev

    return step


def _hand_gru():
    """The notebook's 1 -> 1 GRU with hand-picked numbers, rows r, z, n."""
    gru = nn.GRU(input_size=1, hidden_size=1)
    chosen = {
        "weight_ih_l0": [0.5, -1.0, 1.0],
        "weight_hh_l0": [1.0, 2.0, -0.5],
        "bias_ih_l0": [0.0, 0.0, 0.0],
        "bias_hh_l0": [0.0, 0.0, 0.5],
    }
    with torch.no_grad():
        for name, values in chosen.items():
            p = getattr(gru, name)
            p.copy_(torch.tensor(values).reshape(p.shape))
    return gru


def _random_gru_step(generator, batch, input_size, hidden_size):
    """Arguments of gru_step for the given sizes, drawn from `generator`: x_t, h_prev, W_ih, W_hh, b_ih, b_hh."""
    shapes = [(batch, input_size), (batch, hidden_size), (3 * hidden_size, input_size), (3 * hidden_size, hidden_size)]
    shapes += [(3 * hidden_size,), (3 * hidden_size,)]
    return tuple(torch.randn(*shape, generator=generator) for shape in shapes)


def _gru_step_cases():
    """The notebook's step 2, then other sizes with random numbers (several units, non-zero b_hn)."""
    gru = _hand_gru()
    weights = tuple(p.detach() for p in (gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0))
    h_1 = gru_step(torch.tensor([[1.0]]), torch.zeros(1, 1), *weights)  # step 1: x_1 = 1 from h_0 = 0
    generator = torch.Generator().manual_seed(11)
    return (
        [
            (
                "the notebook's step 2: x_t = [[2]], h_prev = h_1 = [[0.6321]], its weights",
                (torch.tensor([[2.0]]), h_1, *weights),
            ),
            ("a batch of 2, input_size = 2, hidden_size = 3, random numbers", _random_gru_step(generator, 2, 2, 3)),
            ("a batch of 3, input_size = 4, hidden_size = 2, random numbers", _random_gru_step(generator, 3, 4, 2)),
            ("a batch of 1, input_size = hidden_size = 3, random numbers", _random_gru_step(generator, 1, 3, 3)),
        ]
        + term_cases(
            _random_gru_step(generator, 3, 2, 4),
            ("x_t", "h_prev", "W_ih", "W_hh", "b_ih", "b_hh"),
            ("W_ih", "W_hh", "b_ih", "b_hh"),
            "a batch of 3, input_size = 2, hidden_size = 4, random numbers",
        )
        + gate_cases(
            _random_gru_step(generator, 3, 2, 4),
            ("x_t", "h_prev", "W_ih", "W_hh", "b_ih", "b_hh"),
            "GRU",
            "a batch of 3, input_size = 2, hidden_size = 4, random numbers",
        )
    )


def _gru_step_with(order="rzn", reset="after", z_keeps_old=True):
    """A typical wrong gru_step: the blocks read in another order, the reset gate elsewhere, z the other way."""

    def step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
        x_part = dict(zip(order, (x_t @ W_ih.T + b_ih).chunk(3, dim=-1)))  # x_t W_i*^T + b_i*, by gate
        h_part = dict(zip(order, (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)))  # h_prev W_h*^T + b_h*
        r = torch.sigmoid(x_part["r"] + h_part["r"])
        z = torch.sigmoid(x_part["z"] + h_part["z"])
        W_hn, b_hn = W_hh.chunk(3)[order.index("n")], b_hh.chunk(3)[order.index("n")]
        hidden = {
            "after": r * h_part["n"],  # torch: r * (h_prev W_hn^T + b_hn)
            "before": (r * h_prev) @ W_hn.T + b_hn,
            "b_hn outside": r * (h_prev @ W_hn.T) + b_hn,
            "nowhere": h_part["n"],
        }[reset]
        n = torch.tanh(x_part["n"] + hidden)
        return (1 - z) * n + z * h_prev if z_keeps_old else z * n + (1 - z) * h_prev

    return step


EXERCISES = [
    CodeExercise(
        key="11.step",
        question="gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh): one GRU step for a batch, returning h_t",
        reference=gru_step,
        explanation=(
            "chunk(3) cuts every parameter into torch's blocks r, z, n. r and z are sigmoids of their rows; the "
            "reset gate multiplies the whole h_prev W_hn^T + b_hn, after the product and with its bias; and z "
            "is the share of the old state kept: h_t = (1 - z) * n + z * h_prev."
        ),
        cases=_gru_step_cases,
        returns="h_t",
        mistakes=(
            *(
                CodeMistake(
                    f"the gates read in the order {', '.join(order)}: torch stacks the rows of W_ih, W_hh and the "
                    "biases as r, z, n",
                    "split each weight and bias as r, z, n: W_ir, W_iz, W_in = W_ih.chunk(3)",
                    _gru_step_variant("order:" + "".join(order)),
                )
                for order in permutations("rzn")
                if "".join(order) not in ("rzn", "zrn")  # zrn is the catalogue's, listed first
            ),
            CodeMistake(BUGS["gru_n_sigmoid"].title, BUGS["gru_n_sigmoid"].fix, _gru_step_variant("n_sigmoid")),
            CodeMistake(
                "no update gate: the candidate n returned as h_t, so nothing of h_prev is kept",
                "mix the candidate with the old state: h_t = (1 - z) * n + z * h_prev",
                _gru_step_variant("candidate_only"),
            ),
            CodeMistake(
                "the weights split along their columns: W.chunk(3, dim=1) cuts the inputs, not the r, z, n row blocks",
                "split the rows: W_ih.chunk(3) (dim=0) gives W_ir, W_iz, W_in",
                _gru_step_variant("chunk_columns"),
            ),
            CodeMistake(
                BUGS["gru_reset_before_product"].title,
                BUGS["gru_reset_before_product"].fix,
                _gru_step_with(reset="before"),
            ),
            CodeMistake(
                "b_hn outside the reset: r * (h_prev W_hn^T) + b_hn",
                "the reset gate multiplies the bias too: n = tanh(x_t W_in^T + b_in + r * (h_prev W_hn^T + b_hn))",
                _gru_step_with(reset="b_hn outside"),
            ),
            CodeMistake(BUGS["gru_z_flipped"].title, BUGS["gru_z_flipped"].fix, _gru_step_with(z_keeps_old=False)),
            CodeMistake(BUGS["gru_gates_zrn"].title, BUGS["gru_gates_zrn"].fix, _gru_step_with(order="zrn")),
            CodeMistake(
                "the reset gate never used: n = tanh(x_t W_in^T + b_in + h_prev W_hn^T + b_hn)",
                "multiply the hidden part of the candidate by r: r * (h_prev W_hn^T + b_hn)",
                _gru_step_with(reset="nowhere"),
            ),
        ),
    ),
    Exercise(
        key="11.parameter_count",
        question="the number of parameters of nn.GRU(10, 20): one layer, with bias",
        solution=lambda: _count(nn.GRU(10, 20)),
        parameters_of=lambda: nn.GRU(10, 20),
        explanation=(
            "Three blocks (r, z, n) of hidden_size = 20 rows: weight_ih_l0 (60, 10) = 600, weight_hh_l0 (60, 20) "
            "= 1200, bias_ih_l0 and bias_hh_l0 60 each: G H (I + H) + 2 G H = 3 * 20 * 30 + 2 * 60 = 1920."
        ),
        mistakes=(
            Mistake(lambda: _count(nn.GRU(10, 20, bias=False)), "That is without the biases: there are two, 3H each."),
            Mistake(lambda: 1920 - 60, "One bias short: a GRU has bias_ih_l0 and bias_hh_l0, 3H = 60 numbers each."),
            Mistake(lambda: _count(nn.LSTM(10, 20)), "That is an LSTM's count: four blocks. A GRU has three."),
            Mistake(lambda: _count(nn.RNN(10, 20)), "That is nn.RNN's count: one block. A GRU has three, r, z, n."),
        ),
    ),
    Exercise(
        key="11.z_rows",
        question="the rows of weight_ih_l0 that hold the update gate z, for a GRU with hidden_size=4",
        solution=_z_rows,
        size=12,  # weight_ih_l0's rows: 3 * hidden_size
        explanation=(
            "torch stacks the blocks in the order r, z, n, each hidden_size = 4 rows: z is rows 4:8, i.e. "
            "4, 5, 6, 7 (weight_ih_l0[4:8], or weight_ih_l0.chunk(3)[1])."
        ),
        mistakes=(
            Mistake(
                lambda: torch.arange(0, 4),
                "Rows 0:4 are the reset gate r. That z comes first is Keras's order (z, r, h); torch's is r, z, n.",
            ),
            Mistake(lambda: torch.arange(8, 12), "Rows 8:12 are the candidate n, the third block."),
            Mistake(
                lambda: torch.tensor([1]), "Each gate has a block of hidden_size rows, one per unit, not a single row."
            ),
            Mistake(
                lambda: torch.arange(4, 9),
                "One row too many: a Python slice 4:8 ends before 8, so the rows are 4 up to 7.",
            ),
        ),
    ),
    Exercise(
        key="11.h_1",
        question="h_1 of a 1-unit GRU with w_in = w_hn = b_hn = 1, b_iz = ln 3, all else 0, from x_1 = 1, h_0 = 0.4",
        solution=_gru_step,
        explanation=(
            "r_1 = sigma(0) = 0.5 and z_1 = sigma(ln 3) = 0.75. torch resets after the product: "
            "n_1 = tanh(w_in x_1 + r_1 (w_hn h_0 + b_hn)) = tanh(1 + 0.5 * 1.4) = tanh(1.7) = 0.9354. "
            "h_1 = (1 - z_1) n_1 + z_1 h_0 = 0.25 * 0.9354 + 0.75 * 0.4 = 0.5339."
        ),
        mistakes=(
            Mistake(
                lambda: _gru_step(reset_before=True),
                "That resets h before the product, as the final arXiv version of Cho et al. (2014) does: "
                "tanh(1 + 1 * (0.5 * 0.4) + 1). torch resets after it, as their first version did, applying r to "
                "the whole h_{t-1} W_hn^T + b_hn, b_hn included.",
            ),
            Mistake(
                lambda: _gru_step(z_swapped=True),
                "That is the other convention for z, h = z n + (1 - z) h (Chung et al., 2014). In torch's, z is the "
                "share of the old state kept: h_1 = (1 - z) n + z h_0.",
            ),
            Mistake(
                lambda: math.tanh(1.7),
                "That is n_1, the candidate. h_1 mixes it with h_0, weighted by the update gate z.",
            ),
        ),
    ),
]
