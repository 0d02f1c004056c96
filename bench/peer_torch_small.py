"""torch peer for bench_engine.c (realize_small): the same 3 eager ops, relu(a * b + c) on
64 f32 elements, with TL's thread count (argv[1], torch.set_num_threads). 7 batches of
20000 calls after a warm-up batch; prints one line: realize_small MEDIAN_MS_PER_CALL."""
import sys
import time

import torch

CALLS, BATCHES = 20000, 7


def main():
    torch.set_num_threads(int(sys.argv[1]))
    torch.manual_seed(0)
    a, b, c = (torch.randn(64) for _ in range(3))
    times = []
    with torch.no_grad():
        for i in range(BATCHES + 1):
            t0 = time.perf_counter()
            for _ in range(CALLS):
                torch.relu(a * b + c)
            if i > 0:
                times.append((time.perf_counter() - t0) * 1e3 / CALLS)
    times.sort()
    print("realize_small %.6f" % times[len(times) // 2], flush=True)


if __name__ == "__main__":
    main()
