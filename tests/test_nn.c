/* test_nn.c — the training building blocks: loss and layer values against numbers
 * computed here in double, their gradients through autograd, dropout and initializer
 * statistics, one optimizer step of each kind against PyTorch's formulas, and the
 * message of every bad input. Every test ends with the leak check. */
#include <stdlib.h>

#include "test.h"
#include "tl.h"

static tl_ctx *new_ctx(void) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 11);
  return ctx;
}

static tl_tensor *vec(tl_ctx *ctx, tl_dtype dt, int64_t n, const double *v) {
  tl_tensor *d = tl_from_data(ctx, TL_F64, 1, &n, v);
  return dt == TL_F64 ? d : tl_cast(d, dt);
}

static double item(tl_tensor *t) {
  double v = NAN;
  if (tl_item(t, &v) != TL_OK) return NAN;
  return v;
}

/* ---- losses ------------------------------------------------------------------ */
TEST(nn_mse_loss_value) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *p = vec(ctx, TL_F32, 4, (double[]){1, 2, 3, 4}), *t = vec(ctx, TL_F32, 4, (double[]){1.5, 2, 2, 6});
  CHECK_NEAR(item(tl_mse_loss(p, t)), (0.25 + 0 + 1 + 4) / 4, 1e-6);
  CHECK_INT(tl_ndim(tl_mse_loss(p, t)), 0);
  TEST_SHUTDOWN(ctx);
}

static const double ce_logits[2][3] = {{1, 2, 3}, {1, -1, 0.5}};

/* -log softmax(row)[k], in double */
static double ce_term(const double *row, int c, int k) {
  double m = row[0], s = 0;
  for (int j = 1; j < c; j++) m = fmax(m, row[j]);
  for (int j = 0; j < c; j++) s += exp(row[j] - m);
  return -(row[k] - m - log(s));
}

TEST(nn_cross_entropy_value_and_grad) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *logits = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, ce_logits);
  CHECK_INT(tl_set_requires_grad(logits, 1), TL_OK);
  int64_t tg[2] = {2, 0};
  int32_t tg32[2] = {2, 0};
  tl_tensor *t64 = tl_from_data(ctx, TL_I64, 1, (int64_t[]){2}, tg);
  tl_tensor *t32 = tl_from_data(ctx, TL_I32, 1, (int64_t[]){2}, tg32);
  double want = (ce_term(ce_logits[0], 3, 2) + ce_term(ce_logits[1], 3, 0)) / 2;
  tl_tensor *loss = tl_cross_entropy(logits, t64);
  CHECK_NEAR(item(loss), want, 1e-12);
  CHECK_NEAR(item(tl_cross_entropy(logits, t32)), want, 1e-12);
  CHECK_NEAR(item(tl_cross_entropy(tl_cast(logits, TL_F32), t32)), want, 1e-6);
  /* d loss / d logits = (softmax - one_hot) / N */
  CHECK_INT(tl_backward(loss, NULL), TL_OK);
  double g[6];
  for (int n = 0; n < 2; n++)
    for (int j = 0; j < 3; j++)
      g[n * 3 + j] = (exp(-ce_term(ce_logits[n], 3, j)) - (j == (int)tg[n])) / 2;
  tl_test_values(__FILE__, __LINE__, tl_grad(logits), g, 6, 1e-12);
  TEST_SHUTDOWN(ctx);
}

TEST(nn_binary_cross_entropy_value_grad_and_clamp) {
  tl_ctx *ctx = new_ctx();
  double pv[3] = {0.9, 0.2, 0.6}, tv[3] = {1, 0, 1};
  tl_tensor *p = vec(ctx, TL_F64, 3, pv), *t = vec(ctx, TL_F64, 3, tv);
  CHECK_INT(tl_set_requires_grad(p, 1), TL_OK);
  tl_tensor *loss = tl_binary_cross_entropy(p, t);
  CHECK_NEAR(item(loss), -(log(0.9) + log(0.8) + log(0.6)) / 3, 1e-12);
  CHECK_NEAR(item(tl_binary_cross_entropy(tl_cast(p, TL_F32), t)), -(log(0.9) + log(0.8) + log(0.6)) / 3, 1e-6);
  CHECK_INT(tl_backward(loss, NULL), TL_OK); /* d/dp = (p - t) / (p (1 - p)) / n */
  VALUES(tl_grad(p), 1e-12, (0.9 - 1) / (0.9 * 0.1) / 3, 0.2 / (0.2 * 0.8) / 3, (0.6 - 1) / (0.6 * 0.4) / 3);
  /* saturated probabilities stay finite: log is taken of 1e-7 at worst */
  tl_tensor *sat = vec(ctx, TL_F64, 2, (double[]){0, 1}), *wrong = vec(ctx, TL_F64, 2, (double[]){1, 0});
  CHECK_NEAR(item(tl_binary_cross_entropy(sat, wrong)), -log(1e-7), 1e-6);
  CHECK_NEAR(item(tl_binary_cross_entropy(sat, tl_sub(tl_ones(ctx, TL_F64, 1, (int64_t[]){2}), wrong))), 1e-7, 1e-9);
  TEST_SHUTDOWN(ctx);
}

