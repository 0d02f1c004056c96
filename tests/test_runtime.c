/* test_runtime.c — the compiler driver and its caches, the thread pool, and the
 * argument checks of tl_kernel_exec. Every test uses its own temporary cache
 * directory, never ~/.cache/tl. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/compiler.h"
#include "runtime/kernel.h"
#include "runtime/threadpool.h"
#include "test.h"

static const char ADD_SRC[] =
    "typedef long long int64_t;\n"
    "void k_add(void *const *b, int64_t s, int64_t e) {\n"
    "  float *o = (float *)b[0];\n"
    "  const float *x = (const float *)b[1], *y = (const float *)b[2];\n"
    "  for (int64_t i = s; i < e; i++) o[i] = x[i] + y[i];\n"
    "}\n";

/* ---- helpers ----------------------------------------------------------------- */

/* the one cache entry file with this suffix, or NULL */
static char *find_entry(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  char *found = NULL;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name), s = strlen(suffix);
    if (n > s && !strcmp(e->d_name + n - s, suffix) && !found) found = tl_test_path(dir, e->d_name);
  }
  if (d) closedir(d);
  return found;
}

/* the files in dir, but for the kernels' lock files (<key>.lock, kept: see compiler.c) */
static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.' && !strstr(e->d_name, ".lock")) n++;
  if (d) closedir(d);
  return n;
}

/* runs k_add over n floats through tl_kernel_exec; returns the wrong outputs */
static int64_t run_add(tl_kernel_fn fn, tl_pool *pool, int64_t n) {
  float *o = calloc((size_t)n, 4), *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) x[i] = (float)i, y[i] = 0.5f * (float)(i % 97);
  tl_kernel k = {.name = "k_add", .fn = fn, .nargs = 3, .work = n, .min_chunk = 1024};
  for (int i = 0; i < 3; i++) k.arg_dtype[i] = TL_F32, k.arg_min_bytes[i] = (size_t)n * 4;
  tl_kernel_arg args[3] = {{o, (size_t)n * 4, TL_F32, NULL, 0}, {x, (size_t)n * 4, TL_F32, NULL, 0},
                           {y, (size_t)n * 4, TL_F32, NULL, 0}};
  tl_error err = {0};
  int64_t bad = tl_kernel_exec(&k, pool, 3, args, NULL, &err) == TL_OK ? 0 : n;
  for (int64_t i = 0; i < n && !bad; i++) bad += o[i] != x[i] + y[i];
  free(o), free(x), free(y);
  return bad;
}

static tl_compiler *new_cc(const char *dir) {
  tl_error err = {0};
  tl_compiler *c = tl_compiler_create(NULL, NULL, dir, &err);
  if (!c) tl_test_fail(__FILE__, __LINE__, "tl_compiler_create: %s", err.msg);
  return c;
}

/* gets k_add from a new compiler on dir, checks it adds, returns its stats */
static tl_compiler_stats get_add_once(const char *dir) {
  tl_compiler_stats s = {0};
  tl_compiler *c = new_cc(dir);
  tl_kernel_fn fn = NULL;
  tl_error err = {0};
  if (!c) return s;
  CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn, &err), TL_OK);
  if (fn) CHECK_INT(run_add(fn, NULL, 5000), 0);
  s = tl_compiler_get_stats(c);
  tl_compiler_destroy(c);
  return s;
}

/* ---- compiler --------------------------------------------------------------- */
TEST(rt_compile_run_and_mem_hit) {
  char *dir = tl_test_tmpdir();
  tl_compiler *c = new_cc(dir);
  tl_pool *pool = tl_pool_create(2);
  tl_error err = {0};
  tl_kernel_fn fn = NULL, fn2 = NULL;
  CHECK(c && pool);
  if (c && pool) {
    CHECK_INT(tl_compiler_get_kind(c), TL_COMPILER_CC);
    CHECK_STR(tl_compiler_cache_dir(c), dir);
    CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn, &err), TL_OK);
    CHECK(fn != NULL);
    if (fn) CHECK_INT(run_add(fn, pool, 100000), 0);
    tl_compiler_stats s = tl_compiler_get_stats(c);
    CHECK_INT(s.compiled, 1);
    CHECK_INT(s.disk_hits, 0);
    CHECK_INT(s.mem_hits, 0);
    CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn2, &err), TL_OK);
    CHECK(fn2 == fn);
    s = tl_compiler_get_stats(c);
    CHECK_INT(s.mem_hits, 1);
    CHECK_INT(s.compiled, 1);
    /* the entry: a private .so beside its .sum, and no temporary files */
    char *so = find_entry(dir, ".so");
    struct stat st;
    CHECK(so && stat(so, &st) == 0 && (st.st_mode & 0777) == 0700);
    free(so);
    CHECK_INT(count_files(dir), 2);
  }
  tl_pool_destroy(pool);
  tl_compiler_destroy(c);
  tl_test_rm_tree(dir);
}

