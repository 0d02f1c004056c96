/* ops.c — elementwise ops with broadcasting and promotion, reductions, softmax,
 * argmax, matmul and row gathers, all built from the primitive and fused ops of the IR. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/format.h"
#include "core/shapetracker.h"
#include "graph/rewrite.h"

/* opens the handle t (NULL: return NULL), names its context and marks the graph */
#define BEGIN(t, what)                              \
  if (!((t) = tl_api_tensor(t, what))) return NULL; \
  tl_ctx *ctx = (t)->slot.ctx;                      \
  size_t mark = tl_graph_mark(&ctx->graph)

/* ---- elementwise --------------------------------------------------------------- */
static tl_tensor *unary(tl_tensor *t, int op, const char *what, bool float_only) {
  BEGIN(t, what);
  tl_uop *u = t->u;
  if (float_only && !tl_dtype_is_float(u->dtype)) u = tl_build_cast(&ctx->graph, u, TL_F32);
  else if (u->dtype == TL_BOOL && op != TL_OP_NOT)
    return tl_api_fail(ctx, mark, TL_ERR_DTYPE, "%s: not defined for bool tensors", what);
  return tl_api_wrap_op(ctx, what, tl_build_unary(&ctx->graph, op, u), mark, op, 1, &t, NULL, 0);
}

tl_tensor *tl_neg(tl_tensor *a) { return unary(a, TL_OP_NEG, "neg", false); }
tl_tensor *tl_exp(tl_tensor *a) { return unary(a, TL_OP_EXP, "exp", true); }
tl_tensor *tl_log(tl_tensor *a) { return unary(a, TL_OP_LOG, "log", true); }
tl_tensor *tl_log1p(tl_tensor *a) { return unary(a, TL_OP_LOG1P, "log1p", true); }
tl_tensor *tl_expm1(tl_tensor *a) { return unary(a, TL_OP_EXPM1, "expm1", true); }
tl_tensor *tl_erf(tl_tensor *a) { return unary(a, TL_OP_ERF, "erf", true); }
tl_tensor *tl_sqrt(tl_tensor *a) { return unary(a, TL_OP_SQRT, "sqrt", true); }
tl_tensor *tl_sin(tl_tensor *a) { return unary(a, TL_OP_SIN, "sin", true); }
tl_tensor *tl_cos(tl_tensor *a) { return unary(a, TL_OP_COS, "cos", true); }
tl_tensor *tl_tanh(tl_tensor *a) { return unary(a, TL_OP_TANH, "tanh", true); }
tl_tensor *tl_sigmoid(tl_tensor *a) { return unary(a, TL_OP_SIGMOID, "sigmoid", true); }
tl_tensor *tl_gelu(tl_tensor *a) { return unary(a, TL_OP_GELU, "gelu", true); }
tl_tensor *tl_gelu_tanh(tl_tensor *a) { return unary(a, TL_OP_GELU_TANH, "gelu_tanh", true); }
tl_tensor *tl_reciprocal(tl_tensor *a) { return unary(a, TL_OP_RECIP, "reciprocal", true); }
tl_tensor *tl_relu(tl_tensor *a) { return unary(a, TL_OP_RELU, "relu", false); }
tl_tensor *tl_abs(tl_tensor *a) { return unary(a, TL_OP_ABS, "abs", false); }

tl_tensor *tl_logical_not(tl_tensor *a) {
  BEGIN(a, "logical_not");
  tl_uop *u = a->u;
  if (u->dtype != TL_BOOL) /* not x == (x == 0) */
    u = tl_build_binary(&ctx->graph, TL_OP_CMPEQ, u, tl_build_const_like(&ctx->graph, u, 0));
  return tl_api_wrap(ctx, "logical_not", tl_build_unary(&ctx->graph, TL_OP_NOT, u), mark);
}

static bool broadcast_shapes(tl_ctx *ctx, const char *what, const tl_uop *a, const tl_uop *b,
                             int *ndim, int64_t *shape) {
  int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    int64_t x = ia >= 0 ? a->shape[ia] : 1, y = ib >= 0 ? b->shape[ib] : 1;
    if (x != y && x != 1 && y != 1) {
      char sa[TL_SHAPE_TEXT_MAX], sb[TL_SHAPE_TEXT_MAX];
      tl_error_set(&ctx->err, TL_ERR_SHAPE, "%s: shapes %s and %s cannot be broadcast together", what,
                   tl_format_shape(sa, sizeof sa, a->ndim, a->shape), tl_format_shape(sb, sizeof sb, b->ndim, b->shape));
      return false;
    }
    shape[i] = x == 1 ? y : x;
  }
  *ndim = nd;
  return tl_api_shape_fits(ctx, what, nd, shape); /* [n, 1] with [1, n] grows */
}

