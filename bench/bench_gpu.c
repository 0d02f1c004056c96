/* bench_gpu.c — `make bench-gpu`: TL on the cuda backend against torch eager on the
 * same GPU, in the same invocation (bench/peer_torch_gpu.py runs first, then TL): a
 * fused elementwise chain over 16M floats (with its bandwidth, against the HBM limit),
 * a row softmax of 4096 x 4096, f32 matmuls of 1024^3 and 4096^3 (no TF32 on either
 * side), a 32x64x56x56 3x3 conv2d, an Adam training step of the MLP 784-256-256-10
 * (batch 128), and the cost of one small realize against torch's cost of one op.
 * Each time is the median of ITERS runs after warm-ups, each run ending with one
 * element read back (the GPU has finished). A line a workload:
 *   bench: gpu_NAME tl_ms=X torch_ms=Y vs_torch=Y/X bar=B met=yes|no [extras]
 * Without a usable GPU it says why and exits 0. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_mlp.h"
#include "bench_util.h"
#include "tl.h"

enum { WARMUP = 3, ITERS = 20, SMALL_CALLS = 2000 };

typedef struct {
  tl_ctx *ctx;
  tl_tensor *v[3], *m, *p, *q, *p4, *q4, *cx, *cw, *s[3];
  bench_mlp mlp;
} work;

static _Noreturn void fail(tl_ctx *ctx, const char *what) {
  fprintf(stderr, "bench: gpu: %s: %s\n", what, tl_last_error(ctx));
  exit(1);
}

static void make_work(work *s) {
  if (!(s->ctx = tl_init()) || tl_set_backend(s->ctx, "cuda")) fail(s->ctx, "cuda");
  tl_manual_seed(s->ctx, 0);
  int64_t n = 16 << 20, small = 64;
  for (int i = 0; i < 3; i++) s->v[i] = tl_randn(s->ctx, TL_F32, 1, &n);
  for (int i = 0; i < 3; i++) s->s[i] = tl_randn(s->ctx, TL_F32, 1, &small);
  s->m = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){4096, 4096});
  s->p = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){1024, 1024});
  s->q = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){1024, 1024});
  s->p4 = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){4096, 4096});
  s->q4 = tl_randn(s->ctx, TL_F32, 2, (int64_t[]){4096, 4096});
  s->cx = tl_randn(s->ctx, TL_F32, 4, (int64_t[]){32, 64, 56, 56});
  s->cw = tl_randn(s->ctx, TL_F32, 4, (int64_t[]){64, 64, 3, 3});
  bench_mlp_make(s->ctx, &s->mlp);
  tl_tensor *all[] = {s->v[0], s->v[1], s->v[2], s->s[0], s->s[1], s->s[2], s->m, s->p, s->q, s->p4, s->q4, s->cx, s->cw, s->mlp.x};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (tl_realize(all[i])) fail(s->ctx, "inputs");
}

/* one element of r back to the host: waits for the GPU without timing a big copy */
static void wait_for(work *s, tl_tensor *r) {
  double one;
  if (!r || tl_realize(r) || tl_item(tl_reshape(tl_slice(tl_reshape(r, 1, (int64_t[]){tl_numel(r)}), 0, 0, 1, 1), 0, NULL), &one))
    fail(s->ctx, "run");
}

static void mlp_step(work *s) {
  tl_tensor *loss = bench_mlp_step(&s->mlp);
  if (!loss) fail(s->ctx, "step");
  wait_for(s, loss);
}

/* SMALL_CALLS realizes of relu(a*b+c) on 64 elements, then one read */
static void small_batch(work *s) {
  for (int i = 0; i < SMALL_CALLS; i++) TL_SCOPE(s->ctx, sc) {
      tl_tensor *r = tl_relu(tl_add(tl_mul(s->s[0], s->s[1]), s->s[2]));
      if (!r || tl_realize(r)) fail(s->ctx, "small");
      if (i == SMALL_CALLS - 1) wait_for(s, r);
    }
}

enum { FUSED, SOFTMAX, MM1024, MM4096, CONV, SMALL, MLP, NWORK };
static const char *const names[NWORK] = {"fused_chain_16M", "softmax_4096", "matmul_1024", "matmul_4096",
                                         "conv2d_32x64x56x56", "realize_small", "train_step_mlp"};
/* the bars (vs torch eager); matmul_1024 has none */
static const double bars[NWORK] = {1.5, 1.0, 0, 0.7, 0.5, 1.0, 1.5};

static void run(work *s, int k) {
  if (k == MLP) return mlp_step(s);
  if (k == SMALL) return small_batch(s);
  TL_SCOPE(s->ctx, sc) {
    tl_tensor *r = k == FUSED     ? tl_mul_scalar(tl_relu(tl_add(tl_mul(s->v[0], s->v[1]), s->v[2])), 0.5)
                   : k == SOFTMAX ? tl_softmax(s->m, 1)
                   : k == MM1024  ? tl_matmul(s->p, s->q)
                   : k == MM4096  ? tl_matmul(s->p4, s->q4)
                                  : tl_conv2d(s->cx, s->cw, NULL, 1, 1, 1, 1);
    wait_for(s, r);
  }
}

