"""Self-checking exercises: a student's answer against a reference, with a specific hint.

A notebook's exercise cell reads

    my_shape = None
    helpers.exercises.check("07.h_n_shape", my_shape)

`check` never raises: it prints one line (right, no answer yet, or what is wrong and why) and
returns a Verdict that is true when the answer is right. The reference solutions, and the
hints for typical wrong answers, live in helpers/solutions/, one module per notebook, out of
sight while a student works; `solution(key)` prints one on request. Introduced in
notebooks/01_scalar_rnn.ipynb.

The kind of answer an exercise asks for follows from its solution, and decides how an answer
is compared and which hint a wrong one gets:

- text ("C"): compared without case or surrounding spaces;
- a whole number (640): a count, or an index when the exercise gives `size`, the length of
  the dimension it indexes: then -1 names the last position, as in Python;
- a list of whole numbers ([4, 5], or an integer tensor): counts, or indices when `size` is
  given; a slice such as slice(-2, None) stands for the positions it picks;
- a shape, a tuple of whole numbers ((10, 1, 1));
- several answers, a tuple of the kinds above;
- a number or a float tensor, equal within `atol`.

Tensors and numpy values count as the plain Python they hold: torch.tensor(640) is 640.

A "write it yourself" exercise (a `CodeExercise`) asks for a function instead, checked with
`check_code(key, fn)`: a whole layer goes to `helpers.diagnose`; a single step is run on the
exercise's cases and compared with its reference, and a wrong one is matched against the
exercise's named mistakes, with the same ✓ / not written yet / where and why feedback.
"""

import difflib
import functools
import inspect
import reprlib
import textwrap

import torch

from helpers import answer_key, argument_slips, attempts, diagnosis, error_hints, gates, provenance
from helpers.checks import report
from helpers.exercise_types import CodeExercise, Exercise, SealedExercise
from helpers.sandbox import Outcome, Sandbox, TooSlow, argument_names, changes, one_thread, raised, too_slow
from helpers.shape_slips import shape_slip
from helpers.solutions import BY_KEY

LONGEST_LIST = 10_000  # a longer integer tensor stays a tensor: no list answer is that long


def check(key, answer):
    """Print whether `answer` solves exercise `key`, with a hint if not; return a Verdict."""
    return _logged(key, _check(key, answer))


def check_code(key, fn):
    """Print whether the function `fn` solves write-it-yourself exercise `key`, and if not where and why; return a Verdict."""
    return _logged(key, _check_code(key, fn))


def _logged(key, verdict):
    """`verdict`, after adding it to the student's attempt log when they turned it on (helpers.attempts)."""
    if not str(getattr(verdict, "line", "")).startswith("…"):  # "… no answer yet" is not an attempt
        attempts.record(key, verdict)
    return verdict


def _check(key, answer):
    exercise = _exercise(key)
    if exercise is None:
        return report(False, _no_such_exercise(key))
    if isinstance(exercise, CodeExercise):
        return report(
            False, f"✗ {key} asks for a function: check it with helpers.exercises.check_code({key!r}, your_function)."
        )
    if answer is None:
        return report(False, f"… {key}: no answer yet. Replace None with your answer and run the cell again.")
    try:
        return report(*_verdict(exercise, answer))
    except Exception as error:  # a wrong answer must never crash the student's kernel
        return report(False, f"✗ {key}: could not check {_brief(answer)} ({type(error).__name__}: {error}).")


def _check_code(key, fn):
    exercise = _exercise(key)
    if exercise is None:
        return report(False, _no_such_exercise(key))
    if not isinstance(exercise, CodeExercise):
        return report(False, f"✗ {key} asks for a value: check it with helpers.exercises.check({key!r}, your_answer).")
    if exercise.layer is not None:
        module, input, hx = _quietly(exercise.layer)
        return diagnosis.diagnose(fn, module, input, hx, name=key)
    try:
        with one_thread():
            return report(*_examine(exercise, fn))
    except Exception as error:  # a student's function must never crash the kernel
        return report(False, f"✗ {key}: could not be checked ({type(error).__name__}: {error}).")


