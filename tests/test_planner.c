/* test_planner.c — the memory planner: exact peaks on hand-built schedules, 2000
 * seeded random schedules checked against the validator and both bounds
 * (lower bound <= arena <= naive), the validator catching bad plans, bad input. */
#include <stdint.h>
#include <stdlib.h>

#include "sched/planner.h"
#include "test.h"

#define A TL_PLAN_ALIGN

static tl_plan_buffer buf(size_t size, int first, int last) {
  return (tl_plan_buffer){size, first, last, (size_t)-1};
}

/* plans and validates; returns the arena size (or (size_t)-1 on failure) */
static size_t plan_ok(tl_plan_buffer *b, int n, tl_plan *p) {
  tl_error err = {0};
  CHECK_INT(tl_plan_make(b, n, p, &err), TL_OK);
  if (err.status) printf("  make: %s\n", err.msg);
  CHECK_INT(tl_plan_validate(b, n, p, &err), TL_OK);
  if (err.status) printf("  validate: %s\n", err.msg);
  CHECK(p->arena_bytes <= p->naive_bytes);
  return err.status ? (size_t)-1 : p->arena_bytes;
}

/* the largest total of aligned sizes live at one kernel: no plan can beat it */
static size_t lower_bound(const tl_plan_buffer *b, int n, int nkernels) {
  size_t best = 0;
  for (int t = 0; t < nkernels; t++) {
    size_t live = 0;
    for (int i = 0; i < n; i++)
      if (b[i].first <= t && t <= b[i].last) live += (b[i].size + A - 1) / A * A;
    if (live > best) best = live;
  }
  return best;
}

TEST(planner_chain_needs_two_slots) {
  tl_plan_buffer b[10];
  for (int i = 0; i < 10; i++) b[i] = buf(1000, i, i + 1); /* 1000 -> 1024 */
  tl_plan p;
  CHECK_INT(plan_ok(b, 10, &p), 2 * 1024);
  CHECK_INT(p.naive_bytes, 10 * 1024);
  for (int i = 0; i + 1 < 10; i++) CHECK(b[i].offset != b[i + 1].offset);
}

TEST(planner_boundary_kernel_is_shared_lifetime) {
  /* last read by kernel 1 and first written by kernel 1: live together */
  tl_plan_buffer b[2] = {buf(64, 0, 1), buf(64, 1, 2)};
  tl_plan p;
  CHECK_INT(plan_ok(b, 2, &p), 128);
  /* one kernel apart: they may share */
  tl_plan_buffer c[2] = {buf(64, 0, 1), buf(64, 2, 3)};
  CHECK_INT(plan_ok(c, 2, &p), 64);
  CHECK_INT(c[0].offset, c[1].offset);
}

TEST(planner_diamond) {
  /* k0 writes A; k1 reads A writes B; k2 reads A writes C; k3 reads B,C writes D;
   * k4 reads D. Live: k0 {A}, k1 {A,B}, k2 {A,B,C}, k3 {B,C,D}, k4 {D}: the peak is
   * 1024+512+512 = 2048 at k2 and k3, and D can reuse A's bytes. */
  tl_plan_buffer b[4] = {buf(1000, 0, 2), buf(500, 1, 3), buf(512, 2, 3), buf(1024, 3, 4)};
  tl_plan p;
  CHECK_INT(plan_ok(b, 4, &p), 2048);
  CHECK_INT(lower_bound(b, 4, 5), 2048);
  CHECK_INT(p.naive_bytes, 1024 + 512 + 512 + 1024);
  CHECK_INT(b[0].offset, b[3].offset);
}

TEST(planner_skip_connection) {
  /* one buffer live over all 10 kernels beside a chain: skip + two chain slots */
  tl_plan_buffer b[10];
  b[0] = buf(4096, 0, 9);
  for (int i = 1; i < 10; i++) b[i] = buf(4096, i - 1, i);
  tl_plan p;
  CHECK_INT(plan_ok(b, 10, &p), 3 * 4096);
  /* a small skip beside a big chain: 2 chain slots + the skip on top */
  b[0].size = 200; /* -> 256 */
  CHECK_INT(plan_ok(b, 10, &p), 2 * 4096 + 256);
  CHECK_INT(lower_bound(b, 10, 10), 2 * 4096 + 256);
}

TEST(planner_all_overlapping_is_naive) {
  tl_plan_buffer b[7];
  size_t sizes[7] = {5, 64, 1000, 4096, 3, 777, 65536};
  for (int i = 0; i < 7; i++) b[i] = buf(sizes[i], i % 3, 5); /* all live at 2..5 */
  tl_plan p;
  size_t arena = plan_ok(b, 7, &p);
  CHECK_INT(arena, p.naive_bytes);
  CHECK_INT(p.naive_bytes, 64 + 64 + 1024 + 4096 + 64 + 832 + 65536);
}

