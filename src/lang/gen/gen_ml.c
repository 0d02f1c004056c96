/* gen_ml.c — code for the seed language's model helpers (sema_ml.c checks them, rt_ml.c
 * runs them): one call each; the clips pass their receiver's place, which they write. */
#include "lang/gen/gen_impl.h"

cv tl_gen_ml_call(gen *g, tl_node *n) {
  tl_node *a = n->args;
  const char *l = tl_gen_fmt(g, "%d, %d", n->line, n->col);
  switch (n->len) {
  case TL_ML_VB_GET:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_varbuilder_get(R, %s, %s, %s)", tl_gen_expr(g, a).c,
                                                   tl_gen_expr(g, a->next).c, l));
  case TL_ML_VB_GRAD:
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_varbuilder_grad(R, %s, %s)", tl_gen_expr(g, a).c, l));
  case TL_ML_TOP_K: case TL_ML_TOP_P: {
    cv t = tl_gen_expr(g, n->lhs);
    const char *k = tl_gen_new_temp(g, TY_F64_T, tl_gen_fmt(g, "(double)(%s)", tl_gen_expr(g, a).c));
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_sample_logits(R, %s, %d, %s, %s)", t.c,
                                                   n->len == TL_ML_TOP_P, k, l));
  }
  case TL_ML_CLIP_VALUE: case TL_ML_CLIP_NORM: {
    const char *x = tl_gen_new_temp(g, TY_F64_T, tl_gen_fmt(g, "(double)(%s)", tl_gen_expr(g, a).c));
    const char *y = tl_gen_new_temp(g, TY_F64_T, tl_gen_fmt(g, "(double)(%s)", tl_gen_expr(g, a->next).c));
    const char *p = tl_gen_place(g, n->lhs);
    if (n->len == TL_ML_CLIP_VALUE) {
      tl_gen_emit(g, "tlrt_clip_grad_value(R, &%s, %s, %s, %s);", p, x, y, l);
      return tl_gen_scalar("0", TY_UNIT_T);
    }
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "(float)tlrt_clip_grad_norm(R, &%s, %s, %s, %s)", p, x, y, l));
  }
  case TL_ML_GET: { /* Some(t[i]) or None (tag 0), as Vec's get */
    cv t = tl_gen_expr(g, n->lhs);
    const char *i = tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c);
    tl_ty *r = n->ty;
    cv o = tl_gen_temp_value(g, r, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", r->st->cname, r->st->cname));
    tl_gen_emit(g, "if (%s >= 0 && %s < tlrt_len(R, %s, %s)) { %s->tag = 1; %s->f_%s = (%s)tlrt_get(R, %s, 1, &%s, %s); }", i, i,
                t.c, l, o.c, o.c, r->st->fields[0].name, tl_gen_ctype(g, r->st->fields[0].ty), t.c, i, l);
    return o;
  }
  case TL_ML_TEMPERATURE: case TL_ML_REP_PENALTY: {
    cv t = tl_gen_expr(g, n->lhs);
    const char *tok = n->len == TL_ML_REP_PENALTY ? tl_gen_expr(g, a).c : NULL;
    if (tok) a = a->next;
    const char *x = tl_gen_new_temp(g, TY_F64_T, tl_gen_fmt(g, "(double)(%s)", tl_gen_expr(g, a).c));
    if (tok) return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_repetition_penalty(R, %s, %s, %s, %s)", t.c, tok, x, l));
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_temperature_scale(R, %s, %s, %s)", t.c, x, l));
  }
  case TL_ML_SDPA: {
    const char *q = tl_gen_expr(g, a).c, *k = tl_gen_expr(g, a->next).c, *v = tl_gen_expr(g, a->next->next).c;
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_sdpa(R, %s, %s, %s, %s)", q, k, v, l));
  }
  case TL_ML_INVERSE: case TL_ML_DET: case TL_ML_SOLVE:
  case TL_ML_SVD_U: case TL_ML_SVD_S: case TL_ML_SVD_V: case TL_ML_EIG_VALUES: case TL_ML_EIG_VECTORS: {
    cv t = tl_gen_expr(g, n->lhs);
    const char *b = n->len == TL_ML_SOLVE ? tl_gen_expr(g, a).c : "NULL";
    return tl_gen_temp_value(g, n->ty, tl_gen_fmt(g, "tlrt_linalg(R, %d, %s, %s, %s)", (int)(n->len - TL_ML_INVERSE), t.c, b, l));
  }
  case TL_ML_SVD: { /* the tuple (U, S, V), filled by one tl_svd */
    cv t = tl_gen_expr(g, n->lhs);
    tl_ty *r = n->ty;
    cv o = tl_gen_temp_value(g, r, tl_gen_fmt(g, "tlrt_obj_new(R, sizeof(struct %s), %s__drop)", r->st->cname, r->st->cname));
    tl_gen_emit(g, "tlrt_svd(R, %s, &%s->f_0, &%s->f_1, &%s->f_2, %s);", t.c, o.c, o.c, o.c, l);
    return o;
  }
  default: tl_gen_fail(g, n, "unknown model helper"); return tl_gen_scalar("0", n->ty);
  }
}