/* ---- layers ------------------------------------------------------------------- */
TEST(nn_layer_norm_values) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 4}, (double[]){1, 2, 3, 4, 2, 2, 2, 6});
  tl_tensor *gamma = vec(ctx, TL_F64, 4, (double[]){1, 2, 1, 1}), *beta = vec(ctx, TL_F64, 4, (double[]){0, 0, 1, 0});
  double eps = 1e-5, r0 = 1 / sqrt(1.25 + eps), r1 = 1 / sqrt(3 + eps); /* variances 1.25 and 3 */
  VALUES(tl_layer_norm(x, NULL, NULL, eps), 1e-12, -1.5 * r0, -0.5 * r0, 0.5 * r0, 1.5 * r0, -r1, -r1, -r1, 3 * r1);
  VALUES(tl_layer_norm(x, gamma, beta, eps), 1e-12, -1.5 * r0, -1.0 * r0, 0.5 * r0 + 1, 1.5 * r0, -r1, -2 * r1,
         1 - r1, 3 * r1);
  VALUES(tl_layer_norm(x, NULL, beta, eps), 1e-12, -1.5 * r0, -0.5 * r0, 0.5 * r0 + 1, 1.5 * r0, -r1, -r1, 1 - r1,
         3 * r1);
  /* random rows of a 3-D input: each row has mean 0 and variance 1 */
  tl_tensor *y = tl_layer_norm(tl_mul_scalar(tl_randn(ctx, TL_F32, 3, (int64_t[]){2, 3, 64}), 5), NULL, NULL, 1e-5);
  int last = -1;
  tl_tensor *mean = tl_mean(y, 1, &last, 0), *var = tl_mean(tl_mul(y, y), 1, &last, 0);
  float m[6], v[6];
  CHECK_INT(tl_to_host(mean, m, sizeof m), TL_OK);
  CHECK_INT(tl_to_host(var, v, sizeof v), TL_OK);
  for (int i = 0; i < 6; i++) {
    CHECK_NEAR(m[i], 0, 1e-5);
    CHECK_NEAR(v[i], 1, 1e-4);
  }
  TEST_SHUTDOWN(ctx);
}

/* sum(layer_norm(x, gamma, beta) * r): a weighted sum so every output counts differently */
static double ln_objective(tl_ctx *ctx, tl_tensor *x, tl_tensor *gamma, tl_tensor *beta, tl_tensor *r) {
  double v = NAN;
  TL_SCOPE(ctx, s) { v = item(tl_sum(tl_mul(tl_layer_norm(x, gamma, beta, 1e-5), r), 0, NULL, 0)); }
  return v;
}

