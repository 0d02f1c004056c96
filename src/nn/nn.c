/* nn.c — losses, layer norm, embedding, dropout and parameter initializers.
 *
 * Every function here is a composition of public tl.h operations and nothing else:
 * autograd records each of those operations, so these need no backward rules of
 * their own and stay correct whatever the engine does underneath. Each one opens a
 * scope for its temporaries and hands its single result back with tl_scope_return,
 * so nothing leaks and the caller's scope owns the result. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"
/* Only for ctx->err: tl.h offers no way to set an error from outside src/api. */
#include "api/context.h"
#include "core/format.h"
#include "nn/nn_internal.h"

/* ---- helpers -------------------------------------------------------------------- */

/* Sets the message and returns NULL: the way out on bad input, before any scope
 * (`return tl_nn_fail(...) != NULL` in a check returning 0 on failure). */
tl_tensor *tl_nn_fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&ctx->err, st, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *tl_nn_shape_str(const tl_tensor *t, char *buf, size_t len) {
  int64_t shape[TL_MAX_DIMS];
  int n = tl_ndim(t); /* through the public API: t may be a stale or NULL handle ("[]") */
  for (int i = 0; i < n && i < TL_MAX_DIMS; i++) shape[i] = tl_dim(t, i);
  return tl_format_shape(buf, len, n < 0 ? 0 : n, shape);
}

static int tl_nn_same_shape(const tl_tensor *a, const tl_tensor *b) {
  if (tl_ndim(a) != tl_ndim(b)) return 0;
  for (int i = 0; i < tl_ndim(a); i++)
    if (tl_dim(a, i) != tl_dim(b, i)) return 0;
  return 1;
}

static int tl_nn_is_float(tl_dtype d) { return d == TL_F32 || d == TL_F64; }
static int tl_nn_is_int(tl_dtype d) { return tl_dtype_is_int(d); } /* indices: cast to i64 */

/* The context of a and b, or NULL with an error (stale handle, two contexts). */
static tl_ctx *tl_nn_ctx2(tl_tensor *a, tl_tensor *b, const char *what) {
  tl_ctx *ctx = tl_context(a);
  tl_ctx *other = ctx ? tl_context(b) : NULL;
  if (!ctx || !other) return NULL;
  if (other != ctx) {
    tl_nn_fail(ctx, TL_ERR_ARG, "%s: tensors from different contexts", what);
    return NULL;
  }
  return ctx;
}

/* Checks that every integer in idx lies in [0, n). The values have to be read to the
 * host (one small kernel and a copy): an out-of-range index would otherwise pick an
 * all-zero one-hot row (cross_entropy) or the nearest row (embedding's gather) and
 * give a silently wrong result. The first bad value is
 * named in the message: "<what>: <noun> 7 is out of range for 5 <unit>". */
static int tl_nn_check_range(tl_ctx *ctx, tl_tensor *idx, int64_t n, const char *what, const char *noun,
                             const char *unit) {
  int64_t count = tl_numel(idx);
  if (count <= 0) return 1;
  int64_t *host = malloc((size_t)count * sizeof *host);
  if (!host) {
    tl_nn_fail(ctx, TL_ERR_NOMEM, "%s: out of memory reading the %ss", what, noun);
    return 0;
  }
  int ok = tl_to_host(tl_cast(idx, TL_I64), host, (size_t)count * sizeof *host) == TL_OK;
  for (int64_t i = 0; ok && i < count; i++)
    if (host[i] < 0 || host[i] >= n) {
      tl_nn_fail(ctx, TL_ERR_RANGE, "%s: %s %lld is out of range for %lld %s", what, noun,
                 (long long)host[i], (long long)n, unit);
      ok = 0;
    }
  free(host);
  return ok;
}

/* one_hot[i, v] = (idx[i] == v), in dtype: idx is 1-D [N], the result [N, n] */
static tl_tensor *tl_nn_one_hot(tl_ctx *ctx, tl_tensor *idx, int64_t n, tl_dtype dtype) {
  int64_t rows = tl_numel(idx);
  tl_tensor *classes = tl_reshape(tl_arange(ctx, TL_I64, 0, (double)n, 1), 2, (int64_t[]){1, n});
  tl_tensor *column = tl_reshape(idx, 2, (int64_t[]){rows, 1});
  return tl_cast(tl_eq(column, classes), dtype);
}

/* ---- losses --------------------------------------------------------------------- */

