/* test_threads.c — contexts used from several threads at once, one context per
 * thread: tensor math, autograd, Datalog and TL programs (tl_lang_run_source, the
 * same program on every thread: its .so globals must not be shared), all threads
 * sharing one kernel cache directory. Every value is checked against a closed form
 * computed here. `make test-tsan` runs these under ThreadSanitizer. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "lang/lang.h"
#include "test.h"
#include "tl.h"

/* 4 threads of 3 rounds each; TL_TEST_THREADS (up to 16) and TL_TEST_THREAD_ITERS
 * raise them (make test-tsan TSAN_TESTS=threads_ with both set: a longer soak) */
enum { NTHREADS = 4, ITERS = 3, MAX_THREADS = 16 };

static int env_int(const char *name, int def, int max) {
  const char *v = getenv(name);
  int n = v ? atoi(v) : def;
  return n < 1 ? def : n > max ? max : n;
}

typedef struct {
  int id, iters;
  const char *cache;
  int failures;
  char first[512]; /* the first failure, reported by the main thread */
} worker;

static void fail(worker *w, const char *what, double got, double want) {
  if (!w->failures++)
    snprintf(w->first, sizeof w->first, "thread %d: %s: got %.17g, want %.17g", w->id, what, got, want);
}

static void expect(worker *w, const char *what, double got, double want, double tol) {
  if (!(fabs(got - want) <= tol)) fail(w, what, got, want);
}

/* a [3, 4] = k * (0..11); sum(a @ a^T) and the row sums of softmax(a) */
static void tensor_math(worker *w, tl_ctx *ctx, int it) {
  double k = w->id + 1 + 0.5 * it, want = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int c = 0; c < 4; c++) want += k * (4 * i + c) * k * (4 * j + c);
  tl_tensor *a = tl_reshape(tl_mul_scalar(tl_arange(ctx, TL_F64, 0, 12, 1), k), 2, (int64_t[]){3, 4});
  double got = 0, rows[3] = {0};
  if (tl_item(tl_sum(tl_matmul(a, tl_transpose(a, 0, 1)), 0, NULL, 0), &got)) fail(w, tl_last_error(ctx), 0, 0);
  expect(w, "sum(a a^T)", got, want, 1e-9 * want);
  if (tl_to_host(tl_sum(tl_softmax(a, 1), 1, (int[]){1}, 0), rows, sizeof rows)) fail(w, tl_last_error(ctx), 0, 0);
  for (int i = 0; i < 3; i++) expect(w, "softmax row sum", rows[i], 1.0, 1e-12);
}

/* d/dx sum(x^3 + 2x) = 3x^2 + 2 */
static void autograd(worker *w, tl_ctx *ctx, int it) {
  double x0 = 0.25 * (w->id + 1) + it;
  tl_tensor *x = tl_full(ctx, TL_F64, 1, (int64_t[]){5}, x0);
  tl_set_requires_grad(x, 1);
  tl_tensor *loss = tl_sum(tl_add(tl_mul(tl_mul(x, x), x), tl_mul_scalar(x, 2)), 0, NULL, 0);
  double g[5] = {0}, l = 0;
  if (tl_backward(loss, NULL) || tl_to_host(tl_grad(x), g, sizeof g) || tl_item(loss, &l))
    fail(w, tl_last_error(ctx), 0, 0);
  for (int i = 0; i < 5; i++) expect(w, "grad", g[i], 3 * x0 * x0 + 2, 1e-12);
  expect(w, "loss", l, 5 * (x0 * x0 * x0 + 2 * x0), 1e-9);
}

/* a chain of n edges has n (n + 1) / 2 ancestor pairs */
static void datalog(worker *w, tl_ctx *ctx, int it) {
  int n = 8 + w->id + it % 8;
  tl_kb *kb = tl_kb_new(ctx);
  char text[4096] = "anc(x, y) :- edge(x, y).\nanc(x, y) :- edge(x, z), anc(z, y).\n";
  for (int i = 0; i < n; i++) {
    size_t len = strlen(text);
    snprintf(text + len, sizeof text - len, "edge(v%d, v%d).\n", i, i + 1);
  }
  if (tl_kb_add_rules(kb, text)) fail(w, tl_last_error(ctx), 0, 0);
  expect(w, "anc count", (double)tl_kb_count(kb, "anc"), n * (n + 1) / 2.0, 0);
  tl_kb_free(kb);
}

