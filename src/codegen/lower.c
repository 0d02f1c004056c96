#include "lower.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel_prelude.h" /* the GEMM's tile sizes */
#include "core/hash.h"
#include "core/shapetracker.h"
#include "core/vec.h"
#include "graph/build.h" /* tl_conv_params_unpack */

typedef struct memo_entry {
  const tl_uop *node, *guard;
  int ndim;
  tl_uop *idx[TL_MAX_DIMS];
  tl_uop *value;
} memo_entry;

typedef struct {
  tl_lowered *out;
  const tl_schedule *sched;
  tl_uop *kroot;
  tl_uop *sums; /* the GEMM whose epilogue this kernel is: read from slot 0 */
  tl_hset memo; /* memo_entry pointers (in the arena) */
  int next_range, next_acc;
  tl_error *err;
  bool failed;
  /* index arrays made by unflattening a flat offset (a reshape view over a computed
   * node), innermost last: a contiguous view read at such an index is that offset,
   * with no division or remainder (a whole-tensor sum split in rows reads each element
   * at its flat index instead of through four divisions and four remainders) */
  struct {
    tl_uop *const *idx;
    tl_uop *off;
    int ndim; /* the shape off was unflattened over: a node read at a prefix of idx */
    const int64_t *shape; /* (a GATHER's indices) is another shape, not at off */
  } flat[8];
  int nflat;
} lowerer;

static void *alloc(lowerer *L, size_t n) {
  void *p = tl_arena_alloc(L->out->g.arena, n);
  if (!p) L->failed = true;
  return p;
}

/* ---- blocks ----------------------------------------------------------------------- */
static tl_block *new_block(lowerer *L, tl_block *parent) {
  tl_block *b = alloc(L, sizeof *b);
  if (b) {
    b->parent = parent;
    b->level = parent ? parent->level + 1 : 0;
  }
  return b;
}

/* inserts s before the block's open child loop, or at the end */
static void insert(lowerer *L, tl_block *b, tl_stmt *s) {
  if (!b || !s) return;
  if (b->n == b->cap) { /* grown in the arena, not a tl_vec: freed with the kernel graph */
    int cap = b->cap ? b->cap * 2 : 16;
    tl_stmt **items = alloc(L, (size_t)cap * sizeof *items);
    if (!items) return;
    if (b->n) memcpy(items, b->items, (size_t)b->n * sizeof *items);
    b->items = items;
    b->cap = cap;
  }
  int at = b->n;
  if (b->open)
    for (int i = 0; i < b->n; i++)
      if (b->items[i] == b->open) at = i;
  memmove(b->items + at + 1, b->items + at, (size_t)(b->n - at) * sizeof *b->items);
  b->items[at] = s;
  b->n++;
}

static tl_stmt *new_stmt(lowerer *L, tl_stmt_kind kind) {
  tl_stmt *s = alloc(L, sizeof *s);
  if (s) s->kind = kind;
  return s;
}

/* a loop over [0, extent) inside b; returns its RANGE and sets *body */
static tl_uop *open_loop(lowerer *L, tl_block *b, int64_t extent, bool parallel, tl_block **body) {
  *body = NULL;
  if (!b) { /* an allocation failed before: L->failed is set */
    L->failed = true;
    return NULL;
  }
  tl_arg id = {.i = L->next_range++};
  tl_uop *r = tl_uop_make(&L->out->g, TL_OP_RANGE, TL_I64, 0, NULL, id, extent, 0, NULL);
  tl_stmt *s = new_stmt(L, TL_STMT_LOOP);
  tl_block *inner = new_block(L, b);
  if (!r || !s || !inner) {
    L->failed = true;
    return NULL;
  }
  s->u = r;
  s->body = inner;
  s->parallel = parallel;
  s->part = -1;
  r->aux = inner;
  insert(L, b, s);
  b->open = s;
  *body = inner;
  return r;
}

/* ---- placing definitions ---------------------------------------------------------------- */
static tl_block *block_of(lowerer *L, tl_uop *u);

static void define(lowerer *L, tl_uop *u) {
  if (!u || u->name || u->op == TL_OP_CONST || u->op == TL_OP_RANGE || u->op == TL_OP_ACC) return;
  for (int i = 0; i < u->nsrc; i++) define(L, u->src[i]);
  tl_block *b = block_of(L, u);
  tl_stmt *s = new_stmt(L, TL_STMT_DEFINE);
  if (!s) return;
  s->u = u;
  u->name = ++L->out->next_name;
  u->aux = b;
  insert(L, b, s);
}

/* the deepest block among the sources' blocks: the outermost place u can live */
static tl_block *block_of(lowerer *L, tl_uop *u) {
  if (u->op == TL_OP_CONST) return L->out->root;
  if (u->op == TL_OP_RANGE || u->op == TL_OP_ACC || u->name) return u->aux;
  tl_block *best = L->out->root;
  for (int i = 0; i < u->nsrc; i++) {
    tl_block *b = block_of(L, u->src[i]);
    if (b && b->level > best->level) best = b;
  }
  return best;
}

/* ---- index arithmetic ------------------------------------------------------------------ */
static tl_uop *ic(lowerer *L, int64_t v) {
  tl_arg a = {.i = v};
  return tl_uop_make(&L->out->g, TL_OP_CONST, TL_I64, 0, NULL, a, 0, 0, NULL);
}
static tl_uop *bin(lowerer *L, int op, tl_uop *a, tl_uop *b) { return tl_build_binary(&L->out->g, op, a, b); }
static tl_uop *true_const(lowerer *L) { return tl_build_const(&L->out->g, TL_BOOL, 1); }

/* the flat offset idx was unflattened from over this shape (lowerer.flat), or NULL */
static tl_uop *flat_offset_of(const lowerer *L, tl_uop *const *idx, int ndim, const int64_t *shape) {
  for (int i = L->nflat - 1; i >= 0; i--)
    if (L->flat[i].idx == idx)
      return L->flat[i].ndim == ndim && !memcmp(L->flat[i].shape, shape, sizeof(int64_t) * (size_t)ndim) ? L->flat[i].off
                                                                                                          : NULL;
  return NULL;
}

static tl_uop *linear_index(lowerer *L, int ndim, const int64_t *shape, tl_uop *const *idx) {
  tl_uop *flat = flat_offset_of(L, idx, ndim, shape); /* idx came from this offset over this shape */
  if (flat) return flat;
  int64_t strides[TL_MAX_DIMS];
  tl_shape_strides(ndim, shape, strides);
  tl_uop *lin = ic(L, 0);
  for (int d = 0; d < ndim; d++)
    if (shape[d] > 1) lin = bin(L, TL_OP_ADD, lin, bin(L, TL_OP_MUL, idx[d], ic(L, strides[d])));
  return lin;
}

static void unflatten(lowerer *L, tl_uop *off, int ndim, const int64_t *shape, tl_uop **idx) {
  int64_t inner = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = shape[d] == 1 ? ic(L, 0)
                           : bin(L, TL_OP_MOD, bin(L, TL_OP_IDIV, off, ic(L, inner)), ic(L, shape[d]));
    inner *= shape[d];
  }
}

/* row-major strides over the view's shape, no mask: its flat index is the offset */
static bool view_is_contiguous(const tl_view *v) {
  int64_t inner = 1;
  if (v->masked) return false;
  for (int d = v->ndim - 1; d >= 0; d--) {
    if (v->shape[d] > 1 && v->strides[d] != inner) return false;
    inner *= v->shape[d];
  }
  return true;
}

