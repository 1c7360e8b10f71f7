"""The slide decks of `make slides`: one per notebook, with the notebook's slides, and fully offline.

Reads build/slides/ (it does not build it): skipped when there are no decks, and for a deck older
than its notebook. `make test` and `make test-browser` run `make slides` first, so in CI every
deck is fresh and checked. tests/browser/test_slides.py opens the decks in Chromium.
"""

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SLIDES = ROOT / "build" / "slides"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}
# Attributes whose URL the browser loads or follows.
URL_ATTRIBUTES = {"src", "href", "srcset", "data", "poster", "action", "formaction", "xlink:href", "background"}
CSS_URL = re.compile(r"""url\(\s*["']?([^"')\s]+)|@import\s+["']([^"']+)""")
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
# In JavaScript: `import ... from "x"`, `import("x")`, any string literal that is a URL, and the
# vendor/ paths that require() and the widget loader get.
JS_URL = re.compile(
    r"""\bfrom\s*["']([^"']+)|\bimport\s*\(\s*["']([^"']+)|["']((?:[a-z][a-z0-9+.-]*:)?//[^"'\s]*)["']"""
    r"""|["'](vendor/[^"'\s]+)["']""",
    re.I,
)
ANY_URL = re.compile(r"\b(?:https?|wss?|ftp)://[^\s\"'<>()\\]+", re.I)
JS_TYPES = {"", "text/javascript", "application/javascript", "module", "text/x-mathjax-config"}

needs_decks = pytest.mark.skipif(
    not (SLIDES / "index.html").exists(), reason="build/slides/ has no decks: run `make slides` first"
)


