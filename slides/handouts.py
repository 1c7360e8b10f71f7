"""Print each slide deck to PDF: one page per slide, and a variant with the speaker notes.

Run by `make handouts` after `make slides`:

    python slides/handouts.py --slides build/slides --out build/handouts

For each deck SLIDES/NN_name.slides.html it writes
- OUT/NN_name-notes.pdf: one 1280x720 page per slide, every fragment shown, as on the screen,
  each slide that has speaker notes followed by a page with its notes (reveal.js's showNotes
  "separate-page"; long notes are set smaller until they fit their page): as many pages as the
  deck's slides plus its slides with notes;
- OUT/NN_name.pdf: the same without the notes pages, one page per slide;
and copies both into SLIDES/handouts/, so that the slides folder stays self-contained (the index
that the next `make slides` writes links them; `make handouts` runs it). Offline, from the decks
themselves, with Debian's Chromium (slides/measure.py's flags): each deck is opened from disk in
reveal.js's print mode (?print-pdf) and printed once MathJax has typeset it, its fonts are loaded
and its widgets have drawn; loaded once, printed with its notes pages, then printed again once
they are taken out of the page. Each PDF is checked
as tests/browser/test_handouts.py checks it (pages, maths, tags, title; the two PDFs' slides read
the same), and both printed again from a fresh load when one fails: a busy machine now and then leaves a
formula hidden or a widget's label out, and stderr says how often that happened.
PDFs newer than their deck are kept.

Both PDFs are tagged, for screen readers and text extraction (WCAG 2.1 AA, issue 26): a structure
tree from Chromium (headings, paragraphs, lists, tables, links; each formula a /Figure whose /Alt
is its TeX, except in a heading, whose maths is read as its glyphs), /MarkInfo /Marked true, the
deck's language as /Lang ("en", from <html lang>), an outline with a bookmark per heading, and the
deck's first h1 as /Title ("01 · A scalar RNN, by hand"), which viewers show (/DisplayDocTitle).

pages() and blank_pages() read a PDF (pypdf); tests/browser/test_handouts.py checks every
handout with them.
"""

import argparse
import asyncio
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

from measure import CHROMIUM, CHROMIUM_FLAGS, WIDGETS_DRAWN  # Debian's Chromium, its flags; widgets drawn
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject

SUFFIXES = (".pdf", "-notes.pdf")  # NN_name.slides.html -> NN_name.pdf, NN_name-notes.pdf
WORD = re.compile(r"[A-Za-z]{3,}")  # the words of a page that print_deck compares between the two PDFs
PAGE = {"width": 1280, "height": 720}  # the decks' canvas (slides/build.py), a slide per page
# Loads of a deck whose PDF came out wrong before giving up (a load now and then leaves a formula
# empty or hidden, or lost all of a page's maths; the next load draws it), and prints of a deck
# whose two PDFs show different slides.
ATTEMPTS = 6
DECK_ATTEMPTS = 3
WORKERS = 2  # decks printed at once (this machine and CI have 2 cores)
# reveal.js has laid the deck out as pages (a .pdf-page per slide, each slide with notes followed by
# its notes page); MathJax has typeset every formula (its start-up typeset ends after
# MathJax.isReady, so waiting on its queue alone could print a slide with its maths missing);
# the fonts are loaded; every widget has drawn (a slide that holds a widget view shows
# its plot image, decoded).
# The formulas on printed pages that came out of their typeset empty (no width) or still hidden
# (MathJax hides a formula while it measures it: under load, a display formula of deck 02 was now and
# then left so, missing from its page), as a JS expression. Not in the speaker notes (hidden on the
# slides; their pages show the notes' maths as MathML, beside copies of MathJax's output that take no
# room), nor in reveal.js's .aria-status (a hidden copy of the current slide's text for screen readers).
EMPTY_MATHS = """[...document.querySelectorAll('.reveal .slides .MathJax_CHTML')].filter(math => !math.closest('aside.notes, .speaker-notes-pdf')
    && (!math.getBoundingClientRect().width || getComputedStyle(math).visibility === 'hidden'))"""
