"""Pack a padded batch as torch.nn.utils.rnn.pack_padded_sequence does, after checking lengths.

torch's own checks catch some bad lengths with terse messages and let one through: a length
longer than the padded sequences makes a broken PackedSequence that fails only inside the RNN.
This version says what is wrong with which sequence, and how to fix it, then calls torch.
Introduced in notebooks/08_variable_length.ipynb.
"""

import torch
from torch import Tensor
from torch.nn.utils import rnn

from helpers._validate import student_facing


@student_facing
def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """torch.nn.utils.rnn.pack_padded_sequence with lengths checked first (same arguments)."""
    if not isinstance(input, Tensor) or input.dim() < 2:
        layout = "(batch, seq_len, *)" if batch_first else "(seq_len, batch, *)"
        got = f"shape {tuple(input.shape)}" if isinstance(input, Tensor) else type(input).__name__
        raise ValueError(f"input must be a padded tensor shaped {layout}; got {got}.")
    batch, seq_len = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    values = _as_list(lengths)
    if len(values) != batch:
        raise ValueError(
            f"lengths has {len(values)} entries but the batch has {batch} sequences: give one length per sequence."
        )
    for i, length in enumerate(values):
        if length < 1:
            raise ValueError(
                f"sequence {i} has length {length}: an RNN cannot read an empty sequence. Leave it out "
                "of the batch (or give it at least one step)."
            )
        if length > seq_len:
            raise ValueError(
                f"sequence {i} has length {length}, but the padded tensor has only seq_len={seq_len} "
                f"steps{' (dimension 1, with batch_first=True)' if batch_first else ' (dimension 0)'}. "
                "Is batch_first set as the tensor is laid out?"
            )
    if enforce_sorted and values != sorted(values, reverse=True):
        raise ValueError(
            f"lengths {values} are not in decreasing order, which enforce_sorted=True requires. Pass "
            "enforce_sorted=False (torch sorts the batch itself and returns h_n in your order), or "
            "sort the batch longest first."
        )
    return rnn.pack_padded_sequence(input, torch.tensor(values), batch_first, enforce_sorted)


def _as_list(lengths):
    """lengths as a list of ints, or a TypeError that says what lengths should be."""
    if isinstance(lengths, Tensor):
        if lengths.device.type != "cpu":
            raise TypeError(f"lengths is on {lengths.device}; packing reads it on the CPU: pass lengths.cpu().")
        if lengths.is_floating_point() or lengths.dtype == torch.bool:
            raise TypeError(f"lengths has dtype {lengths.dtype}; lengths count steps: pass lengths.long().")
        if lengths.dim() != 1:
            raise TypeError(f"lengths must be 1-D, one entry per sequence; got shape {tuple(lengths.shape)}.")
        return lengths.tolist()
    if isinstance(lengths, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in lengths):
        return list(lengths)
    raise TypeError(f"lengths must be a list of ints or a 1-D int64 tensor on the CPU; got {lengths!r}.")
