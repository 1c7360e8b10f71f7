"""helpers.exercises at its edges: answers at the limits of each kind, course releases, and step functions that go
wrong in ways test_exercises.py leaves out."""

import math

import numpy as np
import pytest
import torch

from helpers import answer_key, exercises
from helpers.exercise_types import CodeExercise, Exercise
from helpers.solutions import BY_KEY


def line(capsys):
    """What the check printed, without the newline."""
    return capsys.readouterr().out.rstrip("\n")


@pytest.fixture
def release(monkeypatch):
    """Seal the exercises named, as a course release does, and check against the sealed key from then on."""

    def seal(*keys):
        sealed = answer_key.load(answer_key.seal_all({k: BY_KEY[k] for k in keys}, exercises.open_reference))
        monkeypatch.setattr(exercises, "BY_KEY", {**BY_KEY, **sealed})

    return seal


@pytest.mark.parametrize("make", [torch.arange, range], ids=["tensor", "range"])
def test_a_list_answer_of_up_to_ten_thousand_positions_is_compared_as_a_list(make, capsys):
    """An integer tensor or a range is read as the list it holds, up to 10 000 entries: its length is then wrong."""
    assert not exercises.check("08.batch_sizes", make(10_000))
    assert line(capsys).endswith("The answer has 5 entries; yours has 10000. Say what each entry stands for.")


@pytest.mark.parametrize("make, what", [(torch.arange, "a Tensor of shape (10001,)"), (range, "of type range")])
def test_a_longer_answer_is_not_taken_for_a_list(make, what, capsys):
    """Beyond 10 000 entries no list answer is meant: it stays what it is, and the hint names it."""
    assert not exercises.check("08.batch_sizes", make(10_001))
    assert f"Write the answer as a list of whole numbers, e.g. [0, 1]; yours is {what}" in line(capsys)


def test_a_course_release_keeps_the_reference_function_to_itself(release, capsys):
    """solution() of a write-it-yourself exercise in a release says the answers stay with the instructor."""
    release("01.step")
    exercises.solution("01.step")
    text = capsys.readouterr().out
    assert "This copy is a course release: its reference answers stay with your instructor." in text
    assert "def " not in text and "tanh(" not in text.split("\n", 1)[1]


def test_check_code_with_an_unknown_key_suggests_the_keys_meant(capsys):
    """A misspelt key in check_code gets the same help as in check: the close keys."""
    assert not exercises.check_code("01.stp", lambda x_t, h_prev, w_ih, w_hh: None)
    assert line(capsys) == (
        "✗ there is no exercise '01.stp'. Did you mean '01.step', '11.step' or '10.step'? "
        "The notebook's cell names the right one."
    )


def test_check_code_given_a_value_for_a_step_asks_for_the_function(capsys):
    """The step's result (a number or a tensor) where the function goes: the line says to pass the function."""
    assert not exercises.check_code("01.step", 0.5)
    assert line(capsys).startswith("✗ 01.step: pass your function itself, e.g. check_code('01.step', ")


def test_a_step_reading_a_weight_from_the_notebook_is_told_so(capsys):
    """W_HH from the notebook instead of the argument w_hh: right on the notebook's case only, and the line names it."""
    ((_, (_, _, _, w_hh)), *_) = exercises._quietly(BY_KEY["01.step"].cases)
    notebook = {"torch": torch, "W_HH": w_hh.clone()}
    exec("def my_step(x_t, h_prev, w_ih, w_hh):\n    return torch.tanh(w_ih * x_t + W_HH * h_prev)\n", notebook)
    assert not exercises.check_code("01.step", notebook["my_step"])
    text = line(capsys)
    assert "Right on the notebook's case, but not on this one:" in text
    assert "  most likely: it reads `W_HH` from the notebook, not from its arguments" in text
    assert "  fix: use only the arguments the function is given." in text


