/* kernel_prelude.h — the text every generated kernel starts with: core/scalar.h
 * (the scalar semantics, shared with constant folding and the interpreter), then the
 * scatter-add routine (compiled only in scatter kernels) and, for GEMM kernels only,
 * the GEMM routine below, then the convolution over it (kernel_prelude_conv.h). The
 * build pastes the three files, in that order, into build/gen/kernel_prelude.inc (Makefile); compiled into libtl, this
 * header includes core/scalar.h itself. */
#include "core/scalar.h" /* tl-prelude: dropped from the pasted text */

/* ---- scatter-add (the gradient of a row gather) ---------------------------------------
 * out [rows, d] = 0, then out[idx[i], :] += src[i, :] for i in [0, n), in the order of i
 * (a repeated row sums the same on any number of threads). The parallel range is out's
 * rows: a chunk zeroes its rows [begin, end), then walks every index and adds the rows
 * that land in it, so no two threads write one row and the work is rows*d (the fill)
 * + chunks*n + n*d. Compiled only where TL_SCATTER is defined (its kernels), once
 * (many kernels may be pasted into one translation unit, each with its prelude). */
#if defined(TL_SCATTER) && !defined(TL_KERNEL_PRELUDE_SCATTER)
#define TL_KERNEL_PRELUDE_SCATTER
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
/* The micro-tile is sized for the vectors the kernel is compiled for: with AVX-512
 * (`-march=native` on such a CPU defines __AVX512F__) 12 rows by two 64-byte vectors,
 * C in 24 of the 32 zmm registers; otherwise 6 rows by two 32-byte vectors, 12 of 16
 * ymm. TL_GEMM_WIDE forces the wide tile without AVX-512 (GCC splits each vector in
 * two: slow, same results), so the tests run the 512-bit layout on any machine. */
#if defined(__AVX512F__) || defined(TL_GEMM_WIDE)
#define TL_GEMM_MR 12         /* rows of C a micro-kernel holds */
#define TL_GEMM_VBYTES 64     /* one vector: AVX-512 (16 f32, 8 f64); NR is two vectors */
#define TL_GEMM_EACH_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#else
#define TL_GEMM_MR 6          /* rows of C a micro-kernel holds */
#define TL_GEMM_VBYTES 32     /* one vector: AVX2 (8 f32, 4 f64); NR is two vectors */
#define TL_GEMM_EACH_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5)
#endif
/* The lowering (compiled into the library, which does not know the kernel's vectors)
 * cuts C into unit tiles that are whole micro-tiles of either build. */
#define TL_GEMM_UNIT_MR 12
#define TL_GEMM_UNIT_VBYTES 64
#ifndef TL_GEMM_KC /* -DTL_GEMM_KC=... and -DTL_GEMM_MC=... in TL_CFLAGS retune the blocking */
#define TL_GEMM_KC 256        /* depth of a packed block: a B micro-panel (KC x NR) is 16 KiB (AVX2), in L1 */
#endif
#ifndef TL_GEMM_MC
#define TL_GEMM_MC 144        /* rows of A packed at a time: 144 x 256 f32 = 144 KiB, in L2 */
#endif
#ifndef TL_GEMM_NC_BYTES
#define TL_GEMM_NC_BYTES 4096 /* columns of B packed at a time, times the element size (1 MiB) */
#endif
#define TL_GEMM_MAXB 8        /* batch axes */
#ifndef TL_GEMM_PACK_B_ROWS
#define TL_GEMM_PACK_B_ROWS 12 /* B (row-major) is packed for more rows than this */
#endif
#ifndef TL_GEMM_SHORT_B_ROWS
/* ... and for more than this when its rows are short (at most TL_GEMM_SHORT_B_BYTES
 * apart: a micro-panel's KC rows then sit in few pages), where the packing would cost
 * about as much as the products. Measured on AVX-512 at 2 threads: 128x784x256 (1 KiB
 * rows, 64 a thread) 0.18-0.19 ms in place against 0.21-0.22 ms packed; a convolution's
 * 64 x 576 x 3136 (12.25 KiB rows) 79 ms in place against 50 ms packed. */
#define TL_GEMM_SHORT_B_ROWS 64
#endif
#ifndef TL_GEMM_SHORT_B_BYTES
#define TL_GEMM_SHORT_B_BYTES 2048
#endif

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
/* the depth of each packed block: K in equal blocks of at most KC (784 = 4 x 196, not
 * 3 x 256 + 16, whose last block would load and store C for 16 products a row) */
static inline tl_i64 tl_gemm_kstep(tl_i64 k) {
  tl_i64 blocks = (k + TL_GEMM_KC - 1) / TL_GEMM_KC;
  return blocks > 1 ? (k + blocks - 1) / blocks : TL_GEMM_KC;
}

