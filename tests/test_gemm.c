/* test_gemm.c — the GEMM path of matmul-shaped sums, against naive double loops.
 *
 * Two levels. The prelude's routine itself (compiled into this program, so ASan and
 * valgrind see its packing and edge handling): random shapes with edge tiles (sizes
 * 1, primes, across MR, NR, KC, MC and NC), transposed and padded strides, batches
 * with broadcast operands, f32 and f64, the unit range split at random points as the
 * thread pool splits it, the epilogue hook called once per element, and the path
 * with no workspace. Then the engine: tl_matmul on the same kinds of shapes, checked
 * to lower to the GEMM (or not, for the shapes that keep the plain loops). */
#include <stdint.h>
#include <stdlib.h>

#define TL_GEMM 1
#include "api/context.h"
#include "codegen/kernel_prelude.h"
#include "codegen/lower.h"
#include "graph/rewrite.h"
#include "core/shapetracker.h"
#include "test.h"
#include "tl.h"

#define GEMM_PREFIX gemm_prelude_
#include "gemm_direct.h"

/* ---- the engine ------------------------------------------------------------------- */
/* how the last kernel computing t lowers: 0 loops, 1 the GEMM, 2 the GEMM with an
 * epilogue (the graph rewritten and scheduled as realize does) */
static int gemm_kind(tl_tensor *handle) {
  static const tl_ruleset *const rules[] = {&tl_rules_fallback, &tl_rules_fold, &tl_rules_algebra, &tl_rules_split};
  tl_tensor *t = tl_api_tensor(handle, "gemm_kind");
  tl_ctx *ctx = t->slot.ctx;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *r = tl_rewrite_graph(&ctx->graph, t->u, rules, 4);
  while (r && r->op == TL_OP_VIEW && tl_st_is_contiguous(r->arg.p) && tl_uop_numel(r->src[0]) == tl_uop_numel(r))
    r = r->src[0];
  tl_schedule s;
  tl_lowered l;
  tl_error e = {0};
  int kind = -1;
  if (r && tl_schedule_build(r, true, &s)) {
    if (tl_lower_kernel(s.roots[s.nkernels - 1], &s, &l, &e) == TL_OK) {
      kind = l.gemm ? 1 + l.epilogue : 0;
      tl_lowered_free(&l);
    }
    tl_schedule_free(&s);
  }
  tl_graph_release_to(&ctx->graph, mark);
  return kind;
}
static bool lowers_to_gemm(tl_tensor *t) { return gemm_kind(t) >= 1; }

static tl_tensor *random_tensor(tl_ctx *ctx, tl_dtype dt, int nd, const int64_t *shape, double *host) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= shape[i];
  for (int64_t i = 0; i < n; i++) host[i] = value();
  tl_tensor *d = tl_from_data(ctx, TL_F64, nd, shape, host);
  tl_tensor *t = tl_cast(d, dt);
  tl_release(d);
  CHECK_INT(tl_realize(t), TL_OK); /* a buffer, as data usually is */
  return t;
}

/* element (b, i, j) of op(x) for x stored [batches..., r, c] with broadcast batches */
typedef struct {
  const double *v;
  int64_t batch, rows, cols; /* stored */
  bool trans;                /* read transposed */
} operand;
static double at(const operand *o, int64_t b, int64_t i, int64_t j) {
  int64_t bb = o->batch == 1 ? 0 : b;
  return o->trans ? o->v[(bb * o->rows + j) * o->cols + i] : o->v[(bb * o->rows + i) * o->cols + j];
}

/* (batch_a, M, K) x (batch_b, K, N) through tl_matmul, either operand stored
 * transposed (read through tl_transpose), against double loops */
