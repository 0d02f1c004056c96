/* sema_nn.c — the checker's side of the layer methods (LANGUAGE.md §10):
 * x.conv2d(kernel, padding, stride), x.conv2d(kernel, bias, padding, stride),
 * x.max_pool2d(k, stride [, padding]), x.avg_pool2d(k, stride [, padding]), x.layer_norm(w, b, eps) and
 * indices.embedding(weights), p.adam_step(grad, m, v, step, lr, beta1, beta2, eps,
 * weight_decay) (which writes p, m and v: variables or fields of mutable ones). The code for them is in gen_nn.c, the run time in
 * rt_nn.c (over tl.h's tl_conv2d, tl_max_pool2d, tl_avg_pool2d, tl_layer_norm,
 * tl_embedding). Shapes are checked when the program runs. */
#include <string.h>

#include "lang/check/sema_impl.h"

static bool arity(sema *s, tl_node *n, const char *name, int lo, int hi, const char *form) {
  int got = tl_ast_count(n->args);
  if (got >= lo && got <= hi) return true;
  tl_sema_error(s, n, "`%s` takes %s, not %d argument%s", name, form, got, got == 1 ? "" : "s");
  tl_sema_check_rest(s, n->args);
  return false;
}

/* a tensor argument; its type (TY_ERR after a mismatch) */
static tl_ty *expect_tensor(sema *s, tl_node *a, const char *what, int dtype) {
  tl_ty *t = tl_sema_expr(s, a, NULL);
  if (t->kind == TY_TENSOR || t->kind == TY_ERROR) return t;
  tl_sema_mismatch(s, a, what, tl_sema_tensor(s, dtype, -1), t);
  return TY_ERR;
}

static bool is_int_dtype(int d) { return d == TL_I32 || d == TL_I64; }
static bool is_float_dtype(int d) { return d == TL_F32 || d == TL_F64; }

/* a float tensor receiver (dtype unknown passes: checked when the program runs) */
static bool float_receiver(sema *s, tl_node *n, tl_ty *t, const char *m) {
  if (t->dtype < 0 || is_float_dtype(t->dtype)) return true;
  char b[64];
  tl_sema_error(s, n, "`%s` needs a float tensor, not %s", m, tl_ty_name(t, b, sizeof b));
  return false;
}

/* a place adam_step writes: a mutable variable, or a field path of one */
static void check_place(sema *s, tl_node *a, const char *what) {
  tl_node *r = a;
  while (r->kind == TL_N_FIELD) r = r->lhs;
  if ((r->kind != TL_N_IDENT && r->kind != TL_N_SELF) || !r->var) {
    if (r->kind != TL_N_IDENT && r->kind != TL_N_SELF)
      tl_sema_error(s, a, "`adam_step` writes its %s: pass a variable or a field of one", what);
    return;
  }
  if (!r->var->is_mut && r->var->kind != VAR_PARAM_REF) {
    tl_sema_error(s, a, "`adam_step` changes `%s` (its %s), which is not mutable", r->var->name, what);
    tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", r->var->name);
  }
}