TEST(nn_layer_norm_grad_matches_finite_differences) {
  tl_ctx *ctx = new_ctx();
  double xv[6] = {0.3, -1.2, 2.0, 0.7, 0.1, -0.4}, gv[3] = {1.5, -0.5, 2}, bv[3] = {0.1, 0.2, 0.3};
  double rv[6] = {1, -2, 0.5, 3, 1, -1};
  tl_tensor *x = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, xv);
  tl_tensor *gamma = vec(ctx, TL_F64, 3, gv), *beta = vec(ctx, TL_F64, 3, bv);
  tl_tensor *r = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, rv);
  tl_tensor *leaves[3] = {x, gamma, beta};
  for (int i = 0; i < 3; i++) CHECK_INT(tl_set_requires_grad(leaves[i], 1), TL_OK);
  TL_SCOPE(ctx, s) {
    CHECK_INT(tl_backward(tl_sum(tl_mul(tl_layer_norm(x, gamma, beta, 1e-5), r), 0, NULL, 0), NULL), TL_OK);
  }
  double *vals[3] = {xv, gv, bv}, h = 1e-6;
  int64_t sizes[3] = {6, 3, 3};
  for (int which = 0; which < 3; which++) {
    double want[6], got[6];
    for (int64_t k = 0; k < sizes[which]; k++) { /* central differences, one element at a time */
      double keep = vals[which][k], f[2];
      for (int side = 0; side < 2; side++) {
        vals[which][k] = keep + (side ? -h : h);
        tl_tensor *moved = which ? vec(ctx, TL_F64, 3, vals[which])
                                 : tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, xv);
        f[side] = ln_objective(ctx, which == 0 ? moved : x, which == 1 ? moved : gamma, which == 2 ? moved : beta, r);
        tl_release(moved);
      }
      vals[which][k] = keep;
      want[k] = (f[0] - f[1]) / (2 * h);
    }
    CHECK_INT(tl_to_host(tl_grad(leaves[which]), got, sizeof(double) * (size_t)sizes[which]), TL_OK);
    for (int64_t k = 0; k < sizes[which]; k++) CHECK_NEAR(got[k], want[k], 1e-6);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(nn_embedding_rows_and_grad) {
  tl_ctx *ctx = new_ctx();
  double w[4][3];
  for (int v = 0; v < 4; v++)
    for (int d = 0; d < 3; d++) w[v][d] = 10 * v + d;
  tl_tensor *weight = tl_from_data(ctx, TL_F64, 2, (int64_t[]){4, 3}, w);
  CHECK_INT(tl_set_requires_grad(weight, 1), TL_OK);
  int32_t idx[4] = {3, 0, 1, 1};
  tl_tensor *ids = tl_from_data(ctx, TL_I32, 2, (int64_t[]){2, 2}, idx);
  tl_tensor *e = tl_embedding(weight, ids);
  CHECK_INT(tl_ndim(e), 3);
  CHECK_INT(tl_dim(e, 0), 2);
  CHECK_INT(tl_dim(e, 1), 2);
  CHECK_INT(tl_dim(e, 2), 3);
  VALUES(e, 0, 30, 31, 32, 0, 1, 2, 10, 11, 12, 10, 11, 12);
  /* a 0-d index gives one row of shape [D] */
  tl_tensor *one = tl_embedding(weight, tl_scalar(ctx, TL_I64, 2));
  CHECK_INT(tl_ndim(one), 1);
  VALUES(one, 0, 20, 21, 22);
  /* each row's gradient counts how often it was picked */
  CHECK_INT(tl_backward(tl_sum(e, 0, NULL, 0), NULL), TL_OK);
  VALUES(tl_grad(weight), 0, 1, 1, 1, 2, 2, 2, 0, 0, 0, 1, 1, 1);
  TEST_SHUTDOWN(ctx);
}

enum { BIG = 100000 };

/* the share of zeros in x, and whether every other element equals keep */
static double zero_share(const float *x, int64_t n, float keep, int *others_ok) {
  int64_t zeros = 0;
  *others_ok = 1;
  for (int64_t i = 0; i < n; i++) {
    if (x[i] == 0) zeros++;
    else if (fabsf(x[i] - keep) > 1e-6f) *others_ok = 0;
  }
  return (double)zeros / (double)n;
}

TEST(nn_dropout_statistics_and_seed) {
  tl_ctx *ctx = new_ctx();
  int64_t n = BIG;
  tl_tensor *x = tl_ones(ctx, TL_F32, 1, &n);
  float *a = malloc(sizeof(float) * BIG), *b = malloc(sizeof(float) * BIG);
  int ok = 0;
  tl_manual_seed(ctx, 42);
  CHECK_INT(tl_to_host(tl_dropout(x, 0.3, 1), a, sizeof(float) * BIG), TL_OK);
  CHECK_NEAR(zero_share(a, BIG, 1 / 0.7f, &ok), 0.3, 0.01);
  CHECK(ok); /* survivors scaled by 1 / (1 - p) */
  tl_manual_seed(ctx, 42); /* same seed, same call number: the same mask */
  CHECK_INT(tl_to_host(tl_dropout(x, 0.3, 1), b, sizeof(float) * BIG), TL_OK);
  CHECK(memcmp(a, b, sizeof(float) * BIG) == 0);
  CHECK_INT(tl_to_host(tl_dropout(x, 0.3, 1), b, sizeof(float) * BIG), TL_OK); /* the next call: another */
  CHECK(memcmp(a, b, sizeof(float) * BIG) != 0);
  CHECK_INT(tl_to_host(tl_dropout(x, 0.75, 1), b, sizeof(float) * BIG), TL_OK);
  CHECK_NEAR(zero_share(b, BIG, 4, &ok), 0.75, 0.01);
  CHECK(ok);
  /* not training, or p == 0: x's values in a new handle of the caller's scope */
  tl_tensor *same = tl_dropout(x, 0.5, 0), *zero_p = tl_dropout(x, 0, 1);
  CHECK(same && same != x && zero_p && zero_p != x);
  CHECK_NEAR(item(tl_sum(same, 0, NULL, 0)), BIG, 0);
  CHECK_NEAR(item(tl_sum(zero_p, 0, NULL, 0)), BIG, 0);
  tl_release(same);
  tl_release(zero_p);
  free(a);
  free(b);
  TEST_SHUTDOWN(ctx);
}

