"""What bench/peer_jax.py and bench/peer_tinygrad.py share: the thread pin, the timing
rule and the workloads' data (as bench/peer_numpy.py and bench/peer_torch_train.py)."""
import os
import sys
import time

import numpy as np

BATCH, IN, HID, OUT = 128, 784, 256, 10
BENCH_MIN_MS = 50  # the least time a line's timed calls take together
TRAIN_WARMUP, TRAIN_ITERS = 3, 20


def pin_threads(n):
    """Limits this process to n of its cores, before the peer is imported: XLA and
    tinygrad size their thread pools by the schedulable cores (sched_getaffinity);
    XLA's --xla_cpu_multi_thread_eigen=false does not stop its thunk runtime from
    spreading a program over several threads."""
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cores[:max(1, n)])


def timed_runs(last_ms, runs=7, budget_ms=5000, min_ms=BENCH_MIN_MS):
    """How many calls to time, one call taking last_ms: `runs`; more when they would
    last under min_ms together (a sub-millisecond product: 7 calls were 2 ms, at the
    mercy of one interruption), at most 501; fewer, at least 3, past budget_ms. Odd.
    bench_engine.c's time_tl follows the same rule."""
    last_ms = max(last_ms, 1e-3)
    n = max(runs, min(501, int(min_ms / last_ms)))
    return max(3, min(n, int(budget_ms / last_ms))) | 1


def median_ms(fn, runs=7, warmup=2, budget_ms=5000):
    """The median of timed_runs calls after `warmup` (compiling) ones."""
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        last = (time.perf_counter() - t0) * 1e3
    runs = timed_runs(last, runs, budget_ms)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


SHAPES = {
    "fused_chain_16M": [(16 * 1024 * 1024,)] * 3,
    "softmax_4096": [(4096, 4096)],
    "matmul_1024": [(1024, 1024)] * 2,
    "matmul_2048": [(2048, 2048)] * 2,
    "matmul_128x784x256": [(128, 784), (784, 256)],
}


def inputs(name):
    """N(0,1) f32 operands of bench_engine.c's workload `name`"""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s, dtype=np.float32) for s in SHAPES[name]]


def mlp_init():
    """bench_train.c's MLP 784-256-256-10: kaiming normal weights, zero biases, a batch
    of N(0,1) inputs and fixed labels"""
    rng = np.random.default_rng(0)
    dims = [IN, HID, HID, OUT]
    ws = [rng.standard_normal((dims[i], dims[i + 1]), dtype=np.float32) * np.float32(np.sqrt(2.0 / dims[i]))
          for i in range(3)]
    bs = [np.zeros(dims[i + 1], np.float32) for i in range(3)]
    x = rng.standard_normal((BATCH, IN), dtype=np.float32)
    y = rng.integers(0, OUT, BATCH).astype(np.int32)
    return ws, bs, x, y


def train_median_ms(step):
    """step() runs one training step and returns the loss read back as a float; the median
    of TRAIN_ITERS steps after TRAIN_WARMUP; fails when the loss does not go down"""
    times, first, last = [], None, None
    for i in range(TRAIN_WARMUP + TRAIN_ITERS):
        t0 = time.perf_counter()
        last = step()
        if i >= TRAIN_WARMUP:
            times.append((time.perf_counter() - t0) * 1e3)
        if first is None:
            first = last
    if not (np.isfinite(last) and last < first):
        sys.exit("train_step_mlp: loss %g -> %g: not training" % (first, last))
    times.sort()
    return times[len(times) // 2]


def main(module, work):
    """argv: THREADS NAME...; prints `NAME MEDIAN_MS` per workload, or `missing MODULE`
    when the peer is not installed. work(names) -> {name: ms-returning callable}"""
    pin_threads(int(sys.argv[1]))
    try:
        __import__(module)
    except ImportError:
        print("missing", module, flush=True)
        return
    names = sys.argv[2:]
    for name, run in work(names).items():
        print(name, "%.3f" % run(), flush=True)
