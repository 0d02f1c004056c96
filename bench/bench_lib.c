/* bench_lib.c — `make bench`: library workloads beyond the engine's, each against its peer
 * run in the same invocation (after TL: the two never share the cores). Prints
 *   bench: NAME tl_ms=X peer=P peer_ms=Y ratio=Y/X threads=N   (ratio > 1: TL is faster)
 * conv2d_32x64x56x56: x [32, 64, 56, 56] and w [64, 64, 3, 3], N(0,1) f32 leaves
 *   requiring grad, g of x's shape N(0,1) fixed; a step is tl_conv2d (padding 1, stride 1,
 *   no bias), loss = sum(output * g) (realized; the output's gradient is then g, not ones a
 *   sum's backward simplifies away), tl_backward, the gradients of x and w realized. 1
 *   warm-up, then the median of 5 steps, in rounds alternating with torch's
 *   (BENCH_ROUNDS: bench_util.h). Peer: torch (bench/peer_torch_conv.py) with torch.set_num_threads
 *   at TL's thread count; without torch the line says it was skipped.
 * load_safetensors_256MB: a 256 MiB f32 tensor saved with tl_save_safetensors, its bytes
 *   saved as .npy by numpy (bench/peer_numpy_load.py), both in a temporary directory
 *   removed at the end; tl_load_safetensors_one (realized) against np.load, each file read
 *   once before timing (a warm page cache), then the median of 7 loads.
 * argv[1], if given: run only the workload of that name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "tl.h"

static _Noreturn void fail(tl_ctx *ctx, const char *name, const char *what) {
  fprintf(stderr, "bench: %s: %s%s%s\n", name, what, ctx && tl_last_status(ctx) ? ": " : "",
          ctx && tl_last_status(ctx) ? tl_last_error(ctx) : "");
  exit(1);
}

/* TL's thread count: the pool's rule (TL_THREADS, else the online cores) */
static int tl_threads(void) {
  const char *env = getenv("TL_THREADS");
  int n = env ? atoi(env) : 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : cores > 0 ? (int)cores : 1;
}

/* runs a peer command and returns the number on its line starting with name, or -1 */
static double run_peer(const char *cmd, const char *name) {
  char line[256];
  double ms = -1;
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  while (fgets(line, sizeof line, p)) {
    char got[64];
    double v;
    if (sscanf(line, "%63s %lf", got, &v) == 2 && !strcmp(got, name)) ms = v;
  }
  return pclose(p) == 0 ? ms : -1;
}

static void report(const char *name, double tl_ms, const char *peer, double peer_ms) {
  if (peer_ms > 0)
    printf("bench: %s tl_ms=%.3f peer=%s peer_ms=%.3f ratio=%.2f threads=%d\n", name, tl_ms, peer, peer_ms,
           peer_ms / tl_ms, tl_threads());
  else
    printf("bench: %s tl_ms=%.3f peer=none peer_ms=nan ratio=nan threads=%d\n", name, tl_ms, tl_threads());
  fflush(stdout);
}

/* ---- conv2d forward and backward ------------------------------------------------------ */
enum { CONV_WARMUP = 1, CONV_RUNS = 5 };

/* the median of CONV_RUNS steps after the warm-up (warm: the first round only) */
static double time_conv(tl_ctx *ctx, const char *name, tl_tensor *x, tl_tensor *w, tl_tensor *g, int warm) {
  double t[CONV_RUNS];
  for (int i = warm ? -CONV_WARMUP : 0; i < CONV_RUNS; i++) {
    double t0 = now_ms();
    TL_SCOPE(ctx, s) {
      if (tl_zero_grad(x) || tl_zero_grad(w)) fail(ctx, name, "zero grad");
      tl_tensor *loss = tl_sum(tl_mul(tl_conv2d(x, w, NULL, 1, 1, 1, 1), g), 0, NULL, 0);
      if (!loss || tl_realize(loss) || tl_backward(loss, NULL)) fail(ctx, name, "forward");
      tl_tensor *gx = tl_grad(x), *gw = tl_grad(w);
      if (!gx || !gw || tl_realize(gx) || tl_realize(gw)) fail(ctx, name, "backward");
    }
    if (i >= 0) t[i] = now_ms() - t0;
  }
  return median_of(t, CONV_RUNS);
}

/* rounds of TL's steps then torch's (bench_util.h: bench_rounds); the ratio is the
 * median of the rounds' */
