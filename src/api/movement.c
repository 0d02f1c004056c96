/* movement.c — views (reshape, permute, expand, shrink, pad, flip), slicing,
 * squeeze/unsqueeze, cat and stack, each only editing a shape tracker; and moves of
 * values: contiguous copies, and tl_to between backends (device.c copies the bytes). */
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/shapetracker.h"
#include "graph/rewrite.h"

/* opens the handle t (NULL: return NULL), names its context and marks the graph */
#define BEGIN(t, what)                              \
  if (!((t) = tl_api_tensor(t, what))) return NULL; \
  tl_ctx *ctx = (t)->slot.ctx;                      \
  size_t mark = tl_graph_mark(&ctx->graph)

tl_tensor *tl_reshape(tl_tensor *t, int ndim, const int64_t *shape) {
  BEGIN(t, "reshape");
  if (ndim < 0 || ndim > TL_MAX_DIMS)
    return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "reshape: rank %d is not between 0 and %d", ndim,
                       TL_MAX_DIMS);
  if (ndim && !shape) return tl_api_fail(ctx, mark, TL_ERR_ARG, "reshape: shape is NULL");
  int64_t s[TL_MAX_DIMS];
  int infer = -1;
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (s[i] == -1 && infer < 0) infer = i;
    else if (s[i] < 0)
      return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "reshape: bad size %lld at axis %d",
                         (long long)s[i], i);
  }
  int64_t n = tl_uop_numel(t->u);
  /* the given sizes must fit before they divide anything; then the inferred one fits */
  if (!tl_api_shape_fits_infer(ctx, "reshape", ndim, s)) return NULL;
  if (infer >= 0) {
    s[infer] = 1;
    int64_t known = tl_shape_numel(ndim, s);
    s[infer] = known ? n / known : 0;
  }
  if (tl_shape_numel(ndim, s) != n)
    return tl_api_fail(ctx, mark, TL_ERR_SHAPE,
                       "reshape: cannot reshape %lld elements into a shape of %lld elements",
                       (long long)n, (long long)tl_shape_numel(ndim, s));
  return tl_api_wrap_op(ctx, "reshape", tl_build_view(&ctx->graph, t->u, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, ndim),
                        mark, TL_AG_RESHAPE, 1, &t, NULL, 0);
}

tl_tensor *tl_permute(tl_tensor *t, const int *perm) {
  BEGIN(t, "permute");
  int nd = t->u->ndim, p[TL_MAX_DIMS];
  bool seen[TL_MAX_DIMS] = {0};
  if (nd && !perm) return tl_api_fail(ctx, mark, TL_ERR_ARG, "permute: perm is NULL");
  for (int i = 0; i < nd; i++) {
    p[i] = perm[i];
    if (!tl_api_axis(ctx, nd, &p[i], "permute")) return NULL;
    if (seen[p[i]])
      return tl_api_fail(ctx, mark, TL_ERR_AXIS, "permute: axis %d appears twice", p[i]);
    seen[p[i]] = true;
  }
  int64_t rec[TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) rec[i] = p[i];
  return tl_api_wrap_op(ctx, "permute", tl_build_view(&ctx->graph, t->u, TL_MOVE_PERMUTE, NULL, NULL, p, NULL, nd),
                        mark, TL_AG_PERMUTE, 1, &t, rec, nd);
}

tl_tensor *tl_transpose(tl_tensor *t, int a, int b) {
  if (!(t = tl_api_tensor(t, "transpose"))) return NULL;
  int nd = t->u->ndim, p[TL_MAX_DIMS];
  if (!tl_api_axis(t->slot.ctx, nd, &a, "transpose") || !tl_api_axis(t->slot.ctx, nd, &b, "transpose"))
    return NULL;
  for (int i = 0; i < nd; i++) p[i] = i;
  p[a] = b;
  p[b] = a;
  return tl_permute(t, p);
}

