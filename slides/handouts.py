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
and its widgets have drawn; loaded twice, with its notes pages and without.
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
import shutil
import sys
import time
from pathlib import Path

from pypdf import PdfReader

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measure import CHROMIUM, CHROMIUM_FLAGS, WIDGETS_DRAWN  # noqa: E402  (Debian's Chromium, its flags; widgets drawn)

SUFFIXES = (".pdf", "-notes.pdf")  # NN_name.slides.html -> NN_name.pdf, NN_name-notes.pdf
PAGE = {"width": 1280, "height": 720}  # the decks' canvas (slides/build.py), a slide per page
ATTEMPTS = 6  # prints of a deck whose PDF came out wrong (pages or maths missing) before giving up (deck 11's title page lost its maths in about half of the prints, cause not found)
WORKERS = 2  # decks printed at once (this machine and CI have 2 cores)
# reveal.js has laid the deck out as pages (a .pdf-page per slide, each slide with notes followed by
# its notes page); MathJax has typeset every formula (its start-up typeset ends after
# MathJax.isReady, so waiting on its queue alone could print a slide with its maths missing);
# the fonts are loaded; every widget has drawn (a slide that holds a widget view shows
# its plot image, decoded).
# The formulas on slides that came out of their typeset empty (no glyph, no width), as a JS expression.
EMPTY_MATHS = """[...document.querySelectorAll('.reveal .MathJax_CHTML')].filter(
    math => !math.closest('aside.notes') && !math.querySelector('.mjx-char') && !math.getBoundingClientRect().width)"""
READY_JS = """async () => {
  const pages = document.querySelectorAll('.reveal .slides > .pdf-page').length;
  if (!window.Reveal || !Reveal.isReady() || pages !== Reveal.getTotalSlides() || !window.MathJax) return false;
  await new Promise(done => MathJax.Hub.Register.StartupHook('End', done));  // the first typeset is done
  await new Promise(done => MathJax.Hub.Queue(done));  // and any typeset queued since
  const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
  if (!scripts.every(s => s.MathJax && s.MathJax.state === MathJax.ElementJax.STATE.PROCESSED)) return false;
  // In print mode a formula sometimes comes out of its typeset empty (no glyph, no width: deck 11's title
  // page lost its h_0 in about 6 prints of 10); render each such formula again and check once more.
  const empty = EMPTY_MATHS;
  if (empty.length) {
    empty.forEach(math => MathJax.Hub.Queue(["Rerender", MathJax.Hub, math.parentNode]));
    await new Promise(done => MathJax.Hub.Queue(done));
    return false;
  }
  await document.fonts.ready;
  return Reveal.getSlides().every(WIDGETS_DRAWN);
}""".replace("WIDGETS_DRAWN", WIDGETS_DRAWN).replace("EMPTY_MATHS", EMPTY_MATHS)
# MathJax's web fonts (families MJXc-*), loaded now: Chromium fetches a font only once text needs
# it, and prints text whose font is still loading as nothing (a deck once lost all of its maths).
FONTS_JS = """async () => {
  const mathjax = [...document.fonts].filter(font => font.family.startsWith('MJXc'));
  await Promise.all(mathjax.map(font => font.load().catch(() => null)));  // local() copies fail: fine
  await document.fonts.ready;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
# Each notes page holds its notes whole: text that would run past the page is set smaller (down
# to 12px). Returns, for each printed page in order, whether it is a notes page and whether it
# shows MathJax's maths; and the notes that still do not fit, as their first words.
FIT_NOTES_JS = """() => {
  const overflowing = [];
  const printed = [...document.querySelector('.reveal .slides').children]
    .filter(page => page.matches('.pdf-page, .speaker-notes-pdf'));
  const notesPages = printed.map(page => page.matches('.speaker-notes-pdf'));
  const maths = printed.map(page => page.matches('.pdf-page') && [...page.querySelectorAll('.MathJax_CHTML')].some(m => !m.closest('aside.notes')));
  for (const notes of document.querySelectorAll('.speaker-notes-pdf[data-layout="separate-page"]')) {
    let px = parseFloat(getComputedStyle(notes).fontSize);
    while (notes.scrollHeight > notes.clientHeight + 1 && px > 12) {
      px -= 1;
      notes.style.fontSize = px + 'px';
    }
    if (notes.scrollHeight > notes.clientHeight + 1) overflowing.push(notes.textContent.trim().slice(0, 60));
  }
  return [notesPages, maths, overflowing];
}"""


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
  const h1 = document.querySelector('.reveal .slides section h1');
  if (!h1) return '';
  const heading = h1.cloneNode(true);
  heading.querySelectorAll('.anchor-link').forEach(link => link.remove());
  document.title = heading.textContent.replace(/\\s+/g, ' ').trim();
  return document.title;
}"""
# Each formula an image named by its TeX, its glyphs no longer aria-hidden (see TAGGABLE_JS), once
# MathJax has nothing left to typeset (a formula typeset empty, as in READY_JS, is typeset again
# first); run again right before each print, since a formula that MathJax typesets again comes back
# aria-hidden. tests/browser/test_handouts.py checks each formula is a /Figure with its TeX as /Alt.
LABEL_MATHS_JS = """async () => {
  for (let round = 0; round < 3; round++) {
    const empty = EMPTY_MATHS;
    empty.forEach(math => MathJax.Hub.Queue(["Rerender", MathJax.Hub, math.parentNode]));
    await new Promise(done => MathJax.Hub.Queue(done));
    if (!empty.length) break;
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  }
  for (const jax of MathJax.Hub.getAllJax()) {
    const formula = document.getElementById(jax.inputID + '-Frame');
    if (!formula) continue;
    if (!formula.closest('h1, h2, h3, h4, h5, h6')) {  // a heading's maths is read (and bookmarked) as its glyphs
      formula.setAttribute('role', 'img');
      formula.setAttribute('aria-label', jax.originalText.trim());
    }
    formula.querySelectorAll('[aria-hidden]').forEach(glyphs => glyphs.removeAttribute('aria-hidden'));
  }
}""".replace("EMPTY_MATHS", EMPTY_MATHS)
AX_SETTLE_MS = 500  # after naming the formulas, before printing: see print_deck


