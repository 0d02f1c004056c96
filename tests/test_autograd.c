/* test_autograd.c — every differentiable operation's gradient against central finite
 * differences in f64 (the engine's operations, the layers and losses of tl.h, and the
 * tensor methods of the language's run time: tril, masked_fill, slice...); the
 * semantics of requires-grad, detach, accumulation, assign and ties; the messages for
 * misuse; and 1,000 random composite graphs (the interpreter), the first 30 of them
 * also compiled.
 *
 * The function checked is f(x) = sum(out(x) * w) with a fixed pseudo-random w of out's
 * shape, so every element of a non-scalar output counts. A failing random graph prints
 * its seed; `TL_GRAD_SEED=N build/tests/tl_tests grad_random_graphs` replays one on
 * both backends. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "lang/rt/rt.h"
#include "lang/rt/rt_ops.h"
#include "tl.h"

#define MAX_LEAVES 3
#define MAX_ELEMS 32 /* per leaf */
#define FD_H 1e-6
#define FD_TOL 1e-5 /* relative and absolute */

typedef tl_tensor *(*build_fn)(tl_tensor *const *x, const void *arg);

/* one gradient check: the leaves (shapes and f64 values) and the function of them */
typedef struct {
  const char *name;
  int n;
  int ndim[MAX_LEAVES];
  int64_t shape[MAX_LEAVES][TL_MAX_DIMS];
  double vals[MAX_LEAVES][MAX_ELEMS];
  build_fn f;
  const void *arg;
  double h, tol;
  bool may_skip; /* a random graph: see gradcheck */
} grad_case;

/* ---- helpers --------------------------------------------------------------------- */
static uint64_t mix(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(mix(s) >> 11) * 0x1p-53;
}
static int pick(uint64_t *s, int n) { return (int)(mix(s) % (uint64_t)n); }

static uint64_t hash_name(const char *s) { /* FNV-1a: each case gets its own fixed values */
  uint64_t h = 0xcbf29ce484222325ull;
  while (*s) h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
  return h;
}

static int64_t numel_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

/* "3,1|1,4" -> two leaves [3,1] and [1,4]; "()" is a 0-d leaf. False (and a failure)
 * for a leaf of more than MAX_ELEMS elements. */
static bool parse_shapes(grad_case *c, const char *spec) {
  c->n = 0;
  for (const char *p = spec; *p && c->n < MAX_LEAVES;) {
    int i = c->n++;
    c->ndim[i] = 0;
    if (*p == '(') p += 2;
    while (*p && *p != '|') {
      char *end;
      c->shape[i][c->ndim[i]++] = strtoll(p, &end, 10);
      p = *end == ',' ? end + 1 : end;
    }
    if (*p == '|') p++;
    if (numel_of(c->ndim[i], c->shape[i]) > MAX_ELEMS) {
      tl_test_fail(__FILE__, __LINE__, "%s: leaf %d has more than %d elements", c->name, i, MAX_ELEMS);
      return false;
    }
  }
  return true;
}

/* values by domain letter: a any in [-2, 2], z away from zero (kinks of relu, abs,
 * poles of reciprocal), p positive (log, sqrt, the base of pow) */
static void fill_values(grad_case *c, const char *domains, uint64_t seed) {
  for (int i = 0; i < c->n; i++) {
    char d = domains[i] ? domains[i] : 'a';
    for (int64_t j = 0; j < numel_of(c->ndim[i], c->shape[i]); j++) {
      double v = d == 'p' ? uniform(&seed, 0.5, 2.0) : d == 'z' ? uniform(&seed, 0.25, 2.0) : uniform(&seed, -2, 2);
      c->vals[i][j] = d == 'z' && (mix(&seed) & 1) ? -v : v;
    }
  }
}

static tl_tensor *leaf(tl_ctx *ctx, const grad_case *c, int i, bool requires) {
  tl_tensor *t = tl_from_data(ctx, TL_F64, c->ndim[i], c->shape[i], c->vals[i]);
  if (t && requires && tl_set_requires_grad(t, 1) != TL_OK) return NULL;
  return t;
}

/* the loss weights: fixed pseudo-random values in [-1, 1] of t's shape, in t's dtype */
static tl_tensor *weights_like(tl_tensor *t) {
  if (!t) return NULL;
  int64_t n = tl_numel(t), shape[TL_MAX_DIMS] = {0};
  double *w = malloc(sizeof(double) * (size_t)(n ? n : 1));
  uint64_t s = 12345;
  for (int64_t i = 0; i < n; i++) w[i] = uniform(&s, -1, 1);
  for (int i = 0; i < tl_ndim(t); i++) shape[i] = tl_dim(t, i);
  tl_tensor *r = tl_from_data(tl_context(t), TL_F64, tl_ndim(t), shape, w);
  free(w);
  return tl_get_dtype(t) == TL_F64 ? r : tl_cast(r, tl_get_dtype(t));
}

static tl_tensor *weighted_sum(tl_tensor *out) { return tl_sum(tl_mul(out, weights_like(out)), 0, NULL, 0); }

/* f at the case's current values, with nothing recorded */
static tl_status loss_value(tl_ctx *ctx, const grad_case *c, double *out) {
  tl_scope *s = tl_scope_begin(ctx, "loss_value");
  tl_tensor *x[MAX_LEAVES];
  for (int i = 0; i < c->n; i++) x[i] = leaf(ctx, c, i, false);
  tl_status st = tl_item(weighted_sum(c->f(x, c->arg)), out);
  tl_scope_end(s);
  return st;
}

static tl_status numeric_grads(tl_ctx *ctx, grad_case *c, double h, double g[][MAX_ELEMS]) {
  tl_status st = TL_OK;
  tl_set_grad_enabled(ctx, 0);
  for (int i = 0; i < c->n && !st; i++)
    for (int64_t j = 0; j < numel_of(c->ndim[i], c->shape[i]) && !st; j++) {
      double v = c->vals[i][j], xp = v + h, xm = v - h, fp = 0, fm = 0;
      c->vals[i][j] = xp;
      st = loss_value(ctx, c, &fp);
      c->vals[i][j] = xm;
      if (!st) st = loss_value(ctx, c, &fm);
      c->vals[i][j] = v;
      g[i][j] = (fp - fm) / (xp - xm); /* xp - xm: the step actually taken */
    }
  tl_set_grad_enabled(ctx, 1);
  return st;
}

/* tl_grad of every leaf after one backward: of f (seed NULL), or of out itself with w
 * as the seed, which must give the same gradient */
static tl_status analytic_grads(tl_ctx *ctx, const grad_case *c, bool w_as_seed, double g[][MAX_ELEMS]) {
  tl_scope *s = tl_scope_begin(ctx, "analytic");
  tl_tensor *x[MAX_LEAVES];
  for (int i = 0; i < c->n; i++) x[i] = leaf(ctx, c, i, true);
  tl_tensor *out = c->f(x, c->arg);
  tl_status st = w_as_seed ? tl_backward(out, weights_like(out)) : tl_backward(weighted_sum(out), NULL);
  for (int i = 0; i < c->n && !st; i++) {
    tl_tensor *gi = tl_grad(x[i]);
    int64_t n = numel_of(c->ndim[i], c->shape[i]);
    if (gi && (tl_get_dtype(gi) != TL_F64 || tl_numel(gi) != n)) {
      tl_test_fail(__FILE__, __LINE__, "%s: grad of leaf %d is %s of %lld elements, not f64 of %lld", c->name, i,
                   tl_dtype_name(tl_get_dtype(gi)), (long long)tl_numel(gi), (long long)n);
      st = TL_ERR_INTERNAL;
    } else {
      st = tl_to_host(gi, g[i], sizeof(double) * (size_t)n);
    }
  }
  tl_scope_end(s);
  return st;
}

static int compare(const grad_case *c, int leaf_i, const double *got, const double *want, double tol,
                   const char *against) {
  int bad = 0;
  for (int64_t j = 0; j < numel_of(c->ndim[leaf_i], c->shape[leaf_i]); j++)
    if (!(fabs(got[j] - want[j]) <= tol * (1 + fabs(want[j]))) && bad++ < 3)
      tl_test_fail(__FILE__, __LINE__, "%s: d/d leaf %d [%lld] = %.12g, %s %.12g (x = %.12g)", c->name, leaf_i,
                   (long long)j, got[j], against, want[j], c->vals[leaf_i][j]);
  return bad;
}

static bool all_close(const grad_case *c, double a[][MAX_ELEMS], double b[][MAX_ELEMS], double tol) {
  for (int i = 0; i < c->n; i++)
    for (int64_t j = 0; j < numel_of(c->ndim[i], c->shape[i]); j++)
      if (!(fabs(a[i][j] - b[i][j]) <= tol * (1 + fabs(b[i][j])))) return false;
  return true;
}

/* The analytic gradient (both ways) against central differences; returns the failures.
 * Where they disagree, differences with step 2h tell whether the function is smooth at
 * this scale: if the two steps disagree too, the point cannot be judged. That returns -1
 * for a case allowed to be skipped (a random graph whose values grew steep), else fails. */
static int gradcheck(tl_ctx *ctx, grad_case *c) {
  static double got[MAX_LEAVES][MAX_ELEMS], seeded[MAX_LEAVES][MAX_ELEMS], want[MAX_LEAVES][MAX_ELEMS],
      want2[MAX_LEAVES][MAX_ELEMS];
  bool close = false;
  if (analytic_grads(ctx, c, false, got) || analytic_grads(ctx, c, true, seeded) ||
      numeric_grads(ctx, c, c->h, want) ||
      (!(close = all_close(c, got, want, c->tol)) && numeric_grads(ctx, c, 2 * c->h, want2))) {
    tl_test_fail(__FILE__, __LINE__, "%s: %s", c->name, tl_last_error(ctx));
    tl_clear_error(ctx);
    return 1;
  }
  if (!close && !all_close(c, want2, want, c->tol)) {
    if (c->may_skip) return -1;
    tl_test_fail(__FILE__, __LINE__, "%s: finite differences with steps %g and %g disagree", c->name, c->h, 2 * c->h);
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < c->n; i++) {
    bad += compare(c, i, got[i], want[i], c->tol, "finite differences give");
    bad += compare(c, i, seeded[i], got[i], 1e-12, "with w as the seed instead");
  }
  return bad;
}

/* one per-op case: leaves of `shapes` with values by `domains` (one letter per leaf) */
static void check_grad(tl_ctx *ctx, const char *name, build_fn f, const void *arg, const char *shapes,
                       const char *domains) {
  grad_case c = {.name = name, .f = f, .arg = arg, .h = FD_H, .tol = FD_TOL};
  if (!parse_shapes(&c, shapes)) return;
  fill_values(&c, domains, hash_name(name));
  gradcheck(ctx, &c);
}

/* the same with leaf 0's values given */
static void check_grad_at(tl_ctx *ctx, const char *name, build_fn f, const void *arg, const char *shapes,
                          const double *vals) {
  grad_case c = {.name = name, .f = f, .arg = arg, .h = FD_H, .tol = FD_TOL};
  if (!parse_shapes(&c, shapes)) return;
  fill_values(&c, "aaa", hash_name(name));
  memcpy(c.vals[0], vals, sizeof(double) * (size_t)numel_of(c.ndim[0], c.shape[0]));
  gradcheck(ctx, &c);
}

/* ---- elementwise --------------------------------------------------------------- */
typedef struct {
  tl_tensor *(*fn)(tl_tensor *);
} unop;
static tl_tensor *b_unary(tl_tensor *const *x, const void *arg) { return ((const unop *)arg)->fn(x[0]); }
/* the op reading a strided view: the gradient must come back through the transpose */
static tl_tensor *b_unary_t(tl_tensor *const *x, const void *arg) {
  return ((const unop *)arg)->fn(tl_transpose(x[0], 0, 1));
}

