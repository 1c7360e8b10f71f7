"""Exercises of notebooks/06_stacked_bidirectional.ipynb."""

import torch
from torch import nn

from helpers.bugs import BUGS
from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake
from helpers.solutions import shapes
from helpers.unroll import trace


def _middle_backward_row():
    """The row of h_n holding layer 1's backward final state, for nn.RNN(4, 3, 3, bidirectional=True)."""
    torch.manual_seed(1)
    rnn = nn.RNN(4, 3, num_layers=3, bidirectional=True)
    result = trace(rnn, torch.randn(5, 2, 4))
    final = result.stack("h", layer=1, direction=1)[0]  # the backward run ends at the first step
    return next(row for row in range(6) if torch.equal(result.h_n[row], final))


def _weight_shape():
    """The shape of weight_ih_l2_reverse in nn.RNN(10, 20, 3, bidirectional=True)."""
    return tuple(nn.RNN(10, 20, 3, bidirectional=True).weight_ih_l2_reverse.shape)


def _shapes_layer():
    """Exercise 3's module, read with a batch-first (8, 6, 10) input."""
    return nn.RNN(10, 20, 3, batch_first=True, bidirectional=True)


def top_h_n(output, hidden_size):
    """The top layer's two rows of h_n, (2, batch, H), from a batch-first bidirectional output (batch, seq_len, 2H)."""
    H = hidden_size
    forward_final = output[:, -1, :H]  # the forward run ends at the last step
    backward_final = output[:, 0, H:]  # the backward run ends at the first step
    return torch.stack([forward_final, backward_final])


def _top_h_n_cases():
    """Outputs of seeded bidirectional layers (batch first), with batch, seq_len and hidden_size all different."""
    generator = torch.Generator().manual_seed(6)
    cases = []
    for batch, seq_len, H, layers in ((15, 5, 50, 4), (3, 6, 2, 1), (2, 4, 3, 2), (5, 3, 4, 3)):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(batch * 100 + seq_len)
            rnn = nn.RNN(7, H, num_layers=layers, batch_first=True, bidirectional=True)
        x = torch.randn(batch, seq_len, 7, generator=generator)
        with torch.no_grad():
            output = rnn(x)[0]
        where = "shaped like the forum module's" if layers == 4 else f"{layers} layer{'s' * (layers > 1)}"
        cases.append((f"{where}: output (batch={batch}, seq_len={seq_len}, 2H={2 * H})", (output, H)))
    return cases


def _halves(output, H, forward_t, backward_t):
    return torch.stack([output[:, forward_t, :H], output[:, backward_t, H:]])


