/* test_diff.c — the compiled backend against the reference interpreter on 1,000
 * random graphs (random shapes, dtypes, chains of movement, elementwise and reduce
 * ops; compiled, each graph is a replay of the kernels of the same graph over other
 * values realized just before), on 300 graphs of casts between every dtype of extreme
 * values (±inf, NaN, ±1e30, values either side of the i32 and i64 ranges), and on 200
 * row gathers (a computed table, indices in and out of range, a view of them) with the
 * table's gradient (a scatter-add), and on 400 graphs of special values (NaN, +-inf,
 * +-0, f32 and f64 subnormals, exp's ends, empty axes) compared to the subnormal: a
 * result that is 0 on one backend and 3.8e-44 on the other differs. Every graph is
 * seeded; a mismatch prints the seed, and `TL_DIFF_SEED=N build/tests/tl_tests
 * diff_random_graphs` (TL_DIFF_CAST_SEED, diff_random_casts; TL_DIFF_GATHER_SEED,
 * diff_random_gathers; TL_DIFF_SPECIAL_SEED, diff_special_values) replays one graph.
 * A fifth of each set also runs on opencl (or TL_TEST_DEVICE) against the interpreter
 * (diff_device_*). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "tl.h"

#define NGRAPHS 1000
#define NCAST_GRAPHS 300
#define NGATHER_GRAPHS 200
#define NSPECIAL_GRAPHS 400
enum { PLAIN, CASTS, GATHERS, SPECIAL }; /* the kinds of graph */
#define MAX_POOL 64

typedef struct {
  uint64_t s;
  tl_ctx *ctx;
  tl_tensor *pool[MAX_POOL];
  int n;
  bool used_f32; /* an f32 anywhere bounds the precision of the result */
  bool extreme;  /* the cast graphs: float leaves hold extreme values */
  bool decoy;    /* other leaf values, the same graph (the same draws from s) */
  bool no_error; /* the special graphs: a max over an empty axis did not fail as it must */
} gen;

static uint64_t next(gen *g) { /* splitmix64 */
  uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int pick(gen *g, int n) { return (int)(next(g) % (uint64_t)n); }

static tl_tensor *keep(gen *g, tl_tensor *t) {
  if (t && tl_get_dtype(t) == TL_F32) g->used_f32 = true;
  if (t && g->n < MAX_POOL) g->pool[g->n++] = t;
  else tl_release(t);
  return t;
}

/* float values where casts to integers saturate, round toward zero or give 0, as
 * f32 or f64 (those f32 cannot hold round to a neighbour, still a boundary case) */
static const double extremes[] = {
    NAN, INFINITY, -INFINITY, 1e30, -1e30, 1e19, -1e19, 2.5, -2.5, 0.75, -0.75, -0.0,
    2147483647.0, 2147483647.75, 2147483648.0, 2147483520.0, 3e9,           /* i32 max */
    -2147483648.0, -2147483648.75, -2147483649.0, -2147483904.0, -3e9,      /* i32 min */
    9223372036854775808.0, 9223372036854774784.0, 9223371487098961920.0,    /* i64 max */
    -9223372036854775808.0, -9223372036854777856.0, -9223373136366403584.0, /* i64 min */
};

/* i64 values whose casts wrap (to i32) or round (to f32, f64) */
static const int64_t wide_ints[] = {
    (1LL << 40) + 5,   -(1LL << 31) - 1, 1LL << 31, 2147483647, -2147483647 - 1,
    (1LL << 60) + (1LL << 36) + 1, (1LL << 53) + 1, 9223372036854775807LL, -9223372036854775807LL - 1,
    -((1LL << 60) + (1LL << 36) + 1), 0, -7};

static tl_tensor *leaf(gen *g, int ndim, const int64_t *shape) {
  static const tl_dtype dts[] = {TL_F32, TL_F32, TL_F64, TL_I32, TL_I64, TL_BOOL};
  tl_dtype dt = dts[pick(g, 6)];
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  double *vals = malloc(sizeof(double) * (size_t)(n ? n : 1));
  unsigned char raw[8 * 4096];
  for (int64_t i = 0; i < n; i++) {
    double v = (dt == TL_F32 || dt == TL_F64) ? (double)(int64_t)(next(g) % 4001) / 1000.0 - 2.0
                                          : (double)((int64_t)(next(g) % 11) - 5);
    vals[i] = dt == TL_BOOL ? (double)(next(g) & 1) : v;
    /* drawn only for the cast graphs: the other graphs keep their values */
    if (g->extreme && (dt == TL_F32 || dt == TL_F64) && pick(g, 3))
      vals[i] = extremes[pick(g, (int)(sizeof extremes / sizeof extremes[0]))];
    if (g->decoy)
      vals[i] = dt == TL_BOOL ? 1 - vals[i] : dt == TL_F32 || dt == TL_F64 ? 0.5 - 0.75 * vals[i]
                                                                           : (double)(((int64_t)vals[i] + 9) % 11 - 5);
  }
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case TL_F32: ((float *)raw)[i] = (float)vals[i]; break;
    case TL_F64: ((double *)raw)[i] = vals[i]; break;
    case TL_I32: ((int32_t *)raw)[i] = (int32_t)vals[i]; break;
    case TL_I64: ((int64_t *)raw)[i] = (int64_t)vals[i]; break;
    default: raw[i] = (unsigned char)vals[i]; break;
    }
  }
  free(vals);
  return keep(g, tl_from_data(g->ctx, dt, ndim, shape, raw));
}

