/* test_engine.c — values of every op family, fusion counts, the kernel cache across
 * processes, and every bad-input case with its message. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "tl.h"

static tl_ctx *new_ctx(void) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 7);
  return ctx;
}

static tl_tensor *mat(tl_ctx *ctx, int64_t r, int64_t c, const float *v) {
  return tl_from_data(ctx, TL_F32, 2, (int64_t[]){r, c}, v);
}

/* ---- fusion, counted ---------------------------------------------------------- */
TEST(fusion_elementwise_chain_is_one_kernel) {
  tl_ctx *ctx = new_ctx();
  int64_t n = 1000;
  tl_tensor *a = tl_rand(ctx, TL_F32, 1, &n), *b = tl_rand(ctx, TL_F32, 1, &n), *c = tl_randn(ctx, TL_F32, 1, &n);
  tl_tensor *ab = tl_mul(a, b), *abc = tl_add(ab, c), *r = tl_relu(abc), *y = tl_mul_scalar(r, 0.5);
  CHECK_INT(tl_schedule_count(y), 1);
  tl_stats before = tl_get_stats(ctx);
  CHECK_INT(tl_realize(y), TL_OK);
  CHECK_INT(tl_get_stats(ctx).kernels_run - before.kernels_run, 1);
  tl_tensor *all[] = {a, b, c, ab, abc, r, y};
  for (int i = 0; i < 7; i++) tl_release(all[i]);
  TEST_SHUTDOWN(ctx);
}

TEST(fusion_row_softmax_is_one_kernel) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){64, 100});
  tl_tensor *sm = tl_softmax(x, 1), *lsm = tl_log_softmax(x, -1);
  CHECK_INT(tl_schedule_count(sm), 1);
  CHECK_INT(tl_schedule_count(lsm), 1);
  tl_stats before = tl_get_stats(ctx);
  tl_tensor *rows = tl_sum(sm, 1, (int[]){1}, 0);
  float got[64];
  CHECK_INT(tl_to_host(rows, got, sizeof got), TL_OK);
  for (int i = 0; i < 64; i++) CHECK_NEAR(got[i], 1.0, 1e-5);
  /* the row sums of a softmax are one kernel too: max, sum and the sum of the quotients */
  CHECK_INT(tl_get_stats(ctx).kernels_run - before.kernels_run, 1);
  tl_release(rows);
  tl_release(sm);
  tl_release(lsm);
  tl_release(x);
  TEST_SHUTDOWN(ctx);
}

TEST(fusion_column_softmax_realizes_reduces) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){50, 8});
  tl_tensor *sm = tl_softmax(x, 0); /* reduced axis is the outer loop: reduces get kernels */
  int k = tl_schedule_count(sm);
  CHECK(k >= 2 && k <= 3);
  tl_tensor *cols = tl_sum(sm, 1, (int[]){0}, 0);
  float got[8];
  CHECK_INT(tl_to_host(cols, got, sizeof got), TL_OK);
  for (int i = 0; i < 8; i++) CHECK_NEAR(got[i], 1.0, 1e-5);
  tl_release(cols);
  tl_release(sm);
  tl_release(x);
  TEST_SHUTDOWN(ctx);
}

/* A reduce read broadcast along a loop outside its own (the inner matmul of a matmul
 * chain, read along the outer one's columns) gets a kernel: fused, it would run again
 * for every column. Found by the training and MLP benchmarks (minutes per step). */
TEST(fusion_matmul_of_matmul_is_two_kernels) {
  tl_ctx *ctx = new_ctx();
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, -1, 2, 0.5, 1}, c[4] = {1, 2, 3, 4};
  tl_tensor *x = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, a);
  tl_tensor *w = tl_from_data(ctx, TL_F64, 2, (int64_t[]){3, 2}, b);
  tl_tensor *v = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 2}, c);
  tl_tensor *y = tl_matmul(tl_relu(tl_matmul(x, w)), v);
  CHECK_INT(tl_schedule_count(y), 2);
  double got[4]; /* x w = [[0.5, 7], [2, 16]]; times v = [[21.5, 29], [50, 68]] */
  CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
  CHECK_NEAR(got[0], 21.5, 1e-12);
  CHECK_NEAR(got[1], 29, 1e-12);
  CHECK_NEAR(got[2], 50, 1e-12);
  CHECK_NEAR(got[3], 68, 1e-12);
  /* bias and relu after a matmul: the sum keeps its fast loop order in a kernel of its
   * own (fused, it ran the slow one), the epilogue is a second kernel */
  tl_tensor *bias = tl_from_data(ctx, TL_F64, 1, (int64_t[]){2}, (double[]){-1, 1});
  tl_tensor *layer = tl_relu(tl_add(tl_matmul(x, w), bias));
  CHECK_INT(tl_schedule_count(layer), 2);
  CHECK_INT(tl_to_host(layer, got, sizeof got), TL_OK);
  CHECK_NEAR(got[0], 0, 0);
  CHECK_NEAR(got[1], 8, 1e-12);
  CHECK_NEAR(got[2], 1, 1e-12);
  CHECK_NEAR(got[3], 17, 1e-12);
  TEST_SHUTDOWN(ctx);
}

