"""helpers/provenance.py: where a picked result's rows come from, said beside where the expected rows come from,
and nothing said where the result is not a pick; check_code says it for the picking exercises."""

import torch

from helpers.exercises import check_code
from helpers.provenance import ZEROS, copied_from, pattern, picked_from


def test_each_row_is_found_at_its_position_and_slice():
    torch.manual_seed(0)
    source = torch.randn(3, 4, 6)  # (batch, steps, 2H) with H = 3
    result = torch.stack([source[:, 3, :3], source[:, 0, 3:]])  # (2, batch, H)
    picks = picked_from(result, source)
    assert picks[(0, 1)] == ((1, 3), 0) and picks[(1, 2)] == ((2, 0), 3)
    assert len(picks) == 6


def test_a_row_not_in_the_source_or_another_dtype_is_no_pick():
    torch.manual_seed(0)
    source = torch.randn(4, 3, 2)
    assert picked_from(source[0] + 1, source) is None
    assert picked_from(source[0].double(), source) is None
    assert picked_from(torch.randn(3, 5), source) is None  # rows longer than the source's


def test_a_row_of_zeros_found_in_several_places_is_padding_and_another_repeat_is_unclear():
    source = torch.zeros(3, 2, 2)
    source[0, 0] = torch.tensor([1.0, 2.0])
    source[1, 1] = torch.tensor([1.0, 2.0])
    picks = picked_from(torch.stack([source[2, 0], source[0, 0]]), source)
    assert picks == {(0,): ZEROS, (1,): None}


def test_a_wrong_step_for_every_row_is_said_with_the_shared_dimension_as_a_colon():
    torch.manual_seed(0)
    source, H = torch.randn(5, 4, 6), 3
    expected = torch.stack([source[:, -1, :H], source[:, 0, H:]])
    mine = torch.stack([source[:, -1, :H], source[:, 1, H:]])
    assert copied_from(mine, expected, source, ("h_n_top", "output")) == [
        "your h_n_top[1] is output[:, 1, H:]; the expected h_n_top[1] is output[:, 0, H:]"
    ]


def test_rows_from_another_sequence_are_said_one_by_one():
    torch.manual_seed(0)
    output, lengths = torch.randn(4, 3, 2), torch.tensor([4, 3, 2])
    expected = output[lengths - 1, torch.arange(3)]
    mine = output[lengths - 1, 0]  # every row from sequence 0
    assert copied_from(mine, expected, output, ("h_last", "output")) == [
        "your h_last[1] is output[2, 0]; the expected h_last[1] is output[2, 1]",
        "your h_last[2] is output[1, 0]; the expected h_last[2] is output[1, 2]",
    ]
    assert copied_from(mine, None, output, ("h_last", "output")) == [  # a sealed answer: the student's rows only
        "your h_last[0] is output[3, 0]",  # with no answer to compare, the right rows are said too
        "your h_last[1] is output[2, 0]",
        "your h_last[2] is output[1, 0]",
    ]


def test_a_result_of_another_shape_is_set_beside_the_expected_rows():
    torch.manual_seed(0)
    source, H = torch.randn(6, 4, 8), 4  # batch first
    expected = torch.stack([source[:, -1, :H], source[:, 0, H:]])
    mine = torch.stack([source[-1, :, :H], source[0, :, H:]])  # read as if time came first
    lines = copied_from(mine, expected, source, ("h_n_top", "output"))
    assert lines[0] == "your h_n_top[0] is output[5, :, :H]; the expected h_n_top[0] is output[:, 3, :H]"


def test_nothing_is_said_for_a_computed_result_or_a_right_one():
    torch.manual_seed(0)
    output = torch.randn(4, 3, 2)
    expected = output[-1]
    assert copied_from(output.mean(0), expected, output, ("h_last", "output")) is None
    assert copied_from(expected.clone(), expected, output, ("h_last", "output")) is None


def test_check_code_says_where_a_wrong_pick_comes_from(capsys):
    def last_states(output, lengths):
        return output[lengths - 1, 0]  # every row from sequence 0

    assert not check_code("08.last_states", last_states)
    out = capsys.readouterr().out
    assert "hint: your h_last[1] is output[2, 0]; the expected h_last[1] is output[2, 1]" in out

    def top_h_n(output, hidden_size):
        return torch.stack([output[:, -1, :hidden_size], output[:, 1, hidden_size:]])  # step 1, not 0

    assert not check_code("06.top_h_n", top_h_n)
    assert "hint: your h_n_top[1] is output[:, 1, H:]; the expected h_n_top[1] is output[:, 0, H:]." in (
        capsys.readouterr().out
    )


def test_rows_of_padding_zeros_are_said_with_where_the_expected_rows_are():
    output, lengths = torch.randn(4, 3, 2), torch.tensor([2, 4, 3])
    output[2:, 0] = 0  # sequence 0's padding
    output[3:, 2] = 0
    expected = output[lengths - 1, torch.arange(3)]
    mine = output[
        lengths.clamp(max=3), torch.arange(3)
    ]  # the step after each end: padding, or the last for the longest
    assert copied_from(mine, expected, output, ("h_last", "output")) == [
        "your h_last[0] is zeros, like output at a padding step; the expected h_last[0] is output[1, 0]",
        "your h_last[2] is zeros, like output at a padding step; the expected h_last[2] is output[2, 2]",
    ]


def test_what_every_wrong_pick_shares_is_said_in_one_sentence():
    """The halves exchanged, or each row read at the other end of one dimension: said once, whatever the sizes."""
    for B, T, H in ((2, 5, 3), (4, 3, 2)):
        output = torch.randn(B, T, 2 * H)
        expected = torch.stack([output[:, -1, :H], output[:, 0, H:]])
        halves = torch.stack([output[:, -1, H:], output[:, 0, :H]])
        ends = torch.stack([output[:, 0, :H], output[:, -1, H:]])
        names = ("h_n_top", "output")
        assert "takes the other half of output's last dimension" in pattern(halves, expected, output, names)
        assert f"at the other end of dimension 1 of output (index n - 1 - k where k belongs, of its {T})" in pattern(
            ends, expected, output, names
        )
        assert pattern(expected, expected, output, names) is None
        assert pattern(torch.stack([output[:, 1, :H], output[:, 0, H:]]), expected, output, names) is None


def test_the_expected_rows_in_another_order_are_said_as_such():
    output = torch.randn(4, 3, 2)
    expected = torch.stack([output[1, 0], output[3, 1], output[2, 2]])
    said = pattern(expected[[1, 2, 0]], expected, output, ("h_last", "output"))
    assert said.startswith("your h_last holds the expected rows in another order (your h_last[0] is the expected")
