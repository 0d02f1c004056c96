/* sema_builtin.c — the checker's calls: user functions and methods, the builtins of
 * LANGUAGE.md §4-5 (print, Tensor::, tensor methods, scalar math), and tensor
 * comprehensions (§7). A builtin is found by name in a table and its id goes in
 * node->ival for the code generator. */
#include <stdio.h>
#include <string.h>

#include "lang/check/sema_impl.h"

typedef enum { ARGS_NONE, ARGS_DIM, ARGS_OPT_DIM, ARGS_VALUE, ARGS_SHAPE, ARGS_DIMS, ARGS_TWO_DIMS, ARGS_TWO_VALUES } arg_rule;

typedef struct {
  const char *name;
  tl_builtin id;
  arg_rule args;
} method_entry;

/* tensor methods (§5); elementwise math also works on f32/f64 scalars */
static const method_entry tensor_methods[] = {
    {"neg", B_NEG, ARGS_NONE}, {"exp", B_EXP, ARGS_NONE}, {"log", B_LOG, ARGS_NONE}, {"ln", B_LOG, ARGS_NONE},
    {"sqrt", B_SQRT, ARGS_NONE}, {"sin", B_SIN, ARGS_NONE}, {"cos", B_COS, ARGS_NONE}, {"tanh", B_TANH, ARGS_NONE},
    {"sigmoid", B_SIGMOID, ARGS_NONE}, {"relu", B_RELU, ARGS_NONE}, {"gelu", B_GELU, ARGS_NONE},
    {"gelu_tanh", B_GELU_TANH, ARGS_NONE}, {"log1p", B_LOG1P, ARGS_NONE},
    {"expm1", B_EXPM1, ARGS_NONE}, {"erf", B_ERF, ARGS_NONE},
    {"abs", B_ABS, ARGS_NONE}, {"floor", B_FLOOR, ARGS_NONE}, {"ceil", B_CEIL, ARGS_NONE},
    {"round", B_ROUND, ARGS_NONE}, {"pow", B_POW, ARGS_VALUE}, {"powf", B_POW, ARGS_VALUE},
    {"powi", B_POW, ARGS_VALUE}, {"maximum", B_MAXIMUM, ARGS_VALUE}, {"minimum", B_MINIMUM, ARGS_VALUE},
    {"clamp", B_CLAMP, ARGS_TWO_VALUES}, {"gt", B_GT, ARGS_VALUE}, {"lt", B_LT, ARGS_VALUE},
    {"ge", B_GE, ARGS_VALUE}, {"le", B_LE, ARGS_VALUE}, {"eq", B_EQ, ARGS_VALUE}, {"ne", B_NE, ARGS_VALUE},
    {"sum", B_SUM, ARGS_OPT_DIM}, {"sumall", B_SUMALL, ARGS_NONE}, {"mean", B_MEAN, ARGS_OPT_DIM},
    {"max", B_MAX, ARGS_OPT_DIM}, {"min", B_MIN, ARGS_OPT_DIM}, {"argmax", B_ARGMAX, ARGS_DIM},
    {"argmin", B_ARGMIN, ARGS_DIM}, {"softmax", B_SOFTMAX, ARGS_DIM}, {"log_softmax", B_LOG_SOFTMAX, ARGS_DIM},
    {"reshape", B_RESHAPE, ARGS_SHAPE}, {"view", B_RESHAPE, ARGS_SHAPE}, {"transpose", B_TRANSPOSE, ARGS_TWO_DIMS},
    {"permute", B_PERMUTE, ARGS_DIMS}, {"unsqueeze", B_UNSQUEEZE, ARGS_DIM}, {"squeeze", B_SQUEEZE, ARGS_DIM},
    {"shape", B_SHAPE, ARGS_NONE}, {"dim", B_DIM, ARGS_DIM}, {"size", B_DIM, ARGS_DIM}, {"len", B_LEN, ARGS_NONE},
    {"numel", B_NUMEL, ARGS_NONE}, {"matmul", B_MATMUL, ARGS_VALUE}, {"item", B_ITEM, ARGS_NONE},
    {"clone", B_CLONE, ARGS_NONE}, {"contiguous", B_CONTIGUOUS, ARGS_NONE}, {"backward", B_BACKWARD, ARGS_NONE},
    {"grad", B_GRAD, ARGS_NONE}, {"detach", B_DETACH, ARGS_NONE}, {"enable_grad", B_ENABLE_GRAD, ARGS_NONE},
    {"requires_grad", B_REQUIRES_GRAD, ARGS_NONE}, {"zero_grad", B_ZERO_GRAD, ARGS_NONE},
    {"mse_loss", B_MSE_LOSS, ARGS_VALUE}, {"cross_entropy", B_CROSS_ENTROPY, ARGS_VALUE},
    {"float", B_TO_DTYPE, ARGS_NONE}, {"double", B_TO_DTYPE, ARGS_NONE}, {"long", B_TO_DTYPE, ARGS_NONE},
    {"int", B_TO_DTYPE, ARGS_NONE}, {"bool", B_TO_DTYPE, ARGS_NONE}, {"half", B_TO_DTYPE, ARGS_NONE},
    {"bfloat16", B_TO_DTYPE, ARGS_NONE}, {"byte", B_TO_DTYPE, ARGS_NONE}, {"char", B_TO_DTYPE, ARGS_NONE},
    {"short", B_TO_DTYPE, ARGS_NONE},
    {"prod", B_PROD, ARGS_OPT_DIM}, {"cumsum", B_CUMSUM, ARGS_DIM}, {"expand", B_EXPAND, ARGS_SHAPE},
    {"flip", B_FLIP, ARGS_DIM}, {"dot", B_MATMUL, ARGS_VALUE}, {"broadcast_to", B_EXPAND, ARGS_SHAPE},
};

static const method_entry *find_method(const char *name) {
  for (size_t i = 0; i < sizeof tensor_methods / sizeof tensor_methods[0]; i++)
    if (!strcmp(tensor_methods[i].name, name)) return &tensor_methods[i];
  return NULL;
}

void tl_sema_check_rest(sema *s, tl_node *a) {
  for (; a; a = a->next) tl_sema_expr(s, a->kind == TL_N_FIELD_INIT ? a->lhs : a, NULL);
}

static bool check_count(sema *s, tl_node *n, const char *name, int got, int lo, int hi) {
  if (got >= lo && got <= hi) return true;
  if (lo == hi) tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", name, lo, lo == 1 ? "" : "s", got);
  else tl_sema_error(s, n, "`%s` takes %d to %d arguments, not %d", name, lo, hi, got);
  return false;
}

/* a shape: an array literal of integers, or a 1-D integer tensor; its rank when known */
int tl_sema_check_shape(sema *s, tl_node *a) {
  if (a->kind == TL_N_ARRAY) {
    int k = 0;
    for (tl_node *e = a->args; e; e = e->next, k++) tl_sema_expect_i64(s, e, "shape dimension");
    a->ty = tl_sema_tensor(s, TL_I64, 1);
    return k;
  }
  tl_ty *t = tl_sema_expr(s, a, NULL);
  if (t->kind == TY_ERROR) return -1;
  if (t->kind == TY_I64) return 1; /* a single dimension */
  /* a Vec<i64> of dims, as the seed language builds shapes: its length is the rank,
   * known when the program runs */
  if (tl_ty_is_vec(t) && t->st->targs[0] && t->st->targs[0]->kind == TY_I64) return -1;
  if (t->kind != TY_TENSOR || t->dtype == TL_BOOL) { /* a float tensor holding whole numbers: the seed's (checked when it runs) */
    char b[64];
    tl_sema_error(s, a, "a shape is an array of integers like `[2, 3]` (or a Vec<i64>), not %s", tl_ty_name(t, b, sizeof b));
  }
  return -1;
}

