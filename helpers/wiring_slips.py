"""Wrong wiring in a stacked or bidirectional layer, recognised with torch's own layer.

A student's layer that equals torch's layer rewired in one of these ways, on every probe where the
rewiring can happen (and equals torch's own layer on the others), has that slip:

- a weight or bias of one layer or direction used in another's place (an f-string forgotten:
  weight_hh_l0 in every layer; _reverse left off), or one layer's used in every layer above it;
- a layer or direction starting from another row of hx, or from zeros, instead of its own row
  (rows counted wrongly, only layer 0 given hx).

helpers.diagnose tries these when no catalogued bug (helpers.bugs) explains every probe; each is a
copy of the layer, or of hx, changed, then run by torch, so no engine of ours is involved.
"""

import copy
from dataclasses import dataclass
from itertools import permutations

import torch

KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


class NotApplicableError(Exception):
    """The slip cannot happen on this probe's layer or state (it has no such layer, no hx, shapes differ)."""


@dataclass(frozen=True)
class WiringSlip:
    title: str
    fix: str
    rewire: object  # (module, hx) -> (module, hx), changed copies; raises NotApplicableError


def _suffix(layer, direction):
    return f"_l{layer}" + ("_reverse" if direction else "")


def _where(layer, direction, bidirectional):
    return f"layer {layer}" + ((" backward" if direction else " forward") if bidirectional else "")


def slips(module):
    """Every single rewiring of `module`'s weights and initial state rows (see the module docstring); those that
    name layers above 0 adapt to the layer they are applied to (a probe may have more layers)."""
    D = 2 if module.bidirectional else 1
    places = [(layer, direction) for layer in range(module.num_layers) for direction in range(D)]
    where = {place: _where(*place, D == 2) for place in places}
    found = []
    for kind in KINDS:
        for target, source in permutations(places, 2):
            used, meant = f"{kind}{_suffix(*source)}", f"{kind}{_suffix(*target)}"
            found.append(
                WiringSlip(
                    f"`{used}` used where `{meant}` belongs: {where[target]} computes with {where[source]}'s {kind}",
                    f"use each layer's and direction's own parameters: f\"{kind}_l{{layer}}\" + "
                    '("_reverse" if backward else "")',
                    _weights_from(kind, lambda m, t=target, s=source: {t: s}),
                )
            )
        found.append(
            WiringSlip(
                f"every layer above layer 0 uses `{kind}_l0`"
                + (" (and `_l0_reverse` backward)" if D == 2 else "")
                + " instead of its own",
                f'use each layer\'s own parameters: f"{kind}_l{{layer}}"',
                _weights_from(kind, lambda m: {(k, d): (0, d) for k in range(1, m.num_layers) for d in range(_D(m))}),
            )
        )
        for direction in range(D if D == 2 else 0):  # one direction only: the other kept its own
            found.append(
                WiringSlip(
                    f"every layer above layer 0 uses `{kind}{_suffix(0, direction)}` in its "
                    f"{'backward' if direction else 'forward'} direction instead of its own",
                    f'use each layer\'s own parameters: f"{kind}_l{{layer}}"',
                    _weights_from(kind, lambda m, d=direction: {(k, d): (0, d) for k in range(1, m.num_layers)}),
                )
            )
    for target, source in permutations(places, 2):
        row, other = target[0] * D + target[1], source[0] * D + source[1]
        found.append(
            WiringSlip(
                f"{where[target]} starts from hx[{other}] instead of its own row hx[{row}]",
                ROW_FIX,
                _rows_from(lambda m, r=row, o=other: {r: o}),
            )
        )
    for target in places:
        row = target[0] * D + target[1]
        found.append(
            WiringSlip(
                f"{where[target]} starts from zeros instead of its row hx[{row}]",
                ROW_FIX,
                _rows_from(lambda m, r=row: {r: None}),
            )
        )
    found.append(
        WiringSlip(
            "only layer 0 starts from hx; every layer above it starts from zeros",
            ROW_FIX,
            _rows_from(lambda m: {k * _D(m) + d: None for k in range(1, m.num_layers) for d in range(_D(m))}),
        )
    )
    for formula, row in ROW_FORMULAS.items():
        found.append(
            WiringSlip(
                f"the row of hx for layer l, direction d taken as {formula}, not l * num_directions + d",
                ROW_FIX,
                _rows_from(
                    lambda m, row=row: {
                        k * _D(m) + d: row(k, d, m.num_layers, _D(m)) for k in range(m.num_layers) for d in range(_D(m))
                    }
                ),
            )
        )
    return found


ROW_FIX = "the row of h_0 (and c_0) for layer l and direction d is l * num_directions + d"
# Row formulas students write for layer l, direction d, with L layers and D directions.
ROW_FORMULAS = {
    "l + d": lambda l, d, L, D: l + d,  # noqa: E741
    "l * num_layers + d": lambda l, d, L, D: l * L + d,  # noqa: E741
    "l (the direction left out)": lambda l, d, L, D: l,  # noqa: E741
    "d (the layer left out)": lambda l, d, L, D: d,  # noqa: E741
}


def _D(module):
    return 2 if module.bidirectional else 1


def _weights_from(kind, sources_of):
    """A rewiring that gives each target (layer, direction) of sources_of(module) the source's `kind` parameter."""

    def rewire(module, hx):
        changed = copy.deepcopy(module)
        sources = sources_of(module)
        if not sources:
            raise NotApplicableError
        with torch.no_grad():
            for target, source in sources.items():
                meant, used = f"{kind}{_suffix(*target)}", f"{kind}{_suffix(*source)}"
                if not (hasattr(module, meant) and hasattr(module, used)):
                    raise NotApplicableError
                if getattr(module, meant).shape != getattr(module, used).shape:
                    raise NotApplicableError
                getattr(changed, meant).copy_(getattr(module, used))
        return changed, hx

    return rewire


def _rows_from(sources_of):
    """A rewiring of hx: each target row of sources_of(module) replaced by the source row (None: zeros)."""

    def rewire(module, hx):
        sources = sources_of(module)
        if hx is None or not sources or all(target == source for target, source in sources.items()):
            raise NotApplicableError
        states = hx if isinstance(hx, tuple) else (hx,)
        changed = []
        for state in states:
            if state.dim() < 2 or max([*sources, *(s for s in sources.values() if s is not None)]) >= state.shape[0]:
                raise NotApplicableError
            new = state.clone()
            for target, source in sources.items():
                new[target] = 0 if source is None else state[source]
            changed.append(new)
        return module, tuple(changed) if isinstance(hx, tuple) else changed[0]

    return rewire
