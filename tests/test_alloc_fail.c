/* test_alloc_fail.c — allocation failure at every site: the test binary is linked with
 * -Wl,--wrap for malloc, calloc, realloc, strdup and aligned_alloc, so every call the
 * library makes goes through the hook below, which can fail the N-th one. A sweep runs a
 * representative program once to count its allocations, then once per N failing only
 * the N-th: each run must end in a clean error (TL_ERR_NOMEM, "out of memory") or, where
 * the allocation was optional, in the right answer; nothing may leak, and the context
 * must work afterwards. A crash fails the test (each test runs in a forked child); the
 * N being tried is printed first so a crash names it. TL_ALLOC_SWEEP_FROM=N starts at N,
 * TL_ALLOC_SWEEP_TO=N ends there, TL_ALLOC_SWEEP_PROGRAM=NAME sweeps one tl program, TL_ALLOC_TRACE=1 prints where each failing call is made. */
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "lang/lang.h"
#include "runtime/compiler.h"
#include "test.h"
#include "tl.h"

#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__real_aligned_alloc(size_t align, size_t n);

/* armed: counts allocations; fail_at > 0: the fail_at-th one returns NULL */
static atomic_long alloc_seen;
static atomic_long alloc_fail_at;
static atomic_bool alloc_armed;
static atomic_bool alloc_failed; /* the failure was injected in this run */

static bool alloc_fails(void) {
  if (!atomic_load(&alloc_armed)) return false;
  long n = atomic_fetch_add(&alloc_seen, 1) + 1;
  if (n != atomic_load(&alloc_fail_at)) return false;
  atomic_store(&alloc_failed, true);
  if (getenv("TL_ALLOC_TRACE")) { /* where the failing allocation is made */
    void *frames[16];
    backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
  }
  return true;
}

void *__wrap_malloc(size_t n) { return alloc_fails() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return alloc_fails() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return alloc_fails() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return alloc_fails() ? NULL : __real_strdup(s); }
void *__wrap_aligned_alloc(size_t align, size_t n) { return alloc_fails() ? NULL : __real_aligned_alloc(align, n); }

static void alloc_arm(long fail_at) {
  atomic_store(&alloc_seen, 0);
  atomic_store(&alloc_fail_at, fail_at);
  atomic_store(&alloc_failed, false);
  atomic_store(&alloc_armed, true);
}

static long alloc_disarm(void) {
  atomic_store(&alloc_armed, false);
  return atomic_load(&alloc_seen);
}

/* a program under test: runs in ctx and says whether it produced the right answer
 * (false after an error, which it leaves in ctx) */
typedef bool (*sweep_program)(tl_ctx *ctx);

/* after a run: nothing leaked, and the context still computes 1+2=3 */
static void sweep_check_after(tl_ctx *ctx, long n) {
  size_t leaks = tl_mem_report(ctx, NULL);
  if (leaks) tl_test_fail(__FILE__, __LINE__, "allocation %ld failed: %zu leaked object(s)", n, leaks);
  tl_clear_error(ctx);
  tl_scope *s = tl_scope_begin(ctx, "after");
  double v = 0;
  tl_tensor *t = tl_add_scalar(tl_scalar(ctx, TL_F32, 1), 2);
  if (!t || tl_item(t, &v) != TL_OK || v != 3)
    tl_test_fail(__FILE__, __LINE__, "allocation %ld failed: the context no longer works (%s)", n, tl_last_error(ctx));
  tl_scope_end(s);
}

/* the run with the n-th allocation failing: an error that says out of memory, or the
 * right answer when nothing failed or the failure was survived */
static void sweep_one(sweep_program prog, long n, const char *cache) {
  tl_ctx *ctx = tl_init();
  if (!ctx) return; /* a context that cannot be made is the caller's clean error */
  tl_set_cache_dir(ctx, cache);
  tl_scope *s = tl_scope_begin(ctx, "run");
  alloc_arm(n);
  bool ok = prog(ctx);
  alloc_disarm();
  if (!ok) {
    const char *msg = tl_last_error(ctx);
    if (!atomic_load(&alloc_failed))
      tl_test_fail(__FILE__, __LINE__, "allocation %ld: failed with no allocation failed: %s", n, msg);
    else if (tl_last_status(ctx) == TL_OK)
      tl_test_fail(__FILE__, __LINE__, "allocation %ld: a wrong answer and no error", n);
    else if (tl_last_status(ctx) != TL_ERR_NOMEM || !strstr(msg, "out of memory"))
      tl_test_fail(__FILE__, __LINE__, "allocation %ld: error is not out of memory: %s", n, msg);
  }
  if (s) tl_scope_end(s);
  sweep_check_after(ctx, n);
  tl_shutdown(ctx);
}