# Typeset a formula again (a JS function of its output element): Rerender on the element holding its
# <script>, found by id (MathJax.Hub.getJaxFor threw on an output whose script was not next to it). A display formula's output sits in its own div beside the script: Rerender on that div
# found nothing to do, and the formula stayed hidden in MathJax's "MJXc-processing" state.
RERENDER = """math => {
  const script = document.getElementById(math.id.replace(/-Frame$/, ''));  // MathJax-Element-N-Frame's is MathJax-Element-N
  MathJax.Hub.Queue(["Rerender", MathJax.Hub, script ? script.parentNode : math.parentNode]);
}"""
READY_JS = (
    """async () => {
  const pages = document.querySelectorAll('.reveal .slides > .pdf-page').length;
  if (!window.Reveal || !Reveal.isReady() || pages !== Reveal.getTotalSlides() || !window.MathJax) return false;
  await new Promise(done => MathJax.Hub.Register.StartupHook('End', done));  // the first typeset is done
  await new Promise(done => MathJax.Hub.Queue(done));  // and any typeset queued since
  const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
  if (!scripts.every(s => s.MathJax && s.MathJax.state === MathJax.ElementJax.STATE.PROCESSED)) return false;
  // In print mode a formula sometimes comes out of its typeset empty or hidden (deck 11's title page lost
  // its h_0 in about 6 prints of 10); render each such formula again and check once more.
  const empty = EMPTY_MATHS;
  if (empty.length) {
    window.retypeset = (window.retypeset || 0) + empty.length;  // print_page reports it
    empty.forEach(RERENDER);
    await new Promise(done => MathJax.Hub.Queue(done));
    return false;
  }
  await document.fonts.ready;
  return Reveal.getSlides().every(WIDGETS_DRAWN);
}""".replace("WIDGETS_DRAWN", WIDGETS_DRAWN)
    .replace("EMPTY_MATHS", EMPTY_MATHS)
    .replace("RERENDER", RERENDER)
)
# MathJax's web fonts (families MJXc-*), loaded now: Chromium fetches a font only once text needs
# it, and prints text whose font is still loading as nothing (a deck once lost all of its maths).
FONTS_JS = """async () => {
  const mathjax = [...document.fonts].filter(font => font.family.startsWith('MJXc'));
  await Promise.all(mathjax.map(font => font.load().catch(() => null)));  // local() copies fail: fine
  await document.fonts.ready;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
# Each notes page holds its notes whole: notes whose text would run past the bottom of the page
# are scaled down (CSS zoom on the notes' contents, whose fonts are set in px: a smaller font on the
# page itself changed nothing) to at least ZOOM_LEAST. Overflow is judged by where the last line of
# text (or maths) ends, not by scrollHeight, which counts the empty margins after it. Returns, for
# each printed page in order, whether it is a notes page and whether it shows MathJax's maths; the
# notes scaled down, as their zoom and first words; and the notes that still do not fit.
ZOOM_LEAST = 0.7  # 70% of the notes' 26px text is 18px, still readable on paper
FIT_NOTES_JS = """() => {
  const scaled = [], overflowing = [];
  const printed = [...document.querySelector('.reveal .slides').children]
    .filter(page => page.matches('.pdf-page, .speaker-notes-pdf'));
  const notesPages = printed.map(page => page.matches('.speaker-notes-pdf'));
  const maths = printed.map(page => page.matches('.pdf-page') && [...page.querySelectorAll('.MathJax_CHTML')].some(m => !m.closest('aside.notes')));
  const textBottom = element => {
    let bottom = 0;
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT), range = document.createRange();
    while (walker.nextNode()) {
      if (!walker.currentNode.textContent.trim()) continue;
      range.selectNodeContents(walker.currentNode);
      for (const rect of range.getClientRects()) bottom = Math.max(bottom, rect.bottom);
    }
    return bottom;
  };
  const over = notes => textBottom(notes) > notes.getBoundingClientRect().bottom + 1;
  for (const notes of document.querySelectorAll('.speaker-notes-pdf[data-layout="separate-page"]')) {
    let zoom = 1;
    while (over(notes) && zoom > ZOOM_LEAST + 0.001) {
      zoom -= 0.05;
      [...notes.children].forEach(child => { child.style.zoom = zoom; });
    }
    const words = notes.textContent.trim().replace(/\\s+/g, ' ').slice(0, 60);
    if (zoom < 1) scaled.push([Math.round(zoom * 100), words]);
    if (over(notes)) overflowing.push(words);
  }
  return [notesPages, maths, scaled, overflowing];
}""".replace("ZOOM_LEAST", str(ZOOM_LEAST))


# Tagged (a structure tree, so a screen reader reads headings, paragraphs, lists and tables in
# order), with an outline (a bookmark per heading), each slide on a 1280x720 page.
PDF_OPTIONS = {
    "width": f"{PAGE['width']}px",
    "height": f"{PAGE['height']}px",
    "print_background": True,
    "prefer_css_page_size": True,
    "tagged": True,
    "outline": True,
}
# The first h1 a selector finds, without its "¶" anchor link, becomes the document's title, which Chromium
# writes as the PDF's /Title; returns it ("" without an h1). Used by TAGGABLE_JS and slides/articles.py.
TITLE_JS = """selector => {
  const h1 = document.querySelector(selector);
  if (!h1) return '';
  const heading = h1.cloneNode(true);
  heading.querySelectorAll('.anchor-link').forEach(link => link.remove());
  document.title = heading.textContent.replace(/\\s+/g, ' ').trim();
  return document.title;
}"""
# Before printing, what a reader of the PDF needs from its tags:
# - reveal.js marks every slide but the current one aria-hidden, which keeps them out of the
#   accessibility tree that Chromium tags a PDF from (the tags and the outline would hold the
#   first slide only); in print mode every slide is on paper, so none is hidden;
# - each formula is MathJax's glyphs, aria-hidden, beside MathML for screen readers that Chromium
#   does not print: the formulas would be untagged, missing from what a screen reader reads. Each
#   becomes an image whose text is its TeX (a /Figure with that /Alt in the PDF, its glyphs tagged
#   inside it), except in a heading, where its glyphs are read as text: a /Figure there would title
#   the heading's bookmark "Where h_0h0 comes from" (its /Alt and its glyphs), the glyphs alone
#   "Where h0 comes from". The maths of notes pages is MathML already (the template's notesWithMathML);
# - the document's title becomes the first slide's h1 (without its "¶" anchor link), which Chromium
#   writes as the PDF's /Title (shown by viewers: /DisplayDocTitle): "01 · A scalar RNN, by hand",
#   not the <title> "01_scalar_rnn slides";
# - a notes page's "Speaker notes" label is reveal.js's CSS ::before, which Chromium prints untagged:
#   it becomes a real element, styled as reveal.js styles the label.
# Returns that title ("" when the first slide has no h1).
TAGGABLE_JS = """() => {
  document.querySelectorAll('.reveal .slides section[aria-hidden]').forEach(slide => slide.removeAttribute('aria-hidden'));
  const style = document.createElement('style');
  style.textContent = '.reveal .speaker-notes-pdf::before { content: none !important; }';
  document.head.append(style);
  for (const notes of document.querySelectorAll('.reveal .speaker-notes-pdf')) {
    const label = document.createElement('div');
    label.textContent = 'Speaker notes';
    label.style.cssText = 'display: block; margin-bottom: 10px; opacity: .5';
    notes.prepend(label);
  }
  return (TITLE_JS)('.reveal .slides section h1');
}""".replace("TITLE_JS", TITLE_JS)
# Each formula an image named by its TeX, its glyphs no longer aria-hidden (see TAGGABLE_JS), once
# MathJax has nothing left to typeset (a formula typeset empty or left hidden, as in READY_JS, is
# typeset again first: a widget or a late typeset can leave one so after READY_JS passed). Returns
# the TeX of each formula so named on a slide (not on a notes page, whose maths is MathML, nor in
# reveal.js's .aria-status, a copy of the current slide's text for screen readers), which print_page
# checks are /Figures with that /Alt in the PDF, as tests/browser/test_handouts.py does; and the TeX
# of the formulas still empty or hidden (print_page then loads the deck again).
LABEL_MATHS_JS = """async () => {
  const named = [];
  for (let round = 0; round < 3; round++) {
    const empty = EMPTY_MATHS;
    window.retypeset = (window.retypeset || 0) + empty.length;
    empty.forEach(RERENDER);
    await new Promise(done => MathJax.Hub.Queue(done));
    if (!empty.length) break;
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  }
  const tex = jax => jax.originalText.trim().split(/\\s+/).join(' ');
  for (const jax of MathJax.Hub.getAllJax()) {
    const formula = document.getElementById(jax.inputID + '-Frame');
    if (!formula) continue;
    if (!formula.closest('h1, h2, h3, h4, h5, h6')) {  // a heading's maths is read (and bookmarked) as its glyphs
      formula.setAttribute('role', 'img');
      formula.setAttribute('aria-label', jax.originalText.trim());
      if (formula.closest('.reveal .slides') && !formula.closest('aside.notes, .speaker-notes-pdf')) named.push(tex(jax));
    }
    formula.querySelectorAll('[aria-hidden]').forEach(glyphs => glyphs.removeAttribute('aria-hidden'));
  }
  const stuck = EMPTY_MATHS.map(math => document.getElementById(math.id.replace(/-Frame$/, '')))
    .map(script => script ? script.textContent.trim().split(/\\s+/).join(' ') : '?');
  return [named, stuck];
}""".replace("EMPTY_MATHS", EMPTY_MATHS).replace("RERENDER", RERENDER)
AX_SETTLE_MS = 500  # after naming the formulas, before printing: see print_page


def pages(pdf):
    """The number of pages of a PDF (a path or a PdfReader)."""
    return len(reader_of(pdf).pages)


def type3_fonts(page):
    """How many Type 3 fonts a PDF page uses: Chromium prints MathJax's web fonts as Type 3."""
    fonts = page.get("/Resources", {}).get("/Font", {})
    return sum(font.get_object().get("/Subtype") == "/Type3" for font in fonts.values())


