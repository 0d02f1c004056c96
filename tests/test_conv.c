/* test_conv.c — tl_conv2d, tl_max_pool2d and tl_avg_pool2d: values against naive
 * loops written here in double over random shapes (strides 1 and 2, padding 0 and 1,
 * with and without bias, non-square inputs and kernels), gradients of every input
 * against central finite differences in f64, the message of every bad input, and a
 * small CNN trained on generated data. Every test ends with the leak check. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

static uint64_t mix(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t *s, double lo, double hi) { return lo + (hi - lo) * (double)(mix(s) >> 11) * 0x1p-53; }
static int64_t pick(uint64_t *s, int64_t lo, int64_t hi) { return lo + (int64_t)(mix(s) % (uint64_t)(hi - lo + 1)); }

static double *random_values(uint64_t *s, int64_t n) {
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = uniform(s, -2, 2);
  return v;
}

/* one convolution or pooling problem */
typedef struct {
  int kind; /* 0 conv2d, 1 max_pool2d, 2 avg_pool2d */
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw;
  int has_bias;
  double *x, *k, *b; /* x [n, c, h, w], k [o, c, kh, kw], b [o] */
} conv_case;

static int64_t out_h(const conv_case *p) { return (p->h + 2 * p->ph - p->kh) / p->sh + 1; }
static int64_t out_w(const conv_case *p) { return (p->w + 2 * p->pw - p->kw) / p->sw + 1; }
static int64_t x_numel(const conv_case *p) { return p->n * p->c * p->h * p->w; }
static int64_t k_numel(const conv_case *p) { return p->o * p->c * p->kh * p->kw; }
static int64_t y_numel(const conv_case *p) { return p->n * (p->kind ? p->c : p->o) * out_h(p) * out_w(p); }

/* the reference: the definition, looped */
static void naive(const conv_case *p, double *y) {
  int64_t oh = out_h(p), ow = out_w(p), oc = p->kind ? p->c : p->o;
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t o = 0; o < oc; o++)
      for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
          double acc = p->kind == 1 ? -INFINITY : p->kind == 0 && p->has_bias ? p->b[o] : 0;
          for (int64_t ki = 0; ki < p->kh; ki++)
            for (int64_t kj = 0; kj < p->kw; kj++) {
              int64_t r = i * p->sh + ki - p->ph, q = j * p->sw + kj - p->pw;
              if (p->kind) {
                double v = p->x[((n * p->c + o) * p->h + r) * p->w + q];
                acc = p->kind == 1 ? fmax(acc, v) : acc + v / (double)(p->kh * p->kw);
                continue;
              }
              if (r < 0 || r >= p->h || q < 0 || q >= p->w) continue;
              for (int64_t c = 0; c < p->c; c++)
                acc += p->x[((n * p->c + c) * p->h + r) * p->w + q] * p->k[((o * p->c + c) * p->kh + ki) * p->kw + kj];
            }
          y[((n * oc + o) * oh + i) * ow + j] = acc;
        }
}

/* the operation on tensors of the case's values (requiring grad when asked) */
static tl_tensor *build(tl_ctx *ctx, const conv_case *p, int requires, tl_tensor **leaves) {
  int64_t xs[4] = {p->n, p->c, p->h, p->w}, ks[4] = {p->o, p->c, p->kh, p->kw}, bs[1] = {p->o};
  leaves[0] = tl_from_data(ctx, TL_F64, 4, xs, p->x);
  leaves[1] = p->kind == 0 ? tl_from_data(ctx, TL_F64, 4, ks, p->k) : NULL;
  leaves[2] = p->kind == 0 && p->has_bias ? tl_from_data(ctx, TL_F64, 1, bs, p->b) : NULL;
  for (int i = 0; i < 3 && requires; i++)
    if (leaves[i]) tl_set_requires_grad(leaves[i], 1);
  if (p->kind == 1) return tl_max_pool2d(leaves[0], p->kh, p->kw, p->sh, p->sw);
  if (p->kind == 2) return tl_avg_pool2d(leaves[0], p->kh, p->kw, p->sh, p->sw);
  return tl_conv2d(leaves[0], leaves[1], leaves[2], p->sh, p->sw, p->ph, p->pw);
}

