/* rules.c — the rule sets run by the rewrite engine (see rewrite.h). */
#include <math.h>
#include <string.h>

#include "core/shapetracker.h"
#include "graph/rewrite.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static bool is_const_value(const tl_uop *u, double v) {
  double x;
  return tl_uop_is_const(u, &x) && x == v;
}

/* an integer CONST of the kernel graph */
static bool int_const(const tl_uop *u, int64_t *v) {
  if (u->op != TL_OP_CONST || tl_dtype_is_float(u->dtype)) return false;
  if (v) *v = u->arg.i;
  return true;
}

/* ---- constant folding ---------------------------------------------------------- */
static tl_uop *fold(tl_graph *g, tl_uop *u) {
  if (!tl_op_is_elementwise(u->op) || tl_op_is_fused(u->op)) return NULL;
  tl_value v[3] = {{0}, {0}, {0}};
  for (int i = 0; i < u->nsrc; i++) {
    const tl_uop *c = u->src[i];
    if (!tl_uop_is_const(c, NULL)) return NULL;
    if (c->op == TL_OP_VIEW) c = c->src[0];
    if (tl_dtype_is_float(c->dtype)) v[i].f = c->arg.f;
    else v[i].i = c->arg.i;
  }
  tl_dtype in = u->src[u->op == TL_OP_WHERE ? 1 : 0]->dtype;
  tl_value r = tl_value_apply(u->op, u->dtype, in, v[0], v[1], v[2]);
  tl_arg value = {0}; /* straight from the scalar: i64 stays exact */
  if (tl_dtype_is_float(u->dtype)) value.f = r.f;
  else value.i = r.i;
  tl_uop *c = tl_uop_make(g, TL_OP_CONST, u->dtype, 0, NULL, value, 0, 0, NULL);
  if (!c || u->ndim == 0) return c;
  tl_uop *like = tl_build_const_like(g, u, 0);
  if (!like) return NULL;
  tl_st st;
  tl_st_load(&st, like->arg.p);
  tl_arg arg = {.p = &st};
  return tl_uop_make(g, TL_OP_VIEW, u->dtype, 1, &c, arg, 0, u->ndim, u->shape);
}

static const tl_rule fold_rules[] = {{-1, fold}};
const tl_ruleset tl_rules_fold = {"fold", fold_rules, COUNT(fold_rules)};

/* ---- algebraic identities -------------------------------------------------------- */
static tl_uop *add_zero(tl_graph *g, tl_uop *u) {
  (void)g;
  if (is_const_value(u->src[1], 0)) return u->src[0];
  if (is_const_value(u->src[0], 0)) return u->src[1];
  return NULL;
}

static tl_uop *mul_one(tl_graph *g, tl_uop *u) {
  (void)g;
  if (is_const_value(u->src[1], 1)) return u->src[0];
  if (is_const_value(u->src[0], 1)) return u->src[1];
  return NULL;
}

static tl_uop *involution(tl_graph *g, tl_uop *u) { /* --x, !!x */
  (void)g;
  return u->src[0]->op == u->op ? u->src[0]->src[0] : NULL;
}

static tl_uop *same_operands(tl_graph *g, tl_uop *u) { /* max(x,x), where(c,x,x) */
  (void)g;
  if (u->op == TL_OP_WHERE) return u->src[1] == u->src[2] ? u->src[1] : NULL;
  return u->src[0] == u->src[1] ? u->src[0] : NULL;
}

static tl_uop *where_const(tl_graph *g, tl_uop *u) {
  (void)g;
  double c;
  if (!tl_uop_is_const(u->src[0], &c)) return NULL;
  return c != 0 ? u->src[1] : u->src[2];
}

static tl_uop *identity_view(tl_graph *g, tl_uop *u) {
  (void)g;
  const tl_uop *s = u->src[0];
  if (s->ndim != u->ndim || memcmp(s->shape, u->shape, sizeof(int64_t) * (size_t)u->ndim))
    return NULL;
  return tl_st_is_contiguous(u->arg.p) ? u->src[0] : NULL;
}

static tl_uop *contiguous_leaf(tl_graph *g, tl_uop *u) { /* already its own buffer */
  (void)g;
  int op = u->src[0]->op;
  return op == TL_OP_BUFFER || op == TL_OP_CONTIGUOUS ? u->src[0] : NULL;
}

