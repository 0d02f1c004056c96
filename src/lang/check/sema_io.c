/* sema_io.c — the checker's side of tensor files and of the tensor methods added with
 * them (LANGUAGE.md §5): Tensor::save(t, path), Tensor::load(path [, name]),
 * Param::save(model, path), Param::load(model, path), Tensor::clear_grads(),
 * Tensor::manual_seed(n), and the
 * methods zeros_like ones_like tril triu masked_fill slice to_i64 to_f32 print (display)
 * detach(requires_grad). The code for them is in gen_io.c, the run time in rt_io.c. */
#include <string.h>

#include "lang/check/sema_impl.h"

static bool arity(sema *s, tl_node *n, const char *name, int lo, int hi) {
  int got = tl_ast_count(n->args);
  if (got >= lo && got <= hi) return true;
  if (lo == hi) tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", name, lo, lo == 1 ? "" : "s", got);
  else tl_sema_error(s, n, "`%s` takes %d to %d arguments, not %d", name, lo, hi, got);
  tl_sema_check_rest(s, n->args);
  return false;
}

static void expect_string(sema *s, tl_node *a, const char *what) {
  tl_ty *t = tl_sema_expr(s, a, TY_STR_T);
  if (!tl_sema_ty_fits(TY_STR_T, t)) tl_sema_mismatch(s, a, what, TY_STR_T, t);
}

/* does the struct hold a tensor, itself or in a nested struct? */
static bool has_tensor(const tl_struct_info *st, int depth) {
  if (!st || depth > 32) return false;
  for (int i = 0; i < st->nfields; i++) {
    const tl_ty *t = st->fields[i].ty;
    if (t->kind == TY_TENSOR) return true;
    if (t->kind == TY_STRUCT && has_tensor(t->st, depth + 1)) return true;
  }
  return false;
}

static tl_ty *check_model(sema *s, tl_node *a, bool load) {
  tl_ty *t = tl_sema_expr(s, a, NULL);
  if (t->kind == TY_ERROR || (t->kind == TY_TENSOR && !load)) return t; /* a tensor: Tensor::save's (the seed's) */
  if (t->kind != TY_STRUCT) {
    char b[64];
    tl_sema_error(s, a, "`%s` needs a struct whose tensor fields are the parameters, not %s",
               load ? "Param::load" : "Param::save", tl_ty_name(t, b, sizeof b));
    return TY_ERR;
  }
  if (!t->st->partial && !has_tensor(t->st, 0)) {
    tl_sema_error(s, a, "`%s` has no tensor fields to %s", t->st->name, load ? "load" : "save");
    return TY_ERR;
  }
  if (!load) return t;
  /* a write through the variable, as `m.w = v`: a mutable variable or a field path of one */
  tl_node *r = a;
  while (r->kind == TL_N_FIELD) r = r->lhs;
  if ((r->kind != TL_N_IDENT && r->kind != TL_N_SELF) || !r->var) {
    if (r->kind != TL_N_IDENT && r->kind != TL_N_SELF) tl_sema_error(s, a, "`Param::load` writes its model: pass a variable");
    return t;
  }
  if (!tl_sema_may_change(s, a, r->var, "Param::load")) {
    tl_sema_error(s, a, "`Param::load` changes `%s`, which is not mutable", r->var->name);
    tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", r->var->name);
  }
  return t;
}

tl_ty *tl_sema_io_path_call(sema *s, tl_node *n) {
  const char *p = n->lhs->name;
  tl_node *a = n->args;
  if (!strcmp(p, "Tensor::save")) {
    n->ival = B_TENSOR_SAVE;
    if (!arity(s, n, p, 2, 2)) return TY_ERR;
    tl_ty *t = tl_sema_expr(s, a, NULL);
    if (t->kind != TY_TENSOR && t->kind != TY_ERROR) tl_sema_mismatch(s, a, "tensor to save", tl_sema_tensor(s, -1, -1), t);
    expect_string(s, a->next, "path");
    return TY_UNIT_T;
  }
  if (!strcmp(p, "Tensor::load")) {
    n->ival = B_TENSOR_LOAD;
    if (!arity(s, n, p, 1, 2)) return TY_ERR;
    expect_string(s, a, "path");
    if (a->next) expect_string(s, a->next, "tensor name");
    return tl_sema_tensor(s, -1, -1);
  }
  if (!strcmp(p, "Tensor::clear_grads")) {
    n->ival = B_CLEAR_GRADS;
    if (!arity(s, n, p, 0, 0)) return TY_ERR;
    return TY_UNIT_T;
  }
  if (!strcmp(p, "Tensor::manual_seed")) { /* the C API's tl_manual_seed: any i64, as its 64 bits */
    n->ival = B_MANUAL_SEED;
    if (!arity(s, n, p, 1, 1)) return TY_ERR;
    tl_sema_expect_i64(s, a, "seed");
    return TY_UNIT_T;
  }
  if (!strcmp(p, "Param::save") || !strcmp(p, "Param::load")) {
    bool load = p[7] == 'l';
    n->ival = load ? B_PARAM_LOAD : B_PARAM_SAVE;
    if (!arity(s, n, p, 2, 2)) return TY_ERR;
    tl_ty *t = check_model(s, a, load);
    if (t->kind == TY_TENSOR) n->ival = B_TENSOR_SAVE; /* `Param::save(t, path)` on one tensor */
    expect_string(s, a->next, "path");
    return t->kind == TY_ERROR ? TY_ERR : TY_UNIT_T;
  }
  return NULL;
}

