/* test_opencl_backend.c — the opencl backend (runtime/backend_opencl.c, the OpenCL
 * renderer) on whatever platform this machine has (PoCL in CI): GEMMs with edge tiles
 * and their fused epilogues, softmax and layer norm of odd sizes, convolution and
 * pooling, gradients, realize_many, random numbers, host access, device memory (a
 * training loop allocates nothing after its first step; nothing is live at the end),
 * mixed backends and device out-of-memory. Values are checked against double loops
 * here or against the reference interpreter (tl's `interp`). Every test says so and
 * passes when no OpenCL platform exists (the driver's tests check that message). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tl.h"

/* the device backend under test: opencl, or the one TL_TEST_DEVICE names (cuda on a GPU) */
static const char *device(void) { return getenv("TL_TEST_DEVICE") ? getenv("TL_TEST_DEVICE") : "opencl"; }

/* a context on the device, or NULL (printed) when this machine has none */
static tl_ctx *opencl_ctx(void) {
  if (tl_backend_usable(device()) != TL_OK) {
    printf("  %s is not available here: %s\n", device(), tl_last_error(NULL));
    tl_clear_error(NULL);
    return NULL;
  }
  tl_ctx *ctx = tl_init();
  if (ctx && tl_set_backend(ctx, device()) != TL_OK) {
    tl_test_fail(__FILE__, __LINE__, "tl_set_backend(opencl): %s", tl_last_error(ctx));
    tl_shutdown(ctx);
    return NULL;
  }
  return ctx;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* splitmix64 in [-1, 1) */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) / (double)(1ull << 52) - 1.0;
}

static tl_tensor *random_tensor(tl_ctx *ctx, tl_dtype dt, int ndim, const int64_t *shape, double *host) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    host[i] = uniform();
    if (dt == TL_F32) host[i] = f[i] = (float)host[i];
  }
  tl_tensor *t = dt == TL_F32 ? tl_from_data(ctx, dt, ndim, shape, f) : tl_from_data(ctx, dt, ndim, shape, host);
  free(f);
  return t;
}

static void read_f64(tl_tensor *t, double *out, int64_t n) {
  tl_tensor *d = tl_cast(t, TL_F64);
  CHECK_INT(tl_to_host(d, out, sizeof(double) * (size_t)n), TL_OK);
}

/* relu(A B + bias) for shapes with partial tiles on every side, K not a multiple of the
 * tile, batched with a broadcast operand; f32 and f64; against a double loop */
static void gemm_edge_tiles(void) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  static const int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 17, 33, 5}, {1, 64, 64, 64}, {1, 100, 3, 257}, {3, 7, 19, 16},
                                      {2, 33, 1, 40}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    for (int f64 = 0; f64 < 2; f64++) {
      int64_t B = shapes[c][0], M = shapes[c][1], K = shapes[c][2], N = shapes[c][3];
      tl_dtype dt = f64 ? TL_F64 : TL_F32;
      double *a = malloc(sizeof(double) * (size_t)(B * M * K)), *b = malloc(sizeof(double) * (size_t)(K * N));
      double *bias = malloc(sizeof(double) * (size_t)N), *got = malloc(sizeof(double) * (size_t)(B * M * N));
      tl_tensor *ta = random_tensor(ctx, dt, 3, (int64_t[]){B, M, K}, a);
      tl_tensor *tb = random_tensor(ctx, dt, 2, (int64_t[]){K, N}, b);
      tl_tensor *tbias = random_tensor(ctx, dt, 1, &N, bias);
      tl_tensor *y = tl_relu(tl_add(tl_matmul(ta, tb), tbias));
      read_f64(y, got, B * M * N);
      double tol = f64 ? 1e-12 : 1e-5;
      for (int64_t bi = 0; bi < B; bi++)
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) s += a[(bi * M + i) * K + k] * b[k * N + j];
            s += bias[j];
            double want = s > 0 ? s : 0, g = got[(bi * M + i) * N + j];
            if (fabs(g - want) > tol * (1 + (double)K)) {
              tl_test_fail(__FILE__, __LINE__, "shape %lldx%lldx%lldx%lld %s: [%lld,%lld,%lld] = %.9g, want %.9g",
                           (long long)B, (long long)M, (long long)K, (long long)N, f64 ? "f64" : "f32", (long long)bi,
                           (long long)i, (long long)j, g, want);
              bi = B, i = M, j = N;
            }
          }
      free(a), free(b), free(bias), free(got);
    }
  TEST_SHUTDOWN(ctx);
}

