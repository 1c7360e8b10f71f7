"""One gate at a time: an LSTM's or a GRU's weights with every gate but one held open or shut.

A gate's pre-activation is its rows of x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh. Zero its rows of
W_ih and W_hh and its block of b_hh, and set its block of b_ih to +30, and the gate is open (sigmoid
and tanh give 1 in float32); at -30 it is shut (sigmoid gives 0); at 0 its pre-activation is 0 (a
tanh gives 0). With the others held, what the layer computes depends on one gate alone, so which of
these settings a student's code gets wrong says which gate to look at first. The step exercises
(helpers/solutions/terms.py) and helpers.diagnose both use them.
"""

import torch

SATURATED = 30.0
ORDER = {"LSTM": "ifgo", "GRU": "rzn"}  # torch's order of the gate blocks in W_ih, W_hh, b_ih and b_hh

# (label, the gates held and how, what the right step then computes). A label names the gates left
# working (WORKING below): "gate f alone", "gates r and n", "gate n with r shut".
SETTINGS = {
    "LSTM": [
        ("gate f alone", {"i": "shut", "g": "zero", "o": "open"}, "c_t = f * c_prev and h_t = tanh(c_t)"),
        ("gate i alone", {"f": "shut", "g": "open", "o": "open"}, "c_t = i and h_t = tanh(c_t)"),
        ("gate g alone", {"f": "shut", "i": "open", "o": "open"}, "c_t = g and h_t = tanh(c_t)"),
        ("gate o alone", {"f": "shut", "i": "open", "g": "open"}, "c_t = 1 and h_t = o * tanh(1)"),
    ],
    "GRU": [
        ("gate z alone", {"r": "open", "n": "zero"}, "n = 0 and h_t = z * h_prev"),
        ("gate n alone", {"r": "open", "z": "shut"}, "h_t = n = tanh(x_t W_in^T + b_in + h_prev W_hn^T + b_hn)"),
        ("gate n with r shut", {"r": "shut", "z": "shut"}, "h_t = n = tanh(x_t W_in^T + b_in)"),
        ("gates r and n", {"z": "shut"}, "h_t = n = tanh(x_t W_in^T + b_in + r * (h_prev W_hn^T + b_hn))"),
    ],
}
VALUES = {"open": SATURATED, "shut": -SATURATED, "zero": 0.0}
NAMES = {
    "i": "the input gate i",
    "f": "the forget gate f",
    "g": "the candidate g",
    "o": "the output gate o",
    "r": "the reset gate r",
    "z": "the update gate z",
    "n": "the candidate n",
}
# Where each gate enters the new state, as torch computes it.
USES = {
    "i": "c_t = f * c_prev + i * g",
    "f": "c_t = f * c_prev + i * g",
    "g": "c_t = f * c_prev + i * g",
    "o": "h_t = o * tanh(c_t)",
    "r": "n = tanh(x_t W_in^T + b_in + r * (h_prev W_hn^T + b_hn))",
    "z": "h_t = (1 - z) * n + z * h_prev",
    "n": "h_t = (1 - z) * n + z * h_prev",
}


def held(fixed):
    """'i shut, g zero, o open': how a setting holds its gates, in words."""
    return ", ".join(f"{gate} {setting}" for gate, setting in fixed.items())


@torch.no_grad()
def hold(W_ih, W_hh, b_ih, b_hh, order, fixed):
    """Hold the gates in `fixed` ({gate: "open" | "shut" | "zero"}) in place: their rows of W_ih and W_hh and
    their block of b_hh zeroed, their block of b_ih set to +30, -30 or 0. `order` is the blocks' order."""
    size = W_ih.shape[0] // len(order)
    for gate, setting in fixed.items():
        rows = slice(order.index(gate) * size, (order.index(gate) + 1) * size)
        for tensor in (W_ih, W_hh, b_hh):
            tensor[rows] = 0.0
        b_ih[rows] = VALUES[setting]


# The gates each setting leaves working, by its label: those it does not hold.
WORKING = {label: [g for g in ORDER[mode] if g not in fixed] for mode in SETTINGS for label, fixed, _ in SETTINGS[mode]}


def suspects(wrong, right):
    """The gates to look at first, from the labels of the settings that depart (`wrong`) and those that do not:
    the gates working in a departing setting and in no right one; else every gate working in a departing one."""
    found = [g for label in wrong for g in WORKING[label] if not any(g in WORKING[r] for r in right)]
    return list(dict.fromkeys(found or [g for label in wrong for g in WORKING[label]]))


def hint(wrong, right, where):
    """The hint for a gate-by-gate result, or None when every setting departs or none does. `where` names the
    checks that list them ("the gate cases below")."""
    if not wrong or not right:
        return None
    gates = suspects(wrong, right)
    one = len(gates) == 1
    uses = list(dict.fromkeys(USES[g] for g in gates))
    return (
        f"with the other gates held open or shut through their biases ({where}), {len(wrong)} of "
        f"{len(wrong) + len(right)} depart{'s' if len(wrong) == 1 else ''}: look first at {_listed([NAMES[g] for g in gates])}: "
        f"how {'it is' if one else 'they are'} computed ({'its' if one else 'their'} rows of the weights, {'its' if one else 'their'} activation) and where "
        f"{'it enters' if one else 'they enter'} the new state: {'; '.join(uses)}."
    )


def _listed(words):
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
