/* test_ops_index.c — tl_gather, tl_scatter, tl_argsort, tl_logsumexp, tl_expm1, tl_erf,
 * tl_any/tl_all, tl_roll and tl_repeat: values against numpy (np.take_along_axis,
 * np.argsort(kind='stable'), np.roll, np.tile, np.expm1, math.erf, a loop for scatter),
 * gradients against central finite differences in f64, and the messages for bad input. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tl.h"

static tl_tensor *f64(tl_ctx *ctx, int nd, const int64_t *shape, const double *v) {
  return tl_from_data(ctx, TL_F64, nd, shape, v);
}
static tl_tensor *i64(tl_ctx *ctx, int nd, const int64_t *shape, const int64_t *v) {
  return tl_from_data(ctx, TL_I64, nd, shape, v);
}

#define FAILS(expr, st, text)                        \
  do {                                               \
    CHECK((expr) == NULL);                           \
    CHECK_INT(tl_last_status(ctx), st);              \
    CHECK_CONTAINS(tl_last_error(ctx), text);        \
    tl_clear_error(ctx);                             \
  } while (0)

/* ---- finite differences: f(x) = sum(op(x) * w), w fixed in [-1, 1] ------------------- */
typedef tl_tensor *(*op_fn)(tl_tensor *x, tl_ctx *ctx);

static double loss_at(tl_ctx *ctx, op_fn f, int nd, const int64_t *shape, const double *v, tl_tensor **grad) {
  tl_scope *s = tl_scope_begin(ctx, "loss");
  tl_tensor *x = f64(ctx, nd, shape, v);
  if (grad) tl_set_requires_grad(x, 1);
  tl_tensor *y = f(x, ctx);
  int64_t n = tl_numel(y), ys[TL_MAX_DIMS];
  for (int i = 0; i < tl_ndim(y); i++) ys[i] = tl_dim(y, i);
  double *w = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) w[i] = sin(1.7 * (double)i + 0.3);
  tl_tensor *loss = tl_sum(tl_mul(tl_cast(y, TL_F64), f64(ctx, tl_ndim(y), ys, w)), 0, NULL, 0);
  free(w);
  double out = NAN;
  if (tl_item(loss, &out) != TL_OK) tl_test_fail(__FILE__, __LINE__, "loss: %s", tl_last_error(ctx));
  if (grad) *grad = tl_backward(loss, NULL) == TL_OK ? tl_escape(tl_grad(x)) : NULL;
  tl_scope_end(s);
  return out;
}

static void gradcheck(tl_ctx *ctx, const char *name, op_fn f, int nd, const int64_t *shape, const double *v0) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= shape[i];
  double v[64], got[64];
  memcpy(v, v0, sizeof(double) * (size_t)n);
  tl_tensor *g = NULL;
  loss_at(ctx, f, nd, shape, v, &g);
  if (!g || tl_to_host(g, got, sizeof(double) * (size_t)n) != TL_OK) {
    tl_test_fail(__FILE__, __LINE__, "%s: no gradient: %s", name, tl_last_error(ctx));
    tl_release(g);
    return;
  }
  tl_release(g);
  for (int64_t i = 0; i < n; i++) {
    double h = 1e-6, keep = v[i];
    v[i] = keep + h;
    double fp = loss_at(ctx, f, nd, shape, v, NULL);
    v[i] = keep - h;
    double fm = loss_at(ctx, f, nd, shape, v, NULL);
    v[i] = keep;
    double want = (fp - fm) / (2 * h);
    if (!(fabs(got[i] - want) <= 1e-5 * (1 + fabs(want))))
      tl_test_fail(__FILE__, __LINE__, "%s: d/dx[%lld] is %.9g, finite differences give %.9g", name, (long long)i,
                   got[i], want);
  }
}

