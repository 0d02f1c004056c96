/* ops_index.c — torch's gather, scatter, argsort, logsumexp, any/all, roll and repeat,
 * built from the engine's operations (so their gradients are those operations'):
 * gather and scatter are row gathers of the flattened tensor at flat positions worked
 * out on the host, where the indices are read anyway to be checked; argsort sorts on
 * the host (the graph has no sort). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "graph/build.h"
#include "core/dtype.h"
#include "core/format.h"

static tl_tensor *fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) TL_PRINTF(3, 4);
static tl_tensor *fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&ctx->err, st, fmt, ap);
  va_end(ap);
  return NULL;
}

static void shape_of(const tl_tensor *t, int64_t *shape) {
  for (int i = 0; i < tl_ndim(t); i++) shape[i] = tl_dim(t, i);
}

static const char *shape_text(const tl_tensor *t, char *buf, size_t len) {
  int64_t shape[TL_MAX_DIMS];
  shape_of(t, shape);
  return tl_format_shape(buf, len, tl_ndim(t), shape);
}

/* ---- logsumexp, any, all ---------------------------------------------------------------- */
tl_tensor *tl_logsumexp(tl_tensor *a, int naxes, const int *axes, int keepdim) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  tl_dtype dt = tl_dtype_is_float(tl_get_dtype(a)) ? tl_get_dtype(a) : TL_F32;
  tl_scope *s = tl_scope_begin(ctx, "logsumexp");
  if (!s) return NULL;
  tl_tensor *x = tl_cast(a, dt);
  /* the shift m is a constant of the formula (the result does not depend on it), so it
   * takes no gradient; an infinite or NaN maximum shifts by 0 and comes out as itself */
  tl_tensor *m = tl_detach(tl_max(x, naxes, axes, 1));
  tl_tensor *finite = tl_lt(tl_abs(m), tl_scalar(ctx, dt, INFINITY));
  tl_tensor *shift = tl_where(finite, m, tl_scalar(ctx, dt, 0));
  tl_tensor *r = tl_add(tl_log(tl_sum(tl_exp(tl_sub(x, shift)), naxes, axes, 1)), shift);
  if (!keepdim) r = tl_sum(r, naxes, axes, 0); /* drops the reduced axes, each of size 1 */
  return tl_api_finish(ctx, s, r, "logsumexp");
}

static tl_tensor *any_all(tl_tensor *a, int naxes, const int *axes, int keepdim, bool all, const char *what) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  tl_scope *s = tl_scope_begin(ctx, what);
  if (!s) return NULL;
  tl_tensor *zero = tl_scalar(ctx, tl_get_dtype(a), 0);
  /* any: some element is nonzero; all: no element is zero (a sum of bools counts, in i64) */
  tl_tensor *hit = all ? tl_eq(a, zero) : tl_ne(a, zero);
  tl_tensor *count = tl_sum(hit, naxes, axes, keepdim), *none = tl_scalar(ctx, TL_I64, 0);
  return tl_api_finish(ctx, s, all ? tl_eq(count, none) : tl_gt(count, none), what);
}

tl_tensor *tl_any(tl_tensor *a, int n, const int *axes, int k) { return any_all(a, n, axes, k, false, "any"); }
tl_tensor *tl_all(tl_tensor *a, int n, const int *axes, int k) { return any_all(a, n, axes, k, true, "all"); }

/* ---- argsort: a stable merge sort of each line on the host ------------------------------- */
typedef struct {
  const double *f;  /* float keys, or */
  const int64_t *i; /* integer keys (exact beyond 2^53) */
  bool descending;
} sort_keys;

/* -1, 0, 1: x before, beside or after y; NaN is the largest value */
static int key_cmp(const sort_keys *k, int64_t x, int64_t y) {
  int c;
  if (k->i) c = k->i[x] < k->i[y] ? -1 : k->i[x] > k->i[y];
  else {
    double a = k->f[x], b = k->f[y];
    c = isnan(a) ? !isnan(b) : isnan(b) ? -1 : a < b ? -1 : a > b;
  }
  return k->descending ? -c : c;
}

