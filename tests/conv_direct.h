/* conv_direct.h — the prelude's convolution routine itself (kernel_prelude_conv.h)
 * against naive double loops, included by test_conv_direct.c (the build's own vectors)
 * and test_conv_wide.c (the 512-bit layout, TL_GEMM_WIDE) after kernel_prelude.h with
 * TL_GEMM and TL_CONV; CONV_PREFIX names the tests. Values are small integers over 8,
 * so every product and sum is exact in f32 and f64 and the results must be equal.
 * The units and the chunks of them each call runs are drawn at random: any split the
 * lowering or the thread pool may choose gives the same result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define CONV_TEST(name) CONV_TEST_(CONV_PREFIX, name)
#define CONV_TEST_(prefix, name) CONV_TEST__(prefix, name)
#define CONV_TEST__(prefix, name) TEST(prefix##name)

static uint64_t conv_rng = 0x5eed;
static int64_t conv_pick(int64_t lo, int64_t hi) { /* splitmix64, in [lo, hi] */
  uint64_t z = (conv_rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return lo + (int64_t)((z ^ (z >> 31)) % (uint64_t)(hi - lo + 1));
}

/* y, dx and dw of the definition (uop.h, CONV2D), in double */
static void conv_reference(const tl_conv_desc *d, const double *x, const double *w, const double *g, double *y,
                           double *dx, double *dw) {
  int64_t C = d->c, H = d->h, W = d->w, O = d->o, KH = d->kh, KW = d->kw, OH = d->oh, OW = d->ow;
  memset(y, 0, sizeof(double) * (size_t)(d->n * O * OH * OW));
  memset(dx, 0, sizeof(double) * (size_t)(d->n * C * H * W));
  memset(dw, 0, sizeof(double) * (size_t)(O * C * KH * KW));
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t i = 0; i < OH; i++)
        for (int64_t j = 0; j < OW; j++)
          for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
              for (int64_t kj = 0; kj < KW; kj++) {
                int64_t h = i * d->sh + ki - d->ph, v = j * d->sw + kj - d->pw;
                if (h < 0 || h >= H || v < 0 || v >= W) continue;
                int64_t xi = ((n * C + c) * H + h) * W + v, wi = ((o * C + c) * KH + ki) * KW + kj;
                int64_t yi = ((n * O + o) * OH + i) * OW + j;
                y[yi] += w[wi] * x[xi];
                dx[xi] += g[yi] * w[wi];
                dw[wi] += g[yi] * x[xi];
              }
}

#define CONV_CHECK_RUN(T, S)                                                                      \
  /* runs mode on random units and chunks; returns the first index that differs, or -1 */      \
  static int64_t conv_run_##S(tl_conv_desc d, int mode, const double *a, const double *b, const double *want, \
                              int64_t na, int64_t nb, int64_t nout) {                             \
    T *ta = malloc(sizeof(T) * (size_t)(na + 1)), *tb = malloc(sizeof(T) * (size_t)(nb + 1));    \
    T *out = malloc(sizeof(T) * (size_t)(nout + 1));                                              \
    for (int64_t i = 0; i < na; i++) ta[i] = (T)a[i];                                             \
    for (int64_t i = 0; i < nb; i++) tb[i] = (T)b[i];                                             \
    for (int64_t i = 0; i < nout; i++) out[i] = (T)12345; /* the routine writes every element */ \
    int64_t kk = d.kh * d.kw, cols = mode == 0 ? d.oh * d.ow : mode == 1 || mode == 5 ? d.c      \
                                   : mode == 3 || mode == 4 ? d.o : mode == 6 ? d.c : d.c * kk;   \
    d.mode = mode;                                                                                \
    d.unit = mode == 0 || mode == 2 ? 32 * conv_pick(1, 9) : conv_pick(1, cols > 1 ? cols : 1);  \
    d.units = (cols + d.unit - 1) / d.unit;                                                       \
    d.units = d.units ? d.units : 1;                                                              \
    int64_t work = mode == 2 || mode == 6 ? d.units : d.n * d.units;                              \
    for (int64_t t = 0; t < work;) { /* chunks of random length, as threads take them */         \
      int64_t e = t + conv_pick(1, 3);                                                            \
      e = e < work ? e : work;                                                                    \
      tl_conv_run_##S(&d, out, ta, tb, t, e);                                                     \
      t = e;                                                                                      \
    }                                                                                             \
    int64_t bad = -1;                                                                             \
    for (int64_t i = 0; i < nout && bad < 0; i++)                                                 \
      if ((double)out[i] != want[i]) bad = i;                                                     \
    free(ta);                                                                                     \
    free(tb);                                                                                     \
    free(out);                                                                                    \
    return bad;                                                                                   \
  }
