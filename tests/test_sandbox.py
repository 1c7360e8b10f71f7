"""helpers.sandbox: one time limit that a bare except cannot outlive, capped output, side effects found and undone."""

import sys
import threading
import time

import pytest
import torch
from torch import nn

from helpers import sandbox
from helpers.sandbox import OUTPUT_LINES, Sandbox, TooSlow


def endless_bare_except(x):
    while True:
        try:
            x = x + 1
        except:  # noqa: E722 - what the student wrote
            pass


def endless_continue(x):
    while True:
        try:
            time.sleep(0.001)
        except BaseException:
            continue


def endless_nested(x):
    def inner():
        while True:
            try:
                pass
            except:  # noqa: E722
                pass

    while True:
        try:
            inner()
        except:  # noqa: E722
            x = 0  # noqa: F841


def endless_retry(x):
    while True:
        try:
            while True:
                x = x + 1
        except:  # noqa: E722
            try:
                x = 0
            except:  # noqa: E722
                pass


def endless_recursion(x):
    try:
        endless_recursion(x)
    except:  # noqa: E722
        endless_recursion(x)


def endless_recursion_in_a_loop(x):
    while True:
        try:
            endless_recursion_in_a_loop(x)
        except:  # noqa: E722
            pass


ENDLESS = [endless_bare_except, endless_continue, endless_nested, endless_retry]
RECURSIVE = [endless_recursion, endless_recursion_in_a_loop]


@pytest.mark.parametrize("fn", ENDLESS, ids=[f.__name__ for f in ENDLESS])
def test_an_endless_loop_that_swallows_every_exception_is_still_stopped(fn):
    """A loop inside `except:` catches the first stop; the next line it runs is stopped again, until it gives up."""
    check = Sandbox(limit=0.3)
    start = time.monotonic()
    outcome = check.run(fn, (torch.tensor(1.0),))
    assert isinstance(outcome.error, TooSlow)
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("fn", ENDLESS, ids=[f.__name__ for f in ENDLESS])
def test_outside_the_main_thread_tracing_stops_them_too(fn):
    """Without a timer signal (another thread), tracing stops the same loops."""
    found = []
    worker = threading.Thread(target=lambda: found.append(Sandbox(limit=0.3).run(fn, (torch.tensor(1.0),))))
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive() and isinstance(found[0].error, TooSlow)


@pytest.mark.parametrize("fn", RECURSIVE, ids=[f.__name__ for f in RECURSIVE])
def test_a_recursion_that_swallows_every_stop_at_every_level_is_stopped(fn):
    """It runs at Python's recursion limit, where no watch could be called: the limit is lowered while it runs."""
    limit, profile = sys.getrecursionlimit(), sys.getprofile()
    start = time.monotonic()
    outcome = Sandbox(limit=0.3).run(fn, (torch.tensor(1.0),))
    assert isinstance(outcome.error, TooSlow)
    assert time.monotonic() - start < 5.0
    assert (sys.getrecursionlimit(), sys.getprofile(), sys.gettrace()) == (limit, profile, None)


def test_a_deep_but_finite_recursion_runs_within_the_lowered_limit():
    """The student's code may still go nearly as deep as Python allows: all but sandbox.HEADROOM frames."""

    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    deep = sys.getrecursionlimit() - 3 * sandbox.HEADROOM
    assert Sandbox().run(depth, (deep,)).value == deep


def test_one_limit_covers_every_run_of_a_check():
    """Four runs of 0.2 s under a limit of 0.5 s: the third is stopped, the fourth not run; the message says 'in all'."""
    check = Sandbox(limit=0.5)

    def slow(x):
        time.sleep(0.2)
        return x

    start = time.monotonic()
    outcomes = [check.run(slow, (1,)) for _ in range(4)]
    assert time.monotonic() - start < 1.0
    assert [o.error is None for o in outcomes] == [True, True, False, False]
    assert isinstance(outcomes[2].error, TooSlow) and isinstance(outcomes[3].error, TooSlow)
    assert "0.5 seconds in all, over its 3 runs" in sandbox.too_slow(outcomes[2], check)


def test_what_the_first_run_prints_is_capped(capsys):
    """A function printing 10,000 lines shows OUTPUT_LINES of them and one line saying how many were held back."""

    def chatty(x):
        for i in range(10_000):
            print("step", i)
        return x

    assert Sandbox().run(chatty, (1,)).value == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == OUTPUT_LINES + 1 and lines[0] == "step 0"
    assert lines[-1].startswith("… and 9960 more lines, not shown")


def test_a_quiet_run_prints_nothing(capsys):
    """The probes after the first print nothing at all."""
    Sandbox().run(lambda x: print("hello") or x, (1,), quiet=True)
    assert capsys.readouterr().out == ""