/* symbolic form of tl_st_index: the offset below the tracker and its validity. With
 * base not NULL, the buffer-facing view's constant offset is left out and returned
 * there: the caller binds the buffer at that offset, so a slice read at another
 * offset (a minibatch, a row) runs the same kernel instead of compiling a new one. */
static tl_uop *view_index(lowerer *L, const tl_st *st, tl_uop *const *idx, tl_uop **valid, int64_t *base) {
  tl_uop *cur[TL_MAX_DIMS], *off = NULL;
  /* only where every read lands at or after the base: no mask (a masked-out read is
   * redirected to index 0, which must stay inside the buffer), no negative stride */
  for (int vi = 0; base && vi < st->nviews; vi++) {
    const tl_view *v = &st->views[vi];
    bool ok = !v->masked && (vi > 0 || v->offset >= 0);
    for (int d = 0; ok && vi == 0 && d < v->ndim; d++) ok = v->strides[d] >= 0;
    if (!ok) base = NULL;
  }
  const tl_view *top = tl_st_top(st);
  memcpy(cur, idx, sizeof(tl_uop *) * (size_t)top->ndim);
  *valid = true_const(L);
  tl_uop *flat = flat_offset_of(L, idx, top->ndim, top->shape);
  for (int vi = st->nviews - 1; vi >= 0; vi--) {
    const tl_view *v = &st->views[vi];
    off = ic(L, vi == 0 && base ? 0 : v->offset);
    if (vi == 0 && base) *base = v->offset;
    if (flat && view_is_contiguous(v)) { /* each view below the top reads the one above flat */
      off = bin(L, TL_OP_ADD, off, flat);
      flat = off;
      if (vi > 0 && !view_is_contiguous(&st->views[vi - 1]))
        unflatten(L, off, st->views[vi - 1].ndim, st->views[vi - 1].shape, cur);
      continue;
    }
    for (int d = 0; d < v->ndim; d++) {
      if (v->masked) {
        tl_uop *lo = bin(L, TL_OP_CMPLT, cur[d], ic(L, v->mask_lo[d]));
        tl_uop *ok = bin(L, TL_OP_AND, tl_build_unary(&L->out->g, TL_OP_NOT, lo),
                         bin(L, TL_OP_CMPLT, cur[d], ic(L, v->mask_hi[d])));
        *valid = bin(L, TL_OP_AND, *valid, ok);
      }
      if (v->shape[d] > 1 && v->strides[d])
        off = bin(L, TL_OP_ADD, off, bin(L, TL_OP_MUL, cur[d], ic(L, v->strides[d])));
    }
    flat = off;
    if (vi > 0 && !view_is_contiguous(&st->views[vi - 1]))
      unflatten(L, off, st->views[vi - 1].ndim, st->views[vi - 1].shape, cur);
  }
  return off;
}

/* ---- values --------------------------------------------------------------------------- */
static int slot_of(lowerer *L, tl_uop *u, int64_t base) {
  tl_lowered *o = L->out;
  for (int i = 1; i < o->nargs; i++)
    if (o->args[i] == u && o->arg_offset[i] == base) return i;
  if (o->nargs == TL_KERNEL_MAX_ARGS) {
    tl_error_set(L->err, TL_ERR_INTERNAL, "kernel reads more than %d buffers", TL_KERNEL_MAX_ARGS - 1);
    L->failed = true;
    return 0;
  }
  o->args[o->nargs] = u;
  o->arg_offset[o->nargs] = base;
  return o->nargs++;
}

/* the index of a random stream among the kernel's, added on first use */
static int rng_slot(lowerer *L, tl_uop *u) {
  tl_lowered *o = L->out;
  for (int i = 0; i < o->nrng; i++)
    if (o->rng[i] == u) return i;
  if (o->nrng == o->caprng) { /* in the arena: freed with the kernel graph */
    int cap = o->caprng ? 2 * o->caprng : 8;
    tl_uop **r = alloc(L, (size_t)cap * sizeof *r);
    if (!r) return 0;
    if (o->nrng) memcpy(r, o->rng, (size_t)o->nrng * sizeof *r);
    o->rng = r;
    o->caprng = cap;
  }
  o->rng[o->nrng] = u;
  return o->nrng++;
}

static tl_uop *load(lowerer *L, tl_uop *node, int64_t base, tl_uop *index, tl_uop *guard) {
  if (!index || !guard) { /* an allocation failed building them */
    L->failed = true;
    return NULL;
  }
  tl_arg slot = {.i = slot_of(L, node, base)};
  tl_uop *src[2] = {index, guard};
  bool always = guard->op == TL_OP_CONST && guard->arg.i != 0;
  if (guard->op == TL_OP_CONST && !always) return tl_build_const(&L->out->g, (tl_dtype)node->dtype, 0);
  return tl_uop_make(&L->out->g, TL_OP_LOAD, (tl_dtype)node->dtype, always ? 1 : 2, src, slot, 0, 0, NULL);
}

static bool is_input(lowerer *L, const tl_uop *u) {
  return u != L->kroot && (u->op == TL_OP_BUFFER || tl_schedule_kernel_of(L->sched, u));
}

static tl_uop *value(lowerer *L, tl_uop *u, tl_uop *const *idx, tl_uop *guard);

/* ---- accurate f32 sums -------------------------------------------------------------
 * A single f32 accumulator loses the small terms once it is large: each SIMD lane's
 * partial stops growing at 2^24 times the addend (ones summed to 2^24 per lane), and
 * 0.1 summed 10^7 times was 4e-5 off. A sum of more than BLOCK terms is blocked: the
 * innermost reduce loop runs over BLOCK elements at a time into a fresh f32
 * accumulator (16 terms a SIMD lane: an error under 20 x 2^-24 of the block's sum of
 * magnitudes, typically far less; 128 terms in a row where kernels are not
 * vectorized), and each block's sum is added to an f64 accumulator, rounded to f32
 * once at the end. The blocks' chains are independent, so this runs
 * faster than one long chain; every term in f64 instead cost two conversions a
 * vector, 30% on a sum of exps. */
enum { BLOCK = 128, SHORT_SUM = 4096 };

static tl_uop *new_acc(lowerer *L, tl_block *t, tl_dtype dtype, int op) {
  tl_arg id = {.i = L->next_acc++};
  tl_uop *acc = tl_uop_make(&L->out->g, TL_OP_ACC, dtype, 0, NULL, id, op, 0, NULL);
  tl_stmt *init = new_stmt(L, TL_STMT_ACC);
  if (!acc || !init) {
    L->failed = true;
    return NULL;
  }
  acc->aux = t;
  init->u = acc;
  init->reduce_op = op;
  insert(L, t, init);
  return acc;
}

/* acc op= v, inserted in b (before its open loop, as any statement) */
static void update_at(lowerer *L, tl_block *b, tl_uop *acc, int op, tl_uop *v) {
  if (v && acc && acc->dtype != v->dtype) v = tl_build_cast(&L->out->g, v, (tl_dtype)acc->dtype);
  define(L, v);
  tl_stmt *upd = new_stmt(L, TL_STMT_UPDATE);
  if (!upd || !v || !acc) {
    L->failed = true;
    return;
  }
  upd->u = acc;
  upd->value = v;
  upd->reduce_op = op;
  insert(L, b, upd);
}

