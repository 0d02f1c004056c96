/* context.h — the engine context and tensor handles (private to src/api). */
#ifndef TL_API_CONTEXT_H
#define TL_API_CONTEXT_H

#include "core/error.h"
#include "graph/uop.h"
#include "runtime/compiler.h"
#include "runtime/threadpool.h"

typedef enum { TL_BACKEND_CPU, TL_BACKEND_INTERP } tl_backend;

struct tl_ctx {
  tl_error err;
  tl_graph graph;          /* the tensor graph, refcounted */
  tl_backend backend;
  tl_compiler *compiler;   /* created on first use */
  char *cc, *cache_dir;    /* compiler settings (NULL: environment/defaults) */
  tl_pool *pool;           /* created on first use */
  uint64_t seed, rand_calls;
  tl_stats stats;
  tl_mem mem;
  tl_tensor *tensors; /* live handles */
  bool debug;
};

struct tl_tensor {
  tl_ctx *ctx;
  tl_uop *u;
  int32_t refs;
  tl_tensor *prev, *next; /* every live handle of the context, so shutdown frees them */
};

/* Wraps a node built since `mark` in a new handle, then drops the temporaries.
 * NULL node: the error is already set; returns NULL. */
tl_tensor *tl_api_wrap(tl_ctx *ctx, tl_uop *u, size_t mark);
tl_tensor *tl_api_fail(tl_ctx *ctx, size_t mark, tl_status st, const char *fmt, ...) TL_PRINTF(4, 5);
/* Normalizes a possibly negative axis; false (and an error) when out of range. */
bool tl_api_axis(tl_ctx *ctx, int ndim, int *axis, const char *what);
/* Movement on a node (no handle): used by the API and by composite ops. */
tl_uop *tl_api_view(tl_ctx *ctx, tl_uop *u, int kind, const int64_t *a, const int64_t *b,
                    const int *perm, const bool *flags, int ndim);
enum { TL_MOVE_RESHAPE, TL_MOVE_PERMUTE, TL_MOVE_EXPAND, TL_MOVE_SHRINK, TL_MOVE_PAD, TL_MOVE_FLIP };
tl_uop *tl_api_broadcast_to(tl_ctx *ctx, tl_uop *u, int ndim, const int64_t *shape);
tl_uop *tl_api_reduce(tl_ctx *ctx, tl_uop *u, int op, uint64_t axes_mask);

#endif