def _examine(exercise, fn):
    """(right, the lines to print) for a student's step function: run on every case, compared, its mistake named."""
    key, name = exercise.key, getattr(fn, "__name__", "your function")
    if not callable(fn):
        return (
            False,
            f"✗ {key}: pass your function itself, e.g. check_code({key!r}, {name}); got a {type(fn).__name__}.",
        )
    cases = _quietly(exercise.cases)
    sandbox = Sandbox()
    with torch.random.fork_rng(devices=[]):
        outcomes = []
        for i, (_, args) in enumerate(cases):  # the first as the student's own cell runs it: autograd on
            outcomes.append(sandbox.run(fn, args, quiet=i > 0, grad=True if i == 0 else None))
        expected = [Outcome(exercise.reference(*_copies(args))) for _, args in cases]
        if outcomes[0].error is None and outcomes[0].value is None:
            return (
                False,
                f"… {key}: not written yet ({name} returns None). Write it, return {exercise.returns}, and run the cell again.",
            )
        failing = [i for i, (o, e) in enumerate(zip(outcomes, expected)) if not _agrees(o, e)]
        changed, notes = changes(outcomes)
        also = [f"  also: {c}." for c in changed] + [f"  {n}." for n in notes]
        if not failing:
            dtype = _dtype_problem(outcomes, cases)
            gradient = None if dtype or changed else _gradient_problem(exercise, fn, cases[0][1], sandbox)
            if dtype is None and gradient is None and not changed:
                checked = (
                    "values, dtype and gradients" if _reference_gradients(exercise, cases[0][1]) else "values and dtype"
                )
                return True, "\n".join(
                    [f"✓ {key}: right. {name} matches the reference on {len(cases)} cases ({checked})."] + also
                )
            lines = [f"✗ {key}: not yet. Its values match the reference on every case, but:"]
            problems = [p for p in (dtype, gradient) if p]
            return False, "\n".join(
                lines + [f"  {p.rstrip('.')}." for p in problems] + [line.replace("also: ", "") for line in also]
            )
        first = failing[0]
        lines = [f"✗ {key}: not yet." + ("" if first == 0 else " Right on the notebook's case, but not on this one:")]
        lines.append(f"  case: {cases[first][0]}")
        lines.append(f"  {_step_departure(outcomes[first], expected[first].value, exercise.returns, sandbox)}")
        if isinstance(outcomes[first].error, TooSlow):
            return False, "\n".join(lines)
        for mistake in (*exercise.mistakes, *_argument_mistakes(exercise)):
            wrong = [_mistake_outcome(mistake.function, args) for _, args in cases]
            if all(_agrees(o, w) for o, w in zip(outcomes, wrong)):
                title, fix = mistake.title, mistake.fix
                if isinstance(title, answer_key.SealedText):  # opened by the student's own results
                    sealed = [w.value for w in wrong]
                    title, fix = title.opened(sealed, outcomes), fix.opened(sealed, outcomes)
                return False, "\n".join([*lines, f"  most likely: {title}.", f"  fix: {fix}.", *also])
    free = diagnosis.notebook_names(fn, numbers=first != 0)
    if free:
        names = ", ".join(f"`{n}`" for n in free)
        return False, "\n".join(
            [
                *lines,
                f"  most likely: it reads {names} from the notebook, not from its arguments, so on another case it "
                "still computes with the notebook's.",
                "  fix: use only the arguments the function is given.",
                *also,
            ]
        )
    hints = [h for h in (_term_hint(cases, failing), _gate_hint(cases, failing)) if h]
    hints = hints or [_step_hint(outcomes[first], expected[first].value, exercise, first)]
    picked = _picked_hint(exercise, fn, cases, outcomes, expected, failing)
    if picked:  # where the rows came from says more than a general hint, less than one about the shape
        mine, (shape, *_) = outcomes[first].value, _expected_parts(expected[first].value)[1]
        hints = [*(hints if isinstance(mine, torch.Tensor) and tuple(mine.shape) != shape else []), picked]
    checks = []
    if any(c[0].startswith(("only ", "gate")) for c in cases) and len(failing) < len(cases):  # which part is wrong
        marks = [f"{_case_label(i, c[0])} {'✗' if i in failing else '✓'}" for i, c in enumerate(cases)]
        checks = ["  checks: " + " · ".join(marks)]
    return False, "\n".join([*lines, *[f"  hint: {h}" for h in hints], *checks, *also])


@functools.cache
def _argument_mistakes(exercise):
    """The slips of one argument (helpers/argument_slips.py), tried after the listed mistakes; none for a sealed
    exercise, whose key holds them among its mistakes."""
    if isinstance(exercise.reference, answer_key.Recorded):
        return ()
    return argument_slips.argument_mistakes(exercise)


def _reference_gradients(exercise, args):
    """The reference's gradients on a case (an Outcome whose value is None when its result carries none)."""
    if exercise.gradients is not None:  # a course release: sealed
        return Outcome(exercise.gradients(*_copies(args)))
    if isinstance(exercise.reference, answer_key.Recorded):
        return Outcome(None)
    return Outcome(diagnosis.gradients(exercise.reference, _copies(args)))


