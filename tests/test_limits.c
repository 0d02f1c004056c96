/* test_limits.c — the element-count limit (TL_MAX_NUMEL) wherever a shape is made,
 * overflow-safe counts (slice steps, arange, pad widths), allocation failure as an
 * error, and a message for every failing call with a count or an array, context or
 * none. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "core/shapetracker.h"
#include "test.h"
#include "tl.h"

/* the call fails with this status and exactly this message */
#define CHECK_FAILS(ctx, call, status, msg)    \
  do {                                         \
    tl_clear_error(ctx);                       \
    CHECK((call) == NULL);                     \
    CHECK_INT(tl_last_status(ctx), status);    \
    CHECK_STR(tl_last_error(ctx), msg);        \
  } while (0)

#define LIMIT "the most a tensor may hold is 2^40 (1099511627776)"
#define TWO40 ((int64_t)1 << 40)

static tl_tensor *vec3(tl_ctx *ctx, float a, float b, float c) {
  float d[3] = {a, b, c};
  return tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, d);
}

/* realizes t (f32) and compares its shape and values */
static void check_f32(tl_tensor *t, int ndim, const int64_t *shape, const float *want, int line) {
  if (!t) {
    tl_test_fail(__FILE__, line, "tensor is NULL: %s", tl_last_error(NULL));
    return;
  }
  if (tl_ndim(t) != ndim) tl_test_fail(__FILE__, line, "rank %d, expected %d", tl_ndim(t), ndim);
  for (int i = 0; i < ndim && i < tl_ndim(t); i++)
    if (tl_dim(t, i) != shape[i])
      tl_test_fail(__FILE__, line, "axis %d has size %lld, expected %lld", i, (long long)tl_dim(t, i),
                   (long long)shape[i]);
  int64_t n = tl_numel(t);
  float got[64];
  if (n > 64 || tl_to_host(t, got, sizeof(float) * (size_t)n) != TL_OK) {
    tl_test_fail(__FILE__, line, "to_host failed: %s", tl_last_error(tl_context(t)));
    return;
  }
  for (int64_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      tl_test_fail(__FILE__, line, "element %lld: got %g, expected %g", (long long)i, got[i], want[i]);
      return;
    }
}
#define CHECK_F32(t, ndim, shape, ...) check_f32((t), (ndim), (shape), (const float[]){__VA_ARGS__}, __LINE__)

TEST(limits_creation_counts_the_product_of_sizes) {
  tl_ctx *ctx = tl_init();
  /* each size is allowed, the product overflowed 64 bits: numel was 0 */
  CHECK_FAILS(ctx, tl_ones(ctx, TL_F32, 3, (int64_t[]){(int64_t)1 << 32, (int64_t)1 << 32, 4}), TL_ERR_RANGE,
              "full: shape [4294967296, 4294967296, 4] has 73786976294838206464 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_randn(ctx, TL_F32, 2, (int64_t[]){(int64_t)1 << 31, (int64_t)1 << 31}), TL_ERR_RANGE,
              "randn: shape [2147483648, 2147483648] has 4611686018427387904 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_rand(ctx, TL_F64, 2, (int64_t[]){3037000500, 3037000500}), TL_ERR_RANGE,
              "rand: shape [3037000500, 3037000500] has 9223372037000250000 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_zeros(ctx, TL_F64, 2, (int64_t[]){3037000500, 3037000500}), TL_ERR_RANGE,
              "full: shape [3037000500, 3037000500] has 9223372037000250000 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_eye(ctx, TL_F32, TWO40), TL_ERR_RANGE,
              "eye: shape [1099511627776, 1099511627776] has 1208925819614629174706176 elements; " LIMIT);
  int dummy = 0; /* never read: the shape is refused first */
  CHECK_FAILS(ctx, tl_from_data(ctx, TL_I32, 2, (int64_t[]){TWO40, 2}, &dummy), TL_ERR_RANGE,
              "from_data: shape [1099511627776, 2] has 2199023255552 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_full(ctx, TL_F32, 1, (int64_t[]){TWO40 + 1}, 2), TL_ERR_RANGE,
              "full: shape [1099511627777] has 1099511627777 elements; " LIMIT);
  /* the count is exact however large: 2^256, and (2^63 - 1)^2 */
  int64_t big[8];
  for (int i = 0; i < 8; i++) big[i] = (int64_t)1 << 32;
  CHECK_FAILS(ctx, tl_zeros(ctx, TL_BOOL, 8, big), TL_ERR_RANGE,
              "full: shape [4294967296, 4294967296, 4294967296, 4294967296, 4294967296, 4294967296, 4294967296, "
              "4294967296] has 115792089237316195423570985008687907853269984665640564039457584007913129639936 "
              "elements; " LIMIT);
  CHECK_FAILS(ctx, tl_zeros(ctx, TL_F32, 2, (int64_t[]){INT64_MAX, INT64_MAX}), TL_ERR_RANGE,
              "full: shape [9223372036854775807, 9223372036854775807] has "
              "85070591730234615847396907784232501249 elements; " LIMIT);
  /* a size 0 holds nothing, but its strides are still products of the other sizes */
  CHECK_FAILS(ctx, tl_zeros(ctx, TL_F32, 3, (int64_t[]){0, TWO40, TWO40}), TL_ERR_RANGE,
              "full: shape [0, 1099511627776, 1099511627776] is too large: its sizes other than 0 multiply to "
              "1208925819614629174706176; " LIMIT);
  /* kaiming_normal reaches the check through randn */
  CHECK_FAILS(ctx, tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){TWO40, TWO40}, 4), TL_ERR_RANGE,
              "kaiming_normal: randn: shape [1099511627776, 1099511627776] has 1208925819614629174706176 "
              "elements; " LIMIT);
  /* negative sizes keep their message */
  CHECK_FAILS(ctx, tl_zeros(ctx, TL_F32, 2, (int64_t[]){2, -1}), TL_ERR_SHAPE,
              "full: size -1 of axis 1 is out of range");
  TEST_SHUTDOWN(ctx);
}

