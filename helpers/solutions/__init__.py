"""Reference solutions of the notebooks' exercises, one module per notebook (s01 for 01, ...).

Each module defines EXERCISES, a list of helpers.exercises.Exercise. Students check answers
with helpers.exercises.check(key, answer); the solutions stay here, out of sight.
"""
