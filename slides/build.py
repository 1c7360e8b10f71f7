"""Build one offline reveal.js deck per lesson notebook, and an index page linking them.

Run by `make slides` after `npm ci` has put slides/package-lock.json's packages in
build/slides-npm/node_modules:

    python slides/build.py --npm build/slides-npm/node_modules --out build/slides notebooks/NN_*.ipynb

The decks are nbconvert's SlidesExporter with the template slides/templates/rnns, made from the
notebooks' stored outputs and widget state (nothing is executed). With `--html DIR`, each notebook
is also exported as one readable page, DIR/NN_name.html (nbconvert's HTMLExporter, JupyterLab's look,
template slides/templates/rnns-html), loading MathJax, require.js and the widget renderer from
OUT/vendor/ by relative paths: DIR works offline while OUT sits where it was built. Everything a deck loads is copied
into OUT/vendor/ and referenced by a relative path, so OUT can be copied anywhere (a USB stick, a
laptop with no network) and each deck opened straight from disk. A deck is rebuilt only when its
notebook, the template or this script is newer than it; the theme (slides/rnns.css, which the decks
link to) and the index are written on every run.
"""

import argparse
import html
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import mistune
from nbconvert import HTMLExporter, SlidesExporter
from traitlets.config import Config

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
THEME = HERE / "rnns.css"
# npm package -> (files and folders to copy into vendor/<package>/, names never copied). Each
# package's package.json goes too: it names the version and the licence.
VENDOR = {
    "reveal.js": (["dist", "plugin", "LICENSE"], ["*.map", "*.esm.js", "*.scss"]),
    "requirejs": (["require.js"], []),
    "jquery": (["dist/jquery.min.js", "LICENSE.txt"], []),
    # MathJax 2: only the TeX fonts (CommonHTML uses them); no unpacked sources or tests.
    "mathjax": (["MathJax.js", "config", "extensions", "jax", "localization", "fonts/HTML-CSS/TeX", "LICENSE"], []),
    "@jupyter-widgets/html-manager": (["dist"], ["*.map", "embed.js*"]),
}
# What the decks load, relative to OUT (nbconvert puts these in src/href and require() calls).
URLS = {
    "reveal_url_prefix": "vendor/reveal.js",
    "require_js_url": "vendor/requirejs/require.js",
    "jquery_url": "vendor/jquery/dist/jquery.min.js",
    "mathjax_url": "vendor/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "widget_renderer_url": "vendor/@jupyter-widgets/html-manager/dist/embed-amd.js",
}
# A markdown link to another lesson ("[notebook 02](02_feature_vectors.ipynb)") leads to its deck.
LESSON_LINK = re.compile(r'(<a\s[^>]*?href=")(?:\./)?([0-9][0-9]_[^"/#?]+)\.ipynb(#[^"]*)?"')
WIDGET = "application/vnd.jupyter.widget-view+json"  # the output of a cell that shows a widget
# A deck or page has no kernel: a slider moved there would change its number and leave the plot drawn for the
# old one. So its controls are saved disabled, and each widget says so (read_only_widgets).
WIDGET_STATE = re.compile(r'(<script type="application/vnd\.jupyter\.widget-state\+json">)(.*?)(</script>)', re.S)
WIDGET_VIEW = re.compile(r'<script type="application/vnd\.jupyter\.widget-view\+json">.*?</script>', re.S)
READ_ONLY = "Read-only here: the plot is drawn for these values. The sliders move in the notebook and the live slides."
# The glossary and the shape cheat sheet (notebooks/*.md, beside the notebooks that link them) become pages
# beside the decks: OUT/docs/NAME.html.
DOCS = Path(__file__).resolve().parent.parent / "notebooks"
DOC_LINK = re.compile(r'(<a\s[^>]*?href=")(?:\./)?([a-z_]+)\.md(#[^"]*)?"')
# Said on each deck's first slide (so on each handout's first page), the index and the reference pages:
# universities may host, adapt and hand out the material under these terms (LICENSE, LICENSE-CC-BY-4.0).
LICENCE = (
    "© 2026 The RNNs by hand authors. Text, figures, slides and handouts: "
    '<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>; '
    'code: <a href="https://opensource.org/license/mit">MIT</a>.'
)


