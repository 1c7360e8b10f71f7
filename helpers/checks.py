"""Compare a result computed by hand with torch's, in one readable line.

Introduced in notebooks/01_scalar_rnn.ipynb; every notebook uses it to prove "by hand == torch".
"""

import torch
from torch import Tensor

# The largest difference still called a match: float32 keeps about 7 significant digits,
# float64 about 16.
FLOAT32_TOLERANCE = 1e-6
FLOAT64_TOLERANCE = 1e-12


def compare(name, ours, theirs, atol=None):
    """Print whether `ours` equals `theirs` (tensors, numbers or nested tuples) and return a bool.

    The line names the largest absolute difference; `atol` defaults to 1e-6 (1e-12 when both
    sides are float64).
    """
    try:
        pairs = list(_pairs(ours, theirs, path=""))
    except (TypeError, ValueError) as error:
        print(f"✗ {name}: cannot compare: {error}")
        return False
    if atol is None:
        both_float64 = all(a.dtype == b.dtype == torch.float64 for _, a, b in pairs)
        atol = FLOAT64_TOLERANCE if both_float64 else FLOAT32_TOLERANCE
    worst, where = 0.0, ""
    for path, a, b in pairs:
        if a.shape != b.shape:
            print(f"✗ {name}: shapes differ{_at(path)}: ours {tuple(a.shape)}, torch's {tuple(b.shape)}")
            return False
        if a.numel() == 0:
            continue
        nan_a, nan_b = torch.isnan(a), torch.isnan(b)
        if not torch.equal(nan_a, nan_b):
            print(f"✗ {name}: NaN{_at(path)} on one side only")
            return False
        diff = (a.double() - b.double()).abs().masked_fill(nan_a, 0).max().item()
        if diff > worst or not where:
            worst, where = diff, path
    ok = worst <= atol
    verdict = "match" if ok else f"DIFFER (tolerance {atol:.0e}){_at(where)}"
    print(f"{'✓' if ok else '✗'} {name}: {verdict} (max abs diff {worst:.1e})")
    return ok


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
