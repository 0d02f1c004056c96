/* test_conv_engine.c — tl_conv2d through the engine as one CONV2D node per direction
 * (the prelude's implicit GEMM): y, dx and dw of medium shapes (several blocks of the
 * GEMM, units split over threads) in f32 and f64, on the cpu and interp backends,
 * against double loops written here. Values are small integers over 8, so every sum is
 * exact in both dtypes and the results must be equal. Also: a backward pass stores no
 * im2col columns (its peak memory stays near the tensors it must make). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tl.h"

typedef struct {
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw;
} engine_case;

static uint64_t eng_rng = 41;
static double eng_value(void) { /* splitmix64, then an integer in [-16, 16] over 8 */
  uint64_t z = (eng_rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((int64_t)((z ^ (z >> 31)) % 33) - 16) / 8;
}

static int64_t eng_oh(const engine_case *p) { return (p->h + 2 * p->ph - p->kh) / p->sh + 1; }
static int64_t eng_ow(const engine_case *p) { return (p->w + 2 * p->pw - p->kw) / p->sw + 1; }

/* y, dx, dw of the definition, for loss = sum(y * g) */
static void eng_reference(const engine_case *p, const double *x, const double *w, const double *g, double *y,
                          double *dx, double *dw) {
  int64_t OH = eng_oh(p), OW = eng_ow(p);
  memset(y, 0, sizeof(double) * (size_t)(p->n * p->o * OH * OW));
  memset(dx, 0, sizeof(double) * (size_t)(p->n * p->c * p->h * p->w));
  memset(dw, 0, sizeof(double) * (size_t)(p->o * p->c * p->kh * p->kw));
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t o = 0; o < p->o; o++)
      for (int64_t i = 0; i < OH; i++)
        for (int64_t j = 0; j < OW; j++)
          for (int64_t c = 0; c < p->c; c++)
            for (int64_t ki = 0; ki < p->kh; ki++)
              for (int64_t kj = 0; kj < p->kw; kj++) {
                int64_t h = i * p->sh + ki - p->ph, v = j * p->sw + kj - p->pw;
                if (h < 0 || h >= p->h || v < 0 || v >= p->w) continue;
                int64_t xi = ((n * p->c + c) * p->h + h) * p->w + v, wi = ((o * p->c + c) * p->kh + ki) * p->kw + kj;
                int64_t yi = ((n * p->o + o) * OH + i) * OW + j;
                y[yi] += w[wi] * x[xi];
                dx[xi] += g[yi] * w[wi];
                dw[wi] += g[yi] * x[xi];
              }
}

static tl_tensor *eng_tensor(tl_ctx *ctx, tl_dtype dt, int64_t n0, int64_t n1, int64_t n2, int64_t n3,
                             const double *v) {
  int64_t shape[4] = {n0, n1, n2, n3};
  tl_tensor *t = tl_from_data(ctx, TL_F64, 4, shape, v);
  return dt == TL_F64 ? t : tl_cast(t, dt);
}

/* element i of t (any float dtype) equal to want[i] for all i, else the test fails */
static void eng_expect(tl_ctx *ctx, const char *what, const engine_case *p, tl_dtype dt, tl_tensor *t,
                       const double *want, int64_t n) {
  double *got = malloc(sizeof(double) * (size_t)(n + 1));
  if (!t || tl_to_host(tl_cast(t, TL_F64), got, sizeof(double) * (size_t)n) != TL_OK) {
    tl_test_fail(__FILE__, __LINE__, "%s: %s", what, tl_last_error(ctx));
  } else {
    for (int64_t i = 0; i < n; i++)
      if (got[i] != want[i]) {
        tl_test_fail(__FILE__, __LINE__,
                     "%s %s, x [%lld,%lld,%lld,%lld] w [%lld,%lld,%lld,%lld] stride %lldx%lld pad %lldx%lld: "
                     "element %lld = %.17g, expected %.17g",
                     what, dt == TL_F32 ? "f32" : "f64", (long long)p->n, (long long)p->c, (long long)p->h,
                     (long long)p->w, (long long)p->o, (long long)p->c, (long long)p->kh, (long long)p->kw,
                     (long long)p->sh, (long long)p->sw, (long long)p->ph, (long long)p->pw, (long long)i, got[i],
                     want[i]);
        break;
      }
  }
  free(got);
}

