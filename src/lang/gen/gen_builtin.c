/* gen_builtin.c — code for the builtins (LANGUAGE.md §4-5): print and format, the
 * Tensor:: constructors, tensor methods, scalar math, array literals. Each tensor
 * builtin is one call into rt_ops.h; its result is an owned temporary. */
#include <stdlib.h>
#include <string.h>

#include "lang/gen/gen_impl.h"

static const char *loc(gen *g, const tl_node *n) { return tl_gen_fmt(g, "%d, %d", n->line, n->col); }

static cv tensor_temp(gen *g, tl_node *n, const char *init) { return tl_gen_temp_value(g, n->ty, init); }

/* ---- printing ---- */

void tl_gen_fmt_value(gen *g, cv v, int prec, const tl_node *at, const char *dbg) {
  const char *c = v.c;
  bool plain = !strcmp(dbg, "0");
  switch (v.ty->kind) {
  case TY_I32: case TY_I64: case TY_U8: case TY_I8: case TY_I16: case TY_U16: case TY_U32:
    tl_gen_emit(g, "tlrt_fmt_i64(R, %s, %d);", c, prec);
    break;
  case TY_U64: tl_gen_emit(g, "tlrt_fmt_u64(R, %s);", c); break;
  case TY_F16: case TY_BF16: tl_gen_emit(g, "tlrt_fmt_half(R, %s, %d, %d);", c, v.ty->kind == TY_BF16, prec); break;
  case TY_F32: tl_gen_emit(g, "tlrt_fmt_f32(R, %s, %d);", c, prec); break;
  case TY_F64: tl_gen_emit(g, "tlrt_fmt_f64(R, %s, %d);", c, prec); break;
  case TY_BOOL: tl_gen_emit(g, "tlrt_fmt_bool(R, %s);", c); break;
  case TY_CHAR:
    if (plain) tl_gen_emit(g, "tlrt_fmt_char(R, %s);", c);
    else tl_gen_emit(g, "tlrt_fmt_char_as(R, %s, %s);", c, dbg);
    break;
  case TY_STR:
    if (plain) tl_gen_emit(g, "tlrt_fmt_str(R, %s);", c);
    else tl_gen_emit(g, "tlrt_fmt_str_as(R, %s, %s);", c, dbg);
    break;
  case TY_TENSOR:
    if (v.ty->ent_cols) /* a query result: entity columns by name (rt_logic.c) */
      tl_gen_emit(g, "tlrt_fmt_entities(R, %s, %uu, %d, %d);", c, (unsigned)v.ty->ent_cols, at ? at->line : 0, at ? at->col : 0);
    else tl_gen_emit(g, "tlrt_fmt_tensor(R, %s, %d, %d, %d);", c, prec, at ? at->line : 0, at ? at->col : 0);
    break;
  case TY_STRUCT: tl_gen_emit(g, "%s__fmt(R, %s, %s);", v.ty->st->cname, c, dbg); break;
  case TY_FN: tl_gen_emit(g, "tlrt_fmt_text(R, \"<fn>\", 4);"); break; /* a field of a struct printed */
  default: tl_gen_emit(g, "tlrt_fmt_text(R, \"()\", 2);"); break;
  }
}

static void emit_text(gen *g, const char *s, size_t n) {
  if (!n) return;
  tl_strbuf b = {0};
  for (size_t i = 0; i < n; i++) tl_strbuf_printf(&b, "\\%03o", (unsigned char)s[i]);
  char *lit = tl_gen_take_text(g, &b);
  tl_gen_emit(g, "tlrt_fmt_text(R, \"%s\", %zu);", lit ? lit : "", n);
  free(lit);
}

/* one argument of print: a number read from a tensor of unknown dtype prints as the
 * tensor's dtype does (rt.c's tlrt_fmt_number), anything else as its type */
static void print_value(gen *g, cv v, const char *dtype, int prec, const tl_node *at, const char *dbg) {
  if (dtype) tl_gen_emit(g, "tlrt_fmt_number(R, %s, (int)%s, %d);", v.c, dtype, prec);
  else tl_gen_fmt_value(g, v, prec, at, dbg);
}

