"""Measure every slide of the decks in Chromium at 1280x720: does it fit, is its text readable?

    python slides/measure.py build/slides/01_scalar_rnn.slides.html ...   # a line per slide, then a total
    python slides/measure.py --shots DIR build/slides/*.slides.html       # and a screenshot of each slide

Each slide is shown with all of its fragments (its tallest state), once MathJax has typeset it
and its widgets have rendered. A slide fails when
- it is taller or wider than the 1280x720 canvas (it would have to scroll), or
- something inside it scrolls (an output box, a table) or is cut off (a widget's label), or
- its text is too small: body text under 24px, code and outputs under 18px, anything under 16px
  (MathJax's sub- and superscripts, <sub>, <sup>, and the smallest text inside a figure: its size in
  the picture's pixels, which helpers records, times the scale the picture is shown at). Speaker notes
  are not on the slide, so not measured.
The sizes are the slide's own pixels, which are screen pixels on a 1280x720 screen.
tests/browser/test_slides.py runs `measure` on every deck and fails on any problem.
"""

import argparse
import sys
from pathlib import Path

VIEWPORT = {"width": 1280, "height": 720}
BODY_PX, CODE_PX, LEAST_PX = 24, 18, 16
# Debian's Chromium (Playwright must never download a browser) and its launch flags, which the
# browser tests (tests/browser/) use too.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Show slide (h, v) with all of its fragments, scrolled to its top, once MathJax is done.
SHOW_JS = """async ([h, v]) => {
  Reveal.slide(h, v, 0);
  const slide = Reveal.getCurrentSlide();
  Reveal.slide(h, v, slide.querySelectorAll('.fragment').length - 1);
  slide.scrollTop = 0;
  await new Promise(done => MathJax.Hub.Queue(done));
  return Reveal.getIndices(slide);
}"""
# A slide's widgets have drawn: each widget view on it shows a view for every widget it holds (its
# boxes' children, followed from the deck's widget state: a box's children draw after the box) and
# every control's description (a printed slide once lacked two sliders' labels), and its plot images
# are decoded.
WIDGETS_DRAWN = """slide => {
  const saved = document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]');
  const state = saved ? JSON.parse(saved.textContent).state : {};
  for (const script of slide.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')) {
    let views = 0;
    const seen = new Set(), todo = [JSON.parse(script.textContent).model_id], labels = [];
    while (todo.length) {
      const id = todo.pop();
      if (seen.has(id) || !state[id]) continue;
      seen.add(id);
      if (state[id].state._view_name) views++;
      if (state[id].state.description) labels.push(state[id].state.description);
      todo.push(...(state[id].state.children || []).map(child => child.replace('IPY_MODEL_', '')));
    }
    const drawn = script.parentElement;
    if (drawn.querySelectorAll('.lm-Widget').length < Math.max(views, 1)) return false;
    if (!labels.every(label => drawn.innerText.includes(label))) return false;
  }
  return [...slide.querySelectorAll('img.widget-image')].every(img => img.complete && img.naturalWidth > 0);
}"""
WIDGETS_READY_JS = f"() => ({WIDGETS_DRAWN})(Reveal.getCurrentSlide())"  # on the current slide
# The current slide's problems (see the module's docstring), as short strings.
PROBLEMS_JS = """([body, code, least]) => {
  // Text for screen readers only, clipped to 1px by slides/rnns.css: not on screen, so not measured.
  const SCREEN_READERS_ONLY = '.rnns-figure-description, .rnns-sr-only';
  const slide = Reveal.getCurrentSlide();
  const problems = [];
  const over = slide.scrollHeight - slide.clientHeight, wide = slide.scrollWidth - slide.clientWidth;
  if (over > 1) problems.push(`${over}px too tall (${slide.scrollHeight}px of ${slide.clientHeight}px)`);
  if (wide > 1) problems.push(`${wide}px too wide`);
  for (const element of slide.querySelectorAll('*')) {
    if (element.closest('aside.notes') || !element.getClientRects().length) continue;
    const style = getComputedStyle(element);
    const clips = /auto|scroll|hidden|clip/;
    const tall = clips.test(style.overflowY) && element.scrollHeight > element.clientHeight + 1;
    const broad = clips.test(style.overflowX) && element.scrollWidth > element.clientWidth + 1;
    if (element !== slide && (tall || broad) && !element.closest('.MathJax_CHTML, ' + SCREEN_READERS_ONLY)) {
      const what = (element.textContent || element.tagName).trim().slice(0, 40);
      problems.push(`<${element.tagName.toLowerCase()}> is cut off or scrolls inside the slide: "${what}"`);
    }
  }
  const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || seen.has(element)) continue;
    seen.add(element);
    // MathJax's copy of each formula for screen readers is clipped to nothing: not on screen.
    if (element.closest('aside.notes, script, style, .MJX_Assistive_MathML, ' + SCREEN_READERS_ONLY) || !element.getClientRects().length) continue;
    const px = parseFloat(getComputedStyle(element).fontSize);
    const small = element.closest('.MathJax_CHTML, sub, sup');
    const mono = element.closest('pre, code, .jp-OutputArea, .jp-InputArea');
    const floor = small ? least : mono ? code : body;
    if (px < floor - 0.01) {
      const kind = small ? 'maths/sub/sup' : mono ? 'code/output' : 'text';
      problems.push(`${kind} at ${px.toFixed(1)}px (< ${floor}px): "${node.textContent.trim().slice(0, 40)}"`);
    }
  }
  // Text inside a picture: its smallest size in the picture's pixels (data-text-px, from helpers' figures;
  // a class rnns-text-px-N on an explorer's plot) times the scale the picture is shown at.
  for (const img of slide.querySelectorAll('img')) {
    if (img.closest('aside.notes') || !img.getClientRects().length || !img.naturalWidth) continue;
    const tagged = img.dataset.textPx || ([...img.classList].find(c => c.startsWith('rnns-text-px-')) || '').slice(13);
    if (!tagged) continue;
    const px = parseFloat(tagged) * img.getBoundingClientRect().width / img.naturalWidth;
    if (px < least - 0.01) {
      problems.push(`figure text at ${px.toFixed(1)}px (< ${least}px): "${(img.alt || '').slice(0, 40)}"`);
    }
  }
  return problems;
}"""


