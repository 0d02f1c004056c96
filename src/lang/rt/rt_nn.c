/* rt_nn.c — the run time of the layer methods (sema_nn.c, gen_nn.c): conv2d, pooling,
 * layer_norm and embedding over tl.h's layers, which compose the engine's operations,
 * so autograd goes through them. Declared in rt_ops.h. A failure (a shape that does
 * not fit, an index out of range) is a run-time error at the TL location carrying the
 * engine's message. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/rt/rt_ops.h"

#define CHECK(expr) tlrt_check(R, (expr), line, col)

tl_tensor *tlrt_conv2d(tlrt *R, tl_tensor *x, tl_tensor *kernel, tl_tensor *bias, int64_t padding, int64_t stride,
                       int line, int col) {
  return CHECK(tl_conv2d(x, kernel, bias, stride, stride, padding, padding));
}

tl_tensor *tlrt_pool2d(tlrt *R, tl_tensor *x, int64_t k, int64_t stride, int64_t padding, bool is_max, int line,
                       int col) {
  const char *what = is_max ? "max_pool2d" : "avg_pool2d";
  if (padding < 0 || (padding > 0 && padding > k / 2))
    tlrt_fail(R, line, col, "%s: padding must be in [0, kernel size / 2] = [0, %lld], got %lld", what,
              (long long)(k > 0 ? k / 2 : 0), (long long)padding);
  if (padding > 0 && tl_ndim(x) != 4) padding = 0; /* the pool names the bad rank */
  tl_tensor *xp = x;
  if (padding > 0) {
    int64_t w[4] = {0, 0, padding, padding};
    xp = CHECK(tl_pad(x, w, w, is_max ? -INFINITY : 0.0));
  }
  tl_tensor *r = is_max ? tl_max_pool2d(xp, k, k, stride, stride) : tl_avg_pool2d(xp, k, k, stride, stride);
  if (xp != x) tl_release(xp);
  return CHECK(r);
}

tl_tensor *tlrt_layer_norm(tlrt *R, tl_tensor *x, tl_tensor *w, tl_tensor *b, double eps, int line, int col) {
  return CHECK(tl_layer_norm(x, w, b, eps));
}

/* "[i, j]", the position of flat element k of t, into buf */
static const char *position(const tl_tensor *t, int64_t k, char *buf, size_t size) {
  int nd = tl_ndim(t), used = 0;
  int64_t at[8] = {0};
  for (int d = nd - 1; d >= 0 && d < 8; d--) {
    int64_t n = tl_dim(t, d);
    at[d] = n > 0 ? k % n : 0;
    k = n > 0 ? k / n : 0;
  }
  used += snprintf(buf, size, "[");
  for (int d = 0; d < nd && d < 8 && (size_t)used < size; d++)
    used += snprintf(buf + used, size - (size_t)used, "%s%lld", d ? ", " : "", (long long)at[d]);
  if ((size_t)used < size) snprintf(buf + used, size - (size_t)used, "]");
  return buf;
}

tl_tensor *tlrt_whole_indices(tlrt *R, tl_tensor *indices, int64_t n, const char *what, const char *index,
                              const char *unit, int line, int col) {
  int64_t count = tl_numel(indices);
  tl_tensor *f = CHECK(tl_cast(indices, TL_F64));
  const double *v = tl_data(f);
  if (!v) {
    tl_release(f);
    tlrt_check(R, NULL, line, col); /* the engine's message */
  }
  char at[96];
  for (int64_t k = 0; k < count; k++) {
    double x = v[k];
    if (x == floor(x) && x >= 0 && x < (double)n) continue;
    position(indices, k, at, sizeof at);
    tl_release(f);
    if (x != floor(x)) tlrt_fail(R, line, col, "%s: the %s at %s is %g, not a whole %s number", what, index, at, x, unit);
    const char *plural = unit[strlen(unit) - 1] == 's' ? "es" : "s"; /* rows, classes */
    tlrt_fail(R, line, col, "%s: the %s at %s is %s %g, out of range for %lld %s%s", what, index, at, unit, x, (long long)n,
              unit, plural);
  }
  tl_release(f);
  return CHECK(tl_cast(indices, TL_I64));
}