/* ---- values ------------------------------------------------------------------------------ */
TEST(ops_gather_values) {
  tl_ctx *ctx = tl_init();
  double xv[12];
  for (int i = 0; i < 12; i++) xv[i] = i;
  tl_tensor *x = f64(ctx, 2, (int64_t[]){3, 4}, xv);
  tl_tensor *idx = i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){0, 3, 2, 2, 1, 0});
  tl_tensor *r = tl_gather(x, 1, idx);
  CHECK_INT(tl_dim(r, 0), 3);
  CHECK_INT(tl_dim(r, 1), 2);
  VALUES(r, 0, 0, 3, 6, 6, 9, 8);
  VALUES(tl_gather(x, -2, i64(ctx, 2, (int64_t[]){1, 4}, (int64_t[]){2, 0, 1, 1})), 0, 8, 1, 6, 7);
  /* i32 indices, an integer tensor, a transposed view */
  tl_tensor *i32 = tl_from_data(ctx, TL_I32, 2, (int64_t[]){1, 2}, (int32_t[]){2, 0});
  VALUES(tl_gather(tl_cast(x, TL_I64), 1, i32), 0, 2, 0);
  VALUES(tl_gather(tl_transpose(x, 0, 1), 0, i32), 0, 2, 4); /* x^T[2][0], x^T[0][1] */
  TEST_SHUTDOWN(ctx);
}

TEST(ops_scatter_values) {
  tl_ctx *ctx = tl_init();
  tl_tensor *z = tl_zeros(ctx, TL_F64, 2, (int64_t[]){3, 4});
  tl_tensor *src = f64(ctx, 2, (int64_t[]){3, 3}, (double[]){10, 11, 12, 20, 21, 22, 30, 31, 32});
  tl_tensor *idx = i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3, 0, 0, 2, 1});
  /* row 1 writes column 0 twice: the last write (21) wins */
  VALUES(tl_scatter(z, 1, idx, src), 0, 0, 10, 0, 11, 21, 0, 0, 0, 0, 31, 30, 0);
  tl_tensor *ones = tl_ones(ctx, TL_F32, 2, (int64_t[]){2, 2});
  tl_tensor *r = tl_scatter(ones, 0, i64(ctx, 2, (int64_t[]){1, 2}, (int64_t[]){1, 0}), src);
  CHECK(tl_get_dtype(r) == TL_F32);
  VALUES(r, 0, 1, 11, 10, 1); /* out[1][0] = src[0][0], out[0][1] = src[0][1] */
  TEST_SHUTDOWN(ctx);
}

TEST(ops_scatter_add_values) {
  tl_ctx *ctx = tl_init();
  double av[12];
  for (int i = 0; i < 12; i++) av[i] = i;
  tl_tensor *a = f64(ctx, 2, (int64_t[]){3, 4}, av);
  tl_tensor *src = f64(ctx, 2, (int64_t[]){3, 3}, (double[]){10, 11, 12, 20, 21, 22, 30, 31, 32});
  tl_tensor *idx = i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3, 0, 0, 2, 1});
  /* numpy: for p: out[p0, idx[p]] += src[p]; row 1 adds 20 and 21 into column 0 */
  VALUES(tl_scatter_add(a, 1, idx, src), 0, 0, 11, 2, 14, 45, 5, 6, 7, 8, 40, 40, 11);
  tl_tensor *ai = i64(ctx, 2, (int64_t[]){2, 2}, (int64_t[]){1, 2, 3, 4});
  tl_tensor *r = tl_scatter_add(ai, 0, i64(ctx, 2, (int64_t[]){1, 2}, (int64_t[]){1, 1}),
                                i64(ctx, 2, (int64_t[]){2, 3}, (int64_t[]){5, 6, 7, 0, 0, 0}));
  CHECK(tl_get_dtype(r) == TL_I64);
  VALUES(r, 0, 1, 2, 8, 10);
  FAILS(tl_scatter_add(a, 1, i64(ctx, 2, (int64_t[]){1, 1}, (int64_t[]){4}), src), TL_ERR_RANGE,
        "scatter_add: index 4 at [0, 0] is out of range for axis 1 of size 4");
  TEST_SHUTDOWN(ctx);
}

