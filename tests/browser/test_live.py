"""Real browser: present a lesson live in JupyterLab (jupyterlab-slideshow) and drag its explorer.

Run by `make test-browser`. A copy of notebook 01 (in the sandbox, so nobody's open notebook is
touched) is run with Run All, then presented with the notebook toolbar's deck button, as the
README's "Live" walk-through says. Space steps through the slides to the explorer's; its sliders
and plot must be real widgets (not their text form, as jupyterlab-rise 0.43.1 shows them with
ipywidgets 8), and ArrowRight on a slider must redraw the plot while the slide stays put. Then
the deck button on the on-screen remote leaves the presentation. Screenshots: build/browser/live/.
"""

import contextlib
import shutil
from pathlib import Path

from lab import (  # slides/lab.py; the fixtures (lab, browser, sandbox) are in conftest.py
    IDLE,
    KERNEL_READY_JS,
    PRESSES,
    ROOT,
    SHOTS,
    check_cells,
    pixels_differ,
    readout_value,
    run_all,
    shut_down_kernels,
    wait_for_new_plot,
)

LESSON = ROOT / "notebooks" / "01_scalar_rnn.ipynb"
LIVE_SHOTS = SHOTS / "live"
MAX_STEPS = 60  # Space presses from the title to the explorer's slide (notebook 01 needs about 20)
DECK = ".jp-NotebookPanel.jp-Deck"  # the notebook panel while it presents
ONSCREEN = ".jp-Cell.jp-deck-mod-onscreen"  # the cells of the current slide
# The slide with the explorer: its code cell calls helpers.widgets.explore.
EXPLORER_CODE = "helpers.widgets.explore("


def present(page, url, token, notebook):
    """Open `notebook` in JupyterLab, run all its cells (none may fail), and present it from its first cell."""
    page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")
    page.locator(IDLE).wait_for()
    page.wait_for_function(KERNEL_READY_JS, arg=notebook)
    check_cells(run_all(page, notebook))
    # Present from the first cell: the deck opens on the slide of the active cell.
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.keyboard.press("Escape")  # command mode, so the arrow keys and Space reach the deck
    page.locator(".jp-NotebookPanel-toolbar [data-command='deck:toggle']").click()
    page.locator(DECK).wait_for()


def test_presenting_live_the_explorer_slider_redraws_the_plot(lab, browser, sandbox):
    """Deck mode shows the explorer as sliders and a plot; ArrowRight on a slider redraws it, on the same slide."""
    url, token, _ = lab
    LIVE_SHOTS.mkdir(parents=True, exist_ok=True)
    copy = sandbox / LESSON.name
    shutil.copyfile(LESSON, copy)
    notebook = copy.relative_to(ROOT).as_posix()
    page = browser.new_page()
    page.set_default_timeout(60_000)
    try:
        present(page, url, token, notebook)
        page.locator(ONSCREEN).filter(has_text="A scalar RNN, by hand").wait_for()
        page.screenshot(path=LIVE_SHOTS / "1-first-slide.png")

        # Space: the next fragment, sub-slide or slide, as a presenter's clicker does.
        explorer_cell = page.locator(ONSCREEN).filter(has=page.locator(".jp-InputArea", has_text=EXPLORER_CODE))
        for _ in range(MAX_STEPS):
            if explorer_cell.count():
                break
            page.keyboard.press("Space")
            page.wait_for_timeout(100)
        assert explorer_cell.count(), f"the explorer's slide did not come after {MAX_STEPS} presses of Space"
        page.wait_for_timeout(500)  # the slide's cells settle in place
        page.screenshot(path=LIVE_SHOTS / "2-explorer-slide.png")

        output = explorer_cell.locator(".jp-OutputArea-output").first
        sliders = output.locator(".widget-slider")
        image = output.locator("img.widget-image").first
        assert sliders.count() and image.count(), (
            f"the explorer is not drawn as widgets on its slide; its output reads: {output.inner_text()[:200]!r}"
        )
        assert image.is_visible() and sliders.first.is_visible(), "the explorer's slider or plot is off screen"
        slider = sliders.first
        readout = slider.locator(".widget-readout")
        image.evaluate("img => img.decode()")
        old_src, old_value = image.get_attribute("src"), readout_value(readout)
        before = image.screenshot(path=LIVE_SHOTS / "image-before.png")

        slider.locator(".noUi-handle").focus()  # keyboard only, as with a clicker's arrow keys
        for _ in range(PRESSES):
            page.keyboard.press("ArrowRight")
        wait_for_new_plot(page, image, old_src)
        after = image.screenshot(path=LIVE_SHOTS / "image-after.png")
        page.screenshot(path=LIVE_SHOTS / "3-after-arrow-right.png")

        assert readout_value(readout) > old_value, "ArrowRight on the focused slider did not move it"
        assert pixels_differ(before, after), "the plot's pixels did not change"
        assert explorer_cell.count(), "ArrowRight on the slider changed the slide instead of only the slider"

        # Coarse steps: Page Up moves the slider 5 steps at once (0.05 on the explorer's 0.01 steps), End to its top.
        fine = readout_value(readout)
        old_src = image.get_attribute("src")
        page.keyboard.press("PageUp")
        wait_for_new_plot(page, image, old_src)
        assert abs(readout_value(readout) - fine - 0.05) < 1e-6, (fine, readout_value(readout))
        page.keyboard.press("End")
        page.wait_for_timeout(300)
        assert readout_value(readout) == float(slider.locator(".noUi-handle").get_attribute("aria-valuemax"))
        assert explorer_cell.count(), "Page Up or End on the slider changed the slide"

        # Leave: the deck button on the remote (bottom right) ends the presentation.
        page.locator(".jp-Deck-Remote .jp-deck-mod-stop").click()
        page.locator(DECK).wait_for(state="detached")
        page.screenshot(path=LIVE_SHOTS / "4-left.png")
    finally:
        with contextlib.suppress(Exception):  # a failed screenshot must not hide the test's own error
            page.screenshot(path=LIVE_SHOTS / "page.png")
        page.close()
        with contextlib.suppress(OSError):
            shut_down_kernels(url, token)


