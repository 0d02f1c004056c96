/* rt_dist.h — the run time of `Dist::` (rt_dist.c, LANGUAGE.md §13): the C API's
 * tl_dist_* under the language's names, every failure a run-time error at (line, col).
 * Tensors in are borrowed, tensors out are new. */
#ifndef TL_LANG_RT_DIST_H
#define TL_LANG_RT_DIST_H

#include "lang/rt/rt.h"

TL_API int64_t tlrt_dist_rank(tlrt *R, int line, int col);
TL_API int64_t tlrt_dist_size(tlrt *R, int line, int col);
TL_API tl_tensor *tlrt_dist_all_reduce(tlrt *R, tl_tensor *t, int line, int col);
TL_API tl_tensor *tlrt_dist_all_reduce_mean(tlrt *R, tl_tensor *t, int line, int col);
TL_API tl_tensor *tlrt_dist_broadcast(tlrt *R, tl_tensor *t, int64_t root, int line, int col);
TL_API void tlrt_dist_barrier(tlrt *R, int line, int col);
TL_API tl_tensor *tlrt_dist_shard(tlrt *R, tl_tensor *t, int line, int col);
/* every leaf the program holds that has a gradient: the gradient's mean over the ranks */
TL_API void tlrt_dist_sync_grads(tlrt *R, int line, int col);
/* Param::save and Param::load across ranks (rt_io.c): only rank 0 reads and writes the
 * file; after a save the ranks meet (the file exists for all), after a load rank 0's
 * values go to every rank. ranks > 1: true when this rank touches the file. */
TL_API bool tlrt_dist_params_file_here(tlrt *R, int line, int col);
TL_API void tlrt_dist_params_saved(tlrt *R, int line, int col);
TL_API void tlrt_dist_params_share(tlrt *R, int n, tl_tensor **const *fields, int line, int col);

#endif