TEST(ops_argsort_values) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = f64(ctx, 2, (int64_t[]){2, 3}, (double[]){3, 1, 2, 1, 1, 0});
  tl_tensor *r = tl_argsort(a, 1, 0);
  CHECK(tl_get_dtype(r) == TL_I64);
  VALUES(r, 0, 1, 2, 0, 2, 0, 1);
  VALUES(tl_argsort(a, -1, 1), 0, 0, 2, 1, 0, 1, 2); /* ties keep their order, descending too */
  VALUES(tl_argsort(a, 0, 0), 0, 1, 0, 1, 0, 1, 0);
  /* NaN is the largest; integers beyond 2^53 compare exactly */
  VALUES(tl_argsort(f64(ctx, 1, (int64_t[]){4}, (double[]){NAN, 2, -INFINITY, 1}), 0, 0), 0, 2, 3, 1, 0);
  int64_t big[] = {(1LL << 60) + 1, 1LL << 60, -5};
  VALUES(tl_argsort(i64(ctx, 1, (int64_t[]){3}, big), 0, 0), 0, 2, 1, 0);
  TEST_SHUTDOWN(ctx);
}

TEST(ops_logsumexp_expm1_erf_values) {
  tl_ctx *ctx = tl_init();
  tl_tensor *v = f64(ctx, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 1000, 1000, -1000});
  int last = 1;
  VALUES(tl_logsumexp(v, 1, &last, 0), 1e-12, 3.4076059644443806, 1000.6931471805599);
  tl_tensor *k = tl_logsumexp(v, 1, &last, 1);
  CHECK_INT(tl_ndim(k), 2);
  CHECK_INT(tl_dim(k, 1), 1);
  tl_tensor *ninf = f64(ctx, 1, (int64_t[]){2}, (double[]){-INFINITY, -INFINITY});
  double lse = 0;
  CHECK(tl_item(tl_logsumexp(ninf, 0, NULL, 0), &lse) == TL_OK);
  CHECK(isinf(lse) && lse < 0);
  VALUES(tl_logsumexp(tl_cast(v, TL_F32), 1, &last, 0), 1e-3, 3.4076059644443806, 1000.6931471805599);
  tl_tensor *e = f64(ctx, 1, (int64_t[]){4}, (double[]){1e-10, -1e-7, 0.5, 2.0});
  /* relative to each value: e^x - 1 would keep no digit of 1e-10 */
  double want[] = {1.00000000005e-10, -9.999999500000016e-08, 0.6487212707001282, 6.38905609893065}, got[4];
  CHECK(tl_to_host(tl_expm1(e), got, sizeof got) == TL_OK);
  for (int i = 0; i < 4; i++) CHECK_NEAR(got[i] / want[i], 1, 1e-15);
  CHECK(tl_to_host(tl_expm1(tl_cast(e, TL_F32)), (float[4]){0}, 16) == TL_OK);
  float gf[4];
  tl_to_host(tl_expm1(tl_cast(e, TL_F32)), gf, sizeof gf);
  for (int i = 0; i < 4; i++) CHECK_NEAR(gf[i] / want[i], 1, 1e-6);
  VALUES(tl_erf(f64(ctx, 1, (int64_t[]){4}, (double[]){0, 0.5, -1, 2})), 1e-15, 0.0, 0.5204998778130465,
         -0.8427007929497149, 0.9953222650189527);
  TEST_SHUTDOWN(ctx);
}

