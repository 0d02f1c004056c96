"""torch peer for bench_backends.c on a GPU (TL_BENCH_DEVICE=cuda): the same workloads
on torch's CUDA device, eager, f32 (no TF32): relu(a*b+c)*0.5 over 16M, a row softmax
of 4096 x 4096, a 1024^3 and a 4096^3 matmul, and a training step of the MLP
784-256-256-10 (batch 128, cross-entropy, Adam; loss.item() as TL's step reads its
loss). Each is timed as TL's is: the median of 10 runs after 3 warm-ups, each run
ending with one element read back (the GPU has finished). Prints NAME MEDIAN_MS lines;
nothing (exit 1) without CUDA."""
import math
import sys
import time

import torch


def timed(f, iters=10, warmup=3):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    if not torch.cuda.is_available():
        sys.exit(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    torch.manual_seed(0)
    a, b, c = (torch.randn(16 << 20, device=dev) for _ in range(3))
    m = torch.randn(4096, 4096, device=dev)
    p, q = torch.randn(1024, 1024, device=dev), torch.randn(1024, 1024, device=dev)
    p4, q4 = torch.randn(4096, 4096, device=dev), torch.randn(4096, 4096, device=dev)
    dims = [784, 256, 256, 10]
    ws = [(torch.randn(dims[i], dims[i + 1], device=dev) * math.sqrt(2.0 / dims[i])).requires_grad_() for i in range(3)]
    bs = [torch.zeros(dims[i + 1], device=dev, requires_grad=True) for i in range(3)]
    x = torch.randn(128, 784, device=dev)
    y = torch.tensor([(i * 7) % 10 for i in range(128)], device=dev)
    opt = torch.optim.Adam(ws + bs, lr=1e-3)

    def step():
        h = x
        for l in range(3):
            h = h @ ws[l] + bs[l]
            if l < 2:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    print("fused_chain_16M %.4f" % timed(lambda: (torch.relu(a * b + c) * 0.5)[0].item()), flush=True)
    print("softmax_4096 %.4f" % timed(lambda: torch.softmax(m, 1)[0, 0].item()), flush=True)
    print("matmul_1024 %.4f" % timed(lambda: (p @ q)[0, 0].item()), flush=True)
    print("matmul_4096 %.4f" % timed(lambda: (p4 @ q4)[0, 0].item()), flush=True)
    print("train_step_mlp %.4f" % timed(step), flush=True)


if __name__ == "__main__":
    main()
