/* grad.c — the API side of autograd: the one place operations are recorded
 * (tl_api_wrap_op), leaves and their gradients, and the backward pass, which it drives:
 * autograd (src/autograd) orders the records and builds the gradients, this file
 * computes what they read. Autograd never calls back up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/format.h"

/* ---- the tape: recording ------------------------------------------------------------ */
/* Records out = op(ins) when grad mode is on, the result is a float and an input
 * requires grad; what the record keeps is the op's (its row's, for an IR op). */
static tl_tensor *record(tl_ctx *ctx, tl_tensor *handle, int op, int nin, tl_tensor *const *ins, const int64_t *params,
                         int nparams) {
  tl_tensor *out = tl_api_tensor(handle, "record");
  if (!out || ctx->grad_disabled || !tl_dtype_is_float((tl_dtype)out->u->dtype)) return handle;
  bool any = false;
  for (int i = 0; i < nin && !any; i++) {
    tl_tensor *t = tl_api_tensor(ins[i], "record");
    any = t && t->ag;
  }
  if (!any) return handle;
  tl_ag_node *n = tl_ag_new(op, params, nparams, out->u, nin);
  if (!n) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory recording for autograd");
    tl_release(handle);
    return NULL;
  }
  for (int i = 0; i < nin; i++) {
    tl_tensor *t = tl_api_tensor(ins[i], "record");
    tl_ag_set_input(n, i, t->ag, t->u);
  }
  out->ag = n;
  return handle;
}

tl_tensor *tl_api_wrap_op(tl_ctx *ctx, const char *what, tl_uop *u, size_t mark, int op, int nin,
                          tl_tensor *const *ins, const int64_t *params, int nparams) {
  tl_tensor *out = tl_api_wrap(ctx, what, u, mark);
  return out ? record(ctx, out, op, nin, ins, params, nparams) : NULL;
}

/* ---- leaves and flags ------------------------------------------------------------- */
tl_status tl_set_requires_grad(tl_tensor *handle, int on) {
  tl_tensor *t = tl_api_tensor(handle, "set_requires_grad");
  if (!t) return TL_ERR_ARG;
  tl_ctx *ctx = t->slot.ctx;
  if (!on) {
    if (!t->ag) return TL_OK;
    if (t->ag->op != TL_AG_LEAF)
      return tl_error_set(&ctx->err, TL_ERR_ARG,
                          "set_requires_grad: the tensor is not a leaf (it was computed from tensors requiring "
                          "grad); use tl_detach to stop its gradient");
    tl_ag_release(&ctx->graph, t->ag);
    t->ag = NULL;
    return TL_OK;
  }
  if (t->ag) return TL_OK; /* a leaf already, or computed from one: a no-op, as in torch */
  if (!tl_dtype_is_float((tl_dtype)t->u->dtype))
    return tl_error_set(&ctx->err, TL_ERR_DTYPE, "set_requires_grad: only f32 and f64 tensors can require grad, got %s",
                        tl_dtype_name((tl_dtype)t->u->dtype));
  if (!(t->ag = tl_ag_leaf((tl_dtype)t->u->dtype, t->u->ndim, t->u->shape)))
    return tl_error_set(&ctx->err, TL_ERR_NOMEM, "set_requires_grad: out of memory");
  return TL_OK;
}
int tl_requires_grad(const tl_tensor *handle) {
  const tl_tensor *t = tl_api_tensor(handle, "requires_grad");
  return t && t->ag;
}

void tl_set_grad_enabled(tl_ctx *ctx, int on) {
  if (ctx) ctx->grad_disabled = !on;
}
int tl_grad_enabled(const tl_ctx *ctx) { return ctx && !ctx->grad_disabled; }

tl_tensor *tl_detach(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "detach");
  if (!t) return NULL;
  tl_ctx *ctx = t->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  return tl_api_wrap(ctx, "detach", tl_graph_keep(&ctx->graph, t->u), mark);
}

static bool is_leaf(tl_ctx *ctx, const tl_tensor *t, const char *what) {
  if (!t->ag) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "%s: the tensor does not require grad", what);
    return false;
  }
  if (t->ag->op != TL_AG_LEAF) {
    tl_error_set(&ctx->err, TL_ERR_ARG,
                 "%s: the tensor is not a leaf: only leaves keep a gradient (detach it and set "
                 "requires_grad to make one)", what);
    return false;
  }
  return true;
}

