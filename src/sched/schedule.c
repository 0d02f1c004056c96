#include "schedule.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/hash.h"
#include "core/shapetracker.h"
#include "core/vec.h"
#include "sched/form.h"
#include "core/limits.h"

typedef struct {
  tl_ptrmap parents;    /* node -> consumer count */
  tl_ptrmap realize;    /* nodes chosen for their own kernel */
  tl_ptrmap seen;       /* per kernel: visited (node, loop-depth) states */
  tl_vec(tl_uop *) order;
  tl_vec(tl_uop *) work; /* kernels to visit, in the order they were chosen */
  tl_uop *epilogue; /* the GEMM sum left in the kernel being visited, if any */
  tl_form_ctx fc;   /* tl_schedule_build's host, and the nodes chosen so far */
  bool oom;
} scheduler;

static void count_parents(scheduler *s, tl_uop *u, tl_ptrmap *done) {
  if (tl_ptrmap_get(done, u)) return;
  if (!tl_ptrmap_put(done, u, u)) s->oom = true;
  for (int i = 0; i < u->nsrc; i++) {
    tl_uop *c = u->src[i];
    uintptr_t n = (uintptr_t)tl_ptrmap_get(&s->parents, c);
    if (!tl_ptrmap_put(&s->parents, c, (void *)(n + 1))) s->oom = true;
    count_parents(s, c, done);
  }
}

static bool is_leaf(const tl_uop *u) {
  return u->op == TL_OP_BUFFER || u->op == TL_OP_CONST || u->op == TL_OP_UNIFORM;
}

/* depth[d]: the nesting level of the loop that indexes axis d of the current node
 * (-1: the axis has size 1 or a constant index). NULL: the node is read through a
 * view that is not the identity, so its index is an arbitrary expression. */
typedef struct {
  int d[TL_MAX_DIMS];
  int bcast; /* the shallowest loop the value is broadcast along on its way to the root */
} depths;

enum { NO_BROADCAST = 1 << 20 };

/* A view that keeps every loop of its source as it is: it only adds or drops size-1
 * axes and broadcasts (stride 0). Then in[] gets the source's loop depths, and the
 * loops it broadcasts along are remembered: a reduce below may fuse only if they are
 * nested inside its own output loops (see visit). */
static bool view_keeps_loops(const tl_uop *v, const depths *dp, depths *in) {
  const tl_uop *r = v->src[0];
  const tl_st *st = v->arg.p;
  if (st->nviews != 1) return false;
  const tl_view *w = &st->views[0];
  if (w->masked || w->offset != 0) return false;
  int64_t contiguous[TL_MAX_DIMS];
  tl_shape_strides(r->ndim, r->shape, contiguous);
  int j = 0, shallowest_expanded = dp->bcast;
  for (int d = 0; d < r->ndim; d++) in->d[d] = -1;
  for (int d = 0; d < v->ndim; d++) {
    if (v->shape[d] == 1) continue;
    if (w->strides[d] == 0) {
      if (dp->d[d] < shallowest_expanded) shallowest_expanded = dp->d[d];
      continue;
    }
    while (j < r->ndim && r->shape[j] == 1) j++;
    if (j == r->ndim || r->shape[j] != v->shape[d] || w->strides[d] != contiguous[j]) return false;
    in->d[j++] = dp->d[d];
  }
  while (j < r->ndim && r->shape[j] == 1) j++;
  in->bcast = shallowest_expanded;
  return j == r->ndim;
}

static void mark_realize(scheduler *s, tl_uop *u) {
  if (tl_ptrmap_get(&s->realize, u)) return;
  if (!tl_ptrmap_put(&s->realize, u, u) || !tl_vec_push(&s->work, u)) s->oom = true;
}

static uint64_t state_key(const tl_uop *u, const depths *dp) {
  uint64_t h = tl_hash_mix(TL_HASH_INIT, u->id);
  if (!dp) return h | 1;
  for (int i = 0; i < u->ndim; i++) h = tl_hash_mix(h, (uint64_t)(dp->d[i] + 2));
  h = tl_hash_mix(h, (uint64_t)dp->bcast);
  return (h | 1) ^ 2;
}

/* ---- GEMM epilogues ------------------------------------------------------------------
 * Elementwise consumers of a GEMM (bias, activation, scale) run in its kernel, on each
 * block of C while it is in cache (lower.c), instead of in a kernel of their own that
 * reads C back. Only when nothing else needs the sum: no other reader of it, and its
 * view read by nothing but the elementwise nodes of this kernel. */
