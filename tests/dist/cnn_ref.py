#!/usr/bin/env python3
"""cnn_ref.py FILE... — the reference for dist_check's `cnn` case: the small CNN (3x3
conv with bias, padding 1, ReLU, flatten, linear; mean squared error) trained 8 steps by
one process on the whole batch of 12, with numpy in float64 (PyTorch's SGD, momentum
0.9, lr 0.05; the convolution and its gradients written out with explicit windows).
Compares with the weights each FILE holds (rank 0's, one parameter a line)."""
import sys
import numpy as np

f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)
i = np.arange
x = f32(np.sin(0.37 * i(12 * 25) + 0.1)).reshape(12, 1, 5, 5)
y = f32(np.cos(0.7 * (i(24) // 2) - 1.1 * (i(24) % 2))).reshape(12, 2)
params = [f32(0.2 * np.cos(0.9 * i(18))).reshape(2, 1, 3, 3), f32(0.05 * i(2)),
          f32(0.1 * np.sin(0.23 * (i(100) // 2) + 0.5 * (i(100) % 2))).reshape(50, 2), np.zeros((1, 2))]
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
# windows[n, c, kh, kw, i, j] = xp[n, c, i + kh, j + kw]
win = np.stack([np.stack([xp[:, :, a:a + 5, b:b + 5] for b in range(3)], 2) for a in range(3)], 2)
bufs = [None] * 4
for _ in range(8):
    w, cb, W, b = params
    a = np.einsum("nckhij,ockh->noij", win, w) + cb[None, :, None, None]
    h = np.maximum(a, 0).reshape(12, 50)
    o = h @ W + b
    d = 2.0 * (o - y) / o.size
    gW, gb = h.T @ d, d.sum(0, keepdims=True)
    da = (d @ W.T).reshape(12, 2, 5, 5) * (a > 0)
    gw = np.einsum("noij,nckhij->ockh", da, win)
    gcb = da.sum((0, 2, 3))
    grads = [gw, gcb, gW, gb]
    for k in range(4):
        bufs[k] = grads[k].copy() if bufs[k] is None else 0.9 * bufs[k] + grads[k]
        params[k] = params[k] - 0.05 * bufs[k]

bad = 0
for path in sys.argv[1:]:
    rows = [np.array([float(v) for v in line.split()]) for line in open(path) if line.strip()]
    diff = max(np.abs(r - p.ravel()).max() for r, p in zip(rows, params)) if len(rows) == 4 else float("inf")
    if diff < 2e-5:
        print(f"ok cnn_ref {path} (largest difference {diff:.2e})")
    else:
        print(f"FAIL cnn_ref {path}: largest difference from numpy {diff:.3e}")
        bad += 1
sys.exit(1 if bad else 0)