class Deck(HTMLParser):
    """What a deck's HTML holds: URLs (with where each is), slide sections, notes, fragments."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.urls = []  # (where, url)
        self.sections = []  # the section nesting depth at which each <section> opens
        self.depth = 0
        self.notes = self.fragments = 0
        self._in = None  # "script" or "style" while inside one, with its code collected
        self._code = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name, value in attrs.items():
            if name in URL_ATTRIBUTES and value:
                urls = [part.split()[0] for part in value.split(",") if part.strip()] if name == "srcset" else [value]
                self.urls += [(f"<{tag} {name}>", url) for url in urls]
            if name == "style" and value:
                self.css(f"<{tag} style>", value)
        classes = (attrs.get("class") or "").split()
        if tag == "section":
            self.depth += 1
            self.sections.append(self.depth)
        elif tag == "aside" and "notes" in classes:
            self.notes += 1
        elif tag == "div" and "fragment" in classes:
            self.fragments += 1
        elif tag == "script" and (attrs.get("type") or "").lower() in JS_TYPES:
            self._in, self._code = "script", []
        elif tag == "style":
            self._in, self._code = "style", []

    def handle_endtag(self, tag):
        if tag == "section":
            self.depth -= 1
        elif tag == self._in:
            code, self._in = "".join(self._code), None
            if tag == "style":
                self.css("<style>", code)
            else:
                for match in JS_URL.finditer(code):
                    self.urls.append(("<script>", next(group for group in match.groups() if group)))

    def handle_data(self, data):
        if self._in:
            self._code.append(data)

    def css(self, where, code):
        for match in CSS_URL.finditer(CSS_COMMENT.sub("", code)):
            self.urls.append((where, match[1] or match[2]))


def remote(url):
    """Whether url points off this machine (an absolute or protocol-relative URL to another host)."""
    parts = urlsplit(url.strip())
    if parts.scheme in ("", "file", "data", "blob", "about", "javascript", "mailto") and not url.strip().startswith(
        "//"
    ):
        return False
    return (parts.hostname or "") not in LOCAL_HOSTS


def slide_types(nb):
    return [cell.get("metadata", {}).get("slideshow", {}).get("slide_type") or "-" for cell in nb["cells"]]


def expected(nb):
    """(slides, fragments, notes) as nbconvert makes them: the first shown cell opens the first slide."""
    types = slide_types(nb)
    first = next(i for i, kind in enumerate(types) if kind not in ("skip", "notes"))
    rest = types[first + 1 :]
    return 1 + sum(kind in ("slide", "subslide") for kind in rest), rest.count("fragment"), types.count("notes")


def fresh_deck(notebook):
    """The deck of notebook, parsed; skips when it is older than the notebook."""
    deck = SLIDES / f"{notebook.stem}.slides.html"
    assert deck.exists(), f"no deck for {notebook.name}: `make slides` should have written {deck}"
    if deck.stat().st_mtime < notebook.stat().st_mtime:
        pytest.skip(f"{deck.name} is older than {notebook.name}: run `make slides`")
    return deck, Deck(deck.read_text())


@needs_decks
def test_every_notebook_has_a_deck_and_the_index_links_each_deck():
    """build/slides/ has NN_name.slides.html for each notebook, no other deck, and index.html links them all."""
    wanted = {f"{notebook.stem}.slides.html" for notebook in NOTEBOOKS}
    assert NOTEBOOKS, "no notebooks found"
    assert {deck.name for deck in SLIDES.glob("*.slides.html")} == wanted
    links = {
        url for where, url in Deck((SLIDES / "index.html").read_text()).urls if where == "<a href>" and not remote(url)
    }
    handouts = {f"docs/{page.stem}.html" for page in (ROOT / "notebooks").glob("*.md")}
    # The PDFs of `make handouts`, linked once printed (not before, nor once their deck is newer).
    pdfs = {
        f"handouts/{name.removesuffix('.slides.html')}{suffix}.pdf"
        for name in wanted
        for suffix in ("", "-notes", "-article")
    }
    assert wanted | handouts <= links <= wanted | handouts | pdfs


@needs_decks
def test_every_link_on_the_index_resolves_inside_build_slides_with_or_without_the_pdfs():
    """Each link of index.html (decks, docs pages, handout PDFs) is a file in build/slides/, and each
    linked PDF is not older than its deck: the folder stays self-contained, before and after `make handouts`."""
    for where, url in Deck((SLIDES / "index.html").read_text()).urls:
        if where != "<a href>" or urlsplit(url).scheme or url.startswith("#"):
            continue
        target = SLIDES / unquote(urlsplit(url).path)
        assert target.is_file(), f"index.html links {url}, which is not in build/slides/"
        if url.startswith("handouts/"):
            deck = SLIDES / f"{target.stem.removesuffix('-notes').removesuffix('-article')}.slides.html"
            assert target.stat().st_mtime >= deck.stat().st_mtime, f"index.html links {url}, older than {deck.name}"


def test_the_index_links_a_decks_pdfs_only_once_printed_and_not_older_than_the_deck(script, tmp_path):
    """write_index: no PDF yet -> no link and a hint to run `make handouts`; fresh PDFs -> both linked; a deck
    rebuilt after them -> its links are gone."""
    import os

    build = script("slides/build.py")
    deck = tmp_path / "01_a.slides.html"
    deck.write_text("deck")
    decks = [(deck.name, "01 · A", 3, 5)]

    def index_links():
        build.write_index(tmp_path, decks)
        page = (tmp_path / "index.html").read_text()
        return page, {url for where, url in Deck(page).urls if url.startswith("handouts/")}

    page, links = index_links()
    assert links == set() and "make handouts" in page
    (tmp_path / "handouts").mkdir()
    for name in ("01_a.pdf", "01_a-notes.pdf"):
        (tmp_path / "handouts" / name).write_bytes(b"%PDF-1.4")
    page, links = index_links()
    assert links == {"handouts/01_a.pdf", "handouts/01_a-notes.pdf"} and "make handouts" not in page
    later = (tmp_path / "handouts" / "01_a.pdf").stat().st_mtime + 10
    os.utime(deck, (later, later))  # the deck was rebuilt after the PDFs were printed
    assert index_links()[1] == set()


@needs_decks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_deck_s_first_slide_states_the_licence(notebook, script):
    """The licence line (CC BY 4.0 for the material, MIT for the code) closes the first slide, so the handout's page 1."""
    deck, _ = fresh_deck(notebook)
    text = deck.read_text()
    licence = script("slides/build.py").LICENCE
    assert text.count(licence) == 1
    assert text.index(licence) < text.index("</section>"), "the licence is not on the first slide"


@needs_decks
def test_the_index_and_the_reference_pages_state_the_licence(script):
    licence = script("slides/build.py").LICENCE
    assert "creativecommons.org/licenses/by/4.0/" in licence and "opensource.org/license/mit" in licence
    for page in [SLIDES / "index.html", *(SLIDES / "docs").glob("*.html")]:
        assert licence in page.read_text(), page.name


