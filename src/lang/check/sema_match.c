/* sema_match.c — `match`, `if let` and patterns in the checker (LANGUAGE.md §11): in: a
 * MATCH node (`if let` is one, made by the parser); out: the types of its arms' values,
 * each pattern node's type (p->ty), its bindings declared (p->var), its variants
 * (p->ref), and an error naming a value no arm matches. Exhaustiveness is Maranget's
 * usefulness check on the matrix of the unguarded arms' patterns, column by column:
 * an enum splits into its variants, a bool into true and false, a tuple or struct
 * into its fields; numbers, chars and strings are covered only by a binding or `_`. */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the names bound so far in one pattern: a name twice is an error, as in Rust. In an
 * alternative after the first of `p | q`, the names are those of the first (the window
 * [from, to)), each bound once more (hit) to the same variable */
#define BOUND_MAX 256
typedef struct {
  const char *names[BOUND_MAX];
  tl_var *vars[BOUND_MAX];
  int n;
  int from, to;
  bool hit[BOUND_MAX];
} bound;

static void check_pat(sema *s, tl_node *p, tl_ty *t, bound *b);

/* a name, `_`, or `()` (the one value of its type: `Ok(())`) */
static bool is_wild(const tl_node *p) { return !p || p->kind == TL_N_IDENT || (p->kind == TL_N_TUPLE && !p->args); }

static void bind_name(sema *s, tl_node *p, tl_ty *t, bound *b) {
  if (!strcmp(p->name, "_")) return;
  if (b->to > b->from) { /* a later alternative: the first one's names again */
    for (int i = b->from; i < b->to; i++) {
      if (strcmp(b->names[i], p->name)) continue;
      if (b->hit[i]) tl_sema_error(s, p, "identifier `%s` is bound more than once in the same pattern", p->name);
      b->hit[i] = true;
      p->var = b->vars[i];
      if (p->var && !tl_sema_ty_fits(p->var->ty, t)) tl_sema_mismatch(s, p, "mismatched types in the alternatives", p->var->ty, t);
      if (p->var && p->is_mut != p->var->is_mut) tl_sema_error(s, p, "`%s` is `mut` in one alternative only", p->name);
      return;
    }
    tl_sema_error(s, p, "variable `%s` is not bound in all patterns", p->name);
    return;
  }
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->names[i], p->name)) {
      tl_sema_error(s, p, "identifier `%s` is bound more than once in the same pattern", p->name);
      return;
    }
  p->var = tl_sema_declare(s, p, p->name, t, VAR_LOCAL, p->is_mut);
  if (b->n < BOUND_MAX) b->names[b->n] = p->name, b->vars[b->n++] = p->var;
}

/* `p | q`: q binds the names p binds, to the same variables and types */
static void check_or(sema *s, tl_node *p, tl_ty *t, bound *b) {
  if (b->to > b->from) { /* inside a later alternative already: each side hits the same names */
    bool saved[BOUND_MAX], left[BOUND_MAX];
    memcpy(saved, b->hit, sizeof saved);
    check_pat(s, p->lhs, t, b);
    memcpy(left, b->hit, sizeof left);
    memcpy(b->hit, saved, sizeof saved);
    check_pat(s, p->rhs, t, b);
    for (int i = b->from; i < b->to; i++)
      if (left[i] != b->hit[i]) tl_sema_error(s, p, "variable `%s` is not bound in all patterns", b->names[i]);
    return;
  }
  int start = b->n;
  check_pat(s, p->lhs, t, b);
  b->from = start;
  b->to = b->n;
  memset(b->hit, 0, sizeof b->hit);
  check_pat(s, p->rhs, t, b);
  for (int i = b->from; i < b->to; i++)
    if (!b->hit[i]) tl_sema_error(s, p->rhs, "variable `%s` is not bound in all patterns", b->names[i]);
  b->from = b->to = 0;
}

/* a literal's value as an integer (ints and chars), for a range's order */
static int64_t lit_value(const tl_node *n) {
  if (n->kind == TL_N_UNARY) return n->lhs->kind == TL_N_INT ? -n->lhs->ival : 0;
  return n->kind == TL_N_INT || n->kind == TL_N_CHAR ? n->ival : 0;
}