def _gradient_problem(exercise, fn, args, sandbox):
    """What is wrong with the gradients through a step function whose values are right, in words; None when right.

    The function runs on the notebook's case with every float argument requiring grad, as a layer's
    weights do in training; one number made of its result (diagnosis.gradients) is differentiated
    with respect to each of them and compared with the reference's.
    """
    want = _reference_gradients(exercise, args).value
    if want is None:
        return None
    leaves = tuple(diagnosis.needing_grad(a) if isinstance(a, torch.Tensor) else a for a in args)
    outcome = sandbox.run(fn, leaves, quiet=True, grad=True)
    if isinstance(outcome.error, TooSlow):
        return None  # the values were checked in time; the time left was too short for this run
    names = [
        n for n, a in zip(argument_names(fn, len(args)), args) if isinstance(a, torch.Tensor) and a.is_floating_point()
    ]
    if outcome.error is not None:
        return (
            "when its arguments require grad, as a layer's weights do in training, it "
            f"{raised(outcome).rstrip('.')}.\n  Change no argument in place (W.mul_(2), x += 1, x[0] = ...): make new tensors"
        )
    try:
        mine = diagnosis.gradients_through(outcome.value, outcome.arguments)
    except RuntimeError as error:  # an in-place change that autograd needed undone
        return f"its gradients cannot be computed ({str(error).splitlines()[0]}): avoid changing tensors in place"
    if mine is None:
        return (
            "its result carries no gradient (requires_grad is False): it was computed from .data, .detach(), "
            ".item(), .numpy(), torch.tensor(...) of values, or inside torch.no_grad(), so training could not "
            "learn through it. Compute it with torch operations on the arguments"
        )
    wants = [None] * len(mine) if isinstance(want, answer_key.SealedOutcome) else list(want)
    for number, (name, grad, theirs) in enumerate(zip(names, mine, wants, strict=True)):
        if _first_departure(grad, want, number, theirs) is not None:
            return (
                f"its gradient with respect to `{name}` is wrong, so training would go astray: something in the "
                f"path from `{name}` to the result is detached (.detach(), .data, torch.no_grad()) or rebuilt from "
                "plain numbers"
            )
    return None


def _picked_hint(exercise, fn, cases, outcomes, expected, failing):
    """Where the student's rows were copied from in the case's first tensor argument (helpers.provenance), on the
    failing case where that says the most; None when the result is not a pick of that argument."""
    if "," in exercise.returns:
        return None
    best = None
    for i in failing:
        args, mine, want = cases[i][1], outcomes[i].value, expected[i].value
        names = argument_names(fn, len(args))
        sources = [(n, a) for n, a in zip(names, args) if isinstance(a, torch.Tensor) and a.dim() >= 2]
        shape = _expected_parts(want)[1][0]
        if not sources or not isinstance(mine, torch.Tensor) or mine.dim() < 1 or mine.shape[-1:] != shape[-1:]:
            continue
        differ = None
        if isinstance(want, answer_key.SealedOutcome):  # its entries say which rows depart, not what they should be
            differ = {index[:-1] for index in want.departures(0, mine)} if tuple(mine.shape) == shape else None
            want = None
        lines = provenance.copied_from(mine, want, sources[0][1], (exercise.returns, sources[0][0]), differ=differ)
        shared = provenance.pattern(mine, want, sources[0][1], (exercise.returns, sources[0][0]))
        if lines and shared:
            lines = [shared.removesuffix("."), *lines]
        if lines:
            unclear = sum("several places" in line or "zeros, like" in line for line in lines)
            if best is None or unclear < best[0]:
                best = (unclear, i, lines)
    if best is None:
        return None
    _, i, lines = best
    where = "" if i == failing[0] else f"on {_case_label(i, cases[i][0])} ({cases[i][0]}): "
    return where + "; ".join(lines) + "."


def _term_hint(cases, failing):
    """'only b_hh acting departs, every other term alone is right: ...' when some term cases fail and others pass; else None."""
    terms = [(i, _case_label(i, c[0]).removeprefix("only ").removesuffix(" acting")) for i, c in enumerate(cases)]
    terms = [(i, term) for i, term in terms if cases[i][0].startswith("only ")]
    return diagnosis.term_hint([t for i, t in terms if i in failing], len(terms))


def _gate_hint(cases, failing):
    """Which gate to look at first (helpers.gates.hint) when some gate cases fail and others pass; else None."""
    labels = [(i, _case_label(i, c[0])) for i, c in enumerate(cases) if c[0].startswith("gate")]
    wrong = [label for i, label in labels if i in failing]
    return gates.hint(wrong, [label for i, label in labels if i not in failing], "the gate cases below")