def test_a_step_wrong_on_every_case_gets_no_line_of_term_checks(capsys):
    """The term-by-term line says which term is wrong; when every case fails (a sign flipped) it would say nothing."""
    reference = BY_KEY["10.step"].reference
    assert not exercises.check_code("10.step", lambda *args: tuple(-part for part in reference(*args)))
    text = line(capsys)
    assert "hint: the right size, the wrong sign" in text and "checks:" not in text


def test_a_long_unknown_key_is_cut_short_in_the_line(capsys):
    """A key pasted wrong (or a whole answer where the key goes) is shown cut to fit: at most 60 characters."""
    key = "01." + "x" * 100
    assert not exercises.check(key, 1)
    shown = line(capsys).split("there is no exercise ")[1].split(". Did you mean")[0]
    assert shown.startswith("'01.xxx") and "..." in shown and len(shown) <= 60


@pytest.mark.parametrize(
    "key, answer, said",
    [
        ("01.h_4", torch.tensor([0.8440]), "The answer is one number; yours has shape (1,)."),
        ("10.c_1", torch.tensor([[2.1424]]), "The answer is one number; yours has shape (1, 1)."),
        ("01.output_shape", torch.tensor([[10, 1, 1]]), "yours is a Tensor of shape (1, 3) and dtype torch.int64."),
        ("01.output_shape", {10, 1}, "yours is of type set."),
    ],
)
def test_a_tensor_or_container_of_another_form_is_described(key, answer, said, capsys):
    """A float tensor holding the number, a 2-D integer tensor, a set: each is named by what it is, not misread."""
    assert not exercises.check(key, answer)
    assert line(capsys).endswith(said)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_a_numpy_array_of_whole_numbers_is_read_as_a_list(dtype, capsys):
    """np.array([4, 3, 3, 1, 1]) (from .numpy(), or numpy's own arithmetic) is the list it holds."""
    assert exercises.check("08.batch_sizes", np.array([4, 3, 3, 1, 1], dtype=dtype))
    assert line(capsys) == "✓ 08.batch_sizes: right."


def test_a_numpy_array_of_truth_values_is_not_a_list_of_counts(capsys):
    """np.array([True, False]) holds truth values: it is named as such, not read as [1, 0]."""
    assert not exercises.check("08.batch_sizes", np.array([True, False, True, False, False]))
    assert "yours is a ndarray of shape (5,) and dtype bool" in line(capsys)


def test_what_a_right_step_prints_is_shown_once(capsys):
    """A print left in the step shows as the notebook's case runs it, and not again for the other cases or the
    gradient check."""
    reference = BY_KEY["01.step"].reference

    def my_step(x_t, h_prev, w_ih, w_hh):
        print("computing h_t")
        return reference(x_t, h_prev, w_ih, w_hh)

    assert exercises.check_code("01.step", my_step)
    text = capsys.readouterr().out
    assert text.count("computing h_t") == 1 and "✓ 01.step: right." in text, text


@pytest.mark.parametrize("answer", [slice(5, 10, 0), slice(5.0, 10)], ids=["step 0", "float start"])
def test_a_slice_that_picks_no_positions_is_named_as_written(answer, capsys):
    """A slice with a step of 0 or an end that is not a whole number picks nothing Python would pick: the hint asks
    for a list and shows the slice as the student wrote it."""
    assert not exercises.check("10.forget_rows", answer)
    assert line(capsys) == (
        f"✗ 10.forget_rows: not yet. Write the answer as a list of whole numbers, e.g. [0, 1]; yours is {answer!r}."
    )


def test_a_step_returning_a_python_number_is_told_to_use_torchs_functions(capsys):
    """math.tanh(float(...)) gives a float: the case shows it, and why a tensor is expected."""
    assert not exercises.check_code(
        "01.step", lambda x_t, h_prev, w_ih, w_hh: math.tanh(float(w_ih * x_t + w_hh * h_prev))
    )
    assert (
        "\n  h_t is 0.7651823438119209; it should be a tensor of shape () (math.tanh, .item() and float() give Python "
        "numbers: use torch's functions on tensors)\n"
    ) in capsys.readouterr().out


