/* bench_mem.c — `make bench`: memory of a realize loop, TL against torch.
 * Workload mlp_forward_mem: x[256,1024] through 4 layers of relu(h @ W + b), W 1024x1024,
 * b[1024], relu after every layer (as in bench/peer_torch_mem.py), f32. Each iteration
 * builds the lazy graph from the same realized parameters, realizes the output and
 * releases it; 3 warm-ups (kernel compilation, buffer cache filling), then 100 measured.
 * Prints one line:
 *   bench: mlp_forward_mem peak_bytes=P naive_bytes=N mallocs_per_iter=M tl_rss_mb=A
 *          peer=torch peer_rss_mb=B rss_ratio=B/A tl_ms=X peer_ms=Y
 * Exits non-zero on a TL error, a wrong result or a buffer malloc in the steady state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "tl.h"

enum { BATCH = 256, WIDTH = 1024, LAYERS = 4, WARMUP = 3, ITERS = 100 };


static _Noreturn void fail(tl_ctx *ctx, const char *what) {
  if (ctx && tl_last_status(ctx) != TL_OK)
    fprintf(stderr, "bench: mlp_forward_mem: %s: %s\n", what, tl_last_error(ctx));
  else
    fprintf(stderr, "bench: mlp_forward_mem: %s\n", what);
  exit(1);
}

/* torch's peak RSS and median ms from bench/peer_torch_mem.py; 0 if it cannot run
 * (no torch on that python, for one). /usr/bin/python3 first: it has torch here. */
static int run_peer(double *rss_mb, double *ms) {
  char cmd[256], line[256];
  snprintf(cmd, sizeof cmd, "%s bench/peer_torch_mem.py 2>/dev/null",
           peer_python());
  FILE *p = popen(cmd, "r");
  int got = 0;
  if (!p) return 0;
  while (fgets(line, sizeof line, p))
    got |= sscanf(line, "mlp_forward_mem %lf %lf", rss_mb, ms) == 2;
  return pclose(p) == 0 && got;
}

/* a realized N(0,1) * scale tensor; the unscaled randn node is never materialized */
static tl_tensor *param(tl_ctx *ctx, int ndim, const int64_t *shape, double scale) {
  tl_tensor *r = tl_randn(ctx, TL_F32, ndim, shape), *t = tl_mul_scalar(r, scale);
  tl_release(r);
  if (!t || tl_realize(t) != TL_OK) fail(ctx, "creating parameters");
  return t;
}

/* The lazy forward pass; only the returned handle is kept (the graph keeps the nodes
 * alive). A NULL anywhere propagates to the result. Weights are stored [in, out] and
 * used as they are (h @ W), in both. Each matmul is a kernel, its bias+relu fuses into
 * the next one's loads: intermediates for the planner to place. */
static tl_tensor *forward(tl_tensor *x, tl_tensor *const *wt, tl_tensor *const *b) {
  tl_tensor *h = x;
  for (int l = 0; l < LAYERS; l++) {
    tl_tensor *mm = tl_matmul(h, wt[l]), *z = tl_add(mm, b[l]);
    tl_tensor *r = tl_relu(z);
    if (h != x) tl_release(h);
    tl_release(mm);
    tl_release(z);
    h = r;
  }
  return h;
}

/* Checks y: every value finite, sum nonzero, and three rows equal (to 1e-3 relative)
 * to a plain C forward pass in double over the same parameters read back from TL.
 * Returns NULL if fine, else what went wrong. */
static const char *check(tl_tensor *y, tl_tensor *x, tl_tensor *const *wt, tl_tensor *const *b) {
  static const int rows[] = {0, 97, BATCH - 1};
  static double h[WIDTH], z[WIDTH];
  const size_t wn = (size_t)WIDTH * WIDTH, an = (size_t)BATCH * WIDTH;
  float *hw = malloc(LAYERS * wn * sizeof *hw), *hb = malloc(LAYERS * WIDTH * sizeof *hb);
  float *hx = malloc(an * sizeof *hx), *hy = malloc(an * sizeof *hy);
  const char *bad = hw && hb && hx && hy ? NULL : "out of memory";
  for (int l = 0; !bad && l < LAYERS; l++)
    if (tl_to_host(wt[l], hw + l * wn, wn * sizeof *hw) ||
        tl_to_host(b[l], hb + l * WIDTH, WIDTH * sizeof *hb))
      bad = "reading parameters back";
  if (!bad && (tl_to_host(x, hx, an * sizeof *hx) || tl_to_host(y, hy, an * sizeof *hy)))
    bad = "reading the output back";
  double sum = 0;
  for (size_t i = 0; !bad && i < an; i++) sum += hy[i];
  if (!bad && (!isfinite(sum) || sum == 0)) bad = "output sum not finite or zero";
  for (size_t r = 0; !bad && r < sizeof rows / sizeof rows[0]; r++) {
    for (int j = 0; j < WIDTH; j++) h[j] = hx[(size_t)rows[r] * WIDTH + j];
    for (int l = 0; l < LAYERS; l++) {
      for (int j = 0; j < WIDTH; j++) { /* output j: column j of the [in, out] weights */
        z[j] = hb[l * WIDTH + j];
        for (int k = 0; k < WIDTH; k++) z[j] += h[k] * hw[l * wn + (size_t)k * WIDTH + j];
      }
      for (int j = 0; j < WIDTH; j++) h[j] = z[j] > 0 ? z[j] : 0;
    }
    for (int j = 0; j < WIDTH; j++) /* written so that a NaN fails too */
      if (!(fabs(hy[(size_t)rows[r] * WIDTH + j] - h[j]) <= 1e-3 * (1 + fabs(h[j]))))
        bad = "output differs from the C reference";
  }
  free(hw);
  free(hb);
  free(hx);
  free(hy);
  return bad;
}

