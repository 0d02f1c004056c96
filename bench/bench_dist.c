/* bench_dist.c — `make bench-dist` (not in `make bench`): run under mpirun at 1, 2 and 4
 * ranks by the Makefile. Built with mpicc so that it can call MPI_Allreduce itself.
 *
 *   step:      one data-parallel MLP training step (global batch 512 split over the
 *              ranks, 256 -> 512 -> 10, SGD synchronising in the optimizer), its time,
 *              throughput and the share of the gradients' all-reduce (sync_grads)
 *   allreduce: tl_dist_all_reduce of an f32 tensor against MPI_Allreduce called directly
 *              on buffers of the same size (its result buffer allocated once; TL's comes
 *              from its buffer cache): the ratio of bandwidths, bar 0.9x; and
 *              tl_dist_sync_grads of a parameter that size.
 *
 * Times are the slowest rank's, the median of several rounds. TL_THREADS=1 is set by the
 * Makefile, so each rank computes on one core. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"

static int R, N;

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* the slowest rank's time */
static double slowest(double t) {
  double m = t;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[n / 2];
}

static void fill(tl_tensor *t, float scale) {
  float *p = tl_data_mut(t);
  for (int64_t i = 0; i < tl_numel(t); i++) p[i] = scale * (float)((i * 7919 + R * 13) % 1000 - 500) / 500.0f;
}

static void bench_step(tl_ctx *ctx) {
  enum { B = 512, IN = 256, HID = 512, OUT = 10, WARM = 3, ROUNDS = 15 };
  int64_t xs[2] = {B, IN}, ys[2] = {B, OUT}, s1[2] = {IN, HID}, s2[2] = {1, HID}, s3[2] = {HID, OUT}, s4[2] = {1, OUT};
  tl_tensor *X = tl_zeros(ctx, TL_F32, 2, xs), *Y = tl_zeros(ctx, TL_F32, 2, ys);
  tl_realize(X), tl_realize(Y);
  fill(X, 1), fill(Y, 1);
  tl_tensor *p[4] = {tl_zeros(ctx, TL_F32, 2, s1), tl_zeros(ctx, TL_F32, 2, s2), tl_zeros(ctx, TL_F32, 2, s3),
                     tl_zeros(ctx, TL_F32, 2, s4)};
  for (int k = 0; k < 4; k++) {
    tl_realize(p[k]);
    fill(p[k], 0.05f);
    tl_set_requires_grad(p[k], 1);
  }
  tl_tensor *x = tl_dist_shard(X), *y = tl_dist_shard(Y);
  tl_realize(x), tl_realize(y);
  tl_optimizer *opt = tl_sgd(4, p, 0.01, 0.9, 0);
  double step[ROUNDS], sync[ROUNDS];
  for (int s = 0; s < WARM + ROUNDS; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    tl_scope *sc = tl_scope_begin(ctx, "step");
    tl_tensor *h = tl_relu(tl_add(tl_matmul(x, p[0]), p[1]));
    tl_backward(tl_mse_loss(tl_add(tl_matmul(h, p[2]), p[3]), y), NULL);
    for (int k = 0; k < 4; k++) tl_realize(tl_grad(p[k])); /* backward's work, outside the sync's time */
    double t1 = MPI_Wtime();
    tl_dist_sync_grads(4, p);
    double t2 = MPI_Wtime();
    tl_optimizer_step(opt);
    tl_optimizer_zero_grad(opt);
    tl_realize_many(4, p);
    tl_scope_end(sc);
    double t3 = MPI_Wtime();
    if (s >= WARM) {
      step[s - WARM] = slowest(t3 - t0);
      sync[s - WARM] = slowest(t2 - t1);
    }
  }
  double st = median(step, ROUNDS), sy = median(sync, ROUNDS);
  int cores = N < 2 ? N : 2;
  if (R == 0)
    printf("bench: dist_mlp_step ranks=%d step_ms=%.3f samples_per_s=%.0f samples_per_s_per_core=%.0f "
           "allreduce_ms=%.3f allreduce_share=%.2f params=%d\n",
           N, st * 1e3, B / st, B / st / cores, sy * 1e3, sy / st, IN * HID + HID + HID * OUT + OUT);
  tl_optimizer_free(opt);
  for (int k = 0; k < 4; k++) tl_release(p[k]);
  tl_release(X), tl_release(Y), tl_release(x), tl_release(y);
}