#if defined(__GNUC__) && !defined(__TINYC__)
#define TL_GEMM_ALIGN __attribute__((aligned(64)))
#else
#define TL_GEMM_ALIGN
#endif

/* Packing. A block (mc x kc) goes to panels of MR rows, each k-major (the micro-kernel
 * reads MR values of one k together), padded with zero rows; a B block (kc x nc) to
 * panels of NR columns, k-major, padded with zero columns. Loop order follows the
 * operand's unit stride so reads stay sequential. */
#define TL_GEMM_PACK_ROW(i) __typeof__(src) r##i = src + i * sam;
#define TL_GEMM_PACK_COPY(i) o[i] = r##i[x];
#define TL_GEMM_PACK(T, S)                                                                        \
  static inline void tl_pack_a_##S(const T *a, tl_i64 sam, tl_i64 sak, tl_i64 mc, tl_i64 kc, T *dst) {   \
    for (tl_i64 i0 = 0; i0 < mc; i0 += TL_GEMM_MR, dst += TL_GEMM_MR * kc) {                      \
      tl_i64 h = tl_gemm_min(TL_GEMM_MR, mc - i0);                                                \
      const T *src = a + i0 * sam;                                                                \
      if (h == TL_GEMM_MR) { /* the rows side by side: MR streams for the prefetcher */           \
        TL_GEMM_EACH_ROW(TL_GEMM_PACK_ROW)                                                        \
        for (tl_i64 k = 0; k < kc; k++) {                                                         \
          T *o = dst + k * TL_GEMM_MR;                                                            \
          tl_i64 x = k * sak;                                                                     \
          TL_GEMM_EACH_ROW(TL_GEMM_PACK_COPY)                                                     \
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
      } else if (sbk == 1) { /* B^T row-major: square blocks transposed in registers */          \
        tl_i64 k0 = 0;                                                                            \
        if (TL_GEMM_TRANSPOSE && w == nr)                                                         \
          for (; k0 + TL_GEMM_TR(T) <= kc; k0 += TL_GEMM_TR(T))                                   \
            for (tl_i64 j = 0; j < nr; j += TL_GEMM_TR(T)) tl_gemm_tr_##S(src + j * sbn + k0, sbn, dst + k0 * nr + j, nr); \
        for (tl_i64 j = 0; j < nr; j++)                                                           \
          for (tl_i64 k = k0; k < kc; k++) dst[k * nr + j] = j < w ? src[j * sbn + k] : (T)0;     \
      } else {                                                                                    \
        for (tl_i64 k = 0; k < kc; k++)                                                           \
          for (tl_i64 j = 0; j < nr; j++) dst[k * nr + j] = j < w ? src[k * sbk + j * sbn] : (T)0; \
      }                                                                                           \
    }                                                                                             \
  }

#if defined(__GNUC__) && !defined(__TINYC__)
/* The micro-kernel: C[0:mr, 0:nr] (+)= A[0:mr, 0:kc] B[0:kc, 0:NR], an MR x NR block
 * of C in 2 MR vector registers (AVX2: 12 of 16 ymm, AVX-512: 24 of 32 zmm; two more
 * for a row of B, one for a broadcast A value), an FMA each. A is read at a[i*ars + k*acs] (packed: ars 1,
 * acs MR), B at b[k*bcs + j] (packed: bcs NR). Rows past mr read the last valid row
 * (their sums are dropped), so an unpacked A is never read out of bounds; columns past
 * nr must be readable (packed, zero). Without AVX (valgrind's build) GCC splits every
 * vector in two: slower, same results. */
#define TL_GEMM_A_ROW(i) const T *a##i = a + (mr > i ? i : mr - 1) * ars;
#define TL_GEMM_C_ROW(i) V c##i##0 = {0}, c##i##1 = {0};
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
    TL_GEMM_EACH_ROW(TL_GEMM_A_ROW)                                                               \
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
    TL_GEMM_EACH_ROW(TL_GEMM_C_ROW)                                                               \
    for (tl_i64 k = 0; k < kc; k++, b += bcs) {                                                   \
      V b0, b1;                                                                                   \
      __builtin_memcpy(&b0, b, sizeof(V));                                                        \
      __builtin_memcpy(&b1, b + LANES, sizeof(V));                                                \
      TL_GEMM_EACH_ROW(TL_GEMM_ROW)                                                               \
    }                                                                                             \
    TL_GEMM_EACH_ROW(TL_GEMM_STORE)                                                               \
  }
