"""One part at a time: cases for a step exercise that leave one term, or one gate, working.

The layer check (helpers.diagnose) runs a layer with all but one term zeroed, so that which
probes pass says which term is wrong; the LSTM and GRU step exercises get the same cases here
(`term_cases`), and cases that hold every gate but one open or shut through its biases
(`gate_cases`), so that which of those pass says which gate is wrong.
"""

import torch

SATURATED = 30.0  # a pre-activation this large makes sigmoid 1 (or 0 at -30) and tanh 1 in float32


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


def gate_cases(args, names, order, settings, sizes):
    """[(description, arguments)]: `args` once per entry of `settings`, some gates fixed through their rows.

    `order` is torch's order of the gate blocks in W_ih, W_hh, b_ih and b_hh ("ifgo", "rzn");
    `settings` is [(label, {gate: "open" | "shut" | "zero"}, what follows)]: a fixed gate's rows of
    W_ih and W_hh and its block of b_hh are zeroed and its block of b_ih set to +30 (open: sigmoid
    and tanh give 1), -30 (shut: sigmoid gives 0) or 0 (its pre-activation is 0). The label starts
    "gate " ("gate f alone"); what follows says what the right step then computes.
    """
    named = dict(zip(names, args, strict=True))
    hidden_size = named["W_hh"].shape[1]
    cases = []
    for label, fixed, follows in settings:
        changed = {name: arg.clone() for name, arg in named.items()}
        for gate, setting in fixed.items():
            rows = slice(order.index(gate) * hidden_size, (order.index(gate) + 1) * hidden_size)
            for name in ("W_ih", "W_hh", "b_hh"):
                changed[name][rows] = 0.0
            changed["b_ih"][rows] = {"open": SATURATED, "shut": -SATURATED, "zero": 0.0}[setting]
        held = ", ".join(f"{gate} {setting}" for gate, setting in fixed.items())
        cases.append((f"{label}: {held}, so {follows} ({sizes})", tuple(changed[name] for name in names)))
    return cases
