"""A sealed answer key: it tells whether an answer is right, and what is wrong with it, without holding the answer.

A course release (`make release`) ships the package without helpers/solutions/'s sources. In their
place is one file, key.pt, written by `seal_all` on the instructor's machine and read by `load`:

- a value exercise keeps salted SHA-256 digests of its reference answer and of each expected
  mistake, and of what the hints compare (the entries sorted, each entry alone, the steps between
  entries, the answer shifted by a few), plus what the question already says (how many entries, the
  shape of a tensor). A number is kept as the digest of the cell of a grid it falls in (4 × atol
  wide) with its offset in that cell, so that "within atol" is still decided exactly.
- a write-it-yourself exercise keeps its check cases, and what the reference and each expected mistake
  returned on them as digests, entry by entry, on a grid as numbers are (the notebook's case returns the
  notebook's numbers, which other exercises ask for). A mistake's name and repair, which can spell out
  the right code, are sealed with what the mistake returns: only a function that makes that mistake
  opens them.

`helpers.exercises` checks a sealed exercise with the same code and hints as an open one. Two hints
need the answer itself and change: a wrong count says "Not this count." without "too many" or "too
few", and a list shifted by more than SHIFTS says the shift without its size; a function's first
departure shows the student's entry without the expected one, and where a picked result's rows come
from (helpers.provenance) is said without where the expected rows come from.

Like any checker, `check` can be asked again and again; a digest stops an answer from being read,
not from being searched for. Grading uses the full references (the release's autograder).
"""

import hashlib
import math
import re
import secrets

import torch
from torch import nn

from helpers import argument_slips, sandbox
from helpers.diagnosis import ATOL, RTOL, gradients  # results agree within ATOL + RTOL × |expected|, as there
from helpers.exercise_types import CodeExercise, CodeMistake, SealedExercise

SHIFTS = 10  # a list of whole numbers off by the same amount, up to this much either way, is named with it
GRID = 4  # a number's cell is GRID × atol wide: within atol of the answer, rounding finds the answer's cell


def digest(salt, text):
    """The salted SHA-256 of `text`, as 64 hex digits."""
    return hashlib.sha256(f"{salt}\x00{text}".encode()).hexdigest()


def _wholes(values):
    return ",".join(str(int(v)) for v in values)


def seal(reference, atol, salt):
    """The record of an open reference answer (helpers.exercises' `_Open`): digests and what the question says."""
    kind, value = reference.kind, reference.value
    if kind == "parts":
        return {"kind": kind, "parts": [seal(part, atol, salt) for part in reference.parts()]}
    if kind == "text":
        return {"kind": kind, "digest": digest(salt, value.strip().lower())}
    if kind == "whole":
        return {"kind": kind, "digest": digest(salt, str(int(value)))}
    if kind == "number":
        values = torch.as_tensor(value).detach().double()
        scaled = values.flatten() / (GRID * atol)
        cells = torch.floor(scaled)
        return {
            "kind": kind,
            "shape": list(values.shape),
            "fractions": (scaled - cells).tolist(),
            "digest": digest(salt, _wholes(cells.tolist())),
        }
    record = {
        "kind": kind,
        "length": len(value),
        "digest": digest(salt, _wholes(value)),
        "sorted": digest(salt, _wholes(sorted(value))),
    }
    if kind == "wholes":
        record["entries"] = [digest(salt, f"{i}:{int(v)}") for i, v in enumerate(value)]
        record["steps"] = digest(salt, _wholes(v - value[0] for v in value))
        record["shifts"] = {digest(salt, _wholes(v + s for v in value)): s for s in range(-SHIFTS, SHIFTS + 1) if s}
    return record