TEST(rt_disk_hit_compiles_nothing) {
  char *tmp = tl_test_tmpdir();
  char *dir = tl_test_path(tmp, "a/b/cache"); /* created mkdir -p style */
  tl_compiler_stats s = get_add_once(dir);
  CHECK_INT(s.compiled, 1);
  struct stat st;
  CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
  s = get_add_once(dir);
  CHECK_INT(s.compiled, 0);
  CHECK_INT(s.disk_hits, 1);
  CHECK_INT(s.disk_rejects, 0);
  free(dir);
  tl_test_rm_tree(tmp);
}

static void damage_truncate(const char *so) {
  struct stat st;
  CHECK(stat(so, &st) == 0 && truncate(so, st.st_size / 2) == 0);
}

static void damage_flip(const char *so) {
  int fd = open(so, O_RDWR);
  struct stat st;
  unsigned char b = 0;
  CHECK(fd >= 0 && fstat(fd, &st) == 0);
  off_t mid = st.st_size / 2;
  CHECK(pread(fd, &b, 1, mid) == 1);
  b ^= 0xff;
  CHECK(pwrite(fd, &b, 1, mid) == 1);
  close(fd);
}

static void damage_mode(const char *so) { CHECK(chmod(so, 0666) == 0); }

static void damage_sum(const char *so) {
  char *sum = malloc(strlen(so) + 2);
  snprintf(sum, strlen(so) + 2, "%.*s.sum", (int)strlen(so) - 3, so);
  CHECK(unlink(sum) == 0);
  free(sum);
}

/* a damaged entry is rejected, rebuilt, and the rebuilt one is then a disk hit */
static void check_rejected(void (*damage)(const char *so)) {
  char *dir = tl_test_tmpdir();
  get_add_once(dir);
  char *so = find_entry(dir, ".so");
  CHECK(so != NULL);
  if (so) damage(so);
  free(so);
  tl_compiler_stats s = get_add_once(dir);
  CHECK_INT(s.disk_rejects, 1);
  CHECK_INT(s.compiled, 1);
  CHECK_INT(s.disk_hits, 0);
  s = get_add_once(dir);
  CHECK_INT(s.disk_hits, 1);
  CHECK_INT(s.disk_rejects, 0);
  tl_test_rm_tree(dir);
}

TEST(rt_disk_reject_truncated) { check_rejected(damage_truncate); }
TEST(rt_disk_reject_flipped_bytes) { check_rejected(damage_flip); }
TEST(rt_disk_reject_open_mode) { check_rejected(damage_mode); }
TEST(rt_disk_reject_missing_sum) { check_rejected(damage_sum); }

TEST(rt_missing_symbol) {
  char *dir = tl_test_tmpdir();
  get_add_once(dir);
  tl_compiler *c = new_cc(dir);
  tl_kernel_fn fn = NULL;
  tl_error err = {0};
  if (c) {
    /* the entry exists but lacks the name: taken as corrupt, rebuilt once */
    CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_nope", &fn, &err), TL_ERR_COMPILER);
    CHECK_CONTAINS(err.msg, "does not define function 'k_nope'");
    CHECK_INT(tl_compiler_get_stats(c).disk_rejects, 1);
    CHECK_INT(tl_compiler_get_stats(c).compiled, 1);
    CHECK_INT(tl_compiler_get(c, ADD_SRC, "k add", &fn, &err), TL_ERR_ARG);
    CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn, &err), TL_OK);
  }
  tl_compiler_destroy(c);
  tl_test_rm_tree(dir);
}

