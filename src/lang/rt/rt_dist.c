/* rt_dist.c — the run time of `Dist::` over src/dist's collectives (rt_dist.h). The
 * errors are the library's messages, which name the call (`Dist::all_reduce: ...`),
 * at the call's place; under mpirun the driver prefixes `rank R:` and ends the job. */
#include <stdlib.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/hash.h"
#include "dist/dist.h"
#include "lang/rt/rt_dist.h"

static void start(tlrt *R, int line, int col) {
  if (tl_dist_init() != TL_OK) tlrt_fail(R, line, col, "%s", tl_last_error(NULL)); /* "dist: ..." */
}

int64_t tlrt_dist_rank(tlrt *R, int line, int col) {
  start(R, line, col);
  return tl_dist_rank();
}

int64_t tlrt_dist_size(tlrt *R, int line, int col) {
  start(R, line, col);
  return tl_dist_size();
}

tl_tensor *tlrt_dist_all_reduce(tlrt *R, tl_tensor *t, int line, int col) {
  start(R, line, col);
  return tlrt_check(R, tl_dist_all_reduce_as(t, 0, "Dist::all_reduce"), line, col);
}

tl_tensor *tlrt_dist_all_reduce_mean(tlrt *R, tl_tensor *t, int line, int col) {
  start(R, line, col);
  return tlrt_check(R, tl_dist_all_reduce_as(t, 1, "Dist::all_reduce_mean"), line, col);
}

tl_tensor *tlrt_dist_broadcast(tlrt *R, tl_tensor *t, int64_t root, int line, int col) {
  start(R, line, col);
  int r = root < -1 || root > 1 << 30 ? -1 : (int)root; /* out of range: the library says so */
  return tlrt_check(R, tl_dist_broadcast_as(t, r, "Dist::broadcast"), line, col);
}

void tlrt_dist_barrier(tlrt *R, int line, int col) {
  start(R, line, col);
  if (tl_dist_barrier_as("Dist::barrier") != TL_OK) tlrt_fail(R, line, col, "%s", tl_last_error(NULL));
}

tl_tensor *tlrt_dist_shard(tlrt *R, tl_tensor *t, int line, int col) {
  start(R, line, col);
  return tlrt_check(R, tl_dist_shard_as(t, "Dist::shard"), line, col);
}

/* the leaves with a gradient in list t, once each (two handles may share a record) */
static void collect(tl_tensor *t, tl_ptrmap *seen, tl_tensor ***out, int *n, int *cap) {
  for (; t; t = t->next) {
    if (!t->ag || t->ag->op != TL_AG_LEAF || !t->ag->grad || tl_ptrmap_get(seen, t->ag)) continue;
    tl_ptrmap_put(seen, t->ag, t);
    if (*n == *cap) {
      *cap = *cap ? 2 * *cap : 16;
      tl_tensor **m = realloc(*out, sizeof **out * (size_t)*cap);
      if (!m) return;
      *out = m;
    }
    (*out)[(*n)++] = tl_api_handle(t);
  }
}

void tlrt_dist_sync_grads(tlrt *R, int line, int col) {
  start(R, line, col);
  if (tl_dist_size() == 1) return; /* the mean over one rank */
  tl_ctx *ctx = R->ctx;
  tl_ptrmap seen = {0};
  tl_tensor **ts = NULL;
  int n = 0, cap = 0;
  /* every rank runs the same program, so its scopes and their lists come in one order */
  for (tl_scope *s = ctx->scopes; s; s = s->next) collect(s->tensors, &seen, &ts, &n, &cap);
  collect(ctx->escaped, &seen, &ts, &n, &cap);
  tl_ptrmap_free(&seen);
  tl_status st = tl_dist_sync_grads_as(n, ts, "Dist::sync_grads");
  free(ts);
  if (st != TL_OK) tlrt_fail(R, line, col, "%s", tl_last_error(NULL));
}

bool tlrt_dist_params_file_here(tlrt *R, int line, int col) {
  start(R, line, col);
  return tl_dist_rank() == 0;
}

void tlrt_dist_params_saved(tlrt *R, int line, int col) {
  start(R, line, col);
  if (tl_dist_size() > 1 && tl_dist_barrier_as("Param::save") != TL_OK) tlrt_fail(R, line, col, "%s", tl_last_error(NULL));
}

void tlrt_dist_params_share(tlrt *R, int n, tl_tensor **const *fields, int line, int col) {
  start(R, line, col);
  if (tl_dist_size() == 1) return;
  for (int i = 0; i < n; i++) {
    tl_tensor *old = *fields[i];
    tl_tensor *got = tlrt_check(R, tl_dist_broadcast_as(old, 0, "Param::load"), line, col);
    if (tl_requires_grad(old) && tl_set_requires_grad(got, 1) != TL_OK) {
      tl_release(got);
      tlrt_check_status(R, TL_ERR_ARG, line, col);
    }
    tlrt_tensor_release(R, old);
    *fields[i] = got;
  }
}
