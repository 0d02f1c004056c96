/* realize.c — running graphs on the context's backend (runtime/backend.h): rewrite,
 * schedule and lower, then the backend plans, renders, compiles and launches each
 * kernel, and each realize is recorded for replay by graph structure
 * (runtime/replay.h) and replayed; or the backend evaluates the graph itself. Reading
 * results back; printing; DOT. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "codegen/lower.h"
#include "core/format.h"
#include "core/hash.h"
#include "core/shapetracker.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "sched/form.h"
#include "sched/planner.h"
#include "sched/schedule.h"

static const tl_ruleset *const graph_rules[] = {&tl_rules_fallback, &tl_rules_fold, &tl_rules_algebra,
                                                 &tl_rules_split};

static tl_status dot_realize(tl_ctx *ctx, const tl_uop *root, const tl_schedule *sched);

static tl_buffer *arg_buffer(tl_uop *node, const tl_schedule *s, tl_buffer **outs) {
  if (node->op == TL_OP_BUFFER) return node->arg.p;
  int k = tl_schedule_kernel_of(s, node);
  return k ? outs[k - 1] : NULL;
}

static double ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* runs a compiled kernel on bound arguments (the one place kernels run: both paths);
 * TL_PROFILE's line names the backend that ran it */
static tl_status exec_kernel(tl_ctx *ctx, tl_backend *be, int index, const tl_kernel *k, const tl_kernel_arg *args,
                             const uint64_t *words, int64_t out_numel) {
  struct timespec t0;
  if (ctx->profile) clock_gettime(CLOCK_MONOTONIC, &t0);
  tl_status st = be->i->launch(be, k, args, k->nwords ? words : NULL, &ctx->err);
  if (!st) ctx->stats.kernels_run++;
  if (!st && ctx->profile && !(st = be->i->synchronize(be, &ctx->err)))
    fprintf(stderr, "tl profile: realize %" PRIu64 " kernel %d on %s: %.3f ms, %d args, output %s [%lld elements]\n",
            ctx->stats.realizes, index, be->i->name, ms_since(&t0), k->nargs, tl_dtype_name(k->arg_dtype[0]),
            (long long)out_numel);
  return st;
}

/* a kernel's argument: b from byte `skip` on (host memory: its address; a device
 * buffer: the backend finds it through buf and offset); b must be where be runs */
static tl_status bind_arg(tl_ctx *ctx, tl_backend *be, tl_kernel_arg *a, tl_buffer *b, size_t skip) {
  tl_backend *home = b ? tl_api_backend_of(ctx, b) : be;
  /* host memory serves every backend whose buffers are host memory; a device's only its own */
  if (home != be && (home->i->host_view || be->i->host_view))
    return tl_error_set(&ctx->err, TL_ERR_BACKEND, "operands on different backends: %s and %s (move one with .to(\"%s\"))",
                        be->i->name, home->i->name, be->i->name);
  a->data = b && b->data ? (char *)b->data + skip : NULL;
  a->nbytes = b && b->nbytes > skip ? b->nbytes - skip : 0;
  a->dtype = b ? (tl_dtype)b->dtype : TL_F32;
  a->buf = b;
  a->offset = skip;
  return TL_OK;
}

/* the random streams' keys and counter words, or NULL and an error */
static uint64_t *stream_words(tl_ctx *ctx, int nwords, uint64_t *stack, int nstack) {
  uint64_t *w = nwords <= nstack ? stack : malloc((size_t)nwords * sizeof *w);
  if (!w) tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory binding a kernel's random streams");
  return w;
}

/* The kernels' output buffers: the last one its own, since it outlives the realize; the
 * others views into one arena at the planned offsets. */
static tl_status make_outputs(tl_ctx *ctx, tl_backend *be, const tl_replay_kernel *ks, int n, size_t arena_bytes,
                              size_t naive_bytes, tl_buffer **outs) {
  ctx->stats.plan_arena_bytes = arena_bytes;
  ctx->stats.plan_naive_bytes = naive_bytes;
  ctx->stats.arena_bytes_total += arena_bytes;
  tl_status st = TL_OK;
  tl_buffer *arena = NULL;
  if (arena_bytes && !(arena = be->i->buffer_alloc(be, TL_BOOL, (int64_t)arena_bytes, &ctx->mem)))
    st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory for a %zu-byte arena", arena_bytes);
  for (int i = 0; !st && i < n; i++) {
    if (i + 1 == n || !arena) { /* no arena: every intermediate is empty (a size-0 axis) */
      /* a planned size fits (tl_api_shape_fits): only memory can run out */
      outs[i] = be->i->buffer_alloc(be, ks[i].out_dtype, ks[i].out_numel, &ctx->mem);
      st = outs[i] ? TL_OK : tl_api_buffer_fail(ctx, "realize", ks[i].out_dtype, ks[i].out_numel);
    } else if (!(outs[i] = tl_buffer_view(arena, ks[i].out_offset, ks[i].out_dtype, ks[i].out_numel))) {
      st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory for a view into the arena");
    }
  }
  tl_buffer_release(arena); /* the views hold it */
  return st;
}

/* Liveness over the kernel sequence: intermediate i is written by kernel i and dies
 * after the last kernel reading it. The planner packs them into one arena. */