/* total += the f32 sum of src over `extent` elements of the innermost reduced axis
 * from `start`: an accumulator and a loop of their own in b, where b's next
 * statements go */
static void block_sum(lowerer *L, tl_block *b, tl_uop *total, const tl_uop *src, tl_uop **src_idx, int inner,
                      tl_uop *start, int64_t extent, tl_uop *guard) {
  tl_stmt *after = b->open;
  tl_uop *part = new_acc(L, b, TL_F32, TL_OP_RSUM);
  tl_block *body;
  tl_uop *r = open_loop(L, b, extent, false, &body);
  src_idx[inner] = start ? bin(L, TL_OP_ADD, start, r) : r;
  tl_uop *v = value(L, (tl_uop *)src, src_idx, guard); /* loads stay guarded */
  body->open = NULL; /* after any loop the value opened */
  update_at(L, body, part, TL_OP_RSUM, v);
  b->open = after; /* after the loop */
  update_at(L, b, total, TL_OP_RSUM, part);
}

static tl_uop *reduce_value(lowerer *L, tl_uop *u, tl_uop *const *idx, tl_uop *guard) {
  tl_graph *g = &L->out->g;
  /* the accumulator lives where the reduce's output index is known */
  tl_block *t = block_of(L, guard);
  for (int d = 0; d < u->ndim; d++) {
    tl_block *b = block_of(L, idx[d]);
    if (b->level > t->level) t = b;
  }
  const tl_uop *s = u->src[0];
  int inner = -1;
  int64_t count = 1;
  for (int d = 0; d < u->ndim; d++)
    if ((u->arg.u >> d & 1) && s->shape[d] > 1) {
      inner = d;
      count = count > INT64_MAX / s->shape[d] ? INT64_MAX : count * s->shape[d];
    }
  /* a short sum to one value (a split reduce's partial sums) adds each term in f64:
   * its few conversions cost little */
  bool f32_sum = u->op == TL_OP_RSUM && u->dtype == TL_F32;
  bool each = f32_sum && count > 1 && count <= SHORT_SUM && tl_uop_numel(u) == 1;
  bool blocked = f32_sum && !each && count > BLOCK, widened = each || blocked;
  tl_uop *acc = new_acc(L, t, widened ? TL_F64 : (tl_dtype)u->dtype, u->op);
  tl_stmt *saved_open = t->open;
  tl_uop *src_idx[TL_MAX_DIMS];
  tl_block *b = t;
  for (int d = 0; d < u->ndim; d++) {
    if (!(u->arg.u >> d & 1)) src_idx[d] = idx[d];
    else if (s->shape[d] == 1) src_idx[d] = ic(L, 0);
    else if (d != inner || !blocked) src_idx[d] = open_loop(L, b, s->shape[d], false, &b);
  }
  if (!blocked) {
    tl_uop *v = value(L, u->src[0], src_idx, guard); /* loads stay guarded */
    if (b != t) b->open = NULL; /* after any loop the value opened; with no loop, one update */
    update_at(L, b, acc, u->op, v);
    t->open = saved_open;
    return widened ? tl_build_cast(g, acc, TL_F32) : acc;
  }
  int64_t n = s->shape[inner], full = n / BLOCK, rest = n % BLOCK;
  if (n <= BLOCK) { /* blocks of the outer reduce loops: one pass of the inner loop each */
    block_sum(L, b, acc, s, src_idx, inner, NULL, n, guard);
  } else {
    tl_block *blk;
    tl_uop *rb = open_loop(L, b, full, false, &blk);
    block_sum(L, blk, acc, s, src_idx, inner, bin(L, TL_OP_MUL, rb, ic(L, BLOCK)), BLOCK, guard);
    if (rest) { /* the last, partial block after the loop over whole ones */
      b->open = b == t ? saved_open : NULL;
      block_sum(L, b, acc, s, src_idx, inner, ic(L, full * BLOCK), rest, guard);
    }
  }
  t->open = saved_open;
  /* defined where it is first used: in t after the reduce loops, or deeper */
  return tl_build_cast(g, acc, TL_F32);
}

/* GATHER at idx: the row index is a value loaded from the indices (at idx less its
 * last axis) and becomes the table's first index, so the table is read once per
 * element of the result: O(N*D), and elementwise work on the table fused here runs
 * only for the rows picked. The index is clamped to [0, V): the API checks indices on
 * the host (tl_embedding), and whatever reaches a kernel can still never read outside
 * the table; the clamp also gives the load index proven bounds. */
static tl_uop *gather_value(lowerer *L, tl_uop *u, tl_uop *const *idx, tl_uop *guard) {
  tl_graph *g = &L->out->g;
  tl_uop *table = u->src[0];
  int64_t rows = table->shape[0];
  if (rows == 0) return tl_build_const(g, (tl_dtype)u->dtype, 0); /* nothing to read (interp: 0 too) */
  tl_uop *r = tl_build_cast(g, value(L, u->src[1], idx, guard), TL_I64);
  if (!r) return NULL;
  r = tl_build_where(g, bin(L, TL_OP_CMPLT, r, ic(L, rows)), r, ic(L, rows - 1));
  r = r ? bin(L, TL_OP_MAX, r, ic(L, 0)) : NULL;
  tl_uop *tidx[2] = {r, idx[u->ndim - 1]};
  return r ? value(L, table, tidx, guard) : NULL;
}

static tl_uop *compute(lowerer *L, tl_uop *u, tl_uop *const *idx, tl_uop *guard) {
  tl_graph *g = &L->out->g;
  if (is_input(L, u)) return load(L, u, 0, linear_index(L, u->ndim, u->shape, idx), guard);
  if (u->op == TL_OP_GATHER) return gather_value(L, u, idx, guard);
  switch (tl_op_kind(u->op)) {
  case 'L':
    if (u->op == TL_OP_CONST) {
      tl_arg a = u->arg;
      return tl_uop_make(g, TL_OP_CONST, (tl_dtype)u->dtype, 0, NULL, a, 0, 0, NULL);
    }
    if (u->op == TL_OP_UNIFORM) {
      tl_uop *lin = linear_index(L, u->ndim, u->shape, idx);
      tl_arg stream = {.i = rng_slot(L, u)};
      return tl_uop_make(g, TL_OP_UNIFORM, (tl_dtype)u->dtype, 1, &lin, stream, 0, 0, NULL);
    }
    break;
  case 'V': {
    tl_uop *valid, *src = u->src[0], *sidx[TL_MAX_DIMS];
    int64_t base = 0;
    bool input = is_input(L, src);
    tl_uop *off = view_index(L, u->arg.p, idx, &valid, input ? &base : NULL);
    if (src == L->sums) { /* the GEMM's sum, stored in the output at the same index */
      tl_arg out_slot = {.i = 0};
      return tl_uop_make(g, TL_OP_LOAD, (tl_dtype)src->dtype, 1, &off, out_slot, 0, 0, NULL);
    }
    tl_uop *g2 = bin(L, TL_OP_AND, guard, valid);
    tl_uop *v;
    if (!off || !g2) {
      L->failed = true;
      return NULL;
    }
    if (input) return load(L, src, base, off, g2);
    unflatten(L, off, src->ndim, src->shape, sidx);
    bool noted = L->nflat < (int)(sizeof L->flat / sizeof L->flat[0]);
    if (noted) {
      L->flat[L->nflat].idx = sidx, L->flat[L->nflat].ndim = src->ndim, L->flat[L->nflat].shape = src->shape;
      L->flat[L->nflat++].off = off;
    }
    v = value(L, src, sidx, g2);
    if (noted) L->nflat--;
    if (valid->op == TL_OP_CONST && valid->arg.i) return v;
    return tl_build_where(g, valid, v, tl_build_const(g, (tl_dtype)u->dtype, 0));
  }
  case 'U':
    if (u->op == TL_OP_CAST) return tl_build_cast(g, value(L, u->src[0], idx, guard), (tl_dtype)u->dtype);
    if (u->op == TL_OP_CONTIGUOUS) return value(L, u->src[0], idx, guard);
    return tl_build_unary(g, u->op, value(L, u->src[0], idx, guard));
  case 'B':
    return tl_build_binary(g, u->op, value(L, u->src[0], idx, guard), value(L, u->src[1], idx, guard));
  case 'T':
    return tl_build_where(g, value(L, u->src[0], idx, guard), value(L, u->src[1], idx, guard),
                          value(L, u->src[2], idx, guard));
  case 'R': return reduce_value(L, u, idx, guard);
  default: break;
  }
  tl_error_set(L->err, TL_ERR_INTERNAL, "lowering: op %s has no lowering", tl_op_name(u->op));
  L->failed = true;
  return NULL;
}