TEST(ops_any_all_values) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = f64(ctx, 2, (int64_t[]){2, 3}, (double[]){0, 0, 0, 1, NAN, 2});
  tl_tensor *r = tl_any(a, 0, NULL, 0);
  CHECK(tl_get_dtype(r) == TL_BOOL);
  VALUES(r, 0, 1);
  VALUES(tl_all(a, 0, NULL, 0), 0, 0);
  int ax = 1;
  VALUES(tl_any(a, 1, &ax, 0), 0, 0, 1);
  VALUES(tl_all(a, 1, &ax, 0), 0, 0, 1); /* NaN is nonzero */
  tl_tensor *empty = tl_zeros(ctx, TL_I64, 1, (int64_t[]){0});
  VALUES(tl_any(empty, 0, NULL, 0), 0, 0);
  VALUES(tl_all(empty, 0, NULL, 0), 0, 1);
  VALUES(tl_all(tl_gt(a, tl_scalar(ctx, TL_F64, -1)), 0, NULL, 0), 0, 0); /* NaN > -1 is false */
  TEST_SHUTDOWN(ctx);
}

TEST(ops_roll_repeat_values) {
  tl_ctx *ctx = tl_init();
  tl_tensor *r = f64(ctx, 2, (int64_t[]){2, 3}, (double[]){0, 1, 2, 3, 4, 5});
  VALUES(tl_roll(r, 1, (int64_t[]){1}, (int[]){1}), 0, 2, 0, 1, 5, 3, 4);
  VALUES(tl_roll(r, 1, (int64_t[]){-1}, NULL), 0, 1, 2, 3, 4, 5, 0);
  VALUES(tl_roll(r, 2, (int64_t[]){1, 2}, (int[]){0, -1}), 0, 4, 5, 3, 1, 2, 0);
  VALUES(tl_roll(r, 1, (int64_t[]){7}, (int[]){1}), 0, 2, 0, 1, 5, 3, 4); /* 7 = 1 mod 3 */
  tl_tensor *t = tl_repeat(f64(ctx, 1, (int64_t[]){2}, (double[]){1, 2}), 2, (int64_t[]){2, 2});
  CHECK_INT(tl_ndim(t), 2);
  CHECK_INT(tl_dim(t, 1), 4);
  VALUES(t, 0, 1, 2, 1, 2, 1, 2, 1, 2);
  tl_tensor *u = tl_repeat(r, 3, (int64_t[]){2, 1, 2});
  CHECK_INT(tl_dim(u, 0), 2);
  CHECK_INT(tl_dim(u, 2), 6);
  VALUES(u, 0, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5);
  CHECK_INT(tl_numel(tl_repeat(r, 2, (int64_t[]){0, 1})), 0);
  TEST_SHUTDOWN(ctx);
}

/* x, numpy's expm1(x) in f64 and in f32 (of x rounded to f32), numpy 1.24: on both
 * backends, from kernels and from constant folding (a 0-d constant folds), within an
 * ulp; exp(x) - 1 loses x below 2^-53 (f64) and 2^-24 (f32) */
static const double expm1_table[][3] = {
    {-INFINITY, -1.0, -1.0},
    {-50.0, -1.0, -1.0},
    {-1.0, -0.6321205588285577, -0.6321205496788025},
    {-1e-08, -9.999999950000001e-09, -9.99999993922529e-09},
    {0.0, 0.0, 0.0},
    {1e-30, 1e-30, 1.0000000031710769e-30},
    {1e-10, 1.00000000005e-10, 1.000000013351432e-10},
    {1e-05, 1.0000050000166668e-05, 1.0000049769587349e-05},
    {0.25, 0.2840254166877415, 0.2840254306793213},
    {1.0, 1.718281828459045, 1.7182817459106445},
    {20.0, 485165194.4097903, 485165184.0},
    {100.0, 2.6881171418161356e+43, INFINITY},
    {1000.0, INFINITY, INFINITY},
    {INFINITY, INFINITY, INFINITY},
    {NAN, NAN, NAN},
};

static bool within_ulp(double got, double want, tl_dtype dt) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return got == want;
  double ulp = dt == TL_F32 ? nextafterf((float)fabs(want), INFINITY) - (float)fabs(want)
                            : nextafter(fabs(want), INFINITY) - fabs(want);
  return fabs(got - want) <= ulp;
}