def _case_label(number, description):
    """A case in two or three words, for the line of checks: 'notebook's case', 'case 2', 'only W_hh acting',
    'gate f alone'."""
    if description.startswith(("only ", "gate")):
        return description.split(":")[0]
    return "notebook's case" if number == 0 else f"case {number + 1}"


def _copies(args):
    """Copies of a case's arguments, for the reference and the expected mistakes (never the student's code)."""
    return tuple(arg.clone() if isinstance(arg, torch.Tensor) else arg for arg in args)


def _mistake_outcome(function, args):
    """What an expected mistake computes on a case, as an Outcome (the error it raises, if it does)."""
    try:
        return Outcome(function(*_copies(args)))
    except Exception as error:
        return Outcome(error=error)


def _dtype_problem(outcomes, cases):
    """'h_t is float64 where its input is float32' when a right result comes back in another dtype than the case's; else None."""
    for outcome, (_, args) in zip(outcomes, cases):
        floats = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
        got = outcome.value if isinstance(outcome.value, (tuple, list)) else (outcome.value,)
        for part in got:
            if floats and isinstance(part, torch.Tensor) and part.is_floating_point() and part.dtype not in floats:
                return (
                    f"it returns {part.dtype} where its arguments are {floats[0]}: something makes another dtype "
                    "(torch.tensor(...) of Python numbers, .double(), dtype=...); keep the arguments' dtype"
                )
    return None


def _agrees(outcome, expected):
    """True when a student's outcome agrees with an expected one: an open result, or a sealed one (helpers.answer_key)."""
    if isinstance(expected.value, answer_key.SealedOutcome):
        return expected.value.agrees(outcome)
    return diagnosis.same_outcome(outcome, expected)


def _expected_parts(want):
    """(the expected result's parts, their shapes, whether it is a tuple): open tensors or a SealedOutcome's record."""
    if isinstance(want, answer_key.SealedOutcome):
        return [None] * len(want.shapes), want.shapes, want.is_tuple
    parts = want if isinstance(want, tuple) else (want,)
    return list(parts), [tuple(p.shape) for p in parts], isinstance(want, tuple)


def _first_departure(mine, want, number, theirs):
    """The index of the first entry of `mine` departing from the expected part `number` (None if none)."""
    if isinstance(want, answer_key.SealedOutcome):
        return want.first_departure(number, mine)
    return diagnosis.first_difference(mine, theirs)


def _step_hint(outcome, want, exercise, case):
    """What to look at when no listed mistake explains a step function's result on case number `case`."""
    explained = None if outcome.error is None else error_hints.explain(outcome.error, outcome.where)
    if outcome.error is not None and case != 0:
        return "it works on the notebook's case but raises on this one: " + (
            explained or "check that nothing depends on that case's sizes."
        )
    if outcome.error is not None:
        return explained or f"the message above says what went wrong{', at the line shown' if outcome.where else ''}."
    got = outcome.value
    wants, shapes, is_tuple = _expected_parts(want)
    gots = got if isinstance(got, (tuple, list)) and is_tuple else (got,)
    if len(gots) != len(wants) or not all(
        isinstance(g, torch.Tensor) and tuple(g.shape) == s for g, s in zip(gots, shapes)
    ):
        slips = [
            shape_slip(g.shape, s)
            for g, s in zip(gots, shapes)
            if isinstance(g, torch.Tensor) and len(gots) == len(wants)
        ]
        if any(slips):
            return f"{next(slip for slip in slips if slip)}."
        form = "as tensors of the shapes expected" if is_tuple else "as one tensor of the shape expected"
        return f"return {exercise.returns} {form}."
    if all(_first_departure(-g, want, n, w) is None for n, (g, w) in enumerate(zip(gots, wants))):
        return "the right size, the wrong sign: check the signs in your formula."
    if case != 0:
        return "it matches on the notebook's case only: check that nothing depends on that case's numbers or sizes."
    return (
        "the result already differs on the notebook's case: compare yours with the expected value, one part at a time."
    )


