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
      if (d->mode == 2) { /* dw's columns (c, ki, kj) [n0, n1): a = g, b = x */                   \
        for (tl_i64 col = t * d->unit; col < tl_gemm_min(K, (t + 1) * d->unit); col++) {          \
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
      if (d->mode == 1) { /* dx's channels [u0, u0 + unit) of image im: a = g, b = w */           \
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
      tl_i64 o0 = d->mode == 3 ? u0 : 0, o1 = d->mode == 3 ? tl_gemm_min(d->o, u0 + d->unit) : d->o; \
      tl_i64 p0 = d->mode == 3 ? 0 : u0, p1 = d->mode == 3 ? P : tl_gemm_min(P, u0 + d->unit);   \
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
