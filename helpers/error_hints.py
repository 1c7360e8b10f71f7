"""What an error raised in a student's recurrent code usually means, said from torch's (or Python's) own message.

`explain(error, line)` reads the message (and the student's line that raised it, "line 6, in step: ...")
and returns one sentence on the usual cause in RNN, LSTM and GRU code and how to fix it, with the
sizes the message gives, or None when the message is not one of these. helpers.diagnose and
helpers.exercises add it to their report in place of a bare "the message above says what went wrong".
"""

import re


def _unpack(match, line):
    expected, got = match.group("expected"), match.group("got")
    if "chunk" in line or "split" in line:
        return (
            f"the unpacking wanted {expected} pieces and got {got}: chunk(n) (and split) cut along dim=0 unless told "
            "otherwise, and a dimension shorter than n gives fewer pieces. torch stacks the gates' rows, so a weight "
            "or bias is cut with .chunk(n, dim=0); a (batch, n * hidden_size) pre-activation with .chunk(n, dim=1)."
        )
    return (
        f"the unpacking wanted {expected} values and got {got}: unpacking a tensor walks along its first dimension "
        "(a, b = t takes t[0] and t[1]); check which dimension holds what you meant to unpack."
    )


def _too_many(match, line):
    if "chunk" in line or "split" in line:
        return (
            f"the unpacking wanted {match.group('expected')} pieces and got more: chunk(n) (and split) cut along "
            "dim=0 unless told otherwise; cut a weight's rows with .chunk(n, dim=0), a (batch, n * hidden_size) "
            "pre-activation with .chunk(n, dim=1)."
        )
    return None


def _target_size(match, line):
    return (
        f"cross_entropy reads dimension 1 of the scores as the classes, so it wanted targets of size "
        f"[{match.group('want')}] and got [{match.group('got')}]: give scores of shape (batch, seq_len, classes) as "
        "scores.transpose(1, 2), (batch, classes, seq_len), or flatten them to (batch * seq_len, classes) with the "
        "targets flattened to (batch * seq_len,)."
    )


def _stack_sizes(match, line):
    first, second = match.group("a"), match.group("b")
    empty = any(size.strip() == "0" for size in f"{first},{second}".split(","))
    why = (
        " One piece is empty: a slice that starts at or past the end of its dimension (x[..., H:] of a tensor only H "
        "wide); check the size you slice by (is it hidden_size, or the width of both directions?)."
        if empty
        else " Check the slices or indices that made each piece."
    )
    return f"torch.stack joins pieces of one shape, and these are [{first}] and [{second}].{why}"


def _cat_sizes(match, line):
    return (
        f"torch.cat joins pieces along dim={match.group('dim')}; every other dimension must agree, and one piece has "
        f"size {match.group('got')} where {match.group('want')} is expected: check dim= (the last dimension, -1, puts "
        "features side by side; dim 0 adds steps or rows) and the pieces' shapes."
    )


def _expanded(match, line):
    big, small = int(match.group("expanded")), int(match.group("existing"))
    gates = (
        f" {big} is {big // small} times {small}: in a gated layer the gates' stack has {big // small} * hidden_size "
        "values, so a bias or state sized hidden_size cannot be added to it (or one sized for the stack to a single "
        "gate)."
        if big % small == 0 and big // small in (3, 4)
        else ""
    )
    return (
        f"a tensor with {small} values on dimension {match.group('dim')} was added, or assigned, where {big} are."
        + gates
        + " Print each term's shape."
    )


def _mismatch(match, line):
    return (
        f"two tensors meet elementwise (+, *, torch.where, an assignment) with different sizes on dimension "
        f"{match.group('dim')}: {match.group('a')} and {match.group('b')}. Print each term's shape; each should be "
        "(batch, hidden_size), or a bias (hidden_size,) that broadcasts over the batch."
    )


def _mv(match, line):
    return (
        f"a matrix ({match.group('rows')}x{match.group('columns')}) times a vector of {match.group('vec')} values "
        "(torch.mv, or @ with a 1-D tensor): for a batch keep both sides 2-D, (batch, n) @ (n, m), and a scaling "
        "per unit is an elementwise *, not torch.diag of a batch."
    )


def _product(match, line):
    a, b, c, d = match.group("a", "b", "c", "d")
    return (
        f"({a}x{b}) @ ({c}x{d}) needs {b} == {c}: torch stores each weight as (out_features, in_features), so a batch "
        "of rows x multiplies it as x @ W.T."
    )


def _dtype(match, line):
    return (
        "two tensors of different dtypes meet (float64 and float32): torch.tensor of Python floats with "
        "dtype=torch.float64, numpy arrays (float64 by default) or .double() make float64, while a layer's weights "
        "are float32 unless it was converted. Make every tensor the weights' dtype, e.g. x.to(W_ih.dtype)."
    )


