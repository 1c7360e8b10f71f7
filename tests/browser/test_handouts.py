"""The handouts of `make handouts`: each deck printed to PDF, a page per slide, none blank.

Run by `make test-browser`, which runs `make handouts` (slides/handouts.py) first. Reads
build/handouts/ and build/slides/; checks per lesson:
- NN_name.pdf has exactly one page per slide of its deck (the count the index shows);
- NN_name-notes.pdf has a page per slide plus one page per slide that has speaker notes, each
  notes page right after its slide and showing the start of those notes (7 of their first 10
  words, outside maths: pypdf reads "fi" and "ff" ligatures as nothing);
- no page of either is blank (no text and no image: slides/handouts.py's blank_pages), and each
  slide with maths was printed with MathJax's fonts (typeset, not missing);
- build/slides/handouts/ holds the same files, and build/slides/index.html links both;
- both are tagged PDFs a screen reader can read: a structure tree with a heading element per
  heading of the deck, every piece of text tagged (none drawn outside marked content), each formula
  outside a heading a /Figure whose /Alt is its TeX, /MarkInfo /Marked true, /Lang "en", a
  bookmark per heading (the outline), and the first slide's h1 as /Title and on page 1.
And the blank-page check itself: it flags an empty page that Chromium printed, and passes a page
that shows only an image.
"""

import base64
import functools
import json
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import handouts  # slides/handouts.py: pages, blank_pages, type3_fonts, text_and_untagged, structure, unnamed_formulas
import pytest
from measure import CHROMIUM, CHROMIUM_FLAGS  # slides/measure.py (pyproject.toml's pythonpath puts slides/ on the path)
from pypdf import PdfReader, PdfWriter
from pypdf.generic import BooleanObject

ROOT = Path(__file__).resolve().parents[2]
SLIDES = ROOT / "build" / "slides"
HANDOUTS = ROOT / "build" / "handouts"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WORD = re.compile(r"[A-Za-z]{3,}")
# Maths in the notes' source (MathJax typesets it; pypdf reads its glyphs, not its TeX).
TEX = re.compile(r"\$\$.*?\$\$|\$.*?\$|\\\(.*?\\\)|\\\[.*?\\\]|\\[A-Za-z]+", re.S)
# A formula as MathJax finds it in a deck's text (tex2jax: $$…$$, \\[…\\], $…$, \\(…\\)): its TeX.
FORMULA = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\$(.+?)\$|\\\((.+?)\\\)", re.S)


class SlideNotes(HTMLParser):
    """Per slide of a deck, in order: the text of its speaker notes ("" for none), and whether the
    slide itself (outside notes, code and outputs) holds TeX maths for MathJax."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.depth, self.notes, self.maths = 0, [], []
        self._in_notes = self._skip = self._code = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.depth += 1
            if self.depth == 2:  # a slide (nbconvert nests each in a horizontal stack)
                self.notes.append("")
                self.maths.append(False)
        elif tag == "aside" and "notes" in (dict(attrs).get("class") or "").split():
            self._in_notes += 1
        elif tag in ("script", "style"):
            self._skip += 1
        elif tag in ("pre", "code"):
            self._code += 1

    def handle_endtag(self, tag):
        if tag == "section":
            self.depth -= 1
        elif tag == "aside" and self._in_notes:
            self._in_notes -= 1
        elif tag in ("script", "style") and self._skip:
            self._skip -= 1
        elif tag in ("pre", "code") and self._code:
            self._code -= 1

    def handle_data(self, data):
        if self._skip or self.depth < 2:
            return
        if self._in_notes:
            self.notes[-1] += data
        elif not self._code and TEX.search(data):
            self.maths[-1] = True


class Headings(HTMLParser):
    """The headings (h1 to h6) of a deck, in order, as (text, in_notes), without their "¶" anchor
    links and with their TeX as written; and the TeX of each formula outside headings and notes.
    """

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.headings, self.formulas, self._text = [], [], ""
        self._heading = self._notes = self._anchor = self._skip = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if re.fullmatch(r"h[1-6]", tag):
            self._heading += 1
        elif tag == "aside" and "notes" in classes:
            self._notes += 1
        elif tag == "a" and "anchor-link" in classes:
            self._anchor += 1
        elif tag in ("script", "style", "pre", "code"):
            self._skip += 1

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self._heading:
            self._heading -= 1
            if not self._heading:
                self.headings.append((" ".join(self._text.split()), bool(self._notes)))
                self._text = ""
        elif tag == "aside" and self._notes:
            self._notes -= 1
        elif tag == "a" and self._anchor:
            self._anchor -= 1
        elif tag in ("script", "style", "pre", "code") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if self._heading and not self._anchor:
            self._text += data
        elif not (self._heading or self._notes or self._skip):
            self.formulas += [" ".join("".join(tex).split()) for tex in FORMULA.findall(data)]


def outline_titles(reader):
    """The titles of a PDF's bookmarks, depth first (Chromium nests each h2 under its h1)."""

    def flat(items):
        for item in items:
            yield from flat(item) if isinstance(item, list) else [item.title]

    return list(flat(reader.outline))


