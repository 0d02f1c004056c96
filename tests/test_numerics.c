/* test_numerics.c — numeric rules both backends must keep: float -> integer casts
 * saturate (NaN gives 0, as Rust's `as`), integer casts wrap or round once, and f32
 * sums stay accurate over 10^7..10^8 terms. Expectations are written by hand or
 * computed here in double. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

static const char *const backends[] = {"cpu", "interp"};

/* ---- float -> integer casts ---------------------------------------------------------- */
typedef struct {
  double v;
  int64_t i32, i64; /* what `v as i32`, `v as i64` must give */
  int b;            /* v as bool: v != 0 (NaN is not 0) */
} cast_case;

#define I32MAX 2147483647LL
#define I32MIN (-2147483647LL - 1)
#define I64MAX 9223372036854775807LL
#define I64MIN (-9223372036854775807LL - 1)

/* values exact in both f32 and f64 (1e30, 1e19 round in f32, still far out of range) */
static const cast_case both[] = {
    {1e30, I32MAX, I64MAX, 1},
    {-1e30, I32MIN, I64MIN, 1},
    {2.5, 2, 2, 1},
    {-2.5, -2, -2, 1},
    {0.99, 0, 0, 1},
    {-0.99, 0, 0, 1},
    {-0.0, 0, 0, 0},
    {NAN, 0, 0, 1},
    {INFINITY, I32MAX, I64MAX, 1},
    {-INFINITY, I32MIN, I64MIN, 1},
    {2147483648.0, I32MAX, 2147483648LL, 1},        /* 2^31: just beyond i32 */
    {2147483520.0, 2147483520LL, 2147483520LL, 1},  /* the largest f32 below 2^31 */
    {-2147483648.0, I32MIN, -2147483648LL, 1},      /* -2^31: exactly i32's minimum */
    {-2147483904.0, I32MIN, -2147483904LL, 1},      /* the next f32 below -2^31 */
    {3e9, I32MAX, 3000000000LL, 1},
    {-3e9, I32MIN, -3000000000LL, 1},
    {9223372036854775808.0, I32MAX, I64MAX, 1},     /* 2^63: just beyond i64 */
    {9223371487098961920.0, I32MAX, 9223371487098961920LL, 1}, /* largest f32 below 2^63 */
    {-9223372036854775808.0, I32MIN, I64MIN, 1},    /* -2^63: exactly i64's minimum */
    {-9223373136366403584.0, I32MIN, I64MIN, 1},    /* the next f32 below -2^63 */
    {1e19, I32MAX, I64MAX, 1},
    {-1e19, I32MIN, I64MIN, 1},
};
/* values only f64 holds */
static const cast_case f64_only[] = {
    {2147483647.0, I32MAX, 2147483647LL, 1},
    {2147483647.75, I32MAX, 2147483647LL, 1},
    {-2147483648.75, I32MIN, -2147483648LL, 1},
    {-2147483649.0, I32MIN, -2147483649LL, 1},
    {4294967296.5, I32MAX, 4294967296LL, 1},
    {9223372036854774784.0, I32MAX, 9223372036854774784LL, 1}, /* largest f64 below 2^63 */
    {-9223372036854777856.0, I32MIN, I64MIN, 1},                /* next f64 below -2^63 */
};

/* casts every value of cases (as f32 or f64 data, and as a folded constant) to
 * i32, i64 and bool on one backend */
static void check_casts(const char *backend, tl_dtype from, const cast_case *cases, int n) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  float f[32];
  double d[32];
  for (int i = 0; i < n; i++) {
    f[i] = (float)cases[i].v;
    d[i] = cases[i].v;
  }
  int64_t len = n;
  tl_tensor *x = tl_from_data(ctx, from, 1, &len, from == TL_F32 ? (void *)f : (void *)d);
  static const tl_dtype to[] = {TL_I32, TL_I64, TL_BOOL};
  for (int k = 0; k < 3; k++) {
    int64_t got[32], folded[32];
    tl_tensor *consts[32];
    /* the same values as constants: cast by the rewriter's folding, not by a kernel */
    for (int i = 0; i < n; i++) consts[i] = tl_cast(tl_full(ctx, from, 0, NULL, cases[i].v), to[k]);
    /* then to i64, to read every result the same way (exact for i32 and bool) */
    CHECK(tl_to_host(tl_cast(tl_cast(x, to[k]), TL_I64), got, sizeof(int64_t) * (size_t)n) == TL_OK);
    CHECK(tl_to_host(tl_cast(tl_stack(n, consts, 0), TL_I64), folded, sizeof(int64_t) * (size_t)n) == TL_OK);
    for (int i = 0; i < n; i++) {
      int64_t want = to[k] == TL_I32 ? cases[i].i32 : to[k] == TL_I64 ? cases[i].i64 : cases[i].b;
      if (got[i] != want || folded[i] != want)
        tl_test_fail(__FILE__, __LINE__, "%s: %.17g as %s from %s: got %lld (constant: %lld), want %lld", backend,
                     cases[i].v, tl_dtype_name(to[k]), tl_dtype_name(from), (long long)got[i],
                     (long long)folded[i], (long long)want);
    }
  }
  TEST_SHUTDOWN(ctx);
}