# nbconvert's HTML order, with a PNG before markdown: helpers show each figure as both (the markdown
# copy is for JupyterLab, which ignores a PNG's alt); the PNG takes its alt text from its metadata
# (slides/templates/figure.html.j2) and keeps the figure's own size.
PRIORITY = [
    "application/vnd.jupyter.widget-view+json",
    "application/javascript",
    "text/html",
    "image/svg+xml",
    "image/png",
    "image/jpeg",
    "text/markdown",
    "text/vnd.mermaid",
    "text/latex",
    "text/plain",
]


def exporter():
    """nbconvert's SlidesExporter with local URLs, the rnns template and a 1280x720 canvas."""
    c = Config()
    c.NbConvertBase.display_data_priority = PRIORITY
    for name, url in URLS.items():
        setattr(c.SlidesExporter, name, url)
    c.SlidesExporter.reveal_theme = "rnns"  # OUT/vendor/reveal.js/dist/theme/rnns.css: slides/rnns.css
    c.SlidesExporter.reveal_transition = "none"
    c.SlidesExporter.reveal_number = "c/t"
    c.SlidesExporter.reveal_width = "1280"
    c.SlidesExporter.reveal_height = "720"
    c.SlidesExporter.exclude_input_prompt = True  # no "In [3]:" column: the code gets the width
    c.SlidesExporter.exclude_output_prompt = True
    c.SlidesExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.SlidesExporter.extra_template_paths = [str(TEMPLATES)]  # figure.html.j2, widgets_access.js
    c.SlidesExporter.template_name = "rnns"
    return SlidesExporter(config=c)


def html_exporter(vendor):
    """nbconvert's HTMLExporter with the rnns-html template, loading what it needs from `vendor` (a relative URL).

    What lab/index.html.j2 would fetch from CDNs: MathJax, require.js, the widget renderer (all
    settable) and mermaid (emptied in the template: the lessons draw no mermaid diagrams).
    """
    c = Config()
    c.NbConvertBase.display_data_priority = PRIORITY
    for name in ("require_js_url", "mathjax_url", "widget_renderer_url"):
        setattr(c.HTMLExporter, name, URLS[name].replace("vendor", vendor, 1))
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.HTMLExporter.extra_template_paths = [str(TEMPLATES)]
    c.HTMLExporter.template_name = "rnns-html"
    return HTMLExporter(config=c)


def export_html(notebooks, out, html_dir, newest_input):
    """html_dir/NN_name.html for each notebook (stale ones only): the notebook as one accessible page."""
    html_dir.mkdir(parents=True, exist_ok=True)
    vendor = Path(os.path.relpath(out / "vendor", html_dir)).as_posix()
    exporter = None
    for notebook in notebooks:
        page = html_dir / f"{notebook.stem}.html"
        if page.exists() and page.stat().st_mtime >= max(newest_input, notebook.stat().st_mtime):
            continue
        exporter = exporter or html_exporter(vendor)
        body, _ = exporter.from_filename(str(notebook))
        body = relink(LESSON_LINK, read_only_widgets(body), "{}.html")
        write(page, relink(DOC_LINK, body, f"{Path(os.path.relpath(out / 'docs', html_dir)).as_posix()}/{{}}.html"))
        print(f"{page}: exported")


def read_only_widgets(body):
    """`body` with every widget control saved disabled, and a line under each widget saying where it is live."""

    def freeze(match):
        state = json.loads(match[2])
        for model in state["state"].values():
            if "disabled" in model["state"]:
                model["state"]["disabled"] = True
        return match[1] + json.dumps(state).replace("</", "<\\/") + match[3]

    body = WIDGET_STATE.sub(freeze, body)
    return WIDGET_VIEW.sub(lambda m: f'{m[0]}\n<p class="rnns-read-only">{READ_ONLY}</p>', body)