class Printed:
    """A PDF as pypdf reads it, parsed once per worker (a lesson's tests run on one worker: conftest.py's
    groups): its reader, each page's text, the text drawn outside marked content and the smallest
    monospace text in pt (slides/handouts.py's text_and_untagged with slides/articles.py's code_sizes,
    one pass per page), and its structure tree's elements."""

    def __init__(self, pdf):
        import articles  # slides/articles.py

        self.reader = PdfReader(pdf)
        sizes = []
        pages = [handouts.text_and_untagged(page, articles.code_sizes(sizes)) for page in self.reader.pages]
        self.texts = [text for text, _ in pages]
        self.untagged = {number: found for number, (_, found) in enumerate(pages, 1) if found}
        self.smallest_code_pt = articles.smallest(sizes)

    @functools.cached_property
    def structure(self):
        return handouts.structure(self.reader)


@functools.cache
def _printed(pdf, mtime_ns):
    return Printed(pdf)


def printed(pdf):
    """Printed(pdf), read again when the file changed."""
    return _printed(pdf, pdf.stat().st_mtime_ns)


def pdfs(notebook):
    """The two PDFs of a lesson; fails when `make handouts` has not printed them from its current deck."""
    deck = SLIDES / f"{notebook.stem}.slides.html"
    found = [HANDOUTS / f"{notebook.stem}{suffix}.pdf" for suffix in ("", "-notes")]
    for pdf in found:
        assert pdf.exists(), f"no {pdf.relative_to(ROOT)}: `make test-browser` runs `make handouts` first"
        assert pdf.stat().st_mtime >= deck.stat().st_mtime, f"{pdf.name} is older than {deck.name}"
    return found


def words(text):
    return WORD.findall(text)


