/* bench_lang.c — `make bench`: the TL language end to end, through the `tl` driver.
 *   bench: scalar_loop tl_ms=X peer=c_O2 peer_ms=Y ratio=Y/X
 *       `tl run bench/scalar_loop.tl` (sum of i * i % 7 for i below 10^8, i64), timed as a
 *       whole process after a warm-up run (so the program's compile is cached), against
 *       the same loop in C (bench/scalar_loop.c, cc -O2, bound read from argv).
 *   bench: scalar_loop_exe tl_ms=X peer=c_O2 peer_ms=Y ratio=Y/X
 *       the same program made by `tl build` (no compile, no cache lookup, no load).
 *   bench: vec_loop, vec_loop_exe: 10 rounds of 10^7 Vec<i64> pushes and indexed reads
 *       (bench/vec_loop.tl) against a realloc-doubling C array (bench/vec_loop.c).
 *   bench: match_loop, match_loop_exe: a match of literal, |, range, guard and binding
 *       arms in a 10^8-turn loop (bench/match_loop.tl) against a C switch.
 *   bench: cold_start uncached_ms=X cached_ms=Y ...
 *       time to first output of `tl run bench/hundred_lines.tl`, with a fresh empty
 *       TL_CACHE_DIR and then again with the cache it left.
 *   bench: cold_transformer cold_ms=X warm_ms=Y kernels=N
 *       `tl run bench/cold_transformer.tl` (a 2-layer transformer, d_model 64, trained
 *       120 steps with Adam: N distinct kernels) with a fresh empty TL_CACHE_DIR, then
 *       again with the cache it left; medians of 3.
 * The kernels a run leaves to build are built after it exits, by a detached process
 * (TL_COMPILE_AT_EXIT): this program adopts it (a subreaper) and waits for it before
 * the next run, so no run is timed beside another's compiler. Every other figure is
 * the best of 3. The child's stdout is a pseudo-terminal, so the
 * program's output is line-buffered as on a terminal and the first line shows when
 * it is printed (a pipe would hold it until exit).
 * usage: bench_lang [path/to/tl [scratch dir [WORD]]]   (run from the repository root;
 * WORD: only the benchmarks whose names contain it) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define REPS 3

typedef struct {
  double first_ms; /* fork to the first byte of output */
  double total_ms; /* fork to exit */
  char out[4096];  /* the output, '\r' dropped */
  int status;
} run_result;

/* runs argv with stdout (and stderr) on a pseudo-terminal; 0 when it exits with 0 */
static int run(char *const argv[], run_result *r) {
  memset(r, 0, sizeof *r);
  r->first_ms = -1;
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) || unlockpt(master)) {
    perror("bench_lang: pty");
    exit(1);
  }
  const char *slave_name = ptsname(master);
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_lang: fork");
    exit(1);
  }
  if (pid == 0) {
    int slave = open(slave_name, O_RDWR);
    if (slave < 0) _exit(126);
    close(master);
    dup2(slave, 1);
    dup2(slave, 2);
    if (slave > 2) close(slave);
    execv(argv[0], argv);
    _exit(127);
  }
  size_t len = 0;
  char buf[4096];
  for (;;) {
    ssize_t k = read(master, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break; /* EIO: every slave descriptor is closed */
    if (r->first_ms < 0) r->first_ms = now_ms() - t0;
    for (ssize_t i = 0; i < k; i++)
      if (buf[i] != '\r' && len + 1 < sizeof r->out) r->out[len++] = buf[i];
  }
  r->out[len] = 0;
  waitpid(pid, &r->status, 0);
  r->total_ms = now_ms() - t0;
  close(master);
  if (r->first_ms < 0) r->first_ms = r->total_ms;
  return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0 ? 0 : 1;
}

static void run_checked(char *const argv[], run_result *r, const char *expect) {
  if (run(argv, r) || (expect && strcmp(r->out, expect))) {
    fprintf(stderr, "bench_lang: %s failed (status %d); output:\n%s\n", argv[0], r->status, r->out);
    exit(1);
  }
}

/* waits for the processes the last run left behind (the detached kernel builder) */
static void reap_orphans(void) {
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) continue;
}

static void shell(const char *cmd) {
  if (system(cmd)) {
    fprintf(stderr, "bench_lang: `%s` failed\n", cmd);
    exit(1);
  }
}

/* a fresh empty directory; TL_CACHE_DIR points at it */
static void fresh_cache(char *dir, size_t n) {
  snprintf(dir, n, "/tmp/tl-bench-lang-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("bench_lang: mkdtemp");
    exit(1);
  }
  setenv("TL_CACHE_DIR", dir, 1);
}

static void remove_dir(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  shell(cmd);
}

static double best_total(char *const argv[], const char *expect) {
  double best = 1e300;
  run_result r;
  for (int i = 0; i < REPS; i++) {
    run_checked(argv, &r, expect);
    if (r.total_ms < best) best = r.total_ms;
  }
  return best;
}

/* a TL loop and its C peer: bench/NAME.tl and bench/NAME.c, the C given n on its
 * command line; both print expect */
typedef struct {
  const char *name, *n, *expect;
} loop_bench;