TEST(rt_many_functions_one_source) {
  enum { N = 40 }; /* past the memory map's first growth */
  char src[8192] = "typedef long long int64_t;\n", name[16];
  for (int i = 0; i < N; i++) {
    size_t len = strlen(src);
    snprintf(src + len, sizeof src - len,
             "void k%d(void *const *b, int64_t s, int64_t e) {"
             " for (int64_t i = s; i < e; i++) ((int64_t *)b[0])[i] = i * %d; }\n", i, i);
  }
  char *dir = tl_test_tmpdir();
  tl_compiler *c = new_cc(dir);
  tl_kernel_fn fns[N] = {0};
  tl_error err = {0};
  for (int pass = 0; c && pass < 2; pass++) {
    for (int i = 0; i < N; i++) {
      snprintf(name, sizeof name, "k%d", i);
      tl_kernel_fn fn = NULL;
      CHECK_INT(tl_compiler_get(c, src, name, &fn, &err), TL_OK);
      if (pass == 0) fns[i] = fn;
      CHECK(fn && fn == fns[i]);
      int64_t out[3] = {0};
      void *bufs[1] = {out};
      if (fn) fn(bufs, 0, 3);
      CHECK_INT(out[2], 2 * i);
    }
  }
  if (c) {
    tl_compiler_stats s = tl_compiler_get_stats(c);
    CHECK_INT(s.compiled, 1);         /* one source, one .so */
    CHECK_INT(s.disk_hits, N - 1);    /* the other names come from the same entry */
    CHECK_INT(s.mem_hits, N);
  }
  tl_compiler_destroy(c);
  tl_test_rm_tree(dir);
}

TEST(rt_compile_error) {
  char *dir = tl_test_tmpdir();
  tl_compiler *c = new_cc(dir);
  tl_kernel_fn fn = NULL;
  tl_error err = {0};
  if (c) {
    CHECK_INT(tl_compiler_get(c, "void k_bad(void *const *b) { this is not C }", "k_bad", &fn, &err),
              TL_ERR_COMPILER);
    CHECK_CONTAINS(err.msg, "kernel compilation failed (cc exit 1)");
    CHECK_CONTAINS(err.msg, "error");
    CHECK(fn == NULL);
    CHECK_INT(tl_compiler_get_stats(c).compiled, 0);
    CHECK_INT(count_files(dir), 0); /* no source, .err or .so left behind */
  }
  tl_compiler_destroy(c);
  tl_test_rm_tree(dir);
}

TEST(rt_missing_compiler) {
  char *dir = tl_test_tmpdir();
  tl_error err = {0};
  CHECK(tl_compiler_create("/nonexistent/cc", NULL, dir, &err) == NULL);
  CHECK_INT(err.status, TL_ERR_COMPILER);
  CHECK_CONTAINS(err.msg, "C compiler '/nonexistent/cc' not found (set TL_CC)");
  char *saved = tl_test_env_save("TL_CC");
  setenv("TL_CC", "no-such-cc-for-tl", 1);
  tl_error_clear(&err);
  CHECK(tl_compiler_create(NULL, NULL, dir, &err) == NULL);
  CHECK_INT(err.status, TL_ERR_COMPILER);
  CHECK_CONTAINS(err.msg, "'no-such-cc-for-tl' not found");
  tl_test_env_restore("TL_CC", saved);
  tl_test_rm_tree(dir);
}

/* A cache directory open to others is ours to close: made 0700 and emptied (what is
 * in it may have been planted or swapped), counted, and used. More attacks on the
 * cache: tests/test_cache_attack.c. */
TEST(rt_cache_dir_not_private) {
  char *dir = tl_test_tmpdir();
  get_add_once(dir);
  CHECK_INT(count_files(dir), 2);
  chmod(dir, 0777);
  tl_compiler *c = new_cc(dir);
  struct stat st;
  CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
  CHECK_INT(count_files(dir), 0); /* the old entry went with the repair */
  if (c) CHECK_INT(tl_compiler_get_stats(c).dir_repairs, 1);
  if (c) CHECK_INT(tl_compiler_get_stats(c).fallback, 0);
  tl_compiler_destroy(c);
  tl_compiler_stats s = get_add_once(dir);
  CHECK_INT(s.compiled, 1);
  CHECK_INT(s.dir_repairs, 0);
  tl_test_rm_tree(dir);
}

/* A cache that cannot be used at all (a path through a file; a directory another
 * user owns; one we may not write): kernels still compile, in a private temporary
 * directory that goes away with the compiler. */
