"""numpy peer for `make bench`: times the same workloads as bench_engine.c.
Prints one line per workload: NAME median_ms."""
import sys
import time

import numpy as np


def median_ms(fn, runs=7, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    n = 16 * 1024 * 1024
    a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    m = rng.standard_normal((4096, 4096), dtype=np.float32)
    p, q = (rng.standard_normal((1024, 1024), dtype=np.float32) for _ in range(2))
    p2, q2 = (rng.standard_normal((2048, 2048), dtype=np.float32) for _ in range(2))
    x = rng.standard_normal((128, 784), dtype=np.float32)
    w = rng.standard_normal((784, 256), dtype=np.float32)
    work = {
        "fused_chain_16M": lambda: np.maximum(a * b + c, 0) * np.float32(0.5),
        "rowsum_4096": lambda: m.sum(axis=1),
        "softmax_4096": lambda: softmax(m),
        "matmul_1024": lambda: p @ q,
        "matmul_2048": lambda: p2 @ q2,
        "matmul_128x784x256": lambda: x @ w,
    }
    for name in sys.argv[1:]:
        print(name, "%.3f" % median_ms(work[name]), flush=True)


if __name__ == "__main__":
    main()
