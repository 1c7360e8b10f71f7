"""Real browser: the decks, their index, the reference pages and the HTML exports meet WCAG 2.1 AA.

Run by `make test-browser`, after `make slides` and `make html`. Everything is opened from file://
in Debian's headless Chromium at 1280x720 (test_slides.py's fixture: one browser, pages in turn),
with every request that leaves the machine aborted.

- axe-core (npm, slides/package.json; injected from build/slides-npm, never a CDN) runs its WCAG
  2.0/2.1 A and AA rules on each slide of each deck in turn, with every fragment shown, limited to
  the slide on screen; once per deck on what is around the slides (reveal.js's controls, the page's
  language and title); and on build/slides/index.html, build/slides/docs/*.html and
  build/html/*.html. A failure names the deck, the slide, the rule, the elements and what to fix.
  A summary goes to build/accessibility/axe-summary.txt.
- The keyboard, in a deck with an explorer: an arrow key on a focused slider moves the slider and
  not the slide; Tab never reaches a slide that is not on screen; focus shows as a clear outline.
- Screen readers: each slider and readout is named after its label; the explorer's plot takes
  its alt text from its title; its description in words is a live region, hidden from the eye;
  maths has MathJax's MathML copy.
"""

import re
import shutil
from collections import Counter
from pathlib import Path

import measure  # slides/measure.py: the fit of a slide, measured in the same pass as axe
import pytest
from reports import merged_report
from test_slides import (
    MATHJAX_DONE_JS,
    NOTEBOOKS,
    OFF_MACHINE,
    PRESENT,
    SHOTS,
    SHOW_JS,
    SLIDES,
    cells_with_slides,
    first_slide,
    has_display_maths,
    has_widget,
)

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "build" / "slides-npm" / "node_modules" / "axe-core" / "axe.min.js"
HTML = ROOT / "build" / "html"
REPORT = ROOT / "build" / "accessibility"
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "resultTypes": ["violations"],
}
# Rules whose violations are reported (and written to the summary) but do not fail the tests: none.
# A rule goes here only with the reason, and into ACCESSIBILITY.md's known limitations.
TEMPORARILY_ALLOWED_RULES = set()
# Alt texts that say nothing about the picture.
PLACEHOLDER_ALT = {"", "image", "img", "figure", "plot", "graph", "chart", "picture", "no description", "png"}
# slides/build.py writes docs/NAME.html for each notebooks/NAME.md.
PAGES = [SLIDES / "index.html"] + [
    SLIDES / "docs" / f"{md.stem}.html" for md in sorted((ROOT / "notebooks").glob("*.md"))
]
EXPORTS = [HTML / f"{notebook.stem}.html" for notebook in NOTEBOOKS]
FOCUS_BLUE = "#1a5fb4"  # slides/rnns.css: the focus outline

# axe-core on one slide, or on a whole page. Other slides are hidden, and axe skips hidden content,
# but it walks the whole document before every run: the slides not on screen are taken out of the
# page while it runs (and put back in place), which makes a deck's scan several times faster.
RUN_AXE_JS = """async ([where, options]) => {
  let context = document;
  const parked = [];
  if (where === 'slide' || where === 'around') {
    const slide = Reveal.getCurrentSlide();
    const stack = slide.parentElement.closest('section');  // nbconvert nests every slide in one
    const others = [...document.querySelectorAll('.reveal .slides > section')];
    if (stack) others.push(...stack.querySelectorAll(':scope > section'));
    for (const other of others) {
      if (other !== slide && other !== stack) parked.push([other, other.parentElement, other.nextSibling]);
    }
    for (const [other] of parked) other.remove();
    context = where === 'slide' ? slide : {exclude: [['.reveal .slides']]};
  }
  try {
    const result = await axe.run(context, options);
    return result.violations.map(v => ({
      id: v.id, help: v.help,
      nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary})),
    }));
  } finally {
    for (const [other, parent, next] of parked.reverse()) parent.insertBefore(other, next);
  }
}"""
# The current slide's pictures: [alt or null, ...].
ALTS_JS = "where => [...(where === 'slide' ? Reveal.getCurrentSlide() : document).querySelectorAll('img')].map(i => i.getAttribute('alt'))"
WIDGETS_SETTLED_JS = """() => {
  const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
  const drawn = document.querySelectorAll('.lm-Widget.jupyter-widgets').length;
  return views === 0 || drawn >= views;
}"""


