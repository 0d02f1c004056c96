/* gen_tuple.c — code for tuples (sema_tuple.c checks them): in: TUPLE nodes, `let`
 * patterns and the tuple structs; out: C. A tuple is a struct object (gen.c makes its
 * layout, drop and copy-on-write), so only its making, its destructuring, its printing
 * `(1, 2.5)` and its `==` are here. */
#include <string.h>

#include "lang/gen/gen_impl.h"

/* `(a, b)`: each element copied in, or moved on its last use, as a struct literal's
 * fields; `()` is unit, no value */
cv tl_gen_tuple(gen *g, tl_node *n) {
  if (!n->args) return tl_gen_scalar("0", n->ty);
  const tl_struct_info *st = n->ty->st;
  const char *vals[64];
  int k = 0;
  for (tl_node *a = n->args; a && k < 64; a = a->next) vals[k++] = tl_gen_take(g, tl_gen_expr(g, a));
  cv r = tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", st->cname, st->cname));
  for (int i = 0; i < k; i++) tl_gen_emit(g, "%s->f_%d = %s;", r.c, i, vals[i]);
  return r;
}

/* each name of pattern p takes its element of the tuple at C expression `path`
 * (borrowed): a copy (retain) of a refcounted one, owned by the new variable */
static void bind(gen *g, tl_node *p, const char *path) {
  if (p->kind == TL_N_TUPLE) {
    int i = 0;
    for (tl_node *e = p->args; e; e = e->next, i++) bind(g, e, tl_gen_fmt(g, "%s->f_%d", path, i));
    return;
  }
  if (!p->var) return; /* `_` */
  const tl_ty *t = p->var->ty;
  const char *val = tl_ty_is_refcounted(t) ? tl_gen_retain_expr(g, t, path) : path;
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, t), tl_gen_var_ref(g, p->var), val);
  tl_gen_add_local(g, p->var, p);
}

/* `let (a, b) = t;`: the elements are copied out, then a tuple the statement owns (a
 * temporary, or t at its last use: a move) is released at once, so each element is
 * left with the one reference its variable holds; a tuple still in use stays shared */
void tl_gen_tuple_let(gen *g, tl_node *n) {
  cv v = tl_gen_expr(g, n->rhs);
  bool own = v.temp >= 0 || tl_gen_moves(g, v);
  const char *src = v.c;
  if (own) {
    src = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, v.ty), src, tl_gen_take(g, v));
  }
  bind(g, n->lhs, src);
  if (own) tl_gen_emit(g, "%s", tl_gen_release_call(g, v.ty, src));
}

/* as sema_tuple.c's rule: numbers, bools, chars, strings and tuples of them */
static bool comparable(const tl_struct_info *st) {
  for (int i = 0; i < st->nfields; i++) {
    const tl_ty *t = st->fields[i].ty;
    if (t->kind == TY_TENSOR || (t->kind == TY_STRUCT && (!t->st->is_tuple || !comparable(t->st)))) return false;
  }
  return true;
}

void tl_gen_tuple_declare(const tl_struct_info *st, tl_strbuf *out) {
  if (comparable(st)) tl_strbuf_printf(out, "static bool %s__eq(struct %s *a, struct %s *b);\n", st->cname, st->cname, st->cname);
}

/* a == b, element by element: C's == on numbers (NaN != NaN, as Rust), the bytes of strings */
static void gen_eq(const tl_struct_info *st, tl_strbuf *out) {
  tl_strbuf_printf(out, "static bool %s__eq(struct %s *a, struct %s *b) {\n  return true", st->cname, st->cname, st->cname);
  for (int i = 0; i < st->nfields; i++) {
    const tl_ty *t = st->fields[i].ty;
    if (t->kind == TY_STR) tl_strbuf_printf(out, " && tlrt_str_eq(a->f_%d, b->f_%d)", i, i);
    else if (t->kind == TY_STRUCT) tl_strbuf_printf(out, " && %s__eq(a->f_%d, b->f_%d)", t->st->cname, i, i);
    else tl_strbuf_printf(out, " && a->f_%d == b->f_%d", i, i);
  }
  tl_strbuf_puts(out, ";\n}\n");
}

/* printing as Rust does: (1, 2.5), and (7,) for one element */
void tl_gen_tuple_functions(gen *g, const tl_struct_info *st, tl_strbuf *out) {
  tl_strbuf_printf(out, "static void %s__fmt(tlrt *R, struct %s *p, bool dbg) {\n  (void)dbg;\n  tlrt_fmt_text(R, \"(\", 1);\n", st->cname, st->cname);
  tl_strbuf *saved = g->out;
  g->out = out;
  g->indent = 1;
  for (int i = 0; i < st->nfields; i++) {
    if (i) tl_strbuf_puts(out, "  tlrt_fmt_text(R, \", \", 2);\n");
    tl_gen_fmt_value(g, (cv){.c = tl_gen_fmt(g, "p->f_%d", i), .ty = st->fields[i].ty, .temp = -1}, -1, NULL, "dbg");
  }
  g->out = saved;
  tl_strbuf_puts(out, st->nfields == 1 ? "  tlrt_fmt_text(R, \",)\", 2);\n}\n" : "  tlrt_fmt_text(R, \")\", 1);\n}\n");
  if (comparable(st)) gen_eq(st, out);
  tl_strbuf_puts(out, "\n");
}

/* does a value of type t hold a tensor (depth: struct nesting looked through so far;
 * a struct may reach itself through a tuple field) */
static bool holds_tensor(const tl_ty *t, int depth) {
  if (t->kind == TY_TENSOR) return true;
  if (t->kind != TY_STRUCT || depth > 8) return false;
  for (int i = 0; i < t->st->nfields; i++)
    if (holds_tensor(t->st->fields[i].ty, depth + 1)) return true;
  return false;
}

void tl_gen_realize_value(gen *g, const tl_ty *t, const char *c, const tl_node *loop, int depth) {
  if (t->kind == TY_TENSOR) {
    tl_gen_emit(g, "tlrt_realize(R, %s, %d, %d);", c, loop->line, loop->col);
    return;
  }
  if (tl_ty_is_vec(t) && t->st->targs[0] && t->st->targs[0]->kind == TY_TENSOR) { /* each element (gen_vec.c) */
    tl_gen_emit(g, "for (int64_t i = 0; %s && i < %s->len; i++) tlrt_realize(R, ((tl_tensor **)%s->data)[i], %d, %d);", c, c, c,
             loop->line, loop->col);
    return;
  }
  if (!holds_tensor(t, depth)) return;
  tl_gen_emit(g, "if (%s) {", c); /* NULL: moved out in this turn */
  g->indent++;
  for (int i = 0; i < t->st->nfields; i++)
    tl_gen_realize_value(g, t->st->fields[i].ty, tl_gen_fmt(g, "%s->f_%s", c, t->st->fields[i].name), loop, depth + 1);
  g->indent--;
  tl_gen_emit(g, "}");
}
