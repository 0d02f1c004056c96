/* gen_compr.c — tensor comprehensions (LANGUAGE.md §7) as engine graphs.
 * The index variables span an iteration space: output axes first, in order, then
 * the summed ones. Each index variable is an arange shaped to its axis; the body is
 * compiled as tensor code over that space (a value that does not depend on the
 * space stays a scalar); filters zero the points they drop; then the summed axes
 * are reduced. The engine fuses the whole graph into one kernel where it can, and
 * autograd follows it like any other graph. Reading `t[i, j]` with distinct index
 * variables is a view of t; any other index expression is a gather, and a point
 * whose index falls outside t reads 0 (so filtered and padded reads are safe). */
#include <stdlib.h>
#include <string.h>

#include "lang/gen/gen_impl.h"

static const char *loc(gen *g, const tl_node *n) { return tl_gen_fmt(g, "%d, %d", n->line, n->col); }

static tl_ty *tensor_of(gen *g, const tl_ty *scalar) {
  tl_ty *t = tl_arena_alloc(g->arena, sizeof *t);
  if (!t) {
    g->failed = true;
    return (tl_ty *)scalar;
  }
  int dt = tl_ty_dtype(scalar);
  t->kind = TY_TENSOR;
  t->dtype = dt < 0 ? TL_F32 : dt;
  t->rank = -1;
  return t;
}

static bool is_tensor(cv v) { return v.ty->kind == TY_TENSOR; }

/* a value of the body as a tensor (a scalar becomes a 0-d one) */
static const char *as_tensor(gen *g, cv v) {
  if (is_tensor(v)) return v.c;
  tl_ty *t = tensor_of(g, v.ty);
  return tl_gen_new_temp(g, t, tl_gen_fmt(g, "tlrt_scalar(R, %d, (double)(%s))", t->dtype, v.c));
}

/* evaluates n as ordinary code (it does not depend on the index variables) */
static cv outside(gen *g, tl_node *n) {
  g->in_compr = false;
  cv v = tl_gen_expr(g, n);
  g->in_compr = true;
  return v;
}

static bool is_vector_read(tl_node *n, void *unused) {
  (void)unused;
  return n->kind == TL_N_IDENT && n->var && (n->var->is_index || n->var->vectorized);
}

/* does n vary over the iteration space? */
static bool depends(tl_node *n) { return tl_ast_find(n, is_vector_read, NULL) != NULL; }

/* a op b, the values of nodes an and bn */
static cv tensor_binop(gen *g, const tl_node *n, int op, const tl_node *an, cv a, const tl_node *bn, cv b) {
  tl_ty *t = tensor_of(g, n->ty);
  if (is_tensor(a) && is_tensor(b))
    return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_binop(R, %d, %s, %s, %s)", op, a.c, b.c, loc(g, n)));
  bool left = is_tensor(b);
  int sdt = left ? tl_ty_scalar_dtype(an, a.ty) : tl_ty_scalar_dtype(bn, b.ty);
  return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_binop_s(R, %d, %s, (double)(%s), %d, %d, 0, %s)", op, left ? b.c : a.c,
                                      left ? a.c : b.c, sdt, left, loc(g, n)));
}

static cv where(gen *g, const tl_node *n, cv c, cv a, cv b) {
  tl_ty *t = tensor_of(g, n->ty);
  return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_where(R, %s, %s, %s, %s)", as_tensor(g, c), as_tensor(g, a),
                                      as_tensor(g, b), loc(g, n)));
}

static cv compr_block(gen *g, tl_node *blk);