typedef float tl_vf32 __attribute__((vector_size(TL_GEMM_VBYTES)));
typedef double tl_vf64 __attribute__((vector_size(TL_GEMM_VBYTES)));
#define T float
#define V tl_vf32
#define TL_BC4(s) s, s, s, s
#define TL_BC8(s) TL_BC4(s), TL_BC4(s)
#define TL_BC16(s) TL_BC8(s), TL_BC8(s)
#if TL_GEMM_VBYTES == 64
#define TL_BC(s) ((V){TL_BC16(s)})
#else
#define TL_BC(s) ((V){TL_BC8(s)})
#endif
TL_GEMM_UKR(f32)
#undef TL_BC
#undef V
#undef T
#define T double
#define V tl_vf64
#if TL_GEMM_VBYTES == 64
#define TL_BC(s) ((V){TL_BC8(s)})
#else
#define TL_BC(s) ((V){TL_BC4(s)})
#endif
TL_GEMM_UKR(f64)
#undef TL_BC
#undef V
#undef T
/* Square blocks of 32 bytes a row (8 x 8 f32, 4 x 4 f64) transposed in registers:
 * d[c * ds + r] = s[r * ss + c], by interleaving rows in pairs, then pairs of pairs,
 * then halves. Packing B^T (attention's Q K^T, a convolution's weight gradient) went
 * from an element a load and a store to a block of 8 loads, 24 shuffles and 8 stores. */
#define TL_GEMM_TRANSPOSE 1
#define TL_GEMM_TR(T) ((tl_i64)(32 / sizeof(T)))
typedef float tl_v8f __attribute__((vector_size(32)));
typedef double tl_v4d __attribute__((vector_size(32)));
#define TL_SHUF __builtin_shufflevector
/* the rows and steps are named values, not arrays: GCC copied an array of rows through
 * the stack in halves, and each row's load then waited on two stores (measured: the
 * transposes took a sixth of a Winograd weight gradient) */
