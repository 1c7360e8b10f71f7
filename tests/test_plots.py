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


# Machado, Oliveira & Fernandes (2009), severity 1: linear-RGB matrices that simulate each dichromacy.
DICHROMACY = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def linear_rgb(colour):
    rgb = np.asarray(matplotlib.colors.to_rgb(colour))
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def contrast_on_white(colour):
    """WCAG 2.1's contrast ratio of a colour against white."""
    return 1.05 / (linear_rgb(colour) @ [0.2126, 0.7152, 0.0722] + 0.05)


def cie_lab(linear):
    """CIE L*a*b* (D65) of a linear-RGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(
        linear, 0, 1
    )
    xyz = xyz / [0.95047, 1.0, 1.08883]
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("colour", [*plots.PALETTE, plots.REFERENCE])
def test_every_line_colour_has_3_to_1_contrast_on_white(colour):
    """WCAG 1.4.11: lines, markers and the zero line stand out from the white background at >= 3:1."""
    assert contrast_on_white(colour) >= 3.0, f"{colour}: {contrast_on_white(colour):.2f}:1"


def test_contrast_helper_fails_the_colours_the_palette_dropped():
    """The check can fail: Okabe-Ito's orange, sky blue and yellow are under 3:1 on white."""
    assert all(contrast_on_white(colour) < 3.0 for colour in ("#E69F00", "#56B4E9", "#F0E442"))


@pytest.mark.parametrize("vision", ["typical", *DICHROMACY])
def test_palette_colours_stay_apart_under_each_colour_vision_deficiency(vision):
    """Every pair of palette colours is >= 15 apart in CIELAB (ΔE*ab) as seen with each dichromacy."""
    simulate = np.eye(3) if vision == "typical" else np.array(DICHROMACY[vision])
    seen = {colour: cie_lab(simulate @ linear_rgb(colour)) for colour in plots.PALETTE}
    close = [
        (a, b, round(float(np.linalg.norm(seen[a] - seen[b])), 1))
        for k, a in enumerate(plots.PALETTE)
        for b in plots.PALETTE[k + 1 :]
        if np.linalg.norm(seen[a] - seen[b]) < 15
    ]
    assert not close, f"hard to tell apart under {vision}: {close}"


def test_simulation_confuses_what_protanopes_confuse():
    """The simulation is real: matplotlib's default orange and green, apart for typical vision, merge under protanopia."""
    orange, green = "#ff7f0e", "#2ca02c"
    typical = np.linalg.norm(cie_lab(linear_rgb(orange)) - cie_lab(linear_rgb(green)))
    protan = np.array(DICHROMACY["protanopia"])
    merged = np.linalg.norm(cie_lab(protan @ linear_rgb(orange)) - cie_lab(protan @ linear_rgb(green)))
    assert typical > 40 and merged < 15


def test_hidden_states_tells_units_apart_by_line_style_and_marker_too():
    """A second cue: no two of 8 units share both line style and marker (or colour and line style)."""
    lines = plots.hidden_states(axes()[0][0], torch.zeros(6, 8))
    cues = [(line.get_linestyle(), line.get_marker()) for line in lines]
    assert len(set(cues)) == 8
    assert len({(line.get_color(), line.get_linestyle()) for line in lines}) == 8


def test_draw_unrolled_marks_a_highlight_by_its_edge_as_well_as_its_colour():
    """Highlighted boxes have a thick black edge; the others a thin grey one."""
    drawn = plots.draw_unrolled(axes()[0][0], 1, False, 3, highlight=("output", 0))
    widths = {key: patch.get_linewidth() for key, patch in drawn["cells"].items()}
    assert widths[0, 0, 0] > 2 and widths[0, 0, 1] <= 1


def test_over_text_letters_reach_4_5_to_1_on_every_cell():
    """Black or white letters, whichever contrasts more: >= 4.5:1 on every colour of the scale."""
    ax = axes()[0][0]
    values = np.linspace(-1, 1, 41)
    drawn = plots.over_text(ax, "x" * 41, values)
    for text, patch in zip(drawn, ax.patches, strict=True):
        cell, letter = linear_rgb(patch.get_facecolor()[:3]), linear_rgb(text.get_color())
        luminances = sorted(v @ [0.2126, 0.7152, 0.0722] for v in (cell, letter))
        assert (luminances[1] + 0.05) / (luminances[0] + 0.05) >= 4.5