def text_and_untagged(page, also=None):
    """A PDF page's text (pypdf's extract_text) and the text it draws outside marked content (in a tagged
    PDF, text no screen reader reads), from one pass over its content stream; also(chunk, cm, tm, font,
    size), when given, sees every piece of text of that pass too (slides/articles.py's code sizes)."""
    depth, found = [0], []

    def operator(op, args, cm, tm):
        if op in (b"BDC", b"BMC"):
            depth[0] += 1
        elif op == b"EMC":
            depth[0] -= 1

    def text(chunk, cm, tm, font, size):
        if not depth[0] and chunk.strip():
            found.append(chunk.strip())
        if also is not None:
            also(chunk, cm, tm, font, size)

    return page.extract_text(visitor_operand_before=operator, visitor_text=text), found


def untagged_text(page):
    """The text a PDF page draws outside marked content: in a tagged PDF, text no screen reader reads."""
    return text_and_untagged(page)[1]


def reader_of(pdf):
    """pdf itself if it is a pypdf PdfReader already, else a PdfReader of the file."""
    return pdf if isinstance(pdf, PdfReader) else PdfReader(pdf)


def structure(reader):
    """The elements of a PDF's structure tree (a pypdf PdfReader's), depth first."""
    found = []

    def walk(node):
        node = node.get_object()
        if isinstance(node, DictionaryObject) and "/S" in node:
            found.append(node)
            kids = node.get("/K")
            kids = kids.get_object() if kids is not None else []
            for kid in kids if isinstance(kids, ArrayObject) else [kids]:
                walk(kid)

    walk(reader.trailer["/Root"]["/StructTreeRoot"]["/K"])
    return found


