/* gen_sys.c — code for the system calls and String methods (sema_sys.c's table): one
 * call of the row's rt_sys.h function, R first, then the receiver, the arguments and,
 * when it can fail, the place. A String result is an owned temporary. */
#include <stdlib.h>

#include "lang/gen/gen_impl.h"

/* Ok(the call's value) or Err(*err), a new Result object (tags: Ok 0, Err 1) */
static cv result_of(gen *g, tl_ty *t, const char *call, const char *err) {
  const tl_struct_info *st = t->st;
  const char *v = tl_gen_new_temp(g, st->fields[0].ty, call); /* owned: moved into the Result */
  cv r = tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", st->cname, st->cname));
  tl_gen_emit(g, "if (%s) { %s->tag = 0; %s->f_%s = %s; %s = NULL; }", v, r.c, r.c, st->fields[0].name, v, v);
  tl_gen_emit(g, "else { %s->tag = 1; %s->f_%s = %s; }", r.c, r.c, st->fields[1].name, err);
  return r;
}

cv tl_gen_str_parse(gen *g, tl_node *n) {
  cv x = tl_gen_expr(g, n->lhs);
  tl_ty *t = n->ty, *v = t->st->fields[0].ty;
  static const char kinds[][2] = {{TY_I32, 'I'}, {TY_U8, 'u'},  {TY_F32, 'f'}, {TY_F64, 'd'}, {TY_BOOL, 'b'},
                                  {TY_I8, '1'},  {TY_I16, '2'}, {TY_U16, '3'}, {TY_U32, '4'}, {TY_U64, '5'},
                                  {TY_F16, 'h'}, {TY_BF16, 'g'}};
  char kind = 'i';
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (kinds[k][0] == (char)v->kind) kind = kinds[k][1];
  const char *i = tl_gen_fmt(g, "t%d", ++g->ntmp), *f = tl_gen_fmt(g, "t%d", ++g->ntmp), *err = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "int64_t %s = 0; double %s = 0; tlrt_str *%s = NULL;", i, f, err);
  const char *ok = tl_gen_new_temp(g, TY_BOOL_T, tl_gen_fmt(g, "tlrt_str_parse(R, %s, '%c', &%s, &%s, &%s)", x.c, kind, i, f, err));
  const tl_struct_info *st = t->st;
  cv r = tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", st->cname, st->cname));
  tl_gen_emit(g, "if (%s) { %s->tag = 0; %s->f_%s = (%s)%s; }", ok, r.c, r.c, st->fields[0].name, tl_gen_ctype(g, v),
              tl_ty_is_float(v) ? f : i);
  tl_gen_emit(g, "else { %s->tag = 1; %s->f_%s = %s; }", r.c, r.c, st->fields[1].name, err);
  return r;
}

cv tl_gen_sys_call(gen *g, tl_node *n) {
  const tl_sys_entry *e = n->sys;
  if (!e) {
    tl_gen_fail(g, n, "unknown system call");
    return tl_gen_scalar("0", n->ty);
  }
  if (e->kind == 'v') return tl_gen_temp_value(g, TY_STR_T, tl_gen_fmt(g, "tlrt_str_new(R, %s, -1)", e->cfn));
  tl_strbuf b = {0};
  tl_strbuf_printf(&b, "%s(R", e->cfn);
  if (e->kind == 'm') tl_strbuf_printf(&b, ", %s", tl_gen_expr(g, n->lhs).c);
  for (tl_node *a = n->args; a; a = a->next) tl_strbuf_printf(&b, ", %s", tl_gen_expr(g, a).c);
  const char *err = NULL;
  if (e->ret == 'R' || e->ret == 'T') { /* a Result: the value, or NULL and the error's String */
    err = tl_gen_fmt(g, "t%d", ++g->ntmp);
    tl_gen_emit(g, "tlrt_str *%s = NULL;", err);
    tl_strbuf_printf(&b, ", &%s", err);
  }
  if (e->loc) tl_strbuf_printf(&b, ", %d, %d", n->line, n->col);
  tl_strbuf_puts(&b, ")");
  char *call = tl_gen_take_text(g, &b);
  const char *c = tl_gen_fmt(g, "%s", call ? call : "0");
  free(call);
  if (err) return result_of(g, n->ty, c, err);
  if (e->ret == 'u') {
    tl_gen_emit(g, "%s;", c);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  return tl_gen_temp_value(g, n->ty, c);
}
