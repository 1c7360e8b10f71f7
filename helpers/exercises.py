"""Self-checking exercises: a student's answer against a reference, with a specific hint.

A notebook's exercise cell reads

    my_shape = None
    helpers.exercises.check("07.h_n_shape", my_shape)

`check` never raises: it prints one line (right, no answer yet, or what is wrong and why) and
returns a Verdict that is true when the answer is right. The reference solutions, and the
hints for typical wrong answers, live in helpers/solutions/, one module per notebook, out of
sight while a student works; `solution(key)` prints one on request. Introduced in
notebooks/01_scalar_rnn.ipynb.
"""

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from helpers.checks import report


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer and what it says about the reasoning behind it."""

    answer: Callable[[], Any]  # computes the wrong answer, as `Exercise.solution` computes the right one
    hint: str  # shown when a student's answer equals this one


@dataclass(frozen=True)
class Exercise:
    """One exercise: its key ("07.h_n_shape"), question, solution and the mistakes it expects."""

    key: str  # notebook number, a dot, a name
    question: str  # one line; the notebook holds the full text
    solution: Callable[[], Any]  # computes the reference answer (with torch where it can; see _quietly)
    explanation: str  # why the solution is right, shown by `solution(key)`
    mistakes: tuple[Mistake, ...] = ()
    atol: float = 1e-4  # numbers and tensors within this count as equal (four decimals)


def check(key, answer):
    """Print whether `answer` solves exercise `key`, with a hint if not; return a Verdict."""
    try:
        exercise = _exercises()[key]
    except KeyError:
        return report(False, f"✗ there is no exercise {key!r}; the notebook's cell names the right one.")
    if answer is None:
        return report(False, f"… {key}: no answer yet. Replace None with your answer and run the cell again.")
    if isinstance(answer, slice) and answer.stop is not None:  # rows as a slice: the rows it picks
        answer = list(range(answer.start or 0, answer.stop, answer.step or 1))
    try:
        expected = _quietly(exercise.solution)
        if _same(answer, expected, exercise.atol):
            return report(True, f"✓ {key}: right.")
        for mistake in exercise.mistakes:
            if _same(answer, _quietly(mistake.answer), exercise.atol):
                return report(False, f"✗ {key}: not yet. {mistake.hint}")
        return report(False, f"✗ {key}: not yet. {_generic_hint(answer, expected, exercise.atol)}")
    except Exception as error:  # a wrong answer must never crash the student's kernel
        return report(False, f"✗ {key}: could not check {answer!r} ({type(error).__name__}: {error}).")


def solution(key):
    """Print the reference answer of exercise `key` and why it is right."""
    exercise = _exercises()[key]
    print(f"{key}: {exercise.question}\nanswer: {_show(_quietly(exercise.solution))}\n{exercise.explanation}")


def _quietly(compute):
    """compute(), leaving the student's random state as it was.

    Solutions build layers (which draw random weights) and may seed their own draws; the fork
    restores torch's CPU generator afterwards, so checking an answer never changes what the
    student's next random draw gives.
    """
    with torch.random.fork_rng(devices=[]):
        return compute()


def exercises():
    """Every registered exercise, by key."""
    return dict(_exercises())


def _exercises():
    """Collect EXERCISES from each module of helpers.solutions (once)."""
    if not _REGISTRY:
        import helpers.solutions as package

        for info in pkgutil.iter_modules(package.__path__):
            module = _quietly(lambda name=info.name: importlib.import_module(f"{package.__name__}.{name}"))
            for exercise in module.EXERCISES:
                if exercise.key in _REGISTRY:
                    raise ValueError(f"two exercises share the key {exercise.key!r}")
                _REGISTRY[exercise.key] = exercise
    return _REGISTRY


_REGISTRY = {}


def _is_shape(value):
    return isinstance(value, (tuple, list, torch.Size)) and all(isinstance(v, int) for v in value)


def _same(answer, expected, atol):
    """True when `answer` equals `expected`: shapes exactly, numbers and tensors within atol."""
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.strip().lower()
    if _is_shape(expected):
        return _is_shape(answer) and tuple(answer) == tuple(expected)
    if isinstance(expected, (tuple, list)):
        return (
            isinstance(answer, (tuple, list))
            and len(answer) == len(expected)
            and all(_same(a, e, atol) for a, e in zip(answer, expected, strict=True))
        )
    if isinstance(answer, (str, bool)) or answer is None:
        return False
    if isinstance(expected, int) and not isinstance(expected, bool):  # an index or a count: exact
        return isinstance(answer, (int, float)) and not isinstance(answer, bool) and answer == expected
    answer, expected = torch.as_tensor(answer).detach().double(), torch.as_tensor(expected).detach().double()
    return answer.shape == expected.shape and bool(torch.allclose(answer, expected, rtol=0, atol=atol))


def _generic_hint(answer, expected, atol):
    """What is wrong with an answer no listed mistake explains, without giving the answer away."""
    if isinstance(expected, (tuple, list)) and not _is_shape(expected):  # several answers in one
        if not isinstance(answer, (tuple, list)) or len(answer) != len(expected):
            return f"Give {len(expected)} answers, in the order the question asks for them, as a tuple."
        for number, (part, right) in enumerate(zip(answer, expected, strict=True), start=1):
            if not _same(part, right, atol):
                return f"Answer {number} of {len(expected)} is off. {_generic_hint(part, right, atol)}"
    if _is_shape(expected):
        if not _is_shape(answer):
            return f"Write a shape as a tuple of whole numbers, e.g. {tuple(range(2, 2 + len(expected)))}."
        if len(answer) != len(expected):
            return f"This shape has {len(expected)} dimensions; yours has {len(answer)}. Name each dimension first."
        if sorted(answer) == sorted(expected):
            return "The right sizes, in the wrong order: which dimension comes first?"
        return "Not this shape. Write down what each dimension counts, then its size."
    if isinstance(expected, str):
        return "Not this one. Reread the question, and run the cell that shows the effect."
    if isinstance(answer, str):
        return "Write the answer as a number or a tuple of numbers, not as text in quotes."
    if isinstance(expected, int):
        return "Not this index. Count from 0, and say what each position counts before you pick one."
    answer_tensor, expected_tensor = torch.as_tensor(answer).double(), torch.as_tensor(expected).double()
    if answer_tensor.shape != expected_tensor.shape:
        return (
            f"Your answer has shape {tuple(answer_tensor.shape)}; the answer has shape {tuple(expected_tensor.shape)}."
        )
    if torch.allclose(answer_tensor, -expected_tensor, rtol=0, atol=atol):
        return "The right size, the wrong sign: check the signs of the weights you used."
    return f"Not within {atol:g} of the answer. Redo the computation one step at a time."


def _show(value):
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, torch.Tensor):
        return str(value.detach())
    return repr(value)
