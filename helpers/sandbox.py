"""Run a student's function for a check: one time limit, capped output, and nothing of theirs left behind.

A `Sandbox` is one check. Every `run(fn, args)` inside it shares one clock of TIME_LIMIT
seconds; a run past it is stopped, and stopped again at every line of the student's code until
that code gives up, so a bare `except:` around an endless loop cannot keep the cell busy. Each
run gets copies of its arguments. What the first run prints is shown up to OUTPUT_LINES lines;
later runs print nothing. Whatever a run changes that it should leave alone (its arguments, a
layer's parameters and buffers, torch's grad mode, default dtype, random state or number of
threads) is put back and listed, in words, in `Outcome.changed`. Used by helpers.diagnosis (a
whole layer) and helpers.exercises (a single step).
"""

import contextlib
import copy
import dis
import functools
import inspect
import io
import linecache
import re
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence

from helpers._validate import _package

TIME_LIMIT = 10.0  # seconds that all the runs of one check may take together
REPEAT = 0.05  # once the time is up, seconds between further stops
HEADROOM = 100  # frames of the recursion limit kept back from the student's code until the time is up
OUTPUT_LINES, OUTPUT_CHARACTERS = 40, 4000  # what a student's function may print into the check's output
NOTE = "note: "  # a change worth saying that does not make the function wrong (it starts such a sentence)


class TooSlow(BaseException):
    """Raised inside a student's function once the check's time is up.

    A BaseException, so that `except Exception` lets it through. A bare `except:` that swallows it
    drops the last reference to it, and then it switches the watch on that code back on (a trace
    function that raises is switched off by Python), so the next line stops it again.
    """

    def __init__(self, limit=None):
        super().__init__()
        self.limit = limit

    def __del__(self):
        if self.limit is not None and self.limit.active:
            self.limit.watch(sys._getframe(1))


@dataclass(frozen=True)
class Outcome:
    """What one run returned, or the error it raised, and what it changed that it should not have."""

    value: object = None
    error: BaseException | None = None
    where: str = ""  # the student's line that raised, "line 6, in my_rnn: h = ..."
    changed: tuple[str, ...] = ()  # side effects, each in a sentence: "it changes its argument `x` in place ..."
    arguments: tuple = field(default=(), compare=False, repr=False)  # the copies the function was given
    seconds: float = 0.0  # how long the run took


class Sandbox:
    """One check's runs of a student's function, sharing one time limit of `limit` seconds."""

    def __init__(self, limit=None):
        self.limit = TIME_LIMIT if limit is None else limit
        self.used = 0.0  # seconds the runs have taken so far
        self.runs = 0

    def run(self, fn, args, *, quiet=False, grad=None):
        """fn(*copies of args) as an Outcome.

        `quiet` hides what fn prints (else up to OUTPUT_LINES lines are shown); `grad` runs it with
        autograd on (True) or off (False), as the caller's mode is otherwise.
        """
        left = self.limit - self.used
        if left <= 0:
            return Outcome(error=TooSlow(), where="")
        names = argument_names(fn, len(args))
        working = tuple(copied(a) for a in args)
        caller_grad = torch.is_grad_enabled()
        torch.set_grad_enabled(caller_grad if grad is None else grad)
        before = _torch_state()
        self.runs += 1
        value, error, where = None, None, ""
        output, limit = _Output(quiet), _TimeLimit(left)
        output.start()
        limit.start()
        try:
            value = fn(*working)
        except BaseException as raised_error:
            error = raised_error
        limit.active = False
        limit.stop()
        output.stop()
        self.used += limit.seconds()
        changed = _restore(before)
        torch.set_grad_enabled(caller_grad)
        if isinstance(error, KeyboardInterrupt):  # the student's stop button stops the check too
            raise error
        if error is not None:
            where = student_line(error)
        changed += _changed_arguments(args, working, names)
        if isinstance(error, TooSlow):  # stopped halfway, it may have left anything half done: put back, not reported
            changed = []
        return Outcome(value, error, where, tuple(changed), working, limit.seconds())


@contextlib.contextmanager
def one_thread():
    """torch on one thread while a check runs, the caller's number of threads put back after.

    A check runs tiny layers hundreds of times. On a machine whose cores are busy (a hub's, or two
    notebooks at once), a second torch thread waiting for its turn makes each tiny call many times
    slower, and it gains nothing on tensors this small; the results are the same.
    """
    caller = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(caller)


def call(fn, args, quiet=False):
    """fn(*copies of args) as an Outcome, with a time limit of its own."""
    return Sandbox().run(fn, args, quiet=quiet)