/* A reduce of a value broadcast along axes it keeps computes the same sums once per
 * copy: sum_k x[m, k] broadcast over n. It becomes the reduce of the unbroadcast value,
 * broadcast afterwards, which the scheduler can then compute once (a matmul with a
 * broadcast operand: the backward of loss = sum(x @ w) reads ones). Only an unmasked
 * top view: its stride-0 axes are then ignored by every index. Tensor graphs only. */
static tl_uop *reduce_of_broadcast(tl_graph *g, tl_uop *u) {
  const tl_uop *v = u->src[0];
  if (!g->refcounted || v->op != TL_OP_VIEW) return NULL;
  tl_st st;
  tl_st_load(&st, v->arg.p);
  tl_view *top = &st.views[st.nviews - 1];
  if (top->masked) return NULL;
  int64_t reduced[TL_MAX_DIMS];
  bool any = false;
  memcpy(reduced, u->shape, sizeof(int64_t) * (size_t)u->ndim);
  for (int d = 0; d < top->ndim; d++)
    if (top->shape[d] > 1 && top->strides[d] == 0 && !(u->arg.u >> d & 1)) {
      top->shape[d] = 1;
      reduced[d] = 1;
      any = true;
    }
  if (!any) return NULL;
  tl_arg varg = {.p = &st};
  const tl_uop *base = v->src[0];
  bool same = tl_st_is_contiguous(&st) && top->ndim == base->ndim &&
              !memcmp(top->shape, base->shape, sizeof(int64_t) * (size_t)base->ndim);
  tl_uop *in = same ? v->src[0]
               : tl_uop_make(g, TL_OP_VIEW, (tl_dtype)v->dtype, 1, (tl_uop *const *)&v->src[0], varg, 0,
                             top->ndim, top->shape);
  tl_uop *r = in ? tl_uop_make(g, u->op, (tl_dtype)u->dtype, 1, &in, u->arg, u->arg2, u->ndim, reduced) : NULL;
  if (!r) return NULL;
  tl_st out = tl_st_contiguous(u->ndim, reduced);
  tl_st_expand(&out, u->shape);
  tl_arg oarg = {.p = &out};
  return tl_uop_make(g, TL_OP_VIEW, (tl_dtype)u->dtype, 1, &r, oarg, 0, u->ndim, u->shape);
}

static const tl_rule algebra_rules[] = {
    {TL_OP_CONTIGUOUS, contiguous_leaf},
    {TL_OP_ADD, add_zero},        {TL_OP_MUL, mul_one},     {TL_OP_NEG, involution},
    {TL_OP_NOT, involution},      {TL_OP_MAX, same_operands}, {TL_OP_WHERE, same_operands},
    {TL_OP_WHERE, where_const},   {TL_OP_VIEW, identity_view},
    {TL_OP_RSUM, reduce_of_broadcast}, {TL_OP_RMAX, reduce_of_broadcast}, {TL_OP_RPROD, reduce_of_broadcast},
};
const tl_ruleset tl_rules_algebra = {"algebra", algebra_rules, COUNT(algebra_rules)};

/* ---- fused ops into primitives ----------------------------------------------------- */
static tl_uop *k(tl_graph *g, tl_uop *like, double v) { return tl_build_const_like(g, like, v); }

static tl_uop *sub_rule(tl_graph *g, tl_uop *u) {
  return tl_build_binary(g, TL_OP_ADD, u->src[0], tl_build_unary(g, TL_OP_NEG, u->src[1]));
}

/* a float division stays a true division (IDIV renders as `/` on floats): a multiply by
 * a folded reciprocal is off by an ulp (6 / 3 != 6 * (1 / 3) in f32), and numpy is exact */
static tl_uop *div_rule(tl_graph *g, tl_uop *u) {
  return tl_build_binary(g, TL_OP_IDIV, u->src[0], u->src[1]);
}

static tl_uop *min_rule(tl_graph *g, tl_uop *u) {
  tl_uop *a = u->src[0], *b = u->src[1];
  return tl_build_where(g, tl_build_binary(g, TL_OP_CMPLT, a, b), a, b);
}

