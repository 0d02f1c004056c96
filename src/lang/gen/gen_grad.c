/* gen_grad.c — element reads that keep their gradient (sema_grad.c says which). A
 * number read from tensor elements (`w[0] * 10.0`, TL_GRAD_ELEM) that meets a tensor in
 * arithmetic is computed here as a 0-d tensor: the read a view of the tensor
 * (tlrt_index), the arithmetic tensor operations, so autograd records it as PyTorch
 * does for `w[0]`. Everywhere else it stays the number it was (printing, comparing,
 * indexing). A variable that holds such a number and meets a tensor keeps a 0-d tensor
 * beside it (its `shadow`), and its number is read from that tensor, so the value is
 * computed once. Where such a number goes into a plain one that meets a tensor
 * elsewhere (a parameter, a result, a field, a tensor's element), the gradient cannot
 * follow: tlrt_grad_lost says so at run time when the tensor requires grad. */
#include <stdlib.h>
#include <string.h>

#include "lang/gen/gen_impl.h"

static tl_ty t0_f32 = {.kind = TY_TENSOR, .dtype = TL_F32, .rank = 0},
             t0_f64 = {.kind = TY_TENSOR, .dtype = TL_F64, .rank = 0};

/* the 0-d tensor type of a float scalar type */
static tl_ty *t0_of(const tl_ty *t) { return t->kind == TY_F64 ? &t0_f64 : &t0_f32; }

bool tl_gen_grad_elem(const tl_node *n) { return n && (n->grad & TL_GRAD_ELEM) && n->ty && tl_ty_is_float(n->ty); }

static const char *loc(gen *g, const tl_node *n) { return tl_gen_fmt(g, "%d, %d", n->line, n->col); }

static bool is_literal(const tl_node *n) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) n = n->lhs;
  return n->kind == TL_N_INT || n->kind == TL_N_FLOAT;
}

cv tl_gen_grad_operand(gen *g, tl_node *x, bool meets) {
  return meets && tl_gen_grad_elem(x) ? tl_gen_as_tensor(g, x) : tl_gen_expr(g, x);
}

/* a (op) b, at least one a tensor: both, or one with the other as a number */
static cv combine(gen *g, const tl_node *at, int op, cv a, cv b, const tl_node *an, const tl_node *bn, tl_ty *ty) {
  if (a.ty->kind == TY_TENSOR && b.ty->kind == TY_TENSOR)
    return tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_binop(R, %d, %s, %s, %s)", op, a.c, b.c, loc(g, at)));
  bool left = b.ty->kind == TY_TENSOR; /* the number on the left */
  int sdt = left ? tl_ty_scalar_dtype(an, a.ty) : tl_ty_scalar_dtype(bn, b.ty);
  return tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_binop_s(R, %d, %s, (double)(%s), %d, %d, %d, %s)", op, left ? b.c : a.c,
                                       left ? a.c : b.c, sdt, left, is_literal(left ? an : bn), loc(g, at)));
}

static int math_op(int64_t id) { return id == B_POW ? TLRT_OP_POW : id == B_MAXIMUM ? TLRT_OP_MAX : TLRT_OP_MIN; }

/* a chain `a * b + c ...` of ELEM arithmetic, along its left spine without recursion */
static cv chain_as_tensor(gen *g, tl_node *n) {
  size_t k = 0;
  tl_node *m = n;
  for (; m->kind == TL_N_BINARY && tl_gen_grad_elem(m); m = m->lhs) k++;
  tl_node **spine = malloc(sizeof *spine * k);
  if (!spine) {
    tl_gen_fail(g, n, "out of memory generating a long expression");
    return tl_gen_scalar("NULL", t0_of(n->ty));
  }
  m = n;
  for (size_t i = 0; i < k; i++, m = m->lhs) spine[i] = m;
  cv a = tl_gen_grad_operand(g, m, true);
  for (size_t i = k; i-- > 0;) {
    tl_node *s = spine[i];
    cv b = tl_gen_grad_operand(g, s->rhs, true);
    a = combine(g, s, tl_gen_tensor_op(s->op), a, b, s->lhs, s->rhs, t0_of(s->ty));
  }
  free(spine);
  return a;
}

