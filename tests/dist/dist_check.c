/* dist_check.c — the C API's distributed cases, run under mpirun by tests/dist/run.sh
 * (make test-dist): `dist_check CASE [OUT]`. Each case checks its values against sums
 * worked out here from the formula every rank used (independently of MPI and of TL),
 * prints "ok CASE" on rank 0 and exits 0, or prints what differs and exits 1.
 *   collectives  all_reduce, all_reduce_mean, broadcast (root N-1), every dtype, rank 0-4
 *   shard        lengths 0..9 over N ranks: every row on exactly one rank, in order
 *   mlp OUT      data-parallel MLP training (SGD, momentum, sync in the optimizer);
 *                rank 0 writes the weights to OUT (mlp_ref.py compares with numpy)
 *   grads        sync_grads of f32 and f64 parameters, 0-d, without a gradient
 *   cnn OUT      the same for a small CNN (conv 3x3 with bias, ReLU, linear); cnn_ref.py
 *   linreg       uneven shards of a consistent problem converge to the exact answer
 *   mismatch     shape, dtype, root and call mismatches: an error on every rank
 *   abort        the last rank fails (tl_dist_abort) while the others wait
 *   kill         the last rank dies of SIGKILL while the others wait
 *   exit_early   the last rank ends while the others wait in a barrier
 *   nccl WANT    the way payloads go (src/dist/dist_device.c): host and opencl tensors
 *                stage through host memory without loading NCCL, a cuda tensor's choice
 *                is WANT ("yes", "off": TL_DIST_NCCL=0, "absent": no libnccl.so.2), the
 *                NCCL choice of the ranks is agreed (every rank, or all stage), and a
 *                communicator that cannot be made (no GPU) fails on every rank and
 *                turns NCCL off
 * DIST_CHECK_WAY=nccl (or staged) also checks that every payload went that way. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"
#include "dist/dist_internal.h"
#include "tl.h"

static int R, N, failures;

#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      fprintf(stderr, "rank %d: FAIL %s:%d: ", R, __FILE__, __LINE__);                                                 \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* the value rank r holds at element i */
static double val(tl_dtype dt, int r, int64_t i) {
  if (dt == TL_BOOL) return (i + r) % 3 == 0;
  if (dt == TL_I32 || dt == TL_I64) return (double)(i * 7 - r * 3 + 1);
  return 0.25 * (double)i - 1.5 * r + 0.125;
}

static tl_tensor *make(tl_ctx *ctx, tl_dtype dt, int ndim, const int64_t *shape, int r) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  char *buf = calloc((size_t)n + 1, 8);
  for (int64_t i = 0; i < n; i++) {
    double v = val(dt, r, i);
    switch (dt) {
    case TL_BOOL: ((unsigned char *)buf)[i] = v != 0; break;
    case TL_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case TL_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case TL_F32: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = v; break;
    }
  }
  tl_tensor *t = tl_from_data(ctx, dt, ndim, shape, buf);
  free(buf);
  return t;
}

static double at(tl_tensor *t, int64_t i) {
  const void *p = tl_data(t);
  switch (tl_get_dtype(t)) {
  case TL_BOOL: return ((const unsigned char *)p)[i];
  case TL_I32: return ((const int32_t *)p)[i];
  case TL_I64: return (double)((const int64_t *)p)[i];
  case TL_F32: return ((const float *)p)[i];
  default: return ((const double *)p)[i];
  }
}

/* i8 i16 u8 u16 u32 u64 f16 bf16: broadcast copies the root's bytes; all_reduce and its
 * mean are an error naming the dtype, the same on every rank (no MPI type map yet) */
