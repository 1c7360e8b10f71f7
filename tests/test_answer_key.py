"""The sealed answer key of a course release checks answers as the open references do, and holds none of them."""

import io
import json
import re

import pytest
import torch

from helpers import answer_key, exercises
from helpers.exercise_types import CodeExercise, Exercise
from helpers.solutions import BY_KEY

VALUES = [key for key, exercise in BY_KEY.items() if isinstance(exercise, Exercise)]
CODE = [key for key, exercise in BY_KEY.items() if isinstance(exercise, CodeExercise)]
# The two hints a digest cannot give (helpers/answer_key.py says why), as (open, sealed) patterns.
DIRECTION = (r"Too (many|few)\.", "Not this count.")
FAR_SHIFT = (r"Every entry is \d+ too (large|small):", "Every entry is off by the same amount:")


@pytest.fixture(scope="module")
def sealed():
    """Every exercise sealed, written and read back as a release does (torch.save, torch.load weights_only)."""
    key = answer_key.seal_all(BY_KEY, exercises.open_reference)
    buffer = io.BytesIO()
    torch.save(key, buffer)
    buffer.seek(0)
    return answer_key.load(torch.load(buffer, weights_only=True))


def probes(value):
    """The reference answer and answers near it of its own kind and of others: right, off by a little, in the wrong form."""
    found = [value]
    if isinstance(value, str):
        found += [value.lower(), f" {value} ", "Z", "A", "B", 3]
    elif isinstance(value, int):
        found += [value + 1, value - 1, value + 5, 0, -1, 2 * value, float(value), "x", (value,), torch.tensor(value)]
    elif isinstance(value, float):
        found += [
            value + 5e-5,
            value - 9e-5,
            value + 3e-4,
            -value,
            0.0,
            torch.tensor(value),
            torch.tensor([value]),
            "x",
        ]
    elif all(isinstance(v, int) for v in value):
        kind = type(value)
        found += [
            kind(reversed(value)),
            kind(v + 1 for v in value),
            kind(v - 1 for v in value),
            kind(v + 3 for v in value),
            kind(v + 12 for v in value),
            value[:-1],
            kind([*value, 0]),
            kind([value[0] + 1, *value[1:]]),
            kind(2 * v for v in value),
            kind(-v - 1 for v in value),
            torch.tensor(list(value)),
        ]
        if len(value) > 1:
            found.append(slice(value[0], value[-1] + 1))
    else:  # several answers: each part changed in turn
        for i, part in enumerate(value):
            found += [tuple(p if j == i else v for j, v in enumerate(value)) for p in probes(part)[1:6]]
    return found


def test_the_sealed_key_says_what_the_references_say_on_every_probe(sealed):
    """Over 600 answers to the 47 value exercises: the same verdict and line, but for the two hints a digest cannot give."""
    checked, departures = 0, []
    for key in VALUES:
        exercise = BY_KEY[key]
        answers = probes(exercises._expected(exercise))
        answers += [exercises._plain(exercises._quietly(m.answer)) for m in exercise.mistakes]
        for answer in answers:
            open_right, open_line = exercises._verdict(exercise, answer)
            sealed_right, sealed_line = exercises._verdict(sealed[key], answer)
            checked += 1
            assert sealed_right == open_right, (key, answer, open_line, sealed_line)
            if sealed_line != open_line:
                departures.append((key, answer, open_line, sealed_line))
    assert checked > 600
    for key, answer, open_line, sealed_line in departures:
        explained = [re.sub(pattern, instead, open_line) == sealed_line for pattern, instead in (DIRECTION, FAR_SHIFT)]
        assert any(explained), (key, answer, open_line, sealed_line)
    assert len(departures) < checked / 10


def test_every_reference_answer_and_expected_mistake_gets_its_own_line(sealed):
    for key in VALUES:
        exercise = BY_KEY[key]
        assert exercises._verdict(sealed[key], exercises._expected(exercise)) == (True, f"✓ {key}: right.")
        for mistake in exercise.mistakes:
            right, line = exercises._verdict(sealed[key], exercises._plain(exercises._quietly(mistake.answer)))
            assert not right and line.endswith(mistake.hint), (key, line)