static void check_literal(sema *s, tl_node *p, tl_ty *t) {
  tl_ty *lt = tl_sema_expr(s, p, tl_ty_is_numeric(t) ? t : NULL);
  if (lt->kind == TY_ERROR || t->kind == TY_ERROR) return;
  if (!tl_sema_ty_fits(t, lt)) tl_sema_mismatch(s, p, "mismatched types in the pattern", t, lt);
}

static void check_range(sema *s, tl_node *p, tl_ty *t) {
  check_literal(s, p->lhs, t);
  check_literal(s, p->rhs, t);
  if (t->kind != TY_ERROR && !tl_ty_is_int(t) && t->kind != TY_CHAR) {
    char b[64];
    tl_sema_error(s, p, "a range pattern matches integers or chars, not %s", tl_ty_name(t, b, sizeof b));
  } else if (lit_value(p->lhs) > lit_value(p->rhs))
    tl_sema_error(s, p, "lower range bound must be less than or equal to upper");
}

static void check_tuple_pat(sema *s, tl_node *p, tl_ty *t, bound *b) {
  char buf[128];
  int k = tl_ast_count(p->args);
  bool unit = t->kind == TY_UNIT && k == 0; /* `()` in `Ok(())` */
  bool bad = t->kind != TY_ERROR && !unit && (!tl_ty_is_tuple(t) || t->st->nfields != k);
  if (bad && tl_ty_is_tuple(t))
    tl_sema_error(s, p, "mismatched types: expected a tuple with %d element%s, found one with %d element%s",
               t->st->nfields, t->st->nfields == 1 ? "" : "s", k, k == 1 ? "" : "s");
  else if (bad) {
    tl_sema_error(s, p, "mismatched types: expected %s, found a tuple pattern", tl_ty_name(t, buf, sizeof buf));
    if (t->kind == TY_STRUCT && !t->st->is_enum) tl_diag_hint(s->diag, "take a struct's fields with `s.field`");
  }
  int i = 0;
  for (tl_node *e = p->args; e; e = e->next, i++) check_pat(s, e, bad || t->kind == TY_ERROR ? TY_ERR : tl_ty_tuple_elem(t, i), b);
}

/* `{ x, y: pat, .. }` of a struct or a variant: its fields are st->fields[first, first+k) */
static void check_fields(sema *s, tl_node *p, tl_struct_info *st, int first, int k, bound *b) {
  bool seen[64] = {0};
  for (tl_node *f = p->args; f; f = f->next) {
    int i = first;
    while (i < first + k && strcmp(st->fields[i].name + (st->is_enum ? strcspn(st->fields[i].name, "_") + 1 : 0), f->name)) i++;
    if (i == first + k) {
      tl_sema_error(s, f, "%s `%s` has no field `%s`", st->is_enum ? "variant" : "struct", p->name, f->name);
      check_pat(s, f->lhs, TY_ERR, b);
      continue;
    }
    if (i - first < 64 && seen[i - first]) tl_sema_error(s, f, "field `%s` is bound twice", f->name);
    if (i - first < 64) seen[i - first] = true;
    f->ival = i;
    check_pat(s, f->lhs, st->fields[i].ty, b);
  }
  for (int i = 0; i < k && i < 64 && !p->ival; i++)
    if (!seen[i]) {
      const char *name = st->fields[first + i].name + (st->is_enum ? strcspn(st->fields[first + i].name, "_") + 1 : 0);
      tl_sema_error(s, p, "pattern does not mention field `%s`", name);
      tl_diag_hint(s->diag, "bind it, or end the pattern with `..` to ignore the fields not named");
      break;
    }
}

/* is the pattern's enum or struct the scrutinee's type? */
static bool of_type(sema *s, tl_node *p, tl_struct_info *st, tl_ty *t) {
  if (t->kind == TY_ERROR || (t->kind == TY_STRUCT && t->st == st)) return true;
  tl_sema_mismatch(s, p, "mismatched types in the pattern", t, tl_sema_struct_ty(s, st));
  return false;
}