TEST(nn_dropout_grad_is_the_mask) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_ones(ctx, TL_F64, 1, (int64_t[]){64});
  CHECK_INT(tl_set_requires_grad(x, 1), TL_OK);
  tl_tensor *y = tl_dropout(x, 0.5, 1);
  CHECK_INT(tl_backward(tl_sum(y, 0, NULL, 0), NULL), TL_OK);
  double yv[64], gv[64];
  CHECK_INT(tl_to_host(y, yv, sizeof yv), TL_OK);
  CHECK_INT(tl_to_host(tl_grad(x), gv, sizeof gv), TL_OK);
  for (int i = 0; i < 64; i++) CHECK_NEAR(gv[i], yv[i], 0); /* x == 1: y is the scaled mask */
  TEST_SHUTDOWN(ctx);
}

/* mean and standard deviation of an f32 tensor's values, and its extremes */
static void moments(tl_tensor *t, double *mean, double *sd, double *lo, double *hi) {
  int64_t n = tl_numel(t);
  float *v = malloc(sizeof(float) * (size_t)n);
  double s = 0, ss = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  CHECK_INT(tl_to_host(t, v, sizeof(float) * (size_t)n), TL_OK);
  for (int64_t i = 0; i < n; i++) {
    s += v[i];
    ss += (double)v[i] * v[i];
    *lo = fmin(*lo, v[i]);
    *hi = fmax(*hi, v[i]);
  }
  *mean = s / (double)n;
  *sd = sqrt(ss / (double)n - *mean * *mean);
  free(v);
}

TEST(nn_initializers_statistics_and_leaves) {
  tl_ctx *ctx = new_ctx();
  double mean, sd, lo, hi;
  tl_tensor *k = tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){1000, 100}, 50);
  CHECK(k && tl_requires_grad(k));
  CHECK_INT(tl_schedule_count(k), 0); /* realized: a buffer */
  moments(k, &mean, &sd, &lo, &hi);
  CHECK_NEAR(mean, 0, 0.003);
  CHECK_NEAR(sd, sqrt(2.0 / 50), 0.003);
  tl_tensor *x = tl_xavier_uniform(ctx, TL_F32, 1, (int64_t[]){BIG}, 30, 20);
  double a = sqrt(6.0 / 50);
  CHECK(x && tl_requires_grad(x));
  moments(x, &mean, &sd, &lo, &hi);
  CHECK(lo >= -a && hi <= a);
  CHECK(lo < -0.99 * a && hi > 0.99 * a);
  CHECK_NEAR(mean, 0, 0.003);
  CHECK_NEAR(sd, a / sqrt(3), 0.003);
  /* leaves: they keep a gradient */
  CHECK_INT(tl_backward(tl_sum(tl_mul(x, x), 0, NULL, 0), NULL), TL_OK);
  CHECK_NEAR(item(tl_sum(tl_sub(tl_grad(x), tl_mul_scalar(x, 2)), 0, NULL, 0)), 0, 1e-3);
  tl_tensor *k64 = tl_kaiming_normal(ctx, TL_F64, 0, NULL, 1);
  CHECK(k64 && tl_get_dtype(k64) == TL_F64 && tl_ndim(k64) == 0);
  TEST_SHUTDOWN(ctx);
}

/* ---- bad inputs ----------------------------------------------------------------- */
#define CHECK_ERR(call, msg)                  \
  do {                                        \
    tl_clear_error(ctx);                      \
    CHECK((call) == NULL);                    \
    CHECK_STR(tl_last_error(ctx), msg);       \
  } while (0)

