/* gen_match.c — code for enums and `match` (sema_enum.c and sema_match.c check them):
 * in: VARIANT and MATCH nodes, the enum structs; out: C. An enum value is a struct
 * object with a tag (gen.c makes its layout, drop and copy-on-write; the fields of the
 * variants it is not are NULL or 0, which the drop's releases skip). A match tests the
 * arms in order, each a C condition on the scrutinee's parts; the first that holds
 * binds its names (copies: retains) and gives the match its value. */
#include <stdlib.h>
#include <string.h>

#include "lang/gen/gen_impl.h"

/* `E::B(1, 2.0)`, `E::C { x: 1.0 }`, `E::A`: each field copied in, or moved on its last use */
cv tl_gen_variant(gen *g, tl_node *n) {
  const tl_variant_info *v = n->ref;
  const tl_struct_info *st = v->en;
  const char *vals[64];
  int idx[64], k = 0;
  for (tl_node *a = n->op == TL_TOK_EOF ? NULL : n->args; a && k < 64; a = a->next, k++) {
    bool named = a->kind == TL_N_FIELD_INIT;
    idx[k] = named ? (int)a->ival : v->first + k;
    vals[k] = tl_gen_take(g, tl_gen_expr(g, named ? a->lhs : a));
  }
  cv r = tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", st->cname, st->cname));
  tl_gen_emit(g, "%s->tag = %d;", r.c, v->tag);
  for (int i = 0; i < k; i++) tl_gen_emit(g, "%s->f_%s = %s;", r.c, st->fields[idx[i]].name, vals[i]);
  return r;
}

/* printing as Rust's Debug does: A, B(1, 2.0), C { x: 1.0 } */
void tl_gen_enum_fmt(gen *g, const tl_struct_info *st, tl_strbuf *out) {
  tl_strbuf_printf(out, "static void %s__fmt(tlrt *R, struct %s *p, bool dbg) {\n  (void)dbg;\n  switch (p->tag) {\n", st->cname, st->cname);
  tl_strbuf *saved = g->out;
  g->out = out;
  g->indent = 2;
  for (int t = 0; t < st->nvariants; t++) {
    const tl_variant_info *v = &st->variants[t];
    const char *head = tl_gen_fmt(g, "%s%s", v->name, v->named ? " { " : v->nfields ? "(" : "");
    tl_strbuf_printf(out, "  case %d:\n    tlrt_fmt_text(R, \"%s\", %zu);\n", t, head, strlen(head));
    for (int i = 0; i < v->nfields; i++) {
      const tl_field_info *f = &st->fields[v->first + i];
      const char *lead = v->named ? tl_gen_fmt(g, "%s%s: ", i ? ", " : "", f->name + strcspn(f->name, "_") + 1) : i ? ", " : "";
      if (*lead) tl_strbuf_printf(out, "    tlrt_fmt_text(R, \"%s\", %zu);\n", lead, strlen(lead));
      tl_gen_fmt_value(g, (cv){.c = tl_gen_fmt(g, "p->f_%s", f->name), .ty = f->ty, .temp = -1}, -1, NULL, "dbg");
    }
    const char *tail = v->named ? " }" : v->nfields ? ")" : "";
    if (*tail) tl_strbuf_printf(out, "    tlrt_fmt_text(R, \"%s\", %zu);\n", tail, strlen(tail));
    tl_strbuf_puts(out, "    break;\n");
  }
  g->out = saved;
  tl_strbuf_puts(out, "  }\n}\n\n");
}

/* ---- patterns ---- */

static const char *both(gen *g, const char *a, const char *b) {
  if (!strcmp(a, "1")) return b;
  if (!strcmp(b, "1")) return a;
  return tl_gen_fmt(g, "%s && %s", a, b);
}

/* the C text of a string literal's bytes, every one escaped: any content is safe C */
static const char *c_bytes(gen *g, const tl_node *n) {
  tl_strbuf b = {0};
  tl_strbuf_puts(&b, "\"");
  for (size_t i = 0; i < n->len; i++) tl_strbuf_printf(&b, "\\%03o", (unsigned char)n->str[i]);
  tl_strbuf_puts(&b, "\"");
  char *lit = tl_gen_take_text(g, &b);
  const char *r = tl_gen_fmt(g, "%s", lit ? lit : "\"\"");
  free(lit);
  return r;
}

/* the sub-patterns of a variant, tuple or struct pattern with the C paths of the parts
 * they match: a test of them all, or each one's names bound or assigned */
typedef enum { PAT_TEST, PAT_BIND, PAT_ASSIGN } pat_mode;
static const char *pat_test(gen *g, tl_node *p, const char *x);
static void pat_bind(gen *g, tl_node *p, const char *x);
static void pat_assign(gen *g, tl_node *p, const char *x);
static void declare_names(gen *g, tl_node *p);

