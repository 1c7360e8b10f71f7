"""Check a student's own recurrent layer against torch, and say where and why it departs.

`diagnose(fn, module, input, hx)` runs `fn(module, input, hx)`, a student's re-implementation
of `module(input, hx)`: once on the given input as the student's own cell would (autograd on),
comparing values, dtype and gradients with torch's; then on probes it designs: copies of the
layer with all but one term zeroed, or (LSTM, GRU) all but one gate held open or shut
(helpers.gates), a nonzero initial state, a single step, another input, each layer alone, and
larger seeded random layers (hidden_size >= 3 and unlike input_size, a batch of
3 or more, 4 steps or more, 3 layers where layers matter). It prints ✓, or the first place the
result departs (output, h_n or c_n; layer, direction, time step, batch item and unit) and the
catalogued bug (helpers.bugs) whose result equals the student's on every probe, with its fix;
and whatever the function changed that it should have left alone (helpers.sandbox). It never
raises: an error inside `fn` is shown at the student's own line, and all its runs together get
one time limit. The student's module, input and torch's settings are left as they were.
Introduced in notebooks/02_feature_vectors.ipynb.
"""

import copy
import dis
import inspect
import re
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from helpers import bugs, error_hints, gates, layer_parts, wiring_slips
from helpers._validate import check_input, check_module, check_packed, check_states
from helpers.checks import Verdict
from helpers.sandbox import Outcome, Sandbox, TooSlow, changes, copied, one_thread, raised, too_slow
from helpers.shape_slips import shape_slip

ATOL, RTOL = 1e-5, 1e-4  # a student's float32 arithmetic may round differently from torch's
GRAD_ATOL, GRAD_RTOL = 1e-4, 1e-3  # gradients sum over every step: more room for rounding
RANDOM_PROBES = 2  # seeded random layers beyond the fixed probes


class Diagnosis(Verdict):
    """What diagnose found: true when the student's function is right. The fields hold the facts printed."""

    def __init__(self, ok, line, status, **facts):
        super().__init__(ok, line)
        self.status = status  # "right", "not written", "wrong", "side effect", "raised", "too slow", "cannot check"
        self.probe = facts.get("probe")  # the input on which it departs ("your input" or a probe's description)
        self.part = facts.get("part")  # "output", "h_n" or "c_n"
        self.index = facts.get("index")  # the first departing entry of that part, as a tuple
        self.layer = facts.get("layer")
        self.direction = facts.get("direction")  # 0 forward, 1 backward
        self.t = facts.get("t")  # time step, counted from 0 (None for h_n and c_n)
        self.batch = facts.get("batch")
        self.unit = facts.get("unit")
        self.got = facts.get("got")  # the student's value there
        self.expected = facts.get("expected")  # torch's value there
        self.bug = facts.get("bug")  # the catalogued helpers.bugs.Bug that explains it, or None
        self.error = facts.get("error")  # the student's exception, "Type: message", or None
        self.changed = facts.get("changed", [])  # what the function changed that it should have left alone


def diagnose(fn, module, input, hx=None, *, name=None):
    """Print whether `fn(module, input, hx)` equals `module(input, hx)`, where it departs and why; return a Diagnosis."""
    try:
        name = name or str(getattr(fn, "__name__", "your function"))
    except Exception:  # a callable whose __name__ raises
        name = "your function"
    try:
        with one_thread():
            return _print(_diagnose(fn, module, input, hx, name))
    except Exception as error:  # diagnose must never raise at the student
        line = f"✗ {name}: could not be checked ({type(error).__name__}: {error})."
        return _print(Diagnosis(False, line, "cannot check"))


def _print(diagnosis):
    print(diagnosis.line)
    return diagnosis


@dataclass(frozen=True)
class Probe:
    """An input to run both the student's function and torch on."""

    description: str  # "your input", or what this probe changes
    module: nn.Module
    input: object
    hx: object = None
    layer: int | None = None  # a probe of one layer alone: which layer of the student's module


def _diagnose(fn, module, input, hx, name):
    problem = _argument_problem(fn, module, input, hx, name)
    if problem:
        return Diagnosis(False, f"✗ {name}: cannot check: {problem}", "cannot check")
    sandbox = Sandbox()
    with torch.random.fork_rng(devices=[]):
        with torch.no_grad():
            probes = _probes(module, input, hx)
        first = sandbox.run(fn, (module, needing_grad(input), needing_grad(hx)), grad=True)  # as a cell runs it
        if first.error is None and first.value is None:
            returns = "(output, (h_n, c_n))" if module.mode == "LSTM" else "(output, h_n)"
            who = "it" if name == getattr(fn, "__name__", None) else getattr(fn, "__name__", "your function")
            line = f"… {name}: not written yet ({who} returns None). Write it, return {returns} as the layer does, and run the cell again."
            return Diagnosis(False, line, "not written")
        if isinstance(first.error, TooSlow):
            return Diagnosis(False, f"✗ {name}: {too_slow(first, sandbox)}", "too slow", probe="your input")
        outcomes = [first]
        larger_at = next(i for i, p in enumerate(probes) if p.description.startswith("a larger layer"))
        with torch.no_grad():
            for i, p in enumerate(probes[1:], 1):
                if i == larger_at:  # with autograd on too: its gradients over 4 steps are compared
                    p_input, p_hx = needing_grad(p.input), needing_grad(p.hx)
                    outcomes.append(sandbox.run(fn, (p.module, p_input, p_hx), quiet=True, grad=True))
                else:
                    outcomes.append(sandbox.run(fn, (p.module, p.input, p.hx), quiet=True))
            expected = [p.module(p.input, p.hx) for p in probes]
        larger = outcomes[larger_at]
        findings = [_departure(o, e, p, sandbox) for o, e, p in zip(outcomes, expected, probes)]
        failing = [i for i, f in enumerate(findings) if f is not None]
        changed, notes = changes(outcomes)
        if not failing:
            gradients = _gradient_problem(first, probes[0]) or _gradient_problem(larger, probes[larger_at])
            notes = [f"  {n}." for n in notes]
            if gradients is None and not changed:
                kind = {"RNN_TANH": "nn.RNN", "RNN_RELU": "nn.RNN", "LSTM": "nn.LSTM", "GRU": "nn.GRU"}[module.mode]
                labels = ", ".join(_label(p) for p in probes[1:])
                line = f"✓ {name} matches {kind} on your input (values, dtype and gradients) and on {len(probes) - 1} probes ({labels})."
                return Diagnosis(True, "\n".join([line, *notes]), "right")
            lines = [f"✗ {name}: not yet. Its values match torch's on every probe, but:"]
            lines += ([f"  {gradients}"] if gradients else []) + [f"  {c}." for c in changed] + notes
            status = "wrong" if gradients else "side effect"
            return Diagnosis(False, "\n".join(lines), status, probe="your input", changed=changed)
        bug, matched, others = _likely_bug(outcomes, probes, failing[0])
        if matched < len(probes):
            rewired = _wiring_slips(outcomes, probes, failing)
            if rewired:
                bug, matched, others = rewired[0], len(probes), rewired[1:]
        at = failing[0]
        moved = _rearranged(outcomes[at], expected[at], probes[at]) or _imprecise(
            outcomes[at], expected[at], probes[at]
        )
        return _report(name, fn, probes, outcomes, findings, failing, (bug, matched, others), changed + notes, moved)