#define UNARY_TEST(op, dom)                                          \
  TEST(grad_##op) {                                                  \
    tl_ctx *ctx = tl_init();                                         \
    unop u = {tl_##op};                                              \
    check_grad(ctx, #op " [3,4]", b_unary, &u, "3,4", dom);          \
    check_grad(ctx, #op " 0-d", b_unary, &u, "()", dom);             \
    check_grad(ctx, #op " of a transpose", b_unary_t, &u, "4,3", dom); \
    TEST_SHUTDOWN(ctx);                                              \
  }

UNARY_TEST(neg, "a")
UNARY_TEST(exp, "a")
UNARY_TEST(log, "p")
UNARY_TEST(log1p, "p")
UNARY_TEST(sqrt, "p")
UNARY_TEST(sin, "a")
UNARY_TEST(cos, "a")
UNARY_TEST(tanh, "a")
UNARY_TEST(sigmoid, "a")
UNARY_TEST(relu, "z")
UNARY_TEST(gelu, "a")
UNARY_TEST(gelu_tanh, "a")
UNARY_TEST(abs, "z")
UNARY_TEST(reciprocal, "z")

typedef struct {
  tl_tensor *(*fn)(tl_tensor *, tl_tensor *);
} binop;
static tl_tensor *b_binary(tl_tensor *const *x, const void *arg) { return ((const binop *)arg)->fn(x[0], x[1]); }

/* same shapes, [3,1] x [1,4], [2,3] x [3], 0-d x [2,3], [4] x [2,1,1]: every broadcast
 * must sum the gradient back to the operand's shape */
static void check_binary(const char *op, tl_tensor *(*fn)(tl_tensor *, tl_tensor *), const char *dom) {
  static const char *shapes[] = {"2,3|2,3", "3,1|1,4", "2,3|3", "()|2,3", "4|2,1,1"};
  tl_ctx *ctx = tl_init();
  binop b = {fn};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s %s", op, shapes[i]);
    check_grad(ctx, name, b_binary, &b, shapes[i], dom);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(grad_add) { check_binary("add", tl_add, "aa"); }
TEST(grad_sub) { check_binary("sub", tl_sub, "aa"); }
TEST(grad_mul) { check_binary("mul", tl_mul, "aa"); }
TEST(grad_div) { check_binary("div", tl_div, "az"); }
TEST(grad_pow) { check_binary("pow", tl_pow, "pa"); }
TEST(grad_maximum) { check_binary("maximum", tl_maximum, "aa"); }
TEST(grad_minimum) { check_binary("minimum", tl_minimum, "aa"); }

typedef struct {
  tl_tensor *(*fn)(tl_tensor *, double);
  double s;
} scalarop;
static tl_tensor *b_scalar(tl_tensor *const *x, const void *arg) {
  const scalarop *o = arg;
  return o->fn(x[0], o->s);
}

TEST(grad_scalar_ops) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "add_scalar 1.5", b_scalar, &(scalarop){tl_add_scalar, 1.5}, "3,4", "a");
  check_grad(ctx, "mul_scalar -2.5", b_scalar, &(scalarop){tl_mul_scalar, -2.5}, "3,4", "a");
  check_grad(ctx, "pow_scalar 2", b_scalar, &(scalarop){tl_pow_scalar, 2}, "3,4", "z");
  check_grad(ctx, "pow_scalar 3 (negative bases)", b_scalar, &(scalarop){tl_pow_scalar, 3}, "3,4", "z");
  check_grad(ctx, "pow_scalar 0.5", b_scalar, &(scalarop){tl_pow_scalar, 0.5}, "3,4", "p");
  check_grad(ctx, "pow_scalar -1.5", b_scalar, &(scalarop){tl_pow_scalar, -1.5}, "3,4", "p");
  check_grad(ctx, "pow_scalar 0", b_scalar, &(scalarop){tl_pow_scalar, 0}, "3,4", "p");
  TEST_SHUTDOWN(ctx);
}

/* where: the gradient goes to the chosen branch, none through the condition, which
 * here is computed from a leaf requiring grad */
static tl_tensor *b_where_const(tl_tensor *const *x, const void *arg) {
  (void)arg;
  uint8_t c[6] = {1, 0, 0, 1, 1, 0};
  tl_tensor *cond = tl_from_data(tl_context(x[0]), TL_BOOL, 2, (int64_t[]){2, 3}, c);
  return tl_where(cond, x[0], x[1]);
}
static tl_tensor *b_where_computed(tl_tensor *const *x, const void *arg) {
  (void)arg;
  tl_tensor *cond = tl_gt(x[0], x[1]);
  CHECK(cond && !tl_requires_grad(cond));
  return tl_where(cond, tl_mul(x[0], x[1]), tl_sin(x[0]));
}

TEST(grad_where) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "where(const, [2,3], [3])", b_where_const, NULL, "2,3|3", "aa");
  check_grad(ctx, "where(const, [2,3], 0-d)", b_where_const, NULL, "2,3|()", "aa");
  check_grad(ctx, "where(x > y, x * y, sin x)", b_where_computed, NULL, "2,3|2,3", "aa");
  TEST_SHUTDOWN(ctx);
}

static tl_tensor *b_cast64(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_mul(tl_cast(x[0], TL_F64), x[0]);
}
static tl_tensor *b_cast_via_f32(tl_tensor *const *x, const void *arg) {
  (void)arg;
  tl_tensor *y = tl_cast(x[0], TL_F32);
  CHECK(y && tl_requires_grad(y) == tl_requires_grad(x[0]));
  return tl_cast(tl_exp(y), TL_F64);
}

TEST(grad_cast) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "cast f64 -> f64", b_cast64, NULL, "2,3", "a");
  /* through f32 the differences need a larger step and a looser tolerance */
  grad_case c = {.name = "cast f64 -> f32 -> f64", .f = b_cast_via_f32, .h = 1e-3, .tol = 2e-3};
  parse_shapes(&c, "2,3");
  fill_values(&c, "a", 7);
  gradcheck(ctx, &c);
  /* an f32 leaf gets an f32 gradient: d sum(cast(x, f64) * w) / dx = w */
  float xv[3] = {0.5f, -1.0f, 2.0f};
  double wv[3] = {0.25, -3, 1.5};
  tl_tensor *x = tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, xv);
  tl_tensor *w = tl_from_data(ctx, TL_F64, 1, (int64_t[]){3}, wv);
  CHECK_INT(tl_set_requires_grad(x, 1), TL_OK);
  CHECK_INT(tl_backward(tl_sum(tl_mul(tl_cast(x, TL_F64), w), 0, NULL, 0), NULL), TL_OK);
  tl_tensor *g = tl_grad(x);
  float gv[3] = {0};
  CHECK(g && tl_get_dtype(g) == TL_F32);
  CHECK_INT(tl_to_host(g, gv, sizeof gv), TL_OK);
  for (int i = 0; i < 3; i++) CHECK_NEAR(gv[i], wv[i], 1e-6);
  TEST_SHUTDOWN(ctx);
}

/* ---- reductions ------------------------------------------------------------------ */
typedef struct {
  tl_tensor *(*fn)(tl_tensor *, int, const int *, int);
  int naxes, axes[3], all, keepdim;
} reduceop;
static tl_tensor *b_reduce(tl_tensor *const *x, const void *arg) {
  const reduceop *r = arg;
  return r->fn(x[0], r->naxes, r->all ? NULL : r->axes, r->keepdim);
}

/* one axis, two (unsorted, negative), all (NULL), keepdim on and off, on [2,3,4] */
static void check_reduce(const char *op, tl_tensor *(*fn)(tl_tensor *, int, const int *, int), const char *dom) {
  const reduceop cases[] = {
      {fn, 1, {1}, 0, 0}, {fn, 1, {1}, 0, 1}, {fn, 2, {2, 0}, 0, 0},  {fn, 2, {0, -1}, 0, 1},
      {fn, 1, {-1}, 0, 0}, {fn, 0, {0}, 1, 0}, {fn, 0, {0}, 1, 1},   {fn, 3, {0, 1, 2}, 0, 0},
  };
  tl_ctx *ctx = tl_init();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char name[96];
    snprintf(name, sizeof name, "%s axes %s{%d,%d} keepdim %d", op, cases[i].all ? "NULL " : "",
             cases[i].axes[0], cases[i].naxes > 1 ? cases[i].axes[1] : 0, cases[i].keepdim);
    check_grad(ctx, name, b_reduce, &cases[i], "2,3,4", dom);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(grad_sum) { check_reduce("sum", tl_sum, "a"); }
TEST(grad_mean) { check_reduce("mean", tl_mean, "a"); }
TEST(grad_max) { check_reduce("max", tl_max, "a"); }
TEST(grad_min) { check_reduce("min", tl_min, "a"); }
TEST(grad_prod) {
  check_reduce("prod", tl_prod, "z");
  /* zeros: d prod / d x_i is the product of the others, not prod / x_i */
  tl_ctx *ctx = tl_init();
  const double v[6] = {0, 2, -3, 1.5, 0, 0};
  check_grad_at(ctx, "prod with zeros, axis 1", b_reduce, &(reduceop){tl_prod, 1, {1}, 0, 0}, "2,3", v);
  check_grad_at(ctx, "prod with zeros, all", b_reduce, &(reduceop){tl_prod, 0, {0}, 1, 0}, "2,3", v);
  TEST_SHUTDOWN(ctx);
}

typedef struct {
  tl_tensor *(*fn)(tl_tensor *, int);
  int axis;
} axisop;
static tl_tensor *b_axis(tl_tensor *const *x, const void *arg) {
  const axisop *o = arg;
  return o->fn(x[0], o->axis);
}

TEST(grad_softmax) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "softmax axis 0", b_axis, &(axisop){tl_softmax, 0}, "3,4", "a");
  check_grad(ctx, "softmax axis 1", b_axis, &(axisop){tl_softmax, 1}, "3,4", "a");
  check_grad(ctx, "softmax axis -2 of [2,3,2]", b_axis, &(axisop){tl_softmax, -2}, "2,3,2", "a");
  check_grad(ctx, "log_softmax axis 0", b_axis, &(axisop){tl_log_softmax, 0}, "3,4", "a");
  check_grad(ctx, "log_softmax axis -1", b_axis, &(axisop){tl_log_softmax, -1}, "3,4", "a");
  check_grad(ctx, "log_softmax axis 1 of [2,3,2]", b_axis, &(axisop){tl_log_softmax, 1}, "2,3,2", "a");
  TEST_SHUTDOWN(ctx);
}

/* ---- ties: shared equally, as tl.h documents ----------------------------------------- */
static void check_grad_values(tl_tensor *x, const double *want, int n) {
  double got[16] = {0};
  tl_tensor *g = tl_grad(x);
  CHECK_INT(tl_to_host(g, got, sizeof(double) * (size_t)n), TL_OK);
  for (int i = 0; i < n; i++) CHECK_NEAR(got[i], want[i], 1e-12);
}

static tl_tensor *vec64(tl_ctx *ctx, int n, const double *v, bool requires) {
  tl_tensor *t = tl_from_data(ctx, TL_F64, 1, (int64_t[]){n}, v);
  if (requires) CHECK_INT(tl_set_requires_grad(t, 1), TL_OK);
  return t;
}