static const char *parts(gen *g, tl_node *p, const char *x, pat_mode mode) {
  bool want_test = mode == PAT_TEST;
  const char *acc = "1";
  const tl_struct_info *st = p->ty->st;
  const tl_variant_info *v = p->kind == TL_N_TUPLE || p->kind == TL_N_STRUCT_LIT ? NULL : p->ref;
  if (p->kind == TL_N_STRUCT_LIT && p->ref) v = p->ref;
  int i = 0;
  for (tl_node *a = p->args; a; a = a->next, i++) {
    bool named = a->kind == TL_N_FIELD_INIT;
    const char *field = named ? st->fields[a->ival].name : v ? st->fields[v->first + i].name : tl_gen_fmt(g, "%d", i);
    const char *path = tl_gen_fmt(g, "%s->f_%s", x, field);
    tl_node *sub = named ? a->lhs : a;
    if (want_test) acc = both(g, acc, pat_test(g, sub, path));
    else if (mode == PAT_BIND) pat_bind(g, sub, path);
    else pat_assign(g, sub, path);
  }
  if (want_test && v) acc = both(g, tl_gen_fmt(g, "%s->tag == %d", x, v->tag), acc);
  return acc;
}

/* a C condition, without effects, that holds when x (a C expression of p's type) matches p */
static const char *pat_test(gen *g, tl_node *p, const char *x) {
  switch (p->kind) {
  case TL_N_IDENT: return "1";
  case TL_N_STR: return tl_gen_fmt(g, "tlrt_str_is(%s, %s, %zu)", x, c_bytes(g, p), p->len);
  case TL_N_INT: case TL_N_FLOAT: case TL_N_CHAR: case TL_N_BOOL: case TL_N_UNARY:
    return tl_gen_fmt(g, "(%s == %s)", x, tl_gen_expr(g, p).c);
  case TL_N_RANGE: return tl_gen_fmt(g, "(%s >= %s && %s <= %s)", x, tl_gen_expr(g, p->lhs).c, x, tl_gen_expr(g, p->rhs).c);
  case TL_N_BINARY: return tl_gen_fmt(g, "((%s) || (%s))", pat_test(g, p->lhs, x), pat_test(g, p->rhs, x));
  default: return tl_gen_fmt(g, "(%s)", parts(g, p, x, PAT_TEST));
  }
}

/* each name of p takes its part of x: a copy (retain) of a refcounted one, owned by
 * the new variable, dropped with the arm */
static void pat_bind(gen *g, tl_node *p, const char *x) {
  if (p->kind == TL_N_IDENT) {
    if (!p->var) return; /* `_` */
    const tl_ty *t = p->var->ty;
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, t), tl_gen_var_ref(g, p->var), tl_ty_is_refcounted(t) ? tl_gen_retain_expr(g, t, x) : x);
    tl_gen_add_local(g, p->var, p);
    return;
  }
  if (p->kind == TL_N_BINARY) { /* `p | q`: the names first, then whichever side matched gives them */
    declare_names(g, p->lhs);
    pat_assign(g, p, x);
    return;
  }
  if (p->kind == TL_N_TUPLE || p->kind == TL_N_CALL || p->kind == TL_N_STRUCT_LIT) parts(g, p, x, PAT_BIND);
}

/* the names of an alternative `p | q` (p's: q binds the same variables) declared empty,
 * owned by the arm */
static void declare_names(gen *g, tl_node *p) {
  if (p->kind == TL_N_IDENT && p->var) {
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, p->var->ty), tl_gen_var_ref(g, p->var), tl_ty_is_refcounted(p->var->ty) ? "NULL" : "0");
    tl_gen_add_local(g, p->var, p);
  } else if (p->kind == TL_N_BINARY) declare_names(g, p->lhs);
  else
    for (tl_node *a = p->kind == TL_N_IDENT ? NULL : p->args; a; a = a->next) declare_names(g, a->kind == TL_N_FIELD_INIT ? a->lhs : a);
}

/* as pat_bind, into the names declare_names made */
static void pat_assign(gen *g, tl_node *p, const char *x) {
  if (p->kind == TL_N_IDENT) {
    if (p->var) tl_gen_emit(g, "%s = %s;", tl_gen_var_ref(g, p->var), tl_ty_is_refcounted(p->var->ty) ? tl_gen_retain_expr(g, p->var->ty, x) : x);
    return;
  }
  if (p->kind == TL_N_BINARY) {
    tl_gen_emit(g, "if (%s) {", pat_test(g, p->lhs, x));
    g->indent++;
    pat_assign(g, p->lhs, x);
    g->indent--;
    tl_gen_emit(g, "} else {");
    g->indent++;
    pat_assign(g, p->rhs, x);
    g->indent--;
    tl_gen_emit(g, "}");
    return;
  }
  if (p->kind == TL_N_TUPLE || p->kind == TL_N_CALL || p->kind == TL_N_STRUCT_LIT) parts(g, p, x, PAT_ASSIGN);
}

