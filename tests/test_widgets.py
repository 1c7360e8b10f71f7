"""helpers.widgets: the explorer's sliders that set weights and redraw hidden states in place; panels."""

import html
import io
import re
import tracemalloc

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image
from torch import nn

import helpers
from helpers.widgets import _png, explore

PULSE = torch.tensor([1.0, 0, 0, 0, 0, 0]).reshape(6, 1, 1)


def test_every_weight_of_a_small_module_gets_a_named_slider(scalar_rnn):
    """A 1 -> 1 RNN without bias has two scalar weights, so two sliders at their values."""
    explorer = explore(scalar_rnn, PULSE)
    assert list(explorer.controls) == ["weight_ih_l0[0,0]", "weight_hh_l0[0,0]"]
    assert explorer.controls["weight_hh_l0[0,0]"].value == -1.0


def test_moving_a_slider_recomputes_the_copy_and_redraws_the_same_figure(scalar_rnn):
    """The copy's weight changes, the trace equals unroll of the copy, the image is new."""
    original = scalar_rnn
    explorer = explore(original, PULSE)
    figure, lines, before = explorer.figure, explorer._lines[0, 0], explorer.image.value
    explorer.controls["weight_hh_l0[0,0]"].value = 0.5
    assert explorer.module.weight_hh_l0.item() == 0.5 and original.weight_hh_l0.item() == -1.0
    assert torch.equal(explorer.trace.output, helpers.unroll(explorer.module, PULSE)[0])
    assert explorer.figure is figure and explorer._lines[0, 0] is lines
    assert list(lines[0].get_ydata()) == pytest.approx(explorer.trace.output.flatten().tolist())
    assert explorer.image.value != before and bytes(explorer.image.value).startswith(b"\x89PNG")


def test_the_plot_in_words_follows_every_slider_move(scalar_rnn):
    """The image's tooltip and the live region below the plot hold the states now drawn."""
    explorer = explore(scalar_rnn, PULSE)
    first = explorer.description.value
    assert html.escape(helpers.describe(explorer.figure)) in first and 'aria-live="polite"' in first
    states = ", ".join(f"{v:.2f}" for v in explorer.trace.output.flatten().tolist())
    assert f"(time step t = 1 to 6): {states}." in first
    explorer.controls["weight_hh_l0[0,0]"].value = 0.5
    states = ", ".join(f"{v:.2f}".replace("-0.00", "0.00") for v in explorer.trace.output.flatten().tolist())
    assert explorer.description.value != first and f"(time step t = 1 to 6): {states}." in explorer.description.value
    assert "rnns-figure-description" in explorer.description._dom_classes
    assert explorer.image.tooltip == helpers.describe(explorer.figure)  # the image's name (title)
    assert explorer.image.get_state()["description"] == ""  # without it, the browser's view fails


def test_input_values_can_have_sliders_too(scalar_rnn):
    """'input[1,0,0]' sets the second input value; the original input is untouched."""
    pulse = PULSE.clone()
    explorer = explore(scalar_rnn, pulse, controls=["input[1,0,0]", "weight_hh_l0"])
    assert list(explorer.controls) == ["input[1,0,0]", "weight_hh_l0[0,0]"]
    explorer.controls["input[1,0,0]"].value = 1.0
    assert explorer.input[1, 0, 0] == 1.0 and pulse[1, 0, 0] == 0.0
    assert explorer.trace.steps[1].x.item() == 1.0


