"""Wrong wiring of a layer's parameters and states, recognised with torch's own layer.

A student's layer that equals torch's layer rewired in one of these ways, on every probe where the
rewiring can happen (and equals torch's own layer on the others), has that slip:

- a weight or bias, both biases, both weights or all four parameters of one layer or direction
  used in another's place (an f-string forgotten: weight_hh_l0 in every layer; _reverse left off),
  or one layer's used in every layer above it;
- a bias left out in one layer or direction, or in every layer of one direction;
- (LSTM, GRU) two gates' blocks of rows exchanged, one gate computed with another's rows, or a
  square block of W_hh used without its transpose, in one parameter or in several at once;
- a layer or direction starting from another row of hx, or from zeros, instead of its own row
  (rows counted wrongly, only layer 0 given hx), hx and h_n both counted direction first, or
  (LSTM) c_0 and h_0 mixed up;
- each layer above 0 starting from the final state of the layer below (the state carried up);
- each layer above 0 reading something other than the layer below's output as it is: tanh applied to
  it again, the layer's own input added (a residual connection), its last state repeated, (LSTM) the
  cell states, or (bidirectional) the backward half still in the order it was computed;
- every step reading the input of the step before or after it;
- (packed input) hx's batch rows used in the batch's own order while the packed data runs longest
  first, with h_n put back in the batch's order or left longest first.

helpers.diagnose tries these when no catalogued bug (helpers.bugs) explains every probe; each is a
copy of the layer, or of hx, changed, then run by torch (a stack one layer at a time with
helpers.layer_parts), so no engine of ours is involved.
"""

import copy
from dataclasses import dataclass
from itertools import permutations

import torch
from torch.nn.utils.rnn import PackedSequence

from helpers import gate_blocks, layer_parts
from helpers.gates import ORDER

KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
# Parameters students take together: (what they are called, the kinds).
GROUPS = {
    "both biases": ("bias_ih", "bias_hh"),
    "both weights": ("weight_ih", "weight_hh"),
    "weights and biases": KINDS,
}
# A layer's parameter names, and the names the equations (and helpers.gate_blocks) give them.
STEP_NAMES = {"weight_ih": "W_ih", "weight_hh": "W_hh", "bias_ih": "b_ih", "bias_hh": "b_hh"}


class NotApplicableError(Exception):
    """The slip cannot happen on this probe's layer or state (it has no such layer, no hx, shapes differ)."""


class ShapesDifferError(NotApplicableError):
    """The slip puts a parameter where one of another shape belongs: code with it raises on this probe."""


@dataclass(frozen=True)
class WiringSlip:
    title: str
    fix: str
    rewire: object = None  # (module, hx) -> (module, hx), changed copies; raises NotApplicableError
    run: object = None  # or (module, input, hx) -> what the slipped layer returns, computed by torch

    def result(self, module, input, hx):
        """What torch computes with this slip on (module, input, hx); NotApplicableError where it cannot happen."""
        if self.run is not None:
            return self.run(module, input, hx)
        changed, changed_hx = self.rewire(module, hx)
        return changed(input, changed_hx)


def _suffix(layer, direction):
    return f"_l{layer}" + ("_reverse" if direction else "")


def _where(layer, direction, bidirectional):
    return f"layer {layer}" + ((" backward" if direction else " forward") if bidirectional else "")


def _own(kinds):
    kinds = " and ".join(f'f"{kind}_l{{layer}}"' for kind in kinds)
    return f'use each layer\'s and direction\'s own parameters: {kinds} + ("_reverse" if backward else "")'


def slips(module):
    """Every single rewiring of `module`'s parameters and initial state rows (see the module docstring); those
    that name layers above 0 adapt to the layer they are applied to (a probe may have more layers)."""
    return [
        *_substitutions(module),
        *_left_out(module),
        *_blocks(module),
        *_state_rows(module),
        *_handed_up(module),
        *_input_steps(module),
        *_packed_order(module),
    ]