/* sorts idx[0..n) (element numbers) by their keys; equal keys keep their order */
static void merge_sort(const sort_keys *k, int64_t *idx, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(k, idx, tmp, h);
  merge_sort(k, idx + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = key_cmp(k, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[o++] = idx[i++];
  while (j < n) tmp[o++] = idx[j++];
  memcpy(idx, tmp, sizeof *idx * (size_t)n);
}

/* each line of `len` elements `inner` apart, of `outer` blocks: sorted into out */
static void sort_lines(const sort_keys *k, int64_t outer, int64_t len, int64_t inner, int64_t *line, int64_t *tmp,
                       int64_t *out) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * len * inner + in;
      for (int64_t j = 0; j < len; j++) line[j] = base + j * inner;
      merge_sort(k, line, tmp, len);
      for (int64_t j = 0; j < len; j++) out[base + j * inner] = (line[j] - base) / inner;
    }
}

tl_tensor *tl_argsort(tl_tensor *a, int axis, int descending) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  int nd = tl_ndim(a), ax = axis;
  if (!tl_api_axis(ctx, nd ? nd : 1, &ax, "argsort")) return NULL; /* a 0-d tensor sorts as [1] */
  int64_t shape[TL_MAX_DIMS], outer = 1, inner = 1, n = tl_numel(a), len = nd ? tl_dim(a, ax) : 1;
  shape_of(a, shape);
  for (int i = 0; i < nd; i++) {
    if (i < ax) outer *= shape[i];
    if (i > ax) inner *= shape[i];
  }
  if (n == 0) return tl_zeros(ctx, TL_I64, nd, shape);
  bool ints = !tl_dtype_is_float(tl_get_dtype(a));
  void *keys = malloc((size_t)n * 8);
  int64_t *out = malloc((size_t)n * 8), *line = malloc((size_t)len * 8), *tmp = malloc((size_t)len * 8);
  tl_scope *s = keys && out && line && tmp ? tl_scope_begin(ctx, "argsort") : NULL;
  tl_tensor *r = NULL;
  if (!s) fail(ctx, TL_ERR_NOMEM, "argsort: out of memory for %lld elements", (long long)n);
  else {
    if (tl_to_host(tl_cast(a, ints ? TL_I64 : TL_F64), keys, (size_t)n * 8) == TL_OK) {
      sort_keys k = {ints ? NULL : keys, ints ? keys : NULL, descending != 0};
      sort_lines(&k, outer, len, inner, line, tmp, out);
      r = tl_from_data(ctx, TL_I64, nd, shape, out);
    }
    r = tl_api_finish(ctx, s, r, "argsort");
  }
  free(keys);
  free(out);
  free(line);
  free(tmp);
  return r;
}

/* ---- gather and scatter --------------------------------------------------------------- */
/* The checked operands of gather or scatter: ctx, axis normalized, index's values on
 * the host (v, m of them) and its shape; src (scatter's) may be NULL. */
typedef struct {
  tl_ctx *ctx;
  const char *what;
  int nd, axis;
  int64_t shape[TL_MAX_DIMS], ishape[TL_MAX_DIMS], sshape[TL_MAX_DIMS];
  int64_t *v, m;
} index_op;

static bool check_operands(index_op *op, tl_tensor *a, int axis, tl_tensor *index, tl_tensor *src) {
  tl_ctx *ctx = op->ctx;
  char sa[TL_SHAPE_TEXT_MAX], sb[TL_SHAPE_TEXT_MAX];
  if (tl_context(index) != ctx || (src && tl_context(src) != ctx))
    return fail(ctx, TL_ERR_ARG, "%s: tensors from different contexts", op->what), false;
  tl_dtype it = tl_get_dtype(index);
  if (it != TL_I32 && it != TL_I64)
    return fail(ctx, TL_ERR_DTYPE, "%s: the index must be an integer tensor (i64 or i32), not %s", op->what,
                tl_dtype_name(it)), false;
  op->nd = tl_ndim(a);
  op->axis = axis;
  if (!tl_api_axis(ctx, op->nd ? op->nd : 1, &op->axis, op->what)) return false;
  if (tl_ndim(index) != op->nd || (src && tl_ndim(src) != op->nd))
    return fail(ctx, TL_ERR_SHAPE, "%s: the index %s%s%s and the tensor %s differ in their number of axes", op->what,
                shape_text(index, sb, sizeof sb), src ? ", src " : "",
                src ? shape_text(src, (char[TL_SHAPE_TEXT_MAX]){0}, TL_SHAPE_TEXT_MAX) : "", shape_text(a, sa, sizeof sa)), false;
  shape_of(a, op->shape);
  shape_of(index, op->ishape);
  if (src) shape_of(src, op->sshape);
  for (int d = 0; d < op->nd; d++) {
    if (d != op->axis && op->ishape[d] > op->shape[d])
      return fail(ctx, TL_ERR_SHAPE, "%s: index %s is larger than the tensor %s along axis %d", op->what,
                  shape_text(index, sb, sizeof sb), shape_text(a, sa, sizeof sa), d), false;
    if (src && op->ishape[d] > op->sshape[d])
      return fail(ctx, TL_ERR_SHAPE, "%s: index %s is larger than src %s along axis %d", op->what,
                  shape_text(index, sb, sizeof sb), shape_text(src, sa, sizeof sa), d), false;
  }
  return true;
}

