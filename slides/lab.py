"""Drive JupyterLab in Debian's headless Chromium: a sandboxed server, the browser, Run All, an explorer's slider.

Shared by the browser tests (tests/browser/) and the benchmarks that time what a student sees
(benchmarks/browser.py, benchmarks/resources.py); beside measure.py, whose Chromium and flags it
launches. pytest finds it through pyproject.toml's `pythonpath`; make bench runs the benchmarks
with PYTHONPATH=slides. Nothing here is run on its own.

The server's HOME, Jupyter's folders and TMPDIR live in a sandbox folder that the caller makes
and removes; its log and the tests' screenshots go to build/browser/.
"""

import contextlib
import io
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from measure import CHROMIUM, CHROMIUM_FLAGS
from PIL import Image, ImageChops
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
SHOTS = BUILD / "browser"
RUN_ALL_MS = 180_000  # a lesson's Run All imports torch and may train; CI machines are small
IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
PRESSES = 3  # ArrowRight presses the tests give a slider handle
# Where the server, its kernels and the browser write: all inside the sandbox folder.
SANDBOXED = "HOME JUPYTER_CONFIG_DIR JUPYTER_DATA_DIR JUPYTER_RUNTIME_DIR IPYTHONDIR MPLCONFIGDIR TMPDIR".split()

# No news question or update check: that comes from config/jupyterlab-overrides.json, which make
# setup installs in the venv (tests/browser/test_browser.py's test_jupyterlab_opens_without_the_news_question checks it).
SETTINGS = {
    # Never write run outputs back into notebooks that people are editing.
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    # Keep every cell in the DOM, wherever the widget is.
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}

# JavaScript run in the page. window.jupyterapp is there because of --LabApp.expose_app_in_browser.
PANEL_JS = '[...window.jupyterapp.shell.widgets("main")].find(w => w.context?.path === path)'
# The kernel is connected and idle: Run All before that would skip every cell without a word.
KERNEL_READY_JS = f"""path => {{
  const kernel = ({PANEL_JS})?.sessionContext.session?.kernel;
  return kernel?.connectionStatus === "connected" && kernel.status === "idle";
}}"""
# The notebook's code cells as JupyterLab's model holds them, each with its own error outputs.
CELLS_JS = f"""path => {{
  const model = ({PANEL_JS}).content.model;
  const cells = [];
  for (let i = 0; i < model.cells.length; i++) {{
    const cell = model.cells.get(i);
    if (cell.type !== "code") continue;
    const errors = [];
    for (let j = 0; j < cell.outputs.length; j++) {{
      const out = cell.outputs.get(j).toJSON();
      if (out.output_type === "error") errors.push(`${{out.ename}}: ${{out.evalue}}`);
    }}
    cells.push({{source: cell.sharedModel.getSource(), tags: cell.getMetadata("tags") || [],
                 count: cell.executionCount, running: cell.executionState === "running", errors}});
  }}
  return cells;
}}"""
STARTED_JS = f"path => ({CELLS_JS})(path).some(c => c.running || c.count !== null)"
FINISHED_JS = f"path => !({CELLS_JS})(path).some(c => c.running)"
# A request that leaves the machine, for page.route to abort (Voila's page links CDN fonts and MathJax).
OFF_MACHINE = re.compile(r"^(?!https?://127\.0\.0\.1[:/])")