/* whether u reads sum through nodes this kernel computes (a reduction of the sum's
 * row, a view that moves its index): the epilogue runs on part of a row of C at a
 * time, while other threads still compute the rest, so such a read would see columns
 * not written yet. Too deep or out of memory: assumed to. */
static bool reads_sum(const scheduler *s, const tl_uop *u, const tl_uop *sum, tl_ptrmap *seen, int depth) {
  if (u == sum) return true;
  if (is_leaf(u) || tl_ptrmap_get(&s->realize, u) || tl_ptrmap_get(seen, u)) return false;
  if (depth > 4 * 512 || !tl_ptrmap_put(seen, u, (void *)(uintptr_t)u)) return true;
  for (int i = 0; i < u->nsrc; i++)
    if (reads_sum(s, u->src[i], sum, seen, depth + 1)) return true;
  return false;
}

static void count_reads(scheduler *s, tl_uop *u, const tl_uop *sum, tl_ptrmap *seen, tl_uop **view, int *edges,
                        bool *ok, int depth) {
  if (!*ok || tl_ptrmap_get(seen, u)) return;
  if (depth > 4 * 512 || !tl_ptrmap_put(seen, u, u)) {
    *ok = false;
    return;
  }
  for (int i = 0; i < u->nsrc; i++) {
    tl_uop *c = u->src[i];
    if (c->op == TL_OP_VIEW && c->src[0] == sum) {
      if (*view && *view != c) *ok = false; /* one view of it, at the output's index */
      *view = c;
      (*edges)++;
    } else if (tl_op_is_elementwise(c->op) && c->op != TL_OP_CONTIGUOUS && !tl_ptrmap_get(&s->realize, c)) {
      count_reads(s, c, sum, seen, view, edges, ok, depth + 1);
    } else if (c->op != TL_OP_CONTIGUOUS) {
      tl_ptrmap other = {0};
      if (reads_sum(s, c, sum, &other, 0)) *ok = false; /* layer_norm's mean over C's row, say */
      tl_ptrmap_free(&other);
    }
  }
}

static bool epilogue_fusable(scheduler *s, tl_uop *kroot, const tl_uop *sum) {
  if (!tl_op_is_elementwise(kroot->op) || (uintptr_t)tl_ptrmap_get(&s->parents, sum) != 1) return false;
  tl_ptrmap seen = {0};
  tl_uop *view = NULL;
  int edges = 0;
  bool ok = true;
  count_reads(s, kroot, sum, &seen, &view, &edges, &ok, 0);
  tl_ptrmap_free(&seen);
  return ok && view && (uintptr_t)edges == (uintptr_t)tl_ptrmap_get(&s->parents, view) &&
         tl_form_epilogue_view(kroot, view);
}

static depths root_depths(const tl_uop *u);