def _gradient_problem(outcome, probe):
    """What is wrong with the gradients through the student's result on their own input, in words; None when right.

    Both results are reduced to one number by the same seeded random weights (a stand-in loss), and
    the gradient with respect to every parameter is compared, as training would see it.
    """
    mine_module = outcome.arguments[0]
    names = [n for n, p in mine_module.named_parameters() if p.requires_grad]
    if not names:
        return None
    theirs_module = copy.deepcopy(probe.module)
    theirs_input, theirs_hx = needing_grad(probe.input), needing_grad(probe.hx)
    with torch.enable_grad():
        theirs = _result_parts(theirs_module(theirs_input, theirs_hx), probe)
    mine = _result_parts(outcome.value, probe)
    if not any(part.requires_grad for part in mine):
        return (
            "its result carries no gradient (requires_grad is False): it was computed from .data, .detach(), "
            ".item(), .numpy(), torch.tensor(...) of values, or inside torch.no_grad(), so training could not "
            "learn through it. Compute it with torch operations on the layer's own parameters."
        )
    mine_params = [dict(mine_module.named_parameters())[n] for n in names]
    theirs_params = [dict(theirs_module.named_parameters())[n] for n in names]
    for label, mine_leaf, theirs_leaf in (
        ("input", outcome.arguments[1], theirs_input),
        ("h_0", _first(outcome.arguments[2]), _first(theirs_hx)),
        ("c_0", _second(outcome.arguments[2]), _second(theirs_hx)),
    ):  # the gradient that reaches the layer below, and an encoder's state
        if isinstance(theirs_leaf, Tensor) and theirs_leaf.requires_grad and isinstance(mine_leaf, Tensor):
            names, mine_params, theirs_params = (
                [*names, label],
                [*mine_params, mine_leaf],
                [*theirs_params, theirs_leaf],
            )
    try:
        mine_grads = torch.autograd.grad(_stand_in_loss(mine), mine_params, allow_unused=True)
    except RuntimeError as error:
        return (
            f"computing gradients through its result raised RuntimeError: {str(error).splitlines()[0]} "
            "Something autograd still needs was changed in place (h += ..., h[...] = ..., .add_()): "
            "write h = h + ... and collect the steps in a list, then torch.stack them."
        )
    theirs_grads = torch.autograd.grad(_stand_in_loss(theirs), theirs_params, allow_unused=True)
    theirs_grads = [torch.zeros_like(p) if g is None else g for p, g in zip(theirs_params, theirs_grads)]
    for name, mine_grad, theirs_grad in zip(names, mine_grads, theirs_grads):
        mine_grad = torch.zeros_like(theirs_grad) if mine_grad is None else mine_grad
        close = torch.isclose(mine_grad.double(), theirs_grad.double(), rtol=GRAD_RTOL, atol=GRAD_ATOL)
        if bool(close.all()):
            continue
        index = tuple((~close).nonzero()[0].tolist())
        found = (
            f"the values are right, the gradients are not: the gradient with respect to "
            f"{name}[{', '.join(map(str, index))}] is {mine_grad[index].item():.4f} through yours, "
            f"{theirs_grad[index].item():.4f} through torch's. Most likely"
        )
        if name in ("input", "h_0", "c_0"):
            return (
                f"{found} {name} is detached (.detach(), .data, or a copy made from its values), so no gradient "
                f"reaches what made it: an embedding below the layer, or the encoder that gave h_0, would not learn."
            )
        detached = any(
            other is not None
            and all(
                torch.allclose(m if m is not None else torch.zeros_like(d), d, rtol=GRAD_RTOL, atol=GRAD_ATOL)
                for m, d in zip(mine_grads, other)
            )
            for other in (_detached_gradients(probe, names, bug) for bug in bugs.GRADIENT_BUGS)
        )
        cause = (
            "the state is detached between steps (h.detach(), h.data, or a new tensor made from its values): "
            "the gradient stops at each step instead of flowing back through time. Carry h itself from step to step."
            if detached
            else "something cuts or bends the path from the parameters to the result: a .detach() or .data, a value "
            "rebuilt with torch.tensor(...) or .item(), or an in-place change."
        )
        return f"{found} {cause} Values alone cannot show this; training would."
    return None


def needing_grad(value):
    """A float tensor (or a tuple of them) as a new leaf that requires grad; anything else as it is."""
    if isinstance(value, Tensor) and value.is_floating_point():
        return value.detach().clone().requires_grad_()
    if type(value) is tuple:  # (h_0, c_0); a PackedSequence, a tuple too, stays as it is
        return tuple(needing_grad(v) for v in value)
    return value


def _first(hx):
    return hx[0] if isinstance(hx, tuple) else hx


def _second(hx):
    return hx[1] if isinstance(hx, tuple) and len(hx) > 1 else None


def _detached_gradients(probe, names, bug):
    """The gradients of the stand-in loss through the layer with a gradient bug of helpers.bugs (a detached state)."""
    module = copy.deepcopy(probe.module)
    own = dict(module.named_parameters())
    params = [own[n] for n in names if n in own]  # the layer's parameters come first in `names`
    try:
        with torch.enable_grad():
            parts = _result_parts(bugs.run(module, copied(probe.input), copied(probe.hx), bug), probe)
            return torch.autograd.grad(_stand_in_loss(parts), params, allow_unused=True)
    except RuntimeError:
        return None


def _stand_in_loss(parts):
    """One number from a layer's result, as a loss makes one: each part times seeded random weights, summed.

    The same weights for the student's result and torch's, so their gradients must agree; parts that
    carry no gradient add nothing.
    """
    generator = torch.Generator().manual_seed(0)
    weights = [torch.randn(part.shape, generator=generator, dtype=part.dtype) for part in parts]
    return sum((part * w).sum() for part, w in zip(parts, weights) if part.requires_grad)


def gradients(function, args):
    """The gradients of the stand-in loss through function(*args), with respect to each float tensor argument.

    A tuple in the arguments' order (zeros where the result does not depend on one); None when the
    result carries no gradient. Used for step functions (helpers.exercises), whose weights are
    arguments.
    """
    leaves = tuple(needing_grad(a) if isinstance(a, Tensor) else a for a in args)
    with torch.enable_grad():
        return gradients_through(function(*leaves), leaves)


def gradients_through(value, leaves):
    """gradients() for a result `value` already computed from `leaves` (the arguments, float tensors requiring grad)."""
    parts = value if isinstance(value, (tuple, list)) else (value,)
    parts = [p for p in parts if isinstance(p, Tensor) and p.is_floating_point()]
    wrt = [a for a in leaves if isinstance(a, Tensor) and a.requires_grad]
    if not wrt or not any(p.requires_grad for p in parts):
        return None
    found = torch.autograd.grad(_stand_in_loss(parts), wrt, allow_unused=True)
    return tuple(torch.zeros_like(a) if g is None else g for g, a in zip(found, wrt, strict=True))


def _result_parts(value, probe):
    """A layer's result as its tensors, [output (padded when packed), h_n, c_n for nn.LSTM]."""
    output, states = value
    if isinstance(output, PackedSequence):
        output = pad_packed_sequence(output, batch_first=probe.module.batch_first)[0]
    states = list(states) if isinstance(states, (tuple, list)) else [states]
    return [output, *states]


def _argument_problem(fn, module, input, hx, name):
    """What keeps diagnose from running: not a function, not a layer, an input that does not fit; else None."""
    own = name == getattr(fn, "__name__", None) or "." not in name  # diagnose(...), not check_code(key, ...)
    call = f"diagnose({getattr(fn, '__name__', 'my_rnn')}, rnn, x)" if own else f"check_code({name!r}, your_function)"
    if not callable(fn):
        what = "the first argument must be your function" if own else "pass your function itself"
        return f"{what}, e.g. {call}; got a {type(fn).__name__}."
    try:
        check_module(module)
        if isinstance(input, PackedSequence):
            check_packed(module, input)
            batch = int(input.batch_sizes[0])
        else:
            batch = input.shape[0 if module.batch_first else 1] if check_input(module, input) else None
        check_states(module, hx, batch, module.weight_ih_l0.dtype)
    except (TypeError, ValueError) as error:
        return _in_diagnose_words(str(error))
    try:
        inspect.signature(fn).bind(module, input, hx)
    except TypeError:
        return f"{name} must take three arguments, (module, input, hx), as module(input, hx) does; its signature is {inspect.signature(fn)}."
    except ValueError:  # a builtin without a signature: let the call tell
        pass
    return None


