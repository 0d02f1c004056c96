/* grad_rules.c — the gradient of every recorded operation, as graph nodes.
 *
 * Rules work in the operation's compute dtype and output shape; unbroadcast() then
 * sums a gradient over the axes an input was broadcast along and casts it back to
 * the input's dtype. Every node built here is a temporary of the tensor graph. */
#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "graph/rewrite.h"

typedef struct {
  tl_ctx *ctx;
  tl_graph *g;
  const tl_ag_node *n;
} rule;

static tl_uop *konst(rule *r, tl_uop *like, double v) { return like ? tl_build_const_like(r->g, like, v) : NULL; }
static tl_uop *un(rule *r, int op, tl_uop *a) { return a ? tl_build_unary(r->g, op, a) : NULL; }
static tl_uop *bin(rule *r, int op, tl_uop *a, tl_uop *b) { return a && b ? tl_build_binary(r->g, op, a, b) : NULL; }
static tl_uop *mul(rule *r, tl_uop *a, tl_uop *b) { return bin(r, TL_OP_MUL, a, b); }
static tl_uop *sel(rule *r, tl_uop *c, tl_uop *a, tl_uop *b) {
  return c && a && b ? tl_build_where(r->g, c, a, b) : NULL;
}

/* a saved value in the output's dtype and shape */
static tl_uop *full(rule *r, tl_uop *u) {
  if (!u) return NULL;
  u = tl_build_cast(r->g, u, r->n->dtype);
  return tl_build_broadcast_to(r->g, u, r->n->ndim, r->n->shape);
}
static tl_uop *in_value(rule *r, int i) { return full(r, r->n->in[i].value); }

static tl_uop *reshape(rule *r, tl_uop *u, int ndim, const int64_t *shape) {
  return tl_build_view(r->g, u, TL_MOVE_RESHAPE, shape, NULL, NULL, NULL, ndim);
}

/* g summed down to (ndim, shape) along the axes that were broadcast, then cast */
static tl_uop *unbroadcast(rule *r, tl_uop *g, int ndim, const int64_t *shape, tl_dtype dtype) {
  if (!g) return NULL;
  int lead = g->ndim - ndim;
  uint64_t mask = 0;
  for (int i = 0; i < g->ndim; i++)
    if (i < lead || (shape[i - lead] == 1 && g->shape[i] != 1)) mask |= (uint64_t)1 << i;
  if (mask) g = tl_build_reduce(r->g, g, TL_OP_RSUM, mask);
  g = reshape(r, g, ndim, shape);
  return g ? tl_build_cast(r->g, g, dtype) : NULL;
}
static tl_uop *to_input(rule *r, tl_uop *g, int i) {
  const tl_ag_input *in = &r->n->in[i];
  return unbroadcast(r, g, in->ndim, in->shape, in->dtype);
}

