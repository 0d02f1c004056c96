/* format.h — text of shapes and host arrays, numpy's way.
 * in: row-major data, dtype, shape; out: a malloc'd string like numpy's str():
 * "[[1.  2.5]\n [3.  4. ]]", summarized with "..." past 1000 elements. */
#ifndef TL_CORE_FORMAT_H
#define TL_CORE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "tl.h"

char *tl_format_array(const void *data, tl_dtype dtype, int ndim, const int64_t *shape);
/* the same with numpy's `precision` (digits after the point, at most; default 8) */
char *tl_format_array_precision(const void *data, tl_dtype dtype, int ndim, const int64_t *shape, int precision);

/* The one shape formatter: "[2, 3]" ("[]" for a scalar) into buf (cap bytes, cut short
 * but terminated if it does not fit; TL_SHAPE_TEXT_MAX fits any shape of up to
 * TL_MAX_DIMS dimensions). Returns buf, so it can be a printf argument. */
enum { TL_SHAPE_TEXT_MAX = 3 + TL_MAX_DIMS * 22 };
const char *tl_format_shape(char *buf, size_t cap, int ndim, const int64_t *shape);

#endif
