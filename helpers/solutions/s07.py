"""Exercises of notebooks/07_batches_and_shapes.ipynb."""

import torch
from torch import nn

from helpers.exercise_types import Exercise, Mistake


def _shapes():
    """(input, output, h_n) shapes for nn.RNN(6, 8, 2, bidirectional, batch_first) on 5 sequences of 7 steps."""
    rnn = nn.RNN(6, 8, num_layers=2, bidirectional=True, batch_first=True)
    x = torch.zeros(5, 7, 6)  # (batch, seq_len, input_size)
    output, h_n = rnn(x)
    return tuple(x.shape), tuple(output.shape), tuple(h_n.shape)


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


def _h_0_shape():
    """The shape of h_0 for nn.RNN(4, 6, 3, bidirectional, batch_first) and a batch of 2 sequences of 9 steps."""
    three_layers = nn.RNN(4, 6, num_layers=3, bidirectional=True, batch_first=True)
    return tuple(three_layers(torch.zeros(2, 9, 4))[1].shape)  # h_0 has the shape of h_n


EXERCISES = [
    Exercise(
        key="07.shapes",
        question="the shapes of input, output and h_n for nn.RNN(6, 8, 2, bidirectional, batch_first), 5 x 7 steps",
        solution=_shapes,
        explanation=(
            "input, batch first: (batch=5, seq_len=7, input_size=6). output follows it, both directions of the "
            "top layer side by side: (5, 7, 2 * 8 = 16). h_n is never batch-first, one row per layer and "
            "direction: (2 * 2 = 4, batch=5, 8)."
        ),
        mistakes=(
            Mistake(
                lambda: ((5, 7, 6), (5, 7, 16), (5, 4, 8)),
                "batch_first=True changes input and output only: h_n keeps the batch in the middle.",
            ),
            Mistake(
                lambda: ((5, 7, 6), (5, 7, 8), (4, 5, 8)),
                "A bidirectional output holds both directions side by side at each step.",
            ),
            Mistake(
                lambda: ((5, 7, 6), (5, 7, 16), (2, 5, 8)),
                "h_n has one row per layer and direction, not one per layer.",
            ),
            Mistake(
                lambda: ((7, 5, 6), (7, 5, 16), (4, 5, 8)),
                "That is the default, time-first layout; with batch_first=True the batch comes first.",
            ),
        ),
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
    Exercise(
        key="07.h_0_shape",
        question="the shape of h_0 for nn.RNN(4, 6, 3, bidirectional, batch_first) and 2 sequences of 9 steps",
        solution=_h_0_shape,
        explanation=(
            "h_0 has the shape of h_n, with or without batch_first: (num_layers * num_directions = 3 * 2 = 6, "
            "batch=2, hidden_size=6). It holds no time dimension: it is the state before step 1."
        ),
        mistakes=(
            Mistake(lambda: (2, 6, 6), "h_0 is never batch-first: batch_first=True changes input and output only."),
            Mistake(lambda: (3, 2, 6), "Count the directions too: each layer has a forward and a backward row."),
            Mistake(
                lambda: (6, 2, 12),
                "Each row holds one direction's state, so its last size is hidden_size; the directions get rows.",
            ),
            Mistake(lambda: (1, 2, 6), "That fits a module with one layer and one direction; this one has more."),
        ),
    ),
]
