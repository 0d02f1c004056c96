/* test_linalg_decomp.c — tl_svd and tl_eigh against numpy (np.linalg.svd/eigh in
 * float64; the vectors' signs set to this library's convention: the largest-|.| entry
 * of each column of V, or of the eigenvectors, positive), reconstruction A = U S V^T and
 * orthogonality (signs are a convention, these are not), batches, f32, and the message
 * of every bad input. Every test ends with the leak check. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "test.h"
#include "tl.h"

static tl_tensor *mat(tl_ctx *ctx, int64_t r, int64_t c, const double *v) {
  return tl_from_data(ctx, TL_F64, 2, (int64_t[]){r, c}, v);
}

/* t's values (at most 64) in f64; false (a failure noted) when there are none */
static bool host(tl_tensor *t, double *out, int64_t n, int line) {
  tl_tensor *d = t ? tl_cast(t, TL_F64) : NULL;
  if (!d || tl_numel(t) != n || n > 64 || tl_to_host(d, out, sizeof(double) * (size_t)n) != TL_OK) {
    tl_test_fail(__FILE__, line, "no values (%lld wanted): %s", (long long)n, t ? tl_last_error(tl_context(t)) : "NULL");
    return false;
  }
  return true;
}

static void values(tl_tensor *t, const double *want, int64_t n, double tol, int line) {
  double got[64];
  if (!host(t, got, n, line)) return;
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= tol)) {
      tl_test_fail(__FILE__, line, "element %lld: got %.12g, expected %.12g", (long long)i, got[i], want[i]);
      return;
    }
}
#define VALUES(t, tol, ...)                                                    \
  do {                                                                         \
    const double w_[] = {__VA_ARGS__};                                         \
    values(t, w_, (int64_t)(sizeof w_ / sizeof w_[0]), tol, __LINE__);         \
  } while (0)

/* a (m x n) = u (m x k) diag(s) v (n x k)^T, and u^T u = v^T v = I (k x k), to tol */
static void check_svd(const double *a, int64_t m, int64_t n, tl_tensor *tu, tl_tensor *ts, tl_tensor *tv, double tol, int line) {
  int64_t k = m < n ? m : n;
  double u[64], s[8], v[64];
  if (!host(tu, u, m * k, line) || !host(ts, s, k, line) || !host(tv, v, n * k, line)) return;
  for (int64_t j = 1; j < k; j++)
    if (s[j] > s[j - 1]) tl_test_fail(__FILE__, line, "S not descending at %lld", (long long)j);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double r = 0;
      for (int64_t c = 0; c < k; c++) r += u[i * k + c] * s[c] * v[j * k + c];
      if (!(fabs(r - a[i * n + j]) <= tol)) tl_test_fail(__FILE__, line, "U S V^T [%lld, %lld] = %.12g, A has %.12g", (long long)i, (long long)j, r, a[i * n + j]);
    }
  for (int64_t p = 0; p < k; p++)
    for (int64_t q = 0; q < k; q++) {
      double du = 0, dv = 0;
      for (int64_t i = 0; i < m; i++) du += u[i * k + p] * u[i * k + q];
      for (int64_t i = 0; i < n; i++) dv += v[i * k + p] * v[i * k + q];
      if (!(fabs(du - (p == q)) <= tol && fabs(dv - (p == q)) <= tol))
        tl_test_fail(__FILE__, line, "not orthonormal at [%lld, %lld]: U^T U %.12g, V^T V %.12g", (long long)p, (long long)q, du, dv);
    }
}

static const double A43[12] = {4, 7, 2, 3, 6, 1, 2, 5, 3, 1, 1, 8};

