/* gen_option.c — code for Option<T> and Result<T, E> (sema_option.c checks them): in:
 * B_OPTION method calls, TRY nodes (`x?`) and the Option and Result enum structs; out: C.
 * Their values, patterns, copies and drops are the enums' (gen_match.c, gen.c). The tags
 * are Rust's order: None 0, Some 1; Ok 0, Err 1. A payload taken out of a value is a
 * copy (a retain), so the value itself, borrowed or a temporary, is left as it was. */
#include <string.h>

#include "lang/gen/gen_impl.h"

/* the tag of the variant that holds the value: Some or Ok */
static int ok_tag(const tl_struct_info *st) { return st->generic == 'O' ? 1 : 0; }

/* the C path of field i (0: the value, 1: a Result's error) of the object at c */
static const char *field(gen *g, const tl_struct_info *st, const char *c, int i) {
  return tl_gen_fmt(g, "%s->f_%s", c, st->fields[i].name);
}

/* a copy of c of type t: a retain when it is refcounted */
static const char *copy(gen *g, const tl_ty *t, const char *c) { return tl_ty_is_refcounted(t) ? tl_gen_retain_expr(g, t, c) : c; }

/* a payload as Rust's Debug writes it (under `{}` too): strings and chars quoted and
 * escaped, in structs inside it as well */
static void fmt_payload(gen *g, tl_ty *t, const char *c) { tl_gen_fmt_value(g, (cv){.c = c, .ty = t, .temp = -1}, -1, NULL, "1"); }

void tl_gen_option_fmt(gen *g, const tl_struct_info *st, tl_strbuf *out) {
  tl_strbuf_printf(out, "static void %s__fmt(tlrt *R, struct %s *p, bool dbg) {\n  (void)dbg;\n", st->cname, st->cname);
  tl_strbuf *saved = g->out;
  g->out = out;
  g->indent = 1;
  for (int t = 0; t < 2; t++) {
    const tl_variant_info *v = &st->variants[t];
    size_t len = strlen(v->name) + (v->nfields ? 1 : 0);
    tl_gen_emit(g, "%sif (p->tag == %d) {", t ? "else " : "", t);
    g->indent++;
    tl_gen_emit(g, "tlrt_fmt_text(R, \"%s%s\", %zu);", v->name, v->nfields ? "(" : "", len);
    if (v->nfields) {
      fmt_payload(g, st->fields[v->first].ty, tl_gen_fmt(g, "p->f_%s", st->fields[v->first].name));
      tl_gen_emit(g, "tlrt_fmt_text(R, \")\", 1);");
    }
    g->indent--;
    tl_gen_emit(g, "}");
  }
  g->out = saved;
  tl_strbuf_puts(out, "}\n\n");
}

/* the run-time error of unwrap or expect on None or Err(e): msg (a String, NULL for
 * unwrap's own words), then for an Err its error as Debug writes it */
static void fail(gen *g, tl_node *n, const tl_struct_info *st, const char *x, const char *msg) {
  tl_gen_emit(g, "if (%s->tag != %d) {", x, ok_tag(st));
  g->indent++;
  tl_gen_emit(g, "tlrt_fmt_begin(R);");
  if (msg) tl_gen_emit(g, "tlrt_fmt_str(R, %s);", msg);
  else if (st->generic == 'O') tl_gen_emit(g, "tlrt_fmt_text(R, \"called unwrap on None\", 21);");
  else tl_gen_emit(g, "tlrt_fmt_text(R, \"called unwrap on an Err value\", 29);");
  if (st->generic == 'R') {
    tl_gen_emit(g, "tlrt_fmt_text(R, \": \", 2);");
    fmt_payload(g, st->fields[1].ty, field(g, st, x, 1));
  }
  /* the message lives until the run ends: an error frees every object left */
  tl_gen_emit(g, "tlrt_fail(R, %d, %d, \"%%s\", tlrt_fmt_take(R)->data);", n->line, n->col);
  g->indent--;
  tl_gen_emit(g, "}");
}

/* unwrap_err, expect_err on Ok(v): the run-time error names v as Debug writes it */
static void fail_ok(gen *g, tl_node *n, const tl_struct_info *st, const char *x, const char *msg) {
  tl_gen_emit(g, "if (%s->tag == 0) {", x);
  g->indent++;
  tl_gen_emit(g, "tlrt_fmt_begin(R);");
  if (msg) tl_gen_emit(g, "tlrt_fmt_str(R, %s);", msg);
  else tl_gen_emit(g, "tlrt_fmt_text(R, \"called unwrap_err on an Ok value\", 32);");
  tl_gen_emit(g, "tlrt_fmt_text(R, \": \", 2);");
  fmt_payload(g, st->fields[0].ty, field(g, st, x, 0));
  tl_gen_emit(g, "tlrt_fail(R, %d, %d, \"%%s\", tlrt_fmt_take(R)->data);", n->line, n->col);
  g->indent--;
  tl_gen_emit(g, "}");
}