/* Broadcasts and promotes two nodes; float_only lifts integers to f32. */
static bool prepare_pair(tl_ctx *ctx, const char *what, tl_uop **a, tl_uop **b, bool float_only) {
  int nd;
  int64_t shape[TL_MAX_DIMS];
  if (!broadcast_shapes(ctx, what, *a, *b, &nd, shape)) return false;
  tl_dtype dt = tl_dtype_promote((tl_dtype)(*a)->dtype, (tl_dtype)(*b)->dtype);
  if (float_only && !tl_dtype_is_float(dt)) dt = TL_F32;
  *a = tl_build_broadcast_to(&ctx->graph, tl_build_cast(&ctx->graph, *a, dt), nd, shape);
  *b = tl_build_broadcast_to(&ctx->graph, tl_build_cast(&ctx->graph, *b, dt), nd, shape);
  if (!*a || !*b) tl_error_set(&ctx->err, TL_ERR_NOMEM, "%s: out of memory building the graph", what);
  return *a && *b;
}

typedef enum { ARITH, COMPARE, INT_ONLY, MINMAX } binary_kind;

static tl_tensor *binary(tl_tensor *x, tl_tensor *y, int op, const char *what, binary_kind kind) {
  if (!x || !y || !(x = tl_api_tensor(x, what)) || !(y = tl_api_tensor(y, what))) return NULL;
  tl_ctx *ctx = x->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  if (y->slot.ctx != ctx) return tl_api_fail(ctx, mark, TL_ERR_ARG, "%s: tensors from different contexts", what);
  tl_uop *a = x->u, *b = y->u;
  if (kind == ARITH && a->dtype == TL_BOOL && b->dtype == TL_BOOL) { /* arithmetic on bools: i32 */
    a = tl_build_cast(&ctx->graph, a, TL_I32);
    b = tl_build_cast(&ctx->graph, b, TL_I32);
  }
  if (kind == INT_ONLY && (!tl_dtype_is_int((tl_dtype)a->dtype) || !tl_dtype_is_int((tl_dtype)b->dtype)))
    return tl_api_fail(ctx, mark, TL_ERR_DTYPE, "%s: needs integer tensors, got %s and %s", what,
                       tl_dtype_name((tl_dtype)a->dtype), tl_dtype_name((tl_dtype)b->dtype));
  if (!prepare_pair(ctx, what, &a, &b, false)) {
    tl_graph_release_to(&ctx->graph, mark);
    return NULL;
  }
  /* comparisons (bool) and mod (integers) are recorded by nothing: their results are not floats */
  return tl_api_wrap_op(ctx, what, tl_build_binary(&ctx->graph, op, a, b), mark, op, 2, (tl_tensor *[]){x, y}, NULL, 0);
}

tl_tensor *tl_add(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_ADD, "add", ARITH); }
tl_tensor *tl_sub(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_SUB, "sub", ARITH); }
tl_tensor *tl_mul(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_MUL, "mul", ARITH); }
tl_tensor *tl_div(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_DIV, "div", ARITH); }
tl_tensor *tl_mod(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_MOD, "mod", INT_ONLY); }
tl_tensor *tl_pow(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_POW, "pow", ARITH); }
tl_tensor *tl_maximum(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_MAX, "maximum", MINMAX); }
tl_tensor *tl_minimum(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_MIN, "minimum", MINMAX); }
tl_tensor *tl_lt(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_CMPLT, "lt", COMPARE); }
tl_tensor *tl_le(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_CMPLE, "le", COMPARE); }
tl_tensor *tl_gt(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_CMPGT, "gt", COMPARE); }
tl_tensor *tl_ge(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_CMPGE, "ge", COMPARE); }
tl_tensor *tl_eq(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_CMPEQ, "eq", COMPARE); }
tl_tensor *tl_ne(tl_tensor *a, tl_tensor *b) { return binary(a, b, TL_OP_CMPNE, "ne", COMPARE); }