TEST(nn_loss_errors) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *v3 = vec(ctx, TL_F32, 3, (double[]){0.1, 0.2, 0.3}), *v2 = vec(ctx, TL_F32, 2, (double[]){0.1, 0.2});
  tl_tensor *logits = tl_zeros(ctx, TL_F32, 2, (int64_t[]){2, 3});
  int64_t bad[2] = {1, 7}, neg[2] = {-1, 0}, ok[2] = {0, 2};
  tl_tensor *t_bad = tl_from_data(ctx, TL_I64, 1, (int64_t[]){2}, bad);
  tl_tensor *t_neg = tl_from_data(ctx, TL_I64, 1, (int64_t[]){2}, neg);
  tl_tensor *t_ok = tl_from_data(ctx, TL_I64, 1, (int64_t[]){2}, ok);
  CHECK_ERR(tl_mse_loss(v3, v2), "mse_loss: pred [3] and target [2] differ in shape");
  tl_ctx *other = new_ctx();
  CHECK_ERR(tl_mse_loss(v3, vec(other, TL_F32, 3, (double[]){1, 2, 3})), "mse_loss: tensors from different contexts");
  TEST_SHUTDOWN(other);
  CHECK_ERR(tl_cross_entropy(logits, t_bad), "cross_entropy: target 7 is out of range for 3 classes");
  CHECK_ERR(tl_cross_entropy(logits, t_neg), "cross_entropy: target -1 is out of range for 3 classes");
  CHECK_ERR(tl_cross_entropy(v3, t_ok), "cross_entropy: logits must be [N, C], got [3]");
  CHECK_ERR(tl_cross_entropy(tl_cast(logits, TL_I32), t_ok), "cross_entropy: logits must be f32 or f64, got i32");
  CHECK_ERR(tl_cross_entropy(logits, v2), "cross_entropy: targets must be i32 or i64 class indices, got f32");
  CHECK_ERR(tl_cross_entropy(logits, tl_cast(v3, TL_I64)),
            "cross_entropy: targets must be [N] = [2] for logits [2, 3], got [3]");
  CHECK_ERR(tl_binary_cross_entropy(tl_cast(v3, TL_I32), v3), "binary_cross_entropy: prob must be f32 or f64, got i32");
  CHECK_ERR(tl_binary_cross_entropy(v3, v2), "binary_cross_entropy: prob [3] and target [2] differ in shape");
  /* NULL inputs pass through and keep the first message */
  tl_clear_error(ctx);
  CHECK(tl_reshape(v3, 1, (int64_t[]){4}) == NULL);
  char first[256];
  snprintf(first, sizeof first, "%s", tl_last_error(ctx));
  CHECK(tl_mse_loss(NULL, v3) == NULL && tl_cross_entropy(logits, NULL) == NULL);
  CHECK(tl_binary_cross_entropy(NULL, v3) == NULL && tl_layer_norm(NULL, NULL, NULL, 1e-5) == NULL);
  CHECK(tl_embedding(NULL, t_ok) == NULL && tl_dropout(NULL, 0.5, 1) == NULL);
  CHECK(tl_kaiming_normal(NULL, TL_F32, 0, NULL, 1) == NULL && tl_xavier_uniform(NULL, TL_F32, 0, NULL, 1, 1) == NULL);
  CHECK_STR(tl_last_error(ctx), first);
  /* a released handle */
  tl_tensor *gone = vec(ctx, TL_F32, 3, (double[]){1, 2, 3});
  tl_release(gone);
  CHECK(tl_mse_loss(gone, v3) == NULL);
  CHECK_CONTAINS(tl_last_error(ctx), "use after release");
  TEST_SHUTDOWN(ctx);
}

TEST(nn_layer_errors) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_zeros(ctx, TL_F32, 2, (int64_t[]){2, 4}), *g3 = tl_ones(ctx, TL_F32, 1, (int64_t[]){3});
  tl_tensor *w = tl_zeros(ctx, TL_F32, 2, (int64_t[]){4, 3});
  int32_t ids[3] = {0, 4, 1};
  tl_tensor *bad_ids = tl_from_data(ctx, TL_I32, 1, (int64_t[]){3}, ids);
  CHECK_ERR(tl_layer_norm(x, g3, NULL, 1e-5), "layer_norm: gamma must be [4], got [3]");
  CHECK_ERR(tl_layer_norm(x, NULL, x, 1e-5), "layer_norm: beta must be [4], got [2, 4]");
  CHECK_ERR(tl_layer_norm(tl_cast(x, TL_I64), NULL, NULL, 1e-5), "layer_norm: x must be f32 or f64, got i64");
  CHECK_ERR(tl_layer_norm(x, NULL, NULL, -1), "layer_norm: eps must be >= 0, got -1");
  CHECK_ERR(tl_layer_norm(tl_scalar(ctx, TL_F32, 1), NULL, NULL, 0), "layer_norm: x must have at least one axis");
  CHECK_ERR(tl_embedding(w, bad_ids), "embedding: index 4 is out of range for 4 rows");
  CHECK_ERR(tl_embedding(w, x), "embedding: indices must be i32 or i64, got f32");
  CHECK_ERR(tl_embedding(g3, bad_ids), "embedding: weight must be [V, D], got [3]");
  CHECK_ERR(tl_embedding(tl_cast(w, TL_I32), bad_ids), "embedding: weight must be f32 or f64, got i32");
  int64_t ones8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_ERR(tl_embedding(w, tl_zeros(ctx, TL_I64, 8, ones8)),
            "embedding: indices have rank 8, at most 7 leaves room for the result's axis");
  VALUES(tl_embedding(w, tl_zeros(ctx, TL_I64, 7, ones8)), 0, 0, 0, 0); /* rank 7 is fine: [1 x 7, 3] */
  CHECK_ERR(tl_dropout(x, 1, 1), "dropout: p must be in [0, 1), got 1");
  CHECK_ERR(tl_dropout(x, -0.1, 0), "dropout: p must be in [0, 1), got -0.1");
  CHECK_ERR(tl_dropout(x, NAN, 1), "dropout: p must be in [0, 1), got nan");
  CHECK_ERR(tl_dropout(tl_cast(x, TL_I32), 0.5, 1), "dropout: x must be f32 or f64, got i32");
  CHECK_ERR(tl_kaiming_normal(ctx, TL_I32, 1, (int64_t[]){3}, 3), "kaiming_normal: dtype must be f32 or f64, got i32");
  CHECK_ERR(tl_kaiming_normal(ctx, TL_F32, 1, (int64_t[]){3}, 0), "kaiming_normal: fan_in must be positive, got 0");
  CHECK_ERR(tl_kaiming_normal(ctx, TL_F32, 9, (int64_t[9]){0}, 3),
            "kaiming_normal: randn: rank 9 is not between 0 and 8");
  CHECK_ERR(tl_xavier_uniform(ctx, TL_F32, 1, (int64_t[]){3}, 3, -1),
            "xavier_uniform: fan_in and fan_out must be positive, got 3 and -1");
  CHECK_ERR(tl_xavier_uniform(ctx, TL_F32, 1, (int64_t[]){-2}, 3, 3),
            "xavier_uniform: rand: size -2 of axis 0 is out of range");
  TEST_SHUTDOWN(ctx);
}

