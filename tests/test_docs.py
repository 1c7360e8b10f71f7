"""The reference pages beside the notebooks: every shape in notebooks/shapes.md checked against torch, and
every link in notebooks/glossary.md and notebooks/shapes.md followed.

The tables of shapes.md are parsed, not copied: each symbolic shape, e.g. (D·num_layers, N, H_out),
is evaluated for concrete sizes and compared with what torch's modules return. Editing a shape in
the page without it being true makes a test fail.
"""

import ast
import itertools
import re
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

from helpers import pages

# The glossary and the shape cheat sheet sit beside the notebooks, so their links work wherever the folder goes.
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
DOCS = NOTEBOOKS
SHAPES = DOCS / "shapes.md"
GLOSSARY = DOCS / "glossary.md"

# Two sets of sizes: a symbol written in place of another that happens to be equal in one set
# (H_in = D·P in the first, N = P in the second) gives a different number in the other.
SIZES = [
    {"L": 5, "N": 3, "H_in": 4, "H": 6, "P": 2, "sorted": [5, 3, 2], "unsorted": [2, 5, 3]},
    {"L": 7, "N": 4, "H_in": 3, "H": 5, "P": 4, "sorted": [7, 6, 3, 1], "unsorted": [3, 7, 1, 6]},
]
MODULES = {"RNN": (nn.RNN, 1), "LSTM": (nn.LSTM, 4), "GRU": (nn.GRU, 3)}  # G gate blocks
INPUTS = ["batched", "unbatched", "packed sorted", "packed unsorted"]

# The conditions a table row may carry in parentheses after its names, e.g. `c_n` (LSTM).
CONDITIONS = {
    "LSTM": lambda c: c["module"] == "LSTM",
    "D = 2": lambda c: c["D"] == 2,
    "P > 0": lambda c: c["P"] > 0,
    "k ≥ 1": lambda c: c["k"] >= 1,
    "packed": lambda c: c["input"].startswith("packed"),
    "enforce_sorted=True": lambda c: c["input"] == "packed sorted",
    "enforce_sorted=False": lambda c: c["input"] == "packed unsorted",
}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """These layers are tiny: one thread runs them several times faster than two that wait for each other."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def read_tables(path):
    """Each table of a markdown file as (header, rows), keyed by the heading above it."""
    tables, heading, header = {}, None, None
    for line in path.read_text().splitlines() + [""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if not line.startswith("|"):
            header = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            tables[heading] = (header, [])
        elif not set("".join(cells)) <= set("-: "):
            tables[heading][1].append(dict(zip(header, cells, strict=True)))
    return tables


TABLES = read_tables(SHAPES)


def names_and_conditions(cell):
    """The code spans of a cell, and the conditions in parentheses after them."""
    names = re.findall(r"`([^`]+)`", cell)
    rest = re.sub(r"`[^`]+`", "", cell)
    conditions = [c.strip() for group in re.findall(r"\(([^)]*)\)", rest) for c in group.split(",")]
    unknown = [c for c in conditions if c not in CONDITIONS]
    assert not unknown, f"shapes.md: condition {unknown} in {cell!r} is not one the test knows: {list(CONDITIONS)}"
    assert set(re.sub(r"\([^)]*\)", "", rest)) <= set(", "), f"shapes.md: unexpected text in {cell!r}"
    return names, conditions


def holds(conditions, config):
    return all(CONDITIONS[c](config) for c in conditions)


def evaluate(expression, env):
    """A Python expression from the page, with only the page's names (and `list`) in scope."""
    return eval(expression.replace("·", "*"), {"__builtins__": {"list": list}}, env)


def expected_shape(cell, env):
    """A shape cell, e.g. (D·num_layers, N, H_out), evaluated; None stays None."""
    if cell == "None":
        return None
    value = evaluate(cell, env)
    assert isinstance(value, tuple), f"shapes.md: {cell!r} is not a shape"
    return tuple(int(v) for v in value)


def configurations():
    for sizes, module, num_layers, D, batch_first, kind in itertools.product(
        range(len(SIZES)), MODULES, (1, 3), (1, 2), (False, True), INPUTS
    ):
        for P in (0, SIZES[sizes]["P"]) if module == "LSTM" else (0,):
            config = {"sizes": sizes, "module": module, "num_layers": num_layers, "D": D}
            config |= {"batch_first": batch_first, "P": P, "input": kind}
            name = f"{module}-layers{num_layers}-D{D}-bf{int(batch_first)}-P{P}-{kind.replace(' ', '_')}-sizes{sizes}"
            yield pytest.param(config, id=name)


CONFIGURATIONS = list(configurations())


