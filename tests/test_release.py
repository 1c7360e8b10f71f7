"""tools/release.py finds every exercise cell, keeps no offer of solution(), and fills answers in where asked."""

import json

import release  # tools/release.py (pyproject.toml's pythonpath puts tools/ on the path)

from helpers.solutions import BY_KEY


def test_every_exercise_has_one_cell_and_each_notebook_names_its_answers_once():
    found = [(nb.name, *cell[1:]) for nb in release.NOTEBOOKS for cell in release.exercise_cells(nb)]
    assert sorted(key for _, _, key, _ in found) == sorted(BY_KEY)
    for notebook in release.NOTEBOOKS:
        names = [variable for _, _, _, variable in release.exercise_cells(notebook)]
        assert len(names) == len(set(names)), notebook.name


def test_the_student_notebooks_offer_no_solution_and_install_the_course_wheel():
    for notebook in release.NOTEBOOKS:
        text = release.student_notebook(notebook, "course.whl")
        assert "solution(" not in text and release.KEPT_BACK in text, notebook.name
        assert "%pip install --quiet course.whl" in text, notebook.name


def test_answers_are_filled_into_their_own_cells_only():
    notebook = release.NOTEBOOKS[0]
    text = release.student_notebook(notebook, "course.whl")
    filled = json.loads(release.filled_notebook(text, {"01.output_shape": "(10, 1, 1)", "01.step": "rnn_step = 1"}))
    sources = ["".join(cell["source"]) for cell in filled["cells"]]
    assert sum("my_output_shape = (10, 1, 1)" in s for s in sources) == 1
    assert sum("my_h_n_shape = None" in s for s in sources) == 1
    step = next(s for s in sources if "01.step" in s and "check_code" in s)
    assert step.startswith("# Write it yourself") and "rnn_step = 1\n" in step and "def rnn_step" not in step
