"""helpers.plots: functions that draw on given Axes and return what they drew."""

import re

import matplotlib
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure
from torch import nn

from helpers import plots, trace


def axes(rows=1, cols=1):
    return Figure().subplots(rows, cols, squeeze=False)


def test_hidden_states_draws_one_labelled_line_per_unit():
    """(T, H) states give H lines over t = 1..T, in the palette, with labelled axes."""
    states = torch.tensor([[0.1, -0.2], [0.3, 0.4], [0.5, -0.6]])
    ax = axes()[0][0]
    lines = plots.hidden_states(ax, states)
    assert len(lines) == 2
    assert np.allclose(lines[1].get_xdata(), [1, 2, 3]) and np.allclose(lines[1].get_ydata(), [-0.2, 0.4, -0.6])
    assert [matplotlib.colors.to_hex(line.get_color()) for line in lines] == [p.lower() for p in plots.PALETTE[:2]]
    assert ax.get_xlabel() == "time step t" and ax.get_ylabel() == "$h_t$"
    assert ax.get_ylim() == (-1.05, 1.05)


def test_heatmap_fixes_the_diverging_colour_scale_to_minus_one_one():
    """Time runs along x, units along y; colours span exactly [-1, 1] whatever the data."""
    image = plots.heatmap(axes()[0][0], torch.full((5, 3), 0.2))
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == "RdBu_r"
    assert image.get_array().shape == (3, 5)


def test_directions_titles_each_direction_and_keeps_time_order():
    """Forward and backward get their own Axes; both are plotted against t = 1..T."""
    ax_forward, ax_backward = axes(1, 2)[0]
    forward, backward = plots.directions((ax_forward, ax_backward), torch.zeros(4, 2), torch.ones(4, 2))
    assert ax_forward.get_title() == "forward direction" and "backward" in ax_backward.get_title()
    assert np.allclose(backward[0].get_ydata(), 1.0) and np.allclose(backward[0].get_xdata(), [1, 2, 3, 4])


def test_layer_grid_draws_every_layer_and_direction_with_the_top_layer_on_top():
    """A 2-layer bidirectional trace fills a 2 x 2 grid; row 0 is the top layer."""
    torch.manual_seed(0)
    result = trace(nn.RNN(2, 3, num_layers=2, bidirectional=True), torch.randn(5, 1, 2))
    grid = axes(2, 2)
    lines = plots.layer_grid(grid, result)
    assert set(lines) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert grid[0][1].get_title() == "layer 1, backward"
    assert np.allclose(lines[1, 1][2].get_ydata(), result.stack("h", 1, 1)[:, 0, 2].detach().numpy())


def test_a_batch_of_states_must_be_narrowed_to_one_sequence_first():
    """(T, B, H) with B > 1 is refused with the fix; a batch of one is accepted."""
    with pytest.raises(ValueError, match=r"pick one sequence first, e.g. states\[:, 0\]"):
        plots.time_by_unit(torch.zeros(4, 2, 3))
    assert plots.time_by_unit(torch.zeros(4, 1, 3)).shape == (4, 3)


def test_draw_unrolled_has_a_box_per_cell_and_input_and_every_readout_label():
    """2 layers x 2 directions x 3 steps: 12 cells, 3 inputs, output[0..2] and h_n[0..3]."""
    drawn = plots.draw_unrolled(axes()[0][0], num_layers=2, bidirectional=True, seq_len=3)
    assert set(drawn["cells"]) == {(layer, d, t) for layer in range(2) for d in range(2) for t in range(3)}
    assert set(drawn["inputs"]) == {0, 1, 2}
    assert {f"output[{t}]" for t in range(3)} | {f"h_n[{k}]" for k in range(4)} == set(drawn["labels"])


def test_draw_unrolled_places_the_backward_final_state_at_the_first_step():
    """h_n[1] (layer 0, backward) is labelled beside t = 0; h_n[0] (forward) beside t = T-1."""
    drawn = plots.draw_unrolled(axes()[0][0], num_layers=1, bidirectional=True, seq_len=5)
    backward_x, forward_x = drawn["labels"]["h_n[1]"].get_position()[0], drawn["labels"]["h_n[0]"].get_position()[0]
    first_cell = drawn["cells"][0, 1, 0].get_x()
    last_cell = drawn["cells"][0, 0, 4].get_x()
    assert backward_x < first_cell and forward_x > last_cell


@pytest.mark.parametrize(
    "num_layers, bidirectional, highlight, inputs_seen, cells",
    [
        # The backward half of the last output has read only the last input.
        (1, True, ("cell", 0, 1, 4), {4}, {(0, 1, 4)}),
        # The forward final state has read every input.
        (1, True, ("h_n", 0), {0, 1, 2, 3, 4}, {(0, 0, t) for t in range(5)}),
        # The backward final state (h_n[1]) sits at t = 0 and has read every input.
        (1, True, ("h_n", 1), {0, 1, 2, 3, 4}, {(0, 1, t) for t in range(5)}),
        # A one-way layer's output at t has read inputs 0..t only.
        (2, False, ("output", 2), {0, 1, 2}, {(layer, 0, t) for layer in range(2) for t in range(3)}),
    ],
)
def test_draw_unrolled_highlights_exactly_what_a_result_depends_on(
    num_layers, bidirectional, highlight, inputs_seen, cells
):
    """The highlighted cells and inputs are the result's dependencies, no more, no fewer."""
    drawn = plots.draw_unrolled(axes()[0][0], num_layers, bidirectional, seq_len=5, highlight=highlight)
    assert drawn["depends_on"] == (cells, inputs_seen)
    lit = {key for key, patch in drawn["cells"].items() if matplotlib.colors.to_hex(patch.get_facecolor()) == "#e69f00"}
    assert lit == cells


