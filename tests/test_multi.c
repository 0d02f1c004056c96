/* test_multi.c — tl_realize_many: tensors of one shape and dtype computed by one kernel
 * that writes them all (a SINK), grouping, and the optimizers' one-pass steps. Expected
 * values are computed here on the host in double. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

static uint64_t kernels_run(const tl_ctx *ctx) { return tl_get_stats(ctx).kernels_run; }
static uint64_t realizes(const tl_ctx *ctx) { return tl_get_stats(ctx).realizes; }

static tl_tensor *filled(tl_ctx *ctx, tl_dtype dt, int ndim, const int64_t *shape, double scale, double shift) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = scale * (double)((i * 7) % 11) + shift;
  tl_tensor *t = tl_cast(tl_from_data(ctx, TL_F64, ndim, shape, v), dt);
  free(v);
  if (t && tl_realize(t) != TL_OK) return NULL;
  return t;
}

/* x = a*b + 1, y = x*2 (reads x), z = exp(a): one realize, one kernel, three results */
TEST(realize_many_one_kernel_writes_each_value) {
  tl_ctx *ctx = tl_init();
  int64_t shape[2] = {5, 7};
  tl_tensor *a = filled(ctx, TL_F32, 2, shape, 0.25, -1), *b = filled(ctx, TL_F32, 2, shape, 0.5, 0.5);
  tl_tensor *x = tl_add_scalar(tl_mul(a, b), 1), *y = tl_mul_scalar(x, 2), *z = tl_exp(a);
  uint64_t k0 = kernels_run(ctx), r0 = realizes(ctx);
  CHECK_INT(tl_realize_many(3, (tl_tensor *[]){x, y, z}), TL_OK);
  CHECK_INT((int)(kernels_run(ctx) - k0), 1);
  CHECK_INT((int)(realizes(ctx) - r0), 1);
  float gx[35], gy[35], gz[35];
  CHECK_INT(tl_to_host(x, gx, sizeof gx), TL_OK);
  CHECK_INT(tl_to_host(y, gy, sizeof gy), TL_OK);
  CHECK_INT(tl_to_host(z, gz, sizeof gz), TL_OK);
  for (int i = 0; i < 35; i++) {
    double av = 0.25 * ((i * 7) % 11) - 1, bv = 0.5 * ((i * 7) % 11) + 0.5;
    CHECK_NEAR(gx[i], av * bv + 1, 1e-6);
    CHECK_NEAR(gy[i], 2 * (av * bv + 1), 1e-6);
    CHECK_NEAR(gz[i], exp(av), 1e-6 * exp(av));
  }
  CHECK_INT((int)(kernels_run(ctx) - k0), 1); /* reading them back computed nothing */
  TEST_SHUTDOWN(ctx);
}

/* f32 [4], f64 [4], f32 [2, 2], f32 [4]: two dtypes, two realizes (the f32 kernel has
 * a loop nest per shape) */
TEST(realize_many_groups_by_shape_and_dtype) {
  tl_ctx *ctx = tl_init();
  int64_t four = 4, sq[2] = {2, 2};
  tl_tensor *a = filled(ctx, TL_F32, 1, &four, 1, 0), *b = filled(ctx, TL_F64, 1, &four, 1, 0);
  tl_tensor *c = filled(ctx, TL_F32, 2, sq, 1, 0);
  tl_tensor *t[4] = {tl_neg(a), tl_mul_scalar(b, 3), tl_add_scalar(c, 1), tl_mul(a, a)};
  uint64_t r0 = realizes(ctx), k0 = kernels_run(ctx);
  CHECK_INT(tl_realize_many(4, t), TL_OK);
  CHECK_INT((int)(realizes(ctx) - r0), 2);
  CHECK_INT((int)(kernels_run(ctx) - k0), 2);
  float f0[4], f2[4], f3[4];
  double d1[4];
  CHECK_INT(tl_to_host(t[0], f0, sizeof f0), TL_OK);
  CHECK_INT(tl_to_host(t[1], d1, sizeof d1), TL_OK);
  CHECK_INT(tl_to_host(t[2], f2, sizeof f2), TL_OK);
  CHECK_INT(tl_to_host(t[3], f3, sizeof f3), TL_OK);
  for (int i = 0; i < 4; i++) {
    double v = (i * 7) % 11;
    CHECK(f0[i] == (float)-v && d1[i] == 3 * v && f2[i] == (float)(v + 1) && f3[i] == (float)(v * v));
  }
  TEST_SHUTDOWN(ctx);
}