def unnamed_formulas(pdf, formulas, elements=None):
    """Those of `formulas` (TeX, white space collapsed) that a PDF (a path or a PdfReader) lacks as a /Figure
    with that /Alt; elements: its structure(), when already read."""
    elements = structure(reader_of(pdf)) if elements is None else elements
    alts = [" ".join(str(element.get("/Alt", "")).split()) for element in elements if element["/S"] == "/Figure"]
    return sorted((Counter(formulas) - Counter(alts)).elements())


def blank_pages(pdf, texts=None):
    """The 1-based numbers of the pages of a PDF (a path or a PdfReader) that show no text and no image.

    A page's text is what pypdf extracts from its content stream (ignoring white space); its
    images are the image XObjects it draws, including those inside form XObjects. Lines and
    filled shapes alone (a background colour) do not count: such a page shows nothing to read.
    texts: each page's extracted text, when already read.
    """
    blank = []
    sheets = reader_of(pdf).pages
    for number, (page, text) in enumerate(zip(sheets, texts or [None] * len(sheets), strict=True), start=1):
        if not (page.extract_text() if text is None else text).strip() and not page.images:
            blank.append(number)
    return blank


async def print_deck(context, deck, out):
    """Print `deck` (a path) to OUT/NN_name-notes.pdf in reveal.js's print mode, then OUT/NN_name.pdf.

    Both from one load (print_page): with the notes pages, then, those pages taken out, without them;
    each PDF printed on its own, so that each gets its own tags and outline from Chromium (pages cut
    out of a tagged PDF would leave its structure tree pointing at pages that are gone). A load whose
    PDFs fail print_page's checks is loaded again, up to ATTEMPTS times. Then the slides of the two
    PDFs must read the same.
    """
    name = deck.name.removesuffix(".slides.html")
    notes_pdf, slides_pdf = out / f"{name}-notes.pdf", out / f"{name}.pdf"
    (is_notes, notes_texts), (slides, slides_texts) = await printed(
        context, deck, "?print-pdf&showNotes=separate-page", notes_pdf, slides_pdf
    )
    if len(slides) != is_notes.count(False):
        raise RuntimeError(f"{deck.name} laid out {len(slides)} slides alone, {is_notes.count(False)} with notes")
    # The two PDFs printed the same slides (a slide once lost two sliders' labels in one of them).
    with_notes = [text for text, notes in zip(notes_texts, is_notes) if not notes]
    pairs = zip(with_notes, slides_texts)
    differ = {
        number: (one, other)
        for number, pair in enumerate(pairs, 1)
        if (one := WORD.findall(pair[0])) != (other := WORD.findall(pair[1]))
    }
    if differ:
        number, (one, other) = next(iter(differ.items()))
        raise RuntimeError(
            f"slides {list(differ)} differ between {notes_pdf.name} and {slides_pdf.name}; slide {number}:"
            f" {sorted(Counter(one) - Counter(other))} against {sorted(Counter(other) - Counter(one))}"
        )
    return slides_pdf, notes_pdf


