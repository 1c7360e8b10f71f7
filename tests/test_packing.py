"""helpers.pack_padded_sequence: torch's packing, with lengths checked and explained."""

import re

import pytest
import torch
from torch.nn.utils import rnn

from helpers import pack_padded_sequence

PADDED = torch.randn(4, 3, 2)  # (seq_len=4, batch=3, features=2)


@pytest.mark.parametrize(
    "enforce_sorted, lengths", [(True, [4, 3, 1]), (False, [1, 4, 3]), (False, torch.tensor([2, 4, 4]))]
)
def test_good_lengths_pack_exactly_as_torch_does(enforce_sorted, lengths):
    """Same data, batch sizes and order as torch's own pack_padded_sequence."""
    ours = pack_padded_sequence(PADDED, lengths, enforce_sorted=enforce_sorted)
    theirs = rnn.pack_padded_sequence(PADDED, lengths, enforce_sorted=enforce_sorted)
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None and b is None) or torch.equal(a, b)


@pytest.mark.parametrize(
    "lengths, options, exception, message",
    [
        (
            [4, 0, 2],
            {"enforce_sorted": False},
            ValueError,
            "sequence 1 has length 0: an RNN cannot read an empty sequence",
        ),
        ([5, 3, 2], {}, ValueError, "sequence 0 has length 5, but the padded tensor has only seq_len=4 steps"),
        (
            [2, 4, 3],
            {},
            ValueError,
            "lengths [2, 4, 3] are not in decreasing order, which enforce_sorted=True requires. Pass enforce_sorted=False",
        ),
        ([4, 3], {}, ValueError, "lengths has 2 entries but the batch has 3 sequences"),
        (
            torch.tensor([4.0, 3, 2]),
            {},
            TypeError,
            "lengths has dtype torch.float32; lengths count steps: pass lengths.long()",
        ),
        (torch.tensor([[4, 3, 2]]), {}, TypeError, "lengths must be 1-D, one entry per sequence; got shape (1, 3)"),
        ("4, 3, 2", {}, TypeError, "lengths must be a list of ints or a 1-D int64 tensor on the CPU"),
        ([4, 3, 2], {"batch_first": True}, ValueError, "the batch has 4 sequences"),
    ],
)
def test_bad_lengths_are_explained(lengths, options, exception, message):
    """Zero, too long, unsorted, miscounted or mistyped lengths each get a specific message."""
    with pytest.raises(exception, match=re.escape(message)):
        pack_padded_sequence(PADDED, lengths, **options)


def test_a_length_too_long_for_batch_first_padding_mentions_batch_first():
    """With batch_first=True the steps are dimension 1; the message says which dimension it read."""
    with pytest.raises(ValueError, match=re.escape("only seq_len=3 steps (dimension 1, with batch_first=True)")):
        pack_padded_sequence(torch.zeros(2, 3, 1), [4, 2], batch_first=True)


@pytest.mark.parametrize(
    "input, batch_first, message",
    [
        ([[1.0, 2.0], [3.0, 4.0]], False, "input must be a padded tensor shaped (seq_len, batch, *); got list"),
        (torch.zeros(4), False, "input must be a padded tensor shaped (seq_len, batch, *); got shape (4,)"),
        (torch.zeros(4), True, "input must be a padded tensor shaped (batch, seq_len, *); got shape (4,)"),
    ],
)
def test_an_input_that_is_not_a_padded_batch_is_explained(input, batch_first, message):
    """A list, or a tensor without both a time and a batch dimension, gets a ValueError naming the layout expected."""
    with pytest.raises(ValueError, match=re.escape(message)):
        pack_padded_sequence(input, [1], batch_first=batch_first)


def test_a_padded_batch_without_feature_dimensions_packs_as_torch_does():
    """(seq_len, batch) with no feature dimension is a padded batch too: torch's * may be empty."""
    padded = torch.arange(12.0).reshape(4, 3)
    ours = pack_padded_sequence(padded, [4, 2, 1])
    theirs = rnn.pack_padded_sequence(padded, [4, 2, 1])
    assert torch.equal(ours.data, theirs.data) and torch.equal(ours.batch_sizes, theirs.batch_sizes)


@pytest.mark.parametrize("lengths", [[4, 3.0, 2], [4, True, 2], (4.0, 3.0, 2.0)])
def test_lengths_that_are_not_whole_numbers_are_refused(lengths):
    """A float or a bool among the lengths is a mistake (a step count is a whole number): a TypeError says what to give."""
    with pytest.raises(TypeError, match=re.escape("lengths must be a list of ints or a 1-D int64 tensor on the CPU")):
        pack_padded_sequence(PADDED, lengths)


def test_a_tuple_of_lengths_is_accepted():
    """A tuple of ints counts as a list of them."""
    ours = pack_padded_sequence(PADDED, (4, 3, 1))
    assert ours.batch_sizes.tolist() == [3, 2, 2, 1]
