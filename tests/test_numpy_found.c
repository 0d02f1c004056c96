/* test_numpy_found.c — regressions for the mismatches `make check-numpy` found (the
 * differential graphs against numpy), each with values worked out by hand, on the
 * interpreter and on compiled kernels. */
#include <stdint.h>

#include "test.h"
#include "tl.h"

/* min and argmin of integers holding the dtype's minimum: min was -max(-x), and -x
 * overflows there (-INT_MIN == INT_MIN), so min([0, INT_MIN, 3]) gave 0 (casts seed
 * 155 and 31 others of 3,000) */
TEST(numpy_found_integer_min_at_the_minimum) {
  static const char *const backends[] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    CHECK_INT(tl_set_backend(ctx, backends[b]), TL_OK);
    int32_t v32[6] = {0, 7, INT32_MIN, 3, INT32_MAX, -1};
    int64_t v64[4] = {5, INT64_MAX, INT64_MIN, -9};
    tl_tensor *a = tl_from_data(ctx, TL_I32, 2, (int64_t[]){2, 3}, v32);
    tl_tensor *c = tl_from_data(ctx, TL_I64, 1, (int64_t[]){4}, v64);
    int32_t all32 = 0, rows[2] = {0}, cols[3] = {0};
    int64_t all64 = 0, am[2] = {0}, am64 = 0;
    CHECK_INT(tl_to_host(tl_min(a, 0, NULL, 0), &all32, sizeof all32), TL_OK);
    CHECK_INT(all32, INT32_MIN);
    CHECK_INT(tl_to_host(tl_min(a, 1, (int[]){1}, 0), rows, sizeof rows), TL_OK);
    CHECK_INT(rows[0], INT32_MIN); /* [0, 7, INT_MIN] */
    CHECK_INT(rows[1], -1);        /* [3, INT_MAX, -1] */
    CHECK_INT(tl_to_host(tl_min(a, 1, (int[]){0}, 0), cols, sizeof cols), TL_OK);
    CHECK_INT(cols[0], 0);
    CHECK_INT(cols[1], 7);
    CHECK_INT(cols[2], INT32_MIN);
    CHECK_INT(tl_to_host(tl_min(c, 0, NULL, 0), &all64, sizeof all64), TL_OK);
    CHECK(all64 == INT64_MIN);
    CHECK_INT(tl_to_host(tl_argmin(a, 1, 0), am, sizeof am), TL_OK);
    CHECK_INT(am[0], 2);
    CHECK_INT(am[1], 2);
    CHECK_INT(tl_to_host(tl_argmin(c, 0, 0), &am64, sizeof am64), TL_OK);
    CHECK_INT(am64, 2);
    /* max is unchanged, and min of floats still -max(-x) */
    CHECK_INT(tl_to_host(tl_max(a, 0, NULL, 0), &all32, sizeof all32), TL_OK);
    CHECK_INT(all32, INT32_MAX);
    double f[3] = {2.5, -0.0, -7.25}, fm = 0;
    CHECK_INT(tl_item(tl_min(tl_from_data(ctx, TL_F64, 1, (int64_t[]){3}, f), 0, NULL, 0), &fm), TL_OK);
    CHECK_NEAR(fm, -7.25, 0);
    TEST_SHUTDOWN(ctx);
  }
}
