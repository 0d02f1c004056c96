/* autograd.c — records, the backward pass, leaves and their gradients. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/vec.h"
#include "graph/rewrite.h"

/* ---- records ---------------------------------------------------------------------- */
static void keep_value(tl_uop **slot, tl_uop *u) {
  tl_uop_retain(u);
  *slot = u;
}

tl_tensor *tl_ag_record(tl_tensor *out_handle, int op, int nin, tl_tensor *const *ins, const int64_t *params,
                        int nparams, unsigned save) {
  tl_tensor *out = tl_api_tensor(out_handle, "record");
  if (!out) return NULL;
  tl_ctx *ctx = out->slot.ctx;
  if (ctx->grad_disabled || !tl_dtype_is_float((tl_dtype)out->u->dtype)) return out_handle;
  bool any = false;
  for (int i = 0; i < nin; i++) {
    tl_tensor *t = tl_api_tensor(ins[i], "record");
    any |= t && t->ag;
  }
  if (!any) return out_handle;
  tl_ag_node *n = calloc(1, sizeof *n + sizeof(tl_ag_input) * (size_t)nin);
  if (!n) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory recording for autograd");
    tl_release(out_handle);
    return NULL;
  }
  n->refs = 1;
  n->op = op;
  n->nin = nin;
  n->dtype = (tl_dtype)out->u->dtype;
  n->ndim = out->u->ndim;
  memcpy(n->shape, out->u->shape, sizeof(int64_t) * (size_t)n->ndim);
  if (nparams) memcpy(n->p, params, sizeof(int64_t) * (size_t)nparams);
  if (save & TL_AG_SAVE_OUT) keep_value(&n->out, out->u);
  for (int i = 0; i < nin; i++) {
    tl_tensor *t = tl_api_tensor(ins[i], "record");
    tl_ag_input *in = &n->in[i];
    in->dtype = (tl_dtype)t->u->dtype;
    in->ndim = t->u->ndim;
    memcpy(in->shape, t->u->shape, sizeof(int64_t) * (size_t)in->ndim);
    if (save & (1u << i)) keep_value(&in->value, t->u);
    if (t->ag) {
      in->fn = t->ag;
      t->ag->refs++;
    }
  }
  out->ag = n;
  return out_handle;
}

/* iterative: a chain of records may be as long as the program's loop */
void tl_ag_release(tl_ctx *ctx, tl_ag_node *n) {
  tl_ag_node **stack = NULL;
  size_t depth = 0, cap = 0;
  while (n) {
    if (--n->refs == 0) {
      for (int i = 0; i < n->nin; i++) {
        if (n->in[i].value) tl_uop_release(&ctx->graph, n->in[i].value);
        tl_ag_node *fn = n->in[i].fn;
        if (!fn) continue;
        if (depth == cap && !tl_vec_grow(&stack, &cap, depth + 1, sizeof *stack)) {
          tl_ag_release(ctx, fn); /* cannot defer: drop the reference here (recursion is bounded by memory) */
          continue;
        }
        stack[depth++] = fn;
      }
      if (n->out) tl_uop_release(&ctx->graph, n->out);
      if (n->grad) tl_uop_release(&ctx->graph, n->grad);
      free(n);
    }
    n = depth ? stack[--depth] : NULL;
  }
  free(stack);
}

/* ---- leaves and flags ------------------------------------------------------------- */
static tl_ag_node *leaf_new(const tl_tensor *t) {
  tl_ag_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->refs = 1;
  n->op = TL_AG_LEAF;
  n->dtype = (tl_dtype)t->u->dtype;
  n->ndim = t->u->ndim;
  memcpy(n->shape, t->u->shape, sizeof(int64_t) * (size_t)n->ndim);
  return n;
}

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
    tl_ag_release(ctx, t->ag);
    t->ag = NULL;
    return TL_OK;
  }
  if (t->ag) return TL_OK; /* a leaf already, or computed from one: a no-op, as in torch */
  if (!tl_dtype_is_float((tl_dtype)t->u->dtype))
    return tl_error_set(&ctx->err, TL_ERR_DTYPE, "set_requires_grad: only f32 and f64 tensors can require grad, got %s",
                        tl_dtype_name((tl_dtype)t->u->dtype));
  if (!(t->ag = leaf_new(t))) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "set_requires_grad: out of memory");
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
  if (!is_leaf(ctx, t, "grad")) return NULL;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *g = t->ag->grad ? tl_graph_keep(&ctx->graph, t->ag->grad)
                          : tl_api_broadcast_to(ctx, tl_build_const(&ctx->graph, t->ag->dtype, 0), t->ag->ndim,
                                                t->ag->shape);
  return tl_api_wrap(ctx, "grad", g, mark);
}