TEST(grad_ties_share_equally) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec64(ctx, 3, (double[]){1, 3, 3}, true);
  CHECK_INT(tl_backward(tl_max(a, 0, NULL, 0), NULL), TL_OK);
  check_grad_values(a, (double[]){0, 0.5, 0.5}, 3);
  tl_tensor *b = vec64(ctx, 4, (double[]){2, 1, 1, 5}, true);
  CHECK_INT(tl_backward(tl_min(b, 0, NULL, 0), NULL), TL_OK);
  check_grad_values(b, (double[]){0, 0.5, 0.5, 0}, 4);
  tl_tensor *c = vec64(ctx, 3, (double[]){2, 2, 2}, true);
  CHECK_INT(tl_backward(tl_max(c, 0, NULL, 0), NULL), TL_OK);
  check_grad_values(c, (double[]){1.0 / 3, 1.0 / 3, 1.0 / 3}, 3);
  /* per row: [[1,3,3],[4,2,0]] -> [[0,.5,.5],[1,0,0]] */
  tl_tensor *m = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, (double[]){1, 3, 3, 4, 2, 0});
  CHECK_INT(tl_set_requires_grad(m, 1), TL_OK);
  CHECK_INT(tl_backward(tl_sum(tl_max(m, 1, (int[]){1}, 0), 0, NULL, 0), NULL), TL_OK);
  check_grad_values(m, (double[]){0, 0.5, 0.5, 1, 0, 0}, 6);
  /* maximum and minimum: a tie gives each side half */
  tl_tensor *p = vec64(ctx, 3, (double[]){1, 2, 3}, true), *q = vec64(ctx, 3, (double[]){1, 5, 0}, true);
  CHECK_INT(tl_backward(tl_sum(tl_maximum(p, q), 0, NULL, 0), NULL), TL_OK);
  check_grad_values(p, (double[]){0.5, 0, 1}, 3);
  check_grad_values(q, (double[]){0.5, 1, 0}, 3);
  CHECK_INT(tl_zero_grad(p), TL_OK);
  CHECK_INT(tl_zero_grad(q), TL_OK);
  CHECK_INT(tl_backward(tl_sum(tl_minimum(p, q), 0, NULL, 0), NULL), TL_OK);
  check_grad_values(p, (double[]){0.5, 1, 0}, 3);
  check_grad_values(q, (double[]){0.5, 0, 1}, 3);
  TEST_SHUTDOWN(ctx);
}

/* ---- movement ---------------------------------------------------------------------- */
static tl_tensor *b_reshape(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_reshape(tl_reshape(x[0], 2, (int64_t[]){4, -1}), 1, (int64_t[]){24});
}
static tl_tensor *b_reshape_mid(tl_tensor *const *x, const void *arg) { /* a reshape between two ops */
  (void)arg;
  tl_tensor *y = tl_mul(tl_reshape(tl_sin(x[0]), 2, (int64_t[]){6, 4}), tl_reshape(x[0], 2, (int64_t[]){6, -1}));
  return tl_reshape(tl_exp(y), 3, (int64_t[]){3, 2, 4});
}
static tl_tensor *b_permute(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_permute(x[0], (int[]){2, 0, 1});
}
static tl_tensor *b_transpose(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_mul(tl_transpose(x[0], 0, -1), tl_transpose(x[0], 2, 0)); /* x^T used twice */
}
static tl_tensor *b_expand(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_expand(x[0], 3, (int64_t[]){2, 3, 4});
}
static tl_tensor *b_expand_0d(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_mul(tl_expand(x[0], 2, (int64_t[]){2, 3}), x[1]);
}
static tl_tensor *b_shrink(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_shrink(x[0], (int64_t[]){1, 0}, (int64_t[]){3, 4});
}
static tl_tensor *b_slice(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_slice(tl_slice(x[0], 0, 1, 6, 2), -1, -3, 4, 2);
}
static tl_tensor *b_pad(tl_tensor *const *x, const void *arg) {
  (void)arg; /* the padded value feeds a nonlinearity: its gradient must go nowhere */
  return tl_exp(tl_pad(x[0], (int64_t[]){1, 0}, (int64_t[]){2, 1}, 0.5));
}
static tl_tensor *b_flip(tl_tensor *const *x, const void *arg) {
  const int *axes = arg;
  return tl_flip(x[0], axes[0], axes + 1);
}
static tl_tensor *b_squeeze(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_squeeze(x[0], 1);
}
static tl_tensor *b_unsqueeze(tl_tensor *const *x, const void *arg) {
  const int *axis = arg;
  return tl_unsqueeze(x[0], *axis);
}
static tl_tensor *b_cat(tl_tensor *const *x, const void *arg) {
  const int *axis = arg;
  return tl_cat(3, (tl_tensor *const[]){x[0], x[1], x[2]}, *axis);
}
static tl_tensor *b_cat_self(tl_tensor *const *x, const void *arg) {
  (void)arg; /* the same tensor twice: both copies' gradients add up */
  return tl_cat(3, (tl_tensor *const[]){x[0], x[1], x[0]}, 0);
}
static tl_tensor *b_stack(tl_tensor *const *x, const void *arg) {
  const int *axis = arg;
  return tl_stack(2, (tl_tensor *const[]){x[0], x[1]}, *axis);
}
static tl_tensor *b_contiguous(tl_tensor *const *x, const void *arg) {
  (void)arg;
  return tl_mul(tl_contiguous(tl_transpose(x[0], 0, 1)), tl_transpose(x[0], 0, 1));
}

TEST(grad_reshape_permute_transpose) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "reshape [2,3,4] -> [4,-1] -> [24]", b_reshape, NULL, "2,3,4", "a");
  check_grad(ctx, "reshape between ops", b_reshape_mid, NULL, "2,3,4", "a");
  check_grad(ctx, "permute {2,0,1}", b_permute, NULL, "2,3,4", "a");
  check_grad(ctx, "transpose twice, multiplied", b_transpose, NULL, "2,3,4", "a");
  TEST_SHUTDOWN(ctx);
}

TEST(grad_expand_shrink_slice_pad) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "expand [3,1] -> [2,3,4]", b_expand, NULL, "3,1", "a");
  check_grad(ctx, "expand 0-d -> [2,3]", b_expand_0d, NULL, "()|2,3", "aa");
  check_grad(ctx, "shrink [4,5] -> [1:3, 0:4]", b_shrink, NULL, "4,5", "a");
  check_grad(ctx, "slice step 2, negative start", b_slice, NULL, "6,4", "a");
  check_grad(ctx, "pad 0.5 then exp", b_pad, NULL, "2,3", "a");
  TEST_SHUTDOWN(ctx);
}

TEST(grad_flip_squeeze_unsqueeze) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "flip {0}", b_flip, (int[]){1, 0}, "3,4", "a");
  check_grad(ctx, "flip {0,-1}", b_flip, (int[]){2, 0, -1}, "3,4", "a");
  check_grad(ctx, "squeeze axis 1", b_squeeze, NULL, "3,1,4", "a");
  check_grad(ctx, "unsqueeze axis 0", b_unsqueeze, (int[]){0}, "3,4", "a");
  check_grad(ctx, "unsqueeze axis -1", b_unsqueeze, (int[]){-1}, "3,4", "a");
  TEST_SHUTDOWN(ctx);
}

TEST(grad_cat_stack_contiguous) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "cat axis 1 of [2,1] [2,3] [2,2]", b_cat, (int[]){1}, "2,1|2,3|2,2", "aaa");
  check_grad(ctx, "cat axis 0 of [1,3] [2,3] [3,3]", b_cat, (int[]){0}, "1,3|2,3|3,3", "aaa");
  check_grad(ctx, "cat of x, y, x", b_cat_self, NULL, "2,3|1,3", "aa");
  check_grad(ctx, "stack axis 0", b_stack, (int[]){0}, "2,3|2,3", "aa");
  check_grad(ctx, "stack axis 2", b_stack, (int[]){2}, "2,3|2,3", "aa");
  check_grad(ctx, "stack axis -2", b_stack, (int[]){-2}, "2,3|2,3", "aa");
  check_grad(ctx, "contiguous of a transpose", b_contiguous, NULL, "3,4", "a");
  TEST_SHUTDOWN(ctx);
}

/* ---- matmul ----------------------------------------------------------------------- */
TEST(grad_matmul) {
  static const char *shapes[] = {"3,4|4,2", "4|4,3", "3,4|4", "4|4", "2,3,4|4,2", "2,1,3,4|3,4,2", "3,4|2,4,2"};
  tl_ctx *ctx = tl_init();
  binop b = {tl_matmul};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "matmul %s", shapes[i]);
    check_grad(ctx, name, b_binary, &b, shapes[i], "aa");
  }
  TEST_SHUTDOWN(ctx);
}

/* ---- sizes where kernels split over threads and big reductions split in two ----------
 * checked against closed forms computed here, in f64 */
static tl_tensor *host_tensor(tl_ctx *ctx, int ndim, const int64_t *shape, double *v, uint64_t seed, bool requires) {
  for (int64_t i = 0; i < numel_of(ndim, shape); i++) v[i] = uniform(&seed, -2, 2);
  tl_tensor *t = tl_from_data(ctx, TL_F64, ndim, shape, v);
  if (requires) CHECK_INT(tl_set_requires_grad(t, 1), TL_OK);
  return t;
}

/* worst |got - want| / (1 + |want|) over n values of t's gradient */
static double grad_error(tl_tensor *t, const double *want, int64_t n) {
  double *got = malloc(sizeof(double) * (size_t)n), worst = 0;
  CHECK_INT(tl_to_host(tl_grad(t), got, sizeof(double) * (size_t)n), TL_OK);
  for (int64_t i = 0; i < n; i++) {
    double e = fabs(got[i] - want[i]) / (1 + fabs(want[i]));
    worst = e > worst || isnan(e) ? e : worst;
  }
  free(got);
  return worst;
}

