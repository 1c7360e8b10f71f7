"""Draw hidden states. Each function takes Axes and data and returns the artists it made.

Nothing here displays a figure or keeps global state, so the same functions serve static
plots in notebooks and the redrawn plot of `helpers.widgets.explore` (which updates the
returned artists in place). Introduced in notebooks/01_scalar_rnn.ipynb.
"""

from dataclasses import dataclass

import matplotlib
import numpy as np
import torch
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.ticker import MaxNLocator

from helpers._validate import student_facing
from helpers.describe import number, plain, say
from helpers.graph import depends_on
from helpers.unroll import GATES

# Lines and markers: Okabe & Ito's palette without its three light colours (orange, sky blue and
# yellow are under 3:1 against white), plus a violet. Every colour is at least 3:1 on white, and
# they stay apart under simulated protanopia, deuteranopia and tritanopia (tests/test_plots.py).
# Colour is never the only cue: each unit also gets its own line style and marker.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#8833EE", "#000000")
LINE_STYLES = ("-", "--", ":", "-.")  # a unit's second cue, with its marker
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HIGHLIGHT = "#E69F00"  # a highlighted box's fill (black text on it: 9.3:1); its thick edge says it too
REFERENCE = "0.45"  # the zero line and other guides: grey at 4.4:1 on white
DIRECTION_NAMES = ("forward", "backward")
DIVERGING = "RdBu_r"  # blue negative, red positive, white zero; readable in greyscale too


@student_facing
def time_by_unit(states):
    """`states` as a float NumPy array (T, H): accepts (T,), (T, H), or a (T, 1, H) batch of one."""
    if isinstance(states, torch.Tensor):
        states = states.detach().cpu().numpy()
    states = np.asarray(states, dtype=float)
    if states.ndim == 3 and states.shape[1] == 1:
        states = states[:, 0]  # (T, 1, H) -> (T, H)
    if states.ndim == 1:
        states = states[:, None]  # (T,) -> (T, 1)
    if states.ndim != 2:
        raise ValueError(
            f"expected hidden states shaped (seq_len, hidden_size); got shape {states.shape}. "
            "For a batch, pick one sequence first, e.g. states[:, 0] for (seq_len, batch, hidden_size)."
        )
    return states


