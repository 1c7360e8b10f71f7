"""The shape exercises: what a recurrent module returns, and the misreadings that give a wrong shape, worded once.

Notebooks 01, 04, 05, 06, 07 and 10 ask for the shapes of output, h_n, c_n or h_0. A `Misreading`
is one wrong idea about those results: it turns the module's true shapes into the shape a student
who holds it would write, and carries the hint that answers it. `shape_exercise` runs the module
(torch is the reference), and makes the exercise and its mistakes from the misreadings it lists.
"""

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from helpers.exercise_types import Exercise, Mistake

STATES = frozenset({"h_n", "c_n", "h_0"})


@dataclass(frozen=True)
class Run:
    """A module's sizes and the shape of each thing it takes and returns, for one input."""

    num_layers: int
    num_directions: int
    hidden_size: int
    proj_size: int  # an LSTM's projected h; 0 when h is not projected
    shapes: dict  # "input", "output", "h_n", "h_0" (the shape hx must have), and "c_n" for an LSTM


def run(module, input_shape):
    """Run nn.RNN, nn.GRU or nn.LSTM `module` on zeros shaped `input_shape`: a Run."""
    with warnings.catch_warnings():  # some CPUs note once that oneDNN skips proj_size: not the student's concern
        warnings.simplefilter("ignore")
        output, hidden = module(torch.zeros(input_shape))
    h_n, c_n = hidden if isinstance(hidden, tuple) else (hidden, None)
    shapes = {"input": tuple(input_shape), "output": tuple(output.shape), "h_n": tuple(h_n.shape)}
    shapes["h_0"] = shapes["h_n"]  # torch asks hx for the shape it returns as h_n
    if c_n is not None:
        shapes["c_n"] = tuple(c_n.shape)
    directions = 2 if module.bidirectional else 1
    return Run(module.num_layers, directions, module.hidden_size, getattr(module, "proj_size", 0), shapes)


@dataclass(frozen=True)
class Misreading:
    """A wrong idea about a module's results: the shape it leads to for each result it touches, and its hint."""

    parts: frozenset  # the results it gets wrong: "input", "output", or states (STATES)
    wrong: Callable[[Run, str], tuple]  # (the run, a result's name) -> the shape the misreading gives it
    hint: str  # {name}: the result it gets wrong, where the hint names it


def _swap(shape):
    """The first two dimensions exchanged: (batch, seq_len) for (seq_len, batch), and back."""
    return (shape[1], shape[0], *shape[2:])


# About output (and the input's layout).
LAYOUT = Misreading(
    frozenset({"input", "output"}),
    lambda r, name: _swap(r.shapes[name]),
    "Batch and time are swapped: input and output are (batch, seq_len, ...) with batch_first=True, "
    "(seq_len, batch, ...) without it.",
)
ONE_DIRECTION = Misreading(
    frozenset({"output"}),
    lambda r, name: (*r.shapes[name][:2], r.shapes[name][2] // r.num_directions),
    "That is one direction: a bidirectional layer's output holds both directions side by side at each step.",
)
EVERY_LAYER = Misreading(
    frozenset({"output"}),
    lambda r, name: (*r.shapes[name][:2], r.shapes[name][2] * r.num_layers),
    "output holds only the top layer; the layers below appear only in h_n.",
)
OUTPUT_IS_H_N = Misreading(
    frozenset({"output"}),
    lambda r, name: r.shapes["h_n"],
    "That is h_n, the last step only; output has one row per step.",
)
# About the states h_n, c_n and h_0.
STATE_IS_OUTPUT = Misreading(
    STATES,
    lambda r, name: r.shapes["output"],
    "That is output, a state for every step; {name} holds only the final states, one per layer and direction.",
)
STATE_BATCH_FIRST = Misreading(
    STATES,
    lambda r, name: _swap(r.shapes[name]),
    "{name} keeps the batch in the middle, with or without batch_first=True: batch_first changes input and "
    "output only.",
)
ROW_PER_LAYER = Misreading(
    STATES,
    lambda r, name: (r.num_layers, *r.shapes[name][1:]),
    "{name} has one row per layer and direction, not one per layer.",
)
ONE_ROW = Misreading(
    STATES,
    lambda r, name: (1, *r.shapes[name][1:]),
    "One row fits a module with one layer and one direction; {name} has a row for each layer and each direction.",
)
_SIDE_BY_SIDE = (
    "{name} does not put the two directions side by side as output does: each direction's state is a row of its own."
)
SIDE_BY_SIDE_PER_LAYER = Misreading(  # one row per layer, both directions in it
    STATES, lambda r, name: (r.num_layers, r.shapes[name][1], r.num_directions * r.shapes[name][2]), _SIDE_BY_SIDE
)
SIDE_BY_SIDE_IN_EACH_ROW = Misreading(  # the rows right, and both directions in each
    STATES, lambda r, name: (*r.shapes[name][:2], r.num_directions * r.shapes[name][2]), _SIDE_BY_SIDE
)
# About an LSTM with proj_size.
UNPROJECTED = Misreading(
    frozenset({"output", "h_n"}),
    lambda r, name: (*r.shapes[name][:2], r.hidden_size * (r.num_directions if name == "output" else 1)),
    "With proj_size, h = (o * tanh(c)) W_hr^T is projected before it leaves the cell, and {name} holds that h: "
    "proj_size values for each direction, not hidden_size, which is the size of the gates and of c.",
)
C_PROJECTED = Misreading(
    frozenset({"c_n"}),
    lambda r, name: (*r.shapes[name][:2], r.proj_size),
    "proj_size shrinks h only. The cell state c is what the gates update, unit by unit: it keeps hidden_size values.",
)


def shape_exercise(key, question, module, input_shape, asked, explanation, mistakes):
    """An Exercise: the shape of `asked` ("h_n"; or a tuple of names, for their shapes in that order) for
    `module()` run on an input shaped `input_shape`.

    `mistakes` are tried in order: a Misreading gives the asked shapes with the ones it touches wrong, and its
    hint; a Mistake, for a wrong answer only this exercise expects, is kept as it is.
    """
    names = (asked,) if isinstance(asked, str) else tuple(asked)

    @functools.cache
    def result():
        return run(module(), input_shape)

    def shapes(misreading=None):
        found = [
            misreading.wrong(result(), name) if misreading and name in misreading.parts else result().shapes[name]
            for name in names
        ]
        return found[0] if isinstance(asked, str) else tuple(found)

    def made(mistake):
        if isinstance(mistake, Mistake):
            return mistake
        touched = [name for name in names if name in mistake.parts]
        if not touched:
            raise ValueError(f"{key}: a misreading about {sorted(mistake.parts)} says nothing about {names}")
        return Mistake(lambda: shapes(mistake), mistake.hint.format(name=touched[0]))

    return Exercise(
        key=key, question=question, solution=shapes, explanation=explanation, mistakes=tuple(map(made, mistakes))
    )