/* both GEMM kernels, whatever the device: a CPU's (vectors in registers) and a GPU's
 * (tiles in local memory, barriers), TL_OPENCL_TARGET choosing */
TEST(opencl_gemm_edge_tiles_and_epilogue) {
  char *saved = tl_test_env_save("TL_OPENCL_TARGET");
  setenv("TL_OPENCL_TARGET", "cpu", 1);
  gemm_edge_tiles();
  setenv("TL_OPENCL_TARGET", "gpu", 1);
  gemm_edge_tiles();
  tl_test_env_restore("TL_OPENCL_TARGET", saved);
}

/* the GPU's large f32 GEMM (128 x 128 blocks, double-buffered): C of 2100 x 2050 (partial
 * blocks on both sides) with K = 37 (a partial step), A and B each plain or
 * transposed (their contiguous axis K or M, N), and a batch of two; relu(A B + bias)
 * against a double loop */
static void large_gemm(int64_t B, int64_t M, int64_t K, int64_t N, bool at, bool bt) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  double *a = malloc(sizeof(double) * (size_t)(B * M * K)), *b = malloc(sizeof(double) * (size_t)(K * N));
  double *bias = malloc(sizeof(double) * (size_t)N), *got = malloc(sizeof(double) * (size_t)(B * M * N));
  /* a transposed operand is made [K, M] (or [N, K]) and viewed transposed: its values
   * a[.., k, i] stand for A[i, k] */
  tl_tensor *ta = random_tensor(ctx, TL_F32, 3, at ? (int64_t[]){B, K, M} : (int64_t[]){B, M, K}, a);
  tl_tensor *tb = random_tensor(ctx, TL_F32, 2, bt ? (int64_t[]){N, K} : (int64_t[]){K, N}, b);
  tl_tensor *tbias = random_tensor(ctx, TL_F32, 1, &N, bias);
  tl_tensor *y = tl_relu(tl_add(tl_matmul(at ? tl_transpose(ta, 1, 2) : ta, bt ? tl_transpose(tb, 0, 1) : tb), tbias));
  read_f64(y, got, B * M * N);
  int bad = 0;
  for (int64_t bi = 0; bi < B && !bad; bi++)
    for (int64_t i = 0; i < M && !bad; i++)
      for (int64_t j = 0; j < N && !bad; j++) {
        double s = bias[j];
        for (int64_t k = 0; k < K; k++)
          s += a[bi * M * K + (at ? k * M + i : i * K + k)] * b[bt ? j * K + k : k * N + j];
        double want = s > 0 ? s : 0, g = got[(bi * M + i) * N + j];
        if (fabs(g - want) > 1e-5 * (1 + (double)K)) {
          tl_test_fail(__FILE__, __LINE__, "%lldx%lldx%lldx%lld at=%d bt=%d: [%lld,%lld,%lld] = %.9g, want %.9g",
                       (long long)B, (long long)M, (long long)K, (long long)N, at, bt, (long long)bi, (long long)i,
                       (long long)j, g, want);
          bad = 1;
        }
      }
  free(a), free(b), free(bias), free(got);
  TEST_SHUTDOWN(ctx);
}

TEST(opencl_large_gemm_blocks_on_a_gpu) {
  char *saved = tl_test_env_save("TL_OPENCL_TARGET");
  setenv("TL_OPENCL_TARGET", "gpu", 1);
  for (int at = 0; at < 2; at++)
    for (int bt = 0; bt < 2; bt++) large_gemm(1, 2100, 37, 2050, at, bt);
  large_gemm(2, 1500, 9, 1400, false, false);
  tl_test_env_restore("TL_OPENCL_TARGET", saved);
}

/* a GPU's large elementwise kernels take several elements a work-item, a grid apart:
 * 200003 elements (not a multiple of the grid), and two outputs of different sizes
 * from one kernel (its parallel range in parts); values by hand */
