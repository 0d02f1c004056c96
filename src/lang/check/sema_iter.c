/* sema_iter.c — iterator chains, sorting with a comparator and Ordering in the checker
 * (LANGUAGE.md §11): in: the methods `v.iter()` (a Vec or a HashMap), the adapters map,
 * filter, enumerate, zip, rev, take, skip, the consumers collect, sum, count, fold, min,
 * max, any, all, `v.sort_by(f)`, `v.sort_by_key(f)`, `a.cmp(b)`, `x.partial_cmp(y)`,
 * `o.reverse()`; out: their types, each call marked B_ITER with node->len an IT_*.
 * An unconsumed chain has an iterator type: a struct with generic 'I' and its element
 * type in targs[0], never in the program's struct list (it has no run-time value: the
 * code generator turns a whole chain into one loop where it is consumed). So a chain
 * must be consumed where it is made; tl_sema_iter_check_consumed reports any other use. */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <string.h>


static tl_ty *iter_type(sema *s, tl_ty *elem) {
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  tl_ty *t = tl_arena_alloc(s->arena, sizeof *t);
  char *name = tl_arena_alloc(s->arena, 200), b[160];
  if (!st || !t || !name) return TY_ERR;
  snprintf(name, 200, "Iter<%s>", tl_ty_name(elem, b, sizeof b));
  *st = (tl_struct_info){.name = name, .cname = "tlrt_iter", .generic = 'I', .targs = {elem, NULL}};
  *t = (tl_ty){.kind = TY_STRUCT, .dtype = -1, .rank = -1, .st = st};
  return t;
}

/* ---- Ordering: a built-in `enum Ordering { Less, Equal, Greater }` ---- */

void tl_sema_iter_begin(sema *s) {
  if (tl_sema_find_struct(s, "Ordering")) return; /* the program's own Ordering wins */
  static const char *const names[] = {"Less", "Equal", "Greater"};
  tl_ast_item *it = tl_arena_alloc(s->arena, sizeof *it);
  tl_variant *v = tl_arena_alloc(s->arena, sizeof *v * 3);
  if (!it || !v) return;
  for (int i = 0; i < 3; i++) v[i] = (tl_variant){.name = names[i], .next = i < 2 ? &v[i + 1] : NULL};
  *it = (tl_ast_item){.kind = TL_ITEM_ENUM, .name = "Ordering", .variants = v};
  tl_sema_enum_declare(s, it, false);
  tl_sema_enum_fields(s, it);
}

static tl_ty *ordering(sema *s) {
  tl_struct_info *st = tl_sema_find_struct(s, "Ordering");
  return st && st->is_enum ? tl_sema_struct_ty(s, st) : TY_ERR;
}

/* ---- helpers ---- */

/* where an expression starts: a chain is reported at its source, as rustc does */
static const tl_node *start_of(const tl_node *n) {
  while (n->lhs && (n->kind == TL_N_METHOD || n->kind == TL_N_FIELD || n->kind == TL_N_INDEX || n->kind == TL_N_CALL))
    n = n->lhs;
  return n;
}

static tl_ty *mark(tl_node *n, int m, tl_ty *t) {
  n->ival = B_ITER;
  n->len = (size_t)m;
  return t;
}

