"""torch peer for bench_lib.c (conv2d_32x64x56x56): x [32, 64, 56, 56] and w [64, 64, 3, 3]
N(0,1) f32 leaves requiring grad, g [32, 64, 56, 56] N(0,1) fixed; a step is conv2d
(padding 1, stride 1, no bias), loss = sum(output * g) (so the output's gradient is g, not
ones a sum's backward could simplify), backward (gradients of x and w, cleared before each
step).
argv[1]: the thread count (torch.set_num_threads). 1 warm-up, then the median of argv[2]
steps (default 5). Prints one line: conv2d_32x64x56x56 MEDIAN_MS"""
import sys
import time

import torch


def main():
    torch.set_num_threads(int(sys.argv[1]))
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.manual_seed(0)
    x = torch.randn(32, 64, 56, 56, requires_grad=True)
    w = torch.randn(64, 64, 3, 3, requires_grad=True)
    g = torch.randn(32, 64, 56, 56)
    times = []
    for i in range(1 + runs):
        t0 = time.perf_counter()
        x.grad = None
        w.grad = None
        loss = (torch.nn.functional.conv2d(x, w, padding=1) * g).sum()
        loss.backward()
        if i >= 1:
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print("conv2d_32x64x56x56 %.3f" % times[len(times) // 2], flush=True)


if __name__ == "__main__":
    main()
