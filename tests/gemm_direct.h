/* gemm_direct.h — the prelude's GEMM routine itself against naive double loops,
 * included by test_gemm.c (the build's own vectors) and test_gemm_wide.c (the 512-bit
 * layout, TL_GEMM_WIDE) after codegen/kernel_prelude.h; GEMM_PREFIX names the tests. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"

#define GEMM_TEST(name) GEMM_TEST_(GEMM_PREFIX, name)
#define GEMM_TEST_(prefix, name) GEMM_TEST__(prefix, name)
#define GEMM_TEST__(prefix, name) TEST(prefix##name)

static uint64_t rng = 0x1234567;
static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int64_t pick(int64_t n) { return (int64_t)(next_u64() % (uint64_t)n); }
/* small integers over 8: products and sums are exact in f64, so the reference is */
static double value(void) { return (double)(pick(33) - 16) / 8.0; }

/* sizes that hit the edges of every blocking level */
static const int64_t sizes[] = {1, 2, 5, 6, 7, 11, 12, 13, 16, 17, 25, 31, 33, 47, 97, 131, 150, 257, 300};
static int64_t any_size(int64_t below) {
  int64_t s;
  do s = sizes[pick(sizeof sizes / sizeof sizes[0])];
  while (s > below);
  return s;
}

/* |error| allowed for a sum of k products whose magnitudes add to mag: k units in the
 * last place of the type, summed (a bound for any order, FMA or not) */
static double tolerance(bool f64, int64_t k, double mag) { return (double)(k + 2) * (f64 ? 2.3e-16 : 1.2e-7) * mag + 1e-300; }

/* ---- the prelude's routine ---------------------------------------------------------- */
typedef struct {
  bool f64;
  int64_t m, n, k, batch;
  bool ta, tb;           /* A stored (k, m), B stored (n, k) */
  bool bcast_a, bcast_b; /* one operand shared by every batch (stride 0) */
  int64_t pad;           /* extra elements per stored row */
} direct_case;

static int epi_calls_bad;
static int32_t *epi_seen;
static const tl_gemm_desc *epi_desc;
/* the epilogue under test: counts every element it is given, doubles it */
static void epi_f64(void *const *bufs, tl_i64 bi, tl_i64 m, tl_i64 n0, tl_i64 n1) {
  const tl_gemm_desc *d = epi_desc;
  double *c = bufs[0];
  if (bi < 0 || m < 0 || m >= d->m || n0 < 0 || n1 > d->n || n0 >= n1) epi_calls_bad++;
  for (tl_i64 j = n0; j < n1 && !epi_calls_bad; j++) {
    epi_seen[(bi * d->m + m) * d->n + j]++;
    c[(bi * d->m + m) * d->ldc + j] *= 2;
  }
}
static void epi_f32(void *const *bufs, tl_i64 bi, tl_i64 m, tl_i64 n0, tl_i64 n1) {
  const tl_gemm_desc *d = epi_desc;
  float *c = bufs[0];
  if (bi < 0 || m < 0 || m >= d->m || n0 < 0 || n1 > d->n || n0 >= n1) epi_calls_bad++;
  for (tl_i64 j = n0; j < n1 && !epi_calls_bad; j++) {
    epi_seen[(bi * d->m + m) * d->n + j]++;
    c[(bi * d->m + m) * d->ldc + j] *= 2;
  }
}

/* runs one case through tl_gemm_run_* (units split at random points, as threads
 * would get them, or all at once through the rectangle routine with no workspace) */
