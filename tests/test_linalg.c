/* test_linalg.c — tl_inverse, tl_det, tl_solve: values of small matrices worked by hand,
 * their gradients against central differences of the values (f64), batches, and the
 * message of every bad input. Every test ends with the leak check. */
#include <math.h>
#include <string.h>

#include "test.h"
#include "tl.h"

static tl_tensor *mat(tl_ctx *ctx, int64_t r, int64_t c, const double *v) {
  return tl_from_data(ctx, TL_F64, 2, (int64_t[]){r, c}, v);
}

TEST(linalg_values_by_hand) {
  tl_ctx *ctx = tl_init();
  /* [[2, 1], [1, 1]]: det 1, inverse [[1, -1], [-1, 2]]; x = A^-1 [3, 2] = [1, 1] */
  tl_tensor *a = mat(ctx, 2, 2, (double[]){2, 1, 1, 1});
  VALUES(tl_inverse(a), 1e-12, 1, -1, -1, 2);
  VALUES(tl_det(a), 1e-12, 1);
  VALUES(tl_solve(a, tl_from_data(ctx, TL_F64, 1, (int64_t[]){2}, (double[]){3, 2})), 1e-12, 1, 1);
  /* a row swap is needed (the first pivot is 0): det [[0, 1], [1, 0]] = -1 */
  tl_tensor *p = tl_cast(mat(ctx, 2, 2, (double[]){0, 1, 1, 0}), TL_F32);
  VALUES(tl_det(p), 0, -1);
  CHECK_INT(tl_get_dtype(tl_inverse(p)), TL_F32);
  /* a batch [2, 2, 2]: det 2 * 3 and 1 * 1 - 2 * 3 */
  tl_tensor *b = tl_from_data(ctx, TL_F64, 3, (int64_t[]){2, 2, 2}, (double[]){2, 0, 0, 3, 1, 2, 3, 1});
  tl_tensor *d = tl_det(b);
  CHECK_INT(tl_ndim(d), 1);
  VALUES(d, 1e-12, 6, -5);
  VALUES(tl_inverse(b), 1e-12, 0.5, 0, 0, 1.0 / 3, -0.2, 0.4, 0.6, -0.2);
  TEST_SHUTDOWN(ctx);
}

/* f(A, B) = sum(inverse(A) W) + det(A) / 2 + sum(solve(A, B) V) */
static double objective(tl_ctx *ctx, const double *av, const double *bv) {
  static const double w[9] = {1, -2, 0.5, 0, 1, 2, 3, -1, 1}, v[6] = {1, -1, 2, 0.5, 0, 3};
  double out = NAN;
  TL_SCOPE(ctx, s) {
    tl_tensor *a = mat(ctx, 3, 3, av), *b = mat(ctx, 3, 2, bv);
    tl_tensor *f = tl_add(tl_add(tl_sum(tl_mul(tl_inverse(a), mat(ctx, 3, 3, w)), 0, NULL, 0), tl_mul_scalar(tl_det(a), 0.5)),
                          tl_sum(tl_mul(tl_solve(a, b), mat(ctx, 3, 2, v)), 0, NULL, 0));
    if (tl_item(f, &out) != TL_OK) out = NAN;
  }
  return out;
}

TEST(linalg_grads_match_finite_differences) {
  tl_ctx *ctx = tl_init();
  double av[9] = {4, 7, 2, 3, 6, 1, 2, 5, 3}, bv[6] = {1, 2, 3, 4, 5, 6};
  static const double w[9] = {1, -2, 0.5, 0, 1, 2, 3, -1, 1}, v[6] = {1, -1, 2, 0.5, 0, 3};
  tl_tensor *a = mat(ctx, 3, 3, av), *b = mat(ctx, 3, 2, bv);
  CHECK_INT(tl_set_requires_grad(a, 1), TL_OK);
  CHECK_INT(tl_set_requires_grad(b, 1), TL_OK);
  TL_SCOPE(ctx, s) {
    tl_tensor *f = tl_add(tl_add(tl_sum(tl_mul(tl_inverse(a), mat(ctx, 3, 3, w)), 0, NULL, 0), tl_mul_scalar(tl_det(a), 0.5)),
                          tl_sum(tl_mul(tl_solve(a, b), mat(ctx, 3, 2, v)), 0, NULL, 0));
    double fv = NAN;
    CHECK_INT(tl_item(f, &fv), TL_OK);
    CHECK_NEAR(fv, objective(ctx, av, bv), 1e-12); /* the extra terms change no value */
    CHECK_INT(tl_backward(f, NULL), TL_OK);
  }
  double ga[9], gb[6], h = 1e-6;
  CHECK_INT(tl_to_host(tl_grad(a), ga, sizeof ga), TL_OK);
  CHECK_INT(tl_to_host(tl_grad(b), gb, sizeof gb), TL_OK);
  for (int k = 0; k < 15; k++) {
    double *x = k < 9 ? &av[k] : &bv[k - 9], keep = *x;
    *x = keep + h;
    double up = objective(ctx, av, bv);
    *x = keep - h;
    double down = objective(ctx, av, bv);
    *x = keep;
    CHECK_NEAR(k < 9 ? ga[k] : gb[k - 9], (up - down) / (2 * h), 1e-5);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(linalg_det_grad_of_a_singular_matrix_is_the_cofactors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *s = mat(ctx, 2, 2, (double[]){1, 2, 2, 4});
  CHECK_INT(tl_set_requires_grad(s, 1), TL_OK);
  TL_SCOPE(ctx, sc) {
    tl_tensor *d = tl_det(s);
    VALUES(d, 0, 0);
    CHECK_INT(tl_backward(d, NULL), TL_OK);
  }
  VALUES(tl_grad(s), 1e-12, 4, -2, -2, 1);
  TEST_SHUTDOWN(ctx);
}

TEST(linalg_errors) {
  tl_ctx *ctx = tl_init();
  CHECK(!tl_inverse(mat(ctx, 2, 2, (double[]){1, 2, 2, 4})));
  CHECK_INT(tl_last_status(ctx), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "inverse: the matrix is singular");
  CHECK(!tl_det(mat(ctx, 2, 3, (double[]){1, 2, 3, 4, 5, 6})));
  CHECK_STR(tl_last_error(ctx), "det: needs square matrices [.., n, n], not [2, 3]");
  CHECK(!tl_inverse(tl_cast(mat(ctx, 1, 1, (double[]){1}), TL_I64)));
  CHECK_STR(tl_last_error(ctx), "inverse: needs a float matrix, not i64");
  CHECK(!tl_solve(mat(ctx, 2, 2, (double[]){1, 0, 0, 1}), mat(ctx, 3, 1, (double[]){1, 2, 3})));
  CHECK_STR(tl_last_error(ctx), "solve: A [2, 2] and B [3, 1] do not fit: B is [.., n, k] with A's batch axes, or [n]");
  tl_tensor *batch = tl_from_data(ctx, TL_F64, 3, (int64_t[]){2, 1, 1}, (double[]){1, 0});
  CHECK(!tl_inverse(batch));
  CHECK_STR(tl_last_error(ctx), "inverse: matrix 1 of the batch is singular");
  CHECK(!tl_inverse(NULL));
  TEST_SHUTDOWN(ctx);
}