TEST(grad_matmul_large) {
  enum { M = 64, K = 96, N = 80 };
  tl_ctx *ctx = tl_init();
  static double a[M * K], b[K * N], w[M * N], da[M * K], db[K * N];
  tl_tensor *ta = host_tensor(ctx, 2, (int64_t[]){M, K}, a, 1, true);
  tl_tensor *tb = host_tensor(ctx, 2, (int64_t[]){K, N}, b, 2, true);
  tl_tensor *tw = host_tensor(ctx, 2, (int64_t[]){M, N}, w, 3, false);
  CHECK_INT(tl_backward(tl_sum(tl_mul(tl_matmul(ta, tb), tw), 0, NULL, 0), NULL), TL_OK);
  for (int i = 0; i < M; i++) /* dA = W B^T */
    for (int k = 0; k < K; k++) {
      double acc = 0;
      for (int j = 0; j < N; j++) acc += w[i * N + j] * b[k * N + j];
      da[i * K + k] = acc;
    }
  for (int k = 0; k < K; k++) /* dB = A^T W */
    for (int j = 0; j < N; j++) {
      double acc = 0;
      for (int i = 0; i < M; i++) acc += a[i * K + k] * w[i * N + j];
      db[k * N + j] = acc;
    }
  CHECK(grad_error(ta, da, M * K) < 1e-12);
  CHECK(grad_error(tb, db, K * N) < 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_reductions_large) {
  enum { R = 300, C = 257 };
  tl_ctx *ctx = tl_init();
  static double x[R * C], w1[C], w2[R], want[R * C];
  tl_tensor *tx = host_tensor(ctx, 2, (int64_t[]){R, C}, x, 4, true);
  tl_tensor *t1 = host_tensor(ctx, 1, (int64_t[]){C}, w1, 5, false);
  tl_tensor *t2 = host_tensor(ctx, 1, (int64_t[]){R}, w2, 6, false);
  /* sum(w1 * colsum x) + sum(w2 * rowmax x) + mean(x^2) */
  tl_tensor *l = tl_add(tl_sum(tl_mul(tl_sum(tx, 1, (int[]){0}, 0), t1), 0, NULL, 0),
                        tl_sum(tl_mul(tl_max(tx, 1, (int[]){1}, 0), t2), 0, NULL, 0));
  CHECK_INT(tl_backward(tl_add(l, tl_mean(tl_mul(tx, tx), 0, NULL, 0)), NULL), TL_OK);
  for (int i = 0; i < R; i++) {
    int arg = 0;
    for (int j = 1; j < C; j++) arg = x[i * C + j] > x[i * C + arg] ? j : arg;
    for (int j = 0; j < C; j++) want[i * C + j] = w1[j] + (j == arg ? w2[i] : 0) + 2 * x[i * C + j] / (R * C);
  }
  CHECK(grad_error(tx, want, R * C) < 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_split_full_reductions) {
  enum { N = 70000 }; /* a full reduction this big is split into partial rows */
  tl_ctx *ctx = tl_init();
  static double x[N], want[N];
  uint64_t seed = 7;
  for (int i = 0; i < N; i++) x[i] = uniform(&seed, -2, 2);
  x[5] = x[69000] = 3; /* the maximum, tied, in two different partial rows */
  tl_tensor *tx = tl_from_data(ctx, TL_F64, 1, (int64_t[]){N}, x);
  CHECK_INT(tl_set_requires_grad(tx, 1), TL_OK);
  CHECK_INT(tl_backward(tl_add(tl_max(tx, 0, NULL, 0), tl_mul_scalar(tl_sum(tx, 0, NULL, 0), 0.25)), NULL), TL_OK);
  for (int i = 0; i < N; i++) want[i] = 0.25 + (i == 5 || i == 69000 ? 0.5 : 0);
  CHECK(grad_error(tx, want, N) < 1e-12);
  CHECK_INT(tl_zero_grad(tx), TL_OK);
  CHECK_INT(tl_backward(tl_min(tx, 0, NULL, 0), NULL), TL_OK); /* the minimum: one element */
  int arg = 0;
  for (int i = 1; i < N; i++) arg = x[i] < x[arg] ? i : arg;
  for (int i = 0; i < N; i++) want[i] = i == arg;
  CHECK(grad_error(tx, want, N) < 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_softmax_long_rows) {
  enum { R = 8, C = 1000 };
  tl_ctx *ctx = tl_init();
  static double x[R * C], w[R * C], want_s[R * C], want_l[R * C];
  tl_tensor *tx = host_tensor(ctx, 2, (int64_t[]){R, C}, x, 8, true);
  tl_tensor *tw = host_tensor(ctx, 2, (int64_t[]){R, C}, w, 9, false);
  tl_tensor *sm = tl_sum(tl_mul(tl_softmax(tx, 1), tw), 0, NULL, 0);
  tl_tensor *lsm = tl_sum(tl_mul(tl_log_softmax(tx, 1), tw), 0, NULL, 0);
  for (int i = 0; i < R; i++) { /* softmax: s (w - <w, s>); log_softmax: w - s sum(w) */
    double mx = -INFINITY, z = 0, ws = 0, wsum = 0;
    for (int j = 0; j < C; j++) mx = fmax(mx, x[i * C + j]);
    for (int j = 0; j < C; j++) z += exp(x[i * C + j] - mx);
    for (int j = 0; j < C; j++) ws += w[i * C + j] * exp(x[i * C + j] - mx) / z, wsum += w[i * C + j];
    for (int j = 0; j < C; j++) {
      double sj = exp(x[i * C + j] - mx) / z;
      want_s[i * C + j] = sj * (w[i * C + j] - ws);
      want_l[i * C + j] = w[i * C + j] - sj * wsum;
    }
  }
  CHECK_INT(tl_backward(sm, NULL), TL_OK);
  CHECK(grad_error(tx, want_s, R * C) < 1e-12);
  CHECK_INT(tl_zero_grad(tx), TL_OK);
  CHECK_INT(tl_backward(lsm, NULL), TL_OK);
  CHECK(grad_error(tx, want_l, R * C) < 1e-12);
  TEST_SHUTDOWN(ctx);
}

/* ---- semantics ------------------------------------------------------------------------ */
static void check_values(tl_tensor *t, const double *want, int n, double tol) {
  double got[16] = {0};
  tl_tensor *c = tl_cast(t, TL_F64);
  CHECK_INT(tl_to_host(c, got, sizeof(double) * (size_t)n), TL_OK);
  for (int i = 0; i < n; i++) CHECK_NEAR(got[i], want[i], tol);
}

static tl_tensor *square_sum(tl_tensor *x) { return tl_sum(tl_mul(x, x), 0, NULL, 0); }

TEST(grad_accumulates_until_zero_grad) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec64(ctx, 3, (double[]){1, 2, 3}, true);
  check_values(tl_grad(x), (double[]){0, 0, 0}, 3, 0); /* zeros before any backward */
  CHECK_INT(tl_backward(square_sum(x), NULL), TL_OK);
  check_values(tl_grad(x), (double[]){2, 4, 6}, 3, 1e-12);
  CHECK_INT(tl_backward(tl_sum(tl_mul_scalar(x, 3), 0, NULL, 0), NULL), TL_OK);
  check_values(tl_grad(x), (double[]){5, 7, 9}, 3, 1e-12);
  CHECK_INT(tl_zero_grad(x), TL_OK);
  check_values(tl_grad(x), (double[]){0, 0, 0}, 3, 0);
  tl_tensor *loss = square_sum(x);
  CHECK_INT(tl_backward(loss, NULL), TL_OK);
  check_values(tl_grad(x), (double[]){2, 4, 6}, 3, 1e-12);
  CHECK_INT(tl_backward(loss, NULL), TL_OK); /* the same loss again: its history is kept */
  check_values(tl_grad(x), (double[]){4, 8, 12}, 3, 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_of_lazy_creation_leaves) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 3);
  /* leaves that are graph nodes, not buffers, until realized */
  tl_tensor *r = tl_randn(ctx, TL_F64, 1, (int64_t[]){4}), *a = tl_arange(ctx, TL_F64, 1, 5, 1);
  CHECK_INT(tl_set_requires_grad(r, 1), TL_OK);
  CHECK_INT(tl_set_requires_grad(a, 1), TL_OK);
  CHECK_INT(tl_backward(tl_sum(tl_mul(tl_mul(r, r), a), 0, NULL, 0), NULL), TL_OK);
  double rv[4], want_r[4], want_a[4];
  CHECK_INT(tl_to_host(r, rv, sizeof rv), TL_OK);
  for (int i = 0; i < 4; i++) {
    want_r[i] = 2 * rv[i] * (i + 1);
    want_a[i] = rv[i] * rv[i];
  }
  check_values(tl_grad(r), want_r, 4, 1e-12);
  check_values(tl_grad(a), want_a, 4, 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_at_zero_where_defined) {
  tl_ctx *ctx = tl_init();
  /* x^2 and x^3 at 0: 0, not 0 * x^-1 = NaN; prod of [0, 2, 3] by the zero: 6 */
  tl_tensor *x = vec64(ctx, 3, (double[]){0, 1, -2}, true);
  CHECK_INT(tl_backward(tl_sum(tl_add(tl_pow_scalar(x, 2), tl_pow_scalar(x, 3)), 0, NULL, 0), NULL), TL_OK);
  check_values(tl_grad(x), (double[]){0, 5, 8}, 3, 1e-12);
  tl_tensor *p = vec64(ctx, 3, (double[]){0, 2, 3}, true);
  CHECK_INT(tl_backward(tl_prod(p, 0, NULL, 0), NULL), TL_OK);
  check_values(tl_grad(p), (double[]){6, 0, 0}, 3, 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_fan_out_and_unused_leaves) {
  tl_ctx *ctx = tl_init();
  /* y = x*x used three times: d sum(y + y*y + exp(y)) = 2x (1 + 2y + e^y) */
  tl_tensor *x = vec64(ctx, 3, (double[]){0.5, -1, 1.5}, true), *unused = vec64(ctx, 3, (double[]){1, 1, 1}, true);
  tl_tensor *y = tl_mul(x, x);
  CHECK_INT(tl_backward(tl_sum(tl_add(tl_add(y, tl_mul(y, y)), tl_exp(y)), 0, NULL, 0), NULL), TL_OK);
  double want[3];
  for (int i = 0; i < 3; i++) {
    double xv = (double[]){0.5, -1, 1.5}[i], yv = xv * xv;
    want[i] = 2 * xv * (1 + 2 * yv + exp(yv));
  }
  check_values(tl_grad(x), want, 3, 1e-12);
  check_values(tl_grad(unused), (double[]){0, 0, 0}, 3, 0);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_detach_stops_gradient) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec64(ctx, 3, (double[]){1, 2, 3}, true);
  tl_tensor *d = tl_detach(tl_mul_scalar(x, 2));
  CHECK(d && !tl_requires_grad(d));
  check_values(d, (double[]){2, 4, 6}, 3, 0);
  CHECK_INT(tl_backward(tl_sum(tl_mul(x, d), 0, NULL, 0), NULL), TL_OK); /* d counts as a constant */
  check_values(tl_grad(x), (double[]){2, 4, 6}, 3, 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_requires_grad_off_and_grad_disabled) {
  tl_ctx *ctx = tl_init();
  tl_tensor *a = vec64(ctx, 3, (double[]){1, 2, 3}, true), *b = vec64(ctx, 3, (double[]){4, 5, 6}, true);
  CHECK_INT(tl_requires_grad(a), 1);
  CHECK_INT(tl_set_requires_grad(b, 0), TL_OK);
  CHECK_INT(tl_requires_grad(b), 0);
  CHECK_INT(tl_requires_grad(tl_exp(b)), 0);
  tl_tensor *ab = tl_mul(a, b);
  CHECK_INT(tl_requires_grad(ab), 1);
  CHECK_INT(tl_backward(tl_sum(ab, 0, NULL, 0), NULL), TL_OK);
  check_values(tl_grad(a), (double[]){4, 5, 6}, 3, 1e-12);
  /* evaluation mode: nothing records, until grad is enabled again */
  CHECK_INT(tl_grad_enabled(ctx), 1);
  tl_set_grad_enabled(ctx, 0);
  CHECK_INT(tl_grad_enabled(ctx), 0);
  tl_tensor *off = tl_mul(a, a);
  CHECK(off && !tl_requires_grad(off));
  tl_set_grad_enabled(ctx, 1);
  CHECK_INT(tl_grad_enabled(ctx), 1);
  CHECK_INT(tl_requires_grad(tl_mul(a, a)), 1);
  /* outputs that are never differentiable */
  CHECK_INT(tl_requires_grad(tl_lt(a, b)), 0);
  CHECK_INT(tl_requires_grad(tl_argmax(a, 0, 0)), 0);
  CHECK_INT(tl_requires_grad(tl_cast(a, TL_I64)), 0);
  CHECK_INT(tl_requires_grad(tl_logical_not(a)), 0);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_after_realizing_the_forward) {
  tl_ctx *ctx = tl_init();
  const double xv[3] = {0.5, -1, 2};
  tl_tensor *x = vec64(ctx, 3, xv, true);
  tl_tensor *e = tl_exp(x);
  CHECK_INT(tl_realize(e), TL_OK); /* the intermediate becomes a buffer... */
  tl_tensor *loss = tl_sum(tl_mul(e, x), 0, NULL, 0);
  double v = 0, want = 0, g[3];
  CHECK_INT(tl_item(loss, &v), TL_OK); /* ...and so does the loss, before backward */
  for (int i = 0; i < 3; i++) {
    want += exp(xv[i]) * xv[i];
    g[i] = exp(xv[i]) * (xv[i] + 1);
  }
  CHECK_NEAR(v, want, 1e-12);
  CHECK_INT(tl_backward(loss, NULL), TL_OK);
  check_values(tl_grad(x), g, 3, 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(grad_assign_keeps_identity) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec64(ctx, 3, (double[]){1, 2, 3}, true);
  CHECK_INT(tl_backward(square_sum(x), NULL), TL_OK);
  /* an SGD-like update computed with grad enabled: x's history must not take it in */
  tl_tensor *next = tl_sub(x, tl_mul_scalar(tl_grad(x), 0.25)); /* [0.5, 1, 1.5] */
  CHECK_INT(tl_assign(x, next), TL_OK);
  CHECK_INT(tl_requires_grad(x), 1);
  check_values(x, (double[]){0.5, 1, 1.5}, 3, 1e-12);
  check_values(tl_grad(x), (double[]){2, 4, 6}, 3, 1e-12); /* the gradient stays */
  CHECK_INT(tl_backward(square_sum(x), NULL), TL_OK);    /* and accumulates at the new value */
  check_values(tl_grad(x), (double[]){3, 6, 9}, 3, 1e-12);
  /* src of another dtype is cast to dst's */
  float f[3] = {-1, 0.5f, 4};
  CHECK_INT(tl_assign(x, tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, f)), TL_OK);
  CHECK_INT(tl_get_dtype(x), TL_F64);
  check_values(x, (double[]){-1, 0.5, 4}, 3, 0);
  TEST_SHUTDOWN(ctx);
}

/* ---- misuse: the call fails with a message, nothing crashes ------------------------ */
static void check_error(tl_ctx *ctx, tl_status got, tl_status want, const char *msg) {
  CHECK_INT(got, want);
  CHECK_STR(tl_last_error(ctx), msg);
  tl_clear_error(ctx);
}

/* A non-leaf that a handle holds while backward runs keeps its gradient (the seed
 * language's `w.grad()` on `w = randn(..) * 0.1`), accumulated over backward calls as
 * a leaf's is, until zero_grad; by hand: y = 3x, z = sum(y * y): dz/dy = 2y = 6x,
 * dz/dx = 18x. */
TEST(grad_nonleaf_kept) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec64(ctx, 2, (double[]){1, 2}, true);
  tl_tensor *y = tl_mul_scalar(x, 3);
  tl_tensor *yy = tl_mul(y, y);
  CHECK_INT(tl_backward(tl_sum(yy, 0, NULL, 0), NULL), TL_OK);
  check_values(tl_grad(y), (double[]){6, 12}, 2, 1e-12);
  check_values(tl_grad(yy), (double[]){1, 1}, 2, 1e-12);
  check_values(tl_grad(x), (double[]){18, 36}, 2, 1e-12);
  /* again, through y only (sum(y)): y's kept gradient grows by ones, x's by 3 */
  CHECK_INT(tl_backward(tl_sum(y, 0, NULL, 0), NULL), TL_OK);
  check_values(tl_grad(y), (double[]){7, 13}, 2, 1e-12);
  check_values(tl_grad(x), (double[]){21, 39}, 2, 1e-12);
  CHECK_INT(tl_zero_grad(y), TL_OK);
  check_values(tl_grad(y), (double[]){0, 0}, 2, 0);
  check_values(tl_grad(x), (double[]){21, 39}, 2, 1e-12); /* the leaf's is its own */
  CHECK_INT(tl_last_status(ctx), TL_OK);
  TEST_SHUTDOWN(ctx);
}

/* A held non-leaf's gradient is kept lazily: backward computes no more kernels when a
 * handle holds the intermediates than when none does (it computed y's unmasked gradient,
 * a product of its own, and read it nowhere), and tl_grad(y) still gives it. By hand:
 * z = x w = [[3, 1], [-1, -7]], y = relu(z) = [[3, 1], [0, 0]], loss = sum(y v), v =
 * [1, 2]^T: dy = [[1, 2], [1, 2]], dz = [[1, 2], [0, 0]], dw = x^T dz = [[1, 2], [2, 4]]. */
static uint64_t backward_kernels(bool hold, double *dw, double *dy) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, -4});
  tl_tensor *w = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 2}, (double[]){1, -1, 1, 1});
  tl_tensor *v = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 1}, (double[]){1, 2});
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_tensor *z = tl_matmul(x, w), *y = tl_relu(z), *yv = tl_matmul(y, v);
  tl_tensor *loss = tl_sum(yv, 0, NULL, 0);
  CHECK_INT(tl_realize(loss), TL_OK);
  if (!hold) tl_release(z), tl_release(y), tl_release(yv);
  uint64_t before = tl_get_stats(ctx).kernels_run;
  CHECK_INT(tl_backward(loss, NULL), TL_OK);
  uint64_t ran = tl_get_stats(ctx).kernels_run - before;
  CHECK_INT(tl_to_host(tl_grad(w), dw, 4 * sizeof *dw), TL_OK);
  if (hold) CHECK_INT(tl_to_host(tl_grad(y), dy, 4 * sizeof *dy), TL_OK);
  TEST_SHUTDOWN(ctx);
  return ran;
}
TEST(grad_nonleaf_kept_lazily) {
  double dw_held[4], dw_free[4], dy[4];
  uint64_t held = backward_kernels(true, dw_held, dy), freed = backward_kernels(false, dw_free, NULL);
  CHECK_INT((long long)held, (long long)freed);
  const double want_dw[4] = {1, 2, 2, 4}, want_dy[4] = {1, 2, 1, 2};
  for (int i = 0; i < 4; i++) {
    CHECK(dw_held[i] == want_dw[i] && dw_free[i] == want_dw[i]);
    CHECK(dy[i] == want_dy[i]);
  }
}

