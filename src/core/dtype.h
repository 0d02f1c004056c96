/* dtype.h — element types: sizes, names, C type names, promotion. */
#ifndef TL_CORE_DTYPE_H
#define TL_CORE_DTYPE_H

#include <stdbool.h>

#include "tl.h"

/* f16 and bf16: stored as 16 bits, computed in f32 (see tl.h) */
static inline bool tl_dtype_is_half(tl_dtype d) { return d == TL_F16 || d == TL_BF16; }
static inline bool tl_dtype_is_float(tl_dtype d) { return d == TL_F32 || d == TL_F64 || tl_dtype_is_half(d); }
static inline bool tl_dtype_is_unsigned(tl_dtype d) { return d == TL_U8 || d == TL_U16 || d == TL_U32 || d == TL_U64; }
static inline bool tl_dtype_is_int(tl_dtype d) {
  return d == TL_I32 || d == TL_I64 || d == TL_I8 || d == TL_I16 || tl_dtype_is_unsigned(d);
}
static inline bool tl_dtype_valid(int d) { return d >= 0 && d < TL_NDTYPES; }
/* 0 bool, 1 integer, 2 float: promotion crosses kinds upwards only */
static inline int tl_dtype_kind(tl_dtype d) { return d == TL_BOOL ? 0 : tl_dtype_is_int(d) ? 1 : 2; }
/* torch's promotion (tl.h, before tl_add): the kind decides first, then the width */
tl_dtype tl_dtype_promote(tl_dtype a, tl_dtype b);
/* the dtype a tensor of dtype t and a scalar of dtype s compute in, as torch does with
 * a number or a 0-d tensor: a scalar of a higher kind (bool < integer < float) gives
 * its own dtype, else the tensor's stands (an i64 scalar never widens an i32 tensor,
 * an f64 scalar never an f32 one) */
static inline tl_dtype tl_dtype_promote_scalar(tl_dtype t, tl_dtype s) {
  return tl_dtype_kind(s) > tl_dtype_kind(t) ? s : t;
}
/* the C type that holds one element in kernels (core/scalar.h's typedefs; f16 and bf16
 * are their bits, tl_f16 and tl_bf16) */
const char *tl_dtype_ctype(tl_dtype d);
/* the dtype an op on d computes in: f32 for f16 and bf16, else d itself */
static inline tl_dtype tl_dtype_compute(tl_dtype d) { return tl_dtype_is_half(d) ? TL_F32 : d; }
/* the smallest and largest values of an integer dtype (bool 0 and 1), as doubles
 * (u64's maximum rounds to 2^64 there) */
double tl_dtype_min(tl_dtype d);
double tl_dtype_max(tl_dtype d);
/* reads element i of a host array as double / writes a double into element i (to an
 * integer saturating, NaN 0; to f16/bf16 rounding to nearest even: the casts' rules) */
double tl_dtype_read(const void *data, tl_dtype d, int64_t i);
void tl_dtype_write(void *data, tl_dtype d, int64_t i, double v);
/* an integer element's value as int64 (u64 as its bits), the tl_value convention */
int64_t tl_dtype_read_int(const void *data, tl_dtype d, int64_t i);
void tl_dtype_write_int(void *data, tl_dtype d, int64_t i, int64_t v); /* wraps to d */

#endif
