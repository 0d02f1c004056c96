/* test_dtype.c — the dtypes i8 i16 u8 u16 u32 u64 f16 bf16 beside bool i32 i64 f32
 * f64: names and sizes, torch's promotion, integer arithmetic that wraps, Rust's casts
 * (integers wrap, float -> integer saturates with NaN 0, f16/bf16 round to nearest
 * even with overflow to inf), f16 computed in f32. Every check runs on the compiled
 * cpu backend and on the interpreter, and the casts also as folded constants.
 * Expected values: tests/numpy/dtype_expected.py's output (numpy for wrapping and f16,
 * exact Python integers for saturation, exact fractions for bf16), pasted here. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

static const char *const backends[] = {"cpu", "interp"};

TEST(dtype_names_sizes) {
  static const struct {
    tl_dtype d;
    const char *name;
    size_t size;
  } want[] = {{TL_BOOL, "bool", 1}, {TL_I32, "i32", 4}, {TL_I64, "i64", 8},  {TL_F32, "f32", 4},
              {TL_F64, "f64", 8},   {TL_I8, "i8", 1},   {TL_I16, "i16", 2},  {TL_U8, "u8", 1},
              {TL_U16, "u16", 2},   {TL_U32, "u32", 4}, {TL_U64, "u64", 8},  {TL_F16, "f16", 2},
              {TL_BF16, "bf16", 2}};
  CHECK_INT(sizeof want / sizeof want[0], TL_NDTYPES);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CHECK(strcmp(tl_dtype_name(want[i].d), want[i].name) == 0);
    CHECK_INT(tl_dtype_size(want[i].d), want[i].size);
  }
  /* the first five keep their numbers (files and programs built against them) */
  CHECK_INT(TL_BOOL, 0);
  CHECK_INT(TL_F64, 4);
}

/* torch.promote_types, and our decisions where torch has none (tl.h) */
TEST(dtype_promotion_follows_torch) {
  static const tl_dtype cases[][3] = {
      {TL_BOOL, TL_I32, TL_I32}, {TL_I32, TL_I64, TL_I64},  {TL_I64, TL_F32, TL_F32},  {TL_F32, TL_F64, TL_F64},
      {TL_BOOL, TL_F64, TL_F64}, {TL_U8, TL_I8, TL_I16},    {TL_U8, TL_I16, TL_I16},   {TL_I8, TL_U16, TL_I32},
      {TL_U16, TL_I16, TL_I32},  {TL_U32, TL_I32, TL_I64},  {TL_U32, TL_I64, TL_I64},  {TL_U64, TL_I8, TL_I64},
      {TL_U64, TL_I64, TL_I64},  {TL_U8, TL_U32, TL_U32},   {TL_U64, TL_U8, TL_U64},   {TL_I8, TL_I64, TL_I64},
      {TL_BOOL, TL_U8, TL_U8},   {TL_F16, TL_BF16, TL_F32}, {TL_F16, TL_F32, TL_F32},  {TL_BF16, TL_F64, TL_F64},
      {TL_I64, TL_F16, TL_F16},  {TL_U64, TL_BF16, TL_BF16}, {TL_BOOL, TL_F16, TL_F16}, {TL_I32, TL_I32, TL_I32},
  };
  tl_ctx *ctx = tl_init();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int k = 0; k < 2; k++) { /* both orders, through tl_add */
      tl_tensor *a = tl_zeros(ctx, cases[i][k], 1, (int64_t[]){2}), *b = tl_zeros(ctx, cases[i][1 - k], 1, (int64_t[]){2});
      tl_dtype got = tl_get_dtype(tl_add(a, b));
      if (got != cases[i][2])
        tl_test_fail(__FILE__, __LINE__, "%s + %s gives %s, want %s", tl_dtype_name(cases[i][k]),
                     tl_dtype_name(cases[i][1 - k]), tl_dtype_name(got), tl_dtype_name(cases[i][2]));
    }
  TEST_SHUTDOWN(ctx);
}