EXERCISES = [
    CodeExercise(
        key="06.top_h_n",
        question="top_h_n(output, hidden_size): h_n[-2:] of a bidirectional, batch-first layer from its output alone",
        reference=top_h_n,
        explanation=(
            "output holds the top layer only. Its forward half ends at the last step, output[:, -1, :H]; its backward "
            "half ends at the first step, output[:, 0, H:]. Stacked, forward first, they are h_n[-2] and h_n[-1]."
        ),
        cases=_top_h_n_cases,
        returns="h_n_top",
        mistakes=(
            CodeMistake(
                "the backward state read from the forward half: output[:, 0, :H] holds the forward run at t = 0",
                "the backward half is output[..., H:]: backward_final = output[:, 0, H:]",
                lambda output, H: torch.stack([output[:, -1, :H], output[:, 0, :H]]),
            ),
            CodeMistake(
                "a (batch, 2, H) stack .view-ed as (2, batch, H): view keeps the numbers' order, so the rows mix "
                "sequences and directions",
                "stack along a new first dimension, torch.stack([forward, backward]), or .transpose(0, 1) the (B, 2, H) stack",
                lambda output, H: torch.stack([output[:, -1, :H], output[:, 0, H:]], dim=1).view(2, -1, H),
            ),
            CodeMistake(
                BUGS["h_n_backward_from_output"].title,
                "the backward run ends at the first step: take output[:, 0, H:]",
                lambda output, H: _halves(output, H, -1, -1),
            ),
            CodeMistake(
                "both rows taken from the first step, where only the backward run ends",
                "the forward run ends at the last step: take output[:, -1, :H]",
                lambda output, H: _halves(output, H, 0, 0),
            ),
            CodeMistake(
                "the two rows in the wrong order",
                "row 0 is the forward direction, row 1 the backward one (row = 2 * layer + direction)",
                lambda output, H: torch.stack([output[:, 0, H:], output[:, -1, :H]]),
            ),
            CodeMistake(
                "the last step's row reshaped with view(2, batch, H), which mixes sequences",
                "output[:, -1] is (batch, 2H), one row per sequence: take its halves by slicing, not by view",
                lambda output, H: output[:, -1].reshape(2, -1, H),
            ),
            CodeMistake(
                "indexed as if time came first: output[-1] is the last sequence, not the last step",
                "this output is batch first, (batch, seq_len, 2H): the last step is output[:, -1]",
                lambda output, H: torch.stack([output[-1, :, :H], output[0, :, H:]]),
            ),
        ),
    ),
    Exercise(
        key="06.h_n_row",
        question="the h_n row of layer 1 (the middle layer), backward, in nn.RNN(4, 3, num_layers=3, bidirectional=True)",
        solution=_middle_backward_row,
        explanation="Layer k, direction d is row 2 * k + d: layer 1, backward (d = 1) is row 2 * 1 + 1 = 3.",
        mistakes=(
            Mistake(lambda: 4, "That is direction * num_layers + layer: torch keeps each layer's two rows together."),
            Mistake(lambda: 2, "That row is layer 1's forward state: within a layer the forward row comes first."),
            Mistake(lambda: 1, "Each layer below has two rows, one per direction: count layer 0's rows too."),
            Mistake(lambda: 5, "h_n[-1], row 5, is the top layer's backward state; layer 1 is the middle one."),
        ),
        size=6,  # h_n's rows: num_layers * 2 directions
    ),
    Exercise(
        key="06.weight_shape",
        question="the shape of weight_ih_l2_reverse in nn.RNN(10, 20, 3, bidirectional=True)",
        solution=_weight_shape,
        explanation=(
            "torch stores (out, in). Out: hidden_size = 20. In: layer 2 reads z_t of layer 1, both directions "
            "side by side, 2 * 20 = 40 numbers; the backward direction reads them all, like the forward one."
        ),
        mistakes=(
            Mistake(
                lambda: (20, 20),
                "That would read only one direction of layer 1. Both directions of layer 2 read both halves of "
                "layer 1's output, forward and backward.",
            ),
            Mistake(lambda: (20, 10), "Only layer 0 reads the input (input_size = 10); layer 2 reads layer 1."),
            Mistake(lambda: (40, 20), "Transposed: torch stores a weight as (out, in), rows for the units it feeds."),
            Mistake(
                lambda: (40, 40),
                "Each direction has its own weight_ih (weight_ih_l2 and weight_ih_l2_reverse): "
                "it feeds one direction's units only.",
            ),
        ),
    ),
    shapes.shape_exercise(
        "06.output_h_n_shapes",
        "(output shape, h_n shape) of nn.RNN(10, 20, 3, batch_first=True, bidirectional=True) on (8, 6, 10)",
        _shapes_layer,
        (8, 6, 10),
        ("output", "h_n"),
        explanation=(
            "output follows the input's layout and holds the top layer, both directions side by side: "
            "(batch=8, seq_len=6, 2 * 20 = 40). h_n is never batch-first, one row per layer and direction: "
            "(3 * 2 = 6, batch=8, 20)."
        ),
        mistakes=(
            shapes.STATE_BATCH_FIRST,
            shapes.ONE_DIRECTION,
            shapes.ROW_PER_LAYER,
            shapes.LAYOUT,
            shapes.EVERY_LAYER,
        ),
    ),
]
