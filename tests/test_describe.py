"""helpers.describe: a figure's text alternative, read from what was drawn."""

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from helpers import describe, plots
from helpers.describe import number, plain


def figure(rows=1, cols=1):
    fig = Figure()
    return fig, fig.subplots(rows, cols, squeeze=False)


def test_a_short_series_is_read_out_value_by_value():
    """Up to 12 points: the title, the axes and every value, as the plot shows them (two decimals)."""
    fig, ax = figure()
    ax[0][0].plot([1, 2, 3], [0.5, -0.25, 0.125], label="$h_{t}[0]$")
    ax[0][0].set(title="Response", xlabel="time step t", ylabel="$h_t$")
    assert describe(fig) == (
        "Response: one line of h_t against time step t; h_t[0] (time step t = 1 to 3): 0.50, -0.25, 0.12."
    )


def test_a_long_series_is_summarised_where_it_starts_ends_peaks_and_dips():
    """More than 12 points: start, end, highest and lowest, with where they are; a log axis is named."""
    fig, ax = figure()
    values = np.array([3.0, 1.0, 0.5, 4.0] + [2.0] * 20)
    ax[0][0].semilogy(np.arange(1, 25), values)
    text = describe(fig)
    assert "(log scale)" in text
    assert (
        "line 1: 24 points, x from 1 to 24; starts at 3.00, ends at 2.00; highest 4.00 at x = 4, lowest 0.50 at x = 3"
        in text
    )


def test_tiny_and_huge_numbers_keep_three_digits():
    assert [number(v) for v in (0.0, -0.0001, 1.5e-7, 0.256, 123456.0)] == [
        "0.00",
        "-1.00e-4",
        "1.50e-7",
        "0.26",
        "1.23e5",
    ]


def test_tex_in_labels_is_read_as_words():
    assert plain(r"$\overrightarrow{h}^{(0)}_{1}$") == "forward h^(0)_1"
    assert plain(r"$\|\partial h_{40} / \partial x_t\|$") == "‖∂h_40 / ∂x_t‖"


def test_a_labelled_reference_line_is_named_and_unlabelled_guides_are_not():
    """axhline(0) is a guide; a labelled axhline (ln 2) is information."""
    fig, ax = figure()
    ax[0][0].plot([1, 2], [1.0, 0.5])
    ax[0][0].axhline(0)
    ax[0][0].axhline(0.69, label="ln 2: a coin toss")
    text = describe(fig)
    assert "a reference line at 0.69 (ln 2: a coin toss)" in text and text.count("reference line") == 1


def test_a_small_heatmap_is_read_cell_by_cell_and_a_large_one_row_by_row():
    """plots.heatmap's rows are units; small: every value; large: each row's range."""
    fig, ax = figure(1, 2)
    plots.heatmap(ax[0][0], torch.tensor([[0.1, -0.2], [0.3, 0.4]]))  # (T=2, H=2)
    big = torch.linspace(-1, 1, 60).reshape(20, 3)  # (T=20, H=3)
    plots.heatmap(ax[0][1], big)
    text = describe(fig)
    assert (
        "Panel 1 of 2: A heatmap of 2 rows (unit of h) by 2 columns (time step t), colour scale from -1.00 to 1.00"
        in text
    )
    assert "row 0: 0.10, 0.30; row 1: -0.20, 0.40" in text
    assert "row 2: from -0.93 to 1.00, highest in column 20" in text


def test_bars_and_colour_bars_are_read_out():
    fig, ax = figure()
    image = ax[0][0].imshow(np.zeros((2, 2)), vmin=0, vmax=1)
    fig.colorbar(image, ax=ax[0][0], label="gate: 0 closed, 1 open")
    fig2, ax2 = figure()
    ax2[0][0].bar(["RNN", "GRU"], [0.5, 2.0])
    assert describe(fig).endswith("Colour scale (gate: 0 closed, 1 open): 0.00 to 1.00.")
    assert "2 bars of y by x: RNN: 0.50, GRU: 2.00" in describe(fig2)


@pytest.mark.parametrize(
    ("highlight", "expected"),
    [
        (("h_n", 1), "what h_n[1] depends on: cells of layer 0 backward at steps 1 to 4; inputs x at steps 1 to 4."),
        (
            ("output", 0),
            "what output[0] depends on: cells of layer 0 forward at step 1; layer 0 backward at steps 1 to 4;",
        ),
        (
            ("cell", 0, 1, 3),
            "what the backward cell of layer 0 at step 4 depends on: cells of layer 0 backward at step 4; inputs x at step 4.",
        ),
    ],
)
def test_the_unrolled_graph_says_what_the_highlighted_result_depends_on(highlight, expected):
    """draw_unrolled's description is its layout and its highlight, from helpers.graph.depends_on."""
    fig, ax = figure()
    plots.draw_unrolled(ax[0][0], 1, True, 4, highlight=highlight)
    text = describe(fig)
    assert text.startswith("The unrolled graph of a 1-layer bidirectional nn.RNN over 4 time steps.")
    assert "h_n[1] comes from the backward cell of layer 0 at step 1" in text
    assert expected in text


def test_coloured_text_reads_each_character_and_its_value():
    fig, ax = figure()
    plots.over_text(ax[0][0], "ab", [0.5, -1.0], label="h[3]")
    assert describe(fig) == (
        "h[3]: the text 'ab', each character coloured by its value (blue -1.00, white 0, red 1.00): 'a' 0.50, 'b' -1.00."
    )


def test_describe_explains_what_it_needs():
    with pytest.raises(
        TypeError, match="describe needs a matplotlib Figure, e.g. fig from plt.subplots\\(\\); got Axes"
    ):
        describe(figure()[1][0][0])
    assert describe(Figure()) == "An empty figure."