/* the same handle twice, a tensor already realized, a constant, a 0-d value, and more
 * values than one kernel takes (TL_SINK_MAX = 48): 100 of them in three kernels */
TEST(realize_many_duplicates_buffers_constants_and_many) {
  tl_ctx *ctx = tl_init();
  int64_t three = 3;
  tl_tensor *a = filled(ctx, TL_F32, 1, &three, 1, 1);
  tl_tensor *x = tl_mul_scalar(a, 10), *k = tl_full(ctx, TL_F32, 1, &three, 2.5);
  tl_tensor *s = tl_sum(a, 0, NULL, 0), *s2 = tl_mul_scalar(s, 2);
  CHECK_INT(tl_realize_many(6, (tl_tensor *[]){x, x, a, k, s, s2}), TL_OK);
  float gx[3], gk[3], gs, gs2;
  CHECK_INT(tl_to_host(x, gx, sizeof gx), TL_OK);
  CHECK_INT(tl_to_host(k, gk, sizeof gk), TL_OK);
  CHECK_INT(tl_to_host(s, &gs, sizeof gs), TL_OK);
  CHECK_INT(tl_to_host(s2, &gs2, sizeof gs2), TL_OK);
  for (int i = 0; i < 3; i++) CHECK(gx[i] == 10.0f * (float)((i * 7) % 11 + 1) && gk[i] == 2.5f);
  CHECK(gs == 1 + 8 + 4 && gs2 == 2 * gs); /* a = [1, 8, 4] */
  tl_tensor *many[100];
  for (int i = 0; i < 100; i++) many[i] = tl_add_scalar(a, i);
  uint64_t r0 = realizes(ctx);
  CHECK_INT(tl_realize_many(100, many), TL_OK);
  CHECK_INT((int)(realizes(ctx) - r0), 3);
  for (int i = 0; i < 100; i++) {
    float v[3];
    CHECK_INT(tl_to_host(many[i], v, sizeof v), TL_OK);
    CHECK(v[0] == 1.0f + (float)i && v[1] == 8.0f + (float)i && v[2] == 4.0f + (float)i);
  }
  CHECK_INT(tl_realize_many(0, NULL), TL_OK);
  TEST_SHUTDOWN(ctx);
}

/* Shapes of every kind in one kernel, big enough that the thread pool splits the
 * parallel range across the nests' parts: [50000], [30000, 2], [7], [1, 1] and 0-d. */
TEST(realize_many_shapes_share_one_kernel_across_threads) {
  tl_ctx *ctx = tl_init();
  int64_t shapes[5][2] = {{50000, 0}, {30000, 2}, {7, 0}, {1, 1}, {0, 0}};
  int ndims[5] = {1, 2, 1, 2, 0};
  tl_tensor *in[5], *out[5];
  for (int i = 0; i < 5; i++) {
    in[i] = filled(ctx, TL_F32, ndims[i], shapes[i], 1, (double)i);
    out[i] = tl_add_scalar(tl_mul_scalar(in[i], 2), 1);
  }
  uint64_t k0 = kernels_run(ctx);
  CHECK_INT(tl_realize_many(5, out), TL_OK);
  CHECK_INT((int)(kernels_run(ctx) - k0), 1);
  for (int i = 0; i < 5; i++) {
    int64_t n = tl_numel(out[i]);
    float *got = malloc(sizeof *got * (size_t)n);
    CHECK_INT(tl_to_host(out[i], got, sizeof *got * (size_t)n), TL_OK);
    int bad = 0;
    for (int64_t j = 0; j < n; j++) bad += got[j] != (float)(2 * ((double)((j * 7) % 11) + i) + 1);
    CHECK_INT(bad, 0);
    free(got);
  }
  TEST_SHUTDOWN(ctx);
}

/* An empty value among others (a nest of no turns): the grouping of short rows once
 * divided by its zero rows (SIGFPE) */