static tl_status plan_outputs(tl_ctx *ctx, const tl_schedule *s, tl_lowered *low, tl_replay *rp) {
  int n = s->nkernels;
  tl_plan_buffer *pb = calloc((size_t)(n > 1 ? n - 1 : 1), sizeof *pb);
  if (!pb) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory planning buffers");
  for (int i = 0; i < n; i++) {
    tl_uop *r = s->roots[i];
    rp->kernels[i].out_dtype = (tl_dtype)r->dtype;
    rp->kernels[i].out_numel = tl_uop_numel(r);
    if (i + 1 < n) pb[i].size = (size_t)tl_uop_numel(r) * tl_dtype_size((tl_dtype)r->dtype);
    if (i + 1 < n) pb[i].first = pb[i].last = i;
  }
  for (int j = 0; j < n; j++)
    for (int a = 1; a < low[j].nargs; a++) {
      int k = tl_schedule_kernel_of(s, low[j].args[a]);
      if (k && k - 1 < n - 1 && j > pb[k - 1].last) pb[k - 1].last = j;
    }
  tl_plan plan = {0, 0};
  tl_status st = n > 1 ? tl_plan_make(pb, n - 1, &plan, &ctx->err) : TL_OK;
  if (!st && n > 1) st = tl_plan_validate(pb, n - 1, &plan, &ctx->err);
  for (int i = 0; !st && i + 1 < n; i++) rp->kernels[i].out_offset = pb[i].offset;
  rp->arena_bytes = plan.arena_bytes;
  rp->naive_bytes = plan.naive_bytes;
  free(pb);
  return st;
}

/* The backend plans kernel i onto its device, renders it and requests its code into
 * rk->k (compiled by the flush that follows the requests of the whole schedule: one
 * batch); records where each of its arguments and streams comes from in terms of the
 * key's leaves (false in *replayable when one cannot be said: then the realize is not
 * recorded). */
static tl_status compile_kernel(tl_ctx *ctx, tl_backend *be, int index, const tl_schedule *s, tl_lowered *low,
                                tl_replay_kernel *rk, bool *replayable) {
  tl_kernel *k = &rk->k;
  snprintf(k->name, sizeof k->name, "k%d", index);
  tl_status st = be->i->plan(be, low, k, &ctx->err);
  if (st) return st;
  const char *body = NULL;
  char *src = be->i->render(be, low, k, &body);
  st = src ? TL_OK : tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory rendering a kernel");
  if (!st && ctx->debug) fprintf(stderr, "--- kernel %d ---\n%s", index, body);
  if (!st) st = be->i->compile(be, src, k, &ctx->err);
  free(src);
  if (st) return st;
  k->nargs = low->nargs;
  k->nwords = 2 * low->nrng;
  rk->arg[0] = (tl_replay_arg){-1 - index, 0};
  for (int i = 0; i < low->nargs; i++) {
    tl_uop *node = low->args[i];
    size_t esize = tl_dtype_size((tl_dtype)node->dtype), skip = (size_t)low->arg_offset[i] * esize;
    size_t need = (size_t)tl_uop_numel(node) * esize;
    k->arg_dtype[i] = (tl_dtype)node->dtype;
    k->arg_min_bytes[i] = need > skip ? need - skip : 0; /* a view's base offset is bound here */
    rk->arg[i].skip = skip;
    if (i == 0) continue;
    if (node->op == TL_OP_BUFFER) { /* as arg_buffer binds it */
      rk->arg[i].from = tl_replay_leaf(&be->replay, node);
      if (rk->arg[i].from < 0) *replayable = false;
    } else {
      int kernel = tl_schedule_kernel_of(s, node);
      rk->arg[i].from = -kernel;
      if (!kernel) *replayable = false;
    }
  }
  if (low->nrng && *replayable && !(rk->streams = calloc((size_t)low->nrng, sizeof *rk->streams)))
    *replayable = false;
  for (int j = 0; *replayable && j < low->nrng; j++)
    if (!tl_replay_stream_of(&be->replay, low->rng[j], &rk->streams[j])) *replayable = false;
  return TL_OK;
}

/* Lowers, plans, compiles and runs the schedule; keeps what it did as the plan of the
 * current key when `record` (see replay.h). */
static tl_status run_schedule(tl_ctx *ctx, tl_backend *be, const tl_schedule *s, tl_buffer **outs, bool record) {
  int n = s->nkernels, lowered = 0;
  tl_lowered *low = calloc((size_t)n, sizeof *low);
  tl_replay *rp = calloc(1, sizeof *rp); /* filled in as it goes, kept if `record` */
  if (rp && !(rp->kernels = calloc((size_t)n, sizeof *rp->kernels))) {
    free(rp);
    rp = NULL;
  }
  if (rp) rp->nkernels = n;
  tl_status st = low && rp ? TL_OK : tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory");
  for (; !st && lowered < n; lowered++) {
    st = tl_lower_kernel(s->roots[lowered], s, &low[lowered], &ctx->err);
    if (st) break;
  }
  if (!st) st = plan_outputs(ctx, s, low, rp);
  if (!st) st = make_outputs(ctx, be, rp->kernels, n, rp->arena_bytes, rp->naive_bytes, outs);
  for (int i = 0; !st && i < n; i++) st = compile_kernel(ctx, be, i, s, &low[i], &rp->kernels[i], &record);
  if (!st) st = be->i->flush(be, &ctx->err);
  for (int i = 0; !st && i < n; i++) {
    tl_replay_kernel *rk = &rp->kernels[i];
    tl_kernel_arg args[TL_KERNEL_MAX_ARGS];
    for (int a = 0; !st && a < low[i].nargs; a++) {
      tl_buffer *b = a == 0 ? outs[i] : arg_buffer(low[i].args[a], s, outs);
      size_t skip = rk->arg[a].skip;
      st = bind_arg(ctx, be, &args[a], b, skip);
    }
    uint64_t stack[16], *words = st ? NULL : stream_words(ctx, rk->k.nwords, stack, 16);
    if (!st && !words) st = ctx->err.status;
    for (int j = 0; !st && j < low[i].nrng; j++) {
      words[2 * j] = low[i].rng[j]->arg.u;
      words[2 * j + 1] = (uint64_t)low[i].rng[j]->arg2;
    }
    if (!st) st = exec_kernel(ctx, be, i, &rk->k, args, words, rk->out_numel);
    if (words != stack) free(words);
  }
  for (int i = 0; i < lowered; i++) tl_lowered_free(&low[i]);
  free(low);
  if (!st && record) tl_replay_put(&be->replay, rp);
  else tl_replay_free(rp);
  return st;
}

