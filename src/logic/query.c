/* query.c — queries: a relation and a pattern in (variables, constants, _), the
 * distinct matches out as an i64 tensor [n, k] with rows ascending (or a 0-d f32
 * 1.0/0.0 for a pattern without variables). Results are remembered per pattern until
 * the knowledge base changes, so asking again is a lookup. */
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "logic/logic.h"

/* ---- the cache --------------------------------------------------------------------------- */

void tl_logic_cache_clear(tl_kb *kb) {
  for (int i = 0; i < kb->ncache; i++) free(kb->cache[i].key);
  free(kb->cache);
  kb->cache = NULL;
  kb->ncache = 0;
  kb->cap_cache = 0;
  if (kb->cache_scope) tl_scope_free(kb->cache_scope);
  kb->cache_scope = NULL;
  kb->cache_version = kb->version;
}

/* Remembers a copy of the result's handle (sharing its buffer) in the cache scope. */
static void cache_put(tl_kb *kb, const char *key, size_t keylen, tl_tensor *result) {
  if (kb->ncache >= 256) tl_logic_cache_clear(kb); /* bounded: a program asking ever new questions */
  if (!tl_vec_grow(&kb->cache, &kb->cap_cache, (size_t)kb->ncache + 1, sizeof *kb->cache))
    return; /* not remembering is not an error */
  if (!kb->cache_scope) kb->cache_scope = tl_scope_new(kb->ctx, "kb_query_cache");
  char *k = malloc(keylen);
  tl_tensor *copy = kb->cache_scope && k ? tl_detach(result) : NULL;
  if (!copy || tl_scope_adopt(kb->cache_scope, copy) != TL_OK) {
    free(k);
    if (copy) tl_release(copy);
    return;
  }
  memcpy(k, key, keylen);
  kb->cache[kb->ncache++] = (tl_logic_cached){k, keylen, copy};
}

/* ---- queries ------------------------------------------------------------------------------- */