def relink(pattern, text, target):
    """`text` with each link `pattern` matches pointed at target.format(name), keeping its #anchor.

    `pattern` captures the link's opening up to href=", the linked file's name, and its anchor.
    """
    return pattern.sub(lambda m: f'{m[1]}{target.format(m[2])}{m[3] or ""}"', text)


def slide_type(cell):
    """A cell's Slide Type: slide, subslide, fragment, -, skip or notes ("-" when unset)."""
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")


def slide_count(nb):
    """The slides reveal.js will count: cells of type slide or subslide, and the first shown cell."""
    types = [slide_type(cell) for cell in nb["cells"]]
    shown = [i for i, kind in enumerate(types) if kind not in ("skip", "notes")]
    return sum(1 for i, kind in enumerate(types) if kind in ("slide", "subslide") or (shown and i == shown[0]))


def presenting_minutes(nb):
    """An estimate of the time to present a deck, rounded to 5 minutes (at least 5).

    Every word of the shown markdown (slides and speaker notes) spoken at 130 words a minute, 45
    seconds per shown code cell to run it and read its output with the class, and 2 minutes more
    per widget to move its controls. Set-up cells (Skip) are not presented.
    """
    shown = [c for c in nb["cells"] if slide_type(c) != "skip"]
    words = sum(len(re.findall(r"\w+", "".join(c["source"]))) for c in shown if c["cell_type"] == "markdown")
    code = [c for c in shown if c["cell_type"] == "code"]
    widgets = sum(any(WIDGET in o.get("data", {}) for o in c.get("outputs", [])) for c in code)
    return max(5, 5 * round((words / 130 + 0.75 * len(code) + 2 * widgets) / 5))


def title(nb, fallback):
    """The notebook's first markdown heading, else fallback."""
    markdown = ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown"]
    return heading("\n".join(markdown), fallback)


def heading(markdown, fallback):
    """The first heading of a markdown text, else fallback."""
    return next((line.lstrip("#").strip() for line in markdown.splitlines() if line.startswith("#")), fallback)


def copy_vendor(npm, vendor):
    """Copy the runtime files of each package in VENDOR from npm (a node_modules) to vendor."""
    stamp = vendor / ".copied-from"
    lock = npm / ".package-lock.json"  # written by npm ci: changes whenever the packages do
    if stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return False
    shutil.rmtree(vendor, ignore_errors=True)
    for package, (parts, ignore) in VENDOR.items():
        for part in [*parts, "package.json"]:
            source, target = npm / package / part, vendor / package / part
            if not source.exists():
                sys.exit(f"slides/build.py: {source} is missing; run `make slides` (npm ci) again")
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns(*ignore))
            else:
                shutil.copy2(source, target)
    stamp.write_text(f"{npm}\n")
    return True


def printed(out, deck):
    """(href, label) of each handout of `deck` in OUT/handouts/ that is not older than the deck.

    `make handouts` prints them there: NN_name.pdf (a page per slide) and NN_name-notes.pdf (with
    speaker notes: slides/handouts.py), NN_name-article.pdf (the notebook on A4: slides/articles.py);
    before it has, or once the deck has changed, none.
    """
    stem = deck.removesuffix(".slides.html")
    found = []
    for suffix, label in (("", "PDF"), ("-notes", "PDF with notes"), ("-article", "Article (A4)")):
        pdf = out / "handouts" / f"{stem}{suffix}.pdf"
        if pdf.exists() and pdf.stat().st_mtime >= (out / deck).stat().st_mtime:
            found.append((f"handouts/{pdf.name}", label))
    return found


def with_licence(deck):
    """A deck's HTML with the LICENCE line at the end of its first slide (the first subslide section)."""
    end = deck.index("</section>")
    return deck[:end] + f'<p class="licence">{LICENCE}</p>\n' + deck[end:]


