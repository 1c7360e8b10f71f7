"""Reference solutions of the notebooks' exercises, one module per notebook (s01 for 01, ...).

Each module defines EXERCISES, a list of helpers.exercise_types records; BY_KEY gathers them all,
by key. Students check answers with helpers.exercises.check(key, answer); the solutions stay
here, out of sight. A new notebook's module is added to NOTEBOOKS below.
"""

from helpers.solutions import s01, s02, s03, s04, s05, s06, s07, s08, s09, s10, s11, s12, s13

NOTEBOOKS = (s01, s02, s03, s04, s05, s06, s07, s08, s09, s10, s11, s12, s13)


def _by_key(modules):
    """Every exercise of `modules`, by key ('07.h_n_shape'); a key used twice is a mistake in the solutions."""
    found = {}
    for module in modules:
        for exercise in module.EXERCISES:
            if exercise.key in found:
                raise ValueError(f"two exercises share the key {exercise.key!r}")
            found[exercise.key] = exercise
    return found


BY_KEY = _by_key(NOTEBOOKS)
