/* linalg.c — inverse, det and solve of small square matrices (batched over leading
 * axes): LU with partial pivoting on the host, in f64, as numpy's LAPACK calls do.
 *
 * Autograd: the value is computed on the host, so autograd cannot see how. Each result
 * is therefore written as its value plus a term that is exactly zero in value but
 * linear in the input's change, built of public operations (so autograd records it):
 *   inverse(A) = Y - Y (A - A0) Y                   (d inverse = -A^-1 dA A^-1)
 *   det(A)     = d + sum((A - A0) * C)              (d det = sum(C dA), C the cofactors)
 *   solve(A,B) = X + Y ((B - B0) - (A - A0) X)       (dX = A^-1 (dB - dA X))
 * with A0, B0 the inputs detached and Y, X, d, C host values. A - A0 is exactly 0, so
 * the value is exact and the first derivative is torch's; derivatives of higher order
 * would treat Y, X and C as constants (autograd here computes first ones only). The
 * cofactors of a singular matrix come from its minors, so det's gradient is right
 * there too. No term is built when nothing requires grad. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"
#include "api/context.h"
#include "nn/nn_internal.h"

/* a = P L U in place (unit L below the diagonal); piv: the row taken at each step.
 * Returns the permutation's sign, 0 when a pivot is exactly 0 (singular). */
static int lu(double *a, int64_t n, int64_t *piv) {
  int sign = 1;
  for (int64_t k = 0; k < n; k++) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; i++)
      if (fabs(a[i * n + k]) > fabs(a[p * n + k])) p = i;
    piv[k] = p;
    if (a[p * n + k] == 0) return 0;
    if (p != k) {
      for (int64_t j = 0; j < n; j++) {
        double t = a[k * n + j];
        a[k * n + j] = a[p * n + j];
        a[p * n + j] = t;
      }
      sign = -sign;
    }
    for (int64_t i = k + 1; i < n; i++) {
      double f = a[i * n + k] /= a[k * n + k];
      for (int64_t j = k + 1; j < n; j++) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return sign;
}

/* b (n x m, row-major) becomes A^-1 b, A given as lu()'s factors */
static void lu_solve(const double *f, const int64_t *piv, int64_t n, double *b, int64_t m) {
  for (int64_t k = 0; k < n; k++)
    if (piv[k] != k)
      for (int64_t j = 0; j < m; j++) {
        double t = b[k * m + j];
        b[k * m + j] = b[piv[k] * m + j];
        b[piv[k] * m + j] = t;
      }
  for (int64_t j = 0; j < m; j++) {
    for (int64_t i = 1; i < n; i++)
      for (int64_t k = 0; k < i; k++) b[i * m + j] -= f[i * n + k] * b[k * m + j];
    for (int64_t i = n - 1; i >= 0; i--) {
      for (int64_t k = i + 1; k < n; k++) b[i * m + j] -= f[i * n + k] * b[k * m + j];
      b[i * m + j] /= f[i * n + i];
    }
  }
}

static double det_of(const double *a, int64_t n, double *work, int64_t *piv) {
  memcpy(work, a, sizeof(double) * (size_t)(n * n));
  int sign = lu(work, n, piv);
  double d = sign;
  for (int64_t i = 0; sign && i < n; i++) d *= work[i * n + i];
  return sign ? d : 0.0;
}