/* unwrap_or_else(f): the value copied, or f() (Option) / f(e) (Result), f's result owned */
static cv unwrap_or_else(gen *g, tl_node *n, const tl_struct_info *st, const char *x) {
  cv f = tl_gen_expr(g, n->args);
  tl_ty *t = n->ty;
  const char *e = field(g, st, x, 1);
  const char *r = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s;", tl_gen_ctype(g, t), r);
  tl_gen_emit(g, "if (%s->tag == %d) %s = %s;", x, ok_tag(st), r, copy(g, t, field(g, st, x, 0)));
  tl_gen_emit(g, "else %s = %s;", r, tl_gen_closure_call_expr(g, f.c, &e, st->generic == 'R' ? 1 : 0, f.ty));
  return tl_ty_is_refcounted(t) ? tl_gen_adopt_temp(g, r, t) : tl_gen_scalar(r, t);
}

/* a new Option or Result object of type t (its fields NULL or 0), an owned temporary */
static cv make(gen *g, tl_ty *t) {
  return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", t->st->cname, t->st->cname));
}

/* ok(), err(), ok_or(e): one side's value moved into a new enum of the other kind */
static cv convert(gen *g, tl_node *n, const tl_struct_info *st, const char *x, int m) {
  cv e = m == OPT_OK_OR ? tl_gen_expr(g, n->args) : tl_gen_scalar("0", TY_UNIT_T);
  cv r = make(g, n->ty);
  const tl_struct_info *rs = n->ty->st;
  int from = m == OPT_ERR ? 1 : 0; /* the field carried over when the tag says so */
  int when = m == OPT_ERR ? 1 : ok_tag(st);
  tl_gen_emit(g, "if (%s->tag == %d) {", x, when);
  g->indent++;
  tl_gen_emit(g, "%s->tag = %d;", r.c, ok_tag(rs));
  tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 0), copy(g, st->fields[from].ty, field(g, st, x, from)));
  g->indent--;
  tl_gen_emit(g, "} else {");
  g->indent++;
  tl_gen_emit(g, "%s->tag = %d;", r.c, 1 - ok_tag(rs));
  if (m == OPT_OK_OR) tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 1), copy(g, e.ty, e.c));
  g->indent--;
  tl_gen_emit(g, "}");
  return r;
}

/* map(f): Some(f(v)) / Ok(f(v)) (f's result is the new object's own), None, or Err(e copied) */
static cv map(gen *g, tl_node *n, const tl_struct_info *st, const char *x) {
  cv f = tl_gen_expr(g, n->args);
  cv r = make(g, n->ty);
  const tl_struct_info *rs = n->ty->st;
  const char *v = field(g, st, x, 0);
  tl_gen_emit(g, "if (%s->tag == %d) {", x, ok_tag(st));
  g->indent++;
  tl_gen_emit(g, "%s->tag = %d;", r.c, ok_tag(rs));
  tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 0), tl_gen_closure_call_expr(g, f.c, &v, 1, f.ty));
  g->indent--;
  tl_gen_emit(g, "} else {");
  g->indent++;
  tl_gen_emit(g, "%s->tag = %d;", r.c, 1 - ok_tag(rs));
  if (st->generic == 'R') tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 1), copy(g, st->fields[1].ty, field(g, st, x, 1)));
  g->indent--;
  tl_gen_emit(g, "}");
  return r;
}

/* and_then(f): f(v) itself, or None / Err(e copied); map_err(f): Ok(v copied) or Err(f(e)) */
static cv and_then_or_map_err(gen *g, tl_node *n, const tl_struct_info *st, const char *x, bool and_then) {
  cv f = tl_gen_expr(g, n->args);
  cv r = make(g, n->ty);
  const tl_struct_info *rs = n->ty->st;
  const char *v = field(g, st, x, and_then ? 0 : 1);
  tl_gen_emit(g, "if (%s->tag %s %d) {", x, and_then ? "==" : "!=", ok_tag(st));
  g->indent++;
  if (and_then) { /* the closure's object replaces the one made */
    tl_gen_emit(g, "tlrt_release(R, %s);", r.c);
    tl_gen_emit(g, "%s = %s;", r.c, tl_gen_closure_call_expr(g, f.c, &v, 1, f.ty));
  } else {
    tl_gen_emit(g, "%s->tag = %d;", r.c, 1 - ok_tag(rs));
    tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 1), tl_gen_closure_call_expr(g, f.c, &v, 1, f.ty));
  }
  g->indent--;
  tl_gen_emit(g, "} else {");
  g->indent++;
  if (and_then) {
    tl_gen_emit(g, "%s->tag = %d;", r.c, 1 - ok_tag(rs));
    if (st->generic == 'R') tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 1), copy(g, st->fields[1].ty, field(g, st, x, 1)));
  } else {
    tl_gen_emit(g, "%s->tag = %d;", r.c, ok_tag(rs));
    tl_gen_emit(g, "%s = %s;", field(g, rs, r.c, 0), copy(g, st->fields[0].ty, field(g, st, x, 0)));
  }
  g->indent--;
  tl_gen_emit(g, "}");
  return r;
}

