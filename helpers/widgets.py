"""Sliders that set a small recurrent layer's weights and redraw its hidden states at once.

`explore(module, input, hx=None)` returns an `Explorer`; make it a cell's last value to show
sliders beside a plot. Moving a slider re-computes every state with `helpers.trace`, updates the
lines of one Matplotlib figure drawn off screen (only the lines are redrawn, over a cached
background), and replaces the PNG of an `ipywidgets.Image`. The picture lives in the widget's
state, so it also shows in a saved notebook, static HTML and slides, and nbval sees no cell
output that changes. Introduced in notebooks/01_scalar_rnn.ipynb.

`panel(figure, controls, update)` gives any figure the same image path: its controls call
`update` and the figure is redrawn into the panel's image (notebook 12).
"""

import collections
import copy
import functools
import html
import itertools
import math
import re
import struct
import sys
import zlib

import ipywidgets as widgets
import numpy as np
import torch
import traitlets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from torch.nn.utils.rnn import PackedSequence

from helpers import plots
from helpers._validate import student_facing
from helpers.describe import describe
from helpers.figures import smallest_text_px
from helpers.unroll import GATES, trace

MAX_CONTROLS = 24  # more sliders than this is a wall, not an experiment
CONTROL_NAME = re.compile(r"(?P<tensor>\w+)(\[(?P<index>[\d, ]+)\])?")


def _use_colab_widget_manager():
    """On Google Colab, turn on its custom widget manager, which ipywidgets 8 widgets need there (as anywidget
    does on import); elsewhere, nothing."""
    if "google.colab" in sys.modules:
        from google.colab import output

        output.enable_custom_widget_manager()


_use_colab_widget_manager()


def _png(canvas):
    """The canvas as PNG bytes, encoded for speed: unfiltered rows, zlib's fastest level.

    A plot is mostly flat colour, which deflate compresses well without PNG's row filters; this
    takes about half the time of Pillow's PNG encoder (at compress_level=1) for the explorer's
    600×320 picture, with the same pixels (benchmarks/widgets.py times the whole change).
    Opaque pictures (every figure's default) are stored as RGB, others keep their alpha.
    """
    rgba = np.asarray(canvas.buffer_rgba())  # (height, width, 4), uint8
    height, width, _ = rgba.shape
    opaque = bool((rgba[:, :, 3] == 255).all())
    pixels = rgba[:, :, :3] if opaque else rgba
    rows = np.zeros((height, 1 + pixels.shape[2] * width), np.uint8)  # each row: filter 0 (none), then its pixels
    rows[:, 1:] = pixels.reshape(height, -1)
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if opaque else 6, 0, 0, 0)  # 8 bits, RGB or RGBA
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 1)) + _chunk(b"IEND", b"")
    )


def _chunk(kind, data):
    """One PNG chunk: length, type, data, and the CRC of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _error_html(error):
    """An exception as red text beside a plot: a callback's errors otherwise reach only the browser console."""
    return f'<pre style="color:#D55E00">{type(error).__name__}: {html.escape(str(error))}</pre>'


class _EchoGuard:
    """Undoes a browser's late echo of an older value that code set on a control (ipywidgets#3951).

    When code sets a slider, the browser snaps the value to the slider's steps and, if that
    changed its last digit, sends it back. After several quick sets (a loop in a cell) these
    echoes arrive after the newest value and would replace it, so an echo of an older value is
    answered by setting the newest one again.
    """

    def __init__(self, control):
        self.control = control
        self.recent = collections.deque(maxlen=32)  # values set from code, newest last
        self.restoring = False

    def is_stale(self, value):
        """True if `value` is a late echo of an older value set from code (then undone)."""
        from_browser = "value" in self.control._property_lock  # set by ipywidgets while applying browser state
        if not from_browser or self.restoring:
            self.recent.append(value)
            return False
        if any(_same_value(value, v) for v in self.recent):
            if not _same_value(value, self.recent[-1]):
                self.restoring = True
                try:
                    self.control.value = self.recent[-1]
                finally:
                    self.restoring = False
                return True
        else:
            self.recent.clear()  # a real move in the browser: older code-set values no longer matter
        return False