static void engine_case(tl_ctx *ctx, tl_dtype dt, int64_t ba, int64_t bb, int64_t m, int64_t k, int64_t n, bool ta, bool tb,
                        int expect_gemm) {
  int64_t batch = ba > bb ? ba : bb;
  double *ha = malloc(sizeof(double) * (size_t)(ba * m * k)), *hb = malloc(sizeof(double) * (size_t)(bb * k * n));
  double *got = malloc(sizeof(double) * (size_t)(batch * m * n));
  if (!ha || !hb || !got) {
    CHECK(!"out of memory");
    goto out;
  }
  int64_t sa[3] = {ba, ta ? k : m, ta ? m : k}, sb[3] = {bb, tb ? n : k, tb ? k : n};
  tl_tensor *x = random_tensor(ctx, dt, ba > 1 ? 3 : 2, ba > 1 ? sa : sa + 1, ha);
  tl_tensor *y = random_tensor(ctx, dt, bb > 1 ? 3 : 2, bb > 1 ? sb : sb + 1, hb);
  if (ta) x = tl_transpose(x, tl_ndim(x) - 2, tl_ndim(x) - 1);
  if (tb) y = tl_transpose(y, tl_ndim(y) - 2, tl_ndim(y) - 1);
  tl_tensor *r = tl_matmul(x, y);
  if (expect_gemm >= 0) CHECK_INT(lowers_to_gemm(r), expect_gemm);
  tl_tensor *r64 = tl_cast(r, TL_F64);
  CHECK_INT(tl_to_host(r64, got, sizeof(double) * (size_t)(batch * m * n)), TL_OK);
  operand oa = {ha, ba, sa[1], sa[2], ta}, ob = {hb, bb, sb[1], sb[2], tb};
  int bad = 0;
  for (int64_t b = 0; b < batch && !bad; b++)
    for (int64_t i = 0; i < m && !bad; i++)
      for (int64_t j = 0; j < n && !bad; j++) {
        double s = 0, s_abs = 0;
        for (int64_t p = 0; p < k; p++) {
          s += at(&oa, b, i, p) * at(&ob, b, p, j);
          s_abs += fabs(at(&oa, b, i, p) * at(&ob, b, p, j));
        }
        double g = got[(b * m + i) * n + j];
        if (!(fabs(g - s) <= tolerance(dt == TL_F64, k, s_abs))) {
          bad = 1;
          tl_test_fail(__FILE__, __LINE__, "%s (%lld, %lld, %lld%s) x (%lld, %lld, %lld%s): [%lld, %lld, %lld] = %.9g, expected %.9g",
                       tl_dtype_name(dt), (long long)ba, (long long)m, (long long)k, ta ? " T" : "", (long long)bb, (long long)k,
                       (long long)n, tb ? " T" : "", (long long)b, (long long)i, (long long)j, g, s);
        }
      }
out:
  free(ha);
  free(hb);
  free(got);
}

TEST(gemm_engine_random_shapes_against_double_loops) {
  tl_ctx *ctx = tl_init();
  rng = 21;
  for (int i = 0; i < 24; i++) {
    tl_dtype dt = i & 1 ? TL_F64 : TL_F32;
    int64_t m = any_size(300), n = any_size(300), k = any_size(300);
    if (m * n * k > 3000000) k = 1 + pick(40);
    bool ta = pick(3) == 0, tb = pick(3) == 0;
    TL_SCOPE(ctx, turn) { engine_case(ctx, dt, 1, 1, m, k, n, ta, tb, -1); }
  }
  TEST_SHUTDOWN(ctx);
}

TEST(gemm_engine_batches_broadcast_and_lowering_choice) {
  tl_ctx *ctx = tl_init();
  rng = 22;
  TL_SCOPE(ctx, s) {
    engine_case(ctx, TL_F32, 3, 3, 17, 31, 47, false, false, 1); /* batched */
    engine_case(ctx, TL_F64, 4, 1, 13, 20, 29, false, false, 1); /* right operand shared */
    engine_case(ctx, TL_F32, 1, 3, 7, 33, 97, false, false, 1);  /* left operand shared */
    engine_case(ctx, TL_F32, 2, 2, 31, 17, 40, true, false, 1);  /* A transposed */
    engine_case(ctx, TL_F64, 2, 1, 16, 64, 48, false, true, 1);  /* B transposed (copied first) */
    engine_case(ctx, TL_F32, 1, 1, 1, 300, 257, false, false, 1); /* a row times a matrix */
    engine_case(ctx, TL_F32, 1, 1, 131, 257, 1, false, false, 0); /* matrix-vector: dot products */
    engine_case(ctx, TL_F32, 1, 1, 3, 4, 5, false, false, 0);    /* tiny: the plain loops */
    engine_case(ctx, TL_F32, 1, 1, 128, 256, 10, false, false, 1); /* the training shapes */
    engine_case(ctx, TL_F32, 1, 1, 128, 784, 256, false, false, 1);
  }
  TEST_SHUTDOWN(ctx);
}

