"""helpers.exercises: every exercise accepts its solution and explains each typical mistake."""

import dataclasses
import inspect
import re
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

from helpers import exercises, solutions
from helpers.exercise_types import CodeExercise, Exercise

EVERY = sorted(exercises.exercises().values(), key=lambda e: e.key)
ALL = [e for e in EVERY if isinstance(e, Exercise)]  # answered with a value
CODE = [e for e in EVERY if isinstance(e, CodeExercise)]  # answered with a function
MISTAKES = [(e, m) for e in ALL for m in e.mistakes]
CODE_MISTAKES = [(e, m) for e in CODE for m in e.mistakes]


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


ONE_OF_EACH_KIND = [
    "01.h_4",  # a number
    "01.output_shape",  # a shape
    "03.parameter_count",  # a count
    "04.backward_row",  # an index
    "08.batch_sizes",  # a list of counts
    "09.head_rows",  # a list of indices
    "06.output_h_n_shapes",  # several answers
    "07.one_row_per_sequence",  # text
]
ODD_ANSWERS = [
    None,
    "h",
    [1, "x"],
    {"a": 1},
    object(),
    float("nan"),
    float("inf"),
    True,
    1 + 2j,
    10**5000,  # an int too long for repr
    torch.zeros(3),
    torch.zeros(10**6),
    torch.zeros(10**6, dtype=torch.long),
    [torch.zeros(2), torch.ones(3)],
    slice(None),
    slice("a", None),
    slice(0, 10**15),
    range(3),
    np.zeros((2, 2)),
]


@pytest.mark.parametrize("key", ONE_OF_EACH_KIND)
@pytest.mark.parametrize("answer", ODD_ANSWERS, ids=lambda a: type(a).__name__)
def test_no_answer_can_crash_a_check(key, answer, capsys):
    """Anything a student types gets a line that says what is wrong, never an exception or a bare error."""
    verdict = exercises.check(key, answer)
    out = capsys.readouterr().out
    assert not verdict and out.startswith(("…", "✗")) and "could not check" not in out
    assert len(out) < 400, out


@pytest.mark.parametrize(
    "key, meant",
    [
        ("09.head_row", "Did you mean '09.head_rows'"),  # a typo: the closest keys
        ("09.nope", "'09.in_features', '09.head_rows' or '09.parameter_count'"),  # else the notebook's keys
        ("bad key", "Keys look like '01.h_4'."),
        (["not", "a", "key"], "Keys look like '01.h_4'."),
    ],
)
def test_an_unknown_key_is_explained_alike_by_check_and_solution(key, meant, capsys):
    """check and solution both say there is no such exercise, with the keys it may have meant."""
    assert not exercises.check(key, 1)
    checked = capsys.readouterr().out
    exercises.solution(key)
    assert capsys.readouterr().out == checked
    assert checked.startswith(f"✗ there is no exercise {key!r}.") and meant in checked


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
    assert "Write 2 answers, in the order the question asks for them" in capsys.readouterr().out


def test_text_for_a_number_and_a_wrong_index_get_their_own_hints(capsys):
    """'0.84' in quotes is text, not a number; a wrong row index gets an index hint."""
    assert not exercises.check("01.h_4", "0.84")
    assert "Write the answer as a number, e.g. 0.1234; yours is text in quotes." in capsys.readouterr().out
    assert not exercises.check("06.h_n_row", 0)
    assert "Not this index. Count from 0, and say what each of the 6 positions holds" in capsys.readouterr().out


