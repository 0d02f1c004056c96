/* test_main.c — runs every registered test and ends with "N passed, N failed". A test
 * passes when it records no failure. Arguments filter by name: WORD keeps the tests
 * containing it (any of them), -WORD drops those containing it; -jN runs N at once
 * (default: TL_TEST_JOBS, else one per core). Each test runs in a forked child, so a
 * crash or a hang fails that test alone; -j1 runs them in this process, in order. */
#include "test.h"
#include "tl.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char *name, *file;
  tl_test_fn fn;
  tl_test_arg_fn arg_fn;
  void *arg; /* with arg_fn, name and arg are the runner's to free at the end */
} test_entry;

static test_entry *tests;
static int ntests, cap_tests;
static int current_failures;
static char bindir[4096];

static void add_entry(test_entry e) {
  if (ntests == cap_tests) {
    int cap = cap_tests ? 2 * cap_tests : 512;
    test_entry *t = realloc(tests, (size_t)cap * sizeof *t);
    if (!t) {
      fprintf(stderr, "tests: out of memory registering %s\n", e.name);
      return;
    }
    tests = t;
    cap_tests = cap;
  }
  tests[ntests++] = e;
}

void tl_test_register(const char *name, tl_test_fn fn, const char *file) {
  add_entry((test_entry){name, file, fn, NULL, NULL});
}

void tl_test_register_arg(const char *name, tl_test_arg_fn fn, void *arg, const char *file) {
  add_entry((test_entry){name, file, NULL, fn, arg});
}

void tl_test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stdout, "  %s:%d: ", file, line);
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  current_failures++;
}

void tl_test_values(const char *file, int line, tl_tensor *t, const double *want, int64_t n, double tol) {
  if (!t || tl_numel(t) != n) {
    tl_test_fail(file, line, "tensor is NULL or has %lld elements, expected %lld", (long long)(t ? tl_numel(t) : -1),
                 (long long)n);
    return;
  }
  double *got = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  tl_tensor *d = tl_cast(t, TL_F64);
  tl_status st = got ? tl_to_host(d, got, sizeof(double) * (size_t)n) : TL_ERR_NOMEM;
  tl_release(d);
  if (st != TL_OK)
    tl_test_fail(file, line, "no values: %s", tl_last_error(tl_context(t)));
  else
    for (int64_t i = 0; i < n; i++)
      if (!(fabs(got[i] - want[i]) <= tol)) {
        tl_test_fail(file, line, "element %lld: got %.12g, expected %.12g", (long long)i, got[i], want[i]);
        break;
      }
  free(got);
}

const char *tl_test_bindir(void) { return bindir; }

char *tl_test_tmpdir(void) {
  char tmpl[] = "/tmp/tl-test-XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)ftw;
  return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int tl_test_rm_tree(char *dir) {
  if (!dir) return 0;
  chmod(dir, 0700);
  int rc = nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
  return rc ? -1 : 0;
}

char *tl_test_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static int contexts_checked;

int tl_test_leak_check(tl_ctx *ctx, char *why, size_t whylen) {
  size_t leaks = tl_mem_report(ctx, NULL);
  if (leaks) {
    snprintf(why, whylen, "%zu leaked object(s)", leaks);
    tl_mem_report(ctx, stdout);
    return 1;
  }
  tl_scope *root = tl_scope_root(ctx);
  if (root && tl_scope_end(root) != TL_OK) {
    snprintf(why, whylen, "ending the root scope failed: %s", tl_last_error(ctx));
    return 1;
  }
  tl_stats s = tl_get_stats(ctx);
  if (s.live_tensors || s.live_nodes || s.live_buffers || s.live_bytes || s.retains != s.releases) {
    snprintf(why, whylen,
             "after the root scope: %llu tensors, %llu nodes, %llu buffers, %llu bytes live; %llu retains, %llu releases",
             (unsigned long long)s.live_tensors, (unsigned long long)s.live_nodes,
             (unsigned long long)s.live_buffers, (unsigned long long)s.live_bytes,
             (unsigned long long)s.retains, (unsigned long long)s.releases);
    return 1;
  }
  contexts_checked++;
  return 0;
}

void tl_test_shutdown(tl_ctx *ctx, const char *file, int line) {
  char why[256];
  if (tl_test_leak_check(ctx, why, sizeof why)) tl_test_fail(file, line, "leak check: %s", why);
  tl_shutdown(ctx);
}

char *tl_test_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&s, &n);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, k, m);
  fclose(m);
  fclose(f);
  return s;
}

