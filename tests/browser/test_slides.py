"""Real browser: each slide deck of `make slides` presents from disk, with no network at all.

Run by `make test-browser`, which runs `make slides` first. Each deck is opened from file:// (as an
instructor opens it) in Debian's headless Chromium at 1280x720, with test_browser.py's launch flags
and a fresh profile, HOME and TMPDIR in a folder under build/ that is removed afterwards. Any
request that leaves the machine is aborted and fails the test. Checked per deck: reveal.js starts
and counts the notebook's slides; MathJax typesets the first slide with display maths ($$) using
its own fonts from vendor/; the explorer's plot (an ipywidgets Image, from the saved widget state)
shows beside its sliders. Screenshots of the first slide, those three and the last (with every
fragment shown): build/slides-screenshots/<deck>/slide-H-V.png.

And every slide of every deck fits the 1280x720 screen, with readable text (slides/measure.py:
nothing too tall or wide, nothing scrolling inside a slide, body text >= 24px, code and outputs
>= 18px, nothing under 16px), measured with all its fragments shown; a screenshot of each slide
goes to build/slides-screenshots/<deck>/fit/.
"""

import json
import re
import shutil
from pathlib import Path

import measure  # slides/measure.py: the fit and text-size checks
import pytest

ROOT = Path(__file__).resolve().parents[2]
SLIDES = ROOT / "build" / "slides"
SHOTS = ROOT / "build" / "slides-screenshots"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
VIEWPORT = {"width": 1280, "height": 720}
# Requests the page may make: files of the deck, and what the page makes itself.
ON_MACHINE = re.compile(
    r"^(file|data|blob|about|chrome-extension|devtools):|^(https?|wss?)://(127\.0\.0\.1|localhost|\[::1\])[:/]"
)
OFF_MACHINE = re.compile(
    r"^(?!(file|data|blob|about|chrome-extension|devtools):|(https?|wss?)://(127\.0\.0\.1|localhost|\[::1\])[:/])"
)
PRESENT = ".reveal .slides > section.present > section.present"  # the slide on screen (a subslide section)
MATHJAX_DONE_JS = "() => new Promise(done => MathJax.Hub.Queue(() => done(true)))"
SHOW_JS = measure.SHOW_JS  # show slide (h, v) with all of its fragments, from its top


def cells_with_slides(notebook):
    """Each cell with the (h, v) of the slide it is on (None before the first shown cell), as nbconvert places it."""
    cells = json.loads(notebook.read_text())["cells"]
    placed, h, v = [], None, 0
    for cell in cells:
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type") or "-"
        if h is None and kind not in ("skip", "notes"):
            h = 0  # the first shown cell opens the first slide, whatever its type
        elif h is not None and kind == "slide":
            h, v = h + 1, 0
        elif h is not None and kind == "subslide":
            v += 1
        placed.append((cell, None if h is None or kind == "skip" else (h, v)))
    return placed


def first_slide(placed, wanted):
    """The (h, v) of the first shown cell for which wanted(cell) holds, else None."""
    return next((where for cell, where in placed if where and wanted(cell)), None)


def has_display_maths(cell):
    return cell["cell_type"] == "markdown" and "$$" in "".join(cell["source"])


def has_printed_output(cell):
    return cell["cell_type"] == "code" and any(out.get("output_type") == "stream" for out in cell.get("outputs", []))


def has_widget(cell):
    outputs = cell.get("outputs", [])
    return any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in outputs)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_deck_presents_offline_with_its_slides_maths_and_widgets(in_chromium, notebook):
    """reveal.js counts the notebook's slides; maths is typeset; the explorer's plot renders; nothing leaves the machine."""
    in_chromium(check_deck, notebook)


