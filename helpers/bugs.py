"""The catalogue of named bugs: what a hand-written RNN, LSTM or GRU computes with each one.

`helpers.diagnose` names a student's bug by finding the catalogued bug whose result equals the
student's on every probe. Each `Bug` is one deviation from the correct recurrence: a set of seams
of the one engine, helpers.recurrence, overridden (`_WithBug`, a subclass of its `Exact`), or,
for the layout (batch_first, hx, h_n), a step before or after the engine in `run`.
`run(module, input, hx)` without a bug equals `module(input, hx)`. Introduced in
notebooks/02_feature_vectors.ipynb.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

from helpers import recurrence


@dataclass(frozen=True)
class Bug:
    """A typical mistake in a hand-written recurrent layer."""

    name: str  # an identifier, e.g. "not_reversed"
    title: str  # what the code does wrong, in a few words
    fix: str  # the one-line repair
    applies: Callable = lambda module, packed: True  # can this bug show for this layer and input?


def _bidirectional(module, packed):
    return module.bidirectional


def _stacked(module, packed):
    return module.num_layers > 1


def _stacked_bidirectional(module, packed):
    return module.num_layers > 1 and module.bidirectional


CATALOGUE = (
    Bug(
        "h_prev_zero",
        "h_{t-1} never reaches the step: the term h_{t-1} W_hh^T is missing, or reads h_t's own still-empty slot",
        "add the previous step's state: h_t = f(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)",
    ),
    Bug(
        "h_0_every_step",
        "the state is not carried: every step starts again from h_0",
        "update the state inside the loop (h = new state) so that step t reads h_{t-1}",
    ),
    Bug(
        "unbatched_read_as_batch",
        "the unbatched input (seq_len, input_size) read as ONE step of a batch of seq_len sequences "
        "(input.unsqueeze(0), or input[None], read time first): every step starts again from h_0",
        "an unbatched input is one sequence: loop over its rows, x_t = input[t], carrying h from step to step (or "
        "give it the batch dimension in the middle: input.unsqueeze(1), (seq_len, 1, input_size))",
        lambda module, packed: not packed and not module.batch_first,
    ),
    Bug(
        "output_h_prev",
        "output[t] holds h_{t-1}: the state was stored before the step updated it",
        "append the new state h_t to the outputs after computing it, not the state the step started from",
    ),
    Bug(
        "bias_ih_missing",
        "b_ih left out",
        "add both biases: x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh",
        lambda module, packed: module.bias,
    ),
    Bug(
        "bias_hh_missing",
        "b_hh left out",
        "add both biases: x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh",
        lambda module, packed: module.bias,
    ),
    Bug(
        "biases_missing",
        "both biases left out",
        "add b_ih to the input part and b_hh to the hidden part (a layer has both unless bias=False)",
        lambda module, packed: module.bias,
    ),
    Bug(
        "W_ih_not_transposed",
        "W_ih not transposed: x_t @ W_ih instead of x_t @ W_ih.T",
        "torch stores W_ih as (rows = hidden units, columns = inputs): use x_t @ W_ih.T",
    ),
    Bug(
        "W_hh_not_transposed",
        "W_hh not transposed: h_{t-1} @ W_hh instead of h_{t-1} @ W_hh.T",
        "torch stores W_hh as (rows = new units, columns = old units): use h_prev @ W_hh.T",
    ),
    Bug(
        "weights_not_transposed",
        "neither weight transposed: x_t @ W_ih and h_{t-1} @ W_hh",
        "torch stores weights as (out, in): use x_t @ W_ih.T and h_prev @ W_hh.T",
    ),
    Bug(
        "weights_swapped",
        "the input and hidden weights swapped: x_t meets W_hh and h_{t-1} meets W_ih",
        "x_t goes with weight_ih (input-to-hidden), h_{t-1} with weight_hh (hidden-to-hidden)",
    ),
    Bug(
        "wrong_nonlinearity",
        "the wrong nonlinearity: tanh where the layer uses relu, or relu where it uses tanh",
        "use the layer's own: module.nonlinearity is 'tanh' (the default) or 'relu'",
        lambda module, packed: module.mode.startswith("RNN"),
    ),
    Bug(
        "no_nonlinearity",
        "no nonlinearity: h_t is the pre-activation itself",
        "apply the activation to the sum: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)",
        lambda module, packed: module.mode.startswith("RNN"),
    ),
    Bug(
        "h_0_ignored",
        "h_0 ignored: the loop starts from zeros even when hx is given",
        "start each layer and direction from its row of hx (zeros only when hx is None)",
    ),
    Bug(
        "h_0_first_row",
        "every layer (and direction) starts from h_0[0]",
        "layer k, direction d starts from h_0[k * num_directions + d]",
        lambda module, packed: module.num_layers * (1 + module.bidirectional) > 1,
    ),
    Bug(
        "h_0_direction_major",
        "h_0's rows read in the wrong order: row d * num_layers + k for layer k, direction d",
        "the row of layer k, direction d is k * num_directions + d (layer 0 forward, layer 0 backward, layer 1 ...)",
        _stacked_bidirectional,
    ),
    Bug(
        "batch_first_ignored",
        "batch_first not honoured: the first dimension read as time",
        "with batch_first=True the input is (batch, seq_len, features): time is dimension 1",
        lambda module, packed: module.batch_first and not packed,
    ),
    Bug(
        "output_not_batch_first",
        "output returned time-first although batch_first=True",
        "transpose output back to (batch, seq_len, D * H) before returning it",
        lambda module, packed: module.batch_first and not packed,
    ),
    Bug(
        "not_reversed",
        "the backward direction not run in reverse: it reads x_1 first",
        "run the backward direction over t = T-1, ..., 0 (reversed(range(T))), starting from its own h_0 row",
        _bidirectional,
    ),
    Bug(
        "reverse_weights_unused",
        "the backward direction run with the forward direction's weights",
        "the backward direction has its own parameters: weight_ih_l0_reverse, weight_hh_l0_reverse, ...",
        _bidirectional,
    ),
    Bug(
        "backward_not_realigned",
        "the backward direction's states left in the order computed, not put back in time order",
        "store the backward state of step t at output[t] (or flip the collected list) before concatenating",
        lambda module, packed: module.bidirectional and not packed,
    ),
    Bug(
        "directions_swapped",
        "the two directions concatenated in the wrong order: [backward, forward]",
        "concatenate [forward, backward] along the last dimension: the forward half comes first",
        _bidirectional,
    ),
    Bug(
        "directions_stacked_in_time",
        "the two directions concatenated along time instead of features",
        "concatenate along the last dimension: torch.cat([forward, backward], dim=-1)",
        _bidirectional,
    ),
    Bug(
        "h_n_backward_from_output",
        "h_n's backward row taken from output[-1], which is the backward direction's first step",
        "take the backward final state where that direction ends, at t = 0: output[0, :, H:]",
        lambda module, packed: module.bidirectional and not packed,
    ),
    Bug(
        "h_n_from_first_step",
        "h_n taken from output[0], the first step, instead of the last",
        "h_n is the state after the last step: output[-1] for the forward direction (output[0] only for the backward one)",
        lambda module, packed: not packed,
    ),
    Bug(
        "h_n_without_layer_dimension",
        "h_n returned without its first dimension (one row per layer and direction)",
        "h_n keeps that dimension even for one layer: return torch.stack(final_states), or h.unsqueeze(0)",
    ),
    Bug(
        "layers_not_chained",
        "layers not chained: every layer reads the input instead of the layer below",
        "layer k > 0 reads layer k-1's output (both directions concatenated), not x",
        _stacked,
    ),
    Bug(
        "reads_one_direction",
        "a layer reads only one direction of the bidirectional layer below",
        "layer k > 0 reads torch.cat([forward, backward], dim=-1) of layer k-1: 2 * H features per step",
        _stacked_bidirectional,
    ),
    Bug(
        "h_n_top_layer_only",
        "h_n holds only the top layer's final states",
        "collect the final state of every layer and direction: h_n has num_layers * num_directions rows",
        _stacked,
    ),
    Bug(
        "h_n_direction_major",
        "h_n's rows in the wrong order: all forward rows, then all backward rows",
        "stack h_n as layer 0 forward, layer 0 backward, layer 1 forward, ...: row k * num_directions + d",
        _stacked_bidirectional,
    ),
    Bug(
        "padding_run_through",
        "the padding run through: every sequence takes all T steps, padding included",
        "stop each sequence at its own length: for t >= lengths[b], keep sequence b's state unchanged",
        lambda module, packed: packed,
    ),
    Bug(
        "mask_one_step_over",
        "the mask off by one (t <= lengths[b], or lengths + 1): each shorter sequence takes one padding step "
        "past its end",
        "a sequence of length n has the steps t = 0 .. n - 1: it runs while t < lengths[b]",
        lambda module, packed: packed,
    ),
    Bug(
        "mask_one_step_short",
        "the mask off by one (t < lengths[b] - 1): each sequence stops one step before its last",
        "a sequence of length n has the steps t = 0 .. n - 1: it runs while t < lengths[b]",
        lambda module, packed: packed,
    ),
    Bug(
        "h_n_at_padded_end",
        "h_n taken at the padded last step, output[-1], instead of each sequence's own last step",
        "take each sequence's state at its own last real step, t = lengths[b] - 1, not at t = T - 1",
        lambda module, packed: packed,
    ),
    Bug(
        "lstm_gates_ifog",
        "LSTM gates read in the order i, f, o, g; torch's order is i, f, g, o",
        "split the 4H pre-activation as i, f, g, o = a.chunk(4, dim=-1)",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "lstm_i_f_swapped",
        "the input and forget gates swapped: c_t = i * c_{t-1} + f * g, or, the same numbers, their blocks of the "
        "weights read forget gate first (f, i, g, o)",
        "c_t = f * c_{t-1} + i * g, with i, f, g, o the weights' blocks in torch's order (chunk(4) gives i, f, g, o): "
        "the forget gate scales the old cell, the input gate the candidate",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "cell_not_carried",
        "the cell state not carried: every step starts from c_0",
        "update c inside the loop (c = f * c + i * g) so that step t reads c_{t-1}",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "h_is_o_times_c",
        "h = o * c, without tanh",
        "h_t = o * tanh(c_t): the cell state goes through tanh before the output gate",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "lstm_g_sigmoid",
        "the LSTM candidate g squashed by sigmoid; it goes through tanh",
        "i, f and o use sigmoid; the candidate uses tanh: g = tanh(a_g), so it can be negative",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "projection_missing",
        "the projection left out: h is not multiplied by W_hr",
        "with proj_size > 0, h_t = (o * tanh(c_t)) @ W_hr.T (weight_hr_l0): proj_size values",
        lambda module, packed: module.mode == "LSTM" and module.proj_size > 0,
    ),
    Bug(
        "gru_reset_before_product",
        "GRU's reset gate applied to h_{t-1} before the product (the other paper's convention)",
        "torch resets the product: n = tanh(x_t W_in^T + b_in + r * (h_{t-1} W_hn^T + b_hn))",
        lambda module, packed: module.mode == "GRU",
    ),
    Bug(
        "gru_b_hn_outside_reset",
        "GRU's b_hn added outside the reset: n = tanh(x_t W_in^T + b_in + r * (h_{t-1} W_hn^T) + b_hn)",
        "torch resets b_hn with the product: n = tanh(x_t W_in^T + b_in + r * (h_{t-1} W_hn^T + b_hn))",
        lambda module, packed: module.mode == "GRU" and module.bias,
    ),
    Bug(
        "gru_reset_unused",
        "GRU's reset gate never used: n = tanh(x_t W_in^T + b_in + h_{t-1} W_hn^T + b_hn)",
        "multiply the hidden part of n by r: n = tanh(x_t W_in^T + b_in + r * (h_{t-1} W_hn^T + b_hn))",
        lambda module, packed: module.mode == "GRU",
    ),
    Bug(
        "gru_z_flipped",
        "GRU's update gate the wrong way round: h = z * n + (1 - z) * h_{t-1}",
        "torch keeps the old state where z is 1: h_t = (1 - z) * n + z * h_{t-1}",
        lambda module, packed: module.mode == "GRU",
    ),
    Bug(
        "gru_gates_zrn",
        "GRU gates read in the order z, r, n; torch's order is r, z, n",
        "split the 3H pre-activations as r, z, n = a.chunk(3, dim=-1)",
        lambda module, packed: module.mode == "GRU",
    ),
    Bug(
        "loop_stops_early",
        "the loop stops one step early: range(T - 1) never computes t = T - 1, so output[T - 1] stays zero and "
        "h_n is the state of t = T - 2",
        "loop over every step: for t in range(T)",
    ),
    Bug(
        "backward_stops_early",
        "the backward loop stops before t = 0: range(T - 1, 0, -1) never computes it, so the backward half of "
        "output[0] stays zero and its h_n is the state of t = 1",
        "run the backward direction over every step: for t in range(T - 1, -1, -1)",
        _bidirectional,
    ),
    Bug(
        "layer_0_weights_everywhere",
        "every layer uses layer 0's weights (weight_ih_l0, weight_hh_l0, ...), not its own",
        "read layer k's own weights: getattr(module, f'weight_ih_l{k}'), and so on for each of them",
        _stacked,
    ),
    Bug(
        "b_ih_for_both",
        "b_ih added twice: b_ih where b_hh belongs (x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_ih)",
        "add each bias once: x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh",
        lambda module, packed: module.bias,
    ),
    Bug(
        "batch_first_reshaped",
        "batch_first handled with .reshape (or .view) instead of .transpose: (B, T, features) reshaped to "
        "(T, B, features) mixes the sequences, and so does the output reshaped back",
        "swap the two axes: x = input.transpose(0, 1), and output.transpose(0, 1) at the end",
        lambda module, packed: module.batch_first and not packed,
    ),
    Bug(
        "outputs_aliased",
        "every step of output holds the last state computed: the steps are stored into one tensor that each "
        "step overwrites (out.copy_(h), a buffer appended at every step, an in-place update of h)",
        "store a new tensor at every step (h = torch.tanh(...) makes one) and torch.stack the list at the end",
    ),
    Bug(
        "c_0_ignored",
        "c_0 ignored: the cell starts from zeros even when hx = (h_0, c_0) is given",
        "start each row's cell from c_0: c = c_0[layer * num_directions + direction]",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "hx_swapped",
        "hx read as (c_0, h_0): torch's order is hx = (h_0, c_0), and it returns (h_n, c_n) in the same order",
        "unpack h_0, c_0 = hx",
        lambda module, packed: module.mode == "LSTM" and not module.proj_size,
    ),
    Bug(
        "h_n_c_n_swapped",
        "the final states returned as (c_n, h_n): torch returns (output, (h_n, c_n))",
        "return output, (h_n, c_n)",
        lambda module, packed: module.mode == "LSTM" and not module.proj_size,
    ),
    Bug(
        "h_from_c_prev",
        "h_t from the old cell: o * tanh(c_{t-1}) instead of o * tanh(c_t)",
        "update the cell first, then h_t = o * tanh(c_t) with the new c_t",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "forget_bias_added",
        "1 added to the forget gate's input (a forget bias, as in some papers and Keras): torch adds none, its "
        "b_ih and b_hh hold all of f's bias",
        "f = sigmoid(a_f), with nothing added: to start with a large forget gate, initialise b_hh's f rows instead",
        lambda module, packed: module.mode == "LSTM",
    ),
    Bug(
        "gru_n_sigmoid",
        "the candidate n squashed by sigmoid: torch uses tanh for n (sigmoid for r and z only)",
        "n = tanh(x_n + r * (h_{t-1} W_hn^T + b_hn))",
        lambda module, packed: module.mode == "GRU",
    ),
    Bug(
        "output_bottom_layer",
        "output holds the first layer's states: torch's output is the top layer's",
        "return the last layer's states as output (the input of a next layer, had there been one)",
        _stacked,
    ),
    Bug(
        "h_n_top_repeated",
        "every layer's rows of h_n hold the top layer's final states",
        "keep each layer's own final state: h_n[layer * num_directions + direction]",
        _stacked,
    ),
    Bug(
        "layer_reads_below_a_step_late",
        "layer k reads the layer below one step late: at step t it gets that layer's state from t - 1 (h_0 at t = 0), "
        "not its state of step t",
        "feed layer k the states layer k-1 computed at the same steps: torch.stack(states) in time order",
        lambda module, packed: module.num_layers > 1 and not module.bidirectional,
    ),
    Bug(
        "next_layer_halves_swapped",
        "the layer above reads [backward, forward]: torch feeds it [forward_t, backward_t], the same order as output",
        "concatenate the directions forward first: torch.cat([forward, backward], dim=-1)",
        _stacked_bidirectional,
    ),
    Bug(
        "cell_carried_up",
        "a layer's cell starts from the final cell of the layer below (same direction), not from its own c_0 row",
        "start every layer and direction from its own row: c = c_0[layer * num_directions + direction]",
        lambda module, packed: module.mode == "LSTM" and module.num_layers > 1,
    ),
    Bug(
        "backward_from_forward_end",
        "the backward run starts from the forward run's final state instead of its own row of h_0",
        "start the backward direction from h_0[layer * 2 + 1] (zeros when no hx is given)",
        _bidirectional,
    ),
    Bug(
        "features_flipped",
        "the backward direction flips the features (the last dimension) and runs forward in time: it must read "
        "the steps from last to first",
        "reverse time, not features: for t in range(T - 1, -1, -1), reading x[t] (or x.flip(0))",
        lambda module, packed: module.bidirectional and module.input_size > 1,
    ),
    Bug(
        "backward_from_padding",
        "the backward run starts at the padded end: it runs through the padding steps of a shorter sequence "
        "before its real last step",
        "start each sequence's backward run at its own last step, t = lengths[b] - 1 (mask the steps beyond it)",
        lambda module, packed: module.bidirectional and packed,
    ),
    Bug(
        "h_n_sorted_order",
        "h_n left in the sorted order of the packed batch (longest first): torch returns h_n in the order of "
        "the batch you packed",
        "put h_n's batch back in your order: h_n[:, packed.unsorted_indices] (or let pad_packed_sequence do it)",
        lambda module, packed: packed,
    ),
)
BUGS = {bug.name: bug for bug in CATALOGUE}
# Bugs that leave every value right and change only the gradients: helpers.diagnose compares
# gradients with these, not values.
GRADIENT_BUGS = ("state_detached", "state_detached_before_step")  # h = h_new.detach(); h_prev = h.detach()


def run(module, input, hx=None, bug=None):
    """What `module(input, hx)` returns when computed with the catalogued bug named `bug` (None: no bug).

    Exceptions are those the bug causes, as a student's code raises them: a matrix product of
    the wrong shapes, for example.
    """
    lstm = module.mode == "LSTM"
    packed = isinstance(input, PackedSequence)
    batched = packed or input.dim() == 3
    if bug == "unbatched_read_as_batch":
        return _one_step_each(module, input, hx)
    if packed:
        x, lengths = pad_packed_sequence(input)  # (T, B, in), (B,): in the batch's own order
    else:
        lengths = None
        x = input if batched else input.unsqueeze(1)  # (T, B, in) or (B, T, in)
        if batched and module.batch_first and bug != "batch_first_ignored":
            x = x.reshape(x.shape[1], x.shape[0], -1) if bug == "batch_first_reshaped" else x.transpose(0, 1)
    T, B = x.shape[:2]
    D = 2 if module.bidirectional else 1
    L = module.num_layers
    h_0, c_0 = _initial(module, hx, batched, B, x.dtype)
    if bug == "h_0_ignored":
        h_0, c_0 = torch.zeros_like(h_0), torch.zeros_like(c_0)
    if bug == "c_0_ignored":
        c_0 = torch.zeros_like(c_0)
    if bug == "hx_swapped" and hx is not None:
        h_0, c_0 = c_0, h_0

    outputs, h_n, c_n = recurrence.run(module, x, h_0, c_0 if lstm else None, lengths, _WithBug(bug))
    output = outputs[0 if bug == "output_bottom_layer" else -1]  # (T, B, D*H): the top layer's, as torch returns
    if c_n is None:  # outside LSTM: a stand-in for the fixes below to treat like c_n, left out of the result
        c_n = torch.zeros_like(h_n)
    if bug == "h_n_direction_major":
        order = [k * D + d for d in range(D) for k in range(L)]
        h_n, c_n = h_n[order], c_n[order]
    if bug == "h_n_from_first_step":
        h_n = h_n.clone()
        h_n[-D] = output[0].reshape(B, D, -1)[:, 0]  # the forward direction's state at t = 0
    if bug == "h_n_without_layer_dimension":
        h_n, c_n = h_n[-1], c_n[-1]  # the last state computed, (B, H)
    if bug == "h_n_top_layer_only":
        h_n, c_n = h_n[-D:], c_n[-D:]
    if bug == "h_n_top_repeated":
        h_n, c_n = h_n[-D:].repeat(L, 1, 1), c_n[-D:].repeat(L, 1, 1)
    if bug == "h_n_sorted_order" and input.sorted_indices is not None:
        h_n, c_n = h_n[:, input.sorted_indices], c_n[:, input.sorted_indices]
    if bug in ("h_n_backward_from_output", "h_n_at_padded_end"):
        last = output[-1].reshape(B, D, -1).transpose(0, 1)  # (D, B, H): each direction's state at t = T-1
        h_n = h_n.clone()
        if bug == "h_n_backward_from_output":
            h_n[-1] = last[-1]  # the backward direction's first step, not its last
        else:
            h_n[-D:] = last  # zeros for a sequence shorter than T
    if packed:
        output = recurrence.pack_like(output, input)
    elif batched and module.batch_first and bug not in ("output_not_batch_first", "batch_first_ignored"):
        output = output.reshape(B, T, -1) if bug == "batch_first_reshaped" else output.transpose(0, 1)  # (B, T, D*H)
    if not batched:
        output, h_n, c_n = output.squeeze(1), h_n.squeeze(-2), c_n.squeeze(-2)  # the batch of 1 removed
    if bug == "h_n_c_n_swapped":
        h_n, c_n = c_n, h_n
    return (output, (h_n, c_n)) if lstm else (output, h_n)


class NotThisInputError(Exception):
    """The bug cannot happen on this input (a batched input read as unbatched): no student's code raises this, so
    no student's result matches it."""