tl_tensor *tl_grad(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "grad");
  if (!t) return NULL;
  tl_ctx *ctx = t->slot.ctx;
  if (!t->ag) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "grad: the tensor does not require grad");
    return NULL;
  }
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *have = t->ag->op == TL_AG_LEAF ? t->ag->grad : t->ag->kept; /* a non-leaf: what it kept (tl_backward) */
  tl_uop *g = have ? tl_graph_keep(&ctx->graph, have)
                          : tl_build_broadcast_to(&ctx->graph, tl_build_const(&ctx->graph, t->ag->dtype, 0), t->ag->ndim,
                                                t->ag->shape);
  return tl_api_wrap(ctx, "grad", g, mark);
}

tl_status tl_zero_grad(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "zero_grad");
  if (!t) return TL_ERR_ARG;
  tl_ctx *ctx = t->slot.ctx;
  if (t->ag && t->ag->op != TL_AG_LEAF) { /* a non-leaf's kept gradient */
    if (t->ag->kept) tl_uop_release(&ctx->graph, t->ag->kept);
    t->ag->kept = NULL;
    t->ag->kept_sum = false;
    return TL_OK;
  }
  if (!is_leaf(ctx, t, "zero_grad")) return ctx->err.status;
  if (t->ag->grad) tl_uop_release(&ctx->graph, t->ag->grad);
  t->ag->grad = NULL;
  return TL_OK;
}

static bool same_shape(int na, const int64_t *a, int nb, const int64_t *b) {
  return na == nb && (na == 0 || !memcmp(a, b, sizeof(int64_t) * (size_t)na));
}

tl_status tl_assign(tl_tensor *dst_handle, tl_tensor *src_handle) {
  tl_tensor *dst = tl_api_tensor(dst_handle, "assign");
  tl_tensor *src = dst ? tl_api_tensor(src_handle, "assign") : NULL;
  if (!src) return TL_ERR_ARG;
  tl_ctx *ctx = dst->slot.ctx;
  if (src->slot.ctx != ctx) return tl_error_set(&ctx->err, TL_ERR_ARG, "assign: tensors from different contexts");
  if (!same_shape(dst->u->ndim, dst->u->shape, src->u->ndim, src->u->shape)) {
    char a[TL_SHAPE_TEXT_MAX], b[TL_SHAPE_TEXT_MAX];
    tl_format_shape(a, sizeof a, dst->u->ndim, dst->u->shape);
    tl_format_shape(b, sizeof b, src->u->ndim, src->u->shape);
    return tl_error_set(&ctx->err, TL_ERR_SHAPE, "assign: the destination has shape %s, the value %s", a, b);
  }
  if (dst->ag && dst->ag->op != TL_AG_LEAF)
    return tl_error_set(&ctx->err, TL_ERR_ARG,
                        "assign: the destination is not a leaf (it was computed from tensors requiring grad)");
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *v = tl_build_cast(&ctx->graph, src->u, (tl_dtype)dst->u->dtype);
  if (!v) {
    tl_graph_release_to(&ctx->graph, mark);
    return tl_error_set(&ctx->err, TL_ERR_NOMEM, "assign: out of memory");
  }
  tl_uop_retain(v);
  tl_uop_release(&ctx->graph, dst->u);
  dst->u = v;
  tl_graph_release_to(&ctx->graph, mark);
  return TL_OK;
}

/* ---- backward --------------------------------------------------------------------- */
/* The values rules read are computed now, together (tl_api_realize_nodes): the
 * gradient graphs then read them instead of computing the forward pass again. */
static tl_status realize_saved(tl_ctx *ctx, const tl_ag_list *order) {
  tl_uop **values = NULL;
  size_t n = 0;
  tl_status st = tl_ag_saved_values(order, &values, &n) ? tl_api_realize_nodes(ctx, n, values)
                                                        : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  free(values);
  if (!st) tl_ag_mark_saved(order);
  return st;
}

/* the records in reverse order, each giving its inputs their gradients; the leaves
 * reached are listed */
static tl_status propagate(tl_ctx *ctx, tl_ag_list *order, tl_ag_list *leaves) {
  for (size_t k = order->n; k-- > 0;) {
    tl_ag_node *n = order->v[k];
    if (!n->grad) continue;
    if (n->op == TL_AG_LEAF) {
      if (!tl_ag_list_add(leaves, n)) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
      continue;
    }
    if (n->op == TL_AG_TO) { /* computed where it is, then moved to the input's backend */
      tl_status st = tl_api_move_grad(ctx, n);
      if (st) return st;
    }
    /* a gradient read by several rules is computed once */
    if (tl_ag_inputs_needing_grad(n) > 1) {
      tl_uop *value = n->grad;
      while (value->op == TL_OP_VIEW) value = value->src[0]; /* a view of a computed value: compute the value */
      tl_status st = tl_api_realize_node(ctx, value);
      if (st) return st;
    }
    if (n->retain && !tl_ag_keep(&ctx->graph, n)) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
    if (!tl_ag_step(&ctx->graph, &ctx->err, n))
      return ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  }
  return TL_OK;
}
/* The non-leaves of this backward that a live handle holds keep their gradient (the
 * seed language's `w.grad()` on `w = randn(..) * 0.1`; torch's retain_grad, for every
 * tensor a variable holds): the rest free theirs after their step, as before. */
