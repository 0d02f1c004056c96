/* ---- convolution (implicit GEMM) ----------------------------------------------------
 * A 2-D convolution over NCHW buffers and its two gradients, each run on the GEMM's
 * micro-kernel and packing (kernel_prelude.h) without storing im2col columns (C*kh*kw
 * times the image, written and read back). Per image, P = OH*OW output pixels, Q = H*W:
 *   mode 0, y [n, o, oh, ow]: C = W [o, c*kh*kw] times B[(c,ki,kj), p] = x at the window
 *           of p (0 in the padding), B's panels gathered from x while they are packed;
 *   mode 1, dx [n, c, h, w]: for a block of channels, T = W^T [(c,ki,kj), o] times
 *           g [o, P] in tiles of pixels kept in cache, each added into dx at its window
 *           (col2im of the tile, in cache); each unit owns its channels' planes of dx;
 *   mode 2, dw [o, c, kh, kw]: C = sum over images of g [o, P] times B[p, (c,ki,kj)] = x
 *           at the window of p, B's columns gathered contiguous, then transposed;
 *   mode 3, y at stride 1 (the lowering's choice for mode 0 there): as mode 1, with
 *           T = W [(o,ki,kj), c] times x [c, Q], each row added into y at its window.
 * The parallel range counts units: mode 0, pixel tiles of one image; modes 1 and 3,
 * blocks of output channels of one image (both batch-major); mode 2, tiles of dw's
 * columns (each sums over every image). Compiled where TL_CONV is defined (its
 * kernels), after the GEMM. */
#if defined(TL_CONV) && defined(TL_GEMM) && !defined(TL_KERNEL_PRELUDE_CONV)
#define TL_KERNEL_PRELUDE_CONV
/* the workspace's allocator (a test names one that fails) */
#ifndef TL_CONV_MALLOC
#define TL_CONV_MALLOC malloc
#endif
typedef struct tl_conv_desc {
  tl_i64 n, c, h, w, o, kh, kw, oh, ow, sh, sw, ph, pw;
  int mode;
  tl_i64 unit, units; /* a unit: mode 0 pixels, modes 1 and 3 channels, mode 2 columns;
                         units an image (mode 2: in all) */
} tl_conv_desc;

/* Where a gathered value comes from: plane ch of x (SH x SW), row Y = y*sh + ki - ph,
 * column X = x*sw + kj - pw, for the pixel (y, x) of the output grid (width gw). */
typedef struct tl_conv_geo {
  tl_i64 SH, SW, gw, kh, kw, sh, sw, ph, pw;
} tl_conv_geo;

static inline void tl_conv_geometry(const tl_conv_desc *d, tl_conv_geo *g) {
  g->SH = d->h, g->SW = d->w, g->gw = d->ow, g->kh = d->kh, g->kw = d->kw;
  g->sh = d->sh, g->sw = d->sw, g->ph = d->ph, g->pw = d->pw;
}

/* the row of x that grid row y reads at kernel row ki, or -1 (padding) */
static inline tl_i64 tl_conv_row(const tl_conv_geo *g, tl_i64 y, tl_i64 ki) {
  tl_i64 Y = y * g->sh + ki - g->ph;
  return Y >= 0 && Y < g->SH ? Y : -1;
}

/* the stretch [*lo, *hi) of t in [0, len) whose column X0 + t*s lies in [0, sw): found
 * once for a run, not tested per value (no division for stride 1) */
static inline void tl_conv_valid(tl_i64 X0, tl_i64 s, tl_i64 len, tl_i64 sw, tl_i64 *lo, tl_i64 *hi) {
  tl_i64 l, h;
  if (s == 1)
    l = X0 >= 0 ? 0 : -X0, h = sw - X0;
  else
    l = X0 >= 0 ? 0 : (s - 1 - X0) / s, h = X0 >= sw ? 0 : (sw - 1 - X0) / s + 1;
  h = h < 0 ? 0 : h < len ? h : len;
  *lo = l < h ? l : h;
  *hi = h;
}

/* ---- Winograd F(2x2, 3x3): 3x3 kernels at stride 1 ---------------------------------
 * Modes 4 (y) and 5 (dx) compute out[oc][i][j] = sum over ic, ki, kj of
 * in[ic][i + ki - p][j + kj - q] k[oc][ic][ki][kj] per 2x2 output tile as
 * A^T [sum over ic of U[oc][ic] * V[ic]] A, U = G k G^T (the kernel), V = B^T d B (the
 * tile's 4x4 input patch d), the 16 products at each position xi of the 4x4 a GEMM of
 * (oc x ic) by (ic x tiles) on the micro-kernel: 16 multiply-adds for 4 outputs where
 * the direct sum takes 36. G holds halves and B and A ones, so the rounding is the
 * direct sum's kind (values that are multiples of 1/8 come out exact). Mode 4: in = x,
 * p, q = the padding; mode 5: in = g, k = w transposed and turned half a turn, p, q = 2 -
 * the padding. Units: blocks of out channels of one image, batch-major; tiles in blocks
 * of TL_WINO_TB panels of NR, so the block's V and M stay in L2. */
#ifndef TL_WINO_TB
#define TL_WINO_TB 2
#endif
#ifndef TL_WINO_TK /* mode 6: tiles (the depth) a block */
#define TL_WINO_TK 64
#endif
#define TL_WINO_NG 4 /* mode 6: groups of TR channels transformed together (an NR panel) */
typedef struct tl_wino_geo {
  tl_i64 ic, ih, iw, oh, ow, p, q, th, tw;
} tl_wino_geo;
/* mode 6's vectors of TR channels (one element where the build has no vectors) */
#if TL_GEMM_TRANSPOSE
typedef tl_v8f tl_wv_f32;
typedef tl_v4d tl_wv_f64;
#else
typedef float tl_wv_f32;
typedef double tl_wv_f64;
#endif
/* a vector of them from p, or stored at p (macros: a function taking or returning one
 * would warn in the library's build, which is compiled for any x86-64) */
#define TL_WINO_LD(v, p) __builtin_memcpy(&(v), (p), sizeof(v))
#define TL_WINO_ST(p, v) __builtin_memcpy((p), &(v), sizeof(v))
/* mode 6: row i of a tile's 16 values across from its row (p, q) of A g (A g A^T), or
 * its row (a, b, c, d) of B^T d (B^T d B), stored at o (position xi at o + xi * xs) */
#define TL_WINO_GROW(i, p, q)                                                                     \
  {                                                                                               \
    V_ r0_ = (p), r1_ = (p) + (q), r2_ = (p) - (q), r3_ = -(q);                                   \
    TL_WINO_ST(o + 4 * (i) * xs, r0_), TL_WINO_ST(o + (4 * (i) + 1) * xs, r1_);                   \
    TL_WINO_ST(o + (4 * (i) + 2) * xs, r2_), TL_WINO_ST(o + (4 * (i) + 3) * xs, r3_);             \
  }
#define TL_WINO_XROW(i, a, b, c, d)                                                               \
  {                                                                                               \
    V_ r0_ = (a) - (c), r1_ = (b) + (c), r2_ = (c) - (b), r3_ = (b) - (d);                        \
    TL_WINO_ST(o + 4 * (i) * xs, r0_), TL_WINO_ST(o + (4 * (i) + 1) * xs, r1_);                   \
    TL_WINO_ST(o + (4 * (i) + 2) * xs, r2_), TL_WINO_ST(o + (4 * (i) + 3) * xs, r3_);             \
  }
