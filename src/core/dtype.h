/* dtype.h — element types: sizes, names, C type names, promotion. */
#ifndef TL_CORE_DTYPE_H
#define TL_CORE_DTYPE_H

#include <stdbool.h>

#include "tl.h"

static inline bool tl_dtype_is_float(tl_dtype d) { return d == TL_F32 || d == TL_F64; }
static inline bool tl_dtype_is_int(tl_dtype d) { return d == TL_I32 || d == TL_I64; }
static inline bool tl_dtype_valid(int d) { return d >= 0 && d < TL_NDTYPES; }
/* numpy-like promotion along bool < i32 < i64 < f32 < f64 */
static inline tl_dtype tl_dtype_promote(tl_dtype a, tl_dtype b) { return a > b ? a : b; }
/* reads element i of a host array as double / writes a double into element i */
double tl_dtype_read(const void *data, tl_dtype d, int64_t i);
void tl_dtype_write(void *data, tl_dtype d, int64_t i, double v);

#endif
