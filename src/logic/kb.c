/* kb.c — the knowledge-base C API of tl.h: calls in, checked (NULL, names, arities,
 * ids, enum values) before they reach the program; statuses, ids and tensors out,
 * errors through the context as everywhere in the API. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "logic/logic.h"
/* tl_api_fail_orphan: errors with no context to go to (a NULL knowledge base). */
#include "api/context.h"

#define NULL_KB(what) tl_api_fail_orphan(TL_ERR_ARG, "%s: the knowledge base is NULL", what)

/* the knowledge base's errors go to its context, as every error of the API does */
tl_status tl_logic_fail(tl_kb *kb, tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&kb->ctx->err, st, fmt, ap);
  va_end(ap);
  return st;
}

tl_kb *tl_kb_new(tl_ctx *ctx) {
  if (!ctx) {
    tl_api_fail_orphan(TL_ERR_ARG, "kb_new: the context is NULL");
    return NULL;
  }
  tl_kb *kb = calloc(1, sizeof *kb);
  if (!kb) {
    tl_error_set(&ctx->err, TL_ERR_NOMEM, "kb_new: out of memory");
    return NULL;
  }
  kb->ctx = ctx;
  kb->repr_mode = TL_KB_AUTO;
  kb->max_tuples = TL_LOGIC_MAX_TUPLES;
  kb->err_lit = -2;
  kb->full_rel = -1;
  return kb;
}

void tl_kb_free(tl_kb *kb) {
  if (!kb) return;
  tl_logic_cache_clear(kb);
  for (int i = 0; i < kb->nrels; i++) {
    tl_logic_rel *r = &kb->rels[i];
    tl_logic_store_free(r);
    tl_logic_sparse_free(&r->facts);
    free(r->pass_new.tup);
    free(r->name);
  }
  free(kb->rels);
  tl_hset_free(&kb->rel_set);
  for (int i = 0; i < kb->nrules; i++) tl_logic_rule_free(&kb->rules[i]);
  free(kb->rules);
  tl_logic_strata_free(kb);
  for (int64_t i = 0; i < kb->nent; i++) free(kb->ent_names[i]);
  free(kb->ent_names);
  tl_hset_free(&kb->ent_set);
  free(kb->warnings);
  free(kb);
}

const char *tl_kb_warnings(const tl_kb *kb) {
  if (!kb) return NULL_KB("kb_warnings"), NULL;
  return kb->warnings ? kb->warnings : "";
}

int64_t tl_kb_entity(tl_kb *kb, const char *name) {
  if (!kb) return NULL_KB("kb_entity"), -1;
  if (!name) return tl_logic_fail(kb, TL_ERR_ARG, "kb_entity: the name is NULL"), -1;
  if (!name[0]) return tl_logic_fail(kb, TL_ERR_ARG, "kb_entity: the name is empty"), -1;
  int64_t id = tl_logic_entity(kb, name, strlen(name));
  if (id < 0) tl_logic_fail(kb, TL_ERR_NOMEM, "kb_entity: out of memory");
  return id;
}

const char *tl_kb_entity_name(tl_kb *kb, int64_t id) {
  if (!kb) return NULL_KB("kb_entity_name"), NULL;
  if (id < 0 || id >= kb->nent) {
    tl_logic_fail(kb, TL_ERR_RANGE, "kb_entity_name: %lld is not an entity id (there are %lld)", (long long)id,
                  (long long)kb->nent);
    return NULL;
  }
  return kb->ent_names[id];
}

int64_t tl_kb_entity_count(const tl_kb *kb) { return kb ? kb->nent : -1; }

tl_status tl_kb_relation(tl_kb *kb, const char *rel, int arity, const tl_kb_type *types) {
  if (!kb) return NULL_KB("kb_relation"), TL_ERR_ARG;
  if (!rel) return tl_logic_fail(kb, TL_ERR_ARG, "kb_relation: the name is NULL");
  if (!rel[0]) return tl_logic_fail(kb, TL_ERR_ARG, "kb_relation: the name is empty");
  if (arity < 0 || arity > TL_KB_MAX_ARITY)
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_relation %s: arity %d (it may be 0 to %d)", rel, arity, TL_KB_MAX_ARITY);
  if (arity > 0 && !types) return tl_logic_fail(kb, TL_ERR_ARG, "kb_relation %s: types is NULL", rel);
  for (int c = 0; c < arity; c++)
    if (types[c] != TL_KB_ENTITY && types[c] != TL_KB_INT)
      return tl_logic_fail(kb, TL_ERR_ARG, "kb_relation %s: column %d has type %d, not TL_KB_ENTITY or TL_KB_INT", rel,
                           c + 1, (int)types[c]);
  return tl_logic_declare(kb, rel, arity, types);
}