/* ---- casts ---------------------------------------------------------------------------- */
static const double sat_src[] = {1e30,  -1e30, 300.7, -300.7, 127.9, -128.9, 255.5, -0.5, 65535.9, 70000.0,
                                 4294967295.5, 5e9, 18446744073709551616.0, 1e20, NAN, INFINITY, -INFINITY,
                                 2.5, -2.5, 9.3e18};
enum { NSAT = sizeof sat_src / sizeof sat_src[0] };
static const tl_dtype sat_to[] = {TL_I8, TL_I16, TL_U8, TL_U16, TL_U32, TL_I32, TL_I64};
static const int64_t sat_want[][NSAT] = {
    {127, -128, 127, -128, 127, -128, 127, 0, 127, 127, 127, 127, 127, 127, 0, 127, -128, 2, -2, 127},
    {32767, -32768, 300, -300, 127, -128, 255, 0, 32767, 32767, 32767, 32767, 32767, 32767, 0, 32767, -32768, 2, -2,
     32767},
    {255, 0, 255, 0, 127, 0, 255, 0, 255, 255, 255, 255, 255, 255, 0, 255, 0, 2, 0, 255},
    {65535, 0, 300, 0, 127, 0, 255, 0, 65535, 65535, 65535, 65535, 65535, 65535, 0, 65535, 0, 2, 0, 65535},
    {4294967295LL, 0, 300, 0, 127, 0, 255, 0, 65535, 70000, 4294967295LL, 4294967295LL, 4294967295LL, 4294967295LL, 0,
     4294967295LL, 0, 2, 0, 4294967295LL},
    {2147483647, -2147483647LL - 1, 300, -300, 127, -128, 255, 0, 65535, 70000, 2147483647, 2147483647, 2147483647,
     2147483647, 0, 2147483647, -2147483647LL - 1, 2, -2, 2147483647},
    {INT64_MAX, INT64_MIN, 300, -300, 127, -128, 255, 0, 65535, 70000, 4294967295LL, 5000000000LL, INT64_MAX,
     INT64_MAX, 0, INT64_MAX, INT64_MIN, 2, -2, INT64_MAX},
};
static const uint64_t sat_u64[NSAT] = {18446744073709551615ULL, 0, 300, 0, 127, 0, 255, 0, 65535, 70000,
                                       4294967295ULL, 5000000000ULL, 18446744073709551615ULL,
                                       18446744073709551615ULL, 0, 18446744073709551615ULL, 0, 2, 0,
                                       9300000000000000000ULL};

/* x cast to `to`, by a kernel (from data) and by constant folding (from a constant),
 * read back as u64 bits (through a u64 cast, which wraps: exact for every integer) */
static void cast_both_ways(tl_ctx *ctx, tl_dtype from, const double *src, int n, tl_dtype to, uint64_t *kernel,
                           uint64_t *folded) {
  tl_tensor *x = tl_cast(tl_from_data(ctx, TL_F64, 1, (int64_t[]){n}, src), from);
  CHECK(tl_to_host(tl_cast(tl_cast(x, to), TL_U64), kernel, sizeof(uint64_t) * (size_t)n) == TL_OK);
  tl_tensor *c[32];
  for (int i = 0; i < n; i++) c[i] = tl_cast(tl_cast(tl_full(ctx, TL_F64, 0, NULL, src[i]), from), to);
  CHECK(tl_to_host(tl_cast(tl_stack(n, c, 0), TL_U64), folded, sizeof(uint64_t) * (size_t)n) == TL_OK);
}

static void float_to_int_casts_saturate(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  for (size_t k = 0; k <= sizeof sat_to / sizeof sat_to[0]; k++) {
    tl_dtype to = k < sizeof sat_to / sizeof sat_to[0] ? sat_to[k] : TL_U64;
    uint64_t got[NSAT], folded[NSAT];
    cast_both_ways(ctx, TL_F64, sat_src, NSAT, to, got, folded);
    for (int i = 0; i < NSAT; i++) {
      uint64_t want = to == TL_U64 ? sat_u64[i] : (uint64_t)sat_want[k][i];
      if (got[i] != want || folded[i] != want)
        tl_test_fail(__FILE__, __LINE__, "%s: %.17g as %s: got %llu (constant %llu), want %llu", backend, sat_src[i],
                     tl_dtype_name(to), (unsigned long long)got[i], (unsigned long long)folded[i],
                     (unsigned long long)want);
    }
  }
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_float_to_int_casts_saturate) {
  for (int b = 0; b < 2; b++) float_to_int_casts_saturate(backends[b]);
}