static void visit(scheduler *s, tl_uop *u, const depths *dp, tl_uop *kroot) {
  if (u != kroot && (is_leaf(u) || tl_ptrmap_get(&s->realize, u))) return;
  if (u->op == TL_OP_SINK) { /* each value at its own output index */
    for (int i = 0; i < u->nsrc; i++) {
      depths own = root_depths(u->src[i]);
      visit(s, u->src[i], &own, kroot);
    }
    return;
  }
  uint64_t key = state_key(u, dp);
  if (tl_ptrmap_get(&s->seen, (void *)(uintptr_t)key)) return;
  if (!tl_ptrmap_put(&s->seen, (void *)(uintptr_t)key, u)) s->oom = true;
  char kind = tl_op_kind(u->op);
  if (u->op == TL_OP_CONTIGUOUS && u != kroot) {
    mark_realize(s, u);
    return;
  }
  if (u->op == TL_OP_SCATTER_ADD || u->op == TL_OP_CONV2D) { /* a routine over buffers (lower.c): its own kernel */
    if (u != kroot) {
      mark_realize(s, u);
      return;
    }
    for (int i = 0; i < u->nsrc; i++)
      if (u->src[i]->op != TL_OP_BUFFER) mark_realize(s, u->src[i]); /* computed first, contiguous */
    return;
  }
  if (u->op == TL_OP_GATHER) { /* both read at an index that is no loop of ours: as through a view */
    for (int i = 0; i < u->nsrc; i++) visit(s, u->src[i], NULL, kroot);
    return;
  }
  tl_gemm_roles roles;
  bool gemm = kind == 'R' && tl_form_gemm_roles(u, &roles);
  if (gemm && u != kroot && (s->epilogue == u || (!s->epilogue && epilogue_fusable(s, kroot, u))))
    s->epilogue = u; /* stays, under its elementwise consumers */
  else if (kind == 'R' && u != kroot && (!dp || gemm || tl_form_interchange_axis(u, &s->fc) >= 0)) {
    mark_realize(s, u);
    return;
  }
  if (gemm) { /* the GEMM reads its operands from buffers: computed ones come first */
    tl_uop *operands[2] = {roles.a->src[0], roles.b->src[0]};
    for (int i = 0; i < 2; i++)
      if (!is_leaf(operands[i])) mark_realize(s, operands[i]);
    return;
  }
  if (kind == 'R') {
    depths in;
    int base = -1, next;
    for (int d = 0; d < u->ndim; d++)
      if (!(u->arg.u >> d & 1) && dp->d[d] > base) base = dp->d[d];
    if (u != kroot && dp->bcast <= base) {
      /* broadcast along a loop its result does not depend on, nested outside its own
       * loops: fused, it would run again for every turn of that loop (a matmul of a
       * matmul): it is computed once, in its own kernel */
      mark_realize(s, u);
      return;
    }
    next = base + 1;
    in.bcast = dp->bcast;
    for (int d = 0; d < u->ndim; d++)
      in.d[d] = (u->arg.u >> d & 1) ? (u->src[0]->shape[d] > 1 ? next++ : -1) : dp->d[d];
    visit(s, u->src[0], &in, kroot);
    return;
  }
  if (kind == 'V') {
    tl_uop *src = u->src[0];
    bool shared = (uintptr_t)tl_ptrmap_get(&s->parents, src) > 1;
    if (!is_leaf(src) && tl_op_kind(src->op) != 'V' && shared && tl_op_kind(src->op) != 'R') {
      mark_realize(s, src); /* recomputing it per view would repeat work */
      return;
    }
    depths in;
    if (dp && view_keeps_loops(u, dp, &in)) {
      visit(s, src, &in, kroot);
    } else {
      visit(s, src, NULL, kroot);
    }
    return;
  }
  for (int i = 0; i < u->nsrc; i++) visit(s, u->src[i], dp, kroot);
}

/* ---- kernels that would read too many buffers ---------------------------------------
 * A kernel takes at most TL_KERNEL_MAX_ARGS - 1 inputs. The inputs under each node are
 * counted exactly, bottom-up, as a set (a sorted array of nodes, in an arena: an input
 * shared by several paths counts once, so an optimizer step over many parameters,
 * each read by several of its values, stays one kernel). Where a node's set grows past
 * MOST, its widest sources are computed first, in kernels of their own, until what it
 * reads fits. MOST keeps one slot for the random streams' words. */
enum { MOST = TL_KERNEL_MAX_ARGS - 2 };

typedef struct {
  int n; /* MOST + 1: more than fits */
  const tl_uop *at[];
} input_set;

static bool can_split_at(const tl_uop *u) {
  return !is_leaf(u) && (tl_op_is_elementwise(u->op) || tl_op_kind(u->op) == 'R');
}

static const input_set *set_of(tl_arena *a, int n, const tl_uop *const *items) {
  input_set *r = tl_arena_alloc(a, sizeof *r + sizeof(r->at[0]) * (size_t)(n ? n : 1));
  if (!r) return NULL;
  r->n = n;
  if (n) memcpy(r->at, items, sizeof(r->at[0]) * (size_t)n);
  return r;
}

/* the union of sets (sorted by address), stopping at MOST + 1 members */
static int set_union(const input_set *const *sets, int nsets, const tl_uop **out) {
  int n = 0, pos[TL_MAX_DIMS + 4] = {0};
  for (;;) {
    const tl_uop *least = NULL;
    for (int i = 0; i < nsets; i++)
      if (pos[i] < sets[i]->n && (!least || (uintptr_t)sets[i]->at[pos[i]] < (uintptr_t)least))
        least = sets[i]->at[pos[i]];
    if (!least || n > MOST) return n;
    out[n++] = least;
    for (int i = 0; i < nsets; i++)
      if (pos[i] < sets[i]->n && sets[i]->at[pos[i]] == least) pos[i]++;
  }
}

