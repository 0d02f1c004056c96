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
 * kind, dtype, rank, root, this rank's state, then the shape from DIST_DESC_SHAPE)
 * agrees on every rank, or an error naming `what` on every rank. The state word is
 * DIST_DESC_FAILED_BIT when this rank could not get its tensor, plus DIST_DESC_NCCL when
 * it chose NCCL: that bit need not agree; *all and *any say whether every rank, or
 * some, chose it (this rank's choice alone when the check is off: TL_DIST_CHECK=0). */
enum { DIST_DESC_STATE = 4, DIST_DESC_SHAPE = 5, DIST_DESC_WORDS = DIST_DESC_SHAPE + TL_MAX_DIMS };
enum { DIST_DESC_NCCL = 1, DIST_DESC_FAILED_BIT = 2 };
tl_status tl_dist_agree_path(int64_t *d, const char *what, bool *all, bool *any, tl_error *err);
tl_status tl_dist_agree(int64_t *d, const char *what, tl_error *err); /* the same, the NCCL bit ignored */
/* The way agreed, after tl_dist_agree_path: NCCL (*nccl) when every rank chose it and
 * NCCL's communicator is up (made here at the first such call); else every rank stages
 * through host memory, and those that chose NCCL get their host values now with
 * fetch(arg) (false: it failed), after which the ranks agree again (d: its state word
 * rewritten). */
tl_status tl_dist_settle_path(int64_t *d, const char *what, bool wish, bool all, bool any, bool (*fetch)(void *),
                              void *arg, bool *nccl, tl_error *err);

/* dist_device.c: cuda tensors by NCCL. A realized tensor's device memory: */
struct tl_backend;
typedef struct {
  struct tl_backend *be; /* the cuda backend's instance */
  void *cuda;            /* its tl_cuda */
  void *buf;             /* the tl_cu_buf */
  size_t off;            /* the tensor's bytes there */
} tl_dist_dev;
/* The choice for a tensor of backend `backend`: NCCL when it is "cuda", TL_DIST_NCCL is
 * not 0, there are several ranks and NCCL loads (at the first such call) and has not
 * failed; false and *why (a constant, or nccl_load.c's reason) otherwise. */
bool tl_dist_nccl_choice(const char *backend, const char **why);
/* t realized; true (its memory in *dev) when its payload can go by NCCL here */
bool tl_dist_nccl_wish(tl_tensor *t, tl_dist_dev *dev);
/* a new tensor of the cuda instance be, its device memory in *dev */
tl_tensor *tl_dist_new_device_output(tl_ctx *ctx, struct tl_backend *be, const char *what, tl_dtype dt, int ndim,
                                     const int64_t *shape, tl_dist_dev *dev);
void *tl_dist_dev_address(const tl_dist_dev *dev); /* the device pointer */
void *tl_dist_dev_stream(const tl_dist_dev *dev);  /* the instance's CUDA stream, the context bound */
/* n bytes of src to dst at byte dst_at, queued on dst's stream */
tl_status tl_dist_dev_copy(const tl_dist_dev *dst, size_t dst_at, const tl_dist_dev *src, size_t n, tl_error *err);
/* how many collectives (all_reduce, broadcast, sync_grads calls of several ranks) sent
 * their payload by NCCL, and how many through host memory: the tests' view of the
 * choice */
typedef struct {
  uint64_t nccl, staged;
} tl_dist_paths;
tl_dist_paths tl_dist_path_counts(void);
void tl_dist_count_path(bool nccl);
void tl_dist_describe_sync(int64_t *d, int n, bool failed); /* sync_grads' descriptor, the shape words 0 */
/* the exchange at exit: false (and err) when another rank is still in a collective */
bool tl_dist_exit_agrees(tl_error *err);

#endif