/* (B, M, K) x (K, N) against loops in double: row counts that take the 4-row jam of
 * the interchanged kernel (M % 4 == 0) and ones that do not, with and without a batch */
static void check_matmul(tl_ctx *ctx, int64_t B, int64_t M, int64_t K, int64_t N) {
  double a[2 * 12 * 7], w[7 * 9], want[2 * 12 * 9], got[2 * 12 * 9];
  for (int64_t i = 0; i < B * M * K; i++) a[i] = (double)((i * 7) % 11) - 5;
  for (int64_t i = 0; i < K * N; i++) w[i] = (double)((i * 5) % 13) / 4 - 1;
  for (int64_t b = 0; b < B; b++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = 0;
        for (int64_t k = 0; k < K; k++) acc += a[(b * M + m) * K + k] * w[k * N + n];
        want[(b * M + m) * N + n] = acc;
      }
  tl_tensor *x = tl_from_data(ctx, TL_F64, 3, (int64_t[]){B, M, K}, a);
  tl_tensor *y = tl_from_data(ctx, TL_F64, 2, (int64_t[]){K, N}, w);
  tl_tensor *r = tl_matmul(x, y);
  CHECK_INT(tl_to_host(r, got, sizeof(double) * (size_t)(B * M * N)), TL_OK);
  for (int64_t i = 0; i < B * M * N; i++) CHECK_NEAR(got[i], want[i], 1e-9);
}

TEST(matmul_row_jam_matches_loops) {
  tl_ctx *ctx = new_ctx();
  check_matmul(ctx, 1, 8, 5, 6);  /* two jammed row groups */
  check_matmul(ctx, 1, 6, 7, 9);  /* 6 rows: no jam */
  check_matmul(ctx, 2, 12, 3, 4); /* batched, jam along M */
  check_matmul(ctx, 2, 1, 7, 5);  /* one row per batch: nothing to jam */
  TEST_SHUTDOWN(ctx);
}

/* x @ w^T with w stored [N, K] (a torch Linear weight, or b^T in a gradient): w^T is
 * copied once (a kernel), then the sum runs in the interchanged, jammed order */
/* A transposed right operand: a float product is one GEMM kernel, whose packing reads
 * the strides as they are; an integer product's loop kernel would read it across its
 * rows, so it is copied first (two kernels). Both give the exact sums. */
static void check_transposed_product(tl_dtype dt, int kernels) {
  tl_ctx *ctx = new_ctx();
  double a[8 * 3], w[5 * 3], got[8 * 5];
  for (int i = 0; i < 24; i++) a[i] = i % 7 - 3;
  for (int i = 0; i < 15; i++) w[i] = (i % 4) * (dt == TL_F64 ? 0.5 : 1);
  tl_tensor *x = tl_cast(tl_from_data(ctx, TL_F64, 2, (int64_t[]){8, 3}, a), dt);
  tl_tensor *wt = tl_cast(tl_from_data(ctx, TL_F64, 2, (int64_t[]){5, 3}, w), dt);
  CHECK(tl_realize(x) == TL_OK && tl_realize(wt) == TL_OK);
  tl_tensor *y = tl_cast(tl_matmul(x, tl_transpose(wt, 0, 1)), TL_F64);
  CHECK_INT(tl_schedule_count(y), kernels);
  CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
  for (int m = 0; m < 8; m++)
    for (int n = 0; n < 5; n++) {
      double want = 0;
      for (int k = 0; k < 3; k++) want += a[m * 3 + k] * w[n * 3 + k];
      CHECK_NEAR(got[m * 5 + n], want, 1e-12);
    }
  TEST_SHUTDOWN(ctx);
}

/* tl_contiguous of a constant is that constant: constant folding once made it 0 on
 * the cpu backend (the interpreter was right), so SGD's first momentum step, a copy of
 * a gradient that was a constant (the gradient of a sum), did nothing. */
TEST(contiguous_of_a_constant_keeps_its_value) {
  tl_ctx *ctx = new_ctx();
  float got[3];
  CHECK_INT(tl_to_host(tl_contiguous(tl_full(ctx, TL_F32, 1, (int64_t[]){3}, 2.5)), got, sizeof got), TL_OK);
  for (int i = 0; i < 3; i++) CHECK(got[i] == 2.5f);
  TEST_SHUTDOWN(ctx);
}

TEST(matmul_transposed_right_operand_float_is_read_in_place) { check_transposed_product(TL_F64, 1); }
TEST(matmul_transposed_right_operand_integer_is_copied) { check_transposed_product(TL_I64, 2); }

/* A sum of 100 tensors fused would read 100 buffers; the scheduler gives a kernel at
 * most 62 distinct inputs (63 buffers and one slot for random streams): it computes
 * parts of it first, two kernels or a few more. Found by a long autograd chain, whose
 * leaf gradient adds one buffer per step. */