TEST(grad_errors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = vec64(ctx, 3, (double[]){1, 2, 3}, true), *plain = vec64(ctx, 3, (double[]){1, 2, 3}, false);
  tl_tensor *y = tl_mul(x, x);

  check_error(ctx, tl_backward(y, NULL), TL_ERR_SHAPE, /* 3 elements: which seed? */
              "backward: the tensor has 3 elements: give a seed gradient of its shape (only a one-element "
              "tensor needs none)");
  check_error(ctx, tl_backward(y, vec64(ctx, 2, (double[]){1, 1}, false)), TL_ERR_SHAPE,
              "backward: the seed has shape [2] but the tensor has shape [3]");
  check_error(ctx, tl_backward(tl_sum(plain, 0, NULL, 0), NULL), TL_ERR_ARG,
              "backward: the tensor does not require grad (nothing it was computed from requires grad)");
  CHECK(tl_grad(plain) == NULL);
  check_error(ctx, tl_last_status(ctx), TL_ERR_ARG, "grad: the tensor does not require grad");
  check_values(tl_grad(y), (double[]){0, 0, 0}, 3, 0); /* a non-leaf no backward reached: zeros, as a leaf's */
  check_error(ctx, tl_zero_grad(plain), TL_ERR_ARG, "zero_grad: the tensor does not require grad");

  /* a computed tensor cannot stop requiring grad (detach it); asking again is a no-op,
   * as in torch, and does not make it a leaf */
  check_error(ctx, tl_set_requires_grad(y, 0), TL_ERR_ARG,
              "set_requires_grad: the tensor is not a leaf (it was computed from tensors requiring grad); use "
              "tl_detach to stop its gradient");
  CHECK_INT(tl_requires_grad(y), 1);
  CHECK_INT(tl_set_requires_grad(y, 1), TL_OK);
  tl_clear_error(ctx);

  static const tl_dtype ints[] = {TL_I32, TL_I64, TL_BOOL};
  static const char *const msgs[] = {"set_requires_grad: only f32 and f64 tensors can require grad, got i32",
                                     "set_requires_grad: only f32 and f64 tensors can require grad, got i64",
                                     "set_requires_grad: only f32 and f64 tensors can require grad, got bool"};
  for (int i = 0; i < 3; i++) {
    tl_tensor *t = tl_zeros(ctx, ints[i], 1, (int64_t[]){3});
    check_error(ctx, tl_set_requires_grad(t, 1), TL_ERR_DTYPE, msgs[i]);
    CHECK_INT(tl_requires_grad(t), 0);
  }

  check_error(ctx, tl_assign(x, vec64(ctx, 2, (double[]){1, 2}, false)), TL_ERR_SHAPE,
              "assign: the destination has shape [3], the value [2]");
  check_error(ctx, tl_assign(y, x), TL_ERR_ARG,
              "assign: the destination is not a leaf (it was computed from tensors requiring grad)");

  /* NULL in: NULL or an error status out, the message untouched */
  CHECK(tl_grad(NULL) == NULL);
  CHECK(tl_detach(NULL) == NULL);
  CHECK(tl_backward(NULL, NULL) != TL_OK);
  CHECK_INT(tl_requires_grad(NULL), 0);
  CHECK_STR(tl_last_error(ctx), "");
  TEST_SHUTDOWN(ctx);
}

/* ---- random composite graphs ---------------------------------------------------------
 * 1-3 f64 leaves of at most 12 elements, values away from zero; 2-7 random steps of
 * elementwise, binary (broadcasting against a leaf, the tensor itself, a scalar made
 * from a leaf, or a constant), movement and reduction ops. Inputs of log, sqrt, pow,
 * reciprocal and divisions are kept positive; values stay continuous, so kinks and
 * ties are hit only where a value is compared with itself (where the shares add up). */
#define NGRAPHS 1000
#define NGRAPHS_CPU 30
#define MAX_NUMEL 96

typedef struct {
  uint64_t s;
  tl_tensor *const *x;
  int n;
  unsigned used; /* leaves taken in so far: an unused one is preferred as an operand */
} rgen;

typedef struct {
  uint64_t seed;
  int n;
} rgraph;

static int rpick(rgen *g, int n) { return pick(&g->s, n); }

static void random_shape(uint64_t *s, int *ndim, int64_t *shape) {
  do {
    *ndim = 1 + pick(s, 3);
    for (int i = 0; i < *ndim; i++) shape[i] = *ndim == 1 ? 2 + pick(s, 6) : pick(s, 4) ? 2 + pick(s, 3) : 1;
  } while (numel_of(*ndim, shape) > 12);
}

/* leaf 1 often broadcasts against leaf 0 (some axes 1, maybe fewer axes) */
static void plan_leaves(uint64_t seed, grad_case *c) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  c->n = 1 + pick(&s, 3);
  for (int i = 0; i < c->n; i++) {
    random_shape(&s, &c->ndim[i], c->shape[i]);
    if (i == 1 && pick(&s, 2)) {
      int drop = pick(&s, c->ndim[0]);
      c->ndim[1] = c->ndim[0] - drop;
      for (int k = 0; k < c->ndim[1]; k++) c->shape[1][k] = pick(&s, 3) ? c->shape[0][k + drop] : 1;
    }
    for (int64_t j = 0; j < numel_of(c->ndim[i], c->shape[i]); j++)
      c->vals[i][j] = (pick(&s, 2) ? 1 : -1) * uniform(&s, 0.2, 2);
  }
}

static bool broadcasts(tl_tensor *a, tl_tensor *b) {
  int na = tl_ndim(a), nb = tl_ndim(b), nd = na > nb ? na : nb;
  int64_t n = 1;
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - na), ib = i - (nd - nb);
    int64_t x = ia >= 0 ? tl_dim(a, ia) : 1, y = ib >= 0 ? tl_dim(b, ib) : 1;
    if (x != y && x != 1 && y != 1) return false;
    n *= x > y ? x : y;
  }
  return n <= MAX_NUMEL;
}

