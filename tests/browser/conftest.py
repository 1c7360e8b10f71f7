"""Session fixtures shared by the browser tests: one sandbox, one JupyterLab, one Chromium.

Defined here, not in test_browser.py, so that test_browser.py and test_live.py get the same
server and the same sync Playwright: a second session-wide sync Playwright in the main thread
would fail while the first is running.
"""

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

# slides/ holds measure.py (Debian's Chromium and its launch flags) and handouts.py, which the tests import.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "slides"))
from measure import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402
from test_browser import (  # noqa: E402
    BUILD,
    ROOT,
    SHOTS,
    call,
    free_port,
    sandbox_env,
    stop,
    write_settings,
)


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
    env = sandbox_env(sandbox)
    write_settings(env["JUPYTER_CONFIG_DIR"])
    url, token = f"http://127.0.0.1:{free_port()}", secrets.token_hex(24)
    command = [
        str(Path(sys.executable).parent / "jupyter-lab"),
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={url.rsplit(':', 1)[1]}",
        "--ServerApp.port_retries=0",  # the port in url, or fail
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={ROOT}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: read cells and outputs from the model
        # Opening a notebook writes a checkpoint; keep those out of notebooks/ (an absolute dir wins).
        f"--FileCheckpoints.checkpoint_dir={env['HOME']}/checkpoints",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")  # CI runs as root; JupyterLab refuses otherwise
    SHOTS.mkdir(parents=True, exist_ok=True)
    with open(SHOTS / "jupyterlab.log", "w") as log:
        server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, "JupyterLab exited; see build/browser/jupyterlab.log"
                assert time.monotonic() < deadline, "JupyterLab did not answer in 60 s"
                try:
                    call(f"{url}/api/status", token)
                    break
                except OSError:
                    time.sleep(0.25)
            yield url, token, env
        finally:
            stop(server, url, token)


@pytest.fixture(scope="session")
def browser(lab, sandbox):
    """Debian's Chromium, headless, with a fresh profile in the sandbox."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(sandbox / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_FLAGS,
            env=lab[2],  # the browser's HOME and TMPDIR are in the sandbox too
            viewport={"width": 1400, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()
