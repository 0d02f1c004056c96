/* train_spirals.c — training from C: a 2-64-2 MLP learns two interleaved spirals.
 *
 * Shows the pieces together: parameters made once by initialisers, every step in a
 * scope (its graph, gradients and temporaries are gone when it ends), autograd,
 * Adam, and the memory counters proving a step takes nothing from the system after
 * warm-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl.h"

enum { POINTS = 200, HIDDEN = 64, STEPS = 400 };

static int fail(tl_ctx *ctx) {
  fprintf(stderr, "train_spirals: %s\n", tl_last_error(ctx));
  tl_shutdown(ctx);
  return 1;
}

/* two spirals of 1.25 turns (class 0 and 1), from a fixed linear congruential stream */
static void make_spirals(float *x, int64_t *y) {
  uint32_t s = 12345;
  for (int i = 0; i < POINTS; i++) {
    int c = i % 2;
    double t = 0.15 + 0.85 * (i / 2) / (POINTS / 2.0), th = t * 2 * M_PI * 1.25 + c * M_PI;
    s = s * 1664525u + 1013904223u;
    double noise = ((double)(s >> 8) / (1 << 24) - 0.5) * 0.04;
    x[2 * i] = (float)(t * cos(th) + noise);
    x[2 * i + 1] = (float)(t * sin(th) - noise);
    y[i] = c;
  }
}

int main(void) {
  tl_ctx *ctx = tl_init();
  if (!ctx) return 1;
  tl_manual_seed(ctx, 1);
  float xs[2 * POINTS];
  int64_t ys[POINTS];
  make_spirals(xs, ys);
  tl_tensor *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){POINTS, 2}, xs);
  tl_tensor *y = tl_from_data(ctx, TL_I64, 1, (int64_t[]){POINTS}, ys);
  tl_tensor *w1 = tl_xavier_uniform(ctx, TL_F32, 2, (int64_t[]){2, HIDDEN}, 2, HIDDEN);
  tl_tensor *b1 = tl_zeros(ctx, TL_F32, 1, (int64_t[]){HIDDEN});
  tl_tensor *w2 = tl_xavier_uniform(ctx, TL_F32, 2, (int64_t[]){HIDDEN, 2}, HIDDEN, 2);
  tl_tensor *b2 = tl_zeros(ctx, TL_F32, 1, (int64_t[]){2});
  if (tl_set_requires_grad(b1, 1) || tl_set_requires_grad(b2, 1)) return fail(ctx);
  tl_optimizer *adam = tl_adam(4, (tl_tensor *[]){w1, b1, w2, b2}, 0.02, 0.9, 0.999, 1e-8, 0);
  if (!adam) return fail(ctx);

  tl_stats warm = {0};
  double loss = NAN, accuracy = NAN;
  for (int step = 1; step <= STEPS; step++) {
    TL_SCOPE(ctx, s) { /* everything made in a step is released when it ends */
      tl_tensor *logits = tl_add(tl_matmul(tl_tanh(tl_add(tl_matmul(x, w1), b1)), w2), b2);
      tl_tensor *l = tl_cross_entropy(logits, y);
      tl_optimizer_zero_grad(adam);
      if (tl_backward(l, NULL) || tl_optimizer_step(adam) || tl_item(l, &loss)) break;
      if (step % 50 == 0 || step == 1) {
        double hits = 0;
        tl_item(tl_sum(tl_eq(tl_argmax(logits, 1, 0), y), 0, NULL, 0), &hits);
        accuracy = hits / POINTS;
        printf("step %3d  loss %.4f  accuracy %.3f\n", step, loss, accuracy);
      }
    }
    if (tl_last_status(ctx)) return fail(ctx);
    if (step == 10) warm = tl_get_stats(ctx);
  }
  tl_stats end = tl_get_stats(ctx);
  printf("after warm-up: %llu buffer mallocs and %llu kernels compiled in %d steps; %llu tensors live\n",
         (unsigned long long)(end.buffer_mallocs - warm.buffer_mallocs),
         (unsigned long long)(end.kernels_compiled - warm.kernels_compiled), STEPS - 10,
         (unsigned long long)end.live_tensors);
  tl_optimizer_free(adam);
  size_t leaks = tl_mem_report(ctx, NULL);
  printf("leaked objects: %zu\n", leaks);
  tl_shutdown(ctx);
  return accuracy >= 0.95 && leaks == 0 ? 0 : 1;
}