/* the same TL program on every thread: loops, recursion, tensors and a query */
static const char program[] =
    "parent(ada, ben).\n"
    "parent(ben, cleo).\n"
    "anc(x, y) :- parent(x, y).\n"
    "anc(x, y) :- parent(x, z), anc(z, y).\n"
    "fn fib(n: i64) -> i64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\n"
    "fn main() {\n"
    "  let mut s = 0;\n"
    "  for i in 0..1000 { s = s + i * i; }\n"
    "  let x = Tensor::arange(0, 8) as f32;\n"
    "  let y = x * 2.0 - 1.0;\n"
    "  println(\"{} {} {} {}\", s, fib(20), y.sum().item(), ?anc(ada, $w).dim(0));\n"
    "}\n";
/* sum of i^2 below 1000 = 999 * 1000 * 1999 / 6; fib(20); sum(2x - 1), x < 8; 2 */
static const char program_out[] = "332833500 6765 48.0 2\n";

static void language(worker *w) {
  char *out = NULL, *err = NULL;
  size_t no = 0, ne = 0;
  FILE *fo = open_memstream(&out, &no), *fe = open_memstream(&err, &ne);
  tl_lang_run_options o = {.out = fo, .err = fe};
  int rc = fo && fe ? tl_lang_run_source("threads.tl", program, strlen(program), &o) : -1;
  if (fo) fclose(fo);
  if (fe) fclose(fe);
  if (rc != 0 || !out || strcmp(out, program_out)) {
    if (!w->failures++)
      snprintf(w->first, sizeof w->first, "thread %d: program exit %d, out '%s', err '%s'", w->id, rc,
               out ? out : "", err ? err : "");
  }
  free(out);
  free(err);
}

static void *work(void *arg) {
  worker *w = arg;
  for (int it = 0; it < w->iters; it++) {
    tl_ctx *ctx = tl_init();
    if (!ctx || tl_set_cache_dir(ctx, w->cache)) {
      fail(w, "tl_init / tl_set_cache_dir", 0, 0);
      return NULL;
    }
    tensor_math(w, ctx, it);
    autograd(w, ctx, it);
    datalog(w, ctx, it);
    if (tl_mem_report(ctx, NULL)) fail(w, "leaked objects", (double)tl_mem_report(ctx, NULL), 0);
    tl_shutdown(ctx);
    language(w);
  }
  return NULL;
}

/* threads started at once, every kernel and program compiled by some of them at the
 * same time (the cache's per-kernel lock, flock, is per open file: threads too) */
static void run_threads(int nthreads) {
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  const char *old = getenv("TL_CACHE_DIR"); /* tl_lang_run_source's cache */
  char *saved = old ? strdup(old) : NULL;
  setenv("TL_CACHE_DIR", dir, 1);
  pthread_t th[MAX_THREADS];
  worker ws[MAX_THREADS];
  int iters = env_int("TL_TEST_THREAD_ITERS", ITERS, 1000);
  for (int i = 0; i < nthreads; i++) {
    ws[i] = (worker){.id = i, .iters = iters, .cache = dir};
    CHECK_INT(pthread_create(&th[i], NULL, work, &ws[i]), 0);
  }
  for (int i = 0; i < nthreads; i++) {
    pthread_join(th[i], NULL);
    if (ws[i].failures) tl_test_fail(__FILE__, __LINE__, "%d failure(s); %s", ws[i].failures, ws[i].first);
  }
  if (saved) setenv("TL_CACHE_DIR", saved, 1);
  else unsetenv("TL_CACHE_DIR");
  free(saved);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

TEST(threads_contexts_in_parallel) { run_threads(env_int("TL_TEST_THREADS", NTHREADS, MAX_THREADS)); }

/* one context handed from thread to thread (never used by two at once): allowed */
static void *use_ctx(void *arg) {
  tl_ctx *ctx = arg;
  double s = 0;
  tl_tensor *t = tl_sum(tl_arange(ctx, TL_F64, 1, 101, 1), 0, NULL, 0);
  if (tl_item(t, &s) == TL_OK && s == 5050) tl_release(t);
  else ctx = NULL;
  return ctx;
}

TEST(threads_context_handed_over) {
  tl_ctx *ctx = tl_init();
  for (int i = 0; i < 3; i++) {
    pthread_t th;
    void *r = NULL;
    CHECK_INT(pthread_create(&th, NULL, use_ctx, ctx), 0);
    pthread_join(th, &r);
    CHECK(r == ctx);
  }
  TEST_SHUTDOWN(ctx);
}