def _in_diagnose_words(message):
    """An argument check's message (written for unroll) as it reads for diagnose: calls keep the student's function."""
    message = re.sub(r"unroll\((model\.\w+|rnn|module), ", r"diagnose(my_rnn, \1, ", message)
    message = message.replace(
        "unroll's first argument is the recurrent layer, the second the input: unroll(module, input, hx=None). "
        "It got a tensor as its first argument.",
        "diagnose takes your function, the layer, then the input: diagnose(my_rnn, module, input, hx=None). "
        "It got a tensor where the layer goes.",
    )
    return message.replace("unroll re-computes", "diagnose checks").replace("unroll", "diagnose")


# Probes: the given input, then inputs that make one kind of bug show.


def _probes(module, input, hx):
    """The given input first, then probes that isolate one term, one step or one layer."""
    generator = torch.Generator().manual_seed(0)
    lstm = module.mode == "LSTM"
    packed = isinstance(input, PackedSequence)
    batch = _steps_and_batch(module, input)[1]
    batched = batch is not None
    probes = [Probe("your input", module, input, hx)]

    def random_state():
        return _random_state(module, batch, generator)

    def zeroed(*kinds):
        layer = copy.deepcopy(module)
        for param_name, param in layer.named_parameters():
            if "_".join(param_name.split("_")[:2]) in kinds:  # weight_hh_l1_reverse -> weight_hh
                param.zero_()
        return layer

    probes.append(
        Probe("a nonzero initial state (seeded random h_0" + (", c_0)" if lstm else ")"), module, input, random_state())
    )
    probes.append(
        Probe("only W_ih acting: W_hh and both biases zeroed", zeroed("weight_hh", "bias_ih", "bias_hh"), input)
    )
    probes.append(
        Probe(
            "only W_hh acting, on a nonzero h_0: W_ih and both biases zeroed",
            zeroed("weight_ih", "bias_ih", "bias_hh"),
            input,
            random_state(),
        )
    )
    if module.bias:
        probes.append(
            Probe("only b_ih acting: both weights and b_hh zeroed", zeroed("weight_ih", "weight_hh", "bias_hh"), input)
        )
        probes.append(
            Probe("only b_hh acting: both weights and b_ih zeroed", zeroed("weight_ih", "weight_hh", "bias_ih"), input)
        )
    if module.bias and module.mode in gates.ORDER:  # one gate at a time
        for label, fixed, _ in gates.SETTINGS[module.mode]:
            layer = copy.deepcopy(module)
            for suffix in {param_name.removeprefix("weight_ih") for param_name, _ in layer.named_parameters()}:
                if suffix.startswith("_l"):  # _l0, _l1_reverse, ...
                    weights = [
                        getattr(layer, f"{kind}{suffix}") for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                    ]
                    gates.hold(*weights, gates.ORDER[module.mode], fixed)
            where = "every layer and direction" if module.num_layers > 1 or module.bidirectional else "the layer"
            probes.append(
                Probe(f"{label}: {gates.held(fixed)} in {where}, on a nonzero h_0", layer, input, random_state())
            )
    if not packed:
        time_dim = 1 if batched and module.batch_first else 0
        probes.append(Probe("a single time step (the first of your input)", module, input.narrow(time_dim, 0, 1), hx))
        seq_len = input.shape[time_dim]
        shape = (seq_len + 2, batch + 1) if batched else (seq_len + 2,)
        if batched and module.batch_first:
            shape = shape[::-1]
        other = torch.randn(*shape, module.input_size, generator=generator, dtype=input.dtype)
        other_batch = (batch + 1) if batched else None
        probes.append(
            Probe(
                f"another input: {shape[time_dim]} steps"
                + (f", a batch of {other_batch}" if batched else "")
                + ", a nonzero h_0",
                module,
                other,
                _random_state(module, other_batch, generator),
            )
        )
    if module.num_layers > 1:
        probes += [_layer_alone(module, input, hx, layer) for layer in range(module.num_layers)]
    probes += [_larger(module, input, seed) for seed in range(1 + RANDOM_PROBES)]
    return probes


def _larger(module, input, seed):
    """A new seeded random layer like `module`, large enough that no coincidence of sizes hides a bug, and its input.

    hidden_size >= 3 and unlike input_size, 3 layers where the module has more than one, a batch of
    3 or more (distinct lengths when packed) and 4 steps or more. Seed 0 is the smallest such layer,
    with no h_0; the others draw their sizes and a nonzero h_0.
    """
    generator = torch.Generator().manual_seed(1000 + seed)

    def pick(low, high):
        return int(torch.randint(low, high + 1, (1,), generator=generator))

    packed = isinstance(input, PackedSequence)
    batched = packed or input.dim() == 3
    dtype = module.weight_ih_l0.dtype
    H = max(3, module.hidden_size) if seed == 0 else pick(3, 6)
    H += H == module.input_size
    L = 1 if module.num_layers == 1 else max(3, module.num_layers)
    B, T = (3, 4) if seed == 0 else (pick(3, 5), pick(5, 7))
    options = {"bias": module.bias, "batch_first": module.batch_first, "bidirectional": module.bidirectional}
    if module.mode.startswith("RNN"):
        options["nonlinearity"] = module.nonlinearity
    if module.mode == "LSTM" and module.proj_size:
        options["proj_size"] = min(module.proj_size, H - 1)
    torch.manual_seed(1000 + seed)  # inside diagnose's fork_rng: the student's generator is put back
    larger = type(module)(module.input_size, H, num_layers=L, **options).to(dtype).eval()
    x = torch.randn(T, B, module.input_size, generator=generator, dtype=dtype)  # (seq_len, batch, input_size)
    what = f"hidden_size={H}" + (f", {L} layers" if L > 1 else "")
    if packed:
        lengths = torch.cat([torch.tensor([T]), 1 + torch.randperm(T - 1, generator=generator)[: B - 1]])
        enforce_sorted = input.sorted_indices is None
        lengths = (
            lengths.sort(descending=True).values if enforce_sorted else lengths[torch.randperm(B, generator=generator)]
        )
        probe_input = pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
        what += f", a batch of {B} packed with lengths {lengths.tolist()}"
    elif batched:
        probe_input = x.transpose(0, 1) if module.batch_first else x
        what += f", a batch of {B}, {T} steps"
    else:
        probe_input = x[:, 0]
        what += f", {T} steps"
    probe_hx = None if seed == 0 else _random_state(larger, B if batched else None, generator)
    if seed == 0:
        return Probe(f"a larger layer (seeded random weights): {what}", larger, probe_input)
    return Probe(f"random layer {seed} (seeded): {what}, a nonzero h_0", larger, probe_input, probe_hx)


def _random_state(module, batch, generator):
    """A seeded random initial state for `module`: h_0, or (h_0, c_0) for nn.LSTM."""
    rows = module.num_layers * (2 if module.bidirectional else 1)
    lead = (rows,) if batch is None else (rows, batch)
    dtype = module.weight_ih_l0.dtype
    h_0 = torch.randn(*lead, module.proj_size or module.hidden_size, generator=generator, dtype=dtype)
    if module.mode != "LSTM":
        return h_0
    return h_0, torch.randn(*lead, module.hidden_size, generator=generator, dtype=dtype)


