"""Session fixtures shared by the browser tests: one sandbox, one JupyterLab, one Chromium.

Defined here, not in test_browser.py, so that test_browser.py and test_live.py get the same
server and the same sync Playwright: a second session-wide sync Playwright in the main thread
would fail while the first is running.
"""

import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

# slides/ holds handouts.py, which the tests import (test_browser.py adds it to the path too).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "slides"))
from test_browser import BUILD, chromium, jupyterlab  # noqa: E402


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
