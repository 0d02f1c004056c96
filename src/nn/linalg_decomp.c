/* linalg_decomp.c — thin SVD and the symmetric eigendecomposition of small matrices
 * (batched over leading axes), on the host in f64 beside linalg.c's LU: one-sided
 * Jacobi for the SVD, cyclic Jacobi for eigh. Both converge to full accuracy on small
 * matrices with no shifting or deflation to get wrong. No gradient yet: an input that
 * requires grad is an error (torch has one).
 * Sign convention (singular and eigen vectors are unique only up to sign): each column
 * of the eigenvectors, and of svd's V when m >= n (its U when m < n), has its
 * largest-magnitude entry positive (the first such on a tie); the other factor follows
 * (U = A V / S), and its columns where S = 0 complete it orthonormally. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"
#include "nn/nn_internal.h"

enum { SWEEPS = 100 };

/* the matrices of t ([.., r, c], float, finite, no grad) read to the host in f64 */
static double *read_mats(tl_ctx *ctx, tl_tensor *t, const char *what, int64_t *r, int64_t *c, int64_t *count) {
  int nd = tl_ndim(t);
  tl_dtype dt = tl_get_dtype(t);
  char sh[200];
  if (dt != TL_F32 && dt != TL_F64)
    return (double *)tl_nn_fail(ctx, TL_ERR_DTYPE, "%s: needs a float matrix, not %s", what, tl_dtype_name(dt));
  if (nd < 2)
    return (double *)tl_nn_fail(ctx, TL_ERR_SHAPE, "%s: needs matrices [.., m, n], not %s", what, tl_nn_shape_str(t, sh, sizeof sh));
  *r = tl_dim(t, -2), *c = tl_dim(t, -1);
  if (*r > 1024 || *c > 1024)
    return (double *)tl_nn_fail(ctx, TL_ERR_SHAPE, "%s: matrices of at most 1024 x 1024 (Jacobi on the host), not %s", what,
                                tl_nn_shape_str(t, sh, sizeof sh));
  if (tl_requires_grad(t))
    return (double *)tl_nn_fail(ctx, TL_ERR_ARG, "%s: has no gradient yet; detach the input (t.detach()) to use it", what);
  int64_t total = tl_numel(t);
  *count = *r * *c != 0 ? total / (*r * *c) : 0;
  double *buf = malloc(sizeof(double) * (size_t)(total ? total : 1));
  if (!buf) return (double *)tl_nn_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", what);
  tl_tensor *d = tl_cast(t, TL_F64);
  tl_status st = d ? tl_to_host(d, buf, sizeof(double) * (size_t)total) : TL_ERR_ARG;
  if (d) tl_release(d);
  for (int64_t i = 0; st == TL_OK && i < total; i++)
    if (!isfinite(buf[i])) {
      tl_nn_fail(ctx, TL_ERR_ARG, "%s: the input holds a non-finite value (%g at flat index %lld)", what, buf[i], (long long)i);
      st = TL_ERR_ARG;
    }
  if (st != TL_OK) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* rotate columns p, q of x (rows x cols, row-major) by (c, s) */
static void rotate(double *x, int64_t rows, int64_t cols, int64_t p, int64_t q, double c, double s) {
  for (int64_t i = 0; i < rows; i++) {
    double a = x[i * cols + p], b = x[i * cols + q];
    x[i * cols + p] = c * a - s * b;
    x[i * cols + q] = s * a + c * b;
  }
}

/* flip column j of key (and of other, if given) so key's largest-|.| entry there is positive */
static void fix_sign(double *key, int64_t krows, double *other, int64_t orows, int64_t cols, int64_t j) {
  int64_t best = 0;
  for (int64_t i = 1; i < krows; i++)
    if (fabs(key[i * cols + j]) > fabs(key[best * cols + j])) best = i;
  if (krows && key[best * cols + j] < 0) {
    for (int64_t i = 0; i < krows; i++) key[i * cols + j] = -key[i * cols + j];
    for (int64_t i = 0; other && i < orows; i++) other[i * cols + j] = -other[i * cols + j];
  }
}

/* swap columns of x so that order[] (a permutation, sorted by key) holds */
static void permute_cols(double *x, int64_t rows, int64_t cols, const int64_t *order, double *tmp) {
  for (int64_t i = 0; i < rows; i++) {
    for (int64_t j = 0; j < cols; j++) tmp[j] = x[i * cols + order[j]];
    memcpy(x + i * cols, tmp, sizeof(double) * (size_t)cols);
  }
}

/* order[] sorts key descending (asc false) or ascending; insertion sort, stable */
static void sort_order(const double *key, int64_t n, bool asc, int64_t *order) {
  for (int64_t i = 0; i < n; i++) order[i] = i;
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = i; j > 0; j--) {
      double a = key[order[j - 1]], b = key[order[j]];
      if (asc ? a <= b : a >= b) break;
      int64_t t = order[j - 1];
      order[j - 1] = order[j];
      order[j] = t;
    }
}

