/* grad_rules.c — the gradient of every recorded operation, as graph nodes: an IR op's
 * from the derivative in its row of the op table (graph/optab.def), a composite's from
 * its rule here.
 *
 * Rules work in the operation's compute dtype and output shape; unbroadcast() then
 * sums a gradient over the axes an input was broadcast along and casts it back to
 * the input's dtype. Every node built here is a temporary of the tensor graph. */
#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "graph/build.h"

typedef struct {
  tl_graph *g;
  tl_error *err;
  const tl_ag_node *n;
  tl_uop *grad;          /* the output's gradient, in the output's dtype */
  tl_uop *operand[3];    /* the inputs as the derivative reads them, built when first read */
  tl_uop *out, *cond;
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

/* ---- elementwise: the derivatives of the op table's rows ---------------------------- */
static tl_uop *operand(rule *r, int i) {
  if (!r->operand[i]) r->operand[i] = in_value(r, i);
  return r->operand[i];
}
static tl_uop *output(rule *r) {
  if (!r->out) r->out = full(r, r->n->out);
  return r->out;
}
static tl_uop *condition(rule *r) { /* src0 as a bool */
  if (!r->cond)
    r->cond = tl_build_broadcast_to(r->g, tl_build_cast(r->g, r->n->in[0].value, TL_BOOL), r->n->ndim, r->n->shape);
  return r->cond;
}

#define G (r->grad)
#define A operand(r, 0)
#define B operand(r, 1)
#define C condition(r)
#define OUT output(r)
#define K(v) konst(r, r->grad, v)
#define NONE NULL
#define NEG(x) un(r, TL_OP_NEG, x)
#define EXP(x) un(r, TL_OP_EXP, x)
#define LOG(x) un(r, TL_OP_LOG, x)
#define SIN(x) un(r, TL_OP_SIN, x)
#define COS(x) un(r, TL_OP_COS, x)
#define TANH(x) un(r, TL_OP_TANH, x)
#define ERF(x) un(r, TL_OP_ERF, x)
#define ADD(x, y) bin(r, TL_OP_ADD, x, y)
#define SUB(x, y) bin(r, TL_OP_SUB, x, y)
#define MUL(x, y) mul(r, x, y)
#define DIV(x, y) bin(r, TL_OP_DIV, x, y)
#define POW(x, y) bin(r, TL_OP_POW, x, y)
#define CMPGT(x, y) bin(r, TL_OP_CMPGT, x, y)
#define CMPLT(x, y) bin(r, TL_OP_CMPLT, x, y)
#define WHERE(c, x, y) sel(r, c, x, y)
/* d_NAME(r, i): the gradient to operand i (NULL: none flows there) */
#define OP(name, kind, flags, fsem, isem, c32, c64, cint, d0, d1, d2) \
  static tl_uop *d_##name(rule *r, int i) {                             \
    (void)r;                                                            \
    return i == 0 ? (d0) : i == 1 ? (d1) : (d2);                        \
  }
#include "graph/optab.def"
#undef OP
static tl_uop *(*const derivative[TL_NOPS])(rule *, int) = {
#define OP(name, ...) [TL_OP_##name] = d_##name,
#include "graph/optab.def"
#undef OP
};
#include "graph/optab_undef.h"

static bool elementwise_grads(rule *r, tl_uop **grads) {
  const tl_ag_node *n = r->n;
  unsigned flows = tl_optab[n->op].grads;
  if (!flows) {
    tl_error_set(r->err, TL_ERR_INTERNAL, "backward: no gradient rule for %s", tl_op_name(n->op));
    return false;
  }
  for (int i = 0; i < n->nin && i < 3; i++)
    if (n->in[i].fn && (flows >> i & 1)) grads[i] = to_input(r, derivative[n->op](r, i), i);
  return true;
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
    tl_uop *full_a = tl_build_matmul(r->g, g2, swap_last(r, b2));
    *ga = reshape(r, unbroadcast(r, full_a, nda, sa, ia->dtype), ia->ndim, ia->shape);
  }
  if (ib->fn) {
    tl_uop *full_b = tl_build_matmul(r->g, swap_last(r, a2), g2);
    *gb = reshape(r, unbroadcast(r, full_b, ndb, sb, ib->dtype), ib->ndim, ib->shape);
  }
}

