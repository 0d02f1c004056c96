/* rt_ml.c — the seed language's model helpers (rt_ml.h): VarBuilder's named parameters,
 * sampling a token from logits, and the in-place gradient clips. The samplers draw
 * their uniform numbers from the engine's stream (tl_rand), so Tensor::manual_seed
 * makes them repeat. */
#include "lang/rt/rt_ml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "lang/rt/rt_ops.h" /* tlrt_new */

#define CHECK(expr) tlrt_check(R, (expr), line, col)

/* the named parameters: a list, as a program names a handful */
typedef struct varbuilder_entry {
  char *name;
  tl_tensor *t;
  struct varbuilder_entry *next;
} varbuilder_entry;

static varbuilder_entry *find_param(tlrt *R, const tlrt_str *name) {
  for (varbuilder_entry *e = R->varbuilder; e; e = e->next)
    if (strlen(e->name) == (size_t)name->len && !memcmp(e->name, name->data, (size_t)name->len)) return e;
  return NULL;
}

tl_tensor *tlrt_varbuilder_get(tlrt *R, const tlrt_str *name, const tlrt_vec *shape, int line, int col) {
  int nd = (int)shape->len;
  const int64_t *dims = shape->data;
  if (nd > 8) tlrt_fail(R, line, col, "VarBuilder::get: a shape has at most 8 axes, not %d", nd);
  varbuilder_entry *e = find_param(R, name);
  if (e) {
    bool same = tl_ndim(e->t) == nd;
    for (int i = 0; same && i < nd; i++) same = tl_dim(e->t, i) == dims[i];
    if (!same) {
      char had[160], asked[160];
      int64_t d[8];
      int k = tl_ndim(e->t);
      for (int i = 0; i < k && i < 8; i++) d[i] = tl_dim(e->t, i);
      tl_format_shape(had, sizeof had, k < 8 ? k : 8, d);
      tl_format_shape(asked, sizeof asked, nd, dims);
      tlrt_fail(R, line, col, "VarBuilder::get: the parameter `%s` has shape %s, not %s", e->name, had, asked);
    }
    return tl_retain(e->t);
  }
  tl_tensor *t = tlrt_new(R, TLRT_NEW_RANDN, nd, dims, 0, true, line, col);
  e = calloc(1, sizeof *e);
  char *copy = malloc((size_t)name->len + 1);
  if (!e || !copy) {
    free(e);
    free(copy);
    tl_release(t);
    tlrt_fail(R, line, col, "out of memory");
  }
  memcpy(copy, name->data, (size_t)name->len);
  copy[name->len] = 0;
  e->name = copy;
  e->t = t;
  e->next = R->varbuilder;
  R->varbuilder = e;
  return tl_retain(t);
}

tl_tensor *tlrt_varbuilder_grad(tlrt *R, const tlrt_str *name, int line, int col) {
  varbuilder_entry *e = find_param(R, name);
  if (!e)
    tlrt_fail(R, line, col, "VarBuilder::grad: no parameter is called `%.*s` (VarBuilder::get makes it)",
              (int)(name->len > 200 ? 200 : name->len), name->data);
  return tlrt_grad(R, e->t, line, col);
}

void tlrt_varbuilder_end(tlrt *R) {
  while (R->varbuilder) {
    varbuilder_entry *e = R->varbuilder;
    R->varbuilder = e->next;
    tl_release(e->t);
    free(e->name);
    free(e);
  }
}

/* ---- sampling ---- */

typedef struct {
  double p;
  int64_t i;
} prob_at;

static int by_prob_desc(const void *a, const void *b) {
  const prob_at *x = a, *y = b;
  if (x->p != y->p) return x->p < y->p ? 1 : -1;
  return x->i < y->i ? -1 : x->i > y->i; /* ties: the lower index first, so draws repeat */
}

/* one row: softmax of the kept logits, then the index where the uniform u falls in
 * their running sum, kept in descending order of probability */