static cv gen_print(gen *g, tl_node *n) {
  cv vals[64];
  const char *dtypes[64];
  int k = 0;
  tl_node *fmt = n->args && n->args->kind == TL_N_STR ? n->args : NULL;
  for (tl_node *a = fmt ? fmt->next : n->args; a && k < 64; a = a->next) {
    dtypes[k] = NULL;
    vals[k] = a->flex_read ? tl_gen_flex_read(g, a, &dtypes[k]) : tl_gen_expr(g, a);
    vals[k].node = a;
    k++;
  }
  tl_gen_emit(g, "tlrt_fmt_begin(R);");
  if (!fmt) {
    if (k) print_value(g, vals[0], dtypes[0], -1, n->args, "0");
  } else {
    const char *s = fmt->str;
    size_t start = 0;
    int arg = 0;
    for (size_t i = 0; i < fmt->len; i++) {
      char c = s[i];
      if ((c == '{' || c == '}') && i + 1 < fmt->len && s[i + 1] == c) {
        emit_text(g, s + start, i + 1 - start); /* one brace of the pair */
        start = i + 2;
        i++;
        continue;
      }
      if (c != '{') continue;
      emit_text(g, s + start, i - start);
      size_t j = i;
      tl_fmt_spec sp;
      tl_fmt_spec_read(s, fmt->len, i, &j, &sp); /* checked by sema */
      const char *at = sp.width ? tl_gen_new_temp(g, TY_I64_T, "(int64_t)R->fmt_len") : NULL;
      if (arg < k) print_value(g, vals[arg], dtypes[arg], sp.prec, vals[arg].node, sp.debug ? "1" : "0"); /* `{:?}`: quoted */
      if (at && arg < k) { /* padded to the width: numbers right, the rest left, unless aligned */
        bool num = tl_ty_is_numeric(vals[arg].ty) || dtypes[arg];
        char align = sp.align ? sp.align : num ? '>' : '<';
        tl_gen_emit(g, "tlrt_fmt_pad(R, (size_t)%s, %d, '%c', %d, %d);", at, sp.width, align, (unsigned char)sp.fill, sp.zero && num && !sp.align);
      }
      arg++;
      i = j;
      start = j + 1;
    }
    emit_text(g, s + start, fmt->len - start);
  }
  if (n->ival == B_FORMAT) return tl_gen_temp_value(g, TY_STR_T, "tlrt_fmt_take(R)");
  tl_gen_emit(g, "tlrt_fmt_print(R, %s);", n->ival == B_PRINTLN ? "true" : "false");
  return tl_gen_scalar("0", TY_UNIT_T);
}

/* ---- shapes and arrays ---- */

/* a shape argument -> "NDIM, DIMS" for rt_ops calls */
const char *tl_gen_shape_arg(gen *g, tl_node *a, const tl_ty *tensor_ty) {
  if (a->kind == TL_N_ARRAY) {
    tl_strbuf b = {0};
    int k = 0;
    for (tl_node *e = a->args; e; e = e->next, k++) tl_strbuf_printf(&b, "%s%s", k ? ", " : "", tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, e).c));
    char *list = tl_gen_take_text(g, &b);
    const char *r = k ? tl_gen_fmt(g, "%d, (int64_t[]){%s}", k, list ? list : "") : "0, NULL";
    free(list);
    return r;
  }
  cv v = tl_gen_expr(g, a);
  const char *dims = tl_gen_fmt(g, "t%d", ++g->ntmp);
  tl_gen_emit(g, "int64_t %s[TL_MAX_DIMS];", dims);
  if (v.ty->kind == TY_I64) {
    tl_gen_emit(g, "%s[0] = %s;", dims, v.c);
    return tl_gen_fmt(g, "1, %s", dims);
  }
  if (tl_ty_is_vec(v.ty)) /* a Vec<i64> of dims: read as a 1-D tensor */
    v = tl_gen_temp_value(g, tensor_ty, tl_gen_fmt(g, "tlrt_vec_to_tensor(R, %s, %d, %d, %d)", v.c, TL_I64, a->line, a->col));
  const char *nd = tl_gen_new_temp(g, TY_I64_T, tl_gen_fmt(g, "tlrt_shape(R, %s, %s, %d, %d)", v.c, dims, a->line, a->col));
  return tl_gen_fmt(g, "(int)%s, %s", nd, dims);
}