static void check_other_dtypes(tl_ctx *ctx) {
  static const int64_t shape[2] = {2, 3};
  for (int dt = (int)TL_F64 + 1; dt < (int)TL_NDTYPES; dt++) {
    const char *name = tl_dtype_name((tl_dtype)dt);
    tl_tensor *f = make(ctx, TL_F64, 2, shape, R), *t = tl_cast(f, (tl_dtype)dt);
    tl_tensor *rf = make(ctx, TL_F64, 2, shape, N - 1), *root = tl_cast(rf, (tl_dtype)dt);
    tl_tensor *b = tl_dist_broadcast(t, N - 1);
    CHECK(b && (int)tl_get_dtype(b) == dt && tl_numel(b) == 6, "%s broadcast: %s", name, tl_last_error(ctx));
    if (b) CHECK(!memcmp(tl_data(b), tl_data(root), 6 * tl_dtype_size((tl_dtype)dt)), "%s broadcast: not the root's bytes", name);
    char want[160];
    snprintf(want, sizeof want, "tl_dist_all_reduce: %s tensors are not reduced across ranks yet", name);
    tl_tensor *s = tl_dist_all_reduce(t);
    CHECK(!s && strstr(tl_last_error(ctx), want), "%s all_reduce: %s", name, s ? "no error" : tl_last_error(ctx));
    tl_tensor *m = tl_dist_all_reduce_mean(t);
    CHECK(!m && strstr(tl_last_error(ctx), "needs a float tensor"), "%s all_reduce_mean: %s", name, m ? "no error" : tl_last_error(ctx));
    tl_release(f), tl_release(t), tl_release(rf), tl_release(root), tl_release(b), tl_release(s), tl_release(m);
  }
}

static void check_collectives(tl_ctx *ctx) {
  static const int64_t shapes[5][4] = {{0}, {5}, {2, 3}, {2, 1, 3}, {1, 2, 2, 2}};
  for (int dt = 0; dt <= (int)TL_F64; dt++) /* the five MPI reduces; the others after */
    for (int nd = 0; nd <= 4; nd++) {
      tl_tensor *t = make(ctx, (tl_dtype)dt, nd, shapes[nd], R);
      tl_tensor *s = tl_dist_all_reduce(t), *b = tl_dist_broadcast(t, N - 1);
      tl_tensor *m = dt >= TL_F32 ? tl_dist_all_reduce_mean(t) : NULL;
      CHECK(s && b && (dt < TL_F32 || m), "%s rank %d: %s", tl_dtype_name((tl_dtype)dt), nd, tl_last_error(ctx));
      if (!s || !b) continue;
      CHECK(tl_ndim(s) == nd && tl_numel(s) == tl_numel(t) && (int)tl_get_dtype(s) == dt, "result shape");
      for (int64_t i = 0; i < tl_numel(t); i++) {
        double sum = 0;
        for (int r = 0; r < N; r++) sum = dt == TL_BOOL ? (sum || val((tl_dtype)dt, r, i)) : sum + val((tl_dtype)dt, r, i);
        CHECK(fabs(at(s, i) - sum) <= 1e-6 * (1 + fabs(sum)), "%s rank %d all_reduce [%lld]: %g, not %g",
              tl_dtype_name((tl_dtype)dt), nd, (long long)i, at(s, i), sum);
        CHECK(at(b, i) == (dt == TL_F32 ? (double)(float)val((tl_dtype)dt, N - 1, i) : val((tl_dtype)dt, N - 1, i)),
              "%s rank %d broadcast [%lld]", tl_dtype_name((tl_dtype)dt), nd, (long long)i);
        if (m) CHECK(fabs(at(m, i) - sum / N) <= 1e-6 * (1 + fabs(sum)), "mean [%lld]", (long long)i);
      }
      tl_release(t);
      tl_release(s);
      tl_release(b);
      if (m) tl_release(m);
    }
  check_other_dtypes(ctx);
  /* a lazy view goes in as its values */
  int64_t shp[2] = {3, 4};
  tl_tensor *t = make(ctx, TL_F32, 2, shp, R), *v = tl_transpose(t, 0, 1), *s = tl_dist_all_reduce(v);
  CHECK(s && tl_dim(s, 0) == 4, "transposed");
  for (int i = 0; s && i < 4; i++)
    for (int j = 0; j < 3; j++) {
      double sum = 0;
      for (int r = 0; r < N; r++) sum += val(TL_F32, r, j * 4 + i);
      CHECK(fabs(at(s, i * 3 + j) - sum) < 1e-5, "transposed [%d, %d]", i, j);
    }
  CHECK(tl_dist_barrier() == TL_OK, "barrier: %s", tl_last_error(NULL));
  tl_release(s);
  tl_release(v);
  tl_release(t);
}