/* t[e_0, ..., e_k] inside the body */
static cv compr_index(gen *g, tl_node *n) {
  cv t = outside(g, n->lhs);
  int k = 0;
  bool plain = true;
  for (tl_node *a = n->args; a; a = a->next, k++) {
    if (a->kind != TL_N_IDENT || !a->var || !a->var->is_index) plain = false;
    for (tl_node *b = n->args; plain && b != a; b = b->next)
      if (b->var == a->var) plain = false; /* t[i, i]: a diagonal, gathered */
  }
  tl_ty *rt = tensor_of(g, n->ty);
  if (plain) {
    tl_strbuf ax = {0}, lo = {0}, hi = {0};
    int j = 0;
    for (tl_node *a = n->args; a; a = a->next, j++) {
      tl_strbuf_printf(&ax, "%s%d", j ? ", " : "", a->var->axis);
      tl_strbuf_printf(&lo, "%slo%d_%d", j ? ", " : "", a->var->id, a->var->axis);
      tl_strbuf_printf(&hi, "%shi%d_%d", j ? ", " : "", a->var->id, a->var->axis);
    }
    char *a = tl_gen_take_text(g, &ax), *l = tl_gen_take_text(g, &lo), *h = tl_gen_take_text(g, &hi);
    cv r = tl_gen_temp_value(g, rt, tl_gen_fmt(g, "tlrt_compr_view(R, %s, %d, %d, (int[]){%s}, (int64_t[]){%s}, (int64_t[]){%s}, %s)",
                                         t.c, g->compr_rank, k, a ? a : "0", l ? l : "0", h ? h : "0", loc(g, n)));
    free(a);
    free(l);
    free(h);
    return r;
  }
  tl_strbuf b = {0};
  int j = 0;
  for (tl_node *a = n->args; a; a = a->next, j++) tl_strbuf_printf(&b, "%s%s", j ? ", " : "", as_tensor(g, tl_gen_compr_expr(g, a)));
  char *list = tl_gen_take_text(g, &b);
  cv r = tl_gen_temp_value(g, rt, tl_gen_fmt(g, "tlrt_gather(R, %s, %d, (tl_tensor *[]){%s}, %s)", t.c, k, list ? list : "", loc(g, n)));
  free(list);
  return r;
}

static cv compr_math(gen *g, tl_node *n, tl_node *x, tl_node *y) {
  cv a = tl_gen_compr_expr(g, x);
  cv b = y ? tl_gen_compr_expr(g, y) : (cv){0};
  tl_builtin id = (tl_builtin)n->ival;
  if (!is_tensor(a) && !(y && is_tensor(b))) { /* uniform: plain scalar code */
    g->in_compr = false;
    cv v = tl_gen_expr(g, n);
    g->in_compr = true;
    return v;
  }
  tl_ty *t = tensor_of(g, n->ty);
  if (!y) return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_unop(R, %d, %s, %s)", tl_gen_unop_code(id), a.c, loc(g, n)));
  int op = id == B_POW ? TLRT_OP_POW : id == B_MAXIMUM ? TLRT_OP_MAX : TLRT_OP_MIN;
  return tensor_binop(g, n, op, x, a, y, b);
}

/* n, the left operand's value a already made */
static cv compr_binary_step(gen *g, tl_node *n, cv a) {
  cv b = tl_gen_compr_expr(g, n->rhs);
  if (n->op == TL_TOK_ANDAND) return where(g, n, a, b, a);
  if (n->op == TL_TOK_OROR) return where(g, n, a, a, b);
  return tensor_binop(g, n, tl_gen_tensor_op(n->op), n->lhs, a, n->rhs, b);
}

/* a chain `a + b + ...` in a loop, as gen_binary makes it (it may be 100,000 deep); its
 * lower part that reads no index variable is one value made outside */
static cv compr_binary(gen *g, tl_node *n) {
  if (n->lhs->kind != TL_N_BINARY) return compr_binary_step(g, n, tl_gen_compr_expr(g, n->lhs));
  size_t k;
  tl_node **spine = tl_gen_chain_spine(g, n, &k);
  if (!spine) return tl_gen_scalar("0", n->ty);
  tl_node *m = spine[k - 1]->lhs;
  size_t i = k; /* spine[i..k) read no index variable: depends() of each, bottom up, in one pass */
  bool dep = depends(m);
  while (i > 0 && !dep && !(dep = depends(spine[i - 1]->rhs))) i--;
  cv a = i == k ? tl_gen_compr_expr(g, m) : outside(g, spine[i]);
  while (i-- > 0) {
    int mark = g->ntemps;
    a = tl_gen_chain_settle(g, compr_binary_step(g, spine[i], a), a, mark);
  }
  free(spine);
  return a;
}

