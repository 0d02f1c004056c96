/* scalar.h — the scalar semantics of the primitive ops: integer division and modulo,
 * saturating casts, NaN-aware max and select, pow, the Philox random generator.
 * in: nothing (no system headers: this text is also the start of every generated
 * kernel, which must compile fast and under libtcc); out: inline functions that
 * constant folding (graph), the interpreter (runtime) and the kernels (pasted in by
 * the renderer, see codegen/kernel_prelude.h) all use, so they agree bit for bit. */
#ifndef TL_CORE_SCALAR_H
#define TL_CORE_SCALAR_H

#ifdef TL_SCALAR_OPENCL /* OpenCL C (codegen/prelude_cl.h): its own names for the same things */
typedef long tl_i64;
typedef ulong tl_u64;
typedef int tl_i32;
typedef uint tl_u32;
typedef uchar tl_bool;
typedef char tl_i8;
typedef short tl_i16;
typedef uchar tl_u8;
typedef ushort tl_u16;
#define expf exp /* OpenCL's math builtins are overloaded: exp(float) is a float */
#define logf log
#define sqrtf sqrt
#define sinf sin
#define cosf cos
#define tanhf tl_cl_tanhf /* codegen/prelude_cl.h */
#define powf pow
#define fmodf fmod
#define fabsf fabs
#define log1pf log1p
#define expm1f expm1
#define TL_INF_F32 INFINITY
#define tl_f64_bits(x) as_ulong(x)
#elif defined(TL_SCALAR_CUDA) /* CUDA C++ (codegen/prelude_cuda.h): libm's names are its own */
typedef long long tl_i64;
typedef unsigned long long tl_u64;
typedef int tl_i32;
typedef unsigned int tl_u32;
typedef unsigned char tl_bool;
typedef signed char tl_i8;
typedef short tl_i16;
typedef unsigned char tl_u8;
typedef unsigned short tl_u16;
#define TL_INF_F32 __int_as_float(0x7f800000)
#define tl_f64_bits(x) ((tl_u64)__double_as_longlong(x))
#else
typedef long long tl_i64;
typedef unsigned long long tl_u64;
typedef int tl_i32;
typedef unsigned int tl_u32;
typedef unsigned char tl_bool;
typedef signed char tl_i8;
typedef short tl_i16;
typedef unsigned char tl_u8;
typedef unsigned short tl_u16;

float expf(float), logf(float), sqrtf(float), sinf(float), cosf(float), tanhf(float),
    powf(float, float), fmodf(float, float), fabsf(float), log1pf(float), expm1f(float);
double exp(double), log(double), sqrt(double), sin(double), cos(double), tanh(double),
    pow(double, double), fmod(double, double), fabs(double), erf(double), log1p(double), expm1(double);
#define TL_INF_F32 ((float)(1e308 * 10.0))
#endif

/* Tier-1 kernels (libtcc, runtime/tiered.c) are compiled with TL_SCALAR_HOST: the
 * costly functions below are then the library's own builds of this very text
 * (runtime/scalar_host.c), given to each libtcc state by name. tcc's code for them
 * was 20 to 100 times slower (it inlines nothing and spills every value), and a GELU
 * made of tl_erff and tl_expf was most of a first run. */
#ifdef TL_SCALAR_HOST
tl_i32 tl_f32_to_i32(float), tl_f64_to_i32(double);
tl_i64 tl_f32_to_i64(float), tl_f64_to_i64(double);
float tl_expf(float), tl_erff(float);
float tl_uniform_f32(tl_u64, tl_u64, tl_i64);
double tl_uniform_f64(tl_u64, tl_u64, tl_i64);
#endif

/* max as a select: a NaN in b gives NaN, a NaN in a gives b (one rule everywhere) */
#define TL_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Bit-level helpers: a select written with an all-ones/all-zeros mask is not a branch,
 * so loops using it vectorize under strict IEEE semantics (-ftrapping-math), where a
 * compiler will not turn a ?: guarding floating-point work into a vector select. */