/* a tensor operand or a number (broadcast to the tensor's dtype) */
static tl_ty *check_value(sema *s, tl_node *a, int dtype) {
  tl_ty *t = tl_sema_expr_hint(s, a, dtype == TL_F64 ? TY_F64_T : dtype == TL_F32 || dtype < 0 ? TY_F32_T : NULL);
  if (t->kind != TY_TENSOR && !tl_ty_is_numeric(t) && t->kind != TY_BOOL && t->kind != TY_ERROR) {
    char b[64];
    tl_sema_error(s, a, "expected a tensor or a number, found %s", tl_ty_name(t, b, sizeof b));
    return TY_ERR;
  }
  return t;
}

/* the type of elementwise x (op) y, one of them a tensor: the dtype they promote to
 * (tl_ty_binary_dtype), the rank they broadcast to */
static tl_ty *elementwise_ty(sema *s, const tl_node *xn, const tl_ty *x, const tl_node *yn, const tl_ty *y) {
  if (x->kind == TY_ERROR || y->kind == TY_ERROR) return TY_ERR;
  int rank = x->kind != TY_TENSOR ? y->rank : y->kind != TY_TENSOR ? x->rank
             : x->rank < 0 || y->rank < 0 ? -1 : x->rank > y->rank ? x->rank : y->rank;
  return tl_sema_tensor(s, tl_ty_binary_dtype(xn, x, yn, y), rank);
}

static bool is_literal_number(const tl_node *n) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) n = n->lhs;
  return (n->kind == TL_N_INT || n->kind == TL_N_FLOAT) && !tl_sema_const_type(n); /* a constant has its type */
}

/* ---- user functions ---- */

static bool is_read_of(tl_node *n, void *var) {
  return (n->kind == TL_N_IDENT || n->kind == TL_N_SELF) && n->var == var;
}

/* `f(&mut a, a)`: the callee would see its own writes through the other argument, so
 * (as in Rust) a variable lent as `&mut` is not read elsewhere in the same call */
static void check_aliasing(sema *s, tl_node *call, const tl_var *lent, const tl_node *except) {
  if (!lent) return;
  for (tl_node *a = call->args; a; a = a->next)
    if (a != except && tl_ast_find(a, is_read_of, (void *)lent)) {
      tl_sema_error(s, a, "`%s` is lent as `&mut` to this call and cannot also be read in it", lent->name);
      tl_diag_hint(s->diag, "copy it first: `let copy = %s;`", lent->name);
      return;
    }
}

static void check_args(sema *s, tl_node *call, tl_fninfo *f, tl_node *args) {
  if (f->partial) { /* its parameters are not known: the arguments are checked alone */
    for (tl_node *a = args; a; a = a->next) tl_sema_expr(s, a->kind == TL_N_UNARY && a->op == TL_TOK_AMP ? a->lhs : a, NULL);
    return;
  }
  int got = tl_ast_count(args);
  if (got != f->nparams) {
    tl_sema_error(s, call, "`%s` takes %d argument%s, not %d", f->name, f->nparams, f->nparams == 1 ? "" : "s", got);
    for (tl_node *a = args; a; a = a->next) tl_sema_expr(s, a->kind == TL_N_UNARY && a->op == TL_TOK_AMP ? a->lhs : a, NULL);
    return;
  }
  tl_var **p = f->params + (f->self ? 1 : 0);
  for (tl_node *a = args; a; a = a->next, p++) {
    bool amp = a->kind == TL_N_UNARY && a->op == TL_TOK_AMP;
    if ((*p)->kind == VAR_PARAM_REF) {
      if (!amp) {
        tl_sema_error(s, a, "parameter `%s` is `&mut`: pass `&mut` a variable", (*p)->name);
        tl_sema_expr(s, a, NULL);
        continue;
      }
      tl_ty *t = tl_sema_expr(s, a->lhs, (*p)->ty);
      a->ty = t;
      if (!tl_sema_ty_fits((*p)->ty, t)) tl_sema_mismatch(s, a->lhs, "argument", (*p)->ty, t);
      else if (a->lhs->var) tl_sema_widen(s, a->lhs->var, (*p)->ty); /* the callee may store any value of its type */
      if (a->lhs->kind != TL_N_IDENT && a->lhs->kind != TL_N_SELF) tl_sema_error(s, a, "`&mut` takes a variable");
      else if (tl_sema_closure_written(s, a, a->lhs->var)) continue; /* sema_closure.c */
      else if (a->lhs->var && !a->lhs->var->is_mut && a->lhs->var->kind != VAR_PARAM_REF) {
        tl_sema_error(s, a, "cannot pass immutable variable `%s` as `&mut`", a->lhs->var->name);
        tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", a->lhs->var->name);
      }
      continue;
    }
    if (amp) {
      tl_sema_error(s, a, "parameter `%s` is not `&mut`: pass the value", (*p)->name);
      tl_sema_expr(s, a->lhs, NULL);
      continue;
    }
    tl_ty *t = tl_sema_expr(s, a, (*p)->ty);
    if (!tl_sema_ty_fits((*p)->ty, t)) tl_sema_mismatch(s, a, "argument", (*p)->ty, t);
  }
  p = f->params + (f->self ? 1 : 0);
  for (tl_node *a = args; a; a = a->next, p++)
    if ((*p)->kind == VAR_PARAM_REF && a->kind == TL_N_UNARY && a->op == TL_TOK_AMP && a->lhs->var)
      check_aliasing(s, call, a->lhs->var, a);
  if (f->self && f->params[0]->kind == VAR_PARAM_REF && call->kind == TL_N_METHOD) {
    const tl_node *r = call->lhs;
    while (r->kind == TL_N_FIELD) r = r->lhs;
    if ((r->kind == TL_N_IDENT || r->kind == TL_N_SELF) && r->var) check_aliasing(s, call, r->var, NULL);
  }
}

/* ---- print, format ---- */

/* counts `{}` / `{:.N}` in a format string; -1 (and an error) when malformed */
static int count_placeholders(sema *s, tl_node *fmt) {
  int k = 0;
  for (size_t i = 0; i < fmt->len; i++) {
    char c = fmt->str[i];
    if ((c == '{' || c == '}') && i + 1 < fmt->len && fmt->str[i + 1] == c) {
      i++;
      continue;
    }
    if (c == '}') {
      tl_sema_error(s, fmt, "unmatched `}` in format string (write `}}` for a brace)");
      return -1;
    }
    if (c != '{') continue;
    size_t j;
    tl_fmt_spec spec;
    if (!tl_fmt_spec_read(fmt->str, fmt->len, i, &j, &spec)) goto bad; /* {:?}, {:.3}, {:>8}, {:08.3}... (types.c) */
    i = j;
    k++;
  }
  return k;
bad:
  tl_sema_error(s, fmt, "bad placeholder in format string: use `{}`, `{:?}`, `{:.N}` or a width `{:>8}` `{:<5}` `{:^6}` `{:08.3}`");
  return -1;
}