def open_page(context, path, errors=None):
    """A page at path (file://) with nothing allowed off the machine and axe-core injected."""
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.route(OFF_MACHINE, lambda route: route.abort())
    if errors is not None:
        page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    if path.name.endswith(".slides.html"):
        page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    if page.evaluate("typeof MathJax !== 'undefined'"):
        page.evaluate(MATHJAX_DONE_JS)
    page.wait_for_function(WIDGETS_SETTLED_JS, timeout=20_000)
    page.add_script_tag(path=str(AXE))
    return page


def scan_deck(context, deck, shots):
    """({(h, v): (violations, alts)} for each slide of `deck` and ("page",): the reveal.js frame around them,
    [(h, v, title, problems)]: slides/measure.py's fit of each slide, for test_slides.py, its screenshots in shots).

    One pass over the slides for both: each is shown with all its fragments and measured as it stands, then axe runs."""
    page = open_page(context, deck)
    found, fit = {}, []
    try:
        page.evaluate("document.fonts.ready.then(() => true)")
        measure.check_scale(page)
        for where in page.evaluate("Reveal.getSlides().map(s => Reveal.getIndices(s))"):
            h, v = where["h"], where.get("v") or 0
            fit.append(measure.measure_slide(page, deck, h, v, shots))  # shows the slide, once its widgets drew
            page.wait_for_timeout(0)  # let widgets_access.js name what was just shown
            found[(h, v)] = (page.evaluate(RUN_AXE_JS, ["slide", AXE_OPTIONS]), page.evaluate(ALTS_JS, "slide"))
        found[("page",)] = (page.evaluate(RUN_AXE_JS, ["around", AXE_OPTIONS]), [])
        assert len(found) - 1 == page.evaluate("Reveal.getTotalSlides()"), "slides went unchecked"
    finally:
        page.close()
    return found, fit


def scan_page(context, path):
    """{("page",): (violations, alts)} for a page that is not a deck."""
    page = open_page(context, path)
    try:
        page.wait_for_timeout(300)  # the widgets' names and alt texts are set a moment after they draw
        return {("page",): (page.evaluate(RUN_AXE_JS, ["page", AXE_OPTIONS]), page.evaluate(ALTS_JS, "page"))}
    finally:
        page.close()


class Scans:
    """scans(path): the axe results of a deck or page, each scanned once per worker (conftest.py's `scans`
    fixture); scans.fit(deck): the fit of each of its slides, measured in the same pass (test_slides.py)."""

    def __init__(self, in_chromium):
        self.in_chromium, self.done, self.fits = in_chromium, {}, {}

    def __call__(self, path):
        if path not in self.done:
            assert path.exists(), f"{path.relative_to(ROOT)} is missing: `make test-browser` runs `make slides html`"
            if path.name.endswith(".slides.html"):
                shots = SHOTS / path.name.split(".")[0] / "fit"
                shutil.rmtree(shots, ignore_errors=True)
                shots.mkdir(parents=True)
                self.done[path], self.fits[path] = self.in_chromium(scan_deck, path, shots)
            else:
                self.done[path] = self.in_chromium(scan_page, path)
        return self.done[path]

    def fit(self, deck):
        self(deck)
        return self.fits[deck]


def write_summary(done):
    """build/accessibility/axe-summary.txt: per deck or page, places checked and violating elements by rule
    (with what the other xdist worker checked: reports.merged_report)."""
    entries = {}
    for path, found in done.items():
        by_rule = Counter()
        for violations, _ in found.values():
            for violation in violations:
                by_rule[violation["id"]] += len(violation["nodes"])
        slides = sum(1 for where in found if where != ("page",))
        entries[str(path.relative_to(ROOT))] = [slides, dict(by_rule)]
    lines, total, slides = [], Counter(), 0
    for name, (count, by_rule) in sorted(merged_report(REPORT / "axe-summary.txt", entries).items()):
        total += Counter(by_rule)
        slides += count
        checked = f"{count} slides and the frame" if count else "page"
        rules = ", ".join(f"{rule} {n}" for rule, n in sorted(by_rule.items())) or "no violations"
        lines.append(f"{name}: {checked}: {rules}")
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(total.items())) or "none"
    lines.append(f"total: {len(lines)} decks and pages, {slides} slides; violating elements by rule: {rules}")
    lines.append(f"rules reported but not failing yet: {', '.join(sorted(TEMPORARILY_ALLOWED_RULES)) or 'none'}")
    (REPORT / "axe-summary.txt").write_text("\n".join(lines) + "\n")


