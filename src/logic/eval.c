/* eval.c — evaluation: strata and their rules in, relations' tuples out. Each rule
 * becomes join plans (one per semi-naive variant: which body atom reads the last
 * round's delta), run tuple at a time over the stores' iterators. The join shape
 * h(x, y) :- a(x, z), b(z, y) has a kernel per representation: dense, OR b's rows z
 * into h's row x, bit-parallel; sparse with b below the stratum, a's tuples against
 * b's CSR groups. A stratum runs to its fixpoint; an update pass brings evaluated
 * strata up to date from the tuples added since (semi-naively), or recomputes a
 * stratum that reads a changed relation under negation. */
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "logic/logic.h"

bool tl_logic_arith(int op, int64_t a, int64_t b, int64_t *out) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case TL_KB_ADD: *out = (int64_t)(ua + ub); return true;
  case TL_KB_SUB: *out = (int64_t)(ua - ub); return true;
  case TL_KB_MUL: *out = (int64_t)(ua * ub); return true;
  case TL_KB_DIV:
    if (b == 0) return false;
    *out = b == -1 ? (int64_t)(0 - ua) : a / b; /* INT64_MIN / -1 wraps */
    return true;
  case TL_KB_MOD:
    if (b == 0) return false;
    *out = b == -1 ? 0 : a % b;
    return true;
  }
  return false;
}

bool tl_logic_compare(int op, int64_t a, int64_t b) {
  switch (op) {
  case TL_KB_LT: return a < b;
  case TL_KB_LE: return a <= b;
  case TL_KB_GT: return a > b;
  case TL_KB_GE: return a >= b;
  case TL_KB_EQ: return a == b;
  case TL_KB_NE: return a != b;
  }
  return false;
}

/* ---- plans ------------------------------------------------------------------------- */

enum { ST_SCAN, ST_NEG, ST_CMP, ST_ARITH, ST_AGG };
enum { ARG_KEY, ARG_BIND, ARG_SAME, ARG_ANY };

typedef struct {
  uint8_t kind, version, op;
  bool bind_result, has_same;
  int32_t rel, nargs;
  uint32_t mask;                      /* SCAN, NEG: the columns known on entry */
  int8_t mode[TL_LOGIC_MAX_ARITY];
  int8_t same[TL_LOGIC_MAX_ARITY];    /* SCAN: column c equals column same[c] */
  int32_t arg[TL_LOGIC_MAX_ARITY];    /* KEY: a term; BIND: a variable */
  int32_t a, b, c;                    /* CMP: a op b; ARITH: a op b = c; AGG: the value column b, the result c */
} tl_logic_step;

typedef struct {
  int rule;
  int delta_lit;  /* the body atom read as the delta (-1: none: the first round) */
  int version;    /* its version: TL_VER_DELTA (same stratum) or TL_VER_PASS (below) */
  tl_logic_step *steps;
  int nsteps;
  int bj_left, bj_right; /* >= 0: the bit-join shape, left(x, z) and right(z, y) */
} tl_logic_plan;

static bool term_known(const tl_logic_rule *r, int t, const bool *bound) {
  const tl_logic_term *x = &r->terms[t];
  if (x->kind == TL_TERM_VAR) return bound[x->v];
  if (x->kind == TL_TERM_EXPR) return term_known(r, x->a, bound) && term_known(r, x->b, bound);
  return true;
}

static void plan_scan(const tl_logic_rule *r, int lit, int version, bool *bound, tl_logic_step *st) {
  const tl_logic_lit *l = &r->body[lit];
  memset(st, 0, sizeof *st);
  st->kind = ST_SCAN;
  st->version = (uint8_t)version;
  st->rel = l->rel;
  st->nargs = l->nargs;
  int first[TL_LOGIC_MAX_ARITY]; /* the column that binds each argument's variable */
  for (int a = 0; a < l->nargs; a++) {
    int t = r->argv[l->args + a];
    const tl_logic_term *x = &r->terms[t];
    st->same[a] = -1;
    first[a] = -1;
    if (x->kind == TL_TERM_ANY) {
      st->mode[a] = ARG_ANY;
    } else if (x->kind != TL_TERM_VAR || bound[x->v]) {
      st->mode[a] = ARG_KEY, st->arg[a] = t, st->mask |= (uint32_t)1 << a;
    } else {
      int c0 = -1;
      for (int b = 0; b < a && c0 < 0; b++)
        if (first[b] >= 0 && r->terms[r->argv[l->args + b]].v == x->v) c0 = b;
      if (c0 >= 0) {
        st->mode[a] = ARG_SAME, st->same[a] = (int8_t)c0, st->has_same = true;
      } else {
        st->mode[a] = ARG_BIND, st->arg[a] = (int32_t)x->v;
        first[a] = a;
      }
    }
  }
  for (int a = 0; a < l->nargs; a++)
    if (st->mode[a] == ARG_BIND) bound[st->arg[a]] = true;
}

/* An aggregate once its group is known: a lookup of the group in the (complete,
 * lower) relation, reduced; it binds its result or checks it. */
