"""torch's recurrence, layer by layer, direction by direction, step by step: the one engine of helpers.

`run(module, x, h_0, c_0, lengths)` computes a recurrent layer on time-first, padded, batched
tensors, with plain tensor operations. Each piece of the recurrence is a method of `Exact` (a
seam): which weights a direction uses, the input and hidden parts of a step, the cell, what a step
stores and carries on, the order of the steps, where a direction starts, how the directions
combine. `EXACT` is torch's behaviour; `helpers.unroll` runs it and keeps every step, and
`helpers.bugs` overrides seams to compute a student's mistakes. Layouts (batch_first, unbatched,
packed input) are the callers': here a layer is always (T, B, features).
"""

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence

# Torch's order of the gates in the stacked weights and biases (weight_ih_l0 is [W_ii | W_if | W_ig | W_io]
# for LSTM, [W_ir | W_iz | W_in] for GRU): the one place it is written; plots and widgets read it here.
GATES = {"RNN_TANH": (), "RNN_RELU": (), "LSTM": ("i", "f", "g", "o"), "GRU": ("r", "z", "n")}


def weights(module, layer, direction):
    """W_ih, W_hh, b_ih, b_hh and (LSTM with proj_size) W_hr, by torch's parameter names."""
    suffix = f"_l{layer}" + ("_reverse" if direction else "")
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
    return tuple(getattr(module, name + suffix, None) for name in names)


def pack_like(output, packed):
    """Pack a padded (T, B, D*H) output the way `packed` is packed (torch returns it so)."""
    if packed.sorted_indices is not None:
        output = output.index_select(1, packed.sorted_indices)  # the packed, longest-first order
    # At time t the packed data holds the first batch_sizes[t] sequences: those still running.
    data = torch.cat([output[t, :size] for t, size in enumerate(packed.batch_sizes.tolist())])
    return PackedSequence(data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)


def rnn_cell(activation):
    """h = activation(input part + hidden part)."""

    def cell(input_part, hidden_part, h_prev, c_prev):
        pre_activation = input_part + hidden_part
        return activation(pre_activation), None, pre_activation, {}

    return cell


def _split(part, mode):
    """A (B, G*H) stack of gate inputs cut into its G gates, by name, in torch's order (GATES)."""
    names = GATES[mode]
    return dict(zip(names, part.chunk(len(names), dim=-1), strict=True))  # name -> (B, H)


def lstm_cell(input_part, hidden_part, h_prev, c_prev):
    """Gates i, f, g, o from one (B, 4H) pre-activation; c = f*c_prev + i*g, h = o*tanh(c)."""
    pre_activation = input_part + hidden_part  # (B, 4H): the gates' inputs, stacked in torch's order
    a = _split(pre_activation, "LSTM")
    i, f, g, o = torch.sigmoid(a["i"]), torch.sigmoid(a["f"]), torch.tanh(a["g"]), torch.sigmoid(a["o"])
    c = f * c_prev + i * g  # forget part of the old cell, write the gated candidate
    h = o * torch.tanh(c)
    return h, c, pre_activation, {"i": i, "f": f, "g": g, "o": o}


def gru_cell(input_part, hidden_part, h_prev, c_prev):
    """r and z from both parts; n = tanh(x part + r * h part); h = (1 - z) * n + z * h_prev."""
    x = _split(input_part, "GRU")  # (B, H) each: x W_i*^T + b_i*
    hp = _split(hidden_part, "GRU")  # (B, H) each: h_prev W_h*^T + b_h*
    a = {"r": x["r"] + hp["r"], "z": x["z"] + hp["z"]}  # what goes into each activation
    r, z = torch.sigmoid(a["r"]), torch.sigmoid(a["z"])
    a["n"] = x["n"] + r * hp["n"]  # torch resets (h_prev W_hn^T + b_hn), not h_prev itself
    n = torch.tanh(a["n"])
    h = n + z * (h_prev - n)  # = (1 - z) * n + z * h_prev, in the order torch computes it
    pre_activation = torch.cat([a[name] for name in GATES["GRU"]], dim=-1)  # (B, 3H), stacked like the weights
    return h, None, pre_activation, {"r": r, "z": z, "n": n}


# Each cell maps (input part, hidden part, h_prev, c_prev) to (h, c, pre_activation, gates); c is None outside LSTM.
CELLS = {"RNN_TANH": rnn_cell(torch.tanh), "RNN_RELU": rnn_cell(torch.relu), "LSTM": lstm_cell, "GRU": gru_cell}


@dataclass(frozen=True)
class Direction:
    """One direction of one layer, with the weights its steps use (from the `weights` seam)."""

    module: nn.RNNBase
    layer: int  # 0 reads the input; layer k > 0 reads layer k-1's output
    direction: int  # 0 forward, 1 backward
    W_ih: Tensor  # (G*H, in_k)
    W_hh: Tensor  # (G*H, P): P = proj_size for an LSTM with one, else H
    b_ih: Tensor | None  # (G*H,); None with bias=False
    b_hh: Tensor | None  # (G*H,)
    W_hr: Tensor | None  # (P, H): LSTM with proj_size only

    @property
    def row(self):
        """This direction's row of h_0 and h_n: layer 0 forward, layer 0 backward, layer 1 forward, ..."""
        return self.layer * (2 if self.module.bidirectional else 1) + self.direction