static void check_variant_pat(sema *s, tl_node *p, tl_ty *t, bound *b) {
  tl_sema_generic_pattern(s, p, t); /* MyOption::Just(x) on a MyOption<i64> (sema_generic.c) */
  const char *path = p->kind == TL_N_CALL ? p->lhs->name : p->name;
  tl_struct_info *en;
  tl_variant_info *v = tl_sema_find_variant(s, path, &en);
  bool call = p->kind == TL_N_CALL, lit = p->kind == TL_N_STRUCT_LIT;
  if (!v) {
    if (en) {
      tl_sema_error(s, p, "no variant `%s` in enum `%s`", strstr(path, "::") + 2, en->generic_of ? en->generic_of : en->name);
      tl_suggest g;
      tl_suggest_init(&g, strstr(path, "::") + 2);
      tl_sema_suggest_variants(en, &g);
      tl_suggest_hint(&g, s->diag, "");
    } else tl_sema_error(s, p, "`%s` is not an enum variant", path);
  } else if (call != (!v->named && v->nfields > 0) || lit != v->named) {
    tl_sema_error(s, p, "`%s::%s` is matched as `%s::%s%s`", en->name, v->name, en->name, v->name,
               v->named ? " { .. }" : v->nfields ? "(..)" : "");
    v = NULL;
  } else if (call && !p->ival && tl_ast_count(p->args) != v->nfields) {
    int k = tl_ast_count(p->args);
    tl_sema_error(s, p, "this pattern has %d field%s, but the corresponding tuple variant has %d field%s", k, k == 1 ? "" : "s",
               v->nfields, v->nfields == 1 ? "" : "s");
    v = NULL;
  }
  if (v && !of_type(s, p, en, t)) v = NULL;
  p->ref = v;
  if (lit && v) {
    check_fields(s, p, en, v->first, v->nfields, b);
    return;
  }
  int i = 0;
  for (tl_node *a = call ? p->args : NULL; a; a = a->next, i++) check_pat(s, a, v ? en->fields[v->first + i].ty : TY_ERR, b);
  for (tl_node *f = lit ? p->args : NULL; f; f = f->next) check_pat(s, f->lhs, TY_ERR, b);
}

/* `Some(p)`, `None`, `Ok(p)`, `Err(p)` (sema_option.c): `None` becomes a PATH, so it
 * is never taken for a binding again */
static bool check_option_pat(sema *s, tl_node *p, tl_ty *t, bound *b) {
  const char *name = p->kind == TL_N_CALL ? p->lhs->name : p->name;
  int c = p->kind == TL_N_STRUCT_LIT ? -1 : tl_sema_option_ctor(name);
  if (c < 0) return false; /* `Some` alone is an error below, never a binding */
  bool call = p->kind == TL_N_CALL;
  if (p->kind == TL_N_IDENT) p->kind = TL_N_PATH;
  if (call) p->line = p->lhs->line, p->col = p->lhs->col; /* errors point at `Some`, not `(` */
  tl_variant_info *v = NULL;
  if (call != (c != 0)) tl_sema_error(s, p, c ? "`%s` is matched as `%s(..)`" : "`%s` has no fields: it is matched as `%s`", name, name);
  else if (call && !p->ival && tl_ast_count(p->args) != 1) {
    int k = tl_ast_count(p->args);
    tl_sema_error(s, p, "this pattern has %d fields, but the corresponding tuple variant has 1 field", k);
  } else v = tl_sema_option_variant(s, p, name, t);
  p->ref = v;
  for (tl_node *a = call ? p->args : NULL; a; a = a->next)
    check_pat(s, a, v && a == p->args ? v->en->fields[v->first].ty : TY_ERR, b);
  return true;
}

static void check_pat(sema *s, tl_node *p, tl_ty *t, bound *b) {
  p->ty = t;
  if (p->kind == TL_N_PATH || p->kind == TL_N_CALL) tl_sema_option_spelling(s, p); /* Option::Some(x) */
  if ((p->kind == TL_N_IDENT || p->kind == TL_N_PATH || p->kind == TL_N_CALL) && check_option_pat(s, p, t, b)) return;
  switch (p->kind) {
  case TL_N_IDENT: bind_name(s, p, t, b); return;
  case TL_N_INT: case TL_N_FLOAT: case TL_N_CHAR: case TL_N_STR: case TL_N_BOOL: case TL_N_UNARY: check_literal(s, p, t); return;
  case TL_N_RANGE: check_range(s, p, t); return;
  case TL_N_TUPLE: check_tuple_pat(s, p, t, b); return;
  case TL_N_PATH: case TL_N_CALL: check_variant_pat(s, p, t, b); return;
  case TL_N_STRUCT_LIT: {
    if (strstr(p->name, "::")) {
      check_variant_pat(s, p, t, b);
      return;
    }
    tl_sema_generic_pattern(s, p, t); /* Pair { a, b } on a Pair<i64, f64> */
    tl_struct_info *st = tl_sema_find_struct(s, p->name);
    if (!st || st->is_enum) {
      tl_sema_error(s, p, st ? "`%s` is an enum: match its variants, `%s::V`" : "unknown struct `%s`", p->name, p->name);
      for (tl_node *f = p->args; f; f = f->next) check_pat(s, f->lhs, TY_ERR, b);
      return;
    }
    if (of_type(s, p, st, t)) check_fields(s, p, st, 0, st->nfields, b);
    else
      for (tl_node *f = p->args; f; f = f->next) check_pat(s, f->lhs, TY_ERR, b);
    return;
  }
  case TL_N_BINARY:
    if (p->op == TL_TOK_PIPE) {
      check_or(s, p, t, b);
      return;
    }
    /* fall through */
  default: tl_sema_error(s, p, "expected a pattern");
  }
}