/* column j of u (m x k) := a unit vector orthogonal to columns 0..j-1 (Gram-Schmidt on
 * the standard basis): completes U where a singular value is 0 */
static void complete_col(double *u, int64_t m, int64_t k, int64_t j) {
  for (int64_t e = 0; e < m; e++) {
    for (int64_t i = 0; i < m; i++) u[i * k + j] = i == e;
    for (int pass = 0; pass < 2; pass++)
      for (int64_t c = 0; c < j; c++) {
        double d = 0;
        for (int64_t i = 0; i < m; i++) d += u[i * k + c] * u[i * k + j];
        for (int64_t i = 0; i < m; i++) u[i * k + j] -= d * u[i * k + c];
      }
    double nrm = 0;
    for (int64_t i = 0; i < m; i++) nrm += u[i * k + j] * u[i * k + j];
    if (nrm > 0.25) { /* far enough from the span to be stable */
      nrm = sqrt(nrm);
      for (int64_t i = 0; i < m; i++) u[i * k + j] /= nrm;
      return;
    }
  }
}

/* a (m x n, m >= n) = U diag(S) V^T: u (m x n) starts as a, v (n x n); s[n] descending.
 * work: n doubles, order: n. One-sided Jacobi (Hestenes): rotate column pairs of u
 * until every pair is orthogonal, applying the same rotations to v. */
static void svd_tall(double *u, int64_t m, int64_t n, double *s, double *v, double *work, int64_t *order) {
  for (int64_t i = 0; i < n * n; i++) v[i] = i / n == i % n;
  for (int sweep = 0; sweep < SWEEPS; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < n - 1; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < m; i++) {
          double x = u[i * n + p], y = u[i * n + q];
          al += x * x, be += y * y, ga += x * y;
        }
        if (ga == 0 || fabs(ga) <= 1e-15 * sqrt(al * be)) continue;
        rotated = true;
        double zeta = (be - al) / (2 * ga);
        double t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(1 + zeta * zeta));
        double c = 1 / sqrt(1 + t * t), sn = c * t;
        rotate(u, m, n, p, q, c, sn);
        rotate(v, n, n, p, q, c, sn);
      }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < n; j++) {
    double nrm = 0;
    for (int64_t i = 0; i < m; i++) nrm += u[i * n + j] * u[i * n + j];
    s[j] = sqrt(nrm);
  }
  sort_order(s, n, false, order);
  permute_cols(u, m, n, order, work);
  permute_cols(v, n, n, order, work);
  for (int64_t j = 0; j < n; j++) work[j] = s[order[j]];
  memcpy(s, work, sizeof(double) * (size_t)n);
  double tiny = (n ? s[0] : 0) * 1e-13 * (double)(m > n ? m : n);
  for (int64_t j = 0; j < n; j++) {
    fix_sign(v, n, u, m, n, j);
    if (s[j] > tiny && s[j] > 0)
      for (int64_t i = 0; i < m; i++) u[i * n + j] /= s[j];
    else
      complete_col(u, m, n, j);
  }
}