def sandbox_env(folder):
    """os.environ with HOME, Jupyter's folders, IPython, matplotlib and TMPDIR inside folder."""
    env = dict(os.environ)
    for name in SANDBOXED:
        env[name] = str(folder / name.lower())
        Path(env[name]).mkdir()
    # The venv's kernelspec and lab extensions (the sandbox's data folder is empty anyway).
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    for name in ("JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env.pop(name, None)  # so both follow JUPYTER_CONFIG_DIR
    return env


def write_settings(config_dir, more=None):
    """SETTINGS (and `more`, merged plugin by plugin) as JupyterLab user settings, in the sandbox's config folder."""
    merged = {plugin: dict(values) for plugin, values in SETTINGS.items()}
    for plugin, values in (more or {}).items():
        merged.setdefault(plugin, {}).update(values)
    for plugin, values in merged.items():
        package, name = plugin.split(":")
        path = Path(config_dir) / "lab" / "user-settings" / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(url, token, method="GET", timeout=2):
    """An authenticated request to the Jupyter server (raises OSError when it does not answer)."""
    request = urllib.request.Request(url, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status


def shut_down_kernels(url, token):
    """Shut down every kernel the server runs. A notebook page closed leaves its kernel running, with
    its explorers' widgets alive: after a few notebooks they would keep the machine's cores busy."""
    request = urllib.request.Request(f"{url}/api/kernels", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        kernels = json.loads(response.read())
    for kernel in kernels:
        with contextlib.suppress(OSError):
            call(f"{url}/api/kernels/{kernel['id']}", token, method="DELETE", timeout=15)


def stop(server, url, token):
    """Ask the server to shut down (it stops its kernels); terminate, then kill, if it does not."""
    try:
        call(f"{url}/api/shutdown", token, method="POST")
    except OSError:
        pass
    for end in (lambda: None, server.terminate, server.kill):
        end()
        try:
            server.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def jupyterlab(sandbox, settings=None):
    """JupyterLab on 127.0.0.1 with a random token, serving the repo root; yields (url, token, env).

    `settings`: more user settings, by plugin (config/presenting.json for the presenter's setting).

    Its log goes to build/browser/jupyterlab.log. Used by the browser tests (conftest.py's `lab`)
    and by benchmarks/browser.py.
    """
    env = sandbox_env(sandbox)
    write_settings(env["JUPYTER_CONFIG_DIR"], settings)
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


@contextlib.contextmanager
def chromium(playwright, sandbox, env):
    """Debian's Chromium, headless, with a fresh profile in the sandbox; yields the browser context."""
    context = playwright.chromium.launch_persistent_context(
        str(sandbox / "chromium-profile"),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_FLAGS,
        env=env,  # the browser's HOME and TMPDIR are in the sandbox too
        viewport={"width": 1400, "height": 1000},
    )
    try:
        yield context
    finally:
        context.close()


def menu(page, title, command):
    """Click a main-menu title, then the item that runs command (as a user would)."""
    page.locator(".lm-MenuBar-item").filter(has_text=re.compile(f"^{title}$")).click()
    page.locator(f".lm-Menu-item[data-command='{command}']").click()


def run_all(page, notebook):
    """Clear outputs, Run ▸ Run All Cells, and wait until every cell is done; returns CELLS_JS's cells."""
    page.locator(".jp-Notebook .jp-Cell").first.click()  # focus the notebook so its commands apply
    # Cleared first, so stored outputs and execution counts cannot pass for this run's.
    menu(page, "Edit", "editmenu:clear-all")  # Clear Outputs of All Cells
    menu(page, "Run", "runmenu:run-all")  # Run All Cells
    page.wait_for_function(STARTED_JS, arg=notebook)
    page.wait_for_function(FINISHED_JS, arg=notebook, timeout=RUN_ALL_MS)
    page.locator(IDLE).wait_for()
    return page.evaluate(CELLS_JS, notebook)


def check_cells(cells):
    """No error outside cells that raise on purpose, and every non-empty code cell ran."""
    for number, cell in enumerate(cells, 1):
        on_purpose = "NBVAL_RAISES_EXCEPTION" in cell["source"] or "raises-exception" in cell["tags"]
        assert on_purpose or not cell["errors"], f"code cell {number} raised {cell['errors']}:\n{cell['source']}"
    skipped = [number for number, cell in enumerate(cells, 1) if cell["source"].strip() and cell["count"] is None]
    # JupyterLab sends stop_on_error=False only for cells tagged raises-exception.
    assert not skipped, f"code cells {skipped} did not run; a deliberate error needs the tag raises-exception"


def wait_for_new_plot(page, image, old_src, idle=IDLE):
    """Wait until the image's src differs from old_src, the idle selector (if any) shows and src stays put for 0.5 s."""
    expect(image, "the plot was not replaced after ArrowRight").not_to_have_attribute("src", old_src, timeout=30_000)
    src = None
    for _ in range(40):
        if idle:
            page.locator(idle).wait_for()
        if src == image.get_attribute("src"):
            break
        src = image.get_attribute("src")
        page.wait_for_timeout(500)
    image.evaluate("img => img.decode()")  # screenshot the new picture, not a half-loaded one


def readout_value(readout):
    """The slider readout as a float (the readout writes negatives with the Unicode minus)."""
    return float(readout.inner_text().strip().replace("\u2212", "-"))


def pixels_differ(png_a, png_b):
    """Whether two PNG screenshots differ in any decoded pixel."""
    a, b = (Image.open(io.BytesIO(png)).convert("RGB") for png in (png_a, png_b))
    return a.size != b.size or ImageChops.difference(a, b).getbbox() is not None


def first_explorer(page):
    """The first explorer's output: sliders beside an ipywidgets.Image (an <img>)."""
    return (
        page.locator(".jp-OutputArea-output")
        .filter(has=page.locator(".widget-slider"))
        .filter(has=page.locator("img.widget-image"))
        .first
    )