def _same_value(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


class _Picture:
    """A figure drawn off screen into an ipywidgets.Image, redrawn when one of its controls moves.

    What Explorer and Panel share: the canvas, the Image that holds the PNG, a status line where
    an error raised while redrawing appears (a callback's errors otherwise reach only the
    browser's console), and the change handler that skips a browser's late echoes. A subclass
    sets `controls` (name -> widget with a value) and defines `_apply(name, value)`.
    """

    def __init__(self, figure):
        self.figure = figure
        self._canvas = FigureCanvasAgg(figure)
        width = self._canvas.get_width_height()[0]
        self.image = widgets.Image(format="png", layout=widgets.Layout(width=f"{width}px"))
        # The plot in words (helpers.describe), kept current: the image's tooltip, which browsers give
        # it as its accessible name (its title; the decks copy it to alt), and a polite live region
        # below the plot. ipywidgets 8's Image has no alt, and its view shows a tooltip only beside an
        # empty `description`, which Image lacks (without one the view fails: ipywidgets PR #3921).
        self.image.add_traits(description=traitlets.Unicode("").tag(sync=True))
        self.description = widgets.HTML(layout=widgets.Layout(width=f"{width}px"))
        self.description.add_class("rnns-figure-description")
        self.status = widgets.HTML()  # errors raised by a change appear here
        self.last_error = None  # the exception of the last failed change, also shown in the widget

    def _follow(self):
        """Call _apply on every change of a control (after the first picture is stored)."""
        for name, control in self.controls.items():
            control.observe(functools.partial(self._on_change, name, _EchoGuard(control)), names="value")

    def _on_change(self, name, echoes, change):
        """Apply a control's new value (unless it is a stale echo); show any error beside the plot."""
        if echoes.is_stale(change["new"]):
            return
        try:
            self._apply(name, change["new"])
            self.last_error, self.status.value = None, ""
        except Exception as error:  # shown beside the plot, kept in last_error
            self.last_error, self.status.value = error, _error_html(error)

    def _store(self):
        """Put the canvas's current pixels into the Image, as PNG, and their description beside it."""
        self.image.value = _png(self._canvas)
        if not any(name.startswith("rnns-text-px-") for name in self.image._dom_classes):
            # the smallest text's size in the picture's pixels, for the decks' fit check (slides/measure.py)
            self.image.add_class(f"rnns-text-px-{smallest_text_px(self.figure, drawn=True)}")
        text = describe(self.figure)
        self.image.tooltip = text
        self.description.value = f'<div aria-live="polite" style="line-height: 1.3">{html.escape(text)}</div>'

    def _repr_mimebundle_(self, **kwargs):
        """Display as self.widget; the text form is the short repr (stable, for nbval).

        The bundle is the one ipywidgets 8 returns for a widget (and ipywidgets 7 sends from
        _ipython_display_, as it has no _repr_mimebundle_), so either version shows the widget.
        """
        view = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
        return {"text/plain": repr(self), "application/vnd.jupyter.widget-view+json": view}


@student_facing
def explore(module, input, hx=None, controls=None, slider_range=2.0):
    """Sliders for `module`'s weights (or the chosen `controls`) beside a plot of its states.

    `controls` lists what gets a slider: a parameter name ("weight_hh_l0") gives one slider per
    entry, "weight_hh_l0[0,1]" one entry, "input" every input value and "input[2,0,0]" one.
    The default is every weight and bias, for modules with at most 24 of them.
    """
    return Explorer(module, input, hx, controls, slider_range)


class Explorer(_Picture):
    """A copy of a recurrent layer, sliders that set its numbers, and the plot they redraw."""

    @student_facing
    def __init__(self, module, input, hx=None, controls=None, slider_range=2.0):
        if isinstance(input, PackedSequence):
            raise TypeError("explore plots one padded sequence: pass a tensor, e.g. the first sequence of the batch.")
        with torch.no_grad():  # sliders explore values; no gradients are needed
            self.trace = trace(module, input, hx)  # validates module, input and hx first
        self.module = copy.deepcopy(module)  # sliders change this copy, never the student's module
        self.input = input.detach().clone()
        self.hx = _copy(hx)
        tensors = {**dict(self.module.named_parameters()), "input": self.input}
        self._targets = _targets(tensors, controls)  # name -> (tensor, index)
        self.controls = {name: self._slider(name, slider_range) for name in self._targets}
        super().__init__(Figure(figsize=(6, 3.2 + 1.4 * (self.trace.num_layers - 1)), dpi=100, layout="constrained"))
        self._lines = self._draw_axes()
        self._redraw(full=True)
        self._follow()
        sliders = widgets.VBox(list(self.controls.values()), layout=widgets.Layout(max_height="420px", overflow="auto"))
        self.widget = widgets.HBox([sliders, widgets.VBox([self.image, self.description, self.status])])

    def __repr__(self):
        return f"Explorer({self.module!r}, {len(self.controls)} controls: {', '.join(self.controls)})"

    def _slider(self, name, slider_range):
        tensor, index = self._targets[name]
        value = tensor.detach()[index].item()
        limit = max(slider_range, math.ceil(abs(value)))
        return widgets.FloatSlider(
            value=value,
            min=-limit,
            max=limit,
            step=0.01,
            description=self._label(name),
            readout_format=".2f",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="300px"),
        )

    def _label(self, name):
        """A slider's label: its name, plus the gate and unit for LSTM/GRU rows ('bias_hh_l0[2] f[0]')."""
        gates = GATES[self.module.mode]
        tensor_name = name.split("[")[0]
        if not gates or tensor_name == "input" or tensor_name.startswith("weight_hr"):
            return name
        row = self._targets[name][1][0]
        gate, unit = divmod(row, self.module.hidden_size)
        return f"{name} {gates[gate]}[{unit}]"

    def _draw_axes(self):
        """Axes for every layer and direction, and their lines (redrawn on every change)."""
        axes = self.figure.subplots(self.trace.num_layers, self.trace.num_directions, squeeze=False)
        lines = plots.layer_grid(axes, self.trace, ylim=self._ylim())
        if self.trace.num_layers * self.trace.num_directions == 1:
            axes[0][0].set_title("hidden state over time")
        for drawn in lines.values():
            for line in drawn:
                line.set_animated(True)  # left out of the cached background, drawn on top
        return lines

    def _ylim(self):
        """Fixed (-1, 1) for tanh-bounded states; else (relu, LSTM projections) room around all states."""
        if self.module.mode != "RNN_RELU" and not self.module.proj_size:  # states stay in (-1, 1)
            return (-1.05, 1.05)
        low = min(0.0, min(float(step.h.min()) for step in self.trace.steps))
        high = max(1.0, max(float(step.h.max()) for step in self.trace.steps))
        margin = 0.05 * (high - low)
        return (low - margin, high + 2 * margin)

    def _fits(self):
        """True while every state lies inside the current y-limits (no new background needed)."""
        low, high = self._current_ylim
        return all(low <= float(step.h.min()) and float(step.h.max()) <= high for step in self.trace.steps)

    def _apply(self, name, value):
        """Set one number, re-compute every state, redraw."""
        tensor, index = self._targets[name]
        with torch.no_grad():
            tensor[index] = value
            self.trace = trace(self.module, self.input, self.hx)
        self._redraw(full=not self._fits())

    def _redraw(self, full):
        """Update the lines; redraw the background only when the axes changed; store a PNG."""
        for (layer, direction), lines in self._lines.items():
            states = plots.time_by_unit(self._states(layer, direction))
            for unit, line in enumerate(lines):
                line.set_ydata(states[:, unit])
        if full:
            self._current_ylim = self._ylim()
            for ax in self.figure.axes:
                ax.set_ylim(*self._current_ylim)
            self._canvas.draw()
            self._background = self._canvas.copy_from_bbox(self.figure.bbox)
        self._canvas.restore_region(self._background)
        for lines in self._lines.values():
            for line in lines:
                line.axes.draw_artist(line)
        self._store()

    def _states(self, layer, direction):
        states = self.trace.stack("h", layer, direction)
        return states[:, 0] if self.trace.batched else states  # the first sequence of a batch


