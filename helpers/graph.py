"""The unrolled graph of a recurrent layer as data: which cells and inputs a result depends on.

A cell is (layer, direction, t): layer k's run in one direction at time t (counted from 0).
It reads its own previous state (t - 1 going forward, t + 1 going backward) and, at the same
time step, the input x_t (layer 0) or both directions of the layer below. `depends_on`
follows those reads back from a result to everything it was computed from: what
helpers.plots.draw_unrolled highlights. Introduced in notebooks/04_bidirectional.ipynb.
"""

from helpers._validate import student_facing


def reads(cell, num_directions):
    """The cells and the input step that `cell` reads directly: ([cells], input t or None).

    Only what exists is listed, not the initial state h_0 (no cell before the first step).
    """
    layer, direction, t = cell
    cells = [(layer, direction, t + 1 if direction else t - 1)]
    if layer == 0:
        return cells, t
    return cells + [(layer - 1, d, t) for d in range(num_directions)], None


@student_facing
def depends_on(result, num_layers, num_directions, seq_len):
    """(cells, input steps) a result is computed from: sets of (layer, direction, t) and of t.

    `result` is ("output", t), ("h_n", index) or ("cell", layer, direction, t), with t a Python
    index from 0 to seq_len - 1. output[t] holds the top layer's states at t, h_n[index] the
    final state of layer index // D, direction index % D (a backward run ends at t = 0).
    """
    kind, *where = result
    if kind == "output":
        (t,) = where
        todo = [(num_layers - 1, d, t) for d in range(num_directions)]
    elif kind == "h_n":
        (index,) = where
        layer, direction = divmod(index, num_directions)
        if not 0 <= layer < num_layers:
            raise ValueError(f"h_n[{index}] does not exist: h_n has {num_layers * num_directions} rows.")
        todo = [(layer, direction, 0 if direction else seq_len - 1)]
    elif kind == "cell":
        todo = [tuple(where)]
    else:
        raise ValueError(f"highlight={result!r}: use ('output', t), ('h_n', index) or ('cell', layer, direction, t).")
    for layer, direction, t in todo:
        if not (0 <= layer < num_layers and 0 <= direction < num_directions and 0 <= t < seq_len):
            raise ValueError(
                f"highlight={result!r} is outside a graph of {num_layers} layer(s), "
                f"{num_directions} direction(s) and {seq_len} steps (t counts from 0)."
            )
    cells, inputs = set(), set()
    while todo:
        cell = todo.pop()
        if cell in cells:
            continue
        cells.add(cell)
        earlier, input_step = reads(cell, num_directions)
        todo.extend(c for c in earlier if 0 <= c[2] < seq_len)
        if input_step is not None:
            inputs.add(input_step)
    return cells, inputs


__all__ = ["depends_on", "reads"]