/* ---- match ---- */

/* the scrutinee as a C expression valid through every arm: a variable is read in place;
 * any other refcounted value is held by a hidden local of the match (dropped at its
 * end, and by break, continue and return); a scalar is computed once */
static const char *scrutinee(gen *g, tl_node *e) {
  int mark = g->ntemps;
  cv v = tl_gen_expr(g, e);
  const char *x;
  if (tl_ty_is_refcounted(v.ty) && v.var) x = v.c;
  else if (tl_ty_is_refcounted(v.ty)) {
    tl_var *h = tl_arena_alloc(g->arena, sizeof *h);
    if (!h) {
      g->failed = true;
      return "0";
    }
    h->name = "match";
    h->ty = v.ty;
    h->id = 1000000 + ++g->ntmp; /* never a variable's own id: those count from 0 */
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, v.ty), tl_gen_var_ref(g, h), tl_gen_take(g, v));
    tl_gen_add_local(g, h, e);
    x = tl_gen_var_ref(g, h);
  } else x = tl_gen_new_temp(g, v.ty, v.c);
  tl_gen_release_temps(g, mark);
  return x;
}

/* one arm: its test, its names, its guard, its value into dst (NULL: none) */
static void gen_arm(gen *g, tl_node *arm, const char *x, const char *dst, const char *end) {
  tl_gen_emit(g, "if (%s) {", pat_test(g, arm->lhs, x));
  g->indent++;
  int locals = g->nlocals;
  pat_bind(g, arm->lhs, x);
  if (arm->cond) {
    int mark = g->ntemps;
    g->stmt = arm->cond;
    const char *c = tl_gen_new_temp(g, TY_BOOL_T, tl_gen_expr(g, arm->cond).c);
    tl_gen_release_temps(g, mark);
    tl_gen_emit(g, "if (%s) {", c);
    g->indent++;
  }
  if (arm->rhs) {
    int mark = g->ntemps;
    g->stmt = arm->rhs;
    tl_gen_line(g, arm->rhs);
    cv v = tl_gen_expr(g, arm->rhs);
    if (dst && arm->rhs->ty->kind != TY_UNIT) tl_gen_emit(g, "%s = %s;", dst, tl_gen_take(g, v));
    tl_gen_release_temps(g, mark);
  }
  for (int i = g->nlocals - 1; i >= locals; i--) /* the arm's names, on its way out */
    tl_gen_emit(g, "%s", tl_gen_release_call(g, g->locals[i]->ty, tl_gen_var_ref(g, g->locals[i])));
  tl_gen_emit(g, "goto %s;", end);
  if (arm->cond) { /* the guard failed: the names go, the next arm is tried */
    g->indent--;
    tl_gen_emit(g, "}");
    tl_gen_scope_end(g, locals);
  } else g->nlocals = locals;
  g->indent--;
  tl_gen_emit(g, "}");
}

cv tl_gen_match(gen *g, tl_node *n) {
  bool has_value = n->ty->kind != TY_UNIT && n->ty->kind != TY_ERROR;
  const char *dst = NULL, *end = tl_gen_fmt(g, "tl__m%d", ++g->ntmp);
  const tl_node *saved = g->stmt;
  if (has_value) {
    dst = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "%s %s%s;", tl_gen_ctype(g, n->ty), dst, tl_ty_is_refcounted(n->ty) ? " = NULL" : " = 0");
  }
  tl_gen_emit(g, "{");
  g->indent++;
  int locals = g->nlocals;
  const char *x = scrutinee(g, n->lhs);
  for (tl_node *arm = n->args; arm; arm = arm->next) gen_arm(g, arm, x, dst, end);
  if (!n->ival) /* the checker proved some arm matches; a guard's effects cannot undo that */
    tl_gen_emit(g, "tlrt_fail(R, %d, %d, \"no match arm matched\");", n->line, n->col);
  tl_gen_emit(g, "%s:;", end);
  tl_gen_scope_end(g, locals);
  g->indent--;
  tl_gen_emit(g, "}");
  g->stmt = saved;
  if (!has_value) return tl_gen_scalar("0", n->ty);
  if (!tl_ty_is_refcounted(n->ty)) return tl_gen_scalar(dst, n->ty);
  return tl_gen_adopt_temp(g, dst, n->ty);
}
