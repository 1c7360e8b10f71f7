"""Session fixtures shared by the browser tests: one sandbox, one JupyterLab, one Chromium.

Defined here, not in test_browser.py, so that test_browser.py and test_live.py get the same
server and the same sync Playwright: a second session-wide sync Playwright in the main thread
would fail while the first is running. And in_chromium: one Chromium per worker for the decks
(test_slides.py, test_accessibility.py), in a thread of its own.
"""

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lab import BUILD, chromium, jupyterlab, sandbox_env  # slides/ is on the path: pyproject.toml's pythonpath
from measure import CHROMIUM, CHROMIUM_FLAGS
from playwright.sync_api import sync_playwright
from test_slides import SLIDES, VIEWPORT


@pytest.fixture(scope="session")
def sandbox():
    """A fresh folder under build/ for HOME, Jupyter, TMPDIR and the browser profile."""
    BUILD.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="browser-sandbox-", dir=BUILD))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def lab(sandbox):
    """JupyterLab on 127.0.0.1 with a random token, serving the repo root; yields (url, token, env)."""
    with jupyterlab(sandbox) as server:
        yield server


@pytest.fixture(scope="session")
def browser(lab, sandbox):
    """Debian's Chromium, headless, with a fresh profile in the sandbox."""
    with sync_playwright() as playwright, chromium(playwright, sandbox, lab[2]) as context:
        yield context


@pytest.fixture(scope="session")
def notebook_in_lab(lab, browser):
    """notebook_in_lab(notebook): lab_visit.Visit of one JupyterLab visit per notebook (repo-relative) per
    worker, which checks the content of a lesson (test_lab_accessibility.py) and runs a notebook with
    widgets (test_browser.py) on the same page."""
    from lab_visit import lessons, visit
    from test_browser import widget_notebooks

    done = {}

    def get(notebook):
        if notebook not in done:
            done[notebook] = visit(lab, browser, notebook, notebook in lessons(), notebook in widget_notebooks())
        return done[notebook]

    return get


@pytest.fixture(scope="session")
def scans(in_chromium):
    """test_accessibility.Scans: each deck or page scanned once per worker, with axe (test_accessibility.py)
    and, for a deck, the fit of each slide (test_slides.py) in the same pass; the axe summary written at the end."""
    from test_accessibility import AXE, ROOT, Scans, write_summary

    if not AXE.exists():
        pytest.fail(f"{AXE.relative_to(ROOT)} is missing: `make slides` installs axe-core (slides/package.json)")
    found = Scans(in_chromium)
    yield found
    write_summary(found.done)


@pytest.fixture(scope="session")
def in_chromium():
    """Runs function(context, *args) against headless Chromium at 1280x720 (profile, HOME, TMPDIR under build/).

    Playwright lives in a thread of its own: test_browser.py's session-wide sync Playwright may be
    running in the main thread, and two sync Playwrights cannot share one thread.
    """
    if not (SLIDES / "index.html").exists():
        pytest.fail("build/slides/ has no decks: `make test-browser` runs `make slides` first")
    folder = Path(tempfile.mkdtemp(prefix="slides-sandbox-", dir=BUILD))
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="slides-chromium")

    def start():
        playwright = sync_playwright().start()
        context = playwright.chromium.launch_persistent_context(
            str(folder / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            env=sandbox_env(folder),
            viewport=VIEWPORT,
            reduced_motion="reduce",  # the decks then scroll at once, not smoothly
        )
        return playwright, context

    def stop(playwright, context):
        try:
            context.close()
        finally:
            playwright.stop()

    try:
        playwright, context = thread.submit(start).result()
        try:
            yield lambda function, *args: thread.submit(function, context, *args).result()
        finally:
            thread.submit(stop, playwright, context).result()
    finally:
        thread.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


# Marked as each test is collected, and the group put into the test's id by hand where xdist could not:
# xdist 3.8 appends "@group" to item._nodeid, which pytest 9.2 no longer reads (the id is item._id), so
# with --dist loadgroup every test was a group of its own (a deck scanned again by the alt-text test on
# the other worker, say).
def pytest_itemcollected(item):
    """Every test about one lesson (its deck, handouts, HTML export, notebook) in one xdist group, so that
    `-n 2 --dist loadgroup` sends them to one worker: a deck is then scanned once for both the axe test and
    the alt-text test (test_accessibility.py's `scans` caches per worker), and the lessons share the two workers."""
    params = getattr(item, "callspec", None)
    value = params and (params.params.get("notebook") or params.params.get("path"))
    if value:
        item.add_marker(pytest.mark.xdist_group(Path(value).name.split(".")[0]))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """On an xdist worker under --dist loadgroup: "@group" after each grouped test's id, as xdist means to."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark and not item.nodeid.endswith(f"@{mark.args[0]}") and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # pytest 9.2's

            item._id = NodeId.parse(f"{item.nodeid}@{mark.args[0]}")