/* an operand that is an expression is computed first (a kernel), then the GEMM */
TEST(gemm_engine_operand_expressions_are_realized_first) {
  tl_ctx *ctx = tl_init();
  rng = 23;
  double hx[40 * 30], hw[30 * 20];
  tl_tensor *x = random_tensor(ctx, TL_F32, 2, (int64_t[]){40, 30}, hx);
  tl_tensor *w = random_tensor(ctx, TL_F32, 2, (int64_t[]){30, 20}, hw);
  tl_tensor *y = tl_matmul(tl_relu(x), tl_mul_scalar(w, 0.5));
  CHECK_INT(gemm_kind(y), 1);
  CHECK_INT(tl_schedule_count(y), 3);
  float got[40 * 20];
  CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
  for (int i = 0; i < 40; i++)
    for (int j = 0; j < 20; j++) {
      double s = 0;
      for (int p = 0; p < 30; p++) s += (hx[i * 30 + p] > 0 ? hx[i * 30 + p] : 0) * hw[p * 20 + j] * 0.5;
      CHECK_NEAR(got[i * 20 + j], s, 1e-4);
    }
  TEST_SHUTDOWN(ctx);
}

/* ---- epilogues ------------------------------------------------------------------------
 * Elementwise consumers of a GEMM run in its kernel, on C while it is in cache. */

/* act(scale * (x @ w) + bias) against double loops; bias is (N), (M, 1) or none */
typedef enum { NO_BIAS, ROW_BIAS, COLUMN_BIAS } bias_kind;
static void epilogue_case(tl_ctx *ctx, tl_dtype dt, int64_t batch, int64_t m, int64_t k, int64_t n, bias_kind bk, bool relu,
                          double scale) {
  int64_t nb = bk == ROW_BIAS ? n : bk == COLUMN_BIAS ? m : 0;
  double *hx = malloc(sizeof(double) * (size_t)(batch * m * k)), *hw = malloc(sizeof(double) * (size_t)(k * n));
  double *hb = malloc(sizeof(double) * (size_t)(nb + 1)), *got = malloc(sizeof(double) * (size_t)(batch * m * n));
  if (!hx || !hw || !hb || !got) {
    CHECK(!"out of memory");
    goto out;
  }
  int64_t sx[3] = {batch, m, k};
  tl_tensor *x = random_tensor(ctx, dt, batch > 1 ? 3 : 2, batch > 1 ? sx : sx + 1, hx);
  tl_tensor *w = random_tensor(ctx, dt, 2, (int64_t[]){k, n}, hw);
  tl_tensor *y = tl_matmul(x, w);
  if (scale != 1) y = tl_mul_scalar(y, scale);
  if (bk == ROW_BIAS) y = tl_add(y, random_tensor(ctx, dt, 1, &n, hb));
  if (bk == COLUMN_BIAS) y = tl_add(y, random_tensor(ctx, dt, 2, (int64_t[]){m, 1}, hb));
  if (relu) y = tl_relu(y);
  bool fused = scale != 1 || bk != NO_BIAS || relu;
  CHECK_INT(tl_schedule_count(y), 1);
  CHECK_INT(gemm_kind(y), fused ? 2 : 1);
  CHECK_INT(tl_to_host(tl_cast(y, TL_F64), got, sizeof(double) * (size_t)(batch * m * n)), TL_OK);
  int bad = 0;
  for (int64_t b = 0; b < batch && !bad; b++)
    for (int64_t i = 0; i < m && !bad; i++)
      for (int64_t j = 0; j < n && !bad; j++) {
        double s = 0, s_abs = 0;
        for (int64_t p = 0; p < k; p++) {
          s += hx[(b * m + i) * k + p] * hw[p * n + j];
          s_abs += fabs(hx[(b * m + i) * k + p] * hw[p * n + j]);
        }
        s = s * scale + (bk == ROW_BIAS ? hb[j] : bk == COLUMN_BIAS ? hb[i] : 0);
        if (relu && s < 0) s = 0;
        double g = got[(b * m + i) * n + j];
        if (!(fabs(g - s) <= tolerance(dt == TL_F64, k, s_abs * fabs(scale)) + (dt == TL_F64 ? 1e-15 : 1e-6) * fabs(s))) {
          bad = 1;
          tl_test_fail(__FILE__, __LINE__, "%s batch %lld (%lld, %lld) x (%lld, %lld) bias %d relu %d scale %g: [%lld, %lld, %lld] = %.9g, expected %.9g",
                       tl_dtype_name(dt), (long long)batch, (long long)m, (long long)k, (long long)k, (long long)n, (int)bk, relu, scale,
                       (long long)b, (long long)i, (long long)j, g, s);
        }
      }
out:
  free(hx);
  free(hw);
  free(hb);
  free(got);
}

