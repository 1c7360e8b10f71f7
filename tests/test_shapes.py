"""helpers/solutions/shapes.py: torch's shapes for each result, and each misreading turned into its wrong shape."""

import pytest
from torch import nn

from helpers.solutions import BY_KEY, shapes


def test_run_reads_every_result_shape_from_torch():
    """An LSTM with proj_size: output and h_n hold proj_size values, c_n hidden_size; h_0 is shaped like h_n."""
    lstm = nn.LSTM(8, 6, proj_size=3, num_layers=2, bidirectional=True, batch_first=True)
    run = shapes.run(lstm, (5, 7, 8))
    assert run.shapes == {"input": (5, 7, 8), "output": (5, 7, 6), "h_n": (4, 5, 3), "h_0": (4, 5, 3), "c_n": (4, 5, 6)}
    assert (run.num_layers, run.num_directions, run.hidden_size, run.proj_size) == (2, 2, 6, 3)


@pytest.mark.parametrize(
    "misreading, name, wrong",
    [
        (shapes.LAYOUT, "output", (7, 5, 16)),
        (shapes.ONE_DIRECTION, "output", (5, 7, 8)),
        (shapes.EVERY_LAYER, "output", (5, 7, 32)),
        (shapes.OUTPUT_IS_H_N, "output", (4, 5, 8)),
        (shapes.STATE_IS_OUTPUT, "h_n", (5, 7, 16)),
        (shapes.STATE_BATCH_FIRST, "h_n", (5, 4, 8)),
        (shapes.ROW_PER_LAYER, "h_n", (2, 5, 8)),
        (shapes.ONE_ROW, "h_n", (1, 5, 8)),
        (shapes.SIDE_BY_SIDE_PER_LAYER, "h_n", (2, 5, 16)),
        (shapes.SIDE_BY_SIDE_IN_EACH_ROW, "h_n", (4, 5, 16)),
    ],
)
def test_each_misreading_gives_its_wrong_shape(misreading, name, wrong):
    """For nn.RNN(6, 8, 2, bidirectional, batch_first) on (5, 7, 6): output (5, 7, 16), h_n (4, 5, 8)."""
    run = shapes.run(nn.RNN(6, 8, num_layers=2, bidirectional=True, batch_first=True), (5, 7, 6))
    assert misreading.wrong(run, name) == wrong


def test_a_several_part_answer_changes_only_the_parts_a_misreading_is_about():
    """07.shapes asks for (input, output, h_n): the layout misreading swaps input and output, never h_n."""
    (layout,) = [m for m in BY_KEY["07.shapes"].mistakes if m.hint == shapes.LAYOUT.hint]
    assert layout.answer() == ((7, 5, 6), (7, 5, 16), (4, 5, 8))


def test_a_misreading_about_a_result_not_asked_for_is_refused():
    """A state misreading listed for an output-only exercise is a mistake in the solutions, found when it is built."""
    with pytest.raises(ValueError, match="says nothing about"):
        shapes.shape_exercise("00.x", "q", lambda: nn.RNN(1, 1), (2, 1, 1), "output", "e", (shapes.ROW_PER_LAYER,))
