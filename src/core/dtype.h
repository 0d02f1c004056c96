/* dtype.h — element types: sizes, names, C type names, promotion. */
#ifndef TL_CORE_DTYPE_H
#define TL_CORE_DTYPE_H

#include <stdbool.h>

#include "tl.h"

static inline bool tl_dtype_is_float(tl_dtype d) { return d == TL_F32 || d == TL_F64; }
static inline bool tl_dtype_is_int(tl_dtype d) { return d == TL_I32 || d == TL_I64; }
static inline bool tl_dtype_valid(int d) { return d >= 0 && d < TL_NDTYPES; }
/* 0 bool, 1 integer, 2 float: promotion crosses kinds upwards only */
static inline int tl_dtype_kind(tl_dtype d) { return d == TL_BOOL ? 0 : tl_dtype_is_int(d) ? 1 : 2; }
/* numpy-like promotion along bool < i32 < i64 < f32 < f64 */
static inline tl_dtype tl_dtype_promote(tl_dtype a, tl_dtype b) { return a > b ? a : b; }
/* the dtype a tensor of dtype t and a scalar of dtype s compute in, as torch does with
 * a number or a 0-d tensor: a scalar of a higher kind (bool < integer < float) gives
 * its own dtype, else the tensor's stands (an i64 scalar never widens an i32 tensor,
 * an f64 scalar never an f32 one) */
static inline tl_dtype tl_dtype_promote_scalar(tl_dtype t, tl_dtype s) {
  return tl_dtype_kind(s) > tl_dtype_kind(t) ? s : t;
}
/* reads element i of a host array as double / writes a double into element i */
double tl_dtype_read(const void *data, tl_dtype d, int64_t i);
void tl_dtype_write(void *data, tl_dtype d, int64_t i, double v);

#endif
