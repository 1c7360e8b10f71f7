"""Check benchmarks/wrong_versions_blind4.py against torch directly, never through check_code or diagnose.

Each wrong version must differ from the worked answer (an exercise) or from torch's layer (a diagnose
case) in values, shape, type, dtype, gradients, an error, or an argument changed in place, on the
case given: for an exercise, on inputs of the kinds its statement names; for a diagnose case, on the
case itself, or on the same kind of layer built from another seed (a notebook global read instead
of an argument shows only there). Each right version must match within 1e-5 everywhere. Exits
non-zero on any failure. Run: cd benchmarks && python verify_blind4.py (-v lists every version's first difference)
"""

import copy
import re
import sys
import warnings

import torch
import wrong_versions_blind4 as blind4
from torch import nn
from torch.nn import functional
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

TOLERANCE = 1e-5
warnings.filterwarnings("ignore")
torch.set_num_threads(1)


# ---- the worked answers (as helpers.exercises.solution prints them) ---------------------------


def ref_01(x_t, h_prev, w_ih, w_hh):
    return torch.tanh(w_ih * x_t + w_hh * h_prev)


def ref_loop(module, input, hx=None):
    return module(input, hx)


def ref_03(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    return torch.tanh(x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)


def ref_06(output, hidden_size):
    H = hidden_size
    return torch.stack([output[:, -1, :H], output[:, 0, H:]])


def ref_08(output, lengths):
    return output[lengths - 1, torch.arange(output.shape[1])]


def ref_10(x_t, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh):
    a_i, a_f, a_g, a_o = (x_t @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    c_t = f * c_prev + i * g
    return o * torch.tanh(c_t), c_t


def ref_11(x_t, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3)
    W_hr, W_hz, W_hn = W_hh.chunk(3)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x_t @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x_t @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x_t @ W_in.T + b_in + r * (h_prev @ W_hn.T + b_hn))
    return (1 - z) * n + z * h_prev


def ref_12(delta_t, h_t, W_hh):
    return (delta_t * (1 - h_t**2)) @ W_hh


def ref_13(scores, tags, lengths):
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]
    return functional.cross_entropy(scores[is_real], tags[is_real])


# ---- inputs of the kinds each statement names --------------------------------------------------


def g(seed):
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed=0, scale=1.0):
    return scale * torch.randn(shape, generator=g(seed))


def cases_01():
    w_ih, w_hh = torch.tensor(0.5), torch.tensor(-1.0)
    h = torch.tensor(0.0)
    for x in (1.0, 2.0):
        h = torch.tanh(w_ih * x + w_hh * h)
    yield (torch.tensor(3.0), h, w_ih, w_hh)  # step 3 of notebook 01's table
    yield (randn(4, seed=1), randn(4, seed=2), torch.tensor(0.7), torch.tensor(0.3))  # four values at once
    yield (torch.tensor(-0.4), torch.tensor(0.6), torch.tensor(1.3), torch.tensor(0.8))
    yield (randn(4, seed=3), randn(4, seed=4), torch.tensor(-0.9), torch.tensor(1.1))


def rnn_cases(bidirectional=False, layers=(1,)):
    specs = [(3, 1, 4, 1), (3, 4, 5, 2), (2, 5, 1, 3), (4, 4, 6, 3), (3, 2, 3, 4)]
    for n, (inp, hid, T_, B_) in enumerate(specs):
        for L in layers:
            for with_hx in (False, True):
                torch.manual_seed(100 + n)
                module = nn.RNN(inp, hid, L, bidirectional=bidirectional)
                x = randn(T_, B_, inp, seed=200 + n)
                D = 2 if bidirectional else 1
                hx = randn(L * D, B_, hid, seed=300 + n) if with_hx else None
                yield module, x, hx


def cases_03():
    for n, (B_, n_in, H_) in enumerate([(1, 3, 4), (3, 4, 4), (2, 2, 5), (4, 5, 3), (4, 1, 4), (2, 3, 1)]):
        yield (
            randn(B_, n_in, seed=n),
            randn(B_, H_, seed=10 + n, scale=0.5),
            randn(H_, n_in, seed=20 + n, scale=0.5),
            randn(H_, H_, seed=30 + n, scale=0.5),
            randn(H_, seed=40 + n, scale=0.3),
            randn(H_, seed=50 + n, scale=0.3),
        )


