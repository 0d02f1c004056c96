"""numpy peer for `make bench`: times the same workloads as bench_engine.c.
Prints one line per workload: NAME median_ms; for the name blas_info, one line saying
which BLAS numpy's matrix products run."""
import ctypes
import sys

import numpy as np
from peer_common import median_ms  # the timing rule every peer shares


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def openblas_of(path):
    """OpenBLAS's own account of a loaded library: its core (the kernels it picked for this
    CPU at load time), its build and its threads; None if the library is not OpenBLAS.
    numpy's wheels rename the symbols (scipy_openblas_..._64_), Debian's do not."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for pre, post in (("openblas_", ""), ("scipy_openblas_", "64_")):
        core = getattr(lib, pre + "get_corename" + post, None)
        if core:
            conf, nth = getattr(lib, pre + "get_config" + post), getattr(lib, pre + "get_num_threads" + post)
            core.restype = conf.restype = ctypes.c_char_p
            return "openblas core=%s threads=%d config=\"%s\" lib=%s" % (
                core().decode(), nth(), conf().decode().strip(), path)
    return None


def blas_info():
    """the BLAS that numpy's last product ran, from the libraries mapped in this process"""
    np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "blas" in l.rsplit("/", 1)[-1]})
    for path in libs:
        got = openblas_of(path)
        if got:
            return got
    return "none (not OpenBLAS: %s)" % (" ".join(libs) or "no BLAS library loaded")


def main():
    if sys.argv[1:] == ["blas_info"]:
        print("blas_info", "numpy=%s" % np.__version__, blas_info(), flush=True)
        return
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