#define TL_WINO_ROUTINES(T, S) \
/* U (modes 4, 5): G k G^T of the kernels of out channels [o0, o0 + ob) (rows, obp of                          \
 * them, past ob zero) and in channels [0, ic) (depth), as the GEMM's A panels: for each                       \
 * of the 16 positions xi, MR rows a panel, k-major. Mode 5 (dx) reads w transposed and                        \
 * turned half a turn: out channel = x's channel, in channel = g's. */                                         \
static inline void tl_wino_weights_##S(const tl_conv_desc *d, const T *w, tl_i64 o0, tl_i64 ob, tl_i64 obp,    \
                                       tl_i64 ic, T *up) {                                                     \
  int dx = d->mode == 5;                                                                                       \
  for (tl_i64 r = 0; r < obp; r++)                                                                             \
    for (tl_i64 c = 0; c < ic; c++) {                                                                          \
      T k[9], t[12], u[16];                                                                                    \
      const T *src = dx ? w + (c * d->c + o0 + r) * 9 : w + ((o0 + r) * d->c + c) * 9;                         \
      for (int i = 0; i < 9; i++) k[i] = r >= ob ? (T)0 : dx ? src[8 - i] : src[i];                            \
      for (int j = 0; j < 3; j++) {                                                                            \
        t[j] = k[j], t[3 + j] = (k[j] + k[3 + j] + k[6 + j]) * (T)0.5;                                         \
        t[6 + j] = (k[j] - k[3 + j] + k[6 + j]) * (T)0.5, t[9 + j] = k[6 + j];                                 \
      }                                                                                                        \
      for (int i = 0; i < 4; i++) {                                                                            \
        u[4 * i] = t[3 * i], u[4 * i + 1] = (t[3 * i] + t[3 * i + 1] + t[3 * i + 2]) * (T)0.5;                 \
        u[4 * i + 2] = (t[3 * i] - t[3 * i + 1] + t[3 * i + 2]) * (T)0.5, u[4 * i + 3] = t[3 * i + 2];         \
      }                                                                                                        \
      T *o = up + (r / TL_GEMM_MR) * TL_GEMM_MR * ic + c * TL_GEMM_MR + r % TL_GEMM_MR;                        \
      for (int xi = 0; xi < 16; xi++) o[xi * obp * ic] = u[xi];                                                \
    }                                                                                                          \
}                                                                                                              \
/* the 4 rows of a run of len tiles (tile row ti, first tile tj), each 2 len + 2 wide,                         \
 * from plane (rows from 2 ti - p, columns from 2 tj - q, 0 outside), transformed down                         \
 * the columns (B^T d): e[r * ew + x]. Columns outside the plane are 0 in all four rows;                       \
 * rows outside read zeros (zero: wd of them, written here when needed). */                                    \
static inline void tl_wino_rows_##S(const tl_wino_geo *g, const T *plane, tl_i64 ti, tl_i64 tj, tl_i64 len,    \
                                    T *restrict e, tl_i64 ew, T *restrict zero) {                              \
  const T *r_[4];                                                                                              \
  tl_i64 wd = 2 * len + 2, X0 = 2 * tj - g->q, lo = X0 >= 0 ? 0 : -X0, hi = g->iw - X0, Y0 = 2 * ti - g->p;    \
  hi = hi < 0 ? 0 : hi > wd ? wd : hi;                                                                         \
  lo = lo < hi ? lo : hi;                                                                                      \
  if (Y0 < 0 || Y0 + 3 >= g->ih)                                                                               \
    for (tl_i64 x = 0; x < wd; x++) zero[x] = 0;                                                               \
  for (int r = 0; r < 4; r++)                                                                                  \
    r_[r] = Y0 + r >= 0 && Y0 + r < g->ih ? plane + (Y0 + r) * g->iw + X0 : zero;                              \
  if (Y0 + 5 < g->ih) /* the next tile row's two new rows: the planes are read as many short streams */        \
    for (tl_i64 x = lo; x < hi; x += 64 / sizeof(T)) {                                                         \
      __builtin_prefetch(plane + (Y0 + 4) * g->iw + X0 + x);                                                   \
      __builtin_prefetch(plane + (Y0 + 5) * g->iw + X0 + x);                                                   \
    }                                                                                                          \
  const T *restrict d0 = r_[0], *restrict d1 = r_[1], *restrict d2 = r_[2], *restrict d3 = r_[3];              \
  for (tl_i64 x = lo; x < hi; x++) {                                                                           \
    e[x] = d0[x] - d2[x], e[ew + x] = d1[x] + d2[x];                                                           \
    e[2 * ew + x] = d2[x] - d1[x], e[3 * ew + x] = d1[x] - d3[x];                                              \
  }                                                                                                            \
  for (int r = 0; r < 4; r++) {                                                                                \
    for (tl_i64 x = 0; x < lo; x++) e[r * ew + x] = 0;                                                         \
    for (tl_i64 x = hi; x < wd; x++) e[r * ew + x] = 0;                                                        \
  }                                                                                                            \
}                                                                                                              \
/* the 16 values of len tiles across the columns ((B^T d) B), written to v[xi * vs + t] */                     \
static inline void tl_wino_cols_##S(const T *restrict e, tl_i64 ew, tl_i64 len, T *restrict v, tl_i64 vs) {    \
  for (int r = 0; r < 4; r++) {                                                                                \
    const T *restrict a = e + r * ew;                                                                          \
    T *restrict o0 = v + 4 * r * vs, *restrict o1 = o0 + vs, *restrict o2 = o1 + vs, *restrict o3 = o2 + vs;   \
    for (tl_i64 t = 0; t < len; t++) {                                                                         \
      T c0 = a[2 * t], c1 = a[2 * t + 1], c2 = a[2 * t + 2], c3 = a[2 * t + 3];                                \
      o0[t] = c0 - c2, o1[t] = c1 + c2, o2[t] = c2 - c1, o3[t] = c1 - c3;                                      \
    }                                                                                                          \
  }                                                                                                            \
}                                                                                                              \
/* A^T m A of len tiles (m[xi * ms + t]) into two output rows y0, y1 (2 len wide): down                        \
 * the columns, then across */                                                                                 \
static inline void tl_wino_out_##S(const T *restrict m, tl_i64 ms, tl_i64 len, T *restrict y0, T *restrict y1) { \
  for (tl_i64 t = 0; t < len; t++) {                                                                           \
    T a0 = m[t] + m[4 * ms + t] + m[8 * ms + t], b0 = m[4 * ms + t] - m[8 * ms + t] - m[12 * ms + t];          \
    T a1 = m[ms + t] + m[5 * ms + t] + m[9 * ms + t], b1 = m[5 * ms + t] - m[9 * ms + t] - m[13 * ms + t];     \
    T a2 = m[2 * ms + t] + m[6 * ms + t] + m[10 * ms + t], b2 = m[6 * ms + t] - m[10 * ms + t] - m[14 * ms + t]; \
    T a3 = m[3 * ms + t] + m[7 * ms + t] + m[11 * ms + t], b3 = m[7 * ms + t] - m[11 * ms + t] - m[15 * ms + t]; \
    y0[2 * t] = a0 + a1 + a2, y0[2 * t + 1] = a1 - a2 - a3;                                                    \
    y1[2 * t] = b0 + b1 + b2, y1[2 * t + 1] = b1 - b2 - b3;                                                    \
  }                                                                                                            \
}                                                                                                              \
/* modes 4, 5: out channels [o0, o0 + ob) of one image (in: its ic planes, out: its                            \
 * planes), in blocks of tiles: the block's V, 16 products U V, then A^T M A. Flattened:                       \
 * GCC stopped inlining the micro-kernel here when mode 6 grew (the forward took 10%                           \
 * longer, measured) */                                                                                        \