/* a constant (not requiring grad) that broadcasts against t */
static tl_tensor *constant_like(rgen *g, tl_tensor *t) {
  int nd = tl_ndim(t), drop = nd ? rpick(g, nd) : 0;
  int64_t s[TL_MAX_DIMS];
  double v[MAX_NUMEL];
  for (int i = drop; i < nd; i++) s[i - drop] = rpick(g, 3) ? tl_dim(t, i) : 1;
  for (int64_t j = 0; j < numel_of(nd - drop, s); j++) v[j] = (rpick(g, 2) ? 1 : -1) * uniform(&g->s, 0.2, 2);
  return tl_from_data(tl_context(t), TL_F64, nd - drop, s, v);
}

static tl_tensor *operand(rgen *g, tl_tensor *t) {
  int i = rpick(g, g->n);
  for (int k = 0; k < g->n; k++)
    if (!(g->used >> k & 1)) i = k;
  tl_tensor *l = g->x[i];
  int k = rpick(g, 6);
  if (k < 4) g->used |= 1u << i;
  if (k < 3 && broadcasts(l, t)) return l;
  if (k < 4) return tl_mean(l, 0, NULL, 0); /* a leaf of another shape takes part as its mean */
  return k == 4 ? t : constant_like(g, t);   /* t: a second use of the same value */
}

static tl_tensor *positive(tl_tensor *t) { return tl_add_scalar(tl_abs(t), 0.5); }

static tl_tensor *r_unary(rgen *g, tl_tensor *t) {
  switch (rpick(g, 16)) {
  case 0: return tl_neg(t);
  case 1: return tl_exp(tl_tanh(t));
  case 2: return rpick(g, 2) ? tl_log(positive(t)) : tl_log1p(positive(t));
  case 3: return tl_sqrt(positive(t));
  case 4: return tl_sin(t);
  case 5: return tl_cos(t);
  case 6: return tl_tanh(t);
  case 7: return tl_sigmoid(t);
  case 8: return tl_relu(t);
  case 9: return tl_gelu(t);
  case 10: return tl_abs(t);
  case 11: return tl_reciprocal(positive(t));
  case 12: return tl_mul_scalar(tl_add_scalar(t, -0.3), 1.7);
  case 13: return tl_pow_scalar(t, rpick(g, 2) ? 2 : 3);
  case 14: return tl_pow_scalar(positive(t), 1.5);
  default: return rpick(g, 2) ? tl_cast(t, TL_F64) : tl_contiguous(t);
  }
}

static tl_tensor *r_binary(rgen *g, tl_tensor *t) {
  tl_tensor *p = operand(g, t);
  switch (rpick(g, 8)) {
  case 0: return tl_add(t, p);
  case 1: return tl_sub(p, t);
  case 2: return tl_mul(t, p);
  case 3: return tl_div(t, positive(p));
  case 4: return tl_pow(positive(t), tl_tanh(p));
  case 5: return tl_maximum(t, p);
  case 6: return tl_minimum(p, t);
  default: return tl_where(tl_lt(p, t), t, tl_mul_scalar(p, 0.5));
  }
}

static tl_tensor *r_movement(rgen *g, tl_tensor *t) {
  int nd = tl_ndim(t);
  if (nd == 0) return tl_reshape(t, 2, (int64_t[]){1, 1});
  int64_t s[TL_MAX_DIMS], b[TL_MAX_DIMS], e[TL_MAX_DIMS], n = tl_numel(t);
  int p[TL_MAX_DIMS], ax = rpick(g, nd);
  switch (rpick(g, 9)) {
  case 0: return tl_reshape(t, 1, &n);
  case 1:
    for (int i = 0; i < nd; i++) p[i] = nd - 1 - i;
    return tl_permute(t, p);
  case 2:
    for (int i = 0; i < nd; i++) {
      b[i] = rpick(g, (int)tl_dim(t, i));
      e[i] = b[i] + 1 + rpick(g, (int)(tl_dim(t, i) - b[i]));
    }
    return tl_shrink(t, b, e);
  case 3:
    for (int i = 0; i < nd; i++) b[i] = rpick(g, 2), e[i] = rpick(g, 2);
    return tl_pad(t, b, e, rpick(g, 2) ? 0.0 : 1.5);
  case 4: return tl_flip(t, 1, &ax);
  case 5: {
    tl_tensor *u = tl_unsqueeze(t, rpick(g, nd + 1));
    for (int i = 0; i < nd + 1; i++) s[i] = tl_dim(u, i) == 1 ? 1 + rpick(g, 3) : tl_dim(u, i);
    return numel_of(nd + 1, s) <= MAX_NUMEL ? tl_expand(u, nd + 1, s) : u;
  }
  case 6: return tl_slice(t, ax, rpick(g, (int)tl_dim(t, ax)), tl_dim(t, ax), 1 + rpick(g, 2));
  case 7: return tl_squeeze(tl_unsqueeze(tl_transpose(t, 0, nd - 1), 1), 1);
  default: {
    tl_tensor *two[2] = {t, rpick(g, 2) ? tl_flip(t, 1, &ax) : tl_exp(t)};
    return rpick(g, 2) ? tl_cat(2, two, ax) : tl_stack(2, two, rpick(g, nd + 1));
  }
  }
}

static tl_tensor *r_matmul(rgen *g, tl_tensor *t) {
  if (tl_ndim(t) == 0) t = tl_reshape(t, 1, (int64_t[]){1});
  int64_t k = tl_dim(t, -1);
  for (int i = 0; i < g->n; i++) /* a leaf that fits, so it gets a matmul gradient */
    if (tl_ndim(g->x[i]) <= 2 && tl_dim(g->x[i], 0) == k && rpick(g, 2)) return tl_matmul(t, g->x[i]);
  int64_t s[2] = {k, 1 + rpick(g, 3)};
  double v[4 * MAX_NUMEL];
  for (int64_t j = 0; j < s[0] * s[1]; j++) v[j] = uniform(&g->s, -1, 1);
  tl_tensor *m = tl_from_data(tl_context(t), TL_F64, 2, s, v);
  if (rpick(g, 2)) return tl_matmul(t, m);
  return tl_matmul(tl_transpose(m, 0, 1), tl_ndim(t) == 1 ? t : tl_transpose(t, -1, -2)); /* (t m)^T */
}

/* an axis of t longer than 1, or -1 if there is none */
static int long_axis(rgen *g, tl_tensor *t) {
  int nd = tl_ndim(t), start = nd ? rpick(g, nd) : 0;
  for (int i = 0; i < nd; i++)
    if (tl_dim(t, (start + i) % nd) > 1) return (start + i) % nd;
  return -1;
}

static tl_tensor *r_reduction(rgen *g, tl_tensor *t) {
  int nd = tl_ndim(t), soft = long_axis(g, t);
  if (tl_numel(t) <= 1) return tl_mul(t, t); /* nothing left to reduce */
  int ax[2] = {rpick(g, nd), rpick(g, nd)}, na = 1 + rpick(g, 2), kd = rpick(g, 2);
  if (na == 2 && ax[0] == ax[1]) na = 1;
  const int *axes = rpick(g, 5) ? ax : NULL;
  switch (rpick(g, 8)) {
  case 0: return tl_sum(t, na, axes, kd);
  case 1: return tl_numel(t) <= 12 ? tl_prod(t, na, axes, kd) : tl_mean(t, na, axes, kd); /* no huge products */
  case 2: return tl_max(t, na, axes, kd);
  case 3: return tl_min(t, na, axes, kd);
  case 4: return tl_mean(t, na, axes, kd);
  case 5: return tl_softmax(t, soft); /* along an axis of 1, (log_)softmax is a constant */
  case 6: return tl_log_softmax(t, soft);
  default: return r_matmul(g, t);
  }
}

static tl_tensor *b_random(tl_tensor *const *x, const void *arg) {
  const rgraph *r = arg;
  rgen g = {r->seed * 0x9E3779B97F4A7C15ull + 7, x, r->n, 1};
  tl_tensor *t = x[0];
  int steps = 3 + rpick(&g, 6);
  for (int i = 0; i < steps && t; i++) {
    int k = g.used + 1u < 1u << g.n && rpick(&g, 2) ? 5 : rpick(&g, 10); /* leaves left out: a binary op */
    t = k < 3 ? r_movement(&g, t) : k < 5 ? r_unary(&g, t) : k < 8 ? r_binary(&g, t) : r_reduction(&g, t);
    while (t && tl_numel(t) > MAX_NUMEL) t = tl_sum(t, 1, (int[]){0}, 0);
  }
  return t;
}

/* one graph on a fresh context; returns its failures, or -1 if it was skipped */
static int check_random_graph(uint64_t seed, const char *backend) {
  tl_ctx *ctx = tl_init();
  if (!ctx) return 1;
  tl_set_backend(ctx, backend);
  char name[64];
  snprintf(name, sizeof name, "random graph %llu on %s", (unsigned long long)seed, backend);
  rgraph r = {seed, 0};
  grad_case c = {.name = name, .f = b_random, .arg = &r, .h = FD_H, .tol = FD_TOL, .may_skip = true};
  plan_leaves(seed, &c);
  r.n = c.n;
  int bad = gradcheck(ctx, &c);
  char why[256];
  if (tl_test_leak_check(ctx, why, sizeof why)) {
    tl_test_fail(__FILE__, __LINE__, "%s: leak check: %s", name, why);
    bad = bad < 0 ? 1 : bad + 1;
  }
  tl_shutdown(ctx);
  if (bad > 0) printf("  gradient mismatch on %s: TL_GRAD_SEED=%llu\n", backend, (unsigned long long)seed);
  if (bad < 0 && getenv("TL_GRAD_SEED")) printf("  %s: skipped: too steep for finite differences\n", name);
  fflush(stdout); /* the children end with _exit */
  return bad;
}

/* graphs [0, n) on two processes, one per core; TL_GRAD_SEED=N runs graph N alone.
 * At most 1 in 50 may be skipped as too steep to judge. */
