"""Say in words what a Matplotlib figure shows, from the figure's own data: its text alternative.

`describe(figure)` reads what was drawn (lines, heatmaps, bars, titles, labels, colour bars) and
returns sentences with the numbers a sighted reader reads off the picture: every value of a short
series, and for a long one where it starts, ends, peaks and dips. A drawing whose meaning is not
in its numbers (the unrolled graph of `helpers.plots.draw_unrolled`, coloured text) says what it
means with `say(ax, text)`, which replaces that Axes' generic description.

helpers.figures puts the description where readers get it: the image's alt text in a notebook, in
the decks and in HTML exports, and the explorers' live region. Introduced in
notebooks/01_scalar_rnn.ipynb.
"""

import re
import weakref

import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure, SubFigure

from helpers._validate import student_facing

LISTED = 12  # a series this long or shorter is read out value by value; a longer one is summarised
LISTED_CELLS = 48  # a heatmap with this many cells or fewer is read out cell by cell
_SAID = weakref.WeakKeyDictionary()  # Axes -> the description that say() gave it

# TeX in Matplotlib labels ("$h_{t}$", r"$\overrightarrow{h}$") as a screen reader should read it.
_TEX = (
    (r"\\overrightarrow\{(\w+)\}", r"forward \1"),
    (r"\\overleftarrow\{(\w+)\}", r"backward \1"),
    (r"\\\|", "‖"),
    (r"\\partial\s*", "∂"),
    (
        r"\\(rho|sigma|tanh|odot|cdot|log|ln)\b\s*",
        lambda m: {"rho": "ρ", "sigma": "σ", "odot": "⊙", "cdot": "·"}.get(m[1], m[1]),
    ),
    (r"\\,|\\;|\\ ", " "),
    (r"\\([A-Za-z]+)", r"\1"),
    (r"[{}$]", ""),
)


def plain(label):
    """A Matplotlib label without TeX markup: '$h_{t}[0]$' -> 'h_t[0]'."""
    text = str(label)
    for pattern, replacement in _TEX:
        text = re.sub(pattern, replacement, text)
    return re.sub(r"\s+", " ", text).strip()


def number(value):
    """A value as a reader of the plot would quote it: two decimals, or three digits when tiny or huge."""
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    if value == 0 or 0.01 <= abs(value) < 10_000:
        text = f"{value:.2f}"
    else:
        text = f"{value:.2e}".replace("e-0", "e-").replace("e+0", "e")
    return "0.00" if text == "-0.00" else text


def say(ax, text):
    """Describe `ax` with `text` (instead of what describe() would read from its artists)."""
    _SAID[ax] = str(text)


@student_facing
def describe(figure):
    """The text alternative of `figure`: one sentence per panel, with the numbers it shows."""
    if not isinstance(figure, Figure | SubFigure):
        raise TypeError(
            f"describe needs a matplotlib Figure, e.g. fig from plt.subplots(); got {type(figure).__name__}."
        )
    colorbars = [ax for ax in figure.axes if hasattr(ax, "_colorbar")]
    panels = [ax for ax in figure.axes if ax in _SAID or (ax.get_visible() and ax not in colorbars and ax.has_data())]
    texts = [_panel(ax) for ax in panels]
    if len(texts) > 1:
        texts = [f"Panel {k} of {len(texts)}: {text}" for k, text in enumerate(texts, start=1)]
    texts += [_colorbar(ax._colorbar) for ax in colorbars]
    if not texts:
        return "An empty figure."
    suptitle = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
    return " ".join(([f"{plain(suptitle)}."] if suptitle else []) + texts)


def _panel(ax):
    """One Axes: its title, then what is drawn on it."""
    title = plain(ax.get_title() or ax.get_title("left"))
    head = f"{title}: " if title else ""
    if ax in _SAID:
        return head + _sentence(_SAID[ax], head)
    x_name, y_name = plain(ax.get_xlabel()) or "x", plain(ax.get_ylabel()) or "y"
    parts = []
    lines = [line for line in ax.get_lines() if _is_data(line, ax)]
    if lines:
        scale = " (log scale)" if ax.get_yscale() == "log" else ""
        what = "one line" if len(lines) == 1 else f"{len(lines)} lines"
        parts.append(f"{what} of {y_name}{scale} against {x_name}")
        parts += [_line(line, k, x_name) for k, line in enumerate(lines)]
    parts += [_reference(line) for line in ax.get_lines() if not _is_data(line, ax) and _named(line)]
    parts += [_image(image, x_name, y_name) for image in ax.get_images()]
    parts += [_bars(bars, x_name, y_name) for bars in ax.containers if isinstance(bars, BarContainer)]
    parts += [_points(points, x_name, y_name) for points in ax.collections if isinstance(points, PathCollection)]
    return head + _sentence("; ".join(part for part in parts if part) or "no data drawn", head)


def _sentence(text, head):
    """`text` ending with a full stop, and starting with a capital when nothing comes before it."""
    text = text.rstrip(".") + "."
    return text if head or not re.match(r"(one|a|the|no) ", text) else text[0].upper() + text[1:]


def _named(artist):
    """True for an artist the reader can tell by name (in the legend), not one Matplotlib named '_child3'."""
    return bool(artist.get_label()) and not artist.get_label().startswith("_")


