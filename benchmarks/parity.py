"""Measure how far helpers.unroll is from torch over a grid of nn.RNN options at full size.

Run with `make parity`. Prints the worst absolute difference per dtype (output and h_n) and
the configuration where it happened; exits 1 if a tolerance (1e-6 float32, 1e-12 float64) is
exceeded.
"""

import itertools
import sys
import time

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

from helpers import unroll

TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-12}
SEQ_LEN, BATCH, INPUT_SIZE, HIDDEN_SIZE = 50, 3, 8, 64


def worst_error(seed, dtype, nonlinearity, bias, bidirectional, num_layers, batch_first, layout, give_hx):
    """Max |unroll - torch| over output and h_n for one configuration."""
    torch.manual_seed(seed)
    module = nn.RNN(
        INPUT_SIZE,
        HIDDEN_SIZE,
        num_layers=num_layers,
        nonlinearity=nonlinearity,
        bias=bias,
        batch_first=batch_first,
        bidirectional=bidirectional,
        dtype=dtype,
    ).eval()
    states = num_layers * (2 if bidirectional else 1)
    if layout == "unbatched":
        input = torch.randn(SEQ_LEN, INPUT_SIZE, dtype=dtype)
        hx = torch.randn(states, HIDDEN_SIZE, dtype=dtype) if give_hx else None
    else:
        input = torch.randn(*((BATCH, SEQ_LEN) if batch_first else (SEQ_LEN, BATCH)), INPUT_SIZE, dtype=dtype)
        hx = torch.randn(states, BATCH, HIDDEN_SIZE, dtype=dtype) if give_hx else None
    if layout == "packed":  # unsorted lengths: torch sorts, and returns h_n in the batch's order
        input = pack_padded_sequence(input, [SEQ_LEN // 3, SEQ_LEN, SEQ_LEN // 2], batch_first, enforce_sorted=False)
    with torch.no_grad():
        ours, theirs = unroll(module, input, hx), module(input, hx)
    pairs = [(ours[0], theirs[0]), (ours[1], theirs[1])]
    if isinstance(theirs[0], PackedSequence):
        pairs[0] = (ours[0].data, theirs[0].data)
    return max((a - b).abs().max().item() for a, b in pairs)


def main():
    options = list(
        itertools.product(
            [torch.float32, torch.float64],
            ["tanh", "relu"],
            [True, False],  # bias
            [False, True],  # bidirectional
            [1, 2, 3],  # num_layers
            [False, True],  # batch_first
            ["batched", "unbatched", "packed"],  # input layout
            [False, True],  # give hx
        )
    )
    start = time.perf_counter()
    worst = {}
    for seed, config in enumerate(options):
        error = worst_error(seed, *config)
        dtype = config[0]
        if error >= worst.get(dtype, (-1.0,))[0]:
            worst[dtype] = (error, config)
    elapsed = time.perf_counter() - start
    print(f"{len(options)} configurations, T={SEQ_LEN}, H={HIDDEN_SIZE}, input_size={INPUT_SIZE}, {elapsed:.1f} s")
    failed = False
    for dtype, (error, config) in worst.items():
        names = "nonlinearity bias bidirectional num_layers batch_first input hx".split()
        where = ", ".join(f"{n}={v}" for n, v in zip(names, config[1:], strict=True))
        ok = error <= TOLERANCE[dtype]
        failed |= not ok
        print(f"{str(dtype):14} worst |unroll - torch| = {error:.2e} (tolerance {TOLERANCE[dtype]:.0e}) at {where}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
