"""Small generated data sets for training sequence models: seeded, instant, nothing to download.

`first_sign(num_sequences, seq_len, noise, seed)` makes a task that needs memory: the label is
the sign of a sequence's first value, and every later value is noise. A model that looks only
at the last step, or at any single late step, can do no better than a coin toss.
Introduced in notebooks/09_sequence_model.ipynb.
"""

import math
import numbers

import torch

from helpers._validate import student_facing


@student_facing
def first_sign(num_sequences, seq_len, noise=0.5, seed=0):
    """Sequences that start with +1 or -1 and continue with noise; the label says which: (N, T, 1), (N,).

    Step 0 holds the signal, +1 (label 1) or -1 (label 0), each with probability 1/2; steps 1 to
    seq_len - 1 hold Gaussian noise with standard deviation `noise`, unrelated to the label.
    Returns `inputs` (num_sequences, seq_len, 1) float32, batch first, and `labels`
    (num_sequences,) int64, ready for nn.CrossEntropyLoss. The same seed gives the same data.
    """
    _check_count("num_sequences", num_sequences, "the number of sequences to make")
    _check_count("seq_len", seq_len, "the number of time steps per sequence")
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real):
        raise TypeError(f"noise is the standard deviation of the later steps, a number like 0.5; got {noise!r}.")
    if not math.isfinite(noise) or noise < 0:
        raise ValueError(
            f"noise is the standard deviation of the later steps, so it must be 0 or more (and finite); got {noise}."
        )
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, e.g. seed=0; got {seed!r}.")
    generator = torch.Generator().manual_seed(int(seed))
    labels = torch.randint(0, 2, (num_sequences,), generator=generator)  # (N,) int64: 1 for +1, 0 for -1
    inputs = noise * torch.randn(num_sequences, seq_len, 1, generator=generator)  # (N, T, 1)
    inputs[:, 0, 0] = 2.0 * labels - 1.0  # the signal at step 0: +1 or -1
    return inputs, labels


def _check_count(name, value, meaning):
    """Raise unless `value` is a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} is {meaning}, a whole number like 100; got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} is {meaning}, so it must be at least 1; got {value}.")


__all__ = ["first_sign"]