static void array_leaves(gen *g, tl_node *n, tl_strbuf *vals, const char *cast, int64_t *shape, int depth, int *count) {
  int k = 0;
  for (tl_node *e = n->args; e; e = e->next, k++) {
    if (e->kind == TL_N_ARRAY) array_leaves(g, e, vals, cast, shape, depth + 1, count);
    else {
      cv v = tl_gen_expr(g, e);
      tl_strbuf_printf(vals, "%s(%s)%s", (*count)++ ? ", " : "", cast, tl_gen_new_temp(g, e->ty, v.c));
    }
  }
  if (depth < TL_MAX_DIMS) shape[depth] = k;
}

/* a tensor leaf, or a number read from tensor elements (gen_grad.c): stacked */
static bool has_tensor_leaf(const tl_node *n) {
  for (const tl_node *e = n->args; e; e = e->next)
    if (e->kind == TL_N_ARRAY ? has_tensor_leaf(e) : (e->ty && e->ty->kind == TY_TENSOR) || tl_gen_grad_elem(e)) return true;
  return false;
}

/* an element of a stacked array literal (arr) as a tensor of the array's dtype */
static const char *stacked_elem(gen *g, tl_node *e, const tl_node *arr) {
  int dtype = arr->ty->dtype;
  if (e->kind == TL_N_ARRAY || e->ty->kind == TY_TENSOR) return tl_gen_expr(g, e).c;
  if (tl_gen_grad_elem(e)) {
    cv p = tl_gen_as_tensor(g, e);
    if (p.ty->dtype == dtype) return p.c;
    return tl_gen_new_temp(g, arr->ty, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %s)", p.c, dtype, loc(g, e)));
  }
  return tl_gen_new_temp(g, arr->ty, tl_gen_fmt(g, "tlrt_scalar(R, %d, (double)(%s))", dtype, tl_gen_expr(g, e).c));
}

cv tl_gen_array(gen *g, tl_node *n) {
  if (has_tensor_leaf(n)) { /* [a, b] of tensors: stacked */
    tl_strbuf b = {0};
    int k = 0;
    for (tl_node *e = n->args; e; e = e->next, k++) tl_strbuf_printf(&b, "%s%s", k ? ", " : "", stacked_elem(g, e, n));
    char *list = tl_gen_take_text(g, &b);
    cv r = tensor_temp(g, n, tl_gen_fmt(g, "tlrt_cat(R, true, %d, (tl_tensor *[]){%s}, 0, %s)", k, list ? list : "", loc(g, n)));
    free(list);
    return r;
  }
  int64_t shape[TL_MAX_DIMS] = {0};
  tl_strbuf vals = {0};
  int count = 0;
  /* i64 elements travel as int64_t: a double holds integers exactly only up to 2^53 */
  bool ints = n->ty->dtype == TL_I64;
  array_leaves(g, n, &vals, ints ? "int64_t" : "double", shape, 0, &count);
  int rank = n->ty->rank > 0 ? n->ty->rank : 1;
  tl_strbuf sh = {0};
  for (int i = 0; i < rank && i < TL_MAX_DIMS; i++) tl_strbuf_printf(&sh, "%s%lld", i ? ", " : "", (long long)shape[i]);
  char *v = tl_gen_take_text(g, &vals), *s = tl_gen_take_text(g, &sh);
  cv r = tensor_temp(g, n, tl_gen_fmt(g, "tlrt_from_%s(R, %d, %d, (int64_t[]){%s}, %s)", ints ? "i64" : "f64", n->ty->dtype, rank,
                                   s ? s : "0", count ? tl_gen_fmt(g, "(%s[]){%s}", ints ? "int64_t" : "double", v) : "NULL"));
  free(v);
  free(s);
  return r;
}

/* ---- math ---- */

