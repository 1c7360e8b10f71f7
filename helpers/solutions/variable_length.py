"""Exercises of notebooks/08_variable_length.ipynb."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence

from helpers.bugs import BUGS
from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake

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


def last_states(output, lengths):
    """Each sequence's state at its own last real step, from a time-first padded output: (B, H)."""
    batch = torch.arange(output.shape[1])  # (B,): 0, 1, ..., B - 1
    return output[lengths - 1, batch]  # row b: output[lengths[b] - 1, b]


def _notebook_output(order=(0, 1, 2)):
    """The notebook's packed batch (in the given order) through its layer: time-first output, forward half."""
    sequences = [[1.0, 2.0, 3.0, -1.0], [-2.0, 0.5, 1.5], [0.25, -0.5]]
    sequences = [torch.tensor(sequences[i]).reshape(-1, 1) for i in order]  # (len, input_size=1) each
    rnn = nn.RNN(input_size=1, hidden_size=1, bidirectional=True)
    weights = {"weight_ih_l0": 0.5, "weight_hh_l0": -1.0, "bias_ih_l0": 0.25, "bias_hh_l0": 0.0}
    weights |= {"weight_ih_l0_reverse": 0.5, "weight_hh_l0_reverse": 0.8, "bias_ih_l0_reverse": -0.5}
    with torch.no_grad():
        for p in rnn.parameters():
            p.zero_()
        for name, value in weights.items():
            getattr(rnn, name).fill_(value)
        packed = pack_sequence(sequences, enforce_sorted=False)
        output, lengths = pad_packed_sequence(rnn(packed)[0])  # (T, B, 2H), (B,)
    return output[..., :1], lengths  # the forward direction: (T, B, H)


def _padded_output(generator, lengths, hidden_size):
    """A time-first padded output (T, B, H) for these lengths: random states, 0.0 after each end."""
    lengths = torch.tensor(lengths)
    states = torch.tanh(torch.randn(int(lengths.max()), len(lengths), hidden_size, generator=generator))
    is_padding = torch.arange(int(lengths.max()))[:, None] >= lengths  # (T, B)
    return states.masked_fill(is_padding[..., None], 0.0), lengths


def _last_states_cases():
    """The notebook's batch sorted and shuffled, then other sizes (T != B), lengths in any order."""
    generator = torch.Generator().manual_seed(8)
    return [
        ("the notebook's batch: output (T=4, B=3, H=1), lengths (4, 3, 2)", _notebook_output()),
        ("the notebook's shuffled batch: output (T=4, B=3, H=1), lengths (2, 4, 3)", _notebook_output((2, 0, 1))),
        ("output (T=3, B=5, H=2), lengths (1, 3, 2, 3, 1)", _padded_output(generator, [1, 3, 2, 3, 1], 2)),
        ("output (T=6, B=2, H=3), lengths (2, 6)", _padded_output(generator, [2, 6], 3)),
    ]


EXERCISES = [
    CodeExercise(
        key="08.last_states",
        question="last_states(output, lengths): each sequence's last real state (B, H) from a padded "
        "time-first output (T, B, H)",
        reference=last_states,
        explanation=(
            "Sequence b's last real step is at time index lengths[b] - 1, a different one for each b, so each row "
            "needs its own (time, batch) pair: output[lengths - 1, torch.arange(B)] pairs the two index tensors "
            "entry by entry. That is h_n[0] of a one-layer, one-direction layer run on the packed batch."
        ),
        cases=_last_states_cases,
        returns="h_last",
        mistakes=(
            CodeMistake(
                "the mean of each sequence's real steps, not its state at the last real step",
                "take the one state at t = lengths[b] - 1: output[lengths - 1, torch.arange(B)]",
                lambda output, lengths: (
                    (output * (torch.arange(output.shape[0])[:, None] < lengths)[..., None]).sum(0) / lengths[:, None]
                ),
            ),
            CodeMistake(
                BUGS["h_n_at_padded_end"].title,
                BUGS["h_n_at_padded_end"].fix,
                lambda output, lengths: output[-1],
            ),
            CodeMistake(
                "output[0] is every sequence's first step, not its last",
                "a sequence's last real step is at time index lengths[b] - 1: output[lengths - 1, torch.arange(B)]",
                lambda output, lengths: output[0],
            ),
            CodeMistake(
                "one step too far: output[lengths] is the step after each sequence's end",
                "time indices count from 0, so a sequence of length len ends at index len - 1",
                lambda output, lengths: output[lengths, torch.arange(output.shape[1])],
            ),
            CodeMistake(
                "indexed as if batch first: output[torch.arange(B), lengths - 1] reads time as the batch",
                "this output is time first, (T, B, H): the time index comes first, output[lengths - 1, torch.arange(B)]",
                lambda output, lengths: output[torch.arange(len(lengths)), lengths - 1],
            ),
            CodeMistake(
                "the batch not indexed: output[lengths - 1] takes every sequence at each of those steps, (B, B, H)",
                "pair each time index with its own sequence: output[lengths - 1, torch.arange(B)]",
                lambda output, lengths: output[lengths - 1],
            ),
            CodeMistake(
                "the right states, but .diagonal() puts the batch last: (H, B)",
                "index both dimensions at once, output[lengths - 1, torch.arange(B)], or transpose with .T",
                lambda output, lengths: output[lengths - 1].diagonal(),
            ),
        ),
    ),
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