int main(void) {
  /* The peer runs first, while this process is still small: on some kernels a child
   * started by vfork+exec (popen) inherits the parent's RSS high-water mark in its
   * ru_maxrss, which would then report TL's peak as torch's. */
  double peer_rss = NAN, peer_ms = NAN;
  int have_peer = run_peer(&peer_rss, &peer_ms);

  tl_ctx *ctx = tl_init();
  if (!ctx) fail(NULL, "init");
  tl_manual_seed(ctx, 0);
  /* weights [in, out] (see forward), scaled by 1/32 = 1/sqrt(WIDTH): activations stay O(1) */
  const int64_t xs[2] = {BATCH, WIDTH}, ws[2] = {WIDTH, WIDTH}, bs[1] = {WIDTH};
  tl_tensor *x = param(ctx, 2, xs, 1.0), *wt[LAYERS], *b[LAYERS];
  for (int l = 0; l < LAYERS; l++) {
    wt[l] = param(ctx, 2, ws, 1.0 / 32);
    b[l] = param(ctx, 1, bs, 1.0 / 32);
  }

  tl_stats s0 = {0};
  double t[ITERS];
  for (int i = -WARMUP; i < ITERS; i++) {
    if (i == 0) { /* steady state from here: peak and malloc counts start now */
      tl_mem_reset_peak(ctx);
      s0 = tl_get_stats(ctx);
    }
    double t0 = now_ms();
    tl_tensor *y = forward(x, wt, b);
    if (!y || tl_realize(y) != TL_OK) fail(ctx, "realize");
    tl_release(y);
    if (i >= 0) t[i] = now_ms() - t0;
  }
  /* read before the check below, whose host copies would add to the RSS */
  tl_stats s1 = tl_get_stats(ctx);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double tl_rss = (double)ru.ru_maxrss / 1024; /* KB on Linux */
  qsort(t, ITERS, sizeof t[0], by_value);

  /* naive_bytes: what one malloc per buffer, with no planner, would hold at once:
   *   parameters  4 * (W 1024*1024 + b 1024) f32       = 16 MiB + 16 KiB
   * + input x     256*1024 f32                          =  1 MiB
   * + every intermediate the schedule writes (each kernel output but the last, at
   *   its 64-byte-aligned size): plan_naive_bytes of the last realize
   * + output      256*1024 f32                          =  1 MiB
   * (intermediates are per kernel, i.e. after fusion: an unfused op-by-op executor
   * would hold more). peak_bytes counts the same kinds of buffers (all live bytes),
   * with the intermediates packed in the planner's arena. */
  const uint64_t f32 = sizeof(float), io = (uint64_t)BATCH * WIDTH * f32;
  uint64_t naive = (uint64_t)LAYERS * (WIDTH * WIDTH + WIDTH) * f32 + io + s1.plan_naive_bytes + io;
  double mallocs = (double)(s1.buffer_mallocs - s0.buffer_mallocs) / ITERS;

  printf("bench: mlp_forward_mem peak_bytes=%llu naive_bytes=%llu mallocs_per_iter=%g tl_rss_mb=%.1f ",
         (unsigned long long)s1.peak_bytes, (unsigned long long)naive, mallocs, tl_rss);
  if (have_peer)
    printf("peer=torch peer_rss_mb=%.1f rss_ratio=%.2f ", peer_rss, peer_rss / tl_rss);
  else
    printf("peer=none peer_rss_mb=nan rss_ratio=nan ");
  printf("tl_ms=%.3f peer_ms=%.3f\n", t[ITERS / 2], have_peer ? peer_ms : NAN);
  fflush(stdout);

  tl_tensor *y = forward(x, wt, b);
  if (!y || tl_realize(y) != TL_OK) fail(ctx, "realize");
  const char *bad = check(y, x, wt, b);
  if (bad) fail(ctx, bad);
  /* the buffer cache should serve every arena and output after the warm-up */
  int rc = mallocs != 0;
  if (rc) fprintf(stderr, "bench: mlp_forward_mem: %g buffer mallocs per iteration\n", mallocs);
  tl_release(y);
  tl_shutdown(ctx);
  return rc;
}
