/* bench_util.h — what every benchmark program needs: a clock, an order for qsort, the python
 * that has the peers (TL_PEER_PYTHON when it names one, as `make bench` does with its
 * venv, which sees the system's packages; else Debian's /usr/bin/python3, which carries
 * numpy and torch where a python first on PATH may not), and the peers pip installs
 * (jax, tinygrad). */
#ifndef TL_BENCH_UTIL_H
#define TL_BENCH_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static inline double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], by_value);
  return n ? v[n / 2] : -1;
}

/* How many calls a line times, one call taking last_ms: 7, or more where 7 would last
 * under BENCH_MIN_MS together (a sub-millisecond product: 7 calls were 2 ms, at the
 * mercy of one interruption), at most BENCH_MAX_RUNS; odd, for the median. The peers
 * follow the same rule (bench/peer_common.py: timed_runs). */
enum { BENCH_MIN_MS = 50, BENCH_MAX_RUNS = 501 };
static inline int bench_timed_runs(double last_ms) {
  double want = BENCH_MIN_MS / (last_ms > 1e-3 ? last_ms : 1e-3);
  int n = want > BENCH_MAX_RUNS ? BENCH_MAX_RUNS : want < 7 ? 7 : (int)want;
  return n | 1;
}

/* Rounds of TL then its peer, alternating (BENCH_ROUNDS, default 3, at most 25): on a
 * shared machine whose speed drifts by 2x over minutes, each round's ratio compares
 * times taken a few seconds apart (a peer that serves, below: a few milliseconds), and
 * the median of the ratios is reported beside the medians of each side's times. */
enum { BENCH_MAX_ROUNDS = 25 };
/* " ratio_range=LO-HI": the rounds' lowest and highest ratios, what bounds the median */
static inline void print_ratio_range(const double *r, int n) {
  double lo = n ? r[0] : 0, hi = lo;
  for (int i = 1; i < n; i++) lo = r[i] < lo ? r[i] : lo, hi = r[i] > hi ? r[i] : hi;
  if (n > 1) printf(" ratio_range=%.2f-%.2f", lo, hi);
}
static inline int bench_rounds(void) {
  const char *env = getenv("BENCH_ROUNDS");
  int n = env ? atoi(env) : 3;
  return n < 1 ? 1 : n > BENCH_MAX_ROUNDS ? BENCH_MAX_ROUNDS : n;
}

static inline const char *peer_python(void) {
  const char *env = getenv("TL_PEER_PYTHON");
  if (env && access(env, X_OK) == 0) return env;
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* A peer that stays up between rounds (its script's `serve` mode): started once, asked
 * for each round's time over a pipe, so a round's two sides run milliseconds apart and
 * the peer's start-up (seconds of imports) falls outside every round. */
typedef struct {
  pid_t pid;
  FILE *to, *from;
} bench_peer;

/* starts argv (argv[0] looked up on PATH) with OMP_NUM_THREADS=threads; 0, or -1 */
static inline int bench_peer_start(bench_peer *p, char *const argv[], int threads) {
  int in[2], out[2];
  memset(p, 0, sizeof *p);
  if (pipe(in)) return -1;
  if (pipe(out)) {
    close(in[0]), close(in[1]);
    return -1;
  }
  char n[16];
  snprintf(n, sizeof n, "%d", threads);
  setenv("OMP_NUM_THREADS", n, 1); /* here: TL's pool threads run, the child only execs */
  int null = open("/dev/null", O_WRONLY);
  fflush(NULL);
  p->pid = fork();
  if (p->pid == 0) { /* async-signal-safe calls only until the exec */
    dup2(in[0], 0), dup2(out[1], 1);
    if (null >= 0) dup2(null, 2);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execvp(argv[0], argv);
    _exit(127);
  }
  if (null >= 0) close(null);
  close(in[0]), close(out[1]);
  if (p->pid < 0 || !(p->to = fdopen(in[1], "w")) || !(p->from = fdopen(out[0], "r"))) {
    if (p->pid > 0) kill(p->pid, SIGKILL), waitpid(p->pid, NULL, 0);
    if (p->to) fclose(p->to);
    else close(in[1]);
    close(out[0]);
    memset(p, 0, sizeof *p);
    return -1;
  }
  return 0;
}

/* the value the peer answers to `request` on its line `name VALUE`, or -1 (it failed
 * or is gone) */
static inline double bench_peer_ask(bench_peer *p, const char *request, const char *name) {
  char line[256], got[64];
  double v;
  if (!p->to || fprintf(p->to, "%s\n", request) < 0 || fflush(p->to)) return -1;
  while (fgets(line, sizeof line, p->from))
    if (sscanf(line, "%63s %lf", got, &v) == 2 && !strcmp(got, name)) return v;
  return -1;
}

/* ends the peer (end of its input) and waits for it; its exit status, or -1 */
static inline int bench_peer_stop(bench_peer *p) {
  int status = -1;
  if (p->to) fclose(p->to);
  if (p->from) fclose(p->from);
  if (p->pid > 0 && waitpid(p->pid, &status, 0) == p->pid) status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  memset(p, 0, sizeof *p);
  return status;
}

/* the thread count TL runs with, which every peer gets: the pool's rule (TL_THREADS, else
 * the online cores) */
static inline int bench_threads(void) {
  const char *env = getenv("TL_THREADS");
  int n = env ? atoi(env) : 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : cores > 0 ? (int)cores : 1;
}

/* For this process and the peers it starts only: a core type or cache size forced on
 * OpenBLAS (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE) would time another machine's kernels. */
static inline void bench_clean_blas_env(void) {
  static const char *const vars[] = {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"};
  for (int i = 0; i < 2; i++)
    if (getenv(vars[i])) {
      fprintf(stderr, "bench: unsetting %s=%s for the peers\n", vars[i], getenv(vars[i]));
      unsetenv(vars[i]);
    }
}

/* the peers pip installs (`make bench-peers`), each timed by bench/peer_NAME.py */
static const char *const bench_extra_peers[] = {"jax", "tinygrad"};
enum { BENCH_EXTRA_PEERS = sizeof bench_extra_peers / sizeof bench_extra_peers[0] };

/* their python: TL_PEER_PYTHON (the Makefile names the venv `make bench-peers` made), else
 * that venv in build/, else the system's, which then reports them missing */
static inline const char *extra_peer_python(void) {
  const char *env = getenv("TL_PEER_PYTHON");
  if (!(env && access(env, X_OK) == 0) && access("build/peers/bin/python", X_OK) == 0) return "build/peers/bin/python";
  return peer_python(); /* TL_PEER_PYTHON first, as for every peer */
}

/* An extra peer's median ms for workload `name` on `threads` cores, or -1 with *why
 * saying why not: the peer is not installed, or its script failed. */
static inline double extra_peer_ms(const char *peer, const char *name, int threads, const char **why) {
  char cmd[512], line[256];
  double ms = -1;
  int missing = 0;
  snprintf(cmd, sizeof cmd, "%s bench/peer_%s.py %d %s 2>/dev/null", extra_peer_python(), peer, threads, name);
  FILE *p = popen(cmd, "r");
  if (p) {
    while (fgets(line, sizeof line, p)) {
      char got[64];
      double v;
      if (sscanf(line, "%63s %lf", got, &v) == 2 && !strcmp(got, name)) ms = v;
      if (!strncmp(line, "missing ", 8)) missing = 1;
    }
    pclose(p);
  }
  *why = missing ? "not_installed" : ms > 0 ? "" : "failed";
  return ms > 0 ? ms : -1;
}

#endif