int tl_gen_unop_code(tl_builtin id) {
  switch (id) {
  case B_NEG: return TLRT_UNOP_NEG;
  case B_EXP: return TLRT_UNOP_EXP;
  case B_LOG: return TLRT_UNOP_LOG;
  case B_SQRT: return TLRT_UNOP_SQRT;
  case B_SIN: return TLRT_UNOP_SIN;
  case B_COS: return TLRT_UNOP_COS;
  case B_TANH: return TLRT_UNOP_TANH;
  case B_SIGMOID: return TLRT_UNOP_SIGMOID;
  case B_RELU: return TLRT_UNOP_RELU;
  case B_GELU: return TLRT_UNOP_GELU;
  case B_GELU_TANH: return TLRT_UNOP_GELU_TANH;
  case B_ABS: return TLRT_UNOP_ABS;
  case B_LOG1P: return TLRT_UNOP_LOG1P;
  case B_EXPM1: return TLRT_UNOP_EXPM1;
  case B_ERF: return TLRT_UNOP_ERF;
  case B_FLOOR: return TLRT_UNOP_FLOOR;
  case B_CEIL: return TLRT_UNOP_CEIL;
  default: return TLRT_UNOP_ROUND;
  }
}

/* scalar math in C: f32 uses the float functions */
static cv scalar_math(gen *g, tl_node *n, tl_builtin id, cv x, cv *y) {
  tl_ty *t = x.ty;
  const char *f = t->kind == TY_F32 ? "f" : "";
  if (tl_ty_is_int(t)) {
    const char *c = tl_gen_ctype(g, t);
    switch (id) {
    case B_ABS: return tl_gen_scalar(tl_gen_fmt(g, "((%s)((%s) < 0 ? 0 - (uint64_t)(%s) : (uint64_t)(%s)))", c, x.c, x.c, x.c), t);
    case B_MAXIMUM: return tl_gen_scalar(tl_gen_fmt(g, "((%s) > (%s) ? (%s) : (%s))", x.c, y->c, x.c, y->c), t);
    case B_MINIMUM: return tl_gen_scalar(tl_gen_fmt(g, "((%s) < (%s) ? (%s) : (%s))", x.c, y->c, x.c, y->c), t);
    case B_RELU: return tl_gen_scalar(tl_gen_fmt(g, "((%s) > 0 ? (%s) : 0)", x.c, x.c), t);
    default: return tl_gen_scalar(tl_gen_fmt(g, "((%s)tl__ipow(R, (uint64_t)(%s), (int64_t)(%s), %d, %d))", c, x.c, y->c, n->line, n->col), t);
    }
  }
  if (tl_ty_is_half(t)) { /* computed in f32, the result rounded back to the format */
    cv r = scalar_math(g, n, id, (cv){.c = x.c, .ty = TY_F32_T, .temp = -1}, y ? &(cv){.c = y->c, .ty = TY_F32_T, .temp = -1} : NULL);
    return tl_gen_scalar(tl_gen_float_result(g, t, r.c), t);
  }
  switch (id) {
  case B_NEG: return tl_gen_scalar(tl_gen_fmt(g, "(-%s)", x.c), t);
  case B_EXP: return tl_gen_scalar(tl_gen_fmt(g, "exp%s(%s)", f, x.c), t);
  case B_LOG: return tl_gen_scalar(tl_gen_fmt(g, "log%s(%s)", f, x.c), t);
  case B_LOG1P: return tl_gen_scalar(tl_gen_fmt(g, "log1p%s(%s)", f, x.c), t);
  case B_EXPM1: return tl_gen_scalar(tl_gen_fmt(g, "expm1%s(%s)", f, x.c), t);
  case B_ERF: return tl_gen_scalar(tl_gen_fmt(g, "erf%s(%s)", f, x.c), t);
  case B_SQRT: return tl_gen_scalar(tl_gen_fmt(g, "sqrt%s(%s)", f, x.c), t);
  case B_SIN: return tl_gen_scalar(tl_gen_fmt(g, "sin%s(%s)", f, x.c), t);
  case B_COS: return tl_gen_scalar(tl_gen_fmt(g, "cos%s(%s)", f, x.c), t);
  case B_TANH: return tl_gen_scalar(tl_gen_fmt(g, "tanh%s(%s)", f, x.c), t);
  case B_ABS: return tl_gen_scalar(tl_gen_fmt(g, "fabs%s(%s)", f, x.c), t);
  case B_FLOOR: return tl_gen_scalar(tl_gen_fmt(g, "floor%s(%s)", f, x.c), t);
  case B_CEIL: return tl_gen_scalar(tl_gen_fmt(g, "ceil%s(%s)", f, x.c), t);
  case B_ROUND: return tl_gen_scalar(tl_gen_fmt(g, "round%s(%s)", f, x.c), t);
  case B_SIGMOID: { /* as the tensor op: exp never overflows, sigmoid(-100.0) is 3.8e-44 */
    const char *v = tl_gen_new_temp(g, t, x.c);
    return tl_gen_scalar(tl_gen_fmt(g, "(%s >= 0 ? 1 / (1 + exp%s(-%s)) : exp%s(%s) / (1 + exp%s(%s)))", v, f, v, f, v, f, v), t);
  }
  case B_RELU: return tl_gen_scalar(tl_gen_fmt(g, "((%s) > 0 ? (%s) : 0)", x.c, x.c), t);
  case B_GELU: { /* x Phi(x), with erf */
    const char *v = tl_gen_new_temp(g, t, x.c);
    return tl_gen_scalar(tl_gen_fmt(g, "(0.5%s * %s * (1 + erf%s(%s * 0.7071067811865476%s)))", f, v, f, v, f), t);
  }
  case B_GELU_TANH: {
    const char *v = tl_gen_new_temp(g, t, x.c);
    return tl_gen_scalar(tl_gen_fmt(g, "(0.5%s * %s * (1 + tanh%s(0.7978845608028654%s * (%s + 0.044715%s * %s * %s * %s))))", f, v, f,
                              f, v, f, v, v, v), t);
  }
  case B_MAXIMUM: return tl_gen_scalar(tl_gen_fmt(g, "fmax%s(%s, %s)", f, x.c, y->c), t);
  case B_MINIMUM: return tl_gen_scalar(tl_gen_fmt(g, "fmin%s(%s, %s)", f, x.c, y->c), t);
  default: return tl_gen_scalar(tl_gen_fmt(g, "pow%s(%s, (%s)(%s))", f, x.c, tl_gen_ctype(g, t), y->c), t);
  }
  (void)n;
}