cv tl_gen_compr_expr(gen *g, tl_node *n) {
  if (!depends(n)) return outside(g, n);
  switch (n->kind) {
  case TL_N_IDENT: {
    tl_var *v = n->var;
    if (v->is_index) return (cv){.c = tl_gen_fmt(g, "ix%d_%d", v->id, v->axis), .ty = tensor_of(g, TY_I64_T), .temp = -1};
    return (cv){.c = tl_gen_fmt(g, "v%d_%s", v->id, v->name), .ty = tensor_of(g, v->ty), .temp = -1};
  }
  case TL_N_BINARY: return compr_binary(g, n);
  case TL_N_UNARY: {
    cv a = tl_gen_compr_expr(g, n->lhs);
    return tl_gen_temp_value(g, tensor_of(g, n->ty), tl_gen_fmt(g, "tlrt_unop(R, %d, %s, %s)", n->op == TL_TOK_NOT ? TLRT_UNOP_NOT : TLRT_UNOP_NEG,
                                                         a.c, loc(g, n)));
  }
  case TL_N_CAST: {
    cv a = tl_gen_compr_expr(g, n->lhs);
    tl_ty *t = tensor_of(g, n->ty);
    return tl_gen_temp_value(g, t, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %s)", a.c, t->dtype, loc(g, n)));
  }
  case TL_N_INDEX: return compr_index(g, n);
  case TL_N_CALL: return compr_math(g, n, n->args, n->args->next);
  case TL_N_METHOD: return compr_math(g, n, n->lhs, n->args);
  case TL_N_IF: {
    cv c = tl_gen_compr_expr(g, n->cond);
    cv a = compr_block(g, n->then);
    cv b = n->els->kind == TL_N_BLOCK ? compr_block(g, n->els) : tl_gen_compr_expr(g, n->els);
    return where(g, n, c, a, b);
  }
  case TL_N_BLOCK: return compr_block(g, n);
  default: tl_gen_fail(g, n, "this expression is not supported in a comprehension body"); return tl_gen_scalar("0", n->ty);
  }
}

/* a block of the body: `let`s become tensors over the space, then the value */
static cv compr_block(gen *g, tl_node *blk) {
  for (tl_node *s = blk->stmts; s; s = s->next) {
    if (s->kind == TL_N_EXPR_STMT) continue; /* no effects in a body: nothing to run */
    if (s->kind != TL_N_LET) {
      tl_gen_fail(g, s, "a comprehension body holds `let` statements and a value");
      continue;
    }
    cv v = tl_gen_compr_expr(g, s->rhs);
    s->var->vectorized = true;
    tl_ty *t = tensor_of(g, s->var->ty);
    const char *init = is_tensor(v) ? tl_gen_fmt(g, "tlrt_tensor_retain(R, %s)", v.c)
                                    : tl_gen_fmt(g, "tlrt_scalar(R, %d, (double)(%s))", t->dtype, v.c);
    tl_gen_new_temp(g, t, "NULL");
    const char *name = g->temps[g->ntemps - 1].name;
    tl_gen_emit(g, "%s = %s;", name, init);
    tl_gen_emit(g, "tl_tensor *v%d_%s = %s;", s->var->id, s->var->name, name);
  }
  if (!blk->value) {
    tl_gen_fail(g, blk, "a comprehension body needs a value");
    return tl_gen_scalar("0", TY_F32_T);
  }
  return tl_gen_compr_expr(g, blk->value);
}