TEST(opencl_large_elementwise_on_a_gpu) {
  char *saved = tl_test_env_save("TL_OPENCL_TARGET");
  setenv("TL_OPENCL_TARGET", "gpu", 1);
  tl_ctx *ctx = opencl_ctx();
  if (ctx) {
    int64_t n = 200003, half = 100001;
    tl_tensor *x = tl_arange(ctx, TL_F32, 0, (double)n, 1);
    tl_tensor *y = tl_mul_scalar(tl_relu(tl_add_scalar(tl_mul_scalar(x, 2), -5)), 0.5);
    tl_tensor *z = tl_add_scalar(tl_slice(x, 0, 0, half, 1), 1);
    CHECK_INT(tl_realize_many(2, (tl_tensor *[]){y, z}), TL_OK);
    float *got = malloc(sizeof(float) * (size_t)n);
    CHECK_INT(tl_to_host(y, got, sizeof(float) * (size_t)n), TL_OK);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += got[i] != (i * 2 - 5 > 0 ? (float)(i * 2 - 5) * 0.5f : 0.0f);
    CHECK_INT(bad, 0);
    CHECK_INT(tl_to_host(z, got, sizeof(float) * (size_t)half), TL_OK);
    bad = 0;
    for (int64_t i = 0; i < half; i++) bad += got[i] != (float)(i + 1);
    CHECK_INT(bad, 0);
    free(got);
    TEST_SHUTDOWN(ctx);
  }
  tl_test_env_restore("TL_OPENCL_TARGET", saved);
}

/* softmax and layer norm over rows of 1, 3, 1000 and 4097 elements: one kernel reduces
 * each row; against double loops */
static void softmax_and_layer_norm(void) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  static const int64_t widths[] = {1, 3, 1000, 4097};
  for (size_t c = 0; c < 4; c++) {
    int64_t R = 3, W = widths[c], n = R * W;
    double *x = malloc(sizeof(double) * (size_t)n), *sm = malloc(sizeof(double) * (size_t)n),
           *ln = malloc(sizeof(double) * (size_t)n);
    tl_tensor *t = random_tensor(ctx, TL_F32, 2, (int64_t[]){R, W}, x);
    for (int64_t i = 0; i < n; i++) x[i] *= 10; /* rows with a large range */
    t = tl_mul_scalar(t, 10);
    read_f64(tl_softmax(t, 1), sm, n);
    read_f64(tl_layer_norm(t, NULL, NULL, 1e-5), ln, n);
    for (int64_t r = 0; r < R; r++) {
      const double *row = x + r * W;
      double mx = -INFINITY, sum = 0, mean = 0, var = 0;
      for (int64_t i = 0; i < W; i++) mx = row[i] > mx ? row[i] : mx, mean += row[i] / (double)W;
      for (int64_t i = 0; i < W; i++) sum += exp(row[i] - mx), var += (row[i] - mean) * (row[i] - mean) / (double)W;
      for (int64_t i = 0; i < W; i++) {
        CHECK_NEAR(sm[r * W + i], exp(row[i] - mx) / sum, 1e-6);
        CHECK_NEAR(ln[r * W + i], (row[i] - mean) / sqrt(var + 1e-5), 2e-4);
      }
    }
    free(x), free(sm), free(ln);
  }
  TEST_SHUTDOWN(ctx);
}

/* a CPU's groups of 64 and a GPU's of 256, TL_OPENCL_TARGET choosing */
TEST(opencl_softmax_and_layer_norm_of_odd_sizes) {
  char *saved = tl_test_env_save("TL_OPENCL_TARGET");
  setenv("TL_OPENCL_TARGET", "cpu", 1);
  softmax_and_layer_norm();
  setenv("TL_OPENCL_TARGET", "gpu", 1);
  softmax_and_layer_norm();
  tl_test_env_restore("TL_OPENCL_TARGET", saved);
}

/* the same program on opencl and on the interpreter: conv2d with padding and stride,
 * both poolings, cross-entropy, and the gradients of everything (scatter-add for the
 * embedding's) */