static void mark_held(tl_ctx *ctx, const tl_ag_list *order) {
  for (size_t k = 0; k < order->n; k++) order->v[k]->retain = false;
  for (tl_scope *sc = ctx->scopes; sc; sc = sc->next)
    for (tl_tensor *t = sc->tensors; t; t = t->next)
      if (t->ag && t->ag->op != TL_AG_LEAF) t->ag->retain = true;
  for (tl_tensor *t = ctx->escaped; t; t = t->next)
    if (t->ag && t->ag->op != TL_AG_LEAF) t->ag->retain = true;
}

static tl_uop *seed_of(tl_ctx *ctx, const tl_tensor *loss, tl_tensor *seed_handle) {
  const tl_uop *l = loss->u;
  if (!seed_handle) {
    if (tl_uop_numel(l) != 1) {
      tl_error_set(&ctx->err, TL_ERR_SHAPE,
                   "backward: the tensor has %lld elements: give a seed gradient of its shape (only a "
                   "one-element tensor needs none)", (long long)tl_uop_numel(l));
      return NULL;
    }
    return tl_build_broadcast_to(&ctx->graph, tl_build_const(&ctx->graph, (tl_dtype)l->dtype, 1), l->ndim, l->shape);
  }
  tl_tensor *seed = tl_api_tensor(seed_handle, "backward");
  if (!seed) return NULL;
  if (!same_shape(seed->u->ndim, seed->u->shape, l->ndim, l->shape)) {
    char a[TL_SHAPE_TEXT_MAX], b[TL_SHAPE_TEXT_MAX];
    tl_format_shape(a, sizeof a, seed->u->ndim, seed->u->shape);
    tl_format_shape(b, sizeof b, l->ndim, l->shape);
    tl_error_set(&ctx->err, TL_ERR_SHAPE, "backward: the seed has shape %s but the tensor has shape %s", a, b);
    return NULL;
  }
  return tl_build_cast(&ctx->graph, seed->u, (tl_dtype)l->dtype);
}

tl_status tl_backward(tl_tensor *loss_handle, tl_tensor *seed_handle) {
  tl_tensor *loss = tl_api_tensor(loss_handle, "backward");
  if (!loss) return TL_ERR_ARG;
  tl_ctx *ctx = loss->slot.ctx;
  if (!loss->ag)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "backward: the tensor does not require grad (nothing it was "
                                               "computed from requires grad)");
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *seed = seed_of(ctx, loss, seed_handle);
  if (!seed) {
    tl_graph_release_to(&ctx->graph, mark);
    return ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  }
  tl_ag_list order = {0}, leaves = {0};
  tl_status st = tl_ag_order(loss->ag, false, &order) ? TL_OK : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  if (!st) st = realize_saved(ctx, &order);
  if (!st) mark_held(ctx, &order);
  bool was_disabled = ctx->grad_disabled;
  ctx->grad_disabled = true; /* gradients of gradients are not recorded */
  if (!st && !tl_ag_accumulate(&ctx->graph, loss->ag, seed)) st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  tl_graph_release_to(&ctx->graph, mark);
  if (!st) st = propagate(ctx, &order, &leaves);
  for (size_t k = 0; k < order.n; k++) /* after a failure: no partial gradient stays behind */
    if (order.v[k]->op != TL_AG_LEAF && order.v[k]->grad) {
      tl_uop_release(&ctx->graph, order.v[k]->grad);
      order.v[k]->grad = NULL;
    }
  tl_uop **grads = st ? NULL : malloc((leaves.n + order.n + 1) * sizeof *grads);
  if (!st && !grads) st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  size_t ng = 0;
  for (size_t k = 0; !st && k < leaves.n; k++) grads[ng++] = leaves.v[k]->grad;
  /* kept gradients that sum several calls too, so no chain of sums grows over steps; a
   * first call's stays lazy: a handle holds every intermediate of a C program, and most
   * of their gradients (a layer's output before its activation's rule) are never read */
  for (size_t k = 0; !st && k < order.n; k++)
    if (order.v[k]->op != TL_AG_LEAF && order.v[k]->retain && order.v[k]->kept_sum) grads[ng++] = order.v[k]->kept;
  if (!st) st = tl_api_realize_nodes(ctx, ng, grads); /* the leaves' gradients together */
  free(grads);
  ctx->grad_disabled = was_disabled;
  free(order.v);
  free(leaves.v);
  return st;
}
