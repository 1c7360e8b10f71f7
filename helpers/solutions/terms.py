"""Term-by-term cases for a step exercise: one case again with every term zeroed but one.

The layer check (helpers.diagnose) runs a layer with all but one term zeroed, so that which
probes pass says which term is wrong; the LSTM and GRU step exercises get the same cases here.
"""

import torch


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