tl_tensor *tlrt_embedding(tlrt *R, tl_tensor *indices, tl_tensor *weights, int line, int col) {
  tl_dtype d = tl_get_dtype(indices);
  if (d != TL_F32 && d != TL_F64) return CHECK(tl_embedding(weights, indices));
  int64_t n = tl_ndim(weights) == 2 ? tl_dim(weights, 0) : INT64_MAX; /* else tl_embedding says why */
  tl_tensor *rows = tlrt_whole_indices(R, indices, n, "embedding", "index", "row", line, col);
  tl_tensor *r = tl_embedding(weights, rows);
  tl_release(rows);
  return CHECK(r);
}

static bool same_shape(const tl_tensor *a, const tl_tensor *b) {
  if (tl_ndim(a) != tl_ndim(b)) return false;
  for (int i = 0; i < tl_ndim(a); i++)
    if (tl_dim(a, i) != tl_dim(b, i)) return false;
  return true;
}

/* a realized leaf holding t's values; t is released */
static tl_tensor *settle(tl_tensor *t) {
  tl_tensor *d = t ? tl_detach(t) : NULL;
  if (t) tl_release(t);
  if (d && tl_realize(d) != TL_OK) {
    tl_release(d);
    d = NULL;
  }
  return d;
}

/* A factor that changes every step, as data (a 0-d tensor in the parameter's dtype):
 * as a constant it would be compiled into the kernels, and every step would compile
 * new ones (docs/decisions.md, "Constants are compiled into kernels") */
static tl_tensor *step_factor(tl_ctx *ctx, tl_dtype dt, double value) {
  float f = (float)value;
  return dt == TL_F64 ? tl_from_data(ctx, TL_F64, 0, NULL, &value) : tl_from_data(ctx, TL_F32, 0, NULL, &f);
}

void tlrt_adam_step(tlrt *R, tl_tensor **p, tl_tensor *grad, tl_tensor **m, tl_tensor **v, int64_t step, double lr,
                    double beta1, double beta2, double eps, double weight_decay, int line, int col) {
  tl_tensor *pt = *p, *mt = *m, *vt = *v;
  tl_dtype dt = tl_get_dtype(pt);
  if (dt != TL_F32 && dt != TL_F64) tlrt_fail(R, line, col, "adam_step: the parameter must be f32 or f64, not %s", tl_dtype_name(dt));
  if (!same_shape(pt, grad) || !same_shape(pt, mt) || !same_shape(pt, vt))
    tlrt_fail(R, line, col, "adam_step: the parameter, grad, m and v must have one shape");
  if (step < 0) tlrt_fail(R, line, col, "adam_step: step must be >= 0 (counted from 0), got %lld", (long long)step);
  tl_ctx *ctx = R->ctx;
  int was = tl_grad_enabled(ctx);
  tl_set_grad_enabled(ctx, 0);
  tl_scope *s = tl_scope_begin(ctx, "adam_step");
  double t = (double)step + 1, bc1 = 1 - pow(beta1, t), bc2 = 1 - pow(beta2, t);
  tl_tensor *g = tl_cast(grad, dt);
  tl_tensor *m2 = tl_add(tl_mul_scalar(mt, beta1), tl_mul_scalar(g, 1 - beta1));
  tl_tensor *v2 = tl_add(tl_mul_scalar(vt, beta2), tl_mul_scalar(tl_mul(g, g), 1 - beta2));
  tl_tensor *base = weight_decay != 0 ? tl_mul_scalar(pt, 1 - lr * weight_decay) : pt; /* decoupled decay */
  tl_tensor *upd = tl_div(tl_mul(m2, step_factor(ctx, dt, lr / bc1)),
                          tl_add_scalar(tl_sqrt(tl_mul(v2, step_factor(ctx, dt, 1 / bc2))), eps));
  tl_tensor *p2 = tl_sub(base, upd);
  if (m2) tl_scope_keep(s, m2);
  if (v2) tl_scope_keep(s, v2);
  if (p2) tl_scope_keep(s, p2);
  tl_scope_end(s);
  tl_set_grad_enabled(ctx, was);
  m2 = settle(m2);
  v2 = settle(v2);
  p2 = settle(p2);
  if (p2 && tl_requires_grad(pt) && tl_set_requires_grad(p2, 1) != TL_OK) {
    tl_release(p2);
    p2 = NULL;
  }
  if (!m2 || !v2 || !p2) {
    if (m2) tl_release(m2);
    if (v2) tl_release(v2);
    if (p2) tl_release(p2);
    tlrt_check_status(R, tl_last_status(ctx) ? tl_last_status(ctx) : TL_ERR_INTERNAL, line, col);
  }
  tlrt_tensor_release(R, pt);
  tlrt_tensor_release(R, mt);
  tlrt_tensor_release(R, vt);
  *p = p2;
  *m = m2;
  *v = v2;
}

