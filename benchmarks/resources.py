"""Memory and time each notebook needs, and the Jupyter server's memory: for sizing per-student pods.

    PYTHONPATH=slides python benchmarks/resources.py [notebooks/NN_name.ipynb ...]   (default: every notebook)
    python benchmarks/resources.py --no-server ...       (skip the JupyterLab part, which needs slides/lab.py)

1. Kernels. Each notebook runs top to bottom in a fresh kernel (nbclient, the venv's python3
   kernelspec), in memory: the kernel's working directory is a temporary copy of notebooks/ and
   nothing is written back. MPLBACKEND is unset, as for a student (ipykernel's inline backend, no
   display). Cells tagged raises-exception may raise; any other
   error fails the notebook (every deliberate-error cell carries the tag). Just before the kernel is shut down, /proc/<kernel pid>/status gives
   VmHWM (the kernel's peak resident memory) and VmRSS (resident at the end). Kernel start (until it
   answers) and running the cells are timed apart, in wall seconds.
2. The server. JupyterLab as the browser tests start it (slides/lab.py: 127.0.0.1,
   random port and token, HOME and Jupyter's folders in a sandbox under build/), with SERVED open in
   headless Chromium (/usr/bin/chromium) and Run All done: the server's and that kernel's VmHWM and
   VmRSS, and the server's VmRSS before the page was opened. The sandbox's HOME is fresh, so that
   kernel also builds matplotlib's font cache (a student's second kernel finds it).

Prints a markdown table and the machine's facts; the load average matters: other work slows every
run (memory much less). Exits non-zero only when a measurement fails.
"""

import argparse
import importlib.metadata
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SERVED = "notebooks/01_scalar_rnn.ipynb"
MIB = 1024  # /proc/<pid>/status counts kB


def memory(pid):
    """{"VmHWM": MiB, "VmRSS": MiB} of process pid, from /proc/<pid>/status."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {name: int(fields[name].split()[0]) / MIB for name in ("VmHWM", "VmRSS")}


def cmdline(pid):
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def find_process(*parts):
    """The pid of the one process whose command line contains every part."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and all(part in cmdline(entry.name) for part in parts):
                found.append(int(entry.name))
        except OSError:  # it ended meanwhile
            continue
    assert len(found) == 1, f"{len(found)} processes have {parts} in their command line"
    return found[0]


def run_notebook(path, workdir):
    """Run the notebook in a fresh kernel in workdir; returns (kernel start s, cells s, memory())."""
    nb = nbformat.read(path, as_version=4)  # nbclient lets only cells tagged raises-exception raise
    client = NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(workdir)}})
    client.reset_execution_trackers()
    start = time.perf_counter()
    with client.setup_kernel():  # starts the kernel and waits until it answers; shuts it down after
        started = time.perf_counter()
        pid = client.km.provisioner.process.pid
        assert "ipykernel_launcher" in cmdline(pid), f"pid {pid} is not the kernel: {cmdline(pid)}"
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
        done = time.perf_counter()
        used = memory(pid)
    return started - start, done - started, used


def measure_server(notebook):
    """JupyterLab with notebook open and run in Chromium: {row label: (memory(), start s, run s)}."""
    from lab import BUILD, IDLE, KERNEL_READY_JS, PANEL_JS, check_cells, chromium, jupyterlab, run_all  # slides/lab.py
    from playwright.sync_api import sync_playwright

    BUILD.mkdir(exist_ok=True)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-resources-", dir=BUILD) as folder:
        sandbox = Path(folder)
        with jupyterlab(sandbox) as (url, token, env), sync_playwright() as playwright:
            server = find_process("jupyter-lab", f"--port={url.rsplit(':', 1)[1]}")
            rows["Jupyter server, no page open"] = (memory(server), None, None)
            with chromium(playwright, sandbox, env) as context:
                page = context.new_page()
                page.set_default_timeout(60_000)
                start = time.perf_counter()
                page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")
                page.locator(IDLE).wait_for()
                page.wait_for_function(KERNEL_READY_JS, arg=notebook)
                started = time.perf_counter()
                check_cells(run_all(page, notebook))
                done = time.perf_counter()
                kernel_id = page.evaluate(f"path => ({PANEL_JS}).sessionContext.session.kernel.id", notebook)
                kernel = find_process("ipykernel_launcher", f"kernel-{kernel_id}.json")
                name = Path(notebook).stem
                rows[f"Jupyter server, {name} open in JupyterLab and run"] = (memory(server), None, None)
                rows[f"kernel of {name} under JupyterLab (page load, Run All)"] = (
                    memory(kernel),
                    started - start,
                    done - started,
                )
    return rows


def row(label, used, start, run):
    seconds = [f"{s:.1f}" if s is not None else "" for s in (start, run)]
    return f"| {label} | {used['VmHWM']:.0f} | {used['VmRSS']:.0f} | {seconds[0]} | {seconds[1]} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, default=NOTEBOOKS)
    parser.add_argument("--no-server", action="store_true", help="measure the kernels only")
    args = parser.parse_args()
    os.environ.pop("MPLBACKEND", None)  # the kernels and the server inherit this environment
    load_before = os.getloadavg()
    print("| process | peak RSS, VmHWM (MiB) | RSS at end, VmRSS (MiB) | kernel start (s) | run time (s) |")
    print("|---|--:|--:|--:|--:|")
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-resources-") as folder:
        workdir = Path(folder) / "notebooks"
        shutil.copytree(ROOT / "notebooks", workdir)
        for path in args.notebooks:
            try:
                start, run, used = run_notebook(path.resolve(), workdir)
            except Exception as error:  # report it, measure the others, exit non-zero
                failed.append(path.name)
                text = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).strip()  # without the traceback's colours
                last = (text.splitlines() or [""])[-1]  # a CellExecutionError ends with the error
                print(f"| {path.name} | failed: {type(error).__name__}: {last} | | | |")
                continue
            print(row(f"kernel of {path.name}", used, start, run), flush=True)
    if not args.no_server:
        try:
            for label, (used, start, run) in measure_server(SERVED).items():
                print(row(label, used, start, run))
        except Exception as error:
            failed.append("server")
            print(f"| Jupyter server | failed: {type(error).__name__}: {error} | | | |")
    load_after = os.getloadavg()
    total = int(Path("/proc/meminfo").read_text().split()[1]) / MIB**2
    print(
        f"\n{os.cpu_count()} CPUs, {total:.1f} GiB memory; Python {platform.python_version()}, "
        f"torch {importlib.metadata.version('torch')}, jupyterlab {importlib.metadata.version('jupyterlab')}"
    )
    print("load average (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}".format(*load_before))
    print("load average (1, 5, 15 min) after:  {:.2f} {:.2f} {:.2f}".format(*load_after))
    if failed:
        sys.exit(f"measurement failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