static void bench_allreduce(tl_ctx *ctx) {
  static const int64_t sizes[] = {1 << 14, 1 << 18, 1 << 20, 1 << 22}; /* f32: 64 KiB, 1, 4, 16 MiB */
  enum { ROUNDS = 9 };
  for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
    int64_t n = sizes[z];
    int reps = n >= 1 << 22 ? 3 : n >= 1 << 18 ? 20 : 100;
    tl_tensor *t = tl_zeros(ctx, TL_F32, 1, &n);
    tl_realize(t);
    fill(t, 1);
    tl_tensor *w = tl_detach(t);
    tl_set_requires_grad(w, 1);
    float *in = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    memset(out, 0, sizeof(float) * (size_t)n); /* its pages mapped before timing */
    memcpy(in, tl_data(t), sizeof(float) * (size_t)n);
    double tl_t[ROUNDS], mpi_t[ROUNDS], sync_t[ROUNDS];
    for (int r = 0; r < ROUNDS + 1; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < reps; i++) MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t1 = MPI_Wtime();
      MPI_Barrier(MPI_COMM_WORLD);
      double t2 = MPI_Wtime();
      for (int i = 0; i < reps; i++) tl_release(tl_dist_all_reduce(t));
      double t3 = MPI_Wtime();
      if (r == 0) continue; /* warm-up */
      mpi_t[r - 1] = slowest((t1 - t0) / reps);
      tl_t[r - 1] = slowest((t3 - t2) / reps);
    }
    /* sync_grads alone, timed around the call */
    for (int r = 0; r < ROUNDS; r++) {
      double acc = 0;
      for (int i = 0; i < reps; i++) {
        tl_tensor *loss = tl_sum(w, 0, NULL, 0);
        tl_backward(loss, NULL);
        tl_tensor *g = tl_grad(w);
        tl_realize(g);
        tl_release(g);
        MPI_Barrier(MPI_COMM_WORLD);
        double a = MPI_Wtime();
        tl_dist_sync_grads(1, &w);
        acc += MPI_Wtime() - a;
        tl_zero_grad(w);
        tl_release(loss);
      }
      sync_t[r] = slowest(acc / reps);
    }
    double m = median(mpi_t, ROUNDS), tt = median(tl_t, ROUNDS), sg = median(sync_t, ROUNDS);
    double bytes = 4.0 * (double)n;
    if (R == 0)
      printf("bench: dist_allreduce ranks=%d bytes=%.0f mpi_ms=%.4f tl_ms=%.4f tl_vs_mpi=%.2f sync_grads_ms=%.4f "
             "sync_vs_mpi=%.2f mpi_gb_s=%.2f\n",
             N, bytes, m * 1e3, tt * 1e3, m / tt, sg * 1e3, m / sg, bytes / m / 1e9);
    free(in);
    free(out);
    tl_release(w);
    tl_release(t);
  }
}

/* 64 gradients of 256 KiB (16 MiB): through the buckets, pipelined (TL_DIST_PIPELINE=1)
 * or not (the default), against one MPI_Allreduce of the 16 MiB */
static void bench_buckets(tl_ctx *ctx) {
  enum { NT = 64, ROUNDS = 7 };
  int64_t n = 1 << 16;
  tl_tensor *w[NT];
  for (int k = 0; k < NT; k++) {
    tl_tensor *z = tl_zeros(ctx, TL_F32, 1, &n);
    w[k] = tl_detach(z);
    tl_release(z);
    tl_set_requires_grad(w[k], 1);
  }
  size_t bytes = sizeof(float) * (size_t)n * NT;
  float *in = calloc(1, bytes), *out = calloc(1, bytes);
  double tl_t[ROUNDS], mpi_t[ROUNDS];
  for (int r = 0; r < ROUNDS + 1; r++) {
    tl_tensor *loss = NULL;
    for (int k = 0; k < NT; k++) {
      tl_tensor *s = tl_sum(w[k], 0, NULL, 0);
      loss = loss ? tl_add(loss, s) : s;
    }
    tl_backward(loss, NULL);
    for (int k = 0; k < NT; k++) tl_realize(tl_grad(w[k]));
    MPI_Barrier(MPI_COMM_WORLD);
    double a = MPI_Wtime();
    tl_dist_sync_grads(NT, w);
    double b = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double c = MPI_Wtime();
    MPI_Allreduce(in, out, (int)(bytes / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double d = MPI_Wtime();
    for (int k = 0; k < NT; k++) tl_zero_grad(w[k]);
    if (r == 0) continue;
    tl_t[r - 1] = slowest(b - a);
    mpi_t[r - 1] = slowest(d - c);
  }
  const char *pl = getenv("TL_DIST_PIPELINE");
  double tt = median(tl_t, ROUNDS), m = median(mpi_t, ROUNDS);
  if (R == 0)
    printf("bench: dist_sync_buckets ranks=%d tensors=%d bytes=%zu pipeline=%s sync_ms=%.3f mpi_one_call_ms=%.3f "
           "sync_vs_mpi=%.2f\n",
           N, NT, bytes, pl && !strcmp(pl, "1") ? "on" : "off", tt * 1e3, m * 1e3, m / tt);
  free(in);
  free(out);
  for (int k = 0; k < NT; k++) tl_release(w[k]);
}

int main(int argc, char **argv) {
  tl_ctx *ctx = tl_init();
  if (!ctx || tl_dist_init() != TL_OK) {
    fprintf(stderr, "bench_dist: %s\n", tl_last_error(NULL));
    return 1;
  }
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(NULL, NULL); /* alone: TL never started MPI */
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &N);
  const char *what = argc > 1 ? argv[1] : "all";
  if (!strcmp(what, "all") || !strcmp(what, "step")) bench_step(ctx);
  if (!strcmp(what, "all") || !strcmp(what, "allreduce")) bench_allreduce(ctx);
  if (!strcmp(what, "all") || !strcmp(what, "buckets")) bench_buckets(ctx);
  tl_shutdown(ctx);
  if (!inited) MPI_Finalize();
  return 0;
}
