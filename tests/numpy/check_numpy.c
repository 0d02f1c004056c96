/* check_numpy.c — the differential test's graph generator (tests/test_diff.c, included
 * as is) with every engine call it makes recorded: in: a seed range and backends; out
 * (stdout), per graph, its leaves' values, its ops with their arguments and result
 * dtypes, and each backend's result as f64, for check_numpy.py to recompute with
 * numpy and compare. Built and run by `make check-numpy`. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tl.h"

/* ---- recording ------------------------------------------------------------------ */
static FILE *trace;
static bool tracing;
static const tl_tensor *ids[4096];
static int nids;

static int id_of(const tl_tensor *t) {
  for (int i = nids - 1; i >= 0; i--)
    if (ids[i] == t) return i;
  return -1;
}

/* names the result (pointers may be reused after a release: the newest wins) */
static int new_id(const tl_tensor *t) {
  if (nids == (int)(sizeof ids / sizeof ids[0])) return -1;
  ids[nids] = t;
  return nids++;
}

/* O id op dtype nin ins... nint ints... nflt flts...; a call that failed (a max over
 * an empty axis) as E -1 op - nin ..., for numpy to fail too */
static tl_tensor *rec(tl_tensor *r, const char *op, int nin, tl_tensor *const *in, int nint, const int64_t *ints,
                      int nflt, const double *flt) {
  if (!tracing) return r;
  int id = r ? new_id(r) : -1;
  fprintf(trace, "%s %d %s %s %d", r ? "O" : "E", id, op, r ? tl_dtype_name(tl_get_dtype(r)) : "-", nin);
  for (int i = 0; i < nin; i++) fprintf(trace, " %d", id_of(in[i]));
  fprintf(trace, " %d", nint);
  for (int i = 0; i < nint; i++) fprintf(trace, " %lld", (long long)ints[i]);
  fprintf(trace, " %d", nflt);
  for (int i = 0; i < nflt; i++) fprintf(trace, " %.17g", flt[i]);
  fputc('\n', trace);
  return r;
}

static tl_tensor *r_from_data(tl_ctx *ctx, tl_dtype dt, int ndim, const int64_t *shape, const void *data) {
  tl_tensor *r = tl_from_data(ctx, dt, ndim, shape, data);
  if (!tracing || !r) return r;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  fprintf(trace, "L %d %s %d", new_id(r), tl_dtype_name(dt), ndim);
  for (int i = 0; i < ndim; i++) fprintf(trace, " %lld", (long long)shape[i]);
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
    case TL_F32: fprintf(trace, " %.9g", (double)((const float *)data)[i]); break;
    case TL_F64: fprintf(trace, " %.17g", ((const double *)data)[i]); break;
    case TL_I32: fprintf(trace, " %d", ((const int32_t *)data)[i]); break;
    case TL_I64: fprintf(trace, " %lld", (long long)((const int64_t *)data)[i]); break;
    default: fprintf(trace, " %d", ((const unsigned char *)data)[i]); break;
    }
  }
  fputc('\n', trace);
  return r;
}

#define UNARY(name)                                                             \
  static tl_tensor *r_##name(tl_tensor *a) { return rec(tl_##name(a), #name, 1, &a, 0, NULL, 0, NULL); }
UNARY(neg)
UNARY(exp)
UNARY(log)
UNARY(log1p)
UNARY(sqrt)
UNARY(sin)
UNARY(cos)
UNARY(tanh)
UNARY(sigmoid)
UNARY(relu)
UNARY(gelu)
UNARY(gelu_tanh)
UNARY(abs)
#define BINARY(name)                                                            \
  static tl_tensor *r_##name(tl_tensor *a, tl_tensor *b) {                      \
    tl_tensor *in[2] = {a, b};                                                  \
    return rec(tl_##name(a, b), #name, 2, in, 0, NULL, 0, NULL);                \
  }
BINARY(add)
BINARY(sub)
BINARY(mul)
BINARY(div)
BINARY(maximum)
BINARY(minimum)
BINARY(lt)
BINARY(ge)
BINARY(matmul)

static tl_tensor *r_add_scalar(tl_tensor *a, double s) { return rec(tl_add_scalar(a, s), "add_scalar", 1, &a, 0, NULL, 1, &s); }
static tl_tensor *r_mul_scalar(tl_tensor *a, double s) { return rec(tl_mul_scalar(a, s), "mul_scalar", 1, &a, 0, NULL, 1, &s); }
/* a 0-d tensor: a leaf */
static tl_tensor *r_scalar(tl_ctx *ctx, tl_dtype dt, double v) {
  tl_tensor *r = tl_scalar(ctx, dt, v);
  if (tracing && r) fprintf(trace, dt == TL_F32 || dt == TL_F64 ? "L %d %s 0 %.17g\n" : "L %d %s 0 %.0f\n", new_id(r),
                            tl_dtype_name(dt), v);
  return r;
}
static tl_tensor *r_where(tl_tensor *c, tl_tensor *a, tl_tensor *b) {
  tl_tensor *in[3] = {c, a, b};
  return rec(tl_where(c, a, b), "where", 3, in, 0, NULL, 0, NULL);
}
static tl_tensor *r_cast(tl_tensor *a, tl_dtype d) { return rec(tl_cast(a, d), "cast", 1, &a, 0, NULL, 0, NULL); }

