#include "dtype.h"

#include <stdint.h>

#include "core/scalar.h"

static const struct {
  const char *name, *ctype;
  size_t size;
  double min, max; /* integers' range */
} dtype_info[TL_NDTYPES] = {
    [TL_BOOL] = {"bool", "tl_bool", 1, 0, 1},
    [TL_I32] = {"i32", "tl_i32", 4, -2147483648.0, 2147483647.0},
    [TL_I64] = {"i64", "tl_i64", 8, -9223372036854775808.0, 9223372036854775807.0},
    [TL_F32] = {"f32", "float", 4, 0, 0},
    [TL_F64] = {"f64", "double", 8, 0, 0},
    [TL_I8] = {"i8", "tl_i8", 1, -128.0, 127.0},
    [TL_I16] = {"i16", "tl_i16", 2, -32768.0, 32767.0},
    [TL_U8] = {"u8", "tl_u8", 1, 0, 255.0},
    [TL_U16] = {"u16", "tl_u16", 2, 0, 65535.0},
    [TL_U32] = {"u32", "tl_u32", 4, 0, 4294967295.0},
    [TL_U64] = {"u64", "tl_u64", 8, 0, 18446744073709551615.0},
    [TL_F16] = {"f16", "tl_u16", 2, 0, 0},
    [TL_BF16] = {"bf16", "tl_u16", 2, 0, 0},
};

const char *tl_dtype_name(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].name : "?"; }
size_t tl_dtype_size(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].size : 0; }
const char *tl_dtype_ctype(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].ctype : "double"; }
double tl_dtype_min(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].min : 0; }
double tl_dtype_max(tl_dtype d) { return tl_dtype_valid(d) ? dtype_info[d].max : 0; }

/* rank of a float's width: f16 and bf16 share one, and meet in f32 */
static int float_rank(tl_dtype d) { return d == TL_F64 ? 3 : d == TL_F32 ? 2 : 1; }

static tl_dtype signed_of_bytes(size_t n) { return n <= 1 ? TL_I8 : n == 2 ? TL_I16 : n == 4 ? TL_I32 : TL_I64; }

tl_dtype tl_dtype_promote(tl_dtype a, tl_dtype b) {
  if (a == b) return a;
  int ka = tl_dtype_kind(a), kb = tl_dtype_kind(b);
  if (ka != kb) return ka > kb ? a : b;
  if (ka == 2) {
    if (float_rank(a) != float_rank(b)) return float_rank(a) > float_rank(b) ? a : b;
    return TL_F32; /* f16 with bf16: neither holds the other */
  }
  size_t sa = tl_dtype_size(a), sb = tl_dtype_size(b);
  bool ua = tl_dtype_is_unsigned(a), ub = tl_dtype_is_unsigned(b);
  if (ua == ub) return sa >= sb ? a : b;
  tl_dtype s = ua ? b : a;
  size_t ss = ua ? sb : sa, su = ua ? sa : sb;
  if (ss > su) return s;
  return signed_of_bytes(su * 2); /* u64 with a signed integer: i64 (tl.h) */
}

double tl_dtype_read(const void *data, tl_dtype d, int64_t i) {
  switch (d) {
  case TL_F32: return ((const float *)data)[i];
  case TL_F64: return ((const double *)data)[i];
  case TL_F16: return tl_f16_to_f32(((const uint16_t *)data)[i]);
  case TL_BF16: return tl_bf16_to_f32(((const uint16_t *)data)[i]);
  case TL_U64: return (double)((const uint64_t *)data)[i];
  default: return tl_dtype_valid(d) ? (double)tl_dtype_read_int(data, d, i) : 0;
  }
}

void tl_dtype_write(void *data, tl_dtype d, int64_t i, double v) {
  switch (d) {
  case TL_BOOL: ((uint8_t *)data)[i] = v != 0; break;
  case TL_I32: ((int32_t *)data)[i] = tl_f64_to_i32(v); break; /* saturating, NaN 0: the casts' rule */
  case TL_I64: ((int64_t *)data)[i] = tl_f64_to_i64(v); break;
  case TL_F32: ((float *)data)[i] = (float)v; break;
  case TL_F64: ((double *)data)[i] = v; break;
  case TL_F16: ((uint16_t *)data)[i] = tl_f64_to_f16(v); break;
  case TL_BF16: ((uint16_t *)data)[i] = tl_f64_to_bf16(v); break;
  case TL_U64: ((uint64_t *)data)[i] = tl_f64_to_u64(v); break;
  default:
    if (tl_dtype_valid(d)) tl_dtype_write_int(data, d, i, tl_f64_to_int(v, tl_dtype_min(d), tl_dtype_max(d)));
    break;
  }
}

int64_t tl_dtype_read_int(const void *data, tl_dtype d, int64_t i) {
  switch (d) {
  case TL_BOOL: return ((const uint8_t *)data)[i] != 0;
  case TL_I8: return ((const int8_t *)data)[i];
  case TL_U8: return ((const uint8_t *)data)[i];
  case TL_I16: return ((const int16_t *)data)[i];
  case TL_U16: case TL_F16: case TL_BF16: return ((const uint16_t *)data)[i];
  case TL_I32: return ((const int32_t *)data)[i];
  case TL_U32: return ((const uint32_t *)data)[i];
  case TL_I64: case TL_U64: case TL_F64: return ((const int64_t *)data)[i];
  case TL_F32: return ((const int32_t *)data)[i];
  default: return 0;
  }
}

void tl_dtype_write_int(void *data, tl_dtype d, int64_t i, int64_t v) {
  switch (d) {
  case TL_BOOL: ((uint8_t *)data)[i] = v != 0; break;
  case TL_I8: case TL_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
  case TL_I16: case TL_U16: case TL_F16: case TL_BF16: ((uint16_t *)data)[i] = (uint16_t)v; break;
  case TL_I32: case TL_U32: case TL_F32: ((uint32_t *)data)[i] = (uint32_t)v; break;
  case TL_I64: case TL_U64: case TL_F64: ((uint64_t *)data)[i] = (uint64_t)v; break;
  default: break;
  }
}
