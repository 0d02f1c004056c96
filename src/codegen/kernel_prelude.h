/* kernel_prelude.h — the scalar helpers every generated kernel starts with.
 * The same file is compiled into libtl (the interpreter and constant folding use
 * it) and pasted as text in front of each kernel, so both agree bit for bit on
 * integer division, max, pow and the random generator. No system headers: kernels
 * must compile fast and under libtcc. */
#ifndef TL_KERNEL_PRELUDE_H
#define TL_KERNEL_PRELUDE_H

typedef long long tl_i64;
typedef unsigned long long tl_u64;
typedef int tl_i32;
typedef unsigned int tl_u32;
typedef unsigned char tl_bool;

float expf(float), logf(float), sqrtf(float), sinf(float), cosf(float), tanhf(float),
    powf(float, float), fmodf(float, float), fabsf(float);
double exp(double), log(double), sqrt(double), sin(double), cos(double), tanh(double),
    pow(double, double), fmod(double, double), fabs(double);

/* max as a select: a NaN in b gives NaN, a NaN in a gives b (one rule everywhere) */
#define TL_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Bit-level helpers: a select written with an all-ones/all-zeros mask is not a branch,
 * so loops using it vectorize under strict IEEE semantics (-ftrapping-math), where a
 * compiler will not turn a ?: guarding floating-point work into a vector select. */
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
static inline float tl_blend_f32(tl_u32 mask, float a, float b) {
  return tl_bits_f32((tl_f32_bits(a) & mask) | (tl_f32_bits(b) & ~mask));
}
static inline double tl_blend_f64(tl_u64 mask, double a, double b) {
  tl_u64 x, y;
  __builtin_memcpy(&x, &a, 8);
  __builtin_memcpy(&y, &b, 8);
  x = (x & mask) | (y & ~mask);
  __builtin_memcpy(&a, &x, 8);
  return a;
}
/* c ? a : b and max for floats, as blends (same results as the selects) */
static inline float tl_where_f32(int c, float a, float b) { return tl_blend_f32(0u - (tl_u32)(c != 0), a, b); }
static inline double tl_where_f64(int c, double a, double b) {
  return tl_blend_f64(0ull - (tl_u64)(c != 0), a, b);
}
static inline float tl_max_f32(float a, float b) { return tl_where_f32(a > b, a, b); }
static inline double tl_max_f64(double a, double b) { return tl_where_f64(a > b, a, b); }

/* float -> integer saturates and NaN gives 0 (Rust's `as`; C leaves both undefined and
 * x86 gives INT_MIN). Only an in-range value (or 0) reaches the conversion; the
 * bounds are OR-ed in afterwards, so it stays branch-free and vectorizes. The lower
 * bound -2^31 (-2^63) is exact in both float types, and so is the upper 2^31 (2^63):
 * everything below it truncates into range. */
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

/* exp for f32, vectorizable (libm's expf is an opaque call): exp(x) = 2^k p(r),
 * k = round(x / ln 2), r = x - k ln 2 in two parts, p a degree-6 Taylor polynomial
 * (|r| <= 0.35: under 2 ulp). Overflow gives inf, deep underflow 0 (no subnormals),
 * NaN stays NaN. */