/* f = sum(out * wts), wts fixed pseudo-random: every output element counts */
static tl_tensor *weighted(tl_ctx *ctx, tl_tensor *y, const double *wts) {
  if (!y) return NULL;
  int64_t shape[4];
  for (int i = 0; i < 4; i++) shape[i] = tl_dim(y, i);
  return tl_sum(tl_mul(y, tl_from_data(ctx, TL_F64, 4, shape, wts)), 0, NULL, 0);
}

static double loss_at(tl_ctx *ctx, const conv_case *p, const double *wts) {
  double v = NAN;
  tl_scope *s = tl_scope_begin(ctx, "loss_at");
  tl_tensor *leaves[3];
  if (tl_item(weighted(ctx, build(ctx, p, 0, leaves), wts), &v) != TL_OK)
    tl_test_fail(__FILE__, __LINE__, "loss: %s", tl_last_error(ctx));
  tl_scope_end(s);
  return v;
}

static void random_case(uint64_t *s, conv_case *p, int kind) {
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->n = pick(s, 1, 2);
  p->c = pick(s, 1, 3);
  p->o = kind ? p->c : pick(s, 1, 3);
  p->kh = pick(s, 1, 3);
  p->kw = pick(s, 1, 3);
  p->sh = pick(s, 1, 2);
  p->sw = pick(s, 1, 2);
  p->ph = kind ? 0 : pick(s, 0, 1);
  p->pw = kind ? 0 : pick(s, 0, 1);
  p->h = pick(s, p->kh, 6);
  p->w = pick(s, p->kw, 7);
  p->has_bias = kind == 0 && (mix(s) & 1);
  p->x = random_values(s, x_numel(p));
  p->k = random_values(s, k_numel(p));
  p->b = random_values(s, p->o);
}

static void free_case(conv_case *p) {
  free(p->x);
  free(p->k);
  free(p->b);
}

static const char *describe(const conv_case *p, char *buf, size_t len) {
  static const char *names[] = {"conv2d", "max_pool2d", "avg_pool2d"};
  snprintf(buf, len, "%s x [%lld,%lld,%lld,%lld] k [%lld,%lld,%lld,%lld] stride %lldx%lld pad %lldx%lld%s",
           names[p->kind], (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w, (long long)p->o,
           (long long)p->c, (long long)p->kh, (long long)p->kw, (long long)p->sh, (long long)p->sw, (long long)p->ph,
           (long long)p->pw, p->has_bias ? " bias" : "");
  return buf;
}

static void check_values_case(tl_ctx *ctx, const conv_case *p) {
  char what[200];
  int64_t ny = y_numel(p);
  double *want = malloc(sizeof(double) * (size_t)ny), *got = malloc(sizeof(double) * (size_t)ny);
  naive(p, want);
  tl_scope *s = tl_scope_begin(ctx, "values");
  tl_tensor *leaves[3], *y = build(ctx, p, 0, leaves);
  int64_t oc = p->kind ? p->c : p->o;
  if (!y || tl_ndim(y) != 4 || tl_dim(y, 0) != p->n || tl_dim(y, 1) != oc || tl_dim(y, 2) != out_h(p) ||
      tl_dim(y, 3) != out_w(p) || tl_to_host(y, got, sizeof(double) * (size_t)ny) != TL_OK) {
    tl_test_fail(__FILE__, __LINE__, "%s: %s", describe(p, what, sizeof what), y ? "wrong shape" : tl_last_error(ctx));
  } else {
    for (int64_t i = 0; i < ny; i++)
      if (!(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])))) {
        tl_test_fail(__FILE__, __LINE__, "%s: element %lld = %.15g, expected %.15g", describe(p, what, sizeof what),
                     (long long)i, got[i], want[i]);
        break;
      }
  }
  tl_scope_end(s);
  free(want);
  free(got);
}