/* totally ordered: what `cmp`, `min`, `max` and `sort_by_key` keys compare */
static bool ordered(const tl_ty *t) {
  return tl_ty_is_int(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR;
}
static bool orderable(const tl_ty *t) { return ordered(t) || tl_ty_is_float(t); }

static const char *const iter_methods =
    "map, filter, enumerate, zip, rev, take, skip, collect, sum, count, fold, reduce, min, max, any, all, position";

/* ---- Vec and HashMap: iter, sort_by, sort_by_key ---- */

static tl_ty *vec_method(sema *s, tl_node *n, tl_ty *t) {
  if (tl_ty_is_map(t) && t->st->flavor == 'S' && t->st->targs[0] && !strcmp(n->name, "iter"))
    t = tl_sema_set_elems(s, n->lhs, t); /* a HashSet's iter is over a copy of its elements */
  bool vec = tl_ty_is_vec(t);
  int m = !strcmp(n->name, "iter") ? IT_ITER : vec && !strcmp(n->name, "sort_by") ? IT_SORT_BY
        : vec && !strcmp(n->name, "sort_by_key") ? IT_SORT_BY_KEY : -1;
  if (m < 0) return NULL;
  if (!t->st->targs[0]) {
    tl_sema_error(s, n, "cannot infer the element type of this %s", vec ? "Vec" : "HashMap");
    tl_diag_hint(s->diag, "write its type: `let v: Vec<i64> = Vec::new();`");
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  tl_ty *e = t->st->targs[0];
  if (m == IT_ITER) {
    if (!tl_sema_arity(s, n, n->name, 0)) return TY_ERR;
    if (vec) return mark(n, m, iter_type(s, e));
    tl_ty *kv[2] = {e, t->st->targs[1]};
    return mark(n, m, iter_type(s, tl_sema_tuple_of(s, kv, 2)));
  }
  if (!tl_sema_arity(s, n, n->name, 1)) return TY_ERR;
  tl_sema_receiver_mut(s, n);
  if (m == IT_SORT_BY) {
    tl_ty *ps[2] = {e, e};
    tl_ty *f = tl_sema_closure_expect(s, n->args, ps, 2, ordering(s));
    return f->kind == TY_ERROR ? TY_ERR : mark(n, m, TY_UNIT_T);
  }
  tl_ty *f = tl_sema_closure_expect(s, n->args, &e, 1, NULL);
  if (f->kind == TY_ERROR) return TY_ERR;
  if (!orderable(f->fn_ret)) {
    char b[128];
    tl_sema_error(s, n->args, "`sort_by_key` compares keys of type %s, which have no order", tl_ty_name(f->fn_ret, b, sizeof b));
    tl_diag_hint(s->diag, "a key is a number, bool, char or String");
    return TY_ERR;
  }
  return mark(n, m, TY_UNIT_T);
}

/* ---- cmp, partial_cmp, Ordering::reverse ---- */

static tl_ty *scalar_method(sema *s, tl_node *n, tl_ty *t) {
  char b[128];
  bool cmp = !strcmp(n->name, "cmp"), pcmp = !strcmp(n->name, "partial_cmp");
  tl_ty *ord = ordering(s);
  if (!strcmp(n->name, "reverse") && t->kind == TY_STRUCT && ord->kind == TY_STRUCT && t->st == ord->st)
    return tl_sema_arity(s, n, n->name, 0) ? mark(n, IT_ORD_REVERSE, ord) : TY_ERR;
  if ((!cmp && !pcmp) || !orderable(t)) return NULL;
  if (!tl_sema_arity(s, n, n->name, 1)) return TY_ERR;
  if (cmp && tl_ty_is_float(t)) {
    tl_sema_error(s, n, "`cmp` is not defined on %s: floats are only partially ordered (NaN)", tl_ty_name(t, b, sizeof b));
    tl_diag_hint(s->diag, "use `a.partial_cmp(b).unwrap()`");
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  tl_ty *a = tl_sema_expr(s, n->args, t);
  if (a->kind == TY_ERROR) return TY_ERR;
  if (a->kind != t->kind) {
    tl_sema_mismatch(s, n->args, "mismatched types", t, a);
    return TY_ERR;
  }
  return mark(n, cmp ? IT_CMP : IT_PARTIAL_CMP, cmp ? ord : tl_sema_option_type(s, ord));
}

/* ---- adapters and consumers ---- */

/* the other side of zip: a Vec, or `w.iter()` on a Vec; its element type or NULL */
static tl_ty *zip_other(sema *s, tl_node *a) {
  tl_ty *t = tl_sema_expr(s, a, NULL);
  if (t->kind == TY_ERROR) return TY_ERR;
  if (tl_ty_is_vec(t) && t->st->targs[0]) return t->st->targs[0];
  if (tl_ty_is_iter(t) && a->kind == TL_N_METHOD && a->ival == B_ITER && a->len == IT_ITER && tl_ty_is_vec(a->lhs->ty))
    return t->st->targs[0];
  char b[128];
  tl_sema_error(s, start_of(a), "`zip` takes a Vec or `v.iter()` on a Vec, found %s", tl_ty_name(t, b, sizeof b));
  tl_diag_hint(s->diag, tl_ty_is_iter(t) ? "collect the other chain into a Vec first" : "zip with a Vec: `a.iter().zip(b.iter())`");
  return TY_ERR;
}

/* may rev() follow this chain (nothing in it that counts or pairs elements)? */
static bool rev_ok(const tl_node *r) {
  for (; r->kind == TL_N_METHOD && r->ival == B_ITER && r->len != IT_ITER; r = r->lhs)
    if (r->len != IT_MAP && r->len != IT_FILTER && r->len != IT_REV) return false;
  return true;
}

/* `.map(|a, b| ..)` over pairs: rustc's message and its fix, a tuple pattern */
static bool pair_arity(sema *s, tl_node *a, const tl_ty *e) {
  if (a->kind != TL_N_CLOSURE || !tl_ty_is_tuple(e) || tl_ast_count(a->args) != e->st->nfields) return false;
  tl_sema_error(s, a, "closure is expected to take 1 argument, but it takes %d arguments", e->st->nfields);
  tl_diag_hint(s->diag, "the iterator gives tuples: take one apart with a pattern, `|(%s)| ..`", e->st->nfields == 2 ? "a, b" : "a, b, ..");
  return true;
}

static const struct {
  const char *name;
  int id, nargs;
} iter_table[] = {
    {"map", IT_MAP, 1}, {"filter", IT_FILTER, 1}, {"enumerate", IT_ENUMERATE, 0}, {"zip", IT_ZIP, 1}, {"rev", IT_REV, 0},
    {"take", IT_TAKE, 1}, {"skip", IT_SKIP, 1}, {"collect", IT_COLLECT, 0}, {"sum", IT_SUM, 0}, {"count", IT_COUNT, 0},
    {"fold", IT_FOLD, 2}, {"min", IT_MIN, 0}, {"max", IT_MAX, 0}, {"any", IT_ANY, 1}, {"all", IT_ALL, 1},
    {"reduce", IT_REDUCE, 1}, {"position", IT_POSITION, 1},
};

static tl_ty *chain_method(sema *s, tl_node *n, tl_ty *t) {
  char b[128], c[128];
  tl_ty *e = t->st->targs[0];
  size_t i = 0, count = sizeof iter_table / sizeof iter_table[0];
  while (i < count && strcmp(iter_table[i].name, n->name)) i++;
  if (i == count) {
    tl_sema_error(s, n, "no method `%s` on iterator `%s`", n->name, tl_ty_name(t, b, sizeof b));
    tl_suggest g;
    tl_suggest_init(&g, n->name);
    for (i = 0; i < count; i++) tl_suggest_add(&g, iter_table[i].name);
    tl_suggest_hint(&g, s->diag, "");
    tl_diag_hint(s->diag, "the methods of an iterator are: %s", iter_methods);
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  int m = iter_table[i].id;
  if (!tl_sema_arity(s, n, n->name, iter_table[i].nargs)) return TY_ERR;
  if (e->kind == TY_ERROR) return TY_ERR; /* reported where it came from */
  tl_node *a = n->args;
  tl_ty *f;
  if ((m == IT_MAP || m == IT_FILTER || m == IT_ANY || m == IT_ALL || m == IT_POSITION) && pair_arity(s, a, e)) return TY_ERR;
  switch (m) {
  case IT_MAP:
    f = tl_sema_closure_expect(s, a, &e, 1, NULL);
    if (f->kind == TY_ERROR || f->fn_ret->kind == TY_ERROR) return TY_ERR;
    if (f->fn_ret->kind == TY_UNIT) {
      tl_sema_error(s, a, "the closure of `map` gives (): an iterator's element cannot be ()");
      tl_diag_hint(s->diag, "to run it for each element, use a `for` loop");
      return TY_ERR;
    }
    return mark(n, m, iter_type(s, f->fn_ret));
  case IT_FILTER: case IT_ANY: case IT_ALL: case IT_POSITION:
    f = tl_sema_closure_expect(s, a, &e, 1, TY_BOOL_T);
    if (f->kind == TY_ERROR) return TY_ERR;
    return mark(n, m, m == IT_FILTER ? t : m == IT_POSITION ? tl_sema_option_type(s, TY_I64_T) : TY_BOOL_T); /* position: the first match's index */
  case IT_ENUMERATE: {
    tl_ty *ie[2] = {TY_I64_T, e};
    return mark(n, m, iter_type(s, tl_sema_tuple_of(s, ie, 2)));
  }
  case IT_ZIP: {
    tl_ty *o = zip_other(s, a);
    if (o->kind == TY_ERROR) return TY_ERR;
    tl_ty *ab[2] = {e, o};
    return mark(n, m, iter_type(s, tl_sema_tuple_of(s, ab, 2)));
  }
  case IT_REV:
    if (!rev_ok(n->lhs)) {
      tl_sema_error(s, n, "`rev` must come before `enumerate`, `zip`, `take` and `skip` in a chain");
      tl_diag_hint(s->diag, "reverse first: `v.iter().rev().enumerate()`");
      return TY_ERR;
    }
    return mark(n, m, t);
  case IT_TAKE: case IT_SKIP: tl_sema_expect_i64(s, a, m == IT_TAKE ? "`take` count" : "`skip` count"); return mark(n, m, t);
  case IT_COLLECT: return mark(n, m, tl_sema_vec_type(s, e));
  case IT_COUNT: return mark(n, m, TY_I64_T);
  case IT_SUM:
    if (!tl_ty_is_numeric(e) || e->kind == TY_TENSOR) {
      tl_sema_error(s, n, "`sum` adds numbers, but this iterator gives %s", tl_ty_name(e, b, sizeof b));
      tl_diag_hint(s->diag, "map the elements to numbers first: `.map(|x| ..).sum()`, or use `fold`");
      return TY_ERR;
    }
    return mark(n, m, e);
  case IT_MIN: case IT_MAX:
    if (!orderable(e)) {
      tl_sema_error(s, n, "`%s` compares elements, but %s has no order", n->name, tl_ty_name(e, b, sizeof b));
      tl_diag_hint(s->diag, "map the elements to numbers, chars or Strings first: `.map(|x| ..).%s()`", n->name);
      return TY_ERR;
    }
    return mark(n, m, tl_sema_option_type(s, e));
  case IT_REDUCE: { /* reduce(|acc, x| ..): None when empty, else the first element folded with the rest */
    tl_ty *ps[2] = {e, e};
    f = tl_sema_closure_expect(s, a, ps, 2, e);
    return f->kind == TY_ERROR ? TY_ERR : mark(n, m, tl_sema_option_type(s, e));
  }
  default: { /* fold(init, |acc, x| ..) */
    /* a literal start takes a numeric element's type: `fold(0.0, ..)` over f64 */
    tl_ty *init = tl_ty_is_numeric(e) && e->kind != TY_TENSOR ? tl_sema_expr_hint(s, a, e) : tl_sema_expr(s, a, NULL);
    if (init->kind == TY_ERROR) {
      tl_sema_expr(s, a->next, NULL);
      return TY_ERR;
    }
    if (init->kind == TY_UNIT || init->kind == TY_RANGE || tl_ty_is_iter(init)) {
      tl_sema_error(s, a, "`fold` needs a starting value, found %s", tl_ty_name(init, c, sizeof c));
      return TY_ERR;
    }
    tl_ty *ps[2] = {init, e};
    f = tl_sema_closure_expect(s, a->next, ps, 2, init);
    return f->kind == TY_ERROR ? TY_ERR : mark(n, m, init);
  }
  }
}

/* `(a..b).map(..)`: a range is an iterator of i64, as in Rust. The range gets an
 * `iter` node of its own (the form every chain starts with: gen_iter.c loops over the
 * numbers); a method that is not an iterator's is no range method either (NULL) */
static tl_ty *range_method(sema *s, tl_node *n) {
  if (!strcmp(n->name, "iter")) return mark(n, IT_ITER, iter_type(s, TY_I64_T)); /* the node made below */
  size_t i = 0, count = sizeof iter_table / sizeof iter_table[0];
  while (i < count && strcmp(iter_table[i].name, n->name)) i++;
  if (i == count) return NULL;
  tl_node *r = n->lhs;
  if (r->kind != TL_N_RANGE || !r->lhs || !r->rhs) {
    tl_sema_error(s, r, "only a range with both bounds is an iterator: `(a..b).%s(..)`", n->name);
    for (tl_node *a = n->args; a; a = a->next) /* a closure's parameters would have been i64 */
      if (a->kind != TL_N_CLOSURE) tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  tl_node *it = tl_arena_alloc(s->arena, sizeof *it);
  if (!it) return TY_ERR;
  *it = (tl_node){.kind = TL_N_METHOD, .line = r->line, .col = r->col, .name = "iter", .lhs = r};
  n->lhs = it;
  it->ty = mark(it, IT_ITER, iter_type(s, TY_I64_T)); /* checked here, not by tl_sema_expr */
  return chain_method(s, n, it->ty);
}

/* `s.chars()`: the chain of s's chars. The node becomes `iter` over a node `$chars`
 * of its own (the String's chars as a Vec<char>, made once by the run time), the form
 * every chain starts with */
static tl_ty *str_method(sema *s, tl_node *n) {
  tl_ty *vec = tl_sema_vec_type(s, TY_CHAR_T);
  if (!strcmp(n->name, "$chars")) return mark(n, IT_STR_CHARS, vec); /* checked again */
  if (strcmp(n->name, "chars")) return NULL;
  if (!tl_sema_arity(s, n, n->name, 0)) return TY_ERR;
  tl_node *c = tl_arena_alloc(s->arena, sizeof *c);
  if (!c) return TY_ERR;
  *c = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "$chars", .lhs = n->lhs};
  c->ty = mark(c, IT_STR_CHARS, vec);
  n->lhs = c;
  n->name = "iter";
  return mark(n, IT_ITER, iter_type(s, TY_CHAR_T));
}

tl_ty *tl_sema_iter_method(sema *s, tl_node *n, tl_ty *t) {
  if (tl_ty_is_iter(t)) return chain_method(s, n, t);
  if (t->kind == TY_STR) {
    tl_ty *r = str_method(s, n);
    if (r) return r;
  }
  if (t->kind == TY_RANGE) return range_method(s, n);
  if (tl_ty_is_vec(t) || tl_ty_is_map(t)) return vec_method(s, n, t);
  return scalar_method(s, n, t);
}

/* `let m: HashMap<K, V> = pairs.collect();`: a chain of (K, V) tuples collected into a
 * map (a later pair's value replaces an earlier one's, as `insert` does) */
tl_ty *tl_sema_iter_collect_into(sema *s, tl_node *n, tl_ty *t, tl_ty *expect) {
  if (n->ival != B_ITER || n->len != IT_COLLECT || !tl_ty_is_map(expect) || !expect->st->targs[0]) return t;
  tl_ty *e = n->lhs->ty->st->targs[0];
  char a[128], b[128];
  if (!tl_ty_is_tuple(e) || e->st->nfields != 2 || !tl_sema_ty_fits(expect->st->targs[0], tl_ty_tuple_elem(e, 0)) ||
      !tl_sema_ty_fits(expect->st->targs[1], tl_ty_tuple_elem(e, 1))) {
    tl_sema_error(s, n, "a %s cannot be collected from an iterator of %s", tl_ty_name(expect, a, sizeof a), tl_ty_name(e, b, sizeof b));
    tl_diag_hint(s->diag, "collect (key, value) pairs: `.map(|x| (key, value)).collect()`");
    return TY_ERR;
  }
  return mark(n, IT_COLLECT_MAP, expect);
}

/* ---- an iterator must be consumed where it is made ---- */

/* the nodes where an iterator may be: a method's receiver, zip's argument, a `for`
 * head (both walks are tl_ast_find's, which needs no deep C stack for long chains) */
typedef struct {
  sema *s;
  tl_node **ok;
  int n, cap;
} consume_walk;

static bool allowed(tl_node *n, void *arg) {
  consume_walk *w = arg;
  if ((n->kind != TL_N_METHOD && n->kind != TL_N_FOR) || !n->lhs || !tl_ty_is_iter(n->lhs->ty)) return false;
  tl_node *add[2] = {n->lhs, n->kind == TL_N_METHOD && !strcmp(n->name, "zip") ? n->args : NULL};
  for (int i = 0; i < 2 && add[i]; i++) {
    if (w->n == w->cap) {
      int cap = w->cap ? w->cap * 2 : 16;
      tl_node **ok = tl_arena_alloc(w->s->arena, sizeof *ok * (size_t)cap);
      if (!ok) return false;
      if (w->n) memcpy(ok, w->ok, sizeof *ok * (size_t)w->n);
      w->ok = ok;
      w->cap = cap;
    }
    w->ok[w->n++] = add[i];
  }
  return false;
}

/* a chain (a method giving an iterator) anywhere else; a `let`, a block or an `if`
 * holding one is not reported again */
static bool unconsumed(tl_node *n, void *arg) {
  consume_walk *w = arg;
  if (n->kind != TL_N_METHOD || !tl_ty_is_iter(n->ty)) return false;
  for (int i = 0; i < w->n; i++)
    if (w->ok[i] == n) return false;
  char b[128];
  tl_sema_error(w->s, start_of(n), "this iterator `%s` is not consumed", tl_ty_name(n->ty, b, sizeof b));
  tl_diag_hint(w->s->diag, "an iterator must be consumed where it is made: end the chain with `collect()`, `sum()`, "
                           "`count()`, `fold(..)` or use it in a `for` loop");
  return false;
}

void tl_sema_iter_check_consumed(sema *s, tl_fninfo *f) {
  if (!f->fn->body) return;
  consume_walk w = {.s = s};
  tl_ast_find(f->fn->body, allowed, &w);
  tl_ast_find(f->fn->body, unconsumed, &w);
}