/* the matrices of t ([.., n, n], float) read to the host in f64; NULL with an error */
static double *read_square(tl_ctx *ctx, tl_tensor *t, const char *what, int64_t *n, int64_t *count) {
  int nd = tl_ndim(t);
  tl_dtype dt = tl_get_dtype(t);
  char sh[200];
  if (dt != TL_F32 && dt != TL_F64) {
    tl_nn_fail(ctx, TL_ERR_DTYPE, "%s: needs a float matrix, not %s", what, tl_dtype_name(dt));
    return NULL;
  }
  if (nd < 2 || tl_dim(t, -1) != tl_dim(t, -2)) {
    tl_nn_fail(ctx, TL_ERR_SHAPE, "%s: needs square matrices [.., n, n], not %s", what, tl_nn_shape_str(t, sh, sizeof sh));
    return NULL;
  }
  *n = tl_dim(t, -1);
  if (*n > 1024) {
    tl_nn_fail(ctx, TL_ERR_SHAPE, "%s: matrices of at most 1024 x 1024 (LU on the host), not %s", what,
               tl_nn_shape_str(t, sh, sizeof sh));
    return NULL;
  }
  int64_t total = tl_numel(t);
  *count = *n ? total / (*n * *n) : 0;
  double *buf = malloc(sizeof(double) * (size_t)(total ? total : 1));
  if (!buf) {
    tl_nn_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", what);
    return NULL;
  }
  tl_tensor *d = tl_cast(t, TL_F64);
  tl_status st = d ? tl_to_host(d, buf, sizeof(double) * (size_t)total) : TL_ERR_ARG;
  if (d) tl_release(d);
  if (st != TL_OK) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* a tensor of dtype dt holding f64 host values */
static tl_tensor *host_tensor(tl_ctx *ctx, tl_dtype dt, int nd, const int64_t *shape, const double *v) {
  tl_tensor *d = tl_from_data(ctx, TL_F64, nd, shape, v);
  return dt == TL_F64 ? d : tl_cast(d, dt);
}

static void shape_of(const tl_tensor *t, int64_t *shape) {
  for (int i = 0; i < tl_ndim(t); i++) shape[i] = tl_dim(t, i);
}

/* A - A0: zero in value, A's change for autograd */
static tl_tensor *change(tl_tensor *a) { return tl_sub(a, tl_detach(a)); }

/* the inverses of the matrices in a, or NULL (singular: which one) */
static double *inverses(tl_ctx *ctx, const double *a, int64_t n, int64_t count, const char *what) {
  double *inv = malloc(sizeof(double) * (size_t)(count * n * n + 1)), *f = malloc(sizeof(double) * (size_t)(n * n + 1));
  int64_t *piv = malloc(sizeof(int64_t) * (size_t)(n + 1));
  bool ok = inv && f && piv;
  for (int64_t b = 0; ok && b < count; b++) {
    memcpy(f, a + b * n * n, sizeof(double) * (size_t)(n * n));
    double *y = inv + b * n * n;
    for (int64_t i = 0; i < n * n; i++) y[i] = i / n == i % n;
    if (!lu(f, n, piv)) {
      tl_nn_fail(ctx, TL_ERR_ARG, count > 1 ? "%s: matrix %lld of the batch is singular" : "%s: the matrix is singular",
                 what, (long long)b);
      ok = false;
      break;
    }
    lu_solve(f, piv, n, y, n);
  }
  if (!ok && !inv) tl_nn_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", what);
  else if (!ok && (!f || !piv)) tl_nn_fail(ctx, TL_ERR_NOMEM, "%s: out of memory", what);
  free(f);
  free(piv);
  if (!ok) {
    free(inv);
    return NULL;
  }
  return inv;
}

tl_tensor *tl_inverse(tl_tensor *a) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  int64_t n, count, shape[TL_MAX_DIMS];
  double *host = read_square(ctx, a, "inverse", &n, &count);
  if (!host) return NULL;
  double *inv = inverses(ctx, host, n, count, "inverse");
  free(host);
  if (!inv) return NULL;
  tl_scope *s = tl_scope_begin(ctx, "inverse");
  shape_of(a, shape);
  tl_tensor *y = host_tensor(ctx, tl_get_dtype(a), tl_ndim(a), shape, inv);
  free(inv);
  tl_tensor *r = y;
  if (tl_requires_grad(a)) r = tl_sub(y, tl_matmul(tl_matmul(y, change(a)), y));
  return tl_api_finish(ctx, s, r, "inverse");
}

tl_tensor *tl_det(tl_tensor *a) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  int64_t n, count, shape[TL_MAX_DIMS];
  double *host = read_square(ctx, a, "det", &n, &count);
  if (!host) return NULL;
  bool grad = tl_requires_grad(a);
  double *det = malloc(sizeof(double) * (size_t)(count + 1)), *cof = grad ? malloc(sizeof(double) * (size_t)(count * n * n + 1)) : NULL;
  double *work = malloc(sizeof(double) * (size_t)(n * n + 1)), *minor = malloc(sizeof(double) * (size_t)(n * n + 1));
  int64_t *piv = malloc(sizeof(int64_t) * (size_t)(n + 1));
  if (!det || (grad && !cof) || !work || !minor || !piv) {
    free(host), free(det), free(cof), free(work), free(minor), free(piv);
    return tl_nn_fail(ctx, TL_ERR_NOMEM, "det: out of memory");
  }
  for (int64_t b = 0; b < count; b++) {
    const double *m = host + b * n * n;
    det[b] = det_of(m, n, work, piv);
    if (!grad) continue;
    double *c = cof + b * n * n;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) { /* C[i][j] = (-1)^(i+j) det(A without row i, column j) */
        int64_t k = 0;
        for (int64_t r = 0; r < n; r++)
          for (int64_t q = 0; q < n; q++)
            if (r != i && q != j) minor[k++] = m[r * n + q];
        c[i * n + j] = ((i + j) % 2 ? -1 : 1) * (n > 1 ? det_of(minor, n - 1, work, piv) : 1.0);
      }
  }
  free(host), free(work), free(minor), free(piv);
  tl_scope *s = tl_scope_begin(ctx, "det");
  shape_of(a, shape);
  tl_dtype dt = tl_get_dtype(a);
  int nd = tl_ndim(a);
  tl_tensor *r = host_tensor(ctx, dt, nd - 2, shape, det);
  if (grad) {
    int axes[2] = {nd - 2, nd - 1};
    r = tl_add(r, tl_sum(tl_mul(change(a), host_tensor(ctx, dt, nd, shape, cof)), 2, axes, 0));
  }
  free(det);
  free(cof);
  return tl_api_finish(ctx, s, r, "det");
}

