/* test_train.c — training end to end from C: a 2-layer MLP learns two interleaved
 * spirals (Adam) and two blobs (SGD with momentum) generated here with fixed seeds, to
 * at least 95% training accuracy. Every step runs in a scope; after warm-up a step
 * takes no buffer memory from the system, needs no new kernel and leaves the live
 * tensor count unchanged, and the context ends with nothing leaked. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "test.h"
#include "tl.h"

#define NPTS 300
#define HIDDEN 64
#define STEPS 400
#define TAIL 50 /* the last steps, over which memory must stay flat */

static uint64_t mix(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double gaussian(uint64_t *s) { /* Box-Muller */
  double u = ((double)(mix(s) >> 11) + 1) * 0x1p-53, v = (double)(mix(s) >> 11) * 0x1p-53;
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* two spirals of 1.25 turns, one per class, radius 0.15..1, a little noise */
static void make_spirals(float *x, int64_t *y, int n) {
  uint64_t s = 1;
  for (int i = 0; i < n; i++) {
    int c = i % 2;
    double t = 0.15 + 0.85 * (i / 2) / (n / 2.0), th = t * 2 * M_PI * 1.25 + c * M_PI;
    x[2 * i] = (float)(t * cos(th) + 0.02 * gaussian(&s));
    x[2 * i + 1] = (float)(t * sin(th) + 0.02 * gaussian(&s));
    y[i] = c;
  }
}

/* two round blobs at (-1,-1) and (1,1), sd 0.5: they barely overlap */
static void make_blobs(float *x, int64_t *y, int n) {
  uint64_t s = 2;
  for (int i = 0; i < n; i++) {
    int c = i % 2;
    x[2 * i] = (float)((c ? 1 : -1) + 0.5 * gaussian(&s));
    x[2 * i + 1] = (float)((c ? 1 : -1) + 0.5 * gaussian(&s));
    y[i] = c;
  }
}

typedef struct {
  tl_tensor *p[4]; /* w1 [2,H], b1 [H], w2 [H,2], b2 [2] */
  tl_tensor *(*act)(tl_tensor *);
} mlp;

static mlp make_mlp(tl_ctx *ctx, tl_tensor *(*act)(tl_tensor *)) {
  mlp m = {{tl_xavier_uniform(ctx, TL_F32, 2, (int64_t[]){2, HIDDEN}, 2, HIDDEN),
            tl_zeros(ctx, TL_F32, 1, (int64_t[]){HIDDEN}),
            tl_xavier_uniform(ctx, TL_F32, 2, (int64_t[]){HIDDEN, 2}, HIDDEN, 2),
            tl_zeros(ctx, TL_F32, 1, (int64_t[]){2})},
           act};
  CHECK(tl_requires_grad(m.p[0]) && tl_requires_grad(m.p[2])); /* initialisers make trainable leaves */
  CHECK_INT(tl_set_requires_grad(m.p[1], 1), TL_OK);
  CHECK_INT(tl_set_requires_grad(m.p[3], 1), TL_OK);
  return m;
}

static tl_tensor *forward(const mlp *m, tl_tensor *x) {
  tl_tensor *h = m->act(tl_add(tl_matmul(x, m->p[0]), m->p[1]));
  return tl_add(tl_matmul(h, m->p[2]), m->p[3]);
}

/* the fraction of points whose argmax logit is their class, computed by TL */
static double accuracy(const mlp *m, tl_tensor *x, tl_tensor *y) {
  double hits = -1;
  tl_set_grad_enabled(tl_context(x), 0); /* evaluation: nothing to record */
  TL_SCOPE(tl_context(x), s) {
    CHECK_INT(tl_item(tl_sum(tl_eq(tl_argmax(forward(m, x), 1, 0), y), 0, NULL, 0), &hits), TL_OK);
  }
  tl_set_grad_enabled(tl_context(x), 1);
  return hits / (double)tl_dim(y, 0);
}

/* one step: forward, loss (read back, as a training loop would log it), backward, update */
static double train_step(tl_optimizer *opt, const mlp *m, tl_tensor *x, tl_tensor *y) {
  double loss_v = NAN;
  TL_SCOPE(tl_context(x), s) {
    tl_tensor *loss = tl_cross_entropy(forward(m, x), y);
    CHECK_INT(tl_item(loss, &loss_v), TL_OK);
    CHECK_INT(tl_optimizer_zero_grad(opt), TL_OK);
    CHECK_INT(tl_backward(loss, NULL), TL_OK);
    CHECK_INT(tl_optimizer_step(opt), TL_OK);
  }
  return loss_v;
}

typedef struct {
  double first_loss, last_loss, acc;
  uint64_t warm_mallocs;   /* buffer mallocs before the last TAIL steps */
  uint64_t tail_mallocs;   /* buffer mallocs over the last TAIL steps */
  uint64_t tail_kernels;   /* kernels not found in memory (compiled or loaded) over them */
  int live_changes;        /* steps after warm-up ending with another live tensor count */
} run_result;

static run_result train(tl_ctx *ctx, tl_optimizer *opt, const mlp *m, tl_tensor *x, tl_tensor *y, int steps) {
  run_result r = {0};
  uint64_t live0 = 0, mallocs0 = 0, kernels0 = 0;
  for (int i = 0; i < steps; i++) {
    double l = train_step(opt, m, x, y);
    if (i == 0) r.first_loss = l;
    r.last_loss = l;
    tl_stats st = tl_get_stats(ctx);
    if (i == 2) live0 = st.live_tensors; /* warm-up: the optimizer's state exists by now */
    if (i > 2) r.live_changes += st.live_tensors != live0;
    uint64_t kernels = st.kernels_compiled + st.disk_cache_hits;
    if (i == steps - TAIL - 1) {
      mallocs0 = st.buffer_mallocs;
      kernels0 = kernels;
    }
    if (i == steps - 1) {
      r.warm_mallocs = mallocs0; /* > 0: the counter is live */
      r.tail_mallocs = st.buffer_mallocs - mallocs0;
      r.tail_kernels = kernels - kernels0;
    }
  }
  r.acc = accuracy(m, x, y);
  return r;
}

static void data_tensors(tl_ctx *ctx, void (*make)(float *, int64_t *, int), tl_tensor **x, tl_tensor **y) {
  static float xs[2 * NPTS];
  static int64_t ys[NPTS];
  make(xs, ys, NPTS);
  *x = tl_from_data(ctx, TL_F32, 2, (int64_t[]){NPTS, 2}, xs);
  *y = tl_from_data(ctx, TL_I64, 1, (int64_t[]){NPTS}, ys);
}

static void check_result(const char *what, run_result r) {
  printf("  %s: loss %.4f -> %.4f, accuracy %.3f; before the last %d steps %llu buffer mallocs, in them %llu "
         "mallocs and %llu new kernels\n",
         what, r.first_loss, r.last_loss, r.acc, TAIL, (unsigned long long)r.warm_mallocs,
         (unsigned long long)r.tail_mallocs, (unsigned long long)r.tail_kernels);
  CHECK(r.warm_mallocs > 0);
  CHECK(r.acc >= 0.95);
  CHECK(r.last_loss < 0.5 * r.first_loss);
  CHECK_INT(r.tail_mallocs, 0);
  /* every step runs the same kernels: one made anew per step (a step-dependent value
   * written into its source) would compile every step and grow the disk cache forever */
  CHECK_INT(r.tail_kernels, 0);
  CHECK_INT(r.live_changes, 0);
}

TEST(train_mlp_spirals_adam) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 0);
  tl_tensor *x, *y;
  data_tensors(ctx, make_spirals, &x, &y);
  mlp m = make_mlp(ctx, tl_tanh);
  tl_optimizer *opt = tl_adam(4, m.p, 0.02, 0.9, 0.999, 1e-8, 0);
  CHECK(opt != NULL);
  check_result("spirals, tanh, adam", train(ctx, opt, &m, x, y, STEPS));
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

TEST(train_mlp_blobs_sgd) {
  tl_ctx *ctx = tl_init();
  tl_manual_seed(ctx, 1);
  tl_tensor *x, *y;
  data_tensors(ctx, make_blobs, &x, &y);
  mlp m = make_mlp(ctx, tl_relu);
  tl_optimizer *opt = tl_sgd(4, m.p, 0.1, 0.9, 0);
  CHECK(opt != NULL);
  check_result("blobs, relu, sgd+momentum", train(ctx, opt, &m, x, y, 100));
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}