static const double half_src[] = {0.1, 1.0 / 3, 65504.0, 65519.99, 65520.0, 1e-8, 2.98e-8, 5.96e-8, -0.0, NAN,
                                  INFINITY, 1e5, 0.00006103515625, 2049.0, 2051.0, -7.5, 3.0e38, 3.4e38, 1e-40, 9.2e-41};
enum { NHALF = sizeof half_src / sizeof half_src[0] };
static const uint16_t f16_want[NHALF] = {0x2e66, 0x3555, 0x7bff, 0x7bff, 0x7c00, 0x0000, 0x0000, 0x0001, 0x8000, 0x7e00,
                                         0x7c00, 0x7c00, 0x0400, 0x6800, 0x6802, 0xc780, 0x7c00, 0x7c00, 0x0000, 0x0000};
static const uint16_t bf16_want[NHALF] = {0x3dcd, 0x3eab, 0x4780, 0x4780, 0x4780, 0x322c, 0x3300, 0x3380, 0x8000, 0x7fc0,
                                          0x7f80, 0x47c3, 0x3880, 0x4500, 0x4500, 0xc0f0, 0x7f62, 0x7f80, 0x0001, 0x0001};

static void casts_to_f16_bf16_round_to_nearest_even(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  for (int h = 0; h < 2; h++) {
    tl_dtype to = h ? TL_BF16 : TL_F16;
    const uint16_t *want = h ? bf16_want : f16_want;
    uint16_t got[NHALF], folded[NHALF];
    tl_tensor *x = tl_from_data(ctx, TL_F64, 1, (int64_t[]){NHALF}, half_src);
    CHECK(tl_to_host(tl_cast(x, to), got, sizeof got) == TL_OK);
    tl_tensor *c[NHALF];
    for (int i = 0; i < NHALF; i++) c[i] = tl_cast(tl_full(ctx, TL_F64, 0, NULL, half_src[i]), to);
    CHECK(tl_to_host(tl_stack(NHALF, c, 0), folded, sizeof folded) == TL_OK);
    for (int i = 0; i < NHALF; i++)
      /* (folded -0.0 is not compared: tl_stack adds zero-padded pieces, -0 + 0 is +0) */
      if (got[i] != want[i] || (folded[i] != want[i] && i != 8))
        tl_test_fail(__FILE__, __LINE__, "%s: %.17g as %s: bits 0x%04x (constant 0x%04x), want 0x%04x", backend,
                     half_src[i], tl_dtype_name(to), got[i], folded[i], want[i]);
    /* and back to f64 exactly: the bits' own value (f16 0x3555 is 0.333251953125) */
    double back[NHALF];
    CHECK(tl_to_host(tl_cast(tl_cast(x, to), TL_F64), back, sizeof back) == TL_OK);
    if (!h) CHECK(back[1] == 0.333251953125 && back[7] == 5.9604644775390625e-08 && back[13] == 2048.0);
    else CHECK(back[0] == 0.10009765625 && back[18] == 9.183549615799121e-41 && back[4] == 65536.0);
    CHECK(isnan(back[9]) && isinf(back[10]) && signbit(back[8]));
  }
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_casts_to_f16_bf16_round_to_nearest_even) {
  for (int b = 0; b < 2; b++) casts_to_f16_bf16_round_to_nearest_even(backends[b]);
}

