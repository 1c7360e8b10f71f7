"""Real browser: each notebook as JupyterLab shows it, checked with axe-core's WCAG 2.1 A and AA rules.

Run by `make test-browser`, with the session's JupyterLab and Chromium (conftest.py). Each lesson
opens from its stored outputs (nothing runs) with every cell in the DOM, and axe-core (from
build/slides-npm, as for the decks) checks the notebook's content: the text, the outputs, the
figures and the widgets. What the notebooks put there must pass; what JupyterLab and ipywidgets draw
themselves (the code editors, ipywidgets' sliders) is counted, written to
build/accessibility/jupyterlab-axe.txt and listed in ACCESSIBILITY.md, because the notebooks cannot
change it: THIRD_PARTY names each such rule and the elements it may flag.
"""

import contextlib
import json
from collections import Counter
from pathlib import Path

import pytest
from lab import IDLE, KERNEL_READY_JS, OFF_MACHINE, call, first_explorer, run_all, shut_down_kernels
from lab_visit import shown_figures
from reports import merged_report

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "build" / "slides-npm" / "node_modules" / "axe-core" / "axe.min.js"
REPORT = ROOT / "build" / "accessibility"
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "resultTypes": ["violations"],
}
SLIDER_HANDLE = ".widget-slider .noUi-handle, .widget-hslider .noUi-handle"
# rule -> CSS selector of the only elements it may flag: parts that JupyterLab or ipywidgets draw.
THIRD_PARTY = {
    # ipywidgets 8 gives noUiSlider's handle role=slider but no name, and its description <label> no
    # `for`; nothing a notebook passes to FloatSlider reaches the handle (the decks add the name).
    "aria-input-field-name": f"{SLIDER_HANDLE}, .jp-Editor .cm-content",
    # JupyterLab's own: the windowed notebook's viewport lists cells that are not list items, and the
    # collapse button beside each heading has no text.
    "aria-required-children": ".jp-WindowedPanel-viewport",
    "button-name": "button.jp-collapseHeadingButton, button[data-heading-level]",
    # JupyterLab labels each cell's <div> ("Code Cell Content with Output") without giving it a role.
    "aria-prohibited-attr": ".jp-Cell",
}
SETTLED_JS = """() => {
  const cells = document.querySelectorAll(".jp-Notebook .jp-Cell");
  const markdown = document.querySelectorAll(".jp-MarkdownCell .jp-RenderedMarkdown");
  return cells.length > 0 && markdown.length > 0 && !document.querySelector(".jp-Notebook .jp-mod-pending");
}"""


def known_gaps(page, violations, known):
    """{"known": [...], "unexpected": [...]}: each flagged element as (rule, target, what to fix), by whether
    `known` (rule -> CSS selector of the elements it may flag) allows it."""
    found = {"known": [], "unexpected": []}
    for violation in violations:
        for node in violation["nodes"]:
            selector = known.get(violation["id"])
            allowed = selector is not None and page.evaluate(
                "([target, selector]) => !!document.querySelector(target)?.matches(selector)",
                [node["target"][0], selector],
            )
            found["known" if allowed else "unexpected"].append(
                (violation["id"], node["target"][0], " ".join(node["failureSummary"].split()))
            )
    return found


@pytest.fixture(scope="session")
def summary():
    """Collect each notebook's findings; write them to build/accessibility/jupyterlab-axe.txt at the end
    (with the other xdist worker's: reports.merged_report)."""
    found = {}
    yield found
    entries = {name: [ours, dict(theirs)] for name, (ours, theirs) in found.items()}
    merged = merged_report(REPORT / "jupyterlab-axe.txt", entries)
    lines = [f"axe-core on {len(merged)} notebooks as JupyterLab shows them (WCAG 2.0/2.1 A and AA)"]
    for name, (ours, theirs) in sorted(merged.items()):
        lines.append(f"{name}: {len(ours)} in the notebook's content; JupyterLab/ipywidgets: {theirs or 'none'}")
    (REPORT / "jupyterlab-axe.txt").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("notebook", LESSONS, ids=[path.stem for path in LESSONS])