tl_status tl_zero_grad(tl_tensor *handle) {
  tl_tensor *t = tl_api_tensor(handle, "zero_grad");
  if (!t) return TL_ERR_ARG;
  tl_ctx *ctx = t->slot.ctx;
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
typedef struct node_list node_list;
static tl_status realize_saved(tl_ctx *ctx, const node_list *order);
struct node_list {
  tl_ag_node **v;
  size_t n, cap;
};

static bool list_add(node_list *l, tl_ag_node *n) {
  if (l->n == l->cap && !tl_vec_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) return false;
  l->v[l->n++] = n;
  return true;
}

/* Records reachable from root, every one after all of its inputs (iterative
 * depth-first post-order: the chain can be as long as a training loop). skip_saved
 * stops at records whose history is computed already, so realizing the tensors of a
 * loop one by one walks only what each iteration added. */
static bool topo_order(tl_ag_node *root, node_list *order, bool skip_saved) {
  typedef struct {
    tl_ag_node *n;
    int next;
  } frame;
  tl_ptrmap seen = {0};
  frame *stack = NULL;
  size_t depth = 0, cap = 0;
  bool ok = tl_ptrmap_put(&seen, root, root);
  tl_ag_node *push = root;
  while (ok && (push || depth)) {
    if (push) {
      if (depth == cap && !tl_vec_grow(&stack, &cap, depth + 1, sizeof *stack)) {
        ok = false;
        break;
      }
      stack[depth++] = (frame){push, 0};
      push = NULL;
    }
    frame *f = &stack[depth - 1];
    if (f->next < f->n->nin) {
      tl_ag_node *child = f->n->in[f->next++].fn;
      if (child && !(skip_saved && child->saved) && !tl_ptrmap_get(&seen, child)) {
        ok = tl_ptrmap_put(&seen, child, child);
        push = child;
      }
    } else {
      ok = list_add(order, f->n);
      depth--;
    }
  }
  tl_ptrmap_free(&seen);
  free(stack);
  return ok;
}

static void set_grad(tl_ctx *ctx, tl_ag_node *n, tl_uop *g) {
  tl_uop_retain(g);
  if (n->grad) tl_uop_release(&ctx->graph, n->grad);
  n->grad = g;
}

static bool accumulate(tl_ctx *ctx, tl_ag_node *n, tl_uop *g) {
  if (n->grad) g = tl_build_binary(&ctx->graph, TL_OP_ADD, n->grad, g);
  if (!g) return false;
  set_grad(ctx, n, g);
  return true;
}

/* The values the records of order saved for backward (views stripped to the value
 * they view: that is what to compute), each once, in order. */
static bool saved_values(const node_list *order, tl_uop ***values, size_t *n) {
  size_t cap = 0;
  tl_ptrmap seen = {0};
  bool ok = true;
  *values = NULL;
  *n = 0;
  for (size_t k = 0; ok && k < order->n; k++) {
    const tl_ag_node *r = order->v[k];
    for (int i = -1; ok && i < r->nin; i++) {
      tl_uop *u = i < 0 ? r->out : r->in[i].value;
      while (u && u->op == TL_OP_VIEW) u = u->src[0];
      if (!u || u->op == TL_OP_BUFFER || tl_ptrmap_get(&seen, u)) continue;
      if (*n == cap && !tl_vec_grow(values, &cap, *n + 1, sizeof **values)) {
        ok = false;
        break;
      }
      (*values)[(*n)++] = u;
      ok = tl_ptrmap_put(&seen, u, u);
    }
  }
  tl_ptrmap_free(&seen);
  return ok;
}

/* The values rules read are computed now, together (tl_api_realize_nodes): the
 * gradient graphs then read them instead of computing the forward pass again. */
static tl_status realize_saved(tl_ctx *ctx, const node_list *order) {
  tl_uop **values = NULL;
  size_t n = 0;
  tl_status st = saved_values(order, &values, &n) ? tl_api_realize_nodes(ctx, n, values)
                                                    : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  free(values);
  for (size_t k = 0; !st && k < order->n; k++) order->v[k]->saved = true;
  return st;
}

bool tl_ag_history_values(tl_ag_node *root, tl_uop ***values, size_t *n) {
  node_list order = {0};
  bool ok = topo_order(root, &order, true) && saved_values(&order, values, n);
  free(order.v);
  return ok;
}

void tl_ag_mark_history_saved(tl_ag_node *root) {
  node_list order = {0};
  if (topo_order(root, &order, true))
    for (size_t k = 0; k < order.n; k++) order.v[k]->saved = true;
  free(order.v); /* out of memory: nothing marked, the values are found again next time */
}

static int inputs_needing_grad(const tl_ag_node *n) {
  int k = 0;
  for (int i = 0; i < n->nin; i++) k += n->in[i].fn != NULL;
  return k;
}

static tl_status propagate(tl_ctx *ctx, node_list *order, node_list *leaves) {
  tl_uop *stack_grads[4], **grads = stack_grads;
  for (size_t k = order->n; k-- > 0;) {
    tl_ag_node *n = order->v[k];
    if (!n->grad) continue;
    if (n->op == TL_AG_LEAF) {
      if (!list_add(leaves, n)) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
      continue;
    }
    /* a gradient read by several rules is computed once */
    if (inputs_needing_grad(n) > 1) {
      tl_uop *value = n->grad;
      while (value->op == TL_OP_VIEW) value = value->src[0]; /* a view of a computed value: compute the value */
      tl_status st = tl_api_realize_node(ctx, value);
      if (st) return st;
    }
    grads = n->nin <= 4 ? stack_grads : calloc((size_t)n->nin, sizeof *grads);
    if (!grads) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
    memset(grads, 0, sizeof *grads * (size_t)n->nin);
    size_t mark = tl_graph_mark(&ctx->graph);
    bool ok = tl_ag_input_grads(ctx, n, n->grad, grads);
    for (int i = 0; ok && i < n->nin; i++)
      if (n->in[i].fn && grads[i]) ok = accumulate(ctx, n->in[i].fn, grads[i]);
    tl_graph_release_to(&ctx->graph, mark);
    if (grads != stack_grads) free(grads);
    tl_uop_release(&ctx->graph, n->grad);
    n->grad = NULL;
    if (!ok)
      return ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  }
  return TL_OK;
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
    return tl_api_broadcast_to(ctx, tl_build_const(&ctx->graph, (tl_dtype)l->dtype, 1), l->ndim, l->shape);
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
  node_list order = {0}, leaves = {0};
  tl_status st = topo_order(loss->ag, &order, false) ? TL_OK : tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  if (!st) st = realize_saved(ctx, &order);
  bool was_disabled = ctx->grad_disabled;
  ctx->grad_disabled = true; /* gradients of gradients are not recorded */
  if (!st && !accumulate(ctx, loss->ag, seed)) st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  tl_graph_release_to(&ctx->graph, mark);
  if (!st) st = propagate(ctx, &order, &leaves);
  for (size_t k = 0; k < order.n; k++) /* after a failure: no partial gradient stays behind */
    if (order.v[k]->op != TL_AG_LEAF && order.v[k]->grad) {
      tl_uop_release(&ctx->graph, order.v[k]->grad);
      order.v[k]->grad = NULL;
    }
  tl_uop **grads = st ? NULL : malloc((leaves.n ? leaves.n : 1) * sizeof *grads);
  if (!st && !grads) st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory");
  for (size_t k = 0; !st && k < leaves.n; k++) grads[k] = leaves.v[k]->grad;
  if (!st) st = tl_api_realize_nodes(ctx, leaves.n, grads); /* the leaves' gradients together */
  free(grads);
  ctx->grad_disabled = was_disabled;
  free(order.v);
  free(leaves.v);
  return st;
}