def _step_departure(outcome, want, returns, sandbox=None):
    """Where a step function's result departs from the reference's, in one line."""
    if isinstance(outcome.error, TooSlow):
        return too_slow(outcome, sandbox)
    if outcome.error is not None:
        return raised(outcome)
    got = outcome.value
    names = [part.strip() for part in returns.strip("()").split(",")]
    wants, shapes, is_tuple = _expected_parts(want)
    if is_tuple:
        if not isinstance(got, (tuple, list)) or len(got) != len(wants):
            return f"it returns {_describe(got)}; return {returns}"
        parts = list(got)
    else:
        parts = [got]
    for number, (part, mine, theirs, shape) in enumerate(zip(names, parts, wants, shapes)):
        if not isinstance(mine, torch.Tensor):
            number = isinstance(mine, (int, float)) and not isinstance(mine, bool)
            why = " (math.tanh, .item() and float() give Python numbers: use torch's functions on tensors)"
            if type(mine).__module__.split(".")[0] == "numpy":
                number = True
                why = (
                    " (numpy's functions, np.tanh and np.dot, give numpy values, and autograd cannot follow them: use "
                    "torch's, torch.tanh and @, on the tensors)"
                )
            return f"{part} is {_describe(mine)}; it should be a tensor of shape {shape}" + (why if number else "")
        if tuple(mine.shape) != shape:
            return f"{part} has shape {tuple(mine.shape)}; it should be {shape}"
        index = _first_departure(mine, want, number, theirs)
        if index is not None:
            at = f"[{', '.join(map(str, index))}]" if index else ""
            expected = "" if theirs is None else f", expected {theirs[index].item():.4f}"  # a sealed key cannot say
            return f"first departure: {part}{at}: yours {mine[index].item():.4f}{expected}"
    return "the values differ"


def solution(key):
    """Print the reference answer of exercise `key`, in the form the exercise asks for, and why it is right."""
    exercise = _exercise(key)
    if exercise is None:
        print(_no_such_exercise(key))
        return
    if isinstance(exercise, SealedExercise) or isinstance(exercise, CodeExercise) and _sealed_code(exercise):
        print(
            f"{key}: {exercise.question}\nThis copy is a course release: its reference answers stay with your "
            "instructor. check() still says whether an answer is right, and what to look at when it is not."
        )
        return
    if isinstance(exercise, CodeExercise):
        source = textwrap.dedent(inspect.getsource(exercise.reference)).strip()
        print(f"{key}: {exercise.question}\n{source}\n{exercise.explanation}")
        return
    print(f"{key}: {exercise.question}\nanswer: {_show(_expected(exercise))}\n{exercise.explanation}")


def _sealed_code(exercise):
    """True for a write-it-yourself exercise of a course release, known by its cases (helpers.answer_key)."""
    return exercise.reference is None or isinstance(exercise.reference, answer_key.Recorded)


def exercises():
    """Every exercise, by key."""
    return dict(BY_KEY)


def _quietly(compute):
    """compute(), leaving the student's random state as it was.

    Solutions build layers (which draw random weights) and may seed their own draws; the fork
    restores torch's CPU generator afterwards, so checking an answer never changes what the
    student's next random draw gives.
    """
    with torch.random.fork_rng(devices=[]):
        return compute()


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = 60


def _brief(value):
    """repr(value) cut short to fit a line of feedback; never raises (an int of 5000 digits has no repr)."""
    try:
        return _BRIEF.repr(value)
    except Exception:
        return f"a {type(value).__name__}"


def _exercise(key):
    """The exercise named `key`, or None."""
    return BY_KEY.get(key) if isinstance(key, str) else None


def _no_such_exercise(key):
    """The line for a key that names no exercise, with the keys it may have meant."""
    keys = list(BY_KEY)
    close = difflib.get_close_matches(key, keys, n=3) if isinstance(key, str) else []
    if not close and isinstance(key, str):  # no similar spelling: the same notebook's exercises
        close = [k for k in keys if k.split(".")[0] == key.split(".")[0]]
    meant = f" Did you mean {_listed([repr(k) for k in close], 'or')}?" if close else " Keys look like '01.h_4'."
    return f"✗ there is no exercise {_brief(key)}.{meant} The notebook's cell names the right one."


def _verdict(exercise, answer):
    """(right, the line to print) for a student's answer to `exercise`."""
    reference, mistakes, names = open_reference(exercise) if isinstance(exercise, Exercise) else _sealed(exercise)
    plain = _plain(answer)
    given = _positions(plain, reference, exercise)
    key, note = exercise.key, _respelled(plain, given, exercise.size)
    if _same(given, reference, exercise):
        return True, f"✓ {key}: right.{note}"
    for mistake, hint in mistakes:
        if _same(given, mistake, exercise):
            return False, f"✗ {key}: not yet.{note} {hint}"
    return False, f"✗ {key}: not yet.{note} {_generic_hint(given, reference, exercise, names)}"


def _expected(exercise):
    """The reference answer, as plain Python (an integer tensor of rows becomes a list)."""
    return _plain(_quietly(exercise.solution))