TEST(limits_shapes_up_to_the_limit_are_made) {
  tl_ctx *ctx = tl_init();
  /* lazy: 2^40 elements are never stored here */
  tl_tensor *a = tl_ones(ctx, TL_F32, 2, (int64_t[]){(int64_t)1 << 20, (int64_t)1 << 20});
  CHECK(a != NULL);
  CHECK_INT(tl_numel(a), TWO40);
  CHECK_INT(tl_numel(tl_zeros(ctx, TL_F64, 1, (int64_t[]){TWO40})), TWO40);
  /* zero elements, the other sizes multiplying to exactly the limit: made and realized */
  tl_tensor *e = tl_add_scalar(tl_zeros(ctx, TL_F32, 3, (int64_t[]){(int64_t)1 << 20, 0, (int64_t)1 << 20}), 1);
  CHECK(e != NULL);
  CHECK_INT(tl_numel(e), 0);
  CHECK_INT(tl_realize(e), TL_OK);
  CHECK_INT(tl_to_host(e, NULL, 0), TL_OK);
  TEST_SHUTDOWN(ctx);
}

TEST(limits_arange_counts_before_converting) {
  tl_ctx *ctx = tl_init();
  /* 1e30 converted to int64 was undefined: a negative count, then a bad kernel */
  CHECK_FAILS(ctx, tl_arange(ctx, TL_F32, 0, 1e30, 1), TL_ERR_RANGE,
              "arange: [0, 1e+30) in steps of 1 has 1e+30 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_arange(ctx, TL_F64, 0, 1099511627777.0, 1), TL_ERR_RANGE,
              "arange: [0, 1.09951e+12) in steps of 1 has 1099511627777 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_arange(ctx, TL_F64, 1e300, -1e300, -1e-300), TL_ERR_RANGE,
              "arange: [1e+300, -1e+300) in steps of -1e-300 has inf elements; " LIMIT);
  tl_tensor *none = tl_arange(ctx, TL_F32, 1e30, 0, 1); /* empty, whatever the span */
  CHECK(none != NULL);
  CHECK_INT(tl_numel(none), 0);
  CHECK_F32(tl_arange(ctx, TL_F32, 0, 1, 0.25), 1, (int64_t[]){4}, 0, 0.25f, 0.5f, 0.75f);
  TEST_SHUTDOWN(ctx);
}