def _substitutions(module):
    """One layer's or direction's parameters (one kind, or a group) used in another's place."""
    D = _D(module)
    places = [(layer, direction) for layer in range(module.num_layers) for direction in range(D)]
    where = {place: _where(*place, D == 2) for place in places}
    found = []
    for group, kinds in [*((None, (kind,)) for kind in KINDS), *GROUPS.items()]:  # one kind, or a group of them
        for target, source in permutations(places, 2):
            if group is None:
                used, meant = f"{kinds[0]}{_suffix(*source)}", f"{kinds[0]}{_suffix(*target)}"
                title = (
                    f"`{used}` used where `{meant}` belongs: {where[target]} computes with {where[source]}'s {kinds[0]}"
                )
            else:
                used = ", ".join(f"`{kind}{_suffix(*source)}`" for kind in kinds)
                title = f"{where[target]} computes with {where[source]}'s {group} ({used}) instead of its own"
            found.append(WiringSlip(title, _own(kinds), _weights_from(kinds, lambda m, t=target, s=source: {t: s})))
    for kinds in [*((kind,) for kind in KINDS), *GROUPS.values()]:
        names = " and ".join(kinds)
        if D == 2:
            found.append(
                WiringSlip(
                    f"the forward and backward directions' {names} exchanged in every layer: the forward run "
                    "computes with the `_reverse` ones and the backward run with the forward ones",
                    _own(kinds),
                    _weights_from(kinds, lambda m: {(k, d): (k, 1 - d) for k in range(m.num_layers) for d in range(2)}),
                )
            )
        for direction in range(D if D == 2 else 0):  # `_reverse` left off (or put on) in every layer
            other = "forward" if direction else "backward"
            found.append(
                WiringSlip(
                    f"the {'backward' if direction else 'forward'} direction computes with the {other} direction's "
                    f"{names} in every layer" + (" (`_reverse` left off)" if direction else ""),
                    _own(kinds),
                    _weights_from(kinds, lambda m, d=direction: {(k, d): (k, 1 - d) for k in range(m.num_layers)}),
                )
            )
        for below in range(max(module.num_layers - 1, 1)):
            names = " and ".join(f"`{kind}_l{below}`" for kind in kinds)
            found.append(
                WiringSlip(
                    f"every layer above layer {below} uses {names}"
                    + (f" (and `_l{below}_reverse` backward)" if D == 2 else "")
                    + " instead of its own",
                    _own(kinds),
                    _weights_from(
                        kinds,
                        lambda m, b=below: {(k, d): (b, d) for k in range(b + 1, m.num_layers) for d in range(_D(m))},
                    ),
                )
            )
            for direction in range(D if D == 2 else 0):  # one direction only: the other kept its own
                found.append(
                    WiringSlip(
                        f"every layer above layer {below} uses "
                        + " and ".join(f"`{kind}{_suffix(below, direction)}`" for kind in kinds)
                        + f" in its {'backward' if direction else 'forward'} direction instead of its own",
                        _own(kinds),
                        _weights_from(
                            kinds,
                            lambda m, b=below, d=direction: {(k, d): (b, d) for k in range(b + 1, m.num_layers)},
                        ),
                    )
                )
    return found


def _left_out(module):
    """A bias (or both) left out of one layer or direction, or out of one direction of every layer."""
    if not module.bias:
        return []
    D = _D(module)
    places = [(layer, direction) for layer in range(module.num_layers) for direction in range(D)]
    found = []
    for kinds in (("bias_ih",), ("bias_hh",), ("bias_ih", "bias_hh")):
        names = " and ".join(kinds)
        fix = f"add {names} in every layer and direction, as in the layer's equation"
        if len(places) > 1:
            for place in places:
                found.append(
                    WiringSlip(
                        f"{_where(*place, D == 2)} leaves out "
                        + " and ".join(f"`{kind}{_suffix(*place)}`" for kind in kinds),
                        fix,
                        _zeroed(kinds, lambda m, p=place: [p]),
                    )
                )
        for direction in range(D if D == 2 else 0):
            found.append(
                WiringSlip(
                    f"the {'backward' if direction else 'forward'} direction leaves out {names} (in every layer)",
                    fix,
                    _zeroed(kinds, lambda m, d=direction: [(k, d) for k in range(m.num_layers)]),
                )
            )
    return found


def _blocks(module):
    """(LSTM, GRU) gate blocks of rows exchanged, one gate given another's rows, or a W_hh block not transposed
    (helpers.gate_blocks), in every layer and direction."""
    return [WiringSlip(mixup.title, mixup.fix, _blocks_mixed(mixup)) for mixup in gate_blocks.mixups(module.mode)]