def pages(pdf):
    """The number of pages of a PDF file."""
    return len(PdfReader(pdf).pages)


def type3_fonts(page):
    """How many Type 3 fonts a PDF page uses: Chromium prints MathJax's web fonts as Type 3."""
    fonts = page.get("/Resources", {}).get("/Font", {})
    return sum(font.get_object().get("/Subtype") == "/Type3" for font in fonts.values())


def untagged_text(page):
    """The text a PDF page draws outside marked content: in a tagged PDF, text no screen reader reads."""
    depth, found = [0], []

    def operator(op, args, cm, tm):
        if op in (b"BDC", b"BMC"):
            depth[0] += 1
        elif op == b"EMC":
            depth[0] -= 1

    def text(chunk, cm, tm, font, size):
        if not depth[0] and chunk.strip():
            found.append(chunk.strip())

    page.extract_text(visitor_operand_before=operator, visitor_text=text)
    return found


def blank_pages(pdf):
    """The 1-based numbers of the pages of a PDF that show no text and no image.

    A page's text is what pypdf extracts from its content stream (ignoring white space); its
    images are the image XObjects it draws, including those inside form XObjects. Lines and
    filled shapes alone (a background colour) do not count: such a page shows nothing to read.
    """
    blank = []
    for number, page in enumerate(PdfReader(pdf).pages, start=1):
        if not page.extract_text().strip() and not page.images:
            blank.append(number)
    return blank


