"""The time a student waits: slider key press to the new plot on screen, in JupyterLab (make bench).

benchmarks/widgets.py times the kernel's part of a slider change. This script times what a
student sees: it opens a notebook in JupyterLab in headless Chromium (the browser tests' sandboxed
server, slides/lab.py), runs every cell, focuses the first slider of the notebook's first explorer
and presses ArrowRight / ArrowLeft, one press at a time, waiting until each new picture is shown.
Every time stamp is taken in the page, with performance.now():

- key:      the keydown event reaches the page;
- sent:     the first WebSocket message to the kernel after it (the slider's new value);
- received: the first large message from the kernel after that (the new PNG; > 2 KB);
- src:      the plot's <img> gets its new src;
- shown:    the new image is decoded and the next frame after it is painted;
- and, inside "sent → received", the kernel's own part: Explorer._apply (re-compute every state,
  redraw the lines, encode the PNG, hand it to the Image widget), timed in the kernel.

Stages are reported as p50/p95 in ms over the timed presses, with the WebSocket messages and
bytes each press causes in each direction.

    PYTHONPATH=slides python benchmarks/browser.py [notebooks/NN_name.ipynb ...]   (default: notebooks 01 and 10)
"""

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from lab import (  # slides/lab.py: PYTHONPATH=slides (make bench)
    BUILD,
    IDLE,
    KERNEL_READY_JS,
    PANEL_JS,
    check_cells,
    chromium,
    first_explorer,
    jupyterlab,
    run_all,
)
from playwright.sync_api import sync_playwright

NOTEBOOKS = ["notebooks/01_scalar_rnn.ipynb", "notebooks/10_lstm.ipynb"]
WARM_UP, PRESSES = 5, 40
IMAGE_BYTES = 2000  # a received message at least this large carries the new picture

# Before any page script: time-stamp every WebSocket message, both ways, with its size.
RECORD_JS = """
window.__log = [];
const size = data => typeof data === "string" ? data.length : (data.byteLength ?? data.size ?? 0);
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  window.__log.push({kind: "sent", t: performance.now(), bytes: size(data)});
  return send.call(this, data);
};
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", e => window.__log.push({kind: "received", t: performance.now(), bytes: size(e.data)}));
  }
};
document.addEventListener("keydown", () => window.__log.push({kind: "key", t: performance.now()}), true);
"""

# Watch the plot: when its src changes, note it, wait for the decode and the next painted frame.
WATCH_JS = """img => {
  window.__shown = [];
  new MutationObserver(() => {
    const src = performance.now();
    img.decode().then(() => requestAnimationFrame(() => {
      const channel = new MessageChannel();  // runs right after the frame is painted
      channel.port1.onmessage = () => window.__shown.push({src, shown: performance.now()});
      channel.port2.postMessage(null);
    }));
  }).observe(img, {attributes: true, attributeFilter: ["src"]});
}"""


# Run code in the notebook's kernel (not in a cell) and return what it printed.
EXECUTE_JS = f"""async ([path, code]) => {{
  const kernel = ({PANEL_JS}).sessionContext.session.kernel;
  const future = kernel.requestExecute({{code, store_history: false}});
  let printed = "";
  future.onIOPub = msg => {{ if (msg.header.msg_type === "stream") printed += msg.content.text; }};
  await future.done;
  return printed;
}}"""
# In the kernel: time each Explorer._apply (re-compute, redraw, PNG, hand it to the Image widget).
TIME_KERNEL = """
import time as _bench_time, helpers.widgets as _bench_widgets
_bench_apply, _bench_ms = _bench_widgets.Explorer._apply, []
def _bench_timed(self, name, value):
    start = _bench_time.perf_counter()
    _bench_apply(self, name, value)
    _bench_ms.append(1000 * (_bench_time.perf_counter() - start))
_bench_widgets.Explorer._apply = _bench_timed
"""
READ_KERNEL = "print(*_bench_ms); _bench_widgets.Explorer._apply = _bench_apply"


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def one_press(page, key):
    """Press key once and wait for the new picture; returns the stage times and message counts."""
    page.evaluate("() => { window.__log = []; window.__shown = []; }")
    page.keyboard.press(key)
    page.wait_for_function("() => window.__shown.length > 0", timeout=30_000)
    page.locator(IDLE).wait_for()
    page.wait_for_timeout(150)  # late messages (the kernel's idle status) belong to this press
    log, shown = page.evaluate("() => [window.__log, window.__shown]")
    key_t = next(e["t"] for e in log if e["kind"] == "key")
    sent = [e for e in log if e["kind"] == "sent" and e["t"] >= key_t]
    received = [e for e in log if e["kind"] == "received" and e["t"] >= key_t]
    image = next(e for e in received if e["bytes"] >= IMAGE_BYTES)
    return {
        "key → sent": sent[0]["t"] - key_t,
        "sent → received": image["t"] - sent[0]["t"],
        "received → src": shown[0]["src"] - image["t"],
        "src → shown": shown[0]["shown"] - shown[0]["src"],
        "key → shown": shown[0]["shown"] - key_t,
        "messages": (len(sent), len(received)),
        "bytes": (sum(e["bytes"] for e in sent), sum(e["bytes"] for e in received)),
        "image bytes": image["bytes"],
        "pictures": len(shown),
    }