TEST(limits_reshape_expand_and_broadcast) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec3(ctx, 1, 2, 3);
  /* the given sizes overflowed before dividing the element count */
  CHECK_FAILS(ctx, tl_reshape(a, 3, (int64_t[]){-1, TWO40, TWO40}), TL_ERR_RANGE,
              "reshape: shape [-1, 1099511627776, 1099511627776] is too large: its sizes other than -1 multiply "
              "to 1208925819614629174706176; " LIMIT);
  tl_tensor *empty = tl_zeros(ctx, TL_F32, 1, (int64_t[]){0});
  CHECK_FAILS(ctx, tl_reshape(empty, 3, (int64_t[]){0, TWO40, TWO40}), TL_ERR_RANGE,
              "reshape: shape [0, 1099511627776, 1099511627776] is too large: its sizes other than 0 multiply to "
              "1208925819614629174706176; " LIMIT);
  CHECK_FAILS(ctx, tl_reshape(a, 2, (int64_t[]){(int64_t)1 << 32, (int64_t)1 << 32}), TL_ERR_RANGE,
              "reshape: shape [4294967296, 4294967296] has 18446744073709551616 elements; " LIMIT);
  CHECK_F32(tl_reshape(a, 2, (int64_t[]){-1, 1}), 2, ((int64_t[]){3, 1}), 1, 2, 3);
  tl_tensor *one = tl_reshape(a, 2, (int64_t[]){3, 1});
  CHECK_FAILS(ctx, tl_expand(one, 3, (int64_t[]){TWO40, 3, TWO40}), TL_ERR_RANGE,
              "expand: shape [1099511627776, 3, 1099511627776] has 3626777458843887524118528 elements; " LIMIT);
  CHECK_F32(tl_expand(one, 2, (int64_t[]){3, 2}), 2, ((int64_t[]){3, 2}), 1, 1, 2, 2, 3, 3);
  /* two legal tensors, lazily 2^40 each, whose broadcast is 2^80 */
  tl_tensor *col = tl_zeros(ctx, TL_F32, 2, (int64_t[]){TWO40, 1}), *row = tl_zeros(ctx, TL_F32, 2, (int64_t[]){1, TWO40});
  CHECK_FAILS(ctx, tl_add(col, row), TL_ERR_RANGE,
              "add: shape [1099511627776, 1099511627776] has 1208925819614629174706176 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_lt(col, row), TL_ERR_RANGE,
              "lt: shape [1099511627776, 1099511627776] has 1208925819614629174706176 elements; " LIMIT);
  tl_tensor *cond = tl_zeros(ctx, TL_BOOL, 2, (int64_t[]){TWO40, 1});
  CHECK_FAILS(ctx, tl_where(cond, row, tl_scalar(ctx, TL_F32, 1)), TL_ERR_RANGE,
              "where: shape [1099511627776, 1099511627776] has 1208925819614629174706176 elements; " LIMIT);
  TEST_SHUTDOWN(ctx);
}