static const int64_t wrap_src[] = {300, -129, 65537, -1, 4294967297LL, INT64_MIN, 127, 200};
enum { NWRAP = sizeof wrap_src / sizeof wrap_src[0] };
static const tl_dtype wrap_to[] = {TL_I8, TL_I16, TL_U8, TL_U16, TL_I32, TL_U32};
static const int64_t wrap_want[][NWRAP] = {
    {44, 127, 1, -1, 1, 0, 127, -56},       {300, -129, 1, -1, 1, 0, 127, 200},
    {44, 127, 1, 255, 1, 0, 127, 200},      {300, 65407, 1, 65535, 1, 0, 127, 200},
    {300, -129, 65537, -1, 1, 0, 127, 200}, {300, 4294967167LL, 65537, 4294967295LL, 1, 0, 127, 200},
};

static void integer_casts_wrap(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  tl_tensor *x = tl_from_data(ctx, TL_I64, 1, (int64_t[]){NWRAP}, wrap_src);
  for (size_t k = 0; k < sizeof wrap_to / sizeof wrap_to[0]; k++) {
    int64_t got[NWRAP];
    CHECK(tl_to_host(tl_cast(tl_cast(x, wrap_to[k]), TL_I64), got, sizeof got) == TL_OK);
    for (int i = 0; i < NWRAP; i++)
      if (got[i] != wrap_want[k][i])
        tl_test_fail(__FILE__, __LINE__, "%s: %lld as %s: got %lld, want %lld", backend, (long long)wrap_src[i],
                     tl_dtype_name(wrap_to[k]), (long long)got[i], (long long)wrap_want[k][i]);
  }
  uint64_t u[NWRAP];
  CHECK(tl_to_host(tl_cast(x, TL_U64), u, sizeof u) == TL_OK);
  CHECK(u[1] == 18446744073709551487ULL && u[5] == 9223372036854775808ULL && u[4] == 4294967297ULL);
  /* u64 past 2^63 back to floats: its unsigned value (2^63 and 2^64 - 129 rounds to 2^64) */
  double d[NWRAP];
  CHECK(tl_to_host(tl_cast(tl_cast(x, TL_U64), TL_F64), d, sizeof d) == TL_OK);
  CHECK(d[5] == 9223372036854775808.0 && d[1] == 18446744073709551616.0);
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_integer_casts_wrap) {
  for (int b = 0; b < 2; b++) integer_casts_wrap(backends[b]);
}

/* ---- arithmetic ------------------------------------------------------------------------ */
typedef struct {
  tl_dtype d;
  int64_t a[4], b[4], add[4], sub[4], mul[4], neg[4], div[4], mod[4];
} arith_case;

static const arith_case arith[] = {
    {TL_I8, {100, -128, 127, -7}, {100, 1, 2, 2}, {-56, -127, -127, -5}, {0, 127, 125, -9}, {16, -128, -2, -14},
     {-100, -128, -127, 7}, {1, -128, 63, -3}, {0, 0, 1, -1}},
    {TL_U8, {200, 0, 255, 7}, {100, 1, 2, 2}, {44, 1, 1, 9}, {100, 255, 253, 5}, {32, 0, 254, 14}, {56, 0, 1, 249},
     {2, 0, 127, 3}, {0, 0, 1, 1}},
    {TL_I16, {30000, -32768, 181, -7}, {30000, 1, 181, 2}, {-5536, -32767, 362, -5}, {0, 32767, 0, -9},
     {-5888, -32768, 32761, -14}, {-30000, -32768, -181, 7}, {1, -32768, 1, -3}, {0, 0, 0, -1}},
    {TL_U16, {65535, 0, 300, 7}, {65535, 1, 300, 2}, {65534, 1, 600, 9}, {0, 65535, 0, 5}, {1, 0, 24464, 14},
     {1, 0, 65236, 65529}, {1, 0, 1, 3}, {0, 0, 0, 1}},
    {TL_U32, {4294967295LL, 0, 70000, 7}, {2, 1, 70000, 2}, {1, 1, 140000, 9}, {4294967293LL, 4294967295LL, 0, 5},
     {4294967294LL, 0, 605032704, 14}, {1, 0, 4294897296LL, 4294967289LL}, {2147483647, 0, 1, 3}, {1, 0, 0, 1}},
};

