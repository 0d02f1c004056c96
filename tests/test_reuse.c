/* test_reuse.c — compiled kernels reused: random draws run one kernel per shape (the
 * stream is data), with the very numbers of an independent Philox4x32-10 written here. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

/* kernels loaded from outside this process: compiled now, or found on disk */
static uint64_t kernels_loaded(const tl_ctx *ctx) {
  tl_stats s = tl_get_stats(ctx);
  return s.kernels_compiled + s.disk_cache_hits;
}

TEST(reuse_random_draws_compile_once) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 11);
  int64_t n = 1000;
  float *x = malloc(sizeof *x * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = (float)i;
  tl_tensor *xt = tl_from_data(ctx, TL_F32, 1, &n, x);
  uint64_t after_first = 0;
  float prev = -1;
  int changed = 0;
  for (int it = 0; it < 50; it++) {
    TL_SCOPE(ctx, step) {
      float a[1000], b[1000];
      CHECK_INT(tl_to_host(tl_randn(ctx, TL_F32, 1, &n), a, sizeof a), TL_OK);
      CHECK_INT(tl_to_host(tl_dropout(xt, 0.25, 1), b, sizeof b), TL_OK);
      changed += a[0] != prev; /* each call draws another stream */
      prev = a[0];
      int kept = 0;
      for (int i = 1; i < 1000; i++) kept += b[i] != 0;
      CHECK(kept > 650 && kept < 850);
    }
    if (it == 0) after_first = kernels_loaded(ctx);
  }
  CHECK_INT(changed, 50);
  CHECK_INT(kernels_loaded(ctx), after_first); /* only the first turn compiled */
  free(x);
  TEST_SHUTDOWN(ctx);
}