/* index's values to the host, each checked against the size of the axis; the first bad
 * one is named with its position */
static bool read_index(index_op *op, tl_tensor *index) {
  op->m = tl_numel(index);
  op->v = malloc((size_t)(op->m ? op->m : 1) * sizeof *op->v);
  if (!op->v) return fail(op->ctx, TL_ERR_NOMEM, "%s: out of memory reading the index", op->what), false;
  if (op->m && tl_to_host(tl_cast(index, TL_I64), op->v, (size_t)op->m * sizeof *op->v) != TL_OK) return false;
  int64_t size = op->nd ? op->shape[op->axis] : 1, c[TL_MAX_DIMS] = {0};
  for (int64_t p = 0; p < op->m; p++) {
    if (op->v[p] < 0 || op->v[p] >= size) {
      char pos[TL_SHAPE_TEXT_MAX];
      tl_format_shape(pos, sizeof pos, op->nd, c);
      return fail(op->ctx, TL_ERR_RANGE, "%s: index %lld at %s is out of range for axis %d of size %lld", op->what,
                  (long long)op->v[p], pos, op->axis, (long long)size), false;
    }
    for (int d = op->nd - 1; d >= 0 && ++c[d] == op->ishape[d]; d--) c[d] = 0; /* the next position */
  }
  return true;
}

/* for each position p of index: its element in a tensor of `shape` with the axis's
 * coordinate replaced by v[p] (use_v), or kept (the element of src at p) */
static void flat_positions(const index_op *op, const int64_t *shape, bool use_v, int64_t *flat) {
  int64_t stride[TL_MAX_DIMS], c[TL_MAX_DIMS] = {0}, st = 1;
  for (int d = op->nd - 1; d >= 0; d--) stride[d] = st, st *= shape[d];
  for (int64_t p = 0; p < op->m; p++) {
    int64_t f = 0;
    for (int d = 0; d < op->nd; d++) f += (d == op->axis && use_v ? op->v[p] : c[d]) * stride[d];
    flat[p] = f;
    for (int d = op->nd - 1; d >= 0 && ++c[d] == op->ishape[d]; d--) c[d] = 0;
  }
}

/* t's elements at the flat positions pos (m of them), as a tensor of shape (nd, shape) */
static tl_tensor *pick(tl_ctx *ctx, tl_tensor *t, const int64_t *pos, int64_t m, int nd, const int64_t *shape) {
  tl_tensor *column = tl_reshape(t, 2, (int64_t[]){tl_numel(t), 1});
  tl_tensor *rows = tl_gather_rows(column, tl_from_data(ctx, TL_I64, 1, (int64_t[]){m}, pos));
  return tl_reshape(rows, nd, shape);
}

tl_tensor *tl_gather(tl_tensor *a, int axis, tl_tensor *index) {
  tl_ctx *ctx = a && index ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  index_op op = {.ctx = ctx, .what = "gather"};
  if (!check_operands(&op, a, axis, index, NULL)) return NULL;
  tl_scope *s = tl_scope_begin(ctx, "gather");
  if (!s) return NULL;
  tl_tensor *r = NULL;
  if (read_index(&op, index)) {
    if (op.m == 0) r = tl_zeros(ctx, tl_get_dtype(a), op.nd, op.ishape);
    else {
      int64_t *flat = malloc((size_t)op.m * sizeof *flat);
      if (!flat) fail(ctx, TL_ERR_NOMEM, "gather: out of memory");
      else {
        flat_positions(&op, op.shape, true, flat);
        r = pick(ctx, a, flat, op.m, op.nd, op.ishape);
      }
      free(flat);
    }
  }
  free(op.v);
  return tl_api_finish(ctx, s, r, "gather");
}

