"""What a wrong shape says about the code that made it: a size-1 dimension dropped or added, two shapes
broadcast, two dimensions merged (cat for stack) or one split in two, the dimensions in another order,
one dimension a size read from another dimension, one step short or over, or a multiple of what it
should be.

`shape_slip(got, want, names, sizes)` compares the shape a student's result has with the shape expected and says,
in one sentence, which kind of slip makes the one from the other; helpers.exercises (a step's
result) and helpers.diagnose (a layer's output, h_n, c_n) add it to their message.
"""


def shape_slip(got, want, names=None, sizes=None):
    """One sentence on how shape `got` comes from shape `want` (tuples of ints), or None when no slip explains it.

    `names` (one per dimension of `want`: "seq_len", "batch", ...) and `sizes` ({name: size} of the
    input and the layer) let it say that a dimension has the size of another one.
    """
    got, want = tuple(got), tuple(want)
    if got == want:
        return None
    differ = [i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w]
    one = len(got) == len(want) and len(differ) == 1
    other_size = _other_size(got, want, differ[0], names, sizes) if one and names and sizes else None
    if one and abs(got[differ[0]] - want[differ[0]]) == 1 and min(got[differ[0]], want[differ[0]]) >= 2:
        i = differ[0]  # (1 and 2 are a multiple, said below)
        named = f" ({names[i]})" if names else ""
        also = f"; or {other_size}" if other_size else ""
        if got[i] < want[i]:
            return (
                f"dimension {i}{named} is one short ({got} where {want} is expected): a loop over range(n - 1), or a "
                f"slice such as [:-1] or [1:], stops one step early{also}"
            )
        return (
            f"dimension {i}{named} has one too many ({got} where {want} is expected): the initial state kept with "
            f"the outputs, or a loop over range(n + 1){also}"
        )
    if other_size:
        return f"{other_size} ({got} where {want} is expected)"
    if len(got) < len(want) and _without_ones(want, got):
        return (
            f"a dimension of size 1 is gone ({want} without it is {got}): .squeeze() without a dim, or an index "
            "such as [0] or [-1], drops every dimension of size 1 (a batch of 1, one unit); squeeze only the "
            "dimension you mean, e.g. .squeeze(0), or keep it"
        )
    if len(got) > len(want) and _without_ones(got, want):
        return (
            f"an extra dimension of size 1 ({got} where {want} is expected): an .unsqueeze() or [None] too many, or a "
            "tensor kept whole where one of its rows was meant (hx where hx[0] belongs; a batch dimension kept for "
            "an unbatched input)"
        )
    merged = _merged(got, want)
    if merged is not None:
        i = merged
        return (
            f"dimensions {i} and {i + 1} merged into one ({want[i]} * {want[i + 1]} = {got[i]}; {got} where {want} is "
            "expected): torch.cat joins tensors along a dimension they have, torch.stack adds a new one; or a "
            ".view/.reshape/.flatten merged them"
        )
    split = _merged(want, got)
    if split is not None:
        i = split
        return (
            f"dimension {i} split in two ({got[i]} * {got[i + 1]} = {want[i]}; {got} where {want} is expected): "
            "torch.stack adds a new dimension where torch.cat would join along dimension "
            f"{i}; or a .view/.reshape split it"
        )
    if len(got) == len(want) and sorted(got) == sorted(want):
        return (
            f"the right sizes in another order ({got} where {want} is expected): a .transpose() or .permute() "
            "missing or one too many, or .view()/.reshape() used where a .transpose() belongs"
        )
    if len(got) == len(want) and _broadcast(got, want):
        return (
            f"larger than expected ({got} where {want} is expected): two terms of different shapes were broadcast "
            "against each other, for example a bias made a column (H, 1) and added to a (batch, H) tensor; give "
            f"every term the result's shape, {want}"
        )
    if one:
        i = differ[0]
        g, w = got[i], want[i]
        if g % w == 0 or w % g == 0:
            ratio = f"{g // w} times" if g > w else f"1/{w // g} of"
            return (
                f"dimension {i} is {ratio} what it should be ({got} where {want} is expected): check the dimension "
                "you cut, index or concatenate along (dim=...), and how many pieces go in"
            )
    return None


def _other_size(got, want, i, names, sizes):
    """'dimension 1 is 4, the seq_len, where the batch (1) belongs: ...' when dimension i has another named size."""
    others = [name for name, size in sizes.items() if size == got[i] and name != names[i]]
    if not others or sizes.get(names[i]) != want[i]:
        return None
    return (
        f"dimension {i} is {got[i]}, the {' or the '.join(others)}, where the {names[i]} ({want[i]}) belongs: a size "
        "read from the wrong dimension (x.shape[0] for x.shape[1]), or a tensor of that size broadcast into the result"
    )


def _merged(got, want):
    """i when `got` is `want` with dimensions i and i + 1 merged (their sizes multiplied, both above 1); else None."""
    if len(got) != len(want) - 1:
        return None
    for i in range(len(got)):
        if want[i] > 1 and want[i + 1] > 1 and got[:i] == want[:i] and got[i] == want[i] * want[i + 1]:
            if got[i + 1 :] == want[i + 2 :]:
                return i
    return None


def _without_ones(longer, shorter):
    """Whether `shorter` is `longer` with some of its size-1 dimensions removed."""
    j = 0
    for size in longer:
        if j < len(shorter) and size == shorter[j]:
            j += 1
        elif size != 1:
            return False
    return j == len(shorter)


def _broadcast(got, want):
    """Whether `got` is `want` with some of its size-1 dimensions grown, as broadcasting against another term does."""
    return all(g == w or w == 1 for g, w in zip(got, want, strict=True))
