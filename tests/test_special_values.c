/* test_special_values.c — NaN, infinities, subnormals, empty axes and out-of-range
 * values, on both backends: argmax/argmin give the first NaN's index (numpy, torch);
 * max, min, argmax and argmin of an empty axis are errors (numpy's ValueError); exp,
 * sigmoid and softmax keep subnormal results (IEEE, as torch: exp(-100) is 3.8e-44,
 * not 0); gelu is x Phi(x) with erf (torch's default), gelu_tanh the approximation;
 * a double written into an integer tensor saturates; log1p keeps what log(1 + x) loses.
 * Expected values come from numpy by hand, from Python's math.erf (tables below) or from libm in double here. */
#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/scalar.h"
#include "test.h"
#include "tl.h"

static const char *const backends[] = {"cpu", "interp"};

static tl_ctx *ctx_on(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  return ctx;
}

/* the n values of t as doubles (t released); false if it failed */
static bool values(tl_tensor *t, double *out, int64_t n) {
  tl_tensor *d = t ? tl_cast(t, TL_F64) : NULL;
  bool ok = d && tl_numel(d) == n && tl_to_host(d, out, sizeof(double) * (size_t)n) == TL_OK;
  tl_release(d);
  tl_release(t);
  return ok;
}

static tl_tensor *vec_f(tl_ctx *ctx, tl_dtype dt, int64_t n, const double *v) {
  float f[64];
  for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
  return tl_from_data(ctx, dt, 1, &n, dt == TL_F32 ? (const void *)f : (const void *)v);
}

/* distance in units in the last place of want's f32 (or f64) neighbourhood; equal
 * NaNs and equal infinities (want rounded to the dtype) are 0 apart */
static double ulps(double got, double want, tl_dtype dt) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : INFINITY;
  double w = dt == TL_F32 ? (double)(float)want : want; /* beyond FLT_MAX: inf */
  if (isinf(w) || isinf(got)) return got == w ? 0 : INFINITY;
  double up = dt == TL_F32 ? (double)nextafterf((float)fabs(w), INFINITY) : nextafter(fabs(w), INFINITY);
  return fabs(got - want) / (up - fabs(w));
}

/* ---- argmax and argmin with NaN ---------------------------------------------------- */
/* rows of 5 and what numpy's argmax and argmin give for each (the first NaN wins both;
 * without NaN, the first maximum or minimum; checked with numpy 1.24) */
static const struct {
  double v[5];
  int64_t amax, amin;
} nan_rows[] = {
    {{1, NAN, 3, NAN, 0}, 1, 1},
    {{NAN, 1, 2, 3, 4}, 0, 0},
    {{4, 3, 2, 1, NAN}, 4, 4},
    {{2, 5, 5, -1, -1}, 1, 3},
    {{-INFINITY, INFINITY, INFINITY, -INFINITY, 0}, 1, 0},
    {{-0.0, 0.0, -0.0, 0.0, 0.0}, 0, 0}, /* -0 == 0: a tie, the first wins */
};

TEST(special_argmax_argmin_take_the_first_nan) {
  enum { R = sizeof nan_rows / sizeof nan_rows[0] };
  double flat[R * 5];
  for (int r = 0; r < R; r++) memcpy(flat + r * 5, nan_rows[r].v, sizeof nan_rows[r].v);
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 2; d++) {
      tl_dtype dt = d ? TL_F64 : TL_F32;
      tl_ctx *ctx = ctx_on(backends[b]);
      float f[R * 5];
      for (int i = 0; i < R * 5; i++) f[i] = (float)flat[i];
      tl_tensor *m = tl_from_data(ctx, dt, 2, (int64_t[]){R, 5}, dt == TL_F32 ? (const void *)f : (const void *)flat);
      double amax[R], amin[R], col[5], colk[5];
      CHECK(values(tl_argmax(m, 1, 0), amax, R));
      CHECK(values(tl_argmin(m, -1, 0), amin, R));
      for (int r = 0; r < R; r++) {
        if ((int64_t)amax[r] != nan_rows[r].amax || (int64_t)amin[r] != nan_rows[r].amin)
          tl_test_fail(__FILE__, __LINE__, "%s %s row %d: argmax %g argmin %g, numpy %lld %lld", backends[b],
                       tl_dtype_name(dt), r, amax[r], amin[r], (long long)nan_rows[r].amax, (long long)nan_rows[r].amin);
      }
      /* down the columns (numpy: argmax(axis=0) of the rows above), kept as [1, 5] */
      CHECK(values(tl_argmax(m, 0, 0), col, 5));
      CHECK(values(tl_argmin(m, 0, 1), colk, 5));
      static const double want_max[5] = {1, 0, 4, 0, 2}, want_min[5] = {1, 0, 5, 0, 2};
      for (int i = 0; i < 5; i++) {
        CHECK_NEAR(col[i], want_max[i], 0);
        CHECK_NEAR(colk[i], want_min[i], 0);
      }
      tl_release(m);
      TEST_SHUTDOWN(ctx);
    }
}