def open_reference(exercise):
    """(the reference, [(each expected mistake, its hint)], the parameter names a count counts) of an open exercise."""
    reference = _Open(_expected(exercise), exercise.size, exercise.atol)
    mistakes = [
        (
            _Open(_positions(_plain(_quietly(mistake.answer)), reference, exercise), exercise.size, exercise.atol),
            mistake.hint,
        )
        for mistake in exercise.mistakes
    ]
    names = None
    if exercise.parameters_of is not None:
        names = [name for name, _ in _quietly(exercise.parameters_of).named_parameters()]
    return reference, mistakes, names


def _sealed(exercise):
    """The same for a sealed exercise of a course release (helpers.answer_key)."""
    names = None if exercise.parameter_names is None else list(exercise.parameter_names)
    return exercise.reference, list(exercise.mistakes), names


class _Open:
    """A reference answer in the open: what the checks and hints ask of it (helpers.answer_key.Sealed asks the same of digests).

    The methods take an answer already found to be of the reference's kind (see _form_problem).
    """

    def __init__(self, value, size, atol):
        self.value, self.size, self.atol = value, size, atol
        self.kind = _kind(value, size)

    @property
    def length(self):
        return len(self.value)

    @property
    def number_shape(self):
        return tuple(_number_tensor(self.value).shape)

    def parts(self):
        return [_Open(part, self.size, self.atol) for part in self.value]

    def matches(self, given):
        if self.kind == "text":
            return given.strip().lower() == self.value.strip().lower()
        if self.kind == "number":
            given, expected = _number_tensor(given), _number_tensor(self.value)
            return given.shape == expected.shape and bool(torch.allclose(given, expected, rtol=0, atol=self.atol))
        if self.kind == "whole":
            return given == self.value
        return tuple(given) == tuple(self.value)

    def negated_matches(self, given):
        return bool(torch.allclose(_number_tensor(given), -_number_tensor(self.value), rtol=0, atol=self.atol))

    def sorted_matches(self, given):
        return sorted(given) == sorted(self.value)

    def shift(self, given):
        shifts = {g - e for g, e in zip(given, self.value, strict=True)}
        return (True, shifts.pop()) if len(shifts) == 1 else (False, None)

    def wrong_entries(self, given):
        return [index for index, (g, e) in enumerate(zip(given, self.value, strict=True)) if g != e]

    def direction(self, given):
        return "many" if given > self.value else "few"


# What an answer is: plain Python, and the positions an index answer names.


def _plain(value):
    """`value` as the plain Python that torch or numpy holds in it: a number, or a list of whole numbers.

    A 0-dim tensor or numpy scalar becomes its number, a 1-dim integer tensor or array a list (up
    to LONGEST_LIST entries), a range a list; lists and tuples are converted entry by entry. Float
    tensors stay tensors.
    """
    if isinstance(value, range) and len(value) <= LONGEST_LIST:
        return list(value)
    if isinstance(value, (list, tuple)):  # a torch.Size too
        return (list if isinstance(value, list) else tuple)(_plain(v) for v in value)
    if not (hasattr(value, "tolist") and hasattr(value, "ndim")):
        return value
    if value.ndim == 0 or (value.ndim == 1 and _is_integer_dtype(value.dtype) and len(value) <= LONGEST_LIST):
        return value.tolist()
    return value


def _is_integer_dtype(dtype):
    """True for torch's and numpy's integer dtypes (not bool)."""
    if isinstance(dtype, torch.dtype):
        return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)
    return getattr(dtype, "kind", "") in ("i", "u")


def _positions(value, reference, exercise):
    """An index answer as the positions it names: a slice as a list, negative indices counted from 0.

    Other answers come back unchanged, as the same object.
    """
    if isinstance(value, slice) and reference.kind == "wholes":
        value = _picked(value, exercise.size if isinstance(exercise.size, int) else None)
    return _from_start(value, exercise.size)


def _picked(part, size):
    """The positions slice `part` picks from a dimension of length `size`, as a list.

    Without a size, only a slice whose positions do not depend on it (both ends given and not
    negative) is turned into a list; any other comes back unchanged.
    """
    ends = (part.start, part.stop, part.step)
    if not all(end is None or _is_int(end) for end in ends) or part.step == 0:
        return part
    if size is None:
        start, stop, step = part.start or 0, part.stop, part.step or 1
        if stop is None or start < 0 or stop < 0 or (part.start is None and step < 0):
            return part
        size = max(start, stop) + 1
    picked = range(*part.indices(size))
    return list(picked) if len(picked) <= LONGEST_LIST else part