static int conv_program(const char *backend, double *out, int64_t cap) {
  tl_ctx *ctx = tl_init();
  if (tl_set_backend(ctx, backend) != TL_OK) {
    tl_shutdown(ctx);
    return -1;
  }
  rng_state = 12345;
  double *tmp = malloc(sizeof(double) * 4096);
  tl_tensor *x = random_tensor(ctx, TL_F64, 4, (int64_t[]){2, 3, 9, 8}, tmp);
  tl_tensor *w = random_tensor(ctx, TL_F64, 4, (int64_t[]){4, 3, 3, 3}, tmp);
  tl_tensor *bias = random_tensor(ctx, TL_F64, 1, (int64_t[]){4}, tmp);
  tl_tensor *emb = random_tensor(ctx, TL_F64, 2, (int64_t[]){5, 6}, tmp);
  free(tmp);
  tl_set_requires_grad(x, 1), tl_set_requires_grad(w, 1), tl_set_requires_grad(bias, 1), tl_set_requires_grad(emb, 1);
  tl_tensor *c = tl_tanh(tl_conv2d(x, w, bias, 2, 1, 1, 1));                   /* [2, 4, 5, 8] */
  tl_tensor *p = tl_add(tl_max_pool2d(c, 2, 2, 2, 2), tl_avg_pool2d(c, 2, 2, 2, 2)); /* [2, 4, 2, 4] */
  int64_t idx[8] = {1, 3, 1, 4, 0, 2, 2, 1};
  tl_tensor *ids = tl_from_data(ctx, TL_I64, 1, (int64_t[]){8}, idx);
  tl_tensor *logits = tl_add(tl_reshape(p, 2, (int64_t[]){8, 8}), tl_matmul(tl_embedding(emb, ids), tl_ones(ctx, TL_F64, 2, (int64_t[]){6, 8})));
  int64_t tgt[8] = {0, 7, 3, 3, 5, 1, 6, 2};
  tl_tensor *loss = tl_cross_entropy(logits, tl_from_data(ctx, TL_I64, 1, (int64_t[]){8}, tgt));
  int64_t n = 0;
  int st = tl_backward(loss, NULL) != TL_OK;
  tl_tensor *parts[] = {loss, tl_grad(x), tl_grad(w), tl_grad(bias), tl_grad(emb)};
  for (int i = 0; !st && i < 5; i++) {
    int64_t k = tl_numel(parts[i]);
    if (n + k > cap || tl_to_host(tl_cast(parts[i], TL_F64), out + n, sizeof(double) * (size_t)k)) st = 1;
    n += k;
  }
  if (st) printf("  %s: %s\n", backend, tl_last_error(ctx));
  TEST_SHUTDOWN(ctx);
  return st ? -1 : (int)n;
}

TEST(opencl_conv_pool_and_gradients_match_the_interpreter) {
  tl_ctx *probe = opencl_ctx();
  if (!probe) return;
  tl_shutdown(probe);
  enum { CAP = 4096 };
  double *want = malloc(sizeof(double) * CAP), *got = malloc(sizeof(double) * CAP);
  int n = conv_program("interp", want, CAP), m = conv_program(device(), got, CAP);
  CHECK(n > 400);
  CHECK_INT(m, n);
  for (int i = 0; i < n && m == n; i++) CHECK_NEAR(got[i], want[i], 1e-10 * (1 + fabs(want[i])));
  free(want), free(got);
}

/* an f32 convolution forward, which a GPU runs as an implicit GEMM (64 filters x 128
 * pixels a group): filters past a block (70), K = C kh kw not a multiple of the step
 * (27, 40), pixels past a block, strides and paddings on each side; against a double
 * loop */
static void conv_forward_case(const int64_t *xs, const int64_t *ws, int sh, int sw, int ph, int pw) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], KH = ws[2], KW = ws[3];
  int64_t OH = (H + 2 * ph - KH) / sh + 1, OW = (W + 2 * pw - KW) / sw + 1, ny = N * O * OH * OW;
  double *x = malloc(sizeof(double) * (size_t)(N * C * H * W)), *w = malloc(sizeof(double) * (size_t)(O * C * KH * KW));
  double *got = malloc(sizeof(double) * (size_t)ny);
  tl_tensor *tx = random_tensor(ctx, TL_F32, 4, xs, x), *tw = random_tensor(ctx, TL_F32, 4, ws, w);
  read_f64(tl_conv2d(tx, tw, NULL, sh, sw, ph, pw), got, ny);
  int bad = 0;
  for (int64_t n = 0; n < N && !bad; n++)
    for (int64_t o = 0; o < O && !bad; o++)
      for (int64_t i = 0; i < OH && !bad; i++)
        for (int64_t j = 0; j < OW && !bad; j++) {
          double want = 0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t ki = 0; ki < KH; ki++)
              for (int64_t kj = 0; kj < KW; kj++) {
                int64_t y = i * sh + ki - ph, xx = j * sw + kj - pw;
                if (y >= 0 && y < H && xx >= 0 && xx < W)
                  want += w[((o * C + c) * KH + ki) * KW + kj] * x[((n * C + c) * H + y) * W + xx];
              }
          double g = got[((n * O + o) * OH + i) * OW + j];
          if (fabs(g - want) > 1e-5 * (1 + (double)(C * KH * KW))) {
            tl_test_fail(__FILE__, __LINE__, "conv %lldx%lldx%lldx%lld * %lldx%lldx%lldx%lld: y[%lld,%lld,%lld,%lld] = %.9g, want %.9g",
                         (long long)N, (long long)C, (long long)H, (long long)W, (long long)O, (long long)C, (long long)KH,
                         (long long)KW, (long long)n, (long long)o, (long long)i, (long long)j, g, want);
            bad = 1;
          }
        }
  free(x), free(w), free(got);
  TEST_SHUTDOWN(ctx);
}