/* ---- optimizers ------------------------------------------------------------------ */

/* a leaf parameter of two values */
static tl_tensor *param2(tl_ctx *ctx, tl_dtype dt, double a, double b) {
  tl_tensor *p = vec(ctx, dt, 2, (double[]){a, b});
  if (dt != TL_F64) { /* a cast is a graph: make it a leaf of its own */
    tl_tensor *leaf = tl_detach(p);
    tl_release(p);
    p = leaf;
  }
  CHECK_INT(tl_set_requires_grad(p, 1), TL_OK);
  return p;
}

/* accumulates the gradient of sum(c * w^2), 2 c w, into w */
static const double quad_c[2] = {1, 3};
static void backward_quad(tl_ctx *ctx, tl_tensor *w) {
  TL_SCOPE(ctx, s) {
    tl_tensor *c = tl_cast(vec(ctx, TL_F64, 2, quad_c), tl_get_dtype(w));
    CHECK_INT(tl_backward(tl_sum(tl_mul(c, tl_mul(w, w)), 0, NULL, 0), NULL), TL_OK);
  }
}

TEST(nn_sgd_converges) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *w = tl_zeros(ctx, TL_F32, 1, (int64_t[]){3});
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_optimizer *opt = tl_sgd(1, &w, 0.1, 0, 0);
  CHECK(opt != NULL);
  for (int step = 0; step < 100; step++) {
    TL_SCOPE(ctx, s) {
      tl_tensor *d = tl_add_scalar(w, -3);
      CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
      CHECK_INT(tl_backward(tl_sum(tl_mul(d, d), 0, NULL, 0), NULL), TL_OK);
      CHECK_INT(tl_optimizer_step(opt), TL_OK);
    }
  }
  VALUES(w, 1e-4, 3, 3, 3);
  CHECK(tl_grad_enabled(ctx)); /* restored after each step */
  tl_set_grad_enabled(ctx, 0);
  CHECK_INT(tl_optimizer_step(opt), TL_OK);
  CHECK(!tl_grad_enabled(ctx)); /* ... to what it was */
  tl_set_grad_enabled(ctx, 1);
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

/* PyTorch's update rules, in double, for steps of sum(c w^2) from w */
typedef struct { int kind; double lr, mom, b1, b2, eps, wd; } opt_cfg; /* kind: 0 sgd, 1 adam, 2 adamw */

static void reference_steps(const opt_cfg *c, double *w, int steps) {
  double buf[2] = {0}, m[2] = {0}, v[2] = {0};
  for (int t = 1; t <= steps; t++)
    for (int i = 0; i < 2; i++) {
      double g = 2 * quad_c[i] * w[i];
      if (c->kind != 2) g += c->wd * w[i];
      if (c->kind == 0) {
        buf[i] = t == 1 ? g : c->mom * buf[i] + g;
        w[i] -= c->lr * (c->mom != 0 ? buf[i] : g);
        continue;
      }
      if (c->kind == 2) w[i] *= 1 - c->lr * c->wd;
      m[i] = c->b1 * m[i] + (1 - c->b1) * g;
      v[i] = c->b2 * v[i] + (1 - c->b2) * g * g;
      double mh = m[i] / (1 - pow(c->b1, t)), vh = v[i] / (1 - pow(c->b2, t));
      w[i] -= c->lr * mh / (sqrt(vh) + c->eps);
    }
}

static tl_optimizer *make_opt(const opt_cfg *c, tl_tensor **w, int n) {
  if (c->kind == 0) return tl_sgd(n, w, c->lr, c->mom, c->wd);
  if (c->kind == 1) return tl_adam(n, w, c->lr, c->b1, c->b2, c->eps, c->wd);
  return tl_adamw(n, w, c->lr, c->b1, c->b2, c->eps, c->wd);
}

