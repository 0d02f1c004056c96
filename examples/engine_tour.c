/* engine_tour.c — the engine at work, from C: lazy tensors fused into kernels,
 * compiled to native code (cached), run on every core, checked against the
 * reference interpreter. */
#include <stdio.h>
#include <stdlib.h>

#include "tl.h"

#define CHECK(x)                                                               \
  do {                                                                         \
    if (!(x)) {                                                                \
      fprintf(stderr, "error: %s\n", tl_last_error(ctx));                      \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(void) {
  tl_ctx *ctx = tl_init();
  if (!ctx) return 1;
  tl_manual_seed(ctx, 42);

  /* relu(a*b + c) * 0.5 over a million elements: one fused kernel */
  int64_t n[1] = {1 << 20};
  tl_tensor *a = tl_randn(ctx, TL_F32, 1, n), *b = tl_randn(ctx, TL_F32, 1, n), *c = tl_rand(ctx, TL_F32, 1, n);
  tl_tensor *ab = tl_mul(a, b), *abc = tl_add(ab, c), *r = tl_relu(abc), *y = tl_mul_scalar(r, 0.5);
  CHECK(y);
  printf("relu(a*b+c)*0.5 runs as %d kernel(s)\n", tl_schedule_count(y));
  tl_tensor *total = tl_mean(y, 0, NULL, 0);
  double m;
  CHECK(tl_item(total, &m) == TL_OK);
  printf("mean = %.6f\n", m);

  /* a row softmax of a 4x5 matrix: the row's max and sum live in one kernel */
  int64_t s45[2] = {4, 5};
  tl_tensor *x = tl_randn(ctx, TL_F32, 2, s45);
  tl_tensor *sm = tl_softmax(x, 1);
  CHECK(sm);
  printf("softmax runs as %d kernel(s):\n", tl_schedule_count(sm));
  CHECK(tl_print(sm, stdout) == TL_OK);
  tl_tensor *rows = tl_sum(sm, 1, (int[]){1}, 0);
  printf("row sums: ");
  CHECK(tl_print(rows, stdout) == TL_OK);

  /* matmul with a transposed view (no copy) and argmax */
  tl_tensor *w = tl_arange(ctx, TL_F32, 0, 6, 1);
  tl_tensor *w23 = tl_reshape(w, 2, (int64_t[]){2, 3});
  tl_tensor *wt = tl_transpose(w23, 0, 1);
  tl_tensor *prod = tl_matmul(w23, wt);
  printf("w @ w.T =\n");
  CHECK(tl_print(prod, stdout) == TL_OK);
  tl_tensor *am = tl_argmax(sm, 1, 0);
  printf("argmax of each softmax row: ");
  CHECK(tl_print(am, stdout) == TL_OK);

  /* the same softmax through the reference interpreter */
  CHECK(tl_set_backend(ctx, "interp") == TL_OK);
  tl_tensor *sm2 = tl_softmax(x, 1), *diff = tl_max(tl_abs(tl_sub(sm, sm2)), 0, NULL, 0);
  double d;
  CHECK(tl_item(diff, &d) == TL_OK);
  printf("max |cpu - interp| = %.3g\n", d);

  tl_stats st = tl_get_stats(ctx);
  printf("kernels run: %llu, compiled: %llu, loaded from disk cache: %llu\n",
         (unsigned long long)st.kernels_run, (unsigned long long)st.kernels_compiled,
         (unsigned long long)st.disk_cache_hits);
  tl_tensor *all[] = {a, b, c, ab, abc, r, y, total, x, sm, rows, w, w23, wt, prod, am, sm2, diff};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tl_release(all[i]);
  tl_shutdown(ctx);
  return 0;
}