static bool plan_agg(const tl_logic_rule *r, const tl_logic_lit *l, const int32_t *args, bool *bound, tl_logic_step *st) {
  int ng = l->nargs - 2;
  for (int a = 0; a < ng; a++)
    if (!term_known(r, args[a], bound)) return false;
  st->kind = ST_AGG;
  st->op = l->op;
  st->rel = l->rel;
  st->nargs = ng;
  for (int a = 0; a < ng; a++) {
    st->same[a] = -1;
    st->arg[a] = args[a];
    if (r->terms[args[a]].kind == TL_TERM_ANY) st->mode[a] = ARG_ANY;
    else st->mode[a] = ARG_KEY, st->mask |= (uint32_t)1 << a;
  }
  st->b = (int32_t)r->terms[args[ng + 1]].v;
  st->c = args[ng];
  const tl_logic_term *c = &r->terms[args[ng]];
  if (c->kind == TL_TERM_VAR && !bound[c->v]) {
    st->bind_result = true;
    st->c = (int32_t)c->v;
    bound[c->v] = true;
  }
  return true;
}

/* A filter whose inputs are all known, or false. */
static bool plan_filter(const tl_logic_rule *r, int lit, bool *bound, tl_logic_step *st) {
  const tl_logic_lit *l = &r->body[lit];
  const int32_t *args = r->argv ? r->argv + l->args : NULL; /* NULL: no rule literal has arguments */
  memset(st, 0, sizeof *st);
  if (l->kind == TL_LIT_NOT) {
    for (int a = 0; a < l->nargs; a++)
      if (!term_known(r, args[a], bound)) return false;
    st->kind = ST_NEG;
    st->rel = l->rel;
    st->nargs = l->nargs;
    for (int a = 0; a < l->nargs; a++) {
      st->same[a] = -1;
      st->arg[a] = args[a];
      if (r->terms[args[a]].kind == TL_TERM_ANY) st->mode[a] = ARG_ANY;
      else st->mode[a] = ARG_KEY, st->mask |= (uint32_t)1 << a;
    }
    return true;
  }
  if (l->kind == TL_LIT_AGG) return plan_agg(r, l, args, bound, st);
  if (!term_known(r, args[0], bound) || !term_known(r, args[1], bound)) return false;
  st->kind = l->kind == TL_LIT_CMP ? ST_CMP : ST_ARITH;
  st->op = l->op;
  st->a = args[0], st->b = args[1];
  if (l->kind == TL_LIT_ARITH) {
    st->c = args[2];
    const tl_logic_term *c = &r->terms[args[2]];
    if (c->kind == TL_TERM_VAR && !bound[c->v]) {
      st->bind_result = true;
      st->c = (int32_t)c->v;
      bound[c->v] = true;
    } else if (!term_known(r, args[2], bound)) {
      return false;
    }
  }
  return true;
}

/* h(x, y) :- a(x, z), b(z, y) with x, y, z distinct variables and nothing else. */
static void find_bitjoin(const tl_logic_rule *r, tl_logic_plan *p) {
  p->bj_left = p->bj_right = -1;
  if (r->nbody != 2 || r->head.nargs != 2 || r->body[0].kind != TL_LIT_ATOM || r->body[1].kind != TL_LIT_ATOM ||
      r->body[0].nargs != 2 || r->body[1].nargs != 2)
    return;
  int64_t v[3][2];
  const tl_logic_lit *ls[3] = {&r->head, &r->body[0], &r->body[1]};
  for (int i = 0; i < 3; i++)
    for (int a = 0; a < 2; a++) {
      const tl_logic_term *x = &r->terms[r->argv[ls[i]->args + a]];
      if (x->kind != TL_TERM_VAR) return;
      v[i][a] = x->v;
    }
  int64_t X = v[0][0], Y = v[0][1];
  if (X == Y) return;
  for (int left = 1; left <= 2; left++) {
    int right = 3 - left;
    int64_t Z = v[left][1];
    if (v[left][0] == X && v[right][0] == Z && v[right][1] == Y && Z != X && Z != Y) {
      p->bj_left = left - 1;
      p->bj_right = right - 1;
      return;
    }
  }
}

/* TL_OK, TL_ERR_NOMEM, or TL_ERR_INTERNAL when no order binds every variable (the
 * rule checks make that impossible) */
static tl_status build_plan(const tl_logic_rule *r, int rule, int delta_lit, int version, tl_logic_plan *p) {
  memset(p, 0, sizeof *p);
  p->rule = rule;
  p->delta_lit = delta_lit;
  p->version = version;
  p->steps = malloc((size_t)(r->nbody ? r->nbody : 1) * sizeof *p->steps);
  bool *bound = calloc((size_t)(r->nvars ? r->nvars : 1), sizeof *bound);
  bool *placed = calloc((size_t)(r->nbody ? r->nbody : 1), sizeof *placed);
  bool ok = p->steps && bound && placed;
  if (!ok) {
    free(bound);
    free(placed);
    return TL_ERR_NOMEM;
  }
  if (delta_lit >= 0) {
    plan_scan(r, delta_lit, version, bound, &p->steps[p->nsteps++]);
    placed[delta_lit] = true;
  }
  while (ok) {
    /* filters as soon as their inputs are known: they prune early */
    for (bool more = true; more;) {
      more = false;
      for (int i = 0; i < r->nbody; i++)
        if (!placed[i] && r->body[i].kind != TL_LIT_ATOM && plan_filter(r, i, bound, &p->steps[p->nsteps]))
          placed[i] = more = true, p->nsteps++;
    }
    /* then the atom with the most known columns (an index lookup), first on ties */
    int best = -1, best_known = -1;
    for (int i = 0; i < r->nbody; i++) {
      if (placed[i] || r->body[i].kind != TL_LIT_ATOM) continue;
      int known = 0;
      for (int a = 0; a < r->body[i].nargs; a++) {
        int t = r->argv[r->body[i].args + a];
        if (r->terms[t].kind != TL_TERM_ANY && term_known(r, t, bound)) known++;
      }
      if (known > best_known) best = i, best_known = known;
    }
    if (best < 0) break;
    plan_scan(r, best, TL_VER_FULL, bound, &p->steps[p->nsteps++]);
    placed[best] = true;
  }
  for (int i = 0; ok && i < r->nbody; i++) ok = placed[i]; /* the rule checks make this hold */
  free(bound);
  free(placed);
  find_bitjoin(r, p);
  return ok ? TL_OK : TL_ERR_INTERNAL;
}