class Exact:
    """The seams of the recurrence, each as torch computes it; a subclass overrides some to compute another layer."""

    def weights(self, module, layer, direction):
        """(W_ih, W_hh, b_ih, b_hh, W_hr) of this layer and direction."""
        return weights(module, layer, direction)

    def layer_input(self, x, below, at):
        """What a direction reads, (T, B, in_k): the layer below's output (x itself for layer 0)."""
        return below

    def start(self, h_0, c_0, finals, at):
        """The state a direction starts from, (h, c): its own row of h_0 and c_0 (c None outside LSTM)."""
        return h_0[at.row], None if c_0 is None else c_0[at.row]

    def lengths(self, lengths, at):
        """Each sequence's length as this direction runs it, (B,), or None: every sequence takes all T steps."""
        return lengths

    def times(self, seq_len, at):
        """The order of the steps: t = 0, 1, ... forward; t = T-1, T-2, ... backward."""
        return range(seq_len - 1, -1, -1) if at.direction else range(seq_len)

    def input_parts(self, layer_input, at):
        """x_t W_ih^T + b_ih for every step at once, (T, B, G*H): like torch, since it does not depend on h."""
        input_parts = layer_input @ at.W_ih.T  # (T, B, G*H)
        return input_parts if at.b_ih is None else input_parts + at.b_ih

    def previous(self, h, c, start):
        """The state a step reads, (h_prev, c_prev): the one the step before carried on."""
        return h, c

    def hidden_part(self, h_prev, at):
        """h_prev W_hh^T + b_hh, (B, G*H): the part that has to wait for the previous step."""
        hidden_part = h_prev @ at.W_hh.T  # (B, G*H)
        return hidden_part if at.b_hh is None else hidden_part + at.b_hh

    def cell(self, input_part, hidden_part, h_prev, c_prev, at):
        """(h, c, pre_activation, gates) of one step, by the module's mode (CELLS)."""
        return CELLS[at.module.mode](input_part, hidden_part, h_prev, c_prev)

    def project(self, h, at):
        """h W_hr^T, (B, P), for an LSTM with proj_size; h itself otherwise."""
        return h if at.W_hr is None else h @ at.W_hr.T

    def stored(self, h_prev, h):
        """What output[t] holds: the step's new state."""
        return h

    def carry(self, h, c):
        """The state the next step reads: the new one, with its gradient path."""
        return h, c

    def finish(self, per_step, h, at):
        """A direction's outputs, one (B, H) a step in time order, once it has run."""
        return per_step

    def combine(self, per_direction, starts):
        """(layer output, next layer's input), each (T, B, D*H): the time-aligned [forward_t, backward_t]."""
        output = torch.cat(per_direction, dim=2)  # (T, B, D*H)
        return output, output


EXACT = Exact()


def run(module, x, h_0, c_0=None, lengths=None, how=EXACT, record=None):
    """Run every layer and direction of `module` over x (T, B, in); return (each layer's output, h_n, c_n).

    h_0 is (L*D, B, P), c_0 (L*D, B, H) for LSTM and None otherwise; with `lengths` (B,), a
    sequence takes part only in its first lengths[b] steps: elsewhere it keeps its state and its
    output is 0, the value pad_packed_sequence pads with (so the forward run ends at each
    sequence's last step and the backward run starts there). The outputs are (T, B, D*H), bottom
    layer first; h_n and c_n hold each direction's final state, by row (`Direction.row`).
    `record`, when given, is called at every step with the fields of a helpers.unroll.Step, in its
    order: (layer, direction, t, x_t, h_prev, pre_activation, h, valid, gates, c_prev, c).
    """
    outputs, finals = [], []  # finals: (h, c) of each direction run, in row order
    below = x  # (T, B, in_0)
    for layer in range(module.num_layers):
        per_direction, starts = [], []
        for direction in range(2 if module.bidirectional else 1):
            at = Direction(module, layer, direction, *how.weights(module, layer, direction))
            layer_input = how.layer_input(x, below, at)  # (T, B, in_k)
            starts.append(how.start(h_0, c_0, finals, at))
            per_step, final = _run_direction(how, at, layer_input, starts[-1], how.lengths(lengths, at), record)
            per_direction.append(per_step)
            finals.append(final)
        layer_output, below = how.combine(per_direction, starts)
        outputs.append(layer_output)
    h_n = torch.stack([h for h, _ in finals])  # (L*D, B, P)
    c_n = None if c_0 is None else torch.stack([c for _, c in finals])  # (L*D, B, H)
    return outputs, h_n, c_n


def _run_direction(how, at, layer_input, start, lengths, record):
    """One direction of one layer: its outputs in time order (T, B, P), and its final (h, c)."""
    input_parts = how.input_parts(layer_input, at)  # (T, B, G*H)
    per_step = [None] * layer_input.shape[0]
    h, c = start  # (B, P), (B, H) or None
    for t in how.times(len(per_step), at):
        x_t = layer_input[t]  # (B, in_k)
        h_prev, c_prev = how.previous(h, c, start)
        hidden_part = how.hidden_part(h_prev, at)  # (B, G*H)
        h_new, c_new, pre_activation, gates = how.cell(input_parts[t], hidden_part, h_prev, c_prev, at)
        h_new = how.project(h_new, at)  # (B, P)
        stored = how.stored(h_prev, h_new)
        valid = None if lengths is None else t < lengths  # (B,)
        if valid is not None:  # a finished sequence stores 0 and keeps its state
            keep = valid[:, None]
            stored = torch.where(keep, stored, torch.zeros_like(stored))
            h_new = torch.where(keep, h_new, h)
            c_new = None if c_new is None else torch.where(keep, c_new, c)
        per_step[t] = stored
        h, c = how.carry(h_new, c_new)
        if record is not None:
            record(at.layer, at.direction, t, x_t, h_prev, pre_activation, h, valid, gates, c_prev, c)
    return torch.stack(how.finish(per_step, h, at)), (h, c)


__all__ = [
    "CELLS",
    "EXACT",
    "GATES",
    "Direction",
    "Exact",
    "gru_cell",
    "lstm_cell",
    "pack_like",
    "rnn_cell",
    "run",
    "weights",
]