/* for each position p of index: the element of a it goes to and the element of src it
 * comes from (malloc'd; false: out of memory, said) */
static bool positions(const index_op *op, int64_t **to, int64_t **from) {
  *to = malloc((size_t)op->m * sizeof **to);
  *from = malloc((size_t)op->m * sizeof **from);
  if (!*to || !*from) {
    free(*to);
    free(*from);
    return fail(op->ctx, TL_ERR_NOMEM, "%s: out of memory", op->what), false;
  }
  flat_positions(op, op->shape, true, *to);
  flat_positions(op, op->sshape, false, *from);
  return true;
}

/* where each element of a gets written: from[e] = the element of src, hit[e] (the last
 * write wins) */
static bool scatter_sources(const index_op *op, int64_t n, int64_t *from, bool *hit) {
  int64_t *to, *src;
  if (!positions(op, &to, &src)) return false;
  for (int64_t e = 0; e < n; e++) from[e] = 0, hit[e] = false;
  for (int64_t p = 0; p < op->m; p++) from[to[p]] = src[p], hit[to[p]] = true;
  free(to);
  free(src);
  return true;
}

tl_tensor *tl_scatter(tl_tensor *a, int axis, tl_tensor *index, tl_tensor *src) {
  tl_ctx *ctx = a && index && src ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  index_op op = {.ctx = ctx, .what = "scatter"};
  if (!check_operands(&op, a, axis, index, src)) return NULL;
  tl_scope *s = tl_scope_begin(ctx, "scatter");
  if (!s) return NULL;
  tl_tensor *r = NULL;
  int64_t n = tl_numel(a), *from = malloc((size_t)(n ? n : 1) * sizeof *from);
  bool *hit = malloc((size_t)(n ? n : 1));
  if (!from || !hit) fail(ctx, TL_ERR_NOMEM, "scatter: out of memory");
  else if (!read_index(&op, index)) r = NULL;
  else if (op.m == 0 || n == 0) r = tl_reshape(a, op.nd, op.shape);
  else if (scatter_sources(&op, n, from, hit)) {
    /* a's elements where nothing was written, src's picked elements elsewhere: each
     * takes its gradient through where and the row gather */
    tl_tensor *written = tl_from_data(ctx, TL_BOOL, op.nd, op.shape, hit);
    tl_tensor *moved = pick(ctx, tl_cast(src, tl_get_dtype(a)), from, n, op.nd, op.shape);
    r = tl_where(written, moved, a);
  }
  free(op.v);
  free(from);
  free(hit);
  return tl_api_finish(ctx, s, r, "scatter");
}

/* values [M, 1] added into the rows idx [M] of a zero [rows, 1]: one SCATTER_ADD node,
 * whose gradient is the row gather of the output's gradient at idx */
static tl_tensor *rows_add(tl_tensor *values, tl_tensor *idx, int64_t rows) {
  if (!values || !idx || !(values = tl_api_tensor(values, "scatter_add")) || !(idx = tl_api_tensor(idx, "scatter_add")))
    return NULL;
  tl_ctx *ctx = values->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  return tl_api_wrap_op(ctx, "scatter_add", tl_build_scatter_add(&ctx->graph, values->u, idx->u, rows), mark,
                        TL_AG_SCATTER_ADD, 2, (tl_tensor *[]){values, idx}, NULL, 0);
}

tl_tensor *tl_scatter_add(tl_tensor *a, int axis, tl_tensor *index, tl_tensor *src) {
  tl_ctx *ctx = a && index && src ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  index_op op = {.ctx = ctx, .what = "scatter_add"};
  if (!check_operands(&op, a, axis, index, src)) return NULL;
  tl_scope *s = tl_scope_begin(ctx, "scatter_add");
  if (!s) return NULL;
  tl_tensor *r = NULL;
  int64_t *to = NULL, *from = NULL, n = tl_numel(a);
  tl_dtype dt = tl_get_dtype(a), work = tl_dtype_is_float(dt) ? dt : TL_F64; /* the scatter adds floats */
  if (!read_index(&op, index)) r = NULL;
  else if (op.m == 0 || n == 0) r = tl_reshape(a, op.nd, op.shape);
  else if (positions(&op, &to, &from)) {
    tl_tensor *vals = pick(ctx, tl_cast(src, work), from, op.m, 2, (int64_t[]){op.m, 1});
    tl_tensor *sums = rows_add(vals, tl_from_data(ctx, TL_I64, 1, (int64_t[]){op.m}, to), n);
    r = tl_cast(tl_add(tl_cast(a, work), tl_reshape(sums, op.nd, op.shape)), dt);
  }
  free(op.v);
  free(to);
  free(from);
  return tl_api_finish(ctx, s, r, "scatter_add");
}