TEST(numerics_float_to_int_casts_saturate) {
  int nb = (int)(sizeof both / sizeof both[0]), n64 = (int)(sizeof f64_only / sizeof f64_only[0]);
  for (int b = 0; b < 2; b++) {
    check_casts(backends[b], TL_F32, both, nb);
    check_casts(backends[b], TL_F64, both, nb);
    check_casts(backends[b], TL_F64, f64_only, n64);
  }
}

/* the example: [1e30, -1e30, 2.5, -2.5] as i64, inside a fused kernel */
TEST(numerics_cast_saturates_in_a_fused_kernel) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    tl_set_backend(ctx, backends[b]);
    float v[4] = {1e30f, -1e30f, 2.5f, -2.5f};
    tl_tensor *x = tl_from_data(ctx, TL_F32, 1, (int64_t[]){4}, v);
    int64_t got[4];
    CHECK(tl_to_host(tl_cast(tl_mul_scalar(x, 2.0), TL_I64), got, sizeof got) == TL_OK);
    CHECK(got[0] == I64MAX);
    CHECK(got[1] == I64MIN);
    CHECK_INT(got[2], 5);
    CHECK_INT(got[3], -5);
    TEST_SHUTDOWN(ctx);
  }
}

/* Integer casts: to a narrower integer wraps (two's complement, as Rust), to a float
 * rounds once. 2^60 + 2^36 + 1 is just above halfway between two f32 values (2^60 and
 * 2^60 + 2^37): rounded once it goes up; rounded to f64 first, the +1 is lost and the
 * tie then goes to the even 2^60. */
TEST(numerics_integer_casts_wrap_and_round_once) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    tl_set_backend(ctx, backends[b]);
    int64_t v[4] = {(1LL << 40) + 5, -(1LL << 31) - 1, 1LL << 31, (1LL << 60) + (1LL << 36) + 1};
    volatile int64_t big = v[3];
    /* C's conversion rounds once: 2^60 + 2^37 (valgrind's emulation rounds twice, so
     * the expectation is C's own, as the kernels get it) */
    float once = (float)big;
    tl_tensor *x = tl_from_data(ctx, TL_I64, 1, (int64_t[]){4}, v);
    int32_t narrow[4];
    float f[4];
    CHECK(tl_to_host(tl_cast(x, TL_I32), narrow, sizeof narrow) == TL_OK);
    CHECK_INT(narrow[0], 5);
    CHECK_INT(narrow[1], 2147483647);
    CHECK_INT(narrow[2], -2147483647 - 1);
    CHECK(tl_to_host(tl_cast(x, TL_F32), f, sizeof f) == TL_OK);
    CHECK(f[3] == once);
    TEST_SHUTDOWN(ctx);
  }
}

/* ---- accurate f32 sums ---------------------------------------------------------------- */
static void check_rel(const char *what, const char *backend, double got, double want, double tol) {
  if (!(fabs(got - want) <= tol * fabs(want)))
    tl_test_fail(__FILE__, __LINE__, "%s on %s: got %.10g, want %.10g (rel %.3g > %.1g)", what, backend, got, want,
                 fabs(got - want) / fabs(want), tol);
}

/* 0.1 summed 10^7 times: was 1000042.8 (f32 partial sums lose 4e-5) */
TEST(numerics_sum_of_a_constant) {
  tl_ctx *ctx = tl_init();
  int64_t n = 10000000, ones = 100000000;
  double exact = (double)n * (double)0.1f; /* 1000000.0149..., exact in double */
  double s, m;
  tl_tensor *x = tl_full(ctx, TL_F32, 1, &n, 0.1);
  CHECK(tl_item(tl_sum(x, 0, NULL, 0), &s) == TL_OK);
  check_rel("sum of 0.1 x 1e7", "cpu", s, exact, 1e-6);
  CHECK(tl_item(tl_mean(x, 0, NULL, 0), &m) == TL_OK);
  check_rel("mean of 0.1 x 1e7", "cpu", m, (double)0.1f, 1e-6);
  /* ones: an f32 partial sum stops growing at 2^24. 1e8 is split over 256 rows and
   * is exact in f32; 150000001 has no divisor near 256, so one loop (8 SIMD lanes of
   * 1.9e7 each) takes it all, and the exact sum is rounded once to f32 */
  CHECK(tl_item(tl_sum(tl_full(ctx, TL_F32, 1, &ones, 1.0), 0, NULL, 0), &s) == TL_OK);
  CHECK(s == 1e8);
  ones = 150000001;
  CHECK(tl_item(tl_sum(tl_full(ctx, TL_F32, 1, &ones, 1.0), 0, NULL, 0), &s) == TL_OK);
  CHECK(s == (double)(float)ones);
  TEST_SHUTDOWN(ctx);
}