static void run_direct(const direct_case *c, bool epilogue, bool no_workspace) {
  int64_t m = c->m, n = c->n, k = c->k, nb = c->batch, pad = c->pad;
  int64_t lda = (c->ta ? m : k) + pad, ldb = (c->tb ? k : n) + pad, ldc = n + pad;
  int64_t rows_a = c->ta ? k : m, rows_b = c->tb ? n : k;
  int64_t na = (c->bcast_a ? 1 : nb) * rows_a * lda, nbb = (c->bcast_b ? 1 : nb) * rows_b * ldb, nc = nb * m * ldc;
  double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nbb);
  double *want = calloc((size_t)nc, sizeof(double)), *mag = calloc((size_t)nc, sizeof(double));
  void *a_t = malloc((c->f64 ? 8 : 4) * (size_t)na), *b_t = malloc((c->f64 ? 8 : 4) * (size_t)nbb);
  void *c_t = malloc((c->f64 ? 8 : 4) * (size_t)nc);
  epi_seen = calloc((size_t)(nb * m * n), sizeof *epi_seen);
  if (!a || !b || !want || !mag || !a_t || !b_t || !c_t || !epi_seen) {
    CHECK(!"out of memory");
    goto out;
  }
  for (int64_t i = 0; i < na; i++) a[i] = value();
  for (int64_t i = 0; i < nbb; i++) b[i] = value();
  for (int64_t i = 0; i < na; i++) c->f64 ? (void)(((double *)a_t)[i] = a[i]) : (void)(((float *)a_t)[i] = (float)a[i]);
  for (int64_t i = 0; i < nbb; i++) c->f64 ? (void)(((double *)b_t)[i] = b[i]) : (void)(((float *)b_t)[i] = (float)b[i]);
  for (int64_t i = 0; i < nc; i++) c->f64 ? (void)(((double *)c_t)[i] = -7) : (void)(((float *)c_t)[i] = -7);
  tl_gemm_desc d = {0};
  d.m = m, d.n = n, d.k = k;
  d.sam = c->ta ? 1 : lda, d.sak = c->ta ? lda : 1;
  d.sbk = c->tb ? 1 : ldb, d.sbn = c->tb ? ldb : 1;
  d.ldc = ldc;
  int64_t nr = 2 * TL_GEMM_VBYTES / (c->f64 ? 8 : 4);
  d.um = TL_GEMM_MR * (1 + pick(4)), d.un = nr * (1 + pick(3)); /* unit tiles of a few micro-tiles */
  d.gm = (m + d.um - 1) / d.um, d.gn = (n + d.un - 1) / d.un;
  if (nb > 1) {
    d.nbatch = 1;
    d.bshape[0] = nb;
    d.bsa[0] = c->bcast_a ? 0 : rows_a * lda;
    d.bsb[0] = c->bcast_b ? 0 : rows_b * ldb;
    d.bsc[0] = m * ldc;
  }
  for (int64_t bi = 0; bi < nb; bi++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0, s_abs = 0;
        for (int64_t p = 0; p < k; p++) {
          double x = a[bi * d.bsa[0] + i * d.sam + p * d.sak], y = b[bi * d.bsb[0] + p * d.sbk + j * d.sbn];
          s += x * y;
          s_abs += fabs(x * y);
        }
        want[bi * m * ldc + i * ldc + j] = epilogue ? 2 * s : s;
        mag[bi * m * ldc + i * ldc + j] = epilogue ? 2 * s_abs : s_abs;
      }
  void *bufs[1] = {c_t};
  epi_desc = &d;
  epi_calls_bad = 0;
  int64_t units = nb * d.gm * d.gn;
  if (no_workspace) {
    for (int64_t bi = 0; bi < nb; bi++) {
      if (c->f64)
        tl_gemm_rect_f64(&d, (double *)a_t + bi * d.bsa[0], (double *)b_t + bi * d.bsb[0], (double *)c_t + bi * m * ldc, 0, m,
                         0, n, NULL, NULL, bufs, bi, epilogue ? epi_f64 : NULL);
      else
        tl_gemm_rect_f32(&d, (float *)a_t + bi * d.bsa[0], (float *)b_t + bi * d.bsb[0], (float *)c_t + bi * m * ldc, 0, m, 0,
                         n, NULL, NULL, bufs, bi, epilogue ? epi_f32 : NULL);
    }
  } else {
    for (int64_t t = 0; t < units;) { /* chunks of random length: a partial row, rows, a partial row */
      int64_t e = t + 1 + pick(units - t);
      if (c->f64) tl_gemm_run_f64(&d, a_t, b_t, c_t, t, e, bufs, epilogue ? epi_f64 : NULL);
      else tl_gemm_run_f32(&d, a_t, b_t, c_t, t, e, bufs, epilogue ? epi_f32 : NULL);
      t = e;
    }
  }
  CHECK(!epi_calls_bad);
  int bad = 0;
  for (int64_t bi = 0; bi < nb && !bad; bi++)
    for (int64_t i = 0; i < m && !bad; i++)
      for (int64_t j = 0; j < ldc && !bad; j++) {
        int64_t at = bi * m * ldc + i * ldc + j;
        double got = c->f64 ? ((double *)c_t)[at] : ((float *)c_t)[at];
        if (j >= n) { /* padding between rows: untouched */
          if (got != -7) bad = 1;
        } else if (!(fabs(got - want[at]) <= tolerance(c->f64, k, mag[at])) ||
                   (epilogue && epi_seen[(bi * m + i) * n + j] != 1)) {
          bad = 1;
        }
        if (bad)
          tl_test_fail(__FILE__, __LINE__,
                       "%s m=%lld n=%lld k=%lld batch=%lld ta=%d tb=%d pad=%lld epi=%d ws=%d: C[%lld][%lld, %lld] = %.9g, "
                       "expected %.9g (epilogue calls %d)",
                       c->f64 ? "f64" : "f32", (long long)m, (long long)n, (long long)k, (long long)nb, c->ta, c->tb,
                       (long long)pad, epilogue, !no_workspace, (long long)bi, (long long)i, (long long)j, got,
                       j < n ? want[at] : -7.0, epilogue ? epi_seen[(bi * m + i) * n + (j < n ? j : 0)] : 0);
      }