/* ---- elementwise ------------------------------------------------------------------ */
static tl_uop *unary_grad(rule *r, tl_uop *g) {
  tl_uop *x = in_value(r, 0), *y = full(r, r->n->out);
  switch ((int)r->n->p[0]) {
  case TL_OP_NEG: return un(r, TL_OP_NEG, g);
  case TL_OP_EXP: return mul(r, g, y);
  case TL_OP_LOG: return bin(r, TL_OP_DIV, g, x);
  case TL_OP_SQRT: return bin(r, TL_OP_DIV, g, mul(r, y, konst(r, y, 2)));
  case TL_OP_SIN: return mul(r, g, un(r, TL_OP_COS, x));
  case TL_OP_COS: return un(r, TL_OP_NEG, mul(r, g, un(r, TL_OP_SIN, x)));
  case TL_OP_TANH: return mul(r, g, bin(r, TL_OP_SUB, konst(r, y, 1), mul(r, y, y)));
  case TL_OP_SIGMOID: return mul(r, g, mul(r, y, bin(r, TL_OP_SUB, konst(r, y, 1), y)));
  case TL_OP_RELU: return sel(r, bin(r, TL_OP_CMPGT, y, konst(r, y, 0)), g, konst(r, g, 0));
  case TL_OP_RECIP: return un(r, TL_OP_NEG, mul(r, g, mul(r, y, y)));
  case TL_OP_ABS: { /* sign(x), 0 at 0 */
    tl_uop *zero = konst(r, x, 0);
    tl_uop *s = sel(r, bin(r, TL_OP_CMPGT, x, zero), konst(r, x, 1),
                    sel(r, bin(r, TL_OP_CMPLT, x, zero), konst(r, x, -1), zero));
    return mul(r, g, s);
  }
  case TL_OP_GELU: { /* d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi) */
    tl_uop *cdf = mul(r, konst(r, x, 0.5),
                      bin(r, TL_OP_ADD, konst(r, x, 1), un(r, TL_OP_ERF, mul(r, x, konst(r, x, 0.7071067811865476)))));
    tl_uop *pdf = mul(r, konst(r, x, 0.3989422804014327), un(r, TL_OP_EXP, mul(r, mul(r, x, x), konst(r, x, -0.5))));
    return mul(r, g, bin(r, TL_OP_ADD, cdf, mul(r, x, pdf)));
  }
  case TL_OP_GELU_TANH: { /* d/dx 0.5 x (1 + tanh(c (x + k x^3))) */
    const double c = 0.7978845608028654, k = 0.044715;
    tl_uop *x2 = mul(r, x, x);
    tl_uop *t = un(r, TL_OP_TANH, mul(r, konst(r, x, c), mul(r, x, bin(r, TL_OP_ADD, konst(r, x, 1), mul(r, konst(r, x, k), x2)))));
    tl_uop *dt = mul(r, bin(r, TL_OP_SUB, konst(r, x, 1), mul(r, t, t)),
                     mul(r, konst(r, x, c), bin(r, TL_OP_ADD, konst(r, x, 1), mul(r, konst(r, x, 3 * k), x2))));
    tl_uop *d = bin(r, TL_OP_ADD, mul(r, konst(r, x, 0.5), bin(r, TL_OP_ADD, konst(r, x, 1), t)),
                    mul(r, mul(r, konst(r, x, 0.5), x), dt));
    return mul(r, g, d);
  }
  }
  tl_error_set(&r->ctx->err, TL_ERR_INTERNAL, "backward: no gradient rule for %s", tl_op_name((int)r->n->p[0]));
  return NULL;
}

/* maximum/minimum: the winner takes the gradient, a tie shares it equally */
static void extreme_grad(rule *r, tl_uop *g, tl_uop *a, tl_uop *b, bool is_max, tl_uop **ga, tl_uop **gb) {
  tl_uop *wins_a = is_max ? bin(r, TL_OP_CMPGT, a, b) : bin(r, TL_OP_CMPLT, a, b);
  tl_uop *wins_b = is_max ? bin(r, TL_OP_CMPGT, b, a) : bin(r, TL_OP_CMPLT, b, a);
  tl_uop *half = mul(r, g, konst(r, g, 0.5)), *zero = konst(r, g, 0);
  *ga = sel(r, wins_a, g, sel(r, wins_b, zero, half));
  *gb = sel(r, wins_b, g, sel(r, wins_a, zero, half));
}

static void binary_grad(rule *r, tl_uop *g, tl_uop **ga, tl_uop **gb) {
  const tl_ag_node *n = r->n;
  tl_uop *a = n->in[0].value ? in_value(r, 0) : NULL, *b = n->in[1].value ? in_value(r, 1) : NULL;
  switch ((int)n->p[0]) {
  case TL_OP_ADD: *ga = g, *gb = g; break;
  case TL_OP_SUB: *ga = g, *gb = un(r, TL_OP_NEG, g); break;
  case TL_OP_MUL: *ga = mul(r, g, b), *gb = mul(r, g, a); break;
  case TL_OP_DIV: { /* a / b: g / b and -g a / b^2 = -(g / b) y */
    tl_uop *gb_ = bin(r, TL_OP_DIV, g, b);
    *ga = gb_;
    *gb = un(r, TL_OP_NEG, mul(r, gb_, full(r, n->out)));
    break;
  }
  case TL_OP_POW: { /* a^b: g b a^(b-1), g y log a (0 where a <= 0: log is undefined there) */
    tl_uop *y = full(r, n->out);
    *ga = mul(r, g, mul(r, b, bin(r, TL_OP_POW, a, bin(r, TL_OP_SUB, b, konst(r, b, 1)))));
    tl_uop *pos = bin(r, TL_OP_CMPGT, a, konst(r, a, 0));
    tl_uop *safe = sel(r, pos, a, konst(r, a, 1));
    *gb = sel(r, pos, mul(r, g, mul(r, y, un(r, TL_OP_LOG, safe))), konst(r, g, 0));
    break;
  }
  case TL_OP_MAX: extreme_grad(r, g, a, b, true, ga, gb); break;
  case TL_OP_MIN: extreme_grad(r, g, a, b, false, ga, gb); break;
  default:
    tl_error_set(&r->ctx->err, TL_ERR_INTERNAL, "backward: no gradient rule for %s", tl_op_name((int)n->p[0]));
  }
}

