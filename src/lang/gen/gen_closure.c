/* gen_closure.c — code for closures and function values (sema_closure.c checks them):
 * in: CLOSURE nodes, IDENT nodes naming a function as a value, B_FNVAL calls; out: C.
 * A value of fn type is a refcounted `tlrt_fnobj` (rt.h) whose fn is a C function
 * taking the object, then the arguments, borrowed as a user function's are. A closure
 * is `struct tlc_N { tlrt_fnobj base; captures c0, c1... }` with its function tlcf_N,
 * which reads its captures as borrowed variables; the captures are copies (retains)
 * or moves made where the closure is built, released by the object's drop when its
 * last reference goes. A named function f as a value is an object without captures
 * whose fn is a wrapper tlw_f calling tlf_f. */
#include <stdlib.h>
#include <string.h>

#include "lang/gen/gen_impl.h"

struct gen_wrapped {
  const tl_fninfo *f;
  struct gen_wrapped *next;
};

/* ---- calls ---- */

const char *tl_gen_closure_call_expr(gen *g, const char *fn_c, const char *const *args, int nargs, const tl_ty *fty) {
  tl_strbuf sig = {0}, call = {0};
  tl_strbuf_printf(&sig, "%s (*)(tlrt_fnobj *", tl_gen_ret_ctype(g, fty->fn_ret));
  for (int i = 0; i < fty->fn_nparams; i++) tl_strbuf_printf(&sig, ", %s", tl_gen_ctype(g, fty->fn_params[i]));
  tl_strbuf_puts(&sig, ")");
  for (int i = 0; i < nargs; i++) tl_strbuf_printf(&call, ", %s", args[i]);
  char *sig_c = tl_gen_take_text(g, &sig), *call_c = tl_gen_take_text(g, &call);
  const char *r = tl_gen_fmt(g, "((%s)(%s)->fn)(%s%s)", sig_c ? sig_c : "", fn_c, fn_c, call_c ? call_c : "");
  free(sig_c);
  free(call_c);
  return r;
}

/* `f(3)`: the callee's value and the arguments (borrowed), the call, then the
 * temporaries (a closure made for this call, `make(2)(5)`) released after it */
cv tl_gen_fnval_call(gen *g, tl_node *n) {
  int mark = g->ntemps;
  const tl_ty *fty = n->lhs->ty;
  cv f = tl_gen_expr(g, n->lhs);
  const char *fc = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "tlrt_fnobj *%s = %s;", fc, f.c);
  const char *args[64];
  int k = 0;
  for (tl_node *a = n->args; a && k < 64; a = a->next) args[k++] = tl_gen_expr(g, a).c;
  const char *call = tl_gen_closure_call_expr(g, fc, args, k, fty);
  tl_ty *ret = fty->fn_ret;
  if (ret->kind == TY_UNIT) {
    tl_gen_emit(g, "%s;", call);
    tl_gen_release_temps(g, mark);
    return tl_gen_scalar("0", ret);
  }
  const char *name = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, ret), name, call);
  tl_gen_release_temps(g, mark);
  return tl_ty_is_refcounted(ret) ? tl_gen_adopt_temp(g, name, ret) : tl_gen_scalar(name, ret);
}

/* ---- named functions as values ---- */

static void wrapper(gen *g, const tl_fninfo *f) {
  for (struct gen_wrapped *w = g->wrapped; w; w = w->next)
    if (w->f == f) return;
  struct gen_wrapped *w = tl_arena_alloc(g->arena, sizeof *w);
  if (!w) {
    tl_gen_fail(g, NULL, "out of memory");
    return;
  }
  *w = (struct gen_wrapped){f, g->wrapped};
  g->wrapped = w;
  tl_strbuf *b = g->side;
  tl_strbuf_printf(b, "static %s tlw_%s(tlrt_fnobj *tl__self", tl_gen_ret_ctype(g, f->ret), f->cname + 4);
  for (int i = 0; i < f->nparams; i++) tl_strbuf_printf(b, ", %s a%d", tl_gen_ctype(g, f->params[i]->ty), i);
  tl_strbuf_printf(b, ") {\n  (void)tl__self;\n  %s%s(", f->ret->kind == TY_UNIT ? "" : "return ", f->cname);
  for (int i = 0; i < f->nparams; i++) {
    const tl_var *p = f->params[i];
    const char *a = tl_gen_fmt(g, "a%d", i); /* a `mut x: T` parameter is the callee's own: a copy */
    if (p->kind == VAR_PARAM_OWNED && tl_ty_is_refcounted(p->ty)) a = tl_gen_retain_expr(g, p->ty, a);
    tl_strbuf_printf(b, "%s%s", i ? ", " : "", a);
  }
  tl_strbuf_puts(b, ");\n}\n\n");
}

