/* sema_tuple.c — tuples in the checker (LANGUAGE.md §11): in: TUPLE nodes, tuple types,
 * `t.0` fields, `let (a, b) = t;` patterns, `==` on tuples; out: their types.
 * A tuple is an anonymous struct (TY_STRUCT whose st->is_tuple), so it is a refcounted
 * handle with copy-on-write and drops like any struct (§6). One struct stands for all
 * tuples whose element types agree once tensors' dtype and rank are erased: they have
 * the same C layout, so a `(Tensor<f32, 1>, i64)` value goes where a `(Tensor, i64)`
 * is expected without a conversion. The type keeps the precise elements (ty->elems). */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUPLE_MAX 64 /* elements of one tuple */


/* the element type as the shared struct holds it: tensors without dtype or rank,
 * tuples as their struct's own (erased) type */
static tl_ty *erase(sema *s, tl_ty *t) {
  if (t->kind == TY_TENSOR && (t->dtype >= 0 || t->rank >= 0 || t->ent_cols)) return tl_sema_tensor(s, -1, -1);
  if (tl_ty_is_tuple(t) && t->elems) {
    tl_ty *r = tl_arena_alloc(s->arena, sizeof *r);
    if (!r) return TY_ERR;
    *r = *t;
    r->elems = NULL;
    return r;
  }
  if (t->kind == TY_FN) return tl_sema_fn_erase(s, t);
  return t;
}


void tl_sema_tuple_name(const tl_ty *t, char *buf, size_t size) {
  size_t len = 0;
  int n = t->st->nfields;
  buf[0] = '\0';
  for (int i = 0; i <= n && len + 1 < size; i++) {
    char elem[128] = "";
    if (i < n) tl_ty_name(tl_ty_tuple_elem(t, i), elem, sizeof elem);
    const char *lead = i == 0 ? "(" : i < n ? ", " : "";
    const char *tail = i < n ? "" : n == 1 ? ",)" : ")";
    int k = snprintf(buf + len, size - len, "%s%s%s", lead, elem, tail);
    if (k < 0) break;
    len += (size_t)k < size - len ? (size_t)k : size - len - 1;
  }
}

/* the shared struct of these element types, made on first use */
static tl_struct_info *intern(sema *s, tl_ty **elems, int n) {
  int count = 0;
  for (tl_struct_info *st = s->out->structs; st; st = st->next) {
    if (!st->is_tuple) continue;
    count++;
    if (st->nfields != n) continue;
    int i = 0;
    while (i < n && tl_sema_ty_same_erased(st->fields[i].ty, elems[i])) i++;
    if (i == n) return st;
  }
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  tl_field_info *f = tl_arena_alloc(s->arena, sizeof *f * (size_t)n);
  char *cname = tl_arena_alloc(s->arena, 24);
  if (!st || !f || !cname) return NULL;
  for (int i = 0; i < n; i++) {
    char *name = tl_arena_alloc(s->arena, 12);
    if (!name) return NULL;
    snprintf(name, 12, "%d", i);
    f[i].name = name;
    f[i].ty = erase(s, elems[i]);
  }
  snprintf(cname, 24, "tlt_%d", count); /* `tls_` names are the user's structs: never the same */
  st->cname = cname;
  st->is_tuple = true;
  st->fields = f;
  st->nfields = n;
  tl_ty tmp = {.kind = TY_STRUCT, .st = st};
  char buf[256];
  tl_sema_tuple_name(&tmp, buf, sizeof buf);
  char *name = tl_arena_alloc(s->arena, strlen(buf) + 1);
  if (!name) return NULL;
  strcpy(name, buf);
  st->name = name;
  tl_struct_info **tail = &s->out->structs; /* after the structs its elements may name */
  while (*tail) tail = &(*tail)->next;
  *tail = st;
  return st;
}

