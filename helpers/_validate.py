"""Check what a student passes to `helpers.unroll`, and explain any mistake in plain words.

Each check raises a TypeError (wrong kind of object or dtype) or a ValueError (wrong shape or
setting) that says what was expected, with dimension names, what was given, and how to fix it.
`student_facing` marks the public helpers, so that in a notebook such an error shows at the
student's own line instead of inside helpers.
"""

import functools
from types import TracebackType

import numpy as np
import torch
from torch import Tensor, nn


def student_facing(function):
    """Decorate a public helper: in IPython, an error that helpers raise shows without helpers' frames.

    IPython (hence Jupyter) asks an exception for `_render_traceback_` before formatting it; a
    TypeError or ValueError raised by helpers' own code gets one that formats the traceback
    without helpers' frames: the student's line, then the message. Errors raised by torch (or by
    a student's function that a helper calls) keep every frame, and so does plain Python
    (pytest, scripts), which never calls `_render_traceback_`.
    """

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (TypeError, ValueError) as error:
            if _package(_frames(error.__traceback__)[-1].tb_frame) == "helpers":  # raised by helpers itself
                error._render_traceback_ = functools.partial(_traceback_without_helpers, error)
            raise

    return wrapper


def _traceback_without_helpers(error):
    """IPython's formatted traceback of `error`, leaving out every frame in helpers (and IPython's own)."""
    from IPython import get_ipython

    tb = None
    for entry in reversed(_frames(error.__traceback__)):
        if _package(entry.tb_frame) not in ("helpers", "IPython"):
            tb = TracebackType(tb, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    # tb_offset=0: IPython's frames are gone already, however many its caller would have skipped.
    return get_ipython().InteractiveTB.structured_traceback(type(error), error, tb, tb_offset=0)


def _frames(tb):
    """A traceback's entries, outermost first."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    return entries


def _package(frame):
    """The top-level package whose code runs in `frame` ("helpers", "torch", "__main__", ...)."""
    return frame.f_globals.get("__name__", "").partition(".")[0]


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
        layer = _type_name(module).removesuffix("Cell")
        raise TypeError(
            f"{_type_name(module)} computes a single time step; unroll re-computes a whole layer "
            f"({layer}), which applies the same step at every time step. Use {layer}(input_size, "
            "hidden_size): its weight_ih_l0 and weight_hh_l0 play the part of the cell's weight_ih "
            "and weight_hh."
        )
    if not isinstance(module, (nn.RNN, nn.LSTM, nn.GRU)):
        hint = ""
        if isinstance(module, nn.Module):
            inner = [name for name, m in module.named_modules() if isinstance(m, (nn.RNN, nn.LSTM, nn.GRU))]
            if inner:
                hint = f" It contains one at .{inner[0]}: pass that, unroll(model.{inner[0]}, input)."
        raise TypeError(f"unroll needs a recurrent layer (nn.RNN, nn.LSTM or nn.GRU); got {_describe(module)}.{hint}")
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


def check_states(module, hx, batch, dtype):
    """Raise unless `hx` is a valid initial state for a batch of `batch` (None: unbatched).

    Returns (h_0, c_0): `hx` itself or zeros, with c_0 None except for nn.LSTM.
    """
    lstm = module.mode == "LSTM"
    name = _type_name(module)
    if lstm and hx is not None and not isinstance(hx, (tuple, list)):
        raise TypeError(
            f"nn.LSTM's state is a pair hx=(h_0, c_0): h_0 shaped {hx_layout(module, batch)} and c_0 "
            f"shaped {hx_layout(module, batch, cell=True)}; got {_describe(hx)}. Pass both, e.g. "
            "(h_0, c_0) with c_0 = torch.zeros of that shape, or leave hx out for zeros."
        )
    if not lstm and isinstance(hx, (tuple, list)):
        raise TypeError(
            f"hx for {name} is one tensor h_0 shaped {hx_layout(module, batch)}; got a {type(hx).__name__} of "
            f"{len(hx)}. A pair (h_0, c_0) is the state of nn.LSTM; {name} has no cell state, so pass h_0 alone."
        )
    if not lstm:
        return _check_state(module, hx, batch, dtype, "hx", cell=False), None
    if hx is None:
        hx = (None, None)
    if len(hx) != 2:
        raise TypeError(f"nn.LSTM's state is a pair (h_0, c_0); got a {type(hx).__name__} of {len(hx)}.")
    return tuple(
        _check_state(module, part, batch, dtype, part_name, cell)
        for part, part_name, cell in zip(hx, ("h_0", "c_0"), (False, True))
    )


def _check_state(module, hx, batch, dtype, name, cell):
    """Raise unless one state tensor fits; return it, or zeros when it is None."""
    batched = batch is not None
    num_directions = 2 if module.bidirectional else 1
    num_states = module.num_layers * num_directions
    size = module.hidden_size if cell or not module.proj_size else module.proj_size
    expected = (num_states, batch, size) if batched else (num_states, size)
    layout = hx_layout(module, batch, cell)
    state = "h_0" if name == "hx" else name  # what the tensor is, in torch's documentation
    if hx is None:
        return torch.zeros(expected, dtype=dtype)
    if not isinstance(hx, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor shaped {layout}, or None for zeros; got {_describe(hx)}.")
    if hx.dtype != dtype:
        raise TypeError(
            f"{name} has dtype {hx.dtype} but input has dtype {dtype}; give it the same dtype, e.g. {name}.to({dtype})."
        )
    if hx.dim() != len(expected):
        if batched:
            fix = f"For a batch, {state} has three dimensions (layers and directions, batch, hidden)."
            if tuple(hx.shape) == (batch, size) and num_states == 1:
                fix += f" Add the first dimension with {name}.unsqueeze(0)."
        else:
            fix = f"For one unbatched sequence, {state} has no batch dimension."
            if hx.dim() == 3 and hx.shape[1] == 1:
                fix += f" Remove it with {name}.squeeze(1), or give input a batch dimension too."
        raise ValueError(
            f"{name} has {hx.dim()} dimension(s), shape {_shape(hx)}, but this input needs {state} shaped {layout}. {fix}"
        )
    if tuple(hx.shape) == expected:
        return hx
    if batched and tuple(hx.shape) == (batch, num_states, size):
        reason = (
            f"it looks batch-first. {state} is never batch-first, even when the module has "
            f"batch_first=True (that setting only changes input and output). Use {name}.transpose(0, 1).contiguous()."
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
            f"(a smaller last batch?). Build {state} from the input's batch size, or leave hx out "
            "to start from zeros."
        )
    elif not cell and module.proj_size and hx.shape[-1] == module.hidden_size:
        reason = (
            f"with proj_size={module.proj_size}, h holds proj_size={module.proj_size} values per layer "
            f"and direction, not hidden_size={module.hidden_size} (only c_0 keeps hidden_size)."
        )
    else:
        what = "hidden_size" if size == module.hidden_size else "proj_size"
        reason = f"its last dimension must be {what}={size}, not {hx.shape[-1]}."
    raise ValueError(f"{name} has shape {_shape(hx)} but this input needs {state} shaped {layout}: {reason}")


def input_layout(module, batched):
    """The input shape a module expects, with dimension names: '(seq_len, batch, input_size=3)'."""
    features = f"input_size={module.input_size}"
    if not batched:
        return f"(seq_len, {features})"
    return f"(batch, seq_len, {features})" if module.batch_first else f"(seq_len, batch, {features})"


def hx_layout(module, batch, cell=False):
    """An initial state's shape for a batch (None: unbatched), with names: '(num_layers * ...)'."""
    num_directions = 2 if module.bidirectional else 1
    states = f"num_layers * num_directions={module.num_layers * num_directions}"
    projected = module.proj_size and not cell
    size = f"proj_size={module.proj_size}" if projected else f"hidden_size={module.hidden_size}"
    return f"({states}, {size})" if batch is None else f"({states}, batch={batch}, {size})"


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