cv tl_gen_option_method(gen *g, tl_node *n) {
  cv x = tl_gen_expr(g, n->lhs);
  const tl_struct_info *st = x.ty->st;
  int m = (int)n->len;
  tl_ty *t = n->ty;
  switch (m) {
  case OPT_IS_SOME: case OPT_IS_OK:
    return tl_gen_scalar(tl_gen_new_temp(g, TY_BOOL_T, tl_gen_fmt(g, "(%s->tag == %d)", x.c, ok_tag(st))), TY_BOOL_T);
  case OPT_IS_NONE: case OPT_IS_ERR:
    return tl_gen_scalar(tl_gen_new_temp(g, TY_BOOL_T, tl_gen_fmt(g, "(%s->tag != %d)", x.c, ok_tag(st))), TY_BOOL_T);
  case OPT_UNWRAP: case OPT_EXPECT: {
    const char *msg = m == OPT_EXPECT ? tl_gen_expr(g, n->args).c : NULL;
    fail(g, n, st, x.c, msg);
    const char *v = copy(g, t, field(g, st, x.c, 0));
    return tl_ty_is_refcounted(t) ? tl_gen_temp_value(g, t, v) : tl_gen_scalar(tl_gen_new_temp(g, t, v), t);
  }
  case OPT_UNWRAP_OR: {
    cv d = tl_gen_expr(g, n->args); /* evaluated either way, as Rust's argument is */
    const char *v = tl_gen_fmt(g, "%s->tag == %d ? %s : %s", x.c, ok_tag(st), copy(g, t, field(g, st, x.c, 0)), copy(g, t, d.c));
    return tl_ty_is_refcounted(t) ? tl_gen_temp_value(g, t, v) : tl_gen_scalar(tl_gen_new_temp(g, t, v), t);
  }
  case OPT_UNWRAP_ERR: case OPT_EXPECT_ERR: {
    fail_ok(g, n, st, x.c, m == OPT_EXPECT_ERR ? tl_gen_expr(g, n->args).c : NULL);
    const char *v = copy(g, t, field(g, st, x.c, 1));
    return tl_ty_is_refcounted(t) ? tl_gen_temp_value(g, t, v) : tl_gen_scalar(tl_gen_new_temp(g, t, v), t);
  }
  case OPT_UNWRAP_OR_ELSE: return unwrap_or_else(g, n, st, x.c);
  case OPT_MAP: return map(g, n, st, x.c);
  case OPT_AND_THEN: case OPT_MAP_ERR: return and_then_or_map_err(g, n, st, x.c, m == OPT_AND_THEN);
  default: return convert(g, n, st, x.c, m);
  }
}

/* `x?`: the value inside, or the function returns None, or Err(e) with x's error */
cv tl_gen_option_try(gen *g, tl_node *n) {
  cv v = tl_gen_expr(g, n->lhs);
  const tl_struct_info *st = v.ty->st, *rs = g->fn->ret->st;
  const char *h = tl_gen_fmt(g, "t%d", ++g->ntmp); /* x, owned here: released on both paths */
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, v.ty), h, tl_gen_take(g, v));
  tl_gen_emit(g, "if (%s->tag != %d) {", h, ok_tag(st));
  g->indent++;
  const char *r = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s = tlrt_obj_new(R, sizeof(struct %s), %s__drop);", tl_gen_ctype(g, g->fn->ret), r, rs->cname, rs->cname);
  tl_gen_emit(g, "%s->tag = %d;", r, 1 - ok_tag(rs));
  if (rs->generic == 'R') tl_gen_emit(g, "%s = %s;", field(g, rs, r, 1), copy(g, st->fields[1].ty, field(g, st, h, 1)));
  tl_gen_emit(g, "%s", tl_gen_release_call(g, v.ty, h));
  tl_gen_return_value(g, r);
  g->indent--;
  tl_gen_emit(g, "}");
  tl_ty *t = n->ty;
  const char *val = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, t), val, copy(g, t, field(g, st, h, 0)));
  tl_gen_emit(g, "%s", tl_gen_release_call(g, v.ty, h));
  return tl_ty_is_refcounted(t) ? tl_gen_adopt_temp(g, val, t) : tl_gen_scalar(val, t);
}