/* the tuple type of these elements; () for none; TY_ERR after an error in one */
static tl_ty *tuple_of(sema *s, tl_ty **elems, int n) {
  if (n == 0) return TY_UNIT_T;
  for (int i = 0; i < n; i++)
    if (elems[i]->kind == TY_ERROR) return TY_ERR;
  tl_struct_info *st = intern(s, elems, n);
  tl_ty *t = tl_arena_alloc(s->arena, sizeof *t);
  tl_ty **e = tl_arena_alloc(s->arena, sizeof *e * (size_t)n);
  if (!st || !t || !e) return TY_ERR;
  memcpy(e, elems, sizeof *e * (size_t)n);
  t->kind = TY_STRUCT;
  t->st = st;
  t->elems = e;
  t->dtype = t->rank = -1;
  return t;
}

/* a tuple may hold any value but () and a range */
static bool elem_ok(sema *s, int line, int col, tl_ty *t) {
  if (t->kind != TY_UNIT && t->kind != TY_RANGE) return true;
  tl_diag_error(s->diag, line, col, t->kind == TY_UNIT ? "a tuple element cannot be ()" : "a range is not a value: it cannot be a tuple element");
  return false;
}

tl_ty *tl_sema_tuple_of(sema *s, tl_ty **elems, int n) { return tuple_of(s, elems, n); }

tl_ty *tl_sema_tuple_resolve(sema *s, const tl_type *t) {
  tl_ty *elems[TUPLE_MAX];
  int n = 0;
  for (const tl_type *e = t->elems; e; e = e->next, n++) {
    if (n == TUPLE_MAX) {
      tl_diag_error(s->diag, t->line, t->col, "a tuple has at most %d elements", TUPLE_MAX);
      return TY_ERR;
    }
    elems[n] = tl_sema_resolve_type(s, e);
    if (!elem_ok(s, e->line, e->col, elems[n])) elems[n] = TY_ERR;
  }
  return tuple_of(s, elems, n);
}

tl_ty *tl_sema_tuple_expr(sema *s, tl_node *n, tl_ty *expect, bool hint) {
  int count = tl_ast_count(n->args);
  if (count > TUPLE_MAX) {
    tl_sema_error(s, n, "a tuple has at most %d elements", TUPLE_MAX);
    return TY_ERR;
  }
  if (count && s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body computes numbers: a tuple cannot be used in it");
    return TY_ERR;
  }
  /* the expected tuple's elements are expected of the elements: `let t: (f64, f64) = (1, 2.5)` */
  bool guide = expect && tl_ty_is_tuple(expect) && expect->st->nfields == count;
  tl_ty *elems[TUPLE_MAX];
  int i = 0;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    tl_ty *want = guide ? tl_ty_tuple_elem(expect, i) : NULL;
    elems[i] = hint ? tl_sema_expr_hint(s, a, want) : tl_sema_expr(s, a, want);
    if (!elem_ok(s, a->line, a->col, elems[i])) elems[i] = TY_ERR;
  }
  return tuple_of(s, elems, count);
}

tl_ty *tl_sema_tuple_field(sema *s, tl_node *n, tl_ty *t) {
  char b[128];
  if (!tl_ty_is_tuple(t)) {
    tl_sema_error(s, n, "%s has no field `%s`", tl_ty_name(t, b, sizeof b), n->name);
    if (t->kind == TY_TENSOR) tl_diag_hint(s->diag, "index a tensor with `t[%s]`", n->name);
    return TY_ERR;
  }
  int k = t->st->nfields;
  bool ok = strlen(n->name) < 4 && (n->name[0] != '0' || !n->name[1]) && atoi(n->name) < k;
  if (!ok) {
    tl_sema_error(s, n, "no field `%s` on type %s", n->name, tl_ty_name(t, b, sizeof b));
    tl_diag_hint(s->diag, k == 1 ? "the tuple has one field: `.0`" : "the tuple has %d fields: `.0` to `.%d`", k, k - 1);
    return TY_ERR;
  }
  n->ival = atoi(n->name);
  return tl_ty_tuple_elem(t, (int)n->ival);
}