/* integers have no NaN: the ties and the extremes of the dtype still take the first */
TEST(special_argmax_of_integers_is_unchanged) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = ctx_on(backends[b]);
    int64_t v[5] = {INT64_MIN, 7, INT64_MAX, INT64_MAX, INT64_MIN};
    tl_tensor *t = tl_from_data(ctx, TL_I64, 1, (int64_t[]){5}, v);
    double a[1], c[1];
    CHECK(values(tl_argmax(t, 0, 0), a, 1));
    CHECK(values(tl_argmin(t, 0, 0), c, 1));
    CHECK_NEAR(a[0], 2, 0);
    CHECK_NEAR(c[0], 0, 0);
    tl_release(t);
    TEST_SHUTDOWN(ctx);
  }
}

/* ---- reductions over an empty axis ---------------------------------------------------- */
static void expect_empty_error(tl_ctx *ctx, tl_tensor *r, const char *msg) {
  CHECK(r == NULL);
  CHECK_INT(tl_last_status(ctx), TL_ERR_SHAPE);
  CHECK_STR(tl_last_error(ctx), msg);
  tl_release(r);
}

TEST(special_max_min_argmax_of_an_empty_axis_fail) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = ctx_on(backends[b]);
    tl_tensor *rows0 = tl_zeros(ctx, TL_F32, 2, (int64_t[]){0, 3}), *cols0 = tl_zeros(ctx, TL_I64, 2, (int64_t[]){3, 0});
    tl_tensor *none = tl_zeros(ctx, TL_F64, 1, (int64_t[]){0});
    int ax0 = 0, ax1 = 1;
    /* numpy: "zero-size array to reduction operation maximum which has no identity" */
    expect_empty_error(ctx, tl_max(rows0, 1, &ax0, 0), "max: axis 0 has length 0, and the maximum of no elements is undefined");
    expect_empty_error(ctx, tl_max(rows0, 0, NULL, 0), "max: axis 0 has length 0, and the maximum of no elements is undefined");
    expect_empty_error(ctx, tl_min(cols0, 1, &ax1, 1), "min: axis 1 has length 0, and the minimum of no elements is undefined");
    expect_empty_error(ctx, tl_min(none, 0, NULL, 0), "min: axis 0 has length 0, and the minimum of no elements is undefined");
    /* numpy: "attempt to get argmax of an empty sequence" */
    expect_empty_error(ctx, tl_argmax(rows0, 0, 0), "argmax: axis 0 has length 0, and the argmax of no elements is undefined");
    expect_empty_error(ctx, tl_argmin(cols0, -1, 0), "argmin: axis 1 has length 0, and the argmin of no elements is undefined");
    expect_empty_error(ctx, tl_argmax(none, 0, 1), "argmax: axis 0 has length 0, and the argmax of no elements is undefined");
    /* a non-empty axis of an empty tensor is fine (numpy: shape (0,)), and so are the
     * reductions with an identity: sum 0, prod 1 */
    tl_tensor *m = tl_max(rows0, 1, &ax1, 0), *a = tl_argmax(rows0, 1, 0);
    CHECK(m && tl_ndim(m) == 1 && tl_dim(m, 0) == 0 && tl_realize(m) == TL_OK);
    CHECK(a && tl_ndim(a) == 1 && tl_dim(a, 0) == 0 && tl_realize(a) == TL_OK);
    double s[3], p[3];
    CHECK(values(tl_sum(cols0, 1, &ax1, 0), s, 3));
    CHECK(values(tl_prod(cols0, 1, &ax1, 0), p, 3));
    for (int i = 0; i < 3; i++) CHECK(s[i] == 0 && p[i] == 1);
    tl_release(m), tl_release(a), tl_release(rows0), tl_release(cols0), tl_release(none);
    TEST_SHUTDOWN(ctx);
  }
}