static tl_tensor *random_leaf(gen *g) {
  int nd = 1 + pick(g, 4);
  int64_t s[4];
  for (int i = 0; i < nd; i++) s[i] = 1 + pick(g, 5);
  return leaf(g, nd, s);
}

/* a leaf that broadcasts against t: some axes 1, maybe fewer axes */
static tl_tensor *partner(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t), drop = nd ? pick(g, nd) : 0;
  int64_t s[TL_MAX_DIMS];
  for (int i = drop; i < nd; i++) s[i - drop] = pick(g, 3) ? tl_dim(t, i) : 1;
  return leaf(g, nd - drop, s);
}

static tl_tensor *as_float(gen *g, tl_tensor *t) {
  tl_dtype d = tl_get_dtype(t);
  return d == TL_F32 || d == TL_F64 ? t : keep(g, tl_cast(t, TL_F32));
}

static tl_tensor *movement(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t);
  if (nd == 0) return keep(g, tl_reshape(t, 2, (int64_t[]){1, 1}));
  int64_t s[TL_MAX_DIMS], b[TL_MAX_DIMS], e[TL_MAX_DIMS];
  switch (pick(g, 8)) {
  case 0: { /* reshape: flatten, or split/merge through a random factorization */
    int64_t n = tl_numel(t);
    if (pick(g, 2)) return keep(g, tl_reshape(t, 1, &n));
    int k = 0;
    int64_t rest = n;
    for (int64_t f = 2; f <= rest && k < 3; f++)
      if (rest % f == 0 && pick(g, 2)) { s[k++] = f; rest /= f; f = 1; }
    s[k++] = rest;
    return keep(g, tl_reshape(t, k, s));
  }
  case 1: {
    int p[TL_MAX_DIMS];
    for (int i = 0; i < nd; i++) p[i] = i;
    for (int i = nd - 1; i > 0; i--) {
      int j = pick(g, i + 1), x = p[i];
      p[i] = p[j];
      p[j] = x;
    }
    return keep(g, tl_permute(t, p));
  }
  case 2:
    for (int i = 0; i < nd; i++) {
      b[i] = pick(g, (int)tl_dim(t, i));
      e[i] = b[i] + 1 + pick(g, (int)(tl_dim(t, i) - b[i]));
    }
    return keep(g, tl_shrink(t, b, e));
  case 3:
    for (int i = 0; i < nd; i++) {
      b[i] = pick(g, 3);
      e[i] = pick(g, 3);
    }
    return keep(g, tl_pad(t, b, e, pick(g, 3) ? 0.0 : 1.5));
  case 4: {
    int ax[2] = {pick(g, nd), pick(g, nd)};
    return keep(g, tl_flip(t, 1 + pick(g, 2), ax));
  }
  case 5: { /* expand a size-1 axis, after adding one */
    tl_tensor *u = keep(g, tl_unsqueeze(t, pick(g, nd + 1)));
    if (!u) return NULL;
    for (int i = 0; i < tl_ndim(u); i++) s[i] = tl_dim(u, i) == 1 ? 1 + pick(g, 4) : tl_dim(u, i);
    return keep(g, tl_expand(u, tl_ndim(u), s));
  }
  case 6: {
    int ax = pick(g, nd);
    int64_t n = tl_dim(t, ax);
    return keep(g, tl_slice(t, ax, pick(g, (int)n), n, 1 + pick(g, 3)));
  }
  default: {
    tl_tensor *two[2] = {t, keep(g, tl_flip(t, 1, (int[]){0}))};
    return keep(g, pick(g, 2) ? tl_cat(2, two, pick(g, nd)) : tl_stack(2, two, pick(g, nd + 1)));
  }
  }
}