def test_notebook_content_in_jupyterlab_has_no_axe_violations(notebook_in_lab, notebook, summary):
    """axe-core finds nothing in the notebook's text, outputs and figures; only THIRD_PARTY's known gaps remain.

    Checked as the notebook opens, before anything runs, in its one JupyterLab visit (lab_visit.py), which
    then runs it for test_browser.py when it has widgets."""
    path = notebook.relative_to(ROOT).as_posix()
    flagged, images = notebook_in_lab(path).content()
    ours = [f"{rule} at {target}: {fix}" for rule, target, fix in flagged["unexpected"]]
    summary[notebook.stem] = (ours, Counter(rule for rule, _, _ in flagged["known"]))
    assert not ours, f"{notebook.name} in JupyterLab:\n" + "\n".join(ours)
    shown = shown_figures(path)
    described = [alt for alt in images if len(alt) > 40]
    assert len(described) >= shown, f"{notebook.name}: {shown} figures, alt texts {images}"


def test_a_running_explorer_in_jupyterlab_describes_its_plot_and_lacks_only_its_sliders_names(lab, browser):
    """Lesson 01 run in JupyterLab: the explorer's plot has its description as its name (title) and in a
    polite live region below it; axe-core flags nothing but ipywidgets' gap (ACCESSIBILITY.md), the
    sliders' names. When ipywidgets names them, the last assertion fails: update ACCESSIBILITY.md then.
    """
    url, token, _ = lab
    path = "notebooks/01_scalar_rnn.ipynb"
    page = browser.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}/lab/tree/{path}?reset&token={token}")
        page.locator(IDLE).wait_for()
        page.wait_for_function(KERNEL_READY_JS, arg=path)
        run_all(page, path)
        explorer = first_explorer(page)
        explorer.scroll_into_view_if_needed()
        live = explorer.locator(".rnns-figure-description [aria-live='polite']")
        assert live.inner_text().startswith("hidden state over time: one line of h_t against time step t; h[0]")
        assert explorer.locator("img.widget-image").get_attribute("title") == live.inner_text()
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate(
            "async ([element, options]) => (await axe.run(element, options)).violations",
            [explorer.element_handle(), OPTIONS],
        )
        flagged = known_gaps(page, violations, {"aria-input-field-name": SLIDER_HANDLE})
        assert not flagged["unexpected"], flagged["unexpected"]
        assert flagged["known"], "no slider flagged: has ipywidgets named them? Update ACCESSIBILITY.md"
    finally:
        page.close()
        with contextlib.suppress(OSError):
            shut_down_kernels(url, token)


def test_voila_shows_lesson_01_with_only_ipywidgets_known_gaps(lab, browser):
    """Lesson 01 in Voila (its cells run, outputs only): axe-core flags nothing in the lesson's content
    but the explorer's unnamed slider handles (ipywidgets' gap) and links told apart by colour alone
    (Voila's theme), both in ACCESSIBILITY.md; the plot has its description as title and in the live
    region below it."""
    url, token, _ = lab
    page = browser.new_page()
    page.set_default_timeout(60_000)
    page.route(OFF_MACHINE, lambda route: route.abort())
    try:
        page.goto(f"{url}/voila/render/notebooks/01_scalar_rnn.ipynb?token={token}", wait_until="commit")
        page.locator("#rendered_cells").wait_for(state="visible", timeout=180_000)
        image = page.locator("img.widget-image").first
        image.wait_for(state="visible")
        assert image.get_attribute("title").startswith("hidden state over time: one line of h_t")
        assert page.locator(".rnns-figure-description [aria-live='polite']").first.inner_text() == image.get_attribute(
            "title"
        )
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate(
            "async options => (await axe.run(document.querySelector('#rendered_cells'), options)).violations", OPTIONS
        )
        # Voila's theme shows links in running text by colour alone (no underline), at under 3:1 to the text.
        flagged = known_gaps(page, violations, {"aria-input-field-name": SLIDER_HANDLE, "link-in-text-block": "a"})
        assert not flagged["unexpected"], flagged["unexpected"]
        assert flagged["known"], "no slider flagged: has ipywidgets named them? Update ACCESSIBILITY.md"
    finally:
        with contextlib.suppress(Exception):
            kernel = json.loads(page.locator("#jupyter-config-data").text_content())["kernelId"]
            call(f"{url}/api/kernels/{kernel}", token, method="DELETE")
        page.close()
