"""A stacked layer's parts as layers of their own: some of its layers, and their rows of an initial state.

helpers.diagnose probes each layer alone with them, and helpers.wiring_slips runs a stack one layer
at a time with them; both let torch compute every part, so no recurrence of ours is involved.
"""

import re

import torch


def layers(module, start, stop):
    """A copy of layers start..stop-1 of `module` as a module of their own (None when there are none)."""
    if stop <= start:
        return None
    options = {"bias": module.bias, "batch_first": module.batch_first, "bidirectional": module.bidirectional}
    if module.mode.startswith("RNN"):
        options["nonlinearity"] = module.nonlinearity
    if module.mode == "LSTM":
        options["proj_size"] = module.proj_size
    D = 2 if module.bidirectional else 1
    input_size = module.input_size if start == 0 else D * (module.proj_size or module.hidden_size)
    part = type(module)(input_size, module.hidden_size, num_layers=stop - start, **options)  # caller's RNG
    part = part.to(module.weight_ih_l0.dtype).eval()
    with torch.no_grad():
        for param_name, param in part.named_parameters():
            layer = int(re.search(r"_l(\d+)", param_name).group(1))
            source = re.sub(r"_l\d+", f"_l{layer + start}", param_name)
            param.copy_(getattr(module, source))
    return part


def rows(hx, which):
    """The rows of an initial state (h_0, or (h_0, c_0)) that belong to some layers; None stays None."""
    if hx is None:
        return None
    if isinstance(hx, (tuple, list)):
        return tuple(part[which] for part in hx)
    return hx[which]
