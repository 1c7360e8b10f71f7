"""Re-compute torch's recurrent layers step by step, with the equations written out.

`unroll(module, input, hx)` returns exactly what `module(input, hx)` returns, and `trace(...)`
returns the same result together with every intermediate value (one `Step` per layer,
direction and time step), for plots and explanations. Only plain tensor operations are used:
no call to the module's forward, to torch's fused RNN kernels or to the nn.*Cell modules.

Supported so far: nn.RNN with every option (tanh/relu, bias, batch_first, bidirectional,
stacked layers, batched, unbatched or packed input, given or default h_0, any float dtype,
dropout in eval mode). Introduced in notebooks/01_scalar_rnn.ipynb; packed input in
notebooks/08_variable_length.ipynb.
"""

from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

from helpers._validate import check_hx, check_input, check_module, check_packed


@dataclass(frozen=True)
class Step:
    """One application of the recurrence, at one layer, direction and time step."""

    layer: int  # 0 reads the input; layer k > 0 reads layer k-1's output
    direction: int  # 0 forward (t = 0, 1, ...), 1 backward (t = T-1, T-2, ...)
    t: int  # position in the sequence, counted in time order for both directions
    x: Tensor  # (B, in_k): what this layer reads at time t; (in_k,) for unbatched input
    h_prev: Tensor  # (B, H): the state before this step (h_0 at a direction's first step)
    pre_activation: Tensor  # (B, H): (x W_ih^T + b_ih) + (h_prev W_hh^T + b_hh)
    h: Tensor  # (B, H): the new state, tanh or relu of pre_activation
    valid: Tensor | None = None  # (B,) bool, packed input only: which sequences have step t


@dataclass(frozen=True)
class Trace:
    """What an unroll computed: the module's result and every step that produced it."""

    output: Tensor  # the top layer's state at every step, laid out like the module's output
    h_n: Tensor  # (num_layers * num_directions, B, H): every layer's final state
    steps: tuple[Step, ...]  # in the order computed: layer 0 forward, layer 0 backward, ...
    num_layers: int
    num_directions: int
    batched: bool  # False for one unbatched sequence: then steps carry no batch dimension
    lengths: Tensor | None = None  # packed input only: each sequence's length, in batch order

    @property
    def result(self):
        """Exactly what `module(input, hx)` returns: `(output, h_n)` for nn.RNN."""
        return self.output, self.h_n

    def steps_of(self, layer=0, direction=0):
        """The steps of one layer and direction, in time order (t = 0 first)."""
        layer, direction = self._index(layer, direction)
        chosen = [s for s in self.steps if s.layer == layer and s.direction == direction]
        return sorted(chosen, key=lambda s: s.t)

    def stack(self, name, layer=0, direction=0):
        """One field of every step of a layer and direction, stacked in time order: (T, ...)."""
        if name not in Step.__dataclass_fields__ or name in ("layer", "direction", "t"):
            fields = ", ".join(f for f in Step.__dataclass_fields__ if f not in ("layer", "direction", "t"))
            raise ValueError(f"Trace.stack: unknown field {name!r}; choose one of {fields}.")
        if name == "valid" and self.lengths is None:
            raise ValueError("Trace.stack: 'valid' exists only for packed input; here every step is valid.")
        return torch.stack([getattr(s, name) for s in self.steps_of(layer, direction)])

    def table(self, layer=0, direction=0, batch=0, decimals=4):
        """A text table of one layer, direction and batch item, in the order the steps ran.

        Columns: t, x_t, h_prev, pre-activation, h_t. Time steps are counted from 1 as in the
        equations (h_0 is the initial state), so row t shows `output[t - 1]`. The backward
        direction runs from the last step to the first: its h_prev is the state of step t + 1.
        """
        columns = ("x", "h_prev", "pre_activation", "h")
        rows = [("t", "x_t", "h_prev", "pre-activation", "h_t")]
        in_order = self.steps_of(layer, direction)
        for s in reversed(in_order) if direction else in_order:
            if s.valid is not None and not s.valid[batch]:
                continue  # padding: this sequence has no step t
            values = [getattr(s, c) for c in columns]
            if self.batched:
                if not -len(s.x) <= batch < len(s.x):
                    raise ValueError(f"batch={batch} does not exist: the batch has {len(s.x)} items.")
                values = [v[batch] for v in values]
            cells = [_format_values(v, decimals) for v in values]
            rows.append((str(s.t + 1), *cells))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        return "\n".join(lines)

    def _index(self, layer, direction):
        if not -self.num_layers <= layer < self.num_layers:
            raise ValueError(
                f"layer={layer} does not exist: this module has num_layers={self.num_layers} "
                f"(valid: 0 to {self.num_layers - 1}, or -1 for the top layer)."
            )
        if direction not in range(self.num_directions):
            valid = "0 (forward)" if self.num_directions == 1 else "0 (forward) or 1 (backward)"
            raise ValueError(f"direction={direction} does not exist: choose {valid}.")
        return layer % self.num_layers, direction


def unroll(module, input, hx=None):
    """Return exactly what `module(input, hx)` returns, computed one step at a time."""
    return trace(module, input, hx).result


