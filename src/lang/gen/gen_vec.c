/* gen_vec.c — code for Vec<T> and HashMap<K, V> (sema_vec.c checks them): in: B_VEC calls,
 * `vec![..]`, `v[i]` reads and places, `for x in v`, `==`, and the Vec and HashMap structs;
 * out: C over rt_vec.h. Element i of a Vec is ((T *)v->data)[i]: a push is the inline
 * capacity check of tlrt_vec_push_slot, a read the inline bounds check of tlrt_vec_ix.
 * Every write goes through tlrt_vec_mut / tlrt_map_mut first (copy-on-write). An element
 * read is borrowed from its Vec (as a struct's field is); what leaves a Vec (pop, remove)
 * is moved out, what is copied out (get, a `for` variable) is retained. */
#include <string.h>

#include "lang/gen/gen_impl.h"

static int ekind(const tl_ty *t) { return t->kind == TY_TENSOR ? TLRT_EK_TENSOR : tl_ty_is_refcounted(t) ? TLRT_EK_OBJ : TLRT_EK_PLAIN; }
static const char *copy(gen *g, const tl_ty *t, const char *c) { return tl_ty_is_refcounted(t) ? tl_gen_retain_expr(g, t, c) : c; }
/* a value to store, computed now: a number's text may read the Vec (`v.push(v[0])`), and
 * the store's slot may move its buffer (C leaves their order open) */
static const char *value_now(gen *g, tl_node *a) {
  cv x = tl_gen_expr(g, a);
  const char *v = tl_gen_take(g, x);
  return tl_ty_is_refcounted(x.ty) ? v : tl_gen_new_temp(g, x.ty, v);
}
/* element i of the Vec at c (or the keys/values array of a map) */
static const char *elem(gen *g, const tl_ty *t, const char *arr, const char *i) {
  return tl_gen_fmt(g, "((%s *)%s)[%s]", tl_gen_ctype(g, t), arr, i);
}

const char *tl_gen_vec_ctype(const tl_ty *t) { return t->st->generic == 'V' ? "tlrt_vec *" : "tlrt_map *"; }

/* `a == b` for values of type t (a Vec whose has_eq is set: tl_sema_vec_eq_ok) */
static const char *eq_expr(gen *g, const tl_ty *t, const char *a, const char *b) {
  if (t->kind == TY_STR) return tl_gen_fmt(g, "tlrt_str_eq(%s, %s)", a, b);
  if (t->kind == TY_STRUCT) return tl_gen_fmt(g, "%s__eq(%s, %s)", t->st->cname, a, b);
  return tl_gen_fmt(g, "(%s == %s)", a, b);
}

/* a key's hash, from its lvalue */
static const char *hash_expr(gen *g, const tl_ty *t, const char *k) {
  if (t->kind == TY_STR) return tl_gen_fmt(g, "tlrt_hash_str(%s)", k);
  if (t->kind != TY_STRUCT) return tl_gen_fmt(g, "tlrt_hash_bytes(&%s, sizeof %s)", k, k);
  const char *h = "TL_HASH_INIT"; /* core/hash_mix.h, in the program's prelude */
  for (int i = 0; i < t->st->nfields; i++)
    h = tl_gen_fmt(g, "tl_hash_mix(%s, %s)", h, hash_expr(g, t->st->fields[i].ty, tl_gen_fmt(g, "%s->f_%s", k, t->st->fields[i].name)));
  return h;
}

void tl_gen_vec_declare(gen *g, const tl_struct_info *st, tl_strbuf *out) {
  const char *c = st->cname, *ct = st->generic == 'V' ? "tlrt_vec" : "tlrt_map";
  tl_strbuf_printf(out, "static void %s__fmt(tlrt *R, %s *p, bool dbg);\n", c, ct);
  if (st->has_eq)
    tl_strbuf_printf(out, "static bool %s__eq(tlrt_vec *a, tlrt_vec *b);\n", c);
  if (st->generic == 'M' && st->targs[0]) {
    tl_strbuf_printf(out, "static uint64_t %s__hash(const void *k);\n", c);
    tl_strbuf_printf(out, "static bool %s__keq(const void *a, const void *b);\n", c);
  }
  (void)g;
}

/* a value as Rust's Debug writes it (a Vec's elements under `{}` too): strings and
 * chars quoted and escaped, in structs inside it as well */
static void fmt_debug(gen *g, const tl_ty *t, const char *c) {
  tl_gen_fmt_value(g, (cv){.c = c, .ty = (tl_ty *)t, .temp = -1}, -1, NULL, "1");
}

/* the order of two keys (< 0, 0, > 0): numbers, bools, chars, Strings, and tuples of
 * them field by field (a BTreeMap's keys are HashMap keys, no floats among them) */