async def print_deck(context, deck, out):
    """Print `deck` (a path) to OUT/NN_name-notes.pdf in reveal.js's print mode, then OUT/NN_name.pdf.

    Each PDF from a load of its own (with the notes pages, then without), so that each gets its own
    tags and outline from Chromium (pages cut out of a tagged PDF would leave its structure tree
    pointing at pages that are gone), and each is printed from a page prepared once, as it loaded: a
    page changed again after its first print lost formulas' tags now and then.
    """
    name = deck.name.removesuffix(".slides.html")
    notes_pdf, slides_pdf = out / f"{name}-notes.pdf", out / f"{name}.pdf"
    title, is_notes, maths = await print_page(context, deck, "?print-pdf&showNotes=separate-page", notes_pdf)
    _, _, slide_maths = await print_page(context, deck, "?print-pdf", slides_pdf)
    if len(slide_maths) != is_notes.count(False):
        raise RuntimeError(f"{deck.name} laid out {len(slide_maths)} slides alone, {is_notes.count(False)} with notes")
    for pdf, laid_out, tex in ((notes_pdf, is_notes, maths), (slides_pdf, slide_maths, slide_maths)):
        reader = PdfReader(pdf)
        if len(reader.pages) != len(laid_out):
            raise RuntimeError(f"{pdf} has {len(reader.pages)} pages; reveal.js laid out {len(laid_out)}")
        # MathJax's fonts print as Type 3 fonts; a page with maths without one lost its maths.
        lost = [number for number, (page, has) in enumerate(zip(reader.pages, tex), 1) if has and not type3_fonts(page)]
        if lost:
            raise RuntimeError(f"{pdf} printed pages {lost} without their maths")
        if (reader.metadata or {}).get("/Title") != title:
            raise RuntimeError(f"{pdf} is titled {(reader.metadata or {}).get('/Title')!r}, not {title!r}")
        # Maths that MathJax typeset again after TAGGABLE_JS (under load, now and then) is aria-hidden
        # glyphs again, which Chromium leaves out of the tags: a screen reader would skip it.
        untagged = [number for number, page in enumerate(reader.pages, 1) if untagged_text(page)]
        if untagged:
            raise RuntimeError(f"{pdf} printed text outside its tags on pages {untagged}")
    return slides_pdf, notes_pdf


async def print_page(context, deck, query, pdf):
    """Load `deck` with `query` in print mode, make it taggable, print it to `pdf`.

    Returns the deck's title and, for each printed page, whether it is a notes page and whether it
    shows maths.
    """
    page = await context.new_page()
    try:
        await page.goto(f"{deck.resolve().as_uri()}{query}")
        await page.wait_for_function(READY_JS, timeout=120_000, polling=250)
        await page.evaluate(FONTS_JS)
        title = await page.evaluate(TAGGABLE_JS)  # before FIT_NOTES_JS: it moves the notes' label
        if not title:
            raise RuntimeError(f"{deck.name} has no h1 on its first slide to title its PDFs")
        is_notes, maths, crowded = await page.evaluate(FIT_NOTES_JS)
        if crowded:
            print(f"{pdf.name}: notes cut at the bottom of their page: {crowded}", file=sys.stderr)
        await page.evaluate(LABEL_MATHS_JS)
        # Chromium tags the PDF from its accessibility tree, which follows the page's changes a moment later.
        await page.wait_for_timeout(AX_SETTLE_MS)
        pdf.write_bytes(await page.pdf(**PDF_OPTIONS))
    finally:
        await page.close()
    return title, is_notes, maths


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
                    for attempt in range(1, ATTEMPTS + 1):
                        try:
                            slides_pdf, notes_pdf = await print_deck(context, deck, out)
                            break
                        except RuntimeError as error:  # a layout or font race: print the deck again
                            print(f"{deck.name}: {error} (attempt {attempt} of {ATTEMPTS})", file=sys.stderr)
                            if attempt == ATTEMPTS:
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
        if old.name not in wanted:  # its deck is gone
            old.unlink()
    for name in sorted(wanted):
        shutil.copy2(args.out / name, copies / name)
    print(f"{args.out}: {len(wanted)} PDFs, copied into {copies} ({time.monotonic() - start:.1f} s)")


if __name__ == "__main__":
    main()