tl_tensor *tl_expand(tl_tensor *t, int ndim, const int64_t *shape) {
  BEGIN(t, "expand");
  int nd = t->u->ndim;
  if (ndim < nd || ndim > TL_MAX_DIMS)
    return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "expand: cannot expand rank %d to rank %d", nd, ndim);
  if (ndim && !shape) return tl_api_fail(ctx, mark, TL_ERR_ARG, "expand: shape is NULL");
  int64_t s[TL_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    int j = i - (ndim - nd);
    int64_t have = j >= 0 ? t->u->shape[j] : 1;
    s[i] = shape[i] == -1 ? have : shape[i];
    if (have != s[i] && have != 1)
      return tl_api_fail(ctx, mark, TL_ERR_SHAPE,
                         "expand: axis %d has size %lld, which cannot expand to %lld", i,
                         (long long)have, (long long)shape[i]);
    if (s[i] < 0) return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "expand: bad size %lld", (long long)s[i]);
  }
  if (!tl_api_shape_fits(ctx, "expand", ndim, s)) return NULL; /* nothing built yet */
  return tl_api_wrap_op(ctx, "expand", tl_build_broadcast_to(&ctx->graph, t->u, ndim, s), mark, TL_AG_EXPAND, 1, &t,
                        NULL, 0);
}

tl_tensor *tl_shrink(tl_tensor *t, const int64_t *begin, const int64_t *end) {
  BEGIN(t, "shrink");
  int nd = t->u->ndim;
  if (nd && (!begin || !end)) return tl_api_fail(ctx, mark, TL_ERR_ARG, "shrink: NULL bounds");
  for (int i = 0; i < nd; i++)
    if (begin[i] < 0 || begin[i] > end[i] || end[i] > t->u->shape[i])
      return tl_api_fail(ctx, mark, TL_ERR_RANGE,
                         "shrink: range [%lld, %lld) is out of bounds for axis %d of size %lld",
                         (long long)begin[i], (long long)end[i], i, (long long)t->u->shape[i]);
  int64_t rec[2 * TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) rec[i] = begin[i], rec[nd + i] = end[i];
  return tl_api_wrap_op(ctx, "shrink", tl_build_view(&ctx->graph, t->u, TL_MOVE_SHRINK, begin, end, NULL, NULL, nd),
                        mark, TL_AG_SHRINK, 1, &t, rec, 2 * nd);
}

tl_tensor *tl_slice(tl_tensor *t, int axis, int64_t start, int64_t stop, int64_t step) {
  BEGIN(t, "slice");
  int nd = t->u->ndim;
  if (!tl_api_axis(ctx, nd, &axis, "slice")) return NULL;
  int64_t n = t->u->shape[axis];
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (step <= 0) return tl_api_fail(ctx, mark, TL_ERR_ARG, "slice: step must be positive, got %lld", (long long)step);
  if (start < 0 || stop > n || start > stop)
    return tl_api_fail(ctx, mark, TL_ERR_RANGE,
                       "slice: [%lld:%lld] is out of range for axis %d of size %lld",
                       (long long)start, (long long)stop, axis, (long long)n);
  int64_t b[TL_MAX_DIMS] = {0}, e[TL_MAX_DIMS];
  memcpy(e, t->u->shape, sizeof e);
  b[axis] = start;
  e[axis] = stop;
  /* counted without len + step - 1, which overflows for a huge step; one element is a
   * plain shrink, so a stepped slice has step < len and pads to cnt * step < 2 * len */
  int64_t len = stop - start, cnt = len ? (len - 1) / step + 1 : 0;
  if (cnt <= 1) {
    step = 1;
    e[axis] = stop = start + cnt;
  }
  tl_uop *u = tl_build_view(&ctx->graph, t->u, TL_MOVE_SHRINK, b, e, NULL, NULL, nd);
  if (step > 1) { /* pad to cnt*step, split the axis into (cnt, step), keep column 0 */
    int64_t pb[TL_MAX_DIMS] = {0}, pa[TL_MAX_DIMS] = {0}, s[TL_MAX_DIMS], s2[TL_MAX_DIMS];
    pa[axis] = cnt * step - len;
    u = tl_build_view(&ctx->graph, u, TL_MOVE_PAD, pb, pa, NULL, NULL, nd);
    int k = 0;
    for (int i = 0; i < nd; i++) {
      if (i == axis) {
        s[k++] = cnt;
        s[k++] = step;
      } else {
        s[k++] = u ? u->shape[i] : 0;
      }
    }
    if (nd + 1 > TL_MAX_DIMS)
      return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "slice: a stepped slice needs rank < %d", TL_MAX_DIMS);
    u = tl_build_view(&ctx->graph, u, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, nd + 1);
    int64_t z[TL_MAX_DIMS] = {0};
    memcpy(s2, s, sizeof s2);
    s2[axis + 1] = 1;
    u = tl_build_view(&ctx->graph, u, TL_MOVE_SHRINK, z, s2, NULL, NULL, nd + 1);
    for (int i = 0, j = 0; i < nd + 1; i++)
      if (i != axis + 1) s[j++] = s2[i];
    u = tl_build_view(&ctx->graph, u, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, nd);
  }
  return tl_api_wrap_op(ctx, "slice", u, mark, TL_AG_SLICE, 1, &t, (int64_t[]){axis, start, stop, step}, 4);
}

