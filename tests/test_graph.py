"""helpers.graph: what a result of a recurrent layer depends on, checked against torch's autograd."""

import itertools

import pytest
import torch
from torch import nn

from helpers.graph import depends_on, reads

CONFIGS = list(itertools.product([1, 2, 3], [False, True], [1, 4]))  # num_layers, bidirectional, seq_len


def results(num_layers, directions, seq_len):
    """Every result torch returns: each output[t] and each h_n row."""
    return [("output", t) for t in range(seq_len)] + [("h_n", k) for k in range(num_layers * directions)]


def inputs_that_move(module, kind, where, seq_len):
    """The input steps whose change changes the result, from the gradient of torch's own module."""
    x = torch.randn(seq_len, 1, module.input_size, requires_grad=True)
    output, h_n = module(x)
    value = (output if kind == "output" else h_n)[where[0]].sum()
    (grad,) = torch.autograd.grad(value, x)
    return {t for t in range(seq_len) if grad[t].abs().max() > 0}


@pytest.mark.parametrize("num_layers, bidirectional, seq_len", CONFIGS)
def test_the_inputs_a_result_depends_on_are_those_its_gradient_reaches(num_layers, bidirectional, seq_len):
    """For output[t] and every h_n row of a real nn.RNN, depends_on's input steps are exactly where d/dx is non-zero."""
    torch.manual_seed(num_layers * 10 + seq_len)
    module = nn.RNN(2, 3, num_layers=num_layers, bidirectional=bidirectional)
    directions = 2 if bidirectional else 1
    for kind, *where in results(num_layers, directions, seq_len):
        _, inputs = depends_on((kind, *where), num_layers, directions, seq_len)
        assert inputs == inputs_that_move(module, kind, where, seq_len), (kind, where)


@pytest.mark.parametrize("num_layers, bidirectional, seq_len", CONFIGS)
def test_a_cell_depends_on_what_it_reads_and_what_those_depend_on(num_layers, bidirectional, seq_len):
    """The dependencies are closed under reads: a cell's set holds itself and the sets of every cell it reads."""
    directions = 2 if bidirectional else 1
    for cell in itertools.product(range(num_layers), range(directions), range(seq_len)):
        cells, inputs = depends_on(("cell", *cell), num_layers, directions, seq_len)
        earlier, input_step = reads(cell, directions)
        assert cell in cells and (input_step is None or input_step in inputs)
        for other in earlier:
            if 0 <= other[2] < seq_len:
                other_cells, other_inputs = depends_on(("cell", *other), num_layers, directions, seq_len)
                assert other_cells <= cells and other_inputs <= inputs


def test_a_backward_cell_reads_the_step_after_it_and_an_upper_layer_both_directions_below():
    assert reads((0, 1, 2), 2) == ([(0, 1, 3)], 2)
    assert reads((1, 0, 2), 2) == ([(1, 0, 1), (0, 0, 2), (0, 1, 2)], None)
    assert reads((1, 0, 0), 1) == ([(1, 0, -1), (0, 0, 0)], None)  # (1, 0, -1) is h_0: no cell


@pytest.mark.parametrize(
    "result, message",
    [
        (("h_n", 4), r"h_n\[4\] does not exist: h_n has 2 rows"),
        (("input", 0), r"use \('output', t\)"),
        (("cell", 0, 2, 0), r"outside a graph of 1 layer\(s\), 2 direction\(s\) and 3 steps"),
    ],
)
def test_a_result_that_does_not_exist_is_refused_with_what_exists(result, message):
    with pytest.raises(ValueError, match=message):
        depends_on(result, 1, 2, 3)