TEST(realize_many_with_an_empty_value) {
  tl_ctx *ctx = tl_init();
  tl_tensor *e = tl_add_scalar(tl_zeros(ctx, TL_F32, 2, (int64_t[]){0, 5}), 1);
  tl_tensor *m = tl_mul_scalar(filled(ctx, TL_F32, 2, (int64_t[]){4, 4}, 1, 0), 2);
  tl_tensor *v = tl_mul_scalar(filled(ctx, TL_F32, 1, (int64_t[]){3}, 1, 1), 3);
  CHECK_INT(tl_realize_many(3, (tl_tensor *[]){e, m, v}), TL_OK);
  CHECK_INT((int)tl_numel(e), 0);
  float got[16];
  CHECK_INT(tl_to_host(m, got, sizeof got), TL_OK);
  for (int i = 0; i < 16; i++) CHECK(got[i] == (float)(2 * ((i * 7) % 11)));
  CHECK_INT(tl_to_host(v, got, 3 * sizeof *got), TL_OK);
  for (int i = 0; i < 3; i++) CHECK(got[i] == (float)(3 * ((i * 7) % 11 + 1)));
  TEST_SHUTDOWN(ctx);
}

TEST(realize_many_errors) {
  tl_ctx *ctx = tl_init(), *other = tl_init();
  int64_t two = 2;
  tl_tensor *a = tl_full(ctx, TL_F32, 1, &two, 1), *b = tl_full(other, TL_F32, 1, &two, 1);
  CHECK_INT(tl_realize_many(2, (tl_tensor *[]){a, NULL}), TL_ERR_ARG);
  CHECK_INT(tl_realize_many(-1, (tl_tensor *[]){a}), TL_ERR_ARG);
  CHECK_INT(tl_realize_many(2, (tl_tensor *[]){tl_neg(a), b}), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "realize_many: tensors from different contexts");
  TEST_SHUTDOWN(other);
  TEST_SHUTDOWN(ctx);
}

/* the interpreter lays the values out as the kernel does: the same results */
TEST(realize_many_interp_backend_agrees) {
  const char *old = getenv("TL_BACKEND");
  setenv("TL_BACKEND", "interp", 1);
  tl_ctx *ictx = tl_init();
  if (old) setenv("TL_BACKEND", old, 1);
  else unsetenv("TL_BACKEND");
  tl_ctx *ctx = tl_init();
  int64_t shape[2] = {3, 5};
  float got[2][3][15];
  tl_ctx *ctxs[2] = {ctx, ictx};
  for (int c = 0; c < 2; c++) {
    tl_tensor *a = filled(ctxs[c], TL_F32, 2, shape, 0.5, -2);
    tl_tensor *t[3] = {tl_relu(a), tl_mul(a, tl_relu(a)), tl_sqrt(tl_abs(a))};
    CHECK_INT(tl_realize_many(3, t), TL_OK);
    for (int i = 0; i < 3; i++) CHECK_INT(tl_to_host(t[i], got[c][i], sizeof got[c][i]), TL_OK);
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 15; j++) CHECK(got[0][i][j] == got[1][i][j]);
  TEST_SHUTDOWN(ictx);
  TEST_SHUTDOWN(ctx);
}

/* values with autograd history: their saved values are realized first, and the
 * backward through them still gives d(sum(x*x))/dx = 2x */
TEST(realize_many_keeps_autograd_working) {
  tl_ctx *ctx = tl_init();
  int64_t four = 4;
  tl_tensor *x = filled(ctx, TL_F32, 1, &four, 0.5, -1);
  CHECK_INT(tl_set_requires_grad(x, 1), TL_OK);
  tl_tensor *sq = tl_mul(x, x), *other = tl_add_scalar(x, 3);
  CHECK_INT(tl_realize_many(2, (tl_tensor *[]){sq, other}), TL_OK);
  CHECK_INT(tl_backward(tl_sum(sq, 0, NULL, 0), NULL), TL_OK);
  float g[4], xv[4];
  CHECK_INT(tl_to_host(tl_grad(x), g, sizeof g), TL_OK);
  CHECK_INT(tl_to_host(x, xv, sizeof xv), TL_OK);
  for (int i = 0; i < 4; i++) CHECK(g[i] == 2 * xv[i]);
  TEST_SHUTDOWN(ctx);
}

