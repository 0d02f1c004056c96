/* bench_mlp.h — the MLP 784-256-256-10 (batch 128, cross-entropy, Adam) that the backend
 * benches train (bench_backends.c, bench_gpu.c), made and stepped the same way on any
 * backend. in: a context; out: its tensors, a step's loss (NULL: the context's error). */
#ifndef TL_BENCH_MLP_H
#define TL_BENCH_MLP_H

#include "tl.h"

enum { BENCH_MLP_BATCH = 128, BENCH_MLP_IN = 784, BENCH_MLP_HID = 256, BENCH_MLP_OUT = 10 };

typedef struct {
  tl_tensor *x, *y, *w[3], *b[3];
  tl_optimizer *opt;
} bench_mlp;

/* the inputs, labels and parameters (Kaiming weights, zero biases) and Adam over them */
static inline void bench_mlp_make(tl_ctx *ctx, bench_mlp *m) {
  m->x = tl_randn(ctx, TL_F32, 2, (int64_t[]){BENCH_MLP_BATCH, BENCH_MLP_IN});
  int64_t lab[BENCH_MLP_BATCH];
  for (int i = 0; i < BENCH_MLP_BATCH; i++) lab[i] = (i * 7) % BENCH_MLP_OUT;
  m->y = tl_from_data(ctx, TL_I64, 1, (int64_t[]){BENCH_MLP_BATCH}, lab);
  static const int64_t dims[4] = {BENCH_MLP_IN, BENCH_MLP_HID, BENCH_MLP_HID, BENCH_MLP_OUT};
  for (int l = 0; l < 3; l++) {
    m->w[l] = tl_kaiming_normal(ctx, TL_F32, 2, (int64_t[]){dims[l], dims[l + 1]}, dims[l]);
    m->b[l] = tl_zeros(ctx, TL_F32, 1, (int64_t[]){dims[l + 1]});
    tl_set_requires_grad(m->b[l], 1);
  }
  m->opt = tl_adam(6, (tl_tensor *[]){m->w[0], m->w[1], m->w[2], m->b[0], m->b[1], m->b[2]}, 1e-3, 0.9, 0.999, 1e-8, 0);
}

/* one training step, the parameters realized; its loss, or NULL on an error */
static inline tl_tensor *bench_mlp_step(bench_mlp *m) {
  tl_tensor *h = m->x;
  for (int l = 0; l < 3; l++) {
    h = tl_add(tl_matmul(h, m->w[l]), m->b[l]);
    if (l < 2) h = tl_relu(h);
  }
  tl_tensor *loss = tl_cross_entropy(h, m->y);
  if (tl_optimizer_zero_grad(m->opt) || tl_backward(loss, NULL) || tl_optimizer_step(m->opt)) return NULL;
  for (int l = 0; l < 3; l++)
    if (tl_realize(m->w[l]) || tl_realize(m->b[l])) return NULL;
  return loss;
}

#endif