def check_deck(context, notebook):
    """The checks of the test above, run in the Playwright thread."""
    deck = SLIDES / f"{notebook.stem}.slides.html"
    assert deck.exists(), f"no deck for {notebook.name}"
    shots = SHOTS / notebook.stem
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    placed = cells_with_slides(notebook)
    expected = len({where for _, where in placed if where})

    page = context.new_page()
    page.set_default_timeout(30_000)
    off_machine, errors = [], []
    page.route(OFF_MACHINE, lambda route: (off_machine.append(route.request.url), route.abort()))
    page.on("request", lambda request: ON_MACHINE.match(request.url) or off_machine.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    try:
        page.goto(deck.as_uri())
        page.wait_for_function("() => window.Reveal && Reveal.isReady()")
        assert page.evaluate("Reveal.getTotalSlides()") == expected
        page.evaluate(MATHJAX_DONE_JS)
        page.evaluate("document.fonts.ready.then(() => true)")
        page.screenshot(path=shots / "slide-0-0.png")

        maths = first_slide(placed, has_display_maths)
        if maths:
            shown = page.evaluate(SHOW_JS, list(maths))
            assert (shown["h"], shown["v"]) == maths
            present = page.locator(PRESENT)
            assert present.locator(".MJXc-display").count() > 0, f"slide {maths}: no display maths typeset"
            assert "$$" not in present.inner_text(), f"slide {maths}: raw $$ left on the slide"
            assert page.locator(".MathJax_Error, .mjx-merror, .MathJax_CHTML .mjx-error").count() == 0
            webfonts = page.evaluate(
                "[...document.fonts].filter(f => /^MJXc-TeX-.*w$/.test(f.family) && f.status === 'loaded').length"
            )
            assert webfonts > 0, "MathJax's TeX fonts did not load from vendor/mathjax"
            page.screenshot(path=shots / f"slide-{maths[0]}-{maths[1]}.png")

        widget = first_slide(placed, has_widget)
        if widget:
            page.evaluate(SHOW_JS, list(widget))
            present = page.locator(PRESENT)
            image = present.locator("img.widget-image").first
            image.wait_for(state="visible")
            assert present.locator(".widget-slider").count() > 0, f"slide {widget}: the explorer's sliders are missing"
            image.evaluate("img => img.decode()")
            assert image.evaluate("img => img.naturalWidth > 100 && img.naturalHeight > 100"), "the plot is empty"
            box = image.bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"] + 1, box
            page.screenshot(path=shots / f"slide-{widget[0]}-{widget[1]}.png")

        # Code with printed output, and the last slide: screenshots only.
        for where in (first_slide(placed, has_printed_output), max(where for _, where in placed if where)):
            if where:
                page.evaluate(SHOW_JS, list(where))
                page.screenshot(path=shots / f"slide-{where[0]}-{where[1]}.png")
        assert not errors, f"errors in the page: {errors}"
        assert not off_machine, f"the deck tried to reach the network: {sorted(set(off_machine))}"
    except Exception as error:
        if off_machine:  # the likely cause of whatever failed: say so first
            raise AssertionError(f"the deck tried to reach the network: {sorted(set(off_machine))}") from error
        raise
    finally:
        page.close()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_slide_fits_the_screen_with_readable_text(scans, notebook):
    """No slide is taller or wider than 1280x720 or scrolls inside; body >= 24px, code >= 18px, nothing < 16px.

    Measured (slides/measure.py's measure_slide) in the pass over the deck's slides that also runs axe on each
    (conftest.py's `scans`, test_accessibility.py's scan_deck)."""
    results = scans.fit(SLIDES / f"{notebook.stem}.slides.html")
    assert len(results) == len({where for _, where in cells_with_slides(notebook) if where}), "slides went unmeasured"
    failing = [f"slide {h}-{v} ({title}): " + "; ".join(problems) for h, v, title, problems in results if problems]
    assert not failing, f"{len(failing)} of {len(results)} slides do not fit or have small text:\n" + "\n".join(failing)


def test_the_fit_check_catches_a_tall_slide_inner_scrolling_and_small_text_also_in_a_figure(in_chromium):
    """measure.PROBLEMS_JS flags each fault planted in a real deck's first slide, and nothing on a clean one."""
    deck = SLIDES / f"{NOTEBOOKS[0].stem}.slides.html"
    plant = """kind => {
      const slide = Reveal.getCurrentSlide();
      slide.querySelectorAll('*').forEach(e => { if (e.parentElement === slide) e.remove(); });
      const add = html => slide.insertAdjacentHTML('beforeend', html);
      add('<p>short</p>');
      if (kind === 'tall') add('<div style="height: 900px">tall</div>');
      if (kind === 'wide') add('<div style="width: 1500px">wide</div>');
      if (kind === 'scroll') add('<pre style="font-size: 20px; max-height: 40px; overflow: auto">1\\n2\\n3\\n4\\n5\\n6</pre>');
      if (kind === 'body') add('<p style="font-size: 22px">body text</p>');
      if (kind === 'code') add('<pre style="font-size: 17px">code</pre>');
      if (kind === 'sub') add('<p>x<sub style="font-size: 15px">t</sub></p>');
      const canvas = document.createElement('canvas');
      canvas.width = 200; canvas.height = 100;
      const picture = canvas.toDataURL();
      // a figure whose 16.7px text is shown at half size; an explorer's plot whose text is 12px as drawn
      if (kind === 'figure') add(`<img alt="plot" data-text-px="16.7" style="width: 100px" src="${picture}">`);
      if (kind === 'explorer') add(`<img alt="plot" class="widget-image rnns-text-px-12" src="${picture}">`);
    }"""
    expected = {
        "clean": "",
        "tall": "too tall",
        "wide": "too wide",
        "scroll": "is cut off or scrolls inside",
        "body": "text at 22.0px",
        "code": "code/output at 17.0px",
        "sub": "maths/sub/sup at 15.0px",
        "figure": "figure text at 8.3px",
        "explorer": "figure text at 12.0px",
    }

    def run(context):
        page = context.new_page()
        found = {}
        try:
            page.goto(deck.as_uri())
            page.wait_for_function("() => window.Reveal && Reveal.isReady()")
            for kind in expected:
                page.evaluate(SHOW_JS, [0, 0])
                page.evaluate(plant, kind)
                page.wait_for_function("[...document.images].every(image => image.complete)")
                found[kind] = page.evaluate(measure.PROBLEMS_JS, [measure.BODY_PX, measure.CODE_PX, measure.LEAST_PX])
                page.reload()
                page.wait_for_function("() => window.Reveal && Reveal.isReady()")
        finally:
            page.close()
        return found

    found = in_chromium(run)
    assert found["clean"] == [], found["clean"]
    for kind, problem in list(expected.items())[1:]:
        assert len(found[kind]) == 1 and problem in found[kind][0], (kind, found[kind])


def test_the_speaker_view_shows_the_notes_with_their_maths_drawn_once(in_chromium):
    """S opens the speaker view; a slide's notes are there, each formula as MathML (MathJax's output needs its styles)."""
    where = next(
        (
            (notebook, where)
            for notebook in NOTEBOOKS
            for cell, where in cells_with_slides(notebook)
            if where
            and cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"
            and "$" in "".join(cell["source"])
        ),
        None,
    )
    assert where, "no notes cell with maths in any notebook: nothing to test"
    notebook, (h, v) = where

    def run(context):
        page = context.new_page()
        try:
            page.goto((SLIDES / f"{notebook.stem}.slides.html").as_uri())
            page.wait_for_function("() => window.Reveal && Reveal.isReady()")
            page.evaluate(SHOW_JS, [h, v])
            with context.expect_page() as opened:
                page.keyboard.press("s")
            speaker = opened.value
            notes = speaker.locator(".speaker-controls-notes .value")
            notes.locator("math").first.wait_for(state="attached")
            speaker.screenshot(path=SHOTS / notebook.stem / "speaker-view.png")
            shown = notes.inner_text()
            return notes.locator("math").count(), notes.locator(".MathJax_CHTML, .MJX_Assistive_MathML").count(), shown
        finally:
            for open_page in context.pages:
                open_page.close()

    formulas, mathjax, shown = in_chromium(run)
    assert formulas > 0 and mathjax == 0, (formulas, mathjax)
    assert "$" not in shown and len(shown.split()) > 5, shown


# For each "Predict" prompt on a slide, shown at the prompt's own click (none of the slide's fragments,
# or up to the fragment that holds the prompt): whether the code cell that answers it (the first after
# it on the same slide) is visible; whether one click later it is; and the prompt's words.
PROMPT_ANSWERS_JS = r"""() => {
  const prompt = /(^|[^A-Za-z])Predict\b/, found = [];
  const shows = element => element.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  for (const slide of Reveal.getSlides()) {
    const { h, v } = Reveal.getIndices(slide);
    for (const question of slide.querySelectorAll('.jp-MarkdownCell')) {
      if (question.closest('aside.notes') || !prompt.test(question.textContent)) continue;
      const answer = [...slide.querySelectorAll('.jp-CodeCell')].find(code =>
        !code.closest('aside.notes') && question.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_FOLLOWING);
      if (!answer) continue;  // answered on a later slide
      const own = question.closest('.fragment'), click = own ? Number(own.dataset.fragmentIndex) : -1;
      Reveal.slide(h, v, click);
      const before = shows(answer);
      Reveal.slide(h, v, click + 1);
      const fragment = answer.closest('.fragment');
      found.push([`${h}-${v}`, before, !!fragment && fragment.classList.contains('visible'), question.textContent.trim().slice(0, 60)]);
    }
  }
  return found;
}"""


def test_every_predict_prompt_shows_its_answer_one_click_later(in_chromium):
    """In every deck, a "Predict" prompt shows without the code that answers it; the next click shows the code."""

    def run(context):
        page = context.new_page()
        found = {}
        try:
            for notebook in NOTEBOOKS:
                page.goto((SLIDES / f"{notebook.stem}.slides.html").as_uri())
                page.wait_for_function("() => window.Reveal && Reveal.isReady()")
                found[notebook.stem] = page.evaluate(PROMPT_ANSWERS_JS)
        finally:
            page.close()
        return found

    found = in_chromium(run)
    checked = [(deck, *row) for deck, rows in found.items() for row in rows]
    shown = [row for row in checked if row[2]]
    assert not shown, f"prompts shown with their answer: {shown}"
    late = [row for row in checked if not row[3]]
    assert not late, f"answers not shown by the next click: {late}"
    # Notebooks hold 64 prompts; those answered on the prompt's own slide (42 were fixed so) are checked here.
    assert len(checked) >= 42, f"only {len(checked)} prompts with an answer on their slide found: {checked}"
