"""RNNs by hand: the helpers behind the notebooks.

- `unroll(module, input, hx)`: what `module(input, hx)` returns, re-computed step by step.
- `trace(module, input, hx)`: the same, with every intermediate value (a `Trace` of `Step`s).
- `compare(name, ours, theirs)`: one line saying whether a hand computation matches torch.
- `pack_padded_sequence(...)`: torch's, after checking the lengths with clear messages.
- `helpers.plots`: hidden states as lines, heatmaps, directions and layer grids.
- `helpers.widgets.explore(module, input)`: sliders on a layer's weights that redraw its states.
- `helpers.exercises.check(key, answer)`: checks an exercise's answer, with a specific hint.
- `helpers.data`: small seeded data sets, generated (no downloads).
"""

from helpers import data, exercises, plots, widgets
from helpers.checks import compare
from helpers.packing import pack_padded_sequence
from helpers.unroll import Step, Trace, trace, unroll

__all__ = [
    "Step",
    "Trace",
    "compare",
    "data",
    "exercises",
    "pack_padded_sequence",
    "plots",
    "trace",
    "unroll",
    "widgets",
]