TEST(fusion_splits_a_kernel_reading_too_many_buffers) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *acc = tl_zeros(ctx, TL_F32, 1, (int64_t[]){4});
  for (int i = 0; i < 100; i++) {
    float d[4] = {(float)i, (float)i, (float)i, 1};
    acc = tl_add(acc, tl_from_data(ctx, TL_F32, 1, (int64_t[]){4}, d));
  }
  int k = tl_schedule_count(acc);
  CHECK(k >= 2 && k <= 4);
  float got[4];
  CHECK_INT(tl_to_host(acc, got, sizeof got), TL_OK);
  CHECK_NEAR(got[0], 4950, 0);
  CHECK_NEAR(got[2], 4950, 0);
  CHECK_NEAR(got[3], 100, 0);
  TEST_SHUTDOWN(ctx);
}

TEST(realize_drops_the_graph_behind_a_node) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = tl_randn(ctx, TL_F32, 1, (int64_t[]){100});
  tl_tensor *e = tl_exp(a), *s = tl_sum(e, 0, NULL, 0);
  tl_release(a);
  tl_release(e);
  uint64_t live = tl_get_stats(ctx).live_nodes;
  CHECK(live >= 3);
  CHECK_INT(tl_realize(s), TL_OK);
  CHECK_INT(tl_get_stats(ctx).live_nodes, 1); /* only the buffer node of s is left */
  tl_release(s);
  CHECK_INT(tl_get_stats(ctx).live_nodes, 0);
  CHECK_INT(tl_get_stats(ctx).live_buffers, 0);
  TEST_SHUTDOWN(ctx);
}

/* ---- values --------------------------------------------------------------------- */
TEST(elementwise_values_and_broadcasting) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = mat(ctx, 2, 3, (float[]){1, 2, 3, 4, 5, 6});
  tl_tensor *b = tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, (float[]){10, 20, 30});
  tl_tensor *s = tl_add(a, b), *d = tl_sub(a, b), *q = tl_div(b, a), *p = tl_pow_scalar(a, 2);
  VALUES(s, 1e-6, 11, 22, 33, 14, 25, 36);
  VALUES(d, 1e-6, -9, -18, -27, -6, -15, -24);
  VALUES(q, 1e-5, 10, 10, 10, 2.5, 4, 5);
  VALUES(p, 1e-5, 1, 4, 9, 16, 25, 36);
  tl_tensor *mx = tl_maximum(a, tl_scalar(ctx, TL_F32, 3.5)), *gt = tl_gt(a, tl_scalar(ctx, TL_F32, 3));
  VALUES(mx, 0, 3.5, 3.5, 3.5, 4, 5, 6);
  VALUES(gt, 0, 0, 0, 0, 1, 1, 1);
  CHECK_INT(tl_get_dtype(gt), TL_BOOL);
  tl_tensor *w = tl_where(gt, a, tl_neg(a));
  VALUES(w, 0, -1, -2, -3, 4, 5, 6);
  tl_tensor *ex = tl_exp(tl_log(a)), *sg = tl_sigmoid(tl_scalar(ctx, TL_F64, 0));
  VALUES(ex, 1e-5, 1, 2, 3, 4, 5, 6);
  VALUES(sg, 1e-12, 0.5);
  tl_tensor *ge = tl_gelu(tl_from_data(ctx, TL_F64, 1, (int64_t[]){2}, (double[]){1.0, -1.0}));
  VALUES(ge, 1e-6, 0.8413447461, -0.1586552539); /* 0.5 x (1 + math.erf(x / sqrt 2)) */
  TEST_SHUTDOWN(ctx); /* also frees every tensor still alive */
}

TEST(integer_ops_truncate_and_divide_by_zero_gives_zero) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = tl_from_data(ctx, TL_I32, 1, (int64_t[]){4}, (int32_t[]){7, -7, 5, 9});
  tl_tensor *b = tl_from_data(ctx, TL_I32, 1, (int64_t[]){4}, (int32_t[]){2, 2, 0, -3});
  VALUES(tl_div(a, b), 0, 3, -3, 0, -3);
  VALUES(tl_mod(a, b), 0, 1, -1, 0, 0);
  VALUES(tl_pow(a, tl_scalar(ctx, TL_I32, 2)), 0, 49, 49, 25, 81);
  TEST_SHUTDOWN(ctx);
}

/* the scalar of tl_add_scalar and its kin is a float: with an integer or bool tensor
 * they compute in f32 (torch with a Python float), never truncating the scalar; a
 * float tensor keeps its dtype. Expected: numpy in float32 / float64. */
