"""torch peer for bench_train.c (train_step_mlp): an MLP 784-256-256-10, relu after
the hidden layers, f32, batch 128 of N(0,1) inputs with fixed random labels,
cross-entropy; a step is forward, loss.item(), zero_grad, backward, Adam (lr 1e-3).
With TL's thread count (argv[1], torch.set_num_threads; torch's default without it).
  peer_torch_train.py [THREADS]: 3 warm-ups, then the median of 20 steps; prints one
      line: train_step_mlp MEDIAN_MS
  peer_torch_train.py THREADS serve: the model made and 3 steps warmed once; then for
      each line N read (a round of bench_train.c), N steps and `train_step_mlp
      MEDIAN_MS` (N = 0: `ready 1`), until the input ends"""
import math
import sys
import time

import torch

BATCH, IN, HID, OUT, WARMUP, ITERS = 128, 784, 256, 10, 3, 20


def make():
    torch.manual_seed(0)
    dims = [IN, HID, HID, OUT]
    # kaiming normal weights, zero biases: as tl_kaiming_normal and tl_zeros in bench_train.c
    ws = [(torch.randn(dims[i], dims[i + 1]) * math.sqrt(2.0 / dims[i])).requires_grad_() for i in range(3)]
    bs = [torch.zeros(dims[i + 1], requires_grad=True) for i in range(3)]
    x = torch.randn(BATCH, IN)
    y = torch.randint(0, OUT, (BATCH,))
    opt = torch.optim.Adam(ws + bs, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    return ws, bs, x, y, opt


def steps(model, n):
    """the median ms of n steps"""
    ws, bs, x, y, opt = model
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        h = x
        for l in range(3):
            h = h @ ws[l] + bs[l]
            if l < 2:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2] if times else 0.0


def main():
    if len(sys.argv) > 1:
        torch.set_num_threads(int(sys.argv[1]))
    model = make()
    steps(model, WARMUP)
    if len(sys.argv) > 2 and sys.argv[2] == "serve":
        for line in sys.stdin:
            n = int(line)
            print("ready 1" if n == 0 else "train_step_mlp %.3f" % steps(model, n), flush=True)
        return
    print("train_step_mlp %.3f" % steps(model, ITERS), flush=True)


if __name__ == "__main__":
    main()