static inline float tl_expf(float x) {
  tl_u32 lo = 0u - (tl_u32)(x < -87.0f), hi = 0u - (tl_u32)(x > 88.0f);
  float c = tl_blend_f32(lo, -87.0f, tl_blend_f32(hi, 88.0f, x));
  float t = c * 1.44269504f;
  tl_i32 k = (tl_i32)(t + 128.5f) - 128; /* round by truncating a positive number */
  float n = (float)k;
  float r = c - n * 0.693145751953125f - n * 1.428606765330187e-06f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f + r * 0.0013888889f)))));
  float y = p * tl_bits_f32((tl_u32)(k + 127) << 23);
  tl_u32 over = 0u - (tl_u32)(x > 88.72283f), under = 0u - (tl_u32)(x < -87.33654f);
  tl_u32 nan = 0u - (tl_u32)(x != x);
  y = tl_blend_f32(over, (float)(1e308 * 10.0), y);
  y = tl_blend_f32(under, 0.0f, y);
  return tl_blend_f32(nan, x, y);
}

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
  tl_u64 r = 1, x = (tl_u64)a;
  while (n) {
    if (n & 1) r *= x;
    x *= x;
    n >>= 1;
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

/* a gathered or scattered row index clamped to [0, rows): a bad index (the API checks
 * them first) picks the nearest row, never memory outside the table */
static inline tl_i64 tl_clamp_row(tl_i64 i, tl_i64 rows) { return i < 0 ? 0 : i >= rows ? rows - 1 : i; }

/* ---- scatter-add (the gradient of a row gather) ---------------------------------------
 * out [rows, d] = 0, then out[idx[i], :] += src[i, :] for i in [0, n), in the order of i
 * (a repeated row sums the same on any number of threads). The parallel range is out's
 * rows: a chunk zeroes its rows [begin, end), then walks every index and adds the rows
 * that land in it, so no two threads write one row and the work is rows*d (the fill)
 * + chunks*n + n*d. Compiled only where TL_SCATTER is defined (its kernels). */
#ifdef TL_SCATTER
#define TL_SCATTER_ADD(name, T, I)                                                                \
  static void name(T *restrict out, const T *restrict src, const I *restrict idx, tl_i64 n,        \
                   tl_i64 rows, tl_i64 d, tl_i64 begin, tl_i64 end) {                              \
    for (tl_i64 k = begin * d; k < end * d; k++) out[k] = 0;                                       \
    for (tl_i64 i = 0; i < n; i++) {                                                              \
      tl_i64 row = tl_clamp_row((tl_i64)idx[i], rows);                                            \
      if (row < begin || row >= end) continue;                                                    \
      T *o = out + row * d;                                                                       \
      const T *s = src + i * d;                                                                   \
      for (tl_i64 k = 0; k < d; k++) o[k] += s[k];                                                \
    }                                                                                             \
  }
TL_SCATTER_ADD(tl_scatter_add_f32_i32, float, tl_i32)
TL_SCATTER_ADD(tl_scatter_add_f32_i64, float, tl_i64)
TL_SCATTER_ADD(tl_scatter_add_f64_i32, double, tl_i32)
TL_SCATTER_ADD(tl_scatter_add_f64_i64, double, tl_i64)
#undef TL_SCATTER_ADD
#endif

#endif

/* ---- GEMM (matmul-shaped sums) ------------------------------------------------------
 * A fixed, tested routine that generated kernels call (docs/decisions.md, "GEMM in the
 * prelude"): the lowering recognises the sum, picks the plan (strides, unit tiles) and
 * renders a call; this code packs, blocks and runs the register-tiled micro-kernel.
 * Pasted only into GEMM kernels (render_c.c cuts the prelude at this section: every
 * realize hashes its kernel's source, and this is most of the text); its functions
 * are compiled only where TL_GEMM is defined (those kernels and the GEMM tests). The
 * sizes are shared with the lowering. */
#ifndef TL_KERNEL_PRELUDE_GEMM_H
#define TL_KERNEL_PRELUDE_GEMM_H
#define TL_GEMM_MR 6          /* rows of C a micro-kernel holds */
#define TL_GEMM_VBYTES 32     /* one vector: AVX2 (8 f32, 4 f64); NR is two vectors */
#define TL_GEMM_KC 256        /* depth of a packed block: a B micro-panel (KC x NR) is 16 KiB, in L1 */
#define TL_GEMM_MC 144        /* rows of A packed at a time: 144 x 256 f32 = 144 KiB, in L2 */
#define TL_GEMM_NC_BYTES 4096 /* columns of B packed at a time, times the element size (1 MiB) */
#define TL_GEMM_MAXB 8        /* batch axes */
#define TL_GEMM_PACK_B_ROWS 12 /* B is packed for more rows than this */

#ifdef TL_GEMM
typedef __SIZE_TYPE__ tl_size;
void *malloc(tl_size);
void free(void *);

/* C[b][m, n] = sum_k A[b][m, k] B[b][k, n], every operand strided (elements); C's rows
 * are contiguous. The parallel range counts unit tiles (um x un of C) in the order
 * (batch, unit row, unit column); a chunk of them runs as at most three rectangles
 * (see tl_gemm_run_*), so a thread given half of C packs and blocks like one given
 * all of it, and small units still spread any shape over many cores. */
typedef struct tl_gemm_desc {
  tl_i64 m, n, k;
  tl_i64 sam, sak, sbk, sbn, ldc;
  tl_i64 um, un, gm, gn; /* unit tile and units along M and N */
  int nbatch;
  tl_i64 bshape[TL_GEMM_MAXB], bsa[TL_GEMM_MAXB], bsb[TL_GEMM_MAXB], bsc[TL_GEMM_MAXB];
} tl_gemm_desc;

/* applied to C's row m, columns [n0, n1), of batch bi once its sum is complete (while
 * it is in cache): the elementwise consumers fused into the kernel */
typedef void (*tl_gemm_epi)(void *const *bufs, tl_i64 bi, tl_i64 m, tl_i64 n0, tl_i64 n1);

static inline tl_i64 tl_gemm_min(tl_i64 a, tl_i64 b) { return a < b ? a : b; }

#if defined(__GNUC__) && !defined(__TINYC__)
#define TL_GEMM_ALIGN __attribute__((aligned(64)))
#else
#define TL_GEMM_ALIGN
#endif

/* Packing. A block (mc x kc) goes to panels of MR rows, each k-major (the micro-kernel
 * reads MR values of one k together), padded with zero rows; a B block (kc x nc) to
 * panels of NR columns, k-major, padded with zero columns. Loop order follows the
 * operand's unit stride so reads stay sequential. */
#define TL_GEMM_PACK(T, S)                                                                        \
  static inline void tl_pack_a_##S(const T *a, tl_i64 sam, tl_i64 sak, tl_i64 mc, tl_i64 kc, T *dst) {   \
    for (tl_i64 i0 = 0; i0 < mc; i0 += TL_GEMM_MR, dst += TL_GEMM_MR * kc) {                      \
      tl_i64 h = tl_gemm_min(TL_GEMM_MR, mc - i0);                                                \
      const T *src = a + i0 * sam;                                                                \
      if (h == TL_GEMM_MR) { /* the rows side by side: six streams for the prefetcher */          \
        const T *r0 = src, *r1 = src + sam, *r2 = src + 2 * sam, *r3 = src + 3 * sam;             \
        const T *r4 = src + 4 * sam, *r5 = src + 5 * sam;                                         \
        for (tl_i64 k = 0; k < kc; k++) {                                                         \
          T *o = dst + k * TL_GEMM_MR;                                                            \
          tl_i64 x = k * sak;                                                                     \
          o[0] = r0[x], o[1] = r1[x], o[2] = r2[x], o[3] = r3[x], o[4] = r4[x], o[5] = r5[x];     \
        }                                                                                         \
      } else {                                                                                    \
        for (tl_i64 k = 0; k < kc; k++)                                                           \
          for (tl_i64 i = 0; i < TL_GEMM_MR; i++)                                                 \
            dst[k * TL_GEMM_MR + i] = i < h ? src[i * sam + k * sak] : (T)0;                      \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  static inline void tl_pack_b_##S(const T *b, tl_i64 sbk, tl_i64 sbn, tl_i64 kc, tl_i64 nc, T *dst) {   \
    const tl_i64 nr = 2 * TL_GEMM_VBYTES / (tl_i64)sizeof(T);                                     \
    for (tl_i64 j0 = 0; j0 < nc; j0 += nr, dst += nr * kc) {                                      \
      tl_i64 w = tl_gemm_min(nr, nc - j0);                                                        \
      const T *src = b + j0 * sbn;                                                                \
      if (sbn == 1 && w == nr) {                                                                  \
        for (tl_i64 k = 0; k < kc; k++) __builtin_memcpy(dst + k * nr, src + k * sbk, sizeof(T) * (tl_size)nr); \
      } else if (sbk == 1) {                                                                      \
        for (tl_i64 j = 0; j < nr; j++)                                                           \
          for (tl_i64 k = 0; k < kc; k++) dst[k * nr + j] = j < w ? src[j * sbn + k] : (T)0;      \
      } else {                                                                                    \
        for (tl_i64 k = 0; k < kc; k++)                                                           \
          for (tl_i64 j = 0; j < nr; j++) dst[k * nr + j] = j < w ? src[k * sbk + j * sbn] : (T)0; \
      }                                                                                           \
    }                                                                                             \
  }

#if defined(__GNUC__) && !defined(__TINYC__)
/* The micro-kernel: C[0:mr, 0:nr] (+)= A[0:mr, 0:kc] B[0:kc, 0:NR], an MR x NR block
 * of C in 12 vector registers (AVX2: 12 of 16 ymm; two more for a row of B, one for
 * a broadcast A value), an FMA each. A is read at a[i*ars + k*acs] (packed: ars 1,
 * acs MR), B at b[k*bcs + j] (packed: bcs NR). Rows past mr read the last valid row
 * (their sums are dropped), so an unpacked A is never read out of bounds; columns past
 * nr must be readable (packed, zero). Without AVX (valgrind's build) GCC splits every
 * vector in two: slower, same results. */
#define TL_GEMM_ROW(i)                                                                            \
  {                                                                                               \
    T s_ = a##i[k * acs];                                                                         \
    V x_ = TL_BC(s_);                                                                             \
    c##i##0 += x_ * b0;                                                                           \
    c##i##1 += x_ * b1;                                                                           \
  }
#define TL_GEMM_STORE(i)                                                                          \
  if (i < mr) {                                                                                   \
    T *row_ = c + i * ldc;                                                                        \
    if (nr == NRV) {                                                                              \
      if (add) {                                                                                  \
        V o0_, o1_;                                                                               \
        __builtin_memcpy(&o0_, row_, sizeof(V));                                                  \
        __builtin_memcpy(&o1_, row_ + LANES, sizeof(V));                                          \
        c##i##0 += o0_;                                                                           \
        c##i##1 += o1_;                                                                           \
      }                                                                                           \
      __builtin_memcpy(row_, &c##i##0, sizeof(V));                                                \
      __builtin_memcpy(row_ + LANES, &c##i##1, sizeof(V));                                        \
    } else {                                                                                      \
      T t_[2 * TL_GEMM_VBYTES / sizeof(T)];                                                       \
      __builtin_memcpy(t_, &c##i##0, sizeof(V));                                                  \
      __builtin_memcpy(t_ + LANES, &c##i##1, sizeof(V));                                          \
      for (int j = 0; j < nr; j++) row_[j] = add ? row_[j] + t_[j] : t_[j];                       \
    }                                                                                             \
  }
#define TL_GEMM_UKR(S)                                                                            \
  static inline void tl_ukr_##S(tl_i64 kc, const T *a, tl_i64 ars, tl_i64 acs, const T *b, tl_i64 bcs, \
                                T *c, tl_i64 ldc, int mr, int nr, int add) {                      \
    enum { LANES = TL_GEMM_VBYTES / sizeof(T), NRV = 2 * LANES };                                 \
    const T *a0 = a, *a1 = a + (mr > 1 ? 1 : mr - 1) * ars, *a2 = a + (mr > 2 ? 2 : mr - 1) * ars; \
    const T *a3 = a + (mr > 3 ? 3 : mr - 1) * ars, *a4 = a + (mr > 4 ? 4 : mr - 1) * ars;         \
    const T *a5 = a + (mr > 5 ? 5 : mr - 1) * ars;                                                \
    if (mr == 1) { /* one row (a row times a matrix, an edge): four chains over k, not six rows */ \
      V s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0}, s5 = {0}, s6 = {0}, s7 = {0};            \
      tl_i64 k = 0;                                                                               \
      for (; k + 4 <= kc; k += 4, b += 4 * bcs) {                                                 \
        V b0, b1, x0 = TL_BC(a[k * acs]), x1 = TL_BC(a[(k + 1) * acs]);                           \
        V x2 = TL_BC(a[(k + 2) * acs]), x3 = TL_BC(a[(k + 3) * acs]);                             \
        __builtin_memcpy(&b0, b, sizeof(V));                                                      \
        __builtin_memcpy(&b1, b + LANES, sizeof(V));                                              \
        s0 += x0 * b0, s1 += x0 * b1;                                                             \
        __builtin_memcpy(&b0, b + bcs, sizeof(V));                                                \
        __builtin_memcpy(&b1, b + bcs + LANES, sizeof(V));                                        \
        s2 += x1 * b0, s3 += x1 * b1;                                                             \
        __builtin_memcpy(&b0, b + 2 * bcs, sizeof(V));                                            \
        __builtin_memcpy(&b1, b + 2 * bcs + LANES, sizeof(V));                                    \
        s4 += x2 * b0, s5 += x2 * b1;                                                             \
        __builtin_memcpy(&b0, b + 3 * bcs, sizeof(V));                                            \
        __builtin_memcpy(&b1, b + 3 * bcs + LANES, sizeof(V));                                    \
        s6 += x3 * b0, s7 += x3 * b1;                                                             \
      }                                                                                           \
      for (; k < kc; k++, b += bcs) {                                                             \
        V b0, b1, x0 = TL_BC(a[k * acs]);                                                         \
        __builtin_memcpy(&b0, b, sizeof(V));                                                      \
        __builtin_memcpy(&b1, b + LANES, sizeof(V));                                              \
        s0 += x0 * b0, s1 += x0 * b1;                                                             \
      }                                                                                           \
      V c00 = (s0 + s2) + (s4 + s6), c01 = (s1 + s3) + (s5 + s7);                                 \
      TL_GEMM_STORE(0)                                                                            \
      return;                                                                                     \
    }                                                                                             \
    for (int i_ = 0; i_ < mr; i_++) { /* C is read at the end: fetch it while the sums run */      \
      __builtin_prefetch(c + i_ * ldc, 1);                                                        \
      __builtin_prefetch(c + i_ * ldc + NRV - 1, 1);                                              \
    }                                                                                             \
    V c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};                          \
    V c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};                          \
    for (tl_i64 k = 0; k < kc; k++, b += bcs) {                                                   \
      V b0, b1;                                                                                   \
      __builtin_memcpy(&b0, b, sizeof(V));                                                        \
      __builtin_memcpy(&b1, b + LANES, sizeof(V));                                                \
      TL_GEMM_ROW(0) TL_GEMM_ROW(1) TL_GEMM_ROW(2) TL_GEMM_ROW(3) TL_GEMM_ROW(4) TL_GEMM_ROW(5)   \
    }                                                                                             \
    TL_GEMM_STORE(0) TL_GEMM_STORE(1) TL_GEMM_STORE(2) TL_GEMM_STORE(3) TL_GEMM_STORE(4)          \
    TL_GEMM_STORE(5)                                                                              \
  }
typedef float tl_vf32 __attribute__((vector_size(TL_GEMM_VBYTES)));
typedef double tl_vf64 __attribute__((vector_size(TL_GEMM_VBYTES)));
#define T float
#define V tl_vf32
#define TL_BC(s) ((V){s, s, s, s, s, s, s, s})
TL_GEMM_UKR(f32)
#undef TL_BC
#undef V
#undef T
#define T double
#define V tl_vf64
#define TL_BC(s) ((V){s, s, s, s})
TL_GEMM_UKR(f64)
#undef TL_BC
#undef V
#undef T
#else
/* no vector extension (libtcc): the same contract, one element at a time */
#define TL_GEMM_UKR(T, S)                                                                         \
  static inline void tl_ukr_##S(tl_i64 kc, const T *a, tl_i64 ars, tl_i64 acs, const T *b, tl_i64 bcs, T *c, \
                         tl_i64 ldc, int mr, int nr, int add) {                                   \
    for (int i = 0; i < mr; i++)                                                                  \
      for (int j = 0; j < nr; j++) {                                                              \
        T s = 0;                                                                                  \
        for (tl_i64 k = 0; k < kc; k++) s += a[i * ars + k * acs] * b[k * bcs + j];               \
        c[i * ldc + j] = add ? c[i * ldc + j] + s : s;                                            \
      }                                                                                           \
  }
TL_GEMM_UKR(float, f32)
TL_GEMM_UKR(double, f64)
#endif

/* One rectangle [m0, m1) x [n0, n1) of one batch's C, blocked as BLIS does: columns
 * by NC, depth by KC (B block packed once, then kept in L2/L3), rows by MC (A block
 * packed, in L2), then NR x MR micro-tiles (a B micro-panel stays in L1 across the
 * rows). With few rows to reuse it (m1 - m0 <= 2 MR) B is read in place when its rows
 * are contiguous; with few columns A is read in place: packing would cost more than
 * it saves. ws: KC x NC then MC x KC elements, 64-aligned (NULL: nothing packed but
 * edge panels, on the stack). */
#define TL_GEMM_RECT(T, S)                                                                        \
  /* One row of C (a row times a matrix read along its rows): nothing to reuse, so no     \
   * packing and no register tile; B is streamed in order, four rows at a time, into a   \
   * stretch of C kept in L1 (memory speed, where the tile would read B down columns). */ \
  static inline void tl_gemm_row_##S(const tl_gemm_desc *d, const T *a, const T *B, T *c, tl_i64 n0, tl_i64 n1, \
                                     void *const *bufs, tl_i64 bi, tl_i64 m, tl_gemm_epi epi) {   \
    enum { CH = 8192 / sizeof(T) };                                                               \
    for (tl_i64 j0 = n0; j0 < n1; j0 += CH) {                                                     \
      tl_i64 w = tl_gemm_min(CH, n1 - j0), k = 0;                                                 \
      T *restrict cr = c + j0;                                                                    \
      for (tl_i64 j = 0; j < w; j++) cr[j] = 0;                                                   \
      for (; k + 4 <= d->k; k += 4) {                                                             \
        T x0 = a[k * d->sak], x1 = a[(k + 1) * d->sak], x2 = a[(k + 2) * d->sak], x3 = a[(k + 3) * d->sak]; \
        const T *restrict b0 = B + k * d->sbk + j0, *restrict b1 = b0 + d->sbk;                   \
        const T *restrict b2 = b1 + d->sbk, *restrict b3 = b2 + d->sbk;                           \
        for (tl_i64 j = 0; j < w; j++) cr[j] += x0 * b0[j] + x1 * b1[j] + x2 * b2[j] + x3 * b3[j]; \
      }                                                                                           \
      for (; k < d->k; k++) {                                                                     \
        T x0 = a[k * d->sak];                                                                     \
        const T *restrict b0 = B + k * d->sbk + j0;                                               \
        for (tl_i64 j = 0; j < w; j++) cr[j] += x0 * b0[j];                                       \
      }                                                                                           \
      if (epi) epi(bufs, bi, m, j0, j0 + w);                                                      \
    }                                                                                             \
  }                                                                                               \
  static inline void tl_gemm_rect_##S(const tl_gemm_desc *d, const T *A, const T *B, T *C, tl_i64 m0, tl_i64 m1, \
                               tl_i64 n0, tl_i64 n1, T *pb, T *pa, void *const *bufs, tl_i64 bi,         \
                               tl_gemm_epi epi) {                                                 \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), NC = TL_GEMM_NC_BYTES / sizeof(T) };              \
    T edge[TL_GEMM_KC * NR] TL_GEMM_ALIGN;                                                        \
    int pack_b = pb && (d->sbn != 1 || m1 - m0 > TL_GEMM_PACK_B_ROWS);                                 \
    int pack_a = pa && n1 - n0 > 2 * NR;                                                          \
    if (m1 - m0 == 1 && d->sbn == 1) {                                                            \
      tl_gemm_row_##S(d, A + m0 * d->sam, B, C + m0 * d->ldc, n0, n1, bufs, bi, m0, epi);         \
      return;                                                                                     \
    }                                                                                             \
    for (tl_i64 jc = n0; jc < n1; jc += NC) {                                                     \
      tl_i64 nc = tl_gemm_min(NC, n1 - jc);                                                       \
      for (tl_i64 pc = 0; pc < d->k; pc += TL_GEMM_KC) {                                          \
        tl_i64 kc = tl_gemm_min(TL_GEMM_KC, d->k - pc);                                           \
        const T *bk = B + pc * d->sbk + jc * d->sbn;                                              \
        if (pack_b) tl_pack_b_##S(bk, d->sbk, d->sbn, kc, nc, pb);                                \
        for (tl_i64 ic = m0; ic < m1; ic += TL_GEMM_MC) {                                         \
          tl_i64 mc = tl_gemm_min(TL_GEMM_MC, m1 - ic);                                           \
          const T *ak = A + ic * d->sam + pc * d->sak;                                            \
          if (pack_a) tl_pack_a_##S(ak, d->sam, d->sak, mc, kc, pa);                              \
          for (tl_i64 jr = 0; jr < nc; jr += NR) {                                                \
            int nr = (int)tl_gemm_min(NR, nc - jr);                                               \
            const T *bp = pb + jr * kc;                                                           \
            tl_i64 bcs = NR;                                                                      \
            if (!pack_b && d->sbn == 1 && nr == NR) {                                             \
              bp = bk + jr;                                                                       \
              bcs = d->sbk;                                                                       \
            } else if (!pack_b) {                                                                 \
              tl_pack_b_##S(bk + jr * d->sbn, d->sbk, d->sbn, kc, nr, edge);                      \
              bp = edge;                                                                          \
            }                                                                                     \
            T *cp = C + ic * d->ldc + jc + jr;                                                    \
            for (tl_i64 ir = 0; ir < mc; ir += TL_GEMM_MR) {                                      \
              int mr = (int)tl_gemm_min(TL_GEMM_MR, mc - ir);                                     \
              if (pack_a)                                                                         \
                tl_ukr_##S(kc, pa + ir * kc, 1, TL_GEMM_MR, bp, bcs, cp + ir * d->ldc, d->ldc, mr, nr, pc > 0); \
              else                                                                                \
                tl_ukr_##S(kc, ak + ir * d->sam, d->sam, d->sak, bp, bcs, cp + ir * d->ldc, d->ldc, mr, nr, \
                           pc > 0);                                                               \
            }                                                                                     \
          }                                                                                       \
          if (epi && pc + kc >= d->k)                                                             \
            for (tl_i64 i = ic; i < ic + mc; i++) epi(bufs, bi, i, jc, jc + nc);                  \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  /* Units [begin, end) of the grid: a partial unit row, whole unit rows (one rectangle),  \
   * a partial row; per batch. K == 0 leaves zeros. */                                            \
  static inline void tl_gemm_run_##S(const tl_gemm_desc *d, const T *A, const T *B, T *C, tl_i64 begin,  \
                              tl_i64 end, void *const *bufs, tl_gemm_epi epi) {                   \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), NC = TL_GEMM_NC_BYTES / sizeof(T) };              \
    void *raw = 0;                                                                                \
    T *pb = 0, *pa = 0;                                                                           \
    if (d->m > 2 * TL_GEMM_MR || d->sbn != 1) { /* blocks no bigger than the matrices */          \
      tl_i64 kc = tl_gemm_min(TL_GEMM_KC, d->k), nc = tl_gemm_min(NC, (d->n + NR - 1) / NR * NR);  \
      tl_i64 mc = tl_gemm_min(TL_GEMM_MC, (d->m + TL_GEMM_MR - 1) / TL_GEMM_MR * TL_GEMM_MR);     \
      raw = malloc(sizeof(T) * (tl_size)(kc * nc + mc * kc) + 64);                                \
      pb = raw ? (T *)(((tl_size)raw + 63) & ~(tl_size)63) : 0;                                   \
      pa = raw ? pb + kc * nc : 0;                                                                \
    }                                                                                             \
    tl_i64 per = d->gm * d->gn;                                                                   \
    for (tl_i64 t = begin; t < end;) {                                                            \
      tl_i64 bi = t / per, r = t - bi * per, mt = r / d->gn, nt = r - mt * d->gn, x = bi;          \
      tl_i64 oa = 0, ob = 0, oc = 0;                                                              \
      for (int i = d->nbatch - 1; i >= 0; i--) {                                                  \
        tl_i64 q = x % d->bshape[i];                                                              \
        x /= d->bshape[i];                                                                        \
        oa += q * d->bsa[i];                                                                      \
        ob += q * d->bsb[i];                                                                      \
        oc += q * d->bsc[i];                                                                      \
      }                                                                                           \
      tl_i64 ma = mt * d->um, mb, na, nb, used;                                                   \
      if (nt == 0 && end - t >= d->gn) {                                                          \
        tl_i64 rows = tl_gemm_min((end - t) / d->gn, d->gm - mt);                                 \
        mb = tl_gemm_min(d->m, (mt + rows) * d->um);                                              \
        na = 0;                                                                                   \
        nb = d->n;                                                                                \
        used = rows * d->gn;                                                                      \
      } else {                                                                                    \
        tl_i64 cols = tl_gemm_min(end - t, d->gn - nt);                                           \
        mb = tl_gemm_min(d->m, ma + d->um);                                                       \
        na = nt * d->un;                                                                          \
        nb = tl_gemm_min(d->n, (nt + cols) * d->un);                                              \
        used = cols;                                                                              \
      }                                                                                           \
      if (d->k > 0) {                                                                             \
        tl_gemm_rect_##S(d, A + oa, B + ob, C + oc, ma, mb, na, nb, pb, pa, bufs, bi, epi);           \
      } else {                                                                                    \
        for (tl_i64 i = ma; i < mb; i++) {                                                        \
          for (tl_i64 j = na; j < nb; j++) C[oc + i * d->ldc + j] = 0;                            \
          if (epi) epi(bufs, bi, i, na, nb);                                                      \
        }                                                                                         \
      }                                                                                           \
      t += used;                                                                                  \
    }                                                                                             \
    free(raw);                                                                                    \
  }
TL_GEMM_PACK(float, f32)
TL_GEMM_PACK(double, f64)
TL_GEMM_RECT(float, f32)
TL_GEMM_RECT(double, f64)
#endif /* TL_GEMM */
#endif /* TL_KERNEL_PRELUDE_GEMM_H */