#ifdef TL_SCALAR_OPENCL
static inline tl_u32 tl_f32_bits(float f) { return as_uint(f); }
static inline float tl_bits_f32(tl_u32 u) { return as_float(u); }
static inline double tl_blend_f64(tl_u64 mask, double a, double b) {
  return as_double((as_ulong(a) & mask) | (as_ulong(b) & ~mask));
}
#elif defined(TL_SCALAR_CUDA)
static inline tl_u32 tl_f32_bits(float f) { return __float_as_uint(f); }
static inline float tl_bits_f32(tl_u32 u) { return __uint_as_float(u); }
static inline double tl_blend_f64(tl_u64 mask, double a, double b) {
  return __longlong_as_double((long long)(((tl_u64)__double_as_longlong(a) & mask) |
                                          ((tl_u64)__double_as_longlong(b) & ~mask)));
}
#else
#ifdef __TINYC__
void *memcpy(void *, const void *, unsigned long);
#define __builtin_memcpy memcpy
#endif
static inline tl_u32 tl_f32_bits(float f) {
  tl_u32 u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
static inline float tl_bits_f32(tl_u32 u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
static inline double tl_blend_f64(tl_u64 mask, double a, double b) {
  tl_u64 x, y;
  __builtin_memcpy(&x, &a, 8);
  __builtin_memcpy(&y, &b, 8);
  x = (x & mask) | (y & ~mask);
  __builtin_memcpy(&a, &x, 8);
  return a;
}
static inline tl_u64 tl_f64_bits(double f) {
  tl_u64 u;
  __builtin_memcpy(&u, &f, 8);
  return u;
}
#endif
static inline float tl_blend_f32(tl_u32 mask, float a, float b) {
  return tl_bits_f32((tl_f32_bits(a) & mask) | (tl_f32_bits(b) & ~mask));
}
/* c ? a : b and max for floats, as blends (same results as the selects). tcc
 * vectorizes nothing and inlines nothing: there they are the selects themselves, as
 * macros (a call is dearer than the select; kernels pass them names and literals) */
#ifdef __TINYC__
#define tl_where_f32(c, a, b) ((c) ? (float)(a) : (float)(b))
#define tl_where_f64(c, a, b) ((c) ? (double)(a) : (double)(b))
#define tl_max_f32(a, b) ((float)(a) > (float)(b) ? (float)(a) : (float)(b))
#define tl_max_f64(a, b) ((double)(a) > (double)(b) ? (double)(a) : (double)(b))
#else
static inline float tl_where_f32(int c, float a, float b) { return tl_blend_f32(0u - (tl_u32)(c != 0), a, b); }
static inline double tl_where_f64(int c, double a, double b) {
  return tl_blend_f64(0ull - (tl_u64)(c != 0), a, b);
}
static inline float tl_max_f32(float a, float b) { return tl_where_f32(a > b, a, b); }
static inline double tl_max_f64(double a, double b) { return tl_where_f64(a > b, a, b); }
#endif

/* float -> integer saturates and NaN gives 0 (Rust's `as`; C leaves both undefined and
 * x86 gives INT_MIN). Only an in-range value (or 0) reaches the conversion; the
 * bounds are OR-ed in afterwards, so it stays branch-free and vectorizes. The lower
 * bound -2^31 (-2^63) is exact in both float types, and so is the upper 2^31 (2^63):
 * everything below it truncates into range. */
#ifndef TL_SCALAR_HOST
static inline tl_i32 tl_f32_to_i32(float x) {
  tl_u32 hi = 0u - (tl_u32)(x >= 2147483648.0f), lo = 0u - (tl_u32)(x < -2147483648.0f);
  tl_u32 bad = hi | lo | (0u - (tl_u32)(x != x));
  return (tl_i32)((tl_u32)(tl_i32)tl_blend_f32(bad, 0.0f, x) | (hi & 0x7fffffffu) | (lo & 0x80000000u));
}
static inline tl_i32 tl_f64_to_i32(double x) {
  tl_u64 hi = 0ull - (tl_u64)(x >= 2147483648.0), lo = 0ull - (tl_u64)(x < -2147483648.0);
  tl_u64 bad = hi | lo | (0ull - (tl_u64)(x != x));
  return (tl_i32)((tl_u32)(tl_i32)tl_blend_f64(bad, 0.0, x) | ((tl_u32)hi & 0x7fffffffu) | ((tl_u32)lo & 0x80000000u));
}
static inline tl_i64 tl_f32_to_i64(float x) {
  tl_u64 hi = 0ull - (tl_u64)(x >= 9223372036854775808.0f), lo = 0ull - (tl_u64)(x < -9223372036854775808.0f);
  tl_u32 bad = (tl_u32)(hi | lo) | (0u - (tl_u32)(x != x));
  return (tl_i64)((tl_u64)(tl_i64)tl_blend_f32(bad, 0.0f, x) | (hi & 0x7fffffffffffffffull) |
                  (lo & 0x8000000000000000ull));
}
static inline tl_i64 tl_f64_to_i64(double x) {
  tl_u64 hi = 0ull - (tl_u64)(x >= 9223372036854775808.0), lo = 0ull - (tl_u64)(x < -9223372036854775808.0);
  tl_u64 bad = hi | lo | (0ull - (tl_u64)(x != x));
  return (tl_i64)((tl_u64)(tl_i64)tl_blend_f64(bad, 0.0, x) | (hi & 0x7fffffffffffffffull) |
                  (lo & 0x8000000000000000ull));
}
#endif

#ifndef TL_SCALAR_HOST
/* exp for f32, vectorizable (libm's expf is an opaque call): exp(x) = 2^k p(r),
 * k = round(x / ln 2), r = x - k ln 2 in two parts, p a degree-7 Taylor polynomial
 * (|r| <= 0.35: under 1 ulp). IEEE results at both ends, as the interpreter's (float)
 * exp(x): 2^k is applied as two normal factors, p 2^k1 exact and then 2^k2, so a
 * result below 2^-126 is rounded once to its subnormal (exp(-100) = 3.8e-44, not 0;
 * 0 from x < -103.97); inf above 88.72283; NaN stays NaN. The clamp only keeps k in
 * [-150, 128]: a value inside the range is never moved. */
static inline float tl_expf(float x) {
  tl_u32 lo = 0u - (tl_u32)!(x >= -104.0f), hi = 0u - (tl_u32)(x > 89.0f); /* lo: NaN too */
  float c = tl_blend_f32(lo, -104.0f, tl_blend_f32(hi, 89.0f, x));
  float t = c * 1.44269504f;
  tl_i32 k = (tl_i32)(t + 256.5f) - 256; /* round by truncating a positive number */
  float n = (float)k;
  float r = c - n * 0.693145751953125f - n * 1.428606765330187e-06f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f +
                                                                   r * (0.0013888889f + r * 0.0001984127f))))));
  tl_i32 k1 = k / 2, k2 = k - k1; /* both in [-75, 64]: normal powers of two */
  float y = p * tl_bits_f32((tl_u32)(k1 + 127) << 23) * tl_bits_f32((tl_u32)(k2 + 127) << 23);
  tl_u32 over = 0u - (tl_u32)(x > 88.72283f);
  y = tl_blend_f32(over, TL_INF_F32, y);
  return tl_blend_f32(0u - (tl_u32)(x != x), x, y);
}