@pytest.mark.parametrize("key", CODE)
def test_write_it_yourself_exercises_are_checked_as_before(key, sealed, capsys, monkeypatch):
    """The reference passes, and each expected mistake (or a wrong layer) gets the open check's lines.

    A first departure shows the student's entry without the expected one, which a sealed key does not hold.
    """
    monkeypatch.setattr(exercises, "BY_KEY", {**BY_KEY, key: sealed[key]})
    exercise = BY_KEY[key]
    functions = [exercise.reference] + [m.function for m in exercise.mistakes]
    if exercise.layer is not None:
        functions.append(lambda module, input, hx=None: module(input, hx)[::-1])  # a wrong layer: parts swapped
    else:  # wrong in ways no listed mistake is: the sign, a scale, the notebook's case only
        reference = exercise.reference

        def changed(change):
            def function(*args):
                result = reference(*args)
                return tuple(map(change, result)) if isinstance(result, tuple) else change(result)

            return function

        functions += [changed(lambda t: -t), changed(lambda t: 1.5 * t), changed(lambda t: t[..., :1])]
        functions.append(changed(lambda t: t.detach()))  # right values, no gradient

        def first_detached(*args):  # right values, no gradient through the first float argument
            first = next(i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point())
            return reference(*args[:first], args[first].detach(), *args[first + 1 :])

        functions.append(first_detached)
    for function in functions:
        sealed_verdict = exercises.check_code(key, function)
        monkeypatch.setattr(exercises, "BY_KEY", BY_KEY)
        open_verdict = exercises.check_code(key, function)
        monkeypatch.setattr(exercises, "BY_KEY", {**BY_KEY, key: sealed[key]})
        without_expected = re.sub(r", expected -?[0-9.]+(?=\n|$)", "", open_verdict.line, flags=re.M)
        without_expected = re.sub(r"; the expected [^;\n]*?\](?=;|\.)", "", without_expected)  # rows picked
        assert (bool(sealed_verdict), sealed_verdict.line) == (bool(open_verdict), without_expected)
    assert exercises.check_code(key, exercise.reference)


def _leaves(value):
    """Every string and number held anywhere in a sealed record (tensors' entries included)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(k)
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, torch.Tensor):
        yield from value.flatten().tolist()
    else:
        yield value


def test_the_key_holds_no_answer_no_explanation_and_no_source():
    """No answer of a value exercise appears in the key, in any form; no explanation or reference code either."""
    key = answer_key.seal_all(BY_KEY, exercises.open_reference, salt="test")
    leaves = list(_leaves(key))
    texts = [leaf for leaf in leaves if isinstance(leaf, str)]
    numbers = [leaf for leaf in leaves if isinstance(leaf, (int, float)) and not isinstance(leaf, bool)]
    for name, exercise in BY_KEY.items():
        assert exercise.explanation not in texts
        assert not any(callable(leaf) for leaf in leaves)
        if isinstance(exercise, CodeExercise):  # a mistake's name and repair can spell out the right code: sealed
            assert not [m for m in exercise.mistakes if m.fix in texts or m.title in texts], name
            continue
        record = key["exercises"][name]
        answer = exercises._expected(exercise)
        assert repr(answer) not in texts and str(answer) not in texts
        for part in answer if isinstance(answer, (list, tuple)) else [answer]:
            if isinstance(part, float) and part not in (0.0, 1.0):  # a number kept whole would be there
                assert not any(abs(part - number) < 1e-6 for number in numbers), (name, part)
        answer_leaves = list(_leaves(record["reference"]))
        if isinstance(answer, (list, tuple)) and len(answer) > 1:
            assert list(answer) not in [list(v) for v in answer_leaves if isinstance(v, list)]


def test_a_digest_depends_on_the_salt():
    reference = exercises._Open((10, 1, 1), None, 1e-4)
    assert answer_key.seal(reference, 1e-4, "a")["digest"] != answer_key.seal(reference, 1e-4, "b")["digest"]


def test_a_number_within_atol_of_the_answer_is_right_at_any_offset_in_its_cell():
    """The grid is 4 × atol wide: answers anywhere in [x - atol, x + atol] match, beyond do not, wherever x falls."""
    for answer in [0.0, 0.84401, -0.76524, 0.00019999, 3.99999e-4, 123.45678]:
        sealed = answer_key.Sealed(answer_key.seal(exercises._Open(answer, None, 1e-4), 1e-4, "s"), "s", 1e-4)
        for offset in [0.0, 0.99e-4, -0.99e-4, 0.5e-4]:
            assert sealed.matches(answer + offset), (answer, offset)
        for offset in [1.05e-4, -1.05e-4, 2e-4, 5e-4, 1.0]:
            assert not sealed.matches(answer + offset), (answer, offset)


def test_the_attempt_log_records_verdicts_not_answers_and_exports_a_results_file(tmp_path, capsys):
    from helpers import attempts

    with pytest.raises(ValueError, match="short name or student id"):
        attempts.start("../elsewhere", folder=tmp_path)
    log = attempts.start("ada", folder=tmp_path)
    try:
        exercises.check("01.output_shape", None)  # no answer yet: not an attempt
        exercises.check("01.output_shape", (1, 10, 1))
        exercises.check("01.output_shape", (10, 1, 1))
        exercises.check("01.h_n_shape", (10, 1, 1))
        results = json.loads(attempts.export().read_text())
    finally:
        attempts.stop()
    assert all(set(json.loads(line)) == {"time", "key", "right"} for line in log.read_text().splitlines())
    assert [json.loads(line)["right"] for line in log.read_text().splitlines()] == [False, True, False]
    assert results["who"] == "ada" and (results["right"], results["tried"]) == (1, 2)
    assert results["exercises"]["01.output_shape"]["attempts"] == 2
    assert results["exercises"]["01.h_n_shape"] == {"attempts": 1, "right": False, "first_right": None}
    exercises.check("01.h_n_shape", (1, 1, 1))  # the log is off: nothing more is written
    assert len(log.read_text().splitlines()) == 3
    with pytest.raises(ValueError, match="start"):
        attempts.export()
