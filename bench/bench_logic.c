/* bench_logic.c — `make bench`: the knowledge base's transitive closure against
 * Soufflé (compiled, -j 2) and SWI-Prolog (tabling), on the inputs of
 * ../shared/datalog/gen.py:
 *   bench: datalog_NAME tl_ms=X peer=souffle peer_ms=Y ratio=Y/X
 *   bench: datalog_NAME tl_ms=X peer=swipl peer_ms=Y ratio=Y/X
 * for NAME in tc2000, chain1500, tree100k, each computing the full closure
 *   path(x, y) :- edge(x, y).   path(x, y) :- path(x, z), edge(z, y).
 * and checking its size. Timed: the closure, not the loading of facts. TL: the facts
 * are asserted, then tl_kb_count(path) evaluated (median of 5 fresh knowledge bases).
 * Soufflé: the compiled program's run minus the run of one that only loads edge and
 * prints its size (medians of 5 each). SWI-Prolog: the CPU time tc.pl measures around
 * the closure itself (median of 3). A peer that is missing is skipped with a note.
 * usage: bench_logic [shared dir (default ../shared)] [scratch dir (default build/bench/datalog)] */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "logic/logic.h"
#include "tl.h"

typedef struct {
  const char *name;
  int64_t pairs;
} input;

static const input inputs[] = {{"tc2000", 1406070}, {"chain1500", 1125750}, {"tree100k", 1024392}};

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* runs a shell command, its stdout into out; the wall time in ms, or -1 */
static double run_cmd(const char *cmd, char *out, size_t cap) {
  double t0 = now_ms();
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  int st = pclose(p);
  double ms = now_ms() - t0;
  return st == 0 ? ms : -1;
}

static int64_t *read_edges(const char *path, int64_t *n) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  int64_t cap = 1024, *e = malloc((size_t)cap * 2 * sizeof *e);
  long long a, b;
  *n = 0;
  while (e && fscanf(f, "%lld %lld", &a, &b) == 2) {
    if (*n == cap) {
      int64_t *g = realloc(e, (size_t)cap * 4 * sizeof *e);
      if (!g) break;
      e = g, cap *= 2;
    }
    e[2 * *n] = a, e[2 * *n + 1] = b;
    (*n)++;
  }
  fclose(f);
  return e;
}

/* the closure by the knowledge base: median ms, or -1 if the size is wrong */
static double bench_tl(tl_ctx *ctx, const input *in, const int64_t *edges, int64_t nedges, const char **repr) {
  double ms[5];
  for (int rep = 0; rep < 5; rep++) {
    tl_kb *kb = tl_kb_new(ctx);
    tl_kb_type ii[] = {TL_KB_INT, TL_KB_INT};
    tl_kb_relation(kb, "edge", 2, ii);
    tl_kb_relation(kb, "path", 2, ii);
    tl_kb_term xy[] = {tl_kb_var("x"), tl_kb_var("y")}, xz[] = {tl_kb_var("x"), tl_kb_var("z")},
               zy[] = {tl_kb_var("z"), tl_kb_var("y")};
    tl_kb_literal head = tl_kb_atom("path", 2, xy), base = tl_kb_atom("edge", 2, xy);
    tl_kb_literal step[] = {tl_kb_atom("path", 2, xz), tl_kb_atom("edge", 2, zy)};
    if (tl_kb_rule(kb, &head, 1, &base) || tl_kb_rule(kb, &head, 2, step) || tl_kb_facts(kb, "edge", nedges, edges)) {
      fprintf(stderr, "bench_logic: %s\n", tl_last_error(ctx));
      tl_kb_free(kb);
      return -1;
    }
    double t0 = now_ms();
    int64_t n = tl_kb_count(kb, "path");
    ms[rep] = now_ms() - t0;
    *repr = kb->rels[1].repr == TL_REPR_DENSE ? "dense" : "sparse";
    tl_kb_free(kb);
    if (n != in->pairs) {
      fprintf(stderr, "bench_logic: %s: path has %lld pairs, expected %lld (%s)\n", in->name, (long long)n,
                      (long long)in->pairs, n < 0 ? tl_last_error(ctx) : "wrong");
      return -1;
    }
  }
  return median(ms, 5);
}

/* A formatted string to free (paths and commands have no fixed bound). */
static char *str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str(const char *fmt, ...) {
  va_list ap;
  char *s = NULL;
  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  if (!s) {
    fprintf(stderr, "bench_logic: out of memory\n");
    exit(1);
  }
  return s;
}

/* a command run through the shell; its status */
static int shell(char *cmd) {
  int st = system(cmd);
  free(cmd);
  return st;
}

