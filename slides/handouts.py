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
and its widgets have drawn. PDFs newer than their deck are kept.

pages() and blank_pages() read a PDF (pypdf); tests/browser/test_handouts.py checks every
handout with them.
"""

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path

from pypdf import PdfReader, PdfWriter

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
READY_JS = """async () => {
  const pages = document.querySelectorAll('.reveal .slides > .pdf-page').length;
  if (!window.Reveal || !Reveal.isReady() || pages !== Reveal.getTotalSlides() || !window.MathJax) return false;
  await new Promise(done => MathJax.Hub.Register.StartupHook('End', done));  // the first typeset is done
  await new Promise(done => MathJax.Hub.Queue(done));  // and any typeset queued since
  const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
  if (!scripts.every(s => s.MathJax && s.MathJax.state === MathJax.ElementJax.STATE.PROCESSED)) return false;
  // In print mode a formula sometimes comes out of its typeset empty (no glyph, no width: deck 11's title
  // page lost its h_0 in about 6 prints of 10); render each such formula again and check once more.
  const empty = [...document.querySelectorAll('.reveal .MathJax_CHTML')].filter(
    math => !math.closest('aside.notes') && !math.querySelector('.mjx-char') && !math.getBoundingClientRect().width);
  if (empty.length) {
    empty.forEach(math => MathJax.Hub.Queue(["Rerender", MathJax.Hub, math.parentNode]));
    await new Promise(done => MathJax.Hub.Queue(done));
    return false;
  }
  await document.fonts.ready;
  return Reveal.getSlides().every(WIDGETS_DRAWN);
}""".replace("WIDGETS_DRAWN", WIDGETS_DRAWN)
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


def pages(pdf):
    """The number of pages of a PDF file."""
    return len(PdfReader(pdf).pages)


def type3_fonts(page):
    """How many Type 3 fonts a PDF page uses: Chromium prints MathJax's web fonts as Type 3."""
    fonts = page.get("/Resources", {}).get("/Font", {})
    return sum(font.get_object().get("/Subtype") == "/Type3" for font in fonts.values())


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

    One load of the deck, one print: the slides-only PDF is the notes PDF without its notes pages.
    """
    name = deck.name.removesuffix(".slides.html")
    notes_pdf, slides_pdf = out / f"{name}-notes.pdf", out / f"{name}.pdf"
    page = await context.new_page()
    try:
        await page.goto(f"{deck.resolve().as_uri()}?print-pdf&showNotes=separate-page")
        await page.wait_for_function(READY_JS, timeout=120_000, polling=250)
        await page.evaluate(FONTS_JS)
        is_notes, maths, crowded = await page.evaluate(FIT_NOTES_JS)
        if crowded:
            print(f"{notes_pdf.name}: notes cut at the bottom of their page: {crowded}", file=sys.stderr)
        pdf = await page.pdf(
            width=f"{PAGE['width']}px", height=f"{PAGE['height']}px", print_background=True, prefer_css_page_size=True
        )
    finally:
        await page.close()
    notes_pdf.write_bytes(pdf)
    reader = PdfReader(notes_pdf)
    if len(reader.pages) != len(is_notes):
        raise RuntimeError(f"{notes_pdf} has {len(reader.pages)} pages; reveal.js laid out {len(is_notes)}")
    # MathJax's fonts print as Type 3 fonts; a page with maths without one lost its maths.
    lost = [number for number, (page, tex) in enumerate(zip(reader.pages, maths), 1) if tex and not type3_fonts(page)]
    if lost:
        raise RuntimeError(f"{notes_pdf} printed pages {lost} without their maths")
    writer = PdfWriter()
    for page, notes in zip(reader.pages, is_notes, strict=True):
        if not notes:
            writer.add_page(page)
    with slides_pdf.open("wb") as file:
        writer.write(file)
    return slides_pdf, notes_pdf


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