@student_facing
def hidden_states(ax, states, label="h", ylim=(-1.05, 1.05)):
    """One line per hidden unit over time steps 1..T; returns the list of Line2D."""
    states = time_by_unit(states)
    steps = np.arange(1, len(states) + 1)
    markers = len(states) <= 25  # markers help count steps, until they crowd
    lines = [
        ax.plot(steps, states[:, unit], markersize=4 if markers else 0, label=f"${label}[{unit}]$", **cue(unit))[0]
        for unit in range(states.shape[1])
    ]
    ax.axhline(0, color=REFERENCE, linewidth=0.6, zorder=0)
    ax.set_xlabel("time step t")
    ax.set_ylabel(f"${label}_t$")
    ax.set_xlim(0.5, len(states) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # time steps are whole numbers
    if ylim is not None:
        ax.set_ylim(*ylim)
    if 1 < states.shape[1] <= 8:  # beside the plot, where redrawn lines cannot cover it
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return lines


def cue(k):
    """The colour, line style and marker of the k-th series: it differs from the others in more than colour."""
    return {
        "color": PALETTE[k % len(PALETTE)],
        "linestyle": LINE_STYLES[k % len(LINE_STYLES)],
        "marker": MARKERS[k % len(MARKERS)],
    }


@student_facing
def heatmap(ax, states, limit=1.0, label="h"):
    """A time × unit image, diverging colours fixed to [-limit, limit]; returns the AxesImage."""
    states = time_by_unit(states)
    image = ax.imshow(
        states.T,
        cmap=DIVERGING,
        vmin=-limit,
        vmax=limit,
        aspect="auto",
        interpolation="nearest",
        extent=(0.5, len(states) + 0.5, states.shape[1] - 0.5, -0.5),
    )
    ax.set_xlabel("time step t")
    ax.set_ylabel(f"unit of ${label}$")
    ax.set_yticks(range(states.shape[1]))
    return image


@student_facing
def directions(axes, forward, backward, label="h", ylim=(-1.05, 1.05)):
    """Forward and backward states on two Axes, each in time order; returns (lines, lines)."""
    drawn = []
    for ax, states, name in zip(axes, (forward, backward), DIRECTION_NAMES, strict=True):
        drawn.append(hidden_states(ax, states, label=label, ylim=ylim))
        ax.set_title(f"{name} direction" + (" (runs t = T … 1)" if name == "backward" else ""))
    return tuple(drawn)


@student_facing
def layer_grid(axes, trace, batch=0, label="h", ylim=(-1.05, 1.05)):
    """Every layer (rows, top layer first) and direction (columns) of a Trace.

    `axes` is a 2-D array (num_layers, num_directions), as from
    `plt.subplots(num_layers, num_directions, squeeze=False)`. Returns {(layer, direction): lines}.
    """
    drawn = {}
    for layer in range(trace.num_layers):
        for direction in range(trace.num_directions):
            ax = axes[trace.num_layers - 1 - layer][direction]  # the top layer is drawn on top
            states = trace.stack("h", layer, direction)
            if trace.batched:
                states = states[:, batch]
            drawn[layer, direction] = hidden_states(ax, states, label=label, ylim=ylim)
            title = f"layer {layer}"
            if trace.num_directions == 2:
                title += f", {DIRECTION_NAMES[direction]}"
            ax.set_title(title)
    return drawn


@student_facing
def draw_unrolled(ax, num_layers=1, bidirectional=False, seq_len=4, highlight=None):
    """Draw the unrolled computation graph of an nn.RNN on `ax`; returns the artists by role.

    One box per cell (layer, direction, time step); arrows for the recurrence (forward left to
    right, backward right to left); for a bidirectional layer, a ⊕ node per time step where
    [forward_t, backward_t] are concatenated and passed to both directions of the next layer;
    the inputs below, `output[t]` above and every `h_n[layer * D + direction]` beside the cell
    it comes from. Time steps are numbered from 1 in the boxes (h_1 is `output[0]`).
    `unrolled_size(...)` gives a figure size that fits it.

    `highlight` marks what one result depends on (helpers.graph.depends_on): ("output", t),
    ("h_n", index) or ("cell", layer, direction, t), with t a Python index (0 to seq_len - 1).
    The returned dict has "cells" {(layer, direction, t): patch}, "inputs" {t: patch}, "arrows"
    (list), "labels" {text: Text} and "depends_on" (the highlighted cells and input indices).
    Introduced in notebooks/04_bidirectional.ipynb.
    """
    grid = _Grid(num_layers, 2 if bidirectional else 1, seq_len)
    needed = None if highlight is None else depends_on(highlight, num_layers, grid.directions, seq_len)
    pen = _Pen(ax, needed)
    artists = {"cells": {}, "inputs": {}, "arrows": pen.arrows, "labels": {}, "depends_on": needed or (set(), set())}
    for t in range(seq_len):
        artists["inputs"][t] = pen.box((grid.x(t), 0), f"$x_{{{t + 1}}}$", pen.is_lit(input_step=t), height=0.45)
    for layer in range(num_layers):
        for direction in range(grid.directions):
            for t in range(seq_len):
                artists["cells"][layer, direction, t] = _draw_cell(pen, grid, (layer, direction, t))
            text = f"h_n[{layer * grid.directions + direction}]"
            artists["labels"][text] = _label(ax, grid.h_n_position(layer, direction), text, direction)
        if bidirectional:
            for t in range(seq_len):
                _draw_concatenation(pen, grid, layer, t)
    for t in range(seq_len):
        artists["labels"][f"output[{t}]"] = _label(ax, (grid.x(t), grid.top), f"output[{t}]")
    ax.set_xlim(-2.4 if bidirectional else -0.8, grid.x(seq_len - 1) + 2.4)  # backward runs put h_n labels at the left
    ax.set_ylim(-0.4, grid.top + 0.3)
    ax.set_aspect("equal")
    ax.axis("off")
    say(ax, _unrolled_text(grid, highlight, needed))
    return artists


def _unrolled_text(grid, highlight, needed):
    """draw_unrolled's graph in words: its layout, and what the highlighted result depends on."""
    T = grid.seq_len
    kind = "bidirectional" if grid.directions == 2 else "unidirectional"
    text = (
        f"the unrolled graph of a {grid.num_layers}-layer {kind} nn.RNN over {T} time steps. Inputs x_1 to x_{T} "
        f"at the bottom, output[0] to output[{T - 1}] at the top, one row of cells per layer"
        + (" and direction" if grid.directions == 2 else "")
        + ". Each forward cell reads the state of the step before it"
        + (", each backward cell the state of the step after it" if grid.directions == 2 else "")
        + (
            ", and ⊕ joins the forward and backward states of each step for the layer above"
            if grid.directions == 2
            else ", and the cell below"
        )
        + ". "
        + ", ".join(
            f"h_n[{layer * grid.directions + direction}] comes from the {DIRECTION_NAMES[direction]} cell of layer "
            f"{layer} at step {T if direction == 0 else 1}"
            for layer in range(grid.num_layers)
            for direction in range(grid.directions)
        )
        + "."
    )
    if highlight is None:
        return text
    cells, inputs = needed
    rows = []
    for layer in range(grid.num_layers):
        for direction in range(grid.directions):
            steps = sorted(t + 1 for (row, d, t) in cells if (row, d) == (layer, direction))
            if steps:
                rows.append(f"layer {layer} {DIRECTION_NAMES[direction]} at {_listed(steps)}")
    xs = _listed(sorted(t + 1 for t in inputs))
    return (
        text + f" Highlighted, what {_result_name(highlight)} depends on: cells of {'; '.join(rows)}; inputs x at {xs}."
    )


def _result_name(highlight):
    """('output', 2) -> 'output[2]'; ('cell', 1, 0, 0) -> 'the forward cell of layer 1 at step 1'."""
    if highlight[0] == "cell":
        _, layer, direction, t = highlight
        return f"the {DIRECTION_NAMES[direction]} cell of layer {layer} at step {t + 1}"
    return f"{highlight[0]}[{highlight[1]}]"


def _listed(numbers):
    """[1, 2, 3, 5] -> 'steps 1 to 3 and 5'; [4] -> 'step 4'."""
    runs, start = [], None
    for k, n in enumerate(numbers):
        if start is None:
            start = n
        if k + 1 == len(numbers) or numbers[k + 1] != n + 1:
            runs.append(str(start) if start == n else f"{start} to {n}")
            start = None
    if not runs:
        return "no step"
    return (
        ("step " if runs == [str(numbers[0])] else "steps ")
        + ", ".join(runs[:-1])
        + (" and " if len(runs) > 1 else "")
        + runs[-1]
    )


def unrolled_size(num_layers=1, bidirectional=False, seq_len=4):
    """(width, height) in inches of a figure that fits draw_unrolled's graph at readable size."""
    band = _Grid(num_layers, 2 if bidirectional else 1, seq_len).band
    return (2.9 + 1.15 * seq_len, 1.0 + 1.05 * band * num_layers)


@dataclass(frozen=True)
class _Grid:
    """Where draw_unrolled puts things, in data units: a column per time step, rows by layer and direction."""

    num_layers: int
    directions: int
    seq_len: int
    spacing = 1.7  # between time steps
    width, height = 0.8, 0.55  # of a cell's box

    @property
    def band(self):
        """The height of one layer: its rows (and, bidirectional, the ⊕ row)."""
        return 2.7 if self.directions == 2 else 1.3

    def x(self, t):
        return t * self.spacing

    def y(self, layer, direction):
        return 1.3 + layer * self.band + direction * 0.95

    def plus_y(self, layer):
        """The row of ⊕ nodes above a bidirectional layer."""
        return self.y(layer, 1) + 0.9

    @property
    def top(self):
        """Where the output labels go, above the top layer."""
        last = self.num_layers - 1
        return (self.plus_y(last) if self.directions == 2 else self.y(last, 0)) + 0.6

    def source(self, layer, t):
        """Where the arrow into a cell at (layer, t) starts: x_t's box, the ⊕ below, or the cell below."""
        if layer == 0:
            return (self.x(t), 0.225)
        if self.directions == 2:
            return (self.x(t), self.plus_y(layer - 1) + 0.15)
        return (self.x(t), self.y(layer - 1, 0) + self.height / 2)

    def h_n_position(self, layer, direction):
        """Beside the cell h_n's row comes from (the backward run ends at t = 0), outside the curves."""
        final_t = 0 if direction else self.seq_len - 1
        return (self.x(final_t) + (-1 if direction else 1) * (self.width / 2 + 0.55), self.y(layer, direction))


class _Pen:
    """Boxes and arrows on one Axes, coloured by whether they lie on the highlighted path."""

    # What the highlighted result depends on: orange boxes with a thick black edge, thick orange-red arrows.
    LIT, PLAIN, FADED = PALETTE[1], "#DCEBF7", "#F2F2F2"

    def __init__(self, ax, lit):
        self.ax, self.lit, self.arrows = ax, lit, []  # lit: (cells, input steps), or None without a highlight

    def is_lit(self, cell=None, input_step=None):
        """Whether a cell (or an input step) is one the highlighted result depends on."""
        if self.lit is None:
            return False
        return cell in self.lit[0] if cell is not None else input_step in self.lit[1]

    def box(self, xy, text, is_lit, height=_Grid.height):
        face = self.PLAIN if self.lit is None else (HIGHLIGHT if is_lit else self.FADED)
        width = _Grid.width
        patch = FancyBboxPatch(
            (xy[0] - width / 2, xy[1] - height / 2),
            width,
            height,
            boxstyle="round,pad=0.04",
            facecolor=face,
            edgecolor="black" if is_lit else "0.3",
            linewidth=2.4 if is_lit else 1,
            zorder=2,
        )
        self.ax.add_patch(patch)
        self.ax.text(*xy, text, ha="center", va="center", fontsize=12, zorder=3)
        return patch

    def arrow(self, start, end, is_lit, bend=0.0, head=True):
        patch = FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>" if head else "-",
            mutation_scale=9,
            connectionstyle=f"arc3,rad={bend}",
            shrinkA=1,
            shrinkB=1,
            zorder=1,
            color=self.LIT if is_lit else "0.55",
            linewidth=1.8 if is_lit else 0.9,
        )
        self.ax.add_patch(patch)
        self.arrows.append(patch)


