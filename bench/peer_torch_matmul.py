"""torch peer for bench_engine.c's matrix products: argv[1] the workload (matmul_1024,
matmul_2048, matmul_128x784x256), argv[2] TL's thread count (torch.set_num_threads).
N(0,1) f32 operands; 2 warm-ups, then the median of 7 products. Prints one line:
NAME MEDIAN_MS"""
import sys
import time

import torch

SHAPES = {
    "matmul_1024": ((1024, 1024), (1024, 1024)),
    "matmul_2048": ((2048, 2048), (2048, 2048)),
    "matmul_128x784x256": ((128, 784), (784, 256)),
}


def main():
    name = sys.argv[1]
    torch.set_num_threads(int(sys.argv[2]))
    torch.manual_seed(0)
    a, b = (torch.randn(*s) for s in SHAPES[name])
    times = []
    with torch.no_grad():
        for i in range(9):
            t0 = time.perf_counter()
            torch.matmul(a, b)
            if i >= 2:
                times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print("%s %.6f" % (name, times[len(times) // 2]), flush=True)


if __name__ == "__main__":
    main()