/* ---- exhaustiveness ---- */

typedef struct {
  sema *s;
  long steps; /* a budget: a pathological match is not checked to the end */
} exh_ctx;

#define EXH_BUDGET 200000

static char *text(sema *s, const char *fmt, const char *a, const char *b) {
  size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
  char *r = tl_arena_alloc(s->arena, n);
  if (r) snprintf(r, n, fmt, a, b);
  return r ? r : "_";
}

/* "(w0, w1)", "E::B(w0)", "E::C { x: w0 }", "P { x: w0 }" from k sub-witnesses */
static const char *compose(sema *s, const char *head, const tl_struct_info *st, int first, int k, bool named,
                           const char **w) {
  const char *acc = "";
  for (int i = 0; i < k; i++) {
    const char *fname = st->fields[first + i].name + (st->is_enum ? strcspn(st->fields[first + i].name, "_") + 1 : 0);
    const char *item = named ? text(s, "%s: %s", fname, w[i]) : w[i];
    acc = i ? text(s, "%s, %s", acc, item) : item;
  }
  if (named) return text(s, k ? "%s { %s }" : "%s {%s}", head, acc);
  if (!k) return head;
  return text(s, !*head && k == 1 ? "%s(%s,)" : "%s(%s)", head, acc);
}

/* "E::A"; Option's and Result's variants are written alone: "None", "Err" */
static const char *variant_name(sema *s, const tl_struct_info *st, const tl_variant_info *v) {
  return st->generic ? v->name : text(s, "%s::%s", st->generic_of ? st->generic_of : st->name, v->name); /* `E::B` of E<i64> */
}

/* the sub-patterns of a row's head for a constructor with k fields; NULL: the row
 * does not match it. tag: the variant (enum), 1/0 (bool), -1 (tuple or struct) */
static bool subpatterns(const tl_node *h, int tag, int first, int k, tl_node **out) {
  for (int i = 0; i < k; i++) out[i] = NULL;
  if (is_wild(h)) return true;
  if (h->kind == TL_N_BOOL) return h->ival == tag;
  if (h->kind == TL_N_TUPLE) {
    int i = 0;
    for (tl_node *a = h->args; a && i < k; a = a->next) out[i++] = a;
    return true;
  }
  const tl_variant_info *v = h->kind == TL_N_PATH || h->kind == TL_N_CALL || (h->kind == TL_N_STRUCT_LIT && h->ref) ? h->ref : NULL;
  if (v && v->tag != tag) return false;
  if (h->kind == TL_N_CALL) {
    int i = 0;
    for (tl_node *a = h->args; a && i < k; a = a->next) out[i++] = a;
  } else if (h->kind == TL_N_STRUCT_LIT)
    for (tl_node *f = h->args; f; f = f->next)
      if (f->ival - first >= 0 && f->ival - first < k) out[f->ival - first] = f->lhs;
  return true;
}