static void conv_forward_cases(void) {
  conv_forward_case((int64_t[]){2, 3, 9, 8}, (int64_t[]){70, 3, 3, 3}, 2, 1, 1, 1);
  conv_forward_case((int64_t[]){3, 5, 17, 19}, (int64_t[]){6, 5, 2, 4}, 1, 1, 0, 2);
  conv_forward_case((int64_t[]){1, 64, 14, 14}, (int64_t[]){64, 64, 3, 3}, 1, 1, 1, 1);
}

TEST(opencl_conv_forward_f32_on_both_targets) {
  char *saved = tl_test_env_save("TL_OPENCL_TARGET");
  setenv("TL_OPENCL_TARGET", "cpu", 1);
  conv_forward_cases();
  setenv("TL_OPENCL_TARGET", "gpu", 1);
  conv_forward_cases();
  tl_test_env_restore("TL_OPENCL_TARGET", saved);
}

/* realize_many writes several results in one kernel; rand draws the same Philox stream
 * on every backend, bit for bit */
TEST(opencl_realize_many_and_random_streams) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  tl_ctx *cpu = tl_init();
  int64_t shape[2] = {33, 65};
  tl_manual_seed(ctx, 7);
  tl_manual_seed(cpu, 7);
  tl_tensor *r = tl_rand(ctx, TL_F32, 2, shape), *rc = tl_rand(cpu, TL_F32, 2, shape);
  tl_tensor *outs[3] = {tl_exp(r), tl_mul_scalar(r, 3), tl_sum(r, 1, (int[]){1}, 0)};
  CHECK_INT(tl_realize_many(3, outs), TL_OK);
  float *a = malloc(sizeof(float) * 33 * 65), *b = malloc(sizeof(float) * 33 * 65);
  CHECK_INT(tl_to_host(r, a, sizeof(float) * 33 * 65), TL_OK);
  CHECK_INT(tl_to_host(rc, b, sizeof(float) * 33 * 65), TL_OK);
  CHECK(memcmp(a, b, sizeof(float) * 33 * 65) == 0);
  float e[33 * 65], s[33];
  CHECK_INT(tl_to_host(outs[0], e, sizeof e), TL_OK);
  CHECK_INT(tl_to_host(outs[2], s, sizeof s), TL_OK);
  for (int i = 0; i < 33 * 65; i++) CHECK_NEAR(e[i], exp((double)a[i]), 1e-6 * exp((double)a[i]));
  for (int i = 0; i < 33; i++) {
    double want = 0;
    for (int j = 0; j < 65; j++) want += a[i * 65 + j];
    CHECK_NEAR(s[i], want, 1e-4);
  }
  free(a), free(b);
  TEST_SHUTDOWN(cpu);
  TEST_SHUTDOWN(ctx);
}

/* the host reads and writes device buffers: data_mut's writes reach the next kernel,
 * item and format read results, a view reads its part */