/* ---- an independent Philox4x32-10 (Salmon et al., SC'11), for the values --------- */
static void philox(uint32_t ctr[4], uint32_t key[2]) {
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * ctr[0], p1 = (uint64_t)0xCD9E8D57u * ctr[2];
    uint32_t c[4] = {(uint32_t)(p1 >> 32) ^ ctr[1] ^ k0, (uint32_t)p1, (uint32_t)(p0 >> 32) ^ ctr[3] ^ k1,
                     (uint32_t)p0};
    for (int i = 0; i < 4; i++) ctr[i] = c[i];
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/* element i of stream `stream` under key `seed`: the counter is (i, stream) */
static void draw(uint64_t seed, uint64_t stream, uint64_t i, uint32_t w[4]) {
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  w[0] = (uint32_t)i, w[1] = (uint32_t)(i >> 32), w[2] = (uint32_t)stream, w[3] = (uint32_t)(stream >> 32);
  philox(w, key);
}

TEST(reuse_random_values_match_independent_philox) {
  /* the known answer of Random123's kat_vectors: counter 0, key 0 */
  uint32_t w[4] = {0, 0, 0, 0}, key[2] = {0, 0};
  philox(w, key);
  CHECK(w[0] == 0x6627e8d5u && w[1] == 0xe169c58du && w[2] == 0xbc57ac4cu && w[3] == 0x9b00dbd8u);

  tl_ctx *ctx = tl_init();
  const uint64_t seed = 0x123456789abcdefull;
  tl_manual_seed(ctx, seed);
  int64_t n = 300;
  float u[300], nf[300];
  double ud[300];
  /* streams count the draws since the seed: 0, 1, 2; drawn in a loop of kernels already
   * compiled for other streams */
  for (int rep = 0; rep < 3; rep++) {
    tl_manual_seed(ctx, seed + (uint64_t)rep);
    CHECK_INT(tl_to_host(tl_rand(ctx, TL_F32, 1, &n), u, sizeof u), TL_OK);
    CHECK_INT(tl_to_host(tl_rand(ctx, TL_F64, 1, &n), ud, sizeof ud), TL_OK);
    CHECK_INT(tl_to_host(tl_randn(ctx, TL_F32, 1, &n), nf, sizeof nf), TL_OK);
    int bad_u = 0, bad_d = 0, bad_n = 0;
    for (int64_t i = 0; i < n; i++) {
      uint32_t a[4], b[4];
      draw(seed + (uint64_t)rep, 0, (uint64_t)i, a);
      bad_u += u[i] != (float)(a[0] >> 8) * (1.0f / 16777216.0f);
      draw(seed + (uint64_t)rep, 1, (uint64_t)i, a);
      bad_d += ud[i] != (double)((((uint64_t)a[0] << 32) | a[1]) >> 11) * (1.0 / 9007199254740992.0);
      /* randn: Box-Muller over streams (1 << 40) and (2 << 40) above its own */
      draw(seed + (uint64_t)rep, 2 + ((uint64_t)1 << 40), (uint64_t)i, a);
      draw(seed + (uint64_t)rep, 2 + ((uint64_t)2 << 40), (uint64_t)i, b);
      float u1 = (float)(a[0] >> 8) * (1.0f / 16777216.0f), u2 = (float)(b[0] >> 8) * (1.0f / 16777216.0f);
      float want = sqrtf(logf(1.0f - u1) * -2.0f) * cosf(u2 * 6.28318531f);
      bad_n += !(fabsf(nf[i] - want) <= 1e-6f * (1 + fabsf(want)));
    }
    CHECK_INT(bad_u, 0);
    CHECK_INT(bad_d, 0);
    CHECK_INT(bad_n, 0);
  }
  TEST_SHUTDOWN(ctx);
}

/* ---- realizes replayed by graph structure ------------------------------------------ */
static tl_tensor *vec(tl_ctx *ctx, int64_t n, float scale, float shift) {
  float v[256];
  for (int64_t i = 0; i < n; i++) v[i] = scale * (float)(i % 17) - shift;
  return tl_from_data(ctx, TL_F32, 1, &n, v);
}

TEST(reuse_replay_binds_new_buffers) {
  tl_ctx *ctx = tl_init();
  uint64_t loaded = 0, mem_hits = 0;
  for (int it = 0; it < 20; it++) {
    TL_SCOPE(ctx, step) {
      float s = 1.0f + (float)it;
      tl_tensor *a = vec(ctx, 64, s, 3), *b = vec(ctx, 64, 0.5f, 1), *c = vec(ctx, 64, 1, s);
      float y[64];
      CHECK_INT(tl_to_host(tl_relu(tl_add(tl_mul(a, b), c)), y, sizeof y), TL_OK);
      int bad = 0;
      for (int i = 0; i < 64; i++) {
        float av = s * (float)(i % 17) - 3, bv = 0.5f * (float)(i % 17) - 1, cv = (float)(i % 17) - s;
        float want = av * bv + cv;
        bad += y[i] != (want > 0 ? want : 0);
      }
      CHECK_INT(bad, 0);
    }
    tl_stats st = tl_get_stats(ctx);
    if (it == 0) loaded = kernels_loaded(ctx), mem_hits = st.mem_cache_hits;
    CHECK_INT(st.realize_replays, it); /* every realize after the first */
  }
  /* replays neither compile nor look the source up */
  CHECK_INT(kernels_loaded(ctx), loaded);
  CHECK_INT(tl_get_stats(ctx).mem_cache_hits, mem_hits);
  TEST_SHUTDOWN(ctx);
}

/* graphs that differ only in structure a replay must not confuse: a constant, a shape,
 * a view, a dtype, one leaf read twice against two leaves */
TEST(reuse_replay_tells_structures_apart) {
  tl_ctx *ctx = tl_init();
  for (int round = 0; round < 2; round++) { /* the second round replays every one */
    TL_SCOPE(ctx, r) {
      tl_tensor *a = vec(ctx, 8, 1, 4), *b = vec(ctx, 8, 2, 0);
      double v;
      CHECK_INT(tl_item(tl_sum(tl_mul_scalar(a, 2), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, 2 * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 - 32), 0);
      CHECK_INT(tl_item(tl_sum(tl_mul_scalar(a, 3), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, 3 * (28 - 32), 0);
      CHECK_INT(tl_item(tl_sum(tl_mul(a, a), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, 16 + 9 + 4 + 1 + 0 + 1 + 4 + 9, 0);
      CHECK_INT(tl_item(tl_sum(tl_mul(a, b), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, -4 * 0 - 3 * 2 - 2 * 4 - 1 * 6 + 0 + 1 * 10 + 2 * 12 + 3 * 14, 0);
      CHECK_INT(tl_item(tl_sum(tl_flip(a, 1, (int[]){0}), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, -4, 0);
      CHECK_INT(tl_item(tl_sum(tl_slice(b, 0, 2, 8, 1), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, 2 * (2 + 3 + 4 + 5 + 6 + 7), 0);
      CHECK_INT(tl_item(tl_sum(tl_slice(b, 0, 4, 8, 1), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, 2 * (4 + 5 + 6 + 7), 0);
      CHECK_INT(tl_item(tl_sum(tl_cast(tl_mul_scalar(a, 0.5), TL_I32), 0, NULL, 0), &v), TL_OK);
      CHECK_NEAR(v, -2 - 1 - 1 + 0 + 0 + 0 + 1 + 1, 0);
    }
  }
  CHECK(tl_get_stats(ctx).realize_replays >= 8);
  TEST_SHUTDOWN(ctx);
}

/* several kernels, intermediates in the arena: a softmax, then a product with it */
TEST(reuse_replay_multi_kernel_graphs) {
  tl_ctx *ctx = tl_init();
  int64_t shape[2] = {6, 40};
  for (int it = 0; it < 4; it++) {
    TL_SCOPE(ctx, step) {
      float x[240], w[240];
      for (int i = 0; i < 240; i++) x[i] = (float)((i * 7 + it) % 13) / 5, w[i] = (float)((i + 3 * it) % 5) - 2;
      tl_tensor *xt = tl_from_data(ctx, TL_F32, 2, shape, x), *wt = tl_from_data(ctx, TL_F32, 2, shape, w);
      tl_tensor *p = tl_softmax(xt, 1);
      tl_tensor *y = tl_matmul(p, tl_transpose(wt, 0, 1)); /* [6, 6] */
      tl_tensor *z = tl_sum(tl_mul(y, tl_max(y, 1, (int[]){1}, 1)), 1, (int[]){1}, 0);
      float got[6];
      CHECK_INT(tl_to_host(z, got, sizeof got), TL_OK);
      for (int r = 0; r < 6; r++) { /* the same in double, here */
        double prob[40], m = -1e300, sum = 0, yr[6], ymax = -1e300, want = 0;
        for (int k = 0; k < 40; k++) m = fmax(m, x[r * 40 + k]);
        for (int k = 0; k < 40; k++) sum += prob[k] = exp(x[r * 40 + k] - m);
        for (int j = 0; j < 6; j++) {
          yr[j] = 0;
          for (int k = 0; k < 40; k++) yr[j] += prob[k] / sum * w[j * 40 + k];
          ymax = fmax(ymax, yr[j]);
        }
        for (int j = 0; j < 6; j++) want += yr[j] * ymax;
        CHECK_NEAR(got[r], want, 1e-4);
      }
    }
  }
  CHECK(tl_get_stats(ctx).realize_replays >= 3);
  TEST_SHUTDOWN(ctx);
}

/* random leaves are bound per call: replayed draws are fresh, and the same numbers the
 * full path gives (a fresh context with the same seed realizes them from scratch) */
TEST(reuse_replay_random_streams) {
  tl_ctx *ctx = tl_init(), *fresh = tl_init();
  int64_t n = 100;
  tl_manual_seed(ctx, 5);
  float first[100];
  for (int it = 0; it < 5; it++) {
    TL_SCOPE(ctx, step) {
      float got[100], want[100];
      tl_tensor *y = tl_add(tl_mul(tl_randn(ctx, TL_F32, 1, &n), tl_rand(ctx, TL_F32, 1, &n)), tl_randn(ctx, TL_F32, 1, &n));
      CHECK_INT(tl_to_host(y, got, sizeof got), TL_OK);
      tl_manual_seed(fresh, 5); /* the same streams: 3 it, 3 it + 1, 3 it + 2 */
      for (int skip = 0; skip < 3 * it; skip++) tl_release(tl_rand(fresh, TL_F32, 1, &n));
      tl_set_backend(fresh, "interp");
      tl_tensor *yf = tl_add(tl_mul(tl_randn(fresh, TL_F32, 1, &n), tl_rand(fresh, TL_F32, 1, &n)),
                             tl_randn(fresh, TL_F32, 1, &n));
      CHECK_INT(tl_to_host(yf, want, sizeof want), TL_OK);
      tl_release(yf);
      int bad = 0;
      for (int i = 0; i < 100; i++) bad += !(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
      CHECK_INT(bad, 0);
      if (it == 0) memcpy(first, got, sizeof first);
      else CHECK(memcmp(first, got, sizeof first) != 0);
    }
  }
  CHECK_INT(tl_get_stats(ctx).realize_replays, 4);
  TEST_SHUTDOWN(fresh);
  TEST_SHUTDOWN(ctx);
}

/* bounded: more structures than the cache keeps, the oldest go, results stay right;
 * a compiler change drops them all (their functions go with it). Slices at 300 offsets
 * are 300 structures but one kernel (the offset is bound, not compiled). */
TEST(reuse_replay_is_bounded) {
  tl_ctx *ctx = tl_init();
  tl_tensor *big = tl_arange(ctx, TL_F32, 0, 304, 1);
  CHECK_INT(tl_realize(big), TL_OK);
  for (int round = 0; round < 2; round++)
    for (int64_t off = 0; off < 300; off++) {
      TL_SCOPE(ctx, step) {
        double v;
        CHECK_INT(tl_item(tl_sum(tl_slice(big, 0, off, off + 4, 1), 0, NULL, 0), &v), TL_OK);
        CHECK_NEAR(v, (double)(4 * off + 6), 0);
      }
      CHECK(tl_get_stats(ctx).replay_plans <= 256);
    }
  CHECK_INT(tl_get_stats(ctx).replay_plans, 256);
  CHECK_INT(tl_get_stats(ctx).realize_replays, 0); /* least recently used went first */
  TL_SCOPE(ctx, again) { /* the newest stays */
    double v;
    CHECK_INT(tl_item(tl_sum(tl_slice(big, 0, 299, 303, 1), 0, NULL, 0), &v), TL_OK);
    CHECK_NEAR(v, 4 * 299 + 6, 0);
  }
  CHECK_INT(tl_get_stats(ctx).realize_replays, 1);
  CHECK_INT(tl_set_cache_dir(ctx, getenv("TL_CACHE_DIR")), TL_OK);
  CHECK_INT(tl_get_stats(ctx).replay_plans, 0);
  TEST_SHUTDOWN(ctx);
}

/* a GEMM whose epilogue draws (dropout after bias and relu), over a slice of a bigger
 * input: replayed on new buffers with new keys; every value checked against double
 * loops and the Philox above */
TEST(reuse_replay_gemm_epilogue_with_dropout) {
  tl_ctx *ctx = tl_init();
  enum { M = 33, K = 70, N = 45 };
  static float x[(M + 2) * K], w[K * N], b[N], y[M * N];
  for (int it = 0; it < 3; it++) {
    for (int i = 0; i < (M + 2) * K; i++) x[i] = (float)((i * 5 + it) % 11) / 4 - 1;
    for (int i = 0; i < K * N; i++) w[i] = (float)((i * 3 + 2 * it) % 7) / 3 - 1;
    for (int i = 0; i < N; i++) b[i] = (float)(i % 5) / 2 - 1 + (float)it;
    TL_SCOPE(ctx, step) {
      tl_manual_seed(ctx, 100 + (uint64_t)it);
      tl_tensor *xt = tl_from_data(ctx, TL_F32, 2, (int64_t[]){M + 2, K}, x);
      tl_tensor *wt = tl_from_data(ctx, TL_F32, 2, (int64_t[]){K, N}, w);
      tl_tensor *bt = tl_from_data(ctx, TL_F32, 1, (int64_t[]){N}, b);
      tl_tensor *h = tl_relu(tl_add(tl_matmul(tl_slice(xt, 0, 2, M + 2, 1), wt), bt));
      CHECK_INT(tl_to_host(tl_dropout(h, 0.5, 1), y, sizeof y), TL_OK);
    }
    int bad = 0;
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double s = b[n];
        for (int k = 0; k < K; k++) s += (double)x[(m + 2) * K + k] * w[k * N + n];
        uint32_t r[4];
        draw(100 + (uint64_t)it, 0, (uint64_t)(m * N + n), r);
        double want = (float)(r[0] >> 8) * (1.0f / 16777216.0f) >= 0.5f ? 2 * (s > 0 ? s : 0) : 0;
        bad += !(fabs(y[m * N + n] - want) <= 1e-4 * (1 + fabs(want)));
      }
    CHECK_INT(bad, 0);
  }
  CHECK_INT(tl_get_stats(ctx).realize_replays, 2);
  TEST_SHUTDOWN(ctx);
}

/* DOT pictures come from the full path: with a dot directory nothing replays, and the
 * plans recorded before are kept for when it is unset */
TEST(reuse_replay_off_while_drawing_dot) {
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  tl_ctx *ctx = tl_init();
  int64_t n = 16;
  for (int it = 0; it < 6; it++) {
    if (it == 2) CHECK_INT(tl_set_dot_dir(ctx, dir), TL_OK);
    if (it == 4) CHECK_INT(tl_set_dot_dir(ctx, NULL), TL_OK);
    TL_SCOPE(ctx, step) {
      float v[16];
      tl_manual_seed(ctx, 3);
      CHECK_INT(tl_to_host(tl_mul_scalar(tl_rand(ctx, TL_F32, 1, &n), 2), v, sizeof v), TL_OK);
      uint32_t r[4];
      draw(3, 0, 5, r);
      CHECK(v[5] == 2 * ((float)(r[0] >> 8) * (1.0f / 16777216.0f)));
    }
  }
  CHECK_INT(tl_get_stats(ctx).realize_replays, 3); /* turns 1, 4 and 5 */
  CHECK_INT(tl_test_rm_tree(dir), 0);
  TEST_SHUTDOWN(ctx);
}