/* four steps, each compared with the reference; the state is replaced, not grown */
static void check_against_reference(const opt_cfg *c, tl_dtype dt, double tol) {
  tl_ctx *ctx = new_ctx();
  const double w0[2] = {1, -2};
  tl_tensor *w = NULL;
  tl_optimizer *opt = NULL;
  TL_SCOPE(ctx, s) { /* the parameter's scope ends: the optimizer's reference keeps it */
    w = param2(ctx, dt, w0[0], w0[1]);
    opt = make_opt(c, &w, 1);
  }
  CHECK(opt != NULL);
  tl_stats first = {0};
  for (int step = 1; step <= 4 && opt; step++) {
    CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
    backward_quad(ctx, w);
    CHECK_INT(tl_optimizer_step(opt), TL_OK);
    double want[2] = {w0[0], w0[1]};
    reference_steps(c, want, step);
    tl_test_values(__FILE__, __LINE__, w, want, 2, tol);
    CHECK_INT(tl_get_dtype(w), dt);
    CHECK(tl_requires_grad(w));
    tl_stats now = tl_get_stats(ctx);
    /* from step 2 on: SGD's first momentum is a copy of the gradient in a buffer of
     * its own, later ones share one buffer with the parameter (tl_realize_many) */
    if (step <= 2) first = now;
    CHECK_INT(now.live_tensors, first.live_tensors);
    CHECK_INT(now.live_nodes, first.live_nodes);
    CHECK_INT(now.live_buffers, first.live_buffers);
  }
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

TEST(nn_sgd_momentum_matches_reference) {
  check_against_reference(&(opt_cfg){0, 0.1, 0.9, 0, 0, 0, 0.01}, TL_F64, 1e-12);
  check_against_reference(&(opt_cfg){0, 0.1, 0.9, 0, 0, 0, 0.01}, TL_F32, 1e-6);
}
TEST(nn_sgd_weight_decay_matches_reference) {
  check_against_reference(&(opt_cfg){0, 0.05, 0, 0, 0, 0, 0.1}, TL_F64, 1e-12);
}
TEST(nn_adam_matches_reference) {
  check_against_reference(&(opt_cfg){1, 0.01, 0, 0.9, 0.999, 1e-8, 0.01}, TL_F64, 1e-12);
  check_against_reference(&(opt_cfg){1, 0.1, 0, 0.8, 0.99, 1e-3, 0}, TL_F64, 1e-12);
  check_against_reference(&(opt_cfg){1, 0.01, 0, 0.9, 0.999, 1e-8, 0.01}, TL_F32, 1e-6);
}
TEST(nn_adamw_matches_reference) {
  check_against_reference(&(opt_cfg){2, 0.01, 0, 0.9, 0.999, 1e-8, 0.1}, TL_F64, 1e-12);
  check_against_reference(&(opt_cfg){2, 0.01, 0, 0.9, 0.999, 1e-8, 0.1}, TL_F32, 1e-6);
}

TEST(nn_optimizer_zero_grad_and_untouched_params) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *ps[2] = {param2(ctx, TL_F64, 1, -2), param2(ctx, TL_F64, 5, 6)};
  tl_optimizer *opt = tl_adam(2, ps, 0.1, 0.9, 0.999, 1e-8, 0);
  CHECK(opt != NULL);
  backward_quad(ctx, ps[0]);
  VALUES(tl_grad(ps[0]), 0, 2, -12);
  CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
  VALUES(tl_grad(ps[0]), 0, 0, 0);
  backward_quad(ctx, ps[0]);
  CHECK_INT(tl_optimizer_step(opt), TL_OK);
  VALUES(ps[0], 1e-9, 0.9, -1.9); /* Adam's first step moves each element by lr */
  VALUES(ps[1], 0, 5, 6);         /* no gradient, no move */
  tl_optimizer_free(opt);
  VALUES(ps[0], 1e-9, 0.9, -1.9); /* still the caller's */
  TEST_SHUTDOWN(ctx);
}

/* every block together: embedding -> layer_norm -> linear -> cross-entropy, AdamW.
 * The loss must fall, and the live counts stay flat from one step to the next. */