def write(path, text):
    """Write `text` to `path` in one step (a temporary file renamed over it): whoever reads the page while
    the build runs (the unit tests, beside the browser half of CI) sees the old page or the new one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def write_index(out, decks, handouts=(), course_map=""):
    """OUT/index.html: a link to each deck, with its title, slide count, presenting time and PDFs, the handouts, the course map."""
    pdfs = {deck: printed(out, deck) for deck, *_ in decks}
    rows = "\n".join(
        f'    <li><a href="{html.escape(deck)}">{html.escape(name)}</a>'
        f"<span>{count} slides · about {minutes} min</span>"
        + "".join(f'<a class="pdf" href="{html.escape(href)}">{label}</a>' for href, label in pdfs[deck])
        + "</li>"
        for deck, name, count, minutes in decks
    )
    if any(pdfs.values()):
        about_pdfs = (
            "PDF: a page per slide, every fragment shown. PDF with notes: each slide that has speaker"
            " notes is followed by a page of its notes. Article (A4): the whole notebook to read on paper,"
            " its explanations where they stand, code at 9.75 pt."
        )
    else:
        about_pdfs = (
            "A PDF of each deck (a page per slide, and one with the speaker notes) and each notebook as an A4"
            " article: run <code>make handouts</code>."
        )
    write(
        out / "index.html",
        f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>RNNs by hand: slides</title>
  <style>
    body {{ font: 28px/1.5 system-ui, "DejaVu Sans", sans-serif; color: #111; background: #fff;
           max-width: 1100px; margin: 40px auto; padding: 0 30px; }}
    h1 {{ font-size: 48px; margin-bottom: 0.2em; }}
    ul {{ list-style: none; padding-left: 0; }}
    h2 {{ font-size: 36px; margin-top: 1.2em; }}
    h3, table, ol {{ font-size: 22px; }}
    table {{ border-collapse: collapse; }}
    caption {{ text-align: left; color: #333; padding-bottom: 0.3em; }}
    th, td {{ text-align: left; padding: 2px 14px 2px 0; border-bottom: 1px solid #ccc; }}
    li {{ margin: 0.35em 0; }}
    a {{ color: #0645ad; font-weight: 600; text-decoration: none; }}
    a:hover, a:focus {{ text-decoration: underline; }}
    a.pdf {{ font-size: 22px; font-weight: normal; margin-left: 0.8em; white-space: nowrap; }}
    span {{ color: #555; font-size: 22px; margin-left: 0.8em; }}
    p, kbd {{ font-size: 22px; }}
    kbd {{ border: 1px solid #999; border-radius: 4px; padding: 0 6px; }}
  </style>
</head>
<body>
  <h1>RNNs by hand: slides</h1>
  <ul>
{rows}
  </ul>
  <p>Times are estimates: slide text and speaker notes spoken at 130 words a minute, 45 s per code
  cell, 2 minutes per widget.</p>
  <p>{about_pdfs}</p>
  <p>Handouts: {" · ".join(f'<a href="{html.escape(page)}">{html.escape(name)}</a>' for page, name in handouts)}</p>
  <p>Keys: <kbd>→</kbd>/<kbd>Space</kbd> next, <kbd>←</kbd> back, <kbd>Esc</kbd> overview,
  <kbd>F</kbd> full screen, <kbd>S</kbd> speaker notes, <kbd>B</kbd> black screen, <kbd>?</kbd> all keys.</p>
  {course_map}
  <p class="licence">{LICENCE}</p>
</body>
</html>
""",
    )


def lesson_links(page):
    """The decks a deck or a docs page links to, as written ("02_x.slides.html", "../02_x.slides.html")."""
    return set(re.findall(r'href="((?:\.\./)?[0-9][0-9]_[^"/#?]+\.slides\.html)', page.read_text()))