TEST(limits_pad_cat_stack_and_matmul) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec3(ctx, 1, 2, 3);
  /* shape + before + after overflowed int64: a dim of 0 or negative */
  CHECK_FAILS(ctx, tl_pad(a, (int64_t[]){INT64_MAX}, (int64_t[]){INT64_MAX}, 0), TL_ERR_RANGE,
              "pad: width 9223372036854775807 on axis 0 is more than the most a tensor may hold, 2^40 "
              "(1099511627776)");
  CHECK_FAILS(ctx, tl_pad(a, (int64_t[]){0}, (int64_t[]){TWO40}, 5), TL_ERR_RANGE,
              "pad: shape [1099511627779] has 1099511627779 elements; " LIMIT);
  tl_tensor *sq = tl_zeros(ctx, TL_F32, 2, (int64_t[]){(int64_t)1 << 20, (int64_t)1 << 20});
  CHECK_FAILS(ctx, tl_pad(sq, (int64_t[]){1, 0}, (int64_t[]){0, 0}, 0), TL_ERR_RANGE,
              "pad: shape [1048577, 1048576] has 1099512676352 elements; " LIMIT);
  CHECK_F32(tl_pad(a, (int64_t[]){1}, (int64_t[]){2}, 9), 1, ((int64_t[]){6}), 9, 1, 2, 3, 9, 9);

  tl_tensor *half = tl_zeros(ctx, TL_F32, 1, (int64_t[]){TWO40});
  CHECK_FAILS(ctx, tl_cat(2, (tl_tensor *[]){half, half}, 0), TL_ERR_RANGE,
              "cat: shape [2199023255552] has 2199023255552 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_stack(2, (tl_tensor *[]){half, half}, 0), TL_ERR_RANGE,
              "stack: shape [2, 1099511627776] has 2199023255552 elements; " LIMIT);
  CHECK_FAILS(ctx, tl_stack(2, (tl_tensor *[]){half, half}, -1), TL_ERR_RANGE,
              "stack: shape [1099511627776, 2] has 2199023255552 elements; " LIMIT);
  CHECK_F32(tl_stack(2, (tl_tensor *[]){a, a}, -1), 2, ((int64_t[]){3, 2}), 1, 1, 2, 2, 3, 3);
  CHECK_F32(tl_cat(2, (tl_tensor *[]){a, a}, 0), 1, ((int64_t[]){6}), 1, 2, 3, 1, 2, 3);

  /* [2^20, 1] @ [1, 2^21]: both tiny, the product 2^41 */
  tl_tensor *m = tl_zeros(ctx, TL_F32, 2, (int64_t[]){(int64_t)1 << 20, 1});
  tl_tensor *n = tl_zeros(ctx, TL_F32, 2, (int64_t[]){1, (int64_t)1 << 21});
  CHECK_FAILS(ctx, tl_matmul(m, n), TL_ERR_RANGE, "matmul: shape [1048576, 2097152] has 2199023255552 elements; " LIMIT);
  tl_tensor *b = tl_zeros(ctx, TL_F32, 3, (int64_t[]){4, 1, (int64_t)1 << 20});
  CHECK_FAILS(ctx, tl_matmul(tl_reshape(m, 3, (int64_t[]){1, (int64_t)1 << 20, 1}), b), TL_ERR_RANGE,
              "matmul: shape [4, 1048576, 1048576] has 4398046511104 elements; " LIMIT);
  /* at the limit: the result (2^40) is made, lazily */
  tl_tensor *r = tl_matmul(m, tl_zeros(ctx, TL_F32, 2, (int64_t[]){1, (int64_t)1 << 20}));
  CHECK(r != NULL);
  CHECK_INT(tl_numel(r), TWO40);
  TEST_SHUTDOWN(ctx);
}

TEST(limits_slice_with_a_huge_step) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec3(ctx, 1, 2, 3);
  /* (len + step - 1) / step overflowed: 0 elements instead of 1 */
  CHECK_F32(tl_slice(a, 0, 0, 3, INT64_MAX), 1, ((int64_t[]){1}), 1);
  CHECK_F32(tl_slice(a, 0, 1, 3, INT64_MAX - 1), 1, ((int64_t[]){1}), 2);
  CHECK_F32(tl_slice(a, 0, 2, 3, 5), 1, ((int64_t[]){1}), 3);
  CHECK_F32(tl_slice(a, 0, 0, 3, 2), 1, ((int64_t[]){2}), 1, 3);
  /* an empty stepped slice keeps the other axes (they were shrunk to 0 too) */
  tl_tensor *m = tl_from_data(ctx, TL_F32, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  tl_tensor *none = tl_slice(m, 1, 1, 1, 2);
  CHECK(none != NULL);
  CHECK_INT(tl_ndim(none), 2);
  CHECK_INT(tl_dim(none, 0), 2);
  CHECK_INT(tl_dim(none, 1), 0);
  CHECK_F32(tl_slice(m, 1, 0, 3, 2), 2, ((int64_t[]){2, 2}), 1, 3, 4, 6);
  /* the gradient of the one element taken */
  tl_tensor *p = vec3(ctx, 1, 2, 3);
  CHECK_INT(tl_set_requires_grad(p, 1), TL_OK);
  CHECK_INT(tl_backward(tl_sum(tl_mul_scalar(tl_slice(p, 0, 1, 3, INT64_MAX), 5), 0, NULL, 0), NULL), TL_OK);
  CHECK_F32(tl_grad(p), 1, ((int64_t[]){3}), 0, 5, 0);
  TEST_SHUTDOWN(ctx);
}

