/* dist.h — the collectives under their callers' names (dist.c): the language's run time
 * (src/lang/rt/rt_dist.c) names its calls `Dist::all_reduce`, the C API `tl_dist_...`,
 * and every error says which. */
#ifndef TL_DIST_DIST_H
#define TL_DIST_DIST_H

#include <stdbool.h>

#include "core/error.h"

tl_tensor *tl_dist_all_reduce_as(tl_tensor *t, int mean, const char *what);
tl_tensor *tl_dist_broadcast_as(tl_tensor *t, int root, const char *what);
tl_tensor *tl_dist_shard_as(tl_tensor *t, const char *what);
tl_status tl_dist_barrier_as(const char *what);
tl_status tl_dist_sync_grads_as(int n, tl_tensor *const *params, const char *what);
/* a new tensor of ctx's backend whose values the caller writes at *host (dist_grads.c) */
tl_tensor *tl_dist_new_output(tl_ctx *ctx, const char *what, tl_dtype dt, int ndim, const int64_t *shape, void **host);
/* every collective's first step: the descriptor d (DIST_DESC_WORDS words: the call's
 * kind, dtype, rank, root, failed here, then the shape from DIST_DESC_SHAPE) agrees on
 * every rank, or an error naming `what` on every rank */
enum { DIST_DESC_SHAPE = 5, DIST_DESC_WORDS = DIST_DESC_SHAPE + TL_MAX_DIMS };
tl_status tl_dist_agree(int64_t *d, const char *what, tl_error *err);
void tl_dist_describe_sync(int64_t *d, int n, bool failed); /* sync_grads' descriptor, the shape words 0 */
/* the exchange at exit: false (and err) when another rank is still in a collective */
bool tl_dist_exit_agrees(tl_error *err);

#endif