def _draw_cell(pen, grid, cell):
    """A cell's box, the arrow from its previous state and the arrow from what it reads below."""
    layer, direction, t = cell
    x, y = grid.x(t), grid.y(layer, direction)
    needed = pen.is_lit(cell)
    symbol = r"\overleftarrow{h}" if direction else r"\overrightarrow{h}"
    patch = pen.box((x, y), f"${symbol}^{{({layer})}}_{{{t + 1}}}$", needed)
    previous = t - 1 if direction == 0 else t + 1  # the step whose state this one reads
    if 0 <= previous < grid.seq_len:
        gap = grid.width / 2 if direction == 0 else -grid.width / 2
        pen.arrow((grid.x(previous) + gap, y), (x - gap, y), needed and pen.is_lit((layer, direction, previous)))
    source = grid.source(layer, t)
    source_lit = needed and (pen.is_lit(input_step=t) if layer == 0 else True)
    if direction == 0:
        pen.arrow(source, (x, y - grid.height / 2), source_lit)
    else:  # around the forward box of the same step, on its right
        side = grid.width / 2 + 0.05  # just outside a box: curved arrows pass beside the boxes they skip
        pen.arrow((source[0] + 0.1, source[1]), (x + side, y), source_lit, bend=0.3)
    return patch


def _draw_concatenation(pen, grid, layer, t):
    """⊕: the time-aligned [forward_t, backward_t] the next layer (or output) reads."""
    x, y = grid.x(t), grid.plus_y(layer)
    used = pen.is_lit((layer, 0, t)) and pen.is_lit((layer, 1, t))
    pen.ax.text(x, y, "⊕", ha="center", va="center", fontsize=15, zorder=3, color=pen.LIT if used else "0.3")
    pen.arrow((x, grid.y(layer, 1) + grid.height / 2), (x, y - 0.15), used, head=False)
    side = grid.width / 2 + 0.05
    pen.arrow((x - side, grid.y(layer, 0)), (x - 0.1, y - 0.12), used, bend=-0.3, head=False)