static void eng_check(tl_ctx *ctx, const engine_case *p, tl_dtype dt) {
  int64_t OH = eng_oh(p), OW = eng_ow(p), nx = p->n * p->c * p->h * p->w, nw = p->o * p->c * p->kh * p->kw;
  int64_t ny = p->n * p->o * OH * OW;
  double *x = malloc(sizeof(double) * (size_t)nx), *w = malloc(sizeof(double) * (size_t)nw);
  double *g = malloc(sizeof(double) * (size_t)ny), *y = malloc(sizeof(double) * (size_t)ny);
  double *dx = malloc(sizeof(double) * (size_t)nx), *dw = malloc(sizeof(double) * (size_t)nw);
  for (int64_t i = 0; i < nx; i++) x[i] = eng_value();
  for (int64_t i = 0; i < nw; i++) w[i] = eng_value();
  for (int64_t i = 0; i < ny; i++) g[i] = eng_value();
  eng_reference(p, x, w, g, y, dx, dw);
  TL_SCOPE(ctx, s) {
    tl_tensor *tx = eng_tensor(ctx, dt, p->n, p->c, p->h, p->w, x), *tw = eng_tensor(ctx, dt, p->o, p->c, p->kh, p->kw, w);
    tl_tensor *tg = eng_tensor(ctx, dt, p->n, p->o, OH, OW, g);
    CHECK(tx && tw && tg && tl_realize(tx) == TL_OK && tl_realize(tw) == TL_OK);
    CHECK_INT(tl_set_requires_grad(tx, 1), TL_OK);
    CHECK_INT(tl_set_requires_grad(tw, 1), TL_OK);
    tl_tensor *ty = tl_conv2d(tx, tw, NULL, p->sh, p->sw, p->ph, p->pw);
    CHECK_INT(tl_backward(tl_sum(tl_mul(ty, tg), 0, NULL, 0), NULL), TL_OK);
    eng_expect(ctx, "y", p, dt, ty, y, ny);
    eng_expect(ctx, "dx", p, dt, tl_grad(tx), dx, nx);
    eng_expect(ctx, "dw", p, dt, tl_grad(tw), dw, nw);
  }
  free(x), free(w), free(g), free(y), free(dx), free(dw);
}

/* blocks of every level: depth over KC (K = 360, 450), rows over MC (O 150), channel
 * blocks of dx (20, 40 channels), pixels over a unit (400, 1600), batch 1, odd sizes,
 * strides 2 and 3, padding past the kernel, 1x1 */
static const engine_case eng_cases[] = {
    {1, 5, 13, 11, 7, 3, 3, 1, 1, 1, 1},  {3, 20, 9, 10, 6, 3, 3, 1, 1, 1, 1}, {2, 40, 18, 17, 9, 3, 3, 2, 2, 1, 1},
    {2, 3, 23, 29, 33, 5, 2, 3, 1, 2, 0}, {1, 4, 20, 20, 5, 1, 1, 1, 1, 0, 0}, {2, 2, 6, 7, 3, 2, 2, 1, 1, 3, 2},
    {1, 17, 40, 40, 19, 3, 3, 1, 1, 1, 1}, {1, 2, 5, 5, 150, 3, 3, 1, 1, 1, 1}, {2, 50, 8, 8, 4, 3, 3, 1, 1, 1, 1},
};

TEST(conv2d_engine_values_and_grads) {
  tl_ctx *ctx = tl_init();
  for (size_t i = 0; i < sizeof eng_cases / sizeof eng_cases[0]; i++) {
    eng_check(ctx, &eng_cases[i], TL_F32);
    eng_check(ctx, &eng_cases[i], TL_F64);
  }
  TEST_SHUTDOWN(ctx);
}

