"""Print each notebook as an article: its HTML export (make html) on A4 pages, for a handout to read.

    python slides/articles.py --html build/html --out build/handouts

For each page HTML/NN_name.html it writes OUT/NN_name-article.pdf: the whole notebook in reading
order (text, the speaker notes' longer explanations where they stand in the notebook, code, outputs,
figures with their alt text), on A4 with 15 mm margins (no page numbers: Chromium prints a footer outside the tags), code and outputs wrapped
instead of cut at the margin and set at 9.75 pt (13 px), cells kept whole on a page where they fit.
Offline, with Debian's Chromium, once MathJax has typeset the page, its fonts are loaded and its
widgets (read-only, as in the decks) have drawn. Tagged as the deck handouts are (slides/handouts.py:
each formula a /Figure named by its TeX, the notebook's h1 as /Title, an outline of its headings),
and checked as they are, plus: no code or output text under CODE_PT. A PDF that fails a check is
printed again from a fresh load, up to handouts.ATTEMPTS times. PDFs newer than their page are kept.
"""

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path

import handouts  # slides/handouts.py, the deck handouts: the maths, tags and checks shared here
from measure import CHROMIUM, CHROMIUM_FLAGS, WIDGETS_DRAWN
from pypdf import PdfReader

CODE_PT = 9  # the smallest code and output text on paper
SUFFIX = "-article.pdf"
# The handouts' scripts work on a deck's slides (.reveal .slides); an article is the whole page.
EMPTY_MATHS = handouts.EMPTY_MATHS.replace(".reveal .slides .MathJax_CHTML", ".MathJax_CHTML")
LABEL_MATHS_JS = handouts.LABEL_MATHS_JS.replace(handouts.EMPTY_MATHS, EMPTY_MATHS).replace(
    "formula.closest('.reveal .slides') && ", ""
)
if ".reveal" in EMPTY_MATHS or ".reveal .slides" in LABEL_MATHS_JS:  # handouts.py's scripts changed: follow them
    raise ImportError("slides/articles.py: handouts.EMPTY_MATHS or LABEL_MATHS_JS no longer read as expected")
READY_JS = f"""async () => {{
  if (!window.MathJax || !MathJax.Hub) return false;
  await new Promise(done => MathJax.Hub.Register.StartupHook('End', done));
  await new Promise(done => MathJax.Hub.Queue(done));
  const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
  if (!scripts.every(s => s.MathJax && s.MathJax.state === MathJax.ElementJax.STATE.PROCESSED)) return false;
  await document.fonts.ready;
  return ({WIDGETS_DRAWN})(document.body);
}}"""
PDF_OPTIONS = {
    "format": "A4",
    "margin": {"top": "15mm", "bottom": "18mm", "left": "15mm", "right": "15mm"},
    "print_background": True,
    "tagged": True,
    "outline": True,
}


def code_sizes(sizes):
    """A visitor_text for pypdf (or handouts.text_and_untagged's `also`) that appends to `sizes` the size (pt, as
    printed) of each piece of text set in a monospace font."""

    def visit(text, cm, tm, font, size):
        name = str((font or {}).get("/BaseFont", ""))
        if text.strip() and "Mono" in name:
            sizes.append(size * abs(tm[3]) * abs(cm[3]))

    return visit


def smallest(sizes):
    """The smallest of code_sizes' sizes, rounded; None without any."""
    return round(min(sizes), 2) if sizes else None


def smallest_code_pt(pdf):
    """The smallest size (pt, as printed) of text set in a monospace font anywhere in a PDF; None without any."""
    sizes = []
    for page in PdfReader(pdf).pages:
        page.extract_text(visitor_text=code_sizes(sizes))
    return smallest(sizes)


