#!/usr/bin/env python3
"""Run the seed TL language's programs (JunSuzukiJapan/tl) through build/tl.

usage: tools/seed_corpus.py SEED_DIR [--tl build/tl] [--timeout S] [-j N]
                            [--train [--train-timeout S]]
                            [--list] [--fails] [--top K] [--only SUBSTR]

SEED_DIR is an extracted copy of that repository (e.g. `git --git-dir=MIRROR
archive HEAD | tar -x -C /tmp/seedtl`); nothing of it belongs in this tree.
The corpus: every .tl file outside src/ with a `fn main(` at a line's start,
less those that need a downloaded model or data set (they mention
File::download, ~/.llm/ models, a /Users/ path, or MNIST's files).
A program passes when `tl run` exits 0 within the timeout, its stdout equals
NAME.expected where that file ships, and every line of its `// STDOUT:`
comments appears in its stdout, in order. A program whose `// EXIT: N` line
(the seed's own test harness, tests/integration.rs) expects N != 0 is an error
test: it passes when `tl run` exits N (its `// STDERR:` lines are the seed's
wording, not checked), and running to exit 0 is a failure (as text: the seed's `print` writes
no newline, so one output line may hold several of them). Programs run in a fresh copy of SEED_DIR
(their data paths are relative to the repository's root, and some write files there),
so no run sees what an earlier run left.
The tasks' trainers (examples/tasks/*/*train*.tl) write the weights their inference
programs load, so they run first and the other programs after them. The transformer
tasks' trainers run 10,000 or more steps: with --train each gets --train-timeout
(default 1800 s); without it the usual timeout ends them, and their inference
programs find no weights.
The last line is `N of M run`.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

TRAINER = re.compile(r"^examples/tasks/[^/]+/[^/]*train[^/]*\.tl$")
NEEDS_DOWNLOAD = re.compile(r"File::download|\.llm/|/Users/|mnist")
HAS_MAIN = re.compile(r"^\s*(pub\s+)?fn\s+main\s*\(", re.M)
STDOUT_LINE = re.compile(r"^\s*//\s*STDOUT:\s?(.*)$")
EXIT_LINE = re.compile(r"^\s*//\s*EXIT:\s*(-?\d+)\s*$", re.M)


def corpus(seed):
    progs = []
    for root, dirs, files in os.walk(seed):
        rel = os.path.relpath(root, seed)
        if rel == "src" or rel.startswith("src" + os.sep) or "/." in root:
            continue
        for f in files:
            if not f.endswith(".tl"):
                continue
            path = os.path.join(root, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if HAS_MAIN.search(text) and not NEEDS_DOWNLOAD.search(text):
                progs.append((os.path.relpath(path, seed), text))
    return sorted(progs)


def stdout_lines(text):
    """The lines a program's `// STDOUT:` comments promise (one per comment)."""
    out = []
    for line in text.splitlines():
        m = STDOUT_LINE.match(line)
        if m and m.group(1).strip():
            out.append(m.group(1).rstrip())
    return out


def first_error(stderr, stdout, rc):
    """The first `error:` line (warnings come before it), else the first line."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l] or lines
    if errs:
        # file:line:col: prefixes differ per program; keep the message
        return re.sub(r"^\S+?:\d+:\d+:\s*", "", errs[0])[:140]
    if rc < 0:
        return "killed by signal %d" % -rc
    return "exit %d, no message" % rc


def run_one(args, rel, text):
    seed = args.seed
    timeout = args.train_timeout if args.train and TRAINER.match(rel) else args.timeout
    try:
        p = subprocess.run([args.tl, "run", rel], cwd=seed, capture_output=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return rel, False, "timeout (%gs)" % timeout
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    m = EXIT_LINE.search(text)
    want_exit = int(m.group(1)) if m else 0
    if want_exit != 0:  # an error test: the seed expects this exit status
        if p.returncode == want_exit:
            return rel, True, ""
        return rel, False, "expected exit %d (an error test), got %d" % (want_exit, p.returncode)
    if p.returncode != 0:
        return rel, False, first_error(err, out, p.returncode)
    exp = os.path.join(seed, rel[:-3] + ".expected")
    if os.path.exists(exp):
        with open(exp, encoding="utf-8", errors="replace") as fh:
            want = fh.read()
        if want.rstrip("\n") != out.rstrip("\n"):
            return rel, False, "output differs from .expected"
    # in order, each anywhere after the last: the seed's own `print` writes no newline,
    # so its comments list values that share one output line (math.tl: "30", "50.5")
    at = 0
    for w in stdout_lines(text):
        k = out.find(w, at)
        if k < 0:
            return rel, False, "missing // STDOUT: line"
        at = k + len(w)
    return rel, True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed")
    ap.add_argument("--tl", default=os.path.abspath("build/tl"))
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--train", action="store_true",
                    help="give the tasks' trainers --train-timeout")
    ap.add_argument("--train-timeout", type=float, default=1800.0)
    ap.add_argument("--list", action="store_true", help="print each program's result")
    ap.add_argument("--fails", action="store_true", help="print each failing program")
    ap.add_argument("--top", type=int, default=0, help="show only the K commonest errors")
    ap.add_argument("--only", default="", help="run programs whose path contains this")
    args = ap.parse_args()
    args.tl = os.path.abspath(args.tl)
    source = os.path.abspath(args.seed)
    progs = [p for p in corpus(source) if args.only in p[0]]
    scratch = tempfile.mkdtemp(prefix="tl-seed-corpus-")
    args.seed = os.path.join(scratch, "seed")
    try:
        shutil.copytree(source, args.seed, symlinks=True)
        trainers = [p for p in progs if TRAINER.match(p[0])]
        rest = [p for p in progs if not TRAINER.match(p[0])]
        results = []
        for phase in (trainers, rest):  # the inference programs read what trainers wrote
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as ex:
                results += list(ex.map(lambda p: run_one(args, *p), phase))
        results.sort()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    passed = sum(1 for _, ok, _ in results if ok)
    if args.list:
        for rel, ok, why in results:
            print("%-4s %s%s" % ("ok" if ok else "FAIL", rel, "" if ok else "  " + why))
    counts = collections.Counter(why for _, ok, why in results if not ok)
    byerr = collections.defaultdict(list)
    for rel, ok, why in results:
        if not ok:
            byerr[why].append(rel)
    print("| count | first error |")
    print("|---|---|")
    for why, n in counts.most_common(args.top or None):
        print("| %d | %s |" % (n, why.replace("|", "\\|")))
        if args.fails:
            for rel in byerr[why]:
                print("|   | %s |" % rel)
    print("%d of %d run" % (passed, len(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