static int64_t sample_row(const double *z, int64_t n, prob_at *pa, int top_p, double k_or_p, double u) {
  double mx = -INFINITY;
  for (int64_t j = 0; j < n; j++) mx = z[j] > mx ? z[j] : mx;
  double sum = 0;
  for (int64_t j = 0; j < n; j++) {
    pa[j].p = exp(z[j] - mx);
    pa[j].i = j;
    sum += pa[j].p;
  }
  for (int64_t j = 0; j < n; j++) pa[j].p /= sum;
  qsort(pa, (size_t)n, sizeof *pa, by_prob_desc);
  int64_t keep = n;
  if (!top_p) keep = (int64_t)k_or_p < n ? (int64_t)k_or_p : n;
  else {
    double run = 0;
    for (keep = 0; keep < n;) {
      run += pa[keep++].p;
      if (run >= k_or_p) break;
    }
  }
  double kept = 0;
  for (int64_t j = 0; j < keep; j++) kept += pa[j].p;
  double target = u * kept, run = 0;
  for (int64_t j = 0; j < keep; j++) {
    run += pa[j].p;
    if (target < run) return pa[j].i;
  }
  return pa[keep - 1].i; /* u * kept rounded up to the last sum */
}

tl_tensor *tlrt_sample_logits(tlrt *R, tl_tensor *logits, int top_p, double k_or_p, int line, int col) {
  const char *what = top_p ? "top_p_sample" : "top_k_sample";
  tl_dtype dt = tl_get_dtype(logits);
  int nd = tl_ndim(logits);
  if (dt != TL_F32 && dt != TL_F64) tlrt_fail(R, line, col, "%s: the logits must be a float tensor, not %s", what, tl_dtype_name(dt));
  if (nd < 1) tlrt_fail(R, line, col, "%s: the logits need at least 1 axis (the vocabulary)", what);
  int64_t n = tl_dim(logits, nd - 1), rows = n ? tl_numel(logits) / n : 0;
  if (n == 0) tlrt_fail(R, line, col, "%s: the logits' last axis is empty", what);
  if (!top_p && (k_or_p < 1 || k_or_p != floor(k_or_p)))
    tlrt_fail(R, line, col, "top_k_sample: k must be a whole number of at least 1, not %g", k_or_p);
  if (top_p && !(k_or_p > 0 && k_or_p <= 1)) tlrt_fail(R, line, col, "top_p_sample: p must be in (0, 1], not %g", k_or_p);
  tl_tensor *z = CHECK(tl_cast(logits, TL_F64));
  int64_t nrows = rows;
  tl_tensor *u = tl_rand(R->ctx, TL_F64, 1, &nrows);
  const double *zd = u ? tl_data(z) : NULL, *ud = zd ? tl_data(u) : NULL;
  if (!ud) {
    tl_release(z);
    if (u) tl_release(u);
    CHECK(NULL);
  }
  for (int64_t j = 0; j < rows * n; j++)
    if (isnan(zd[j])) {
      tl_release(z);
      tl_release(u);
      tlrt_fail(R, line, col, "%s: the logits hold NaN", what);
    }
  prob_at *pa = malloc(sizeof *pa * (size_t)n);
  int64_t *idx = malloc(sizeof *idx * (size_t)(rows ? rows : 1));
  if (!pa || !idx) {
    free(pa);
    free(idx);
    tl_release(z);
    tl_release(u);
    tlrt_fail(R, line, col, "out of memory");
  }
  for (int64_t r = 0; r < rows; r++) idx[r] = sample_row(zd + r * n, n, pa, top_p, k_or_p, ud[r]);
  free(pa);
  tl_release(z);
  tl_release(u);
  int64_t shape[8];
  for (int i = 0; i < nd && i < 8; i++) shape[i] = tl_dim(logits, i);
  shape[nd - 1] = 1;
  tl_tensor *out = tl_from_data(R->ctx, TL_I64, nd, shape, idx);
  free(idx);
  return CHECK(out);
}

