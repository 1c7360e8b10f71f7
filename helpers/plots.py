"""Draw hidden states. Each function takes Axes and data and returns the artists it made.

Nothing here displays a figure or keeps global state, so the same functions serve static
plots in notebooks and the redrawn plot of `helpers.widgets.explore` (which updates the
returned artists in place). Introduced in notebooks/01_scalar_rnn.ipynb.
"""

import numpy as np
import torch

# Okabe & Ito's palette: its colours stay distinct under every common colour-vision deficiency.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
DIRECTION_NAMES = ("forward", "backward")


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
    if ylim is not None:
        ax.set_ylim(*ylim)
    if 1 < states.shape[1] <= 8:  # beside the plot, where redrawn lines cannot cover it
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return lines


def heatmap(ax, states, limit=1.0, label="h"):
    """A time × unit image, diverging colours fixed to [-limit, limit]; returns the AxesImage."""
    states = time_by_unit(states)
    image = ax.imshow(
        states.T,
        cmap="RdBu_r",  # blue negative, red positive, white zero; readable in greyscale too
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


def directions(axes, forward, backward, label="h", ylim=(-1.05, 1.05)):
    """Forward and backward states on two Axes, each in time order; returns (lines, lines)."""
    drawn = []
    for ax, states, name in zip(axes, (forward, backward), DIRECTION_NAMES, strict=True):
        drawn.append(hidden_states(ax, states, label=label, ylim=ylim))
        ax.set_title(f"{name} direction" + (" (runs t = T … 1)" if name == "backward" else ""))
    return tuple(drawn)


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