def _from_start(value, size):
    """An index, or a list or tuple of indices, with each negative index replaced by its position from 0.

    Each index counts in a dimension of length `size` (the n-th of a tuple for the n-th index);
    an index out of range stays as it is, and so does an answer that holds no negative index.
    """
    if size is None:
        return value
    if _is_int(value) and isinstance(size, int):
        return value + size if -size <= value < 0 else value
    if isinstance(value, (list, tuple)) and all(_is_int(v) for v in value):
        sizes = _sizes(size, len(value))
        if len(sizes) == len(value) and any(-s <= v < 0 for v, s in zip(value, sizes, strict=True)):
            return type(value)(_from_start(v, s) for v, s in zip(value, sizes, strict=True))
    return value


def _sizes(size, count):
    """The length of the dimension each of `count` indices counts in."""
    return size if isinstance(size, tuple) else (size,) * count


def _respelled(plain, given, size):
    """' Out of 6 positions, [-2, -1] is [4, 5].' when an answer names its positions another way; else ''."""
    if given is plain:
        return ""
    out_of = "" if size is None else f" Out of {'×'.join(map(str, _sizes(size, 1)))} positions,"
    return f"{out_of} {_brief(plain)} is {_brief(given)}."


# The kind of answer an exercise asks for, and how answers of each kind are compared.


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_whole(value):
    """An int, or a float without a fractional part (640.0 is a fine count)."""
    return _is_int(value) or (isinstance(value, float) and value.is_integer())


def _kind(expected, size):
    """The kind of answer `expected` is: text, whole, wholes, shape, parts or number (see the module)."""
    if isinstance(expected, str):
        return "text"
    if _is_int(expected):
        return "whole"
    if isinstance(expected, (list, tuple)) and all(_is_int(v) for v in expected):
        return "wholes" if isinstance(expected, list) or size is not None else "shape"
    if isinstance(expected, (list, tuple)):
        return "parts"
    return "number"


def _same(given, reference, exercise):
    """True when `given` is the kind of answer asked for and equals `reference` as that kind compares."""
    if _form_problem(given, reference, exercise) is not None:
        return False
    if reference.kind == "parts":
        return all(_same(g, r, exercise) for g, r in zip(given, reference.parts(), strict=True))
    return reference.matches(given)


def _number_tensor(value):
    """`value` as a float64 tensor, or None when it holds something other than real numbers."""
    if isinstance(value, (str, bool, slice)):
        return None
    try:
        tensor = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return None
    if tensor.dtype == torch.bool or tensor.is_complex():
        return None
    return tensor.detach().double()


def _form_problem(given, reference, exercise):
    """What keeps `given` from being the kind of answer asked for, or None when it is that kind."""
    kind = reference.kind
    if kind == "text":
        fits = isinstance(given, str)
    elif kind == "whole":
        fits = _is_whole(given)
    elif kind == "wholes":
        if isinstance(given, slice) and exercise.size is None:  # _picked could not tell its positions
            return (
                f"Which positions {_brief(given)} picks depends on the length of the dimension it slices, "
                "which this exercise does not give: write them as a list of whole numbers."
            )
        fits = isinstance(given, (list, tuple)) and all(_is_whole(v) for v in given)
    elif kind == "shape":
        fits = isinstance(given, (list, tuple)) and all(_is_int(v) for v in given)
    elif kind == "parts":
        fits = isinstance(given, (list, tuple)) and len(given) == reference.length
    else:
        fits = _number_tensor(given) is not None
    return None if fits else f"Write {_asked(kind, reference, exercise)}; yours is {_describe(given)}."


def _asked(kind, reference, exercise):
    """The form a `kind` answer takes, in a few words."""
    if kind == "text":
        return "the answer as text in quotes"
    if kind == "whole":
        return f"the {'count' if exercise.size is None else 'index'} as one whole number"
    if kind == "wholes":
        return "the answer as a list of whole numbers, e.g. [0, 1]"
    if kind == "shape":
        return f"a shape as a tuple of whole numbers, e.g. {tuple(range(2, 2 + reference.length))}"
    if kind == "parts":
        return f"{reference.length} answers, in the order the question asks for them, as a tuple"
    return "the answer as a number, e.g. 0.1234" if not reference.number_shape else "a tensor of numbers"


def _describe(value):
    """What a student's answer is, in a few words: 'text in quotes', 'a list of 2 entries', ..."""
    if isinstance(value, str):
        return "text in quotes"
    if isinstance(value, bool):
        return f"{value}, a truth value"
    if isinstance(value, (int, float, slice)):
        return _brief(value)
    if isinstance(value, (list, tuple)):
        entries = f"a {type(value).__name__} of {len(value)} entr{'y' if len(value) == 1 else 'ies'}"
        odd = next((v for v in value if not isinstance(v, (int, float)) or isinstance(v, bool)), None)
        return entries if odd is None else f"{entries}, one of them {_describe(odd)}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"a {type(value).__name__} of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"of type {type(value).__name__}"