class Sealed:
    """A reference answer known by its digests: what helpers.exercises' checks and hints ask of a reference.

    The methods take an answer already found to be of the reference's kind (see exercises._form_problem).
    """

    def __init__(self, record, salt, atol):
        self.record, self.salt, self.atol = record, salt, atol
        self.kind = record["kind"]

    def _digest(self, text):
        return digest(self.salt, text)

    @property
    def length(self):
        """How many entries (a list, a shape) or answers (several parts) the reference has."""
        return len(self.record["parts"]) if self.kind == "parts" else self.record["length"]

    @property
    def number_shape(self):
        return tuple(self.record["shape"])

    def parts(self):
        return [Sealed(part, self.salt, self.atol) for part in self.record["parts"]]

    def matches(self, given):
        """True when `given` equals the reference as its kind compares (text without case, numbers within atol)."""
        if self.kind == "text":
            return self._digest(given.strip().lower()) == self.record["digest"]
        if self.kind == "whole":
            return self._digest(str(int(given))) == self.record["digest"]
        if self.kind == "number":
            return self._number_matches(torch.as_tensor(given).detach().double())
        return len(given) == self.length and self._digest(_wholes(given)) == self.record["digest"]

    def _number_matches(self, values):
        if tuple(values.shape) != self.number_shape:
            return False
        step = GRID * self.atol
        fractions = torch.tensor(self.record["fractions"], dtype=torch.float64)
        cells = torch.round(values.flatten() / step - fractions)
        if not torch.isfinite(cells).all() or self._digest(_wholes(cells.tolist())) != self.record["digest"]:
            return False
        answer = (cells + fractions) * step  # the reference, now that its cell is known
        return bool(torch.allclose(values.flatten(), answer, rtol=0, atol=self.atol))

    def negated_matches(self, given):
        return self._number_matches(-torch.as_tensor(given).detach().double())

    def sorted_matches(self, given):
        return self._digest(_wholes(sorted(given))) == self.record["sorted"]

    def shift(self, given):
        """(True, amount) when every entry is off by the same amount (amount None past SHIFTS), else (False, None)."""
        if self._digest(_wholes(v - given[0] for v in given)) != self.record["steps"]:
            return False, None
        return True, self.record["shifts"].get(self._digest(_wholes(given)))

    def wrong_entries(self, given):
        entries = self.record["entries"]
        return [i for i, v in enumerate(given) if self._digest(f"{i}:{int(v)}") != entries[i]]

    def direction(self, given):
        """Too many or too few: a digest cannot say (that would need the count itself)."""
        return None


# Write-it-yourself exercises: functions known by what they returned on the check cases, also as digests.


def seal_outcome(function, args, salt):
    """What function(*args) returned, as digests of each entry's grid cell; or the error it raised, kept as is.

    The grid of a tensor is GRID × (ATOL + RTOL × its largest entry, rounded up to a power of 2) wide, so
    that rounding finds the cell of any entry within the tolerance of the expected one.
    """
    try:
        value = function(*args)
    except Exception as error:
        return {"raised": [type(error).__name__, str(error)]}
    parts = value if isinstance(value, (tuple, list)) else (value,)
    sealed = []
    for part in parts:
        part = torch.as_tensor(part).detach()
        exact = not part.is_floating_point()  # whole numbers and truth values must match exactly, as there
        part = part.double()
        if not torch.isfinite(part).all():
            raise ValueError("a reference or expected mistake returned NaN or inf: it cannot be sealed")
        largest = float(part.abs().max()) if part.numel() else 0.0
        step = GRID * (ATOL + RTOL * 2.0 ** math.ceil(math.log2(max(largest, 1e-12))))
        scaled = part.flatten() / step
        cells = torch.floor(scaled)
        sealed.append(
            {
                "shape": list(part.shape),
                "exact": exact,
                "step": step,
                "fractions": (scaled - cells).tolist(),
                "cells": [digest(salt, f"{i}:{int(c)}") for i, c in enumerate(cells.tolist())],
            }
        )
    return {"tuple": isinstance(value, (tuple, list)), "parts": sealed}


