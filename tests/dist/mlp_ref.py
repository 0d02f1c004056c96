#!/usr/bin/env python3
"""mlp_ref.py STEPS FILE... — the reference for dist_check's `mlp` case: the same MLP trained
by one process on the whole batch, computed with numpy in float64 (PyTorch's SGD with
momentum), compared with the weights each FILE holds (rank 0's, one parameter a line).
Prints "ok mlp_ref FILE" or the largest difference; exits 1 on any failure."""
import sys
import numpy as np

B, IN, HID, OUT, LR, MU = 12, 4, 8, 2, 0.1, 0.9
STEPS = int(sys.argv[1])
i = np.arange(B)[:, None]
X = np.sin(0.7 * i + 1.3 * np.arange(IN)[None, :])
Y = np.cos(0.5 * i - 0.9 * np.arange(OUT)[None, :])
W1 = 0.3 * np.sin(1.1 * np.arange(IN)[:, None] + 0.37 * np.arange(HID)[None, :] + 0.5)
b1 = 0.01 * np.arange(HID)[None, :].astype(float)
W2 = 0.25 * np.cos(0.6 * np.arange(HID)[:, None] - 1.7 * np.arange(OUT)[None, :])
b2 = np.zeros((1, OUT))
# float32 starting values, as the C program builds them
params = [p.astype(np.float32).astype(np.float64) for p in (W1, b1, W2, b2)]
X = X.astype(np.float32).astype(np.float64)
Y = Y.astype(np.float32).astype(np.float64)
bufs = [None] * 4
for _ in range(STEPS):
    W1, b1, W2, b2 = params
    a = X @ W1 + b1
    h = np.tanh(a)
    o = h @ W2 + b2
    d = 2.0 * (o - Y) / o.size  # d mean((o - Y)^2) / do
    gW2 = h.T @ d
    gb2 = d.sum(0, keepdims=True)
    dh = (d @ W2.T) * (1 - h * h)
    gW1 = X.T @ dh
    gb1 = dh.sum(0, keepdims=True)
    grads = [gW1, gb1, gW2, gb2]
    for k in range(4):
        bufs[k] = grads[k].copy() if bufs[k] is None else MU * bufs[k] + grads[k]
        params[k] = params[k] - LR * bufs[k]

bad = 0
for path in sys.argv[2:]:
    rows = [np.array([float(v) for v in line.split()]) for line in open(path) if line.strip()]
    diff = max(np.abs(r - p.ravel()).max() for r, p in zip(rows, params)) if len(rows) == 4 else float("inf")
    if diff < 2e-5:
        print(f"ok mlp_ref {path} (largest difference {diff:.2e})")
    else:
        print(f"FAIL mlp_ref {path}: largest difference from numpy {diff:.3e}")
        bad += 1
sys.exit(1 if bad else 0)