/* ---- running a plan ---------------------------------------------------------------------- */

/* Head tuples for a sparse relation wait in a batch: hashed, their slots fetched,
 * and inserted only a half batch later, so the cache misses overlap each other and
 * the work in between. */
enum { BATCH = 64, HALF = BATCH / 2 };

typedef struct {
  tl_kb *kb;
  tl_logic_rel *head;
  bool failed;
  int npend, nhashed;
  uint64_t hash[BATCH];
  int64_t pend[BATCH * TL_LOGIC_MAX_ARITY];
} batch;

static void insert_pending(batch *bt, int from, int to) {
  tl_logic_rel *h = bt->head;
  for (int i = from; i < to && !bt->failed; i++)
    if (tl_logic_sparse_insert_hashed(&h->sp, h->arity, bt->pend + i * h->arity, bt->hash[i]) < 0) {
      tl_logic_insert_failed(bt->kb, h);
      bt->failed = true;
    }
}

static void hash_pending(batch *bt) {
  tl_logic_rel *h = bt->head;
  for (; bt->nhashed < bt->npend; bt->nhashed++) {
    bt->hash[bt->nhashed] = tl_logic_hash_key(h->arity, h->sp.idx[0].mask, bt->pend + bt->nhashed * h->arity);
    tl_logic_sparse_prefetch(&h->sp, bt->hash[bt->nhashed]);
  }
}

/* A full batch: the first half (fetched a half batch ago) goes in, the second half
 * moves down and is fetched. */
static void batch_turn(batch *bt) {
  int arity = bt->head->arity;
  hash_pending(bt);
  insert_pending(bt, 0, HALF);
  memmove(bt->pend, bt->pend + HALF * arity, (size_t)(HALF * arity) * sizeof *bt->pend);
  memmove(bt->hash, bt->hash + HALF, HALF * sizeof *bt->hash);
  bt->npend = bt->nhashed = BATCH - HALF;
}

/* Everything waiting goes in (the end of a plan). */
static void flush(batch *bt) {
  hash_pending(bt);
  insert_pending(bt, 0, bt->npend);
  bt->npend = bt->nhashed = 0;
}

static void batch_add(batch *bt, const int64_t *t) {
  int64_t *p = bt->pend + bt->npend++ * bt->head->arity;
  for (int c = 0; c < bt->head->arity; c++) p[c] = t[c];
  if (bt->npend == HALF) hash_pending(bt);
  if (bt->npend == BATCH) batch_turn(bt);
}

typedef struct {
  tl_kb *kb;
  const tl_logic_rule *r;
  const tl_logic_plan *p;
  tl_logic_rel *head;
  int64_t *regs;
  bool failed;
  batch *bt;
} exec;

static bool eval_term(const tl_logic_rule *r, int t, const int64_t *regs, int64_t *out) {
  const tl_logic_term *x = &r->terms[t];
  switch (x->kind) {
  case TL_TERM_VAR: *out = regs[x->v]; return true;
  case TL_TERM_CONST: *out = x->v; return true;
  case TL_TERM_EXPR: {
    int64_t a, b;
    return eval_term(r, x->a, regs, &a) && eval_term(r, x->b, regs, &b) && tl_logic_arith(x->op, a, b, out);
  }
  default: return false;
  }
}