TEST(planner_unaligned_sizes_round_up) {
  tl_plan_buffer b[3] = {buf(1, 0, 0), buf(65, 0, 0), buf(100, 0, 0)};
  tl_plan p;
  CHECK_INT(plan_ok(b, 3, &p), 64 + 128 + 128);
  CHECK_INT(p.naive_bytes, 320);
  for (int i = 0; i < 3; i++) CHECK_INT(b[i].offset % A, 0);
}

TEST(planner_zero_sizes_and_empty) {
  tl_plan_buffer b[3] = {buf(0, 0, 3), buf(128, 1, 2), buf(0, 2, 2)};
  tl_plan p;
  CHECK_INT(plan_ok(b, 3, &p), 128);
  CHECK_INT(p.naive_bytes, 128);
  CHECK_INT(b[0].offset, 0);
  CHECK_INT(b[2].offset, 0);
  tl_plan_buffer z[2] = {buf(0, 0, 0), buf(0, 0, 0)};
  CHECK_INT(plan_ok(z, 2, &p), 0);
  CHECK_INT(p.naive_bytes, 0);
  CHECK_INT(plan_ok(NULL, 0, &p), 0);
}

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static size_t random_size(uint64_t *s) {
  switch (rng_next(s) % 4) {
  case 0: return rng_next(s) % 4 == 0 ? 0 : rng_next(s) % 256; /* tiny, some empty */
  case 1: return rng_next(s) % 16384;
  default: return rng_next(s) % (1u << 20) + 1;               /* up to 1 MB */
  }
}

/* one seeded case; returns arena/naive (or -1 when naive is 0) */
static double random_case(uint64_t seed, double *vs_lower) {
  uint64_t s = seed;
  int n = (int)(rng_next(&s) % 41);
  int nk = 1 + (int)(rng_next(&s) % (uint64_t)(2 * n + 1));
  tl_plan_buffer b[40];
  for (int i = 0; i < n; i++) {
    int first = (int)(rng_next(&s) % (uint64_t)nk);
    int span = nk - first; /* mostly short lives, some long ones */
    int len = rng_next(&s) % 4 ? (int)(rng_next(&s) % 3) : (int)(rng_next(&s) % (uint64_t)span);
    int last = first + len < nk ? first + len : nk - 1;
    b[i] = buf(random_size(&s), first, last);
  }
  tl_plan p;
  tl_error err = {0};
  int bad = tl_plan_make(b, n, &p, &err) != TL_OK || tl_plan_validate(b, n, &p, &err) != TL_OK;
  size_t lb = lower_bound(b, n, nk);
  bad = bad || p.arena_bytes > p.naive_bytes || p.arena_bytes < lb;
  if (bad) {
    tl_test_fail(__FILE__, __LINE__, "seed %llu (n %d): %s arena %zu naive %zu lower %zu",
                 (unsigned long long)seed, n, err.msg, p.arena_bytes, p.naive_bytes, lb);
    return -1;
  }
  *vs_lower = lb ? (double)p.arena_bytes / (double)lb : 1.0;
  return p.naive_bytes ? (double)p.arena_bytes / (double)p.naive_bytes : -1;
}

TEST(planner_random_plans) {
  double sum_naive = 0, sum_lower = 0, worst_lower = 1;
  int counted = 0, optimal = 0;
  for (uint64_t seed = 1; seed <= 2000; seed++) {
    double vs_lower = 1, r = random_case(seed, &vs_lower);
    if (r < 0) continue;
    sum_naive += r, sum_lower += vs_lower, counted++;
    optimal += vs_lower == 1.0;
    if (vs_lower > worst_lower) worst_lower = vs_lower;
  }
  CHECK(counted > 1800);
  printf("  planner: %d random plans: mean arena/naive %.3f, mean arena/lower bound %.3f "
         "(worst %.3f, %d at the bound)\n",
         counted, sum_naive / counted, sum_lower / counted, worst_lower, optimal);
}

TEST(planner_validator_catches_collision) {
  tl_plan_buffer b[4];
  for (int i = 0; i < 4; i++) b[i] = buf(100, i, i + 1);
  tl_plan p;
  plan_ok(b, 4, &p);
  tl_error err = {0};
  b[2].offset = b[1].offset; /* 1 [1,2] and 2 [2,3] are live together at kernel 2 */
  CHECK_INT(tl_plan_validate(b, 4, &p, &err), TL_ERR_INTERNAL);
  CHECK_CONTAINS(err.msg, "buffer 1 ");
  CHECK_CONTAINS(err.msg, "buffer 2 ");
  CHECK_CONTAINS(err.msg, "collide");
  /* a partial overlap (one aligned step) is caught too; a roomy arena so that only
   * the collision can fail */
  tl_plan roomy = {p.naive_bytes, p.naive_bytes};
  b[2].offset = b[1].offset + A;
  CHECK_INT(tl_plan_validate(b, 4, &roomy, &err), TL_ERR_INTERNAL);
  CHECK_CONTAINS(err.msg, "buffer 1 ");
  /* sharing bytes with a buffer that is dead by then is fine: 0 [0,1] and 2 [2,3] */
  b[2].offset = b[0].offset;
  CHECK_INT(tl_plan_validate(b, 4, &p, &err), TL_OK);
}

