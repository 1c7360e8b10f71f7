"""The glossary and the shape cheat sheet, shown in the notebook: `glossary(term)`, `shape_sheet()`.

The pages live beside the notebooks (notebooks/glossary.md, notebooks/shapes.md), where the notebooks'
links find them. Where a notebook is opened alone (Colab and Kaggle open one notebook, not its folder), those
links lead nowhere, so the package carries the same two files (setup.py copies them into helpers/docs/ when
the wheel is built) and these functions show them. Introduced in every notebook's opening cell.
"""

import difflib
from pathlib import Path

from IPython.display import Markdown, display

from helpers._validate import student_facing


def _read(name):
    """The page's markdown: the wheel's copy, else (an editable install) the repository's, beside the notebooks."""
    here = Path(__file__).resolve().parent
    packaged = here / "docs" / name
    return (packaged if packaged.is_file() else here.parent / "notebooks" / name).read_text(encoding="utf-8")


def _entries():
    """{term: entry} of the glossary: a line '- **term** ...' and the indented lines that continue it."""
    entries, term = {}, None
    for line in _read("glossary.md").splitlines():
        if line.startswith("- **"):
            term = line[4 : line.index("**", 4)]
            entries[term] = line
        elif line.startswith("  ") and term:
            entries[term] += "\n" + line
        else:
            term = None
    return entries


@student_facing
def glossary(term=None):
    """Show the glossary, or only the entries whose term contains `term` (any case), e.g. glossary("h_n")."""
    if term is None:
        return display(Markdown(_read("glossary.md")))
    if not isinstance(term, str):
        raise TypeError(f"glossary(term): term should be a str such as 'h_n', got {type(term).__name__}")
    entries = _entries()
    found = [entry for name, entry in entries.items() if term.lower() in name.lower()]
    if not found:
        close = difflib.get_close_matches(term.lower(), [name.lower() for name in entries], n=3, cutoff=0.5)
        hint = f"; close: {', '.join(repr(name) for name in close)}" if close else ""
        raise ValueError(f"no glossary entry's term contains {term!r}{hint}. glossary() shows every entry.")
    display(Markdown("\n".join(found)))


def shape_sheet():
    """Show the shape cheat sheet: every tensor's shape for nn.RNN, nn.LSTM and nn.GRU."""
    display(Markdown(_read("shapes.md")))