CONV_CHECK_RUN(float, f32)
CONV_CHECK_RUN(double, f64)

/* one shape: y, dx and dw in both dtypes, each equal to the reference */
static void conv_check_shape(tl_conv_desc d) {
  d.oh = (d.h + 2 * d.ph - d.kh) / d.sh + 1;
  d.ow = (d.w + 2 * d.pw - d.kw) / d.sw + 1;
  int64_t nx = d.n * d.c * d.h * d.w, nw = d.o * d.c * d.kh * d.kw, ny = d.n * d.o * d.oh * d.ow;
  double *x = malloc(sizeof(double) * (size_t)(nx + 1)), *w = malloc(sizeof(double) * (size_t)(nw + 1));
  double *g = malloc(sizeof(double) * (size_t)(ny + 1)), *y = malloc(sizeof(double) * (size_t)(ny + 1));
  double *dx = malloc(sizeof(double) * (size_t)(nx + 1)), *dw = malloc(sizeof(double) * (size_t)(nw + 1));
  for (int64_t i = 0; i < nx; i++) x[i] = (double)conv_pick(-16, 16) / 8;
  for (int64_t i = 0; i < nw; i++) w[i] = (double)conv_pick(-16, 16) / 8;
  for (int64_t i = 0; i < ny; i++) g[i] = (double)conv_pick(-16, 16) / 8;
  conv_reference(&d, x, w, g, y, dx, dw);
  for (int f64 = 0; f64 < 2; f64++)
    for (int mode = 0; mode < 7; mode++) { /* mode 3: the forward at stride 1 only; 4-6 (Winograd) 3x3 too */
      if (mode >= 3 && (d.sh != 1 || d.sw != 1)) continue;
      if (mode >= 4 && (d.kh != 3 || d.kw != 3)) continue;
      int fwd = mode == 0 || mode == 3 || mode == 4, bwx = mode == 1 || mode == 5, bww = mode == 2 || mode == 6;
      const double *a = fwd ? x : g, *b = bww ? x : w, *want = fwd ? y : bwx ? dx : dw;
      int64_t na = fwd ? nx : ny, nb = bww ? nx : nw, nout = fwd ? ny : bwx ? nx : nw;
      int64_t bad = f64 ? conv_run_f64(d, mode, a, b, want, na, nb, nout) : conv_run_f32(d, mode, a, b, want, na, nb, nout);
      if (bad >= 0)
        tl_test_fail(__FILE__, __LINE__,
                     "%s mode %d, x [%lld,%lld,%lld,%lld] w [%lld,%lld,%lld,%lld] stride %lldx%lld pad %lldx%lld: "
                     "element %lld differs from the reference %g",
                     f64 ? "f64" : "f32", mode, (long long)d.n, (long long)d.c, (long long)d.h, (long long)d.w,
                     (long long)d.o, (long long)d.c, (long long)d.kh, (long long)d.kw, (long long)d.sh, (long long)d.sw,
                     (long long)d.ph, (long long)d.pw, (long long)bad, want[bad]);
    }
  free(x), free(w), free(g), free(y), free(dx), free(dw);
}

/* shapes that cross each blocking level: K over KC (several depth blocks), rows over MC
 * and not a multiple of MR, pixels over a unit, dw's columns over NR, 1x1 and wide
 * kernels, strides 1-3, padding past the kernel, batch 1 */
CONV_TEST(conv_prelude_edges) {
  static const int64_t cases[][11] = {
      /* n, c, h, w, o, kh, kw, sh, sw, ph, pw */
      {1, 5, 13, 11, 7, 3, 3, 1, 1, 1, 1},   {3, 20, 9, 10, 6, 3, 3, 1, 1, 1, 1},
      {2, 40, 18, 17, 9, 3, 3, 2, 2, 1, 1},  {2, 3, 23, 29, 33, 5, 2, 3, 1, 2, 0},
      {1, 4, 20, 20, 5, 1, 1, 1, 1, 0, 0},   {2, 2, 6, 7, 3, 2, 2, 1, 1, 3, 2},
      {1, 17, 40, 40, 19, 3, 3, 1, 1, 1, 1}, {2, 150, 4, 4, 3, 1, 1, 1, 1, 0, 0},
      {1, 2, 5, 5, 150, 3, 3, 1, 1, 1, 1},   {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
      {2, 3, 7, 1, 2, 3, 1, 2, 1, 1, 0},     {1, 300, 3, 3, 2, 2, 2, 1, 1, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t *p = cases[i];
    tl_conv_desc d = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], 0, 0, p[7], p[8], p[9], p[10], 0, 0, 0};
    conv_check_shape(d);
  }
}