static void check_i64(const char *what, const char *backend, tl_dtype d, tl_tensor *t, const int64_t *want, int line) {
  int64_t got[4];
  if (tl_get_dtype(t) != d) tl_test_fail(__FILE__, line, "%s %s: dtype %s", backend, what, tl_dtype_name(tl_get_dtype(t)));
  if (tl_to_host(tl_cast(t, TL_I64), got, sizeof got) != TL_OK) {
    tl_test_fail(__FILE__, line, "%s %s %s: %s", backend, tl_dtype_name(d), what, tl_last_error(NULL));
    return;
  }
  for (int i = 0; i < 4; i++)
    if (got[i] != want[i])
      tl_test_fail(__FILE__, line, "%s %s %s[%d]: got %lld, want %lld", backend, tl_dtype_name(d), what, i,
                   (long long)got[i], (long long)want[i]);
}

static void integer_arithmetic_wraps(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  for (size_t k = 0; k < sizeof arith / sizeof arith[0]; k++) {
    const arith_case *c = &arith[k];
    tl_tensor *x = tl_cast(tl_from_data(ctx, TL_I64, 1, (int64_t[]){4}, c->a), c->d);
    tl_tensor *y = tl_cast(tl_from_data(ctx, TL_I64, 1, (int64_t[]){4}, c->b), c->d);
    check_i64("add", backend, c->d, tl_add(x, y), c->add, __LINE__);
    check_i64("sub", backend, c->d, tl_sub(x, y), c->sub, __LINE__);
    check_i64("mul", backend, c->d, tl_mul(x, y), c->mul, __LINE__);
    check_i64("neg", backend, c->d, tl_neg(x), c->neg, __LINE__);
    check_i64("div", backend, c->d, tl_div(x, y), c->div, __LINE__);
    check_i64("mod", backend, c->d, tl_mod(x, y), c->mod, __LINE__);
    /* a fused chain: (x * y + x) stays in the dtype at every step */
    int64_t chain[4];
    for (int i = 0; i < 4; i++) chain[i] = c->mul[i] + c->a[i];
    tl_tensor *f = tl_cast(tl_add(tl_mul(x, y), x), TL_I64), *w = tl_from_data(ctx, TL_I64, 1, (int64_t[]){4}, chain);
    int64_t got[4], wrapped[4];
    CHECK(tl_to_host(f, got, sizeof got) == TL_OK);
    CHECK(tl_to_host(tl_cast(tl_cast(w, c->d), TL_I64), wrapped, sizeof wrapped) == TL_OK);
    for (int i = 0; i < 4; i++) CHECK(got[i] == wrapped[i]);
  }
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_integer_arithmetic_wraps) {
  for (int b = 0; b < 2; b++) integer_arithmetic_wraps(backends[b]);
}

/* u64 past 2^63: compares, max, division and abs read the bits unsigned */
static void u64_is_unsigned(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  uint64_t a[3] = {18446744073709551615ULL, 9223372036854775808ULL, 5}, c[3] = {1, 9223372036854775807ULL, 7};
  tl_tensor *x = tl_from_data(ctx, TL_U64, 1, (int64_t[]){3}, a), *y = tl_from_data(ctx, TL_U64, 1, (int64_t[]){3}, c);
  uint8_t gt[3];
  uint64_t mx[3], q[3], ab[3], mn[3];
  CHECK(tl_to_host(tl_gt(x, y), gt, sizeof gt) == TL_OK);
  CHECK(gt[0] == 1 && gt[1] == 1 && gt[2] == 0);
  CHECK(tl_to_host(tl_maximum(x, y), mx, sizeof mx) == TL_OK);
  CHECK(mx[0] == a[0] && mx[1] == a[1] && mx[2] == 7);
  CHECK(tl_to_host(tl_minimum(x, y), mn, sizeof mn) == TL_OK);
  CHECK(mn[0] == 1 && mn[1] == c[1] && mn[2] == 5);
  CHECK(tl_to_host(tl_div(x, y), q, sizeof q) == TL_OK);
  CHECK(q[0] == a[0] && q[1] == 1 && q[2] == 0);
  CHECK(tl_to_host(tl_abs(x), ab, sizeof ab) == TL_OK);
  CHECK(ab[0] == a[0] && ab[1] == a[1] && ab[2] == 5);
  uint8_t u8[3] = {5, 200, 0}, r8[3];
  CHECK(tl_to_host(tl_abs(tl_from_data(ctx, TL_U8, 1, (int64_t[]){3}, u8)), r8, sizeof r8) == TL_OK);
  CHECK(r8[0] == 5 && r8[1] == 200 && r8[2] == 0);
  uint64_t mxr;
  CHECK(tl_to_host(tl_max(x, 0, NULL, 0), &mxr, sizeof mxr) == TL_OK);
  CHECK(mxr == a[0]);
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_u64_is_unsigned) {
  for (int b = 0; b < 2; b++) u64_is_unsigned(backends[b]);
}