def cases_06():
    for n, (B_, T_, H_) in enumerate([(15, 5, 50), (2, 3, 4), (4, 1, 1), (1, 6, 3), (3, 3, 2)]):
        yield (randn(B_, T_, 2 * H_, seed=n), H_)


def cases_08():
    for n, lengths in enumerate([[4, 3, 2], [2, 5, 1, 3], [6, 6], [1, 3, 2, 3, 1]]):
        lengths = torch.tensor(lengths)
        T_, B_, H_ = int(lengths.max()), len(lengths), [1, 3, 4, 2][n]
        out = randn(T_, B_, H_, seed=n)
        out = out * (torch.arange(T_)[:, None] < lengths).unsqueeze(2)  # zeros in the padding
        yield (out, lengths)


def cases_10():
    for n, (B_, n_in, H_) in enumerate([(1, 1, 1), (3, 2, 4), (2, 4, 4), (5, 3, 2)]):
        b_hh = torch.zeros(4 * H_) if n == 0 else randn(4 * H_, seed=60 + n, scale=0.5)
        yield (
            randn(B_, n_in, seed=n),
            randn(B_, H_, seed=10 + n, scale=0.5),
            randn(B_, H_, seed=20 + n),
            randn(4 * H_, n_in, seed=30 + n, scale=0.7),
            randn(4 * H_, H_, seed=40 + n, scale=0.7),
            randn(4 * H_, seed=50 + n, scale=0.5),
            b_hh,
        )


def cases_11():
    for n, (B_, n_in, H_) in enumerate([(1, 1, 1), (3, 2, 4), (2, 3, 3), (4, 2, 5)]):
        yield (
            randn(B_, n_in, seed=n),
            randn(B_, H_, seed=10 + n, scale=0.5),
            randn(3 * H_, n_in, seed=30 + n, scale=0.7),
            randn(3 * H_, H_, seed=40 + n, scale=0.7),
            randn(3 * H_, seed=50 + n, scale=0.5),
            randn(3 * H_, seed=60 + n, scale=0.5),  # a non-zero b_hn
        )


def cases_12():
    for n, (B_, H_) in enumerate([(1, 1), (3, 4), (2, 5), (1, 3)]):
        yield (randn(B_, H_, seed=n), torch.tanh(randn(B_, H_, seed=10 + n)), randn(H_, H_, seed=20 + n))


def cases_13():
    for n, (lengths, C) in enumerate([([7, 5, 3, 6], 2), ([5, 2, 4], 4), ([6, 6], 3), ([4, 1, 3, 2, 4], 2)]):
        lengths = torch.tensor(lengths)
        B_, T_ = len(lengths), int(lengths.max())
        scores = randn(B_, T_, C, seed=n)
        tags = torch.randint(0, C, (B_, T_), generator=g(10 + n))  # anything in the padding, 0 included
        yield (scores, tags, lengths)


# ---- random cases of varied sizes, on top of the fixed ones -------------------------------------


def sizes(seed, n, *ranges):
    """n lists of random integers, one from each inclusive (lo, hi) range."""
    gen = g(seed)
    for _ in range(n):
        yield [int(torch.randint(lo, hi + 1, (), generator=gen)) for lo, hi in ranges]


def random_01():
    for n, (k,) in enumerate(sizes(501, 3, (1, 6))):
        yield (randn(k, seed=510 + n), randn(k, seed=520 + n), randn(seed=530 + n), randn(seed=540 + n))


def random_rnn(bidirectional=False, layers=(1,)):
    for n, (inp, hid, T_, B_) in enumerate(sizes(502, 3, (1, 5), (2, 6), (1, 6), (1, 4))):
        for L in layers:
            torch.manual_seed(550 + n)
            module = nn.RNN(inp, hid, L, bidirectional=bidirectional)
            D = 2 if bidirectional else 1
            yield module, randn(T_, B_, inp, seed=560 + n), randn(L * D, B_, hid, seed=570 + n)