/* The relation a call names, or -1 with the error set. */
static int named_rel(tl_kb *kb, const char *rel, const char *what) {
  if (!rel) return tl_logic_fail(kb, TL_ERR_ARG, "%s: the relation name is NULL", what), -1;
  int r = tl_logic_find_rel(kb, rel);
  if (r < 0) tl_logic_fail(kb, TL_ERR_ARG, "%s: unknown relation %s", what, rel);
  return r;
}

tl_status tl_kb_fact(tl_kb *kb, const char *rel, int n, const int64_t *values) {
  if (!kb) return NULL_KB("kb_fact"), TL_ERR_ARG;
  int r = named_rel(kb, rel, "kb_fact");
  if (r < 0) return TL_ERR_ARG;
  if (n != kb->rels[r].arity)
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_fact: %s has arity %d but is given %d value%s", rel, kb->rels[r].arity, n,
                         n == 1 ? "" : "s");
  if (n > 0 && !values) return tl_logic_fail(kb, TL_ERR_ARG, "kb_fact: values is NULL");
  return tl_logic_add_facts(kb, r, 1, values, "kb_fact");
}

tl_status tl_kb_facts(tl_kb *kb, const char *rel, int64_t nrows, const int64_t *values) {
  if (!kb) return NULL_KB("kb_facts"), TL_ERR_ARG;
  int r = named_rel(kb, rel, "kb_facts");
  if (r < 0) return TL_ERR_ARG;
  if (nrows < 0) return tl_logic_fail(kb, TL_ERR_ARG, "kb_facts: nrows is %lld", (long long)nrows);
  if (nrows > 0 && kb->rels[r].arity > 0 && !values) return tl_logic_fail(kb, TL_ERR_ARG, "kb_facts: values is NULL");
  return tl_logic_add_facts(kb, r, nrows, values, "kb_facts");
}

tl_status tl_kb_rule(tl_kb *kb, const tl_kb_literal *head, int nbody, const tl_kb_literal *body) {
  if (!kb) return NULL_KB("kb_rule"), TL_ERR_ARG;
  if (!head) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: the head is NULL");
  if (nbody < 0) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: nbody is %d", nbody);
  if (nbody > 0 && !body) return tl_logic_fail(kb, TL_ERR_ARG, "kb_rule: the body is NULL");
  return tl_logic_add_rule(kb, head, nbody, body);
}

tl_tensor *tl_kb_query(tl_kb *kb, const char *rel, int nargs, const tl_kb_term *args) {
  if (!kb) return NULL_KB("kb_query"), NULL;
  int r = named_rel(kb, rel, "kb_query");
  if (r < 0) return NULL;
  if (nargs > 0 && !args) return tl_logic_fail(kb, TL_ERR_ARG, "kb_query: args is NULL"), NULL;
  return tl_logic_query(kb, r, nargs, args);
}

int64_t tl_kb_count(tl_kb *kb, const char *rel) {
  if (!kb) return NULL_KB("kb_count"), -1;
  int r = named_rel(kb, rel, "kb_count");
  if (r < 0 || tl_logic_eval(kb, r) != TL_OK) return -1;
  return kb->rels[r].count;
}

tl_status tl_kb_set_max_tuples(tl_kb *kb, int64_t max) {
  if (!kb) return NULL_KB("kb_set_max_tuples"), TL_ERR_ARG;
  if (max < 1 || max > TL_LOGIC_MAX_TUPLES)
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_set_max_tuples: %lld is not between 1 and %lld", (long long)max,
                         (long long)TL_LOGIC_MAX_TUPLES);
  if (max != kb->max_tuples) {
    kb->max_tuples = max;
    tl_logic_reset_eval(kb);
  }
  return TL_OK;
}

tl_status tl_kb_set_repr(tl_kb *kb, tl_kb_repr repr) {
  if (!kb) return NULL_KB("kb_set_repr"), TL_ERR_ARG;
  if (repr != TL_KB_AUTO && repr != TL_KB_DENSE && repr != TL_KB_SPARSE)
    return tl_logic_fail(kb, TL_ERR_ARG, "kb_set_repr: %d is not TL_KB_AUTO, TL_KB_DENSE or TL_KB_SPARSE", (int)repr);
  if (repr != kb->repr_mode) {
    kb->repr_mode = repr;
    tl_logic_reset_eval(kb);
  }
  return TL_OK;
}