/* ---- f16: storage, computed in f32 ------------------------------------------------------ */
static tl_tensor *f16_bits(tl_ctx *ctx, int ndim, const int64_t *shape, const uint16_t *bits) {
  return tl_from_data(ctx, TL_F16, ndim, shape, bits);
}

static void f16_computes_in_f32_rounds_once(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  /* x = f16([0.1, 1000, 65504, -3.3]), y = f16([0.2, 0.3, 32, 1.7]) */
  const uint16_t xb[4] = {0x2e66, 0x63d0, 0x7bff, 0xc29a}, yb[4] = {0x3266, 0x34cd, 0x5000, 0x3ecd};
  tl_tensor *x = f16_bits(ctx, 1, (int64_t[]){4}, xb), *y = f16_bits(ctx, 1, (int64_t[]){4}, yb);
  const uint16_t add_want[4] = {0x34cc, 0x63d1, 0x7c00, 0xbe67}, mul_want[4] = {0x251e, 0x5cb0, 0x7c00, 0xc59d};
  uint16_t got[4];
  CHECK(tl_get_dtype(tl_add(x, y)) == TL_F16);
  CHECK(tl_to_host(tl_add(x, y), got, sizeof got) == TL_OK);
  for (int i = 0; i < 4; i++) CHECK_INT(got[i], add_want[i]);
  CHECK(tl_to_host(tl_mul(x, y), got, sizeof got) == TL_OK);
  for (int i = 0; i < 4; i++) CHECK_INT(got[i], mul_want[i]);
  /* matmul: products and sums in f32, rounded once */
  const uint16_t m1[12] = {0x2e66, 0x3266, 0x34cc, 0x3666, 0x3800, 0x38cc, 0x3999, 0x3a66, 0x3b33, 0x3c00, 0x3c66, 0x3ccc};
  const uint16_t m2[8] = {0x399a, 0x3d9a, 0x4034, 0x419a, 0x4300, 0x4434, 0x44e7, 0x459a};
  const uint16_t mm_want[6] = {0x4300, 0x4433, 0x47fb, 0x48e6, 0x4a3b, 0x4bb3};
  uint16_t mm[6];
  tl_tensor *p = tl_matmul(f16_bits(ctx, 2, (int64_t[]){3, 4}, m1), f16_bits(ctx, 2, (int64_t[]){4, 2}, m2));
  CHECK(tl_get_dtype(p) == TL_F16);
  CHECK(tl_to_host(p, mm, sizeof mm) == TL_OK);
  for (int i = 0; i < 6; i++) CHECK_INT(mm[i], mm_want[i]);
  /* a sum of 3000 x f16(0.1): in f32 299.93, rounded once to 300 (an f16 running sum stalls at 256) */
  uint16_t s;
  CHECK(tl_to_host(tl_sum(tl_full(ctx, TL_F16, 1, (int64_t[]){3000}, 0.1), 0, NULL, 0), &s, sizeof s) == TL_OK);
  CHECK_INT(s, 0x5cb0);
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_f16_computes_in_f32_rounds_once) {
  for (int b = 0; b < 2; b++) f16_computes_in_f32_rounds_once(backends[b]);
}