/* the operands of TL_GRAD_MATH n: `x.exp()`, `x.pow(y)`; `max(x, y)` (y NULL: none) */
static void math_operands(const tl_node *n, tl_node **x, tl_node **y) {
  if (n->kind == TL_N_METHOD) *x = n->lhs, *y = n->args;
  else *x = n->args, *y = n->args->next;
}

cv tl_gen_as_tensor(gen *g, tl_node *n) {
  tl_ty *ty = t0_of(n->ty);
  tl_node *x, *y;
  switch (n->kind) {
  case TL_N_INDEX: {
    cv t = tl_gen_expr(g, n->lhs);
    cv v = tl_gen_temp_value(g, ty, tl_gen_index_tensor(g, n, t.c)); /* a view when t requires grad */
    if (n->lhs->ty->dtype != ty->dtype) /* a dtype the checker cannot see: the number's type */
      v = tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %s)", v.c, ty->dtype, loc(g, n)));
    return v;
  }
  case TL_N_BINARY: return chain_as_tensor(g, n);
  case TL_N_UNARY: {
    cv a = tl_gen_as_tensor(g, n->lhs);
    return tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_unop(R, %d, %s, %s)", TLRT_UNOP_NEG, a.c, loc(g, n)));
  }
  case TL_N_CAST: {
    cv a = tl_gen_as_tensor(g, n->lhs);
    return tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %s)", a.c, ty->dtype, loc(g, n)));
  }
  case TL_N_IDENT: case TL_N_SELF:
    if (n->var && n->var->shadow) return (cv){.c = tl_gen_var_ref(g, n->var->shadow), .ty = n->var->shadow->ty, .temp = -1};
    break;
  case TL_N_METHOD: case TL_N_CALL:
    if (!(n->grad & TL_GRAD_MATH)) break;
    math_operands(n, &x, &y);
    if (!y) {
      cv a = tl_gen_as_tensor(g, x);
      return tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_unop(R, %d, %s, %s)", tl_gen_unop_code((tl_builtin)n->ival), a.c, loc(g, n)));
    } else {
      cv a = tl_gen_grad_operand(g, x, true), b = tl_gen_grad_operand(g, y, true);
      return combine(g, n, math_op(n->ival), a, b, x, y, ty);
    }
  default: break;
  }
  /* not reached for an ELEM node (sema_grad.c's node_elem): a number without history */
  cv v = tl_gen_expr(g, n);
  return tl_gen_temp_value(g, ty, tl_gen_fmt(g, "tlrt_scalar(R, %d, (double)(%s))", ty->dtype, v.c));
}

cv tl_gen_grad_meet(gen *g, const tl_node *at, int op, cv t, cv p, bool p_left) {
  return tl_gen_temp_value(g, t.ty, tl_gen_fmt(g, "tlrt_binop_t0(R, %d, %s, %s, %d, %s)", op, t.c, p.c, p_left, loc(g, at)));
}

/* a `static int` saying whether the warning of a place was given, and the C string of
 * why, as the arguments `&said, why` of tlrt_grad_check and tlrt_grad_lost */
static const char *said_why(gen *g, const char *why) {
  int id = ++g->nlost;
  tl_strbuf_printf(g->side, "static int tl__said%d; /* its warning was given (tlrt_grad_check) */\n", id);
  tl_strbuf lit = {0};
  tl_gen_c_string(&lit, why);
  char *w = tl_gen_take_text(g, &lit);
  const char *r = tl_gen_fmt(g, "&tl__said%d, %s", id, w ? w : "\"\"");
  free(w);
  return r;
}

const char *tl_gen_grad_lost(gen *g, tl_node *n, const char *why) {
  cv p = tl_gen_as_tensor(g, n);
  const char *get = tl_gen_fmt(g, "tlrt_grad_lost(R, %s, %s, %s)", p.c, said_why(g, why), loc(g, n));
  return tl_gen_new_temp(g, n->ty, tl_gen_fmt(g, "(%s)%s", tl_gen_ctype(g, n->ty), get));
}

cv tl_gen_grad_checked(gen *g, tl_node *n, const char *why) {
  const char *saved = g->check;
  g->check = said_why(g, why);
  cv v = tl_gen_expr(g, n);
  g->check = saved;
  return v;
}

void tl_gen_grad_check(gen *g, const tl_node *n, const char *t) {
  if (g->check && (n->grad & TL_GRAD_CHECK)) tl_gen_emit(g, "tlrt_grad_check(R, %s, %s, %s);", t, g->check, loc(g, n));
}

