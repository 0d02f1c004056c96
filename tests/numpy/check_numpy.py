#!/usr/bin/python3
"""check_numpy.py: the differential test's random graphs recomputed with numpy.

in: the records of build/check_numpy (leaves, ops with their result dtypes, each
backend's result as f64); out: one line per mismatch (seed, backend, where) and a
summary. Usage: check_numpy.py BINARY [COUNT [JOBS [MODE]]] (make check-numpy)."""
import math
import subprocess
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty axis is NaN, as in tl

DT = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def cast(x, dt):
    """TL's casts: float to integer saturates, NaN gives 0; to bool is != 0"""
    x = np.asarray(x)
    if dt == np.bool_:
        return x != 0
    if np.issubdtype(dt, np.integer) and np.issubdtype(x.dtype, np.floating):
        info = np.iinfo(dt)
        y = np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
        out = np.empty(y.shape, dt)
        hi, lo = y >= float(info.max), y <= float(info.min)
        mid = ~(hi | lo)
        out[hi], out[lo] = info.max, info.min
        out[mid] = np.trunc(y[mid]).astype(dt)
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dt)


def axes_of(nd, raw):
    return tuple(sorted({a + nd if a < 0 else a for a in raw}))


ERF = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    """x Phi(x) with Python's math.erf, in f64, rounded once to x's dtype"""
    w = x.astype(np.float64)
    return (0.5 * w * (1 + ERF(w / math.sqrt(2)))).astype(x.dtype)


def sigmoid(x):
    """in f64 without overflow (e^x / (1 + e^x) for x < 0: sigmoid(-100) is 3.8e-44)"""
    w = x.astype(np.float64)
    e = np.exp(-np.abs(w))
    return (np.where(w < 0, e, 1.0) / (1 + e)).astype(x.dtype)


def softmax(x, ax):
    if x.shape[ax] == 0:  # nothing to normalize (torch: an empty result; numpy's max fails)
        return x.copy()
    m = np.max(x, axis=ax, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=ax, keepdims=True)


def log_softmax(x, ax):
    if x.shape[ax] == 0:
        return x.copy()
    m = np.max(x, axis=ax, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True))


UNARY = {
    "neg": lambda x: -x,
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": lambda x: sigmoid(x),
    "relu": lambda x: np.where(x > 0, x, x.dtype.type(0)),
    "abs": np.abs,
    "gelu": lambda x: gelu(x),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x * x * x))),
}
BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": lambda a, b: np.where(a > b, a, b),
    "minimum": lambda a, b: np.where(a < b, a, b),
    "matmul": np.matmul,
}


NAME = {v: k for k, v in DT.items()}
ORDER = ["bool", "i32", "i64", "f32", "f64"]


def promoted(op, ins):
    """the result dtype torch's rule gives (LANGUAGE.md §3, docs/c-api.md), or None
    for the ops not checked: two tensors (a 0-d one too) the wider of bool < i32 < i64
    < f32 < f64 (torch.promote_types; an i64 with an f32 is f32, where numpy says f64);
    a double scalar is a float (a Python float in torch): f32 with a bool or integer
    tensor. TL's own choices: arithmetic on two bools is i32, integer / integer stays
    integer (docs/c-api.md)."""
    dts = [NAME[i.dtype.type] for i in ins]
    if op in ("add_scalar", "mul_scalar"):
        return dts[0] if dts[0] in ("f32", "f64") else "f32"
    if op in ("lt", "ge"):
        return "bool"
    if op == "where":
        dts = dts[1:]
    elif op not in ("add", "sub", "mul", "div", "maximum", "minimum", "matmul"):
        return None
    wide = max(dts, key=ORDER.index)
    if wide == "bool" and op in ("add", "sub", "mul", "div", "matmul"):
        return "i32"
    return wide


# set while a graph is evaluated: it compares values equal within rounding (an
# argmax over a tie, lt/ge of nearly equal values), so a discontinuous result may
# differ from numpy's without either being wrong: counted apart, not a mismatch
AMBIGUOUS = [False]