TEST(scalar_ops_promote_integer_tensors_to_float) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *i = tl_from_data(ctx, TL_I64, 1, (int64_t[]){3}, (int64_t[]){1, 2, 3});
  tl_tensor *m = tl_mul_scalar(i, 0.5), *a = tl_add_scalar(i, 0.25), *p = tl_pow_scalar(i, 0.5);
  VALUES(m, 0, 0.5, 1, 1.5);
  VALUES(a, 0, 1.25, 2.25, 3.25);
  VALUES(p, 1e-6, 1, 1.41421354, 1.73205078);
  CHECK_INT(tl_get_dtype(m), TL_F32);
  CHECK_INT(tl_get_dtype(p), TL_F32);
  tl_tensor *b = tl_from_data(ctx, TL_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0});
  tl_tensor *bm = tl_add_scalar(b, 0.5);
  VALUES(bm, 0, 1.5, 0.5);
  CHECK_INT(tl_get_dtype(bm), TL_F32);
  tl_tensor *d = tl_from_data(ctx, TL_F64, 1, (int64_t[]){1}, (double[]){1});
  tl_tensor *dm = tl_mul_scalar(d, 0.1);
  VALUES(dm, 0, 0.1); /* f64 stays f64: 0.1 exactly as a double, not 0.1f */
  CHECK_INT(tl_get_dtype(dm), TL_F64);
  TEST_SHUTDOWN(ctx);
}

TEST(reductions_over_axes_with_keepdim) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = mat(ctx, 2, 3, (float[]){1, 5, 3, 4, 2, 6});
  VALUES(tl_sum(a, 1, (int[]){0}, 0), 0, 5, 7, 9);
  VALUES(tl_sum(a, 1, (int[]){1}, 1), 0, 9, 12);
  CHECK_INT(tl_ndim(tl_sum(a, 1, (int[]){1}, 1)), 2);
  VALUES(tl_max(a, 1, (int[]){-1}, 0), 0, 5, 6);
  VALUES(tl_min(a, 0, NULL, 0), 0, 1);
  VALUES(tl_mean(a, 1, (int[]){0}, 0), 1e-6, 2.5, 3.5, 4.5);
  VALUES(tl_prod(a, 1, (int[]){1}, 0), 0, 15, 48);
  VALUES(tl_argmax(a, 1, 0), 0, 1, 2);
  VALUES(tl_argmin(a, 0, 0), 0, 0, 1, 0);
  tl_tensor *bits = tl_from_data(ctx, TL_BOOL, 1, (int64_t[]){4}, (unsigned char[]){1, 0, 1, 1});
  tl_tensor *count = tl_sum(bits, 0, NULL, 0);
  CHECK_INT(tl_get_dtype(count), TL_I64);
  VALUES(count, 0, 3);
  tl_tensor *ties = tl_from_data(ctx, TL_F32, 1, (int64_t[]){4}, (float[]){2, 7, 7, 1});
  VALUES(tl_argmax(ties, 0, 0), 0, 1); /* the first maximum */
  TEST_SHUTDOWN(ctx);
}

TEST(max_reduction_propagates_nan_on_both_backends) {
  tl_ctx *ctx = new_ctx();
  float v[8] = {1, 2, NAN, 4, 5, 6, 7, 8};
  for (int b = 0; b < 2; b++) {
    tl_set_backend(ctx, b ? "interp" : "cpu");
    tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){2, 4}, v);
    float got[2];
    CHECK_INT(tl_to_host(tl_max(x, 1, (int[]){1}, 0), got, sizeof got), TL_OK);
    CHECK(isnan(got[0]));
    CHECK_NEAR(got[1], 8, 0);
    CHECK_INT(tl_to_host(tl_min(x, 1, (int[]){1}, 0), got, sizeof got), TL_OK);
    CHECK(isnan(got[0]));
    CHECK_NEAR(got[1], 5, 0);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(movement_ops_values) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = tl_reshape(tl_arange(ctx, TL_F32, 0, 6, 1), 2, (int64_t[]){2, 3});
  VALUES(tl_transpose(a, 0, 1), 0, 0, 3, 1, 4, 2, 5);
  VALUES(tl_flip(a, 1, (int[]){1}), 0, 2, 1, 0, 5, 4, 3);
  VALUES(tl_shrink(a, (int64_t[]){0, 1}, (int64_t[]){2, 3}), 0, 1, 2, 4, 5);
  VALUES(tl_slice(a, 1, 0, 3, 2), 0, 0, 2, 3, 5);
  VALUES(tl_slice(a, 1, -2, 3, 1), 0, 1, 2, 4, 5);
  VALUES(tl_pad(a, (int64_t[]){0, 1}, (int64_t[]){1, 0}, 0), 0, 0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0);
  VALUES(tl_pad(tl_slice(a, 0, 0, 1, 1), (int64_t[]){0, 1}, (int64_t[]){0, 1}, -1), 0, -1, 0, 1, 2, -1);
  VALUES(tl_expand(tl_slice(a, 0, 1, 2, 1), 2, (int64_t[]){2, 3}), 0, 3, 4, 5, 3, 4, 5);
  VALUES(tl_squeeze(tl_unsqueeze(a, 1), 1), 0, 0, 1, 2, 3, 4, 5);
  CHECK_INT(tl_ndim(tl_unsqueeze(a, -1)), 3);
  tl_tensor *two[2] = {a, tl_mul_scalar(a, 10)};
  VALUES(tl_cat(2, two, 1), 0, 0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50);
  VALUES(tl_stack(2, two, 0), 0, 0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50);
  /* a reshape of a transposed view needs a second view; reading it back is exact */
  VALUES(tl_reshape(tl_transpose(a, 0, 1), 1, (int64_t[]){6}), 0, 0, 3, 1, 4, 2, 5);
  TEST_SHUTDOWN(ctx);
}