TEST(ops_expm1_against_numpy) {
  enum { N = sizeof expm1_table / sizeof expm1_table[0] };
  static const char *const backends[] = {"cpu", "interp"};
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 2; d++) {
      tl_dtype dt = d ? TL_F64 : TL_F32;
      tl_ctx *ctx = tl_init();
      CHECK(tl_set_backend(ctx, backends[b]) == TL_OK);
      double x[N], y[N], folded;
      for (int i = 0; i < N; i++) x[i] = expm1_table[i][0];
      CHECK(tl_to_host(tl_cast(tl_expm1(tl_cast(f64(ctx, 1, (int64_t[]){N}, x), dt)), TL_F64), y, sizeof y) == TL_OK);
      for (int i = 0; i < N; i++) {
        double want = expm1_table[i][d ? 1 : 2];
        CHECK(tl_item(tl_expm1(tl_scalar(ctx, dt, x[i])), &folded) == TL_OK);
        if (!within_ulp(y[i], want, dt) || !within_ulp(folded, want, dt))
          tl_test_fail(__FILE__, __LINE__, "%s %s expm1(%g) = %.17g, folded %.17g; numpy %.17g", backends[b],
                       tl_dtype_name(dt), x[i], y[i], folded, want);
      }
      TEST_SHUTDOWN(ctx);
    }
}

/* ---- gradients ----------------------------------------------------------------------------- */
static tl_tensor *g_gather(tl_tensor *x, tl_ctx *ctx) {
  return tl_gather(x, 1, i64(ctx, 2, (int64_t[]){3, 3}, (int64_t[]){0, 3, 3, 2, 2, 1, 1, 0, 0}));
}
static tl_tensor *g_scatter_self(tl_tensor *x, tl_ctx *ctx) {
  tl_tensor *src = f64(ctx, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
  return tl_scatter(x, 1, i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3, 0, 0, 2, 1}), src);
}
static tl_tensor *g_scatter_src(tl_tensor *x, tl_ctx *ctx) { /* x is src [3, 4] */
  tl_tensor *self = tl_ones(ctx, TL_F64, 2, (int64_t[]){3, 4});
  return tl_scatter(self, 1, i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3, 0, 2, 2, 1}), tl_mul(x, x));
}
static tl_tensor *g_scatter_add_self(tl_tensor *x, tl_ctx *ctx) {
  tl_tensor *src = f64(ctx, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
  return tl_mul(tl_scatter_add(x, 1, i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3, 0, 0, 2, 1}), src), x);
}
static tl_tensor *g_scatter_add_src(tl_tensor *x, tl_ctx *ctx) { /* x is src [3, 4]; repeated targets add */
  tl_tensor *self = tl_ones(ctx, TL_F64, 2, (int64_t[]){3, 4});
  tl_tensor *r = tl_scatter_add(self, 1, i64(ctx, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3, 0, 0, 2, 1}), tl_mul(x, x));
  return tl_mul(r, r);
}
static tl_tensor *g_logsumexp(tl_tensor *x, tl_ctx *ctx) {
  (void)ctx;
  return tl_logsumexp(x, 1, (int[]){1}, 0);
}
static tl_tensor *g_logsumexp_all(tl_tensor *x, tl_ctx *ctx) {
  (void)ctx;
  return tl_logsumexp(tl_mul_scalar(x, 50), 0, NULL, 1);
}
static tl_tensor *g_expm1(tl_tensor *x, tl_ctx *ctx) { (void)ctx; return tl_expm1(x); }
static tl_tensor *g_erf(tl_tensor *x, tl_ctx *ctx) { (void)ctx; return tl_erf(x); }
static tl_tensor *g_roll(tl_tensor *x, tl_ctx *ctx) {
  (void)ctx;
  return tl_roll(x, 2, (int64_t[]){1, -1}, (int[]){0, 1});
}
static tl_tensor *g_repeat(tl_tensor *x, tl_ctx *ctx) {
  (void)ctx;
  return tl_repeat(x, 3, (int64_t[]){2, 1, 3});
}