static void check_shard(tl_ctx *ctx) {
  for (int64_t n = 0; n <= 9; n++) {
    tl_tensor *x = tl_arange(ctx, TL_I64, 0, (double)n, 1), *p = tl_dist_shard(x);
    CHECK(p != NULL, "shard %lld: %s", (long long)n, tl_last_error(ctx));
    if (!p) continue;
    int64_t lo = (int64_t)R * n / N, hi = (int64_t)(R + 1) * n / N;
    CHECK(tl_dim(p, 0) == hi - lo, "shard of %lld: %lld rows, not %lld", (long long)n, (long long)tl_dim(p, 0),
          (long long)(hi - lo));
    for (int64_t i = 0; i < tl_dim(p, 0) && i < hi - lo; i++) CHECK(at(p, i) == lo + i, "shard row");
    /* every row once: the rows' counts summed over the ranks are all 1 */
    tl_tensor *cnt = tl_zeros(ctx, TL_I64, 1, &n);
    tl_tensor *one = tl_ones(ctx, TL_I64, 1, (int64_t[]){hi - lo});
    tl_tensor *mine = tl_pad(one, (int64_t[]){lo}, (int64_t[]){n - hi}, 0), *all = tl_dist_all_reduce(mine);
    for (int64_t i = 0; all && i < n; i++) CHECK(at(all, i) == 1, "row %lld on %g ranks", (long long)i, at(all, i));
    tl_release(x), tl_release(p), tl_release(cnt), tl_release(one), tl_release(mine), tl_release(all);
  }
}

/* the MLP: X [12, 4], Y [12, 2], tanh hidden layer of 8; the same numbers as mlp_ref.py */
enum { B = 12, IN = 4, HID = 8, OUTN = 2, STEPS = 15 };
static tl_tensor *fill(tl_ctx *ctx, int rows, int cols, double (*f)(int, int), int grad) {
  float *v = malloc(sizeof(float) * (size_t)(rows * cols));
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) v[i * cols + j] = (float)f(i, j);
  tl_tensor *t = tl_from_data(ctx, TL_F32, 2, (int64_t[]){rows, cols}, v);
  free(v);
  if (grad) tl_set_requires_grad(t, 1);
  return t;
}
static double fx(int i, int j) { return sin(0.7 * i + 1.3 * j); }
static double fy(int i, int k) { return cos(0.5 * i - 0.9 * k); }
static double fw1(int j, int h) { return 0.3 * sin(1.1 * j + 0.37 * h + 0.5); }
static double fb1(int i, int h) { return 0.01 * h + 0 * i; }
static double fw2(int h, int k) { return 0.25 * cos(0.6 * h - 1.7 * k); }
static double fb2(int i, int k) { return 0.0 * i * k; }