/* A realize of a graph whose structure was realized before: the same kernels on this
 * graph's buffers and streams (its leaves, in key order). */
static tl_buffer *run_replay(tl_ctx *ctx, tl_backend *be, const tl_replay *rp, tl_uop *const *leaves) {
  int n = rp->nkernels;
  tl_buffer *stack_outs[8] = {0}, **outs = n <= 8 ? stack_outs : calloc((size_t)n, sizeof *outs);
  tl_status st = outs ? make_outputs(ctx, be, rp->kernels, n, rp->arena_bytes, rp->naive_bytes, outs)
                      : tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory");
  for (int i = 0; !st && i < n; i++) {
    const tl_replay_kernel *rk = &rp->kernels[i];
    tl_kernel_arg args[TL_KERNEL_MAX_ARGS];
    for (int a = 0; !st && a < rk->k.nargs; a++) {
      int from = rk->arg[a].from;
      tl_buffer *b = from >= 0 ? leaves[from]->arg.p : outs[-1 - from];
      st = bind_arg(ctx, be, &args[a], b, rk->arg[a].skip);
    }
    uint64_t stack[16], *words = stream_words(ctx, rk->k.nwords, stack, 16);
    if (!words) st = ctx->err.status;
    for (int j = 0; words && j < rk->k.nwords / 2; j++) {
      const tl_uop *l = leaves[rk->streams[j].leaf];
      words[2 * j] = l->arg.u;
      words[2 * j + 1] = (uint64_t)l->arg2 + rk->streams[j].delta;
    }
    if (!st) st = exec_kernel(ctx, be, i, &rk->k, args, words, rk->out_numel);
    if (words != stack) free(words);
  }
  tl_buffer *result = NULL;
  if (!st) {
    result = outs[n - 1];
    tl_buffer_retain(result);
    ctx->stats.realize_replays++;
  }
  for (int i = 0; outs && i < n; i++) tl_buffer_release(outs[i]);
  if (outs != stack_outs) free(outs);
  return result;
}

/* a row-major reshape of a node is that node's buffer: compute the node, share it */
static tl_uop *strip_reshape(tl_uop *r) {
  while (r && r->op == TL_OP_VIEW && tl_st_is_contiguous(r->arg.p) && tl_uop_numel(r->src[0]) == tl_uop_numel(r))
    r = r->src[0];
  return r;
}

/* whether be's kernels run on host threads, a chunk of the parallel loop each (the
 * schedule's forms differ from a device grid's): a backend of host memory (a device
 * backend says not, prepared or not) */
static bool runs_on_host(const tl_backend *be) {
  tl_backend_caps caps;
  memset(&caps, 0, sizeof caps);
  if (be && be->i->caps) be->i->caps(be, &caps);
  return !be || caps.host_memory;
}

/* a kernel backend's realize: replayed when its structure was realized before, else
 * the full path */
static tl_buffer *realize_kernels(tl_ctx *ctx, tl_backend *be, tl_uop *u) {
  /* DOT pictures and TL_DEBUG's kernel listings come from the full path */
  bool keyed = !ctx->dot_dir && !ctx->debug && tl_replay_key(&be->replay, u);
  if (!keyed) tl_replay_forget(&be->replay);
  const tl_replay *rp = keyed ? tl_replay_find(&be->replay) : NULL;
  if (rp) return run_replay(ctx, be, rp, be->replay.leaves.data);
  tl_graph *g = &ctx->graph;
  size_t mark = tl_graph_mark(g);
  tl_uop *r = tl_rewrite_graph(g, u, graph_rules, 4);
  tl_buffer *result = NULL;
  tl_schedule s;
  r = strip_reshape(r);
  if (!r) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory rewriting the graph");
  } else if (r->op == TL_OP_BUFFER) {
    result = r->arg.p;
    tl_buffer_retain(result);
  } else if (!tl_schedule_build(r, runs_on_host(be), &s)) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory scheduling the graph");
  } else {
    tl_buffer **outs = calloc((size_t)s.nkernels, sizeof *outs);
    tl_status st = outs ? dot_realize(ctx, r, &s) : tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory");
    if (!st) st = run_schedule(ctx, be, &s, outs, keyed);
    if (!st) {
      result = outs[s.nkernels - 1];
      tl_buffer_retain(result);
    }
    for (int i = 0; outs && i < s.nkernels; i++) tl_buffer_release(outs[i]);
    free(outs);
    tl_schedule_free(&s);
  }
  tl_graph_release_to(g, mark);
  return result;
}

