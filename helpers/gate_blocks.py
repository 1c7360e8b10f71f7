"""Gate blocks mixed up: two gates' rows exchanged, a gate given another's rows, a W_hh block not transposed.

An LSTM's or a GRU's weights hold every gate at once: W_ih, W_hh, b_ih and b_hh stack one block of
rows per gate, in torch's order (helpers.gates.ORDER: i, f, g, o; r, z, n). A student who slices or
chunks the blocks can take them in another library's order, copy a line and keep the other gate's
block, or multiply by a square block of W_hh without its transpose. `mixups(mode)` lists each such
slip once, in words; helpers.wiring_slips applies them to a layer's parameters (helpers.diagnose)
and helpers.argument_slips to a step's arguments (helpers.exercises).
"""

from dataclasses import dataclass
from itertools import combinations, permutations

from helpers.gates import NAMES, ORDER

KINDS = ("W_ih", "W_hh", "b_ih", "b_hh")
# The parameters a slip mixes the blocks of: each alone, the pair that acts on x_t or on h, all four.
GROUPS = {
    "W_ih": ("W_ih",),
    "W_hh": ("W_hh",),
    "the bias b_ih": ("b_ih",),
    "the bias b_hh": ("b_hh",),
    "W_ih and b_ih": ("W_ih", "b_ih"),
    "W_hh and b_hh": ("W_hh", "b_hh"),
    "both biases": ("b_ih", "b_hh"),
    "both weights": ("W_ih", "W_hh"),
    "every weight and bias": KINDS,
}


@dataclass(frozen=True)
class Mixup:
    title: str
    fix: str
    kinds: tuple  # the parameters it changes, by their names in the equations: "W_ih", "b_hh"
    moves: dict  # {gate block: the block whose rows it takes}; empty for a transposed block
    transposed: tuple = ()  # the blocks of W_hh used without their transpose


def mixups(mode):
    """Every single mix-up of the gate blocks of an LSTM ("LSTM") or a GRU ("GRU"); none for another mode."""
    order = ORDER.get(mode)
    if order is None:
        return []
    fix = (
        f"torch keeps the gates' rows in the order {', '.join(order)}: "
        f"{', '.join(f'{kind}.chunk({len(order)})' for kind in KINDS)} give {', '.join(order)} in that order, "
        "each gate its own block"
    )
    found = []
    for group, kinds in GROUPS.items():
        whole = kinds == KINDS  # every row of the gate from the other: the other gate itself, used in its place
        for a, b in combinations(range(len(order)), 2):
            title = (
                f"{NAMES[order[a]]} and {NAMES[order[b]]} exchanged: each used where the other belongs (their blocks "
                "of every weight and bias swapped)"
                if whole
                else f"{NAMES[order[a]]} and {NAMES[order[b]]} exchanged in {group}: each computed with the other's rows"
            )
            found.append(Mixup(title, fix, kinds, {a: b, b: a}))
        for a, b in permutations(range(len(order)), 2):
            title = (
                f"{NAMES[order[b]]} used where {NAMES[order[a]]} belongs ({order[a]} computed with {order[b]}'s "
                "block of every weight and bias)"
                if whole
                else f"{NAMES[order[a]]} computed with {NAMES[order[b]]}'s rows of {group} (a block copied from the "
                "gate beside it)"
            )
            found.append(Mixup(title, fix, kinds, {a: b}))
    for a in range(len(order)):
        found.append(
            Mixup(
                f"{NAMES[order[a]]}'s block of W_hh used without its transpose: h_prev @ W_h{order[a]} where "
                f"h_prev @ W_h{order[a]}.T belongs (the block is square, so the shapes fit)",
                f"multiply by the transpose of each block, h_prev @ W_h{order[a]}.T, as with the whole h_prev @ W_hh.T",
                ("W_hh",),
                {},
                transposed=(a,),
            )
        )
    found.append(
        Mixup(
            "every gate's block of W_hh used without its transpose: h_prev @ W_hX where h_prev @ W_hX.T belongs, "
            f"for each gate X of {', '.join(order)} (the blocks are square, so the shapes fit)",
            "multiply by the transpose of each block, h_prev @ W_hX.T, as with the whole h_prev @ W_hh.T",
            ("W_hh",),
            {},
            transposed=tuple(range(len(order))),
        )
    )
    return found


def mixed(tensor, kind, mixup, gates):
    """`tensor` (a parameter of kind `kind`, with `gates` blocks of rows) with `mixup` applied; None when the mix-up
    leaves this kind alone or cannot happen on it (rows not a multiple of `gates`, a block not square)."""
    if kind not in mixup.kinds or tensor.shape[0] % gates:
        return None
    size = tensor.shape[0] // gates
    new = tensor.detach().clone()
    if mixup.transposed:
        if tensor.dim() != 2 or tensor.shape[1] != size:
            return None
        for block in mixup.transposed:
            rows = slice(block * size, (block + 1) * size)
            new[rows] = tensor.detach()[rows].T
        return new
    blocks = tensor.detach().chunk(gates)
    for target, source in mixup.moves.items():
        new[target * size : (target + 1) * size] = blocks[source]
    return new