out:
  free(a);
  free(b);
  free(want);
  free(mag);
  free(a_t);
  free(b_t);
  free(c_t);
  free(epi_seen);
  epi_seen = NULL;
}

GEMM_TEST(random_shapes_against_double_loops) {
  rng = 11;
  for (int i = 0; i < 160; i++) {
    direct_case c = {0};
    c.f64 = i & 1;
    c.m = any_size(300), c.n = any_size(300), c.k = any_size(300);
    if (c.m * c.n * c.k > 3000000) c.k = 1 + pick(40); /* keep valgrind's run short */
    c.ta = pick(2), c.tb = pick(2);
    c.pad = pick(3) ? 0 : 1 + pick(5);
    c.batch = pick(4) ? 1 : 2 + pick(2);
    c.bcast_a = c.batch > 1 && pick(3) == 0;
    c.bcast_b = c.batch > 1 && !c.bcast_a && pick(2) == 0;
    run_direct(&c, i % 3 == 0, false);
  }
}

/* wide and deep: several NC column blocks (f32 512, f64 256 columns), KC depth blocks
 * and MC row blocks in one rectangle */
GEMM_TEST(crosses_every_block_size) {
  rng = 12;
  const direct_case cases[] = {
      {false, 7, 1030, 3, 1, false, false, false, false, 0},   {true, 5, 530, 2, 1, false, true, false, false, 2},
      {false, 151, 40, 520, 1, true, false, false, false, 0},  {true, 293, 17, 261, 1, false, false, false, false, 1},
      {false, 13, 17, 1, 3, true, true, true, false, 0},       {true, 1, 33, 700, 2, false, false, false, true, 0},
      {false, 1, 1, 1, 1, false, false, false, false, 0},      {false, 2, 16, 256, 1, false, false, false, false, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_direct(&cases[i], i % 2 == 0, false);
    run_direct(&cases[i], true, true);
  }
}

/* without a workspace (malloc failed) nothing is packed but edge panels */
GEMM_TEST(without_workspace) {
  rng = 13;
  for (int i = 0; i < 40; i++) {
    direct_case c = {0};
    c.f64 = i & 1;
    c.m = any_size(160), c.n = any_size(160), c.k = any_size(300);
    c.ta = pick(2), c.tb = pick(2);
    c.pad = pick(2) ? 0 : 3;
    c.batch = 1;
    run_direct(&c, i & 2, true);
  }
}