def apply(op, dt, ins, ints, flts):
    a = ins[0] if ins else None
    if op in UNARY:
        return UNARY[op](cast(a, dt))
    if op in BINARY:
        return BINARY[op](cast(a, dt), cast(ins[1], dt))
    if op in ("lt", "ge"):
        wide = np.float64 if any(np.issubdtype(i.dtype, np.floating) for i in ins) else np.int64
        x, y = np.broadcast_arrays(ins[0].astype(wide), ins[1].astype(wide))
        fin = np.isfinite(x) & np.isfinite(y) if wide == np.float64 else np.ones(x.shape, bool)
        if (fin & (np.abs(x - y) <= 1e-5 * np.abs(y) + 1e-6) & (x != y)).any():
            AMBIGUOUS[0] = True  # operands equal within rounding, not exactly
        return x < y if op == "lt" else x >= y
    if op == "where":
        return np.where(ins[0].astype(bool), cast(ins[1], dt), cast(ins[2], dt))
    if op == "add_scalar":
        return cast(a, dt) + dt(flts[0])
    if op == "mul_scalar":
        return cast(a, dt) * dt(flts[0])
    if op == "cast":
        return cast(a, dt)
    if op in ("sum", "max", "min", "mean"):
        kd, ax = bool(ints[0]), (axes_of(a.ndim, ints[2:]) if ints[1] else None)
        x = cast(a, dt)
        f = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}[op]
        return f(x, axis=ax, keepdims=kd).astype(dt)
    if op in ("argmax", "argmin"):
        ax = ints[0] + a.ndim if ints[0] < 0 else ints[0]
        w = a.astype(np.float64) * (1 if op == "argmax" else -1)
        m = np.max(w, axis=ax, keepdims=True)
        if np.isfinite(m).all() and (np.sum(m - w <= 1e-5 * np.abs(m) + 1e-6, axis=ax) > 1).any():
            AMBIGUOUS[0] = True  # a maximum tied within rounding: either index is right
        f = np.argmax if op == "argmax" else np.argmin
        return f(a, axis=ax, keepdims=bool(ints[1])).astype(np.int64)
    if op in ("softmax", "log_softmax"):
        f = softmax if op == "softmax" else log_softmax
        return f(cast(a, dt), ints[0] + a.ndim if ints[0] < 0 else ints[0])
    if op == "reshape":
        return a.reshape(ints)
    if op == "expand":
        return np.broadcast_to(a, ints)
    if op == "permute":
        return np.transpose(a, ints)
    if op in ("shrink", "pad"):
        nd = a.ndim
        b, e = ints[:nd], ints[nd:]
        if op == "shrink":
            return a[tuple(slice(b[i], e[i]) for i in range(nd))]
        return np.pad(a, [(b[i], e[i]) for i in range(nd)], constant_values=cast(np.array(flts[0]), a.dtype.type))
    if op == "flip":
        return np.flip(a, axis=axes_of(a.ndim, ints))
    if op == "unsqueeze":
        return np.expand_dims(a, ints[0] + a.ndim + 1 if ints[0] < 0 else ints[0])
    if op == "slice":
        ax, start, stop, step = ints
        idx = [slice(None)] * a.ndim
        idx[ax] = slice(start, stop, step)
        return a[tuple(idx)]
    if op == "cat":
        return np.concatenate([cast(i, dt) for i in ins], axis=ints[0] + ins[0].ndim if ints[0] < 0 else ints[0])
    if op == "stack":
        return np.stack([cast(i, dt) for i in ins], axis=ints[0] + ins[0].ndim + 1 if ints[0] < 0 else ints[0])
    raise ValueError("unknown op " + op)


def close_enough(dt, got, want, special=False):
    """within rounding; in the special graphs a value below the smallest normal within
    two subnormal steps (a flushed 3.8e-44 is not 0)"""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    nan = np.isnan(got) | np.isnan(want)
    ok = np.where(nan, np.isnan(got) & np.isnan(want), True)
    inf = ~nan & (np.isinf(got) | np.isinf(want))
    ok &= np.where(inf, got == want, True)
    fin = ~nan & ~inf
    with np.errstate(invalid="ignore", over="ignore"):
        if dt == "f32":
            tol = 1e-4 + 2e-3 * np.abs(want)
        elif dt == "f64":
            tol = 1e-10 + 1e-9 * np.abs(want)
        else:
            tol = np.zeros_like(want)
        if special and dt in ("f32", "f64"):
            tiny, step = (np.finfo(np.float32).tiny, 2.0 ** -149) if dt == "f32" else (np.finfo(np.float64).tiny, 2.0 ** -1074)
            small = (np.abs(got) < tiny) | (np.abs(want) < tiny)
            tol = np.where(small, 2 * step, tol)
        ok &= np.where(fin, np.abs(got - want) <= tol, True)
    return ok