static uint64_t memo_hash(const tl_uop *u, tl_uop *const *idx, const tl_uop *guard) {
  uint64_t h = tl_hash_mix(tl_hash_mix(TL_HASH_INIT, (uintptr_t)u), (uintptr_t)guard);
  for (int d = 0; d < u->ndim; d++) h = tl_hash_mix(h, (uintptr_t)idx[d]);
  return h;
}

/* value of node u at index idx, under guard: memoized, so a node read twice at the
 * same index is computed once */
static tl_uop *value(lowerer *L, tl_uop *u, tl_uop *const *idx, tl_uop *guard) {
  if (L->failed || !u || !guard) return NULL;
  for (int d = 0; d < u->ndim; d++)
    if (!idx[d]) return NULL;
  uint64_t h = memo_hash(u, idx, guard), it;
  for (tl_hset_walk w = tl_hset_find(&L->memo, h); (it = tl_hset_next(&L->memo, &w));) {
    const memo_entry *e = (const memo_entry *)(uintptr_t)it;
    if (e->node == u && e->guard == guard && !memcmp(e->idx, idx, sizeof(tl_uop *) * (size_t)u->ndim))
      return e->value;
  }
  tl_uop *v = compute(L, u, idx, guard);
  memo_entry *e = alloc(L, sizeof *e);
  if (!e || !v || !tl_hset_add(&L->memo, h, (uintptr_t)e)) {
    L->failed = true;
    return NULL;
  }
  e->node = u;
  e->guard = guard;
  e->ndim = u->ndim;
  memcpy(e->idx, idx, sizeof(tl_uop *) * (size_t)u->ndim);
  e->value = v;
  return v;
}

/* ---- reduce loop outside the last output loop ---------------------------------------
 * The schedule's TL_FORM_INTERCHANGE (sched/form.h): out[.., n] += src(.., n, k) with
 * the k loop outside the n loop. */

/* Rows of the output computed together in the interchanged loop: each element read
 * along the inner loop (a row of the right operand) then serves JAM rows, so a
 * quarter of the loads, and a quarter of the chances for a store to an output row to
 * alias a later load 4 KiB away (which stalled the single-row loop up to 3x). */
enum { JAM = 4 };

/* the output axis whose loop is unrolled JAM times: the one before `last`, if its
 * size divides; -1 if none */
static int jam_axis(const tl_uop *root, int last) {
  for (int d = last - 1; d >= 0; d--)
    if (root->shape[d] > 1) return root->shape[d] % JAM == 0 ? d : -1;
  return -1;
}

/* idx with the jammed axis at copy i: loop * JAM + i */
static void jam_index(lowerer *L, tl_uop *const *idx, int ndim, int jam, int i, tl_uop **out) {
  memcpy(out, idx, sizeof(tl_uop *) * (size_t)ndim);
  if (jam < 0) return;
  tl_graph *g = &L->out->g;
  out[jam] = tl_build_binary(g, TL_OP_ADD, tl_build_binary(g, TL_OP_MUL, idx[jam], ic(L, JAM)), ic(L, i));
}

static void store_at(lowerer *L, tl_block *b, tl_uop *index, tl_uop *value) {
  define(L, value);
  define(L, index);
  tl_stmt *st = new_stmt(L, TL_STMT_STORE);
  if (!st || !index || !value) {
    L->failed = true;
    return;
  }
  st->index = index;
  st->value = value;
  insert(L, b, st);
}

/* the column of a blocked axis: block * width + r (no block: r) */
static tl_uop *blocked_column(lowerer *L, tl_uop *block, int64_t width, tl_uop *r) {
  return block && r ? bin(L, TL_OP_ADD, bin(L, TL_OP_MUL, block, ic(L, width)), r) : r;
}

/* blocks > 1 (a column sum, no other output axis): the parallel loop runs over blocks
 * of the last axis, each zeroed, then summed row by row */
static void lower_interchanged(lowerer *L, tl_uop *root, tl_uop **idx, tl_block *b, int last, int jam, int64_t blocks) {
  tl_graph *g = &L->out->g;
  tl_block *init, *inner;
  int copies = jam >= 0 ? JAM : 1;
  tl_uop *row[JAM][TL_MAX_DIMS], *block = NULL;
  int64_t width = root->shape[last];
  if (blocks > 1) {
    block = open_loop(L, b, blocks, true, &b);
    L->out->work = blocks;
    width /= blocks;
  }
  idx[last] = blocked_column(L, block, width, open_loop(L, b, width, false, &init));
  if (L->failed) return;
  tl_uop *zero = tl_build_const(g, (tl_dtype)root->dtype, 0);
  for (int i = 0; i < copies; i++) {
    jam_index(L, idx, root->ndim, jam, i, row[i]);
    store_at(L, init, linear_index(L, root->ndim, root->shape, row[i]), zero);
  }
  b->open = NULL; /* the zeroing loop is done: what follows goes after it */
  tl_uop *src_idx[TL_MAX_DIMS];
  const tl_uop *src = root->src[0];
  tl_block *k = b;
  for (int d = 0; d < root->ndim; d++) {
    if (!(root->arg.u >> d & 1)) continue;
    src_idx[d] = src->shape[d] == 1 ? ic(L, 0) : open_loop(L, k, src->shape[d], false, &k);
  }
  idx[last] = blocked_column(L, block, width, open_loop(L, k, width, false, &inner));
  if (L->failed) return;
  tl_arg out_slot = {.i = 0};
  for (int i = 0; i < copies; i++) {
    jam_index(L, idx, root->ndim, jam, i, row[i]);
    for (int d = 0; d < root->ndim; d++)
      if (!(root->arg.u >> d & 1)) src_idx[d] = row[i][d];
    tl_uop *v = value(L, root->src[0], src_idx, true_const(L));
    tl_uop *lin = linear_index(L, root->ndim, root->shape, row[i]);
    tl_uop *old = lin ? tl_uop_make(g, TL_OP_LOAD, (tl_dtype)root->dtype, 1, &lin, out_slot, 0, 0, NULL) : NULL;
    store_at(L, inner, lin, old && v ? tl_build_binary(g, TL_OP_ADD, old, v) : NULL);
  }
}