def symbols(config):
    """The legend's symbols for one configuration."""
    size = SIZES[config["sizes"]]
    lengths = size[config["input"].removeprefix("packed ")] if config["input"].startswith("packed") else None
    L, N, H, P = size["L"], size["N"], size["H"], config["P"]
    return {
        "L": L,
        "N": N,
        "H_in": size["H_in"],
        "H": H,
        "P": P,
        "H_out": P if P > 0 else H,
        "D": config["D"],
        "G": MODULES[config["module"]][1],
        "S": sum(lengths) if lengths else N * L,
        "num_layers": config["num_layers"],
    }


def run(config):
    """Build the module, run it on the configuration's input; return it with every named result."""
    torch.manual_seed(0)
    s = symbols(config)
    packed = config["input"].startswith("packed")
    size = SIZES[config["sizes"]]
    lengths = size[config["input"].removeprefix("packed ")] if packed else [s["L"]] * s["N"]
    module = MODULES[config["module"]][0](
        s["H_in"],
        s["H"],
        num_layers=config["num_layers"],
        bidirectional=config["D"] == 2,
        batch_first=config["batch_first"],
        **({"proj_size": config["P"]} if config["P"] else {}),
    )
    sequences = [torch.randn(n, s["H_in"]) for n in lengths]
    results = {"torch": torch}
    if config["input"] == "unbatched":
        results["input"] = sequences[0]
    elif not packed:
        results["input"] = torch.stack(sequences, dim=0 if config["batch_first"] else 1)
    else:
        results["padded"] = pad_sequence(sequences, batch_first=config["batch_first"])
        results["packed"] = results["input"] = pack_padded_sequence(
            results["padded"],
            lengths,
            batch_first=config["batch_first"],
            enforce_sorted=config["input"] == "packed sorted",
        )
    results["output"], state = module(results["input"])
    results["h_n"], results["c_n"] = state if config["module"] == "LSTM" else (state, None)
    if packed:
        results["out_padded"], results["lengths"] = pad_packed_sequence(
            results["output"], batch_first=config["batch_first"]
        )
    return module, sequences, results


def check_inputs_and_outputs(config, module, results):
    """The 'Input and output' or 'Packed input' table; returns the number of shapes checked."""
    s = symbols(config)
    if config["input"].startswith("packed"):
        header, rows = TABLES["Packed input"]
        column = f"batch_first={config['batch_first']}"
    else:
        header, rows = TABLES["Input and output"]
        column = "unbatched (2-D input)" if config["input"] == "unbatched" else f"batch_first={config['batch_first']}"
    checked, initial = 0, {}
    for row in rows:
        names, conditions = names_and_conditions(row[header[0]])
        if not holds(conditions, config):
            continue
        shape = expected_shape(row[column], s)
        for name in names:
            checked += 1
            if name in ("h_0", "c_0"):
                initial[name] = shape
                continue
            actual = evaluate(name, results)
            if shape is None:
                assert actual is None, f"{name} is {actual!r}, the page says None"
            else:
                assert tuple(actual.shape) == shape, f"{name}: torch {tuple(actual.shape)}, the page {shape}"
    # Initial states of the stated shapes are accepted, and zeros give the default result.
    h_0 = torch.zeros(initial["h_0"])
    hx = (h_0, torch.zeros(initial["c_0"])) if config["module"] == "LSTM" else h_0
    output, state = module(results["input"], hx)
    output = output.data if config["input"].startswith("packed") else output
    expected = results["output"].data if config["input"].startswith("packed") else results["output"]
    assert torch.equal(output, expected)
    return checked


def check_parameters(config, module):
    """The 'Parameters' table: every parameter matches exactly one row, with that row's shape."""
    header, rows = TABLES["Parameters"]
    s = symbols(config)
    parameters = dict(module.named_parameters())
    reverse = {name.removesuffix("_reverse") for name in parameters if name.endswith("_reverse")}
    forward = {name for name in parameters if not name.endswith("_reverse")}
    assert reverse == (forward if config["D"] == 2 else set())
    for name, parameter in parameters.items():
        base = name.removesuffix("_reverse")
        shapes = []
        for row in rows:
            names, conditions = names_and_conditions(row[header[0]])
            for pattern in names:
                match = re.fullmatch(re.escape(pattern).replace(re.escape("{k}"), r"(?P<k>\d+)"), base)
                if match and holds(conditions, config | {"k": int(match.groupdict().get("k") or 0)}):
                    shapes.append(row["shape"])
        assert len(shapes) == 1, f"{name} matches {len(shapes)} rows of the Parameters table"
        assert tuple(parameter.shape) == expected_shape(shapes[0], s), f"{name}: torch {tuple(parameter.shape)}"
    return len(parameters)


