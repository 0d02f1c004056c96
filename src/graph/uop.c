#include "uop.h"

#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/shapetracker.h"

/* ---- graphs ----------------------------------------------------------------- */
void tl_graph_init(tl_graph *g, bool refcounted) {
  memset(g, 0, sizeof *g);
  g->refcounted = refcounted;
  if (!refcounted) g->arena = tl_arena_create();
}

void tl_graph_free(tl_graph *g) {
  if (g->refcounted) tl_graph_release_to(g, 0);
  free(g->buckets);
  tl_vec_free(&g->temps);
  tl_arena_destroy(g->arena);
  memset(g, 0, sizeof *g);
}

size_t tl_graph_mark(const tl_graph *g) { return g->temps.len; }

void tl_graph_release_to(tl_graph *g, size_t mark) {
  while (g->temps.len > mark) tl_uop_release(g, g->temps.data[--g->temps.len]);
}

static uint64_t arg_hash(int op, tl_arg arg) {
  if (op == TL_OP_VIEW) return tl_st_hash(arg.p);
  return arg.u;
}

static uint32_t uop_hash(int op, tl_dtype dtype, int nsrc, tl_uop *const *src, tl_arg arg,
                         int64_t arg2, int ndim, const int64_t *shape) {
  uint64_t h = tl_hash_mix(TL_HASH_INIT, (uint64_t)(op * 131 + dtype * 7 + nsrc));
  for (int i = 0; i < nsrc; i++) h = tl_hash_mix(h, src[i]->id);
  h = tl_hash_mix(h, arg_hash(op, arg));
  h = tl_hash_mix(h, (uint64_t)arg2);
  for (int i = 0; i < ndim; i++) h = tl_hash_mix(h, (uint64_t)shape[i]);
  /* a fold, not tl_hash_final: node ids and sizes differ in their low bits, and every
   * node built pays for this hash */
  return (uint32_t)(h ^ (h >> 32));
}

static bool uop_matches(const tl_uop *u, int op, tl_dtype dtype, int nsrc, tl_uop *const *src,
                        tl_arg arg, int64_t arg2, int ndim, const int64_t *shape) {
  if (u->op != op || u->dtype != dtype || u->nsrc != nsrc || u->ndim != ndim || u->arg2 != arg2)
    return false;
  for (int i = 0; i < nsrc; i++)
    if (u->src[i] != src[i]) return false;
  if (ndim && memcmp(u->shape, shape, sizeof(int64_t) * (size_t)ndim)) return false;
  if (op == TL_OP_VIEW) return tl_st_equal(u->arg.p, arg.p);
  return u->arg.u == arg.u;
}

/* The hash-consing table is its own, not a tl_hset: every node built probes it, its
 * chains run through the nodes (no memory beyond the buckets), and a released node
 * leaves its chain in place. */
static bool table_grow(tl_graph *g) {
  size_t n = g->nbuckets ? g->nbuckets * 2 : 1024;
  tl_uop **nb = calloc(n, sizeof *nb);
  if (!nb) return false;
  for (size_t i = 0; i < g->nbuckets; i++) {
    for (tl_uop *u = g->buckets[i], *next; u; u = next) {
      next = u->chain;
      u->chain = nb[u->hash & (n - 1)];
      nb[u->hash & (n - 1)] = u;
    }
  }
  free(g->buckets);
  g->buckets = nb;
  g->nbuckets = n;
  return true;
}

static void table_remove(tl_graph *g, tl_uop *u) {
  if (!g->nbuckets) return;
  for (tl_uop **p = &g->buckets[u->hash & (g->nbuckets - 1)]; *p; p = &(*p)->chain) {
    if (*p == u) {
      *p = u->chain;
      u->chain = NULL;
      g->count--;
      return;
    }
  }
}

static bool push_temp(tl_graph *g, tl_uop *u) { return tl_vec_push(&g->temps, u); }

/* Integer bounds for kernel-graph index expressions. Unknown is [-2^61, 2^61]; any
 * result that leaves that range becomes unknown, so bounds never overflow. */
#define BOUND_MAX ((int64_t)1 << 61)

static void set_range(tl_uop *u, __int128 lo, __int128 hi) {
  if (lo < -BOUND_MAX || hi > BOUND_MAX) {
    lo = -BOUND_MAX;
    hi = BOUND_MAX;
  }
  u->vmin = (int64_t)lo;
  u->vmax = (int64_t)hi;
}