def _layer_alone(module, input, hx, layer):
    """Layer `layer` of `module` as a one-layer module, reading what torch's layers below it return."""
    below = layer_parts.layers(module, 0, layer)
    D = 2 if module.bidirectional else 1
    rows = slice(0, layer * D)
    layer_input = input if below is None else below(input, layer_parts.rows(hx, rows))[0]
    alone = layer_parts.layers(module, layer, layer + 1)
    probe_hx = layer_parts.rows(hx, slice(layer * D, (layer + 1) * D))
    where = "reading your input" if layer == 0 else f"reading torch's output of layer {layer - 1}"
    return Probe(f"layer {layer} alone, {where}", alone, layer_input, probe_hx, layer=layer)


def same_outcome(a, b):
    """True when two outcomes agree: equal values (within ATOL), or the same error with the same sizes in its message."""
    if a.error is not None or b.error is not None:
        if a.error is None or b.error is None or type(a.error) is not type(b.error):
            return False
        return sorted(re.findall(r"\d+", str(a.error))) == sorted(re.findall(r"\d+", str(b.error)))
    return _same_value(a.value, b.value)


def _same_value(a, b):
    if isinstance(a, PackedSequence):
        a = pad_packed_sequence(a)[0]
    if isinstance(b, PackedSequence):
        b = pad_packed_sequence(b)[0]
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if a.shape != b.shape or not (a.is_floating_point() and b.is_floating_point()):
            return a.shape == b.shape and torch.equal(a, b)
        return bool(torch.allclose(a.detach().double(), b.detach().double(), rtol=RTOL, atol=ATOL, equal_nan=True))
    return False


def first_difference(got, want):
    """The index (a tuple) of the first entry where two same-shaped tensors differ beyond ATOL, or None."""
    got, want = got.detach().double(), want.detach().double()
    close = torch.isclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
    wrong = (~close).nonzero()
    return None if len(wrong) == 0 else tuple(wrong[0].tolist())


# Where the student's result departs from torch's.


@dataclass(frozen=True)
class Departure:
    """The first place a result departs from torch's: a form problem (text only) or an entry."""

    text: str  # the place, in words
    part: str | None = None
    index: tuple | None = None
    layer: int | None = None
    direction: int | None = None
    t: int | None = None
    batch: int | None = None
    unit: int | None = None
    got: float | None = None
    expected: float | None = None
    first_step: bool = False  # the first step its direction computes
    last_step: bool = False  # the last step its direction computes


def _departure(outcome, expected, probe, sandbox=None):
    """Where `outcome` departs from torch's `expected` result on `probe`, or None when it does not."""
    if outcome.error is not None:
        return Departure(raised(outcome) if not isinstance(outcome.error, TooSlow) else too_slow(outcome, sandbox))
    module = probe.module
    lstm = module.mode == "LSTM"
    got = outcome.value
    returns = "(output, (h_n, c_n))" if lstm else "(output, h_n)"
    if got is None:
        return Departure(f"it returns None here; return {returns}")
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return Departure(f"it returns {_what(got)}; the layer returns a pair, {returns}")
    parts = [("output", got[0], expected[0])]
    if lstm:
        if not isinstance(got[1], (tuple, list)) or len(got[1]) != 2:
            return Departure(f"its second value is {_what(got[1])}; nn.LSTM's is a pair of states, (h_n, c_n)")
        parts += [("h_n", got[1][0], expected[1][0]), ("c_n", got[1][1], expected[1][1])]
    else:
        parts.append(("h_n", got[1], expected[1]))
    packed = isinstance(probe.input, PackedSequence)
    padded = {}
    for part, mine, theirs in parts:
        if packed and part == "output":
            if isinstance(mine, Tensor):
                return Departure(
                    "output is a padded tensor; for a PackedSequence input the layer returns a PackedSequence: pack "
                    "it again with pack_padded_sequence(output, lengths, enforce_sorted=False)",
                    part=part,
                )
            theirs = pad_packed_sequence(theirs, batch_first=module.batch_first)[0]
            if isinstance(mine, PackedSequence):
                mine = pad_packed_sequence(mine, batch_first=module.batch_first)[0]
        if not isinstance(mine, Tensor):
            fix = " (stack the steps' states with torch.stack)" if isinstance(mine, (list, tuple)) else ""
            return Departure(
                f"{part} is {_what(mine)}; it should be a tensor shaped {_layout(part, module, probe.input)}{fix}"
            )
        if mine.shape != theirs.shape:
            return Departure(_shape_problem(part, mine, theirs, module, probe.input, probe.hx), part=part)
        if mine.dtype != theirs.dtype:
            return Departure(
                f"{part} is {mine.dtype}; torch's is {theirs.dtype}, the dtype of the layer's weights. Something in "
                "your code makes another dtype: torch.tensor(...) of Python numbers, torch.zeros(..., dtype=...), "
                ".double() or .float(); make new tensors with dtype=input.dtype",
                part=part,
            )
        padded[part] = (mine, theirs)
    return _first_wrong_entry(padded, module, probe)