/* reductions: ints = keepdim, whether axes were given (else all), then the axes */
static tl_tensor *reduce_rec(tl_tensor *r, const char *op, tl_tensor *a, int naxes, const int *axes, int keepdim) {
  int64_t v[10] = {keepdim, axes != NULL};
  for (int i = 0; axes && i < naxes && i < 8; i++) v[2 + i] = axes[i];
  return rec(r, op, 1, &a, axes ? 2 + naxes : 2, v, 0, NULL);
}
#define REDUCE(name)                                                                \
  static tl_tensor *r_##name(tl_tensor *a, int naxes, const int *axes, int keepdim) { \
    return reduce_rec(tl_##name(a, naxes, axes, keepdim), #name, a, naxes, axes, keepdim); \
  }
REDUCE(sum)
REDUCE(max)
REDUCE(min)
REDUCE(mean)
static tl_tensor *r_argmax(tl_tensor *a, int axis, int keepdim) {
  int64_t v[2] = {axis, keepdim};
  return rec(tl_argmax(a, axis, keepdim), "argmax", 1, &a, 2, v, 0, NULL);
}
static tl_tensor *r_argmin(tl_tensor *a, int axis, int keepdim) {
  int64_t v[2] = {axis, keepdim};
  return rec(tl_argmin(a, axis, keepdim), "argmin", 1, &a, 2, v, 0, NULL);
}
static tl_tensor *r_softmax(tl_tensor *a, int axis) {
  int64_t v = axis;
  return rec(tl_softmax(a, axis), "softmax", 1, &a, 1, &v, 0, NULL);
}
static tl_tensor *r_log_softmax(tl_tensor *a, int axis) {
  int64_t v = axis;
  return rec(tl_log_softmax(a, axis), "log_softmax", 1, &a, 1, &v, 0, NULL);
}

/* movement: ints are the call's integer arguments in order */
static tl_tensor *r_reshape(tl_tensor *a, int nd, const int64_t *s) { return rec(tl_reshape(a, nd, s), "reshape", 1, &a, nd, s, 0, NULL); }
static tl_tensor *r_expand(tl_tensor *a, int nd, const int64_t *s) { return rec(tl_expand(a, nd, s), "expand", 1, &a, nd, s, 0, NULL); }
static tl_tensor *r_permute(tl_tensor *a, const int *p) {
  int64_t v[TL_MAX_DIMS];
  int nd = tl_ndim(a);
  for (int i = 0; i < nd; i++) v[i] = p[i];
  return rec(tl_permute(a, p), "permute", 1, &a, nd, v, 0, NULL);
}
static tl_tensor *r_shrink(tl_tensor *a, const int64_t *b, const int64_t *e) {
  int64_t v[2 * TL_MAX_DIMS];
  int nd = tl_ndim(a);
  for (int i = 0; i < nd; i++) v[i] = b[i], v[nd + i] = e[i];
  return rec(tl_shrink(a, b, e), "shrink", 1, &a, 2 * nd, v, 0, NULL);
}
static tl_tensor *r_pad(tl_tensor *a, const int64_t *b, const int64_t *e, double value) {
  int64_t v[2 * TL_MAX_DIMS];
  int nd = tl_ndim(a);
  for (int i = 0; i < nd; i++) v[i] = b[i], v[nd + i] = e[i];
  return rec(tl_pad(a, b, e, value), "pad", 1, &a, 2 * nd, v, 1, &value);
}
static tl_tensor *r_flip(tl_tensor *a, int n, const int *axes) {
  int64_t v[8];
  for (int i = 0; i < n; i++) v[i] = axes[i];
  return rec(tl_flip(a, n, axes), "flip", 1, &a, n, v, 0, NULL);
}
static tl_tensor *r_unsqueeze(tl_tensor *a, int axis) {
  int64_t v = axis;
  return rec(tl_unsqueeze(a, axis), "unsqueeze", 1, &a, 1, &v, 0, NULL);
}
static tl_tensor *r_slice(tl_tensor *a, int axis, int64_t start, int64_t stop, int64_t step) {
  int64_t v[4] = {axis, start, stop, step};
  return rec(tl_slice(a, axis, start, stop, step), "slice", 1, &a, 4, v, 0, NULL);
}
static tl_tensor *r_cat(int n, tl_tensor *const *ts, int axis) {
  int64_t v = axis;
  return rec(tl_cat(n, ts, axis), "cat", n, ts, 1, &v, 0, NULL);
}
static tl_tensor *r_stack(int n, tl_tensor *const *ts, int axis) {
  int64_t v = axis;
  return rec(tl_stack(n, ts, axis), "stack", n, ts, 1, &v, 0, NULL);
}