/* -mean of x * w over every element, divided by count instead when count > 0 */
static tl_tensor *neg_mean_product(tlrt *R, tl_tensor *x, tl_tensor *w, int64_t count, int line, int col) {
  tl_tensor *prod = CHECK(tl_mul(x, w)); /* shapes that do not broadcast: the engine's message */
  tl_tensor *sum = CHECK(tl_sum(prod, 0, NULL, 0));
  int64_t n = count > 0 ? count : tl_numel(prod);
  tl_tensor *r = tl_mul_scalar(sum, n > 0 ? -1.0 / (double)n : NAN); /* nothing to average: NaN, as torch */
  tl_release(prod);
  tl_release(sum);
  return CHECK(r);
}

tl_tensor *tlrt_nll_loss(tlrt *R, tl_tensor *pred, tl_tensor *target, int line, int col) {
  int nd = tl_ndim(pred);
  if (nd < 1 || tl_ndim(target) != nd - 1) return neg_mean_product(R, pred, target, 0, line, col); /* the seed's */
  int64_t c = tl_dim(pred, nd - 1);
  tl_tensor *idx = tlrt_whole_indices(R, target, c, "nll_loss", "target", "class", line, col);
  tl_tensor *col_idx = CHECK(tl_unsqueeze(idx, nd - 1));
  tl_tensor *classes = CHECK(tl_arange(tl_context(pred), TL_I64, 0, (double)c, 1));
  tl_tensor *hot = CHECK(tl_eq(col_idx, classes)); /* [.., C]: true at each row's class */
  tl_tensor *w = CHECK(tl_cast(hot, tl_get_dtype(pred)));
  tl_tensor *r = neg_mean_product(R, pred, w, tl_numel(target), line, col);
  tl_release(idx);
  tl_release(col_idx);
  tl_release(classes);
  tl_release(hot);
  tl_release(w);
  return r;
}

tl_tensor *tlrt_kl_div_loss(tlrt *R, tl_tensor *p, tl_tensor *q, int line, int col) {
  const double eps = 1e-7;
  tl_tensor *qe = CHECK(tl_add_scalar(q, eps)), *pe = CHECK(tl_add_scalar(p, eps));
  tl_tensor *ratio = CHECK(tl_div(qe, pe)); /* shapes that do not broadcast: the engine's message */
  tl_tensor *lg = CHECK(tl_log(ratio));
  tl_tensor *term = CHECK(tl_mul(q, lg));
  tl_tensor *floor_ = CHECK(tl_scalar(tl_context(q), tl_get_dtype(q), eps));
  tl_tensor *keep = CHECK(tl_gt(q, floor_));
  tl_tensor *zero = CHECK(tl_scalar(tl_context(q), tl_get_dtype(term), 0));
  tl_tensor *kept = CHECK(tl_where(keep, term, zero));
  tl_tensor *r = tl_mean(kept, 0, NULL, 0);
  tl_release(qe);
  tl_release(pe);
  tl_release(ratio);
  tl_release(lg);
  tl_release(term);
  tl_release(floor_);
  tl_release(keep);
  tl_release(zero);
  tl_release(kept);
  return CHECK(r);
}

static tl_tensor *nonzero(tlrt *R, tl_tensor *a, int line, int col) {
  tl_tensor *z = CHECK(tl_scalar(tl_context(a), tl_get_dtype(a), 0));
  tl_tensor *r = tl_ne(a, z);
  tl_release(z);
  return CHECK(r);
}

tl_tensor *tlrt_logical(tlrt *R, int op, tl_tensor *a, tl_tensor *b, int line, int col) {
  tl_tensor *na = nonzero(R, a, line, col);
  if (op == 2) {
    tl_tensor *r = tl_logical_not(na);
    tl_release(na);
    return CHECK(r);
  }
  tl_tensor *nb = nonzero(R, b, line, col);
  tl_tensor *fixed = CHECK(tl_scalar(tl_context(a), TL_BOOL, op == 1)); /* and: false where a is; or: true */
  tl_tensor *r = op == 0 ? tl_where(na, nb, fixed) : tl_where(na, fixed, nb); /* shapes: the engine's message */
  tl_release(na);
  tl_release(nb);
  tl_release(fixed);
  return CHECK(r);
}