static const input_set *inputs_of(scheduler *s, tl_uop *u, tl_uop *kroot, tl_ptrmap *memo, tl_arena *a,
                                  int depth) {
  const input_set *r;
  if (u != kroot && (is_leaf(u) || tl_ptrmap_get(&s->realize, u))) { /* before the memo: split since */
    const tl_uop *self = u;
    return set_of(a, u->op == TL_OP_CONST ? 0 : 1, &self);
  }
  const input_set *known = tl_ptrmap_get(memo, u);
  if (known) return known;
  if (depth > 4 * 512) { /* deeper than any realize slice: cannot happen */
    r = set_of(a, 0, NULL);
  } else {
    const input_set *sets[TL_MAX_DIMS + 4];
    int nsrc = u->nsrc < TL_MAX_DIMS + 4 ? u->nsrc : TL_MAX_DIMS + 4;
    for (int i = 0; i < nsrc; i++)
      if (!(sets[i] = inputs_of(s, u->src[i], kroot, memo, a, depth + 1))) return NULL;
    const tl_uop *all[MOST + 1];
    int n = set_union(sets, nsrc, all);
    while (n > MOST) { /* compute the widest splittable source on its own */
      int widest = -1;
      for (int i = 0; i < nsrc; i++) {
        tl_uop *c = u->src[i]->op == TL_OP_VIEW ? u->src[i]->src[0] : u->src[i];
        if (sets[i]->n > 1 && can_split_at(c) && (widest < 0 || sets[i]->n > sets[widest]->n)) widest = i;
      }
      if (widest < 0) break;
      tl_uop *c = u->src[widest]->op == TL_OP_VIEW ? u->src[widest]->src[0] : u->src[widest];
      mark_realize(s, c);
      const tl_uop *self = c;
      if (!(sets[widest] = set_of(a, 1, &self))) return NULL;
      n = set_union(sets, nsrc, all);
    }
    r = set_of(a, n, all);
  }
  if (r && !tl_ptrmap_put(memo, u, (void *)r)) s->oom = true;
  return r;
}

static void count_inputs(scheduler *s, tl_uop *kroot) {
  tl_ptrmap memo = {0};
  tl_arena *a = tl_arena_create();
  if (!a || !inputs_of(s, kroot, kroot, &memo, a, 0)) s->oom = true;
  tl_arena_destroy(a);
  tl_ptrmap_free(&memo);
}

static depths root_depths(const tl_uop *u) {
  depths dp;
  int level = 0;
  for (int d = 0; d < u->ndim; d++) dp.d[d] = u->shape[d] > 1 ? level++ : -1;
  dp.bcast = NO_BROADCAST;
  return dp;
}

/* post-order over realized nodes: dependencies first */
static void order_kernels(scheduler *s, tl_uop *u, tl_ptrmap *done, tl_uop *kroot) {
  if (u != kroot && tl_ptrmap_get(&s->realize, u)) { /* another kernel: its own walk */
    kroot = u;
  }
  if (tl_ptrmap_get(done, u)) return;
  if (!tl_ptrmap_put(done, u, u)) s->oom = true;
  for (int i = 0; i < u->nsrc; i++) order_kernels(s, u->src[i], done, kroot);
  if (u == kroot && !tl_vec_push(&s->order, u)) s->oom = true;
}

/* ---- each kernel's loop form ---------------------------------------------------------- */
static bool is_kernel_input(const tl_schedule *s, const tl_uop *u, const tl_uop *kroot) {
  return u != kroot && (u->op == TL_OP_BUFFER || tl_schedule_kernel_of(s, u));
}

/* the view of a GEMM sum left in kroot's kernel among the elementwise nodes under u
 * (the epilogue: see epilogue_fusable), or NULL */
static const tl_uop *find_epilogue_view(const tl_schedule *s, const tl_uop *u, const tl_uop *kroot, tl_ptrmap *seen,
                                        int depth, bool *oom) {
  if (depth > 4 * 512 || tl_ptrmap_get(seen, u) || is_kernel_input(s, u, kroot)) return NULL;
  if (!tl_ptrmap_put(seen, u, (void *)u)) *oom = true;
  if (u->op == TL_OP_VIEW)
    return !is_kernel_input(s, u->src[0], kroot) && tl_form_epilogue_view(kroot, u) ? u : NULL;
  if (!tl_op_is_elementwise(u->op)) return NULL;
  for (int i = 0; i < u->nsrc; i++) {
    const tl_uop *v = find_epilogue_view(s, u->src[i], kroot, seen, depth + 1, oom);
    if (v) return v;
  }
  return NULL;
}