/* rows: nrows arrays of n cells; a witness (n strings) of a value none matches, or NULL */
static const char **missing(exh_ctx *c, tl_node ***rows, int nrows, tl_ty **tys, int n) {
  sema *s = c->s;
  if (++c->steps > EXH_BUDGET) return NULL;
  if (n == 0) return nrows ? NULL : tl_arena_alloc(s->arena, sizeof(char *));
  /* a head `p | q` is two rows */
  for (int r = 0; r < nrows; r++) {
    tl_node *h = rows[r][0];
    if (!h || h->kind != TL_N_BINARY) continue;
    tl_node ***more = tl_arena_alloc(s->arena, sizeof *more * (size_t)(nrows + 1));
    tl_node **left = tl_arena_alloc(s->arena, sizeof *left * (size_t)n);
    tl_node **right = tl_arena_alloc(s->arena, sizeof *right * (size_t)n);
    if (!more || !left || !right) return NULL;
    memcpy(more, rows, sizeof *more * (size_t)nrows);
    memcpy(left, rows[r], sizeof *left * (size_t)n);
    memcpy(right, rows[r], sizeof *right * (size_t)n);
    left[0] = h->lhs;
    right[0] = h->rhs;
    more[r] = left;
    more[nrows] = right;
    return missing(c, more, nrows + 1, tys, n);
  }
  tl_ty *t = tys[0];
  int ncons = 1, k = 0, first = 0;
  bool is_enum = t->kind == TY_STRUCT && t->st->is_enum, is_struct = t->kind == TY_STRUCT && !is_enum;
  if (is_enum) ncons = t->st->nvariants;
  else if (t->kind == TY_BOOL) ncons = 2;
  /* the constructors the column names: when some is missing, only the rows whose head
   * is a wildcard can match it (the default matrix), and a wildcard never splits, so
   * a recursive enum is not unfolded for ever */
  int missing_con = -1;
  if (!is_enum && !is_struct && t->kind != TY_BOOL) missing_con = 0;
  for (int con = 0; con < ncons && missing_con < 0; con++) {
    bool named = false;
    for (int r = 0; r < nrows && !named; r++) {
      const tl_node *h = rows[r][0];
      if (is_wild(h)) continue;
      if (is_enum) named = h->ref && ((const tl_variant_info *)h->ref)->tag == con;
      else if (t->kind == TY_BOOL) named = h->kind == TL_N_BOOL && h->ival == 1 - con;
      else named = true;
    }
    if (!named) missing_con = con;
  }
  if (missing_con >= 0) {
    tl_node ***def = tl_arena_alloc(s->arena, sizeof *def * (size_t)(nrows + 1));
    if (!def) return NULL;
    int m = 0;
    bool any = false;
    for (int r = 0; r < nrows; r++) {
      if (is_wild(rows[r][0])) def[m++] = rows[r] + 1;
      else any = true;
    }
    const char **w = missing(c, def, m, tys + 1, n - 1);
    if (!w) return NULL;
    const char **out = tl_arena_alloc(s->arena, sizeof *out * (size_t)n);
    const char *wild[64];
    if (!out) return NULL;
    memcpy(out + 1, w, sizeof *out * (size_t)(n - 1));
    for (int i = 0; i < 64; i++) wild[i] = "_";
    out[0] = "_";
    /* no constructor named: `_` itself is what is missing, unless no arm is left at
     * all: then a variant names it better */
    if (!any && (nrows || (!is_enum && t->kind != TY_BOOL))) return out;
    if (t->kind == TY_BOOL) out[0] = missing_con ? "false" : "true";
    else if (is_enum && t->st->variants[missing_con].nfields <= 64) {
      const tl_variant_info *v = &t->st->variants[missing_con];
      out[0] = compose(s, variant_name(s, t->st, v), t->st, v->first, v->nfields, v->named, wild);
    }
    return out;
  }
  for (int con = 0; con < ncons; con++) {
    if (is_enum) first = t->st->variants[con].first, k = t->st->variants[con].nfields;
    else if (is_struct) k = t->st->nfields;
    else k = 0;
    int tag = is_enum ? con : t->kind == TY_BOOL ? 1 - con : -1;
    bool open = !is_enum && !is_struct && t->kind != TY_BOOL; /* numbers...: only a wildcard covers */
    tl_node ***sub = tl_arena_alloc(s->arena, sizeof *sub * (size_t)(nrows + 1));
    tl_ty **stys = tl_arena_alloc(s->arena, sizeof *stys * (size_t)(k + n));
    if (!sub || !stys) return NULL;
    int m = 0;
    for (int r = 0; r < nrows; r++) {
      tl_node **cells = tl_arena_alloc(s->arena, sizeof *cells * (size_t)(k + n));
      if (!cells) return NULL;
      if (open ? !is_wild(rows[r][0]) : !subpatterns(rows[r][0], tag, first, k, cells)) continue;
      memcpy(cells + k, rows[r] + 1, sizeof *cells * (size_t)(n - 1));
      sub[m++] = cells;
    }
    for (int i = 0; i < k; i++) stys[i] = t->st->fields[first + i].ty;
    memcpy(stys + k, tys + 1, sizeof *stys * (size_t)(n - 1));
    const char **w = missing(c, sub, m, stys, k + n - 1);
    if (!w) continue;
    const char **out = tl_arena_alloc(s->arena, sizeof *out * (size_t)n);
    if (!out) return NULL;
    memcpy(out + 1, w + k, sizeof *out * (size_t)(n - 1));
    if (open) out[0] = "_";
    else if (t->kind == TY_BOOL) out[0] = tag ? "true" : "false";
    else if (is_enum) {
      const tl_variant_info *v = &t->st->variants[con];
      out[0] = compose(s, variant_name(s, t->st, v), t->st, first, k, v->named, w);
    } else out[0] = compose(s, tl_ty_is_tuple(t) ? "" : t->st->generic_of ? t->st->generic_of : t->st->name, t->st, 0, k,
                            !tl_ty_is_tuple(t), w);
    return out;
  }
  return NULL;
}