TEST(matmul_batched_and_vectors) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = mat(ctx, 2, 3, (float[]){1, 2, 3, 4, 5, 6});
  tl_tensor *b = mat(ctx, 3, 2, (float[]){7, 8, 9, 10, 11, 12});
  VALUES(tl_matmul(a, b), 1e-5, 58, 64, 139, 154);
  tl_tensor *v = tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, (float[]){1, 0, -1});
  VALUES(tl_matmul(a, v), 1e-6, -2, -2);
  tl_tensor *batch = tl_stack(2, (tl_tensor *[]){a, tl_neg(a)}, 0); /* (2, 2, 3) */
  VALUES(tl_matmul(batch, b), 1e-5, 58, 64, 139, 154, -58, -64, -139, -154);
  VALUES(tl_matmul(tl_eye(ctx, TL_F32, 2), a), 0, 1, 2, 3, 4, 5, 6);
  TEST_SHUTDOWN(ctx);
}

TEST(random_numbers_are_reproducible_and_sane) {
  tl_ctx *ctx = new_ctx();
  tl_manual_seed(ctx, 123);
  tl_tensor *u = tl_rand(ctx, TL_F32, 1, (int64_t[]){100000});
  tl_tensor *n = tl_randn(ctx, TL_F64, 1, (int64_t[]){100000});
  double mu, mn, mx, nm, nv;
  tl_item(tl_mean(u, 0, NULL, 0), &mu);
  tl_item(tl_min(u, 0, NULL, 0), &mn);
  tl_item(tl_max(u, 0, NULL, 0), &mx);
  tl_item(tl_mean(n, 0, NULL, 0), &nm);
  tl_item(tl_mean(tl_mul(n, n), 0, NULL, 0), &nv);
  CHECK_NEAR(mu, 0.5, 0.01);
  CHECK(mn >= 0 && mx < 1);
  CHECK_NEAR(nm, 0, 0.02);
  CHECK_NEAR(nv, 1, 0.02);
  /* the same seed gives the same numbers, on either backend */
  float first[5], again[5];
  tl_manual_seed(ctx, 9);
  tl_to_host(tl_rand(ctx, TL_F32, 1, (int64_t[]){5}), first, sizeof first);
  tl_manual_seed(ctx, 9);
  tl_set_backend(ctx, "interp");
  tl_to_host(tl_rand(ctx, TL_F32, 1, (int64_t[]){5}), again, sizeof again);
  for (int i = 0; i < 5; i++) CHECK(first[i] == again[i]);
  TEST_SHUTDOWN(ctx);
}

TEST(zeros_allocate_nothing_until_realized) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *z = tl_zeros(ctx, TL_F32, 2, (int64_t[]){1000, 1000});
  tl_tensor *o = tl_add_scalar(z, 1);
  CHECK_INT(tl_get_stats(ctx).live_bytes, 0);
  double s;
  CHECK_INT(tl_item(tl_sum(o, 0, NULL, 0), &s), TL_OK);
  CHECK_NEAR(s, 1e6, 0);
  TEST_SHUTDOWN(ctx);
}

TEST(printing_and_dot) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = mat(ctx, 2, 2, (float[]){1, 2.5f, -3, 4});
  char *s = tl_format(a);
  CHECK_STR(s, "[[ 1.   2.5]\n [-3.   4. ]]");
  tl_free(s);
  tl_tensor *y = tl_softmax(tl_exp(a), 1);
  char *g = tl_graph_dot(y), *k = tl_schedule_dot(y);
  CHECK_CONTAINS(g, "digraph tl_graph");
  CHECK_CONTAINS(g, "RMAX");
  CHECK_CONTAINS(k, "label=\"1 kernel(s)\"");
  CHECK_CONTAINS(k, "kernel 0 output");
  tl_free(g);
  tl_free(k);
  TEST_SHUTDOWN(ctx);
}

/* ---- the cache, across processes ----------------------------------------------------- */
static void realize_in_child(const char *dir, uint64_t *compiled, uint64_t *disk_hits) {
  int fd[2];
  if (pipe(fd)) return;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    tl_ctx *ctx = tl_init();
    tl_set_cache_dir(ctx, dir);
    tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){16, 16});
    tl_tensor *y = tl_softmax(tl_mul_scalar(x, 3), 1);
    tl_realize(y);
    tl_stats st = tl_get_stats(ctx);
    uint64_t out[2] = {st.kernels_compiled, st.disk_cache_hits};
    ssize_t w = write(fd[1], out, sizeof out);
    (void)w;
    TEST_SHUTDOWN(ctx);
    _exit(0);
  }
  close(fd[1]);
  uint64_t in[2] = {99, 99};
  ssize_t r = read(fd[0], in, sizeof in);
  (void)r;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  *compiled = in[0];
  *disk_hits = in[1];
}

