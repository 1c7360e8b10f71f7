"""helpers.plots: functions that draw on given Axes and return what they drew."""

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