/* s is a float: with a bool or integer tensor the op computes in f32, never
 * truncating s (torch's rule for a Python float); a float tensor keeps its dtype */
static tl_tensor *with_scalar(tl_tensor *a, double s, tl_tensor *(*f)(tl_tensor *, tl_tensor *),
                              const char *what) {
  if (!(a = tl_api_tensor(a, what))) return NULL;
  tl_tensor *c = tl_scalar(a->slot.ctx, tl_dtype_promote_scalar((tl_dtype)a->u->dtype, TL_F32), s);
  tl_tensor *r = c ? f(a, c) : NULL;
  tl_release(c);
  return r;
}
tl_tensor *tl_add_scalar(tl_tensor *a, double s) { return with_scalar(a, s, tl_add, "add_scalar"); }
tl_tensor *tl_mul_scalar(tl_tensor *a, double s) { return with_scalar(a, s, tl_mul, "mul_scalar"); }
tl_tensor *tl_pow_scalar(tl_tensor *a, double s) { return with_scalar(a, s, tl_pow, "pow_scalar"); }

tl_tensor *tl_where(tl_tensor *cond, tl_tensor *x, tl_tensor *y) {
  if (!cond || !x || !y) return NULL;
  if (!(cond = tl_api_tensor(cond, "where")) || !(x = tl_api_tensor(x, "where")) || !(y = tl_api_tensor(y, "where")))
    return NULL;
  tl_ctx *ctx = cond->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  if (x->slot.ctx != ctx || y->slot.ctx != ctx) return tl_api_fail(ctx, mark, TL_ERR_ARG, "where: tensors from different contexts");
  tl_uop *a = x->u, *b = y->u, *c = cond->u;
  if (c->dtype != TL_BOOL)
    c = tl_build_binary(&ctx->graph, TL_OP_CMPNE, c, tl_build_const_like(&ctx->graph, c, 0));
  int nd;
  int64_t shape[TL_MAX_DIMS];
  if (!c || !prepare_pair(ctx, "where", &a, &b, false) || !broadcast_shapes(ctx, "where", c, a, &nd, shape)) {
    tl_graph_release_to(&ctx->graph, mark);
    return NULL;
  }
  a = tl_build_broadcast_to(&ctx->graph, a, nd, shape);
  b = tl_build_broadcast_to(&ctx->graph, b, nd, shape);
  c = tl_build_broadcast_to(&ctx->graph, c, nd, shape);
  return tl_api_wrap_op(ctx, "where", tl_build_where(&ctx->graph, c, a, b), mark, TL_OP_WHERE, 3,
                        (tl_tensor *[]){cond, x, y}, NULL, 0);
}

tl_tensor *tl_cast(tl_tensor *a, tl_dtype dtype) {
  BEGIN(a, "cast");
  if (!tl_dtype_valid(dtype)) return tl_api_fail(ctx, mark, TL_ERR_DTYPE, "cast: invalid dtype %d", (int)dtype);
  return tl_api_wrap_op(ctx, "cast", tl_build_cast(&ctx->graph, a->u, dtype), mark, TL_OP_CAST, 1, &a, NULL, 0);
}

/* ---- reductions ------------------------------------------------------------------ */
static bool axes_mask(tl_ctx *ctx, const char *what, int ndim, int naxes, const int *axes,
                      uint64_t *mask) {
  *mask = 0;
  if (!axes) {
    *mask = ndim ? ((uint64_t)1 << ndim) - 1 : 0;
    return true;
  }
  if (naxes < 0) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "%s: naxes must be >= 0, got %d", what, naxes);
    return false;
  }
  for (int i = 0; i < naxes; i++) {
    int a = axes[i];
    if (!tl_api_axis(ctx, ndim, &a, what)) return false;
    *mask |= (uint64_t)1 << a;
  }
  return true;
}

/* drops the reduced axes unless keepdim */
static tl_uop *finish_reduce(tl_ctx *ctx, tl_uop *r, uint64_t mask, int keepdim) {
  if (!r || keepdim) return r;
  int64_t s[TL_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < r->ndim; i++)
    if (!(mask >> i & 1)) s[nd++] = r->shape[i];
  return tl_build_view(&ctx->graph, r, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, nd);
}

typedef enum { R_SUM, R_PROD, R_MAX, R_MIN, R_MEAN } reduce_kind;