/* Soufflé: builds tc.dl and a load-only program once (into scratch) */
static double bench_souffle(const char *shared, const char *scratch, const char *dir, const input *in) {
  char out[4096];
  char *souffle = str("%s/tools/souffle/bin/souffle", shared), *tc = str("%s/souffle_tc", scratch),
       *load = str("%s/souffle_load", scratch), *dl = str("%s/load.dl", scratch);
  double ms = -1;
  if (!exists(souffle) || system("command -v g++ > /dev/null 2>&1") != 0) {
    fprintf(stderr, "bench_logic: no Soufflé (%s) or no g++: peer skipped\n", souffle);
    goto done;
  }
  if (!exists(tc) && shell(str("%s -o %s %s/datalog/tc.dl > /dev/null 2>&1", souffle, tc, shared)) != 0) {
    fprintf(stderr, "bench_logic: compiling tc.dl failed\n");
    goto done;
  }
  if (!exists(load)) {
    FILE *f = fopen(dl, "w");
    if (!f) goto done;
    fprintf(f, ".decl edge(x: number, y: number)\n.input edge\n.printsize edge\n");
    fclose(f);
    if (shell(str("%s -o %s %s > /dev/null 2>&1", souffle, load, dl)) != 0) {
      fprintf(stderr, "bench_logic: compiling load.dl failed\n");
      goto done;
    }
  }
  double full[5], only_load[5];
  char want[64];
  snprintf(want, sizeof want, "%lld", (long long)in->pairs);
  char *run_full = str("%s -F %s -D %s -j 2", tc, dir, scratch), *run_load = str("%s -F %s -D %s -j 2", load, dir, scratch);
  int rep = 0;
  for (; rep < 5; rep++) {
    full[rep] = run_cmd(run_full, out, sizeof out);
    if (full[rep] < 0 || !strstr(out, want)) {
      fprintf(stderr, "bench_logic: souffle on %s: %s\n", in->name, out);
      break;
    }
    only_load[rep] = run_cmd(run_load, out, sizeof out);
    if (only_load[rep] < 0) break;
  }
  free(run_full), free(run_load);
  if (rep == 5) {
    ms = median(full, 5) - median(only_load, 5);
    if (ms <= 0) ms = 0.01;
  }
done:
  free(souffle), free(tc), free(load), free(dl);
  return ms;
}

static double bench_swipl(const char *shared, const char *dir, const input *in) {
  if (system("command -v swipl > /dev/null 2>&1") != 0) {
    fprintf(stderr, "bench_logic: no swipl (apt-get install swi-prolog-core): peer skipped\n");
    return -1;
  }
  char out[4096], *cmd = str("cd %s/datalog && swipl -q -g main %s/edge.pl tc.pl 2>&1", shared, dir);
  double ms[3];
  int rep = 0;
  for (; rep < 3; rep++) {
    long long pairs = -1;
    double t = -1;
    const char *p = run_cmd(cmd, out, sizeof out) < 0 ? NULL : strstr(out, "pairs=");
    if (!p || sscanf(p, "pairs=%lld ms=%lf", &pairs, &t) != 2 || pairs != in->pairs) {
      fprintf(stderr, "bench_logic: swipl on %s: %s\n", in->name, out);
      break;
    }
    ms[rep] = t;
  }
  free(cmd);
  return rep == 3 ? median(ms, 3) : -1;
}

int main(int argc, char **argv) {
  const char *shared_arg = argc > 1 ? argv[1] : "../shared";
  const char *scratch_arg = argc > 2 ? argv[2] : "build/bench/datalog";
  char shared[PATH_MAX], scratch[PATH_MAX];
  if (!realpath(shared_arg, shared)) {
    fprintf(stderr, "bench_logic: no %s: the Datalog benchmarks are skipped\n", shared_arg);
    return 0;
  }
  if (shell(str("mkdir -p '%s'", scratch_arg)) != 0 || !realpath(scratch_arg, scratch))
    return fprintf(stderr, "bench_logic: no %s\n", scratch_arg), 1;
  tl_ctx *ctx = tl_init();
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
    const input *in = &inputs[i];
    char out[256], *dir = str("%s/%s", scratch, in->name), *facts = str("%s/edge.facts", dir);
    if (!exists(facts)) {
      char *cmd = str("%s %s/datalog/gen.py %s %s", peer_python(), shared, in->name, dir);
      double ok = run_cmd(cmd, out, sizeof out);
      if (ok < 0) fprintf(stderr, "bench_logic: %s failed\n", cmd);
      free(cmd);
      if (ok < 0) {
        free(dir), free(facts);
        continue;
      }
    }
    int64_t nedges = 0, *edges = read_edges(facts, &nedges);
    free(facts);
    if (!edges) {
      free(dir);
      continue;
    }
    const char *repr = "?";
    double tl = bench_tl(ctx, in, edges, nedges, &repr);
    free(edges);
    if (tl < 0) {
      free(dir);
      continue;
    }
    fprintf(stderr, "bench_logic: %s: %lld edges, closure %lld pairs, %s, %.1f ms\n", in->name, (long long)nedges,
            (long long)in->pairs, repr, tl);
    double so = bench_souffle(shared, scratch, dir, in);
    if (so >= 0)
      printf("bench: datalog_%s tl_ms=%.1f peer=souffle peer_ms=%.1f ratio=%.2f\n", in->name, tl, so, so / tl);
    double sw = bench_swipl(shared, dir, in);
    if (sw >= 0) printf("bench: datalog_%s tl_ms=%.1f peer=swipl peer_ms=%.1f ratio=%.2f\n", in->name, tl, sw, sw / tl);
    fflush(stdout);
    free(dir);
  }
  tl_shutdown(ctx);
  return 0;
}
