"""Exercises of notebooks/07_batches_and_shapes.ipynb."""

import torch
from torch import nn

from helpers.exercise_types import Exercise, Mistake
from helpers.solutions import shapes


def _shapes_layer():
    """Exercise 1's module, read with 5 sequences of 7 steps, batch first: (5, 7, 6)."""
    return nn.RNN(6, 8, num_layers=2, bidirectional=True, batch_first=True)


_CHOICES = {  # exercise 2's expressions, for h_n of a 2-layer bidirectional module and a batch of B
    "A": lambda h_n, B: h_n.view(B, -1),
    "B": lambda h_n, B: h_n.reshape(B, -1),
    "C": lambda h_n, B: h_n.permute(1, 0, 2).reshape(B, -1),
    "D": lambda h_n, B: h_n[-1],
}


def _one_row_per_sequence():
    """The letter whose expression gives, in row b, sequence b's final states as sequence b alone gives them."""
    B = 3
    torch.manual_seed(0)
    deep = nn.RNN(2, 5, num_layers=2, bidirectional=True, batch_first=True)
    x = torch.randn(B, 4, 2)  # (batch, seq_len, input_size)
    h_n = deep(x)[1]  # (4, B, H)
    alone = torch.stack([deep(x[b : b + 1])[1][:, 0].reshape(-1) for b in range(B)])  # (B, 4 * H)
    right = [
        letter
        for letter, expression in _CHOICES.items()
        if expression(h_n, B).shape == alone.shape and torch.allclose(expression(h_n, B), alone)
    ]
    (letter,) = right
    return letter


def _three_layers():
    """Exercise 3's module, read with a batch of 2 sequences of 9 steps, batch first: (2, 9, 4)."""
    return nn.RNN(4, 6, num_layers=3, bidirectional=True, batch_first=True)


EXERCISES = [
    shapes.shape_exercise(
        "07.shapes",
        "the shapes of input, output and h_n for nn.RNN(6, 8, 2, bidirectional, batch_first), 5 x 7 steps",
        _shapes_layer,
        (5, 7, 6),
        ("input", "output", "h_n"),
        explanation=(
            "input, batch first: (batch=5, seq_len=7, input_size=6). output follows it, both directions of the "
            "top layer side by side: (5, 7, 2 * 8 = 16). h_n is never batch-first, one row per layer and "
            "direction: (2 * 2 = 4, batch=5, 8)."
        ),
        mistakes=(shapes.STATE_BATCH_FIRST, shapes.ONE_DIRECTION, shapes.ROW_PER_LAYER, shapes.LAYOUT),
    ),
    Exercise(
        key="07.one_row_per_sequence",
        question="which expression gives a (B, 4H) tensor with one row per sequence: A, B, C or D",
        solution=_one_row_per_sequence,
        explanation=(
            "C: h_n is (4, B, H), batch in the middle. permute(1, 0, 2) brings the batch to the front, (B, 4, H), "
            "and reshape(B, -1) then joins the 4 final states of each sequence into one row of 4H."
        ),
        mistakes=(
            Mistake(
                lambda: "A",
                "view never moves a number. In memory h_n holds one layer and direction of every sequence before "
                "the next, so a row of the view mixes sequences.",
            ),
            Mistake(
                lambda: "B",
                "reshape reads memory in the same order as view: on h_n it gives the same rows, mixing sequences.",
            ),
            Mistake(
                lambda: "D",
                "h_n[-1] is one layer and direction (the top layer, backward) of every sequence: (B, H), "
                "not all 4 final states of a sequence.",
            ),
        ),
    ),
    shapes.shape_exercise(
        "07.h_0_shape",
        "the shape of h_0 for nn.RNN(4, 6, 3, bidirectional, batch_first) and 2 sequences of 9 steps",
        _three_layers,
        (2, 9, 4),
        "h_0",
        explanation=(
            "h_0 has the shape of h_n, with or without batch_first: (num_layers * num_directions = 3 * 2 = 6, "
            "batch=2, hidden_size=6). It holds no time dimension: it is the state before step 1."
        ),
        mistakes=(
            shapes.STATE_BATCH_FIRST,
            shapes.ROW_PER_LAYER,
            shapes.SIDE_BY_SIDE_IN_EACH_ROW,
            shapes.ONE_ROW,
        ),
    ),
]