int tl_test_run_python(const char *script, const char *arg, char **out) {
  char path[] = "/tmp/tl-test-py-XXXXXX";
  int fd = mkstemp(path);
  *out = NULL;
  if (fd < 0) return -1;
  unlink(path);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    char *argv[] = {"python3", "-I", "-c", (char *)script, (char *)arg, NULL};
    execv(PYTHON, argv);
    _exit(127);
  }
  int ws = 0;
  if (pid > 0) waitpid(pid, &ws, 0);
  size_t n = (size_t)lseek(fd, 0, SEEK_END);
  char *s = calloc(n + 1, 1);
  if (s && pread(fd, s, n, 0) != (ssize_t)n) s[0] = 0;
  close(fd);
  *out = s;
  if (pid < 0) return -1;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static bool selected(const char *name, int argc, char **argv) {
  bool any_include = false, included = false;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "-j", 2)) continue;
    if (argv[i][0] == '-') {
      if (strstr(name, argv[i] + 1)) return false;
    } else {
      any_include = true;
      included |= strstr(name, argv[i]) != NULL;
    }
  }
  return !any_include || included;
}

static int by_file_then_name(const void *a, const void *b) {
  const test_entry *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : strcmp(x->name, y->name);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_entry(const test_entry *t) {
  current_failures = 0;
  if (t->fn) t->fn();
  else t->arg_fn(t->arg);
}

static void report(const test_entry *t, bool ok, double seconds) {
  if (ok) printf("ok   %s", t->name);
  else printf("FAIL %s (%s)", t->name, t->file);
  if (seconds >= 1.0) printf(" [%.1f s]", seconds);
  putchar('\n');
  fflush(stdout);
}

/* what a child leaves for the parent, in memory shared across fork */
typedef struct {
  int failures, contexts;
  int finished; /* the child got to the end of its test */
} test_result;

typedef struct {
  pid_t pid;
  int index;
  FILE *output; /* the child's stdout and stderr */
  double started;
} running_test;

static running_test *running;

static void copy_output(FILE *f) {
  char buf[8192];
  size_t k;
  rewind(f);
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, k, stdout);
  fclose(f);
}