/* the interpreter evaluates CONV2D from its definition: the oracle agrees too */
TEST(conv2d_engine_interp) {
  tl_ctx *ctx = tl_init();
  CHECK_INT(tl_set_backend(ctx, "interp"), TL_OK);
  eng_check(ctx, &eng_cases[0], TL_F32);
  eng_check(ctx, &eng_cases[5], TL_F64);
  TEST_SHUTDOWN(ctx);
}

/* A step's forward and backward make y, dx, dw and the loss; im2col would also store
 * columns of C*kh*kw times the input (9x here) for the forward product and again for
 * dx: the peak stays under 4x the input above what was live before. */
TEST(conv2d_backward_stores_no_columns) {
  tl_ctx *ctx = tl_init();
  TL_SCOPE(ctx, s) {
    int64_t xs[4] = {4, 16, 24, 24};
    tl_tensor *x = tl_randn(ctx, TL_F32, 4, xs), *w = tl_randn(ctx, TL_F32, 4, (int64_t[]){16, 16, 3, 3});
    tl_tensor *g = tl_randn(ctx, TL_F32, 4, xs);
    CHECK(x && w && g && tl_realize(x) == TL_OK && tl_realize(w) == TL_OK && tl_realize(g) == TL_OK);
    CHECK_INT(tl_set_requires_grad(x, 1), TL_OK);
    CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
    uint64_t live = tl_get_stats(ctx).live_bytes, xbytes = 4 * 16 * 24 * 24 * sizeof(float);
    tl_mem_reset_peak(ctx);
    tl_tensor *loss = tl_sum(tl_mul(tl_conv2d(x, w, NULL, 1, 1, 1, 1), g), 0, NULL, 0);
    CHECK_INT(tl_backward(loss, NULL), TL_OK);
    CHECK(tl_realize(tl_grad(x)) == TL_OK && tl_realize(tl_grad(w)) == TL_OK);
    uint64_t peak = tl_get_stats(ctx).peak_bytes;
    if (peak > live + 4 * xbytes)
      tl_test_fail(__FILE__, __LINE__, "peak %llu bytes above the %llu live before; at most %llu expected",
                   (unsigned long long)(peak - live), (unsigned long long)live, (unsigned long long)(4 * xbytes));
  }
  TEST_SHUTDOWN(ctx);
}

/* x f32 and w f64 (no CONV2D: the windows-and-matmul form, promoted to f64) */
TEST(conv2d_mixed_dtypes) {
  tl_ctx *ctx = tl_init();
  engine_case p = {2, 3, 6, 5, 4, 3, 2, 2, 1, 1, 0};
  int64_t OH = eng_oh(&p), OW = eng_ow(&p), nx = p.n * p.c * p.h * p.w, nw = p.o * p.c * p.kh * p.kw;
  int64_t ny = p.n * p.o * OH * OW;
  double *x = malloc(sizeof(double) * (size_t)nx), *w = malloc(sizeof(double) * (size_t)nw);
  double *g = calloc((size_t)ny, sizeof(double)), *y = malloc(sizeof(double) * (size_t)ny);
  double *dx = malloc(sizeof(double) * (size_t)nx), *dw = malloc(sizeof(double) * (size_t)nw);
  for (int64_t i = 0; i < nx; i++) x[i] = eng_value();
  for (int64_t i = 0; i < nw; i++) w[i] = eng_value();
  eng_reference(&p, x, w, g, y, dx, dw);
  TL_SCOPE(ctx, s) {
    tl_tensor *ty = tl_conv2d(eng_tensor(ctx, TL_F32, p.n, p.c, p.h, p.w, x),
                              eng_tensor(ctx, TL_F64, p.o, p.c, p.kh, p.kw, w), NULL, p.sh, p.sw, p.ph, p.pw);
    CHECK(ty && tl_get_dtype(ty) == TL_F64);
    eng_expect(ctx, "y", &p, TL_F64, ty, y, ny);
  }
  free(x), free(w), free(g), free(y), free(dx), free(dw);
  TEST_SHUTDOWN(ctx);
}