def _one_step_each(module, input, hx):
    """An unbatched (T, I) input made (1, T, I): one step for each of T sequences, each from h_0; output (T, D*H),
    and h_n the last of those sequences' final states, (L*D, H). A batched input cannot have this bug."""
    if isinstance(input, PackedSequence) or input.dim() != 2:
        raise NotThisInputError("only an unbatched input can be read as a batch of one-step sequences")
    T = input.shape[0]

    def spread(state):  # (L*D, H) -> (L*D, T, H): every one of the T sequences starts from it
        return state[:, None].expand(-1, T, -1).contiguous()

    if hx is not None:
        hx = tuple(spread(part) for part in hx) if isinstance(hx, tuple) else spread(hx)
    output, final = run(module, input[None], hx)  # (1, T, D*H)
    if module.mode == "LSTM":
        return output[0], tuple(part[:, -1] for part in final)
    return output[0], final[:, -1]


def _initial(module, hx, batched, B, dtype):
    """(h_0, c_0), each (L*D, B, size): the given states, or zeros (c_0 zeros too outside LSTM)."""
    D = 2 if module.bidirectional else 1
    rows, H = module.num_layers * D, module.hidden_size
    P = getattr(module, "proj_size", 0) or H
    h_0, c_0 = (hx if module.mode == "LSTM" else (hx, None)) if hx is not None else (None, None)
    h_0 = torch.zeros(rows, B, P, dtype=dtype) if h_0 is None else (h_0 if batched else h_0.unsqueeze(1))
    c_0 = torch.zeros(rows, B, H, dtype=dtype) if c_0 is None else (c_0 if batched else c_0.unsqueeze(1))
    return h_0, c_0