/* eigh of the symmetric n x n matrix a (destroyed): values ascending in w, vectors in
 * the columns of v. work: n doubles, order: n. Cyclic Jacobi rotations zero the
 * off-diagonal entries one by one until none is left above rounding. */
static void eigh_one(double *a, int64_t n, double *w, double *v, double *work, int64_t *order) {
  for (int64_t i = 0; i < n * n; i++) v[i] = i / n == i % n;
  for (int sweep = 0; sweep < SWEEPS; sweep++) {
    double off = 0, diag = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) *(i == j ? &diag : &off) += a[i * n + j] * a[i * n + j];
    if (off <= 1e-30 * diag || off == 0) break;
    for (int64_t p = 0; p < n - 1; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double apq = a[p * n + q];
        if (apq == 0) continue;
        double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(1 + theta * theta));
        double c = 1 / sqrt(1 + t * t), s = t * c;
        /* A := J^T A J with J the rotation in the (p, q) plane */
        rotate(a, n, n, p, q, c, s);
        for (int64_t j = 0; j < n; j++) {
          double x = a[p * n + j], y = a[q * n + j];
          a[p * n + j] = c * x - s * y;
          a[q * n + j] = s * x + c * y;
        }
        a[p * n + q] = a[q * n + p] = 0;
        rotate(v, n, n, p, q, c, s);
      }
  }
  for (int64_t i = 0; i < n; i++) w[i] = a[i * n + i];
  sort_order(w, n, true, order);
  permute_cols(v, n, n, order, work);
  for (int64_t j = 0; j < n; j++) work[j] = w[order[j]];
  memcpy(w, work, sizeof(double) * (size_t)n);
  for (int64_t j = 0; j < n; j++) fix_sign(v, n, NULL, 0, n, j);
}

/* a tensor of dtype dt holding the f64 host values v (freed) */
static tl_tensor *out_tensor(tl_ctx *ctx, tl_dtype dt, int nd, const int64_t *shape, double *v) {
  tl_tensor *d = v ? tl_from_data(ctx, TL_F64, nd, shape, v) : NULL;
  free(v);
  if (!d || dt == TL_F64) return d;
  tl_tensor *r = tl_cast(d, dt);
  tl_release(d);
  return r;
}

/* the three outputs made, or all released and TL_ERR_NOMEM */
static tl_status hand_out(tl_ctx *ctx, tl_tensor **dst[3], tl_tensor *t[3], const char *what) {
  if (t[0] && t[1] && (t[2] || !dst[2])) {
    for (int i = 0; i < 3; i++)
      if (dst[i]) *dst[i] = t[i];
    return TL_OK;
  }
  for (int i = 0; i < 3; i++)
    if (t[i]) tl_release(t[i]);
  if (tl_last_status(ctx) == TL_OK) tl_nn_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", what);
  return tl_last_status(ctx) == TL_OK ? TL_ERR_NOMEM : tl_last_status(ctx);
}