TEST(gemm_epilogue_bias_activation_scale_in_one_kernel) {
  tl_ctx *ctx = tl_init();
  rng = 31;
  TL_SCOPE(ctx, s) {
    epilogue_case(ctx, TL_F32, 1, 128, 256, 10, ROW_BIAS, false, 1);   /* a linear layer's logits */
    epilogue_case(ctx, TL_F32, 1, 37, 53, 41, ROW_BIAS, true, 1);     /* relu(x w + b) */
    epilogue_case(ctx, TL_F64, 1, 97, 31, 150, COLUMN_BIAS, true, 0.5);
    epilogue_case(ctx, TL_F32, 3, 17, 40, 33, ROW_BIAS, false, -2);   /* batched */
    epilogue_case(ctx, TL_F64, 2, 13, 300, 17, NO_BIAS, true, 1);     /* K over several blocks */
    epilogue_case(ctx, TL_F32, 1, 1, 300, 257, ROW_BIAS, true, 1);    /* one row */
    epilogue_case(ctx, TL_F32, 1, 150, 20, 530, NO_BIAS, false, 3);  /* several column blocks */
    epilogue_case(ctx, TL_F32, 1, 40, 30, 20, NO_BIAS, false, 1);    /* nothing to fuse */
  }
  TEST_SHUTDOWN(ctx);
}

/* a sum something else reads too stays a kernel of its own; readers that are not
 * elementwise at its own index (a transpose, a reduce) do not fuse */
