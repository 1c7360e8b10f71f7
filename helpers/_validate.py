"""Check what a student passes to `helpers.unroll`, and explain any mistake in plain words.

Each check raises a TypeError (wrong kind of object or dtype) or a ValueError (wrong shape or
setting) that says what was expected, with dimension names, what was given, and how to fix it.
"""

import numpy as np
import torch
from torch import Tensor, nn


def check_module(module):
    """Raise unless `module` is a layer unroll can re-compute, in a deterministic mode."""
    if isinstance(module, type):
        raise TypeError(
            f"unroll got the class {_type_name(module)} itself, not a layer. "
            "Create a layer first, e.g. rnn = nn.RNN(input_size=3, hidden_size=2), "
            "then call unroll(rnn, input)."
        )
    if isinstance(module, Tensor):
        raise TypeError(
            "unroll's first argument is the recurrent layer, the second the input: "
            "unroll(module, input, hx=None). It got a tensor as its first argument."
        )
    if isinstance(module, (nn.RNNCell, nn.LSTMCell, nn.GRUCell)):
        raise TypeError(
            f"{_type_name(module)} computes a single time step; unroll re-computes a whole "
            "layer (nn.RNN), which applies the same step at every time step. Use "
            "nn.RNN(input_size, hidden_size): its weight_ih_l0 and weight_hh_l0 play the part "
            "of the cell's weight_ih and weight_hh."
        )
    if isinstance(module, (nn.LSTM, nn.GRU)):
        raise TypeError(
            f"helpers.unroll re-computes nn.RNN so far; {_type_name(module)} is not supported "
            "yet (LSTM and GRU arrive with notebooks 10 and 11)."
        )
    if not isinstance(module, nn.RNN):
        hint = ""
        if isinstance(module, nn.Module):
            inner = [name for name, m in module.named_modules() if isinstance(m, nn.RNN)]
            if inner:
                hint = f" It contains an nn.RNN at .{inner[0]}: pass that, unroll(model.{inner[0]}, input)."
        raise TypeError(f"unroll needs a recurrent layer, nn.RNN; got {_describe(module)}.{hint}")
    if module.training and module.dropout > 0 and module.num_layers > 1:
        raise ValueError(
            f"The module is in training mode with dropout={module.dropout}: torch then zeroes "
            "random values between layers, so no step-by-step computation can reproduce its "
            "result. Call module.eval() first (dropout acts only in training mode)."
        )