static tl_ty *check_print(sema *s, tl_node *n, tl_builtin id) {
  n->ival = id;
  tl_node *a = n->args;
  const char *name = id == B_PRINT ? "print" : id == B_PRINTLN ? "println" : "format";
  if (a && a->kind == TL_N_STR) {
    a->ty = TY_STR_T;
    int want = count_placeholders(s, a), got = tl_ast_count(a->next);
    for (tl_node *e = a->next; e; e = e->next) {
      tl_ty *t = tl_sema_expr(s, e, NULL);
      if (t->kind == TY_UNIT || t->kind == TY_RANGE) tl_sema_error(s, e, "this argument has no value to print");
      if (t->kind == TY_FN) {
        tl_sema_error(s, e, "a function value cannot be printed");
        tl_diag_hint(s->diag, "call it and print its result: `f(..)`");
      }
    }
    if (want >= 0 && want != got)
      tl_sema_error(s, n, "format string has %d placeholder%s but %d argument%s", want, want == 1 ? "" : "s", got,
                 got == 1 ? " follows" : "s follow");
  } else {
    int got = tl_ast_count(a);
    if (got > 1 || (got == 0 && id != B_PRINTLN)) {
      tl_sema_error(s, n, "`%s` takes a format string and its arguments, or a single value", name);
      for (; a; a = a->next) tl_sema_expr(s, a, NULL);
    } else if (a) {
      tl_ty *t = tl_sema_expr(s, a, NULL);
      if (t->kind == TY_UNIT || t->kind == TY_RANGE) tl_sema_error(s, a, "this argument has no value to print");
      if (t->kind == TY_FN) {
        tl_sema_error(s, a, "a function value cannot be printed");
        tl_diag_hint(s->diag, "call it and print its result: `f(..)`");
      }
    }
  }
  return id == B_FORMAT ? TY_STR_T : TY_UNIT_T;
}

/* ---- scalar math as free functions: abs(x), max(a, b) ... (also on tensors) ---- */

static const struct {
  const char *name;
  tl_builtin id;
  int nargs;
} math_fns[] = {{"abs", B_ABS, 1},     {"sqrt", B_SQRT, 1},       {"exp", B_EXP, 1},     {"log", B_LOG, 1},
                {"ln", B_LOG, 1},      {"sin", B_SIN, 1},         {"cos", B_COS, 1},     {"tanh", B_TANH, 1},
                {"sigmoid", B_SIGMOID, 1}, {"relu", B_RELU, 1},   {"floor", B_FLOOR, 1}, {"ceil", B_CEIL, 1},
                {"round", B_ROUND, 1}, {"min", B_MINIMUM, 2},     {"max", B_MAXIMUM, 2}, {"pow", B_POW, 2},
                {"log1p", B_LOG1P, 1}, {"expm1", B_EXPM1, 1}, {"erf", B_ERF, 1}};

/* elementwise math on a value x (scalar or tensor) and, for binary ones, y */
static tl_ty *check_math(sema *s, tl_node *n, tl_builtin id, tl_node *x, tl_node *y, tl_ty *tx) {
  bool ints_ok = id == B_ABS || id == B_MINIMUM || id == B_MAXIMUM || id == B_POW || id == B_RELU;
  char b[64];
  if (tx->kind == TY_ERROR) {
    if (y) tl_sema_expr(s, y, NULL);
    return TY_ERR;
  }
  if (tx->kind == TY_TENSOR) {
    if (id == B_FLOOR || id == B_CEIL || id == B_ROUND) {
      tl_sema_error(s, n->kind == TL_N_CALL ? n->lhs : n, "floor, ceil and round work on scalars; tensors do not have them yet");
      return TY_ERR;
    }
    return y ? elementwise_ty(s, x, tx, y, check_value(s, y, tx->dtype)) : tx;
  }
  if (!tl_ty_is_float(tx) && !(ints_ok && tl_ty_is_int(tx))) {
    tl_sema_error(s, n, "`%s` needs a %s, not %s", n->kind == TL_N_METHOD ? n->name : x->name ? x->name : "math",
               ints_ok ? "number or tensor" : "float or tensor", tl_ty_name(tx, b, sizeof b));
    if (y) tl_sema_expr(s, y, NULL);
    return TY_ERR;
  }
  if (y) {
    tl_ty *ty = tl_sema_expr_hint(s, y, tx); /* max(a, t) on a tensor is fine */
    if (ty->kind == TY_TENSOR) return elementwise_ty(s, x, tx, y, ty);
    if (ty->kind != TY_ERROR && ty->kind != tx->kind && !(id == B_POW && tl_ty_is_int(ty) && tl_ty_is_float(tx)))
      tl_sema_mismatch(s, y, "argument", tx, ty);
  }
  return tx;
}

static tl_ty *check_free_call(sema *s, tl_node *n, const char *name, tl_ty *expect) {
  (void)expect;
  if (!strcmp(name, "print")) return check_print(s, n, B_PRINT);
  if (!strcmp(name, "println")) return check_print(s, n, B_PRINTLN);
  if (!strcmp(name, "format")) return check_print(s, n, B_FORMAT);
  tl_fninfo *f;
  if (tl_sema_generic_call(s, n, name, expect, &f)) { /* max_of(1, 2), max_of::<f32>(..) (sema_generic.c) */
    if (!f) return TY_ERR;
    n->ref = f;
    check_args(s, n, f, n->args);
    return f->ret;
  }
  f = tl_sema_find_fn(s, name);
  if (f && !f->self_struct) {
    if (s->compr_depth) {
      tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", name);
      return TY_ERR;
    }
    n->ref = f;
    check_args(s, n, f, n->args);
    return f->ret;
  }
  tl_ty *sys = tl_sema_positional_struct(s, n, name, expect); /* `Linear(w, b)` (sema_sys.c) */
  if (!sys) sys = tl_sema_sys_call(s, n, name);               /* assert, args_get... (sema_sys.c) */
  if (sys) return sys;
  for (size_t i = 0; i < sizeof math_fns / sizeof math_fns[0]; i++) {
    if (strcmp(math_fns[i].name, name)) continue;
    n->ival = math_fns[i].id;
    if (!check_count(s, n, name, tl_ast_count(n->args), math_fns[i].nargs, math_fns[i].nargs)) {
      for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
      return TY_ERR;
    }
    tl_node *x = n->args, *y = x->next;
    if (y && is_literal_number(x) && !is_literal_number(y)) { /* max(0.0, x), pow(2.0, x): the literal takes x's type */
      tl_ty *ty = tl_sema_expr(s, y, NULL);
      tl_ty *tx = tl_sema_expr(s, x, ty->kind == TY_TENSOR ? tl_ty_of_dtype(ty->dtype) : ty);
      if (math_fns[i].id != B_POW) { /* min and max are symmetric: the typed operand goes first */
        n->args = y;
        y->next = x;
        x->next = NULL;
      }
      tl_ty *r = check_math(s, n, math_fns[i].id, y, NULL, ty);
      return r->kind == TY_TENSOR ? elementwise_ty(s, x, tx, y, ty) : r;
    }
    return check_math(s, n, math_fns[i].id, x, y, tl_sema_expr(s, x, NULL));
  }
  if (!strcmp(name, "range")) tl_sema_error(s, n, "`range(...)` is only used as a `for` head");
  else {
    tl_sema_error(s, n->lhs, "cannot find function `%s`", name);
    tl_suggest g;
    tl_suggest_init(&g, name);
    static const char *const printing[] = {"print", "println", "format"};
    for (size_t i = 0; i < 3; i++) tl_suggest_add(&g, printing[i]);
    for (size_t i = 0; i < sizeof math_fns / sizeof math_fns[0]; i++) tl_suggest_add(&g, math_fns[i].name);
    tl_sema_suggest_fns(s, &g);
    tl_sema_suggest_vars(s, &g); /* a closure held in a variable */
    tl_suggest_hint(&g, s->diag, "");
  }
  for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
  return TY_ERR;
}

/* ---- Tensor:: and P:: ---- */