async def printed(context, deck, query, pdf, without_notes):
    """print_page, again (a fresh load) while its PDFs come out wrong, up to ATTEMPTS times."""
    from playwright.async_api import Error as PlaywrightError  # a page that did not get ready in time, say

    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await print_page(context, deck, query, pdf, without_notes)
        except (RuntimeError, PlaywrightError) as error:  # a layout, font or typeset race: load the deck again
            print(f"{pdf.name}: {error} (load {attempt} of {ATTEMPTS})", file=sys.stderr)
            if attempt == ATTEMPTS:
                raise


# The notes pages out of the printed deck (reveal.js puts each after its slide's page, a sibling of it):
# what is left is the deck as ?print-pdf alone lays it out. Returns how many were taken out.
DROP_NOTES_JS = """() => {
  const notes = [...document.querySelectorAll('.reveal .slides > .speaker-notes-pdf')];
  notes.forEach(page => page.remove());
  return notes.length;
}"""


async def print_page(context, deck, query, pdf, without_notes=None):
    """Load `deck` with `query` in print mode, make it taggable, print it to `pdf`, check the PDF; then,
    if `without_notes` is a path, take the notes pages out and print and check that PDF too.

    Returns, for each PDF, for each printed page whether it is a notes page, and each page's text. Raises
    RuntimeError when a PDF is not what reveal.js laid out: pages missing, a page with maths printed
    without it, a formula left empty or hidden or not a /Figure named by its TeX, text outside the tags,
    a wrong title.
    """
    page = await context.new_page()
    printed = []
    try:
        await page.goto(f"{deck.resolve().as_uri()}{query}")
        await page.wait_for_function(READY_JS, timeout=120_000, polling=250)
        await page.evaluate(FONTS_JS)
        title = await page.evaluate(TAGGABLE_JS)  # before FIT_NOTES_JS: it moves the notes' label
        if not title:
            raise RuntimeError(f"{deck.name} has no h1 on its first slide to title its PDFs")
        is_notes, maths, scaled, crowded = await page.evaluate(FIT_NOTES_JS)
        for zoom, words in scaled:
            print(f"{pdf.name}: notes set at {zoom}% to fit their page: {words!r}", file=sys.stderr)
        if crowded:
            raise RuntimeError(f"notes that do not fit their page even at {ZOOM_LEAST:.0%}: {crowded}")
        formulas, stuck = await page.evaluate(LABEL_MATHS_JS)
        if stuck:
            raise RuntimeError(f"formulas empty or hidden however often typeset: {stuck}")
        if retypeset := await page.evaluate("window.retypeset || 0"):
            print(f"{pdf.name}: {retypeset} formulas typeset again (empty or hidden)", file=sys.stderr)
        # Chromium tags the PDF from its accessibility tree, which follows the page's changes a moment later.
        await page.wait_for_timeout(AX_SETTLE_MS)
        pdf.write_bytes(await page.pdf(**PDF_OPTIONS))
        printed.append((pdf, is_notes, maths))
        if without_notes is not None:
            await page.evaluate(DROP_NOTES_JS)
            is_notes, maths, _, _ = await page.evaluate(FIT_NOTES_JS)
            if any(is_notes):
                raise RuntimeError(f"{deck.name}: notes pages left after taking them out")
            stuck = (await page.evaluate(LABEL_MATHS_JS))[1]  # a formula typeset again since is named again
            if stuck:
                raise RuntimeError(f"formulas empty or hidden however often typeset: {stuck}")
            await page.wait_for_timeout(AX_SETTLE_MS)
            without_notes.write_bytes(await page.pdf(**PDF_OPTIONS))
            printed.append((without_notes, is_notes, maths))
    finally:
        await page.close()
    return (
        [checked(*one, formulas, title) for one in printed]
        if without_notes is not None
        else checked(*printed[0], formulas, title)
    )