def _copy(hx):
    """A detached copy of hx: None, a tensor, or LSTM's (h_0, c_0)."""
    if isinstance(hx, tuple):
        return tuple(h.detach().clone() for h in hx)
    return None if hx is None else hx.detach().clone()


def _targets(tensors, controls):
    """Map each control name ('weight_hh_l0[0,1]') to the tensor and index its slider sets."""
    if controls is None:
        controls = [name for name in tensors if name != "input"]
    if isinstance(controls, str):
        controls = [controls]
    targets = {}
    for spec in controls:
        match = CONTROL_NAME.fullmatch(str(spec).replace(" ", ""))
        if not match or match["tensor"] not in tensors:
            raise ValueError(
                f"explore: no control named {spec!r}. Choose from {', '.join(tensors)}, "
                "optionally with an index such as 'weight_hh_l0[0,1]'."
            )
        tensor = tensors[match["tensor"]]
        if match["index"] is None:
            indices = list(itertools.product(*(range(size) for size in tensor.shape)))
        else:
            indices = [tuple(int(i) for i in match["index"].split(","))]
        for index in indices:
            if len(index) != tensor.dim() or any(not 0 <= i < s for i, s in zip(index, tensor.shape, strict=False)):
                raise ValueError(
                    f"explore: {spec!r} is outside {match['tensor']}, which has shape {tuple(tensor.shape)}."
                )
            targets[f"{match['tensor']}[{','.join(map(str, index))}]"] = (tensor, index)
    if len(targets) > MAX_CONTROLS:
        raise ValueError(
            f"explore: that makes {len(targets)} sliders, more than {MAX_CONTROLS} is too many to "
            "use. Choose some with controls=, e.g. controls=['weight_hh_l0'] or "
            "['weight_ih_l0[0,1]', 'bias_hh_l0[0]']."
        )
    return targets


