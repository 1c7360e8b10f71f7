"""Wrong step functions made from the reference by misusing one argument, for any write-it-yourself step.

A student's step that equals the reference computed with one argument misused, on every case, has
that slip: an argument used where another belongs, two exchanged, one transposed or reshaped where a
transpose belongs, its sign flipped, counted twice or left out; or, in an LSTM or GRU step, its
weights' gate blocks mixed up (helpers.gate_blocks: two gates' rows exchanged, a gate given
another's). helpers.exercises tries these after the exercise's own listed mistakes (which come
first, so a listed wording wins), and a course release seals them like those. A slip that gives all
zeros on every case is left out: any function returning zeros would match it.
"""

import inspect
from itertools import permutations

import torch

from helpers import gate_blocks
from helpers.exercise_types import CodeMistake


class NotApplicableError(Exception):
    """The slip cannot happen on this case (the two arguments' shapes differ): no student's result matches it."""


def argument_mistakes(exercise):
    """CodeMistakes for every single misuse of one of the reference's tensor arguments (see the module docstring)."""
    names = list(inspect.signature(exercise.reference).parameters)
    reference = exercise.reference
    found = []
    for a, b in permutations(range(len(names)), 2):
        found.append(
            CodeMistake(
                f"`{names[b]}` used where `{names[a]}` belongs: `{names[b]}` is used twice and `{names[a]}` is never used",
                f"use `{names[a]}` there: each argument goes where the equation puts it",
                _replaced(reference, a, lambda args, b=b: args[b]),
            )
        )
    for a, b in ((a, b) for a, b in permutations(range(len(names)), 2) if a < b):
        found.append(
            CodeMistake(
                f"`{names[a]}` and `{names[b]}` exchanged: each is used where the other belongs",
                f"put `{names[a]}` and `{names[b]}` back in their own places (check the order of the arguments too)",
                _replaced(reference, a, lambda args, b=b: args[b], also=(b, a)),
            )
        )
    for a, name in enumerate(names):
        found += [
            CodeMistake(
                f"`{name}` used transposed: the result is the reference's with `{name}.T` in place of `{name}`",
                f"check the product with `{name}`: x @ {name}.T takes the dot product of x with each row of {name}",
                _replaced(reference, a, lambda args, a=a: _transposed(args[a])),
            ),
            CodeMistake(
                f"`{name}` reshaped where a transpose belongs: `{name}.view(columns, rows)` (or .reshape) keeps the "
                f"numbers in their row order, so it is not `{name}.T` (the two agree only when {name} has one row or "
                "one column)",
                f"use `{name}.T` to turn (rows, columns) into (columns, rows); view and reshape only regroup the "
                "numbers",
                _replaced(reference, a, lambda args, a=a: _viewed(args[a])),
            ),
            CodeMistake(
                f"the sign of `{name}` flipped: the result is the reference's with -{name}",
                f"`{name}` enters with a plus sign (a negative number in it already carries its own sign)",
                _replaced(reference, a, lambda args, a=a: -args[a]),
            ),
            CodeMistake(
                f"`{name}` counted twice: the result is the reference's with 2 * {name}",
                f"use `{name}` once, where the equation has it",
                _replaced(reference, a, lambda args, a=a: 2 * args[a]),
            ),
            CodeMistake(
                f"`{name}` left out: the result is the reference's with `{name}` = 0",
                f"include `{name}` where the equation has it",
                _replaced(reference, a, lambda args, a=a: torch.zeros_like(args[a])),
            ),
        ]
    cases = exercise.cases() if exercise.cases is not None else []
    found += _gate_mixups(reference, names, cases)
    return tuple(mistake for mistake in found if _tells_something(mistake, cases))


def _gate_mixups(reference, names, cases):
    """The gate-block mix-ups (helpers.gate_blocks) of a step whose arguments W_ih, W_hh (b_ih, b_hh) stack an LSTM's
    4 or a GRU's 3 gates, as the first case's W_hh shows; none for another step."""
    if "W_hh" not in names or not cases:
        return []
    W_hh = cases[0][1][names.index("W_hh")]
    if (
        not isinstance(W_hh, torch.Tensor)
        or W_hh.dim() != 2
        or W_hh.shape[0] not in (3 * W_hh.shape[1], 4 * W_hh.shape[1])
    ):
        return []
    gates = W_hh.shape[0] // W_hh.shape[1]
    mode = "LSTM" if gates == 4 else "GRU"
    where = {kind: names.index(kind) for kind in gate_blocks.KINDS if kind in names}
    return [
        CodeMistake(mixup.title, mixup.fix, _mixed(reference, where, mixup, gates))
        for mixup in gate_blocks.mixups(mode)
        if any(kind in where for kind in mixup.kinds)
    ]


def _mixed(reference, where, mixup, gates):
    """reference(*args) with the gate blocks of the arguments at `where` ({kind: position}) mixed up by `mixup`."""

    def function(*args):
        new = list(args)
        for kind in mixup.kinds:
            if kind not in where:
                continue
            value = args[where[kind]]
            if not isinstance(value, torch.Tensor) or not value.is_floating_point():
                raise NotApplicableError
            mixed = gate_blocks.mixed(value, kind, mixup, gates)
            if mixed is None:
                raise NotApplicableError
            new[where[kind]] = mixed
        return reference(*new)

    return function


def _tells_something(mistake, cases):
    """False when the slip gives all zeros on every case (any function returning zeros would match it) or cannot
    happen on any; a zero result on some cases is fine: the others tell it apart."""
    for _, args in cases:
        try:
            result = mistake.function(*(a.clone() if isinstance(a, torch.Tensor) else a for a in args))
        except Exception:  # NotApplicableError, or an error the slip itself causes on this case
            continue
        parts = result if isinstance(result, tuple) else (result,)
        if not all(isinstance(p, torch.Tensor) and not p.any() for p in parts):
            return True
    return False


def _replaced(reference, position, value, also=None):
    """reference(*args) with args[position] replaced by value(args) (and args[also[0]] by args[also[1]])."""

    def function(*args):
        new = list(args)
        for where, what in ((position, value), *(() if also is None else ((also[0], lambda a: a[also[1]]),))):
            if not isinstance(args[where], torch.Tensor) or not args[where].is_floating_point():
                raise NotApplicableError
            replacement = what(args)
            if not isinstance(replacement, torch.Tensor) or replacement.shape != args[where].shape:
                raise NotApplicableError
            new[where] = replacement
        return reference(*new)

    return function


def _viewed(value):
    """The argument that makes the reference's `value.T` come out as the student's `value.view(columns, rows)`."""
    if value.dim() != 2 or 1 in value.shape:
        raise NotApplicableError  # one row or one column: view and transpose agree
    return value.reshape(value.shape[1], value.shape[0]).T


def _transposed(value):
    if value.dim() != 2 or value.shape[0] != value.shape[1]:
        raise NotApplicableError
    return value.T
