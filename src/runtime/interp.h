/* interp.h — the reference interpreter: evaluates the tensor graph node by node,
 * every op (fused ones too) straight from its definition, in double precision for
 * reductions. Slow and obviously right: the oracle of the differential tests. */
#ifndef TL_RUNTIME_INTERP_H
#define TL_RUNTIME_INTERP_H

#include "core/error.h"
#include "graph/uop.h"

/* A new buffer holding u's values, row-major; NULL with err set on failure. */
tl_buffer *tl_interp_eval(tl_uop *u, tl_mem *mem, tl_error *err);

#endif