@pytest.mark.parametrize(
    "controls, message",
    [
        (None, "that makes 36 sliders, more than 24"),
        (["weight_xx_l0"], "no control named 'weight_xx_l0'. Choose from weight_ih_l0, weight_hh_l0, bias_ih_l0"),
        (["weight_hh_l0[4,0]"], "'weight_hh_l0[4,0]' is outside weight_hh_l0, which has shape (4, 4)"),
        (["bias_ih_l0[0,0]"], "outside bias_ih_l0, which has shape (4,)"),
    ],
)
def test_too_many_or_unknown_controls_are_explained(controls, message):
    """A 3 -> 4 RNN has 36 numbers: the error says how to choose; bad names say what exists."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        explore(nn.RNN(3, 4), torch.zeros(5, 1, 3), controls=controls)


def test_bad_module_or_input_fails_at_once_with_unroll_s_message(scalar_rnn):
    """explore validates through helpers.trace, so students get the same clear errors."""
    with pytest.raises(ValueError, match="input_size=1"):
        explore(scalar_rnn, torch.zeros(6, 1, 2))


def test_an_error_inside_a_slider_callback_is_shown_not_swallowed(scalar_rnn, monkeypatch):
    """If re-computing fails, the widget's status line names the error and the explorer keeps it."""
    explorer = explore(scalar_rnn, PULSE)

    def broken(*args, **kwargs):
        raise RuntimeError("something went wrong")

    monkeypatch.setattr("helpers.widgets.trace", broken)
    explorer.controls["weight_hh_l0[0,0]"].value = 0.3
    assert "RuntimeError: something went wrong" in explorer.status.value
    assert isinstance(explorer.last_error, RuntimeError)
    monkeypatch.undo()
    explorer.controls["weight_hh_l0[0,0]"].value = 0.4
    assert explorer.status.value == "" and explorer.last_error is None


def test_500_changes_leak_neither_figures_nor_memory():
    """No pyplot figure is opened and traced memory grows by under 2 MB over 500 changes."""
    torch.manual_seed(0)
    explorer = explore(nn.RNN(3, 4), torch.randn(50, 1, 3), controls=["weight_hh_l0"])
    slider = explorer.controls["weight_hh_l0[0,0]"]
    figures = plt.get_fignums()
    slider.value = 0.0  # warm up caches before measuring
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for step in range(500):
        slider.value = (step % 100 - 50) / 50
    grown = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert plt.get_fignums() == figures
    assert grown < 2_000_000, f"memory grew by {grown} bytes"
    assert explorer.last_error is None


def test_relu_states_above_the_axes_trigger_a_full_redraw_with_new_limits():
    """relu is unbounded: when a state leaves the plot, the y-limits grow to show it."""
    module = nn.RNN(1, 1, bias=False, nonlinearity="relu")
    with torch.no_grad():
        module.weight_ih_l0.fill_(0.5)
        module.weight_hh_l0.fill_(-1.0)
    explorer = explore(module, PULSE)
    explorer.controls["weight_ih_l0[0,0]"].value = 1.0
    top = explorer.figure.axes[0].get_ylim()[1]
    explorer.controls["weight_ih_l0[0,0]"].value = 2.0  # h_1 = 2 is above the old top
    assert explorer.figure.axes[0].get_ylim()[1] > 2.0 > top


def test_stacked_bidirectional_modules_get_one_axes_per_layer_and_direction():
    """Two layers, two directions: four Axes, each redrawn on a change."""
    torch.manual_seed(0)
    explorer = explore(nn.RNN(1, 2, num_layers=2, bidirectional=True), PULSE, controls=["weight_hh_l1_reverse"])
    assert len(explorer.figure.axes) == 4
    explorer.controls["weight_hh_l1_reverse[0,0]"].value = 1.5
    ydata = explorer._lines[1, 1][0].get_ydata()
    assert list(ydata) == pytest.approx(explorer.trace.stack("h", 1, 1)[:, 0, 0].tolist())


def test_it_displays_as_the_widget_with_a_short_stable_text_form(scalar_rnn):
    """The notebook gets the widget view; the text/plain that nbval compares is the short repr."""
    explorer = explore(scalar_rnn, PULSE)
    bundle = explorer._repr_mimebundle_()
    # What ipywidgets itself gives for the widget (built by hand: ipywidgets 7 has no _repr_mimebundle_).
    view = "application/vnd.jupyter.widget-view+json"
    assert bundle[view] == explorer.widget._repr_mimebundle_()[view]
    assert bundle["text/plain"] == "Explorer(RNN(1, 1, bias=False), 2 controls: weight_ih_l0[0,0], weight_hh_l0[0,0])"