static void check_mlp(tl_ctx *ctx, const char *out) {
  tl_tensor *X = fill(ctx, B, IN, fx, 0), *Y = fill(ctx, B, OUTN, fy, 0);
  tl_tensor *p[4] = {fill(ctx, IN, HID, fw1, 1), fill(ctx, 1, HID, fb1, 1), fill(ctx, HID, OUTN, fw2, 1),
                     fill(ctx, 1, OUTN, fb2, 1)};
  tl_tensor *xs = tl_dist_shard(X), *ys = tl_dist_shard(Y);
  tl_optimizer *opt = tl_sgd(4, p, 0.1, 0.9, 0.0);
  CHECK(tl_optimizer_set_dist_sync(opt, 1) == TL_OK, "set_dist_sync");
  for (int s = 0; s < STEPS; s++) {
    tl_scope *sc = tl_scope_begin(ctx, "step");
    tl_tensor *h = tl_tanh(tl_add(tl_matmul(xs, p[0]), p[1]));
    tl_tensor *loss = tl_mse_loss(tl_add(tl_matmul(h, p[2]), p[3]), ys);
    CHECK(tl_backward(loss, NULL) == TL_OK, "backward: %s", tl_last_error(ctx));
    CHECK(tl_optimizer_step(opt) == TL_OK, "step: %s", tl_last_error(ctx));
    tl_optimizer_zero_grad(opt);
    tl_scope_end(sc);
  }
  if (R == 0) {
    FILE *f = fopen(out, "w");
    for (int k = 0; f && k < 4; k++) {
      for (int64_t i = 0; i < tl_numel(p[k]); i++) fprintf(f, "%.9g ", at(p[k], i));
      fputc('\n', f);
    }
    if (f) fclose(f);
    CHECK(f != NULL, "cannot write %s", out);
  }
  /* every rank holds the same weights */
  for (int k = 0; k < 4; k++) {
    tl_tensor *b = tl_dist_broadcast(p[k], 0);
    for (int64_t i = 0; i < tl_numel(p[k]); i++) CHECK(at(b, i) == at(p[k], i), "rank %d's weights differ", R);
    tl_release(b);
  }
  tl_optimizer_free(opt);
  for (int k = 0; k < 4; k++) tl_release(p[k]);
  tl_release(X), tl_release(Y), tl_release(xs), tl_release(ys);
}

/* the CNN: x [12, 1, 5, 5], conv w [2, 1, 3, 3] + cb [2] padded 1, ReLU, flattened to
 * [12, 50], linear W [50, 2] + b; the same numbers as cnn_ref.py */
static tl_tensor *flat(tl_ctx *ctx, int ndim, const int64_t *shape, double (*f)(int64_t), int grad) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *v = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (float)f(i);
  tl_tensor *t = tl_from_data(ctx, TL_F32, ndim, shape, v);
  free(v);
  if (grad) tl_set_requires_grad(t, 1);
  return t;
}
static double cx(int64_t i) { return sin(0.37 * (double)i + 0.1); }
static double cy(int64_t i) { return cos(0.7 * (double)(i / 2) - 1.1 * (double)(i % 2)); }
static double cw(int64_t i) { return 0.2 * cos(0.9 * (double)i); }
static double ccb(int64_t i) { return 0.05 * (double)i; }
static double cW(int64_t i) { return 0.1 * sin(0.23 * (double)(i / 2) + 0.5 * (double)(i % 2)); }
static double czero(int64_t i) { return 0 * (double)i; }

static void check_cnn(tl_ctx *ctx, const char *out) {
  tl_tensor *X = flat(ctx, 4, (int64_t[]){12, 1, 5, 5}, cx, 0), *Y = flat(ctx, 2, (int64_t[]){12, 2}, cy, 0);
  tl_tensor *p[4] = {flat(ctx, 4, (int64_t[]){2, 1, 3, 3}, cw, 1), flat(ctx, 1, (int64_t[]){2}, ccb, 1),
                     flat(ctx, 2, (int64_t[]){50, 2}, cW, 1), flat(ctx, 2, (int64_t[]){1, 2}, czero, 1)};
  tl_tensor *xs = tl_dist_shard(X), *ys = tl_dist_shard(Y);
  int64_t rows = tl_dim(xs, 0);
  tl_optimizer *opt = tl_sgd(4, p, 0.05, 0.9, 0.0);
  tl_optimizer_set_dist_sync(opt, 1);
  for (int s = 0; s < 8; s++) {
    tl_scope *sc = tl_scope_begin(ctx, "step");
    tl_tensor *h = tl_relu(tl_conv2d(xs, p[0], p[1], 1, 1, 1, 1));
    tl_tensor *o = tl_add(tl_matmul(tl_reshape(h, 2, (int64_t[]){rows, 50}), p[2]), p[3]);
    CHECK(tl_backward(tl_mse_loss(o, ys), NULL) == TL_OK, "backward: %s", tl_last_error(ctx));
    CHECK(tl_optimizer_step(opt) == TL_OK, "step: %s", tl_last_error(ctx));
    tl_optimizer_zero_grad(opt);
    tl_scope_end(sc);
  }
  FILE *f = R == 0 ? fopen(out, "w") : NULL;
  for (int k = 0; f && k < 4; k++) {
    for (int64_t i = 0; i < tl_numel(p[k]); i++) fprintf(f, "%.9g ", at(p[k], i));
    fputc('\n', f);
  }
  if (f) fclose(f);
  CHECK(R != 0 || f, "cannot write %s", out);
  tl_optimizer_free(opt);
  for (int k = 0; k < 4; k++) tl_release(p[k]);
  tl_release(X), tl_release(Y), tl_release(xs), tl_release(ys);
}