@needs_decks
def test_the_handouts_are_pages_beside_the_decks_whose_links_all_resolve():
    """notebooks/*.md become build/slides/docs/*.html; every local link in them and to them from a deck resolves."""
    pages = sorted((SLIDES / "docs").glob("*.html"))
    assert {page.stem for page in pages} == {doc.stem for doc in (ROOT / "notebooks").glob("*.md")}
    for page in [*pages, *SLIDES.glob("*.slides.html")]:
        for where, url in Deck(page.read_text()).urls:
            path = unquote(urlsplit(url).path)
            if where == "<a href>" and path and not urlsplit(url).scheme and not path.startswith("#"):
                assert (page.parent / path).is_file(), f"{page.name} links {url}, which is not in build/slides/"


@needs_decks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_deck_loads_nothing_from_the_network_and_every_local_file_it_names_exists(notebook):
    """No src/href/CSS url()/@import/JS import or URL string points off the machine; local paths resolve."""
    deck, parsed = fresh_deck(notebook)
    assert parsed.urls, "found no URL at all: the parser is broken"
    # A link (<a href>) to a public source loads nothing until it is clicked: a citation, allowed.
    links = {url for where, url in parsed.urls if where == "<a href>"}
    offenders = [f"{where} {url}" for where, url in parsed.urls if remote(url) and where != "<a href>"]
    assert not offenders, f"{deck.name} loads from the network:\n" + "\n".join(offenders)
    # Belt and braces: no other http(s) URL to another host outside CSS comments (attributions).
    text = CSS_COMMENT.sub("", deck.read_text())
    loose = [url for url in ANY_URL.findall(text) if remote(url) and html.unescape(url) not in links]
    assert not loose, f"{deck.name} names remote URLs: {sorted(set(loose))}"

    # What the deck loads must be there; a link (<a href>) may lead to a lesson not written yet.
    local = {
        unquote(urlsplit(url).path) for where, url in parsed.urls if not urlsplit(url).scheme and where != "<a href>"
    }
    local = {path for path in local if path and not path.startswith(("#", "/"))}
    assert any(path.startswith("vendor/") for path in local), "the deck names no vendor/ file"
    missing = sorted(path for path in local if not (deck.parent / path).exists())
    assert not missing, f"{deck.name} names local files that are not in build/slides/: {missing}"


@needs_decks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_deck_has_the_notebooks_slides_fragments_and_notes(notebook):
    """One reveal.js slide per cell of type slide or subslide, a fragment per fragment cell, notes as <aside class="notes">."""
    _, parsed = fresh_deck(notebook)
    slides, fragments, notes = expected(json.loads(notebook.read_text()))
    assert parsed.depth == 0, "unbalanced <section> tags"
    assert set(parsed.sections) == {1, 2}, "slides nest deeper than slide > subslide"
    assert parsed.sections.count(2) == slides  # every slide holds one or more subslide sections
    assert parsed.fragments == fragments
    assert parsed.notes == notes


@needs_decks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_an_error_shows_on_a_slide_as_its_name_and_message(notebook):
    """A stored error appears as 'ValueError: message', with no traceback frames (slides/templates/rnns)."""
    deck, _ = fresh_deck(notebook)
    text = html.unescape(deck.read_text())
    errors = [
        o
        for c in json.loads(notebook.read_text())["cells"]
        for o in c.get("outputs", [])
        if o["output_type"] == "error"
    ]
    for error in errors:
        shown = f'<span class="ansi-red-fg">{error["ename"]}</span>: {error["evalue"]}'
        assert shown in text, f"{deck.name} does not show {error['ename']}: {error['evalue'][:60]}"
    assert "Traceback (most recent call last)" not in text and "Cell In[" not in text


