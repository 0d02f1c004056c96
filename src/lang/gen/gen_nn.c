/* gen_nn.c — code for the layer methods (sema_nn.c checks them, rt_nn.c runs them). */
#include "lang/gen/gen_impl.h"

cv tl_gen_nn_call(gen *g, tl_node *n) {
  tl_builtin id = (tl_builtin)n->ival;
  tl_node *a = n->args;
  const char *l = tl_gen_fmt(g, "%d, %d", n->line, n->col);
  if (id == B_ADAM_STEP) { /* writes the receiver, m and v: places, not values */
    const char *grad = tl_gen_expr(g, a).c, *num[6];
    tl_node *e = a->next->next->next;
    for (int i = 0; i < 6; i++, e = e->next)
      num[i] = tl_gen_new_temp(g, i ? TY_F64_T : TY_I64_T, tl_gen_fmt(g, "(%s)(%s)", i ? "double" : "int64_t", tl_gen_expr(g, e).c));
    const char *p = tl_gen_place(g, n->lhs), *m = tl_gen_place(g, a->next), *v = tl_gen_place(g, a->next->next);
    tl_gen_emit(g, "tlrt_adam_step(R, &%s, %s, &%s, &%s, %s, %s, %s, %s, %s, %s, %s);", p, grad, m, v, num[0], num[1], num[2],
             num[3], num[4], num[5], l);
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  cv t = tl_gen_expr(g, n->lhs);
  switch (id) {
  case B_CONV2D: case B_CONV2D_BIAS: {
    const char *k = tl_gen_expr(g, a).c, *b = "NULL";
    a = a->next;
    if (id == B_CONV2D_BIAS) {
      b = tl_gen_expr(g, a).c;
      a = a->next;
    }
    const char *pad = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    const char *stride = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next).c);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_conv2d(R, %s, %s, %s, %s, %s, %s)", t.c, k, b, pad, stride, l));
  }
  case B_MAX_POOL2D: case B_AVG_POOL2D: {
    const char *k = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    const char *stride = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next).c);
    const char *pad = a->next->next ? tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next->next).c) : "0";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_pool2d(R, %s, %s, %s, %s, %s, %s)", t.c, k, stride, pad,
                                            id == B_MAX_POOL2D ? "true" : "false", l));
  }
  case B_LAYER_NORM: {
    const char *w = tl_gen_expr(g, a).c, *b = tl_gen_expr(g, a->next).c, *eps = tl_gen_expr(g, a->next->next).c;
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_layer_norm(R, %s, %s, %s, (double)(%s), %s)", t.c, w, b, eps, l));
  }
  case B_NORM_LAYER: { /* batch_norm (len 0), group_norm (1), instance_norm (2): rt_nn.c */
    const char *rm = "NULL", *rv = "NULL", *k = "0", *eps = "1e-5";
    if (n->len == 0) {
      rm = tl_gen_expr(g, a).c;
      rv = tl_gen_expr(g, a->next).c;
      a = a->next->next;
    } else if (n->len == 1) {
      k = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
      a = a->next;
    }
    const char *w = tl_gen_expr(g, a).c, *b = tl_gen_expr(g, a->next).c;
    a = a->next->next;
    if (n->len == 0) {
      k = tl_gen_fmt(g, "(int64_t)(%s)", tl_gen_expr(g, a).c);
      a = a->next;
    }
    if (a) eps = tl_gen_expr(g, a).c;
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_norm_layer(R, %d, %s, %s, %s, %s, %s, %s, (double)(%s), %s)", (int)n->len,
                                                   t.c, rm, rv, w, b, k, eps, l));
  }
  case B_LINEAR:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_linear(R, %s, %s, %s, %s)", t.c, tl_gen_expr(g, a).c,
                                                   a->next ? tl_gen_expr(g, a->next).c : "NULL", l));
  case B_CONV1D: {
    const char *k = tl_gen_expr(g, a).c, *b = tl_gen_expr(g, a->next).c;
    const char *stride = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next->next).c);
    const char *pad = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next->next->next).c);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_conv1d(R, %s, %s, %s, %s, %s, %s)", t.c, k, b, stride, pad, l));
  }
  case B_RESAMPLE: {
    const char *h = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c), *w = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next).c);
    const char *mode = n->len ? "2" : tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a->next->next).c);
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_resample(R, %s, %s, %s, %s, %s)", t.c, h, w, mode, l));
  }
  case B_EMBEDDING:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_embedding(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  default: tl_gen_fail(g, n, "unknown layer method"); return tl_gen_scalar("0", n->ty);
  }
}