tl_tensor *tl_mse_loss(tl_tensor *pred, tl_tensor *target) {
  if (!pred || !target) return NULL;
  tl_ctx *ctx = tl_nn_ctx2(pred, target, "mse_loss");
  if (!ctx) return NULL;
  char sa[200], sb[200];
  if (!tl_nn_same_shape(pred, target))
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "mse_loss: pred %s and target %s differ in shape",
                      tl_nn_shape_str(pred, sa, sizeof sa), tl_nn_shape_str(target, sb, sizeof sb));
  tl_scope *s = tl_scope_begin(ctx, "mse_loss");
  if (!s) return NULL;
  tl_tensor *d = tl_sub(pred, target);
  return tl_api_finish(ctx, s, tl_mean(tl_mul(d, d), 0, NULL, 0), "mse_loss");
}

static int tl_nn_ce_check(tl_ctx *ctx, tl_tensor *logits, tl_tensor *targets) {
  char sa[200], sb[200];
  tl_dtype lt = tl_get_dtype(logits), tt = tl_get_dtype(targets);
  if (tl_ndim(logits) != 2)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "cross_entropy: logits must be [N, C], got %s",
                      tl_nn_shape_str(logits, sa, sizeof sa)) != NULL;
  if (!tl_nn_is_float(lt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "cross_entropy: logits must be f32 or f64, got %s",
                      tl_dtype_name(lt)) != NULL;
  if (!tl_nn_is_int(tt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "cross_entropy: targets must be i32 or i64 class indices, got %s",
                      tl_dtype_name(tt)) != NULL;
  if (tl_ndim(targets) != 1 || tl_dim(targets, 0) != tl_dim(logits, 0))
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "cross_entropy: targets must be [N] = [%lld] for logits %s, got %s",
                      (long long)tl_dim(logits, 0), tl_nn_shape_str(logits, sa, sizeof sa),
                      tl_nn_shape_str(targets, sb, sizeof sb)) != NULL;
  return 1;
}

/* mean over n of -log_softmax(logits)[n, target[n]]; the pick is a one-hot mask
 * multiplied in and summed, so the gradient flows through ordinary operations. */
tl_tensor *tl_cross_entropy(tl_tensor *logits, tl_tensor *targets) {
  if (!logits || !targets) return NULL;
  tl_ctx *ctx = tl_nn_ctx2(logits, targets, "cross_entropy");
  if (!ctx || !tl_nn_ce_check(ctx, logits, targets)) return NULL;
  int64_t n = tl_dim(logits, 0), c = tl_dim(logits, 1);
  tl_scope *s = tl_scope_begin(ctx, "cross_entropy");
  if (!s) return NULL;
  if (!tl_nn_check_range(ctx, targets, c, "cross_entropy", "target", "classes"))
    return tl_api_finish(ctx, s, NULL, "cross_entropy");
  tl_tensor *mask = tl_nn_one_hot(ctx, targets, c, tl_get_dtype(logits));
  tl_tensor *picked = tl_sum(tl_mul(tl_log_softmax(logits, 1), mask), 0, NULL, 0);
  /* n == 0 gives 0 * -inf = NaN: the mean of nothing, as in PyTorch */
  return tl_api_finish(ctx, s, tl_mul_scalar(picked, -1.0 / (double)n), "cross_entropy");
}

tl_tensor *tl_binary_cross_entropy(tl_tensor *prob, tl_tensor *target) {
  if (!prob || !target) return NULL;
  tl_ctx *ctx = tl_nn_ctx2(prob, target, "binary_cross_entropy");
  if (!ctx) return NULL;
  char sa[200], sb[200];
  tl_dtype dt = tl_get_dtype(prob);
  if (!tl_nn_is_float(dt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "binary_cross_entropy: prob must be f32 or f64, got %s",
                      tl_dtype_name(dt));
  if (!tl_nn_same_shape(prob, target))
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "binary_cross_entropy: prob %s and target %s differ in shape",
                      tl_nn_shape_str(prob, sa, sizeof sa), tl_nn_shape_str(target, sb, sizeof sb));
  tl_scope *s = tl_scope_begin(ctx, "binary_cross_entropy");
  if (!s) return NULL;
  /* clamped so that log never sees 0: a saturated sigmoid must not give inf/NaN */
  tl_tensor *p = tl_minimum(tl_maximum(prob, tl_scalar(ctx, dt, 1e-7)), tl_scalar(ctx, dt, 1 - 1e-7));
  tl_tensor *t = tl_cast(target, dt);
  tl_tensor *pos = tl_mul(t, tl_log(p));
  tl_tensor *neg = tl_mul(tl_add_scalar(tl_neg(t), 1), tl_log(tl_add_scalar(tl_neg(p), 1)));
  return tl_api_finish(ctx, s, tl_neg(tl_mean(tl_add(pos, neg), 0, NULL, 0)), "binary_cross_entropy");
}

