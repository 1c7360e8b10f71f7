"""Re-compute torch's recurrent layers step by step, with the equations written out.

`unroll(module, input, hx)` returns exactly what `module(input, hx)` returns, and `trace(...)`
returns the same result together with every intermediate value (one `Step` per layer,
direction and time step), for plots and explanations. This module checks the arguments and
handles the layouts (batch_first, unbatched, packed input); the loop itself, with the
equations, is helpers.recurrence's `run` and `Exact`. Only plain tensor operations are used:
no call to the module's forward, to torch's fused RNN kernels or to the nn.*Cell modules.

Supported: nn.RNN (tanh/relu), nn.LSTM (with proj_size) and nn.GRU with every option: bias,
batch_first, bidirectional, stacked layers, batched, unbatched or packed input, given or
default initial states, any float dtype, dropout in eval mode. Introduced in
notebooks/01_scalar_rnn.ipynb; packed input in notebooks/08_variable_length.ipynb, LSTM in
notebooks/10_lstm.ipynb, GRU in notebooks/11_gru.ipynb.

On CPU, torch may run float32 LSTMs through oneDNN, whose fused kernel rounds differently:
then results agree to float32 rounding (about 1e-7 relative) instead of bit for bit.
"""

from dataclasses import dataclass, field

import torch
from torch import Tensor
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

from helpers._validate import check_input, check_module, check_packed, check_states, student_facing
from helpers.recurrence import GATES, pack_like, run


@dataclass(frozen=True)
class Step:
    """One application of the recurrence, at one layer, direction and time step."""

    layer: int  # 0 reads the input; layer k > 0 reads layer k-1's output
    direction: int  # 0 forward (t = 0, 1, ...), 1 backward (t = T-1, T-2, ...)
    t: int  # position in the sequence, counted in time order for both directions
    x: Tensor  # (B, in_k): what this layer reads at time t; (in_k,) for unbatched input
    h_prev: Tensor  # (B, H): the state before this step (h_0 at a direction's first step)
    # (B, G*H), what goes into the activations: (x W_ih^T + b_ih) + (h_prev W_hh^T + b_hh);
    # for LSTM the four gates' inputs [i | f | g | o]; for GRU [r | z | n], where n's part
    # is x W_in^T + b_in + r * (h_prev W_hn^T + b_hn).
    pre_activation: Tensor
    h: Tensor  # (B, H) (LSTM with proj_size: (B, P)): the new state
    valid: Tensor | None = None  # (B,) bool, packed input only: which sequences have step t
    gates: dict = field(default_factory=dict)  # name -> (B, H): LSTM i, f, g, o; GRU r, z, n
    c_prev: Tensor | None = None  # (B, H), LSTM only: the cell state before this step
    c: Tensor | None = None  # (B, H), LSTM only: the new cell state


@dataclass(frozen=True)
class Trace:
    """What an unroll computed: the module's result and every step that produced it."""

    output: Tensor  # the top layer's state at every step, laid out like the module's output
    h_n: Tensor  # (num_layers * num_directions, B, H): every layer's final state
    c_n: Tensor | None  # LSTM only: every layer's final cell state, like h_n
    mode: str  # torch's name for the recurrence: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU"
    steps: tuple[Step, ...]  # in the order computed: layer 0 forward, layer 0 backward, ...
    num_layers: int
    num_directions: int
    batched: bool  # False for one unbatched sequence: then steps carry no batch dimension
    lengths: Tensor | None = None  # packed input only: each sequence's length, in batch order

    @property
    def result(self):
        """Exactly what `module(input, hx)` returns: (output, h_n), or (output, (h_n, c_n))."""
        return (self.output, (self.h_n, self.c_n)) if self.mode == "LSTM" else (self.output, self.h_n)

    @student_facing
    def steps_of(self, layer=0, direction=0):
        """The steps of one layer and direction, in time order (t = 0 first)."""
        layer, direction = self._index(layer, direction)
        chosen = [s for s in self.steps if s.layer == layer and s.direction == direction]
        return sorted(chosen, key=lambda s: s.t)

    @student_facing
    def stack(self, name, layer=0, direction=0):
        """One field (or gate) of every step of a layer and direction, in time order: (T, ...)."""
        gates = GATES[self.mode]
        fields = ["x", "h_prev", "pre_activation", "h"] + (["c_prev", "c"] if self.mode == "LSTM" else [])
        fields += list(gates) + (["valid"] if self.lengths is not None else [])
        if name not in fields:
            raise ValueError(f"Trace.stack: no field {name!r} for {self.mode}; choose one of {', '.join(fields)}.")
        steps = self.steps_of(layer, direction)
        return torch.stack([s.gates[name] if name in gates else getattr(s, name) for s in steps])

    @student_facing
    def table(self, layer=0, direction=0, batch=0, decimals=4):
        """A text table of one layer, direction and batch item, in the order the steps ran.

        Columns: t, x_t, h_prev, then the pre-activation (RNN), the gates and c_t (LSTM) or
        the gates (GRU), and h_t. Time steps are counted from 1 as in the equations (h_0 is
        the initial state), so row t shows `output[t - 1]`. The backward direction runs from
        the last step to the first: its h_prev is the state of step t + 1.
        """
        middle = {"LSTM": ["i", "f", "g", "o", "c"], "GRU": ["r", "z", "n"]}.get(self.mode, ["pre_activation"])
        columns = ["x", "h_prev", *middle, "h"]
        rows = [("t", "x_t", "h_prev", *(m.replace("_", "-") for m in middle), "h_t")]
        in_order = self.steps_of(layer, direction)
        for s in reversed(in_order) if direction else in_order:
            if s.valid is not None and not s.valid[batch]:
                continue  # padding: this sequence has no step t
            values = [s.gates[c] if c in s.gates else getattr(s, c) for c in columns]
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


