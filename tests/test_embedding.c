/* test_embedding.c — tl_embedding and tl_gather_rows (the GATHER and SCATTER_ADD ops):
 * values and weight gradients against numpy (np.take / np.add.at on tables and
 * indices numpy writes), gradients against central finite differences in f64, on the
 * compiled backend and the interpreter; indices out of range (clamped by the gather,
 * an error from embedding); and a 1,000,000-row table that only an O(N*D) gather
 * reads in little memory and time. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tl.h"

static const char *const backends[] = {"cpu", "interp"};

/* t's values as doubles (malloc'd), NULL with a failure recorded */
static double *host_f64(tl_tensor *t, int line) {
  int64_t n = t ? tl_numel(t) : 0;
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  tl_tensor *d = t ? tl_cast(t, TL_F64) : NULL;
  if (!v || !d || tl_to_host(d, v, sizeof(double) * (size_t)n) != TL_OK) {
    tl_test_fail(__FILE__, line, "reading a tensor failed: %s", t ? tl_last_error(tl_context(t)) : "NULL tensor");
    free(v);
    v = NULL;
  }
  tl_release(d);
  return v;
}

/* every element of got within tol (relative above 1) of want, same shape */
static void check_close(tl_tensor *got, tl_tensor *want, double tol, const char *what, int line) {
  if (!got || !want || tl_ndim(got) != tl_ndim(want) || tl_numel(got) != tl_numel(want)) {
    tl_test_fail(__FILE__, line, "%s: missing or of the wrong shape", what);
    return;
  }
  for (int d = 0; d < tl_ndim(got); d++)
    if (tl_dim(got, d) != tl_dim(want, d)) {
      tl_test_fail(__FILE__, line, "%s: axis %d is %lld, expected %lld", what, d, (long long)tl_dim(got, d),
                   (long long)tl_dim(want, d));
      return;
    }
  double *a = host_f64(got, line), *b = host_f64(want, line);
  for (int64_t i = 0; a && b && i < tl_numel(got); i++)
    if (!(fabs(a[i] - b[i]) <= tol * (1 + fabs(b[i])))) {
      tl_test_fail(__FILE__, line, "%s: element %lld = %.12g, expected %.12g", what, (long long)i, a[i], b[i]);
      break;
    }
  free(a);
  free(b);
}

/* ---- against numpy ------------------------------------------------------------------
 * numpy draws the tables (f32, f64), the indices (i32 [3, 4] and i64 [6], rows
 * repeated) and an upstream gradient per index set, and writes the rows taken
 * (np.take) and the table's gradient (np.add.at of the upstream rows, in f64). */
static const char np_script[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1] + '/'\n"
    "r = np.random.default_rng(7)\n"
    "w = r.standard_normal((7, 5))\n"
    "ws = {'f32': w.astype('<f4'), 'f64': w.astype('<f8')}\n"
    "ids = {'i32': np.array([[3, 0, 6, 3], [1, 1, 1, 5], [6, 2, 0, 3]], dtype='<i4'),\n"
    "       'i64': np.array([4, 4, 0, 6, 2, 4], dtype='<i8')}\n"
    "for wn, wv in ws.items():\n"
    "  np.save(d + 'w_' + wn + '.npy', wv)\n"
    "for k, i in ids.items():\n"
    "  np.save(d + k + '.npy', i)\n"
    "  g = r.standard_normal(i.shape + (5,))\n"
    "  np.save(d + 'g_' + k + '.npy', g)\n"
    "  for wn, wv in ws.items():\n"
    "    np.save(d + 'e_' + wn + '_' + k + '.npy', np.take(wv, i, axis=0))\n"
    "    dw = np.zeros((7, 5))\n"
    "    np.add.at(dw, i, g.astype(wv.dtype).astype('<f8'))\n"
    "    np.save(d + 'dw_' + wn + '_' + k + '.npy', dw)\n"
    "print('written')\n";

static tl_tensor *load(tl_ctx *ctx, const char *dir, const char *name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s.npy", dir, name);
  return tl_load_npy(ctx, p);
}

TEST(embedding_numpy_values_and_grads) {
  char *dir = tl_test_tmpdir();
  if (!dir) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
    return;
  }
  CHECK_PYTHON(np_script, dir, "written\n");
  static const char *const wnames[] = {"f32", "f64"}, *const inames[] = {"i32", "i64"};
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    CHECK_INT(tl_set_backend(ctx, backends[b]), TL_OK);
    for (int wi = 0; wi < 2; wi++)
      for (int ii = 0; ii < 2; ii++) {
        char name[64], what[128];
        snprintf(what, sizeof what, "%s: weight %s, indices %s", backends[b], wnames[wi], inames[ii]);
        tl_scope *s = tl_scope_begin(ctx, "case");
        snprintf(name, sizeof name, "w_%s", wnames[wi]);
        tl_tensor *w = load(ctx, dir, name), *idx = load(ctx, dir, inames[ii]);
        CHECK(w && idx && tl_get_dtype(idx) == (ii ? TL_I64 : TL_I32));
        CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
        tl_tensor *e = tl_embedding(w, idx);
        snprintf(name, sizeof name, "e_%s_%s", wnames[wi], inames[ii]);
        check_close(e, load(ctx, dir, name), 0, what, __LINE__); /* a gather copies: exact */
        snprintf(name, sizeof name, "g_%s", inames[ii]);
        tl_tensor *g = tl_cast(load(ctx, dir, name), tl_get_dtype(w));
        CHECK_INT(tl_backward(tl_sum(tl_mul(e, g), 0, NULL, 0), NULL), TL_OK);
        snprintf(name, sizeof name, "dw_%s_%s", wnames[wi], inames[ii]);
        check_close(tl_grad(w), load(ctx, dir, name), wi ? 1e-12 : 1e-5, what, __LINE__);
        tl_scope_end(s);
      }
    TEST_SHUTDOWN(ctx);
  }
  tl_test_rm_tree(dir);
}