TEST(cache_second_process_compiles_nothing) {
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char *sub = tl_test_path(dir, "kernels");
  uint64_t c1, h1, c2, h2;
  realize_in_child(sub, &c1, &h1);
  realize_in_child(sub, &c2, &h2);
  CHECK_INT(c1, 1);
  CHECK_INT(h1, 0);
  CHECK_INT(c2, 0);
  CHECK_INT(h2, 1);
  free(sub);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- bad input: an error code and a clear message, never a crash ---------------------- */
TEST(errors_shape_dtype_axis_range) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = tl_zeros(ctx, TL_F32, 2, (int64_t[]){2, 3}), *b = tl_zeros(ctx, TL_F32, 1, (int64_t[]){4});
  CHECK(tl_add(a, b) == NULL);
  CHECK_INT(tl_last_status(ctx), TL_ERR_SHAPE);
  CHECK_STR(tl_last_error(ctx), "add: shapes [2, 3] and [4] cannot be broadcast together");
  CHECK(tl_mod(a, a) == NULL);
  CHECK_INT(tl_last_status(ctx), TL_ERR_DTYPE);
  CHECK_STR(tl_last_error(ctx), "mod: needs integer tensors, got f32 and f32");
  CHECK(tl_sum(a, 1, (int[]){2}, 0) == NULL);
  CHECK_INT(tl_last_status(ctx), TL_ERR_AXIS);
  CHECK_STR(tl_last_error(ctx), "sum: axis 2 is out of range for a tensor of rank 2");
  CHECK(tl_slice(a, 1, 1, 5, 1) == NULL);
  CHECK_INT(tl_last_status(ctx), TL_ERR_RANGE);
  CHECK_STR(tl_last_error(ctx), "slice: [1:5] is out of range for axis 1 of size 3");
  CHECK(tl_shrink(a, (int64_t[]){0, 2}, (int64_t[]){2, 1}) == NULL);
  CHECK_STR(tl_last_error(ctx), "shrink: range [2, 1) is out of bounds for axis 1 of size 3");
  CHECK(tl_reshape(a, 1, (int64_t[]){7}) == NULL);
  CHECK_STR(tl_last_error(ctx), "reshape: cannot reshape 6 elements into a shape of 7 elements");
  CHECK(tl_expand(a, 2, (int64_t[]){4, 3}) == NULL);
  CHECK_STR(tl_last_error(ctx), "expand: axis 0 has size 2, which cannot expand to 4");
  CHECK(tl_matmul(a, a) == NULL);
  CHECK_STR(tl_last_error(ctx), "matmul: inner sizes differ: (..., 2, 3) x (..., 2, 3)");
  CHECK(tl_permute(a, (int[]){0, 0}) == NULL);
  CHECK_STR(tl_last_error(ctx), "permute: axis 0 appears twice");
  CHECK(tl_squeeze(a, 0) == NULL);
  CHECK_STR(tl_last_error(ctx), "squeeze: axis 0 has size 2, not 1");
  CHECK(tl_rand(ctx, TL_I32, 1, (int64_t[]){3}) == NULL);
  CHECK_STR(tl_last_error(ctx), "rand: dtype must be f32 or f64, got i32");
  CHECK(tl_neg(tl_zeros(ctx, TL_BOOL, 0, NULL)) == NULL);
  CHECK_STR(tl_last_error(ctx), "neg: not defined for bool tensors");
  CHECK(tl_zeros(ctx, TL_F32, 1, (int64_t[]){-1}) == NULL);
  CHECK_STR(tl_last_error(ctx), "full: size -1 of axis 0 is out of range");
  /* no OpenCL and no CUDA here, on any machine (each test is a process) */
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
  CHECK_INT(tl_set_backend(ctx, "gpu"), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(ctx), "unknown backend 'gpu' (expected cpu or interp)");
  double v;
  CHECK_INT(tl_item(a, &v), TL_ERR_SHAPE);
  CHECK_STR(tl_last_error(ctx), "item: tensor has 6 elements, not 1");
  float small[2];
  CHECK_INT(tl_to_host(a, small, sizeof small), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "to_host: destination has 8 bytes, the tensor needs 24");
  TEST_SHUTDOWN(ctx);
}

/* TL_BACKEND naming no backend: tl_init fails (LANGUAGE.md §12: never a silent fall back
 * to the CPU), its reason in tl_last_error(NULL); empty is unset (cpu) */