/* one row's k largest (ties: the earlier first; a NaN only when nothing else is left),
 * marked in w (k rows of n) */
static void pick_top(const double *v, int64_t n, int64_t k, bool *used, double *w) {
  memset(used, 0, (size_t)n * sizeof *used);
  for (int64_t j = 0; j < k; j++) {
    int64_t best = -1;
    for (int64_t i = 0; i < n; i++)
      if (!used[i] && (best < 0 || v[i] > v[best] || (isnan(v[best]) && !isnan(v[i])))) best = i;
    used[best] = true;
    w[j * n + best] = 1;
  }
}

tl_tensor *tlrt_topk(tlrt *R, tl_tensor *x, int64_t k, int line, int col) {
  int nd = tl_ndim(x);
  int64_t n = nd > 0 ? tl_dim(x, nd - 1) : 0, rows = n > 0 ? tl_numel(x) / n : 0;
  if (nd < 1 || k < 0 || k > n)
    tlrt_fail(R, line, col, "topk: k is %lld, but the last axis has %lld elements", (long long)k, (long long)n);
  if (rows > 0 && k > 0 && (double)rows * (double)k * (double)n > (double)(1 << 26))
    tlrt_fail(R, line, col, "topk: %lld rows of %lld, k = %lld, is too large here (the picks are a one-hot product)",
              (long long)rows, (long long)n, (long long)k);
  tl_tensor *h = CHECK(tl_cast(x, TL_F64));
  const double *v = rows ? tl_data(h) : NULL;
  if (rows && !v) {
    tl_release(h);
    tlrt_check(R, NULL, line, col); /* the engine's message */
  }
  size_t cells = (size_t)(rows * k * n);
  double *w = calloc(cells ? cells : 1, sizeof *w);
  bool *used = malloc((size_t)(n ? n : 1) * sizeof *used);
  if (!w || !used) {
    free(w);
    free(used);
    tl_release(h);
    tlrt_fail(R, line, col, "topk: out of memory");
  }
  for (int64_t r = 0; r < rows; r++) pick_top(v + r * n, n, k, used, w + r * k * n);
  free(used);
  tl_release(h);
  int64_t shape[TL_MAX_DIMS + 1];
  for (int i = 0; i < nd - 1; i++) shape[i] = tl_dim(x, i);
  shape[nd - 1] = k;
  shape[nd] = n;
  tl_tensor *w64 = tl_from_data(tl_context(x), TL_F64, nd + 1, shape, w);
  free(w);
  tl_tensor *hot = CHECK(tl_cast(CHECK(w64), tl_get_dtype(x)));
  tl_release(w64);
  tl_tensor *xr = CHECK(tl_unsqueeze(x, nd - 1)); /* [.., 1, n] against [.., k, n] */
  tl_tensor *prod = CHECK(tl_mul(xr, hot));
  int axis = nd;
  tl_tensor *r = tl_sum(prod, 1, &axis, 0);
  tl_release(hot);
  tl_release(xr);
  tl_release(prod);
  return CHECK(r);
}

/* p [C] as [1, C, 1, ..] against x of nd axes */
static tl_tensor *per_channel(tlrt *R, tl_tensor *p, int nd, int64_t c, const char *what, int line, int col) {
  if (tl_ndim(p) != 1 || tl_dim(p, 0) != c)
    tlrt_fail(R, line, col, "%s: expected [%lld] (one per channel), got a tensor of %d axes", what, (long long)c, tl_ndim(p));
  int64_t shape[TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) shape[i] = i == 1 ? c : 1;
  return CHECK(tl_reshape(p, nd, shape));
}

/* (x - mean) / sqrt(var + eps) over the axes, the variance biased (torch's) */
static tl_tensor *standardize(tlrt *R, tl_tensor *x, int na, const int *axes, double eps, int line, int col) {
  tl_tensor *mean = CHECK(tl_mean(x, na, axes, 1));
  tl_tensor *d = CHECK(tl_sub(x, mean));
  tl_tensor *sq = CHECK(tl_mul(d, d));
  tl_tensor *var = CHECK(tl_mean(sq, na, axes, 1));
  tl_tensor *ve = CHECK(tl_add_scalar(var, eps));
  tl_tensor *sd = CHECK(tl_sqrt(ve));
  tl_tensor *r = tl_div(d, sd);
  tl_release(mean);
  tl_release(d);
  tl_release(sq);
  tl_release(var);
  tl_release(ve);
  tl_release(sd);
  return CHECK(r);
}