def in_order(needles, haystack):
    """Whether every item of needles is in haystack, in the same order (others may come between)."""
    rest = iter(haystack)
    return all(needle in rest for needle in needles)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_handout_has_one_page_per_slide_and_no_blank_page(notebook, script):
    """NN_name.pdf: as many pages as the deck has slides (the index's count), and every page shows something."""
    slides_pdf, _ = pdfs(notebook)
    count = script("slides/build.py").slide_count(json.loads(notebook.read_text()))
    assert len(SlideNotes((SLIDES / f"{notebook.stem}.slides.html").read_text()).notes) == count
    read = printed(slides_pdf)
    assert handouts.pages(read.reader) == count, (
        f"{slides_pdf.name}: {handouts.pages(read.reader)} pages, {count} slides"
    )
    assert handouts.blank_pages(read.reader, read.texts) == [], f"{slides_pdf.name} has blank pages"
    first_page = " ".join(read.texts[0].split())
    # The licence line; a PDF's text gives link texts ("CC BY 4.0", "MIT") apart from the line around them.
    assert "The RNNs by hand authors. Text, figures, slides and handouts:" in first_page, "page 1 lacks the licence"
    assert "CC BY 4.0" in first_page and "MIT" in first_page, "page 1 lacks the licences' names"
    maths = SlideNotes((SLIDES / f"{notebook.stem}.slides.html").read_text()).maths
    untypeset = [
        n for n, (page, tex) in enumerate(zip(read.reader.pages, maths), 1) if tex and not handouts.type3_fonts(page)
    ]
    assert not untypeset, f"{slides_pdf.name}: slides with maths printed without MathJax's fonts: {untypeset}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_handout_with_notes_puts_each_slides_notes_on_the_page_after_it(notebook):
    """NN_name-notes.pdf: slides + slides with notes pages; a notes page follows its slide and starts with its notes."""
    slides_pdf, notes_pdf = pdfs(notebook)
    notes = SlideNotes((SLIDES / f"{notebook.stem}.slides.html").read_text()).notes
    with_notes = [text for text in notes if text.strip()]
    read = printed(notes_pdf)
    assert handouts.pages(read.reader) == len(notes) + len(with_notes)
    assert handouts.blank_pages(read.reader, read.texts) == [], f"{notes_pdf.name} has blank pages"
    slide_pages = printed(slides_pdf).texts
    pages = iter(read.texts)
    for number, (text, slide_text) in enumerate(zip(notes, slide_pages, strict=True), start=1):
        assert words(next(pages)) == words(slide_text), (
            f"page {number} of {slides_pdf.name} is not the slide before its notes"
        )
        if text.strip():
            page = set(words(next(pages)))
            start = words(TEX.sub(" ", text))[:10]
            found = [word for word in start if word in page]
            assert len(found) >= 0.7 * len(start), f"slide {number}: its notes page lacks {start}: {sorted(page)[:40]}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_handouts_are_tagged_with_an_outline_a_language_and_a_title(notebook):
    """Both PDFs: a structure tree holding each heading and all text (maths as /Figure with its TeX
    as /Alt), marked, in English, a bookmark per heading, titled with the deck's h1, shown on page 1."""
    deck = Headings((SLIDES / f"{notebook.stem}.slides.html").read_text())
    title = deck.headings[0][0]
    for pdf in pdfs(notebook):
        read = printed(pdf)
        reader = read.reader
        root = reader.trailer["/Root"]
        headings = [text for text, in_notes in deck.headings if pdf.name.endswith("-notes.pdf") or not in_notes]
        assert "/StructTreeRoot" in root and root["/StructTreeRoot"].get("/K"), f"{pdf.name} is not tagged"
        assert root.get("/MarkInfo", {}).get("/Marked") == BooleanObject(True), (
            f"{pdf.name}: /MarkInfo /Marked is not true"
        )
        assert str(root.get("/Lang", "")).startswith("en"), f"{pdf.name}: /Lang is {root.get('/Lang')!r}"
        elements = read.structure
        tagged = [element for element in elements if re.fullmatch(r"/H[1-6]", element["/S"])]
        # reveal.js hides every slide but the first from the accessibility tree unless print_deck unhides them.
        assert len(tagged) == len(headings), f"{pdf.name}: {len(tagged)} heading elements, {len(headings)} headings"
        bookmarks = outline_titles(reader)
        # A bookmark holds its heading's words; a formula in it reads as its glyphs ("Whh" for $W_{hh}$).
        assert len(bookmarks) == len(headings) and all(
            in_order(words(TEX.sub(" ", text)), words(bookmark)) for text, bookmark in zip(headings, bookmarks)
        ), f"{pdf.name}: bookmarks {bookmarks}, headings {headings}"
        untagged = read.untagged
        assert not untagged, f"{pdf.name}: text outside the tags (a screen reader skips it): {untagged}"
        missing = handouts.unnamed_formulas(reader, deck.formulas, elements)
        assert not missing, f"{pdf.name}: formulas without a /Figure whose /Alt is their TeX: {missing}"
        assert title and reader.metadata.title == title, f"{pdf.name}: /Title {reader.metadata.title!r}, h1 {title!r}"
        first_page = " ".join(read.texts[0].split())
        assert title in first_page, f"{pdf.name}: page 1 does not show the title {title!r}: {first_page[:200]!r}"


def test_build_slides_holds_the_handouts_and_the_index_links_them():
    """build/slides/handouts/ has a copy of each PDF (the folder stays self-contained); index.html links both per deck."""
    index = (SLIDES / "index.html").read_text()
    for notebook in NOTEBOOKS:
        for pdf in pdfs(notebook):
            copy = SLIDES / "handouts" / pdf.name
            assert copy.read_bytes() == pdf.read_bytes(), f"{copy} is not a copy of {pdf}"
            assert f'href="handouts/{pdf.name}"' in index, f"index.html does not link handouts/{pdf.name}"