static const char *key_cmp(gen *g, const tl_ty *t, const char *a, const char *b) {
  if (t->kind == TY_STR) return tl_gen_fmt(g, "tlrt_str_cmp(%s, %s)", a, b);
  if (t->kind != TY_STRUCT) return tl_gen_fmt(g, "((%s > %s) - (%s < %s))", a, b, a, b);
  const char *r = "0";
  for (int i = t->st->nfields - 1; i >= 0; i--) {
    const char *f = t->st->fields[i].name;
    const char *c = key_cmp(g, t->st->fields[i].ty, tl_gen_fmt(g, "%s->f_%s", a, f), tl_gen_fmt(g, "%s->f_%s", b, f));
    r = i == t->st->nfields - 1 ? c : tl_gen_fmt(g, "(%s ? %s : %s)", c, c, r);
  }
  return r;
}

/* printing [1, 2, 3] and {"a": 1, "b": 2}; ==; a map's key hash and equality */
void tl_gen_vec_functions(gen *g, const tl_struct_info *st, tl_strbuf *out) {
  const char *c = st->cname;
  bool vec = st->generic == 'V';
  tl_ty *k = st->targs[0], *v = st->targs[1];
  tl_strbuf_printf(out, "static void %s__fmt(tlrt *R, %s *p, bool dbg) {\n  (void)dbg;\n", c, vec ? "tlrt_vec" : "tlrt_map");
  tl_strbuf *saved = g->out;
  g->out = out;
  g->indent = 1;
  tl_gen_emit(g, "tlrt_fmt_text(R, \"%s\", 1);", vec ? "[" : "{");
  if (k) {
    tl_gen_emit(g, "for (int64_t i = 0; i < p->len; i++) {");
    g->indent++;
    tl_gen_emit(g, "if (i) tlrt_fmt_text(R, \", \", 2);");
    fmt_debug(g, k, elem(g, k, vec ? "p->data" : "p->keys", "i"));
    if (!vec && st->flavor != 'S') { /* a HashSet prints its elements only: {1, 2} */
      tl_gen_emit(g, "tlrt_fmt_text(R, \": \", 2);");
      fmt_debug(g, v, elem(g, v, "p->vals", "i"));
    }
    g->indent--;
    tl_gen_emit(g, "}");
  }
  tl_gen_emit(g, "tlrt_fmt_text(R, \"%s\", 1);", vec ? "]" : "}");
  g->indent = 0;
  tl_gen_emit(g, "}");
  if (st->has_eq) {
    tl_gen_emit(g, "static bool %s__eq(tlrt_vec *a, tlrt_vec *b) {", c);
    g->indent = 1;
    tl_gen_emit(g, "if (a->len != b->len) return false;");
    tl_gen_emit(g, "for (int64_t i = 0; i < a->len; i++)");
    tl_gen_emit(g, "  if (!%s) return false;", eq_expr(g, k, elem(g, k, "a->data", "i"), elem(g, k, "b->data", "i")));
    tl_gen_emit(g, "return true;");
    g->indent = 0;
    tl_gen_emit(g, "}");
  }
  if (!vec && k && st->flavor == 'B') { /* a BTreeMap's key order */
    const char *kt = tl_gen_ctype(g, k);
    tl_gen_emit(g, "static int %s__kcmp(const void *a, const void *b) {", c);
    tl_gen_emit(g, "  %s x = *(%s const *)a;", kt, kt);
    tl_gen_emit(g, "  %s y = *(%s const *)b;", kt, kt);
    tl_gen_emit(g, "  return %s;", key_cmp(g, k, "x", "y"));
    tl_gen_emit(g, "}");
  }
  if (!vec && k) {
    const char *kt = tl_gen_ctype(g, k);
    tl_gen_emit(g, "static uint64_t %s__hash(const void *k) {", c);
    tl_gen_emit(g, "  %s x = *(%s const *)k;", kt, kt);
    tl_gen_emit(g, "  return %s;", hash_expr(g, k, "x"));
    tl_gen_emit(g, "}");
    tl_gen_emit(g, "static bool %s__keq(const void *a, const void *b) {", c);
    tl_gen_emit(g, "  %s x = *(%s const *)a;", kt, kt);
    tl_gen_emit(g, "  %s y = *(%s const *)b;", kt, kt);
    tl_gen_emit(g, "  return %s;", eq_expr(g, k, "x", "y"));
    tl_gen_emit(g, "}");
  }
  tl_strbuf_puts(out, "\n");
  g->out = saved;
}

/* a new empty Vec of type t, room for cap elements; what and at name the expression
 * in the error of a size that cannot be allocated */
static cv new_vec(gen *g, const tl_node *n, tl_ty *t, const char *cap, const char *what, const tl_node *at) {
  const tl_ty *e = t->st->targs[0];
  if (!e) {
    tl_gen_fail(g, n, "cannot infer the element type of this Vec: write it, `let v: Vec<i64> = ..`");
    return tl_gen_scalar("0", t);
  }
  return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_vec_new(R, sizeof(%s), %d, %s, \"%s\", %d, %d)", tl_gen_ctype(g, e), ekind(e), cap, what,
                                      at->line, at->col));
}