static tl_tensor *elementwise(gen *g, tl_tensor *t) {
  tl_tensor *f = NULL;
  switch (pick(g, 14)) {
  case 0: return keep(g, tl_neg(tl_get_dtype(t) == TL_BOOL ? as_float(g, t) : t));
  case 1: return keep(g, tl_exp(keep(g, tl_tanh(as_float(g, t)))));
  case 2: /* log(1 + |x|), or log1p(|x|) */
    f = keep(g, tl_abs(as_float(g, t)));
    return keep(g, pick(g, 2) ? tl_log(keep(g, tl_add_scalar(f, 1))) : tl_log1p(f));
  case 3: return keep(g, tl_sqrt(keep(g, tl_abs(as_float(g, t)))));
  case 4: return keep(g, tl_sigmoid(as_float(g, t)));
  case 5: return keep(g, pick(g, 2) ? tl_gelu(as_float(g, t)) : tl_relu(as_float(g, t)));
  case 6: return keep(g, pick(g, 2) ? tl_sin(as_float(g, t)) : tl_cos(as_float(g, t)));
  case 7: return keep(g, tl_add(t, partner(g, t)));
  case 8: return keep(g, tl_mul(t, partner(g, t)));
  case 9: return keep(g, tl_sub(t, partner(g, t)));
  case 10: /* division by something away from zero */
    f = keep(g, tl_add_scalar(keep(g, tl_abs(as_float(g, partner(g, t)))), 1));
    return keep(g, tl_div(as_float(g, t), f));
  case 11: return keep(g, pick(g, 2) ? tl_maximum(t, partner(g, t)) : tl_minimum(t, partner(g, t)));
  case 12: { /* comparisons only between leaves and t's exact values: no rounding flips */
    tl_tensor *p = partner(g, t);
    tl_tensor *c = keep(g, pick(g, 2) ? tl_lt(p, t) : tl_ge(p, t));
    return keep(g, tl_where(c, t, p));
  }
  default: return keep(g, tl_cast(t, pick(g, 2) ? TL_F64 : TL_F32));
  }
}

/* integer and bool tensors meeting floats, which compute in float (docs/c-api.md, torch's
 * rule; check_numpy.py checks every result's dtype against it): a fractional number
 * (tl_add_scalar, tl_mul_scalar), a float tensor on either side, comparisons with a
 * fractional 0-d f32 or a float tensor either way round, and a where() of the two */
static tl_tensor *promotion(gen *g, tl_tensor *t) {
  static const double fracs[] = {0.375, -1.25, 2.5, -0.5};
  double s = fracs[pick(g, 4)];
  tl_tensor *p = partner(g, t), *c;
  if (p && tl_get_dtype(p) != TL_F32 && tl_get_dtype(p) != TL_F64)
    p = keep(g, tl_mul_scalar(p, 0.25)); /* a float partner, fractional */
  if (!p) return NULL;
  switch (pick(g, 5)) {
  case 0: return keep(g, pick(g, 2) ? tl_add_scalar(t, s) : tl_mul_scalar(t, s));
  case 1: return keep(g, pick(g, 2) ? tl_mul(t, p) : tl_add(p, t));
  case 2: return keep(g, pick(g, 2) ? tl_sub(t, p) : tl_sub(p, t));
  case 3:
    c = keep(g, tl_scalar(g->ctx, TL_F32, s));
    c = c ? keep(g, pick(g, 2) ? tl_lt(t, c) : tl_ge(c, t)) : NULL;
    return c ? keep(g, tl_where(c, t, p)) : NULL;
  default:
    c = keep(g, pick(g, 2) ? tl_lt(p, t) : tl_ge(t, p));
    return c ? keep(g, tl_where(c, p, t)) : NULL;
  }
}

static tl_tensor *reduction(gen *g, tl_tensor *t) {
  if (tl_ndim(t) == 0) return t;
  int nd = tl_ndim(t), ax[2] = {pick(g, nd), pick(g, nd)}, na = 1 + pick(g, 2), kd = pick(g, 2);
  const int *axes = pick(g, 5) ? ax : NULL;
  switch (pick(g, 8)) {
  case 0: return keep(g, tl_sum(t, na, axes, kd));
  case 1: return keep(g, tl_max(t, na, axes, kd));
  case 2: return keep(g, tl_min(t, na, axes, kd));
  case 3: return keep(g, tl_mean(t, na, axes, kd));
  case 4: return keep(g, tl_softmax(as_float(g, t), ax[0]));
  case 5: return keep(g, tl_log_softmax(as_float(g, t), ax[0]));
  case 6: return keep(g, tl_argmax(t, ax[0], kd));
  default: { /* matmul against a fresh leaf */
    if (nd < 1) return t;
    int64_t k = tl_dim(t, nd - 1), s[2] = {k, 1 + pick(g, 4)};
    tl_tensor *m = leaf(g, 2, s);
    return keep(g, tl_matmul(tl_get_dtype(t) == TL_BOOL ? as_float(g, t) : t, tl_get_dtype(m) == TL_BOOL ? as_float(g, m) : m));
  }
  }
}

/* ---- the cast graphs ----------------------------------------------------------------
 * Every op here is exact on both backends (movement, negation, +, -, * of floats,
 * maximum, minimum, selects, max/min reductions), so a cast never sees values that
 * differ by rounding; integer arithmetic, which could overflow, is left out. */
static tl_dtype any_dtype(gen *g) {
  static const tl_dtype dts[] = {TL_I32, TL_I64, TL_BOOL, TL_F32, TL_F64};
  return dts[pick(g, 5)];
}

static bool is_float(tl_tensor *t) { return tl_get_dtype(t) == TL_F32 || tl_get_dtype(t) == TL_F64; }