static tl_uop *cmp_rule(tl_graph *g, tl_uop *u) {
  tl_uop *a = u->src[0], *b = u->src[1];
  if (u->op == TL_OP_CMPGT) return tl_build_binary(g, TL_OP_CMPLT, b, a);
  tl_uop *lt = u->op == TL_OP_CMPLE ? tl_build_binary(g, TL_OP_CMPLT, a, b)
                                    : tl_build_binary(g, TL_OP_CMPLT, b, a);
  return tl_build_binary(g, TL_OP_OR, lt, tl_build_binary(g, TL_OP_CMPEQ, a, b));
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: one exp(-|x|) that never
 * overflows, so sigmoid(-100) is 3.8e-44 (the quotient of a huge e^-x gave 0) */
static tl_uop *sigmoid_rule(tl_graph *g, tl_uop *u) {
  tl_uop *x = u->src[0];
  tl_uop *e = tl_build_unary(g, TL_OP_EXP, tl_build_unary(g, TL_OP_NEG, tl_build_unary(g, TL_OP_ABS, x)));
  tl_uop *num = tl_build_where(g, tl_build_binary(g, TL_OP_CMPLT, x, k(g, x, 0)), e, k(g, x, 1));
  return tl_build_binary(g, TL_OP_DIV, num, tl_build_binary(g, TL_OP_ADD, k(g, x, 1), e));
}

static tl_uop *relu_rule(tl_graph *g, tl_uop *u) {
  return tl_build_binary(g, TL_OP_MAX, u->src[0], k(g, u->src[0], 0));
}

/* integers only: a float abs renders as fabs, which clears the sign of -0.0 and +0.0
 * alike (max(x, -x) returns -0.0 for +0.0) */
static tl_uop *abs_rule(tl_graph *g, tl_uop *u) {
  tl_uop *x = u->src[0];
  if (u->dtype == TL_F32 || u->dtype == TL_F64) return NULL;
  if (tl_dtype_is_unsigned((tl_dtype)u->dtype)) return x; /* -x wraps: max(5, -5) would be 251 in u8 */
  return tl_build_binary(g, TL_OP_MAX, x, tl_build_unary(g, TL_OP_NEG, x));
}

/* x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), torch's default gelu */
static tl_uop *gelu_rule(tl_graph *g, tl_uop *u) {
  tl_uop *x = u->src[0];
  tl_uop *e = tl_build_unary(g, TL_OP_ERF, tl_build_binary(g, TL_OP_MUL, x, k(g, x, 0.7071067811865476)));
  tl_uop *half_x = tl_build_binary(g, TL_OP_MUL, x, k(g, x, 0.5));
  return tl_build_binary(g, TL_OP_MUL, half_x, tl_build_binary(g, TL_OP_ADD, e, k(g, x, 1)));
}

/* the tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
static tl_uop *gelu_tanh_rule(tl_graph *g, tl_uop *u) {
  tl_uop *x = u->src[0];
  tl_uop *x3 = tl_build_binary(g, TL_OP_MUL, x, tl_build_binary(g, TL_OP_MUL, x, x));
  tl_uop *in = tl_build_binary(g, TL_OP_ADD, x, tl_build_binary(g, TL_OP_MUL, x3, k(g, x, 0.044715)));
  tl_uop *t = tl_build_unary(g, TL_OP_TANH, tl_build_binary(g, TL_OP_MUL, in, k(g, x, 0.7978845608028654)));
  tl_uop *half_x = tl_build_binary(g, TL_OP_MUL, x, k(g, x, 0.5));
  return tl_build_binary(g, TL_OP_MUL, half_x, tl_build_binary(g, TL_OP_ADD, t, k(g, x, 1)));
}

/* Box-Muller: sqrt(-2 ln(1-u1)) cos(2 pi u2), u1 and u2 two streams of one key */
static tl_uop *randn_rule(tl_graph *g, tl_uop *u) {
  tl_uop *un[2];
  for (int i = 0; i < 2; i++)
    un[i] = tl_uop_make(g, TL_OP_UNIFORM, u->dtype, 0, NULL, u->arg, u->arg2 + (i + 1) * TL_RANDN_STREAM_STEP, u->ndim,
                        u->shape);
  tl_uop *one_minus = tl_build_binary(g, TL_OP_ADD, k(g, u, 1), tl_build_unary(g, TL_OP_NEG, un[0]));
  tl_uop *r = tl_build_unary(g, TL_OP_SQRT,
                             tl_build_binary(g, TL_OP_MUL, tl_build_unary(g, TL_OP_LOG, one_minus), k(g, u, -2)));
  tl_uop *c = tl_build_unary(g, TL_OP_COS, tl_build_binary(g, TL_OP_MUL, un[1], k(g, u, 6.283185307179586)));
  return tl_build_binary(g, TL_OP_MUL, r, c);
}

static const tl_rule fallback_rules[] = {
    {TL_OP_SUB, sub_rule},         {TL_OP_DIV, div_rule},   {TL_OP_MIN, min_rule},
    {TL_OP_CMPLE, cmp_rule},       {TL_OP_CMPGT, cmp_rule}, {TL_OP_CMPGE, cmp_rule},
    {TL_OP_SIGMOID, sigmoid_rule}, {TL_OP_RELU, relu_rule}, {TL_OP_ABS, abs_rule},
    {TL_OP_GELU, gelu_rule},       {TL_OP_GELU_TANH, gelu_tanh_rule}, {TL_OP_RANDN, randn_rule},
};
const tl_ruleset tl_rules_fallback = {"fallback", fallback_rules, COUNT(fallback_rules)};

/* ---- index arithmetic (kernel graphs, integer expressions) ------------------------ */
static tl_uop *ic(tl_graph *g, int64_t v) { /* exact, unlike a trip through double */
  tl_arg arg = {.i = v};
  return tl_uop_make(g, TL_OP_CONST, TL_I64, 0, NULL, arg, 0, 0, NULL);
}

static bool is_index(const tl_uop *u) { return u->dtype == TL_I64; }

static tl_uop *const_right(tl_graph *g, tl_uop *u) { /* c + x -> x + c, c * x -> x * c */
  if (!is_index(u) || !int_const(u->src[0], NULL) || int_const(u->src[1], NULL)) return NULL;
  return tl_build_binary(g, u->op, u->src[1], u->src[0]);
}

static tl_uop *add_assoc(tl_graph *g, tl_uop *u) { /* (x + c1) + c2 -> x + (c1 + c2) */
  int64_t c1, c2;
  tl_uop *a = u->src[0];
  if (!is_index(u) || !int_const(u->src[1], &c2) || a->op != TL_OP_ADD || !int_const(a->src[1], &c1))
    return NULL;
  return tl_build_binary(g, TL_OP_ADD, a->src[0], ic(g, c1 + c2));
}

static tl_uop *mul_rules(tl_graph *g, tl_uop *u) {
  int64_t c, c1;
  tl_uop *a = u->src[0];
  if (!is_index(u) || !int_const(u->src[1], &c)) return NULL;
  if (c == 0) return ic(g, 0);
  if (a->op == TL_OP_MUL && int_const(a->src[1], &c1)) /* (x * c1) * c */
    return tl_build_binary(g, TL_OP_MUL, a->src[0], ic(g, c1 * c));
  if (a->op == TL_OP_ADD) /* (x + y) * c -> x*c + y*c: exposes multiples to / and % */
    return tl_build_binary(g, TL_OP_ADD, tl_build_binary(g, TL_OP_MUL, a->src[0], u->src[1]),
                           tl_build_binary(g, TL_OP_MUL, a->src[1], u->src[1]));
  return NULL;
}

/* Splits an ADD tree into the terms that are multiples of c (returned as their
 * quotient sum) and the rest. */
static void split_terms(tl_graph *g, tl_uop *x, int64_t c, tl_uop **quot, tl_uop **rest) {
  int64_t k;
  if (x->op == TL_OP_ADD) {
    split_terms(g, x->src[0], c, quot, rest);
    split_terms(g, x->src[1], c, quot, rest);
    return;
  }
  tl_uop *q = NULL;
  if (int_const(x, &k) && k % c == 0) q = ic(g, k / c);
  else if (x->op == TL_OP_MUL && int_const(x->src[1], &k) && k % c == 0)
    q = tl_build_binary(g, TL_OP_MUL, x->src[0], ic(g, k / c));
  if (q) *quot = *quot ? tl_build_binary(g, TL_OP_ADD, *quot, q) : q;
  else *rest = *rest ? tl_build_binary(g, TL_OP_ADD, *rest, x) : x;
}

static tl_uop *divmod_rules(tl_graph *g, tl_uop *u) {
  int64_t c, c2;
  tl_uop *x = u->src[0];
  if (!is_index(u) || !int_const(u->src[1], &c) || c <= 0) return NULL;
  bool div = u->op == TL_OP_IDIV;
  if (c == 1) return div ? x : ic(g, 0);
  if (x->vmin < 0) return NULL; /* C truncates toward zero: the rules below need x >= 0 */
  if (x->vmax < c) return div ? ic(g, 0) : x;
  if (x->vmin / c == x->vmax / c) { /* one quotient over x's whole range */
    int64_t q = x->vmin / c;
    return div ? ic(g, q) : tl_build_binary(g, TL_OP_ADD, x, ic(g, -q * c));
  }
  if (div && x->op == TL_OP_IDIV && int_const(x->src[1], &c2) && c2 > 0 && x->src[0]->vmin >= 0)
    return tl_build_binary(g, TL_OP_IDIV, x->src[0], ic(g, c * c2));
  if (!div && x->op == TL_OP_MOD && int_const(x->src[1], &c2) && c2 > 0 && c2 % c == 0)
    return tl_build_binary(g, TL_OP_MOD, x->src[0], u->src[1]); /* (x % kc) % c */
  tl_uop *quot = NULL, *rest = NULL;
  split_terms(g, x, c, &quot, &rest);
  if (!quot) return NULL;
  if (rest && rest->vmin < 0) return NULL; /* truncation would differ from floor */
  if (!div) return rest ? tl_build_binary(g, TL_OP_MOD, rest, u->src[1]) : ic(g, 0);
  return rest ? tl_build_binary(g, TL_OP_ADD, quot, tl_build_binary(g, TL_OP_IDIV, rest, u->src[1]))
              : quot;
}

static tl_uop *cmp_bounds(tl_graph *g, tl_uop *u) {
  const tl_uop *a = u->src[0], *b = u->src[1];
  if (!is_index(a)) return NULL;
  if (a->vmax < b->vmin) return tl_build_const(g, TL_BOOL, 1);
  if (a->vmin >= b->vmax) return tl_build_const(g, TL_BOOL, 0);
  return NULL;
}

static tl_uop *and_rules(tl_graph *g, tl_uop *u) {
  (void)g;
  int64_t c;
  if (u->dtype != TL_BOOL) return NULL;
  for (int i = 0; i < 2; i++)
    if (int_const(u->src[i], &c)) return c ? u->src[1 - i] : u->src[i];
  return u->src[0] == u->src[1] ? u->src[0] : NULL;
}

static const tl_rule index_rules[] = {
    {TL_OP_ADD, const_right},  {TL_OP_MUL, const_right}, {TL_OP_ADD, add_assoc},
    {TL_OP_MUL, mul_rules},    {TL_OP_IDIV, divmod_rules}, {TL_OP_MOD, divmod_rules},
    {TL_OP_CMPLT, cmp_bounds}, {TL_OP_AND, and_rules},
};
const tl_ruleset tl_rules_index = {"index", index_rules, COUNT(index_rules)};

/* ---- splitting big reductions (tensor graphs) ------------------------------------- */
enum { SPLIT_MIN_ELEMENTS = 1 << 16, SPLIT_ROWS = 256 };

/* the divisor of n closest to SPLIT_ROWS from below, at least 8; 0 if none */
static int64_t split_rows(int64_t n) {
  for (int64_t p = SPLIT_ROWS; p >= 8; p--)
    if (n % p == 0) return p;
  return 0;
}

static tl_uop *reshape_node(tl_graph *g, tl_uop *u, int ndim, const int64_t *shape) {
  tl_st st = tl_st_contiguous(u->ndim, u->shape);
  if (!tl_st_reshape(&st, ndim, shape)) return NULL;
  tl_arg arg = {.p = &st};
  return tl_uop_make(g, TL_OP_VIEW, (tl_dtype)u->dtype, 1, &u, arg, 0, ndim, shape);
}

static tl_uop *reduce_node(tl_graph *g, int op, tl_uop *src, uint64_t axes, int ndim, const int64_t *shape) {
  tl_arg arg = {.u = axes};
  return tl_uop_make(g, op, (tl_dtype)src->dtype, 1, &src, arg, 0, ndim, shape);
}

static tl_uop *split_reduce(tl_graph *g, tl_uop *u) {
  const tl_uop *src = u->src[0];
  int64_t n = tl_uop_numel(src), p = split_rows(n);
  if (tl_uop_numel(u) != 1 || n < SPLIT_MIN_ELEMENTS || !p || src->ndim == 0) return NULL;
  int64_t rows[2] = {p, n / p}, partial[2] = {p, 1}, one[2] = {1, 1};
  tl_uop *m = reshape_node(g, u->src[0], 2, rows);
  tl_uop *inner = m ? reduce_node(g, u->op, m, 2, 2, partial) : NULL;
  tl_uop *c = inner ? tl_build_unary(g, TL_OP_CONTIGUOUS, inner) : NULL;
  tl_uop *outer = c ? reduce_node(g, u->op, c, 1, 2, one) : NULL;
  return outer ? reshape_node(g, outer, u->ndim, u->shape) : NULL;
}

static const tl_rule split_rules[] = {
    {TL_OP_RSUM, split_reduce}, {TL_OP_RMAX, split_reduce}, {TL_OP_RPROD, split_reduce}};
const tl_ruleset tl_rules_split = {"split", split_rules, COUNT(split_rules)};
