"""RNNs by hand: the helpers behind the notebooks.

- `unroll(module, input, hx)`: what `module(input, hx)` returns, re-computed step by step.
- `trace(module, input, hx)`: the same, with every intermediate value (a `Trace` of `Step`s).
- `compare(name, ours, theirs)`: one line saying whether a hand computation matches torch.
- `diagnose(fn, module, input, hx)`: checks a student's own layer and names its bug (helpers.bugs).
- `pack_padded_sequence(...)`: torch's, after checking the lengths with clear messages.
- `helpers.plots`: hidden states as lines, heatmaps, directions and layer grids.
- `describe(figure)`: what a figure shows, in words with its numbers (its text alternative); in a
  notebook every figure is shown with it as alt text, in a colour-blind-safe style (helpers.figures).
- `helpers.widgets.explore(module, input)`: sliders on a layer's weights that redraw its states.
- `helpers.exercises.check(key, answer)`: checks an exercise's answer, with a specific hint;
  `check_code(key, fn)` checks a function the student wrote; `helpers.attempts` keeps an optional,
  local log of them and exports a results file to hand in.
- `helpers.data`: small seeded data sets, generated (no downloads).
- `glossary(term)`, `shape_sheet()`: the reference pages, shown in the notebook (Colab, Kaggle).
"""

from helpers import attempts, bugs, data, exercises, figures, plots, widgets
from helpers.checks import compare
from helpers.describe import describe
from helpers.diagnosis import diagnose
from helpers.packing import pack_padded_sequence
from helpers.pages import glossary, shape_sheet
from helpers.unroll import Step, Trace, trace, unroll

__all__ = [
    "Step",
    "Trace",
    "attempts",
    "bugs",
    "compare",
    "data",
    "describe",
    "diagnose",
    "exercises",
    "figures",
    "glossary",
    "pack_padded_sequence",
    "plots",
    "shape_sheet",
    "trace",
    "unroll",
    "widgets",
]

figures.install()  # in a notebook: the house style, and every figure shown with its description
