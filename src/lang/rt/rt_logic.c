/* rt_logic.c — the run time of Datalog in compiled programs (LANGUAGE.md §8): the
 * program's knowledge base (src/logic, through tl.h's tl_kb_*), made from the
 * checked program before `main` runs and freed after it; queries, fact statements,
 * entity_name, and printing query results with entity names. Everything was checked
 * when the program compiled but the values a function passes (an entity's id from an
 * i64 variable), which are checked here: a run-time error at the query or fact. */
#include <stdint.h>
#include <string.h>

#include "lang/rt/rt.h"
#include "logic/logic.h" /* the relations' column types, the entity count */

/* a failure of the knowledge base where the program cannot have caused it, or a
 * relation past the limit of tuples (a rule deriving without end, most likely) */
static _Noreturn void kb_fail(tlrt *R, int line, int col) {
  const tl_kb *kb = R->kb;
  if (kb && tl_last_status(R->ctx) == TL_ERR_RANGE && kb->full_rel >= 0 && kb->full_rel < kb->nrels)
    tlrt_fail(R, line, col,
              "relation `%s` would hold more than %lld tuples, the limit for one relation: recursion through "
              "arithmetic may not end (bound it with a comparison), or raise the limit with `tl run --max-tuples N` "
              "or `Logic::set_max_tuples(N)`",
              kb->rels[kb->full_rel].name, (long long)kb->max_tuples);
  tlrt_fail(R, line, col, "%s", tl_last_error(R->ctx));
}

static int64_t max_tuples(const tlrt *R) { return R->max_tuples ? R->max_tuples : TLRT_MAX_TUPLES; }

void tlrt_logic_begin(tlrt *R, const tlrt_lprog *P) {
  tl_kb *kb = R->kb = tl_kb_new(R->ctx);
  if (!kb || tl_kb_set_max_tuples(kb, max_tuples(R)) != TL_OK) kb_fail(R, 1, 1);
  for (int r = 0; r < P->nrels; r++)
    if (tl_kb_relation(kb, P->rels[r].name, P->rels[r].arity, P->rels[r].types) != TL_OK) kb_fail(R, 1, 1);
  for (int64_t e = 0; e < P->nent; e++)
    if (tl_kb_entity(kb, P->ents[e]) != e) kb_fail(R, 1, 1);
  for (int r = 0; r < P->nrels; r++)
    if (P->rels[r].nfacts && tl_kb_facts(kb, P->rels[r].name, P->rels[r].nfacts, P->rels[r].facts) != TL_OK)
      kb_fail(R, 1, 1);
  for (int i = 0; i < P->nrules; i++)
    if (tl_kb_rule(kb, P->rules[i].head, P->rules[i].nbody, P->rules[i].body) != TL_OK) kb_fail(R, 1, 1);
  for (int i = 0; i < P->nio; i++)
    if (!P->io[i].output) tlrt_logic_input(R, &P->io[i]);
}

void tlrt_logic_end(tlrt *R) {
  tl_kb_free(R->kb); /* its cached results are tensors of its own scope */
  R->kb = NULL;
}

/* an entity's id from the program must name one */
static void check_entity(tlrt *R, int64_t id, int arg, const char *rel, int line, int col) {
  if (id >= 0 && id < R->kb->nent) return;
  if (rel)
    tlrt_fail(R, line, col, "argument %d of `%s` is an entity, and %lld is not an entity id (there are %lld)", arg + 1,
              rel, (long long)id, (long long)R->kb->nent);
  tlrt_fail(R, line, col, "%lld is not an entity id (there are %lld)", (long long)id, (long long)R->kb->nent);
}

tl_tensor *tlrt_logic_query(tlrt *R, const char *rel, int nargs, const tl_kb_term *args, bool rank1, int line,
                            int col) {
  for (int i = 0; i < nargs; i++)
    if (args[i].kind == TL_KB_ENT) check_entity(R, args[i].value, i, rel, line, col);
  tl_tensor *t = tl_kb_query(R->kb, rel, nargs, args);
  if (!t) kb_fail(R, line, col);
  if (rank1 && tl_ndim(t) == 0) { /* a relation called as a function: [1] */
    int64_t one = 1;
    tl_tensor *r = tl_reshape(t, 1, &one);
    tl_release(t);
    t = tlrt_check(R, r, line, col);
  }
  return t;
}

