"""Exercises of notebooks/09_sequence_model.ipynb."""

import torch
from torch import nn

from helpers.exercise_types import Exercise, Mistake


def _final_states(num_layers, hidden_size, batch=3):
    """output and h_n of a seeded bidirectional nn.RNN (batch first, input_size 1) on a random batch."""
    torch.manual_seed(9)
    rnn = nn.RNN(1, hidden_size, num_layers=num_layers, batch_first=True, bidirectional=True)
    x = torch.randn(batch, 6, 1)  # (batch, seq_len, input_size)
    with torch.no_grad():
        return rnn(x)


def _in_features():
    """The width of the top layer's two final states side by side, for hidden_size=16, two layers."""
    output, h_n = _final_states(num_layers=2, hidden_size=16)
    return torch.cat([h_n[-2], h_n[-1]], dim=1).shape[1]


def _head_rows():
    """The rows of h_n (3 layers, 2 directions) equal to the top layer's forward and backward final states.

    The top layer's forward run ends at the last step (output[:, -1, :H]); its backward run ends at the
    first (output[:, 0, H:]). Found by comparing every row of h_n with those two.
    """
    output, h_n = _final_states(num_layers=3, hidden_size=4)
    H = h_n.shape[-1]
    forward = next(row for row in range(len(h_n)) if torch.equal(h_n[row], output[:, -1, :H]))
    backward = next(row for row in range(len(h_n)) if torch.equal(h_n[row], output[:, 0, H:]))
    return torch.tensor([forward, backward])


def _model():
    """Notebook 09's model, SequenceClassifier(1, 8, 2), as its two parts under the model's names."""
    return nn.ModuleDict({"rnn": nn.RNN(1, 8, batch_first=True), "head": nn.Linear(8, 2)})


def _parameter_count():
    """Parameters of notebook 09's model: nn.RNN(1, 8) and its head nn.Linear(8, 2)."""
    return sum(p.numel() for p in _model().parameters())


EXERCISES = [
    Exercise(
        key="09.in_features",
        question="in_features of the head of a SequenceClassifier with hidden_size=16, num_layers=2, bidirectional",
        solution=_in_features,
        explanation=(
            "The head reads the top layer's forward and backward final states side by side, "
            "torch.cat([h_n[-2], h_n[-1]], dim=1): 2 x 16 = 32 features. The number of layers does not enter: "
            "the head reads only the top one."
        ),
        mistakes=(
            Mistake(lambda: 16, "That is one direction's final state; a bidirectional head reads both, side by side."),
            Mistake(
                lambda: 64,
                "That counts every layer's two states. The head reads only the top layer's: the lower layers' "
                "final states stay in h_n.",
            ),
            Mistake(lambda: 4, "That is the number of rows of h_n (layers x directions), not the width of a state."),
        ),
    ),
    Exercise(
        key="09.head_rows",
        question="the two rows of h_n (3 layers, bidirectional) the head reads, forward first, counted from 0",
        solution=_head_rows,
        explanation=(
            "h_n's rows are numbered layer * 2 + direction. The top layer is layer 2: row 4 is its forward final "
            "state, row 5 its backward one, i.e. h_n[-2] and h_n[-1]."
        ),
        mistakes=(
            Mistake(
                lambda: torch.tensor([5, 4]),
                "The right rows, in the wrong order: the forward direction has the lower number.",
            ),
            Mistake(
                lambda: torch.tensor([0, 1]),
                "Those are the first layer's two directions; the head reads the top layer.",
            ),
            Mistake(
                lambda: torch.tensor([2, 5]),
                "That would be h_n laid out direction by direction, all forward rows first. torch numbers its rows "
                "layer * 2 + direction: each layer's two directions sit next to each other.",
            ),
        ),
        size=6,  # h_n's rows: 3 layers * 2 directions
    ),
    Exercise(
        key="09.parameter_count",
        question="the number of parameters of SequenceClassifier(input_size=1, hidden_size=8, num_classes=2)",
        solution=_parameter_count,
        explanation=(
            "nn.RNN(1, 8): weight_ih_l0 (8, 1) = 8, weight_hh_l0 (8, 8) = 64, bias_ih_l0 and bias_hh_l0 8 each: 88. "
            "The head nn.Linear(8, 2): weight (2, 8) = 16 and bias 2: 18. In all 106."
        ),
        mistakes=(
            Mistake(lambda: 88, "That is the RNN alone; the head's Linear(8, 2) has parameters too."),
            Mistake(lambda: 18, "That is the head alone; add the RNN's weights and biases."),
            Mistake(
                lambda: 98,
                "One bias short: nn.RNN has two bias vectors, bias_ih_l0 and bias_hh_l0, of 8 numbers each.",
            ),
            Mistake(lambda: 58, "weight_hh_l0 is (hidden_size, hidden_size) = (8, 8): 64 numbers, not 8 + 8 = 16."),
        ),
        parameters_of=_model,
    ),
]