def random_03():
    for n, (B_, n_in, H_) in enumerate(sizes(503, 4, (1, 5), (1, 6), (2, 6))):
        yield (
            randn(B_, n_in, seed=580 + n),
            randn(B_, H_, seed=590 + n, scale=0.5),
            randn(H_, n_in, seed=600 + n, scale=0.5),
            randn(H_, H_, seed=610 + n, scale=0.5),
            randn(H_, seed=620 + n, scale=0.3),
            randn(H_, seed=630 + n, scale=0.3),
        )


def random_06():
    for n, (B_, T_, H_) in enumerate(sizes(506, 4, (1, 5), (2, 6), (1, 6))):
        yield (randn(B_, T_, 2 * H_, seed=640 + n), H_)


def random_08():
    for n, (B_, T_, H_) in enumerate(sizes(508, 4, (2, 5), (2, 6), (1, 4))):
        lengths = torch.randint(1, T_ + 1, (B_,), generator=g(650 + n))
        lengths[int(torch.randint(0, B_, (), generator=g(660 + n)))] = T_  # the padded output is as long as the longest
        out = randn(T_, B_, H_, seed=670 + n)
        out = out * (torch.arange(T_)[:, None] < lengths).unsqueeze(2)
        yield (out, lengths)


def random_10():
    for n, (B_, n_in, H_) in enumerate(sizes(510, 3, (1, 5), (1, 5), (2, 5))):
        yield (
            randn(B_, n_in, seed=680 + n),
            randn(B_, H_, seed=690 + n, scale=0.5),
            randn(B_, H_, seed=700 + n),
            randn(4 * H_, n_in, seed=710 + n, scale=0.7),
            randn(4 * H_, H_, seed=720 + n, scale=0.7),
            randn(4 * H_, seed=730 + n, scale=0.5),
            randn(4 * H_, seed=740 + n, scale=0.5),
        )


def random_11():
    for n, (B_, n_in, H_) in enumerate(sizes(511, 3, (1, 5), (1, 5), (2, 5))):
        yield (
            randn(B_, n_in, seed=750 + n),
            randn(B_, H_, seed=760 + n, scale=0.5),
            randn(3 * H_, n_in, seed=770 + n, scale=0.7),
            randn(3 * H_, H_, seed=780 + n, scale=0.7),
            randn(3 * H_, seed=790 + n, scale=0.5),
            randn(3 * H_, seed=800 + n, scale=0.5),
        )


def random_12():
    for n, (B_, H_) in enumerate(sizes(512, 3, (1, 5), (2, 6))):
        yield (randn(B_, H_, seed=810 + n), torch.tanh(randn(B_, H_, seed=820 + n)), randn(H_, H_, seed=830 + n))


def random_13():
    for n, (B_, T_, C) in enumerate(sizes(513, 3, (1, 5), (2, 7), (2, 5))):
        lengths = torch.randint(1, T_ + 1, (B_,), generator=g(840 + n))
        scores = randn(B_, T_, C, seed=850 + n)
        tags = torch.randint(0, C, (B_, T_), generator=g(860 + n))
        yield (scores, tags, lengths)


def chain(*makers):
    """The cases of each maker in turn."""

    def cases():
        for make in makers:
            yield from make()

    return cases


EXERCISES = {
    "01.step": (ref_01, chain(cases_01, random_01)),
    "02.loop": (ref_loop, chain(rnn_cases, random_rnn)),
    "03.step_matrices": (ref_03, chain(cases_03, random_03)),
    "04.bidirectional": (
        ref_loop,
        chain(lambda: rnn_cases(bidirectional=True), lambda: random_rnn(bidirectional=True)),
    ),
    "05.stack": (ref_loop, chain(lambda: rnn_cases(layers=(2, 3)), lambda: random_rnn(layers=(2, 3)))),
    "06.top_h_n": (ref_06, chain(cases_06, random_06)),
    "08.last_states": (ref_08, chain(cases_08, random_08)),
    "10.step": (ref_10, chain(cases_10, random_10)),
    "11.step": (ref_11, chain(cases_11, random_11)),
    "12.bptt_step": (ref_12, chain(cases_12, random_12)),
    "13.tag_loss": (ref_13, chain(cases_13, random_13)),
}


