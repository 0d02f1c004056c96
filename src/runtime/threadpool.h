/* threadpool.h — one worker per core; the calling thread works too.
 * in: a kernel function, its buffers and a range [0, total) of outer-loop
 * iterations; out: the range split into one contiguous chunk per thread, all run,
 * and returns when every chunk is done. */
#ifndef TL_RUNTIME_THREADPOOL_H
#define TL_RUNTIME_THREADPOOL_H

#include <stdint.h>

#include "runtime/compiler.h"

typedef struct tl_pool tl_pool;

/* nthreads <= 0: $TL_THREADS, else the number of online cores. NULL on failure. */
tl_pool *tl_pool_create(int nthreads);
void tl_pool_destroy(tl_pool *p);
/* $TL_THREADS: a positive integer (at most the pool's maximum), 0 when unset or empty,
 * -1 when it is not a positive integer (tl_init says so; the pool then uses the cores) */
int tl_pool_env_threads(void);
int tl_pool_size(const tl_pool *p);
/* Runs fn over [0, total). min_chunk: below 2*min_chunk iterations in all, the
 * caller runs everything alone (threads cost more than they give). */
void tl_pool_run(tl_pool *p, tl_kernel_fn fn, void *const *bufs, int64_t total,
                 int64_t min_chunk);

#endif
