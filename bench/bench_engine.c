/* bench_engine.c — `make bench`: TL against numpy, run in the same invocation.
 * Prints per workload: bench: NAME tl_ms=X peer=numpy peer_ms=Y ratio=Y/X
 * (ratio > 1: TL is faster). Times are medians of 7 runs after 2 warm-ups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "tl.h"

typedef tl_tensor *(*workload_fn)(tl_tensor **in);


static tl_tensor *fused_chain(tl_tensor **in) {
  tl_tensor *ab = tl_mul(in[0], in[1]), *abc = tl_add(ab, in[2]), *r = tl_relu(abc);
  tl_tensor *y = tl_mul_scalar(r, 0.5);
  tl_release(ab);
  tl_release(abc);
  tl_release(r);
  return y;
}
static tl_tensor *rowsum(tl_tensor **in) { return tl_sum(in[0], 1, (int[]){1}, 0); }
static tl_tensor *softmax(tl_tensor **in) { return tl_softmax(in[0], 1); }
static tl_tensor *matmul(tl_tensor **in) { return tl_matmul(in[0], in[1]); }

static double time_tl(tl_ctx *ctx, workload_fn f, tl_tensor **in) {
  double t[7];
  for (int i = -2; i < 7; i++) {
    double t0 = now_ms();
    tl_tensor *y = f(in);
    if (!y || tl_realize(y) != TL_OK) {
      fprintf(stderr, "bench: %s\n", tl_last_error(ctx));
      exit(1);
    }
    tl_release(y);
    if (i >= 0) t[i] = now_ms() - t0;
  }
  qsort(t, 7, sizeof t[0], by_value);
  return t[3];
}

/* numpy's median for one workload, or -1 if numpy is not there */
static double time_numpy(const char *name) {
  char cmd[512], line[256];
  snprintf(cmd, sizeof cmd, "%s bench/peer_numpy.py %s 2>/dev/null", peer_python(), name);
  FILE *p = popen(cmd, "r");
  double ms = -1;
  if (!p) return -1;
  while (fgets(line, sizeof line, p)) {
    char got[64];
    double v;
    if (sscanf(line, "%63s %lf", got, &v) == 2 && !strcmp(got, name)) ms = v;
  }
  pclose(p);
  return ms;
}

static void report(const char *name, double tl_ms) {
  double peer = time_numpy(name);
  if (peer > 0)
    printf("bench: %s tl_ms=%.3f peer=numpy peer_ms=%.3f ratio=%.2f\n", name, tl_ms, peer, peer / tl_ms);
  else
    printf("bench: %s tl_ms=%.3f peer=none peer_ms=nan ratio=nan\n", name, tl_ms);
  fflush(stdout);
}

int main(int argc, char **argv) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 0);
  const char *only = argc > 1 ? argv[1] : NULL;
  int64_t n = 16 << 20, sq[2] = {4096, 4096}, mm[2] = {1024, 1024};
  tl_tensor *v[3], *m, *p, *q;
  for (int i = 0; i < 3; i++) {
    v[i] = tl_randn(ctx, TL_F32, 1, &n);
    tl_realize(v[i]);
  }
  m = tl_randn(ctx, TL_F32, 2, sq);
  p = tl_randn(ctx, TL_F32, 2, mm);
  q = tl_randn(ctx, TL_F32, 2, mm);
  tl_realize(m);
  tl_realize(p);
  tl_realize(q);
  struct {
    const char *name;
    workload_fn f;
    tl_tensor *in[3];
  } w[] = {
      {"fused_chain_16M", fused_chain, {v[0], v[1], v[2]}},
      {"rowsum_4096", rowsum, {m}},
      {"softmax_4096", softmax, {m}},
      {"matmul_1024", matmul, {p, q}},
  };
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (!only || !strcmp(only, w[i].name)) report(w[i].name, time_tl(ctx, w[i].f, w[i].in));
  tl_shutdown(ctx);
  return 0;
}