# Hints for a wrong answer that no listed mistake explains, one kind at a time.


def _generic_hint(given, reference, exercise, names=None):
    """What is wrong with an answer no listed mistake explains, without giving the answer away."""
    problem = _form_problem(given, reference, exercise)
    if problem is not None:
        return problem
    kind = reference.kind
    if kind == "text":
        return "Not this one. Reread the question, and run the cell that shows the effect."
    if kind == "whole" and exercise.size is not None:
        return _index_hint(given, exercise.size)
    if kind == "whole":
        return _count_hint(given, reference, names)
    if kind == "wholes":
        return _list_hint(given, reference, exercise.size)
    if kind == "shape":
        return _shape_hint(given, reference)
    if kind == "parts":
        return _parts_hint(given, reference, exercise, names)
    return _number_hint(given, reference, exercise.atol)


def _index_hint(given, size):
    """A wrong index: out of range, or the wrong position."""
    if not 0 <= given < size:
        return f"{_brief(given)} is out of range: there are {size} positions, 0 to {size - 1} (or -{size} to -1 from the end)."
    return f"Not this index. Count from 0, and say what each of the {size} positions holds before you pick one."


def _count_hint(given, reference, names):
    """A wrong count: too many or too few (when the reference can say), and what to count (a module's parameter tensors)."""
    if given < 0:
        return "A count is never negative: it says how many there are."
    direction = reference.direction(given)
    too = "Not this count." if direction is None else f"Too {direction}."
    if names is None:
        return f"{too} Write down each part that is counted and its size, then add them up."
    return (
        f"{too} Add up the entries of every parameter tensor, each once: {_listed(names)}. "
        "A weight has rows × columns entries; a bias has one per row of its weight."
    )


def _list_hint(given, reference, size):
    """A wrong list of whole numbers: its length, an index out of range, the order, a shift, or which entries."""
    if len(given) != reference.length:
        return f"The answer has {reference.length} entries; yours has {len(given)}. Say what each entry stands for."
    if size is not None:
        for index, (value, length) in enumerate(zip(given, _sizes(size, len(given)), strict=True)):
            if not 0 <= value < length:
                return f"{_brief(value)}, at index {index}, is out of range: there are {length} positions, 0 to {length - 1}."
    if reference.sorted_matches(given):
        return "The right entries in the wrong order: reread which one comes first."
    uniform, shift = reference.shift(given)
    if uniform and shift is None:
        return "Every entry is off by the same amount: the steps between them are right, the start is not."
    if uniform:
        size_word = "large" if shift > 0 else "small"
        return f"Every entry is {abs(shift):g} too {size_word}: the steps between them are right, the start is not."
    wrong = reference.wrong_entries(given)
    if len(wrong) == len(given):
        return "Every entry is off. Say what each one stands for before you write it down."
    entries = "entry at index" if len(wrong) == 1 else "entries at index"
    return f"The {entries} {_listed([str(i) for i in wrong])} {'is' if len(wrong) == 1 else 'are'} off; the others are right."


def _shape_hint(given, reference):
    """A wrong shape: the number of dimensions, their order, or their sizes."""
    if len(given) != reference.length:
        return f"This shape has {reference.length} dimensions; yours has {len(given)}. Name each dimension first."
    if reference.sorted_matches(given):
        return "The right sizes, in the wrong order: which dimension comes first?"
    return "Not this shape. Write down what each dimension counts, then its size."


def _parts_hint(given, reference, exercise, names):
    """The first of several answers that is off, and what is wrong with it."""
    pairs = enumerate(zip(given, reference.parts(), strict=True), start=1)
    number, (part, right) = next((n, pair) for n, pair in pairs if not _same(*pair, exercise))
    return f"Answer {number} of {reference.length} is off. {_generic_hint(part, right, exercise, names)}"


def _number_hint(given, reference, atol):
    """A wrong number or tensor: its shape, its sign, or how far off it is."""
    shape = reference.number_shape
    if tuple(_number_tensor(given).shape) != shape:
        if not shape:
            return f"The answer is one number; yours has shape {tuple(_number_tensor(given).shape)}."
        return f"Your answer has shape {tuple(_number_tensor(given).shape)}; the answer has shape {shape}."
    if reference.negated_matches(given):
        return "The right size, the wrong sign: check the signs of the weights you used."
    return f"Not within {atol:g} of the answer. Redo the computation one step at a time."


def _listed(words, last="and"):
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


def _show(value):
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, torch.Tensor):
        return str(value.detach())
    return repr(value)