static void set_bounds(tl_uop *u) {
  __int128 a0 = u->nsrc > 0 ? u->src[0]->vmin : 0, a1 = u->nsrc > 0 ? u->src[0]->vmax : 0;
  __int128 b0 = u->nsrc > 1 ? u->src[1]->vmin : 0, b1 = u->nsrc > 1 ? u->src[1]->vmax : 0;
  bool b_const = u->nsrc > 1 && u->src[1]->op == TL_OP_CONST;
  set_range(u, -BOUND_MAX, BOUND_MAX);
  switch (u->op) {
  case TL_OP_CONST:
    if (!tl_dtype_is_float(u->dtype)) set_range(u, u->arg.i, u->arg.i);
    break;
  case TL_OP_RANGE: set_range(u, 0, u->arg2 - 1); break;
  case TL_OP_ADD: set_range(u, a0 + b0, a1 + b1); break;
  case TL_OP_MUL:
    if (b_const && b0 >= 0) set_range(u, a0 * b0, a1 * b0);
    else if (b_const) set_range(u, a1 * b0, a0 * b0);
    break;
  case TL_OP_IDIV:
    if (b_const && b0 > 0 && a0 >= 0) set_range(u, a0 / b0, a1 / b0);
    break;
  case TL_OP_MOD:
    if (b_const && b0 > 0 && a0 >= 0) set_range(u, 0, b0 - 1);
    break;
  case TL_OP_MAX: /* clamps (a gathered row index) keep their bounds */
    if (!tl_dtype_is_float(u->dtype)) set_range(u, a0 > b0 ? a0 : b0, a1 > b1 ? a1 : b1);
    break;
  case TL_OP_WHERE: {
    __int128 c0 = u->src[2]->vmin, c1 = u->src[2]->vmax;
    if (!tl_dtype_is_float(u->dtype)) set_range(u, b0 < c0 ? b0 : c0, b1 > c1 ? b1 : c1);
    break;
  }
  case TL_OP_CMPLT: case TL_OP_CMPEQ: case TL_OP_CMPNE: case TL_OP_AND: case TL_OP_OR:
  case TL_OP_NOT:
    set_range(u, 0, 1);
    break;
  default: break;
  }
}

tl_uop *tl_uop_make(tl_graph *g, int op, tl_dtype dtype, int nsrc, tl_uop *const *src,
                    tl_arg arg, int64_t arg2, int ndim, const int64_t *shape) {
  for (int i = 0; i < nsrc; i++)
    if (!src[i]) return NULL;
  uint32_t h = uop_hash(op, dtype, nsrc, src, arg, arg2, ndim, shape);
  if (g->nbuckets) {
    for (tl_uop *u = g->buckets[h & (g->nbuckets - 1)]; u; u = u->chain) {
      if (u->hash == h && uop_matches(u, op, dtype, nsrc, src, arg, arg2, ndim, shape)) {
        if (g->refcounted) {
          if (!push_temp(g, u)) return g->oom = true, NULL;
          u->refs++;
        }
        return u;
      }
    }
  }
  if (g->count * 2 >= g->nbuckets && !table_grow(g)) return g->oom = true, NULL;
  tl_uop *u = g->refcounted ? calloc(1, sizeof *u) : tl_arena_alloc(g->arena, sizeof *u);
  if (!u) return g->oom = true, NULL;
  if (op == TL_OP_VIEW) { /* the node owns a copy of its tracker */
    size_t bytes = tl_st_bytes(arg.p); /* only the views it uses */
    tl_st *st = g->refcounted ? malloc(bytes) : tl_arena_alloc(g->arena, bytes);
    if (!st) {
      if (g->refcounted) free(u);
      return g->oom = true, NULL;
    }
    memcpy(st, arg.p, bytes);
    arg.p = st;
  }
  u->op = (uint16_t)op;
  u->dtype = (uint8_t)dtype;
  u->nsrc = (uint8_t)nsrc;
  u->ndim = (int8_t)ndim;
  u->hash = h;
  u->arg = arg;
  u->arg2 = arg2;
  u->id = ++g->next_id;
  for (int i = 0; i < nsrc; i++) {
    u->src[i] = src[i];
    if (src[i]->depth + 1 > u->depth) u->depth = src[i]->depth + 1;
  }
  if (ndim) memcpy(u->shape, shape, sizeof(int64_t) * (size_t)ndim);
  if (op == TL_OP_BUFFER) tl_buffer_retain(arg.p);
  if (g->refcounted) {
    for (int i = 0; i < nsrc; i++) src[i]->refs++;
    u->refs = 1;
    g->live++;
    if (!push_temp(g, u)) {
      u->refs = 0; /* not reachable by anyone: undo */
      tl_uop_release(g, u);
      return g->oom = true, NULL; /* a rewrite must fail, not skip the rule: see rewrite.c */
    }
  } else {
    set_bounds(u);
  }
  u->chain = g->buckets[h & (g->nbuckets - 1)];
  g->buckets[h & (g->nbuckets - 1)] = u;
  g->count++;
  return u;
}

void tl_uop_retain(tl_uop *u) { u->refs++; }

tl_uop *tl_graph_keep(tl_graph *g, tl_uop *u) {
  if (!u || !g->refcounted) return u;
  if (!push_temp(g, u)) return g->oom = true, NULL;
  u->refs++;
  return u;
}

