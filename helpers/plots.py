"""Draw hidden states. Each function takes Axes and data and returns the artists it made.

Nothing here displays a figure or keeps global state, so the same functions serve static
plots in notebooks and the redrawn plot of `helpers.widgets.explore` (which updates the
returned artists in place). Introduced in notebooks/01_scalar_rnn.ipynb.
"""

import matplotlib
import numpy as np
import torch
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from helpers._validate import student_facing
from helpers.unroll import GATES

# Okabe & Ito's palette: its colours stay distinct under every common colour-vision deficiency.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
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
    marker = "o" if len(states) <= 25 else None  # dots help count steps, until they crowd
    lines = [
        ax.plot(
            steps,
            states[:, unit],
            marker=marker,
            markersize=3,
            color=PALETTE[unit % len(PALETTE)],
            label=f"${label}[{unit}]$",
        )[0]
        for unit in range(states.shape[1])
    ]
    ax.axhline(0, color="0.8", linewidth=0.8, zorder=0)
    ax.set_xlabel("time step t")
    ax.set_ylabel(f"${label}_t$")
    ax.set_xlim(0.5, len(states) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # time steps are whole numbers
    if ylim is not None:
        ax.set_ylim(*ylim)
    if 1 < states.shape[1] <= 8:  # beside the plot, where redrawn lines cannot cover it
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return lines


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
def draw_unrolled(num_layers=1, bidirectional=False, seq_len=4, ax=None, highlight=None):
    """Draw the unrolled computation graph of an nn.RNN; returns the artists by role.

    One box per cell (layer, direction, time step); arrows for the recurrence (forward left to
    right, backward right to left); for a bidirectional layer, a ⊕ node per time step where
    [forward_t, backward_t] are concatenated and passed to both directions of the next layer;
    the inputs below, `output[t]` above and every `h_n[layer * D + direction]` beside the cell
    it comes from. Time steps are numbered from 1 in the boxes (h_1 is `output[0]`).

    `highlight` marks what one result depends on: ("output", t), ("h_n", index) or
    ("cell", layer, direction, t), with t a Python index (0 to seq_len - 1). The returned
    dict has "cells" {(layer, direction, t): patch}, "inputs" {t: patch}, "arrows" (list),
    "labels" {text: Text} and "depends_on" (the highlighted cells and input indices).
    Introduced in notebooks/04_bidirectional.ipynb.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    directions = 2 if bidirectional else 1
    spacing, width, height = 1.7, 0.8, 0.55  # column spacing and cell size, in data units
    band = 2.7 if bidirectional else 1.3  # height of one layer: its rows (and the ⊕ row)
    if ax is None:
        _, ax = plt.subplots(figsize=(2.9 + 1.15 * seq_len, 1.0 + 1.05 * band * num_layers))
    cells_needed, inputs_needed = _dependencies(num_layers, directions, seq_len, highlight)
    artists = {"cells": {}, "inputs": {}, "arrows": [], "labels": {}, "depends_on": (cells_needed, inputs_needed)}
    lit = PALETTE[1]  # orange: what the highlighted result depends on

    def row_y(layer, direction):
        return 1.3 + layer * band + direction * 0.95

    def plus_y(layer):
        return row_y(layer, 1) + 0.9

    def box(x, y, text, is_lit, box_height=height):
        face = "#DCEBF7" if highlight is None else (lit if is_lit else "#F2F2F2")
        patch = FancyBboxPatch(
            (x - width / 2, y - box_height / 2),
            width,
            box_height,
            boxstyle="round,pad=0.04",
            facecolor=face,
            edgecolor="0.3",
            linewidth=1,
            zorder=2,
        )
        ax.add_patch(patch)
        ax.text(x, y, text, ha="center", va="center", fontsize=10, zorder=3)
        return patch

    def arrow(start, end, is_lit, bend=0.0, head=True):
        strong = highlight is not None and is_lit
        patch = FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>" if head else "-",
            mutation_scale=9,
            connectionstyle=f"arc3,rad={bend}",
            shrinkA=1,
            shrinkB=1,
            zorder=1,
            color=lit if strong else "0.55",
            linewidth=1.8 if strong else 0.9,
        )
        ax.add_patch(patch)
        artists["arrows"].append(patch)

    side = width / 2 + 0.05  # just outside a box: curved arrows pass beside the boxes they skip
    for t in range(seq_len):
        artists["inputs"][t] = box(t * spacing, 0, f"$x_{{{t + 1}}}$", t in inputs_needed, box_height=0.45)
    for layer in range(num_layers):
        for direction in range(directions):
            y = row_y(layer, direction)
            symbol = r"\overleftarrow{h}" if direction else r"\overrightarrow{h}"
            for t in range(seq_len):
                x, key = t * spacing, (layer, direction, t)
                needed = key in cells_needed
                artists["cells"][key] = box(x, y, f"${symbol}^{{({layer})}}_{{{t + 1}}}$", needed)
                previous = t - 1 if direction == 0 else t + 1  # the step whose state this one reads
                if 0 <= previous < seq_len:
                    gap = width / 2 if direction == 0 else -width / 2
                    arrow(
                        (previous * spacing + gap, y),
                        (x - gap, y),
                        needed and (layer, direction, previous) in cells_needed,
                    )
                # What this cell reads at time t: x_t, or the layer below (its ⊕ when bidirectional).
                if layer == 0:
                    source, source_needed = (x, 0.225), t in inputs_needed
                elif bidirectional:
                    source, source_needed = (x, plus_y(layer - 1) + 0.15), needed
                else:
                    source, source_needed = (x, row_y(layer - 1, 0) + height / 2), needed
                if direction == 0:
                    arrow(source, (x, y - height / 2), needed and source_needed)
                else:  # around the forward box of the same step, on its right
                    arrow((source[0] + 0.1, source[1]), (x + side, y), needed and source_needed, bend=0.3)
            final_t = 0 if direction else seq_len - 1  # the backward run ends at t = 0
            text = f"h_n[{layer * directions + direction}]"
            artists["labels"][text] = ax.text(  # beside the cell it comes from, outside the curves
                final_t * spacing + (-1 if direction else 1) * (width / 2 + 0.55),
                y,
                text,
                ha="right" if direction else "left",
                va="center",
                fontsize=8,
                family="monospace",
                color="0.2",
            )
        if bidirectional:  # ⊕: the time-aligned [forward_t, backward_t] the next layer (or output) reads
            for t in range(seq_len):
                x, y = t * spacing, plus_y(layer)
                used = {(layer, 0, t), (layer, 1, t)} <= cells_needed
                ax.text(
                    x,
                    y,
                    "⊕",
                    ha="center",
                    va="center",
                    fontsize=13,
                    zorder=3,
                    color=lit if (highlight is not None and used) else "0.3",
                )
                arrow((x, row_y(layer, 1) + height / 2), (x, y - 0.15), used, head=False)
                arrow((x - side, row_y(layer, 0)), (x - 0.1, y - 0.12), used, bend=-0.3, head=False)
    top = (plus_y(num_layers - 1) if bidirectional else row_y(num_layers - 1, 0)) + 0.6
    for t in range(seq_len):
        artists["labels"][f"output[{t}]"] = ax.text(
            t * spacing, top, f"output[{t}]", ha="center", va="center", fontsize=8, family="monospace", color="0.2"
        )
    ax.set_xlim(-2.4, (seq_len - 1) * spacing + 2.4)
    ax.set_ylim(-0.4, top + 0.3)
    ax.set_aspect("equal")
    ax.axis("off")
    return artists


def _dependencies(num_layers, directions, seq_len, highlight):
    """The cells and input steps that the highlighted result depends on (both empty if none)."""
    if highlight is None:
        return set(), set()
    kind, *where = highlight
    if kind == "output":
        (t,) = where
        todo = [(num_layers - 1, d, t) for d in range(directions)]
    elif kind == "h_n":
        (index,) = where
        layer, direction = divmod(index, directions)
        if not 0 <= layer < num_layers:
            raise ValueError(f"h_n[{index}] does not exist: h_n has {num_layers * directions} rows.")
        todo = [(layer, direction, 0 if direction else seq_len - 1)]
    elif kind == "cell":
        todo = [tuple(where)]
    else:
        raise ValueError(
            f"highlight={highlight!r}: use ('output', t), ('h_n', index) or ('cell', layer, direction, t)."
        )
    for layer, direction, t in todo:
        if not (0 <= layer < num_layers and 0 <= direction < directions and 0 <= t < seq_len):
            raise ValueError(
                f"highlight={highlight!r} is outside a graph of {num_layers} layer(s), "
                f"{directions} direction(s) and {seq_len} steps (t counts from 0)."
            )
    cells, inputs = set(), set()
    while todo:
        layer, direction, t = todo.pop()
        if (layer, direction, t) in cells:
            continue
        cells.add((layer, direction, t))
        previous = t - 1 if direction == 0 else t + 1
        if 0 <= previous < seq_len:
            todo.append((layer, direction, previous))
        if layer == 0:
            inputs.add(t)
        else:
            todo.extend((layer - 1, d, t) for d in range(directions))
    return cells, inputs


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
    c_line = ax.plot(steps, series[0], color=PALETTE[5], marker="s", markersize=3, label=f"$c_t[{unit}]$ (cell)")[0]
    h_line = ax.plot(steps, series[1], color=PALETTE[0], marker="o", markersize=3, label=f"$h_t[{unit}]$ (hidden)")[0]
    ax.axhline(0, color="0.8", linewidth=0.8, zorder=0)
    ax.set_xlabel("time step t")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
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
        dark = colour[:3] @ np.array([0.299, 0.587, 0.114]) < 0.5  # white letters on dark cells
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
    return texts