def test_late_browser_echoes_of_older_values_do_not_undo_the_newest_value(scalar_rnn):
    """Code sets -0.9, 0.9, 1.5; the browser's snapped echoes of the first two arrive later."""
    explorer = explore(scalar_rnn, PULSE)
    slider = explorer.controls["weight_hh_l0[0,0]"]
    for value in (-0.9, 0.9, 1.5):
        slider.value = value
    slider.set_state({"value": -0.9000000000000001})  # how the comm applies a browser update
    slider.set_state({"value": 0.9000000000000001})
    assert slider.value == 1.5 and explorer.module.weight_hh_l0.item() == 1.5
    assert torch.equal(explorer.trace.output, helpers.unroll(explorer.module, PULSE)[0])
    slider.set_state({"value": 0.3})  # a real move in the browser is taken as it is
    assert slider.value == 0.3 and explorer.module.weight_hh_l0.item() == pytest.approx(0.3)


def test_lstm_and_gru_sliders_name_the_gate_and_unit_of_their_row():
    """Row 2 of an LSTM with hidden_size 2 is the forget gate's unit 0; GRU rows are r, z, n."""
    torch.manual_seed(0)
    lstm = explore(nn.LSTM(1, 2), PULSE, controls=["bias_hh_l0[2]", "weight_hh_l0[7,1]"])
    assert [s.description for s in lstm.controls.values()] == ["bias_hh_l0[2] f[0]", "weight_hh_l0[7,1] o[1]"]
    gru = explore(nn.GRU(1, 1), PULSE, controls=["weight_ih_l0"])
    assert [s.description for s in gru.controls.values()] == [
        "weight_ih_l0[0,0] r[0]",
        "weight_ih_l0[1,0] z[0]",
        "weight_ih_l0[2,0] n[0]",
    ]
    lstm.controls["bias_hh_l0[2]"].value = 1.0
    assert lstm.last_error is None
    assert torch.equal(lstm.trace.output, helpers.unroll(lstm.module, PULSE)[0])


def test_projected_lstm_states_can_be_negative_and_stay_on_the_plot():
    """With proj_size, h is not bounded by tanh: the y-limits follow the states both ways."""
    torch.manual_seed(0)
    explorer = explore(nn.LSTM(1, 3, proj_size=1), PULSE, controls=["weight_hr_l0"])
    explorer.controls["weight_hr_l0[0,0]"].value = -2.0
    low, high = explorer.figure.axes[0].get_ylim()
    states = explorer.trace.output
    assert low <= float(states.min()) and float(states.max()) <= high


def test_an_lstm_state_pair_is_copied_and_used():
    """hx=(h_0, c_0) works for an LSTM explorer and matches unroll with the same pair."""
    torch.manual_seed(0)
    lstm = nn.LSTM(1, 2)
    state = (torch.full((1, 1, 2), 0.5), torch.full((1, 1, 2), -1.0))
    explorer = explore(lstm, PULSE, state, controls=["bias_hh_l0[2]"])
    explorer.controls["bias_hh_l0[2]"].value = 1.0
    assert explorer.last_error is None
    assert torch.equal(explorer.trace.output, helpers.unroll(explorer.module, PULSE, state)[0])


def line_panel():
    """A panel whose slider sets the slope of one line, and the figure, line and slider it uses."""
    figure = Figure(figsize=(3, 2))
    ax = figure.subplots()
    (line,) = ax.plot([0, 1, 2], [0, 0, 0])
    slope = ipywidgets.FloatSlider(value=0.0, min=-1.0, max=1.0)

    def update(slope):
        line.set_ydata([0, slope, 2 * slope])

    return helpers.widgets.panel(figure, {"slope": slope}, update), line, slope


def test_a_panel_calls_update_with_every_value_and_stores_a_new_png():
    """Moving a control calls update(slope=...) and replaces the image; nothing goes through pyplot."""
    figures = plt.get_fignums()
    panel, line, slope = line_panel()
    before = bytes(panel.image.value)
    assert before.startswith(b"\x89PNG") and list(line.get_ydata()) == [0, 0, 0]
    slope.value = 0.5
    assert list(line.get_ydata()) == [0, 0.5, 1.0] and panel.values == {"slope": 0.5}
    assert bytes(panel.image.value) != before and panel.last_error is None
    assert plt.get_fignums() == figures
    assert repr(panel) == "Panel(1 controls: slope)"
    assert panel._repr_mimebundle_()["text/plain"] == repr(panel)