def copied(value):
    """A copy of a tensor, a PackedSequence, a layer or a tuple of them, so that the student's code cannot change the original."""
    if isinstance(value, Tensor):
        copy_ = value.detach().clone()
        return copy_.requires_grad_() if value.requires_grad and copy_.is_floating_point() else copy_
    if isinstance(value, PackedSequence):
        return PackedSequence(*(None if part is None else part.clone() for part in value))
    if isinstance(value, nn.Module):
        return copy.deepcopy(value)
    if isinstance(value, (tuple, list)):
        return type(value)(copied(v) for v in value)
    return value


def argument_names(fn, count):
    """The names the student's function gives its first `count` parameters ("argument 3" where it has none)."""
    try:
        parameters = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        parameters = []
    return [parameters[i] if i < len(parameters) else f"argument {i + 1}" for i in range(count)]


# The time limit. On the main thread a timer signal raises TooSlow when the time is up, and again
# every REPEAT seconds; elsewhere a trace function watches the clock. Once the time is up, the trace
# function raises TooSlow again at every line where no handler of that frame would catch it, and
# anywhere once every REPEAT seconds, so a bare `except:` around an endless loop is stopped too.


class _TimeLimit:
    """Stop the code that runs between start() and stop() once `seconds` have passed, and keep stopping it until it returns."""

    def __init__(self, seconds):
        self.limit = seconds
        self.active = False
        self.last_stop = -float("inf")
        self.timer = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def start(self):
        self.previous_trace, self.previous_profile = sys.gettrace(), sys.getprofile()
        # The student's code runs HEADROOM frames below Python's recursion limit, and gets them back
        # when the time is up: a recursion that swallows every stop reaches the limit, where the
        # watch (a Python function, a frame too) could not be called.
        self.recursion_limit = sys.getrecursionlimit()
        self.lowered = _depth() + 2 * HEADROOM < self.recursion_limit
        if self.lowered:
            sys.setrecursionlimit(self.recursion_limit - HEADROOM)
        self.watchdog = threading.Timer(self.limit, self._time_up, (threading.get_ident(),))
        self.lock = threading.Lock()
        self.watchdog.daemon = True
        if self.timer:
            self.previous_handler = signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, self.limit, REPEAT)
        else:
            sys.settrace(self._trace)
        self.began = time.monotonic()
        self.deadline = self.began + self.limit
        self.active = True
        self.watchdog.start()

    def stop(self):
        self.ended = time.monotonic()
        with self.lock:  # no stop signal after this (the caller's own SIGALRM handler comes back below)
            self.active = False
            self.watchdog.cancel()
        sys.setprofile(self.previous_profile)
        if self.timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous_handler)
        sys.settrace(self.previous_trace)
        if self.lowered:
            sys.setrecursionlimit(self.recursion_limit)

    def _time_up(self, thread):
        """In a thread of its own when the time is up: the headroom back, then a stop signal at once (main thread)."""
        with self.lock:
            if self.active and self.lowered:
                sys.setrecursionlimit(self.recursion_limit)
                if self.timer:
                    signal.pthread_kill(thread, signal.SIGALRM)

    def seconds(self):
        return self.ended - self.began

    def watch(self, frame):
        """Trace the student's frames from `frame` outwards, and every frame they start."""
        sys.settrace(self._trace)
        sys.setprofile(self._profile)
        while frame is not None and not _ours(frame):
            frame.f_trace, frame.f_trace_lines = self._trace, True
            frame = frame.f_back

    def _alarm(self, signum, frame):
        if not self.active or _ours(frame):
            return
        self.watch(frame)
        self.last_stop = time.monotonic()
        raise TooSlow(self)

    def _trace(self, frame, event, arg):
        if not self.active or _ours(frame):
            return None
        now = time.monotonic()
        if now <= self.deadline:
            return self._trace
        # Once the time is up no new frame may start (a recursion cannot go down again), and a line
        # stops where its own try would not catch the stop (anywhere, every REPEAT seconds).
        if event == "call" or (event == "line" and (now - self.last_stop > REPEAT or not _caught_here(frame))):
            self.last_stop = now
            sys.setprofile(self._profile)
            raise TooSlow(self)
        return self._trace

    def _profile(self, frame, event, arg):
        """Once the time is up: as a frame of the student's code ends, watch again the frames it returns to.

        Python switches off a trace function that raises. A profile function stays on and sees every
        frame end, also by an exception; so a recursion that swallows the stop at every level is
        watched at every level as the stop unwinds it.
        """
        if self.active and event == "return" and frame.f_back is not None and not _ours(frame.f_back):
            self.watch(frame.f_back)