class Graph:
    def __init__(self, seed, mode="plain"):
        self.seed, self.vals, self.error, self.results, self.wrong_dtypes, self.mode = seed, {}, None, [], [], mode
        AMBIGUOUS[0] = False

    def line(self, f):
        if f[0] == "L":
            i, dt, nd = int(f[1]), DT[f[2]], int(f[3])
            shape = [int(x) for x in f[4:4 + nd]]
            if dt in (np.int32, np.int64):  # exactly: i64 leaves go past 2^53
                self.vals[i] = np.array([int(x) for x in f[4 + nd:]], dt).reshape(shape)
            else:
                self.vals[i] = np.array([float(x) for x in f[4 + nd:]], np.float64).astype(dt).reshape(shape)
        elif f[0] == "O":
            i, op, dt, nin = int(f[1]), f[2], DT[f[3]], int(f[4])
            ins = [self.vals[int(x)] for x in f[5:5 + nin]]
            k = 5 + nin
            nint = int(f[k])
            ints = [int(x) for x in f[k + 1:k + 1 + nint]]
            k += 1 + nint
            flts = [float(x) for x in f[k + 1:k + 1 + int(f[k])]]
            want = promoted(op, ins)
            if want is not None and want != f[3]:
                self.wrong_dtypes.append("%s of %s gives %s, torch's promotion %s" %
                                         (op, ", ".join(NAME[x.dtype.type] for x in ins), f[3], want))
            with np.errstate(all="ignore"):
                self.vals[i] = np.asarray(apply(op, dt, ins, ints, flts))
            if self.vals[i].dtype != dt:
                self.vals[i] = cast(self.vals[i], dt)
        elif f[0] == "E":  # tl refused the call (a max over an empty axis): numpy must too
            op, nin = f[2], int(f[4])
            ins = [self.vals[int(x)] for x in f[5:5 + nin]]
            k = 5 + nin
            ints = [int(x) for x in f[k + 1:k + 1 + int(f[k])]]
            try:
                with np.errstate(all="ignore"):
                    apply(op, ins[0].dtype.type, ins, ints, [])
            except ValueError:
                return
            self.results.append(["X", "numpy", "%s failed in tl, numpy computed it" % op])
        elif f[0] == "R":
            self.results.append(f)
        elif f[0] == "X":
            self.results.append(f)

    def check(self):
        """the mismatches, as text"""
        out, rid = ["dtype: " + w for w in self.wrong_dtypes[:1]], None
        for f in self.results:
            if f[0] == "X":
                out.append("%s: did not build or realize: %s" % (f[1], " ".join(f[2:])))
                continue
            rid = int(f[1]) if f[2] == "interp" else rid
            backend, dt, n = f[2], f[3], int(f[4])
            got = np.array([float(x) for x in f[5:5 + n]])
            want = self.vals.get(rid)
            if want is None:
                out.append("%s: no recorded result" % backend)
                continue
            want = want.astype(np.float64).reshape(-1)
            if want.size != n:
                out.append("%s: %d elements, numpy %d" % (backend, n, want.size))
                continue
            ok = close_enough(dt, got, want, self.mode == "special")
            if not ok.all():
                j = int(np.argmin(ok))
                out.append("%s: element %d of %d (%s): tl %.9g, numpy %.9g" % (backend, j, n, dt, got[j], want[j]))
        return out


def report(g, mode):
    """prints g's mismatches: (mismatches, 1 if it differed but is ambiguous)"""
    ms = g.check()
    if ms and AMBIGUOUS[0] and not g.wrong_dtypes and not any("did not build" in m for m in ms):
        print("ambiguous, seed %d (%s): %s" % (g.seed, mode, ms[0]), flush=True)
        return 0, 1
    for m in ms:
        print("mismatch, seed %d (%s): %s" % (g.seed, mode, m), flush=True)
    return len(ms), 0


def run(binary, lo, hi, mode):
    p = subprocess.Popen([binary, str(lo), str(hi), mode], stdout=subprocess.PIPE, text=True)
    return p


def main():
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    mode = sys.argv[4] if len(sys.argv) > 4 else "plain"
    first = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    bounds = [first + count * k // jobs for k in range(jobs + 1)]
    procs = [run(binary, bounds[k], bounds[k + 1], mode) for k in range(jobs)]
    graphs = bad = ambiguous = 0
    for p in procs:
        g = None
        for line in p.stdout:
            f = line.split()
            if not f:
                continue
            if f[0] == "G":
                if g:
                    graphs += 1
                    b, a = report(g, mode)
                    bad, ambiguous = bad + b, ambiguous + a
                g = Graph(int(f[1]), f[2] if len(f) > 2 else "plain")
            else:
                try:
                    g.line(f)
                except Exception as e:  # an op numpy cannot redo is a mismatch too
                    g.results.append(["X", "numpy", repr(e)])
        if g:
            graphs += 1
            b, a = report(g, mode)
            bad, ambiguous = bad + b, ambiguous + a
        if p.wait() != 0:
            print("check_numpy exited with %d" % p.returncode)
            bad += 1
    print("check-numpy: %d %s graphs, 2 backends each (interp, cpu), %d mismatches, %d graphs differing "
          "only after a comparison of values tied within rounding" % (graphs, mode, bad, ambiguous))
    sys.exit(1 if bad else 0)


main()