def test_a_step_returning_a_part_of_the_wrong_shape_is_told_the_shape_expected(capsys):
    """(h_t, c_t) each with an extra leading dimension: the first part's shape and the one expected."""
    reference = BY_KEY["10.step"].reference
    assert not exercises.check_code("10.step", lambda *args: tuple(part.unsqueeze(0) for part in reference(*args)))
    text = capsys.readouterr().out
    assert "\n  h_t has shape (1, 1, 1); it should be (1, 1)\n" in text
    assert "  hint: an extra dimension of size 1 ((1, 1, 1) where (1, 1) is expected): an .unsqueeze()" in text


def test_a_part_whose_shape_no_slip_explains_is_told_to_return_the_shapes_expected(capsys):
    """(1, 1, 2, 2) for (1, 1): no dimension dropped, added, reordered, broadcast or multiplied explains it."""
    assert not exercises.check_code("10.step", lambda *args: (torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2)))
    text = capsys.readouterr().out
    assert "\n  h_t has shape (1, 1, 2, 2); it should be (1, 1)\n" in text
    assert "  hint: return (h_t, c_t) as tensors of the shapes expected." in text


def test_a_truth_value_for_a_number_is_named_a_truth_value(capsys):
    """True is an int to Python, but not a number a student means: the hint says what it is."""
    assert not exercises.check("01.h_4", True)
    assert line(capsys).endswith("Write the answer as a number, e.g. 0.1234; yours is True, a truth value.")


@pytest.fixture
def tensor_exercise(monkeypatch):
    """An exercise whose answer is a float tensor (the kind a weight after an update would be)."""
    exercise = Exercise(
        key="99.weights",
        question="W_ih after one update",
        solution=lambda: torch.tensor([[0.5, -1.0], [0.25, 2.0]]),
        explanation="each entry moves against its gradient",
    )
    monkeypatch.setattr(exercises, "BY_KEY", {**BY_KEY, exercise.key: exercise})
    return exercise


@pytest.mark.parametrize(
    "answer, said",
    [
        (torch.tensor([[0.5, -1.0], [0.25, 2.0]]) + 5e-5, "✓ 99.weights: right."),
        (torch.tensor([0.5, -1.0, 0.25, 2.0]), "Your answer has shape (4,); the answer has shape (2, 2)."),
        (0.5, "Your answer has shape (); the answer has shape (2, 2)."),
        (-torch.tensor([[0.5, -1.0], [0.25, 2.0]]), "The right size, the wrong sign"),
        (torch.tensor([[0.5, -1.0], [0.25, 2.1]]), "Not within 0.0001 of the answer."),
    ],
)
def test_a_tensor_answer_is_compared_entry_by_entry_within_atol(tensor_exercise, answer, said, capsys):
    """Right within atol; otherwise the shape, the sign, or how far off, as for one number."""
    exercises.check("99.weights", answer)
    assert said in line(capsys)


def test_solution_shows_a_tensor_answer_as_a_tensor(tensor_exercise, capsys):
    """The reference tensor is printed as torch prints it, with the question and the explanation."""
    exercises.solution("99.weights")
    assert capsys.readouterr().out == (
        "99.weights: W_ih after one update\nanswer: tensor([[ 0.5000, -1.0000],\n        [ 0.2500,  2.0000]])\n"
        "each entry moves against its gradient\n"
    )


def test_a_function_that_breaks_the_check_itself_is_reported_not_raised(capsys):
    """A callable whose __name__ raises: check_code never raises at the student, it says it could not check."""
    reference = BY_KEY["01.step"].reference

    class Step:
        @property
        def __name__(self):
            raise RuntimeError("no name here")

        def __call__(self, *args):
            return reference(*args)

    verdict = exercises.check_code("01.step", Step())
    assert not verdict and line(capsys) == "✗ 01.step: could not be checked (RuntimeError: no name here)."


