"""What an exercise is: the records helpers/solutions fills in and helpers.exercises checks.

An `Exercise` asks for a value and lists the `Mistake`s it expects; a `CodeExercise` asks for a
function and lists `CodeMistake`s. They hold data only: checking lives in helpers.exercises, the
exercises themselves in helpers/solutions, one module per notebook.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import nn


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
    solution: Callable[[], Any]  # computes the reference answer (with torch where it can; see exercises._quietly)
    explanation: str  # why the solution is right, shown by `solution(key)`
    mistakes: tuple[Mistake, ...] = ()
    atol: float = 1e-4  # numbers and tensors within this count as equal (four decimals)
    # An index answer: the length of the dimension it indexes (one length per entry for a (row, column)
    # pair). It makes a whole-number answer an index: negative indices and slices then name positions
    # as Python's do, and the hints know the range. Without it a whole number is a count.
    size: int | tuple[int, ...] | None = None
    parameters_of: Callable[[], nn.Module] | None = None  # a parameter count: the module counted, for hints


@dataclass(frozen=True)
class CodeMistake:
    """A typical wrong function: what it gets wrong, and the repair."""

    title: str
    fix: str
    function: Callable  # computes what the wrong code computes, from the same arguments


@dataclass(frozen=True)
class CodeExercise:
    """A write-it-yourself exercise: the student writes a function, checked on cases against `reference`."""

    key: str
    question: str  # one line; the notebook holds the full text
    reference: Callable  # the right function; `solution(key)` prints its source
    explanation: str
    # () -> [(what the case is, the arguments)]: the step's inputs, the first as in the notebook
    cases: Callable[[], list] | None = None
    returns: str = "the result"  # what the function returns, in words: "h_t", "(h_t, c_t)"
    mistakes: tuple[CodeMistake, ...] = ()
    # a whole layer instead: () -> (module, input, hx), checked by helpers.diagnose
    layer: Callable[[], tuple] | None = None
    # a course release's record of the reference's gradients on the first case (helpers.answer_key);
    # None: helpers.exercises computes them from `reference`
    gradients: Callable | None = None


@dataclass(frozen=True)
class SealedExercise:
    """A value exercise of a course release: its answer and mistakes kept as digests (helpers.answer_key)."""

    key: str
    question: str
    reference: Any  # a helpers.answer_key.Sealed
    mistakes: tuple[tuple[Any, str], ...] = ()  # (a Sealed wrong answer, its hint)
    atol: float = 1e-4
    size: int | tuple[int, ...] | None = None
    parameter_names: tuple[str, ...] | list[str] | None = None  # a parameter count: the tensors counted, for hints