/* ---- dispatch --------------------------------------------------------------------- */
unsigned tl_ag_reads(int op, const int64_t *p) {
  if (op >= 0 && op < TL_NOPS) return tl_optab[op].reads;
  switch (op) {
  case TL_AG_REDUCE: return p[0] == TL_AG_SUM || p[0] == TL_AG_MEAN ? 0 : TL_READS_IN0 | TL_READS_OUT;
  case TL_AG_SOFTMAX: return TL_READS_OUT;
  case TL_AG_MATMUL: return TL_READS_IN0 | TL_READS_IN1;
  case TL_AG_GATHER: return TL_READS_IN1;
  case TL_AG_SCATTER_ADD: return TL_READS_IN1;
  case TL_AG_CONV2D: return TL_READS_IN0 | TL_READS_IN1;
  default: return 0; /* movement and cat read nothing */
  }
}

static void cat_grads(rule *r, tl_uop *g, tl_uop **grads) {
  const tl_ag_node *n = r->n;
  int axis = (int)n->p[0];
  int64_t off = 0, begin[TL_MAX_DIMS] = {0}, end[TL_MAX_DIMS];
  memcpy(end, n->shape, sizeof end);
  for (int i = 0; i < n->nin; i++) {
    begin[axis] = off;
    end[axis] = off + n->in[i].shape[axis];
    off = end[axis];
    if (n->in[i].fn) grads[i] = to_input(r, shrink_to(r, g, begin, end), i);
  }
}

/* a convolution's gradients are the two adjoint convolutions (uop.h: CONV2D modes 1, 2) */
static void conv_grads(rule *r, tl_uop *g, tl_uop **grads) {
  const tl_ag_node *n = r->n;
  tl_conv_params p = {n->p[0], n->p[1], n->p[2], n->p[3]};
  tl_uop *x = n->in[0].value, *w = n->in[1].value;
  if (n->in[0].fn) grads[0] = tl_build_conv2d(r->g, 1, g, w, p, n->in[0].shape);
  if (n->in[1].fn) grads[1] = tl_build_conv2d(r->g, 2, g, x, p, n->in[1].shape);
}

bool tl_ag_input_grads(tl_graph *gr, tl_error *err, const tl_ag_node *n, tl_uop *grad, tl_uop **grads) {
  rule r = {gr, err, n, tl_build_cast(gr, grad, n->dtype), {NULL, NULL, NULL}, NULL, NULL};
  tl_uop *g = r.grad;
  bool needs_all = true; /* every input with a record gets a gradient */
  switch (n->op) {
  case TL_AG_REDUCE: grads[0] = to_input(&r, reduce_grad(&r, g), 0); break;
  case TL_AG_SOFTMAX: grads[0] = to_input(&r, softmax_grad(&r, g), 0); break;
  case TL_AG_CAT: cat_grads(&r, g, grads); break;
  case TL_AG_MATMUL: matmul_grad(&r, g, &grads[0], &grads[1]); break;
  case TL_AG_TO: grads[0] = g; break; /* moved to the input's backend by the API, before */
  case TL_AG_CONV2D: conv_grads(&r, g, grads); break;
  case TL_AG_GATHER: /* each picked row's gradient goes back to its row; the indices take none */
    if (n->in[0].fn) grads[0] = tl_build_scatter_add(gr, g, n->in[1].value, n->in[0].shape[0]);
    break;
  case TL_AG_SCATTER_ADD: /* each added row takes the gradient of the row it went into */
    if (n->in[0].fn) grads[0] = tl_build_gather(gr, g, n->in[1].value);
    break;
  default:
    if (n->op < TL_NOPS) {
      if (!elementwise_grads(&r, grads)) return false;
      needs_all = false;
    } else {
      grads[0] = to_input(&r, movement_grad(&r, g), 0);
    }
  }
  for (int i = 0; i < n->nin; i++)
    if (n->in[i].fn && !grads[i] && (needs_all || (i < 3 && (tl_optab[n->op].grads >> i & 1)))) {
      if (!err->status) tl_error_set(err, TL_ERR_NOMEM, "backward: out of memory building gradients");
      return false;
    }
  return true;
}