static double time_it(work *s, int k) {
  double t[ITERS];
  for (int i = 0; i < WARMUP; i++) run(s, k);
  int iters = k == SMALL ? 7 : ITERS;
  for (int i = 0; i < iters; i++) {
    double t0 = now_ms();
    run(s, k);
    t[i] = now_ms() - t0;
  }
  return median_of(t, iters);
}

/* torch's figures (bench/peer_torch_gpu.py), before TL's */
typedef struct {
  double ms[NWORK], copy_gbps;
  char device[128];
} peer;

static bool run_peer(peer *p, const char *only) {
  char cmd[320], line[256], name[128], word[128];
  snprintf(cmd, sizeof cmd, "%s bench/peer_torch_gpu.py %s", peer_python(), only ? only : "");
  for (int k = 0; k < NWORK; k++) p->ms[k] = -1;
  p->copy_gbps = -1;
  snprintf(p->device, sizeof p->device, "unknown");
  FILE *f = popen(cmd, "r");
  double v;
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "device %127s", word) == 1) snprintf(p->device, sizeof p->device, "%s", word);
    if (sscanf(line, "%127s %lf", name, &v) != 2) continue;
    if (!strcmp(name, "copy_GBps")) p->copy_gbps = v;
    for (int k = 0; k < NWORK; k++)
      if (!strcmp(name, names[k])) p->ms[k] = v;
  }
  return f && pclose(f) == 0;
}

/* the HBM's bandwidth by the GPU's datasheet (GB/s); else the measured copy's */
static double hbm_gbps(const peer *p, const char **source) {
  static const struct {
    const char *name;
    double gbps;
  } sheet[] = {{"H200", 4800}, {"H100_80GB_HBM3", 3350}, {"H100_SXM", 3350}, {"H100_PCIe", 2000}, {"H100_NVL", 3900},
               {"A100-SXM4-80GB", 2039}, {"A100-SXM4-40GB", 1555}, {"A100_80GB_PCIe", 1935}};
  for (size_t i = 0; i < sizeof sheet / sizeof sheet[0]; i++)
    if (strstr(p->device, sheet[i].name)) return *source = "datasheet", sheet[i].gbps;
  return *source = "measured_copy", p->copy_gbps;
}

int main(int argc, char **argv) {
  if (tl_backend_usable("cuda") != TL_OK) {
    printf("bench: gpu: cuda not available: %s\n", tl_last_error(NULL));
    return 0;
  }
  peer torch;
  const char *only = argc > 1 && strspn(argv[1], "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(argv[1]) ? argv[1] : NULL;
  if (!run_peer(&torch, only)) printf("bench: gpu: torch with CUDA not found (%s): no peer figures\n", peer_python());
  const char *source;
  double hbm = hbm_gbps(&torch, &source);
  printf("bench: gpu device=%s hbm_GBps=%.0f (%s) torch_copy_GBps=%.0f\n", torch.device, hbm, source, torch.copy_gbps);
  work s;
  make_work(&s);
  double small_ms = -1;
  for (int k = 0; k < NWORK; k++) {
    if (argc > 1 && strcmp(argv[1], names[k])) continue;
    tl_stats before = tl_get_stats(s.ctx);
    double ms = time_it(&s, k), t = torch.ms[k];
    tl_stats after = tl_get_stats(s.ctx);
    if (k == SMALL) ms /= SMALL_CALLS; /* a realize's cost, against an op's */
    double vs = t > 0 ? t / ms : -1;
    printf("bench: gpu_%s tl_ms=%.4f torch_ms=%.4f vs_torch=%.2f", names[k], ms, t, vs);
    if (bars[k] > 0) printf(" bar=%.1f met=%s", bars[k], vs >= bars[k] ? "yes" : "no");
    if (k == FUSED) {
      double gbps = 4.0 * 4 * (16 << 20) / (ms * 1e6);
      printf(" GBps=%.0f of_hbm=%.2f (bar 0.7)", gbps, gbps / hbm);
    }
    if (k == MM1024 || k == MM4096) {
      double n = k == MM1024 ? 1024 : 4096;
      printf(" TFLOPs=%.1f torch_TFLOPs=%.1f", 2 * n * n * n / (ms * 1e9), 2 * n * n * n / (t * 1e9));
    }
    if (k == CONV) printf(" TFLOPs=%.1f", 2.0 * 32 * 64 * 56 * 56 * 64 * 9 / (ms * 1e9));
    if (k == SMALL) small_ms = ms;
    if (k == MLP) { /* launches a step, and what they would cost at a small realize's price */
      double kernels = (double)(after.kernels_run - before.kernels_run) / (WARMUP + ITERS);
      printf(" kernels_a_step=%.0f", kernels);
      if (small_ms > 0) printf(" launch_share=%.2f", kernels * small_ms / ms);
    }
    printf("\n");
    fflush(stdout);
  }
  if (argc < 2) /* TL has no f16 dtype yet: the tensor-core GEMM is not built */
    printf("bench: gpu_matmul_4096_f16 not_built (TL has no f16 dtype)\n");
  tl_optimizer_free(s.mlp.opt);
  tl_shutdown(s.ctx);
  return 0;
}