def test_changes_to_arguments_are_found_and_the_originals_kept():
    """`lengths -= 1`, a write into the caller's hx, a sorted list: each named, with what changed, on copies only."""

    def vandal(lengths, hx, order):
        lengths -= 1
        hx[0][1, 2] = 5.0
        order.sort()
        return lengths

    lengths, hx, order = torch.tensor([3, 2]), (torch.zeros(2, 3), torch.zeros(2, 3)), [2, 1]
    outcome = Sandbox().run(vandal, (lengths, hx, order))
    assert torch.equal(lengths, torch.tensor([3, 2])) and hx[0].abs().sum() == 0 and order == [2, 1]
    changed = " | ".join(outcome.changed)
    assert "argument `lengths` (lengths[0] was 3, now 2)" in changed
    assert "argument `hx[0]` (hx[0][1, 2] was 0, now 5)" in changed
    assert "argument `order` (a list: was [2, 1], now [1, 2])" in changed


def test_a_layer_changed_in_place_is_named():
    """A parameter changed under no_grad (which autograd would have refused) is reported by name."""

    def vandal(module, x):
        with torch.no_grad():
            module.weight_hh_l0.mul_(2)
        return x

    module = nn.RNN(2, 3)
    before = module.weight_hh_l0.detach().clone()
    outcome = Sandbox().run(vandal, (module, torch.zeros(1)))
    assert torch.equal(module.weight_hh_l0, before)
    assert outcome.changed and "the layer's parameter weight_hh_l0" in outcome.changed[0]


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda: torch.set_grad_enabled(False), "it leaves autograd off"),
        (lambda: torch.set_default_dtype(torch.float64), "default dtype from torch.float32 to torch.float64"),
        (
            lambda: torch.set_num_threads(max(1, torch.get_num_threads() - 1) if torch.get_num_threads() > 1 else 2),
            "threads",
        ),
        (lambda: torch.manual_seed(5), "random generator"),
        (lambda: torch.randn(3), "random generator"),
    ],
    ids=["grad mode", "default dtype", "threads", "reseeded", "a draw"],
)
def test_torch_settings_left_changed_are_put_back_and_named(change, words):
    """Grad mode, default dtype, threads and the random state are as they were after the run, and the change is said."""
    before = (torch.is_grad_enabled(), torch.get_default_dtype(), torch.get_num_threads(), torch.get_rng_state())

    def fn(x):
        change()
        return x

    outcome = Sandbox().run(fn, (1,))
    after = (torch.is_grad_enabled(), torch.get_default_dtype(), torch.get_num_threads(), torch.get_rng_state())
    assert before[:3] == after[:3] and torch.equal(before[3], after[3])
    assert len(outcome.changed) == 1 and words in outcome.changed[0], outcome.changed


def test_a_run_under_a_chosen_grad_mode_leaves_the_callers():
    """grad=True runs with autograd on inside a no_grad block, and the block's mode is back after."""
    seen = []
    with torch.no_grad():
        Sandbox().run(lambda: seen.append(torch.is_grad_enabled()), (), grad=True)
        assert not torch.is_grad_enabled()
    assert seen == [True]


def test_copies_keep_a_leaf_a_leaf():
    """A tensor that requires grad is copied as a new leaf that requires grad, not as a view into the student's graph."""
    x = torch.ones(2, requires_grad=True)
    y = sandbox.copied(x)
    assert y.is_leaf and y.requires_grad and y is not x


def test_what_goes_to_stderr_is_capped_too(capsys):
    """print(..., file=sys.stderr) counts against the same cap, and a quiet run shows none of it."""
    import sys

    def noisy(x):
        for i in range(3000):
            print("warning", i, file=sys.stderr)
        return x

    Sandbox().run(noisy, (1,))
    Sandbox().run(noisy, (1,), quiet=True)
    captured = capsys.readouterr()
    assert captured.err.count("warning") == 0 and captured.out.count("warning") == OUTPUT_LINES


def test_a_packed_sequence_is_copied_whole():
    """Its batch sizes and indices are copies too: a function that writes into them leaves the caller's alone."""
    from torch.nn.utils.rnn import pack_padded_sequence

    packed = pack_padded_sequence(torch.randn(4, 3, 2), torch.tensor([2, 4, 3]), enforce_sorted=False)
    sizes = packed.batch_sizes.clone()

    def vandal(p):
        p.batch_sizes -= 1
        return p

    outcome = Sandbox().run(vandal, (packed,))
    assert torch.equal(packed.batch_sizes, sizes) and "`p.batch_sizes`" in outcome.changed[0]


def test_one_thread_runs_a_check_on_one_thread_and_puts_the_callers_count_back():
    """The checks' tiny layers run on one torch thread; the caller's number of threads is back after, error or not."""
    from helpers.sandbox import one_thread

    caller = torch.get_num_threads()
    with one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == caller
    with pytest.raises(ZeroDivisionError), one_thread():
        raise ZeroDivisionError
    assert torch.get_num_threads() == caller