/* y = 2 x0 - 3 x1 + 0.5 exactly, on 10 rows: any weighting of the shards has that
 * minimum, so uneven shards (10 over 3 or 4 ranks) converge to it too */
static double lx(int i, int j) { return j == 0 ? 0.3 * i - 1.2 : cos(1.7 * i); }
static void check_linreg(tl_ctx *ctx) {
  float yv[10];
  for (int i = 0; i < 10; i++) yv[i] = (float)(2 * lx(i, 0) - 3 * lx(i, 1) + 0.5);
  tl_tensor *X = fill(ctx, 10, 2, lx, 0), *Y = tl_from_data(ctx, TL_F32, 2, (int64_t[]){10, 1}, yv);
  tl_tensor *w = tl_zeros(ctx, TL_F32, 2, (int64_t[]){2, 1}), *b = tl_zeros(ctx, TL_F32, 1, (int64_t[]){1});
  tl_set_requires_grad(w, 1), tl_set_requires_grad(b, 1);
  tl_tensor *p[2] = {w, b}, *xs = tl_dist_shard(X), *ys = tl_dist_shard(Y);
  tl_optimizer *opt = tl_sgd(2, p, 0.2, 0.5, 0.0);
  tl_optimizer_set_dist_sync(opt, 1);
  for (int s = 0; s < 400; s++) {
    tl_scope *sc = tl_scope_begin(ctx, "step");
    tl_backward(tl_mse_loss(tl_add(tl_matmul(xs, w), b), ys), NULL);
    tl_optimizer_step(opt);
    tl_optimizer_zero_grad(opt);
    tl_scope_end(sc);
  }
  CHECK(fabs(at(w, 0) - 2) < 1e-3 && fabs(at(w, 1) + 3) < 1e-3 && fabs(at(b, 0) - 0.5) < 1e-3,
        "uneven shards: w = (%g, %g), b = %g, not (2, -3), 0.5", at(w, 0), at(w, 1), at(b, 0));
  tl_optimizer_free(opt);
  tl_release(X), tl_release(Y), tl_release(w), tl_release(b), tl_release(xs), tl_release(ys);
}