static void run(exec *ex, int si) {
  const tl_logic_rule *r = ex->r;
  if (si == ex->p->nsteps) {
    int64_t t[TL_LOGIC_MAX_ARITY];
    for (int a = 0; a < r->head.nargs; a++)
      if (!eval_term(r, r->argv[r->head.args + a], ex->regs, &t[a])) return;
    ex->kb->stats.derivations++;
    if (ex->head->repr == TL_REPR_SPARSE) {
      batch_add(ex->bt, t);
      ex->failed = ex->bt->failed;
    } else if (tl_logic_store_insert(ex->kb, ex->head, t) < 0) {
      ex->failed = true;
    }
    return;
  }
  const tl_logic_step *st = &ex->p->steps[si];
  int64_t a, b, c;
  switch (st->kind) {
  case ST_CMP:
    if (eval_term(r, st->a, ex->regs, &a) && eval_term(r, st->b, ex->regs, &b) && tl_logic_compare(st->op, a, b))
      run(ex, si + 1);
    return;
  case ST_ARITH:
    if (!eval_term(r, st->a, ex->regs, &a) || !eval_term(r, st->b, ex->regs, &b) || !tl_logic_arith(st->op, a, b, &c))
      return;
    if (st->bind_result) {
      ex->regs[st->c] = c;
      run(ex, si + 1);
    } else if (eval_term(r, st->c, ex->regs, &b) && b == c) {
      run(ex, si + 1);
    }
    return;
  default:
    break;
  }
  int64_t key[TL_LOGIC_MAX_ARITY], t[TL_LOGIC_MAX_ARITY];
  for (int k = 0; k < st->nargs; k++)
    if (st->mode[k] == ARG_KEY && !eval_term(r, st->arg[k], ex->regs, &key[k])) return;
  const tl_logic_rel *rel = &ex->kb->rels[st->rel];
  tl_logic_iter it;
  if (st->kind == ST_AGG) {
    /* count and sum wrap as the rules' arithmetic does; min and max of nothing fail */
    int64_t n = 0, acc = 0;
    tl_logic_iter_init(&it, rel, TL_VER_FULL, st->mask, key, NULL);
    while (tl_logic_iter_next(&it, t)) {
      int64_t v = st->op == TL_KB_COUNT ? 0 : t[st->b];
      if (st->op == TL_KB_SUM) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
      else if (st->op == TL_KB_MIN) acc = !n || v < acc ? v : acc;
      else if (st->op == TL_KB_MAX) acc = !n || v > acc ? v : acc;
      n++;
    }
    if (st->op == TL_KB_COUNT) acc = n;
    else if (!n && st->op != TL_KB_SUM) return;
    if (st->bind_result) {
      ex->regs[st->c] = acc;
      run(ex, si + 1);
    } else if (eval_term(r, st->c, ex->regs, &b) && b == acc) {
      run(ex, si + 1);
    }
    return;
  }
  if (st->kind == ST_NEG) {
    tl_logic_iter_init(&it, rel, TL_VER_FULL, st->mask, key, NULL);
    if (!tl_logic_iter_next(&it, t)) run(ex, si + 1);
    return;
  }
  tl_logic_iter_init(&it, rel, (tl_logic_version)st->version, st->mask, key, st->has_same ? st->same : NULL);
  while (!ex->failed && tl_logic_iter_next(&it, t)) {
    for (int k = 0; k < st->nargs; k++)
      if (st->mode[k] == ARG_BIND) ex->regs[st->arg[k]] = t[k];
    run(ex, si + 1);
  }
}

/* Sparse relations get the indexes the plan's lookups use: CSR for relations below
 * stratum s (they do not change while it runs), hash chains for its own. */
static tl_status plan_indexes(tl_kb *kb, const tl_logic_plan *p, int s) {
  for (int i = 0; i < p->nsteps; i++) {
    const tl_logic_step *st = &p->steps[i];
    if ((st->kind != ST_SCAN && st->kind != ST_NEG && st->kind != ST_AGG) || st->version != TL_VER_FULL || !st->mask) continue;
    tl_logic_rel *rel = &kb->rels[st->rel];
    if (rel->repr != TL_REPR_SPARSE) continue;
    bool ok = rel->stratum != s ? tl_logic_sparse_csr(&rel->sp, rel->arity, st->mask)
                                : tl_logic_sparse_index(&rel->sp, rel->arity, st->mask) >= 0;
    if (!ok) return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory for an index", rel->name);
  }
  return TL_OK;
}

/* ---- the bit-parallel join ------------------------------------------------------------------ */

/* the last value of column c of a dense box; lo + size itself can pass INT64_MAX */
static int64_t box_hi(const tl_logic_dense *d, int c) { return d->lo[c] + (d->size[c] - 1); }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The boxes line up: h's rows cover left's rows, h's and right's last columns are
 * the same range (so right's row ORs into h's word for word). */
static tl_status bitjoin_align(tl_kb *kb, tl_logic_rel *h, tl_logic_rel *left, tl_logic_rel *right) {
  const tl_logic_dense *dh = &h->dn, *dl = &left->dn, *dr = &right->dn;
  int64_t lo[2] = {min64(dl->lo[0], dh->lo[0]), min64(dr->lo[1], dh->lo[1])};
  int64_t hi[2] = {max64(box_hi(dl, 0), box_hi(dh, 0)), max64(box_hi(dr, 1), box_hi(dh, 1))};
  if (tl_logic_dense_cover(kb, h, lo, hi, false)) return tl_last_status(kb->ctx);
  if (h->repr != TL_REPR_DENSE) return TL_OK;
  int64_t rlo[2] = {right->dn.lo[0], h->dn.lo[1]};
  int64_t rhi[2] = {box_hi(&right->dn, 0), box_hi(&h->dn, 1)};
  if (right->repr == TL_REPR_DENSE && tl_logic_dense_cover(kb, right, rlo, rhi, false)) return tl_last_status(kb->ctx);
  /* growing right to h's range may have grown it past h's on other columns' account:
   * align h to it (exactly, as the others: each padded, they outgrew each other every
   * round until the boxes reached the cap) */
  if (right->repr == TL_REPR_DENSE && h->repr == TL_REPR_DENSE &&
      (right->dn.lo[1] != h->dn.lo[1] || right->dn.size[1] != h->dn.size[1])) {
    int64_t hlo[2] = {h->dn.lo[0], right->dn.lo[1]};
    int64_t hhi[2] = {box_hi(&h->dn, 0), box_hi(&right->dn, 1)};
    if (tl_logic_dense_cover(kb, h, hlo, hhi, false)) return tl_last_status(kb->ctx);
  }
  return TL_OK;
}