void tl_uop_release(tl_graph *g, tl_uop *u) {
  /* iterative over the chain of sources that drop to zero: deep graphs must not
   * overflow the C stack. The list starts on the C stack, not in a tl_vec: releasing a
   * small graph allocates nothing. */
  tl_uop *stack[64], **todo = stack;
  size_t n = 0, cap = 64;
  if (!u) return;
  if (--u->refs > 0) return;
  todo[n++] = u;
  while (n) {
    tl_uop *x = todo[--n];
    table_remove(g, x);
    for (int i = 0; i < x->nsrc; i++) {
      if (--x->src[i]->refs > 0) continue;
      if (n == cap) {
        tl_uop **bigger = malloc(cap * 2 * sizeof *bigger);
        if (!bigger) continue; /* leak rather than crash: cannot happen in practice */
        memcpy(bigger, todo, n * sizeof *bigger);
        if (todo != stack) free(todo);
        todo = bigger;
        cap *= 2;
      }
      todo[n++] = x->src[i];
    }
    if (x->op == TL_OP_BUFFER) tl_buffer_release(x->arg.p);
    if (x->op == TL_OP_VIEW) free(x->arg.p);
    g->live--;
    free(x);
  }
  if (todo != stack) free(todo);
}

void tl_uop_become_buffer(tl_graph *g, tl_uop *u, tl_buffer *buf) {
  table_remove(g, u);
  tl_uop *old_src[3];
  int nsrc = u->nsrc;
  memcpy(old_src, u->src, sizeof old_src);
  if (u->op == TL_OP_VIEW) free(u->arg.p);
  if (u->op == TL_OP_BUFFER) tl_buffer_release(u->arg.p);
  u->op = TL_OP_BUFFER;
  u->nsrc = 0;
  u->depth = 0;
  memset(u->src, 0, sizeof u->src);
  u->arg.p = buf;
  u->arg2 = 0;
  tl_buffer_retain(buf);
  for (int i = 0; i < nsrc; i++) tl_uop_release(g, old_src[i]);
  /* it stays out of the table: a BUFFER node is found by its buffer, never rebuilt */
}

int64_t tl_uop_numel(const tl_uop *u) { return tl_shape_numel(u->ndim, u->shape); }

/* ---- sinks ------------------------------------------------------------------ */
static void sink_collect(const tl_uop *u, const tl_uop **values, int *n) {
  for (int i = 0; i < u->nsrc; i++) {
    if (u->src[i]->op == TL_OP_SINK) sink_collect(u->src[i], values, n);
    else if (*n < TL_SINK_MAX) values[(*n)++] = u->src[i];
  }
}

int tl_sink_layout(const tl_uop *sink, const tl_uop **values, int64_t *offset) {
  int n = 0;
  sink_collect(sink, values, &n);
  int64_t at = 0, align = TL_SINK_ALIGN_BYTES / (int64_t)tl_dtype_size((tl_dtype)sink->dtype);
  if (align < 1) align = 1;
  for (int i = 0; i < n; i++) {
    offset[i] = at;
    at += (tl_uop_numel(values[i]) + align - 1) / align * align;
  }
  return n;
}

/* a tree of at most 3 sources per node; its size is the layout's end */
static tl_uop *sink_tree(tl_graph *g, int n, tl_uop *const *values, int64_t *size, int64_t align) {
  tl_uop *src[3];
  int k = 0;
  int64_t total = 0;
  for (int i = 0; i < n && k < 3; k++) {
    int take = k < 2 || n - i <= 1 ? 1 : n - i; /* two values, then the rest */
    if (take == 1) {
      src[k] = values[i];
      total += (tl_uop_numel(values[i]) + align - 1) / align * align;
    } else {
      int64_t sub = 0;
      src[k] = sink_tree(g, take, values + i, &sub, align);
      if (!src[k]) return NULL;
      total += sub;
    }
    i += take;
  }
  *size = total;
  tl_arg none = {0};
  return tl_uop_make(g, TL_OP_SINK, (tl_dtype)values[0]->dtype, k, src, none, 0, 1, (int64_t[]){total});
}

tl_uop *tl_sink_make(tl_graph *g, int n, tl_uop *const *values) {
  if (n < 1 || n > TL_SINK_MAX) return NULL;
  for (int i = 1; i < n; i++)
    if (values[i]->dtype != values[0]->dtype) return NULL;
  int64_t size = 0, align = TL_SINK_ALIGN_BYTES / (int64_t)tl_dtype_size((tl_dtype)values[0]->dtype);
  return sink_tree(g, n, values, &size, align < 1 ? 1 : align);
}

double tl_uop_const_value(const tl_uop *u) {
  return tl_dtype_is_float(u->dtype) ? u->arg.f : (double)u->arg.i;
}

bool tl_uop_is_const(const tl_uop *u, double *value) {
  if (u->op == TL_OP_VIEW) {
    const tl_st *st = u->arg.p;
    if (st->nviews != 1 || st->views[0].masked) return false;
    u = u->src[0];
  }
  if (u->op != TL_OP_CONST) return false;
  if (value) *value = tl_uop_const_value(u);
  return true;
}
