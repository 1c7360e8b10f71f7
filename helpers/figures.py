"""Every Matplotlib figure a notebook shows: in a colour-blind-safe style, with its text alternative.

`import helpers` calls `install()` in IPython (a notebook's kernel), which
- sets Matplotlib's colour cycle to `helpers.plots.PALETTE`, each colour with its own line style,
  so a student's own `ax.plot` lines differ in more than colour;
- shows each figure with `helpers.describe(figure)` as its image's alt text: in the output's
  metadata (`image/png` → `alt`, which the decks' and HTML exports' template writes into the
  <img>), as its text/plain (what nbval compares, so the stored descriptions are checked), and as a
  text/markdown image with that alt text, which JupyterLab, Notebook 7 and Voila show instead of
  the bare PNG (their image renderer ignores `alt`);
- records the smallest text's size in the PNG's pixels (`smallest_text_px`) in the image's metadata,
  `text_px`, which the decks' fit check scales by how large the picture is shown (at least 16px);
- says on stderr when a legend covers data points (`covered_by_legend`): an output strict nbval
  fails on, so no stored figure hides a point behind its legend, and a student's own figure
  gets the same hint.

Outside IPython nothing changes. Introduced in notebooks/01_scalar_rnn.ipynb.
"""

import base64
import functools
import re
import sys
import weakref

import matplotlib
import matplotlib.text
from cycler import cycler
from matplotlib.figure import Figure

from helpers.describe import describe
from helpers.plots import LINE_STYLES, PALETTE

_last = (
    weakref.WeakKeyDictionary()
)  # figure -> (its PNG, its description): made for text/markdown, reused for image/png
# 12 pairs of colour and line style (6 colours, 4 styles), each different from the others: lines stay
# apart without colour.
# Text at 12 pt is 16.7 px in a picture at 100 dpi: readable from the back row when a deck shows the picture
# at its own size on a 1280×720 screen (slides/measure.py checks every picture, scaled as shown).
STYLE = {
    "font.size": 12,
    "axes.prop_cycle": cycler(color=[PALETTE[k % len(PALETTE)] for k in range(12)])
    + cycler(linestyle=[LINE_STYLES[k % len(LINE_STYLES)] for k in range(12)]),
}


def install(shell=None):
    """Apply STYLE and show figures with their descriptions in `shell` (default: the running IPython)."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
        if shell is None:
            return False
    import matplotlib.pyplot as plt

    # Matplotlib loads its backend at the first figure; the inline backend then resets every formatter
    # for Figure (IPython's select_figure_formats). Loading it now lets ours, registered after, stay.
    try:
        shell.display_formatter.formatters["image/png"].lookup_by_type(Figure)
    except KeyError:  # not loaded yet (switching closes open figures, so only then)
        plt.switch_backend(matplotlib.get_backend())
    matplotlib.rcParams.update(STYLE)
    _register(shell)
    # `%matplotlib inline` resets them again: register them again before each cell.
    if not any(getattr(callback, "_helpers", False) for callback in shell.events.callbacks["pre_run_cell"]):
        callback = functools.partial(_register, shell)
        callback._helpers = True
        shell.events.register("pre_run_cell", callback)
    return True


def _register(shell, *_):
    """Figure's formatters: text/plain and text/markdown say what it shows, image/png gets alt text."""
    formatters = shell.display_formatter.formatters
    formatters["text/plain"].for_type(Figure, _plain)
    formatters["text/markdown"].for_type(Figure, _markdown)
    _wrap_png(shell)


def _plain(figure, printer, cycle):
    printer.text(describe(figure))


def _wrap_png(shell, *_):
    """Make the PNG formatter for Figure (the inline backend's) also return {"alt": description}."""
    png = shell.display_formatter.formatters["image/png"]
    try:
        current = png.lookup_by_type(Figure)
    except KeyError:
        return  # no inline backend yet: pyplot's import will register one, wrapped before the next cell
    if getattr(current, "_helpers", False):
        return

    @functools.wraps(current)
    def with_alt(figure):
        result, text = _last.pop(figure, None) or (current(figure), None)  # made a moment ago for text/markdown?
        data, metadata = result if isinstance(result, tuple) else (result, {})
        if data is None:
            return None
        return data, {
            **(metadata or {}),
            "alt": text or describe(figure),
            "text_px": smallest_text_px(figure, drawn=True),
        }  # drawn for its PNG

    with_alt._helpers = True
    png.for_type(Figure, with_alt)


def smallest_text_px(figure, drawn=False):
    """The size of the smallest text a figure draws, in its PNG's pixels: the font size (pt) × dpi / 72.

    The decks' fit check (slides/measure.py) scales it by how large the picture is shown; a formula's
    sub- and superscripts are smaller than its font size, as MathJax's are in the slides' text.
    None for a figure without text. `drawn`: the figure has been drawn already (its tick labels exist).
    """
    if not drawn:
        figure.draw_without_rendering()
    sizes = [
        text.get_fontsize()
        for text in figure.findobj(matplotlib.text.Text)
        if text.get_visible() and text.get_text().strip() and text.get_figure() is figure
    ]
    return round(min(sizes) * figure.dpi / 72, 1) if sizes else None


def covered_by_legend(figure):
    """The data points (of lines and scatters) that a legend inside its axes draws over.

    Returns a list of (axes title or "axes N", number of points covered), empty when no legend
    covers a point. Points are compared with the legend's box as drawn, in display coordinates.
    """
    figure.draw_without_rendering()
    covered = []
    for number, ax in enumerate(figure.axes, 1):
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent()
        points = [line.get_transform().transform(line.get_xydata()) for line in ax.lines if line.get_visible()]
        points += [c.get_offset_transform().transform(c.get_offsets()) for c in ax.collections if c.get_visible()]
        inside = sum(int(box.contains(x, y)) for block in points for x, y in block)
        if inside:
            covered.append((ax.get_title() or f"axes {number}", inside))
    return covered


def _warn_if_covered(figure):
    """Say on stderr (an output strict nbval fails on) which legends cover data points."""
    for title, count in covered_by_legend(figure):
        print(
            f"Note: the legend of {title!r} covers {count} data point(s); "
            "ax.legend(loc='upper left', bbox_to_anchor=(1, 1)) puts it beside the plot.",
            file=sys.stderr,
        )


def _markdown(figure):
    """The figure as a markdown image whose alt text is its description (JupyterLab renders it).

    IPython asks for text/markdown before image/png; the PNG and description made here are kept for
    that request, so each figure is drawn and described once for the two.
    """
    from IPython import get_ipython

    shell = get_ipython()
    try:
        current = shell.display_formatter.formatters["image/png"].lookup_by_type(Figure)
    except (AttributeError, KeyError):
        return None  # no IPython, or no inline backend: the figure is not shown as a PNG either
    drawn = getattr(current, "__wrapped__", current)(figure)
    data = drawn[0] if isinstance(drawn, tuple) else drawn
    if data is None:
        return None
    text = describe(figure)
    _warn_if_covered(figure)
    _last.clear()
    _last[figure] = (drawn, text)
    png = data if isinstance(data, str) else base64.b64encode(data).decode()
    alt = re.sub(r"([\\`*_\[\]<>|~])", r"\\\1", text)  # markdown's own characters, escaped
    return f"![{alt}](data:image/png;base64,{png.strip()})"