def measure(context, url, token, notebook):
    """Open the notebook, run it, and time PRESSES key presses on its first explorer's first slider."""
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.add_init_script(RECORD_JS)
        page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")
        page.locator(IDLE).wait_for()
        page.wait_for_function(KERNEL_READY_JS, arg=notebook)
        check_cells(run_all(page, notebook))
        explorer = first_explorer(page)
        image = explorer.locator("img.widget-image").first
        image.scroll_into_view_if_needed()
        image.evaluate(WATCH_JS)
        explorer.locator(".widget-slider .noUi-handle").first.focus()
        page.evaluate(EXECUTE_JS, [notebook, TIME_KERNEL])
        presses = []
        for k in range(WARM_UP + PRESSES):
            result = one_press(page, "ArrowRight" if k % 4 < 2 else "ArrowLeft")
            if k >= WARM_UP:
                presses.append(result)
        kernel_ms = [float(ms) for ms in page.evaluate(EXECUTE_JS, [notebook, READ_KERNEL]).split()]
        assert len(kernel_ms) == WARM_UP + PRESSES, f"{len(kernel_ms)} redraws for {WARM_UP + PRESSES} presses"
        for press, ms in zip(presses, kernel_ms[WARM_UP:], strict=True):
            press["in the kernel"] = ms
        return presses
    finally:
        page.close()


def report(notebook, presses, load):
    print(f"\n{notebook}: {len(presses)} key presses after {WARM_UP} warm-up presses, one at a time")
    print(
        f"  load average before and after: {load[0]:.2f}, {load[1]:.2f} ({os.cpu_count()} CPUs; other work slows every stage)"
    )
    print(f"  {'stage':<18}{'p50 ms':>8}{'p95 ms':>8}")
    stages = ("key → sent", "sent → received", "in the kernel", "received → src", "src → shown", "key → shown")
    for stage in stages:
        times = [p[stage] for p in presses]
        print(f"  {stage:<18}{statistics.median(times):>8.1f}{percentile(times, 0.95):>8.1f}")
    sent, received = (statistics.median(p["messages"][i] for p in presses) for i in (0, 1))
    bytes_sent, bytes_received = (statistics.median(p["bytes"][i] for p in presses) for i in (0, 1))
    print(
        f"  per press (median): {sent:.0f} messages sent ({bytes_sent:.0f} B), {received:.0f} received ({bytes_received:.0f} B)"
    )
    print(
        f"  PNG message: {statistics.median(p['image bytes'] for p in presses):.0f} B; pictures per press: "
        f"{max(p['pictures'] for p in presses)} at most"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", default=NOTEBOOKS)
    args = parser.parse_args()
    BUILD.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-browser-", dir=BUILD) as folder:
        sandbox = Path(folder)
        with jupyterlab(sandbox) as (url, token, env), sync_playwright() as playwright:
            with chromium(playwright, sandbox, env) as context:
                for notebook in args.notebooks:
                    before = os.getloadavg()[0]
                    presses = measure(context, url, token, notebook)
                    report(notebook, presses, (before, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