TEST(planner_validator_catches_misaligned_and_outside) {
  tl_plan_buffer b[3] = {buf(100, 0, 1), buf(64, 1, 2), buf(10, 2, 3)};
  tl_plan p;
  plan_ok(b, 3, &p);
  tl_error err = {0};
  size_t keep = b[2].offset;
  b[2].offset = keep + 32;
  CHECK_INT(tl_plan_validate(b, 3, &p, &err), TL_ERR_INTERNAL);
  CHECK_CONTAINS(err.msg, "buffer 2 offset");
  CHECK_CONTAINS(err.msg, "not aligned");
  b[2].offset = p.arena_bytes; /* aligned, but its 64-byte slot lies past the end */
  CHECK_INT(tl_plan_validate(b, 3, &p, &err), TL_ERR_INTERNAL);
  CHECK_CONTAINS(err.msg, "buffer 2 bytes");
  CHECK_CONTAINS(err.msg, "outside the arena");
  b[2].offset = SIZE_MAX - 63; /* no wrap-around in the bound check */
  CHECK_INT(tl_plan_validate(b, 3, &p, &err), TL_ERR_INTERNAL);
  CHECK_CONTAINS(err.msg, "outside the arena");
  b[2].offset = keep;
  tl_plan small = {p.arena_bytes - A, p.naive_bytes}; /* an arena too small to hold it */
  CHECK_INT(tl_plan_validate(b, 3, &small, &err), TL_ERR_INTERNAL);
  CHECK_CONTAINS(err.msg, "outside the arena");
}

TEST(planner_bad_input) {
  tl_plan p;
  tl_error err = {0};
  tl_plan_buffer b[2] = {buf(64, 0, 1), buf(64, 3, 2)};
  CHECK_INT(tl_plan_make(b, 2, &p, &err), TL_ERR_ARG);
  CHECK_CONTAINS(err.msg, "buffer 1 has first kernel 3 after last kernel 2");
  CHECK_INT(tl_plan_validate(b, 2, &p, &err), TL_ERR_ARG);
  CHECK_INT(tl_plan_make(b, -1, &p, &err), TL_ERR_ARG);
  CHECK_CONTAINS(err.msg, "negative buffer count -1");
  CHECK_INT(tl_plan_make(NULL, 3, &p, &err), TL_ERR_ARG);
  CHECK_CONTAINS(err.msg, "NULL buffers with count 3");
  CHECK_INT(tl_plan_validate(NULL, 3, &p, &err), TL_ERR_ARG);
  CHECK_INT(tl_plan_make(b, 1, NULL, &err), TL_ERR_ARG);
  CHECK_CONTAINS(err.msg, "NULL output plan");
  /* sizes that overflow when aligned, or in total */
  tl_plan_buffer big[2] = {buf(SIZE_MAX - 10, 0, 0), buf(64, 0, 0)};
  CHECK_INT(tl_plan_make(big, 2, &p, &err), TL_ERR_RANGE);
  CHECK_CONTAINS(err.msg, "buffer 0 size");
  CHECK_CONTAINS(err.msg, "overflows");
  tl_plan_buffer sum[3] = {buf(SIZE_MAX / 2, 0, 0), buf(SIZE_MAX / 2, 5, 5), buf(64, 0, 9)};
  CHECK_INT(tl_plan_make(sum, 3, &p, &err), TL_ERR_RANGE);
  CHECK_CONTAINS(err.msg, "total size overflows at buffer 1");
  /* a NULL error sink is allowed: the status still comes back */
  CHECK_INT(tl_plan_make(b, 2, &p, NULL), TL_ERR_ARG);
}

TEST(planner_many_buffers_fast) {
  /* 3000 buffers: O(n^2 log n) must stay well under a second */
  enum { N = 3000 };
  tl_plan_buffer *b = malloc(N * sizeof *b);
  uint64_t s = 42;
  for (int i = 0; i < N; i++) b[i] = buf(random_size(&s), i / 2, i / 2 + (int)(rng_next(&s) % 8));
  tl_plan p;
  plan_ok(b, N, &p);
  CHECK(p.arena_bytes >= lower_bound(b, N, N / 2 + 8));
  free(b);
}