TEST(nn_training_loop_learns_a_lookup) {
  tl_ctx *ctx = new_ctx();
  enum { V = 6, D = 8, C = 3 };
  tl_tensor *emb = tl_xavier_uniform(ctx, TL_F32, 2, (int64_t[]){V, D}, V, D);
  tl_tensor *w = tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){D, C}, D);
  tl_tensor *gamma = tl_ones(ctx, TL_F32, 1, (int64_t[]){D}), *beta = tl_zeros(ctx, TL_F32, 1, (int64_t[]){D});
  CHECK_INT(tl_set_requires_grad(gamma, 1), TL_OK);
  CHECK_INT(tl_set_requires_grad(beta, 1), TL_OK);
  int64_t ids[V] = {0, 1, 2, 3, 4, 5}, labels[V] = {2, 0, 1, 1, 2, 0};
  tl_tensor *x = tl_from_data(ctx, TL_I64, 1, (int64_t[]){V}, ids);
  tl_tensor *y = tl_from_data(ctx, TL_I64, 1, (int64_t[]){V}, labels);
  tl_tensor *params[4] = {emb, w, gamma, beta};
  tl_optimizer *opt = tl_adamw(4, params, 0.05, 0.9, 0.999, 1e-8, 0.01);
  CHECK(opt != NULL);
  double first = NAN, last = NAN;
  tl_stats at2 = {0};
  for (int step = 0; step < 60 && opt; step++) {
    TL_SCOPE(ctx, s) {
      tl_tensor *h = tl_dropout(tl_layer_norm(tl_embedding(emb, x), gamma, beta, 1e-5), 0.1, 1);
      tl_tensor *loss = tl_cross_entropy(tl_matmul(h, w), y);
      CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
      CHECK_INT(tl_backward(loss, NULL), TL_OK);
      CHECK_INT(tl_optimizer_step(opt), TL_OK);
      last = item(loss);
      if (step == 0) first = last;
    }
    if (step == 2) at2 = tl_get_stats(ctx);
    if (step > 2) {
      CHECK_INT(tl_get_stats(ctx).live_tensors, at2.live_tensors);
      CHECK_INT(tl_get_stats(ctx).live_nodes, at2.live_nodes);
    }
  }
  CHECK(first > 0.5);
  CHECK(last < 0.1 * first);
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

TEST(nn_optimizer_errors) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *w = param2(ctx, TL_F64, 1, 2), *w2 = param2(ctx, TL_F64, 3, 4);
  tl_tensor *plain = vec(ctx, TL_F64, 2, (double[]){1, 2}), *computed = tl_mul_scalar(w, 2);
  CHECK_ERR(tl_adam(2, (tl_tensor *[]){w, plain}, 0.1, 0.9, 0.999, 1e-8, 0), "adam: parameter 1 does not require grad");
  CHECK_ERR(tl_sgd(1, &computed, 0.1, 0, 0), "sgd: parameter 0 is not a leaf (it is computed from other tensors)");
  CHECK_ERR(tl_adamw(3, (tl_tensor *[]){w, w2, w}, 0.1, 0.9, 0.999, 1e-8, 0), "adamw: parameter 2 repeats parameter 0");
  CHECK_ERR(tl_sgd(1, &w, -1, 0, 0), "sgd: lr must be finite and >= 0, got -1");
  CHECK_ERR(tl_sgd(1, &w, 0.1, NAN, 0), "sgd: momentum must be finite and >= 0, got nan");
  CHECK_ERR(tl_sgd(1, &w, INFINITY, 0, 0), "sgd: lr must be finite and >= 0, got inf");
  CHECK_ERR(tl_adam(1, &w, 0.1, 1, 0.999, 1e-8, 0), "adam: beta1 must be in [0, 1), got 1");
  CHECK_ERR(tl_adam(1, &w, 0.1, 0.9, -0.5, 1e-8, 0), "adam: beta2 must be in [0, 1), got -0.5");
  CHECK_ERR(tl_adamw(1, &w, 0.1, 0.9, 0.999, -1, 0), "adamw: eps must be finite and >= 0, got -1");
  CHECK_ERR(tl_adamw(1, &w, 0.1, 0.9, 0.999, 1e-8, -0.5), "adamw: weight_decay must be finite and >= 0, got -0.5");
  tl_ctx *other = new_ctx();
  tl_tensor *foreign = param2(other, TL_F64, 1, 2);
  CHECK_ERR(tl_sgd(2, (tl_tensor *[]){w, foreign}, 0.1, 0, 0), "sgd: parameter 1 comes from another context");
  TEST_SHUTDOWN(other);
  tl_tensor *gone = param2(ctx, TL_F64, 1, 2);
  tl_release(gone);
  CHECK_ERR(tl_sgd(2, (tl_tensor *[]){w, gone}, 0.1, 0, 0), "sgd: parameter 1 was released (use after release)");
  /* no parameters, or a NULL one from a failed call: NULL, the message left alone */
  tl_clear_error(ctx);
  CHECK(tl_sgd(0, &w, 0.1, 0, 0) == NULL && tl_sgd(1, NULL, 0.1, 0, 0) == NULL);
  CHECK(tl_adam(2, (tl_tensor *[]){w, NULL}, 0.1, 0.9, 0.999, 1e-8, 0) == NULL);
  CHECK_STR(tl_last_error(ctx), "");
  CHECK_INT(tl_optimizer_step(NULL), TL_ERR_ARG);
  CHECK_INT(tl_optimizer_zero_grad(NULL), TL_ERR_ARG);
  tl_optimizer_free(NULL);
  TEST_SHUTDOWN(ctx); /* failed creations left no scope and no reference behind */
}