/* two literal patterns that surely match the same value (ints, chars, strings);
 * false when unsure, which only makes a later arm look reachable */
static bool same_literal(const tl_node *a, const tl_node *b) {
  bool ia = a->kind == TL_N_INT || a->kind == TL_N_CHAR || (a->kind == TL_N_UNARY && a->lhs && a->lhs->kind == TL_N_INT);
  bool ib = b->kind == TL_N_INT || b->kind == TL_N_CHAR || (b->kind == TL_N_UNARY && b->lhs && b->lhs->kind == TL_N_INT);
  if (ia && ib) return a->kind == b->kind && lit_value(a) == lit_value(b);
  return a->kind == TL_N_STR && b->kind == TL_N_STR && a->len == b->len && !memcmp(a->str, b->str, a->len);
}

/* Maranget's usefulness: does the row q (n cells) match a value none of the rows
 * matches? An arm whose pattern is not useful after the unguarded arms before it can
 * never run. When the budget runs out the answer is yes (no error) */
static bool useful(exh_ctx *c, tl_node ***rows, int nrows, tl_node **q, tl_ty **tys, int n) {
  sema *s = c->s;
  if (++c->steps > EXH_BUDGET) return true;
  if (n == 0) return nrows == 0;
  tl_node *h = q[0];
  if (h && h->kind == TL_N_BINARY) { /* `p | r`: either side */
    tl_node **alt = tl_arena_alloc(s->arena, sizeof *alt * (size_t)n);
    if (!alt) return true;
    memcpy(alt, q, sizeof *alt * (size_t)n);
    alt[0] = h->lhs;
    if (useful(c, rows, nrows, alt, tys, n)) return true;
    alt[0] = h->rhs;
    return useful(c, rows, nrows, alt, tys, n);
  }
  for (int r = 0; r < nrows; r++) { /* a row's `p | r` is two rows */
    tl_node *rh = rows[r][0];
    if (!rh || rh->kind != TL_N_BINARY) continue;
    tl_node ***more = tl_arena_alloc(s->arena, sizeof *more * (size_t)(nrows + 1));
    tl_node **left = tl_arena_alloc(s->arena, sizeof *left * (size_t)n);
    tl_node **right = tl_arena_alloc(s->arena, sizeof *right * (size_t)n);
    if (!more || !left || !right) return true;
    memcpy(more, rows, sizeof *more * (size_t)nrows);
    memcpy(left, rows[r], sizeof *left * (size_t)n);
    memcpy(right, rows[r], sizeof *right * (size_t)n);
    left[0] = rh->lhs, right[0] = rh->rhs;
    more[r] = left, more[nrows] = right;
    return useful(c, more, nrows + 1, q, tys, n);
  }
  tl_ty *t = tys[0];
  bool is_enum = t->kind == TY_STRUCT && t->st->is_enum, is_struct = t->kind == TY_STRUCT && !is_enum;
  bool closed = is_enum || is_struct || t->kind == TY_BOOL;
  int ncons = is_enum ? t->st->nvariants : t->kind == TY_BOOL ? 2 : 1;
  tl_node ***sub = tl_arena_alloc(s->arena, sizeof *sub * (size_t)(nrows + 1));
  if (!sub) return true;
  if (!closed || (is_wild(h) && !is_struct)) {
    /* a wildcard over a column whose constructors are not all named, or a literal:
     * the rows that can match what q matches are the wildcards (and equal literals) */
    bool complete = closed;
    for (int con = 0; con < ncons && complete; con++) {
      bool named = false;
      for (int r = 0; r < nrows && !named; r++) {
        const tl_node *rh = rows[r][0];
        if (is_wild(rh)) continue;
        if (is_enum) named = rh->ref && ((const tl_variant_info *)rh->ref)->tag == con;
        else named = rh->kind == TL_N_BOOL && rh->ival == 1 - con;
      }
      complete = named;
    }
    if (!complete) {
      int m = 0;
      for (int r = 0; r < nrows; r++)
        if (is_wild(rows[r][0]) || (!is_wild(h) && h->kind != TL_N_RANGE && !closed && same_literal(rows[r][0], h)))
          sub[m++] = rows[r] + 1;
      return useful(c, sub, m, q + 1, tys + 1, n - 1);
    }
  }
  /* split by constructor: q's own, or each one when q's head is a wildcard */
  for (int con = 0; con < ncons; con++) {
    int first = 0, k = 0;
    if (is_enum) first = t->st->variants[con].first, k = t->st->variants[con].nfields;
    else if (is_struct) k = t->st->nfields;
    int tag = is_enum ? con : t->kind == TY_BOOL ? 1 - con : -1;
    tl_node **qc = tl_arena_alloc(s->arena, sizeof *qc * (size_t)(k + n));
    tl_ty **stys = tl_arena_alloc(s->arena, sizeof *stys * (size_t)(k + n));
    if (!qc || !stys) return true;
    if (!subpatterns(h, tag, first, k, qc)) continue;
    memcpy(qc + k, q + 1, sizeof *qc * (size_t)(n - 1));
    int m = 0;
    for (int r = 0; r < nrows; r++) {
      tl_node **cells = tl_arena_alloc(s->arena, sizeof *cells * (size_t)(k + n));
      if (!cells) return true;
      if (!subpatterns(rows[r][0], tag, first, k, cells)) continue;
      memcpy(cells + k, rows[r] + 1, sizeof *cells * (size_t)(n - 1));
      sub[m++] = cells;
    }
    for (int i = 0; i < k; i++) stys[i] = t->st->fields[first + i].ty;
    memcpy(stys + k, tys + 1, sizeof *stys * (size_t)(n - 1));
    if (useful(c, sub, m, qc, stys, k + n - 1)) return true;
  }
  return false;
}