/* the analytic gradient of every leaf against central differences of the engine's f */
static void check_grads_case(tl_ctx *ctx, conv_case *p) {
  char what[200];
  int64_t ny = y_numel(p);
  uint64_t ws = 99;
  double *wts = random_values(&ws, ny);
  double *vals[3] = {p->x, p->kind == 0 ? p->k : NULL, p->kind == 0 && p->has_bias ? p->b : NULL};
  int64_t counts[3] = {x_numel(p), k_numel(p), p->o};
  tl_scope *s = tl_scope_begin(ctx, "grads");
  tl_tensor *leaves[3];
  tl_status st = tl_backward(weighted(ctx, build(ctx, p, 1, leaves), wts), NULL);
  if (st != TL_OK) tl_test_fail(__FILE__, __LINE__, "%s: backward: %s", describe(p, what, sizeof what), tl_last_error(ctx));
  tl_set_grad_enabled(ctx, 0);
  for (int l = 0; l < 3 && st == TL_OK; l++) {
    if (!vals[l]) continue;
    double *g = malloc(sizeof(double) * (size_t)counts[l]);
    if (tl_to_host(tl_grad(leaves[l]), g, sizeof(double) * (size_t)counts[l]) != TL_OK) {
      tl_test_fail(__FILE__, __LINE__, "%s: grad: %s", describe(p, what, sizeof what), tl_last_error(ctx));
      free(g);
      break;
    }
    for (int64_t j = 0; j < counts[l]; j++) {
      double v = vals[l][j], h = 1e-6;
      vals[l][j] = v + h;
      double fp = loss_at(ctx, p, wts);
      vals[l][j] = v - h;
      double fm = loss_at(ctx, p, wts);
      vals[l][j] = v;
      double want = (fp - fm) / (2 * h);
      if (!(fabs(g[j] - want) <= 1e-5 * (1 + fabs(want)))) {
        tl_test_fail(__FILE__, __LINE__, "%s: d/d leaf %d [%lld] = %.12g, finite differences give %.12g",
                     describe(p, what, sizeof what), l, (long long)j, g[j], want);
        break;
      }
    }
    free(g);
  }
  tl_set_grad_enabled(ctx, 1);
  tl_scope_end(s);
  free(wts);
}

