"""How fast a slider change redraws the explorer's plot, against a naive redraw (make bench).

"Image ready" means: the kernel has re-computed every hidden state (helpers.trace), updated
the plot, encoded it as PNG and assigned the bytes to the ipywidgets.Image's `value`, i.e. the
moment the new picture is handed to the comm. Sending it to the browser and decoding it there
are not included (they happen outside the kernel). Each change sets a slider from code, which
runs the same observer a drag in the browser runs.

The baseline does what a first attempt would: per change, re-compute, build a new pyplot
figure with the same plot, save a PNG at the same size, and close the figure.
"""

import io
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from helpers import plots, trace  # noqa: E402
from helpers.widgets import explore  # noqa: E402

CHANGES = 300  # timed changes per case (the issue asks for at least 200)
WARM_UP = 20
FLOOR_MS, FLOOR_SPEEDUP = 30.0, 3.0


def values():
    """Slider values that sweep back and forth across [-1.5, 1.5]."""
    return [1.5 * ((k % 60) - 30) / 30 for k in range(WARM_UP + CHANGES)]


def time_explorer(explorer, name):
    """Milliseconds from setting the slider to the new PNG being in the Image widget."""
    slider, timings = explorer.controls[name], []
    for k, value in enumerate(values()):
        start = time.perf_counter()
        slider.value = value
        elapsed = time.perf_counter() - start
        if k >= WARM_UP:
            timings.append(elapsed * 1000)
    assert explorer.last_error is None, explorer.last_error
    return timings


def time_naive(explorer, name):
    """The same changes, each drawn on a brand-new figure and saved as a new PNG."""
    tensor, index = explorer._targets[name]
    width, height = explorer.figure.get_size_inches()
    timings = []
    for k, value in enumerate(values()):
        start = time.perf_counter()
        with torch.no_grad():
            tensor[index] = value
            result = trace(explorer.module, explorer.input)
        figure, ax = plt.subplots(figsize=(width, height), dpi=explorer.figure.dpi, layout="constrained")
        plots.hidden_states(ax, result.stack("h")[:, 0])
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        plt.close(figure)
        elapsed = time.perf_counter() - start
        if k >= WARM_UP:
            timings.append(elapsed * 1000)
    return timings


def summary(timings):
    ordered = sorted(timings)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main():
    torch.manual_seed(0)
    cases = [
        ("1 -> 1 RNN, T=20", nn.RNN(1, 1), torch.randn(20, 1, 1), None, "weight_hh_l0[0,0]"),
        ("3 -> 4 RNN, T=50", nn.RNN(3, 4), torch.randn(50, 1, 3), ["weight_hh_l0"], "weight_hh_l0[1,2]"),
    ]
    print(f"{CHANGES} slider changes per case after {WARM_UP} warm-up changes; times in ms, kernel side")
    print(f"{'case':18} {'explorer median':>16} {'p95':>6} {'naive median':>13} {'p95':>6} {'speed-up':>9}")
    ok = True
    for label, module, input, controls, name in cases:
        fast = summary(time_explorer(explore(module, input, controls=controls), name))
        naive = summary(time_naive(explore(module, input, controls=controls), name))
        speedup = naive[0] / fast[0]
        ok &= fast[0] <= FLOOR_MS and speedup >= FLOOR_SPEEDUP
        print(f"{label:18} {fast[0]:16.1f} {fast[1]:6.1f} {naive[0]:13.1f} {naive[1]:6.1f} {speedup:8.1f}x")
    print(
        f"floor: median <= {FLOOR_MS:.0f} ms and >= {FLOOR_SPEEDUP:.0f}x the naive redraw: {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