/* gradients whose mean over the ranks is known: d/dp sum(p * c_r) = c_r */
static void check_grads(tl_ctx *ctx) {
  /* with 72-byte buckets (run.sh): [10] and [10] fill one and start its all-reduce, the
   * [5, 7] and [13] go direct while it is in flight, the rest share buckets */
  enum { NP = 7, NOGRAD = NP - 1 };
  static const int64_t shapes[NP][2] = {{10}, {13}, {10}, {5, 7}, {3, 2}, {0}, {4}};
  static const int nd[NP] = {1, 1, 1, 2, 2, 0, 1};
  static const tl_dtype dts[NP] = {TL_F32, TL_F64, TL_F32, TL_F32, TL_F64, TL_F32, TL_F32};
  tl_tensor *p[NP], *loss = NULL;
  for (int k = 0; k < NP; k++) {
    p[k] = tl_ones(ctx, dts[k], nd[k], shapes[k]);
    tl_tensor *d = tl_detach(p[k]);
    tl_release(p[k]);
    p[k] = d;
    tl_set_requires_grad(p[k], 1);
    if (k == NOGRAD) continue; /* no gradient: zeros, averaged to zeros */
    tl_tensor *c = make(ctx, dts[k], nd[k], shapes[k], R), *term = tl_cast(tl_sum(tl_mul(p[k], c), 0, NULL, 0), TL_F64);
    loss = loss ? tl_add(loss, term) : term;
  }
  CHECK(tl_backward(loss, NULL) == TL_OK, "backward: %s", tl_last_error(ctx));
  CHECK(tl_dist_sync_grads(NP, p) == TL_OK, "sync_grads: %s", tl_last_error(NULL));
  for (int k = 0; k < NP; k++) {
    tl_tensor *g = tl_grad(p[k]);
    for (int64_t i = 0; i < tl_numel(g); i++) {
      double want = 0;
      for (int r = 0; r < N && k != NOGRAD; r++) want += val(dts[k], r, i) / N;
      CHECK(fabs(at(g, i) - want) < 1e-6, "grad %d [%lld]: %g, not %g", k, (long long)i, at(g, i), want);
    }
    tl_release(g);
    tl_release(p[k]);
  }
}

/* each mismatch fails on every rank, naming the call; rank 0 prints the messages */
static void expect_error(tl_ctx *ctx, tl_tensor *got, const char *want) {
  const char *msg = tl_last_error(ctx);
  CHECK(!got && strstr(msg, want), "expected an error with \"%s\", got %s", want, got ? "a tensor" : msg);
  if (R == 0 && !got) printf("%s\n", msg);
  if (got) tl_release(got);
}
static void check_mismatch(tl_ctx *ctx) {
  int64_t a[2] = {2, 3 + (R == N - 1)};
  tl_tensor *t = tl_ones(ctx, TL_F32, 2, a);
  expect_error(ctx, tl_dist_all_reduce(t), "tl_dist_all_reduce: the tensors' shapes differ across ranks");
  tl_tensor *u = tl_ones(ctx, R == N - 1 ? TL_F64 : TL_F32, 1, a);
  expect_error(ctx, tl_dist_broadcast(u, 0), "tl_dist_broadcast: the tensors' dtypes differ across ranks");
  tl_tensor *v = tl_ones(ctx, TL_I32, 1, a);
  expect_error(ctx, tl_dist_broadcast(v, R == N - 1), "tl_dist_broadcast: the root differs across ranks");
  tl_release(v);
  /* one rank in a barrier, the others in an all-reduce */
  if (R == N - 1) {
    tl_status st = tl_dist_barrier();
    CHECK(st != TL_OK && strstr(tl_last_error(NULL), "not in the same collective call"), "barrier: %s",
          tl_last_error(NULL));
  } else {
    expect_error(ctx, tl_dist_all_reduce(u), "tl_dist_all_reduce: the ranks are not in the same collective call");
  }
  /* agreement restored: the next call works */
  tl_tensor *ok = tl_dist_all_reduce(u);
  if (ok) tl_release(ok);
  tl_release(t);
  tl_release(u);
}

/* the agreed NCCL bit when the ranks in `mask` (bit r: rank r) chose NCCL */
static void agree_on(int mask, bool want_all, bool want_any) {
  int64_t d[DIST_DESC_WORDS];
  tl_dist_describe_sync(d, 0, false);
  if (mask >> R & 1) d[DIST_DESC_STATE] |= DIST_DESC_NCCL;
  bool all = !want_all, any = !want_any;
  tl_error e = {0};
  CHECK(tl_dist_agree_path(d, "agree", &all, &any, &e) == TL_OK, "agree %d: %s", mask, e.msg);
  CHECK(all == want_all && any == want_any, "ranks %#x chose NCCL: all %d any %d, not %d %d", mask, all, any, want_all,
        want_any);
}