def _state_rows(module):
    """A layer or direction starting from the wrong row of hx, from zeros, or from the layer below's final state."""
    D = _D(module)
    places = [(layer, direction) for layer in range(module.num_layers) for direction in range(D)]
    where = {place: _where(*place, D == 2) for place in places}
    found = []
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
    found.append(
        WiringSlip(
            "every sequence starts from the first sequence's initial state (hx[row][0], broadcast over the "
            "batch) instead of its own, hx[row][b]",
            "index hx by layer and direction only, hx[row], a (batch, hidden_size) block: one initial state per "
            "sequence",
            _first_item_shared,
        )
    )
    if D == 2:
        found.append(
            WiringSlip(
                "the rows of hx and of h_n counted direction first, d * num_layers + l, not layer first, "
                "l * num_directions + d",
                ROW_FIX + ", in hx and in h_n alike: layer 0 forward, layer 0 backward, layer 1 forward, ...",
                run=_direction_major,
            )
        )
    if module.mode == "LSTM":
        for title, parts in LSTM_STATES.items():
            found.append(WiringSlip(title, LSTM_STATE_FIX, _states_from(parts)))
        for part, (name, other) in enumerate((("hidden state", "c_0"), ("cell state", "h_0"))):
            found.append(
                WiringSlip(
                    f"every layer's and direction's {name} starts from row 0 of {('h_0', 'c_0')[part]} "
                    f"(hx[{part}][0]); {other}'s rows are right",
                    ROW_FIX + ", in h_0 and c_0 alike: hx[0][row] and hx[1][row]",
                    _rows_from(lambda m: {row: 0 for row in range(1, m.num_layers * _D(m))}, parts=(part,)),
                )
            )
    for both in (True, False) if module.mode == "LSTM" else (True,):
        found.append(
            WiringSlip(
                "each layer above layer 0 starts from the final state of the layer below it"
                + (" (its h_n and c_n)" if module.mode == "LSTM" and both else "")
                + (" (its h_n; c_0 from its own row)" if module.mode == "LSTM" and not both else "")
                + ", not from its own row of hx",
                ROW_FIX + "; a layer reads the output of the layer below, never its final state",
                run=lambda m, i, h, both=both: _carried_up(m, i, h, both),
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
    "d * num_layers + l (direction first)": lambda l, d, L, D: d * L + l,  # noqa: E741
    "(num_layers - 1 - l) * num_directions + d (top layer first)": lambda l, d, L, D: (L - 1 - l) * D + d,  # noqa: E741
    "l * num_directions + (1 - d) (the two directions' rows exchanged)": lambda l, d, L, D: l * D + (D - 1 - d),  # noqa: E741
    "the last row, hx[-1], for every layer and direction": lambda l, d, L, D: L * D - 1,  # noqa: E741
}
# (LSTM) the initial states mixed up: for each title, where (h_0, c_0) come from (0: hx[0], 1: hx[1], None: zeros).
LSTM_STATES = {
    "the cell state starts from h_0 (hx[0]) instead of c_0 (hx[1])": (0, 0),
    "the hidden state starts from c_0 (hx[1]) instead of h_0 (hx[0])": (1, 1),
    "h_0 and c_0 exchanged: hx read as (c_0, h_0)": (1, 0),
    "c_0 left out: the cell state starts from zeros": (0, None),
    "h_0 left out: the hidden state starts from zeros, only c_0 is used": (None, 1),
}
LSTM_STATE_FIX = "nn.LSTM's hx is the pair (h_0, c_0): h_0 = hx[0] starts the hidden state, c_0 = hx[1] the cell"


def _D(module):
    return 2 if module.bidirectional else 1


def _weights_from(kinds, sources_of):
    """A rewiring that gives each target (layer, direction) of sources_of(module) the source's parameters `kinds`."""

    def rewire(module, hx):
        changed = copy.deepcopy(module)
        sources = sources_of(module)
        if not sources:
            raise NotApplicableError
        with torch.no_grad():
            for target, source in sources.items():
                for kind in kinds:
                    meant, used = f"{kind}{_suffix(*target)}", f"{kind}{_suffix(*source)}"
                    if not (hasattr(module, meant) and hasattr(module, used)):
                        raise NotApplicableError
                    if getattr(module, meant).shape != getattr(module, used).shape:
                        raise ShapesDifferError
                    getattr(changed, meant).copy_(getattr(module, used))
        return changed, hx

    return rewire


def _zeroed(kinds, places_of):
    """A rewiring with the parameters `kinds` of each (layer, direction) of places_of(module) set to zero."""

    def rewire(module, hx):
        changed = copy.deepcopy(module)
        with torch.no_grad():
            for place in places_of(module):
                for kind in kinds:
                    name = f"{kind}{_suffix(*place)}"
                    if not hasattr(module, name):
                        raise NotApplicableError
                    getattr(changed, name).zero_()
        return changed, hx

    return rewire


def _blocks_mixed(mixup):
    """A rewiring with the gate blocks of every layer's and direction's parameters mixed up as `mixup` says."""

    def rewire(module, hx):
        changed = copy.deepcopy(module)
        G = len(ORDER[module.mode])
        applied = False
        with torch.no_grad():
            for name, param in module.named_parameters():
                kind = STEP_NAMES.get(name.split("_l")[0])
                if kind is None or kind not in mixup.kinds:
                    continue
                new = gate_blocks.mixed(param, kind, mixup, G)
                if new is None:
                    raise NotApplicableError
                getattr(changed, name).copy_(new)
                applied = True
        if not applied:
            raise NotApplicableError  # bias=False: no bias to mix
        return changed, hx

    return rewire


def _rows_from(sources_of, parts=None):
    """A rewiring of hx: each target row of sources_of(module) replaced by the source row (None: zeros), in every
    part of hx, or (LSTM) in the parts numbered in `parts` only (0: h_0, 1: c_0)."""

    def rewire(module, hx):
        sources = sources_of(module)
        if hx is None or not sources or all(target == source for target, source in sources.items()):
            raise NotApplicableError
        states = hx if isinstance(hx, tuple) else (hx,)
        if parts is not None and len(states) < 2:
            raise NotApplicableError
        changed = []
        for number, state in enumerate(states):
            if parts is not None and number not in parts:
                changed.append(state)
                continue
            if state.dim() < 2 or max([*sources, *(s for s in sources.values() if s is not None)]) >= state.shape[0]:
                raise NotApplicableError
            new = state.clone()
            for target, source in sources.items():
                new[target] = 0 if source is None else state[source]
            changed.append(new)
        return module, tuple(changed) if isinstance(hx, tuple) else changed[0]

    return rewire


def _first_item_shared(module, hx):
    """A rewiring of hx in which every sequence's initial state is the first sequence's."""
    states = hx if isinstance(hx, tuple) else (hx,)
    if hx is None or states[0].dim() < 3 or states[0].shape[1] < 2:
        raise NotApplicableError  # no hx, unbatched, or a batch of one: nothing to share
    shared = tuple(state[:, :1].expand_as(state).clone() for state in states)
    return module, shared if isinstance(hx, tuple) else shared[0]


def _states_from(parts):
    """(LSTM) a rewiring of hx = (h_0, c_0): each part taken from hx[parts[k]], or zeros where that is None."""

    def rewire(module, hx):
        if not isinstance(hx, tuple) or hx[0].shape != hx[1].shape:
            raise NotApplicableError
        return module, tuple(
            torch.zeros_like(hx[k]) if source is None else hx[source] for k, source in enumerate(parts)
        )

    return rewire


def _direction_major(module, input, hx):
    """torch's layer with hx's rows read, and h_n's rows written, in the order d * num_layers + l."""
    L, D = module.num_layers, _D(module)
    if L < 2 or D < 2:
        raise NotApplicableError  # with one layer or one direction both orders are the same
    order = [d * L + k for k in range(L) for d in range(D)]  # torch's row k * D + d is the student's row d * L + k
    read = torch.tensor(order)
    written = torch.tensor([order.index(row) for row in range(L * D)])
    if hx is not None:
        hx = tuple(part[read] for part in hx) if isinstance(hx, tuple) else hx[read]
    output, final = module(input, hx)
    return output, tuple(part[written] for part in final) if isinstance(final, tuple) else final[written]


def _carried_up(module, input, hx, both):
    """torch's stack run one layer at a time, each layer above 0 starting from the layer below's final state
    (LSTM: both h and c, or h only when not `both`, c then from its own row)."""
    L, D = module.num_layers, _D(module)
    if L < 2:
        raise NotApplicableError
    lstm = module.mode == "LSTM"
    if not both and hx is None:
        raise NotApplicableError  # c from zeros either way: the same as carrying h only from zeros
    layer_input, finals = input, []
    state = layer_parts.rows(hx, slice(0, D))
    for k in range(L):
        part = layer_parts.layers(module, k, k + 1)
        if k > 0:
            own = layer_parts.rows(hx, slice(k * D, (k + 1) * D))
            if lstm and not both:
                state = (state[0], own[1] if own is not None else torch.zeros_like(state[1]))
        layer_input, state = part(layer_input, state)
        finals.append(state)
    if lstm:
        return layer_input, tuple(torch.cat([f[j] for f in finals]) for j in range(2))
    return layer_input, torch.cat(finals)


HANDED_UP_FIX = "hand each layer the output of the layer below as it is, (seq_len, batch, num_directions * hidden_size)"


def _handed_up(module):
    """Each layer above 0 reading something other than the layer below's output (the module docstring)."""
    if module.num_layers < 2:
        return []
    found = [
        WiringSlip(
            "tanh applied again to what each layer hands the layer above: it reads tanh(output of the layer "
            "below), not that output itself (already the activation's result)",
            HANDED_UP_FIX + ": no activation between the layers",
            run=lambda m, i, h: _stack_reading(m, i, h, lambda k, part, below, x, state: _apply(below, torch.tanh)),
        ),
        WiringSlip(
            "tanh applied again to every layer's output, the top one's too: each layer reads tanh(output of the "
            "layer below), and output is tanh of the top layer's states",
            HANDED_UP_FIX + "; and return the top layer's states themselves as output",
            run=lambda m, i, h: _stack_reading(
                m,
                i,
                h,
                lambda k, part, below, x, state: _apply(below, torch.tanh),
                top=lambda out, x: _apply(out, torch.tanh),
            ),
        ),
    ]
    for first in (1, 0):
        found.append(
            WiringSlip(
                f"a residual connection: each layer from layer {first} up adds its own input to its output "
                "(output of layer k = its states + what it reads), which nn.RNN, nn.LSTM and nn.GRU never do",
                HANDED_UP_FIX + ", and return the top layer's states as output, with nothing added",
                run=lambda m, i, h, first=first: _residual(m, i, h, first),
            )
        )
    found.append(
        WiringSlip(
            "each layer above layer 0 reads only the last state of the layer below (output[-1], or its h_n), the "
            "same at every step, instead of that layer's state at each step",
            HANDED_UP_FIX + ": the state of every step, output[t] at step t, not the final one repeated",
            run=lambda m, i, h: _stack_reading(m, i, h, _last_repeated),
        )
    )
    if module.mode == "LSTM":
        found.append(
            WiringSlip(
                "each layer above layer 0 reads the cell states c_t of the layer below instead of its hidden "
                "states h_t",
                HANDED_UP_FIX + ": the h_t of every step (output), never the cell states",
                run=_reads_cells,
            )
        )
    if module.bidirectional:
        found.append(
            WiringSlip(
                "the backward half handed up still in the order it was computed (its state for the last step "
                "first): each layer above 0 reads the backward states reversed in time, and only the top layer's "
                "are put back in time order",
                "put each layer's backward states back in time order (flip them, or store the state for step t at t) "
                "before the layer above reads them: it reads [forward h_t, backward h_t] at every t",
                run=lambda m, i, h: _stack_reading(m, i, h, _backward_reversed),
            )
        )
    return found


def _apply(value, fn):
    """fn applied to a layer's output, a tensor or a PackedSequence's data."""
    if isinstance(value, PackedSequence):
        return value._replace(data=fn(value.data))
    return fn(value)


def _stack_reading(module, input, hx, hand_up, top=None):
    """torch's stack run one layer at a time, the layer above layer k reading hand_up(k, layer k alone, its output,
    its input, its hx rows) instead of layer k's output; `top(output, input of the top layer)` changes the top
    layer's output."""
    L, D = module.num_layers, _D(module)
    if L < 2:
        raise NotApplicableError
    layer_input, finals = input, []
    for k in range(L):
        part = layer_parts.layers(module, k, k + 1)
        own = layer_parts.rows(hx, slice(k * D, (k + 1) * D))
        output, state = part(layer_input, own)
        finals.append(state)
        if k < L - 1:
            layer_input = hand_up(k, part, output, layer_input, own)
        else:
            layer_input = output if top is None else top(output, layer_input)
    if module.mode == "LSTM":
        return layer_input, tuple(torch.cat([f[j] for f in finals]) for j in range(2))
    return layer_input, torch.cat(finals)


def _residual(module, input, hx, first):
    """torch's stack with each layer from `first` up adding what it reads to its output (widths must agree)."""

    def add(output, x):
        if _width(output) != _width(x):
            raise NotApplicableError
        return _apply(output, lambda data: data + (x.data if isinstance(x, PackedSequence) else x))

    return _stack_reading(
        module, input, hx, lambda k, part, output, x, state: add(output, x) if k >= first else output, top=add
    )


def _width(value):
    return (value.data if isinstance(value, PackedSequence) else value).shape[-1]


def _time_dim(module, value):
    return 1 if module.batch_first and value.dim() == 3 else 0


def _last_repeated(k, part, output, x, state):
    """The layer below's output at its last step, output[-1], repeated at every step."""
    if isinstance(output, PackedSequence):
        raise NotApplicableError  # each sequence ends at its own step
    dim = _time_dim(part, output)
    last = output.narrow(dim, output.shape[dim] - 1, 1)
    return last.expand_as(output).clone()


def _backward_reversed(k, part, output, x, state):
    """[forward h_t, backward h_{T-1-t}]: the backward half left in the order it was computed."""
    if isinstance(output, PackedSequence):
        raise NotApplicableError  # shorter sequences make "reversed" ambiguous
    H = output.shape[-1] // 2
    forward, backward = output[..., :H], output[..., H:]
    return torch.cat([forward, backward.flip(_time_dim(part, output))], dim=-1)


def _reads_cells(module, input, hx):
    """(LSTM, one direction, no projection) torch's stack with each layer above 0 reading the cell states below."""
    if module.bidirectional or module.proj_size or isinstance(input, PackedSequence):
        raise NotApplicableError

    def cells(k, part, output, x, state):
        dim = _time_dim(part, x)
        c_states = []
        for t in range(x.shape[dim]):
            _, state = part(x.narrow(dim, t, 1), state)
            c_states.append(state[1].transpose(0, 1) if part.batch_first and x.dim() == 3 else state[1])
        return torch.cat(c_states, dim=dim)

    return _stack_reading(module, input, hx, cells)


def _input_steps(module):
    """Every step reading the input of the step before or after (x[t - 1], x[t + 1]), wrapping around at the ends as a
    negative index or a roll does."""
    found = []
    for shift, which in ((1, "before"), (-1, "after")):
        wrap = "x[-1], the last input, at t = 0" if shift == 1 else "x[0] at the last step"
        found.append(
            WiringSlip(
                f"each step reads the input of the step {which} it (x[t {'-' if shift == 1 else '+'} 1]; {wrap}): the "
                "inputs are one step out of line with the states",
                "step t reads x_t = input[t] (input[:, t] when batch_first): the input and the state of one step have "
                "the same index",
                run=lambda m, i, h, shift=shift: _rolled(m, i, h, shift),
            )
        )
    return found


def _rolled(module, input, hx, shift):
    """torch's layer on the input rolled by `shift` steps along time."""
    if isinstance(input, PackedSequence):
        raise NotApplicableError
    dim = 1 if module.batch_first and input.dim() == 3 else 0
    if input.shape[dim] < 2:
        raise NotApplicableError
    return module(input.roll(shift, dims=dim), hx)


def _packed_order(module):
    """(packed, unsorted input) hx's rows used in the batch's order against the packed data's longest-first order."""
    fix = (
        "a PackedSequence runs its sequences longest first: row i of its data belongs to sequence "
        "sorted_indices[i], so index hx by it (hx[:, input.sorted_indices]) and put h_n back with "
        "h_n[:, input.unsorted_indices] (nn.RNN does both for you)"
    )
    return [
        WiringSlip(
            "hx's rows used in the batch's own order while the packed data runs longest first: each sequence "
            "starts from another sequence's initial state (hx[:, sorted_indices] is missing)",
            fix,
            run=lambda m, i, h: _hx_unsorted(m, i, h, False),
        ),
        WiringSlip(
            "hx's rows used in the batch's own order while the packed data runs longest first, and h_n left "
            "longest first: both need the packed order's indices (hx[:, sorted_indices], h_n[:, unsorted_indices])",
            fix,
            run=lambda m, i, h: _hx_unsorted(m, i, h, True),
        ),
    ]


def _hx_unsorted(module, input, hx, h_n_sorted):
    """torch's layer with sequence sorted_indices[i] starting from hx[:, i] (and h_n in sorted order if asked)."""
    if not isinstance(input, PackedSequence) or input.sorted_indices is None or hx is None:
        raise NotApplicableError
    order = input.unsorted_indices
    moved = tuple(part[:, order] for part in hx) if isinstance(hx, tuple) else hx[:, order]
    output, final = module(input, moved)
    if not h_n_sorted:
        return output, final
    keep = input.sorted_indices
    return output, tuple(part[:, keep] for part in final) if isinstance(final, tuple) else final[:, keep]