def trace(module, input, hx=None):
    """Unroll `module` over `input` and keep every intermediate value in a `Trace`."""
    check_module(module)
    if isinstance(input, PackedSequence):
        check_packed(module, input)
        # Padded, in the batch's own order (torch also returns h_n in that order); padding is
        # skipped below by masking each sequence's steps beyond its length.
        x, lengths = pad_packed_sequence(input)  # (T, B, in), (B,)
        batched = True
    else:
        batched, lengths = check_input(module, input), None
        x = input if batched else input.unsqueeze(1)  # (T, B, in) or (B, T, in)
        if batched and module.batch_first:
            x = x.transpose(0, 1)  # (T, B, in): time first inside the engine
    h_0 = check_hx(module, hx, x.shape[1] if batched else None, x.dtype)
    h_0 = h_0 if batched else h_0.unsqueeze(1)  # (L*D, B, H)

    num_directions = 2 if module.bidirectional else 1
    steps, finals = [], []
    layer_input = x  # (T, B, in_0)
    for layer in range(module.num_layers):
        outputs = []
        for direction in range(num_directions):
            weights = _weights(module, layer, direction)
            h = h_0[layer * num_directions + direction]  # (B, H)
            hidden_states, h = _run_direction(module, weights, layer_input, h, lengths, (layer, direction), steps)
            outputs.append(hidden_states)
            finals.append(h)
        # Both directions of the next layer read the time-aligned concatenation [fwd_t, bwd_t].
        layer_input = torch.cat(outputs, dim=2)  # (T, B, D*H)

    output, h_n = layer_input, torch.stack(finals)  # (T, B, D*H), (L*D, B, H)
    if lengths is not None:
        output = _pack_like(output, input)
    elif batched and module.batch_first:
        output = output.transpose(0, 1)  # (B, T, D*H)
    if not batched:
        output, h_n = output.squeeze(1), h_n.squeeze(1)  # (T, D*H), (L*D, H)
        steps = [_unbatch(s) for s in steps]
    return Trace(output, h_n, tuple(steps), module.num_layers, num_directions, batched, lengths)


def _run_direction(module, weights, layer_input, h, lengths, where, steps):
    """Run one direction of one layer; return its states in time order (T, B, H) and the final h.

    With `lengths` (packed input), a sequence takes part only in its first lengths[b] steps:
    elsewhere it keeps its state and its output is 0, the value pad_packed_sequence pads with.
    So the forward run ends at each sequence's last step and the backward run starts there.
    """
    layer, direction = where
    W_ih, W_hh, b_ih, b_hh = weights
    activation = torch.tanh if module.nonlinearity == "tanh" else torch.relu
    seq_len = layer_input.shape[0]
    times = range(seq_len - 1, -1, -1) if direction else range(seq_len)
    # The input part x_t W_ih^T + b_ih does not depend on h, so, like torch, compute it for
    # every step in one product; only the hidden part has to wait for the previous step.
    input_parts = layer_input @ W_ih.T  # (T, B, H)
    if b_ih is not None:
        input_parts = input_parts + b_ih
    hidden_states = [None] * seq_len
    for t in times:
        x_t, h_prev = layer_input[t], h  # (B, in_k), (B, H)
        hidden_part = h_prev @ W_hh.T  # (B, H)
        if b_hh is not None:
            hidden_part = hidden_part + b_hh
        pre_activation = input_parts[t] + hidden_part
        h = activation(pre_activation)
        valid = None if lengths is None else t < lengths  # (B,)
        if valid is None:
            hidden_states[t] = h
        else:
            hidden_states[t] = torch.where(valid[:, None], h, torch.zeros_like(h))
            h = torch.where(valid[:, None], h, h_prev)
        steps.append(Step(layer, direction, t, x_t, h_prev, pre_activation, h, valid))
    return torch.stack(hidden_states), h  # (T, B, H), (B, H)


def _pack_like(output, packed):
    """Pack a padded (T, B, D*H) output the way `packed` is packed (torch returns it so)."""
    if packed.sorted_indices is not None:
        output = output.index_select(1, packed.sorted_indices)  # the packed, longest-first order
    # At time t the packed data holds the first batch_sizes[t] sequences: those still running.
    data = torch.cat([output[t, :size] for t, size in enumerate(packed.batch_sizes.tolist())])
    return PackedSequence(data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)


def _weights(module, layer, direction):
    """W_ih, W_hh, b_ih, b_hh of one layer and direction, by torch's parameter names."""
    suffix = f"_l{layer}" + ("_reverse" if direction else "")
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    return tuple(getattr(module, name + suffix, None) for name in names)


def _unbatch(step):
    """The same step with the batch dimension of size 1 removed, as torch does for 2-D input."""
    return Step(
        step.layer,
        step.direction,
        step.t,
        *(v.squeeze(0) for v in (step.x, step.h_prev, step.pre_activation, step.h)),
    )


def _format_values(values, decimals):
    """A tensor's values as '[0.1234, -0.5]', or '0.1234' for a single value."""
    flat = values.detach().reshape(-1).tolist()
    text = ", ".join(f"{v:.{decimals}f}" for v in flat)
    return text if len(flat) == 1 else f"[{text}]"


__all__ = ["Step", "Trace", "trace", "unroll"]