static const struct {
  const char *name;
  tl_builtin id;
} tensor_ctors[] = {{"zeros", B_ZEROS}, {"ones", B_ONES}, {"full", B_FULL},   {"randn", B_RANDN}, {"rand", B_RAND},
                    {"arange", B_ARANGE}, {"eye", B_EYE}, {"linspace", B_LINSPACE}, {"cat", B_CAT}, {"stack", B_STACK}};

static tl_ty *check_tensor_list(sema *s, tl_node *a, int *rank, int *dtype) {
  if (a->kind != TL_N_ARRAY || !a->args) {
    tl_sema_error(s, a, "expected a list of tensors like `[a, b]`");
    tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  a->ty = TY_UNIT_T;
  bool first = true;
  for (tl_node *e = a->args; e; e = e->next) {
    tl_ty *t = tl_sema_expr(s, e, NULL);
    if (t->kind == TY_ERROR) continue;
    if (t->kind != TY_TENSOR) {
      tl_sema_mismatch(s, e, "list element", tl_sema_tensor(s, -1, -1), t);
      continue;
    }
    if (*rank < 0) *rank = t->rank;
    *dtype = first ? t->dtype : tl_ty_promote_dtypes(*dtype, t->dtype); /* as tl_cat promotes */
    first = false;
  }
  return TY_UNIT_T;
}

static void check_requires_grad(sema *s, tl_node *rg) {
  tl_node *v = rg->kind == TL_N_FIELD_INIT ? rg->lhs : rg;
  tl_ty *t = tl_sema_expr(s, v, TY_BOOL_T);
  rg->ty = t;
  if (!tl_sema_ty_fits(TY_BOOL_T, t)) tl_sema_mismatch(s, v, "requires_grad", TY_BOOL_T, t);
}

/* The creation functions (not cat and stack) take a last named argument
 * `requires_grad: b` (LANGUAGE.md §5); it stays in the list as a FIELD_INIT, where
 * the ownership pass sees what it reads. false after an error; *got counts the
 * arguments before it. */
static bool named_requires_grad(sema *s, tl_node *n, const char *name, tl_node **rg, int *got) {
  *rg = NULL;
  bool takes = n->ival != B_CAT && n->ival != B_STACK;
  for (tl_node *a = n->args; a; a = a->next) {
    if (a->kind != TL_N_FIELD_INIT) continue;
    if (!takes || strcmp(a->name, "requires_grad")) {
      tl_sema_error(s, a, "`%s` has no argument named `%s`", name, a->name);
      if (takes) tl_diag_hint(s->diag, "its named argument is `requires_grad: bool`");
      return false;
    }
    if (a->next) {
      tl_sema_error(s, a, "the named argument `requires_grad:` comes last");
      return false;
    }
    *rg = a;
  }
  *got = tl_ast_count(n->args) - (*rg != NULL);
  return true;
}

/* `Tensor::stack(a, b, .., dim)` (the seed language's spelling) is `stack([a, b, ..],
 * dim)`: the tensors before the last argument become one list */
static bool tensors_then_dim(sema *s, tl_node *n) {
  tl_node *list = tl_arena_alloc(s->arena, sizeof *list), *last = n->args;
  if (!list) return false;
  while (last->next->next) last = last->next;
  tl_node *dim = last->next;
  last->next = NULL;
  *list = (tl_node){.kind = TL_N_ARRAY, .line = n->args->line, .col = n->args->col, .args = n->args, .next = dim};
  n->args = list;
  return true;
}

static tl_ty *check_tensor_ctor(sema *s, tl_node *n, tl_builtin id, const char *name) {
  n->ival = id;
  int got;
  tl_node *a = n->args, *named;
  if (!named_requires_grad(s, n, name, &named, &got)) return TY_ERR;
  switch (id) {
  case B_ZEROS: case B_ONES: case B_RANDN: case B_RAND: case B_FULL: {
    int extra = id == B_FULL;
    /* requires_grad by name, or as the last positional argument */
    if (!check_count(s, n, name, got, 1 + extra, named ? 1 + extra : 2 + extra)) return TY_ERR;
    int rank = tl_sema_check_shape(s, a);
    if (extra) {
      tl_ty *v = tl_sema_expr(s, a->next, TY_F32_T);
      if (!tl_ty_is_numeric(v) && v->kind != TY_ERROR) tl_sema_mismatch(s, a->next, "fill value", TY_F32_T, v);
    }
    tl_node *rg = extra ? a->next->next : a->next;
    if (rg) check_requires_grad(s, rg);
    return tl_sema_tensor(s, TL_F32, rank);
  }
  case B_ARANGE: {
    if (!check_count(s, n, name, got, 1, 3)) return TY_ERR;
    bool is_float = false;
    for (; a && a != named; a = a->next) {
      tl_ty *t = tl_sema_expr(s, a, NULL);
      if (tl_ty_is_float(t)) is_float = true;
      else if (!tl_ty_is_int(t) && t->kind != TY_ERROR) tl_sema_mismatch(s, a, "arange bound", TY_I64_T, t);
    }
    if (named) {
      check_requires_grad(s, named);
      if (!is_float && named->lhs->kind == TL_N_BOOL && named->lhs->ival) {
        tl_sema_error(s, named, "only a float tensor can require grad; this `arange` gives i64");
        tl_diag_hint(s->diag, "give it a float bound: `Tensor::arange(0.0, 4.0)`");
      }
    }
    return tl_sema_tensor(s, is_float ? TL_F32 : TL_I64, 1);
  }
  case B_LINSPACE: /* Tensor::linspace(start, end, steps), torch's: f32 */
    if (!check_count(s, n, name, got, 3, 3) || named) {
      if (named) tl_sema_error(s, named, "`linspace` takes (start, end, steps)");
      return TY_ERR;
    }
    for (int i = 0; i < 2; i++, a = a->next) {
      tl_ty *t = tl_sema_expr(s, a, TY_F32_T);
      if (!tl_ty_is_numeric(t) && t->kind != TY_ERROR) tl_sema_mismatch(s, a, i ? "end" : "start", TY_F32_T, t);
    }
    tl_sema_expect_i64(s, a, "steps");
    return tl_sema_tensor(s, TL_F32, 1);
  case B_EYE:
    if (!check_count(s, n, name, got, 1, 1)) return TY_ERR;
    tl_sema_expect_i64(s, a, "size");
    if (named) check_requires_grad(s, named);
    return tl_sema_tensor(s, TL_F32, 2);
  default: { /* cat, stack */
    if (got >= 3 && !named && !tensors_then_dim(s, n)) return TY_ERR;
    a = n->args;
    got = tl_ast_count(a);
    if (!check_count(s, n, name, got, 1, 2)) return TY_ERR;
    int rank = -1, dtype = -1;
    check_tensor_list(s, a, &rank, &dtype);
    if (a->next) tl_sema_expect_i64(s, a->next, "dim");
    return tl_sema_tensor(s, dtype, id == B_STACK && rank >= 0 ? rank + 1 : rank);
  }
  }
}

/* the hint for `P::nw(..)` or `p.gett()`: path is `P::nw` */
static void suggest_member(sema *s, const char *path, bool methods) {
  const char *sep = strstr(path, "::");
  while (sep && strstr(sep + 2, "::")) sep = strstr(sep + 2, "::");
  if (!sep) return;
  char owner[128], prefix[132];
  snprintf(owner, sizeof owner, "%.*s", (int)(sep - path), path);
  snprintf(prefix, sizeof prefix, "%s::", owner);
  tl_suggest g;
  tl_suggest_init(&g, sep + 2);
  tl_sema_suggest_members(s, &g, owner, methods);
  tl_suggest_hint(&g, s->diag, methods ? "" : prefix);
}

/* the tensor methods outside tensor_methods[] */
static const char *const tensor_more[] = {"zeros_like", "ones_like", "rand_like", "randn_like", "tril", "triu", "masked_fill", "where", "where_cond", "var", "std", "leaky_relu", "l1_loss", "elu", "mish", "hardsigmoid", "hardswish", "bce_loss", "binary_cross_entropy", "nll_loss", "kl_div_loss", "logical_and", "logical_or", "logical_not", "topk", "narrow", "chunk", "split", "slice", "detach",
                                          "to_i64", "to_f32", "print", "conv2d", "max_pool2d", "avg_pool2d",
                                          "layer_norm", "embedding", "batch_norm", "group_norm", "instance_norm", "linear", "conv1d", "interpolate", "adaptive_avg_pool2d",
                                          "argsort", "gather", "scatter", "scatter_add", "logsumexp", "roll", "repeat", "any", "all"}; /* sema_io.c, sema_nn.c, sema_ops.c */

static bool is_tensor_method(const char *name) {
  if (find_method(name)) return true;
  for (size_t i = 0; i < sizeof tensor_more / sizeof tensor_more[0]; i++)
    if (!strcmp(name, tensor_more[i])) return true;
  return false;
}

/* `Tensor::zeros_like(x)`, `Tensor::mse_loss(a, b)`: a tensor method called as a
 * function, its receiver first (Rust's fully qualified call, the seed language's
 * spelling), becomes the method call `x.zeros_like()` */
static tl_ty *tensor_method_as_fn(sema *s, tl_node *n) {
  const char *m = n->lhs->name + 8;
  if (!is_tensor_method(m)) return NULL;
  if (!n->args) {
    tl_sema_error(s, n->lhs, "`Tensor::%s` is the tensor method `%s`: give the tensor first, `Tensor::%s(x, ..)` or `x.%s(..)`",
                  m, m, m, m);
    return TY_ERR;
  }
  tl_node *recv = n->args;
  n->kind = TL_N_METHOD;
  n->name = m;
  n->args = recv->next;
  recv->next = NULL;
  n->lhs = recv;
  return tl_sema_method(s, n);
}

static tl_ty *check_path_call(sema *s, tl_node *n, tl_ty *expect) {
  tl_fninfo *g;
  if (tl_sema_generic_call(s, n, n->lhs->name, expect, &g)) { /* Stack::new(), T::new(), Self::new() */
    if (!g) return TY_ERR;
    if (g->self && !g->partial) {
      tl_sema_error(s, n->lhs, "`%s` is a method: call it as `value.%s(...)`", n->lhs->name, g->fn->name);
      return TY_ERR;
    }
    n->ref = g;
    check_args(s, n, g, n->args);
    return g->ret;
  }
  const char *path = n->lhs->name;
  tl_ty *io = tl_sema_io_path_call(s, n); /* Tensor::save/load, Param::save/load (sema_io.c) */
  if (io) return io;
  if (!strncmp(path, "Tensor::", 8)) {
    for (size_t i = 0; i < sizeof tensor_ctors / sizeof tensor_ctors[0]; i++)
      if (!strcmp(path + 8, tensor_ctors[i].name)) return check_tensor_ctor(s, n, tensor_ctors[i].id, path);
    tl_ty *m = tensor_method_as_fn(s, n);
    if (!m) m = tl_sema_ml_call(s, n, path); /* Tensor::sdpa (sema_ml.c) */
    if (m) return m;
    tl_sema_error(s, n->lhs, "no function `%s`", path);
    tl_suggest g;
    tl_suggest_init(&g, path + 8);
    static const char *const io[] = {"save", "load", "clear_grads", "from_vec"}; /* sema_io.c, sema_vec.c */
    for (size_t i = 0; i < sizeof tensor_ctors / sizeof tensor_ctors[0]; i++) tl_suggest_add(&g, tensor_ctors[i].name);
    for (size_t i = 0; i < sizeof io / sizeof io[0]; i++) tl_suggest_add(&g, io[i]);
    tl_suggest_hint(&g, s->diag, "Tensor::");
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  tl_fninfo *f = tl_sema_find_fn(s, path);
  /* `Path::exists(s)` stays the helper beside the method `p.exists()` (front/stdlib.c) */
  if (f && f->self && !f->partial && tl_sema_sys_call_named(path)) f = NULL;
  if (!f) { /* System::time, File::exists... (sema_sys.c), Dist:: (sema_dist.c) */
    tl_ty *sys = tl_sema_sys_call(s, n, path);
    if (!sys) sys = tl_sema_dist_call(s, n, path);
    if (!sys) sys = tl_sema_ml_call(s, n, path); /* VarBuilder:: (sema_ml.c) */
    if (sys) return sys;
  }
  if (!f) {
    tl_sema_error(s, n->lhs, "no function `%s`", path);
    suggest_member(s, path, false);
    for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  if (f->self && !f->partial) {
    tl_sema_error(s, n->lhs, "`%s` is a method: call it as `value.%s(...)`", path, f->fn->name);
    return TY_ERR;
  }
  n->ref = f;
  check_args(s, n, f, n->args);
  return f->ret;
}

tl_ty *tl_sema_call(sema *s, tl_node *n, tl_ty *expect) {
  n->ival = B_NONE;
  /* a variable called, or any other expression: a value of fn type (sema_closure.c) */
  if (n->lhs->kind == TL_N_IDENT && !tl_sema_lookup(s, n->lhs->name)) return check_free_call(s, n, n->lhs->name, expect);
  if (n->lhs->kind == TL_N_PATH) return check_path_call(s, n, expect);
  return tl_sema_closure_call(s, n);
}

/* ---- methods ---- */

/* a sum of booleans counts them (i64), as in PyTorch */
static tl_ty *reduce_result(sema *s, tl_ty *t, bool has_dim, bool is_sum) {
  int dt = is_sum && t->dtype == TL_BOOL ? TL_I64 : t->dtype;
  return tl_sema_tensor(s, dt, has_dim ? (t->rank > 0 ? t->rank - 1 : -1) : 0);
}

static tl_ty *check_tensor_method(sema *s, tl_node *n, tl_ty *t, const method_entry *m) {
  int got = tl_ast_count(n->args);
  tl_node *a = n->args;
  n->ival = m->id;
  switch (m->args) {
  case ARGS_NONE: if (!check_count(s, n, m->name, got, 0, 0)) return TY_ERR; break;
  case ARGS_DIM:
    if (!check_count(s, n, m->name, got, 1, 1)) return TY_ERR;
    tl_sema_expect_i64(s, a, "dim");
    break;
  case ARGS_OPT_DIM:
    if (!check_count(s, n, m->name, got, 0, 1)) return TY_ERR;
    if (a) tl_sema_expect_i64(s, a, "dim");
    break;
  case ARGS_TWO_DIMS:
    if (!check_count(s, n, m->name, got, 2, 2)) return TY_ERR;
    tl_sema_expect_i64(s, a, "dim");
    tl_sema_expect_i64(s, a->next, "dim");
    break;
  case ARGS_DIMS:
    if (got == 1 && a->kind == TL_N_ARRAY) { /* permute([2, 0, 1]): the list's elements */
      n->args = a->args;
      a = n->args;
      got = tl_ast_count(a);
    }
    if (t->rank >= 0 && got != t->rank) {
      tl_sema_error(s, n, "`permute` needs %d dims for this tensor, not %d", t->rank, got);
      return TY_ERR;
    }
    for (; a; a = a->next) tl_sema_expect_i64(s, a, "dim");
    a = n->args;
    break;
  case ARGS_SHAPE:
    if (!check_count(s, n, m->name, got, 1, 1)) return TY_ERR;
    return tl_sema_tensor(s, t->dtype, tl_sema_check_shape(s, a));
  case ARGS_VALUE:
    if (!check_count(s, n, m->name, got, 1, 1)) return TY_ERR;
    if (check_value(s, a, t->dtype)->kind == TY_ERROR) return TY_ERR;
    break;
  case ARGS_TWO_VALUES:
    if (!check_count(s, n, m->name, got, 2, 2)) return TY_ERR;
    for (tl_node *b = a; b; b = b->next) /* clamp's bounds are numbers */
      if (check_value(s, b, t->dtype)->kind == TY_TENSOR) {
        tl_sema_error(s, b, "`%s` takes numbers as bounds, not a tensor", m->name);
        tl_diag_hint(s->diag, "clamp against tensors with `maximum(lo)` and `minimum(hi)`");
        return TY_ERR;
      }
    break;
  }
  switch (m->id) {
  case B_GT: case B_LT: case B_GE: case B_LE: case B_EQ: case B_NE:
    return tl_sema_tensor(s, TL_BOOL, elementwise_ty(s, n->lhs, t, a, a->ty)->rank);
  case B_POW: case B_MAXIMUM: case B_MINIMUM: return elementwise_ty(s, n->lhs, t, a, a->ty);
  case B_CLAMP: return elementwise_ty(s, n->lhs, elementwise_ty(s, n->lhs, t, a, a->ty), a->next, a->next->ty);
  case B_SUM: case B_MEAN: case B_MAX: case B_MIN: return reduce_result(s, t, a != NULL, m->id == B_SUM);
  case B_SUMALL: return reduce_result(s, t, false, true);
  case B_PROD: return reduce_result(s, t, a != NULL, false);
  case B_CUMSUM: return tl_sema_tensor(s, t->dtype == TL_BOOL ? TL_I64 : t->dtype, t->rank); /* counts, as torch's */
  case B_ARGMAX: case B_ARGMIN: return tl_sema_tensor(s, TL_I64, t->rank > 0 ? t->rank - 1 : -1);
  case B_TRANSPOSE: case B_PERMUTE: case B_SOFTMAX: case B_LOG_SOFTMAX: return t;
  case B_UNSQUEEZE: return tl_sema_tensor(s, t->dtype, t->rank >= 0 ? t->rank + 1 : -1);
  case B_SQUEEZE: return tl_sema_tensor(s, t->dtype, t->rank > 0 ? t->rank - 1 : -1);
  case B_SHAPE: return tl_sema_tensor(s, TL_I64, 1);
  case B_DIM: case B_LEN: case B_NUMEL: return TY_I64_T;
  case B_MATMUL: {
    tl_ty *b = n->args->ty;
    if (b->kind != TY_TENSOR) {
      tl_sema_error(s, n->args, "`matmul` needs a tensor");
      return TY_ERR;
    }
    int r = -1;
    if (t->rank == 1 && b->rank == 1) r = 0;
    else if (t->rank == 1 && b->rank >= 2) r = b->rank - 1;
    else if (t->rank >= 2 && b->rank == 1) r = t->rank - 1;
    else if (t->rank >= 2 && b->rank >= 2) r = t->rank > b->rank ? t->rank : b->rank;
    return tl_sema_tensor(s, tl_ty_promote_dtypes(t->dtype, b->dtype), r);
  }
  case B_ITEM:
    if (t->rank > 0) {
      /* a shape check at run time says which shape; a known rank > 0 may still hold one element */
    }
    return tl_ty_of_dtype(t->dtype);
  case B_BACKWARD: case B_ENABLE_GRAD: case B_ZERO_GRAD: return TY_UNIT_T;
  case B_REQUIRES_GRAD: return TY_BOOL_T;
  case B_MSE_LOSS: case B_CROSS_ENTROPY: return tl_sema_tensor(s, t->dtype, 0);
  case B_TO_DTYPE: {
    /* torch's names: half f16, bfloat16 bf16, byte u8, char i8, short i16 */
    static const char *const names[] = {"float", "double", "long", "int", "bool", "half", "bfloat16", "byte", "char", "short"};
    static const int dts[] = {TL_F32, TL_F64, TL_I64, TL_I32, TL_BOOL, TL_F16, TL_BF16, TL_U8, TL_I8, TL_I16};
    for (int i = 0; i < 10; i++)
      if (!strcmp(n->name, names[i])) n->len = (size_t)dts[i];
    return tl_sema_tensor(s, (int)n->len, t->rank);
  }
  default: return t;
  }
}

/* the receiver of a `&mut self` method or enable_grad must be writable */
static void check_receiver_writable(sema *s, tl_node *n) {
  tl_node *r = n->lhs;
  while (r->kind == TL_N_FIELD) r = r->lhs;
  if ((r->kind != TL_N_IDENT && r->kind != TL_N_SELF) || !r->var) {
    if (r->kind != TL_N_IDENT && r->kind != TL_N_SELF)
      tl_sema_error(s, n, "`%s` changes its receiver: call it on a variable", n->name);
    return;
  }
  if (tl_sema_closure_written(s, n, r->var)) return; /* sema_closure.c */
  if (!tl_sema_may_change(s, n, r->var, n->name)) {
    tl_sema_error(s, n, "`%s` changes `%s`, which is not mutable", n->name, r->var->name);
    if (r->kind == TL_N_SELF) tl_diag_hint(s->diag, "take the receiver as `&mut self`");
    else tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", r->var->name);
  }
}

/* the hint for `t.summ()` on a tensor, a String or a number: the methods of its type */
static void suggest_builtin_method(sema *s, const char *name, const tl_ty *t) {
  tl_suggest g;
  tl_suggest_init(&g, name);
  if (t->kind == TY_TENSOR || tl_ty_is_numeric(t))
    for (size_t i = 0; i < sizeof tensor_methods / sizeof tensor_methods[0]; i++) {
      tl_builtin id = tensor_methods[i].id;
      bool math = (tensor_methods[i].args == ARGS_NONE && id >= B_NEG && id <= B_ROUND) || id == B_POW ||
                  id == B_MAXIMUM || id == B_MINIMUM || id == B_MAX || id == B_MIN;
      if (t->kind == TY_TENSOR || math) tl_suggest_add(&g, tensor_methods[i].name);
    }
  for (size_t i = 0; t->kind == TY_TENSOR && i < sizeof tensor_more / sizeof tensor_more[0]; i++)
    tl_suggest_add(&g, tensor_more[i]);
  for (size_t i = 0; t->kind == TY_STR && tl_sema_sys_row(i); i++)
    if (tl_sema_sys_row(i)->kind == 'm') tl_suggest_add(&g, tl_sema_sys_row(i)->name);
  if (t->kind == TY_STR) tl_suggest_add(&g, "len");
  tl_suggest_hint(&g, s->diag, "");
}

/* `x.to_string()` on a number, bool, char or String is `format("{}", x)`, as Rust's
 * Display; the node becomes that call */
static tl_ty *to_string(sema *s, tl_node *n, tl_ty *t) {
  if (strcmp(n->name, "to_string") || !(tl_ty_is_numeric(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR))
    return NULL;
  if (!check_count(s, n, n->name, tl_ast_count(n->args), 0, 0)) return TY_ERR;
  tl_node *fmt = tl_arena_alloc(s->arena, sizeof *fmt), *callee = tl_arena_alloc(s->arena, sizeof *callee);
  if (!fmt || !callee) return TY_ERR;
  *fmt = (tl_node){.kind = TL_N_STR, .line = n->line, .col = n->col, .str = "{}", .len = 2};
  *callee = (tl_node){.kind = TL_N_IDENT, .line = n->line, .col = n->col, .name = "format"};
  fmt->next = n->lhs;
  n->lhs->next = NULL;
  n->kind = TL_N_CALL;
  n->lhs = callee;
  n->args = fmt;
  return check_print(s, n, B_FORMAT);
}

/* `t.add(u)`, `sub`, `mul`, `div` (PyTorch's) and `t.scale(k)` (the seed language's) on a
 * tensor are `t + u`...: the node becomes that operation */
static tl_ty *arith_method(sema *s, tl_node *n, tl_ty *t) {
  static const struct {
    const char *name;
    tl_tok_kind op;
  } ops[] = {{"add", TL_TOK_PLUS}, {"sub", TL_TOK_MINUS}, {"mul", TL_TOK_STAR}, {"div", TL_TOK_SLASH}, {"scale", TL_TOK_STAR}};
  if (t->kind != TY_TENSOR) return NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (strcmp(n->name, ops[i].name)) continue;
    if (!check_count(s, n, n->name, tl_ast_count(n->args), 1, 1)) return TY_ERR;
    n->kind = TL_N_BINARY;
    n->op = ops[i].op;
    n->rhs = n->args;
    n->args = NULL;
    n->name = NULL;
    return tl_sema_expr(s, n, NULL);
  }
  return NULL;
}

/* `x.clone()` on a value that is not a tensor (whose clone is its own method) and whose
 * type has no `clone` of its own: every value is copied on assignment (copy-on-write),
 * so Rust's clone is the value itself; n becomes its receiver */
static bool plain_clone(sema *s, tl_node *n, const tl_ty *t) {
  if (strcmp(n->name, "clone") || n->args || t->kind == TY_TENSOR || tl_ty_is_iter(t)) return false;
  if (t->kind == TY_STRUCT && !t->st->generic && !t->st->is_tuple) {
    char name[256];
    snprintf(name, sizeof name, "%s::clone", t->st->name);
    if (tl_sema_find_fn(s, name)) return false;
  }
  tl_node *next = n->next; /* n's place in its list stays */
  *n = *n->lhs;
  n->next = next;
  return true;
}

tl_ty *tl_sema_method(sema *s, tl_node *n) {
  tl_ty *t = tl_sema_expr(s, n->lhs, NULL);
  n->ival = B_NONE;
  char b[64];
  if (t->kind == TY_ERROR) { /* a closure's parameters would take their types from t */
    for (tl_node *a = n->args; a; a = a->next)
      if (a->kind != TL_N_CLOSURE) tl_sema_expr(s, a, NULL);
    return TY_ERR;
  }
  if (tl_sema_dyn_is(t)) return tl_sema_dyn_method(s, n, t, NULL); /* d.area() on a dyn Shape (sema_dyn.c) */
  if (plain_clone(s, n, t)) return t;
  tl_ty *iter = tl_sema_iter_method(s, n, t); /* iter, map, sort_by, cmp... (sema_iter.c) */
  if (iter) return iter;
  tl_ty *opt = tl_sema_option_method(s, n, t); /* unwrap, is_some... (sema_option.c) */
  if (opt) return opt;
  tl_ty *vec = tl_sema_vec_method(s, n, t); /* push, len, get... (sema_vec.c) */
  if (vec) return vec;
  if (t->kind == TY_STRUCT) {
    char name[256];
    snprintf(name, sizeof name, "%s::%s", t->st->name, n->name);
    tl_fninfo *f = NULL;
    if (tl_sema_generic_method(s, n, t->st, &f)) { /* `fn map<V>(&self, v: V)` (sema_generic.c) */
      if (!f) return TY_ERR;
    } else f = tl_sema_find_fn(s, name);
    if (!f || (!f->self && !f->partial)) {
      if (!t->st->partial) {
        tl_sema_error(s, n, "no method `%s` on `%s`", n->name, t->st->name);
        suggest_member(s, name, true);
      }
      for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
      return TY_ERR;
    }
    if (s->compr_depth) tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", n->name);
    n->ref = f;
    if (!f->partial && f->params[0]->kind == VAR_PARAM_REF) check_receiver_writable(s, n);
    check_args(s, n, f, n->args);
    return f->ret;
  }
  if (t->kind == TY_TENSOR) { /* zeros_like, tril, slice, detach(b)... (sema_io.c) */
    tl_ty *io = tl_sema_io_method(s, n, t);
    if (io) return io;
    tl_ty *nn = tl_sema_nn_method(s, n, t); /* conv2d, pooling, layer_norm, embedding (sema_nn.c) */
    if (nn) return nn;
    tl_ty *ml = tl_sema_ml_method(s, n, t); /* top_k_sample, clip_grad_value... (sema_ml.c) */
    if (ml) return ml;
    tl_ty *ops = tl_sema_ops_method(s, n, t); /* gather, argsort, roll... (sema_ops.c) */
    if (ops) return ops;
  }
  const method_entry *m = find_method(n->name);
  if (t->kind == TY_TENSOR && m && (m->id == B_FLOOR || m->id == B_CEIL || m->id == B_ROUND)) {
    tl_sema_error(s, n, "floor, ceil and round work on scalars; tensors do not have them yet");
    return TY_ERR;
  }
  if (t->kind == TY_TENSOR && m) {
    if (m->id == B_ENABLE_GRAD || m->id == B_ZERO_GRAD) check_receiver_writable(s, n);
    return check_tensor_method(s, n, t, m);
  }
  if (t->kind == TY_STR) { /* char_at, contains, substring... (sema_sys.c) */
    tl_ty *sys = tl_sema_sys_method(s, n, t);
    if (sys) return sys;
  }
  if (tl_ty_is_float(t) && (!strcmp(n->name, "is_nan") || !strcmp(n->name, "is_infinite") || !strcmp(n->name, "is_inf") ||
                            !strcmp(n->name, "is_finite"))) {
    n->ival = B_FLOAT_TEST;
    n->len = n->name[3] == 'n' ? 0 : n->name[3] == 'i' ? 1 : 2;
    return check_count(s, n, n->name, tl_ast_count(n->args), 0, 0) ? TY_BOOL_T : TY_ERR;
  }
  if (t->kind == TY_STR && !strcmp(n->name, "len") && !n->args) {
    n->ival = B_STR_LEN;
    return TY_I64_T;
  }
  if ((tl_ty_is_numeric(t)) && m) {
    tl_builtin id = m->id;
    bool unary = m->args == ARGS_NONE && id >= B_NEG && id <= B_ROUND;
    bool binary = id == B_POW || id == B_MAXIMUM || id == B_MINIMUM;
    if (!strcmp(n->name, "max")) id = B_MAXIMUM, binary = true;
    if (!strcmp(n->name, "min")) id = B_MINIMUM, binary = true;
    if (id == B_CLAMP) { /* x.clamp(lo, hi) on a number, Rust's: lo and hi of x's type */
      n->ival = id;
      if (!check_count(s, n, n->name, tl_ast_count(n->args), 2, 2)) return TY_ERR;
      for (tl_node *a = n->args; a; a = a->next) {
        tl_ty *ta = tl_sema_expr(s, a, t);
        if (ta->kind != TY_ERROR && ta->kind != t->kind) tl_sema_mismatch(s, a, "`clamp` bound", t, ta);
      }
      return t;
    }
    if (unary || binary) {
      n->ival = id;
      if (!check_count(s, n, n->name, tl_ast_count(n->args), binary, binary)) return TY_ERR;
      return check_math(s, n, id, n->lhs, n->args, t);
    }
  }
  tl_fninfo *tf = tl_sema_trait_method(s, t, n->name); /* `impl Shape for i64` (sema_trait.c) */
  if (tf) {
    n->ref = tf;
    if (!tf->partial && tf->params[0]->kind == VAR_PARAM_REF) check_receiver_writable(s, n);
    check_args(s, n, tf, n->args);
    return tf->ret;
  }
  tl_ty *str = to_string(s, n, t);
  if (str) return str;
  tl_ty *op = arith_method(s, n, t);
  if (op) return op;
  tl_sema_error(s, n, "no method `%s` on %s", n->name, tl_ty_name(t, b, sizeof b));
  suggest_builtin_method(s, n->name, t);
  for (tl_node *a = n->args; a; a = a->next) tl_sema_expr(s, a, NULL);
  return TY_ERR;
}

/* ---- tensor comprehensions (§7) ---- */

static bool is_index_read(tl_node *n, void *unused) {
  (void)unused;
  return n->kind == TL_N_IDENT && n->var && n->var->is_index;
}

/* `t[.., v, ..]` (v alone at an axis, t free of index variables), for an index
 * variable without a generator: that axis of t gives v's range */
static bool gives_range(tl_node *n, void *var) {
  tl_var *v = var;
  if (n->kind != TL_N_INDEX || tl_ast_find(n->lhs, is_index_read, NULL)) return false;
  int axis = 0;
  for (tl_node *a = n->args; a; a = a->next, axis++)
    if (a->kind == TL_N_IDENT && a->var == v) {
      v->range_src = n;
      v->range_axis = axis;
      return true;
    }
  return false;
}

static bool is_let_of(tl_node *n, void *name) { return n->kind == TL_N_LET && !strcmp(n->name, name); }

typedef struct {
  sema *s;
  tl_node *body;
  tl_var **vars;
  int nvars;
} implicit_ctx;

/* Einstein notation: declares each name that indexes a tensor directly and is
 * declared nowhere as a summed index variable; visits every node (returns false) */
static bool declare_implicit(tl_node *n, void *arg) {
  implicit_ctx *c = arg;
  if (n->kind != TL_N_INDEX) return false;
  for (tl_node *a = n->args; a; a = a->next)
    if (a->kind == TL_N_IDENT && !tl_sema_lookup(c->s, a->name) && !tl_sema_find_fn(c->s, a->name) &&
        !tl_ast_find(c->body, is_let_of, (void *)a->name) && c->nvars < 32) {
      tl_var *v = tl_sema_declare(c->s, a, a->name, TY_I64_T, VAR_LOCAL, false);
      if (!v) return false;
      v->is_index = v->summed = true;
      c->vars[c->nvars++] = v;
    }
  return false;
}

tl_ty *tl_sema_compr(sema *s, tl_node *n) {
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension inside a comprehension body is not supported");
    return TY_ERR;
  }
  sym *mark = s->syms;
  /* generator ranges are evaluated outside: they see the enclosing scope only */
  for (tl_node *c = n->stmts; c; c = c->next)
    if (c->kind == TL_N_GEN) tl_sema_expr(s, c->lhs, NULL);
  tl_var *vars[32];
  int nvars = 0;
  for (tl_node *c = n->stmts; c; c = c->next) {
    if (c->kind != TL_N_GEN) continue;
    for (int i = 0; i < nvars; i++)
      if (!strcmp(vars[i]->name, c->name)) tl_sema_error(s, c, "`%s` is generated twice", c->name);
    if (nvars == 32) {
      tl_sema_error(s, c, "a comprehension has at most 32 index variables");
      break;
    }
    tl_var *v = tl_sema_declare(s, c, c->name, TY_I64_T, VAR_LOCAL, false);
    if (!v) break;
    v->is_index = true;
    v->gen = c->lhs;
    v->summed = true;
    c->var = vars[nvars++] = v;
  }
  int nout = 0;
  for (tl_node *a = n->args; a; a = a->next, nout++) {
    tl_var *v = NULL;
    for (int i = 0; i < nvars; i++)
      if (!strcmp(vars[i]->name, a->name)) v = vars[i];
    for (tl_node *b = n->args; b != a; b = b->next)
      if (!strcmp(b->name, a->name)) tl_sema_error(s, a, "output axis `%s` is named twice", a->name);
    if (!v && nvars < 32) { /* no generator: the range comes from a tensor the body indexes */
      v = tl_sema_declare(s, a, a->name, TY_I64_T, VAR_LOCAL, false);
      if (!v) break;
      v->is_index = true;
      vars[nvars++] = v;
    }
    if (!v) break;
    v->summed = false;
    a->var = v;
    a->ty = TY_I64_T;
  }
  /* Einstein notation: a name that indexes a tensor directly and is declared nowhere
   * is a summed index variable, its range from that tensor: [i, j | { a[i, k] * b[k, j] }] */
  implicit_ctx ic = {s, n->body, vars, nvars};
  tl_ast_find(n->body, declare_implicit, &ic);
  for (tl_node *c = n->stmts; c; c = c->next)
    if (c->kind != TL_N_GEN) tl_ast_find(c, declare_implicit, &ic);
  nvars = ic.nvars;
  s->compr_depth++;
  for (tl_node *c = n->stmts; c; c = c->next) {
    if (c->kind == TL_N_GEN) continue;
    tl_ty *t = tl_sema_expr(s, c, TY_BOOL_T);
    if (!tl_sema_ty_fits(TY_BOOL_T, t)) tl_sema_mismatch(s, c, "comprehension filter", TY_BOOL_T, t);
  }
  tl_ty *body = n->body ? tl_sema_block(s, n->body, NULL) : TY_I64_T;
  if (n->body) n->body->ty = body;
  s->compr_depth--;
  for (int i = 0; i < nvars; i++) {
    if (vars[i]->gen) continue;
    bool found = tl_ast_find(n->body, gives_range, vars[i]);
    for (tl_node *c = n->stmts; c && !found; c = c->next) found = tl_ast_find(c, gives_range, vars[i]);
    if (!found) {
      tl_node at = {.line = vars[i]->line, .col = vars[i]->col};
      tl_sema_error(s, &at, "cannot infer the range of `%s`: give it a generator `%s <- a..b`", vars[i]->name,
                 vars[i]->name);
    }
  }
  s->syms = mark;
  tl_compr_vars *cv = tl_arena_alloc(s->arena, sizeof *cv);
  if (!cv) return TY_ERR;
  cv->n = 0; /* the space: output axes in order, then the summed variables */
  for (tl_node *a = n->args; a; a = a->next)
    if (a->var) cv->vars[cv->n++] = a->var;
  for (int i = 0; i < nvars; i++)
    if (vars[i]->summed) cv->vars[cv->n++] = vars[i];
  cv->nout = nout;
  n->ref = cv;
  if (body->kind == TY_ERROR) return TY_ERR;
  if (!tl_ty_is_numeric(body) && body->kind != TY_BOOL) {
    char b[64];
    tl_sema_error(s, n->body, "a comprehension body gives a number, not %s", tl_ty_name(body, b, sizeof b));
    return TY_ERR;
  }
  int dt = tl_ty_dtype(body);
  if (dt == TL_BOOL && nvars > nout) dt = TL_I64; /* a sum of booleans counts */
  return tl_sema_tensor(s, dt, nout + (!n->body && nout > 1));
}