/* ---- reductions (expected: numpy with dtype=np.int64 for the sums, as torch) ----------- */
static void reductions(const char *backend) {
  tl_ctx *ctx = tl_init();
  tl_set_backend(ctx, backend);
  const int8_t a[5] = {100, 120, -128, 127, -1};
  const uint8_t u[5] = {200, 255, 3, 0, 9};
  const uint64_t w[3] = {18446744073709551615ULL, 9223372036854775808ULL, 5};
  tl_tensor *ta = tl_from_data(ctx, TL_I8, 1, (int64_t[]){5}, a), *tu = tl_from_data(ctx, TL_U8, 1, (int64_t[]){5}, u);
  tl_tensor *tw = tl_from_data(ctx, TL_U64, 1, (int64_t[]){3}, w);
  int64_t v;
  tl_tensor *s = tl_sum(ta, 0, NULL, 0);
  CHECK(tl_get_dtype(s) == TL_I64);
  CHECK(tl_to_host(s, &v, sizeof v) == TL_OK && v == 218);
  CHECK(tl_to_host(tl_prod(ta, 0, NULL, 0), &v, sizeof v) == TL_OK && v == 195072000);
  CHECK(tl_to_host(tl_sum(tu, 0, NULL, 0), &v, sizeof v) == TL_OK && v == 467);
  uint8_t m;
  CHECK(tl_to_host(tl_min(tu, 0, NULL, 0), &m, 1) == TL_OK && m == 0);
  CHECK(tl_to_host(tl_max(tu, 0, NULL, 0), &m, 1) == TL_OK && m == 255);
  CHECK(tl_to_host(tl_argmin(tu, 0, 0), &v, sizeof v) == TL_OK && v == 3);
  int8_t m8;
  CHECK(tl_to_host(tl_min(ta, 0, NULL, 0), &m8, 1) == TL_OK && m8 == -128);
  uint64_t mw;
  tl_tensor *sw = tl_sum(tw, 0, NULL, 0);
  CHECK(tl_get_dtype(sw) == TL_U64); /* u64 wraps in its own dtype (numpy's uint64 sum) */
  CHECK(tl_to_host(sw, &mw, sizeof mw) == TL_OK && mw == 9223372036854775812ULL);
  CHECK(tl_to_host(tl_min(tw, 0, NULL, 0), &mw, sizeof mw) == TL_OK && mw == 5);
  CHECK(tl_to_host(tl_argmin(tw, 0, 0), &v, sizeof v) == TL_OK && v == 2);
  /* f16: the mean of 3000 x 60 is 60 (an f16 sum, 180000, would overflow to inf first) */
  uint16_t h;
  tl_tensor *mean = tl_mean(tl_full(ctx, TL_F16, 1, (int64_t[]){3000}, 60.0), 0, NULL, 0);
  CHECK(tl_get_dtype(mean) == TL_F16);
  CHECK(tl_to_host(mean, &h, sizeof h) == TL_OK && h == 0x5380);
  const uint16_t xb[6] = {0x3e00, 0xc080, 0x4700, 0x2e66, 0x4200, 0xc8c0}; /* [[1.5, -2.25, 7], [0.1, 3, -9.5]] */
  tl_tensor *x = tl_from_data(ctx, TL_F16, 2, (int64_t[]){2, 3}, xb);
  uint16_t mn[2];
  int64_t am[2];
  CHECK(tl_to_host(tl_min(x, 1, (int[]){1}, 0), mn, sizeof mn) == TL_OK && mn[0] == 0xc080 && mn[1] == 0xc8c0);
  CHECK(tl_to_host(tl_argmax(x, 1, 0), am, sizeof am) == TL_OK && am[0] == 2 && am[1] == 1);
  TEST_SHUTDOWN(ctx);
}
TEST(dtype_reductions) {
  for (int b = 0; b < 2; b++) reductions(backends[b]);
}

