/* kernel.h — a compiled kernel with the metadata needed to call it safely.
 * in: a function from the compiler plus what its renderer knows (arguments' dtypes
 * and minimum sizes, outer work size); out: tl_kernel_exec, which checks every
 * argument on every call before running the function on the thread pool. */
#ifndef TL_RUNTIME_KERNEL_H
#define TL_RUNTIME_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"
#include "runtime/compiler.h"
#include "runtime/threadpool.h"

typedef struct tl_kernel {
  char name[64];
  const tl_kernel_code *code; /* the compiler's (tiered: its function is swapped when the
                                 optimized build is ready); NULL: fn */
  tl_kernel_fn fn;
  int nargs;                          /* buffers, output first */
  int nwords;                         /* 64-bit words passed after the buffers (the random
                                         streams' keys and counters): bufs[nargs] */
  tl_dtype arg_dtype[TL_KERNEL_MAX_ARGS];
  size_t arg_min_bytes[TL_KERNEL_MAX_ARGS]; /* bytes the kernel may touch */
  int64_t work;                       /* outer-loop iterations: [0, work) */
  int64_t min_chunk;                  /* see tl_pool_run */
  /* a device backend's plan and code (runtime/backend.h) */
  int grid_dims;                      /* 1..3 axes of work-items */
  size_t grid[3], group[3];           /* work-items along each axis, and per work-group */
  void *device_code;                  /* the backend's kernel (the driver owns it) */
} tl_kernel;

typedef struct tl_kernel_arg {
  void *data;     /* host memory (NULL for a device buffer: buf and offset say where) */
  size_t nbytes;
  tl_dtype dtype;
  struct tl_buffer *buf; /* the buffer bound (a device backend's launch reads it) */
  size_t offset;         /* bytes from buf's start */
} tl_kernel_arg;

/* Validates nargs, every pointer, dtype and size against the kernel's metadata;
 * on a mismatch returns TL_ERR_ARG with a message naming the argument. words: the
 * kernel's k->nwords data words (NULL when it takes none), values a kernel reads
 * instead of having them compiled in, so that one kernel serves them all. */
tl_status tl_kernel_exec(const tl_kernel *k, tl_pool *pool, int nargs, const tl_kernel_arg *args,
                         const uint64_t *words, tl_error *err);

#endif