static inline __attribute__((flatten)) void tl_wino_unit_##S(const tl_wino_geo *g, const T *in, T *out, const T *up, \
                                                              tl_i64 ob, tl_i64 obp, T *vp, T *mb, T *e) {     \
  enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), TB = TL_WINO_TB * NR, EW = 2 * NR + 4 };                         \
  tl_i64 ic = g->ic, tw = g->tw, nt = g->th * g->tw;                                                           \
  for (tl_i64 t0 = 0; t0 < nt; t0 += TB) {                                                                     \
    tl_i64 tb = tl_gemm_min(TB, nt - t0), tbp = (tb + NR - 1) / NR * NR;                                       \
    /* V: for each position, NR tiles a panel, k-major; runs of tiles in one tile row and one panel */         \
    for (tl_i64 u = 0; u < tbp;) {                                                                             \
      tl_i64 t = t0 + u, ti = t / tw, tj = t - ti * tw, len = tl_gemm_min(tw - tj, NR - u % NR);               \
      len = tl_gemm_min(len, tb - u);                                                                          \
      T *v = vp + (u / NR) * NR * ic + u % NR;                                                                 \
      if (len <= 0) { /* the last panel's columns past the block: zero */                                      \
        len = NR - u % NR;                                                                                     \
        for (tl_i64 c = 0; c < ic; c++)                                                                        \
          for (int xi = 0; xi < 16; xi++)                                                                      \
            for (tl_i64 j = 0; j < len; j++) v[xi * TB * ic + c * NR + j] = 0;                                 \
      } else                                                                                                   \
        for (tl_i64 c = 0; c < ic; c++) {                                                                      \
          tl_wino_rows_##S(g, in + c * g->ih * g->iw, ti, tj, len, e, EW, e + 4 * EW);                         \
          tl_wino_cols_##S(e, EW, len, v + c * NR, TB * ic);                                                   \
        }                                                                                                      \
      u += len;                                                                                                \
    }                                                                                                          \
    /* M = U V at each position: obp x tbp, depth ic, in KC blocks */                                          \
    for (int xi = 0; xi < 16; xi++)                                                                            \
      for (tl_i64 pc = 0, step = tl_gemm_kstep(ic); pc < ic; pc += step) {                                     \
        tl_i64 kc = tl_gemm_min(step, ic - pc);                                                                \
        for (tl_i64 jr = 0; jr < tbp; jr += NR)                                                                \
          for (tl_i64 ir = 0; ir < obp; ir += TL_GEMM_MR)                                                      \
            tl_ukr_##S(kc, up + xi * obp * ic + ir * ic + pc * TL_GEMM_MR, 1, TL_GEMM_MR,                      \
                       vp + xi * TB * ic + jr * ic + pc * NR,                                                  \
                       NR, mb + xi * obp * TB + ir * TB + jr, TB, TL_GEMM_MR, NR, pc > 0);                     \
      }                                                                                                        \
    /* Y = A^T M A, tile row by tile row, clipped to the output */                                             \
    for (tl_i64 o = 0; o < ob; o++) {                                                                          \
      T *plane = out + o * g->oh * g->ow;                                                                      \
      for (tl_i64 u = 0; u < tb;) {                                                                            \
        tl_i64 t = t0 + u, ti = t / tw, tj = t - ti * tw, len = tl_gemm_min(tw - tj, tb - u);                  \
        tl_i64 w2 = tl_gemm_min(2 * len, g->ow - 2 * tj);                                                      \
        T *r0 = plane + 2 * ti * g->ow + 2 * tj;                                                               \
        if (w2 == 2 * len && 2 * ti + 1 < g->oh) { /* the whole run inside the output */                       \
          tl_wino_out_##S(mb + o * TB + u, obp * TB, len, r0, r0 + g->ow);                                     \
        } else {                                                                                               \
          T *y0 = e, *y1 = e + 2 * TB + 2;                                                                     \
          tl_wino_out_##S(mb + o * TB + u, obp * TB, len, y0, y1);                                             \
          for (tl_i64 x = 0; x < w2; x++) r0[x] = y0[x];                                                       \
          if (2 * ti + 1 < g->oh)                                                                              \
            for (tl_i64 x = 0; x < w2; x++) r0[g->ow + x] = y1[x];                                             \
        }                                                                                                      \
        u += len;                                                                                              \
      }                                                                                                        \
    }                                                                                                          \
  }                                                                                                            \
}                                                                                                              \
/* mode 6: rows [y0, y0 + nr) of TR channel planes (plane + l * ps, h x w; 0 past nch),                        \
 * columns [x0, x0 + ew), turned so that each column is a vector of the planes:                                \
 * col[(r * ew + x) * TR + l], ew a multiple of TR. Blocks of TR columns inside the                            \
 * planes are transposed from them in registers; the rest (padding, a last block past                          \
 * the plane, fewer planes) through a block with zeros outside (prefetching the next                           \
 * rows, as tl_wino_rows does, measured no faster here). */                                                    \
static inline void tl_wino_turn_##S(const T *plane, tl_i64 ps, tl_i64 nch, tl_i64 h, tl_i64 w, tl_i64 y0,      \
                                    tl_i64 nr, tl_i64 x0, tl_i64 ew, T *restrict col) {                        \
  enum { TR = TL_GEMM_TR(T) };                                                                                 \
  for (tl_i64 r = 0; r < nr; r++) {                                                                            \
    tl_i64 y = y0 + r;                                                                                         \
    T *cr = col + r * ew * TR;                                                                                 \
    if (y < 0 || y >= h) {                                                                                     \
      for (tl_i64 i = 0; i < ew * TR; i++) cr[i] = 0;                                                          \
      continue;                                                                                                \
    }                                                                                                          \
    const T *src = plane + y * w;                                                                              \
    for (tl_i64 x = 0; x < ew; x += TR) {                                                                      \
      tl_i64 X = x0 + x;                                                                                       \
      if (nch == TR && X >= 0 && X + TR <= w && TL_GEMM_TRANSPOSE) {                                           \
        tl_gemm_tr_##S(src + X, ps, cr + x * TR, TR);                                                          \
        continue;                                                                                              \
      }                                                                                                        \
      T blk[TR * TR];                                                                                          \
      for (tl_i64 l = 0; l < TR; l++)                                                                          \
        for (tl_i64 c = 0; c < TR; c++)                                                                        \
          blk[l * TR + c] = l < nch && X + c >= 0 && X + c < w ? src[l * ps + X + c] : 0;                      \
      if (TL_GEMM_TRANSPOSE)                                                                                   \
        tl_gemm_tr_##S(blk, TR, cr + x * TR, TR);                                                              \
      else                                                                                                     \
        cr[x] = blk[0];                                                                                        \
    }                                                                                                          \
  }                                                                                                            \
}                                                                                                              \
/* mode 6: the 16 transformed values of nch channel planes (col: room for their groups)                        \
 * (plane + l * ps) over tiles [t0, t0 + tb), into a panel: dst[xi * xs + (t - t0) * ls                        \
 * + l]. Per run of tiles in one tile row, each group of TR planes' rows is turned into                        \
 * vectors of the planes at each column (tl_wino_turn, into col + group * cs), then                            \
 * each tile's 16 values computed on whole vectors (down the columns, then across, as                          \
 * modes 4 and 5 do on single planes) and stored straight into the panel, every group                          \
 * of a tile together (whole lines of the panel written at once). No scalar pass: the                          \
 * one before took half of dw's time (measured). */                                                            \