def _first_wrong_entry(padded, module, probe):
    """The first entry that departs, in the order torch computes them: lower layers' h_n, output, the top's h_n, c_n."""
    D = 2 if module.bidirectional else 1
    L = module.num_layers
    batched = isinstance(probe.input, PackedSequence) or probe.input.dim() == 3
    layer_of = (lambda row: row // D) if probe.layer is None else (lambda row: probe.layer)
    h_n_mine, h_n_theirs = padded["h_n"]
    rows = range(len(h_n_theirs))
    order = (
        [("h_n", r) for r in rows if r // D < L - 1]
        + [("output", None)]
        + [("h_n", r) for r in rows if r // D == L - 1]
    )
    order += [("c_n", r) for r in rows] if "c_n" in padded else []
    for part, row in order:
        mine, theirs = padded[part]
        if row is not None:
            index = first_difference(mine[row], theirs[row])
            if index is None:
                continue
            index = (row, *index)
            batch, unit = (index[1], index[2]) if batched else (None, index[1])
            where = f"layer {layer_of(row)}, {_direction(row % D, D)}, its final state"
            return _entry(
                part, index, mine, theirs, where, layer=layer_of(row), direction=row % D, batch=batch, unit=unit
            )
        found = _first_in_output(mine, theirs, module, batched)
        if found is not None:
            index, direction, t, batch, unit = found
            T = theirs.shape[1 if batched and module.batch_first else 0]
            first_step = t == (T - 1 if direction else 0)
            last_step = t == (0 if direction else T - 1)
            layer = probe.layer if probe.layer is not None else L - 1
            step = f"time step {t + 1} (t = {t})"
            where = f"layer {layer}{' (the top)' if L > 1 and probe.layer is None else ''}, {_direction(direction, D)}, {step}"
            facts = {
                "layer": layer,
                "direction": direction,
                "t": t,
                "batch": batch,
                "unit": unit,
                "first_step": first_step,
                "last_step": last_step,
            }
            return _entry("output", index, mine, theirs, where, **facts)
    return None


def _first_in_output(mine, theirs, module, batched):
    """(index, direction, t, batch, unit) of output's first departing entry in computation order, or None.

    The forward direction computes t = 0, 1, ...; the backward direction t = T-1, T-2, ...
    """
    time_first = (lambda x: x.transpose(0, 1)) if batched and module.batch_first else (lambda x: x)
    mine_t, theirs_t = time_first(mine), time_first(theirs)
    if not batched:
        mine_t, theirs_t = mine_t.unsqueeze(1), theirs_t.unsqueeze(1)  # (T, 1, D*H)
    T = theirs_t.shape[0]
    D = 2 if module.bidirectional else 1
    size = theirs_t.shape[-1] // D
    for direction in range(D):
        columns = slice(direction * size, (direction + 1) * size)
        for t in range(T - 1, -1, -1) if direction else range(T):
            found = first_difference(mine_t[t, :, columns], theirs_t[t, :, columns])
            if found is not None:
                b, j = found
                unit = direction * size + j
                if not batched:
                    return (t, unit), direction, t, None, unit
                index = (b, t, unit) if module.batch_first else (t, b, unit)
                return index, direction, t, b, unit
    return None


def _entry(part, index, mine, theirs, where, **facts):
    got, want = mine[index].item(), theirs[index].item()
    batch = "" if facts.get("batch") is None else f", batch item {facts['batch']}"
    text = f"{part}[{', '.join(map(str, index))}]: {where}{batch}, unit {facts['unit']}: yours {got:.4f}, torch's {want:.4f}"
    return Departure(text, part=part, index=index, got=got, expected=want, **facts)


def _direction(direction, D):
    if D == 1:
        return "the only direction"
    return "forward direction" if direction == 0 else "backward direction"


def _steps_and_batch(module, input):
    """(seq_len, batch) of the input, packed or padded, batch first or not; batch is None for an unbatched one."""
    if isinstance(input, PackedSequence):
        return len(input.batch_sizes), int(input.batch_sizes[0])
    if input.dim() != 3:
        return input.shape[0], None
    return (input.shape[1], input.shape[0]) if module.batch_first else (input.shape[0], input.shape[1])


def _layout(part, module, input):
    """The shape torch gives `part` for this module and input, with dimension names."""
    packed = isinstance(input, PackedSequence)
    T, B = _steps_and_batch(module, input)
    batched = B is not None
    D = 2 if module.bidirectional else 1
    lstm = module.mode == "LSTM"
    H = module.hidden_size
    P = module.proj_size if lstm and module.proj_size else None
    if part == "output":
        width = f"num_directions*{'proj_size' if P else 'hidden_size'}={D * (P or H)}"
        dims = [f"seq_len={T}", f"batch={B}"] if not module.batch_first else [f"batch={B}", f"seq_len={T}"]
        dims = dims if batched else [f"seq_len={T}"]
        shape = "(" + ", ".join(dims + [width]) + ")"
        return shape + (" once padded with pad_packed_sequence" if packed else "")
    size = f"proj_size={P}" if P and part == "h_n" else f"hidden_size={H}"
    dims = [f"num_layers*num_directions={module.num_layers * D}"] + ([f"batch={B}"] if batched else []) + [size]
    return "(" + ", ".join(dims) + ")"


def _named_sizes(module, input):
    """{name: size} of the input's and the layer's dimensions, named as _layout names them."""
    T, B = _steps_and_batch(module, input)
    D = 2 if module.bidirectional else 1
    sizes = {"seq_len": T, "batch": B, "input_size": module.input_size, "hidden_size": module.hidden_size}
    sizes |= {"num_layers": module.num_layers, "num_layers*num_directions": module.num_layers * D}
    sizes[f"num_directions*{'proj_size' if getattr(module, 'proj_size', 0) else 'hidden_size'}"] = D * (
        getattr(module, "proj_size", 0) or module.hidden_size
    )
    return {name: size for name, size in sizes.items() if size is not None}


def _shape_problem(part, mine, theirs, module, input, hx=None):
    layout = _layout(part, module, input)
    text = f"{part} has shape {tuple(mine.shape)}; torch's is {layout}"
    steps = _steps_slip(mine, theirs, module, input, hx) if part == "output" else None
    if steps:
        return f"{text}: {steps}"
    names = tuple(re.findall(r"([\w*]+)=", layout))
    slip = shape_slip(
        mine.shape, theirs.shape, names if len(names) == theirs.dim() else None, _named_sizes(module, input)
    )
    if sorted(mine.shape) == sorted(theirs.shape):
        text += ": the same sizes in another order (which dimension is time, which the batch?)"
    elif slip:
        text += f": {slip}"
    elif mine.dim() != theirs.dim():
        text += f": {theirs.dim()} dimensions, not {mine.dim()}"
    D = 2 if module.bidirectional else 1
    if part == "output" and D == 2 and mine.shape[:-1] == theirs.shape[:-1] and 2 * mine.shape[-1] == theirs.shape[-1]:
        forward, backward = theirs.detach().double().chunk(2, dim=-1)
        merges = {"summed": forward + backward, "averaged": (forward + backward) / 2, "multiplied": forward * backward}
        merges |= {"the forward half only": forward, "the backward half only": backward}
        merged = next((how for how, value in merges.items() if _same_value(mine.detach().double(), value)), None)
        if merged:
            text += (
                f"; yours is torch's two directions {merged}" if "only" not in merged else f"; yours is {merged}"
            ) + ": torch concatenates them, [forward_t, backward_t] on the last dimension (num_directions*hidden_size)"
    unbatched = not isinstance(input, PackedSequence) and input.dim() == 2
    if unbatched and mine.dim() == theirs.dim() + 1:
        text += (
            "; this input is unbatched, (seq_len, input_size): torch runs it as one sequence and returns output "
            "(seq_len, num_directions*hidden_size) and h_n (num_layers*num_directions, hidden_size), with no batch "
            "dimension; input.shape[1] is input_size here, not a batch size"
        )
    wider = mine.shape[:-1] == theirs.shape[:-1] and mine.shape[-1] > theirs.shape[-1]
    if part == "output" and wider and mine.shape[-1] % theirs.shape[-1] == 0:
        text += (
            "; torch's output holds the top layer's states only, one row per step (with both directions side by "
            "side when bidirectional)"
        )
    return text


def _steps_slip(mine, theirs, module, input, hx):
    """Which steps a wrong-length or transposed output holds, found by comparing its values with torch's: a loop
    that starts at step 1 or stops one step early, the initial state kept as a step, or the loop run over the batch."""
    if isinstance(input, PackedSequence) or not isinstance(mine, Tensor) or not mine.is_floating_point():
        return None
    time = 1 if module.batch_first and input.dim() == 3 else 0
    T = input.shape[time]

    def torch_on(x, state):
        with torch.no_grad():
            return module(x, state)[0]

    candidates = []  # (what the student's code does, a function computing what that code returns)
    if mine.dim() == theirs.dim() and mine.shape[time] == T - 1:
        candidates = [
            (
                "your loop starts at step 1 (range(1, seq_len), or input[1:]): x_0 is never read, and output holds "
                "one step fewer. Python counts from 0: the steps are t = 0, 1, ..., seq_len - 1",
                lambda: torch_on(input.narrow(time, 1, T - 1), hx),
            ),
            (
                f"your loop stops one step early (range(seq_len - 1), or input[:-1]): the last step, t = {T - 1}, "
                "is never computed; loop over every t in range(seq_len)",
                lambda: theirs.narrow(time, 0, T - 1),
            ),
            (
                "your output leaves out the first step's state (output[1:], or states kept from the second step on): "
                "output[t] is the state after step t, for every t from 0",
                lambda: theirs.narrow(time, 1, T - 1),
            ),
        ]
    elif mine.dim() == theirs.dim() and mine.shape[time] == T + 1 and module.num_layers == 1:
        candidates = [
            (
                "your output starts with the initial state h_0: output holds the states after the steps t = 0 .. "
                "seq_len - 1, never h_0 (keep h_0 out of the list you stack)",
                lambda: torch.cat([_initial_step(hx, theirs, time), theirs], dim=time),
            )
        ]
    elif input.dim() == 3 and mine.shape == theirs.transpose(0, 1).shape:
        read = "(batch, seq_len, input_size)" if not module.batch_first else "(seq_len, batch, input_size)"
        meant = (
            "(batch, seq_len, input_size) (batch_first=True): step t is input[:, t]"
            if module.batch_first
            else "(seq_len, batch, input_size) (batch_first=False): step t is input[t]"
        )
        candidates = [
            (
                f"the same sizes in another order: your loop runs over the batch as if it were time: the input is "
                f"read as {read}, while this layer's "
                f"input is {meant}",
                lambda: torch_on(input.transpose(0, 1), None),
            ),
            (
                "the same sizes in another order: your output is torch's with its first two dimensions exchanged: "
                "return it as "
                + ("(batch, seq_len, ...) for batch_first=True" if module.batch_first else "(seq_len, batch, ...)"),
                lambda: theirs.transpose(0, 1),
            ),
        ]
    for said, computed in candidates:
        try:
            candidate = computed()
        except Exception:  # torch cannot run this variant (hx of another batch size): it explains nothing
            continue
        if candidate.shape == mine.shape and _same_value(mine, candidate):
            return said
    return None


def _initial_step(hx, theirs, time):
    """(one layer, one direction) h_0 shaped as one step of output; zeros when hx is None."""
    shape = list(theirs.shape)
    shape[time] = 1
    h_0 = hx[0] if isinstance(hx, tuple) else hx
    return theirs.new_zeros(shape) if h_0 is None else h_0[-1].reshape(shape)


def _what(value):
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return "None" if value is None else f"a {type(value).__name__}"


# Naming the bug, and the report.


def _likely_bug(outcomes, probes, headline):
    """(the catalogued bug whose result equals the student's on the most probes, on how many, other bugs that fit as well).

    A bug must match the first probe the student's function fails. Where several bugs match every
    probe, all of them are returned: the report names each, since the probes cannot tell them apart.
    """
    module, input = probes[0].module, probes[0].input
    packed = isinstance(input, PackedSequence)
    best, best_count, ties = None, 0, []
    order = [headline] + [i for i in range(len(probes)) if i != headline]
    for bug in bugs.CATALOGUE:
        if not bug.applies(module, packed):
            continue
        count = 0
        for i in order:
            mutant = _engine_outcome(probes[i], bug.name)
            if not same_outcome(outcomes[i], mutant):
                if i == headline:
                    break
                continue
            count += 1
        if count == len(probes) and best_count == len(probes):
            ties.append(bug)
        elif count > best_count:
            best, best_count = bug, count
    return best, best_count, ties


def _wiring_slips(outcomes, probes, failing):
    """The rewirings of the layer (helpers.wiring_slips) that torch, so rewired, computes as the student's function
    does on every probe where they can happen; the student's function must be right on the others. When none
    fits, each again with hx ignored as well (a layer written for hx=None only: two slips at once)."""
    largest = max((p.module for p in probes), key=lambda m: m.num_layers)
    slips = wiring_slips.slips(largest)
    found = _fitting(slips, outcomes, probes, failing)
    if found or all(p.hx is None for p in probes):
        return found
    ignoring = [
        wiring_slips.WiringSlip(
            f"{slip.title}; and hx is never used: every layer and direction starts from zeros",
            f"{slip.fix}; and start each layer and direction from its own row of hx when hx is given",
            run=lambda m, i, h, slip=slip: slip.result(m, i, None),
        )
        for slip in slips
    ]
    return _fitting(ignoring, outcomes, probes, failing)


def _fitting(slips, outcomes, probes, failing):
    """The slips whose result equals the student's on every probe where they can happen (right on the others)."""
    order = [failing[0]] + [i for i in range(len(probes)) if i != failing[0]]
    found = []
    for slip in slips:
        fits = applied = 0
        for i in order:
            try:
                with torch.no_grad():
                    value = slip.result(probes[i].module, probes[i].input, probes[i].hx)
            except wiring_slips.ShapesDifferError:  # code with the slip raises here (a product of the wrong shapes)
                fits = outcomes[i].error is not None and not isinstance(outcomes[i].error, TooSlow)
            except wiring_slips.NotApplicableError:
                fits = i not in failing
            except Exception:  # a slip torch cannot run on this probe explains nothing there
                fits = False
            else:
                fits = same_outcome(outcomes[i], Outcome(value=value))
                applied += 1
            if not fits:
                break
        if fits and applied:
            found.append(slip)
    return found


def _engine_outcome(probe, bug):
    """What the layer with the catalogued bug `bug` returns on `probe` (helpers.bugs.run), as an Outcome."""
    try:
        return Outcome(value=bugs.run(probe.module, probe.input, probe.hx, bug))
    except Exception as error:
        return Outcome(error=error)


def _report(name, fn, probes, outcomes, findings, failing, likely, changed, moved=None):
    bug, matched, ties = likely
    headline = failing[0]
    probe = probes[headline]
    departure = findings[headline]
    if probes[0].module.num_layers > 1 and headline == 0:  # one layer alone says where it starts
        alone = [i for i in failing if probes[i].layer is not None]
        if alone and findings[alone[0]].index is not None:
            departure = findings[alone[0]]
            probe = probes[alone[0]]
    error = outcomes[headline].error
    status = "wrong" if error is None else ("too slow" if isinstance(error, TooSlow) else "raised")
    lines = [f"✗ {name}: not yet."]
    if headline != 0:
        lines[0] += " On your input it matches torch, but not on this probe:"
    if probe is not probes[0] or headline != 0:
        lines.append(f"  probe: {probe.description}")
    if departure.index is not None:
        lines.append(f"  first departure: {departure.text}")
    else:
        raised_or_stopped = departure.text.startswith(("raised", "stopped"))
        lines.append(f"  it {departure.text}" if raised_or_stopped else f"  {departure.text}")
        if "shape" in departure.text and error is not None:
            lines.append(f"  your layer: {_sizes(probes[headline])}")
            product = _product(error, probes[headline].module)
            if product:
                lines.append(f"  {product}")
    # a name read from the notebook explains a probe's departure; on the student's own input only if it is not
    # the very layer or input passed
    given = () if headline != 0 else (probes[0].module, probes[0].input, probes[0].hx)
    free = notebook_names(fn, given, numbers=headline != 0)
    if bug is not None and matched == len(probes) and ties:
        lines.append("  the probes cannot tell these apart; most likely one of them:")
        for one in (bug, *ties):
            lines.append(f"  - {one.title}; fix: {one.fix}.")
    elif bug is not None and matched == len(probes):
        lines.append(f"  most likely: {bug.title}.")
        lines.append(f"  fix: {bug.fix}.")
    elif free:
        lines.append(
            f"  most likely: it reads {_listed([f'`{n}`' for n in free])} from the notebook, not from its arguments, "
            "so on another layer or input it still computes with the notebook's."
        )
        lines.append("  fix: use only what the function is given: module, input and hx.")
    elif bug is not None:
        lines.append(f"  possibly: {bug.title} (it explains {matched} of the {len(probes)} checks).")
        lines.append(f"  fix: {bug.fix}.")
    else:
        shown = next(i for i, p in enumerate(probes) if p is probe)  # the probe shown, perhaps one layer alone
        hint = moved or _generic_hint(departure, probe, outcomes[headline], probes, failing, outcomes[shown])
        lines.append(f"  hint: {hint}")
        passed = {i: i not in failing for i in range(len(probes))}
        if len(failing) < len(probes):  # which probes pass says which term is wrong
            marks = [f"{_label(p)} {'✓' if passed[i] else '✗'}" for i, p in enumerate(probes)]
            lines.append("  checks: " + " · ".join(marks))
    lines += [f"  also: {c}." for c in changed]
    facts = {
        k: getattr(departure, k)
        for k in ("part", "index", "layer", "direction", "t", "batch", "unit", "got", "expected")
    }
    error_text = None if error is None else f"{type(error).__name__}: {error}"
    return Diagnosis(
        False, "\n".join(lines), status, probe=probe.description, bug=bug, error=error_text, changed=changed, **facts
    )


def _imprecise(outcome, expected, probe):
    """A hint when every value is within 1% of torch's but some are beyond the tolerance: a lower precision; else None."""
    if outcome.error is not None or not isinstance(outcome.value, (tuple, list)):
        return None
    try:
        pairs = list(zip(_result_parts(outcome.value, probe), _result_parts(expected, probe), strict=True))
    except (TypeError, ValueError, RuntimeError):
        return None
    if not all(isinstance(m, Tensor) and m.shape == t.shape and m.is_floating_point() for m, t in pairs):
        return None
    if all(torch.allclose(m.detach().double(), t.detach().double(), rtol=1e-2, atol=1e-3) for m, t in pairs):
        return (
            "every value is within 1% of torch's, yet some are beyond the tolerance: something computes in a lower "
            "precision (.half(), float16, bfloat16, torch.autocast) or rounds; compute in the input's dtype"
        )
    return None


def _rearranged(outcome, expected, probe):
    """A hint when a part holds torch's numbers in other places: h_n's rows in another order, or values moved by a
    reshape where a transpose was meant; else None."""
    if outcome.error is not None or not isinstance(outcome.value, (tuple, list)) or len(outcome.value) != 2:
        return None
    try:
        mine, theirs = _result_parts(outcome.value, probe), _result_parts(expected, probe)
    except (TypeError, ValueError, RuntimeError):
        return None
    names = ["output", "h_n", "c_n"]
    for name, got, want in zip(names, mine, theirs):
        if not isinstance(got, Tensor) or got.shape != want.shape or _same_value(got, want):
            continue
        got, want = got.detach().double(), want.detach().double()
        for function in ("tanh", "sigmoid"):
            if _same_value(got, getattr(torch, function)(want)):
                cell = " (c_n is the cell state itself; h uses tanh(c), c does not)" if name == "c_n" else ""
                return f"{name} is {function} of torch's {name}: a {function} applied once too often{cell}."
        if name != "output" and got.dim() >= 2:
            rows = [next((s for s in range(len(want)) if _same_value(got[r], want[s])), None) for r in range(len(got))]
            if None not in rows and sorted(rows) == list(range(len(want))):
                D = 2 if probe.module.bidirectional else 1
                order = ", ".join(f"row {r} holds torch's row {s}" for r, s in enumerate(rows) if r != s)
                return (
                    f"{name} holds torch's final states in other rows ({order}): torch orders them by layer, then "
                    f"direction, row = layer * {D} + direction."
                )
            if None not in rows:  # every row is one of torch's, some twice: the others are missing
                twice = sorted({s for s in rows if rows.count(s) > 1})
                missing = [s for s in range(len(want)) if s not in rows]
                copies = ", ".join(f"row {r} holds torch's row {s}" for r, s in enumerate(rows) if r != s)
                return (
                    f"{name} holds torch's row{'s' * (len(twice) > 1)} {_listed([str(s) for s in twice])} more than "
                    f"once ({copies}) and never its row{'s' * (len(missing) > 1)} "
                    f"{_listed([str(s) for s in missing])}: each layer and direction has its own final state, at row "
                    f"layer * {2 if probe.module.bidirectional else 1} + direction."
                )
        if name == "output":
            moved = _steps_moved(got, want, probe.module)
            if moved:
                return moved
        if torch.allclose(got.flatten().sort().values, want.flatten().sort().values, rtol=RTOL, atol=ATOL):
            return (
                f"{name} holds torch's numbers, in other places: a .view() or .reshape() where a .transpose() or "
                ".permute() was meant (reshape keeps the order of the numbers in memory; transpose moves them)?"
            )
    return None


def _steps_moved(got, want, module):
    """'the backward half of output holds torch's steps in another order (...)' when each step of a direction's
    half of output is torch's state at another step; else None."""
    if got.dim() == 2:  # unbatched: (T, D*H)
        got, want = got[:, None], want[:, None]
    elif module.batch_first:
        got, want = got.transpose(0, 1), want.transpose(0, 1)  # (T, B, D*H)
    D = 2 if module.bidirectional else 1
    H = want.shape[-1] // D
    for d in range(D):
        mine, theirs = got[..., d * H : (d + 1) * H], want[..., d * H : (d + 1) * H]
        steps = [
            next((u for u in range(len(theirs)) if _same_value(mine[t], theirs[u])), None) for t in range(len(mine))
        ]
        if None in steps or steps == list(range(len(theirs))):
            continue
        half = "output" if D == 1 else f"the {'backward' if d else 'forward'} half of output"
        moves = ", ".join(f"yours at t = {t} is torch's at t = {u}" for t, u in enumerate(steps) if t != u)
        kind = "in another order" if sorted(steps) == list(range(len(theirs))) else "some of them twice"
        return (
            f"{half} holds torch's states for the steps {kind} ({moves}): check the time index each state is "
            "stored at" + (" (the backward run's state at step t belongs at t, not at T - 1 - t)" if d else "") + "."
        )
    return None


def notebook_names(fn, arguments=(), numbers=False):
    """The names of tensors, layers and packed sequences that `fn` reads from the notebook instead of its arguments.

    A name bound to one of `arguments` itself (the very object passed) is left out. With `numbers`, whole
    numbers too (a size such as H or B): the caller passes it when the function is right on the notebook's
    own case and wrong on another, which a size read from the notebook explains.
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    names, stack = set(), [code]
    while stack:  # the function's own code and that of functions defined inside it
        current = stack.pop()
        names.update(i.argval for i in dis.get_instructions(current) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
        stack += [c for c in current.co_consts if inspect.iscode(c)]
    scope = dict(getattr(fn, "__globals__", {}))
    for cell_name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            scope[cell_name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        names.add(cell_name)
    given = [a for argument in arguments for a in (argument if type(argument) is tuple else (argument,))]
    return sorted(
        n
        for n in names
        if (isinstance(scope.get(n), (Tensor, nn.Module, PackedSequence)) or (numbers and type(scope.get(n)) is int))
        and not any(scope[n] is a for a in given)
    )


def _listed(words):
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _sizes(probe):
    """The sizes of the probe's layer and input, by name, and the shapes of its weights."""
    module, input = probe.module, probe.input
    G = {"LSTM": 4, "GRU": 3}.get(module.mode, 1)
    H = module.hidden_size
    gates = f"{G}*hidden_size" if G > 1 else "hidden_size"
    batch = _steps_and_batch(module, input)[1]
    x_t = (
        f"(batch={batch}, input_size={module.input_size})"
        if batch is not None
        else f"(input_size={module.input_size},)"
    )
    h_size = module.proj_size if module.mode == "LSTM" and module.proj_size else H
    return (
        f"x_t is {x_t}; W_ih = weight_ih_l0 is ({gates}={G * H}, input_size={module.input_size}); "
        f"W_hh = weight_hh_l0 is ({gates}={G * H}, {'proj_size' if h_size != H else 'hidden_size'}={h_size})."
    )


def _product(error, module):
    """Which of the layer's weights a failed matrix product used, and what it multiplies: 'mat1 and mat2 shapes
    cannot be multiplied (3x4 and 8x4)' with weight_ih_l1 (4, 8): layer 1 reads 8 features. None if none fits."""
    sizes = re.search(r"\((\d+)x(\d+) and (\d+)x(\d+)\)", str(error))
    if not sizes:
        return None
    rows, columns, inner, outer = map(int, sizes.groups())
    D = 2 if module.bidirectional else 1
    for name, param in module.named_parameters():
        if param.dim() != 2 or not name.startswith("weight") or name.endswith("_reverse"):
            continue
        if tuple(param.shape) == (outer, inner):
            used = f"{name}.T"
        elif tuple(param.shape) == (inner, outer):
            used = name
        else:
            continue
        layer = int(re.search(r"_l(\d+)", name).group(1))
        if name.startswith("weight_ih") and layer > 0:
            reads = (
                f"layer {layer} reads the output of layer {layer - 1}: num_directions*hidden_size = {inner} features"
                + (", the forward and backward states side by side" if D == 2 else "")
            )
        elif name.startswith("weight_ih"):
            reads = f"layer 0 reads x_t: input_size = {inner} features"
        else:
            reads = f"it multiplies the state h: {inner} features"
        return (
            f"the product: a ({rows}x{columns}) matrix times {used} ({inner}x{outer}); {used} needs {inner} columns "
            f"on its left, and {reads}."
        )
    return None


def _label(probe):
    """A probe's description in two or three words, for the line of checks."""
    text = probe.description
    if text.startswith("gate"):
        return text.split(":")[0]
    if text.startswith("only "):
        return text.removeprefix("only ").split(" acting")[0] + " alone"
    for start, label in (
        ("a nonzero initial", "nonzero h_0"),
        ("a single time step", "one step"),
        ("another input", "another input"),
        ("a larger layer", "larger layer"),
    ):
        if text.startswith(start):
            return label
    return text.split(",")[0].split(" (")[0]


def term_hint(wrong, count):
    """'with only b_hh acting it departs, and every other term alone is right: ...' when some of the `count` terms
    (W_ih, W_hh, b_ih, b_hh), each acting alone, depart (`wrong`) and others do not; else None. A weight's term is
    its product with what it multiplies (x_t, or the state), so that is named with it."""
    if not wrong or len(wrong) == count:
        return None
    operands = {"w_ih": "input x_t", "w_hh": "state h"}
    parts = [
        f"{term} (and the {operands[term.lower()]} it multiplies)" if term.lower() in operands else term
        for term in wrong
    ]
    return (
        f"with only {_listed(wrong)} acting it departs, and every other term alone is right: check how "
        f"{_listed(parts)} enter{'s' if len(wrong) == 1 else ''} your formula (its shape, its sign, where it is added)."
    )


def _generic_hint(departure, probe, outcome, probes, failing, shown=None):
    """What to look at, from where the result departs, when no catalogued bug explains it (`shown`: the outcome of
    `probe`, where that is not the headline probe whose outcome is `outcome`)."""
    error = outcome.error
    if error is not None and "in-place operation" in str(error):
        return (
            "it changes in place a tensor that autograd needs (a parameter, or a state saved for the gradient): "
            "write h = h + ..., not h += ...; never write into the layer's weights."
        )
    explained = None if error is None or _product(error, probe.module) else error_hints.explain(error, outcome.where)
    if explained:
        return explained
    if error is not None and "shape" in departure.text:
        return "compare the shapes in the message with your layer's, printed above."
    if error is not None:
        at = ", at the line shown" if outcome.where else ""
        return f"the message above says what went wrong{at}."
    if departure.index is None:
        returns = "(output, (h_n, c_n))" if probe.module.mode == "LSTM" else "(output, h_n)"
        return f"return what the layer returns, {returns}, as tensors shaped like torch's."
    layers_alone = [p for p in probes if p.layer is not None]
    if layers_alone and all(i not in failing for i, p in enumerate(probes) if p.layer is not None):
        return "each layer alone is right, the stack is not: check what each layer reads and which row of hx it starts from."
    terms = [(i, _label(p).removesuffix(" alone")) for i, p in enumerate(probes) if p.description.startswith("only ")]
    by_term = None
    if departure.part == "output":  # a step's equation; a final state from the wrong step fails the terms too
        by_term = term_hint([term for i, term in terms if i in failing], len(terms))
    labels = [(i, _label(p)) for i, p in enumerate(probes) if p.description.startswith("gate")]
    wrong = [label for i, label in labels if i in failing]
    by_gate = gates.hint(wrong, [label for i, label in labels if i not in failing], "the gate probes below")
    if by_term or by_gate:
        return " ".join(hint for hint in (by_term, by_gate) if hint)
    if departure.part == "output" and departure.t is not None:
        if departure.first_step:
            return "the very first step already differs: check that step's equation term by term."
        if departure.last_step:
            return (
                "every step before it matches; the last step this direction computes does not: does the loop stop "
                "one step early? range(T - 1) never reaches t = T - 1, range(T - 1, 0, -1) never reaches t = 0."
            )
        return "the first steps match, a later one does not: check how the state is carried from step to step."
    if departure.part == "c_n":
        return "output and h_n match but c_n does not: return the final cell state of every layer and direction."
    try:
        found = _final_state_steps(probe, shown or outcome) if departure.part == "h_n" else None
    except Exception:  # a result this reading cannot follow: the plain hint below
        found = None
    if found:
        return found
    return "output matches but the final states do not: check which step's state you return, and in which row."


def _final_state_steps(probe, outcome):
    """'your h_n[0] is layer 0's state after step t = 0; torch's is its state after the last step it computes, t = 4'
    for each row of the student's h_n that departs, when every such row is the state of its own layer and direction
    after one step (the same step for every sequence), or another row of torch's h_n; None otherwise."""
    module, input, hx = probe.module, probe.input, probe.hx
    value = outcome.value
    mine = value[1][0] if module.mode == "LSTM" and isinstance(value[1], (tuple, list)) else value[1]
    with torch.no_grad():
        theirs = module(input, hx)[1]
    theirs = theirs[0] if isinstance(theirs, tuple) else theirs
    if not isinstance(mine, Tensor) or mine.shape != theirs.shape or isinstance(input, PackedSequence):
        return None
    batched = input.dim() == 3
    mine, theirs = (mine, theirs) if batched else (mine.unsqueeze(1), theirs.unsqueeze(1))  # (L*D, B, H)
    D = 2 if module.bidirectional else 1
    width = theirs.shape[-1]
    said, outputs = [], {}
    for row in range(theirs.shape[0]):
        if _same_value(mine[row], theirs[row]):
            continue
        layer, direction = divmod(row, D)
        if layer not in outputs:
            upto = layer_parts.layers(module, 0, layer + 1)
            with torch.no_grad():
                output = upto(input, layer_parts.rows(hx, slice(0, (layer + 1) * D)))[0]
            output = output if batched else output.unsqueeze(1)
            outputs[layer] = output.transpose(0, 1) if module.batch_first and batched else output  # (T, B, D*H)
        states = outputs[layer][..., direction * width : (direction + 1) * width]  # (T, B, H)
        T = states.shape[0]
        last = 0 if direction else T - 1
        where = _where_row(layer, direction, D)
        step = next((t for t in range(T) if t != last and _same_value(mine[row], states[t])), None)
        other = next((r for r in range(theirs.shape[0]) if r != row and _same_value(mine[row], theirs[r])), None)
        if step is not None:
            said.append(
                f"your h_n[{row}] is {where}'s state after step t = {step}; torch's h_n[{row}] is its state after the "
                f"last step it computes, t = {last}" + (" (the backward run ends at t = 0)" if direction else "")
            )
        elif other is not None:
            said.append(f"your h_n[{row}] is torch's h_n[{other}], {_where_row(*divmod(other, D), D)}'s final state")
        else:
            return None
    return "; ".join(said) + "." if said else None


def _where_row(layer, direction, D):
    return f"layer {layer}" + ((" backward" if direction else " forward") if D == 2 else "")


__all__ = ["ATOL", "Diagnosis", "diagnose"]