/* ---- subnormals ---------------------------------------------------------------------- */
/* exp at the ends of f32: subnormal results, the last values before 0 and inf, values
 * the old polynomial clamped (exp(-87.2) was exp(-87), exp(88.5) was exp(88)) */
static const double exp_inputs[] = {-100,       -87.2,    -87.5,   -95,       -103.9,   -103.97,  -103.98,
                                    -104,       -110,     88.5,    88.7,      88.72283, 88.72285, -87.33654,
                                    -INFINITY,  INFINITY, NAN,     0,         -0.0,     1e-40,    -1e-45,
                                    -0.3465736, 0.3465736, 20.5,   -20.5,     1,        -1};

TEST(special_exp_keeps_subnormals_on_both_backends) {
  enum { N = sizeof exp_inputs / sizeof exp_inputs[0] };
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 2; d++) {
      tl_dtype dt = d ? TL_F64 : TL_F32;
      tl_ctx *ctx = ctx_on(backends[b]);
      double in[N], got[N];
      for (int i = 0; i < N; i++) in[i] = dt == TL_F32 ? (double)(float)exp_inputs[i] : exp_inputs[i];
      CHECK(values(tl_exp(vec_f(ctx, dt, N, in)), got, N));
      for (int i = 0; i < N; i++) {
        double want = exp(in[i]); /* libm in double: the f32 result is its rounding */
        if (ulps(got[i], want, dt) > 1)
          tl_test_fail(__FILE__, __LINE__, "%s %s exp(%.9g) = %.9g, libm %.9g", backends[b], tl_dtype_name(dt), in[i],
                       got[i], want);
      }
      /* f64: exp(-740) is subnormal too */
      if (dt == TL_F64) {
        double x[3] = {-740, -745.1, -708.5}, y[3];
        CHECK(values(tl_exp(vec_f(ctx, TL_F64, 3, x)), y, 3));
        for (int i = 0; i < 3; i++) CHECK(ulps(y[i], exp(x[i]), TL_F64) <= 1);
        CHECK(y[0] > 0 && y[0] < DBL_MIN);
      }
      TEST_SHUTDOWN(ctx);
    }
}

/* sigmoid far left is e^x, softmax of a spread of 100 keeps e^-100 */
TEST(special_sigmoid_and_softmax_keep_subnormals) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = ctx_on(backends[b]);
    double x[6] = {-100, -90, -103, -10, 0, 30}, s[6], sm[2];
    CHECK(values(tl_sigmoid(vec_f(ctx, TL_F32, 6, x)), s, 6));
    for (int i = 0; i < 6; i++) {
      double want = 1 / (1 + exp(-x[i]));
      if (ulps(s[i], want, TL_F32) > 1)
        tl_test_fail(__FILE__, __LINE__, "%s sigmoid(%g) = %.9g, want %.9g", backends[b], x[i], s[i], want);
    }
    CHECK(values(tl_softmax(vec_f(ctx, TL_F32, 2, (double[]){0, -100}), 0), sm, 2));
    CHECK(sm[0] == 1 && ulps(sm[1], exp(-100.0), TL_F32) <= 1);
    double y[3] = {-740, -800, 40}, ys[3];
    CHECK(values(tl_sigmoid(vec_f(ctx, TL_F64, 3, y)), ys, 3));
    CHECK(ulps(ys[0], exp(-740.0), TL_F64) <= 1 && ys[1] == 0 && ys[2] == 1 / (1 + exp(-40.0)));
    TEST_SHUTDOWN(ctx);
  }
}