def test_the_line_of_checks_names_the_notebooks_case_and_numbers_the_others(capsys):
    """A GRU step that adds |b_ih|: right wherever b_ih is positive (the notebook's case), wrong on the random cases
    and with b_ih alone; every case is named in the line of checks, in order."""

    def gru_step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
        x_r, x_z, x_n = (x_t @ W_ih.T + b_ih.abs()).chunk(3, dim=-1)
        h_r, h_z, h_n = (h_prev @ W_hh.T + b_hh).chunk(3, dim=-1)
        r, z = torch.sigmoid(x_r + h_r), torch.sigmoid(x_z + h_z)
        return (1 - z) * torch.tanh(x_n + r * h_n) + z * h_prev

    assert not exercises.check_code("11.step", gru_step)
    assert (
        "\n  checks: notebook's case ✓ · case 2 ✗ · case 3 ✗ · case 4 ✗ · only W_ih acting ✓ · only W_hh acting ✓ · "
        "only b_ih acting ✗ · only b_hh acting ✓ · gate z alone ✗ · gate n alone ✗ · gate n with r shut ✗ · "
        "gates r and n ✗\n"
    ) in capsys.readouterr().out


def test_a_number_with_the_wrong_sign_copied_to_four_decimals_gets_the_sign_hint(capsys):
    """-0.8440 for h_4 = 0.84397: the printed value with its sign flipped is within atol of the negated answer."""
    assert not exercises.check("01.h_4", -0.8440)
    assert line(capsys).endswith("The right size, the wrong sign: check the signs of the weights you used.")


@pytest.mark.parametrize(
    "answer, positions",
    [(slice(4, 1, -1), "[4, 3, 2]"), (slice(None, 5), "[0, 1, 2, 3, 4]"), (slice(1, 6), "[1, 2, 3, 4, 5]")],
)
def test_a_slice_is_read_as_its_positions_even_without_the_dimensions_length(answer, positions, capsys):
    """08.batch_sizes gives no length: a slice from a given start (or from 0) to a given stop, either way, still
    names its positions, which the line spells out."""
    assert not exercises.check("08.batch_sizes", answer)
    assert line(capsys).startswith(f"✗ 08.batch_sizes: not yet. {answer!r} is {positions}.")


def test_a_step_may_use_autograd_itself_on_the_notebooks_case(capsys):
    """Notebook 12 checks a step back against autograd: a bptt_step computed with torch.autograd.grad (create_graph,
    so that it has gradients too) runs with autograd on, as the student's own cell runs it, and is right."""

    def bptt_step(delta_t, h_t, W_hh):
        h_prev = torch.zeros(h_t.shape[0], W_hh.shape[1], dtype=h_t.dtype, requires_grad=True)
        h = torch.tanh(torch.atanh(h_t) + h_prev @ W_hh.T)  # h_t again, as a function of h_{t-1} (at 0)
        (delta_prev,) = torch.autograd.grad(h, h_prev, delta_t, create_graph=True)
        return delta_prev

    assert exercises.check_code("12.bptt_step", bptt_step)
    assert line(capsys) == (
        "✓ 12.bptt_step: right. bptt_step matches the reference on 4 cases (values, dtype and gradients)."
    )


def test_a_step_that_changes_its_result_in_place_is_told_its_gradients_cannot_be_computed(capsys):
    """h_t.clamp_(-1, 1) after tanh: the values are right, but tanh's backward needs the output it changed."""

    def my_step(x_t, h_prev, w_ih, w_hh):
        h_t = torch.tanh(w_ih * x_t + w_hh * h_prev)
        return h_t.clamp_(-1, 1)

    assert not exercises.check_code("01.step", my_step)
    text = line(capsys)
    assert text.startswith("✗ 01.step: not yet. Its values match the reference on every case, but:\n")
    assert "  its gradients cannot be computed (one of the variables needed for gradient computation" in text
    assert text.endswith("): avoid changing tensors in place.")