tl_tensor *tl_logic_query(tl_kb *kb, int rel, int nargs, const tl_kb_term *args) {
  tl_logic_rel *r = &kb->rels[rel];
  if (nargs != r->arity) {
    tl_logic_fail(kb, TL_ERR_ARG, "kb_query: %s has arity %d but is given %d argument%s", r->name, r->arity, nargs,
                  nargs == 1 ? "" : "s");
    return NULL;
  }
  /* the pattern: known columns, columns equal to an earlier one, output columns */
  int64_t key[TL_LOGIC_MAX_ARITY] = {0};
  int8_t same[TL_LOGIC_MAX_ARITY];
  int outcol[TL_LOGIC_MAX_ARITY], k = 0;
  uint32_t mask = 0;
  bool has_same = false;
  char ckey[4 + TL_LOGIC_MAX_ARITY * 9];
  size_t klen = 0;
  memcpy(ckey, &rel, sizeof rel);
  klen += sizeof rel;
  for (int a = 0; a < nargs; a++) {
    const tl_kb_term *t = &args[a];
    int ct = r->type[a];
    char v[64];
    same[a] = -1;
    ckey[klen++] = (char)t->kind;
    switch (t->kind) {
    case TL_KB_NUM:
    case TL_KB_ENT:
      tl_logic_value_text(kb, t->kind == TL_KB_ENT ? TL_KB_ENTITY : TL_KB_INT, t->value, v, sizeof v);
      if (t->kind == TL_KB_ENT && (t->value < 0 || t->value >= kb->nent)) {
        tl_logic_fail(kb, TL_ERR_RANGE, "kb_query: argument %d of %s: %lld is not an entity id (there are %lld)", a + 1,
                      r->name, (long long)t->value, (long long)kb->nent);
        return NULL;
      }
      if ((t->kind == TL_KB_ENT) != (ct == TL_KB_ENTITY)) {
        tl_logic_fail(kb, TL_ERR_ARG, "kb_query: argument %d of %s is %s, not the %s %s", a + 1, r->name,
                      ct == TL_KB_ENTITY ? "an entity" : "an integer", t->kind == TL_KB_ENT ? "entity" : "integer", v);
        return NULL;
      }
      key[a] = t->value;
      mask |= (uint32_t)1 << a;
      memcpy(ckey + klen, &t->value, 8);
      klen += 8;
      break;
    case TL_KB_ANY:
      break;
    case TL_KB_VAR: {
      if (!t->name || !t->name[0]) {
        tl_logic_fail(kb, TL_ERR_ARG, "kb_query: argument %d of %s: a variable without a name", a + 1, r->name);
        return NULL;
      }
      int first = -1;
      for (int b = 0; b < a && first < 0; b++)
        if (args[b].kind == TL_KB_VAR && strcmp(args[b].name, t->name) == 0) first = b;
      if (first >= 0 && (int)r->type[first] != ct) {
        tl_logic_fail(kb, TL_ERR_ARG, "kb_query: variable %s is used both as an entity and as an integer", t->name);
        return NULL;
      }
      if (first >= 0) same[a] = (int8_t)first, has_same = true;
      else outcol[k++] = a;
      ckey[klen++] = (char)(first >= 0 ? first : a);
      break;
    }
    case TL_KB_EXPR:
      tl_logic_fail(kb, TL_ERR_ARG, "kb_query: argument %d of %s is an expression: a query takes variables, constants and _",
                    a + 1, r->name);
      return NULL;
    default:
      tl_logic_fail(kb, TL_ERR_ARG, "kb_query: argument %d of %s has kind %d, not TL_KB_VAR, TL_KB_NUM, TL_KB_ENT or TL_KB_ANY",
                    a + 1, r->name, (int)t->kind);
      return NULL;
    }
  }
  kb->stats.queries++;
  if (kb->cache_version != kb->version) tl_logic_cache_clear(kb);
  for (int i = 0; i < kb->ncache; i++)
    if (kb->cache[i].keylen == klen && memcmp(kb->cache[i].key, ckey, klen) == 0) {
      kb->stats.query_cache_hits++;
      return tl_detach(kb->cache[i].result);
    }
  if (tl_logic_eval(kb, rel) != TL_OK) return NULL;
  if (r->repr == TL_REPR_SPARSE && mask && tl_logic_sparse_index(&r->sp, r->arity, mask) < 0) {
    tl_logic_fail(kb, TL_ERR_NOMEM, "kb_query: out of memory");
    return NULL;
  }
  tl_logic_iter it;
  int64_t t[TL_LOGIC_MAX_ARITY];
  tl_logic_iter_init(&it, r, TL_VER_FULL, mask, key, has_same ? same : NULL);
  tl_tensor *result;
  if (k == 0) {
    float one = tl_logic_iter_next(&it, t) ? 1.0f : 0.0f;
    result = tl_from_data(kb->ctx, TL_F32, 0, NULL, &one);
  } else {
    int64_t n = 0, *rows = NULL;
    size_t cap = 0, row = (size_t)k * sizeof *rows; /* rows of k values */
    if (!tl_vec_grow(&rows, &cap, 1024, row)) rows = NULL;
    while (rows && tl_logic_iter_next(&it, t)) {
      if ((size_t)n == cap && !tl_vec_grow(&rows, &cap, cap + 1, row)) {
        free(rows);
        rows = NULL;
        break;
      }
      for (int c = 0; c < k; c++) rows[n * k + c] = t[outcol[c]];
      n++;
    }
    if (rows) n = tl_logic_sort_unique(rows, n, k);
    if (!rows || n < 0) {
      free(rows);
      tl_logic_fail(kb, TL_ERR_NOMEM, "kb_query: out of memory");
      return NULL;
    }
    result = tl_from_data(kb->ctx, TL_I64, 2, (int64_t[]){n, k}, rows);
    free(rows);
  }
  if (result) cache_put(kb, ckey, klen, result);
  return result;
}