/* subnormal inputs pass through kernels unflushed (no FTZ/DAZ): a product, a sum, a max */
TEST(special_subnormal_inputs_are_not_flushed) {
  double v[4] = {1e-40, -1e-42, FLT_TRUE_MIN, 1.1e-38};
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = ctx_on(backends[b]);
    tl_tensor *x = vec_f(ctx, TL_F32, 4, v), *dx = vec_f(ctx, TL_F64, 4, (double[]){5e-324, 1e-310, -2e-308, 1});
    double p[4], s[1], m[1], q[4];
    CHECK(values(tl_mul(x, tl_scalar(ctx, TL_F32, 0.5)), p, 4));
    for (int i = 0; i < 4; i++) CHECK(p[i] == (double)((float)v[i] * 0.5f));
    CHECK(values(tl_sum(x, 0, NULL, 0), s, 1));
    CHECK(s[0] == (double)((float)v[0] + (float)v[1] + (float)v[2] + (float)v[3]));
    CHECK(values(tl_max(x, 0, NULL, 0), m, 1));
    CHECK(m[0] == (double)(float)1.1e-38);
    CHECK(values(tl_mul(dx, tl_scalar(ctx, TL_F64, 3)), q, 4));
    CHECK(q[0] == 3 * 5e-324 && q[1] == 3e-310 && q[2] == 3 * -2e-308);
    tl_release(x), tl_release(dx);
    TEST_SHUTDOWN(ctx);
  }
}

/* ---- erf and gelu ---------------------------------------------------------------------- */
/* x (exact in f32) and Python's math.erf(x) */
static const struct {
  float x;
  double erf;
} erf_table[] = {
    {0.0f, 0}, {1e-30f, 1.1283791706736896e-30}, {-1e-30f, -1.1283791706736896e-30},
    {1.00000001e-10f, 1.1283791821609903e-10}, {0.00100000005f, 0.0011283788445643173},
    {-0.0500000007f, -0.056371978635625472}, {0.100000001f, 0.11246291768297051}, {0.5f, 0.52049987781304652},
    {-0.75f, -0.71115563365351508}, {0.889999986f, 0.79184323950408508}, {0.899999976f, 0.79690820045496846},
    {-0.899999976f, -0.79690820045496846}, {0.910000026f, 0.80188283869445398}, {1.0f, 0.84270079294971489},
    {-1.25f, -0.92290012825645817}, {1.5f, 0.96610514647531076}, {2.0f, 0.99532226501895271},
    {-2.5f, -0.99959304798255499}, {3.0f, 0.99997790950300136}, {3.5f, 0.99999925690162761},
    {-3.9000001f, -0.99999996520777812}, {3.92000008f, 0.99999997038831701}, {4.0f, 0.99999998458274209},
    {5.0f, 0.99999999999846256}, {-10.0f, -1}, {30.0f, 1},
};

/* the prelude's f32 erf (kernels, folding and the interpreter use it): within 1.5 ulp
 * of math.erf in the table, and of libm's erf on a sweep of 200,000 values over
 * [-6, 6] and 1e-38..1 (an exhaustive run over every f32 gave 1.2 ulp at most) */
TEST(special_erf_against_math_erf) {
  for (size_t i = 0; i < sizeof erf_table / sizeof erf_table[0]; i++) {
    double got = tl_erff(erf_table[i].x);
    if (ulps(got, erf_table[i].erf, TL_F32) > 1.5)
      tl_test_fail(__FILE__, __LINE__, "erf(%.9g) = %.9g, math.erf %.17g", (double)erf_table[i].x, got, erf_table[i].erf);
  }
  double worst = 0;
  for (int i = 0; i <= 100000; i++) {
    float a = -6.0f + 12.0f * (float)i / 100000, b = (float)pow(10, -38.0 + 38.0 * i / 100000);
    worst = fmax(worst, fmax(ulps(tl_erff(a), erf(a), TL_F32), ulps(tl_erff(-b), erf(-b), TL_F32)));
  }
  CHECK(worst <= 1.5);
  CHECK(isnan(tl_erff(NAN)) && tl_erff(INFINITY) == 1 && tl_erff(-INFINITY) == -1);
  CHECK(tl_erff(-0.0f) == 0 && signbit(tl_erff(-0.0f)));
}

