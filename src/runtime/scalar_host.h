/* scalar_host.h — the library's builds of core/scalar.h's costly functions, for
 * kernels compiled by libtcc (tier 1): they are compiled with TL_SCALAR_HOST, which
 * turns those functions into declarations, and each libtcc state is given these by
 * name (runtime/compiler.c). */
#ifndef TL_RUNTIME_SCALAR_HOST_H
#define TL_RUNTIME_SCALAR_HOST_H

#include <stddef.h>

typedef struct {
  const char *name; /* as the prelude declares it */
  const void *fn;
} tl_scalar_host_fn;

/* the table, *n entries */
const tl_scalar_host_fn *tl_scalar_host_fns(size_t *n);

#endif