/* a crash names the allocation that was failing */
static volatile sig_atomic_t sweep_current;
static void sweep_on_crash(int sig) {
  char msg[96];
  int len = snprintf(msg, sizeof msg, "  crashed (signal %d) with allocation %ld failing\n", sig, (long)sweep_current);
  if (len > 0 && write(1, msg, (size_t)len) < 0) _exit(99);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* one run of prog in a fresh context, counting: the number of allocations it makes */
static long sweep_count(sweep_program prog, const char *cache) {
  tl_ctx *ctx = tl_init();
  tl_set_cache_dir(ctx, cache);
  tl_scope *s = tl_scope_begin(ctx, "count");
  alloc_arm(0);
  CHECK(prog(ctx));
  long total = alloc_disarm();
  tl_scope_end(s);
  tl_shutdown(ctx);
  return total;
}

/* every allocation of prog, one failing per run; returns how many there were */
static long sweep(sweep_program prog) {
  char *cache = tl_test_tmpdir();
  if (!cache) return 0;
  sweep_count(prog, cache); /* compiles the kernels into the cache */
  long total = sweep_count(prog, cache);
  signal(SIGSEGV, sweep_on_crash);
  signal(SIGABRT, sweep_on_crash);
  signal(SIGBUS, sweep_on_crash);
  const char *from = getenv("TL_ALLOC_SWEEP_FROM"), *to = getenv("TL_ALLOC_SWEEP_TO");
  for (long n = from ? atol(from) : 1; n <= (to ? atol(to) : total + 1); n++) {
    sweep_current = n;
    sweep_one(prog, n, cache);
  }
  CHECK(tl_test_rm_tree(cache) == 0);
  printf("  swept %ld allocations, each failing once\n", total);
  return total;
}

/* ---- the programs ------------------------------------------------------------- */

/* one training step of a 2-4-1 MLP on four points, from fixed weights: the loss after
 * the step, computed once without failures, is the right answer */
static double mlp_expected = -1, *mlp_want = &mlp_expected;
static bool mlp_step(tl_ctx *ctx) {
  static const float x[8] = {0, 0, 0, 1, 1, 0, 1, 1}, y[4] = {0, 1, 1, 0};
  static const float w1[8] = {0.5f, -0.25f, 0.75f, 0.1f, -0.5f, 0.3f, 0.2f, -0.6f}, w2[4] = {0.4f, -0.7f, 0.2f, 0.9f};
  tl_tensor *X = tl_from_data(ctx, TL_F32, 2, (int64_t[]){4, 2}, x);
  tl_tensor *Y = tl_from_data(ctx, TL_F32, 2, (int64_t[]){4, 1}, y);
  tl_tensor *p[2] = {tl_from_data(ctx, TL_F32, 2, (int64_t[]){2, 4}, w1),
                     tl_from_data(ctx, TL_F32, 2, (int64_t[]){4, 1}, w2)};
  if (!X || !Y || !p[0] || !p[1] || tl_set_requires_grad(p[0], 1) != TL_OK || tl_set_requires_grad(p[1], 1) != TL_OK)
    return false;
  tl_optimizer *opt = tl_sgd(2, p, 0.5, 0.9, 0);
  if (!opt) return false;
  bool ok = false;
  for (int step = 0; step < 2; step++) {
    tl_tensor *loss = tl_mse_loss(tl_matmul(tl_tanh(tl_matmul(X, p[0])), p[1]), Y);
    double v;
    if (!loss || tl_optimizer_zero_grad(opt) != TL_OK || tl_backward(loss, NULL) != TL_OK ||
        tl_optimizer_step(opt) != TL_OK || tl_item(loss, &v) != TL_OK)
      break;
    if (step == 1) {
      if (*mlp_want < 0) *mlp_want = v;
      ok = v == *mlp_want;
    }
  }
  tl_optimizer_free(opt);
  return ok;
}

/* ancestors over a chain of 10 people: 9+8+...+1 = 45 pairs */
static bool datalog_query(tl_ctx *ctx) {
  tl_kb *kb = tl_kb_new(ctx);
  if (!kb) return false;
  /* one fact a line: `parent(a, b). parent(..)` on one line reads as a method call */
  bool ok = tl_kb_add_rules(kb, "parent(p0, p1).\nparent(p1, p2).\nparent(p2, p3).\nparent(p3, p4).\n"
                                "parent(p4, p5).\nparent(p5, p6).\nparent(p6, p7).\nparent(p7, p8).\n"
                                "parent(p8, p9).\n"
                                "anc(x, y) :- parent(x, y).\n"
                                "anc(x, y) :- parent(x, z), anc(z, y).\n") == TL_OK &&
            tl_kb_count(kb, "anc") == 45;
  if (ok) {
    tl_kb_term args[2] = {tl_kb_ent(tl_kb_entity(kb, "p7")), tl_kb_var("y")};
    tl_tensor *q = tl_kb_query(kb, "anc", 2, args); /* p8, p9 */
    ok = q && tl_numel(q) == 2;
  }
  tl_kb_free(kb);
  return ok;
}

static char npy_path[64], st_path[64];

/* loading a .npy file written beforehand: [[1, 2, 3], [4, 5, 6]], sum 21 */
static bool load_npy(tl_ctx *ctx) {
  double v = 0;
  tl_tensor *t = tl_load_npy(ctx, npy_path);
  return t && tl_item(tl_sum(t, 0, NULL, 0), &v) == TL_OK && v == 21;
}

/* loading both tensors of a .safetensors file: "a" [1, 2, 3] and "b" [10], sum 16 */
static bool load_safetensors(tl_ctx *ctx) {
  int n = 0;
  char **names = NULL;
  tl_tensor **ts = NULL;
  if (tl_load_safetensors(ctx, st_path, &n, &names, &ts) != TL_OK) return false;
  double a = 0, b = 0;
  bool ok = n == 2 && strcmp(names[0], "a") == 0 && tl_item(tl_sum(ts[0], 0, NULL, 0), &a) == TL_OK &&
            tl_item(tl_sum(ts[1], 0, NULL, 0), &b) == TL_OK && a + b == 16;
  tl_free(names);
  tl_free(ts);
  return ok;
}

static void write_files(void) {
  snprintf(npy_path, sizeof npy_path, "/tmp/tl_alloc_%ld.npy", (long)getpid());
  snprintf(st_path, sizeof st_path, "/tmp/tl_alloc_%ld.safetensors", (long)getpid());
  tl_ctx *ctx = tl_init();
  tl_tensor *t = tl_from_data(ctx, TL_F64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
  CHECK(tl_save_npy(t, npy_path) == TL_OK);
  tl_tensor *ab[2] = {tl_from_data(ctx, TL_F32, 1, (int64_t[]){3}, (float[]){1, 2, 3}),
                      tl_from_data(ctx, TL_I64, 1, (int64_t[]){1}, (int64_t[]){10})};
  CHECK(tl_save_safetensors(ctx, st_path, 2, (const char *[]){"a", "b"}, ab) == TL_OK);
  tl_shutdown(ctx);
}

TEST(alloc_fail_mlp_step) { CHECK(sweep(mlp_step) > 50); }

/* the same step on opencl (its device buffers, host copies, kernels; the driver's own
 * allocations are the library's, PoCL's are not swept); its answer is its own */
static double mlp_expected_opencl = -1;
static bool mlp_step_opencl(tl_ctx *ctx) {
  if (tl_set_backend(ctx, "opencl") != TL_OK) return false;
  mlp_want = &mlp_expected_opencl;
  bool ok = mlp_step(ctx);
  mlp_want = &mlp_expected;
  return ok;
}
TEST(alloc_fail_opencl_mlp_step) {
  if (tl_backend_usable("opencl") != TL_OK) {
    printf("  opencl is not available here: %s\n", tl_last_error(NULL));
    tl_clear_error(NULL);
    return;
  }
  CHECK(sweep(mlp_step_opencl) > 50);
}
TEST(alloc_fail_datalog) { CHECK(sweep(datalog_query) > 20); }
TEST(alloc_fail_load_files) {
  write_files();
  CHECK(sweep(load_npy) > 3);
  CHECK(sweep(load_safetensors) > 3);
  unlink(npy_path);
  unlink(st_path);
}

/* a small CNN step: conv2d, max pool, layer norm, cross entropy, backward and Adam,
 * from fixed inputs; the loss, computed once without failures, is the right answer */
static double cnn_expected = -1;
static bool cnn_step(tl_ctx *ctx) {
  float x[2 * 1 * 4 * 4], w[2 * 1 * 3 * 3];
  for (int i = 0; i < 32; i++) x[i] = (float)((i * 7) % 5) / 4.0f - 0.5f;
  for (int i = 0; i < 18; i++) w[i] = (float)((i * 3) % 7) / 7.0f - 0.4f;
  tl_tensor *X = tl_from_data(ctx, TL_F32, 4, (int64_t[]){2, 1, 4, 4}, x);
  tl_tensor *W = tl_from_data(ctx, TL_F32, 4, (int64_t[]){2, 1, 3, 3}, w);
  tl_tensor *Y = tl_from_data(ctx, TL_I64, 1, (int64_t[]){2}, (int64_t[]){0, 1});
  if (!X || !W || !Y || tl_set_requires_grad(W, 1) != TL_OK) return false;
  tl_optimizer *opt = tl_adam(1, &W, 0.01, 0.9, 0.999, 1e-8, 0);
  if (!opt) return false;
  bool ok = false;
  for (int step = 0; step < 1; step++) {
    tl_tensor *h = tl_max_pool2d(tl_conv2d(X, W, NULL, 1, 1, 1, 1), 2, 2, 2, 2); /* [2, 2, 2, 2] */
    tl_tensor *logits = tl_layer_norm(tl_mean(h, 2, (int[]){2, 3}, 0), NULL, NULL, 1e-5); /* [2, 2] */
    tl_tensor *loss = tl_cross_entropy(logits, Y);
    double v;
    if (!loss || tl_optimizer_zero_grad(opt) != TL_OK || tl_backward(loss, NULL) != TL_OK ||
        tl_optimizer_step(opt) != TL_OK || tl_item(loss, &v) != TL_OK)
      break;
    if (cnn_expected < 0) cnn_expected = v;
    ok = v == cnn_expected;
  }
  tl_optimizer_free(opt);
  return ok;
}

TEST(alloc_fail_cnn_step) { CHECK(sweep(cnn_step) > 100); }
/* ---- tl run ----------------------------------------------------------------------
 * A program compiled and run in-process (tl_lang_run_source: check, generate C,
 * compile through the cache, run in a fresh context) with the n-th allocation failing:
 * exit 0 with the whole expected output and nothing live at the end, or exit 1 saying
 * out of memory. */
typedef struct {
  const char *name, *src, *expect;
} lang_program;

static const lang_program LANG_PROGRAMS[] = {
    {"tensors", /* [1,2,3] . [4,5,6] = 32; relu(x - 2) sums to 0+0+1 = 1 */
     "fn main() {\n"
     "  let a = [1.0, 2.0, 3.0];\n"
     "  let b = [4.0, 5.0, 6.0];\n"
     "  println((a * b).sum());\n"
     "  println((a - 2.0).relu().sum());\n"
     "}\n",
     "32.0\n1.0\n"},
    {"logic", /* a chain of four: 3 + 2 + 1 = 6 ancestor pairs */
     "parent(a, b).\nparent(b, c).\nparent(c, d).\n"
     "anc(x, y) :- parent(x, y).\nanc(x, y) :- parent(x, z), anc(z, y).\n"
     "fn main() {\n"
     "  println(?anc($x, $y).dim(0));\n"
     "}\n",
     "6\n"},
    {"enums", /* a list 3 -> 2 -> 1 summed through Option and match: 6 */
     "enum List { Nil, Cons(i64, List) }\n"
     "fn sum(l: List) -> i64 { match l { List::Nil => 0, List::Cons(v, rest) => v + sum(rest) } }\n"
     "fn main() {\n"
     "  let l = List::Cons(3, List::Cons(2, List::Cons(1, List::Nil)));\n"
     "  let o: Option<i64> = Some(sum(l));\n"
     "  println(o.unwrap());\n"
     "}\n",
     "6\n"},
};

static long lang_sweep_one(const lang_program *p, long n, bool *clean_error) {
  char *out = NULL, *err = NULL;
  size_t out_len = 0, err_len = 0;
  FILE *fo = open_memstream(&out, &out_len), *fe = open_memstream(&err, &err_len);
  struct tl_stats_out stats = {0};
  tl_lang_run_options o = {.out = fo, .err = fe, .stats = &stats};
  alloc_arm(n);
  int rc = tl_lang_run_source(p->name, p->src, strlen(p->src), &o);
  long seen = alloc_disarm();
  fclose(fo);
  fclose(fe);
  *clean_error = rc == 1 && strstr(err, "out of memory") != NULL;
  if (rc == 0 && strcmp(out, p->expect) != 0)
    tl_test_fail(__FILE__, __LINE__, "%s, allocation %ld: exit 0 with output '%s'", p->name, n, out);
  else if (rc != 0 && !*clean_error)
    tl_test_fail(__FILE__, __LINE__, "%s, allocation %ld: exit %d, not out of memory: %s", p->name, n, rc, err);
  /* after an error the counts are those live when it struck (--mem-stats shows them);
   * what the error path frees is checked by LeakSanitizer (make test-asan) */
  if (rc == 0 && (stats.live_tensors || stats.live_objects))
    tl_test_fail(__FILE__, __LINE__, "%s, allocation %ld: %llu tensors and %llu objects live at exit", p->name, n,
                 stats.live_tensors, stats.live_objects);
  free(out);
  free(err);
  return seen;
}

TEST(alloc_fail_tl_run) {
  char *cache = tl_test_tmpdir();
  if (!cache) return;
  setenv("TL_CACHE_DIR", cache, 1);
  signal(SIGSEGV, sweep_on_crash);
  signal(SIGABRT, sweep_on_crash);
  for (size_t i = 0; i < sizeof LANG_PROGRAMS / sizeof LANG_PROGRAMS[0]; i++) {
    const lang_program *p = &LANG_PROGRAMS[i];
    const char *only = getenv("TL_ALLOC_SWEEP_PROGRAM");
    if (only && strcmp(only, p->name)) continue;
    bool clean;
    lang_sweep_one(p, 0, &clean);                  /* compiles into the cache */
    long total = lang_sweep_one(p, 0, &clean), errors = 0;
    CHECK(total > 20);
    const char *from = getenv("TL_ALLOC_SWEEP_FROM"), *to = getenv("TL_ALLOC_SWEEP_TO");
    for (long n = from ? atol(from) : 1; n <= (to ? atol(to) : total + 1); n++) {
      sweep_current = n;
      lang_sweep_one(p, n, &clean);
      errors += clean;
    }
    CHECK(errors > 0 || from); /* the sweep did fail something */
    printf("  %s: swept %ld allocations, %ld ended with out of memory\n", p->name, total, errors);
  }
  CHECK(tl_test_rm_tree(cache) == 0);
}

/* the kernel cache's directory named from TL_CACHE_DIR, XDG_CACHE_HOME or HOME: a
 * failing allocation of the name (or anything else) is "out of memory", never "no
 * kernel cache directory" and a fallback (the bug: a NULL name read as none named) */
TEST(alloc_fail_cache_dir_name) {
  char *home = tl_test_tmpdir();
  if (!home) return;
  const char *settings[3][2] = {{"TL_CACHE_DIR", home}, {"XDG_CACHE_HOME", home}, {"HOME", home}};
  for (int k = 0; k < 3; k++) {
    unsetenv("TL_CACHE_DIR"), unsetenv("XDG_CACHE_HOME"), unsetenv("HOME");
    setenv(settings[k][0], settings[k][1], 1);
    tl_error err = {0};
    alloc_arm(0);
    tl_compiler *c = tl_compiler_create(NULL, NULL, NULL, &err);
    long total = alloc_disarm();
    CHECK(c != NULL);
    tl_compiler_destroy(c);
    long failed = 0;
    for (long n = 1; n <= total; n++) {
      err = (tl_error){0};
      alloc_arm(n);
      c = tl_compiler_create(NULL, NULL, NULL, &err);
      alloc_disarm();
      if (c) { /* the allocation was survived: with the cache named, not a fallback */
        if (tl_compiler_get_stats(c).fallback)
          tl_test_fail(__FILE__, __LINE__, "%s: allocation %ld failed: fell back to a temporary directory", settings[k][0], n);
        tl_compiler_destroy(c);
        continue;
      }
      failed++;
      CHECK_INT(err.status, TL_ERR_NOMEM);
      CHECK_STR(err.msg, "out of memory");
    }
    CHECK(failed > 0);
  }
  CHECK(tl_test_rm_tree(home) == 0);
}

/* the shared helpers of src/core answer running out of memory: false or NULL, with
 * what they held unchanged and usable */
TEST(alloc_fail_core_helpers) {
  tl_vec(int) v = {0};
  CHECK(tl_vec_push(&v, 1));
  for (int i = 2; i <= 8; i++) CHECK(tl_vec_push(&v, i)); /* fills the first 8 */
  alloc_arm(1);
  bool pushed = tl_vec_push(&v, 9);
  alloc_disarm();
  CHECK(!pushed);
  CHECK_INT(v.len, 8);
  CHECK_INT(v.cap, 8);
  CHECK_INT(v.data[7], 8);
  CHECK(tl_vec_push(&v, 9)); /* memory is back: it grows */
  CHECK_INT(v.data[8], 9);
  tl_vec_free(&v);

  tl_hset s = {0};
  for (uint64_t i = 1; i <= 16; i++) CHECK(tl_hset_add(&s, i * 3, i)); /* full at half load */
  alloc_arm(1);
  bool added = tl_hset_add(&s, 99, 17);
  alloc_disarm();
  CHECK(!added);
  CHECK_INT(s.count, 16);
  tl_hset_walk w = tl_hset_find(&s, 30);
  CHECK_INT(tl_hset_next(&s, &w), 10);
  tl_hset_free(&s);

  tl_ptrmap m = {0};
  int k;
  alloc_arm(1);
  bool put = tl_ptrmap_put(&m, &k, &k);
  alloc_disarm();
  CHECK(!put);
  CHECK(tl_ptrmap_get(&m, &k) == NULL);
  tl_ptrmap_free(&m);

  tl_strbuf b = {0};
  tl_strbuf_puts(&b, "kept?");
  alloc_arm(1);
  tl_strbuf_repeat(&b, 'x', 100);
  alloc_disarm();
  tl_strbuf_puts(&b, "later appends are dropped too");
  CHECK(tl_strbuf_take(&b) == NULL); /* the text is incomplete: no string */
  CHECK(b.data == NULL);

  FILE *f = tmpfile(); /* a stream read whole: no memory is the buffer's oom, not a read error */
  CHECK(f != NULL);
  fputs("text", f);
  rewind(f);
  alloc_arm(1);
  bool read = tl_strbuf_read(&b, f);
  alloc_disarm();
  fclose(f);
  CHECK(read);
  CHECK(b.oom);
  CHECK(tl_strbuf_take(&b) == NULL);
}

/* tl_init, then choosing interp and cpu again and setting the compiler: each
 * allocation failing in turn gives NULL with "init: out of memory" (TL_ERR_NOMEM, not
 * a backend error), or TL_ERR_NOMEM from the call that could not allocate, and the
 * context keeps the backend it had */
TEST(alloc_fail_backend_choice) {
  long n = 0;
  for (bool more = true; more; ) {
    n++;
    tl_clear_error(NULL);
    alloc_arm(n);
    tl_ctx *ctx = tl_init();
    tl_status st1 = ctx ? tl_set_backend(ctx, "interp") : TL_OK;
    const char *after1 = ctx ? tl_backend_name(ctx) : NULL;
    tl_status st2 = ctx ? tl_set_compiler(ctx, "cc") : TL_OK;
    alloc_disarm();
    more = atomic_load(&alloc_failed);
    if (!ctx) {
      CHECK_INT(tl_last_status(NULL), TL_ERR_NOMEM);
      CHECK_STR(tl_last_error(NULL), "init: out of memory");
      continue;
    }
    CHECK(st1 == TL_OK || st1 == TL_ERR_NOMEM);
    CHECK_STR(after1, st1 ? "cpu" : "interp");
    CHECK(st2 == TL_OK || st2 == TL_ERR_NOMEM);
    if (st1 || st2) CHECK_CONTAINS(tl_last_error(ctx), "out of memory");
    TEST_SHUTDOWN(ctx);
  }
  CHECK(n > 3);
  tl_clear_error(NULL);
}