@pytest.mark.parametrize(
    "key, answer, hint",
    [
        (
            "03.parameter_count",
            641,
            "Too many. Add up the entries of every parameter tensor, each once: weight_ih_l0, "
            "weight_hh_l0, bias_ih_l0 and bias_hh_l0. A weight has rows × columns entries; a bias has one per row of its weight.",
        ),
        (
            "09.parameter_count",
            104,
            "Too few. Add up the entries of every parameter tensor, each once: rnn.weight_ih_l0, "
            "rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0, head.weight and head.bias. A weight has rows × columns entries; a bias has one per row of its weight.",
        ),
        ("09.in_features", 30, "Too few. Write down each part that is counted and its size, then add them up."),
        (
            "11.parameter_count",
            2000,
            "Too many. Add up the entries of every parameter tensor, each once: weight_ih_l0, "
            "weight_hh_l0, bias_ih_l0 and bias_hh_l0. A weight has rows × columns entries; a bias has one per row of its weight.",
        ),
        ("03.parameter_count", -640, "A count is never negative: it says how many there are."),
        ("03.parameter_count", 640.5, "Write the count as one whole number; yours is 640.5."),
        ("03.parameter_count", torch.tensor([640]), "Write the count as one whole number; yours is a list of 1 entry."),
    ],
)
def test_a_wrong_count_says_too_many_or_too_few_and_what_to_count(key, answer, hint, capsys):
    """A count is not an index: the hint says which way it is off and names what is counted."""
    assert not exercises.check(key, answer)
    assert capsys.readouterr().out == f"✗ {key}: not yet. {hint}\n"


@pytest.mark.parametrize(
    "key, answer",
    [
        ("03.parameter_count", torch.tensor(640)),
        ("03.parameter_count", np.int64(640)),
        ("03.parameter_count", np.array(640)),
        ("03.parameter_count", torch.tensor(640.0)),
        ("03.parameter_count", 640.0),
        ("09.parameter_count", torch.tensor(106, dtype=torch.int32)),
        ("09.parameter_count", np.uint16(106)),
    ],
    ids=repr,
)
def test_the_right_count_is_right_as_a_tensor_or_a_numpy_number(key, answer, capsys):
    """torch.tensor(640), a 0-dim tensor, counts as the number it holds, as numpy's integers do."""
    assert exercises.check(key, answer)
    assert capsys.readouterr().out == f"✓ {key}: right.\n"


@pytest.mark.parametrize(
    "key, answer, hint",
    [
        ("11.z_rows", [3, 4, 5, 6], "Every entry is 1 too small: the steps between them are right, the start is not."),
        ("11.z_rows", [4, 5, 6, 8], "The entry at index 3 is off; the others are right."),
        ("11.z_rows", [4, 5, 7, 6], "The right entries in the wrong order: reread which one comes first."),
        ("08.batch_sizes", [4, 3, 3, 1], "The answer has 5 entries; yours has 4. Say what each entry stands for."),
        (
            "08.batch_sizes",
            torch.tensor([4, 3, 2, 2, 1]),
            "The entries at index 2 and 3 are off; the others are right.",
        ),
        (
            "08.batch_sizes",
            [5, 4, 4, 2, 2],
            "Every entry is 1 too large: the steps between them are right, the start is not.",
        ),
        (
            "10.forget_rows",
            [1, 2, 3, 4, 0],
            "Every entry is off. Say what each one stands for before you write it down.",
        ),
        ("09.head_rows", [4, 6], "6, at index 1, is out of range: there are 6 positions, 0 to 5."),
        ("09.head_rows", 4, "Write the answer as a list of whole numbers, e.g. [0, 1]; yours is 4."),
    ],
)
def test_a_wrong_list_of_indices_or_counts_gets_a_list_hint(key, answer, hint, capsys):
    """Rows and batch_sizes are lists: the hint is about length, order and entries, not tolerance or shape."""
    assert not exercises.check(key, answer)
    assert capsys.readouterr().out == f"✗ {key}: not yet. {hint}\n"