TEST(gemm_epilogue_only_when_nothing_else_reads_the_sum) {
  tl_ctx *ctx = tl_init();
  rng = 32;
  double hx[40 * 30], hw[30 * 20], got[40 * 20], want[40 * 20];
  tl_tensor *x = random_tensor(ctx, TL_F64, 2, (int64_t[]){40, 30}, hx);
  tl_tensor *w = random_tensor(ctx, TL_F64, 2, (int64_t[]){30, 20}, hw);
  for (int i = 0; i < 40; i++)
    for (int j = 0; j < 20; j++) {
      want[i * 20 + j] = 0;
      for (int p = 0; p < 30; p++) want[i * 20 + j] += hx[i * 30 + p] * hw[p * 20 + j];
    }
  TL_SCOPE(ctx, s) {
    tl_tensor *y = tl_matmul(x, w);
    /* y twice at its own index: one kernel */
    tl_tensor *z = tl_add(tl_relu(y), tl_mul_scalar(y, 0.25));
    CHECK_INT(tl_schedule_count(z), 1);
    CHECK_INT(tl_to_host(z, got, sizeof got), TL_OK);
    for (int i = 0; i < 800; i++) CHECK_NEAR(got[i], (want[i] > 0 ? want[i] : 0) + 0.25 * want[i], 1e-9);
    /* y also read by a row sum: y is computed once, then both */
    tl_tensor *rows = tl_sum(y, 1, (int[]){1}, 1);
    tl_tensor *u = tl_add(tl_relu(y), rows);
    CHECK_INT(tl_schedule_count(u), 2);
    CHECK_INT(gemm_kind(u), 0);
    CHECK_INT(tl_to_host(u, got, sizeof got), TL_OK);
    for (int i = 0; i < 40; i++) {
      double r = 0;
      for (int j = 0; j < 20; j++) r += want[i * 20 + j];
      for (int j = 0; j < 20; j++) CHECK_NEAR(got[i * 20 + j], (want[i * 20 + j] > 0 ? want[i * 20 + j] : 0) + r, 1e-9);
    }
    /* read transposed: the sum is a kernel, the transpose another */
    tl_tensor *t = tl_add(tl_transpose(y, 0, 1), tl_ones(ctx, TL_F64, 2, (int64_t[]){20, 40}));
    CHECK_INT(tl_schedule_count(t), 2);
    CHECK_INT(tl_to_host(t, got, sizeof got), TL_OK);
    for (int i = 0; i < 40; i++)
      for (int j = 0; j < 20; j++) CHECK_NEAR(got[j * 40 + i], want[i * 20 + j] + 1, 1e-9);
    /* a cast to another type is not an epilogue */
    tl_tensor *c = tl_cast(y, TL_F32);
    CHECK_INT(tl_schedule_count(c), 2);
  }
  TEST_SHUTDOWN(ctx);
}

/* operands read through slices (an offset) and flips (negative strides); a slice with
 * a step is a stack of views here, which the GEMM does not take: the loops run it */
TEST(gemm_engine_sliced_and_flipped_operands) {
  tl_ctx *ctx = tl_init();
  rng = 33;
  enum { M = 23, K = 41, N = 37 };
  static double hx[2 * M * K], hw[K * 2 * N], got[M * N];
  tl_tensor *x = random_tensor(ctx, TL_F64, 2, (int64_t[]){2 * M, K}, hx);
  tl_tensor *w = random_tensor(ctx, TL_F64, 2, (int64_t[]){K, 2 * N}, hw);
  for (int variant = 0; variant < 5; variant++) {
    TL_SCOPE(ctx, s) {
      /* rows 3.. of x (or 1, 3, 5, ...); columns N.. of w; either flipped */
      int step = variant == 4 ? 2 : 1, first = step == 2 ? 1 : 3;
      tl_tensor *a = tl_slice(x, 0, first, first + step * M - step + 1, step), *b = tl_slice(w, 1, N, 2 * N, 1);
      if (variant & 1) a = tl_flip(a, 1, (int[]){1});
      if (variant & 2) b = tl_flip(b, 1, (int[]){0});
      tl_tensor *y = tl_matmul(a, b);
      CHECK_INT(gemm_kind(y), step == 1);
      CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          double want = 0;
          for (int p = 0; p < K; p++) {
            int pa = variant & 1 ? K - 1 - p : p, pb = variant & 2 ? K - 1 - p : p;
            want += hx[(first + step * i) * K + pa] * hw[pb * 2 * N + N + j];
          }
          CHECK_NEAR(got[i * N + j], want, 1e-12);
        }
    }
  }
  TEST_SHUTDOWN(ctx);
}

/* libtcc has no vector extension: the routine's scalar micro-kernel, same results */
TEST(gemm_tcc_compiles_the_scalar_routine) {
  tl_ctx *ctx = tl_init();
  rng = 34;
  static double hx[29 * 300], hw[300 * 45], hb[45], got[29 * 45];
  tl_tensor *x = random_tensor(ctx, TL_F32, 2, (int64_t[]){29, 300}, hx);
  tl_tensor *w = random_tensor(ctx, TL_F32, 2, (int64_t[]){300, 45}, hw);
  tl_tensor *b = random_tensor(ctx, TL_F32, 1, (int64_t[]){45}, hb);
  CHECK_INT(tl_set_compiler(ctx, "tcc"), TL_OK);
  tl_tensor *y = tl_cast(tl_relu(tl_add(tl_matmul(x, w), b)), TL_F64);
  tl_status st = tl_to_host(y, got, sizeof got);
  if (st == TL_ERR_COMPILER) { /* libtcc not linked into this program */
    CHECK_CONTAINS(tl_last_error(ctx), "libtcc is not installed");
  } else {
    CHECK_INT(st, TL_OK);
    for (int i = 0; i < 29; i++)
      for (int j = 0; j < 45; j++) {
        double s = hb[j], mag = 0;
        for (int p = 0; p < 300; p++) s += hx[i * 300 + p] * hw[p * 45 + j], mag += fabs(hx[i * 300 + p] * hw[p * 45 + j]);
        CHECK_NEAR(got[i * 45 + j], s > 0 ? s : 0, tolerance(false, 300, mag) + 1e-6);
      }
  }
  TEST_SHUTDOWN(ctx);
}