def test_the_url_checks_catch_what_they_should():
    """The parser and remote() flag CDN loads in each form a deck could carry them, and pass local ones."""
    page = """<link href="https://cdn.example.org/a.css"><script src="//cdn.example.org/b.js"></script>
    <img srcset="x.png 1x, http://example.org/y.png 2x"><div style="background: url('http://e.org/i.png')"></div>
    <style>/* https://attribution.example.org */ @import "https://fonts.example.org/f.css";</style>
    <script>var s = 'https://unpkg.com/x.js'; require(["vendor/r.js"]);</script>
    <script type="module">import m from "https://cdn.example.org/m.mjs";</script>
    <a href="http://localhost:8888/lab">local</a><a href="#top">top</a><img src="data:image/png;base64,AA">"""
    flagged = sorted(url for _, url in Deck(page).urls if remote(url))
    assert flagged == sorted(
        [
            "https://cdn.example.org/a.css",
            "//cdn.example.org/b.js",
            "http://example.org/y.png",
            "http://e.org/i.png",
            "https://fonts.example.org/f.css",
            "https://unpkg.com/x.js",
            "https://cdn.example.org/m.mjs",
        ]
    )


def test_presenting_time_counts_spoken_words_code_cells_and_widgets_but_not_skipped_cells(script):
    """130 words, 4 code cells and a widget: 1 + 3 + 2 = 6 minutes, shown as 5; Skip cells are not presented."""
    build = script("slides/build.py")

    def cell(kind, text="", slide_type="-", widget=False):
        outputs = [{"data": {build.WIDGET: {}}}] if widget else []
        return {
            "cell_type": kind,
            "source": text,
            "metadata": {"slideshow": {"slide_type": slide_type}},
            "outputs": outputs,
        }

    words = " ".join(["word"] * 130)
    cells = [cell("markdown", words), *[cell("code") for _ in range(3)], cell("code", widget=True)]
    assert build.presenting_minutes({"cells": cells}) == 5
    skipped = [cell("markdown", " ".join([words] * 20), "skip"), cell("code", slide_type="skip")]
    assert build.presenting_minutes({"cells": cells + skipped}) == 5
    assert build.presenting_minutes({"cells": [cell("markdown", " ".join([words] * 20))] + cells}) == 25  # 21 + 3 + 2
    assert build.presenting_minutes({"cells": [cell("code", widget=True) for _ in range(12)]}) == 35  # 12 * 2.75


@needs_decks
def test_the_index_gives_each_deck_its_slide_count_and_presenting_time(script):
    """Each lesson on the index: its slide count and 'about N min', as slides/build.py estimates them."""
    build = script("slides/build.py")
    index = (SLIDES / "index.html").read_text()
    for notebook in NOTEBOOKS:
        nb = json.loads(notebook.read_text())
        row = f"{build.slide_count(nb)} slides · about {build.presenting_minutes(nb)} min"
        assert f'href="{notebook.stem}.slides.html">' in index and row in index, notebook.name


@needs_decks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_decks_widget_controls_are_saved_read_only_each_widget_with_its_line(notebook, script):
    """No kernel redraws a deck's plot, so every control is saved disabled, and a line under each widget says so."""
    build = script("slides/build.py")
    text = (SLIDES / f"{notebook.stem}.slides.html").read_text()
    controls = [
        model["state"]["disabled"]
        for match in build.WIDGET_STATE.finditer(text)
        for model in json.loads(match[2])["state"].values()
        if "disabled" in model["state"]
    ]
    assert all(controls), notebook.name
    assert len(build.WIDGET_VIEW.findall(text)) == text.count('class="rnns-read-only"')


def test_read_only_widgets_disables_every_control_and_keeps_the_rest(script):
    build = script("slides/build.py")
    state = {
        "state": {
            "a": {"model_name": "FloatSliderModel", "state": {"disabled": False, "value": 0.5}},
            "b": {"model_name": "HTMLModel", "state": {"value": "<p>h rises</p></script>"}},
        }
    }
    saved_state = json.dumps(state).replace("</", "<\\/")  # as nbconvert writes it: no </script> inside
    body = (
        f'<script type="application/vnd.jupyter.widget-state+json">{saved_state}</script>'
        '<script type="application/vnd.jupyter.widget-view+json">{"model_id": "a"}</script>'
    )
    frozen = build.read_only_widgets(body)
    saved = json.loads(build.WIDGET_STATE.search(frozen)[2].replace("<\\/", "</"))
    assert saved["state"]["a"]["state"] == {"disabled": True, "value": 0.5}
    assert saved["state"]["b"]["state"] == state["state"]["b"]["state"]
    assert "</script>" not in build.WIDGET_STATE.search(frozen)[2]
    assert frozen.count('class="rnns-read-only"') == 1 and build.READ_ONLY in frozen