cv tl_gen_vec_lit(gen *g, tl_node *n) {
  tl_ty *t = n->ty, *e = t->st->targs[0];
  if (n->ival == 1) { /* vec![x; n]: n copies of x */
    cv x = tl_gen_expr(g, n->args), len = tl_gen_expr(g, n->args->next);
    const char *cnt = tl_gen_new_temp(g, TY_I64_T, len.c);
    cv v = new_vec(g, n, t, cnt, "vec![x; n]", n->args->next); /* a negative n is an error there */
    tl_gen_emit(g, "for (int64_t i = 0; i < %s; i++) %s = %s;", cnt, elem(g, e, tl_gen_fmt(g, "%s->data", v.c), "i"), copy(g, e, x.c));
    tl_gen_emit(g, "%s->len = %s;", v.c, cnt);
    return v;
  }
  cv v = new_vec(g, n, t, tl_gen_fmt(g, "%d", tl_ast_count(n->args)), "vec!", n);
  int i = 0;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    cv x = tl_gen_expr(g, a);
    tl_gen_emit(g, "%s = %s;", elem(g, e, tl_gen_fmt(g, "%s->data", v.c), tl_gen_fmt(g, "%d", i)), tl_gen_take(g, x));
  }
  tl_gen_emit(g, "%s->len = %d;", v.c, i);
  return v;
}

/* a place's C lvalue of a Vec or map receiver, made unique for a write */
static const char *mut_place(gen *g, tl_node *recv, bool vec) {
  const char *p = tl_gen_place(g, recv);
  tl_gen_emit(g, "%s = tlrt_%s_mut(R, %s, %d, %d);", p, vec ? "vec" : "map", p, recv->line, recv->col);
  return p;
}

/* a new Option<T> (None), an owned temporary */
static cv new_option(gen *g, tl_ty *t) {
  return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", t->st->cname, t->st->cname));
}
/* the option r made Some(val) */
static void set_some(gen *g, cv r, const char *val) {
  tl_gen_emit(g, "%s->tag = 1;", r.c);
  tl_gen_emit(g, "%s->f_%s = %s;", r.c, r.ty->st->fields[0].name, val);
}

/* a key in a C variable (its address goes to the run time), borrowed */
static const char *key_var(gen *g, tl_node *a, const tl_ty *k) {
  cv x = tl_gen_expr(g, a);
  const char *name = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, k), name, x.c);
  return name;
}

/* m[k] and the missing key's error: key not found in HashMap: "k" */
static const char *find_or_fail(gen *g, tl_node *n, const char *m, const tl_ty *k, const char *key) {
  const char *e = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "tlrt_map_find(%s, &%s)", m, key));
  tl_gen_emit(g, "if (%s < 0) {", e);
  g->indent++;
  tl_gen_emit(g, "tlrt_fmt_begin(R);");
  tl_gen_emit(g, "tlrt_fmt_text(R, \"key not found in HashMap: \", 26);");
  fmt_debug(g, k, key);
  tl_gen_emit(g, "tlrt_fail(R, %d, %d, \"%%s\", tlrt_fmt_take(R)->data);", n->line, n->col);
  g->indent--;
  tl_gen_emit(g, "}");
  return e;
}

cv tl_gen_vec_index(gen *g, tl_node *n) {
  cv x = tl_gen_expr(g, n->lhs);
  tl_ty *t = x.ty, *e = n->ty;
  if (tl_ty_is_map(t)) {
    const char *key = key_var(g, n->args, t->st->targs[0]);
    const char *i = find_or_fail(g, n, x.c, t->st->targs[0], key);
    return (cv){.c = elem(g, e, tl_gen_fmt(g, "%s->vals", x.c), i), .ty = e, .temp = -1};
  }
  cv i = tl_gen_expr(g, n->args);
  const char *ix = tl_gen_fmt(g, "tlrt_vec_ix(R, %s, %s, %d, %d)", x.c, i.c, n->line, n->col);
  if (tl_ty_is_refcounted(e)) ix = tl_gen_new_temp(g, TY_I64_T, ix); /* checked now: the read is borrowed text */
  return (cv){.c = elem(g, e, tl_gen_fmt(g, "%s->data", x.c), ix), .ty = e, .temp = -1};
}

const char *tl_gen_vec_place(gen *g, tl_node *n) {
  tl_ty *t = n->lhs->ty;
  if (tl_ty_is_map(t)) {
    tl_gen_fail(g, n, "cannot assign through `m[k]`: use `m.insert(k, v)`");
    return "";
  }
  cv i = tl_gen_expr(g, n->args);
  const char *ix = tl_gen_new_temp(g, TY_I64_T, i.c);
  const char *p = mut_place(g, n->lhs, true);
  return elem(g, n->ty, tl_gen_fmt(g, "%s->data", p), tl_gen_fmt(g, "tlrt_vec_ix(R, %s, %s, %d, %d)", p, ix, n->line, n->col));
}

/* the element's size is its C type's, a constant: the slot's address needs no multiply */
void tl_gen_vec_push(gen *g, const tl_ty *et, const char *vec, const tl_node *at, const char *val) {
  const char *ct = tl_gen_ctype(g, et);
  tl_gen_emit(g, "*(%s *)tlrt_vec_push_slot(R, %s, sizeof(%s), %d, %d) = %s;", ct, vec, ct, at->line, at->col, val);
}