TEST(opencl_host_access) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  tl_tensor *x = tl_arange(ctx, TL_F32, 0, 6, 1);
  float *w = tl_data_mut(x);
  CHECK(w != NULL);
  if (!w) return;
  CHECK_NEAR(w[5], 5, 0);
  w[5] = 50;
  double v;
  CHECK_INT(tl_item(tl_sum(tl_mul_scalar(x, 2), 0, NULL, 0), &v), TL_OK);
  CHECK_NEAR(v, 2 * (0 + 1 + 2 + 3 + 4 + 50), 1e-4);
  const float *r = tl_data(tl_slice(x, 0, 2, 5, 1));
  CHECK(r && r[0] == 2 && r[2] == 4);
  char *s = tl_format(tl_reshape(x, 2, (int64_t[]){2, 3}));
  CHECK_STR(s, "[[ 0.  1.  2.]\n [ 3.  4. 50.]]");
  tl_free(s);
  TEST_SHUTDOWN(ctx);
}

/* a training loop: after its first steps, no device allocation (the size-class cache
 * serves every buffer); every buffer is gone when the tensors are */
TEST(opencl_training_loop_allocates_nothing_after_warm_up) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  tl_scope *model = tl_scope_new(ctx, "model");
  tl_scope_enter(model);
  tl_tensor *w1 = tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){16, 32}, 16);
  tl_tensor *w2 = tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){32, 4}, 32);
  tl_tensor *params[2] = {w1, w2};
  tl_optimizer *opt = tl_adam(2, params, 1e-2, 0.9, 0.999, 1e-8, 0);
  tl_scope_leave(model);
  double first = 0, last = 0;
  uint64_t allocs_after_warmup = 0;
  for (int step = 0; step < 8; step++) {
    tl_scope *s = tl_scope_begin(ctx, "step");
    tl_tensor *x = tl_rand(ctx, TL_F32, 2, (int64_t[]){64, 16});
    tl_tensor *y = tl_sum(x, 1, (int[]){1}, 1);
    tl_tensor *pred = tl_matmul(tl_relu(tl_matmul(x, w1)), w2);
    tl_tensor *loss = tl_mse_loss(tl_sum(pred, 1, (int[]){1}, 1), y);
    CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
    CHECK_INT(tl_backward(loss, NULL), TL_OK);
    CHECK_INT(tl_optimizer_step(opt), TL_OK);
    double v = 0;
    CHECK_INT(tl_item(loss, &v), TL_OK);
    if (step == 0) first = v;
    last = v;
    tl_scope_end(s);
    if (step == 2) allocs_after_warmup = tl_get_stats(ctx).device_allocs;
  }
  CHECK(last < first); /* it learns */
  CHECK_INT((int)(tl_get_stats(ctx).device_allocs - allocs_after_warmup), 0);
  CHECK(tl_get_stats(ctx).realize_replays > 10); /* the steps after the first replay its kernels */
  tl_optimizer_free(opt);
  tl_scope_free(model);
  tl_stats st = tl_get_stats(ctx);
  CHECK_INT((int)st.live_buffers, 0);
  CHECK(st.device_buffers > 0 && st.device_bytes == st.device_cached_bytes); /* only the cache's */
  TEST_SHUTDOWN(ctx);
}

/* operands on different backends are an error naming both; device memory running out
 * is TL_ERR_NOMEM with nothing leaked */
TEST(opencl_mixed_backends_and_out_of_memory) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  float v[3] = {1, 2, 3};
  int64_t n = 3;
  CHECK_INT(tl_set_backend(ctx, "cpu"), TL_OK);
  tl_tensor *host = tl_from_data(ctx, TL_F32, 1, &n, v);
  CHECK_INT(tl_set_backend(ctx, "opencl"), TL_OK);
  tl_tensor *dev = tl_from_data(ctx, TL_F32, 1, &n, v);
  CHECK_INT(tl_realize(tl_add(host, dev)), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(ctx), "operands on different backends: opencl and cpu (move one with .to(\"opencl\"))");
  CHECK_INT(tl_set_backend(ctx, "cpu"), TL_OK);
  CHECK_INT(tl_realize(tl_add(host, dev)), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(ctx), "operands on different backends: cpu and opencl (move one with .to(\"cpu\"))");
  CHECK_INT(tl_set_backend(ctx, "opencl"), TL_OK);
  int64_t huge = (int64_t)1 << 40; /* 4 TiB of f32 */
  CHECK_INT(tl_realize(tl_exp(tl_zeros(ctx, TL_F32, 1, &huge))), TL_ERR_NOMEM);
  CHECK_CONTAINS(tl_last_error(ctx), "out of memory");
  float got[3];
  CHECK_INT(tl_to_host(tl_add(dev, dev), got, sizeof got), TL_OK); /* still works */
  CHECK(got[0] == 2 && got[2] == 6);
  TEST_SHUTDOWN(ctx);
}