static bool bitjoin_ready(const tl_logic_rel *h, const tl_logic_rel *left, const tl_logic_rel *right) {
  if (h->repr != TL_REPR_DENSE || left->repr != TL_REPR_DENSE || right->repr != TL_REPR_DENSE) return false;
  const tl_logic_dense *dh = &h->dn, *dl = &left->dn, *dr = &right->dn;
  return dr->lo[1] == dh->lo[1] && dr->size[1] == dh->size[1] && dl->lo[0] >= dh->lo[0] &&
         box_hi(dl, 0) <= box_hi(dh, 0);
}

/* acc |= src over n words, 16 bytes at a time (SSE2 is in every x86-64; the library
 * is built without -march, and GCC -O2 does not vectorize the plain loop). */
typedef uint64_t tl_logic_v2 __attribute__((vector_size(16), aligned(8)));
static void or_row(uint64_t *restrict acc, const uint64_t *restrict src, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    tl_logic_v2 *a = (tl_logic_v2 *)(acc + j);
    const tl_logic_v2 *b = (const tl_logic_v2 *)(src + j);
    a[0] |= b[0], a[1] |= b[1], a[2] |= b[2], a[3] |= b[3];
  }
  for (; j < n; j++) acc[j] |= src[j];
}

/* For every row x of left (its delta or all of it): acc = OR of right's rows z for the
 * bits z of left's row; h's new bits are acc less what h holds. */
static tl_status bitjoin_run(tl_kb *kb, tl_logic_rel *h, const tl_logic_rel *left, int lver, const tl_logic_rel *right,
                             int rver) {
  tl_logic_dense *dh = &h->dn;
  const tl_logic_dense *dl = &left->dn, *dr = &right->dn;
  int64_t W = dh->words, off = dl->lo[1] - dr->lo[0], hoff = dl->lo[0] - dh->lo[0];
  const uint64_t *lbits = lver == TL_VER_DELTA ? dl->delta : dl->full;
  const uint64_t *rbits = rver == TL_VER_DELTA ? dr->delta : dr->full;
  const uint64_t *rrows = rver == TL_VER_DELTA ? dr->delta_rows : dr->full_rows;
  const uint32_t *lspans = lver == TL_VER_DELTA ? dl->dspan : dl->fspan;
  const uint32_t *rspans = rver == TL_VER_DELTA ? dr->dspan : dr->fspan;
  uint64_t *acc = calloc((size_t)W, sizeof *acc); /* zero between rows: cleared over its span */
  if (!acc) return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", h->name);
  int64_t nrows = lver == TL_VER_DELTA ? dl->ndelta : dl->rows;
  for (int64_t k = 0; k < nrows; k++) {
    int64_t x = lver == TL_VER_DELTA ? dl->delta_list[k] : k;
    if (lver != TL_VER_DELTA && !(dl->full_rows[x >> 6] >> (x & 63) & 1)) {
      if (!dl->full_rows[x >> 6]) k |= 63; /* 64 empty rows */
      continue;
    }
    uint32_t alo = (uint32_t)W, ahi = 0; /* the words of acc that may be set */
    const uint64_t *lrow = lbits + x * dl->words;
    for (uint32_t w = lspans[2 * x]; w < lspans[2 * x + 1]; w++)
      for (uint64_t bits = lrow[w]; bits; bits &= bits - 1) {
        int64_t z = (int64_t)w * 64 + __builtin_ctzll(bits) + off;
        if (z < 0 || z >= dr->rows || !(rrows[z >> 6] >> (z & 63) & 1)) continue;
        uint32_t lo = rspans[2 * z], hi = rspans[2 * z + 1];
        if (hi <= lo) continue;
        or_row(acc + lo, rbits + z * W + lo, hi - lo);
        alo = lo < alo ? lo : alo;
        ahi = hi > ahi ? hi : ahi;
      }
    if (ahi <= alo) continue;
    int64_t hx = x + hoff;
    uint64_t *full = dh->full + hx * W, *next = dh->next + hx * W;
    uint32_t flo = (uint32_t)W, fhi = 0;
    for (uint32_t j = alo; j < ahi; j++) {
      uint64_t n = acc[j] & ~full[j] & ~next[j];
      next[j] |= n;
      acc[j] = 0;
      if (n) {
        flo = j < flo ? j : flo;
        fhi = j + 1;
      }
    }
    if (fhi <= flo) continue;
    tl_logic_span_add(dh->nspan, hx, flo, fhi);
    if (!(dh->next_rows[hx >> 6] >> (hx & 63) & 1)) {
      dh->next_rows[hx >> 6] |= (uint64_t)1 << (hx & 63);
      if ((size_t)dh->nnext == dh->cap_next && !tl_vec_grow(&dh->next_list, &dh->cap_next, (size_t)dh->nnext + 1, sizeof *dh->next_list)) {
        free(acc);
        return tl_logic_fail(kb, TL_ERR_NOMEM, "relation %s: out of memory", h->name);
      }
      dh->next_list[dh->nnext++] = hx;
    }
  }
  free(acc);
  kb->stats.bit_joins++;
  return TL_OK;
}