/* x made already (xn its node); a number read from tensor elements meeting a tensor
 * is a 0-d tensor, so its gradient flows (gen_grad.c) */
static cv math_call(gen *g, tl_node *n, tl_builtin id, cv x, const tl_node *xn, tl_node *yn) {
  cv y = {0};
  if (yn) y = tl_gen_grad_operand(g, yn, n->ty->kind == TY_TENSOR);
  if (x.ty->kind != TY_TENSOR && !(yn && y.ty->kind == TY_TENSOR)) return scalar_math(g, n, id, x, yn ? &y : NULL);
  if (!yn) return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_unop(R, %d, %s, %s)", tl_gen_unop_code(id), x.c, loc(g, n)));
  int op = id == B_POW ? TLRT_OP_POW : id == B_MAXIMUM ? TLRT_OP_MAX : TLRT_OP_MIN;
  bool px = xn->ty->kind != TY_TENSOR, py = yn->ty->kind != TY_TENSOR; /* numbers made 0-d tensors */
  if (x.ty->kind == TY_TENSOR && y.ty->kind == TY_TENSOR && px != py)
    return tl_gen_grad_meet(g, n, op, px ? y : x, px ? x : y, px);
  if (x.ty->kind == TY_TENSOR && y.ty->kind == TY_TENSOR)
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_binop(R, %d, %s, %s, %s)", op, x.c, y.c, loc(g, n)));
  bool left = y.ty->kind == TY_TENSOR;
  int sdt = left ? tl_ty_scalar_dtype(xn, x.ty) : tl_ty_scalar_dtype(yn, y.ty);
  return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_binop_s(R, %d, %s, (double)(%s), %d, %d, 0, %s)", op, left ? y.c : x.c,
                                   left ? x.c : y.c, sdt, left, loc(g, n)));
}