def failures(path, found, allowed=frozenset(TEMPORARILY_ALLOWED_RULES)):
    """(hard, allowed): one readable line per violating element, split by whether its rule is temporarily allowed."""
    hard, soft = [], []
    for where, (violations, _) in found.items():
        place = (
            "around the slides"
            if where == ("page",) and path.name.endswith(".slides.html")
            else ("page" if where == ("page",) else f"slide {where[0]}-{where[1]}")
        )
        for violation in violations:
            for node in violation["nodes"]:
                summary = " ".join(node["summary"].split())
                line = f"{path.name} {place}: {violation['id']} ({violation['help']}) at {node['target']}: {summary}"
                (soft if violation["id"] in allowed else hard).append(line)
    return hard, soft


def assert_no_violations(path, found):
    hard, soft = failures(path, found)
    for line in soft:
        print(f"allowed for now: {line}")
    assert not hard, f"{len(hard)} WCAG 2.1 AA violations (axe-core):\n" + "\n".join(hard)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_slide_of_the_deck_passes_axe(scans, notebook):
    """axe-core's WCAG 2.1 A/AA rules find nothing on any slide (all fragments shown), nor around the slides."""
    deck = SLIDES / f"{notebook.stem}.slides.html"
    assert_no_violations(deck, scans(deck))


@pytest.mark.parametrize("path", PAGES + EXPORTS, ids=lambda path: str(path.relative_to(ROOT / "build")))
def test_the_index_the_reference_pages_and_the_html_exports_pass_axe(scans, path):
    """axe-core's WCAG 2.1 A/AA rules find nothing on the decks' index, docs/*.html and build/html/*.html."""
    assert_no_violations(path, scans(path))


@pytest.mark.parametrize("path", [SLIDES / f"{n.stem}.slides.html" for n in NOTEBOOKS] + EXPORTS, ids=lambda p: p.stem)
def test_every_picture_has_a_description_as_alt_text(scans, path):
    """Every img (matplotlib figures, the explorers' plots) has an alt text that describes its data.

    helpers.describe's texts: a sentence or more, with the numbers drawn (or the graph's sizes).
    """
    alts = [(where, alt) for where, (_, found) in scans(path).items() for alt in found]
    missing = [
        f"{'page' if where == ('page',) else f'slide {where[0]}-{where[1]}'}: alt={alt!r}"
        for where, alt in alts
        if alt is None or alt.strip().lower() in PLACEHOLDER_ALT or len(alt) < 40 or not re.search(r"\d", alt)
    ]
    assert not missing, f"{path.name}: pictures without a real description:\n" + "\n".join(missing)


def test_axe_finds_a_missing_alt_low_contrast_and_an_unnamed_slider(in_chromium):
    """Faults planted on a real slide are found, and each fails the test (no rule is allowed)."""
    deck = SLIDES / f"{NOTEBOOKS[0].stem}.slides.html"
    plant = """() => {
      const slide = Reveal.getCurrentSlide();
      slide.insertAdjacentHTML('afterbegin', '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20">'
        + '<p style="color: #aaaaaa; background: #ffffff; font-size: 20px">ValueError</p>'
        + '<div role="slider" tabindex="0" aria-valuenow="1" aria-valuemin="0" aria-valuemax="2">o</div>');
    }"""

    def run(context):
        page = open_page(context, deck)
        try:
            page.evaluate(SHOW_JS, [0, 0])
            page.evaluate(plant)
            return {(0, 0): (page.evaluate(RUN_AXE_JS, ["slide", AXE_OPTIONS]), [])}
        finally:
            page.close()

    found = in_chromium(run)
    rules = {violation["id"] for violation in found[(0, 0)][0]}
    assert {"image-alt", "color-contrast", "aria-input-field-name"} <= rules, rules
    hard, soft = failures(deck, found)
    assert not soft and [line for line in hard if "image-alt" in line]
    assert any("color-contrast" in line and "2.32" in line and "slide 0-0" in line for line in hard), hard


def explorer():
    """(notebook, (h, v)) of the first deck slide that shows a widget (an explorer with sliders)."""
    for notebook in NOTEBOOKS:
        where = first_slide(cells_with_slides(notebook), has_widget)
        if where:
            return notebook, where
    pytest.fail("no notebook shows a widget: nothing to test the keyboard on")