static void check_fallback(const char *dir) {
  tl_compiler *c = new_cc(dir);
  tl_kernel_fn fn = NULL;
  tl_error err = {0};
  if (!c) return;
  CHECK_INT(tl_compiler_get_stats(c).fallback, 1);
  const char *used = tl_compiler_cache_dir(c);
  CHECK_STR(used, dir); /* the configured one; the temporary one is private */
  CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn, &err), TL_OK);
  if (fn) CHECK_INT(run_add(fn, NULL, 5000), 0);
  CHECK_INT(tl_compiler_get_stats(c).compiled, 1);
  tl_compiler_destroy(c);
}

TEST(rt_cache_dir_unwritable) {
  char *dir = tl_test_tmpdir();
  char *file = tl_test_path(dir, "file");
  close(open(file, O_CREAT | O_WRONLY, 0600));
  char *bad = tl_test_path(file, "cache");
  check_fallback(bad); /* a path through a regular file: even root cannot */
  check_fallback(file); /* not a directory */
  if (geteuid() == 0) { /* only root can give the directory away */
    char *other = tl_test_path(dir, "other");
    mkdir(other, 0700);
    CHECK(chown(other, 12345, (gid_t)-1) == 0);
    check_fallback(other);
    CHECK_INT(count_files(other), 0);
    free(other);
  } else { /* permissions bind only non-root users */
    char *ro = tl_test_path(dir, "ro"), *sub = tl_test_path(dir, "ro/cache");
    mkdir(ro, 0500);
    check_fallback(sub);
    chmod(ro, 0700);
    free(ro), free(sub);
  }
  free(file), free(bad);
  tl_test_rm_tree(dir);
}

TEST(rt_cache_dir_from_env) {
  char *dir = tl_test_tmpdir();
  char *s1 = tl_test_env_save("TL_CACHE_DIR"), *s2 = tl_test_env_save("XDG_CACHE_HOME");
  setenv("TL_CACHE_DIR", dir, 1);
  tl_compiler *c = new_cc(NULL);
  if (c) CHECK_STR(tl_compiler_cache_dir(c), dir);
  tl_compiler_destroy(c);
  unsetenv("TL_CACHE_DIR");
  setenv("XDG_CACHE_HOME", dir, 1);
  c = new_cc(NULL);
  char *want = tl_test_path(dir, "tl");
  if (c) CHECK_STR(tl_compiler_cache_dir(c), want);
  tl_compiler_destroy(c);
  free(want);
  tl_test_env_restore("TL_CACHE_DIR", s1);
  tl_test_env_restore("XDG_CACHE_HOME", s2);
  tl_test_rm_tree(dir);
}

/* ---- libtcc ------------------------------------------------------------------ */
static const char TCC_SRC[] =
    "typedef long long int64_t;\n"
    "float expf(float);\n"
    "void k_t(void *const *b, int64_t s, int64_t e) {\n"
    "  float *o = (float *)b[0];\n"
    "  for (int64_t i = s; i < e; i++)\n"
    "    o[i] = expf(0.0f) + (float)(unsigned long long)i;\n"
    "}\n";

TEST(rt_tcc) {
  char *dir = tl_test_tmpdir();
  tl_error err = {0};
  tl_compiler *c = tl_compiler_create("tcc", NULL, dir, &err);
  if (!c) { /* without libtcc the reason must say so */
    CHECK_INT(err.status, TL_ERR_COMPILER);
    CHECK_CONTAINS(err.msg, "libtcc is not installed (apt-get install libtcc-dev");
    printf("  (libtcc not loadable: checked the error only)\n");
    tl_test_rm_tree(dir);
    return;
  }
  tl_kernel_fn fn = NULL, fn2 = NULL;
  CHECK_INT(tl_compiler_get_kind(c), TL_COMPILER_TCC);
  CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn, &err), TL_OK);
  tl_pool *pool = tl_pool_create(2);
  if (fn) CHECK_INT(run_add(fn, pool, 100000), 0);
  tl_pool_destroy(pool);
  CHECK_INT(tl_compiler_get(c, ADD_SRC, "k_add", &fn2, &err), TL_OK);
  CHECK(fn2 == fn);
  CHECK_INT(tl_compiler_get(c, TCC_SRC, "k_t", &fn, &err), TL_OK);
  float o[4] = {0};
  void *bufs[1] = {o};
  if (fn) fn(bufs, 0, 4);
  CHECK_NEAR(o[3], 4.0, 1e-6);
  tl_compiler_stats s = tl_compiler_get_stats(c);
  CHECK_INT(s.compiled, 2);
  CHECK_INT(s.mem_hits, 1);
  CHECK_INT(s.disk_hits, 0);
  CHECK_INT(tl_compiler_get(c, "void k_bad(void) { this is not C }", "k_bad", &fn, &err),
            TL_ERR_COMPILER);
  CHECK_CONTAINS(err.msg, "kernel compilation failed (tcc)");
  CHECK_CONTAINS(err.msg, "error");
  /* a header tcc cannot find (its own come with the package tcc): what to install */
  CHECK_INT(tl_compiler_get(c, "#include <tl_no_such_header.h>\nvoid k_h(void) {}\n", "k_h", &fn, &err),
            TL_ERR_COMPILER);
  CHECK_CONTAINS(err.msg, "include file 'tl_no_such_header.h' not found\n  tcc cannot find its header files: "
                          "install the tcc package (Debian: apt-get install tcc;");
  tl_compiler_destroy(c);
  tl_test_rm_tree(dir);
}