static cv vec_method(gen *g, tl_node *n, int m) {
  tl_ty *t = n->lhs->ty, *e = t->st->targs[0], *r = n->ty;
  tl_node *a = n->args;
  switch (m) {
  case VEC_PUSH: {
    const char *val = value_now(g, a);
    const char *p = mut_place(g, n->lhs, true);
    tl_gen_vec_push(g, e, p, n, val);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_POP: {
    const char *p = mut_place(g, n->lhs, true);
    cv o = new_option(g, r);
    tl_gen_emit(g, "if (%s->len) {", p);
    g->indent++;
    set_some(g, o, elem(g, e, tl_gen_fmt(g, "%s->data", p), tl_gen_fmt(g, "--%s->len", p)));
    g->indent--;
    tl_gen_emit(g, "}");
    return o;
  }
  case VEC_SET: { /* v[i] = x: the old element released, out of range an error */
    cv i = tl_gen_expr(g, a);
    const char *ix = tl_gen_new_temp(g, TY_I64_T, i.c);
    const char *val = value_now(g, a->next);
    const char *p = mut_place(g, n->lhs, true);
    const char *slot = elem(g, e, tl_gen_fmt(g, "%s->data", p), tl_gen_fmt(g, "tlrt_vec_ix(R, %s, %s, %d, %d)", p, ix, n->line, n->col));
    const char *ptr = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s *%s = &%s;", tl_gen_ctype(g, e), ptr, slot);
    if (tl_ty_is_refcounted(e)) tl_gen_emit(g, "%s", tl_gen_release_call(g, e, tl_gen_fmt(g, "*%s", ptr)));
    tl_gen_emit(g, "*%s = %s;", ptr, val);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_PUSH_FRONT: { /* a VecDeque's, over a Vec: the elements move up one */
    const char *val = value_now(g, a);
    const char *p = mut_place(g, n->lhs, true);
    tl_gen_emit(g, "*(%s *)tlrt_vec_insert_at(R, %s, 0, %d, %d) = %s;", tl_gen_ctype(g, e), p, n->line, n->col, val);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_POP_FRONT: {
    const char *p = mut_place(g, n->lhs, true);
    cv o = new_option(g, r);
    const char *out = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "if (%s->len) {", p);
    g->indent++;
    tl_gen_emit(g, "%s %s;", tl_gen_ctype(g, e), out);
    tl_gen_emit(g, "tlrt_vec_remove_at(R, %s, 0, &%s, %d, %d);", p, out, n->line, n->col);
    set_some(g, o, out);
    g->indent--;
    tl_gen_emit(g, "}");
    return o;
  }
  case VEC_INSERT: {
    cv i = tl_gen_expr(g, a);
    const char *ix = tl_gen_new_temp(g, TY_I64_T, i.c);
    const char *val = value_now(g, a->next);
    const char *p = mut_place(g, n->lhs, true);
    tl_gen_emit(g, "*(%s *)tlrt_vec_insert_at(R, %s, %s, %d, %d) = %s;", tl_gen_ctype(g, e), p, ix, n->line, n->col, val);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_REMOVE: {
    cv i = tl_gen_expr(g, a);
    const char *ix = tl_gen_new_temp(g, TY_I64_T, i.c);
    const char *p = mut_place(g, n->lhs, true);
    const char *out = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s;", tl_gen_ctype(g, e), out);
    tl_gen_emit(g, "tlrt_vec_remove_at(R, %s, %s, &%s, %d, %d);", p, ix, out, n->line, n->col);
    return tl_ty_is_refcounted(e) ? tl_gen_adopt_temp(g, out, e) : tl_gen_scalar(out, e);
  }
  case VEC_EXTEND: { /* the other's elements copied; its length read first (`v.extend(v)`) */
    cv src = tl_gen_expr(g, a);
    const char *s = tl_gen_new_temp(g, t, tl_gen_take(g, src)); /* held: the write may replace a shared buffer */
    const char *p = mut_place(g, n->lhs, true);
    tl_gen_emit(g, "for (int64_t i = 0, k = %s->len; i < k; i++) {", s);
    g->indent++;
    const char *x = tl_gen_fmt(g, "t%d", ++g->ntmp); /* read before the slot: a push may move s's buffer when s is v */
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, e), x, copy(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", s), "i")));
    tl_gen_vec_push(g, e, p, n, x);
    g->indent--;
    tl_gen_emit(g, "}");
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_TRUNCATE: { /* Rust's: a length at or past len changes nothing */
    const char *k = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    const char *p = mut_place(g, n->lhs, true);
    tl_gen_emit(g, "if (%s < 0) tlrt_fail(R, %d, %d, \"truncate: negative length %%lld\", (long long)%s);", k, n->line, n->col, k);
    tl_gen_emit(g, "while (%s->len > %s) {", p, k);
    g->indent++;
    tl_gen_emit(g, "%s->len--;", p);
    if (tl_ty_is_refcounted(e)) tl_gen_emit(g, "%s", tl_gen_release_call(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", p), tl_gen_fmt(g, "%s->len", p))));
    g->indent--;
    tl_gen_emit(g, "}");
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_SWAP: {
    const char *i = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c), *j = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next).c);
    const char *p = mut_place(g, n->lhs, true);
    const char *x = elem(g, e, tl_gen_fmt(g, "%s->data", p), tl_gen_fmt(g, "tlrt_vec_ix(R, %s, %s, %d, %d)", p, i, n->line, n->col));
    const char *y = elem(g, e, tl_gen_fmt(g, "%s->data", p), tl_gen_fmt(g, "tlrt_vec_ix(R, %s, %s, %d, %d)", p, j, n->line, n->col));
    const char *tmp = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "{ %s %s = %s; %s = %s; %s = %s; }", tl_gen_ctype(g, e), tmp, x, x, y, y, tmp);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_RETAIN: { /* the closure sees each element (borrowed); the others are released */
    cv f = tl_gen_expr(g, a);
    const char *fn = tl_gen_new_temp(g, f.ty, tl_gen_take(g, f)); /* held: the Vec's write comes next */
    const char *p = mut_place(g, n->lhs, true);
    const char *w = tl_gen_new_temp(g, TY_I64_T, "0");
    const char *d = tl_gen_fmt(g, "%s->data", p), *x = elem(g, e, d, "i");
    tl_gen_emit(g, "for (int64_t i = 0; i < %s->len; i++) {", p);
    g->indent++;
    tl_gen_emit(g, "if (%s) %s = %s;", tl_gen_closure_call_expr(g, fn, &x, 1, f.ty), elem(g, e, d, tl_gen_fmt(g, "%s++", w)), x);
    if (tl_ty_is_refcounted(e)) tl_gen_emit(g, "else %s", tl_gen_release_call(g, e, x));
    g->indent--;
    tl_gen_emit(g, "}");
    tl_gen_emit(g, "%s->len = %s;", p, w);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_DEDUP: { /* consecutive equal elements: the first kept, the others released */
    const char *p = mut_place(g, n->lhs, true);
    const char *w = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "%s->len ? 1 : 0", p));
    const char *d = tl_gen_fmt(g, "%s->data", p);
    tl_gen_emit(g, "for (int64_t i = 1; i < %s->len; i++) {", p);
    g->indent++;
    tl_gen_emit(g, "if (%s) { %s }", eq_expr(g, e, elem(g, e, d, "i"), elem(g, e, d, tl_gen_fmt(g, "%s - 1", w))),
                tl_ty_is_refcounted(e) ? tl_gen_release_call(g, e, elem(g, e, d, "i")) : "");
    tl_gen_emit(g, "else %s = %s;", elem(g, e, d, tl_gen_fmt(g, "%s++", w)), elem(g, e, d, "i"));
    g->indent--;
    tl_gen_emit(g, "}");
    tl_gen_emit(g, "%s->len = %s;", p, w);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  case VEC_SORT: case VEC_REVERSE: case VEC_CLEAR: {
    const char *p = mut_place(g, n->lhs, true);
    static const char codes[][2] = {{TY_I64, 'i'}, {TY_I32, 'I'}, {TY_F32, 'f'}, {TY_F64, 'd'}, {TY_BOOL, 'b'},
                                    {TY_CHAR, 'c'}, {TY_STR, 's'}, {TY_U8, 'u'},  {TY_I8, '1'},  {TY_I16, '2'},
                                    {TY_U16, '3'},  {TY_U32, '4'}, {TY_U64, '5'}, {TY_F16, 'f'}, {TY_BF16, 'f'}};
    char code = 's';
    for (int i = 0; i < (int)(sizeof codes / sizeof codes[0]); i++)
      if (codes[i][0] == (char)e->kind) code = codes[i][1];
    if (m == VEC_SORT) tl_gen_emit(g, "tlrt_vec_sort(R, %s, '%c');", p, code);
    else if (m == VEC_REVERSE) tl_gen_emit(g, "tlrt_vec_reverse(%s);", p);
    else tl_gen_emit(g, "tlrt_vec_clear(R, %s);", p);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  default: break;
  }
  cv x = tl_gen_expr(g, n->lhs);
  switch (m) {
  case VEC_GET: case VEC_FIRST: case VEC_LAST: { /* Some(a copy of the element), None out of range */
    const char *i = m == VEC_FIRST ? "0" : m == VEC_LAST ? tl_gen_fmt(g, "%s->len - 1", x.c) : tl_gen_expr(g, a).c;
    const char *ix = tl_gen_new_temp(g, TY_I64_T, i);
    cv o = new_option(g, r);
    tl_gen_emit(g, "if (%s >= 0 && %s < %s->len) {", ix, ix, x.c);
    g->indent++;
    set_some(g, o, copy(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", x.c), ix)));
    g->indent--;
    tl_gen_emit(g, "}");
    return o;
  }
  case VEC_LEN: return tl_gen_scalar(tl_gen_fmt(g, "(%s)->len", x.c), TY_I64_T);
  case VEC_CAPACITY: return tl_gen_scalar(tl_gen_fmt(g, "(%s)->cap", x.c), TY_I64_T); /* at least len, as Rust's */
  case VEC_IS_EMPTY: return tl_gen_scalar(tl_gen_fmt(g, "((%s)->len == 0)", x.c), TY_BOOL_T);
  case VEC_JOIN: return tl_gen_temp_value(g, TY_STR_T, tl_gen_fmt(g, "tlrt_vec_join(R, %s, %s, %d, %d)", x.c, tl_gen_expr(g, a).c, n->line, n->col));
  case VEC_SLICE: { /* the seed language's v.slice(start, end): clamped to 0..len, a copy */
    const char *lo = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c), *hi = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next).c);
    tl_gen_emit(g, "if (%s < 0) %s = 0; if (%s > %s->len) %s = %s->len; if (%s < %s) %s = %s;", lo, lo, hi, x.c, hi, x.c, hi, lo, hi, lo);
    cv v = new_vec(g, n, t, tl_gen_fmt(g, "%s - %s", hi, lo), "slice", n);
    tl_gen_emit(g, "for (int64_t i = %s; i < %s; i++) %s = %s;", lo, hi, elem(g, e, tl_gen_fmt(g, "%s->data", v.c), tl_gen_fmt(g, "i - %s", lo)),
                copy(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", x.c), "i")));
    tl_gen_emit(g, "%s->len = %s - %s;", v.c, hi, lo);
    return v;
  }
  case VEC_RANGE: { /* v[a..b], Rust's bounds: 0 <= a <= b <= len, else an error */
    tl_node *rg = a;
    const char *lo = tl_gen_new_temp(g, TY_I64_T, rg->lhs ? tl_gen_expr(g, rg->lhs).c : "0");
    const char *hi = tl_gen_new_temp(g, TY_I64_T, rg->rhs ? tl_gen_expr(g, rg->rhs).c : tl_gen_fmt(g, "%s->len", x.c));
    tl_gen_emit(g, "if (%s < 0 || %s > %s || %s > %s->len) tlrt_fail(R, %d, %d, \"range %%lld..%%lld is out of bounds for a Vec of length %%lld\", "
                   "(long long)%s, (long long)%s, (long long)%s->len);", lo, lo, hi, hi, x.c, n->line, n->col, lo, hi, x.c);
    cv v = new_vec(g, n, t, tl_gen_fmt(g, "%s - %s", hi, lo), "slice", n);
    tl_gen_emit(g, "for (int64_t i = %s; i < %s; i++) %s = %s;", lo, hi, elem(g, e, tl_gen_fmt(g, "%s->data", v.c), tl_gen_fmt(g, "i - %s", lo)),
                copy(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", x.c), "i")));
    tl_gen_emit(g, "%s->len = %s - %s;", v.c, hi, lo);
    return v;
  }
  case VEC_INDEX_OF: { /* the seed language's: the first equal element's index, or -1 */
    cv y = tl_gen_expr(g, a);
    const char *res = tl_gen_new_temp(g, TY_I64_T, "-1");
    tl_gen_emit(g, "for (int64_t i = 0; i < %s->len; i++)", x.c);
    tl_gen_emit(g, "  if (%s) { %s = i; break; }", eq_expr(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", x.c), "i"), y.c), res);
    return tl_gen_scalar(res, TY_I64_T);
  }
  default: { /* contains */
    cv y = tl_gen_expr(g, a);
    const char *res = tl_gen_new_temp(g, TY_BOOL_T, "false");
    tl_gen_emit(g, "for (int64_t i = 0; i < %s->len; i++)", x.c);
    tl_gen_emit(g, "  if (%s) { %s = true; break; }", eq_expr(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", x.c), "i"), y.c), res);
    return tl_gen_scalar(res, TY_BOOL_T);
  }
  }
}

static cv map_method(gen *g, tl_node *n, int m) {
  tl_ty *t = n->lhs->ty, *k = t->st->targs[0], *v = t->st->targs[1], *r = n->ty;
  tl_node *a = n->args;
  if (m == MAP_CLEAR) {
    tl_gen_emit(g, "tlrt_map_clear(R, %s);", mut_place(g, n->lhs, false));
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  if (m == SET_INSERT || m == SET_REMOVE) { /* true when the element was new / was there */
    const char *key = tl_gen_fmt(g, "t%d", ++g->ntmp);
    if (m == SET_INSERT) tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, k), key, tl_gen_take(g, tl_gen_expr(g, a)));
    else key = key_var(g, a, k);
    const char *p = mut_place(g, n->lhs, false);
    const char *e = tl_gen_fmt(g, "t%d", ++g->ntmp), *res = tl_gen_new_temp(g, TY_BOOL_T, "false");
    if (m == SET_INSERT) {
      const char *found = tl_gen_fmt(g, "t%d", ++g->ntmp);
      tl_gen_emit(g, "bool %s;", found);
      tl_gen_emit(g, "int64_t %s = tlrt_map_slot(R, %s, &%s, &%s, %d, %d);", e, p, key, found, n->line, n->col);
      tl_gen_emit(g, "if (%s) { %s }", found, tl_ty_is_refcounted(k) ? tl_gen_release_call(g, k, key) : ""); /* the old one stays */
      tl_gen_emit(g, "else { %s = true; %s = true; }", elem(g, v, tl_gen_fmt(g, "%s->vals", p), e), res);
      return tl_gen_scalar(res, TY_BOOL_T);
    }
    tl_gen_emit(g, "int64_t %s = tlrt_map_find(%s, &%s);", e, p, key);
    tl_gen_emit(g, "if (%s >= 0) {", e);
    g->indent++;
    if (tl_ty_is_refcounted(k)) tl_gen_emit(g, "%s", tl_gen_release_call(g, k, elem(g, k, tl_gen_fmt(g, "%s->keys", p), e)));
    tl_gen_emit(g, "tlrt_map_remove_at(R, %s, %s);", p, e);
    tl_gen_emit(g, "%s = true;", res);
    g->indent--;
    tl_gen_emit(g, "}");
    return tl_gen_scalar(res, TY_BOOL_T);
  }
  if (m == MAP_INSERT || m == MAP_REMOVE) {
    const char *key;
    if (m == MAP_INSERT) {
      key = tl_gen_fmt(g, "t%d", ++g->ntmp);
      tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, k), key, tl_gen_take(g, tl_gen_expr(g, a)));
    } else key = key_var(g, a, k);
    const char *val = m == MAP_INSERT ? value_now(g, a->next) : NULL;
    const char *p = mut_place(g, n->lhs, false);
    cv o = new_option(g, r);
    const char *e = tl_gen_fmt(g, "t%d", ++g->ntmp);
    if (m == MAP_INSERT) {
      const char *found = tl_gen_fmt(g, "t%d", ++g->ntmp);
      tl_gen_emit(g, "bool %s;", found);
      tl_gen_emit(g, "int64_t %s = tlrt_map_slot(R, %s, &%s, &%s, %d, %d);", e, p, key, found, n->line, n->col);
      tl_gen_emit(g, "if (%s) {", found); /* the old key stays, as Rust keeps it */
      g->indent++;
      set_some(g, o, elem(g, v, tl_gen_fmt(g, "%s->vals", p), e));
      if (tl_ty_is_refcounted(k)) tl_gen_emit(g, "%s", tl_gen_release_call(g, k, key));
      g->indent--;
      tl_gen_emit(g, "}");
      tl_gen_emit(g, "%s = %s;", elem(g, v, tl_gen_fmt(g, "%s->vals", p), e), val);
      if (t->st->flavor == 'B') tl_gen_emit(g, "if (!%s) tlrt_map_place_sorted(R, %s, %s, %s__kcmp);", found, p, e, t->st->cname);
      return o;
    }
    tl_gen_emit(g, "int64_t %s = tlrt_map_find(%s, &%s);", e, p, key);
    tl_gen_emit(g, "if (%s >= 0) {", e);
    g->indent++;
    set_some(g, o, elem(g, v, tl_gen_fmt(g, "%s->vals", p), e));
    if (tl_ty_is_refcounted(k)) tl_gen_emit(g, "%s", tl_gen_release_call(g, k, elem(g, k, tl_gen_fmt(g, "%s->keys", p), e)));
    tl_gen_emit(g, "tlrt_map_remove_at(R, %s, %s);", p, e);
    g->indent--;
    tl_gen_emit(g, "}");
    return o;
  }
  cv x = tl_gen_expr(g, n->lhs);
  switch (m) {
  case MAP_LEN: return tl_gen_scalar(tl_gen_fmt(g, "(%s)->len", x.c), TY_I64_T);
  case MAP_IS_EMPTY: return tl_gen_scalar(tl_gen_fmt(g, "((%s)->len == 0)", x.c), TY_BOOL_T);
  case MAP_GET: case MAP_CONTAINS_KEY: {
    const char *key = key_var(g, a, k);
    const char *e = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "tlrt_map_find(%s, &%s)", x.c, key));
    if (m == MAP_CONTAINS_KEY) return tl_gen_scalar(tl_gen_fmt(g, "(%s >= 0)", e), TY_BOOL_T);
    cv o = new_option(g, r);
    tl_gen_emit(g, "if (%s >= 0) {", e);
    g->indent++;
    set_some(g, o, copy(g, v, elem(g, v, tl_gen_fmt(g, "%s->vals", x.c), e)));
    g->indent--;
    tl_gen_emit(g, "}");
    return o;
  }
  default: { /* keys, values: a new Vec, each element a copy */
    tl_ty *el = m == MAP_KEYS ? k : v;
    cv out = new_vec(g, n, r, tl_gen_fmt(g, "%s->len", x.c), m == MAP_KEYS ? "keys" : "values", n);
    tl_gen_emit(g, "for (int64_t i = 0; i < %s->len; i++) %s = %s;", x.c, elem(g, el, tl_gen_fmt(g, "%s->data", out.c), "i"),
             copy(g, el, elem(g, el, tl_gen_fmt(g, "%s->%s", x.c, m == MAP_KEYS ? "keys" : "vals"), "i")));
    tl_gen_emit(g, "%s->len = %s->len;", out.c, x.c);
    return out;
  }
  }
}

cv tl_gen_vec_call(gen *g, tl_node *n) {
  int m = (int)n->len;
  tl_ty *r = n->ty;
  switch (m) {
  case VEC_NEW: return new_vec(g, n, r, "0", "Vec::new", n);
  case VEC_WITH_CAPACITY: {
    cv c = tl_gen_expr(g, n->args);
    const char *cap = tl_gen_new_temp(g, TY_I64_T, c.c);
    return new_vec(g, n, r, cap, "Vec::with_capacity", n->args);
  }
  case MAP_NEW: {
    tl_ty *k = r->st->targs[0], *v = r->st->targs[1];
    if (!k) {
      tl_gen_fail(g, n, "cannot infer the key and value types of this HashMap: write them, `let m: HashMap<String, i64> = ..`");
      return tl_gen_scalar("0", r);
    }
    return tl_gen_temp_value(g, r, tl_gen_fmt(g, "tlrt_map_new(R, sizeof(%s), %d, sizeof(%s), %d, %s__hash, %s__keq)", tl_gen_ctype(g, k),
                                        ekind(k), tl_gen_ctype(g, v), ekind(v), r->st->cname, r->st->cname));
  }
  case VEC_TO_TENSOR: {
    cv x = tl_gen_expr(g, n->kind == TL_N_CALL ? n->args : n->lhs);
    const char *flat = tl_gen_fmt(g, "tlrt_vec_to_tensor(R, %s, %d, %d, %d)", x.c, r->dtype, n->line, n->col);
    if (n->kind != TL_N_CALL || !n->args->next) return tl_gen_temp_value(g, r, flat);
    cv t = tl_gen_temp_value(g, r, flat); /* from_vec(values, shape): its rank is r's */
    const char *shape = tl_gen_shape_arg(g, n->args->next, r);
    return tl_gen_temp_value(g, r, tl_gen_fmt(g, "tlrt_reshape(R, %s, %s, %d, %d)", t.c, shape, n->line, n->col));
  }
  case VEC_FROM_TENSOR: {
    cv x = tl_gen_expr(g, n->lhs);
    return tl_gen_temp_value(g, r, tl_gen_fmt(g, "tlrt_tensor_to_vec(R, %s, %d, %d)", x.c, n->line, n->col));
  }
  default: return tl_ty_is_vec(n->lhs->ty) ? vec_method(g, n, m) : map_method(g, n, m);
  }
}

/* `for x in v`: over the Vec as it was when the loop began (the loop holds a reference,
 * so writes to v in the body copy it first); x is a copy of each element, an owned
 * local of the turn. `for (k, v) in m`: x is a (key, value) tuple, taken apart by the
 * `let` the parser put first in the body. */
void tl_gen_vec_for(gen *g, tl_node *n) {
  tl_node *h = n->lhs;
  tl_var *x = n->var;
  tl_ty *t = h->ty;
  tl_gen_emit(g, "{");
  g->indent++;
  int mark = g->ntemps;
  cv src = tl_gen_expr(g, h);
  const char *s = tl_gen_new_temp(g, t, tl_gen_take(g, src));
  g->temps[g->ntemps - 1].taken = false; /* the loop's own reference, released after it */
  const char *i = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "for (int64_t %s = 0; %s < %s->len; %s++) {", i, i, s, i);
  g->indent++;
  if (tl_ty_is_vec(t)) {
    tl_ty *e = t->st->targs[0];
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, x->ty), tl_gen_var_ref(g, x), copy(g, e, elem(g, e, tl_gen_fmt(g, "%s->data", s), i)));
  } else {
    const tl_struct_info *st = x->ty->st;
    tl_ty *k = t->st->targs[0], *v = t->st->targs[1];
    tl_gen_emit(g, "struct %s *%s = tlrt_obj_new(R, sizeof(struct %s), %s__drop);", st->cname, tl_gen_var_ref(g, x), st->cname, st->cname);
    tl_gen_emit(g, "%s->f_0 = %s;", tl_gen_var_ref(g, x), copy(g, k, elem(g, k, tl_gen_fmt(g, "%s->keys", s), i)));
    tl_gen_emit(g, "%s->f_1 = %s;", tl_gen_var_ref(g, x), copy(g, v, elem(g, v, tl_gen_fmt(g, "%s->vals", s), i)));
  }
  tl_gen_loop_body(g, n, n->body, tl_ty_is_refcounted(x->ty) ? x : NULL);
  g->indent--;
  tl_gen_emit(g, "}");
  tl_gen_release_temps(g, mark);
  g->indent--;
  tl_gen_emit(g, "}");
}

cv tl_gen_vec_eq(gen *g, tl_node *n, cv a, cv b) {
  return tl_gen_scalar(tl_gen_fmt(g, "(%s%s__eq(%s, %s))", n->op == TL_TOK_NE ? "!" : "", a.ty->st->cname, a.c, b.c), TY_BOOL_T);
}