/* ---- GEMM ----------------------------------------------------------------------------
 * The schedule's TL_FORM_GEMM (sched/form.h): the plan of the prelude's routine, its
 * tiles and the binding of its operands (docs/decisions.md). */
enum { GEMM_UNITS = 16 }; /* about this many unit tiles along M and N */

/* the slot an operand view's buffer is bound at, and the offset of its origin there:
 * bound at the view's offset when no stride is negative (a slice at another offset
 * then runs the same kernel), else at the buffer's start */
static int gemm_operand(lowerer *L, const tl_uop *v, int64_t *off) {
  const tl_view *w = &((const tl_st *)v->arg.p)->views[0];
  bool at_offset = w->offset >= 0;
  for (int d = 0; d < w->ndim; d++)
    if (w->shape[d] > 1 && w->strides[d] < 0) at_offset = false;
  *off = at_offset ? 0 : w->offset;
  return slot_of(L, v->src[0], at_offset ? w->offset : 0);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void lower_store(lowerer *L, tl_uop *root, tl_uop **idx, tl_block *innermost);

/* the epilogue's loop over C's row: its parameters (the batch bi and the row m), the
 * output index they and the column give, and the store of root there */
static void lower_epilogue(lowerer *L, tl_uop *root, const tl_uop *sum, const tl_gemm_roles *r,
                           const tl_gemm_plan *g) {
  tl_graph *gr = &L->out->g;
  tl_block *top = L->out->root, *body;
  int64_t batch = 1, bshape[TL_MAX_DIMS];
  for (int i = 0; i < g->nbatch; i++) batch *= bshape[i] = g->bshape[i];
  tl_arg bid = {.i = L->next_range++}, mid = {.i = L->next_range++};
  tl_uop *bi = tl_uop_make(gr, TL_OP_RANGE, TL_I64, 0, NULL, bid, batch, 0, NULL);
  tl_uop *m = tl_uop_make(gr, TL_OP_RANGE, TL_I64, 0, NULL, mid, g->m, 0, NULL);
  tl_uop *n = open_loop(L, top, g->n, true, &body);
  if (!bi || !m || !n) {
    L->failed = true;
    return;
  }
  bi->aux = m->aux = top; /* parameters: what depends on them alone is computed once a row */
  tl_uop *bidx[TL_MAX_DIMS], *sidx[TL_MAX_DIMS], *idx[TL_MAX_DIMS];
  unflatten(L, bi, g->nbatch, bshape, bidx);
  for (int d = 0, b = 0; d < sum->ndim; d++) {
    bool batch_axis = d != r->md && d != r->nd && !(sum->arg.u >> d & 1) && sum->shape[d] > 1;
    sidx[d] = d == r->md ? m : d == r->nd ? n : batch_axis ? bidx[b++] : ic(L, 0);
  }
  for (int d = 0, j = 0; d < root->ndim; d++) { /* the same non-1 axes, in order */
    if (root->shape[d] == 1) {
      idx[d] = ic(L, 0);
      continue;
    }
    while (sum->shape[j] == 1) j++;
    idx[d] = sidx[j++];
  }
  L->sums = (tl_uop *)sum;
  lower_store(L, root, idx, body);
  L->out->epilogue = true;
  L->out->epi_bi = bid.i;
  L->out->epi_m = mid.i;
}

/* the kernel as a GEMM: its root the sum, or elementwise over one (the epilogue) */
static bool lower_gemm(lowerer *L, tl_uop *root, const tl_kernel_form *f) {
  if (f->kind != TL_FORM_GEMM) return false;
  const tl_uop *sum = f->sum;
  tl_gemm_roles r = f->roles;
  tl_gemm_plan *g = alloc(L, sizeof *g);
  if (!g) return true;
  const int64_t *sa = ((const tl_st *)r.a->arg.p)->views[0].strides, *sb = ((const tl_st *)r.b->arg.p)->views[0].strides;
  int64_t cs[TL_MAX_DIMS], nr = 2 * TL_GEMM_UNIT_VBYTES / tl_dtype_size((tl_dtype)sum->dtype);
  tl_shape_strides(sum->ndim, sum->shape, cs); /* C: the output, laid out as the sum */
  g->slot_a = gemm_operand(L, r.a, &g->off_a);
  g->slot_b = gemm_operand(L, r.b, &g->off_b);
  g->m = r.md >= 0 ? sum->shape[r.md] : 1;
  g->n = sum->shape[r.nd];
  g->k = sum->src[0]->shape[r.kd];
  g->sam = r.md >= 0 ? sa[r.md] : 0;
  g->sbn = sb[r.nd];
  g->sak = sa[r.kd];
  g->sbk = sb[r.kd];
  g->ldc = r.md >= 0 ? cs[r.md] : 0;
  int64_t batch = 1;
  for (int d = 0; d < sum->ndim; d++) {
    if (d == r.md || d == r.nd || (sum->arg.u >> d & 1) || sum->shape[d] == 1) continue;
    g->bshape[g->nbatch] = sum->shape[d];
    g->bsa[g->nbatch] = sa[d];
    g->bsb[g->nbatch] = sb[d];
    g->bsc[g->nbatch++] = cs[d];
    batch *= sum->shape[d];
  }
  g->um = TL_GEMM_UNIT_MR * ceil_div(ceil_div(g->m, TL_GEMM_UNIT_MR), GEMM_UNITS);
  g->un = nr * ceil_div(ceil_div(g->n, nr), GEMM_UNITS);
  g->gm = ceil_div(g->m, g->um);
  g->gn = ceil_div(g->n, g->un);
  L->out->gemm = g;
  if (sum != root) lower_epilogue(L, root, sum, &r, g);
  L->out->work = batch * g->gm * g->gn;
  L->out->inner_work = g->um * g->un * (g->k > 0 ? g->k : 1);
  return true;
}

/* ---- scatter-add ----------------------------------------------------------------------
 * A SCATTER_ADD writes rows picked by data, which no loop nest of out[idx] = f(idx)
 * expresses without a one-hot product (O(N*V*D)): the prelude's routine runs it over
 * its two sources, both buffers (the scheduler computes them first). The parallel
 * range is the output's rows, so no two threads write one row (kernel_prelude.h). */
static bool lower_scatter(lowerer *L, tl_uop *root) {
  if (root->op != TL_OP_SCATTER_ADD) return false;
  tl_uop *values = root->src[0], *ids = root->src[1];
  tl_scatter_plan *p = alloc(L, sizeof *p);
  if (!p) return true;
  if (!is_input(L, values) || !is_input(L, ids)) {
    tl_error_set(L->err, TL_ERR_INTERNAL, "lowering: a scatter-add's sources must be buffers");
    L->failed = true;
    return true;
  }
  p->slot_values = slot_of(L, values, 0);
  p->slot_idx = slot_of(L, ids, 0);
  p->n = tl_uop_numel(ids);
  p->rows = root->shape[0];
  p->d = root->shape[1];
  L->out->scatter = p;
  L->out->work = p->rows;
  L->out->inner_work = p->d > 0 ? p->d : 1;
  return true;
}

/* ---- convolution ---------------------------------------------------------------------
 * A CONV2D is the prelude's implicit GEMM over its two sources, buffers computed first
 * (the scheduler). Mode 0 splits each image's output pixels into units of at most
 * CONV_UNIT_PIXELS, equal, whole micro-tiles of either build (32 f32 columns); modes
 * 1 and 3 (the forward at stride 1) each image's output channels into blocks; mode 2
 * dw's columns (c, ki, kj) as mode 0 its pixels, each unit summing over every image. */
enum { CONV_UNIT_PIXELS = 256, CONV_UNIT_ALIGN = 32, CONV_MIN_UNITS = 16 };
/* Winograd (3x3 at stride 1): channels at most (its workspace holds 16 x unit x the
 * in channels); y and dx: out channels a unit; dw: x's channels a unit, at least
 * CONV_WINO_DW_UNIT (each unit transforms all of g again), about CONV_WINO_DW_UNITS units */
enum { CONV_WINO_CHANNELS = 2048, CONV_WINO_UNIT_MIN = 24, CONV_WINO_UNIT_MAX = 64, CONV_WINO_DW_UNIT = 32,
       CONV_WINO_DW_UNITS = 8 };

static bool lower_conv(lowerer *L, tl_uop *root) {
  if (root->op != TL_OP_CONV2D) return false;
  tl_conv_plan *p = alloc(L, sizeof *p);
  if (!p) return true;
  tl_uop *a = root->src[0], *b = root->src[1];
  if (!is_input(L, a) || !is_input(L, b)) {
    tl_error_set(L->err, TL_ERR_INTERNAL, "lowering: a convolution's sources must be buffers");
    L->failed = true;
    return true;
  }
  tl_conv_params q = tl_conv_params_unpack(root->arg.i);
  const tl_uop *x = root->arg2 == 0 ? a : root->arg2 == 1 ? root : b;  /* [n, c, h, w] */
  const tl_uop *w = root->arg2 == 2 ? root : b;                        /* [o, c, kh, kw] */
  const tl_uop *y = root->arg2 == 0 ? root : a;                        /* [n, o, oh, ow] */
  p->slot_a = slot_of(L, a, 0);
  p->slot_b = slot_of(L, b, 0);
  p->mode = (int)root->arg2;
  p->n = x->shape[0], p->c = x->shape[1], p->h = x->shape[2], p->w = x->shape[3];
  p->o = w->shape[0], p->kh = w->shape[2], p->kw = w->shape[3], p->oh = y->shape[2], p->ow = y->shape[3];
  p->sh = q.sh, p->sw = q.sw, p->ph = q.ph, p->pw = q.pw;
  int64_t kk = p->kh * p->kw, pixels = p->oh * p->ow;
  if (p->mode == 0 && p->sh == 1 && p->sw == 1) p->mode = 3; /* stride 1: as dx, in tiles (measured faster) */
  p->wino = p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->c <= CONV_WINO_CHANNELS &&
            p->o <= CONV_WINO_CHANNELS;
  if (p->wino && p->mode == 2) { /* blocks of x's channels, each over every image */
    p->unit = ceil_div(p->c, CONV_WINO_DW_UNITS);
    p->unit = p->unit < CONV_WINO_DW_UNIT ? CONV_WINO_DW_UNIT : p->unit;
    p->unit = p->unit > p->c ? p->c : p->unit;
  } else if (p->wino) { /* blocks of out channels of one image: big ones, as each transforms the image */
    int64_t ch = p->mode == 1 ? p->c : p->o;
    p->unit = ceil_div(ch * p->n, CONV_MIN_UNITS);
    p->unit = p->unit < CONV_WINO_UNIT_MIN ? CONV_WINO_UNIT_MIN : p->unit > CONV_WINO_UNIT_MAX ? CONV_WINO_UNIT_MAX : p->unit;
    p->unit = p->unit > ch ? ch : p->unit;
  } else if (p->mode & 1) { /* output channels a unit: a tile of (c, ki, kj) rows about MC high, smaller
                        when the batch is small, so CONV_MIN_UNITS threads find work */
    int64_t ch = p->mode == 1 ? p->c : p->o, most = TL_GEMM_MC / kk > 1 ? TL_GEMM_MC / kk : 1;
    p->unit = ceil_div(ch * p->n, CONV_MIN_UNITS);
    p->unit = p->unit < 1 ? 1 : p->unit > most ? most : p->unit;
  } else {
    int64_t cols = p->mode == 0 ? pixels : p->c * kk;
    int64_t tiles = p->mode == 2 ? ceil_div(cols, CONV_UNIT_ALIGN) : ceil_div(cols, CONV_UNIT_PIXELS);
    if (tiles < 1) tiles = 1;
    p->unit = CONV_UNIT_ALIGN * ceil_div(ceil_div(cols, tiles), CONV_UNIT_ALIGN);
    if (p->unit < CONV_UNIT_ALIGN) p->unit = CONV_UNIT_ALIGN;
  }
  if (p->unit < 1) p->unit = 1;
  int64_t ncols = p->wino && p->mode == 2 ? p->c : p->mode == 2 ? p->c * kk : p->mode == 0 ? pixels
                  : p->mode == 1 ? p->c : p->o;
  p->units = ceil_div(ncols, p->unit);
  if (p->units < 1) p->units = 1;
  L->out->conv = p;
  L->out->work = p->mode == 2 ? p->units : p->n * p->units;
  int64_t per = p->mode == 0 ? p->o * p->unit * p->c * kk           /* multiply-adds a unit */
                : p->mode == 1 ? p->unit * kk * pixels * p->o
                : p->mode == 3 ? p->unit * kk * p->h * p->w * p->c : p->o * p->unit * p->n * pixels;
  if (p->wino) /* 16 a 2x2 tile */
    per = p->mode == 2 ? 4 * p->o * p->unit * p->n * pixels : 4 * p->unit * (p->mode == 1 ? p->o * p->h * p->w : p->c * pixels);
  L->out->inner_work = per > 0 ? per : 1;
  return true;
}

/* out[idx] = root(idx) in the innermost output loop */
static void lower_store(lowerer *L, tl_uop *root, tl_uop **idx, tl_block *innermost) {
  tl_uop *v = value(L, root, idx, true_const(L));
  store_at(L, innermost, L->failed ? NULL : linear_index(L, root->ndim, root->shape, idx), v);
}

/* statements run by one pass over block, inner loops and reduce loops included */
static int64_t block_work(const tl_block *b) {
  int64_t n = 0;
  for (int i = 0; i < b->n; i++) {
    const tl_stmt *st = b->items[i];
    int64_t w = 1;
    if (st->kind == TL_STMT_LOOP) {
      int64_t extent = st->u->arg2 > 0 ? st->u->arg2 : 1, body = block_work(st->body);
      w = body > INT64_MAX / extent ? INT64_MAX : extent * body;
    }
    n = w > INT64_MAX - n ? INT64_MAX : n + w;
  }
  return n > 0 ? n : 1;
}

/* the work of one iteration of the parallel loop: what the thread pool splits by
 * (counting the output elements alone took a matmul's rows for cheap ones and ran
 * it on one core) */
static int64_t parallel_body_work(const tl_block *root) {
  for (int i = 0; i < root->n; i++)
    if (root->items[i]->kind == TL_STMT_LOOP && root->items[i]->parallel) return block_work(root->items[i]->body);
  return block_work(root);
}

/* ---- splitting output loops where masks change -----------------------------------
 * A pad, a cat or a stack reads through masks: where(lo <= i && i < hi, load, 0) for
 * every element, and a stack of k slices evaluates all k. Split at the constants its
 * index is compared with, a loop becomes pieces in which every such comparison has
 * one answer: the index rules fold the masks and wheres away as the body is built
 * (a piece of one element makes the index a constant, so a small stacked axis
 * unrolls), and the inner loops run without branches, vectorized. The points are
 * found by building the store's value once with plain loops and reading its
 * comparisons. The parallel loop is never split: a kernel has one parallel range. */
enum { SPLIT_MAX_COPIES = 128, SPLIT_MAX_POINTS = 16 };

typedef struct {
  int n;
  int64_t at[SPLIT_MAX_POINTS]; /* sorted, each in (0, extent) */
} split_points;

/* i * a + c0 < c with a > 0 and i a loop index in [0, extent): true exactly for i
 * below ceil((c - c0) / a) */
static void add_split_point(split_points *sp, const tl_uop *cmp, const int64_t *range_id, const tl_uop *root) {
  const tl_uop *x = cmp->src[0], *c = cmp->src[1];
  int64_t c0 = 0, a = 1;
  if (c->op != TL_OP_CONST || x->dtype != TL_I64) return;
  if (x->op == TL_OP_ADD && x->src[1]->op == TL_OP_CONST) c0 = x->src[1]->arg.i, x = x->src[0];
  if (x->op == TL_OP_MUL && x->src[1]->op == TL_OP_CONST) a = x->src[1]->arg.i, x = x->src[0];
  if (x->op != TL_OP_RANGE || a <= 0) return;
  int d = 0;
  while (d < root->ndim && range_id[d] != x->arg.i) d++;
  if (d == root->ndim) return; /* a reduce loop */
  int64_t num = c->arg.i - c0, at = num > 0 ? (num + a - 1) / a : 0;
  split_points *p = &sp[d];
  if (at <= 0 || at >= root->shape[d] || p->n == SPLIT_MAX_POINTS) return;
  int i = 0;
  while (i < p->n && p->at[i] < at) i++;
  if (i < p->n && p->at[i] == at) return;
  memmove(p->at + i + 1, p->at + i, sizeof(int64_t) * (size_t)(p->n - i));
  p->at[i] = at;
  p->n++;
}

static bool reads_masked_view(lowerer *L, tl_uop *u, tl_ptrmap *seen, int depth) {
  if (is_input(L, u) || tl_ptrmap_get(seen, u)) return false;
  if (depth > 4096 || !tl_ptrmap_put(seen, u, u)) return true; /* unsure: look */
  if (u->op == TL_OP_VIEW) {
    const tl_st *st = u->arg.p;
    for (int i = 0; i < st->nviews; i++)
      if (st->views[i].masked) return true;
  }
  for (int i = 0; i < u->nsrc; i++)
    if (reads_masked_view(L, u->src[i], seen, depth + 1)) return true;
  return false;
}

/* the comparisons of loop indices with constants in the store's value, built once
 * with plain loops in a scratch kernel graph */
static void find_split_points(lowerer *L, tl_uop *root, split_points *sp) {
  tl_ptrmap seen = {0};
  bool masked = reads_masked_view(L, root, &seen, 0);
  tl_ptrmap_free(&seen);
  if (!masked) return;
  tl_lowered scratch;
  memset(&scratch, 0, sizeof scratch);
  tl_graph_init(&scratch.g, false);
  lowerer *T = calloc(1, sizeof *T);
  tl_error err = {0};
  if (!T || !scratch.g.arena) goto done;
  T->out = &scratch;
  T->sched = L->sched;
  T->kroot = L->kroot;
  T->err = &err;
  scratch.root = new_block(T, NULL);
  scratch.nargs = 1;
  tl_uop *idx[TL_MAX_DIMS] = {0};
  int64_t range_id[TL_MAX_DIMS];
  tl_block *b = scratch.root;
  for (int d = 0; d < root->ndim && !T->failed; d++) {
    range_id[d] = -1;
    if (root->shape[d] == 1) {
      idx[d] = ic(T, 0);
      continue;
    }
    idx[d] = open_loop(T, b, root->shape[d], false, &b);
    if (idx[d]) range_id[d] = idx[d]->arg.i;
  }
  tl_uop *v = T->failed ? NULL : value(T, root, idx, true_const(T));
  if (!v) goto done;
  /* every node of the value, without recursion: chains can be long */
  /* out of memory: fewer split points, the same values */
  tl_vec(tl_uop *) stack = {0};
  bool ok = tl_vec_push(&stack, v);
  while (ok && stack.len) {
    tl_uop *u = stack.data[--stack.len];
    if (tl_ptrmap_get(&seen, u)) continue;
    if (!tl_ptrmap_put(&seen, u, u)) break;
    if (u->op == TL_OP_CMPLT) add_split_point(sp, u, range_id, root);
    for (int i = 0; ok && i < u->nsrc; i++) ok = tl_vec_push(&stack, u->src[i]);
  }
  tl_vec_free(&stack);
  tl_ptrmap_free(&seen);
done:
  if (T) tl_hset_free(&T->memo);
  free(T);
  tl_lowered_free(&scratch);
}

/* keeps the splits of the innermost loops first (they unlock vectorizing), as long
 * as the body's copies stay few; never the first (parallel) loop */
static void choose_splits(const tl_uop *root, split_points *sp) {
  int first = 0;
  while (first < root->ndim && root->shape[first] == 1) first++;
  int64_t copies = 1;
  for (int d = root->ndim - 1; d >= 0; d--) {
    if (d <= first || copies * (sp[d].n + 1) > SPLIT_MAX_COPIES) sp[d].n = 0;
    copies *= sp[d].n + 1;
  }
}

/* the loops from axis d inward, each split into its pieces, around the store */
static void lower_pieces(lowerer *L, tl_uop *root, tl_uop **idx, int d, tl_block *b, const split_points *sp) {
  if (L->failed) return;
  if (d == root->ndim) {
    lower_store(L, root, idx, b);
    return;
  }
  if (root->shape[d] == 1) {
    idx[d] = ic(L, 0);
    lower_pieces(L, root, idx, d + 1, b, sp);
    return;
  }
  int64_t lo = 0;
  for (int i = 0; i <= sp[d].n && !L->failed; i++) {
    int64_t hi = i < sp[d].n ? sp[d].at[i] : root->shape[d];
    tl_block *body = b;
    b->open = NULL; /* each piece after the one before */
    if (hi - lo == 1) {
      idx[d] = ic(L, lo);
    } else {
      tl_uop *r = open_loop(L, b, hi - lo, false, &body);
      idx[d] = lo && r ? bin(L, TL_OP_ADD, r, ic(L, lo)) : r;
    }
    lower_pieces(L, root, idx, d + 1, body, sp);
    lo = hi;
  }
}

/* the output loops (the first one parallel) and the store, or the interchanged sum */
static void lower_loops(lowerer *L, tl_uop *root) {
  tl_uop *idx[TL_MAX_DIMS] = {0};
  tl_block *b = L->out->root;
  bool first = true;
  const tl_kernel_form *f = tl_schedule_form(L->sched, root);
  int last = f && f->kind == TL_FORM_INTERCHANGE ? f->axis : -1, jam = last >= 0 ? jam_axis(root, last) : -1;
  split_points sp[TL_MAX_DIMS];
  memset(sp, 0, sizeof sp);
  if (last < 0) {
    find_split_points(L, root, sp);
    choose_splits(root, sp);
  }
  int split_from = 0;
  while (split_from < root->ndim && !sp[split_from].n) split_from++;
  for (int d = 0; d < root->ndim && d < split_from && !L->failed; d++) {
    if (root->shape[d] == 1 || d == last) {
      idx[d] = ic(L, 0);
      continue;
    }
    int64_t extent = d == jam ? root->shape[d] / JAM : root->shape[d];
    idx[d] = open_loop(L, b, extent, first, &b);
    if (first) L->out->work = extent;
    first = false;
  }
  if (L->failed) { /* an allocation failed: idx is incomplete */
    L->out->inner_work = 1;
    return;
  }
  if (last >= 0) lower_interchanged(L, root, idx, b, last, jam, f->blocks);
  else lower_pieces(L, root, idx, split_from, b, sp);
  L->out->inner_work = L->failed ? 1 : parallel_body_work(L->out->root);
}

/* A SINK's kernel: a loop nest per shape among its values, storing each value at its
 * offset in the SINK's buffer; what values of one nest share (an optimizer's new
 * moment, read by the new parameter) is computed once, as in any kernel. With one
 * shape the nest's first loop is the parallel one; with several, each nest's first
 * loop (a loop of one turn for a value of one element) is its part of the parallel
 * range, so one kernel updates every parameter of a model on every core. The pool
 * splits that range by turns, so a nest whose rows are short (a bias: one element a
 * row) takes its rows in groups, each turn as long as the longest row of any nest:
 * a turn of one element beside turns of 256 gave one core three quarters of Adam. */
static bool same_shape(const tl_uop *a, const tl_uop *b) {
  return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

/* the elements of one row of shape's axis d: the product of the axes after it */
static int64_t sink_row(const tl_uop *shape, int d) {
  int64_t n = 1;
  for (int k = d + 1; k < shape->ndim; k++) n *= shape->shape[k];
  return n;
}

/* the rows of an axis of extent rows taken in one turn: the largest divisor of rows
 * whose rows hold at most grain elements (1: one row a turn) */
static int64_t sink_group(int64_t rows, int64_t row, int64_t grain) {
  if (rows < 1) return 1; /* an empty value: a loop of no turns */
  int64_t g = row > 0 && grain / row > 1 ? grain / row : 1;
  if (g >= rows) return rows;
  while (g > 1 && rows % g) g--;
  return g;
}

/* the nest's first loop, over axis d: one turn a row, or (many) a turn for each group
 * of rows (sink_group), their index turn * group + the inner loop's */
static tl_uop *sink_first_loop(lowerer *L, tl_block **b, const tl_uop *shape, int d, int64_t grain, bool many) {
  int64_t part = L->out->work, rows = shape->shape[d];
  int64_t group = many ? sink_group(rows, sink_row(shape, d), grain) : 1;
  tl_uop *r = open_loop(L, *b, rows / group, true, b);
  if (!many || L->failed) {
    L->out->work = rows;
    return r;
  }
  (*b)->parent->items[(*b)->parent->n - 1]->part = part;
  L->out->work = part + rows / group;
  if (group == 1) return r;
  tl_uop *in = open_loop(L, *b, group, false, b);
  return L->failed ? NULL : bin(L, TL_OP_ADD, bin(L, TL_OP_MUL, r, ic(L, group)), in);
}

static void lower_sink_nest(lowerer *L, const tl_uop *shape, int n, const tl_uop **values, const int64_t *offset,
                            bool many, int64_t grain) {
  tl_uop *idx[TL_MAX_DIMS] = {0};
  tl_block *b = L->out->root;
  b->open = NULL; /* after the nests before it: its loop is the block's last item */
  bool first = true;
  int64_t part = L->out->work;
  for (int d = 0; d < shape->ndim && !L->failed; d++) {
    if (shape->shape[d] == 1) {
      idx[d] = ic(L, 0);
      continue;
    }
    if (first) idx[d] = sink_first_loop(L, &b, shape, d, grain, many);
    else idx[d] = open_loop(L, b, shape->shape[d], false, &b);
    first = false;
  }
  if (first && many) { /* one element: a part of one turn */
    open_loop(L, b, 1, true, &b);
    if (!L->failed) b->parent->items[b->parent->n - 1]->part = part;
    L->out->work = part + 1;
  }
  tl_uop *lin = L->failed ? NULL : linear_index(L, shape->ndim, shape->shape, idx);
  for (int i = 0; i < n && !L->failed; i++) {
    if (!same_shape(values[i], shape)) continue;
    tl_uop *v = value(L, (tl_uop *)values[i], idx, true_const(L));
    store_at(L, b, L->failed ? NULL : bin(L, TL_OP_ADD, lin, ic(L, offset[i])), v);
  }
}

static void lower_sink(lowerer *L, tl_uop *root) {
  const tl_uop *values[TL_SINK_MAX];
  int64_t offset[TL_SINK_MAX];
  int n = tl_sink_layout(root, values, offset), nshapes = 0;
  const tl_uop *shapes[TL_SINK_MAX];
  for (int i = 0; i < n; i++) {
    int k = 0;
    while (k < nshapes && !same_shape(shapes[k], values[i])) k++;
    if (k == nshapes) shapes[nshapes++] = values[i];
  }
  int64_t grain = 1; /* the longest row (after the first non-unit axis) of any nest */
  for (int k = 0; k < nshapes; k++) {
    int d = 0;
    while (d < shapes[k]->ndim && shapes[k]->shape[d] == 1) d++;
    int64_t row = sink_row(shapes[k], d);
    if (row > grain) grain = row;
  }
  L->out->work = nshapes > 1 ? 0 : 1;
  for (int k = 0; k < nshapes && !L->failed; k++) lower_sink_nest(L, shapes[k], n, values, offset, nshapes > 1, grain);
  if (L->failed) {
    L->out->inner_work = 1;
    return;
  }
  int64_t all = block_work(L->out->root), work = L->out->work > 0 ? L->out->work : 1;
  L->out->inner_work = nshapes > 1 ? (all / work > 0 ? all / work : 1) : parallel_body_work(L->out->root);
}

tl_status tl_lower_kernel(tl_uop *root, const tl_schedule *s, tl_lowered *out, tl_error *err) {
  memset(out, 0, sizeof *out);
  tl_graph_init(&out->g, false);
  lowerer *L = calloc(1, sizeof *L);
  if (!L || !out->g.arena) {
    free(L);
    tl_lowered_free(out); /* the graph's table or arena, whichever was made */
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory lowering a kernel");
  }
  L->out = out;
  L->sched = s;
  L->kroot = root;
  L->err = err;
  out->root = new_block(L, NULL);
  out->args[0] = root;
  out->nargs = 1;
  out->work = 1;
  const tl_kernel_form *f = tl_schedule_form(s, root);
  if (!out->root) L->failed = true;
  else if (root->op == TL_OP_SINK) lower_sink(L, root);
  else if (!lower_scatter(L, root) && !lower_conv(L, root) && (!f || !lower_gemm(L, root, f))) lower_loops(L, root);
  bool failed = L->failed || out->g.oom; /* a rule's node that could not be made: see rewrite.c */
  tl_hset_free(&L->memo);
  free(L);
  if (failed) {
    if (err->status == TL_OK) tl_error_set(err, TL_ERR_NOMEM, "out of memory lowering a kernel");
    tl_lowered_free(out);
    return err->status;
  }
  return TL_OK;
}

void tl_lowered_free(tl_lowered *l) { tl_graph_free(&l->g); }