class SealedOutcome:
    """What a reference (or an expected mistake) returned on one case, known by its digests.

    helpers.exercises compares a student's result with it where it would compare two results.
    """

    def __init__(self, record, salt):
        self.record, self.salt = record, salt
        self.raised = record.get("raised")
        self.is_tuple = record.get("tuple", False)
        self.shapes = [tuple(part["shape"]) for part in record.get("parts", [])]

    def first_departure(self, number, got):
        """The index (a tuple) of the first entry of part `number` that departs from `got`, None if none does.

        `got` must have the part's shape.
        """
        return next(self.departures(number, got), None)

    def departures(self, number, got):
        """The indices (tuples) of the entries of part `number` that depart from `got`, in order; `got` has its shape."""
        part = self.record["parts"][number]
        values = torch.as_tensor(got).detach().double().flatten()
        fractions = torch.tensor(part["fractions"], dtype=torch.float64)
        cells = torch.round(values / part["step"] - fractions)
        expected = (cells + fractions) * part["step"]
        for i, (value, cell, want) in enumerate(zip(values.tolist(), cells.tolist(), expected.tolist(), strict=True)):
            known = math.isfinite(cell) and digest(self.salt, f"{i}:{int(cell)}") == part["cells"][i]
            tolerance = 0.0 if part.get("exact") else ATOL + RTOL * abs(want)
            if not (known and abs(value - round(want) if part.get("exact") else value - want) <= tolerance):
                yield (
                    tuple(int(j) for j in torch.unravel_index(torch.tensor(i), self.shapes[number]))
                    if self.shapes[number]
                    else ()
                )

    def fingerprint(self, outcome):
        """The cells (or the error's name and sizes) of an outcome that agrees with this one: the key to a sealed text."""
        if self.raised is not None:
            return f"{self.raised[0]}:{sorted(re.findall(r'[0-9]+', str(outcome.error)))}"
        got = outcome.value
        parts = got if isinstance(got, (tuple, list)) else (got,)
        texts = []
        for part, record in zip(parts, self.record["parts"], strict=True):
            values = torch.as_tensor(part).detach().double().flatten()
            cells = torch.round(values / record["step"] - torch.tensor(record["fractions"], dtype=torch.float64))
            texts.append(_wholes(cells.tolist()))
        return "/".join(texts)

    def agrees(self, outcome):
        """True when a helpers.sandbox.Outcome agrees with this one, as same_outcome decides for two results."""
        if self.raised is not None or outcome.error is not None:
            if self.raised is None or outcome.error is None or type(outcome.error).__name__ != self.raised[0]:
                return False
            return sorted(re.findall(r"\d+", str(outcome.error))) == sorted(re.findall(r"\d+", self.raised[1]))
        got = outcome.value
        parts = got if isinstance(got, (tuple, list)) else (got,)
        if self.is_tuple != isinstance(got, (tuple, list)) or len(parts) != len(self.shapes):
            return False
        return all(
            isinstance(part, torch.Tensor) and tuple(part.shape) == shape and self.first_departure(n, part) is None
            for n, (part, shape) in enumerate(zip(parts, self.shapes, strict=True))
        )