/* The join shape over sparse relations, right one not changing (a CSR on its first
 * column): for each tuple (x, z) of left's version, the rows (z, y) of right give
 * (x, y). Left's tuples come 16 at a time, and their groups' bounds and then rows are
 * fetched ahead, so the cache misses of the 16 overlap. */
static void sparse_join(batch *bt, const tl_logic_rel *left, int lver, const tl_logic_csr *csr) {
  enum { AHEAD = 16 };
  tl_logic_iter it;
  int64_t lt[AHEAD][TL_LOGIC_MAX_ARITY], key[TL_LOGIC_MAX_ARITY] = {0}, b[AHEAD], e[AHEAD];
  tl_logic_iter_init(&it, left, (tl_logic_version)lver, 0, key, NULL);
  for (bool more = true; more && !bt->failed;) {
    int n = 0;
    while (n < AHEAD && (more = tl_logic_iter_next(&it, lt[n]))) {
      uint64_t k = (uint64_t)lt[n][1] - (uint64_t)csr->base;
      if (csr->start && k < (uint64_t)csr->range) __builtin_prefetch(&csr->start[k]);
      n++;
    }
    for (int i = 0; i < n; i++) {
      int64_t k[2] = {lt[i][1], 0};
      tl_logic_csr_find(csr, 2, k, &b[i], &e[i]);
      if (e[i] > b[i]) __builtin_prefetch(&csr->rows[2 * b[i]]);
    }
    for (int i = 0; i < n && !bt->failed; i++) {
      bt->kb->stats.derivations += (uint64_t)(e[i] - b[i]);
      for (int64_t j = b[i]; j < e[i]; j++) {
        int64_t t[2] = {lt[i][0], csr->rows[2 * j + 1]};
        batch_add(bt, t);
      }
    }
  }
}

static tl_status run_plan(tl_kb *kb, const tl_logic_plan *p, int s) {
  const tl_logic_rule *r = &kb->rules[p->rule];
  tl_logic_rel *h = &kb->rels[r->head.rel];
  if (p->bj_left >= 0 && p->version != TL_VER_PASS) {
    tl_logic_rel *left = &kb->rels[r->body[p->bj_left].rel], *right = &kb->rels[r->body[p->bj_right].rel];
    if (h->repr == TL_REPR_DENSE && left->repr == TL_REPR_DENSE && right->repr == TL_REPR_DENSE &&
        bitjoin_align(kb, h, left, right))
      return tl_last_status(kb->ctx);
    if (bitjoin_ready(h, left, right))
      return bitjoin_run(kb, h, left, p->delta_lit == p->bj_left ? TL_VER_DELTA : TL_VER_FULL, right,
                         p->delta_lit == p->bj_right ? TL_VER_DELTA : TL_VER_FULL);
  }
  if (plan_indexes(kb, p, s)) return tl_last_status(kb->ctx);
  batch *bt = malloc(sizeof *bt);
  int64_t *regs = calloc((size_t)(r->nvars ? r->nvars : 1), sizeof(int64_t));
  if (!bt || !regs) {
    free(bt), free(regs);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "out of memory");
  }
  bt->kb = kb, bt->head = h, bt->failed = false, bt->npend = bt->nhashed = 0;
  /* the sparse join needs right unchanging (a CSR exists only for relations below) */
  const tl_logic_rel *right = p->bj_left >= 0 ? &kb->rels[r->body[p->bj_right].rel] : NULL;
  const tl_logic_csr *csr = right && h->repr == TL_REPR_SPARSE && right->repr == TL_REPR_SPARSE &&
                                    p->delta_lit != p->bj_right
                                ? tl_logic_sparse_csr_get(&right->sp, 1)
                                : NULL;
  if (csr) {
    sparse_join(bt, &kb->rels[r->body[p->bj_left].rel], p->delta_lit == p->bj_left ? p->version : TL_VER_FULL, csr);
    kb->stats.sparse_joins++;
  } else {
    exec ex = {kb, r, p, h, regs, false, bt};
    run(&ex, 0);
    if (ex.failed) bt->failed = true; /* a dense head's insert that failed (said in kb) */
  }
  if (bt->npend && !bt->failed) flush(bt);
  bool failed = bt->failed;
  free(bt), free(regs);
  return failed ? tl_last_status(kb->ctx) : TL_OK;
}

/* ---- strata ------------------------------------------------------------------------------------ */

/* The box a relation starts with: entity columns over the entities, integer columns
 * over the integers seen in facts and rules (an estimate: derived values may leave
 * it); dense when that box is small enough. */