static inline void tl_wino_panel_##S(const tl_wino_geo *g, const T *plane, tl_i64 ps, tl_i64 nch, int of_g,    \
                                     tl_i64 t0, tl_i64 tb, T *restrict col, T *restrict dst, tl_i64 xs,        \
                                     tl_i64 ls) {                                                              \
  enum { TR = TL_GEMM_TR(T) };                                                                                 \
  typedef tl_wv_##S V_;                                                                                        \
  tl_i64 ng = (nch + TR - 1) / TR, nr = of_g ? 2 : 4;                                                          \
  for (tl_i64 u = 0; u < tb;) {                                                                                \
    tl_i64 t = t0 + u, ti = t / g->tw, tj = t - ti * g->tw, len = tl_gemm_min(g->tw - tj, tb - u);             \
    tl_i64 wd = of_g ? 2 * len : 2 * len + 2, ew = (wd + TR - 1) / TR * TR, cs = nr * ew * TR;                 \
    for (tl_i64 gi = 0; gi < ng; gi++) {                                                                       \
      const T *pl = plane + gi * TR * ps;                                                                      \
      tl_i64 gch = tl_gemm_min(TR, nch - gi * TR);                                                             \
      if (of_g) /* g: two rows */                                                                              \
        tl_wino_turn_##S(pl, ps, gch, g->oh, g->ow, 2 * ti, 2, 2 * tj, ew, col + gi * cs);                     \
      else /* x: four rows, padded */                                                                          \
        tl_wino_turn_##S(pl, ps, gch, g->ih, g->iw, 2 * ti - g->p, 4, 2 * tj - g->q, ew, col + gi * cs);       \
    }                                                                                                          \
    for (tl_i64 k = 0; k < len; k++) {                                                                         \
      T *o = dst + (u + k) * ls;                                                                               \
      for (tl_i64 gi = 0; gi < ng; gi++, o += TR) {                                                            \
        const T *c = col + gi * cs + 2 * k * TR;                                                               \
        V_ d0, d1, d2, d3, e[16];                                                                              \
        if (of_g) { /* A g A^T: down the columns a, a + b, a - b, -b, then across */                           \
          TL_WINO_LD(d0, c), TL_WINO_LD(d1, c + TR), TL_WINO_LD(d2, c + ew * TR), TL_WINO_LD(d3, c + (ew + 1) * TR); \
          e[0] = d0, e[1] = d1, e[2] = d0 + d2, e[3] = d1 + d3, e[4] = d0 - d2, e[5] = d1 - d3;                \
          e[6] = -d2, e[7] = -d3;                                                                              \
          TL_WINO_GROW(0, e[0], e[1]) TL_WINO_GROW(1, e[2], e[3])                                              \
          TL_WINO_GROW(2, e[4], e[5]) TL_WINO_GROW(3, e[6], e[7])                                              \
        } else { /* B^T d B, as tl_wino_rows then tl_wino_cols */                                              \
          for (int j = 0; j < 4; j++) {                                                                        \
            TL_WINO_LD(d0, c + j * TR), TL_WINO_LD(d1, c + (ew + j) * TR);                                     \
            TL_WINO_LD(d2, c + (2 * ew + j) * TR), TL_WINO_LD(d3, c + (3 * ew + j) * TR);                      \
            e[j] = d0 - d2, e[4 + j] = d1 + d2, e[8 + j] = d2 - d1, e[12 + j] = d1 - d3;                       \
          }                                                                                                    \
          TL_WINO_XROW(0, e[0], e[1], e[2], e[3]) TL_WINO_XROW(1, e[4], e[5], e[6], e[7])                      \
          TL_WINO_XROW(2, e[8], e[9], e[10], e[11]) TL_WINO_XROW(3, e[12], e[13], e[14], e[15])                \
        }                                                                                                      \
      }                                                                                                        \
    }                                                                                                          \
    u += len;                                                                                                  \
  }                                                                                                            \
}                                                                                                              \
/* mode 6, units [begin, end): blocks of x's channels, each dw's rows for those channels                       \
 * summed over every image: S = sum over tiles of (B^T d B) * (A g A^T) at each position                       \
 * (a product of (c x tiles) by (tiles x o), or of (o x tiles) by (tiles x c)), then                           \
 * dw = G^T S G */                                                                                             \