/* ---- gradient clips ---- */

static tl_tensor *scalar_like(tlrt *R, tl_tensor *t, double v) {
  float f = (float)v;
  return tl_get_dtype(t) == TL_F64 ? tl_from_data(R->ctx, TL_F64, 0, NULL, &v) : tl_from_data(R->ctx, TL_F32, 0, NULL, &f);
}

static void float_grad(tlrt *R, tl_tensor *g, const char *what, int line, int col) {
  tl_dtype dt = tl_get_dtype(g);
  if (dt != TL_F32 && dt != TL_F64) tlrt_fail(R, line, col, "%s: the gradient must be a float tensor, not %s", what, tl_dtype_name(dt));
}

void tlrt_clip_grad_value(tlrt *R, tl_tensor **g, double lo, double hi, int line, int col) {
  float_grad(R, *g, "clip_grad_value", line, col);
  if (!(lo <= hi)) tlrt_fail(R, line, col, "clip_grad_value: the lower bound %g is above the upper %g", lo, hi);
  tl_tensor *l = CHECK(scalar_like(R, *g, lo)), *h = CHECK(scalar_like(R, *g, hi));
  tl_tensor *a = tl_maximum(*g, l), *b = a ? tl_minimum(a, h) : NULL;
  tl_release(l);
  tl_release(h);
  if (a) tl_release(a);
  CHECK(b);
  tl_release(*g);
  *g = b;
}

double tlrt_clip_grad_norm(tlrt *R, tl_tensor **g, double max_norm, double p, int line, int col) {
  float_grad(R, *g, "clip_grad_norm", line, col);
  if (!(max_norm >= 0)) tlrt_fail(R, line, col, "clip_grad_norm: max_norm must be 0 or more, not %g", max_norm);
  if (!(p > 0)) tlrt_fail(R, line, col, "clip_grad_norm: the norm's p must be above 0, not %g", p);
  const void *d = tl_data(*g);
  if (!d && tl_numel(*g)) CHECK(NULL);
  int64_t n = tl_numel(*g);
  double norm = 0;
  bool f64 = tl_get_dtype(*g) == TL_F64;
  for (int64_t i = 0; i < n; i++) {
    double v = fabs(f64 ? ((const double *)d)[i] : ((const float *)d)[i]);
    if (isinf(p)) norm = v > norm ? v : norm;
    else norm += pow(v, p);
  }
  if (!isinf(p)) norm = pow(norm, 1 / p);
  double coef = max_norm / (norm + 1e-6); /* torch's: clipped only when above max_norm */
  if (coef < 1) {
    tl_tensor *c = CHECK(scalar_like(R, *g, coef));
    tl_tensor *s = tl_mul(*g, c);
    tl_release(c);
    CHECK(s);
    tl_release(*g);
    *g = s;
  }
  return norm;
}

/* ---- logits and attention, composed of the engine's operations (autograd follows) ---- */

tl_tensor *tlrt_temperature_scale(tlrt *R, tl_tensor *logits, double temp, int line, int col) {
  if (!(temp > 0)) tlrt_fail(R, line, col, "temperature_scale: the temperature must be above 0, not %g", temp);
  tl_tensor *k = CHECK(scalar_like(R, logits, 1 / temp));
  tl_tensor *r = tl_mul(logits, k);
  tl_release(k);
  return CHECK(r);
}

/* CTRL's penalty (Hugging Face's RepetitionPenaltyLogitsProcessor): along the last axis,
 * a logit whose index is among tokens is divided by penalty when above 0, else
 * multiplied by it */
