"""torch peer for bench_gpu.c (make bench-gpu): the same workloads on torch's CUDA
device, eager, f32, no TF32: relu(a*b+c)*0.5 over 16M, a row softmax of 4096 x 4096,
1024^3 and 4096^3 matmuls, a 32x64x56x56 conv2d (3x3, 64 filters, padding 1: cuDNN),
a training step of the MLP 784-256-256-10 (batch 128, cross-entropy, Adam;
loss.item() as TL's step reads its loss), and relu(a*b+c) on 64 elements (the cost
of an op: 3 ops a call). Each is timed as TL's is: the median of ITERS runs after
warm-ups, each run ending with one element read back (the GPU has finished); the
small ops in batches, synchronized at each batch's end. Also prints the device's
name and a device-to-device copy's bandwidth (bytes read + written a second): the
practical bandwidth limit. Prints NAME VALUE lines; nothing (exit 1) without CUDA.
Arguments, if any, name the workloads to run (the others are skipped)."""
import math
import sys
import time

import torch

ITERS, SMALL_CALLS = 20, 2000


def timed(f, iters=ITERS, warmup=3):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def mlp_step(dev):
    torch.manual_seed(0)
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

    return step


def small_op_ms(dev):
    a, b, c = (torch.randn(64, device=dev) for _ in range(3))

    def batch():
        for _ in range(SMALL_CALLS):
            torch.relu(a * b + c)
        torch.cuda.synchronize()

    return timed(batch, iters=7, warmup=1) / (3 * SMALL_CALLS)


def main():
    want = set(sys.argv[1:])
    on = lambda name: not want or name in want
    if not torch.cuda.is_available():
        sys.exit(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print("device %s" % torch.cuda.get_device_name(0).replace(" ", "_"), flush=True)
    torch.manual_seed(0)
    if on("fused_chain_16M"):
        big = torch.empty(64 << 20, device=dev)
        dst = torch.empty_like(big)
        print("copy_GBps %.1f" % (2 * big.numel() * 4 / (timed(lambda: (dst.copy_(big), dst[0].item())) * 1e6)), flush=True)
        del big, dst
    with torch.no_grad():
        if on("fused_chain_16M"):
            a, b, c = (torch.randn(16 << 20, device=dev) for _ in range(3))
            print("fused_chain_16M %.4f" % timed(lambda: (torch.relu(a * b + c) * 0.5)[0].item()), flush=True)
            del a, b, c
        if on("softmax_4096"):
            m = torch.randn(4096, 4096, device=dev)
            print("softmax_4096 %.4f" % timed(lambda: torch.softmax(m, 1)[0, 0].item()), flush=True)
        if on("matmul_1024"):
            p, q = torch.randn(1024, 1024, device=dev), torch.randn(1024, 1024, device=dev)
            print("matmul_1024 %.4f" % timed(lambda: (p @ q)[0, 0].item()), flush=True)
        if on("matmul_4096"):
            p4, q4 = torch.randn(4096, 4096, device=dev), torch.randn(4096, 4096, device=dev)
            print("matmul_4096 %.4f" % timed(lambda: (p4 @ q4)[0, 0].item()), flush=True)
        if on("conv2d_32x64x56x56"):
            x = torch.randn(32, 64, 56, 56, device=dev)
            w = torch.randn(64, 64, 3, 3, device=dev)
            conv = lambda: torch.nn.functional.conv2d(x, w, padding=1)[0, 0, 0, 0].item()
            print("conv2d_32x64x56x56 %.4f" % timed(conv), flush=True)
        if on("realize_small"):
            print("realize_small %.6f" % small_op_ms(dev), flush=True)
    if on("train_step_mlp"):
        print("train_step_mlp %.4f" % timed(mlp_step(dev)), flush=True)


if __name__ == "__main__":
    main()