def checked(pdf, is_notes, maths, formulas, title):
    """print_page's checks of one PDF; returns, for each page, whether it is a notes page, and each page's text."""
    reader = PdfReader(pdf)
    if len(reader.pages) != len(is_notes):
        raise RuntimeError(f"{pdf.name}: {len(reader.pages)} pages; reveal.js laid out {len(is_notes)}")
    # MathJax's fonts print as Type 3 fonts; a page with maths without one lost its maths.
    lost = [number for number, (sheet, has) in enumerate(zip(reader.pages, maths), 1) if has and not type3_fonts(sheet)]
    if lost:
        raise RuntimeError(f"{pdf.name}: pages {lost} printed without their maths")
    if unnamed := unnamed_formulas(reader, formulas):
        raise RuntimeError(f"{pdf.name}: formulas without a /Figure whose /Alt is their TeX: {unnamed}")
    # Maths that MathJax typeset again after LABEL_MATHS_JS is aria-hidden glyphs again, which
    # Chromium leaves out of the tags: a screen reader would skip it.
    texts, outside = zip(*(text_and_untagged(sheet) for sheet in reader.pages)) if reader.pages else ((), ())
    if untagged := [number for number, found in enumerate(outside, 1) if found]:
        raise RuntimeError(f"{pdf.name}: text outside its tags on pages {untagged}")
    if (reader.metadata or {}).get("/Title") != title:
        raise RuntimeError(f"{pdf.name}: titled {(reader.metadata or {}).get('/Title')!r}, not {title!r}")
    return is_notes, list(texts)