/* ---- roll and repeat ---------------------------------------------------------------------- */
/* x rolled by `shift` along axis ax: its last s elements come first */
static tl_tensor *roll_axis(tl_tensor *x, int64_t shift, int ax) {
  int64_t len = tl_dim(x, ax);
  int64_t k = len ? ((shift % len) + len) % len : 0;
  if (k == 0) {
    int64_t shape[TL_MAX_DIMS];
    shape_of(x, shape);
    return tl_reshape(x, tl_ndim(x), shape); /* a handle of this scope */
  }
  tl_tensor *parts[2] = {tl_slice(x, ax, len - k, len, 1), tl_slice(x, ax, 0, len - k, 1)};
  return tl_cat(2, parts, ax);
}

tl_tensor *tl_roll(tl_tensor *a, int n, const int64_t *shifts, const int *axes) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  if (n < 1 || !shifts || (!axes && n != 1))
    return fail(ctx, TL_ERR_ARG, "roll: give one shift and no axes, or a shift per axis (got %d shifts%s)", n,
                axes ? " with axes" : " without axes");
  int nd = tl_ndim(a), ax[TL_MAX_DIMS];
  if (axes && n > TL_MAX_DIMS) return fail(ctx, TL_ERR_ARG, "roll: %d axes, more than a tensor has", n);
  for (int i = 0; axes && i < n; i++) {
    ax[i] = axes[i];
    if (!tl_api_axis(ctx, nd, &ax[i], "roll")) return NULL;
  }
  tl_scope *s = tl_scope_begin(ctx, "roll");
  if (!s) return NULL;
  int64_t shape[TL_MAX_DIMS];
  shape_of(a, shape);
  tl_tensor *r;
  if (!axes) r = tl_reshape(roll_axis(tl_reshape(a, 1, (int64_t[]){tl_numel(a)}), shifts[0], 0), nd, shape);
  else {
    r = a;
    for (int i = 0; i < n; i++) r = roll_axis(r, shifts[i], ax[i]);
  }
  return tl_api_finish(ctx, s, r, "roll");
}

tl_tensor *tl_repeat(tl_tensor *a, int n, const int64_t *reps) {
  tl_ctx *ctx = a ? tl_context(a) : NULL;
  if (!ctx) return NULL;
  int nd = tl_ndim(a);
  if (n < nd || !reps)
    return fail(ctx, TL_ERR_ARG, "repeat: %d count%s for a tensor of %d axes: give at least one per axis", n,
                n == 1 ? "" : "s", nd);
  if (n >= TL_MAX_DIMS) return fail(ctx, TL_ERR_ARG, "repeat: %d counts, at most %d", n, TL_MAX_DIMS - 1);
  int64_t shape[TL_MAX_DIMS], out[TL_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    if (reps[i] < 0) return fail(ctx, TL_ERR_ARG, "repeat: count %d is %lld, not >= 0", i, (long long)reps[i]);
    shape[i] = i < n - nd ? 1 : tl_dim(a, i - (n - nd));
    out[i] = shape[i] * reps[i];
  }
  if (!tl_api_shape_fits(ctx, "repeat", n, out)) return NULL;
  tl_scope *s = tl_scope_begin(ctx, "repeat");
  if (!s) return NULL;
  tl_tensor *x = tl_reshape(a, n, shape);
  for (int d = 0; d < n; d++) { /* axis d of size k becomes [reps, k] (a broadcast), then reps * k */
    if (reps[d] == 1) continue;
    int64_t wide[TL_MAX_DIMS], cur[TL_MAX_DIMS];
    for (int i = 0; i <= n; i++) wide[i] = i < d ? out[i] : i == d ? reps[d] : shape[i - 1];
    for (int i = 0; i < n; i++) cur[i] = i <= d ? out[i] : shape[i];
    x = tl_reshape(tl_expand(tl_unsqueeze(x, d), n + 1, wide), n, cur);
  }
  return tl_api_finish(ctx, s, x, "repeat");
}