PRESENTING = ROOT / "config" / "presenting.json"  # the presenter's setting: make present
# On the slide on screen: text under 18px (as shown, transforms included), a code line cut off, a slider's value
# hidden. Prompts ("[3]:") and MathJax's sub- and superscripts are left out, as the decks' fit check leaves them.
PRESENTER_PROBLEMS_JS = f"""() => {{
  const problems = [];
  for (const cell of document.querySelectorAll('{ONSCREEN}')) {{
    const scale = cell.getBoundingClientRect().width / (cell.offsetWidth || 1);
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {{
      const element = node.parentElement;
      if (!node.textContent.trim() || !element.getClientRects().length) continue;
      if (element.closest('.jp-InputPrompt, .jp-OutputPrompt, .MathJax, mjx-container, .MJX_Assistive_MathML, sub, sup, .jp-cell-toolbar, .jp-collapseHeadingButton')) continue;
      const px = parseFloat(getComputedStyle(element).fontSize) * scale;
      if (px < 17.99) problems.push(`text at ${{px.toFixed(1)}}px: "${{node.textContent.trim().slice(0, 30)}}"`);
    }}
    for (const scroller of cell.querySelectorAll('.cm-scroller')) {{
      if (scroller.scrollWidth > scroller.clientWidth + 1) problems.push(`a code line is cut off: "${{scroller.textContent.slice(0, 40)}}"`);
    }}
    for (const readout of cell.querySelectorAll('.widget-readout')) {{
      const box = readout.getBoundingClientRect();
      if (box.width < 20 || readout.scrollWidth > readout.clientWidth + 1) problems.push(`a slider's value is hidden: "${{readout.textContent}}"`);
    }}
  }}
  return problems;
}}"""


def test_the_presenter_setting_keeps_text_large_code_whole_and_slider_values_visible(browser, sandbox):
    """With config/presenting.json (make present) at 1280x720, every slide of notebook 01 presented live shows text
    at 18px or more, wraps long code lines instead of cutting them, and keeps each slider's value in view."""
    import json
    import tempfile

    from lab import BUILD, jupyterlab

    folder = Path(tempfile.mkdtemp(prefix="browser-present-", dir=BUILD))
    copy = sandbox / f"present-{LESSON.name}"
    shutil.copyfile(LESSON, copy)
    notebook = copy.relative_to(ROOT).as_posix()
    problems, slides = {}, 0
    with jupyterlab(folder, json.loads(PRESENTING.read_text())) as (url, token, _):
        page = browser.new_page()
        page.set_viewport_size({"width": 1280, "height": 720})
        page.set_default_timeout(60_000)
        try:
            present(page, url, token, notebook)
            seen, unchanged = None, 0
            for _ in range(MAX_STEPS * 3):
                page.wait_for_timeout(300)
                now = page.evaluate(
                    f"[...document.querySelectorAll('{ONSCREEN}')].map(c => c.textContent.slice(0, 60)).join('|')"
                )
                unchanged = unchanged + 1 if now == seen else 0
                if unchanged == 3:
                    break  # Space changed nothing three times: the last slide
                if not unchanged:
                    seen, slides = now, slides + 1
                    found = page.evaluate(PRESENTER_PROBLEMS_JS)
                    if found:
                        problems[now[:50]] = found
                        page.screenshot(path=LIVE_SHOTS / f"present-{slides}.png")
                page.keyboard.press("Space")
        finally:
            page.close()
            shutil.rmtree(folder, ignore_errors=True)
    assert slides >= 20, f"only {slides} slides were presented"
    assert not problems, problems