static tl_status choose_repr(tl_kb *kb, const tl_logic_rel *r, tl_logic_repr *repr, int64_t *lo, int64_t *size) {
  int64_t cap = tl_logic_dense_cap(kb);
  if (kb->repr_mode == TL_KB_DENSE) {
    /* forced: no estimate to trust, so the facts' own range, grown as values come */
    for (int c = 0; c < r->arity; c++) {
      int64_t a = r->facts.n ? r->facts.tup[c] : 0, b = a;
      for (int64_t i = 1; i < r->facts.n; i++) {
        int64_t v = r->facts.tup[i * r->arity + c];
        a = v < a ? v : a, b = v > b ? v : b;
      }
      lo[c] = a;
      if (__builtin_sub_overflow(b, a, &size[c]) || size[c] >= cap)
        return tl_logic_fail(kb, TL_ERR_RANGE,
                             "relation %s is forced dense but its values need a box of more than %lld cells", r->name,
                             (long long)cap);
      size[c]++;
    }
    if (tl_logic_box_cells(r->arity, size) > cap)
      return tl_logic_fail(kb, TL_ERR_RANGE, "relation %s is forced dense but its values need a box of more than %lld cells",
                           r->name, (long long)cap);
    *repr = TL_REPR_DENSE;
    return TL_OK;
  }
  bool huge = false;
  for (int c = 0; c < r->arity; c++) {
    if (r->type[c] == TL_KB_ENTITY) {
      lo[c] = 0, size[c] = kb->nent > 0 ? kb->nent : 1;
    } else if (!kb->have_ints) {
      lo[c] = 0, size[c] = 1;
    } else {
      lo[c] = kb->int_lo;
      if (__builtin_sub_overflow(kb->int_hi, kb->int_lo, &size[c]) || size[c] == INT64_MAX) huge = true, size[c] = 1;
      else size[c]++;
    }
  }
  int64_t cells = huge ? INT64_MAX : tl_logic_box_cells(r->arity, size);
  *repr = kb->repr_mode == TL_KB_SPARSE || cells > cap ? TL_REPR_SPARSE : TL_REPR_DENSE;
  return TL_OK;
}

static void plans_free(tl_logic_plan *plans, int n) {
  for (int i = 0; i < n; i++) free(plans[i].steps);
  free(plans);
}

/* Every variant of every rule of the stratum: the first round's (no delta), one per
 * body atom of the stratum (its delta), and for an update, one per atom below (the
 * tuples it gained in this pass). */
static tl_status stratum_plans(tl_kb *kb, int s, bool update, tl_logic_plan **out, int *nout) {
  const tl_logic_stratum *S = &kb->strata[s];
  int n = 0, cap = 0;
  for (int k = 0; k < S->nrules; k++) cap += 1 + kb->rules[S->rules[k]].nbody;
  tl_logic_plan *plans = calloc((size_t)(cap ? cap : 1), sizeof *plans);
  if (!plans) return tl_logic_fail(kb, TL_ERR_NOMEM, "out of memory");
  for (int k = 0; k < S->nrules; k++) {
    const tl_logic_rule *r = &kb->rules[S->rules[k]];
    for (int i = -1; i < r->nbody; i++) {
      int version = TL_VER_DELTA;
      if (i >= 0) {
        if (r->body[i].kind != TL_LIT_ATOM) continue;
        if (kb->rels[r->body[i].rel].stratum != s) {
          if (!update) continue;
          version = TL_VER_PASS;
        }
      }
      tl_status st = build_plan(r, S->rules[k], i, version, &plans[n++]);
      if (st != TL_OK) {
        plans_free(plans, n);
        if (st == TL_ERR_NOMEM) return tl_logic_fail(kb, TL_ERR_NOMEM, "rule %s: out of memory", r->text);
        return tl_logic_fail(kb, TL_ERR_INTERNAL, "rule %s: no order binds every variable (a bug in TL)", r->text);
      }
    }
  }
  *out = plans;
  *nout = n;
  return TL_OK;
}

/* Evaluates stratum s: from its facts (update false), or from what was added since it
 * was evaluated (update true: new facts of its own relations, and the tuples gained
 * this pass by the relations below it that it reads). */