/* tl_form_ctx's question, while kernels are chosen and once they are */
static bool chosen(const void *sched, const tl_uop *u) {
  return tl_ptrmap_get(&((const scheduler *)sched)->realize, u) != NULL;
}
static bool kernel_root(const void *sched, const tl_uop *u) { return tl_schedule_kernel_of(sched, u) != 0; }

static tl_kernel_form form_of(const tl_schedule *s, const tl_uop *root, const tl_form_ctx *fc, bool *oom) {
  tl_kernel_form f;
  memset(&f, 0, sizeof f);
  f.kind = TL_FORM_LOOPS;
  const tl_uop *sum = root->op == TL_OP_RSUM ? root : NULL;
  if (!sum && tl_dtype_is_float(root->dtype)) {
    tl_ptrmap seen = {0};
    const tl_uop *view = find_epilogue_view(s, root, root, &seen, 0, oom);
    tl_ptrmap_free(&seen);
    sum = view ? view->src[0] : NULL;
  }
  if (sum && tl_form_gemm_roles(sum, &f.roles) && is_kernel_input(s, f.roles.a->src[0], root) &&
      is_kernel_input(s, f.roles.b->src[0], root)) {
    f.kind = TL_FORM_GEMM;
    f.sum = sum;
  } else if (root->op == TL_OP_RSUM && !tl_schedule_kernel_of(s, root->src[0]) &&
             (f.axis = tl_form_interchange_axis(root, fc)) >= 0) {
    f.kind = TL_FORM_INTERCHANGE;
    f.blocks = tl_form_interchange_blocks(root, f.axis);
  }
  return f;
}

bool tl_schedule_build(tl_uop *root, bool host, tl_schedule *out) {
  scheduler s;
  memset(&s, 0, sizeof s);
  s.fc = (tl_form_ctx){host, chosen, &s};
  memset(out, 0, sizeof *out);
  tl_ptrmap done = {0};
  count_parents(&s, root, &done);
  tl_ptrmap_free(&done);
  if (root->op != TL_OP_BUFFER) mark_realize(&s, root);
  /* visit kernels until no new one appears: mark_realize appends to the worklist */
  for (size_t next = 0; !s.oom && next < s.work.len; next++) {
    tl_uop *k = s.work.data[next];
    depths dp = root_depths(k);
    tl_ptrmap_free(&s.seen);
    s.epilogue = NULL;
    visit(&s, k, &dp, k);
    count_inputs(&s, k);
  }
  tl_ptrmap_free(&s.seen);
  tl_ptrmap ordered = {0};
  if (root->op != TL_OP_BUFFER) order_kernels(&s, root, &ordered, root);
  tl_ptrmap_free(&ordered);
  tl_ptrmap_free(&s.parents);
  tl_ptrmap_free(&s.realize);
  tl_vec_free(&s.work);
  out->nkernels = (int)s.order.len;
  out->roots = s.order.data;
  for (int i = 0; i < out->nkernels && !s.oom; i++)
    if (!tl_ptrmap_put(&out->realized, out->roots[i], (void *)(uintptr_t)(i + 1))) s.oom = true;
  out->forms = s.oom ? NULL : calloc((size_t)(out->nkernels ? out->nkernels : 1), sizeof *out->forms);
  if (!out->forms) s.oom = true;
  tl_form_ctx fc = {host, kernel_root, out};
  for (int i = 0; i < out->nkernels && !s.oom; i++) out->forms[i] = form_of(out, out->roots[i], &fc, &s.oom);
  if (s.oom) tl_schedule_free(out);
  return !s.oom;
}

int tl_schedule_kernel_of(const tl_schedule *s, const tl_uop *u) {
  return (int)(uintptr_t)tl_ptrmap_get(&s->realized, u);
}

const tl_kernel_form *tl_schedule_form(const tl_schedule *s, const tl_uop *root) {
  int k = tl_schedule_kernel_of(s, root);
  return k && s->forms ? &s->forms[k - 1] : NULL;
}

void tl_schedule_free(tl_schedule *s) {
  free(s->roots);
  free(s->forms);
  tl_ptrmap_free(&s->realized);
  memset(s, 0, sizeof *s);
}