tl_tensor *tl_pad(tl_tensor *t, const int64_t *before, const int64_t *after, double value) {
  BEGIN(t, "pad");
  int nd = t->u->ndim;
  if (nd && (!before || !after)) return tl_api_fail(ctx, mark, TL_ERR_ARG, "pad: NULL widths");
  int64_t padded[TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    if (before[i] < 0 || after[i] < 0)
      return tl_api_fail(ctx, mark, TL_ERR_RANGE, "pad: negative width on axis %d", i);
    if (before[i] > TL_MAX_NUMEL || after[i] > TL_MAX_NUMEL) /* else the sum below cannot overflow */
      return tl_api_fail(ctx, mark, TL_ERR_RANGE,
                         "pad: width %lld on axis %d is more than the most a tensor may hold, " TL_API_LIMIT_TEXT,
                         (long long)(before[i] > TL_MAX_NUMEL ? before[i] : after[i]), i);
    padded[i] = t->u->shape[i] + before[i] + after[i];
  }
  if (!tl_api_shape_fits(ctx, "pad", nd, padded)) return NULL; /* nothing built yet */
  tl_uop *u = tl_build_view(&ctx->graph, t->u, TL_MOVE_PAD, before, after, NULL, NULL, nd);
  if (value != 0 && u) { /* where(pad(true), pad(x), value) */
    tl_graph *g = &ctx->graph;
    tl_uop *ones = tl_build_broadcast_to(&ctx->graph, tl_build_const(g, TL_BOOL, 1), nd, t->u->shape);
    tl_uop *mask = tl_build_view(&ctx->graph, ones, TL_MOVE_PAD, before, after, NULL, NULL, nd);
    tl_uop *fill = mask ? tl_build_broadcast_to(&ctx->graph, tl_build_const(g, (tl_dtype)u->dtype, value), nd, u->shape) : NULL;
    u = fill ? tl_build_where(g, mask, u, fill) : NULL;
  }
  int64_t rec[2 * TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) rec[i] = before[i], rec[nd + i] = after[i];
  return tl_api_wrap_op(ctx, "pad", u, mark, TL_AG_PAD, 1, &t, rec, 2 * nd);
}

tl_tensor *tl_flip(tl_tensor *t, int naxes, const int *axes) {
  BEGIN(t, "flip");
  bool f[TL_MAX_DIMS] = {0};
  if (naxes < 0) return tl_api_fail(ctx, mark, TL_ERR_ARG, "flip: naxes must be >= 0, got %d", naxes);
  if (naxes && !axes) return tl_api_fail(ctx, mark, TL_ERR_ARG, "flip: axes is NULL");
  for (int i = 0; i < naxes; i++) {
    int a = axes[i];
    if (!tl_api_axis(ctx, t->u->ndim, &a, "flip")) return NULL;
    f[a] = true;
  }
  int64_t rec[TL_MAX_DIMS];
  for (int i = 0; i < t->u->ndim; i++) rec[i] = f[i];
  return tl_api_wrap_op(ctx, "flip", tl_build_view(&ctx->graph, t->u, TL_MOVE_FLIP, NULL, NULL, NULL, f, t->u->ndim),
                        mark, TL_AG_FLIP, 1, &t, rec, t->u->ndim);
}

