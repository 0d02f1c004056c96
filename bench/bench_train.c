/* bench_train.c — `make bench`: one training step, TL against torch.
 * Workload train_step_mlp: an MLP 784-256-256-10 (relu after the hidden layers), f32,
 * batch 128 of N(0,1) inputs with random labels, cross-entropy loss; a step is forward,
 * loss read back, zero grad, backward and an Adam update (lr 1e-3), parameters realized.
 * 3 warm-ups, then the median of 20 steps, in rounds alternating with torch's (bench_util.h:
 * BENCH_ROUNDS): tl_ms and peer_ms are the medians over rounds, ratio the median of the
 * rounds' ratios. bench/peer_torch_train.py runs the same loop, started once and asked
 * for each round's 20 steps right after TL's (a noisy machine's phases last seconds),
 * and so do the peers pip installs (bench_util.h: jax, tinygrad), all on TL's thread count.
 * Prints one line per peer:
 *   bench: train_step_mlp tl_ms=X peer=torch peer_ms=Y ratio=Y/X threads=N   (ratio > 1: TL is faster)
 * (peer_ms=nan and a note= where an extra peer is not there); BENCH_DEBUG=1: each
 * round's two times on stderr
 * Exits non-zero on a TL error or a loss that is not finite or does not go down. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "tl.h"

enum { BATCH = 128, IN = 784, HID = 256, OUT = 10, LAYERS = 3, WARMUP = 3, ITERS = 20 };


static _Noreturn void fail(tl_ctx *ctx, const char *what) {
  fprintf(stderr, "bench: train_step_mlp: %s%s%s\n", what, ctx && tl_last_status(ctx) ? ": " : "",
          ctx && tl_last_status(ctx) ? tl_last_error(ctx) : "");
  exit(1);
}

/* torch, serving rounds (bench/peer_torch_train.py serve): -1 if it cannot start */
static int start_peer(bench_peer *p) {
  char threads[16];
  snprintf(threads, sizeof threads, "%d", bench_threads());
  char *argv[] = {(char *)peer_python(), "bench/peer_torch_train.py", threads, "serve", NULL};
  if (bench_peer_start(p, argv, bench_threads())) return -1;
  if (bench_peer_ask(p, "0", "ready") < 0) { /* torch imported, the model made and warmed */
    bench_peer_stop(p);
    return -1;
  }
  return 0;
}

typedef struct {
  tl_tensor *w[LAYERS], *b[LAYERS];
} mlp;

static mlp make_mlp(tl_ctx *ctx) {
  static const int64_t dims[LAYERS + 1] = {IN, HID, HID, OUT};
  mlp m;
  for (int l = 0; l < LAYERS; l++) {
    m.w[l] = tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){dims[l], dims[l + 1]}, dims[l]);
    m.b[l] = tl_zeros(ctx, TL_F32, 1, (int64_t[]){dims[l + 1]});
    if (!m.w[l] || tl_set_requires_grad(m.b[l], 1) != TL_OK) fail(ctx, "parameters");
  }
  return m;
}

static tl_tensor *forward(const mlp *m, tl_tensor *x) {
  tl_tensor *h = x;
  for (int l = 0; l < LAYERS; l++) {
    h = tl_add(tl_matmul(h, m->w[l]), m->b[l]);
    if (l < LAYERS - 1) h = tl_relu(h);
  }
  return h;
}

/* one step in its own scope; returns the loss */
static double step(tl_ctx *ctx, tl_optimizer *opt, const mlp *m, tl_tensor *x, tl_tensor *y) {
  double loss_v = NAN;
  TL_SCOPE(ctx, s) {
    tl_tensor *loss = tl_cross_entropy(forward(m, x), y);
    if (tl_item(loss, &loss_v) || tl_optimizer_zero_grad(opt) || tl_backward(loss, NULL) ||
        tl_optimizer_step(opt))
      fail(ctx, "step");
    for (int l = 0; l < LAYERS; l++) /* the update is done when the step ends (no-ops if it is) */
      if (tl_realize(m->w[l]) || tl_realize(m->b[l])) fail(ctx, "update");
  }
  return loss_v;
}

static tl_tensor *labels(tl_ctx *ctx) {
  int64_t y[BATCH];
  uint64_t s = 42;
  for (int i = 0; i < BATCH; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull; /* LCG: any fixed labels do */
    y[i] = (int64_t)((s >> 33) % OUT);
  }
  return tl_from_data(ctx, TL_I64, 1, (int64_t[]){BATCH}, y);
}

