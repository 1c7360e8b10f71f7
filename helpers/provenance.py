"""Where a result's numbers were copied from: for a function that only picks states out of a tensor.

Some exercises ask for states picked out of a layer's output (the last real step of each
sequence, the top layer's final states). A wrong pick still returns numbers copied from that
output, so each row of the result can be found in it: "your h_last[1] is output[2, 0]; the expected
h_last[1] is output[2, 1]" says which index is wrong, in the student's own terms.

`picked_from(result, source)` finds, for each row of `result` (a vector along its last dimension),
the one place in `source` it equals exactly: a position along source's leading dimensions and a
slice of its last dimension. `copied_from(...)` says it in words, grouping a dimension that the
result and the source share ("output[:, 1, H:]"); `pattern(...)` says in one sentence what every
wrong row has in common, where they share one: the expected rows in another order, the two halves
of the last dimension exchanged, or each row read at the other end of one dimension.
"""

import itertools

import torch

ZEROS = "zeros"  # a row of zeros found in several places: padding, most often


def picked_from(result, source):
    """{row index of result: (position in source's leading dimensions, start of the slice of its last dimension)}.

    A row found in several places maps to ZEROS when it is all zeros (padding, say), else to None.
    None when some row of `result` is not in `source` at all (the result is not a pick of it) or the
    shapes cannot be.
    """
    if not (isinstance(result, torch.Tensor) and isinstance(source, torch.Tensor)):
        return None
    if result.dim() < 1 or source.dim() < 2 or result.numel() == 0 or result.shape[-1] > source.shape[-1]:
        return None
    if result.dtype != source.dtype:
        return None
    K, F = result.shape[-1], source.shape[-1]
    windows = source.unfold(-1, K, 1)  # (*leading, F - K + 1, K): every slice of K entries of the last dimension
    flat = windows.reshape(-1, K)
    places = list(itertools.product(*(range(n) for n in source.shape[:-1]), range(F - K + 1)))
    found = {}
    for index in itertools.product(*(range(n) for n in result.shape[:-1])):
        hits = (flat == result[index]).all(dim=1).nonzero().flatten().tolist()
        if not hits:
            return None
        if len(hits) > 1:
            found[index] = ZEROS if not result[index].any() else None
        else:
            found[index] = (places[hits[0]][:-1], places[hits[0]][-1])
    return found


def copied_from(mine, expected, source, names, *, differ=None, rows=3):
    """Lines saying where `mine`'s rows come from in `source`, beside where `expected`'s do, for the rows that differ.

    `names` = (the result's name, the source's name): ("h_last", "output"). `expected` may be None (a
    sealed answer): then only the student's picks are said, for the rows `differ` (indices along
    mine's leading dimensions; all rows when None). None when `mine` is not a pick of `source`, when
    nothing can be said that helps, or when `expected`'s rows are not each in one place.
    """
    picks = picked_from(mine, source)
    if not picks:
        return None
    wanted = None
    if expected is not None:
        wanted = picked_from(expected, source)
        if wanted is None or any(pick is None or pick == ZEROS for pick in wanted.values()):
            return None
    same_shape = wanted is not None and tuple(mine.shape) == tuple(expected.shape)
    if differ is None:
        differ = [i for i in picks if not same_shape or not torch.equal(mine[i], expected[i])]
    differ = sorted(i for i in differ if i in picks)
    if not differ or all(picks[i] is None for i in differ):
        return None
    result, source_name = names
    K, F = mine.shape[-1], source.shape[-1]
    pairing = _shared_dimension(picks, differ, mine.shape, source.shape)
    theirs = None
    if same_shape:
        if pairing != _shared_dimension(wanted, differ, mine.shape, source.shape):
            pairing = None
        theirs = _grouped(wanted, differ, pairing)
    yours = _grouped(picks, differ, pairing)
    if pairing is not None and (yours is None or (same_shape and theirs is None)):
        pairing = None
        yours = _grouped(picks, differ, None)
        theirs = _grouped(wanted, differ, None) if same_shape else None
    if wanted is not None and not same_shape:  # rows of the expected result under the same labels, where they agree
        indices = sorted(wanted)
        theirs = _grouped(wanted, indices, _shared_dimension(wanted, indices, expected.shape, source.shape))
        theirs = theirs or _grouped(wanted, indices, None)
    lines = []
    for label, pick in list(yours.items())[:rows]:
        line = f"your {result}{label} is {_place(pick, source_name, K, F)}"
        if theirs is not None and label in theirs:
            line += f"; the expected {result}{label} is {_place(theirs[label], source_name, expected.shape[-1], F)}"
        lines.append(line)
    return lines