def check_final_states(config, results):
    """The 'Final states' table, for batch_first=True: shapes, and the values each row names."""
    if not config["batch_first"] or config["input"] == "unbatched":
        return 0
    header, rows = TABLES["Final states (batch_first=True)"]
    s = symbols(config)
    checked = 0
    for row in rows:
        (expression,), conditions = names_and_conditions(row[header[0]])
        if ("packed" in conditions) != config["input"].startswith("packed") or not holds(conditions, config):
            continue
        (other,) = re.findall(r"`([^`]+)`", row["same values as"])
        different = row["same values as"].startswith("not ")
        for k, d, b in itertools.product(range(config["num_layers"]), range(config["D"]), range(s["N"])):
            env = results | s | {"k": k, "d": d, "b": b}
            value = evaluate(expression, env)
            assert tuple(value.shape) == expected_shape(row["shape"], env), f"{expression} at k={k}, d={d}, b={b}"
            reference = torch.as_tensor(evaluate(other, env), dtype=value.dtype)
            same = reference.shape in (value.shape, ()) and torch.equal(value, reference.expand(value.shape))
            assert same != different, f"{expression} vs {other} at k={k}, d={d}, b={b}"
            checked += 1
    return checked


def check_each_sequence_alone(config, module, sequences, results):
    """Row b of a batch (in the page's layout) is what sequence b gives alone: layout and order are torch's."""
    if config["input"] == "unbatched":
        return
    output = results["out_padded"] if config["input"].startswith("packed") else results["output"]
    for b, sequence in enumerate(sequences):
        alone, state = module(sequence)
        h_alone = state[0] if config["module"] == "LSTM" else state
        row = output[b] if config["batch_first"] else output[:, b]
        torch.testing.assert_close(row[: len(sequence)], alone, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(results["h_n"][:, b], h_alone, atol=1e-5, rtol=1e-5)


def check_all(config):
    module, sequences, results = run(config)
    check_each_sequence_alone(config, module, sequences, results)
    return (
        check_inputs_and_outputs(config, module, results)
        + check_parameters(config, module)
        + check_final_states(config, results)
    )


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("config", CONFIGURATIONS)
def test_shapes_md_matches_torch(config):
    """Every shape of shapes.md that applies to this configuration is what torch returns."""
    assert check_all(config) > 0


def test_shapes_md_uses_only_its_legend():
    """Every symbol in a shape is in the legend (or is num_layers, lengths, b, k, d)."""
    headings = list(TABLES)
    legend = set(TABLES[headings[0]][0])
    assert legend == set(symbols(CONFIGURATIONS[0].values[0])) - {"num_layers"}
    assert {"Input and output", "Packed input", "Parameters", "Final states (batch_first=True)"} <= set(headings)
    for header, rows in list(TABLES.values())[1:]:
        for row in rows:
            for column in ("shape",) + tuple(c for c in header if c.startswith(("batch_first", "unbatched"))):
                if column in row and row[column] != "None":
                    tree = ast.parse(row[column].replace("·", "*"), mode="eval")
                    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
                    assert used <= legend | {"num_layers", "lengths", "b"}, f"{row[column]}: {used - legend}"


def markdown_links(path):
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", path.read_text())


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_relative_links_point_to_existing_files(path):
    """Every link in the reference pages that is not a web address names a file in the notebooks' own folder."""
    for target in markdown_links(path):
        if re.match(r"[a-z]+:", target):
            continue
        file = target.split("#")[0]
        assert "/" not in file, (
            f"{path.name}: {target} leaves the notebooks' folder (a hosted copy has only that folder)"
        )
        assert not file or (path.parent / file).exists(), f"{path.name}: {target} does not exist"


def test_every_glossary_entry_links_the_notebook_that_introduces_it():
    """Each entry has code and a link '[NN …](NN_….ipynb)' to an existing notebook."""
    entries = list(pages._entries().values())  # the parser helpers.glossary() uses
    assert len(entries) >= 40
    for entry in entries:
        term = entry[:60]
        links = re.findall(r"\[(\d\d)[^\]]*\]\(((\d\d)_\w+\.ipynb)\)", entry)
        assert links, f"glossary: no notebook link in {term!r}"
        for label, file, number in links:
            assert (NOTEBOOKS / file).exists(), f"glossary: {file} does not exist ({term!r})"
            assert label == number, f"glossary: link text {label} for {file} ({term!r})"
        assert "`" in entry.split("**", 2)[2], f"glossary: no name in code font in {term!r}"
