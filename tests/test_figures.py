"""helpers.figures in a real kernel: every figure shown carries its description, in the house style."""

import re

import nbclient
import nbformat
import pytest

from helpers import plots


@pytest.fixture(scope="module")
def outputs():
    """Run a small notebook in a fresh python3 kernel; return each cell's outputs."""
    cells = [
        "import helpers\nimport matplotlib.pyplot as plt",
        # A plain ax.plot, shown with plt.show(): the house style and the description apply to it too.
        "fig, ax = plt.subplots(figsize=(3, 2))\nax.plot([1, 2, 3], [0.5, -0.25, 0.0], label='a [b]_c')\n"
        "print(ax.get_lines()[0].get_color(), ax.get_lines()[0].get_linestyle())\nplt.show()",
        # %matplotlib inline resets the figure formatters; the next cell's figures still get alt text.
        "%matplotlib inline",
        "fig, ax = plt.subplots(figsize=(3, 2))\nhelpers.plots.hidden_states(ax, [[0.1], [0.2]])\nplt.show()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120).execute()
    return [cell.outputs for cell in notebook.cells]


def figure_output(cell_outputs):
    (shown,) = [output for output in cell_outputs if "image/png" in output.get("data", {})]
    return shown


@pytest.mark.parametrize("cell", [1, 3])
def test_each_figure_carries_its_description_as_alt_text_plain_text_and_markdown(outputs, cell):
    """image/png's metadata alt, text/plain, and a markdown image with that alt (JupyterLab shows it)."""
    shown = figure_output(outputs[cell])
    alt = shown["metadata"]["image/png"]["alt"]
    assert alt == shown["data"]["text/plain"]
    assert alt.startswith("One line of ")
    markdown = shown["data"]["text/markdown"]
    match = re.fullmatch(r"!\[(.*)\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)", markdown, re.S)
    assert match and match[2] == shown["data"]["image/png"].strip()
    assert re.sub(r"\\(.)", r"\1", match[1]) == alt  # the same words, markdown's characters escaped


def test_the_description_reads_the_numbers_drawn(outputs):
    assert (
        figure_output(outputs[1])["data"]["text/plain"]
        == "One line of y against x; a [b]_c (x = 1 to 3): 0.50, -0.25, 0.00."
    )
    assert r"a \[b\]\_c" in figure_output(outputs[1])["data"]["text/markdown"]


def test_a_students_own_lines_get_the_palette_and_its_line_styles(outputs):
    """The first line of a plain ax.plot is the palette's first colour, solid (the second is dashed)."""
    printed = "".join(output.get("text", "") for output in outputs[1])
    assert printed.split() == [plots.PALETTE[0], "-"]


def test_covered_by_legend_counts_the_points_a_legend_draws_over_and_none_beside_the_plot(capsys):
    """A legend inside a grid of points covers some; moved beside the axes it covers none; the note names the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from helpers import figures

    figure, ax = plt.subplots(figsize=(6, 3))
    grid_x, grid_y = np.meshgrid(np.linspace(0, 1, 20), np.linspace(0, 1, 20))
    ax.plot(grid_x.ravel(), grid_y.ravel(), "o", label="grid")
    ax.set_title("a full grid")
    ax.legend(loc="upper right")
    covered = figures.covered_by_legend(figure)
    assert [title for title, _ in covered] == ["a full grid"] and covered[0][1] > 0
    figures._warn_if_covered(figure)
    note = capsys.readouterr().err
    assert "the legend of 'a full grid' covers" in note and "bbox_to_anchor=(1, 1)" in note
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1))
    assert figures.covered_by_legend(figure) == []
    scatter_figure, scatter_ax = plt.subplots()
    scatter_ax.scatter(grid_x.ravel(), grid_y.ravel(), label="points")
    scatter_ax.legend(loc="center")
    assert figures.covered_by_legend(scatter_figure)[0][0] == "axes 1"
    plt.close("all")


def test_smallest_text_px_is_the_smallest_font_in_the_pngs_pixels():
    import matplotlib.pyplot as plt

    from helpers.figures import smallest_text_px

    figure, ax = plt.subplots(figsize=(4, 3), dpi=100)
    try:
        ax.plot([0, 1], label="a line")
        ax.set_title("title", fontsize=20)
        ax.tick_params(labelsize=14)
        assert smallest_text_px(figure) == round(14 * 100 / 72, 1)
        ax.legend(fontsize=8)
        assert smallest_text_px(figure) == round(8 * 100 / 72, 1)  # the legend is text too
        ax.text(0, 0, " ", fontsize=2)  # blank text draws nothing
        assert smallest_text_px(figure) == round(8 * 100 / 72, 1)
    finally:
        plt.close(figure)


def test_every_stored_figure_says_its_smallest_text_which_is_16px_or_more():
    """The decks' fit check scales text_px by the size a figure is shown at; at its own size it is readable."""
    import json
    from pathlib import Path

    sizes = []
    for notebook in sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            for output in cell.get("outputs", []):
                if "image/png" in output.get("data", {}):
                    sizes.append((notebook.name, output["metadata"]["image/png"].get("text_px")))
    assert len(sizes) >= 21
    assert all(size is not None and size >= 16 for _, size in sizes), sizes
