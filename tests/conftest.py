"""pytest set-up shared by everything under tests/."""

import importlib.util
from pathlib import Path

import pytest

from helpers.solutions.scalar_rnn import hand_rnn

# tests/browser starts JupyterLab and Chromium, so `pytest tests` (make unit) skips it; make
# test-browser names that folder on the command line, and named paths are always collected.
collect_ignore = ["browser"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def script():
    """Load one of the project's scripts (not a package) as a module: script("slides/build.py")."""

    def load(relative_path):
        path = ROOT / relative_path
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def scalar_rnn():
    """Notebook 01's layer, W_ih = 0.5, W_hh = -1.0, no bias: a fresh one, built as its exercises build it."""
    return hand_rnn()