/* An order-reversing bijection of x's dtype, its own inverse: not for bools, -x for
 * floats, -1 - x (~x) for integers, where -x overflows at the minimum (min and argmin
 * of an integer tensor holding INT_MIN were wrong: found by make check-numpy). */
static tl_uop *reverse_order(tl_graph *g, tl_uop *x) {
  if (!x) return NULL;
  if (x->dtype == TL_BOOL) return tl_build_unary(g, TL_OP_NOT, x);
  if (tl_dtype_is_float((tl_dtype)x->dtype)) return tl_build_unary(g, TL_OP_NEG, x);
  /* all ones minus x: -1 for the signed, the maximum for the unsigned */
  double ones = tl_dtype_is_unsigned((tl_dtype)x->dtype) ? tl_dtype_max((tl_dtype)x->dtype) : -1;
  return tl_build_binary(g, TL_OP_SUB, tl_build_const_like(g, x, ones), x);
}

static tl_uop *reduce_node(tl_ctx *ctx, tl_uop *u, reduce_kind kind, uint64_t mask) {
  tl_graph *g = &ctx->graph;
  tl_dtype dt = (tl_dtype)u->dtype;
  switch (kind) {
  case R_SUM:
  case R_PROD:
    /* as torch: bool and the integers sum in i64; u64 keeps its dtype (i64 would wrap
     * its values past 2^63 - 1) */
    if (dt == TL_BOOL || (tl_dtype_is_int(dt) && dt != TL_U64)) u = tl_build_cast(g, u, TL_I64);
    return tl_build_reduce(&ctx->graph, u, kind == R_SUM ? TL_OP_RSUM : TL_OP_RPROD, mask);
  case R_MAX: return tl_build_reduce(&ctx->graph, u, TL_OP_RMAX, mask);
  case R_MIN: { /* min x = r(max(r(x))), r reversing the order (reverse_order) */
    tl_uop *m = tl_build_reduce(&ctx->graph, reverse_order(g, u), TL_OP_RMAX, mask);
    return m ? reverse_order(g, m) : NULL;
  }
  case R_MEAN: {
    if (tl_dtype_is_half(dt)) { /* the f32 sum divided before rounding once (it may overflow f16) */
      tl_uop *m = reduce_node(ctx, tl_build_cast(g, u, TL_F32), R_MEAN, mask);
      return m ? tl_build_cast(g, m, dt) : NULL;
    }
    if (!tl_dtype_is_float(dt)) u = tl_build_cast(g, u, TL_F32);
    int64_t n = 1;
    for (int i = 0; i < u->ndim; i++)
      if (mask >> i & 1) n *= u->shape[i];
    tl_uop *s = tl_build_reduce(&ctx->graph, u, TL_OP_RSUM, mask);
    /* sum / n, a true division as numpy's (a multiply by a rounded 1/n is an ulp off) */
    return s ? tl_build_binary(g, TL_OP_DIV, s, tl_build_const_like(g, s, n ? (double)n : NAN)) : NULL;
  }
  }
  return NULL;
}

/* max and min have no identity: over an empty axis they are an error, as in numpy
 * (an identity of -inf or INT64_MIN would be a silent wrong answer) */
static bool nonempty_axes(tl_ctx *ctx, const char *what, const char *of, const tl_uop *u, uint64_t mask) {
  for (int i = 0; i < u->ndim; i++)
    if ((mask >> i & 1) && u->shape[i] == 0) {
      tl_error_set(&ctx->err, TL_ERR_SHAPE, "%s: axis %d has length 0, and the %s of no elements is undefined", what, i,
                   of);
      return false;
    }
  return true;
}

static tl_tensor *reduce(tl_tensor *t, reduce_kind kind, const char *what, int naxes,
                         const int *axes, int keepdim) {
  BEGIN(t, what);
  uint64_t mask;
  if (!axes_mask(ctx, what, t->u->ndim, naxes, axes, &mask)) return NULL;
  if ((kind == R_MAX || kind == R_MIN) && !nonempty_axes(ctx, what, kind == R_MAX ? "maximum" : "minimum", t->u, mask))
    return NULL;
  static const int ag_kind[] = {[R_SUM] = TL_AG_SUM, [R_PROD] = TL_AG_PROD, [R_MAX] = TL_AG_MAX,
                                [R_MIN] = TL_AG_MIN, [R_MEAN] = TL_AG_MEAN};
  return tl_api_wrap_op(ctx, what, finish_reduce(ctx, reduce_node(ctx, t->u, kind, mask), mask, keepdim), mark,
                        TL_AG_REDUCE, 1, &t, (int64_t[]){ag_kind[kind], (int64_t)mask, keepdim}, 3);
}

