/* test_dist.c — the distributed API in one process (LANGUAGE.md §13): not launched by
 * mpirun, MPI is never loaded and the process is rank 0 of 1; every collective gives
 * the tensor's own values, shard the whole tensor, sync_grads leaves the gradients as
 * they are, and bad arguments are errors. The ranks' cases run under mpirun in
 * `make test-dist` (tests/dist/run.sh). Expected values are the inputs, written here. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist/dist.h"
#include "dist/dist_internal.h"
#include "dist/nccl_abi.h"
#include "test.h"
#include "tl.h"

static const float vals[6] = {1.5f, -2, 0.25f, 7, -0.5f, 3};

static bool same(tl_tensor *t, const float *want, int64_t n) {
  if (!t || tl_numel(t) != n || tl_get_dtype(t) != TL_F32) return false;
  const float *p = tl_data(t);
  for (int64_t i = 0; p && i < n; i++)
    if (p[i] != want[i]) return false;
  return p != NULL;
}

TEST(dist_alone_is_rank_0_of_1) {
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE")) return; /* the suite itself under mpirun */
  CHECK(tl_dist_init() == TL_OK);
  CHECK_INT(tl_dist_rank(), 0);
  CHECK_INT(tl_dist_size(), 1);
  CHECK_INT(tl_dist_launched(), 0);
  CHECK(!strcmp(tl_dist_library(), "none"));
  CHECK(tl_dist_barrier() == TL_OK);
  FILE *devnull = fopen("/dev/null", "w");
  if (devnull) {
    tl_dist_abort("alone: prints and returns", devnull); /* no MPI to end a job with */
    fclose(devnull);
  }
}

TEST(dist_alone_collectives_are_identities) {
  tl_ctx *ctx = tl_init();
  int64_t shape[2] = {2, 3};
  tl_tensor *x = tl_from_data(ctx, TL_F32, 2, shape, vals);
  tl_tensor *s = tl_dist_all_reduce(x), *m = tl_dist_all_reduce_mean(x), *b = tl_dist_broadcast(x, 0);
  CHECK(same(s, vals, 6) && same(m, vals, 6) && same(b, vals, 6));
  CHECK(s && tl_ndim(s) == 2 && tl_dim(s, 1) == 3);
  tl_tensor *sh = tl_dist_shard(x);
  CHECK(same(sh, vals, 6) && tl_dim(sh, 0) == 2);
  /* a lazy view goes in as its values: the transpose's row-major order */
  tl_tensor *tr = tl_transpose(x, 0, 1), *st = tl_dist_all_reduce(tr);
  const float want_t[6] = {1.5f, 7, -2, -0.5f, 0.25f, 3};
  CHECK(same(st, want_t, 6));
  /* errors: a root that is no rank, a mean of integers, a 0-d shard */
  CHECK(tl_dist_broadcast(x, 1) == NULL);
  CHECK(strstr(tl_last_error(ctx), "tl_dist_broadcast: root 1 is not a rank (there are 1)") != NULL);
  tl_tensor *i = tl_arange(ctx, TL_I64, 0, 4, 1);
  CHECK(tl_dist_all_reduce_mean(i) == NULL);
  CHECK(strstr(tl_last_error(ctx), "tl_dist_all_reduce_mean: needs a float tensor, not i64") != NULL);
  tl_tensor *z = tl_scalar(ctx, TL_F32, 2);
  CHECK(tl_dist_shard(z) == NULL);
  CHECK(strstr(tl_last_error(ctx), "tl_dist_shard: a 0-d tensor has no rows to share out") != NULL);
  CHECK(tl_dist_all_reduce(NULL) == NULL);
  TEST_SHUTDOWN(ctx);
}

TEST(dist_alone_sync_grads_keeps_gradients) {
  tl_ctx *ctx = tl_init();
  int64_t n = 6;
  tl_tensor *w = tl_from_data(ctx, TL_F32, 1, &n, vals);
  tl_set_requires_grad(w, 1);
  tl_tensor *c = tl_from_data(ctx, TL_F32, 1, &n, vals);
  CHECK(tl_backward(tl_sum(tl_mul(w, c), 0, NULL, 0), NULL) == TL_OK);
  CHECK(tl_dist_sync_grads(1, &w) == TL_OK);
  CHECK(same(tl_grad(w), vals, 6)); /* d/dw sum(w c) = c */
  /* a tensor that is not a leaf requiring grad is an error naming the call */
  CHECK(tl_dist_sync_grads(1, &c) != TL_OK);
  CHECK(strstr(tl_last_error(NULL), "tl_dist_sync_grads: parameter 0: grad: the tensor does not require grad") != NULL);
  /* the optimizer's option: alone, a plain step (w - 0.5 c) */
  tl_optimizer *opt = tl_sgd(1, &w, 0.5, 0, 0);
  CHECK(tl_optimizer_set_dist_sync(opt, 1) == TL_OK);
  CHECK(tl_optimizer_set_dist_sync(NULL, 1) == TL_ERR_ARG);
  CHECK(tl_optimizer_step(opt) == TL_OK);
  float want[6];
  for (int k = 0; k < 6; k++) want[k] = vals[k] - 0.5f * vals[k];
  CHECK(same(w, want, 6));
  tl_optimizer_free(opt);
  TEST_SHUTDOWN(ctx);
}

/* NCCL's loader (src/dist/nccl_load.c) where libnccl.so.2 is installed (the CUDA
 * toolkit's): it opens, every function TL calls is there (dlsym'd here apart from the
 * loader), and the version is an NCCL 2. Without the library: a clear reason, and the
 * test says it skipped. */
TEST(dist_nccl_loader_resolves_what_tl_calls) {
  if (getenv("TL_NCCL_LIB")) return; /* a run that names another library */
  const char *why = NULL;
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  bool loaded = tl_nccl_load(&why);
  CHECK(loaded == (lib != NULL));
  if (!lib) {
    CHECK(why && strstr(why, "libnccl.so.2 could not be loaded"));
    fprintf(stderr, "dist_nccl_loader: skipped, no libnccl.so.2 here (%s)\n", why ? why : "");
    return;
  }
  int n = 0;
  for (const char *const *s = tl_nccl_symbols; *s; s++, n++) CHECK(dlsym(lib, *s) != NULL);
  CHECK_INT(n, 8);
  int v = tl_nccl_version();
  CHECK_INT(tl_nccl_major(v), 2);
  CHECK(v >= 2200 && v < 30000); /* ncclBroadcast came in 2.2 */
  dlclose(lib);
}

/* alone, every tensor stages (no payload moves at all): the choice says why */
TEST(dist_nccl_choice_alone) {
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE")) return;
  const char *why = NULL;
  CHECK(!tl_dist_nccl_choice("cpu", &why) && why && !strcmp(why, "not a cuda tensor"));
  CHECK(!tl_dist_nccl_choice("opencl", &why) && why && !strcmp(why, "not a cuda tensor"));
  CHECK(!tl_dist_nccl_choice("cuda", &why) && why && (!strcmp(why, "one rank") || !strcmp(why, "TL_DIST_NCCL=0")));
  CHECK_INT(tl_nccl_major(22809), 2); /* 2.28.9, and 2.8.4 in the older spelling */
  CHECK_INT(tl_nccl_major(2804), 2);
}