/* ---- against finite differences -------------------------------------------------------
 * loss(W) = sum(tanh(embedding(W, idx)) * c), idx [2, 3] with repeated rows and a row
 * never picked (its gradient must be exactly 0) */
enum { FV = 5, FD = 3 };
static const int64_t fd_idx[6] = {4, 0, 4, 2, 2, 4};

static tl_tensor *fd_loss(tl_ctx *ctx, const double *w, tl_tensor **leaf) {
  tl_tensor *wt = tl_from_data(ctx, TL_F64, 2, (int64_t[]){FV, FD}, w);
  if (leaf) {
    tl_set_requires_grad(wt, 1);
    *leaf = wt;
  }
  tl_tensor *idx = tl_from_data(ctx, TL_I64, 2, (int64_t[]){2, 3}, fd_idx);
  tl_tensor *c = tl_sin(tl_reshape(tl_arange(ctx, TL_F64, 1, 19, 1), 3, (int64_t[]){2, 3, FD}));
  return tl_sum(tl_mul(tl_tanh(tl_embedding(wt, idx)), c), 0, NULL, 0);
}

TEST(embedding_grad_finite_differences) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    CHECK_INT(tl_set_backend(ctx, backends[b]), TL_OK);
    double w[FV * FD], grad[FV * FD];
    for (int i = 0; i < FV * FD; i++) w[i] = 0.3 * cos(1.7 * i);
    tl_tensor *leaf;
    CHECK_INT(tl_backward(fd_loss(ctx, w, &leaf), NULL), TL_OK);
    CHECK_INT(tl_to_host(tl_grad(leaf), grad, sizeof grad), TL_OK);
    tl_set_grad_enabled(ctx, 0);
    for (int i = 0; i < FV * FD; i++) {
      double keep = w[i], f[2], h = 1e-6;
      for (int k = 0; k < 2; k++) {
        TL_SCOPE(ctx, fd) {
          w[i] = keep + (k ? -h : h);
          tl_item(fd_loss(ctx, w, NULL), &f[k]);
        }
      }
      w[i] = keep;
      double want = (f[0] - f[1]) / (2 * h);
      if (i / FD == 1 || i / FD == 3) CHECK(grad[i] == 0); /* rows 1 and 3 are never picked */
      if (!(fabs(grad[i] - want) <= 1e-7 * (1 + fabs(want))))
        tl_test_fail(__FILE__, __LINE__, "%s: d loss / d w[%d] = %.12g, finite differences give %.12g", backends[b], i,
                     grad[i], want);
    }
    TEST_SHUTDOWN(ctx);
  }
}