def on_explorer(in_chromium, check):
    """Runs check(page) on the first explorer's slide, its sliders drawn and named."""
    notebook, (h, v) = explorer()

    def run(context):
        page = open_page(context, SLIDES / f"{notebook.stem}.slides.html")
        try:
            page.evaluate(SHOW_JS, [h, v])
            page.locator(f"{PRESENT} .noUi-handle[aria-label]").first.wait_for(state="attached")
            return check(page)
        finally:
            page.close()

    return in_chromium(run)


def test_a_static_decks_sliders_are_read_only_and_say_where_they_move(in_chromium):
    """With no kernel a slider cannot redraw its plot, so none may move: each is disabled (a drag and the
    arrow keys leave its value and the plot as they were), a line under the explorer says where the
    sliders move, and ArrowRight, even after a click on a slider, changes the slide, not the value."""

    def check(page):
        count = page.locator(f"{PRESENT} .widget-slider").count()
        handle = page.locator(f"{PRESENT} .noUi-handle[role=slider]").first
        before = (
            handle.get_attribute("aria-valuenow"),
            page.locator(f"{PRESENT} img.widget-image").first.get_attribute("src"),
        )
        disabled = page.evaluate(
            f"[...document.querySelectorAll('{PRESENT} .widget-slider .noUi-target')].map(t => t.hasAttribute('disabled'))"
        )
        handles = page.evaluate(
            f"[...document.querySelectorAll('{PRESENT} .noUi-handle')].map(h => [h.tabIndex, h.ariaDisabled])"
        )
        box = handle.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + 150, box["y"] + box["height"] / 2, steps=5)
        page.mouse.up()
        handle.click(force=True)  # the arrow keys then go to the deck, not to the slider
        indices = page.evaluate("Reveal.getIndices()")
        after = (
            handle.get_attribute("aria-valuenow"),
            page.locator(f"{PRESENT} img.widget-image").first.get_attribute("src"),
        )
        note = page.locator(f"{PRESENT} .rnns-read-only").first.inner_text()
        page.keyboard.press("ArrowRight")
        return count, disabled + handles, before, after, note, indices, page.evaluate("Reveal.getIndices()")

    count, disabled, before, after, note, indices, moved = on_explorer(in_chromium, check)
    assert count > 0 and disabled == [True] * count + [[-1, "true"]] * count, disabled
    assert after == before, "a read-only slider moved, or its plot changed"
    assert "Read-only here" in note and "notebook" in note and "live slides" in note, note
    assert moved != indices, "ArrowRight should change the slide: a read-only slider keeps no keys"


def test_tab_stays_on_the_slide_on_screen_and_focus_is_visible(in_chromium):
    """30 Tabs land only on the present slide or reveal.js's controls, skip the read-only sliders, and show a 3px outline."""
    where_js = """() => {
      const e = document.activeElement;
      if (!e || e === document.body) return {where: 'body', slider: false, what: 'body', outline: []};
      const style = getComputedStyle(e);
      return {
        where: e.closest('.reveal .slides section.present:not(:has(> section))') ? 'slide'
          : e.closest('.reveal .controls, .reveal .slide-number') ? 'controls'
          : e.closest('.reveal .slides') ? 'other slide' : 'elsewhere',
        what: e.outerHTML.slice(0, 120), slider: e.getAttribute('role') === 'slider',
        outline: [style.outlineStyle, parseFloat(style.outlineWidth), style.outlineColor],
      };
    }"""

    def check(page):
        page.evaluate("document.activeElement.blur()")
        stops = []
        for _ in range(30):
            page.keyboard.press("Tab")
            stops.append(page.evaluate(where_js))
        return stops

    stops = on_explorer(in_chromium, check)
    astray = [stop for stop in stops if stop["where"] not in ("slide", "controls", "body")]
    assert not astray, f"Tab reached what is not on screen: {astray[:3]}"
    assert not [stop for stop in stops if stop["slider"]], "Tab reached a read-only slider"
    for stop in [s for s in stops if s["where"] == "slide"]:
        style, width, colour = stop["outline"]
        assert style == "solid" and width >= 3, f"no clear focus outline on {stop['what']}: {stop['outline']}"
        assert contrast(colour, "rgb(255, 255, 255)") >= 3, f"the focus outline {colour} is faint on white"


