/* kernel.c — the last check before generated code touches memory. Compiled
 * kernels trust their arguments completely, so every call is validated against
 * the metadata the renderer recorded: a mismatch is an error, never a crash. */
#include "runtime/kernel.h"

#include <time.h>

static tl_status check_arg(const tl_kernel *k, int i, const tl_kernel_arg *a, tl_error *err) {
  if (!a->data)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has no data (NULL)", k->name, i);
  if (a->dtype != k->arg_dtype[i])
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has dtype %s, expected %s",
                        k->name, i, tl_dtype_name(a->dtype), tl_dtype_name(k->arg_dtype[i]));
  if (a->nbytes < k->arg_min_bytes[i])
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has %zu bytes, needs %zu",
                        k->name, i, a->nbytes, k->arg_min_bytes[i]);
  return TL_OK;
}

tl_status tl_kernel_exec(const tl_kernel *k, tl_pool *pool, int nargs, const tl_kernel_arg *args,
                         const uint64_t *words, tl_error *err) {
  /* read once: the same code runs on every thread of this call */
  tl_kernel_fn fn = !k ? NULL : k->code ? tl_kernel_code_fn(k->code) : k->fn;
  if (!fn) return tl_error_set(err, TL_ERR_ARG, "tl_kernel_exec: no kernel function");
  if (k->nargs < 0 || k->nargs > TL_KERNEL_MAX_ARGS)
    return tl_error_set(err, TL_ERR_INTERNAL, "kernel %.64s: bad argument count %d in metadata",
                        k->name, k->nargs);
  if (nargs != k->nargs)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: called with %d arguments, expects %d",
                        k->name, nargs, k->nargs);
  if (nargs > 0 && !args)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument array is NULL", k->name);
  if (k->nwords < 0 || (k->nwords > 0 && !words))
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: takes %d data words, given none", k->name, k->nwords);
  void *ptrs[TL_KERNEL_MAX_ARGS + 1];
  for (int i = 0; i < nargs; i++) {
    tl_status st = check_arg(k, i, &args[i], err);
    if (st) return st;
    ptrs[i] = args[i].data;
  }
  ptrs[nargs] = (void *)words; /* read only: the kernel declares it const */
  /* a NULL pool runs the whole range on the calling thread; tier-1 code is timed
   * (runtime/tiered.c builds the costliest first) */
  int tier1 = k->code && tl_kernel_code_tier(k->code) == 1;
  struct timespec t0, t1;
  if (tier1) clock_gettime(CLOCK_MONOTONIC, &t0);
  tl_pool_run(pool, fn, ptrs, k->work, k->min_chunk);
  if (tier1) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tl_kernel_code_ran(k->code, (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)));
  }
  return TL_OK;
}