static void bench_conv(tl_ctx *ctx) {
  const char *name = "conv2d_32x64x56x56";
  tl_tensor *x = tl_randn(ctx, TL_F32, 4, (int64_t[]){32, 64, 56, 56});
  tl_tensor *w = tl_randn(ctx, TL_F32, 4, (int64_t[]){64, 64, 3, 3});
  tl_tensor *g = tl_randn(ctx, TL_F32, 4, (int64_t[]){32, 64, 56, 56});
  if (!x || !w || !g || tl_realize(x) || tl_realize(w) || tl_realize(g) || tl_set_requires_grad(x, 1) ||
      tl_set_requires_grad(w, 1))
    fail(ctx, name, "inputs");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -c 'import torch' >/dev/null 2>&1", peer_python());
  int torch = system(cmd) == 0, rounds = torch ? bench_rounds() : 1, n = tl_threads(), np = 0;
  snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=%d %s bench/peer_torch_conv.py %d %d 2>/dev/null", n, peer_python(), n,
           CONV_RUNS);
  double tl_r[BENCH_MAX_ROUNDS], peer_r[BENCH_MAX_ROUNDS], ratio_r[BENCH_MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) {
    tl_r[r] = time_conv(ctx, name, x, w, g, r == 0);
    double peer = torch ? run_peer(cmd, name) : -1;
    if (peer > 0) peer_r[np] = peer, ratio_r[np++] = peer / tl_r[r];
  }
  tl_release(x);
  tl_release(w);
  tl_release(g);
  double tl_ms = median_of(tl_r, rounds);
  if (!torch) {
    printf("bench: %s tl_ms=%.3f peer=torch skipped (torch not installed)\n", name, tl_ms);
  } else if (np == rounds) {
    printf("bench: %s tl_ms=%.3f peer=torch peer_ms=%.3f ratio=%.2f threads=%d rounds=%d", name, tl_ms,
           median_of(peer_r, np), median_of(ratio_r, np), n, rounds);
    print_ratio_range(ratio_r, np);
    printf("\n");
  } else {
    printf("bench: %s tl_ms=%.3f peer=none peer_ms=nan ratio=nan threads=%d rounds=%d\n", name, tl_ms, n, rounds);
  }
  fflush(stdout);
}

/* ---- loading a 256 MiB safetensors file ------------------------------------------------ */
enum { LOAD_RUNS = 7 };

static void bench_load(tl_ctx *ctx) {
  const char *name = "load_safetensors_256MB";
  const char *tmp = getenv("TMPDIR");
  char dir[512], st[600], npy[600];
  snprintf(dir, sizeof dir, "%s/tl_bench_lib_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) fail(NULL, name, "mkdtemp");
  snprintf(st, sizeof st, "%s/t.safetensors", dir);
  snprintf(npy, sizeof npy, "%s/t.npy", dir);
  double t[LOAD_RUNS], tl_ms = -1;
  TL_SCOPE(ctx, s) {
    tl_tensor *a = tl_randn(ctx, TL_F32, 2, (int64_t[]){8192, 8192}); /* 256 MiB */
    const char *names[] = {"t"};
    if (!a || tl_save_safetensors(ctx, st, 1, names, &a)) fail(ctx, name, "save");
    tl_release(a);
    for (int i = -1; i < LOAD_RUNS; i++) { /* the first read warms the page cache */
      double t0 = now_ms();
      tl_tensor *b = tl_load_safetensors_one(ctx, st, "t");
      if (!b || tl_realize(b)) fail(ctx, name, "load");
      if (i >= 0) t[i] = now_ms() - t0;
      tl_release(b);
    }
  }
  qsort(t, LOAD_RUNS, sizeof t[0], by_value);
  tl_ms = t[LOAD_RUNS / 2];
  char cmd[1600];
  snprintf(cmd, sizeof cmd, "%s bench/peer_numpy_load.py '%s' '%s' %d 2>/dev/null", peer_python(), st, npy, LOAD_RUNS);
  double peer = run_peer(cmd, name);
  unlink(st);
  unlink(npy);
  rmdir(dir);
  report(name, tl_ms, "numpy", peer);
}

int main(int argc, char **argv) {
  bench_clean_blas_env();
  const char *only = argc > 1 ? argv[1] : NULL;
  tl_ctx *ctx = tl_init();
  if (!ctx) fail(NULL, "bench_lib", "init");
  tl_manual_seed(ctx, 0);
  if (!only || !strcmp(only, "conv2d_32x64x56x56")) bench_conv(ctx);
  if (!only || !strcmp(only, "load_safetensors_256MB")) bench_load(ctx);
  tl_shutdown(ctx);
  return 0;
}