bool tl_sema_tuple_fits(const tl_ty *want, const tl_ty *have) {
  for (int i = 0; i < want->st->nfields; i++)
    if (!tl_sema_ty_fits(tl_ty_tuple_elem(want, i), tl_ty_tuple_elem(have, i))) return false;
  return true;
}

/* element by element; a when it holds every value of b already (the same pointer:
 * tl_sema_widen sees no change), b when b holds a's */
tl_ty *tl_sema_tuple_join(sema *s, tl_ty *a, tl_ty *b) {
  if (a->st != b->st) return NULL;
  int n = a->st->nfields;
  tl_ty *elems[TUPLE_MAX];
  bool all_a = true, all_b = true;
  for (int i = 0; i < n; i++) {
    tl_ty *x = tl_ty_tuple_elem(a, i), *y = tl_ty_tuple_elem(b, i);
    elems[i] = tl_sema_join(s, x, y);
    if (!elems[i]) return NULL;
    all_a &= elems[i] == x;
    all_b &= elems[i] == y;
  }
  return all_a ? a : all_b ? b : tuple_of(s, elems, n);
}

/* `==` and `!=` compare element by element: numbers, bools, chars, strings, tuples of
 * them. A tensor's `==` is a tensor, so a tuple holding one has no `==`. */
bool tl_sema_tuple_eq_ok(const tl_ty *t) {
  if (tl_ty_is_tuple(t)) {
    for (int i = 0; i < t->st->nfields; i++)
      if (!tl_sema_tuple_eq_ok(t->st->fields[i].ty)) return false;
    return true;
  }
  return t->kind != TY_TENSOR && t->kind != TY_STRUCT && t->kind != TY_FN; /* function values do not compare */
}

tl_ty *tl_sema_tuple_compare(sema *s, tl_node *n, tl_ty *l, tl_ty *r) {
  char a[128], b[128];
  if (!tl_sema_ty_fits(l, r)) {
    tl_sema_error(s, n, "mismatched types: %s %s %s", tl_ty_name(l, a, sizeof a), tl_tok_name(n->op), tl_ty_name(r, b, sizeof b));
    return TY_ERR;
  }
  if (n->op != TL_TOK_EQ && n->op != TL_TOK_NE) {
    tl_sema_error(s, n, "operator `%s` cannot be applied to %s", tl_tok_name(n->op), tl_ty_name(l, a, sizeof a));
    tl_diag_hint(s->diag, "tuples compare with `==` and `!=` only; compare their fields (`t.0 < u.0`)");
    return TY_ERR;
  }
  if (!tl_sema_tuple_eq_ok(l)) {
    tl_sema_error(s, n, "operator `%s` cannot be applied to %s", tl_tok_name(n->op), tl_ty_name(l, a, sizeof a));
    tl_diag_hint(s->diag, "`==` compares tuples of numbers, bools, chars and strings; compare the other fields one by one");
    return TY_ERR;
  }
  return TY_BOOL_T;
}

/* ---- `let (a, (b, _)) = t;` ---- */

void tl_sema_tuple_let(sema *s, tl_node *n) {
  tl_ty *want = n->type ? tl_sema_resolve_type(s, n->type) : NULL;
  tl_ty *t = TY_ERR;
  if (!n->rhs) {
    tl_sema_error(s, n, "a `let` with a pattern needs a value: `let (a, b) = ...;`");
    t = want ? want : TY_ERR;
  } else {
    t = tl_sema_expr(s, n->rhs, want);
    if (want && !tl_sema_ty_fits(want, t)) tl_sema_mismatch(s, n->rhs, "`let` value", want, t);
    if (want && want->kind != TY_ERROR) t = want;
  }
  tl_sema_let_pattern(s, n->lhs, t); /* sema_match.c: names and tuples only */
}
