/* test_tiered.c — tiered compilation (runtime/tiered.c): on a fresh cache a kernel
 * runs libtcc's code first and cc's after the background build swaps it in, with the
 * same results (to the differential tolerance: test_diff.c compares the tiers on
 * random graphs) and no race (the suite's TSan target runs these); the queue left at
 * exit is built by a detached process, so the next run starts optimized; a process
 * killed in the middle of a batch leaves a valid cache; without libtcc (TL_TIERED=0)
 * the kernels of a realize are built in one cc invocation; a failed optimized build
 * leaves the tier-1 code running. Expected values come from plain C loops here. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/context.h"
#include "lang/lang.h"
#include "runtime/compiler_internal.h"
#include "test.h"
#include "tl.h"

enum { ROWS = 24, COLS = 40 };

static void fill_input(float *x) {
  for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)((i * 37 % 101) - 50) / 25.0f;
}

typedef struct {
  float soft[ROWS * COLS]; /* softmax(3 x, axis 1) */
  float gram[ROWS * ROWS]; /* x x^T: a GEMM */
  float rows[ROWS];        /* sum(relu(x x^T), axis 1) */
} values;

/* the same three results in double precision, by plain loops */
static void expected(const float *x, values *v) {
  for (int i = 0; i < ROWS; i++) {
    double mx = -1e300, s = 0;
    for (int j = 0; j < COLS; j++) mx = fmax(mx, 3.0 * x[i * COLS + j]);
    for (int j = 0; j < COLS; j++) s += exp(3.0 * x[i * COLS + j] - mx);
    for (int j = 0; j < COLS; j++) v->soft[i * COLS + j] = (float)(exp(3.0 * x[i * COLS + j] - mx) / s);
    double r = 0;
    for (int k = 0; k < ROWS; k++) {
      double d = 0;
      for (int j = 0; j < COLS; j++) d += (double)x[i * COLS + j] * x[k * COLS + j];
      v->gram[i * ROWS + k] = (float)d;
      r += d > 0 ? d : 0;
    }
    v->rows[i] = (float)r;
  }
}

/* three realizes of the graph (the second time, replays of the first); 0 when all ran */
static int compute(tl_ctx *ctx, const float *xv, values *v) {
  tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){ROWS, COLS}, xv);
  tl_tensor *soft = tl_softmax(tl_mul_scalar(x, 3), 1);
  tl_tensor *gram = tl_matmul(x, tl_transpose(x, 0, 1));
  tl_tensor *rows = tl_sum(tl_relu(gram), 1, (int[]){1}, 0);
  int bad = tl_to_host(soft, v->soft, sizeof v->soft) || tl_to_host(gram, v->gram, sizeof v->gram) ||
            tl_to_host(rows, v->rows, sizeof v->rows);
  tl_release(soft), tl_release(gram), tl_release(rows), tl_release(x);
  return bad;
}

/* within the differential test's f32 tolerance of want (test_diff.c) */
static int count_off(const float *got, const float *want, int n) {
  int bad = 0;
  for (int i = 0; i < n; i++) bad += !(fabs((double)got[i] - want[i]) <= 1e-4 + 2e-3 * fabs((double)want[i]));
  return bad;
}

static void check_values(const values *got, const values *want) {
  CHECK_INT(count_off(got->soft, want->soft, ROWS * COLS), 0);
  CHECK_INT(count_off(got->gram, want->gram, ROWS * ROWS), 0);
  CHECK_INT(count_off(got->rows, want->rows, ROWS), 0);
}

static tl_ctx *ctx_on(const char *dir) {
  tl_ctx *ctx = tl_init();
  CHECK(ctx != NULL);
  if (ctx) CHECK_INT(tl_set_cache_dir(ctx, dir), TL_OK);
  return ctx;
}

/* a new context on dir computes x again (values checked against want), then ends;
 * returns its statistics, which say where its kernels came from */
static tl_stats rerun_on(const char *dir, const float *x, const values *want) {
  values v;
  tl_ctx *ctx = ctx_on(dir);
  CHECK_INT(compute(ctx, x, &v), 0);
  check_values(&v, want);
  tl_stats s = tl_get_stats(ctx);
  TEST_SHUTDOWN(ctx);
  return s;
}