/* ---- layers --------------------------------------------------------------------- */

/* gamma or beta, when given, must be [D] of x's context */
static int tl_nn_check_affine(tl_ctx *ctx, tl_tensor *v, int64_t d, const char *name) {
  char sa[200];
  if (!v) return 1;
  tl_ctx *vc = tl_context(v);
  if (!vc) return 0;
  if (vc != ctx) return tl_nn_fail(ctx, TL_ERR_ARG, "layer_norm: %s comes from another context", name) != NULL;
  if (tl_ndim(v) == 1 && tl_dim(v, 0) == d) return 1;
  return tl_nn_fail(ctx, TL_ERR_SHAPE, "layer_norm: %s must be [%lld], got %s", name, (long long)d,
                      tl_nn_shape_str(v, sa, sizeof sa)) != NULL;
}

/* (x - mean) / sqrt(var + eps) * gamma + beta over the last axis, biased variance */
tl_tensor *tl_layer_norm(tl_tensor *x, tl_tensor *gamma, tl_tensor *beta, double eps) {
  if (!x) return NULL;
  tl_ctx *ctx = tl_context(x);
  if (!ctx) return NULL;
  tl_dtype dt = tl_get_dtype(x);
  if (!tl_nn_is_float(dt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "layer_norm: x must be f32 or f64, got %s", tl_dtype_name(dt));
  if (tl_ndim(x) < 1)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "layer_norm: x must have at least one axis");
  if (!(eps >= 0) || isinf(eps)) return tl_nn_fail(ctx, TL_ERR_ARG, "layer_norm: eps must be >= 0, got %g", eps);
  int64_t d = tl_dim(x, -1);
  if (!tl_nn_check_affine(ctx, gamma, d, "gamma") || !tl_nn_check_affine(ctx, beta, d, "beta")) return NULL;
  tl_scope *s = tl_scope_begin(ctx, "layer_norm");
  if (!s) return NULL;
  int last = -1;
  tl_tensor *centered = tl_sub(x, tl_mean(x, 1, &last, 1));
  tl_tensor *var = tl_mean(tl_mul(centered, centered), 1, &last, 1);
  tl_tensor *y = tl_div(centered, tl_sqrt(tl_add_scalar(var, eps)));
  if (gamma) y = tl_mul(y, gamma);
  if (beta) y = tl_add(y, beta);
  return tl_api_finish(ctx, s, y, "layer_norm");
}

/* Rows of weight picked by tl_gather_rows: O(N*D) work and memory for N indices, and
 * the weight's gradient a scatter-add of the same rows (O(N*D) plus the [V, D] fill).
 * The indices are read to the host first, so an out-of-range one is an error naming
 * it rather than the nearest row the gather clamps it to. */
tl_tensor *tl_embedding(tl_tensor *weight, tl_tensor *indices) {
  if (!weight || !indices) return NULL;
  tl_ctx *ctx = tl_nn_ctx2(weight, indices, "embedding");
  if (!ctx) return NULL;
  char sa[200];
  tl_dtype wt = tl_get_dtype(weight), it = tl_get_dtype(indices);
  if (tl_ndim(weight) != 2)
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "embedding: weight must be [V, D], got %s",
                      tl_nn_shape_str(weight, sa, sizeof sa));
  if (!tl_nn_is_float(wt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "embedding: weight must be f32 or f64, got %s", tl_dtype_name(wt));
  if (!tl_nn_is_int(it))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "embedding: indices must be i32 or i64, got %s", tl_dtype_name(it));
  int nd = tl_ndim(indices);
  if (nd >= TL_MAX_DIMS) /* the result has one more axis */
    return tl_nn_fail(ctx, TL_ERR_SHAPE, "embedding: indices have rank %d, at most %d leaves room for the result's axis",
                      nd, TL_MAX_DIMS - 1);
  int64_t v = tl_dim(weight, 0);
  tl_scope *s = tl_scope_begin(ctx, "embedding");
  if (!s) return NULL;
  if (!tl_nn_check_range(ctx, indices, v, "embedding", "index", "rows"))
    return tl_api_finish(ctx, s, NULL, "embedding");
  return tl_api_finish(ctx, s, tl_gather_rows(weight, indices), "embedding");
}