/* A layer's bias and relu run as its GEMM's epilogue, not as values of a SINK:
 * realizing h0 = relu(x w0 + b0) and h1 = relu(h0 w1 + b1) together (as backward
 * realizes a model's saved values) is two kernels. As one SINK it was four: the
 * first GEMM, h0 for the second GEMM to read, that GEMM, and the SINK copying h0.
 * A log-softmax of a GEMM (which reads the sum's row in its max) still joins a SINK:
 * it and an exp are the GEMM and one kernel. Values by hand, in double. */
static void layer_ref(const double *in, const double *w, const double *b, int m, int k, int n, bool relu,
                      double *out) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double acc = 0;
      for (int q = 0; q < k; q++) acc += in[i * k + q] * w[q * n + j];
      acc += b[j];
      out[i * n + j] = relu && acc < 0 ? 0 : acc;
    }
}
static void host_of(tl_tensor *t, double *out, int64_t n) {
  float buf[32 * 24];
  CHECK_INT(tl_to_host(t, buf, sizeof *buf * (size_t)n), TL_OK);
  for (int64_t i = 0; i < n; i++) out[i] = buf[i];
}
TEST(realize_many_leaves_gemm_epilogues_out_of_sinks) {
  tl_ctx *ctx = tl_init();
  enum { M = 16, K = 32, N = 24 };
  tl_tensor *x = filled(ctx, TL_F32, 2, (int64_t[]){M, K}, 0.25, -1), *w0 = filled(ctx, TL_F32, 2, (int64_t[]){K, N}, 0.125, -0.6),
            *b0 = filled(ctx, TL_F32, 1, (int64_t[]){N}, 0.5, -2), *w1 = filled(ctx, TL_F32, 2, (int64_t[]){N, N}, 0.1, -0.5),
            *b1 = filled(ctx, TL_F32, 1, (int64_t[]){N}, 0.2, -1);
  tl_tensor *h0 = tl_relu(tl_add(tl_matmul(x, w0), b0)), *h1 = tl_relu(tl_add(tl_matmul(h0, w1), b1));
  uint64_t k0 = kernels_run(ctx);
  CHECK_INT(tl_realize_many(2, (tl_tensor *[]){h0, h1}), TL_OK);
  CHECK_INT((int)(kernels_run(ctx) - k0), 2);
  static double xv[M * K], w0v[K * N], b0v[N], w1v[N * N], b1v[N], h0r[M * N], h1r[M * N], got[M * N];
  host_of(x, xv, M * K), host_of(w0, w0v, K * N), host_of(b0, b0v, N), host_of(w1, w1v, N * N), host_of(b1, b1v, N);
  layer_ref(xv, w0v, b0v, M, K, N, true, h0r);
  layer_ref(h0r, w1v, b1v, M, N, N, true, h1r);
  int zeros = 0;
  host_of(h0, got, M * N);
  for (int i = 0; i < M * N; i++) {
    CHECK(fabs(got[i] - h0r[i]) <= 1e-4 * (1 + fabs(h0r[i])));
    zeros += h0r[i] == 0;
  }
  host_of(h1, got, M * N);
  for (int i = 0; i < M * N; i++) CHECK(fabs(got[i] - h1r[i]) <= 1e-4 * (1 + fabs(h1r[i])));
  CHECK(zeros > 0 && zeros < M * N); /* the relu cuts some, not all */
  tl_tensor *ls = tl_log_softmax(tl_add(tl_matmul(x, w0), b0), 1), *e = tl_exp(tl_mul_scalar(h0, 0.01));
  k0 = kernels_run(ctx);
  CHECK_INT(tl_realize_many(2, (tl_tensor *[]){ls, e}), TL_OK);
  CHECK_INT((int)(kernels_run(ctx) - k0), 2);
  layer_ref(xv, w0v, b0v, M, K, N, false, h1r);
  host_of(ls, got, M * N);
  for (int i = 0; i < M; i++) {
    double mx = -INFINITY, z = 0;
    for (int j = 0; j < N; j++) mx = fmax(mx, h1r[i * N + j]);
    for (int j = 0; j < N; j++) z += exp(h1r[i * N + j] - mx);
    for (int j = 0; j < N; j++) CHECK(fabs(got[i * N + j] - (h1r[i * N + j] - mx - log(z))) <= 1e-4);
  }
  TEST_SHUTDOWN(ctx);
}