tl_tensor *tl_sum(tl_tensor *a, int n, const int *ax, int k) { return reduce(a, R_SUM, "sum", n, ax, k); }
tl_tensor *tl_prod(tl_tensor *a, int n, const int *ax, int k) { return reduce(a, R_PROD, "prod", n, ax, k); }
tl_tensor *tl_max(tl_tensor *a, int n, const int *ax, int k) { return reduce(a, R_MAX, "max", n, ax, k); }
tl_tensor *tl_min(tl_tensor *a, int n, const int *ax, int k) { return reduce(a, R_MIN, "min", n, ax, k); }
tl_tensor *tl_mean(tl_tensor *a, int n, const int *ax, int k) { return reduce(a, R_MEAN, "mean", n, ax, k); }

/* first index of the maximum: n - max(hit * (n, n-1, ..., 1)) along the axis, hit
 * where x == max x, or where x is NaN: a NaN maximum equals nothing, and the max is
 * NaN exactly when some x is (numpy and torch give the first NaN's index) */
static tl_tensor *arg_extreme(tl_tensor *t, int axis, int keepdim, bool is_min, const char *what) {
  BEGIN(t, what);
  if (!tl_api_axis(ctx, t->u->ndim, &axis, what)) return NULL;
  if (!nonempty_axes(ctx, what, what, t->u, (uint64_t)1 << axis)) return NULL;
  tl_graph *g = &ctx->graph;
  tl_uop *x = t->u;
  if (is_min) x = reverse_order(g, x);
  int64_t n = x->shape[axis];
  tl_tensor *idx = tl_api_tensor(tl_arange(ctx, TL_I64, (double)n, 0, -1), what);
  if (!idx) { /* arange's message (an axis too long to hold its indices), under our name */
    char inner[sizeof ctx->err.msg];
    snprintf(inner, sizeof inner, "%s", ctx->err.msg);
    return tl_api_fail(ctx, mark, ctx->err.status, "%s: %s", what, inner);
  }
  int64_t s[TL_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) s[i] = i == axis ? n : 1;
  tl_uop *iv = tl_build_broadcast_to(&ctx->graph, tl_build_view(&ctx->graph, idx->u, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, x->ndim),
                                   x->ndim, x->shape);
  uint64_t mask = (uint64_t)1 << axis;
  tl_uop *m = tl_build_reduce(&ctx->graph, x, TL_OP_RMAX, mask);
  tl_uop *eq = tl_build_binary(g, TL_OP_CMPEQ, x, tl_build_broadcast_to(&ctx->graph, m, x->ndim, x->shape));
  if (eq && tl_dtype_is_float((tl_dtype)x->dtype))
    eq = tl_build_binary(g, TL_OP_OR, eq, tl_build_binary(g, TL_OP_CMPNE, x, x));
  tl_uop *hit = tl_build_binary(g, TL_OP_MUL, tl_build_cast(g, eq, TL_I64), iv);
  tl_uop *best = tl_build_reduce(&ctx->graph, hit, TL_OP_RMAX, mask);
  tl_uop *r = best ? tl_build_binary(g, TL_OP_SUB, tl_build_const_like(g, best, (double)n), best) : NULL;
  tl_tensor *out = tl_api_wrap(ctx, what, finish_reduce(ctx, r, mask, keepdim), mark);
  tl_release(idx); /* after the wrap: iv may be idx's node itself */
  return out;
}

tl_tensor *tl_argmax(tl_tensor *a, int axis, int keepdim) { return arg_extreme(a, axis, keepdim, false, "argmax"); }
tl_tensor *tl_argmin(tl_tensor *a, int axis, int keepdim) { return arg_extreme(a, axis, keepdim, true, "argmin"); }