static void check_nccl(tl_ctx *ctx, const char *want) {
  const char *why = NULL;
  /* host and opencl tensors: staged, and NCCL is not even loaded for them */
  CHECK(!tl_dist_nccl_choice("cpu", &why) && why && !strcmp(why, "not a cuda tensor"), "cpu: %s", why);
  CHECK(!tl_dist_nccl_choice("opencl", &why) && why && !strcmp(why, "not a cuda tensor"), "opencl: %s", why);
  tl_dist_paths p0 = tl_dist_path_counts();
  int64_t shp[2] = {2, 3};
  tl_tensor *t = make(ctx, TL_F32, 2, shp, R), *s = tl_dist_all_reduce(t), *b = tl_dist_broadcast(t, N - 1);
  tl_tensor *m = tl_dist_all_reduce_mean(t);
  for (int64_t i = 0; s && b && m && i < 6; i++) {
    double sum = 0;
    for (int r = 0; r < N; r++) sum += val(TL_F32, r, i);
    CHECK(fabs(at(s, i) - sum) < 1e-5 && fabs(at(m, i) - sum / N) < 1e-5, "sum [%lld]", (long long)i);
    CHECK(at(b, i) == (double)(float)val(TL_F32, N - 1, i), "broadcast [%lld]", (long long)i);
  }
  CHECK(s && b && m, "collectives: %s", tl_last_error(ctx));
  tl_tensor *w = tl_ones(ctx, TL_F32, 2, shp), *wd = tl_detach(w);
  tl_set_requires_grad(wd, 1);
  CHECK(tl_backward(tl_sum(tl_mul(wd, t), 0, NULL, 0), NULL) == TL_OK, "backward: %s", tl_last_error(ctx));
  CHECK(tl_dist_sync_grads(1, &wd) == TL_OK, "sync_grads: %s", tl_last_error(NULL));
  tl_tensor *g = tl_grad(wd);
  for (int64_t i = 0; g && i < 6; i++) CHECK(fabs(at(g, i) - at(m, i)) < 1e-6, "grad [%lld]", (long long)i);
  tl_dist_paths p1 = tl_dist_path_counts();
  uint64_t calls = N > 1 ? 4 : 0; /* alone: no payload moves */
  CHECK(p1.nccl == p0.nccl && p1.staged - p0.staged == calls, "paths: %llu by NCCL, %llu staged, not 0 and %llu",
        (unsigned long long)(p1.nccl - p0.nccl), (unsigned long long)(p1.staged - p0.staged), (unsigned long long)calls);
  CHECK(tl_nccl_version() == 0, "NCCL was loaded for host tensors");
  tl_release(g), tl_release(wd), tl_release(w), tl_release(m), tl_release(b), tl_release(s), tl_release(t);
  /* every rank's choice agreed: all, or none (3 ranks or more: the minimum is no
   * single rank's) */
  if (N > 1) {
    agree_on(0, false, false);
    agree_on((1 << N) - 1, true, true);
    agree_on(1, false, true);
    agree_on(((1 << N) - 1) & ~1, false, true);
    /* a failed rank is still an error, the NCCL bit or not */
    int64_t d[DIST_DESC_WORDS];
    tl_dist_describe_sync(d, 0, R == N - 1);
    if (R != N - 1) d[DIST_DESC_STATE] |= DIST_DESC_NCCL;
    tl_error e = {0};
    bool all, any;
    CHECK(tl_dist_agree_path(d, "agree", &all, &any, &e) != TL_OK &&
              (R == N - 1 || strstr(e.msg, "agree: another rank failed to compute its tensor")),
          "a failed rank: %s", e.msg);
  }
  /* a cuda tensor's choice */
  bool yes = tl_dist_nccl_choice("cuda", &why);
  if (!strcmp(want, "yes")) {
    CHECK(yes == (N > 1) && (N > 1 || !strcmp(why, "one rank")), "cuda: %s", why);
    CHECK(N == 1 || tl_nccl_version() / 10000 == 2, "NCCL version %d", tl_nccl_version());
  } else if (!strcmp(want, "off")) {
    CHECK(!yes && !strcmp(why, "TL_DIST_NCCL=0"), "cuda with TL_DIST_NCCL=0: %s", why ? why : "chosen");
  } else {
    CHECK(!yes && (N == 1 || strstr(why, "could not be loaded")), "cuda without NCCL: %s", why ? why : "chosen");
  }
  if (!yes) return;
  /* the communicator: made on every rank, or failed on every rank (no GPU here), and
   * then NCCL is off for the rest of the run */
  tl_error e = {0};
  tl_status st = tl_nccl_comm_start(&e);
  tl_tensor *code = tl_scalar(ctx, TL_I64, st != TL_OK), *codes = tl_dist_all_reduce(code);
  CHECK(codes && at(codes, 0) == (st ? N : 0), "the communicator: %s on this rank, not on all (%g failed)",
        st ? "failed" : "made", codes ? at(codes, 0) : -1);
  if (st) {
    CHECK(strstr(e.msg, "NCCL's communicator could not be made"), "the communicator: %s", e.msg);
    CHECK(!tl_dist_nccl_choice("cuda", &why) && why && strstr(why, "NCCL's communicator could not be made"),
          "after the communicator failed, cuda: %s", why ? why : "chosen");
    
  }
  CHECK(st != TL_OK || tl_nccl_ready(), "made, not ready");
  tl_release(code), tl_release(codes);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  tl_ctx *ctx = tl_init();
  if (!ctx || tl_dist_init() != TL_OK) {
    fprintf(stderr, "dist_check: %s\n", tl_last_error(NULL));
    return 1;
  }
  R = tl_dist_rank();
  N = tl_dist_size();
  if (!strcmp(what, "collectives")) check_collectives(ctx);
  else if (!strcmp(what, "shard")) check_shard(ctx);
  else if (!strcmp(what, "mlp")) check_mlp(ctx, argc > 2 ? argv[2] : "mlp.txt");
  else if (!strcmp(what, "linreg")) check_linreg(ctx);
  else if (!strcmp(what, "cnn")) check_cnn(ctx, argc > 2 ? argv[2] : "cnn.txt");
  else if (!strcmp(what, "grads")) check_grads(ctx);
  else if (!strcmp(what, "nccl")) check_nccl(ctx, argc > 2 ? argv[2] : "yes");
  else if (!strcmp(what, "mismatch")) {
    if (N > 1) check_mismatch(ctx);
  } else if (!strcmp(what, "abort") || !strcmp(what, "kill") || !strcmp(what, "exit_early")) {
    if (R == N - 1) {
      if (what[0] == 'a') tl_dist_abort("the last rank failed", NULL);
      if (what[0] == 'k') raise(SIGKILL);
      tl_shutdown(ctx);
      return 0; /* exit_early: the check at exit finds the others in a barrier */
    }
    tl_dist_barrier();
    fprintf(stderr, "rank %d: the barrier returned: %s\n", R, tl_last_error(NULL));
    failures++;
  } else {
    fprintf(stderr, "dist_check: unknown case '%s'\n", what);
    failures++;
  }
  /* DIST_CHECK_WAY=nccl or staged (tests/dist/nccl_gpu.sh): every payload went that way */
  const char *way = getenv("DIST_CHECK_WAY");
  if (way && N > 1) {
    tl_dist_paths p = tl_dist_path_counts();
    bool nccl = !strcmp(way, "nccl");
    CHECK((nccl ? p.nccl : p.staged) > 0 && (nccl ? p.staged : p.nccl) == 0,
          "payloads: %llu by NCCL, %llu staged, all expected %s", (unsigned long long)p.nccl,
          (unsigned long long)p.staged, way);
  }
  tl_shutdown(ctx);
  if (!failures && R == 0) printf("ok %s\n", what);
  return failures ? 1 : 0;
}