/* does this program carry libtcc (tier 1)? */
static int has_tier1(tl_ctx *ctx) { return tl_backend_cpu_compiler(ctx->be) && tl_backend_cpu_compiler(ctx->be)->tcc_ok && tl_backend_cpu_compiler(ctx->be)->tiered; }

enum { KERNELS = 3 }; /* softmax, the GEMM, the row sums */

TEST(tiered_tier1_then_tier2_same_results) {
  char *dir = tl_test_tmpdir();
  float x[ROWS * COLS];
  values want, v1, v2;
  fill_input(x);
  expected(x, &want);
  tl_ctx *ctx = ctx_on(dir);
  CHECK_INT(compute(ctx, x, &v1), 0);
  check_values(&v1, &want);
  tl_stats s = tl_get_stats(ctx);
  if (!has_tier1(ctx)) {
    printf("  no libtcc in this program: tier 1 not tested\n");
    CHECK_INT(s.kernels_tier1, 0);
  } else {
    CHECK_INT(s.kernels_compiled, KERNELS);
    CHECK_INT(s.kernels_tier1, KERNELS); /* each ran libtcc's code first */
    tl_compiler_wait(tl_backend_cpu_compiler(ctx->be));
    s = tl_get_stats(ctx);
    CHECK_INT(s.kernels_tier2, KERNELS);
    CHECK_INT(s.kernel_swaps, KERNELS);
    CHECK(s.compile_batches >= 1 && s.compile_batches <= KERNELS);
    CHECK_INT(tl_compiler_get_stats(tl_backend_cpu_compiler(ctx->be)).tier2_failed, 0);
    uint64_t replays = s.realize_replays;
    CHECK_INT(compute(ctx, x, &v2), 0); /* replayed: the plans hold the swapped code */
    CHECK_INT(tl_get_stats(ctx).realize_replays, replays + 3);
    CHECK_INT(tl_get_stats(ctx).kernels_compiled, KERNELS);
    check_values(&v2, &want);
    check_values(&v2, &v1);
  }
  TEST_SHUTDOWN(ctx);
  /* the next context finds every kernel optimized on disk */
  s = rerun_on(dir, x, &want);
  CHECK_INT(s.kernels_compiled, 0);
  CHECK_INT(s.disk_cache_hits, KERNELS);
  CHECK_INT(s.disk_cache_rejects, 0);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* realizes (replays) run on the pool's threads while the builder swaps the code
 * under them: every result right, and TSan (make test-tsan) sees no race */
TEST(tiered_swap_while_running) {
  char *dir = tl_test_tmpdir();
  float x[ROWS * COLS];
  values want, v;
  fill_input(x);
  expected(x, &want);
  tl_ctx *ctx = ctx_on(dir);
  int runs = 0;
  time_t start = time(NULL);
  while (time(NULL) - start < 120) { /* the builder is niced: on a busy machine it waits */
    CHECK_INT(compute(ctx, x, &v), 0);
    runs++;
    if (count_off(v.soft, want.soft, ROWS * COLS) || count_off(v.gram, want.gram, ROWS * ROWS) ||
        count_off(v.rows, want.rows, ROWS)) {
      CHECK(!"a result was wrong during the swaps");
      break;
    }
    if (tl_get_stats(ctx).kernel_swaps == KERNELS || !has_tier1(ctx)) break;
  }
  if (has_tier1(ctx)) CHECK_INT(tl_get_stats(ctx).kernel_swaps, KERNELS);
  CHECK(runs >= 1);
  TEST_SHUTDOWN(ctx);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- the queue at exit ----------------------------------------------------------------- */
/* runs the graph in a child process with policy TL_COMPILE_AT_EXIT and waits for it and
 * for whatever it left running (this process adopts orphans: a subreaper) */
static void run_child_and_orphans(const char *dir, const char *policy, const float *x) {
  CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("TL_COMPILE_AT_EXIT", policy, 1);
    tl_ctx *ctx = tl_init();
    values v;
    int bad = !ctx || tl_set_cache_dir(ctx, dir) || compute(ctx, x, &v);
    tl_shutdown(ctx);
    _exit(bad);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) continue; /* the detached builder */
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(tiered_next_run_starts_optimized) {
  char *dir = tl_test_tmpdir();
  float x[ROWS * COLS];
  values want;
  fill_input(x);
  expected(x, &want);
  run_child_and_orphans(dir, "finish", x); /* the default */
  tl_stats s = rerun_on(dir, x, &want);
  CHECK_INT(s.kernels_compiled, 0);
  CHECK_INT(s.kernels_tier1, 0);
  CHECK_INT(s.disk_cache_hits, KERNELS);
  CHECK_INT(s.disk_cache_rejects, 0);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

TEST(tiered_dropped_queue_is_built_again) {
  char *dir = tl_test_tmpdir();
  float x[ROWS * COLS];
  values want;
  fill_input(x);
  expected(x, &want);
  run_child_and_orphans(dir, "drop", x);
  tl_stats s = rerun_on(dir, x, &want);
  CHECK_INT(s.disk_cache_hits + s.kernels_compiled, KERNELS); /* whatever the child had built, the rest again */
  CHECK_INT(s.disk_cache_rejects, 0);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- killed in the middle of a batch ------------------------------------------------- */
/* a graph of many distinct kernels: x * k + k for k in [0, n), each realized alone */
static int many_kernels(tl_ctx *ctx, int n, double *sums) {
  tl_tensor *x = tl_from_data(ctx, TL_F64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
  int bad = !x;
  for (int k = 0; k < n && !bad; k++) {
    tl_tensor *y = tl_sum(tl_exp(tl_mul_scalar(tl_tanh(tl_mul_scalar(x, 0.01 * (k + 1))), 1.0 + k)), 0, NULL, 0);
    bad = tl_to_host(y, &sums[k], sizeof sums[k]);
    tl_release(y);
  }
  tl_release(x);
  return bad;
}

static double many_expected(int k) {
  double s = 0;
  for (int i = 1; i <= 3; i++) s += exp(tanh(i * 0.01 * (k + 1)) * (1.0 + k));
  return s;
}

/* a batch's source is in the cache directory while its cc runs */
static int batch_running(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int found = 0;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".batch.") && strstr(e->d_name, ".c")) found = 1;
  if (d) closedir(d);
  return found;
}

TEST(tiered_kill_mid_batch_leaves_cache_valid) {
  enum { N = 24 };
  char *dir = tl_test_tmpdir();
  CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) { /* realizes until killed */
    tl_ctx *ctx = tl_init();
    double sums[N];
    if (!ctx || tl_set_cache_dir(ctx, dir)) _exit(2);
    for (;;) many_kernels(ctx, N, sums);
  }
  int seen = 0;
  for (int i = 0; i < 3000 && !seen; i++) { /* up to 30 s */
    seen = batch_running(dir);
    if (!seen) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  CHECK(seen);
  kill(pid, SIGKILL);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) continue; /* its cc, orphaned */
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  /* the next run: no damaged entry anywhere, every value right */
  char *tiered = tl_test_env_save("TL_TIERED");
  setenv("TL_TIERED", "0", 1); /* cc at once: every kernel is loaded or built from this cache */
  tl_ctx *ctx = ctx_on(dir);
  double sums[N];
  CHECK_INT(many_kernels(ctx, N, sums), 0);
  for (int k = 0; k < N; k++) CHECK_NEAR(sums[k], many_expected(k), 1e-9 * many_expected(k));
  tl_stats s = tl_get_stats(ctx);
  CHECK_INT(s.disk_cache_rejects, 0);
  CHECK_INT(s.disk_cache_hits + s.kernels_compiled, N);
  TEST_SHUTDOWN(ctx);
  tl_test_env_restore("TL_TIERED", tiered);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- without tier 1 -------------------------------------------------------------------- */
TEST(tiered_off_builds_a_realize_in_one_batch) {
  char *dir = tl_test_tmpdir();
  char *tiered = tl_test_env_save("TL_TIERED");
  setenv("TL_TIERED", "0", 1); /* as without libtcc */
  tl_ctx *ctx = ctx_on(dir);
  float x[ROWS * COLS];
  values want;
  fill_input(x);
  expected(x, &want);
  /* one realize, three kernels: the softmax, the GEMM over it, the row sums */
  tl_tensor *t = tl_from_data(ctx, TL_F32, 2, (int64_t[]){ROWS, COLS}, x);
  tl_tensor *g = tl_matmul(t, tl_transpose(t, 0, 1));
  tl_tensor *r = tl_sum(tl_relu(tl_add(g, tl_matmul(tl_softmax(t, 1), tl_transpose(t, 0, 1)))), 1, (int[]){1}, 0);
  float rows[ROWS];
  CHECK_INT(tl_to_host(r, rows, sizeof rows), TL_OK);
  tl_stats s = tl_get_stats(ctx);
  CHECK(s.kernels_compiled >= 3);
  CHECK_INT(s.kernels_tier1, 0);
  CHECK_INT(s.kernels_tier2, s.kernels_compiled);
  CHECK_INT(s.compile_batches, 1); /* all of the realize's kernels, one cc */
  CHECK_INT(s.kernel_swaps, 0);
  for (int i = 0; i < ROWS; i++) { /* g + softmax(x) x^T, by loops */
    double sum = 0;
    for (int k = 0; k < ROWS; k++) {
      double mx = -1e300, z = 0, d = 0;
      for (int j = 0; j < COLS; j++) mx = fmax(mx, x[i * COLS + j]);
      for (int j = 0; j < COLS; j++) z += exp(x[i * COLS + j] - mx);
      for (int j = 0; j < COLS; j++) d += exp(x[i * COLS + j] - mx) / z * x[k * COLS + j];
      double v = want.gram[i * ROWS + k] + d;
      sum += v > 0 ? v : 0;
    }
    CHECK_NEAR(rows[i], sum, 1e-4 + 2e-3 * fabs(sum));
  }
  tl_release(r), tl_release(g), tl_release(t);
  TEST_SHUTDOWN(ctx);
  tl_test_env_restore("TL_TIERED", tiered);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- a failed optimized build ------------------------------------------------------- */
TEST(tiered_failed_tier2_keeps_tier1) {
  char *dir = tl_test_tmpdir();
  char *flags = tl_test_env_save("TL_CFLAGS");
  setenv("TL_CFLAGS", "-fno-such-flag-for-tl", 1);
  tl_ctx *ctx = ctx_on(dir);
  float x[ROWS * COLS];
  values want, v;
  fill_input(x);
  expected(x, &want);
  tl_status st = compute(ctx, x, &v) ? tl_last_status(ctx) : TL_OK;
  if (has_tier1(ctx)) {
    CHECK_INT(st, TL_OK);
    check_values(&v, &want);
    tl_compiler_wait(tl_backend_cpu_compiler(ctx->be));
    tl_compiler_stats cs = tl_compiler_get_stats(tl_backend_cpu_compiler(ctx->be));
    CHECK_INT(cs.tier2_failed, KERNELS);
    CHECK_INT(cs.swaps, 0);
    CHECK_INT(compute(ctx, x, &v), 0); /* still libtcc's code, still right */
    check_values(&v, &want);
  } else {
    CHECK_INT(st, TL_ERR_COMPILER);
  }
  TEST_SHUTDOWN(ctx);
  tl_test_env_restore("TL_CFLAGS", flags);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- the unit API ---------------------------------------------------------------------- */
/* a unit: a static of its own (named through TL_UNIT, as the renderer's) and its function */
static void unit_src(char *out, size_t cap, int k, int broken) {
  snprintf(out, cap,
           "#ifndef TL_UNIT\n#define TL_UNIT(name) name\n#endif\n"
           "typedef long long i64;\n"
           "static const i64 TL_UNIT(scale) = %d;\n"
           "void TL_UNIT(k_unit)(void *const *b, i64 s, i64 e) {\n"
           "  for (i64 j = s; j < e; j++) ((i64 *)b[0])[j] = j * TL_UNIT(scale)%s;\n"
           "}\n",
           k + 2, broken ? " +" : "");
}

TEST(tiered_units_share_a_batch_and_fail_alone) {
  char *dir = tl_test_tmpdir();
  tl_error err = {0};
  char *tiered = tl_test_env_save("TL_TIERED");
  unsetenv("TL_TIERED"); /* the default (tiered), whatever runs the suite sets */
  tl_compiler *c = tl_compiler_create(NULL, NULL, dir, &err);
  tl_test_env_restore("TL_TIERED", tiered);
  CHECK(c != NULL);
  if (!c) return;
  char src[4][512];
  const tl_kernel_code *code[4];
  for (int k = 0; k < 4; k++) {
    unit_src(src[k], sizeof src[k], k, k == 2);
    CHECK_INT(tl_compiler_request(c, src[k], "k_unit", &code[k], &err), TL_OK);
    CHECK(tl_kernel_code_fn(code[k]) == NULL); /* until the flush */
  }
  CHECK_INT(tl_compiler_flush(c, &err), TL_ERR_COMPILER); /* unit 2's error, its own */
  CHECK_CONTAINS(err.msg, "kernel compilation failed");
  for (int k = 0; k < 4; k++) {
    tl_kernel_fn fn = tl_kernel_code_fn(code[k]);
    CHECK((fn == NULL) == (k == 2));
    int64_t out[5] = {0};
    void *bufs[1] = {out};
    if (fn) fn(bufs, 0, 5);
    if (fn) CHECK_INT(out[4], 4 * (k + 2));
  }
  tl_compiler_wait(c);
  tl_compiler_stats s = tl_compiler_get_stats(c);
  CHECK_INT(s.compiled, 3);
  CHECK_INT(s.tier2, 3);
  CHECK_INT(s.tier2_failed, 0);
  CHECK_INT(s.tier1, c->tcc_ok ? 3 : 0);
  CHECK_INT(s.batches, c->tcc_ok ? 1 : 3); /* tier 2: the good units in one cc; at once, after the batch failed, one by one */
  for (int k = 0; k < 4; k++) CHECK_INT(tl_kernel_code_tier(code[k]), k == 2 ? 0 : 2);
  /* the failed unit is requested again: the next flush tries it again */
  const tl_kernel_code *again = NULL;
  CHECK_INT(tl_compiler_request(c, src[2], "k_unit", &again, &err), TL_OK);
  CHECK(again == code[2]);
  CHECK_INT(tl_compiler_flush(c, &err), TL_ERR_COMPILER);
  tl_compiler_destroy(c);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- tl build executables ----------------------------------------------------------- */
/* the .so entries in dir */
static int count_so(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    n += len > 3 && !strcmp(e->d_name + len - 3, ".so");
  }
  if (d) closedir(d);
  return n;
}

/* runs a small program as `tl run` does, optimized_only as a `tl build` executable
 * does (tl_lang_main); no builder and nothing built at exit: what is on disk after it
 * was compiled by cc while it ran */
static int so_after_run(int optimized_only) {
  char *dir = tl_test_tmpdir();
  char *saved[3] = {tl_test_env_save("TL_CACHE_DIR"), tl_test_env_save("TL_COMPILE_JOBS"), tl_test_env_save("TL_COMPILE_AT_EXIT")};
  setenv("TL_CACHE_DIR", dir, 1);
  setenv("TL_COMPILE_JOBS", "0", 1);
  setenv("TL_COMPILE_AT_EXIT", "drop", 1);
  static const char prog[] = "fn main() {\n  let x = Tensor::arange(0, 10) as f32;\n"
                             "  println(\"{}\", (x * x).sum().item() + x.exp().max(0).item());\n}\n";
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  tl_lang_run_options o = {.out = f, .err = f, .optimized_only = optimized_only};
  CHECK_INT(tl_lang_run_source("opt.tl", prog, sizeof prog - 1, &o), 0);
  fclose(f);
  CHECK_NEAR(out ? atof(out) : 0, 285.0 + exp(9.0), 1e-2); /* sum of squares 0..9, e^9 */
  free(out);
  int n = count_so(dir);
  tl_test_env_restore("TL_CACHE_DIR", saved[0]);
  tl_test_env_restore("TL_COMPILE_JOBS", saved[1]);
  tl_test_env_restore("TL_COMPILE_AT_EXIT", saved[2]);
  CHECK_INT(tl_test_rm_tree(dir), 0);
  return n;
}

TEST(tiered_build_executables_run_optimized_kernels_only) {
  char *env = tl_test_env_save("TL_TIERED");
  unsetenv("TL_TIERED"); /* `tl run` tiered, as by default, whatever runs the suite sets */
  int tiered = so_after_run(0), optimized = so_after_run(1);
  tl_test_env_restore("TL_TIERED", env);
  CHECK(optimized >= 3); /* the program and its kernels, each built by cc */
  tl_ctx *probe = tl_init();
  int tcc = probe && tl_set_compiler(probe, "tcc") == TL_OK && tl_realize(tl_ones(probe, TL_F32, 1, (int64_t[]){2})) == TL_OK;
  tl_shutdown(probe);
  if (tcc) CHECK_INT(tiered, 1); /* the program only: its kernels ran libtcc's code */
}