TEST(linalg_svd_matches_numpy) {
  tl_ctx *ctx = tl_init();
  tl_tensor *u, *s, *v;
  CHECK_INT(tl_svd(mat(ctx, 4, 3, A43), &u, &s, &v), TL_OK);
  CHECK_INT(tl_ndim(u), 2);
  CHECK_INT(tl_dim(u, 0), 4);
  CHECK_INT(tl_dim(u, 1), 3);
  CHECK_INT(tl_dim(v, 0), 3);
  CHECK_INT(tl_dim(v, 1), 3);
  VALUES(s, 1e-10, 12.957177958793338, 7.116061681202966, 0.6878993338235639);
  VALUES(v, 1e-10, 0.4078137718323449, -0.18319795300700636, 0.8944978689286626, 0.7743304441676816, -0.4497394251618392,
         -0.44513684714948015, 0.48383911658624423, 0.8741698687721633, -0.04155417899443495);
  VALUES(u, 1e-10, 0.618903780991401, -0.2996921817372518, 0.5508439520841403, 0.4903276868847627, -0.3335919006281844,
         -0.041985293029424726, 0.4737757815617374, 0.0010422302146244561, -0.8160366019737402, 0.3899658679350683,
         0.8938120349363294, 0.1699777628418129);
  check_svd(A43, 4, 3, u, s, v, 1e-10, __LINE__);
  /* the wide transpose [3, 4]: the same S, U and V exchanged */
  double at[12];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) at[j * 4 + i] = A43[i * 3 + j];
  CHECK_INT(tl_svd(mat(ctx, 3, 4, at), &u, &s, &v), TL_OK);
  CHECK_INT(tl_dim(u, 0), 3);
  CHECK_INT(tl_dim(u, 1), 3);
  CHECK_INT(tl_dim(v, 0), 4);
  CHECK_INT(tl_dim(v, 1), 3);
  VALUES(s, 1e-10, 12.957177958793334, 7.116061681202968, 0.6878993338235639);
  check_svd(at, 3, 4, u, s, v, 1e-10, __LINE__);
  /* rank 2 (row 2 = 2 row 1): numpy's S [8.4354.., 0.9182.., 5.3e-16]; U still orthonormal */
  static const double r[9] = {1, 2, 3, 2, 4, 6, 1, 0, 1};
  CHECK_INT(tl_svd(mat(ctx, 3, 3, r), &u, &s, &v), TL_OK);
  VALUES(s, 1e-10, 8.435448515787048, 0.9182637624920782, 0);
  check_svd(r, 3, 3, u, s, v, 1e-10, __LINE__);
  /* eye(3): U = S-ones = V = I; a batch [2, 4, 3] in f32 gives each matrix's S */
  CHECK_INT(tl_svd(tl_eye(ctx, TL_F32, 3), &u, &s, &v), TL_OK);
  VALUES(u, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
  VALUES(s, 0, 1, 1, 1);
  VALUES(v, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
  double two[24];
  for (int i = 0; i < 12; i++) two[i] = A43[i], two[12 + i] = 2 * A43[i];
  tl_tensor *b = tl_cast(tl_from_data(ctx, TL_F64, 3, (int64_t[]){2, 4, 3}, two), TL_F32);
  CHECK_INT(tl_svd(b, &u, &s, &v), TL_OK);
  CHECK_INT(tl_get_dtype(s), TL_F32);
  CHECK_INT(tl_ndim(s), 2);
  VALUES(s, 1e-5, 12.957177958793338, 7.116061681202966, 0.6878993338235639, 2 * 12.957177958793338, 2 * 7.116061681202966,
         2 * 0.6878993338235639);
  TEST_SHUTDOWN(ctx);
}

TEST(linalg_eigh_matches_numpy) {
  tl_ctx *ctx = tl_init();
  tl_tensor *w, *v;
  static const double s[9] = {4, 1, 2, 1, 3, 0, 2, 0, 5};
  CHECK_INT(tl_eigh(mat(ctx, 3, 3, s), &w, &v), TL_OK);
  VALUES(w, 1e-10, 1.854897308799577, 3.476023602918134, 6.669079088282288);
  VALUES(v, 1e-10, 0.6793130619863367, 0.3743619547830716, 0.6311789687764832, -0.5932333119173847, 0.7864356987513784,
         0.1720265367929079, -0.4319814827585529, -0.4912962635115684, 0.7563200248659909);
  /* eye(3): values 1, vectors I; a batch [2, 3, 3] of S and -S: -S's values negated, reversed */
  CHECK_INT(tl_eigh(tl_eye(ctx, TL_F64, 3), &w, &v), TL_OK);
  VALUES(w, 0, 1, 1, 1);
  VALUES(v, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
  double two[18];
  for (int i = 0; i < 9; i++) two[i] = s[i], two[9 + i] = -s[i];
  CHECK_INT(tl_eigh(tl_cast(tl_from_data(ctx, TL_F64, 3, (int64_t[]){2, 3, 3}, two), TL_F32), &w, &v), TL_OK);
  CHECK_INT(tl_get_dtype(v), TL_F32);
  VALUES(w, 1e-5, 1.854897308799577, 3.476023602918134, 6.669079088282288, -6.669079088282288, -3.476023602918134,
         -1.854897308799577);
  TEST_SHUTDOWN(ctx);
}

TEST(linalg_svd_eigh_errors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *u = NULL, *s = NULL, *v = NULL;
  CHECK_INT(tl_eigh(mat(ctx, 2, 2, (double[]){1, 2, 3, 1}), &u, &v), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "eigh: the matrix is not symmetric: [0, 1] is 2, [1, 0] is 3");
  CHECK(!u && !v);
  CHECK_INT(tl_eigh(mat(ctx, 2, 3, (double[]){1, 2, 3, 4, 5, 6}), &u, &v), TL_ERR_SHAPE);
  CHECK_STR(tl_last_error(ctx), "eigh: needs square matrices [.., n, n], not [2, 3]");
  CHECK_INT(tl_svd(tl_from_data(ctx, TL_F64, 1, (int64_t[]){3}, (double[]){1, 2, 3}), &u, &s, &v), TL_ERR_SHAPE);
  CHECK_STR(tl_last_error(ctx), "svd: needs matrices [.., m, n], not [3]");
  CHECK(!u && !s && !v);
  CHECK_INT(tl_svd(tl_cast(mat(ctx, 1, 1, (double[]){1}), TL_I64), &u, &s, &v), TL_ERR_DTYPE);
  CHECK_STR(tl_last_error(ctx), "svd: needs a float matrix, not i64");
  CHECK_INT(tl_svd(mat(ctx, 2, 2, (double[]){1, NAN, 0, 1}), &u, &s, &v), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "svd: the input holds a non-finite value (nan at flat index 1)");
  CHECK_INT(tl_eigh(mat(ctx, 1, 1, (double[]){INFINITY}), &u, &v), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "eigh: the input holds a non-finite value (inf at flat index 0)");
  tl_tensor *g = mat(ctx, 2, 2, (double[]){1, 0, 0, 1});
  tl_set_requires_grad(g, 1);
  CHECK_INT(tl_svd(g, &u, &s, &v), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "svd: has no gradient yet; detach the input (t.detach()) to use it");
  CHECK_INT(tl_eigh(g, &u, &v), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "eigh: has no gradient yet; detach the input (t.detach()) to use it");
  CHECK_INT(tl_svd(NULL, &u, &s, &v), TL_ERR_ARG);
  TEST_SHUTDOWN(ctx);
}