/* an i64 leaf of wide values shaped to broadcast against t, cast to any dtype */
static tl_tensor *wide_partner(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t);
  int64_t s[TL_MAX_DIMS], n = 1, v[4096];
  for (int i = 0; i < nd; i++) n *= s[i] = pick(g, 3) ? tl_dim(t, i) : 1;
  for (int64_t i = 0; i < n; i++) v[i] = wide_ints[pick(g, (int)(sizeof wide_ints / sizeof wide_ints[0]))];
  tl_tensor *w = keep(g, tl_from_data(g->ctx, TL_I64, nd, s, v));
  return keep(g, tl_cast(w, any_dtype(g)));
}

static tl_tensor *cast_step(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t), ax[1] = {nd ? pick(g, nd) : 0}, kd = pick(g, 2);
  tl_tensor *p;
  switch (pick(g, 10)) {
  case 0:
  case 1:
  case 2: return keep(g, tl_cast(t, any_dtype(g)));
  case 3: return movement(g, t);
  case 4: return keep(g, is_float(t) ? tl_neg(t) : tl_cast(t, any_dtype(g)));
  case 5: /* a float partner: float + - * of extremes (inf - inf, 1e30 * 1e30) */
    if (!is_float(t)) return keep(g, tl_maximum(t, wide_partner(g, t)));
    p = partner(g, t);
    if (!p || !is_float(p)) return keep(g, tl_minimum(t, p));
    return keep(g, pick(g, 3) == 0 ? tl_add(t, p) : pick(g, 2) ? tl_sub(t, p) : tl_mul(t, p));
  case 6: return keep(g, pick(g, 2) ? tl_maximum(t, wide_partner(g, t)) : tl_minimum(wide_partner(g, t), t));
  case 7: {
    p = partner(g, t);
    tl_tensor *c = keep(g, pick(g, 2) ? tl_lt(p, t) : tl_ge(p, t));
    return keep(g, tl_where(c, t, p));
  }
  case 8: /* sums only where they cannot overflow: i32 and bool, summed as i64 */
    if (nd && (tl_get_dtype(t) == TL_I32 || tl_get_dtype(t) == TL_BOOL)) return keep(g, tl_sum(t, 1, ax, kd));
    /* fall through */
  default:
    if (!nd) return keep(g, tl_cast(t, any_dtype(g)));
    return keep(g, pick(g, 2) ? tl_max(t, pick(g, 4) ? 1 : 0, ax, kd) : tl_min(t, pick(g, 4) ? 1 : 0, ax, kd));
  }
}

static bool close_enough(tl_dtype d, double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  if (d == TL_F32) return fabs(a - b) <= 1e-4 + 2e-3 * fabs(b);
  if (d == TL_F64) return fabs(a - b) <= 1e-10 + 1e-9 * fabs(b);
  return a == b;
}

/* ---- the gather graphs ----------------------------------------------------------------
 * table: a random leaf through a few movement and elementwise steps, as a float
 * [rows, last axis], made a leaf requiring grad; indices: i32 or i64 in [-2, rows + 2)
 * (a bad one is clamped the same way on both backends), maybe through a view; the
 * result: the rows gathered, maybe through tanh, then the table's gradient of their
 * weighted sum, both in one vector. */
static tl_tensor *gather_graph(gen *g) {
  tl_tensor *t = random_leaf(g);
  for (int i = pick(g, 3); i > 0 && t; i--) t = pick(g, 2) ? movement(g, t) : elementwise(g, t);
  if (!t) return NULL;
  t = as_float(g, t);
  int64_t last = tl_ndim(t) ? tl_dim(t, -1) : 1, rows = last ? tl_numel(t) / last : 0;
  tl_tensor *table = keep(g, tl_reshape(t, 2, (int64_t[]){rows, last}));
  if (!table || tl_set_requires_grad(table, 1) != TL_OK) return NULL;
  int nd = pick(g, 3);
  int64_t s[2] = {1 + pick(g, 4), 1 + pick(g, 4)}, n = nd == 0 ? 1 : nd == 1 ? s[0] : s[0] * s[1], v[16];
  for (int64_t i = 0; i < n; i++) v[i] = (int64_t)pick(g, (int)rows + 4) - 2;
  tl_tensor *idx = keep(g, tl_cast(keep(g, tl_from_data(g->ctx, TL_I64, nd, s, v)), pick(g, 2) ? TL_I32 : TL_I64));
  if (nd && pick(g, 2)) idx = movement(g, idx);
  tl_tensor *y = keep(g, tl_gather_rows(table, idx));
  if (y && pick(g, 2)) y = keep(g, tl_tanh(y));
  if (!y) return NULL;
  int64_t shape[TL_MAX_DIMS], ny = tl_numel(y), nt = tl_numel(table);
  for (int d = 0; d < tl_ndim(y); d++) shape[d] = tl_dim(y, d);
  tl_tensor *c = keep(g, tl_sin(keep(g, tl_reshape(keep(g, tl_arange(g->ctx, TL_F64, 1, (double)ny + 1, 1)), tl_ndim(y), shape))));
  if (tl_backward(keep(g, tl_sum(keep(g, tl_mul(y, c)), 0, NULL, 0)), NULL) != TL_OK) return NULL;
  tl_tensor *parts[2] = {keep(g, tl_reshape(keep(g, tl_cast(y, TL_F64)), 1, &ny)),
                         keep(g, tl_reshape(keep(g, tl_cast(keep(g, tl_grad(table)), TL_F64)), 1, &nt))};
  return keep(g, tl_cat(2, parts, 0));
}