/* softmax = e / sum(e), e = exp(x - max x); log_softmax = (x - max x) - log(sum(e)) */
static tl_tensor *softmax_impl(tl_tensor *t, int axis, bool log_form, const char *what) {
  BEGIN(t, what);
  if (!tl_api_axis(ctx, t->u->ndim, &axis, what)) return NULL;
  tl_graph *g = &ctx->graph;
  tl_uop *x = t->u;
  if (!tl_dtype_is_float(x->dtype)) x = tl_build_cast(g, x, TL_F32);
  uint64_t mask = (uint64_t)1 << axis;
  tl_uop *m = tl_build_broadcast_to(&ctx->graph, tl_build_reduce(&ctx->graph, x, TL_OP_RMAX, mask), x->ndim, x->shape);
  tl_uop *shifted = tl_build_binary(g, TL_OP_SUB, x, m);
  tl_uop *e = tl_build_unary(g, TL_OP_EXP, shifted);
  tl_uop *s = tl_build_broadcast_to(&ctx->graph, tl_build_reduce(&ctx->graph, e, TL_OP_RSUM, mask), x->ndim, x->shape);
  tl_uop *r = log_form ? tl_build_binary(g, TL_OP_SUB, shifted, tl_build_unary(g, TL_OP_LOG, s))
                       : tl_build_binary(g, TL_OP_DIV, e, s);
  return tl_api_wrap_op(ctx, what, r, mark, TL_AG_SOFTMAX, 1, &t, (int64_t[]){axis, log_form}, 2);
}

tl_tensor *tl_softmax(tl_tensor *a, int axis) { return softmax_impl(a, axis, false, "softmax"); }
tl_tensor *tl_log_softmax(tl_tensor *a, int axis) { return softmax_impl(a, axis, true, "log_softmax"); }

/* ---- matmul: (..., M, K) x (..., K, N) as a broadcast product summed over K ------------- */
static tl_uop *matmul_fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) TL_PRINTF(3, 4);
static tl_uop *matmul_fail(tl_ctx *ctx, tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&ctx->err, st, fmt, ap);
  va_end(ap);
  return NULL;
}

/* numpy matmul of two nodes: the shapes checked (NULL and an error if they do not
 * match), then built (graph/build.c) */
tl_uop *tl_api_matmul(tl_ctx *ctx, tl_uop *a, tl_uop *b) {
  if (!a || !b) return NULL;
  if (a->ndim == 0 || b->ndim == 0)
    return matmul_fail(ctx, TL_ERR_SHAPE, "matmul: operands must have at least one axis");
  bool a_vec = a->ndim == 1, b_vec = b->ndim == 1;
  int nda = a_vec ? 2 : a->ndim, ndb = b_vec ? 2 : b->ndim;
  int64_t M = a_vec ? 1 : a->shape[nda - 2], K = a->shape[a->ndim - 1];
  int64_t K2 = b_vec ? b->shape[0] : b->shape[ndb - 2], N = b_vec ? 1 : b->shape[ndb - 1];
  if (K != K2)
    return matmul_fail(ctx, TL_ERR_SHAPE,
                       "matmul: inner sizes differ: (..., %lld, %lld) x (..., %lld, %lld)",
                       (long long)M, (long long)K, (long long)K2, (long long)N);
  int nb = (nda > ndb ? nda : ndb) - 2; /* batch axes */
  if (nb + 3 > TL_MAX_DIMS) return matmul_fail(ctx, TL_ERR_SHAPE, "matmul: too many batch axes");
  int64_t res[TL_MAX_DIMS];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (nda - 2)), ib = i - (nb - (ndb - 2));
    int64_t p = ia >= 0 ? a->shape[ia] : 1, q = ib >= 0 ? b->shape[ib] : 1;
    if (p != q && p != 1 && q != 1)
      return matmul_fail(ctx, TL_ERR_SHAPE, "matmul: batch sizes %lld and %lld cannot broadcast",
                         (long long)p, (long long)q);
    res[i] = p == 1 ? q : p;
  }
  /* the result must fit like any tensor. The product summed over K is never stored,
   * and its count batch*M*N*K is at most 2^60: its square is at most the product of
   * the counts of a, b and the result, each at most 2^40. */
  res[nb] = M;
  res[nb + 1] = N;
  if (!tl_api_shape_fits(ctx, "matmul", nb + 2, res)) return NULL;
  return tl_build_matmul(&ctx->graph, a, b); /* NULL: out of memory, tl_matmul's wrap says so */
}