cv tl_gen_fn_value(gen *g, tl_node *n) {
  const tl_fninfo *f = n->ref;
  wrapper(g, f);
  cv r = tl_gen_temp_value(g, n->ty, "tlrt_obj_new(R, sizeof(tlrt_fnobj), NULL)");
  tl_gen_emit(g, "%s->fn = (void *)tlw_%s;", r.c, f->cname + 4);
  return r;
}

/* ---- closures ---- */

/* the environment struct, its drop, and the closure's function, into g->side; the
 * function is generated with a fresh emitter state, the enclosing one kept aside */
static void closure_function(gen *g, const tl_closure_info *info, int id) {
  gen *saved = malloc(sizeof *g);
  if (!saved) {
    tl_gen_fail(g, NULL, "out of memory");
    return;
  }
  memcpy(saved, g, sizeof *g);
  tl_strbuf def = {0}, body = {0};
  tl_strbuf_printf(&def, "struct tlc_%d {\n  tlrt_fnobj base;\n", id);
  int i = 0;
  for (const tl_capture *k = info->caps; k; k = k->next, i++)
    tl_strbuf_printf(&def, "  %s c%d;\n", tl_gen_ctype(g, k->inner->ty), i);
  tl_strbuf_printf(&def, "};\nstatic void tlc_%d__drop(tlrt *R, tlrt_obj *o) {\n  struct tlc_%d *p = (void *)o;\n", id, id);
  i = 0;
  for (const tl_capture *k = info->caps; k; k = k->next, i++)
    if (tl_ty_is_refcounted(k->inner->ty)) tl_strbuf_printf(&def, "  %s\n", tl_gen_release_call(g, k->inner->ty, tl_gen_fmt(g, "p->c%d", i)));
  tl_strbuf_puts(&def, "  (void)p; (void)R;\n}\n");
  const tl_fninfo *f = info->fn;
  g->out = &body;
  g->fn = f;
  g->ntmp = 0;
  g->ntemps = g->nlocals = g->nloops = 0;
  g->stmt = NULL;
  g->in_compr = false;
  tl_strbuf_printf(&body, "static %s tlcf_%d(tlrt_fnobj *tl__self", tl_gen_ret_ctype(g, f->ret), id);
  for (int j = 0; j < f->nparams; j++)
    tl_strbuf_printf(&body, ", %s %s", tl_gen_ctype(g, f->params[j]->ty), tl_gen_var_ref(g, f->params[j]));
  tl_strbuf_puts(&body, ") {\n");
  g->indent = 1;
  tl_gen_emit(g, "struct tlc_%d *tl__env = (void *)tl__self;", id);
  tl_gen_emit(g, "(void)tl__env;");
  i = 0;
  for (const tl_capture *k = info->caps; k; k = k->next, i++) /* borrowed from the environment */
    tl_gen_emit(g, "%s %s = tl__env->c%d;", tl_gen_ctype(g, k->inner->ty), tl_gen_var_ref(g, k->inner), i);
  tl_gen_function_body(g, f);
  tl_strbuf_puts(&body, "}\n\n");
  /* back to the enclosing function; what this one added for the whole program stays */
  bool failed = g->failed;
  char error[sizeof g->error];
  memcpy(error, g->error, sizeof error);
  int nclosures = g->nclosures;
  struct gen_wrapped *wrapped = g->wrapped;
  memcpy(g, saved, sizeof *g);
  free(saved);
  g->failed = failed;
  memcpy(g->error, error, sizeof error);
  g->nclosures = nclosures;
  g->wrapped = wrapped;
  char *a = tl_gen_take_text(g, &def), *b = tl_gen_take_text(g, &body);
  if (a) tl_strbuf_puts(g->side, a);
  if (b) tl_strbuf_puts(g->side, b);
  free(a);
  free(b);
}

cv tl_gen_closure(gen *g, tl_node *n) {
  const tl_closure_info *info = n->ref;
  int id = ++g->nclosures;
  const char **vals = tl_arena_alloc(g->arena, sizeof *vals * (size_t)(info->ncaps ? info->ncaps : 1));
  if (!vals) {
    tl_gen_fail(g, n, "out of memory");
    return tl_gen_scalar("0", n->ty);
  }
  int i = 0;
  for (const tl_capture *k = info->caps; k; k = k->next, i++)
    vals[i] = tl_gen_take(g, tl_gen_expr(g, k->read)); /* a copy, or a move at the variable's last use */
  cv r = tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct tlc_%d), tlc_%d__drop)", id, id));
  tl_gen_emit(g, "%s->fn = (void *)tlcf_%d;", r.c, id);
  for (int j = 0; j < i; j++) tl_gen_emit(g, "((struct tlc_%d *)%s)->c%d = %s;", id, r.c, j, vals[j]);
  closure_function(g, info, id);
  return r;
}