def pattern(mine, expected, source, names):
    """One sentence on what every departing row of `mine` shares, against `expected`: the expected rows in another
    order, or, as picks from `source`, the forward and backward halves of the last dimension exchanged, or every
    row read at the other end of one dimension; None when they share none of these."""
    if not (isinstance(mine, torch.Tensor) and isinstance(expected, torch.Tensor)) or mine.shape != expected.shape:
        return None
    result, source_name = names
    rows = list(itertools.product(*(range(n) for n in mine.shape[:-1])))
    differ = [i for i in rows if not torch.equal(mine[i], expected[i])]
    others = {i: next((j for j in rows if torch.equal(mine[i], expected[j])), None) for i in differ}
    if differ and None not in others.values() and len(set(others.values())) == len(differ):
        moves = "; ".join(f"your {result}{_text(i)} is the expected {result}{_text(j)}" for i, j in others.items())
        return (
            f"your {result} holds the expected rows in another order ({moves}): each row belongs at the index of its "
            "own sequence (sorted lengths, or indices taken from a sorted copy, move them)."
        )
    picks, wanted = picked_from(mine, source), picked_from(expected, source)
    if not picks or not wanted:
        return None
    differ = [i for i in picks if not torch.equal(mine[i], expected[i])]
    pairs = [(picks[i], wanted[i]) for i in differ]
    if not pairs or any(p in (None, ZEROS) or w in (None, ZEROS) for p, w in pairs):
        return None
    K, F = mine.shape[-1], source.shape[-1]
    if F == 2 * K and all(p[0] == w[0] and {p[1], w[1]} == {0, K} for p, w in pairs):
        return (
            f"every departing row of your {result} takes the other half of {source_name}'s last dimension: the "
            f"forward states are its first H features, [..., :H], the backward states the last H, [..., H:]."
        )
    for j, n in enumerate(source.shape[:-1]):
        if n > 1 and all(
            p[1] == w[1]
            and p[0][j] == n - 1 - w[0][j] != w[0][j]
            and all(a == b for k, (a, b) in enumerate(zip(p[0], w[0], strict=True)) if k != j)
            for p, w in pairs
        ):
            return (
                f"every departing row of your {result} is read at the other end of dimension {j} of {source_name} "
                f"(index n - 1 - k where k belongs, of its {n}): a forward run ends at the last step, t = T - 1, a "
                "backward run at the first, t = 0 (where that dimension is time)."
            )
    return None


def _grouped(picks, indices, pairing):
    """{the result's index as text: the source's index}, the shared dimension `pairing` = (i, j) shown as ':'
    when every row of a group has the same pick apart from it; None when a group's rows differ."""
    groups = {}
    for index in indices:
        pick = picks[index]
        if pairing is None:
            groups[_text(index)] = pick
            continue
        i, j = pairing
        key = _text(index, blank=i)
        pattern = (
            pick if pick in (None, ZEROS) else (tuple(":" if k == j else p for k, p in enumerate(pick[0])), pick[1])
        )
        if key in groups and groups[key] != pattern:
            return None
        groups[key] = pattern
    return groups


def _shared_dimension(picks, indices, result_shape, source_shape):
    """(i, j): result dimension i and source dimension j of the same size, with every pick's j-th index equal to
    its row's i-th (the batch, in both), over more than one row; None if there is none."""
    known = [index for index in indices if picks[index] not in (None, ZEROS)]
    for i, j in itertools.product(range(len(result_shape) - 1), range(len(source_shape) - 1)):
        if result_shape[i] != source_shape[j] or result_shape[i] < 2:
            continue
        if len({index[i] for index in known}) > 1 and all(picks[index][0][j] == index[i] for index in known):
            return i, j
    return None


def _text(index, blank=None):
    """'[1]' for (1, 0) with dimension 1 blank: a trailing ':' is left out, as Python allows."""
    parts = [":" if k == blank else str(v) for k, v in enumerate(index)]
    while parts and parts[-1] == ":":
        parts.pop()
    return f"[{', '.join(parts)}]" if parts else ""


def _place(pick, source_name, K, F):
    """'output[:, 1, H:]' for a position and the start of a slice; words for a row found in several places."""
    if pick == ZEROS:
        return f"zeros, like {source_name} at a padding step"
    if pick is None:
        return f"a row found in several places of {source_name}"
    position, start = pick
    parts = [str(p) for p in position]
    while K == F and parts and parts[-1] == ":":
        parts.pop()
    if K != F:
        if F == 2 * K and start in (0, K):
            parts.append(":H" if start == 0 else "H:")
        else:
            parts.append(f"{start}:{start + K}")
    return f"{source_name}[{', '.join(parts)}]"