/* Every pass over a graph recurses along its paths. A graph deeper than this (a long
 * chain built in a loop) is realized in slices from the bottom, so no pass ever goes
 * deeper and the C stack is safe whatever the user builds. */
enum { MAX_REALIZE_DEPTH = 512 };

/* a backend that evaluates graphs itself (eval) is given the graph as it is; TL_PROFILE
 * gives it one line per realize */
static tl_buffer *eval_graph(tl_ctx *ctx, tl_backend *be, tl_uop *u) {
  struct timespec t0;
  if (ctx->profile) clock_gettime(CLOCK_MONOTONIC, &t0);
  tl_buffer *b = dot_realize(ctx, u, NULL) ? NULL : be->i->eval(be, u, &ctx->mem, &ctx->err);
  if (b && ctx->profile)
    fprintf(stderr, "tl profile: realize %" PRIu64 " on %s: %.3f ms, output %s [%lld elements]\n", ctx->stats.realizes,
            be->i->name, ms_since(&t0), tl_dtype_name(b->dtype), (long long)b->numel);
  return b;
}

static tl_buffer *realize_node(tl_ctx *ctx, tl_uop *u) {
  tl_backend *be = ctx->be;
  if (!be->ready && tl_backend_prepare(be, &ctx->err)) return NULL;
  return be->i->eval ? eval_graph(ctx, be, u) : realize_kernels(ctx, be, u);
}

/* Realizes, bottom-up, the node about MAX_REALIZE_DEPTH above the bottom of the
 * deepest path, until u is shallow. After each realize the depths along the path are
 * recomputed: left stale, the next walk would stop just above the new buffer and
 * realize one node at a time (quadratic in the depth: 100,000 levels took 25 s). */
static tl_status realize_deep_parts(tl_ctx *ctx, tl_uop *u) {
  tl_vec(tl_uop *) path = {0};
  tl_status st = TL_OK;
  while (u->depth > MAX_REALIZE_DEPTH) {
    tl_uop *n = u;
    path.len = 0;
    for (;;) { /* down the deepest path to a node that is shallow enough */
      tl_uop *deepest = NULL;
      for (int i = 0; i < n->nsrc; i++)
        if (!deepest || n->src[i]->depth > deepest->depth) deepest = n->src[i];
      if (!deepest || deepest->depth <= MAX_REALIZE_DEPTH) break;
      if (!tl_vec_push(&path, n)) {
        st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory realizing a deep graph");
        goto done;
      }
      n = deepest;
    }
    if (n == u) { /* every source is shallow: stored depths were stale */
      u->depth = 0;
      for (int i = 0; i < u->nsrc; i++)
        if (u->src[i]->depth + 1 > u->depth) u->depth = u->src[i]->depth + 1;
      if (u->depth > MAX_REALIZE_DEPTH) u->depth = MAX_REALIZE_DEPTH;
      break;
    }
    if (n->op != TL_OP_BUFFER) {
      tl_buffer *b = realize_node(ctx, n);
      if (!b) {
        st = ctx->err.status ? ctx->err.status : TL_ERR_INTERNAL;
        goto done;
      }
      tl_uop_become_buffer(&ctx->graph, n, b);
      tl_buffer_release(b);
    }
    n->depth = 0;
    while (path.len > 0) { /* the path's depths, from just above n up to u */
      tl_uop *p = path.data[--path.len];
      uint32_t depth = 0;
      for (int i = 0; i < p->nsrc; i++)
        if (p->src[i]->depth + 1 > depth) depth = p->src[i]->depth + 1;
      p->depth = depth;
    }
  }
done:
  tl_vec_free(&path);
  return st;
}

tl_status tl_api_realize_node(tl_ctx *ctx, tl_uop *u) {
  if (u->op == TL_OP_BUFFER || tl_uop_is_const(u, NULL)) return TL_OK;
  tl_status deep = realize_deep_parts(ctx, u);
  if (deep) return deep;
  tl_buffer *b = realize_node(ctx, u);
  if (!b) return ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_INTERNAL, "realize failed");
  ctx->stats.realizes++;
  tl_uop_become_buffer(&ctx->graph, u, b);
  tl_buffer_release(b);
  return TL_OK;
}

/* A constant's realize: a constant stays a constant for its other users and only this
 * handle moves to the new buffer. */
static tl_status realize_constant(tl_tensor *t) {
  tl_ctx *ctx = t->slot.ctx;
  tl_uop *u = t->u;
  tl_status deep = realize_deep_parts(ctx, u);
  if (deep) return deep;
  tl_buffer *b = realize_node(ctx, u);
  if (!b) return ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_INTERNAL, "realize failed");
  ctx->stats.realizes++;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_arg arg = {.p = b};
  tl_uop *n = tl_uop_make(&ctx->graph, TL_OP_BUFFER, (tl_dtype)u->dtype, 0, NULL, arg, 0, u->ndim, u->shape);
  if (n) {
    tl_uop_retain(n);
    tl_uop_release(&ctx->graph, t->u);
    t->u = n;
  }
  tl_graph_release_to(&ctx->graph, mark);
  tl_buffer_release(b);
  return n ? TL_OK : tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory");
}