# The bugs that change what happens inside one cell, and the cell whose code has them.
_RNN_CELL_BUGS = ("wrong_nonlinearity", "no_nonlinearity")
_LSTM_CELL_BUGS = (
    "lstm_gates_ifog",
    "lstm_i_f_swapped",
    "h_is_o_times_c",
    "lstm_g_sigmoid",
    "forget_bias_added",
    "h_from_c_prev",
)
_GRU_CELL_BUGS = (
    "gru_reset_before_product",
    "gru_b_hn_outside_reset",
    "gru_reset_unused",
    "gru_z_flipped",
    "gru_gates_zrn",
    "gru_n_sigmoid",
)


class _WithBug(recurrence.Exact):
    """torch's recurrence with the catalogued bug `bug` (None: none) in the seams where it acts."""

    def __init__(self, bug):
        self.bug = bug

    def weights(self, module, layer, direction):
        layer = 0 if self.bug == "layer_0_weights_everywhere" else layer
        direction = 0 if self.bug == "reverse_weights_unused" else direction
        W_ih, W_hh, b_ih, b_hh, W_hr = super().weights(module, layer, direction)
        if self.bug in ("bias_ih_missing", "biases_missing"):
            b_ih = None
        if self.bug in ("bias_hh_missing", "biases_missing"):
            b_hh = None
        if self.bug == "weights_swapped":
            W_ih, W_hh = W_hh, W_ih
        if self.bug == "b_ih_for_both":
            b_hh = b_ih
        return W_ih, W_hh, b_ih, b_hh, W_hr

    def layer_input(self, x, below, at):
        reads = x if self.bug == "layers_not_chained" else below
        return reads.flip(-1) if at.direction and self.bug == "features_flipped" else reads

    def start(self, h_0, c_0, finals, at):
        L, D = at.module.num_layers, 2 if at.module.bidirectional else 1
        row = {"h_0_first_row": 0, "h_0_direction_major": at.direction * L + at.layer}.get(self.bug, at.row)
        h, c = h_0[row], None if c_0 is None else c_0[row]
        if self.bug == "cell_carried_up" and at.layer > 0:
            c = finals[at.row - D][1]  # the last cell of the layer below, same direction
        if self.bug == "backward_from_forward_end" and at.direction == 1:
            h, c = finals[-1]
        return h, c

    def lengths(self, lengths, at):
        if self.bug == "padding_run_through" or (self.bug == "backward_from_padding" and at.direction):
            return None
        if lengths is not None and self.bug in ("mask_one_step_over", "mask_one_step_short"):
            return lengths + (1 if self.bug == "mask_one_step_over" else -1)
        return lengths

    def times(self, seq_len, at):
        backward = at.direction == 1
        in_time_order = backward and self.bug in ("not_reversed", "features_flipped")
        times = list(range(seq_len) if in_time_order else super().times(seq_len, at))
        if (self.bug == "backward_stops_early" and backward) or (self.bug == "loop_stops_early" and not backward):
            times = times[:-1]  # range(T - 1, 0, -1) or range(T - 1): the direction's last step never computed
        return times

    def input_parts(self, layer_input, at):
        """One step at a time, as a student's loop computes them: a product of the wrong shapes fails with one step's sizes."""
        W = at.W_ih if self.bug in ("W_ih_not_transposed", "weights_not_transposed") else at.W_ih.T
        return torch.stack([x_t @ W if at.b_ih is None else x_t @ W + at.b_ih for x_t in layer_input])  # (T, B, G*H)

    def previous(self, h, c, start):
        h_prev = {"h_prev_zero": torch.zeros_like(h), "h_0_every_step": start[0]}.get(self.bug, h)
        c_prev = start[1] if self.bug == "cell_not_carried" else c
        if self.bug == "state_detached_before_step":  # the same values; the gradient stops at every step
            h_prev, c_prev = h_prev.detach(), None if c_prev is None else c_prev.detach()
        return h_prev, c_prev

    def hidden_part(self, h_prev, at):
        if self.bug not in ("W_hh_not_transposed", "weights_not_transposed"):
            return super().hidden_part(h_prev, at)
        hidden_part = h_prev @ at.W_hh  # (B, P) @ (G*H, P): fails unless G*H == P
        return hidden_part if at.b_hh is None else hidden_part + at.b_hh

    def cell(self, input_part, hidden_part, h_prev, c_prev, at):
        mode = at.module.mode
        if mode == "LSTM" and self.bug in _LSTM_CELL_BUGS:
            h, c = _lstm(input_part, hidden_part, c_prev, self.bug)
        elif mode == "GRU" and self.bug in _GRU_CELL_BUGS:
            h, c = _gru(input_part, hidden_part, h_prev, (at.W_hh, at.b_hh), self.bug), None
        elif mode.startswith("RNN") and self.bug in _RNN_CELL_BUGS:
            h, c = _activation(at.module, self.bug)(input_part + hidden_part), None
        else:
            return super().cell(input_part, hidden_part, h_prev, c_prev, at)
        return h, c, input_part + hidden_part, {}  # a bug's gates are not recorded

    def project(self, h, at):
        return h if self.bug == "projection_missing" else super().project(h, at)

    def stored(self, h_prev, h):
        return h_prev if self.bug == "output_h_prev" else h

    def carry(self, h, c):
        if self.bug == "state_detached":  # the same values; the gradient stops at every step
            return h.detach(), None if c is None else c.detach()
        return h, c

    def finish(self, per_step, h, at):
        if at.direction and self.bug == "backward_not_realigned":
            per_step = per_step[::-1]  # the state of step T-1 first, as the loop produced them
        if self.bug == "outputs_aliased":
            per_step = [h if s is not None else None for s in per_step]  # one tensor, holding what was written last
        return [torch.zeros_like(h) if s is None else s for s in per_step]  # a step never computed stays zero

    def combine(self, per_direction, starts):
        states = per_direction[::-1] if self.bug == "directions_swapped" else per_direction
        output = torch.cat(states, dim=0 if self.bug == "directions_stacked_in_time" else 2)
        if self.bug == "reads_one_direction":
            output = states[-1]  # the last direction computed, as a loop variable overwritten keeps it
        next_input = output
        if self.bug == "next_layer_halves_swapped":
            next_input = torch.cat(states[::-1], dim=2)
        if self.bug == "layer_reads_below_a_step_late":  # the state each step started from
            next_input = torch.cat([starts[0][0][None], output[:-1]])
        return output, next_input