def test_a_panel_shows_an_error_in_update_and_recovers():
    """An exception in update lands in the status line and last_error; the next good value clears it."""
    figure = Figure()
    ax = figure.subplots()
    (line,) = ax.plot([0, 1], [0, 0])
    radius = ipywidgets.FloatSlider(value=0.5, min=0.0, max=2.0)

    def update(radius):
        if radius > 1:
            raise ValueError("radius above 1")
        line.set_ydata([0, radius])

    panel = helpers.widgets.panel(figure, {"radius": radius}, update)
    radius.value = 1.5
    assert "ValueError: radius above 1" in panel.status.value and isinstance(panel.last_error, ValueError)
    radius.value = 0.7
    assert panel.status.value == "" and panel.last_error is None


@pytest.mark.parametrize(
    "args, message",
    [
        ((None, {}, print), "figure must be a matplotlib.figure.Figure, not NoneType"),
        ((Figure(), [ipywidgets.FloatSlider()], print), "controls must be a dict from names to ipywidgets"),
        ((Figure(), {"a": 1.0}, print), "controls must be a dict from names to ipywidgets"),
        ((Figure(), {}, print), "controls must be a dict from names to ipywidgets"),
        (
            (Figure(), {"a": ipywidgets.FloatSlider()}, "redraw"),
            "update must be a function of the controls' values, not str",
        ),
    ],
)
def test_a_panel_explains_wrong_arguments(args, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        helpers.widgets.panel(*args)


def test_a_mistake_in_update_fails_where_the_panel_is_made():
    """The first draw runs update in the creating cell, so a typo there raises at once."""

    def update(slope):
        raise NameError("name 'lin' is not defined")

    with pytest.raises(NameError, match="lin"):
        helpers.widgets.panel(Figure(), {"slope": ipywidgets.FloatSlider()}, update)


def test_a_panel_undoes_late_browser_echoes_of_older_values_too():
    """As with the explorer: code sets 0.1, 0.2, 0.3; late echoes of the first two do not win."""
    panel, line, slope = line_panel()
    for value in (0.1, 0.2, 0.3):
        slope.value = value
    slope.set_state({"value": 0.10000000000000002})  # how the comm applies a browser update
    slope.set_state({"value": 0.20000000000000004})
    assert slope.value == 0.3 and list(line.get_ydata()) == [0, 0.3, 0.6]
    slope.set_state({"value": -0.5})  # a real move in the browser is taken as it is
    assert list(line.get_ydata()) == [0, -0.5, -1.0]


@pytest.mark.parametrize("facecolor, mode", [("white", "RGB"), ((1, 1, 1, 0), "RGBA")])
def test_the_png_holds_exactly_the_canvas_pixels(facecolor, mode):
    """Decoded by Pillow, the explorer's fast PNG is the canvas pixel for pixel; a see-through figure keeps its alpha."""
    figure = Figure(figsize=(3, 2), dpi=100, facecolor=facecolor)
    figure.add_subplot().plot([0, 1, 0.5], color="#0072B2")
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    decoded = Image.open(io.BytesIO(_png(canvas)))
    assert decoded.mode == mode and decoded.size == (300, 200)
    expected = np.asarray(canvas.buffer_rgba())[:, :, : len(mode)]
    assert np.array_equal(np.asarray(decoded), expected)


def test_on_colab_the_custom_widget_manager_is_turned_on_and_elsewhere_nothing_is(monkeypatch):
    """_use_colab_widget_manager calls google.colab.output.enable_custom_widget_manager only when Colab is loaded."""
    import sys
    import types

    from helpers.widgets import _use_colab_widget_manager

    calls = []
    output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("enabled"))
    colab = types.ModuleType("google.colab")
    colab.output = output
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    _use_colab_widget_manager()
    assert calls == []
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    _use_colab_widget_manager()
    assert calls == ["enabled"]