def test_the_blank_page_check_flags_an_empty_page_and_passes_text_or_an_image_alone(tmp_path):
    """A PDF Chromium printed from text, an empty page and an image alone: only the empty page is blank;
    a PDF with a page that pypdf adds blank: that page is flagged too."""
    from playwright.sync_api import sync_playwright

    png = tiny_png()
    page_html = f"""<!DOCTYPE html><style>@page {{ size: 1280px 720px; margin: 0 }} body {{ margin: 0 }}
    div {{ height: 700px }} div + div {{ break-before: page }}</style>
    <div><p>A slide with text.</p></div><div></div><div><img src="data:image/png;base64,{png}" width="300"></div>"""
    printed = tmp_path / "three.pdf"

    def print_three():
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page()
            page.set_content(page_html)
            page.pdf(path=str(printed), width="1280px", height="720px", print_background=True)
            browser.close()

    # In a thread of its own: the other browser tests' sync Playwright may be running in this one.
    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(print_three).result()
    assert handouts.pages(printed) == 3
    assert handouts.blank_pages(printed) == [2]

    writer = PdfWriter(clone_from=printed)
    writer.add_blank_page()
    appended = tmp_path / "appended.pdf"
    with appended.open("wb") as file:
        writer.write(file)
    assert handouts.blank_pages(appended) == [2, 4]


def tiny_png():
    """A 4x4 red PNG, base64: an image with no text."""
    row = b"\x00" + b"\xff\x00\x00" * 4

    def chunk(kind, data):
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    header = (4).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * 4)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_article_is_the_whole_notebook_on_a4_tagged_with_code_at_9pt_or_more(notebook):
    """NN_name-article.pdf (slides/articles.py): A4, every heading of the notebook tagged, all text in the tags,
    its formulas /Figures named by their TeX, titled with its h1, and no code or output under 9 pt."""
    import articles

    page = ROOT / "build" / "html" / f"{notebook.stem}.html"
    pdf = HANDOUTS / f"{notebook.stem}-article.pdf"
    assert pdf.exists(), f"no {pdf.relative_to(ROOT)}: `make test-browser` runs `make handouts` first"
    assert pdf.stat().st_mtime >= page.stat().st_mtime, f"{pdf.name} is older than {page.name}"
    read = printed(pdf)
    reader = read.reader
    width, height = (float(value) for value in reader.pages[0].mediabox[2:])
    assert abs(width - 595.3) < 1.5 and abs(height - 841.9) < 1.5, f"{pdf.name} is {width}x{height} pt, not A4"
    cells = json.loads(notebook.read_text())["cells"]
    markdown = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    headings = [line for line in markdown.splitlines() if re.match(r"#{1,6} ", line)]
    tagged = [element for element in read.structure if re.fullmatch(r"/H[1-6]", element["/S"])]
    assert len(tagged) >= len(headings), f"{pdf.name}: {len(tagged)} heading elements, {len(headings)} headings"
    assert not read.untagged, pdf.name
    formulas = [
        " ".join(tex.split())
        for tex in re.findall(r"\$\$(.+?)\$\$|(?<!\$)\$([^$\n]+)\$", markdown)
        for tex in tex
        if tex
    ]
    figures = [element for element in read.structure if element["/S"] == "/Figure" and "/Alt" in element]
    assert len(figures) >= len(formulas) * 0.9, f"{pdf.name}: {len(figures)} named figures for {len(formulas)} formulas"
    title = re.sub(r"^#\s+", "", headings[0]).strip()
    assert reader.metadata.title == title, f"{pdf.name}: /Title {reader.metadata.title!r}, not {title!r}"
    assert read.smallest_code_pt is not None and read.smallest_code_pt >= articles.CODE_PT, (
        f"{pdf.name}: code at {read.smallest_code_pt} pt"
    )
    assert (SLIDES / "handouts" / pdf.name).read_bytes() == pdf.read_bytes(), "no copy beside the decks"
    assert f'href="handouts/{pdf.name}"' in (SLIDES / "index.html").read_text(), "the index does not link it"
