"""helpers.exercises: every exercise accepts its solution and explains each typical mistake."""

import pytest
import torch

from helpers import exercises

ALL = sorted(exercises.exercises().values(), key=lambda e: e.key)
MISTAKES = [(e, m) for e in ALL for m in e.mistakes]


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.key)
def test_the_reference_solution_is_accepted(exercise, capsys):
    """check(key, solution) says right and returns a true Verdict."""
    assert exercises.check(exercise.key, exercise.solution())
    assert capsys.readouterr().out == f"✓ {exercise.key}: right.\n"


@pytest.mark.parametrize("exercise", ALL, ids=lambda e: e.key)
def test_every_exercise_expects_at_least_one_typical_mistake(exercise):
    """An exercise without a listed mistake could only ever say 'not yet'."""
    assert exercise.mistakes, f"{exercise.key} lists no typical wrong answer"


@pytest.mark.parametrize("exercise, mistake", MISTAKES, ids=lambda v: getattr(v, "key", "mistake"))
def test_a_typical_mistake_gets_its_specific_hint(exercise, mistake, capsys):
    """The wrong answer is refused with the hint written for it, not a generic one."""
    assert not exercises.check(exercise.key, mistake.answer())
    assert capsys.readouterr().out == f"✗ {exercise.key}: not yet. {mistake.hint}\n"


@pytest.mark.parametrize(
    "answer, hint",
    [
        ("abc", "Write a shape as a tuple of whole numbers"),
        ((1, 1, 1, 1), "This shape has 3 dimensions; yours has 4."),
        ((1, 1, 10), "The right sizes, in the wrong order"),
        ((2, 1, 1), "Not this shape."),
    ],
)
def test_other_wrong_shapes_get_a_hint_that_does_not_give_the_answer_away(answer, hint, capsys):
    """Unlisted wrong shapes: the hint points at the kind of error."""
    assert not exercises.check("01.output_shape", answer)
    out = capsys.readouterr().out
    assert hint in out and "(10, 1, 1)" not in out


def test_numbers_with_the_wrong_sign_or_far_off_get_a_hint(capsys):
    """-h_4 is a sign error; 0.5 is simply off; a tensor answer is fine."""
    right = exercises.exercises()["01.h_4"].solution()
    assert not exercises.check("01.h_4", -right)
    assert "the wrong sign" in capsys.readouterr().out
    assert not exercises.check("01.h_4", 0.5)
    assert "Redo the computation one step at a time" in capsys.readouterr().out
    assert exercises.check("01.h_4", torch.tensor(right))


@pytest.mark.parametrize("answer", [None, "h", [1, "x"], object(), float("nan"), torch.zeros(3)])
def test_no_answer_can_crash_a_check(answer, capsys):
    """Anything a student types gets a line back, never an exception."""
    verdict = exercises.check("01.h_4", answer)
    assert not verdict and capsys.readouterr().out.startswith(("…", "✗"))


def test_an_unknown_key_is_reported(capsys):
    """A mistyped key says so instead of raising."""
    assert not exercises.check("01.nope", 1)
    assert "there is no exercise '01.nope'" in capsys.readouterr().out


def test_solution_prints_the_answer_and_why(capsys):
    """solution(key) shows the reference answer with its explanation."""
    exercises.solution("01.h_n_shape")
    assert capsys.readouterr().out.splitlines()[1:] == [
        "answer: (1, 1, 1)",
        "h_n holds the state after the last step, one row per layer: (num_layers=1, batch=1, hidden_size=1).",
    ]


def test_a_wrong_part_of_a_several_part_answer_is_named(capsys):
    """For an answer made of several shapes, the hint names the part that is off and why."""
    expected = exercises.exercises()["06.output_h_n_shapes"].solution()
    assert not exercises.check("06.output_h_n_shapes", (expected[0], (1, 2)))
    assert "Answer 2 of 2 is off. This shape has 3 dimensions; yours has 2." in capsys.readouterr().out
    assert not exercises.check("06.output_h_n_shapes", (expected[0],))
    assert "Give 2 answers" in capsys.readouterr().out


def test_text_for_a_number_and_a_wrong_index_get_their_own_hints(capsys):
    """'0.227' in quotes is text, not a number; a wrong row index gets an index hint."""
    assert not exercises.check("01.h_4", "0.84")
    assert "not as text in quotes" in capsys.readouterr().out
    assert not exercises.check("06.h_n_row", 0)
    assert "Not this index" in capsys.readouterr().out


def test_rows_given_as_a_slice_are_the_rows_it_picks(capsys):
    """slice(5, 10) answers a question about rows 5 to 9 as well as a list does."""
    assert exercises.check("10.forget_rows", slice(5, 10))
    assert not exercises.check("10.forget_rows", slice(0, 5))


def test_loading_and_checking_exercises_leaves_the_students_random_state_alone(monkeypatch, capsys):
    """Solutions build layers and seed their own draws; the student's next torch.randn is unchanged."""
    import sys

    for name in [m for m in sys.modules if m.startswith("helpers.solutions.")]:
        monkeypatch.delitem(sys.modules, name)  # re-import, so module-level computations run again
    monkeypatch.setattr(exercises, "_REGISTRY", {})
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    for exercise in exercises.exercises().values():
        exercises.check(exercise.key, 12345)  # wrong for every exercise: runs the solution and every mistake
        exercises.solution(exercise.key)
    assert torch.equal(torch.randn(3), expected)