static inline void tl_wino_dw_##S(const tl_conv_desc *d, T *out, const T *gy, const T *x, tl_i64 begin, tl_i64 end) { \
  enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), TK = TL_WINO_TK, TR = TL_GEMM_TR(T), EW = 2 * TK + 2 + TR,       \
         NG = NR / TR > TL_WINO_NG ? NR / TR : TL_WINO_NG }; /* groups a panel call turns */                   \
  tl_wino_geo g;                                                                                               \
  g.ic = d->c, g.ih = d->h, g.iw = d->w, g.oh = d->oh, g.ow = d->ow, g.p = d->ph, g.q = d->pw;                 \
  g.th = (g.oh + 1) / 2, g.tw = (g.ow + 1) / 2;                                                                \
  /* A (rows, MR a micro-tile): x's channels or g's, whichever pads less to MR and NR                          \
   * (AVX2, 32 and 64 channels: 66 x 32 products a step, not 36 x 64); B: the other.                           \
   * A is one panel la lanes wide (the micro-kernel reads MR of its lanes, acs = la), B                        \
   * panels of NR; both written TR lanes at a time, a position's panels sa and sb                              \
   * apart: a line more than their size, or the 16 stores of a tile share a cache set                          \
   * (dw took 37 ms a unit instead of 29, measured) */                                                         \
  tl_i64 cup = (d->unit + TL_GEMM_MR - 1) / TL_GEMM_MR * TL_GEMM_MR;                                           \
  tl_i64 oup = (d->o + TL_GEMM_MR - 1) / TL_GEMM_MR * TL_GEMM_MR;                                              \
  int xa = cup * ((d->o + NR - 1) / NR * NR) <= oup * ((d->unit + NR - 1) / NR * NR); /* x's channels in A */  \
  tl_i64 mp = xa ? cup : oup, np = ((xa ? d->o : d->unit) + NR - 1) / NR * NR, la = (mp + TR - 1) / TR * TR;   \
  tl_i64 sa = la * TK + 64 / sizeof(T), sb = np * TK + 64 / sizeof(T);                                         \
  tl_i64 nt = g.th * g.tw, tk = g.tw <= TK ? TK / g.tw * g.tw : TK; /* whole tile rows where they fit */       \
  tl_size ws = (tl_size)(16 * sa + 16 * sb + 16 * mp * np + NG * 4 * EW * TR);                                 \
  void *raw = TL_CONV_MALLOC(sizeof(T) * ws + 64);                                                             \
  if (!raw) {                                                                                                  \
    tl_conv_direct_##S(d, out, gy, x, begin, end);                                                             \
    return;                                                                                                    \
  }                                                                                                            \
  T *ap = (T *)(((tl_size)raw + 63) & ~(tl_size)63), *bp = ap + 16 * sa, *sm = bp + 16 * sb;                   \
  T *col = sm + 16 * mp * np;                                                                                  \
  /* the lanes past the channels are never written: 0 (the rows and columns of S they                          \
   * make are not read; a last, smaller block's lanes hold earlier finite values) */                           \
  for (tl_i64 i = 0; i < 16 * (sa + sb); i++) ap[i] = 0;                                                       \
  for (tl_i64 un = begin; un < end; un++) {                                                                    \
    tl_i64 c0 = un * d->unit, cb = tl_gemm_min(d->c - c0, d->unit), first = 1;                                 \
    tl_i64 ma = xa ? cb : d->o, nb = xa ? d->o : cb; /* A's channels, B's */                                   \
    for (tl_i64 i = 0; i < 16 * mp * np; i++) sm[i] = 0; /* no images: dw = 0 */                               \
    for (tl_i64 im = 0; im < d->n; im++) {                                                                     \
      const T *xs = x + (im * d->c + c0) * g.ih * g.iw, *gs = gy + im * d->o * g.oh * g.ow;                    \
      const T *as = xa ? xs : gs, *bs = xa ? gs : xs;                                                          \
      tl_i64 aps = xa ? g.ih * g.iw : g.oh * g.ow, bps = xa ? g.oh * g.ow : g.ih * g.iw;                       \
      for (tl_i64 t0 = 0; t0 < nt; t0 += tk) {                                                                 \
        tl_i64 tb = tl_gemm_min(tk, nt - t0);                                                                  \
        for (tl_i64 i = 0; i < ma; i += TL_WINO_NG * TR)                                                       \
          tl_wino_panel_##S(&g, as + i * aps, aps, tl_gemm_min(TL_WINO_NG * TR, ma - i), !xa, t0, tb, col, ap + i, \
                            sa, la);                                                                           \
        for (tl_i64 j = 0; j < nb; j += NR)                                                                    \
          tl_wino_panel_##S(&g, bs + j * bps, bps, tl_gemm_min(NR, nb - j), xa, t0, tb, col, bp + j * TK, sb, NR); \
        for (int xi = 0; xi < 16; xi++)                                                                        \
          for (tl_i64 jr = 0; jr < np; jr += NR)                                                               \
            for (tl_i64 ir = 0; ir < mp; ir += TL_GEMM_MR)                                                     \
              tl_ukr_##S(tb, ap + xi * sa + ir, 1, la, bp + xi * sb + jr * TK, NR,                             \
                         sm + xi * mp * np + ir * np + jr, np, TL_GEMM_MR, NR, !first);                        \
        first = 0;                                                                                             \
      }                                                                                                        \
    }                                                                                                          \
    for (tl_i64 c = 0; c < cb; c++) /* dw = G^T S G */                                                         \
      for (tl_i64 o = 0; o < d->o; o++) {                                                                      \
        T s[16], t[12];                                                                                        \
        for (int xi = 0; xi < 16; xi++) s[xi] = sm[xi * mp * np + (xa ? c * np + o : o * np + c)];             \
        for (int j = 0; j < 4; j++) {                                                                          \
          t[j] = s[j] + (s[4 + j] + s[8 + j]) * (T)0.5, t[4 + j] = (s[4 + j] - s[8 + j]) * (T)0.5;             \
          t[8 + j] = (s[4 + j] + s[8 + j]) * (T)0.5 + s[12 + j];                                               \
        }                                                                                                      \
        T *w = out + (o * d->c + c0 + c) * 9;                                                                  \
        for (int i = 0; i < 3; i++) {                                                                          \
          w[3 * i] = t[4 * i] + (t[4 * i + 1] + t[4 * i + 2]) * (T)0.5;                                        \
          w[3 * i + 1] = (t[4 * i + 1] - t[4 * i + 2]) * (T)0.5;                                               \
          w[3 * i + 2] = (t[4 * i + 1] + t[4 * i + 2]) * (T)0.5 + t[4 * i + 3];                                \
        }                                                                                                      \
      }                                                                                                        \
  }                                                                                                            \
  free(raw);                                                                                                   \
}                                                                                                              \
/* modes 4, 5: units [begin, end) (blocks of out channels of one image, batch-major) */                        \
static inline void tl_wino_run_##S(const tl_conv_desc *d, T *out, const T *a, const T *w, tl_i64 begin, tl_i64 end) { \
  enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), TB = TL_WINO_TB * NR };                                          \
  int dx = d->mode == 5;                                                                                       \
  tl_wino_geo g;                                                                                               \
  g.ic = dx ? d->o : d->c, g.ih = dx ? d->oh : d->h, g.iw = dx ? d->ow : d->w;                                 \
  g.oh = dx ? d->h : d->oh, g.ow = dx ? d->w : d->ow, g.p = dx ? 2 - d->ph : d->ph, g.q = dx ? 2 - d->pw : d->pw; \
  g.th = (g.oh + 1) / 2, g.tw = (g.ow + 1) / 2;                                                                \
  tl_i64 oc = dx ? d->c : d->o, obp = (d->unit + TL_GEMM_MR - 1) / TL_GEMM_MR * TL_GEMM_MR, last = -1;         \
  tl_size ws = (tl_size)(16 * obp * g.ic + 16 * TB * g.ic + 16 * obp * TB + 8 * (2 * TB + 4));                 \
  void *raw = begin < end ? TL_CONV_MALLOC(sizeof(T) * ws + 64) : 0;                                           \
  if (!raw) {                                                                                                  \
    if (begin < end) tl_conv_direct_##S(d, out, a, w, begin, end);                                             \
    return;                                                                                                    \
  }                                                                                                            \
  T *up = (T *)(((tl_size)raw + 63) & ~(tl_size)63), *vp = up + 16 * obp * g.ic, *mb = vp + 16 * TB * g.ic;    \
  T *e = mb + 16 * obp * TB;                                                                                   \
  for (tl_i64 t = begin; t < end; t++) {                                                                       \
    tl_i64 im = t / d->units, o0 = (t - im * d->units) * d->unit, ob = tl_gemm_min(oc - o0, d->unit);          \
    tl_i64 obq = (ob + TL_GEMM_MR - 1) / TL_GEMM_MR * TL_GEMM_MR;                                              \
    if (o0 != last) tl_wino_weights_##S(d, w, o0, ob, obq, g.ic, up), last = o0;                               \
    tl_wino_unit_##S(&g, a + im * g.ic * g.ih * g.iw, out + (im * oc + o0) * g.oh * g.ow, up, ob, obq, vp, mb, e); \
  }                                                                                                            \
  free(raw);                                                                                                   \
}                                                                                                              \

