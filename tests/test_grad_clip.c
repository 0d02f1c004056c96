/* test_grad_clip.c — tl_clip_grad_value and tl_clip_grad_norm over the gradients of
 * several leaves, against torch.nn.utils' formulas worked by hand; a leaf without a
 * gradient is skipped; bad parameters are errors. Every test ends with the leak check. */
#include <math.h>
#include <string.h>

#include "test.h"
#include "tl.h"

/* leaves a = [.., ..] and b = [..] whose gradients are ga and gb */
static void two_leaves(tl_ctx *ctx, tl_tensor **a, tl_tensor **b, const double *ga, const double *gb) {
  *a = tl_from_data(ctx, TL_F64, 1, (int64_t[]){2}, (double[]){1, 1});
  *b = tl_from_data(ctx, TL_F32, 1, (int64_t[]){1}, (float[]){1});
  tl_set_requires_grad(*a, 1);
  tl_set_requires_grad(*b, 1);
  TL_SCOPE(ctx, s) {
    tl_tensor *l = tl_add(tl_sum(tl_mul(*a, tl_from_data(ctx, TL_F64, 1, (int64_t[]){2}, ga)), 0, NULL, 0),
                          tl_cast(tl_sum(tl_mul(*b, tl_cast(tl_from_data(ctx, TL_F64, 1, (int64_t[]){1}, gb), TL_F32)), 0, NULL, 0), TL_F64));
    CHECK_INT(tl_backward(l, NULL), TL_OK);
  }
}

static void grads(tl_tensor *a, tl_tensor *b, double *out) {
  CHECK_INT(tl_to_host(tl_grad(a), out, 2 * sizeof(double)), TL_OK);
  CHECK_INT(tl_to_host(tl_cast(tl_grad(b), TL_F64), out + 2, sizeof(double)), TL_OK);
}

TEST(grad_clip_norm_l2_inf_and_l1) {
  tl_ctx *ctx = tl_init();
  static const double ga[2] = {3, -4}, gb[1] = {12};
  double g[3], total = 0;
  tl_tensor *a, *b;
  two_leaves(ctx, &a, &b, ga, gb);
  tl_tensor *ps[2] = {a, b};
  /* sqrt(9 + 16 + 144) = 13; 6.5 / 13 scales by about a half */
  CHECK_INT(tl_clip_grad_norm(2, ps, 6.5, 2, &total), TL_OK);
  CHECK_NEAR(total, 13, 1e-12);
  grads(a, b, g);
  double c = 6.5 / (13 + 1e-6);
  CHECK_NEAR(g[0], 3 * c, 1e-12);
  CHECK_NEAR(g[1], -4 * c, 1e-12);
  CHECK_NEAR(g[2], 12 * c, 1e-5); /* b is f32 */
  /* now below max_norm: left as it is */
  CHECK_INT(tl_clip_grad_norm(2, ps, 100, 2, &total), TL_OK);
  CHECK_NEAR(total, 6.5 * 13 / (13 + 1e-6), 1e-5);
  grads(a, b, g);
  CHECK_NEAR(g[0], 3 * c, 1e-12);
  /* the largest |g| (infinity norm) and the sum of |g| (p = 1) */
  CHECK_INT(tl_clip_grad_norm(2, ps, 1e9, INFINITY, &total), TL_OK);
  CHECK_NEAR(total, 12 * c, 1e-5);
  CHECK_INT(tl_clip_grad_norm(2, ps, 1e9, 1, &total), TL_OK);
  CHECK_NEAR(total, 19 * c, 1e-5);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_clip_value_and_a_leaf_without_grad) {
  tl_ctx *ctx = tl_init();
  static const double ga[2] = {3, -4}, gb[1] = {12};
  double g[3];
  tl_tensor *a, *b, *fresh = tl_from_data(ctx, TL_F64, 1, (int64_t[]){1}, (double[]){5});
  two_leaves(ctx, &a, &b, ga, gb);
  CHECK_INT(tl_set_requires_grad(fresh, 1), TL_OK); /* no gradient yet: skipped */
  tl_tensor *ps[3] = {a, fresh, b};
  CHECK_INT(tl_clip_grad_value(3, ps, 3.5), TL_OK);
  grads(a, b, g);
  CHECK_NEAR(g[0], 3, 0);
  CHECK_NEAR(g[1], -3.5, 0);
  CHECK_NEAR(g[2], 3.5, 0);
  double total = -1;
  CHECK_INT(tl_clip_grad_norm(3, ps, 1, 2, &total), TL_OK);
  CHECK_NEAR(total, sqrt(9 + 12.25 + 12.25), 1e-6);
  CHECK_INT(tl_clip_grad_value(0, NULL, 1), TL_OK);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_clip_errors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = tl_from_data(ctx, TL_F64, 1, (int64_t[]){1}, (double[]){1});
  tl_tensor *ps[1] = {x};
  CHECK_INT(tl_clip_grad_value(1, ps, 1), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "clip_grad_value: parameter 0 is not a leaf that requires grad");
  tl_set_requires_grad(x, 1);
  CHECK_INT(tl_clip_grad_value(1, ps, -1), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "clip_grad_value: the clip value must be 0 or more, not -1");
  CHECK_INT(tl_clip_grad_norm(1, ps, 1, 0, NULL), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "clip_grad_norm: the norm type must be above 0, not 0");
  CHECK_INT(tl_clip_grad_norm(-1, ps, 1, 2, NULL), TL_ERR_ARG);
  CHECK_STR(tl_last_error(NULL), "clip_grad_norm: -1 parameters");
  TEST_SHUTDOWN(ctx);
}