# ---- comparison --------------------------------------------------------------------------------


def flatten(value):
    """The tensors of a result, in order, with a description of its structure."""
    if isinstance(value, PackedSequence):
        padded, lengths = pad_packed_sequence(value)
        return ["packed"], [padded, lengths]
    if isinstance(value, torch.Tensor):
        return ["tensor"], [value]
    if isinstance(value, (tuple, list)):
        kinds, tensors = [f"{type(value).__name__}{len(value)}"], []
        for item in value:
            k, t = flatten(item)
            kinds += k
            tensors += t
        return kinds, tensors
    return [type(value).__name__], []


def differ(got, want):
    """A reason the two results differ, or None."""
    kinds_got, got_t = flatten(got)
    kinds_want, want_t = flatten(want)
    if kinds_got != kinds_want:
        return f"structure {kinds_got} vs {kinds_want}"
    for a, b in zip(got_t, want_t):
        if a.shape != b.shape:
            return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
        if a.dtype != b.dtype:
            return f"dtype {a.dtype} vs {b.dtype}"
        if not torch.allclose(a.detach().double(), b.detach().double(), atol=TOLERANCE, rtol=TOLERANCE):
            return f"values (max diff {(a.detach().double() - b.detach().double()).abs().max():.3g})"
    return None


def weighted_sum(value):
    _, tensors = flatten(value)
    total = 0
    for n, t in enumerate(tensors):
        if t.is_floating_point() and t.requires_grad:
            total = total + (t * randn(*t.shape, seed=900 + n).to(t.dtype)).sum()
    return total


def clone_args(args, grad):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            a = a.detach().clone()
            if grad and a.is_floating_point():
                a.requires_grad_()
        out.append(a)
    return out


def run_exercise(fn, ref, args):
    """A reason fn differs from ref on args (values, in-place changes, gradients), or None."""
    # 1. without autograd: values, types, in-place changes of the arguments
    mine, theirs = clone_args(args, False), clone_args(args, False)
    try:
        got = fn(*mine)
    except Exception as error:
        return f"error {type(error).__name__}: {str(error)[:60]}"
    want = ref(*theirs)
    reason = differ(got, want)
    if reason:
        return reason
    for n, (a, b) in enumerate(zip(mine, args)):
        if isinstance(a, torch.Tensor) and (a.shape != b.shape or not torch.equal(a, b)):
            return f"argument {n} changed in place"
    # 2. with autograd: gradients of every float argument
    mine, theirs = clone_args(args, True), clone_args(args, True)
    try:
        got = fn(*mine)
        loss = weighted_sum(got)
        grads = (
            torch.autograd.grad(
                loss, [a for a in mine if isinstance(a, torch.Tensor) and a.requires_grad], allow_unused=True
            )
            if torch.is_tensor(loss) and loss.requires_grad
            else None
        )
    except Exception as error:
        return f"error with grad {type(error).__name__}: {str(error)[:60]}"
    want = ref(*theirs)
    reason = differ(got, want)
    if reason:
        return "with grad: " + reason
    want_grads = torch.autograd.grad(
        weighted_sum(want), [a for a in theirs if isinstance(a, torch.Tensor) and a.requires_grad], allow_unused=True
    )
    if grads is None:
        return "no gradient"
    for a, b in zip(grads, want_grads):
        if (a is None) != (b is None):
            return "gradient missing"
        if a is not None and not torch.allclose(a, b, atol=TOLERANCE, rtol=TOLERANCE):
            return "gradients"
    return None