/* ---- reductions ------------------------------------------------------------------- */
/* g (the reduce's output) as a tensor of the input's shape */
static tl_uop *spread(rule *r, tl_uop *g, int in_ndim, const int64_t *in_shape, uint64_t mask) {
  int64_t kept[TL_MAX_DIMS];
  for (int i = 0; i < in_ndim; i++) kept[i] = (mask >> i & 1) ? 1 : in_shape[i];
  return tl_build_broadcast_to(r->g, reshape(r, g, in_ndim, kept), in_ndim, in_shape);
}

static tl_uop *reduce_grad(rule *r, tl_uop *g) {
  const tl_ag_node *n = r->n;
  const tl_ag_input *in = &n->in[0];
  uint64_t mask = (uint64_t)n->p[1];
  tl_uop *gs = spread(r, g, in->ndim, in->shape, mask);
  tl_uop *x = in->value ? tl_build_cast(r->g, in->value, n->dtype) : NULL;
  tl_uop *y = n->out ? spread(r, n->out, in->ndim, in->shape, mask) : NULL;
  switch ((int)n->p[0]) {
  case TL_AG_SUM: return gs;
  case TL_AG_MEAN: {
    int64_t count = 1;
    for (int i = 0; i < in->ndim; i++)
      if (mask >> i & 1) count *= in->shape[i];
    return mul(r, gs, konst(r, gs, count ? 1.0 / (double)count : NAN));
  }
  case TL_AG_MAX:
  case TL_AG_MIN: { /* shared among the elements equal to the extreme */
    tl_uop *hit = tl_build_cast(r->g, bin(r, TL_OP_CMPEQ, x, y), n->dtype);
    tl_uop *count = spread(r, tl_build_reduce(r->g, hit, TL_OP_RSUM, mask), in->ndim, in->shape, mask);
    return mul(r, gs, bin(r, TL_OP_DIV, hit, count));
  }
  case TL_AG_PROD: { /* the product of the others: y / x, or, at a zero, the rest's product */
    tl_uop *zero = konst(r, x, 0), *one = konst(r, x, 1);
    tl_uop *is_zero = bin(r, TL_OP_CMPEQ, x, zero);
    tl_uop *nonzero = sel(r, is_zero, one, x);
    tl_uop *rest = tl_build_reduce(r->g, nonzero, TL_OP_RPROD, mask);
    tl_uop *zeros = tl_build_reduce(r->g, tl_build_cast(r->g, is_zero, n->dtype), TL_OP_RSUM, mask);
    rest = spread(r, rest, in->ndim, in->shape, mask);
    zeros = spread(r, zeros, in->ndim, in->shape, mask);
    tl_uop *at_zero = sel(r, bin(r, TL_OP_CMPEQ, zeros, one), rest, zero);
    return mul(r, gs, sel(r, is_zero, at_zero, bin(r, TL_OP_DIV, y, nonzero)));
  }
  }
  return NULL;
}

/* softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g) */
static tl_uop *softmax_grad(rule *r, tl_uop *g) {
  const tl_ag_node *n = r->n;
  uint64_t mask = (uint64_t)1 << n->p[0];
  tl_uop *y = n->out;
  if (n->p[1]) {
    tl_uop *s = spread(r, tl_build_reduce(r->g, g, TL_OP_RSUM, mask), n->ndim, n->shape, mask);
    return bin(r, TL_OP_SUB, g, mul(r, un(r, TL_OP_EXP, y), s));
  }
  tl_uop *s = spread(r, tl_build_reduce(r->g, mul(r, g, y), TL_OP_RSUM, mask), n->ndim, n->shape, mask);
  return mul(r, y, bin(r, TL_OP_SUB, g, s));
}

/* ---- movement --------------------------------------------------------------------- */
static tl_uop *shrink_to(rule *r, tl_uop *g, const int64_t *begin, const int64_t *end) {
  return tl_build_view(r->g, g, TL_MOVE_SHRINK, begin, end, NULL, NULL, g ? g->ndim : 0);
}
static tl_uop *pad_by(rule *r, tl_uop *g, const int64_t *before, const int64_t *after) {
  return tl_build_view(r->g, g, TL_MOVE_PAD, before, after, NULL, NULL, g ? g->ndim : 0);
}