tl_status tl_svd(tl_tensor *a, tl_tensor **u, tl_tensor **s, tl_tensor **v) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx || !u || !s || !v) return TL_ERR_ARG;
  *u = *s = *v = NULL;
  int64_t m, n, count;
  double *host = read_mats(ctx, a, "svd", &m, &n, &count);
  if (!host) return tl_last_status(ctx);
  bool wide = m < n; /* A^T = U' S V'^T gives A = V' S U'^T */
  int64_t r = wide ? n : m, c = wide ? m : n, k = c; /* the tall problem is r x c */
  double *uu = malloc(sizeof(double) * (size_t)(count * r * c + 1)), *vv = malloc(sizeof(double) * (size_t)(count * c * c + 1));
  double *ss = malloc(sizeof(double) * (size_t)(count * k + 1)), *work = malloc(sizeof(double) * (size_t)(r + 1));
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(r + 1));
  tl_tensor *t[3] = {NULL, NULL, NULL};
  if (uu && vv && ss && work && order) {
    for (int64_t b = 0; b < count; b++) {
      double *x = uu + b * r * c;
      const double *src = host + b * m * n;
      for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) x[i * c + j] = wide ? src[j * n + i] : src[i * n + j];
      svd_tall(x, r, c, ss + b * k, vv + b * c * c, work, order);
    }
    int nd = tl_ndim(a);
    int64_t shu[TL_MAX_DIMS], shv[TL_MAX_DIMS], shs[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) shu[i] = shv[i] = shs[i] = tl_dim(a, i);
    shu[nd - 2] = r, shu[nd - 1] = k, shv[nd - 2] = c, shv[nd - 1] = k, shs[nd - 2] = k;
    tl_dtype dt = tl_get_dtype(a);
    t[0] = out_tensor(ctx, dt, nd, shu, uu), uu = NULL; /* r x k: U, or V when wide */
    t[1] = out_tensor(ctx, dt, nd - 1, shs, ss), ss = NULL;
    t[2] = out_tensor(ctx, dt, nd, shv, vv), vv = NULL;
    if (wide) { /* swap: U' (n x k) is A's V, V' (m x k) is A's U */
      tl_tensor *x = t[0];
      t[0] = t[2], t[2] = x;
    }
  }
  free(host), free(uu), free(vv), free(ss), free(work), free(order);
  return hand_out(ctx, (tl_tensor **[3]){u, s, v}, t, "svd");
}

tl_status tl_eigh(tl_tensor *a, tl_tensor **values, tl_tensor **vectors) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx || !values || !vectors) return TL_ERR_ARG;
  *values = *vectors = NULL;
  int64_t m, n, count;
  char sh[200];
  double *host = read_mats(ctx, a, "eigh", &m, &n, &count);
  if (!host) return tl_last_status(ctx);
  if (m != n) {
    free(host);
    tl_nn_fail(ctx, TL_ERR_SHAPE, "eigh: needs square matrices [.., n, n], not %s", tl_nn_shape_str(a, sh, sizeof sh));
    return TL_ERR_SHAPE;
  }
  for (int64_t b = 0; b < count; b++) { /* symmetric to 1e-5 of the largest |entry| (f32's rounding, with room) */
    double *x = host + b * n * n, big = 0;
    for (int64_t i = 0; i < n * n; i++) big = fmax(big, fabs(x[i]));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++)
        if (fabs(x[i * n + j] - x[j * n + i]) > 1e-5 * big) {
          char which[64] = "the matrix";
          if (count > 1) snprintf(which, sizeof which, "matrix %lld of the batch", (long long)b);
          tl_nn_fail(ctx, TL_ERR_ARG, "eigh: %s is not symmetric: [%lld, %lld] is %g, [%lld, %lld] is %g", which, (long long)i,
                     (long long)j, x[i * n + j], (long long)j, (long long)i, x[j * n + i]);
          free(host);
          return TL_ERR_ARG;
        } else
          x[i * n + j] = x[j * n + i] = (x[i * n + j] + x[j * n + i]) / 2;
  }
  double *w = malloc(sizeof(double) * (size_t)(count * n + 1)), *vv = malloc(sizeof(double) * (size_t)(count * n * n + 1));
  double *work = malloc(sizeof(double) * (size_t)(n + 1));
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(n + 1));
  tl_tensor *t[3] = {NULL, NULL, NULL};
  if (w && vv && work && order) {
    for (int64_t b = 0; b < count; b++) eigh_one(host + b * n * n, n, w + b * n, vv + b * n * n, work, order);
    int nd = tl_ndim(a);
    int64_t sh2[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) sh2[i] = tl_dim(a, i);
    t[0] = out_tensor(ctx, tl_get_dtype(a), nd - 1, sh2, w), w = NULL;
    t[1] = out_tensor(ctx, tl_get_dtype(a), nd, sh2, vv), vv = NULL;
  }
  free(host), free(w), free(vv), free(work), free(order);
  return hand_out(ctx, (tl_tensor **[3]){values, vectors, NULL}, t, "eigh");
}
