"""helpers.error_hints explains the errors students' recurrent code raises, from torch's own messages.

Each error here is raised by torch (or Python) itself on this machine's torch, so a change in its
wording shows up as a failing test rather than a hint that silently stops matching.
"""

import numpy as np
import pytest
import torch
from torch.nn import functional
from torch.nn.utils.rnn import pack_padded_sequence

from helpers.error_hints import explain


def raised(fn):
    try:
        fn()
    except Exception as error:  # the error torch itself raises
        return error
    raise AssertionError("no error raised")


def unpack_gates():
    i, f, g, o = torch.randn(8, 3).chunk(4, dim=1)


def unpack_rows():
    a, b, c = torch.randn(2, 3)


CASES = [
    (unpack_gates, "line 3, in step: i, f, g, o = W.chunk(4, dim=1)", "chunk(n) (and split) cut along dim=0"),
    (unpack_rows, "line 3, in step: a, b, c = x", "unpacking a tensor walks along its first dimension"),
    (
        lambda: functional.cross_entropy(torch.randn(4, 34, 2), torch.zeros(4, 34, dtype=torch.long)),
        "",
        "cross_entropy reads dimension 1 of the scores as the classes",
    ),
    (lambda: torch.stack([torch.randn(3, 4), torch.randn(3, 0)]), "", "One piece is empty"),
    (lambda: torch.stack([torch.randn(3, 4), torch.randn(3, 2)]), "", "torch.stack joins pieces of one shape"),
    (lambda: torch.cat([torch.randn(3, 4), torch.randn(2, 4)], dim=1), "", "torch.cat joins pieces along dim=1"),
    (
        lambda: torch.randn(4).expand(3, 16),
        "",
        "16 is 4 times 4: in a gated layer the gates' stack has 4 * hidden_size values",
    ),
    (lambda: torch.randn(3, 4) + torch.randn(2, 4), "", "two tensors meet elementwise"),
    (lambda: torch.mv(torch.randn(2, 3), torch.randn(2)), "", "a matrix (2x3) times a vector of 2 values"),
    (lambda: torch.randn(3, 4) @ torch.randn(3, 4), "", "(3x4) @ (3x4) needs 4 == 3"),
    (lambda: torch.randn(3, 4) @ torch.randn(4, 2, dtype=torch.float64), "", "two tensors of different dtypes meet"),
    (lambda: torch.randn(3, requires_grad=True).numpy(), "", "cannot become a numpy array"),
    (lambda: torch.randn(3)[5], "", "index 5 is past the end of a dimension of size 3"),
    (lambda: torch.randn(3, 4).sum(dim=2), "", "dim=2 on a tensor with fewer dimensions"),
    (
        lambda: pack_padded_sequence(torch.randn(5, 3, 2), torch.tensor([2, 5, 3])),
        "",
        "pass enforce_sorted=False",
    ),
    (lambda: (torch.randn(2), torch.randn(2)).shape, "", "a tuple has no .shape: an LSTM's state is the pair (h, c)"),
]


@pytest.mark.parametrize("fn, line, said", CASES, ids=[said[:40] for _, _, said in CASES])
def test_a_common_error_is_explained_from_torchs_own_message(fn, line, said):
    assert said in explain(raised(fn), line)


def test_backward_twice_is_explained():
    h = torch.tanh(torch.randn(3, requires_grad=True))
    h.sum().backward()
    assert "detach the carried state between batches" in explain(raised(lambda: h.sum().backward()))


def test_an_error_it_does_not_know_gets_no_hint():
    assert explain(ValueError("my own message")) is None
    assert explain(raised(lambda: np.log("x"))) is None