@pytest.mark.parametrize(
    "key, answer, note",
    [
        ("04.backward_row", -1, "Out of 2 positions, -1 is 1."),
        ("04.backward_time", -5, "Out of 5 positions, -5 is 0."),
        ("05.layer_1_row", -3, "Out of 4 positions, -3 is 1."),
        ("06.h_n_row", -3, "Out of 6 positions, -3 is 3."),
        ("08.t_forward", -3, "Out of 5 positions, -3 is 2."),
        ("08.t_backward", -5, "Out of 5 positions, -5 is 0."),
        ("09.head_rows", [-2, -1], "Out of 6 positions, [-2, -1] is [4, 5]."),
        ("09.head_rows", (4, -1), "Out of 6 positions, (4, -1) is (4, 5)."),
        ("09.head_rows", torch.tensor([-2, -1]), "Out of 6 positions, [-2, -1] is [4, 5]."),
    ],
    ids=str,
)
def test_a_negative_index_that_names_the_right_position_is_right(key, answer, note, capsys):
    """h_n[-1] is h_n[5] when h_n has 6 rows: counted from the end, the right position is right, and said so."""
    assert exercises.check(key, answer)
    assert capsys.readouterr().out == f"✓ {key}: right. {note}\n"


@pytest.mark.parametrize(
    "key, answer, position",
    [
        ("04.backward_row", -2, 0),
        ("04.backward_time", -1, 4),
        ("05.layer_1_row", -1, 3),
        ("06.h_n_row", -1, 5),
        ("08.t_forward", -1, 4),
        ("08.t_backward", -1, 4),
    ],
)
def test_a_negative_index_of_a_wrong_position_gets_that_positions_hint(key, answer, position, capsys):
    """-1 for a row that is not the last one gets the hint written for the last row, saying which row -1 is."""
    exercise = exercises.exercises()[key]
    (hint,) = [m.hint for m in exercise.mistakes if m.answer() == position]
    assert not exercises.check(key, answer)
    assert (
        capsys.readouterr().out
        == f"✗ {key}: not yet. Out of {exercise.size} positions, {answer} is {position}. {hint}\n"
    )


@pytest.mark.parametrize(
    "key, answer, hint",
    [
        ("04.backward_row", 2, "2 is out of range: there are 2 positions, 0 to 1 (or -2 to -1 from the end)."),
        ("04.backward_row", -3, "-3 is out of range: there are 2 positions, 0 to 1 (or -2 to -1 from the end)."),
        ("06.h_n_row", 6, "6 is out of range: there are 6 positions, 0 to 5 (or -6 to -1 from the end)."),
        ("04.backward_row", slice(1, 2), "Write the index as one whole number; yours is slice(1, 2, None)."),
    ],
)
def test_an_index_out_of_range_or_not_an_index_is_named(key, answer, hint, capsys):
    """An index past either end says how many positions there are; a slice for one index says it is not one."""
    assert not exercises.check(key, answer)
    assert capsys.readouterr().out == f"✗ {key}: not yet. {hint}\n"


@pytest.mark.parametrize(
    "key, answer, line",
    [
        (
            "09.head_rows",
            slice(-2, None),
            "✓ 09.head_rows: right. Out of 6 positions, slice(-2, None, None) is [4, 5].",
        ),
        ("09.head_rows", slice(4, None), "✓ 09.head_rows: right. Out of 6 positions, slice(4, None, None) is [4, 5]."),
        ("09.head_rows", slice(4, 6), "✓ 09.head_rows: right. Out of 6 positions, slice(4, 6, None) is [4, 5]."),
        (
            "10.forget_rows",
            slice(5, 10),
            "✓ 10.forget_rows: right. Out of 20 positions, slice(5, 10, None) is [5, 6, 7, 8, 9].",
        ),
        ("10.forget_rows", range(5, 10), "✓ 10.forget_rows: right."),
        (
            "09.head_rows",
            slice(-1, -3, -1),
            "✗ 09.head_rows: not yet. Out of 6 positions, slice(-1, -3, -1) is [5, 4]. The right rows, in the wrong "
            "order: the forward direction has the lower number.",
        ),
        (
            "09.head_rows",
            slice(None),
            "✗ 09.head_rows: not yet. Out of 6 positions, slice(None, None, None) is [0, 1, 2, 3, 4, 5]. The answer "
            "has 2 entries; yours has 6. Say what each entry stands for.",
        ),
        (
            "10.forget_rows",
            slice(5, None),
            "✗ 10.forget_rows: not yet. Out of 20 positions, slice(5, None, None) is [5, 6, 7, 8, 9, 10, ...]. The "
            "answer has 5 entries; yours has 15. Say what each entry stands for.",
        ),
        (
            "08.batch_sizes",
            slice(1, None),
            "✗ 08.batch_sizes: not yet. Which positions slice(1, None, None) picks depends on the length of the "
            "dimension it slices, which this exercise does not give: write them as a list of whole numbers.",
        ),
    ],
    ids=str,
)
def test_a_slice_is_compared_by_the_positions_it_picks(key, answer, line, capsys):
    """slice(-2, None) picks rows 4 and 5 of 6; a slice whose rows need an unknown length says so."""
    assert bool(exercises.check(key, answer)) == line.startswith("✓")
    assert capsys.readouterr().out == line + "\n"