/* ---- thread pool ------------------------------------------------------------ */
/* bufs[0]: atomic_int per index; bufs[1]: a call log of (begin, end, on_caller) */
typedef struct {
  atomic_int ncalls;
  int64_t begin[64], end[64];
  pthread_t thread[64];
} call_log;

static void count_fn(void *const *bufs, int64_t b, int64_t e) {
  atomic_int *counts = bufs[0];
  call_log *log = bufs[1];
  int k = atomic_fetch_add(&log->ncalls, 1);
  if (k < 64) log->begin[k] = b, log->end[k] = e, log->thread[k] = pthread_self();
  for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed);
}

/* runs count_fn over total; returns the calls made, checks every index once */
static int run_counts(tl_pool *p, int64_t total, int64_t min_chunk, call_log *log) {
  atomic_int *counts = calloc((size_t)total + 1, sizeof *counts);
  memset(log, 0, sizeof *log);
  void *bufs[2] = {counts, log};
  tl_pool_run(p, count_fn, bufs, total, min_chunk);
  int64_t wrong = 0;
  for (int64_t i = 0; i < total; i++) wrong += atomic_load(&counts[i]) != 1;
  CHECK_INT(wrong, 0);
  free(counts);
  return atomic_load(&log->ncalls);
}

TEST(rt_pool_covers_range_once) {
  static call_log log;
  int sizes[] = {1, 2, 3, 7};
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    tl_pool *p = tl_pool_create(sizes[t]);
    CHECK(p != NULL);
    if (!p) continue;
    CHECK_INT(tl_pool_size(p), sizes[t]);
    int calls = run_counts(p, 1000003, 1000, &log);
    CHECK_INT(calls, sizes[t]);
    /* contiguous chunks of near-equal size that tile the range */
    int64_t covered = 0, lo = 1000003, hi = 0;
    for (int i = 0; i < calls; i++) {
      int64_t n = log.end[i] - log.begin[i];
      covered += n;
      lo = n < lo ? n : lo, hi = n > hi ? n : hi;
    }
    CHECK_INT(covered, 1000003);
    CHECK(hi - lo <= 1);
    tl_pool_destroy(p);
  }
}

TEST(rt_pool_small_jobs_on_caller) {
  static call_log log;
  tl_pool *p = tl_pool_create(3);
  CHECK(p != NULL);
  if (!p) return;
  CHECK_INT(run_counts(p, 10, 100, &log), 1); /* below 2*min_chunk: the caller alone */
  CHECK_INT(log.begin[0], 0);
  CHECK_INT(log.end[0], 10);
  CHECK(pthread_equal(log.thread[0], pthread_self()));
  CHECK_INT(run_counts(p, 0, 1, &log), 0);
  CHECK_INT(run_counts(p, 250, 100, &log), 2); /* only as many chunks as min_chunk allows */
  CHECK_INT(run_counts(p, 2, 0, &log), 2);
  CHECK_INT(run_counts(NULL, 50, 1, &log), 1); /* no pool: the caller */
  /* many back-to-back jobs exercise the hand-off between generations */
  int64_t sum = 0;
  for (int r = 0; r < 3000; r++) sum += run_counts(p, 3 + r % 5, 1, &log);
  CHECK(sum >= 3000 * 3);
  tl_pool_destroy(p);
}