/* keep = rand >= p (probability 1 - p); kept values scaled by 1/(1-p) so the
 * expectation is unchanged. Not training (or p == 0): a reshape to the same shape, a
 * free view that is still a new handle of the caller's scope (tl_retain would hand
 * back the caller's own handle, which the caller could then release twice). */
tl_tensor *tl_dropout(tl_tensor *x, double p, int training) {
  if (!x) return NULL;
  tl_ctx *ctx = tl_context(x);
  if (!ctx) return NULL;
  tl_dtype dt = tl_get_dtype(x);
  if (!(p >= 0 && p < 1)) return tl_nn_fail(ctx, TL_ERR_ARG, "dropout: p must be in [0, 1), got %g", p);
  if (!tl_nn_is_float(dt))
    return tl_nn_fail(ctx, TL_ERR_DTYPE, "dropout: x must be f32 or f64, got %s", tl_dtype_name(dt));
  int nd = tl_ndim(x);
  int64_t shape[TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) shape[i] = tl_dim(x, i);
  tl_scope *s = tl_scope_begin(ctx, "dropout");
  if (!s) return NULL;
  if (!training || p == 0) return tl_api_finish(ctx, s, tl_reshape(x, nd, shape), "dropout");
  tl_tensor *keep = tl_ge(tl_rand(ctx, dt, nd, shape), tl_scalar(ctx, dt, p));
  tl_tensor *y = tl_where(keep, tl_mul_scalar(x, 1.0 / (1.0 - p)), tl_scalar(ctx, dt, 0));
  return tl_api_finish(ctx, s, y, "dropout");
}

/* ---- initializers --------------------------------------------------------------- */

/* v's values as a realized leaf requiring grad: detach cuts the random graph's
 * history, realizing makes the parameter a buffer that steps update in place. */
static tl_tensor *tl_nn_make_param(tl_ctx *ctx, tl_scope *s, tl_tensor *v, const char *what) {
  tl_tensor *leaf = tl_detach(v);
  if (leaf && (tl_set_requires_grad(leaf, 1) != TL_OK || tl_realize(leaf) != TL_OK)) leaf = NULL;
  return tl_api_finish(ctx, s, leaf, what);
}

static int tl_nn_check_init(tl_ctx *ctx, tl_dtype dtype, const char *what) {
  if (tl_nn_is_float(dtype)) return 1;
  return tl_nn_fail(ctx, TL_ERR_DTYPE, "%s: dtype must be f32 or f64, got %s", what, tl_dtype_name(dtype)) != NULL;
}

tl_tensor *tl_kaiming_normal(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, int64_t fan_in) {
  if (!ctx || !tl_nn_check_init(ctx, dtype, "kaiming_normal")) return NULL;
  if (fan_in <= 0)
    return tl_nn_fail(ctx, TL_ERR_ARG, "kaiming_normal: fan_in must be positive, got %lld", (long long)fan_in);
  tl_scope *s = tl_scope_begin(ctx, "kaiming_normal");
  if (!s) return NULL;
  tl_tensor *v = tl_mul_scalar(tl_randn(ctx, dtype, ndim, shape), sqrt(2.0 / (double)fan_in));
  return tl_nn_make_param(ctx, s, v, "kaiming_normal");
}

tl_tensor *tl_xavier_uniform(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, int64_t fan_in,
                             int64_t fan_out) {
  if (!ctx || !tl_nn_check_init(ctx, dtype, "xavier_uniform")) return NULL;
  if (fan_in <= 0 || fan_out <= 0)
    return tl_nn_fail(ctx, TL_ERR_ARG, "xavier_uniform: fan_in and fan_out must be positive, got %lld and %lld",
                      (long long)fan_in, (long long)fan_out);
  tl_scope *s = tl_scope_begin(ctx, "xavier_uniform");
  if (!s) return NULL;
  double a = sqrt(6.0 / ((double)fan_in + (double)fan_out)); /* no int64 overflow */
  tl_tensor *u = tl_add_scalar(tl_mul_scalar(tl_rand(ctx, dtype, ndim, shape), 2), -1); /* U[-1, 1) */
  return tl_nn_make_param(ctx, s, tl_mul_scalar(u, a), "xavier_uniform");
}
