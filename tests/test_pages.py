"""helpers.pages: the glossary and the shape cheat sheet shown in a notebook, read from the package or the repo."""

import pytest
from IPython.display import Markdown

from helpers import pages

NOTEBOOKS = pages.Path(pages.__file__).resolve().parent.parent / "notebooks"


@pytest.fixture
def shown(monkeypatch):
    """What pages.display was given, instead of displaying it."""
    objects = []
    monkeypatch.setattr(pages, "display", objects.append)
    return objects


def test_every_glossary_entry_is_found_by_its_term(shown):
    """69 entries or more, each shown (alone or with others that share the words) when asked for by its term."""
    entries = pages._entries()
    assert len(entries) >= 60
    for term, entry in entries.items():
        shown.clear()
        pages.glossary(term)
        (markdown,) = shown
        assert isinstance(markdown, Markdown) and entry in markdown.data


def test_a_term_matches_in_any_case_and_as_part_of_a_longer_term(shown):
    pages.glossary("H_N")
    text = shown[0].data
    assert text.startswith("- **h_n**") and "**c_n**" not in text


def test_no_term_shows_the_whole_glossary_and_the_shape_sheet_shows_its_page(shown):
    pages.glossary()
    pages.shape_sheet()
    assert [m.data for m in shown] == [(NOTEBOOKS / name).read_text() for name in ("glossary.md", "shapes.md")]


@pytest.mark.parametrize(
    ("term", "error", "message"),
    [
        (3, TypeError, "term should be a str such as 'h_n', got int"),
        ("hn", ValueError, "no glossary entry's term contains 'hn'; close: 'h_n'"),
        ("zebra", ValueError, "no glossary entry's term contains 'zebra'. glossary() shows every entry."),
    ],
)
def test_a_bad_term_is_explained(shown, term, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        pages.glossary(term)
    assert shown == []