static cv gen_ctor(gen *g, tl_node *n) {
  tl_builtin id = (tl_builtin)n->ival;
  tl_node *a = n->args;
  switch (id) {
  case B_ZEROS: case B_ONES: case B_RANDN: case B_RAND: case B_FULL: {
    int kind = id == B_ZEROS ? TLRT_NEW_ZEROS : id == B_ONES ? TLRT_NEW_ONES : id == B_FULL ? TLRT_NEW_FULL
               : id == B_RANDN ? TLRT_NEW_RANDN : TLRT_NEW_RAND;
    const char *shape = tl_gen_shape_arg(g, a, n->ty);
    const char *value = id == B_FULL ? tl_gen_plain_number(g, a->next, "Tensor::full", "`Tensor::ones(shape) * v`") : "0";
    tl_node *rg = id == B_FULL ? a->next->next : a->next;
    if (rg && rg->kind == TL_N_FIELD_INIT) rg = rg->lhs; /* `requires_grad: b` */
    const char *req = rg ? tl_gen_expr(g, rg).c : "false";
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_new(R, %d, %s, (double)(%s), %s, %s)", kind, shape, value, req, loc(g, n)));
  }
  case B_LINSPACE: {
    const char *lo = tl_gen_expr(g, a).c, *hi = tl_gen_expr(g, a->next).c, *k = tl_gen_expr(g, a->next->next).c;
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_linspace(R, (double)(%s), (double)(%s), %s, %s)", lo, hi, k, loc(g, n)));
  }
  case B_ARANGE: case B_EYE: {
    const char *v[3] = {"0", "0", "0"};
    int k = 0;
    bool is_float = n->ty->dtype == TL_F32;
    for (; a && a->kind != TL_N_FIELD_INIT; a = a->next, k++) v[k] = tl_gen_expr(g, a).c;
    cv t = tensor_temp(g, n, id == B_EYE ? tl_gen_fmt(g, "tlrt_eye(R, %s, %s)", v[0], loc(g, n))
                                         : tl_gen_fmt(g, "tlrt_arange(R, %d, (double)(%s), (double)(%s), (double)(%s), %d, %s)",
                                                   k, v[0], v[1], v[2], is_float, loc(g, n)));
    if (a) /* `requires_grad: b`: a leaf that requires grad, as tlrt_new makes */
      tl_gen_emit(g, "if (%s) tlrt_enable_grad(R, &%s, %s);", tl_gen_expr(g, a->lhs).c, t.c, loc(g, n));
    return t;
  }
  default: { /* cat, stack */
    tl_strbuf b = {0};
    int k = 0;
    for (tl_node *e = a->args; e; e = e->next, k++) tl_strbuf_printf(&b, "%s%s", k ? ", " : "", tl_gen_expr(g, e).c);
    char *list = tl_gen_take_text(g, &b);
    const char *dim = a->next ? tl_gen_expr(g, a->next).c : "0";
    cv r = tensor_temp(g, n, tl_gen_fmt(g, "tlrt_cat(R, %s, %d, (tl_tensor *[]){%s}, %s, %s)", id == B_STACK ? "true" : "false",
                                     k, list ? list : "", dim, loc(g, n)));
    free(list);
    return r;
  }
  }
}

static int reduce_code(tl_builtin id) {
  switch (id) {
  case B_SUM: return TLRT_RED_SUM;
  case B_PROD: return TLRT_RED_PROD;
  case B_MEAN: return TLRT_RED_MEAN;
  case B_MAX: return TLRT_RED_MAX;
  case B_MIN: return TLRT_RED_MIN;
  case B_ARGMAX: return TLRT_RED_ARGMAX;
  case B_ARGMIN: return TLRT_RED_ARGMIN;
  case B_SOFTMAX: return TLRT_RED_SOFTMAX;
  default: return TLRT_RED_LOG_SOFTMAX;
  }
}