def _numpy_grad(match, line):
    return (
        "a tensor that autograd follows cannot become a numpy array: compute with torch's own functions (torch.tanh, "
        "@, torch.sigmoid), which keep the gradient; .detach().numpy() would cut it."
    )


def _index(match, line):
    return (
        f"index {match.group('index')} is past the end of a dimension of size {match.group('size')}: indices count "
        "from 0, so the last of n is n - 1 (a length used as an index needs - 1)."
    )


def _dim_range(match, line):
    return (
        f"dim={match.group('got')} on a tensor with fewer dimensions (the valid ones run from {match.group('low')} to "
        f"{match.group('high')}): a step's x_t and h are (batch, features), 2-D; a layer's input and output are 3-D."
    )


def _second_backward(match, line):
    return (
        "backward ran twice through the same graph: a state kept from a previous batch still links to it; detach the "
        "carried state between batches (h = h.detach()), or compute the loss once."
    )


def _sorted(match, line):
    return (
        "pack_padded_sequence wants the lengths longest first unless told otherwise: pass enforce_sorted=False (torch "
        "sorts and unsorts for you), or sort the batch and its lengths together."
    )


def _device(match, line):
    return (
        "tensors on different devices meet: make every tensor you create follow the layer's, e.g. "
        "torch.zeros(..., device=W_ih.device), or x.to(W_ih.device)."
    )


def _tuple_attribute(match, line):
    return (
        f"a tuple has no .{match.group('name')}: an LSTM's state is the pair (h, c), and nn.LSTM returns (output, "
        "(h_n, c_n)); take hx[0] for h and hx[1] for c."
    )


# (torch's or Python's message, as a regular expression with named groups; what it usually means)
HINTS = (
    (r"not enough values to unpack \(expected (?P<expected>\d+), got (?P<got>\d+)\)", _unpack),
    (r"too many values to unpack \(expected (?P<expected>\d+)", _too_many),
    (r"Expected target size \[(?P<want>[\d, ]+)\], got \[(?P<got>[\d, ]+)\]", _target_size),
    (
        r"stack expects each tensor to be equal size, but got \[(?P<a>[\d, ]*)\] at entry \d+ and \[(?P<b>[\d, ]*)\]",
        _stack_sizes,
    ),
    (
        r"Sizes of tensors must match except in dimension (?P<dim>\d+)\. Expected size (?P<want>\d+) but got size "
        r"(?P<got>\d+)",
        _cat_sizes,
    ),
    (
        r"The expanded size of the tensor \((?P<expanded>\d+)\) must match the existing size \((?P<existing>\d+)\) at "
        r"non-singleton dimension (?P<dim>\d+)",
        _expanded,
    ),
    (
        r"The size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) at non-singleton "
        r"dimension (?P<dim>\d+)",
        _mismatch,
    ),
    (r"size mismatch, got input \(\d+\), mat \((?P<rows>\d+)x(?P<columns>\d+)\), vec \((?P<vec>\d+)\)", _mv),
    (r"shapes cannot be multiplied \((?P<a>\d+)x(?P<b>\d+) and (?P<c>\d+)x(?P<d>\d+)\)", _product),
    (
        r"expected (m1 and m2|mat1 and mat2|both vectors) to have the same dtype|expected scalar type (Double|Float) "
        r"but found (Double|Float)|Found dtype (Double|Float) but expected (Double|Float)|same dtype",
        _dtype,
    ),
    (r"Can't call numpy\(\) on Tensor that requires grad", _numpy_grad),
    (r"index (?P<index>-?\d+) is out of bounds for dimension \d+ with size (?P<size>\d+)", _index),
    (
        r"Dimension out of range \(expected to be in range of \[(?P<low>-?\d+), (?P<high>-?\d+)\], but got "
        r"(?P<got>-?\d+)\)",
        _dim_range,
    ),
    (r"Trying to backward through the graph a second time", _second_backward),
    (r"must be sorted in decreasing order when `enforce_sorted` is True", _sorted),
    (r"Expected all tensors to be on the same device", _device),
    (r"'tuple' object has no attribute '(?P<name>\w+)'", _tuple_attribute),
)


def explain(error, line=""):
    """One sentence on what `error` (an exception raised in the student's code) usually means; None if unknown.

    `line` is where it was raised, as helpers.sandbox gives it ("line 6, in step: h = ..."); it tells a chunk
    from any other unpacking.
    """
    message = str(error)
    for pattern, hint in HINTS:
        match = re.search(pattern, message)
        if match:
            said = hint(match, line or "")
            if said:
                return said
    return None


__all__ = ["explain"]