static void check_random_graphs(int n, const char *backend) {
  const char *one = getenv("TL_GRAD_SEED");
  if (one) {
    CHECK(check_random_graph(strtoull(one, NULL, 10), backend) <= 0);
    return;
  }
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    fflush(stdout);
    kids[k] = fork();
    if (kids[k] == 0) {
      int failures = 0, skipped = 0;
      for (int s = k; s < n; s += 2) {
        int r = check_random_graph((uint64_t)s, backend);
        failures += r > 0;
        skipped += r < 0;
      }
      if (skipped * 50 > n / 2) printf("  %d of %d graphs on %s skipped: too steep\n", skipped, n / 2, backend);
      fflush(stdout);
      _exit(failures || skipped * 50 > n / 2 ? 1 : 0);
    }
  }
  for (int k = 0; k < 2; k++) {
    int status = 0;
    CHECK(kids[k] > 0 && waitpid(kids[k], &status, 0) == kids[k]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

/* The interpreter runs the 1,000 graphs in about a second; compiling their kernels
 * would take minutes on a cold cache. The compiled backend gets the first 30. */
TEST(grad_random_graphs) { check_random_graphs(NGRAPHS, "interp"); }
TEST(grad_random_graphs_cpu) { check_random_graphs(NGRAPHS_CPU, "cpu"); }

/* Realizing a value computed from tensors requiring grad computes, in the same go,
 * the values its history saved for backward: backward then reads them instead of
 * running the forward pass again. */
TEST(grad_realizing_the_loss_keeps_what_backward_reads) {
  tl_ctx *ctx = tl_init();
  double xd[8 * 5], wd[5 * 6];
  for (int i = 0; i < 40; i++) xd[i] = (i % 9) - 4;
  for (int i = 0; i < 30; i++) wd[i] = (i % 7) * 0.25 - 0.5;
  tl_tensor *x = tl_from_data(ctx, TL_F64, 2, (int64_t[]){8, 5}, xd);
  tl_tensor *w = tl_from_data(ctx, TL_F64, 2, (int64_t[]){5, 6}, wd);
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_tensor *h = tl_relu(tl_matmul(x, w));
  tl_tensor *loss = tl_sum(h, 0, NULL, 0);
  CHECK(tl_schedule_count(h) > 0); /* nothing computed yet */
  double v = 0;
  CHECK_INT(tl_item(loss, &v), TL_OK);
  CHECK_INT(tl_schedule_count(h), 0); /* relu's output, saved for its rule, is a buffer now */
  double want = 0;
  for (int m = 0; m < 8; m++)
    for (int n = 0; n < 6; n++) {
      double z = 0;
      for (int k = 0; k < 5; k++) z += xd[m * 5 + k] * wd[k * 6 + n];
      want += z > 0 ? z : 0;
    }
  CHECK_NEAR(v, want, 1e-9);
  CHECK_INT(tl_backward(loss, NULL), TL_OK);
  double g[30];
  CHECK_INT(tl_to_host(tl_grad(w), g, sizeof g), TL_OK);
  for (int k = 0; k < 5; k++)
    for (int n = 0; n < 6; n++) { /* d/dw[k,n] = sum over rows with a positive pre-activation of x[m,k] */
      double want_g = 0;
      for (int m = 0; m < 8; m++) {
        double z = 0;
        for (int j = 0; j < 5; j++) z += xd[m * 5 + j] * wd[j * 6 + n];
        if (z > 0) want_g += xd[m * 5 + k];
      }
      CHECK_NEAR(g[k * 6 + n], want_g, 1e-9);
    }
  TEST_SHUTDOWN(ctx);
}

/* h = 1.0001 h + w, 3,000 times: the leaf's gradient sums a contribution per step
 * (more buffers than one kernel reads) and the chain is deeper than a realize slice */
TEST(grad_long_chain) {
  tl_ctx *ctx = tl_init();
  tl_tensor *w = tl_ones(ctx, TL_F64, 1, (int64_t[]){2});
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_tensor *h = w;
  for (int i = 0; i < 3000; i++) h = tl_add(tl_mul_scalar(h, 1.0001), w);
  CHECK_INT(tl_backward(tl_sum(h, 0, NULL, 0), NULL), TL_OK);
  double g[2], want = (pow(1.0001, 3001) - 1) / 0.0001; /* sum of 1.0001^i, i = 0..3000 */
  CHECK_INT(tl_to_host(tl_grad(w), g, sizeof g), TL_OK);
  CHECK_NEAR(g[0], want, 1e-9 * want);
  CHECK_NEAR(g[1], want, 1e-9 * want);
  TEST_SHUTDOWN(ctx);
}

/* the same chain realized every iteration, as a loop-carried value is: each realize
 * computes only what the iteration added (records already computed are not walked
 * again), and the gradient is the same */
TEST(grad_long_chain_realized_each_step) {
  tl_ctx *ctx = tl_init();
  tl_tensor *w = tl_ones(ctx, TL_F64, 1, (int64_t[]){2});
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_tensor *h = w;
  for (int i = 0; i < 3000; i++) {
    h = tl_add(tl_mul_scalar(h, 1.0001), w);
    CHECK_INT(tl_realize(h), TL_OK);
  }
  double v[2], g[2], want = (pow(1.0001, 3001) - 1) / 0.0001;
  CHECK_INT(tl_to_host(h, v, sizeof v), TL_OK);
  CHECK_NEAR(v[0], want, 1e-9 * want); /* h is linear in w = 1: its value is its gradient */
  CHECK_INT(tl_backward(tl_sum(h, 0, NULL, 0), NULL), TL_OK);
  CHECK_INT(tl_to_host(tl_grad(w), g, sizeof g), TL_OK);
  CHECK_NEAR(g[0], want, 1e-9 * want);
  CHECK_NEAR(g[1], want, 1e-9 * want);
  TEST_SHUTDOWN(ctx);
}

/* ---- the layers and the language's tensor methods (issue 12) --------------------------
 * Each one against central differences like the operations above: tl.h's layers and
 * losses directly, and the methods that exist only in the run time of compiled programs
 * (tril, triu, masked_fill, slice, the padded pools: src/lang/rt/rt_io.c, rt_nn.c) through
 * their tlrt_ functions, the very calls a TL program makes. conv2d, max_pool2d and
 * avg_pool2d without padding are checked the same way in test_conv.c. */
typedef struct {
  tlrt *R;
  int64_t a, b, c, d; /* the method's integer arguments */
  double v;
} rt_call;

/* a run state whose run-time errors jump to jb, where RT_GRAD_BEGIN fails the test */
static void rt_begin(tlrt *R, tl_ctx *ctx, jmp_buf *jb) {
  tlrt_init(R, ctx, "grad.tl", NULL);
  R->on_error = jb;
}

#define RT_GRAD_BEGIN(ctx, R)                                                      \
  tl_ctx *ctx = tl_init();                                                         \
  tlrt R##_s, *R = &R##_s;                                                         \
  jmp_buf R##_jb;                                                                  \
  rt_begin(R, ctx, &R##_jb);                                                       \
  if (setjmp(R##_jb)) {                                                            \
    tl_test_fail(__FILE__, __LINE__, "unexpected run-time error: %s", R->error);   \
    tlrt_free_all(R);                                                              \
    tl_shutdown(ctx);                                                              \
    return;                                                                        \
  }
#define RT_GRAD_END(ctx, R) \
  tlrt_free_all(R);         \
  TEST_SHUTDOWN(ctx)

/* embedding: rows picked more than once add up their gradients, rows never picked get 0 */
static tl_tensor *b_embedding(tl_tensor *const *x, const void *arg) {
  const int *kind = arg;
  tl_ctx *ctx = tl_context(x[0]);
  if (*kind == 0) /* [2, 3] i64 indices with repeats; row 4 is never picked */
    return tl_embedding(x[0], tl_from_data(ctx, TL_I64, 2, (int64_t[]){2, 3}, (int64_t[]){3, 0, 1, 1, 3, 2}));
  if (*kind == 1) /* i32 indices, then a nonlinearity */
    return tl_tanh(tl_embedding(x[0], tl_from_data(ctx, TL_I32, 1, (int64_t[]){4}, (int32_t[]){4, 4, 0, 2})));
  if (*kind == 2) return tl_embedding(x[0], tl_scalar(ctx, TL_I64, 1)); /* a 0-d index: one row */
  /* the weight a transposed view ([3,5] -> [5,3]) */
  return tl_embedding(tl_transpose(x[0], 0, 1), tl_from_data(ctx, TL_I64, 1, (int64_t[]){3}, (int64_t[]){4, 1, 4}));
}

TEST(grad_embedding) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "embedding [5,3] by [2,3] i64 indices", b_embedding, (int[]){0}, "5,3", "a");
  check_grad(ctx, "tanh of embedding by i32 indices", b_embedding, (int[]){1}, "5,3", "a");
  check_grad(ctx, "embedding by a 0-d index", b_embedding, (int[]){2}, "5,3", "a");
  check_grad(ctx, "embedding of a transposed weight", b_embedding, (int[]){3}, "3,5", "a");
  TEST_SHUTDOWN(ctx);
}

/* cross_entropy of logits [N, C] with integer class targets; tl.h takes class indices
 * only (no probability targets) */
static tl_tensor *b_cross_entropy(tl_tensor *const *x, const void *arg) {
  const int *kind = arg;
  tl_ctx *ctx = tl_context(x[0]);
  if (*kind == 0)
    return tl_cross_entropy(x[0], tl_from_data(ctx, TL_I64, 1, (int64_t[]){3}, (int64_t[]){2, 0, 3}));
  if (*kind == 1)
    return tl_cross_entropy(x[0], tl_from_data(ctx, TL_I32, 1, (int64_t[]){3}, (int32_t[]){1, 1, 0}));
  if (*kind == 3) /* logits a transposed view */
    return tl_cross_entropy(tl_transpose(x[0], 0, 1),
                            tl_from_data(ctx, TL_I64, 1, (int64_t[]){4}, (int64_t[]){0, 2, 2, 1}));
  /* logits computed from two leaves, as a linear layer's output */
  return tl_cross_entropy(tl_matmul(x[0], x[1]), tl_from_data(ctx, TL_I64, 1, (int64_t[]){2}, (int64_t[]){0, 2}));
}

TEST(grad_cross_entropy) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "cross_entropy [3,4] i64 targets", b_cross_entropy, (int[]){0}, "3,4", "a");
  check_grad(ctx, "cross_entropy [3,2] i32 targets", b_cross_entropy, (int[]){1}, "3,2", "a");
  check_grad(ctx, "cross_entropy of matmul [2,4] x [4,3]", b_cross_entropy, (int[]){2}, "2,4|4,3", "aa");
  check_grad(ctx, "cross_entropy of a transpose", b_cross_entropy, (int[]){3}, "3,4", "a");
  TEST_SHUTDOWN(ctx);
}

/* layer_norm over the last axis, eps 1e-5: with weight and bias, with neither, with one */
static tl_tensor *b_layer_norm(tl_tensor *const *x, const void *arg) {
  const int *kind = arg;
  switch (*kind) {
  case 0: return tl_layer_norm(x[0], x[1], x[2], 1e-5);
  case 1: return tl_layer_norm(x[0], NULL, NULL, 1e-5);
  case 2: return tl_layer_norm(x[0], x[1], NULL, 1e-5);
  case 3: return tl_layer_norm(x[0], NULL, x[1], 1e-5);
  default: return tl_layer_norm(tl_transpose(x[0], 0, 1), x[1], x[2], 0.1); /* a strided input, a large eps */
  }
}

TEST(grad_layer_norm) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "layer_norm [2,3,4] with weight and bias", b_layer_norm, (int[]){0}, "2,3,4|4|4", "aaa");
  check_grad(ctx, "layer_norm [4,5] without weight or bias", b_layer_norm, (int[]){1}, "4,5", "a");
  check_grad(ctx, "layer_norm [3,4] weight only", b_layer_norm, (int[]){2}, "3,4|4", "aa");
  check_grad(ctx, "layer_norm [3,4] bias only", b_layer_norm, (int[]){3}, "3,4|4", "aa");
  check_grad(ctx, "layer_norm [6] (one row)", b_layer_norm, (int[]){0}, "6|6|6", "aaa");
  check_grad(ctx, "layer_norm of a transpose, eps 0.1", b_layer_norm, (int[]){4}, "3,4|3|3", "aaa");
  TEST_SHUTDOWN(ctx);
}

/* tril(k) / triu(k) of the last two axes (a: k, b: upper) */
static tl_tensor *b_tri(tl_tensor *const *x, const void *arg) {
  const rt_call *c = arg;
  return tlrt_tri(c->R, x[0], c->a, c->b, 1, 1);
}