/* ---- the special-value graphs ----------------------------------------------------------
 * Float leaves of NaN, +-inf, +-0, subnormals, values whose exp is subnormal, 0 or inf,
 * and plain ones; an axis of length 0 in a quarter of them. The steps are ops whose
 * results both backends round alike (one correctly rounded op, exp within an ulp, sums
 * of non-negative values), so results are compared at the scale of a subnormal. A max,
 * min, argmax or argmin over an empty axis must fail, and the graph goes on without it. */
static const double specials[] = {
    NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -1e-40, 1.401298464324817e-45, -3e-39, 1.1e-38, 1.5, -1.5, 0.25,
    3, -3, -100, -88.5, -87.5, 88.5, -104, 1e30, -1e30, 5e-324, 1e-310, -2e-308, -740, -745.1, 710};
enum { NSPECIALS = sizeof specials / sizeof specials[0] };

static tl_tensor *special_leaf(gen *g, int ndim, const int64_t *shape) {
  tl_dtype dt = pick(g, 3) ? TL_F32 : TL_F64;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float f[64];
  double d[64];
  for (int64_t i = 0; i < n && i < 64; i++) {
    int k = pick(g, NSPECIALS);
    d[i] = specials[g->decoy ? (k + 7) % NSPECIALS : k];
    f[i] = (float)d[i];
  }
  return keep(g, tl_from_data(g->ctx, dt, ndim, shape, dt == TL_F32 ? (const void *)f : (const void *)d));
}

static tl_tensor *random_special_leaf(gen *g) {
  int nd = 1 + pick(g, 3), empty = pick(g, 4) ? -1 : pick(g, nd);
  int64_t s[3];
  for (int i = 0; i < nd; i++) s[i] = i == empty ? 0 : 1 + pick(g, 4);
  return special_leaf(g, nd, s);
}

/* a special leaf shaped to broadcast against t */
static tl_tensor *special_partner(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t);
  int64_t s[TL_MAX_DIMS];
  for (int i = 0; i < nd; i++) s[i] = pick(g, 3) ? tl_dim(t, i) : 1;
  return special_leaf(g, nd, s);
}

/* max, min, argmax or argmin over one axis or (max, min) all: an error if one is empty */
static tl_tensor *special_extreme(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t), ax = nd ? pick(g, nd) : 0, kd = pick(g, 2), kind = pick(g, 4), all = pick(g, 4) == 0;
  if (!nd) return t;
  bool empty = tl_dim(t, ax) == 0;
  for (int i = 0; all && kind < 2 && i < nd; i++) empty |= tl_dim(t, i) == 0;
  tl_tensor *r = kind == 0   ? tl_max(t, 1, all ? NULL : &ax, kd)
                 : kind == 1 ? tl_min(t, 1, all ? NULL : &ax, kd)
                 : kind == 2 ? tl_argmax(t, ax, kd)
                             : tl_argmin(t, ax, kd);
  if (!empty) return keep(g, r);
  if (r || !strstr(tl_last_error(g->ctx), "has length 0, and the")) g->no_error = true;
  return r ? keep(g, r) : t;
}

static tl_tensor *special_step(gen *g, tl_tensor *t) {
  int nd = tl_ndim(t), ax = nd ? pick(g, nd) : 0;
  switch (pick(g, 12)) {
  case 0: return keep(g, tl_exp(as_float(g, t)));
  case 1: return keep(g, tl_exp(keep(g, tl_add_scalar(as_float(g, t), -100)))); /* into the subnormals */
  case 2: return keep(g, tl_sigmoid(as_float(g, t)));
  case 3: return keep(g, pick(g, 2) ? tl_gelu(as_float(g, t)) : tl_gelu_tanh(as_float(g, t)));
  case 4: return keep(g, pick(g, 2) ? tl_tanh(as_float(g, t)) : tl_neg(as_float(g, t)));
  case 5: return keep(g, pick(g, 2) ? tl_relu(t) : tl_sqrt(keep(g, tl_abs(as_float(g, t)))));
  case 6: return keep(g, pick(g, 2) ? tl_mul(as_float(g, t), special_partner(g, t)) : tl_add(as_float(g, t), special_partner(g, t)));
  case 7: return keep(g, pick(g, 2) ? tl_maximum(t, special_partner(g, t)) : tl_minimum(special_partner(g, t), t));
  case 8:
  case 9: return special_extreme(g, t);
  case 10: /* sums of non-negative values: no cancellation, so any order agrees */
    if (!nd) return t;
    return keep(g, pick(g, 2) ? tl_sum(keep(g, tl_abs(as_float(g, t))), 1, &ax, pick(g, 2))
                              : tl_mean(keep(g, tl_exp(as_float(g, t))), 1, &ax, pick(g, 2)));
  default:
    if (!nd) return t;
    return keep(g, pick(g, 2) ? tl_softmax(as_float(g, t), ax) : tl_log_softmax(as_float(g, t), ax));
  }
}