def open_deck(page, deck):
    """Open `deck` (a path) in `page` and wait until reveal.js, MathJax and the fonts are ready; the deck must be at scale 1."""
    page.goto(Path(deck).resolve().as_uri())
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.evaluate("() => new Promise(done => MathJax.Hub.Queue(() => done(true)))")
    page.evaluate("document.fonts.ready.then(() => true)")
    check_scale(page)


def check_scale(page):
    scale = page.evaluate("Reveal.getScale()")
    assert abs(scale - 1) < 1e-6, f"the deck is scaled by {scale} at 1280x720: sizes would not be the slide's own"


def measure_slide(page, deck, h, v, shots=None):
    """(h, v, title, problems) of slide (h, v) of the deck open in `page`, shown with all its fragments; a screenshot into `shots`."""
    page.evaluate(SHOW_JS, [h, v])
    page.wait_for_function(WIDGETS_READY_JS, timeout=20_000)
    title = page.evaluate(
        "() => { const s = Reveal.getCurrentSlide(); const t = (s.querySelector('h1, h2, h3, h4') || s).cloneNode(true);"
        " t.querySelectorAll('.MJX_Assistive_MathML, script, .anchor-link').forEach(e => e.remove());"
        " return t.textContent.trim().replace(/\\s+/g, ' ').slice(0, 60); }"
    )
    problems = page.evaluate(PROBLEMS_JS, [BODY_PX, CODE_PX, LEAST_PX])
    if shots:
        page.screenshot(path=Path(shots) / f"{Path(deck).name.split('.')[0]}-{h}-{v}.png")
    return h, v, title, problems


def measure(page, deck, shots=None):
    """[(h, v, title, problems)] for each slide of `deck` (a path), in order; screenshots into `shots`."""
    open_deck(page, deck)
    return [
        measure_slide(page, deck, where["h"], where.get("v") or 0, shots)
        for where in page.evaluate("Reveal.getSlides().map(s => Reveal.getIndices(s))")
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("decks", type=Path, nargs="+", help="build/slides/NN_name.slides.html")
    parser.add_argument("--shots", type=Path, help="a folder for a screenshot of every slide")
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    failing = total = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport=VIEWPORT, reduced_motion="reduce")
        for deck in args.decks:
            results = measure(page, deck, args.shots)
            bad = [r for r in results if r[3]]
            for h, v, title, problems in results:
                print(f"{deck.name.split('.')[0]} {h}-{v} {'FAIL' if problems else 'ok  '} {title}")
                for problem in problems:
                    print(f"      {problem}")
            print(f"{deck.name}: {len(results)} slides, {len(bad)} do not fit or have small text")
            failing, total = failing + len(bad), total + len(results)
        browser.close()
    print(f"total: {total} slides, {failing} failing")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
