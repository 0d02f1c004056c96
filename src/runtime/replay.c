/* replay.c — graph structure in, the plan of an earlier realize of it out (see
 * replay.h): the key (a post-order listing of the graph's nodes as words), a table of
 * plans by key, least recently used first out. */
#include "runtime/replay.h"

#include <stdlib.h>
#include <string.h>

#include "core/shapetracker.h"

struct tl_replay_seen {
  const tl_uop *node;
  uint32_t gen;
  int32_t index, leaf;
};
enum { SEEN_SLOTS = 2 * TL_REPLAY_MAX_NODES, MAX_KEY_DEPTH = 2 * TL_REPLAY_MAX_NODES };

struct tl_replay_entry {
  tl_replay_entry *newer, *older; /* use order */
  uint64_t hash;
  size_t nwords, bytes;
  int nleaves;
  uint64_t *words;
  tl_replay *plan;
};

/* ---- the key ------------------------------------------------------------------------ */
static bool push(tl_replay_cache *c, uint64_t w) { return tl_vec_push(&c->words, w); }

/* The nodes seen while listing one key: a table of its own, not a tl_ptrmap, because
 * it is emptied before every key (every realize) by one generation increment. */
static size_t seen_slot(const tl_replay_cache *c, const tl_uop *u) {
  size_t i = (size_t)tl_hash_ptr(u) & (SEEN_SLOTS - 1);
  while (c->seen[i].gen == c->gen && c->seen[i].node != u) i = (i + 1) & (SEEN_SLOTS - 1);
  return i;
}

static bool push_view(tl_replay_cache *c, const tl_st *st) {
  bool ok = push(c, (uint64_t)st->nviews);
  for (int v = 0; ok && v < st->nviews; v++) {
    const tl_view *w = &st->views[v];
    ok = push(c, (uint64_t)w->ndim | (uint64_t)w->masked << 8) && push(c, (uint64_t)w->offset);
    for (int d = 0; ok && d < w->ndim; d++) {
      ok = push(c, (uint64_t)w->shape[d]) && push(c, (uint64_t)w->strides[d]);
      if (ok && w->masked) ok = push(c, (uint64_t)w->mask_lo[d]) && push(c, (uint64_t)w->mask_hi[d]);
    }
  }
  return ok;
}

static bool is_data_leaf(const tl_uop *u) {
  return u->op == TL_OP_BUFFER || u->op == TL_OP_UNIFORM || u->op == TL_OP_RANDN;
}

/* u's index in the key, its sources listed first; -1 when the graph is too big */
static int32_t visit(tl_replay_cache *c, const tl_uop *u, int depth) {
  size_t at = seen_slot(c, u);
  if (c->seen[at].gen == c->gen) return c->seen[at].index;
  if (depth > MAX_KEY_DEPTH || c->nnodes == TL_REPLAY_MAX_NODES) return -1;
  int32_t src[3];
  for (int i = 0; i < u->nsrc; i++)
    if ((src[i] = visit(c, u->src[i], depth + 1)) < 0) return -1;
  bool ok = push(c, (uint64_t)u->op | (uint64_t)u->dtype << 16 | (uint64_t)u->nsrc << 24 |
                        (uint64_t)(uint8_t)u->ndim << 32);
  for (int d = 0; ok && d < u->ndim; d++) ok = push(c, (uint64_t)u->shape[d]);
  for (int i = 0; ok && i < u->nsrc; i++) ok = push(c, (uint64_t)src[i]);
  /* a leaf's data (its buffer, its stream) is bound per call, not part of the key */
  if (ok && u->op == TL_OP_VIEW) ok = push_view(c, u->arg.p);
  else if (ok && !is_data_leaf(u)) ok = push(c, u->arg.u) && push(c, (uint64_t)u->arg2);
  int32_t leaf = -1;
  if (ok && is_data_leaf(u)) {
    leaf = (int32_t)c->leaves.len;
    if (!tl_vec_push(&c->leaves, (tl_uop *)u)) return -1;
  }
  if (!ok) return -1;
  at = seen_slot(c, u); /* the sources' visits moved the table on */
  c->seen[at] = (tl_replay_seen){u, c->gen, c->nnodes, leaf};
  return c->nnodes++;
}

bool tl_replay_key(tl_replay_cache *c, const tl_uop *u) {
  c->valid = false;
  if (!c->seen && !(c->seen = calloc(SEEN_SLOTS, sizeof *c->seen))) return false;
  if (++c->gen == 0) { /* wrapped: stale marks could look current */
    memset(c->seen, 0, SEEN_SLOTS * sizeof *c->seen);
    c->gen = 1;
  }
  c->words.len = c->leaves.len = 0;
  c->nnodes = 0;
  if (visit(c, u, 0) < 0) return false;
  uint64_t h = TL_HASH_INIT;
  for (size_t i = 0; i < c->words.len; i++) h = tl_hash_mix(h, c->words.data[i]);
  c->hash = h;
  return c->valid = true;
}

void tl_replay_forget(tl_replay_cache *c) {
  c->valid = false;
  c->leaves.len = 0;
}