static tl_tensor *normalized(tlrt *R, int kind, tl_tensor *x, tl_tensor *rm, tl_tensor *rv, int64_t k, double eps, int line,
                             int col) {
  int nd = tl_ndim(x), axes[TL_MAX_DIMS], na = 0;
  int64_t c = tl_dim(x, 1);
  if (kind == 0 && !k) { /* evaluation: the running statistics */
    tl_tensor *m = per_channel(R, rm, nd, c, "batch_norm running_mean", line, col);
    tl_tensor *v = per_channel(R, rv, nd, c, "batch_norm running_var", line, col);
    tl_tensor *d = CHECK(tl_sub(x, m));
    tl_tensor *ve = CHECK(tl_add_scalar(v, eps));
    tl_tensor *sd = CHECK(tl_sqrt(ve));
    tl_tensor *r = tl_div(d, sd);
    tl_release(m);
    tl_release(v);
    tl_release(d);
    tl_release(ve);
    tl_release(sd);
    return CHECK(r);
  }
  if (kind == 1) { /* [N, G, C / G * rest], over the last */
    if (k <= 0 || c % k)
      tlrt_fail(R, line, col, "group_norm: %lld groups do not divide %lld channels", (long long)k, (long long)c);
    int64_t n0 = tl_dim(x, 0), g3[3] = {n0, k, n0 > 0 ? tl_numel(x) / (n0 * k) : 0}, shape[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) shape[i] = tl_dim(x, i);
    tl_tensor *xg = CHECK(tl_reshape(x, 3, g3));
    int last = 2;
    tl_tensor *s = standardize(R, xg, 1, &last, eps, line, col);
    tl_tensor *r = tl_reshape(s, nd, shape);
    tl_release(xg);
    tl_release(s);
    return CHECK(r);
  }
  for (int i = kind == 0 ? 0 : 2; i < nd; i++)
    if (i != 1) axes[na++] = i; /* batch_norm training: all but the channels; instance_norm: after them */
  return standardize(R, x, na, axes, eps, line, col);
}

tl_tensor *tlrt_norm_layer(tlrt *R, int kind, tl_tensor *x, tl_tensor *rm, tl_tensor *rv, tl_tensor *w, tl_tensor *b,
                           int64_t k, double eps, int line, int col) {
  static const char *const names[] = {"batch_norm", "group_norm", "instance_norm"};
  int nd = tl_ndim(x);
  if (nd < (kind == 0 ? 2 : 3))
    tlrt_fail(R, line, col, "%s: needs an [N, C, ..] tensor of at least %d axes, not %d", names[kind], kind == 0 ? 2 : 3, nd);
  int64_t c = tl_dim(x, 1);
  tl_tensor *y = normalized(R, kind, x, rm, rv, k, eps, line, col);
  tl_tensor *wc = per_channel(R, w, nd, c, kind == 0 ? "batch_norm weight" : kind == 1 ? "group_norm weight" : "instance_norm weight", line, col);
  tl_tensor *bc = per_channel(R, b, nd, c, kind == 0 ? "batch_norm bias" : kind == 1 ? "group_norm bias" : "instance_norm bias", line, col);
  tl_tensor *yw = CHECK(tl_mul(y, wc));
  tl_tensor *r = tl_add(yw, bc);
  tl_release(y);
  tl_release(wc);
  tl_release(bc);
  tl_release(yw);
  return CHECK(r);
}

tl_tensor *tlrt_linear(tlrt *R, tl_tensor *x, tl_tensor *w, tl_tensor *b, int line, int col) {
  if (tl_ndim(w) != 2) tlrt_fail(R, line, col, "linear: the weight must be [out, in], not a tensor of %d axes", tl_ndim(w));
  tl_tensor *wt = CHECK(tl_transpose(w, 0, 1));
  tl_tensor *y = CHECK(tl_matmul(x, wt)); /* shapes that do not match: the engine's message */
  tl_release(wt);
  if (!b) return y;
  tl_tensor *r = tl_add(y, b);
  tl_release(y);
  return CHECK(r);
}