/* equal NaN and infinities; values below the smallest normal within two subnormal
 * steps (a flushed 3.8e-44 differs from 0); others as close_enough */
static bool close_special(tl_dtype d, double a, double b) {
  double tiny = d == TL_F32 ? 1.1754943508222875e-38 : 2.2250738585072014e-308;
  double step = d == TL_F32 ? 1.401298464324817e-45 : 4.9406564584124654e-324;
  if (!isnan(a) && !isnan(b) && !isinf(a) && !isinf(b) && (fabs(a) < tiny || fabs(b) < tiny))
    return fabs(a - b) <= 2 * step;
  return close_enough(d, a, b);
}

/* The graph of `seed` in g (its last tensor), NULL if building failed */
static tl_tensor *build_graph(gen *g, int mode) {
  bool extreme = mode == CASTS;
  tl_tensor *t = mode == GATHERS ? gather_graph(g) : mode == SPECIAL ? random_special_leaf(g) : random_leaf(g);
  int steps = mode == GATHERS ? 0 : mode == SPECIAL ? 1 + pick(g, 3) : 2 + pick(g, 6);
  for (int i = 0; i < steps && t; i++) {
    if (mode == SPECIAL) {
      t = special_step(g, t);
      continue;
    }
    if (extreme) {
      t = cast_step(g, t);
      if (t && tl_numel(t) > 4096) t = keep(g, tl_max(t, 1, (int[]){0}, 0));
      continue;
    }
    int k = pick(g, 11);
    t = k < 4 ? movement(g, t) : k < 8 ? elementwise(g, t) : k < 10 ? reduction(g, t) : promotion(g, t);
    if (t && tl_numel(t) > 4096) t = keep(g, tl_sum(t, 1, (int[]){0}, 0));
  }
  return t;
}

/* The graph of `seed` over other leaf values, realized and dropped: the real graph that
 * follows has its structure, so cpu replays its kernels on new buffers (replay.h). */
static int realize_decoy(tl_ctx *ctx, uint64_t seed, int mode, char *why, size_t whylen) {
  gen g = {seed * 0x2545F4914F6CDD1Dull + 1, ctx, {0}, 0, false, mode == CASTS, true, false};
  tl_manual_seed(ctx, seed);
  tl_tensor *t = build_graph(&g, mode), *w = t ? keep(&g, tl_cast(t, TL_F64)) : NULL;
  int bad = !w || !tl_data(w);
  if (bad) snprintf(why, whylen, "realizing the decoy failed: %s", tl_last_error(ctx));
  for (int i = 0; i < g.n; i++) tl_release(g.pool[i]);
  return bad;
}

static uint64_t replays; /* of the real graphs, over a shard */
static const char *diff_backend = "cpu"; /* the kernel backend compared to interp */
static const char *cpu_compiler; /* not NULL: tl_set_compiler on the cpu backend */

/* Builds the graph of `seed` and realizes it (as f64) on `backend`; the generator is
 * deterministic, so both backends see the same graph. */