/* x, gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), its derivative Phi(x) + x phi(x), and the
 * tanh approximation, from Python's math module */
static const double gelu_table[][4] = {
    {-3.0, -0.0040496940948903104, -0.011945647204183918, -0.0036373920817729943},
    {-1.0, -0.15865525393145707, -0.083315470587686291, -0.15880800939172324},
    {-0.5, -0.15426876936299344, 0.13250487534383712, -0.15428599017485606},
    {0.0, 0, 0.5, 0},
    {0.25, 0.14967658142073093, 0.69537335488363605, 0.149675350701685},
    {1.0, 0.84134474606854293, 1.0833154705876864, 0.84119199060827676},
    {2.0, 1.9544997361036416, 1.0852318010781969, 1.954597694087775},
    {3.5, 3.4991857982233756, 1.0028217603536247, 3.4993838023446262},
};

TEST(special_gelu_is_exact_and_gelu_tanh_approximates) {
  enum { N = sizeof gelu_table / sizeof gelu_table[0] };
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 2; d++) {
      tl_dtype dt = d ? TL_F64 : TL_F32;
      double tol = dt == TL_F32 ? 2e-7 : 1e-15, x[N], y[N], yt[N], g[N];
      for (int i = 0; i < N; i++) x[i] = gelu_table[i][0];
      tl_ctx *ctx = ctx_on(backends[b]);
      tl_tensor *t = vec_f(ctx, dt, N, x);
      CHECK(tl_set_requires_grad(t, 1) == TL_OK);
      tl_tensor *out = tl_gelu(t);
      CHECK(tl_backward(tl_sum(out, 0, NULL, 0), NULL) == TL_OK);
      CHECK(values(out, y, N));
      CHECK(values(tl_gelu_tanh(t), yt, N));
      CHECK(values(tl_grad(t), g, N));
      for (int i = 0; i < N; i++) {
        const double *w = gelu_table[i];
        if (fabs(y[i] - w[1]) > tol * (1 + fabs(w[1])) || fabs(g[i] - w[2]) > 4 * tol * (1 + fabs(w[2])) ||
            fabs(yt[i] - w[3]) > tol * (1 + fabs(w[3])))
          tl_test_fail(__FILE__, __LINE__, "%s %s x = %g: gelu %.17g grad %.17g gelu_tanh %.17g; want %.17g %.17g %.17g",
                       backends[b], tl_dtype_name(dt), x[i], y[i], g[i], yt[i], w[1], w[2], w[3]);
      }
      tl_release(t);
      TEST_SHUTDOWN(ctx);
    }
}

/* ---- log1p ------------------------------------------------------------------------------ */
/* x, numpy's log1p(x) in f64 and in f32 (of x rounded to f32), numpy 1.24; the gradient
 * is 1 / (1 + x). log(1 + x) loses x below 2^-53 (f64) and 2^-24 (f32): log1p keeps it */
static const double log1p_table[][3] = {
    {-1.0, -INFINITY, -INFINITY},
    {-0.99, -4.60517018598809, -4.605171203613281},
    {-0.5, -0.6931471805599453, -0.6931471824645996},
    {-1e-08, -1.0000000050000001e-08, -9.99999993922529e-09},
    {0.0, 0.0, 0.0},
    {1e-30, 1e-30, 1.0000000031710769e-30},
    {1e-10, 9.999999999500001e-11, 1.000000013351432e-10},
    {1e-05, 9.999950000333332e-06, 9.999949725170154e-06},
    {0.25, 0.22314355131420976, 0.2231435477733612},
    {1.0, 0.6931471805599453, 0.6931471824645996},
    {3.0, 1.3862943611198906, 1.3862943649291992},
    {1000000.0, 13.815511557963774, 13.815511703491211},
    {INFINITY, INFINITY, INFINITY},
    {-2.0, NAN, NAN},
    {NAN, NAN, NAN},
};