@student_facing
def panel(figure, controls, update):
    """Controls above an off-screen figure that `update` changes whenever one of them moves.

    `figure` is a matplotlib.figure.Figure (pyplot's figures would also show as a cell output);
    `controls` maps names to ipywidgets with a value (sliders, toggle buttons, ...); `update` is
    called as update(**values), one keyword per control, and changes the figure's artists. The
    panel then redraws the figure into an ipywidgets.Image, so the picture lives in the widget
    state, as the explorer's does. Introduced in notebooks/12_gradients_through_time.ipynb.
    """
    return Panel(figure, controls, update)


class Panel(_Picture):
    """A figure drawn off screen, the controls that change it, and the image they update."""

    @student_facing
    def __init__(self, figure, controls, update):
        if not isinstance(figure, Figure):
            raise TypeError(f"panel: figure must be a matplotlib.figure.Figure, not {type(figure).__name__}.")
        if (
            not isinstance(controls, dict)
            or not controls
            or not all(isinstance(c, widgets.ValueWidget) for c in controls.values())
        ):
            raise TypeError("panel: controls must be a dict from names to ipywidgets with a value, e.g. sliders.")
        if not callable(update):
            raise TypeError(f"panel: update must be a function of the controls' values, not {type(update).__name__}.")
        super().__init__(figure)
        self.controls, self._update = dict(controls), update
        self._apply()  # a mistake in update fails here, in the cell that made the panel
        self._follow()
        self.widget = widgets.VBox(
            [widgets.HBox(list(self.controls.values())), self.image, self.description, self.status]
        )

    def __repr__(self):
        return f"Panel({len(self.controls)} controls: {', '.join(self.controls)})"

    @property
    def values(self):
        """The controls' current values, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def _apply(self, name=None, value=None):
        """Let update change the figure from every control's value, then store its PNG."""
        self._update(**self.values)
        self._canvas.draw()
        self._store()
