"""One part at a time: cases for a step exercise that leave one term, or one gate, working.

The layer check (helpers.diagnose) runs a layer with all but one term zeroed, so that which
probes pass says which term is wrong; the LSTM and GRU step exercises get the same cases here
(`term_cases`), and cases that hold every gate but one open or shut through its biases
(`gate_cases`, with helpers.gates), so that which of those pass says which gate is wrong.
"""

import torch

from helpers import gates


def term_cases(args, names, terms, sizes):
    """[(description, arguments)]: `args` once per term in `terms`, the other terms' tensors zeroed.

    `names` names each argument, in order; `terms` lists the arguments that make the terms (W_ih for
    x_t W_ih^T, ...), each of which acts alone in one case; `sizes` says what `args` are, in words.
    """
    cases = []
    for kept in terms:
        zeroed = [name for name in terms if name != kept]
        changed = tuple(torch.zeros_like(arg) if name in zeroed else arg for name, arg in zip(names, args, strict=True))
        cases.append((f"only {kept} acting: {', '.join(zeroed)} zeroed ({sizes})", changed))
    return cases


def gate_cases(args, names, mode, sizes):
    """[(description, arguments)]: `args` once per setting of helpers.gates.SETTINGS[mode] ("LSTM", "GRU"),
    every gate but the ones it names held open or shut through their rows of W_ih, W_hh, b_ih and b_hh."""
    cases = []
    for label, fixed, follows in gates.SETTINGS[mode]:
        changed = {name: arg.clone() for name, arg in zip(names, args, strict=True)}
        gates.hold(changed["W_ih"], changed["W_hh"], changed["b_ih"], changed["b_hh"], gates.ORDER[mode], fixed)
        cases.append((f"{label}: {gates.held(fixed)}, so {follows} ({sizes})", tuple(changed[name] for name in names)))
    return cases