cv tl_gen_compr(gen *g, tl_node *n) {
  const tl_compr_vars *space = n->ref;
  tl_var *const *vars = space->vars;
  int nv = space->n, nout = space->nout;
  g->compr_rank = nv;
  int id = ++g->ntmp; /* names this comprehension's extents: ext<id>_<axis> */
  /* ranges and index tensors, evaluated once, before the body */
  for (int i = 0; i < nv; i++) {
    tl_var *v = vars[i];
    v->axis = i;
    const char *lo, *hi;
    if (v->gen) {
      lo = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, v->gen->lhs).c);
      hi = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, v->gen->rhs).c);
    } else {
      cv src = tl_gen_expr(g, v->range_src->lhs);
      lo = "0";
      hi = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "tlrt_dim(R, %s, %d, %s)", src.c, v->range_axis, loc(g, v->range_src)));
    }
    tl_gen_emit(g, "int64_t lo%d_%d = %s, hi%d_%d = %s > %s ? %s : %s;", v->id, i, lo, v->id, i, hi, lo, hi, lo);
    tl_gen_emit(g, "int64_t ext%d_%d = hi%d_%d - lo%d_%d;", id, i, v->id, i, v->id, i);
    tl_gen_new_temp(g, tensor_of(g, TY_I64_T), tl_gen_fmt(g, "tlrt_iota(R, %d, %d, lo%d_%d, hi%d_%d, %s)", nv, i, v->id, i, v->id, i, loc(g, n)));
    tl_gen_emit(g, "tl_tensor *ix%d_%d = %s;", v->id, i, g->temps[g->ntemps - 1].name);
  }
  tl_strbuf sh = {0};
  for (int i = 0; i < nv; i++) tl_strbuf_printf(&sh, "%sext%d_%d", i ? ", " : "", id, i);
  char *shape_list = tl_gen_take_text(g, &sh);
  const char *shape = nv ? tl_gen_fmt(g, "(int64_t[]){%s}", shape_list) : "NULL";
  free(shape_list);
  g->in_compr = true;
  cv val;
  tl_ty *rt = n->ty;
  if (n->body) val = tl_gen_compr_expr(g, n->body);
  else if (nout == 1) val = tl_gen_compr_expr(g, n->args);
  else { /* coordinates along a trailing axis */
    tl_strbuf b = {0};
    int k = 0;
    for (tl_node *a = n->args; a; a = a->next, k++) {
      const char *e = tl_gen_new_temp(g, tensor_of(g, TY_I64_T), tl_gen_fmt(g, "tlrt_expand_to(R, ix%d_%d, %d, %s, %s)", a->var->id,
                                                                       a->var->axis, nv, shape, loc(g, n)));
      tl_strbuf_printf(&b, "%s%s", k ? ", " : "", e);
    }
    char *list = tl_gen_take_text(g, &b);
    val = tl_gen_temp_value(g, tensor_of(g, TY_I64_T), tl_gen_fmt(g, "tlrt_cat(R, true, %d, (tl_tensor *[]){%s}, -1, %s)", k,
                                                              list ? list : "", loc(g, n)));
    free(list);
  }
  /* the full space, then the filters, then the sum over the summed axes */
  tl_ty *vt = tensor_of(g, is_tensor(val) ? tl_ty_of_dtype(val.ty->dtype) : val.ty);
  const char *full = as_tensor(g, val);
  if (n->body || nout == 1)
    full = tl_gen_new_temp(g, vt, tl_gen_fmt(g, "tlrt_expand_to(R, %s, %d, %s, %s)", full, nv, shape, loc(g, n)));
  for (tl_node *c = n->stmts; c; c = c->next) {
    if (c->kind == TL_N_GEN) continue;
    cv f = tl_gen_compr_expr(g, c);
    const char *zero = tl_gen_new_temp(g, vt, tl_gen_fmt(g, "tlrt_scalar(R, %d, 0)", vt->dtype));
    full = tl_gen_new_temp(g, vt, tl_gen_fmt(g, "tlrt_where(R, %s, %s, %s, %s)", as_tensor(g, f), full, zero, loc(g, c)));
  }
  g->in_compr = false;
  if (nv > nout) {
    if (vt->dtype == TL_BOOL) full = tl_gen_new_temp(g, rt, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %s)", full, TL_I64, loc(g, n)));
    uint64_t mask = 0;
    for (int i = nout; i < nv; i++) mask |= (uint64_t)1 << i;
    return tl_gen_temp_value(g, rt, tl_gen_fmt(g, "tlrt_sum_axes(R, %s, UINT64_C(%llu), %s)", full, (unsigned long long)mask, loc(g, n)));
  }
  return tl_gen_temp_value(g, rt, tl_gen_fmt(g, "tlrt_tensor_retain(R, %s)", full));
}
