"""Reference solutions of the notebooks' exercises, one module per notebook, named after it.

notebooks/01_scalar_rnn.ipynb's exercises are in scalar_rnn.py, and so on. Each module defines
EXERCISES, a list of helpers.exercise_types records; BY_KEY gathers them all, by key. Students check
answers with helpers.exercises.check(key, answer); the solutions stay here, out of sight. A new
notebook's module is added to NOTEBOOKS below. shapes.py and terms.py build parts of exercises that
several notebooks share.
"""

from helpers.solutions import (
    batches_and_shapes,
    bidirectional,
    feature_vectors,
    gradients_through_time,
    gru,
    hidden_size,
    lstm,
    scalar_rnn,
    sequence_model,
    stacked_bidirectional,
    stacked_layers,
    text_to_predictions,
    variable_length,
)

# In the notebooks' order, 01 to 13.
NOTEBOOKS = (
    scalar_rnn,
    feature_vectors,
    hidden_size,
    bidirectional,
    stacked_layers,
    stacked_bidirectional,
    batches_and_shapes,
    variable_length,
    sequence_model,
    lstm,
    gru,
    gradients_through_time,
    text_to_predictions,
)


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
