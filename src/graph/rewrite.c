#include "rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/shapetracker.h"

/* ---- builders ------------------------------------------------------------------ */
static const tl_ruleset *const kernel_sets[] = {&tl_rules_fold, &tl_rules_algebra, &tl_rules_index};

static tl_uop *finish(tl_graph *g, tl_uop *u) {
  if (!u || g->refcounted) return u;
  return tl_rewrite_node(g, u, kernel_sets, 3); /* kernel graphs: born simplified */
}

static tl_arg const_arg(tl_dtype dtype, double value) {
  tl_arg arg = {0};
  tl_value s = tl_value_from_double(dtype, value);
  if (tl_dtype_is_float(dtype)) arg.f = s.f;
  else arg.i = s.i;
  return arg;
}

tl_uop *tl_build_const(tl_graph *g, tl_dtype dtype, double value) {
  return tl_uop_make(g, TL_OP_CONST, dtype, 0, NULL, const_arg(dtype, value), 0, 0, NULL);
}

/* A constant broadcast to a shape: a 0-d CONST under a VIEW of stride-0 axes. */
static tl_uop *broadcast_const(tl_graph *g, tl_uop *c, int ndim, const int64_t *shape) {
  if (ndim == 0) return c;
  tl_st st;
  memset(&st, 0, sizeof st);
  st.nviews = 1;
  st.views[0].ndim = ndim;
  memcpy(st.views[0].shape, shape, sizeof(int64_t) * (size_t)ndim);
  tl_arg arg = {.p = &st};
  return tl_uop_make(g, TL_OP_VIEW, c->dtype, 1, &c, arg, 0, ndim, shape);
}

tl_uop *tl_build_const_like(tl_graph *g, const tl_uop *like, double value) {
  tl_uop *c = tl_build_const(g, like->dtype, value);
  return c ? broadcast_const(g, c, like->ndim, like->shape) : NULL;
}

static tl_dtype result_dtype(int op, tl_dtype in) {
  return op >= 0 && op < TL_NOPS && (tl_optab[op].flags & TL_OPF_BOOL) ? TL_BOOL : in;
}

/* f16 and bf16 are storage types: an op on them computes in f32 and rounds its result
 * back (a comparison's bool stays), so no kernel or interpreter ever does arithmetic on
 * them; only loads, stores, casts, constants and selects see them */
static tl_uop *via_f32(tl_graph *g, tl_uop *r, tl_dtype half) {
  return r && r->dtype == TL_F32 ? tl_build_cast(g, r, half) : r;
}

tl_uop *tl_build_unary(tl_graph *g, int op, tl_uop *a) {
  if (!a) return NULL;
  if (tl_dtype_is_half((tl_dtype)a->dtype) && op != TL_OP_CONTIGUOUS)
    return via_f32(g, tl_build_unary(g, op, tl_build_cast(g, a, TL_F32)), (tl_dtype)a->dtype);
  tl_arg none = {0};
  return finish(g, tl_uop_make(g, op, a->dtype, 1, &a, none, 0, a->ndim, a->shape));
}

tl_uop *tl_build_binary(tl_graph *g, int op, tl_uop *a, tl_uop *b) {
  if (!a || !b) return NULL;
  if (tl_dtype_is_half((tl_dtype)a->dtype))
    return via_f32(g, tl_build_binary(g, op, tl_build_cast(g, a, TL_F32), tl_build_cast(g, b, TL_F32)), (tl_dtype)a->dtype);
  tl_uop *src[2] = {a, b};
  tl_arg none = {0};
  return finish(g, tl_uop_make(g, op, result_dtype(op, a->dtype), 2, src, none, 0, a->ndim,
                               a->shape));
}

tl_uop *tl_build_where(tl_graph *g, tl_uop *c, tl_uop *a, tl_uop *b) {
  if (!c || !a || !b) return NULL;
  tl_uop *src[3] = {c, a, b};
  tl_arg none = {0};
  return finish(g, tl_uop_make(g, TL_OP_WHERE, a->dtype, 3, src, none, 0, a->ndim, a->shape));
}

tl_uop *tl_build_cast(tl_graph *g, tl_uop *a, tl_dtype dtype) {
  if (!a) return NULL;
  if (a->dtype == dtype) return a;
  tl_arg none = {0};
  return finish(g, tl_uop_make(g, TL_OP_CAST, dtype, 1, &a, none, 0, a->ndim, a->shape));
}

/* ---- the engine ------------------------------------------------------------------ */
tl_uop *tl_rewrite_node(tl_graph *g, tl_uop *u, const tl_ruleset *const *sets, int nsets) {
  for (int guard = 0; u && guard < 64; guard++) {
    tl_uop *r = NULL;
    for (int s = 0; s < nsets && !r; s++)
      for (int i = 0; i < sets[s]->count && !r; i++)
        if (sets[s]->rules[i].op < 0 || sets[s]->rules[i].op == u->op) {
          r = sets[s]->rules[i].fn(g, u);
          if (r == u) r = NULL;
        }
    if (!r) return u;
    u = r;
  }
  return u;
}

typedef struct {
  tl_graph *g;
  const tl_ruleset *const *sets;
  int nsets;
  tl_ptrmap done;
  bool oom;
} rewriter;

static tl_uop *rewrite_rec(rewriter *rw, tl_uop *u) {
  tl_uop *m = tl_ptrmap_get(&rw->done, u);
  if (m) return m;
  tl_uop *src[3];
  bool changed = false;
  for (int i = 0; i < u->nsrc; i++) {
    src[i] = rewrite_rec(rw, u->src[i]);
    if (!src[i]) return NULL;
    changed |= src[i] != u->src[i];
  }
  tl_uop *v = u;
  if (changed)
    v = tl_uop_make(rw->g, u->op, u->dtype, u->nsrc, src, u->arg, u->arg2, u->ndim, u->shape);
  tl_uop *r = v ? tl_rewrite_node(rw->g, v, rw->sets, rw->nsets) : NULL;
  if (r && r != v) r = rewrite_rec(rw, r); /* the replacement's new parts get their turn */
  if (!r || !tl_ptrmap_put(&rw->done, u, r) || !tl_ptrmap_put(&rw->done, r, r)) {
    rw->oom = true;
    return NULL;
  }
  return r;
}

/* A rule whose new node cannot be made is skipped by tl_rewrite_node, which is wrong
 * for the rules that must apply (fallback lowering): any node that failed during the
 * rewrite fails it whole. */
tl_uop *tl_rewrite_graph(tl_graph *g, tl_uop *root, const tl_ruleset *const *sets, int nsets) {
  rewriter rw = {g, sets, nsets, {0}, false};
  g->oom = false;
  tl_uop *r = rewrite_rec(&rw, root);
  tl_ptrmap_free(&rw.done);
  bool failed = rw.oom || g->oom;
  g->oom = false;
  return failed ? NULL : r;
}