static int eval_graph(uint64_t seed, int mode, const char *backend, double **out, int64_t *n, tl_dtype *dt,
                      char *why, size_t whylen) {
  /* *dt: the dtype whose tolerance applies (f32 if any f32 was involved) */
  bool extreme = mode == CASTS;
  gen g = {seed * 0x2545F4914F6CDD1Dull + 1, tl_init(), {0}, 0, false, extreme, false, false};
  if (!g.ctx) return 1;
  tl_set_backend(g.ctx, backend);
  if (cpu_compiler) tl_set_compiler(g.ctx, cpu_compiler);
  if (strcmp(backend, "interp") && realize_decoy(g.ctx, seed, mode, why, whylen)) {
    tl_shutdown(g.ctx);
    return 1;
  }
  uint64_t replays_before = tl_get_stats(g.ctx).realize_replays;
  tl_manual_seed(g.ctx, seed);
  tl_tensor *t = build_graph(&g, mode);
  int bad = 0;
  tl_tensor *w = t ? keep(&g, tl_cast(t, TL_F64)) : NULL;
  if (!w) {
    snprintf(why, whylen, "building the graph failed: %s", tl_last_error(g.ctx));
    bad = 1;
  } else if (g.no_error) {
    snprintf(why, whylen, "a max, min, argmax or argmin over an empty axis did not fail with its message");
    bad = 1;
  } else {
    *n = tl_numel(w);
    *dt = g.used_f32 && tl_get_dtype(t) == TL_F64 ? TL_F32 : tl_get_dtype(t);
    *out = malloc(sizeof(double) * (size_t)(*n ? *n : 1));
    if (tl_to_host(w, *out, sizeof(double) * (size_t)*n)) {
      snprintf(why, whylen, "realize on %s failed: %s", backend, tl_last_error(g.ctx));
      bad = 1;
    }
    if (getenv("TL_DIFF_TRACE") && 1) {
      char *dot = tl_graph_dot(w);
      fprintf(stderr, "%s", dot ? dot : "");
      tl_free(dot);
      for (int i = 0; i < g.n; i++)
        if (tl_numel(g.pool[i]) <= 64) {
          char *txt = tl_format(g.pool[i]);
          fprintf(stderr, "pool[%d] %s:\n%s\n", i, tl_dtype_name(tl_get_dtype(g.pool[i])), txt ? txt : "?");
          tl_free(txt);
        }
    }

  }
  tl_stats st = tl_get_stats(g.ctx);
  replays += st.realize_replays > replays_before;
  if (!bad && st.plan_arena_bytes > st.plan_naive_bytes) { /* the validator ran on every realize */
    snprintf(why, whylen, "plan on %s: arena %llu bytes above the naive %llu", backend,
             (unsigned long long)st.plan_arena_bytes, (unsigned long long)st.plan_naive_bytes);
    bad = 1;
  }
  for (int i = 0; i < g.n; i++) tl_release(g.pool[i]);
  if (!bad) bad = tl_test_leak_check(g.ctx, why, whylen);
  tl_shutdown(g.ctx);
  return bad;
}

/* one graph; returns 0 if both backends agree */
static int run_graph(uint64_t seed, int mode, char *why, size_t whylen) {
  double *want = NULL, *got = NULL;
  int64_t n = 0, n2 = 0;
  tl_dtype dt = TL_F32;
  int bad = eval_graph(seed, mode, "interp", &want, &n, &dt, why, whylen) ||
            eval_graph(seed, mode, diff_backend, &got, &n2, &dt, why, whylen);
  if (!bad && n != n2) {
    snprintf(why, whylen, "sizes differ: %lld and %lld", (long long)n, (long long)n2);
    bad = 1;
  }
  for (int64_t i = 0; i < n && !bad; i++)
    if (!(mode == SPECIAL ? close_special(dt, got[i], want[i]) : close_enough(dt, got[i], want[i]))) {
      snprintf(why, whylen, "element %lld of %lld (dtype %s): %s %.9g, interp %.9g", (long long)i,
               (long long)n, tl_dtype_name(dt), diff_backend, got[i], want[i]);
      bad = 1;
    }
  free(want);
  free(got);
  return bad;
}

static int run_range(uint64_t from, uint64_t to, int mode) {
  int failures = 0;
  char why[512];
  for (uint64_t s = from; s < to; s++) {
    if (run_graph(s, mode, why, sizeof why)) {
      printf("  differential mismatch%s, seed %llu: %s\n",
             mode == CASTS ? " (casts)" : mode == GATHERS ? " (gathers)" : mode == SPECIAL ? " (special values)" : "",
             (unsigned long long)s, why);
      fflush(stdout);
      failures++;
    }
  }
  return failures;
}

/* graphs [0, n) in SHARDS tests, which the runner spreads over the cores (compiling
 * kernels is the slow part); TL_DIFF_SEED (or TL_DIFF_CAST_SEED) runs one seed */
enum { SHARDS = 8 };
static void run_shard(int shard, int n, int mode) {
  const char *one = getenv(mode == CASTS     ? "TL_DIFF_CAST_SEED"
                           : mode == GATHERS ? "TL_DIFF_GATHER_SEED"
                           : mode == SPECIAL ? "TL_DIFF_SPECIAL_SEED"
                                             : "TL_DIFF_SEED");
  if (one) {
    if (shard == 0) CHECK_INT(run_range(strtoull(one, NULL, 10), strtoull(one, NULL, 10) + 1, mode), 0);
    return;
  }
  replays = 0;
  CHECK_INT(run_range((uint64_t)shard * n / SHARDS, (uint64_t)(shard + 1) * n / SHARDS, mode), 0);
  /* most real graphs replayed the decoy's kernels (not those whose rewrite is a buffer) */
  CHECK(replays >= (uint64_t)n / SHARDS / 2);
}

