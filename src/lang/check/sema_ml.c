/* sema_ml.c — the checker's side of the seed language's model helpers (docs/language.md
 * §5): VarBuilder::get(name, shape) and VarBuilder::grad(name), the samplers
 * logits.top_k_sample(k) and logits.top_p_sample(p), and the in-place gradient clips
 * g.clip_grad_value(lo, hi) and g.clip_grad_norm(max_norm, p), which write their
 * receiver (a mutable variable or a field of one). One table; node->len is its row,
 * which gen_ml.c reads. The run time is rt_ml.c. Also t.get(i) on a 1-D tensor (the seed's
 * `shape.get(0)`): Rust's slice get, Some(the element) or None out of range. */
#include <string.h>

#include "lang/check/sema_impl.h"

/* kind: 'p' a path call, 'm' a tensor method (w: it writes its receiver).
 * args: s String, I Vec<i64> (a shape), i i64, f a number, T a tensor.
 * ret: t an f32 tensor, r the receiver's (or first argument's) tensor type, x an i64 tensor of the receiver's rank, f f32, u unit,
 * o an Option of the receiver's element type, D the receiver's type less 2 axes,
 * M the receiver's type (a matrix or batch of them), S the receiver's type less 1 axis (of a matrix),
 * V the tuple (M, S, M) of svd(),
 * a the tensor argument's type. */
static const struct {
  const char *name;
  char kind, ret;
  const char *args;
  bool writes;
} rows[] = {
    [TL_ML_VB_GET] = {"VarBuilder::get", 'p', 't', "sI", false},
    [TL_ML_VB_GRAD] = {"VarBuilder::grad", 'p', 't', "s", false},
    [TL_ML_TOP_K] = {"top_k_sample", 'm', 'x', "i", false},
    [TL_ML_TOP_P] = {"top_p_sample", 'm', 'x', "f", false},
    [TL_ML_CLIP_VALUE] = {"clip_grad_value", 'm', 'u', "ff", true},
    [TL_ML_CLIP_NORM] = {"clip_grad_norm", 'm', 'f', "ff", true},
    [TL_ML_GET] = {"get", 'm', 'o', "i", false},
    [TL_ML_TEMPERATURE] = {"temperature_scale", 'm', 'r', "f", false},
    [TL_ML_REP_PENALTY] = {"repetition_penalty", 'm', 'r', "Tf", false},
    [TL_ML_SDPA] = {"Tensor::sdpa", 'p', 'r', "TTT", false},
    [TL_ML_INVERSE] = {"inverse", 'm', 'r', "", false},
    [TL_ML_DET] = {"det", 'm', 'D', "", false},
    [TL_ML_SOLVE] = {"solve", 'm', 'a', "T", false},
    [TL_ML_SVD_U] = {"svd_u", 'm', 'M', "", false},
    [TL_ML_SVD_S] = {"svd_s", 'm', 'S', "", false},
    [TL_ML_SVD_V] = {"svd_v", 'm', 'M', "", false},
    [TL_ML_EIG_VALUES] = {"eig_values", 'm', 'S', "", false},
    [TL_ML_EIG_VECTORS] = {"eig_vectors", 'm', 'M', "", false},
    [TL_ML_SVD] = {"svd", 'm', 'V', "", false},
};

static tl_ty *check_row(sema *s, tl_node *n, size_t row, tl_ty *recv) {
  const char *name = rows[row].name;
  n->ival = B_ML;
  n->len = row;
  int want = (int)strlen(rows[row].args), got = tl_ast_count(n->args);
  if (got != want) {
    tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", name, want, want == 1 ? "" : "s", got);
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", name);
    return TY_ERR;
  }
  int k = 0;
  tl_ty *first = NULL;
  for (tl_node *a = n->args; a; a = a->next, k++) {
    char c = rows[row].args[k];
    if (c == 'T') {
      tl_ty *t = tl_sema_expr(s, a, NULL);
      if (t->kind != TY_TENSOR && t->kind != TY_ERROR) tl_sema_mismatch(s, a, "argument", tl_sema_tensor(s, -1, -1), t);
      if (!first) first = t;
      continue;
    }
    tl_ty *want_ty = c == 's' ? TY_STR_T : c == 'I' ? tl_sema_vec_type(s, TY_I64_T) : c == 'i' ? TY_I64_T : TY_F32_T;
    tl_ty *t = c == 'f' ? tl_sema_expr_hint(s, a, want_ty) : tl_sema_expr(s, a, want_ty);
    bool ok = c == 'f' ? tl_ty_is_numeric(t) : tl_sema_ty_fits(want_ty, t);
    if (!ok && t->kind != TY_ERROR) tl_sema_mismatch(s, a, "argument", want_ty, t);
  }
  if (recv && rows[row].ret == 'o') {
    if (recv->rank >= 0 && recv->rank != 1) {
      tl_sema_error(s, n, "`get(i)` reads an element of a 1-D tensor; this one has %d axes", recv->rank);
      tl_diag_hint(s->diag, "index it: `t[i, j]`");
      return TY_ERR;
    }
    if (recv->dtype < 0) {
      tl_sema_error(s, n, "`get(i)` needs the tensor's dtype known here");
      return TY_ERR;
    }
    return tl_sema_option_type(s, tl_ty_of_dtype(recv->dtype));
  }
  if (recv) {
    if (recv->dtype >= 0 && recv->dtype != TL_F32 && recv->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`%s` needs a float tensor, not %s", name, tl_ty_name(recv, b, sizeof b));
      return TY_ERR;
    }
    if (rows[row].writes) tl_sema_receiver_mut(s, n);
  }
  switch (rows[row].ret) {
  case 't': return tl_sema_tensor(s, TL_F32, -1);
  case 'r': {
    tl_ty *r = recv ? recv : first;
    return r && r->kind == TY_TENSOR ? r : TY_ERR;
  }
  case 'x': return tl_sema_tensor(s, TL_I64, recv ? recv->rank : -1);
  case 'D': case 'M': case 'S': case 'V':
    if (recv->rank >= 0 && recv->rank < 2) {
      tl_sema_error(s, n, "`%s` needs %smatrices [.., %s]; this tensor has %d axis%s", name, rows[row].ret == 'D' ? "square " : "",
                    rows[row].ret == 'D' ? "n, n" : "m, n", recv->rank, recv->rank == 1 ? "" : "es");
      return TY_ERR;
    }
    if (rows[row].ret == 'V') {
      tl_ty *usv[3] = {recv, tl_sema_tensor(s, recv->dtype, recv->rank >= 0 ? recv->rank - 1 : -1), recv};
      return tl_sema_tuple_of(s, usv, 3);
    }
    return rows[row].ret == 'M' ? recv : tl_sema_tensor(s, recv->dtype, recv->rank >= 0 ? recv->rank - (rows[row].ret == 'D' ? 2 : 1) : -1);
  case 'a': return first && first->kind == TY_TENSOR ? first : TY_ERR;
  case 'f': return TY_F32_T;
  default: return TY_UNIT_T;
  }
}

tl_ty *tl_sema_ml_call(sema *s, tl_node *n, const char *path) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == 'p' && !strcmp(rows[i].name, path)) return check_row(s, n, i, NULL);
  return NULL;
}

tl_ty *tl_sema_ml_method(sema *s, tl_node *n, tl_ty *t) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].kind == 'm' && !strcmp(rows[i].name, n->name)) return check_row(s, n, i, t);
  return NULL;
}