static tl_status realize_tensors(tl_ctx *ctx, int n, tl_tensor *const *ts, bool any_shape);

/* Realizes the tensor's node. The node itself becomes the buffer, so every graph
 * holding it sees the result and its sources are freed. */
static tl_status realize_tensor(tl_tensor *t) {
  if (t->u->op == TL_OP_BUFFER) return TL_OK;
  if ((!t->ag || t->ag->op == TL_AG_LEAF) && !tl_uop_is_const(t->u, NULL)) /* the common case: no list */
    return tl_api_realize_node(t->slot.ctx, t->u);
  return realize_tensors(t->slot.ctx, 1, &t, false);
}

tl_status tl_realize(tl_tensor *t) {
  if (!t) return TL_ERR_ARG;
  if (!(t = tl_api_tensor(t, "realize"))) return TL_ERR_ARG;
  return realize_tensor(t);
}

/* One kernel computes the values (distinct nodes of one shape and dtype, none a buffer
 * or a constant) as a SINK's; each node then becomes a view of its part of the SINK's
 * buffer, so no copy is made. */
static tl_status realize_group(tl_ctx *ctx, int n, tl_uop *const *values) {
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *sink = tl_sink_make(&ctx->graph, n, values);
  tl_buffer *b = sink ? realize_node(ctx, sink) : NULL;
  tl_status st = b ? TL_OK : ctx->err.status ? ctx->err.status : tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory");
  const tl_uop *order[TL_SINK_MAX];
  int64_t offset[TL_SINK_MAX];
  if (!st) {
    ctx->stats.realizes++;
    tl_sink_layout(sink, order, offset);
  }
  size_t esize = tl_dtype_size((tl_dtype)values[0]->dtype);
  for (int i = 0; !st && i < n; i++) { /* the layout keeps the order given */
    tl_buffer *v = tl_buffer_view(b, (size_t)offset[i] * esize, (tl_dtype)values[i]->dtype, tl_uop_numel(values[i]));
    if (!v) {
      st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize_many: out of memory");
      break;
    }
    tl_uop_become_buffer(&ctx->graph, values[i], v);
    tl_buffer_release(v);
  }
  tl_buffer_release(b);
  tl_graph_release_to(&ctx->graph, mark);
  return st;
}