def contrast(first, second):
    """WCAG contrast ratio of two CSS rgb()/rgba() colours."""

    def luminance(colour):
        red, green, blue = (int(part) / 255 for part in re.findall(r"\d+", colour)[:3])
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_a_sliders_track_and_handle_stand_out_at_3_to_1(in_chromium):
    """WCAG 1.4.11: each slider's track and its handle's edge reach 3:1 against the slide (white)."""
    colours_js = f"""() => [...document.querySelectorAll('{PRESENT} .widget-slider')].map(w => [
      getComputedStyle(w.querySelector('.noUi-connects')).backgroundColor,
      getComputedStyle(w.querySelector('.noUi-handle')).borderTopColor,
    ])"""
    sliders = on_explorer(in_chromium, lambda page: page.evaluate(colours_js))
    assert sliders, "no sliders on the explorer's slide"
    for track, edge in sliders:
        assert contrast(track, "rgb(255, 255, 255)") >= 3 and contrast(edge, "rgb(255, 255, 255)") >= 3, (track, edge)


def test_every_slider_and_readout_is_named_after_its_label(in_chromium):
    """Each slider's handle has an aria-label made of its description label's words (its readout, read-only, is text)."""
    names_js = f"""() => [...document.querySelectorAll('{PRESENT} .widget-slider')].map(w => [
      w.querySelector('.widget-label').textContent.trim(),
      w.querySelector('.noUi-handle').getAttribute('aria-label'),
      w.querySelector('.widget-readout').getAttribute('aria-label'),
    ])"""
    names = on_explorer(in_chromium, lambda page: page.evaluate(names_js))
    assert names, "no sliders on the explorer's slide"
    for label, handle, readout in names:  # a read-only slider's readout is text, not a control: no name of its own
        assert label and handle == label and readout is None, (label, handle, readout)


def test_a_widget_image_takes_its_alt_from_its_title_and_never_an_invented_one(in_chromium):
    """widgets_access.js copies an img.widget-image's title (the helpers' description) to alt, and follows changes."""

    def check(page):
        page.evaluate(
            """() => Reveal.getCurrentSlide().insertAdjacentHTML('beforeend',
                 '<img class="widget-image" id="titled" title="hidden state over time: h rises to 0.85">'
                 + '<img class="widget-image" id="untitled">')"""
        )
        page.wait_for_function("document.getElementById('titled').hasAttribute('alt')")
        first = page.evaluate(
            "[document.getElementById('titled').alt, document.getElementById('untitled').getAttribute('alt')]"
        )
        page.evaluate("document.getElementById('titled').title = 'hidden state over time: h falls to 0.1'")
        page.wait_for_function("document.getElementById('titled').alt.includes('falls')")
        return first

    titled, untitled = on_explorer(in_chromium, check)
    assert titled == "hidden state over time: h rises to 0.85"
    assert untitled is None


def test_the_figure_description_is_a_live_region_hidden_from_the_eye(in_chromium):
    """The rnns-figure-description widget (helpers) is read politely when it changes, and takes no room on the slide."""

    def check(page):
        return page.evaluate(
            f"""() => [...document.querySelectorAll('{PRESENT} .rnns-figure-description')].map(d => {{
              const content = d.querySelector('.widget-html-content'), box = d.getBoundingClientRect();
              const live = content.getAttribute('aria-live') || (content.querySelector('[aria-live]') || {{}}).getAttribute?.('aria-live');
              return [live, box.width, box.height, content.textContent.trim().length];
            }})"""
        )

    found = on_explorer(in_chromium, check)
    assert found, "the explorer shows no rnns-figure-description widget"
    for live, width, height, words in found:
        assert live == "polite" and width <= 1 and height <= 1 and words > 0, (live, width, height, words)


def test_displayed_maths_has_mathml_for_screen_readers(in_chromium):
    """MathJax's AssistiveMML copy (a <math> element a screen reader reads) is beside each displayed formula."""
    notebook, where = next(
        ((n, w) for n in NOTEBOOKS if (w := first_slide(cells_with_slides(n), has_display_maths))), (None, None)
    )
    assert notebook, "no displayed maths in any notebook: nothing to test"

    def run(context):
        page = open_page(context, SLIDES / f"{notebook.stem}.slides.html")
        try:
            page.evaluate(SHOW_JS, list(where))
            return page.evaluate(
                f"""() => [...document.querySelectorAll('{PRESENT} .MJXc-display')].map(d =>
                  d.querySelectorAll('.MJX_Assistive_MathML math').length)"""
            )
        finally:
            page.close()

    displays = in_chromium(run)
    assert displays and all(count == 1 for count in displays), displays