@pytest.mark.parametrize(
    "key, shown",
    [
        ("09.head_rows", "answer: [4, 5]"),
        ("10.forget_rows", "answer: [5, 6, 7, 8, 9]"),
        ("11.z_rows", "answer: [4, 5, 6, 7]"),
        ("08.batch_sizes", "answer: [4, 3, 3, 1, 1]"),
        ("03.parameter_count", "answer: 640"),
    ],
)
def test_solution_shows_the_answer_in_the_form_the_exercise_asks_for(key, shown, capsys):
    """Rows asked for as a list are shown as a list, not as the tensor a solution computes them in."""
    exercises.solution(key)
    assert capsys.readouterr().out.splitlines()[1] == shown


INDEX_QUESTION = re.compile(r"\brows?\b|\bindex\b")
NOT_YET_GIVEN_A_SIZE = {}  # index exercises still without a size: key -> why (none left)


def _index_exercises():
    for exercise in ALL:
        solution = exercises._plain(exercise.solution())
        whole = isinstance(solution, int) or (
            isinstance(solution, (list, tuple)) and all(isinstance(v, int) for v in solution)
        )
        if whole and INDEX_QUESTION.search(exercise.question):
            reason = NOT_YET_GIVEN_A_SIZE.get(exercise.key)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(exercise, marks=marks, id=exercise.key)


@pytest.mark.parametrize("exercise", list(_index_exercises()))
def test_every_index_exercise_knows_the_length_of_the_dimension_it_indexes(exercise):
    """An index answer needs `size` to tell -1 from 5; the reference positions lie within it."""
    assert exercise.size is not None, f"{exercise.key} asks for an index but gives no size"
    solution = exercises._plain(exercise.solution())
    positions = solution if isinstance(solution, (list, tuple)) else [solution]
    sizes = exercise.size if isinstance(exercise.size, tuple) else (exercise.size,) * len(positions)
    assert all(0 <= p < s for p, s in zip(positions, sizes, strict=True))


def test_an_index_pair_with_a_size_per_entry_counts_each_entry_in_its_own_dimension(monkeypatch, capsys):
    """02.blind_entry with size=(1, 3), as proposed: (-1, -2) is (0, 1), and a column of 5 is out of range."""
    registry = exercises.exercises()
    registry["02.blind_entry"] = dataclasses.replace(registry["02.blind_entry"], size=(1, 3))
    monkeypatch.setattr(exercises, "BY_KEY", registry)
    assert exercises.check("02.blind_entry", (-1, -2))
    assert capsys.readouterr().out == "✓ 02.blind_entry: right. Out of 1×3 positions, (-1, -2) is (0, 1).\n"
    assert not exercises.check("02.blind_entry", (0, 5))
    assert "5, at index 1, is out of range: there are 3 positions, 0 to 2." in capsys.readouterr().out
    assert not exercises.check("02.blind_entry", (1, 0))
    assert "Row and column are swapped" in capsys.readouterr().out