def write_docs(out, docs=DOCS):
    """OUT/docs/NAME.html for each DOCS/NAME.md (beside the notebooks): printable pages whose links lead to the decks."""
    render = mistune.create_markdown(escape=False, plugins=["table"])
    (out / "docs").mkdir(exist_ok=True)
    pages = []
    for source in sorted(docs.glob("*.md")):
        markdown = source.read_text()
        body = relink(DOC_LINK, relink(LESSON_LINK, render(markdown), "../{}.slides.html"), "{}.html")
        name = heading(markdown, source.stem)
        write(
            out / "docs" / f"{source.stem}.html",
            f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{html.escape(name)}</title>
  <style>
    body {{ font: 17px/1.45 system-ui, "DejaVu Sans", sans-serif; color: #111; max-width: 1150px;
           margin: 24px auto; padding: 0 24px; }}
    table {{ border-collapse: collapse; margin: 0.6em 0; }}
    th, td {{ border: 1px solid #bbb; padding: 3px 8px; text-align: left; vertical-align: top; }}
    code {{ font-size: 0.92em; background: #f3f3f3; padding: 0 3px; }}
    a {{ color: #0645ad; }}
    @media print {{ body {{ font-size: 11px; margin: 0; max-width: none; }} a {{ color: inherit; }} }}
  </style>
</head>
<body>
{body}
<p class="licence">{LICENCE}</p>
</body>
</html>
""",
        )
        pages.append((f"docs/{source.stem}.html", name))
    return pages


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npm", type=Path, required=True, help="node_modules that npm ci filled")
    parser.add_argument("--out", type=Path, required=True, help="where the decks go (e.g. build/slides)")
    parser.add_argument("--html", type=Path, help="also export each notebook as a page here (e.g. build/html)")
    parser.add_argument("--plan", help="a course built from a plan of notebooks/course.yml: its index shows that plan")
    parser.add_argument("notebooks", type=Path, nargs="+")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    if copy_vendor(args.npm, out / "vendor"):
        print(f"copied the reveal.js, require.js, jQuery, MathJax and widget-renderer files into {out / 'vendor'}")
    theme = out / "vendor" / "reveal.js" / "dist" / "theme" / "rnns.css"
    shutil.copy2(THEME, theme.with_name(".rnns.css.tmp"))
    os.replace(theme.with_name(".rnns.css.tmp"), theme)

    inputs = [Path(__file__), *TEMPLATES.rglob("*")]
    newest_input = max(path.stat().st_mtime for path in inputs)
    slides = None
    decks = []
    for notebook in sorted(args.notebooks):
        nb = json.loads(notebook.read_text())
        deck = out / f"{notebook.stem}.slides.html"
        count = slide_count(nb)
        decks.append((deck.name, title(nb, notebook.stem), count, presenting_minutes(nb)))
        if deck.exists() and deck.stat().st_mtime >= max(newest_input, notebook.stat().st_mtime):
            continue
        start = time.monotonic()
        slides = slides or exporter()
        body, _ = slides.from_filename(str(notebook))
        body = relink(LESSON_LINK, read_only_widgets(body), "{}.slides.html")
        write(deck, with_licence(relink(DOC_LINK, body, "docs/{}.html")))
        print(f"{deck}: {count} slides ({time.monotonic() - start:.1f} s)")
    wanted = {name for name, *_ in decks}
    for old in out.glob("*.slides.html"):
        if old.name not in wanted:  # its notebook was renamed or removed
            old.unlink()
            print(f"removed {old}: no notebook")
    if args.html:
        export_html(sorted(args.notebooks), out, args.html, newest_input)
    handouts = write_docs(out, sorted(args.notebooks)[0].parent)  # a course's pages are its own (slides/course.py)
    linked = [(deck, href) for deck, *_ in decks for href in lesson_links(out / deck)]
    linked += [(page, href) for page, _ in handouts for href in lesson_links(out / page)]
    missing = [f"{page}: {href}" for page, href in linked if not (out / page).parent.joinpath(href).resolve().exists()]
    if missing:
        sys.exit("links to decks that are not here (slides/course.py points them online):\n  " + "\n  ".join(missing))
    import course  # slides/course.py: the course map, from notebooks/course.yml

    data = course.course_map()
    shown = [nb.name[:2] for nb in args.notebooks]
    everything = set(shown) >= set(data["notebooks"])
    data["notebooks"] = {n: e for n, e in data["notebooks"].items() if n in shown}
    plans = [args.plan] if args.plan else None if everything else []  # a part of the series shows no plan but its own
    write_index(out, decks, handouts, course.html_map(data, plans))
    print(f"{out / 'index.html'}: {len(decks)} decks, {sum(count for _, _, count, _ in decks)} slides")


if __name__ == "__main__":
    main()