static void expect_bool(sema *s, tl_node *a, const char *what) {
  tl_ty *t = tl_sema_expr(s, a, TY_BOOL_T);
  if (!tl_sema_ty_fits(TY_BOOL_T, t)) tl_sema_mismatch(s, a, what, TY_BOOL_T, t);
}

tl_ty *tl_sema_io_method(sema *s, tl_node *n, tl_ty *t) {
  const char *m = n->name;
  tl_node *a = n->args;
  if (!strcmp(m, "zeros_like") || !strcmp(m, "ones_like")) {
    n->ival = m[0] == 'z' ? B_ZEROS_LIKE : B_ONES_LIKE;
    return arity(s, n, m, 0, 0) ? t : TY_ERR;
  }
  if (!strcmp(m, "rand_like") || !strcmp(m, "randn_like")) { /* torch's: a float tensor's dtype and shape */
    n->ival = m[4] == 'n' ? B_RANDN_LIKE : B_RAND_LIKE;
    if (!arity(s, n, m, 0, 0)) return TY_ERR;
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`%s` needs a float tensor, not %s", m, tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    return t;
  }
  if (!strcmp(m, "tril") || !strcmp(m, "triu")) {
    n->ival = m[3] == 'l' ? B_TRIL : B_TRIU;
    if (!arity(s, n, m, 0, 1)) return TY_ERR;
    if (a) tl_sema_expect_i64(s, a, "diagonal");
    if (t->rank >= 0 && t->rank < 2) tl_sema_error(s, n, "`%s` needs a tensor of at least 2 axes, not %d", m, t->rank);
    return t;
  }
  if (!strcmp(m, "masked_fill")) {
    n->ival = B_MASKED_FILL;
    if (!arity(s, n, m, 2, 2)) return TY_ERR;
    tl_ty *mt = tl_sema_expr(s, a, NULL);
    if (mt->kind != TY_TENSOR && mt->kind != TY_ERROR) tl_sema_mismatch(s, a, "mask", tl_sema_tensor(s, TL_BOOL, -1), mt);
    tl_ty *v = tl_sema_expr_hint(s, a->next, t->dtype == TL_F64 ? TY_F64_T : t->dtype == TL_F32 || t->dtype < 0 ? TY_F32_T : NULL);
    if (!tl_ty_is_numeric(v) && v->kind != TY_BOOL && v->kind != TY_ERROR) tl_sema_mismatch(s, a->next, "fill value", TY_F32_T, v);
    return t;
  }
  /* torch's leaky_relu(slope = 0.01), elu(alpha = 1), mish(), hardsigmoid(), hardswish(), l1_loss(target) and
   * binary_cross_entropy(target) (the seed's bce_loss) */
  bool leaky = !strcmp(m, "leaky_relu") || !strcmp(m, "elu"), hard = !strcmp(m, "hardsigmoid") || !strcmp(m, "hardswish");
  bool mish = !strcmp(m, "mish") || hard; /* no argument */
  bool loss = !strcmp(m, "l1_loss") || !strcmp(m, "bce_loss") || !strcmp(m, "binary_cross_entropy") ||
              !strcmp(m, "nll_loss") || !strcmp(m, "kl_div_loss"); /* the last two: rt_nn.c */
  if (leaky || mish || loss) {
    n->ival = hard ? (m[4] == 's' && m[5] == 'i' ? B_HARDSIGMOID : B_HARDSWISH)
              : m[0] == 'e' ? B_ELU : mish ? B_MISH : leaky ? B_LEAKY_RELU : m[0] == 'l' ? B_L1_LOSS
              : m[0] == 'n' ? B_NLL_LOSS : m[0] == 'k' ? B_KL_DIV_LOSS : B_BCE_LOSS;
    if (!arity(s, n, m, leaky || mish ? 0 : 1, mish ? 0 : 1)) return TY_ERR;
    if (a && leaky) {
      tl_ty *v = tl_sema_expr(s, a, TY_F32_T);
      if (!tl_ty_is_numeric(v) && v->kind != TY_ERROR) tl_sema_mismatch(s, a, m[0] == 'e' ? "alpha" : "negative slope", TY_F32_T, v);
    } else if (a) {
      tl_ty *v = tl_sema_expr(s, a, NULL);
      if (v->kind != TY_TENSOR && v->kind != TY_ERROR) tl_sema_mismatch(s, a, "target", tl_sema_tensor(s, TL_F32, -1), v);
    }
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`%s` needs a float tensor, not %s", m, tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    return leaky || mish ? t : tl_sema_tensor(s, t->dtype, 0);
  }
  if (!strcmp(m, "var") || !strcmp(m, "std")) { /* torch's, unbiased (n - 1): over dim, or every element */
    n->ival = m[0] == 'v' ? B_VAR : B_STD;
    if (!arity(s, n, m, 0, 1)) return TY_ERR;
    if (a) tl_sema_expect_i64(s, a, "dim");
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`%s` needs a float tensor, not %s", m, tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    return tl_sema_tensor(s, t->dtype, !a ? 0 : t->rank > 0 ? t->rank - 1 : -1);
  }
  if (!strcmp(m, "where") || !strcmp(m, "where_cond")) { /* cond.where(a, b): torch.where(cond, a, b) */
    n->ival = B_WHERE;
    if (!arity(s, n, m, 2, 2)) return TY_ERR;
    int dt = -2;
    for (tl_node *x = a; x; x = x->next) {
      tl_ty *xt = tl_sema_expr(s, x, NULL);
      if (xt->kind == TY_ERROR) return TY_ERR;
      if (xt->kind != TY_TENSOR) {
        tl_sema_mismatch(s, x, x == a ? "value where true" : "value where false", tl_sema_tensor(s, -1, -1), xt);
        tl_diag_hint(s->diag, "make a number a tensor of the shape: `Tensor::full([2, 3], v)`");
        return TY_ERR;
      }
      dt = dt == -2 ? xt->dtype : dt == xt->dtype ? dt : -1; /* the run time promotes differing dtypes */
    }
    return tl_sema_tensor(s, dt, -1); /* the broadcast shape is known when it runs */
  }
  int part = !strcmp(m, "narrow") ? 0 : !strcmp(m, "chunk") ? 1 : !strcmp(m, "split") ? 2 : -1;
  if (part >= 0) { /* torch's narrow(dim, start, len); the seed's chunk(chunks, dim, i), split(size, dim, i): piece i */
    static const char *const what[3][3] = {{"dim", "start", "len"}, {"chunks", "dim", "index"}, {"size", "dim", "index"}};
    n->ival = B_PART;
    n->len = (size_t)part;
    if (!arity(s, n, m, 3, 3)) return TY_ERR;
    int i = 0;
    for (tl_node *e = a; e; e = e->next, i++) tl_sema_expect_i64(s, e, what[part][i]);
    if (t->rank == 0) tl_sema_error(s, n, "`%s` needs a tensor of at least 1 axis", m);
    return t;
  }
  if (!strcmp(m, "slice")) {
    int got = tl_ast_count(a);
    if (got != 2 && got != 4) {
      tl_sema_error(s, n, "`slice` takes (dim, start, end, step) or (start, len), not %d argument%s", got, got == 1 ? "" : "s");
      tl_sema_check_rest(s, a);
      return TY_ERR;
    }
    n->ival = got == 4 ? B_SLICE : B_SLICE_LEN;
    static const char *const what4[] = {"dim", "start", "end", "step"}, *const what2[] = {"start", "len"};
    int i = 0;
    for (tl_node *e = a; e; e = e->next, i++) tl_sema_expect_i64(s, e, got == 4 ? what4[i] : what2[i]);
    if (t->rank == 0) tl_sema_error(s, n, "`slice` needs a tensor of at least 1 axis");
    return t;
  }
  if (!strcmp(m, "to_i64") || !strcmp(m, "to_f32")) {
    n->ival = B_TO_DTYPE;
    n->len = (size_t)(m[3] == 'i' ? TL_I64 : TL_F32);
    return arity(s, n, m, 0, 0) ? tl_sema_tensor(s, (int)n->len, t->rank) : TY_ERR;
  }
  if (!strcmp(m, "pad")) { /* torch's F.pad(x, (before, after), value = 0): the last axis */
    n->ival = B_PAD;
    if (!arity(s, n, m, 2, 3)) return TY_ERR;
    tl_sema_expect_i64(s, a, "padding before");
    tl_sema_expect_i64(s, a->next, "padding after");
    if (a->next->next) {
      tl_ty *v = tl_sema_expr_hint(s, a->next->next, t->dtype == TL_F64 ? TY_F64_T : TY_F32_T);
      if (!tl_ty_is_numeric(v) && v->kind != TY_ERROR) tl_sema_mismatch(s, a->next->next, "padding value", TY_F32_T, v);
    }
    if (t->rank == 0) tl_sema_error(s, n, "`pad` needs a tensor of at least 1 axis");
    return t;
  }
  if (!strncmp(m, "logical_", 8)) { /* torch's logical_and(b), logical_or(b), logical_not(): nonzero is true; bool */
    bool not = !strcmp(m, "logical_not");
    n->ival = B_LOGICAL;
    n->len = not ? 2 : m[8] == 'a' ? 0 : 1;
    if (!arity(s, n, m, not ? 0 : 1, not ? 0 : 1)) return TY_ERR;
    tl_ty *b = a ? tl_sema_expr(s, a, NULL) : t;
    if (b->kind != TY_TENSOR && b->kind != TY_ERROR) tl_sema_mismatch(s, a, "operand", tl_sema_tensor(s, -1, -1), b);
    return tl_sema_tensor(s, TL_BOOL, b->kind == TY_TENSOR && b->rank >= 0 && t->rank >= 0 ? (b->rank > t->rank ? b->rank : t->rank) : -1);
  }
  if (!strcmp(m, "topk")) { /* torch's topk(k) values (the seed's): the k largest along the last axis, descending */
    n->ival = B_TOPK;
    if (!arity(s, n, m, 1, 1)) return TY_ERR;
    tl_sema_expect_i64(s, a, "k");
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`topk` needs a float tensor, not %s", tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    if (t->rank == 0) tl_sema_error(s, n, "`topk` needs a tensor of at least 1 axis");
    return t;
  }
  if (!strcmp(m, "norm")) { /* torch's norm(p = 2): (sum |x|^p)^(1/p) over every element */
    n->ival = B_NORM;
    if (!arity(s, n, m, 0, 1)) return TY_ERR;
    if (a) {
      tl_ty *v = tl_sema_expr_hint(s, a, TY_F64_T);
      if (!tl_ty_is_numeric(v) && v->kind != TY_ERROR) tl_sema_mismatch(s, a, "norm order", TY_F64_T, v);
    }
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`norm` needs a float tensor, not %s", tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    return tl_sema_tensor(s, t->dtype, 0);
  }
  if (!strcmp(m, "dropout")) { /* torch's F.dropout(x, p, training = true) */
    n->ival = B_DROPOUT;
    if (!arity(s, n, m, 1, 2)) return TY_ERR;
    tl_ty *p = tl_sema_expr(s, a, TY_F64_T);
    if (!tl_ty_is_numeric(p) && p->kind != TY_ERROR) tl_sema_mismatch(s, a, "dropout probability", TY_F64_T, p);
    if (a->next) expect_bool(s, a->next, "training");
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64) {
      char b[64];
      tl_sema_error(s, n, "`dropout` needs a float tensor, not %s", tl_ty_name(t, b, sizeof b));
      return TY_ERR;
    }
    return t;
  }
  if (!strcmp(m, "device")) { /* the backend holding its values: "cpu", "opencl", "cuda" (LANGUAGE.md 12) */
    n->ival = B_DEVICE;
    return arity(s, n, m, 0, 0) ? TY_STR_T : TY_ERR;
  }
  if (!strcmp(m, "to")) { /* t.to("cpu"): a copy on that backend */
    n->ival = B_TO_DEVICE;
    if (!arity(s, n, m, 1, 1)) return TY_ERR;
    expect_string(s, a, "backend name");
    return tl_sema_tensor(s, t->dtype, t->rank);
  }
  if (!strcmp(m, "print") || !strcmp(m, "display") || (!strncmp(m, "print_", 6) && m[6] >= '1' && m[6] <= '3' && !m[7])) { /* display, print_1..3: the seed's spellings */
    n->ival = B_TENSOR_PRINT;
    return arity(s, n, m, 0, 0) ? TY_UNIT_T : TY_ERR;
  }
  if (!strcmp(m, "detach") && a) {
    n->ival = B_DETACH_GRAD;
    if (!arity(s, n, m, 0, 1)) return TY_ERR;
    if (a->kind == TL_N_FIELD_INIT) {
      if (strcmp(a->name, "requires_grad")) {
        tl_sema_error(s, a, "`detach` has no argument named `%s`", a->name);
        tl_diag_hint(s->diag, "its argument is `requires_grad: bool`");
        tl_sema_expr(s, a->lhs, NULL);
        return TY_ERR;
      }
      expect_bool(s, a->lhs, "requires_grad");
      a->ty = a->lhs->ty;
    } else expect_bool(s, a, "requires_grad");
    if (t->dtype >= 0 && t->dtype != TL_F32 && t->dtype != TL_F64 && a->kind != TL_N_FIELD_INIT && a->kind == TL_N_BOOL &&
        a->ival)
      tl_sema_error(s, n, "only a float tensor can require grad");
    return tl_sema_tensor(s, t->dtype, t->rank);
  }
  return NULL;
}