async def print_article(context, html, pdf):
    """Print one page to `pdf` and check it; raises RuntimeError on a check that fails."""
    page = await context.new_page()
    try:
        await page.goto(html.resolve().as_uri())
        await page.wait_for_function(READY_JS, timeout=120_000, polling=250)
        await page.evaluate(handouts.FONTS_JS)
        title = await page.evaluate(handouts.TITLE_JS, "h1")
        if not title:
            raise RuntimeError(f"{html.name} has no h1 to title its PDF")
        formulas, stuck = await page.evaluate(LABEL_MATHS_JS)
        if stuck:
            raise RuntimeError(f"formulas empty or hidden however often typeset: {stuck}")
        await page.wait_for_timeout(handouts.AX_SETTLE_MS)
        printing = pdf.with_name(f"{pdf.stem}.printing.pdf")  # becomes the PDF once it passes the checks
        printing.write_bytes(await page.pdf(**PDF_OPTIONS))
    finally:
        await page.close()
    pages, code_pt = check_article(printing, title, formulas)
    printing.replace(pdf)
    return pages, code_pt


def check_article(pdf, title, formulas):
    """Raise RuntimeError unless `pdf` has its maths, each formula named, all text tagged, its title, code at CODE_PT.

    Returns its number of pages and its smallest code size (pt). Its text is read in one pass per page."""
    reader = PdfReader(pdf)
    if formulas and not any(handouts.type3_fonts(sheet) for sheet in reader.pages):
        raise RuntimeError("printed without its maths")
    if unnamed := handouts.unnamed_formulas(reader, formulas):
        raise RuntimeError(f"formulas without a /Figure whose /Alt is their TeX: {unnamed}")
    sizes = []
    outside = [handouts.text_and_untagged(sheet, code_sizes(sizes))[1] for sheet in reader.pages]
    if untagged := [number for number, found in enumerate(outside, 1) if found]:
        raise RuntimeError(f"text outside its tags on pages {untagged}")
    if (reader.metadata or {}).get("/Title") != title:
        raise RuntimeError(f"titled {(reader.metadata or {}).get('/Title')!r}, not {title!r}")
    if (code_pt := smallest(sizes)) is None or code_pt < CODE_PT:
        raise RuntimeError(f"code printed at {code_pt} pt, under {CODE_PT} pt")
    return len(reader.pages), code_pt


async def print_articles(pages, out):
    """Print each page newer than its PDF, handouts.WORKERS at a time, offline."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    stale = [
        p for p in pages if not (pdf := out / f"{p.stem}{SUFFIX}").exists() or pdf.stat().st_mtime < p.stat().st_mtime
    ]
    if not stale:
        return
    workers = asyncio.Semaphore(handouts.WORKERS)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)

        async def one(html):
            async with workers:
                began, pdf = time.monotonic(), out / f"{html.stem}{SUFFIX}"
                context = await browser.new_context(viewport={"width": 1000, "height": 1400})
                try:
                    await context.route("**/*", handouts.offline)
                    for attempt in range(1, handouts.ATTEMPTS + 1):
                        try:
                            pages, code_pt = await print_article(context, html, pdf)
                            break
                        except (RuntimeError, PlaywrightError) as error:
                            print(f"{pdf.name}: {error} (load {attempt} of {handouts.ATTEMPTS})", file=sys.stderr)
                            if attempt == handouts.ATTEMPTS:
                                raise
                finally:
                    await context.close()
                print(f"{pdf}: {pages} pages, code at {code_pt} pt ({time.monotonic() - began:.1f} s)")

        await asyncio.gather(*(one(html) for html in stale))
        await browser.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, required=True, help="the HTML exports (e.g. build/html)")
    parser.add_argument("--out", type=Path, required=True, help="where the PDFs go (e.g. build/handouts)")
    parser.add_argument(
        "--copies", type=Path, help="also copy them here (e.g. build/slides/handouts, beside the decks)"
    )
    args = parser.parse_args()
    pages = sorted(args.html.glob("[0-9][0-9]_*.html"))
    if not pages:
        sys.exit(f"slides/articles.py: no pages in {args.html}; run `make html` first")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    asyncio.run(print_articles(pages, args.out))
    if handouts.REFUSED:
        sys.exit(f"slides/articles.py: the pages asked for files off this machine: {sorted(set(handouts.REFUSED))}")
    if args.copies:
        args.copies.mkdir(parents=True, exist_ok=True)
        for html in pages:
            shutil.copy2(args.out / f"{html.stem}{SUFFIX}", args.copies / f"{html.stem}{SUFFIX}")
    print(f"{args.out}: {len(pages)} articles ({time.monotonic() - start:.1f} s)")


if __name__ == "__main__":
    main()
