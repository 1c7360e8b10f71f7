"""Measure how far helpers.unroll is from torch over a grid of options at full size (make parity).

For each module (nn.RNN tanh and relu, nn.LSTM, nn.LSTM with proj_size, nn.GRU) and dtype, it
prints the worst absolute difference over the whole result (output, h_n and c_n) and the
configuration where it happened. Exits 1 if a tolerance (1e-6 float32, 1e-12 float64) is
exceeded.
"""

import itertools
import sys
import time
import warnings

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

from helpers import unroll

TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-12}
SEQ_LEN, BATCH, INPUT_SIZE, HIDDEN_SIZE, PROJ_SIZE = 50, 3, 8, 64, 16
MODULES = {  # label -> (class, extra options)
    "RNN tanh": (nn.RNN, {"nonlinearity": "tanh"}),
    "RNN relu": (nn.RNN, {"nonlinearity": "relu"}),
    "LSTM": (nn.LSTM, {}),
    "LSTM proj_size": (nn.LSTM, {"proj_size": PROJ_SIZE}),
    "GRU": (nn.GRU, {}),
}
OPTIONS = {  # name -> values tried
    "bias": [True, False],
    "bidirectional": [False, True],
    "num_layers": [1, 2, 3],
    "batch_first": [False, True],
    "input": ["batched", "unbatched", "packed"],
    "hx": [False, True],
}


def flatten(result):
    """The tensors of a module's result: output (a packed one by its data), h_n and c_n."""
    output, state = result
    states = list(state) if isinstance(state, tuple) else [state]
    return [output.data if isinstance(output, PackedSequence) else output, *states]


def worst_error(seed, label, dtype, bias, bidirectional, num_layers, batch_first, layout, give_hx):
    """Max |unroll - torch| over the whole result for one configuration."""
    torch.manual_seed(seed)
    cls, extra = MODULES[label]
    module = cls(
        INPUT_SIZE,
        HIDDEN_SIZE,
        num_layers,
        bias=bias,
        batch_first=batch_first,
        bidirectional=bidirectional,
        dtype=dtype,
        **extra,
    ).eval()
    rows = num_layers * (2 if bidirectional else 1)
    batch = () if layout == "unbatched" else (BATCH,)
    if layout == "unbatched":
        input = torch.randn(SEQ_LEN, INPUT_SIZE, dtype=dtype)
    else:
        input = torch.randn(*((BATCH, SEQ_LEN) if batch_first else (SEQ_LEN, BATCH)), INPUT_SIZE, dtype=dtype)
    hx = None
    if give_hx:
        h_0 = torch.randn(rows, *batch, extra.get("proj_size", HIDDEN_SIZE), dtype=dtype)
        hx = (h_0, torch.randn(rows, *batch, HIDDEN_SIZE, dtype=dtype)) if cls is nn.LSTM else h_0
    if layout == "packed":  # unsorted lengths: torch sorts, and returns h_n in the batch's order
        input = pack_padded_sequence(input, [SEQ_LEN // 3, SEQ_LEN, SEQ_LEN // 2], batch_first, enforce_sorted=False)
    with torch.no_grad():
        ours, theirs = flatten(unroll(module, input, hx)), flatten(module(input, hx))
    return max((a - b).abs().max().item() for a, b in zip(ours, theirs, strict=True))


def main():
    warnings.filterwarnings("ignore", message="LSTM with projections is not supported with oneDNN")
    start, failed, count = time.perf_counter(), False, 0
    print(f"T={SEQ_LEN}, H={HIDDEN_SIZE}, input_size={INPUT_SIZE}, batch={BATCH}; every combination of")
    print("  " + "; ".join(f"{name} {values}" for name, values in OPTIONS.items()))
    for label in MODULES:
        for dtype in (torch.float32, torch.float64):
            worst, where = -1.0, None
            for seed, config in enumerate(itertools.product(*OPTIONS.values())):
                error = worst_error(seed, label, dtype, *config)
                count += 1
                if error > worst:
                    worst, where = error, config
            ok = worst <= TOLERANCE[dtype]
            failed |= not ok
            at = ", ".join(f"{n}={v}" for n, v in zip(OPTIONS, where, strict=True))
            print(f"{label:15} {str(dtype):14} worst {worst:.2e} (tolerance {TOLERANCE[dtype]:.0e}) at {at}")
    print(f"{count} configurations in {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