static bool same_kind(const tl_uop *a, const tl_uop *b) {
  return a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

/* how far ahead a value looks for others of its shape (bounds the grouping's cost) */
enum { GROUP_LOOKAHEAD = 1024 };

/* CONTIGUOUS asks for a buffer of its own: copied into a SINK's, it would be made
 * twice; a GEMM's epilogue (a layer's bias and relu) runs in the GEMM's kernel alone */
static bool groupable(const tl_uop *u) {
  return tl_op_is_elementwise(u->op) && u->op != TL_OP_CONTIGUOUS && !tl_form_gemm_epilogue(u);
}

/* Elementwise values of one dtype, and of one shape unless any_shape, are computed
 * together, as a SINK's (a reduce or a GEMM keeps its own buffer, with no copy into a
 * SINK's); the others alone; in order of first appearance. */
static tl_status realize_grouped(tl_ctx *ctx, size_t n, tl_uop *const *us, bool any_shape) {
  tl_status st = TL_OK;
  for (size_t i = 0; !st && i < n; i++)
    if (us[i]->op != TL_OP_BUFFER && !tl_uop_is_const(us[i], NULL)) st = realize_deep_parts(ctx, us[i]);
  bool *can = st || n < 2 ? NULL : malloc(n); /* groupable, asked once a value; alone, none */
  if (!st && n >= 2 && !can) st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory");
  for (size_t i = 0; can && i < n; i++) can[i] = groupable(us[i]);
  tl_uop *group[TL_SINK_MAX];
  for (size_t i = 0; !st && i < n; i++) {
    tl_uop *u = us[i];
    if (u->op == TL_OP_BUFFER || tl_uop_is_const(u, NULL)) continue;
    int k = 0;
    group[k++] = u;
    for (size_t j = i + 1; can && can[i] && j < n && j <= i + GROUP_LOOKAHEAD && k < TL_SINK_MAX; j++) {
      tl_uop *w = us[j];
      bool dup = false;
      for (int q = 0; q < k; q++) dup |= group[q] == w;
      if (!dup && w->op != TL_OP_BUFFER && can[j] && w->dtype == u->dtype && (any_shape || same_kind(u, w)))
        group[k++] = w;
    }
    st = k == 1 ? tl_api_realize_node(ctx, u) : realize_group(ctx, k, group);
  }
  free(can);
  return st;
}

tl_status tl_api_realize_nodes(tl_ctx *ctx, size_t n, tl_uop *const *us) { return realize_grouped(ctx, n, us, false); }

/* The tensors, and the values their histories saved for backward, in one call:
 * autograd lists the values (tl_ag_history_values), realize computes them. */
static tl_status realize_tensors(tl_ctx *ctx, int n, tl_tensor *const *ts, bool any_shape) {
  tl_vec(tl_uop *) values = {0};
  tl_status st = TL_OK;
  for (int i = 0; !st && i < n; i++) {
    tl_tensor *t = ts[i];
    tl_uop **hist = NULL;
    size_t nh = 0;
    if (t->u->op == TL_OP_BUFFER) continue;
    if (t->ag && t->ag->op != TL_AG_LEAF && !tl_ag_history_values(t->ag, &hist, &nh))
      st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory");
    if (!st && !tl_vec_reserve(&values, values.len + nh + 1))
      st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory");
    for (size_t k = 0; !st && k < nh; k++) values.data[values.len++] = hist[k];
    if (!st && !tl_uop_is_const(t->u, NULL)) values.data[values.len++] = t->u;
    free(hist);
  }
  if (!st) st = realize_grouped(ctx, values.len, values.data, any_shape);
  tl_vec_free(&values);
  for (int i = 0; !st && i < n; i++) {
    tl_tensor *t = ts[i];
    if (t->ag && t->ag->op != TL_AG_LEAF) tl_ag_mark_history_saved(t->ag);
    if (tl_uop_is_const(t->u, NULL)) st = realize_constant(t);
  }
  return st;
}

tl_status tl_realize_many(int n, tl_tensor *const *ts) {
  if (n < 0 || (n > 0 && !ts)) return TL_ERR_ARG;
  tl_ctx *ctx = NULL;
  tl_tensor *stack[16], **handles = n <= 16 ? stack : malloc(sizeof *handles * (size_t)n);
  if (!handles) return TL_ERR_NOMEM;
  tl_status st = TL_OK;
  for (int i = 0; !st && i < n; i++) {
    tl_tensor *t = ts[i] ? tl_api_tensor(ts[i], "realize_many") : NULL;
    if (!t) st = TL_ERR_ARG;
    else if (ctx && t->slot.ctx != ctx)
      st = tl_error_set(&ctx->err, TL_ERR_ARG, "realize_many: tensors from different contexts");
    else ctx = (handles[i] = t)->slot.ctx;
  }
  if (!st && n) st = realize_tensors(ctx, n, handles, true);
  if (handles != stack) free(handles);
  return st;
}

tl_status tl_to_host(tl_tensor *t, void *dst, size_t nbytes) {
  if (!t || !(t = tl_api_tensor(t, "to_host"))) return TL_ERR_ARG;
  tl_ctx *ctx = t->slot.ctx;
  size_t need = (size_t)tl_uop_numel(t->u) * tl_dtype_size((tl_dtype)t->u->dtype);
  if (nbytes != need)
    return tl_error_set(&ctx->err, TL_ERR_ARG, "to_host: destination has %zu bytes, the tensor needs %zu",
                        nbytes, need);
  if (need && !dst) return tl_error_set(&ctx->err, TL_ERR_ARG, "to_host: destination is NULL");
  tl_status st = realize_tensor(t);
  if (st) return st;
  const tl_buffer *b = t->u->arg.p;
  tl_backend *be = tl_api_backend_of(ctx, b);
  return be->i->copy_to_host(be, dst, b, 0, need, &ctx->err);
}

const void *tl_data(tl_tensor *t) {
  if (!(t = tl_api_tensor(t, "data")) || realize_tensor(t)) return NULL;
  return tl_api_host_data(t->slot.ctx, t->u->arg.p, false);
}

/* Moves t alone onto a copy of its buffer: a new BUFFER node, so the old node (and
 * the buffer) stay as they are for whoever else holds them. */
static void *unshare(tl_ctx *ctx, tl_tensor *t) {
  tl_uop *u = t->u;
  const tl_buffer *old = u->arg.p;
  tl_backend *be = tl_api_backend_of(ctx, old); /* the copy stays where the values are */
  tl_buffer *b = tl_api_buffer_on(ctx, be, "data_mut", (tl_dtype)u->dtype, tl_uop_numel(u));
  if (!b) return NULL;
  if (be->i->copy(be, b, old, old->nbytes, &ctx->err)) {
    tl_buffer_release(b);
    return NULL;
  }
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_arg arg = {.p = b};
  tl_uop *n = tl_uop_make(&ctx->graph, TL_OP_BUFFER, (tl_dtype)u->dtype, 0, NULL, arg, 0, u->ndim, u->shape);
  if (n) {
    tl_uop_retain(n);
    tl_uop_release(&ctx->graph, u);
    t->u = n;
  }
  tl_graph_release_to(&ctx->graph, mark);
  tl_buffer_release(b); /* the node holds it */
  if (!n) tl_error_set(&ctx->err, TL_ERR_NOMEM, "data_mut: out of memory");
  return n ? tl_api_host_data(ctx, b, true) : NULL;
}

void *tl_data_mut(tl_tensor *t) {
  if (!(t = tl_api_tensor(t, "data_mut"))) return NULL;
  tl_ctx *ctx = t->slot.ctx;
  if (t->ag) { /* its history and gradient read these values */
    tl_error_set(&ctx->err, TL_ERR_ARG, "cannot write into a tensor that requires grad (detach() it first)");
    return NULL;
  }
  if (realize_tensor(t)) return NULL;
  tl_buffer *b = t->u->arg.p;
  /* other handles, graphs or autograd records holding the node, or other nodes (views
   * realized into the same memory) holding the buffer, would see the write */
  if (t->u->refs == 1 && b->refs == 1 && !b->owner) return tl_api_host_data(ctx, b, true);
  return unshare(ctx, t);
}

tl_status tl_item(tl_tensor *t, double *out) {
  if (!t || !(t = tl_api_tensor(t, "item"))) return TL_ERR_ARG;
  if (tl_uop_numel(t->u) != 1)
    return tl_error_set(&t->slot.ctx->err, TL_ERR_SHAPE, "item: tensor has %lld elements, not 1",
                        (long long)tl_uop_numel(t->u));
  tl_status st = realize_tensor(t);
  if (st) return st;
  const void *data = tl_api_host_data(t->slot.ctx, t->u->arg.p, false);
  if (!data) return t->slot.ctx->err.status;
  if (out) *out = tl_dtype_read(data, (tl_dtype)t->u->dtype, 0);
  return TL_OK;
}

char *tl_format(tl_tensor *t) { return tl_format_precision(t, 8); }

char *tl_format_precision(tl_tensor *t, int precision) {
  if (!(t = tl_api_tensor(t, "format")) || realize_tensor(t)) return NULL;
  const tl_uop *u = t->u;
  const void *data = tl_api_host_data(t->slot.ctx, u->arg.p, false);
  if (!data) return NULL;
  char *s = tl_format_array_precision(data, (tl_dtype)u->dtype, u->ndim, u->shape, precision);
  if (!s) tl_error_set(&t->slot.ctx->err, TL_ERR_NOMEM, "format: out of memory");
  return s;
}

tl_status tl_print(tl_tensor *t, FILE *out) {
  if (!(t = tl_api_tensor(t, "print"))) return TL_ERR_ARG;
  char *s = tl_format(t);
  if (!s) return t->slot.ctx->err.status;
  fprintf(out ? out : stdout, "%s\n", s);
  free(s);
  return TL_OK;
}

/* ---- schedules and DOT ----------------------------------------------------------- */
static void dot_label(tl_strbuf *s, const tl_uop *u) {
  tl_strbuf_printf(s, "%s %s [", tl_op_name(u->op), tl_dtype_name((tl_dtype)u->dtype));
  for (int d = 0; d < u->ndim; d++) tl_strbuf_printf(s, "%s%lld", d ? "," : "", (long long)u->shape[d]);
  tl_strbuf_puts(s, "]");
  if (u->op == TL_OP_CONST) tl_strbuf_printf(s, " %g", tl_uop_const_value(u));
  if (u->op != TL_OP_VIEW) return;
  const tl_st *st = u->arg.p;
  for (int i = 0; i < st->nviews; i++) { /* the views, innermost first */
    const tl_view *v = &st->views[i];
    tl_strbuf_puts(s, "\\nshape(");
    for (int d = 0; d < v->ndim; d++) tl_strbuf_printf(s, "%s%lld", d ? "," : "", (long long)v->shape[d]);
    tl_strbuf_puts(s, ") strides(");
    for (int d = 0; d < v->ndim; d++) tl_strbuf_printf(s, "%s%lld", d ? "," : "", (long long)v->strides[d]);
    tl_strbuf_printf(s, ") offset %lld", (long long)v->offset);
    if (v->masked) {
      tl_strbuf_puts(s, " mask(");
      for (int d = 0; d < v->ndim; d++)
        tl_strbuf_printf(s, "%s%lld:%lld", d ? "," : "", (long long)v->mask_lo[d], (long long)v->mask_hi[d]);
      tl_strbuf_puts(s, ")");
    }
  }
}

typedef tl_vec(const tl_uop *) uop_list;

/* every node under u, sources before their users */
static bool dot_collect(const tl_uop *u, tl_ptrmap *seen, uop_list *v) {
  if (tl_ptrmap_get(seen, u)) return true;
  if (!tl_ptrmap_put(seen, u, (void *)u)) return false;
  for (int i = 0; i < u->nsrc; i++)
    if (!dot_collect(u->src[i], seen, v)) return false;
  return tl_vec_push(v, u);
}

/* owner: node -> kernel index + 1, for the nodes kernel k computes: from its root down
 * to the buffers and the other kernels' outputs it loads (as the lowering reads the
 * schedule). A node inlined into several kernels is drawn in the first. */
static bool dot_own(const tl_schedule *s, int k, const tl_uop *u, tl_ptrmap *owner) {
  if (u->op == TL_OP_BUFFER || tl_ptrmap_get(owner, u)) return true;
  int kk = tl_schedule_kernel_of(s, u);
  if (kk && kk != k + 1) return true;
  if (!tl_ptrmap_put(owner, u, (void *)(intptr_t)(k + 1))) return false;
  for (int i = 0; i < u->nsrc; i++)
    if (!dot_own(s, k, u->src[i], owner)) return false;
  return true;
}

static void dot_node(tl_strbuf *s, const tl_uop *u, const tl_schedule *sched, const char *indent) {
  int k = sched ? tl_schedule_kernel_of(sched, u) : 0;
  tl_strbuf_printf(s, "%sn%llu [label=\"", indent, (unsigned long long)u->id);
  dot_label(s, u);
  if (k) tl_strbuf_printf(s, "\\nkernel %d output", k - 1);
  tl_strbuf_printf(s, "\"%s];\n", k ? ", style=filled, fillcolor=lightblue" : u->op == TL_OP_BUFFER ? ", shape=box" : "");
}

/* The one DOT writer: the graph under root, buffers as boxes, ops as ellipses with
 * their dtypes and shapes; with a schedule, each kernel's nodes in a cluster named
 * as the kernel runs (k0, k1, ...), its output filled. */
static void dot_write(tl_strbuf *s, const char *name, const tl_uop *root, const tl_schedule *sched) {
  tl_ptrmap seen = {0}, owner = {0};
  uop_list nodes = {0};
  bool ok = dot_collect(root, &seen, &nodes);
  const tl_uop **v = nodes.data;
  size_t n = nodes.len;
  for (int k = 0; ok && sched && k < sched->nkernels; k++) ok = dot_own(sched, k, sched->roots[k], &owner);
  if (!ok) {
    s->oom = true;
  } else {
    tl_strbuf_printf(s, "digraph %s {\n  rankdir=BT;\n  graph [fontname=\"monospace\"];\n"
                        "  node [shape=ellipse, fontname=\"monospace\"];\n", name);
    if (sched) tl_strbuf_printf(s, "  label=\"%d kernel(s)\";\n", sched->nkernels);
    for (int k = 0; sched && k < sched->nkernels; k++) {
      tl_strbuf_printf(s, "  subgraph cluster_k%d {\n    label=\"kernel k%d\";\n    style=rounded;\n    color=blue;\n", k, k);
      for (size_t i = 0; i < n; i++)
        if ((intptr_t)tl_ptrmap_get(&owner, v[i]) == k + 1) dot_node(s, v[i], sched, "    ");
      tl_strbuf_puts(s, "  }\n");
    }
    for (size_t i = 0; i < n; i++)
      if (!tl_ptrmap_get(&owner, v[i])) dot_node(s, v[i], sched, "  ");
    for (size_t i = 0; i < n; i++)
      for (int j = 0; j < v[i]->nsrc; j++)
        tl_strbuf_printf(s, "  n%llu -> n%llu;\n", (unsigned long long)v[i]->src[j]->id, (unsigned long long)v[i]->id);
    tl_strbuf_puts(s, "}\n");
  }
  tl_vec_free(&nodes);
  tl_ptrmap_free(&seen);
  tl_ptrmap_free(&owner);
}

/* With a dot directory set: DIR/realize-NNNN.dot, the graph being realized and (cpu)
 * its kernels. A file that cannot be written fails the realize. */
static tl_status dot_realize(tl_ctx *ctx, const tl_uop *root, const tl_schedule *sched) {
  if (!ctx->dot_dir) return TL_OK;
  tl_strbuf s = {0};
  dot_write(&s, "tl_realize", root, sched);
  char *text = tl_strbuf_take(&s);
  if (!text) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory writing DOT");
  size_t plen = strlen(ctx->dot_dir) + 32;
  char *path = malloc(plen);
  tl_status st = TL_OK;
  if (!path) {
    st = tl_error_set(&ctx->err, TL_ERR_NOMEM, "realize: out of memory writing DOT");
  } else {
    snprintf(path, plen, "%s/realize-%04u.dot", ctx->dot_dir, ++ctx->dot_count);
    FILE *f = fopen(path, "w");
    bool w = f && fputs(text, f) >= 0;
    if (f && fclose(f)) w = false;
    if (!w) st = tl_error_set(&ctx->err, TL_ERR_IO, "realize: cannot write %s: %s", path, strerror(errno));
  }
  free(path);
  free(text);
  return st;
}

static bool too_deep_to_walk(tl_tensor *t, const char *what) {
  if (t->u->depth <= MAX_REALIZE_DEPTH) return false;
  tl_error_set(&t->slot.ctx->err, TL_ERR_ARG, "%s: the graph is %u nodes deep (at most %d); realize part of it first",
               what, t->u->depth, MAX_REALIZE_DEPTH);
  return true;
}

char *tl_graph_dot(tl_tensor *t) {
  if (!(t = tl_api_tensor(t, "graph_dot")) || too_deep_to_walk(t, "graph_dot")) return NULL;
  tl_strbuf s = {0};
  dot_write(&s, "tl_graph", t->u, NULL);
  return tl_strbuf_take(&s);
}

/* runs f on the rewritten, scheduled graph of t */
static bool with_schedule(tl_tensor *t, void (*f)(tl_uop *root, tl_schedule *s, void *user), void *user) {
  tl_ctx *ctx = t->slot.ctx;
  if (too_deep_to_walk(t, "schedule")) return false;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *r = strip_reshape(tl_rewrite_graph(&ctx->graph, t->u, graph_rules, 4));
  tl_schedule s;
  bool ok = r && tl_schedule_build(r, runs_on_host(ctx->be), &s);
  if (ok) {
    f(r, &s, user);
    tl_schedule_free(&s);
  } else {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "out of memory scheduling the graph");
  }
  tl_graph_release_to(&ctx->graph, mark);
  return ok;
}

static void schedule_dot(tl_uop *root, tl_schedule *s, void *user) {
  dot_write(user, "tl_schedule", root, s);
}

char *tl_schedule_dot(tl_tensor *t) {
  if (!(t = tl_api_tensor(t, "schedule_dot"))) return NULL;
  tl_strbuf s = {0};
  if (!with_schedule(t, schedule_dot, &s)) {
    tl_strbuf_free(&s);
    return NULL;
  }
  return tl_strbuf_take(&s);
}

static void count_kernels(tl_uop *root, tl_schedule *s, void *user) {
  (void)root;
  *(int *)user = s->nkernels;
}

int tl_schedule_count(tl_tensor *t) {
  if (!(t = tl_api_tensor(t, "schedule_count"))) return -1;
  int n = 0;
  return with_schedule(t, count_kernels, &n) ? n : -1;
}