def test_importing_helpers_leaves_the_students_random_state_alone():
    """Importing helpers loads every solution module; none of them draws a random number on import."""
    code = (
        "import torch; torch.manual_seed(123); expected = torch.randn(3); torch.manual_seed(123); "
        "import helpers; assert torch.equal(torch.randn(3), expected), 'importing helpers drew random numbers'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_checking_exercises_leaves_the_students_random_state_alone(capsys):
    """Solutions build layers and seed their own draws; the student's next torch.randn is unchanged."""
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    for exercise in exercises.exercises().values():
        if isinstance(exercise, CodeExercise):  # a wrong function: runs the reference and every mistake
            exercises.check_code(exercise.key, lambda *args: torch.randn(1))
        else:
            exercises.check(exercise.key, 12345)  # wrong for every exercise: runs the solution and every mistake
        exercises.solution(exercise.key)
    assert torch.equal(torch.randn(3), expected)


def test_a_key_used_twice_is_refused():
    """Two exercises with one key would shadow each other: gathering them raises, naming the key."""
    twice = types.SimpleNamespace(EXERCISES=[exercises.exercises()["01.h_4"]])
    with pytest.raises(ValueError, match="two exercises share the key '01.h_4'"):
        solutions._by_key([twice, twice])


# Write-it-yourself exercises: the student writes a function, checked by check_code.


@pytest.mark.parametrize("exercise", CODE, ids=lambda e: e.key)
def test_a_reference_function_is_accepted(exercise, capsys):
    """check_code(key, reference) says right; a whole-layer exercise goes through helpers.diagnose."""
    assert exercises.check_code(exercise.key, exercise.reference)
    out = capsys.readouterr().out
    assert out.startswith(f"✓ {exercise.key}"), out


@pytest.mark.parametrize("exercise", CODE, ids=lambda e: e.key)
def test_a_stub_reads_not_written_yet(exercise, capsys):
    """The notebook's stub, a function whose body is `...`, gets the stable 'not written yet' line."""

    def stub(*args): ...

    verdict = exercises.check_code(exercise.key, stub)
    assert not verdict
    assert capsys.readouterr().out.startswith(f"… {exercise.key}: not written yet (stub returns None).")


@pytest.mark.parametrize("exercise", CODE, ids=lambda e: e.key)
def test_a_code_exercise_names_its_mistakes_or_the_catalogue_does(exercise):
    """A step exercise lists 2 or more typical wrong functions; a layer exercise relies on helpers.bugs."""
    assert (exercise.layer is None) != (exercise.cases is None), f"{exercise.key}: give cases or a layer"
    assert exercise.layer is not None or len(exercise.mistakes) >= 2


@pytest.mark.parametrize("exercise, mistake", CODE_MISTAKES, ids=lambda v: getattr(v, "key", "mistake"))
def test_a_typical_wrong_function_is_named(exercise, mistake, capsys):
    """The wrong function is refused, placed, and named with its fix."""
    assert not exercises.check_code(exercise.key, mistake.function)
    out = capsys.readouterr().out
    assert f"most likely: {mistake.title}.\n  fix: {mistake.fix}." in out, out


@pytest.mark.parametrize("exercise", CODE, ids=lambda e: e.key)
def test_solution_shows_the_reference_function(exercise, capsys):
    """solution(key) prints the question, the reference's source and why it is right."""
    exercises.solution(exercise.key)
    out = capsys.readouterr().out
    assert out.startswith(f"{exercise.key}: {exercise.question}\ndef ") and exercise.explanation in out


def test_check_and_check_code_point_to_each_other(capsys):
    """A function given to check, or a value given to check_code, is told which one to use."""
    assert not exercises.check("01.step", 1.0)
    assert not exercises.check_code("01.h_4", lambda: None)
    first, second = capsys.readouterr().out.splitlines()
    assert "check_code('01.step', your_function)" in first and "check('01.h_4', your_answer)" in second


def test_a_step_function_that_raises_is_shown_at_its_line(capsys):
    """An error in a student's step shows their line and message, and no helpers frames."""

    def rnn_step(x_t, h_prev, w_ih, w_hh):
        return torch.tanh(w_ih * x_t + w_hh * h_pref)  # noqa: F821

    assert not exercises.check_code("01.step", rnn_step)
    out = capsys.readouterr().out
    assert "raised NameError at line" in out and "in rnn_step: return torch.tanh(w_ih * x_t + w_hh * h_pref)" in out
    assert "name 'h_pref' is not defined" in out and "helpers" not in out
    assert "hint: the message above says what went wrong, at the line shown." in out


@pytest.mark.parametrize(
    "key, wrong, hint",
    [
        ("01.step", lambda x, h, a, b: [torch.tanh(a * x + b * h)], "return h_t as one tensor of the shape expected."),
        ("01.step", lambda x, h, a, b: -torch.tanh(a * x + b * h), "the right size, the wrong sign"),
        (
            "01.step",
            lambda x, h, a, b: torch.tanh(a * x + b * h + 0.1),
            "the result already differs on the notebook's case",
        ),
        ("01.step", lambda x, h, a, b: torch.tanh(0.5 * x - h), "it matches on the notebook's case only"),
        (
            "01.step",
            lambda x, h, a, b: torch.tanh(a * x + b * h) if x.dim() == 0 else x[9],
            "it works on the notebook's",
        ),
    ],
    ids=["form", "sign", "first case", "hard-coded", "raises later"],
)
def test_a_wrong_step_outside_the_listed_mistakes_gets_a_hint_for_its_kind(key, wrong, hint, capsys):
    """A wrong form, a flipped sign, a wrong value, or numbers hard-coded from the notebook's case."""
    assert not exercises.check_code(key, wrong)
    assert f"hint: {hint}" in capsys.readouterr().out


# Write-it-yourself checks: the probes are large enough, the argument changes and messages are the student's.


def _loop(product):
    """Notebook 02's loop, with the hidden part computed as `product(h_prev, W_hh)`."""

    def my_rnn(module, input, hx=None):
        W_ih, W_hh = module.weight_ih_l0, module.weight_hh_l0
        h = torch.zeros(input.shape[1], module.hidden_size) if hx is None else hx[0]
        states = []
        for x_t in input:
            h = torch.tanh(x_t @ W_ih.T + module.bias_ih_l0 + product(h, W_hh) + module.bias_hh_l0)
            states.append(h)
        return torch.stack(states), h.unsqueeze(0)

    return my_rnn


@pytest.mark.parametrize(
    "product, right",
    [(lambda h, W: h @ W.T, True), (lambda h, W: h @ W, False), (lambda h, W: h * W[:, 0], False)],
    ids=["right", "untransposed", "elementwise"],
)
def test_notebook_02s_loop_check_tells_a_wrong_product_from_the_right_one(product, right, capsys):
    """The notebook's layer has one unit and a batch of one, where h @ W_hh and h * W_hh equal h @ W_hh.T."""
    verdict = exercises.check_code("02.loop", _loop(product))
    assert bool(verdict) is right, capsys.readouterr().out


def test_a_step_function_that_changes_its_argument_is_told_so(capsys):
    """`lengths -= 1` gives the right rows, and changes the caller's lengths: ✗, with the argument named."""

    def last_states(output, lengths):
        lengths -= 1
        return output[lengths, torch.arange(output.shape[1])]

    verdict = exercises.check_code("08.last_states", last_states)
    text = capsys.readouterr().out
    assert not verdict and "it changes its argument `lengths` (lengths[0] was 4, now 3) in place" in text, text


def test_a_step_function_returning_float64_is_told_so(capsys):
    """The right h_t in float64 is not what the step returns for float32 arguments."""
    verdict = exercises.check_code(
        "01.step", lambda x_t, h_prev, w_ih, w_hh: torch.tanh(w_ih * x_t + w_hh * h_prev).double()
    )
    text = capsys.readouterr().out
    assert not verdict and "it returns torch.float64 where its arguments are torch.float32" in text, text


def test_check_code_given_something_else_than_a_function_names_check_code(capsys):
    """The message for a layer exercise suggests check_code with the key, not diagnose."""
    verdict = exercises.check_code("02.loop", "my_rnn")
    text = capsys.readouterr().out
    assert not verdict and "check_code('02.loop', your_function)" in text and "diagnose" not in text, text


def test_the_lstm_and_gru_steps_are_checked_term_by_term(capsys):
    """Each term acts alone in one case; a wrong b_hh is placed there, and the line of checks shows it."""

    def lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
        a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh.abs()).chunk(4, dim=-1)
        c_t = torch.sigmoid(a_f) * c_prev + torch.sigmoid(a_i) * torch.tanh(a_g)
        return torch.sigmoid(a_o) * torch.tanh(c_t), c_t

    labels = [c[0].split(":")[0] for c in solutions.BY_KEY["10.step"].cases()]
    assert [label for label in labels if label.startswith("only")] == [
        f"only {term} acting" for term in ("W_ih", "W_hh", "b_ih", "b_hh", "c_prev")
    ]
    gru_labels = [c[0].split(":")[0] for c in solutions.BY_KEY["11.step"].cases() if c[0].startswith("only")]
    assert gru_labels == [f"only {term} acting" for term in ("W_ih", "W_hh", "b_ih", "b_hh")]
    verdict = exercises.check_code("10.step", lstm_step)
    text = capsys.readouterr().out
    assert not verdict and "hint: with only b_hh acting it departs, and every other term alone is right" in text
    assert "only W_hh acting ✓ · only b_ih acting ✓ · only b_hh acting ✗ · only c_prev acting ✓" in text