/* data in a buffer, at a length with no divisor near 256 (so not split over cores:
 * one accumulator runs over all of it), as sum and mean, on both backends */
TEST(numerics_sum_of_data) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    tl_set_backend(ctx, backends[b]);
    int64_t n = b == 0 ? 10000019 : 1000003; /* primes; the interpreter is slow */
    float *v = malloc(sizeof(float) * (size_t)n);
    double exact = 0;
    uint64_t r = 12345;
    for (int64_t i = 0; i < n; i++) { /* values in [0.05, 1.05), all positive: no cancellation */
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      v[i] = 0.05f + (float)(r >> 40) * (1.0f / 16777216.0f);
      exact += v[i];
    }
    tl_tensor *x = tl_from_data(ctx, TL_F32, 1, &n, v);
    free(v);
    double s, m;
    CHECK(tl_item(tl_sum(x, 0, NULL, 0), &s) == TL_OK);
    check_rel("sum of data", backends[b], s, exact, 1e-6);
    CHECK(tl_item(tl_mean(x, 0, NULL, 0), &m) == TL_OK);
    check_rel("mean of data", backends[b], m, exact / (double)n, 1e-6);
    TEST_SHUTDOWN(ctx);
  }
}

/* ~10^8 values read through a view (no memory): a period of p values r * 0.001,
 * repeated m times. 1000 x 100000 is split over cores; 1009 x 99001 (no divisor
 * near 256) runs as one loop. The reference is m times the period's sum, in f64. */
TEST(numerics_sum_of_1e8_values) {
  tl_ctx *ctx = tl_init();
  static const int64_t period[2] = {1000, 1009}, times[2] = {100000, 99001};
  for (int c = 0; c < 2; c++) {
    int64_t p = period[c], m = times[c], n = p * m;
    float v[1009];
    double one = 0, s;
    for (int64_t r = 0; r < p; r++) one += v[r] = (float)r * 0.001f;
    tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){1, p}, v);
    x = tl_reshape(tl_expand(x, 2, (int64_t[]){m, p}), 1, &n);
    CHECK(tl_item(tl_sum(x, 0, NULL, 0), &s) == TL_OK);
    check_rel("sum of 1e8 values", "cpu", s, (double)m * one, 1e-6);
  }
  TEST_SHUTDOWN(ctx);
}

/* Sums along an axis are blocked as full sums are, but not split over cores. A block
 * of 128 terms in f32 is 16 terms a SIMD lane in the default build, 128 in a row where
 * kernels are not vectorized (TL_CFLAGS without -fopenmp-simd, as under valgrind, or
 * tcc): 0.1 then comes within about 1e-6, hence 2e-6 here. */
enum { AXIS_TOL_PPM = 2 };

/* every row of 2^21 elements */
TEST(numerics_row_sums) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    tl_set_backend(ctx, backends[b]);
    int64_t shape[2] = {4, b == 0 ? 1 << 21 : 1 << 17};
    float rows[4];
    tl_tensor *x = tl_full(ctx, TL_F32, 2, shape, 0.1);
    CHECK(tl_to_host(tl_sum(x, 1, (int[]){1}, 0), rows, sizeof rows) == TL_OK);
    for (int r = 0; r < 4; r++) check_rel("row sum of 0.1", backends[b], rows[r], (double)shape[1] * (double)0.1f, AXIS_TOL_PPM * 1e-6);
    TEST_SHUTDOWN(ctx);
  }
}

/* the reduced axis that is innermost may be short or strided: summed over axes 0 and
 * 2 of [20000, 2, 50] (50 at a time, 10^6 terms an output) and down the columns of
 * [10^6, 3] (a stride of 3) */
TEST(numerics_sums_over_several_and_strided_axes) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    tl_set_backend(ctx, backends[b]);
    float two[2], three[3];
    tl_tensor *x = tl_full(ctx, TL_F32, 3, (int64_t[]){20000, 2, 50}, 0.1);
    CHECK(tl_to_host(tl_sum(x, 2, (int[]){0, 2}, 0), two, sizeof two) == TL_OK);
    for (int i = 0; i < 2; i++) check_rel("sum over axes 0, 2", backends[b], two[i], 1e6 * (double)0.1f, AXIS_TOL_PPM * 1e-6);
    tl_tensor *y = tl_full(ctx, TL_F32, 2, (int64_t[]){1000000, 3}, 0.1);
    CHECK(tl_to_host(tl_sum(y, 1, (int[]){0}, 0), three, sizeof three) == TL_OK);
    for (int i = 0; i < 3; i++) check_rel("column sum", backends[b], three[i], 1e6 * (double)0.1f, AXIS_TOL_PPM * 1e-6);
    TEST_SHUTDOWN(ctx);
  }
}