const char *tl_gen_plain_number(gen *g, tl_node *a, const char *builtin, const char *instead) {
  if (!tl_gen_grad_elem(a)) return tl_gen_expr(g, a).c;
  return tl_gen_grad_checked(g, a, tl_gen_fmt(g, "`%s` takes it as a plain number; write %s", builtin, instead)).c;
}

/* ---- variables with a shadow ---- */

/* the shadow's new value for `v = value` (value: NULL for a number already in num) */
static const char *shadow_value(gen *g, const tl_var *v, tl_node *value, const char *num) {
  if (value && tl_gen_grad_elem(value)) return tl_gen_take(g, tl_gen_as_tensor(g, value));
  return tl_gen_fmt(g, "tlrt_scalar(R, %d, (double)(%s))", v->shadow->ty->dtype, num);
}

void tl_gen_grad_after_call(gen *g, const tl_node *n, const tl_fninfo *f) {
  int i = f->self ? 1 : 0;
  for (const tl_node *a = n->args; a; a = a->next, i++) {
    if (f->params[i]->kind != VAR_PARAM_REF || a->lhs->kind != TL_N_IDENT || !a->lhs->var || !a->lhs->var->shadow) continue;
    tl_var *v = a->lhs->var, *sh = v->shadow; /* the callee wrote the number: its shadow follows, without history */
    tl_gen_emit(g, "tlrt_tensor_release(R, %s);", tl_gen_var_ref(g, sh));
    tl_gen_emit(g, "%s = %s;", tl_gen_var_ref(g, sh), shadow_value(g, v, NULL, tl_gen_var_ref(g, v)));
  }
}

/* `let v = value;` of a variable with a shadow: the tensor first, the number from it */
void tl_gen_grad_let(gen *g, tl_node *n) {
  tl_var *v = n->var, *sh = v->shadow;
  const char *t;
  if (tl_gen_grad_elem(n->rhs)) {
    t = shadow_value(g, v, n->rhs, NULL);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, sh->ty), tl_gen_var_ref(g, sh), t);
    tl_gen_emit(g, "%s %s = (%s)tlrt_item(R, %s, %s);", tl_gen_ctype(g, v->ty), tl_gen_var_ref(g, v), tl_gen_ctype(g, v->ty),
             tl_gen_var_ref(g, sh), loc(g, n));
  } else { /* a plain number (`let mut s = 0.0;`): a constant without history */
    cv num = tl_gen_expr(g, n->rhs);
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, v->ty), tl_gen_var_ref(g, v), num.c);
    t = shadow_value(g, v, NULL, tl_gen_var_ref(g, v));
    tl_gen_emit(g, "%s %s = %s;", tl_gen_ctype(g, sh->ty), tl_gen_var_ref(g, sh), t);
  }
  tl_gen_add_local(g, sh, n);
}

/* `v = value;` or `v op= value;` of a variable with a shadow */
void tl_gen_grad_assign(gen *g, tl_node *n, int op) {
  tl_var *v = n->lhs->var, *sh = v->shadow;
  const char *nv;
  if (op < 0) {
    if (tl_gen_grad_elem(n->rhs)) nv = shadow_value(g, v, n->rhs, NULL);
    else nv = shadow_value(g, v, NULL, tl_gen_expr(g, n->rhs).c);
  } else { /* v op= value: the shadow (op) value */
    cv b = tl_gen_grad_operand(g, n->rhs, true);
    cv s = {.c = tl_gen_var_ref(g, sh), .ty = sh->ty, .temp = -1};
    nv = tl_gen_take(g, combine(g, n, op, s, b, n->lhs, n->rhs, sh->ty));
  }
  const char *old = tl_gen_new_temp(g, sh->ty, tl_gen_var_ref(g, sh));
  g->temps[g->ntemps - 1].taken = true; /* released below, after the new value is in */
  tl_gen_emit(g, "%s = %s;", tl_gen_var_ref(g, sh), nv);
  tl_gen_emit(g, "tlrt_tensor_release(R, %s);", old);
  tl_gen_emit(g, "%s = (%s)tlrt_item(R, %s, %s);", tl_gen_var_ref(g, v), tl_gen_ctype(g, v->ty), tl_gen_var_ref(g, sh), loc(g, n));
}