/* erf for f32, vectorizable (libm's erff is an opaque call), both parts computed and
 * one selected: |x| < 0.9: x + x p(x^2); beyond, 1 - exp(q(|x|)) with the sign of x,
 * q a polynomial fit of log(erfc) on [0.9, 4] (from 3.92 erf is 1 in f32, so |x| is
 * clamped at 4). Within 1.2 ulp of libm's erf over every f32 (test
 * special_erf_against_math_erf: a table of Python's math.erf and a sweep); NaN stays
 * NaN, erf(+-inf) = +-1, erf(-0) = -0. */
static inline float tl_erff(float x) {
  float a = tl_bits_f32(tl_f32_bits(x) & 0x7fffffffu), s = x * x;
  float p = 0.128379166f + s * (-0.376126349f + s * (0.112837151f + s * (-0.0268605091f + s * (0.00520386035f +
                                                                     s * (-0.000817565015f + s * 8.51314544e-05f)))));
  float small = x + x * p;
  float b = tl_blend_f32(0u - (tl_u32)(a < 4.0f), a, 4.0f);
  float q = 0.000320639228f + b * (-1.13025141f + b * (-0.631761074f + b * (-0.110183157f + b * (0.0265123472f +
            b * (-0.00480863219f + b * (0.000613206124f + b * (-4.9395072e-05f + b * (2.01547823e-06f +
            b * -1.8331562e-08f))))))));
  float big = tl_bits_f32(tl_f32_bits(1.0f - tl_expf(q)) | (tl_f32_bits(x) & 0x80000000u));
  float y = tl_blend_f32(0u - (tl_u32)(a < 0.9f), small, big);
  return tl_blend_f32(0u - (tl_u32)(x != x), x, y);
}
#endif