static tl_status eval_stratum(tl_kb *kb, int s, bool update) {
  const tl_logic_stratum *S = &kb->strata[s];
  int64_t *added = calloc((size_t)kb->nrels, sizeof *added);
  if (!added) return tl_logic_fail(kb, TL_ERR_NOMEM, "out of memory");
  tl_status st = TL_OK;
  /* its relations change now: CSR indexes made while they were read from above go */
  for (int k = 0; k < S->nrels; k++)
    if (kb->rels[S->rels[k]].repr == TL_REPR_SPARSE) tl_logic_sparse_drop_csr(&kb->rels[S->rels[k]].sp);
  for (int k = 0; k < S->nrels && !st; k++) {
    tl_logic_rel *r = &kb->rels[S->rels[k]];
    if (!update) {
      tl_logic_repr repr = TL_REPR_SPARSE;
      int64_t lo[TL_LOGIC_MAX_ARITY], size[TL_LOGIC_MAX_ARITY];
      st = choose_repr(kb, r, &repr, lo, size);
      if (!st) st = tl_logic_store_init(kb, r, repr, lo, size);
      r->facts_loaded = 0;
      if (st) break;
    }
    tl_logic_store_round_begin(r);
    for (int64_t i = r->facts_loaded; i < r->facts.n && !st; i++)
      if (tl_logic_store_insert(kb, r, r->facts.tup + i * r->arity) < 0) st = tl_last_status(kb->ctx);
    r->facts_loaded = r->facts.n;
    if (!st) added[S->rels[k]] = tl_logic_store_round_end(kb, r, update ? &r->pass_new : NULL);
    if (!st && added[S->rels[k]] < 0) st = tl_last_status(kb->ctx);
  }
  tl_logic_plan *plans = NULL;
  int nplans = 0;
  if (!st && S->nrules) st = stratum_plans(kb, s, update, &plans, &nplans);
  for (bool first = true; !st && S->nrules; first = false) {
    for (int k = 0; k < S->nrels; k++) tl_logic_store_round_begin(&kb->rels[S->rels[k]]);
    for (int i = 0; i < nplans && !st; i++) {
      const tl_logic_plan *p = &plans[i];
      const tl_logic_rule *r = &kb->rules[p->rule];
      int drel = p->delta_lit >= 0 ? r->body[p->delta_lit].rel : -1;
      bool go = p->delta_lit < 0 ? first && !update
              : p->version == TL_VER_PASS ? first && kb->rels[drel].pass_new.n > 0
              : added[drel] > 0 && (update || !first);
      if (go) st = run_plan(kb, p, s);
    }
    int64_t total = 0;
    for (int k = 0; k < S->nrels && !st; k++) {
      tl_logic_rel *r = &kb->rels[S->rels[k]];
      added[S->rels[k]] = tl_logic_store_round_end(kb, r, update ? &r->pass_new : NULL);
      if (added[S->rels[k]] < 0) st = tl_last_status(kb->ctx);
      total += added[S->rels[k]];
    }
    kb->stats.rounds++;
    if (!total) break;
  }
  for (int k = 0; k < S->nrels && !st; k++) tl_logic_store_recount(&kb->rels[S->rels[k]]);
  plans_free(plans, nplans);
  free(added);
  return st;
}

/* 0: nothing stratum s reads changed; 1: only additions it can take semi-naively;
 * 2: it must be recomputed (a relation it reads under not gained tuples, or one it
 * reads was recomputed). */
static int stratum_change(const tl_kb *kb, int s) {
  const tl_logic_stratum *S = &kb->strata[s];
  int change = 0;
  for (int k = 0; k < S->nrels; k++)
    if (kb->rels[S->rels[k]].facts_loaded < kb->rels[S->rels[k]].facts.n) change = 1;
  for (int k = 0; k < S->nrules; k++) {
    const tl_logic_rule *r = &kb->rules[S->rules[k]];
    for (int i = 0; i < r->nbody; i++) {
      const tl_logic_lit *l = &r->body[i];
      if (l->rel < 0 || kb->rels[l->rel].stratum == s) continue;
      const tl_logic_rel *low = &kb->rels[l->rel];
      if (low->pass_reset || (low->pass_new.n > 0 && (l->kind == TL_LIT_NOT || l->kind == TL_LIT_AGG))) return 2;
      if (low->pass_new.n > 0) change = 1;
    }
  }
  return change;
}

tl_status tl_logic_eval(tl_kb *kb, int rel) {
  kb->full_rel = -1;
  int ns = kb->nstrata;
  bool *needed = calloc((size_t)(ns ? ns : 1), sizeof *needed);
  int *stack = malloc((size_t)(ns ? ns : 1) * sizeof *stack);
  if (!needed || !stack) {
    free(needed), free(stack);
    return tl_logic_fail(kb, TL_ERR_NOMEM, "out of memory");
  }
  /* the strata rel depends on */
  int sp = 0;
  stack[sp++] = kb->rels[rel].stratum;
  needed[kb->rels[rel].stratum] = true;
  while (sp) {
    const tl_logic_stratum *S = &kb->strata[stack[--sp]];
    for (int k = 0; k < S->nrules; k++) {
      const tl_logic_rule *r = &kb->rules[S->rules[k]];
      for (int i = 0; i < r->nbody; i++) {
        if (r->body[i].rel < 0) continue;
        int t = kb->rels[r->body[i].rel].stratum;
        if (!needed[t]) needed[t] = true, stack[sp++] = t;
      }
    }
  }
  free(stack);
  tl_status st = TL_OK;
  for (int s = 0; s < ns && !st; s++) {
    tl_logic_stratum *S = &kb->strata[s];
    if (S->evaluated) {
      int change = stratum_change(kb, s);
      if (change == 2) {
        st = eval_stratum(kb, s, false);
        for (int k = 0; k < S->nrels; k++) kb->rels[S->rels[k]].pass_reset = true;
        kb->stats.strata_recomputed++;
      } else if (change == 1) {
        st = eval_stratum(kb, s, true);
        kb->stats.strata_incremental++;
      }
    } else if (needed[s]) {
      st = eval_stratum(kb, s, false);
      S->evaluated = true;
      kb->stats.strata_scratch++;
    }
  }
  free(needed);
  if (st) {
    /* strata above may have missed tuples this pass found: start again from facts */
    tl_logic_reset_eval(kb);
    return st;
  }
  for (int i = 0; i < kb->nrels; i++) {
    tl_logic_rel *r = &kb->rels[i];
    free(r->pass_new.tup);
    memset(&r->pass_new, 0, sizeof r->pass_new);
    r->pass_reset = false;
  }
  return TL_OK;
}