def _is_data(line, ax):
    """A line drawn in data coordinates (not axhline/axvline, which span the Axes)."""
    return line.get_visible() and line.get_transform() == ax.transData and len(line.get_xdata()) > 0


def _reference(line):
    """A labelled horizontal or vertical reference line, such as 'ln 2: a coin toss'."""
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    if len(set(y)) == 1:
        return f"a reference line at {number(y[0])} ({plain(line.get_label())})"
    if len(set(x)) == 1:
        return f"a vertical reference line at {number(x[0])} ({plain(line.get_label())})"
    return ""


def _line(line, k, x_name):
    """A series: every value when short, else where it starts, ends, peaks and dips."""
    name = plain(line.get_label()) if _named(line) else f"line {k + 1}"
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    keep = np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(y) == 0:
        return f"{name}: no finite values"
    steps = _steps(x)
    if len(y) <= LISTED:
        values = ", ".join(number(v) for v in y)
        where = f"{x_name} = {steps}" if steps else "at " + ", ".join(_coordinate(v) for v in x)
        return f"{name} ({where}): {values}"
    top, bottom = int(np.argmax(y)), int(np.argmin(y))
    at = f"{x_name} = " if len(x_name) <= 15 else ""  # a long axis name is said once
    return (
        f"{name}: {len(y)} points, {x_name} from {_coordinate(x[0])} to {_coordinate(x[-1])}; starts at "
        f"{number(y[0])}, ends at {number(y[-1])}; highest {number(y[top])} at {at}{_coordinate(x[top])}, "
        f"lowest {number(y[bottom])} at {at}{_coordinate(x[bottom])}"
    )


def _coordinate(value):
    """A position on the x axis: whole numbers (time steps) as integers."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e9 else number(value)


def _steps(x):
    """'1 to 8' when x counts whole steps one by one, else None."""
    if len(x) > 1 and np.all(np.diff(x) == 1) and float(x[0]).is_integer():
        return f"{int(x[0])} to {int(x[-1])}"
    return None


def _image(image, x_name, y_name):
    """A heatmap: its size and colour range, then each row's values (or each row's range, when large)."""
    values = np.ma.masked_invalid(np.asarray(image.get_array(), float))
    if values.ndim != 2:
        return "an image"
    rows, columns = values.shape
    low, high = image.get_clim()
    text = (
        f"a heatmap of {rows} rows ({y_name}) by {columns} columns ({x_name}), "
        f"colour scale from {number(low)} to {number(high)}"
    )
    names = _row_names(image, rows)
    if rows * columns <= LISTED_CELLS:
        read = [f"{name}: {', '.join(number(v) for v in row)}" for name, row in zip(names, values, strict=True)]
    else:
        read = [
            f"{name}: from {number(row.min())} to {number(row.max())}, highest in column {int(row.argmax()) + 1}"
            for name, row in zip(names, values, strict=True)
        ]
    return text + "; " + "; ".join(read)


def _row_names(image, rows):
    """The y tick labels when there is one per row (as helpers.plots.heatmap sets), else 'row k'."""
    labels = [plain(tick.get_text()) for tick in image.axes.get_yticklabels()]
    if len(labels) == rows and all(labels):
        return [label if re.search(r"[A-Za-z]", label) else f"row {label}" for label in labels]
    ticks = image.axes.get_yticks()
    if len(ticks) == rows and all(float(tick).is_integer() for tick in ticks):  # labels hidden by sharey
        return [f"row {int(tick)}" for tick in ticks]
    return [f"row {k + 1}" for k in range(rows)]


def _bars(bars, x_name, y_name):
    """Bar heights, each with the label of its tick."""
    heights = [patch.get_height() for patch in bars.patches]
    ticks = {
        round(tick, 6): plain(label.get_text())
        for tick, label in zip(bars.patches[0].axes.get_xticks(), bars.patches[0].axes.get_xticklabels(), strict=False)
    }
    names = [
        ticks.get(round(patch.get_x() + patch.get_width() / 2, 6)) or number(patch.get_x() + patch.get_width() / 2)
        for patch in bars.patches
    ]
    label = f" ({plain(bars.get_label())})" if _named(bars) else ""
    return f"{len(heights)} bars{label} of {y_name} by {x_name}: " + ", ".join(
        f"{name}: {number(height)}" for name, height in zip(names, heights, strict=True)
    )


def _points(points, x_name, y_name):
    """A scatter plot: how many points, and their ranges."""
    offsets = np.asarray(points.get_offsets(), float)
    if offsets.size == 0:
        return ""
    return (
        f"{len(offsets)} points, {x_name} from {number(offsets[:, 0].min())} to {number(offsets[:, 0].max())}, "
        f"{y_name} from {number(offsets[:, 1].min())} to {number(offsets[:, 1].max())}"
    )


def _colorbar(colorbar):
    """A colour bar: what it measures and its range."""
    label = plain(colorbar.ax.get_ylabel() or colorbar.ax.get_xlabel())
    low, high = colorbar.mappable.get_clim()
    return f"Colour scale{f' ({label})' if label else ''}: {number(low)} to {number(high)}."
