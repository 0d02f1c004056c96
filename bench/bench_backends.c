/* bench_backends.c — a device backend (opencl; TL_BENCH_DEVICE names another) beside
 * the cpu backend on the same workloads, in the same process and thread count: a
 * fused elementwise chain over 16M floats, a row softmax of 4096 x 4096, a 1024^3
 * matmul and a training step of an MLP
 * 784-256-256-10 (batch 128, cross-entropy, Adam). Each workload runs in rounds, cpu
 * then opencl (BENCH_ROUNDS), after warm-ups on both (kernels built, buffers cached);
 * a line reports the medians and the median of the rounds' ratios:
 *   bench: DEVICE_NAME dev_ms=X cpu_ms=Y ratio=Y/X threads=N rounds=R   (ratio > 1: the device faster)
 * On PoCL the "device" is this CPU: the ratio measures the path (PoCL's code, the
 * launches, the copies), not a GPU; a GPU against torch is bench_gpu.c's. Without an
 * OpenCL platform it says so and exits 0. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_mlp.h"
#include "bench_util.h"
#include "tl.h"

enum { WARMUP = 3, ITERS = 10 };

typedef struct {
  tl_ctx *ctx;
  tl_tensor *v[3], *m, *p, *q;
  bench_mlp mlp;
} side;

static _Noreturn void fail(tl_ctx *ctx, const char *what) {
  fprintf(stderr, "bench: backends: %s: %s\n", what, ctx ? tl_last_error(ctx) : tl_last_error(NULL));
  exit(1);
}

static void make_side(side *s, const char *backend) {
  s->ctx = tl_init();
  if (!s->ctx || tl_set_backend(s->ctx, backend)) fail(s->ctx, backend);
  tl_manual_seed(s->ctx, 0);
  int64_t n = 16 << 20;
  for (int i = 0; i < 3; i++) s->v[i] = tl_randn(s->ctx, TL_F32, 1, &n);
  s->m = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){4096, 4096});
  s->p = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){1024, 1024});
  s->q = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){1024, 1024});
  bench_mlp_make(s->ctx, &s->mlp);
  tl_tensor *all[] = {s->v[0], s->v[1], s->v[2], s->m, s->p, s->q, s->mlp.x};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (tl_realize(all[i])) fail(s->ctx, "inputs");
}

/* one run of workload k, its result read back (the device finished) */
static void run(side *s, int k) {
  TL_SCOPE(s->ctx, sc) {
    tl_tensor *r = NULL;
    if (k == 0) r = tl_mul_scalar(tl_relu(tl_add(tl_mul(s->v[0], s->v[1]), s->v[2])), 0.5);
    if (k == 1) r = tl_softmax(s->m, 1);
    if (k == 2) r = tl_matmul(s->p, s->q);
    if (k == 3 && !(r = bench_mlp_step(&s->mlp))) fail(s->ctx, "step");
    double one;
    /* one element back to the host: waits for the device without timing a big copy */
    if (!r || tl_realize(r) || tl_item(tl_reshape(tl_slice(tl_reshape(r, 1, (int64_t[]){tl_numel(r)}), 0, 0, 1, 1), 0, NULL), &one))
      fail(s->ctx, "run");
  }
}

static double time_it(side *s, int k) {
  double t[ITERS];
  for (int i = 0; i < ITERS; i++) {
    double t0 = now_ms();
    run(s, k);
    t[i] = now_ms() - t0;
  }
  return median_of(t, ITERS);
}

int main(int argc, char **argv) {
  static const char *const names[] = {"fused_chain_16M", "softmax_4096", "matmul_1024", "train_step_mlp"};
  enum { NWORK = 4 };
  const char *dev = getenv("TL_BENCH_DEVICE") ? getenv("TL_BENCH_DEVICE") : "opencl";
  if (tl_backend_usable(dev) != TL_OK) {
    printf("bench: %s not available: %s\n", dev, tl_last_error(NULL));
    return 0;
  }
  side cpu, cl;
  make_side(&cpu, "cpu");
  make_side(&cl, dev);
  int rounds = bench_rounds();
  for (int k = 0; k < NWORK; k++) {
    if (argc > 1 && strcmp(argv[1], names[k]) && strcmp(argv[1], "all")) continue;
    for (int i = 0; i < WARMUP; i++) {
      run(&cpu, k);
      run(&cl, k);
    }
    double c[BENCH_MAX_ROUNDS], g[BENCH_MAX_ROUNDS], r[BENCH_MAX_ROUNDS];
    for (int i = 0; i < rounds; i++) {
      c[i] = time_it(&cpu, k);
      g[i] = time_it(&cl, k);
      r[i] = c[i] / g[i];
    }
    printf("bench: %s_%s dev_ms=%.3f cpu_ms=%.3f ratio=%.2f threads=%d rounds=%d", dev, names[k], median_of(g, rounds),
           median_of(c, rounds), median_of(r, rounds), bench_threads(), rounds);
    if (k == 0) printf(" dev_GBps=%.0f", 4.0 * 4 * (16 << 20) / (median_of(g, rounds) * 1e6));
    if (k == 2) printf(" dev_TFLOPs=%.1f", 2.0 * 1024 * 1024 * 1024 / (median_of(g, rounds) * 1e9));
    printf("\n");
    fflush(stdout);
  }
  tl_optimizer_free(cpu.mlp.opt);
  tl_optimizer_free(cl.mlp.opt);
  tl_shutdown(cpu.ctx);
  tl_shutdown(cl.ctx);
  return 0;
}