tl_tensor *tlrt_conv1d(tlrt *R, tl_tensor *x, tl_tensor *w, tl_tensor *b, int64_t stride, int64_t pad, int line, int col) {
  if (tl_ndim(x) != 3 || tl_ndim(w) != 3)
    tlrt_fail(R, line, col, "conv1d: needs x [N, C, L] and a kernel [O, C, K], not tensors of %d and %d axes", tl_ndim(x), tl_ndim(w));
  if (stride <= 0 || pad < 0) tlrt_fail(R, line, col, "conv1d: the stride must be positive and the padding not negative");
  tl_tensor *x4 = CHECK(tl_unsqueeze(x, 2)), *w4 = CHECK(tl_unsqueeze(w, 2));
  tl_tensor *y = tl_conv2d(x4, w4, b, 1, stride, 0, pad);
  tl_release(x4);
  tl_release(w4);
  tl_tensor *r = tl_squeeze(CHECK(y), 2);
  tl_release(y);
  return CHECK(r);
}

/* [out, in] weights taking an axis of n to m: mode 0 nearest (src floor(i n / m)), 1
 * linear with the ends aligned, 2 the mean of torch's adaptive bin [floor(i n / m),
 * ceil((i + 1) n / m)) */
static void axis_weights(int64_t mode, int64_t n, int64_t m, double *a) {
  for (int64_t i = 0; i < m; i++) {
    double *row = a + i * n;
    if (mode == 0) row[i * n / m] = 1;
    else if (mode == 1) {
      double s = m > 1 ? (double)i * (double)(n - 1) / (double)(m - 1) : 0;
      int64_t lo = (int64_t)floor(s), hi = lo + 1 < n ? lo + 1 : n - 1;
      row[lo] += 1 - (s - (double)lo);
      row[hi] += s - (double)lo;
    } else {
      int64_t lo = i * n / m, hi = ((i + 1) * n + m - 1) / m;
      for (int64_t j = lo; j < hi; j++) row[j] = 1.0 / (double)(hi - lo);
    }
  }
}

static tl_tensor *weights_tensor(tlrt *R, tl_tensor *like, int64_t mode, int64_t n, int64_t m, int line, int col) {
  double *a = calloc(n > 0 && m > 0 ? (size_t)(n * m) : 1, sizeof *a);
  if (!a) tlrt_fail(R, line, col, "resample: out of memory");
  axis_weights(mode, n, m, a);
  int64_t shape[2] = {m, n};
  tl_tensor *t = tl_from_data(tl_context(like), TL_F64, 2, shape, a);
  free(a);
  tl_tensor *r = tl_cast(CHECK(t), tl_get_dtype(like));
  tl_release(t);
  return CHECK(r);
}

tl_tensor *tlrt_resample(tlrt *R, tl_tensor *x, int64_t oh, int64_t ow, int64_t mode, int line, int col) {
  const char *what = mode == 2 ? "adaptive_avg_pool2d" : "interpolate";
  if (tl_ndim(x) != 4) tlrt_fail(R, line, col, "%s: needs an [N, C, H, W] tensor, not one of %d axes", what, tl_ndim(x));
  if (mode < 0 || mode > 2) tlrt_fail(R, line, col, "interpolate: mode %lld: 0 is nearest, 1 bilinear", (long long)mode);
  int64_t h = tl_dim(x, 2), w = tl_dim(x, 3);
  if (oh <= 0 || ow <= 0 || oh > (1 << 16) || ow > (1 << 16) || h == 0 || w == 0 || (mode == 2 && (oh > h || ow > w)))
    tlrt_fail(R, line, col, "%s: an output of %lld x %lld from %lld x %lld is out of range", what, (long long)oh, (long long)ow,
              (long long)h, (long long)w);
  tl_tensor *mh = weights_tensor(R, x, mode, h, oh, line, col), *mw = weights_tensor(R, x, mode, w, ow, line, col);
  tl_tensor *rows = CHECK(tl_matmul(mh, x)); /* [oh, h] @ [N, C, h, w] */
  tl_tensor *mwt = CHECK(tl_transpose(mw, 0, 1));
  tl_tensor *r = tl_matmul(rows, mwt); /* .. @ [w, ow] */
  tl_release(mh);
  tl_release(mw);
  tl_release(rows);
  tl_release(mwt);
  return CHECK(r);
}