static int run_forked(int *order, int count, int jobs, int timeout_s, int *passed, int *failed) {
  test_result *results = mmap(NULL, (size_t)count * sizeof *results, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (results == MAP_FAILED) return -1;
  memset(results, 0, (size_t)count * sizeof *results);
  /* file-scope, so a child's leak check sees it reachable */
  running = calloc((size_t)jobs, sizeof *running);
  running_test *run = running;
  if (!run) return -1;
  int next = 0, active = 0;
  while (next < count || active > 0) {
    while (active < jobs && next < count) {
      FILE *out = tmpfile();
      if (!out) return -1;
      fflush(stdout);
      fflush(stderr);
      pid_t pid = fork();
      if (pid < 0) return -1;
      int i = order[next];
      if (pid == 0) {
        dup2(fileno(out), 1);
        dup2(fileno(out), 2);
        alarm((unsigned)timeout_s); /* a hang fails its test instead of the suite */
        contexts_checked = 0;       /* this test's own, not the parent's so far */
        run_entry(&tests[i]);
        fflush(stdout);
        results[next].failures = current_failures;
        results[next].contexts = contexts_checked;
        results[next].finished = 1;
        exit(0); /* exit, not _exit: sanitizers' and valgrind's leak checks run per test */
      }
      int slot = 0;
      while (run[slot].pid) slot++;
      run[slot] = (running_test){pid, next, out, now_seconds()};
      next++;
      active++;
    }
    int status;
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    int slot = 0;
    while (slot < jobs && run[slot].pid != pid) slot++;
    if (slot == jobs) continue;
    running_test r = run[slot];
    run[slot].pid = 0;
    active--;
    test_result *res = &results[r.index];
    const test_entry *t = &tests[order[r.index]];
    copy_output(r.output);
    bool ok = res->finished && res->failures == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status))
      printf("  %s: killed by signal %d (%s)%s\n", t->name, WTERMSIG(status), strsignal(WTERMSIG(status)),
             WTERMSIG(status) == SIGALRM ? ": over the time limit (TL_TEST_TIMEOUT)" : "");
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      printf("  %s: exit status %d at the end of the test (a sanitizer or leak report above?)\n", t->name,
             WEXITSTATUS(status));
    contexts_checked += res->contexts;
    report(t, ok, now_seconds() - r.started);
    if (ok) (*passed)++;
    else (*failed)++;
  }
  free(running);
  running = NULL;
  munmap(results, (size_t)count * sizeof *results);
  return 0;
}

static int job_count(int argc, char **argv) {
  int jobs = 0;
  const char *env = getenv("TL_TEST_JOBS");
  if (env) jobs = atoi(env);
  for (int i = 1; i < argc; i++)
    if (!strncmp(argv[i], "-j", 2)) jobs = atoi(argv[i] + 2);
  if (jobs <= 0) jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
  return jobs > 0 ? jobs : 1;
}

int main(int argc, char **argv) {
  /* background builds of optimized kernels finish before a context ends (not in a
   * detached process that would outlive the test, writing into its temporary
   * directories); the tests of tiered compilation choose their own */
  setenv("TL_COMPILE_AT_EXIT", "wait", 0);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    snprintf(bindir, sizeof bindir, "%s", dirname(self));
  }
  qsort(tests, (size_t)ntests, sizeof tests[0], by_file_then_name);
  int *order = malloc(((size_t)ntests + 1) * sizeof *order), count = 0;
  if (!order) return 2;
  for (int i = 0; i < ntests; i++)
    if (selected(tests[i].name, argc, argv)) order[count++] = i;
  int jobs = job_count(argc, argv), passed = 0, failed = 0;
  const char *timeout_env = getenv("TL_TEST_TIMEOUT");
  int timeout_s = timeout_env && atoi(timeout_env) > 0 ? atoi(timeout_env) : 1200;
  double start = now_seconds();
  if (jobs == 1 || count <= 1) {
    for (int k = 0; k < count; k++) {
      fflush(stdout);
      double t0 = now_seconds();
      run_entry(&tests[order[k]]);
      fflush(stdout);
      report(&tests[order[k]], current_failures == 0, now_seconds() - t0);
      if (current_failures) failed++;
      else passed++;
    }
  } else if (run_forked(order, count, jobs, timeout_s, &passed, &failed) != 0) {
    printf("tests: could not run tests in child processes: %s\n", strerror(errno));
    return 2;
  }
  free(order);
  for (int i = 0; i < ntests; i++)
    if (tests[i].arg_fn) {
      free((char *)tests[i].name);
      free(tests[i].arg);
    }
  free(tests);
  printf("leak check: %d contexts ended with nothing live\n", contexts_checked);
  printf("%d tests in %.1f s with %d job%s\n", count, now_seconds() - start, jobs, jobs == 1 ? "" : "s");
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

char *tl_test_env_save(const char *name) {
  const char *v = getenv(name);
  return v ? strdup(v) : NULL;
}

void tl_test_env_restore(const char *name, char *saved) {
  if (saved) setenv(name, saved, 1);
  else unsetenv(name);
  free(saved);
}