TEST(conv2d_values_random) {
  tl_ctx *ctx = tl_init();
  uint64_t s = 2024;
  for (int i = 0; i < 24; i++) {
    conv_case p;
    random_case(&s, &p, 0);
    if (i == 0) p.sh = p.sw = 1, p.ph = p.pw = 0; /* make sure the plain case is there */
    if (i == 1) p.sh = p.sw = 2, p.ph = p.pw = 1;
    check_values_case(ctx, &p);
    free_case(&p);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(conv_pool_values_random) {
  tl_ctx *ctx = tl_init();
  uint64_t s = 77;
  for (int i = 0; i < 24; i++) {
    conv_case p;
    random_case(&s, &p, 1 + i % 2);
    check_values_case(ctx, &p);
    free_case(&p);
  }
  TEST_SHUTDOWN(ctx);
}

/* stride 2 with padding 1, bias, non-square: the case most likely to be off by one */
TEST(conv2d_grads) {
  tl_ctx *ctx = tl_init();
  uint64_t s = 5;
  conv_case cases[] = {
      {.kind = 0, .n = 2, .c = 2, .h = 5, .w = 4, .o = 3, .kh = 2, .kw = 3, .sh = 2, .sw = 1, .ph = 1, .pw = 1, .has_bias = 1},
      {.kind = 0, .n = 1, .c = 3, .h = 4, .w = 6, .o = 2, .kh = 3, .kw = 2, .sh = 1, .sw = 2, .ph = 0, .pw = 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    conv_case *p = &cases[i];
    p->x = random_values(&s, x_numel(p));
    p->k = random_values(&s, k_numel(p));
    p->b = random_values(&s, p->o);
    check_grads_case(ctx, p);
    free_case(p);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(conv_pool_grads) {
  tl_ctx *ctx = tl_init();
  uint64_t s = 6;
  conv_case cases[] = {
      {.kind = 1, .n = 2, .c = 2, .h = 5, .w = 4, .kh = 2, .kw = 2, .sh = 2, .sw = 2},
      {.kind = 1, .n = 1, .c = 2, .h = 4, .w = 5, .kh = 3, .kw = 2, .sh = 1, .sw = 1}, /* overlapping windows */
      {.kind = 2, .n = 2, .c = 2, .h = 5, .w = 4, .kh = 2, .kw = 3, .sh = 2, .sw = 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    conv_case *p = &cases[i];
    p->o = p->c;
    p->x = random_values(&s, x_numel(p));
    p->k = random_values(&s, 1);
    p->b = random_values(&s, 1);
    check_grads_case(ctx, p);
    free_case(p);
  }
  TEST_SHUTDOWN(ctx);
}

/* a hand-checked case: 1x1x3x3 input, 1x1x2x2 kernel */
TEST(conv2d_small_by_hand) {
  tl_ctx *ctx = tl_init();
  double out[9];
  tl_tensor *x = tl_from_data(ctx, TL_F32, 4, (int64_t[]){1, 1, 3, 3}, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
  tl_tensor *k = tl_from_data(ctx, TL_F32, 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 0, 0, -1});
  tl_tensor *y = tl_cast(tl_conv2d(x, k, NULL, 1, 1, 0, 0), TL_F64);
  CHECK(tl_to_host(y, out, 4 * sizeof(double)) == TL_OK);
  for (int i = 0; i < 4; i++) CHECK_NEAR(out[i], -4, 1e-6);
  tl_tensor *b = tl_from_data(ctx, TL_F32, 1, (int64_t[]){1}, (float[]){0.5f});
  y = tl_cast(tl_conv2d(x, k, b, 2, 2, 1, 1), TL_F64); /* padded 5x5, stride 2: 2x2 */
  CHECK_INT(tl_dim(y, 2), 2);
  CHECK(tl_to_host(y, out, 4 * sizeof(double)) == TL_OK);
  CHECK_NEAR(out[0], -1 + 0.5, 1e-6); /* 0*1 - x[0][0] */
  CHECK_NEAR(out[1], -3 + 0.5, 1e-6);
  CHECK_NEAR(out[2], -7 + 0.5, 1e-6);
  CHECK_NEAR(out[3], 5 - 9 + 0.5, 1e-6);
  y = tl_cast(tl_max_pool2d(x, 2, 2, 1, 1), TL_F64);
  CHECK(tl_to_host(y, out, 4 * sizeof(double)) == TL_OK);
  CHECK_NEAR(out[0], 5, 0);
  CHECK_NEAR(out[3], 9, 0);
  y = tl_cast(tl_avg_pool2d(x, 2, 2, 1, 1), TL_F64);
  CHECK(tl_to_host(y, out, 4 * sizeof(double)) == TL_OK);
  CHECK_NEAR(out[0], 3, 1e-6);
  CHECK_NEAR(out[1], 4, 1e-6);
  TEST_SHUTDOWN(ctx);
}

#define CHECK_FAILS(expr, status, text)           \
  do {                                            \
    tl_clear_error(ctx);                          \
    CHECK((expr) == NULL);                        \
    CHECK_INT(tl_last_status(ctx), status);       \
    CHECK_CONTAINS(tl_last_error(ctx), text);     \
  } while (0)

TEST(conv2d_errors) {
  tl_ctx *ctx = tl_init();
  tl_tensor *x = tl_zeros(ctx, TL_F32, 4, (int64_t[]){1, 2, 3, 3});
  tl_tensor *x3 = tl_zeros(ctx, TL_F32, 3, (int64_t[]){2, 3, 3});
  tl_tensor *xi = tl_zeros(ctx, TL_I32, 4, (int64_t[]){1, 2, 3, 3});
  tl_tensor *k = tl_zeros(ctx, TL_F32, 4, (int64_t[]){4, 2, 2, 2});
  tl_tensor *k3 = tl_zeros(ctx, TL_F32, 4, (int64_t[]){4, 3, 2, 2});
  tl_tensor *big = tl_zeros(ctx, TL_F32, 4, (int64_t[]){4, 2, 4, 2});
  tl_tensor *b = tl_zeros(ctx, TL_F32, 1, (int64_t[]){3});
  CHECK_FAILS(tl_conv2d(x3, k, NULL, 1, 1, 0, 0), TL_ERR_SHAPE, "conv2d: input must be [N, C, H, W], got [2, 3, 3]");
  CHECK_FAILS(tl_conv2d(xi, k, NULL, 1, 1, 0, 0), TL_ERR_DTYPE, "conv2d: input must be f32 or f64, got i32");
  CHECK_FAILS(tl_conv2d(x, k3, NULL, 1, 1, 0, 0), TL_ERR_SHAPE,
              "conv2d: input [1, 2, 3, 3] has 2 channels, the kernel [4, 3, 2, 2] expects 3");
  CHECK_FAILS(tl_conv2d(x, big, NULL, 1, 1, 0, 0), TL_ERR_SHAPE,
              "conv2d: kernel 4 x 2 is bigger than the padded input 3 x 3");
  CHECK(tl_conv2d(x, big, NULL, 1, 1, 1, 0) != NULL); /* padding makes room */
  CHECK_FAILS(tl_conv2d(x, k, NULL, 0, 1, 0, 0), TL_ERR_ARG, "conv2d: stride must be positive, got 0 x 1");
  CHECK_FAILS(tl_conv2d(x, k, NULL, 1, 1, -1, 0), TL_ERR_ARG, "conv2d: padding must be >= 0");
  CHECK_FAILS(tl_conv2d(x, k, b, 1, 1, 0, 0), TL_ERR_SHAPE, "conv2d: bias must be [4] (the kernel's out channels), got [3]");
  CHECK_FAILS(tl_conv2d(x, x3, NULL, 1, 1, 0, 0), TL_ERR_SHAPE, "conv2d: kernel must be [out, in, kh, kw], got [2, 3, 3]");
  CHECK_FAILS(tl_max_pool2d(x, 4, 1, 1, 1), TL_ERR_SHAPE, "max_pool2d: kernel 4 x 1 is bigger than the padded input 3 x 3");
  CHECK_FAILS(tl_avg_pool2d(x, 0, 1, 1, 1), TL_ERR_ARG, "avg_pool2d: kernel size must be in [1, 256], got 0 x 1");
  CHECK_FAILS(tl_max_pool2d(x, 2, 2, 1, -2), TL_ERR_ARG, "max_pool2d: stride must be positive, got 1 x -2");
  CHECK_FAILS(tl_avg_pool2d(x3, 2, 2, 1, 1), TL_ERR_SHAPE, "avg_pool2d: input must be [N, C, H, W], got [2, 3, 3]");
  tl_clear_error(ctx);
  CHECK(tl_conv2d(NULL, k, NULL, 1, 1, 0, 0) == NULL);
  CHECK_INT(tl_last_status(ctx), TL_OK); /* a NULL input keeps the message as it was */
  TEST_SHUTDOWN(ctx);
}

/* ---- a small CNN on generated images ------------------------------------------------ */
#define CNN_N 96 /* images */
#define CNN_S 8  /* 8x8 */
#define CNN_CLASSES 3
#define CNN_STEPS 60

/* a horizontal (class 0), vertical (1) or diagonal (2) stroke of 4 to 6 pixels at a
 * random place, on noise */
static void make_strokes(float *x, int64_t *y) {
  uint64_t s = 3;
  for (int i = 0; i < CNN_N; i++) {
    int c = i % CNN_CLASSES, len = (int)pick(&s, 4, 6);
    float *img = x + i * CNN_S * CNN_S;
    for (int p = 0; p < CNN_S * CNN_S; p++) img[p] = (float)uniform(&s, -0.2, 0.2);
    int r = (int)pick(&s, 0, CNN_S - (c == 0 ? 1 : len)), q = (int)pick(&s, 0, CNN_S - (c == 1 ? 1 : len));
    for (int k = 0; k < len; k++) {
      int rr = r + (c == 0 ? 0 : k), qq = q + (c == 1 ? 0 : k);
      img[rr * CNN_S + qq] += 1.0f;
    }
    y[i] = c;
  }
}

typedef struct {
  tl_tensor *p[6]; /* conv1 w, b; conv2 w, b; linear w, b */
} cnn;

/* conv 1->4 3x3 pad 1, relu, max pool 2 (8 -> 4); conv 4->8 3x3 pad 1, relu, avg pool 2
 * (4 -> 2); linear 32 -> classes */
static tl_tensor *cnn_forward(const cnn *m, tl_tensor *x) {
  tl_tensor *h = tl_max_pool2d(tl_relu(tl_conv2d(x, m->p[0], m->p[1], 1, 1, 1, 1)), 2, 2, 2, 2);
  h = tl_avg_pool2d(tl_relu(tl_conv2d(h, m->p[2], m->p[3], 1, 1, 1, 1)), 2, 2, 2, 2);
  h = tl_reshape(h, 2, (int64_t[]){tl_dim(x, 0), 8 * 2 * 2});
  return tl_add(tl_matmul(h, m->p[4]), m->p[5]);
}

TEST(conv_cnn_trains) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 4);
  static float xs[CNN_N * CNN_S * CNN_S];
  static int64_t ys[CNN_N];
  make_strokes(xs, ys);
  tl_tensor *x = tl_from_data(ctx, TL_F32, 4, (int64_t[]){CNN_N, 1, CNN_S, CNN_S}, xs);
  tl_tensor *y = tl_from_data(ctx, TL_I64, 1, (int64_t[]){CNN_N}, ys);
  cnn m = {{tl_kaiming_normal(ctx, TL_F32, 4, (int64_t[]){4, 1, 3, 3}, 9), tl_zeros(ctx, TL_F32, 1, (int64_t[]){4}),
            tl_kaiming_normal(ctx, TL_F32, 4, (int64_t[]){8, 4, 3, 3}, 36), tl_zeros(ctx, TL_F32, 1, (int64_t[]){8}),
            tl_xavier_uniform(ctx, TL_F32, 2, (int64_t[]){32, CNN_CLASSES}, 32, CNN_CLASSES),
            tl_zeros(ctx, TL_F32, 1, (int64_t[]){CNN_CLASSES})}};
  for (int i = 1; i < 6; i += 2) CHECK_INT(tl_set_requires_grad(m.p[i], 1), TL_OK);
  tl_optimizer *opt = tl_adam(6, m.p, 0.02, 0.9, 0.999, 1e-8, 0);
  double first = NAN, last = NAN, hits = -1;
  for (int step = 0; step < CNN_STEPS; step++) {
    TL_SCOPE(ctx, s) {
      tl_tensor *loss = tl_cross_entropy(cnn_forward(&m, x), y);
      CHECK_INT(tl_item(loss, &last), TL_OK);
      CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
      CHECK_INT(tl_backward(loss, NULL), TL_OK);
      CHECK_INT(tl_optimizer_step(opt), TL_OK);
    }
    if (step == 0) first = last;
  }
  tl_set_grad_enabled(ctx, 0);
  TL_SCOPE(ctx, s) {
    CHECK_INT(tl_item(tl_sum(tl_eq(tl_argmax(cnn_forward(&m, x), 1, 0), y), 0, NULL, 0), &hits), TL_OK);
  }
  double acc = hits / CNN_N;
  printf("  cnn: loss %.4f -> %.4f, accuracy %.3f\n", first, last, acc);
  CHECK(last < 0.5 * first);
  CHECK(acc > 0.9);
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}