static const loop_bench LOOPS[] = {
    {"scalar_loop", "100000000", "199999997\n"},
    {"vec_loop", "10000000", "101428570\n"},
    {"match_loop", "100000000", "410000000\n"},
};

static void time_loop(char *tl, const char *scratch, const loop_bench *b) {
  char cache[64], c_exe[1024], tl_exe[1024], src[256], cmd[4096];
  fresh_cache(cache, sizeof cache);
  snprintf(c_exe, sizeof c_exe, "%s/%s_c", scratch, b->name);
  snprintf(tl_exe, sizeof tl_exe, "%s/%s_tl", scratch, b->name);
  snprintf(src, sizeof src, "bench/%s.tl", b->name);
  snprintf(cmd, sizeof cmd, "cc -O2 -o '%s' bench/%s.c", c_exe, b->name);
  shell(cmd);
  snprintf(cmd, sizeof cmd, "'%s' build %s -o '%s'", tl, src, tl_exe);
  shell(cmd);

  char *tl_run[] = {tl, "run", src, NULL};
  char *tl_built[] = {tl_exe, NULL};
  char *c_run[] = {c_exe, (char *)b->n, NULL};
  run_result warm;
  run_checked(tl_run, &warm, b->expect); /* compiles and caches the program */
  reap_orphans();
  double tl_ms = best_total(tl_run, b->expect);
  double exe_ms = best_total(tl_built, b->expect);
  double c_ms = best_total(c_run, b->expect);
  printf("bench: %s tl_ms=%.1f peer=c_O2 peer_ms=%.1f ratio=%.2f\n", b->name, tl_ms, c_ms, c_ms / tl_ms);
  printf("bench: %s_exe tl_ms=%.1f peer=c_O2 peer_ms=%.1f ratio=%.2f\n", b->name, exe_ms, c_ms, c_ms / exe_ms);
  fflush(stdout);
  remove_dir(cache);
}

static void cold_start(char *tl) {
  char *argv[] = {tl, "run", "bench/hundred_lines.tl", NULL};
  double cold = 1e300, warm = 1e300, cold_total = 1e300, warm_total = 1e300;
  for (int i = 0; i < REPS; i++) {
    char cache[64];
    run_result r;
    fresh_cache(cache, sizeof cache);
    run_checked(argv, &r, NULL);
    reap_orphans();
    if (strncmp(r.out, "hundred_lines: start\n", 21)) {
      fprintf(stderr, "bench_lang: unexpected output from hundred_lines.tl:\n%s\n", r.out);
      exit(1);
    }
    if (r.first_ms < cold) cold = r.first_ms;
    if (r.total_ms < cold_total) cold_total = r.total_ms;
    run_checked(argv, &r, NULL);
    if (r.first_ms < warm) warm = r.first_ms;
    if (r.total_ms < warm_total) warm_total = r.total_ms;
    remove_dir(cache);
  }
  printf("bench: cold_start uncached_ms=%.1f cached_ms=%.1f uncached_total_ms=%.1f cached_total_ms=%.1f\n", cold,
         warm, cold_total, warm_total);
  fflush(stdout);
}

/* the kernels in a cache directory: its .so entries, less the program's own */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    n += len > 3 && !strcmp(e->d_name + len - 3, ".so");
  }
  if (d) closedir(d);
  return n > 0 ? n - 1 : 0;
}

static void cold_transformer(char *tl) {
  char *argv[] = {tl, "run", "bench/cold_transformer.tl", NULL};
  double cold[REPS], warm[REPS];
  int kernels = 0;
  for (int i = 0; i < REPS; i++) {
    char cache[64];
    run_result r;
    fresh_cache(cache, sizeof cache);
    run_checked(argv, &r, NULL);
    cold[i] = r.total_ms;
    if (!strstr(r.out, "loss fell below a third: true")) {
      fprintf(stderr, "bench_lang: cold_transformer did not learn:\n%s\n", r.out);
      exit(1);
    }
    reap_orphans(); /* the optimized kernels the run left to build */
    run_checked(argv, &r, NULL);
    warm[i] = r.total_ms;
    kernels = count_entries(cache);
    remove_dir(cache);
  }
  qsort(cold, REPS, sizeof cold[0], by_value);
  qsort(warm, REPS, sizeof warm[0], by_value);
  printf("bench: cold_transformer cold_ms=%.1f warm_ms=%.1f kernels=%d\n", cold[REPS / 2], warm[REPS / 2], kernels);
  fflush(stdout);
}

int main(int argc, char **argv) {
  char *tl = argc > 1 ? argv[1] : "build/tl";
  const char *scratch = argc > 2 ? argv[2] : "build/bench";
  if (access(tl, X_OK)) {
    fprintf(stderr, "bench_lang: no %s (run make first)\n", tl);
    return 1;
  }
  for (size_t i = 0; i < sizeof LOOPS / sizeof LOOPS[0]; i++)
    if (argc <= 3 || strstr(LOOPS[i].name, argv[3])) time_loop(tl, scratch, &LOOPS[i]);
  prctl(PR_SET_CHILD_SUBREAPER, 1); /* see reap_orphans */
  if (argc <= 3 || strstr("cold_start", argv[3])) cold_start(tl);
  if (argc <= 3 || strstr("cold_transformer", argv[3])) cold_transformer(tl);
  return 0;
}