/* ---- indices out of range -------------------------------------------------------------- */
TEST(embedding_gather_rows_clamps_and_errors) {
  for (int b = 0; b < 2; b++) {
    tl_ctx *ctx = tl_init();
    CHECK_INT(tl_set_backend(ctx, backends[b]), TL_OK);
    tl_tensor *table = tl_reshape(tl_arange(ctx, TL_F32, 0, 8, 1), 2, (int64_t[]){4, 2});
    int32_t bad[3] = {-3, 9, 2};
    tl_tensor *idx = tl_from_data(ctx, TL_I32, 1, (int64_t[]){3}, bad);
    /* the lazy gather cannot check: a bad index reads the nearest row, never outside */
    double got[6], want[6] = {0, 1, 6, 7, 4, 5};
    CHECK_INT(tl_to_host(tl_cast(tl_gather_rows(table, idx), TL_F64), got, sizeof got), TL_OK);
    for (int i = 0; i < 6; i++) CHECK_NEAR(got[i], want[i], 0);
    /* embedding reads them first: the message of before the gather, unchanged */
    CHECK(tl_embedding(table, idx) == NULL);
    CHECK_STR(tl_last_error(ctx), "embedding: index -3 is out of range for 4 rows");
    CHECK(tl_gather_rows(table, tl_cast(idx, TL_F32)) == NULL);
    CHECK_STR(tl_last_error(ctx), "gather_rows: indices must be i32 or i64, got f32");
    CHECK(tl_gather_rows(tl_reshape(table, 1, (int64_t[]){8}), idx) == NULL);
    CHECK_STR(tl_last_error(ctx), "gather_rows: table must have 2 axes [V, D], got 1");
    /* an empty index set gives an empty result; an empty table with no index is fine */
    tl_tensor *none = tl_gather_rows(table, tl_zeros(ctx, TL_I64, 2, (int64_t[]){0, 3}));
    CHECK(none && tl_ndim(none) == 3 && tl_numel(none) == 0 && tl_realize(none) == TL_OK);
    /* a 0-d index (a constant in the graph) takes one row, and its gradient goes back */
    tl_tensor *leaf = tl_reshape(table, 2, (int64_t[]){4, 2});
    CHECK_INT(tl_set_requires_grad(leaf, 1), TL_OK);
    tl_tensor *row = tl_gather_rows(leaf, tl_scalar(ctx, TL_I64, 2));
    CHECK(row && tl_ndim(row) == 1 && tl_dim(row, 0) == 2);
    CHECK_INT(tl_backward(tl_sum(tl_mul_scalar(row, 3), 0, NULL, 0), NULL), TL_OK);
    double grad[8], want_grad[8] = {0, 0, 0, 0, 3, 3, 0, 0};
    CHECK_INT(tl_to_host(tl_cast(tl_grad(leaf), TL_F64), grad, sizeof grad), TL_OK);
    for (int i = 0; i < 8; i++) CHECK_NEAR(grad[i], want_grad[i], 0);
    TEST_SHUTDOWN(ctx);
  }
}

/* ---- O(N*D) ------------------------------------------------------------------------------
 * A 1,000,000 x 64 table of lazy random numbers: the gather fuses the generator and
 * computes the 8 rows it picks, nothing else, so the realize holds the result and
 * little more (a one-hot product held an [8, 1,000,000] mask: 32 MB, and 5 * 10^8
 * multiply-adds). Each row equals the same row sliced from the table. The gradient
 * of a 1,000,000 x 4 table is its own 16 MB and little more: the scatter-add writes
 * the picked rows into it (again 32 MB of mask before). */
enum { BIG_V = 1000000, BIG_D = 64, BIG_N = 8 };

TEST(embedding_million_rows_small_memory) {
  tl_ctx *ctx = tl_init();
  int64_t ids[BIG_N] = {999999, 0, 123456, 999999, 42, 500000, 7, 0};
  tl_tensor *w = tl_rand(ctx, TL_F32, 2, (int64_t[]){BIG_V, BIG_D});
  tl_tensor *idx = tl_from_data(ctx, TL_I64, 1, (int64_t[]){BIG_N}, ids);
  tl_mem_reset_peak(ctx);
  tl_tensor *e = tl_embedding(w, idx);
  CHECK_INT(tl_realize(e), TL_OK);
  tl_stats st = tl_get_stats(ctx);
  CHECK(st.peak_bytes < 64 * 1024); /* the result is 2 KB */
  float got[BIG_N * BIG_D], row[BIG_D];
  CHECK_INT(tl_to_host(e, got, sizeof got), TL_OK);
  for (int i = 0; i < BIG_N; i++) {
    CHECK_INT(tl_to_host(tl_slice(w, 0, ids[i], ids[i] + 1, 1), row, sizeof row), TL_OK);
    CHECK(memcmp(row, got + i * BIG_D, sizeof row) == 0);
  }
  ids[3] = BIG_V;
  CHECK(tl_embedding(w, tl_from_data(ctx, TL_I64, 1, (int64_t[]){BIG_N}, ids)) == NULL);
  CHECK_STR(tl_last_error(ctx), "embedding: index 1000000 is out of range for 1000000 rows");
  ids[3] = 999999;

  /* backward into a [1,000,000, 4] table */
  tl_tensor *w4 = tl_rand(ctx, TL_F32, 2, (int64_t[]){BIG_V, 4});
  CHECK_INT(tl_set_requires_grad(w4, 1), TL_OK);
  tl_mem_reset_peak(ctx);
  tl_tensor *e4 = tl_embedding(w4, idx);
  CHECK_INT(tl_backward(tl_sum(e4, 0, NULL, 0), NULL), TL_OK);
  CHECK_INT(tl_realize(tl_grad(w4)), TL_OK);
  st = tl_get_stats(ctx);
  uint64_t grad_bytes = (uint64_t)BIG_V * 4 * sizeof(float);
  CHECK(st.peak_bytes < grad_bytes + 64 * 1024);
  float g[4];
  for (int64_t r = 0; r < 3; r++) { /* rows picked twice, never, once */
    static const int64_t at[3] = {999999, 1, 42}, times[3] = {2, 0, 1};
    CHECK_INT(tl_to_host(tl_slice(tl_grad(w4), 0, at[r], at[r] + 1, 1), g, sizeof g), TL_OK);
    for (int k = 0; k < 4; k++) CHECK_NEAR(g[k], times[r], 0);
  }
  TEST_SHUTDOWN(ctx);
}
