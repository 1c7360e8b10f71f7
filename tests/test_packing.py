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
