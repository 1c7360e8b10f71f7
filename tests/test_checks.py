"""helpers.compare: one line that says whether a hand computation matches torch."""

import math

import pytest
import torch

from helpers import compare


def test_equal_tensors_match_and_the_line_says_so(capsys):
    """Identical tensors: True, a tick and a zero difference."""
    assert compare("h_n", torch.ones(2, 3), torch.ones(2, 3))
    assert capsys.readouterr().out == "✓ h_n: match (max abs diff 0.0e+00)\n"


def test_a_float32_rounding_difference_still_matches(capsys):
    """A difference below 1e-6 is float32 rounding, not a mistake."""
    assert compare("output", torch.tensor([0.5]), torch.tensor([0.5 + 2**-22]))
    assert "match (max abs diff 2.4e-07)" in capsys.readouterr().out


def test_different_values_do_not_match_and_the_line_says_where(capsys):
    """A real difference: False, a cross, the size of the difference and where it is."""
    assert not compare("result", (torch.zeros(2), torch.zeros(3)), (torch.zeros(2), torch.tensor([0, 0.5, 0])))
    assert capsys.readouterr().out == "✗ result: DIFFER (tolerance 1e-06) at [1] (max abs diff 5.0e-01)\n"


def test_float64_on_both_sides_uses_a_tighter_tolerance(capsys):
    """Two float64 tensors 1e-9 apart differ; float32 tensors 1e-9 apart match."""
    a = torch.tensor([1.0], dtype=torch.float64)
    assert not compare("x", a, a + 1e-9)
    assert compare("x", a.float(), a.float() + 1e-9)
    assert compare("x", a, a + 1e-9, atol=1e-8)


@pytest.mark.parametrize(
    "ours, theirs, expected",
    [
        (torch.zeros(1, 1, 2), torch.zeros(1, 2), "✗ out: shapes differ: ours (1, 1, 2), torch's (1, 2)"),
        ((torch.zeros(1),), (torch.zeros(1), torch.zeros(1)), "✗ out: cannot compare: ours has 1 parts, torch's 2"),
        (torch.zeros(1), (torch.zeros(1),), "✗ out: cannot compare: one side is a Tensor, the other a tuple"),
        ("abc", torch.zeros(1), "✗ out: cannot compare: str is not a tensor or a number"),
        (torch.tensor([math.nan]), torch.tensor([0.0]), "✗ out: NaN on one side only"),
    ],
)
def test_mismatched_structures_are_reported_not_raised(capsys, ours, theirs, expected):
    """Shapes, lengths, kinds or NaNs that differ give False and a readable reason."""
    assert not compare("out", ours, theirs)
    assert capsys.readouterr().out.strip() == expected


def test_numbers_and_nested_results_compare(capsys):
    """Plain numbers and (output, h_n) pairs are accepted."""
    assert compare("h1", 0.4621, torch.tensor(0.4621))
    assert compare("pair", (torch.ones(1), [torch.zeros(2)]), [torch.ones(1), (torch.zeros(2),)])


def test_an_exercise_not_answered_yet_is_named_not_crashed(capsys):
    """None stands for "no answer yet": False, and a line that says what to do."""
    assert not compare("h_4", None, torch.tensor(0.5))
    assert capsys.readouterr().out == "… h_4: no answer yet. Replace None with your answer and run the cell again.\n"


def test_the_verdict_behaves_as_a_bool_and_shows_nothing_more_in_a_notebook(capsys):
    """A Verdict works in if/assert/==, and its notebook display is empty (the line is printed)."""
    good, bad = compare("a", 1.0, 1.0), compare("b", 1.0, 2.0)
    assert good and not bad and good == True and bad == False  # noqa: E712
    assert all([good]) and not all([good, bad])
    assert repr(good) == "✓ a: match (max abs diff 0.0e+00)"
    assert good._ipython_display_() is None


def test_float64_results_a_tenth_of_a_billionth_apart_differ():
    """float64 keeps about 16 digits, so a 1e-10 difference is a mistake, not rounding (the default there is 1e-12)."""
    a = torch.tensor([0.25], dtype=torch.float64)
    assert not compare("x", a, a + 1e-10)
    assert compare("x", a, a + 1e-13)


@pytest.mark.parametrize(
    "ours, expected",
    [
        ((torch.tensor([0.1]), torch.tensor([0.5])), "✗ pair: DIFFER (tolerance 1e-06) at [1] (max abs diff 5.0e-01)"),
        ((torch.tensor([0.5]), torch.tensor([0.1])), "✗ pair: DIFFER (tolerance 1e-06) at [0] (max abs diff 5.0e-01)"),
    ],
)
def test_the_line_names_the_largest_difference_wherever_it_is(capsys, ours, expected):
    """With several parts wrong, the line gives the largest difference and its part, first or last."""
    assert not compare("pair", ours, (torch.zeros(1), torch.zeros(1)))
    assert capsys.readouterr().out.strip() == expected


def test_nan_in_the_same_places_on_both_sides_matches(capsys):
    """A NaN where torch has one too (a diverged layer computed faithfully) is not a difference."""
    nan = math.nan
    assert compare("h", torch.tensor([nan, 0.5]), torch.tensor([nan, 0.5]))
    assert capsys.readouterr().out == "✓ h: match (max abs diff 0.0e+00)\n"


@pytest.mark.parametrize("ours, theirs", [((), ()), (torch.zeros(0, 3), torch.zeros(0, 3))])
def test_empty_results_match(capsys, ours, theirs):
    """Nothing to compare (no parts, or tensors with no entries) is a match with a zero difference."""
    assert compare("empty", ours, theirs)
    assert capsys.readouterr().out == "✓ empty: match (max abs diff 0.0e+00)\n"


def test_a_verdict_hashes_as_its_bool():
    """A Verdict equals True or False, so it hashes like them: usable in a set or as a dict key."""
    good, bad = compare("a", 1.0, 1.0), compare("b", 1.0, 2.0)
    assert hash(good) == hash(True) and hash(bad) == hash(False)
    assert good in {True} and {good: "right"}[True] == "right"