TEST(init_refuses_an_unknown_backend) {
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* no OpenCL here (each test is a process) */
  const char *old = getenv("TL_BACKEND");
  char *saved = old ? strdup(old) : NULL;
  setenv("TL_BACKEND", "bogus", 1);
  tl_clear_error(NULL);
  tl_ctx *bad = tl_init();
  CHECK(bad == NULL);
  CHECK_INT(tl_last_status(NULL), TL_ERR_BACKEND);
  CHECK_STR(tl_last_error(NULL), "TL_BACKEND: unknown backend 'bogus' (expected cpu or interp)");
  tl_shutdown(bad);
  tl_clear_error(NULL);
  setenv("TL_BACKEND", "interp", 1);
  tl_ctx *ctx = tl_init();
  CHECK(ctx && !strcmp(tl_backend_name(ctx), "interp"));
  tl_shutdown(ctx);
  setenv("TL_BACKEND", "", 1);
  ctx = tl_init();
  CHECK(ctx && !strcmp(tl_backend_name(ctx), "cpu"));
  tl_shutdown(ctx);
  if (saved) setenv("TL_BACKEND", saved, 1);
  else unsetenv("TL_BACKEND");
  free(saved);
}

TEST(errors_propagate_through_a_chain) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *a = tl_zeros(ctx, TL_F32, 1, (int64_t[]){3});
  tl_tensor *bad = tl_sum(a, 1, (int[]){4}, 0); /* fails */
  tl_tensor *r = tl_relu(tl_add(tl_exp(bad), a));
  CHECK(r == NULL);
  CHECK_INT(tl_realize(r), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "sum: axis 4 is out of range for a tensor of rank 1"); /* the first error */
  TEST_SHUTDOWN(ctx);
}

TEST(errors_compiler_missing_failing_and_cache_unwritable) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *y = tl_exp(tl_ones(ctx, TL_F32, 1, (int64_t[]){8}));
  CHECK_INT(tl_set_compiler(ctx, "/nonexistent/cc"), TL_OK);
  CHECK_INT(tl_realize(y), TL_ERR_COMPILER);
  CHECK_CONTAINS(tl_last_error(ctx), "C compiler '/nonexistent/cc' not found");
  CHECK_INT(tl_set_compiler(ctx, NULL), TL_OK);
  /* a cache directory that cannot be made: kernels go to a private temporary one */
  CHECK_INT(tl_set_cache_dir(ctx, "/proc/tl-kernel-cache"), TL_OK);
  tl_tensor *z = tl_sqrt(tl_full(ctx, TL_F32, 1, (int64_t[]){5}, 6.25)); /* not y's kernel */
  float zv[5] = {0};
  CHECK_INT(tl_to_host(z, zv, sizeof zv), TL_OK);
  CHECK_NEAR(zv[4], 2.5, 1e-6);
  CHECK_INT(tl_get_stats(ctx).kernel_cache_fallback, 1);
  /* a compiler that fails: flags it rejects */
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  CHECK_INT(tl_set_cache_dir(ctx, dir), TL_OK);
  const char *env = getenv("TL_CFLAGS"), *tiered = getenv("TL_TIERED"); /* the caller's, put back after */
  char *saved = env ? strdup(env) : NULL, *saved_tiered = tiered ? strdup(tiered) : NULL;
  setenv("TL_CFLAGS", "-fno-such-flag-for-tl", 1);
  setenv("TL_TIERED", "0", 1); /* cc at once (tiered, libtcc's kernel would run: test_tiered.c) */
  CHECK_INT(tl_realize(y), TL_ERR_COMPILER);
  CHECK_CONTAINS(tl_last_error(ctx), "kernel compilation failed");
  if (saved) setenv("TL_CFLAGS", saved, 1);
  else unsetenv("TL_CFLAGS");
  if (saved_tiered) setenv("TL_TIERED", saved_tiered, 1);
  else unsetenv("TL_TIERED");
  free(saved), free(saved_tiered);
  CHECK_INT(tl_set_cache_dir(ctx, dir), TL_OK); /* recreate the compiler without the flag */
  CHECK_INT(tl_realize(y), TL_OK);
  double s;
  CHECK_INT(tl_item(tl_sum(y, 0, NULL, 0), &s), TL_OK);
  CHECK_NEAR(s, 8 * 2.718281828, 1e-4);
  CHECK_INT(tl_test_rm_tree(dir), 0);
  TEST_SHUTDOWN(ctx);
}