/* one buffer as both operands (x x, x^T x: a Gram matrix) */
TEST(gemm_engine_one_buffer_both_sides) {
  tl_ctx *ctx = tl_init();
  rng = 35;
  enum { N = 45 };
  static double hx[N * N], got[N * N];
  tl_tensor *x = random_tensor(ctx, TL_F64, 2, (int64_t[]){N, N}, hx);
  for (int variant = 0; variant < 2; variant++) {
    TL_SCOPE(ctx, s) {
      tl_tensor *y = variant ? tl_matmul(tl_transpose(x, 0, 1), x) : tl_matmul(x, x);
      CHECK_INT(gemm_kind(y), 1);
      CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
          double want = 0;
          for (int p = 0; p < N; p++) want += (variant ? hx[p * N + i] : hx[i * N + p]) * hx[p * N + j];
          CHECK_NEAR(got[i * N + j], want, 1e-12);
        }
    }
  }
  TEST_SHUTDOWN(ctx);
}

/* ---- both vector widths ---------------------------------------------------------------
 * Generated kernels in either micro-tile layout: the 512-bit one forced with
 * TL_GEMM_WIDE (what an AVX-512 CPU compiles; emulated where it has none) and the
 * 256-bit one forced with -mno-avx512f (what an AVX-512 CPU runs only when told), each
 * built by cc (TL_TIERED=0: tier 1 would call the library's GEMM), edges and
 * epilogues included, against double loops. */
TEST(gemm_engine_both_vector_widths) {
  static const char *const flags[] = {
      "-O1 -march=native -fno-math-errno -fopenmp-simd -fwrapv -DTL_GEMM_WIDE",
      "-O1 -march=native -mno-avx512f -fno-math-errno -fopenmp-simd -fwrapv",
  };
  char *cflags = tl_test_env_save("TL_CFLAGS"), *tiered = tl_test_env_save("TL_TIERED");
  setenv("TL_TIERED", "0", 1);
  for (int w = 0; w < 2; w++) {
    setenv("TL_CFLAGS", flags[w], 1);
    tl_ctx *ctx = tl_init();
    rng = 41 + (uint64_t)w;
    TL_SCOPE(ctx, s) {
      engine_case(ctx, TL_F32, 1, 1, 25, 31, 33, false, false, 1);  /* edges of the 12 x 32 tile */
      engine_case(ctx, TL_F64, 1, 1, 13, 20, 17, false, false, 1);  /* edges of the 12 x 16 tile */
      engine_case(ctx, TL_F32, 2, 1, 36, 300, 65, true, false, 1);  /* K over two blocks, A transposed */
      engine_case(ctx, TL_F32, 1, 1, 1, 300, 257, false, false, 1); /* a row times a matrix */
      engine_case(ctx, TL_F32, 1, 1, 128, 784, 256, false, false, 1);
      epilogue_case(ctx, TL_F32, 1, 37, 53, 41, ROW_BIAS, true, 1);
      epilogue_case(ctx, TL_F64, 1, 97, 31, 150, COLUMN_BIAS, true, 0.5);
    }
    TEST_SHUTDOWN(ctx);
  }
  tl_test_env_restore("TL_CFLAGS", cflags);
  tl_test_env_restore("TL_TIERED", tiered);
}