def test_a_step_with_a_whole_number_result_is_right_when_its_numbers_are(monkeypatch, capsys):
    """A step that returns integers (the predicted tag of each position, by argmax) agrees when its entries are
    equal, and a wrong one is shown at its first wrong entry."""
    scores = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.2]])
    exercise = CodeExercise(
        key="99.tags",
        question="predicted_tags(scores): the tag of each position, from scores (positions, tags)",
        reference=lambda scores: scores.argmax(-1),
        explanation="the tag with the highest score",
        cases=lambda: [("the notebook's scores", (scores.clone(),)), ("other scores", (-scores,))],
        returns="tags",
    )
    monkeypatch.setattr(exercises, "BY_KEY", {**BY_KEY, exercise.key: exercise})

    def predicted_tags(scores):
        return scores.max(-1).indices

    assert exercises.check_code("99.tags", predicted_tags)
    assert line(capsys).startswith("✓ 99.tags: right. predicted_tags matches the reference on 2 cases")
    assert not exercises.check_code("99.tags", lambda scores: scores.argmin(-1))
    assert "first departure: tags[0]: yours 2.0000, expected 1.0000" in line(capsys)


def test_a_size_read_from_the_notebook_is_named_when_the_notebooks_case_alone_passes(capsys):
    """A whole number read from the notebook (its H) is named only when it explains the result: right on the
    notebook's case, wrong on another; a tensor read from it is named in every case."""
    namespace = {"torch": torch, "H": 50}
    exec(  # noqa: S102 - a student's cell, defined in its own namespace as a notebook would
        "def top_h_n(output, hidden_size):\n    return torch.stack([output[:, -1, :H], output[:, 0, H:]])\n",
        namespace,
    )
    assert not exercises.check_code("06.top_h_n", namespace["top_h_n"])
    out = capsys.readouterr().out
    assert "Right on the notebook's case, but not on this one" in out
    assert "most likely: it reads `H` from the notebook, not from its arguments" in out


@pytest.mark.parametrize(
    "loss, said",
    [
        (
            lambda scores, tags, lengths: torch.nn.functional.cross_entropy(
                scores[torch.arange(scores.shape[1]) < lengths[:, None]].softmax(-1),
                tags[torch.arange(scores.shape[1]) < lengths[:, None]],
            ),
            "most likely: softmax applied before cross_entropy",
        ),
        (
            lambda scores, tags, lengths: torch.nn.functional.nll_loss(
                scores[torch.arange(scores.shape[1]) < lengths[:, None]],
                tags[torch.arange(scores.shape[1]) < lengths[:, None]],
            ),
            "most likely: nll_loss on the raw scores",
        ),
    ],
    ids=["softmax first", "nll on scores"],
)
def test_the_tag_loss_names_the_log_softmax_slips(loss, said, capsys):
    assert not exercises.check_code("13.tag_loss", loss)
    assert said in capsys.readouterr().out


def test_a_step_written_with_numpy_is_told_to_use_torchs_functions(capsys):
    import numpy

    def step(x_t, h_prev, w_ih, w_hh):
        return numpy.tanh(w_ih.numpy() * x_t.numpy() + w_hh.numpy() * h_prev.numpy())

    assert not exercises.check_code("01.step", step)
    assert "numpy's functions, np.tanh and np.dot, give numpy values" in capsys.readouterr().out


def test_a_weight_reshaped_where_a_transpose_belongs_is_named(capsys):
    """x_t @ W_ih.view(input_size, hidden_size) agrees with x_t @ W_ih.T only for one row or column: named."""

    def step(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
        return torch.tanh(x_t @ W_ih.view(W_ih.shape[1], W_ih.shape[0]) + b_ih + h_prev @ W_hh.T + b_hh)

    assert not exercises.check_code("03.step_matrices", step)
    assert "`W_ih` reshaped where a transpose belongs" in capsys.readouterr().out