tl_tensor *tl_squeeze(tl_tensor *t, int axis) {
  if (!(t = tl_api_tensor(t, "squeeze"))) return NULL;
  int nd = t->u->ndim;
  if (!tl_api_axis(t->slot.ctx, nd, &axis, "squeeze")) return NULL;
  if (t->u->shape[axis] != 1) {
    tl_error_set(&t->slot.ctx->err, TL_ERR_SHAPE, "squeeze: axis %d has size %lld, not 1", axis,
                 (long long)t->u->shape[axis]);
    return NULL;
  }
  int64_t s[TL_MAX_DIMS];
  for (int i = 0, j = 0; i < nd; i++)
    if (i != axis) s[j++] = t->u->shape[i];
  return tl_reshape(t, nd - 1, s);
}

tl_tensor *tl_unsqueeze(tl_tensor *t, int axis) {
  if (!(t = tl_api_tensor(t, "unsqueeze"))) return NULL;
  int nd = t->u->ndim;
  if (nd == TL_MAX_DIMS) {
    tl_error_set(&t->slot.ctx->err, TL_ERR_SHAPE, "unsqueeze: rank %d is the maximum", nd);
    return NULL;
  }
  if (!tl_api_axis(t->slot.ctx, nd + 1, &axis, "unsqueeze")) return NULL;
  int64_t s[TL_MAX_DIMS];
  for (int i = 0, j = 0; i <= nd; i++) s[i] = i == axis ? 1 : t->u->shape[j++];
  return tl_reshape(t, nd + 1, s);
}

/* cat = the sum of every input padded to its place along the axis */
/* the nodes of n handles, all opened (false: one is NULL or stale) */
static bool open_all(int n, tl_tensor *const *ts, const char *what) {
  for (int i = 0; i < n; i++)
    if (!ts[i] || !tl_api_tensor(ts[i], what)) return false;
  return true;
}
static tl_uop *node_of(tl_tensor *handle) { return tl_api_tensor(handle, "cat")->u; }

/* A count and array with no tensor in reach: the message goes where tl_last_error(NULL)
 * reads it. false: fail. */
static bool check_list(int n, tl_tensor *const *ts, const char *what) {
  if (n <= 0) tl_api_fail_orphan(TL_ERR_ARG, "%s: n is %d; at least one tensor is needed", what, n);
  else if (!ts) tl_api_fail_orphan(TL_ERR_ARG, "%s: the tensor array is NULL (n = %d)", what, n);
  return n > 0 && ts;
}

tl_tensor *tl_cat(int n, tl_tensor *const *ts, int axis) {
  if (!check_list(n, ts, "cat") || !open_all(n, ts, "cat")) return NULL;
  tl_ctx *ctx = tl_api_tensor(ts[0], "cat")->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  const tl_uop *first = node_of(ts[0]);
  int nd = first->ndim;
  if (!tl_api_axis(ctx, nd, &axis, "cat")) return NULL;
  tl_dtype dt = (tl_dtype)first->dtype;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    const tl_uop *u = node_of(ts[i]);
    if (tl_api_tensor(ts[i], "cat")->slot.ctx != ctx)
      return tl_api_fail(ctx, mark, TL_ERR_ARG, "cat: tensors from different contexts");
    bool same = u->ndim == nd;
    for (int d = 0; same && d < nd; d++) same = d == axis || u->shape[d] == first->shape[d];
    if (!same)
      return tl_api_fail(ctx, mark, TL_ERR_SHAPE,
                         "cat: tensor %d does not match the shape of tensor 0 outside axis %d", i, axis);
    dt = tl_dtype_promote(dt, (tl_dtype)u->dtype);
    if (__builtin_add_overflow(total, u->shape[axis], &total))
      return tl_api_fail(ctx, mark, TL_ERR_RANGE, "cat: the sizes along axis %d add up to more than 2^63", axis);
  }
  int64_t shape[TL_MAX_DIMS];
  memcpy(shape, first->shape, sizeof shape);
  shape[axis] = total;
  if (!tl_api_shape_fits(ctx, "cat", nd, shape)) return NULL; /* nothing built yet */
  tl_uop *acc = NULL;
  int64_t off = 0;
  for (int i = 0; i < n; i++) {
    tl_uop *u = tl_build_cast(&ctx->graph, node_of(ts[i]), dt);
    int64_t b[TL_MAX_DIMS] = {0}, a[TL_MAX_DIMS] = {0};
    b[axis] = off;
    a[axis] = total - off - (u ? u->shape[axis] : 0);
    off += u ? u->shape[axis] : 0;
    u = tl_build_view(&ctx->graph, u, TL_MOVE_PAD, b, a, NULL, NULL, nd);
    /* a part that could not be made leaves acc NULL for good (the builder passes NULL on) */
    acc = i ? tl_build_binary(&ctx->graph, dt == TL_BOOL ? TL_OP_OR : TL_OP_ADD, acc, u) : u;
  }
  return tl_api_wrap_op(ctx, "cat", acc, mark, TL_AG_CAT, n, ts, (int64_t[]){axis}, 1);
}