def _depth():
    """How many frames the calling code runs in."""
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _caught_here(frame):
    """True when an exception raised at the frame's present instruction would go to a handler of its own try block."""
    offset = frame.f_lasti
    return any(start <= offset < end for start, end in _try_blocks(frame.f_code))


@functools.lru_cache(maxsize=256)
def _try_blocks(code):
    """The (start, end) offsets of a code object's try blocks: ranges whose handler may catch (not a clean-up's)."""
    try:
        return tuple((e.start, e.end) for e in dis._parse_exception_table(code) if not e.lasti)
    except AttributeError:  # before Python 3.11: none known, so a stop is raised anywhere
        return ()


def _ours(frame):
    return frame.f_code.co_filename == __file__


class _Output:
    """Between start() and stop(): show at most OUTPUT_LINES lines (OUTPUT_CHARACTERS characters) of what is printed; none if quiet."""

    def __init__(self, quiet):
        self.quiet = quiet

    def start(self):
        self.real, self.real_error = sys.stdout, sys.stderr
        self.capped = _Capped(None if self.quiet else self.real)
        sys.stdout = sys.stderr = self.capped  # print(..., file=sys.stderr) and warnings count too

    def stop(self):
        sys.stdout, sys.stderr = self.real, self.real_error
        if self.capped.holding:
            lines = max(1, self.capped.hidden)
            print(
                f"… and {lines} more line{'s' * (lines > 1)}, not shown: the check shows what your function prints "
                f"up to {OUTPUT_LINES} lines or {OUTPUT_CHARACTERS} characters."
            )


class _Capped(io.TextIOBase):
    """A stream that passes text on to `target` up to the caps, and counts what it holds back."""

    def __init__(self, target):
        self.target = target
        self.lines, self.characters, self.hidden = 0, 0, 0
        self.holding = False  # past a cap: nothing more is shown

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if self.target is None:
            return len(text)
        shown = ""
        for piece in text.splitlines(keepends=True):
            if self.holding or self.lines >= OUTPUT_LINES or self.characters + len(piece) > OUTPUT_CHARACTERS:
                self.holding = True
                self.hidden += text[len(shown) :].count("\n")  # lines held back
                break
            shown += piece
            self.characters += len(piece)
            self.lines += piece.endswith("\n")
        if shown:
            self.target.write(shown)
        return len(text)


# What a run changed that it should have left alone.


def _torch_state():
    """torch's global settings that a student's function might change."""
    return {
        "grad": torch.is_grad_enabled(),
        "dtype": torch.get_default_dtype(),
        "threads": torch.get_num_threads(),
        "random": torch.get_rng_state(),
    }


def _restore(before):
    """Put torch's settings back as `before` held them; return what had changed, in sentences."""
    now = _torch_state()
    changed = []
    if now["grad"] != before["grad"]:
        torch.set_grad_enabled(before["grad"])
        changed.append(
            f"it leaves autograd {'off' if before['grad'] else 'on'}, where it was {'on' if before['grad'] else 'off'} "
            f"(torch.set_grad_enabled({now['grad']}), or a torch.no_grad() entered and never left): every cell "
            "after it would run that way; use `with torch.no_grad():`, which puts the mode back"
        )
    if now["dtype"] != before["dtype"]:
        torch.set_default_dtype(before["dtype"])
        changed.append(
            f"it changes torch's default dtype from {before['dtype']} to {now['dtype']} (torch.set_default_dtype) "
            "and leaves it so: every tensor made after it would change; give a dtype to the tensors that need one"
        )
    if now["threads"] != before["threads"]:
        torch.set_num_threads(before["threads"])
        changed.append(
            f"it changes torch's number of threads (torch.set_num_threads({now['threads']})) and leaves it so"
        )
    if not torch.equal(now["random"], before["random"]):
        torch.set_rng_state(before["random"])
        changed.append(
            f"{NOTE}it draws from (or reseeds) torch's random generator: torch.manual_seed, torch.randn, or a "
            "layer built inside the function (its initial weights are drawn). The check puts the generator "
            "back; in the notebook, the next random numbers would differ"
        )
    return changed