int tl_replay_leaf(const tl_replay_cache *c, const tl_uop *u) {
  if (!c->valid) return -1;
  size_t at = seen_slot(c, u);
  return c->seen[at].gen == c->gen ? c->seen[at].leaf : -1;
}

bool tl_replay_stream_of(const tl_replay_cache *c, const tl_uop *r, tl_replay_stream *out) {
  int found = 0, leaf = tl_replay_leaf(c, r);
  if (leaf >= 0 && r->op == TL_OP_UNIFORM) {
    *out = (tl_replay_stream){leaf, 0};
    found++;
  }
  for (int i = 0; c->valid && i < (int)c->leaves.len; i++) { /* a RANDN's uniforms, made by the rewrite */
    const tl_uop *l = c->leaves.data[i];
    if (l->op != TL_OP_RANDN || l->arg.u != r->arg.u || l->dtype != r->dtype || l->ndim != r->ndim ||
        memcmp(l->shape, r->shape, sizeof(int64_t) * (size_t)r->ndim))
      continue;
    uint64_t d = (uint64_t)r->arg2 - (uint64_t)l->arg2;
    if (d == (uint64_t)TL_RANDN_STREAM_STEP || d == 2 * (uint64_t)TL_RANDN_STREAM_STEP) {
      *out = (tl_replay_stream){i, d};
      found++;
    }
  }
  return found == 1; /* two leaves giving one stream: a coincidence of values, not structure */
}

/* ---- the plans ----------------------------------------------------------------------- */
void tl_replay_free(tl_replay *rp) {
  if (!rp) return;
  for (int i = 0; rp->kernels && i < rp->nkernels; i++) free(rp->kernels[i].streams);
  free(rp->kernels);
  free(rp);
}

static void unlink_use(tl_replay_cache *c, tl_replay_entry *e) {
  if (e->newer) e->newer->older = e->older;
  else c->newest = e->older;
  if (e->older) e->older->newer = e->newer;
  else c->oldest = e->newer;
  e->newer = e->older = NULL;
}

static void link_newest(tl_replay_cache *c, tl_replay_entry *e) {
  e->older = c->newest;
  e->newer = NULL;
  if (c->newest) c->newest->newer = e;
  c->newest = e;
  if (!c->oldest) c->oldest = e;
}

static void drop(tl_replay_cache *c, tl_replay_entry *e) {
  tl_hset_remove(&c->plans, e->hash, (uintptr_t)e);
  unlink_use(c, e);
  c->count--;
  c->bytes -= e->bytes;
  tl_replay_free(e->plan);
  free(e->words);
  free(e);
}

const tl_replay *tl_replay_find(tl_replay_cache *c) {
  if (!c->valid) return NULL;
  uint64_t it;
  for (tl_hset_walk w = tl_hset_find(&c->plans, c->hash); (it = tl_hset_next(&c->plans, &w));) {
    tl_replay_entry *e = (tl_replay_entry *)(uintptr_t)it;
    if (e->nwords == c->words.len && e->nleaves == (int)c->leaves.len &&
        !memcmp(e->words, c->words.data, c->words.len * sizeof *c->words.data)) {
      if (c->newest != e) {
        unlink_use(c, e);
        link_newest(c, e);
      }
      return e->plan;
    }
  }
  return NULL;
}

void tl_replay_put(tl_replay_cache *c, tl_replay *rp) {
  tl_replay_entry *e = NULL;
  if (c->valid && !tl_replay_find(c)) e = calloc(1, sizeof *e);
  if (e && !(e->words = malloc(c->words.len * sizeof *e->words))) {
    free(e);
    e = NULL;
  }
  if (!e) {
    tl_replay_free(rp);
    return;
  }
  memcpy(e->words, c->words.data, c->words.len * sizeof *e->words);
  e->nwords = c->words.len;
  e->nleaves = (int)c->leaves.len;
  e->hash = c->hash;
  e->plan = rp;
  e->bytes = sizeof *e + c->words.len * sizeof *e->words + sizeof *rp + (size_t)rp->nkernels * sizeof *rp->kernels;
  for (int i = 0; i < rp->nkernels; i++) e->bytes += (size_t)rp->kernels[i].k.nwords / 2 * sizeof(tl_replay_stream);
  while (c->oldest && (c->count >= TL_REPLAY_ENTRIES || c->bytes + e->bytes > TL_REPLAY_BYTES)) drop(c, c->oldest);
  if (!tl_hset_add(&c->plans, e->hash, (uintptr_t)e)) { /* not remembering is not an error */
    tl_replay_free(e->plan);
    free(e->words);
    free(e);
    return;
  }
  link_newest(c, e);
  c->count++;
  c->bytes += e->bytes;
}

void tl_replay_clear(tl_replay_cache *c) {
  while (c->oldest) drop(c, c->oldest);
}

void tl_replay_cache_free(tl_replay_cache *c) {
  tl_replay_clear(c);
  tl_hset_free(&c->plans);
  tl_vec_free(&c->words);
  tl_vec_free(&c->leaves);
  free(c->seen);
  memset(c, 0, sizeof *c);
}
