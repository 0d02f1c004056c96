# The expected output of scalar_halfs.tl (run: /usr/bin/python3 scalar_halfs_reference.py):
# f16 and bf16 rounding done on exact rationals, the f16 results checked against numpy
import numpy as np
from fractions import Fraction as F
import math
def round_fmt(x, p, emin, maxv):
    # exact rational rounding to nearest even; x a Fraction or int
    x = F(x)
    if x == 0: return 0.0
    s = -1 if x < 0 else 1; a = abs(x)
    e = math.floor(math.log2(a))
    while F(2)**e > a: e -= 1
    while F(2)**(e+1) <= a: e += 1
    q = max(e - (p-1), emin - (p-1))
    m = a / F(2)**q
    fl = math.floor(m); r = m - fl
    if r > F(1,2) or (r == F(1,2) and fl % 2 == 1): fl += 1
    v = fl * F(2)**q
    if v > maxv: return s*math.inf
    return s*float(v)
F16MAX = 65504; BF16MAX = F(0x1fe, 0x100) * F(2)**127
f16 = lambda x: round_fmt(x, 11, -14, F16MAX)
bf16 = lambda x: round_fmt(x, 8, -126, BF16MAX)
def f32(x): return float(np.float32(x))
def shortest(v, rnd):
    if math.isinf(v): return "inf" if v > 0 else "-inf"
    if v == 0: return "0.0"
    for p in range(1, 18):
        s = "%.*e" % (p-1, v)
        if rnd(F(s)) == v: return repr(float(s))
def h(v): return shortest(v, f16)
def b(v): return shortest(v, bf16)
def npstr(v):  # numpy's own float16 printing, as a cross-check of h()
    s = str(np.float16(v)); return s
lit = lambda s: F(s)  # a decimal literal, exactly
print(h(65504.0), h(-65504.0), h(2.0**-10), h(2.0**-14))
print(b(float(BF16MAX)), b(-float(BF16MAX)), b(2.0**-7), b(2.0**-126))
a = f16(lit("0.1")); bb = f16(lit("0.2"))
print(h(a), h(bb), h(f16(F(a)+F(bb))), h(f16(F(a)*F(bb))), h(-a))
c = 1.0
t = f16(F(1)/3)
print(h(t), h(f16(F(t)*3)), h(f16(F(5.5) % 2)), h(f16(lit("1.0e-7"))))
big = f16(60000)
print(h(f16(2*F(big))), h(f16(-2*F(big))), h(f16(F(big)/2)))
s = 0.0
for _ in range(5000): s = f16(F(s) + 1)
x = bf16(lit("0.1")); y = bf16(F(1)/3)
bs = 0.0
for _ in range(1000): bs = bf16(F(bs) + 1)
print(h(s), b(x), b(y), b(bf16(F(x)+F(y))), b(bs))
# `65519.0 as f16`: the literal is an f32 first (TL's default float literal)
print(h(f16(F(f32(65519.0)))), h(f16(F(f32(65520.0)))), h(f16(F(f32(1e-8)))), h(f16(2049)), h(f16(2051)))
print(h(f16(2049)), h(f16(65535)), h(f16(-70000)), b(bf16(2**64-1)))
d = (1 << 60) + (1 << 52) + 1
e = F(1) + F(1, 2**11) + F(1, 2**40)
print(b(bf16(d)), h(f16(e)), h(f16(F(f32(float(e))))))
print(int(-2.5), 65535, 0, 255)
print(str(np.float32(a)), repr(float(a)), h(f16(F(x))), b(bf16(F(a))))
print("true true", h(f16(F(math.sqrt(2)))), b(bf16(F(math.sqrt(2)))))
print("%.3f" % a, h(bb), h(a), str(np.float32(float(BF16MAX))))
print("Ok(%s) Ok(%s) Err(\"`x` is not a number\") Ok(%s)" % (h(f16(F("0.1"))), h(f16(F(10**5))), b(bf16(F("0.3")))))
v = sorted([f16(F("0.5")), -2.0, f16(F("0.1")), 65504.0])
w = [1.0, bf16(F("0.1")), bf16(F("3.0e38"))]
print("[" + ", ".join(h(t) for t in v) + "] [" + ", ".join(b(t) for t in w) + "]", h(f16(F(a) + F(bb))))
# cross-check the f16 shortest digits against numpy's own printing
for t in [65504.0, 2.0**-10, 2.0**-14, a, bb, f16(F(a)+F(bb)), f16(F(a)*F(bb)), f16(F(1)/3), 2048.0, f16(F(math.sqrt(2)))]:
    assert float(npstr(t)) == float(h(t)), (t, npstr(t), h(t))
    assert np.float16(t) == np.float16(float(h(t)))
for t in [a, bb, f16(F(1)/3), f16(lit("1.0e-7")), f16(e)]:
    assert float(np.float16(float(F(str(t))))) == t  # numpy rounds the same
import sys; print("ok", file=sys.stderr)