/* an arm no value can reach, after the unguarded arms before it, is an error */
static bool check_reachable(sema *s, tl_node *n, tl_ty *t) {
  int nrows = 0;
  tl_node ***rows = tl_arena_alloc(s->arena, sizeof *rows * (size_t)(tl_ast_count(n->args) + 1));
  if (!rows) return false;
  exh_ctx c = {.s = s};
  for (tl_node *a = n->args; a; a = a->next) {
    tl_node **q = &a->lhs;
    if (!useful(&c, rows, nrows, q, &t, 1)) {
      tl_sema_error(s, a->lhs->kind == TL_N_CALL ? a->lhs->lhs : a->lhs, "unreachable pattern: the arms before it match every value it matches");
      tl_diag_hint(s->diag, "remove this arm, or move it before the arm that matches its values");
      return true;
    }
    if (!a->cond) rows[nrows++] = q;
  }
  return false;
}

static bool check_exhaustive(sema *s, tl_node *n, tl_ty *t) {
  int nrows = 0;
  for (tl_node *a = n->args; a; a = a->next) nrows += !a->cond;
  tl_node ***rows = tl_arena_alloc(s->arena, sizeof *rows * (size_t)(nrows + 1));
  if (!rows) return false;
  int r = 0;
  for (tl_node *a = n->args; a; a = a->next) {
    if (a->cond) continue; /* a guard may fail: its arm covers nothing for sure */
    rows[r] = tl_arena_alloc(s->arena, sizeof(tl_node *));
    if (!rows[r]) return false;
    rows[r++][0] = a->lhs;
  }
  exh_ctx c = {.s = s};
  const char **w = missing(&c, rows, nrows, &t, 1);
  if (!w) return false;
  tl_sema_error(s, n, "non-exhaustive patterns: `%s` not covered", w[0]);
  tl_diag_hint(s->diag, "add an arm for it, or a `_ => ..` arm for every value not matched");
  return true;
}