def run_module(fn, module, x, hx):
    """A reason fn(module, x, hx) differs from module(x, hx), or None."""
    theirs = copy.deepcopy(module)
    before = {name: p.detach().clone() for name, p in module.named_parameters()}
    x_before = x.data.clone() if isinstance(x, PackedSequence) else x.clone()
    hx_before = None if hx is None else [t.clone() for t in (hx if isinstance(hx, tuple) else (hx,))]
    module.zero_grad()
    try:
        got = fn(module, x, hx)
        loss = weighted_sum(got)
        if torch.is_tensor(loss) and loss.requires_grad:
            loss.backward()
    except Exception as error:
        return f"error {type(error).__name__}: {str(error)[:60]}"
    want = theirs(x, None if hx is None else copy.deepcopy(hx))
    reason = differ(got, want)
    if reason:
        return reason
    x_after = x.data if isinstance(x, PackedSequence) else x
    if not torch.equal(x_after, x_before):
        return "input changed in place"
    if hx is not None and any(not torch.equal(a, b) for a, b in zip(hx if isinstance(hx, tuple) else (hx,), hx_before)):
        return "hx changed in place"
    if any(not torch.equal(p.detach(), before[name]) for name, p in module.named_parameters()):
        return "parameters changed in place"
    weighted_sum(want).backward()
    for (name, p), q in zip(module.named_parameters(), theirs.parameters()):
        if (p.grad is None) != (q.grad is None):
            return f"gradient of {name} missing"
        if p.grad is not None and not torch.allclose(p.grad, q.grad, atol=TOLERANCE, rtol=TOLERANCE):
            return f"gradient of {name}"
    return None


def module_runs(build):
    """The case itself, then the same kind of layer from two other seeds (not published as the notebook's)."""
    yield build()
    spec = dict(build.spec)
    for seed in (spec["seed"] + 1000, spec["seed"] + 2000):
        spec.update(seed=seed, publish=False)
        kind, inp, hid, L = spec.pop("kind"), spec.pop("input_size"), spec.pop("hidden_size"), spec.pop("num_layers")
        yield blind4.case(kind, inp, hid, L, **spec)()
        spec.update(kind=kind, input_size=inp, hidden_size=hid, num_layers=L)


def check(version):
    """For a wrong version, the first difference found (None if none); for a right one, the first too."""
    if isinstance(version.target, str):
        ref, cases = EXERCISES[version.target]
        for args in cases():
            if isinstance(args[0], nn.Module):
                reason = run_module(version.fn, *args)
            else:
                reason = run_exercise(version.fn, ref, args)
            if reason:
                return reason
        return None
    for module, x, hx in module_runs(version.target):
        reason = run_module(version.fn, module, x, hx)
        if reason:
            return reason
    return None


def record_problems():
    """Records that cannot be judged: a wrong version without names, a name that does not compile, a name used twice."""
    problems, seen = [], set()
    for version in blind4.VERSIONS:
        if version.name in seen:
            problems.append(f"version name {version.name} used twice")
        seen.add(version.name)
        if not version.correct and not version.names:
            problems.append(f"WRONG version {version.name} has no names")
        for pattern in version.names:
            try:
                re.compile(pattern, re.IGNORECASE)
            except re.error as error:
                problems.append(f"version {version.name}: name {pattern!r} does not compile ({error})")
        if (
            not version.correct
            and version.names
            and not any(re.search(p, version.bug, re.IGNORECASE) for p in version.names)
        ):
            problems.append(f"WRONG version {version.name}: its own bug line matches none of its names")
    return problems


def main():
    failures, counts = record_problems(), {}
    for version in blind4.VERSIONS:
        target = version.target if isinstance(version.target, str) else version.target.label
        wrong_count, right_count = counts.get(target, (0, 0))
        counts[target] = (wrong_count + (not version.correct), right_count + version.correct)
        reason = check(version)
        if version.correct and reason:
            failures.append(f"RIGHT version {version.name} ({target}) differs: {reason}")
        elif not version.correct and not reason:
            failures.append(f"WRONG version {version.name} ({target}) matches everywhere")
        elif "-v" in sys.argv:
            print(f"{'right' if version.correct else 'wrong'} {version.name}: {reason or 'matches'}")
    for target, (w, r) in counts.items():
        print(f"{w:3d} wrong {r:2d} right  {target}")
    n_wrong = sum(not v.correct for v in blind4.VERSIONS)
    n_right = sum(v.correct for v in blind4.VERSIONS)
    print(f"{n_wrong} wrong, {n_right} right; {len(failures)} failures")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