tl_tensor *tl_matmul(tl_tensor *x, tl_tensor *y) {
  if (!x || !y || !(x = tl_api_tensor(x, "matmul")) || !(y = tl_api_tensor(y, "matmul"))) return NULL;
  tl_ctx *ctx = x->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  if (y->slot.ctx != ctx) return tl_api_fail(ctx, mark, TL_ERR_ARG, "matmul: tensors from different contexts");
  tl_uop *r = tl_api_matmul(ctx, x->u, y->u);
  return tl_api_wrap_op(ctx, "matmul", r, mark, TL_AG_MATMUL, 2, (tl_tensor *[]){x, y}, NULL, 0);
}

/* ---- rows picked by an integer tensor: one GATHER node (graph/build.c) ---------------- */
tl_tensor *tl_gather_rows(tl_tensor *table, tl_tensor *indices) {
  if (!table || !indices || !(table = tl_api_tensor(table, "gather_rows")) ||
      !(indices = tl_api_tensor(indices, "gather_rows")))
    return NULL;
  tl_ctx *ctx = table->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  if (indices->slot.ctx != ctx) return tl_api_fail(ctx, mark, TL_ERR_ARG, "gather_rows: tensors from different contexts");
  tl_uop *t = table->u, *i = indices->u;
  if (t->ndim != 2)
    return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "gather_rows: table must have 2 axes [V, D], got %d", t->ndim);
  if (i->dtype != TL_I32 && i->dtype != TL_I64)
    return tl_api_fail(ctx, mark, TL_ERR_DTYPE, "gather_rows: indices must be i32 or i64, got %s",
                       tl_dtype_name((tl_dtype)i->dtype));
  if (i->ndim >= TL_MAX_DIMS)
    return tl_api_fail(ctx, mark, TL_ERR_SHAPE, "gather_rows: indices have rank %d, at most %d leaves room for the result's axis",
                       i->ndim, TL_MAX_DIMS - 1);
  int64_t shape[TL_MAX_DIMS];
  memcpy(shape, i->shape, sizeof(int64_t) * (size_t)i->ndim);
  shape[i->ndim] = t->shape[1];
  if (!tl_api_shape_fits(ctx, "gather_rows", i->ndim + 1, shape)) return NULL; /* nothing built yet */
  return tl_api_wrap_op(ctx, "gather_rows", tl_build_gather(&ctx->graph, t, i), mark, TL_AG_GATHER, 2,
                        (tl_tensor *[]){table, indices}, NULL, 0);
}

/* ---- a convolution: one CONV2D node, whose gradients are CONV2D nodes too ------------- */
tl_tensor *tl_api_conv2d(tl_tensor *x, tl_tensor *w, int64_t sh, int64_t sw, int64_t ph, int64_t pw) {
  if (!x || !w || !(x = tl_api_tensor(x, "conv2d")) || !(w = tl_api_tensor(w, "conv2d"))) return NULL;
  tl_ctx *ctx = x->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *a = x->u, *b = w->u;
  if (w->slot.ctx != ctx || a->ndim != 4 || b->ndim != 4 || a->dtype != b->dtype || a->shape[1] != b->shape[1] ||
      sh < 1 || sw < 1 || ph < 0 || pw < 0 || sh >= TL_CONV_PARAM_LIMIT || sw >= TL_CONV_PARAM_LIMIT ||
      ph >= TL_CONV_PARAM_LIMIT || pw >= TL_CONV_PARAM_LIMIT || a->shape[2] + 2 * ph < b->shape[2] ||
      a->shape[3] + 2 * pw < b->shape[3])
    return tl_api_fail(ctx, mark, TL_ERR_INTERNAL, "conv2d: operands the caller should have checked");
  int64_t shape[4] = {a->shape[0], b->shape[0], (a->shape[2] + 2 * ph - b->shape[2]) / sh + 1,
                      (a->shape[3] + 2 * pw - b->shape[3]) / sw + 1};
  if (!tl_api_shape_fits(ctx, "conv2d", 4, shape)) return NULL;
  tl_conv_params p = {sh, sw, ph, pw};
  return tl_api_wrap_op(ctx, "conv2d", tl_build_conv2d(&ctx->graph, 0, a, b, p, shape), mark, TL_AG_CONV2D, 2,
                        (tl_tensor *[]){x, w}, (int64_t[]){sh, sw, ph, pw}, 4);
}