/* A worker asleep when a job comes must not hold it up: whoever is awake claims the
 * next chunk. After a pause the worker sleeps on its condition variable, and the
 * caller's one-element chunk ends long before a futex wake-up, so the caller runs
 * both chunks in most of these jobs; with chunks tied to threads it ran none. */
TEST(rt_pool_caller_takes_chunks_of_sleeping_workers) {
  static call_log log;
  tl_pool *p = tl_pool_create(2);
  CHECK(p != NULL);
  if (!p) return;
  int both_on_caller = 0;
  for (int r = 0; r < 40; r++) {
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
    int calls = run_counts(p, 2, 1, &log);
    CHECK_INT(calls, 2);
    both_on_caller += calls == 2 && pthread_equal(log.thread[0], pthread_self()) &&
                      pthread_equal(log.thread[1], pthread_self());
  }
  CHECK(both_on_caller > 0);
  tl_pool_destroy(p);
}

TEST(rt_pool_threads_from_env) {
  char *saved = tl_test_env_save("TL_THREADS");
  setenv("TL_THREADS", "3", 1);
  tl_pool *p = tl_pool_create(0);
  CHECK(p && tl_pool_size(p) == 3);
  tl_pool_destroy(p);
  tl_test_env_restore("TL_THREADS", saved);
  p = tl_pool_create(0);
  CHECK(p && tl_pool_size(p) >= 1);
  tl_pool_destroy(p);
}

/* ---- tl_kernel_exec ------------------------------------------------------------ */
static atomic_int exec_calls;
static void touch_fn(void *const *bufs, int64_t b, int64_t e) {
  (void)bufs;
  atomic_fetch_add(&exec_calls, (int)(e - b));
}

TEST(rt_kernel_exec_validation) {
  float out[100], in[100];
  int32_t ints[100];
  tl_kernel k = {.name = "k3", .fn = touch_fn, .nargs = 3, .work = 100, .min_chunk = 1};
  for (int i = 0; i < 3; i++) k.arg_dtype[i] = TL_F32, k.arg_min_bytes[i] = 400;
  tl_kernel_arg args[3] = {{out, 400, TL_F32, NULL, 0}, {in, 400, TL_F32, NULL, 0}, {in, 400, TL_F32, NULL, 0}};
  tl_error err = {0};
  atomic_store(&exec_calls, 0);
  CHECK_INT(tl_kernel_exec(&k, NULL, 2, args, NULL, &err), TL_ERR_ARG);
  CHECK_CONTAINS(err.msg, "kernel k3: called with 2 arguments, expects 3");
  args[2] = (tl_kernel_arg){ints, 400, TL_I32, NULL, 0};
  CHECK_INT(tl_kernel_exec(&k, NULL, 3, args, NULL, &err), TL_ERR_ARG);
  CHECK_STR(err.msg, "kernel k3: argument 2 has dtype i32, expected f32");
  args[2] = (tl_kernel_arg){in, 400, TL_F32, NULL, 0};
  args[1].nbytes = 100;
  CHECK_INT(tl_kernel_exec(&k, NULL, 3, args, NULL, &err), TL_ERR_ARG);
  CHECK_STR(err.msg, "kernel k3: argument 1 has 100 bytes, needs 400");
  args[1].nbytes = 400;
  args[0].data = NULL;
  CHECK_INT(tl_kernel_exec(&k, NULL, 3, args, NULL, &err), TL_ERR_ARG);
  CHECK_CONTAINS(err.msg, "kernel k3: argument 0 has no data");
  CHECK_INT(tl_kernel_exec(&k, NULL, 3, NULL, NULL, &err), TL_ERR_ARG);
  CHECK_INT(atomic_load(&exec_calls), 0); /* nothing ran on a bad call */
  args[0].data = out;
  tl_pool *p = tl_pool_create(2);
  CHECK_INT(tl_kernel_exec(&k, p, 3, args, NULL, &err), TL_OK);
  CHECK_INT(tl_kernel_exec(&k, NULL, 3, args, NULL, &err), TL_OK);
  CHECK_INT(atomic_load(&exec_calls), 200);
  tl_pool_destroy(p);
}