/* ---- match ---- */

/* the arm to check first: the first one whose value says its type when the first arm's
 * value needs context (`None => None, Some(x) => Some(x + 1)`); NULL: in order */
static tl_node *lead_arm(tl_node *n, tl_ty *expect) {
  if (expect || !n->args || !tl_sema_option_needs_context(n->args->rhs)) return NULL;
  for (tl_node *a = n->args->next; a; a = a->next)
    if (a->rhs && !tl_sema_option_needs_context(a->rhs)) return a;
  return NULL;
}

tl_ty *tl_sema_match(sema *s, tl_node *n, tl_ty *expect, bool hint) {
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body computes numbers: `match` cannot be used in it");
    return TY_ERR;
  }
  int errors = s->diag->errors;
  tl_ty *t = tl_sema_expr(s, n->lhs, NULL);
  if (t->kind == TY_UNIT || t->kind == TY_RANGE) {
    tl_sema_error(s, n->lhs, "this expression has no value to match");
    t = TY_ERR;
  }
  bool unit = n->ival && !n->args->next->rhs; /* `if let` without `else` */
  tl_ty *result = NULL;
  tl_node *lead = lead_arm(n, expect);
  bool started = !lead; /* the leading arm first, then the others in order */
  for (tl_node *arm = lead ? lead : n->args; arm; arm = started ? arm->next : n->args, started = true) {
    if (arm == lead && started && result) continue; /* checked first already */
    sym *mark = s->syms;
    bound b = {.n = 0};
    check_pat(s, arm->lhs, t, &b);
    if (arm->cond) {
      tl_ty *c = tl_sema_expr(s, arm->cond, TY_BOOL_T);
      if (!tl_sema_ty_fits(TY_BOOL_T, c)) tl_sema_mismatch(s, arm->cond, "match guard", TY_BOOL_T, c);
    }
    if (arm->rhs) {
      /* the first arm's type is expected of the others when it is a scalar (only tensors join) */
      bool scalar = result && result->kind != TY_UNIT && result->kind != TY_TENSOR && result->kind != TY_ERROR;
      tl_ty *want = unit ? NULL : scalar ? result : expect;
      tl_ty *at = hint && !scalar ? tl_sema_expr_hint(s, arm->rhs, want) : tl_sema_expr(s, arm->rhs, want);
      tl_ty *j = unit ? TY_UNIT_T : result ? tl_sema_join(s, result, at) : at;
      if (!j) {
        char x[128], y[128];
        tl_sema_error(s, arm->rhs, "`match` arms have different types: %s and %s", tl_ty_name(result, x, sizeof x),
                   tl_ty_name(at, y, sizeof y));
        j = TY_ERR;
      }
      result = j;
    }
    s->syms = mark;
  }
  bool missed = s->diag->errors == errors && t->kind != TY_ERROR && !n->ival &&
                (check_reachable(s, n, t) || check_exhaustive(s, n, t));
  if (!result && missed) return TY_ERR; /* no arm at all: reported, no follow-on error */
  if (unit || !result) return TY_UNIT_T;
  return result;
}

/* `let (a, b) = ..` takes a value apart; a pattern that could fail to match (a literal,
 * a variant) is `match`'s or `if let`'s */
static tl_node *refutable(tl_node *p) {
  if (p->kind == TL_N_IDENT) return NULL;
  if (p->kind != TL_N_TUPLE) return p;
  for (tl_node *e = p->args; e; e = e->next) {
    tl_node *r = refutable(e);
    if (r) return r;
  }
  return NULL;
}

void tl_sema_let_pattern(sema *s, tl_node *p, tl_ty *t) {
  tl_node *r = refutable(p);
  if (r) {
    tl_sema_error(s, r, "`let` takes apart tuples only: this pattern may not match every value");
    tl_diag_hint(s->diag, "use `match` or `if let`");
    return;
  }
  bound b = {.n = 0};
  check_pat(s, p, t, &b);
}