def _keystream(key, length):
    blocks = (hashlib.sha256(f"{key}\x00{n}".encode()).digest() for n in range(length // 32 + 1))
    return b"".join(blocks)[:length]


def _xor(data, key):
    """`data` XORed with a SHA-256 stream of `key`: the same call seals and opens."""
    return bytes(a ^ b for a, b in zip(data, _keystream(key, len(data)), strict=True))


def seal_text(text, key):
    """`text` sealed with `key`, as hex: readable only by one who can give the key."""
    return _xor(text.encode(), key).hex()


class SealedText:
    """A wrong function's name and repair, which may spell out the right code: opened only by a student's
    results that equal the mistake's on every case (their cells are the key, held nowhere in the key file)."""

    def __init__(self, sealed, salt):
        self.sealed, self.salt = sealed, salt

    def opened(self, expected, outcomes):
        """The text, given the mistake's SealedOutcomes and the student's outcomes that agree with them."""
        key = self.salt + "|".join(e.fingerprint(o) for e, o in zip(expected, outcomes, strict=True))
        return _xor(bytes.fromhex(self.sealed), key).decode(errors="replace")


class Recorded:
    """A function known only by what it returned (a SealedOutcome) on each of an exercise's check cases."""

    def __init__(self, key, cases, outcomes):
        self.key, self.cases, self.outcomes = key, cases, outcomes
        self.__name__ = "reference"

    def __call__(self, *args):
        for (_, stored), outcome in zip(self.cases, self.outcomes, strict=True):
            if _same_arguments(stored, args):
                return outcome
        raise ValueError(f"{self.key}: the sealed key knows its reference on the exercise's own cases only")


def _same_arguments(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.equal(a, b)
        )
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_arguments(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


# Layers of whole-layer exercises, kept as their settings and weights.

LAYER_SETTINGS = ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional")


def _layer_record(module):
    settings = {name: getattr(module, name) for name in LAYER_SETTINGS}
    if module.mode.startswith("RNN_"):
        settings["nonlinearity"] = module.nonlinearity
    if module.mode == "LSTM":
        settings["proj_size"] = module.proj_size
    kind = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(module.mode, module.mode)
    return {"class": kind, "settings": settings, "state": dict(module.state_dict())}


def _layer(record):
    module = getattr(nn, record["class"])(**record["settings"])
    module.load_state_dict(record["state"])
    return module


# The whole key: written by seal_all on the instructor's machine, read by load in a release.


def seal_all(exercises, reference_of, salt=None):
    """The sealed key of every exercise in `exercises` (key -> record), as plain data for torch.save.

    `reference_of(exercise)` gives (the open reference, [(open mistake, hint)], parameter names)
    for a value exercise (helpers.exercises.open_reference). A fresh random salt is drawn unless given.
    """
    salt = secrets.token_hex(16) if salt is None else salt
    key = {"salt": salt, "exercises": {}}
    for name, exercise in exercises.items():
        if isinstance(exercise, CodeExercise):
            key["exercises"][name] = _seal_code(exercise, salt)
            continue
        reference, mistakes, parameter_names = reference_of(exercise)
        key["exercises"][name] = {
            "type": "value",
            "question": exercise.question,
            "atol": exercise.atol,
            "size": exercise.size,
            "parameter_names": parameter_names,
            "reference": seal(reference, exercise.atol, salt),
            "mistakes": [(seal(mistake, exercise.atol, salt), hint) for mistake, hint in mistakes],
        }
    return key


def _seal_code(exercise, salt):
    record = {"type": "code", "question": exercise.question, "returns": exercise.returns}
    with torch.random.fork_rng(devices=[]):
        if exercise.layer is not None:
            module, input, hx = exercise.layer()
            record["layer"] = {"module": _layer_record(module), "input": input, "hx": hx}
            return record
        cases = exercise.cases()
        record["cases"] = cases
        record["reference"] = [seal_outcome(exercise.reference, sandbox.copied(args), salt) for _, args in cases]
        first = sandbox.copied(cases[0][1])
        has_gradients = gradients(exercise.reference, first) is not None
        record["gradients"] = (
            seal_outcome(lambda *a: gradients(exercise.reference, a), first, salt) if has_gradients else None
        )
        record["mistakes"] = []
        for mistake in (*exercise.mistakes, *argument_slips.argument_mistakes(exercise)):
            outcomes = [seal_outcome(mistake.function, sandbox.copied(args), salt) for _, args in cases]
            key = salt + "|".join(
                SealedOutcome(sealed, salt).fingerprint(
                    sandbox.call(mistake.function, sandbox.copied(args), quiet=True)
                )
                for sealed, (_, args) in zip(outcomes, cases, strict=True)
            )
            record["mistakes"].append((seal_text(mistake.title, key), seal_text(mistake.fix, key), outcomes))
    return record


def load(key):
    """The exercises of a sealed key (as seal_all made it), by key: SealedExercise and CodeExercise records."""
    salt, found = key["salt"], {}
    for name, record in key["exercises"].items():
        if record["type"] == "value":
            atol = record["atol"]
            size = tuple(record["size"]) if isinstance(record["size"], list) else record["size"]
            found[name] = SealedExercise(
                key=name,
                question=record["question"],
                reference=Sealed(record["reference"], salt, atol),
                mistakes=tuple((Sealed(m, salt, atol), hint) for m, hint in record["mistakes"]),
                atol=atol,
                size=size,
                parameter_names=record["parameter_names"],
            )
        else:
            found[name] = _code_exercise(name, record, salt)
    return found


def _code_exercise(name, record, salt):
    common = {"key": name, "question": record["question"], "explanation": "", "returns": record["returns"]}
    if "layer" in record:
        layer = record["layer"]
        return CodeExercise(
            reference=None, layer=lambda: (_layer(layer["module"]), layer["input"], layer["hx"]), **common
        )
    cases = record["cases"]
    mistakes = tuple(
        CodeMistake(
            SealedText(title, salt),
            SealedText(fix, salt),
            Recorded(name, cases, [SealedOutcome(o, salt) for o in outcomes]),
        )
        for title, fix, outcomes in record["mistakes"]
    )
    reference = Recorded(name, cases, [SealedOutcome(o, salt) for o in record["reference"]])
    sealed_gradients = record.get("gradients")
    gradients_ = (
        None if sealed_gradients is None else Recorded(name, cases[:1], [SealedOutcome(sealed_gradients, salt)])
    )
    return CodeExercise(reference=reference, cases=lambda: cases, mistakes=mistakes, gradients=gradients_, **common)