/* the gradient of x[start:stop:step] along axis: g spread back to every step-th place */
static tl_uop *slice_grad(rule *r, tl_uop *g) {
  const tl_ag_input *in = &r->n->in[0];
  int axis = (int)r->n->p[0], nd = in->ndim;
  int64_t start = r->n->p[1], stop = r->n->p[2], step = r->n->p[3];
  int64_t len = stop - start, cnt = r->n->shape[axis];
  int64_t before[TL_MAX_DIMS] = {0}, after[TL_MAX_DIMS] = {0};
  if (step > 1 && cnt > 0) { /* (.., cnt, ..) -> (.., cnt, 1, ..) -> pad to (.., cnt, step, ..) -> (.., cnt*step, ..) */
    int64_t s[TL_MAX_DIMS], z[TL_MAX_DIMS] = {0}, e[TL_MAX_DIMS], pa[TL_MAX_DIMS] = {0};
    for (int i = 0, k = 0; i < nd; i++) {
      s[k++] = g->shape[i];
      if (i == axis) s[k++] = 1;
    }
    g = reshape(r, g, nd + 1, s);
    pa[axis + 1] = step - 1;
    g = tl_build_view(r->g, g, TL_MOVE_PAD, z, pa, NULL, NULL, nd + 1);
    memcpy(s, r->n->shape, sizeof(int64_t) * (size_t)nd);
    s[axis] = cnt * step;
    g = reshape(r, g, nd, s);
    memcpy(e, s, sizeof e);
    e[axis] = len;
    g = shrink_to(r, g, z, e);
  } else if (step > 1) { /* nothing was taken: a zero gradient of the sliced length */
    int64_t s[TL_MAX_DIMS];
    memcpy(s, r->n->shape, sizeof s);
    s[axis] = len;
    g = tl_build_broadcast_to(r->g, tl_build_const(r->g, r->n->dtype, 0), nd, s);
  }
  before[axis] = start;
  after[axis] = in->shape[axis] - stop;
  return pad_by(r, g, before, after);
}

static tl_uop *movement_grad(rule *r, tl_uop *g) {
  const tl_ag_node *n = r->n;
  const tl_ag_input *in = &n->in[0];
  int nd = in->ndim;
  switch (n->op) {
  case TL_AG_RESHAPE: return reshape(r, g, nd, in->shape);
  case TL_AG_CONTIGUOUS: return g;
  case TL_AG_EXPAND: return unbroadcast(r, g, nd, in->shape, n->dtype);
  case TL_AG_PERMUTE: {
    int inverse[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) inverse[n->p[i]] = i;
    return tl_build_view(r->g, g, TL_MOVE_PERMUTE, NULL, NULL, inverse, NULL, nd);
  }
  case TL_AG_SHRINK: {
    int64_t before[TL_MAX_DIMS], after[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
      before[i] = n->p[i];
      after[i] = in->shape[i] - n->p[nd + i];
    }
    return pad_by(r, g, before, after);
  }
  case TL_AG_PAD: {
    int64_t begin[TL_MAX_DIMS], end[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
      begin[i] = n->p[i];
      end[i] = n->p[i] + in->shape[i];
    }
    return shrink_to(r, g, begin, end);
  }
  case TL_AG_FLIP: {
    bool flags[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) flags[i] = n->p[i] != 0;
    return tl_build_view(r->g, g, TL_MOVE_FLIP, NULL, NULL, NULL, flags, nd);
  }
  case TL_AG_SLICE: return slice_grad(r, g);
  }
  return NULL;
}

/* ---- matmul: (.., M, K) x (.., K, N) ---------------------------------------------- */
static tl_uop *swap_last(rule *r, tl_uop *u) {
  int perm[TL_MAX_DIMS];
  for (int i = 0; i < u->ndim; i++) perm[i] = i;
  perm[u->ndim - 2] = u->ndim - 1;
  perm[u->ndim - 1] = u->ndim - 2;
  return tl_build_view(r->g, u, TL_MOVE_PERMUTE, NULL, NULL, perm, NULL, u->ndim);
}