def _changed_arguments(originals, working, names):
    """What a run changed in the arguments it was given (its copies, compared with the originals), in sentences."""
    changed = []
    for name, original, mine in zip(names, originals, working):
        if isinstance(original, nn.Module) and isinstance(mine, nn.Module):
            theirs, ours = original.state_dict(keep_vars=True), mine.state_dict(keep_vars=True)
            for key, tensor in theirs.items():
                difference = _difference(f"{key}", tensor, ours.get(key))
                if difference:
                    kind = "parameter" if key in dict(original.named_parameters()) else "buffer"
                    changed.append(
                        f"it changes the layer's {kind} {difference} in place (with .t_(), .data, +=, or under "
                        "torch.no_grad()): the layer itself would change for every later call; read the weights, "
                        "never write to them"
                    )
                    break
            continue
        for part, a, b in _parts(name, original, mine):
            difference = _difference(part, a, b)
            if difference:
                changed.append(
                    f"it changes its argument {difference} in place: the caller's tensor would change; make new "
                    "tensors instead (x = x - 1, not x -= 1; h = h_prev.clone() before writing into it)"
                )
    return changed


def _parts(name, original, mine):
    """(name, original tensor, the run's copy) for each tensor in an argument: a tensor, a PackedSequence, a tuple."""
    if isinstance(original, Tensor):
        return [(f"`{name}`", original, mine)]
    if isinstance(original, PackedSequence) and isinstance(mine, PackedSequence):
        fields = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        return [(f"`{name}.{f}`", a, b) for f, a, b in zip(fields, original, mine) if a is not None]
    if isinstance(original, list) and not any(isinstance(v, (Tensor, tuple, list)) for v in original):
        return [] if original == mine else [(f"`{name}`", original, mine)]  # a list of numbers sorted or changed
    if isinstance(original, (tuple, list)) and isinstance(mine, (tuple, list)) and len(original) == len(mine):
        return [p for i, (a, b) in enumerate(zip(original, mine)) for p in _parts(f"{name}[{i}]", a, b)]
    return []


def _difference(name, original, mine):
    """'`x` (x[0, 1] was 2.0000, now 1.0000)' when a tensor changed; '' when it did not."""
    if isinstance(original, list):
        return f"{name} (a list: was {original!r:.60}, now {mine!r:.60})"
    if not isinstance(mine, Tensor):
        return f"{name} (replaced by {type(mine).__name__})"
    if mine.shape != original.shape:
        return f"{name} (shape {tuple(original.shape)} became {tuple(mine.shape)})"
    if mine.dtype != original.dtype:
        return f"{name} (dtype {original.dtype} became {mine.dtype})"
    a, b = original.detach(), mine.detach()
    same = (a == b) | (a.isnan() & b.isnan()) if a.is_floating_point() else a == b
    if bool(same.all()):
        return ""
    index = tuple((~same).nonzero()[0].tolist())
    plain = name.strip("`")
    where = f"{plain}[{', '.join(map(str, index))}]" if index else plain
    return f"{name} ({where} was {a[index].item():.8g}, now {b[index].item():.8g})"


def changes(outcomes):
    """(problems, notes): what the runs changed, each said once (the same change on every probe is one).

    Notes (a random draw) do not make a function wrong; problems do.
    """
    seen, problems, notes = set(), [], []
    for outcome in outcomes:
        for sentence in outcome.changed:
            key = re.sub(r" \([^()]*\bwas\b[^()]*\)", "", sentence)  # without the values it changed
            if key in seen:
                continue
            seen.add(key)
            (notes if sentence.startswith(NOTE) else problems).append(sentence)
    return problems, notes


# What to tell the student about a run.


def student_line(error):
    """'line 6, in my_rnn: h = x @ W' for the innermost frame of the student's own code ('' when none)."""
    frames = [
        f
        for f in traceback.walk_tb(error.__traceback__)
        if _package(f[0]) not in ("helpers", "torch", "contextlib") and not _ours(f[0])
    ]
    if not frames:
        return ""
    frame, lineno = frames[-1]
    source = linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals).strip()
    return f"line {lineno}, in {frame.f_code.co_name}" + (f": {source}" if source else "")


def too_slow(outcome, sandbox=None):
    """The message for a run stopped at the check's time limit."""
    limit = TIME_LIMIT if sandbox is None else sandbox.limit
    where = f" It was at {outcome.where}." if outcome.where else ""
    runs = "" if sandbox is None or sandbox.runs <= 1 else f", over its {sandbox.runs} runs"
    return (
        f"stopped: the check gives your function {limit:g} seconds in all{runs}, and it ran out.{where} "
        "A loop that never ends? Each loop should run once per time step, layer or direction."
    )


def raised(outcome):
    """'RuntimeError at line 6, in my_rnn: h = ...\\n  mat1 and mat2 shapes cannot be multiplied (3x2 and 4x2)'."""
    where = f" at {outcome.where}" if outcome.where else ""
    return f"raised {type(outcome.error).__name__}{where}\n  {outcome.error}"


__all__ = ["OUTPUT_LINES", "TIME_LIMIT", "Outcome", "Sandbox", "TooSlow", "call", "copied"]