@student_facing
def unroll(module, input, hx=None):
    """Return exactly what `module(input, hx)` returns, computed one step at a time."""
    return trace(module, input, hx).result


@student_facing
def trace(module, input, hx=None):
    """Unroll `module` over `input` and keep every intermediate value in a `Trace`."""
    check_module(module)
    lstm = module.mode == "LSTM"
    if isinstance(input, PackedSequence):
        check_packed(module, input)
        # Padded, in the batch's own order (torch also returns h_n in that order); the engine
        # skips the padding by masking each sequence's steps beyond its length.
        x, lengths = pad_packed_sequence(input)  # (T, B, in), (B,)
        batched = True
    else:
        batched, lengths = check_input(module, input), None
        x = input if batched else input.unsqueeze(1)  # (T, B, in) or (B, T, in)
        if batched and module.batch_first:
            x = x.transpose(0, 1)  # (T, B, in): time first inside the engine
    h_0, c_0 = check_states(module, hx, x.shape[1] if batched else None, x.dtype)
    if not batched:  # (L*D, H) -> (L*D, 1, H): the engine always has a batch dimension
        h_0, c_0 = h_0.unsqueeze(1), (c_0.unsqueeze(1) if lstm else None)

    num_directions = 2 if module.bidirectional else 1
    steps = []  # one Step a step, in the order computed
    outputs, h_n, c_n = run(module, x, h_0, c_0, lengths, record=lambda *fields: steps.append(Step(*fields)))
    output = outputs[-1]  # (T, B, D*H): the top layer's states
    if lengths is not None:
        output = pack_like(output, input)
    elif batched and module.batch_first:
        output = output.transpose(0, 1)  # (B, T, D*H)
    if not batched:
        output, h_n = output.squeeze(1), h_n.squeeze(1)  # (T, D*H), (L*D, H)
        c_n = c_n.squeeze(1) if lstm else None
        steps = [_unbatch(s) for s in steps]
    return Trace(output, h_n, c_n, module.mode, tuple(steps), module.num_layers, num_directions, batched, lengths)


def _unbatch(step):
    """The same step with the batch dimension of size 1 removed, as torch does for 2-D input."""

    def squeeze(value):
        return None if value is None else value.squeeze(0)

    return Step(
        step.layer,
        step.direction,
        step.t,
        *(squeeze(v) for v in (step.x, step.h_prev, step.pre_activation, step.h, step.valid)),
        gates={name: squeeze(v) for name, v in step.gates.items()},
        c_prev=squeeze(step.c_prev),
        c=squeeze(step.c),
    )


def _format_values(values, decimals):
    """A tensor's values as '[0.1234, -0.5]', or '0.1234' for a single value."""
    flat = values.detach().reshape(-1).tolist()
    text = ", ".join(f"{v:.{decimals}f}" for v in flat)
    return text if len(flat) == 1 else f"[{text}]"


__all__ = ["Step", "Trace", "trace", "unroll"]