tl_tensor *tlrt_repetition_penalty(tlrt *R, tl_tensor *logits, tl_tensor *tokens, double penalty, int line, int col) {
  if (!(penalty > 0)) tlrt_fail(R, line, col, "repetition_penalty: the penalty must be above 0, not %g", penalty);
  int nd = tl_ndim(logits);
  if (nd < 1) tlrt_fail(R, line, col, "repetition_penalty: the logits need at least 1 axis (the vocabulary)");
  int64_t n = tl_dim(logits, nd - 1), m = tl_numel(tokens);
  tl_tensor *ids = CHECK(tl_cast(tokens, TL_F64));
  const double *id = tl_data(ids);
  bool *mask = calloc((size_t)(n ? n : 1), 1);
  if (!id || !mask) {
    free(mask);
    tl_release(ids);
    CHECK(NULL);
  }
  for (int64_t i = 0; i < m; i++) {
    double v = id[i];
    if (!(v >= 0 && v < (double)n && v == floor(v))) {
      free(mask);
      tl_release(ids);
      tlrt_fail(R, line, col, "repetition_penalty: token %lld is %g, not a whole index in [0, %lld)", (long long)i, v, (long long)n);
    }
    mask[(int64_t)v] = true;
  }
  tl_release(ids);
  tl_tensor *mt = tl_from_data(R->ctx, TL_BOOL, 1, &n, mask);
  free(mask);
  CHECK(mt);
  tl_tensor *zero = scalar_like(R, logits, 0), *down = scalar_like(R, logits, 1 / penalty), *up = scalar_like(R, logits, penalty);
  tl_tensor *pos = zero ? tl_gt(logits, zero) : NULL, *a = down ? tl_mul(logits, down) : NULL, *b = up ? tl_mul(logits, up) : NULL;
  tl_tensor *pen = pos && a && b ? tl_where(pos, a, b) : NULL, *r = pen ? tl_where(mt, pen, logits) : NULL;
  tl_tensor *all[] = {mt, zero, down, up, pos, a, b, pen};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) tl_release(all[i]);
  return CHECK(r);
}

/* softmax(q k^T / sqrt(d)) v over the last two axes (torch's scaled_dot_product_attention) */
tl_tensor *tlrt_sdpa(tlrt *R, tl_tensor *q, tl_tensor *k, tl_tensor *v, int line, int col) {
  int nq = tl_ndim(q), nk = tl_ndim(k);
  if (nq < 2 || nk < 2) tlrt_fail(R, line, col, "sdpa: q, k and v need at least 2 axes ([.., seq, dim])");
  int64_t d = tl_dim(q, -1);
  tl_tensor *kt = CHECK(tl_transpose(k, nk - 2, nk - 1));
  tl_tensor *s = tl_matmul(q, kt);
  tl_release(kt);
  CHECK(s);
  tl_tensor *c = scalar_like(R, s, 1 / sqrt((double)(d ? d : 1)));
  tl_tensor *sc = c ? tl_mul(s, c) : NULL;
  tl_release(s);
  if (c) tl_release(c);
  CHECK(sc);
  tl_tensor *p = tl_softmax(sc, -1);
  tl_release(sc);
  CHECK(p);
  tl_tensor *r = tl_matmul(p, v);
  tl_release(p);
  return CHECK(r);
}

tl_tensor *tlrt_linalg(tlrt *R, int op, tl_tensor *a, tl_tensor *b, int line, int col) {
  if (op <= 2) return CHECK(op == 0 ? tl_inverse(a) : op == 1 ? tl_det(a) : tl_solve(a, b));
  tl_tensor *t[3] = {NULL, NULL, NULL}; /* svd: u, s, v; eigh: values, vectors */
  if (op <= 5) tl_svd(a, &t[0], &t[1], &t[2]);
  else tl_eigh(a, &t[0], &t[1]);
  int keep = op <= 5 ? op - 3 : op - 6;
  for (int i = 0; i < 3; i++)
    if (i != keep && t[i]) tl_release(t[i]);
  return CHECK(t[keep]);
}

void tlrt_svd(tlrt *R, tl_tensor *a, tl_tensor **u, tl_tensor **s, tl_tensor **v, int line, int col) {
  tlrt_check_status(R, tl_svd(a, u, s, v), line, col);
}
