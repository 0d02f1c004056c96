#!/usr/bin/env python3
"""Expected values of tests/test_dtype.c, printed as C initializers.

Independent of TL: integer wrapping and f16 come from numpy (astype, float16), the
float -> integer saturation is computed here with exact Python integers (numpy's cast
is undefined out of range), and bf16 rounding with exact fractions: the value's
binary exponent picks the bf16 spacing (2^(e-7), or 2^-133 below the smallest normal
2^-126), the value divided by it is rounded half to even, and a result of 2^128 or
more is inf; the bits are then sign | (biased exponent << 7) | mantissa."""
import math
from fractions import Fraction
import numpy as np

SRC = [1e30, -1e30, 300.7, -300.7, 127.9, -128.9, 255.5, -0.5, 65535.9, 70000.0,
       4294967295.5, 5e9, 18446744073709551616.0, 1e20, float('nan'), float('inf'),
       float('-inf'), 2.5, -2.5, 9.3e18]

INTS = {'i8': (-128, 127), 'i16': (-32768, 32767), 'u8': (0, 255), 'u16': (0, 65535),
        'u32': (0, 2**32 - 1), 'u64': (0, 2**64 - 1), 'i32': (-2**31, 2**31 - 1), 'i64': (-2**63, 2**63 - 1)}

def saturate(x, lo, hi):
    if math.isnan(x): return 0
    if math.isinf(x): return hi if x > 0 else lo
    t = int(x)  # truncates toward zero, exactly
    return max(lo, min(hi, t))

def bf16_bits(x):
    if math.isnan(x): return (0x8000 if math.copysign(1, x) < 0 else 0) | 0x7fc0
    sign = 0x8000 if math.copysign(1, x) < 0 else 0
    if math.isinf(x): return sign | 0x7f80
    v = abs(Fraction(x))
    if v == 0: return sign
    e = math.floor(math.log2(v))
    while Fraction(2) ** e > v: e -= 1
    while Fraction(2) ** (e + 1) <= v: e += 1
    spacing_exp = max(e, -126) - 7
    q = v / Fraction(2) ** spacing_exp
    n = math.floor(q)
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1): n += 1
    val = n * Fraction(2) ** spacing_exp
    if val >= Fraction(2) ** 128: return sign | 0x7f80
    if val < Fraction(2) ** -126:  # subnormal: mantissa counts 2^-133
        return sign | n
    e2 = math.floor(math.log2(val))
    while Fraction(2) ** e2 > val: e2 -= 1
    while Fraction(2) ** (e2 + 1) <= val: e2 += 1
    mant = int(val / Fraction(2) ** (e2 - 7)) - 128
    return sign | ((e2 + 127) << 7) | mant

def cvals(v): return ', '.join(str(x) for x in v)

print('/* saturating float -> integer (f64 source) */')
for name, (lo, hi) in INTS.items():
    vals = [saturate(x, lo, hi) for x in SRC]
    suffix = 'ULL' if name == 'u64' else 'LL'
    print(f'  [{name}] = {{{", ".join(f"{v}{suffix}" if name == "u64" else f"(int64_t){v}{suffix}" if v != -2**63 else "INT64_MIN" for v in vals)}}},')

HALF = [0.1, 1/3, 65504.0, 65519.99, 65520.0, 1e-8, 2.98e-8, 5.96e-8, -0.0, float('nan'),
        float('inf'), 1e5, 0.00006103515625, 2049.0, 2051.0, -7.5, 3.0e38, 3.4e38, 1e-40, 9.2e-41]
print('/* f64 -> f16 bits (numpy float16) */')
print('  ' + cvals(['0x%04x' % int(np.array([x]).astype(np.float16).view(np.uint16)[0]) for x in HALF]))
print('/* f64 -> bf16 bits (exact fractions) */')
print('  ' + cvals(['0x%04x' % bf16_bits(x) for x in HALF]))

# integers: wrap (numpy astype of int64 values, two's complement)
WR = [300, -129, 65537, -1, 4294967297, -9223372036854775807 - 1, 127, 200]
print('/* i64 -> each integer, wrapping (numpy astype) */')
for name in ['i8', 'i16', 'u8', 'u16', 'i32', 'u32', 'u64']:
    a = np.array(WR, dtype=np.int64).astype(getattr(np, {'i8': 'int8', 'i16': 'int16', 'u8': 'uint8', 'u16': 'uint16', 'i32': 'int32', 'u32': 'uint32', 'u64': 'uint64'}[name]))
    print(f'  [{name}] = {{{cvals([str(int(x)) + ("ULL" if name == "u64" else "") for x in a])}}},')

# arithmetic that wraps, per dtype (numpy's own wrapping arithmetic)
A = {'i8': [100, -128, 127, -7], 'u8': [200, 0, 255, 7], 'i16': [30000, -32768, 181, -7],
     'u16': [65535, 0, 300, 7], 'u32': [4294967295, 0, 70000, 7]}
B = {'i8': [100, 1, 2, 2], 'u8': [100, 1, 2, 2], 'i16': [30000, 1, 181, 2], 'u16': [65535, 1, 300, 2],
     'u32': [2, 1, 70000, 2]}
npt = {'i8': np.int8, 'u8': np.uint8, 'i16': np.int16, 'u16': np.uint16, 'u32': np.uint32}
with np.errstate(over='ignore'):
    for k in A:
        a = np.array(A[k], dtype=npt[k]); b = np.array(B[k], dtype=npt[k])
        print(f'/* {k}: a+b, a-b, a*b, -a, a//b (trunc), a%b (C remainder) */')
        print('  ' + ' | '.join(cvals([int(x) for x in r]) for r in (a + b, a - b, a * b, -a)))
        q = [int(np.array(int(int(x) / int(y)) if y else 0).astype(npt[k])) for x, y in zip(a, b)]
        m = [int(math.fmod(int(x), int(y))) if y else 0 for x, y in zip(a, b)]
        print('  ' + cvals(q) + ' | ' + cvals(m))

# f16 arithmetic: numpy computes each op in f32 and rounds to f16, as TL
x = np.array([0.1, 1000.0, 65504.0, -3.3], dtype=np.float16)
y = np.array([0.2, 0.3, 32.0, 1.7], dtype=np.float16)
print('/* f16: x+y, x*y bits */')
print('  ' + cvals(['0x%04x' % v for v in (x + y).view(np.uint16)]) + ' | ' + cvals(['0x%04x' % v for v in (x * y).view(np.uint16)]))
m1 = np.arange(1, 13, dtype=np.float16).reshape(3, 4) * np.float16(0.1)
m2 = np.arange(1, 9, dtype=np.float16).reshape(4, 2) * np.float16(0.7)
mm = (m1.astype(np.float32) @ m2.astype(np.float32)).astype(np.float16)
print('/* f16 matmul (f32 inside, rounded once) bits; m1, m2 bits */')
print('  ' + cvals(['0x%04x' % v for v in mm.reshape(-1).view(np.uint16)]))
print('  ' + cvals(['0x%04x' % v for v in m1.reshape(-1).view(np.uint16)]))
print('  ' + cvals(['0x%04x' % v for v in m2.reshape(-1).view(np.uint16)]))
s = np.full(3000, 0.1, dtype=np.float16)
print('/* f16 sum of 3000 x 0.1 (accumulated in f32, rounded once) */', '0x%04x' % np.array([s.astype(np.float32).sum(dtype=np.float32)]).astype(np.float16).view(np.uint16)[0])