def _label(ax, xy, text, direction=None):
    """A small monospace name of a result: output[t] centred, h_n[k] beside its cell (direction 0 or 1)."""
    ha = "center" if direction is None else ("right" if direction else "left")
    return ax.text(*xy, text, ha=ha, va="center", fontsize=12, family="monospace", color="0.2")


@student_facing
def gate_heatmaps(axes, trace, layer=0, direction=0, batch=0, highlight=None):
    """One time × unit heatmap per gate of an LSTM (i, f, g, o) or GRU (r, z, n) trace.

    Sigmoid gates use a sequential scale fixed to [0, 1] (0 = closed, 1 = open); the tanh
    candidates g and n a diverging one fixed to [-1, 1]. `highlight` names one gate to stand
    out; the others are faded. Returns {gate: AxesImage}. Introduced in notebooks/10_lstm.ipynb.
    """
    names = GATES[trace.mode]
    if not names:
        raise ValueError(f"gate_heatmaps needs an LSTM or GRU trace; this one is {trace.mode}, which has no gates.")
    if highlight is not None and highlight not in names:
        raise ValueError(f"highlight={highlight!r}: {trace.mode}'s gates are {', '.join(names)}.")
    if len(axes) != len(names):
        raise ValueError(
            f"{trace.mode} has {len(names)} gates ({', '.join(names)}): pass that many Axes, got {len(axes)}."
        )
    images = {}
    for ax, name in zip(axes, names, strict=True):
        states = trace.stack(name, layer, direction)
        if trace.batched:
            states = states[:, batch]
        candidate = name in ("g", "n")
        image = heatmap(ax, states, label=name)
        if not candidate:
            image.set_cmap("viridis")
            image.set_clim(0.0, 1.0)
        image.set_alpha(1.0 if highlight in (None, name) else 0.25)
        ax.set_title(
            f"{name} ({'candidate, tanh' if candidate else 'gate, sigmoid'})",
            fontweight="bold" if highlight == name else "normal",
        )
        images[name] = image
    return images