static void matmul_grad(rule *r, tl_uop *g, tl_uop **ga, tl_uop **gb) {
  const tl_ag_node *n = r->n;
  const tl_ag_input *ia = &n->in[0], *ib = &n->in[1];
  tl_uop *a = tl_build_cast(r->g, ia->value, n->dtype), *b = tl_build_cast(r->g, ib->value, n->dtype);
  bool a_vec = ia->ndim == 1, b_vec = ib->ndim == 1;
  int64_t sa[TL_MAX_DIMS], sb[TL_MAX_DIMS], sg[TL_MAX_DIMS];
  int nda = a_vec ? 2 : ia->ndim, ndb = b_vec ? 2 : ib->ndim;
  if (a_vec) sa[0] = 1, sa[1] = ia->shape[0];
  else memcpy(sa, ia->shape, sizeof(int64_t) * (size_t)nda);
  if (b_vec) sb[0] = ib->shape[0], sb[1] = 1;
  else memcpy(sb, ib->shape, sizeof(int64_t) * (size_t)ndb);
  int nbatch = n->ndim - !a_vec - !b_vec, k = 0;
  for (int i = 0; i < nbatch; i++) sg[k++] = n->shape[i];
  sg[k++] = sa[nda - 2];
  sg[k++] = sb[ndb - 1];
  tl_uop *a2 = reshape(r, a, nda, sa), *b2 = reshape(r, b, ndb, sb), *g2 = reshape(r, g, k, sg);
  if (!a2 || !b2 || !g2) return;
  if (ia->fn) {
    tl_uop *full_a = tl_api_matmul(r->ctx, g2, swap_last(r, b2));
    *ga = reshape(r, unbroadcast(r, full_a, nda, sa, ia->dtype), ia->ndim, ia->shape);
  }
  if (ib->fn) {
    tl_uop *full_b = tl_api_matmul(r->ctx, swap_last(r, a2), g2);
    *gb = reshape(r, unbroadcast(r, full_b, ndb, sb, ib->dtype), ib->ndim, ib->shape);
  }
}

/* ---- dispatch --------------------------------------------------------------------- */
bool tl_ag_input_grads(tl_ctx *ctx, const tl_ag_node *n, tl_uop *g, tl_uop **grads) {
  rule r = {ctx, &ctx->graph, n};
  g = tl_build_cast(r.g, g, n->dtype);
  switch (n->op) {
  case TL_AG_UNARY: grads[0] = to_input(&r, unary_grad(&r, g), 0); break;
  case TL_AG_BINARY: {
    tl_uop *ga = NULL, *gb = NULL;
    binary_grad(&r, g, &ga, &gb);
    if (n->in[0].fn) grads[0] = to_input(&r, ga, 0);
    if (n->in[1].fn) grads[1] = to_input(&r, gb, 1);
    break;
  }
  case TL_AG_WHERE: {
    tl_uop *c = tl_build_broadcast_to(&ctx->graph, tl_build_cast(r.g, n->in[0].value, TL_BOOL), n->ndim, n->shape);
    tl_uop *zero = konst(&r, g, 0);
    if (n->in[1].fn) grads[1] = to_input(&r, sel(&r, c, g, zero), 1);
    if (n->in[2].fn) grads[2] = to_input(&r, sel(&r, c, zero, g), 2);
    break;
  }
  case TL_AG_CAST: grads[0] = to_input(&r, g, 0); break;
  case TL_AG_REDUCE: grads[0] = to_input(&r, reduce_grad(&r, g), 0); break;
  case TL_AG_SOFTMAX: grads[0] = to_input(&r, softmax_grad(&r, g), 0); break;
  case TL_AG_CAT: {
    int axis = (int)n->p[0];
    int64_t off = 0, begin[TL_MAX_DIMS] = {0}, end[TL_MAX_DIMS];
    memcpy(end, n->shape, sizeof end);
    for (int i = 0; i < n->nin; i++) {
      begin[axis] = off;
      end[axis] = off + n->in[i].shape[axis];
      off = end[axis];
      if (n->in[i].fn) grads[i] = to_input(&r, shrink_to(&r, g, begin, end), i);
    }
    break;
  }
  case TL_AG_MATMUL: matmul_grad(&r, g, &grads[0], &grads[1]); break;
  case TL_AG_GATHER: /* each picked row's gradient goes back to its row; the indices take none */
    if (n->in[0].fn) grads[0] = tl_build_scatter_add(&ctx->graph, g, n->in[1].value, n->in[0].shape[0]);
    break;
  default: grads[0] = to_input(&r, movement_grad(&r, g), 0); break;
  }
  for (int i = n->op == TL_AG_WHERE ? 1 : 0; i < n->nin; i++) /* a condition takes no gradient */
    if (n->in[i].fn && !grads[i]) {
      if (!ctx->err.status) tl_error_set(&ctx->err, TL_ERR_NOMEM, "backward: out of memory building gradients");
      return false;
    }
  return true;
}