def check_input(module, input):
    """Raise unless `input` fits `module`; return True for batched (3-D) input."""
    layouts = (
        f"{input_layout(module, batched=True)} for a batch, or {input_layout(module, batched=False)} for one sequence"
    )
    if not isinstance(input, Tensor):
        if isinstance(input, np.ndarray):
            fix = "torch.from_numpy(array).float()"
        else:
            fix = "torch.tensor(values, dtype=torch.float32)"
        raise TypeError(
            f"input must be a torch.Tensor shaped {layouts}; got {_describe(input)}. Convert it with {fix}."
        )
    if not input.is_floating_point():
        raise TypeError(
            f"input has dtype {input.dtype}, but an RNN multiplies its input by float weights. "
            "If these are token ids, look them up first in an embedding, e.g. "
            f"nn.Embedding(vocab_size, embedding_dim={module.input_size}); if they are "
            "measurements, convert them with input.float()."
        )
    if input.dim() < 2:
        shape = _shape(input)
        if input.dim() == 1 and module.input_size == 1:
            fix = f"For one sequence of {len(input)} numbers use input.unsqueeze(-1), shape (seq_len={len(input)}, input_size=1)."
        elif input.dim() == 1 and len(input) == module.input_size:
            fix = f"If these are the {len(input)} features of a single step, use input.unsqueeze(0), shape (seq_len=1, input_size={len(input)})."
        else:
            fix = "Every time step needs its own vector of input_size features."
        raise ValueError(f"input has {input.dim()} dimension(s), shape {shape}; nn.RNN needs {layouts}. {fix}")
    if input.dim() > 3:
        raise ValueError(
            f"input has {input.dim()} dimensions, shape {_shape(input)}; nn.RNN needs {layouts}. "
            "Merge the extra dimensions into the features (e.g. input.flatten(2)) or into the "
            "batch, so that each time step is one vector of input_size features."
        )
    batched = input.dim() == 3
    if input.shape[-1] != module.input_size:
        hint = ""
        for dim, size in enumerate(input.shape[:-1]):
            if size == module.input_size:
                hint = f" Dimension {dim} has size {size}: if that is the feature dimension, move it last with input.movedim({dim}, -1)."
                break
        raise ValueError(
            f"The last dimension of input holds the features of one time step: this module has "
            f"input_size={module.input_size}, but input has shape {_shape(input)}, i.e. "
            f"{input.shape[-1]} features. Expected {input_layout(module, batched)}.{hint}"
        )
    weight_dtype = module.weight_ih_l0.dtype
    if input.dtype != weight_dtype:
        raise TypeError(
            f"input has dtype {input.dtype} but the module's weights have dtype {weight_dtype}; "
            f"both must match. Convert the input, input.to({weight_dtype}), or the module, "
            f"module.to({input.dtype})."
        )
    seq_len = input.shape[1 if batched and module.batch_first else 0]
    if seq_len == 0:
        raise ValueError(
            f"input has no time steps: seq_len=0 in shape {_shape(input)}, expected "
            f"{input_layout(module, batched)}. An RNN needs at least one step."
        )
    return batched


def check_packed(module, packed):
    """Raise unless a PackedSequence fits `module` and is consistent (lengths within the padding)."""
    data = packed.data  # (total number of steps, input_size)
    if not data.is_floating_point():
        raise TypeError(
            f"the packed sequences have dtype {data.dtype}, but an RNN multiplies its input by float "
            "weights. Pack float vectors (e.g. nn.Embedding outputs), or convert with padded.float() "
            "before packing."
        )
    if data.dim() != 2 or data.shape[-1] != module.input_size:
        raise ValueError(
            f"each step of the packed sequences has {tuple(data.shape[1:])} values, but this module has "
            f"input_size={module.input_size}. Pack a padded tensor shaped (seq_len, batch, "
            f"input_size={module.input_size}) (or batch first, with batch_first=True when packing)."
        )
    if data.dtype != module.weight_ih_l0.dtype:
        raise TypeError(
            f"the packed sequences have dtype {data.dtype} but the module's weights have dtype "
            f"{module.weight_ih_l0.dtype}; convert the padded tensor before packing, or the module "
            f"with module.to({data.dtype})."
        )
    steps = int(packed.batch_sizes.sum())
    if steps != data.shape[0]:
        raise ValueError(
            f"this PackedSequence is broken: its lengths add up to {steps} steps but it holds "
            f"{data.shape[0]}. pack_padded_sequence was given a length longer than the padded "
            f"sequences (the longest length here is {len(packed.batch_sizes)}). Check the lengths, "
            "or pack with helpers.pack_padded_sequence, which refuses such lengths."
        )