/* the lines of jax and tinygrad, after TL's and torch's */
static void report_extra_peers(double tl_ms) {
  for (int i = 0; i < BENCH_EXTRA_PEERS; i++) {
    const char *why;
    double ms = extra_peer_ms(bench_extra_peers[i], "train_step_mlp", bench_threads(), &why);
    if (ms > 0)
      printf("bench: train_step_mlp tl_ms=%.3f peer=%s peer_ms=%.3f ratio=%.2f threads=%d\n", tl_ms,
             bench_extra_peers[i], ms, ms / tl_ms, bench_threads());
    else
      printf("bench: train_step_mlp tl_ms=%.3f peer=%s peer_ms=nan ratio=nan threads=%d note=%s\n", tl_ms,
             bench_extra_peers[i], bench_threads(), why);
    fflush(stdout);
  }
}

int main(void) {
  bench_clean_blas_env();
  tl_ctx *ctx = tl_init();
  if (!ctx) fail(NULL, "init");
  tl_manual_seed(ctx, 0);
  mlp m = make_mlp(ctx);
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, (int64_t[]){BATCH, IN}), *y = labels(ctx);
  if (!x || !y || tl_realize(x)) fail(ctx, "data");
  tl_optimizer *opt = tl_adam(2 * LAYERS, (tl_tensor *[]){m.w[0], m.w[1], m.w[2], m.b[0], m.b[1], m.b[2]},
                              1e-3, 0.9, 0.999, 1e-8, 0);
  if (!opt) fail(ctx, "adam");

  /* rounds of TL's steps then torch's (bench_util.h: bench_rounds), in this order: the
   * two never share the cores; the warm-ups only before the first */
  int rounds = bench_rounds(), np = 0;
  bench_peer peer;
  int have_peer = start_peer(&peer) == 0;
  char ask[32];
  snprintf(ask, sizeof ask, "%d", ITERS);
  double tl_r[BENCH_MAX_ROUNDS], peer_r[BENCH_MAX_ROUNDS], ratio_r[BENCH_MAX_ROUNDS], first = NAN, last = NAN;
  uint64_t made = 0; /* kernels compiled or loaded from disk during the timed steps */
  for (int r = 0; r < rounds; r++) {
    double t[ITERS];
    for (int i = r ? 0 : -WARMUP; i < ITERS; i++) {
      tl_stats st = tl_get_stats(ctx);
      if (i == 0 && r == 0) made = st.kernels_compiled + st.disk_cache_hits;
      double t0 = now_ms();
      last = step(ctx, opt, &m, x, y);
      if (i >= 0) t[i] = now_ms() - t0;
      if (i == -WARMUP) first = last;
    }
    tl_r[r] = median_of(t, ITERS);
    double ms = have_peer ? bench_peer_ask(&peer, ask, "train_step_mlp") : -1;
    if (ms > 0) peer_r[np] = ms, ratio_r[np++] = ms / tl_r[r];
    if (getenv("BENCH_DEBUG")) fprintf(stderr, "round %d tl %.3f peer %.3f\n", r, tl_r[r], ms);
  }
  if (have_peer && bench_peer_stop(&peer) != 0) np = 0;
  tl_stats st = tl_get_stats(ctx);
  made = st.kernels_compiled + st.disk_cache_hits - made;
  double tl_ms = median_of(tl_r, rounds);
  tl_optimizer_free(opt);
  tl_shutdown(ctx);
  if (!isfinite(first) || !isfinite(last) || !(last < first)) {
    fprintf(stderr, "bench: train_step_mlp: loss %g -> %g: not training\n", first, last);
    return 1;
  }

  if (made) /* steady state should reuse the same kernels: say why the time may be high */
    fprintf(stderr, "bench: train_step_mlp: %llu kernels compiled or loaded from disk during the timed steps\n",
            (unsigned long long)made);
  if (np == rounds) {
    printf("bench: train_step_mlp tl_ms=%.3f peer=torch peer_ms=%.3f ratio=%.2f threads=%d rounds=%d", tl_ms,
           median_of(peer_r, np), median_of(ratio_r, np), bench_threads(), rounds);
    print_ratio_range(ratio_r, np);
    printf("\n");
  } else {
    printf("bench: train_step_mlp tl_ms=%.3f peer=none peer_ms=nan ratio=nan threads=%d rounds=%d\n", tl_ms,
           bench_threads(), rounds);
  }
  fflush(stdout);
  report_extra_peers(tl_ms);
  return 0;
}