TEST(limits_shape_helpers_never_overflow) {
  int64_t s[3] = {(int64_t)1 << 32, (int64_t)1 << 32, 4}, st[3];
  CHECK(tl_shape_numel(3, s) == INT64_MAX); /* saturated; it wrapped to 0 */
  CHECK(!tl_shape_fits(3, s));
  CHECK(tl_shape_numel(3, (int64_t[]){INT64_MAX, 0, INT64_MAX}) == 0);
  CHECK(tl_shape_fits(2, (int64_t[]){(int64_t)1 << 20, (int64_t)1 << 20}));
  CHECK(!tl_shape_fits(2, (int64_t[]){((int64_t)1 << 20) + 1, (int64_t)1 << 20}));
  CHECK(!tl_shape_fits(2, (int64_t[]){TWO40, TWO40})); /* 2^80 wrapped to 0 */
  CHECK(tl_shape_fits(2, (int64_t[]){0, TWO40}));
  CHECK(!tl_shape_fits(1, (int64_t[]){-1}));
  /* strides of a shape that does not fit saturate (signed overflow before) */
  tl_shape_strides(3, (int64_t[]){2, TWO40, TWO40}, st);
  CHECK(st[0] == INT64_MAX && st[1] == TWO40 && st[2] == 1);
  tl_shape_strides(3, (int64_t[]){2, 3, 4}, st);
  CHECK(st[0] == 12 && st[1] == 4 && st[2] == 1);
}

/* true under AddressSanitizer or valgrind: their allocators do not return NULL */
static int checked_allocator(void) {
#if defined(__SANITIZE_ADDRESS__)
  return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 1;
#endif
#endif
  const char *p = getenv("LD_PRELOAD");
  return p && strstr(p, "vgpreload");
}

/* the address space in use now, in bytes (0 if unknown) */
static uint64_t address_space_used(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (!f) return 0;
  if (fscanf(f, "%llu", &pages) != 1) pages = 0;
  fclose(f);
  return pages * 4096;
}

TEST(limits_out_of_memory_is_an_error) {
  tl_ctx *ctx = tl_init();
  tl_tensor *warm = tl_add_scalar(vec3(ctx, 1, 2, 3), 1); /* thread pool and compiler started */
  CHECK_F32(warm, 1, ((int64_t[]){3}), 2, 3, 4);
  /* legal sizes that cannot be allocated, whatever the machine's overcommit policy */
  struct rlimit old, lim;
  uint64_t used = address_space_used();
  if (checked_allocator() || !used || getrlimit(RLIMIT_AS, &old) != 0) {
    TEST_SHUTDOWN(ctx);
    return;
  }
  lim = old;
  lim.rlim_cur = (rlim_t)(used + ((uint64_t)1 << 30));
  if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max) lim.rlim_cur = old.rlim_max;
  CHECK(setrlimit(RLIMIT_AS, &lim) == 0);
  tl_tensor *big = tl_add_scalar(tl_ones(ctx, TL_F64, 1, (int64_t[]){TWO40}), 1);
  CHECK(big != NULL);
  CHECK_INT(tl_realize(big), TL_ERR_NOMEM);
  CHECK_STR(tl_last_error(ctx), "realize: out of memory for a buffer of 1099511627776 f64 elements (8796093022208 bytes)");
  tl_clear_error(ctx);
  CHECK(tl_data(big) == NULL);
  CHECK_STR(tl_last_error(ctx), "realize: out of memory for a buffer of 1099511627776 f64 elements (8796093022208 bytes)");
  CHECK_FAILS(ctx, tl_arange(ctx, TL_F32, 0, (double)TWO40, 1), TL_ERR_NOMEM,
              "arange: out of memory for a buffer of 1099511627776 f32 elements (4398046511104 bytes)");
  CHECK_FAILS(ctx, tl_eye(ctx, TL_F64, (int64_t)1 << 20), TL_ERR_NOMEM,
              "eye: out of memory for a buffer of 1099511627776 f64 elements (8796093022208 bytes)");
  int dummy = 0; /* not read: the buffer is refused first */
  CHECK_FAILS(ctx, tl_from_data(ctx, TL_I32, 1, (int64_t[]){TWO40}, &dummy), TL_ERR_NOMEM,
              "from_data: out of memory for a buffer of 1099511627776 i32 elements (4398046511104 bytes)");
  /* argmax's index vector (arange, eager) over an axis of 2^40 */
  CHECK_FAILS(ctx, tl_argmax(tl_zeros(ctx, TL_F32, 1, (int64_t[]){TWO40}), 0, 0), TL_ERR_NOMEM,
              "argmax: arange: out of memory for a buffer of 1099511627776 i64 elements (8796093022208 bytes)");
  CHECK(setrlimit(RLIMIT_AS, &old) == 0);
  /* the context goes on */
  CHECK_F32(tl_mul_scalar(warm, 2), 1, ((int64_t[]){3}), 4, 6, 8);
  TEST_SHUTDOWN(ctx);
}

