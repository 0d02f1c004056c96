/* format.h — numpy-style text of a host array.
 * in: row-major data, dtype, shape; out: a malloc'd string like numpy's str():
 * "[[1.  2.5]\n [3.  4. ]]", summarized with "..." past 1000 elements. */
#ifndef TL_CORE_FORMAT_H
#define TL_CORE_FORMAT_H

#include <stdint.h>

#include "tl.h"

char *tl_format_array(const void *data, tl_dtype dtype, int ndim, const int64_t *shape);
/* the same with numpy's `precision` (digits after the point, at most; default 8) */
char *tl_format_array_precision(const void *data, tl_dtype dtype, int ndim, const int64_t *shape, int precision);

#endif