/* rand has no f16 stream of its own: a clear error, not a silent f32 */
TEST(dtype_rand_needs_f32_or_f64) {
  tl_ctx *ctx = tl_init();
  CHECK(tl_rand(ctx, TL_F16, 1, (int64_t[]){3}) == NULL);
  CHECK(strstr(tl_last_error(ctx), "f16") != NULL);
  TEST_SHUTDOWN(ctx);
}

/* the same checks on a GPU backend: OpenCL (PoCL here), or the one TL_TEST_DEVICE names
 * (cuda on an NVIDIA GPU); its own test, "opencl" in its name, as the ASan and valgrind
 * runs leave PoCL out by that word */
TEST(dtype_checks_opencl_or_device) {
  const char *device = getenv("TL_TEST_DEVICE") ? getenv("TL_TEST_DEVICE") : "opencl";
  if (tl_backend_usable(device) != TL_OK) {
    printf("  %s is not available here: %s\n", device, tl_last_error(NULL));
    return;
  }
  float_to_int_casts_saturate(device);
  casts_to_f16_bf16_round_to_nearest_even(device);
  integer_casts_wrap(device);
  integer_arithmetic_wraps(device);
  u64_is_unsigned(device);
  f16_computes_in_f32_rounds_once(device);
  reductions(device);
}

/* every kind of kernel the new dtypes make, rendered as CUDA C and compiled by NVRTC
 * (make test-cuda-compile; none here: the test says so) */
TEST(dtype_kernels_compile_for_cuda) {
  tl_ctx *ctx = tl_init();
  int64_t n = 64;
  tl_tensor *f = tl_cast(tl_arange(ctx, TL_F32, 0, 64, 1), TL_F16), *g = tl_cast(tl_arange(ctx, TL_F32, 0, 64, 1), TL_BF16);
  tl_tensor *i = tl_arange(ctx, TL_I64, -32, 32, 1);
  tl_tensor *m = tl_reshape(f, 2, (int64_t[]){8, 8});
  tl_tensor *cases[] = {
      tl_add(tl_mul(f, f), f),
      tl_sum(g, 0, NULL, 0),
      tl_matmul(m, m),
      tl_max(m, 1, (int[]){1}, 0),
      tl_div(tl_cast(i, TL_I8), tl_add(tl_cast(i, TL_I8), tl_ones(ctx, TL_I8, 1, &n))),
      tl_mod(tl_mul(tl_cast(i, TL_U16), tl_cast(i, TL_U16)), tl_full(ctx, TL_U16, 1, &n, 7)),
      tl_gt(tl_div(tl_cast(i, TL_U64), tl_full(ctx, TL_U64, 1, &n, 3)), tl_cast(i, TL_U64)),
      tl_cast(tl_cast(tl_mul_scalar(f, 1e3), TL_U8), TL_BF16),
      tl_add(tl_cast(tl_cast(i, TL_F64), TL_U64), tl_cast(tl_cast(i, TL_BF16), TL_U32)),
      tl_cast(i, TL_F16),
      tl_where(tl_gt(f, tl_cast(g, TL_F16)), f, tl_neg(f)),
      tl_max(tl_reshape(tl_cast(i, TL_I8), 2, (int64_t[]){8, 8}), 1, (int[]){0}, 0),
      tl_min(tl_reshape(tl_cast(i, TL_U16), 2, (int64_t[]){8, 8}), 1, (int[]){1}, 0),
      tl_argmax(tl_reshape(tl_cast(i, TL_U64), 2, (int64_t[]){8, 8}), 1, 0),
      tl_sum(tl_cast(i, TL_U8), 0, NULL, 0),
  };
  int total = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int c = tl_test_cuda_compile(cases[k], "a new dtype's kernel");
    if (c < 0) {
      printf("  no NVRTC here\n");
      break;
    }
    total += c;
  }
  if (total) printf("  %d kernels compiled by NVRTC\n", total);
  TEST_SHUTDOWN(ctx);
}