TEST(limits_calls_without_a_context_leave_a_message) {
  tl_tensor *ts[2] = {NULL, NULL};
  tl_clear_error(NULL);
  CHECK_STR(tl_last_error(NULL), "no context");
  CHECK_FAILS(NULL, tl_cat(0, NULL, 0), TL_ERR_ARG, "cat: n is 0; at least one tensor is needed");
  CHECK_FAILS(NULL, tl_stack(-1, ts, 0), TL_ERR_ARG, "stack: n is -1; at least one tensor is needed");
  CHECK_FAILS(NULL, tl_cat(2, NULL, 0), TL_ERR_ARG, "cat: the tensor array is NULL (n = 2)");
  CHECK_FAILS(NULL, tl_sgd(1, NULL, 0.1, 0, 0), TL_ERR_ARG, "sgd: the parameter array is NULL (n = 1)");
  CHECK_FAILS(NULL, tl_adam(0, NULL, 0.1, 0.9, 0.999, 1e-8, 0), TL_ERR_ARG,
              "adam: n is 0; at least one parameter is needed");
  CHECK_FAILS(NULL, tl_adamw(-2, ts, 0.1, 0.9, 0.999, 1e-8, 0), TL_ERR_ARG,
              "adamw: n is -2; at least one parameter is needed");
  /* a context's own message is not touched by them */
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec3(ctx, 1, 2, 3);
  CHECK(tl_sum(a, -1, (int[]){0}, 0) == NULL);
  CHECK(tl_cat(0, &a, 0) == NULL);
  CHECK_STR(tl_last_error(ctx), "sum: naxes must be >= 0, got -1");
  CHECK_STR(tl_last_error(NULL), "cat: n is 0; at least one tensor is needed");
  tl_clear_error(NULL);
  CHECK_STR(tl_last_error(NULL), "no context");
  CHECK_INT(tl_last_status(NULL), TL_ERR_ARG);
  /* a NULL element is an earlier failure: its message stays */
  CHECK(tl_cat(2, (tl_tensor *[]){a, NULL}, 0) == NULL);
  CHECK_STR(tl_last_error(ctx), "sum: naxes must be >= 0, got -1");
  TEST_SHUTDOWN(ctx);
}

TEST(limits_counts_and_arrays_are_checked) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec3(ctx, 1, 2, 3);
  /* naxes = -3 was accepted, as no axis */
  CHECK_FAILS(ctx, tl_sum(a, -3, (int[]){0}, 0), TL_ERR_ARG, "sum: naxes must be >= 0, got -3");
  CHECK_FAILS(ctx, tl_mean(a, -1, (int[]){0}, 0), TL_ERR_ARG, "mean: naxes must be >= 0, got -1");
  CHECK_FAILS(ctx, tl_max(a, -2, (int[]){0}, 1), TL_ERR_ARG, "max: naxes must be >= 0, got -2");
  CHECK_FAILS(ctx, tl_flip(a, -1, (int[]){0}), TL_ERR_ARG, "flip: naxes must be >= 0, got -1");
  CHECK_FAILS(ctx, tl_flip(a, 1, NULL), TL_ERR_ARG, "flip: axes is NULL"); /* crashed */
  CHECK_FAILS(ctx, tl_reshape(a, 1, NULL), TL_ERR_ARG, "reshape: shape is NULL");
  CHECK_FAILS(ctx, tl_expand(a, 2, NULL), TL_ERR_ARG, "expand: shape is NULL");
  CHECK_F32(tl_flip(a, 1, (int[]){0}), 1, ((int64_t[]){3}), 3, 2, 1);
  /* an axes list of length 0 reduces nothing (numpy's axis=()) */
  CHECK_F32(tl_sum(a, 0, (int[]){0}, 0), 1, ((int64_t[]){3}), 1, 2, 3);
  /* a tensor adopted by a scope of another context was linked into its lists */
  tl_ctx *other = tl_init();
  tl_scope *s = tl_scope_new(other, "cache");
  tl_clear_error(other);
  CHECK_INT(tl_scope_adopt(s, a), TL_ERR_ARG);
  CHECK_STR(tl_last_error(other), "scope_adopt: the tensor and scope 'cache' belong to different contexts");
  CHECK_F32(a, 1, ((int64_t[]){3}), 1, 2, 3);
  CHECK_INT(tl_scope_free(s), TL_OK);
  TEST_SHUTDOWN(other);
  TEST_SHUTDOWN(ctx);
}
