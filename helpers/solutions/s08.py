"""Exercises of notebooks/08_variable_length.ipynb."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from helpers.exercises import Exercise, Mistake

LENGTHS = torch.tensor([5, 3, 3, 1])  # exercise 1's sequences


def _batch_sizes():
    """batch_sizes of four sequences of lengths 5, 3, 3 and 1, padded and packed."""
    return pack_padded_sequence(torch.zeros(4, 5, 1), LENGTHS, batch_first=True).batch_sizes


def _running_after_one_step_too_many():
    """At index t, the sequences with more than t + 1 steps: one step off."""
    return torch.stack([(LENGTHS > t + 1).sum() for t in range(int(LENGTHS.max()))])


def _final_state_indices():
    """The time indices, in the padded output, of sequence 2's forward and backward final states."""
    torch.manual_seed(2)
    layer = nn.RNN(input_size=3, hidden_size=2, batch_first=True, bidirectional=True)
    x = torch.randn(4, 5, 3)  # (batch, seq_len, input_size)
    packed = pack_padded_sequence(x, [2, 5, 3, 4], batch_first=True, enforce_sorted=False)
    output_packed, h_n = layer(packed)
    output, _ = pad_packed_sequence(output_packed, batch_first=True)  # (4, 5, 2H), zeros after each end
    forward = next(t for t in range(5) if torch.allclose(output[2, t, :2], h_n[0, 2]))
    backward = next(t for t in range(5) if torch.allclose(output[2, t, 2:], h_n[1, 2]))
    return forward, backward


def _data_shape():
    """The shape of packed.data for a (4, 6, 3) batch with lengths (6, 4, 2, 1)."""
    return tuple(pack_padded_sequence(torch.zeros(4, 6, 3), [6, 4, 2, 1], batch_first=True).data.shape)


EXERCISES = [
    Exercise(
        key="08.batch_sizes",
        question="batch_sizes for four sequences of lengths 5, 3, 3 and 1, padded and packed",
        solution=_batch_sizes,
        explanation=(
            "batch_sizes[t] counts the sequences still running at time index t: all 4 at t = 0; 3 at t = 1 and 2 "
            "(the length-1 sequence has ended); 1 at t = 3 and 4 (only the length-5 one)."
        ),
        mistakes=(
            Mistake(
                lambda: LENGTHS,
                "Those are the lengths, steps per sequence. batch_sizes has one entry per time step: "
                "how many sequences are still running at that step.",
            ),
            Mistake(
                lambda: _batch_sizes().flip(0),
                "Reversed: batch_sizes[0] belongs to the first time step, and time runs forwards.",
            ),
            Mistake(
                _running_after_one_step_too_many,
                "One step off: time indices start at 0, and a sequence of length 1 still has a step at index 0. "
                "batch_sizes never holds a 0.",
            ),
            Mistake(
                lambda: torch.full((5,), 4),
                "Packing drops the padding: once a sequence has ended, it no longer counts at later steps.",
            ),
        ),
    ),
    Exercise(
        key="08.t_forward",
        question="the time index, in the padded output, of the forward final state of sequence 2 (length 3)",
        solution=lambda: _final_state_indices()[0],
        explanation=(
            "The forward run of sequence 2 stops at its own last step, len - 1 = 2; with packing, output[2, 3:] "
            "is padding (zeros), so output[2, -1] is not its final state."
        ),
        mistakes=(
            Mistake(
                lambda: 4,
                "That is the last step of the padded batch, output[:, 4] or output[:, -1], not of sequence 2. "
                "Sequence 2 ends earlier; after packing, output holds zeros after its end.",
            ),
            Mistake(lambda: 3, "That is the length of sequence 2; time indices count from 0."),
            Mistake(lambda: 0, "That is where the backward direction ends; the forward direction runs the other way."),
        ),
        size=5,  # the padded output's time steps: the longest sequence's
    ),
    Exercise(
        key="08.t_backward",
        question="the time index, in the padded output, of the backward final state of sequence 2 (length 3)",
        solution=lambda: _final_state_indices()[1],
        explanation=(
            "The backward run of sequence 2 starts at its last real step, t = 2, and reads back to t = 0, where "
            "it ends: h_n[1, 2] is output[2, 0, H:], for every length."
        ),
        mistakes=(
            Mistake(
                lambda: 2,
                "That is where the backward run starts, at sequence 2's last real step. Its final state is where "
                "it ends.",
            ),
            Mistake(
                lambda: 4,
                "That is the last step of the padded batch, output[:, 4] or output[:, -1]; the backward run never "
                "visits padding when packed, and its final state is where it ends.",
            ),
        ),
        size=5,  # the padded output's time steps: the longest sequence's
    ),
    Exercise(
        key="08.data_shape",
        question="the shape of packed.data for a (4, 6, 3) batch with lengths (6, 4, 2, 1)",
        solution=_data_shape,
        explanation="packed.data holds one row per real step of any sequence: 6 + 4 + 2 + 1 = 13 rows of 3 features.",
        mistakes=(
            Mistake(lambda: (24, 3), "That counts the padding too (4 x 6 steps); packing keeps only the real steps."),
            Mistake(lambda: (4, 6, 3), "That is the padded batch; packed.data has two dimensions: rows, features."),
            Mistake(lambda: (13,), "packed.data keeps each step's features: it has two dimensions."),
            Mistake(
                lambda: (6, 3),
                "One row per time step would hold a single sequence; each sequence running at a step gets a row.",
            ),
        ),
    ),
]