@student_facing
def cell_and_hidden(ax, trace, unit=0, layer=0, direction=0, batch=0):
    """An LSTM unit's cell state c_t beside its hidden state h_t over time; returns (c line, h line).

    c is the long-term memory (unbounded), h = o * tanh(c) what the layer shows.
    Introduced in notebooks/10_lstm.ipynb.
    """
    if trace.mode != "LSTM":
        raise ValueError(f"cell_and_hidden needs an LSTM trace; {trace.mode} has no cell state.")
    series = []
    for name in ("c", "h"):
        values = trace.stack(name, layer, direction)
        values = values[:, batch] if trace.batched else values
        series.append(time_by_unit(values)[:, unit])
    steps = np.arange(1, len(series[0]) + 1)
    c_line = ax.plot(steps, series[0], **cue(1), markersize=3, label=f"$c_t[{unit}]$ (cell)")[0]
    h_line = ax.plot(steps, series[1], **cue(0), markersize=3, label=f"$h_t[{unit}]$ (hidden)")[0]
    ax.axhline(0, color=REFERENCE, linewidth=0.6, zorder=0)
    ax.set_xlabel("time step t")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return c_line, h_line


@student_facing
def over_text(ax, text, values, limit=1.0, label=None, width=None):
    """Each character of `text` on a cell coloured by its value, as in Karpathy's pictures of units.

    `values` holds one number per character (a list, or a tensor of shape (len(text),)): one
    unit's state, a tag, a probability. Colours are diverging and fixed to [-limit, limit]
    (blue negative, red positive, white zero), as in `heatmap`. `label`, if given, is written
    to the left. `width` is the number of character cells across the Axes (default: the
    text's length); give texts drawn one above another the same width so their characters
    line up in size. Returns the list of Text artists, one per character.
    Introduced in notebooks/13_text_to_predictions.ipynb.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, one character per cell; got {type(text).__name__}.")
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    values = np.asarray(values, dtype=float)
    if values.shape != (len(text),):
        raise ValueError(
            f"values needs one number per character of text: shape ({len(text)},); got shape {values.shape}. "
            "For a batch, pick one sequence and its real steps first, e.g. states[b, :length, unit]."
        )
    if width is None:
        width = len(text)
    if isinstance(width, bool) or not isinstance(width, int) or width < len(text):
        raise ValueError(
            f"width is the number of character cells across, at least len(text) = {len(text)}; got {width!r}."
        )
    colours = matplotlib.colormaps[DIVERGING]((np.clip(values, -limit, limit) / limit + 1) / 2)
    texts = []
    for x, (character, colour) in enumerate(zip(text, colours, strict=True)):
        ax.add_patch(Rectangle((x, 0), 1, 1, facecolor=colour, edgecolor="none"))
        dark = _luminance(colour) < 0.179  # white letters where they contrast more than black (>= 4.5:1 either way)
        texts.append(
            ax.text(
                x + 0.5,
                0.5,
                character,
                ha="center",
                va="center",
                family="monospace",
                color="white" if dark else "black",
            )
        )
    ax.set_xlim(0, max(width, 1))
    ax.set_ylim(0, 1)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    if label is not None:
        ax.set_ylabel(label, rotation=0, ha="right", va="center")
    say(ax, _text_values(text, values, label, limit))
    return texts


def _luminance(colour):
    """WCAG's relative luminance of an RGB(A) colour with channels in [0, 1]."""
    rgb = np.asarray(colour[:3], float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def _text_values(text, values, label, limit):
    """over_text in words: each character's value, or for a long text its strongest ones."""
    head = f"{plain(label)}: " if label else ""
    head += (
        f"the text {text!r}, each character coloured by its value (blue {number(-limit)}, white 0, red {number(limit)})"
    )
    if len(text) <= 40:
        return head + ": " + ", ".join(f"{c!r} {number(v)}" for c, v in zip(text, values, strict=True))
    order = np.argsort(values)
    strongest = lambda picks: ", ".join(f"{text[k]!r} at {k + 1} ({number(values[k])})" for k in picks)  # noqa: E731
    return head + f"; highest: {strongest(order[::-1][:5])}; lowest: {strongest(order[:5])}"