/* log1p on both backends and dtypes, from kernels and from constant folding (a 0-d
 * constant folds), within 1 ulp of numpy; -0 stays -0; its gradient is 1 / (1 + x) */
TEST(special_log1p_against_numpy) {
  enum { N = sizeof log1p_table / sizeof log1p_table[0] };
  for (int b = 0; b < 2; b++)
    for (int d = 0; d < 2; d++) {
      tl_dtype dt = d ? TL_F64 : TL_F32;
      tl_ctx *ctx = ctx_on(backends[b]);
      double x[N], y[N], folded, neg_zero;
      for (int i = 0; i < N; i++) x[i] = log1p_table[i][0];
      CHECK(values(tl_log1p(vec_f(ctx, dt, N, x)), y, N));
      for (int i = 0; i < N; i++) {
        double want = log1p_table[i][d ? 1 : 2];
        tl_tensor *c = tl_scalar(ctx, dt, x[i]);
        CHECK(values(tl_log1p(c), &folded, 1));
        tl_release(c);
        if (ulps(y[i], want, dt) > 1 || ulps(folded, want, dt) > 1)
          tl_test_fail(__FILE__, __LINE__, "%s %s log1p(%g) = %.17g, folded %.17g; numpy %.17g", backends[b],
                       tl_dtype_name(dt), x[i], y[i], folded, want);
      }
      CHECK(values(tl_log1p(vec_f(ctx, dt, 1, (double[]){-0.0})), &neg_zero, 1));
      CHECK(neg_zero == 0 && signbit(neg_zero));
      double gx[4] = {-0.5, 0.0, 1e-10, 3.0}, g[4], gwant[4] = {2.0, 1.0, 0.9999999999, 0.25};
      tl_tensor *t = vec_f(ctx, dt, 4, gx);
      CHECK(tl_set_requires_grad(t, 1) == TL_OK);
      CHECK(tl_backward(tl_sum(tl_log1p(t), 0, NULL, 0), NULL) == TL_OK);
      CHECK(values(tl_grad(t), g, 4));
      for (int i = 0; i < 4; i++) CHECK(ulps(g[i], gwant[i], dt) <= 1);
      tl_release(t);
      TEST_SHUTDOWN(ctx);
    }
}

/* ---- doubles written into integer tensors saturate ------------------------------------- */
/* arange computes each value in double and stores it in the tensor's dtype: past the
 * integer range that was a C cast (undefined; x86 gave INT_MIN). The same rule as
 * `as`: saturate, NaN gives 0. */
TEST(special_arange_and_constants_saturate_in_integer_dtypes) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = ctx_on(backends[b]);
    double a[4], c[4], k[3];
    CHECK(values(tl_arange(ctx, TL_I32, 2147483646, 2147483650, 1), a, 4));
    CHECK(a[0] == 2147483646 && a[1] == 2147483647 && a[2] == 2147483647 && a[3] == 2147483647);
    CHECK(values(tl_arange(ctx, TL_I64, -9.2e18, -9.4e18, -0.05e18), c, 4));
    CHECK(c[0] == -9.2e18 && c[1] == (double)INT64_MIN && c[3] == (double)INT64_MIN); /* -9.25e18 is below -2^63 */
    CHECK(values(tl_full(ctx, TL_I32, 1, (int64_t[]){1}, 1e30), k, 1) && k[0] == 2147483647);
    CHECK(values(tl_scalar(ctx, TL_I64, NAN), k + 1, 1) && k[1] == 0);
    CHECK(values(tl_pad(tl_zeros(ctx, TL_I32, 1, (int64_t[]){1}), (int64_t[]){1}, (int64_t[]){1}, -1e30), k, 3));
    CHECK(k[0] == -2147483648.0 && k[1] == 0 && k[2] == -2147483648.0);
    TEST_SHUTDOWN(ctx);
  }
}
