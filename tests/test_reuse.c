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