@pytest.mark.parametrize("key", ["01.step", "10.step", "11.step", "12.bptt_step", "13.tag_loss"])
def test_a_step_with_right_values_and_no_gradient_is_told_so(key, capsys):
    """A result computed under no_grad has the reference's values on every case, and no gradient: ✗."""
    reference = solutions.BY_KEY[key].reference

    def without_gradient(*args):
        with torch.no_grad():
            return reference(*args)

    assert exercises.check_code(key, reference)
    capsys.readouterr()
    verdict = exercises.check_code(key, without_gradient)
    text = capsys.readouterr().out
    assert not verdict and "Its values match the reference on every case" in text, text
    assert "its result carries no gradient" in text, text


def test_a_step_detaching_one_argument_names_that_argument(capsys):
    """c_prev detached: every value right, the gradient with respect to c_prev zero; the message names c_prev."""
    reference = solutions.BY_KEY["10.step"].reference

    def lstm_step(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
        return reference(x_t, h_prev, c_prev.detach(), W_ih, W_hh, b_ih, b_hh)

    verdict = exercises.check_code("10.step", lstm_step)
    text = capsys.readouterr().out
    assert not verdict and "its gradient with respect to `c_prev` is wrong" in text, text
    assert "`h_prev`" not in text and "`W_hh`" not in text, text


def test_a_step_changing_a_weight_in_place_is_caught_when_it_requires_grad(capsys):
    """W_hh scaled in place and back: right values; with W_hh requiring grad, as in training, it raises: ✗."""

    def rnn_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
        W_hh.mul_(2)
        h_t = torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ (W_hh / 2).T + b_hh)
        W_hh.div_(2)
        return h_t

    parameters = list(inspect.signature(solutions.BY_KEY["03.step_matrices"].reference).parameters)
    assert parameters == ["x_t", "h_prev", "W_ih", "W_hh", "b_ih", "b_hh"], parameters
    verdict = exercises.check_code("03.step_matrices", rnn_step)
    text = capsys.readouterr().out
    assert not verdict and "when its arguments require grad, as a layer's weights do in training, it raised" in text
    assert "a leaf Variable that requires grad is being used in an in-place operation." in text, text
    assert "Change no argument in place" in text and "operation.." not in text, text
