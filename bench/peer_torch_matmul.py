"""torch peer for bench_engine.c's matrix products: argv[1] the workload (matmul_1024,
matmul_2048, matmul_128x784x256), argv[2] TL's thread count (torch.set_num_threads).
N(0,1) f32 operands; 2 warm-ups, then the median of at least 7 products (peer_common's
rule: at least 50 ms of them). Prints one line: NAME MEDIAN_MS"""
import sys

import torch

from peer_common import median_ms

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
    with torch.no_grad():
        print("%s %.6f" % (name, median_ms(lambda: torch.matmul(a, b))), flush=True)


if __name__ == "__main__":
    main()