#define TL_CONV_ROUTINES(T, S)                                                                             \
  /* dst[t * ds] = the len values of a row of x from grid column x0 at kernel column kj,  \
   * 0 in the padding */                                                                          \
  static inline void tl_conv_run_row_##S(const tl_conv_geo *g, const T *row, tl_i64 x0, tl_i64 kj, tl_i64 len, \
                                         T *dst, tl_i64 ds) {                                     \
    tl_i64 X0 = x0 * g->sw + kj - g->pw, lo, hi;                                                  \
    tl_conv_valid(X0, g->sw, len, g->SW, &lo, &hi);                                               \
    for (tl_i64 t = 0; t < lo; t++) dst[t * ds] = 0;                                              \
    if (g->sw == 1 && ds == 1)                                                                    \
      for (tl_i64 t = lo; t < hi; t++) dst[t] = row[X0 + t];                                      \
    else                                                                                          \
      for (tl_i64 t = lo; t < hi; t++) dst[t * ds] = row[X0 + t * g->sw];                         \
    for (tl_i64 t = hi; t < len; t++) dst[t * ds] = 0;                                            \
  }                                                                                               \
  /* B panels (mode 0): rows k0.. (ch, ki, kj) of the window, columns j0.. (pixels), \
   * NR a panel, k-major, zero past nc */                                                         \
  static inline void tl_conv_pack_win_##S(const tl_conv_geo *g, const T *src, tl_i64 k0, tl_i64 kc, tl_i64 j0, tl_i64 nc, \
                                   T *dst) {                                                      \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T) };                                                 \
    for (tl_i64 jr = 0; jr < nc; jr += NR, dst += NR * kc) {                                      \
      tl_i64 nr = tl_gemm_min(NR, nc - jr), ry[NR], rx[NR], rj[NR], rl[NR];                       \
      int runs = 0;                                                                               \
      for (tl_i64 j = 0; j < nr; runs++) { /* the panel's pixels as runs along grid rows */       \
        tl_i64 p = j0 + jr + j, y = p / g->gw, x = p - y * g->gw;                                 \
        ry[runs] = y, rx[runs] = x, rj[runs] = j, rl[runs] = tl_gemm_min(nr - j, g->gw - x);      \
        j += rl[runs];                                                                            \
      }                                                                                           \
      tl_i64 kk = g->kh * g->kw, ch = k0 / kk, r = k0 - ch * kk, ki = r / g->kw, kj = r - ki * g->kw; \
      for (tl_i64 k = 0; k < kc; k++) {                                                           \
        T *o = dst + k * NR;                                                                      \
        const T *plane = src + ch * g->SH * g->SW;                                                \
        tl_i64 X0 = rx[0] * g->sw + kj - g->pw, Y0 = runs == 1 ? tl_conv_row(g, ry[0], ki) : -1;  \
        if (Y0 >= 0 && rl[0] == NR && g->sw == 1 && X0 >= 0 && X0 + NR <= g->SW) {               \
          /* the common panel: one stretch of a source row, copied whole */                     \
          __builtin_memcpy(o, plane + Y0 * g->SW + X0, sizeof(T) * NR);                           \
        } else                                                                                    \
        for (int q = 0; q < runs; q++) {                                                          \
          tl_i64 Y = tl_conv_row(g, ry[q], ki);                                                   \
          if (Y < 0)                                                                              \
            for (tl_i64 t = 0; t < rl[q]; t++) o[rj[q] + t] = 0;                                  \
          else                                                                                    \
            tl_conv_run_row_##S(g, plane + Y * g->SW, rx[q], kj, rl[q], o + rj[q], 1);            \
        }                                                                                         \
        for (tl_i64 j = nr; j < NR; j++) o[j] = 0;                                                \
        if (++kj == g->kw) {                                                                      \
          kj = 0;                                                                                 \
          if (++ki == g->kh) ki = 0, ch++;                                                        \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  /* B panels (mode 2): rows = pixels k0.. of the image, columns j0.. (c, ki, kj). Each  \
   * column is gathered contiguous (runs along rows copy whole) into tmp [NR][kc], then   \
   * the panel is tmp transposed, in 8 x 8 (f32) or 4 x 4 (f64) register blocks. */          \
  static inline void tl_conv_pack_cols_##S(const tl_conv_geo *g, const T *src, tl_i64 k0, tl_i64 kc, tl_i64 j0, tl_i64 nc, \
                                    T *dst, T *tmp) {                                             \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T) };                                                 \
    tl_i64 kk = g->kh * g->kw;                                                                    \
    for (tl_i64 jr = 0; jr < nc; jr += NR, dst += NR * kc) {                                      \
      tl_i64 nr = tl_gemm_min(NR, nc - jr);                                                       \
      for (tl_i64 j = 0; j < NR; j++) {                                                           \
        T *col_ = tmp + j * kc;                                                                   \
        if (j >= nr) {                                                                            \
          for (tl_i64 k = 0; k < kc; k++) col_[k] = 0;                                            \
          continue;                                                                               \
        }                                                                                         \
        tl_i64 col = j0 + jr + j, ch = col / kk, r = col - ch * kk, ki = r / g->kw, kj = r - ki * g->kw; \
        const T *plane = src + ch * g->SH * g->SW;                                                \
        for (tl_i64 k = 0; k < kc;) {                                                             \
          tl_i64 p = k0 + k, y = p / g->gw, x = p - y * g->gw, len = tl_gemm_min(kc - k, g->gw - x); \
          tl_i64 Y = tl_conv_row(g, y, ki);                                                       \
          if (Y < 0)                                                                              \
            for (tl_i64 t = 0; t < len; t++) col_[k + t] = 0;                                     \
          else                                                                                    \
            tl_conv_run_row_##S(g, plane + Y * g->SW, x, kj, len, col_ + k, 1);                   \
          k += len;                                                                               \
        }                                                                                         \
      }                                                                                           \
      tl_i64 k = 0;                                                                               \
      if (TL_GEMM_TRANSPOSE)                                                                      \
        for (; k + TL_GEMM_TR(T) <= kc; k += TL_GEMM_TR(T))                                       \
          for (tl_i64 j = 0; j < NR; j += TL_GEMM_TR(T)) tl_gemm_tr_##S(tmp + j * kc + k, kc, dst + k * NR + j, NR); \
      for (; k < kc; k++)                                                                         \
        for (tl_i64 j = 0; j < NR; j++) dst[k * NR + j] = tmp[j * kc + k];                        \
    }                                                                                             \
  }                                                                                               \
  /* Modes 1 and 3, output channels [c0, c1) of one image: their planes zeroed, then per   \
   * tile of nb source pixels T = A src (rows (c, ki, kj) of the block, depth the source's  \
   * channels), each row added into the output at its window: mode 1, dx from g (A = W^T,  \
   * g's pixel (y, x) lands at (y*sh + ki - ph, x*sw + kj - pw)); mode 3, y from x at      \
   * stride 1 (A = W's rows (o, ki, kj), x's pixel (y, x) lands at (y + ph - ki, x + pw - kj)). */ \
  static inline void tl_conv_scatter_##S(const tl_conv_desc *d, T *out, const T *src, const T *w, tl_i64 c0, tl_i64 c1, \
                                  T *pb, T *pa, T *tile, tl_i64 nb) {                             \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T) };                                                 \
    int fwd = d->mode == 3;                                                                       \
    tl_i64 kk = d->kh * d->kw, m = (c1 - c0) * kk, K = fwd ? d->c : d->o;                         \
    tl_i64 sh_ = fwd ? d->h : d->oh, sw_ = fwd ? d->w : d->ow, dh = fwd ? d->oh : d->h, dw_ = fwd ? d->ow : d->w; \
    tl_i64 P = sh_ * sw_, D = dh * dw_, s = fwd ? -1 : 1, ys = fwd ? 1 : d->sh, xs = fwd ? 1 : d->sw; \
    tl_i64 yo = fwd ? d->ph : -d->ph, xo = fwd ? d->pw : -d->pw;                                  \
    for (tl_i64 i = c0 * D; i < c1 * D; i++) out[i] = 0;                                          \
    for (tl_i64 jc = 0; K > 0 && jc < P; jc += nb) {                                              \
      tl_i64 nc = tl_gemm_min(nb, P - jc);                                                        \
      for (tl_i64 pc = 0, step = tl_gemm_kstep(K); pc < K; pc += step) {                          \
        tl_i64 kc = tl_gemm_min(step, K - pc);                                                    \
        tl_pack_b_##S(src + pc * P + jc, P, 1, kc, nc, pb);                                       \
        for (tl_i64 ic = 0; ic < m; ic += TL_GEMM_MC) {                                           \
          tl_i64 mc = tl_gemm_min(TL_GEMM_MC, m - ic);                                            \
          if (!fwd) {                                                                             \
            tl_pack_a_##S(w + c0 * kk + ic + pc * d->c * kk, 1, d->c * kk, mc, kc, pa);           \
          } else { /* row (o, q) of W at depth c: w[(o*C + c)*kk + q] */                         \
            T *dst = pa;                                                                          \
            for (tl_i64 ir = 0; ir < mc; ir += TL_GEMM_MR, dst += TL_GEMM_MR * kc) {              \
              tl_i64 off[TL_GEMM_MR], h = tl_gemm_min(TL_GEMM_MR, mc - ir);                       \
              for (tl_i64 i = 0; i < TL_GEMM_MR; i++) {                                           \
                tl_i64 r = ic + ir + (i < h ? i : 0);                                             \
                off[i] = ((c0 + r / kk) * d->c + pc) * kk + r % kk;                               \
              }                                                                                   \
              for (tl_i64 k = 0; k < kc; k++)                                                     \
                for (tl_i64 i = 0; i < TL_GEMM_MR; i++) dst[k * TL_GEMM_MR + i] = i < h ? w[off[i] + k * kk] : (T)0; \
            }                                                                                     \
          }                                                                                       \
          for (tl_i64 jr = 0; jr < nc; jr += NR)                                                  \
            for (tl_i64 ir = 0; ir < mc; ir += TL_GEMM_MR)                                        \
              tl_ukr_##S(kc, pa + ir * kc, 1, TL_GEMM_MR, pb + jr * kc, NR, tile + (ic + ir) * nb + jr, nb, \
                         (int)tl_gemm_min(TL_GEMM_MR, mc - ir), (int)tl_gemm_min(NR, nc - jr), pc > 0); \
        }                                                                                         \
      }                                                                                           \
      for (tl_i64 r = 0; r < m; r++) {                                                            \
        tl_i64 c = c0 + r / kk, q = r % kk, ki = q / d->kw, kj = q - ki * d->kw;                  \
        T *plane = out + c * D;                                                                   \
        for (tl_i64 p = jc; p < jc + nc;) {                                                       \
          tl_i64 y = p / sw_, x = p - y * sw_, len = tl_gemm_min(jc + nc - p, sw_ - x), lo, hi;   \
          tl_i64 Y = y * ys + s * ki + yo, X0 = x * xs + s * kj + xo;                             \
          const T *v = tile + r * nb + (p - jc);                                                  \
          p += len;                                                                               \
          if (Y < 0 || Y >= dh) continue;                                                         \
          tl_conv_valid(X0, xs, len, dw_, &lo, &hi);                                              \
          T *o = plane + Y * dw_; /* column X0 + t * xs, X0 maybe negative */                     \
          if (xs == 1)                                                                            \
            for (tl_i64 t = lo; t < hi; t++) o[X0 + t] += v[t];                                   \
          else                                                                                    \
            for (tl_i64 t = lo; t < hi; t++) o[X0 + t * xs] += v[t];                              \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  /* modes 0, 2: C[0:m, n0:n1) (+)= A B over the depth [0, kdepth) of one image; pb, pa: workspace */    \
  static inline void tl_conv_rect_##S(const tl_conv_desc *d, const tl_conv_geo *g, const T *A, const T *src, T *C, \
                               tl_i64 m, tl_i64 ldc, tl_i64 kdepth, tl_i64 n0, tl_i64 n1, int add, T *pb, T *pa) { \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), NC = TL_GEMM_NC_BYTES / sizeof(T) };              \
    tl_i64 kwin = d->mode == 2 ? 0 : kdepth; /* the A operand's row length (modes 0, 2) */     \
    for (tl_i64 jc = n0; jc < n1; jc += NC) {                                                     \
      tl_i64 nc = tl_gemm_min(NC, n1 - jc);                                                       \
      for (tl_i64 pc = 0, step = tl_gemm_kstep(kdepth); pc < kdepth; pc += step) {                \
        tl_i64 kc = tl_gemm_min(step, kdepth - pc);                                               \
        if (d->mode == 2)                                                                         \
          tl_conv_pack_cols_##S(g, src, pc, kc, jc, nc, pb, pa + TL_GEMM_MC * TL_GEMM_KC);        \
        else                                                                                      \
          tl_conv_pack_win_##S(g, src, pc, kc, jc, nc, pb);                                       \
        for (tl_i64 ic = 0; ic < m; ic += TL_GEMM_MC) {                                           \
          tl_i64 mc = tl_gemm_min(TL_GEMM_MC, m - ic);                                            \
          if (d->mode == 0)                                                                       \
            tl_pack_a_##S(A + ic * kwin + pc, kwin, 1, mc, kc, pa);                               \
          else                                                                                    \
            tl_pack_a_##S(A + ic * (d->oh * d->ow) + pc, d->oh * d->ow, 1, mc, kc, pa);           \
          for (tl_i64 jr = 0; jr < nc; jr += NR) {                                                \
            int nr = (int)tl_gemm_min(NR, nc - jr);                                               \
            T *cp = C + ic * ldc + jc + jr;                                                       \
            for (tl_i64 ir = 0; ir < mc; ir += TL_GEMM_MR)                                        \
              tl_ukr_##S(kc, pa + ir * kc, 1, TL_GEMM_MR, pb + jr * kc, NR, cp + ir * ldc, ldc,   \
                         (int)tl_gemm_min(TL_GEMM_MR, mc - ir), nr, add || pc > 0);               \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  /* the same units by the definition, no workspace: what runs when none can be had */       \
  static void tl_conv_direct_##S(const tl_conv_desc *d, T *out, const T *a, const T *b, tl_i64 begin, tl_i64 end) { \
    tl_i64 kk = d->kh * d->kw, P = d->oh * d->ow, Q = d->h * d->w, K = d->c * kk;                \
    for (tl_i64 t = begin; t < end; t++) {                                                        \
      if (d->mode == 2 || d->mode == 6) { /* dw's columns (c, ki, kj) [n0, n1): a = g, b = x */   \
        tl_i64 per = d->mode == 6 ? d->unit * kk : d->unit; /* mode 6: blocks of channels */      \
        for (tl_i64 col = t * per; col < tl_gemm_min(K, (t + 1) * per); col++) {                 \
          tl_i64 c = col / kk, ki = col % kk / d->kw, kj = col % d->kw;                          \
          for (tl_i64 o = 0; o < d->o; o++) {                                                     \
            T s = 0;                                                                              \
            for (tl_i64 im = 0; im < d->n; im++)                                                  \
              for (tl_i64 p = 0; p < P; p++) {                                                    \
                tl_i64 Y = p / d->ow * d->sh + ki - d->ph, X = p % d->ow * d->sw + kj - d->pw;    \
                if (Y >= 0 && Y < d->h && X >= 0 && X < d->w)                                     \
                  s += a[(im * d->o + o) * P + p] * b[(im * d->c + c) * Q + Y * d->w + X];         \
              }                                                                                   \
            out[o * K + col] = s;                                                                 \
          }                                                                                       \
        }                                                                                         \
        continue;                                                                                 \
      }                                                                                           \
      tl_i64 im = t / d->units, u0 = (t - im * d->units) * d->unit;                               \
      if (d->mode == 1 || d->mode == 5) { /* dx's channels [u0, u0 + unit) of image im: a = g, b = w */ \
        for (tl_i64 c = u0; c < tl_gemm_min(d->c, u0 + d->unit); c++)                             \
          for (tl_i64 q = 0; q < Q; q++) {                                                        \
            T s = 0;                                                                              \
            for (tl_i64 o = 0; o < d->o; o++)                                                     \
              for (tl_i64 ki = 0; ki < d->kh; ki++)                                               \
                for (tl_i64 kj = 0; kj < d->kw; kj++) {                                           \
                  tl_i64 i = q / d->w + d->ph - ki, j = q % d->w + d->pw - kj;                    \
                  if (i >= 0 && j >= 0 && i % d->sh == 0 && j % d->sw == 0 && i / d->sh < d->oh && j / d->sw < d->ow) \
                    s += a[(im * d->o + o) * P + i / d->sh * d->ow + j / d->sw] *                 \
                         b[((o * d->c + c) * d->kh + ki) * d->kw + kj];                           \
                }                                                                                 \
            out[(im * d->c + c) * Q + q] = s;                                                     \
          }                                                                                       \
        continue;                                                                                 \
      }                                                                                           \
      /* y: mode 0 a tile of pixels, mode 3 a block of filters; a = x, b = w */                  \
      int blk = d->mode == 3 || d->mode == 4; /* units: blocks of filters */                     \
      tl_i64 o0 = blk ? u0 : 0, o1 = blk ? tl_gemm_min(d->o, u0 + d->unit) : d->o;              \
      tl_i64 p0 = blk ? 0 : u0, p1 = blk ? P : tl_gemm_min(P, u0 + d->unit);                    \
      for (tl_i64 o = o0; o < o1; o++)                                                            \
        for (tl_i64 p = p0; p < p1; p++) {                                                        \
          T s = 0;                                                                                \
          for (tl_i64 col = 0; col < K; col++) {                                                  \
            tl_i64 c = col / kk, ki = col % kk / d->kw, kj = col % d->kw;                        \
            tl_i64 Y = p / d->ow * d->sh + ki - d->ph, X = p % d->ow * d->sw + kj - d->pw;        \
            if (Y >= 0 && Y < d->h && X >= 0 && X < d->w)                                         \
              s += b[o * K + col] * a[(im * d->c + c) * Q + Y * d->w + X];                        \
          }                                                                                       \
          out[(im * d->o + o) * P + p] = s;                                                       \
        }                                                                                         \
    }                                                                                             \
  }                                                                                               \
  TL_WINO_ROUTINES(T, S)                                                                          \
  /* units [begin, end): out the output; a, b the sources (mode 0: x, w; 1: g, w; 2: g, x) */ \
  static inline void tl_conv_run_##S(const tl_conv_desc *d, T *out, const T *a, const T *b, tl_i64 begin, tl_i64 end) { \
    enum { NR = 2 * TL_GEMM_VBYTES / sizeof(T), NC = TL_GEMM_NC_BYTES / sizeof(T) };              \
    tl_conv_geo g;                                                                                \
    tl_conv_geometry(d, &g);                                                                      \
    tl_i64 kk = d->kh * d->kw, P = d->oh * d->ow, Q = d->h * d->w;                                \
    tl_i64 mt = d->mode & 1 ? d->unit * kk : 0; /* modes 1, 3: the tile's rows and columns */    \
    tl_i64 nb = mt ? tl_gemm_min(256, tl_gemm_min(NC, ((tl_i64)1 << 16) / mt / 32 * 32)) : 0;    \
    nb = mt && nb < 32 ? 32 : nb;                                                                 \
    if (begin >= end) return;                                                                     \
    if (d->mode >= 4) { /* Winograd */                                                            \
      if (d->mode == 6)                                                                           \
        tl_wino_dw_##S(d, out, a, b, begin, end);                                                 \
      else                                                                                        \
        tl_wino_run_##S(d, out, a, b, begin, end);                                                \
      return;                                                                                     \
    }                                                                                             \
    /* packed B (KC x NC), packed A (MC x KC), mode 2's columns (NR x KC), mode 1's tile */     \
    tl_size ws = (tl_size)(TL_GEMM_KC * NC + TL_GEMM_MC * TL_GEMM_KC + NR * TL_GEMM_KC + mt * nb); \
    void *raw = TL_CONV_MALLOC(sizeof(T) * ws + 64);                                              \
    if (!raw) { /* no workspace (the kernel could not report it): the definition, slowly */      \
      tl_conv_direct_##S(d, out, a, b, begin, end);                                               \
      return;                                                                                     \
    }                                                                                             \
    T *pb = (T *)(((tl_size)raw + 63) & ~(tl_size)63), *pa = pb + TL_GEMM_KC * NC;                \
    T *tile = pa + TL_GEMM_MC * TL_GEMM_KC + NR * TL_GEMM_KC;                                     \
    if (d->mode == 2) { /* columns [n0, n1) of dw, summed over every image */                   \
      tl_i64 m = d->o, ncols = d->c * kk, n0 = begin * d->unit, n1 = tl_gemm_min(ncols, end * d->unit); \
      if (d->n == 0)                                                                              \
        for (tl_i64 i = 0; i < m; i++)                                                            \
          for (tl_i64 j = n0; j < n1; j++) out[i * ncols + j] = 0;                                \
      for (tl_i64 im = 0; im < d->n; im++)                                                        \
        tl_conv_rect_##S(d, &g, a + im * d->o * P, b + im * d->c * Q, out, m, ncols, P, n0, n1, im > 0, pb, pa); \
    } else if (d->mode == 1 || d->mode == 3) { /* blocks of output channels of one image */     \
      tl_i64 oc = d->mode == 1 ? d->c : d->o, op = d->mode == 1 ? Q : P, ip = d->mode == 1 ? d->o * P : d->c * Q; \
      for (tl_i64 t = begin; t < end; t++) {                                                      \
        tl_i64 im = t / d->units, c0 = (t - im * d->units) * d->unit, c1 = tl_gemm_min(oc, c0 + d->unit); \
        tl_conv_scatter_##S(d, out + im * oc * op, a + im * ip, b, c0, c1, pb, pa, tile, nb);    \
      }                                                                                           \
    } else { /* pixel tiles of one image */                                                       \
      tl_i64 m = d->o, kdepth = d->c * kk;                                                        \
      for (tl_i64 t = begin; t < end; t++) {                                                      \
        tl_i64 im = t / d->units, n0 = (t - im * d->units) * d->unit, n1 = tl_gemm_min(P, n0 + d->unit); \
        T *c = out + im * m * P;                                                                  \
        if (kdepth == 0)                                                                          \
          for (tl_i64 i = 0; i < m; i++)                                                          \
            for (tl_i64 j = n0; j < n1; j++) c[i * P + j] = 0;                                    \
        tl_conv_rect_##S(d, &g, b, a + im * d->c * Q, c, m, P, kdepth, n0, n1, 0, pb, pa);        \
      }                                                                                           \
    }                                                                                             \
    free(raw);                                                                                    \
  }
#ifdef TL_GEMM_HOST /* tier 1 (libtcc): the library's compiled routine, runtime/gemm_host.c */
void tl_conv_host_f32(const tl_conv_desc *d, float *out, const float *a, const float *b, tl_i64 begin, tl_i64 end);
void tl_conv_host_f64(const tl_conv_desc *d, double *out, const double *a, const double *b, tl_i64 begin,
                      tl_i64 end);
#define tl_conv_run_f32 tl_conv_host_f32
#define tl_conv_run_f64 tl_conv_host_f64
#else
TL_CONV_ROUTINES(float, f32)
TL_CONV_ROUTINES(double, f64)
#endif
#undef TL_CONV_ROUTINES
#endif /* TL_CONV */