/* An SGD step with momentum over parameters of three shapes is one kernel too (from
 * the second step: see below) */
TEST(realize_many_sgd_step_over_three_shapes_is_one_kernel) {
  tl_ctx *ctx = tl_init();
  int64_t s0[2] = {3, 4}, s1[1] = {4}, s2[1] = {1};
  tl_tensor *w[3] = {filled(ctx, TL_F32, 2, s0, 0.5, -1), filled(ctx, TL_F32, 1, s1, 0.25, 0),
                     filled(ctx, TL_F32, 1, s2, 1, 2)};
  for (int i = 0; i < 3; i++) CHECK_INT(tl_set_requires_grad(w[i], 1), TL_OK);
  tl_optimizer *opt = tl_sgd(3, w, 0.1, 0.9, 0);
  for (int step = 0; step < 2; step++) {
    TL_SCOPE(ctx, s) {
      CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
      tl_tensor *loss = tl_add(tl_add(tl_sum(w[0], 0, NULL, 0), tl_sum(w[1], 0, NULL, 0)), tl_sum(w[2], 0, NULL, 0));
      CHECK_INT(tl_backward(loss, NULL), TL_OK); /* every gradient is 1 */
      for (int i = 0; i < 3; i++) CHECK_INT(tl_realize(tl_grad(w[i])), TL_OK);
      uint64_t k0 = kernels_run(ctx);
      CHECK_INT(tl_optimizer_step(opt), TL_OK);
      /* the first momentum is a copy of each gradient, a buffer of its own (3 kernels) */
      CHECK_INT((int)(kernels_run(ctx) - k0), step ? 1 : 4);
    }
  }
  /* buf = 1, then 1.9: p - 0.1 - 0.19 */
  float got[12];
  CHECK_INT(tl_to_host(w[0], got, sizeof got), TL_OK);
  for (int i = 0; i < 12; i++) CHECK_NEAR(got[i], 0.5 * ((i * 7) % 11) - 1 - 0.29, 1e-6);
  CHECK_INT(tl_to_host(w[2], got, sizeof(float)), TL_OK);
  CHECK_NEAR(got[0], 2 - 0.29, 1e-6);
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

/* One Adam step of a parameter is one kernel writing p, m and v; two steps match
 * PyTorch's formulas computed here in double. */
TEST(realize_many_adam_step_is_one_kernel) {
  tl_ctx *ctx = tl_init();
  int64_t shape[2] = {3, 4};
  tl_tensor *w = filled(ctx, TL_F64, 2, shape, 0.3, -1.2);
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, p[12], m[12] = {0}, v[12] = {0};
  for (int i = 0; i < 12; i++) p[i] = 0.3 * ((i * 7) % 11) - 1.2;
  tl_optimizer *opt = tl_adam(1, &w, lr, b1, b2, eps, 0);
  CHECK(opt != NULL);
  for (int step = 1; step <= 2; step++) {
    TL_SCOPE(ctx, s) {
      CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
      tl_tensor *loss = tl_sum(tl_mul(tl_mul(w, w), w), 0, NULL, 0); /* grad 3 w^2 */
      CHECK_INT(tl_backward(loss, NULL), TL_OK);
      CHECK_INT(tl_realize(tl_grad(w)), TL_OK);
      uint64_t k0 = kernels_run(ctx);
      CHECK_INT(tl_optimizer_step(opt), TL_OK);
      CHECK_INT((int)(kernels_run(ctx) - k0), 1);
    }
    for (int i = 0; i < 12; i++) {
      double g = 3 * p[i] * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double mh = m[i] / (1 - pow(b1, step)), vh = v[i] / (1 - pow(b2, step));
      p[i] -= lr * mh / (sqrt(vh) + eps);
    }
    double got[12];
    CHECK_INT(tl_to_host(w, got, sizeof got), TL_OK);
    for (int i = 0; i < 12; i++) CHECK_NEAR(got[i], p[i], 1e-12);
  }
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

/* Adam over the six parameters of a small MLP (three matrices, three biases) is one
 * kernel per step: each parameter's gradient and old state are read by several of its
 * new values, and counted once each (36 reads, 26 distinct inputs); values against the
 * formulas in double. */
TEST(realize_many_adam_over_six_parameters_is_one_kernel) {
  tl_ctx *ctx = tl_init();
  int64_t shapes[6][2] = {{6, 5}, {5, 0}, {5, 4}, {4, 0}, {4, 3}, {3, 0}};
  tl_tensor *w[6];
  double p[6][30], m[6][30] = {{0}}, v[6][30] = {{0}}, lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  int64_t n[6];
  for (int i = 0; i < 6; i++) {
    int nd = shapes[i][1] ? 2 : 1;
    n[i] = shapes[i][0] * (nd == 2 ? shapes[i][1] : 1);
    w[i] = filled(ctx, TL_F64, nd, shapes[i], 0.1 * (i + 1), -0.4);
    CHECK_INT(tl_set_requires_grad(w[i], 1), TL_OK);
    for (int64_t k = 0; k < n[i]; k++) p[i][k] = 0.1 * (i + 1) * (double)((k * 7) % 11) - 0.4;
  }
  tl_optimizer *opt = tl_adam(6, w, lr, b1, b2, eps, 0);
  CHECK(opt != NULL);
  for (int step = 1; step <= 2; step++) {
    TL_SCOPE(ctx, s) {
      CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
      tl_tensor *loss = NULL; /* sum of p^2 over all: every gradient is 2p */
      for (int i = 0; i < 6; i++) {
        tl_tensor *t = tl_sum(tl_mul(w[i], w[i]), 0, NULL, 0);
        loss = loss ? tl_add(loss, t) : t;
      }
      CHECK_INT(tl_backward(loss, NULL), TL_OK);
      for (int i = 0; i < 6; i++) CHECK_INT(tl_realize(tl_grad(w[i])), TL_OK);
      uint64_t k0 = kernels_run(ctx);
      CHECK_INT(tl_optimizer_step(opt), TL_OK);
      CHECK_INT((int)(kernels_run(ctx) - k0), 1);
    }
    for (int i = 0; i < 6; i++) {
      double got[30];
      for (int64_t k = 0; k < n[i]; k++) {
        double g = 2 * p[i][k];
        m[i][k] = b1 * m[i][k] + (1 - b1) * g;
        v[i][k] = b2 * v[i][k] + (1 - b2) * g * g;
        p[i][k] -= lr * (m[i][k] / (1 - pow(b1, step))) / (sqrt(v[i][k] / (1 - pow(b2, step))) + eps);
      }
      CHECK_INT(tl_to_host(w[i], got, sizeof(double) * (size_t)n[i]), TL_OK);
      for (int64_t k = 0; k < n[i]; k++) CHECK_NEAR(got[k], p[i][k], 1e-12);
    }
  }
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

/* A sum of more distinct buffers than a kernel takes (100, as a chain and as a
 * balanced tree) is split into several kernels and still adds up: x_i holds i. */
TEST(realize_sum_of_more_buffers_than_a_kernel_takes) {
  tl_ctx *ctx = tl_init();
  int64_t shape[1] = {3};
  enum { N = 100 };
  tl_tensor *t[N];
  for (int i = 0; i < N; i++) t[i] = filled(ctx, TL_F64, 1, shape, 0, (double)i); /* buffers, not constants */
  tl_tensor *chain = t[0];
  for (int i = 1; i < N; i++) chain = tl_add(chain, t[i]);
  for (int len = N; len > 1; len = (len + 1) / 2) { /* pairwise, in place */
    for (int i = 0; i < len / 2; i++) t[i] = tl_add(t[2 * i], t[2 * i + 1]);
    if (len & 1) t[len / 2] = t[len - 1];
  }
  for (int which = 0; which < 2; which++) {
    uint64_t k0 = kernels_run(ctx);
    double got[3];
    CHECK_INT(tl_to_host(which ? t[0] : chain, got, sizeof got), TL_OK);
    CHECK(kernels_run(ctx) - k0 >= 2);
    for (int k = 0; k < 3; k++) CHECK_NEAR(got[k], N * (N - 1) / 2.0, 0);
  }
  TEST_SHUTDOWN(ctx);
}