TEST(grad_tril_triu) {
  RT_GRAD_BEGIN(ctx, R)
  static const struct {
    const char *name, *shape;
    int64_t k, upper;
  } cases[] = {
      {"tril(0) [3,4]", "3,4", 0, 0},           {"tril(-1) [3,4]", "3,4", -1, 0},
      {"tril(2) [3,4]", "3,4", 2, 0},           {"tril(-5) [3,4] (all zero)", "3,4", -5, 0},
      {"triu(0) [4,3]", "4,3", 0, 1},           {"triu(1) [4,3]", "4,3", 1, 1},
      {"triu(-2) [4,3]", "4,3", -2, 1},         {"triu(2) [2,3,3] (batched)", "2,3,3", 2, 1},
      {"tril(-1) [2,3,3] (batched)", "2,3,3", -1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_grad(ctx, cases[i].name, b_tri, &(rt_call){.R = R, .a = cases[i].k, .b = cases[i].upper}, cases[i].shape,
               "a");
  RT_GRAD_END(ctx, R);
}

/* masked_fill(mask, v): the filled places get no gradient; the mask broadcasts */
static tl_tensor *b_masked_fill(tl_tensor *const *x, const void *arg) {
  const rt_call *c = arg;
  tl_ctx *ctx = tl_context(x[0]);
  tl_tensor *mask;
  switch (c->a) {
  case 0: mask = tl_from_data(ctx, TL_BOOL, 1, (int64_t[]){4}, (uint8_t[]){1, 0, 0, 1}); break; /* [4] over [3,4] */
  case 1: mask = tl_from_data(ctx, TL_BOOL, 2, (int64_t[]){3, 1}, (uint8_t[]){0, 1, 0}); break;  /* [3,1] */
  case 2: mask = tl_gt(x[0], x[1]); break; /* computed from leaves requiring grad */
  default: /* a float mask: nonzero is true */
    mask = tl_from_data(ctx, TL_F64, 2, (int64_t[]){3, 4}, (double[]){0, 2, 0, 0, -1, 0, 0.5, 0, 0, 0, 0, 3});
  }
  /* exp after the fill: the filled value feeds a nonlinearity and must send nothing back */
  return tl_exp(tl_mul(tlrt_masked_fill(c->R, x[0], mask, c->v, 1, 1), c->a == 2 ? x[1] : x[0]));
}

TEST(grad_masked_fill) {
  RT_GRAD_BEGIN(ctx, R)
  check_grad(ctx, "masked_fill [3,4] by a [4] mask", b_masked_fill, &(rt_call){.R = R, .a = 0, .v = -1.5}, "3,4", "a");
  check_grad(ctx, "masked_fill [3,4] by a [3,1] mask", b_masked_fill, &(rt_call){.R = R, .a = 1, .v = 0}, "3,4", "a");
  check_grad(ctx, "masked_fill by x > y", b_masked_fill, &(rt_call){.R = R, .a = 2, .v = 0.25}, "3,4|4", "aa");
  check_grad(ctx, "masked_fill by a float mask", b_masked_fill, &(rt_call){.R = R, .a = 3, .v = 2}, "3,4", "a");
  RT_GRAD_END(ctx, R);
}

/* slice(dim, start, end, step) (a-d) and slice(start, len) (a, b; d == 0) */
static tl_tensor *b_rt_slice(tl_tensor *const *x, const void *arg) {
  const rt_call *c = arg;
  tl_tensor *s = c->d == 0 ? tlrt_slice_len(c->R, x[0], c->a, c->b, 1, 1)
                           : tlrt_slice(c->R, x[0], c->a, c->b, c->c, c->d, 1, 1);
  return tl_sin(s);
}

TEST(grad_slice_methods) {
  RT_GRAD_BEGIN(ctx, R)
  static const struct {
    const char *name, *shape;
    int64_t a, b, c, d;
  } cases[] = {
      {"slice(0, 1, 6, 2) [7,3]", "7,3", 0, 1, 6, 2},
      {"slice(1, 0, 5, 3) [3,5]", "3,5", 1, 0, 5, 3},
      {"slice(-1, -4, 5, 2) [3,5] (negative dim and start)", "3,5", -1, -4, 5, 2},
      {"slice(0, -3, -1, 1) [5,4] (negative start and end)", "5,4", 0, -3, -1, 1},
      {"slice(1, 2, 3, 5) [2,3,4] (a step past the end)", "2,3,4", 1, 2, 3, 5},
      {"slice(2, 1, 4, 1) [2,3,4]", "2,3,4", 2, 1, 4, 1},
      {"slice(0, 0, 0, 1) [3,2] (empty)", "3,2", 0, 0, 0, 1},
      {"slice(2, 3) [6,2] (start, len)", "6,2", 2, 3, 0, 0},
      {"slice(0, 4) [4,3] (start, len: all)", "4,3", 0, 4, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_grad(ctx, cases[i].name, b_rt_slice,
               &(rt_call){.R = R, .a = cases[i].a, .b = cases[i].b, .c = cases[i].c, .d = cases[i].d}, cases[i].shape,
               "a");
  RT_GRAD_END(ctx, R);
}

/* max_pool2d / avg_pool2d as a program calls them (a: k, b: stride, c: padding, d: max):
 * padding is -inf for max and zeros for avg */
static tl_tensor *b_rt_pool(tl_tensor *const *x, const void *arg) {
  const rt_call *c = arg;
  return tlrt_pool2d(c->R, x[0], c->a, c->b, c->c, c->d, 1, 1);
}

TEST(grad_pool_methods) {
  RT_GRAD_BEGIN(ctx, R)
  static const struct {
    const char *name, *shape;
    int64_t k, stride, pad, is_max;
  } cases[] = {
      {"max_pool2d(2, 2, 1) [1,2,4,4]", "1,2,4,4", 2, 2, 1, 1},
      {"max_pool2d(3, 1, 1) [1,1,4,5]", "1,1,4,5", 3, 1, 1, 1},
      {"max_pool2d(3, 2) [2,1,5,3]", "2,1,5,3", 3, 2, 0, 1},
      {"avg_pool2d(3, 2, 1) [1,2,4,4]", "1,2,4,4", 3, 2, 1, 0},
      {"avg_pool2d(2, 1, 1) [1,1,3,5]", "1,1,3,5", 2, 1, 1, 0},
      {"avg_pool2d(2, 2) [2,1,4,3]", "2,1,4,3", 2, 2, 0, 0},
      {"max_pool2d(2, 3, 1) [1,1,5,5] (stride > k)", "1,1,5,5", 2, 3, 1, 1},
      {"avg_pool2d(1, 2) [1,2,3,4] (k 1)", "1,2,3,4", 1, 2, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_grad(ctx, cases[i].name, b_rt_pool,
               &(rt_call){.R = R, .a = cases[i].k, .b = cases[i].stride, .c = cases[i].pad, .d = cases[i].is_max},
               cases[i].shape, "a");
  RT_GRAD_END(ctx, R);
}

/* conv2d in the harness too: no bias, stride 2 both ways, padding 1; and a bias with the
 * input computed from a leaf (the gradient goes on through the convolution) */
static tl_tensor *b_conv(tl_tensor *const *x, const void *arg) {
  const int *kind = arg;
  if (*kind == 0) return tl_conv2d(x[0], x[1], NULL, 2, 2, 1, 1);
  if (*kind == 1) return tl_conv2d(tl_tanh(x[0]), x[1], x[2], 1, 2, 0, 1);
  return tl_conv2d(x[0], x[1], x[2], 3, 2, 1, 0); /* 1x1 kernel, strides skipping inputs */
}

TEST(grad_conv2d_harness) {
  tl_ctx *ctx = tl_init();
  check_grad(ctx, "conv2d [1,2,3,4] * [2,2,2,3], stride 2, pad 1", b_conv, (int[]){0}, "1,2,3,4|2,2,2,3", "aa");
  check_grad(ctx, "conv2d of tanh, bias, stride 1x2, pad 0x1", b_conv, (int[]){1}, "2,1,4,3|3,1,2,2|3", "aaa");
  check_grad(ctx, "conv2d 1x1 kernel, stride 3x2, pad 1x0", b_conv, (int[]){2}, "1,2,4,4|3,2,1,1|3", "aaa");
  TEST_SHUTDOWN(ctx);
}

/* detach(true) (tlrt_detach_grad): a new leaf requiring grad, holding the values; no
 * gradient flows through it to what it was computed from. detach(false) is tl_detach. */
TEST(grad_detach_requires_grad) {
  RT_GRAD_BEGIN(ctx, R)
  tl_tensor *x = vec64(ctx, 3, (double[]){1, -2, 3}, true);
  tl_tensor *y = tl_mul_scalar(x, 2); /* computed: not a leaf */
  tl_tensor *d = tlrt_detach_grad(R, y, true, 1, 1), *f = tlrt_detach_grad(R, y, false, 1, 1);
  CHECK(tl_requires_grad(d) && !tl_requires_grad(f));
  check_values(d, (double[]){2, -4, 6}, 3, 0);
  check_values(tl_grad(d), (double[]){0, 0, 0}, 3, 0); /* a leaf: its gradient exists */
  /* loss = sum(x * d) + sum(d * d): d/dx = d (constant), d/dd = x + 2 d */
  CHECK_INT(tl_backward(tl_add(tl_sum(tl_mul(x, d), 0, NULL, 0), square_sum(d)), NULL), TL_OK);
  check_values(tl_grad(x), (double[]){2, -4, 6}, 3, 1e-12);
  check_values(tl_grad(d), (double[]){5, -10, 15}, 3, 1e-12);
  /* the detached leaf's own history starts fresh: a second detach(true) of it is another leaf */
  tl_tensor *e = tlrt_detach_grad(R, d, true, 1, 1);
  CHECK_INT(tl_backward(square_sum(e), NULL), TL_OK);
  check_values(tl_grad(e), (double[]){4, -8, 12}, 3, 1e-12);
  check_values(tl_grad(d), (double[]){5, -10, 15}, 3, 1e-12); /* untouched */
  RT_GRAD_END(ctx, R);
}

/* the methods on views (a transpose, a strided slice, a padded input): the gradient must
 * come back through both the method and the view under it */
static tl_tensor *b_rt_on_views(tl_tensor *const *x, const void *arg) {
  const rt_call *c = arg;
  tlrt *R = c->R;
  switch (c->a) {
  case 0: return tlrt_tri(R, tl_transpose(x[0], 0, 1), -1, false, 1, 1);                  /* [5,4]^T: [4,5] */
  case 1: return tlrt_tri(R, tlrt_slice(R, x[0], 1, -3, 4, 2, 1, 1), 0, true, 1, 1);       /* cols 1, 3 */
  case 2: return tlrt_slice(R, tlrt_slice(R, x[0], 0, 1, 5, 2, 1, 1), 1, 0, 4, 3, 1, 1);   /* a slice of a slice */
  case 3: return tlrt_slice(R, tl_transpose(x[0], 0, 1), 0, -3, 4, 2, 1, 1);              /* a slice of a transpose */
  case 4: {
    tl_tensor *t = tl_transpose(x[0], 0, 1);
    return tlrt_masked_fill(R, t, tl_lt(t, tl_scalar(tl_context(t), TL_F64, 0)), 9, 1, 1);
  }
  default: /* a padded, strided input to the padded pool */
    return tlrt_pool2d(R, tl_reshape(tlrt_slice(R, x[0], 0, 0, 5, 2, 1, 1), 4, (int64_t[]){1, 1, 3, 4}), 2, 1, 1,
                       c->b, 1, 1);
  }
}

TEST(grad_methods_on_views) {
  RT_GRAD_BEGIN(ctx, R)
  static const char *names[] = {"tril(-1) of a transpose",
                                "triu(0) of a strided slice",
                                "slice(1, 0, 4, 3) of slice(0, 1, 5, 2)",
                                "slice(0, -3, 4, 2) of a transpose",
                                "masked_fill of a transpose",
                                "max_pool2d(2, 1, 1) of a strided slice",
                                "avg_pool2d(2, 1, 1) of a strided slice"};
  for (int i = 0; i < 7; i++)
    check_grad(ctx, names[i], b_rt_on_views, &(rt_call){.R = R, .a = i < 6 ? i : 5, .b = i == 5}, "5,4", "a");
  RT_GRAD_END(ctx, R);
}
