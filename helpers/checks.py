"""Compare a result computed by hand with torch's, in one readable line.

Introduced in notebooks/01_scalar_rnn.ipynb; every notebook uses it to prove "by hand == torch".
"""

import torch
from torch import Tensor

# The largest difference still called a match: float32 keeps about 7 significant digits,
# float64 about 16.
FLOAT32_TOLERANCE = 1e-6
FLOAT64_TOLERANCE = 1e-12


class Verdict:
    """What `compare` returns: true when the two sides match; behaves as that bool."""

    def __init__(self, ok, line):
        self.ok = ok  # True when every difference is within the tolerance
        self.line = line  # the line compare printed

    def __bool__(self):
        return self.ok

    def __eq__(self, other):
        return self.ok == bool(other) if isinstance(other, (bool, Verdict)) else NotImplemented

    def __hash__(self):
        return hash(self.ok)

    def __repr__(self):
        return self.line

    def _ipython_display_(self):
        """Show nothing as a cell's last value: compare has printed the line already."""


def compare(name, ours, theirs, atol=None):
    """Print whether `ours` equals `theirs` (tensors, numbers or nested tuples); return a Verdict.

    The Verdict is true or false like a bool (for `if` and `assert`) and adds no second line
    when it is a notebook cell's last value.

    The line names the largest absolute difference; `atol` defaults to 1e-6 (1e-12 when both
    sides are float64). `ours=None` is an exercise not answered yet: it says so and returns False.
    """
    if ours is None:
        return report(False, f"… {name}: no answer yet. Replace None with your answer and run the cell again.")
    try:
        pairs = list(_pairs(ours, theirs, path=""))
    except (TypeError, ValueError) as error:
        return report(False, f"✗ {name}: cannot compare: {error}")
    if atol is None:
        both_float64 = all(a.dtype == b.dtype == torch.float64 for _, a, b in pairs)
        atol = FLOAT64_TOLERANCE if both_float64 else FLOAT32_TOLERANCE
    worst, where = 0.0, ""
    for path, a, b in pairs:
        if a.shape != b.shape:
            return report(False, f"✗ {name}: shapes differ{_at(path)}: ours {tuple(a.shape)}, torch's {tuple(b.shape)}")
        if a.numel() == 0:
            continue
        nan_a, nan_b = torch.isnan(a), torch.isnan(b)
        if not torch.equal(nan_a, nan_b):
            return report(False, f"✗ {name}: NaN{_at(path)} on one side only")
        diff = (a.double() - b.double()).abs().masked_fill(nan_a, 0).max().item()
        if diff > worst or not where:
            worst, where = diff, path
    ok = worst <= atol
    verdict = "match" if ok else f"DIFFER (tolerance {atol:.0e}){_at(where)}"
    return report(ok, f"{'✓' if ok else '✗'} {name}: {verdict} (max abs diff {worst:.1e})")


def report(ok, line):
    """Print a verdict's line and return the Verdict (shared with helpers.exercises)."""
    print(line)
    return Verdict(ok, line)


def _pairs(ours, theirs, path):
    """Yield (path, our tensor, their tensor) for every leaf of two matching structures."""
    if isinstance(ours, (tuple, list)) or isinstance(theirs, (tuple, list)):
        if not (isinstance(ours, (tuple, list)) and isinstance(theirs, (tuple, list))):
            raise TypeError(f"one side{_at(path)} is a {type(ours).__name__}, the other a {type(theirs).__name__}")
        if len(ours) != len(theirs):
            raise ValueError(f"ours{_at(path)} has {len(ours)} parts, torch's {len(theirs)}")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            yield from _pairs(a, b, f"{path}[{i}]")
        return
    yield path, _as_tensor(ours, path), _as_tensor(theirs, path)


def _as_tensor(value, path):
    if isinstance(value, Tensor):
        return value.detach()
    try:
        return torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{type(value).__name__}{_at(path)} is not a tensor or a number") from None


def _at(path):
    return f" at {path}" if path else ""