def test_draw_unrolled_explains_a_highlight_that_does_not_exist():
    """h_n[4] of a 2-row h_n, or an unknown kind, is refused with what exists."""
    with pytest.raises(ValueError, match=r"h_n\[4\] does not exist: h_n has 2 rows"):
        plots.draw_unrolled(axes()[0][0], 1, True, 3, highlight=("h_n", 4))
    with pytest.raises(ValueError, match=r"use \('output', t\)"):
        plots.draw_unrolled(axes()[0][0], 1, False, 3, highlight=("input", 0))


def test_gate_heatmaps_draw_each_lstm_gate_on_its_scale_and_fade_the_others():
    """i, f, o on [0, 1]; g on [-1, 1]; highlight='f' leaves f opaque and fades the rest."""
    torch.manual_seed(0)
    result = trace(nn.LSTM(2, 3), torch.randn(6, 1, 2))
    images = plots.gate_heatmaps(axes(1, 4)[0], result, highlight="f")
    assert list(images) == ["i", "f", "g", "o"]
    assert images["f"].get_clim() == (0.0, 1.0) and images["g"].get_clim() == (-1.0, 1.0)
    assert images["f"].get_alpha() == 1.0 and images["i"].get_alpha() == 0.25
    assert np.allclose(images["o"].get_array(), result.stack("o")[:, 0].detach().numpy().T)


def test_gate_heatmaps_and_cell_plot_refuse_traces_without_gates_or_cells():
    """An RNN has no gates; a GRU has gates but no cell state; a GRU has three gates, not four."""
    torch.manual_seed(0)
    rnn_trace = trace(nn.RNN(1, 2), torch.randn(3, 1, 1))
    gru_trace = trace(nn.GRU(1, 2), torch.randn(3, 1, 1))
    with pytest.raises(ValueError, match="has no gates"):
        plots.gate_heatmaps(axes(1, 4)[0], rnn_trace)
    with pytest.raises(ValueError, match=r"3 gates \(r, z, n\): pass that many Axes, got 4"):
        plots.gate_heatmaps(axes(1, 4)[0], gru_trace)
    with pytest.raises(ValueError, match="GRU has no cell state"):
        plots.cell_and_hidden(axes()[0][0], gru_trace)


def test_cell_and_hidden_plots_c_and_h_of_one_unit():
    """Two lines over t = 1..T: the unit's c_t and h_t = o_t * tanh(c_t)."""
    torch.manual_seed(0)
    result = trace(nn.LSTM(1, 2), torch.randn(5, 1))  # unbatched
    c_line, h_line = plots.cell_and_hidden(axes()[0][0], result, unit=1)
    assert np.allclose(c_line.get_ydata(), result.stack("c")[:, 1].detach().numpy())
    assert np.allclose(h_line.get_ydata(), result.output[:, 1].detach().numpy())


def test_over_text_colours_each_character_by_its_value_on_a_fixed_diverging_scale():
    """One cell per character, coloured like heatmap (RdBu_r on [-limit, limit]); values beyond are clipped."""
    ax = axes()[0][0]
    drawn = plots.over_text(ax, 'a "b"', torch.tensor([-1.0, 0.0, 1.0, 3.0, 0.5]), label="h[4]")
    assert [text.get_text() for text in drawn] == ["a", " ", '"', "b", '"']
    colours = [patch.get_facecolor() for patch in ax.patches]
    cmap = matplotlib.colormaps["RdBu_r"]
    assert np.allclose(colours[0], cmap(0.0)) and np.allclose(colours[1], cmap(0.5))
    assert np.allclose(colours[2], cmap(1.0)) and np.allclose(colours[3], cmap(1.0))  # 3.0 is clipped to 1
    assert drawn[0].get_color() == "white" and drawn[1].get_color() == "black"  # dark cells get white letters
    assert ax.get_xlim() == (0, 5) and ax.get_ylabel() == "h[4]"


def test_over_text_lines_up_texts_of_different_lengths_with_one_width():
    """width sets the number of cells across, so a short text's cells are as wide as a long one's."""
    ax = axes()[0][0]
    plots.over_text(ax, "ab", [0, 1], width=10)
    assert ax.get_xlim() == (0, 10)


@pytest.mark.parametrize(
    "text, values, width, message",
    [
        ("abc", [0.0, 1.0], None, "values needs one number per character of text: shape (3,); got shape (2,)"),
        ("abc", torch.zeros(3, 2), None, "got shape (3, 2)"),
        (["a", "b"], [0, 1], None, "text must be a str"),
        ("abc", [0, 0, 0], 2, "at least len(text) = 3; got 2"),
    ],
)
def test_over_text_explains_a_mismatch(text, values, width, message):
    """Values of the wrong length, a text that is not a str, or too small a width: an error that says so."""
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        plots.over_text(axes()[0][0], text, values, width=width)