tl_tensor *tl_stack(int n, tl_tensor *const *ts, int axis) {
  if (!check_list(n, ts, "stack") || !open_all(n, ts, "stack")) return NULL;
  tl_tensor *tmp[256];
  tl_ctx *ctx = tl_api_tensor(ts[0], "stack")->slot.ctx;
  if (n > 256) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "stack: at most 256 tensors");
    return NULL;
  }
  const tl_uop *first = node_of(ts[0]);
  for (int i = 0; i < n; i++) {
    const tl_uop *u = node_of(ts[i]);
    if (u->ndim != first->ndim || memcmp(u->shape, first->shape, sizeof(int64_t) * (size_t)first->ndim)) {
      tl_error_set(&ctx->err, TL_ERR_SHAPE, "stack: tensor %d has a different shape from tensor 0", i);
      return NULL;
    }
  }
  int nd = first->ndim, ax = axis < 0 ? axis + nd + 1 : axis;
  if (nd < TL_MAX_DIMS && ax >= 0 && ax <= nd) { /* else unsqueeze says why */
    int64_t shape[TL_MAX_DIMS];
    for (int i = 0, j = 0; i <= nd; i++) shape[i] = i == ax ? n : first->shape[j++];
    if (!tl_api_shape_fits(ctx, "stack", nd + 1, shape)) return NULL;
  }
  tl_tensor *r = NULL;
  int made = 0;
  for (; made < n; made++)
    if (!(tmp[made] = tl_unsqueeze(ts[made], axis))) break;
  if (made == n) r = tl_cat(n, tmp, axis);
  for (int i = 0; i < made; i++) tl_release(tmp[i]);
  return r;
}

tl_tensor *tl_contiguous(tl_tensor *a) {
  if (!(a = tl_api_tensor(a, "contiguous"))) return NULL;
  tl_ctx *ctx = a->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  return tl_api_wrap_op(ctx, "contiguous", tl_build_unary(&ctx->graph, TL_OP_CONTIGUOUS, a->u), mark, TL_OP_CONTIGUOUS,
                        1, &a, NULL, 0);
}

const char *tl_device(tl_tensor *t) {
  if (!(t = tl_api_tensor(t, "device"))) return NULL;
  tl_ctx *ctx = t->slot.ctx;
  /* a value not computed yet is computed where realizes run: the context's backend */
  return t->u->op == TL_OP_BUFFER ? tl_api_backend_of(ctx, t->u->arg.p)->i->name : ctx->be->i->name;
}

/* A copy of t's values in the memory of the backend `name`, through host memory; its
 * gradient goes back the same way (tl_api_move_grad). */
tl_tensor *tl_to(tl_tensor *t, const char *name) {
  if (!(t = tl_api_tensor(t, "to"))) return NULL;
  tl_ctx *ctx = t->slot.ctx;
  tl_backend *to = tl_api_backend_named(ctx, name);
  if (!to || tl_realize(t)) return NULL;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_buffer *b = t->u->arg.p;
  tl_backend *from = tl_api_backend_of(ctx, b);
  if (from == to) return tl_api_wrap(ctx, "to", t->u, mark); /* the same values, shared */
  tl_buffer *nb = tl_api_copy_between(ctx, from, to, b);
  tl_uop *n = nb ? tl_api_buffer_node(ctx, nb, t->u) : NULL;
  if (nb) tl_buffer_release(nb); /* the node holds it */
  if (!n) {
    if (nb) tl_error_set(&ctx->err, TL_ERR_NOMEM, "to: out of memory");
    tl_graph_release_to(&ctx->graph, mark);
    return NULL;
  }
  int64_t where[2] = {from->index + 1, to->index + 1};
  return tl_api_wrap_op(ctx, "to", n, mark, TL_AG_TO, 1, &t, where, 2);
}