static cv gen_tensor_method(gen *g, tl_node *n, tl_builtin id) {
  if (id == B_ENABLE_GRAD) {
    /* a write: a variable or a field path (`m.w`), its structs copied first when shared */
    tl_gen_emit(g, "tlrt_enable_grad(R, &%s, %s);", tl_gen_place(g, n->lhs), loc(g, n));
    return tl_gen_scalar("0", TY_UNIT_T);
  }
  cv t = tl_gen_expr(g, n->lhs);
  tl_node *a = n->args;
  const char *l = loc(g, n);
  switch (id) {
  case B_NEG: case B_EXP: case B_LOG: case B_SQRT: case B_SIN: case B_COS: case B_TANH: case B_SIGMOID: case B_RELU:
  case B_GELU: case B_GELU_TANH: case B_ABS: case B_LOG1P: case B_EXPM1: case B_ERF: case B_FLOOR: case B_CEIL: case B_ROUND: case B_POW: case B_MAXIMUM: case B_MINIMUM:
    return math_call(g, n, id, t, n->lhs, a);
  case B_GT: case B_LT: case B_GE: case B_LE: case B_EQ: case B_NE: {
    static const tl_tok_kind ops[] = {TL_TOK_GT, TL_TOK_LT, TL_TOK_GE, TL_TOK_LE, TL_TOK_EQ, TL_TOK_NE};
    cv b = tl_gen_expr(g, a);
    tl_node tmp = *n;
    tmp.lhs = n->lhs;
    tmp.rhs = a;
    return tl_gen_binary_values(g, &tmp, ops[id - B_GT], t, b);
  }
  case B_CLAMP: {
    const char *lo = tl_gen_plain_number(g, a, "clamp", "`t.maximum(lo).minimum(hi)`"),
               *hi = tl_gen_plain_number(g, a->next, "clamp", "`t.maximum(lo).minimum(hi)`");
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_clamp(R, %s, (double)(%s), %d, (double)(%s), %d, %s)", t.c, lo,
                                     tl_ty_scalar_dtype(a, a->ty), hi, tl_ty_scalar_dtype(a->next, a->next->ty), l));
  }
  case B_SUMALL: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_reduce(R, %d, %s, 0, 0, %s)", TLRT_RED_SUM, t.c, l));
  case B_SUM: case B_MEAN: case B_MAX: case B_MIN: case B_ARGMAX: case B_ARGMIN: case B_SOFTMAX: case B_LOG_SOFTMAX: case B_PROD:
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_reduce(R, %d, %s, %d, %s, %s)", reduce_code(id), t.c, a != NULL,
                                     a ? tl_gen_expr(g, a).c : "0", l));
  case B_CUMSUM: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_cumsum(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_FLIP: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_flip(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_EXPAND: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_expand(R, %s, %s, %s)", t.c, tl_gen_shape_arg(g, a, n->ty), l));
  case B_RESHAPE: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_reshape(R, %s, %s, %s)", t.c, tl_gen_shape_arg(g, a, n->ty), l));
  case B_TRANSPOSE: {
    const char *d0 = tl_gen_expr(g, a).c, *d1 = tl_gen_expr(g, a->next).c;
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_transpose(R, %s, %s, %s, %s)", t.c, d0, d1, l));
  }
  case B_PERMUTE: {
    tl_strbuf b = {0};
    int k = 0;
    for (; a; a = a->next, k++) tl_strbuf_printf(&b, "%s%s", k ? ", " : "", tl_gen_expr(g, a).c);
    char *list = tl_gen_take_text(g, &b);
    cv r = tensor_temp(g, n, tl_gen_fmt(g, "tlrt_permute(R, %s, %d, (int64_t[]){%s}, %s)", t.c, k, k ? list : "0", l));
    free(list);
    return r;
  }
  case B_UNSQUEEZE: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_unsqueeze(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_SQUEEZE: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_squeeze(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_SHAPE: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_shape_of(R, %s)", t.c));
  case B_DIM: return tl_gen_temp_value(g, TY_I64_T, tl_gen_fmt(g, "tlrt_dim(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_LEN: return tl_gen_temp_value(g, TY_I64_T, tl_gen_fmt(g, "tlrt_len(R, %s, %s)", t.c, l));
  case B_NUMEL: return tl_gen_temp_value(g, TY_I64_T, tl_gen_fmt(g, "tl_numel(%s)", t.c));
  case B_MATMUL: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_matmul(R, %s, %s, %s)", t.c, tl_gen_expr(g, a).c, l));
  case B_ITEM: return tl_gen_number_read(g, tl_gen_fmt(g, "tlrt_item(R, %s, %s)", t.c, l), n->ty, n->lhs->ty);
  case B_CLONE: case B_CONTIGUOUS: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_clone(R, %s, %s)", t.c, l));
  case B_TO_DTYPE: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_to_dtype(R, %s, %d, %s)", t.c, (int)n->len, l));
  case B_BACKWARD: tl_gen_emit(g, "tlrt_backward(R, %s, %s);", t.c, l); return tl_gen_scalar("0", TY_UNIT_T);
  case B_ZERO_GRAD: tl_gen_emit(g, "tlrt_zero_grad(R, %s, %s);", t.c, l); return tl_gen_scalar("0", TY_UNIT_T);
  case B_GRAD: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_grad(R, %s, %s)", t.c, l));
  case B_DETACH: return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_detach(R, %s, %s)", t.c, l));
  case B_REQUIRES_GRAD: return tl_gen_scalar(tl_gen_fmt(g, "(tl_requires_grad(%s) != 0)", t.c), TY_BOOL_T);
  case B_MSE_LOSS: case B_CROSS_ENTROPY:
    return tensor_temp(g, n, tl_gen_fmt(g, "tlrt_loss(R, %d, %s, %s, %s)", id == B_CROSS_ENTROPY, t.c, tl_gen_expr(g, a).c, l));
  default: tl_gen_fail(g, n, "unknown tensor method"); return tl_gen_scalar("0", n->ty);
  }
}

/* x.clamp(lo, hi) on a number: lo > hi is an error, as Rust's assert; NaN stays NaN */
static cv scalar_clamp(gen *g, tl_node *n) {
  cv t = tl_gen_expr(g, n->lhs);
  const char *x = tl_gen_new_temp(g, t.ty, t.c), *lo = tl_gen_new_temp(g, t.ty, tl_gen_expr(g, n->args).c),
             *hi = tl_gen_new_temp(g, t.ty, tl_gen_expr(g, n->args->next).c);
  tl_gen_emit(g, "if (!(%s <= %s)) tlrt_fail(R, %d, %d, \"clamp: the lower bound is above the upper one\");", lo, hi,
              n->line, n->col);
  return tl_gen_scalar(tl_gen_fmt(g, "(%s < %s ? %s : %s > %s ? %s : %s)", x, lo, lo, x, hi, hi, x), t.ty);
}

cv tl_gen_builtin_call(gen *g, tl_node *n) {
  tl_builtin id = (tl_builtin)n->ival;
  if (id == B_PRINT || id == B_PRINTLN || id == B_FORMAT) return gen_print(g, n);
  if (id >= B_IO_FIRST && id <= B_IO_LAST) return tl_gen_io_call(g, n); /* gen_io.c */
  if (id >= B_NN_FIRST && id <= B_NN_LAST) return tl_gen_nn_call(g, n); /* gen_nn.c */
  if (id >= B_ZEROS && id <= B_STACK) return gen_ctor(g, n);
  if (id == B_SYS) return tl_gen_sys_call(g, n); /* gen_sys.c */
  if (id == B_DIST) return tl_gen_dist_call(g, n); /* gen_dist.c */
  if (id == B_ML) return tl_gen_ml_call(g, n);     /* gen_ml.c */
  if (id == B_OPS) return tl_gen_ops_call(g, n);   /* gen_ops.c */
  if (id == B_OPTION) return tl_gen_option_method(g, n); /* gen_option.c */
  if (id == B_VEC) return tl_gen_vec_call(g, n); /* gen_vec.c */
  if (id == B_ITER) return tl_gen_iter_call(g, n); /* gen_iter.c */
  if (id == B_FLOAT_TEST) {
    static const char *const fn[] = {"isnan", "isinf", "isfinite"};
    return tl_gen_scalar(tl_gen_fmt(g, "(%s(%s) != 0)", fn[n->len], tl_gen_expr(g, n->lhs).c), TY_BOOL_T);
  }
  if (id == B_STR_PARSE) return tl_gen_str_parse(g, n); /* gen_sys.c */
  if (id == B_STR_LEN) return tl_gen_scalar(tl_gen_fmt(g, "(%s)->len", tl_gen_expr(g, n->lhs).c), TY_I64_T);
  if (n->kind == TL_N_CALL) { /* free math: abs(x), max(a, b) */
    cv x = tl_gen_grad_operand(g, n->args, n->ty->kind == TY_TENSOR);
    return math_call(g, n, id, x, n->args, n->args->next);
  }
  if (n->lhs->ty->kind == TY_TENSOR) return gen_tensor_method(g, n, id);
  if (id == B_CLAMP) return scalar_clamp(g, n);
  cv x = tl_gen_grad_operand(g, n->lhs, n->ty->kind == TY_TENSOR); /* scalar methods: x.sqrt(), a.max(b) */
  return math_call(g, n, id, x, n->lhs, n->args);
}