async def print_decks(decks, out):
    """Print each deck that is newer than its PDFs, WORKERS at a time, in one headless Chromium."""
    from playwright.async_api import async_playwright

    stale = [
        deck
        for deck in decks
        if any(
            not pdf.exists() or pdf.stat().st_mtime < deck.stat().st_mtime
            for pdf in (out / deck.name.replace(".slides.html", suffix) for suffix in SUFFIXES)
        )
    ]
    if not stale:
        return
    workers = asyncio.Semaphore(WORKERS)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)

        async def one(deck):
            async with workers:
                began = time.monotonic()
                # A context of its own per deck: a page in a background tab of a shared context
                # may get no animation frames, which reveal.js's print layout waits for.
                context = await browser.new_context(viewport=PAGE)
                try:
                    # Offline: a deck loads its own files only; a request off the machine is refused.
                    await context.route("**/*", offline)
                    for attempt in range(1, DECK_ATTEMPTS + 1):
                        try:
                            slides_pdf, notes_pdf = await print_deck(context, deck, out)
                            break
                        except RuntimeError as error:  # the two PDFs differ: print both again
                            print(f"{deck.name}: {error} (attempt {attempt} of {DECK_ATTEMPTS})", file=sys.stderr)
                            if attempt == DECK_ATTEMPTS:
                                raise
                finally:
                    await context.close()
                print(
                    f"{slides_pdf}: {pages(slides_pdf)} pages, {notes_pdf.name}: {pages(notes_pdf)} pages"
                    f" ({time.monotonic() - began:.1f} s)"
                )

        await asyncio.gather(*(one(deck) for deck in stale))
        await browser.close()


REFUSED = []  # requests that would have left the machine: printing fails if there are any


async def offline(route):
    """Let a deck load its own files (file:, data:, blob:); refuse anything else, and note it."""
    if route.request.url.startswith(("file:", "data:", "blob:")):
        await route.fallback()
    else:
        REFUSED.append(route.request.url)
        await route.abort()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slides", type=Path, required=True, help="the decks (e.g. build/slides)")
    parser.add_argument("--out", type=Path, required=True, help="where the PDFs go (e.g. build/handouts)")
    args = parser.parse_args()
    decks = sorted(args.slides.glob("[0-9][0-9]_*.slides.html"))
    if not decks:
        sys.exit(f"slides/handouts.py: no decks in {args.slides}; run `make slides` first")
    args.out.mkdir(parents=True, exist_ok=True)
    copies = args.slides / "handouts"
    copies.mkdir(exist_ok=True)
    start = time.monotonic()
    asyncio.run(print_decks(decks, args.out))
    if REFUSED:
        sys.exit(f"slides/handouts.py: the decks asked for files off this machine: {sorted(set(REFUSED))}")
    wanted = {deck.name.replace(".slides.html", suffix) for deck in decks for suffix in SUFFIXES}
    for old in [*args.out.glob("*.pdf"), *copies.glob("*.pdf")]:
        if old.name not in wanted and not old.name.endswith(
            "-article.pdf"
        ):  # its deck is gone (articles: slides/articles.py)
            old.unlink()
    for name in sorted(wanted):
        shutil.copy2(args.out / name, copies / name)
    print(f"{args.out}: {len(wanted)} PDFs, copied into {copies} ({time.monotonic() - start:.1f} s)")


if __name__ == "__main__":
    main()