def _activation(module, bug):
    relu = module.mode == "RNN_RELU"
    if bug == "no_nonlinearity":
        return lambda a: a
    if bug == "wrong_nonlinearity":
        relu = not relu
    return torch.relu if relu else torch.tanh


def _lstm(x_part, h_part, c_prev, bug):
    """(h, c) of one LSTM step from its (B, 4H) input and hidden parts."""
    a = x_part + h_part
    if bug == "lstm_gates_ifog":
        i, f, o, g = a.chunk(4, dim=-1)
    else:
        i, f, g, o = a.chunk(4, dim=-1)
    g = torch.sigmoid(g) if bug == "lstm_g_sigmoid" else torch.tanh(g)
    i, f, o = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o)
    if bug == "forget_bias_added":
        f = torch.sigmoid(a.chunk(4, dim=-1)[1] + 1)
    c = i * c_prev + f * g if bug == "lstm_i_f_swapped" else f * c_prev + i * g
    if bug == "h_from_c_prev":
        return o * torch.tanh(c_prev), c
    return (o * c if bug == "h_is_o_times_c" else o * torch.tanh(c)), c


def _gru(x_part, h_part, h_prev, hidden_weights, bug):
    """h of one GRU step from its (B, 3H) input and hidden parts."""
    x_r, x_z, x_n = x_part.chunk(3, dim=-1)
    h_r, h_z, h_n = h_part.chunk(3, dim=-1)
    if bug == "gru_gates_zrn":
        x_r, x_z, h_r, h_z = x_z, x_r, h_z, h_r
    r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
    if bug == "gru_reset_before_product":
        W_hh, b_hh = hidden_weights
        W_hn = W_hh.chunk(3)[2]
        h_n = (r * h_prev) @ W_hn.T + (0 if b_hh is None else b_hh.chunk(3)[2])
        n = torch.tanh(x_n + h_n)
    elif bug == "gru_b_hn_outside_reset":
        b_hn = hidden_weights[1].chunk(3)[2]
        n = torch.tanh(x_n + r * (h_n - b_hn) + b_hn)
    elif bug == "gru_reset_unused":
        n = torch.tanh(x_n + h_n)
    else:
        n = (torch.sigmoid if bug == "gru_n_sigmoid" else torch.tanh)(x_n + r * h_n)
    return z * n + (1 - z) * h_prev if bug == "gru_z_flipped" else (1 - z) * n + z * h_prev


__all__ = ["BUGS", "CATALOGUE", "Bug", "run"]
