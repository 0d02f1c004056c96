"""torch peer for bench_mem.c (mlp_forward_mem): the same 4-layer, 1024-wide relu MLP
forward at batch 256 in f32, relu after every layer, 3 warm-ups then 100 timed runs,
under torch.no_grad() with torch's default thread count. Weights are stored [in, out]
(as bench_mem.c does) and used as h @ w.
Prints one line: mlp_forward_mem PEAK_RSS_MB MEDIAN_MS (rss: this process's ru_maxrss)."""
import resource
import time

import torch

BATCH, WIDTH, LAYERS, WARMUP, ITERS = 256, 1024, 4, 3, 100


def main():
    torch.manual_seed(0)
    ws = [torch.randn(WIDTH, WIDTH) / 32 for _ in range(LAYERS)]
    bs = [torch.randn(WIDTH) / 32 for _ in range(LAYERS)]
    x = torch.randn(BATCH, WIDTH)
    times = []
    with torch.no_grad():
        for i in range(WARMUP + ITERS):
            t0 = time.perf_counter()
            h = x
            for w, b in zip(ws, bs):
                h = torch.relu(h @ w + b)
            if i >= WARMUP:
                times.append((time.perf_counter() - t0) * 1e3)
            del h
    times.sort()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux
    print("mlp_forward_mem %.1f %.3f" % (rss_mb, times[len(times) // 2]), flush=True)


if __name__ == "__main__":
    main()