TEST(ops_index_gradients) {
  tl_ctx *ctx = tl_init();
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = sin(0.9 * i + 0.2) * 1.5;
  const int64_t s34[] = {3, 4};
  gradcheck(ctx, "gather", g_gather, 2, s34, v);
  gradcheck(ctx, "scatter (self)", g_scatter_self, 2, s34, v);
  gradcheck(ctx, "scatter (src)", g_scatter_src, 2, s34, v);
  gradcheck(ctx, "scatter_add (self)", g_scatter_add_self, 2, s34, v);
  gradcheck(ctx, "scatter_add (src)", g_scatter_add_src, 2, s34, v);
  gradcheck(ctx, "logsumexp", g_logsumexp, 2, s34, v);
  gradcheck(ctx, "logsumexp of large values", g_logsumexp_all, 2, s34, v);
  gradcheck(ctx, "expm1", g_expm1, 2, s34, v);
  gradcheck(ctx, "erf", g_erf, 2, s34, v);
  gradcheck(ctx, "roll", g_roll, 2, s34, v);
  gradcheck(ctx, "repeat", g_repeat, 2, s34, v);
  TEST_SHUTDOWN(ctx);
}

/* ---- bad input ------------------------------------------------------------------------------ */
TEST(ops_index_errors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = tl_zeros(ctx, TL_F32, 2, (int64_t[]){3, 4});
  tl_tensor *idx = i64(ctx, 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, 4, 0});
  FAILS(tl_gather(x, 1, idx), TL_ERR_RANGE, "gather: index 4 at [1, 0] is out of range for axis 1 of size 4");
  FAILS(tl_gather(x, 0, i64(ctx, 1, (int64_t[]){1}, (int64_t[]){-1})), TL_ERR_SHAPE, "gather: the index [1] and the tensor [3, 4] differ in their number of axes");
  FAILS(tl_gather(x, 2, idx), TL_ERR_AXIS, "gather: axis 2 is out of range");
  FAILS(tl_gather(x, 1, tl_cast(idx, TL_F32)), TL_ERR_DTYPE, "gather: the index must be an integer tensor");
  FAILS(tl_gather(x, 0, tl_zeros(ctx, TL_I64, 2, (int64_t[]){1, 5})), TL_ERR_SHAPE,
        "index [1, 5] is larger than the tensor [3, 4] along axis 1");
  FAILS(tl_gather(x, 0, i64(ctx, 2, (int64_t[]){1, 1}, (int64_t[]){-1})), TL_ERR_RANGE, "index -1 at [0, 0]");
  tl_tensor *src = tl_ones(ctx, TL_F32, 2, (int64_t[]){1, 2});
  FAILS(tl_scatter(x, 1, idx, src), TL_ERR_SHAPE, "larger than src [1, 2] along axis 0");
  FAILS(tl_scatter(x, 0, i64(ctx, 2, (int64_t[]){1, 2}, (int64_t[]){0, 3}), src), TL_ERR_RANGE,
        "scatter: index 3 at [0, 1] is out of range for axis 0 of size 3");
  FAILS(tl_argsort(x, 2, 0), TL_ERR_AXIS, "argsort: axis 2");
  FAILS(tl_logsumexp(x, 1, (int[]){5}, 0), TL_ERR_AXIS, "logsumexp:");
  FAILS(tl_any(x, 1, (int[]){-3}, 0), TL_ERR_AXIS, "any:");
  FAILS(tl_roll(x, 2, (int64_t[]){1, 1}, NULL), TL_ERR_ARG, "roll:");
  FAILS(tl_roll(x, 1, (int64_t[]){1}, (int[]){2}), TL_ERR_AXIS, "roll: axis 2");
  FAILS(tl_repeat(x, 1, (int64_t[]){2}), TL_ERR_ARG, "repeat: 1 count for a tensor of 2 axes");
  FAILS(tl_repeat(x, 2, (int64_t[]){2, -1}), TL_ERR_ARG, "repeat: count 1 is -1");
  TEST_SHUTDOWN(ctx);
}