/* ---- the generator, every call above recorded -------------------------------------- */
#define tl_from_data r_from_data
#define tl_neg r_neg
#define tl_exp r_exp
#define tl_log r_log
#define tl_log1p r_log1p
#define tl_sqrt r_sqrt
#define tl_sin r_sin
#define tl_cos r_cos
#define tl_tanh r_tanh
#define tl_sigmoid r_sigmoid
#define tl_relu r_relu
#define tl_gelu r_gelu
#define tl_gelu_tanh r_gelu_tanh
#define tl_abs r_abs
#define tl_add r_add
#define tl_sub r_sub
#define tl_mul r_mul
#define tl_div r_div
#define tl_maximum r_maximum
#define tl_minimum r_minimum
#define tl_lt r_lt
#define tl_ge r_ge
#define tl_matmul r_matmul
#define tl_add_scalar r_add_scalar
#define tl_mul_scalar r_mul_scalar
#define tl_scalar r_scalar
#define tl_where r_where
#define tl_cast r_cast
#define tl_sum r_sum
#define tl_max r_max
#define tl_min r_min
#define tl_mean r_mean
#define tl_argmax r_argmax
#define tl_argmin r_argmin
#define tl_softmax r_softmax
#define tl_log_softmax r_log_softmax
#define tl_reshape r_reshape
#define tl_expand r_expand
#define tl_permute r_permute
#define tl_shrink r_shrink
#define tl_pad r_pad
#define tl_flip r_flip
#define tl_unsqueeze r_unsqueeze
#define tl_slice r_slice
#define tl_cat r_cat
#define tl_stack r_stack
#include "../test_diff.c"

/* the test harness the included file registers with: nothing runs its tests here */
void tl_test_register(const char *name, tl_test_fn fn, const char *file) { (void)name, (void)fn, (void)file; }
void tl_test_fail(const char *file, int line, const char *fmt, ...) { (void)file, (void)line, (void)fmt; }
int tl_test_leak_check(tl_ctx *ctx, char *why, size_t whylen) { (void)ctx, (void)why, (void)whylen; return 0; }

/* builds graph `seed` on backend, recording it when record; prints R lines */
static void one(uint64_t seed, int mode, const char *backend, const char *cc, bool record) {
  gen g = {seed * 0x2545F4914F6CDD1Dull + 1, tl_init(), {0}, 0, false, mode == CASTS, false, false};
  tl_set_backend(g.ctx, backend);
  if (cc) tl_set_compiler(g.ctx, cc);
  tl_manual_seed(g.ctx, seed);
  if (record) nids = 0;
  tracing = record;
  tl_tensor *t = build_graph(&g, mode);
  tracing = false;
  tl_tensor *w = t ? keep(&g, tl_cast(t, TL_F64)) : NULL;
  int64_t n = w ? tl_numel(w) : 0;
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  if (!w || tl_to_host(w, v, sizeof(double) * (size_t)n)) {
    fprintf(trace, "X %s %s\n", backend, tl_last_error(g.ctx));
  } else {
    tl_dtype dt = g.used_f32 && tl_get_dtype(t) == TL_F64 ? TL_F32 : tl_get_dtype(t);
    fprintf(trace, "R %d %s %s %lld", id_of(t), backend, tl_dtype_name(dt), (long long)n);
    for (int64_t i = 0; i < n; i++) fprintf(trace, " %.17g", v[i]);
    fputc('\n', trace);
  }
  free(v);
  for (int i = 0; getenv("CHECK_NUMPY_DUMP") && i < nids; i++) { /* every recorded value */
    tl_tensor *t = NULL;
    for (int k = 0; k < g.n && !t; k++) t = g.pool[k] == ids[i] ? g.pool[k] : NULL;
    char *txt = t ? tl_format(t) : NULL;
    fprintf(stderr, "%s %d: %s\n", backend, i, txt ? txt : "(released)");
    tl_free(txt);
  }
  for (int i = 0; i < g.n; i++) tl_release(g.pool[i]);
  tl_shutdown(g.ctx);
}

/* check_numpy FROM TO [plain|casts|special] [cc]: graphs [FROM, TO) on interp and cpu, whose
 * kernels cc compiles ("tcc": libtcc; default $CHECK_NUMPY_CC, else tcc) */
int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FROM TO [plain|casts|special] [cc]\n", argv[0]);
    return 2;
  }
  uint64_t from = strtoull(argv[1], NULL, 10), to = strtoull(argv[2], NULL, 10);
  int mode = argc > 3 && !strcmp(argv[3], "casts") ? CASTS : argc > 3 && !strcmp(argv[3], "special") ? SPECIAL : PLAIN;
  const char *cc = argc > 4 ? argv[4] : getenv("CHECK_NUMPY_CC");
  if (!cc || !*cc) cc = "tcc";
  trace = stdout;
  for (uint64_t s = from; s < to; s++) {
    fprintf(trace, "G %llu %s\n", (unsigned long long)s, mode == CASTS ? "casts" : mode == SPECIAL ? "special" : "plain");
    one(s, mode, "interp", NULL, true);
    one(s, mode, "cpu", cc, false);
    fflush(trace);
  }
  return 0;
}