def check_hx(module, hx, batch, dtype):
    """Raise unless `hx` is a valid h_0 for a batch of `batch` (None: unbatched) of `dtype`.

    Returns h_0: `hx` itself, or zeros when hx is None.
    """
    batched = batch is not None
    num_directions = 2 if module.bidirectional else 1
    num_states = module.num_layers * num_directions
    expected = (num_states, batch, module.hidden_size) if batched else (num_states, module.hidden_size)
    layout = hx_layout(module, batch)
    if hx is None:
        return torch.zeros(expected, dtype=dtype)
    if isinstance(hx, (tuple, list)):
        raise TypeError(
            f"hx for nn.RNN is one tensor h_0 shaped {layout}; got a {type(hx).__name__} of "
            f"{len(hx)}. A pair (h_0, c_0) is the state of nn.LSTM; an RNN has no cell state, "
            "so pass h_0 alone."
        )
    if not isinstance(hx, Tensor):
        raise TypeError(f"hx must be a torch.Tensor shaped {layout}, or None for zeros; got {_describe(hx)}.")
    if hx.dtype != dtype:
        raise TypeError(
            f"hx has dtype {hx.dtype} but input has dtype {dtype}; give h_0 the same dtype, e.g. hx.to({dtype})."
        )
    if hx.dim() != len(expected):
        if batched:
            fix = "For a batch, h_0 has three dimensions (layers and directions, batch, hidden)."
            if tuple(hx.shape) == (batch, module.hidden_size) and num_states == 1:
                fix += " Add the first dimension with hx.unsqueeze(0)."
        else:
            fix = "For one unbatched sequence, h_0 has no batch dimension."
            if hx.dim() == 3 and hx.shape[1] == 1:
                fix += " Remove it with hx.squeeze(1), or give input a batch dimension too."
        raise ValueError(
            f"hx has {hx.dim()} dimension(s), shape {_shape(hx)}, but this input needs h_0 shaped {layout}. {fix}"
        )
    if tuple(hx.shape) == expected:
        return hx
    if batched and tuple(hx.shape) == (batch, num_states, module.hidden_size):
        reason = (
            "it looks batch-first. h_0 is never batch-first, even when the module has "
            "batch_first=True (that setting only changes input and output). Use "
            "hx.transpose(0, 1).contiguous()."
        )
    elif hx.shape[0] != num_states:
        reason = (
            f"its first dimension counts one state per layer and direction: num_layers="
            f"{module.num_layers} times num_directions={num_directions} gives {num_states}, "
            f"not {hx.shape[0]}."
        )
    elif batched and hx.shape[1] != batch:
        reason = (
            f"it was made for a batch of {hx.shape[1]}, but this input has a batch of {batch} "
            "(a smaller last batch?). Build h_0 from the input's batch size, or leave hx out "
            "to start from zeros."
        )
    else:
        reason = f"its last dimension must be hidden_size={module.hidden_size}, not {hx.shape[-1]}."
    raise ValueError(f"hx has shape {_shape(hx)} but this input needs h_0 shaped {layout}: {reason}")


def input_layout(module, batched):
    """The input shape a module expects, with dimension names: '(seq_len, batch, input_size=3)'."""
    features = f"input_size={module.input_size}"
    if not batched:
        return f"(seq_len, {features})"
    return f"(batch, seq_len, {features})" if module.batch_first else f"(seq_len, batch, {features})"


def hx_layout(module, batch):
    """The h_0 shape a module expects for a batch (None: unbatched), with dimension names."""
    num_directions = 2 if module.bidirectional else 1
    states = f"num_layers * num_directions={module.num_layers * num_directions}"
    hidden = f"hidden_size={module.hidden_size}"
    return f"({states}, {hidden})" if batch is None else f"({states}, batch={batch}, {hidden})"


def _shape(tensor):
    return "(" + ", ".join(str(s) for s in tensor.shape) + ("," if tensor.dim() == 1 else "") + ")"


def _type_name(obj):
    cls = obj if isinstance(obj, type) else type(obj)
    return f"nn.{cls.__name__}" if cls.__module__.startswith("torch.nn") else cls.__name__


def _describe(obj):
    if isinstance(obj, np.ndarray):
        return f"a NumPy array of shape {obj.shape}"
    if isinstance(obj, Tensor):
        return f"a tensor of shape {_shape(obj)}"
    if isinstance(obj, nn.Module):
        return _type_name(obj)  # "got nn.Linear"
    return f"{'an' if _type_name(obj)[0] in 'aeiou' else 'a'} {_type_name(obj)}"