CONV_TEST(conv_prelude_random) {
  for (int i = 0; i < 40; i++) {
    tl_conv_desc d = {0};
    int unit_stride = i % 2; /* half at stride 1, where the forward also runs as mode 3 */
    d.n = conv_pick(1, 3), d.c = conv_pick(1, 24), d.o = conv_pick(1, 20);
    d.kh = conv_pick(1, 4), d.kw = conv_pick(1, 4), d.sh = unit_stride ? 1 : conv_pick(1, 3), d.sw = unit_stride ? 1 : conv_pick(1, 3);
    d.ph = conv_pick(0, 3), d.pw = conv_pick(0, 3);
    d.h = conv_pick(d.kh > 2 * d.ph ? d.kh - 2 * d.ph : 1, 19);
    d.w = conv_pick(d.kw > 2 * d.pw ? d.kw - 2 * d.pw : 1, 23);
    conv_check_shape(d);
  }
}

/* 3x3 at stride 1, where y, dx and dw also run as Winograd F(2x2, 3x3) (modes 4-6):
 * odd and single-row outputs (tiles half outside), padding 0-3 (dx's own padding 2 - p
 * negative), channels over MR, NR and KC (several depth blocks), tiles over a block
 * (TL_WINO_TB panels; dw's TL_WINO_TK, rows wider than it), batch 1-3 */
CONV_TEST(conv_prelude_winograd) {
  static const int64_t cases[][11] = {
      /* n, c, h, w, o, kh, kw, sh, sw, ph, pw */
      {1, 1, 3, 3, 1, 3, 3, 1, 1, 0, 0},     {2, 3, 5, 7, 2, 3, 3, 1, 1, 1, 1},
      {1, 7, 1, 9, 13, 3, 3, 1, 1, 1, 1},    {3, 13, 20, 23, 7, 3, 3, 1, 1, 1, 1},
      {1, 2, 4, 150, 3, 3, 3, 1, 1, 1, 1},   {2, 5, 9, 8, 70, 3, 3, 1, 1, 2, 3},
      {1, 300, 6, 5, 4, 3, 3, 1, 1, 1, 0},   {1, 4, 6, 6, 300, 3, 3, 1, 1, 0, 1},
      {2, 33, 12, 11, 37, 3, 3, 1, 1, 3, 2}, {1, 40, 30, 30, 19, 3, 3, 1, 1, 1, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t *p = cases[i];
    tl_conv_desc d = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], 0, 0, p[7], p[8], p[9], p[10], 0, 0, 0};
    conv_check_shape(d);
  }
  for (int i = 0; i < 20; i++) {
    tl_conv_desc d = {0};
    d.n = conv_pick(1, 3), d.c = conv_pick(1, 40), d.o = conv_pick(1, 40), d.kh = d.kw = 3, d.sh = d.sw = 1;
    d.ph = conv_pick(0, 3), d.pw = conv_pick(0, 3);
    d.h = conv_pick(3 > 2 * d.ph ? 3 - 2 * d.ph : 1, 19);
    d.w = conv_pick(3 > 2 * d.pw ? 3 - 2 * d.pw : 1, 40);
    conv_check_shape(d);
  }
}

#ifdef CONV_MALLOC_HOOK
/* without a workspace (its malloc refused: the kernel has no way to report it) the
 * routine computes the same units by the definition: the edge shapes again */
CONV_TEST(conv_prelude_without_workspace) {
  static const int64_t cases[][11] = {
      {1, 5, 13, 11, 7, 3, 3, 1, 1, 1, 1}, {2, 40, 18, 17, 9, 3, 3, 2, 2, 1, 1}, {2, 3, 23, 29, 33, 5, 2, 3, 1, 2, 0},
      {2, 2, 6, 7, 3, 2, 2, 1, 1, 3, 2},   {2, 3, 7, 1, 2, 3, 1, 2, 1, 1, 0},
  };
  conv_malloc_fails = 1;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t *p = cases[i];
    tl_conv_desc d = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], 0, 0, p[7], p[8], p[9], p[10], 0, 0, 0};
    conv_check_shape(d);
  }
  conv_malloc_fails = 0;
}
#endif