tl_tensor *tl_solve(tl_tensor *a, tl_tensor *b) {
  tl_ctx *ctx = a && b ? tl_context(a) : NULL;
  if (!ctx || !tl_context(b)) return NULL;
  if (tl_context(b) != ctx) return tl_nn_fail(ctx, TL_ERR_ARG, "solve: tensors from different contexts");
  int64_t n, count, shape[TL_MAX_DIMS], bshape[TL_MAX_DIMS];
  int nd = tl_ndim(a), nb = tl_ndim(b);
  tl_dtype dt = tl_get_dtype(a);
  char sa[200], sb[200];
  if (tl_get_dtype(b) != dt)
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "solve: A is %s and B is %s; they must be one float dtype", tl_dtype_name(dt),
                      tl_dtype_name(tl_get_dtype(b)));
  /* B is [.., n, k] with A's batch axes, or [n] beside a single matrix (torch's forms) */
  bool vec = nb == 1 && nd == 2;
  bool fits = nd >= 2 && (vec ? tl_dim(b, 0) == tl_dim(a, -1) : nb == nd && tl_dim(b, -2) == tl_dim(a, -1));
  for (int i = 0; fits && !vec && i < nd - 2; i++) fits = tl_dim(a, i) == tl_dim(b, i);
  if (!fits)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "solve: A %s and B %s do not fit: B is [.., n, k] with A's batch axes, or [n]",
                      tl_nn_shape_str(a, sa, sizeof sa), tl_nn_shape_str(b, sb, sizeof sb));
  double *host = read_square(ctx, a, "solve", &n, &count);
  if (!host) return NULL;
  int64_t k = vec ? 1 : tl_dim(b, -1);
  double *x = malloc(sizeof(double) * (size_t)(count * n * k + 1));
  tl_tensor *bd = tl_cast(b, TL_F64);
  tl_status st = x && bd ? tl_to_host(bd, x, sizeof(double) * (size_t)(count * n * k)) : TL_ERR_NOMEM;
  if (bd) tl_release(bd);
  double *inv = st == TL_OK ? inverses(ctx, host, n, count, "solve") : NULL;
  if (!inv) {
    if (st == TL_ERR_NOMEM) tl_nn_fail(ctx, TL_ERR_NOMEM, "solve: out of memory");
    free(host), free(x);
    return NULL;
  }
  int64_t *piv = malloc(sizeof(int64_t) * (size_t)(n + 1));
  if (!piv) {
    free(host), free(x), free(inv);
    return tl_nn_fail(ctx, TL_ERR_NOMEM, "solve: out of memory");
  }
  for (int64_t i = 0; i < count; i++) { /* LU again (inverses kept no factors): X = A^-1 B, solved */
    lu(host + i * n * n, n, piv);
    lu_solve(host + i * n * n, piv, n, x + i * n * k, k);
  }
  free(host);
  free(piv);
  tl_scope *s = tl_scope_begin(ctx, "solve");
  shape_of(a, shape);
  shape_of(b, bshape);
  tl_tensor *r = host_tensor(ctx, dt, nb, bshape, x);
  free(x);
  if (tl_requires_grad(a) || tl_requires_grad(b)) {
    tl_tensor *y = host_tensor(ctx, dt, nd, shape, inv);
    tl_tensor *x2 = vec ? tl_reshape(r, 2, (int64_t[]){n, 1}) : r;
    tl_tensor *db = vec ? tl_reshape(change(b), 2, (int64_t[]){n, 1}) : change(b);
    tl_tensor *t = tl_matmul(y, tl_sub(db, tl_matmul(change(a), x2)));
    r = tl_add(r, vec ? tl_reshape(t, 1, &n) : t);
  }
  free(inv);
  return tl_api_finish(ctx, s, r, "solve");
}