tl_ty *tl_sema_nn_method(sema *s, tl_node *n, tl_ty *t) {
  const char *m = n->name;
  tl_node *a = n->args;
  if (!strcmp(m, "conv2d")) {
    if (!arity(s, n, m, 3, 4, "(kernel, padding, stride) or (kernel, bias, padding, stride)")) return TY_ERR;
    bool bias = tl_ast_count(a) == 4;
    n->ival = bias ? B_CONV2D_BIAS : B_CONV2D;
    expect_tensor(s, a, "kernel", TL_F32);
    a = a->next;
    if (bias) {
      expect_tensor(s, a, "bias", TL_F32);
      a = a->next;
    }
    tl_sema_expect_i64(s, a, "padding");
    tl_sema_expect_i64(s, a->next, "stride");
    if (t->rank >= 0 && t->rank != 4) tl_sema_error(s, n, "`conv2d` needs an [N, C, H, W] tensor of 4 axes, not %d", t->rank);
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return tl_sema_tensor(s, t->dtype, 4);
  }
  if (!strcmp(m, "max_pool2d") || !strcmp(m, "avg_pool2d")) {
    n->ival = m[0] == 'm' ? B_MAX_POOL2D : B_AVG_POOL2D;
    if (!arity(s, n, m, 2, 3, "(kernel size, stride) or (kernel size, stride, padding)")) return TY_ERR;
    tl_sema_expect_i64(s, a, "kernel size");
    tl_sema_expect_i64(s, a->next, "stride");
    if (a->next->next) tl_sema_expect_i64(s, a->next->next, "padding");
    if (t->rank >= 0 && t->rank != 4) tl_sema_error(s, n, "`%s` needs an [N, C, H, W] tensor of 4 axes, not %d", m, t->rank);
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return tl_sema_tensor(s, t->dtype, 4);
  }
  if (!strcmp(m, "layer_norm")) {
    n->ival = B_LAYER_NORM;
    if (!arity(s, n, m, 3, 3, "(weight, bias, eps)")) return TY_ERR;
    expect_tensor(s, a, "weight", TL_F32);
    expect_tensor(s, a->next, "bias", TL_F32);
    tl_ty *e = tl_sema_expr_hint(s, a->next->next, TY_F32_T);
    if (!tl_ty_is_numeric(e) && e->kind != TY_ERROR) tl_sema_mismatch(s, a->next->next, "eps", TY_F32_T, e);
    if (t->rank == 0) tl_sema_error(s, n, "`layer_norm` needs a tensor of at least 1 axis");
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return t;
  }
  /* torch's F.batch_norm(x, running_mean, running_var, weight, bias, training[, eps]),
   * F.group_norm(x, groups, weight, bias, eps), F.instance_norm(x, weight, bias, eps):
   * over axis 1's channels (rt_nn.c) */
  int kind = !strcmp(m, "batch_norm") ? 0 : !strcmp(m, "group_norm") ? 1 : !strcmp(m, "instance_norm") ? 2 : -1;
  if (kind >= 0) {
    static const char *const shape[] = {"(running_mean, running_var, weight, bias, training) or (.., training, eps)",
                                        "(groups, weight, bias, eps)", "(weight, bias, eps)"};
    static const int least[] = {5, 4, 3}, most[] = {6, 4, 3};
    n->ival = B_NORM_LAYER;
    n->len = (size_t)kind;
    if (!arity(s, n, m, least[kind], most[kind], shape[kind])) return TY_ERR;
    static const char *const bn[] = {"running_mean", "running_var", "weight", "bias"}, *const wb[] = {"weight", "bias"};
    if (kind == 1) {
      tl_sema_expect_i64(s, a, "groups");
      a = a->next;
    }
    for (int i = 0; i < (kind ? 2 : 4); i++, a = a->next) expect_tensor(s, a, kind ? wb[i] : bn[i], TL_F32);
    if (kind == 0) {
      tl_ty *tr = tl_sema_expr(s, a, TY_BOOL_T);
      if (tr->kind != TY_BOOL && tr->kind != TY_ERROR) tl_sema_mismatch(s, a, "training", TY_BOOL_T, tr);
      a = a->next;
    }
    if (a) {
      tl_ty *e = tl_sema_expr_hint(s, a, TY_F32_T);
      if (!tl_ty_is_numeric(e) && e->kind != TY_ERROR) tl_sema_mismatch(s, a, "eps", TY_F32_T, e);
    }
    if (t->rank >= 0 && t->rank < (kind == 0 ? 2 : 3))
      tl_sema_error(s, n, "`%s` needs an [N, C, ..] tensor of at least %d axes, not %d", m, kind == 0 ? 2 : 3, t->rank);
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return t;
  }
  if (!strcmp(m, "linear")) { /* torch's F.linear(x, weight [out, in], bias): x @ weight^T + bias */
    n->ival = B_LINEAR;
    if (!arity(s, n, m, 1, 2, "(weight) or (weight, bias)")) return TY_ERR;
    expect_tensor(s, a, "weight", TL_F32);
    if (a->next) expect_tensor(s, a->next, "bias", TL_F32);
    if (t->rank == 0) tl_sema_error(s, n, "`linear` needs a tensor of at least 1 axis");
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return tl_sema_tensor(s, t->dtype, t->rank);
  }
  if (!strcmp(m, "conv1d")) { /* the seed's x.conv1d(weight [O, C, K], bias, stride, padding): torch's conv1d */
    n->ival = B_CONV1D;
    if (!arity(s, n, m, 4, 4, "(kernel, bias, stride, padding)")) return TY_ERR;
    expect_tensor(s, a, "kernel", TL_F32);
    expect_tensor(s, a->next, "bias", TL_F32);
    tl_sema_expect_i64(s, a->next->next, "stride");
    tl_sema_expect_i64(s, a->next->next->next, "padding");
    if (t->rank >= 0 && t->rank != 3) tl_sema_error(s, n, "`conv1d` needs an [N, C, L] tensor of 3 axes, not %d", t->rank);
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return tl_sema_tensor(s, t->dtype, 3);
  }
  if (!strcmp(m, "interpolate") || !strcmp(m, "adaptive_avg_pool2d")) {
    /* interpolate(oh, ow, mode): the seed's, 0 nearest (torch's), 1 bilinear with the
     * corners aligned; adaptive_avg_pool2d(oh, ow): torch's */
    bool interp = m[0] == 'i';
    n->ival = B_RESAMPLE;
    if (!arity(s, n, m, interp ? 3 : 2, interp ? 3 : 2, interp ? "(height, width, mode)" : "(height, width)")) return TY_ERR;
    tl_sema_expect_i64(s, a, "height");
    tl_sema_expect_i64(s, a->next, "width");
    if (interp) tl_sema_expect_i64(s, a->next->next, "mode");
    n->len = interp ? 0 : 1;
    if (t->rank >= 0 && t->rank != 4) tl_sema_error(s, n, "`%s` needs an [N, C, H, W] tensor of 4 axes, not %d", m, t->rank);
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return tl_sema_tensor(s, t->dtype, 4);
  }
  if (!strcmp(m, "adam_step")) {
    n->ival = B_ADAM_STEP;
    if (!arity(s, n, m, 9, 9, "(grad, m, v, step, lr, beta1, beta2, eps, weight_decay)")) return TY_ERR;
    expect_tensor(s, a, "grad", TL_F32);
    a = a->next;
    for (int i = 0; i < 2; i++, a = a->next) {
      tl_ty *st = expect_tensor(s, a, i ? "v" : "m", TL_F32);
      if (st->kind == TY_TENSOR) check_place(s, a, i ? "second moment v" : "first moment m");
    }
    tl_sema_expect_i64(s, a, "step");
    static const char *const what[] = {"lr", "beta1", "beta2", "eps", "weight_decay"};
    int i = 0;
    for (a = a->next; a; a = a->next, i++) {
      tl_ty *e = tl_sema_expr_hint(s, a, TY_F32_T);
      if (!tl_ty_is_numeric(e) && e->kind != TY_ERROR) tl_sema_mismatch(s, a, what[i], TY_F32_T, e);
    }
    check_place(s, n->lhs, "parameter");
    if (!float_receiver(s, n, t, m)) return TY_ERR;
    return TY_UNIT_T;
  }
  if (!strcmp(m, "embedding")) {
    n->ival = B_EMBEDDING;
    if (!arity(s, n, m, 1, 1, "(weights)")) return TY_ERR;
    tl_ty *w = expect_tensor(s, a, "weights", TL_F32);
    /* a float index tensor is the seed language's spelling: its values are checked to
     * be whole row numbers when the program runs (rt_nn.c) */
    if (t->dtype >= 0 && !is_int_dtype(t->dtype) && !is_float_dtype(t->dtype)) {
      char b[64];
      tl_sema_error(s, n, "`embedding` gathers rows by an integer tensor (or a float one holding whole numbers), not %s",
                    tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    if (w->kind == TY_TENSOR && w->rank >= 0 && w->rank != 2)
      tl_sema_error(s, a, "`embedding` weights are [rows, dim], a tensor of 2 axes, not %d", w->rank);
    int dtype = w->kind == TY_TENSOR ? w->dtype : -1;
    return tl_sema_tensor(s, dtype, t->rank >= 0 ? t->rank + 1 : -1);
  }
  return NULL;
}