#define TL_TR_LO(a, b) TL_SHUF(a, b, 0, 1, 8, 9, 4, 5, 12, 13)
#define TL_TR_HI(a, b) TL_SHUF(a, b, 2, 3, 10, 11, 6, 7, 14, 15)
#define TL_TR_OUT(c)                                                                              \
  o = TL_SHUF(u##c, v##c, 0, 1, 2, 3, 8, 9, 10, 11);                                              \
  __builtin_memcpy(d + c * ds, &o, sizeof o);                                                     \
  o = TL_SHUF(u##c, v##c, 4, 5, 6, 7, 12, 13, 14, 15);                                            \
  __builtin_memcpy(d + (c + 4) * ds, &o, sizeof o);
static inline void tl_gemm_tr_f32(const float *s, tl_i64 ss, float *d, tl_i64 ds) {
  tl_v8f r0, r1, r2, r3, r4, r5, r6, r7, o;
  __builtin_memcpy(&r0, s, sizeof r0);
  __builtin_memcpy(&r1, s + ss, sizeof r1);
  __builtin_memcpy(&r2, s + 2 * ss, sizeof r2);
  __builtin_memcpy(&r3, s + 3 * ss, sizeof r3);
  __builtin_memcpy(&r4, s + 4 * ss, sizeof r4);
  __builtin_memcpy(&r5, s + 5 * ss, sizeof r5);
  __builtin_memcpy(&r6, s + 6 * ss, sizeof r6);
  __builtin_memcpy(&r7, s + 7 * ss, sizeof r7);
  /* rows interleaved in pairs, then pairs of pairs (u: rows 0-3, v: rows 4-7), then halves */
  tl_v8f t0 = TL_SHUF(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13), t1 = TL_SHUF(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15);
  tl_v8f t2 = TL_SHUF(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13), t3 = TL_SHUF(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15);
  tl_v8f t4 = TL_SHUF(r4, r5, 0, 8, 1, 9, 4, 12, 5, 13), t5 = TL_SHUF(r4, r5, 2, 10, 3, 11, 6, 14, 7, 15);
  tl_v8f t6 = TL_SHUF(r6, r7, 0, 8, 1, 9, 4, 12, 5, 13), t7 = TL_SHUF(r6, r7, 2, 10, 3, 11, 6, 14, 7, 15);
  tl_v8f u0 = TL_TR_LO(t0, t2), u1 = TL_TR_HI(t0, t2), u2 = TL_TR_LO(t1, t3), u3 = TL_TR_HI(t1, t3);
  tl_v8f v0 = TL_TR_LO(t4, t6), v1 = TL_TR_HI(t4, t6), v2 = TL_TR_LO(t5, t7), v3 = TL_TR_HI(t5, t7);
  TL_TR_OUT(0) TL_TR_OUT(1) TL_TR_OUT(2) TL_TR_OUT(3)
}
#undef TL_TR_OUT
#undef TL_TR_HI
#undef TL_TR_LO
static inline void tl_gemm_tr_f64(const double *s, tl_i64 ss, double *d, tl_i64 ds) {
  tl_v4d r0, r1, r2, r3, o;
  __builtin_memcpy(&r0, s, sizeof r0);
  __builtin_memcpy(&r1, s + ss, sizeof r1);
  __builtin_memcpy(&r2, s + 2 * ss, sizeof r2);
  __builtin_memcpy(&r3, s + 3 * ss, sizeof r3);
  tl_v4d t0 = TL_SHUF(r0, r1, 0, 4, 2, 6), t1 = TL_SHUF(r0, r1, 1, 5, 3, 7);
  tl_v4d t2 = TL_SHUF(r2, r3, 0, 4, 2, 6), t3 = TL_SHUF(r2, r3, 1, 5, 3, 7);
  o = TL_SHUF(t0, t2, 0, 1, 4, 5);
  __builtin_memcpy(d, &o, sizeof o);
  o = TL_SHUF(t0, t2, 2, 3, 6, 7);
  __builtin_memcpy(d + 2 * ds, &o, sizeof o);
  o = TL_SHUF(t1, t3, 0, 1, 4, 5);
  __builtin_memcpy(d + ds, &o, sizeof o);
  o = TL_SHUF(t1, t3, 2, 3, 6, 7);
  __builtin_memcpy(d + 3 * ds, &o, sizeof o);
}
#undef TL_SHUF
#else
#define TL_GEMM_TRANSPOSE 0
#define TL_GEMM_TR(T) ((tl_i64)1)
#define tl_gemm_tr_f32(s, ss, d, ds) ((void)0)
#define tl_gemm_tr_f64(s, ss, d, ds) ((void)0)
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
    int short_b = d->sbk * (tl_i64)sizeof(T) <= TL_GEMM_SHORT_B_BYTES;                          \
    int pack_b = pb && (d->sbn != 1 || m1 - m0 > (short_b ? TL_GEMM_SHORT_B_ROWS : TL_GEMM_PACK_B_ROWS)); \
    int pack_a = pa && n1 - n0 > 2 * NR;                                                          \
    if (m1 - m0 == 1 && d->sbn == 1) {                                                            \
      tl_gemm_row_##S(d, A + m0 * d->sam, B, C + m0 * d->ldc, n0, n1, bufs, bi, m0, epi);         \
      return;                                                                                     \
    }                                                                                             \
    for (tl_i64 jc = n0; jc < n1; jc += NC) {                                                     \
      tl_i64 nc = tl_gemm_min(NC, n1 - jc);                                                       \
      for (tl_i64 pc = 0, step = tl_gemm_kstep(d->k); pc < d->k; pc += step) {                    \
        tl_i64 kc = tl_gemm_min(step, d->k - pc);                                                 \
        const T *bk = B + pc * d->sbk + jc * d->sbn;                                              \
        if (pack_b) tl_pack_b_##S(bk, d->sbk, d->sbn, kc, nc, pb);                                \
        for (tl_i64 ic = m0; ic < m1; ic += TL_GEMM_MC) {                                         \
          tl_i64 mc = tl_gemm_min(TL_GEMM_MC, m1 - ic);                                           \
          const T *ak = A + ic * d->sam + pc * d->sak;                                            \
          if (pack_a) tl_pack_a_##S(ak, d->sam, d->sak, mc, kc, pa);                              \
          for (tl_i64 jr = 0; jr < nc; jr += NR) {                                                \
            int nr = (int)tl_gemm_min(NR, nc - jr);                                               \
            const T *bp = pack_b ? pb + jr * kc : edge; /* pb may be NULL: no workspace */        \
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
#ifdef TL_GEMM_HOST /* tier 1 (libtcc): the library's compiled routine, runtime/gemm_host.c */
void tl_gemm_host_f32(const tl_gemm_desc *d, const float *A, const float *B, float *C, tl_i64 begin, tl_i64 end,
                      void *const *bufs, tl_gemm_epi epi);
void tl_gemm_host_f64(const tl_gemm_desc *d, const double *A, const double *B, double *C, tl_i64 begin,
                      tl_i64 end, void *const *bufs, tl_gemm_epi epi);
#define tl_gemm_run_f32 tl_gemm_host_f32
#define tl_gemm_run_f64 tl_gemm_host_f64
#else
TL_GEMM_PACK(float, f32)
TL_GEMM_PACK(double, f64)
TL_GEMM_RECT(float, f32)
TL_GEMM_RECT(double, f64)
#endif
#endif /* TL_GEMM */
#endif /* TL_KERNEL_PRELUDE_GEMM_H */
#include "codegen/kernel_prelude_conv.h" /* tl-prelude: dropped (pasted after this file) */