/* ---- f16 and bf16: 16-bit storage, computed in f32 ----
 * A double rounds to a 16-bit float (man stored mantissa bits, bias the exponent bias;
 * sign at bit 15 in both) to nearest, ties to even, with overflow to inf and NaN kept
 * (quiet, its sign kept): from a double directly, so f64 -> f16 rounds once. The
 * significand (53 bits, the implicit one included) is shifted right to the target's
 * precision, by more below the target's smallest normal exponent (subnormals); the
 * carry of a rounding up lands in the exponent field, up to inf. */
static inline tl_u16 tl_f64_to_small(double x, int man, int bias) {
  tl_u64 b = tl_f64_bits(x), a = b & 0x7fffffffffffffffull;
  tl_u32 sign = (tl_u32)(b >> 48) & 0x8000u, inf = (tl_u32)(2 * bias + 1) << man;
  if (a > 0x7ff0000000000000ull) return (tl_u16)(sign | inf | (1u << (man - 1)));
  int e = (int)(a >> 52) - 1023, emin = 1 - bias;
  if (e > bias) return (tl_u16)(sign | inf);
  if (e < emin - man - 1) return (tl_u16)sign; /* under half the smallest subnormal */
  tl_u64 m = (a & 0xfffffffffffffull) | (1ull << 52);
  int shift = 52 - man + (e < emin ? emin - e : 0);
  tl_u64 r = m >> shift, rem = m & ((1ull << shift) - 1), mid = 1ull << (shift - 1);
  if (rem > mid || (rem == mid && (r & 1))) r++; /* "half" is a type in OpenCL C */
  tl_u32 bits = e < emin ? (tl_u32)r : ((tl_u32)(e - emin) << man) + (tl_u32)r;
  return (tl_u16)(sign | (bits > inf ? inf : bits));
}
static inline tl_u16 tl_f64_to_f16(double x) { return tl_f64_to_small(x, 10, 15); }
static inline tl_u16 tl_f64_to_bf16(double x) { return tl_f64_to_small(x, 7, 127); }
static inline tl_u16 tl_f32_to_f16(float x) { return tl_f64_to_f16((double)x); }
static inline tl_u16 tl_f32_to_bf16(float x) { return tl_f64_to_bf16((double)x); }
/* exact: every f16 and bf16 is an f32 */
static inline float tl_f16_to_f32(tl_u16 h) {
  tl_u32 sign = (tl_u32)(h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
  if (e == 0) return sign ? -((float)m * 5.9604644775390625e-8f) : (float)m * 5.9604644775390625e-8f;
  return tl_bits_f32(sign | (e == 31 ? 0x7f800000u : (e + 112u) << 23) | m << 13);
}
static inline float tl_bf16_to_f32(tl_u16 h) { return tl_bits_f32((tl_u32)h << 16); }

/* an i64 or u64 (u: its bits unsigned) as a double that rounds to f16/bf16 as the
 * integer itself would: beyond 53 bits the bits shifted out are OR-ed into the last
 * (round to odd), so rounding once more to a 16-bit float is a single rounding */
static inline double tl_int_to_f64_odd(tl_i64 x, int u) {
  int neg = !u && x < 0, s = 0;
  tl_u64 m = neg ? 0 - (tl_u64)x : (tl_u64)x;
  while ((m >> s) >= (1ull << 53)) s++;
  double r = (double)((m >> s) | (tl_u64)((m & ((1ull << s) - 1)) != 0));
  for (int i = 0; i < s; i++) r *= 2.0;
  return neg ? -r : r;
}

/* float -> the narrower integers and u32: saturating, NaN 0, through a double (exact
 * from an f32; the bounds are exact doubles) */
static inline tl_i64 tl_f64_to_int(double x, double lo, double hi) {
  return x != x ? 0 : x <= lo ? (tl_i64)lo : x >= hi ? (tl_i64)hi : (tl_i64)x;
}
static inline tl_u64 tl_f64_to_u64(double x) {
  return x != x || x <= 0 ? 0 : x >= 18446744073709551616.0 ? ~(tl_u64)0 : (tl_u64)x;
}
static inline tl_u64 tl_idiv_u64(tl_u64 a, tl_u64 b) { return b == 0 ? 0 : a / b; }
static inline tl_u64 tl_mod_u64(tl_u64 a, tl_u64 b) { return b == 0 ? 0 : a % b; }

/* integer division and remainder truncate toward zero; by zero they give 0, and
 * MIN / -1 wraps, so no kernel ever traps */
static inline tl_i64 tl_idiv_i64(tl_i64 a, tl_i64 b) {
  return b == 0 ? 0 : b == -1 ? (tl_i64)(0 - (tl_u64)a) : a / b;
}
static inline tl_i64 tl_mod_i64(tl_i64 a, tl_i64 b) { return b == 0 || b == -1 ? 0 : a % b; }
static inline tl_i32 tl_idiv_i32(tl_i32 a, tl_i32 b) {
  return b == 0 ? 0 : b == -1 ? (tl_i32)(0 - (tl_u32)a) : a / b;
}
static inline tl_i32 tl_mod_i32(tl_i32 a, tl_i32 b) { return b == 0 || b == -1 ? 0 : a % b; }

/* integer power by squaring; a negative exponent gives 1/a^n truncated */
static inline tl_i64 tl_pow_i64(tl_i64 a, tl_i64 n) {
  if (n < 0) return a == 1 ? 1 : a == -1 ? ((n & 1) ? -1 : 1) : 0;
  tl_u64 r = 1, x = (tl_u64)a, e = (tl_u64)n; /* unsigned: the loop ends for any n */
  while (e) {
    if (e & 1) r *= x;
    x *= x;
    e >>= 1;
  }
  return (tl_i64)r;
}

/* Philox4x32-10 (Salmon et al., 2011): counter (i, stream) under a 64-bit key.
 * Element i of a random tensor depends on nothing but (seed, stream, i), so every
 * backend and every thread split produce the same numbers. */
static inline tl_u32 tl_mulhilo(tl_u32 a, tl_u32 b, tl_u32 *hi) {
  tl_u64 p = (tl_u64)a * b;
  *hi = (tl_u32)(p >> 32);
  return (tl_u32)p;
}
static inline void tl_philox(tl_u64 seed, tl_u64 stream, tl_u64 i, tl_u32 out[4]) {
  tl_u32 c0 = (tl_u32)i, c1 = (tl_u32)(i >> 32), c2 = (tl_u32)stream, c3 = (tl_u32)(stream >> 32);
  tl_u32 k0 = (tl_u32)seed, k1 = (tl_u32)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    tl_u32 hi0, hi1;
    tl_u32 lo0 = tl_mulhilo(0xD2511F53u, c0, &hi0);
    tl_u32 lo1 = tl_mulhilo(0xCD9E8D57u, c2, &hi1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}
#ifndef TL_SCALAR_HOST
/* uniform in [0, 1) */
static inline float tl_uniform_f32(tl_u64 seed, tl_u64 stream, tl_i64 i) {
  tl_u32 w[4];
  tl_philox(seed, stream, (tl_u64)i, w);
  return (float)(w[0] >> 8) * (1.0f / 16777216.0f);
}
static inline double tl_uniform_f64(tl_u64 seed, tl_u64 stream, tl_i64 i) {
  tl_u32 w[4];
  tl_philox(seed, stream, (tl_u64)i, w);
  return (double)((((tl_u64)w[0] << 32) | w[1]) >> 11) * (1.0 / 9007199254740992.0);
}
#endif

/* a gathered or scattered row index clamped to [0, rows): a bad index (the API checks
 * them first) picks the nearest row, never memory outside the table */
static inline tl_i64 tl_clamp_row(tl_i64 i, tl_i64 rows) { return i < 0 ? 0 : i >= rows ? rows - 1 : i; }

#endif