/* .npy files save from and load to device buffers */
TEST(opencl_save_and_load) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  char path[] = "/tmp/tl_opencl_XXXXXX.npy";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  close(fd);
  tl_tensor *x = tl_mul_scalar(tl_arange(ctx, TL_F64, 0, 5, 1), 1.5);
  CHECK_INT(tl_save_npy(x, path), TL_OK);
  tl_tensor *y = tl_load_npy(ctx, path);
  double got[5];
  CHECK_INT(tl_to_host(tl_add(y, y), got, sizeof got), TL_OK);
  for (int i = 0; i < 5; i++) CHECK_NEAR(got[i], 3.0 * i, 0);
  unlink(path);
  TEST_SHUTDOWN(ctx);
}

/* t.to(name) copies values between backends; t.device() says where they are */
TEST(opencl_to_and_device) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  float v[4] = {1, -2, 3, -4};
  int64_t n = 4;
  tl_tensor *dev = tl_from_data(ctx, TL_F32, 1, &n, v);
  CHECK_STR(tl_device(dev), device());
  tl_tensor *lazy = tl_mul_scalar(dev, 2);
  CHECK_STR(tl_device(lazy), device()); /* where it will be computed */
  tl_tensor *host = tl_to(lazy, "cpu");
  CHECK(host != NULL);
  CHECK_STR(tl_device(host), "cpu");
  CHECK_INT(tl_set_backend(ctx, "cpu"), TL_OK);
  float got[4];
  CHECK_INT(tl_to_host(tl_abs(host), got, sizeof got), TL_OK); /* computed on cpu */
  CHECK(got[0] == 2 && got[1] == 4 && got[3] == 8);
  tl_tensor *back = tl_to(tl_add_scalar(host, 1), device());
  CHECK_STR(tl_device(back), device());
  CHECK_INT(tl_set_backend(ctx, device()), TL_OK);
  CHECK_INT(tl_to_host(tl_mul(back, dev), got, sizeof got), TL_OK);
  CHECK(got[0] == 3 && got[1] == 6 && got[2] == 21 && got[3] == 28);
  CHECK(tl_to(back, device()) != NULL); /* already there: shared */
  CHECK(tl_to(back, "tpu") == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "unknown backend 'tpu'");
  TEST_SHUTDOWN(ctx);
}

/* the gradient flows back through to(): a parameter on the cpu, used on the device,
 * gets on the cpu the gradient sum(tanh(w)^2)' = 2 tanh(w) (1 - tanh(w)^2), twice over
 * (it is used twice: once moved, once as a moved and scaled copy) */
TEST(opencl_gradient_through_to) {
  tl_ctx *ctx = opencl_ctx();
  if (!ctx) return;
  CHECK_INT(tl_set_backend(ctx, "cpu"), TL_OK);
  double v[5] = {-1.5, -0.2, 0, 0.7, 2};
  int64_t n = 5;
  tl_tensor *w = tl_from_data(ctx, TL_F64, 1, &n, v);
  tl_set_requires_grad(w, 1);
  CHECK_INT(tl_set_backend(ctx, device()), TL_OK);
  tl_tensor *wd = tl_to(w, device());
  CHECK_STR(tl_device(wd), device());
  tl_tensor *t = tl_tanh(wd), *loss = tl_add(tl_sum(tl_mul(t, t), 0, NULL, 0), tl_sum(tl_mul_scalar(tl_mul(t, t), 1), 0, NULL, 0));
  CHECK_INT(tl_backward(loss, NULL), TL_OK);
  tl_tensor *g = tl_grad(w);
  CHECK(g != NULL);
  if (!g) return;
  CHECK_STR(tl_device(g), "cpu");
  CHECK_INT(tl_set_backend(ctx, "cpu"), TL_OK);
  double got[5];
  CHECK_INT(tl_to_host(g, got, sizeof got), TL_OK);
  for (int i = 0; i < 5; i++) {
    double th = tanh(v[i]);
    CHECK_NEAR(got[i], 2 * 2 * th * (1 - th * th), 1e-12);
  }
  TEST_SHUTDOWN(ctx);
}