TEST(tcc_backend_compiles_the_same_kernels) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){8, 33});
  tl_tensor *want = tl_softmax(x, 1), *m = tl_matmul(x, tl_transpose(x, 0, 1));
  CHECK_INT(tl_realize(want), TL_OK);
  CHECK_INT(tl_realize(m), TL_OK);
  CHECK_INT(tl_set_compiler(ctx, "tcc"), TL_OK);
  tl_tensor *got = tl_softmax(x, 1), *m2 = tl_matmul(x, tl_transpose(x, 0, 1));
  tl_status st = tl_realize(got);
  if (st == TL_ERR_COMPILER) { /* libtcc not linked into this program */
    CHECK_CONTAINS(tl_last_error(ctx), "libtcc is not installed");
  } else {
    CHECK_INT(st, TL_OK);
    tl_tensor *d = tl_max(tl_abs(tl_sub(got, want)), 0, NULL, 0), *d2 = tl_max(tl_abs(tl_sub(m2, m)), 0, NULL, 0);
    double e, e2;
    CHECK_INT(tl_item(d, &e), TL_OK);
    CHECK_INT(tl_item(d2, &e2), TL_OK);
    CHECK(e < 1e-6);
    CHECK(e2 < 1e-3);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(deep_chains_realize_in_slices_without_exhausting_the_stack) {
  tl_ctx *ctx = new_ctx();
  for (int b = 0; b < 2; b++) {
    tl_set_backend(ctx, b ? "interp" : "cpu");
    tl_tensor *x = tl_ones(ctx, TL_F32, 1, (int64_t[]){4});
    for (int i = 0; i < 100000; i++) { /* 100,000 nodes deep: recursion would overflow */
      tl_tensor *y = tl_add_scalar(x, 1);
      tl_release(x);
      x = y;
    }
    char *dot = tl_graph_dot(x);
    CHECK(dot == NULL);
    CHECK_STR(tl_last_error(ctx), "graph_dot: the graph is 100001 nodes deep (at most 512); realize part of it first");
    double v;
    uint64_t runs = tl_get_stats(ctx).kernels_run;
    CHECK_INT(tl_item(tl_sum(x, 0, NULL, 0), &v), TL_OK);
    CHECK_NEAR(v, 4 * 100001.0, 0);
    /* a slice of about 512 levels per kernel, not one node per kernel (that was
     * quadratic: 25 s a backend) */
    if (!b) CHECK(tl_get_stats(ctx).kernels_run - runs < 1000);
    tl_release(x);
  }
  TEST_SHUTDOWN(ctx);
}

TEST(big_reductions_to_one_value_split_across_threads) {
  tl_ctx *ctx = new_ctx();
  int64_t n = 1 << 20;
  tl_tensor *x = tl_reshape(tl_arange(ctx, TL_F64, 0, (double)n, 1), 2, (int64_t[]){1024, 1024});
  tl_tensor *s = tl_sum(x, 0, NULL, 0), *m = tl_max(x, 0, NULL, 0);
  CHECK_INT(tl_schedule_count(s), 2); /* partial sums over 256 rows, then their sum */
  double v, w;
  CHECK_INT(tl_item(s, &v), TL_OK);
  CHECK_INT(tl_item(m, &w), TL_OK);
  CHECK_NEAR(v, (double)n * (double)(n - 1) / 2, 0);
  CHECK_NEAR(w, (double)(n - 1), 0);
  tl_tensor *small = tl_sum(tl_ones(ctx, TL_F32, 1, (int64_t[]){1000}), 0, NULL, 0);
  CHECK_INT(tl_schedule_count(small), 1); /* too small to be worth two kernels */
  tl_tensor *prime = tl_sum(tl_ones(ctx, TL_F32, 1, (int64_t[]){65537}), 0, NULL, 0);
  CHECK_INT(tl_schedule_count(prime), 1); /* no row count divides it */
  CHECK_INT(tl_item(prime, &v), TL_OK);
  CHECK_NEAR(v, 65537, 0);
  tl_tensor *c = tl_contiguous(tl_transpose(x, 0, 1));
  CHECK_INT(tl_schedule_count(c), 1);
  CHECK_INT(tl_item(tl_slice(tl_reshape(c, 1, &n), 0, 1, 2, 1), &v), TL_OK);
  CHECK_NEAR(v, 1024, 0); /* element (0, 1) of the transpose is x[1, 0] */
  TEST_SHUTDOWN(ctx);
}

TEST(realize_loop_does_no_buffer_mallocs_after_warmup) {
  tl_ctx *ctx = new_ctx();
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){128, 96});
  CHECK_INT(tl_realize(x), TL_OK);
  uint64_t after_warmup = 0;
  for (int i = 0; i < 6; i++) {
    tl_tensor *y = tl_softmax(x, 0); /* three kernels: two intermediates in an arena */
    CHECK_INT(tl_realize(y), TL_OK);
    tl_release(y);
    if (i == 1) after_warmup = tl_get_stats(ctx).buffer_mallocs;
  }
  tl_stats st = tl_get_stats(ctx);
  CHECK_INT(st.buffer_mallocs, after_warmup); /* zero mallocs in the last four turns */
  CHECK(st.buffer_cache_hits >= 8);
  /* the column max and sum (96 floats each) are both read by the last kernel: no sharing */
  CHECK_INT(st.plan_naive_bytes, 2 * 96 * 4);
  CHECK_INT(st.plan_arena_bytes, 2 * 96 * 4);
  tl_mem_trim(ctx);
  TEST_SHUTDOWN(ctx);
}