tl_tensor *tlrt_logic_none(tlrt *R, int ncols, bool rank1, int line, int col) {
  int64_t shape[2] = {rank1 ? 1 : 0, ncols};
  if (ncols) return tlrt_check(R, tl_zeros(R->ctx, TL_I64, 2, shape), line, col);
  return tlrt_check(R, tl_zeros(R->ctx, TL_F32, rank1, shape), line, col);
}

void tlrt_logic_fact(tlrt *R, const char *rel, int n, const int64_t *vals, int line, int col) {
  int r = tl_logic_find_rel(R->kb, rel);
  for (int i = 0; r >= 0 && i < n; i++)
    if (R->kb->rels[r].type[i] == TL_KB_ENTITY) check_entity(R, vals[i], i, rel, line, col);
  if (tl_kb_fact(R->kb, rel, n, vals) != TL_OK) kb_fail(R, line, col);
}

void tlrt_logic_set_max_tuples(tlrt *R, int64_t max, int line, int col) {
  if (max < 1 || max > INT32_MAX)
    tlrt_fail(R, line, col, "Logic::set_max_tuples: %lld is not between 1 and %d", (long long)max, INT32_MAX);
  R->max_tuples = max;
  if (R->kb && tl_kb_set_max_tuples(R->kb, max) != TL_OK) kb_fail(R, line, col);
}

int64_t tlrt_logic_max_tuples(tlrt *R) { return max_tuples(R); }

tlrt_str *tlrt_entity_name(tlrt *R, int64_t id, int line, int col) {
  check_entity(R, id, 0, NULL, line, col);
  return tlrt_str_new(R, R->kb->ent_names[id], -1);
}

/* ---- printing: numpy's layout (edge items past 1000 elements), names unquoted ---- */

typedef struct {
  tlrt *R;
  const int64_t *data;
  int ndim;
  int64_t shape[TL_MAX_DIMS], stride[TL_MAX_DIMS];
  uint32_t ent_cols;
  bool summarize;
} ent_fmt;

static void put(tlrt *R, const char *s) { tlrt_fmt_text(R, s, strlen(s)); }

static void put_elem(ent_fmt *f, int64_t v, int64_t col) {
  if (col < 32 && f->ent_cols >> col & 1 && v >= 0 && v < f->R->kb->nent) put(f->R, f->R->kb->ent_names[v]);
  else tlrt_fmt_i64(f->R, v, -1);
}

static void fmt_axis(ent_fmt *f, int d, int64_t off) {
  int64_t n = f->shape[d];
  bool cut = f->summarize && n > 6;
  put(f->R, "[");
  for (int64_t j = 0, i = 0; i < n; j++, i++) {
    if (j) {
      if (d == f->ndim - 1) put(f->R, " ");
      else {
        for (int k = d; k < f->ndim - 1; k++) put(f->R, "\n");
        for (int k = 0; k <= d; k++) put(f->R, " ");
      }
    }
    if (cut && i == 3) {
      put(f->R, "...");
      i = n - 4; /* the next turn shows n - 3 */
      continue;
    }
    if (d == f->ndim - 1) put_elem(f, f->data[off + i * f->stride[d]], i);
    else fmt_axis(f, d + 1, off + i * f->stride[d]);
  }
  put(f->R, "]");
}

void tlrt_fmt_entities(tlrt *R, tl_tensor *t, uint32_t ent_cols, int line, int col) {
  if (!R->kb || tl_get_dtype(t) != TL_I64 || tl_ndim(t) == 0) {
    tlrt_fmt_tensor(R, t, -1, line, col);
    return;
  }
  tl_tensor *c = tlrt_check(R, tl_contiguous(t), line, col);
  ent_fmt f = {.R = R, .ndim = tl_ndim(c), .ent_cols = ent_cols, .summarize = tl_numel(c) > 1000};
  f.data = tl_data(c);
  if (!f.data) {
    tl_release(c);
    kb_fail(R, line, col);
  }
  for (int d = f.ndim - 1; d >= 0; d--) {
    f.shape[d] = tl_dim(c, d);
    f.stride[d] = d == f.ndim - 1 ? 1 : f.stride[d + 1] * f.shape[d + 1];
  }
  if (tl_numel(c) == 0) put(R, "[]");
  else fmt_axis(&f, 0, 0);
  tl_release(c);
}