#define DIFF_SHARD(k)                                                \
  TEST(diff_random_graphs_##k) { run_shard(k, NGRAPHS, PLAIN); }     \
  /* casts saturate (NaN gives 0) on both backends, float to int */  \
  TEST(diff_random_casts_##k) { run_shard(k, NCAST_GRAPHS, CASTS); } \
  TEST(diff_random_gathers_##k) { run_shard(k, NGATHER_GRAPHS, GATHERS); } \
  /* NaN, inf, subnormals, empty axes: equal to the subnormal */     \
  TEST(diff_special_values_##k) { run_shard(k, NSPECIAL_GRAPHS, SPECIAL); }
DIFF_SHARD(0)
DIFF_SHARD(1)
DIFF_SHARD(2)
DIFF_SHARD(3)
DIFF_SHARD(4)
DIFF_SHARD(5)
DIFF_SHARD(6)
DIFF_SHARD(7)

/* The same graphs on a device backend: opencl (PoCL in CI: every line of the device
 * path runs), or the one TL_TEST_DEVICE names (cuda on a GPU): kernels from the GPU
 * renderer, device buffers, replay. The seeds are the cpu shards'. TL_DIFF_FRACTION=1
 * runs every graph (a GPU builds kernels fast). */
static void run_device_shard(int shard, int n, int mode) {
  const char *device = getenv("TL_TEST_DEVICE") ? getenv("TL_TEST_DEVICE") : "opencl";
  if (tl_backend_usable(device) != TL_OK) {
    printf("  %s is not available here: %s\n", device, tl_last_error(NULL));
    tl_clear_error(NULL);
    return;
  }
  const char *f = getenv("TL_DIFF_FRACTION");
  int fraction = f && atoi(f) > 0 ? atoi(f) : 5;
  diff_backend = device;
  run_shard(shard, n / fraction, mode);
  diff_backend = "cpu";
}
/* a fifth of each set: PoCL builds a kernel in about 0.7 s (LLVM), the cpu's cc in
 * 0.04 (batched), so the whole suite would be most of CI's time */
#define DIFF_DEVICE_SHARD(k)                                                  \
  TEST(diff_device_random_graphs_##k) { run_device_shard(k, NGRAPHS, PLAIN); } \
  TEST(diff_device_random_casts_##k) { run_device_shard(k, NCAST_GRAPHS, CASTS); } \
  TEST(diff_device_random_gathers_##k) { run_device_shard(k, NGATHER_GRAPHS, GATHERS); } \
  TEST(diff_device_special_values_##k) { run_device_shard(k, NSPECIAL_GRAPHS, SPECIAL); }
DIFF_DEVICE_SHARD(0)
DIFF_DEVICE_SHARD(1)
DIFF_DEVICE_SHARD(2)
DIFF_DEVICE_SHARD(3)
DIFF_DEVICE_SHARD(4)
DIFF_DEVICE_SHARD(5)
DIFF_DEVICE_SHARD(6)
DIFF_DEVICE_SHARD(7)

/* Tiered compilation runs a kernel's libtcc build first, then cc's (runtime/tiered.c).
 * The two agree to the differential tolerance, not bit for bit: cc contracts a * b + c
 * into FMAs and vectorizes reductions (omp simd), and tier 1's GEMM is the library's
 * own build (docs/decisions.md). The same graphs realized by each alone: libtcc
 * (the "tcc" compiler: the very states tier 1 makes) and cc at once (TL_TIERED=0). */
static int tiers_agree(uint64_t seed, int mode, char *why, size_t whylen) {
  double *one = NULL, *two = NULL;
  int64_t n = 0, n2 = 0;
  tl_dtype dt = TL_F32;
  cpu_compiler = "tcc";
  int bad = eval_graph(seed, mode, "cpu", &one, &n, &dt, why, whylen);
  cpu_compiler = NULL;
  bad = bad || eval_graph(seed, mode, "cpu", &two, &n2, &dt, why, whylen);
  if (!bad && n != n2) snprintf(why, whylen, "sizes differ: %lld and %lld", (long long)n, (long long)n2), bad = 1;
  for (int64_t i = 0; i < n && !bad; i++)
    if (!close_enough(dt, one[i], two[i])) {
      snprintf(why, whylen, "element %lld of %lld (dtype %s): tier 1 %.9g, tier 2 %.9g", (long long)i, (long long)n,
               tl_dtype_name(dt), one[i], two[i]);
      bad = 1;
    }
  free(one), free(two);
  return bad;
}

TEST(diff_tier1_matches_tier2) {
  tl_ctx *probe = tl_init();
  int has_tcc = probe && tl_set_compiler(probe, "tcc") == TL_OK && tl_realize(tl_ones(probe, TL_F32, 1, (int64_t[]){2})) == TL_OK;
  tl_shutdown(probe);
  if (!has_tcc) {
    printf("  no libtcc in this program: nothing to compare\n");
    return;
  }
  const char *env = getenv("TL_TIERED");
  char *saved = env ? strdup(env) : NULL, why[512];
  setenv("TL_TIERED", "0", 1);
  static const struct { int mode, n; } sets[] = {{PLAIN, 120}, {CASTS, 60}, {GATHERS, 40}};
  for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++)
    for (int s = 0; s < sets[k].n; s++)
      if (tiers_agree((uint64_t)s, sets[k].mode, why, sizeof why)) {
        tl_test_fail(__FILE__, __LINE__, "tiers differ, mode %d seed %d: %s", sets[k].mode, s, why);
        break;
      }
  if (saved) setenv("TL_TIERED", saved, 1);
  else unsetenv("TL_TIERED");
  free(saved);
}
